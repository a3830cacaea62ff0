"""The ``fixed_length_utf32`` data type: its JSON, its NumPy and V2 forms, its fill values."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy

from .._arguments import ENDIANS, MAX_LENGTH_BYTES
from ..errors import MetadataError
from ._grid import _as_shape
from ._json import _check_keys, _fail, _is_json_int, _load, _show

_NAME = "fixed_length_utf32"
_V2_DTYPE = re.compile(r"([<>])U([1-9][0-9]*)", re.ASCII)
_SURROGATE = re.compile("[\ud800-\udfff]")


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
