"""Where a store is: one answer for every spelling of one place (decided here only)."""
# /data/a.zarr, ./a.zarr/, local:///data/a.zarr, a link to it and a LocalStore on it are one place,
# as are s3://b/a, s3:///b/a and s3a://b/a: compared as text, convert --overwrite would delete its
# own source.

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from typing import Any

__all__ = ["Place", "place_of", "relation"]


@dataclass(frozen=True)
class Place:
    """Where a store's keys live (``kind`` local, ``fsspec:<class>`` or ``object:<id>``)."""

    # Two places overlap when any reading of one starts with a reading of the other; chain holds the
    # ids of the path and each directory above, so bind mounts and hard-linked spellings are seen.

    kind: str
    readings: tuple[tuple[str, ...], ...]
    text: str
    own: tuple[int, int] | None = None
    chain: frozenset[tuple[int, int]] = frozenset()


def relation(a: Place, b: Place) -> str | None:
    """How place ``a`` stands to ``b``: ``"same"``, ``"inside"``, ``"holds"`` or None."""
    if a.kind != b.kind:
        return None
    found: set[str] = set()
    for ra in a.readings:
        for rb in b.readings:
            if ra == rb:
                found.add("same")
            elif ra[: len(rb)] == rb:
                found.add("inside")
            elif rb[: len(ra)] == ra:
                found.add("holds")
    if a.own is not None and a.own == b.own:
        found.add("same")
    elif a.own is not None and a.own in b.chain:
        found.add("holds")
    elif b.own is not None and b.own in a.chain:
        found.add("inside")
    for answer in ("same", "inside", "holds"):  # the closest wins
        if answer in found:
            return answer
    return None


def place_of(where: object) -> Place:
    """The place of a path, URL, zarr store or :class:`StoreHandle`; nothing opened or written."""
    # A chained URL (simplecache::s3://...) is placed at its last link, the storage the others wrap.
    from ._stores import StoreHandle

    if isinstance(where, StoreHandle):
        where = where.store
    if isinstance(where, os.PathLike):
        where = os.fspath(where)
    if isinstance(where, bytes):
        where = os.fsdecode(where)
    if isinstance(where, str):
        return _place_of_text(where)
    return _place_of_store(where)


# -- paths and URLs -------------------------------------------------------------


def _local(path: str) -> Place:
    """A local path resolved: absolute, symbolic links followed, case folded where it is."""
    real = os.path.normcase(os.path.realpath(os.path.abspath(os.path.expanduser(path))))
    own: tuple[int, int] | None = None
    chain: set[tuple[int, int]] = set()
    here = real
    while True:
        try:
            info = os.stat(here)
        except OSError:
            pass
        else:
            chain.add((info.st_dev, info.st_ino))
            if here == real:
                own = (info.st_dev, info.st_ino)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    segments = tuple(s for s in real.replace(os.sep, "/").split("/") if s)
    return Place("local", (segments,), real, own, frozenset(chain))


def _readings(path: str) -> tuple[tuple[str, ...], ...]:
    """A remote path's segments as written, and with '.', '..' and empty ones resolved."""
    # Object stores take a/../b literally, fsspec's local-like ones do not: either counts.
    literal = tuple(path.strip("/").split("/")) if path.strip("/") else ()
    normal = posixpath.normpath("/" + path).strip("/")
    return tuple(dict.fromkeys((literal, tuple(normal.split("/")) if normal else ())))


def _family(protocol: str) -> tuple[str, Any]:
    """The file system class fsspec routes ``protocol`` to (its name, and it or None)."""
    import fsspec
    from fsspec.registry import known_implementations

    try:
        cls = fsspec.get_filesystem_class(protocol)
    except (ImportError, ValueError):
        # Not importable here: the registry still names the class.
        named = known_implementations.get(protocol, {}).get("class")
        return (named or protocol), None
    return f"{cls.__module__}.{cls.__qualname__}", cls


def _place_of_text(text: str) -> Place:
    from fsspec.core import split_protocol

    if "::" in text:
        text = text.rsplit("::", 1)[1]  # the storage every other link wraps
    protocol, rest = split_protocol(text)
    if protocol is None:
        return _local(text)
    family, cls = _family(protocol)
    from fsspec.implementations.local import LocalFileSystem

    if cls is not None and issubclass(cls, LocalFileSystem):
        return _local(cls._strip_protocol(text))
    path = cls._strip_protocol(text) if cls is not None else rest
    return _remote(family, cls, protocol, path)


def _remote(family: str, cls: Any, protocol: str, path: str) -> Place:
    name = protocol
    if cls is not None:
        protocols = cls.protocol if isinstance(cls.protocol, (tuple, list)) else (cls.protocol,)
        name = protocols[0]
    readings = _readings(path)
    return Place(f"fsspec:{family}", readings, f"{name}://{'/'.join(readings[-1])}")


# -- store objects --------------------------------------------------------------


def _place_of_store(store: Any) -> Place:
    from zarr.storage import FsspecStore, LocalStore, WrapperStore, ZipStore

    while isinstance(store, WrapperStore):
        store = store._store
    if isinstance(store, LocalStore):
        return _local(os.fspath(store.root))
    if isinstance(store, ZipStore):
        return _local(os.fspath(store.path))
    if isinstance(store, FsspecStore):
        return _place_of_fs(store.fs, store.path)
    obstore_place = _place_of_obstore(store)
    if obstore_place is not None:
        return obstore_place
    # zarr's MemoryStore is its dict: two stores over one dict are one place.
    target = getattr(store, "_store_dict", store)
    return Place(f"object:{id(target)}", ((),), str(store))


def _place_of_fs(fs: Any, path: str) -> Place:
    """A path on an fsspec file system instance, wrappers taken off."""
    from fsspec.implementations.local import LocalFileSystem

    while True:
        inner = getattr(fs, "sync_fs", None)  # zarr's AsyncFileSystemWrapper
        if inner is not None:
            fs = inner
            continue
        if type(fs).__name__ == "DirFileSystem":  # a prefix over another file system
            path = posixpath.join(fs.path, path.lstrip("/"))
            fs = fs.fs
            continue
        break
    cls = type(fs)
    if isinstance(fs, LocalFileSystem):
        return _local(cls._strip_protocol(path))
    family = f"{cls.__module__}.{cls.__qualname__}"  # as _family names a routed class
    return _remote(family, cls, "", cls._strip_protocol(path))


def _place_of_obstore(store: Any) -> Place | None:
    """The place of a zarr ``ObjectStore`` over obstore's S3, GCS, Azure or local store."""
    inner = getattr(store, "store", None)
    module = type(inner).__module__ or ""
    if inner is None or not module.startswith("obstore"):
        return None
    kind = type(inner).__name__
    prefix = os.fspath(getattr(inner, "prefix", None) or "")
    if kind == "LocalStore":
        return _local(prefix or "/")
    config = getattr(inner, "config", None) or {}
    protocol = {"S3Store": "s3", "GCSStore": "gs", "AzureStore": "az"}.get(kind)
    bucket = config.get("bucket") or config.get("container_name")
    if protocol is None or not bucket:
        return Place(f"object:{id(inner)}", ((),), str(store))
    family, cls = _family(protocol)
    return _remote(family, cls, protocol, posixpath.join(bucket, prefix))
