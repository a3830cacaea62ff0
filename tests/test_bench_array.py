"""``fixedutf32 bench --zarr PATH_OR_URL``: the read ratios on a user's own array, which it
never writes; one line and status 2 for what is not such an array.

No timing is asserted: the bench runs once, small, and the rows and ratios are checked.
"""

import json
import warnings

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="the zarr bench needs zarr-python")
pytest.importorskip("numcodecs", reason="the zarr bench needs numcodecs")

from conftest import assert_one_line_error, run_bench  # noqa: E402

FUSED = hasattr(zarr.core.codec_pipeline, "FusedCodecPipeline")
DATA = np.array([f"w{i}é😀" for i in range(3000)], "<U8")


def _make(path, layout):
    from zarr.codecs import ZstdCodec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if layout == "v2":
            array = zarr.create_array(
                path, shape=DATA.shape, chunks=(1000,), dtype=">U8", zarr_format=2
            )
            array[...] = DATA
            return
        zstd = ZstdCodec() if layout != "raw" else None
        shards = (2048,) if layout == "sharded" else None
        zarr.create_array(path, data=DATA, chunks=(256,), shards=shards, compressors=zstd)


def _snapshot(root):
    return {
        str(path): (path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.mark.parametrize("layout", ["raw", "zstd", "sharded", "v2"])
def test_the_ratios_of_your_array_and_the_store_left_as_it_was(tmp_path, layout):
    path = tmp_path / layout
    _make(str(path), layout)
    before = _snapshot(tmp_path)
    done = run_bench("--zarr", str(path), "--repeat", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert "measuring read your array" in done.stderr
    assert _snapshot(tmp_path) == before  # bytes and mtimes: nothing written
    report = json.loads(done.stdout)
    assert report["array"] == str(path) and report["size"] == DATA.nbytes
    (row,) = report["rows"]
    assert row["case"] == "read your array"
    ran = {name for name, gbps in row["gbps"].items() if gbps is not None}
    expected = {"stock", "pipeline", "pooled", "reader", "floor"} | ({"fused"} if FUSED else set())
    assert ran == expected | ({"codec"} if layout != "v2" else set())
    assert all(row["same_data"][name] is True for name in ran), row["same_data"]
    assert row["codec"] == {"raw": "raw", "zstd": "zstd", "sharded": "sharded zstd"}.get(
        layout, "zstd"
    )
    ratios = {ratio["ratio"]: ratio["value"] for ratio in report["ratios"]}
    for name in (
        "pipeline / fastest zarr",
        "pipeline / stock",
        *(f"{n} / floor" for n in ran - {"floor"}),
    ):
        assert ratios[f"{name}, read your array"] > 0, name
    assert all(value > 0 for value in ratios.values())
    if layout == "v2":
        assert any(note.startswith("codec: n/a") for note in report["notes"])


def test_the_table_of_your_array_and_a_url_says_why_it_has_no_floor(tmp_path):
    _make(str(tmp_path / "a"), "zstd")
    done = run_bench("--zarr", (tmp_path / "a").as_uri(), "--repeat", "1")
    assert done.returncode == 0, done.stderr
    assert "read your array" in done.stdout and "<U8 [3000], zstd" in done.stdout
    assert (
        "note: floor: n/a for a URL: the floor reads the chunk files with readinto" in done.stdout
    )
    assert "pipeline / stock, read your array" in done.stdout
    assert "/ floor, read your array" not in done.stdout


def test_what_is_not_such_an_array_is_one_line_and_status_2(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "ints"), shape=(4,), chunks=(2,), dtype="i4")
        zarr.create_group(str(tmp_path / "group")).create_array("x", shape=(2,), dtype="<U2")
    before = _snapshot(tmp_path)
    cases = [
        (tmp_path / "nothing", "no Zarr array at"),
        (tmp_path, "no zarr.json or .zarray"),
        (tmp_path / "ints", 'expected fixed_length_utf32, found the data type "int32"'),
        (tmp_path / "group", "is a group: give the path of one of its arrays"),
    ]
    for where, phrase in cases:
        assert_one_line_error(run_bench("--zarr", str(where), "--repeat", "1"), "--zarr", phrase)
    bad_options = run_bench("--zarr", str(tmp_path / "ints"), "--storage-options", '{"a": 1}')
    assert_one_line_error(bad_options, "--storage-options: only for a URL")
    assert _snapshot(tmp_path) == before
