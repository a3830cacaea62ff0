"""What the pipeline knows of one array's chunks, worked out once from its codecs."""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from zarr.abc.codec import BytesBytesCodec

from .._source import (
    ChunkDecoder,
    ChunkGrid,
    CodecChain,
    CodecSpec,
    ElementLayout,
    KeyReader,
    ShardLayout,
)
from .._source.writer import KeyWriter
from ..metadata._model import ArrayModel, Declined, parse_model
from . import _compat

if TYPE_CHECKING:
    from zarr.abc.codec import Codec
    from zarr.core.array_spec import ArraySpec

__all__ = ["ChunkLayout", "ChunkPlan", "Declined", "ShardPlan", "plan_for"]

Endian = Literal["little", "big"]
Order = Literal["C", "F"]
NATIVE: Endian = "little" if sys.byteorder == "little" else "big"


@dataclass(frozen=True)
class ChunkLayout:
    """The chunks of one shape of one array: what every read and write of them needs."""

    shape: tuple[int, ...]
    count: int
    nbytes: int  # with the codecs undone
    order: Order
    elements: ElementLayout
    decoder: ChunkDecoder | None  # None: zarr's codec objects undo the compression

    @property
    def length_bytes(self) -> int:
        return self.elements.length_bytes

    @functools.cached_property
    def reader(self) -> KeyReader | None:
        """The one reader of these chunks, keys given by the caller; None for zarr's codecs."""
        if self.decoder is None:
            return None
        keys = ChunkGrid((1,), (1,))  # the pipeline names each key: the grid only indexes them
        return KeyReader(keys, keys, self.decoder.chain, self.decoder)

    @functools.cached_property
    def writer(self) -> KeyWriter:
        """The one writer of these chunks (:mod:`fixedutf32._source.writer`)."""
        chain = None if self.decoder is None else self.decoder.chain
        return KeyWriter(self.elements, self.shape, self.order, chain)

    @property
    def endian(self) -> Endian:
        return self.elements.endian


@dataclass(frozen=True)
class ChunkPlan:
    """How the stored chunks of one array become elements (byte order, element order, codecs)."""

    zarr_format: Literal[2, 3]
    endian: Endian | None  # None (V2): the data type's
    order: Order | None  # F under a transpose that reverses the axes; None (V2): the spec's
    # specs: the bytes-to-bytes codecs (V2: the compressor) in writing order; None when
    # numcodecs cannot run one of them and zarr's codec objects (zarr_codecs) do
    specs: tuple[CodecSpec, ...] | None
    zarr_codecs: tuple[Any, ...] = ()
    _layouts: dict[tuple[int, str, str, tuple[int, ...]], ChunkLayout] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def raw(self) -> bool:
        """Whether chunks are stored without bytes-to-bytes codecs."""
        return self.specs == () and not self.zarr_codecs

    def layout(self, spec: ArraySpec) -> ChunkLayout:
        """The layout of the chunks of ``spec`` (made once per chunk shape)."""
        dtype: Any = spec.dtype
        return self.layout_for(
            dtype.item_size, self.endian or dtype.endianness, self.order or spec.order, spec.shape
        )

    def layout_for(
        self, length_bytes: int, endian: Endian, order: Order, shape: Sequence[int]
    ) -> ChunkLayout:
        """The layout of chunks of ``shape`` holding elements of ``length_bytes``."""
        shape = tuple(shape)
        key = (length_bytes, endian, order, shape)
        found = self._layouts.get(key)
        if found is not None:
            return found
        count = math.prod(shape)
        elements = ElementLayout(length_bytes, endian)
        decoder = None
        if self.specs is not None:
            # V2: zarr hands numcodecs the chunk as an array of elements, so blosc
            # shuffles in units of the element (V3 configurations give typesize)
            element_size = length_bytes if self.zarr_format == 2 else 4
            chain = CodecChain(self.specs, count * length_bytes, element_size=element_size)
            decoder = ChunkDecoder(elements, count, chain)
        layout = ChunkLayout(shape, count, count * length_bytes, order, elements, decoder)
        self._layouts[key] = layout
        return layout


@dataclass(frozen=True)
class ShardPlan:
    """How the inner chunks of one sharded array sit in its shards."""

    inner: ChunkPlan
    chunk_shape: tuple[int, ...]
    index_endian: Endian
    index_checksum: bool
    index_location: Literal["end", "start"]
    _layouts: dict[tuple[int, ...], ShardLayout] = field(
        default_factory=dict, compare=False, repr=False
    )
    _readers: dict[tuple[Any, ...], KeyReader] = field(
        default_factory=dict, compare=False, repr=False
    )

    def shard_layout(self, shard_shape: Sequence[int]) -> ShardLayout:
        """The index layout of a shard of ``shard_shape`` (made once per shape)."""
        shape = tuple(shard_shape)
        found = self._layouts.get(shape)
        if found is None:
            per_shard = tuple(-(-s // c) for s, c in zip(shape, self.chunk_shape))
            found = self._layouts[shape] = ShardLayout(
                per_shard, self.index_endian, self.index_checksum, self.index_location
            )
        return found

    def layout(self, spec: ArraySpec) -> ChunkLayout:
        """A whole shard of ``spec`` as one chunk of its inner chunks' elements, C order."""
        inner = self.inner_layout(spec)
        shape = tuple(spec.shape)
        count = math.prod(shape)
        return ChunkLayout(shape, count, count * inner.length_bytes, "C", inner.elements, None)

    def inner_layout(self, spec: ArraySpec) -> ChunkLayout:
        """The layout of the inner chunks of the shards of ``spec``."""
        dtype: Any = spec.dtype
        return self.inner.layout_for(
            dtype.item_size,
            self.inner.endian or dtype.endianness,
            self.inner.order or "C",
            self.chunk_shape,
        )

    def reader(self, spec: ArraySpec) -> KeyReader:
        """The one reader of a shard of ``spec``: its grid is the shard's own inner chunks."""
        inner = self.inner_layout(spec)
        shape = tuple(spec.shape)
        key = (shape, inner.length_bytes, inner.endian, inner.order)
        found = self._readers.get(key)
        if found is None:
            decoder = inner.decoder
            assert decoder is not None  # a ShardPlan's inner codecs run here
            found = self._readers[key] = KeyReader.sharded(
                decoder,
                self.shard_layout(shape),
                ChunkGrid(shape, self.chunk_shape),
                ChunkGrid(shape, shape),
            )  # no codecs around the sharding codec
        return found


def _json(codec: Codec) -> Any:
    """zarr's JSON of a codec, or just its class name when it has none."""
    try:
        return codec.to_dict()
    except (AttributeError, TypeError, ValueError):  # unserializable: a codec not run here
        return {"name": type(codec).__name__}


def _chunk_plan(model: ArrayModel, bb: Sequence[Codec] = ()) -> ChunkPlan:
    """A V3 model's ChunkPlan; zarr's bytes-to-bytes codecs ``bb`` where numcodecs has none."""
    zarr_codecs = () if model.specs is not None else tuple(bb)
    return ChunkPlan(3, model.endian, model.order, model.specs, zarr_codecs)


def plan_for(codecs: Sequence[Codec]) -> ChunkPlan | ShardPlan | Declined:
    """The plan for a zarr codec chain (V2: zarr's V2Codec alone), or why zarr keeps it."""
    V2Codec = _compat.V2Codec
    v2 = [c for c in codecs if V2Codec is not None and isinstance(c, V2Codec)]
    if v2:
        ab: Any = v2[0]
        if len(codecs) > 1 or ab.filters:
            return Declined("Zarr V2 filters")
        compressor = ab.compressor
        try:
            config = None if compressor is None else compressor.get_config()
        except (AttributeError, TypeError):
            config = compressor
        model = parse_model({"zarr_format": 2, "compressor": config})
        if isinstance(model, Declined) or model.specs is None:
            return Declined(f"the compressor {compressor!r}, which numcodecs cannot run here")
        return ChunkPlan(2, None, None, model.specs)
    model = parse_model({"zarr_format": 3, "codecs": [_json(c) for c in codecs]})
    if isinstance(model, Declined):
        return model
    shard = model.shard
    if shard is None:
        bb = [c for c in codecs if isinstance(c, BytesBytesCodec)]
        return _chunk_plan(model, bb)
    if model.specs != ():
        return Declined("codecs around the sharding codec")
    if shard.inner.specs is None:
        return Declined("inner codecs numcodecs cannot run here")
    return ShardPlan(
        _chunk_plan(shard.inner),
        shard.chunk_shape,
        shard.index_endian,
        shard.index_checksum,
        shard.index_location,
    )
