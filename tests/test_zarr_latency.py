"""The pipeline on stores whose every request waits: requests in flight, requests made.

Behaviour, not timing: a store with a latency per request (the bench's
wrappers, which count what they serve) shows how many requests the pipeline
keeps in flight and how many it makes, against stock zarr on the same store.
"""

import threading
import warnings

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

import fixedutf32.zarr  # noqa: E402
from fixedutf32 import _store_kinds  # noqa: E402
from fixedutf32.bench._latency import AsyncLatencyStore, SyncLatencyStore  # noqa: E402
from fixedutf32.bench._report import requests_total  # noqa: E402
from fixedutf32.zarr import _compat, _read  # noqa: E402

LATENCY = 0.005  # enough for requests to overlap when they can; the tests do not time
CHUNK = 64
CHUNKS = 24


@pytest.fixture(autouse=True)
def _quiet_zarr():
    from zarr.errors import UnstableSpecificationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnstableSpecificationWarning)
        yield


def _data(count=CHUNK * CHUNKS):
    return np.array([f"é{i}😀" * (i % 4) for i in range(count)], dtype="<U12")


def _create(path, *, shards=None, compressors=None):
    data = _data()
    array = zarr.create_array(
        str(path),
        shape=data.shape,
        chunks=(CHUNK,),
        shards=shards,
        dtype=data.dtype,
        compressors=compressors,
        fill_value="",
    )
    array[...] = data
    return data


def _open(store_class, path, mode="r"):
    store = store_class(zarr.storage.LocalStore(str(path)), latency=LATENCY)
    with fixedutf32.zarr.enabled():
        array = zarr.open_array(store, mode=mode)
    assert type(array.async_array.codec_pipeline).__module__.startswith("fixedutf32.")
    store.counter.reset()
    return array, store.counter


@pytest.mark.parametrize(
    "layout",
    [{}, {"compressors": zarr.codecs.ZstdCodec()}, {"shards": (4 * CHUNK,)}],
    ids=["raw", "zstd", "sharded"],
)
def test_reads_keep_synchronous_requests_in_flight(tmp_path, layout):
    # A store with synchronous IO whose requests wait (a LocalStore on NFS): the
    # reads of a batch overlap, async.concurrency at most, however few threads
    # zarr is given for its CPU work (one here: a share of the batch per thread
    # would make one request at a time).
    data = _create(tmp_path, **layout)
    array, counter = _open(SyncLatencyStore, tmp_path)
    settings = {"async.concurrency": 4, "threading.max_workers": 1}
    with fixedutf32.zarr.enabled(), zarr.config.set(settings):
        assert np.array_equal(array[...], data)
    counts = counter.snapshot()
    assert counts["get"] == (CHUNKS // 4 if "shards" in layout else CHUNKS)
    assert 1 < counts["in_flight"] <= 4


@pytest.mark.parametrize("shards", [None, (4 * CHUNK,)], ids=["chunked", "sharded"])
def test_writes_keep_synchronous_requests_in_flight(tmp_path, shards):
    _create(tmp_path, shards=shards)
    array, counter = _open(SyncLatencyStore, tmp_path, mode="r+")
    new = _data()[::-1].copy()
    settings = {"async.concurrency": 4, "threading.max_workers": 1}
    with fixedutf32.zarr.enabled(), zarr.config.set(settings):
        array[...] = new
    counts = counter.snapshot()
    assert counts["set"] == (CHUNKS // 4 if shards else CHUNKS)
    assert 1 < counts["in_flight"] <= 4
    assert np.array_equal(zarr.open_array(str(tmp_path), mode="r")[...], new)


def _requests(store_class, path, selection, pipeline):
    store = store_class(zarr.storage.LocalStore(str(path)), latency=LATENCY)
    context = fixedutf32.zarr.enabled() if pipeline else zarr.config.set({})
    with context:
        array = zarr.open_array(store, mode="r")
        store.counter.reset()
        values = array[selection]
    return values, store.counter.snapshot()


@pytest.mark.parametrize("store_class", [AsyncLatencyStore, SyncLatencyStore])
@pytest.mark.parametrize("shards", [None, (8 * CHUNK,)], ids=["chunked", "sharded"])
@pytest.mark.parametrize(
    "selection", [slice(100, 700), slice(5, 6), np.s_[[3, 900, 1400]]], ids=str
)
def test_a_partial_read_makes_no_more_requests_than_zarr(tmp_path, store_class, shards, selection):
    data = _create(tmp_path, shards=shards)
    theirs, zarr_counts = _requests(store_class, tmp_path, selection, pipeline=False)
    ours, our_counts = _requests(store_class, tmp_path, selection, pipeline=True)
    assert np.array_equal(ours, data[selection]) and np.array_equal(theirs, data[selection])
    assert 0 < requests_total(our_counts) <= requests_total(zarr_counts), (our_counts, zarr_counts)
    assert our_counts["set"] == our_counts["delete"] == 0


def test_which_stores_wait_per_request(tmp_path):
    assert not _compat.waits_per_request(zarr.storage.MemoryStore())
    assert not _compat.waits_per_request(zarr.storage.LocalStore(str(tmp_path)))
    wrapped = SyncLatencyStore(zarr.storage.LocalStore(str(tmp_path)))
    assert _compat.waits_per_request(wrapped)
    assert _compat.sync_store_path(zarr.storage.StorePath(wrapped))
    assert not _compat.sync_store_path(zarr.storage.StorePath(AsyncLatencyStore(wrapped)))


@pytest.mark.parametrize(
    ("fstype", "remote"),
    [
        ("nfs4", True),
        ("lustre", True),
        ("gpfs", True),
        ("cifs", True),
        ("fuse.sshfs", True),
        ("ext4", False),
        ("fuseblk", False),
        ("fuse.fuse-overlayfs", False),
    ],
)
def test_network_file_systems_are_read_from_the_mount_table(tmp_path, fstype, remote):
    mounts = tmp_path / "mounts"
    mounts.write_text(
        "/dev/vda / ext4 rw 0 0\n"
        f"server:/export /mnt/my\\040data {fstype} rw 0 0\n"
        "server:/other /mnt/my nfs rw 0 0\n"
    )
    on_remote = _store_kinds._on_remote_filesystem
    assert on_remote("/mnt/my data/a.zarr", str(mounts)) is remote
    assert on_remote("/mnt/my data", str(mounts)) is remote
    assert on_remote("/mnt/my", str(mounts)) is True
    assert on_remote("/mnt/mydata", str(mounts)) is False  # not under /mnt/my
    assert on_remote("/home/a.zarr", str(mounts)) is False
    assert on_remote("/home/a.zarr", str(tmp_path / "missing")) is False


def test_a_local_store_on_a_network_file_system_reads_chunk_by_chunk(tmp_path, monkeypatch):
    # Its files are still read directly, but one chunk per thread of the request pool.
    data = _create(tmp_path)
    monkeypatch.setattr(_store_kinds, "_on_remote_filesystem", lambda root: True)
    calls = []
    read_local = _read.BatchRead.read_local

    def recorded(self, jobs):
        calls.append((len(jobs), threading.current_thread().name))
        return read_local(self, jobs)

    monkeypatch.setattr(_read.BatchRead, "read_local", recorded)
    with fixedutf32.zarr.enabled():
        array = zarr.open_array(str(tmp_path), mode="r")
        assert np.array_equal(array[...], data)
    assert len(calls) == CHUNKS
    assert all(n == 1 and name.startswith("fixedutf32-io") for n, name in calls)


@pytest.mark.parametrize(
    "layout",
    [{}, {"compressors": zarr.codecs.ZstdCodec()}, {"shards": (4 * CHUNK,)}],
    ids=["raw", "zstd", "sharded"],
)
def test_writes_on_a_slow_store_match_zarr(tmp_path, layout):
    # Chunks written in part (read, merged, written back), chunks left all fill
    # value (deleted), whole ones: the same stored array as stock zarr makes.
    results = []
    for name, context in (("zarr", zarr.config.set({})), ("ours", fixedutf32.zarr.enabled())):
        _create(tmp_path / name, **layout)
        store = SyncLatencyStore(zarr.storage.LocalStore(str(tmp_path / name)), latency=0.001)
        with context:
            array = zarr.open_array(store, mode="r+")
            array[10 : 5 * CHUNK + 3] = "ü"
            array[6 * CHUNK : 7 * CHUNK] = ""  # one chunk of fill values
            array[-CHUNK // 2 :] = np.array(["x😀"] * (CHUNK // 2))
        results.append(zarr.open_array(str(tmp_path / name), mode="r")[...])
        results.append(sorted(key for key in _keys(tmp_path / name)))
    assert np.array_equal(results[0], results[2])
    assert results[1] == results[3]


def _keys(path):
    return [str(p.relative_to(path)) for p in path.rglob("*") if p.is_file()]
