"""Writing whole shards: inner chunks encoded from the value into one buffer, one store write."""
# As zarr's sharding codec: fill-value inner chunks left out unless write_empty_chunks, none
# wholly outside the array stored, an empty shard deleted. Inner chunks are stored in C order.
# Safety: check_value checks every element of the batch before any shard is written.

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._source.writer import KeyWriter, first_invalid
from ..errors import InvalidChunkCodePointError, InvalidCodePointError
from ._compat import each_request, sync_store_path
from ._jobs import ChunkJob, fill_value, plain_slices
from ._plan import ChunkLayout, ShardPlan
from ._settle import here_or_thread

if TYPE_CHECKING:
    from zarr.core.buffer import Buffer

    from ._naming import ChunkNames

__all__ = ["ShardWrite", "check_value"]

# Shards up to this size are encoded on the event loop's thread: a thread hop
# costs about as much.
_INLINE_BYTES = 256 * 1024


class ShardWrite:
    """The whole shards of one ``write()`` of a sharded array (``value`` is not changed)."""

    __slots__ = ("names", "plan", "value")

    def __init__(self, plan: ShardPlan, names: ChunkNames, value: np.ndarray[Any, Any]) -> None:
        self.plan = plan
        self.names = names
        self.value = value

    def takes(self, job: ChunkJob, drop_axes: tuple[int, ...]) -> bool:
        """Whether ``job`` is a whole shard this class writes (else zarr merges it)."""
        # covered as zarr's is_complete_chunk says, by plain slices, from the array's dtype
        shape = job.layout.shape
        value = self.value
        if not (job.complete and not drop_axes and shape):
            return False
        if not plain_slices(job.chunk_selection, len(shape)):
            return False
        if value.dtype != job.spec.dtype.to_native_dtype():
            return False
        if value.ndim == 0:
            return True
        if not plain_slices(job.out_selection, value.ndim) or value.ndim != len(shape):
            return False
        if any((s.start or 0) != 0 for s in job.chunk_selection):
            return False
        extents = tuple(s.stop for s in job.chunk_selection)
        return bool(value[job.out_selection].shape == extents)

    # ---- one shard ----------------------------------------------------

    def encoded(self, job: ChunkJob) -> Buffer | None:
        """The shard's stored bytes (one buffer), or None when it holds no inner chunk."""
        plan = self.plan
        inner = plan.inner_layout(job.spec)
        decoder = inner.decoder
        assert decoder is not None  # a ShardPlan's inner chunks have a chunk-source chain
        layout = plan.shard_layout(job.layout.shape)
        writer = KeyWriter(inner.elements, inner.shape, inner.order, decoder.chain, layout)
        extents = tuple(s.stop for s in job.chunk_selection)  # from 0 (takes checked)
        grid = tuple(-(-e // c) for e, c in zip(extents, inner.shape))
        fill = fill_value(job.spec)
        try:
            shard = writer.whole_shard(
                self._padded(job, grid, extents, inner.shape, fill),
                grid,
                job.spec.config.write_empty_chunks,
                fill,
            )
        except InvalidCodePointError as error:
            raise self._named(job, inner, grid, error) from None
        return None if shard is None else job.spec.prototype.buffer.from_array_like(shard)

    def _padded(
        self,
        job: ChunkJob,
        grid: tuple[int, ...],
        extents: tuple[int, ...],
        chunk: tuple[int, ...],
        fill: Any,
    ) -> np.ndarray[Any, Any]:
        """The value's part for the shard, padded with ``fill`` to whole inner chunks."""
        value = self.value
        padded_shape = tuple(g * c for g, c in zip(grid, chunk))
        source = value if value.ndim == 0 else value[job.out_selection]
        if padded_shape != extents:  # an edge shard: padded as zarr pads it
            padded = np.full(padded_shape, fill, value.dtype)
            padded[tuple(slice(0, e) for e in extents)] = source
            return padded
        if value.ndim == 0:
            return np.full(padded_shape, value, value.dtype)  # a scalar, everywhere
        return source

    def _named(
        self,
        job: ChunkJob,
        inner: ChunkLayout,
        grid: tuple[int, ...],
        error: InvalidCodePointError,
    ) -> InvalidChunkCodePointError:
        """An error at an element of the shard's inner chunks (C order), named."""
        slot, element = divmod(error.index, inner.count)
        where = tuple(int(i) for i in np.unravel_index(slot, grid))
        in_chunk = InvalidCodePointError(element, error.position, error.code_point)
        return self.names.in_inner_chunk(job, inner.shape, inner.order, where, in_chunk)

    # ---- the batch ----------------------------------------------------

    def write_here(self, job: ChunkJob) -> None:
        """Encode and write one shard to a store with synchronous IO."""
        shard = self.encoded(job)
        if shard is None:
            job.getter.delete_sync()
        else:
            job.getter.set_sync(shard)

    async def write_one(self, job: ChunkJob) -> None:
        """Encode and write one shard, on a thread when it is large."""
        small = job.layout.nbytes <= _INLINE_BYTES
        if sync_store_path(job.getter):
            await here_or_thread(small, self.write_here, job)
            return
        shard = await here_or_thread(small, self.encoded, job)
        if shard is None:
            await job.getter.delete()
        else:
            await job.getter.set(shard)

    async def run(self, jobs: list[ChunkJob]) -> None:
        """Write every job's shard (each checked by :func:`check_value` already)."""
        await each_request(jobs, self.write_here, self.write_one)


def check_value(
    value: np.ndarray[Any, Any], jobs: list[ChunkJob], plan: ShardPlan, names: ChunkNames
) -> None:
    """Check every element a write takes from ``value``, before any shard is written."""
    # one kernel call over the value; each job's part only to name a bad element
    if first_invalid(value) is None:
        return
    for job in jobs:
        part = value if value.ndim == 0 else value[job.out_selection]
        error = first_invalid(np.ascontiguousarray(part))  # C order: as _in_selection counts
        if error is not None:
            raise _in_selection(job, part, error, plan, names)


def _in_selection(
    job: ChunkJob,
    part: np.ndarray[Any, Any],
    error: InvalidCodePointError,
    plan: ShardPlan,
    names: ChunkNames,
) -> InvalidChunkCodePointError:
    """An error at element ``error.index`` (C order) of a job's part of the value, named."""
    # placed as zarr places the part (broadcast); the first place it lands names the chunk
    inner = plan.inner_layout(job.spec)
    shard_shape = job.layout.shape
    try:
        marks = np.full(shard_shape, -1, np.intp)
        marks[job.chunk_selection] = np.arange(part.size, dtype=np.intp).reshape(part.shape)
        landed = np.flatnonzero(marks.reshape(-1) == error.index)
        local = np.unravel_index(int(landed[0]), shard_shape)
    except (IndexError, ValueError):  # a selection this cannot retrace: the shard alone
        return InvalidChunkCodePointError(
            error.index, error.position, error.code_point, job.key, None
        )
    grid = tuple(int(i) // c for i, c in zip(local, inner.shape))
    within = tuple(int(i) % c for i, c in zip(local, inner.shape))
    element = int(np.ravel_multi_index(within, inner.shape, order=inner.order))
    in_chunk = InvalidCodePointError(element, error.position, error.code_point)
    return names.in_inner_chunk(job, inner.shape, inner.order, grid, in_chunk)
