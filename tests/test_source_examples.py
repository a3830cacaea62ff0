"""What the private chunk-source layer (fixedutf32._source) gives on small inputs, module by
module: one test per function or class, the values its docstring once showed as Examples."""

import os
import re

import numpy as np
import pytest

from fixedutf32._source.chunks import ChunkDecoder
from fixedutf32._source.codecs import CodecChain, CodecSpec, parse_codec, parse_codecs
from fixedutf32._source.elements import ElementLayout
from fixedutf32._source.files import is_within, open_chunk_file, read_regular_file
from fixedutf32._source.frames import check_frame, zstd_content_size
from fixedutf32._source.grid import ChunkGrid
from fixedutf32._source.scratch import Scratch, borrowed_scratch
from fixedutf32._source.shard import ShardIndex, ShardLayout
from fixedutf32._source.sizes import (
    DecodedSize,
    chunk_size_error,
    compress_bound,
    shard_index_size_error,
)
from fixedutf32.errors import ChunkSizeError, CorruptChunkError, InvalidCodePointError


@pytest.fixture
def numcodecs():
    """numcodecs, which builds every codec chain and frame here; skipped without it."""
    return pytest.importorskip("numcodecs", reason="codec chains need numcodecs (extra [zarr])")


# --- sizes -----------------------------------------------------------------------------------


def test_compress_bound_adds_an_eighth_and_the_slack():
    assert compress_bound(1 << 20) == 1245184


def test_decoded_size_allows_exactly_or_at_most():
    allowed = (
        DecodedSize(64).allows(64),
        DecodedSize(64).allows(60),
        DecodedSize(64, False).allows(60),
    )
    assert allowed == (True, False, True)


def test_chunk_size_error_says_what_the_chunk_needs():
    assert str(chunk_size_error("c/0", 60, 4, 16)) == (
        "chunk c/0 holds 60 bytes; a chunk of 4 elements of length_bytes 16 needs 64"
    )


def test_shard_index_size_error_says_what_the_index_needs():
    assert str(shard_index_size_error("c/0", 20, 4, 68)) == (
        "shard c/0 holds 20 bytes; the index of a shard of 4 chunks needs 68"
    )


# --- frames ----------------------------------------------------------------------------------


def test_zstd_content_size_reads_the_frame_header(numcodecs):
    assert zstd_content_size(numcodecs.Zstd().encode(bytes(64)), "c/0") == 64


def test_check_frame_gives_the_declared_size_and_refuses_a_cut_frame(numcodecs):
    frame = numcodecs.Blosc().encode(bytes(64))
    assert check_frame("blosc", frame, DecodedSize(64), "c/0") == 64
    with pytest.raises(
        CorruptChunkError,
        match=re.escape("chunk c/0 is corrupt: the blosc header says the frame "),
    ):
        check_frame("blosc", frame[:16], DecodedSize(64), "c/0")


# --- codecs ----------------------------------------------------------------------------------


def test_codec_spec_holds_blosc_shuffle_as_numcodecs_int():
    spec = parse_codec({"name": "blosc", "configuration": {"shuffle": "shuffle"}}, 3)
    assert (spec.id, spec.config["shuffle"], spec.to_v2()["id"]) == ("blosc", 1, "blosc")


def test_to_v3_spells_a_v2_codec_with_its_defaults():
    assert parse_codec({"id": "gzip"}, 2).to_v3() == {
        "name": "gzip",
        "configuration": {"level": 5},
    }


def test_to_v2_spells_a_v3_codec_with_its_defaults():
    assert parse_codec("zstd", 3).to_v2() == {"id": "zstd", "level": 0, "checksum": False}


def test_parse_codec_fills_in_the_defaults_for_both_formats():
    assert parse_codec({"name": "gzip"}, 3) == CodecSpec(
        id="gzip", config={"level": 5}, typesize=None
    )
    assert parse_codec({"id": "zstd", "level": 3}, 2).config == {"level": 3, "checksum": False}


def test_parse_codecs_keeps_the_chain_order():
    assert [spec.id for spec in parse_codecs(["crc32c", "zstd"], 3)] == ["crc32c", "zstd"]


def test_codec_chain_decodes_and_refuses_a_frame_declaring_too_much(numcodecs):
    chain = CodecChain(parse_codecs(["zstd"], 3), 64)
    assert bytes(chain.decode(numcodecs.Zstd().encode(bytes(64)), key="c/0")) == bytes(64)
    with pytest.raises(
        CorruptChunkError,
        match=re.escape("chunk c/0 is corrupt: the zstd frame declares 65 bytes; "),
    ):
        chain.decode(numcodecs.Zstd().encode(bytes(65)), key="c/0")


def test_codec_chain_decode_fills_out(numcodecs):
    chain = CodecChain(parse_codecs([{"id": "lz4"}], 2), 8)
    out = np.zeros(8, np.uint8)
    chain.decode(numcodecs.LZ4().encode(b"abcdefgh"), key="0", out=out)
    assert bytes(out) == b"abcdefgh"


def test_codec_chain_encode_gives_blosc_the_typesize(numcodecs):
    spec = parse_codec({"name": "blosc", "configuration": {"typesize": 4}}, 3)
    frame = CodecChain((spec,), 64).encode(bytes(64))
    assert frame[3] == 4  # the blosc header's typesize


# --- grid ------------------------------------------------------------------------------------


def test_chunk_grid_maps_keys_to_indices():
    grid = ChunkGrid((5, 4), (2, 3))
    assert (grid.grid_shape, grid.key((2, 1)), grid.parse_key("c/2/1")) == (
        (3, 2),
        "c/2/1",
        (2, 1),
    )
    assert (grid.coordinates((2, 1), 4), grid.is_edge((2, 1))) == ((5, 4), True)


def test_chunk_grid_key_in_v2_and_for_0d():
    assert (ChunkGrid((4, 4), (2, 2), "v2", ".").key((1, 0)), ChunkGrid((), ()).key(())) == (
        "1.0",
        "c",
    )


def test_chunk_grid_parse_key_takes_only_what_key_gives():
    grid = ChunkGrid((4,), (2,))
    assert [grid.parse_key(key) for key in ("c/1", "c/2", "c/01", "x")] == [
        (1,),
        None,
        None,
        None,
    ]


def test_chunk_grid_indices_in_c_order():
    assert list(ChunkGrid((3, 4), (2, 2)).indices()) == [(0, 0), (0, 1), (1, 0), (1, 1)]


def test_chunk_grid_coordinates_in_f_order():
    assert ChunkGrid((4, 4), (2, 2), order="F").coordinates((1, 1), 1) == (3, 2)


def test_chunk_grid_region_of_an_edge_chunk():
    assert ChunkGrid((5,), (2,)).region((2,)) == ((slice(4, 5, None),), (slice(0, 1, None),))


def test_chunk_grid_is_edge_only_past_the_array():
    grid = ChunkGrid((5,), (2,))
    assert (grid.is_edge((1,)), grid.is_edge((2,))) == (False, True)


# --- shard -----------------------------------------------------------------------------------


def test_shard_layout_reads_the_index_and_places_inner_chunks():
    layout = ShardLayout((2,))
    shard = b"abcd" + np.array([0, 4, 2**64 - 1, 2**64 - 1], "<u8").tobytes()
    index = layout.read_index(shard, key="c/0", max_chunk_nbytes=8)
    assert list(index.entries()) == [(0, 0, 4)]
    assert layout.chunk_index((3,), 1) == (7,)


def test_shard_layout_encode_index_marks_missing_chunks_empty():
    layout = ShardLayout((2,))
    index = ShardIndex(
        np.array([0, 0], np.uint64), np.array([4, 0], np.uint64), np.array([True, False])
    )
    out = bytearray(layout.index_nbytes)
    assert layout.encode_index(index, out) is None
    assert np.frombuffer(out, "<u8").tolist() == [0, 4, 2**64 - 1, 2**64 - 1]


# --- files -----------------------------------------------------------------------------------


def test_is_within_the_root_not_a_sibling_with_its_prefix():
    assert (
        is_within("/data/a.zarr", "/data/a.zarr/c/0"),
        is_within("/data/a.zarr", "/data/a.zarr2"),
    ) == (True, False)


def test_open_chunk_file_missing_oversized_and_read(tmp_path):
    assert open_chunk_file(os.path.join(tmp_path, "0"), key="0", max_nbytes=64) is None
    with open(os.path.join(tmp_path, "1"), "wb") as f:
        f.write(bytes(100))
    with pytest.raises(
        CorruptChunkError,
        match=re.escape("chunk 1 is corrupt: the file holds 100 bytes; a chunk "),
    ):
        open_chunk_file(os.path.join(tmp_path, "1"), key="1", max_nbytes=64)
    with open_chunk_file(os.path.join(tmp_path, "1"), key="1", max_nbytes=100) as chunk:
        assert bytes(chunk.read_into(bytearray(128)))[:4] == b"\x00\x00\x00\x00"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_read_regular_file_refuses_a_fifo(tmp_path):
    os.mkfifo(os.path.join(tmp_path, "fifo"))
    with pytest.raises(
        CorruptChunkError,
        match=re.escape("chunk fifo is corrupt: expected a regular file, got a FIFO"),
    ):
        read_regular_file(os.path.join(tmp_path, "fifo"), key="fifo", max_nbytes=64)


# --- elements --------------------------------------------------------------------------------


def test_element_layout_longest_and_validate():
    layout = ElementLayout(8, "little")
    lengths = np.empty(2, np.intp)
    assert layout.longest("ab\x00\x00c\x00\x00\x00".encode("utf-32-le")[:16], lengths) == 2
    with pytest.raises(
        InvalidCodePointError,
        match=re.escape("invalid code point U+D800 (surrogate) at element 0, "),
    ):
        layout.validate(b"\x00\xd8\x00\x00" * 2)


def test_element_layout_longest_string():
    assert ElementLayout(16, "little").longest_string(np.array(["ab", "", "xyz"], "<U4")) == 3


def test_element_layout_invalid_units_finds_every_bad_unit():
    bad = ElementLayout(8, "little").invalid_units(
        "a\ud800\U00010000\udfff".encode("utf-32-le", "surrogatepass"), 10
    )
    assert [(e.index, e.position, hex(e.code_point)) for e in bad] == [
        (0, 1, "0xd800"),
        (1, 1, "0xdfff"),
    ]


# --- scratch ---------------------------------------------------------------------------------


def test_scratch_reuses_a_named_buffer():
    scratch = Scratch()
    a = scratch.bytes("chunk", 16)
    b = scratch.bytes("chunk", 8)
    assert (a.nbytes, b.nbytes, np.shares_memory(a, b)) == (16, 8, True)


def test_borrowed_scratch_gives_buffers():
    with borrowed_scratch() as scratch:
        assert scratch.bytes("chunk", 8).nbytes == 8


# --- chunks ----------------------------------------------------------------------------------


def test_chunk_decoder_checks_the_size_and_undoes_codecs(numcodecs):
    decoder = ChunkDecoder.build(16, "little", 4, [])
    with pytest.raises(
        ChunkSizeError,
        match=re.escape("chunk c/0 holds 60 bytes; a chunk of 4 elements of "),
    ):
        decoder.decode(bytes(60), key="c/0")
    zstd = ChunkDecoder.build(16, "little", 4, [{"name": "zstd"}])
    assert zstd.decode(numcodecs.Zstd().encode(bytes(64)), key="c/0").nbytes == 64
