"""Exceptions raised by fixedutf32.

Every data error derives from :class:`FixedUTF32Error`, itself a
:class:`ValueError`, so ``except ValueError`` keeps working for callers that
do not care which rule was broken.
"""

import functools
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

__all__ = [
    "FixedUTF32Error",
    "InvalidCodePointError",
    "StringTooLongError",
    "ChunkSizeError",
    "MetadataError",
    "InvalidUTF8Error",
    "CorruptChunkError",
]


def _describe_code_point(code_point: int) -> str:
    if 0xD800 <= code_point <= 0xDFFF:
        return "surrogate"
    return "above U+10FFFF"


def _in_chunk(chunk: int | None) -> str:
    """Where in a batch, before the element: "chunk 2, " (nothing for a single chunk)."""
    return "" if chunk is None else f"chunk {chunk}, "


class FixedUTF32Error(ValueError):
    """Base class of every data error raised by fixedutf32."""


class _FieldsError(FixedUTF32Error):
    """Base of the errors whose constructor arguments are their dataclass fields.

    Each subclass is a ``dataclass(eq=False, repr=False)``, so the
    exception's own ``repr`` and comparison by identity are kept, and words
    its message in ``__post_init__``.  Pickles as those fields (``Exception``
    would pass only the message).
    """

    __dataclass_fields__: ClassVar[dict[str, Any]]  # set by @dataclass on each subclass

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        init = [f for f in fields(self) if f.init]
        args = tuple(getattr(self, f.name) for f in init if not f.kw_only)
        keywords = {f.name: getattr(self, f.name) for f in init if f.kw_only}
        return (functools.partial(type(self), **keywords) if keywords else type(self)), args


@dataclass(eq=False, repr=False)
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
    chunk : int or None
        For the batched calls (:mod:`fixedutf32.batch`), the index of the
        chunk in the batch; None for a single chunk.
    """

    index: int
    position: int
    code_point: int
    chunk: int | None = field(default=None, kw_only=True)
    kind: str = field(init=False)

    def __post_init__(self) -> None:
        self.kind = "surrogate" if 0xD800 <= self.code_point <= 0xDFFF else "too_large"
        super().__init__(
            f"invalid code point U+{self.code_point:04X} "
            f"({_describe_code_point(self.code_point)}) at {_in_chunk(self.chunk)}"
            f"element {self.index}, position {self.position}; expected a Unicode scalar "
            f"value (U+0000..U+10FFFF, not U+D800..U+DFFF)"
        )


@dataclass(eq=False, repr=False)
class StringTooLongError(_FieldsError):
    """A string holds more code points than the element width allows.

    Attributes
    ----------
    index : int
        Which string: the flat index of its element, in the chunk's order.
    length : int
        Its length in code points (without trailing U+0000 padding).
    capacity : int
        The most code points the target width holds (``length_bytes // 4``).
    chunk : int or None
        For the batched calls (:mod:`fixedutf32.batch`), the index of the
        chunk in the batch; None for a single chunk.
    """

    index: int
    length: int
    capacity: int
    chunk: int | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        super().__init__(
            f"string at {_in_chunk(self.chunk)}element {self.index} has {self.length} code "
            f"points; expected at most {self.capacity} (length_bytes {4 * self.capacity})"
        )


class ChunkSizeError(FixedUTF32Error):
    """A buffer's size does not fit ``length_bytes``, ``shape`` or ``out``."""


class MetadataError(FixedUTF32Error):
    """Array metadata breaks the fixed_length_utf32 specification."""


@dataclass(eq=False, repr=False)
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

    index: int
    byte_offset: int
    reason: str

    def __post_init__(self) -> None:
        super().__init__(
            f"invalid UTF-8 at element {self.index}, byte {self.byte_offset}: {self.reason}"
        )


@dataclass(eq=False, repr=False)
class CorruptChunkError(_FieldsError):
    """A stored chunk cannot be what its metadata says it is.

    Raised before anything is decompressed when a frame's header disagrees
    with the chunk (a blosc header that claims more bytes than are stored,
    a zstd or lz4 frame that declares another size than the chunk's, a
    shard index that points outside its shard), when a frame inflates past
    the chunk's size, when a codec fails on the bytes, or when a local
    chunk file is not a regular file or is larger than the chunk can be.

    Attributes
    ----------
    key : str
        The chunk's store key (``"c/0/1"``, ``"0.1"``), or a path.
    reason : str
        What is wrong, with the sizes that disagree.
    """

    key: str
    reason: str

    def __post_init__(self) -> None:
        super().__init__(f"chunk {self.key} is corrupt: {self.reason}")
