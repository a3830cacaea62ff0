"""One writer per destination: the claim a conversion holds for its whole run."""
# Two conversions into one destination interleave chunks and one's overwrite deletes the other's:
# convert creates a claim beside its destination atomically and deletes it however it ends. Local:
# <dest>.fixedutf32-lock (O_CREAT|O_EXCL, held with flock so a killed run's claim is free); fsspec
# URL: that key put with mode="create"; store objects: held in this process; bucket roots and
# obstore objects: none. A claim whose process on this host is gone is stale: resume or overwrite
# take it over.

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._loops import run
from ._stores import StoreError

try:
    import fcntl
except ImportError:  # Windows: process ids alone say whether a claim is stale
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from ._places import Place
    from ._stores import StoreHandle

__all__ = ["CLAIM_SUFFIX", "Claim", "claim", "is_claim"]

# What the claim's name adds to the destination's.
CLAIM_SUFFIX = ".fixedutf32-lock"
_MAX_CLAIM_BYTES = 4096  # a claim is a short JSON object; read no more


def is_claim(key: str) -> bool:
    """Whether ``key`` is a conversion's claim on the destination beside it (never a leftover)."""
    # It lies in a store when a destination is nested in a folder that is itself a store.
    return key.endswith(CLAIM_SUFFIX) and len(key) > len(CLAIM_SUFFIX)


_held: set[str] = set()  # object places claimed in this process
_held_lock = threading.Lock()


@dataclass
class _Owner:
    pid: int
    host: str
    started: str

    def describe(self) -> str:
        return f"process {self.pid} on host {self.host!r}, started {self.started}"

    def is_dead_here(self) -> bool:
        """Whether this owner ran on this host and its process no longer runs."""
        if self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # alive, another user's
            return False
        return False


def _this_owner() -> bytes:
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    text = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started})
    return text.encode() + b"\n"


def _owner_of(data: bytes) -> _Owner | None:
    """Who a claim names, or None when it names nobody readable."""
    try:
        doc = json.loads(data[:_MAX_CLAIM_BYTES])
        owner = _Owner(int(doc["pid"]), str(doc["host"]), str(doc["started"]))
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    return owner if owner.pid > 0 else None


class Claim:
    """A destination claimed by this conversion; :meth:`release` frees it (idempotent)."""

    def __init__(self, where: str | None = None) -> None:
        self.where = where  # the claim's path or URL, for messages; None: no claim

    def release(self) -> None:  # pragma: no cover - overridden where there is a claim
        pass


class _FileClaim(Claim):
    def __init__(self, path: str, fd: int) -> None:
        super().__init__(path)
        self.path, self.fd = path, fd

    def release(self) -> None:
        if self.fd < 0:
            return
        try:
            # Delete only our own: a claim deleted by hand may have a new holder.
            if os.path.samestat(os.fstat(self.fd), os.stat(self.path, follow_symlinks=False)):
                os.unlink(self.path)
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.fd = -1


class _KeyClaim(Claim):
    def __init__(self, fs: Any, path: str, url: str, data: bytes) -> None:
        super().__init__(url)
        self.fs, self.path, self.data = fs, path, data

    def release(self) -> None:
        if self.fs is None:
            return
        fs, self.fs = self.fs, None
        with contextlib.suppress(Exception):  # an unreachable store: the claim goes stale
            if run(fs._cat_file(self.path)) == self.data:
                run(fs._rm_file(self.path))


class _ObjectClaim(Claim):
    def __init__(self, kind: str, name: str) -> None:
        super().__init__(name)
        self.kind = kind

    def release(self) -> None:
        with _held_lock:
            _held.discard(self.kind)


def _in_use(dest: str, where: str, owner: _Owner | None, clear: str) -> StoreError:
    who = owner.describe() if owner is not None else "a holder it does not name"
    return StoreError(
        f"the destination {dest!r} is in use by another conversion ({who}; its claim is "
        f"{where!r}); wait for it to end, or, if no conversion is running, {clear}"
    )


def _stale(dest: str, where: str, owner: _Owner) -> StoreError:
    return StoreError(
        f"the destination {dest!r} was claimed by a conversion that no longer runs "
        f"({owner.describe()}; its claim is {where!r}); pass --resume to continue it or "
        f"--overwrite to start again (either takes the claim over)"
    )


def claim(dest: str, place: Place, handle: StoreHandle | None, take_stale: bool) -> Claim:
    """Claim the destination at ``place`` for this conversion (held until :meth:`Claim.release`)."""
    # handle: the opened destination, for a claim beside an fsspec URL; take_stale:
    # resume/overwrite. StoreError when another conversion holds it (or stale without take_stale) or
    # it cannot be made.
    if place.kind == "local":
        if place.text == os.path.dirname(place.text):  # the root: nothing beside it
            return Claim()
        return _claim_file(dest, place.text + CLAIM_SUFFIX, take_stale)
    if place.kind.startswith("object:"):
        with _held_lock:
            if place.kind in _held:
                raise _in_use(dest, "in this process", None, "close the other conversion")
            _held.add(place.kind)
        return _ObjectClaim(place.kind, f"{place.text} (in this process)")
    from zarr.storage import FsspecStore

    store = handle.store if handle is not None else None
    if not isinstance(store, FsspecStore):
        return Claim()  # an obstore store: nowhere beside it to put a claim
    fs, path = store.fs, store.path.rstrip("/")
    if not path.strip("/") or (getattr(fs, "root_marker", "") == "" and "/" not in path.strip("/")):
        return Claim()  # a bucket's root: nothing beside it
    return _claim_key(dest, fs, path + CLAIM_SUFFIX, place.text + CLAIM_SUFFIX, take_stale)


def _claim_file(dest: str, path: str, take_stale: bool) -> Claim:
    flags = os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    # The destination's directory is created now rather than by its first write.
    with contextlib.suppress(OSError):  # refused below, with the reason
        os.makedirs(os.path.dirname(path), exist_ok=True)
    for _ in range(20):  # a claim released between our two opens: try again
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags, 0o644)
        except FileExistsError:
            pass
        except OSError as exc:
            raise StoreError(
                f"cannot claim the destination {dest!r}: creating {path!r} failed: "
                f"{exc.strerror or exc}; nothing was written"
            ) from None
        else:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # blocks only while another run looks at it
            os.write(fd, _this_owner())
            return _FileClaim(path, fd)
        try:
            fd = os.open(path, os.O_RDWR | flags)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(
                f"the destination {dest!r} is in use by another conversion, or was: its claim "
                f"{path!r} cannot be opened ({exc.strerror or exc}); if no conversion is "
                f"running, delete that file"
            ) from None
        kept = False
        try:
            free = True
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    free = False  # its holder runs
                else:
                    if not os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False)):
                        continue  # released and claimed anew meanwhile
            owner = _owner_of(os.pread(fd, _MAX_CLAIM_BYTES, 0))
            if not (free and owner is not None and owner.is_dead_here()):
                raise _in_use(dest, path, owner, f"delete {path!r}")
            if not take_stale:
                raise _stale(dest, path, owner)
            os.ftruncate(fd, 0)
            os.pwrite(fd, _this_owner(), 0)
            kept = True
            return _FileClaim(path, fd)
        except FileNotFoundError:
            continue
        finally:
            if not kept:
                os.close(fd)
    raise StoreError(f"cannot claim the destination {dest!r}: {path!r} keeps changing")


def _claim_key(dest: str, fs: Any, path: str, url: str, take_stale: bool) -> Claim:
    data = _this_owner()
    for attempt in range(2):
        try:
            run(fs._pipe_file(path, data, mode="create"))
            return _KeyClaim(fs, path, url, data)
        except FileExistsError:
            pass
        except Exception as exc:  # noqa: BLE001 - the file system's own error, in one line
            raise StoreError(
                f"cannot claim the destination {dest!r}: putting {url!r} failed: {exc}; "
                f"nothing was written"
            ) from None
        try:
            found = run(fs._cat_file(path))
        except FileNotFoundError:
            continue
        owner = _owner_of(found)
        if attempt or owner is None or not owner.is_dead_here():
            raise _in_use(dest, url, owner, f"delete {url!r}")
        if not take_stale:
            raise _stale(dest, url, owner)
        # Not atomic: an object store offers no delete-if-unchanged.
        run(fs._rm_file(path))
    raise _in_use(dest, url, None, f"delete {url!r}")
