"""What kind of zarr store this is: one rule per question of the zarr adapter and store tools."""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from zarr.abc.store import SupportsSyncStore

__all__ = ["does_sync_io", "local_root", "waits_per_request"]


@functools.cache
def _zarr_classes() -> tuple[type[Any], type[Any], type[Any] | None]:
    """(LocalStore, MemoryStore, SupportsSyncStore or None), imported once."""
    from zarr.storage import LocalStore, MemoryStore

    try:  # zarr >= 3.1: stores that read, write and delete without an event loop
        from zarr.abc.store import SupportsSyncStore
    except ImportError:  # pragma: no cover - older zarr
        return LocalStore, MemoryStore, None
    return LocalStore, MemoryStore, SupportsSyncStore


def local_root(store: object) -> str | None:
    """The directory of ``store`` when its keys may be read as files there; else None."""
    # Only LocalStore or a subclass reading as it does: not wrappers (zarr 3.4's LatencyStore...)
    # whose behaviour would be skipped, nor fsspec file:// stores.
    local_store = _zarr_classes()[0]
    if isinstance(store, local_store) and type(store).get is local_store.get:
        root: str = os.fspath(store.root)
        return root
    return None


def does_sync_io(store: object) -> TypeGuard[SupportsSyncStore]:
    """Whether ``store`` has blocking ``get_sync``, ``set_sync`` and ``delete_sync``."""
    # Unless _supports_sync_io says otherwise: zarr 3.4's wrappers have the methods whatever they
    # wrap.
    protocol = _zarr_classes()[2]
    return (
        protocol is not None
        and isinstance(store, protocol)
        and bool(getattr(store, "_supports_sync_io", True))
    )


# File systems whose every request crosses a network (fstype in /proc/mounts).
_REMOTE_FILESYSTEMS = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "lustre", "gpfs", "ceph", "glusterfs",
        "beegfs", "9p", "afs", "panfs", "wekafs", "pvfs2", "orangefs", "fuse",
    }
)  # fmt: skip
# FUSE file systems over a local disk: fuse.<name> is remote unless named here.
_LOCAL_FUSE = frozenset({"fuseblk", "fuse.fuse-overlayfs", "fuse.bindfs", "fuse.lxcfs"})


def _unescape_mount(field: str) -> str:
    """A /proc/mounts path field with its octal escapes (``\\040`` for a space) undone."""
    return re.sub(r"\\([0-7]{3})", lambda octal: chr(int(octal.group(1), 8)), field)


@functools.lru_cache(maxsize=256)
def _on_remote_filesystem(root: str, mounts: str = "/proc/mounts") -> bool:
    """Whether the directory ``root`` lies on a network or FUSE file system (Linux; else False)."""
    try:
        with open(mounts, encoding="utf-8", errors="surrogateescape") as file:
            lines = file.read().splitlines()
    except OSError:
        return False  # no /proc/mounts (not Linux): taken as a local disk
    path = os.path.realpath(root)
    longest, fstype = -1, ""
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount = _unescape_mount(fields[1])
        inside = path == mount or path.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > longest:
            longest, fstype = len(mount), fields[2]
    if fstype in _LOCAL_FUSE:
        return False
    return fstype in _REMOTE_FILESYSTEMS or fstype.startswith("fuse.")


def waits_per_request(store: object) -> bool:
    """Whether each request to ``store`` may wait (on a network), so many should be in flight."""
    # MemoryStore and local-disk roots answer at once; network/FUSE roots (from /proc/mounts) and
    # any other store may make every request wait.
    if type(store) is _zarr_classes()[1]:
        return False
    root = local_root(store)
    if root is not None:
        return _on_remote_filesystem(root)
    return True
