"""Strict metadata helpers for the Zarr V3 ``fixed_length_utf32`` data type.

This module turns array metadata (a V3 ``zarr.json`` or a V2 ``.zarray``) into
the arguments that :func:`fixedutf32.decode_chunk` needs, and rejects what the
specification forbids. Every rejection raises :class:`MetadataError` (a
``ValueError``) whose message names the offending key, what was expected and
what arrived.

Nothing here touches chunk data; it is plain Python over small JSON documents.
The only array work is :meth:`FixedLengthUTF32.fill_array`, which is one
``numpy.full`` call.

Limits
------
A document that parses can be used: what the rest of the package or NumPy
could not hold is rejected here, with a :class:`MetadataError`.

- Nesting: at most :data:`MAX_NESTING_DEPTH` (128) levels of JSON arrays
  and objects, anywhere in the document (``attributes`` included), in JSON
  text and in already-parsed dicts and lists alike. serde_json (used by the
  Rust ``zarrs``) applies the same default limit.
- ``length_bytes``: at most :data:`MAX_LENGTH_BYTES` (2147483644), NumPy's
  largest ``U`` item (its item size is a C ``int``): ``"<U536870911"``.
- Array and chunk extents: at most ``2**63 - 1`` (int64).
- One chunk, ``prod(chunk_shape) * length_bytes`` bytes, fits in one buffer:
  at most ``sys.maxsize`` bytes.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy

# The rules' constants are shared with the function arguments' checks; the
# errors here are MetadataError and name the JSON key.
from ._checks import ENDIANS, MAX_LENGTH_BYTES
from .errors import MetadataError

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

_NAME = "fixed_length_utf32"
_V2_DTYPE = re.compile(r"([<>])U([1-9][0-9]*)", re.ASCII)
_SURROGATE = re.compile("[\ud800-\udfff]")

# Codecs are classified by name. Only ``bytes`` may serialize this data type;
# the other array-to-bytes codecs are listed so that the error can say why.
_ARRAY_TO_ARRAY = frozenset({"transpose"})
_VARIABLE_LENGTH = frozenset({"vlen-utf8", "vlen-bytes", "vlen-array"})
_OTHER_ARRAY_TO_BYTES = frozenset(
    {"sharding_indexed", "numcodecs.pcodec", "numcodecs.zfpy", "packbits"}
)
_BYTES_FIX = '{"name": "bytes", "configuration": {"endian": "little"}}'

#: Deepest nesting of JSON arrays and objects a document may have.
MAX_NESTING_DEPTH = 128
# MAX_LENGTH_BYTES (from _checks): NumPy's largest ``U`` item size.
_MAX_EXTENT = 2**63 - 1  # int64, as zarr-python holds shapes


def _show(value: Any) -> str:
    """Spell a JSON value the way it appears in a document, shortened."""
    if _is_json_int(value) and value.bit_length() > 64:
        # Python refuses to print ints of more than 4300 digits
        return f"an integer of {value.bit_length()} bits"
    try:
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        try:
            text = json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            try:
                text = repr(value)
            except (ValueError, RecursionError):
                text = f"a {type(value).__name__}"
    if len(text) > 80:
        text = text[:77] + "..."
    return text


def _fail(key: str, expected: str, value: Any) -> MetadataError:
    return MetadataError(f"{key}: expected {expected}, got {_show(value)}")


def _too_deep(key: str, where: str) -> MetadataError:
    return MetadataError(
        f"{key}: expected at most {MAX_NESTING_DEPTH} levels of nested JSON arrays and "
        f"objects, got deeper nesting {where}"
    )


def _check_depth(value: Any, key: str) -> None:
    """Reject nesting deeper than MAX_NESTING_DEPTH, without recursing.

    The parsers, ``copy.deepcopy`` and ``json.dumps`` recurse, so a deeper
    value would end in RecursionError. Parsed dicts may share or even contain
    themselves: a node is walked again only when reached deeper than before.
    """
    seen: dict[int, int] = {}
    # (node, depth, (parent link, key in parent))
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    while stack:
        node, depth, link = stack.pop()
        items: Iterable[tuple[Any, Any]]
        if isinstance(node, Mapping):
            items = node.items()
        elif isinstance(node, (list, tuple)):
            items = enumerate(node)
        else:
            continue
        if depth > MAX_NESTING_DEPTH:
            path: list[str] = []
            while link is not None:
                link, part = link
                path.append(f"[{part}]" if isinstance(part, int) else f"[{_show(part)}]")
            where = "".join(reversed(path))
            if len(where) > 60:
                where = where[:60] + "..."
            raise _too_deep(key, f"at {key}{where}")
        if seen.get(id(node), 0) >= depth:
            continue
        seen[id(node)] = depth
        for part, child in items:
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, depth + 1, (link, part)))


def _load(doc: Any, key: str) -> Any:
    """Parse JSON text (``str``/``bytes``) or take a parsed value; check its depth."""
    if isinstance(doc, (str, bytes, bytearray)):
        try:
            doc = json.loads(doc)
        except RecursionError:
            # json recurses once per level; far beyond our limit it runs out of stack
            raise _too_deep(key, "(the JSON parser ran out of stack)") from None
        except ValueError as exc:
            raise MetadataError(f"{key}: expected JSON text, got invalid JSON ({exc})") from None
    _check_depth(doc, key)
    return doc


def _is_str(value: Any, text: str) -> bool:
    # type first: == on a NumPy array in a parsed dict would not give a bool
    return isinstance(value, str) and value == text


def _is_json_int(value: Any) -> bool:
    # JSON integers only: bool is an int subclass in Python but is JSON true/false.
    return isinstance(value, int) and not isinstance(value, bool)


def _check_length_bytes(value: Any, key: str) -> int:
    if not _is_json_int(value) or value < 4 or value % 4:
        raise _fail(key, "a positive integer multiple of 4", value)
    if value > MAX_LENGTH_BYTES:
        raise _fail(
            key,
            f"at most {MAX_LENGTH_BYTES} (NumPy's largest 'U' item, "
            f"{MAX_LENGTH_BYTES // 4} code points)",
            value,
        )
    length_bytes: int = value
    return length_bytes


def _check_keys(obj: Mapping[str, Any], required: set[str], optional: set[str], key: str) -> None:
    missing = sorted(required - obj.keys(), key=str)
    if missing:
        raise MetadataError(
            f"{key}: missing key {missing[0]!r}; expected keys {sorted(required | optional)}, "
            f"got {_show(obj)}"
        )
    extra = sorted(set(obj) - required - optional, key=str)
    if extra:
        raise MetadataError(
            f"{key}: unexpected key {extra[0]!r}; expected keys {sorted(required | optional)}, "
            f"got {_show(obj)}"
        )


def _check_endian(endian: Any, key: str = "endian") -> str:
    if not isinstance(endian, str) or endian not in ENDIANS:
        raise _fail(key, '"little" or "big"', endian)
    return endian


def _check_text(value: str, capacity: int, key: str) -> None:
    """Reject more than ``capacity`` code points or a lone surrogate."""
    if len(value) > capacity:
        raise MetadataError(
            f"{key}: expected at most {capacity} code points, got {len(value)} in {_show(value)}"
        )
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise MetadataError(
            f"{key}: expected Unicode scalar values, got the lone surrogate "
            f"U+{ord(bad.group()):04X} at code point {bad.start()} of {_show(value)}"
        )


@dataclass(frozen=True, slots=True)
class FixedLengthUTF32:
    """The ``fixed_length_utf32`` data type of one array.

    Immutable and hashable; two instances are equal when their
    ``length_bytes`` are equal.

    Parameters
    ----------
    length_bytes : int
        Encoded size of one element in bytes: a positive multiple of 4.

    Raises
    ------
    MetadataError
        If ``length_bytes`` is not an integer (``bool`` and ``float`` included),
        is below 4, is not a multiple of 4, or is above
        :data:`MAX_LENGTH_BYTES` (2147483644, NumPy's largest ``U`` item).

    Examples
    --------
    >>> from fixedutf32.metadata import FixedLengthUTF32
    >>> dt = FixedLengthUTF32(48)
    >>> dt.length_bytes, dt.capacity
    (48, 12)
    >>> dt == FixedLengthUTF32(48), len({dt, FixedLengthUTF32(48)})
    (True, 1)
    >>> FixedLengthUTF32(13)
    Traceback (most recent call last):
        ...
    fixedutf32.errors.MetadataError: length_bytes: expected a positive integer multiple of 4, got 13
    """

    length_bytes: int
    name: ClassVar[str] = _NAME

    def __post_init__(self) -> None:
        value = self.length_bytes
        if isinstance(value, numpy.integer):
            value = int(value)
            object.__setattr__(self, "length_bytes", value)
        _check_length_bytes(value, "length_bytes")

    @property
    def capacity(self) -> int:
        """Largest number of code points one element holds (``length_bytes // 4``).

        Examples
        --------
        >>> FixedLengthUTF32(48).capacity
        12
        """
        return self.length_bytes // 4

    def to_json(self) -> dict[str, Any]:
        """Return the V3 ``data_type`` value, a new dict each call.

        Examples
        --------
        >>> FixedLengthUTF32(12).to_json()
        {'name': 'fixed_length_utf32', 'configuration': {'length_bytes': 12}}
        """
        return {"name": _NAME, "configuration": {"length_bytes": self.length_bytes}}

    @classmethod
    def from_json(cls, obj: Any, *, key: str = "data_type") -> FixedLengthUTF32:
        """Parse a V3 ``data_type`` value, strictly.

        Parameters
        ----------
        obj : dict or str or bytes
            The ``data_type`` JSON object, or the same as JSON text.
        key : str, optional
            Name of the value in error messages.

        Returns
        -------
        FixedLengthUTF32
            A new instance with the configuration's ``length_bytes``.

        Raises
        ------
        MetadataError
            If ``obj`` is not an object with exactly the keys ``name`` and
            ``configuration``, the name is not ``"fixed_length_utf32"``, the
            configuration is not an object with exactly ``length_bytes``, or
            ``length_bytes`` is not a JSON integer >= 4 and a multiple of 4
            (``true``, ``4.0``, ``"48"`` and ``null`` are all rejected) or is
            above :data:`MAX_LENGTH_BYTES`; if the JSON text is invalid or
            nested deeper than :data:`MAX_NESTING_DEPTH`.

        Examples
        --------
        >>> FixedLengthUTF32.from_json('{"name": "fixed_length_utf32", '
        ...                            '"configuration": {"length_bytes": 8}}')
        FixedLengthUTF32(length_bytes=8)
        >>> FixedLengthUTF32.from_json({"name": "fixed_length_utf32",
        ...                             "configuration": {"length_bytes": 4.0}})
        Traceback (most recent call last):
            ...
        fixedutf32.errors.MetadataError: data_type.configuration.length_bytes: ... got 4.0
        """
        obj = _load(obj, key)
        if isinstance(obj, str):
            raise _fail(key, f'a {{"name": "{_NAME}", "configuration": ...}} object', obj)
        if not isinstance(obj, Mapping):
            raise _fail(key, "a JSON object", obj)
        _check_keys(obj, {"name", "configuration"}, set(), key)
        if not isinstance(obj["name"], str) or obj["name"] != _NAME:
            raise _fail(f"{key}.name", f'"{_NAME}"', obj["name"])
        config = obj["configuration"]
        if not isinstance(config, Mapping):
            raise _fail(f"{key}.configuration", "a JSON object", config)
        _check_keys(config, {"length_bytes"}, set(), f"{key}.configuration")
        return cls(_check_length_bytes(config["length_bytes"], f"{key}.configuration.length_bytes"))

    @classmethod
    def from_numpy(cls, dtype: Any) -> FixedLengthUTF32:
        """Build from a NumPy unicode dtype; the byte order is dropped.

        Parameters
        ----------
        dtype : numpy.dtype or anything ``numpy.dtype()`` accepts
            ``"<U12"``, ``">U12"``, ``"=U12"``, ``"U12"``, ``numpy.dtype("U3")``...

        Returns
        -------
        FixedLengthUTF32
            A new instance whose ``length_bytes`` is the dtype's itemsize.

        Raises
        ------
        MetadataError
            If the dtype is not a unicode (``U``) dtype, or has no room
            (``"U"``/``"U0"``).

        Examples
        --------
        >>> FixedLengthUTF32.from_numpy(">U12")
        FixedLengthUTF32(length_bytes=48)
        >>> FixedLengthUTF32.from_numpy("i4")
        Traceback (most recent call last):
            ...
        fixedutf32.errors.MetadataError: dtype: expected a NumPy unicode dtype (...), got "int32"
        """
        try:
            dt = numpy.dtype(dtype)
        except (TypeError, ValueError):
            raise _fail("dtype", "something numpy.dtype() accepts", repr(dtype)) from None
        expected = "a NumPy unicode dtype ('<U<n>', '>U<n>' with n >= 1)"
        if dt.kind != "U" or dt.itemsize < 4:
            raise _fail("dtype", expected, str(dt))
        return cls(dt.itemsize)

    def to_numpy(self, endian: str = "little") -> numpy.dtype:
        """Return the NumPy dtype of the given byte order.

        Parameters
        ----------
        endian : {"little", "big"}, default "little"
            As for :meth:`to_v2`.

        Returns
        -------
        numpy.dtype
            The ``U`` dtype that :meth:`to_v2` names.

        Raises
        ------
        MetadataError
            As for :meth:`to_v2`.

        Examples
        --------
        >>> FixedLengthUTF32(12).to_numpy("big").str
        '>U3'
        """
        return numpy.dtype(self.to_v2(endian))

    def to_v2(self, endian: str = "little") -> str:
        """Return the Zarr V2 ``dtype`` string, e.g. ``"<U12"``.

        Parameters
        ----------
        endian : {"little", "big"}, default "little"
            Byte order, written as the prefix ``"<"`` or ``">"``.

        Returns
        -------
        str
            The prefix, ``"U"`` and :attr:`capacity`.

        Raises
        ------
        MetadataError
            If ``endian`` is not ``"little"`` or ``"big"``.

        Examples
        --------
        >>> FixedLengthUTF32(48).to_v2(), FixedLengthUTF32(48).to_v2("big")
        ('<U12', '>U12')
        """
        prefix = "<" if _check_endian(endian) == "little" else ">"
        return f"{prefix}U{self.capacity}"

    def decode_fill_value(self, json_value: Any, *, key: str = "fill_value") -> numpy.str_:
        """Decode a JSON ``fill_value`` into a scalar.

        Parameters
        ----------
        json_value : str
            The value as it appears in the metadata (already parsed from JSON).
        key : str, optional
            Name of the value in error messages.

        Returns
        -------
        numpy.str_
            The scalar, trailing U+0000 padding removed.

        Raises
        ------
        MetadataError
            If the value is not a JSON string, has more than ``capacity`` code
            points (code points, not UTF-16 units: "😀" counts one; trailing
            U+0000 count too, as the JSON string holds them), or holds a lone
            surrogate (U+D800..U+DFFF).

        Examples
        --------
        >>> dt = FixedLengthUTF32(8)
        >>> value = dt.decode_fill_value("😀!")
        >>> type(value).__name__, str(value)
        ('str_', '😀!')
        >>> dt.decode_fill_value("abc")
        Traceback (most recent call last):
            ...
        fixedutf32.errors.MetadataError: fill_value: expected at most 2 code points, got 3 in "abc"
        """
        if not isinstance(json_value, str):
            raise _fail(key, "a JSON string", json_value)
        _check_text(json_value, self.capacity, key)
        return numpy.str_(json_value.rstrip("\x00"))

    def encode_fill_value(self, value: Any, *, key: str = "fill_value") -> str:
        """Encode a scalar as the JSON ``fill_value`` (a ``str``).

        Parameters
        ----------
        value : str or numpy.str_
            The scalar. Trailing U+0000 is padding and is removed before the
            capacity is checked.

        Returns
        -------
        str
            A new Python ``str`` without trailing U+0000.

        Raises
        ------
        MetadataError
            If ``value`` is not a string, is longer than ``capacity`` code
            points, or holds a lone surrogate.

        Examples
        --------
        >>> FixedLengthUTF32(8).encode_fill_value("ab\\x00\\x00")
        'ab'
        >>> FixedLengthUTF32(12).encode_fill_value("a\\x00b")
        'a\\x00b'
        """
        if not isinstance(value, str):
            raise _fail(key, "a str", repr(value))
        text = str(value).rstrip("\x00")
        _check_text(text, self.capacity, key)
        return text

    def fill_array(self, shape: Any, fill_value: Any = "", *, order: str = "C") -> numpy.ndarray:
        """Return a new native-order ``U`` array filled with ``fill_value``.

        One ``numpy.full`` call: no Python loop over elements.

        Parameters
        ----------
        shape : int or tuple of int
        fill_value : str, optional
            Checked as by :meth:`encode_fill_value`.
        order : {"C", "F"}, optional

        Returns
        -------
        numpy.ndarray
            A new array of dtype ``U<capacity>``; it shares no memory.

        Raises
        ------
        MetadataError
            If ``fill_value`` is not a valid scalar of this data type, if
            ``shape`` is not an integer >= 0 or a sequence of them (``bool``
            is not an integer here), or ``order`` is not "C" or "F".
        ValueError, MemoryError
            From NumPy, if the array is too large to allocate.

        Examples
        --------
        >>> FixedLengthUTF32(8).fill_array((2, 2), "hi")
        array([['hi', 'hi'],
               ['hi', 'hi']], dtype='<U2')
        """
        text = self.encode_fill_value(fill_value)
        if _is_json_int(shape) or isinstance(shape, numpy.integer):
            shape = (shape,)
        shape = _as_shape(shape, "shape", minimum=0)
        if not isinstance(order, str) or order not in ("C", "F"):
            raise _fail("order", '"C" or "F"', order)
        # order is "C" or "F" (checked above)
        return numpy.full(shape, text, dtype=f"U{self.capacity}", order=order)  # type: ignore[call-overload,no-any-return]


def parse_v2_dtype(dtype: Any, *, key: str = "dtype") -> tuple[FixedLengthUTF32, str]:
    """Parse a Zarr V2 ``dtype`` string ``"<U<n>"`` or ``">U<n>"``.

    Parameters
    ----------
    dtype : str
        The V2 ``dtype`` value. ``n`` is a decimal integer >= 1 written without
        leading zeros, as NumPy writes it.
    key : str, optional
        Name of the value in error messages.

    Returns
    -------
    tuple of (FixedLengthUTF32, str)
        The data type and ``"little"`` (for ``<``) or ``"big"`` (for ``>``).

    Raises
    ------
    MetadataError
        For any other string (``"|U2"``, ``"U2"``, ``"=U2"``, ``"<U0"``,
        ``"<U02"``, ``"<S2"``...), an ``n`` above 536870911 (NumPy's limit,
        :data:`MAX_LENGTH_BYTES` ``// 4``), or a non-string.

    Examples
    --------
    >>> parse_v2_dtype("<U12")
    (FixedLengthUTF32(length_bytes=48), 'little')
    >>> parse_v2_dtype(">U1")
    (FixedLengthUTF32(length_bytes=4), 'big')
    >>> parse_v2_dtype("|U2")
    Traceback (most recent call last):
        ...
    fixedutf32.errors.MetadataError: dtype: expected "<U<n>" or ">U<n>" with n >= 1, got "|U2"
    """
    match = _V2_DTYPE.fullmatch(dtype) if isinstance(dtype, str) else None
    if match is None:
        raise _fail(key, '"<U<n>" or ">U<n>" with n >= 1', dtype)
    endian = "little" if match.group(1) == "<" else "big"
    digits = match.group(2)
    # compare digit counts first: int() refuses more than 4300 digits
    if len(digits) > 10 or int(digits) > MAX_LENGTH_BYTES // 4:
        raise _fail(
            key,
            f'"<U<n>" or ">U<n>" with n <= {MAX_LENGTH_BYTES // 4} (NumPy\'s largest \'U\' dtype)',
            dtype,
        )
    return FixedLengthUTF32(4 * int(digits)), endian


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


def _check_shape(value: Any, key: str, *, minimum: int) -> tuple[int, ...]:
    expected = f"a JSON array of integers >= {minimum}"
    if not isinstance(value, (list, tuple)):
        raise _fail(key, expected, value)
    for i, n in enumerate(value):
        if not _is_json_int(n) or n < minimum:
            raise _fail(f"{key}[{i}]", f"an integer >= {minimum}", n)
        if n > _MAX_EXTENT:
            raise _fail(f"{key}[{i}]", f"an integer <= 2**63 - 1 ({_MAX_EXTENT}, int64)", n)
    return tuple(value)


def _as_shape(value: Any, key: str, *, minimum: int) -> tuple[int, ...]:
    """A shape given in Python: a sequence of ints (NumPy integers too, not bools)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, numpy.ndarray)):
        raise _fail(key, f"a sequence (tuple or list) of integers >= {minimum}", value)
    return _check_shape(
        [int(n) if isinstance(n, numpy.integer) else n for n in value], key, minimum=minimum
    )


def _check_chunk_size(chunks: tuple[int, ...], data_type: FixedLengthUTF32, key: str) -> None:
    """One chunk must fit in one buffer: decode_chunk makes it one NumPy array."""
    nbytes = data_type.length_bytes
    for n in chunks:
        nbytes *= n
    if nbytes > sys.maxsize:
        raise MetadataError(
            f"{key}: expected a chunk of at most {sys.maxsize} bytes (the largest buffer), "
            f"got {_show(list(chunks))} elements of length_bytes {data_type.length_bytes}, "
            f"{nbytes} bytes"
        )


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


@dataclass(frozen=True)
class ArrayMetadata:
    """What a reader needs to decode the chunks of one array.

    Made by :func:`parse_array_metadata`, or by hand to write a store (then
    :meth:`to_json` gives the document). Frozen and compared field by field;
    not hashable, as it holds codec dicts.

    Attributes
    ----------
    zarr_format : {2, 3}
    shape : tuple of int
        Shape of the whole array.
    chunk_shape : tuple of int
        Shape of every chunk (edge chunks are stored at full size).
    data_type : FixedLengthUTF32
    endian : {"little", "big"}
        Byte order of the chunk data once ``codecs`` are undone.
    fill_value : str
        Value of elements in missing chunks; any ``str`` that fits, kept as a
        ``numpy.str_``.
    order : {"C", "F"}
        Memory order of the elements inside one chunk.
    codecs : tuple of dict
        Codecs to undo, in reverse, before :func:`fixedutf32.decode_chunk`.
        V3: the bytes-to-bytes codecs after ``bytes`` (``{"name", "configuration"}``
        objects). V2: ``(compressor,)`` (numcodecs ``{"id", ...}`` object) or ``()``.
    filters : tuple of dict
        V2 ``filters`` (applied before the compressor when writing); ``()`` for V3.
    chunk_key_encoding : {"default", "v2"}
        Default: "default" for V3, "v2" for V2 (the only one V2 has).
    separator : {"/", "."}
        Default: "/" for the "default" encoding, "." for "v2".

    Raises
    ------
    MetadataError
        When built by hand with a field that the metadata could not hold.
    """

    zarr_format: int
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    data_type: FixedLengthUTF32
    endian: str = "little"
    fill_value: str = ""  # kept as a numpy.str_ (__post_init__)
    order: str = "C"
    codecs: tuple[Any, ...] = ()
    filters: tuple[Any, ...] = ()
    chunk_key_encoding: str | None = None
    separator: str | None = None

    def __post_init__(self) -> None:
        # Built by hand (to write a store) as well as by parse_array_metadata:
        # check every field once, so that to_json() always writes valid metadata.
        set_ = object.__setattr__
        if not _is_json_int(self.zarr_format) or self.zarr_format not in (2, 3):
            raise _fail("zarr_format", "2 or 3", self.zarr_format)
        shape = _as_shape(self.shape, "shape", minimum=0)
        chunks = _as_shape(self.chunk_shape, "chunk_shape", minimum=1)
        if len(chunks) != len(shape):
            raise _fail("chunk_shape", f"{len(shape)} dimensions like shape", chunks)
        set_(self, "shape", shape)
        set_(self, "chunk_shape", chunks)
        if not isinstance(self.data_type, FixedLengthUTF32):
            raise _fail("data_type", "a FixedLengthUTF32", repr(self.data_type))
        _check_chunk_size(chunks, self.data_type, "chunk_shape")
        _check_endian(self.endian)
        if not isinstance(self.order, str) or self.order not in ("C", "F"):
            raise _fail("order", '"C" or "F"', self.order)
        set_(self, "fill_value", numpy.str_(self.data_type.encode_fill_value(self.fill_value)))
        # deep copies: the frozen object must not change when the caller's dicts do
        codecs = _copy_objects(self.codecs, "codecs")
        filters = _copy_objects(self.filters, "filters")
        if self.zarr_format == 2:
            for key, codec in [("codecs[0]", c) for c in codecs] + [
                (f"filters[{i}]", f) for i, f in enumerate(filters)
            ]:
                _check_v2_codec(codec, key)
        if self.zarr_format == 3:
            _split_codecs(
                [{"name": "bytes", "configuration": {"endian": "little"}}, *codecs], self.data_type
            )
            if filters:
                raise _fail("filters", "none for zarr_format 3 (use codecs)", list(filters))
            encodings = {"default": "/", "v2": "."}
            if len(shape) <= 1:  # one axis: C and F are the same layout
                set_(self, "order", "C")
        else:
            if len(codecs) > 1:
                raise _fail("codecs", "at most one V2 compressor", list(codecs))
            encodings = {"v2": "."}
        if self.chunk_key_encoding is None:
            set_(self, "chunk_key_encoding", next(iter(encodings)))
        if not isinstance(self.chunk_key_encoding, str) or self.chunk_key_encoding not in encodings:
            raise _fail(
                "chunk_key_encoding", " or ".join(map(_show, encodings)), self.chunk_key_encoding
            )
        if self.separator is None:
            set_(self, "separator", encodings[self.chunk_key_encoding])
        if not isinstance(self.separator, str) or self.separator not in ("/", "."):
            raise _fail("separator", '"/" or "."', self.separator)
        set_(self, "codecs", codecs)
        set_(self, "filters", filters)

    def to_json(self) -> dict[str, Any]:
        """Return the ``zarr.json`` (V3) or ``.zarray`` (V2) document, a new dict.

        ``parse_array_metadata(meta.to_json()) == meta``. Order "F" is written
        as a V3 ``transpose`` codec reversing the axes.

        Examples
        --------
        >>> meta = ArrayMetadata(3, shape=(4,), chunk_shape=(2,),
        ...                      data_type=FixedLengthUTF32(8), endian="big",
        ...                      codecs=({"name": "gzip", "configuration": {"level": 1}},))
        >>> meta.to_json()["codecs"]
        [{'name': 'bytes', 'configuration': {'endian': 'big'}}, {'name': 'gzip', ...}]
        >>> ArrayMetadata(2, (4,), (2,), FixedLengthUTF32(8), fill_value="x").to_json()["dtype"]
        '<U2'
        """
        fill = self.data_type.encode_fill_value(self.fill_value)
        if self.zarr_format == 2:
            return {
                "zarr_format": 2,
                "shape": list(self.shape),
                "chunks": list(self.chunk_shape),
                "dtype": self.data_type.to_v2(self.endian),
                "fill_value": fill,
                "order": self.order,
                "compressor": copy.deepcopy(self.codecs[0]) if self.codecs else None,
                "filters": copy.deepcopy(list(self.filters)) or None,
                "dimension_separator": self.separator,
            }
        codecs = [{"name": "bytes", "configuration": {"endian": self.endian}}]
        codecs += copy.deepcopy(list(self.codecs))
        if self.order == "F" and len(self.shape) > 1:
            axes = list(range(len(self.shape)))[::-1]
            codecs.insert(0, {"name": "transpose", "configuration": {"order": axes}})
        return {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": {
                "name": "regular",
                "configuration": {"chunk_shape": list(self.chunk_shape)},
            },
            "chunk_key_encoding": {
                "name": self.chunk_key_encoding,
                "configuration": {"separator": self.separator},
            },
            "fill_value": fill,
            "codecs": codecs,
            "attributes": {},
        }

    @property
    def grid_shape(self) -> tuple[int, ...]:
        """Number of chunks along each axis (edge chunks included).

        Examples
        --------
        >>> ArrayMetadata(3, (5, 4), (2, 2), FixedLengthUTF32(8)).grid_shape
        (3, 2)
        """
        # integer ceiling: s / c in floating point is off for extents above 2**53
        return tuple(-(-s // c) for s, c in zip(self.shape, self.chunk_shape))

    def chunk_indices(self) -> Iterator[tuple[int, ...]]:
        """Return an iterator over the grid index of every chunk, in C order.

        Lazy: each index is made when asked for, so a grid of 10**12 chunks
        costs no memory up front.

        Returns
        -------
        iterator of tuple of int
            ``()`` once for a zero-dimensional array; nothing when a
            dimension is 0.

        Examples
        --------
        >>> list(ArrayMetadata(3, (3, 4), (2, 2), FixedLengthUTF32(8)).chunk_indices())
        [(0, 0), (0, 1), (1, 0), (1, 1)]
        """
        return _c_order(self.grid_shape)

    def chunk_key(self, index: Sequence[int]) -> str:
        """Return the store key of the chunk at grid ``index``.

        Parameters
        ----------
        index : sequence of int
            The chunk's position in the chunk grid.

        Returns
        -------
        str
            ``"c/1/0"`` for the V3 ``default`` encoding, ``"1.0"`` for ``v2``
            (with the array's separator); ``"c"`` and ``"0"`` for 0-d arrays.

        Examples
        --------
        >>> meta = parse_array_metadata({
        ...     "zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": "<U3",
        ...     "fill_value": "", "order": "C", "compressor": None, "filters": None})
        >>> meta.chunk_key((1, 0))
        '1.0'
        """
        parts = [str(int(i)) for i in index]
        if self.chunk_key_encoding == "default":
            return self.separator.join(["c", *parts])  # type: ignore[union-attr]  # set in __post_init__
        return self.separator.join(parts) if parts else "0"  # type: ignore[union-attr]

    def chunk_region(self, index: Sequence[int]) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
        """Where the chunk at grid ``index`` goes in the array.

        Parameters
        ----------
        index : sequence of int
            As for :meth:`chunk_key`.

        Returns
        -------
        (tuple of slice, tuple of slice)
            The slices of the array the chunk covers, and the slices of the
            decoded chunk to put there: edge chunks are stored at full
            ``chunk_shape`` and their part outside the array is cut off.

        Examples
        --------
        >>> meta = ArrayMetadata(3, (5,), (2,), FixedLengthUTF32(8))
        >>> meta.chunk_region((2,))
        ((slice(4, 5, None),), (slice(0, 1, None),))
        """
        target, source = [], []
        for i, s, c in zip(index, self.shape, self.chunk_shape):
            start = i * c
            stop = min(start + c, s)
            target.append(slice(start, stop))
            source.append(slice(0, stop - start))
        return tuple(target), tuple(source)

    def decode_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`fixedutf32.decode_chunk` on one chunk.

        Returns
        -------
        dict
            A new dict: ``length_bytes``, ``endian``, ``shape`` (the chunk
            shape) and ``order``, for ``decode_chunk(data, **kwargs)``.

        Examples
        --------
        >>> meta = parse_array_metadata({
        ...     "zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": ">U3",
        ...     "fill_value": "", "order": "F", "compressor": None, "filters": None})
        >>> meta.decode_kwargs()
        {'length_bytes': 12, 'endian': 'big', 'shape': (2, 2), 'order': 'F'}
        """
        return {
            "length_bytes": self.data_type.length_bytes,
            "endian": self.endian,
            "shape": self.chunk_shape,
            "order": self.order,
        }


def _c_order(grid: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every index of ``grid`` in C order, one at a time.

    Not itertools.product, which turns each range into a tuple first.
    """
    if 0 in grid:
        return
    index = [0] * len(grid)
    while True:
        yield tuple(index)
        for axis in reversed(range(len(grid))):
            index[axis] += 1
            if index[axis] < grid[axis]:
                break
            index[axis] = 0
        else:
            return


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
    _check_chunk_size(chunks, dtype, "chunk_grid.configuration.chunk_shape")

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
    return ArrayMetadata(
        zarr_format=3,
        shape=shape,
        chunk_shape=chunks,
        data_type=dtype,
        endian=endian,
        fill_value=dtype.decode_fill_value(doc["fill_value"]),
        order=_transpose_to_order(arrays, len(shape)),
        codecs=tuple(rest),
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
    _check_chunk_size(chunks, data_type, "chunks")
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
    return ArrayMetadata(
        zarr_format=2,
        shape=shape,
        chunk_shape=chunks,
        data_type=data_type,
        endian=endian,
        fill_value=fill_value,
        order=order,
        codecs=() if compressor is None else (dict(compressor),),
        filters=tuple(dict(f) for f in filters or ()),
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
