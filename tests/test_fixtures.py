"""The fixture generators in tests/fixtures/ and their one convention (``_writer.py``).

Each generator writes its committed files again, byte for byte; it refuses to
overwrite existing files unless given ``--force``; a run that fails leaves the
files as they were.
"""

import importlib
import json
import pathlib
import shutil
import subprocess
import sys

import _writer
import pytest

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
# folder -> (its generator, the optional test dependencies it needs)
GENERATORS = {
    "golden": ("make_golden", ()),
    "transcode": ("make_transcode", ("numcodecs",)),
    "zarr_stores": ("make_zarr_stores", ("zarr", "numcodecs")),
}


def generator(folder):
    """The generator module of ``folder``; skips if it needs a package that is missing."""
    name, needs = GENERATORS[folder]
    for package in needs:
        pytest.importorskip(package, reason=f"{name}.py needs {package} (fixedutf32[test])")
    return importlib.import_module(name)


def tree(root):
    """Every file under ``root`` and its bytes; a gzip member's time stamp
    (header bytes 4 to 7, which gzip sets to the time of writing) reads as 0."""
    snapshot = {}
    for name in _writer.files(root):
        data = (root / name).read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = data[:4] + bytes(4) + data[8:]
        snapshot[name] = data
    return snapshot


def raw_tree(root):
    return {name: (root / name).read_bytes() for name in _writer.files(root)}


@pytest.mark.parametrize("folder", sorted(GENERATORS))
def test_regenerating_gives_the_committed_files(tmp_path, folder):
    module = generator(folder)
    if folder == "zarr_stores":
        import numcodecs
        import zarr

        recorded = json.loads((FIXTURES / folder / "expected.json").read_text(encoding="ascii"))
        installed = {"zarr_version": zarr.__version__, "numcodecs_version": numcodecs.__version__}
        if installed != {key: recorded[key] for key in installed}:
            pytest.skip(f"the stores were written by {recorded}, this is {installed}")
    assert module.main(["--out", str(tmp_path / folder)]) == 0
    committed = tree(FIXTURES / folder)
    assert len(committed) >= 2
    assert tree(tmp_path / folder) == committed


@pytest.mark.parametrize("folder", sorted(GENERATORS))
def test_existing_files_are_refused_without_force(tmp_path, capsys, folder):
    module = generator(folder)
    out = tmp_path / folder
    shutil.copytree(FIXTURES / folder, out)
    before = raw_tree(out)
    assert module.main(["--out", str(out)]) == _writer.REFUSED
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"refusing to overwrite {len(before)} existing file(s)" in captured.err
    assert sorted(before)[0] in captured.err and "--force" in captured.err
    assert raw_tree(out) == before
    assert list(tmp_path.iterdir()) == [out]  # no temporary folder left behind


def test_force_replaces_only_what_differs(tmp_path, capsys):
    module = generator("golden")
    out = tmp_path / "golden"
    shutil.copytree(FIXTURES / "golden", out)
    (out / "encoded.01.big.dat").write_bytes(b"damaged")
    assert module.main(["--out", str(out), "--force"]) == 0
    assert raw_tree(out) == raw_tree(FIXTURES / "golden")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["changed", str(out / "encoded.01.big.dat")]
    assert lines[1] == f"make_golden.py: wrote 1 file(s) in {out}; 14 unchanged"


def test_a_failed_run_leaves_the_target_as_it_was(tmp_path):
    out = tmp_path / "data"
    out.mkdir()
    (out / "a.dat").write_bytes(b"old")

    def write(folder):
        (folder / "a.dat").write_bytes(b"new")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        _writer.run(write, out, "make_test.py", "", ["--force"])
    assert raw_tree(out) == {"a.dat": b"old"}
    assert list(tmp_path.iterdir()) == [out]


def test_script_runs_from_any_directory(tmp_path):
    script = [sys.executable, str(FIXTURES / "make_golden.py"), "--out", "golden"]
    first = subprocess.run(script, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout.splitlines()[-1] == "make_golden.py: wrote 15 file(s) in golden; 0 unchanged"
    )
    assert raw_tree(tmp_path / "golden") == raw_tree(FIXTURES / "golden")
    again = subprocess.run(script, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1
    assert "refusing to overwrite 15 existing file(s) in golden" in again.stderr
    assert "Traceback" not in again.stderr
