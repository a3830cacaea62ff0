"""S3 through zarr's FsspecStore (s3fs) and ObjectStore (obstore), against a real
S3 endpoint on the loopback interface (moto's server, tests/s3_server.py): the
pipeline, ``check``, ``convert`` (with ``--verify``, killed and resumed), the
refusals, the errors, and both tools on a Dask cluster (issue 25).

Every store call of the tools runs on zarr's event loop
(``fixedutf32.store._loops``); the tests marked "wrong loop" failed while the
tools ran their own loop beside zarr's.
"""

import asyncio
import json
import os
import re
import time
import uuid

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from conftest import assert_one_line_error, run_cli, start_slow_convert  # noqa: E402
from s3_server import CREDENTIALS, free_port  # noqa: E402
from store_data import CHUNKS, PLANTED, found, hierarchy, planted, quiet, text  # noqa: E402
from zarr.codecs import ZstdCodec  # noqa: E402

import fixedutf32.zarr as fz  # noqa: E402
from fixedutf32.store import StoreError, check, convert  # noqa: E402

TIMEOUT = 60
BUCKET = "bkt"
LAYOUTS = {
    "raw": dict(compressors=None),
    "zstd": dict(compressors=[ZstdCodec(level=1)]),
    "sharded": dict(shards=(6, 4), compressors=[ZstdCodec(level=1)]),
}
# The arrays store_data.hierarchy writes, which convert converts or copies.
HIERARCHY = ["people/names", "ages", "heights"]


@pytest.fixture
def s3(s3_server, monkeypatch):
    """The session's S3 server, with the environment pointing every client at it."""
    pytest.importorskip("s3fs", reason='the S3 tests need s3fs (the "test" extra)')
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    return s3_server


@pytest.fixture
def prefix():
    """A prefix in the bucket that no other test uses."""
    return f"t-{uuid.uuid4().hex[:10]}"


def fsspec_store(server, path, read_only=False):
    return zarr.storage.FsspecStore.from_url(
        f"s3://{BUCKET}/{path}", storage_options=server.storage_options(), read_only=read_only
    )


def obstore_store(server, path, read_only=False):
    """zarr's ObjectStore over obstore's S3Store at ``path`` (skipped without either)."""
    pytest.importorskip("obstore", reason='the obstore tests need obstore (the "test" extra)')
    if not hasattr(zarr.storage, "ObjectStore"):
        pytest.skip(f"zarr {zarr.__version__} has no zarr.storage.ObjectStore")
    from obstore.store import S3Store

    s3 = S3Store(
        BUCKET,
        prefix=path,
        endpoint=server.url,
        region=CREDENTIALS["AWS_DEFAULT_REGION"],
        access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        client_options={"allow_http": True},
    )
    return zarr.storage.ObjectStore(s3, read_only=read_only)


STORES = {"fsspec": fsspec_store, "obstore": obstore_store}


def write(store, data, layout="zstd", chunks=CHUNKS, fill_value=""):
    """``data`` as the root array of ``store``, written by stock zarr-python."""
    with quiet():
        array = zarr.create_array(
            store,
            shape=data.shape,
            chunks=chunks,
            dtype=data.dtype,
            fill_value=fill_value,
            **LAYOUTS[layout],
        )
        array[...] = data
    return array


def equal_elements(a, b):
    """Whether two zarr arrays hold the same elements (NaN equal to NaN)."""
    x, y = np.asarray(a[...]), np.asarray(b[...])
    if x.dtype.kind == "f":
        return x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
    return x.shape == y.shape and x.tolist() == y.tolist()


def assert_same_hierarchy(source, dest):
    for path in HIERARCHY:
        a = zarr.open_array(source, path=path, mode="r")
        b = zarr.open_array(dest, path=path, mode="r")
        assert equal_elements(a, b), path


# -- the rule: zarr's loop -----------------------------------------------------


def test_every_store_call_of_the_tools_runs_on_zarrs_loop(tmp_path):
    from zarr.core.sync import _get_loop  # private on purpose: the loop the rule names

    loops = []

    class Recording(zarr.storage.MemoryStore):
        """An asynchronous store (no sync IO) that notes the loop of every call."""

        _supports_sync_io = False

        async def get(self, *args, **kwargs):
            loops.append(asyncio.get_running_loop())
            return await super().get(*args, **kwargs)

        def list_dir(self, prefix):
            # obstore's list_dir starts its request here: it needs a running loop.
            loops.append(asyncio.get_running_loop())
            return super().list_dir(prefix)

    store = Recording()
    write(store, planted(), "sharded")
    loops.clear()
    assert len(check(store).problems) == len(PLANTED)
    report = convert(store, str(tmp_path / "dst"), skip_invalid=True, verify=True)
    assert report.verified is True
    assert loops and set(loops) == {_get_loop()}


# -- the pipeline on S3 -------------------------------------------------------

SELECTIONS = [
    np.s_[...],
    np.s_[1:6, 2:9],  # partial chunks and shards: byte ranges of a shard
    np.s_[::2, 1::3],
    np.s_[12, :],  # a row with no chunk written: the fill value
    np.s_[4, 3],
]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", sorted(STORES))
def test_pipeline_reads_and_writes_s3_as_stock_zarr(s3, prefix, kind, layout):
    store = STORES[kind](s3, prefix)
    data = text((13, 9))
    expected = data.copy()
    expected[10:] = ""  # never written: the fill value
    expected[2:5, 3:7] = "xy"
    with fz.enabled(), quiet():
        array = zarr.create_array(
            store, shape=data.shape, chunks=CHUNKS, dtype="<U4", fill_value="", **LAYOUTS[layout]
        )
        assert isinstance(array._async_array.codec_pipeline, fz.CodecPipeline)
        array[:10] = data[:10]
        array[2:5, 3:7] = "xy"  # a partial write: chunks (shards) read, changed, written
    stock = zarr.open_array(store, mode="r")
    with fz.enabled():
        ours = zarr.open_array(store, mode="r")
        for selection in SELECTIONS:
            want = expected[selection]
            assert np.asarray(stock[selection]).tolist() == want.tolist(), selection
            assert np.asarray(ours[selection]).tolist() == want.tolist(), selection


# -- check ---------------------------------------------------------------------


def test_check_a_fsspec_store_zarr_has_used(s3, prefix):
    # Wrong loop: s3fs's session belonged to zarr's loop (zarr wrote through
    # this store), and check called it from a loop of its own:
    # "HTTPClientError ... attached to a different loop".
    store = fsspec_store(s3, prefix)
    write(store, planted(), "sharded")
    report = check(store)
    assert found(report) == sorted(
        ("", f"c/{c[0] // 6}/{c[1] // 4}", c, p, v) for c, p, v in PLANTED
    )


def test_check_an_s3_url_with_storage_options(s3, prefix, monkeypatch):
    write(fsspec_store(s3, prefix), text())
    monkeypatch.delenv("AWS_ENDPOINT_URL")  # only storage_options lead to the server
    report = check(f"s3://{BUCKET}/{prefix}", storage_options=s3.storage_options())
    assert report.ok and report.arrays[0].chunks_present == 9


def test_check_refuses_storage_options_for_a_local_path(tmp_path):
    with pytest.raises(ValueError, match="storage_options apply to a URL"):
        check(str(tmp_path), storage_options={"anon": True})


def test_check_command_on_an_s3_url(s3, prefix):
    write(fsspec_store(s3, prefix), planted(), "raw")
    result = run_cli("check", f"s3://{BUCKET}/{prefix}", "--json")
    assert result.returncode == 1, result.stderr
    problems = json.loads(result.stdout)["problems"]
    assert sorted(tuple(p["coordinates"]) for p in problems) == sorted(c for c, _, _ in PLANTED)


def test_check_an_obstore_s3_store(s3, prefix):
    write(obstore_store(s3, prefix), planted(), "sharded")
    report = check(obstore_store(s3, prefix, read_only=True))
    assert sorted(p.coordinates for p in report.problems) == sorted(c for c, _, _ in PLANTED)


def test_check_an_empty_obstore_prefix_says_nothing_is_there(s3, prefix):
    # Wrong loop: obstore's list_dir starts its request when called, and was
    # called outside any loop: "RuntimeError: no running event loop".
    store = obstore_store(s3, f"{prefix}/mistyped", read_only=True)
    with pytest.raises(StoreError, match=r"no Zarr group or array in .*mistyped"):
        check(store)


@pytest.mark.parametrize("kind", ["MemoryStore", "LocalStore"])
def test_check_obstore_memory_and_local_stores(tmp_path, kind):
    obstore = pytest.importorskip("obstore.store", reason="obstore is not installed")
    if not hasattr(zarr.storage, "ObjectStore"):
        pytest.skip(f"zarr {zarr.__version__} has no zarr.storage.ObjectStore")
    inner = obstore.MemoryStore() if kind == "MemoryStore" else obstore.LocalStore(str(tmp_path))
    store = zarr.storage.ObjectStore(inner)
    write(store, planted(), "zstd")
    report = check(store)
    assert sorted(p.coordinates for p in report.problems) == sorted(c for c, _, _ in PLANTED)
    with pytest.raises(StoreError, match="no Zarr group or array at path 'nothing'"):
        check(store, "nothing")


# -- convert -------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["s3-to-s3", "local-to-s3", "s3-to-local"])
def test_convert_with_verify_on_s3(s3, prefix, tmp_path, direction):
    # Wrong loop: the verify step read through zarr (zarr's loop) what the
    # conversion's file system had used on the package's loop: "VERIFY FOUND
    # DIFFERENCES" for every correct conversion.
    where = {
        "s3": (f"s3://{BUCKET}/{prefix}/src", f"s3://{BUCKET}/{prefix}/dst"),
        "local": (str(tmp_path / "src"), str(tmp_path / "dst")),
    }
    source_kind, _, dest_kind = direction.split("-")
    source, dest = where[source_kind][0], where[dest_kind][1]
    opened = {
        "s3": lambda url: fsspec_store(s3, url.removeprefix(f"s3://{BUCKET}/")),
        "local": lambda path: path,
    }
    hierarchy(opened[source_kind](source), zarr_format=2)
    result = run_cli("convert", source, dest, "--verify")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified element by element" in result.stdout
    assert_same_hierarchy(opened[source_kind](source), opened[dest_kind](dest))


def test_convert_from_an_obstore_store_with_verify(s3, prefix, tmp_path):
    hierarchy(fsspec_store(s3, prefix), zarr_format=3)
    source = obstore_store(s3, prefix, read_only=True)
    report = convert(source, str(tmp_path / "dst"), verify=True, threads=2)
    assert report.verified is True and not report.mismatches
    assert_same_hierarchy(source, str(tmp_path / "dst"))


def start_killable(*argv):
    """``fixedutf32 convert ARGV`` in a new process that pauses after each chunk it writes."""
    return start_slow_convert(*argv, delay=0.3)


def test_convert_into_s3_killed_then_resumed(s3, prefix, tmp_path):
    source, dest = str(tmp_path / "src"), f"s3://{BUCKET}/{prefix}/dst"
    data = np.array([f"s{i % 7}" * (i % 4) for i in range(12 * 8)]).reshape(12, 8)
    write(source, data, "zstd", chunks=(3, 2))  # 16 chunks
    child = start_killable(source, dest)
    deadline = time.monotonic() + TIMEOUT
    try:
        while len([k for k in s3.keys(BUCKET, f"{prefix}/dst/c/")]) < 3:
            assert child.poll() is None, "the conversion ended before it could be killed"
            assert time.monotonic() < deadline, "the conversion wrote nothing in time"
            time.sleep(0.05)
    finally:
        child.kill()  # SIGKILL: no cleanup, no last journal piece
        child.wait()
    assert f"{prefix}/dst/zarr.json" not in s3.keys(BUCKET, prefix)  # written last
    result = run_cli("convert", source, dest, "--resume", "--verify")
    assert result.returncode == 0 and "verified" in result.stdout, result.stdout + result.stderr
    back = zarr.open_array(fsspec_store(s3, f"{prefix}/dst", read_only=True), mode="r")
    assert np.asarray(back[...]).tolist() == data.tolist()
    assert not [k for k in s3.keys(BUCKET, f"{prefix}/dst") if "/.fixedutf32" in k]


@pytest.mark.parametrize("spelling", ["s3:///{bucket}/{path}", "s3a://{bucket}/{path}"])
def test_convert_refuses_the_source_spelled_another_way(s3, prefix, spelling):
    source = f"s3://{BUCKET}/{prefix}/a.zarr"
    write(fsspec_store(s3, f"{prefix}/a.zarr"), text())
    before = {k: s3.client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in s3.keys(BUCKET)}
    dest = spelling.format(bucket=BUCKET, path=f"{prefix}/a.zarr")
    result = run_cli("convert", source, dest, "--overwrite")
    assert_one_line_error(result)
    after = {k: s3.client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in s3.keys(BUCKET)}
    assert after == before


@pytest.mark.parametrize(
    "key, says",
    [
        ("nums/../../escape", re.escape("unsafe key 'nums/../../escape'")),
        # zarr 3.1's FsspecStore lists an empty segment as a directory named
        # "": a node "nums/" without metadata, refused as a metadata problem.
        ("nums//c/9", re.escape("unsafe key 'nums//c/9'") + "|" + re.escape("nums/: incomplete")),
    ],
)
def test_convert_refuses_hostile_keys_in_an_s3_source(s3, prefix, tmp_path, key, says):
    # An int array: convert copies its keys as they are listed.
    with quiet():
        nums = zarr.create_array(
            fsspec_store(s3, f"{prefix}/src"), name="nums", shape=(4,), chunks=(2,), dtype="<i4"
        )
        nums[:] = [1, 2, 3, 4]
    s3.put(BUCKET, f"{prefix}/src/{key}", b"\0" * 8)
    assert f"{prefix}/src/{key}" in s3.keys(BUCKET, prefix)  # the server keeps it as spelled
    for dest in (str(tmp_path / "out" / "dst"), f"s3://{BUCKET}/{prefix}/dst"):
        with pytest.raises(StoreError, match=says):
            convert(f"s3://{BUCKET}/{prefix}/src", dest)
    assert not (tmp_path / "out").exists()
    assert s3.keys(BUCKET, f"{prefix}/dst") == [] and s3.keys(BUCKET, "escape") == []


# -- what goes wrong: one line, exit 2 ----------------------------------------


def test_a_missing_bucket_is_one_line(s3):
    result = run_cli("check", "s3://no-such-bucket-here/a.zarr")
    assert_one_line_error(result, "s3://no-such-bucket-here/a.zarr")


def test_missing_credentials_are_one_line(s3, prefix, tmp_path):
    write(fsspec_store(s3, prefix), text())
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIALS or k.endswith("REGION")}
    env.update(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
    )
    result = run_cli("check", f"s3://{BUCKET}/{prefix}", env=env)
    assert_one_line_error(result, f"s3://{BUCKET}/{prefix}")


def test_an_endpoint_that_is_down_is_one_line(s3):
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}",
        "AWS_MAX_ATTEMPTS": "1",  # botocore's retries alone take 10 s
    }
    result = run_cli("check", f"s3://{BUCKET}/a.zarr", env=env)
    assert_one_line_error(result, f"cannot read the URL 's3://{BUCKET}/a.zarr'")


# -- Dask: workers open the store from its URL and storage_options ------------


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 workers for the module (threads in this process: fast to start)."""
    distributed = pytest.importorskip("distributed", reason="the Dask tests need the dask extra")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


def test_check_on_a_dask_cluster_from_an_s3_url(s3, prefix, cluster, monkeypatch):
    write(fsspec_store(s3, prefix), planted(), "sharded")
    url = f"s3://{BUCKET}/{prefix}"
    monkeypatch.delenv("AWS_ENDPOINT_URL")  # the workers reach the server by storage_options
    on_dask = check(url, storage_options=s3.storage_options(), scheduler=cluster)
    on_threads = check(url, storage_options=s3.storage_options(), threads=2)
    assert on_dask.to_dict() == on_threads.to_dict() and len(on_dask.problems) == len(PLANTED)


def test_convert_on_a_dask_cluster_from_s3(s3, prefix, cluster, tmp_path):
    hierarchy(fsspec_store(s3, f"{prefix}/src"), zarr_format=3)
    report = convert(
        f"s3://{BUCKET}/{prefix}/src", str(tmp_path / "dst"), scheduler=cluster, verify=True
    )
    assert report.verified is True
    assert_same_hierarchy(fsspec_store(s3, f"{prefix}/src"), str(tmp_path / "dst"))


# -- convert with credentials and endpoint in storage_options alone ------------

# moto takes any secret: this one shows where the options went.
SECRET = "only-in-storage-options-7f3a"


@pytest.fixture
def options_only(s3, monkeypatch, tmp_path):
    """fsspec's options for the server, and an environment that leads nowhere without them.

    No credentials, endpoint or credentials file in the environment: a store
    opened without these options (by a Dask worker, ``verify``, the claim)
    finds no credentials and fails.
    """
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    return {"endpoint_url": s3.url, "key": CREDENTIALS["AWS_ACCESS_KEY_ID"], "secret": SECRET}


def options_store(url, options, read_only=False):
    return zarr.storage.FsspecStore.from_url(url, storage_options=options, read_only=read_only)


@pytest.mark.parametrize("on", ["threads", "dask"])
def test_convert_s3_to_s3_with_storage_options_alone(s3, prefix, options_only, request, on):
    # Before: convert() took no storage_options (TypeError); the Dask workers,
    # the verify step and the destination's claim must all open with them.
    source, dest = f"s3://{BUCKET}/{prefix}/src", f"s3://{BUCKET}/{prefix}/dst"
    hierarchy(options_store(source, options_only), zarr_format=2)
    where = {"threads": 2} if on == "threads" else {"scheduler": request.getfixturevalue("cluster")}
    report = convert(
        source,
        dest,
        storage_options=options_only,
        dest_storage_options=dict(options_only),
        verify=True,
        **where,
    )
    assert report.verified is True and not report.mismatches
    assert_same_hierarchy(
        options_store(source, options_only, True), options_store(dest, options_only, True)
    )
    # The claim beside the destination and the record in it were put and deleted.
    assert not [k for k in s3.keys(BUCKET, f"{prefix}/dst") if ".fixedutf32" in k]


def test_an_interrupted_convert_with_storage_options_records_no_secret(s3, prefix, options_only):
    from fixedutf32.store import InvalidChunkError
    from fixedutf32.store._stores import StoreSpec

    source, dest = f"s3://{BUCKET}/{prefix}/src", f"s3://{BUCKET}/{prefix}/dst"
    write(options_store(source, options_only), planted(), "raw")
    options = dict(storage_options=options_only, dest_storage_options=options_only)
    with pytest.raises(InvalidChunkError) as stopped:
        convert(source, dest, threads=1, **options)
    finish = stopped.value.finish
    assert finish is not None and finish.startswith(f"fixedutf32 convert {source} {dest} --resume")
    assert "pass storage_options and dest_storage_options again" in finish
    record = s3.client.get_object(Bucket=BUCKET, Key=f"{prefix}/dst/.fixedutf32-convert.json")
    assert SECRET.encode() not in record["Body"].read()
    assert SECRET not in str(stopped.value)
    assert SECRET not in repr(StoreSpec(dest, options_only))  # what Dask shows of a task
    report = convert(source, dest, resume=True, skip_invalid=True, verify=True, **options)
    assert report.verified is True and report.skipped_chunks > 0


@pytest.mark.parametrize(
    "source, dest, options, says",
    [
        ("{tmp}/src", "{tmp}/dst", {"storage_options": {"anon": True}}, "storage_options"),
        ("memory://so-src", "{tmp}/dst", {"dest_storage_options": {"anon": True}}, "dest_"),
        ("memory://so-src", "local://{tmp}/dst", {"dest_storage_options": {"a": 1}}, "dest_"),
    ],
)
def test_convert_refuses_storage_options_for_a_store_that_is_no_url(
    tmp_path, source, dest, options, says
):
    write(str(tmp_path / "src"), text())  # memory://so-src need not exist: refused before
    source, dest = source.format(tmp=tmp_path), dest.format(tmp=tmp_path)
    with pytest.raises(ValueError, match=f"{says}.*apply to a URL"):
        convert(source, dest, **options)
    assert not (tmp_path / "dst").exists() and not (tmp_path / "dst.fixedutf32-lock").exists()


def test_check_and_convert_an_obstore_s3_store_on_a_dask_cluster(s3, prefix, cluster, tmp_path):
    # The workers get zarr's ObjectStore over S3Store itself (it travels by
    # pickle); before, a store object was refused for Dask.
    write(obstore_store(s3, prefix), planted(), "sharded")
    on_threads = check(obstore_store(s3, prefix, read_only=True), threads=2)
    on_dask = check(obstore_store(s3, prefix, read_only=True), scheduler=cluster)
    assert on_dask.to_dict() == on_threads.to_dict() and len(on_dask.problems) == len(PLANTED)
    report = convert(
        obstore_store(s3, prefix, read_only=True),
        str(tmp_path / "dst"),
        scheduler=cluster,
        skip_invalid=True,
        verify=True,
    )
    assert report.verified is True and report.mismatches == []
    on_threads = convert(
        obstore_store(s3, prefix, read_only=True), str(tmp_path / "dst2"), skip_invalid=True
    )
    assert report.skipped and report.skipped == on_threads.skipped


def test_an_obstore_memory_store_is_refused_for_dask_with_one_line(cluster):
    obstore = pytest.importorskip("obstore.store", reason="obstore is not installed")
    if not hasattr(zarr.storage, "ObjectStore"):
        pytest.skip(f"zarr {zarr.__version__} has no zarr.storage.ObjectStore")
    store = zarr.storage.ObjectStore(obstore.MemoryStore())
    write(store, planted(), "zstd")
    with pytest.raises(StoreError, match="passed as an object; Dask tasks open stores"):
        check(store, scheduler=cluster)
