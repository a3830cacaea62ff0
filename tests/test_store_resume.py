"""``fixedutf32 convert --resume`` and Ctrl-C (issue 24, findings 4, 7 and 9).

A resume reads its record and journal as the source's chunk files are read
(a FIFO there returned at once, a bounded size, bounded JSON nesting), trusts
a journaled task only while the destination still holds the keys it wrote
with the sizes it journaled, and says in one line what is wrong with damaged
bookkeeping.  Ctrl-C ends a conversion with exit status 130 and one line:
what was written and the command that finishes it.

Each repro runs in a new process with a time bound (a resume that blocks
fails the test rather than hanging it) and an address-space bound, and the
tests read what is on disk afterwards with zarr-python.
"""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from conftest import assert_one_line_error, start_slow_convert  # noqa: E402
from conftest import run_cli as cli  # noqa: E402
from store_data import quiet, tree  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

TIMEOUT = 60
MEMORY = 4 << 30  # far above what a run on these tiny stores needs
RECORD = ".fixedutf32-convert.json"
PIECE = ".fixedutf32-convert.journal.0.json"
TWELVE = np.array(["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st", "uv", "wx"])


def run_cli(*argv, seconds=TIMEOUT):
    """``fixedutf32 ARGV`` in a new process, under an address-space bound."""
    return cli(*argv, seconds=seconds, memory=MEMORY)


def strings(where, data, chunks):
    """A V3 fixed_length_utf32 root array of ``data`` at ``where``."""
    with quiet():
        array = zarr.create_array(str(where), shape=data.shape, chunks=chunks, dtype=data.dtype)
        array[...] = data


def start_slow(*argv, threads=1, stderr=subprocess.DEVNULL):
    """``fixedutf32 convert ARGV`` pausing after each chunk it writes, a journal piece per task."""
    return start_slow_convert(*argv, delay=0.4, threads=threads, stderr=stderr)


def wait_for_chunks(child, chunks_dir, count):
    """Return once ``count`` chunk files are under ``chunks_dir`` (``child`` still running)."""
    deadline = time.monotonic() + TIMEOUT
    while sum(1 for p in chunks_dir.rglob("*") if p.is_file() and "partial" not in p.name) < count:
        assert child.poll() is None, "the conversion ended before it could be stopped"
        assert time.monotonic() < deadline, "the conversion wrote nothing in time"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory):
    """(source, destination) of a conversion killed after c/0, c/1 and c/2 were journaled.

    Tests copy the destination; the source stays as it is, so that the
    journal's fingerprints of it hold.
    """
    where = tmp_path_factory.mktemp("interrupted")
    source, dest = where / "src", where / "dst"
    strings(source, TWELVE, (2,))
    child = start_slow(source, dest)
    try:
        wait_for_chunks(child, dest / "c", 4)  # c/3 written: c/0, c/1 and c/2 are journaled
    finally:
        child.kill()
        child.wait()
    assert (dest / RECORD).is_file() and (dest / PIECE).is_file(), tree(dest)
    return source, dest


def copy_of(interrupted, tmp_path):
    source, template = interrupted
    dest = tmp_path / "dst"
    shutil.copytree(template, dest)
    return source, dest


def read_back(dest):
    with quiet():
        return zarr.open_array(str(dest), mode="r")[:].tolist()


# -- finding 4: a FIFO where the bookkeeping is -------------------------------


@pytest.mark.parametrize("name", [RECORD, PIECE])
def test_resume_refuses_a_fifo_record_or_journal_piece_without_blocking(
    interrupted, tmp_path, name
):
    source, dest = copy_of(interrupted, tmp_path)
    (dest / name).unlink()
    os.mkfifo(dest / name)
    before = tree(dest)
    result = run_cli("convert", source, dest, "--resume", seconds=30)
    assert_one_line_error(result, repr(name), "expected a regular file, got a FIFO")
    assert tree(dest) == before and (dest / name).exists()


# -- finding 9: damaged bookkeeping, in one line ------------------------------

_OPTIONS = {
    "to": "fixed_length_utf32",
    "zarr_format": 3,
    "endian": "little",
    "length_bytes": None,
    "compressors": [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
    "chunks": None,
}


def _record(**options):
    return json.dumps({"fixedutf32_convert": 1, "options": {**_OPTIONS, **options}})


RECORDS = {
    "a directory": (None, "expected a regular file, got a directory"),
    "too large": (
        # valid, and what the run was started with: only its size is wrong
        json.dumps({"options": _OPTIONS, "padding": "x" * (2 << 20)}),
        "bytes, at most 1048576 expected",
    ),
    "invalid JSON": ('{"options": {', "it is not JSON"),
    "deep JSON": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "not an object": ("[1, 2]", "expected a JSON object with 'options', got [1, 2]"),
    "a string for an int": (_record(zarr_format="3"), "at 'options.zarr_format', got '3'"),
    "a negative width": (_record(length_bytes=-4), "at 'options.length_bytes', got -4"),
    "a huge int": (_record(chunks=[10**40]), "at 'options.chunks', got [1000000000000"),
}


@pytest.mark.parametrize("case", sorted(RECORDS))
def test_resume_names_what_is_wrong_with_a_damaged_record_in_one_line(interrupted, tmp_path, case):
    source, dest = copy_of(interrupted, tmp_path)
    text, reason = RECORDS[case]
    (dest / RECORD).unlink()
    if text is None:
        (dest / RECORD).mkdir()
    else:
        (dest / RECORD).write_text(text)
    before = tree(dest)
    result = run_cli("convert", source, dest, "--resume")
    assert_one_line_error(
        result,
        f"the conversion record {RECORD!r} in {str(dest)!r}",
        reason,
        "--overwrite",
    )
    assert tree(dest) == before


def _bad_entries(piece):
    return {task: [entry[0], "x"] for task, entry in piece.items()}


PIECES = {
    "a directory": (None, "expected a regular file, got a directory"),
    "too large": (lambda piece: {**piece, "pad": "x" * (17 << 20)}, "at most 16777216 expected"),
    "deep JSON": (lambda piece: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "not an object": (lambda piece: [1, 2], "expected a JSON object of tasks, got [1, 2]"),
    # what gave "invalid literal for int() with base 10: 'x'" (its fingerprints match)
    "a string for a count": (_bad_entries, "expected [fingerprint, missing chunks, {key: size"),
}


@pytest.mark.parametrize("case", sorted(PIECES))
def test_resume_names_what_is_wrong_with_a_damaged_journal_piece_in_one_line(
    interrupted, tmp_path, case
):
    source, dest = copy_of(interrupted, tmp_path)
    change, reason = PIECES[case]
    piece = json.loads((dest / PIECE).read_text())
    (dest / PIECE).unlink()
    if change is None:
        (dest / PIECE).mkdir()
    else:
        changed = change(piece)
        (dest / PIECE).write_text(changed if isinstance(changed, str) else json.dumps(changed))
    before = tree(dest)
    result = run_cli("convert", source, dest, "--resume")
    assert_one_line_error(
        result, f"the journal piece {PIECE!r} in {str(dest)!r}", reason, "delete it"
    )
    assert tree(dest) == before


def test_resume_after_deleting_the_named_journal_piece_finishes(interrupted, tmp_path):
    source, dest = copy_of(interrupted, tmp_path)
    (dest / PIECE).write_text("[1, 2]")
    assert run_cli("convert", source, dest, "--resume").returncode == 2
    (dest / PIECE).unlink()  # what the message says to do
    result = run_cli("convert", source, dest, "--resume")
    assert result.returncode == 0, result.stderr
    assert read_back(dest) == TWELVE.tolist()


# -- finding 7: the journal is checked against the destination ----------------


def test_resume_redoes_journaled_chunks_deleted_or_resized_in_the_destination(
    interrupted, tmp_path
):
    source, dest = copy_of(interrupted, tmp_path)
    journaled = set()
    for piece in dest.glob(".fixedutf32-convert.journal.*.json"):
        journaled.update(json.loads(piece.read_text()))
    assert {"k:c/0", "k:c/1", "k:c/2"} <= journaled, journaled
    (dest / "c" / "0").unlink()
    with open(dest / "c" / "1", "r+b") as chunk:
        chunk.truncate(5)
    result = run_cli("convert", source, dest, "--resume", "--json")
    assert result.returncode == 0, result.stderr
    assert read_back(dest) == TWELVE.tolist()
    # Everything was read again but c/2, which the destination still holds as journaled.
    every = sum(p.stat().st_size for p in (source / "c").iterdir())
    report = json.loads(result.stdout)
    assert report["bytes_read"] == every - (source / "c" / "2").stat().st_size, report


def test_resume_does_again_what_an_older_journal_without_sizes_lists(interrupted, tmp_path):
    source, dest = copy_of(interrupted, tmp_path)
    pieces = list(dest.glob(".fixedutf32-convert.journal.*.json"))
    for piece in pieces:  # the format before sizes were journaled: [fingerprint, missing]
        old = {task: entry[:2] for task, entry in json.loads(piece.read_text()).items()}
        piece.write_text(json.dumps(old))
    (dest / "c" / "0").unlink()
    result = run_cli("convert", source, dest, "--resume", "--json")
    assert result.returncode == 0, result.stderr
    assert read_back(dest) == TWELVE.tolist()
    every = sum(p.stat().st_size for p in (source / "c").iterdir())
    assert json.loads(result.stdout)["bytes_read"] == every  # nothing trusted


# -- finding 9: Ctrl-C ----------------------------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_says_what_was_written_and_the_resume_command_and_exits_130(tmp_path, threads):
    source, dest = tmp_path / "src", tmp_path / "dst"
    data = np.array([f"s{i}" for i in range(16)])
    strings(source, data, (2,))
    child = start_slow(source, dest, "--endian", "big", threads=threads, stderr=subprocess.PIPE)
    try:
        wait_for_chunks(child, dest / "c", 2)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=TIMEOUT)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 130, (child.returncode, stderr)
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    assert "interrupted after " in stderr and " of 8 chunks" in stderr, stderr
    finish = f"fixedutf32 convert {source} {dest} --resume --endian big"
    assert stderr.rstrip("\n").endswith(f"finish it with: {finish}"), stderr

    result = run_cli(*shlex.split(finish)[1:])
    assert result.returncode == 0, result.stderr
    assert read_back(dest) == data.tolist()
    assert not any(name.startswith(".fixedutf32") for name in tree(dest))


def test_ctrl_c_through_the_python_api_is_a_keyboard_interrupt_that_says_the_same(tmp_path):
    source, dest = tmp_path / "src", tmp_path / "dst"
    strings(source, TWELVE, (2,))
    code = textwrap.dedent(
        """
        import sys, time, fixedutf32.store as s
        try:
            s.convert(sys.argv[1], sys.argv[2], threads=1, on_progress=lambda *_: time.sleep(0.4))
        except KeyboardInterrupt as exc:
            print(exc)
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(source), str(dest)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_chunks(child, dest / "c", 1)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=TIMEOUT)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0 and not stderr, stderr
    assert stdout.startswith("interrupted after "), stdout
    assert stdout.rstrip().endswith(f"finish it with: fixedutf32 convert {source} {dest} --resume")
