"""How an array's chunks are stored (ArrayModel): the one reader of an array's codec list."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeGuard

from .._source.codecs import CodecSpec, parse_codec
from ..errors import MetadataError
from ._array import ArrayMetadata
from ._dtype import FixedLengthUTF32, parse_v2_dtype
from ._json import _load
from ._parse import parse_array_metadata

__all__ = ["ArrayModel", "Declined", "ShardModel", "parse_model", "parse_stored"]

Endian = Literal["little", "big"]
Order = Literal["C", "F"]
_INDEX_REFUSED = "a shard index stored other than as bytes (+ crc32c)"


@dataclass(frozen=True)
class Declined:
    """What :func:`parse_model` does not cover, and why (a zarr array left to zarr)."""

    reason: str
    sharded: bool = False  # a sharding_indexed chain (parse_array_metadata reads no shards)


@dataclass(frozen=True)
class ShardModel:
    """How the inner chunks of a ``sharding_indexed`` array sit in its shards."""

    chunk_shape: tuple[int, ...]  # the inner chunks' shape
    inner: ArrayModel  # how the inner chunks are stored
    index_endian: Endian
    index_checksum: bool  # a crc32c follows the index
    index_location: Literal["end", "start"]

    def chunks_per_shard(self, shard_shape: Sequence[int]) -> tuple[int, ...]:
        """Inner chunks along each axis of a shard of ``shard_shape``."""
        return tuple(-(-s // c) for s, c in zip(shard_shape, self.chunk_shape))


@dataclass(frozen=True)
class ArrayModel:
    """How the chunks (or shards) of one array are stored."""

    # length_bytes/endian/order None: the JSON does not say; specs (after bytes, or V2 filters
    # then compressor, in write order) None when one is not runnable here; with shard, on shards.

    zarr_format: Literal[2, 3]
    length_bytes: int | None
    endian: Endian | None
    order: Order | None
    specs: tuple[CodecSpec, ...] | None
    unrunnable: str | None = None
    filters: int = 0  # V2: how many of ``specs`` are filters
    shard: ShardModel | None = None

    def runnable(self) -> tuple[CodecSpec, ...]:
        """``specs``, every level of sharding included, or the reason they cannot run."""
        for model in (self, self.shard.inner if self.shard else self):
            if model.specs is None:
                raise MetadataError(model.unrunnable or "codecs this package cannot run")
        return self.specs or ()


def _name(codec: Any) -> Any:
    return codec.get("name") if isinstance(codec, Mapping) else codec


def _config(codec: Any) -> Mapping[str, Any]:
    config = codec.get("configuration") if isinstance(codec, Mapping) else None
    return config if isinstance(config, Mapping) else {}


def _specs(
    codecs: Sequence[Any], zarr_format: int, keys: Sequence[str]
) -> tuple[tuple[CodecSpec, ...] | None, str | None]:
    try:
        return tuple(parse_codec(c, zarr_format, k) for c, k in zip(codecs, keys)), None
    except MetadataError as exc:
        return None, str(exc)


def _is_list(value: Any) -> TypeGuard[Sequence[Any]]:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))


def _order(arrays: Sequence[Any]) -> Order | Declined:
    """The memory order the ``transpose`` codecs before ``bytes`` reduce to."""
    if any(_name(c) != "transpose" for c in arrays):
        return Declined(f"array-to-array codecs {[_name(c) for c in arrays]}")
    perm: list[int] | None = None
    for codec in arrays:
        order = _config(codec).get("order")
        if not _is_list(order) or sorted(order) != list(range(len(order))):
            return Declined(f"a transpose of order {order!r}")
        perm = [(perm or list(range(len(order))))[n] for n in order]
    perm = perm or []
    if perm == sorted(perm):
        return "C"
    if perm == sorted(perm, reverse=True):
        return "F"
    return Declined(f"a transpose of order {perm} (only C or reversed axes are read)")


def _index(codecs: Any) -> tuple[Endian, bool] | Declined:
    names = [_name(c) for c in codecs] if _is_list(codecs) else None
    if names not in (["bytes"], ["bytes", "crc32c"]):
        return Declined(_INDEX_REFUSED)
    endian = _config(codecs[0]).get("endian", "little")  # zarr reads no endian so
    if endian not in ("little", "big"):
        return Declined(_INDEX_REFUSED)
    return endian, len(names) == 2


def _shard(config: Mapping[str, Any], key: str) -> ShardModel | Declined:
    chunk_shape = config.get("chunk_shape")
    if not _is_list(chunk_shape) or not all(type(n) is int and n > 0 for n in chunk_shape):
        return Declined(f"{key}.chunk_shape: expected positive integers, got {chunk_shape!r}")
    inner = _v3(config.get("codecs"), None, f"{key}.codecs")
    if isinstance(inner, Declined):
        return inner
    if inner.shard is not None:
        return Declined("shards of shards")
    index = _index(config.get("index_codecs"))
    if isinstance(index, Declined):
        return index
    location = config.get("index_location", "end")
    if location not in ("end", "start"):
        return Declined(f"a shard index at {location!r}")
    return ShardModel(tuple(chunk_shape), inner, index[0], index[1], location)


def _v3(codecs: Any, length_bytes: int | None, key: str) -> ArrayModel | Declined:
    if not _is_list(codecs) or not codecs:
        return Declined(f"{key}: expected a list of codecs, got {codecs!r}")
    names = [_name(c) for c in codecs]
    found = [i for i, n in enumerate(names) if n in ("bytes", "sharding_indexed")]
    at = found[0] if found else next((i for i, n in enumerate(names) if n != "transpose"), 0)
    ab, rest = names[at], codecs[at + 1 :]
    order = _order(codecs[:at])
    if isinstance(order, Declined):
        return order
    specs, unrunnable = _specs(rest, 3, [f"{key}[{i}]" for i in range(at + 1, len(codecs))])
    if ab == "sharding_indexed":
        if at:
            return Declined("codecs around the sharding codec", sharded=True)
        shard = _shard(_config(codecs[at]), f"{key}[{at}].configuration")
        if isinstance(shard, Declined):
            return Declined(shard.reason, sharded=True)
        inner = shard.inner
        return ArrayModel(3, length_bytes, inner.endian, "C", specs, unrunnable, shard=shard)
    if ab != "bytes":
        return Declined(f"the array-to-bytes codec {ab}")
    endian = _config(codecs[at]).get("endian")
    if endian not in ("little", "big"):
        return Declined("a bytes codec without endian")
    return ArrayModel(3, length_bytes, endian, order, specs, unrunnable)


def _v2(doc: Mapping[str, Any]) -> ArrayModel:
    length_bytes = endian = None
    if "dtype" in doc:
        try:
            data_type, endian = parse_v2_dtype(doc["dtype"])
            length_bytes = data_type.length_bytes
        except MetadataError:
            pass  # parse_array_metadata says why
    order = doc.get("order")
    filters = doc.get("filters") or []
    compressor = doc.get("compressor")
    codecs = [*filters, *([] if compressor is None else [compressor])]
    keys = [f"filters[{i}]" for i in range(len(filters))] + ["compressor"]
    specs, unrunnable = _specs(codecs, 2, keys)
    return ArrayModel(
        2,
        length_bytes,
        endian,  # type: ignore[arg-type]  # parse_v2_dtype gives "little" or "big"
        order if order in ("C", "F") else None,
        specs,
        unrunnable,
        filters=len(filters),
    )


def parse_model(doc: Mapping[str, Any]) -> ArrayModel | Declined:
    """The ArrayModel of a V3 or V2 metadata document (or the codec part of one), or Declined."""
    if doc.get("zarr_format") == 2:
        return _v2(doc)
    length_bytes = None
    data_type = doc.get("data_type")
    if data_type is not None:
        with suppress(MetadataError):  # another data type, or parse_array_metadata says why
            length_bytes = FixedLengthUTF32.from_json(data_type).length_bytes
    return _v3(doc.get("codecs"), length_bytes, "codecs")


def parse_stored(doc: Any) -> tuple[ArrayModel, ArrayMetadata, ArrayMetadata]:
    """An array's model and its metadata as its chunks and its keys see it; or MetadataError."""
    # For a sharded array the chunks are the inner chunks, the keys the shard grid.
    doc = _load(doc, "metadata")
    if not isinstance(doc, Mapping):
        parse_array_metadata(doc)  # raises: an object was expected
    model = parse_model(doc)
    if isinstance(model, Declined):
        if not model.sharded:
            parse_array_metadata(doc)  # what the document breaks, if it does
        raise MetadataError(f"codecs: expected codecs this tool reads, got {model.reason}")
    shard = model.shard
    if shard is None:
        meta = parse_array_metadata(doc)
        return model, meta, meta
    key_meta = parse_array_metadata({**doc, "codecs": doc["codecs"][0]["configuration"]["codecs"]})
    for axis, (s, c) in enumerate(zip(key_meta.chunk_shape, shard.chunk_shape)):
        if s % c:
            raise MetadataError(
                f"codecs[0].configuration.chunk_shape[{axis}]: expected a divisor of the "
                f"shard shape {list(key_meta.chunk_shape)}, got {c}"
            )
    return model, replace(key_meta, chunk_shape=shard.chunk_shape), key_meta
