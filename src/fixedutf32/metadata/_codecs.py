"""The codec chains this data type allows: V3 ``codecs`` lists and V2 compressors/filters."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import MetadataError
from ._dtype import _NAME, FixedLengthUTF32, _check_endian
from ._json import _check_depth, _check_keys, _fail, _is_json_int, _load, _show

# Codecs are classified by name. Only ``bytes`` may serialize this data type;
# the other array-to-bytes codecs are listed so that the error can say why.
_ARRAY_TO_ARRAY = frozenset({"transpose"})
_VARIABLE_LENGTH = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array"})
_OTHER_ARRAY_TO_BYTES = frozenset(
    {"sharding_indexed", "numcodecs.pcodec", "numcodecs.zfpy", "packbits"}
)
_BYTES_FIX = '{"name": "bytes", "configuration": {"endian": "little"}}'


def _normalize_codec(codec: Any, key: str) -> dict[str, Any]:
    """Return ``{"name": ..., "configuration": ...?}`` for one codec entry."""
    if isinstance(codec, str):  # V3 short form: a bare name, no configuration
        return {"name": codec}
    if not isinstance(codec, Mapping):
        raise _fail(key, "a codec object or name", codec)
    _check_keys(codec, {"name"}, {"configuration", "must_understand"}, key)
    if not isinstance(codec["name"], str):
        raise _fail(f"{key}.name", "a string", codec["name"])
    if "configuration" in codec and not isinstance(codec["configuration"], Mapping):
        raise _fail(f"{key}.configuration", "a JSON object", codec["configuration"])
    return dict(codec)


def _split_codecs(codecs: Any, data_type: FixedLengthUTF32) -> tuple[list[Any], str, list[Any]]:
    """Check a V3 codecs list; return (array-to-array, endian, bytes-to-bytes)."""
    codecs = _load(codecs, "codecs")
    if not isinstance(codecs, Sequence) or isinstance(codecs, (str, bytes)):
        raise _fail("codecs", "a JSON array of codecs", codecs)
    entries = [_normalize_codec(c, f"codecs[{i}]") for i, c in enumerate(codecs)]
    where = None
    for i, codec in enumerate(entries):
        name = codec["name"]
        if name in _VARIABLE_LENGTH:
            raise MetadataError(
                f'codecs[{i}]: expected the "bytes" codec, got {_show(name)}: variable-length '
                f"codecs do not encode elements at a fixed size, so they cannot serialize "
                f"{_NAME} (length_bytes {data_type.length_bytes}); use {_BYTES_FIX}"
            )
        if name in _OTHER_ARRAY_TO_BYTES:
            extra = (
                "; shards are not chunks: check the inner codecs with check_codecs(codecs, ...)"
                if name == "sharding_indexed"
                else ""
            )
            raise MetadataError(
                f'codecs[{i}]: expected the "bytes" codec, got {_show(name)}: {_NAME} is '
                f"stored as fixed-size blobs of length_bytes ({data_type.length_bytes}) bytes "
                f"by the bytes codec{extra}"
            )
        if name == "bytes":
            if where is not None:
                raise MetadataError(
                    f'codecs[{i}]: expected one array-to-bytes codec, got a second "bytes" '
                    f"(the first is codecs[{where}])"
                )
            where = i
    if where is None:
        raise MetadataError(
            f'codecs: expected a "bytes" codec with an explicit endian ({_BYTES_FIX}), '
            f"got codecs named {_show([c['name'] for c in entries])}"
        )
    for i, codec in enumerate(entries[:where]):
        if codec["name"] not in _ARRAY_TO_ARRAY:
            raise MetadataError(
                f"codecs[{i}]: expected an array-to-array codec (one of "
                f'{sorted(_ARRAY_TO_ARRAY)}) before "bytes", got {_show(codec["name"])}'
            )
    for i, codec in enumerate(entries[where + 1 :], start=where + 1):
        if codec["name"] in _ARRAY_TO_ARRAY:
            raise MetadataError(
                f'codecs[{i}]: expected a bytes-to-bytes codec after "bytes", got '
                f"the array-to-array codec {_show(codec['name'])}"
            )
    key = f"codecs[{where}]"
    config = entries[where].get("configuration")
    if config is None or "endian" not in config:
        raise MetadataError(
            f'{key}.configuration.endian: expected "little" or "big", got no endian '
            f"in {_show(codecs[where])}: UTF-32 code units are 4 bytes, so the byte order "
            f"must be explicit"
        )
    _check_keys(config, {"endian"}, set(), f"{key}.configuration")
    endian = _check_endian(config["endian"], f"{key}.configuration.endian")
    return entries[:where], endian, entries[where + 1 :]


def check_codecs(codecs: Any, data_type: Any) -> str:
    """Check a V3 ``codecs`` list for this data type and return its endian.

    The array-to-bytes codec must be ``bytes`` with an explicit ``endian``.
    Array-to-array codecs (``transpose``) may come before it and any
    bytes-to-bytes codec (gzip, zstd, blosc, crc32c, ...) after it.

    Parameters
    ----------
    codecs : list or str
        The ``codecs`` JSON array (entries are objects or bare names), or the
        same as JSON text.
    data_type : FixedLengthUTF32 or dict or str
        The array's data type, or its ``data_type`` JSON.

    Returns
    -------
    {"little", "big"}
        The byte order of the chunk data after the bytes-to-bytes codecs are
        undone.

    Raises
    ------
    MetadataError
        If there is no ``bytes`` codec or more than one; if ``bytes`` has no
        ``endian`` or one other than ``"little"``/``"big"``; if a
        variable-length codec (``vlen-utf8``, ``vlen-bytes``) or another
        array-to-bytes codec (``sharding_indexed``...) is present; if an
        unknown codec comes before ``bytes`` or ``transpose`` after it.

    Examples
    --------
    >>> dt = FixedLengthUTF32(8)
    >>> check_codecs([{"name": "bytes", "configuration": {"endian": "big"}},
    ...               {"name": "gzip", "configuration": {"level": 5}}], dt)
    'big'
    >>> check_codecs([{"name": "vlen-utf8"}], dt)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    fixedutf32.errors.MetadataError: codecs[0]: expected the "bytes" codec, got "vlen-utf8": ...
    """
    if not isinstance(data_type, FixedLengthUTF32):
        data_type = FixedLengthUTF32.from_json(data_type)
    return _split_codecs(codecs, data_type)[1]


def _copy_objects(value: Any, key: str) -> tuple[dict[str, Any], ...]:
    """Deep copies of a sequence of JSON objects (codecs, filters) given in Python."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise _fail(key, "a sequence (tuple or list) of JSON objects", value)
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise _fail(f"{key}[{i}]", "a JSON object (dict)", item)
    _check_depth(value, key)
    return tuple(copy.deepcopy(dict(item)) for item in value)


def _check_v2_codec(codec: Any, key: str) -> None:
    """A numcodecs configuration: an object whose "id" is a string."""
    if not isinstance(codec, Mapping) or not isinstance(codec.get("id"), str):
        raise _fail(key, 'an object with a string "id"', codec)


def _transpose_to_order(arrays: list[Any], ndim: int) -> str:
    """Reduce the transpose codecs before ``bytes`` to a memory order "C"/"F"."""
    perm = list(range(ndim))
    for i, codec in enumerate(arrays):
        key = f"codecs[{i}].configuration"
        config = codec.get("configuration")
        if not isinstance(config, Mapping):
            raise _fail(key, 'an object {"order": [...]}', config)
        _check_keys(config, {"order"}, set(), key)
        order = config["order"]
        if (
            not isinstance(order, list)
            or not all(_is_json_int(n) for n in order)
            or sorted(order) != list(range(ndim))
        ):
            raise _fail(f"{key}.order", f"a permutation of 0..{ndim - 1}", order)
        perm = [perm[n] for n in order]
    if perm == list(range(ndim)):
        return "C"
    if perm == list(range(ndim))[::-1]:
        return "F"
    raise MetadataError(
        f"codecs: expected transpose codecs that reduce to C order {list(range(ndim))} or F "
        f"order {list(range(ndim))[::-1]}, got the permutation {perm}; decode_chunk reads "
        f"C or F order only"
    )
