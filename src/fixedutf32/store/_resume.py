"""What a resume may trust: fingerprints of source keys, and the journal of them.

A conversion journals each task it finished (the source keys it read, their
fingerprints) in its destination; a resume with the same options skips a
task whose source keys still have the same fingerprints, and does every
other one again.  A fingerprint is the size, modification time and inode of
a local file: a chunk rewritten by zarr-python (a new file renamed into
place) gets a new one.  Stores without such metadata (zip, memory, remote)
give none, and their tasks are always done again.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from ._dest import JOURNAL
from ._layout import local_root
from ._stores import StoreHandle

__all__ = ["Journal", "fingerprint"]

_PIECE = re.compile(re.escape(JOURNAL) + r"([0-9]+)\.json$")
# Seconds between journal pieces; the tests set 0 (a piece per task) to kill
# a conversion after known tasks. Never set in normal use.
_FLUSH_SECONDS = float(os.environ.get("FIXEDUTF32_TEST_JOURNAL_SECONDS") or "2")
_FLUSH_ENTRIES = 5000


def fingerprint(handle: StoreHandle, keys: list[str], salt: str = "") -> str | None:
    """A fingerprint of the source ``keys`` as they are now, or None when there is none.

    Parameters
    ----------
    handle : StoreHandle
        The source.
    keys : list of str
        The keys one task reads (a missing key has a fingerprint too).
    salt : str
        What else the task's output depends on (the array's documents).

    Returns
    -------
    str or None
        None for a store that is not a local directory.
    """
    root = local_root(handle)
    if root is None:
        return None
    parts = [salt]
    for key in keys:
        try:
            info = os.stat(os.path.join(root, key))
        except FileNotFoundError:
            parts.append("-")
        else:
            parts.append(f"{info.st_size}.{info.st_mtime_ns}.{info.st_ino}")
    return ",".join(parts)


class Journal:
    """The finished tasks of a conversion, written to its destination in pieces.

    Each piece is a small JSON object ``{task: [fingerprint, missing]}``
    added every few seconds (never rewritten), so its cost does not grow
    with the store; a task is journaled only after its writes returned.
    """

    def __init__(self, dst: StoreHandle) -> None:
        self.dst = dst
        self.pending: dict[str, list[Any]] = {}
        self.next_piece = 0
        self.flushed = time.monotonic()

    def pieces(self) -> list[str]:
        """The journal's keys in the destination."""
        return [key for key in self.dst.list_dir("") if _PIECE.fullmatch(key)]

    def load(self) -> dict[str, list[Any]]:
        """Every journaled task, as ``{task: [fingerprint, missing]}``; torn pieces are ignored."""
        done: dict[str, list[Any]] = {}
        for key in self.pieces():
            match = _PIECE.fullmatch(key)
            assert match is not None  # pieces() matched it
            self.next_piece = max(self.next_piece, int(match.group(1)) + 1)
            raw = self.dst.get(key)
            try:
                piece = json.loads(bytes(raw)) if raw is not None else {}
            except ValueError:
                continue  # written when the run was killed: those tasks are done again
            if isinstance(piece, dict):
                done.update(
                    (task, entry)
                    for task, entry in piece.items()
                    if isinstance(entry, list) and len(entry) == 2
                )
        return done

    def add(self, task: str, print_: str, missing: int) -> None:
        """Journal a finished task; written with the next piece."""
        self.pending[task] = [print_, missing]
        if len(self.pending) >= _FLUSH_ENTRIES or time.monotonic() - self.flushed >= _FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the pending entries as a new piece."""
        self.flushed = time.monotonic()
        if not self.pending:
            return
        key = f"{JOURNAL}{self.next_piece}.json"
        self.next_piece += 1
        self.dst.set(key, json.dumps(self.pending, separators=(",", ":")).encode())
        self.pending = {}

    def clear(self) -> None:
        """Delete every piece (the conversion finished)."""
        self.pending = {}
        for key in self.pieces():
            self.dst.delete(key)
