"""Every write and read path of fixedutf32.zarr against stock zarr-python, drawn at once.

A test that varies one thing at a time misses the bugs that live between
two things: whole-shard writes once ignored the byte order of the value
(issue 24, finding 2) while 44 shard-write tests passed, because none drew
the value's byte order apart from the stored one.  Here hypothesis draws
everything together:

- the value: a NumPy ``U`` array of either byte order and width 1..6, of
  0..3 dimensions, C or F order, or the same as a list or a ``str``;
- the array: Zarr V2 or V3, the array's own (in-memory) byte order and the
  stored one (V3: the ``bytes`` codec's ``endian``; V2: ``<U``/``>U``),
  capacity, shape, chunks, shards (V3), a reversing ``transpose`` (V3) or
  F order (V2), no compressor or zstd, gzip, blosc, the fill value,
  ``write_empty_chunks``, a ``MemoryStore`` or a ``LocalStore``;
- the selection: the whole array (``a[...] = v`` or ``create_array(data=v)``),
  basic slices with steps, integers, ``oindex``, ``vindex``, ``a[[...]]``
  and single elements.

A write goes to two stores, one with ``fixedutf32.zarr.enabled()`` and one
with stock zarr; stock zarr reads both back and they must equal each other
and what NumPy gives for the same assignment (strings cut to the capacity,
as zarr cuts them with or without the integration: docs/zarr.md, "Writing
without truncation").  A read of an array stock zarr wrote must give what
stock zarr reads.  A lone surrogate in a value is refused by the
integration and leaves the chunks it would have gone to as they were.

The number of examples is bounded for CI (200 per test);
``FIXEDUTF32_DIFFERENTIAL_EXAMPLES=N`` runs N per test instead (a long local
run).  A failure prints the falsifying example and the ``--hypothesis-seed``
to replay it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import pathlib
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")
numcodecs = pytest.importorskip("numcodecs", reason="zarr V2 compressors come from numcodecs")

from hypothesis import HealthCheck, assume, event, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from zarr.codecs import BloscCodec, BytesCodec, GzipCodec, TransposeCodec, ZstdCodec  # noqa: E402
from zarr.storage import LocalStore, MemoryStore  # noqa: E402

import fixedutf32.zarr as fz  # noqa: E402
from fixedutf32 import InvalidCodePointError  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
    # zarr 3.1.6 warns about sharding followed by compressors in some layouts
    pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed` codec:UserWarning"),
]

EXAMPLES = int(os.environ.get("FIXEDUTF32_DIFFERENTIAL_EXAMPLES", "0"))
SETTINGS = settings(
    max_examples=EXAMPLES or 200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Characters whose UTF-32 units differ in every byte position, so that a
# swapped or misread unit shows: ASCII, Latin-1, U+0100, U+1000, the BMP's
# last, astral planes, the last code point, NUL (not at the end: NumPy drops
# trailing NULs).
CHARS = ["a", "b", "Z", "\x00", "é", "·", "\u0100", "\u1000", "漢", "\uffff", "😀", "\U0010ffff"]
text_chars = st.one_of(st.sampled_from(CHARS), st.characters(exclude_categories=("Cs",)))
FILLS = ["", "·", "a", "\u0100", "😀x"]
COMPRESSORS = ["none", "zstd", "gzip", "blosc"]


def strings(width: int) -> st.SearchStrategy[str]:
    return st.text(text_chars, max_size=width)


# ---------------------------------------------------------------------------
# What is drawn


@dataclass(frozen=True)
class ArraySpec:
    """An array to create, in zarr.create_array's terms."""

    zarr_format: int
    capacity: int
    memory_order: str  # "<" or ">": the array's in-memory dtype (V2: also stored)
    endian: str  # V3: the bytes codec's endian
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    shards: tuple[int, ...] | None = None
    compressor: str = "none"
    transpose: bool = False  # V3: a reversing transpose codec; V2: order="F"
    fill: str = ""
    write_empty_chunks: bool = False
    store: str = "memory"

    def kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = dict(
            shape=self.shape,
            chunks=self.chunks,
            dtype=f"{self.memory_order}U{self.capacity}",
            fill_value=self.fill,
            zarr_format=self.zarr_format,
            config={"write_empty_chunks": self.write_empty_chunks},
        )
        if self.zarr_format == 3:
            kwargs["serializer"] = BytesCodec(endian=self.endian)
            kwargs["shards"] = self.shards
            kwargs["compressors"] = {
                "none": None,
                "zstd": [ZstdCodec()],
                "gzip": [GzipCodec(level=1)],
                "blosc": [BloscCodec()],
            }[self.compressor]
            if self.transpose:
                kwargs["filters"] = [TransposeCodec(order=tuple(reversed(range(len(self.shape)))))]
        else:
            kwargs["compressors"] = {
                "none": None,
                "zstd": numcodecs.Zstd(),
                "gzip": numcodecs.GZip(level=1),
                "blosc": numcodecs.Blosc(),
            }[self.compressor]
            kwargs["order"] = "F" if self.transpose else "C"
        return kwargs

    @property
    def native(self) -> np.dtype:
        return np.dtype(f"=U{self.capacity}")


@dataclass(frozen=True)
class Selection:
    """A selection: how it is applied to a zarr array, and the same for NumPy."""

    kind: str  # whole, basic, oindex, vindex, list, data
    index: Any  # what goes between the brackets of a, a.oindex or a.vindex
    np_index: Any = field(compare=False)  # the same elements of a NumPy array

    def target(self, arr: Any) -> Any:
        return {"oindex": arr.oindex, "vindex": arr.vindex}.get(self.kind, arr)

    def __repr__(self) -> str:
        return f"Selection({self.kind!r}, {self.index!r})"


@dataclass(frozen=True)
class WriteCase:
    spec: ArraySpec
    selection: Selection
    value: Any  # ndarray, list or str
    background: np.ndarray | None = None  # written whole before the value


@dataclass(frozen=True)
class ReadCase:
    spec: ArraySpec
    data: np.ndarray
    region: Any  # what stock zarr writes of ``data``; chunks outside it stay missing
    selection: Selection
    reopen: bool  # read through open_array (else through the handle create_array gave)


@st.composite
def array_specs(draw: Any) -> ArraySpec:
    zarr_format = draw(st.sampled_from([2, 3]))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0 if ndim else 1, 6), min_size=ndim, max_size=ndim)))
    if draw(st.integers(0, 9)) and ndim:  # rarely an empty dimension
        shape = tuple(max(n, 1) for n in shape)
    chunks = tuple(draw(st.integers(1, max(n, 1))) for n in shape)
    shards = None
    if zarr_format == 3 and ndim and draw(st.integers(0, 2)):
        shards = tuple(c * draw(st.integers(1, 3)) for c in chunks)
    memory_order = draw(st.sampled_from("<>"))
    capacity = draw(st.integers(1, 6))
    fill = draw(st.sampled_from([f for f in FILLS if len(f) <= capacity]))
    return ArraySpec(
        zarr_format=zarr_format,
        capacity=capacity,
        memory_order=memory_order,
        endian=draw(st.sampled_from(["little", "big"])) if zarr_format == 3 else "",
        shape=shape,
        chunks=chunks,
        shards=shards,
        compressor=draw(st.sampled_from(COMPRESSORS)),
        transpose=ndim >= 2 and draw(st.booleans()),
        fill=fill,
        write_empty_chunks=draw(st.booleans()),
        store=draw(st.sampled_from(["memory", "local"])),
    )


@st.composite
def selections(draw: Any, shape: tuple[int, ...], steps: bool) -> Selection:
    """A selection of an array of ``shape``, with its NumPy equivalent."""
    ndim = len(shape)
    kinds = ["whole", "whole", "basic", "basic", "element"]
    if ndim and all(shape):
        kinds += ["oindex", "vindex"] + (["list"] if ndim == 1 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "whole":
        return Selection("whole", Ellipsis, Ellipsis)
    if kind == "element":
        if not all(shape):
            return Selection("whole", Ellipsis, Ellipsis)
        index = tuple(draw(st.integers(0, n - 1)) for n in shape)
        return Selection("basic", index, index)
    if kind == "basic":
        index = []
        for n in shape:
            if n and draw(st.integers(0, 3)) == 0:
                index.append(draw(st.integers(-n, n - 1)))  # an integer drops the axis
                continue
            start = draw(st.none() | st.integers(0, n))
            stop = draw(st.none() | st.integers(0, n))
            step = draw(st.none() | st.integers(1, 3)) if steps else None
            index.append(slice(start, stop, step))
        return Selection("basic", tuple(index), tuple(index))
    if kind in ("oindex", "list"):
        arrays = []
        for n in shape:
            if kind == "oindex" and draw(st.booleans()):
                arrays.append(slice(draw(st.integers(0, n)), None))
                continue
            picked = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
            if draw(st.booleans()):
                picked.sort()
            arrays.append(np.array(picked, dtype=np.intp))
        np_index = np.ix_(*[np.arange(n)[a] for a, n in zip(arrays, shape)])
        if kind == "list":
            return Selection("list", [int(i) for i in arrays[0]], np_index[0])
        return Selection("oindex", tuple(arrays), np_index)
    # vindex: unique coordinates (with duplicates, which write wins is zarr's choice)
    size = int(np.prod(shape))
    flat = draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=min(size, 8), unique=True))
    coords = np.unravel_index(np.array(flat, dtype=np.intp), shape)
    return Selection("vindex", tuple(coords), tuple(coords))


@st.composite
def u_arrays(draw: Any, shape: tuple[int, ...], width: int | None = None) -> np.ndarray:
    """A NumPy U array of ``shape``, any byte order and width, C or F order."""
    width = width or draw(st.integers(1, 6))
    size = int(np.prod(shape))
    items = draw(st.lists(strings(width), min_size=size, max_size=size))
    dtype = np.dtype(f"{draw(st.sampled_from('<>'))}U{width}")
    order = draw(st.sampled_from("CF"))
    return np.array(items, dtype=dtype).reshape(shape).copy(order=order)


def broadcast_shapes(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes that broadcast to ``shape``: itself, leading axes dropped, axes of 1."""

    @st.composite
    def draw_shape(draw: Any) -> tuple[int, ...]:
        drop = draw(st.integers(0, len(shape)))
        kept = shape[drop:]
        return tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in kept)

    return st.just(shape) | draw_shape()


@st.composite
def write_cases(draw: Any) -> WriteCase:
    spec = draw(array_specs())
    selection = draw(selections(spec.shape, steps=True))
    if selection.kind == "whole" and draw(st.integers(0, 3)) == 0:
        # create_array(data=value): the array takes the value's dtype
        value = draw(u_arrays(spec.shape))
        fill = draw(st.sampled_from([f for f in FILLS if len(f) <= value.dtype.itemsize // 4]))
        order = "<" if value.dtype == value.dtype.newbyteorder("<") else ">"
        spec = dataclasses.replace(
            spec, capacity=value.dtype.itemsize // 4, memory_order=order, fill=fill
        )
        return WriteCase(spec, Selection("data", None, Ellipsis), value)
    target = np.empty(spec.shape, dtype=np.int8)[selection.np_index].shape
    value = draw(u_arrays(draw(broadcast_shapes(target))))
    kind = draw(st.sampled_from(["ndarray", "ndarray", "list"]))
    if kind == "list" and value.size:  # (an empty list has lost the value's shape)
        value = value.tolist()  # a str for a 0-d value
    background = draw(st.none() | u_arrays(spec.shape, width=spec.capacity))
    return WriteCase(spec, selection, value, background)


@st.composite
def read_cases(draw: Any) -> ReadCase:
    spec = draw(array_specs())
    data = draw(u_arrays(spec.shape, width=spec.capacity))
    region_index: Any = Ellipsis
    if draw(st.booleans()):
        bounds = [
            sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2))) for n in spec.shape
        ]
        region_index = tuple(slice(start, stop) for start, stop in bounds)
    return ReadCase(
        spec=spec,
        data=data,
        region=region_index,
        selection=draw(selections(spec.shape, steps=True)),
        reopen=draw(st.booleans()),
    )


# ---------------------------------------------------------------------------
# Stores, writing and reading


class Place:
    """A store of one kind, emptied when the test ends."""

    def __init__(self, kind: str, root: str) -> None:
        self.kind = kind
        if kind == "memory":
            self.mapping: dict[str, Any] = {}
        else:
            self.path = tempfile.mkdtemp(dir=root)

    def store(self) -> Any:
        if self.kind == "memory":
            return MemoryStore(self.mapping)
        return LocalStore(self.path)

    def contents(self) -> dict[str, bytes]:
        if self.kind == "memory":
            return {key: buf.to_bytes() for key, buf in self.mapping.items()}
        found = {}
        root = pathlib.Path(self.path)
        for file in root.rglob("*"):
            if file.is_file() and not file.name.endswith(".partial"):  # LocalStore's temporary
                found[file.relative_to(root).as_posix()] = file.read_bytes()
        return found


@contextlib.contextmanager
def places(root: str) -> Any:
    made: list[Place] = []

    def make(kind: str) -> Place:
        made.append(Place(kind, root))
        return made[-1]

    try:
        yield make
    finally:
        for place in made:
            if place.kind == "local":
                shutil.rmtree(place.path, ignore_errors=True)


def integration(enable: bool) -> Any:
    return fz.enabled() if enable else contextlib.nullcontext()


def do_write(case: WriteCase, place: Place, enable: bool) -> None:
    with integration(enable):
        if case.selection.kind == "data":
            kwargs = case.spec.kwargs()
            del kwargs["shape"], kwargs["dtype"]
            zarr.create_array(place.store(), data=case.value, **kwargs)
            return
        arr = zarr.create_array(place.store(), **case.spec.kwargs())
        if case.background is not None:
            arr[...] = case.background
        case.selection.target(arr)[case.selection.index] = case.value


def outcome(call: Any, *args: Any) -> BaseException | None:
    try:
        call(*args)
    except Exception as error:  # noqa: BLE001 - any error, compared with the other side's
        return error
    return None


def expected_after(case: WriteCase) -> np.ndarray:
    """What NumPy gives for the same assignment to a fill-valued array."""
    expected = np.full(case.spec.shape, case.spec.fill, dtype=case.spec.native)
    if case.background is not None:
        expected[...] = case.background.astype(case.spec.native)
    expected[case.selection.np_index] = np.asarray(case.value).astype(case.spec.native)
    return expected


def stock_read(place: Place) -> Any:
    return zarr.open_array(place.store(), mode="r")[...]


def metadata(contents: dict[str, bytes]) -> dict[str, Any]:
    return {
        key: json.loads(raw)
        for key, raw in contents.items()
        if key.rsplit("/", 1)[-1] in ("zarr.json", ".zarray", ".zattrs", ".zgroup")
    }


def assert_same_strings(got: Any, want: Any) -> None:
    """Equal element by element, at the same itemsize when both are arrays (not scalars)."""
    if not isinstance(got, np.ndarray) or not isinstance(want, np.ndarray):
        assert np.shape(got) == np.shape(want) == ()
        assert np.asarray(got).item() == np.asarray(want).item()
        return
    assert got.shape == want.shape
    assert got.dtype.kind == want.dtype.kind == "U"
    assert got.dtype.itemsize == want.dtype.itemsize, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, strict=False)
    assert got.tolist() == want.tolist()  # element by element, as Python strings


# ---------------------------------------------------------------------------
# Finding 2 of issue 24: a big-endian value written over whole shards

FINDING_2 = WriteCase(
    ArraySpec(
        zarr_format=3,
        capacity=2,
        memory_order=">",
        endian="little",
        shape=(16,),
        chunks=(4,),
        shards=(8,),
        compressor="zstd",
    ),
    Selection("data", None, Ellipsis),
    np.array(["\u0100a", "\u1000", "ab", "c"] * 4, dtype=">U2"),
)
FINDING_2_ASSIGNED = WriteCase(
    ArraySpec(
        zarr_format=3,
        capacity=2,
        memory_order=">",
        endian="big",
        shape=(16,),
        chunks=(4,),
        shards=(8,),
        store="local",
    ),
    Selection("whole", Ellipsis, Ellipsis),
    ["ab", "c", "\u1000", "\u0100a"] * 4,
)


@SETTINGS
@given(case=write_cases())
@example(case=FINDING_2)
@example(case=FINDING_2_ASSIGNED)
def test_writes_equal_stock_zarr(tmp_path_factory: Any, case: WriteCase) -> None:
    root = str(tmp_path_factory.getbasetemp())
    with places(root) as make:
        ours, stock = make(case.spec.store), make(case.spec.store)
        stock_error = outcome(do_write, case, stock, False)
        our_error = outcome(do_write, case, ours, True)
        event(f"stock: {type(stock_error).__name__}")
        if stock_error is not None or our_error is not None:
            # the same inputs fail the same way, or this is a divergence to report
            assert type(our_error) is type(stock_error), (our_error, stock_error)
            return
        want = expected_after(case)
        got_stock, got_ours = stock_read(stock), stock_read(ours)
        assert type(got_ours) is type(got_stock)
        assert_same_strings(got_stock, want)
        assert_same_strings(got_ours, want)
        # the same keys stored (fill-valued chunks left out alike), the same metadata
        ours_contents, stock_contents = ours.contents(), stock.contents()
        assert sorted(ours_contents) == sorted(stock_contents)
        assert metadata(ours_contents) == metadata(stock_contents)


def apply(selection: Selection, arr: Any) -> Any:
    return selection.target(arr)[selection.index]


@SETTINGS
@given(case=read_cases())
def test_reads_equal_stock_zarr(tmp_path_factory: Any, case: ReadCase) -> None:
    root = str(tmp_path_factory.getbasetemp())
    with places(root) as make:
        place = make(case.spec.store)
        # the handle the integration reads through is made first, with the
        # array's in-memory byte order (which open_array does not keep)
        with fz.enabled():
            handle = zarr.create_array(place.store(), **case.spec.kwargs())
        arr = zarr.open_array(place.store(), mode="r+")
        arr[case.region] = case.data[case.region]

        stock_arr = zarr.open_array(place.store(), mode="r")
        want = apply(case.selection, stock_arr)
        expected = np.full(case.spec.shape, case.spec.fill, dtype=case.spec.native)
        expected[case.region] = case.data[case.region]
        assert_same_strings(want, expected[case.selection.np_index])
        with fz.enabled():
            reader = zarr.open_array(place.store(), mode="r") if case.reopen else handle
            got = apply(case.selection, reader)
        assert type(got) is type(want)
        assert_same_strings(got, want)
        # reading changed nothing
        assert_same_strings(stock_read(place), expected)


# ---------------------------------------------------------------------------
# A lone surrogate is refused, and its chunks are left as they were


async def _others_done() -> None:
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    await asyncio.gather(*others, return_exceptions=True)


def settle() -> None:
    """Wait for the chunk writes a refused write left running on zarr's event loop.

    zarr gathers a write's chunks with asyncio.gather, which does not cancel
    the others when one raises: they go on writing after the call has raised.
    """
    from zarr.core.sync import sync  # zarr's own loop, the one the writes run on

    sync(_others_done())


def grid_key(spec: ArraySpec, coords: tuple[int, ...]) -> str:
    """The store key of the chunk (shard) that holds the element at ``coords``."""
    grid = spec.shards or spec.chunks
    cells = [str(c // g) for c, g in zip(coords, grid)]
    if spec.zarr_format == 3:
        return "/".join(["c", *cells])
    return ".".join(cells) or "0"


def _assigns_something(case: WriteCase) -> bool:
    return (
        case.selection.kind != "data"
        and np.empty(case.spec.shape, np.int8)[case.selection.np_index].size > 0
    )


ASSIGNMENTS = write_cases().filter(_assigns_something)


@st.composite
def surrogate_cases(draw: Any) -> tuple[WriteCase, WriteCase, tuple[int, ...]]:
    """A write case whose value holds one lone surrogate that reaches the store."""
    case = draw(ASSIGNMENTS)
    value = np.array(case.value, dtype=object) if not isinstance(case.value, str) else None
    shape = () if value is None else value.shape
    where = tuple(draw(st.integers(0, n - 1)) for n in shape)
    original = case.value if value is None else value[where]
    width = np.asarray(case.value).dtype.itemsize // 4
    # inside what both the value and the array hold, so that no cast cuts it
    position = draw(st.integers(0, min(width, case.spec.capacity) - 1))
    padded = original.ljust(position + 1, "a")
    bad = padded[:position] + "\ud800" + padded[position + 1 :]
    if value is None:
        new_value: Any = bad
    elif isinstance(case.value, np.ndarray):
        new_value = case.value.copy()
        new_value[where] = bad
    else:
        value[where] = bad
        new_value = value.tolist()
    return dataclasses.replace(case, value=new_value), case, where


@SETTINGS
@given(drawn=surrogate_cases())
def test_lone_surrogate_is_refused(tmp_path_factory: Any, drawn: Any) -> None:
    case, clean, where = drawn
    root = str(tmp_path_factory.getbasetemp())
    with places(root) as make:
        # only values stock zarr writes (it does not broadcast every shape)
        assume(outcome(do_write, clean, make("memory"), False) is None)
        place = make(case.spec.store)
        with fz.enabled():
            arr = zarr.create_array(place.store(), **case.spec.kwargs())
            if case.background is not None:
                arr[...] = case.background
        before = place.contents()
        with fz.enabled():
            arr = zarr.open_array(place.store(), mode="r+")
            with pytest.raises(InvalidCodePointError):
                case.selection.target(arr)[case.selection.index] = case.value
        settle()
        after = place.contents()
        # every element the surrogate would have gone to, and its chunk, are as they were
        value_mask = np.zeros(np.shape(case.value), dtype=bool)
        value_mask[where] = True
        mask = np.zeros(case.spec.shape, dtype=bool)
        mask[case.selection.np_index] = value_mask
        for coords in zip(*np.nonzero(mask)) if mask.ndim else [()]:
            key = grid_key(case.spec, tuple(int(c) for c in coords))
            assert after.get(key) == before.get(key), key
        assert metadata(after) == metadata(before)
        back = stock_read(place)
        assert not any("\ud800" in s for s in np.asarray(back).ravel().tolist())


def test_grid_key_names_zarrs_keys(tmp_path: Any) -> None:
    """The helper above names the keys zarr writes (V2 and V3, sharded, 0-d)."""
    for spec in [
        ArraySpec(3, 2, "<", "little", (5, 4), (2, 3)),
        ArraySpec(3, 2, "<", "little", (5, 4), (2, 2), shards=(4, 2)),
        ArraySpec(2, 2, "<", "", (5, 4), (2, 3)),
        ArraySpec(3, 2, "<", "little", (), ()),
        ArraySpec(2, 2, "<", "", (), ()),
    ]:
        mapping: dict[str, Any] = {}
        arr = zarr.create_array(MemoryStore(mapping), **spec.kwargs())
        arr[...] = "x"
        want = {
            grid_key(spec, coords) for coords in itertools.product(*(range(n) for n in spec.shape))
        }
        assert {k for k in mapping if "zarr.json" not in k and not k.startswith(".z")} == want
