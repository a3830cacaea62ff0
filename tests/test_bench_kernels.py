"""The kernel rows of ``fixedutf32 bench`` measure what they say.

Each row times a kernel beside the NumPy way of doing the same job and beside
its floor (the least memory traffic of the job, done by NumPy on the same
bytes).  These tests check the calls themselves, not their speed: that each
kernel and its NumPy way compute the same thing, that the no-copy row copies
nothing, that each floor touches exactly the bytes it claims, and that a row's
verdict follows from its floor ratio and target.
"""

import re

import numpy as np
import pytest

from fixedutf32.bench import _kernels, format_table, run
from fixedutf32.bench import _report as _targets
from fixedutf32.bench.cases import (
    NATIVE,
    WIDTH,
    kernel_cases,
    make_text,
    read_only_floor,
    rewrite_floor,
    sample_chunk,
)

SIZE = 64 * 1024


@pytest.fixture(scope="module")
def cases():
    return {case.name: case for case in kernel_cases(SIZE)}


def as_bytes(result):
    """A kernel's or NumPy's result as comparable bytes (None and bools as they are)."""
    if result is None or isinstance(result, (bool, np.bool_)):
        return result
    return np.ascontiguousarray(result).tobytes()


@pytest.mark.parametrize(
    "name",
    [
        "decode native (no copy)",
        "decode swap -> new",
        "decode swap -> new, validate=False",
        "encode -> swapped",
        "encode -> swapped, validate=False",
        "repad widen U8->U16",
        "repad narrow U16->U8",
    ],
)
def test_kernel_and_numpy_way_make_the_same_bytes(cases, name):
    case = cases[name]
    assert as_bytes(case.kernel()) == as_bytes(case.numpy_way())


def test_validate_and_str_lengths_agree_with_numpy(cases):
    assert cases["validate"].kernel() is None and cases["validate"].numpy_way() is True
    lengths = cases["str_lengths"].kernel()
    assert lengths.tolist() == cases["str_lengths"].numpy_way().tolist()
    assert lengths.size == SIZE // (4 * WIDTH) and 0 < lengths.max() <= WIDTH


def test_in_place_row_restores_its_input(cases):
    case = cases["decode swap in place"]
    case.prepare()
    first = as_bytes(case.kernel())
    case.prepare()
    assert as_bytes(case.kernel()) == first  # the same input each time
    case.prepare()
    case.numpy_way()
    case.prepare()
    assert as_bytes(case.kernel()) == first


def test_no_copy_row_and_its_numpy_way_copy_nothing(cases):
    case = cases["decode native (no copy)"]
    result, numpy_result = case.kernel(), case.numpy_way()
    # Both are views of one buffer, the chunk the row reads.
    assert np.shares_memory(result, numpy_result)
    assert not result.flags.owndata and not numpy_result.flags.owndata
    assert case.floor_name == "read"


def test_each_row_is_held_to_the_traffic_of_its_job(cases):
    assert {name: case.floor_name for name, case in cases.items()} == {
        "validate": "read",
        "decode native (no copy)": "read",
        "decode swap -> new": "memcpy",
        "decode swap -> new, validate=False": "memcpy",
        "decode swap in place": "rewrite in place",
        "encode -> swapped": "memcpy",
        "encode -> swapped, validate=False": "memcpy",
        "repad widen U8->U16": "copy half, zero half",
        "repad narrow U16->U8": "copy, read as much",
        "str_lengths": "read, write lengths",
    }
    for case in cases.values():
        assert (case.floor is None) == (case.floor_name == "memcpy")


@pytest.mark.parametrize("nbytes", [64, 4096, 1 << 20])
def test_read_only_floor_reads_every_byte_and_writes_none(nbytes):
    source = np.frombuffer(sample_chunk(nbytes, NATIVE), np.uint8).copy()
    before = source.copy()
    floor = read_only_floor(source, tries=1)
    floor()
    assert np.array_equal(source, before)  # nothing written
    # Over zeros it gives 0, and one non-zero byte anywhere changes that: it
    # reads the first byte, the last and one in the middle.
    source[:] = 0
    assert floor() == 0
    for index in (0, source.size // 2 + 3, source.size - 1):
        source[index] = 1
        assert floor() != 0, index
        source[index] = 0


def test_rewrite_floor_rewrites_the_buffer_unchanged_in_place():
    buffer = np.frombuffer(sample_chunk(4096, NATIVE), np.uint8).copy()
    before = buffer.copy()
    result = rewrite_floor(buffer)()
    assert np.shares_memory(result, buffer) and np.array_equal(buffer, before)


def test_widening_and_narrowing_floors_touch_the_bytes_of_their_rows(cases):
    # The widening floor writes as many bytes as the kernel does, half of them
    # copied from the input; the narrowing floor reads the whole input.
    widen = cases["repad widen U8->U16"]
    assert widen.nbytes == 2 * (SIZE // 2)
    narrow = cases["repad narrow U16->U8"]
    assert narrow.nbytes == SIZE  # bytes written; it reads twice as many
    widen.floor()
    narrow.floor()


def test_rows_carry_their_floor_ratio_and_a_verdict_from_it():
    rows = _kernels.measure(SIZE, repeat=1, rounds=1, numpy_repeat=1)
    assert [row["kernel"] for row in rows] == [case.name for case in kernel_cases(SIZE)]
    for row in rows:
        assert row["size"] == SIZE
        assert row["memcpy_gbps"] == pytest.approx(row["gbps"] / row["ratio_memcpy"])
        if row["floor"] == "memcpy":
            assert row["ratio_floor"] == row["ratio_memcpy"]
        target = _targets.target("kernel", row["kernel"], SIZE)
        if target is None:
            assert row["target"] is None and row["met"] is None
        else:
            assert row["target"] == target.value
            assert row["met"] is (row["ratio_floor"] >= target.value)


def test_every_kernel_target_names_a_row_the_bench_measures():
    names = {case.name for case in kernel_cases(SIZE)}
    rows = {row for family, row, _ in _targets.TARGETS if family == "kernel"}
    assert rows <= names
    # The read-only rows and the copies have targets at every size they run at.
    for name in ("validate", "decode swap -> new", "encode -> swapped"):
        for nbytes in (SIZE, 1 << 20, 64 << 20):
            assert _targets.target("kernel", name, nbytes) is not None, (name, nbytes)


def test_a_ratio_below_its_target_is_missed():
    target = _targets.target("kernel", "str_lengths", 1 << 20)
    assert target is not None
    assert _targets.judge("kernel", "str_lengths", target.value - 0.01, 1 << 20)["met"] is False
    assert _targets.judge("kernel", "str_lengths", target.value, 1 << 20)["met"] is True


def test_the_generated_text_and_the_kernel_rows_it_feeds():
    assert len(sample_chunk(200, "big")) == 192  # three 64-byte elements
    text = make_text("ascii", 640)
    assert (text.dtype.str[1:], text.shape) == ("U16", (10,))
    with pytest.raises(ValueError, match="kind must be 'ascii' or 'mixed', got 'greek'"):
        make_text("greek", 640)
    names = [case.name for case in kernel_cases(4096)]
    assert names[:3] == ["validate", "decode native (no copy)", "decode swap -> new"]


def test_run_reports_the_rows_and_the_table_heads_them():
    report = run([64 * 1024], threads=1, repeat=1)
    assert (report["rows"][0]["kernel"], report["rows"][0]["target"]) == ("validate", 0.5)
    assert report["threads"] == {}
    first = format_table(report).splitlines()[0]
    assert re.fullmatch(
        r"fixedutf32 bench: SIMD level \S+, (little|big)-endian host; "
        r"text of 16-code-point elements, mostly ASCII",
        first,
    )
    with pytest.raises(ValueError, match="sizes: expected at least 64 bytes"):
        run([32])
