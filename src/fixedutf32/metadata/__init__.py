"""Strict metadata helpers for the Zarr V3 ``fixed_length_utf32`` data type.

This package turns array metadata (a V3 ``zarr.json`` or a V2 ``.zarray``) into the arguments
that :func:`fixedutf32.decode_chunk` needs, and rejects what the specification forbids with a
:class:`MetadataError` (a ``ValueError``) naming the offending key, what was expected and what
arrived.  It is plain Python over small JSON documents and never touches chunk data.

Limits
------
A document that parses can be used: what the rest of the package or NumPy could not hold is
rejected here, with a :class:`MetadataError`.

- Nesting: at most :data:`MAX_NESTING_DEPTH` (128) levels of JSON arrays and objects, anywhere
  in the document (``attributes`` included), in JSON text and parsed dicts and lists alike
  (serde_json, used by the Rust ``zarrs``, has the same default limit).
- ``length_bytes``: at most :data:`MAX_LENGTH_BYTES` (2147483644), NumPy's largest ``U`` item
  (its item size is a C ``int``): ``"<U536870911"``.
- Array and chunk extents: at most ``2**63 - 1`` (int64).
- One chunk, ``prod(chunk_shape) * length_bytes`` bytes, fits in one buffer: at most
  ``sys.maxsize`` bytes.
"""

from .._arguments import MAX_LENGTH_BYTES
from ..errors import MetadataError
from ._array import ArrayMetadata
from ._codecs import check_codecs
from ._dtype import FixedLengthUTF32, parse_v2_dtype
from ._json import MAX_NESTING_DEPTH
from ._parse import parse_array_metadata

__all__ = [
    "MAX_LENGTH_BYTES",
    "MAX_NESTING_DEPTH",
    "ArrayMetadata",
    "FixedLengthUTF32",
    "MetadataError",
    "check_codecs",
    "parse_array_metadata",
    "parse_v2_dtype",
]

# Shown (and pickled) by the module they are imported from.
for _public in (
    ArrayMetadata,
    FixedLengthUTF32,
    check_codecs,
    parse_array_metadata,
    parse_v2_dtype,
):
    _public.__module__ = __name__
del _public
