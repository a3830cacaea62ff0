"""New output arrays, from the kernels' pool of freed buffers when large (for chunk, transcode)."""

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _kernels

_POOL_MIN_BYTES = _kernels.POOL_MIN_BYTES
_ALIGN = 64


def new_array(count: int, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """A new writable 1-D array; large ones reuse freed memory from the pool."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    if nbytes >= _POOL_MIN_BYTES:
        # NumPy's stubs for Python 3.11 list concrete buffer types only.
        return np.frombuffer(_kernels.new_buffer(nbytes), dtype)  # type: ignore[call-overload,no-any-return]
    return aligned_empty(count, dtype)


def aligned_empty(count: int, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """A new 1-D array whose data starts on a 64-byte boundary (not from the pool)."""
    # NumPy's large arrays start 16 bytes into a page, where this machine's kernel copies a
    # file (read, pread) 7x slower than to any address 32 or more bytes in (measured: 150
    # against 21 us for 256 KiB): chunk buffers start on a cache line instead.
    dtype = np.dtype(dtype)
    raw = np.empty(count * dtype.itemsize + _ALIGN, np.uint8)
    skip = -raw.ctypes.data % _ALIGN
    return raw[skip : skip + count * dtype.itemsize].view(dtype)
