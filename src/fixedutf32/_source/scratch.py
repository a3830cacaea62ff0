"""Buffers reused from chunk to chunk, one set per thread.

A reader that decodes many chunks needs the same few buffers over and over
(the stored bytes, the decoded chunk, a block, the lengths of a block's
elements); allocating them per chunk costs page faults on every chunk.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

__all__ = ["Scratch", "borrowed_scratch", "thread_scratch"]


class Scratch:
    """Named buffers that grow as needed and are reused.

    A buffer given out stays valid until the same name is asked for again
    with a larger size (the old memory is then released once unused).

    Examples
    --------
    >>> scratch = Scratch()
    >>> a = scratch.bytes("chunk", 16); b = scratch.bytes("chunk", 8)
    >>> a.nbytes, b.nbytes, np.shares_memory(a, b)
    (16, 8, True)
    """

    __slots__ = ("_arrays",)

    def __init__(self) -> None:
        self._arrays: dict[str, npt.NDArray[np.generic]] = {}

    def _get(self, name: str, count: int, dtype: type[np.generic]) -> npt.NDArray[np.generic]:
        array = self._arrays.get(name)
        if array is None or array.size < count or array.dtype != dtype:
            array = self._arrays[name] = np.empty(max(count, 1), dtype)
        return array[:count]

    def bytes(self, name: str, nbytes: int) -> npt.NDArray[np.uint8]:
        """A writable uint8 array of ``nbytes`` bytes, reused under ``name``.

        Parameters
        ----------
        name : str
        nbytes : int

        Returns
        -------
        numpy.ndarray of uint8
            Its content is whatever the last user left there.
        """
        return self._get(name, nbytes, np.uint8)  # type: ignore[return-value]  # asked as uint8

    def intp(self, name: str, count: int) -> npt.NDArray[np.intp]:
        """A writable intp array of ``count`` entries, reused under ``name``.

        Parameters
        ----------
        name : str
        count : int

        Returns
        -------
        numpy.ndarray of intp
        """
        return self._get(name, count, np.intp)  # type: ignore[return-value]  # asked as intp


_local = threading.local()


def thread_scratch() -> Scratch:
    """This thread's :class:`Scratch` (made on first use).

    Returns
    -------
    Scratch
    """
    scratch: Scratch | None = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = Scratch()
    return scratch


_free: list[Scratch] = []
_free_lock = threading.Lock()
# Scratch sets kept for the next borrower: one per worker thread is enough.
_KEEP = 8


@contextlib.contextmanager
def borrowed_scratch() -> Iterator[Scratch]:
    """A :class:`Scratch` for the block, taken from (and given back to) a shared pool.

    For work that runs on threads made anew for each run (a thread pool per
    call): its buffers outlive the threads, so a later run finds them
    allocated and already faulted in, where :func:`thread_scratch` would
    start empty in every new thread.

    Yields
    ------
    Scratch
        Used by this block alone until it ends.

    Examples
    --------
    >>> with borrowed_scratch() as scratch:
    ...     scratch.bytes("chunk", 8).nbytes
    8
    """
    with _free_lock:
        scratch = _free.pop() if _free else Scratch()
    try:
        yield scratch
    finally:
        with _free_lock:
            if len(_free) < _KEEP:
                _free.append(scratch)
