"""Batched calls: many chunks in one call, with the GIL released once.

A reader that decodes hundreds of small chunks pays the cost of a Python
call (about a microsecond) per chunk with :func:`~fixedutf32.decode_chunk`;
these functions take the whole batch, check its arguments, acquire every
buffer and run the kernels over all of it in one call without the GIL.
An error names the chunk at fault (``chunk`` on the exception, and in its
message) and leaves every ``out`` as it was, unless an input was changed by
another thread during the call (see the Notes of :func:`decode_chunks`).
Outs that overlap one another, or a chunk other than their own, are refused
before anything is written.

Argument checks and messages live here; the loop is ``convert_many`` in
``_batch.pxi``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._arguments import (
    _SWAPPED,
    NATIVE_ENDIAN,
    _batch_items,
    as_bytes,
    byte_views,
    check_bool,
    check_endian,
    check_length_bytes,
    check_out_endian,
    element_count,
    unicode_dtype,
    writable_byte_views,
)
from ._status import status_error
from .chunk import _as_unicode_array, encode_chunk
from .errors import ChunkSizeError, InvalidCodePointError, StringTooLongError

if TYPE_CHECKING:
    from ._arguments import ByteView
    from ._kernels import Buffer

__all__ = ["decode_chunks", "encode_chunks", "validate_chunks"]

_VALIDATE = _kernels.VALIDATE
_SRC_SWAPPED = _kernels.SRC_SWAPPED
_SWAP = _kernels.SWAP
_UINT8 = np.dtype(np.uint8)


def _raise_batch_error(index: int, status: _kernels.Status, length_bytes: int, what: str) -> None:
    """Raise the error for what ``convert_many`` reported about chunk ``index``."""
    kind = status[0]
    if kind == _kernels.BATCH_BAD_SIZE:
        element_count(status[2], length_bytes, None, name=f"{what}[{index}]")
    if kind == _kernels.BATCH_BAD_OUT_SIZE:
        raise ChunkSizeError(
            f"outs[{index}] holds {status[2]} bytes, expected exactly {status[3]} bytes "
            f"for {what}[{index}]"
        )
    if kind == _kernels.BATCH_OVERLAP:
        source = status[2]
        if source == index:
            raise ValueError(
                f"outs[{index}] partly overlaps {what}[{index}]; pass {what}[{index}] itself "
                f"(in place) or a separate buffer"
            )
        raise ValueError(
            f"outs[{index}] overlaps {what}[{source}], which the batch reads while it writes: "
            f"an out may be its own {what[:-1]} (in place), never another's"
        )
    if kind == _kernels.BATCH_OUTS_OVERLAP:
        how = "are the same buffer" if status[3] else "overlap in memory"
        raise ValueError(
            f"outs[{index}] and outs[{status[2]}] {how}: each {what[:-1]} needs an out of its own"
        )
    raise status_error(status, capacity=length_bytes >> 2, chunk=index)


def _converted(
    views: list[Any], width: int, flags: int, what: str, dtype: np.dtype[Any]
) -> list[Any]:
    """``views`` converted into one new buffer, cut into one 1-D ``dtype`` view per chunk."""
    index, status, whole, size = _kernels.converted_many(views, width, flags)
    if status[0] or whole is None:
        _raise_batch_error(index, status, 4 * width, what)
        raise AssertionError("unreachable")  # pragma: no cover
    typed = whole.view(dtype)
    if size >= 0:
        # Rows of a 2-D view: NumPy makes them in C, much faster than slicing.
        return list(typed.reshape(len(views), size // dtype.itemsize))
    parts = []
    start = 0
    for view in views:
        stop = start + as_bytes(view).nbytes // dtype.itemsize
        parts.append(typed[start:stop])
        start = stop
    return parts


def validate_chunks(chunks: Sequence[Buffer], length_bytes: int, *, endian: str = "little") -> None:
    """Check that every code unit of every chunk is a Unicode scalar value, in one call.

    The batched :func:`~fixedutf32.validate`: the GIL is released once for
    the whole batch.

    Parameters
    ----------
    chunks : sequence of buffer
        The chunks' bytes, each a C-contiguous buffer (bytes, bytearray,
        memoryview, mmap, numpy.ndarray...) of a whole number of elements.
        Read only, never copied.
    length_bytes : int
        Bytes per element, a positive multiple of 4, the same for every chunk.
    endian : {"little", "big"}
        Byte order of the code units.

    Returns
    -------
    None

    Raises
    ------
    InvalidCodePointError
        At the first invalid code unit, in the first chunk that has one:
        its ``chunk``, ``index`` and ``position`` say where.
    ChunkSizeError
        If a chunk is not a whole number of elements (its index is named).
    ValueError
        If ``length_bytes`` or ``endian`` is invalid.
    TypeError, BufferError
        If ``chunks`` is not a sequence, or one of them has no buffer, a
        non-contiguous one, or is an array whose items are not plain bytes.

    Examples
    --------
    >>> import fixedutf32
    >>> good = "Hi".encode("utf-32-le")
    >>> fixedutf32.validate_chunks([good, good], 8)
    >>> fixedutf32.validate_chunks([good, b"\\x00\\xd8\\x00\\x00" * 2], 8)
    Traceback (most recent call last):
    ...
    fixedutf32.errors.InvalidCodePointError: invalid code point U+D800 (surrogate) at chunk 1, ...
    """
    length_bytes = check_length_bytes(length_bytes)
    swapped = check_endian(endian)
    views = byte_views(chunks, "chunks")
    index, status = _kernels.convert_many(
        views, None, length_bytes >> 2, _VALIDATE | (_SRC_SWAPPED if swapped else 0), True
    )
    if status[0]:
        _raise_batch_error(index, status, length_bytes, "chunks")


@overload
def decode_chunks(
    chunks: Sequence[Buffer],
    length_bytes: int,
    *,
    endian: str = ...,
    validate: bool = ...,
    outs: None = ...,
) -> list[npt.NDArray[np.str_]]: ...
@overload
def decode_chunks(
    chunks: Sequence[Buffer],
    length_bytes: int,
    *,
    endian: str = ...,
    validate: bool = ...,
    outs: Sequence[Buffer],
) -> None: ...
def decode_chunks(
    chunks: Sequence[Buffer],
    length_bytes: int,
    *,
    endian: str = "little",
    validate: bool = True,
    outs: Sequence[Buffer] | None = None,
) -> list[npt.NDArray[np.str_]] | None:
    """Decode many chunks into native NumPy ``U`` arrays, in one call.

    The batched :func:`~fixedutf32.decode_chunk`: every chunk is checked
    and converted with the GIL released once.

    Parameters
    ----------
    chunks : sequence of buffer
        The chunks' bytes, each a C-contiguous buffer of a whole number of
        elements (their sizes may differ).
    length_bytes : int
        Bytes per element, a positive multiple of 4, the same for every chunk.
    endian : {"little", "big"}
        Byte order of the code units in the chunks.
    validate : bool
        Check that every code unit is a Unicode scalar value.
    outs : sequence of buffer, optional
        One writable C-contiguous buffer per chunk, each exactly as large as
        its chunk, to decode into; ``outs[i]`` may be ``chunks[i]`` itself
        (in place), as for :func:`~fixedutf32.decode_chunk`, but must not
        partly overlap it, nor overlap another chunk or another out.

    Returns
    -------
    list of numpy.ndarray or None
        Without ``outs``, one 1-D native ``U{length_bytes // 4}`` array per
        chunk, always a copy: all of them are views of one new buffer
        (freed when the last of them is).  With ``outs``, None: the decoded
        units are in ``outs``.

    Raises
    ------
    InvalidCodePointError
        At the first invalid code unit of the first chunk that has one
        (``validate=True``): its ``chunk``, ``index`` and ``position`` say
        where.  Every ``out``, in place ones too, is then left exactly as
        it was (unless a chunk changed during the call: see Notes).
    ChunkSizeError
        If a chunk is not a whole number of elements, or an ``out`` does not
        have its chunk's size (the index is named).
    ValueError
        If ``length_bytes`` or ``endian`` is invalid, ``outs`` has another
        length than ``chunks``, an ``out`` partly overlaps its chunk or
        overlaps another chunk, two outs overlap (the same buffer given
        twice included; both indices are named), or an ``out`` is a ``U``
        array not in native byte order.  Nothing is written then.
    TypeError, BufferError
        If ``chunks`` or ``outs`` is not a sequence, or one of them has no
        buffer, a non-contiguous or (``outs``) read-only one, or is an array
        whose items are not plain bytes; if ``validate`` is not a bool.

    Notes
    -----
    Every argument (sizes, overlaps) is checked before anything is written.
    With ``outs`` and ``validate``, the call then makes two passes with the
    GIL released: the first checks every chunk, the second converts them
    one after the other into their outs, checking each unit again as it
    writes it.  So an error that comes from the data leaves every out as
    it was.

    The GIL is released, so another thread may write to a chunk during the
    call (a caller's bug).  What that can do:

    - A change the first pass sees raises, with every out as it was.
    - A unit made invalid between the passes is caught by the second one
      when the chunk is copied (a separate out, or a byte swap in place):
      the call raises, and the outs of the chunks before it, and part of
      its own, have been written (with checked units only).
    - A unit changed after its chunk was written is not seen: the out holds
      what was checked.
    - An in place decode without a byte swap copies nothing: the out is the
      caller's memory, checked in the first pass only; as for
      :func:`~fixedutf32.decode_chunk`, it must not change during the call.

    It cannot put an unchecked unit into a separate out, nor touch memory
    outside the buffers given.  Without ``outs``, the chunks are checked as
    they are copied into new memory, in one pass: the arrays returned hold
    exactly what was checked, or the call raises.  With ``validate=False``
    nothing is checked, so nothing can fail once writing has begun.

    Examples
    --------
    >>> import fixedutf32
    >>> chunks = ["Hi".encode("utf-32-be"), "yo!\\x00".encode("utf-32-be")]
    >>> fixedutf32.decode_chunks(chunks, 8, endian="big")
    [array(['Hi'], dtype='<U2'), array(['yo', '!'], dtype='<U2')]
    >>> outs = [bytearray(8), bytearray(16)]
    >>> fixedutf32.decode_chunks(chunks, 8, endian="big", outs=outs)
    >>> bytes(outs[0]) == "Hi".encode("utf-32-le")
    True
    """
    length_bytes = check_length_bytes(length_bytes)
    swapped = _SWAPPED.get(endian) if type(endian) is str else None
    if swapped is None:
        swapped = check_endian(endian)
    flags = _VALIDATE if validate is True or check_bool(validate, "validate") else 0
    if swapped:
        flags |= _SRC_SWAPPED | _SWAP
    views = byte_views(chunks, "chunks")
    width = length_bytes >> 2
    if outs is None:
        return _converted(views, width, flags, "chunks", unicode_dtype(width))
    out_items = _batch_items(outs, "outs")
    if len(out_items) != len(views):
        raise ValueError(f"outs must hold one buffer per chunk: {len(views)}, got {len(out_items)}")
    for index, out in enumerate(out_items):
        if type(out) is np.ndarray:
            check_out_endian(out, NATIVE_ENDIAN, f"outs[{index}]")  # the result is native
    index, status = _kernels.convert_many(
        views, writable_byte_views(out_items, "outs"), width, flags, True
    )
    if status[0]:
        _raise_batch_error(index, status, length_bytes, "chunks")
    return None


def _in_batch(error: Exception, index: int) -> Exception:
    """``error`` raised by a single-chunk call, said of chunk ``index`` of a batch."""
    if isinstance(error, InvalidCodePointError):
        return InvalidCodePointError(error.index, error.position, error.code_point, chunk=index)
    if isinstance(error, StringTooLongError):
        return StringTooLongError(error.index, error.length, error.capacity, chunk=index)
    return type(error)(f"arrays[{index}]: {error}")


@overload
def encode_chunks(
    arrays: Sequence[npt.ArrayLike],
    length_bytes: int | None = ...,
    *,
    endian: str = ...,
    validate: bool = ...,
    outs: None = ...,
) -> list[npt.NDArray[np.uint8]]: ...
@overload
def encode_chunks(
    arrays: Sequence[npt.ArrayLike],
    length_bytes: int | None = ...,
    *,
    endian: str = ...,
    validate: bool = ...,
    outs: Sequence[Buffer],
) -> None: ...
def encode_chunks(
    arrays: Sequence[npt.ArrayLike],
    length_bytes: int | None = None,
    *,
    endian: str = "little",
    validate: bool = True,
    outs: Sequence[Buffer] | None = None,
) -> list[npt.NDArray[np.uint8]] | None:
    """Turn many arrays of strings into the bytes of their chunks, in one call.

    The batched :func:`~fixedutf32.encode_chunk` (in C order).  The arrays
    whose width is the chunk's are converted in one call with the GIL
    released once; the others (narrower or wider, padded or checked for
    length) go through :func:`~fixedutf32.encode_chunk` one by one.

    Parameters
    ----------
    arrays : sequence of array_like of str
        NumPy ``U`` arrays (any byte order, shape and layout), ``StringDType``
        or object arrays of ``str``, or sequences of ``str``.
    length_bytes : int, optional
        Bytes per element, a positive multiple of 4.  Default: the width of
        ``arrays[0]``.
    endian : {"little", "big"}
        Byte order of the code units in the chunks.
    validate : bool
        Check that every code unit is a Unicode scalar value.
    outs : sequence of buffer, optional
        One writable C-contiguous buffer per array, of exactly
        ``array.size * length_bytes`` bytes, overlapping no other out and no
        array the batch reads as it writes; ``outs[i]`` may be the memory of
        ``arrays[i]`` itself when that already has the chunk's width (in
        place, as for :func:`~fixedutf32.encode_chunk`).

    Returns
    -------
    list of numpy.ndarray or None
        Without ``outs``, one 1-D ``uint8`` chunk per array, always a copy
        (those encoded together are views of one new buffer).  With
        ``outs``, None: the chunks are in ``outs``.

    Raises
    ------
    InvalidCodePointError, StringTooLongError
        At the first invalid code unit or string too long for the width, in
        the first array that has one: its ``chunk`` is the array's index.
        Every ``out`` is then left as it was (unless an array changed during
        the call: see the Notes of :func:`decode_chunks`, which hold here).
    ChunkSizeError
        If an ``out`` does not have its chunk's size.
    ValueError
        If two outs overlap (the same buffer twice included) or an out
        overlaps an array other than its own; both indices are named and
        nothing is written.
    ValueError, TypeError
        As :func:`~fixedutf32.encode_chunk` (the array's index named), and
        if ``arrays`` or ``outs`` is not a sequence or they differ in length.

    Notes
    -----
    The arrays of the chunk's width are converted as
    :func:`decode_chunks` converts chunks (two passes with ``outs``); the
    others are encoded first, one by one into new memory, and copied into
    their outs only once everything else has succeeded.  An array copied
    before anything is written (one of another width, or one NumPy had to
    make contiguous or swap) may overlap an out: that cannot change the
    result, and is not refused.

    Examples
    --------
    >>> import numpy as np, fixedutf32
    >>> chunks = fixedutf32.encode_chunks([np.array(["Hi"]), np.array(["a", "b"])], 8)
    >>> [bytes(chunk).decode("utf-32-le") for chunk in chunks]
    ['Hi', 'a\\x00b\\x00']
    """
    target_swapped = check_endian(endian)
    validate = check_bool(validate, "validate")
    items = _batch_items(arrays, "arrays")
    out_items = None if outs is None else _batch_items(outs, "outs")
    if out_items is not None and len(out_items) != len(items):
        raise ValueError(f"outs must hold one buffer per array: {len(items)}, got {len(out_items)}")
    unicode: list[npt.NDArray[np.str_]] = []
    for index, item in enumerate(items):
        try:
            array = item if type(item) is np.ndarray and item.dtype.kind == "U" else None
            unicode.append(_as_unicode_array(item) if array is None else array)
        except (TypeError, ValueError) as error:
            raise _in_batch(error, index) from None
    if length_bytes is None:
        capacity = max(unicode[0].dtype.itemsize >> 2, 1) if unicode else 1
    else:
        capacity = check_length_bytes(length_bytes) >> 2
    # Those of the chunk's width go together, in the byte order of the first of them.
    together = [i for i, a in enumerate(unicode) if a.dtype.itemsize == 4 * capacity]
    dtype = unicode[together[0]].dtype if together else unicode_dtype(capacity)
    sources: list[ByteView] = []
    for i in together:
        array = unicode[i]
        if array.dtype != dtype:
            array = array.astype(dtype)  # the other byte order: the same code units, swapped
        sources.append(np.ascontiguousarray(array).reshape(-1))
    source_swapped = not dtype.isnative
    flags = (_VALIDATE if validate else 0) | (_SRC_SWAPPED if source_swapped else 0)
    if source_swapped != target_swapped:
        flags |= _SWAP
    results: list[Any] = [None] * len(unicode)
    # The others first, one by one, repadded (and checked for length) by
    # encode_chunk into new arrays: an error there leaves every out unwritten.
    others = [i for i, a in enumerate(unicode) if a.dtype.itemsize != 4 * capacity]
    for i in others:
        try:
            results[i] = encode_chunk(unicode[i], 4 * capacity, endian=endian, validate=validate)
        except (TypeError, ValueError) as error:
            raise _in_batch(error, i) from None
    if out_items is None:
        try:
            parts = _converted(sources, capacity, flags, "arrays", _UINT8)
        except (InvalidCodePointError, StringTooLongError) as error:
            raise _in_batch(error, together[error.chunk or 0]) from None
        for i, part in zip(together, parts):
            results[i] = part
        return results
    out_views = writable_byte_views(out_items, "outs")
    for i, out in enumerate(out_items):
        check_out_endian(out, endian, f"outs[{i}]")
    for i in others:
        out_nbytes = as_bytes(out_views[i]).nbytes
        if out_nbytes != results[i].nbytes:
            raise ChunkSizeError(
                f"outs[{i}] holds {out_nbytes} bytes, expected exactly {results[i].nbytes} "
                f"bytes for arrays[{i}]"
            )
    # Overlaps, in the callers' indices, before anything is written: the
    # arrays converted here are read while outs are written (and may be their
    # own out, in place); the others are already encoded into new memory.
    read: list[ByteView | None] = [None] * len(unicode)
    for i, source in zip(together, sources):
        read[i] = source
    index, status = _kernels.overlap_many(read, out_views)
    if status[0]:
        _raise_batch_error(index, status, 4 * capacity, "arrays")
    index, status = _kernels.convert_many(
        sources, [out_views[i] for i in together], capacity, flags, True
    )
    if status[0]:
        _raise_batch_error(together[index], status, 4 * capacity, "arrays")
    for i in others:
        np.frombuffer(out_views[i], _UINT8)[:] = results[i]
    return None
