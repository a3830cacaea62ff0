"""zarr's CPU NDBuffer whose large new results reuse the memory of freed ones (opt-in)."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from zarr.core.buffer import cpu

from .._pool import new_array

__all__ = ["POOLED_NDBUFFER_PATH", "PooledNDBuffer"]

POOLED_NDBUFFER_PATH = "fixedutf32.zarr.PooledNDBuffer"

# Plain data only: the pool hands out raw bytes, which must not hold object references.
_PLAIN_KINDS = frozenset("biufcSU")
_MAX_NBYTES = np.iinfo(np.intp).max


class PooledNDBuffer(cpu.NDBuffer):
    """zarr's CPU ``NDBuffer``, whose large new results reuse freed memory.

    zarr-python makes the result of every read with ``NDBuffer.empty``: a
    new NumPy array, whose pages the operating system maps and zeroes one by
    one as the read first writes them. Reading raw chunks from the page
    cache, that is a large part of the time (a 256 MiB array of 8 MiB
    shards: its read into a new array took 1.5 times as long as into memory
    already mapped). ``PooledNDBuffer.empty`` takes results of at least 32 KiB of
    plain data types (numbers, ``S`` bytes, ``U`` strings) from fixedutf32's
    pool of freed output buffers instead, the pool the chunk API and
    :func:`fixedutf32.open_array` use: a large array read again is written
    into memory already mapped. Everything else is zarr's ``NDBuffer``.

    It is not selected by :func:`enable`; choose it in zarr's configuration
    (``ndbuffer``), for every array zarr reads, whatever its data type. The
    pool keeps freed buffers for the next result of their size: up to 64
    buffers and 512 MiB in all, which the process keeps mapped (its resident
    memory stays higher after large reads, as with any allocator's cache).
    A result owns its memory while it is alive and shares it with nothing.

    Examples
    --------
    >>> import numpy as np, zarr, fixedutf32.zarr
    >>> with zarr.config.set({"ndbuffer": "fixedutf32.zarr.PooledNDBuffer"}):
    ...     z = zarr.create_array({}, shape=(50_000,), chunks=(10_000,), dtype="<U4")
    ...     z[:] = "abcd"
    ...     result = z[:]
    >>> result[:2].tolist(), result.ctypes.data % 64
    (['abcd', 'abcd'], 0)
    """

    __module__ = "fixedutf32.zarr"

    @classmethod
    def empty(
        cls, shape: Iterable[int], dtype: npt.DTypeLike, order: Literal["C", "F"] = "C"
    ) -> PooledNDBuffer:
        """A new buffer of ``shape``, its contents undefined (zarr's ``NDBuffer.empty``)."""
        shape = tuple(operator.index(n) for n in shape)
        kind = np.dtype(dtype)
        array: Any
        if (
            kind.kind not in _PLAIN_KINDS
            or kind.hasobject
            or any(n < 0 for n in shape)
            or math.prod(shape) * kind.itemsize > _MAX_NBYTES
        ):  # NumPy's memory, or NumPy's own error for a shape it refuses
            array = np.empty(shape, kind, order=order)
        else:
            array = new_array(math.prod(shape), kind).reshape(shape, order=order)  # pooled if large
        return cls(array)
