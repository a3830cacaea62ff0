"""The element runs of a chunk that a selection needs, read by byte range when they are few.

The pipeline reads a few elements of a large raw chunk this way
(:meth:`~fixedutf32._source.reader.KeyReader.read_runs`), not the whole chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = ["ElementRuns", "element_runs"]

Order = Literal["C", "F"]

# A selection is read by byte range when the runs it needs (gaps of up to this
# many bytes read along) add up to at most this fraction of the chunk: above
# it, one read of the whole chunk costs less than the separate reads.
_RANGE_GAP_BYTES = 4096
_RANGE_FRACTION = 0.25


@dataclass(frozen=True)
class ElementRuns:
    """The element runs of a chunk a selection needs, and where each selected element is."""

    # selected: each selected element's flat (stored order) index in the chunk, shaped as the
    # result; starts, lengths: the runs to read, in elements; bases: where each run goes in the
    # buffer read into; positions: where each selected element is in that buffer.
    selected: np.ndarray[Any, np.dtype[np.intp]]
    starts: np.ndarray[Any, np.dtype[np.intp]]
    lengths: np.ndarray[Any, np.dtype[np.intp]]
    bases: np.ndarray[Any, np.dtype[np.intp]]
    positions: np.ndarray[Any, np.dtype[np.intp]]


def _block_runs(
    shape: tuple[int, ...], order: Order, selection: tuple[slice, ...]
) -> ElementRuns | None:
    """:func:`element_runs` for a block of plain slices, worked out without a per-element table."""
    bounds = [s.indices(n)[:2] for s, n in zip(selection, shape)]
    extents = [max(0, stop - start) for start, stop in bounds]
    total = math.prod(extents)
    if not total or total > _RANGE_FRACTION * math.prod(shape):
        return None
    axes = list(range(len(shape)))  # slowest to fastest in the chunk's order
    if order == "F":
        axes.reverse()
    # A run covers one axis part-way (`split`) and every faster axis whole.
    k = len(axes) - 1
    while k > 0 and extents[axes[k]] == shape[axes[k]]:
        k -= 1
    split, faster, slower = axes[k], axes[k + 1 :], axes[:k]
    strides = {}
    step = 1
    for axis in reversed(axes):
        strides[axis] = step
        step *= shape[axis]
    length = extents[split] * math.prod(shape[a] for a in faster)
    starts = np.array([sum(bounds[a][0] * strides[a] for a in axes)], dtype=np.intp)
    for axis in slower:  # every combination of the slower axes' positions, in order
        offsets = np.arange(extents[axis], dtype=np.intp) * strides[axis]
        starts = (starts[:, None] + offsets[None, :]).reshape(-1)
    lengths = np.full(starts.size, length, dtype=np.intp)
    bases = np.arange(starts.size, dtype=np.intp) * length
    # the runs, one after the other, are the block in the chunk's order
    positions = np.arange(total, dtype=np.intp).reshape(tuple(extents), order=order)
    in_chunk = (starts[:, None] + np.arange(length, dtype=np.intp)[None, :]).reshape(-1)
    return ElementRuns(in_chunk[positions], starts, lengths, bases, positions)


def element_runs(
    shape: tuple[int, ...], order: Order, length_bytes: int, selection: Any
) -> ElementRuns | None:
    """The runs to read for ``selection`` of a chunk of ``shape``, if they are few enough bytes."""
    count = math.prod(shape)
    if count <= 1:
        return None
    if (
        type(selection) is tuple
        and len(selection) == len(shape)
        and all(type(s) is slice and s.step in (None, 1) for s in selection)
    ):
        return _block_runs(shape, order, selection)
    flat = np.arange(count, dtype=np.intp).reshape(shape, order=order)
    selected = flat[selection]
    wanted = np.unique(selected)
    if wanted.size > _RANGE_FRACTION * count:
        return None
    gap = max(1, _RANGE_GAP_BYTES // length_bytes)
    breaks = np.flatnonzero(np.diff(wanted) > gap) + 1
    starts = wanted[np.concatenate(([0], breaks))]
    stops = wanted[np.concatenate((breaks - 1, [wanted.size - 1]))] + 1
    lengths = stops - starts
    if lengths.sum() > _RANGE_FRACTION * count:
        return None
    bases = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.intp)
    run = np.searchsorted(starts, selected, side="right") - 1
    positions = bases[run] + (selected - starts[run])
    return ElementRuns(selected, starts, lengths, bases, positions)
