"""The plan of one converted array (:class:`Conversion`): width, grid, codecs, documents."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from .._source import CodecChain, ElementLayout
from .._source.writer import KeyWriter
from ..metadata import ArrayMetadata, FixedLengthUTF32
from ._arrays import (
    FIXED,
    V2_ARRAY,
    V2_ATTRS,
    V3_DOC,
    ArrayPlan,
    Node,
    destination_chain,
    join,
    memory_order,
)
from ._options import ConvertOptions

__all__ = ["Conversion", "changes", "check_fits", "json_bytes", "plan_conversion"]


@dataclass(frozen=True)
class Conversion:
    """How one string array is converted: its source plan, destination layout and codecs."""

    source: ArrayPlan
    to: str
    meta: ArrayMetadata  # destination layout; the data type is a stand-in for string
    chain: CodecChain  # destination bytes-to-bytes codecs
    doc_names: tuple[tuple[str, bytes], ...]  # metadata documents, written last
    same_grid: bool
    skip_invalid: bool
    resume: bool
    signature: str = ""  # the source's and destination's documents, for fingerprints

    @property
    def path(self) -> str:
        return self.source.path

    def key(self, index: Sequence[int]) -> str:
        return join(self.path, self.meta.chunk_key(index))

    @functools.cached_property
    def writer(self) -> KeyWriter:
        """The one writer of a fixed_length_utf32 destination's chunks (the pipeline's too)."""
        # Built once per array (each task's copy, on Dask); ElementLayout checks the byte order.
        meta = self.meta
        endian = cast(Literal["little", "big"], meta.endian)
        elements = ElementLayout(meta.data_type.length_bytes, endian)
        return KeyWriter(elements, tuple(meta.chunk_shape), memory_order(meta), self.chain)


def _dest_width(plan: ArrayPlan, length_bytes: int | str | None, longest: int) -> int:
    if isinstance(length_bytes, int):
        if len(plan.fill) * 4 > length_bytes:
            raise ValueError(
                f"length_bytes {length_bytes} cannot hold the fill value {plan.fill!r} of "
                f"array {plan.path!r}; expected at least {4 * len(plan.fill)}"
            )
        return length_bytes
    if length_bytes is None and plan.kind == FIXED:
        return plan.meta.data_type.length_bytes
    # "auto", or a string source's width left to its longest string
    return 4 * max(longest, len(plan.fill), 1)


def changes(conversion: Conversion) -> list[str]:
    """What a converted array's layout changes, besides its data type (report text)."""
    plan, dst = conversion.source, conversion.meta
    src = plan.meta
    out: list[str] = []
    if plan.zarr_format != dst.zarr_format:
        out.append(f"Zarr V{plan.zarr_format} -> V{dst.zarr_format}")
    if plan.kind == FIXED and conversion.to == FIXED and src.endian != dst.endian:
        out.append(f"endian {src.endian} -> {dst.endian}")
    if conversion.to == FIXED:
        width = dst.data_type.length_bytes
        old = src.data_type.length_bytes if plan.kind == FIXED else None
        out.append(
            f"length_bytes {width}" if old in (None, width) else f"length_bytes {old} -> {width}"
        )
    if plan.per_shard is not None:
        out.append(
            f"shards {list(plan.key_meta.chunk_shape)} of chunks {list(src.chunk_shape)} -> "
            f"chunks {list(dst.chunk_shape)}"
        )
    elif tuple(src.chunk_shape) != tuple(dst.chunk_shape):
        out.append(f"chunks {list(src.chunk_shape)} -> {list(dst.chunk_shape)}")
    before = [spec.id for spec in plan.reader.chain.specs]
    if plan.reader.shard_chain is not None:  # the codecs applied to whole shards
        before += [spec.id for spec in plan.reader.shard_chain.specs]
    after = [spec.id for spec in conversion.chain.specs]
    if before != after:
        out.append(f"codecs [{', '.join(before)}] -> [{', '.join(after)}]")
    return out


def check_fits(plan: ArrayPlan, length_bytes: int, longest: int) -> None:
    """ValueError when the source's longest string does not fit ``length_bytes``."""
    needed = 4 * longest
    if needed > length_bytes:
        raise ValueError(
            f"length_bytes {length_bytes} cannot hold the longest string of array "
            f"{plan.path or '/'!r} ({longest} code points); expected at least {needed}: "
            f"pass length_bytes={needed} (--length-bytes {needed}) or 'auto' "
            f"(--length-bytes auto)"
        )


def _dest_documents(
    node: Node,
    plan: ArrayPlan,
    to: str,
    meta: ArrayMetadata,
    compressors: Sequence[dict[str, Any]],
) -> dict[str, bytes]:
    """The metadata documents of a converted array, by name (JSON bytes)."""
    attributes = node.attributes
    if to == FIXED:
        doc = ArrayMetadata(
            meta.zarr_format,
            meta.shape,
            meta.chunk_shape,
            meta.data_type,
            meta.endian,
            plan.fill,
            meta.order,
            tuple(compressors),
        ).to_json()
    else:
        doc = {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(meta.shape),
            "data_type": "string",
            "chunk_grid": {
                "name": "regular",
                "configuration": {"chunk_shape": list(meta.chunk_shape)},
            },
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": plan.fill,
            "codecs": [{"name": "vlen-utf8", "configuration": {}}, *compressors],
            "attributes": {},
        }
    if meta.zarr_format == 2:
        docs = {V2_ARRAY: doc}
        if attributes:
            docs[V2_ATTRS] = attributes
    else:
        doc["attributes"] = attributes
        names = node.doc.get("dimension_names") if node.zarr_format == 3 else None
        if names is not None:
            doc["dimension_names"] = names
        docs = {V3_DOC: doc}
    return {name: json_bytes(value) for name, value in docs.items()}


def json_bytes(value: object) -> bytes:
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")


def plan_conversion(node: Node, plan: ArrayPlan, longest: int, opts: ConvertOptions) -> Conversion:
    """How array ``node`` (its ``plan``, its ``longest`` string) is converted with ``opts``."""
    to = opts.to
    src = plan.meta
    chunk_shape = opts.chunks or src.chunk_shape
    if len(chunk_shape) != len(src.shape):
        raise ValueError(
            f"chunks {list(chunk_shape)} has {len(chunk_shape)} dimensions; "
            f"array {plan.path!r} has {len(src.shape)}"
        )
    width = _dest_width(plan, opts.length_bytes, longest) if to == FIXED else 4
    same_grid = tuple(chunk_shape) == tuple(src.chunk_shape)
    order = src.order if same_grid and to == FIXED and plan.kind == FIXED else "C"
    meta = ArrayMetadata(
        opts.zarr_format,
        src.shape,
        chunk_shape,
        FixedLengthUTF32(width),
        opts.endian,
        plan.fill if to == FIXED else "",
        order,
    )
    docs = _dest_documents(node, plan, to, meta, opts.compressors)
    chain = destination_chain(opts.compressors, opts.zarr_format, "compressors")
    doc_names = tuple(sorted(docs.items()))
    signature = hashlib.sha256(
        repr((sorted(node.documents.items()), doc_names)).encode()
    ).hexdigest()[:16]
    return Conversion(
        plan,
        to,
        meta,
        chain,
        doc_names,
        same_grid,
        opts.skip_invalid,
        opts.resume,
        signature,
    )
