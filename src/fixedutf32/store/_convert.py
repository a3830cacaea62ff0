"""``convert``: a new store with the string arrays rewritten, nothing lost.

Order of writes, so that an interrupted conversion is visibly incomplete:
every chunk of every array first, then each array's metadata document, then
the groups' documents, the root's last.  Until then ``check`` reports the
arrays' directories as holding keys but no metadata, and zarr-python opens
nothing at the root.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import numpy.typing as npt

from .._checks import ByteView, as_bytes, check_endian, check_length_bytes
from ..chunk import byteswap, decode_chunk, encode_chunk, repad
from ..errors import FixedUTF32Error, StringTooLongError
from ..metadata import ArrayMetadata, FixedLengthUTF32
from ..transcode import decode_vlen_utf8, encode_vlen_utf8
from ._check import (
    CheckReport,
    KeyLongest,
    Problem,
    _check_chunk,
    _plan,
    _source_nodes,
    check_key,
    chunk_problem,
    close_scheduler,
    open_scheduler,
)
from ._dest import (
    RECORD,
    check_replaceable,
    check_replaceable_handle,
    check_safe_key,
    is_bookkeeping,
)
from ._layout import (
    FIXED,
    METADATA_NAMES,
    STRING,
    V2_ARRAY,
    V2_ATTRS,
    V3_DOC,
    ArrayPlan,
    Codec,
    Index,
    Node,
    data_type_of,
    join,
    make_codec,
    memory_order,
    plan_array,
    redo,
    undo,
)
from ._resume import Journal, fingerprint
from ._run import StoreRef, Task, resolve, run_with_progress
from ._stores import StoreError, StoreHandle, dask_spec, open_handle, spec_of

if TYPE_CHECKING:
    import distributed

__all__ = ["ConvertReport", "InvalidChunkError", "convert"]

DEFAULT_COMPRESSORS = "default"
_ZSTD_V3 = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
_ZSTD_V2 = {"id": "zstd", "level": 0}
# The deepest hierarchy convert writes: zarr-python's LocalStore creates a
# chunk's directories recursively, one Python frame per level.
MAX_DEPTH = 256
_PARTIAL = re.compile(r"\.[0-9a-f]{32}\.partial$")
# Seconds to wait after each chunk written: lets the tests kill a conversion
# in the middle, deterministically. Never set in normal use.
_WRITE_DELAY = float(os.environ.get("FIXEDUTF32_TEST_WRITE_DELAY", "0") or 0)


class InvalidChunkError(FixedUTF32Error):
    """A source chunk that cannot be converted stopped ``convert``.

    Attributes
    ----------
    problem : Problem
        The array, key, chunk index, coordinates and code point.
    finish : str or None
        The command that finishes the conversion (resume, skipping invalid
        chunks), when chunks were written; None when nothing was.
    """

    def __init__(self, problem: Problem, finish: str | None = None) -> None:
        self.problem = problem
        self.finish = finish
        if finish is None:
            advice = (
                "nothing was written: fix the source, or convert with skip_invalid=True "
                "(--skip-invalid)"
            )
        else:
            advice = (
                "the conversion stopped before writing this array's metadata, so the "
                "destination is incomplete (chunks without metadata): fix the source and "
                "resume, or finish it with the fill value for invalid chunks: " + finish
            )
        super().__init__(f"{problem}; {advice}")

    def __reduce__(self) -> tuple[type[Any], tuple[Any, ...]]:
        return type(self), (self.problem, self.finish)


# One entry of ConvertReport.arrays ("from" is a keyword, hence this form).
ConvertedArray = TypedDict(
    "ConvertedArray",
    {
        "path": str,
        "from": str,
        "to": str,
        "length_bytes": int | None,
        "chunks_written": int,
        "chunks_kept": int,
        "chunks_missing": int,
        "chunks_deleted": int,
        "already_complete": bool,
        "changes": list[str],
    },
)


@dataclass
class ConvertReport:
    """The result of :func:`convert`.

    Attributes
    ----------
    source, dest : str
    arrays : list of dict
        One per converted array: ``path``, ``from`` and ``to`` (data types),
        ``length_bytes`` written (None for ``string``), ``chunks_written``,
        ``chunks_kept`` (already in the destination and verified, with
        ``resume``), ``chunks_missing`` (missing in the source: fill value),
        ``chunks_deleted`` (destination chunks a resume deleted: left by an
        interrupted run, or no longer in the source), ``already_complete``
        (a resume found the array finished and wrote nothing), ``changes``
        (what differs from the source besides the data type, as text:
        ``"Zarr V2 -> V3"``, ``"endian big -> little"``, ``"length_bytes 16
        -> 12"``, ``"chunks [3, 2] -> [4, 4]"``, ``"codecs [zstd] ->
        [gzip]"``).
    copied : list of str
        Paths of arrays copied as they are (other data types).
    groups : list of str
    skipped : list of Problem
        Invalid source chunks written as the fill value (``skip_invalid``).
    keys_copied : int
    bytes_read, bytes_written : int
    verified : bool or None
        True when ``verify`` compared both stores and found them equal;
        None when not asked.
    mismatches : list of str
        What ``verify`` found different.
    """

    source: str
    dest: str
    to: str
    arrays: list[ConvertedArray] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    skipped: list[Problem] = field(default_factory=list)
    keys_copied: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    verified: bool | None = None
    mismatches: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready values (a new dict)."""
        out = asdict(self)
        out["skipped"] = [asdict(p) for p in self.skipped]
        return out

    def to_json(self, indent: int | str | None = None) -> str:
        """The report as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @property
    def skipped_chunks(self) -> int:
        """How many source chunks ``skip_invalid`` left out (each counted once)."""
        return len({(p.array, p.key, p.chunk) for p in self.skipped})

    def to_text(self) -> str:
        """The report as lines for a person."""
        lines: list[str] = []
        for a in self.arrays:
            changes = ", ".join(a.get("changes", ())) or "same layout"
            deleted = a.get("chunks_deleted", 0)
            lines.append(
                f"array {a['path'] or '/'}: {a['from']} -> {a['to']} ({changes}): "
                f"{_count(a['chunks_written'], 'chunk')} written, {a['chunks_kept']} kept, "
                f"{a['chunks_missing']} missing (fill value)"
                + (f", {deleted} deleted (stale)" if deleted else "")
            )
        lines.extend(f"copied {p or '/'} as it is" for p in self.copied)
        lines.extend(f"skipped (fill value written): {p}" for p in self.skipped)
        lines.extend(f"verify: {m}" for m in self.mismatches)
        skipped = self.skipped_chunks
        parts = [
            f"{_count(len(self.arrays), 'array')} converted",
            f"{_count(len(self.copied), 'array')} copied unchanged "
            f"({_count(self.keys_copied, 'chunk key')})",
            f"{_count(len(self.groups), 'group')} written",
        ]
        summary = ", ".join(parts) + f": {self.bytes_read} bytes read, {self.bytes_written} written"
        if skipped:
            summary += f"; {_count(skipped, 'invalid chunk')} skipped (they read as the fill value)"
        if self.verified is True:
            summary += "; verified element by element" + (
                f", except {_count(skipped, 'skipped chunk')}" if skipped else ""
            )
        elif self.verified is False:
            summary += "; VERIFY FOUND DIFFERENCES"
        lines.append(summary)
        return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless n is 1 ("1 array", "2 arrays")."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


# -- arguments ----------------------------------------------------------------


def _check_to(to: str, zarr_format: int) -> None:
    if to not in (FIXED, STRING):
        raise ValueError(f"to must be {FIXED!r} or {STRING!r}, got {to!r}")
    if zarr_format not in (2, 3) or type(zarr_format) is not int:
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    if to == STRING and zarr_format != 3:
        raise ValueError(
            "to='string' writes Zarr V3 (the string data type has no V2 form here); "
            f"got zarr_format={zarr_format}"
        )


def _compressor_json(compressors: Any, zarr_format: int) -> tuple[dict[str, Any], ...]:
    """The destination's bytes-to-bytes codecs as JSON (V3 objects or one V2 compressor)."""
    if isinstance(compressors, str) and compressors == DEFAULT_COMPRESSORS:
        return (dict(_ZSTD_V3) if zarr_format == 3 else dict(_ZSTD_V2),)
    if compressors is None:
        return ()
    if (
        isinstance(compressors, (dict, str))
        or hasattr(compressors, "to_dict")
        or hasattr(compressors, "get_config")
    ):
        compressors = [compressors]
    out: list[dict[str, Any]] = []
    for codec in compressors:
        if hasattr(codec, "to_dict"):
            codec = codec.to_dict()
        elif hasattr(codec, "get_config"):
            config = dict(codec.get_config())
            codec = (
                config
                if zarr_format == 2
                else {"name": f"numcodecs.{config.pop('id')}", "configuration": config}
            )
        elif isinstance(codec, str):
            codec = {"name": codec} if zarr_format == 3 else {"id": codec}
        if not isinstance(codec, dict):
            raise ValueError(f"compressors: expected codec objects or JSON dicts, got {codec!r}")
        # fails now, not after the chunks; the metadata then says every setting
        # the chunks are compressed with (the chunk-source layer's defaults)
        spec = make_codec(codec, zarr_format, "compressors").spec
        written = spec.to_json(zarr_format)
        if zarr_format == 2 and spec.typesize is not None:
            written["typesize"] = spec.typesize
        out.append(written)
    if zarr_format == 2 and len(out) > 1:
        raise ValueError(f"compressors: Zarr V2 holds one compressor, got {len(out)}")
    return tuple(out)


def _check_chunks(chunks: Sequence[int] | None) -> Index | None:
    if chunks is None:
        return None
    try:
        checked = tuple(int(c) for c in chunks)
    except (TypeError, ValueError):
        raise ValueError(f"chunks must be a sequence of positive ints, got {chunks!r}") from None
    if any(c < 1 for c in checked):
        raise ValueError(f"chunks must be positive, got {list(checked)}")
    return checked


@dataclass(frozen=True)
class _ConvertOptions:
    """The checked options of :func:`convert` that shape each converted array."""

    to: str
    zarr_format: int
    endian: str
    length_bytes: int | str | None  # an int, "auto" or None (see convert)
    compressors: tuple[dict[str, Any], ...]  # JSON, as the destination's metadata holds them
    chunks: Index | None
    resume: bool
    skip_invalid: bool


# -- the plan of one converted array ------------------------------------------


@dataclass(frozen=True)
class Job:
    """How one string array is converted: its source plan, destination layout and codecs."""

    source: ArrayPlan
    to: str
    meta: ArrayMetadata  # destination layout; the data type is a stand-in for string
    codecs: tuple[Codec, ...]  # destination bytes-to-bytes codecs
    doc_names: tuple[tuple[str, bytes], ...]  # metadata documents, written last
    same_grid: bool
    skip_invalid: bool
    resume: bool
    signature: str = ""  # the source's and destination's documents, for fingerprints

    @property
    def path(self) -> str:
        return self.source.path

    def key(self, index: Sequence[int]) -> str:
        return join(self.path, self.meta.chunk_key(index))


def _dest_width(plan: ArrayPlan, length_bytes: int | str | None, longest: int) -> int:
    if isinstance(length_bytes, int):
        if len(plan.fill) * 4 > length_bytes:
            raise ValueError(
                f"length_bytes {length_bytes} cannot hold the fill value {plan.fill!r} of "
                f"array {plan.path!r}; expected at least {4 * len(plan.fill)}"
            )
        return length_bytes
    if length_bytes is None and plan.kind == FIXED:
        return plan.meta.data_type.length_bytes
    # "auto", or a string source's width left to its longest string
    return 4 * max(longest, len(plan.fill), 1)


def _changes(job: Job) -> list[str]:
    """What a converted array's layout changes, besides its data type (report text)."""
    plan, dst = job.source, job.meta
    src = plan.meta
    out: list[str] = []
    if plan.zarr_format != dst.zarr_format:
        out.append(f"Zarr V{plan.zarr_format} -> V{dst.zarr_format}")
    if plan.kind == FIXED and job.to == FIXED and src.endian != dst.endian:
        out.append(f"endian {src.endian} -> {dst.endian}")
    if job.to == FIXED:
        width = dst.data_type.length_bytes
        old = src.data_type.length_bytes if plan.kind == FIXED else None
        out.append(
            f"length_bytes {width}" if old in (None, width) else f"length_bytes {old} -> {width}"
        )
    if plan.shard is not None:
        out.append(
            f"shards {list(plan.key_meta.chunk_shape)} of chunks {list(src.chunk_shape)} -> "
            f"chunks {list(dst.chunk_shape)}"
        )
    elif tuple(src.chunk_shape) != tuple(dst.chunk_shape):
        out.append(f"chunks {list(src.chunk_shape)} -> {list(dst.chunk_shape)}")
    before = [spec.id for spec in plan.chain.specs]
    if plan.shard is not None:  # the codecs applied to whole shards
        before += [spec.id for spec in plan.shard.specs]
    after = [codec.spec.id for codec in job.codecs]
    if before != after:
        out.append(f"codecs [{', '.join(before)}] -> [{', '.join(after)}]")
    return out


def _check_fits(plan: ArrayPlan, length_bytes: int, longest: int) -> None:
    """ValueError when the source's longest string does not fit ``length_bytes``."""
    needed = 4 * longest
    if needed > length_bytes:
        raise ValueError(
            f"length_bytes {length_bytes} cannot hold the longest string of array "
            f"{plan.path or '/'!r} ({longest} code points); expected at least {needed}: "
            f"pass length_bytes={needed} (--length-bytes {needed}) or 'auto' "
            f"(--length-bytes auto)"
        )


def _dest_documents(
    node: Node,
    plan: ArrayPlan,
    to: str,
    meta: ArrayMetadata,
    compressors: Sequence[dict[str, Any]],
) -> dict[str, bytes]:
    """The metadata documents of a converted array, by name (JSON bytes)."""
    attributes = node.attributes
    if to == FIXED:
        doc = ArrayMetadata(
            meta.zarr_format,
            meta.shape,
            meta.chunk_shape,
            meta.data_type,
            meta.endian,
            plan.fill,
            meta.order,
            tuple(compressors),
        ).to_json()
    else:
        doc = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(meta.shape),
            "data_type": "string",
            "chunk_grid": {
                "name": "regular",
                "configuration": {"chunk_shape": list(meta.chunk_shape)},
            },
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": plan.fill,
            "codecs": [{"name": "vlen-utf8", "configuration": {}}, *compressors],
            "attributes": {},
        }
    if meta.zarr_format == 2:
        docs = {V2_ARRAY: doc}
        if attributes:
            docs[V2_ATTRS] = attributes
    else:
        doc["attributes"] = attributes
        names = node.doc.get("dimension_names") if node.zarr_format == 3 else None
        if names is not None:
            doc["dimension_names"] = names
        docs = {V3_DOC: doc}
    return {name: _json_bytes(value) for name, value in docs.items()}


def _json_bytes(value: object) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")


# -- chunk work (tasks) -------------------------------------------------------


def _chunk_problem(plan: ArrayPlan, key: str, index: Index, exc: Exception) -> Problem:
    """A Problem for an error met turning one source chunk into strings (check's wording)."""
    return chunk_problem(plan, key, index, exc)


def _string_chunk(
    plan: ArrayPlan, key: str, index: Index, data: ByteView, width: int, endian: str
) -> npt.NDArray[np.str_] | Problem:
    """A vlen-utf8 chunk as a ``U`` array in ``endian`` (C order), or a Problem."""
    count = math.prod(plan.meta.chunk_shape)
    try:
        strings = decode_vlen_utf8(data, width, endian=endian)
    except (FixedUTF32Error, ValueError) as exc:
        return _chunk_problem(plan, key, index, exc)
    if strings.size != count:
        return Problem(
            "chunk", plan.path, f"holds {strings.size} strings; expected {count}", key, index
        )
    return strings


def _fixed_to_dest(job: Job, view: npt.NDArray[np.uint8]) -> ByteView:
    """The destination's uncompressed bytes for a valid fixed source chunk (same grid)."""
    src = job.source.meta
    src_width, endian = src.data_type.length_bytes, src.endian
    if job.to == STRING:
        if src.order == "F" and len(src.chunk_shape) > 1:
            strings = np.ascontiguousarray(
                decode_chunk(
                    view, src_width, endian=endian, shape=src.chunk_shape, order="F", validate=False
                )
            )
            return encode_vlen_utf8(strings, validate=False)
        return encode_vlen_utf8(view, src_width, endian=endian, validate=False)
    dst = job.meta
    width = dst.data_type.length_bytes
    out: npt.NDArray[np.uint8] | bytearray = view
    if width != src_width:
        out = repad(view, src_width, width, endian=endian, validate=False)
    if dst.endian != endian:
        out = bytearray(out) if out is view else out
        byteswap(out)
    return out


def _source_strings(job: Job, key: str, index: Index, data: ByteView) -> ByteView | Problem:
    """A source chunk as the destination's uncompressed bytes (same grid), or a Problem."""
    plan = job.source
    if plan.kind == STRING:
        meta = job.meta
        strings = _string_chunk(plan, key, index, data, meta.data_type.length_bytes, meta.endian)
        return strings if isinstance(strings, Problem) else strings.view(np.uint8).reshape(-1)
    problems, _ = _check_chunk(plan, key, index, data, 1)
    if problems:
        return problems[0]
    try:
        return _fixed_to_dest(job, np.frombuffer(data, np.uint8))
    except StringTooLongError as exc:
        return _chunk_problem(plan, key, index, exc)


def _drop(dst: StoreHandle, job: Job, key: str, result: KeyConversion) -> None:
    """With resume: delete the destination chunk ``key`` whose source chunk is gone or skipped.

    An earlier, interrupted run may have written it from what the source
    held then; left there, it would read as that old value.
    """
    if job.resume and dst.get(key) is not None:
        dst.delete(key)
        result["deleted"] += 1


def _write(dst: StoreHandle, job: Job, key: str, payload: ByteView, result: KeyConversion) -> None:
    """Write ``payload`` (uncompressed) at ``key``; with resume, keep an equal chunk."""
    if job.resume:
        old = dst.get(key)
        if old is not None:
            try:
                same = np.array_equal(
                    np.frombuffer(undo(job.codecs, old), np.uint8), np.frombuffer(payload, np.uint8)
                )
            except Exception:  # noqa: BLE001 - a torn or foreign chunk is rewritten
                same = False
            if same:
                result["kept"] += 1
                return
    data = redo(job.codecs, payload)
    dst.set(key, data)
    result["written"] += 1
    result["bytes_written"] += as_bytes(data).nbytes
    if _WRITE_DELAY:
        time.sleep(_WRITE_DELAY)


class KeyConversion(TypedDict):
    """What one task of a conversion did: a source key, a destination chunk or a copied key."""

    path: str | None  # the converted array; None for a copied key
    chunks: int
    written: int
    kept: int
    missing: int
    deleted: int  # destination chunks deleted (resume): the source has none there now
    bytes_read: int
    bytes_written: int
    problems: list[Problem]
    fatal: Problem | None  # the problem that stops the conversion
    journal: tuple[str, str] | None  # (task, fingerprint) once done without problems


def _new_result(path: str | None, chunks: int) -> KeyConversion:
    """The counts a task returns, all zero: for ``chunks`` chunks of the array at ``path``."""
    return {
        "path": path,
        "chunks": chunks,
        "written": 0,
        "kept": 0,
        "missing": 0,
        "deleted": 0,
        "bytes_read": 0,
        "bytes_written": 0,
        "problems": [],
        "fatal": None,
        "journal": None,
    }


def convert_key(src_ref: StoreRef, dst_ref: StoreRef, job: Job, key_index: Index) -> KeyConversion:
    """Convert the chunks under one source key (same chunk grid); a task."""
    src, dst = resolve(src_ref), resolve(dst_ref, "w")
    plan = job.source
    key = plan.key(key_index)
    chunks = plan.chunks_of_key(key_index)
    result = _new_result(job.path, len(chunks))
    read = plan.read_parts(src, key_index)
    if read is None:
        result["missing"] = len(chunks)
        for index in chunks:
            _drop(dst, job, job.key(index), result)
        return result
    result["bytes_read"], parts = read
    result["missing"] = len(chunks) - len(parts)
    held = {index for index, _, _ in parts}
    for index in chunks:
        if index not in held:
            _drop(dst, job, job.key(index), result)
    for index, data, error in parts:
        if error is None:
            assert data is not None  # read_key gives each chunk's data or an error
            payload = _source_strings(job, key, index, data)
        else:
            payload = _chunk_problem(plan, key, index, error)
        if isinstance(payload, Problem):
            result["problems"].append(payload)
            if not job.skip_invalid:
                result["fatal"] = payload
                return result
            _drop(dst, job, job.key(index), result)
            continue  # left out: reads as the fill value
        _write(dst, job, job.key(index), payload, result)
    return result


def _region_keys(job: Job, index: Index) -> dict[Index, set[Index]]:
    """The source keys (grid indices) under destination chunk ``index``, and their chunks."""
    plan, meta = job.source, job.meta
    target, _ = meta.chunk_region(index)
    first = [t.start // c for t, c in zip(target, plan.meta.chunk_shape)]
    last = [(t.stop - 1) // c for t, c in zip(target, plan.meta.chunk_shape)]
    wanted = set(np.ndindex(*[b - a + 1 for a, b in zip(first, last)]))
    wanted = {tuple(a + i for a, i in zip(first, w)) for w in wanted}
    keys: dict[Index, set[Index]] = {}
    for chunk in wanted:
        key_index = (
            chunk
            if plan.shard is None
            else tuple(c // n for c, n in zip(chunk, plan.per_shard or ()))
        )
        keys.setdefault(key_index, set()).add(chunk)
    return keys


def _source_region_strings(
    job: Job, src: StoreHandle, index: Index, result: KeyConversion
) -> tuple[npt.NDArray[np.str_] | None, bool]:
    """The source elements covering destination chunk ``index``, fill where missing."""
    plan, meta = job.source, job.meta
    target, _ = meta.chunk_region(index)
    # Wide enough for every source string: a string too long for the
    # destination must fail in encode_chunk, not be cut short by NumPy.
    width = max(
        meta.data_type.length_bytes, plan.meta.data_type.length_bytes if plan.kind == FIXED else 0
    )
    out = np.full(meta.chunk_shape, plan.fill, dtype=f"U{width // 4}")
    present = False
    for key_index, chunks in sorted(_region_keys(job, index).items()):
        read = plan.read_parts(src, key_index)
        if read is None:
            continue
        result["bytes_read"] += read[0]
        key = plan.key(key_index)
        for chunk, data, error in read[1]:
            if chunk not in chunks:
                continue
            strings = _region_chunk(job, key, chunk, data, error)
            if isinstance(strings, Problem):
                result["problems"].append(strings)
                if not job.skip_invalid:
                    result["fatal"] = strings
                    return None, False
                continue
            present = True
            src_target, _ = plan.meta.chunk_region(chunk)
            overlap = tuple(
                slice(max(a.start, b.start), min(a.stop, b.stop))
                for a, b in zip(src_target, target)
            )
            if any(s.start >= s.stop for s in overlap):
                continue
            into = tuple(
                slice(s.start - t.start, s.stop - t.start) for s, t in zip(overlap, target)
            )
            frm = tuple(
                slice(s.start - t.start, s.stop - t.start) for s, t in zip(overlap, src_target)
            )
            out[into] = strings[frm]
    return out, present


def _region_chunk(
    job: Job, key: str, chunk: Index, data: ByteView | None, error: Exception | None
) -> npt.NDArray[np.str_] | Problem:
    plan = job.source
    if error is not None:
        return _chunk_problem(plan, key, chunk, error)
    assert data is not None  # read_key gives each chunk's data or an error
    if plan.kind == STRING:
        strings = _string_chunk(plan, key, chunk, data, job.meta.data_type.length_bytes, "little")
        return strings if isinstance(strings, Problem) else strings.reshape(plan.meta.chunk_shape)
    problems, _ = _check_chunk(plan, key, chunk, data, 1)
    if problems:
        return problems[0]
    src = plan.meta
    return decode_chunk(
        np.frombuffer(data, np.uint8),
        src.data_type.length_bytes,
        endian=src.endian,
        shape=src.chunk_shape,
        order=memory_order(src),
        validate=False,
    )


def convert_region(src_ref: StoreRef, dst_ref: StoreRef, job: Job, index: Index) -> KeyConversion:
    """Write destination chunk ``index`` from the source chunks it overlaps; a task."""
    src, dst = resolve(src_ref), resolve(dst_ref, "w")
    result = _new_result(job.path, 1)
    strings, present = _source_region_strings(job, src, index, result)
    if strings is None:  # a fatal problem, in result
        return result
    if not present:
        result["missing"] = 1
        _drop(dst, job, job.key(index), result)
        return result
    meta = job.meta
    try:
        if job.to == STRING:
            payload = encode_vlen_utf8(strings, validate=False)
        else:
            payload = encode_chunk(
                strings,
                meta.data_type.length_bytes,
                endian=meta.endian,
                order=memory_order(meta),
                validate=False,
            )
    except StringTooLongError as exc:
        problem = Problem(
            "chunk", job.path, f"{exc} (destination chunk {list(index)})", job.key(index), index
        )
        result["problems"].append(problem)
        result["fatal"] = None if job.skip_invalid else problem
        if job.skip_invalid:
            _drop(dst, job, job.key(index), result)
        return result
    _write(dst, job, job.key(index), payload, result)
    return result


def copy_key(src_ref: StoreRef, dst_ref: StoreRef, key: str, resume: bool) -> KeyConversion:
    """Copy one key's bytes as they are; with resume, keep an equal copy. A task."""
    src, dst = resolve(src_ref), resolve(dst_ref, "w")
    data = src.get(key)
    result = _new_result(None, 1)
    if data is None:  # deleted since it was listed: so is an earlier copy
        result["missing"] = 1
        if resume and dst.get(key) is not None:
            dst.delete(key)
        return result
    result["bytes_read"] = data.nbytes
    if resume:
        old = dst.get(key)
        if old is not None and np.array_equal(old, data):
            result["kept"] = 1
            return result
    dst.set(key, data)
    result["written"] = 1
    result["bytes_written"] = data.nbytes
    return result


def journaled(
    task: str,
    keys: list[str],
    salt: str,
    trusted: list[Any] | None,
    function: Callable[..., KeyConversion],
    *args: Any,
) -> KeyConversion:
    """Run one conversion task, or skip it when the journal says it was done from this source.

    ``task`` names it in the journal; ``keys`` are the source keys it reads,
    fingerprinted before they are read (a change while it runs is caught by
    the next resume); ``trusted`` is the journal's ``[fingerprint,
    missing]`` for it, or None.  A skipped task counts its chunks as kept.
    """
    print_ = fingerprint(resolve(args[0]), keys, salt)
    if print_ is not None and trusted is not None and trusted[0] == print_:
        path = args[2].path if isinstance(args[2], Job) else None
        chunks = len(args[2].source.chunks_of_key(args[3])) if function is convert_key else 1
        result = _new_result(path, chunks)
        result["missing"] = int(trusted[1])
        result["kept"] = chunks - result["missing"]
        return result
    result = function(*args)
    if print_ is not None and not result["problems"] and result["fatal"] is None:
        result["journal"] = (task, print_)
    return result


def longest_key(src_ref: StoreRef, plan: ArrayPlan, key_index: Index) -> KeyLongest:
    """The longest string under one key of a string (vlen-utf8) array; a task."""
    import numcodecs

    src = resolve(src_ref)
    result: KeyLongest = {
        "path": plan.path,
        "chunks": len(plan.chunks_of_key(key_index)),
        "longest": 0,
        "problems": [],
    }
    read = plan.read_parts(src, key_index)
    for index, data, error in read[1] if read else ():
        try:
            if error is not None:
                raise error
            strings = numcodecs.VLenUTF8().decode(data)
        except Exception as exc:  # noqa: BLE001 - a codec's error is data, reported
            result["problems"].append(
                Problem(
                    "chunk", plan.path, f"not a vlen-utf8 chunk: {exc}", plan.key(key_index), index
                )
            )
            continue
        result["longest"] = max([result["longest"], *map(len, strings)])
    return result


# -- the whole conversion -----------------------------------------------------


def _overlaps(source: StoreHandle, dest: object) -> bool:
    """True when ``dest`` is ``source``, inside it, or holds it (checked before any write)."""
    from zarr.abc.store import Store

    if isinstance(dest, Store) or source.spec is None:
        return dest is source.store
    dest = os.fspath(dest) if isinstance(dest, os.PathLike) else dest
    if not isinstance(dest, str):
        return False
    if "://" in source.spec.replace("file://", "") or "://" in dest.replace("file://", ""):
        a, b = source.spec.rstrip("/") + "/", dest.rstrip("/") + "/"
        return a.startswith(b) or b.startswith(a)
    pa = pathlib.Path(source.spec.removeprefix("file://")).resolve()
    pb = pathlib.Path(dest.removeprefix("file://")).resolve()
    return pa == pb or pa in pb.parents or pb in pa.parents


def _open_dest(dest: object, overwrite: bool, resume: bool) -> StoreHandle:
    """Open the destination; refuse an existing one unless overwrite or resume."""
    if overwrite and resume:
        raise ValueError("overwrite and resume exclude each other: pass one")
    spec = os.fspath(dest) if isinstance(dest, os.PathLike) else dest
    if isinstance(spec, str) and ("://" not in spec or spec.startswith("file://")):  # local
        path = pathlib.Path(spec[len("file://") :] if spec.startswith("file://") else spec)
        is_zip = path.suffix.lower() == ".zip"
        exists = path.exists() and (is_zip or not path.is_dir() or any(path.iterdir()))
        if exists and not (overwrite or resume):
            raise StoreError(
                f"the destination {spec!r} exists; pass overwrite=True (--overwrite) "
                f"to replace it or resume=True (--resume) to continue a conversion"
            )
        if exists:
            check_replaceable(path, spec, "overwrite" if overwrite else "resume")
        if is_zip and exists:
            if resume:
                raise StoreError(
                    f"a .zip destination cannot be resumed (zip entries are written "
                    f"once); convert to a directory, or overwrite {spec!r}"
                )
            path.unlink()
        handle = open_handle(spec, "w")
    else:
        handle = open_handle(spec, "w")
        try:
            if not (overwrite or resume) and not handle.is_empty():
                raise StoreError(
                    f"the destination {handle.name!r} holds keys; pass overwrite=True "
                    f"(--overwrite) or resume=True (--resume)"
                )
            check_replaceable_handle(handle, "overwrite" if overwrite else "resume")
        except BaseException:
            handle.close()
            raise
    if overwrite and not handle.is_empty():
        handle.clear()
    return handle


def convert(
    source: str | os.PathLike[str] | Any,
    dest: str | os.PathLike[str] | Any,
    *,
    to: str = FIXED,
    zarr_format: int = 3,
    endian: str = "little",
    length_bytes: int | str | None = None,
    compressors: str | Sequence[Any] | None = DEFAULT_COMPRESSORS,
    chunks: Sequence[int] | None = None,
    threads: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    overwrite: bool = False,
    resume: bool = False,
    skip_invalid: bool = False,
    verify: bool = False,
) -> ConvertReport:
    """Write a copy of a Zarr store with its string arrays converted.

    Every fixed_length_utf32 array (Zarr V2 ``<U``/``>U`` or V3) becomes a
    Zarr V3 ``fixed_length_utf32`` array (``to="fixed_length_utf32"``) or a
    zarr-python ``string`` array with the ``vlen-utf8`` codec
    (``to="string"``); with ``to="fixed_length_utf32"``, V3 ``string``
    arrays are converted too.  Groups, attributes and every other array are
    copied as they are (V2 ones get V3 metadata when ``zarr_format=3``, by
    zarr-python's own migration).  The source is only read.

    Parameters
    ----------
    source, dest : str or os.PathLike or zarr.abc.store.Store
        Local directories, ``.zip`` files or fsspec URLs (as for
        :func:`check`).  A ``.zip`` destination can be overwritten, not
        resumed.  Every source key that becomes a destination key is
        checked first (StoreError for ``..``, empty or absolute segments,
        backslashes, NUL): nothing is written outside ``dest``.
    to : {"fixed_length_utf32", "string"}
    zarr_format : {3, 2}
        Format written.  2 needs a V2 source (V2 in, V2 out) and
        ``to="fixed_length_utf32"``.
    endian : {"little", "big"}
        Byte order of the fixed_length_utf32 arrays written.
    length_bytes : int or "auto" or None
        Width of the fixed_length_utf32 arrays written: None keeps each
        array's (or, for a ``string`` source, fits its longest string);
        ``"auto"`` shrinks each to its longest string (one more pass over
        the data); an int sets it (a longer string stops the conversion).
    compressors : "default" or None or list
        Bytes-to-bytes codecs of the converted arrays: ``"default"`` is
        zstd (zarr-python's default), None none, or V3 codec JSON dicts /
        zarr codec objects / numcodecs objects (V2: one ``{"id": ...}``).
    chunks : tuple of int, optional
        New chunk shape of the converted arrays; default the source's
        chunks (the inner chunks of sharded arrays).
    threads, scheduler, progress
        As for :func:`check`; with Dask, tasks write the chunks and the
        destination must be a directory or URL every worker can reach.
    overwrite : bool
        Replace an existing destination (its keys are deleted first): only
        a Zarr store (``zarr.json``, ``.zgroup`` or ``.zarray`` at its top,
        in a directory or a zip file), an interrupted conversion or an empty
        directory; anything else is refused with StoreError and left as it
        is.
    resume : bool
        Continue an interrupted conversion into ``dest``: refused when it
        was started with other options (``skip_invalid`` aside); chunks
        the journal says were converted from the source as it still is
        (same fingerprints) are skipped, every other chunk is converted
        again and kept when the destination already holds it, the rest
        written, and destination chunks the source no longer holds, or the
        plan does not write, deleted.
    skip_invalid : bool
        Write the fill value where a source chunk is invalid (left out of
        the destination, listed in the report) instead of stopping.
    verify : bool
        Read both stores back with zarr-python afterwards and compare every
        element.

    Returns
    -------
    ConvertReport
        A new report.  The destination holds new chunk buffers; nothing is
        shared with the source.

    Raises
    ------
    InvalidChunkError
        At the first source chunk holding an invalid code point (or not
        decoding), unless ``skip_invalid``; the metadata of unfinished
        arrays is then not written.
    StoreError
        When a store cannot be opened, the destination exists (without
        ``overwrite``/``resume``) or is the source, the source has metadata
        problems, or ``resume`` meets a destination written otherwise.
    ValueError
        For invalid arguments.

    Examples
    --------
    >>> import numpy as np, zarr, fixedutf32.store
    >>> a = zarr.create_array("memory://convert-doc", shape=(3,), chunks=(2,), dtype="<U8",
    ...                       zarr_format=2)
    >>> a[:] = np.array(["a", "bc", "d"])
    >>> report = fixedutf32.store.convert("memory://convert-doc", "memory://convert-doc-out",
    ...                                   length_bytes="auto")
    >>> report.arrays[0]["length_bytes"], zarr.open_array("memory://convert-doc-out")[:].tolist()
    (8, ['a', 'bc', 'd'])
    """
    _check_to(to, zarr_format)
    check_endian(endian)
    if length_bytes is not None and length_bytes != "auto":
        length_bytes = check_length_bytes(length_bytes)
    compressor_json = _compressor_json(compressors, zarr_format)
    chunks = _check_chunks(chunks)
    options = _ConvertOptions(
        to, zarr_format, endian, length_bytes, compressor_json, chunks, resume, skip_invalid
    )
    threads, client, cluster = open_scheduler(scheduler, threads)
    src: StoreHandle | None = None
    dst: StoreHandle | None = None
    try:
        src = open_handle(source, "r")
        nodes = _source_nodes(src, "", strings_only=False, max_depth=MAX_DEPTH)
        converter = _Conversion(src, nodes, options, threads, client, progress)
        converter.plan()  # every refusal before the destination is touched
        if client is not None:
            dask_spec(dest, "destination")
        if _overlaps(src, dest):
            raise StoreError(
                f"the destination {dest!r} is, holds or lies inside the source "
                f"{src.name!r}; the source is never written"
            )
        dst = _open_dest(dest, overwrite, resume)
        report = converter.run(dst)
        if verify:
            if dst.spec is not None:
                dst.close()  # a zip file is complete once closed; read back what was written
                dst = open_handle(dst.spec, "r")
            _verify(src, dst, converter, report)
        return report
    finally:
        for handle in (dst, src):
            if handle is not None:
                handle.close()
        close_scheduler(client, cluster)


class _Conversion:
    """The state of one conversion: plans, tasks, and the documents written last."""

    def __init__(
        self,
        src: StoreHandle,
        nodes: list[Node],
        options: _ConvertOptions,
        threads: int,
        client: distributed.Client | None,
        progress: bool,
    ) -> None:
        self.src = src
        self.src_ref: StoreRef = src if client is None else spec_of(src, "source")
        self.nodes = nodes
        self.options = options
        self.threads, self.client, self.progress = threads, client, progress
        self.report = ConvertReport(src.name, "", options.to)  # dest: set by run
        self.jobs: list[Job] = []
        self.copies: list[Node] = []  # arrays copied as they are
        self.copy_keys: dict[str, list[str]] = {}  # their keys (not documents), by path
        self.groups: list[Node] = []

    # planning

    def _problems(self) -> list[ArrayPlan]:
        scratch = CheckReport(self.src.name, "")
        plans = _plan(scratch, self.nodes)
        if scratch.problems:
            raise StoreError(
                f"the source has metadata problems, the first: {scratch.problems[0]}; "
                f"run 'fixedutf32 check' on it"
            )
        return plans

    def _longest(self, plans: list[ArrayPlan]) -> dict[str, int]:
        """The longest string of each array (a first pass over the data, for widths)."""
        tasks: list[Task[KeyLongest]] = []
        for plan in plans:
            for key_index in plan.key_indices:
                n = len(plan.chunks_of_key(key_index))
                function: Callable[..., KeyLongest] = (
                    check_key if plan.kind == FIXED else longest_key
                )
                args = (self.src_ref, plan, key_index) + ((1,) if plan.kind == FIXED else ())
                tasks.append((function, args, n, n * plan.chunk_nbytes()))
        longest = {plan.path: len(plan.fill) for plan in plans}
        problems: list[Problem] = []

        def consume(result: KeyLongest) -> bool:
            longest[result["path"]] = max(longest[result["path"]], result["longest"])
            problems.extend(result["problems"])
            return self.options.skip_invalid or not problems

        run_with_progress(
            tasks, consume, "measure", threads=self.threads, client=self.client, show=self.progress
        )
        if problems and not self.options.skip_invalid:
            raise InvalidChunkError(min(problems, key=Problem.sort_key))
        return longest

    def plan(self) -> None:
        opts = self.options
        zarr_format = opts.zarr_format
        if zarr_format == 2 and any(n.zarr_format == 3 for n in self.nodes):
            raise StoreError("zarr_format=2 needs a Zarr V2 source; this one holds V3 nodes")
        self._problems()
        converting: list[tuple[Node, ArrayPlan]] = []
        for node in self.nodes:
            if node.kind == "group":
                self.groups.append(node)
                continue
            plan = plan_array(node)
            if plan is not None and (plan.kind == FIXED or opts.to == FIXED):
                converting.append((node, plan))
            else:
                self.copies.append(node)
        self._check_keys()
        needs_lengths = [
            plan
            for _, plan in converting
            if opts.length_bytes == "auto" or (plan.kind == STRING and opts.length_bytes is None)
        ]
        # A set width narrower than the source's is measured first, so that a
        # string it cannot hold refuses the conversion before anything is written.
        narrowed = [
            plan
            for _, plan in converting
            if isinstance(opts.length_bytes, int)
            and (plan.kind == STRING or plan.meta.data_type.length_bytes > opts.length_bytes)
        ]
        longest = self._longest(needs_lengths + narrowed) if needs_lengths or narrowed else {}
        for plan in narrowed:
            assert isinstance(opts.length_bytes, int)  # what narrowed means
            _check_fits(plan, opts.length_bytes, longest[plan.path])
        for node, plan in converting:
            self.jobs.append(self._job(node, plan, longest.get(plan.path, 0)))
        for node in self.copies:
            if node.zarr_format == 2 and zarr_format == 3:
                self._migrate(node, None)

    def _check_keys(self) -> None:
        """Refuse a source whose node paths or copied keys could escape the destination.

        Every key this conversion writes is a node path joined to a name it
        makes itself, or (for arrays copied as they are) a key listed here,
        once: all are checked before the destination is opened.
        """
        where = f"the source {self.src.name!r}"
        for node in self.nodes:
            if node.path:
                check_safe_key(node.path, where)
        for node in self.copies:
            prefix = f"{node.path}/" if node.path else ""
            keys = []
            for key in self.src.list_prefix(prefix):
                name = key[len(prefix) :]
                if name in METADATA_NAMES or (not prefix and is_bookkeeping(name)):
                    continue
                check_safe_key(key, where)
                keys.append(key)
            self.copy_keys[node.path] = keys

    def _job(self, node: Node, plan: ArrayPlan, longest: int) -> Job:
        opts = self.options
        to = opts.to
        src = plan.meta
        chunk_shape = opts.chunks or src.chunk_shape
        if len(chunk_shape) != len(src.shape):
            raise ValueError(
                f"chunks {list(chunk_shape)} has {len(chunk_shape)} dimensions; "
                f"array {plan.path!r} has {len(src.shape)}"
            )
        width = _dest_width(plan, opts.length_bytes, longest) if to == FIXED else 4
        same_grid = tuple(chunk_shape) == tuple(src.chunk_shape)
        order = src.order if same_grid and to == FIXED and plan.kind == FIXED else "C"
        meta = ArrayMetadata(
            opts.zarr_format,
            src.shape,
            chunk_shape,
            FixedLengthUTF32(width),
            opts.endian,
            plan.fill if to == FIXED else "",
            order,
        )
        docs = _dest_documents(node, plan, to, meta, opts.compressors)
        codecs = tuple(make_codec(c, opts.zarr_format, "compressors") for c in opts.compressors)
        doc_names = tuple(sorted(docs.items()))
        signature = hashlib.sha256(
            repr((sorted(node.documents.items()), doc_names)).encode()
        ).hexdigest()[:16]
        return Job(
            plan,
            to,
            meta,
            codecs,
            doc_names,
            same_grid,
            opts.skip_invalid,
            opts.resume,
            signature,
        )

    def _migrate(self, node: Node, dst: StoreHandle | None) -> None:
        """Write V3 metadata for a copied V2 array with zarr-python's own migration.

        ``dst`` None is the dry run (while planning): it goes to a scratch
        memory store, so that an array zarr-python cannot migrate stops the
        conversion before the destination is touched.
        """
        import zarr
        from zarr.metadata.migrate_v3 import migrate_to_v3
        from zarr.storage import MemoryStore, StorePath

        try:
            array = zarr.open_array(store=self.src.store, path=node.path, mode="r", zarr_format=2)
            target = MemoryStore() if dst is None else dst.store
            migrate_to_v3(array, StorePath(target, node.path), dry_run=dst is None)
        except Exception as exc:  # noqa: BLE001 - zarr's own reasons, in one line
            raise StoreError(
                f"cannot give the V2 array {node.path!r} ({data_type_of(node)}) V3 metadata: {exc}"
            ) from None

    # running

    def _tasks(self, dst_ref: StoreRef, trusted: dict[str, list[Any]]) -> list[Task[KeyConversion]]:
        """Every task, each wrapped by :func:`journaled` with what the journal says of it."""
        src_ref = self.src_ref
        tasks: list[Task[KeyConversion]] = []

        def add(task: str, keys: list[str], salt: str, n: int, nbytes: int, *args: Any) -> None:
            wrapped = (task, keys, salt, trusted.get(task), *args)
            tasks.append((journaled, wrapped, n, nbytes))

        for job in self.jobs:
            plan = job.source
            if job.same_grid:
                nbytes = plan.chunk_nbytes()
                for key_index in plan.key_indices:
                    n = len(plan.chunks_of_key(key_index))
                    key = plan.key(key_index)
                    add(
                        f"k:{key}",
                        [key],
                        job.signature,
                        n,
                        n * nbytes,
                        convert_key,
                        src_ref,
                        dst_ref,
                        job,
                        key_index,
                    )
            else:
                nbytes = math.prod(job.meta.chunk_shape) * plan.meta.data_type.length_bytes
                for index in job.meta.chunk_indices():
                    keys = [plan.key(k) for k in sorted(_region_keys(job, index))]
                    add(
                        f"r:{job.key(index)}",
                        keys,
                        job.signature,
                        1,
                        nbytes,
                        convert_region,
                        src_ref,
                        dst_ref,
                        job,
                        index,
                    )
        for node in self.copies:
            for key in self.copy_keys[node.path]:
                add(
                    f"c:{key}",
                    [key],
                    "",
                    1,
                    0,
                    copy_key,
                    src_ref,
                    dst_ref,
                    key,
                    self.options.resume,
                )
        return tasks

    def _record(self, dst: StoreHandle) -> bytes:
        """What this conversion was started with: the record a resume compares.

        ``finish`` is the command that resumes it, for a person who finds
        the destination incomplete.
        """
        opts = self.options
        options = {
            "to": opts.to,
            "zarr_format": opts.zarr_format,
            "endian": opts.endian,
            "length_bytes": opts.length_bytes,
            "compressors": list(opts.compressors),
            "chunks": None if opts.chunks is None else list(opts.chunks),
        }
        return _json_bytes(
            {
                "fixedutf32_convert": 1,
                "source": self.src.name,
                "options": options,
                "finish": self._finish_command(dst),
            }
        )

    def _finish_command(self, dst: StoreHandle) -> str:
        """The command (or call) that resumes this conversion, skipping invalid chunks."""
        if self.src.spec is None or dst.spec is None:
            return "convert(source, dest, ..., resume=True, skip_invalid=True), same options"
        opts = self.options
        words = ["fixedutf32", "convert", self.src.spec, dst.spec, "--resume", "--skip-invalid"]
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
        compressor = _compressor_option(opts.compressors, opts.zarr_format)
        if compressor not in (None, "?"):
            words += ["--compressor", compressor]
        command = " ".join(shlex.quote(str(w)) for w in words)
        return command + (" (with the same compressors)" if compressor == "?" else "")

    def _check_record(self, dst: StoreHandle) -> bool:
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
        wanted = json.loads(self._record(dst))["options"]
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

    def _documents_written(self, job: Job, dst: StoreHandle, recorded: bool) -> bool:
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

    def _remove_unplanned(self, dst: StoreHandle, entries: dict[str, ConvertedArray]) -> None:
        """With resume: delete the chunk keys under each array that this plan does not write.

        What an interrupted run with another chunk grid, or a source array
        that has since lost keys, left behind.  Metadata documents stay (they
        are rewritten at the end); other paths are not touched.
        """
        for job in self.jobs:
            planned = {job.key(index) for index in job.meta.chunk_indices()}
            for key in self._keys_under(dst, job.path):
                if key not in planned:
                    dst.delete(key)
                    entries[job.path]["chunks_deleted"] += 1
        for node in self.copies:
            planned = set(self.copy_keys[node.path])
            for key in self._keys_under(dst, node.path):
                if key not in planned:
                    dst.delete(key)

    @staticmethod
    def _keys_under(dst: StoreHandle, path: str) -> list[str]:
        """The destination's keys under array ``path``, metadata and the record left out."""
        prefix = f"{path}/" if path else ""
        return [
            key
            for key in dst.list_prefix(prefix)
            if key[len(prefix) :] not in METADATA_NAMES
            and not is_bookkeeping(key)
            and not _PARTIAL.search(key)
        ]

    def _array_entry(self, job: Job) -> ConvertedArray:
        src_type = FIXED if job.source.kind == FIXED else STRING
        return {
            "path": job.path,
            "from": src_type,
            "to": job.to,
            "length_bytes": job.meta.data_type.length_bytes if job.to == FIXED else None,
            "chunks_written": 0,
            "chunks_kept": 0,
            "chunks_missing": 0,
            "chunks_deleted": 0,
            "already_complete": False,
            "changes": _changes(job),
        }

    def run(self, dst: StoreHandle) -> ConvertReport:
        """Write every chunk into ``dst``, then the metadata documents; the report.

        Into a directory or URL, the record of this conversion's options is
        written first and deleted last, so that a resume can refuse other
        options, and a journal of the finished tasks (with fingerprints of
        their source keys) beside it.  A resume skips the journaled tasks
        whose source is unchanged; every other chunk is converted again and
        compared with the destination's (kept when equal), chunks the source
        no longer holds are deleted, and so are chunk keys the plan does not
        write.
        """
        from zarr.storage import ZipStore

        self.report.dest = dst.name
        dst_ref: StoreRef = dst if self.client is None else spec_of(dst, "destination")
        entries = {job.path: self._array_entry(job) for job in self.jobs}
        complete: set[str] = set()
        recorded = False
        if self.options.resume:
            recorded = self._check_record(dst)  # refusals before any write
            complete = {j.path for j in self.jobs if self._documents_written(j, dst, recorded)}
        journal = None if isinstance(dst.store, ZipStore) else Journal(dst)
        trusted: dict[str, list[Any]] = {}
        if journal is not None:
            if recorded:
                trusted = journal.load()
            else:
                journal.clear()  # without its record, a journal says nothing
            dst.set(RECORD, self._record(dst))
        if self.options.resume:
            self._remove_partial_files(dst)
            self._remove_unplanned(dst, entries)
        tasks = self._tasks(dst_ref, trusted)
        fatal: list[Problem] = []
        report = self.report

        def consume(result: KeyConversion) -> bool:
            report.bytes_read += result["bytes_read"]
            report.bytes_written += result["bytes_written"]
            path = result["path"]
            if path is None:  # a copied key
                report.keys_copied += result["written"] + result["kept"]
                if journal is not None and result["journal"] is not None:
                    journal.add(*result["journal"], result["missing"])
                return True
            entry = entries[path]
            entry["chunks_written"] += result["written"]
            entry["chunks_kept"] += result["kept"]
            entry["chunks_missing"] += result["missing"]
            entry["chunks_deleted"] += result["deleted"]
            if journal is not None and result["journal"] is not None:
                journal.add(*result["journal"], result["missing"])
            report.skipped.extend(result["problems"] if result["fatal"] is None else [])
            if result["fatal"] is not None:
                fatal.append(result["fatal"])
                return False
            return True

        try:
            run_with_progress(
                tasks,
                consume,
                "convert",
                threads=self.threads,
                client=self.client,
                show=self.progress,
            )
        finally:
            if journal is not None:
                journal.flush()  # what was done stays done, however this run ends
        if fatal:
            raise InvalidChunkError(fatal[0], self._finish_command(dst))
        report.skipped.sort(key=Problem.sort_key)
        for path, entry in entries.items():
            entry["already_complete"] = (
                path in complete and entry["chunks_written"] == entry["chunks_deleted"] == 0
            )
        report.arrays.extend(sorted(entries.values(), key=lambda e: e["path"]))
        self._write_documents(dst)
        if journal is not None:
            journal.clear()
            dst.delete(RECORD)  # finished: the destination is a plain Zarr store
        return report

    def _remove_partial_files(self, dst: StoreHandle) -> None:
        """Drop the temporary files a killed LocalStore write leaves (``key.<hex>.partial``)."""
        from zarr.storage import LocalStore

        if isinstance(dst.store, LocalStore):
            for key in dst.list_prefix(""):
                if _PARTIAL.search(key):
                    dst.delete(key)

    def _write_documents(self, dst: StoreHandle) -> None:
        """Metadata last: arrays, then groups from the deepest to the root."""
        zarr_format = self.options.zarr_format
        for job in self.jobs:
            for name, doc in job.doc_names:
                dst.set(join(job.path, name), doc)
        for node in self.copies:
            self.report.copied.append(node.path)
            if node.zarr_format == 2 and zarr_format == 3:
                if dst.get(join(node.path, V3_DOC)) is None:
                    self._migrate(node, dst)
                continue
            for name, data in node.documents.items():
                dst.set(join(node.path, name), data)
        for node in sorted(self.groups, key=lambda n: (n.path == "", -n.path.count("/"), n.path)):
            self.report.groups.append(node.path)
            for name, data in self._group_documents(node).items():
                dst.set(join(node.path, name), data)
        self.report.groups.sort()
        self.report.copied.sort()

    def _group_documents(self, node: Node) -> dict[str, bytes]:
        if self.options.zarr_format == 2:
            return dict(node.documents)
        if node.zarr_format == 3:
            doc = {k: v for k, v in node.doc.items() if k != "consolidated_metadata"}
        else:
            doc = {"zarr_format": 3, "node_type": "group", "attributes": node.attributes}
        return {V3_DOC: _json_bytes(doc)}


def _compressor_option(compressors: tuple[dict[str, Any], ...], zarr_format: int) -> str | None:
    """``--compressor`` for these codecs: None for the default, "?" when none says them."""
    if compressors == _compressor_json(DEFAULT_COMPRESSORS, zarr_format):
        return None
    if not compressors:
        return "none"
    if len(compressors) == 1:
        codec = compressors[0]
        name = codec.get("name", codec.get("id"))
        level = (codec.get("configuration") or codec).get("level")
        if name in ("zstd", "gzip") and isinstance(level, int):
            return f"{name}:{level}"
    return "?"


# -- verify -------------------------------------------------------------------


def _verify(
    src: StoreHandle, dst: StoreHandle, conversion: _Conversion, report: ConvertReport
) -> None:
    """Compare every converted and copied array element by element, through zarr-python."""
    import zarr

    skipped: dict[str, list[Index]] = {}
    for problem in report.skipped:
        if problem.chunk is not None:  # always: a skipped chunk has its index
            skipped.setdefault(problem.array, []).append(problem.chunk)
    paths = [job.path for job in conversion.jobs] + [node.path for node in conversion.copies]
    plans = {job.path: job.source for job in conversion.jobs}
    for path in paths:
        plan = plans.get(path)  # None for a copied array
        try:
            a = zarr.open_array(store=src.store, path=path, mode="r")
            b = zarr.open_array(store=dst.store, path=path, mode="r")
        except Exception as exc:  # noqa: BLE001 - zarr's reason, as a difference found
            report.mismatches.append(f"{path or '/'}: cannot be opened: {_one_line(exc)}")
            continue
        if a.shape != b.shape:
            report.mismatches.append(f"{path or '/'}: shape {a.shape} became {b.shape}")
            continue
        step = b.chunks if b.ndim else ()
        for index in np.ndindex(*[math.ceil(s / c) for s, c in zip(a.shape, step)]):
            region = tuple(
                slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(index, step, a.shape)
            )
            try:
                x, y = np.asarray(a[region]), np.asarray(b[region])
            except Exception as exc:  # noqa: BLE001 - a chunk zarr cannot read is a difference
                report.mismatches.append(
                    f"{path or '/'}: elements {_show(region)} cannot be read: {_one_line(exc)}"
                )
                continue
            mask = _skipped_mask(plan, skipped.get(path, ()), region, x.shape)
            if not _equal(x, y, mask, "" if plan is None else plan.fill):
                report.mismatches.append(f"{path or '/'}: elements differ in {_show(region)}")
    report.verified = not report.mismatches


def _skipped_mask(
    plan: ArrayPlan | None,
    chunks: Sequence[Index],
    region: tuple[slice, ...],
    shape: tuple[int, ...],
) -> npt.NDArray[np.bool_]:
    """True where a skipped source chunk lies inside ``region`` (none in a copied array)."""
    mask = np.zeros(shape, bool)
    if plan is None:
        return mask
    for chunk in chunks:
        target, _ = plan.meta.chunk_region(chunk)
        inner = tuple(
            slice(max(t.start, r.start) - r.start, max(min(t.stop, r.stop) - r.start, 0))
            for t, r in zip(target, region)
        )
        mask[inner] = True
    return mask


def _equal(
    x: npt.NDArray[Any], y: npt.NDArray[Any], mask: npt.NDArray[np.bool_], fill: str
) -> bool:
    """Whether ``x`` and ``y`` hold the same elements; ``fill`` in ``y`` where ``mask``."""
    if x.dtype.kind in "UTO" or y.dtype.kind in "UTO":
        x, y = x.astype(object), y.astype(object)
        if mask.any():
            if not all(v == fill for v in y[mask].tolist()):
                return False
            return bool(x[~mask].tolist() == y[~mask].tolist())
        return bool(x.tolist() == y.tolist())  # tolist: Python objects (a scalar when 0-d)
    return np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")


def _one_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _show(region: tuple[slice, ...]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in region) + "]"
