"""``check``: every fixed_length_utf32 array of a store, metadata and chunks."""
# Also reports links leading out (not read unless follow_links) and leftovers (keys no reader looks
# at), apart from the data's problems. A nested destination's claim is an incomplete problem, never
# a leftover: removing it would let a second conversion in while one writes.

from __future__ import annotations

import json
import os
import posixpath
import shlex
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .._source.files import is_within
from ._arrays import (
    FIXED,
    ArrayPlan,
    Link,
    Node,
    data_type_of,
    link_reason,
    local_root,
    outside_links,
    real_root,
)
from ._claim import CLAIM_SUFFIX, is_claim
from ._dest import RECORD, is_bookkeeping, is_partial
from ._keys import key_problem
from ._plans import Problem, check_key_path, check_store_arg, count, plan_nodes, source_nodes
from ._run import StoreRef, Task, close_scheduler, open_scheduler, run_with_progress
from ._stores import StoreError, StoreHandle, open_handle, spec_of
from ._validate import KeyCheck, check_keys

if TYPE_CHECKING:
    import distributed

__all__ = ["Problem", "ArrayReport", "CheckReport", "Leftover", "check"]


@dataclass
class Leftover:
    """A key ``check`` found that no reader of the store looks at.

    Not a problem of the data (every array reads the same without it), but
    space taken and a sign of an interrupted write.

    Attributes
    ----------
    key : str
        The store key.
    node : str
        The group or array it lies in (``""``: the root).
    reason : str
        Why it is a leftover: a partial write, not a chunk key of the
        array's grid, or a key in a group that is no metadata document.
    nbytes : int or None
        Its size, where the store says it without a read (local stores).
    removed : bool
        Whether ``remove_leftovers`` deleted it.
    """

    key: str
    node: str
    reason: str
    nbytes: int | None = None
    removed: bool = False

    def __str__(self) -> str:
        done = "removed " if self.removed else ""
        return f"{done}leftover {self.key}: {self.reason}"


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
    leftovers : list of Leftover
        Keys no reader looks at, in key order (all of them: ``max_errors``
        does not bound this list).
    remove_command : str or None
        The command that removes the leftovers listed (None when there
        are none, or the store was passed as an object).
    """

    store: str
    path: str
    arrays: list[ArrayReport] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    max_errors: int = 100
    chunks_unchecked: int = 0
    leftovers: list[Leftover] = field(default_factory=list)
    remove_command: str | None = None

    @property
    def ok(self) -> bool:
        """True when no problem was found and no leftover is left in the store."""
        return not self.problems and all(item.removed for item in self.leftovers)

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
            "leftovers": [asdict(item) for item in self.leftovers],
            "remove_command": self.remove_command,
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
        lines.extend(str(item) for item in self.leftovers)
        verdict = "clean" if not self.problems else count(len(self.problems), "problem")
        if len(self.problems) >= self.max_errors:
            verdict += f" (stopped at --max-errors {self.max_errors})"
        lines.append(
            f"{verdict}: {count(len(self.arrays), 'array')} checked, {len(self.skipped)} skipped, "
            f"{count(self.chunks_unchecked, 'chunk')} left unchecked"
        )
        left = [item for item in self.leftovers if not item.removed]
        removed = len(self.leftovers) - len(left)
        if removed:
            lines.append(f"{count(removed, 'leftover')} removed")
        if left:
            nbytes = sum(item.nbytes or 0 for item in left)
            how = (
                f"remove them with: {self.remove_command}"
                if self.remove_command is not None
                else "remove them with check(store, remove_leftovers=True)"
            )
            lines.append(
                f"{count(len(left), 'leftover')} ({nbytes} bytes) that no reader looks at, "
                f"not data; {how}"
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
    follow_links: bool = False,
    remove_leftovers: bool = False,
    storage_options: dict[str, Any] | None = None,
) -> CheckReport:
    """Check every fixed_length_utf32 array of a Zarr store: metadata and chunks.

    Walks the hierarchy at ``path`` (Zarr V2 and V3, compressed and sharded
    arrays), checks each array's metadata against the spec, reads every
    stored chunk, undoes its codecs and checks every code unit.  Nothing is
    written (``remove_leftovers`` aside).

    In a local store, a symbolic link that resolves outside the store is a
    ``link`` problem and is not read (``follow_links`` reads it); links
    inside the store are read as usual.  Keys no reader looks at (a killed
    write's ``*.partial`` files, keys that are no chunk of their array's
    grid, stray files in a group) are :class:`Leftover` entries of the
    report, apart from its problems; they too make ``report.ok`` False.
    A conversion's claim on a destination nested in the store is an
    ``incomplete`` problem instead, and ``remove_leftovers`` leaves it.

    Parameters
    ----------
    store : str or os.PathLike or zarr.abc.store.Store
        A local directory, a ``.zip`` file, a URL zarr-python opens through
        fsspec (``memory://``, ``s3://``...), or an open zarr store.
    path : str
        The group or array to check inside the store; ``""`` is the root.
        A key path: segments separated by ``/``, none empty, ``.`` or
        ``..`` (nothing outside the store is checked).
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
    follow_links : bool
        Read symbolic links that lead outside the store as if their
        targets were in it, instead of reporting them.
    remove_leftovers : bool
        After the check, delete the leftovers it lists, and nothing else:
        each one a key inside the store (a link is removed, not its
        target); the report marks each one removed.  Refused for ``.zip``
        stores and read-only store objects.
    storage_options : dict, optional
        For a URL ``store``: fsspec's options (``endpoint_url``, ``key``,
        ``secret``...), as zarr-python takes them; Dask workers reopen the
        URL with them.  Without them credentials come from the environment.

    Returns
    -------
    CheckReport
        A new report; ``report.ok`` is True when nothing was found (and
        every leftover, if any, was removed).

    Raises
    ------
    StoreError
        When the store cannot be opened or is an empty string, ``path`` is
        not a path inside the store, nothing is at ``path``, ``path`` is an
        array of another data type, or ``remove_leftovers`` cannot delete
        from this store.
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
    check_store_arg(store, "store")
    path = check_key_path(path)
    threads, client, cluster = open_scheduler(scheduler, threads)
    handle = None
    try:
        handle = open_handle(store, "r", storage_options)
        if remove_leftovers:
            _check_removable(handle)
        report = CheckReport(handle.name, path, max_errors=max_errors)
        links = [] if follow_links else outside_links(handle, path)
        skip = frozenset(link.key for link in links)
        root = local_root(handle)
        # Files are read only inside the store unless links are followed:
        # a link made after the listing above is refused as it is opened.
        within = None if follow_links or root is None else real_root(root)
        nodes = (
            []
            if path in skip
            else source_nodes(handle, path, incomplete=True, skip=skip, within=within)
        )
        report.problems.extend(_link_problem(link, nodes, handle) for link in links)
        plans, others = _plan(report, nodes, _finish(handle), within)
        stored = _leftovers(report, nodes, plans + others, handle, skip)
        ref = spec_of(handle, "source") if client is not None else handle
        _run_check(report, plans, stored, ref, threads, client, progress)
        report.problems.sort(key=Problem.sort_key)
        if report.leftovers:
            report.remove_command = _remove_command(handle, path, follow_links)
        if remove_leftovers:
            _remove(handle, report.leftovers)
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


def _plan(
    report: CheckReport, nodes: Sequence[Node], finish: str | None, within: str | None
) -> tuple[list[ArrayPlan], list[ArrayPlan | Node]]:
    """The plans of the arrays checked, and the arrays skipped (their plan, else their node)."""
    planned = plan_nodes(nodes, finish, within)
    report.problems.extend(planned.problems)
    report.groups.extend(node.path for node in planned.groups)
    plans = []
    others: list[ArrayPlan | Node] = []
    for node, plan in planned.arrays:
        if plan is None or plan.kind != FIXED:
            report.skipped.append({"path": node.path, "data_type": data_type_of(node)})
            others.append(node if plan is None else plan)
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
                plan.per_shard is not None,
                plan.chunk_count,
                longest=len(meta.fill_value),
            )
        )
    return plans, others


def _owner(key: str, nodes: Sequence[Node]) -> str:
    """The path of the deepest node ``key`` lies in (``""``: the root)."""
    paths = {node.path for node in nodes}
    where = posixpath.dirname(key)
    while where and where not in paths:
        where = posixpath.dirname(where)
    return where


def _link_problem(link: Link, nodes: Sequence[Node], handle: StoreHandle) -> Problem:
    return Problem("link", _owner(link.key, nodes), link_reason(link, handle), link.key)


# -- leftovers -----------------------------------------------------------------------


def _nbytes(root: str | None, key: str) -> int | None:
    """A local key's size (``lstat``: a link's own), without reading it; None elsewhere."""
    if root is None:
        return None
    try:
        return os.lstat(os.path.join(root, key)).st_size
    except OSError:
        return None


def _leftovers(
    report: CheckReport,
    nodes: Sequence[Node],
    arrays: Sequence[ArrayPlan | Node],
    handle: StoreHandle,
    skip: frozenset[str],
) -> dict[str, list[tuple[int, ...]]]:
    """Find the leftovers into ``report``; return the chunk keys each planned array holds."""
    root = local_root(handle)
    partial = "a partial write (what a write killed before its rename leaves)"
    found: list[Leftover] = []
    stored: dict[str, list[tuple[int, ...]]] = {}
    for node in nodes:
        for key in node.keys:
            if not node.path and is_bookkeeping(key):
                continue  # an interrupted conversion: reported as incomplete, as ever
            if is_claim(key):
                report.problems.append(_claim_problem(key))
                continue
            reason = partial if is_partial(key) else "a key in a group that is no metadata document"
            found.append(Leftover(key, node.path, reason, _nbytes(root, key)))
    for array in arrays:
        if isinstance(array, Node):
            # Another data type, not planned: only partial writes are known strays.
            prefix = f"{array.path}/" if array.path else ""
            for key in handle.list_prefix(prefix):
                if is_partial(key) and key not in skip:
                    found.append(Leftover(key, array.path, partial, _nbytes(root, key)))
            continue
        indices, others = array.listed_keys(handle, skip)
        stored[array.path] = indices
        grid = f"grid {list(array.key_grid.grid_shape)} of keys"
        for key in others:
            if is_claim(key):
                report.problems.append(_claim_problem(key))
                continue
            reason = (
                partial
                if is_partial(key)
                else f"not a chunk key of the array's {grid} (shape {list(array.key_meta.shape)})"
            )
            found.append(Leftover(key, array.path, reason, _nbytes(root, key)))
    found.sort(key=lambda item: item.key)
    report.leftovers.extend(found)
    return stored


def _claim_problem(key: str) -> Problem:
    """The ``incomplete`` problem for a conversion's claim found in the store, never a leftover."""
    dest = key[: -len(CLAIM_SUFFIX)]
    return Problem(
        "incomplete",
        dest,
        f"claimed by a conversion into it (its claim is the key {key!r}): one is writing "
        f"it now, or one was killed before it ended; check it when the conversion ends, or, "
        f"if none is running, convert into it again with --resume or --overwrite (either "
        f"takes the claim over) or delete {key!r}",
    )


def _remove_command(handle: StoreHandle, path: str, follow_links: bool) -> str | None:
    if handle.spec is None:
        return None
    words = ["fixedutf32", "check", "--remove-leftovers"]
    if path:
        words += ["--path", path]
    if follow_links:
        words.append("--follow-links")
    return shlex.join([*words, handle.spec])


def _check_removable(handle: StoreHandle) -> None:
    """StoreError before anything is read when leftovers could not be removed from this store."""
    from zarr.storage import ZipStore

    if isinstance(handle.store, ZipStore):
        raise StoreError(
            f"remove_leftovers: {handle.name!r} is a .zip file, whose entries cannot be "
            f"removed one by one; convert it to a new store instead"
        )
    if handle.spec is None and handle.store.read_only:
        raise StoreError(
            f"remove_leftovers: the store {handle.name!r} was opened read-only; pass a "
            f"writable store, or its path or URL"
        )


def _remove(handle: StoreHandle, leftovers: Sequence[Leftover]) -> None:
    """Delete each leftover listed, in the store only, all vetted first (else StoreError)."""
    root = local_root(handle)
    paths = []
    for item in leftovers:
        problem = key_problem(item.key)
        if problem is not None:  # a listed key is a store key: never here
            raise StoreError(
                f"remove_leftovers: refused the key {item.key!r}: it holds {problem}; "
                f"nothing was removed"
            )
        if root is not None:
            paths.append(_inside(root, item.key))
    if root is not None:
        for item, path in zip(leftovers, paths):
            _unlink(path, item.key)
            item.removed = True
        return
    writable = open_handle(handle.spec, "w") if handle.spec is not None else handle
    try:
        for item in leftovers:
            writable.delete(item.key)
            item.removed = True
    finally:
        if writable is not handle:
            writable.close()


def _inside(root: str, key: str) -> str:
    """The path of ``key`` with its directory resolved; StoreError if that is outside the store."""
    real = real_root(root)
    path = os.path.join(root, key)
    parent = os.path.realpath(os.path.dirname(path))
    if not is_within(real, parent):
        raise StoreError(
            f"remove_leftovers: refused {key!r}: its directory resolves to {parent!r}, outside "
            f"the store {real!r}; nothing was removed"
        )
    return os.path.join(parent, os.path.basename(path))


def _unlink(path: str, key: str) -> None:
    """Remove the file at ``path`` (a link itself, never its target); gone already is fine."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise StoreError(f"remove_leftovers: refused {key!r}: it is a directory now")
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StoreError(f"remove_leftovers: cannot remove {key!r}: {exc.strerror}") from None


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
    stored: dict[str, list[tuple[int, ...]]],
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
        keys = stored[plan.path]
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
