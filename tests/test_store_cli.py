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
    assert out.rstrip().endswith("clean: 1 array checked, 2 skipped, 0 chunks left unchecked")

    status, out, err = run(capsys, "check", str(stores / "bad"), "--threads", "2")
    assert (status, err) == (1, "")
    assert out.count("/, chunk c/") == len(PLANTED)  # array, chunk key, then what is wrong
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


# --- help and options, as a newcomer reads them (issue 18) ---------------------


@pytest.mark.parametrize("command", ["check", "convert"])
def test_every_option_has_help_and_its_default(capsys, command):
    import argparse

    import fixedutf32.store._cli as cli

    parsers = []
    original = argparse.ArgumentParser.parse_args

    def keep(self, *args, **kwargs):
        parsers.append(self)
        return original(self, *args, **kwargs)

    argparse.ArgumentParser.parse_args = keep
    try:
        getattr(cli, f"{command}_main")(["--help"])
    finally:
        argparse.ArgumentParser.parse_args = original
    out = capsys.readouterr().out
    (parser,) = parsers
    for action in parser._actions:
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
        if action.option_strings and action.nargs != 0 and action.default is not None:
            shown = cli._HelpFormatter(parser.prog)._get_help_string(action)
            assert "(default: " in shown, f"{command} --{action.dest}: {shown}"
    assert "(default: 3)" in out or command == "check"
    for choice in ("{fixed_length_utf32,string}", "{2,3}", "{little,big}"):
        assert command == "check" or choice in out


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("zstd:99", "zstd: expected a level from -131072 to 22, got 99"),
        ("gzip:10", "gzip: expected a level from 0 to 9, got 10"),
        ("blosc:x", "blosc: expected an integer level from 0 to 9, got 'x'"),
        ("lz4", "expected zstd[:LEVEL], gzip[:LEVEL], blosc[:LEVEL] or none, got 'lz4'"),
        ("none:3", "expected zstd[:LEVEL], gzip[:LEVEL], blosc[:LEVEL] or none, got 'none:3'"),
    ],
)
def test_compressor_levels_are_checked_against_the_codec(tmp_path, option, message):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fixedutf32",
            "convert",
            str(tmp_path / "a"),
            str(tmp_path / "b"),
            "--compressor",
            option,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "b").exists()


def test_compressor_settings_come_from_the_one_defaults_table():
    from fixedutf32._source import DEFAULTS
    from fixedutf32.store._cli import _compressor, _compressors

    (zstd,) = _compressors(_compressor("zstd"), 3)
    assert zstd == {"name": "zstd", "configuration": dict(DEFAULTS["zstd"])}
    (gzip,) = _compressors(_compressor("gzip:1"), 2)
    assert gzip == {"id": "gzip", "level": 1}
    (blosc,) = _compressors(_compressor("blosc"), 3)
    assert blosc["configuration"]["typesize"] == 4  # shuffled by UTF-32 code unit
    assert blosc["configuration"]["clevel"] == DEFAULTS["blosc"]["clevel"]


def test_an_interrupted_conversion_reads_as_incomplete_at_the_root(tmp_path, capsys):
    """convert and check say the same of a stopped conversion: incomplete, and how to finish."""
    source, dest = tmp_path / "one", tmp_path / "out"
    with quiet():
        array = zarr.create_array(source, shape=(8,), chunks=(2,), dtype="<U4", compressors=None)
        array[:] = "ab"
    chunk = source / "c" / "3"
    stored = bytearray(chunk.read_bytes())
    stored[4:8] = (0xD800).to_bytes(4, "little")  # a lone surrogate stops the conversion
    chunk.write_bytes(bytes(stored))
    status, _, err = run(capsys, "convert", str(source), str(dest), "--threads", "1")
    finish = f"fixedutf32 convert {source} {dest} --resume --skip-invalid"
    assert status == 1 and "incomplete (chunks without metadata)" in err and finish in err
    assert not (dest / "zarr.json").exists()
    status, out, _ = run(capsys, "check", str(dest))
    assert status == 1  # problems found, not "no store here" (2)
    assert out.splitlines()[0] == (
        "/: incomplete: chunks without metadata (keys but no zarr.json, .zarray or .zgroup): "
        f"an interrupted conversion; finish it with: {finish}"
    )
    status, out, _ = run(capsys, *finish.split()[1:])
    assert status == 0
    assert run(capsys, "check", str(dest))[0] == 0


def test_keys_without_metadata_at_the_root_read_as_incomplete(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "0").write_bytes(bytes(16))
    status, out, _ = run(capsys, "check", str(tmp_path))
    assert status == 1
    assert out.startswith("/: incomplete: chunks without metadata")
    assert "1 problem: 0 arrays checked" in out
    assert run(capsys, "check", str(tmp_path / "nothing-here"))[0] == 2
