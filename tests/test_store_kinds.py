"""The one rule for "is this a local store?" and "does this store do synchronous IO?".

Pinned for every kind of store the zarr adapter and the store tools meet,
on both zarr versions, and checked to be what both of them follow.
"""

import warnings

import pytest

zarr = pytest.importorskip("zarr")

from zarr.storage import (  # noqa: E402
    FsspecStore,
    LocalStore,
    LoggingStore,
    MemoryStore,
    StorePath,
    WrapperStore,
    ZipStore,
)

from fixedutf32 import _store_kinds  # noqa: E402
from fixedutf32._store_kinds import does_sync_io, local_root, waits_per_request  # noqa: E402
from fixedutf32.bench._latency import AsyncLatencyStore, SyncLatencyStore  # noqa: E402
from fixedutf32.store._arrays import local_root as tools_local_root  # noqa: E402
from fixedutf32.store._stores import StoreHandle  # noqa: E402
from fixedutf32.zarr._compat import sync_store_path  # noqa: E402

# zarr 3.4's WrapperStore has get_sync/set_sync/delete_sync and says in
# _supports_sync_io whether the store it wraps has them; zarr 3.1's has none.
WRAPPER_SYNC = hasattr(WrapperStore, "get_sync")


class Subclass(LocalStore):
    """A LocalStore that reads keys as LocalStore does: still local."""


class Encrypted(LocalStore):
    """A LocalStore that changes what a read gives: reading its files would bypass that."""

    async def get(self, key, prototype=None, byte_range=None):
        return await super().get(key, prototype, byte_range)


def _fsspec(url):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the asynchronous wrapper of a synchronous fs
        return FsspecStore.from_url(url)


def _obstore(kind, path):
    obstore = pytest.importorskip("obstore")
    from zarr.storage import ObjectStore

    inner = obstore.store.LocalStore(str(path)) if kind == "local" else obstore.store.MemoryStore()
    return ObjectStore(inner)


# name -> (store from a directory, local (its root), synchronous IO, waits per request)
KINDS = {
    "LocalStore": (lambda d: LocalStore(str(d)), True, True, False),
    "LocalStore subclass": (lambda d: Subclass(str(d)), True, True, False),
    "LocalStore subclass with its own get": (lambda d: Encrypted(str(d)), False, True, True),
    "MemoryStore": (lambda d: MemoryStore(), False, True, False),
    "FsspecStore file://": (lambda d: _fsspec(f"file://{d}"), False, False, True),
    "FsspecStore memory://": (lambda d: _fsspec("memory://kinds"), False, False, True),
    "ZipStore": (lambda d: ZipStore(str(d / "a.zip"), mode="w"), False, False, True),
    "obstore LocalStore": (lambda d: _obstore("local", d), False, False, True),
    "obstore MemoryStore": (lambda d: _obstore("memory", d), False, False, True),
    "WrapperStore(LocalStore)": (
        lambda d: WrapperStore(LocalStore(str(d))),
        False,
        WRAPPER_SYNC,
        True,
    ),
    "WrapperStore(ZipStore)": (
        lambda d: WrapperStore(ZipStore(str(d / "a.zip"), mode="w")),
        False,
        False,
        True,
    ),
    "LoggingStore(LocalStore)": (
        lambda d: LoggingStore(LocalStore(str(d))),
        False,
        WRAPPER_SYNC,
        True,
    ),
    "SyncLatencyStore(LocalStore)": (
        lambda d: SyncLatencyStore(LocalStore(str(d))),
        False,
        True,
        True,
    ),
    "AsyncLatencyStore(LocalStore)": (
        lambda d: AsyncLatencyStore(LocalStore(str(d))),
        False,
        False,
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_one_rule_for_local_and_synchronous_stores(tmp_path, name):
    make, local, sync, waits = KINDS[name]
    store = make(tmp_path)
    assert local_root(store) == (str(tmp_path) if local else None)
    assert does_sync_io(store) is sync
    assert waits_per_request(store) is waits
    # What the store tools and the zarr adapter decide is this rule.
    handle = StoreHandle(store)
    assert tools_local_root(handle) == local_root(store)
    assert (handle._sync is not None) is sync
    assert sync_store_path(StorePath(store)) is sync


def test_a_local_store_on_a_network_file_system_is_local_synchronous_and_waits(
    tmp_path, monkeypatch
):
    on_remote = []
    monkeypatch.setattr(
        _store_kinds, "_on_remote_filesystem", lambda root: on_remote.append(root) or True
    )
    store = LocalStore(str(tmp_path))
    assert local_root(store) == str(tmp_path) and does_sync_io(store)
    assert waits_per_request(store) and on_remote == [str(tmp_path)]
