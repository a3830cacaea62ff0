"""fixedutf32.store.check on stores written by zarr-python: every layout, every
kind of store, invalid code units planted at known coordinates."""

import json
import uuid

import numpy as np
import pytest

import fixedutf32

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")
numcodecs = pytest.importorskip(
    "numcodecs", reason="fixedutf32.store needs numcodecs (extra [zarr])"
)

from store_data import (  # noqa: E402
    CHUNKS,
    LAYOUTS,
    PLANTED,
    SHAPE,
    expected_key,
    found,
    planted,
    quiet,
    text,
    write_array,
)

from fixedutf32.store import StoreError, check, convert  # noqa: E402


def _where(kind, tmp_path):
    if kind == "dir":
        return str(tmp_path / "store")
    if kind == "zip":
        return str(tmp_path / "store.zip")
    return f"memory://check-{uuid.uuid4().hex}"


def _expected(layout, planted_units=PLANTED, path=""):
    return sorted(
        (path, (f"{path}/" if path else "") + expected_key(layout, c), c, p, v)
        for c, p, v in planted_units
    )


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_finds_every_planted_unit_in_every_layout(tmp_path, layout):
    where = _where("dir", tmp_path)
    write_array(where, planted(), layout)
    report = check(where, threads=2)
    assert found(report) == _expected(layout)
    assert not report.ok and len(report.problems) == len(PLANTED)
    (array,) = report.arrays
    assert array.shape == SHAPE and array.chunk_shape == CHUNKS
    assert array.sharded == ("shards" in LAYOUTS[layout])
    assert array.chunks_present + array.chunks_missing == array.chunks == 3 * 3
    assert array.bytes_read > 0 and report.chunks_unchecked == 0


@pytest.mark.parametrize("kind", ["dir", "zip", "memory"])
@pytest.mark.parametrize("layout", ["v3_sharded", "v2_F_zstd_big"])
def test_every_kind_of_store(tmp_path, kind, layout):
    where = _where(kind, tmp_path)
    write_array(where, planted(), layout)
    assert found(check(where, threads=3)) == _expected(layout)
    assert found(check(where, threads=1)) == _expected(layout)


def test_clean_store_reports_lengths(tmp_path):
    where = _where("dir", tmp_path)
    data = text()
    write_array(where, data, "v3_zstd_big", fill_value="")
    report = check(where)
    assert report.ok and report.problems == []
    (array,) = report.arrays
    longest = max(len(s) for s in data.ravel().tolist())
    assert array.longest == longest == 3
    assert array.min_length_bytes == 12 and array.length_bytes == 16
    assert array.chunks_present == 9 and array.chunks_missing == 0


def test_missing_chunks_and_fill_value(tmp_path):
    where = _where("dir", tmp_path)
    data = np.full(SHAPE, "fill!", dtype="<U5")
    data[0, 0] = "x"
    write_array(where, data, "v3_raw", fill_value="fill!")
    (array,) = check(where).arrays
    assert (array.chunks_present, array.chunks_missing) == (1, 8)
    assert array.longest == 5  # the fill value counts: missing chunks read as it


def test_crafted_chunk_bytes(tmp_path):
    """A chunk rewritten by hand: encode_chunk without validation, then zstd."""
    where = tmp_path / "store"
    write_array(str(where), text(), "v3_zstd_big")
    bad = text()[3:6, 2:4].copy()
    bad.view(np.uint32).reshape(3, 2, 4)[2, 1, 3] = 0xDBFF
    raw = fixedutf32.encode_chunk(bad, 16, endian="big", validate=False)
    (where / "c" / "1" / "1").write_bytes(numcodecs.Zstd(level=1).encode(raw.tobytes()))
    report = check(str(where))
    assert found(report) == [("", "c/1/1", (5, 3), 3, 0xDBFF)]
    assert "U+DBFF (surrogate) at element [5, 3], position 3" in report.problems[0].message


def test_chunks_that_do_not_decode(tmp_path):
    where = tmp_path / "store"
    write_array(str(where), text(), "v3_zstd_big")
    (where / "c" / "0" / "0").write_bytes(b"not zstd at all")
    (where / "c" / "1" / "0").write_bytes(numcodecs.Zstd().encode(b"\0" * 20))
    report = check(str(where))
    chunk = {p.key: p.message for p in report.problems if p.kind == "chunk"}
    assert set(chunk) == {"c/0/0", "c/1/0"}
    assert chunk["c/0/0"].startswith("chunk c/0/0 is corrupt: expected a zstd frame")
    # refused from the frame's header, before inflating it
    assert chunk["c/1/0"] == (
        "chunk c/1/0 is corrupt: the zstd frame declares 20 bytes; a chunk here holds 96 bytes "
        "(refused before inflating)"
    )


def test_metadata_problems_are_reported_not_raised(tmp_path):
    root = tmp_path / "store"
    with quiet():
        group = zarr.open_group(str(root), mode="w", zarr_format=3)
        group.create_array("good", shape=(2,), chunks=(2,), dtype="<U2")[:] = ["a", "b"]
        group.create_array("bad_width", shape=(2,), chunks=(2,), dtype="<U2")
        group.create_array("ints", shape=(2,), chunks=(2,), dtype="i2")
    doc = json.loads((root / "bad_width" / "zarr.json").read_text())
    doc["data_type"]["configuration"]["length_bytes"] = 6
    (root / "bad_width" / "zarr.json").write_text(json.dumps(doc))
    (root / "broken").mkdir()
    (root / "broken" / "zarr.json").write_text("{not json")
    (root / "orphan" / "c").mkdir(parents=True)
    (root / "orphan" / "c" / "0").write_bytes(b"x")
    report = check(str(root))
    kinds = {p.array: p.kind for p in report.problems}
    assert kinds == {"bad_width": "metadata", "broken": "metadata", "orphan": "incomplete"}
    messages = {p.array: p.message for p in report.problems}
    assert "length_bytes" in messages["bad_width"] and "6" in messages["bad_width"]
    assert "invalid JSON" in messages["broken"]
    assert [a.path for a in report.arrays] == ["good"]
    assert report.skipped == [{"path": "ints", "data_type": "int16"}]


def test_max_errors_counts_chunks_left_unchecked(tmp_path):
    where = _where("dir", tmp_path)
    units = [((r, c), 0, 0xD800) for r in range(7) for c in range(5)]  # every element
    write_array(where, planted(planted=units), "v3_raw")
    report = check(where, threads=1, max_errors=4)
    assert len(report.problems) == 4
    # Chunks of 6 elements: the first chunk gives 4 problems, 8 chunks stay unchecked.
    assert report.chunks_unchecked == 8
    assert check(where, threads=2, max_errors=1000).chunks_unchecked == 0
    assert len(check(where, threads=2, max_errors=1000).problems) == 35


def test_path_selects_a_subtree(tmp_path):
    root = tmp_path / "store"
    with quiet():
        group = zarr.open_group(str(root), mode="w", zarr_format=2)
        group.create_array("a/x", shape=(2,), chunks=(1,), dtype="<U1")[:] = ["a", "b"]
        group.create_array("b", shape=(1,), chunks=(1,), dtype="<U1")[:] = ["c"]
    assert [a.path for a in check(str(root), "a").arrays] == ["a/x"]
    assert [a.path for a in check(str(root)).arrays] == ["a/x", "b"]
    assert check(str(root), "a").groups == ["a"]


def test_unreadable_stores_raise_store_error(tmp_path):
    (tmp_path / "file.txt").write_text("hi")
    (tmp_path / "fake.zip").write_text("not a zip")
    (tmp_path / "empty").mkdir()
    with quiet():
        zarr.create_array(str(tmp_path / "ints"), shape=(2,), chunks=(2,), dtype="i4")
    cases = {
        str(tmp_path / "nope"): "no such directory",
        str(tmp_path / "file.txt"): "is a file",
        str(tmp_path / "fake.zip"): "is not a zip file",
        str(tmp_path / "empty"): "no Zarr group or array",
        str(tmp_path / "ints"): "holds int32, not fixed_length_utf32",
        "nosuchprotocol://x/y": "cannot open the URL",
        f"memory://{uuid.uuid4().hex}": "nothing is stored",
    }
    for where, message in cases.items():
        with pytest.raises(StoreError, match=message):
            check(where)


def test_bad_arguments():
    with pytest.raises(ValueError, match="max_errors"):
        check("memory://x", max_errors=0)
    with pytest.raises(ValueError, match="threads"):
        check("memory://x", threads=0)


def test_report_json_round_trips(tmp_path):
    where = _where("dir", tmp_path)
    write_array(where, planted(), "v2_C")
    report = check(where)
    doc = json.loads(report.to_json())
    assert doc["ok"] is False and doc["arrays"][0]["min_length_bytes"] == 12
    assert [tuple(p["coordinates"]) for p in doc["problems"]] == [
        tuple(p.coordinates) for p in report.problems
    ]
    assert "4 problems" in report.to_text()


def test_report_text_counts_in_english():
    from fixedutf32.store import CheckReport, Problem

    one = CheckReport("memory://x", "", chunks_unchecked=1)
    one.problems.append(Problem("metadata", "a", "bad"))
    assert one.to_text().endswith("1 problem: 0 arrays checked, 0 skipped, 1 chunk left unchecked")
    two = CheckReport("memory://x", "", chunks_unchecked=2)
    assert two.to_text().endswith("clean: 0 arrays checked, 0 skipped, 2 chunks left unchecked")


@pytest.mark.parametrize("endian", ["little", "big"])
def test_whole_shards_checked_at_once_agree_with_chunk_by_chunk(tmp_path, endian):
    # A shard of raw chunks back to back, none at the edge, is checked in one call (only its
    # longest string kept); the edge shard and a shard with a bad unit go chunk by chunk, and
    # the problem names the inner chunk and element as it does unsharded.
    data = np.array([("é" * (i % 11)) + str(i) for i in range(10 * 40 + 7)], "<U16")
    data[123] = "x" * 16  # the longest string, in the second whole shard
    kinds = {"sharded": {"shards": (80,)}, "unsharded": {}}
    for name, extra in kinds.items():
        with quiet():
            zarr.create_array(
                str(tmp_path / name),
                data=data,
                chunks=(10,),
                compressors=None,
                serializer=zarr.codecs.BytesCodec(endian=endian),
                **extra,
            )
    reports = {name: check(str(tmp_path / name)) for name in kinds}
    for report in reports.values():
        [array] = report.arrays
        assert report.ok and array.longest == 16 and array.chunks_present == 41
    # A surrogate in element 3 of chunk 25 (shard 3 holds chunks 24..31), in both stores.
    unit = (0xD800).to_bytes(4, endian)
    for name, key, at in [("sharded", "c/3", 1 * 10 + 3), ("unsharded", "c/25", 3)]:
        path = tmp_path / name / key
        raw = bytearray(path.read_bytes())
        raw[at * 64 : at * 64 + 4] = unit
        path.write_bytes(bytes(raw))
    problems = {name: check(str(tmp_path / name)).problems for name in kinds}
    [sharded], [unsharded] = problems["sharded"], problems["unsharded"]
    assert sharded.chunk == unsharded.chunk == (25,) and sharded.coordinates == (253,)
    assert (sharded.key, unsharded.key) == ("c/3", "c/25") and "U+D800" in sharded.message
    assert sharded.message == unsharded.message


@pytest.mark.parametrize(
    ("order", "gap"), [([3, 2, 1, 0], 0), ([0, 2, 1, 3], 0), ([0, 1, 2, 3], 8), ([2, 0, 3, 1], 100)]
)
def test_shards_not_back_to_back_in_grid_order_are_read_as_stored(tmp_path, order, gap):
    # Inner chunks all present and of a chunk's size, but stored in another order, or with
    # unused bytes after each (the sharding spec allows both): no reader may take the shard for
    # one run of chunks, nor refuse it for its size; zarr-python reads the same.
    from zarr.core.buffer import cpu

    data = np.array([f"s{i}" + "é" * (i % 7) for i in range(80)], "<U12")
    path = tmp_path / "a"
    with quiet():
        zarr.create_array(str(path), data=data, chunks=(10,), shards=(40,), compressors=None)
    n, count = 10 * 48, 4
    for shard in sorted((path / "c").iterdir()):
        stored = shard.read_bytes()
        chunks = [stored[i * n : (i + 1) * n] for i in range(count)]
        body = b"".join(chunks[local] + b"\xff" * gap for local in order)
        index = [v for local in range(count) for v in (order.index(local) * (n + gap), n)]
        encoded = numcodecs.CRC32C(location="end").encode(np.array(index, "<u8"))
        shard.write_bytes(body + bytes(encoded))
    files = {str(f.relative_to(path)): f.read_bytes() for f in path.rglob("*") if f.is_file()}
    memory = zarr.storage.MemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in files.items()})
    pipeline = {"codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"}
    with quiet():
        assert np.array_equal(zarr.open_array(str(path), mode="r")[...], data)  # stock zarr
        with zarr.config.set(pipeline):
            assert np.array_equal(zarr.open_array(str(path), mode="r")[...], data)
            assert np.array_equal(zarr.open_array(memory, mode="r")[...], data)
            assert np.array_equal(zarr.open_array(str(path), mode="r")[15:65], data[15:65])
    with fixedutf32.open_array(str(path)) as stored_array:
        assert np.array_equal(stored_array.read(), data)
    report = check(str(path))
    assert report.ok and report.arrays[0].longest == max(len(s) for s in data.tolist())
    converted = convert(str(path), str(tmp_path / "out"), verify=True)
    assert converted.verified and not converted.skipped
    with quiet():
        assert np.array_equal(zarr.open_array(str(tmp_path / "out"), mode="r")[...], data)


def test_a_shard_with_gigabytes_unused_is_read_by_its_index_alone(tmp_path):
    # 4 GiB of unused (sparse) bytes before the index: the local readers read the index and the
    # chunks it points at, never the whole file.
    data = np.array([f"v{i}" for i in range(40)], "<U4")
    path = tmp_path / "a"
    with quiet():
        zarr.create_array(str(path), data=data, chunks=(10,), shards=(40,), compressors=None)
    shard = path / "c" / "0"
    stored = shard.read_bytes()
    index, body = stored[-68:], stored[:-68]
    with open(shard, "wb") as file:
        file.write(body)
        file.seek(4 << 30, 1)
        file.write(index)
    assert shard.stat().st_size > 4 << 30
    pipeline = {"codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"}
    with quiet(), zarr.config.set(pipeline):
        assert np.array_equal(zarr.open_array(str(path), mode="r")[...], data)
    with fixedutf32.open_array(str(path)) as stored_array:
        assert np.array_equal(stored_array.read(), data)
    report = check(str(path))
    assert report.ok and report.arrays[0].chunks_present == 4
