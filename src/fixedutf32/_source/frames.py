"""What a compressed frame says about itself, checked before it is inflated."""
# Decompressors allocate what a frame declares and c-blosc trusts cbytes: a frame declaring what the
# chunk cannot be is refused, so a lying header neither over-reads nor inflates a bomb.

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .._arguments import as_bytes
from ..errors import CorruptChunkError
from .sizes import DecodedSize

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = ["FrameKind", "check_frame", "zstd_content_size"]

# The compressors whose frames declare their decoded size.
FrameKind = Literal["zstd", "blosc", "lz4"]

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BLOSC_HEADER = 16
_BLOSC_MEMCPYED = 0x02  # the frame holds the bytes as they are, after its header


def zstd_content_size(frame: Buffer, key: str) -> int | None:
    """The content size a zstd frame header declares (or None); CorruptChunkError if no header."""
    head = as_bytes(frame)[:18].tobytes()
    if head[:4] != _ZSTD_MAGIC:
        raise CorruptChunkError(
            key, f"expected a zstd frame (magic number 28 b5 2f fd), got {head[:4].hex(' ')!r}"
        )
    if len(head) < 5:
        raise CorruptChunkError(key, f"a zstd frame header needs 5 bytes or more, got {len(head)}")
    descriptor = head[4]
    if descriptor & 0x08:
        raise CorruptChunkError(key, "the zstd frame header sets its reserved bit")
    single_segment = descriptor >> 5 & 1
    start = 5 + (not single_segment) + (0, 1, 2, 4)[descriptor & 3]
    width = (single_segment, 2, 4, 8)[descriptor >> 6]
    if len(head) < start + width:
        raise CorruptChunkError(
            key, f"the zstd frame header needs {start + width} bytes, the chunk holds {len(head)}"
        )
    if not width:
        return None
    return int.from_bytes(head[start : start + width], "little") + (256 if width == 2 else 0)


def _blosc(frame: Buffer, expected: DecodedSize, key: str) -> int:
    view = as_bytes(frame)
    held = view.nbytes
    if held < _BLOSC_HEADER:
        raise CorruptChunkError(
            key, f"a blosc frame starts with a 16-byte header; the chunk holds {held} bytes"
        )
    head = view[:_BLOSC_HEADER].tobytes()
    flags = head[2]
    nbytes = int.from_bytes(head[4:8], "little")
    blocksize = int.from_bytes(head[8:12], "little")
    cbytes = int.from_bytes(head[12:16], "little")
    if cbytes != held:
        raise CorruptChunkError(
            key, f"the blosc header says the frame holds {cbytes} bytes; {held} are stored"
        )
    _declared("blosc", nbytes, expected, key)
    if flags & _BLOSC_MEMCPYED:
        if cbytes != nbytes + _BLOSC_HEADER:
            raise CorruptChunkError(
                key,
                f"a blosc frame that copies its {nbytes} bytes holds {nbytes + _BLOSC_HEADER}; "
                f"this one holds {cbytes}",
            )
    elif nbytes:
        if not blocksize:
            raise CorruptChunkError(key, "the blosc header gives a block size of 0")
        blocks = -(-nbytes // blocksize)
        if _BLOSC_HEADER + 4 * blocks > cbytes:
            raise CorruptChunkError(
                key,
                f"the blosc header gives {blocks} blocks of {blocksize} bytes, whose offsets "
                f"alone need {_BLOSC_HEADER + 4 * blocks} bytes; the frame holds {cbytes}",
            )
    return nbytes


def _lz4(frame: Buffer, expected: DecodedSize, key: str) -> int:
    head = as_bytes(frame)[:4].tobytes()
    if len(head) < 4:
        raise CorruptChunkError(
            key, f"an lz4 frame starts with its 4-byte size; the chunk holds {len(head)} bytes"
        )
    nbytes = int.from_bytes(head, "little")
    _declared("lz4", nbytes, expected, key)
    return nbytes


def _declared(name: str, nbytes: int, expected: DecodedSize, key: str) -> None:
    if not expected.allows(nbytes):
        raise CorruptChunkError(
            key,
            f"the {name} frame declares {nbytes} bytes; a chunk here holds "
            f"{expected.describe()} (refused before inflating)",
        )


def check_frame(kind: FrameKind, frame: Buffer, expected: DecodedSize, key: str) -> int | None:
    """Check what a zstd, blosc or lz4 frame declares against ``expected``; its declared size."""
    # None: a zstd frame that declares none; it is then inflated into a buffer of the expected size.
    if kind == "blosc":
        return _blosc(frame, expected, key)
    if kind == "lz4":
        return _lz4(frame, expected, key)
    declared = zstd_content_size(frame, key)
    if declared is not None:
        _declared("zstd", declared, expected, key)
    return declared
