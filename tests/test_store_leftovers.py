"""Leftovers: keys no reader of a store looks at, reported by ``check`` (issue 24, finding 12).

A killed LocalStore write leaves ``key.<32 hex>.partial`` files; a grid that
shrank, or a hand-made mistake, leaves keys that are no chunk of any array.
``check`` lists them apart from the data's problems, with the command that
removes them, and exits 1; ``--remove-leftovers`` deletes exactly the keys
listed, inside the store only.  The conversion's own record and journal at
the store's top stay what they are: an interrupted conversion.
"""

import json
import os
import subprocess
import time

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from conftest import run_cli, start_slow_convert  # noqa: E402

from fixedutf32.store import StoreError, check, convert  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

HEX = "0123456789abcdef" * 2  # the 32 hex digits of a LocalStore temporary name


@pytest.fixture
def store(tmp_path):
    """A V3 group with array ``a`` (4 elements, chunks of 2) written by zarr-python, and strays."""
    path = tmp_path / "store.zarr"
    root = zarr.open_group(str(path), mode="w", zarr_format=3)
    root.create_array("a", shape=(4,), chunks=(2,), dtype="<U3")[:] = np.array(
        ["a", "bc", "def", ""]
    )
    strays = {
        f"a/c/0.{HEX}.partial": 100,  # a killed chunk write
        f"zarr.json.{HEX}.partial": 10,  # a killed metadata write
        "a/c/99": 8,  # past the grid
        "a/c/x": 8,  # not a chunk key
        "a/notes.txt": 5,  # a file in the array's folder
        "README": 3,  # a file in a group
    }
    for key, n in strays.items():
        (path / key).write_bytes(b"s" * n)
    (path / ".fixedutf32-convert.json").write_text("{}")  # bookkeeping: not a leftover
    return path, strays


def test_check_lists_partial_files_and_keys_outside_every_grid_as_leftovers(store):
    path, strays = store
    result = run_cli("check", path)
    assert result.returncode == 1, result.stderr
    for key in strays:
        assert f"\nleftover {key}: " in result.stdout
    assert f"leftover a/c/0.{HEX}.partial: a partial write" in result.stdout
    assert "leftover a/c/99: not a chunk key of the array's grid [2] of keys" in result.stdout
    assert ".fixedutf32-convert.json" not in result.stdout
    summary = result.stdout.splitlines()[-1]
    assert summary == (
        f"6 leftovers (134 bytes) that no reader looks at, not data; remove them with: "
        f"fixedutf32 check --remove-leftovers {path}"
    )
    assert result.stdout.splitlines()[-2].startswith("clean: 1 array checked")  # the data


def test_leftovers_are_in_the_json_report_and_the_python_report(store):
    path, strays = store
    report = json.loads(run_cli("check", "--json", path).stdout)
    assert sorted(item["key"] for item in report["leftovers"]) == sorted(strays)
    assert report["ok"] is False and report["problems"] == []
    assert report["remove_command"] == f"fixedutf32 check --remove-leftovers {path}"
    python = check(path)
    assert not python.ok and python.problems == []
    assert {item.key: item.nbytes for item in python.leftovers} == strays
    assert {item.node for item in python.leftovers} == {"", "a"}
    assert python.to_dict()["leftovers"][0]["removed"] is False


def test_remove_leftovers_deletes_exactly_the_keys_listed(store):
    path, strays = store
    result = run_cli("check", "--remove-leftovers", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 leftovers removed" in result.stdout
    assert not any((path / key).exists() for key in strays)
    assert (path / ".fixedutf32-convert.json").exists()  # bookkeeping is not a leftover
    assert zarr.open_array(str(path / "a"))[:].tolist() == ["a", "bc", "def", ""]
    again = run_cli("check", path)
    assert again.returncode == 0 and "leftover" not in again.stdout


def test_remove_leftovers_never_deletes_outside_the_store(tmp_path):
    path = tmp_path / "store.zarr"
    zarr.create_array(str(path), shape=(2,), chunks=(2,), dtype="<U1")[:] = np.array(["x", "y"])
    outside = tmp_path / "outside"
    os.rename(path / "c", outside)
    os.symlink(outside, path / "c")  # the chunks live outside, read with --follow-links
    (outside / f"0.{HEX}.partial").write_bytes(b"p")
    result = run_cli("check", "--follow-links", "--remove-leftovers", path)
    assert result.returncode == 2, result.stdout
    [line] = result.stderr.splitlines()
    assert f"refused 'c/0.{HEX}.partial'" in line and "outside the store" in line
    assert (outside / f"0.{HEX}.partial").exists() and (outside / "0").exists()
    with pytest.raises(StoreError, match="nothing was removed"):
        check(path, follow_links=True, remove_leftovers=True)


def test_remove_leftovers_refuses_a_zip_store(tmp_path):
    path = tmp_path / "store.zip"
    zarr.create_array(zarr.storage.ZipStore(path, mode="w"), shape=(2,), dtype="<U1")
    result = run_cli("check", "--remove-leftovers", path)
    assert result.returncode == 2
    assert "is a .zip file, whose entries cannot be removed one by one" in result.stderr


def test_keys_of_an_array_of_another_data_type_are_not_leftovers_unless_partial(tmp_path):
    path = tmp_path / "store.zarr"
    root = zarr.open_group(str(path), mode="w", zarr_format=3)
    root.create_array("n", shape=(4,), chunks=(2,), dtype="i4")[:] = np.arange(4)
    (path / "n" / "c" / f"1.{HEX}.partial").write_bytes(b"p")
    report = check(path)
    assert [item.key for item in report.leftovers] == [f"n/c/1.{HEX}.partial"]


def test_a_running_conversions_claim_inside_the_store_is_no_leftover(store, tmp_path):
    # A destination in a folder of the store has its claim beside it, inside the
    # store. Before: "leftover inner.zarr.fixedutf32-lock", and --remove-leftovers
    # deleted the claim of a running conversion, letting a second one in.
    path, strays = store
    source = tmp_path / "source.zarr"
    data = np.array([f"s{i}" for i in range(12)])
    zarr.create_array(str(source), shape=(12,), chunks=(1,), dtype="<U3")[:] = data
    dest, claim = path / "inner.zarr", path / "inner.zarr.fixedutf32-lock"
    child = start_slow_convert(  # 12 chunks: 3.6 s
        source, dest, delay=0.3, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 60
        while not (dest / "c").is_dir() or not any((dest / "c").iterdir()):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the conversion wrote nothing in time"
            time.sleep(0.02)
        report = check(path, remove_leftovers=True)
        assert child.poll() is None, "the conversion ended too soon to test this"
        assert claim.exists()
        assert sorted(item.key for item in report.leftovers) == sorted(strays)  # removed
        [claimed] = [p for p in report.problems if "claimed by a conversion" in p.message]
        assert (claimed.kind, claimed.array) == ("incomplete", "inner.zarr")
        assert "'inner.zarr.fixedutf32-lock'" in str(claimed) and "--resume" in str(claimed)
        with pytest.raises(StoreError, match="in use by another conversion"):
            convert(source, dest, overwrite=True)  # the claim still keeps a second one out
    finally:
        _, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert zarr.open_array(str(dest))[:].tolist() == data.tolist() and not claim.exists()
