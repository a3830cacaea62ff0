"""``check``: every fixed_length_utf32 array of a store, metadata and chunks."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import numpy.typing as npt

from .._checks import ByteView
from .._source import ElementLayout, Scratch, borrowed_scratch, thread_scratch
from ..errors import (
    FixedUTF32Error,
    InvalidCodePointError,
    InvalidUTF8Error,
    MetadataError,
    StringTooLongError,
)
from ._dest import RECORD
from ._layout import FIXED, ArrayPlan, Index, Node, data_type_of, memory_order, plan_array, walk
from ._run import StoreRef, Task, dask_client, default_threads, resolve, run_with_progress
from ._stores import StoreError, StoreHandle, open_handle, spec_of

if TYPE_CHECKING:
    import distributed

__all__ = ["Problem", "ArrayReport", "CheckReport", "check"]


@dataclass
class Problem:
    """One thing wrong in a store.

    Attributes
    ----------
    kind : {"metadata", "incomplete", "chunk", "code_point"}
        ``metadata``: a document breaks the spec or cannot be read;
        ``incomplete``: keys under a path with no metadata document (an
        interrupted write); ``chunk``: a chunk that does not decode (codec
        error, wrong size); ``code_point``: a code unit that is not a
        Unicode scalar value.
    array : str
        Path of the array (or node) in the store.
    message : str
    key : str or None
        The store key of the chunk (the shard, for sharded arrays).
    chunk : tuple of int or None
        The chunk's index in the chunk grid (inner chunks for sharded arrays).
    coordinates : tuple of int or None
        The element's coordinates in the array (``code_point`` problems).
        An element of an edge chunk's padding has coordinates at or past
        the array's shape.
    position : int or None
        Code point position inside the element.
    code_point : int or None
        The offending value.
    """

    kind: str
    array: str
    message: str
    key: str | None = None
    chunk: tuple[int, ...] | None = None
    coordinates: tuple[int, ...] | None = None
    position: int | None = None
    code_point: int | None = None

    def sort_key(self) -> tuple[str, int, tuple[int, ...], tuple[int, ...], int, str]:
        order = {"metadata": 0, "incomplete": 0, "chunk": 1, "code_point": 1}[self.kind]
        return (
            self.array,
            order,
            self.chunk or (),
            self.coordinates or (),
            self.position or 0,
            self.message,
        )

    def __str__(self) -> str:
        """One line in one style: the array, the chunk key (and index), then what is wrong.

        ``names, chunk names/0.0: invalid code point U+D800 ...``;
        ``names: metadata: fill_value: expected ...``; ``/: incomplete: ...``.
        """
        where = f"{self.array or '/'}"
        if self.key is not None:
            where += f", chunk {self.key}"
            if self.chunk is not None and self.coordinates is None:
                where += f" (chunk index {list(self.chunk)})"
        if self.kind in ("metadata", "incomplete"):
            return f"{where}: {self.kind}: {self.message}"
        return f"{where}: {self.message}"


@dataclass
class ArrayReport:
    """What ``check`` found in one fixed_length_utf32 array.

    Attributes
    ----------
    path : str
    zarr_format : int
    shape, chunk_shape : tuple of int
        ``chunk_shape`` is the inner chunk shape of a sharded array.
    length_bytes : int
    endian : str
    sharded : bool
    chunks : int
        Chunks in the grid.
    chunks_present, chunks_missing : int
        Chunks checked that the store holds / does not hold (missing ones
        read as the fill value).
    bytes_read : int
        Bytes read from the store for this array.
    longest : int
        Code points of the longest string seen (fill value included);
        trailing U+0000 is padding and does not count.
    problems : int
        Problems found in this array.
    """

    path: str
    zarr_format: int
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    length_bytes: int
    endian: str
    sharded: bool
    chunks: int
    chunks_present: int = 0
    chunks_missing: int = 0
    bytes_read: int = 0
    longest: int = 0
    problems: int = 0

    @property
    def min_length_bytes(self) -> int:
        """The smallest ``length_bytes`` that holds every string seen (at least 4)."""
        return 4 * max(self.longest, 1)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "min_length_bytes": self.min_length_bytes}


@dataclass
class CheckReport:
    """The result of :func:`check`.

    Attributes
    ----------
    store : str
    path : str
    arrays : list of ArrayReport
        Every fixed_length_utf32 array checked, in hierarchy order.
    skipped : list of dict
        Arrays of other data types (``{"path", "data_type"}``), not checked.
    groups : list of str
        Paths of the groups walked.
    problems : list of Problem
        At most ``max_errors``, sorted by array, chunk and coordinates.
    max_errors : int
    chunks_unchecked : int
        Chunks left unchecked because ``max_errors`` problems were found.
    """

    store: str
    path: str
    arrays: list[ArrayReport] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    max_errors: int = 100
    chunks_unchecked: int = 0

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready values (a new dict)."""
        return {
            "store": self.store,
            "path": self.path,
            "ok": self.ok,
            "arrays": [a.to_dict() for a in self.arrays],
            "skipped": list(self.skipped),
            "groups": list(self.groups),
            "problems": [asdict(p) for p in self.problems],
            "max_errors": self.max_errors,
            "chunks_unchecked": self.chunks_unchecked,
        }

    def to_json(self, indent: int | str | None = None) -> str:
        """The report as JSON text.

        Examples
        --------
        >>> from fixedutf32.store import CheckReport
        >>> CheckReport("memory://x", "").to_json()[:40]
        '{"store": "memory://x", "path": "", "ok"'
        """
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def to_text(self) -> str:
        """The report as lines for a person: arrays, skipped arrays, problems, a summary."""
        lines: list[str] = []
        for a in self.arrays:
            lines.append(
                f"array {a.path or '/'}: V{a.zarr_format} shape {list(a.shape)} chunks "
                f"{list(a.chunk_shape)}{' (sharded)' if a.sharded else ''} length_bytes "
                f"{a.length_bytes} {a.endian}: {a.chunks_present} chunks present, "
                f"{a.chunks_missing} missing, {a.bytes_read} bytes read; longest string "
                f"{a.longest} code points (length_bytes {a.min_length_bytes} would hold every "
                f"string)"
            )
        for s in self.skipped:
            lines.append(f"skipped {s['path'] or '/'}: {s['data_type']}, not fixed_length_utf32")
        lines.extend(str(p) for p in self.problems)
        count = len(self.problems)
        verdict = "clean" if self.ok else f"{count} problem{'s' if count > 1 else ''}"
        if len(self.problems) >= self.max_errors:
            verdict += f" (stopped at --max-errors {self.max_errors})"
        arrays, chunks = len(self.arrays), self.chunks_unchecked
        lines.append(
            f"{verdict}: {arrays} array{'' if arrays == 1 else 's'} checked, "
            f"{len(self.skipped)} skipped, "
            f"{chunks} chunk{'' if chunks == 1 else 's'} left unchecked"
        )
        return "\n".join(lines)


def chunk_problem(plan: ArrayPlan, key: str, index: Index, exc: Exception) -> Problem:
    """The report's Problem for an error met reading or decoding one chunk.

    The one place where the kernels' errors, whose indices count elements
    from the start of the chunk, become array coordinates.

    Parameters
    ----------
    plan : ArrayPlan
    key : str
        The chunk's store key (the shard's, for sharded arrays).
    index : tuple of int
        The chunk's grid index.
    exc : Exception
        :class:`~fixedutf32.errors.InvalidCodePointError`,
        :class:`~fixedutf32.errors.InvalidUTF8Error` or
        :class:`~fixedutf32.errors.StringTooLongError` from a kernel; any
        other error (a corrupt chunk, a wrong size) is a ``chunk`` problem
        with its message.

    Returns
    -------
    Problem
    """
    if isinstance(exc, InvalidCodePointError):
        coordinates = plan.coordinates(index, exc.index)
        value = exc.code_point
        kind = "surrogate" if 0xD800 <= value <= 0xDFFF else "above U+10FFFF"
        outside = any(c >= s for c, s in zip(coordinates, plan.meta.shape))
        padding = " (edge chunk padding, outside the array)" if outside else ""
        return Problem(
            "code_point",
            plan.path,
            f"invalid code point U+{value:04X} ({kind}) at element {list(coordinates)}, "
            f"position {exc.position}{padding}; expected a Unicode scalar value",
            key,
            index,
            coordinates,
            exc.position,
            value,
        )
    if isinstance(exc, InvalidUTF8Error):
        coordinates = plan.coordinates(index, exc.index)
        return Problem(
            "code_point",
            plan.path,
            f"invalid UTF-8 at element {list(coordinates)}, byte {exc.byte_offset}: {exc.reason}",
            key,
            index,
            coordinates,
        )
    if isinstance(exc, StringTooLongError):
        coordinates = plan.coordinates(index, exc.index)
        return Problem(
            "chunk",
            plan.path,
            f"string at element {list(coordinates)} has {exc.length} code points; "
            f"expected at most {exc.capacity} (length_bytes {4 * exc.capacity})",
            key,
            index,
            coordinates,
        )
    return Problem("chunk", plan.path, str(exc), key, index)


def _code_point_problems(
    plan: ArrayPlan, key: str, index: Index, data: ByteView, budget: int
) -> list[Problem]:
    """Every invalid code unit of a chunk known to hold one, up to ``budget``."""
    elements = _elements(plan)
    return [chunk_problem(plan, key, index, e) for e in elements.invalid_units(data, budget)]


def _elements(plan: ArrayPlan) -> ElementLayout:
    assert plan.decoder is not None  # a fixed_length_utf32 array's plan has its decoder
    return plan.decoder.elements


def _longest(plan: ArrayPlan, index: Index, lengths: npt.NDArray[np.intp]) -> int:
    meta = plan.meta
    if lengths.size == 0:
        return 0
    if not plan.grid.is_edge(index):
        return int(lengths.max())
    _, source = plan.grid.region(index)
    inside = lengths.reshape(meta.chunk_shape, order=memory_order(meta))[source]
    return int(inside.max()) if inside.size else 0


def _check_chunk(
    plan: ArrayPlan, key: str, index: Index, data: ByteView, budget: int
) -> tuple[list[Problem], int]:
    """(problems, longest) for one decoded chunk of exactly :meth:`ArrayPlan.chunk_nbytes`."""
    elements = _elements(plan)
    lengths = thread_scratch().intp("lengths", plan.grid.chunk_elements)
    try:
        elements.longest(data, lengths)
        problems: list[Problem] = []
    except InvalidCodePointError:
        problems = _code_point_problems(plan, key, index, data, budget)
        elements.longest(data, lengths, validate=False)
    return problems, _longest(plan, index, lengths)


class KeyLongest(TypedDict):
    """The longest string under one key, and the problems met reading it."""

    path: str
    chunks: int
    longest: int
    problems: list[Problem]


class KeyCheck(KeyLongest):
    """What :func:`check_key` found under one key."""

    present: int
    missing: int
    bytes_read: int


class _ChunkCheck:
    """Checks the chunks of one key as they are read: each block validated while in cache.

    The string lengths of a chunk's blocks go to ``scratch``; a
    block holding an invalid code unit is only marked, and its chunk is
    searched for every invalid unit (up to the budget) once it is whole.
    """

    def __init__(
        self, plan: ArrayPlan, result: KeyCheck, max_errors: int, scratch: Scratch
    ) -> None:
        self.plan, self.result, self.max_errors = plan, result, max_errors
        self.key = ""  # the key being read
        elements = _elements(plan)
        self.elements = elements
        self.length_bytes = elements.length_bytes
        self.lengths = scratch.intp("lengths", plan.grid.chunk_elements)
        self.longest = 0
        self.bad = False

    def block(self, index: Index, block: memoryview, offset: int) -> None:
        if not self.bad and not self.plan.grid.is_edge(index):
            # Only the longest string is kept: no lengths are written.
            try:
                self.longest = max(self.longest, self.elements.longest_string(block))
                return
            except InvalidCodePointError:
                self.bad = True
        # An edge chunk's padding is left out of its longest string: each
        # length is kept (and a bad block's, counted without checking).
        start = offset // self.length_bytes
        lengths = self.lengths[start : start + block.nbytes // self.length_bytes]
        try:
            self.longest = max(self.longest, self.elements.longest(block, lengths))
        except InvalidCodePointError:
            self.bad = True
            self.elements.longest(block, lengths, validate=False)

    def chunk(self, index: Index, data: memoryview | None, error: FixedUTF32Error | None) -> None:
        result, plan = self.result, self.plan
        bad, longest = self.bad, self.longest
        self.bad, self.longest = False, 0
        problems = result["problems"]
        budget = self.max_errors - len(problems)
        result["present"] += 1  # stored, whether it reads or not
        if data is None:
            assert error is not None  # read_key gives each chunk's data or an error
            if budget > 0:
                problems.append(chunk_problem(plan, self.key, index, error))
            return
        if bad and budget > 0:
            problems.extend(_code_point_problems(plan, self.key, index, data, budget))
        if plan.grid.is_edge(index):
            longest = _longest(plan, index, self.lengths)
        result["longest"] = max(result["longest"], longest)


def check_keys(
    ref: StoreRef, plan: ArrayPlan, key_indices: Sequence[Index], max_errors: int
) -> KeyCheck:
    """Check the chunks stored under some keys of one array (a task; threads or Dask workers).

    A task covers several keys so that its cost is the reading, not the
    scheduling; it stops after the key at which ``max_errors`` problems are
    found.

    Returns
    -------
    dict
        ``path``, ``chunks`` (in the keys checked), ``present``,
        ``missing``, ``bytes_read``, ``longest`` and ``problems`` (at most
        ``max_errors``).
    """
    handle = resolve(ref)
    result: KeyCheck = {
        "path": plan.path,
        "chunks": 0,
        "present": 0,
        "missing": 0,
        "bytes_read": 0,
        "longest": 0,
        "problems": [],
    }
    with borrowed_scratch() as scratch:
        checker = _ChunkCheck(plan, result, max_errors, scratch)
        for key_index in key_indices:
            chunks = plan.chunks_in_key(key_index)
            present = result["present"]
            checker.key = plan.key(key_index)
            nread = plan.read_key(
                handle, key_index, checker.chunk, on_block=checker.block, scratch=scratch
            )
            result["chunks"] += chunks
            result["bytes_read"] += nread or 0
            result["missing"] += chunks - min(result["present"] - present, chunks)
            if len(result["problems"]) >= max_errors:
                break
    return result


def check_key(ref: StoreRef, plan: ArrayPlan, key_index: Index, max_errors: int) -> KeyCheck:
    """:func:`check_keys` of one key."""
    return check_keys(ref, plan, (key_index,), max_errors)


def _source_nodes(
    handle: StoreHandle,
    path: str,
    strings_only: bool = True,
    max_depth: int | None = None,
    incomplete: bool = False,
) -> list[Node]:
    """The hierarchy at ``path``; StoreError when nothing usable is there.

    With ``strings_only``, ``path`` may not be an array of another data type;
    ``max_depth`` as for :func:`~fixedutf32.store._layout.walk`; with
    ``incomplete``, keys at ``path`` without a metadata document are one
    ``"incomplete"`` node rather than an error.
    """
    nodes = walk(handle, path, max_depth)
    where = f"at path {path!r} in {handle.name}" if path else f"in {handle.name}"
    if not nodes and incomplete and handle.list_dir(path):
        # Keys but no metadata at the top: an interrupted write, reported as
        # such (check), not as a store that is not there.
        return [Node(path, "incomplete")]
    if not nodes:
        raise StoreError(f"no Zarr group or array {where} (no zarr.json, .zarray or .zgroup)")
    root = nodes[0]
    if strings_only and root.kind == "array" and root.error is None and data_type_of(root) != FIXED:
        raise StoreError(f"the array {where} holds {data_type_of(root)}, not fixed_length_utf32")
    return nodes


def _check_max_errors(max_errors: object) -> int:
    if type(max_errors) is not int or max_errors < 1:
        raise ValueError(f"max_errors must be a positive int, got {max_errors!r}")
    return max_errors


def open_scheduler(
    scheduler: str | None, threads: int | None
) -> tuple[int, distributed.Client | None, distributed.LocalCluster | None]:
    """(threads, client, cluster) for ``scheduler`` None/"threads", "local" or an address."""
    threads = default_threads(threads)
    if scheduler in (None, "threads"):
        return threads, None, None
    if not isinstance(scheduler, str):
        raise ValueError(
            f"scheduler must be None, 'threads', 'local' or a Dask address, got {scheduler!r}"
        )
    client, cluster = dask_client(scheduler)
    return threads, client, cluster


def close_scheduler(
    client: distributed.Client | None, cluster: distributed.LocalCluster | None
) -> None:
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


def check(
    store: str | os.PathLike[str] | Any,
    path: str = "",
    *,
    threads: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    max_errors: int = 100,
) -> CheckReport:
    """Check every fixed_length_utf32 array of a Zarr store: metadata and chunks.

    Walks the hierarchy at ``path`` (Zarr V2 and V3, compressed and sharded
    arrays), checks each array's metadata against the spec, reads every
    stored chunk, undoes its codecs and checks every code unit.  Nothing is
    written.

    Parameters
    ----------
    store : str or os.PathLike or zarr.abc.store.Store
        A local directory, a ``.zip`` file, a URL zarr-python opens through
        fsspec (``memory://``, ``s3://``...), or an open zarr store.
    path : str
        The group or array to check inside the store; ``""`` is the root.
    threads : int, optional
        Worker threads (default: the number of CPUs).  The kernels release
        the GIL, so chunks are checked in parallel.
    scheduler : {None, "threads", "local"} or str, optional
        ``"local"`` starts a ``distributed.LocalCluster`` (2 worker
        processes); another string is the address of a Dask scheduler
        (``"tcp://host:8786"``).  Needs the ``dask`` extra; ``store`` must
        then be a path or URL every worker can open.
    progress : bool
        Show a progress bar on stderr (tqdm if installed, else plain lines).
    max_errors : int
        Stop after this many problems; the report says how many chunks were
        left unchecked.

    Returns
    -------
    CheckReport
        A new report; ``report.ok`` is True when nothing was found.

    Raises
    ------
    StoreError
        When the store cannot be opened, nothing is at ``path``, or ``path``
        is an array of another data type.
    ValueError
        For an invalid ``threads``, ``scheduler`` or ``max_errors``.

    Examples
    --------
    >>> import numpy as np, zarr, fixedutf32.store
    >>> a = zarr.create_array("memory://check-doc", shape=(4,), chunks=(2,), dtype="<U3",
    ...                       zarr_format=2)
    >>> a[:] = np.array(["a", "bc", "", "d"])
    >>> report = fixedutf32.store.check("memory://check-doc")
    >>> report.ok, report.arrays[0].longest, report.arrays[0].min_length_bytes
    (True, 2, 8)
    """
    max_errors = _check_max_errors(max_errors)
    threads, client, cluster = open_scheduler(scheduler, threads)
    handle = None
    try:
        handle = open_handle(store, "r")
        report = CheckReport(handle.name, path, max_errors=max_errors)
        plans = _plan(report, _source_nodes(handle, path, incomplete=True), _finish(handle))
        ref = spec_of(handle, "source") if client is not None else handle
        _run_check(report, plans, handle, ref, threads, client, progress)
        report.problems.sort(key=Problem.sort_key)
        return report
    finally:
        if handle is not None:
            handle.close()
        close_scheduler(client, cluster)


def _finish(handle: StoreHandle) -> str | None:
    """The command that finishes the interrupted conversion into this store, if it is one."""
    try:
        raw = handle.get(RECORD)
        finish = None if raw is None else json.loads(bytes(raw)).get("finish")
    except (OSError, ValueError, AttributeError, StoreError):
        return None  # no record, or not one this package wrote: nothing to suggest
    return finish if isinstance(finish, str) else None


def _plan(report: CheckReport, nodes: Sequence[Node], finish: str | None = None) -> list[ArrayPlan]:
    plans = []
    for node in nodes:
        if node.kind == "incomplete":
            why = (
                "an interrupted conversion; finish it with: " + finish
                if finish is not None
                else "an array or group whose metadata was never written (an interrupted "
                "write or conversion?)"
            )
            report.problems.append(
                Problem(
                    "incomplete",
                    node.path,
                    "chunks without metadata (keys but no zarr.json, .zarray or .zgroup): " + why,
                )
            )
        elif node.kind == "group":
            report.groups.append(node.path)
            if node.error:
                report.problems.append(Problem("metadata", node.path, node.error))
        else:
            try:
                plan = plan_array(node)
            except MetadataError as exc:
                report.problems.append(Problem("metadata", node.path, str(exc)))
                continue
            if plan is None or plan.kind != FIXED:
                report.skipped.append({"path": node.path, "data_type": data_type_of(node)})
                continue
            meta = plan.meta
            plans.append(plan)
            report.arrays.append(
                ArrayReport(
                    plan.path,
                    plan.zarr_format,
                    meta.shape,
                    meta.chunk_shape,
                    meta.data_type.length_bytes,
                    meta.endian,
                    plan.shard is not None,
                    plan.chunk_count,
                    longest=len(meta.fill_value),
                )
            )
    return plans


# Chunk bytes a task of check reads at least, unless that leaves threads idle.
_TASK_BYTES = 16 << 20


def _keys_per_task(keys: int, key_nbytes: int, threads: int) -> int:
    """Keys per task: about :data:`_TASK_BYTES` of chunks, and four tasks per thread at least."""
    by_size = max(1, _TASK_BYTES // max(key_nbytes, 1))
    by_threads = max(1, -(-keys // (4 * threads)))
    return max(1, min(by_size, by_threads, 1024))


def _run_check(
    report: CheckReport,
    plans: list[ArrayPlan],
    handle: StoreHandle,
    ref: StoreRef,
    threads: int,
    client: distributed.Client | None,
    progress: bool,
) -> None:
    by_path = {a.path: a for a in report.arrays}
    tasks: list[Task[KeyCheck]] = []
    # Work from the keys the store holds (listed once per array): a chunk no
    # key holds is missing, counted without a task or a store lookup.
    for plan in plans:
        keys = plan.stored_keys(handle)
        counts = [plan.chunks_in_key(k) for k in keys]
        by_path[plan.path].chunks_missing += plan.chunk_count - sum(counts)
        per_task = _keys_per_task(len(keys), plan.chunk_nbytes() * max(counts, default=1), threads)
        for start in range(0, len(keys), per_task):
            chunks = sum(counts[start : start + per_task])
            tasks.append(
                (
                    check_keys,
                    (ref, plan, keys[start : start + per_task], report.max_errors),
                    chunks,
                    chunks * plan.chunk_nbytes(),
                )
            )
    total_chunks = sum(t[2] for t in tasks)
    checked = 0

    def consume(result: KeyCheck) -> bool:
        nonlocal checked
        array = by_path[result["path"]]
        checked += result["chunks"]
        array.chunks_present += result["present"]
        array.chunks_missing += result["missing"]
        array.bytes_read += result["bytes_read"]
        array.longest = max(array.longest, result["longest"])
        room = report.max_errors - len(report.problems)
        found = result["problems"][: max(room, 0)]
        array.problems += len(found)
        report.problems.extend(found)
        return len(report.problems) < report.max_errors

    if len(report.problems) < report.max_errors:
        run_with_progress(tasks, consume, "check", threads=threads, client=client, show=progress)
    report.chunks_unchecked = total_chunks - checked
