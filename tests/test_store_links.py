"""Symbolic links in a source store, and paths that would lead out of it (issue 24, 5 and 8).

A chunk file that links outside a store must not be read as the store's
data: ``check`` reports it as a ``link`` problem (naming the key and where
it points) and never prints the outside file's bytes; ``convert`` refuses
the source before anything is written, unless ``--follow-links`` asks for
the link to be read.  Links inside the store are read as usual.  And
``--path`` / ``path=`` is a key path inside the store; an empty store
argument is refused rather than read as the current directory.

Each CLI run is a fresh interpreter with a time bound.
"""

import json
import os

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from conftest import run_cli  # noqa: E402

from fixedutf32._source.files import open_chunk_file  # noqa: E402
from fixedutf32.errors import CorruptChunkError  # noqa: E402
from fixedutf32.store import StoreError, check, convert  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")


def make_store(path, values=("ab", "cd", "ef", "gh")):
    """A V3 store with one raw fixed_length_utf32 array ``a``: chunks ``a/c/0`` and ``a/c/1``."""
    root = zarr.open_group(str(path), mode="w", zarr_format=3)
    array = root.create_array("a", shape=(4,), chunks=(2,), dtype="<U2", compressors=None)
    array[:] = np.array(values)
    return path


def chunk_bytes(*texts):
    return np.array(texts, dtype="<U2").tobytes()


@pytest.fixture
def linked_out(tmp_path):
    """A store whose chunk ``a/c/1`` links to a file outside it holding a surrogate."""
    store = make_store(tmp_path / "store.zarr")
    secret = tmp_path / "secret.bin"
    # Two elements' worth, the first code unit U+D800: read as the chunk, it would be
    # printed back as "invalid code point U+D800".
    secret.write_bytes(b"\x00\xd8\x00\x00" + b"\x41\x00\x00\x00" * 3)
    os.unlink(store / "a" / "c" / "1")
    os.symlink(secret, store / "a" / "c" / "1")
    return store, secret


def test_check_reports_a_chunk_linked_outside_the_store_without_reading_it(linked_out):
    store, secret = linked_out
    result = run_cli("check", store)
    assert result.returncode == 1, result.stderr
    assert "a, key a/c/1: link: it links outside the store" in result.stdout
    assert repr(str(secret)) in result.stdout  # where it points
    assert "U+D800" not in result.stdout  # the outside bytes were not read
    report = json.loads(run_cli("check", "--json", store).stdout)
    [problem] = report["problems"]
    assert (problem["kind"], problem["key"], problem["code_point"]) == ("link", "a/c/1", None)
    assert report["arrays"][0]["bytes_read"] == 16  # a/c/0 only


def test_convert_refuses_a_source_with_a_link_outside_it_and_writes_nothing(tmp_path):
    store = make_store(tmp_path / "store.zarr")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(chunk_bytes("xx", "yy"))  # valid text: copied as it is before the fix
    os.unlink(store / "a" / "c" / "1")
    os.symlink(outside, store / "a" / "c" / "1")
    result = run_cli("convert", store, tmp_path / "out.zarr")
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.splitlines()
    assert "'a/c/1'" in line and "--follow-links" in line and "Nothing was written" in line
    assert not (tmp_path / "out.zarr").exists()
    with pytest.raises(StoreError, match="leading outside it"):
        convert(store, tmp_path / "out2.zarr")
    assert not (tmp_path / "out2.zarr").exists()


def test_a_metadata_document_or_group_linked_outside_is_not_read(tmp_path):
    store = make_store(tmp_path / "store.zarr")
    elsewhere = make_store(tmp_path / "elsewhere.zarr", ("zz", "zz", "zz", "zz"))
    os.symlink(elsewhere / "a", store / "b")  # a whole array outside the store
    report = check(store)
    assert [(p.kind, p.key) for p in report.problems] == [("link", "b")]
    assert [a.path for a in report.arrays] == ["a"]  # b was not walked
    assert not report.ok
    with pytest.raises(StoreError, match="'b' to"):
        convert(store, tmp_path / "out.zarr")


def test_follow_links_reads_links_outside_the_store(tmp_path):
    store = make_store(tmp_path / "store.zarr")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(chunk_bytes("xx", "yy"))
    os.unlink(store / "a" / "c" / "1")
    os.symlink(outside, store / "a" / "c" / "1")
    assert run_cli("check", "--follow-links", store).returncode == 0
    result = run_cli("convert", "--follow-links", store, tmp_path / "out.zarr")
    assert result.returncode == 0, result.stderr
    assert zarr.open_array(str(tmp_path / "out.zarr" / "a"))[:].tolist() == ["ab", "cd", "xx", "yy"]
    assert check(store, follow_links=True).ok


def test_links_inside_the_store_are_read_as_usual(tmp_path):
    store = make_store(tmp_path / "store.zarr")
    # The chunk directory moved aside inside the array's directory, and linked back.
    os.rename(store / "a" / "c", store / "a" / "chunks")
    os.symlink("chunks", store / "a" / "c")
    os.symlink(".", store / "a" / "chunks" / "loop")  # a loop of links ends
    report = check(store)
    assert report.problems == []
    assert report.leftovers == []  # a/chunks/0 is chunk a/c/0 under another name
    assert report.arrays[0].chunks_present == 2  # read through the link, not "missing"
    convert(store, tmp_path / "out.zarr")
    assert zarr.open_array(str(tmp_path / "out.zarr" / "a"))[:].tolist() == ["ab", "cd", "ef", "gh"]


def test_a_link_swapped_in_after_listing_is_refused_as_it_is_opened(tmp_path):
    inside = tmp_path / "store"
    inside.mkdir()
    (tmp_path / "outside").write_bytes(b"x" * 8)
    os.symlink(tmp_path / "outside", inside / "0")
    with pytest.raises(CorruptChunkError, match="links outside the store"):
        open_chunk_file(inside / "0", key="0", max_nbytes=64, within=os.path.realpath(inside))
    with open_chunk_file(inside / "0", key="0", max_nbytes=64) as file:  # no bound: followed
        assert file.size == 8


@pytest.mark.parametrize(
    "path", ["../other.zarr", "a/../../other.zarr", "/etc", "a//c", "./a", "a\\c", "a/."]
)
def test_check_path_outside_the_store_is_refused(tmp_path, path):
    store = make_store(tmp_path / "store.zarr")
    make_store(tmp_path / "other.zarr")
    result = run_cli("check", "--path", path, store)
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.splitlines()
    assert f"path {path!r}: expected a group or array inside the store" in line
    with pytest.raises(StoreError, match="inside the store"):
        check(store, path)


def test_an_empty_store_argument_is_refused_not_read_as_the_current_directory(tmp_path):
    store = make_store(tmp_path / "store.zarr")
    result = run_cli("check", "", cwd=store)
    assert result.returncode == 2, result.stdout
    assert result.stderr.strip() == (
        "fixedutf32 check: the store: expected a store path or URL, got an empty string"
    )
    result = run_cli("convert", store, "", "--overwrite", cwd=tmp_path)
    assert result.returncode == 2
    assert "the destination: expected a store path or URL, got an empty string" in result.stderr
    result = run_cli("convert", "", tmp_path / "out.zarr", cwd=store)
    assert result.returncode == 2 and "the source: expected" in result.stderr
    assert not (tmp_path / "out.zarr").exists()


def test_follow_links_reaches_dask_workers(tmp_path):
    # Each task opens the source itself in a worker process: the plan it is sent
    # must say whether links out of the store are read.
    pytest.importorskip("distributed", reason="the Dask tests need the dask extra (distributed)")
    from fixedutf32.store._run import dask_client

    store = make_store(tmp_path / "store.zarr")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(chunk_bytes("xx", "yy"))
    os.unlink(store / "a" / "c" / "1")
    os.symlink(outside, store / "a" / "c" / "1")
    client, cluster = dask_client("local")
    try:
        assert cluster.processes  # worker processes, not threads
        scheduler = cluster.scheduler_address
        assert check(store, follow_links=True, scheduler=scheduler).ok
        report = check(store, scheduler=scheduler)
        assert [(p.kind, p.key) for p in report.problems] == [("link", "a/c/1")]
        report = convert(
            store, tmp_path / "out.zarr", follow_links=True, scheduler=scheduler, verify=True
        )
        assert report.verified is True
        assert report.arrays[0]["chunks_written"] == 2
        with pytest.raises(StoreError, match="leading outside it"):
            convert(store, tmp_path / "out2.zarr", scheduler=scheduler)
    finally:
        client.close()
        cluster.close()
    got = zarr.open_array(str(tmp_path / "out.zarr" / "a"))[:].tolist()
    assert got == ["ab", "cd", "xx", "yy"]
