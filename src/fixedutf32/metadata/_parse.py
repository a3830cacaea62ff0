"""The V3 ``zarr.json`` and V2 ``.zarray`` parsers: each field checked once, as it is read."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy

from ..errors import MetadataError
from ._array import ArrayMetadata
from ._codecs import _check_v2_codec, _split_codecs, _transpose_to_order
from ._dtype import _NAME, FixedLengthUTF32, parse_v2_dtype
from ._grid import _check_chunk_size, _check_shape
from ._json import _check_keys, _fail, _is_json_int, _is_str, _load, _show


def _found_type(value: Any) -> str:
    if isinstance(value, Mapping) and "name" in value:
        return _show(value["name"])
    return _show(value)


def _parse_v3(doc: Mapping[str, Any]) -> ArrayMetadata:
    required = {
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
    }
    optional = {"attributes", "dimension_names", "storage_transformers"}
    missing = sorted(required - doc.keys())
    if missing:
        raise MetadataError(f"{missing[0]}: expected a key of V3 array metadata, got none")
    for key in sorted(set(doc) - required - optional):
        value = doc[key]
        if not (isinstance(value, Mapping) and value.get("must_understand") is False):
            raise _fail(key, 'a known key or an object with "must_understand": false', value)
    if not isinstance(doc["node_type"], str) or doc["node_type"] != "array":
        raise _fail("node_type", '"array"', doc["node_type"])
    data_type = doc["data_type"]
    if not (isinstance(data_type, Mapping) and _is_str(data_type.get("name"), _NAME)):
        raise MetadataError(
            f"data_type: expected {_NAME}, found the data type {_found_type(data_type)}"
        )
    dtype = FixedLengthUTF32.from_json(data_type)
    shape = _check_shape(doc["shape"], "shape", minimum=0)

    grid = doc["chunk_grid"]
    if not isinstance(grid, Mapping) or not _is_str(grid.get("name"), "regular"):
        raise _fail("chunk_grid", 'a {"name": "regular", ...} chunk grid', grid)
    _check_keys(grid, {"name", "configuration"}, set(), "chunk_grid")
    if not isinstance(grid["configuration"], Mapping):
        raise _fail("chunk_grid.configuration", "a JSON object", grid["configuration"])
    _check_keys(grid["configuration"], {"chunk_shape"}, set(), "chunk_grid.configuration")
    chunks = _check_shape(
        grid["configuration"]["chunk_shape"], "chunk_grid.configuration.chunk_shape", minimum=1
    )
    if len(chunks) != len(shape):
        raise _fail(
            "chunk_grid.configuration.chunk_shape", f"{len(shape)} dimensions like shape", chunks
        )
    _check_chunk_size(chunks, dtype.length_bytes, "chunk_grid.configuration.chunk_shape")

    encoding = doc["chunk_key_encoding"]
    if not isinstance(encoding, Mapping) or not (
        _is_str(encoding.get("name"), "default") or _is_str(encoding.get("name"), "v2")
    ):
        raise _fail("chunk_key_encoding", 'a "default" or "v2" chunk key encoding', encoding)
    _check_keys(encoding, {"name"}, {"configuration"}, "chunk_key_encoding")
    # optional, but when present an object: false, [] or null are not "absent"
    config = encoding.get("configuration", {})
    if not isinstance(config, Mapping):
        raise _fail("chunk_key_encoding.configuration", "a JSON object", config)
    _check_keys(config, set(), {"separator"}, "chunk_key_encoding.configuration")
    default_separator = "/" if encoding["name"] == "default" else "."
    separator = config.get("separator", default_separator)
    if not (_is_str(separator, "/") or _is_str(separator, ".")):
        raise _fail("chunk_key_encoding.configuration.separator", '"/" or "."', separator)

    transformers = doc.get("storage_transformers", [])
    if not isinstance(transformers, list):
        raise _fail("storage_transformers", "a JSON array", transformers)
    if transformers:
        raise _fail(
            "storage_transformers",
            "an empty array (this reader applies no storage transformer)",
            transformers,
        )
    names = doc.get("dimension_names")
    # null is not in the spec, but zarrita and icechunk wrote it for "no names"
    # and zarr-python reads it so: taken as absent.
    if names is not None and not (
        isinstance(names, list)
        and len(names) == len(shape)
        and all(n is None or isinstance(n, str) for n in names)
    ):
        raise _fail(
            "dimension_names",
            f"a JSON array of {len(shape)} strings or nulls (one per dimension of shape)",
            names,
        )
    attributes = doc.get("attributes", {})
    if not isinstance(attributes, Mapping):
        raise _fail("attributes", "a JSON object", attributes)

    arrays, endian, rest = _split_codecs(doc["codecs"], dtype)
    order = _transpose_to_order(arrays, len(shape))
    return ArrayMetadata._from_checked(
        zarr_format=3,
        shape=shape,
        chunk_shape=chunks,
        data_type=dtype,
        endian=endian,
        fill_value=dtype.decode_fill_value(doc["fill_value"]),
        order="C" if len(shape) <= 1 else order,  # one axis: C and F are one layout
        # deep copies (the depth is checked): the object must not change with the document
        codecs=tuple(copy.deepcopy(rest)),
        filters=(),
        chunk_key_encoding=encoding["name"],
        separator=separator,
    )


def _parse_v2(doc: Mapping[str, Any]) -> ArrayMetadata:
    _check_keys(
        doc,
        {"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters"},
        {"dimension_separator"},
        "zarr_format 2 metadata",
    )
    dtype = doc["dtype"]
    if not (isinstance(dtype, str) and dtype[1:2] == "U"):
        raise MetadataError(
            f'dtype: expected "<U<n>" or ">U<n>" (fixed_length_utf32), found the data type '
            f"{_show(dtype)}"
        )
    data_type, endian = parse_v2_dtype(dtype)
    shape = _check_shape(doc["shape"], "shape", minimum=0)
    chunks = _check_shape(doc["chunks"], "chunks", minimum=1)
    if len(chunks) != len(shape):
        raise _fail("chunks", f"{len(shape)} dimensions like shape", chunks)
    _check_chunk_size(chunks, data_type.length_bytes, "chunks")
    order = doc["order"]
    if not (_is_str(order, "C") or _is_str(order, "F")):
        raise _fail("order", '"C" or "F"', order)
    # V2 allows null: no fill value. zarr-python then reads missing chunks as "".
    fill = doc["fill_value"]
    fill_value = numpy.str_("") if fill is None else data_type.decode_fill_value(fill)
    compressor = doc["compressor"]
    if compressor is not None:
        _check_v2_codec(compressor, "compressor")
    filters = doc["filters"]
    if filters is not None and not isinstance(filters, list):
        raise _fail("filters", 'null or an array of objects with a string "id"', filters)
    for i, f in enumerate(filters or ()):
        _check_v2_codec(f, f"filters[{i}]")
    separator = doc.get("dimension_separator", ".")
    if not (_is_str(separator, "/") or _is_str(separator, ".")):
        raise _fail("dimension_separator", '"/" or "."', separator)
    return ArrayMetadata._from_checked(
        zarr_format=2,
        shape=shape,
        chunk_shape=chunks,
        data_type=data_type,
        endian=endian,
        fill_value=fill_value,
        order=order,
        codecs=() if compressor is None else (copy.deepcopy(dict(compressor)),),
        filters=tuple(copy.deepcopy(dict(f)) for f in filters or ()),
        chunk_key_encoding="v2",
        separator=separator,
    )


def parse_array_metadata(doc: Any) -> ArrayMetadata:
    """Parse the metadata of a fixed_length_utf32 array, V3 or V2.

    Parameters
    ----------
    doc : dict or str or bytes
        A whole V3 ``zarr.json`` or V2 ``.zarray`` document, or its JSON text.

    Returns
    -------
    ArrayMetadata
        A new frozen object; it keeps no reference to ``doc`` (codec objects are
        deep copies).

    Raises
    ------
    MetadataError
        If ``zarr_format`` is not 2 or 3; the array is of another data type
        (the message names the type found); or any part is invalid: the data
        type, the fill value, the codecs (V3), the V2 ``dtype`` string, the
        shapes, ``order``, the chunk key encoding, the V3 optional keys
        (``attributes`` an object, ``dimension_names`` one string or null per
        dimension, ``storage_transformers`` an empty array) or the V2
        ``compressor``/``filters`` (objects with a string ``"id"``). Also for
        what nothing could hold (see the module's Limits): nesting deeper
        than :data:`MAX_NESTING_DEPTH`, ``length_bytes`` above
        :data:`MAX_LENGTH_BYTES`, extents above ``2**63 - 1``, a chunk of more
        than ``sys.maxsize`` bytes.

    Notes
    -----
    V3 ``transpose`` codecs before ``bytes`` become ``order``: none (or the
    identity) is "C", the reversed axes is "F"; other permutations are
    rejected, as :func:`fixedutf32.decode_chunk` reads C or F order only.
    A V2 ``fill_value`` of ``null`` becomes ``""``, which is what
    zarr-python reads for missing chunks.

    Examples
    --------
    >>> meta = parse_array_metadata('''{
    ...   "zarr_format": 3, "node_type": "array", "shape": [5],
    ...   "data_type": {"name": "fixed_length_utf32",
    ...                 "configuration": {"length_bytes": 8}},
    ...   "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    ...   "chunk_key_encoding": {"name": "default"},
    ...   "fill_value": "-",
    ...   "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
    ...              {"name": "gzip", "configuration": {"level": 1}}]}''')
    >>> meta.endian, str(meta.fill_value), meta.grid_shape, meta.chunk_key((2,))
    ('little', '-', (3,), 'c/2')
    >>> meta.codecs
    ({'name': 'gzip', 'configuration': {'level': 1}},)
    >>> parse_array_metadata({"zarr_format": 3, "node_type": "array", "shape": [1],
    ...     "data_type": "int32", "chunk_grid": {}, "chunk_key_encoding": {},
    ...     "fill_value": 0, "codecs": []})
    Traceback (most recent call last):
        ...
    fixedutf32.errors.MetadataError: data_type: expected fixed_length_utf32, found ... "int32"
    """
    doc = _load(doc, "metadata")
    if not isinstance(doc, Mapping):
        raise _fail("metadata", "a JSON object", doc)
    fmt = doc.get("zarr_format")
    if _is_json_int(fmt) and fmt == 3:
        return _parse_v3(doc)
    if _is_json_int(fmt) and fmt == 2:
        return _parse_v2(doc)
    raise _fail("zarr_format", "2 or 3", fmt)
