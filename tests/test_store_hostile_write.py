"""``fixedutf32 convert`` on hostile sources and destinations (issue 16): keys
that climb out of the destination, ``--overwrite`` aimed at user files,
``--resume`` after the source or the options changed; and what a newcomer
met: a too narrow ``--length-bytes``, silent ``--skip-invalid``, a missing
``zarr`` extra, a bad ``FIXEDUTF32_SIMD``, the report's wording (issue 18).

Each repro runs in a new process, as a user runs it, with a time bound and
an address-space bound, and the tests assert what is on disk afterwards.
"""

import os
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from conftest import memory_limit_code, start_slow_convert  # noqa: E402
from store_data import quiet, tree  # noqa: E402

TIMEOUT = 60
MEMORY = 4 << 30  # far above what a run on these tiny stores needs


def run_python(code, *args, cwd=None, env=None):
    """Run ``code`` (after the address-space bound) in a new interpreter."""
    return subprocess.run(
        [sys.executable, "-c", memory_limit_code(MEMORY) + textwrap.dedent(code), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=cwd,
        env=env,
    )


def run_cli(*argv, cwd=None, env=None):
    """``fixedutf32 ARGV`` in a new process."""
    return run_python(
        "import sys; from fixedutf32.__main__ import main; sys.exit(main(sys.argv[1:]))",
        *argv,
        cwd=cwd,
        env=env,
    )


def assert_refused(result, *phrases, status=2):
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    for phrase in phrases:
        assert phrase in result.stderr, result.stderr


def files(root):
    """Every path under ``root`` (files and directories), relative."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def strings(where, data, chunks):
    """A V3 fixed_length_utf32 root array of ``data`` at ``where``."""
    with quiet():
        array = zarr.create_array(where, shape=data.shape, chunks=chunks, dtype=data.dtype)
        array[...] = data


# -- finding 1: keys that climb out of the destination -------------------------


def test_dotdot_key_in_a_zip_writes_nothing_outside_the_destination(tmp_path):
    source = tmp_path / "untrusted.zip"
    store = zarr.storage.ZipStore(source, mode="w")
    with quiet():
        nums = zarr.create_array(store, name="nums", shape=(4,), chunks=(2,), dtype="<i4")
        nums[:] = [1, 2, 3, 4]
    store.close()
    with zipfile.ZipFile(source, "a") as archive:
        archive.writestr("nums/../../victim.txt", b"overwritten")
    work = tmp_path / "work"
    work.mkdir()
    (work / "victim.txt").write_text("the user's file")
    before = files(tmp_path)

    result = run_cli("convert", source, "out", cwd=work)
    assert_refused(result, "unsafe key 'nums/../../victim.txt'", "a '..' segment")
    assert (work / "victim.txt").read_text() == "the user's file"
    assert files(tmp_path) == before  # nothing new anywhere, out included


def test_unsafe_keys_in_store_objects_are_refused(tmp_path):
    """Through the Python API, with zarr-python store objects on both sides."""
    code = """
        import sys, pathlib, asyncio
        import zarr, fixedutf32.store as s
        from zarr.storage import LocalStore, MemoryStore
        from fixedutf32.store._stores import StoreHandle

        root = pathlib.Path(sys.argv[1])
        bad_keys = ["nums/../../victim.txt", "nums/..\\\\..\\\\victim.txt", "nums//c/9",
                    "nums/./c/9", "nums/c/9\\0"]
        for n, bad in enumerate(bad_keys):
            src = MemoryStore()
            zarr.create_array(src, name="nums", shape=(4,), chunks=(2,), dtype="<i4")[:] = 1
            buffer = zarr.core.buffer.default_buffer_prototype().buffer.from_bytes(b"x")
            asyncio.run(src.set(bad, buffer))
            out = root / f"out{n}" / "deep"
            try:
                s.convert(src, LocalStore(out))
            except s.StoreError as exc:
                assert f"unsafe key {bad!r}" in str(exc), exc
            else:
                raise SystemExit(f"{bad!r} was accepted")
        # A node path that climbs: a group named '..' in a memory store.
        src = MemoryStore()
        zarr.open_group(src, mode="w")
        group = b'{"zarr_format": 3, "node_type": "group", "attributes": {}}'
        asyncio.run(src.set("../zarr.json", buffer.from_bytes(group)))
        try:
            s.convert(src, LocalStore(root / "node" / "deep"))
        except s.StoreError as exc:
            assert "unsafe key '..'" in str(exc), exc
        else:
            raise SystemExit("a '..' node was accepted")
        # The last guard: a handle never writes or deletes an unsafe key.
        handle = StoreHandle(LocalStore(root / "guard" / "deep"))
        for call in (lambda: handle.set("../x", b"x"), lambda: handle.delete("/etc/x")):
            try:
                call()
            except s.StoreError:
                pass
            else:
                raise SystemExit("the handle wrote an unsafe key")
        print("ok")
    """
    (tmp_path / "victim.txt").write_text("the user's file")
    result = run_python(code, tmp_path)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    assert (tmp_path / "victim.txt").read_text() == "the user's file"
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "victim.txt"]
    assert written == []  # nothing written at all, inside a destination or outside


# -- finding 2: --overwrite replaces only a store -----------------------------


@pytest.fixture
def small_source(tmp_path):
    source = tmp_path / "src"
    strings(str(source), np.array(["a", "bc", "def"]), (2,))
    return source


def test_overwrite_refuses_a_directory_of_user_files(tmp_path, small_source):
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "thesis.txt").write_text("four years of work")
    before = tree(home)
    result = run_cli("convert", small_source, home, "--overwrite")
    assert_refused(
        result,
        f"overwrite: the destination '{home}' is a directory holding 1 entry (Documents)",
        "replaces only a Zarr store or an empty directory",
    )
    assert tree(home) == before and files(home) == ["Documents", "Documents/thesis.txt"]


def test_overwrite_refuses_a_text_file_named_zip(tmp_path, small_source):
    target = tmp_path / "out.zip"
    target.write_text("not a zip at all")
    result = run_cli("convert", small_source, target, "--overwrite")
    assert_refused(result, f"'{target}' is a file that is not a zip file")
    assert target.read_text() == "not a zip at all"
    zipped = tmp_path / "other.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("notes/today.txt", "a zip, but no store")
    before = zipped.read_bytes()
    assert_refused(run_cli("convert", small_source, zipped, "--overwrite"), "without zarr.json")
    assert zipped.read_bytes() == before


def test_overwrite_through_the_python_api_checks_store_objects_too(tmp_path, small_source):
    code = """
        import sys, pathlib
        import fixedutf32.store as s
        from zarr.storage import LocalStore, MemoryStore

        home = pathlib.Path(sys.argv[2])
        for dest in (LocalStore(home), f"file://{home}"):
            try:
                s.convert(sys.argv[1], dest, overwrite=True)
            except s.StoreError as exc:
                assert "holds keys but no zarr.json" in str(exc) or "1 entry" in str(exc), exc
            else:
                raise SystemExit(f"{dest!r} was overwritten")
        memory = MemoryStore()
        s.convert(sys.argv[1], memory)
        s.convert(sys.argv[1], memory, overwrite=True)  # a store: replaced
        print("ok")
    """
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "thesis.txt").write_text("four years of work")
    before = tree(home)
    result = run_python(code, small_source, home)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    assert tree(home) == before


def test_overwrite_replaces_a_store_or_an_empty_directory(tmp_path, small_source):
    for target in (tmp_path / "empty", tmp_path / "store", tmp_path / "store.zip"):
        if target.name == "empty":
            target.mkdir()
        else:
            result = run_cli("convert", small_source, target)
            assert result.returncode == 0, result.stderr
        result = run_cli("convert", small_source, target, "--overwrite", "--verify")
        assert result.returncode == 0 and "verified" in result.stdout, result.stderr


# -- finding 5: --resume trusts nothing it finds ------------------------------


def start_killable(*argv, delay=0.4):
    """``fixedutf32 convert ARGV`` in a new process that pauses after each chunk it writes."""
    return start_slow_convert(*argv, delay=delay)


def kill_after(child, chunks_dir, count):
    """Kill ``child`` once ``count`` chunk files are under ``chunks_dir``."""
    deadline = time.monotonic() + TIMEOUT
    try:
        while sum(1 for p in chunks_dir.rglob("*") if p.is_file() and "partial" not in p.name) < (
            count
        ):
            assert child.poll() is None, "the conversion ended before it could be killed"
            assert time.monotonic() < deadline, "the conversion wrote nothing in time"
            time.sleep(0.01)
    finally:
        child.kill()
        child.wait()


def test_resume_with_another_grid_is_refused_not_broken(tmp_path):
    source, dest = tmp_path / "src", tmp_path / "dst"
    data = np.array([f"s{i % 7}" * (i % 4) for i in range(14 * 18)]).reshape(14, 18)
    strings(str(source), data, (7, 9))
    kill_after(start_killable(source, dest, "--chunks", "5,5"), dest / "c", 2)
    assert not (dest / "zarr.json").exists()

    before = tree(dest)
    result = run_cli("convert", source, dest, "--resume", "--verify")
    assert_refused(result, "started with other options: chunks [5, 5] (now None)")
    assert tree(dest) == before

    result = run_cli("convert", source, dest, "--resume", "--chunks", "5,5", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stderr
    with quiet():
        back = zarr.open_array(str(dest), mode="r")
        assert back.chunks == (5, 5) and back[:].tolist() == data.tolist()
    assert ".fixedutf32-convert.json" not in tree(dest)  # finished: a plain store

    # A finished conversion is not resumed with other options either.
    result = run_cli("convert", source, dest, "--resume", "--verify")
    assert_refused(result, "metadata of '' differs")
    assert zarr.open_array(str(dest), mode="r")[:].tolist() == data.tolist()


EIGHT = np.array(["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op"])


def test_resume_skips_what_the_journal_says_is_done_from_this_source(tmp_path):
    import json

    source, dest = tmp_path / "src", tmp_path / "dst"
    strings(str(source), EIGHT, (2,))
    kill_after(start_killable(source, dest), dest / "c", 3)  # c/0 and c/1 journaled by then
    result = run_cli("convert", source, dest, "--resume", "--verify", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["verified"] is True and report["arrays"][0]["chunks_kept"] >= 1
    every = sum(p.stat().st_size for p in (source / "c").iterdir())
    assert report["bytes_read"] < every  # journaled chunks were not read again
    assert not any(name.startswith(".fixedutf32") for name in tree(dest))


def test_resume_does_again_the_journaled_chunks_whose_source_changed(tmp_path):
    source, dest = tmp_path / "src", tmp_path / "dst"
    strings(str(source), EIGHT, (2,))
    kill_after(start_killable(source, dest), dest / "c", 3)
    (source / "c" / "0").unlink()  # journaled before the kill; reads as the fill value now
    with quiet():
        zarr.open_array(str(source), mode="r+")[2] = "XY"  # c/1: a new file
    result = run_cli("convert", source, dest, "--resume", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stderr
    assert sorted(tree(dest)) == ["c/1", "c/2", "c/3", "zarr.json"]
    with quiet():
        back = zarr.open_array(str(dest), mode="r")[:].tolist()
    assert back == ["", "", "XY", "gh", "ij", "kl", "mn", "op"]


def test_resume_follows_source_chunks_changed_or_deleted_after_the_kill(tmp_path):
    source, dest = tmp_path / "src", tmp_path / "dst"
    strings(str(source), EIGHT, (2,))
    kill_after(start_killable(source, dest), dest / "c", 3)  # c/0, c/1, c/2 written

    (source / "c" / "0").unlink()  # reads as the fill value now
    with quiet():
        array = zarr.open_array(str(source), mode="r+")
        array[2] = "XY"  # c/1 changes
        array.resize((4,))  # c/2 and c/3 leave the grid
    result = run_cli("convert", source, dest, "--resume", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stderr
    assert sorted(tree(dest)) == ["c/1", "zarr.json"]
    with quiet():
        assert zarr.open_array(str(dest), mode="r")[:].tolist() == ["", "", "XY", "gh"]


# -- as a newcomer met them ---------------------------------------------------


def test_too_small_length_bytes_is_refused_before_anything_is_written(tmp_path):
    source, dest = tmp_path / "src", tmp_path / "dst"
    strings(str(source), np.array(["short", "eleven code", ""]), (2,))  # 11 code points: 44 bytes
    result = run_cli("convert", source, dest, "--length-bytes", "8")
    assert_refused(result, "(11 code points); expected at least 44", "--length-bytes auto")
    assert not dest.exists()


def test_skipped_chunks_are_never_silent(tmp_path):
    from store_data import PLANTED, planted, write_array

    source, dest = tmp_path / "src", tmp_path / "dst"
    write_array(str(source), planted(), "v3_raw")
    chunks = len({tuple(c // n for c, n in zip(where, (3, 2))) for where, _, _ in PLANTED})
    result = run_cli("convert", source, dest, "--skip-invalid", "--verify")
    assert result.returncode == 0, result.stderr
    summary = result.stdout.splitlines()[-1]
    assert f"{chunks} invalid chunks skipped (they read as the fill value)" in summary
    assert summary.endswith(f"verified element by element, except {chunks} skipped chunks")
    assert result.stderr == (
        f"fixedutf32 convert: {chunks} invalid chunks skipped (--skip-invalid); they read as "
        f"the fill value, and the report lists them\n"
    )


@pytest.mark.parametrize("command", ["check", "convert"])
def test_without_the_zarr_extra_one_line_and_exit_2(tmp_path, command):
    code = """
        import sys
        sys.modules["zarr"] = sys.modules["numcodecs"] = None  # as if not installed
        from fixedutf32.__main__ import main
        sys.exit(main(sys.argv[1:]))
    """
    argv = [command, tmp_path / "a"] + ([tmp_path / "b"] if command == "convert" else [])
    result = run_python(code, *argv)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"fixedutf32 {command}: needs zarr-python and numcodecs, and zarr cannot be imported; "
        f'install them with: pip install "fixedutf32[zarr]"\n'
    )


def test_a_bad_simd_level_names_the_variable():
    env = {**os.environ, "FIXEDUTF32_SIMD": "bogus"}
    result = run_python("import fixedutf32", env=env)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "FIXEDUTF32_SIMD is 'bogus'" in last
    assert "'portable'" in last and "'best'" in last, last


def test_a_stopped_conversion_names_the_command_that_finishes_it(tmp_path):
    import json
    import shlex

    from store_data import planted, write_array

    source, dest = tmp_path / "src", tmp_path / "dst"
    write_array(str(source), planted(), "v3_raw")
    result = run_cli("convert", source, dest, "--length-bytes", "auto")
    assert_refused(result, "nothing was written", "--skip-invalid", status=1)
    assert not dest.exists()

    result = run_cli("convert", source, dest, "--endian", "big", "--chunks", "4,4")
    finish = f"fixedutf32 convert {source} {dest} --resume --skip-invalid --endian big --chunks 4,4"
    assert_refused(result, "incomplete (chunks without metadata)", finish, status=1)
    record = json.loads((dest / ".fixedutf32-convert.json").read_text())
    assert record["finish"] == finish  # what a person finds beside the chunks
    result = run_cli(*shlex.split(finish)[1:], "--verify")
    assert result.returncode == 0 and "except" in result.stdout, result.stderr


def test_the_report_shows_every_change_in_counted_english(tmp_path):
    from store_data import hierarchy

    source, dest = tmp_path / "src", tmp_path / "dst"
    hierarchy(str(source), zarr_format=2)  # names: V2 >U4 zstd chunks (3, 2)
    argv = ["--endian", "little", "--chunks", "4,4", "--compressor", "gzip:1", "--length-bytes"]
    result = run_cli("convert", source, dest, *argv, "12")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "array people/names: fixed_length_utf32 -> fixed_length_utf32 (Zarr V2 -> V3, "
        "endian big -> little, length_bytes 16 -> 12, chunks [3, 2] -> [4, 4], "
        "codecs [zstd] -> [gzip]): 4 chunks written"
    )
    assert lines[-1].startswith(
        "1 array converted, 2 arrays copied unchanged (5 chunk keys), 2 groups written: "
    )


def test_resume_refuses_a_record_it_cannot_read(tmp_path, small_source):
    dest = tmp_path / "dst"
    dest.mkdir()
    for record in ("not json", '{"options": [1, 2]}'):
        (dest / ".fixedutf32-convert.json").write_text(record)
        before = tree(dest)
        result = run_cli("convert", small_source, dest, "--resume")
        assert_refused(result, "is not a record of a conversion")
        assert tree(dest) == before


def test_resume_into_a_url_store_refuses_other_options_and_finishes(tmp_path):
    code = """
        import sys
        sys.path.insert(0, sys.argv[2])
        from store_data import planted, write_array
        import fixedutf32.store as s
        from fixedutf32.store._stores import open_handle

        write_array(sys.argv[1], planted(), "v3_raw")
        dest = "memory://hostile-write/out"
        try:
            s.convert(sys.argv[1], dest, chunks=(4, 4))
        except s.InvalidChunkError as exc:
            assert exc.finish.endswith("--resume --skip-invalid --chunks 4,4"), exc.finish
        else:
            raise SystemExit("the planted chunks did not stop the conversion")
        handle = open_handle(dest, "w")
        assert handle.get(".fixedutf32-convert.json") is not None
        handle.set("c/9/9", b"left by another grid")
        try:
            s.convert(sys.argv[1], dest, resume=True, skip_invalid=True)
        except s.StoreError as exc:
            assert "chunks [4, 4] (now None)" in str(exc), exc
        else:
            raise SystemExit("a resume with other chunks was accepted")
        report = s.convert(sys.argv[1], dest, chunks=(4, 4), resume=True, skip_invalid=True,
                           verify=True)
        assert report.verified is True and report.skipped_chunks > 0, report.to_text()
        keys = open_handle(dest).list_prefix("")
        assert "c/9/9" not in keys and not any(k.startswith(".fixedutf32") for k in keys), keys
        print("ok")
    """
    tests = os.path.dirname(os.path.abspath(__file__))
    result = run_python(code, tmp_path / "src", tests)
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
