"""check and convert on a real distributed.LocalCluster of 2 worker processes
give what they give on threads."""

import pytest

pytest.importorskip("distributed", reason="the Dask tests need the dask extra (distributed)")

from store_data import PLANTED, expected_key, found, hierarchy, planted, tree, write_array

from fixedutf32.store import check, convert

# Private on purpose: what scheduler="local" starts, kept for the whole module
# (a cluster takes seconds to start) and checked to be 2 worker processes.
from fixedutf32.store._run import dask_client


@pytest.fixture(scope="module")
def scheduler():
    """The address of one LocalCluster for the module (it takes seconds to start)."""
    client, cluster = dask_client("local")
    assert len(client.scheduler_info()["workers"]) == 2
    assert cluster.processes  # worker processes, not threads
    yield cluster.scheduler_address
    client.close()
    cluster.close()


def test_check_on_the_cluster_equals_threads(tmp_path, scheduler):
    where = str(tmp_path / "store")
    write_array(where, planted(), "v3_sharded")
    on_threads = check(where, threads=2)
    on_dask = check(where, scheduler=scheduler)
    assert found(on_dask) == sorted(
        ("", expected_key("v3_sharded", c), c, p, v) for c, p, v in PLANTED
    )
    assert on_dask.to_dict() == on_threads.to_dict()


def test_convert_on_the_cluster_equals_threads(tmp_path, scheduler):
    source = str(tmp_path / "src")
    hierarchy(source, zarr_format=2)
    a, b = tmp_path / "threads", tmp_path / "dask"
    report_threads = convert(source, str(a), to="string", threads=2)
    report_dask = convert(source, str(b), to="string", scheduler=scheduler, verify=True)
    assert report_dask.verified is True
    assert tree(a) == tree(b)
    assert report_dask.arrays == report_threads.arrays


def test_dask_needs_a_store_every_worker_opens(tmp_path, scheduler):
    from fixedutf32.store import StoreError

    write_array("memory://dask-only-here", planted(), "v2_C")
    write_array(str(tmp_path / "src"), planted(), "v2_C")
    with pytest.raises(StoreError, match="memory:// stores live in one process"):
        check("memory://dask-only-here", scheduler=scheduler)
    with pytest.raises(StoreError, match=r"a .zip destination is written by one process"):
        convert(str(tmp_path / "src"), str(tmp_path / "out.zip"), scheduler=scheduler)
    assert not (tmp_path / "out.zip").exists()


def test_a_local_cluster_starts_while_the_default_dashboard_port_is_taken():
    # Dask's dashboard defaults to port 8787; another process (another test run,
    # a notebook's cluster) often holds it, and with filterwarnings=error the
    # "port in use" warning would fail the run.
    import socket

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen()
    except OSError:
        pass  # already taken by someone else: the condition under test holds anyway
    try:
        client, cluster = dask_client("local")
        try:
            assert len(client.scheduler_info()["workers"]) == 2
        finally:
            client.close()
            cluster.close()
    finally:
        holder.close()
