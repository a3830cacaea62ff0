"""Where an array's chunks are: store keys both ways, element coordinates, edge chunks."""
# Edge chunks are stored at full size, the part past the array padding. Keys: V3 default ("c/1/0",
# "c.1.0", "c" for 0-d) or v2 ("1.0", "1/0", "0" for 0-d), relative to the array.

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ChunkGrid", "Index"]

Index = tuple[int, ...]
_DIGITS = frozenset("0123456789")


def _extents(value: Sequence[int], name: str, minimum: int) -> Index:
    try:
        extents = tuple(operator.index(n) for n in value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {value!r}") from None
    if any(type(n) is bool or n < minimum for n in value):
        raise ValueError(f"{name} must hold integers >= {minimum}, got {list(value)}")
    return extents


@dataclass(frozen=True)
class ChunkGrid:
    """The regular chunk grid of one array, and how its chunks are named."""

    # chunk_count is a Python int: 10**12 chunks is fine, nothing is listed.

    shape: Index
    chunk_shape: Index
    key_encoding: Literal["default", "v2"] = "default"
    separator: Literal["/", "."] = "/"
    order: Literal["C", "F"] = "C"
    grid_shape: Index = field(init=False)
    chunk_count: int = field(init=False)
    chunk_elements: int = field(init=False)

    def __post_init__(self) -> None:
        shape = _extents(self.shape, "shape", 0)
        chunks = _extents(self.chunk_shape, "chunk_shape", 1)
        if len(chunks) != len(shape):
            raise ValueError(
                f"chunk_shape {list(chunks)} has {len(chunks)} dimensions; shape {list(shape)} "
                f"has {len(shape)}"
            )
        if self.key_encoding not in ("default", "v2"):
            raise ValueError(f"key_encoding must be 'default' or 'v2', got {self.key_encoding!r}")
        if self.separator not in ("/", "."):
            raise ValueError(f"separator must be '/' or '.', got {self.separator!r}")
        if self.order not in ("C", "F"):
            raise ValueError(f"order must be 'C' or 'F', got {self.order!r}")
        # integer ceiling: s / c in floating point is off for extents above 2**53
        grid = tuple(-(-s // c) for s, c in zip(shape, chunks))
        set_ = object.__setattr__
        set_(self, "shape", shape)
        set_(self, "chunk_shape", chunks)
        set_(self, "grid_shape", grid)
        set_(self, "chunk_count", math.prod(grid))
        set_(self, "chunk_elements", math.prod(chunks))

    @property
    def ndim(self) -> int:
        """Dimensions of the array."""
        return len(self.shape)

    def key(self, index: Sequence[int]) -> str:
        """The store key of the chunk at grid ``index``, relative to the array."""
        parts = [str(int(i)) for i in index]
        if self.key_encoding == "default":
            return self.separator.join(["c", *parts])
        return self.separator.join(parts) if parts else "0"

    def parse_key(self, key: str) -> Index | None:
        """The grid index a key names, or None unless it is exactly what :meth:`key` gives."""
        parts = key.split(self.separator)
        if self.key_encoding == "default":
            if parts[0] != "c":
                return None
            parts = parts[1:]
        elif not self.shape:
            return () if key == "0" else None
        if len(parts) != len(self.shape):
            return None
        index = []
        for part, extent in zip(parts, self.grid_shape):
            if not part or not _DIGITS.issuperset(part) or (part[0] == "0" and len(part) > 1):
                return None
            i = int(part)
            if i >= extent:
                return None
            index.append(i)
        return tuple(index)

    def indices(self) -> Iterator[Index]:
        """Every grid index in C order, lazily (``()`` once for 0-d; none when an extent is 0)."""
        grid = self.grid_shape
        if 0 in grid:
            return
        index = [0] * len(grid)
        while True:
            yield tuple(index)
            for axis in reversed(range(len(grid))):
                index[axis] += 1
                if index[axis] < grid[axis]:
                    break
                index[axis] = 0
            else:
                return

    def coordinates(self, index: Sequence[int], element: int) -> Index:
        """The array coordinates of a chunk's flat ``element`` (past shape: padding)."""
        local = []
        for extent in reversed(self.chunk_shape) if self.order == "C" else self.chunk_shape:
            element, i = divmod(element, extent)
            local.append(i)
        if self.order == "C":
            local.reverse()
        return tuple(i * c + j for i, c, j in zip(index, self.chunk_shape, local))

    def region(self, index: Sequence[int]) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
        """The array's slices the chunk at ``index`` covers, and the decoded chunk's for them."""
        target, source = [], []
        for i, s, c in zip(index, self.shape, self.chunk_shape):
            start = i * c
            stop = min(start + c, s)
            target.append(slice(start, stop))
            source.append(slice(0, stop - start))
        return tuple(target), tuple(source)

    def is_edge(self, index: Sequence[int]) -> bool:
        """Whether the chunk at ``index`` reaches past the array (holds padding)."""
        return any((i + 1) * c > s for i, c, s in zip(index, self.chunk_shape, self.shape))
