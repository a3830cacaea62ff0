"""How large a chunk is and may be at each step of its codec chain, and the
message when a chunk is not the size its metadata gives it.

A chunk of ``n`` elements of ``length_bytes`` holds exactly
``n * length_bytes`` bytes once its codecs are undone.  Before that, each
codec says how large its input may be: a checksum adds a known number of
bytes, a compressor at most :func:`compress_bound` of them.  A chunk read
from a store is refused as soon as a size it holds or declares is beyond
what the rules allow, before anything is inflated.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ChunkSizeError

__all__ = ["DecodedSize", "chunk_size_error", "compress_bound", "shard_index_size_error"]

# What any compressor may add to n bytes, generously: zstd adds n/256 + 64,
# gzip n/3000 + 18, lz4 n/255 + 20, bz2 n/100 + 600, blosc 16 + 4 per block
# (a frame it cannot shrink is stored as a copy).
_COMPRESS_SLACK = 64 * 1024


def compress_bound(nbytes: int) -> int:
    """The most bytes any supported compressor turns ``nbytes`` bytes into.

    Parameters
    ----------
    nbytes : int
        Bytes before compression.

    Returns
    -------
    int
        A generous upper bound (``nbytes + nbytes // 8 + 65536``): a stored
        frame larger than this cannot be a chunk of ``nbytes`` bytes.

    Examples
    --------
    >>> compress_bound(1 << 20)
    1245184
    """
    return nbytes + nbytes // 8 + _COMPRESS_SLACK


@dataclass(frozen=True, slots=True)
class DecodedSize:
    """The size a codec's decoded output must have: exactly, or at most, ``nbytes``.

    Attributes
    ----------
    nbytes : int
        The size in bytes.
    exact : bool
        True: exactly ``nbytes``; False: at most ``nbytes`` (after a codec
        whose output size is not fixed, such as a second compressor).

    Examples
    --------
    >>> DecodedSize(64).allows(64), DecodedSize(64).allows(60), DecodedSize(64, False).allows(60)
    (True, False, True)
    """

    nbytes: int
    exact: bool = True

    def allows(self, nbytes: int) -> bool:
        """Whether a decoded output of ``nbytes`` bytes meets the rule.

        Parameters
        ----------
        nbytes : int

        Returns
        -------
        bool
        """
        return nbytes == self.nbytes if self.exact else nbytes <= self.nbytes

    def describe(self) -> str:
        """``"64 bytes"`` or ``"at most 64 bytes"``, for messages.

        Returns
        -------
        str
        """
        return f"{self.nbytes} bytes" if self.exact else f"at most {self.nbytes} bytes"


def chunk_size_error(key: str, nbytes: int, elements: int, length_bytes: int) -> ChunkSizeError:
    """The error for a decoded chunk of ``nbytes`` where ``elements`` elements are expected.

    The one wording of this mismatch, for every reader of stored chunks.

    Parameters
    ----------
    key : str
        The chunk's store key.
    nbytes : int
        Bytes the chunk holds (once its codecs are undone).
    elements : int
        Elements a chunk of the array holds.
    length_bytes : int
        Bytes per element.

    Returns
    -------
    ChunkSizeError
        For the caller to raise (or report).

    Examples
    --------
    >>> print(chunk_size_error("c/0", 60, 4, 16))
    chunk c/0 holds 60 bytes; a chunk of 4 elements of length_bytes 16 needs 64
    """
    return ChunkSizeError(
        f"chunk {key} holds {nbytes} bytes; a chunk of {elements} elements of length_bytes "
        f"{length_bytes} needs {elements * length_bytes}"
    )


def shard_index_size_error(key: str, nbytes: int, chunks: int, index_nbytes: int) -> ChunkSizeError:
    """The error for a shard too small to hold its index (the shard's :func:`chunk_size_error`).

    Parameters
    ----------
    key : str
        The shard's store key.
    nbytes : int
        Bytes the shard holds (once the codecs after sharding are undone).
    chunks : int
        Chunks a shard holds.
    index_nbytes : int
        Bytes of the index of that many chunks.

    Returns
    -------
    ChunkSizeError

    Examples
    --------
    >>> print(shard_index_size_error("c/0", 20, 4, 68))
    shard c/0 holds 20 bytes; the index of a shard of 4 chunks needs 68
    """
    return ChunkSizeError(
        f"shard {key} holds {nbytes} bytes; the index of a shard of {chunks} chunks needs "
        f"{index_nbytes}"
    )
