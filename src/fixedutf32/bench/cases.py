"""What the benchmarks measure: generated text, and each kernel beside the NumPy way.

``fixedutf32 bench`` and the pytest-benchmark groups in ``benchmarks/`` share
these, so that both measure the same calls on the same data.  Every generator
is seeded: the same arguments give the same data.
"""

import sys
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..chunk import decode_chunk, encode_chunk, repad, str_lengths, validate
from ._timing import read_only_floor, rewrite_floor

__all__ = [
    "WIDTH",
    "NATIVE",
    "FOREIGN",
    "Case",
    "sample_units",
    "sample_chunk",
    "make_text",
    "store_strings",
    "kernel_cases",
]

WIDTH = 16  # code points per element (64 bytes), as in the targets
NATIVE = sys.byteorder
FOREIGN = "big" if NATIVE == "little" else "little"
CACHE_LINE = 64
_ALIGN_UP_TO = 1 << 20  # larger chunks are left where they land (copies would cost too much memory)


def _on_a_cache_line(data: bytes, tries: int = 16) -> bytes:
    """``data`` (bytes), or a copy of it whose contents start on a 64-byte cache line.

    Where a small ``bytes`` object lands depends on the allocator's history,
    and the kernels run about 20% slower on data 16 bytes off a line (a load
    in four then crosses two lines): without this, a 64 KiB row can move by
    that much between two runs of the same code.
    """
    if len(data) > _ALIGN_UP_TO:
        return data
    held: list[bytes] = []  # failed copies stay alive until the end, so each copy lands elsewhere
    for _ in range(tries):
        if np.frombuffer(data, np.uint8).ctypes.data % CACHE_LINE == 0:
            break
        held.append(data)
        data = bytes(memoryview(data))
    return data


def sample_units(
    n_elements: int, width: int = WIDTH, *, max_length: int | None = None, seed: int = 0
) -> npt.NDArray[np.uint32]:
    """Code units of generated text: mostly ASCII, some Cyrillic, CJK and emoji.

    Parameters
    ----------
    n_elements, width : int
        Number of strings and code points per element.
    max_length : int, optional
        Longest string (default ``width``); the rest is U+0000 padding.
    seed : int
        Seed of the random generator, for repeatable data.

    Returns
    -------
    numpy.ndarray
        New ``uint32`` array of shape ``(n_elements, width)``; each string
        holds ``max_length // 2`` to ``max_length`` code points.

    Raises
    ------
    ValueError
        If ``n_elements`` or ``width`` is negative.

    Examples
    --------
    >>> units = sample_units(3, 4)
    >>> units.shape, units.dtype.name
    ((3, 4), 'uint32')
    >>> bool((units[:, :2] != 0).all())
    True
    """
    rng = np.random.default_rng(seed)
    max_length = width if max_length is None else max_length
    shape = (n_elements, width)
    units = rng.integers(0x20, 0x7F, size=shape, dtype=np.uint32)
    pick = rng.random(shape)
    units = np.where(pick < 0.06, rng.integers(0x410, 0x450, size=shape, dtype=np.uint32), units)
    units = np.where(pick > 0.96, rng.integers(0x4E00, 0x9FA5, size=shape, dtype=np.uint32), units)
    units = np.where(
        pick > 0.99, rng.integers(0x1F600, 0x1F650, size=shape, dtype=np.uint32), units
    )
    lengths = rng.integers(max(max_length // 2, 0), max_length + 1, size=n_elements)
    units[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return units


def sample_chunk(
    nbytes: int,
    endian: str,
    width: int = WIDTH,
    *,
    max_length: int | None = None,
    seed: int = 0,
) -> bytes:
    """Bytes of a chunk of :func:`sample_units` text.

    Parameters
    ----------
    nbytes : int
        Size of the chunk, rounded down to whole elements (at least one).
    endian : {"little", "big"}
        Byte order of the code units.
    width, max_length, seed
        As for :func:`sample_units`.

    Returns
    -------
    bytes
        A new ``bytes`` object.

    Raises
    ------
    ValueError
        If ``width`` is negative.

    Examples
    --------
    >>> len(sample_chunk(200, "big"))  # three 64-byte elements
    192
    """
    units = sample_units(max(nbytes // (4 * width), 1), width, max_length=max_length, seed=seed)
    return units.astype("<u4" if endian == "little" else ">u4").tobytes()


_ASCII_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "his",
    "her",
    "which",
    "or",
    "an",
    "be",
    "this",
    "are",
    "had",
    "not",
    "but",
    "were",
    "all",
    "have",
    "one",
    "they",
    "their",
    "said",
    "has",
    "more",
    "time",
    "would",
    "been",
    "2024",
    "data",
    "chunk",
    "array",
    "value",
    "17",
    "zarr",
    "3.14",
    "store",
    "id_42",
    "key=value",
    "path/to/file",
]
_ACCENTED_WORDS = ["café", "naïve", "résumé", "Zürich", "—", "“quoted”", "São", "Ångström", "½"]
_MIXED_WORDS = [
    "Привет",
    "мир",
    "данные",
    "你好",
    "世界",
    "数据",
    "東京",
    "こんにちは",
    "한국어",
    "Καλημέρα",
    "مرحبا",
    "שלום",
    "🎉",
    "😀",
    "🚀",
    "👍🏽",
    "data",
    "ok",
    "42",
    "x",
]


def make_text(
    kind: str, size_bytes: int, width: int = WIDTH, seed: int = 0
) -> npt.NDArray[np.str_]:
    """A native-order ``U{width}`` array of about ``size_bytes`` bytes of words.

    Each string is whole words filling 50% to 100% of the width.  A pool of
    4096 strings is generated and tiled.

    Parameters
    ----------
    kind : {"ascii", "mixed"}
        ``"ascii"``: English-like words, 1 word in 20 with a non-ASCII
        character; ``"mixed"``: Cyrillic, CJK, Japanese, Korean, Greek,
        Arabic, Hebrew, emoji and some ASCII.
    size_bytes : int
        Size of the array, rounded down to whole elements (at least one).
    width : int
        Code points per element.
    seed : int
        Seed of the random generator.

    Returns
    -------
    numpy.ndarray
        A new one-dimensional ``U{width}`` array.

    Raises
    ------
    ValueError
        For a ``kind`` that is neither ``"ascii"`` nor ``"mixed"``; the
        message names it.

    Examples
    --------
    >>> text = make_text("ascii", 640)
    >>> text.dtype.str[1:], text.shape
    ('U16', (10,))
    >>> make_text("greek", 640)
    Traceback (most recent call last):
    ValueError: kind must be 'ascii' or 'mixed', got 'greek'
    """
    rng = np.random.default_rng(seed)
    if kind == "ascii":
        vocabulary = _ASCII_WORDS * 19 + _ACCENTED_WORDS * 2
    elif kind == "mixed":
        vocabulary = _MIXED_WORDS
    else:
        raise ValueError(f"kind must be 'ascii' or 'mixed', got {kind!r}")
    pool: list[str] = []
    for _ in range(4096):
        target = int(rng.integers(width // 2, width + 1))
        text = ""
        for _ in range(64):
            word = vocabulary[int(rng.integers(len(vocabulary)))]
            candidate = f"{text} {word}" if text else word
            if len(candidate) > target:
                break
            text = candidate
        pool.append(text)
    count = max(size_bytes // (4 * width), 1)
    return np.resize(np.array(pool, dtype=f"=U{width}"), count)


def store_strings(count: int, width: int = WIDTH, seed: int = 0) -> npt.NDArray[np.str_]:
    """The strings of the whole-store benchmark: mostly ASCII letters, some accented, some CJK.

    Parameters
    ----------
    count : int
        Number of strings.
    width : int
        Code points per element; each string holds 0 to ``width`` of them.
    seed : int
        Seed of the random generator.

    Returns
    -------
    numpy.ndarray
        A new little-endian ``U{width}`` array of shape ``(count,)``.

    Raises
    ------
    ValueError
        If ``count`` or ``width`` is negative (NumPy cannot make the array).

    Examples
    --------
    >>> store_strings(5).dtype.str
    '<U16'
    """
    rng = np.random.default_rng(seed)
    units = rng.integers(0x61, 0x7B, size=(count, width), dtype=np.uint32)
    accented = rng.random((count, width)) < 0.05
    units[accented] = rng.integers(0xE0, 0x100, size=int(accented.sum()), dtype=np.uint32)
    cjk = rng.random(count) < 0.1
    units[cjk] = rng.integers(0x4E00, 0x9FFF, size=(int(cjk.sum()), width), dtype=np.uint32)
    lengths = rng.integers(0, width + 1, size=count)
    units[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return units.astype("<u4", copy=False).view(f"<U{width}").reshape(count)


class Case(NamedTuple):
    """One kernel row: the kernel's call, the NumPy way of doing the same job, and its floor.

    The floor is the least memory traffic the job needs, done by NumPy on the
    same bytes: the kernel's target is a ratio to it.  For a kernel that reads
    its input and writes as many bytes elsewhere, that is ``numpy.copyto`` of
    ``nbytes`` (``floor`` None); a kernel that only reads is held to a read of
    the same bytes, one that rewrites in place to an in-place rewrite, and the
    repads to the reads and writes of their two widths.
    """

    name: str
    nbytes: int  # bytes counted: the chunk read (repad: written)
    kernel: Callable[[], object]
    numpy_way: Callable[[], object]
    prepare: Callable[[], object] | None  # untimed, before each call: restores an in-place buffer
    floor: Callable[[], object] | None = None  # None: numpy.copyto of nbytes
    floor_name: str = "memcpy"  # what the floor does, as the report names it


def kernel_cases(nbytes: int) -> list[Case]:
    """Every kernel row of ``fixedutf32 bench`` on about ``nbytes`` of :func:`sample_chunk` text.

    Parameters
    ----------
    nbytes : int
        Chunk size, at least one 64-byte element; rounded down to whole
        elements.

    Returns
    -------
    list of Case
        ``name``, ``nbytes`` (bytes counted), ``kernel`` and ``numpy_way``
        (calls without arguments, over buffers made here and kept alive by
        the calls), ``prepare`` (None, or an untimed call to make before
        each call of the kernel or NumPy way: the in-place rows restore their
        input), and ``floor`` with ``floor_name`` (see :class:`Case`).  The
        read floors are picked by timing a few candidates here.

    Raises
    ------
    MemoryError
        If the chunks (about ten times ``nbytes`` in all) do not fit.

    Examples
    --------
    >>> cases = kernel_cases(4096)
    >>> [case.name for case in cases][:3]
    ['validate', 'decode native (no copy)', 'decode swap -> new']
    >>> cases[0].kernel() is None and cases[0].numpy_way()
    True
    """
    little = _on_a_cache_line(sample_chunk(nbytes, NATIVE))
    foreign = (
        np.frombuffer(little, f"=U{WIDTH}")
        .astype(f"{'>' if FOREIGN == 'big' else '<'}U{WIDTH}")
        .tobytes()
    )
    foreign = _on_a_cache_line(foreign)
    native_array = np.frombuffer(little, f"=U{WIDTH}")
    pristine = np.frombuffer(foreign, np.uint8)
    in_place = pristine.copy()
    narrow = np.frombuffer(sample_chunk(nbytes // 2, NATIVE, 8, seed=1), "=U8")
    narrow_bytes = _on_a_cache_line(narrow.tobytes())
    # Repad rows count output bytes: narrowing to `nbytes` reads twice that.
    fits = np.frombuffer(
        sample_chunk(2 * nbytes, NATIVE, WIDTH, max_length=8, seed=2), f"=U{WIDTH}"
    )
    fits_bytes = _on_a_cache_line(fits.tobytes())
    foreign_prefix = ">" if FOREIGN == "big" else "<"

    def restore() -> None:
        np.copyto(in_place, pristine)

    def numpy_validate() -> bool:
        units = np.frombuffer(little, np.uint32)
        return bool(((units <= 0x10FFFF) & ((units ^ 0xD800) >= 0x800)).all())

    def numpy_view() -> npt.NDArray[np.str_]:
        # The same job as the no-copy decode: check the units, then view them.
        if not numpy_validate():  # pragma: no cover - the generated text is valid
            raise ValueError("generated text is not valid")
        return np.frombuffer(little, f"=U{WIDTH}")

    size = len(little)
    read_little = read_only_floor(np.frombuffer(little, np.uint8))
    # str_lengths reads the chunk and writes one intp per element.
    lengths = np.empty(size // (4 * WIDTH), np.intp)

    def read_and_lengths() -> None:
        read_little()
        lengths.fill(0)

    # Widening reads the narrow chunk and writes twice its bytes: a copy of
    # the narrow bytes, and as many zeros.
    narrow_source = np.frombuffer(narrow_bytes, np.uint8)
    wide_target = np.empty(2 * narrow_source.size, np.uint8)

    def copy_and_zeros() -> None:
        np.copyto(wide_target[: narrow_source.size], narrow_source)
        wide_target[narrow_source.size :].fill(0)

    # Narrowing reads the wide chunk, twice the bytes it writes: a copy of
    # half of them, and a read of the other half.
    fits_source = np.frombuffer(fits_bytes, np.uint8)
    half = fits_source.size // 2
    narrow_target = np.empty(half, np.uint8)
    read_other_half = read_only_floor(fits_source[half:])

    def copy_and_read() -> None:
        np.copyto(narrow_target, fits_source[:half])
        read_other_half()

    # Each swapping row also runs without validation, against the same NumPy way.
    decode_swap = Case(
        "decode swap -> new",
        size,
        lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN),
        lambda: np.frombuffer(foreign, f"{foreign_prefix}U{WIDTH}").astype(f"=U{WIDTH}"),
        None,
    )
    encode_swap = Case(
        "encode -> swapped",
        size,
        lambda: encode_chunk(native_array, endian=FOREIGN),
        lambda: native_array.astype(f"{foreign_prefix}U{WIDTH}"),
        None,
    )
    return [
        Case(
            "validate",
            size,
            lambda: validate(little, 4 * WIDTH, endian=NATIVE),
            numpy_validate,
            None,
            read_little,
            "read",
        ),
        Case(
            "decode native (no copy)",
            size,
            lambda: decode_chunk(little, 4 * WIDTH, endian=NATIVE),
            numpy_view,
            None,
            read_little,
            "read",
        ),
        decode_swap,
        decode_swap._replace(
            name=f"{decode_swap.name}, validate=False",
            kernel=lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN, validate=False),
        ),
        Case(
            "decode swap in place",
            size,
            lambda: decode_chunk(in_place, 4 * WIDTH, endian=FOREIGN, out=in_place),
            lambda: in_place.view(np.uint32).byteswap(inplace=True),
            restore,
            rewrite_floor(in_place),
            "rewrite in place",
        ),
        encode_swap,
        encode_swap._replace(
            name=f"{encode_swap.name}, validate=False",
            kernel=lambda: encode_chunk(native_array, endian=FOREIGN, validate=False),
        ),
        Case(
            "repad widen U8->U16",
            2 * len(narrow_bytes),
            lambda: repad(narrow_bytes, 32, 64, endian=NATIVE),
            lambda: narrow.astype(f"=U{WIDTH}"),
            None,
            copy_and_zeros,
            "copy half, zero half",
        ),
        Case(
            "repad narrow U16->U8",
            len(fits_bytes) // 2,
            lambda: repad(fits_bytes, 64, 32, endian=NATIVE),
            lambda: fits.astype("=U8"),
            None,
            copy_and_read,
            "copy, read as much",
        ),
        Case(
            "str_lengths",
            size,
            lambda: str_lengths(little, 4 * WIDTH, endian=NATIVE),
            lambda: np.strings.str_len(native_array),
            None,
            read_and_lengths,
            "read, write lengths",
        ),
    ]
