"""``fixedutf32 check`` and ``fixedutf32 convert``: exit status, stdout, one line on stderr."""

import json
import subprocess
import sys

import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from store_data import PLANTED, hierarchy, planted, quiet, text, tree, write_array  # noqa: E402

from fixedutf32.__main__ import main  # noqa: E402


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def stores(tmp_path):
    clean, bad = tmp_path / "clean", tmp_path / "bad"
    hierarchy(str(clean), zarr_format=2)
    write_array(str(bad), planted(), "v3_zstd_big")
    (tmp_path / "file.txt").write_text("hello")
    (tmp_path / "plain").mkdir()
    return tmp_path


def test_check_exit_status_and_output(stores, capsys):
    status, out, err = run(capsys, "check", str(stores / "clean"), "--no-progress")
    assert (status, err) == (0, "")
    assert "array people/names: V2 shape [7, 5]" in out and "skipped ages: <i4" in out
    assert out.rstrip().endswith("clean: 1 arrays checked, 2 skipped, 0 chunks left unchecked")

    status, out, err = run(capsys, "check", str(stores / "bad"), "--threads", "2")
    assert (status, err) == (1, "")
    assert out.count("code_point: /") == len(PLANTED)
    assert "invalid code point U+D800 (surrogate) at element [0, 1], position 1" in out

    status, out, err = run(capsys, "check", str(stores / "bad"), "--json", "--max-errors", "2")
    report = json.loads(out)
    assert status == 1 and len(report["problems"]) == 2 and report["chunks_unchecked"] >= 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{tmp}/nope"], "no such directory"),
        (["{tmp}/file.txt"], "is a file"),
        (["{tmp}/plain"], "no Zarr group or array"),
        (["nosuchprotocol://bucket/x"], "cannot open the URL 'nosuchprotocol://bucket/x'"),
        (["{tmp}/clean", "--path", "ages"], "holds <i4, not fixed_length_utf32"),
        (["{tmp}/clean", "--path", "people/nothing"], "no Zarr group or array at path"),
        (["{tmp}/clean", "--max-errors", "0"], "max_errors must be a positive int"),
        (["{tmp}/clean", "--threads", "x"], "invalid int value"),
    ],
)
def test_check_usage_errors_are_one_line(stores, capsys, argv, message):
    argv = [a.replace("{tmp}", str(stores)) for a in argv]
    status, out, err = run(capsys, "check", *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("fixedutf32 check: ") and message in err


def test_convert_cli(stores, capsys):
    dest = stores / "out"
    status, out, err = run(
        capsys,
        "convert",
        str(stores / "clean"),
        str(dest),
        "--to",
        "string",
        "--compressor",
        "gzip:1",
        "--verify",
        "--json",
    )
    report = json.loads(out)
    assert status == 0 and report["verified"] is True and err == ""
    with quiet():
        assert zarr.open_array(str(dest / "people" / "names"))[:].tolist() == [
            [s if s else "" for s in row]
            for row in zarr.open_array(str(stores / "clean" / "people" / "names"))[:].tolist()
        ]
    before = tree(dest)
    status, out, err = run(capsys, "convert", str(stores / "clean"), str(dest))
    assert status == 2 and "exists; pass overwrite" in err and tree(dest) == before

    status, out, err = run(
        capsys, "convert", str(stores / "bad"), str(stores / "out2"), "--threads", "1"
    )
    assert status == 1 and err.count("\n") == 1
    assert "invalid code point U+D800 (surrogate) at element [0, 1]" in err
    resume = ["convert", str(stores / "bad"), str(stores / "out2"), "--resume", "--skip-invalid"]
    status, out, err = run(capsys, *resume, "--length-bytes", "auto", "--verify")
    assert status == 2 and "started with other options: length_bytes None (now 'auto')" in err
    status, out, err = run(capsys, *resume, "--verify")
    assert status == 0 and "skipped (fill value written)" in out and "verified" in out

    for argv, message in [
        (["--length-bytes", "x"], "expected a multiple of 4 or 'auto'"),
        (["--compressor", "lz5"], "expected zstd[:LEVEL]"),
        (["--chunks", "a,b"], "--chunks: expected integers"),
        (["--length-bytes", "6"], "multiple of 4"),
    ]:
        status, out, err = run(capsys, "convert", str(stores / "clean"), str(stores / "o3"), *argv)
        assert status == 2 and err.count("\n") == 1 and message in err, err
    assert not (stores / "o3").exists()


def test_real_entry_point_prints_no_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "fixedutf32", "check", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert (
        result.stderr == f"fixedutf32 check: no such directory: '{tmp_path / 'nope'}'; "
        f"expected a Zarr store\n"
    )


def test_progress_goes_to_stderr(tmp_path, capsys):
    write_array(str(tmp_path / "s"), text(), "v2_C")
    status, out, err = run(capsys, "check", str(tmp_path / "s"), "--progress")
    assert status == 0 and "9/9 chunks" in err and "chunks" not in out.splitlines()[0][:5]
