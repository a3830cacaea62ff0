"""Bytes and documents of the corpus's stores, written by hand (NumPy and the standard library).

Nothing here checks anything: the corpus needs stores that break the rules.
"""

from __future__ import annotations

import gzip
import itertools
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

NAME = "fixed_length_utf32"
# A value as the generator writes it: text, or text pieces and raw code points in order.
Units = str | tuple[str | int, ...]


def code_points(value: Units) -> list[int]:
    """The code points of a value: a ``str``, or ``str`` pieces and raw code points in order."""
    if isinstance(value, str):
        return [ord(c) for c in value]
    points: list[int] = []
    for piece in value:
        points.extend([ord(c) for c in piece] if isinstance(piece, str) else [piece])
    return points


def flatten(values: Any) -> list[Units]:
    """The values of nested lists in C order (a tuple is one value, not a level)."""
    if isinstance(values, list):
        return [value for item in values for value in flatten(item)]
    return [values]


def elements(values: Any, shape: Sequence[int], capacity: int) -> np.ndarray:
    """The code units of an array of values: uint32, ``shape + (capacity,)``, zero-padded."""
    units = np.zeros((*shape, capacity), dtype=np.uint32)
    indices = itertools.product(*(range(n) for n in shape))
    for index, value in zip(indices, flatten(values), strict=True):
        points = code_points(value)
        units[index][: len(points)] = points
    return units


def chunk_bytes(units: np.ndarray, endian: str, order: str = "C") -> bytes:
    """A chunk's bytes: each element's units in a row, elements in C or F order."""
    ndim = units.ndim - 1
    if order == "F":
        units = units.transpose((*reversed(range(ndim)), ndim))
    return np.ascontiguousarray(units).astype("<u4" if endian == "little" else ">u4").tobytes()


def split_chunks(
    values: Any,
    shape: Sequence[int],
    chunk_shape: Sequence[int],
    capacity: int,
    endian: str,
    *,
    order: str = "C",
    fill: Units = "",
    skip: Sequence[tuple[int, ...]] = (),
) -> dict[tuple[int, ...], bytes]:
    """Every chunk of an array (but those in ``skip``), as the bytes codec writes it.

    The part of an edge chunk outside the array holds the fill value, as
    zarr-python writes it.
    """
    units = elements(values, shape, capacity)
    fill_units = elements(fill, (), capacity)
    grid = [-(-n // c) for n, c in zip(shape, chunk_shape)]
    chunks = {}
    for index in itertools.product(*(range(n) for n in grid)):
        if index in skip:
            continue
        block = np.empty((*chunk_shape, capacity), dtype=np.uint32)
        block[...] = fill_units
        region = tuple(
            slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(index, chunk_shape, shape)
        )
        inner = tuple(slice(0, s.stop - s.start) for s in region)
        block[inner] = units[region]
        chunks[index] = chunk_bytes(block, endian, order)
    return chunks


def v3_key(index: tuple[int, ...]) -> str:
    return "c/" + "/".join(map(str, index)) if index else "c"


def v2_key(index: tuple[int, ...]) -> str:
    return ".".join(map(str, index)) if index else "0"


def data_type(length_bytes: Any, **extra: Any) -> dict[str, Any]:
    return {"name": NAME, "configuration": {"length_bytes": length_bytes, **extra}}


def bytes_codec(endian: str | None) -> dict[str, Any]:
    if endian is None:
        return {"name": "bytes"}
    return {"name": "bytes", "configuration": {"endian": endian}}


def v3_metadata(
    shape: Sequence[int],
    chunk_shape: Sequence[int],
    dtype: Any,
    fill_value: Any,
    codecs: list[Any],
) -> dict[str, Any]:
    return {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}},
        "chunk_key_encoding": {"name": "default"},
        "fill_value": fill_value,
        "codecs": codecs,
        "attributes": {},
    }


def v2_metadata(
    shape: Sequence[int],
    chunks: Sequence[int],
    dtype: str,
    fill_value: Any,
    *,
    order: str = "C",
    compressor: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "zarr_format": 2,
        "shape": list(shape),
        "chunks": list(chunks),
        "dtype": dtype,
        "compressor": compressor,
        "fill_value": fill_value,
        "order": order,
        "filters": None,
    }


def gzip_bytes(data: bytes) -> bytes:
    """The gzip codec's output (RFC 1952), with no time stamp so the corpus is reproducible."""
    return gzip.compress(data, compresslevel=5, mtime=0)


def zlib_bytes(data: bytes) -> bytes:
    """numcodecs' zlib compressor's output (RFC 1950)."""
    return zlib.compress(data, 1)


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the sharding codec's index checksum."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def shard_bytes(inner: Sequence[bytes | None]) -> bytes:
    """A shard: the inner chunks in order, then the index (offset, size; all ones if absent)
    as little-endian uint64 pairs and its CRC-32C (index codecs ``bytes`` + ``crc32c``)."""
    body = b""
    index = b""
    for data in inner:
        if data is None:
            index += struct.pack("<QQ", 2**64 - 1, 2**64 - 1)
        else:
            index += struct.pack("<QQ", len(body), len(data))
            body += data
    return body + index + struct.pack("<I", crc32c(index))


def vlen_utf8_bytes(values: Sequence[str]) -> bytes:
    """A vlen-utf8 chunk (numcodecs VLenUTF8): a count, then each item's length and UTF-8."""
    out = struct.pack("<I", len(values))
    for value in values:
        data = value.encode("utf-8")
        out += struct.pack("<I", len(data)) + data
    return out
