"""fixedutf32.open_array against zarr-python, and KeyReader's needed=, target= and span=.

Arrays are written by zarr-python (V2 and V3, both byte orders, C and F
order, zstd, sharded, edge chunks, chunks never written) and read through
the reader equal to zarr-python's own reading; every code unit is checked,
errors name the key and the coordinates as fixedutf32's zarr pipeline does,
and hostile stores are refused as ``check`` refuses them.
"""

import doctest
import os
import zipfile

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="open_array opens stores with zarr-python")
numcodecs = pytest.importorskip("numcodecs")

import fixedutf32.array  # noqa: E402
from fixedutf32._source.files import ChunkFile  # noqa: E402
from fixedutf32.array import open_array  # noqa: E402
from fixedutf32.errors import (  # noqa: E402
    ChunkSizeError,
    CorruptChunkError,
    InvalidChunkCodePointError,
    MetadataError,
    StoreError,
)
from fixedutf32.store import check  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

DATA = np.array([f"é{i}x" * (i % 4) for i in range(7 * 9)], "<U12").reshape(7, 9)
SELECTIONS = [
    ...,
    (slice(1, 6), slice(2, 9)),
    (3,),
    (slice(None, None, -2), 4),
    (slice(2, 3), slice(8, 0, -3)),
    (-1, -1),
    (slice(5, 5),),
    (Ellipsis, 0),
]


def write(path, data, *, zarr_format=3, endian="<", order="C", zstd=False, **kwargs):
    """``data`` as zarr-python writes it (rows 5 and 6 only partly: chunks left unwritten)."""
    if zarr_format == 3:
        kwargs["serializer"] = zarr.codecs.BytesCodec(endian="little" if endian == "<" else "big")
        if order == "F":
            kwargs["filters"] = [zarr.codecs.TransposeCodec(order=tuple(range(data.ndim))[::-1])]
        compressor = zarr.codecs.ZstdCodec() if zstd else None
    else:
        kwargs["order"] = order
        compressor = numcodecs.Zstd() if zstd else None
    array = zarr.create_array(
        str(path),
        shape=data.shape,
        dtype=data.dtype.newbyteorder(endian),
        zarr_format=zarr_format,
        compressors=compressor,
        fill_value="fill",
        **kwargs,
    )
    if data.ndim == 2:
        array[:5] = data[:5]
        array[5:, :3] = data[5:, :3]
    else:
        array[: data.size * 2 // 3] = data[: data.size * 2 // 3]
    return array


LAYOUTS = [
    pytest.param(
        dict(zarr_format=f, endian=e, order=o, zstd=z),
        shards,
        id=f"v{f}-{e}-{o}-{z and 'zstd'}-{shards and 'shards'}",
    )
    for f in (2, 3)
    for e in ("<", ">")
    for o in ("C", "F")
    for z in (False, True)
    for shards in ((None, (4, 6)) if f == 3 else (None,))  # V2 has no shards
]


@pytest.mark.parametrize("layout, shards", LAYOUTS)
def test_reads_what_zarr_reads(tmp_path, layout, shards):
    expected = write(tmp_path, DATA, chunks=(2, 3), shards=shards, **layout)[...]
    with open_array(tmp_path) as array:
        assert (array.shape, array.chunks, array.shards) == ((7, 9), (2, 3), shards)
        assert array.dtype == np.dtype("=U12") and array.fill_value == "fill"
        for selection in SELECTIONS:
            want = expected[selection]
            for threads in (1, 2):
                got = array.read(selection, threads=threads)
                assert got.dtype == array.dtype and got.shape == want.shape
                assert (got == want).all(), selection
                out = np.full(want.shape, "sentinel", array.dtype)
                assert array.read(selection, out=out, threads=threads) is out
                assert (out == want).all()
            assert array.read_arrow(selection).to_pylist() == want.ravel().tolist()
        assert (array[...] == np.asarray(array)).all()


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("zstd", [False, True])
def test_one_dimensional_shards_with_an_edge_and_missing_chunks(tmp_path, endian, zstd):
    data = np.array([f"s{i}é" * (i % 3) for i in range(1003)], "<U8")
    array = write(tmp_path, data, endian=endian, zstd=zstd, chunks=(10,), shards=(100,))
    expected = array[...]
    pa = pytest.importorskip("pyarrow")
    with open_array(tmp_path) as stored:
        for selection in [..., slice(100, 300), slice(95, 905), slice(None, None, 7), 1002]:
            assert (stored.read(selection, threads=2) == expected[selection]).all()
        strings = stored.read_arrow(threads=2)
        assert pa.array(strings).to_pylist() == expected.tolist()
        large = pa.array(stored.read_arrow(slice(5, 950), large=True, threads=3))
        assert large.type == pa.large_string() and large.to_pylist() == expected[5:950].tolist()


@pytest.mark.parametrize("shards", [None, (100,)], ids=["chunks", "shards"])
@pytest.mark.parametrize("endian", ["<", ">"])
def test_one_axis_into_your_out_is_staged_and_a_failing_chunk_left_as_it_was(
    tmp_path, shards, endian
):
    # Into a caller's out, runs of chunks (and whole shards) are read in C into a buffer of
    # ours, then copied: the same values as zarr, and a chunk that fails is never written.
    data = np.array([f"s{i}é" * (i % 3) for i in range(1003)], "<U8")
    array = write(tmp_path, data, endian=endian, chunks=(10,), shards=shards)  # 2/3 written
    expected = array[...]
    with open_array(tmp_path) as stored:
        for selection in [..., slice(100, 300), slice(95, 905), slice(0, 1000), slice(3, 4)]:
            for threads in (1, 2):
                out = np.full(expected[selection].shape, "sentinel", stored.dtype)
                assert stored.read(selection, out=out, threads=threads) is out
                assert (out == expected[selection]).all(), (selection, threads)
    key = "c/20" if shards is None else "c/2"
    plant(tmp_path, key, 9, length_bytes=32, endian=endian)  # chunk 20 (its shard's first)
    with open_array(tmp_path) as stored:
        for threads in (1, 2):
            out = np.full(1003, "sentinel", stored.dtype)
            with pytest.raises(InvalidChunkCodePointError) as caught:
                stored.read(out=out, threads=threads)
            assert (caught.value.chunk_key, caught.value.array_index) == (key, (209,))
            assert (out[200:210] == "sentinel").all()


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_arrow_of_raw_chunk_files_transcoded_in_c(tmp_path, monkeypatch, endian, zarr_format):
    # Every chunk stored: runs of files transcoded in C, pairs of runs meeting in the middle of
    # one buffer (threads 2 and 4), a lone run forward (1, 3, 5), partial first and last chunks.
    from fixedutf32._source.reader import KeyReader

    data = np.array([f"s{i}é😀" * (i % 4) for i in range(1003)], "<U12")
    array = write(tmp_path, data, endian=endian, zarr_format=zarr_format, chunks=(10,))
    array[...] = data
    reached = []
    read_utf8 = KeyReader.read_utf8

    def spy(*args, **kwargs):
        reached.append(read_utf8(*args, **kwargs))
        return reached[-1]

    monkeypatch.setattr(KeyReader, "read_utf8", spy)
    with open_array(tmp_path) as stored:
        for selection in [..., slice(5, 995), slice(0, 7), slice(998, 1003), slice(13, 14)]:
            want = data[selection].tolist()
            for threads in (1, 2, 3, 4, 5):
                for large in (False, True):
                    reached.clear()
                    strings = stored.read_arrow(selection, threads=threads, large=large)
                    assert strings.to_pylist() == want, (selection, threads)
                    assert reached and None not in reached  # the C way, not the careful one
                    assert strings.offsets[0] == 0 and strings.offsets[-1] == strings.values.size
    # Chunks not stored read as the fill value, still in C (one in each run of four threads).
    for chunk in (5, 30, 50, 80, 99):
        (tmp_path / (f"c/{chunk}" if zarr_format == 3 else str(chunk))).unlink()
    with open_array(tmp_path) as stored:
        for selection in [..., slice(45, 1003), slice(995, 1000), slice(50, 52)]:
            for threads in (1, 2, 4):
                reached.clear()
                got = stored.read_arrow(selection, threads=threads).to_pylist()
                assert got == array[selection].tolist() and None not in reached
    assert array[500:510].tolist() == ["fill"] * 10
    # An array never written (V3: no chunk directory either) reads as its fill value, in C.
    empty = zarr.create_array(
        str(tmp_path / "empty"),
        shape=(95,),
        chunks=(10,),
        dtype="<U3",
        fill_value="fé",
        zarr_format=zarr_format,
        compressors=None,
    )
    with open_array(tmp_path / "empty") as stored:
        reached.clear()
        assert stored.read_arrow(threads=2).to_pylist() == empty[...].tolist() == ["fé"] * 95
        assert reached and None not in reached
    # Runs longer than one call's window of files, backward and forward, with gaps.
    many = zarr.create_array(
        str(tmp_path / "many"),
        data=data[:700],
        chunks=(2,),
        zarr_format=zarr_format,
        compressors=None,
        fill_value="fill",
    )
    for chunk in (0, 1, 70, 100, 101, 200, 349):
        (tmp_path / "many" / (f"c/{chunk}" if zarr_format == 3 else str(chunk))).unlink()
    with open_array(tmp_path / "many") as stored:
        for threads in (1, 2, 3):
            reached.clear()
            got = stored.read_arrow(slice(1, 699), threads=threads).to_pylist()
            assert got == many[1:699].tolist() and None not in reached
    # A chunk that is not valid sends the read the careful way, which names it.
    key = "c/20" if zarr_format == 3 else "20"
    plant(tmp_path, key, 9, endian=endian)  # read by the backward run of two
    with open_array(tmp_path) as stored, pytest.raises(InvalidChunkCodePointError) as caught:
        stored.read_arrow(slice(100, 900), threads=2)
    assert (caught.value.chunk_key, caught.value.array_index) == (key, (209,))


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("zstd", [False, True])
def test_arrow_of_one_axis_chunk_by_chunk(tmp_path, endian, zstd):
    data = np.array([f"s{i}é😀" * (i % 3) for i in range(1003)], "<U12")
    array = write(tmp_path, data, endian=endian, zstd=zstd, chunks=(10,))
    array[900:] = data[900:]  # chunks 67..89 never written (fill), the edge chunk written
    expected = array[...]
    with open_array(tmp_path) as stored:
        for selection in [..., slice(0, 0), slice(5, 995), slice(660, 1003), slice(888, 889)]:
            for threads in (1, 3):
                got = stored.read_arrow(selection, threads=threads).to_pylist()
                assert got == expected[selection].tolist(), selection
    if zstd:
        return
    plant(tmp_path, "c/40", 3, endian=endian)
    with open_array(tmp_path) as stored:
        with pytest.raises(InvalidChunkCodePointError) as from_arrow:
            stored.read_arrow(slice(100, 1003))
        with pytest.raises(InvalidChunkCodePointError) as from_read:
            stored.read()
    for error in (from_arrow.value, from_read.value):
        assert (error.chunk_key, error.index, error.array_index) == ("c/40", 3, (403,))


def test_stores_by_path_zip_url_and_object(tmp_path):
    write(tmp_path / "a.zarr", DATA, chunks=(2, 3))
    expected = zarr.open_array(str(tmp_path / "a.zarr"))[...]
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as archive:
        for root, _, files in os.walk(tmp_path / "a.zarr"):
            for name in files:
                full = os.path.join(root, name)
                archive.write(full, os.path.relpath(full, tmp_path / "a.zarr"))
    memory = zarr.storage.MemoryStore()
    zarr.create_array(memory, name="g/a", data=DATA, chunks=(3, 3))
    for store, path in [
        (tmp_path / "a.zarr", ""),
        (str(tmp_path / "a.zip"), ""),
        (f"file://{tmp_path / 'a.zarr'}", ""),
        (zarr.storage.LocalStore(tmp_path / "a.zarr"), ""),
    ]:
        with open_array(store, path) as array:
            assert (array.read(threads=3) == expected).all(), store
    zarr.create_array("memory://test-array", data=DATA, chunks=(2, 2))
    with open_array("memory://test-array") as array:  # a store read with get(), on 16 threads
        assert (array[::-1, 1:] == DATA[::-1, 1:]).all()
        assert array.read_arrow(0).to_pylist() == DATA[0].tolist()
    with open_array(memory, "g/a") as array:
        assert (array[2:, 1] == DATA[2:, 1]).all() and array.path == "g/a"
    with pytest.raises(ValueError, match="storage_options apply to a URL"):
        open_array(tmp_path / "a.zarr", storage_options={"anon": True})


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zero_dimensional(tmp_path, zarr_format):
    written = zarr.create_array(tmp_path, shape=(), dtype=">U3", zarr_format=zarr_format)
    written[()] = "héé"
    with open_array(tmp_path) as array:
        assert array.shape == () and array[()].shape == () and array[...] == "héé"
        assert array.read_arrow().to_pylist() == ["héé"]


def test_refuses_what_is_not_a_string_array(tmp_path):
    zarr.create_group(str(tmp_path / "g"))
    zarr.create_array(str(tmp_path / "i"), shape=(3,), dtype="i4")
    with pytest.raises(StoreError, match="a Zarr group"):
        open_array(tmp_path / "g")
    with pytest.raises(StoreError, match="holds int32, not fixed_length_utf32"):
        open_array(tmp_path / "i")
    with pytest.raises(StoreError, match="no Zarr array at path 'x'"):
        open_array(tmp_path / "g", "x")
    with pytest.raises(StoreError, match=r"path '\.\./i'"):
        open_array(tmp_path / "g", "../i")


def test_selection_and_out_are_checked(tmp_path):
    write(tmp_path, DATA, chunks=(2, 3))
    array = open_array(tmp_path)
    for selection, error in [
        ((7,), IndexError),
        ((0, 0, 0), IndexError),
        ((..., ...), IndexError),
        ([1, 2], TypeError),
        (True, TypeError),
    ]:
        with pytest.raises(error):
            array[selection]
    with pytest.raises(TypeError, match="dtype"):
        array.read(out=np.empty((7, 9), "U3"))
    with pytest.raises(ValueError, match="shape"):
        array.read(0, out=np.empty((7, 9), array.dtype))
    with pytest.raises(ValueError, match="threads"):
        array.read(threads=0)


def plant(path, key, element, unit=0xD800, length_bytes=48, endian="<"):
    """A surrogate as code unit 1 of ``element`` of a raw chunk file."""
    raw = bytearray((path / key).read_bytes())
    assert element * length_bytes + 8 <= len(raw), "plant inside the file"
    raw[element * length_bytes + 4 : element * length_bytes + 8] = unit.to_bytes(
        4, "little" if endian == "<" else "big"
    )
    (path / key).write_bytes(bytes(raw))


def pipeline_error(path, selection):
    pipeline = {
        "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline",
        "codecs.bytes": "fixedutf32.zarr.BytesCodec",
    }
    with zarr.config.set(pipeline):
        array = zarr.open_array(str(path), mode="r")
        with pytest.raises(InvalidChunkCodePointError) as caught:
            array[selection]
    return caught.value


@pytest.mark.parametrize(
    "kwargs, key, element",
    [
        ({}, "c/1/2", 4),
        ({"order": "F"}, "c/1/2", 4),
        ({"shards": (4, 6)}, "c/0/1", 4),
        ({"zarr_format": 2, "order": "F", "endian": ">"}, "1.2", 5),
    ],
    ids=["chunks", "transposed", "shards", "v2-F-big"],
)
def test_errors_name_key_and_coordinates_as_the_pipeline_does(tmp_path, kwargs, key, element):
    write(tmp_path, DATA, chunks=(2, 3), **kwargs)
    if "shards" in kwargs:  # the first inner chunk of the shard (0, 1): element 4 of chunk (0, 3)
        offset = np.frombuffer((tmp_path / key).read_bytes()[-16 * 8 :], "<u8")[0]
        element += int(offset) // 48
    plant(tmp_path, key, element, endian=kwargs.get("endian", "<"))
    with open_array(tmp_path) as array:
        for threads in (1, 2):
            with pytest.raises(InvalidChunkCodePointError) as caught:
                array.read(threads=threads)
            with pytest.raises(InvalidChunkCodePointError):
                array.read_arrow(threads=threads)
    got = caught.value
    want = pipeline_error(tmp_path, ...)
    assert (got.chunk_key, got.array_index, got.code_point) == (key, want.array_index, 0xD800)
    assert (got.index, got.position) == (want.index, want.position)


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize("chunk", [10, 2000], ids=["small shards", "shards read in blocks"])
def test_a_whole_shard_read_at_once_names_its_errors_and_reads_an_edge_shard(
    tmp_path, endian, chunk
):
    data = np.array([f"v{i}" for i in range(101 * chunk)], "<U12")
    write(tmp_path, data, endian=endian, chunks=(chunk,), shards=(10 * chunk,))[:] = data
    with open_array(tmp_path) as array:  # 11 shards, the last of one chunk
        assert (array.read(threads=2) == data).all()
    element = 8 * chunk + 7  # element 7 of the 9th chunk of shard 3
    plant(tmp_path, "c/3", element, endian=endian)
    with open_array(tmp_path) as array, pytest.raises(InvalidChunkCodePointError) as caught:
        array.read()
    got, want = caught.value, pipeline_error(tmp_path, ...)
    assert (got.chunk_key, got.index, got.array_index) == ("c/3", 7, (30 * chunk + element,))
    assert (got.position, got.code_point) == (want.position, want.code_point)
    assert (got.index, got.array_index) == (want.index, want.array_index)


@pytest.mark.parametrize("endian", ["<", ">"])
@pytest.mark.parametrize(
    "count", [1000, (16 << 20) // 16 + 400], ids=["checked in place", "through a block in cache"]
)
def test_chunk_files_read_in_runs_fill_missing_ones_and_name_errors(tmp_path, endian, count):
    # A whole one-axis read goes through many chunk files in one call without the GIL; a
    # result of 16 MiB or more through a block in cache, written past the cache.
    data = np.array([f"v{i % 9999}" for i in range(count)], "<U4")
    write(tmp_path, data, endian=endian, chunks=(count // 100,))  # the last third not stored
    stock = zarr.open_array(str(tmp_path), mode="r")[...]
    with open_array(tmp_path) as array:
        for threads in (1, 2):
            assert (array.read(threads=threads) == stock).all()
    plant(tmp_path, "c/37", 5, length_bytes=16, endian=endian)
    with open_array(tmp_path) as array, pytest.raises(InvalidChunkCodePointError) as caught:
        array.read(threads=2)
    got, want = caught.value, pipeline_error(tmp_path, ...)
    assert (got.chunk_key, got.index, got.array_index) == ("c/37", 5, (37 * (count // 100) + 5,))
    assert (got.position, got.code_point, got.array_index) == (
        want.position,
        want.code_point,
        want.array_index,
    )


def test_a_failed_chunk_leaves_its_part_of_out_as_it_was(tmp_path):
    data = np.array([f"v{i}" for i in range(100)], "<U12")
    write(tmp_path, data, chunks=(10,))
    plant(tmp_path, "c/3", 7)
    out = np.full(100, "sentinel", "U12")
    with open_array(tmp_path) as array, pytest.raises(InvalidChunkCodePointError) as caught:
        array.read(out=out, threads=1)
    assert caught.value.array_index == (37,)
    assert (out[30:40] == "sentinel").all() and (out[:30] == data[:30]).all()


def check_reason(path, key):
    """What ``check`` says of the chunk ``key`` (the reason its problem gives)."""
    [problem] = [p for p in check(path).problems if p.key == key]
    return problem.message


def test_hostile_stores_get_the_refusals_of_check(tmp_path):
    data = np.array([f"v{i}" for i in range(40)], "<U4")
    write(tmp_path / "fifo", data, chunks=(10,))
    os.unlink(tmp_path / "fifo" / "c" / "1")
    os.mkfifo(tmp_path / "fifo" / "c" / "1")
    write(tmp_path / "short", data, chunks=(10,))
    (tmp_path / "short" / "c" / "2").write_bytes(bytes(12))
    write(tmp_path / "out", data, chunks=(10,))
    (tmp_path / "elsewhere").write_bytes(bytes(160))
    os.unlink(tmp_path / "out" / "c" / "0")
    os.symlink(tmp_path / "elsewhere", tmp_path / "out" / "c" / "0")
    for name, key, error in [
        ("fifo", "c/1", CorruptChunkError),
        ("short", "c/2", ChunkSizeError),
    ]:
        with open_array(tmp_path / name) as array, pytest.raises(error) as caught:
            array.read()
        assert str(caught.value) in check_reason(tmp_path / name, key)
    with open_array(tmp_path / "out") as array, pytest.raises(CorruptChunkError) as caught:
        array.read()
    assert "links outside the store" in str(caught.value) and "c/0" in str(caught.value)
    (tmp_path / "meta").mkdir()
    os.symlink(tmp_path / "out" / "zarr.json", tmp_path / "meta" / "zarr.json")
    with pytest.raises(MetadataError, match="links outside the store"):
        open_array(tmp_path / "meta")


def test_a_lying_zstd_frame_and_a_shard_smaller_than_its_index(tmp_path):
    data = np.array([f"v{i}" for i in range(40)], "<U4")
    write(tmp_path / "z", data, chunks=(10,), zstd=True)
    (tmp_path / "z" / "c" / "0").write_bytes(numcodecs.Zstd().encode(bytes(1 << 20)))
    write(tmp_path / "s", data, chunks=(10,), shards=(20,))
    (tmp_path / "s" / "c" / "1").write_bytes(bytes(8))
    for name, key in [("z", "c/0"), ("s", "c/1")]:
        with (
            open_array(tmp_path / name) as array,
            pytest.raises((CorruptChunkError, ChunkSizeError)) as caught,
        ):
            array.read()
        assert str(caught.value) in check_reason(tmp_path / name, key)


def test_a_selection_reads_only_the_inner_chunks_it_touches(tmp_path, monkeypatch):
    data = np.array([f"v{i}" for i in range(1000)], "<U4")
    data = write(tmp_path, data, chunks=(10,), shards=(500,))[...]
    reads = []
    read_at, read_scatter = ChunkFile.read_at, ChunkFile.read_scatter
    monkeypatch.setattr(
        ChunkFile, "read_at", lambda f, at, out: reads.append(len(out)) or read_at(f, at, out)
    )
    monkeypatch.setattr(  # a run of raw chunks, each to its place
        ChunkFile,
        "read_scatter",
        lambda f, at, outs: reads.append(sum(map(len, outs))) or read_scatter(f, at, outs),
    )
    with open_array(tmp_path) as array:
        assert (array[15:35] == data[15:35]).all()  # three neighbouring inner chunks
        assert len(reads) == 2  # the index, then the three chunks in one read
        reads.clear()
        # chunks 0 and 25 of the first shard (one read, across the gap), 50 of the second
        assert (array[::250] == data[::250]).all()
        assert sorted(reads) == [160, 804, 804, 26 * 160]


def test_key_reader_span_target_and_needed(tmp_path):
    data = np.array([f"v{i}" for i in range(100)], "<U4")
    write(tmp_path, data, chunks=(10,), shards=(40,))
    reader = open_array(tmp_path)._reader
    place = np.zeros(40 * 16, np.uint8)
    got = []

    def sink(index, block, error):
        got.append((index, error, np.shares_memory(np.frombuffer(block, np.uint8), place)))

    assert reader.read((0,), str(tmp_path), sink, span=lambda key: place) > 0
    assert [g[0] for g in got] == [(0,), (1,), (2,), (3,)] and all(g[2] for g in got)
    assert (place.view("<U4") == data[:40]).all()
    got.clear()
    reader.read((1,), str(tmp_path), sink, needed=[1, 3], target=lambda chunk: place[:160])
    assert got == [((5,), None, True)]  # chunk 7 is not stored


def test_docstring_examples():
    result = doctest.testmod(fixedutf32.array, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed
