"""What ``convert`` may write and replace: safe keys, replaceable destinations.

A store read from anywhere may hold keys such as ``a/../../x``; written as
they are, a directory store (or fsspec's local file system) resolves them
outside the destination.  And ``overwrite`` deletes what is there, so it
must be a store, not a user's files.  Both checks live here, and nothing
else decides them.
"""

from __future__ import annotations

import os
import pathlib
import stat
import zipfile
from typing import TYPE_CHECKING

from ._stores import StoreError

if TYPE_CHECKING:
    from ._stores import StoreHandle

__all__ = [
    "JOURNAL",
    "RECORD",
    "check_replaceable",
    "check_replaceable_handle",
    "check_safe_key",
    "is_bookkeeping",
    "key_problem",
]

# The key a conversion into a directory or URL writes first and deletes last:
# its options, so that a resume can refuse other ones.  While it is there, the
# destination is an interrupted conversion.
RECORD = ".fixedutf32-convert.json"
# Pieces of its journal, ``.fixedutf32-convert.journal.<n>.json``: the source
# chunks converted so far, each with its fingerprint, so that a resume need
# not convert them again.  Deleted with the record.
JOURNAL = ".fixedutf32-convert.journal."
# What marks the top of a Zarr store (V3 and V2).
_TOP_DOCUMENTS = ("zarr.json", ".zgroup", ".zarray")
_RULE = (
    "expected segments separated by '/', none of them empty, '.' or '..', "
    "without backslashes or NUL characters"
)


def is_bookkeeping(key: str) -> bool:
    """Whether ``key`` (at a store's root) is the record or journal of a conversion."""
    return key == RECORD or key.startswith(JOURNAL)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be used as a destination key, or None when it can.

    Parameters
    ----------
    key : str
        A store key (a path relative to the store's root, ``/``-separated).

    Returns
    -------
    str or None
        A short reason ("a '..' segment", ...), or None for a safe key.

    Examples
    --------
    >>> from fixedutf32.store._dest import key_problem
    >>> key_problem("a/c/0") is None, key_problem("a/../../victim.txt")
    (True, "a '..' segment")
    """
    if not isinstance(key, str) or not key:
        return "an empty key"
    if "\0" in key:
        return "a NUL character"
    if "\\" in key:
        return "a backslash"
    if key.startswith("/"):
        return "an absolute path"
    for segment in key.split("/"):
        if segment == "":
            return "an empty segment"
        if segment in (".", ".."):
            return f"a {segment!r} segment"
    if len(key) >= 2 and key[1] == ":" and key[0].isalpha():
        return "a drive letter"
    return None


def check_safe_key(key: str, where: str) -> None:
    """Raise StoreError unless ``key`` is safe to write (see :func:`key_problem`).

    Parameters
    ----------
    key : str
    where : str
        Where the key came from, for the message ("the source 'in.zip'").
    """
    problem = key_problem(key)
    if problem is not None:
        raise StoreError(
            f"unsafe key {key!r} in {where}: it holds {problem}; {_RULE}. Nothing was written"
        )


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


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
        return (
            f"a zip file of {_entries(len(names))} without {', '.join(_TOP_DOCUMENTS)} at its top"
        )
    return None


def _directory_top(path: pathlib.Path) -> str | None:
    """Why the directory at ``path`` is not a Zarr store, or None when it is one."""
    names = sorted(entry.name for entry in os.scandir(path))
    if not names or set(names) & {*_TOP_DOCUMENTS, RECORD}:
        return None
    shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
    return (
        f"a directory holding {_entries(len(names))} ({shown}) without "
        f"{', '.join(_TOP_DOCUMENTS)} at its top"
    )


def check_replaceable(path: pathlib.Path, spec: str, action: str) -> None:
    """Raise StoreError unless the local ``path`` may be replaced or resumed.

    What may be: nothing, an empty directory, a directory whose top holds a
    Zarr metadata document (or the record of an interrupted conversion), or
    a zip file holding a Zarr store.  Anything else is left as it is.

    Parameters
    ----------
    path : pathlib.Path
        The destination.
    spec : str
        The destination as the caller gave it (for the message).
    action : str
        What was asked ("overwrite", "resume"), for the message.
    """
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
