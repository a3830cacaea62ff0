"""Exceptions raised by fixedutf32.

Every data error derives from :class:`FixedUTF32Error`, itself a
:class:`ValueError`, so ``except ValueError`` keeps working for callers that
do not care which rule was broken.
"""

from typing import Any, ClassVar

__all__ = [
    "FixedUTF32Error",
    "InvalidCodePointError",
    "StringTooLongError",
    "ChunkSizeError",
    "MetadataError",
    "InvalidUTF8Error",
]


def _describe_code_point(code_point: int) -> str:
    if 0xD800 <= code_point <= 0xDFFF:
        return "surrogate"
    return "above U+10FFFF"


class FixedUTF32Error(ValueError):
    """Base class of every data error raised by fixedutf32."""


class _FieldsError(FixedUTF32Error):
    """An error built from the attributes named in ``_fields``, in that order.

    Pickles as those attributes (``Exception`` would pass only the message).
    """

    _fields: ClassVar[tuple[str, ...]]

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        return type(self), tuple(getattr(self, name) for name in self._fields)


class InvalidCodePointError(_FieldsError):
    """A code unit is not a Unicode scalar value.

    Attributes
    ----------
    index : int
        Flat index of the element in the chunk's element order.
    position : int
        Code point position inside that element.
    code_point : int
        The offending value, read in the chunk's byte order.
    kind : str
        ``"surrogate"`` (U+D800..U+DFFF) or ``"too_large"`` (above U+10FFFF).
    """

    _fields = ("index", "position", "code_point")

    def __init__(self, index: int, position: int, code_point: int) -> None:
        self.index = index
        self.position = position
        self.code_point = code_point
        self.kind = "surrogate" if 0xD800 <= code_point <= 0xDFFF else "too_large"
        super().__init__(
            f"invalid code point U+{code_point:04X} ({_describe_code_point(code_point)}) "
            f"at element {index}, position {position}; expected a Unicode scalar value "
            f"(U+0000..U+10FFFF, not U+D800..U+DFFF)"
        )


class StringTooLongError(_FieldsError):
    """A string holds more code points than the element width allows.

    Attributes
    ----------
    index : int
        Flat index of the element in the chunk's element order.
    length : int
        Its length in code points (without trailing U+0000 padding).
    capacity : int
        The most code points the target width holds (``length_bytes // 4``).
    """

    _fields = ("index", "length", "capacity")

    def __init__(self, index: int, length: int, capacity: int) -> None:
        self.index = index
        self.length = length
        self.capacity = capacity
        super().__init__(
            f"string at element {index} has {length} code points; expected at most "
            f"{capacity} (length_bytes {4 * capacity})"
        )


class ChunkSizeError(FixedUTF32Error):
    """A buffer's size does not fit ``length_bytes``, ``shape`` or ``out``."""


class MetadataError(FixedUTF32Error):
    """Array metadata breaks the fixed_length_utf32 specification."""


class InvalidUTF8Error(_FieldsError):
    """UTF-8 input is not well formed.

    Attributes
    ----------
    index : int
        The element (string) holding the bad byte.
    byte_offset : int
        Offset of the first bad byte inside that element's UTF-8 bytes.
    reason : str
        What is wrong with the bytes there.
    """

    _fields = ("index", "byte_offset", "reason")

    def __init__(self, index: int, byte_offset: int, reason: str) -> None:
        self.index = index
        self.byte_offset = byte_offset
        self.reason = reason
        super().__init__(f"invalid UTF-8 at element {index}, byte {byte_offset}: {reason}")
