"""Strict, memory-speed kernels for the Zarr V3 ``fixed_length_utf32`` data type.

``fixed_length_utf32`` is NumPy's fixed-width string dtype (``<U12``,
``>U12``) as Zarr V3 stores it, and how Zarr V2 stores strings.  This package
decodes and encodes whole chunks of it, checking that every code unit is a
Unicode scalar value, with the GIL released.
"""

from . import batch, capi, chunk, errors, transcode
from ._arrow import ArrowStrings
from ._kernels import _C_API as _C_API
from ._kernels import (
    available_simd_levels,
    buffer_pool_bytes,
    get_simd_level,
    set_simd_level,
)
from ._version import __version__ as __version__

# Each of these submodules names its public part in its __all__, added below.
from .array import StoredArray, open_array
from .batch import *  # noqa: F403
from .capi import *  # noqa: F403
from .capi import C_API_VERSION as C_API_VERSION
from .chunk import *  # noqa: F403
from .chunk import set_buffer_pool_limit
from .errors import *  # noqa: F403
from .metadata import (
    ArrayMetadata,
    FixedLengthUTF32,
    check_codecs,
    parse_array_metadata,
    parse_v2_dtype,
)
from .transcode import *  # noqa: F403

__all__ = [
    "ArrowStrings",
    "StoredArray",
    "open_array",
    "FixedLengthUTF32",
    "ArrayMetadata",
    "check_codecs",
    "parse_array_metadata",
    "parse_v2_dtype",
    "available_simd_levels",
    "get_simd_level",
    "set_simd_level",
    "set_buffer_pool_limit",
    "buffer_pool_bytes",
]
__all__ += batch.__all__
__all__ += capi.__all__
__all__ += chunk.__all__
__all__ += transcode.__all__
__all__ += errors.__all__
