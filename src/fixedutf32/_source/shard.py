"""The index of a ``sharding_indexed`` shard, read and checked.

A shard holds the chunks of a block of ``chunks_per_shard`` inner chunks and
an index of one ``(offset, nbytes)`` pair of uint64 per inner chunk, in C
order, at the start or the end of the shard, optionally followed by its
crc32c; ``(2**64 - 1, 2**64 - 1)`` marks a chunk the shard does not hold.
Every pair is checked against the shard's size before any chunk is read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from .._arguments import as_bytes
from ..errors import CorruptChunkError
from .sizes import shard_index_size_error

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = ["ShardLayout", "ShardIndex"]

_EMPTY = np.uint64(2**64 - 1)
_ENTRY_BYTES = 16
_CHECKSUM_BYTES = 4


@dataclass(frozen=True)
class ShardIndex:
    """Where each inner chunk of one shard is, and which the shard holds."""

    # One entry per inner chunk, in C order; offsets and nbytes checked to lie inside the shard,
    # clear of the index.
    offsets: npt.NDArray[np.uint64]
    nbytes: npt.NDArray[np.uint64]
    present: npt.NDArray[np.bool_]

    def entries(self) -> Iterator[tuple[int, int, int]]:
        """``(local, offset, nbytes)`` of each chunk the shard holds, ``local`` its flat C index."""
        for local in np.flatnonzero(self.present).tolist():
            yield local, int(self.offsets[local]), int(self.nbytes[local])


@dataclass(frozen=True)
class ShardLayout:
    """How the inner chunks of a sharded array sit in one shard."""

    chunks_per_shard: tuple[int, ...]
    index_endian: Literal["little", "big"] = "little"  # of the index's uint64 values
    index_checksum: bool = False  # a crc32c of the index follows it
    index_location: Literal["end", "start"] = "end"
    count: int = field(init=False)  # inner chunks per shard
    index_nbytes: int = field(init=False)  # checksum included

    def __post_init__(self) -> None:
        if self.index_endian not in ("little", "big"):
            raise ValueError(f"index_endian must be 'little' or 'big', got {self.index_endian!r}")
        if self.index_location not in ("end", "start"):
            raise ValueError(
                f"index_location must be 'end' or 'start', got {self.index_location!r}"
            )
        count = math.prod(self.chunks_per_shard)
        object.__setattr__(self, "count", count)
        object.__setattr__(
            self,
            "index_nbytes",
            _ENTRY_BYTES * count + (_CHECKSUM_BYTES if self.index_checksum else 0),
        )

    def chunk_index(self, shard_index: Sequence[int], local: int) -> tuple[int, ...]:
        """The grid index of inner chunk ``local`` (flat, C order) of shard ``shard_index``."""
        position = []
        for extent in reversed(self.chunks_per_shard):
            local, i = divmod(local, extent)
            position.append(i)
        position.reverse()
        return tuple(s * n + i for s, n, i in zip(shard_index, self.chunks_per_shard, position))

    def read_index(self, shard: Buffer, *, key: str, max_chunk_nbytes: int) -> ShardIndex:
        """Read and check the index of a shard (codecs after sharding undone) into new arrays."""
        # max_chunk_nbytes: the most one stored inner chunk may hold (CodecChain.max_stored_nbytes).
        data = as_bytes(shard)
        size = data.nbytes
        index_nbytes = self.index_nbytes
        if size < index_nbytes:
            raise shard_index_size_error(key, size, self.count, index_nbytes)
        start = self.index_offset(size)
        return self.parse_index(
            data[start : start + index_nbytes], size, key=key, max_chunk_nbytes=max_chunk_nbytes
        )

    def index_offset(self, shard_nbytes: int) -> int:
        """Where the index starts in a shard of ``shard_nbytes`` (>= :attr:`index_nbytes`) bytes."""
        return 0 if self.index_location == "start" else shard_nbytes - self.index_nbytes

    def parse_index(
        self, raw: Buffer, shard_nbytes: int, *, key: str, max_chunk_nbytes: int
    ) -> ShardIndex:
        """Read and check the index alone (:meth:`index_offset`), against the whole shard's size."""
        # For a reader that fetches the index first, then only the inner chunks it needs: every
        # entry is checked as read_index checks it.
        size = shard_nbytes
        index_nbytes = self.index_nbytes
        if size < index_nbytes:
            raise shard_index_size_error(key, size, self.count, index_nbytes)
        raw = as_bytes(raw)
        if raw.nbytes != index_nbytes:
            raise ValueError(f"raw holds {raw.nbytes} bytes; the index holds {index_nbytes}")
        at_start = self.index_location == "start"
        if self.index_checksum:
            try:
                raw = as_bytes(_crc32c().decode(raw))
            except Exception as exc:  # noqa: BLE001 - numcodecs' error: the index is corrupt
                raise CorruptChunkError(
                    key, f"the shard index's crc32c does not match ({exc})"
                ) from None
        dtype = np.dtype("<u8" if self.index_endian == "little" else ">u8")
        pairs = np.frombuffer(raw, dtype, count=2 * self.count).reshape(-1, 2)
        offsets, nbytes = pairs[:, 0].astype(np.uint64), pairs[:, 1].astype(np.uint64)
        low = index_nbytes if at_start else 0
        high = size if at_start else size - index_nbytes
        # The common shard, every chunk held and inside, in a few reductions (a shard is checked
        # per read); anything else is sorted out below, entry by entry.  No sum can wrap: both
        # fields are at most high, a file's size.
        if (
            self.count
            and int(offsets.min()) >= low
            and int(offsets.max()) <= high
            and int(nbytes.max()) <= min(high, max_chunk_nbytes)
            and int((offsets + nbytes).max()) <= high
        ):
            return ShardIndex(offsets, nbytes, np.ones(self.count, np.bool_))
        empty_offset, empty_nbytes = offsets == _EMPTY, nbytes == _EMPTY
        present = ~(empty_offset & empty_nbytes)
        half = np.flatnonzero(empty_offset != empty_nbytes)
        if half.size:
            local = int(half[0])
            raise CorruptChunkError(
                key,
                f"shard index entry {local} marks the chunk empty in one field only "
                f"(offset {int(offsets[local])}, nbytes {int(nbytes[local])})",
            )
        # uint64 arithmetic cannot wrap here: both fields are below 2**64 - 1 and
        # compared one at a time before they are added.
        bad = present & (
            (offsets < low)
            | (offsets > high)
            | (nbytes > high - np.minimum(offsets, high))
            | (nbytes > max_chunk_nbytes)
        )
        if bad.any():
            local = int(np.flatnonzero(bad)[0])
            start, length = int(offsets[local]), int(nbytes[local])
            if length > max_chunk_nbytes:
                why = f"an inner chunk here holds at most {max_chunk_nbytes} bytes"
            else:
                why = f"the chunks of this shard of {size} bytes lie in bytes {low}..{high}"
            raise CorruptChunkError(
                key,
                f"shard index entry {local} points at bytes {start}..{start + length}; {why}",
            )
        return ShardIndex(offsets, nbytes, present)

    def encode_index(self, index: ShardIndex, out: Buffer) -> None:
        """Write ``index`` into ``out`` as a shard stores it: :meth:`parse_index`'s counterpart."""
        # out: exactly index_nbytes, the shard's own at index_offset; offsets as in the whole shard
        # (past the index when it is at the start); the crc32c appended as zarr's crc32c codec does.
        target = np.frombuffer(as_bytes(out), np.uint8)  # a view of out, which must be writable
        if target.nbytes != self.index_nbytes:
            raise ValueError(
                f"out holds {target.nbytes} bytes; the index of {self.count} chunks "
                f"holds {self.index_nbytes}"
            )
        if index.present.size != self.count:
            raise ValueError(
                f"index has {index.present.size} entries; a shard here has {self.count} chunks"
            )
        dtype = np.dtype("<u8" if self.index_endian == "little" else ">u8")
        pairs = target[: _ENTRY_BYTES * self.count].view(dtype).reshape(-1, 2)
        pairs[:, 0] = np.where(index.present, index.offsets, _EMPTY)
        pairs[:, 1] = np.where(index.present, index.nbytes, _EMPTY)
        if self.index_checksum:
            encoded = as_bytes(_crc32c().encode(target[: _ENTRY_BYTES * self.count]))
            target[_ENTRY_BYTES * self.count :] = np.frombuffer(
                encoded[-_CHECKSUM_BYTES:], np.uint8
            )


@functools.cache
def _crc32c() -> Any:
    # numcodecs' crc32c codec keeps no state between calls: one serves every shard and thread.
    from numcodecs import CRC32C

    return CRC32C(location="end")
