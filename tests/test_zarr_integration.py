"""fixedutf32.zarr with real zarr-python and real stores.

Every read through the integration is compared with stock zarr-python
reading the same store; every store written through it is read back by
stock zarr-python.  Three ways of switching it on are exercised: the codec
alone (``codecs.bytes``), the pipeline alone (``codec_pipeline.path``) and
``fixedutf32.zarr.enabled()`` (both, plus the strict data type).
"""

import contextlib
import importlib.util
import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")
numcodecs = pytest.importorskip("numcodecs", reason="zarr V2 compressors come from numcodecs")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from zarr.codecs import (  # noqa: E402
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

import fixedutf32  # noqa: E402
import fixedutf32.zarr as fz  # noqa: E402
from fixedutf32 import InvalidCodePointError, MetadataError  # noqa: E402

# zarr-python warns whenever it writes fixed_length_utf32 V3 metadata (its
# registry marks the type as having no V3 specification).
pytestmark = [
    pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning"),
    # the nested-shards layout puts a compressor after its sharding codec
    pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed` codec:UserWarning"),
]

SHAPE = (7, 10)
CHUNKS = (2, 3)
FILL = "·"
TEXT = ["", "a", "hé", "Жи", "漢字", "😀x", "a\x00b", "wxyz", "🎉🎉🎉🎉"]


def make_data(seed=0, shape=SHAPE):
    rng = np.random.default_rng(seed)
    return np.array(TEXT, dtype="<U4")[rng.integers(0, len(TEXT), shape)]


# name -> keyword arguments of zarr.create_array
LAYOUTS = {
    "v3-raw-little": dict(serializer=BytesCodec(endian="little"), compressors=None),
    "v3-raw-big": dict(serializer=BytesCodec(endian="big"), compressors=None),
    "v3-gzip-big": dict(serializer=BytesCodec(endian="big"), compressors=[GzipCodec(level=1)]),
    "v3-zstd-little": dict(serializer=BytesCodec(endian="little"), compressors=[ZstdCodec()]),
    "v3-blosc-big": dict(serializer=BytesCodec(endian="big"), compressors=[BloscCodec()]),
    "v3-crc32c-little": dict(serializer=BytesCodec(endian="little"), compressors=[Crc32cCodec()]),
    "v3-transpose-big": dict(
        filters=[TransposeCodec(order=(1, 0))],
        serializer=BytesCodec(endian="big"),
        compressors=None,
    ),
    "v3-sharded-big": dict(
        shards=(4, 6), serializer=BytesCodec(endian="big"), compressors=[ZstdCodec()]
    ),
    # shards of shards, the whole compressed (zarr's property tests make such arrays)
    "v3-nested-shards-zstd": dict(
        chunks=(4, 6),
        serializer=ShardingCodec(
            chunk_shape=(2, 3),
            codecs=[ShardingCodec(chunk_shape=(1, 3), codecs=[BytesCodec(endian="big")])],
        ),
        compressors=[ZstdCodec()],
    ),
    "v2-little-C": dict(zarr_format=2, dtype="<U4", compressors=None),
    "v2-big-F": dict(zarr_format=2, dtype=">U4", order="F", compressors=None),
    "v2-zstd-big-C": dict(zarr_format=2, dtype=">U4", compressors=numcodecs.Zstd()),
    "v2-blosc-little-F": dict(zarr_format=2, dtype="<U4", order="F", compressors=numcodecs.Blosc()),
}
MODES = ["codec", "pipeline", "enabled"]


@contextlib.contextmanager
def integration(mode):
    """Switch the integration on one of the three ways."""
    if mode == "enabled":
        with fz.enabled():
            yield
    elif mode == "codec":
        with zarr.config.set({"codecs.bytes": "fixedutf32.zarr.BytesCodec"}):
            yield
    else:
        with zarr.config.set({"codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"}):
            yield


def create(store, layout, **overrides):
    kwargs = dict(shape=SHAPE, chunks=CHUNKS, dtype="<U4", fill_value=FILL)
    kwargs.update(LAYOUTS[layout])
    kwargs.update(overrides)
    return zarr.create_array(store, **kwargs)


def stock_store(tmp_path, layout, name="stock", data=None, region=np.s_[:]):
    """A LocalStore written by stock zarr-python; chunks outside ``region`` are missing."""
    path = tmp_path / name
    arr = create(path, layout)
    arr[region] = make_data()[region] if data is None else data
    return path


def pipeline_of(arr):
    # zarr's public Array.async_array is new in zarr 3.1.5; fixedutf32 supports zarr 3.1.
    return arr._async_array.codec_pipeline


SELECTIONS = {
    "all": lambda a: a[:],
    "partial": lambda a: a[1:6, 2:9],
    "strided": lambda a: a[::2, 1::3],
    "row": lambda a: a[3],
    "column": lambda a: a[:, 4],
    "element": lambda a: a[6, 9],
    "orthogonal": lambda a: a.oindex[[0, 3, 6], [1, 2, 9]],
    "coordinate": lambda a: a.vindex[[0, 3, 6, 6], [1, 2, 9, 0]],
    "mask": lambda a: a.vindex[make_data(1) > "b"],
    "chunk-aligned": lambda a: a[2:4, 3:6],
}


# ---------------------------------------------------------------------------
# Reading


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_reads_equal_stock_zarr(tmp_path, layout, mode):
    # Chunks outside rows 0..4 and columns 0..7 are missing: the fill value.
    path = stock_store(tmp_path, layout, region=np.s_[:5, :8])
    stock = zarr.open_array(path)
    with integration(mode):
        ours = zarr.open_array(path)
        for name, select in SELECTIONS.items():
            expected = select(stock)
            got = select(ours)
            assert np.asarray(got).dtype == np.asarray(expected).dtype, name
            np.testing.assert_array_equal(got, expected, err_msg=name)
    assert (stock[5:] == FILL).all()


@pytest.mark.parametrize("layout", ["v3-raw-little", "v3-zstd-little", "v2-big-F"])
def test_pipeline_handles_the_array_itself(tmp_path, layout):
    path = stock_store(tmp_path, layout)
    with fz.enabled():
        pipeline = pipeline_of(zarr.open_array(path))
    assert isinstance(pipeline, fz.CodecPipeline)
    # Private on purpose: reads give the same data either way; only the plan
    # shows that the pipeline reads the array itself instead of handing it on.
    assert pipeline._plan is not None


def test_codec_is_used_for_parsed_metadata(tmp_path):
    path = stock_store(tmp_path, "v3-raw-big")
    with integration("codec"):
        arr = zarr.open_array(path)
    assert type(arr.metadata.codecs[0]) is fz.BytesCodec
    assert arr.metadata.codecs[0].to_dict() == {"name": "bytes", "configuration": {"endian": "big"}}


def test_read_into_config_order_f(tmp_path):
    # With zarr's memory order "F" the result is Fortran-ordered: whole chunks of
    # a transposed array land in it directly.
    path = stock_store(tmp_path, "v3-transpose-big")
    stock = zarr.open_array(path)[:]
    with fz.enabled(), zarr.config.set({"array.order": "F"}):
        got = zarr.open_array(path)[:]
    assert got.flags.f_contiguous
    np.testing.assert_array_equal(got, stock)


def test_other_data_types_go_to_zarr(tmp_path):
    path = tmp_path / "ints"
    arr = zarr.create_array(
        path,
        shape=(5, 4),
        chunks=(2, 3),
        dtype=">i4",
        fill_value=-1,
        serializer=BytesCodec(endian="big"),
    )
    arr[1:4] = np.arange(12).reshape(3, 4)
    expected = zarr.open_array(path)[:]
    for mode in MODES:
        with integration(mode):
            ours = zarr.open_array(path)
            np.testing.assert_array_equal(ours[:], expected)
            ours[0, :2] = [7, 8]
            assert ours[0, :3].tolist() == [7, 8, -1]
            ours[0, :2] = -1
    assert zarr.open_array(path)[0].tolist() == [-1] * 4


def test_sharded_index_is_zarrs(tmp_path):
    # The shard index is uint64: shards written in part go through zarr's
    # sharding codec, read and written by the same bytes codec class, byte for
    # byte as stock zarr writes them; whole shards are the pipeline's own
    # (inner chunks in C order, not zarr's Morton order), read back by stock zarr.
    path = stock_store(tmp_path, "v3-sharded-big")
    raw = {p.relative_to(path): p.read_bytes() for p in (path / "c").rglob("*") if p.is_file()}
    with fz.enabled():
        arr = zarr.open_array(path)
        arr[1:-1, 1:-1] = arr[1:-1, 1:-1]  # every shard in part
    after = {p.relative_to(path): p.read_bytes() for p in (path / "c").rglob("*") if p.is_file()}
    assert after == raw
    with fz.enabled():
        arr[:] = arr[:]
    np.testing.assert_array_equal(zarr.open_array(path)[:], make_data())


@settings(max_examples=40, deadline=None)
@given(
    st.tuples(
        *[
            st.tuples(
                st.integers(-12, 12) | st.none(),
                st.integers(-12, 12) | st.none(),
                st.integers(1, 4) | st.none(),
            )
            for _ in SHAPE
        ]
    ),
    st.sampled_from(["v3-raw-big", "v3-zstd-little", "v2-big-F"]),
)
def test_random_slices_equal_stock(random_store, selection, layout):
    path, stock = random_store[layout]
    sel = tuple(slice(*s) for s in selection)
    with fz.enabled():
        got = zarr.open_array(path)[sel]
    np.testing.assert_array_equal(got, stock[sel])


@pytest.fixture(scope="module")
def random_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("random")
    stores = {}
    for layout in ["v3-raw-big", "v3-zstd-little", "v2-big-F"]:
        path = stock_store(root, layout, name=layout, region=np.s_[1:, :9])
        stores[layout] = path, zarr.open_array(path)[:]
    return stores


# ---------------------------------------------------------------------------
# Writing

WRITES = [
    (np.s_[:], lambda: make_data(2)),
    (np.s_[1:3, 2:5], lambda: make_data(3, (2, 3))),  # partial chunks
    (np.s_[4, :], lambda: make_data(4, (10,))),  # drops an axis
    (np.s_[5:, 7:], lambda: "z"),  # a scalar over edge chunks
    (np.s_[2:4, 3:6], lambda: FILL),  # a whole chunk back to the fill value
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_writes_equal_stock_zarr(tmp_path, layout, mode):
    stock = create(tmp_path / "stock", layout)
    with integration(mode):
        ours = create(tmp_path / "ours", layout)
    for region, value in WRITES:
        stock[region] = value()
        with integration(mode):
            ours[region] = value()
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "ours")[:], stock[:])
    with integration(mode):
        ours.oindex[[0, 6], [1, 9]] = "ox"
        ours.vindex[[1, 2], [3, 8]] = "vx"
    stock.oindex[[0, 6], [1, 9]] = "ox"
    stock.vindex[[1, 2], [3, 8]] = "vx"
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "ours")[:], stock[:])
    # The same chunks exist: ones equal to the fill value are not stored.
    assert _chunk_files(tmp_path / "ours") == _chunk_files(tmp_path / "stock")


def _chunk_files(path):
    return sorted(
        str(p.relative_to(path))
        for p in path.rglob("*")
        if p.is_file() and not p.name.startswith((".z", "zarr.json"))
    )


@pytest.mark.parametrize("fill", [FILL, "", "ab\x00"])
@pytest.mark.parametrize("write_empty_chunks", [False, True])
def test_write_empty_chunks_as_zarr(tmp_path, write_empty_chunks, fill):
    config = {"write_empty_chunks": write_empty_chunks}
    stock = create(tmp_path / "stock", "v2-big-F", config=config, fill_value=fill)
    with fz.enabled():
        ours = create(tmp_path / "ours", "v2-big-F", config=config, fill_value=fill)
        ours[:] = fill
        ours[0, 0] = "a"
        ours[2:4, 3:6] = np.array([[fill, "\x00"], ["", "ab"], ["ab", ""]]).T
    stock[:] = fill
    stock[0, 0] = "a"
    stock[2:4, 3:6] = np.array([[fill, "\x00"], ["", "ab"], ["ab", ""]]).T
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "ours")[:], stock[:])
    assert _chunk_files(tmp_path / "ours") == _chunk_files(tmp_path / "stock")
    if write_empty_chunks:
        assert len(_chunk_files(tmp_path / "ours")) == 16


def test_written_chunks_are_zarrs_bytes(tmp_path):
    # Raw and V2 chunks are the same bytes zarr-python writes.
    for layout in ["v3-raw-big", "v3-raw-little", "v2-big-F", "v2-zstd-big-C"]:
        stock = create(tmp_path / f"stock-{layout}", layout)
        stock[:] = make_data()
        with fz.enabled():
            ours = create(tmp_path / f"ours-{layout}", layout)
            ours[:] = make_data()
        for name in _chunk_files(tmp_path / f"stock-{layout}"):
            a = (tmp_path / f"stock-{layout}" / name).read_bytes()
            b = (tmp_path / f"ours-{layout}" / name).read_bytes()
            assert a == b, (layout, name)


# ---------------------------------------------------------------------------
# Other stores


def _stores(tmp_path):
    yield "memory", zarr.storage.MemoryStore()
    yield "zip", zarr.storage.ZipStore(tmp_path / "a.zip", mode="w")


def _fsspec_store(tmp_path):
    pytest.importorskip("fsspec", reason="zarr's FsspecStore needs fsspec")
    url = f"memory://fixedutf32-{os.getpid()}-{tmp_path.name}"
    return zarr.storage.FsspecStore.from_url(url)


def _round_trip(store, layout, name, rewrite=True):
    data = make_data()
    expected = np.where(np.arange(SHAPE[0])[:, None] < 5, data, FILL)
    with fz.enabled():
        arr = create(store, layout)
        arr[:5] = data[:5]
        if rewrite:  # a zip file cannot replace a member
            arr[1:3, 2:5] = "ab"
            expected[1:3, 2:5] = "ab"
        got = arr[:]
    np.testing.assert_array_equal(got, expected, err_msg=name)
    np.testing.assert_array_equal(zarr.open_array(store)[:], expected, err_msg=name)
    with fz.enabled():
        np.testing.assert_array_equal(
            zarr.open_array(store)[2:6, ::3], expected[2:6, ::3], err_msg=name
        )


@pytest.mark.parametrize("layout", ["v3-raw-big", "v3-gzip-big", "v2-little-C"])
def test_other_stores_round_trip(tmp_path, layout):
    for name, store in _stores(tmp_path):
        _round_trip(store, layout, name, rewrite=name != "zip")
        if name == "zip":
            store.close()


def test_fsspec_store_round_trip(tmp_path):
    _round_trip(_fsspec_store(tmp_path), "v3-zstd-little", "fsspec")


# ---------------------------------------------------------------------------
# Invalid code points name the chunk

BAD = (5, 7)  # array index of the planted surrogate
BAD_TEXT = "a\ud800"  # position 1


def _expected_chunk(layout):
    """(chunk key, flat element index in the stored chunk) of BAD."""
    if layout.startswith("v3-sharded"):
        # element index within the inner chunk (2, 3), key of the shard (4, 6)
        return "c/1/1", (BAD[0] % 2) * 3 + BAD[1] % 3
    if layout.startswith("v3-nested"):
        # element index within the innermost chunk (1, 3), key of the outer shard (4, 6)
        return "c/1/1", BAD[1] % 3
    i, j = BAD[0] % 2, BAD[1] % 3
    if layout.startswith("v2"):
        flat = i + 2 * j if LAYOUTS[layout].get("order") == "F" else i * 3 + j
        return "2.2", flat
    flat = i + 2 * j if "transpose" in layout else i * 3 + j
    return "c/2/2", flat


def _plant(store, layout):
    """Write a lone surrogate at BAD with stock zarr-python, which does not check."""
    data = make_data()
    data[BAD] = BAD_TEXT
    create(store, layout)[:] = data
    return store


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_invalid_code_point_names_chunk(tmp_path, layout):
    path = _plant(tmp_path / "bad", layout)
    key, flat = _expected_chunk(layout)
    for read in (lambda a: a[:], lambda a: a[4:6, 6:9], lambda a: a.vindex[[5], [7]]):
        with fz.enabled(), pytest.raises(InvalidCodePointError) as info:
            read(zarr.open_array(path))
        err = info.value
        assert isinstance(err, fz.InvalidChunkCodePointError)
        assert (err.chunk_key, err.array_index) == (key, BAD)
        assert (err.index, err.position, err.code_point, err.kind) == (flat, 1, 0xD800, "surrogate")
        assert f"of chunk {key} (array index {BAD})" in str(err)
    # Reads that do not touch the chunk work.
    with fz.enabled():
        assert zarr.open_array(path)[:4].shape == (4, 10)
    # The codec alone checks V3 chunks too (it never sees V2 ones), without the key.
    if layout.startswith("v3"):
        with integration("codec"), pytest.raises(InvalidCodePointError) as info:
            zarr.open_array(path)[4:6, 6:9]
        assert info.value.index == flat


def test_invalid_code_point_too_large_in_local_file(tmp_path):
    path = stock_store(tmp_path, "v3-raw-big")
    chunk = path / "c" / "1" / "2"
    raw = bytearray(chunk.read_bytes())
    raw[4 * 4 * 4 + 8 : 4 * 4 * 4 + 12] = (0x110000).to_bytes(4, "big")  # element 4, position 2
    chunk.write_bytes(bytes(raw))
    with fz.enabled(), pytest.raises(InvalidCodePointError) as info:
        zarr.open_array(path)[:]
    err = info.value
    assert (err.chunk_key, err.array_index, err.index, err.position) == ("c/1/2", (3, 7), 4, 2)
    assert err.kind == "too_large"
    assert "U+110000 (above U+10FFFF) at element 4, position 2 of chunk c/1/2" in str(err)
    # The file is as it was: the error is raised after reading, nothing is written.
    assert chunk.read_bytes() == bytes(raw)


def test_invalid_code_point_other_stores(tmp_path):
    stores = list(_stores(tmp_path))
    if importlib.util.find_spec("fsspec") is not None:
        stores.append(("fsspec", _fsspec_store(tmp_path)))
    for name, store in stores:
        _plant(store, "v3-raw-big")
        with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
            zarr.open_array(store)[:]
        assert (info.value.chunk_key, info.value.array_index) == ("c/2/2", BAD), name
        if name == "zip":
            store.close()


@pytest.mark.parametrize(
    "layout", ["v3-zstd-little", "v3-blosc-big", "v3-gzip-big", "v2-blosc-little-F", "v3-raw-big"]
)
def test_chunk_of_wrong_size_raises(tmp_path, layout):
    # A chunk that decompresses to fewer bytes than the chunk needs must not
    # leave part of the result unwritten.
    path = stock_store(tmp_path, layout)
    key = "c/0/0" if layout.startswith("v3") else "0.0"
    arr = zarr.open_array(path)
    short = "ab".encode("utf-32-le")
    if "raw" not in layout:
        codec = LAYOUTS[layout]["compressors"]
        codec = (
            codec
            if isinstance(codec, numcodecs.abc.Codec)
            else numcodecs.get_codec({"id": codec[0].to_dict()["name"]})
        )
        short = bytes(codec.encode(np.frombuffer(short, np.uint8)))
    (path / key).write_bytes(short)
    with pytest.raises(ValueError):
        arr[:2, :3]
    # A raw chunk is the wrong size; a compressed one declares (or inflates
    # to) the wrong size, refused as corrupt before it is inflated.
    expected = fixedutf32.ChunkSizeError if "raw" in layout else fixedutf32.CorruptChunkError
    with fz.enabled(), pytest.raises(expected, match=f"chunk {key}"):
        zarr.open_array(path)[:2, :3]


def test_invalid_chunk_error_pickles():
    err = fz.InvalidChunkCodePointError(3, 1, 0xD800, "c/0/2", (65539,))
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert (back.chunk_key, back.array_index, back.index, back.position) == (
        "c/0/2",
        (65539,),
        3,
        1,
    )
    assert str(back) == str(err)


@pytest.mark.parametrize("layout", ["v3-raw-big", "v3-zstd-little", "v3-sharded-big", "v2-big-F"])
def test_writing_lone_surrogate_raises_and_writes_nothing(tmp_path, layout):
    path = stock_store(tmp_path, layout)
    before = {p: p.read_bytes() for p in path.rglob("*") if p.is_file()}
    with fz.enabled():
        arr = zarr.open_array(path, mode="r+")
        with pytest.raises(fz.InvalidChunkCodePointError) as info:
            arr[BAD] = BAD_TEXT
        with pytest.raises(fz.InvalidChunkCodePointError):
            arr[4:6, 6:9] = np.array([["ok", "ok", "ok"], ["ok", BAD_TEXT, "ok"]])
    assert info.value.array_index == BAD
    assert info.value.chunk_key == _expected_chunk(layout)[0]
    after = {p: p.read_bytes() for p in path.rglob("*") if p.is_file()}
    assert after == before


def test_codec_alone_refuses_lone_surrogate_on_write(tmp_path):
    path = stock_store(tmp_path, "v3-raw-little")
    before = (path / "c" / "2" / "2").read_bytes()
    with integration("codec"):
        arr = zarr.open_array(path, mode="r+")
        with pytest.raises(InvalidCodePointError):
            arr[BAD] = BAD_TEXT
    assert (path / "c" / "2" / "2").read_bytes() == before


# ---------------------------------------------------------------------------
# Strict metadata through zarr.open_array


def _v3_doc(**changes):
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [4],
        "attributes": {},
        "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    }
    doc.update(changes)
    return doc


def _v2_doc(**changes):
    doc = {
        "zarr_format": 2,
        "shape": [4],
        "chunks": [2],
        "dtype": "<U2",
        "fill_value": "",
        "order": "C",
        "compressor": None,
        "filters": None,
    }
    doc.update(changes)
    return doc


TRANSPOSE_2D = {"name": "transpose", "configuration": {"order": [1, 0]}}
STRICT_ROWS = {
    "length_bytes 6": (
        _v3_doc(data_type={"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}),
        "data_type.configuration.length_bytes: expected a positive integer multiple of 4, got 6",
    ),
    "length_bytes 13": (
        _v3_doc(data_type={"name": "fixed_length_utf32", "configuration": {"length_bytes": 13}}),
        "data_type.configuration.length_bytes: expected a positive integer multiple of 4, got 13",
    ),
    "fill value too long": (
        _v3_doc(fill_value="abcdef"),
        "fill_value: expected at most 2 code points, got 6",
    ),
    "fill value lone surrogate": (
        _v3_doc(fill_value="\ud800"),
        "fill_value: expected Unicode scalar values, got the lone surrogate U+D800",
    ),
    "bytes without endian": (
        _v3_doc(codecs=[{"name": "bytes"}]),
        'codecs[0].configuration.endian: expected "little" or "big", got no endian',
    ),
    "bytes without endian after transpose": (
        _v3_doc(
            shape=[4, 4],
            chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
            codecs=[TRANSPOSE_2D, {"name": "bytes", "configuration": {}}],
        ),
        "codecs[1].configuration.endian: expected",
    ),
    "vlen-utf8": (
        _v3_doc(codecs=[{"name": "vlen-utf8"}]),
        'codecs[0]: expected the "bytes" codec, got "vlen-utf8"',
    ),
    "vlen-bytes": (
        _v3_doc(codecs=[{"name": "vlen-bytes"}]),
        'codecs[0]: expected the "bytes" codec, got "vlen-bytes"',
    ),
    "sharded bytes without endian": (
        _v3_doc(
            codecs=[
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [1],
                        "codecs": [{"name": "bytes"}],
                        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                        "index_location": "end",
                    },
                }
            ]
        ),
        "codecs[0].configuration.codecs[0].configuration.endian: expected",
    ),
    "nested sharded bytes without endian, then zstd": (
        _v3_doc(
            codecs=[
                {
                    "name": "sharding_indexed",
                    "configuration": {
                        "chunk_shape": [2],
                        "codecs": [
                            {
                                "name": "sharding_indexed",
                                "configuration": {
                                    "chunk_shape": [1],
                                    "codecs": [{"name": "bytes"}],
                                    "index_codecs": [
                                        {"name": "bytes", "configuration": {"endian": "little"}}
                                    ],
                                    "index_location": "end",
                                },
                            }
                        ],
                        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                        "index_location": "end",
                    },
                },
                {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
            ]
        ),
        "codecs[0].configuration.codecs[0].configuration.codecs[0].configuration.endian: expected",
    ),
    "v2 fill value too long": (
        _v2_doc(fill_value="abcdef"),
        "fill_value: expected at most 2 code points, got 6",
    ),
    "v2 fill value lone surrogate": (_v2_doc(fill_value="x\udfff"), "lone surrogate U+DFFF"),
    "v2 dtype <U02": (_v2_doc(dtype="<U02"), 'dtype: expected "<U<n>" or ">U<n>"'),
}


def _write_doc(path, doc):
    path.mkdir(parents=True)
    name = "zarr.json" if doc["zarr_format"] == 3 else ".zarray"
    # ensure_ascii keeps lone surrogates as \ud800 escapes, as a JSON file holds them
    (path / name).write_text(json.dumps(doc))
    return path


def _stock_outcome(path):
    """What stock zarr makes of the array at ``path``: "opens", or its error (type, message)."""
    try:
        zarr.open_array(path, mode="r")
    except ValueError as exc:
        assert not isinstance(exc, MetadataError)
        return type(exc), str(exc)
    return "opens"


@pytest.mark.parametrize("row", sorted(STRICT_ROWS))
def test_strict_metadata(tmp_path, row):
    doc, message = STRICT_ROWS[row]
    path = _write_doc(tmp_path / "a", doc)
    # Off: zarr-python opens it, or (zarr 3.4: a bytes codec without endian)
    # refuses it with its own error; the same again after.
    stock = _stock_outcome(path)
    with fz.enabled():
        with pytest.raises(MetadataError) as info:
            zarr.open_array(path, mode="r")
        assert message in str(info.value)
        # and through a group
        _write_doc(tmp_path / "g" / "a", doc)
        (tmp_path / "g" / ("zarr.json" if doc["zarr_format"] == 3 else ".zgroup")).write_text(
            json.dumps(
                {"zarr_format": 3, "node_type": "group"}
                if doc["zarr_format"] == 3
                else {"zarr_format": 2}
            )
        )
        with pytest.raises(MetadataError):
            zarr.open_group(tmp_path / "g", mode="r")["a"]
    assert _stock_outcome(path) == stock


# What zarr's own data type decides before any codec or pipeline is built: it
# reads length_bytes 13 as <U3, cuts a long fill value, reads "<U02" as <U2.
# Only enable(), which registers the strict data type, sees these.
NEEDS_ENABLE = {
    "length_bytes 6",
    "length_bytes 13",
    "fill value too long",
    "v2 fill value too long",
    "v2 dtype <U02",
}


@pytest.mark.parametrize("row", sorted(STRICT_ROWS))
def test_strict_metadata_through_the_configuration_alone(tmp_path, row):
    """The environment / config-file route: the codec and the pipeline, no data type."""
    doc, message = STRICT_ROWS[row]
    path = _write_doc(tmp_path / "a", doc)
    stock = _stock_outcome(path)
    with zarr.config.set(
        {"codecs.bytes": fz.BYTES_CODEC_PATH, "codec_pipeline.path": fz.PIPELINE_PATH}
    ):
        if row in NEEDS_ENABLE:
            assert _stock_outcome(path) == stock
        else:
            with pytest.raises(MetadataError) as info:
                zarr.open_array(path, mode="r")
            assert message in str(info.value)


def test_strict_metadata_on_create():
    with fz.enabled():
        with pytest.raises(MetadataError, match="fill_value: expected at most 2 code points"):
            zarr.create_array({}, shape=(2,), dtype="<U2", fill_value="abc")
        arr = zarr.create_array({}, shape=(2,), dtype="<U2", fill_value="😀")
    assert arr.fill_value == "😀"


def test_codec_alone_refuses_missing_endian_when_reading(tmp_path):
    path = _write_doc(tmp_path / "a", _v3_doc(codecs=[{"name": "bytes"}]))
    (path / "c").mkdir()
    (path / "c" / "0").write_bytes("ab".encode("utf-32-le") + "c".encode("utf-32-le") * 2)
    if _stock_outcome(path) == "opens":
        # zarr-python 3.1 reads it in the machine's byte order (3.4 refuses it)
        assert zarr.open_array(path)[:2].tolist() == ["ab", "cc"]
    with integration("codec"):
        arr = zarr.open_array(path)
        with pytest.raises(MetadataError, match=r"configuration.endian"):
            arr[:2]


# ---------------------------------------------------------------------------
# Switching on and off


def test_enable_disable_and_enabled_restore_exactly():
    def state():
        return (
            zarr.config.get("codecs.bytes"),
            zarr.config.get("codec_pipeline.path"),
            zarr.dtype.data_type_registry.get("fixed_length_utf32"),
        )

    stock = state()
    assert stock[2] is zarr.dtype.FixedLengthUTF32
    with fz.enabled():
        assert state() == (
            fz.BytesCodec.__module__ + ".BytesCodec",
            "fixedutf32.zarr.CodecPipeline",
            fz.StrictFixedLengthUTF32,
        )
        with fz.enabled():
            pass
        assert state()[2] is fz.StrictFixedLengthUTF32
        fz.disable()
        assert state() == stock
    assert state() == stock
    fz.enable()
    fz.enable()
    try:
        assert state()[1] == "fixedutf32.zarr.CodecPipeline"
    finally:
        fz.disable()
    assert state() == stock
    # A custom pipeline set before enable() comes back on disable().
    with zarr.config.set(
        {
            "codec_pipeline.path": "zarr.core.codec_pipeline.BatchedCodecPipeline",
            "codecs.bytes": "zarr.codecs.bytes.BytesCodec",
        }
    ):
        with fz.enabled():
            pass
        assert state() == stock


def _run(code, **env):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_import_changes_nothing_in_zarr():
    out = _run("""
        import zarr, zarr.dtype
        before = (dict(zarr.config.get("codecs")), zarr.config.get("codec_pipeline"),
                  dict(zarr.dtype.data_type_registry.contents))
        import fixedutf32, fixedutf32.zarr
        after = (dict(zarr.config.get("codecs")), zarr.config.get("codec_pipeline"),
                 dict(zarr.dtype.data_type_registry.contents))
        print(before == after, zarr.config.get("codec_pipeline.path"))
    """)
    assert out.split() == ["True", "zarr.core.codec_pipeline.BatchedCodecPipeline"]


def test_environment_variables_select_codec_and_pipeline(tmp_path):
    path = _plant(tmp_path / "bad", "v3-raw-big")
    out = _run(
        f"""
        import zarr
        arr = zarr.open_array({str(path)!r})
        pipeline = arr._async_array.codec_pipeline
        print(type(arr.metadata.codecs[0]).__module__, type(pipeline).__name__)
        print(arr[:4, 0].tolist() == zarr.open_array({str(path)!r})[:4, 0].tolist())
        try:
            arr[:]
        except Exception as exc:
            print(type(exc).__name__, exc.chunk_key, exc.array_index)
    """,
        ZARR_CODECS__BYTES="fixedutf32.zarr.BytesCodec",
        ZARR_CODEC_PIPELINE__PATH="fixedutf32.zarr.CodecPipeline",
    )
    assert out.splitlines() == [
        "fixedutf32.zarr CodecPipeline",
        "True",
        "InvalidChunkCodePointError c/2/2 (5, 7)",
    ]


def test_config_file_selects_pipeline(tmp_path):
    pytest.importorskip("yaml", reason="zarr reads its config files with PyYAML")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "zarr.yaml").write_text(  # as the README writes it
        "codecs: {bytes: fixedutf32.zarr.BytesCodec}\n"
        "codec_pipeline: {path: fixedutf32.zarr.CodecPipeline}\n"
    )
    out = _run(
        """
        import zarr
        print(zarr.config.get("codecs.bytes"), zarr.config.get("codec_pipeline.path"))
    """,
        ZARR_CONFIG=str(tmp_path / "cfg"),
    )
    assert out.split() == ["fixedutf32.zarr.BytesCodec", "fixedutf32.zarr.CodecPipeline"]


def test_array_with_pipeline_pickles(tmp_path):
    path = stock_store(tmp_path, "v3-zstd-little")
    with fz.enabled():
        arr = zarr.open_array(path)
        back = pickle.loads(pickle.dumps(arr))
        assert isinstance(pipeline_of(back), fz.CodecPipeline)
        np.testing.assert_array_equal(back[:], arr[:])


def test_docstring_examples():
    # The classes say they live in fixedutf32.zarr; their methods live in the
    # private modules, so each class is searched on its own.
    import doctest
    import warnings

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(fz)
    for cls in (fz.BytesCodec, fz.CodecPipeline, fz.StrictFixedLengthUTF32):
        tests += finder.find(cls, module=False, globs=dict(vars(fz)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", zarr.errors.UnstableSpecificationWarning)
        for test in tests:
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 60 and result.failed == 0


# ---------------------------------------------------------------------------
# Whole chunks that are one block of the result go straight into it

# (shape, chunks) whose chunks are contiguous in the result: 1-D, and 2-D with
# chunks spanning whole rows (C) or whole columns (F-ordered V2 results).
DIRECT = {
    "v3-raw-little": ((50,), (8,)),
    "v3-raw-big": ((6, 10), (2, 10)),
    "v3-zstd-little": ((50,), (8,)),
    "v3-blosc-big": ((50,), (8,)),
    "v3-gzip-big": ((6, 10), (2, 10)),
    "v3-crc32c-little": ((50,), (8,)),
    "v2-big-F": ((6, 10), (6, 2)),
    "v2-zstd-big-C": ((50,), (8,)),
    "v2-blosc-little-F": ((6, 10), (6, 4)),
}


@pytest.fixture
def direct_calls(monkeypatch):
    """Count the chunks that took the direct path (an observer; the code runs as is)."""
    # Private on purpose: the path a chunk took shows nowhere in the public results.
    import fixedutf32.zarr._jobs as jobs_module

    calls = []
    target = jobs_module.direct_block

    def observed(*args):
        result = target(*args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(jobs_module, "direct_block", observed)
    return calls


@pytest.mark.parametrize("layout", sorted(DIRECT))
def test_whole_chunks_land_in_result(tmp_path, layout, direct_calls):
    shape, chunks = DIRECT[layout]
    data = make_data(5, shape)
    stock = create(tmp_path / "a", layout, shape=shape, chunks=chunks)
    stock[: shape[0] - 1] = data[: shape[0] - 1]  # the last chunk (row) partly missing
    with fz.enabled():
        arr = zarr.open_array(tmp_path / "a")
        for sel in (np.s_[:], np.s_[8:40], np.s_[2:4], np.s_[1:]):
            np.testing.assert_array_equal(arr[sel], stock[sel], err_msg=str(sel))
        assert any(direct_calls) and not all(direct_calls)
        # and the chunk with a bad element raises with its key and index
        bad = (3,) if len(shape) == 1 else (3, 1)
        arr[bad] = "ok"
    stock[bad] = BAD_TEXT
    with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
        zarr.open_array(tmp_path / "a")[:]
    assert info.value.array_index == bad


def test_bad_element_deep_in_a_large_local_chunk(tmp_path):
    # Local raw chunks are read and decoded block by block: the index still
    # counts from the chunk's start.
    n = 3 * 20000
    arr = zarr.create_array(
        tmp_path / "a",
        shape=(n,),
        chunks=(20000,),
        dtype=">U4",
        serializer=BytesCodec(endian="big"),
        compressors=None,
    )
    data = np.array(["abcd"] * n)
    data[20000 + 17001] = "x\udfff"
    arr[:] = data
    with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
        zarr.open_array(tmp_path / "a")[:]
    err = info.value
    assert (err.chunk_key, err.index, err.position, err.array_index) == ("c/1", 17001, 1, (37001,))
    with fz.enabled():
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "a")[:20000], data[:20000])


def test_codec_sync_and_async_hooks():
    # zarr 3.1.6 has sync hooks next to the async ones that 3.1.0..3.1.5 call.
    # The underscores are zarr's: these are the codec methods zarr itself calls.
    import asyncio

    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    proto = default_buffer_prototype()
    codec = fz.BytesCodec(endian="big")
    for dtype, values in [
        (zarr.dtype.FixedLengthUTF32(length=2), ["ab", "😀"]),
        (zarr.dtype.Int32(), [1, -2]),
    ]:
        spec = ArraySpec((2,), dtype, dtype.default_scalar(), ArrayConfig.from_dict({}), proto)
        array = proto.nd_buffer.from_numpy_array(np.array(values, dtype=dtype.to_native_dtype()))
        raw = np.array(values, dtype=dtype.to_native_dtype().newbyteorder(">")).tobytes()
        for encoded in (
            codec._encode_sync(array, spec),
            asyncio.run(codec._encode_single(array, spec)),
        ):
            assert encoded.to_bytes() == raw
        for decoded in (
            codec._decode_sync(proto.buffer.from_bytes(raw), spec),
            asyncio.run(codec._decode_single(proto.buffer.from_bytes(raw), spec)),
        ):
            assert decoded.as_numpy_array().tolist() == values
    spec = ArraySpec(
        (1,), zarr.dtype.FixedLengthUTF32(length=1), "", ArrayConfig.from_dict({}), proto
    )
    bad = proto.buffer.from_bytes(b"\x00\x00\xd8\x00")
    for decode in (codec._decode_sync, lambda b, s: asyncio.run(codec._decode_single(b, s))):
        with pytest.raises(InvalidCodePointError):
            decode(bad, spec)


# ---------------------------------------------------------------------------
# 0-d and one-element arrays: one chunk, the whole result

# zarr-python cannot shard a 0-d array (its shard index code fails, stock too);
# the nested-shards layout's sharding codecs are laid out for 2-D chunks.
TINY = [
    (layout, shape)
    for layout in sorted(LAYOUTS)
    for shape in [(), (1,), (1, 1)]
    if not (shape == () and "sharded" in layout) and "nested" not in layout
]


def _tiny(layout, shape):
    """create() overrides for a ``shape`` array in one chunk of ``layout``."""
    overrides = dict(shape=shape, chunks=shape)
    if "shards" in LAYOUTS[layout]:
        overrides["shards"] = shape
    if "filters" in LAYOUTS[layout]:
        overrides["filters"] = [TransposeCodec(order=tuple(range(len(shape)))[::-1])]
    return overrides


@pytest.mark.parametrize("store", ["local", "memory"])
@pytest.mark.parametrize("layout,shape", TINY)
def test_zero_d_and_one_element_arrays(tmp_path, layout, shape, store, direct_calls):
    # A 0-d result indexed with () is a NumPy scalar, a copy: the chunk must
    # still land in the result (it read back as '' before), at its full size
    # (a V2 '>U4' zstd chunk was decompressed into 4 bytes, not 16).
    def open_store(name):
        return tmp_path / name if store == "local" else memory[name]

    memory = {name: zarr.storage.MemoryStore() for name in ("stock", "ours", "empty")}
    value = np.array("😀x", dtype=LAYOUTS[layout].get("dtype", "<U4")).reshape(shape)
    stock = create(open_store("stock"), layout, **_tiny(layout, shape))
    stock[...] = value
    create(open_store("empty"), layout, **_tiny(layout, shape))
    selections = [Ellipsis, ()] + [(0,) * len(shape)] * bool(shape)
    expected = [zarr.open_array(open_store("stock"))[sel] for sel in selections]
    with integration("pipeline"):
        ours = create(open_store("ours"), layout, **_tiny(layout, shape))
        ours[...] = value
        for name in ("stock", "ours"):
            arr = zarr.open_array(open_store(name))
            for sel, want in zip(selections, expected):
                got = arr[sel]
                assert type(got) is type(want) and got.dtype == want.dtype, (name, sel)
                np.testing.assert_array_equal(got, want, err_msg=f"{name} {sel}")
                np.testing.assert_array_equal(got, value[sel], err_msg=f"{name} {sel}")
        assert zarr.open_array(open_store("empty"))[...] == FILL  # a missing chunk
    assert zarr.open_array(open_store("ours"))[...] == value
    if "sharded" not in layout:  # zarr's pipeline reads the shards
        assert any(direct_calls)


# ---------------------------------------------------------------------------
# Equality with zarr's own classes: the same JSON compares equal


@pytest.mark.parametrize("endian", ["little", "big", None])
def test_bytes_codec_equals_zarrs(endian):
    ours, theirs = fz.BytesCodec(endian=endian), BytesCodec(endian=endian)
    assert ours == theirs and theirs == ours
    assert not (ours != theirs or theirs != ours)
    assert hash(ours) == hash(theirs)
    assert len({ours, theirs}) == 1
    other = "big" if endian != "big" else "little"
    for a, b in [(ours, BytesCodec(endian=other)), (fz.BytesCodec(endian=other), theirs)]:
        assert a != b and b != a
    assert ours != ZstdCodec() and ZstdCodec() != ours
    assert ours != endian


@pytest.mark.parametrize("dtype", ["u1", "<i4", "<U4"])
@pytest.mark.parametrize("sharded", [False, True])
def test_metadata_equals_zarrs(tmp_path, dtype, sharded):
    # create_array builds zarr's BytesCodec; open_array parses "bytes" through
    # the registry into fixedutf32.zarr.BytesCodec.
    kwargs = dict(
        shape=(4, 4),
        chunks=(2, 2),
        dtype=dtype,
        serializer=BytesCodec(endian="big") if dtype != "u1" else "auto",
    )
    if sharded:
        kwargs["shards"] = (4, 4)
    stock = zarr.create_array(tmp_path / "a", **kwargs)
    with fz.enabled():
        ours = zarr.open_array(tmp_path / "a")
        created = zarr.create_array(tmp_path / "b", **kwargs)
        assert created == zarr.open_array(tmp_path / "b")  # pipeline and metadata
        assert zarr.open_array(tmp_path / "a") == ours  # two opens
        if sharded:
            # unpickling parses the inner codecs through the registry
            sharding = stock.metadata.codecs[0]
            back = pickle.loads(pickle.dumps(sharding))
            assert type(back.index_codecs[0]) is fz.BytesCodec
            assert back == sharding and sharding == back
    assert ours.metadata == stock.metadata and stock.metadata == ours.metadata


def test_pipeline_equality_and_hash(tmp_path):
    stock_store(tmp_path, "v3-zstd-little")
    with fz.enabled():
        one, two = (pipeline_of(zarr.open_array(tmp_path / "stock")) for _ in range(2))
    assert one == two and hash(one) == hash(two)
    assert len({one, two}) == 1
    other = fz.CodecPipeline.from_codecs([BytesCodec(endian="big")])
    assert one != other
    # zarr's own pipeline for the same codecs is another class, as zarr's own
    # classes compare
    assert one != one.fallback and one.fallback != one


def test_group_members_equal_created_arrays(tmp_path):
    with fz.enabled():
        group = zarr.open_group(tmp_path / "g", mode="w")
        arrays = {
            name: group.create_array(name, shape=(3,), dtype=dtype)
            for name, dtype in [("a", "u1"), ("b", "<u2"), ("s", "<U2")]
        }
        members = dict(group.arrays())
        assert members == arrays
        assert group["b"] == arrays["b"]
        assert zarr.open_group(tmp_path / "g") == group


# ---------------------------------------------------------------------------
# Partial reads by byte range: raw local chunks, a small part of each selected


@pytest.fixture
def ranged_reads(monkeypatch):
    """The chunks read by byte range (an observer; the code runs as is)."""
    # Private on purpose: which way a chunk was read shows nowhere in the results.
    import fixedutf32.zarr._read as read_module

    calls = []
    decide = read_module._runs

    def observed(*args):
        runs = decide(*args)
        calls.append(runs is not None)
        return runs

    monkeypatch.setattr(read_module, "_runs", observed)
    return calls


RANGED = {
    "1-D slice": (lambda a: a[1000:1100], (5000,), (2048,)),
    "1-D random": (lambda a: a.vindex[np.array([3, 2047, 2048, 4999, 17, 4000])], (5000,), (2048,)),
    "1-D one": (lambda a: a[4321], (5000,), (2048,)),
    "2-D orthogonal": (lambda a: a.oindex[[0, 5, 99], [1, 50, 63]], (100, 64), (50, 64)),
    "2-D column": (lambda a: a[:, 7], (100, 64), (50, 64)),
    "2-D block": (lambda a: a[10:12, 3:9], (100, 64), (50, 64)),
    "2-D mask": (lambda a: a.vindex[np.eye(100, 64, dtype=bool)], (100, 64), (50, 64)),
}


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("name", sorted(RANGED))
def test_small_selections_read_by_byte_range_equal_stock(
    tmp_path, name, endian, order, ranged_reads
):
    select, shape, chunks = RANGED[name]
    data = make_data(7, shape)
    arr = zarr.create_array(
        tmp_path / "a", shape=shape, chunks=chunks, dtype=f"{endian}U4", zarr_format=2,
        order=order, compressors=None, fill_value="",
    )  # fmt: skip
    arr[:] = data
    expected = select(zarr.open_array(tmp_path / "a"))
    with fz.enabled():
        got = select(zarr.open_array(tmp_path / "a"))
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)
    # Elements about 1 KiB apart make one run with the gaps between (4 KiB at
    # most): above a quarter of the chunk, it is read whole instead, which
    # costs less than a read per element. In F order the mask's second chunk
    # is sparse enough (a fifth), its first is not.
    dense = name in ("2-D column", "2-D mask") and order == "C"
    assert any(ranged_reads) != dense, ranged_reads


def test_byte_range_reads_check_what_they_return(tmp_path, ranged_reads):
    arr = zarr.create_array(
        tmp_path / "a", shape=(4096,), chunks=(4096,), dtype="<U2",
        serializer=BytesCodec(endian="big"), compressors=None, fill_value="",
    )  # fmt: skip
    arr[:] = "ok"
    chunk = tmp_path / "a" / "c" / "0"
    raw = bytearray(chunk.read_bytes())
    raw[8 * 3000 + 4 : 8 * 3000 + 8] = (0xDFFF).to_bytes(4, "big")  # element 3000, position 1
    chunk.write_bytes(bytes(raw))
    with fz.enabled():
        arr = zarr.open_array(tmp_path / "a")
        assert arr[10:20].tolist() == ["ok"] * 10  # the bad element is not read
        with pytest.raises(fz.InvalidChunkCodePointError) as info:
            arr[2990:3010]
        assert arr.vindex[[5, 6]].tolist() == ["ok", "ok"]
        with pytest.raises(fz.InvalidChunkCodePointError) as again:
            arr.vindex[[5, 3000]]
    for err in (info.value, again.value):
        assert (err.chunk_key, err.index, err.position, err.array_index) == (
            "c/0",
            3000,
            1,
            (3000,),
        )
    assert all(ranged_reads)
    # a file of the wrong size is refused before any range is read
    chunk.write_bytes(bytes(raw[:-8]))
    with fz.enabled(), pytest.raises(fixedutf32.ChunkSizeError, match="chunk c/0 holds"):
        zarr.open_array(tmp_path / "a")[5]
    chunk.unlink()
    with fz.enabled():
        assert zarr.open_array(tmp_path / "a")[10:12].tolist() == ["", ""]


# ---------------------------------------------------------------------------
# Sharded arrays, read by the pipeline itself

SHARDED = {
    # name: (shape, inner chunks, shards, zarr's subchunk order where it has one)
    "1-D": ((1000,), (16,), (128,)),
    "2-D": ((37, 50), (4, 5), (8, 10)),
    "3-D": ((9, 8, 7), (2, 2, 3), (4, 4, 6)),
}
SHARD_SELECTIONS = {
    "all": lambda a: a[...],
    "slice": lambda a: a[tuple(slice(1, max(2, n // 2)) for n in a.shape)],
    "one": lambda a: a[tuple(n - 2 for n in a.shape)],
    "orthogonal": lambda a: a.oindex[tuple([0, n - 1, n // 3] for n in a.shape)],
    "coordinate": lambda a: a.vindex[tuple(np.array([0, n - 1, n // 3]) for n in a.shape)],
    "strided": lambda a: a[tuple(slice(None, None, 3) for _ in a.shape)],
}


@pytest.fixture
def shard_ranges(monkeypatch):
    """The inner chunks the partial-shard reads fetched (an observer)."""
    # Private on purpose: which inner chunks were read shows nowhere in the results.
    import fixedutf32.zarr._read as read_module

    fetched = []
    touched = read_module._touched_chunks

    def observed(*args):
        result = touched(*args)
        fetched.append(result)
        return result

    monkeypatch.setattr(read_module, "_touched_chunks", observed)
    return fetched


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", sorted(SHARDED))
def test_sharded_reads_equal_stock(tmp_path, name, compressed, endian, shard_ranges):
    shape, chunks, shards = SHARDED[name]
    rng = np.random.default_rng(3)
    data = np.array(TEXT, dtype="<U4")[rng.integers(0, len(TEXT), shape)]
    arr = zarr.create_array(
        tmp_path / "a", shape=shape, chunks=chunks, shards=shards, dtype="<U4", fill_value=FILL,
        serializer=BytesCodec(endian=endian), compressors=[ZstdCodec()] if compressed else None,
    )  # fmt: skip
    # the last shard along the first axis partly written: its missing inner
    # chunks read as the fill value; edge shards cut by the array's shape
    region = (slice(0, shape[0] - chunks[0] - 1),)
    arr[region] = data[region]
    stock = zarr.open_array(tmp_path / "a")
    with fz.enabled():
        ours = zarr.open_array(tmp_path / "a")
        for kind, select in SHARD_SELECTIONS.items():
            np.testing.assert_array_equal(select(ours), select(stock), err_msg=kind)


@pytest.mark.parametrize("name", sorted(SHARDED))
def test_sharded_read_names_the_shard_and_the_element(tmp_path, name):
    shape, chunks, shards = SHARDED[name]
    arr = zarr.create_array(
        tmp_path / "a", shape=shape, chunks=chunks, shards=shards, dtype="<U2", fill_value="",
        serializer=BytesCodec(endian="little"), compressors=None,
    )  # fmt: skip
    arr[...] = "ok"
    bad = tuple(n - 2 for n in shape)
    stock = zarr.open_array(tmp_path / "a")
    stock[bad] = "a\ud800"  # stock zarr writes it without a word
    shard_index = tuple(b // s for b, s in zip(bad, shards))
    key = "c/" + "/".join(map(str, shard_index))
    in_chunk = tuple(b % c for b, c in zip(bad, chunks))
    element = int(np.ravel_multi_index(in_chunk, chunks))
    for select in (lambda a: a[...], lambda a: a[bad], lambda a: a.vindex[tuple([b] for b in bad)]):
        with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
            select(zarr.open_array(tmp_path / "a"))
        err = info.value
        assert (err.chunk_key, err.array_index, err.index, err.position) == (key, bad, element, 1)
    with fz.enabled():  # elsewhere reads fine
        assert zarr.open_array(tmp_path / "a")[(0,) * len(shape)] == "ok"


@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
def test_a_small_selection_of_a_large_shard_reads_the_chunks_it_touches(
    tmp_path, compressed, shard_ranges
):
    # 2 MiB shards of 16 KiB inner chunks, Morton order (zarr 3.4's default) in 2-D,
    # of text that zstd cannot shrink below the size read whole (256 KiB)
    shape, chunks, shards = (256, 2048), (32, 32), (256, 512)
    rng = np.random.default_rng(4)
    units = rng.integers(0x4E00, 0x9FFF, (*shape, 4), dtype=np.uint32)
    data = units.astype("<u4").view("<U4").reshape(shape)
    arr = zarr.create_array(
        tmp_path / "a", shape=shape, chunks=chunks, shards=shards, dtype="<U4", fill_value="",
        compressors=[ZstdCodec()] if compressed else None,
    )  # fmt: skip
    arr[:] = data
    arr[:32, :32] = ""  # an inner chunk of fill values only: not stored
    stock = zarr.open_array(tmp_path / "a")
    selections = {
        "a few elements": lambda a: a.vindex[[0, 5, 130, 255], [0, 40, 300, 2047]],
        "a row": lambda a: a[70, 100:400],
        "a block": lambda a: a[10:40, 20:50],
        "the empty chunk": lambda a: a[1:3, 1:3],
    }
    with fz.enabled():
        ours = zarr.open_array(tmp_path / "a")
        for kind, select in selections.items():
            shard_ranges.clear()
            np.testing.assert_array_equal(select(ours), select(stock), err_msg=kind)
            assert shard_ranges, kind  # read by range, not whole
            per_shard = (256 // 32) * (512 // 32)
            assert all(0 < len(touched) < per_shard for touched in shard_ranges), kind
        shard_ranges.clear()
        np.testing.assert_array_equal(ours[:, :512], stock[:, :512])  # a whole shard
        assert not shard_ranges
