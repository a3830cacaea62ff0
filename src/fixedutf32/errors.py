"""Every exception and warning fixedutf32 raises, defined here and only here.

The hierarchy (after msgspec's: one root, data errors apart)::

    FixedUTF32Error                  root: catch it to catch every error of fixedutf32
    ├── DataError (ValueError)       the data or metadata break a rule
    │   ├── InvalidCodePointError
    │   │   └── fixedutf32.zarr.InvalidChunkCodePointError
    │   ├── StringTooLongError
    │   │   └── fixedutf32.zarr.StringTooLongForArrayError
    │   ├── ChunkSizeError
    │   ├── MetadataError
    │   ├── InvalidUTF8Error
    │   ├── CorruptChunkError
    │   └── fixedutf32.store.InvalidChunkError
    └── StoreError                   a store cannot be opened, read or written, or a
                                     store tool was asked for what it cannot do
    UncheckedChunksWarning (UserWarning), fixedutf32.zarr

Every data error is a :class:`ValueError`, so ``except ValueError`` keeps
working for callers that do not care which rule was broken.  A
:class:`StoreError` is not a data error, nor a ``ValueError``: the data may be
fine, the store or the call is not.

The errors of :mod:`fixedutf32.zarr` and :mod:`fixedutf32.store` are defined
here (importing this module needs no zarr) and exported, and named in
tracebacks, by those subpackages, where users catch them.
"""

import functools
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from .store import Problem

__all__ = [
    "FixedUTF32Error",
    "DataError",
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


class FixedUTF32Error(Exception):
    """Base class of every error raised by fixedutf32."""


class DataError(FixedUTF32Error, ValueError):
    """Base class of every data error: the data or the metadata break a rule."""


class _FieldsError(DataError):
    """Base of the errors whose constructor arguments are their dataclass fields."""

    # Subclasses are dataclass(eq=False, repr=False): the exception's repr and identity comparison
    # stay; the message is worded in __post_init__; pickles as the fields, not just the message.

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


class ChunkSizeError(DataError):
    """A buffer's size does not fit ``length_bytes``, ``shape`` or ``out``."""


class MetadataError(DataError):
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


# The errors of fixedutf32.store (exported there)


class StoreError(FixedUTF32Error):
    """A store cannot be opened, read or written, or is not what was asked for.

    Not a data error (nor a :class:`ValueError`): the data may be fine, the
    store or the call is not.  Raised by :mod:`fixedutf32.store`.

    The ``fixedutf32`` command turns it into one line on stderr and exit
    status 2.
    """

    __module__ = "fixedutf32.store"


class InvalidChunkError(DataError):
    """A source chunk that cannot be converted stopped ``convert``.

    Attributes
    ----------
    problem : Problem
        The array, key, chunk index, coordinates and code point.
    finish : str or None
        The command that finishes the conversion (resume, skipping invalid
        chunks), when chunks were written; None when nothing was.
    """

    __module__ = "fixedutf32.store"

    def __init__(self, problem: "Problem", finish: str | None = None) -> None:
        self.problem = problem
        self.finish = finish
        if finish is None:
            advice = (
                "nothing was written: fix the source, or convert with skip_invalid=True "
                "(--skip-invalid)"
            )
        else:
            advice = (
                "the conversion stopped before writing this array's metadata, so the "
                "destination is incomplete (chunks without metadata): fix the source and "
                "resume, or finish it with the fill value for invalid chunks: " + finish
            )
        super().__init__(f"{problem}; {advice}")

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        return type(self), (self.problem, self.finish)


# The errors and the warning of fixedutf32.zarr (exported there)


@dataclass(eq=False, repr=False)
class InvalidChunkCodePointError(InvalidCodePointError):
    """An :class:`fixedutf32.InvalidCodePointError` that says which chunk and where.

    Raised by :class:`fixedutf32.zarr.CodecPipeline` for a bad code unit
    met while reading or writing a chunk through zarr.

    Parameters
    ----------
    index, position, code_point : int
        As for :class:`fixedutf32.InvalidCodePointError` (``index`` counts
        elements in the chunk's stored order).
    chunk_key : str or None
        The chunk's key in the store (``"c/0/2"``, ``"0.2"``).
    array_index : tuple of int or None
        The element's coordinates in the array, when known.

    Attributes
    ----------
    chunk_key, array_index
        As given; plus those of :class:`fixedutf32.InvalidCodePointError`.

    Examples
    --------
    >>> err = InvalidChunkCodePointError(3, 1, 0xD800, "c/0/2", (65539,))
    >>> print(str(err).split(";")[0])
    invalid code point U+D800 (surrogate) at element 3, position 1 of chunk c/0/2
    (array index (65539,))
    >>> import fixedutf32
    >>> isinstance(err, fixedutf32.InvalidCodePointError)
    True
    """

    __module__ = "fixedutf32.zarr"

    chunk_key: str | None = None
    array_index: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        where = f"at element {self.index}, position {self.position}"
        if self.chunk_key is not None:
            detail = f" of chunk {self.chunk_key}"
            if self.array_index is not None:
                detail += f" (array index {self.array_index})"
            self.args = (self.args[0].replace(where, where + detail, 1),)


@dataclass(eq=False, repr=False)
class StringTooLongForArrayError(StringTooLongError):
    """A value to write holds a string longer than the array's elements.

    Raised by :func:`fixedutf32.zarr.setitem`; nothing was written.

    Parameters
    ----------
    index, length, capacity : int
        As for :class:`fixedutf32.StringTooLongError`: ``index`` is the flat
        index of the string in the value (C order), ``capacity`` the array's
        code points per element.
    value_index : tuple of int
        The string's coordinates in the value (``()`` for a scalar).

    Examples
    --------
    >>> err = StringTooLongForArrayError(5, 7, 4, (1, 2))
    >>> print(err)
    string at value index (1, 2) has 7 code points; the array's elements hold at most 4 \
(<U4, length_bytes 16), so zarr would cut it; nothing was written
    >>> import fixedutf32
    >>> isinstance(err, fixedutf32.StringTooLongError)
    True
    """

    __module__ = "fixedutf32.zarr"

    value_index: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        self.args = (
            f"string at value index {self.value_index} has {self.length} code points; the "
            f"array's elements hold at most {self.capacity} (<U{self.capacity}, length_bytes "
            f"{4 * self.capacity}), so zarr would cut it; nothing was written",
        )


class UncheckedChunksWarning(UserWarning):
    """A fixed_length_utf32 array whose chunks no part of fixedutf32 can check.

    :class:`fixedutf32.zarr.CodecPipeline` reads almost every layout itself;
    the rest goes to zarr's pipeline, whose chunks are checked only when
    they pass through :class:`fixedutf32.zarr.BytesCodec` (V3 arrays, with
    ``codecs.bytes`` configured).  When neither can, this warning says so,
    once per array, with the reason.
    """

    __module__ = "fixedutf32.zarr"
