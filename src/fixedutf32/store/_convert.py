"""``convert``: a new store with the string arrays rewritten, nothing lost."""
# Writes go chunks first, then each array's document, then groups', the root's last, so an
# interrupted conversion is visibly incomplete (zarr opens nothing at the root).

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from .._arguments import check_endian, check_length_bytes
from ..errors import InvalidChunkError
from ._arrays import (
    FIXED,
    METADATA_NAMES,
    STRING,
    V3_DOC,
    ArrayPlan,
    Node,
    data_type_of,
    join,
)
from ._conversions import Conversion, changes, check_fits, json_bytes, plan_conversion
from ._dest import (
    RECORD,
    Destination,
    check_apart,
    check_dest_options,
    is_bookkeeping,
    keys_under,
    open_dest,
    remove_partial_files,
)
from ._keys import check_safe_key
from ._options import (
    DEFAULT_COMPRESSORS,
    ConvertOptions,
    check_chunk_shape,
    check_to,
    compressor_json,
)
from ._plans import (
    Problem,
    SourcePlans,
    check_store_arg,
    count,
    plan_nodes,
    source_nodes,
    source_within,
)
from ._regrid import convert_region, region_keys
from ._resume import (
    FLUSH_SECONDS,
    Journal,
    JournalEntry,
    check_record,
    confirmed,
    documents_written,
    finish_command,
    record,
)
from ._run import StoreRef, Task, close_scheduler, open_scheduler, run_with_progress
from ._stores import (
    StoreError,
    StoreHandle,
    check_storage_options,
    dask_spec,
    open_handle,
    spec_of,
)
from ._transform import KeyConversion, convert_key, copy_key, journaled, longest_key
from ._validate import KeyLongest, check_key
from ._verify import compare_stores

if TYPE_CHECKING:
    import distributed

__all__ = ["ConvertReport", "convert"]

# The deepest hierarchy convert writes: zarr-python's LocalStore creates a
# chunk's directories recursively, one Python frame per level.
MAX_DEPTH = 256


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
                f"{count(a['chunks_written'], 'chunk')} written, {a['chunks_kept']} kept, "
                f"{a['chunks_missing']} missing (fill value)"
                + (f", {deleted} deleted (stale)" if deleted else "")
            )
        lines.extend(f"copied {p or '/'} as it is" for p in self.copied)
        lines.extend(f"skipped (fill value written): {p}" for p in self.skipped)
        lines.extend(f"verify: {m}" for m in self.mismatches)
        skipped = self.skipped_chunks
        parts = [
            f"{count(len(self.arrays), 'array')} converted",
            f"{count(len(self.copied), 'array')} copied unchanged "
            f"({count(self.keys_copied, 'chunk key')})",
            f"{count(len(self.groups), 'group')} written",
        ]
        summary = ", ".join(parts) + f": {self.bytes_read} bytes read, {self.bytes_written} written"
        if skipped:
            summary += f"; {count(skipped, 'invalid chunk')} skipped (they read as the fill value)"
        if self.verified is True:
            summary += "; verified element by element" + (
                f", except {count(skipped, 'skipped chunk')}" if skipped else ""
            )
        elif self.verified is False:
            summary += "; VERIFY FOUND DIFFERENCES"
        lines.append(summary)
        return "\n".join(lines)


# -- the whole conversion -----------------------------------------------------


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
    follow_links: bool = False,
    storage_options: dict[str, Any] | None = None,
    dest_storage_options: dict[str, Any] | None = None,
    on_progress: Callable[[int, int], object] | None = None,
    journal_seconds: float = FLUSH_SECONDS,
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
    follow_links : bool
        Read symbolic links of a local source that lead outside it as if
        their targets were in it.  Without it such a source is refused
        (StoreError, nothing written); links inside the source are read as
        usual.
    storage_options, dest_storage_options : dict, optional
        For a URL ``source`` and a URL ``dest``: fsspec's options
        (``endpoint_url``, ``key``, ``secret``...), as zarr-python takes
        them, used for every access to that store: reading and writing,
        the destination's claim, ``verify``, and Dask workers, which reopen
        each URL with its options (sent with the tasks).  Without them
        credentials come from the environment.  They are not written into
        the destination's record nor into the command printed to resume
        an interrupted conversion: pass them again with ``resume=True``.
    on_progress : callable, optional
        Called in the calling process as ``on_progress(done, total)`` after
        each task of the writing pass (the chunks under one source key, or
        one copied key), with the chunks done so far and in all, before the
        task is journaled.  The next results wait for it (with
        ``threads=1``, the next task too); an exception it raises stops the
        conversion and propagates (a KeyboardInterrupt says what was written,
        as Ctrl-C does).
    journal_seconds : float
        The longest a finished task waits to be journaled in a directory or
        URL destination; 0 journals every task at once.  A run killed
        without cleanup (SIGKILL, a crash) is resumed from what was
        journaled: at most the last ``journal_seconds`` of work is done
        again.  Smaller values write more, smaller journal pieces.

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
        For invalid arguments, and for ``storage_options`` or
        ``dest_storage_options`` given with a store that is not a URL.

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
    check_to(to, zarr_format)
    check_endian(endian)
    if length_bytes is not None and length_bytes != "auto":
        length_bytes = check_length_bytes(length_bytes)
    codecs_json = compressor_json(compressors, zarr_format)
    chunks = check_chunk_shape(chunks)
    if on_progress is not None and not callable(on_progress):
        raise ValueError(f"on_progress must be a callable or None, got {on_progress!r}")
    if (
        isinstance(journal_seconds, bool)
        or not isinstance(journal_seconds, int | float)
        or not 0 <= journal_seconds < math.inf
    ):
        raise ValueError(
            f"journal_seconds must be a number of seconds >= 0, got {journal_seconds!r}"
        )
    options = ConvertOptions(
        to, zarr_format, endian, length_bytes, codecs_json, chunks, resume, skip_invalid
    )
    check_storage_options(source, storage_options)
    check_dest_options(dest, dest_storage_options)
    threads, client, cluster = open_scheduler(scheduler, threads)
    src: StoreHandle | None = None
    dst: StoreHandle | None = None
    target: Destination | None = None
    try:
        check_store_arg(source, "source")
        check_store_arg(dest, "destination")
        src = open_handle(source, "r", storage_options)
        within = None if follow_links else source_within(src)
        nodes = source_nodes(src, "", strings_only=False, max_depth=MAX_DEPTH, within=within)
        converter = _Conversion(src, nodes, options, threads, client, progress, within)
        converter.on_progress, converter.journal_seconds = on_progress, journal_seconds
        converter.plan()  # every refusal before the destination is touched
        if client is not None:
            dask_spec(dest, "destination")
        check_apart(src, dest)  # compared as places, before anything is written or deleted
        target = open_dest(dest, overwrite, resume, dest_storage_options)  # claimed for this run
        dst = target.handle
        report = converter.run(dst)
        target.commit()  # a zip file is complete once closed, and renamed into place
        if verify:
            if dst.spec is not None:
                dst.close()  # a zip file is complete once closed; read back what was written
                dst = open_handle(dst.spec, "r", dst.storage_options)
            try:
                found = compare_stores(
                    src, dst, converter.conversions, converter.copies, report.skipped
                )
            except KeyboardInterrupt:
                raise KeyboardInterrupt(
                    f"interrupted while verifying; the conversion into {dst.name!r} is complete"
                ) from None
            report.mismatches.extend(found)
            report.verified = not report.mismatches
        return report
    except KeyboardInterrupt as exc:
        if exc.args:  # said by run: what was written
            raise
        raise KeyboardInterrupt(
            "interrupted before any chunk was written; run the same command again"
        ) from None
    finally:
        if target is not None:
            target.release()  # an unfinished zip dropped, the claim freed, however this ends
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
        options: ConvertOptions,
        threads: int,
        client: distributed.Client | None,
        progress: bool,
        within: str | None = None,
    ) -> None:
        self.src = src
        self.within = within  # the source's real root files are read in (None: links followed)
        self.src_ref: StoreRef = src if client is None else spec_of(src, "source")
        self.nodes = nodes
        self.options = options
        self.threads, self.client, self.progress = threads, client, progress
        self.report = ConvertReport(src.name, "", options.to)  # dest: set by run
        self.conversions: list[Conversion] = []
        self.copies: list[Node] = []  # arrays copied as they are
        self.copy_keys: dict[str, list[str]] = {}  # their keys (not documents), by path
        self.groups: list[Node] = []
        # convert's arguments of the same names
        self.on_progress: Callable[[int, int], object] | None = None
        self.journal_seconds = FLUSH_SECONDS

    # planning

    def _planned(self) -> SourcePlans:
        """The source's nodes planned; StoreError when any has a metadata problem."""
        planned = plan_nodes(self.nodes, within=self.within)
        if planned.problems:
            raise StoreError(
                f"the source has metadata problems, the first: {planned.problems[0]}; "
                f"run 'fixedutf32 check' on it"
            )
        return planned

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
        planned = self._planned()
        self.groups.extend(planned.groups)
        converting: list[tuple[Node, ArrayPlan]] = []
        for node, plan in planned.arrays:
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
            check_fits(plan, opts.length_bytes, longest[plan.path])
        for node, plan in converting:
            self.conversions.append(plan_conversion(node, plan, longest.get(plan.path, 0), opts))
        for node in self.copies:
            if node.zarr_format == 2 and zarr_format == 3:
                self._migrate(node, None)

    def _check_keys(self) -> None:
        """Refuse a source whose node paths or copied keys could escape the destination."""
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

    def _migrate(self, node: Node, dst: StoreHandle | None) -> None:
        """Write V3 metadata for a copied V2 array by zarr's own migration (None: dry run)."""
        # The dry run goes to a scratch memory store: a failed migration stops before dest is used.
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

    def _tasks(
        self, dst_ref: StoreRef, trusted: dict[str, JournalEntry]
    ) -> list[Task[KeyConversion]]:
        """Every task, each wrapped by :func:`journaled` with what the journal says of it."""
        src_ref = self.src_ref
        tasks: list[Task[KeyConversion]] = []

        def add(task: str, keys: list[str], salt: str, n: int, nbytes: int, *args: Any) -> None:
            wrapped = (task, keys, salt, trusted.get(task), *args)
            tasks.append((journaled, wrapped, n, nbytes))

        for conversion in self.conversions:
            plan = conversion.source
            if conversion.same_grid:
                nbytes = plan.chunk_nbytes()
                for key_index in plan.key_indices:
                    n = len(plan.chunks_of_key(key_index))
                    key = plan.key(key_index)
                    add(
                        f"k:{key}",
                        [key],
                        conversion.signature,
                        n,
                        n * nbytes,
                        convert_key,
                        src_ref,
                        dst_ref,
                        conversion,
                        key_index,
                    )
            else:
                nbytes = math.prod(conversion.meta.chunk_shape) * plan.meta.data_type.length_bytes
                for index in conversion.meta.chunk_indices():
                    keys = [plan.key(k) for k in sorted(region_keys(conversion, index))]
                    add(
                        f"r:{conversion.key(index)}",
                        keys,
                        conversion.signature,
                        1,
                        nbytes,
                        convert_region,
                        src_ref,
                        dst_ref,
                        conversion,
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

    def _remove_unplanned(self, dst: StoreHandle, entries: dict[str, ConvertedArray]) -> None:
        """With resume: delete the chunk keys under each array that this plan does not write."""
        # Left by a run with another grid or a source that lost keys; documents are rewritten later.
        for conversion in self.conversions:
            planned = {conversion.key(index) for index in conversion.meta.chunk_indices()}
            for key in keys_under(dst, conversion.path):
                if key not in planned:
                    dst.delete(key)
                    entries[conversion.path]["chunks_deleted"] += 1
        for node in self.copies:
            planned = set(self.copy_keys[node.path])
            for key in keys_under(dst, node.path):
                if key not in planned:
                    dst.delete(key)

    def _array_entry(self, conversion: Conversion) -> ConvertedArray:
        src_type = FIXED if conversion.source.kind == FIXED else STRING
        return {
            "path": conversion.path,
            "from": src_type,
            "to": conversion.to,
            "length_bytes": conversion.meta.data_type.length_bytes
            if conversion.to == FIXED
            else None,
            "chunks_written": 0,
            "chunks_kept": 0,
            "chunks_missing": 0,
            "chunks_deleted": 0,
            "already_complete": False,
            "changes": changes(conversion),
        }

    def run(self, dst: StoreHandle) -> ConvertReport:
        """Write every chunk into ``dst``, then the metadata documents; the report."""
        # The record of the options is written first and deleted last; a journal of finished tasks
        # beside it. A resume skips journaled tasks whose source is unchanged, compares the rest
        # with the destination (kept when equal), and deletes chunks the source or the plan no
        # longer has.
        from zarr.storage import ZipStore

        self.report.dest = dst.name
        dst_ref: StoreRef = dst if self.client is None else spec_of(dst, "destination")
        entries = {
            conversion.path: self._array_entry(conversion) for conversion in self.conversions
        }
        complete: set[str] = set()
        recorded = False
        if self.options.resume:
            recorded = check_record(self.options, self.src, dst)  # refusals before any write
            complete = {j.path for j in self.conversions if documents_written(j, dst, recorded)}
        journal = None if isinstance(dst.store, ZipStore) else Journal(dst, self.journal_seconds)
        trusted: dict[str, JournalEntry] = {}
        if journal is not None:
            if recorded:
                trusted = journal.load()  # refusals of a damaged piece before any write
            else:
                journal.clear()  # without its record, a journal says nothing
            dst.set(RECORD, record(self.options, self.src, dst))
        if self.options.resume:
            remove_partial_files(dst)
            self._remove_unplanned(dst, entries)
            # What the journal says is done is trusted only where the destination agrees.
            trusted = confirmed(trusted, dst)
        tasks = self._tasks(dst_ref, trusted)
        fatal: list[Problem] = []
        report = self.report
        total = sum(task[2] for task in tasks)
        done = [0]  # chunks of the tasks consumed: what an interrupt says was done

        def consume(result: KeyConversion) -> bool:
            done[0] += result["chunks"]
            if self.on_progress is not None:
                self.on_progress(done[0], total)
            report.bytes_read += result["bytes_read"]
            report.bytes_written += result["bytes_written"]
            path = result["path"]
            if path is None:  # a copied key
                report.keys_copied += result["written"] + result["kept"]
                if journal is not None and result["journal"] is not None:
                    journal.add(*result["journal"])
                return True
            entry = entries[path]
            entry["chunks_written"] += result["written"]
            entry["chunks_kept"] += result["kept"]
            entry["chunks_missing"] += result["missing"]
            entry["chunks_deleted"] += result["deleted"]
            if journal is not None and result["journal"] is not None:
                journal.add(*result["journal"])
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
        except KeyboardInterrupt:
            raise self._interrupted(dst, done[0], total) from None
        finally:
            if journal is not None:
                journal.flush()  # what was done stays done, however this run ends
        if fatal:
            raise InvalidChunkError(fatal[0], finish_command(self.options, self.src, dst))
        report.skipped.sort(key=Problem.sort_key)
        for path, entry in entries.items():
            entry["already_complete"] = (
                path in complete and entry["chunks_written"] == entry["chunks_deleted"] == 0
            )
        report.arrays.extend(sorted(entries.values(), key=lambda e: e["path"]))
        try:
            self._write_documents(dst)
            if journal is not None:
                journal.clear()
                dst.delete(RECORD)  # finished: the destination is a plain Zarr store
        except KeyboardInterrupt:
            raise self._interrupted(dst, total, total) from None
        return report

    def _interrupted(self, dst: StoreHandle, done: int, total: int) -> KeyboardInterrupt:
        """The KeyboardInterrupt that says what was written and what finishes the conversion."""
        from zarr.storage import ZipStore

        written = f"interrupted after {done} of {count(total, 'chunk')}; {dst.name!r} is incomplete"
        if isinstance(dst.store, ZipStore):
            return KeyboardInterrupt(
                f"{written} (a .zip destination cannot be resumed): convert again with "
                f"overwrite=True (--overwrite)"
            )
        opts = self.options
        finish = finish_command(opts, self.src, dst, skip_invalid=opts.skip_invalid)
        return KeyboardInterrupt(f"{written}; finish it with: {finish}")

    def _write_documents(self, dst: StoreHandle) -> None:
        """Metadata last: arrays, then groups from the deepest to the root."""
        zarr_format = self.options.zarr_format
        for conversion in self.conversions:
            for name, doc in conversion.doc_names:
                dst.set(join(conversion.path, name), doc)
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
        return {V3_DOC: json_bytes(doc)}
