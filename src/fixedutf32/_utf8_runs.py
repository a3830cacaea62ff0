"""A one-axis read of raw local chunk files straight to Arrow UTF-8, two runs meeting in the middle.

The chunks are cut into one run per thread, taken in pairs.  Each pair shares a region of one
values buffer sized for the worst case (4 bytes per code unit): its first run writes backward so
that its UTF-8 ends at ``middle``, its second forward from there.  Two threads thus fill one
contiguous stretch without knowing each other's sizes, and the values need no second copy (joining
separate buffers cost a third of the read); later pairs are moved down behind the first.  A chunk
not stored reads as the fill value's UTF-8.  Anything unusual (another store, a file out of the
ordinary, an invalid code unit) returns None: the caller reads the careful way, which names errors
as the pipeline does.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ._arrow import ArrowStrings
from ._pool import new_array
from ._source.elements import UTF8_SLACK
from ._source.reader import Get, KeyReader

__all__ = ["read_utf8_runs"]

_INT32_MAX = 2**31 - 1
# map(function, runs): each run's call, as many at once as there are runs (a pool's map).
Map = Callable[[Callable[["_Run"], "int | None"], "list[_Run]"], Iterable["int | None"]]


@dataclass(frozen=True)
class _Run:
    """Chunks ``chunks[a:b]`` of the read, written forward from ``pos`` or backward to it."""

    a: int
    b: int
    pos: int
    limit: int
    backward: bool


def read_utf8_runs(
    reader: KeyReader,
    source: str | Get,
    within: str | None,
    extent: int,
    selected: tuple[int, int],
    units: int,
    threads: int,
    large: bool,
    mapper: Callable[[int], Map],
    fill: bytes | None,
) -> ArrowStrings | None:
    """Elements ``selected[0]:selected[1]`` as Arrow strings, or None to read the careful way."""
    # extent: elements per chunk; mapper(n): a map running n calls at once (a thread pool's);
    # fill: the fill value's UTF-8 for chunks not stored (None: such a read goes the careful way).
    start, stop = selected
    if stop <= start:
        return None
    chunks = np.arange(start // extent, (stop - 1) // extent + 1, dtype=np.intp)
    lows = np.maximum(start - chunks * extent, 0)
    highs = np.minimum(stop - chunks * extent, extent)
    firsts = np.concatenate(([0], np.cumsum(highs - lows)))
    cut = [round(i * chunks.size / threads) for i in range(threads + 1)]
    bounds = [(a, b) for a, b in itertools.pairwise(cut) if b > a]

    def worst(a: int, b: int) -> int:
        return 4 * units * int(firsts[b] - firsts[a])

    runs: list[_Run] = []
    pairs: list[tuple[int, int]] = []  # (middle, first run's index) of each pair
    region = 0
    for p in range(0, len(bounds), 2):
        pair = bounds[p : p + 2]
        middle = region + (worst(*pair[0]) if len(pair) == 2 else 0)
        pairs.append((middle, len(runs)))
        if len(pair) == 2:
            runs.append(_Run(*pair[0], middle, region, True))
        forward = pair[-1]
        region = middle + worst(*forward) + UTF8_SLACK
        runs.append(_Run(*forward, middle, region, False))
    if not large and region > _INT32_MAX:
        return None  # offsets into the whole region would not fit int32
    values = new_array(region, np.uint8)
    offsets = new_array(int(firsts[-1]) + 1, np.int64 if large else np.int32)

    def run(r: _Run) -> int | None:
        return reader.read_utf8(
            [(int(i),) for i in chunks[r.a : r.b]],
            source,
            (lows[r.a : r.b], highs[r.a : r.b]),
            offsets,
            int(firsts[r.a]),
            values,
            (r.pos, r.limit),
            backward=r.backward,
            within=within,
            fill=fill,
        )

    reached = list(mapper(len(runs))(run, runs)) if len(runs) > 1 else [run(runs[0])]
    if any(pos is None for pos in reached):
        return None
    # Each pair's stretch [its first run's start, its last run's end), moved behind the first.
    base = end = 0
    for p, (middle, i) in enumerate(pairs):
        last = pairs[p + 1][1] if p + 1 < len(pairs) else len(runs)
        low = reached[i] if runs[i].backward else middle
        high = reached[last - 1]
        assert low is not None and high is not None  # checked above
        elements = slice(int(firsts[runs[i].a]), int(firsts[runs[last - 1].b]))
        if p == 0:
            base, end = low, low
        if low != end:
            values[end : end + high - low] = values[low:high]
        shift = end - low - base
        if shift:
            offsets[elements] += shift
        end += high - low
    offsets[-1] = end - base
    return ArrowStrings(offsets, values[base:end], large)
