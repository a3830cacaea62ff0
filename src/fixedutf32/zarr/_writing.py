"""Writing a batch of chunks: encoded straight from the value, validated, compressed.

A chunk the value holds whole is encoded from the value's own memory (no
copy when it is already laid out and ordered as stored: its bytes go to
the store as they are, after every unit is validated).  A chunk written in
part is read back (through the same checks as any read), merged with the
value and encoded.  Chunks that end up equal to the fill value are deleted
unless the array's ``write_empty_chunks`` is set, as zarr's pipeline does.
A chunk holding a lone surrogate is not written.  To a store with
synchronous IO whose requests may each wait (a directory on NFS, a wrapper
store), each chunk is written on a thread of its own, ``async.concurrency``
at once (``_compat.fan_out``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr import config

from .._source import thread_scratch
from .._source.writer import first_invalid
from ..errors import InvalidCodePointError
from ._compat import fan_out, is_scalar, sync_store_path, waits_per_request
from ._jobs import ChunkJob, fill_value
from ._plan import ChunkPlan
from ._settle import settled_map

if TYPE_CHECKING:
    from ._naming import ChunkNames

__all__ = ["BatchWrite"]

# Chunks up to this size are encoded on the event loop's thread: checking
# and swapping them takes about as long as handing them to a thread would.
_INLINE_BYTES = 4 * 1024 * 1024


class BatchWrite:
    """One ``write()`` of a batch.

    Parameters
    ----------
    plan : ChunkPlan
    names : ChunkNames
    value : numpy.ndarray
        What zarr writes (already cast to the array's data type); not changed.
    drop_axes : tuple of int
    """

    __slots__ = ("drop_axes", "names", "plan", "value")

    def __init__(
        self,
        plan: ChunkPlan,
        names: ChunkNames,
        value: np.ndarray[Any, Any],
        drop_axes: tuple[int, ...],
    ) -> None:
        self.plan = plan
        self.names = names
        self.value = value
        self.drop_axes = drop_axes

    def _whole_from_value(self, job: ChunkJob) -> np.ndarray[Any, Any] | None:
        """The value's part that is the whole chunk, as it is (a view), or None."""
        value = self.value
        if not (job.complete and not self.drop_axes and value.ndim == len(job.layout.shape)):
            return None
        if not all(type(s) is slice and s.step in (None, 1) for s in job.out_selection):
            return None
        part = value[(*job.out_selection, Ellipsis)]
        return part if part.shape == job.layout.shape else None

    def check_value(self, jobs: list[ChunkJob]) -> None:
        """Refuse a value holding a lone surrogate before any chunk of the batch is written.

        One kernel pass over the value, in its own byte order; only when it
        fails is each job's chunk built (the stored part taken as the fill
        value, nothing read or written) and encoded, so that the error names
        the chunk and element a write would have named.

        Raises
        ------
        InvalidChunkCodePointError
            For a code unit of the value that is not a Unicode scalar value.
        """
        if first_invalid(self.value) is None:
            return  # else find the chunk it goes to
        for job in jobs:
            chunk = self._whole_from_value(job)
            self.encoded(job, self.merged(job, None) if chunk is None else chunk)

    def merged(self, job: ChunkJob, existing: Any) -> np.ndarray[Any, Any]:
        """The chunk after the write: the stored one (or fill) with the value put in."""
        layout = job.layout
        dtype = job.spec.dtype.to_native_dtype()
        if existing is None:
            chunk = np.full(layout.shape, fill_value(job.spec), dtype=dtype, order=layout.order)
        else:
            stored = existing.as_numpy_array()
            decoder = layout.decoder
            key = job.key or "(inside a shard)"
            if decoder is None:
                data = stored
            elif decoder.chain.raw:
                data = decoder.decode(stored, key=key)
            else:
                data = decoder.decode(
                    stored, key=key, out=thread_scratch().bytes("chunk", layout.nbytes)
                )
            try:
                layout.elements.validate(data)
            except InvalidCodePointError as exc:
                raise self.names.named(job, exc) from None
            stored_dtype = dtype.newbyteorder("<" if layout.endian == "little" else ">")
            chunk = np.frombuffer(data, stored_dtype, count=layout.count)
            chunk = np.array(
                chunk.reshape(layout.shape, order=layout.order), dtype=dtype, order=layout.order
            )  # writable, its own memory, native
        value = self.value
        if job.chunk_selection == () or is_scalar(value, dtype):
            part = value
        else:
            part = value[job.out_selection]
            if self.drop_axes:
                part = part[
                    tuple(
                        None if i in self.drop_axes else slice(None)
                        for i in range(len(layout.shape))
                    )
                ]
        chunk[job.chunk_selection] = part
        return chunk

    def encoded(self, job: ChunkJob, chunk: np.ndarray[Any, Any]) -> Any:
        """The chunk's stored bytes before compression, or None when it is all fill value."""
        if not job.spec.config.write_empty_chunks and _equals_fill(chunk, fill_value(job.spec)):
            return None
        try:
            return job.layout.writer.chunk(chunk)
        except InvalidCodePointError as exc:
            raise self.names.named(job, exc) from None

    def compressed_here(self, job: ChunkJob, encoded: Any) -> Any:
        """:meth:`compressed` for a chunk-source chain, on this thread."""
        return job.spec.prototype.buffer.from_array_like(job.layout.writer.compress(encoded))

    def write_share(self, jobs: list[ChunkJob]) -> None:
        """Write chunks to a store that does its IO synchronously (runs on a thread)."""
        for job in jobs:
            chunk = self._whole_from_value(job)
            if chunk is None:
                existing = None
                if not job.complete:
                    existing = job.getter.get_sync(prototype=job.spec.prototype)
                chunk = self.merged(job, existing)
            encoded = self.encoded(job, chunk)
            if encoded is None:
                job.getter.delete_sync()
            else:
                job.getter.set_sync(self.compressed_here(job, encoded))

    async def compressed(self, job: ChunkJob, encoded: Any) -> Any:
        """What the store gets for the chunk: its bytes with the codecs applied."""
        prototype = job.spec.prototype
        decoder = job.layout.decoder
        if decoder is not None:
            writer = job.layout.writer
            if decoder.chain.raw:
                return prototype.buffer.from_array_like(encoded)
            return prototype.buffer.from_array_like(
                await asyncio.to_thread(writer.compress, encoded)
            )
        buffer = prototype.buffer.from_array_like(encoded)
        for codec in self.plan.zarr_codecs:
            (buffer,) = await codec.encode([(buffer, job.spec)])
        return buffer

    async def write_one(self, job: ChunkJob) -> None:
        chunk = self._whole_from_value(job)
        if chunk is None:
            existing = None
            if not job.complete:
                existing = await job.getter.get(prototype=job.spec.prototype)
                if existing is not None and job.layout.decoder is None:
                    for codec in reversed(self.plan.zarr_codecs):
                        (existing,) = await codec.decode([(existing, job.spec)])
            chunk = await asyncio.to_thread(self.merged, job, existing)
        if chunk.nbytes <= _INLINE_BYTES:
            encoded = self.encoded(job, chunk)
        else:
            encoded = await asyncio.to_thread(self.encoded, job, chunk)
        if encoded is None:
            await job.getter.delete()
            return
        await job.getter.set(await self.compressed(job, encoded))

    async def run(self, jobs: list[ChunkJob]) -> None:
        # A store with synchronous IO whose requests may each wait (NFS, a
        # wrapper): each chunk written on a thread of its own, async.concurrency
        # at once; any other through zarr's store, as many at once.
        if (
            jobs
            and self.plan.specs is not None
            and sync_store_path(jobs[0].getter)
            and waits_per_request(jobs[0].getter.store)
        ):
            await fan_out(self.write_share, [[job] for job in jobs])
            return
        await settled_map(self.write_one, jobs, config.get("async.concurrency"))


def _equals_fill(chunk: np.ndarray[Any, Any], fill: Any) -> bool:
    """Whether every element of ``chunk`` is ``fill``.

    zarr's pipeline compares the elements (``NDBuffer.all_equal``); comparing
    their 4-byte code units gives the same answer much faster.
    """
    if chunk.ndim == 0 or not (chunk.flags.c_contiguous or chunk.flags.f_contiguous):
        chunk = np.ascontiguousarray(chunk)
    units = np.array(fill, dtype=chunk.dtype).reshape(1).view(np.uint32)
    flat = chunk.reshape(-1, order="A").view(np.uint32)
    if flat.size and (flat[: units.size] != units).any():
        return False  # the usual answer, from the first element
    if not units.any():
        return not flat.any()
    return bool((flat.reshape(-1, units.size) == units).all())
