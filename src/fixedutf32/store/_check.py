"""``check``: every fixed_length_utf32 array of a store, metadata and chunks."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ._dest import RECORD
from ._layout import FIXED, ArrayPlan, Node, data_type_of
from ._plans import Problem, count, plan_nodes, source_nodes
from ._run import StoreRef, Task, close_scheduler, open_scheduler, run_with_progress
from ._stores import StoreError, StoreHandle, open_handle, spec_of
from ._validate import KeyCheck, check_keys

if TYPE_CHECKING:
    import distributed

__all__ = ["Problem", "ArrayReport", "CheckReport", "check"]


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
        verdict = "clean" if self.ok else count(len(self.problems), "problem")
        if len(self.problems) >= self.max_errors:
            verdict += f" (stopped at --max-errors {self.max_errors})"
        lines.append(
            f"{verdict}: {count(len(self.arrays), 'array')} checked, {len(self.skipped)} skipped, "
            f"{count(self.chunks_unchecked, 'chunk')} left unchecked"
        )
        return "\n".join(lines)


def _check_max_errors(max_errors: object) -> int:
    if type(max_errors) is not int or max_errors < 1:
        raise ValueError(f"max_errors must be a positive int, got {max_errors!r}")
    return max_errors


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
        plans = _plan(report, source_nodes(handle, path, incomplete=True), _finish(handle))
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
    planned = plan_nodes(nodes, finish)
    report.problems.extend(planned.problems)
    report.groups.extend(node.path for node in planned.groups)
    plans = []
    for node, plan in planned.arrays:
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
