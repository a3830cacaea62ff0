"""Writing whole shards: inner chunks encoded from the value into one buffer, one store write.

A shard the write covers whole (every inner chunk inside the selection; at
the array's edge, the shard's part inside the array) needs nothing of what
is stored: its inner chunks are encoded straight from the value into one
buffer (raw ones in place, byte-swapped as stored; compressed ones through
the chunk-source codec chain), the shard index is written beside them
(:meth:`fixedutf32._source.ShardLayout.encode_index`), and the shard goes to
the store with one ``set``.  As zarr's sharding codec does, inner chunks
equal to the fill value are left out unless ``write_empty_chunks`` is set,
inner chunks wholly outside the array are not stored, and a shard left with
no inner chunk is deleted.  The inner chunks are stored in C order (zarr
reads them by the index, in any order).

Every element the batch writes is checked before anything is written
(:func:`check_value`), so a value holding a lone surrogate leaves every
shard as it was.  Shards written in part stay with zarr's sharding codec
(it reads, merges and rewrites them).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr import config

from .._source.writer import KeyWriter, first_invalid
from ..errors import InvalidChunkCodePointError, InvalidCodePointError
from ._compat import fan_out, sync_store_path, waits_per_request
from ._jobs import ChunkJob, fill_value
from ._plan import ChunkLayout, ShardPlan
from ._settle import settled_map

if TYPE_CHECKING:
    from zarr.core.buffer import Buffer

    from ._naming import ChunkNames

__all__ = ["ShardWrite", "check_value"]

_UINT8 = np.dtype(np.uint8)
# Shards up to this size are encoded on the event loop's thread: a thread hop
# costs about as much.
_INLINE_BYTES = 256 * 1024


def _plain(selection: object, ndim: int) -> bool:
    return (
        type(selection) is tuple
        and len(selection) == ndim
        and all(type(s) is slice and s.step in (None, 1) for s in selection)
    )


class ShardWrite:
    """The whole shards of one ``write()`` of a sharded array.

    Parameters
    ----------
    plan : ShardPlan
    names : ChunkNames
        Names the inner chunk of an error.
    value : numpy.ndarray
        What zarr writes, already of the array's native data type; not changed.
    """

    __slots__ = ("names", "plan", "value")

    def __init__(self, plan: ShardPlan, names: ChunkNames, value: np.ndarray[Any, Any]) -> None:
        self.plan = plan
        self.names = names
        self.value = value

    def takes(self, job: ChunkJob, drop_axes: tuple[int, ...]) -> bool:
        """Whether ``job`` is a whole shard this class writes (else zarr merges it).

        The selection must cover the shard's part inside the array (zarr's
        ``is_complete_chunk``), by plain slices on both sides, from a value
        of the array's own data type (zarr casts it so) or a scalar.
        """
        shape = job.layout.shape
        value = self.value
        if not (job.complete and not drop_axes and shape):
            return False
        if not _plain(job.chunk_selection, len(shape)):
            return False
        if value.dtype != job.spec.dtype.to_native_dtype():
            return False
        if value.ndim == 0:
            return True
        if not _plain(job.out_selection, value.ndim) or value.ndim != len(shape):
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
        small = job.layout.nbytes <= _INLINE_BYTES
        if sync_store_path(job.getter):
            if small:
                self.write_here(job)
            else:
                await asyncio.to_thread(self.write_here, job)
            return
        shard = self.encoded(job) if small else await asyncio.to_thread(self.encoded, job)
        if shard is None:
            await job.getter.delete()
        else:
            await job.getter.set(shard)

    async def run(self, jobs: list[ChunkJob]) -> None:
        """Write every job's shard (each checked by :func:`check_value` already).

        To a store with synchronous IO whose requests may each wait (NFS, a
        wrapper), each shard is encoded and written on a thread of its own,
        ``async.concurrency`` at once; to any other, as :meth:`write_one` says.
        """
        if jobs and sync_store_path(jobs[0].getter) and waits_per_request(jobs[0].getter.store):
            await fan_out(self.write_here, jobs)
            return
        await settled_map(self.write_one, jobs, config.get("async.concurrency"))


def check_value(
    value: np.ndarray[Any, Any], jobs: list[ChunkJob], plan: ShardPlan, names: ChunkNames
) -> None:
    """Check every element a write takes from ``value``, before any shard is written.

    One kernel call over a contiguous value; else (or to name a bad
    element) the part of each job in turn.

    Raises
    ------
    InvalidChunkCodePointError
        For a code unit that is not a Unicode scalar value: it names the
        shard, the element of its inner chunk and the element's array
        coordinates.
    """
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
    """An error at element ``error.index`` (C order) of a job's part of the value, named.

    The element is placed as zarr places the part (``shard[chunk_selection] =
    part``, broadcast); the first place it lands names the inner chunk.
    """
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
