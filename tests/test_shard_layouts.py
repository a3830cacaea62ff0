"""Every reader of this package against shards laid out, byte by byte, in every way the spec allows.

The ``sharding_indexed`` codec lets a writer put a shard's inner chunks in any
order, with unused bytes between and around them, leave some out (an index
entry of ``(2**64 - 1, 2**64 - 1)``: the fill value), and point two entries at
the same bytes; the index of ``(offset, nbytes)`` uint64 pairs (C order) sits
at the start or the end, little or big endian, with or without a crc32c after
it.  zarr-python writes few of these layouts (chunks back to back, in its own
order), so a test that lets zarr write the shards never meets the others: a
reader that refused unused bytes as corruption went unnoticed until a user's
store had them.  Here the test composes the shards and zarr-python only
writes the metadata.  Hypothesis draws all of this together:

- the array: 1-D or 2-D, shapes that leave partial edge shards, edge inner
  chunks and inner chunks wholly past the array's edge, capacity 1..4, the
  dtype's byte order given to zarr, the fill value, the chunk key encoding
  (``default`` or ``v2``, ``/`` or ``.``);
- the inner codecs: an optional ``transpose`` (reversed axes), ``bytes`` of
  either endian, then nothing, zstd (level, checksum), gzip (numcodecs' or the
  standard library's stream), crc32c, or a compressor then crc32c; the index:
  either endian, with or without crc32c, at the start or the end; rarely a
  codec on whole shards (gzip, zstd or crc32c after ``sharding_indexed``);
- each shard: stored or not; each inner chunk present or absent (past the
  array's edge too); a present one may copy an earlier one's content, in
  bytes of its own or sharing that one's bytes, or (raw chunks) start inside
  that one's bytes, so that their byte ranges overlap; the order the stored
  chunks are written in; the unused bytes around them: none (back to back, as
  zarr writes them), one hole, a gap before, between and after every chunk,
  or one hole between two chunks of exactly the bytes the shared chunks save
  (what a writer that deduplicates chunks in place leaves), of a few bytes,
  an inner chunk's raw size or twice it, or 64 KiB and 64 KiB + 1 (where a
  local reader splits its reads), holding zeros, 0xff, random bytes or
  valid-looking decoy chunks; the padding of edge inner chunks (the fill
  value, as zarr writes it, or other strings, which no reader may show);
- the values: strings of every length up to the capacity, non-ASCII, astral
  and U+0000 among them; a basic selection zarr-python takes (ints, slices
  with positive steps) and one with negative steps for ``open_array``.

The expected array is what was composed.  Stock zarr-python must read it
exactly: it is the reference, and if it does not, the builder is wrong.
Then every reader of this package must read it too: the zarr codec pipeline
on a LocalStore and on a MemoryStore holding the same bytes (the whole array
and the selection); ``fixedutf32.open_array`` on both (``read()``, both
selections, ``read_arrow()``); ``fixedutf32.store.check`` on both (``ok``,
the inner chunks present and missing, and ``longest``: the longest string of
the fill value and of the elements of present inner chunks inside the array,
with edge padding and chunks past the edge left out); and
``fixedutf32.store.convert(verify=True)``, read back by stock zarr.  All the
disagreements of one example are reported together.

Layouts this package refuses on purpose are not drawn (shards of shards, a
``transpose`` before ``sharding_indexed``, invalid code points), or, when the
refusal depends on the bytes, may be refused with its documented message but
never misread (REFUSED_ON_PURPOSE: unused bytes in a shard under codecs of its
own).

The number of examples is bounded for CI (200, about 10 s);
``FIXEDUTF32_SHARD_LAYOUT_EXAMPLES=N`` runs N instead.  A failure prints the
layout of each shard and the ``--hypothesis-seed`` to replay it.
"""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import pathlib
import random
import re
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")
numcodecs = pytest.importorskip("numcodecs", reason="the shards' codecs come from numcodecs")

from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from zarr.codecs import (  # noqa: E402
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)
from zarr.core.buffer import cpu  # noqa: E402

import fixedutf32  # noqa: E402
import fixedutf32.zarr as fz  # noqa: E402
from fixedutf32.store import InvalidChunkError, check, convert  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
    # zarr 3.1.6 warns about codecs on whole shards (no partial reads)
    pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed` codec:UserWarning"),
]

EXAMPLES = int(os.environ.get("FIXEDUTF32_SHARD_LAYOUT_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=EXAMPLES or 200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PIPELINE = {"codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"}

EMPTY = 2**64 - 1
# Characters whose UTF-32 units differ in every byte, so that a swapped or shifted unit shows,
# and U+0000 (NumPy drops it at the end of a string: padding, as the readers count it).
ALPHABET = ["a", "Z", "é", "·", "漢", "\uffff", "😀", "\U0010ffff", "\x00"]
FILLS = ["", "é", "😀", "zz", "a😀é"]  # cut to the capacity
INNER = ["none", "zstd", "gzip", "crc32c", "zstd+crc32c", "gzip+crc32c"]
OUTER = ["gzip", "zstd", "crc32c"]
KEY_ENCODINGS = [("default", "/"), ("default", "."), ("v2", "."), ("v2", "/")]
# Unused bytes before, between or after the stored chunks: a count, an inner chunk's raw size
# ("n") or twice it, or the bytes the shard's shared and overlapping chunks save ("saved"): the
# sizes that make a run of chunks look contiguous (its span the sum of their sizes) when it is not.
GAPS: list[int | str] = [0, 1, 4, 13, "n", "2n", "saved"]
# Rarely: around the largest gap a local reader reads through (fixedutf32._source.reader).
BIG_GAPS = [64 << 10, (64 << 10) + 1]
GAP_BYTES = ["zero", "ff", "random", "decoy"]


@contextlib.contextmanager
def quiet():
    """zarr-python warns about fixed_length_utf32 (its spec is unstable) and whole-shard codecs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", zarr.errors.UnstableSpecificationWarning)
        warnings.filterwarnings("ignore", "Combining a `sharding_indexed` codec", UserWarning)
        yield


# ---------------------------------------------------------------------------
# What is drawn


@dataclass(frozen=True)
class Codecs:
    """The array's data type, fill value, key encoding and every codec of its shards."""

    capacity: int
    memory_order: str  # "<" or ">": the dtype given to zarr.create_array
    endian: str  # the inner bytes codec's
    transpose: bool  # a reversing transpose before the inner bytes codec
    compressor: str  # one of INNER: the inner bytes-to-bytes codecs
    level: int
    zstd_checksum: bool
    stdlib_gzip: bool  # gzip streams from the standard library (a header of its own) or numcodecs
    index_endian: str
    index_crc: bool
    index_location: str
    outer: str  # "none" or one of OUTER: a bytes-to-bytes codec on whole shards
    key_encoding: tuple[str, str]
    fill: str

    @property
    def stored_dtype(self) -> np.dtype:
        return np.dtype(f"{'<' if self.endian == 'little' else '>'}U{self.capacity}")

    def inner_codecs(self, ndim: int) -> list[Any]:
        codecs: list[Any] = []
        if self.transpose:
            codecs.append(TransposeCodec(order=tuple(reversed(range(ndim)))))
        codecs.append(BytesCodec(endian=self.endian))
        for name in self.compressor.split("+"):
            if name == "zstd":
                codecs.append(ZstdCodec(level=self.level, checksum=self.zstd_checksum))
            elif name == "gzip":
                codecs.append(GzipCodec(level=self.level))
            elif name == "crc32c":
                codecs.append(Crc32cCodec())
        return codecs

    def create(self, path: pathlib.Path, shape, shard_shape, inner_shape) -> Any:
        """The array's metadata, written by zarr-python (no chunks)."""
        index_codecs: list[Any] = [BytesCodec(endian=self.index_endian)]
        if self.index_crc:
            index_codecs.append(Crc32cCodec())
        compressors = {
            "none": None,
            "gzip": [GzipCodec(level=self.level)],
            "zstd": [ZstdCodec(level=self.level)],
            "crc32c": [Crc32cCodec()],
        }[self.outer]
        name, separator = self.key_encoding
        with quiet():
            return zarr.create_array(
                str(path),
                shape=shape,
                dtype=f"{self.memory_order}U{self.capacity}",
                chunks=shard_shape,
                shards=None,
                serializer=ShardingCodec(
                    chunk_shape=inner_shape,
                    codecs=self.inner_codecs(len(shape)),
                    index_codecs=index_codecs,
                    index_location=self.index_location,
                ),
                filters=None,
                compressors=compressors,
                fill_value=self.fill,
                chunk_key_encoding={"name": name, "separator": separator},
            )

    def raw(self, content: np.ndarray) -> bytes:
        """An inner chunk as the inner bytes codec writes it (after the transpose, if any)."""
        return content.astype(self.stored_dtype).tobytes(order="F" if self.transpose else "C")

    def from_raw(self, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        """:meth:`raw` undone: the inner chunk that ``data`` is."""
        values = np.frombuffer(data, self.stored_dtype).reshape(
            shape, order="F" if self.transpose else "C"
        )
        return values.astype(f"<U{self.capacity}")

    def encode_chunk(self, content: np.ndarray) -> bytes:
        data = self.raw(content)
        for name in self.compressor.split("+"):
            if name == "zstd":
                data = numcodecs.Zstd(level=self.level, checksum=self.zstd_checksum).encode(data)
            elif name == "gzip" and self.stdlib_gzip:
                data = gzip.compress(data, compresslevel=self.level, mtime=0)
            elif name == "gzip":
                data = numcodecs.GZip(level=self.level).encode(data)
            elif name == "crc32c":
                data = numcodecs.CRC32C(location="end").encode(data)
            data = bytes(data)
        return data

    def encode_index(self, pairs: np.ndarray) -> bytes:
        """The index as ``index_codecs`` write it: uint64 pairs, then the crc32c if any."""
        index = pairs.astype("<u8" if self.index_endian == "little" else ">u8")
        if self.index_crc:
            return bytes(numcodecs.CRC32C(location="end").encode(index))
        return index.tobytes()

    def encode_shard(self, data: bytes) -> bytes:
        """A whole composed shard under the codecs after ``sharding_indexed``."""
        if self.outer == "gzip":
            return bytes(numcodecs.GZip(level=self.level).encode(data))
        if self.outer == "zstd":
            return bytes(numcodecs.Zstd(level=self.level).encode(data))
        if self.outer == "crc32c":
            return bytes(numcodecs.CRC32C(location="end").encode(data))
        return data


@dataclass
class Case:
    """One drawn array: its codecs, grid, composed shard files and what they hold."""

    codecs: Codecs
    shape: tuple[int, ...]
    shard_shape: tuple[int, ...]
    inner_shape: tuple[int, ...]
    selection: tuple[Any, ...]  # zarr-python's basic selection (steps > 0)
    any_selection: tuple[Any, ...]  # open_array's (any step)
    # shard grid index -> (the shard's bytes, a description of its layout)
    shards: dict[tuple[int, ...], tuple[bytes, str]] = field(default_factory=dict)
    expected: np.ndarray = field(default_factory=lambda: np.empty(0))
    present: int = 0  # inner chunks stored inside the array's chunk grid
    chunks: int = 0  # inner chunks in the array's chunk grid
    longest: int = 0  # what check reports: the fill's length, or a stored element's
    unused: int = 0  # unused bytes in all the shards
    overlapping: bool = False  # two index entries of a shard share bytes

    def __repr__(self) -> str:
        layouts = "\n  ".join(f"shard {k}: {d}" for k, (_, d) in sorted(self.shards.items()))
        return (
            f"Case(shape={self.shape}, shards={self.shard_shape}, inner={self.inner_shape}, "
            f"selection={self.selection}, any_selection={self.any_selection}, "
            f"{self.codecs})\n  {layouts or 'no shard stored'}"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # hypothesis prints a dataclass field by field (the shards' bytes: up to megabytes)
        printer.text(repr(self))


def random_text(rng: random.Random, capacity: int) -> str:
    """Empty, full or in between, of ALPHABET."""
    length = rng.choice([0, capacity, *range(capacity + 1)])
    return "".join(rng.choice(ALPHABET) for _ in range(length))


def random_chunk(rng: random.Random, shape: tuple[int, ...], capacity: int) -> np.ndarray:
    values = [random_text(rng, capacity) for _ in range(math.prod(shape))]
    return np.array(values, dtype=f"<U{capacity}").reshape(shape)


def unused(kind: str, size: int, rng: random.Random, decoy: Callable[[], bytes]) -> bytes:
    """``size`` unused bytes of a shard, of ``kind`` (GAP_BYTES)."""
    if kind == "zero":
        return bytes(size)
    if kind == "ff":
        return b"\xff" * size
    if kind == "random":
        return rng.randbytes(size)
    piece = decoy()
    return (piece * (size // len(piece) + 1))[:size]


def gap_size(gap: int | str, raw_nbytes: int, saved: int) -> int:
    """A GAPS entry in bytes."""
    if isinstance(gap, int):
        return gap
    return {"n": raw_nbytes, "2n": 2 * raw_nbytes, "saved": saved}[gap]


axis_items = st.sampled_from([None, 0, 1, 2, 3, 5, 7, 9, 12, 20, 30])


@st.composite
def selections(draw, shape: tuple[int, ...], steps: list[int | None]) -> tuple[Any, ...]:
    """A basic selection: an int or a slice per axis."""
    items: list[Any] = []
    for n in shape:
        if draw(st.integers(0, 3)) == 0:
            items.append(draw(st.integers(-n, n - 1)))
        else:
            start, stop = draw(axis_items), draw(axis_items)
            items.append(slice(start, stop, draw(st.sampled_from(steps))))
    return tuple(items)


@st.composite
def codecs_drawn(draw) -> Codecs:
    capacity = draw(st.integers(1, 4))
    return Codecs(
        capacity=capacity,
        memory_order=draw(st.sampled_from("<>")),
        endian=draw(st.sampled_from(["little", "big"])),
        transpose=draw(st.booleans()),
        # raw inner chunks half the time: the local reader's most special-cased path
        compressor="none" if draw(st.booleans()) else draw(st.sampled_from(INNER)),
        level=draw(st.integers(1, 5)),
        zstd_checksum=draw(st.booleans()),
        stdlib_gzip=draw(st.booleans()),
        index_endian=draw(st.sampled_from(["little", "big"])),
        index_crc=draw(st.booleans()),
        index_location=draw(st.sampled_from(["end", "start"])),
        # rare: zarr-python reads such shards whole, and the pipeline leaves them to zarr
        outer=draw(st.sampled_from(OUTER)) if draw(st.integers(0, 5)) == 5 else "none",
        key_encoding=draw(st.sampled_from(KEY_ENCODINGS)),
        fill=draw(st.sampled_from(FILLS))[:capacity],
    )


@st.composite
def cases(draw) -> Case:
    ndim = draw(st.integers(1, 2))
    inner_shape = tuple(draw(st.integers(1, 4 if ndim == 1 else 3)) for _ in range(ndim))
    per = tuple(draw(st.integers(1, 4 if ndim == 1 else 3)) for _ in range(ndim))
    shard_shape = tuple(i * p for i, p in zip(inner_shape, per))
    shape = tuple(
        draw(st.integers(1, 2 * s + (i if ndim == 1 else 0)))
        for s, i in zip(shard_shape, inner_shape)
    )
    codecs = draw(codecs_drawn())
    case = Case(
        codecs,
        shape,
        shard_shape,
        inner_shape,
        draw(selections(shape, [None, 1, 2, 3])),
        draw(selections(shape, [None, 1, 3, -1, -2])),
    )
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    junk_padding = draw(st.booleans())  # edge padding other than the fill value
    capacity, fill = codecs.capacity, codecs.fill
    expected = np.full(shape, fill, dtype=f"<U{capacity}")
    longest = len(fill)
    count = math.prod(per)
    index_nbytes = 16 * count + (4 if codecs.index_crc else 0)
    raw_nbytes = math.prod(inner_shape) * 4 * capacity
    units = raw_nbytes // 4
    grid = tuple(-(-n // s) for n, s in zip(shape, shard_shape))
    case.chunks = math.prod(-(-n // c) for n, c in zip(shape, inner_shape))

    def decoy() -> bytes:
        return codecs.raw(random_chunk(rng, inner_shape, capacity))

    for shard in np.ndindex(*grid):
        if draw(st.integers(0, 5)) == 0:
            continue  # the shard is not stored: all fill
        contents: dict[int, np.ndarray] = {}
        # inner chunk (flat, C order) -> (stored blob, where in it the chunk starts, nbytes)
        entries: dict[int, tuple[int, int, int]] = {}
        blobs: list[bytes] = []
        extended: set[int] = set()  # blobs that another chunk starts inside
        notes: list[str] = []
        for local, position in enumerate(np.ndindex(*per)):
            if draw(st.integers(0, 3)) == 0:
                continue  # absent
            chunk = [s * p + q for s, p, q in zip(shard, per, position)]
            start = [c * n for c, n in zip(chunk, inner_shape)]
            inside = [max(0, min(n, a + c) - a) for n, a, c in zip(shape, start, inner_shape)]
            owners = sorted(k for k, e in entries.items() if e[1] == 0)
            how = "new"
            if owners and draw(st.booleans()):
                source = draw(st.sampled_from(owners))
                how = draw(st.sampled_from(["copy", "share", "overlap"]))
                blob = entries[source][0]
                if how == "overlap" and (
                    codecs.compressor != "none" or units < 2 or blob in extended
                ):
                    how = "share"
            if how == "new":
                content = random_chunk(rng, inner_shape, capacity)
                if not junk_padding:  # as zarr writes an edge chunk: padded with the fill
                    padded = np.full(inner_shape, fill, dtype=content.dtype)
                    region = tuple(slice(0, k) for k in inside)
                    padded[region] = content[region]
                    content = padded
            elif how == "copy":
                content = contents[source].copy()
                notes.append(f"{local} a copy of {source}")
            elif how == "share":
                content = contents[source].copy()
                entries[local] = entries[source]
                notes.append(f"{local} shares {source}'s bytes")
                case.overlapping = True
            else:  # starts `shift` bytes into the source's (raw) bytes, more valid units after
                shift = 4 * draw(st.integers(1, units - 1))
                blobs[blob] += decoy()[:shift]
                extended.add(blob)
                entries[local] = (blob, shift, raw_nbytes)
                content = codecs.from_raw(blobs[blob][shift : shift + raw_nbytes], inner_shape)
                notes.append(f"{local} starts {shift} bytes into {source}'s bytes")
                case.overlapping = True
            contents[local] = content
            if local not in entries:
                blobs.append(codecs.encode_chunk(content))
                entries[local] = (len(blobs) - 1, 0, len(blobs[-1]))
            if all(inside):
                region = tuple(slice(0, k) for k in inside)
                target = tuple(slice(a, a + k) for a, k in zip(start, inside))
                expected[target] = content[region]
                case.present += 1
                longest = max(longest, int(np.char.str_len(expected[target]).max()))
            else:
                notes.append(f"{local} past the edge")
        order = draw(st.permutations(range(len(blobs))))
        saved = sum(e[2] for e in entries.values()) - sum(map(len, blobs))
        # Back to back as zarr writes them; one hole (a writer that moved a chunk); one hole of
        # the bytes that shared chunks save between two chunks (a writer that found a chunk
        # equal to another and pointed it there in place); or a gap of its own before, between
        # and after every stored chunk.
        style = draw(st.sampled_from(["packed", "one", "dedup", "every"]))
        hole = -1
        if style == "one":
            hole = draw(st.integers(0, len(blobs)))
        elif style == "dedup" and len(blobs) > 1:
            hole = draw(st.integers(1, len(blobs) - 1))
        sizes = []
        for slot in range(len(blobs) + 1):
            big = draw(st.integers(0, 15)) == 15
            gap = draw(st.sampled_from(BIG_GAPS if big else GAPS))
            if style == "dedup":
                gap = "saved"
            drawn = style == "every" or slot == hole
            sizes.append(gap_size(gap, raw_nbytes, saved) if drawn else 0)
        gap_kind = draw(st.sampled_from(GAP_BYTES))
        # Lay the stored chunks out in the drawn order, the unused bytes around them.
        at_start = codecs.index_location == "start"
        body = bytearray()
        base = index_nbytes if at_start else 0
        where: dict[int, int] = {}
        for slot, blob in enumerate(order):
            body += unused(gap_kind, sizes[slot], rng, decoy)
            where[blob] = base + len(body)
            body += blobs[blob]
        body += unused(gap_kind, sizes[-1], rng, decoy)
        pairs = np.full((count, 2), EMPTY, dtype=np.uint64)
        for local, (blob, shift, nbytes) in entries.items():
            pairs[local] = (where[blob] + shift, nbytes)
        index = codecs.encode_index(pairs)
        assert len(index) == index_nbytes
        data = index + bytes(body) if at_start else bytes(body) + index
        case.unused += sum(sizes)
        layout = (
            f"{len(data)} bytes, index entries {pairs.tolist()}, blobs written in order "
            f"{list(order)}, {gap_kind} gaps {sizes}"
        )
        if notes:
            layout += "; " + ", ".join(notes)
        case.shards[tuple(shard)] = (codecs.encode_shard(data), layout)
    case.expected = expected
    case.longest = longest
    return case


# ---------------------------------------------------------------------------
# Refused on purpose: (why, the cases, the readers, what their refusal says).  Such a reader may
# refuse the case with that message (CorruptChunkError, or check's problem, or convert's
# InvalidChunkError), and what follows from the refusal (check's counts); never a wrong value.
REFUSED_ON_PURPOSE: list[tuple[str, Callable[[Case], bool], tuple[str, ...], str]] = [
    (
        # docs/store.md: a shard under codecs of its own is inflated up to the size of its
        # chunks and index and no further (no decompression bomb), so unused bytes are refused.
        "unused bytes in a shard under codecs of its own",
        lambda case: case.codecs.outer != "none" and case.unused > 0,
        ("open_array(", "check(", "convert"),
        r"raised (CorruptChunkError|InvalidChunkError): |not ok: ",
    ),
]
REFUSAL_MESSAGES = (
    r"is corrupt: (the gzip stream inflates past \d+ bytes|the zstd frame declares \d+ bytes|"
    r"the file holds \d+ bytes|it holds \d+ bytes); a chunk here holds at most \d+"
)


# ---------------------------------------------------------------------------
# Writing and reading


def write(case: Case, path: pathlib.Path) -> dict[str, bytes]:
    """The array's metadata (zarr-python) and its composed shards; every key and its bytes."""
    array = case.codecs.create(path, case.shape, case.shard_shape, case.inner_shape)
    for shard, (data, _) in case.shards.items():
        key = array.metadata.encode_chunk_key(shard)
        file = path / key
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    return {f.relative_to(path).as_posix(): f.read_bytes() for f in path.rglob("*") if f.is_file()}


def memory_store(files: dict[str, bytes]) -> Any:
    return zarr.storage.MemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in files.items()})


def differs(got: Any, want: np.ndarray) -> str | None:
    """Why ``got`` is not exactly ``want`` (None when it is)."""
    got = np.asarray(got)
    if got.dtype.kind != "U":
        return f"dtype {got.dtype}, not a U dtype"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if not np.array_equal(got, want):
        wrong = np.argwhere(got != want)
        first = tuple(int(i) for i in wrong[0])
        return (
            f"{len(wrong)} elements differ, first at {first}: {got[first]!r}, "
            f"expected {want[first]!r}"
        )
    return None


class Findings:
    """What each reader got wrong in one example, all of them reported at once."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []  # (reader, what it got wrong)

    @contextlib.contextmanager
    def reader(self, name: str):
        try:
            with quiet():
                yield
        except Exception as exc:  # noqa: BLE001 - a reader that raises on a valid shard: reported
            self.found.append((name, f"raised {type(exc).__name__}: {exc}"))

    def compare(self, name: str, got: Any, want: np.ndarray) -> None:
        why = differs(got, want)
        if why is not None:
            self.found.append((name, why))

    def expect(self, name: str, condition: bool, what: str) -> None:
        if not condition:
            self.found.append((name, what))

    def unknown(self, case: Case) -> list[str]:
        """The findings that REFUSED_ON_PURPOSE does not explain."""
        refused = {
            name
            for name, what in self.found
            for _, meets, readers, kind in REFUSED_ON_PURPOSE
            if meets(case)
            and name.startswith(readers)
            and re.match(kind, what)
            and re.search(REFUSAL_MESSAGES, what)
        }
        left = []
        for name, what in self.found:
            if name in refused:
                event(f"refused on purpose: {name.split('(')[0]}")
            else:
                left.append(f"{name}: {what}")
        return left


def read_with_zarr(
    findings: Findings, name: str, store: Any, case: Case, ours: bool, dtype: Any = None
) -> Any:
    """Read with zarr-python (``ours``: through the package's pipeline); the result's dtype.
    With ``dtype`` (stock zarr's), the result must be of it, byte order included."""
    want, selection = case.expected, case.selection
    got = None
    with findings.reader(name):
        array = zarr.open_array(store, mode="r")
        pipeline = array.async_array.codec_pipeline
        findings.expect(
            name, isinstance(pipeline, fz.CodecPipeline) == ours, f"read by {type(pipeline)}"
        )
        got = array[...]
        findings.compare(f"{name} [...]", got, want)
        if dtype is not None:
            findings.expect(name, got.dtype == dtype, f"dtype {got.dtype}, stock zarr's {dtype}")
    with findings.reader(f"{name} {selection}"):
        array = zarr.open_array(store, mode="r")
        findings.compare(f"{name} {selection}", array[selection], want[selection])
    return None if got is None else got.dtype


def read_with_open_array(findings: Findings, name: str, store: Any, case: Case) -> None:
    want = case.expected
    for selection in (..., case.any_selection):
        what = f"{name} read({selection})"
        with findings.reader(what), fixedutf32.open_array(store) as array:
            findings.compare(what, array.read(selection), want[selection])
        what = f"{name} read_arrow({selection})"
        with findings.reader(what), fixedutf32.open_array(store) as array:
            got = array.read_arrow(selection).to_pylist()
            wanted = np.asarray(want[selection]).reshape(-1).tolist()
            if got != wanted:
                wrong = [i for i, (g, w) in enumerate(zip(got, wanted)) if g != w]
                findings.found.append(
                    (
                        what,
                        f"{got[wrong[0]]!r} at flat {wrong[0]}, expected {wanted[wrong[0]]!r}"
                        if len(got) == len(wanted)
                        else f"{len(got)} strings, expected {len(wanted)}",
                    )
                )


def check_store(findings: Findings, name: str, store: Any, case: Case) -> None:
    with findings.reader(name):
        report = check(store)
        findings.expect(name, report.ok, f"not ok: {[str(p) for p in report.problems]}")
        (array,) = report.arrays
        counts = (array.chunks, array.chunks_present, array.chunks_missing)
        wanted = (case.chunks, case.present, case.chunks - case.present)
        findings.expect(name, counts == wanted, f"chunks in grid, present, missing {counts}")
        findings.expect(
            name, array.longest == case.longest, f"longest {array.longest}, expected {case.longest}"
        )


def convert_store(findings: Findings, path: pathlib.Path, out: pathlib.Path, case: Case) -> None:
    with findings.reader("convert"):
        report = convert(str(path), str(out), verify=True)
        findings.expect("convert", report.verified, "not verified")
        findings.expect("convert", not report.skipped, f"skipped {report.skipped}")
        findings.compare(
            "convert, read back by zarr", zarr.open_array(str(out), mode="r")[...], case.expected
        )


@SETTINGS
@given(case=cases())
def test_every_reader_reads_every_shard_layout(case):
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "a"
        files = write(case, path)
        findings = Findings()
        # The reference: stock zarr-python.  A disagreement here is the builder's mistake first.
        dtype = read_with_zarr(findings, "stock zarr", str(path), case, ours=False)
        assert not findings.found, "stock zarr-python does not read the composed shards:\n" + (
            "\n".join(f"{name}: {what}" for name, what in findings.found)
        )
        with zarr.config.set(PIPELINE):
            read_with_zarr(findings, "pipeline LocalStore", str(path), case, True, dtype)
            read_with_zarr(findings, "pipeline MemoryStore", memory_store(files), case, True, dtype)
        read_with_open_array(findings, "open_array(path)", str(path), case)
        read_with_open_array(findings, "open_array(MemoryStore)", memory_store(files), case)
        check_store(findings, "check(path)", str(path), case)
        check_store(findings, "check(MemoryStore)", memory_store(files), case)
        convert_store(findings, path, pathlib.Path(tmp) / "out", case)
        unknown = findings.unknown(case)
        assert not unknown, "\n".join(unknown)


# ---------------------------------------------------------------------------
# Two layouts at their smallest: shared bytes beside a gap of their size (once misread as one
# run by open_array), and the documented refusal of unused bytes under codecs on whole shards.


def write_shard_by_hand(
    path: pathlib.Path, shape: tuple[int, ...], shard: bytes, outer: Any = None
):
    """A ``<U1`` array of one shard of inner chunks of one element: raw, little-endian
    chunks and index (no crc32c) at the end, ``outer`` codecs on the whole shard."""
    with quiet():
        zarr.create_array(
            str(path),
            shape=shape,
            dtype="<U1",
            chunks=shape,
            shards=None,
            serializer=ShardingCodec(
                chunk_shape=(1,),
                codecs=[BytesCodec(endian="little")],
                index_codecs=[BytesCodec(endian="little")],
            ),
            filters=None,
            compressors=outer,
            fill_value="",
        )
    (path / "c").mkdir()
    (path / "c" / "0").write_bytes(shard)


def shared_bytes_and_gap(path: pathlib.Path, gap: bytes) -> list[str]:
    """Chunks 0 and 2 share bytes 0..4 ("a"), bytes 4..8 are unused, chunk 1 ("b") is 8..12:
    three chunks of 4 bytes in a span of 12, not back to back."""
    body = "a".encode("utf-32-le") + gap + "b".encode("utf-32-le")
    index = np.array([[0, 4], [8, 4], [0, 4]], "<u8").tobytes()
    write_shard_by_hand(path, (3,), body + index)
    return ["a", "b", "a"]


def whole_shard_codec_and_unused_byte(path: pathlib.Path, outer: str) -> list[str]:
    """One chunk ("a"), one unused byte after it, the index; gzip or crc32c on the whole shard."""
    shard = "a".encode("utf-32-le") + b"\0" + np.array([0, 4], "<u8").tobytes()
    if outer == "gzip":
        codec, stored = GzipCodec(level=1), numcodecs.GZip(level=1).encode(shard)
    else:
        codec, stored = Crc32cCodec(), numcodecs.CRC32C(location="end").encode(shard)
    write_shard_by_hand(path, (1,), bytes(stored), [codec])
    return ["a"]


KNOWN_LAYOUTS = {
    "shared-bytes-zero-gap": lambda path: shared_bytes_and_gap(path, bytes(4)),
    "shared-bytes-0xff-gap": lambda path: shared_bytes_and_gap(path, b"\xff" * 4),
    "gzip-shard-unused-byte": lambda path: whole_shard_codec_and_unused_byte(path, "gzip"),
    "crc32c-shard-unused-byte": lambda path: whole_shard_codec_and_unused_byte(path, "crc32c"),
}


@pytest.mark.parametrize("layout", sorted(KNOWN_LAYOUTS))
def test_the_known_findings_layouts_are_read_by_zarr_and_the_pipeline(tmp_path, layout):
    # The layouts below are valid: stock zarr-python reads them, and so does the pipeline.
    path = tmp_path / "a"
    expected = KNOWN_LAYOUTS[layout](path)
    with quiet():
        assert zarr.open_array(str(path), mode="r")[...].tolist() == expected
        with zarr.config.set(PIPELINE):
            assert zarr.open_array(str(path), mode="r")[...].tolist() == expected


@pytest.mark.parametrize("read", ["read", "read_arrow"])
@pytest.mark.parametrize("layout", ["shared-bytes-zero-gap", "shared-bytes-0xff-gap"])
def test_shared_bytes_beside_a_gap_of_their_size_are_not_one_run(tmp_path, layout, read):
    # Two chunks share bytes and unused bytes of the same size lie in the run: their sizes add
    # up to the run's span, yet they are not back to back (once read as one run, wrongly).
    path = tmp_path / "a"
    expected = KNOWN_LAYOUTS[layout](path)
    with fixedutf32.open_array(str(path)) as array:
        got = array.read().tolist() if read == "read" else array.read_arrow().to_pylist()
    assert got == expected


@pytest.mark.parametrize("reader", ["open_array", "check", "convert"])
@pytest.mark.parametrize("layout", ["gzip-shard-unused-byte", "crc32c-shard-unused-byte"])
def test_whole_shard_codecs_with_unused_bytes_are_read_or_refused_as_documented(
    tmp_path, layout, reader
):
    # docs/store.md: a shard under codecs of its own is inflated only up to its chunks and index,
    # so unused bytes in it are refused (CorruptChunkError naming the key), never misread.
    path = tmp_path / "a"
    expected = KNOWN_LAYOUTS[layout](path)
    refusal = "chunk c/0 is corrupt: .*; a chunk here holds at most"
    if reader == "open_array":
        with fixedutf32.open_array(str(path)) as array:
            try:
                got = array.read().tolist()
            except fixedutf32.CorruptChunkError as exc:
                assert re.search(refusal, str(exc)), exc
            else:
                assert got == expected
    elif reader == "check":
        report = check(str(path))
        problems = [str(p) for p in report.problems]
        assert report.ok or (len(problems) == 1 and re.search(refusal, problems[0])), problems
    else:
        try:
            report = convert(str(path), str(tmp_path / "out"), verify=True)
        except InvalidChunkError as exc:
            assert re.search(refusal, str(exc)), exc
        else:
            assert report.verified
            with quiet():
                assert zarr.open_array(str(tmp_path / "out"), mode="r")[...].tolist() == expected
