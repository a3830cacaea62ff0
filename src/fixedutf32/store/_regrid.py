"""The task of ``convert`` onto a new chunk grid: a destination chunk from the keys it overlaps."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._arguments import ByteView
from ..chunk import decode_chunk
from ..errors import StringTooLongError
from ..transcode import encode_vlen_utf8
from ._arrays import FIXED, STRING, Index, memory_order
from ._conversions import Conversion
from ._plans import Problem, chunk_problem
from ._run import StoreRef, resolve
from ._stores import StoreHandle
from ._transform import KeyConversion, drop_chunk, new_result, string_chunk, write_chunk
from ._validate import check_chunk

__all__ = ["convert_region", "region_keys"]


def region_keys(conversion: Conversion, index: Index) -> dict[Index, set[Index]]:
    """The source keys (grid indices) under destination chunk ``index``, and their chunks."""
    plan, meta = conversion.source, conversion.meta
    target, _ = meta.chunk_region(index)
    first = [t.start // c for t, c in zip(target, plan.meta.chunk_shape)]
    last = [(t.stop - 1) // c for t, c in zip(target, plan.meta.chunk_shape)]
    wanted = set(np.ndindex(*[b - a + 1 for a, b in zip(first, last)]))
    wanted = {tuple(a + i for a, i in zip(first, w)) for w in wanted}
    keys: dict[Index, set[Index]] = {}
    for chunk in wanted:
        key_index = (
            chunk
            if plan.per_shard is None
            else tuple(c // n for c, n in zip(chunk, plan.per_shard))
        )
        keys.setdefault(key_index, set()).add(chunk)
    return keys


def _source_region_strings(
    conversion: Conversion, src: StoreHandle, index: Index, result: KeyConversion
) -> tuple[npt.NDArray[np.str_] | None, bool]:
    """The source elements covering destination chunk ``index``, fill where missing."""
    plan, meta = conversion.source, conversion.meta
    target, _ = meta.chunk_region(index)
    # Wide enough for every source string: a string too long for the
    # destination must fail in encode_chunk, not be cut short by NumPy.
    width = max(
        meta.data_type.length_bytes, plan.meta.data_type.length_bytes if plan.kind == FIXED else 0
    )
    out = np.full(meta.chunk_shape, plan.fill, dtype=f"U{width // 4}")
    present = False
    for key_index, chunks in sorted(region_keys(conversion, index).items()):
        read = plan.read_parts(src, key_index)
        if read is None:
            continue
        result["bytes_read"] += read[0]
        key = plan.key(key_index)
        for chunk, data, error in read[1]:
            if chunk not in chunks:
                continue
            strings = _region_chunk(conversion, key, chunk, data, error)
            if isinstance(strings, Problem):
                result["problems"].append(strings)
                if not conversion.skip_invalid:
                    result["fatal"] = strings
                    return None, False
                continue
            present = True
            src_target, _ = plan.meta.chunk_region(chunk)
            overlap = tuple(
                slice(max(a.start, b.start), min(a.stop, b.stop))
                for a, b in zip(src_target, target)
            )
            if any(s.start >= s.stop for s in overlap):
                continue
            into = tuple(
                slice(s.start - t.start, s.stop - t.start) for s, t in zip(overlap, target)
            )
            frm = tuple(
                slice(s.start - t.start, s.stop - t.start) for s, t in zip(overlap, src_target)
            )
            out[into] = strings[frm]
    return out, present


def _region_chunk(
    conversion: Conversion, key: str, chunk: Index, data: ByteView | None, error: Exception | None
) -> npt.NDArray[np.str_] | Problem:
    plan = conversion.source
    if error is not None:
        return chunk_problem(plan, key, chunk, error)
    assert data is not None  # read_key gives each chunk's data or an error
    if plan.kind == STRING:
        strings = string_chunk(
            plan, key, chunk, data, conversion.meta.data_type.length_bytes, "little"
        )
        return strings if isinstance(strings, Problem) else strings.reshape(plan.meta.chunk_shape)
    problems, _ = check_chunk(plan, key, chunk, data, 1)
    if problems:
        return problems[0]
    src = plan.meta
    return decode_chunk(
        np.frombuffer(data, np.uint8),
        src.data_type.length_bytes,
        endian=src.endian,
        shape=src.chunk_shape,
        order=memory_order(src),
        validate=False,
    )


def convert_region(
    src_ref: StoreRef, dst_ref: StoreRef, conversion: Conversion, index: Index
) -> KeyConversion:
    """Write destination chunk ``index`` from the source chunks it overlaps; a task."""
    src, dst = resolve(src_ref), resolve(dst_ref, "w")
    result = new_result(conversion.path, 1)
    strings, present = _source_region_strings(conversion, src, index, result)
    if strings is None:  # a fatal problem, in result
        return result
    if not present:
        result["missing"] = 1
        drop_chunk(dst, conversion, conversion.key(index), result)
        return result
    try:
        if conversion.to == STRING:
            payload = encode_vlen_utf8(strings, validate=False)
        else:
            payload = conversion.writer.chunk(strings)  # the width and byte order stored
    except StringTooLongError as exc:
        problem = Problem(
            "chunk",
            conversion.path,
            f"{exc} (destination chunk {list(index)})",
            conversion.key(index),
            index,
        )
        result["problems"].append(problem)
        result["fatal"] = None if conversion.skip_invalid else problem
        if conversion.skip_invalid:
            drop_chunk(dst, conversion, conversion.key(index), result)
        return result
    write_chunk(dst, conversion, conversion.key(index), payload, result)
    return result
