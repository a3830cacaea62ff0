"""What the pipeline knows of one array's chunks, worked out once from its codecs.

A :class:`ChunkPlan` says how a stored chunk becomes elements: the byte
order and element order of the stored code units and the bytes-to-bytes
codecs, as the chunk-source layer (:mod:`fixedutf32._source`) runs them.
A :class:`ShardPlan` adds where the inner chunks of a ``sharding_indexed``
shard are.  :func:`plan_for` makes one from a zarr codec chain, or returns
None for a chain the pipeline leaves to zarr (and says why).

Per chunk shape, :meth:`ChunkPlan.layout` gives a :class:`ChunkLayout`:
the element count, the chunk-source decoder and the kernel flags, made
once and reused for every chunk of that shape.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, TransposeCodec

from .._source import (
    ChunkDecoder,
    CodecChain,
    CodecSpec,
    ElementLayout,
    ShardIndex,
    ShardLayout,
    parse_codec,
)
from ..errors import MetadataError
from . import _compat

if TYPE_CHECKING:
    from zarr.abc.codec import Codec
    from zarr.core.array_spec import ArraySpec

__all__ = ["ChunkLayout", "ChunkPlan", "Declined", "ShardPlan", "plan_for"]

Endian = Literal["little", "big"]
Order = Literal["C", "F"]
NATIVE: Endian = "little" if sys.byteorder == "little" else "big"


def value_endian(value: np.ndarray[Any, Any]) -> Endian:
    """The byte order of ``value``'s code units in memory (a ``U`` array of either order).

    zarr hands over values of the array's own data type, and a big-endian
    ``>U`` array stays big-endian in memory: its units are swapped on this
    machine, whatever byte order the chunks are stored in.
    """
    order = value.dtype.byteorder
    if order == ">":
        return "big"
    if order == "<":
        return "little"
    return NATIVE  # "=" (and "|", which a U data type never has)


@dataclass(frozen=True)
class ChunkLayout:
    """The chunks of one shape of one array: what every read and write of them needs.

    Attributes
    ----------
    shape : tuple of int
        The chunk's shape (edge chunks are stored whole).
    count : int
        Elements in a chunk.
    nbytes : int
        Bytes of a chunk with its codecs undone.
    order : {"C", "F"}
        The order of the elements in the stored chunk.
    elements : ElementLayout
        Their width and stored byte order.
    decoder : ChunkDecoder or None
        The chunk-source decoder; None when zarr's own codec objects undo
        the compression (codecs numcodecs does not have).
    """

    shape: tuple[int, ...]
    count: int
    nbytes: int
    order: Order
    elements: ElementLayout
    decoder: ChunkDecoder | None

    @property
    def length_bytes(self) -> int:
        return self.elements.length_bytes

    @property
    def endian(self) -> Endian:
        return self.elements.endian


@dataclass(frozen=True)
class ChunkPlan:
    """How the stored chunks of one array become elements.

    Parameters
    ----------
    zarr_format : {2, 3}
    endian : {"little", "big"} or None
        The byte order of the stored code units: the ``bytes`` codec's (V3),
        or None for the data type's (V2).
    order : {"C", "F"} or None
        The element order of a stored chunk: C, or F under a ``transpose``
        that reverses the axes (V3); None for the chunk spec's (V2).
    specs : tuple of CodecSpec or None
        The bytes-to-bytes codecs (V3) or the compressor (V2), in the order
        they are applied on writing; None when numcodecs cannot run one of
        them and zarr's objects (``zarr_codecs``) do.
    zarr_codecs : tuple
        zarr's bytes-to-bytes codec objects, used when ``specs`` is None.
    """

    zarr_format: Literal[2, 3]
    endian: Endian | None
    order: Order | None
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
        """The layout of the chunks of ``spec`` (made once per chunk shape).

        Parameters
        ----------
        spec : zarr.core.array_spec.ArraySpec

        Returns
        -------
        ChunkLayout

        Raises
        ------
        MetadataError
            When numcodecs cannot build a codec of the chain.
        """
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
    """How the inner chunks of one sharded array sit in its shards.

    Parameters
    ----------
    inner : ChunkPlan
        The plan of the inner chunks.
    chunk_shape : tuple of int
        The inner chunks' shape.
    index_endian : {"little", "big"}
    index_checksum : bool
        Whether a crc32c follows the index.
    index_location : {"end", "start"}
    """

    inner: ChunkPlan
    chunk_shape: tuple[int, ...]
    index_endian: Endian
    index_checksum: bool
    index_location: Literal["end", "start"]
    _layouts: dict[tuple[int, ...], ShardLayout] = field(
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

    def dense_run(
        self, index: ShardIndex, inner: ChunkLayout, layout: ShardLayout
    ) -> tuple[int, np.ndarray[Any, np.dtype[np.intp]]] | None:
        """Where the shard's raw inner chunks lie as one run, if they do.

        Returns ``(start, locals_in_file_order)`` when every inner chunk is
        present, stored raw at its full size, and they follow each other with
        nothing between them, in any order (C order, or zarr's default Morton
        order): the run is ``count * inner.nbytes`` bytes from ``start``, and
        its ``i``-th chunk is inner chunk ``locals_in_file_order[i]`` (flat, C
        order).  Else None.
        """
        if inner.decoder is None or not inner.decoder.chain.raw or not index.present.all():
            return None
        count, nbytes = layout.count, inner.nbytes
        if not count or not (index.nbytes == nbytes).all():
            return None
        start = int(index.offsets.min())
        slots = (index.offsets - np.uint64(start)).astype(np.intp)
        if (slots % nbytes).any():
            return None
        slots //= nbytes
        in_file_order = np.full(count, -1, np.intp)
        in_file_order[np.minimum(slots, count - 1)] = np.arange(count, dtype=np.intp)
        if (slots >= count).any() or (in_file_order < 0).any():
            return None  # gaps, or two chunks at one place
        return start, in_file_order


@dataclass(frozen=True)
class Declined:
    """A codec chain the pipeline leaves to zarr, and why (for the warning)."""

    reason: str


def _split(codecs: Sequence[Codec]) -> tuple[list[Any], Any, list[Any]]:
    aa = [c for c in codecs if isinstance(c, ArrayArrayCodec)]
    bb = [c for c in codecs if isinstance(c, BytesBytesCodec)]
    ab = next((c for c in codecs if isinstance(c, ArrayBytesCodec)), None)
    return aa, ab, bb


def _order_of(aa: list[Any]) -> Order | Declined:
    if not aa:
        return "C"
    if len(aa) > 1 or not isinstance(aa[0], TransposeCodec):
        return Declined(f"array-to-array codecs {[c.to_dict()['name'] for c in aa]}")
    perm = tuple(aa[0].order)
    if perm == tuple(range(len(perm))):
        return "C"
    if perm == tuple(reversed(range(len(perm)))):
        return "F"
    return Declined(f"a transpose of order {list(perm)} (only C or reversed axes are read)")


def _specs(bb: Sequence[Any], zarr_format: Literal[2, 3]) -> tuple[CodecSpec, ...] | None:
    """The numcodecs specs of zarr's bytes-to-bytes codecs (or a V2 compressor), or None."""
    specs = []
    for i, codec in enumerate(bb):
        try:
            if zarr_format == 2:
                spec = parse_codec(codec.get_config(), 2, "compressor")
            else:
                spec = parse_codec(codec.to_dict(), 3, f"codecs[{i}]")
        except (MetadataError, AttributeError, TypeError):
            return None
        specs.append(spec)
    return tuple(specs)


def _index_codecs(codecs: Sequence[Any]) -> tuple[Endian, bool] | None:
    """(index byte order, crc32c) of a shard index codec chain this pipeline reads."""
    if not codecs or not isinstance(codecs[0], BytesCodec):
        return None
    endian = _compat.endian_name(codecs[0].endian)
    rest = list(codecs[1:])
    if endian not in ("little", "big") or len(rest) > 1:
        return None
    if rest and not isinstance(rest[0], Crc32cCodec):
        return None
    return endian, bool(rest)  # type: ignore[return-value]  # checked above


def plan_for(codecs: Sequence[Codec]) -> ChunkPlan | ShardPlan | Declined:
    """The plan for a zarr codec chain, or why the pipeline leaves it to zarr.

    Parameters
    ----------
    codecs : sequence of zarr codecs
        The array's codecs (V3), or zarr's ``V2Codec`` alone (V2).

    Returns
    -------
    ChunkPlan, ShardPlan or Declined

    Examples
    --------
    >>> from zarr.codecs import BytesCodec, ZstdCodec
    >>> plan = plan_for([BytesCodec(endian="big"), ZstdCodec()])
    >>> plan.endian, plan.order, [spec.id for spec in plan.specs]
    ('big', 'C', ['zstd'])
    """
    aa, ab, bb = _split(codecs)
    V2Codec = _compat.V2Codec
    if V2Codec is not None and isinstance(ab, V2Codec):
        if aa or bb or ab.filters:
            return Declined("Zarr V2 filters")
        compressor = ab.compressor
        specs = _specs([compressor] if compressor is not None else [], 2)
        if specs is None:
            return Declined(f"the compressor {compressor!r}, which numcodecs cannot run here")
        return ChunkPlan(2, None, None, specs)
    order = _order_of(aa)
    if isinstance(order, Declined):
        return order
    if isinstance(ab, ShardingCodec):
        if aa or bb:
            return Declined("codecs around the sharding codec")
        inner = plan_for(list(ab.codecs))
        index = _index_codecs(list(ab.index_codecs))
        if not isinstance(inner, ChunkPlan):
            return inner if isinstance(inner, Declined) else Declined("shards of shards")
        if inner.specs is None:
            return Declined("inner codecs numcodecs cannot run here")
        if index is None:
            return Declined("a shard index stored other than as bytes (+ crc32c)")
        location = _compat.literal(ab.index_location)
        if location not in ("end", "start"):
            return Declined(f"a shard index at {location!r}")
        return ShardPlan(inner, tuple(ab.chunk_shape), index[0], index[1], location)  # type: ignore[arg-type]  # checked above
    if not isinstance(ab, BytesCodec):
        return Declined(f"the array-to-bytes codec {type(ab).__name__}")
    endian = _compat.endian_name(ab.endian)
    if endian not in ("little", "big"):
        return Declined("a bytes codec without endian")
    specs = _specs(bb, 3)
    return ChunkPlan(3, endian, order, specs, () if specs is not None else tuple(bb))  # type: ignore[arg-type]
