"""What ``convert`` may write and replace, and its destination opened, claimed and kept apart."""
# overwrite deletes what is there, so it must be a store, not a user's files: decided here only. The
# destination is refused when it is, holds or lies in the source; a zip file is written beside its
# name and renamed into place when complete.

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass

from ._arrays import METADATA_NAMES
from ._claim import Claim, claim
from ._loops import run
from ._places import place_of, relation
from ._plans import count
from ._stores import StoreError, StoreHandle, check_storage_options, open_handle

__all__ = [
    "JOURNAL",
    "RECORD",
    "ZIP_PARTIAL",
    "Destination",
    "check_apart",
    "check_dest_options",
    "check_replaceable",
    "check_replaceable_handle",
    "is_bookkeeping",
    "is_partial",
    "keys_under",
    "open_dest",
    "overlaps",
    "remove_partial_files",
]

# The key a conversion into a directory or URL writes first and deletes last:
# its options, so that a resume can refuse other ones.  While it is there, the
# destination is an interrupted conversion.
RECORD = ".fixedutf32-convert.json"
# Pieces of its journal, ``.fixedutf32-convert.journal.<n>.json``: the source
# chunks converted so far, each with its fingerprint, so that a resume need
# not convert them again.  Deleted with the record.
JOURNAL = ".fixedutf32-convert.journal."
# The temporary file a LocalStore write leaves when killed: ``key.<hex>.partial``.
_PARTIAL = re.compile(r"\.[0-9a-f]{32}\.partial$")
# What marks the top of a Zarr store (V3 and V2).
_TOP_DOCUMENTS = ("zarr.json", ".zgroup", ".zarray")


def is_bookkeeping(key: str) -> bool:
    """Whether ``key`` (at a store's root) is the record or journal of a conversion."""
    return key == RECORD or key.startswith(JOURNAL)


def is_partial(key: str) -> bool:
    """Whether ``key`` is what a killed LocalStore write leaves (``key.<hex>.partial``)."""
    return _PARTIAL.search(key) is not None


def _zip_top(path: pathlib.Path) -> str | None:
    """Why the zip file at ``path`` is not a Zarr store, or None when it is one."""
    if not zipfile.is_zipfile(path):
        return "a file that is not a zip file"
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (OSError, zipfile.BadZipFile) as exc:
        return f"an unreadable zip file ({exc})"
    if names and not names & set(_TOP_DOCUMENTS):
        entries = count(len(names), "entry", "entries")
        return f"a zip file of {entries} without {', '.join(_TOP_DOCUMENTS)} at its top"
    return None


def _directory_top(path: pathlib.Path) -> str | None:
    """Why the directory at ``path`` is not a Zarr store, or None when it is one."""
    names = sorted(entry.name for entry in os.scandir(path))
    if not names or set(names) & {*_TOP_DOCUMENTS, RECORD}:
        return None
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return (
        f"a directory holding {count(len(names), 'entry', 'entries')} ({shown}) without "
        f"{', '.join(_TOP_DOCUMENTS)} at its top"
    )


def check_replaceable(path: pathlib.Path, spec: str, action: str) -> None:
    """Raise StoreError unless the local ``path`` may be replaced or resumed (``action``)."""
    # Nothing, an empty directory, one whose top holds a Zarr document (or a conversion record), or
    # a zip of a Zarr store; anything else is a user's and is left as it is.
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        found: str | None = "a symbolic link"
    elif stat.S_ISDIR(mode):
        found = _directory_top(path)
    elif stat.S_ISREG(mode):
        found = (
            _zip_top(path)
            if path.suffix.lower() == ".zip"
            else "a file (a store to replace is a directory or a .zip file)"
        )
    else:
        found = "a special file (FIFO, socket or device)"
    if found is not None:
        raise StoreError(
            f"{action}: the destination {spec!r} is {found}; {action} replaces only a Zarr "
            f"store or an empty directory, so it was left as it is"
        )


def check_replaceable_handle(handle: StoreHandle, action: str) -> None:
    """:func:`check_replaceable` for a store opened by URL or passed as an object."""
    if handle.is_empty():
        return
    if any(handle.exists(name) for name in (*_TOP_DOCUMENTS, RECORD)):
        return
    raise StoreError(
        f"{action}: the destination {handle.name!r} holds keys but no "
        f"{', '.join(_TOP_DOCUMENTS)} at its top; {action} replaces only a Zarr store or an "
        f"empty one, so it was left as it is"
    )


def keys_under(dst: StoreHandle, path: str) -> list[str]:
    """The destination's keys under array ``path``, metadata and the record left out."""
    prefix = f"{path}/" if path else ""
    return [
        key
        for key in dst.list_prefix(prefix)
        if key[len(prefix) :] not in METADATA_NAMES
        and not is_bookkeeping(key)
        and not is_partial(key)
    ]


def remove_partial_files(dst: StoreHandle) -> None:
    """Drop the temporary files a killed LocalStore write leaves (``key.<hex>.partial``)."""
    from zarr.storage import LocalStore

    if isinstance(dst.store, LocalStore):
        for key in dst.list_prefix(""):
            if is_partial(key):
                dst.delete(key)


def overlaps(source: StoreHandle, dest: object) -> bool:
    """True when ``dest`` is ``source``, inside it, or holds it, however either is spelled."""
    return relation(place_of(dest), place_of(source)) is not None


_HOW = {"same": "is the source", "inside": "lies inside the source", "holds": "holds the source"}


def check_apart(source: StoreHandle, dest: object) -> None:
    """Raise StoreError when ``dest`` and ``source`` overlap (see :mod:`._places`)."""
    # Checked before the destination is opened: overwrite into the source would delete it.
    here, there = place_of(dest), place_of(source)
    how = relation(here, there)
    if how is None:
        return
    named = os.fspath(dest) if isinstance(dest, os.PathLike) else dest
    named = named if isinstance(named, str) else str(named)
    raise StoreError(
        f"the destination {named!r} ({here.text}) {_HOW[how]} {source.name!r} "
        f"({there.text}); the source is never written, so nothing was written or deleted: "
        f"choose a destination outside the source"
    )


# A zip destination is written under this name beside its own and renamed into
# place when complete: a failed run leaves no broken zip where the store goes.
ZIP_PARTIAL = ".fixedutf32-partial"


@dataclass
class Destination:
    """An opened destination and this conversion's claim on it (held until :meth:`release`)."""

    # zip_path, partial: a zip destination and the file written in its stead until commit.

    handle: StoreHandle
    claim: Claim
    zip_path: pathlib.Path | None = None
    partial: pathlib.Path | None = None
    committed: bool = False

    def commit(self) -> None:
        """The conversion succeeded: a zip file is closed, then renamed into place."""
        if self.partial is not None and self.zip_path is not None:
            self.handle.close()
            os.replace(self.partial, self.zip_path)
        self.committed = True

    def release(self) -> None:
        """Close the store, drop an unfinished zip file, free the claim (however the run ended)."""
        try:
            if self.partial is not None and not self.committed:
                # A zip whose write failed (a full disk) may fail again as it closes.
                with contextlib.suppress(Exception):
                    self.handle.close()
                with contextlib.suppress(OSError):
                    os.unlink(self.partial)
            else:
                self.handle.close()
        finally:
            self.claim.release()


def check_dest_options(dest: object, storage_options: Mapping[str, object] | None) -> None:
    """ValueError when ``storage_options`` are given for a destination that is no remote URL."""
    # local:// and file:// destinations are written as directories: fsspec's options go unused.
    check_storage_options(dest, storage_options, "dest_storage_options")
    if storage_options and place_of(dest).kind == "local":
        raise ValueError(
            f"dest_storage_options apply to a URL (s3://..., gs://...), got {dest!r}: a "
            f"local directory, written without fsspec"
        )


def open_dest(
    dest: object,
    overwrite: bool,
    resume: bool,
    storage_options: Mapping[str, object] | None = None,
) -> Destination:
    """Claim the destination, then open it; refuse an existing one unless overwrite or resume."""
    # The claim is put through the same file system (storage_options). StoreError when another
    # conversion holds it, it exists without overwrite/resume, or may not be replaced.
    if overwrite and resume:
        raise ValueError("overwrite and resume exclude each other: pass one")
    spec = os.fspath(dest) if isinstance(dest, os.PathLike) else dest
    name = spec if isinstance(spec, str) else str(spec)
    check_dest_options(spec, storage_options)
    place = place_of(spec)
    take_stale = overwrite or resume
    held = claim(name, place, None, take_stale) if place.kind == "local" else None
    handle: StoreHandle | None = None
    try:
        if isinstance(spec, str) and place.kind == "local":  # a path, file:// or local://
            return _open_local(spec, overwrite, resume, held or Claim())
        handle = open_handle(spec, "w", storage_options)
        if held is None:
            held = claim(name, place, handle, take_stale)
        if not (overwrite or resume) and not handle.is_empty():
            raise StoreError(
                f"the destination {handle.name!r} holds keys; pass overwrite=True "
                f"(--overwrite) or resume=True (--resume)"
            )
        check_replaceable_handle(handle, "overwrite" if overwrite else "resume")
        if overwrite and not handle.is_empty():
            handle.clear()
        return Destination(handle, held)
    except BaseException:
        if handle is not None:
            handle.close()
        if held is not None:
            held.release()
        raise


def _open_local(spec: str, overwrite: bool, resume: bool, held: Claim) -> Destination:
    """:func:`open_dest` for a local directory or zip file, claimed already."""
    from zarr.storage import ZipStore

    path = pathlib.Path(spec)
    if "://" in spec:
        from fsspec.implementations.local import LocalFileSystem

        path = pathlib.Path(LocalFileSystem._strip_protocol(spec.rsplit("::", 1)[-1]))
    is_zip = path.suffix.lower() == ".zip"
    exists = path.exists() and (is_zip or not path.is_dir() or any(path.iterdir()))
    if exists and not (overwrite or resume):
        raise StoreError(
            f"the destination {spec!r} exists; pass overwrite=True (--overwrite) "
            f"to replace it or resume=True (--resume) to continue a conversion"
        )
    if exists:
        check_replaceable(path, spec, "overwrite" if overwrite else "resume")
    if is_zip:
        if exists and resume:
            raise StoreError(
                f"a .zip destination cannot be resumed (zip entries are written "
                f"once); convert to a directory, or overwrite {spec!r}"
            )
        # The old zip stays until the new one is complete; what a killed run
        # left beside it is this conversion's own (the claim says so).
        partial = path.with_name(path.name + ZIP_PARTIAL)
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        try:
            store = run(ZipStore.open(partial, mode="w"))
        except OSError as exc:
            raise StoreError(f"cannot write the zip file {spec!r}: {exc}") from None
        return Destination(StoreHandle(store, spec, owned=True), held, path, partial)
    # A LocalStore even for a URL: fsspec's clear() takes the directory away,
    # and its writes do not make it again.
    handle = open_handle(os.fspath(path), "w")
    handle.spec = spec
    if overwrite and not handle.is_empty():
        handle.clear()
    return Destination(handle, held)
