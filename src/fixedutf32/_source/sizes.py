"""How large a chunk is and may be at each step of its codec chain; size-mismatch messages."""
# A chunk is refused as soon as a size it holds or declares is beyond the rules, before inflating.

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ChunkSizeError

__all__ = ["DecodedSize", "chunk_size_error", "compress_bound", "shard_index_size_error"]

# What any compressor may add to n bytes, generously: zstd adds n/256 + 64,
# gzip n/3000 + 18, lz4 n/255 + 20, bz2 n/100 + 600, blosc 16 + 4 per block
# (a frame it cannot shrink is stored as a copy).
_COMPRESS_SLACK = 64 * 1024


def compress_bound(nbytes: int) -> int:
    """A generous bound on what any supported compressor makes of ``nbytes`` bytes."""
    return nbytes + nbytes // 8 + _COMPRESS_SLACK


@dataclass(frozen=True, slots=True)
class DecodedSize:
    """The size a codec's decoded output must have: exactly, or at most (not exact), ``nbytes``."""

    nbytes: int
    exact: bool = True

    def allows(self, nbytes: int) -> bool:
        """Whether a decoded output of ``nbytes`` bytes meets the rule."""
        return nbytes == self.nbytes if self.exact else nbytes <= self.nbytes

    def describe(self) -> str:
        """``"64 bytes"`` or ``"at most 64 bytes"``, for messages."""
        return f"{self.nbytes} bytes" if self.exact else f"at most {self.nbytes} bytes"


def chunk_size_error(key: str, nbytes: int, elements: int, length_bytes: int) -> ChunkSizeError:
    """The one error for a decoded chunk of ``nbytes`` where ``elements`` elements are expected."""
    return ChunkSizeError(
        f"chunk {key} holds {nbytes} bytes; a chunk of {elements} elements of length_bytes "
        f"{length_bytes} needs {elements * length_bytes}"
    )


def shard_index_size_error(key: str, nbytes: int, chunks: int, index_nbytes: int) -> ChunkSizeError:
    """The error for a shard too small to hold its index (the shard's :func:`chunk_size_error`)."""
    return ChunkSizeError(
        f"shard {key} holds {nbytes} bytes; the index of a shard of {chunks} chunks needs "
        f"{index_nbytes}"
    )
