"""What a bench run says around its table: the estimate, one progress display, the total time,
the targets line, ``--strict`` and the warnings for a busy machine."""

import io
import json
import re
import subprocess
import sys

import pytest

import fixedutf32.bench
from fixedutf32.bench import _kernels, main
from fixedutf32.bench import _report as _session
from fixedutf32.bench.cases import MiB

SMALL_RUN = ["--sizes", "64KiB", "--threads", "1", "--repeat", "1"]


def test_a_run_says_how_long_it_will_take_first_and_how_long_it_took_last():
    result = subprocess.run(
        [sys.executable, "-m", "fixedutf32", "bench", *SMALL_RUN],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    first = result.stderr.splitlines()[0]
    assert re.fullmatch(r"fixedutf32 bench: about \d+ (s|min) on this machine \(.*\)", first)
    # One display across every step: the plain lines (stderr is not a terminal
    # here) count the time of the whole run, not of one chunk size.
    steps = [line for line in result.stderr.splitlines() if "measuring" in line]
    assert any("to_utf8 (mixed)" in line for line in steps)  # transcoding has steps too
    assert any("call overhead" in line for line in steps)
    assert all(re.match(r"\[ *\d+ s, about \d+ (s|min) left\] measuring ", line) for line in steps)
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"took \d+ s", lines[-1])
    targets = next(line for line in lines if line.startswith("targets: "))
    assert "the project's own goals" in targets and "--strict" in targets


def _run_json(capsys, argv):
    status = main([*argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_strict_exits_3_exactly_when_a_target_is_missed(capsys, monkeypatch):
    status, report = _run_json(capsys, [*SMALL_RUN, "--strict"])
    missed = [row for row in report["rows"] if row["met"] is False]
    assert status == (3 if missed else 0)
    assert isinstance(report["seconds"], float) and isinstance(report["warnings"], list)

    # A run whose every row is missed (the verdicts of a real run, turned):
    real_run = fixedutf32.bench.run

    def all_missed(*args, **kwargs):
        result = real_run(*args, **kwargs)
        for row in result["rows"]:
            if row["target"] is not None:
                row["met"] = False
        return result

    monkeypatch.setattr(fixedutf32.bench, "run", all_missed)
    assert _run_json(capsys, [*SMALL_RUN, "--strict"])[0] == 3
    status, _ = _run_json(capsys, SMALL_RUN)
    assert status == 0  # without --strict a miss is reported, not failed


def test_a_busy_machine_is_named_under_the_table(capsys, monkeypatch):
    monkeypatch.setattr(_session.os, "getloadavg", lambda: (41.0, 40.0, 39.0))
    assert main(SMALL_RUN) == 0
    out = capsys.readouterr().out
    assert re.search(r"WARNING: the machine was busy: load average 41\.0 on \d+ cores", out)


def test_an_impossible_speed_up_is_withheld_not_printed(capsys, monkeypatch):
    monkeypatch.setattr(_kernels, "measure_threads", lambda size, threads: (7.07, 1.0))
    assert main(["--sizes", "64KiB", "--threads", "2", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "7.07x" not in out.split("WARNING")[0]
    assert "decode_chunk n/a (withheld, see the warning)" in out
    assert re.search(r"WARNING: decode_chunk on 2 threads: a speed-up of 7\.07 .* impossible", out)


def test_impossible_thread_ratios_are_blanked():
    ratios = [
        {"ratio": "check zstd 2 threads / 1 thread (speed)", "value": 7.07, "target": 1.7},
        {"ratio": "zstd 2 threads / 1 thread, pipeline", "value": 1.8, "target": 1.7},
        {"ratio": "pipeline / stock, read raw little", "value": 9.0, "target": 1.8},
    ]
    for ratio in ratios:
        ratio["met"] = ratio["value"] >= ratio["target"]
    warnings = _session.withhold_impossible(ratios)
    assert [ratio["value"] for ratio in ratios] == [None, 1.8, 9.0]
    assert ratios[0]["met"] is None and ratios[1]["met"] is True
    assert len(warnings) == 1 and warnings[0].startswith("check zstd 2 threads / 1 thread")
    assert _session.speedup_warning("x", 1.8, 2) is None
    assert _session.speedup_warning("x", None, 2) is None


def test_the_estimate_grows_with_the_work_and_with_a_slower_machine():
    one = _session.estimate_seconds("zarr", [16 * MiB], 9, 12.0)
    assert _session.estimate_seconds("zarr", [256 * MiB], 9, 12.0) > 4 * one
    assert _session.estimate_seconds("zarr", [16 * MiB], 3, 12.0) < one
    assert _session.estimate_seconds("zarr", [16 * MiB], 9, 6.0) == pytest.approx(2 * one, 0.01)
    assert _session.format_duration(5.2) == "about 5 s"
    assert _session.format_duration(400) == "about 7 min"


def test_plain_progress_lines_count_down_one_estimate():
    stream = io.StringIO()
    steps = _session.Steps(60.0, stream=stream)
    steps("first")
    steps("second")
    assert steps.close() >= 0
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].endswith("measuring second")
    assert "about 60 s left" in lines[0]


def test_an_unreadable_size_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--sizes", "lots"])
    assert exited.value.code == 2
    assert "--sizes: cannot read 'lots'" in capsys.readouterr().err
