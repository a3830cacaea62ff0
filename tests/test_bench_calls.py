"""The call rows of ``fixedutf32 bench``: batches against single calls, the C API through ctypes."""

import pytest

from fixedutf32 import _kernels
from fixedutf32.bench import _kernels as _calls
from fixedutf32.bench import _report, format_table


def test_batch_rows_are_judged_on_their_ratio():
    rows = _calls.measure_batches(repeat=1, rounds=1)
    names = {row["call"] for row in rows}
    # Every target of the family names a row the bench measures, and the other way round.
    targeted = {row for family, row, _ in _report.TARGETS if family == "calls"}
    assert names == targeted - {_calls.ARROW_CHECK}
    for row in rows:
        assert row["size"] == _calls.BATCH_CHUNK
        assert row["ratio"] == row["us"] / row["baseline_us"]
        assert row["bound"] == "<=" and row["target"] == 0.25
        assert row["met"] is (row["ratio"] <= 0.25)


def test_c_api_rows_call_the_table_in_the_capsule():
    table = _calls.c_api_table()
    assert (table.abi_major, table.abi_minor) == _kernels.C_API_VERSION
    assert table.simd_level().decode() == _kernels.get_simd_level()
    bad = b"\x00\xd8\x00\x00" * 2
    status = table.validate(bad, 2, 1, 0)
    assert (status.kind, status.element, status.position, status.detail) == (
        _kernels.SURROGATE,
        0,
        0,
        0xD800,
    )
    rows = _calls.measure_c_api(repeat=1, rounds=1)
    assert [row["size"] for row in rows] == list(_calls.C_API_SIZES)
    assert all(row["us"] > 0 and row["target"] is None for row in rows)


def test_the_table_prints_the_call_rows():
    report = {
        "simd_level": "portable",
        "native_byteorder": "little",
        "rows": [],
        "overhead_us": {},
        "calls": _calls.measure_batches(repeat=1, rounds=1),
        "threads": {},
        "notes": [],
    }
    text = format_table(report)  # type: ignore[arg-type]
    assert "decode_chunks, swap, into outs" in text and "<= 0.25" in text


def test_the_arrow_check_row_is_judged_against_making_the_same_strings():
    row = _calls.measure_arrow_check(repeat=1, rounds=1, strings=1 << 12)
    assert row["call"] == _calls.ARROW_CHECK and row["baseline"] == "to_arrow_strings"
    assert row["size"] > 0 and row["us"] > 0 and row["baseline_us"] > 0
    assert row["ratio"] == pytest.approx(row["us"] / row["baseline_us"])
    assert row["bound"] == "<=" and row["target"] == 0.05
    assert row["met"] is (row["ratio"] <= 0.05)
