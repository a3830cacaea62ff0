"""Errors that say which chunk, and where in the array."""
# The kernels name an element of the buffer they were given; ChunkNames adds the chunk's key
# and the element's array coordinates.

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import InvalidChunkCodePointError, InvalidCodePointError
from ._compat import ArrayV3Metadata

if TYPE_CHECKING:
    from zarr.core.metadata import ArrayMetadata

    from ._jobs import ChunkJob

__all__ = ["ChunkNames"]


class ChunkNames:
    """How the chunks of one array are named: keys to grid coordinates."""

    __slots__ = ("_ndim", "_prefix", "_separator")

    def __init__(self, array_metadata: ArrayMetadata | None) -> None:
        # without metadata (zarr's pipeline for the chunks inside a shard) only the
        # coordinates zarr's shard reader gives are known
        self._ndim: int | None = None
        self._prefix = False
        self._separator = "/"
        if array_metadata is None:
            return
        self._ndim = len(array_metadata.shape)
        if isinstance(array_metadata, ArrayV3Metadata):
            encoding = array_metadata.chunk_key_encoding
            self._prefix = encoding.name == "default"
            self._separator = getattr(encoding, "separator", "/")
        else:
            self._separator = array_metadata.dimension_separator

    def grid_index(self, key: str | None, getter: object = None) -> tuple[int, ...] | None:
        """The grid coordinates of the chunk stored at ``key`` (or read by ``getter``), or None."""
        if key is None or self._ndim is None:
            coords = getattr(getter, "chunk_coords", None)  # zarr's shard reader
            return tuple(coords) if coords is not None else None
        ndim, prefix = self._ndim, self._prefix
        parts = key.split("/")
        if self._separator == "/":
            parts = parts[len(parts) - ndim - prefix :] if ndim + prefix else parts[-1:]
        else:
            parts = parts[-1].split(self._separator)
        if prefix:
            parts = parts[1:]
        if ndim == 0:
            return ()
        try:
            return tuple(int(p) for p in parts)
        except ValueError:
            return None

    def array_index(self, job: ChunkJob, element: int) -> tuple[int, ...] | None:
        """The array coordinates of flat ``element`` (stored order) of the job's chunk or shard."""
        coords = self.grid_index(job.key, job.getter)
        shape = job.layout.shape
        if coords is None or len(coords) != len(shape):
            return None
        inner = np.unravel_index(element, shape, order=job.layout.order) if shape else ()
        return tuple(int(c) * n + int(i) for c, n, i in zip(coords, shape, inner))

    def named(self, job: ChunkJob, error: InvalidCodePointError) -> InvalidChunkCodePointError:
        """``error`` (an element of the job's chunk) as one that names the chunk."""
        if isinstance(error, InvalidChunkCodePointError):
            return error
        return InvalidChunkCodePointError(
            error.index,
            error.position,
            error.code_point,
            job.key,
            self.array_index(job, error.index),
        )

    def in_inner_chunk(
        self,
        job: ChunkJob,
        inner_shape: tuple[int, ...],
        inner_order: Literal["C", "F"],
        grid: tuple[int, ...],
        error: InvalidCodePointError,
    ) -> InvalidChunkCodePointError:
        """``error`` (an element of the inner chunk at ``grid`` of the job's shard) named."""
        # error.index counts the inner chunk's elements in its stored order (inner_order)
        coords = self.grid_index(job.key, job.getter)
        index = None
        if coords is not None and len(coords) == len(inner_shape):
            within = np.unravel_index(error.index, inner_shape, order=inner_order)
            index = tuple(
                int(c) * s + g * n + int(i)
                for c, s, g, n, i in zip(coords, job.layout.shape, grid, inner_shape, within)
            )
        return InvalidChunkCodePointError(
            error.index, error.position, error.code_point, job.key, index
        )

    def in_shard(
        self, shard_key: str | None, getter: object, shard_shape: tuple[int, ...], error: Any
    ) -> InvalidChunkCodePointError:
        """An error from inside a shard (array index relative to it) named by the shard."""
        coords = self.grid_index(shard_key, getter)
        index = None
        if coords is not None and error.array_index is not None:
            index = tuple(c * n + i for c, n, i in zip(coords, shard_shape, error.array_index))
        return InvalidChunkCodePointError(
            error.index, error.position, error.code_point, shard_key, index
        )
