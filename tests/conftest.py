import array
import contextlib
import mmap
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import fixedutf32

# The fixture generators are scripts (python tests/fixtures/make_X.py) that
# import their shared _writer by name; the tests import them the same way.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fixtures"))

SIMD_LEVELS = fixedutf32.available_simd_levels()


# AddressSanitizer reserves terabytes of shadow memory when a process starts,
# which an address-space limit (RLIMIT_AS) forbids: under the sanitizer build
# (CI preloads libasan) the tests that bound a subprocess's memory bound only
# its time.
ADDRESS_SPACE_LIMITS = "asan" not in os.environ.get("LD_PRELOAD", "")


def memory_limit_code(nbytes):
    """Python that limits the process it runs in to ``nbytes`` of address space
    (nothing under AddressSanitizer; see ADDRESS_SPACE_LIMITS)."""
    if not ADDRESS_SPACE_LIMITS or not nbytes:
        return ""
    return f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({nbytes}, {nbytes}))\n"


def run_cli(*argv, seconds=60, memory=0, cwd=None, env=None, preexec_fn=None):
    """``fixedutf32 ARGV`` as a user runs it, in a new interpreter bounded in time
    (and, with ``memory``, in address space); the completed process, text mode."""
    code = "import sys; from fixedutf32.__main__ import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", memory_limit_code(memory) + code, *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=seconds,
        cwd=cwd,
        env=env,
        preexec_fn=preexec_fn,
    )


# ``fixedutf32 convert`` through the command line's own convert_main (its exit
# statuses, one-line messages and Ctrl-C handling), with convert's on_progress
# waiting after each task and journal_seconds=0 (a journal piece per task).
_SLOW_CONVERT = """
import functools, sys, time
import fixedutf32.store
from fixedutf32.store._cli import convert_main
delay = float(sys.argv[1])
fixedutf32.store.convert = functools.partial(
    fixedutf32.store.convert, on_progress=lambda done, total: time.sleep(delay), journal_seconds=0
)
sys.exit(convert_main(sys.argv[2:]))
"""


def start_slow_convert(
    *argv, delay, threads=1, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
):
    """``fixedutf32 convert ARGV --threads THREADS`` in a new process that pauses ``delay``
    seconds after each task and journals every task at once, so that a test can kill or
    interrupt it after known chunks; the Popen (text mode)."""
    argv = [*map(str, argv), "--threads", str(threads)]
    return subprocess.Popen(
        [sys.executable, "-c", _SLOW_CONVERT, str(delay), *argv],
        stdout=stdout,
        stderr=stderr,
        text=True,
    )


def assert_one_line_error(result, *phrases, status=2):
    """A refusal as the CLI words one: exit ``status``, one line on stderr holding
    every phrase, no traceback."""
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    for phrase in phrases:
        assert phrase in result.stderr, result.stderr


def run_bench(*args):
    """``fixedutf32 bench ARGS`` run as a user runs it, in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "fixedutf32", "bench", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@contextlib.contextmanager
def at_simd_level(level):
    """Run the block with the kernels at ``level``, then restore the previous one."""
    previous = fixedutf32.set_simd_level(level)
    try:
        yield level
    finally:
        fixedutf32.set_simd_level(previous)


@pytest.fixture(params=SIMD_LEVELS)
def simd_level(request):
    """Run the test once per kernel implementation this CPU has (the level's name)."""
    with at_simd_level(request.param) as level:
        yield level


def as_buffer(raw, kind, tmp_path=None):
    """The bytes ``raw`` wrapped in one of the buffer types users pass."""
    if kind == "bytes":
        return bytes(raw)
    if kind == "bytearray":
        return bytearray(raw)
    if kind == "memoryview":
        return memoryview(bytes(raw))
    if kind == "array":
        return array.array("B", raw)
    if kind == "ndarray":
        return np.frombuffer(bytearray(raw), np.uint8)
    if kind == "mmap":
        m = mmap.mmap(-1, max(len(raw), 1))
        m.write(raw)
        return memoryview(m)[: len(raw)]
    raise ValueError(kind)


BUFFER_KINDS = ["bytes", "bytearray", "memoryview", "array", "ndarray", "mmap"]


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server on 127.0.0.1 and a free port for the session (tests/s3_server.py),
    with the bucket ``bkt``; stopped at the end."""
    pytest.importorskip("moto.server", reason='the S3 tests need moto[server] (the "test" extra)')
    pytest.importorskip("boto3", reason="the S3 tests make their bucket with boto3 (moto's dep)")
    from s3_server import S3Server

    server = S3Server().start()
    try:
        server.make_bucket("bkt")
        yield server
    finally:
        server.stop()
