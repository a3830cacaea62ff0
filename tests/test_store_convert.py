"""fixedutf32.store.convert: round trips through every target type, nothing
lost, refusals that change nothing, and a killed conversion resumed."""

import json
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from store_data import (  # noqa: E402
    CHUNKS,
    LAYOUTS,
    PLANTED,
    expected_key,
    hierarchy,
    planted,
    quiet,
    text,
    tree,
    write_array,
)

from fixedutf32.store import InvalidChunkError, StoreError, check, convert  # noqa: E402


def _read(where, path):
    with quiet():
        return zarr.open_array(store=where, path=path, mode="r")


def _assert_carried_over(where):
    """Groups, attributes and the non-string arrays of ``hierarchy`` are all there."""
    group = zarr.open_group(where, mode="r")
    assert group.metadata.zarr_format == 3
    assert group.attrs["title"] == "names"
    assert group["people"].attrs["unit"] == "person"
    assert group["people/names"].attrs["note"] == "ünïcode"
    assert group["ages"][:].tolist() == list(range(10))
    np.testing.assert_array_equal(group["heights"][:], [1.5, np.nan, 2.0])


def test_round_trip_v2_to_fixed_to_string_and_back(tmp_path):
    source = str(tmp_path / "v2")
    data = hierarchy(source, zarr_format=2)
    fixed, string, back = (str(tmp_path / name) for name in ("fixed", "string", "back"))

    report = convert(source, fixed, length_bytes="auto", verify=True, threads=2)
    assert report.verified is True and report.mismatches == []
    assert [a["path"] for a in report.arrays] == ["people/names"]
    assert report.arrays[0]["length_bytes"] == 12  # longest string: 3 code points
    assert report.arrays[0]["chunks_missing"] == 1
    assert report.copied == ["ages", "heights"] and report.groups == ["", "people"]
    names = _read(fixed, "people/names")
    assert names.metadata.zarr_format == 3 and names.fill_value == "?"
    assert names[:].tolist() == data.tolist()
    _assert_carried_over(fixed)
    assert check(fixed).ok

    report = convert(fixed, string, to="string", verify=True, threads=2)
    assert report.verified is True
    doc = json.loads((tmp_path / "string" / "people" / "names" / "zarr.json").read_text())
    assert doc["data_type"] == "string" and doc["codecs"][0]["name"] == "vlen-utf8"
    assert _read(string, "people/names")[:].tolist() == data.tolist()
    _assert_carried_over(string)

    report = convert(string, back, endian="big", verify=True, threads=1)
    assert report.verified is True and report.arrays[0]["length_bytes"] == 12
    names = _read(back, "people/names")
    assert names[:].tolist() == data.tolist()
    assert check(back).arrays[0].endian == "big"
    _assert_carried_over(back)


@pytest.mark.parametrize("to", ["fixed_length_utf32", "string"])
def test_new_chunks(tmp_path, to):
    source, dest = str(tmp_path / "src"), str(tmp_path / "dst")
    data = hierarchy(source, zarr_format=3)
    report = convert(source, dest, to=to, chunks=(4, 4), verify=True)
    assert report.verified is True
    names = _read(dest, "people/names")
    assert names.chunks == (4, 4) and names[:].tolist() == data.tolist()


def test_zip_and_memory_stores(tmp_path):
    source = f"memory://convert-{uuid.uuid4().hex}"
    data = text()
    write_array(source, data, "v3_sharded")
    dest = str(tmp_path / "out.zip")
    report = convert(source, dest, to="string", verify=True)
    assert report.verified is True
    store = zarr.storage.ZipStore(dest, mode="r")
    assert zarr.open_array(store, mode="r")[:].tolist() == data.tolist()
    store.close()
    again = f"memory://convert-{uuid.uuid4().hex}"
    assert convert(dest, again, length_bytes=16, verify=True).verified is True


@pytest.mark.parametrize("length_bytes, endian", [(12, "big"), (24, "little")])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_layout_to_a_new_width_and_byte_order(tmp_path, layout, length_bytes, endian):
    # Through the one writer (KeyWriter): repadded, swapped and kept in the source's memory
    # order in one checked pass; zarr reads back exactly the source's strings.
    source, dest = str(tmp_path / "src"), str(tmp_path / "dst")
    data = text()
    write_array(source, data, layout)
    report = convert(source, dest, length_bytes=length_bytes, endian=endian, verify=True)
    assert report.verified is True and report.mismatches == []
    converted = _read(dest, "")
    assert converted.dtype.itemsize == length_bytes
    assert converted[:].tolist() == data.tolist()
    assert check(dest).arrays[0].endian == endian


def test_v2_out_from_a_v2_source(tmp_path):
    source, dest = str(tmp_path / "src"), str(tmp_path / "dst")
    data = hierarchy(source, zarr_format=2)
    convert(source, dest, zarr_format=2, endian="little", length_bytes=20, verify=True)
    names = _read(dest, "people/names")
    assert names.metadata.zarr_format == 2 and names.dtype == np.dtype("<U5")
    assert names[:].tolist() == data.tolist()
    v3 = str(tmp_path / "v3")
    write_array(v3, text(), "v3_raw")
    with pytest.raises(StoreError, match="needs a Zarr V2 source"):
        convert(v3, str(tmp_path / "x"), zarr_format=2)
    assert not (tmp_path / "x").exists()


def test_existing_destination_is_left_exactly_as_it_was(tmp_path):
    source, dest = str(tmp_path / "src"), tmp_path / "dst"
    hierarchy(source, zarr_format=2)
    convert(source, str(dest), to="string")
    before = tree(dest)
    with pytest.raises(StoreError, match="exists; pass overwrite"):
        convert(source, str(dest))
    assert tree(dest) == before
    (tmp_path / "out.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip
    with pytest.raises(StoreError, match="exists"):
        convert(source, str(tmp_path / "out.zip"))
    assert (tmp_path / "out.zip").read_bytes() == b"PK\x05\x06" + b"\0" * 18
    for target in (source, str(tmp_path), source + "/people"):
        with pytest.raises(StoreError, match="the source is never written"):
            convert(source, target, overwrite=True)
    assert check(source).ok
    report = convert(source, str(dest), overwrite=True, verify=True)
    assert report.verified is True and tree(dest) != before


def test_invalid_chunk_stops_then_skip_invalid_resumes(tmp_path):
    source, dest = str(tmp_path / "src"), str(tmp_path / "dst")
    data = planted()
    write_array(source, data, "v2_F_zstd_big")
    with pytest.raises(InvalidChunkError) as info:
        convert(source, dest, threads=1)
    problem = info.value.problem
    assert (problem.key, problem.coordinates, problem.code_point) == ("0.0", (0, 1), 0xD800)
    assert "--skip-invalid" in str(info.value)
    stopped = check(dest)  # visibly incomplete: no metadata written, and how to finish it
    assert not stopped.ok and [p.kind for p in stopped.problems] == ["incomplete"]
    assert "finish it with: " in stopped.problems[0].message
    assert "--resume --skip-invalid" in stopped.problems[0].message

    report = convert(source, dest, resume=True, skip_invalid=True, verify=True, threads=2)
    assert report.verified is True
    bad_keys = {expected_key("v2_F_zstd_big", c) for c, _, _ in PLANTED}
    assert {p.key for p in report.skipped} == bad_keys
    out = _read(dest, "")[:]
    for coordinates, _, _ in PLANTED:
        chunk = tuple(slice(c // n * n, c // n * n + n) for c, n in zip(coordinates, CHUNKS))
        assert (out[chunk] == "").all()  # the fill value
    clean = np.ones(out.shape, bool)
    for coordinates, _, _ in PLANTED:
        clean[tuple(slice(c // n * n, c // n * n + n) for c, n in zip(coordinates, CHUNKS))] = False
    assert out[clean].tolist() == data[clean].tolist()


def test_too_small_length_bytes_is_refused_up_front(tmp_path):
    source = str(tmp_path / "src")
    write_array(source, text(), "v3_raw")
    with pytest.raises(ValueError, match=r"\(3 code points\); expected at least 12.*auto"):
        convert(source, str(tmp_path / "dst"), length_bytes=8, threads=1)
    assert not (tmp_path / "dst").exists()


def test_bad_arguments_touch_nothing(tmp_path):
    source = str(tmp_path / "src")
    write_array(source, text(), "v3_raw")
    dest = tmp_path / "dst"
    for kwargs, message in [
        (dict(to="utf8"), "to must be"),
        (dict(to="string", zarr_format=2), "zarr_format"),
        (dict(length_bytes=6), "multiple of 4"),
        (dict(chunks=(2,)), "1 dimensions"),
        # integers only: not cut to 2, not read as 4
        (dict(chunks=(2.5, 3)), "sequence of positive ints, got \\(2.5, 3\\)"),
        (dict(chunks=("4", 4)), "sequence of positive ints"),
        (dict(chunks=(True, 4)), "positive ints, one per dimension"),
        (dict(chunks=(0, 4)), "positive ints, one per dimension"),
        (dict(chunks=iter((True, 4))), "positive ints, one per dimension, got \\[True, 4\\]"),
        (dict(compressors=[{"name": "nope"}]), "codec"),
        (dict(overwrite=True, resume=True), "exclude each other"),
        (dict(endian="middle"), "endian"),
    ]:
        with pytest.raises(ValueError, match=message):
            convert(source, str(dest), **kwargs)
        assert not dest.exists()


def test_killed_conversion_resumed_equals_an_uninterrupted_one(tmp_path):
    source = str(tmp_path / "src")
    hierarchy(source, zarr_format=2)
    dest, whole = tmp_path / "dst", tmp_path / "whole"
    code = (
        "import sys, time, fixedutf32.store as s; s.convert(sys.argv[1], sys.argv[2], threads=1, "
        "journal_seconds=0, on_progress=lambda *_: time.sleep(0.5))"
    )
    child = subprocess.Popen([sys.executable, "-c", code, source, str(dest)])
    chunks = dest / "people" / "names" / "c"
    deadline = time.monotonic() + 60
    # One task at a time, each journaled before the next starts (journal_seconds=0): once a
    # third chunk is written, the first two are in the journal, however slow the machine.
    while not (chunks.exists() and sum(1 for p in chunks.rglob("*") if p.is_file()) >= 3):
        assert child.poll() is None and time.monotonic() < deadline, "the conversion ended early"
        time.sleep(0.02)
    child.kill()
    child.wait()
    assert (
        not (dest / "zarr.json").exists() and not (dest / "people" / "names" / "zarr.json").exists()
    )
    stopped = check(str(dest))  # the root reads as incomplete, with the command that finishes it
    assert not stopped.ok and [p.kind for p in stopped.problems] == ["incomplete"]
    assert "--resume" in stopped.problems[0].message

    report = convert(source, str(dest), resume=True, threads=2, verify=True)
    assert report.verified is True and report.arrays[0]["chunks_kept"] >= 2
    convert(source, str(whole), threads=2)
    assert tree(dest) == tree(whole)
    # Resuming a finished conversion writes nothing and keeps it equal.
    again = convert(source, str(dest), resume=True)
    assert again.bytes_written == 0 and tree(dest) == tree(whole)


def test_on_progress_is_called_after_each_task_and_journal_seconds_is_checked(tmp_path):
    source = str(tmp_path / "src")
    hierarchy(source, zarr_format=2)
    seen = []
    convert(source, str(tmp_path / "dst"), threads=2, on_progress=lambda *a: seen.append(a))
    totals = {total for _, total in seen}
    assert len(totals) == 1 and [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert seen[-1][0] == seen[-1][1] > 0
    for kwargs, message in [
        (dict(on_progress=1), "on_progress must be a callable"),
        (dict(journal_seconds=-1), "journal_seconds"),
        (dict(journal_seconds=float("nan")), "journal_seconds"),
        (dict(journal_seconds=True), "journal_seconds"),
    ]:
        with pytest.raises(ValueError, match=message):
            convert(source, str(tmp_path / "never"), **kwargs)
        assert not (tmp_path / "never").exists()
