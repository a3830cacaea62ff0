"""The chunk-source layer (fixedutf32._source): codec chains, frame checks,
grid keys and coordinates, shard indexes, safe local reads, block kernels.

Private on purpose: the layer every reader of stored chunks goes through;
its lying frames, bombs and hostile files are also run end to end through
``fixedutf32 check`` and ``convert`` in test_store_hostile.py.
"""

import os
import re
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest
from conftest import ADDRESS_SPACE_LIMITS
from hypothesis import given, settings
from hypothesis import strategies as st

numcodecs = pytest.importorskip("numcodecs", reason="codec chains need numcodecs (extra [zarr])")

from fixedutf32 import ChunkSizeError, CorruptChunkError, InvalidCodePointError  # noqa: E402
from fixedutf32._source import (  # noqa: E402
    DEFAULTS,
    ChunkDecoder,
    ChunkGrid,
    CodecChain,
    ElementLayout,
    KeyReader,
    ShardLayout,
    open_chunk_file,
    parse_codec,
    parse_codecs,
)
from fixedutf32.errors import MetadataError  # noqa: E402
from fixedutf32.metadata._model import parse_model  # noqa: E402

# --- codec JSON ------------------------------------------------------------------------------


def test_v2_and_v3_spellings_give_the_same_codec():
    pairs = [
        ({"name": "gzip", "configuration": {"level": 3}}, {"id": "gzip", "level": 3}),
        ({"name": "zstd"}, {"id": "zstd"}),
        (
            {"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "bitshuffle"}},
            {"id": "blosc", "cname": "lz4", "shuffle": 2},
        ),
        ({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}, {"id": "lz4"}),
    ]
    for v3, v2 in pairs:
        a, b = parse_codec(v3, 3), parse_codec(v2, 2)
        assert (a.id, a.config) == (b.id, {**b.config, **a.config}), (v3, v2)


def test_one_table_of_defaults_for_both_formats():
    # The bug: gzip's level was 5 in one map and 1 in another.
    assert parse_codec({"name": "gzip"}, 3).config == {"level": DEFAULTS["gzip"]["level"]}
    assert parse_codec({"id": "gzip"}, 2).config == {"level": DEFAULTS["gzip"]["level"]}
    assert parse_codec({"id": "gzip"}, 2).to_v3() == parse_codec("gzip", 3).to_v3()


def test_bad_codec_json_is_a_metadata_error():
    for codec, fmt, message in [
        ({"name": "bytes"}, 3, "expected a bytes-to-bytes codec this package runs"),
        ({"name": "gzip", "configuration": {"lvl": 1}}, 3, "only the keys ['level'] for gzip"),
        ({"name": "blosc", "configuration": {"shuffle": 7}}, 3, "noshuffle or shuffle"),
        ({"name": "blosc", "configuration": {"typesize": 0}}, 3, "an integer 1..255"),
        ({"level": 1}, 2, 'a numcodecs configuration {"id": ...}'),
        ([1], 3, "a codec object"),
    ]:
        with pytest.raises(MetadataError, match=re.escape(message)):
            parse_codec(codec, fmt)
    with pytest.raises(MetadataError, match="numcodecs cannot build the codec"):
        CodecChain(parse_codecs([{"id": "nosuchcodec"}], 2), 64)


def test_blosc_encodes_with_the_typesize_the_metadata_gives():
    data = np.arange(256, dtype="<u4").tobytes()
    for config, typesize in [({"typesize": 4}, 4), ({"typesize": 16}, 16), ({}, 4)]:
        spec = parse_codec({"name": "blosc", "configuration": config}, 3)
        frame = CodecChain((spec,), len(data)).encode(data)
        assert frame[3] == typesize
        assert bytes(CodecChain((spec,), len(data)).decode(frame, key="c/0")) == data
    # V2: the element size given to the chain (blosc's typesize is not V2 metadata)
    frame = CodecChain(parse_codecs([{"id": "blosc"}], 2), len(data), element_size=16).encode(data)
    assert frame[3] == 16


@pytest.mark.parametrize(
    "codecs", [["zstd"], ["gzip"], ["blosc"], [{"name": "numcodecs.lz4"}], ["crc32c", "zstd"]]
)
def test_decode_into_out_round_trip(codecs):
    data = np.arange(64, dtype="<u4").tobytes()
    chain = CodecChain(parse_codecs(codecs, 3), len(data))
    out = np.zeros(len(data), np.uint8)
    view = chain.decode(chain.encode(data), key="c/0", out=out)
    assert bytes(view) == data and bytes(out) == data
    assert chain.max_stored_nbytes > len(data)


# --- lying frames ----------------------------------------------------------------------------


def blosc_frame(nbytes, cbytes, held, memcpyed=False):
    """A blosc header with the sizes given, then bytes up to ``held``."""
    header = struct.pack("<BBBBIII", 2, 1, 2 if memcpyed else 0, 4, nbytes, 4096, cbytes)
    return (header + bytes(max(held - 16, 0)))[:held]


def zstd_rle_frame(total, declare=None):
    """A zstd frame of RLE blocks inflating to ``total`` bytes of 'a' (a few KB for GiBs)."""
    out = bytearray(b"\x28\xb5\x2f\xfd")
    if declare is None:
        out += bytes([0x00, 0x38])  # no content size; a window of 128 KiB
    else:
        out += bytes([0xC0, 0x38]) + struct.pack("<Q", declare)
    left = total
    while True:
        n = min(left, 131072)
        left -= n
        header = (left == 0) | (1 << 1) | (n << 3)
        out += header.to_bytes(3, "little") + b"a"
        if not left:
            return bytes(out)


def lz4_lying_frame(declare, holds):
    frame = bytearray(numcodecs.LZ4().encode(bytes(holds)))
    frame[:4] = struct.pack("<I", declare)
    return bytes(frame)


@pytest.mark.parametrize(
    "codec, frame, message",
    [
        ("blosc", blosc_frame(64, 64, 16), "the blosc header says the frame holds 64 bytes; 16"),
        ("blosc", blosc_frame(16 << 20, 80, 80), "the blosc frame declares 16777216 bytes"),
        ("blosc", blosc_frame(64, 10, 10), "a blosc frame starts with a 16-byte header"),
        ("blosc", blosc_frame(64, 40, 40, memcpyed=True), "copies its 64 bytes holds 80"),
        ("zstd", zstd_rle_frame(64, declare=2**30), "the zstd frame declares 1073741824 bytes"),
        ("zstd", zstd_rle_frame(2**30), "Destination buffer is too small"),
        ("zstd", b"\x28\xb5\x2f\xfd\x00", "the zstd frame header needs 6 bytes"),
        ("zstd", b"not zstd", "expected a zstd frame (magic number"),
        ("numcodecs.lz4", lz4_lying_frame(2**30, 64), "the lz4 frame declares 1073741824"),
        ("numcodecs.lz4", lz4_lying_frame(64, 48), "expected to decompress 64, got 48"),
        ("gzip", zlib.compress(bytes(1 << 20), wbits=31), "inflates past 64 bytes"),
        ("gzip", zlib.compress(bytes(60), wbits=31), "inflates to 60 bytes"),
        ("gzip", zlib.compress(bytes(64), wbits=31)[:-4], "is truncated"),
        ("gzip", zlib.compress(bytes(64), wbits=31) + b"x", "1 bytes follow the end"),
        ("numcodecs.zlib", b"\x78\x9c garbage", "zlib: error"),
    ],
)
def test_lying_frames_are_refused_with_the_reason(codec, frame, message):
    chain = CodecChain(parse_codecs([{"name": codec}], 3), 64)
    out = np.full(64, 7, np.uint8)
    with pytest.raises(CorruptChunkError, match=re.escape(message)) as info:
        chain.decode(frame, key="c/0", out=out)
    assert info.value.key == "c/0" and str(info.value).startswith("chunk c/0 is corrupt: ")


def run_limited(code, megabytes=400, timeout=60):
    """``code`` in a new interpreter with its address space limited (a bomb fails, not the host)."""
    import resource

    def limit():
        if ADDRESS_SPACE_LIMITS:  # not under AddressSanitizer (see conftest)
            resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )


@pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")
def test_bombs_are_refused_without_inflating_in_bounded_memory():
    # 1 GiB frames, declared and not, under a 400 MiB address space.
    code = f"""
    import sys
    sys.path.insert(0, {os.path.dirname(__file__)!r})
    from test_source import zstd_rle_frame, blosc_frame, lz4_lying_frame
    import zlib
    from fixedutf32 import CorruptChunkError
    from fixedutf32._source import CodecChain, parse_codecs
    frames = {{
        "zstd": [zstd_rle_frame(2**30, declare=2**30), zstd_rle_frame(2**30)],
        "blosc": [blosc_frame(2**30, 80, 80)],
        "numcodecs.lz4": [lz4_lying_frame(2**30, 64)],
        "gzip": [zlib.compress(bytes(64 << 20), wbits=31)],
    }}
    for name, found in frames.items():
        chain = CodecChain(parse_codecs([{{"name": name}}], 3), 64)
        for frame in found:
            try:
                chain.decode(frame, key="c/0")
            except CorruptChunkError as exc:
                print(name, "refused")
    """
    result = run_limited(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split().count("refused") == 5


# --- grid ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoding, separator, key",
    [("default", "/", "c/2/1"), ("default", ".", "c.2.1"), ("v2", ".", "2.1"), ("v2", "/", "2/1")],
)
def test_keys_both_ways(encoding, separator, key):
    grid = ChunkGrid((5, 4), (2, 3), encoding, separator)
    assert grid.key((2, 1)) == key and grid.parse_key(key) == (2, 1)
    every = {grid.key(index): index for index in grid.indices()}
    assert all(grid.parse_key(k) == i for k, i in every.items())
    for stray in ["", "c", "c/3/0", "c/0/2", "c/-1/0", "c/+1/0", "c/1/1/1", "zarr.json", "01.1"]:
        if stray not in every:
            assert grid.parse_key(stray.replace("/", separator)) is None, stray


def test_zero_d_and_empty_grids():
    assert ChunkGrid((), ()).key(()) == "c" and ChunkGrid((), (), "v2", ".").key(()) == "0"
    assert ChunkGrid((), (), "v2", ".").parse_key("0") == () and list(ChunkGrid((), ()).indices())
    assert ChunkGrid((0, 3), (2, 2)).chunk_count == 0 and not list(ChunkGrid((0,), (2,)).indices())
    huge = ChunkGrid((10**12,), (1,))
    assert huge.chunk_count == 10**12 and huge.parse_key("c/999999999999") == (10**12 - 1,)


@pytest.mark.parametrize("order", ["C", "F"])
def test_coordinates_match_numpy(order):
    grid = ChunkGrid((7, 5, 3), (3, 2, 2), order=order)
    for index in grid.indices():
        for element in range(grid.chunk_elements):
            local = np.unravel_index(element, grid.chunk_shape, order=order)
            expected = tuple(int(i * c + j) for i, c, j in zip(index, grid.chunk_shape, local))
            assert grid.coordinates(index, element) == expected


def test_bad_grids_are_refused():
    for args, error in [
        (((4,), (0,)), ValueError),
        (((4,), (2, 2)), ValueError),
        (((-1,), (2,)), ValueError),
        (((4.0,), (2,)), TypeError),
        (((True,), (2,)), ValueError),
    ]:
        with pytest.raises(error):
            ChunkGrid(*args)


# --- shard index -----------------------------------------------------------------------------


def shard(entries, chunks=b"", endian="<"):
    return chunks + np.array(entries, f"{endian}u8").tobytes()


def test_shard_index_entries_and_checks():
    layout = ShardLayout((2, 2))
    empty = 2**64 - 1
    good = shard([0, 4, empty, empty, 4, 4, empty, empty], b"abcdefgh")
    index = layout.read_index(good, key="c/0/0", max_chunk_nbytes=64)
    assert list(index.entries()) == [(0, 0, 4), (2, 4, 4)]
    for entries, message in [
        ([0, 9, empty, empty, 4, 4, empty, empty], "entry 0 points at bytes 0..9"),
        ([2**63, 2**63, empty, empty] * 2, "entry 0 points at bytes"),
        ([0, empty, empty, empty] * 2, "marks the chunk empty in one field only"),
        ([0, 8, empty, empty] * 2, "an inner chunk here holds at most 4 bytes"),
    ]:
        data = shard(entries, b"abcdefgh")
        limit = 4 if "at most 4" in message else 64
        with pytest.raises(CorruptChunkError, match=re.escape(message)):
            layout.read_index(data, key="c/0/0", max_chunk_nbytes=limit)
    with pytest.raises(
        ChunkSizeError,
        match="shard c/0/0 holds 20 bytes; the index of a shard of 4 chunks needs 64",
    ):
        layout.read_index(bytes(20), key="c/0/0", max_chunk_nbytes=64)


def test_shard_index_at_the_start_with_a_checksum():
    layout = ShardLayout((2,), "big", True, "start")
    index = numcodecs.CRC32C(location="end").encode(np.array([36, 4, 2**64 - 1, 2**64 - 1], ">u8"))
    data = bytes(index) + b"abcd"
    assert list(layout.read_index(data, key="c/0", max_chunk_nbytes=4).entries()) == [(0, 36, 4)]
    broken = bytearray(data)
    broken[3] ^= 1
    with pytest.raises(CorruptChunkError, match="crc32c does not match"):
        layout.read_index(bytes(broken), key="c/0", max_chunk_nbytes=4)
    pointing_into_index = (
        bytes(
            numcodecs.CRC32C(location="end").encode(np.array([0, 4, 2**64 - 1, 2**64 - 1], ">u8"))
        )
        + b"abcd"
    )
    with pytest.raises(CorruptChunkError, match=r"lie in bytes 36\.\.40"):
        layout.read_index(pointing_into_index, key="c/0", max_chunk_nbytes=4)


_EMPTY = 2**64 - 1


def _index_reference(pairs, size, index_nbytes, at_start, max_chunk):
    """What parse_index must find, entry by entry: an error's kind and entry, or the entries."""
    low, high = (index_nbytes, size) if at_start else (0, size - index_nbytes)
    for local, (offset, nbytes) in enumerate(pairs):
        if (offset == _EMPTY) != (nbytes == _EMPTY):
            return "marks the chunk empty", local
    for local, (offset, nbytes) in enumerate(pairs):
        held = not (offset == _EMPTY and nbytes == _EMPTY)
        if held and not (low <= offset <= high and nbytes <= high - offset and nbytes <= max_chunk):
            return "points at bytes", local
    return [(i, o, n) for i, (o, n) in enumerate(pairs) if o != _EMPTY]


@settings(max_examples=300, deadline=None)
@given(
    data=st.data(),
    at_start=st.booleans(),
    checksum=st.booleans(),
    endian=st.sampled_from(["little", "big"]),
    body=st.integers(0, 64),
    max_chunk=st.sampled_from([0, 4, 16, 64, 2**62]),
)
def test_shard_index_parse_matches_entry_by_entry_checks(
    data, at_start, checksum, endian, body, max_chunk
):
    # Every index of 4 entries, valid or not (the few-reductions path for whole valid indices
    # included), is judged as the entry-by-entry rules judge it, with the same entry named.
    layout = ShardLayout((4,), endian, checksum, "start" if at_start else "end")
    size = layout.index_nbytes + body
    low, high = (layout.index_nbytes, size) if at_start else (0, body)
    near = [0, 1, 4, low, high, high - 1, high + 1, size, _EMPTY, _EMPTY - 1, 2**63]
    edges = st.sampled_from([v for v in near if 0 <= v <= _EMPTY])
    value = st.one_of(edges, st.integers(0, _EMPTY))
    pairs = data.draw(st.lists(st.tuples(value, value), min_size=4, max_size=4))
    if data.draw(st.booleans()):  # a dense shard: chunks back to back from some start
        step, start = data.draw(st.integers(0, 16)), data.draw(st.sampled_from([low, 0, 3]))
        pairs = [(start + i * step, step) for i in range(4)]
    raw = np.array(pairs, ">u8" if endian == "big" else "<u8").tobytes()
    if checksum:
        raw = bytes(numcodecs.CRC32C(location="end").encode(raw))
    expected = _index_reference(pairs, size, layout.index_nbytes, at_start, max_chunk)
    if isinstance(expected, tuple):
        what, local = expected
        with pytest.raises(CorruptChunkError, match=f"shard index entry {local} {what}"):
            layout.parse_index(raw, size, key="c/0", max_chunk_nbytes=max_chunk)
        return
    found = layout.parse_index(raw, size, key="c/0", max_chunk_nbytes=max_chunk)
    assert list(found.entries()) == expected
    assert found.present.tolist() == [o != _EMPTY for o, _ in pairs]


def test_key_reader_gives_each_inner_chunk_of_a_shard(tmp_path):
    bytes_le = {"name": "bytes", "configuration": {"endian": "little"}}
    sharding = {"chunk_shape": [2], "codecs": [bytes_le, {"name": "zstd"}]}
    sharding["index_codecs"] = [bytes_le]
    model = parse_model(
        {
            "zarr_format": 3,
            "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}},
            "codecs": [{"name": "sharding_indexed", "configuration": sharding}],
        }
    )
    reader = KeyReader.build(model, ChunkGrid((4,), (2,)), ChunkGrid((4,), (4,)), "a")
    body = numcodecs.Zstd().encode("ab".encode("utf-32-le"))
    stored = shard([0, len(body), 2**64 - 1, 2**64 - 1], body)
    got = []

    def sink(index, data, error):
        got.append((index, None if data is None else bytes(data), error))

    (tmp_path / "a" / "c").mkdir(parents=True)
    (tmp_path / "a" / "c" / "0").write_bytes(stored)
    for source in ({"a/c/0": stored}.get, str(tmp_path)):  # any store, or local files
        got.clear()
        assert reader.read((0,), source, sink) == len(stored)
        assert got == [((0,), "ab".encode("utf-32-le"), None)]
    assert reader.read((0,), {}.get, sink) is None
    got.clear()
    assert reader.read((0,), {"a/c/0": stored[:-1]}.get, sink) == 0
    [(index, data, error)] = got
    assert index == (0,) and data is None and isinstance(error, CorruptChunkError)
    assert "a/c/0" in str(error)


@pytest.mark.parametrize("endian", ["little", "big"])
def test_key_reader_reads_the_runs_a_selection_needs_and_checks_only_those(tmp_path, endian):
    from fixedutf32._source.runs import element_runs

    model = parse_model(
        {
            "zarr_format": 3,
            "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}},
            "codecs": [{"name": "bytes", "configuration": {"endian": endian}}],
        }
    )
    reader = KeyReader.build(model, ChunkGrid((40, 40), (40, 40)), ChunkGrid((40, 40), (40, 40)))
    values = np.array([f"{i:02}"[-2:] for i in range(1600)], "<U2").reshape(40, 40)
    order = "<" if endian == "little" else ">"
    units = values.astype(f"{order}U2").view(f"{order}u4").reshape(40, 40, 2).copy()
    units[0, 0, 0] = 0xD800  # outside the selections below until the last one
    (tmp_path / "c").write_bytes(units.tobytes())
    selection = (slice(5, 7), slice(2, 9))
    runs = element_runs((40, 40), "C", 8, selection)
    assert runs is not None and runs.starts.tolist() == [202, 242]
    got = reader.read_runs(str(tmp_path), "c", runs)
    assert got.dtype.byteorder in ("=", "<" if endian == "little" else ">")
    assert np.array_equal(got.astype("=U2"), values[selection])
    assert reader.read_runs(str(tmp_path), "missing", runs) is None
    bad = element_runs((40, 40), "C", 8, (slice(0, 1), slice(0, 3)))
    with pytest.raises(InvalidCodePointError) as caught:
        reader.read_runs(str(tmp_path), "c", bad)
    assert (caught.value.index, caught.value.position) == (0, 0)
    units[6, 4, 1] = 0x110000  # the element's index is the chunk's, not the runs' buffer's
    (tmp_path / "c").write_bytes(units.tobytes())
    with pytest.raises(InvalidCodePointError) as caught:
        reader.read_runs(str(tmp_path), "c", runs)
    assert (caught.value.index, caught.value.position) == (6 * 40 + 4, 1)
    (tmp_path / "short").write_bytes(units.tobytes()[:-4])
    with pytest.raises(ChunkSizeError):
        reader.read_runs(str(tmp_path), "short", runs)


# --- local files -----------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_fifo_and_devices_are_bad_chunks_at_once(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/zero", tmp_path / "zero")
    for name, kind in [("fifo", "a FIFO"), ("zero", "a character device")]:
        with pytest.raises(CorruptChunkError, match=f"expected a regular file, got {kind}"):
            open_chunk_file(tmp_path / name, key=name, max_nbytes=64)
    (tmp_path / "dir").mkdir()
    assert open_chunk_file(tmp_path / "dir", key="dir", max_nbytes=64) is None
    assert open_chunk_file(tmp_path / "nope" / "x", key="x", max_nbytes=64) is None


def test_read_into_blocks_with_a_callback(tmp_path):
    data = np.arange(1000, dtype="<u4").tobytes()
    (tmp_path / "c").write_bytes(data)
    seen = []
    out = np.zeros(len(data), np.uint8)
    with open_chunk_file(tmp_path / "c", key="c", max_nbytes=len(data)) as file:
        view = file.read_into(
            out, block_bytes=1024, on_block=lambda b, o: seen.append((o, b.nbytes))
        )
    assert bytes(view) == data and bytes(out) == data
    assert seen == [(o, min(1024, len(data) - o)) for o in range(0, len(data), 1024)]
    blocks = []
    with open_chunk_file(tmp_path / "c", key="c", max_nbytes=len(data)) as file:
        file.stream(bytearray(1000), lambda b, o: blocks.append(bytes(b)))
    assert b"".join(blocks) == data and len(blocks) == 4


def test_raw_chunk_file_of_the_wrong_size(tmp_path):
    decoder = ChunkDecoder.build(16, "little", 4, [])
    (tmp_path / "0").write_bytes(bytes(60))
    with pytest.raises(
        ChunkSizeError,
        match="chunk c/0 holds 60 bytes; a chunk of 4 elements of length_bytes 16 needs 64",
    ):
        decoder.open_file(tmp_path / "0", key="c/0")  # before anything is read


def test_compressed_chunk_file_larger_than_a_chunk_can_be(tmp_path):
    decoder = ChunkDecoder.build(16, "little", 4, ["zstd"])
    (tmp_path / "0").write_bytes(bytes(decoder.max_stored_nbytes + 1))
    with pytest.raises(CorruptChunkError, match="a chunk here holds at most"):
        decoder.open_file(tmp_path / "0", key="c/0")


# --- elements --------------------------------------------------------------------------------


@pytest.mark.parametrize("endian", ["little", "big"])
def test_invalid_units_are_every_bad_unit(endian):
    units = np.array([[0x61, 0xD800, 0], [0x110000, 0x62, 0xDFFF], [0x63, 0, 0]], np.uint32)
    data = units.astype(">u4" if endian == "big" else "<u4").tobytes()
    found = ElementLayout(12, endian).invalid_units(data, 10)
    assert [(e.index, e.position, e.code_point) for e in found] == [
        (0, 1, 0xD800),
        (1, 0, 0x110000),
        (1, 2, 0xDFFF),
    ]
    assert len(ElementLayout(12, endian).invalid_units(data, 2)) == 2


@pytest.mark.parametrize("stored", ["little", "big"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_place_and_store_are_inverse_in_every_byte_order(stored, endian):
    """place copies checked elements out of the stored order, store checks them back in."""
    codec = {"little": "utf-32-le", "big": "utf-32-be"}
    layout = ElementLayout(8, stored)
    text = "ab\U00010000\x00"
    dst = np.zeros(4, np.uint32)
    layout.place(text.encode(codec[stored]), dst, endian)
    assert dst.tobytes() == text.encode(codec[endian])
    back = bytearray(16)
    layout.store(dst, back, endian)
    assert bytes(back) == text.encode(codec[stored])
    layout.store(dst, dst, endian)  # in place
    assert dst.tobytes() == text.encode(codec[stored])
    bad = np.array([0x61, 0xDFFF, 0, 0], "<u4" if endian == "little" else ">u4").view(np.uint8)
    before = bad.tobytes()
    with pytest.raises(InvalidCodePointError) as info:
        layout.store(bad, bad, endian)
    assert (info.value.index, info.value.position, info.value.code_point) == (0, 1, 0xDFFF)
    assert bad.tobytes() == before


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("count", [0, 1, 255, 256, 257, 1000])
def test_longest_string_matches_the_lengths_and_finds_the_bad_unit(endian, count):
    """ElementLayout.longest_string walks blocks of 256 elements: the block edges hold."""
    from fixedutf32._source import ElementLayout

    rng = np.random.default_rng(count)
    words = [
        "".join(chr(0x61 + int(c)) for c in rng.integers(0, 26, int(n)))
        for n in rng.integers(0, 9, count)
    ]
    data = np.array(words, f"{'<' if endian == 'little' else '>'}U8")
    layout = ElementLayout(32, endian)
    expected = max((len(w) for w in words), default=0)
    assert layout.longest_string(data) == expected
    if count == 0:
        return
    bad = data.view(np.uint32 if endian == "little" else ">u4").copy()
    element = count * 2 // 3
    bad[element * 8 + 3] = 0xDFFF
    with pytest.raises(InvalidCodePointError) as info:
        layout.longest_string(bad)
    assert (info.value.index, info.value.position, info.value.code_point) == (element, 3, 0xDFFF)
