"""The tasks of ``convert`` on one key: source chunks to destination chunks, copies, lengths."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt

from .._arguments import ByteView, as_bytes, unicode_dtype
from ..chunk import decode_chunk
from ..errors import CorruptChunkError, FixedUTF32Error, StringTooLongError
from ..transcode import decode_vlen_utf8, encode_vlen_utf8
from ._arrays import STRING, ArrayPlan, Index, local_root, memory_order
from ._conversions import Conversion
from ._plans import Problem, chunk_problem
from ._resume import JournalEntry, fingerprint, read_key
from ._run import StoreRef, resolve
from ._stores import StoreHandle
from ._validate import KeyLongest, check_chunk

__all__ = [
    "KeyConversion",
    "convert_key",
    "copy_key",
    "drop_chunk",
    "journaled",
    "longest_key",
    "new_result",
    "string_chunk",
    "write_chunk",
]


def string_chunk(
    plan: ArrayPlan, key: str, index: Index, data: ByteView, width: int, endian: str
) -> npt.NDArray[np.str_] | Problem:
    """A vlen-utf8 chunk as a ``U`` array in ``endian`` (C order), or a Problem."""
    count = math.prod(plan.meta.chunk_shape)
    try:
        strings = decode_vlen_utf8(data, width, endian=endian)
    except (FixedUTF32Error, ValueError) as exc:
        return chunk_problem(plan, key, index, exc)
    if strings.size != count:
        return Problem(
            "chunk", plan.path, f"holds {strings.size} strings; expected {count}", key, index
        )
    return strings


def _fixed_to_dest(conversion: Conversion, view: npt.NDArray[np.uint8]) -> ByteView:
    """The destination's uncompressed bytes for a valid fixed source chunk (same grid)."""
    src = conversion.source.meta
    src_width, endian = src.data_type.length_bytes, src.endian
    if conversion.to == STRING:
        if src.order == "F" and len(src.chunk_shape) > 1:
            strings = np.ascontiguousarray(
                decode_chunk(
                    view, src_width, endian=endian, shape=src.chunk_shape, order="F", validate=False
                )
            )
            return encode_vlen_utf8(strings, validate=False)
        return encode_vlen_utf8(view, src_width, endian=endian, validate=False)
    # Through the writer the pipeline writes with: width, byte order and memory order as the
    # destination stores them, every element checked as it is written.
    values = view.view(unicode_dtype(src_width // 4, endian))
    values = values.reshape(src.chunk_shape, order=memory_order(src))
    return conversion.writer.chunk(values)


def _source_strings(
    conversion: Conversion, key: str, index: Index, data: ByteView
) -> ByteView | Problem:
    """A source chunk as the destination's uncompressed bytes (same grid), or a Problem."""
    plan = conversion.source
    if plan.kind == STRING:
        meta = conversion.meta
        strings = string_chunk(plan, key, index, data, meta.data_type.length_bytes, meta.endian)
        return strings if isinstance(strings, Problem) else strings.view(np.uint8).reshape(-1)
    problems, _ = check_chunk(plan, key, index, data, 1)
    if problems:
        return problems[0]
    try:
        return _fixed_to_dest(conversion, np.frombuffer(data, np.uint8))
    except StringTooLongError as exc:
        return chunk_problem(plan, key, index, exc)


def drop_chunk(dst: StoreHandle, conversion: Conversion, key: str, result: KeyConversion) -> None:
    """With resume: delete destination chunk ``key`` whose source chunk is gone or skipped."""
    # An interrupted run may have written it from what the source held then.
    result["keys"][key] = None
    if conversion.resume and _held(dst, key):
        dst.delete(key)
        result["deleted"] += 1


def _held(dst: StoreHandle, key: str) -> bool:
    """Whether anything is stored at ``key`` (a FIFO too), without reading it."""
    root = local_root(dst)
    if root is None:
        return dst.exists(key)
    path = os.path.join(root, key)
    return os.path.lexists(path) and not os.path.isdir(path)


def _old_copy(dst: StoreHandle, key: str, max_nbytes: int) -> bytes | None:
    """With resume: what the destination holds at ``key``, read safely; None if not usable."""
    # A FIFO, a device or a file too large to be the chunk is not read (it could block): replaced.
    try:
        return read_key(dst, key, max_nbytes)
    except CorruptChunkError:
        return None


def write_chunk(
    dst: StoreHandle, conversion: Conversion, key: str, payload: ByteView, result: KeyConversion
) -> None:
    """Write ``payload`` (uncompressed) at ``key``; with resume, keep an equal chunk."""
    if conversion.resume:
        # Bound: compressed data that large cannot decode to this payload.
        old = _old_copy(dst, key, 2 * as_bytes(payload).nbytes + (1 << 16))
        if old is not None:
            try:
                same = np.array_equal(
                    np.frombuffer(conversion.chain.decode(old, key=key), np.uint8),
                    np.frombuffer(payload, np.uint8),
                )
            except Exception:  # noqa: BLE001 - a torn or foreign chunk is rewritten
                same = False
            if same:
                result["kept"] += 1
                result["keys"][key] = len(old)
                return
    data = conversion.chain.encode(payload)  # the writer's codecs: the same chain
    dst.set(key, data)
    nbytes = as_bytes(data).nbytes
    result["written"] += 1
    result["bytes_written"] += nbytes
    result["keys"][key] = nbytes


class KeyConversion(TypedDict):
    """What one task of a conversion did: a source key, a destination chunk or a copied key."""

    path: str | None  # the converted array; None for a copied key
    chunks: int
    written: int
    kept: int
    missing: int
    deleted: int  # destination chunks deleted (resume): the source has none there now
    bytes_read: int
    bytes_written: int
    problems: list[Problem]
    fatal: Problem | None  # the problem that stops the conversion
    keys: dict[str, int | None]  # destination keys: bytes written or kept, None if left empty
    journal: tuple[str, JournalEntry] | None  # (task, entry) once done without problems


def new_result(path: str | None, chunks: int) -> KeyConversion:
    """The counts a task returns, all zero: for ``chunks`` chunks of the array at ``path``."""
    return {
        "path": path,
        "chunks": chunks,
        "written": 0,
        "kept": 0,
        "missing": 0,
        "deleted": 0,
        "bytes_read": 0,
        "bytes_written": 0,
        "problems": [],
        "fatal": None,
        "keys": {},
        "journal": None,
    }


def convert_key(
    src_ref: StoreRef, dst_ref: StoreRef, conversion: Conversion, key_index: Index
) -> KeyConversion:
    """Convert the chunks under one source key (same chunk grid); a task."""
    src, dst = resolve(src_ref), resolve(dst_ref, "w")
    plan = conversion.source
    key = plan.key(key_index)
    chunks = plan.chunks_of_key(key_index)
    result = new_result(conversion.path, len(chunks))
    read = plan.read_parts(src, key_index)
    if read is None:
        result["missing"] = len(chunks)
        for index in chunks:
            drop_chunk(dst, conversion, conversion.key(index), result)
        return result
    result["bytes_read"], parts = read
    result["missing"] = len(chunks) - len(parts)
    held = {index for index, _, _ in parts}
    for index in chunks:
        if index not in held:
            drop_chunk(dst, conversion, conversion.key(index), result)
    for index, data, error in parts:
        if error is None:
            assert data is not None  # read_key gives each chunk's data or an error
            payload = _source_strings(conversion, key, index, data)
        else:
            payload = chunk_problem(plan, key, index, error)
        if isinstance(payload, Problem):
            result["problems"].append(payload)
            if not conversion.skip_invalid:
                result["fatal"] = payload
                return result
            drop_chunk(dst, conversion, conversion.key(index), result)
            continue  # left out: reads as the fill value
        write_chunk(dst, conversion, conversion.key(index), payload, result)
    return result


def copy_key(src_ref: StoreRef, dst_ref: StoreRef, key: str, resume: bool) -> KeyConversion:
    """Copy one key's bytes as they are; with resume, keep an equal copy. A task."""
    src, dst = resolve(src_ref), resolve(dst_ref, "w")
    data = src.get(key)
    result = new_result(None, 1)
    if data is None:  # deleted since it was listed: so is an earlier copy
        result["missing"] = 1
        result["keys"][key] = None
        if resume and _held(dst, key):
            dst.delete(key)
        return result
    result["bytes_read"] = data.nbytes
    result["keys"][key] = data.nbytes
    if resume:
        old = _old_copy(dst, key, data.nbytes)
        if old is not None and old == data.tobytes():
            result["kept"] = 1
            return result
    dst.set(key, data)
    result["written"] = 1
    result["bytes_written"] = data.nbytes
    return result


def _dest_keys(function: Callable[..., KeyConversion], args: tuple[Any, ...]) -> set[str]:
    """The destination keys the task ``function(*args)`` writes or leaves empty."""
    if function is copy_key:
        return {args[2]}
    conversion: Conversion = args[2]
    if function is convert_key:
        return {conversion.key(index) for index in conversion.source.chunks_of_key(args[3])}
    return {conversion.key(args[3])}  # convert_region: one destination chunk


def journaled(
    task: str,
    keys: list[str],
    salt: str,
    trusted: JournalEntry | None,
    function: Callable[..., KeyConversion],
    *args: Any,
) -> KeyConversion:
    """Run one conversion task, or skip it when the journal says it was done from this source."""
    # keys are fingerprinted before they are read, so a change while it runs is caught next resume.
    print_ = fingerprint(resolve(args[0]), keys, salt)
    if print_ is not None and trusted is not None and trusted.fingerprint == print_:
        path = args[2].path if isinstance(args[2], Conversion) else None
        chunks = len(args[2].source.chunks_of_key(args[3])) if function is convert_key else 1
        # An entry must account for every key the task writes, or it is done again.
        if trusted.missing <= chunks and set(trusted.keys) == _dest_keys(function, args):
            result = new_result(path, chunks)
            result["missing"] = trusted.missing
            result["kept"] = chunks - trusted.missing
            return result
    result = function(*args)
    if print_ is not None and not result["problems"] and result["fatal"] is None:
        result["journal"] = (task, JournalEntry(print_, result["missing"], result["keys"]))
    return result


def longest_key(src_ref: StoreRef, plan: ArrayPlan, key_index: Index) -> KeyLongest:
    """The longest string under one key of a string (vlen-utf8) array; a task."""
    import numcodecs

    src = resolve(src_ref)
    result: KeyLongest = {
        "path": plan.path,
        "chunks": len(plan.chunks_of_key(key_index)),
        "longest": 0,
        "problems": [],
    }
    read = plan.read_parts(src, key_index)
    for index, data, error in read[1] if read else ():
        try:
            if error is not None:
                raise error
            strings = numcodecs.VLenUTF8().decode(data)
        except Exception as exc:  # noqa: BLE001 - a codec's error is data, reported
            result["problems"].append(
                Problem(
                    "chunk", plan.path, f"not a vlen-utf8 chunk: {exc}", plan.key(key_index), index
                )
            )
            continue
        result["longest"] = max([result["longest"], *map(len, strings)])
    return result
