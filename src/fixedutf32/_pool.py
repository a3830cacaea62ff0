"""New output arrays, from the kernels' pool of freed buffers when large (for chunk, transcode)."""

from typing import Any

import numpy as np
import numpy.typing as npt

from . import _kernels

_POOL_MIN_BYTES = _kernels.POOL_MIN_BYTES


def new_array(count: int, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """A new writable 1-D array; large ones reuse freed memory from the pool."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    if nbytes >= _POOL_MIN_BYTES:
        # NumPy's stubs for Python 3.11 list concrete buffer types only.
        return np.frombuffer(_kernels.new_buffer(nbytes), dtype)  # type: ignore[call-overload,no-any-return]
    return np.empty(count, dtype)
