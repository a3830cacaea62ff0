"""Reading a batch of chunks (or shards) into the result.

Each chunk is read or decompressed into a buffer of this thread's (``_source.thread_scratch``;
files and frames checked by :mod:`fixedutf32._source` first) and validated there, in cache,
before it is converted into the result: a chunk that fails leaves its part of the result as it
was. Local chunks are read on a few threads, a share of the batch each; other stores' chunks are
fetched by zarr's store and decoded where they arrive (large or compressed ones on a thread). A
store whose every request may wait (NFS, a wrapper store) gets one synchronous read per thread,
``async.concurrency`` at once (``_compat.fan_out``), as zarr keeps its requests in flight.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr import config

from .._arguments import unicode_dtype
from .._source import BLOCK_BYTES, ElementLayout, Index, thread_scratch
from .._source.runs import ElementRuns, element_runs
from ..errors import FixedUTF32Error, InvalidChunkCodePointError, InvalidCodePointError
from ._compat import MISSING, PRESENT, ChunkStatus, fan_out, sync_store_path, waits_per_request
from ._jobs import ChunkJob, fill_value, plain_slices, shares
from ._plan import NATIVE, ChunkLayout, ChunkPlan, ShardPlan
from ._settle import settled, settled_map

if TYPE_CHECKING:
    from ._naming import ChunkNames

__all__ = ["BatchRead"]

# Uncompressed chunks of other stores up to this size are decoded where they
# arrive (on the event loop's thread): a thread hop costs as much.
_INLINE_BYTES = 4 * 1024 * 1024


def _stored_dtype(layout: ChunkLayout, endian: str | None = None) -> np.dtype[Any]:
    return unicode_dtype(layout.elements.units, endian or layout.endian)


class BatchRead:
    """One ``read()`` of a batch: chunks validated, then placed into ``out``; their statuses."""

    __slots__ = (
        "drop_axes",
        "flat_out",
        "names",
        "out",
        "plan",
        "ranges",
        "statuses",
        "wanted",
    )

    def __init__(
        self,
        plan: ChunkPlan | ShardPlan,
        names: ChunkNames,
        out: np.ndarray[Any, Any],
        drop_axes: tuple[int, ...],
        count: int,
    ) -> None:
        self.plan = plan
        self.names = names
        self.out = out
        self.drop_axes = drop_axes
        # zarr's result is native, but for Zarr V2 arrays of the other byte
        # order, whose result keeps the stored order
        self.wanted = (
            "big"
            if out.dtype.byteorder == ">"
            else ("little" if out.dtype.byteorder == "<" else NATIVE)
        )
        self.statuses: list[ChunkStatus] = [PRESENT] * count
        # the result's bytes in memory order, when it is one block of memory (for read_many)
        self.flat_out: np.ndarray[Any, np.dtype[np.uint8]] | None = None
        if (out.flags.c_contiguous or out.flags.f_contiguous) and out.flags.writeable:
            self.flat_out = out.reshape(-1, order="A").view(np.uint8)
        # position -> the byte ranges a partial read of a raw chunk needs, once known
        self.ranges: dict[int, ElementRuns] = {}

    # ---- what every chunk ends with ------------------------------------

    def fill(self, job: ChunkJob) -> None:
        """A chunk that is not stored: the fill value, and ``missing``."""
        self.out[job.out_selection] = fill_value(job.spec)
        self.statuses[job.position] = MISSING

    def place(self, job: ChunkJob, data: Any) -> None:
        """Put a chunk's validated bytes (stored layout) into the result."""
        layout = job.layout
        block = job.block
        if block is not None:
            layout.elements.place(data, block, self.wanted)
            return
        chunk = np.frombuffer(data, _stored_dtype(layout), count=layout.count)
        part = chunk.reshape(layout.shape, order=layout.order)[job.chunk_selection]
        if self.drop_axes:
            part = part.squeeze(axis=self.drop_axes)
        self.out[job.out_selection] = part

    def validated(self, job: ChunkJob, data: Any, offset: int = 0) -> None:
        """Check the elements of ``data`` (from byte ``offset`` of the chunk); raise naming it."""
        try:
            job.layout.elements.validate(data)
        except InvalidCodePointError as exc:
            shifted = InvalidCodePointError(
                exc.index + offset // job.layout.length_bytes, exc.position, exc.code_point
            )
            raise self.names.named(job, shifted) from None

    # ---- chunks -------------------------------------------------------

    def read_local(self, jobs: Sequence[ChunkJob]) -> None:
        """Read chunks from local files (runs on a thread), through the one reader of keys."""
        direct: dict[tuple[int, str], list[ChunkJob]] = {}  # by layout and root: one call each
        for job in jobs:
            layout = job.layout
            decoder, reader = layout.decoder, layout.reader
            assert decoder is not None and reader is not None and job.key is not None
            if job.block is None and decoder.chain.raw:
                runs = self.ranges.get(job.position) or _runs(layout, job.chunk_selection)
                if runs is not None:
                    self.read_local_runs(job, runs)
                    continue
            if self._direct(job):
                direct.setdefault((id(layout), _root(job)), []).append(job)
                continue
            read = _ChunkSink(self, [job])
            found = reader.read((0,), _root(job), read.sink, on_block=read.check, key=job.key)
            if found is None:
                self.fill(job)
            read.finish()
        for group in direct.values():
            self._read_direct(group)

    def _direct(self, job: ChunkJob) -> bool:
        """Whether a raw chunk goes in C straight into its block of the result."""
        # Files of up to one block, each checked in cache before it is written: a chunk that
        # fails leaves its block as it was; into out in native order only.
        layout = job.layout
        return (
            job.block is not None
            and self.wanted == NATIVE
            and layout.nbytes <= BLOCK_BYTES
            and layout.decoder is not None
            and layout.decoder.chain.raw
            and self.flat_out is not None
        )

    def _read_direct(self, jobs: list[ChunkJob]) -> None:
        """Raw local chunks, each straight into its block of the result (read_many's C path)."""
        flat = self.flat_out
        assert flat is not None and jobs[0].layout.reader is not None  # _direct said so
        base = flat.ctypes.data
        blocks = [job.block for job in jobs]
        assert all(block is not None for block in blocks)  # _direct said so
        starts = np.array([block.ctypes.data for block in blocks], np.intp) - base  # type: ignore[union-attr]
        read = _ChunkSink(self, jobs)
        found = jobs[0].layout.reader.read_many(
            [(i,) for i in range(len(jobs))],
            _root(jobs[0]),
            read.sink,
            on_block=read.check,
            into=flat,
            starts=starts,
            keys=[job.key or "" for job in jobs],
        )
        for job, size in zip(jobs, found):
            if size is None:
                self.fill(job)
        read.finish()

    def read_sync_share(self, jobs: Sequence[ChunkJob]) -> None:
        """Read chunks (or shards) from a store with synchronous IO (runs on a thread)."""
        unpack = self.unpack_shard if isinstance(self.plan, ShardPlan) else self.decode_stored
        for job in jobs:
            buffer = job.getter.get_sync(prototype=job.spec.prototype)
            if buffer is None:
                self.fill(job)
            else:
                unpack(job, buffer.as_numpy_array())

    def read_local_runs(self, job: ChunkJob, runs: ElementRuns) -> None:
        """Read only the elements a selection needs from a raw local chunk, by byte range."""
        reader = job.layout.reader
        assert reader is not None and job.key is not None
        try:
            values = reader.read_runs(_root(job), job.key, runs)
        except InvalidCodePointError as exc:
            raise self.names.named(job, exc) from None
        if values is None:
            self.fill(job)
            return
        if self.drop_axes:
            values = values.squeeze(axis=self.drop_axes)
        self.out[job.out_selection] = values

    def decode_stored(self, job: ChunkJob, stored: Any) -> None:
        """Decode, check and place the stored bytes of one chunk (any store)."""
        layout = job.layout
        reader = layout.reader
        key = job.key or "(inside a shard)"
        if reader is not None:
            read = _ChunkSink(self, [job])
            reader.read((0,), lambda _: stored, read.sink, on_block=read.check, key=key)
            read.finish()
            return
        # decompressed by zarr's codec objects already
        if memoryview(stored).nbytes != layout.nbytes:
            from .._source import chunk_size_error

            raise chunk_size_error(
                key, memoryview(stored).nbytes, layout.count, layout.length_bytes
            )
        self.validated(job, stored)
        self.place(job, stored)

    async def read_stored(self, job: ChunkJob) -> None:
        """Fetch one chunk through zarr's store and decode it."""
        buffer = await job.getter.get(prototype=job.spec.prototype)
        if buffer is None:
            self.fill(job)
            return
        plan = self.plan
        assert isinstance(plan, ChunkPlan)
        if job.layout.decoder is None:
            for codec in reversed(plan.zarr_codecs):
                (buffer,) = await codec.decode([(buffer, job.spec)])
        stored = buffer.as_numpy_array()
        if (job.layout.decoder is not None and not job.layout.decoder.chain.raw) or (
            stored.nbytes > _INLINE_BYTES
        ):
            await asyncio.to_thread(self.decode_stored, job, stored)
        else:
            self.decode_stored(job, stored)

    # ---- shards -------------------------------------------------------

    def read_local_shards(self, jobs: Sequence[ChunkJob]) -> None:
        """Read shards from local files (runs on a thread), through the one reader of keys."""
        for job in jobs:
            self.read_shard(job, _root(job))

    async def read_stored_shard(self, job: ChunkJob) -> None:
        """Fetch one shard through zarr's store and decode its chunks."""
        buffer = await job.getter.get(prototype=job.spec.prototype)
        if buffer is None:
            self.fill(job)
            return
        await asyncio.to_thread(self.unpack_shard, job, buffer.as_numpy_array())

    def unpack_shard(self, job: ChunkJob, stored: Any) -> None:
        """Decode, check and place the inner chunks of one shard's stored bytes."""
        self.read_shard(job, lambda key: stored)

    def read_shard(self, job: ChunkJob, source: str | Callable[[str], Any]) -> None:
        """Read one shard (a local store's root, or its bytes) with :class:`KeyReader`; place it."""
        assert isinstance(self.plan, ShardPlan)
        reader = self.plan.reader(job.spec)
        shard = _ShardSink(self, job, self.plan.inner_layout(job.spec))
        needed = None
        if not job.complete:
            needed = _touched_chunks(job.layout.shape, shard.inner.shape, job.chunk_selection)
        found = reader.read(
            (0,) * len(job.layout.shape),
            source,
            shard.sink,
            on_block=shard.check,
            needed=needed,
            span=shard.span,
            in_cache=not shard.in_place,
            key=job.key or "(a shard inside a shard)",
        )
        if found is None:
            self.fill(job)
            return
        count = math.prod(reader.grid.grid_shape)
        shard.finish(range(count) if needed is None else needed, count)

    def shard_view(self, job: ChunkJob) -> np.ndarray[Any, Any] | None:
        """The view of the result a whole shard (its part inside the array) fills, or None."""
        shape = job.layout.shape
        selection = job.chunk_selection
        if not (job.complete and not self.drop_axes and plain_slices(selection, len(shape))):
            return None
        if any((s.start or 0) != 0 for s in selection) or not plain_slices(job.out_selection):
            return None
        view = self.out[(*job.out_selection, Ellipsis)]
        extents = tuple(
            min(s.stop if s.stop is not None else n, n) for s, n in zip(selection, shape)
        )
        return view if view.shape == extents else None

    # ---- the batch ----------------------------------------------------

    def _small(self, jobs: Sequence[ChunkJob]) -> bool:
        """Whether reading ``jobs`` here costs less than handing them to a thread."""
        # a raw chunk read in part counts only its runs' bytes; side effect: the runs are kept in
        # self.ranges for read_local
        total = 0
        ranged = isinstance(self.plan, ChunkPlan) and self.plan.raw
        for job in jobs:
            runs = None
            if ranged and job.block is None:
                runs = _runs(job.layout, job.chunk_selection)
            if runs is None:
                total += job.layout.nbytes
            else:
                self.ranges[job.position] = runs
                total += int(runs.lengths.sum()) * job.layout.length_bytes
            if total > _SMALL_BATCH_BYTES:
                return False
        return True

    async def run(self, jobs: list[ChunkJob]) -> tuple[ChunkStatus, ...]:
        """Read every job: local ones on threads, the others through the store."""
        plan = self.plan
        sharded = isinstance(plan, ShardPlan)
        in_thread = sharded or (isinstance(plan, ChunkPlan) and plan.specs is not None)
        local: list[ChunkJob] = []  # files of a local directory, read here
        here: list[ChunkJob] = []  # stores with synchronous IO (zarr >= 3.4)
        other: list[ChunkJob] = []  # the rest, through zarr's store
        for job in jobs:
            if in_thread and job.path is not None:
                local.append(job)
            elif in_thread and sync_store_path(job.getter):
                here.append(job)
            else:
                other.append(job)
        limit = config.get("async.concurrency")
        read_share: Callable[[Sequence[ChunkJob]], None] = (
            self.read_local_shards if sharded else self.read_local
        )
        # Decided once per batch (one store, as a rule): a store whose requests
        # may each wait (NFS, a wrapper) has its synchronous reads made one chunk
        # per thread, async.concurrency at once; a local disk's, a share per CPU.
        slow = bool(local or here) and waits_per_request((local or here)[0].getter.store)
        alone = local and not here and not other and (not slow or len(local) == 1)
        if alone and self._small(local):
            read_share(local)  # a thread hop would cost more than the read
            return tuple(self.statuses)
        awaitables: list[Awaitable[Any]] = []
        if slow:
            awaitables += [fan_out(read_share, [[job] for job in local])]
            awaitables += [fan_out(self.read_sync_share, [[job] for job in here])]
        else:
            awaitables += [asyncio.to_thread(read_share, share) for share in shares(local)]
            awaitables += [asyncio.to_thread(self.read_sync_share, share) for share in shares(here)]
        if other:
            one = self.read_stored_shard if sharded else self.read_stored
            awaitables.append(settled_map(one, other, limit))
        await settled(*awaitables)
        return tuple(self.statuses)


def _runs(layout: ChunkLayout, selection: Any) -> ElementRuns | None:
    """The byte ranges of a chunk a selection needs, if few enough to read alone."""
    return element_runs(layout.shape, layout.order, layout.length_bytes, selection)


def _root(job: ChunkJob) -> str:
    """The local store's directory a job's key is under."""
    assert job.path is not None and job.key is not None  # local jobs only
    return job.path[: len(job.path) - len(job.key)]


class _ChunkSink:
    """Where the reader hands some chunks (key index ``(i,)``: ``jobs[i]``): checked, placed."""

    __slots__ = ("batch", "errors", "jobs")

    def __init__(self, batch: BatchRead, jobs: Sequence[ChunkJob]) -> None:
        self.batch, self.jobs = batch, jobs
        self.errors: dict[int, FixedUTF32Error] = {}

    def check(self, index: Index, block: memoryview, offset: int) -> None:
        self.batch.validated(self.jobs[index[0]], block, offset)  # raises the named error

    def sink(self, index: Index, data: memoryview | None, error: FixedUTF32Error | None) -> None:
        job = self.jobs[index[0]]
        if error is not None:
            if isinstance(error, InvalidCodePointError) and not isinstance(
                error, InvalidChunkCodePointError
            ):  # from C: named here
                error = self.batch.names.named(job, error)
            self.errors.setdefault(job.position, error)
        elif data is not None:
            self.batch.place(job, data)

    def finish(self) -> None:
        """Raise the error of the first chunk (in the batch's order) that failed, if any."""
        if self.errors:
            raise self.errors[min(self.errors)]


# Batches of local chunks up to this many bytes are read where they are asked
# for, on the event loop's thread: a thread hop costs more.
_SMALL_BATCH_BYTES = 256 * 1024


def _touched_chunks(
    shard_shape: tuple[int, ...], chunk_shape: tuple[int, ...], selection: Any
) -> list[int]:
    """The inner chunks (flat, C order) of a shard that ``selection`` touches, sorted."""
    coords = np.indices(shard_shape, sparse=True)
    touched = [
        np.asarray(axis[selection]).reshape(-1) // c
        for axis, c in zip(np.broadcast_arrays(*coords), chunk_shape)
    ]
    grid = tuple(-(-s // c) for s, c in zip(shard_shape, chunk_shape))
    if not touched or not touched[0].size:
        return []
    return [int(local) for local in np.unique(np.ravel_multi_index(touched, grid))]


class _ShardSink:
    """Where the reader hands one shard's inner chunks: the result, or one assembled shard."""

    __slots__ = (
        "batch",
        "direct",
        "errors",
        "flat",
        "in_place",
        "inner",
        "job",
        "seen",
        "spanned",
        "target",
    )

    def __init__(self, batch: BatchRead, job: ChunkJob, inner: ChunkLayout) -> None:
        self.batch, self.job, self.inner = batch, job, inner
        # Each inner chunk straight into its place in the result when the selection is the
        # shard (its part inside the array) by plain slices; else into one assembled shard.
        view = batch.shard_view(job)
        self.direct = view is not None
        self.target = np.empty(job.layout.shape, _stored_dtype(inner)) if view is None else view
        self.flat = job.block if view is not None and len(job.layout.shape) == 1 else None
        self.seen: set[Index] = set()
        self.errors: dict[Index, FixedUTF32Error] = {}
        self.spanned: np.ndarray[Any, np.dtype[np.uint8]] | None = None
        # A shard that fills its block of the result whole goes straight there, each block
        # through a buffer in cache, checked before it is written: whole chunks a block, so that
        # a chunk that fails leaves its part of the result as it was.
        self.in_place = (
            self.flat is not None
            and self.flat.nbytes == job.layout.nbytes
            and batch.wanted == NATIVE
            and inner.nbytes <= BLOCK_BYTES
        )

    def check(self, chunk: Index, block: memoryview, offset: int) -> None:
        self.inner.elements.validate(block)  # what it raises reaches sink as the chunk's error

    def span(self, index: Index) -> np.ndarray[Any, np.dtype[np.uint8]] | None:
        # A one-axis shard of raw chunks back to back: read whole into this thread's scratch,
        # each block checked as it lands, then placed in one pass (a failing chunk places nothing).
        if len(self.job.layout.shape) != 1:
            return None
        if self.in_place:
            self.spanned = self.flat
        else:
            self.spanned = thread_scratch().bytes("span", self.job.layout.nbytes)
        return self.spanned

    def sink(self, chunk: Index, data: memoryview | None, error: FixedUTF32Error | None) -> None:
        self.seen.add(chunk)
        if error is not None:
            self.errors[chunk] = error
        if data is None or self.errors or self.spanned is not None:
            return  # a spanned shard is placed whole, once all of it is checked
        inner = self.inner
        region = self.region(chunk)
        if self.flat is not None and region[0].stop - region[0].start == inner.count:
            size = inner.length_bytes
            place = self.flat[region[0].start * size : region[0].stop * size]
            inner.elements.place(data, place, self.batch.wanted)
            return
        values = np.frombuffer(data, _stored_dtype(inner), count=inner.count)
        values = values.reshape(inner.shape, order=inner.order)
        self.target[region] = values[tuple(slice(0, r.stop - r.start) for r in region)]

    def region(self, chunk: Index) -> tuple[slice, ...]:
        """Where inner chunk ``chunk`` lies in :attr:`target` (cut at its edge)."""
        extents = zip(chunk, self.inner.shape, self.target.shape)
        return tuple(slice(min(g * c, e), min(g * c + c, e)) for g, c, e in extents)

    def finish(self, needed: Iterable[int], count: int) -> None:
        """Raise the first failing chunk's error (grid order); else fill and place what is left."""
        job, inner, batch = self.job, self.inner, self.batch
        if self.errors:
            chunk = min(self.errors)
            error = self.errors[chunk]
            if isinstance(error, InvalidCodePointError):
                at = InvalidCodePointError(error.index, error.position, error.code_point)
                error = batch.names.in_inner_chunk(job, inner.shape, inner.order, chunk, at)
            raise error
        if self.spanned is not None:  # in native order
            if self.in_place:
                return
            if self.flat is not None and self.flat.nbytes == self.spanned.nbytes:
                _native(inner.length_bytes).place(self.spanned, self.flat, batch.wanted)
                return
            whole = np.frombuffer(self.spanned, _stored_dtype(inner, NATIVE))
            if self.direct:
                self.target[...] = whole[: self.target.shape[0]]
                return
            self.target = whole
        elif len(self.seen) < count:
            fill = fill_value(job.spec)
            per = tuple(-(-s // c) for s, c in zip(job.layout.shape, inner.shape))
            for local in needed:
                chunk = _unravel(local, per)
                if chunk not in self.seen:
                    self.target[self.region(chunk)] = fill
        if self.direct:
            return
        part = self.target[job.chunk_selection]
        if batch.drop_axes:
            part = part.squeeze(axis=batch.drop_axes)
        batch.out[job.out_selection] = part


@functools.cache
def _native(length_bytes: int) -> ElementLayout:
    return ElementLayout(length_bytes, NATIVE)


def _unravel(local: int, extents: Sequence[int]) -> tuple[int, ...]:
    position = []
    for extent in reversed(extents):
        local, i = divmod(local, extent)
        position.append(i)
    return tuple(reversed(position))
