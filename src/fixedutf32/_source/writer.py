"""The one writer of an array's keys: a value to a chunk's or a whole shard's stored bytes."""
# Every element is checked as it is written; an InvalidCodePointError's index counts the written
# elements (inner chunk by inner chunk for a shard), for the caller to name by key and coordinates.

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from .._arguments import as_bytes
from ..errors import InvalidCodePointError
from .codecs import CodecChain
from .elements import ElementLayout
from .scratch import thread_scratch
from .shard import ShardIndex, ShardLayout

__all__ = ["KeyWriter", "first_invalid", "value_endian"]

Endian = Literal["little", "big"]
_UINT8 = np.dtype(np.uint8)


def value_endian(value: npt.NDArray[Any]) -> Endian:
    """The byte order of a ``U`` array's code units in memory (``>U`` stays big-endian)."""
    order = value.dtype.byteorder
    if order in "<>":
        return "big" if order == ">" else "little"
    return "little" if sys.byteorder == "little" else "big"


def first_invalid(value: npt.NDArray[Any]) -> InvalidCodePointError | None:
    """One kernel pass over a ``U`` value in memory order: its first bad code unit, or None."""
    elements = ElementLayout(value.dtype.itemsize, value_endian(value))
    if value.flags.c_contiguous or value.flags.f_contiguous:
        units = value.reshape(-1, order="A")  # in memory order: a view
    else:
        units = np.ascontiguousarray(value).reshape(-1)
    try:
        elements.validate(units)
    except InvalidCodePointError as exc:
        return exc
    return None


@dataclass(frozen=True)
class KeyWriter:
    """Encodes values into the stored bytes of chunks (or whole shards) of one shape."""

    # elements, shape and order are a chunk's (an inner chunk's, when sharded), as stored.
    elements: ElementLayout
    shape: tuple[int, ...]
    order: Literal["C", "F"]
    chain: CodecChain | None  # None: zarr's codec objects compress
    shard: ShardLayout | None = None

    @property
    def chunk_nbytes(self) -> int:
        return math.prod(self.shape) * self.elements.length_bytes

    def compress(self, data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        """A chunk's stored bytes with its codecs undone, with them applied."""
        assert self.chain is not None  # a writer with a codec chain
        if self.chain.raw:
            return data
        return np.frombuffer(self.chain.encode(data), _UINT8)

    def chunk(self, value: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
        """A chunk-shaped ``U`` value (any byte order and width) as stored, before its codecs."""
        # Shares the value's memory when it is laid out, ordered and as wide as stored; else a new
        # buffer. A string too long for the stored width raises StringTooLongError.
        in_order = value.ndim <= 1 or (
            value.flags.c_contiguous if self.order == "C" else value.flags.f_contiguous
        )
        source = value if in_order else np.array(value, order=self.order)
        units = source.reshape(-1, order="A").view(_UINT8)
        held = value_endian(value)
        width = value.dtype.itemsize // 4
        if held == self.elements.endian and width == self.elements.units:
            self.elements.validate(units)
            return units
        out = np.empty(value.size * self.elements.length_bytes, _UINT8)
        self.elements.store(units, out, held, from_units=width)
        return out

    def whole_shard(
        self, value: npt.NDArray[Any], grid: Sequence[int], keep_empty: bool, fill: Any
    ) -> npt.NDArray[np.uint8] | None:
        """A shard's stored bytes (inner chunks, codecs applied, and index), or None if empty."""
        # value holds the shard's grid of inner chunks, edge ones padded; inner chunks equal to
        # fill are left out unless keep_empty.
        layout, chain = self.shard, self.chain
        assert layout is not None and chain is not None  # a writer of shards
        grid = tuple(grid)
        slots = math.prod(grid)  # the inner chunks written, C order
        chunk_nbytes = self.chunk_nbytes
        index_nbytes = layout.index_nbytes
        at_start = layout.index_location == "start"
        base = index_nbytes if at_start else 0
        data_nbytes = slots * chunk_nbytes
        raw = chain.raw
        if raw:
            shard = np.empty(data_nbytes + index_nbytes, _UINT8)
            data = shard[base : base + data_nbytes]
        else:
            data = thread_scratch().bytes("shard to compress", data_nbytes)
        self._fill_slots(value, grid, data)
        keep = np.ones(slots, np.bool_) if keep_empty else self._not_fill(data, slots, fill)
        kept = np.flatnonzero(keep)
        if not kept.size:
            return None
        everywhere = np.indices(grid).reshape(len(grid), -1)
        locals_ = np.asarray(np.ravel_multi_index(tuple(everywhere), layout.chunks_per_shard))[kept]
        if raw:
            rows = data.reshape(slots, chunk_nbytes)
            if kept.size < slots:
                rows[: kept.size] = rows[kept]  # close the gaps the empty chunks leave
            sizes = np.full(kept.size, chunk_nbytes, np.uint64)
            total = base + kept.size * chunk_nbytes
        else:
            pieces = [
                as_bytes(chain.encode(data[slot * chunk_nbytes : (slot + 1) * chunk_nbytes]))
                for slot in kept.tolist()
            ]
            sizes = np.array([piece.nbytes for piece in pieces], np.uint64)
            total = base + int(sizes.sum())
            shard = np.empty(total + (0 if at_start else index_nbytes), _UINT8)
            at = base
            for piece in pieces:
                shard[at : at + piece.nbytes] = np.frombuffer(piece, _UINT8)
                at += piece.nbytes
        offsets = np.zeros(layout.count, np.uint64)
        nbytes = np.zeros(layout.count, np.uint64)
        present = np.zeros(layout.count, np.bool_)
        offsets[locals_] = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.uint64) + base
        nbytes[locals_] = sizes
        present[locals_] = True
        where = slice(0, index_nbytes) if at_start else slice(total, total + index_nbytes)
        layout.encode_index(ShardIndex(offsets, nbytes, present), shard[where])
        return shard[: total if at_start else total + index_nbytes]

    def _fill_slots(
        self, value: npt.NDArray[Any], grid: tuple[int, ...], data: npt.NDArray[np.uint8]
    ) -> None:
        """The inner chunks of ``value``, one after another in C order, as stored; checked."""
        chunk = self.shape
        in_c_order = self.order == "C" or len(chunk) == 1
        if in_c_order and all(g == 1 for g in grid[1:]) and value.flags.c_contiguous:
            placed = value.reshape(-1).view(_UINT8)  # the inner chunks are the value's own bytes
        else:
            ndim = len(chunk)
            split = value.reshape(tuple(n for pair in zip(grid, chunk) for n in pair))
            inner_axes = [2 * i + 1 for i in range(ndim)]
            if not in_c_order:
                inner_axes.reverse()
            stored = tuple(chunk if in_c_order else chunk[::-1])
            target = data.view(value.dtype).reshape(grid + stored)
            target[...] = split.transpose([2 * i for i in range(ndim)] + inner_axes)
            placed = data  # checked as placed: what is stored is what was checked
        self.elements.store(placed, data, value_endian(value))

    def _not_fill(
        self, data: npt.NDArray[np.uint8], slots: int, fill: Any
    ) -> npt.NDArray[np.bool_]:
        """Which of the ``slots`` stored inner chunks in ``data`` are not wholly ``fill``."""
        units = np.array(fill, self.elements.dtype).reshape(1).view(np.uint32)
        rows = data.view(np.uint32).reshape(slots, -1)
        # the usual answer from each chunk's first element; the rest checked whole
        keep: npt.NDArray[np.bool_] = (rows[:, : units.size] != units).any(axis=1)
        for slot in np.flatnonzero(~keep).tolist():
            keep[slot] = bool((rows[slot].reshape(-1, units.size) != units).any())
        return keep
