"""Strict, memory-speed kernels for the Zarr V3 ``fixed_length_utf32`` data type.

``fixed_length_utf32`` is NumPy's fixed-width string dtype (``<U12``,
``>U12``) as Zarr V3 stores it, and how Zarr V2 stores strings.  This package
decodes and encodes whole chunks of it, checking that every code unit is a
Unicode scalar value, with the GIL released.
"""

from ._kernels import (
    available_simd_levels,
    buffer_pool_bytes,
    get_simd_level,
    set_simd_level,
)
from .chunk import (
    byteswap,
    decode_chunk,
    encode_chunk,
    repad,
    set_buffer_pool_limit,
    str_lengths,
    validate,
)
from .metadata import (
    ArrayMetadata,
    FixedLengthUTF32,
    check_codecs,
    parse_array_metadata,
    parse_v2_dtype,
)
from .transcode import (
    decode_vlen_utf8,
    encode_vlen_utf8,
    from_arrow,
    from_utf8,
    to_arrow,
    to_string_dtype,
    to_utf8,
)
from .errors import (
    ChunkSizeError,
    FixedUTF32Error,
    InvalidCodePointError,
    InvalidUTF8Error,
    MetadataError,
    StringTooLongError,
)

from ._version import __version__

__all__ = [
    "decode_chunk",
    "encode_chunk",
    "validate",
    "byteswap",
    "repad",
    "str_lengths",
    "to_utf8",
    "from_utf8",
    "to_arrow",
    "from_arrow",
    "to_string_dtype",
    "encode_vlen_utf8",
    "decode_vlen_utf8",
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
    "FixedUTF32Error",
    "InvalidCodePointError",
    "StringTooLongError",
    "ChunkSizeError",
    "MetadataError",
    "InvalidUTF8Error",
]
