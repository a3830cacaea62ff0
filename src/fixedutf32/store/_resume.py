"""What a resume may trust: fingerprints of source keys, and the journal of them.

A conversion journals each task it finished (the source keys it read, their
fingerprints) in its destination; a resume with the same options skips a
task whose source keys still have the same fingerprints, and does every
other one again.  A fingerprint is the size, modification time and inode of
a local file: a chunk rewritten by zarr-python (a new file renamed into
place) gets a new one.  Stores without such metadata (zip, memory, remote)
give none, and their tasks are always done again.

Beside the journal, the record of the options a conversion was started
with (:func:`record`, written first and deleted last), which a resume
compares (:func:`check_record`), and the command that finishes it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from typing import Any

from ._dest import JOURNAL, RECORD
from ._jobs import Job, json_bytes
from ._layout import FIXED, join, local_root
from ._options import ConvertOptions, compressor_option
from ._stores import StoreError, StoreHandle

__all__ = [
    "Journal",
    "check_record",
    "documents_written",
    "fingerprint",
    "finish_command",
    "record",
]

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


def record(opts: ConvertOptions, src: StoreHandle, dst: StoreHandle) -> bytes:
    """What this conversion was started with: the record a resume compares.

    ``finish`` is the command that resumes it, for a person who finds
    the destination incomplete.
    """
    options = {
        "to": opts.to,
        "zarr_format": opts.zarr_format,
        "endian": opts.endian,
        "length_bytes": opts.length_bytes,
        "compressors": list(opts.compressors),
        "chunks": None if opts.chunks is None else list(opts.chunks),
    }
    return json_bytes(
        {
            "fixedutf32_convert": 1,
            "source": src.name,
            "options": options,
            "finish": finish_command(opts, src, dst),
        }
    )


def finish_command(opts: ConvertOptions, src: StoreHandle, dst: StoreHandle) -> str:
    """The command (or call) that resumes this conversion, skipping invalid chunks."""
    if src.spec is None or dst.spec is None:
        return "convert(source, dest, ..., resume=True, skip_invalid=True), same options"
    words = ["fixedutf32", "convert", src.spec, dst.spec, "--resume", "--skip-invalid"]
    if opts.to != FIXED:
        words += ["--to", opts.to]
    if opts.zarr_format != 3:
        words += ["--zarr-format", str(opts.zarr_format)]
    if opts.endian != "little":
        words += ["--endian", opts.endian]
    if opts.length_bytes is not None:
        words += ["--length-bytes", str(opts.length_bytes)]
    if opts.chunks is not None:
        words += ["--chunks", ",".join(map(str, opts.chunks))]
    compressor = compressor_option(opts.compressors, opts.zarr_format)
    if compressor not in (None, "?"):
        words += ["--compressor", compressor]
    command = " ".join(shlex.quote(str(w)) for w in words)
    return command + (" (with the same compressors)" if compressor == "?" else "")


def check_record(opts: ConvertOptions, src: StoreHandle, dst: StoreHandle) -> bool:
    """With resume: StoreError unless the destination was started with these options.

    Returns whether the destination holds a record (an interrupted
    conversion) rather than none (a finished one, or an empty store).
    """
    raw = dst.get(RECORD)
    if raw is None:
        return False
    try:
        started = json.loads(bytes(raw))["options"]
    except (ValueError, KeyError, TypeError):
        started = None
    if not isinstance(started, dict):
        raise StoreError(
            f"resume: {RECORD} in {dst.name!r} is not a record of a conversion; "
            f"convert again with overwrite=True (--overwrite)"
        ) from None
    wanted = json.loads(record(opts, src, dst))["options"]
    differ = [
        f"{name} {started.get(name)!r} (now {value!r})"
        for name, value in wanted.items()
        if started.get(name) != value
    ]
    if differ:
        raise StoreError(
            f"resume: {dst.name!r} was started with other options: {', '.join(differ)}; "
            f"resume with the options it was started with, or convert again with "
            f"overwrite=True (--overwrite)"
        )
    return True


def documents_written(job: Job, dst: StoreHandle, recorded: bool) -> bool:
    """With resume: whether the array's documents are already written as planned.

    Documents that differ are rewritten when the record says this
    conversion wrote them (the source changed); without a record they
    were written by another conversion, which is refused.
    """
    written = [dst.get(join(job.path, name)) for name, _ in job.doc_names]
    if all(v is None for v in written):
        return False
    if all(v is not None and bytes(v) == doc for (_, doc), v in zip(job.doc_names, written)):
        return True
    if recorded:
        return False
    raise StoreError(
        f"resume: the destination's metadata of {job.path!r} differs from this "
        f"conversion's; it was written with other options (use overwrite)"
    )
