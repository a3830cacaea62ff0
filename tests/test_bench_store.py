"""``fixedutf32 bench --store``: its report and table, on a small store.

No timing is asserted: the bench runs once, small, and the report's
structure, targets and the check of the stores it wrote are checked.
"""

import json
import os

import pytest

pytest.importorskip("zarr", reason="the store bench needs zarr-python")
pytest.importorskip("numcodecs", reason="the store bench needs numcodecs")

from conftest import run_bench

from fixedutf32.bench import _report, _store, stores

MiB = 1024 * 1024
ROWS = [
    "read chunk files",
    "check raw",
    "read chunk files, cold cache",
    "check raw, cold cache",
    "read shard files",
    "check sharded raw",
    "check zstd, 1 thread",
    "check zstd, 2 threads",
    "zstd-compress the chunks",
    "convert raw -> V3 zstd",
]


def _cli(*args):
    return run_bench("--store", *args)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bench-store")
    done = _cli("--store-size", "5MiB", "--repeat", "1", "--dir", str(directory), "--json")
    assert done.returncode == 0, done.stderr
    assert "measuring check raw" in done.stderr  # progress goes to stderr, the report to stdout
    assert list(directory.iterdir()) == []  # the stores are removed afterwards
    return json.loads(done.stdout)


def test_report_describes_the_run(report):
    assert report["size"] == 5 * MiB and report["chunk_size"] == 2 * MiB
    assert report["threads"] == 2 and report["repeat"] == 1
    assert report["check_ok"] is True
    rows = [row["row"] for row in report["rows"]]
    # The cold-cache rows need the OS to drop a file's cached pages.
    cold = hasattr(os, "posix_fadvise")
    assert rows == (ROWS if cold else [row for row in ROWS if "cold" not in row])
    for row in report["rows"]:
        assert row["seconds"] > 0
        assert row["gbps"] == pytest.approx(report["size"] / row["seconds"] / 1e9)


def test_ratios_carry_the_targets_of_the_issue(report):
    ratios = {ratio["ratio"]: ratio for ratio in report["ratios"]}
    seconds = {row["row"]: row["seconds"] for row in report["rows"]}
    expected = {
        "check raw / read files (speed)": (
            ">=",
            0.8,
            seconds["read chunk files"] / seconds["check raw"],
        ),
        "check sharded / read files (speed)": (
            ">=",
            0.7,
            seconds["read shard files"] / seconds["check sharded raw"],
        ),
        "check zstd 2 threads / 1 thread (speed)": (
            ">=",
            1.7,
            seconds["check zstd, 1 thread"] / seconds["check zstd, 2 threads"],
        ),
        "convert / zstd-compress (time)": (
            "<=",
            1.3,
            seconds["convert raw -> V3 zstd"] / seconds["zstd-compress the chunks"],
        ),
    }
    for name, (bound, target, value) in expected.items():
        ratio = ratios[name]
        assert (ratio["bound"], ratio["target"]) == (bound, target), name
        if any(warning.startswith(name) for warning in report["warnings"]):
            # a speed-up the cores cannot give (a busy machine): withheld, not shown
            assert "threads / 1 thread" in name and value > report["threads"]
            assert ratio["value"] is None and ratio["met"] is None
            continue
        assert ratio["value"] == pytest.approx(value), name
        assert ratio["met"] is (value >= target if bound == ">=" else value <= target), name


def test_table_names_every_row_and_verdict(report):
    # Private on purpose: the table of the fixture's --json run (the CLI prints it
    # only instead of the JSON), and of a failed check, which can only be made up.
    table = _report.format_store_table(report)
    for row in report["rows"]:
        assert f"| {row['row']:<32} |" in table
    assert "<= 1.30 " in table and ">= 0.80 " in table
    assert table.splitlines()[-1].startswith("check found both stores clean")
    failed = dict(report, check_ok=False)
    assert "CHECK FOUND PROBLEMS" in _report.format_store_table(failed)


def test_the_stores_hold_the_data_and_check_clean(tmp_path):
    import zarr

    with stores(3 * MiB, threads=1, directory=str(tmp_path)) as made:
        assert made.check() is True
        assert zarr.open_array(str(made.raw), mode="r")[...].tolist() == made.data.tolist()
        assert len(made.files) == 2  # 2 MiB chunks: one whole, one at the edge
        groups = {group for group, _, _ in made.rows().values()}
        assert groups >= {"read vs check", "check zstd on threads", "convert vs compress"}
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "value"),
    [("--store-size", "12"), ("--store-size", "lots"), ("--dir", "/nonexistent/place")],
)
def test_bad_option_is_a_usage_error(option, value):
    done = _cli(option, value)
    assert done.returncode == 2
    assert option in done.stderr and "Traceback" not in done.stderr


def test_the_smallest_stores_check_clean():
    with stores(4096, threads=1) as made:
        assert made.check() is True
        expected = ["check raw", "check raw, cold cache"] if _store.COLD else ["check raw"]
        assert sorted(made.rows())[: len(expected)] == expected
