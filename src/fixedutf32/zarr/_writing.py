"""Writing a batch of chunks: encoded straight from the value, validated, compressed."""
# A whole chunk is encoded from the value's memory (no copy when already laid out as stored);
# a partial one is read back (checked as any read) and merged. Fill-value chunks are deleted
# unless write_empty_chunks, as zarr does; a chunk holding a lone surrogate is not written.

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import numpy as np

from .._source import thread_scratch
from .._source.writer import first_invalid
from ..errors import InvalidCodePointError
from ._compat import each_request, is_scalar
from ._jobs import ChunkJob, fill_value, plain_slices
from ._plan import ChunkPlan
from ._settle import here_or_thread

if TYPE_CHECKING:
    from ._naming import ChunkNames

__all__ = ["BatchWrite"]

# Chunks up to this size are encoded on the event loop's thread: checking
# and swapping them takes about as long as handing them to a thread would.
_INLINE_BYTES = 4 * 1024 * 1024


class BatchWrite:
    """One ``write()`` of a batch (``value``, already of the array's dtype, is not changed)."""

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
        if not plain_slices(job.out_selection):
            return None
        part = value[(*job.out_selection, Ellipsis)]
        return part if part.shape == job.layout.shape else None

    def check_value(self, jobs: list[ChunkJob]) -> None:
        """Refuse a value holding a lone surrogate before any chunk of the batch is written."""
        # one kernel pass over the value; only on failure is each job's chunk built (stored part
        # taken as fill, nothing read or written) and encoded, to name the chunk and element
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

    def write_here(self, job: ChunkJob) -> None:
        """Write a chunk to a store that does its IO synchronously (runs on a thread)."""
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
            compressed = job.layout.writer.compress(encoded)
            job.getter.set_sync(job.spec.prototype.buffer.from_array_like(compressed))

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
        """Merge (if partial), encode and write one chunk through zarr's store."""
        chunk = self._whole_from_value(job)
        if chunk is None:
            existing = None
            if not job.complete:
                existing = await job.getter.get(prototype=job.spec.prototype)
                if existing is not None and job.layout.decoder is None:
                    for codec in reversed(self.plan.zarr_codecs):
                        (existing,) = await codec.decode([(existing, job.spec)])
            chunk = await asyncio.to_thread(self.merged, job, existing)
        encoded = await here_or_thread(chunk.nbytes <= _INLINE_BYTES, self.encoded, job, chunk)
        if encoded is None:
            await job.getter.delete()
            return
        await job.getter.set(await self.compressed(job, encoded))

    async def run(self, jobs: list[ChunkJob]) -> None:
        """Write every job's chunk (each checked by :meth:`check_value` already)."""
        # write_here compresses through the chunk-source chain: only where there is one
        await each_request(jobs, self.write_here, self.write_one, self.plan.specs is not None)


def _equals_fill(chunk: np.ndarray[Any, Any], fill: Any) -> bool:
    """Whether every element of ``chunk`` is ``fill``."""
    # zarr compares elements (NDBuffer.all_equal); comparing 4-byte code units is much faster
    if chunk.ndim == 0 or not (chunk.flags.c_contiguous or chunk.flags.f_contiguous):
        chunk = np.ascontiguousarray(chunk)
    units = np.array(fill, dtype=chunk.dtype).reshape(1).view(np.uint32)
    flat = chunk.reshape(-1, order="A").view(np.uint32)
    if flat.size and (flat[: units.size] != units).any():
        return False  # the usual answer, from the first element
    if not units.any():
        return not flat.any()
    return bool((flat.reshape(-1, units.size) == units).all())
