"""The zarr pipeline on hostile stores: lying frame headers, failed chunks, odd files.

Each repro of the hostile-stores issue that goes through zarr-python: the
pipeline refuses what the metadata cannot describe before inflating it,
leaves the caller's result as it was for a chunk that fails, opens only
regular files no larger than the chunk can be, and says what is wrong in
the chunk's own terms.  Repros that crashed or hung run in a subprocess
with a time bound (and an address-space bound where memory grew).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")
numcodecs = pytest.importorskip("numcodecs", reason="zarr V2 compressors come from numcodecs")

from conftest import memory_limit_code  # noqa: E402

import fixedutf32  # noqa: E402
import fixedutf32.zarr as fz  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")


def run_bounded(code, *, seconds=60, memory=2 << 30):
    """Run ``code`` in a fresh interpreter, within ``seconds`` and ``memory`` bytes."""
    return subprocess.run(
        [sys.executable, "-c", memory_limit_code(memory) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=seconds,
    )


def v2_blosc(tmp_path, claims):
    """A V2 <U4 array of 4 elements in one chunk: a 16-byte blosc file whose header lies."""
    path = tmp_path / "a"
    arr = zarr.create_array(
        path, shape=(4,), chunks=(4,), dtype="<U4", zarr_format=2, compressors=numcodecs.Blosc()
    )
    arr[:] = ["a", "b", "c", "d"]
    frame = bytearray(numcodecs.Blosc(cname="lz4", clevel=0).encode(bytes(16)))
    frame = frame[:16]  # the header alone
    frame[4:8] = claims.to_bytes(4, "little")  # nbytes: what it decodes to
    frame[12:16] = claims.to_bytes(4, "little")  # cbytes: what it holds
    (path / "0").write_bytes(bytes(frame))
    return path


@pytest.mark.parametrize("claims", [64, 16 << 20])
def test_blosc_header_that_overstates_is_refused_before_decompressing(tmp_path, claims):
    path = v2_blosc(tmp_path, claims)
    done = run_bounded(f"""
        import zarr, fixedutf32.zarr as fz, fixedutf32
        with fz.enabled():
            try:
                zarr.open_array({str(path)!r})[:]
            except fixedutf32.CorruptChunkError as exc:
                print("refused:", exc)
        """)
    assert done.returncode == 0, done.stderr  # no crash (it was SIGSEGV at 16 MiB)
    assert "refused: chunk 0 is corrupt: the blosc header says the frame holds" in done.stdout
    assert f"{claims} bytes; 16 are stored" in done.stdout  # what it claims, what it holds


def _zstd_corrupt_near_end(tmp_path):
    path = tmp_path / "z"
    arr = zarr.create_array(
        path,
        shape=(8192,),
        chunks=(4096,),
        dtype="<U4",
        serializer=zarr.codecs.BytesCodec(endian="big"),
        compressors=[zarr.codecs.ZstdCodec(checksum=True)],
    )
    rng = np.random.default_rng(0)
    arr[:] = np.array(["abcd", "Жи", "😀", "x"])[rng.integers(0, 4, 8192)]
    chunk = path / "c" / "1"
    frame = bytearray(chunk.read_bytes())
    frame[-6] ^= 0xFF  # the last block, just before the checksum
    chunk.write_bytes(bytes(frame))
    return path


def _lz4_short(tmp_path):
    path = tmp_path / "l"
    arr = zarr.create_array(
        path, shape=(8,), chunks=(4,), dtype=">U4", zarr_format=2, compressors=numcodecs.LZ4()
    )
    arr[:] = list("abcdefgh")
    frame = bytearray(numcodecs.LZ4().encode(bytes(48)))
    frame[:4] = (64).to_bytes(4, "little")  # declares the 64 bytes a chunk needs; holds 48
    (path / "1").write_bytes(bytes(frame))
    return path


@pytest.mark.parametrize("make", [_zstd_corrupt_near_end, _lz4_short], ids=["zstd", "lz4"])
def test_a_failed_chunk_leaves_the_callers_out_as_it_was(tmp_path, make):
    from zarr.core.buffer import default_buffer_prototype

    path = make(tmp_path)
    stock = zarr.open_array(path)
    shape, dtype = stock.shape, stock.dtype
    sentinel = np.full(shape, "keep", dtype=dtype)
    with fz.enabled():
        arr = zarr.open_array(path)
        out = default_buffer_prototype().nd_buffer.from_numpy_array(sentinel.copy())
        with pytest.raises((fixedutf32.CorruptChunkError, fixedutf32.ChunkSizeError)) as info:
            arr.get_basic_selection(slice(None), out=out)
    assert "is corrupt" in str(info.value) or "holds" in str(info.value)
    result = out.as_numpy_array()
    half = shape[0] // 2
    # the failed chunk's region is untouched; the other chunk was read
    np.testing.assert_array_equal(result[half:], sentinel[half:])
    np.testing.assert_array_equal(result[:half], stock[:half])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("chunk", [256, 4096, 65536], ids=["4KiB", "64KiB", "1MiB"])
def test_a_failed_raw_chunk_leaves_its_part_of_out_as_it_was(tmp_path, chunk, zarr_format):
    # Raw chunks of up to 256 KiB are read in C straight into the result, each checked in cache
    # before any of it is written; larger ones through a buffer of the thread's.
    from zarr.core.buffer import default_buffer_prototype

    path = tmp_path / "r"
    dtype = ">U4" if zarr_format == 2 else "<U4"
    arr = zarr.create_array(
        path,
        shape=(6 * chunk,),
        chunks=(chunk,),
        dtype=dtype,
        compressors=None,
        zarr_format=zarr_format,
    )
    rng = np.random.default_rng(2)
    arr[:] = np.array(["abcd", "Жи", "😀", "x"])[rng.integers(0, 4, 6 * chunk)]
    stock = arr[:]
    bad = 3 * chunk + chunk // 2 + 1  # mid-chunk 3
    name = path / ("3" if zarr_format == 2 else "c/3")
    data = bytearray(name.read_bytes())
    unit = ((bad - 3 * chunk) * 4 + 2) * 4
    data[unit : unit + 4] = (0xDFFF).to_bytes(4, "big" if zarr_format == 2 else "little")
    name.write_bytes(bytes(data))
    sentinel = np.full(arr.shape, "keep", dtype=stock.dtype)
    with fz.enabled():
        out = default_buffer_prototype().nd_buffer.from_numpy_array(sentinel.copy())
        with pytest.raises(fz.InvalidChunkCodePointError, match="U\\+DFFF") as info:
            zarr.open_array(path).get_basic_selection(slice(None), out=out)
    assert f"({bad},)" in str(info.value)
    result = out.as_numpy_array()
    np.testing.assert_array_equal(result[3 * chunk : 4 * chunk], "keep")
    np.testing.assert_array_equal(result[: 3 * chunk], stock[: 3 * chunk])


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("chunk", [256, 4096, 32768], ids=["4KiB", "64KiB", "512KiB"])
def test_a_failed_inner_chunk_of_a_whole_shard_leaves_its_part_of_out_as_it_was(
    tmp_path, chunk, endian
):
    # A whole one-axis shard of raw chunks is read straight into the result, a block of whole
    # chunks at a time, each block checked before any of it is written (chunks of up to 256
    # KiB), else staged: either way the failing chunk's part of out is never written.
    from zarr.core.buffer import default_buffer_prototype

    path = tmp_path / "s"
    arr = zarr.create_array(
        path,
        shape=(16 * chunk,),
        chunks=(chunk,),
        shards=(8 * chunk,),
        dtype="<U4",
        serializer=zarr.codecs.BytesCodec(endian=endian),
        compressors=None,
    )
    rng = np.random.default_rng(1)
    arr[:] = np.array(["abcd", "Жи", "😀", "x"])[rng.integers(0, 4, 16 * chunk)]
    stock = arr[:]
    bad = 13 * chunk + chunk // 2 + 3  # inner chunk 5 of shard 1, mid-chunk
    shard = bytearray((path / "c" / "1").read_bytes())
    unit = ((bad - 8 * chunk) * 4 + 1) * 4
    shard[unit : unit + 4] = (0xD800).to_bytes(4, endian)
    (path / "c" / "1").write_bytes(bytes(shard))
    sentinel = np.full(arr.shape, "keep", dtype="<U4")
    with fz.enabled():
        out = default_buffer_prototype().nd_buffer.from_numpy_array(sentinel.copy())
        with pytest.raises(fz.InvalidChunkCodePointError, match="U\\+D800") as info:
            zarr.open_array(path).get_basic_selection(slice(None), out=out)
    assert f"({bad},)" in str(info.value)  # the element's array coordinates
    result = out.as_numpy_array()
    np.testing.assert_array_equal(result[13 * chunk : 14 * chunk], "keep")
    np.testing.assert_array_equal(result[: 8 * chunk], stock[: 8 * chunk])  # shard 0 was read


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_chunk_is_refused_at_once(tmp_path):
    path = tmp_path / "a"
    zarr.create_array(path, shape=(4,), chunks=(4,), dtype="<U2", compressors=None)[:] = "ab"
    os.remove(path / "c" / "0")
    os.mkfifo(path / "c" / "0")
    done = run_bounded(
        f"""
        import zarr, fixedutf32, fixedutf32.zarr as fz
        with fz.enabled():
            try:
                zarr.open_array({str(path)!r})[:]
            except fixedutf32.CorruptChunkError as exc:
                print(exc)
        """,
        seconds=30,
    )
    assert done.returncode == 0, done.stderr  # it blocked forever before
    assert "chunk c/0 is corrupt: expected a regular file, got a FIFO" in done.stdout


def test_a_chunk_linked_to_dev_zero_is_refused_at_once(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("needs /dev/zero")
    path = tmp_path / "a"
    zarr.create_array(path, shape=(4,), chunks=(4,), dtype="<U2", compressors=None)[:] = "ab"
    os.remove(path / "c" / "0")
    os.symlink("/dev/zero", path / "c" / "0")
    done = run_bounded(
        f"""
        import zarr, fixedutf32, fixedutf32.zarr as fz
        with fz.enabled():
            try:
                zarr.open_array({str(path)!r})[:]
            except fixedutf32.CorruptChunkError as exc:
                print(exc)
        """,
        seconds=30,
        memory=1 << 30,
    )
    assert done.returncode == 0, done.stderr  # it read until MemoryError before
    assert "expected a regular file, got a character device" in done.stdout


def test_the_chunk_size_message_says_what_was_found_and_what_is_needed(tmp_path):
    path = tmp_path / "a"
    zarr.create_array(path, shape=(4,), chunks=(4,), dtype="<U4", compressors=None)[:] = "ab"
    (path / "c" / "0").write_bytes(bytes(60))
    with fz.enabled(), pytest.raises(fixedutf32.ChunkSizeError) as info:
        zarr.open_array(path)[:]
    assert str(info.value).startswith(
        "chunk c/0 holds 60 bytes; a chunk of 4 elements of length_bytes 16 needs 64"
    )


def test_a_shard_index_that_points_outside_the_shard_is_refused(tmp_path):
    path = tmp_path / "s"
    arr = zarr.create_array(
        path, shape=(8,), chunks=(2,), shards=(4,), dtype="<U2", compressors=None
    )
    arr[:] = list("abcdefgh")
    shard = path / "c" / "1"
    raw = bytearray(shard.read_bytes())
    index = np.frombuffer(bytes(raw[-4 - 32 : -4]), "<u8").copy()
    index[0] = 1 << 40  # the first inner chunk far past the end
    raw[-4 - 32 : -4] = index.tobytes()
    import numcodecs.checksum32

    raw[-4:] = bytes(numcodecs.checksum32.CRC32C().encode(bytes(raw[-4 - 32 : -4])))[-4:]
    shard.write_bytes(bytes(raw))
    with fz.enabled(), pytest.raises(fixedutf32.CorruptChunkError) as info:
        zarr.open_array(path)[:]
    assert "chunk c/1 is corrupt: shard index entry 0 points at bytes" in str(info.value)


def test_arrays_nothing_can_check_are_said_so(tmp_path):
    path = tmp_path / "a"
    categorize = numcodecs.Categorize(labels=["a", "b"], dtype="<U1", astype="u1")
    arr = zarr.create_array(
        path, shape=(4,), chunks=(4,), dtype="<U1", zarr_format=2, filters=[categorize]
    )
    arr[:] = ["a", "b", "a", "a"]
    with (
        zarr.config.set({"codec_pipeline.path": fz.PIPELINE_PATH}),
        pytest.warns(fz.UncheckedChunksWarning, match=r"Zarr V2 filters.*not checked"),
    ):
        assert zarr.open_array(path)[:].tolist() == ["a", "b", "a", "a"]


def _files(path):
    return {
        os.path.relpath(os.path.join(top, name), path): os.path.getsize(os.path.join(top, name))
        for top, _, names in os.walk(path)
        for name in names
    }


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("where", ["first", "last"])
@pytest.mark.parametrize("value_order", ["<", ">"])
def test_a_refused_write_leaves_the_store_as_it_was_and_stops_with_its_error(
    tmp_path, zarr_format, where, value_order
):
    # A lone surrogate anywhere in the value: nothing of the write is stored,
    # and nothing of it is still running once the error has reached the caller
    # (zarr gathers chunk writes, and its gather lets the others run on).
    import time

    dtype = f"{value_order}U3"
    array = zarr.create_array(tmp_path / "a", shape=(48, 48), chunks=(1, 1), dtype=dtype,
                              fill_value="", zarr_format=zarr_format, compressors=None)  # fmt: skip
    array[:2] = "old"
    before = _files(tmp_path / "a")
    value = np.full((48, 48), "abc", dtype=dtype)
    value[(0, 0) if where == "first" else (-1, -1)] = "a\ud800"
    with fz.enabled():
        writable = zarr.open_array(tmp_path / "a", mode="r+")
        with pytest.raises(fz.InvalidChunkCodePointError, match="U\\+D800"):
            writable[...] = value
        assert _files(tmp_path / "a") == before
        time.sleep(0.3)  # anything still running would have written by now
    assert _files(tmp_path / "a") == before
    assert zarr.open_array(tmp_path / "a")[:2].tolist() == [["old"] * 48] * 2


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_write_failing_on_a_stored_chunk_changes_nothing_after_it_raised(tmp_path, zarr_format):
    # The stored partial chunk is what fails here, not the value: chunks written
    # before it may stay written, but none is written after the error is raised.
    import time

    array = zarr.create_array(tmp_path / "a", shape=(48, 48), chunks=(2, 2), dtype="<U3",
                              fill_value="", zarr_format=zarr_format, compressors=None)  # fmt: skip
    array[...] = "old"
    key = "23.23" if zarr_format == 2 else "c/23/23"
    bad = tmp_path / "a" / key
    bad.write_bytes("a\ud800".encode("utf-32-le", "surrogatepass").ljust(12, b"\0") * 4)
    with fz.enabled():
        writable = zarr.open_array(tmp_path / "a", mode="r+")
        with pytest.raises(fz.InvalidChunkCodePointError, match=key.replace(".", "\\.")):
            writable[1:47, 1:47] = "new"  # every edge chunk merged with what is stored
        after_error = (
            _files(tmp_path / "a"),
            {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*")},
        )
        time.sleep(0.3)
    assert (
        _files(tmp_path / "a"),
        {p.name: p.stat().st_mtime_ns for p in (tmp_path / "a").rglob("*")},
    ) == after_error
