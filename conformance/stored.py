"""The stored chunks of a corpus store, with their bytes-to-bytes codecs undone (standard library).

The readers that have no store layer of their own (this package's chunk API,
NumPy, pyarrow) take their chunks from here: plain chunks by key, and the inner
chunks of a sharded array through its shard index.  Nothing is checked: that is
the reader's business.
"""

from __future__ import annotations

import copy
import gzip
import itertools
import json
import pathlib
import struct
import zlib
from collections.abc import Iterator
from typing import Any


class Unsupported(Exception):
    """A layout these helpers do not read (a compressor other than gzip or zlib, ...)."""


def load(root: pathlib.Path) -> dict[str, Any]:
    """The array's metadata document (``zarr.json`` or ``.zarray``), as parsed JSON."""
    for name in ("zarr.json", ".zarray"):
        path = root / name
        if path.exists():
            document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return document
    raise FileNotFoundError(f"no zarr.json or .zarray in {root}")


def _sharding(document: dict[str, Any]) -> dict[str, Any] | None:
    if document.get("zarr_format") != 3:
        return None
    codecs = document.get("codecs", [])
    if (
        len(codecs) == 1
        and isinstance(codecs[0], dict)
        and codecs[0].get("name") == "sharding_indexed"
    ):
        configuration: dict[str, Any] = codecs[0]["configuration"]
        return configuration
    return None


def unsharded(document: dict[str, Any]) -> dict[str, Any]:
    """The document of the same array seen as its inner chunks: for a sharded V3 array, its
    chunk grid is the inner chunk shape and its codecs the inner codecs; else unchanged."""
    sharding = _sharding(document)
    if sharding is None:
        return document
    view = copy.deepcopy(document)
    view["chunk_grid"]["configuration"]["chunk_shape"] = sharding["chunk_shape"]
    view["codecs"] = sharding["codecs"]
    return view


def _undo_v3(codecs: list[Any], data: bytes) -> bytes:
    names = [c if isinstance(c, str) else c.get("name") for c in codecs]
    after = names[names.index("bytes") + 1 :] if "bytes" in names else []
    for name in reversed(after):
        if name == "gzip":
            data = gzip.decompress(data)
        elif name != "crc32c":
            raise Unsupported(f"the {name} codec")
        else:
            data = data[:-4]
    return data


def _undo_v2(compressor: dict[str, Any] | None, data: bytes) -> bytes:
    if compressor is None:
        return data
    if compressor.get("id") == "zlib":
        return zlib.decompress(data)
    if compressor.get("id") == "gzip":
        return gzip.decompress(data)
    raise Unsupported(f"the {compressor.get('id')} compressor")


def _grid(shape: list[int], chunk_shape: list[int]) -> Iterator[tuple[int, ...]]:
    return itertools.product(*(range(-(-n // c)) for n, c in zip(shape, chunk_shape)))


def _shard_chunks(
    data: bytes, count: int, sharding: dict[str, Any]
) -> Iterator[tuple[int, bytes | None]]:
    """(position in the shard, inner chunk bytes or None) for an index at the end
    stored with the ``bytes`` codec (little endian), with or without crc32c."""
    index_codecs = [c.get("name") for c in sharding.get("index_codecs", [])]
    if sharding.get("index_location", "end") != "end" or index_codecs not in (
        ["bytes"],
        ["bytes", "crc32c"],
    ):
        raise Unsupported("this shard index layout")
    size = 16 * count
    end = len(data) - (4 if index_codecs[-1] == "crc32c" else 0)
    index = data[end - size : end]
    for position in range(count):
        offset, nbytes = struct.unpack_from("<QQ", index, 16 * position)
        yield position, None if offset == 2**64 - 1 else data[offset : offset + nbytes]


def stored_chunks(
    root: pathlib.Path, document: dict[str, Any]
) -> Iterator[tuple[tuple[int, ...], bytes]]:
    """(chunk index, bytes) of every stored chunk, codecs after ``bytes`` undone.

    For a sharded array the indices are those of the inner chunks in the whole
    array (the grid of :func:`unsharded`); absent inner chunks are left out.
    """
    if document.get("zarr_format") == 2:
        separator = document.get("dimension_separator", ".")
        for index in _grid(document["shape"], document["chunks"]):
            path = root / separator.join(map(str, index or (0,)))
            if path.is_file():
                yield index, _undo_v2(document.get("compressor"), path.read_bytes())
        return
    shape = document["shape"]
    chunk_shape = document["chunk_grid"]["configuration"]["chunk_shape"]
    sharding = _sharding(document)
    for index in _grid(shape, chunk_shape):
        path = root.joinpath("c", *map(str, index))
        if not path.is_file():
            continue
        data = path.read_bytes()
        if sharding is None:
            yield index, _undo_v3(document["codecs"], data)
            continue
        inner = sharding["chunk_shape"]
        per_shard = [c // i for c, i in zip(chunk_shape, inner)]
        positions = list(itertools.product(*(range(n) for n in per_shard)))
        for position, piece in _shard_chunks(data, len(positions), sharding):
            if piece is not None:
                local = positions[position]
                yield (
                    tuple(i * n + p for i, n, p in zip(index, per_shard, local)),
                    _undo_v3(sharding["codecs"], piece),
                )
