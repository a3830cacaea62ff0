"""Open a Zarr store from a path or URL, and use it from plain threads."""
# Stores with get_sync/set_sync are called from the threads; others run on zarr's loop (_loops). A
# Dask task opens the store from its StoreSpec once per process (handle_for).

from __future__ import annotations

import asyncio
import os
import pathlib
import pickle
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeGuard

import numpy as np
import numpy.typing as npt

from .._arguments import ByteView, as_bytes
from .._store_kinds import does_sync_io, local_root
from ..errors import StoreError
from ._keys import check_safe_key
from ._loops import call, collect
from ._loops import run as _run

if TYPE_CHECKING:
    from zarr.abc.store import Store
    from zarr.core.buffer import Buffer, BufferPrototype

__all__ = [
    "StoreError",
    "StoreHandle",
    "StoreSpec",
    "check_storage_options",
    "open_handle",
    "handle_for",
    "spec_of",
    "dask_spec",
]


def _prototype() -> BufferPrototype:
    from zarr.buffer import default_buffer_prototype

    return default_buffer_prototype()


class _SyncStore(Protocol):
    """The blocking methods ``LocalStore`` and ``MemoryStore`` add to the Store API."""

    def get_sync(self, key: str, *, prototype: BufferPrototype | None = None) -> Buffer | None: ...

    def set_sync(self, key: str, value: Buffer) -> None: ...


def _is_sync(store: Store) -> TypeGuard[_SyncStore]:
    """:func:`~fixedutf32._store_kinds.does_sync_io`, typed as the methods used here."""
    return does_sync_io(store)


@dataclass(frozen=True)
class StoreSpec:
    """What a Dask task opens a store from: path or URL, fsspec's options, or the pickled store."""

    # pickled: a store every worker can reach (zarr's ObjectStore over obstore S3, GCS, Azure).

    url: str
    # Credentials, often: kept out of the repr (Dask logs and dashboards show task arguments).
    storage_options: Mapping[str, object] = field(default_factory=dict, repr=False)
    pickled: bytes | None = field(default=None, repr=False)


class StoreHandle:
    """A zarr-python store with blocking methods, safe to share between threads."""

    # spec None: a store object the caller passed; owned: close() closes the store.

    def __init__(
        self,
        store: Store,
        spec: str | None = None,
        owned: bool = False,
        storage_options: Mapping[str, object] | None = None,
    ) -> None:
        self.store = store
        self.spec = spec
        self.owned = owned
        self.storage_options: dict[str, object] = dict(storage_options or {})
        # None: the store's coroutines run on zarr's loop (fixedutf32.store._loops).
        self._sync: _SyncStore | None = store if _is_sync(store) else None
        self._buffer = _prototype().buffer

    def __repr__(self) -> str:
        return f"StoreHandle({self.spec or self.store!r})"

    @property
    def name(self) -> str:
        """How messages name the store: its spec, or the store's own ``str``."""
        return self.spec if self.spec is not None else str(self.store)

    def get(self, key: str) -> npt.NDArray[np.uint8] | None:
        """The bytes at ``key`` as a read-only ``uint8`` array, or None when missing."""
        if self._sync is not None:
            buffer = self._sync.get_sync(key, prototype=_prototype())
        else:
            buffer = _run(self.store.get(key, prototype=_prototype()))
        return None if buffer is None else buffer.as_numpy_array()

    def set(self, key: str, data: ByteView) -> None:
        """Write ``data`` (any buffer) at ``key``; StoreError for an unsafe key."""
        self._check_key(key)
        buffer = self._buffer.from_bytes(as_bytes(data))
        if self._sync is not None:
            self._sync.set_sync(key, buffer)
        else:
            _run(self.store.set(key, buffer))

    def exists(self, key: str) -> bool:
        return _run(self.store.exists(key))

    def delete(self, key: str) -> None:
        """Delete ``key``; StoreError for an unsafe key."""
        self._check_key(key)
        _run(self.store.delete(key))

    def _check_key(self, key: str) -> None:
        # The last guard before a write: a key with '..' or an absolute path
        # would land outside a directory store. convert checks the source's
        # keys before it starts; this holds for every other caller.
        check_safe_key(key, f"a write to {self.name!r}")

    def list_dir(self, prefix: str) -> list[str]:
        """Names of the keys and "directories" directly under ``prefix``."""
        return sorted(set(collect(lambda: self.store.list_dir(prefix.rstrip("/")))))

    def list_prefix(self, prefix: str) -> list[str]:
        """Every key that starts with ``prefix``."""
        return sorted(collect(lambda: self.store.list_prefix(prefix)))

    def sizes(self, prefix: str = "") -> dict[str, int]:
        """Every key starting with ``prefix``, with its size, from one listing; nothing is read."""
        # Keys whose size the store does not say are left out.
        root = local_root(self.store)
        if root is not None:
            return {k: n for k, n in _local_sizes(root).items() if k.startswith(prefix)}
        return _run(_store_sizes(self.store, prefix))

    def is_empty(self) -> bool:
        return _run(self.store.is_empty(""))

    def clear(self) -> None:
        _run(self.store.clear())

    def close(self) -> None:
        if self.owned:
            self.store.close()


def _local_sizes(root: str) -> dict[str, int]:
    """Every regular file under ``root`` (links followed, as ``LocalStore`` reads them), sized."""
    sizes: dict[str, int] = {}
    stack = [""]
    while stack:
        where = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, where) if where else root))
        except OSError:
            continue  # gone or unreadable: its keys are not confirmed
        for entry in entries:
            key = f"{where}/{entry.name}" if where else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(key)
                elif entry.is_file():
                    sizes[key] = entry.stat().st_size
            except OSError:
                continue
    return sizes


async def _store_sizes(store: Store, prefix: str) -> dict[str, int]:
    """:meth:`StoreHandle.sizes` for fsspec, obstore and other stores."""
    from zarr.storage import FsspecStore, ObjectStore

    if isinstance(store, FsspecStore):
        top = f"{store.path}/"
        found = await store.fs._find(f"{top}{prefix}", detail=True, maxdepth=None, withdirs=False)
        return {
            path.removeprefix(top): int(info["size"])
            for path, info in found.items()
            if isinstance(info.get("size"), int)
        }
    if isinstance(store, ObjectStore):
        import obstore

        sizes: dict[str, int] = {}
        async for batch in obstore.list(store.store, prefix=prefix or None):
            sizes.update((item["path"], int(item["size"])) for item in batch)
        return sizes
    keys = [key async for key in store.list_prefix(prefix)]
    found_sizes = await asyncio.gather(
        *(store.getsize(key) for key in keys), return_exceptions=True
    )
    return {key: n for key, n in zip(keys, found_sizes) if isinstance(n, int)}


def _is_url(text: str) -> bool:
    return "://" in text and not text.startswith("file://")


def _local_path(text: str) -> pathlib.Path:
    return pathlib.Path(text[len("file://") :] if text.startswith("file://") else text)


def open_handle(
    spec: object, mode: str = "r", storage_options: Mapping[str, object] | None = None
) -> StoreHandle:
    """Open the store at ``spec`` (a path, ``.zip``, URL or store) as a new StoreHandle."""
    # "w": a directory is created; a .zip must not exist yet (zip cannot replace an entry). Without
    # storage_options fsspec reads credentials and endpoints from the environment.
    from zarr.abc.store import Store

    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    check_storage_options(spec, storage_options)
    if isinstance(spec, Store):
        return StoreHandle(spec)
    if not isinstance(spec, str):
        raise StoreError(f"store must be a path, a URL or a zarr store, got {type(spec).__name__}")
    if _is_url(spec):
        return _open_url(spec, mode, storage_options or {})
    path = _local_path(spec)
    if path.suffix.lower() == ".zip":
        return _open_zip(spec, path, mode)
    return _open_directory(spec, path, mode)


def check_storage_options(
    spec: object, storage_options: Mapping[str, object] | None, name: str = "storage_options"
) -> None:
    """ValueError when ``storage_options`` (argument ``name``) come with a non-URL ``spec``."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if storage_options and not (isinstance(spec, str) and _is_url(spec)):
        raise ValueError(
            f"{name} apply to a URL (s3://..., gs://...), got {spec!r}; "
            f"pass a store object with its own options instead"
        )


def _open_url(spec: str, mode: str, options: Mapping[str, object]) -> StoreHandle:
    from zarr.storage import FsspecStore

    def from_url() -> FsspecStore:
        return FsspecStore.from_url(spec, storage_options=dict(options), read_only=mode == "r")

    try:
        store = call(from_url)  # on zarr's loop, the one that will use its file system
    except (ImportError, ValueError, TypeError, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"cannot open the URL {spec!r}: {reason}") from None
    if mode != "r" and not store.path.strip("/"):
        # the whole file system (no bucket, no folder): never a destination
        raise StoreError(
            f"the URL {spec!r} names no bucket or folder; expected one such as "
            "'s3://bucket/out.zarr'. Nothing was written"
        )
    handle = StoreHandle(store, spec, owned=True, storage_options=options)
    if mode == "r":
        try:
            empty = handle.is_empty()
        except Exception as exc:  # noqa: BLE001 - any file system's own error: one line, no traceback
            raise StoreError(f"cannot read the URL {spec!r}: {exc}") from None
        if empty:
            raise StoreError(f"nothing is stored at {spec!r}; expected a Zarr group or array")
    return handle


def _open_zip(spec: str, path: pathlib.Path, mode: str) -> StoreHandle:
    import zipfile

    from zarr.storage import ZipStore

    if mode == "r":
        if not path.is_file():
            raise StoreError(f"no such file: {spec!r}; expected a Zarr store in a .zip file")
        if not zipfile.is_zipfile(path):
            raise StoreError(f"{spec!r} is not a zip file; expected a Zarr store in a .zip file")
        store = _run(ZipStore.open(path, mode="r"))
    else:
        if path.exists():
            raise StoreError(f"{spec!r} exists; a zip file is written once, as a new file")
        store = _run(ZipStore.open(path, mode="w"))
    return StoreHandle(store, spec, owned=True)


def _open_directory(spec: str, path: pathlib.Path, mode: str) -> StoreHandle:
    from zarr.storage import LocalStore

    if mode == "r":
        if not path.exists():
            raise StoreError(f"no such directory: {spec!r}; expected a Zarr store")
        if not path.is_dir():
            raise StoreError(
                f"{spec!r} is a file; expected a directory, a .zip file or a URL holding a "
                "Zarr store"
            )
        return StoreHandle(LocalStore(path, read_only=True), spec, owned=True)
    if path.exists() and not path.is_dir():
        raise StoreError(f"{spec!r} is a file; expected a directory to write the store to")
    return StoreHandle(LocalStore(path, read_only=False), spec, owned=True)


_handles: dict[tuple[str, str, bytes | None, str], StoreHandle] = {}
_handles_lock = threading.Lock()


def handle_for(spec: StoreSpec, mode: str) -> StoreHandle:
    """The handle for ``spec`` that this process keeps open (for Dask tasks)."""
    key = (spec.url, repr(sorted(spec.storage_options.items())), spec.pickled, mode)
    with _handles_lock:
        handle = _handles.get(key)
        if handle is None:
            if spec.pickled is not None:
                # pickled by spec_of in this run's client, not read from a store
                handle = StoreHandle(pickle.loads(spec.pickled), None, owned=True)
            else:
                handle = open_handle(spec.url, mode, spec.storage_options)
            _handles[key] = handle
        return handle


def spec_of(handle: StoreHandle, role: str) -> StoreSpec:
    """What a Dask task reopens ``handle`` from; StoreError if it has no path or URL."""
    if handle.spec is None and _reached_by_every_worker(handle.store):
        return StoreSpec(str(handle.store), pickled=pickle.dumps(handle.store))
    return StoreSpec(dask_spec(handle.spec, role), handle.storage_options)


def _reached_by_every_worker(store: object) -> bool:
    """Whether ``store`` is zarr's ObjectStore over an obstore cloud store (travels by pickle)."""
    try:
        from zarr.storage import ObjectStore
    except ImportError:  # zarr without obstore support
        return False
    if not isinstance(store, ObjectStore):
        return False
    return type(store.store).__name__ in ("S3Store", "GCSStore", "AzureStore")


def dask_spec(spec: object, role: str) -> str:
    """``spec`` if every Dask worker can open it (a directory or a URL), else StoreError."""
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise StoreError(
            f"the {role} store was passed as an object; Dask tasks open stores themselves, "
            f"so pass its path or URL (or, for obstore's S3, GCS and Azure stores, zarr's "
            f"ObjectStore over them)"
        )
    if spec.lower().endswith(".zip") and role == "destination":
        raise StoreError(
            f"a .zip destination is written by one process; convert to a directory or a URL "
            f"to use Dask, got {spec!r}"
        )
    if spec.startswith("memory://"):
        raise StoreError(f"memory:// stores live in one process; Dask workers cannot see {spec!r}")
    return spec
