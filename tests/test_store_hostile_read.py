"""``check``, ``convert`` and the bench's reader on hostile stores: the read side.

Each repro of the hostile-stores issue that goes through the store tools:
lying blosc headers, decompression bombs, FIFOs and devices as chunk files,
a chunk of the wrong size, a grid of 10**12 chunks with nothing stored,
1000 nested groups; and the drifted codec maps of the one-chunk-source
issue (blosc's typesize, gzip's default level, V2 compressors in the bench
reader).  Repros that crashed, hung or grew run the command in a fresh
interpreter with a time bound (and an address-space bound where memory
grew; not under AddressSanitizer, see conftest.ADDRESS_SPACE_LIMITS).
"""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")
numcodecs = pytest.importorskip("numcodecs", reason="zarr compressors come from numcodecs")

from conftest import memory_limit_code  # noqa: E402

from fixedutf32._source import DEFAULTS  # noqa: E402
from fixedutf32.bench._zarr import read_array  # noqa: E402
from fixedutf32.store import InvalidChunkError, check, convert  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

MiB = 1 << 20


def run_bounded(code, *, seconds=30, memory=2 << 30):
    """Run ``code`` in a fresh interpreter, within ``seconds`` and ``memory`` bytes."""
    return subprocess.run(
        [sys.executable, "-c", memory_limit_code(memory) + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=seconds,
    )


def run_cli(*args, seconds=30, memory=2 << 30):
    """``fixedutf32 ARGS`` in a fresh interpreter, bounded; stdout, stderr and exit status."""
    return run_bounded(
        f"""
        import sys
        from fixedutf32.__main__ import main
        sys.argv = ["fixedutf32", *{list(map(str, args))!r}]
        sys.exit(main())
        """,
        seconds=seconds,
        memory=memory,
    )


def no_traceback(done):
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode >= 0, f"killed by signal {-done.returncode}: {done.stderr}"


def v2_array(path, compressor, dtype="<U4", shape=(4,), chunks=(4,)):
    arr = zarr.create_array(
        path, shape=shape, chunks=chunks, dtype=dtype, zarr_format=2, compressors=compressor
    )
    arr[:] = np.array(list("abcdefgh"[: shape[0]]), dtype=dtype)
    return path


def lying_blosc(tmp_path, claims):
    """A V2 <U4 array of 4 elements in one chunk: a 16-byte blosc file whose header lies."""
    path = v2_array(tmp_path / "a", numcodecs.Blosc())
    frame = bytearray(numcodecs.Blosc(cname="lz4", clevel=0).encode(bytes(16)))[:16]
    frame[4:8] = claims.to_bytes(4, "little")  # nbytes: what it decodes to
    frame[12:16] = claims.to_bytes(4, "little")  # cbytes: what it holds
    (path / "0").write_bytes(bytes(frame))
    return path


# -- finding 3: blosc headers that overstate the chunk ------------------------


def as_zip(path):
    """The store at ``path`` as a .zip file beside it (read through zarr's ZipStore)."""
    target = path.with_suffix(".zip")
    with zipfile.ZipFile(target, "w") as archive:
        for file in sorted(path.rglob("*")):
            if file.is_file():
                archive.write(file, file.relative_to(path).as_posix())
    return target


@pytest.mark.parametrize("kind", ["dir", "zip"])
@pytest.mark.parametrize("claims", [64, 16 * MiB])
def test_check_refuses_a_lying_blosc_header_before_decompressing(tmp_path, claims, kind):
    path = lying_blosc(tmp_path, claims)
    done = run_cli("check", path if kind == "dir" else as_zip(path))
    no_traceback(done)  # it was SIGSEGV at 16 MiB through convert; heap "code points" in check
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the blosc header says the frame holds" in done.stdout
    assert f"{claims} bytes; 16 are stored" in done.stdout  # what it claims, what it holds
    assert "code_point:" not in done.stdout  # no neighbouring heap memory read as data


@pytest.mark.parametrize("claims", [64, 16 * MiB])
def test_convert_refuses_a_lying_blosc_header(tmp_path, claims):
    path = lying_blosc(tmp_path, claims)
    done = run_cli("convert", path, tmp_path / "out")
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"the blosc header says the frame holds {claims} bytes; 16 are stored" in done.stderr


def test_bench_reader_refuses_a_lying_blosc_header(tmp_path):
    path = lying_blosc(tmp_path, 16 * MiB)
    done = run_bounded(f"""
        import fixedutf32
        from fixedutf32.bench._zarr import read_array
        try:
            read_array({str(path)!r})
        except fixedutf32.CorruptChunkError as exc:
            print("refused:", exc)
        """)
    no_traceback(done)
    assert "refused: chunk 0 is corrupt: the blosc header says the frame holds" in done.stdout


# -- finding 7: decompression bombs ---------------------------------------------


def zstd_rle_frame(nbytes, declare=True):
    """A zstd frame of RLE blocks inflating to ``nbytes`` zero bytes (~4 bytes per 128 KiB).

    With ``declare`` its header gives the content size; without, only a
    window size (a frame as a streaming compressor writes it).
    """
    block = 128 * 1024
    magic = b"\x28\xb5\x2f\xfd"
    # single segment with an 8-byte content size; or no size, a window of 2**17
    head = magic + (b"\xe0" + nbytes.to_bytes(8, "little") if declare else b"\x00\x38")
    blocks = []
    left = nbytes
    while left:
        n = min(block, left)
        left -= n
        blocks.append(((n << 3) | (1 << 1) | (not left)).to_bytes(3, "little") + b"\0")
    return head + b"".join(blocks)


def zstd_bombs(tmp_path, declare, count=10, nbytes=1 << 30):
    """A V3 <U4 array of 4-element (64-byte) chunks, each stored as a zstd bomb."""
    path = tmp_path / "bomb"
    arr = zarr.create_array(
        path,
        shape=(4 * count,),
        chunks=(4,),
        dtype="<U4",
        compressors=[zarr.codecs.ZstdCodec()],
    )
    arr[:] = "ab"
    frame = zstd_rle_frame(nbytes, declare)
    for i in range(count):
        (path / "c" / str(i)).write_bytes(frame)
    return path


def test_zstd_frame_declaring_more_than_the_chunk_is_refused_unread(tmp_path):
    path = zstd_bombs(tmp_path, declare=True)
    done = run_cli("check", path, "--threads", "2", seconds=20, memory=1 << 30)
    no_traceback(done)  # 2 GiB of RSS and 23 s before
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("the zstd frame declares 1073741824 bytes") == 10
    assert "a chunk here holds 64 bytes (refused before inflating)" in done.stdout


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM (Linux)")
def test_zstd_frame_declaring_no_size_is_inflated_with_a_cap(tmp_path):
    path = zstd_bombs(tmp_path, declare=False, count=2, nbytes=256 * MiB)
    done = run_bounded(
        f"""
        import numcodecs, zarr  # imported before the first measure, as check imports them
        from fixedutf32.store import check

        def peak():
            # the peak RSS of this process alone (getrusage's ru_maxrss keeps
            # the parent's from before exec)
            with open("/proc/self/status") as status:
                line = [line for line in status if line.startswith("VmHWM:")][0]
            return int(line.split()[1]) * 1024

        before = peak()  # after the imports (larger under AddressSanitizer)
        report = check({str(path)!r}, threads=2)
        print("grew", peak() - before)
        for p in report.problems:
            print(p)
        """,
        seconds=20,
        memory=1 << 30,
    )
    no_traceback(done)
    first, *problems = done.stdout.splitlines()
    # what checking added to the peak: nothing near the 256 MiB a frame inflates to
    assert int(first.split()[1]) < 64 * MiB
    assert len(problems) == 2 and all("chunk c/" in p and "corrupt" in p for p in problems)


# -- finding 9: FIFOs and devices as chunk files ------------------------------


def raw_array(tmp_path, name="a", length_bytes=16, elements=4):
    path = tmp_path / name
    zarr.create_array(
        path,
        shape=(elements,),
        chunks=(elements,),
        dtype=f"<U{length_bytes // 4}",
        compressors=None,
    )[:] = "ab"
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("command", ["check", "convert"])
def test_a_fifo_chunk_is_reported_at_once(tmp_path, command):
    path = raw_array(tmp_path)
    os.remove(path / "c" / "0")
    os.mkfifo(path / "c" / "0")
    args = [command, path] + ([tmp_path / "out"] if command == "convert" else [])
    done = run_cli(*args, seconds=20)  # it blocked forever before
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "chunk c/0 is corrupt: expected a regular file, got a FIFO" in done.stdout + done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_metadata_document_is_reported_at_once(tmp_path):
    root = tmp_path / "g"
    group = zarr.open_group(root, mode="w", zarr_format=3)
    group.create_group("sub")
    os.remove(root / "sub" / "zarr.json")
    os.mkfifo(root / "sub" / "zarr.json")
    done = run_cli("check", root, seconds=20)  # zarr's LocalStore.get blocks on it
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sub: metadata: sub/zarr.json: expected a regular file, got a FIFO" in done.stdout


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_chunk_linked_to_dev_zero_is_reported_at_once(tmp_path):
    path = raw_array(tmp_path)
    os.remove(path / "c" / "0")
    os.symlink("/dev/zero", path / "c" / "0")
    # Followed (--follow-links), the device is refused unread; it read until MemoryError.
    done = run_cli("check", "--follow-links", path, seconds=20, memory=1 << 30)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "chunk c/0 is corrupt: expected a regular file, got a character device" in done.stdout
    # Not followed, it is a link out of the store (issue 24), not read either.
    done = run_cli("check", path, seconds=20, memory=1 << 30)
    assert done.returncode == 1 and "/, key c/0: link: it links outside the store" in done.stdout


# -- finding 10: the chunk-size message the right way round -------------------


def test_a_short_raw_chunk_says_what_it_holds_and_what_it_needs(tmp_path):
    path = raw_array(tmp_path)
    (path / "c" / "0").write_bytes(bytes(60))
    report = check(str(path))
    assert [p.message for p in report.problems] == [
        "chunk c/0 holds 60 bytes; a chunk of 4 elements of length_bytes 16 needs 64"
    ]
    with pytest.raises(InvalidChunkError) as info:
        convert(str(path), str(tmp_path / "out"))
    assert "chunk c/0 holds 60 bytes; a chunk of 4 elements of length_bytes 16 needs 64" in str(
        info.value
    )


def test_a_shard_smaller_than_its_index_says_what_it_needs(tmp_path):
    path = tmp_path / "s"
    zarr.create_array(path, shape=(8,), chunks=(2,), shards=(8,), dtype="<U4", compressors=None)[
        :
    ] = "ab"
    (path / "c" / "0").write_bytes(bytes(20))
    report = check(str(path))
    # four inner chunks per shard: an index of 4 * 16 bytes and its crc32c
    assert [p.message for p in report.problems] == [
        "shard c/0 holds 20 bytes; the index of a shard of 4 chunks needs 68"
    ]


# -- finding 6: the cost of check follows what is stored, not the grid --------


def test_check_of_a_huge_empty_grid_is_quick_and_small(tmp_path):
    path = tmp_path / "huge"
    path.mkdir()
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [10**12],
        "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 4}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }
    (path / "zarr.json").write_text(json.dumps(doc))
    (path / "c").mkdir()
    (path / "c" / "7").write_bytes("x".encode("utf-32-le"))  # one chunk stored
    done = run_cli("check", path, "--json", seconds=20, memory=1 << 30)  # 2.9 GiB, no end
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    (array,) = json.loads(done.stdout)["arrays"]
    assert (array["chunks_present"], array["chunks_missing"]) == (1, 10**12 - 1)
    assert array["longest"] == 1


# -- finding 8: deep hierarchies ----------------------------------------------


@pytest.fixture
def deep_store(tmp_path):
    """1000 nested V3 groups, an array at the bottom; removed without recursion."""
    top = tmp_path / "deep"
    where = top
    group = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}})
    for _ in range(1000):
        where.mkdir()
        (where / "zarr.json").write_text(group)
        where = where / "g"
    zarr.create_array(where, shape=(2,), chunks=(2,), dtype="<U2", compressors=None)[:] = "ab"
    yield top
    _remove_tree(top)


def _remove_tree(top):
    """Remove a directory tree without recursion.

    pytest's own cleanup (shutil.rmtree) and os.walk recurse once per level
    on Python 3.11, and fail 1000 levels down.
    """
    stack, directories = [os.fspath(top)], []
    while stack:
        directory = stack.pop()
        directories.append(directory)
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
    for directory in reversed(directories):  # children before their parents
        os.rmdir(directory)


def test_check_walks_1000_nested_groups(deep_store):
    done = run_cli("check", deep_store, seconds=60)
    no_traceback(done)  # RecursionError, exit 1, before
    assert done.returncode == 0, done.stdout + done.stderr
    assert "clean: 1 array checked" in done.stdout


def test_convert_refuses_1000_nested_groups_in_one_line(deep_store, tmp_path):
    out = tmp_path / "out"
    done = run_cli("convert", deep_store, out, seconds=60)
    no_traceback(done)  # RecursionError, exit 1, before
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert "the hierarchy goes deeper than 256 levels below the root" in line
    assert not out.exists()  # refused before the destination is touched


# -- issue 17: one codec map --------------------------------------------------


def test_convert_blosc_compresses_with_the_typesize_its_metadata_gives(tmp_path):
    src = raw_array(tmp_path, length_bytes=16, elements=64)
    out = tmp_path / "out"
    done = run_cli("convert", src, out, "--compressor", "blosc")
    assert done.returncode == 0, done.stderr
    config = json.loads((out / "zarr.json").read_text())["codecs"][1]["configuration"]
    assert config["typesize"] == 4
    frame = (out / "c" / "0").read_bytes()
    assert frame[3] == 4  # the blosc header's typesize: the shuffle saw code units (was 1)
    assert zarr.open_array(out)[:].tolist() == zarr.open_array(src)[:].tolist()


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_convert_gzip_without_a_level_uses_the_one_default(tmp_path, zarr_format):
    src = v2_array(tmp_path / "src", None, shape=(8,), chunks=(8,))
    out = tmp_path / "out"
    codec = {"name": "gzip"} if zarr_format == 3 else {"id": "gzip"}
    convert(str(src), str(out), zarr_format=zarr_format, compressors=[codec])
    if zarr_format == 3:
        written = json.loads((out / "zarr.json").read_text())["codecs"][1]
        chunk = out / "c" / "0"
    else:
        written = json.loads((out / ".zarray").read_text())["compressor"]
        chunk = out / "0"
    level = DEFAULTS["gzip"]["level"]
    # The metadata says the level the chunks were compressed with: gzip's XFL
    # byte is 0 for levels 2..8 (it was 4, "fastest": level 1, under a
    # metadata that means zarr's 5).
    assert written.get("configuration", written)["level"] == level
    assert chunk.read_bytes()[8] == 0


def test_bench_reader_reads_compressed_v2_arrays(tmp_path):
    data = np.array(["ab", "c", "日本", ""], dtype="<U2")
    for name, compressor in [("zstd", numcodecs.Zstd()), ("blosc", numcodecs.Blosc())]:
        path = tmp_path / name
        zarr.create_array(
            path, shape=(4,), chunks=(3,), dtype="<U2", zarr_format=2, compressors=compressor
        )[:] = data
        assert read_array(path).tolist() == data.tolist()  # KeyError: 'name' before
