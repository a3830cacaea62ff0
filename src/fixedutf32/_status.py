"""Kernel statuses ``(kind, element, position, detail)`` to exceptions: made here only."""
# Kinds are defined once, in csrc/common.h.

from __future__ import annotations

from typing import Any

from . import _kernels
from ._arguments import as_bytes
from .errors import (
    ChunkSizeError,
    FixedUTF32Error,
    InvalidCodePointError,
    InvalidUTF8Error,
    StringTooLongError,
)

_UTF8_REASONS = {
    _kernels.UTF8_TOO_LARGE: "the sequence encodes a value above U+10FFFF",
    _kernels.UTF8_SURROGATE: "the sequence encodes a surrogate (U+D800..U+DFFF)",
    _kernels.UTF8_HEADER_BITS: "this byte never occurs in UTF-8",
    _kernels.UTF8_TOO_SHORT: (
        "truncated sequence: the lead byte is not followed by enough continuation bytes"
    ),
    _kernels.UTF8_STRAY_CONTINUATION: "continuation byte without a lead byte",
    _kernels.UTF8_OVERLONG: "overlong encoding (the value needs fewer bytes)",
}


def status_error(
    status: _kernels.Status,
    *,
    # Each is given with the kinds that need it (see below).
    capacity: Any = None,
    values: Any = None,
    starts: Any = None,
    chunk: int | None = None,
) -> FixedUTF32Error | ValueError:
    """The exception for a kernel status that is not ``OK``, for the caller to raise."""
    # values/starts: the UTF-8 read (bytes at the error shown); chunk: the batch index named.
    kind, element, position, detail = status
    if kind == _kernels.TOO_LARGE or kind == _kernels.SURROGATE:
        return InvalidCodePointError(element, position, detail, chunk=chunk)
    if kind == _kernels.STRING_TOO_LONG:
        return StringTooLongError(element, detail, capacity, chunk=chunk)
    reason = _UTF8_REASONS.get(kind)
    if reason is not None:
        start = int(starts[element]) + position
        shown = bytes(as_bytes(values)[start : start + 4]).hex(" ")
        return InvalidUTF8Error(element, position, f"{reason} (bytes there: {shown})")
    if kind == _kernels.BAD_OFFSETS:
        nbytes = as_bytes(values).nbytes
        return ValueError(
            f"offsets of string {element} do not lie inside values "
            f"({nbytes} bytes): expected 0 <= offsets[{element}] <= offsets[{element + 1}] "
            f"<= {nbytes}"
        )
    if kind == _kernels.BAD_VLEN:
        nbytes = as_bytes(values).nbytes
        if detail > 0:  # bytes left over after the last item (element: the item count)
            return ChunkSizeError(
                f"vlen-utf8 chunk of {nbytes} bytes has {detail} bytes left over: "
                f"its header announces {element} items, which end at byte {position}"
            )
        return ChunkSizeError(
            f"vlen-utf8 chunk of {nbytes} bytes is truncated: item {element} "
            f"(header or bytes at offset {position}) runs past its end"
        )
    return FixedUTF32Error(f"internal error: kernel status {status}")  # pragma: no cover
