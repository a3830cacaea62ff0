"""``convert``'s source and destination as places (issue 24, findings 1, 3 and 11).

The same store spelled another way is the same store (finding 1); one
conversion at a time writes a destination (finding 3); a zip destination
whose write failed leaves nothing broken where the store goes (finding 11).
The CLI runs in a new process, as a user runs it, with a time bound.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from conftest import assert_one_line_error, run_cli, start_slow_convert  # noqa: E402
from store_data import quiet, tree  # noqa: E402

import fixedutf32.store as store  # noqa: E402
from fixedutf32.store._places import place_of, relation  # noqa: E402

TIMEOUT = 60
CLAIM = ".fixedutf32-lock"


def strings(where, data, chunks):
    """A V3 fixed_length_utf32 root array of ``data`` at ``where``."""
    with quiet():
        array = zarr.create_array(where, shape=data.shape, chunks=chunks, dtype=data.dtype)
        array[...] = data


def read(where):
    with quiet():
        return zarr.open_array(str(where), mode="r")[:].tolist()


EIGHT = np.array(["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op"])


@pytest.fixture
def source(tmp_path):
    where = tmp_path / "data" / "a.zarr"
    strings(str(where), EIGHT, (2,))
    return where


# -- finding 1: one place, many spellings --------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "how"),
    [
        ("s3://bkt/a.zarr", "s3:///bkt/a.zarr", "same"),
        ("s3a://bkt/a.zarr/", "s3://bkt/a.zarr", "same"),
        ("s3:///bkt/a.zarr/x", "s3a://bkt/a.zarr", "inside"),
        ("s3://bkt", "s3a://bkt/a.zarr", "holds"),
        ("s3://bkt/a.zarr/./x/../", "s3://bkt/a.zarr", "same"),
        ("memory:///m/a.zarr/u", "memory://m/a.zarr", "inside"),
        ("gs://b/a", "gcs://b/a", "same"),  # one class, named by fsspec's registry
        ("simplecache::s3://bkt/a", "s3://bkt/a", "same"),
        ("s3://bkt/a", "s3://bkt/ab", None),
        ("s3://bkt/a", "memory://bkt/a", None),
        ("s3://bkt/a", "/bkt/a", None),
    ],
)
def test_urls_are_compared_as_fsspec_routes_them(a, b, how):
    assert relation(place_of(a), place_of(b)) == how


def test_local_spellings_and_store_objects_are_one_place(tmp_path, source):
    (tmp_path / "link").symlink_to(source, target_is_directory=True)
    spellings = [
        f"{source}/",
        f"{source}/.",
        f"{source.parent}/../data/a.zarr",
        f"local://{source}",
        f"file://{source}/",
        str(tmp_path / "link"),
        zarr.storage.LocalStore(source),
        zarr.storage.FsspecStore.from_url(f"file://{source}"),
    ]
    for spelling in spellings:
        assert relation(place_of(spelling), place_of(source)) == "same", spelling
    assert relation(place_of(source / "x.zip"), place_of(source)) == "inside"
    assert relation(place_of(source.parent), place_of(f"local://{source}")) == "holds"
    assert relation(place_of(tmp_path / "data" / "a.zarr2"), place_of(source)) is None
    shared = {}
    one, two = zarr.storage.MemoryStore(shared), zarr.storage.MemoryStore(shared)
    third = zarr.storage.MemoryStore()
    assert relation(place_of(one), place_of(two)) == "same"
    assert relation(place_of(one), place_of(third)) is None


@pytest.mark.parametrize(
    "spelling",
    ["local://{s}", "file://{s}/.", "{s}/", "{link}", "{s}/inner", "{s}/out.zip"],
)
def test_overwrite_into_the_source_spelled_another_way_deletes_nothing(tmp_path, source, spelling):
    (tmp_path / "link").symlink_to(source, target_is_directory=True)
    dest = spelling.format(s=source, link=tmp_path / "link")
    before = tree(source)
    result = run_cli("convert", source, dest, "--overwrite")
    assert_one_line_error(result, f"the destination {dest!r} ({source}", f"the source '{source}'")
    assert tree(source) == before
    assert not any(CLAIM in p.name for p in tmp_path.rglob("*"))


def test_overwrite_of_a_store_holding_the_source_deletes_nothing(tmp_path):
    top = tmp_path / "top.zarr"
    with quiet():
        group = zarr.open_group(str(top), mode="w")
        group.create_array("a", shape=(8,), chunks=(2,), dtype=EIGHT.dtype)[:] = EIGHT
    before = tree(top)
    result = run_cli("convert", top / "a", f"local://{top}/", "--overwrite")
    assert_one_line_error(result, "holds the source")
    assert tree(top) == before


def test_memory_destination_inside_the_source_is_refused():
    with quiet():
        zarr.create_array("memory://m/places.zarr", shape=(8,), chunks=(2,), dtype="<U2")[:] = EIGHT
    fs = zarr.storage.FsspecStore.from_url("memory://m/places.zarr").fs.sync_fs
    before = {path: fs.cat_file(path) for path in fs.find("/m/places.zarr")}
    with pytest.raises(store.StoreError, match="lies inside the source"):
        store.convert("memory://m/places.zarr", "memory:///m/places.zarr/u", overwrite=True)
    assert {path: fs.cat_file(path) for path in fs.find("/m/places.zarr")} == before


@pytest.mark.parametrize("root", ["memory://", "memory:///", "s3a://"])
def test_a_whole_file_system_is_never_a_destination(source, root):
    # --overwrite there would clear every key of the file system
    fs = zarr.storage.FsspecStore.from_url("memory://m").fs.sync_fs
    fs.pipe_file("/m/keep.txt", b"theirs")
    with pytest.raises(store.StoreError, match="names no bucket or folder"):
        store.convert(str(source), root, overwrite=True)
    assert fs.cat_file("/m/keep.txt") == b"theirs"


def test_store_objects_over_the_source_are_refused(source):
    before = tree(source)
    with pytest.raises(store.StoreError, match="is the source"):
        store.convert(str(source), zarr.storage.LocalStore(source), overwrite=True)
    assert tree(source) == before
    shared = {}
    with quiet():
        zarr.create_array(zarr.storage.MemoryStore(shared), shape=(2,), dtype="<U2")[:] = ["a", "b"]
    copy = dict(shared)
    with pytest.raises(store.StoreError, match="is the source"):
        store.convert(
            zarr.storage.MemoryStore(shared), zarr.storage.MemoryStore(shared), overwrite=True
        )
    assert shared == copy


# -- finding 3: one writer per destination -------------------------------------


def start_slow(*argv, delay=0.3):
    """``fixedutf32 convert ARGV`` in a new process that pauses after each chunk it writes."""
    return start_slow_convert(*argv, delay=delay, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def wait_for_chunks(child, chunks_dir, count=1):
    deadline = time.monotonic() + TIMEOUT
    while sum(1 for p in chunks_dir.rglob("*") if p.is_file()) < count:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "the conversion wrote nothing in time"
        time.sleep(0.01)


def test_second_conversion_into_a_claimed_destination_is_refused(tmp_path, source):
    data = np.array([f"s{i}" for i in range(40)])
    first_source, other = tmp_path / "first.zarr", tmp_path / "other.zarr"
    strings(str(first_source), data, (2,))  # 20 chunks, 0.4 s each: 8 s
    strings(str(other), np.array(["zz"] * 40), (4,))
    dest = tmp_path / "out.zarr"
    claim = tmp_path / f"out.zarr{CLAIM}"
    first = start_slow(first_source, dest, delay=0.4)
    try:
        wait_for_chunks(first, dest / "c")
        held = json.loads(claim.read_text())
        assert held["pid"] == first.pid and held["host"] == socket.gethostname()
        for extra in ((), ("--overwrite",), ("--resume",)):
            result = run_cli("convert", other, f"local://{dest}/", *extra)
            assert_one_line_error(
                result,
                "is in use by another conversion",
                f"process {first.pid}",
                f"its claim is '{claim}'",
                "if no conversion is running, delete",
            )
            assert first.poll() is None, "the first conversion ended too soon to test this"
    finally:
        _, err = first.communicate(timeout=TIMEOUT)
    assert first.returncode == 0, err
    assert read(dest) == data.tolist()  # the first source's, nothing of the other's
    assert not claim.exists()


def test_stale_claim_of_a_killed_conversion_is_taken_over_by_resume(tmp_path, source):
    dest = tmp_path / "out.zarr"
    child = start_slow(source, dest)
    try:
        wait_for_chunks(child, dest / "c", 2)
    finally:
        child.kill()
        child.communicate()
    claim = tmp_path / f"out.zarr{CLAIM}"
    assert json.loads(claim.read_text())["pid"] == child.pid  # left by the kill
    result = run_cli("convert", source, dest, "--resume", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stderr
    assert not claim.exists()


def dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_claim_is_named_and_taken_over_only_when_asked(tmp_path, source):
    dest = tmp_path / "out.zarr"
    claim = tmp_path / f"out.zarr{CLAIM}"
    stale = {"pid": dead_pid(), "host": socket.gethostname(), "started": "2026-01-01T00:00:00"}
    claim.write_text(json.dumps(stale))
    result = run_cli("convert", source, dest)
    assert_one_line_error(result, "no longer runs", f"process {stale['pid']}", "pass --resume")
    assert not dest.exists()
    result = run_cli("convert", source, dest, "--overwrite")
    assert result.returncode == 0, result.stderr
    assert read(dest) == EIGHT.tolist() and not claim.exists()

    # Another host's claim: whether it runs is not known here, so it is never taken.
    claim.write_text(json.dumps({**stale, "host": "elsewhere.example"}))
    result = run_cli("convert", source, dest, "--overwrite")
    assert_one_line_error(result, "in use by another conversion", "'elsewhere.example'", str(claim))
    assert claim.exists() and read(dest) == EIGHT.tolist()


def test_memory_url_destination_is_claimed_beside_it(source):
    fs = zarr.storage.FsspecStore.from_url("memory://claims/out.zarr").fs.sync_fs
    live = {"pid": os.getpid(), "host": socket.gethostname(), "started": "now"}
    fs.pipe_file("/claims/out.zarr" + CLAIM, json.dumps(live).encode())
    with pytest.raises(store.StoreError, match="in use by another conversion"):
        store.convert(str(source), "memory://claims/out.zarr")
    assert not fs.exists("/claims/out.zarr/zarr.json")
    fs.rm_file("/claims/out.zarr" + CLAIM)
    store.convert(str(source), "memory://claims/out.zarr")
    assert read("memory://claims/out.zarr") == EIGHT.tolist()
    assert not fs.exists("/claims/out.zarr" + CLAIM)


# -- finding 11: a zip destination whose write failed ---------------------------


def file_size_limit(nbytes):
    """A preexec_fn: files this process writes stop at ``nbytes`` (EFBIG, as a full disk)."""

    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))

    return limit


def test_zip_write_that_fails_leaves_no_broken_zip_and_overwrite_replaces_it(tmp_path):
    big = np.array([f"{i:08d}" * 4 for i in range(4096)])  # 512 KiB of code units
    source = tmp_path / "big.zarr"
    strings(str(source), big, (512,))
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    target = home / "out.zip"
    before = tree(home)

    result = run_cli(
        "convert", source, target, "--compressor", "none", preexec_fn=file_size_limit(64 << 10)
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert tree(home) == before  # no broken zip, no claim, no partial file

    # An older zip is kept when replacing it fails, and replaced once it succeeds.
    result = run_cli("convert", source, target, "--compressor", "zstd")
    assert result.returncode == 0, result.stderr
    old = target.read_bytes()
    result = run_cli(
        "convert",
        source,
        target,
        "--compressor",
        "none",
        "--overwrite",
        preexec_fn=file_size_limit(len(old) + (64 << 10)),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert target.read_bytes() == old
    result = run_cli("convert", source, target, "--compressor", "none", "--overwrite", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stderr
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt", "out.zip"]
    assert (home / "notes.txt").read_text() == "mine"


def test_zip_left_by_a_killed_conversion_is_replaced(tmp_path, source):
    target = tmp_path / "out.zip"
    code = textwrap.dedent(
        """
        import os, sys, fixedutf32.store._convert as c
        run = c._Conversion.run
        def killed(self, dst):
            run(self, dst)
            os.kill(os.getpid(), 9)  # after every entry, before the zip is complete
        c._Conversion.run = killed
        c.convert(sys.argv[1], sys.argv[2])
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", code, str(source), str(target)], timeout=TIMEOUT, check=False
    )
    assert child.returncode == -signal.SIGKILL
    assert not target.exists()  # what it wrote is beside it, with its claim
    result = run_cli("convert", source, target)
    assert_one_line_error(result, "no longer runs", "--overwrite")
    result = run_cli("convert", source, target, "--overwrite", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "out.zip"]
