"""Buffers reused from chunk to chunk, one set per thread (per-chunk allocation faults pages)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from .._pool import aligned_empty

__all__ = ["Scratch", "borrowed_scratch", "thread_scratch"]


class Scratch:
    """Named buffers that grow as needed and are reused."""

    # A buffer given out stays valid until its name is asked for with a larger size.

    __slots__ = ("_arrays",)

    def __init__(self) -> None:
        self._arrays: dict[str, npt.NDArray[np.generic]] = {}

    def _get(self, name: str, count: int, dtype: type[np.generic]) -> npt.NDArray[np.generic]:
        array = self._arrays.get(name)
        if array is None or array.size < count or array.dtype != dtype:
            array = self._arrays[name] = aligned_empty(max(count, 1), dtype)
        return array[:count]

    def bytes(self, name: str, nbytes: int) -> npt.NDArray[np.uint8]:
        """A writable uint8 array of ``nbytes`` reused under ``name`` (content: the last user's)."""
        return self._get(name, nbytes, np.uint8)  # type: ignore[return-value]  # asked as uint8

    def intp(self, name: str, count: int) -> npt.NDArray[np.intp]:
        """A writable intp array of ``count`` entries, reused under ``name``."""
        return self._get(name, count, np.intp)  # type: ignore[return-value]  # asked as intp


_local = threading.local()


def thread_scratch() -> Scratch:
    """This thread's :class:`Scratch` (made on first use)."""
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
    """A :class:`Scratch` for the block, taken from (and given back to) a shared pool."""
    # For threads made anew per run: the buffers outlive them, already allocated and faulted in.
    with _free_lock:
        scratch = _free.pop() if _free else Scratch()
    try:
        yield scratch
    finally:
        with _free_lock:
            if len(_free) < _KEEP:
                _free.append(scratch)
