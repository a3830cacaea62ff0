"""What a resume may trust: fingerprints of source keys, the journal of them, the start record."""
# A task is skipped only while its source keys keep their fingerprints (size, mtime, inode of a
# local file; none elsewhere, so always redone) and the destination still holds the keys and sizes
# it journaled (older entries without keys are never trusted). The record and journal pieces are
# read as chunk files are (regular, non-blocking, bounded); a bad one stops a resume in one line.

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._source import open_chunk_file
from ..errors import CorruptChunkError
from ._arrays import FIXED, join, local_root
from ._conversions import Conversion, json_bytes
from ._dest import JOURNAL, RECORD
from ._options import ConvertOptions, compressor_option
from ._stores import StoreError, StoreHandle

__all__ = [
    "Journal",
    "JournalEntry",
    "check_record",
    "confirmed",
    "documents_written",
    "fingerprint",
    "finish_command",
    "read_key",
    "record",
]

_PIECE = re.compile(re.escape(JOURNAL) + r"([0-9]+)\.json$")
# convert's default journal_seconds: at most this much work is done again
# after a kill, for a piece every few seconds however fast the tasks are.
FLUSH_SECONDS = 2.0
_FLUSH_ENTRIES = 5000
# A piece is flushed before its JSON passes this; a larger one is refused
# when read (a record is a few hundred bytes).
_FLUSH_BYTES = 1 << 20
_MAX_PIECE = 16 << 20
_MAX_RECORD = 1 << 20
# Integers in bookkeeping are counts and sizes: JSON may spell any length.
_MAX_INT = 2**63 - 1


def fingerprint(handle: StoreHandle, keys: list[str], salt: str = "") -> str | None:
    """A fingerprint of the source ``keys`` as they are now (``salt``: the documents), or None."""
    # None for a store that is not a local directory; a missing key has a fingerprint too.
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


def read_key(dst: StoreHandle, key: str, max_nbytes: int) -> bytes | None:
    """The bytes at ``key`` of ``dst`` (None if missing), read as the source's chunk files are."""
    # Local files are opened without blocking and checked before a byte is read (CorruptChunkError
    # for a non-regular file or more than max_nbytes); other stores are read, then measured.
    root = local_root(dst)
    if root is None:
        raw = dst.get(key)
        if raw is not None and raw.nbytes > max_nbytes:
            raise CorruptChunkError(
                key, f"it holds {raw.nbytes} bytes, at most {max_nbytes} expected"
            )
        return None if raw is None else raw.tobytes()
    path = os.path.join(root, key)
    # The size is checked here, not by open_chunk_file, so that the message is about this key.
    opened = open_chunk_file(path, key=key, max_nbytes=sys.maxsize)
    if opened is None:
        if os.path.isdir(path):
            raise CorruptChunkError(key, "expected a regular file, got a directory")
        return None
    with opened:
        if opened.size > max_nbytes:
            raise CorruptChunkError(
                key, f"it holds {opened.size} bytes, at most {max_nbytes} expected"
            )
        return bytes(opened.read_into(bytearray(opened.size)))


def _shown(value: object) -> str:
    """``value`` for a message: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_count(value: object) -> bool:
    return type(value) is int and 0 <= value <= _MAX_INT


def _parse_json(raw: bytes) -> tuple[object, str | None]:
    """``(document, None)``, or ``(None, why it is not JSON)``."""
    try:
        return json.loads(raw), None
    except RecursionError:
        return None, "its JSON is nested too deeply"
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, too many digits
        return None, f"it is not JSON ({str(exc).splitlines()[0]})"


@dataclass(frozen=True)
class JournalEntry:
    """One task as journaled: source fingerprint, chunks missing, destination key sizes."""

    fingerprint: str
    missing: int
    keys: Mapping[str, int | None]

    def to_json(self) -> list[Any]:
        return [self.fingerprint, self.missing, dict(self.keys)]

    @staticmethod
    def from_json(value: object) -> JournalEntry | str | None:
        """The entry, None for an entry of the older format (never trusted), or what is wrong."""
        wanted = "[fingerprint, missing chunks, {key: size or null}]"
        if isinstance(value, list) and len(value) == 2:
            if isinstance(value[0], str) and _is_count(value[1]):
                return None  # written before sizes were journaled: done again
            return f"expected {wanted}, got {_shown(value)}"
        if not isinstance(value, list) or len(value) != 3:
            return f"expected {wanted}, got {_shown(value)}"
        print_, missing, keys = value
        if not isinstance(print_, str) or not _is_count(missing) or not isinstance(keys, dict):
            return f"expected {wanted}, got {_shown(value)}"
        for key, size in keys.items():
            if size is not None and not _is_count(size):
                return f"expected a size in bytes or null for key {key!r}, got {_shown(size)}"
        return JournalEntry(print_, missing, keys)


class Journal:
    """The finished tasks of a conversion, written to its destination in pieces."""

    # Pieces {task: [fingerprint, missing, {key: size}]} are added every flush_seconds, never
    # rewritten, so the cost does not grow with the store; a task is journaled after its writes.

    def __init__(self, dst: StoreHandle, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.dst = dst
        self.flush_seconds = flush_seconds
        self.pending: dict[str, list[Any]] = {}
        self.pending_bytes = 0
        self.next_piece = 0
        self.flushed = time.monotonic()

    def pieces(self) -> list[str]:
        """The journal's keys in the destination, oldest first."""
        found = [(_PIECE.fullmatch(key), key) for key in self.dst.list_dir("")]
        return [key for _, key in sorted((int(m.group(1)), key) for m, key in found if m)]

    def _damaged(self, key: str, what: str) -> StoreError:
        return StoreError(
            f"resume: the journal piece {key!r} in {self.dst.name!r} is not valid: {what}; "
            f"delete it (the tasks it lists are then done again) and resume"
        )

    def load(self) -> dict[str, JournalEntry]:
        """Every journaled task, later pieces winning (StoreError if unreadable)."""
        # A piece that is not JSON at all is what a killed run leaves without atomic writes: redone.
        done: dict[str, JournalEntry] = {}
        for key in self.pieces():
            match = _PIECE.fullmatch(key)
            assert match is not None  # pieces() matched it
            self.next_piece = max(self.next_piece, int(match.group(1)) + 1)
            try:
                raw = read_key(self.dst, key, _MAX_PIECE)
            except CorruptChunkError as exc:
                raise self._damaged(key, exc.reason) from None
            if raw is None:
                continue
            piece, why = _parse_json(raw)
            if why is not None and "nested" in why:
                raise self._damaged(key, why)
            if why is not None:
                continue  # torn: those tasks are done again
            if not isinstance(piece, dict):
                raise self._damaged(key, f"expected a JSON object of tasks, got {_shown(piece)}")
            for task, value in piece.items():
                entry = JournalEntry.from_json(value)
                if isinstance(entry, str):
                    raise self._damaged(key, f"task {task!r}: {entry}")
                if entry is None:
                    done.pop(task, None)
                else:
                    done[task] = entry
        return done

    def add(self, task: str, entry: JournalEntry) -> None:
        """Journal a finished task; written with the next piece."""
        self.pending[task] = entry.to_json()
        self.pending_bytes += len(task) + len(entry.fingerprint) + 24
        self.pending_bytes += sum(len(key) + 24 for key in entry.keys)
        if (
            len(self.pending) >= _FLUSH_ENTRIES
            or self.pending_bytes >= _FLUSH_BYTES
            or time.monotonic() - self.flushed >= self.flush_seconds
        ):
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
        self.pending_bytes = 0

    def clear(self) -> None:
        """Delete every piece (the conversion finished)."""
        self.pending = {}
        self.pending_bytes = 0
        for key in self.pieces():
            self.dst.delete(key)


def confirmed(done: dict[str, JournalEntry], dst: StoreHandle) -> dict[str, JournalEntry]:
    """The journaled tasks whose keys ``dst`` still holds as journaled, from one listing."""
    if not done:
        return {}
    sizes = dst.sizes("")
    return {
        task: entry
        for task, entry in done.items()
        if all(sizes.get(key) == size for key, size in entry.keys.items())
    }


def record(opts: ConvertOptions, src: StoreHandle, dst: StoreHandle) -> bytes:
    """What this conversion was started with: the record a resume compares."""
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


def finish_command(
    opts: ConvertOptions, src: StoreHandle, dst: StoreHandle, skip_invalid: bool = True
) -> str:
    """The command (or call) that resumes this conversion, skipping invalid chunks or not."""
    # fsspec options (often credentials) are never in it nor in the record: it names them instead.
    again = [
        name
        for name, handle in (("storage_options", src), ("dest_storage_options", dst))
        if handle.storage_options
    ]
    note = f" (pass {' and '.join(again)} again: they are not recorded)" if again else ""
    if src.spec is None or dst.spec is None:
        skip = ", skip_invalid=True" if skip_invalid else ""
        return f"convert(source, dest, ..., resume=True{skip}), same options{note}"
    words = ["fixedutf32", "convert", src.spec, dst.spec, "--resume"]
    if skip_invalid:
        words.append("--skip-invalid")
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
    return command + (" (with the same compressors)" if compressor == "?" else "") + note


def _options_problem(options: object) -> str | None:
    """What is wrong with a record's ``options`` (types and ranges), or None."""
    if not isinstance(options, dict):
        return f"expected an object of options at 'options', got {_shown(options)}"
    width = options.get("length_bytes")
    chunks = options.get("chunks")
    codecs = options.get("compressors")
    wrong = [
        ("to", "'fixed_length_utf32' or 'string'", options.get("to") in (FIXED, "string")),
        ("zarr_format", "2 or 3", options.get("zarr_format") in (2, 3)),
        ("endian", "'little' or 'big'", options.get("endian") in ("little", "big")),
        (
            "length_bytes",
            "a positive multiple of 4, 'auto' or null",
            width is None or width == "auto" or (_is_count(width) and width > 0 and width % 4 == 0),
        ),
        (
            "compressors",
            "a list of codec objects",
            isinstance(codecs, list) and all(isinstance(c, dict) for c in codecs),
        ),
        (
            "chunks",
            "a list of positive integers or null",
            chunks is None
            or (isinstance(chunks, list) and all(_is_count(c) and c > 0 for c in chunks)),
        ),
    ]
    for name, expected, ok in wrong:
        if not ok or (name == "zarr_format" and type(options.get(name)) is not int):
            found = _shown(options.get(name, "(none)"))
            return f"expected {expected} at 'options.{name}', got {found}"
    return None


def check_record(opts: ConvertOptions, src: StoreHandle, dst: StoreHandle) -> bool:
    """With resume: StoreError unless the destination was started with these options."""
    # Returns whether there is a record (interrupted) rather than none (finished, or empty store).
    try:
        raw = read_key(dst, RECORD, _MAX_RECORD)
    except CorruptChunkError as exc:
        why: str | None = exc.reason
    else:
        if raw is None:
            return False
        started, why = _parse_json(raw)
        if why is None:
            if not isinstance(started, dict):
                why = f"expected a JSON object with 'options', got {_shown(started)}"
            else:
                why = _options_problem(started.get("options", "(none)"))
    if why is not None:
        raise StoreError(
            f"resume: the conversion record {RECORD!r} in {dst.name!r} is not a record of a "
            f"conversion: {why}; convert again with overwrite=True (--overwrite) to start over"
        ) from None
    assert isinstance(started, dict)  # checked above
    options = started["options"]
    wanted = json.loads(record(opts, src, dst))["options"]
    differ = [
        f"{name} {options.get(name)!r} (now {value!r})"
        for name, value in wanted.items()
        if options.get(name) != value
    ]
    if differ:
        raise StoreError(
            f"resume: {dst.name!r} was started with other options: {', '.join(differ)}; "
            f"resume with the options it was started with, or convert again with "
            f"overwrite=True (--overwrite)"
        )
    return True


def documents_written(conversion: Conversion, dst: StoreHandle, recorded: bool) -> bool:
    """With resume: whether the array's documents are already written as planned."""
    # Differing documents are rewritten when the record says this conversion wrote them (the source
    # changed); without a record another conversion wrote them, which is refused.
    written = [dst.get(join(conversion.path, name)) for name, _ in conversion.doc_names]
    if all(v is None for v in written):
        return False
    if all(v is not None and bytes(v) == doc for (_, doc), v in zip(conversion.doc_names, written)):
        return True
    if recorded:
        return False
    raise StoreError(
        f"resume: the destination's metadata of {conversion.path!r} differs from this "
        f"conversion's; it was written with other options (use overwrite)"
    )
