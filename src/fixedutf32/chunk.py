"""Encode and decode whole fixed_length_utf32 chunks.

A chunk is what the Zarr ``bytes`` codec makes of an array of this data type:
``size * length_bytes`` bytes, each element ``length_bytes // 4`` UTF-32 code
units in the codec's byte order, zero-padded at the end.  The same bytes are a
Zarr V2 ``<U``/``>U`` chunk.

Argument checks and messages live here; the loops live in ``_kernels.pyx``
and run without the GIL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._arguments import (
    _SWAPPED,
    NATIVE_ENDIAN,
    byte_view,
    check_bool,
    check_byte_count,
    check_endian,
    check_length_bytes,
    check_order,
    check_out_endian,
    check_out_overlap,
    check_out_size,
    element_count,
    unicode_dtype,
    writable_byte_view,
)
from ._pool import new_array
from ._status import status_error
from .errors import FixedUTF32Error

if TYPE_CHECKING:
    # BytesOutT: what a function with out= returns, out's type or a new uint8
    # array.  Where the new array is returned, "type: ignore[return-value]"
    # stands for typing.cast, which would cost a call on every chunk.
    from ._arguments import ByteView
    from ._kernels import Buffer, BytesOutT


__all__ = ["decode_chunk", "encode_chunk", "validate", "byteswap", "repad", "str_lengths"]

_VALIDATE = _kernels.VALIDATE
_SRC_SWAPPED = _kernels.SRC_SWAPPED
_SWAP = _kernels.SWAP
_STREAM = _kernels.STREAM
_converted = _kernels.converted
_OK = _kernels.OK_STATUS
# Native U dtypes of the usual widths by length_bytes, for the hot path.
_NATIVE_DTYPES = {4 * n: unicode_dtype(n) for n in range(1, 65)}
_UINT8 = np.dtype(np.uint8)

# Outputs at least this large are written with non-temporal stores (the
# threshold lives in _kernels, which applies it to new arrays itself).
STREAM_THRESHOLD_BYTES = _kernels.STREAM_MIN_BYTES


def set_buffer_pool_limit(nbytes: int) -> int:
    """Keep at most ``nbytes`` of freed output buffers for reuse (0 turns the pool off).

    A chunk of at least 32 KiB decoded or encoded into a new array takes its
    memory from this pool when a freed buffer of a fitting size is there,
    which avoids the page faults of fresh memory.  At most 64 buffers and, by
    default, 512 MiB are kept.

    Parameters
    ----------
    nbytes : int
        The new limit in bytes; buffers beyond it are freed at once.

    Returns
    -------
    int
        The previous limit.

    Raises
    ------
    ValueError
        If ``nbytes`` is negative or above ``sys.maxsize``.
    TypeError
        If ``nbytes`` is not an int.

    Examples
    --------
    >>> import fixedutf32
    >>> previous = fixedutf32.set_buffer_pool_limit(0)  # free the pool
    >>> fixedutf32.buffer_pool_bytes()
    0
    >>> fixedutf32.set_buffer_pool_limit(previous)
    0
    """
    return _kernels.set_buffer_pool_limit(check_byte_count(nbytes, "the pool limit"))


def _stream_flag(nbytes: int) -> int:
    return _STREAM if nbytes >= STREAM_THRESHOLD_BYTES else 0


def validate(data: Buffer, length_bytes: int, *, endian: str = "little") -> None:
    """Check that every code unit of a chunk is a Unicode scalar value.

    Parameters
    ----------
    data : buffer
        The chunk's bytes: any C-contiguous object with the buffer protocol
        (bytes, bytearray, memoryview, mmap, array.array, numpy.ndarray).
        Read only; never copied, so the verdict is about the units as they
        were read: another thread must not change them during the call.
    length_bytes : int
        Bytes per element, a positive multiple of 4.
    endian : {"little", "big"}
        Byte order of the code units.

    Returns
    -------
    None

    Raises
    ------
    InvalidCodePointError
        At the first code unit above U+10FFFF or in U+D800..U+DFFF; its
        ``index``, ``position`` and ``code_point`` say where and what.
    ChunkSizeError
        If the size of ``data`` is not a multiple of ``length_bytes``.
    ValueError
        If ``length_bytes`` or ``endian`` is invalid (``length_bytes`` above
        2147483644, the widest NumPy ``U`` item, included).
    TypeError, BufferError
        If ``data`` has no buffer, or a non-contiguous one, or is an array
        whose items are not plain bytes (object, ``StringDType``, bool,
        float...).

    Examples
    --------
    >>> import fixedutf32
    >>> fixedutf32.validate("Hi\\x00".encode("utf-32-le"), 12)
    >>> fixedutf32.validate(b"\\x00\\xd8\\x00\\x00", 4)
    Traceback (most recent call last):
    ...
    fixedutf32.errors.InvalidCodePointError: invalid code point U+D800 (surrogate) at element 0, ...
    """
    # The common cases first, as in decode_chunk: readers call this per chunk.
    if type(length_bytes) is not int or length_bytes not in _NATIVE_DTYPES:
        length_bytes = check_length_bytes(length_bytes)
    swapped = _SWAPPED.get(endian) if type(endian) is str else None
    if swapped is None:
        swapped = check_endian(endian)
    src, nbytes = byte_view(data, "data")
    if nbytes % length_bytes:
        element_count(nbytes, length_bytes, None)  # raises ChunkSizeError
    status = _kernels.validate(src, length_bytes >> 2, swapped)
    if status[0]:
        raise status_error(status)


def decode_chunk(
    data: Buffer,
    length_bytes: int,
    *,
    endian: str = "little",
    shape: int | Sequence[int] | None = None,
    order: Literal["C", "F"] = "C",
    validate: bool = True,
    out: BytesOutT | None = None,
) -> npt.NDArray[np.str_]:
    """Turn the bytes of a chunk into a native NumPy ``U`` array.

    Parameters
    ----------
    data : buffer
        The chunk's bytes: any C-contiguous object with the buffer protocol
        (bytes, bytearray, memoryview, mmap, array.array, numpy.ndarray).
    length_bytes : int
        Bytes per element, a positive multiple of 4 (the data type's
        ``length_bytes``; ``4 * n`` for a Zarr V2 ``<Un``).
    endian : {"little", "big"}
        Byte order of the code units in ``data`` (the ``bytes`` codec's
        ``endian``).
    shape : int or tuple of int, optional
        Shape of the result; default one dimension of
        ``len(data) // length_bytes`` elements.
    order : {"C", "F"}
        Element order of ``data`` (Zarr V2 arrays may be ``"F"``).
    validate : bool
        Check that every code unit is a Unicode scalar value.  ``False`` is
        for trusted data and is never slower.
    out : buffer, optional
        Writable C-contiguous buffer of exactly ``len(data)`` bytes to write
        the decoded elements to.  May be ``data`` itself, to decode in place.

    Returns
    -------
    numpy.ndarray
        Array of native-byte-order ``U{length_bytes // 4}`` of ``shape``,
        laid out in ``order``.  It shares memory with ``out`` when given,
        else with ``data`` when no byte swap is needed (no copy; read-only
        when ``data`` is), else it owns a new buffer.

    Raises
    ------
    InvalidCodePointError
        At the first invalid code unit (``validate=True``).  ``data`` and
        ``out`` are then left exactly as they were, in place decodes too.
    ChunkSizeError
        If ``data`` is not a whole number of elements, or does not match
        ``shape`` or the size of ``out``.
    ValueError
        If ``length_bytes``, ``endian`` or ``order`` is invalid
        (``length_bytes`` above 2147483644, the widest NumPy ``U`` item,
        included), if ``out`` partly overlaps ``data``, or if ``out`` is a
        ``U`` array that is not in native byte order.
    TypeError, BufferError
        If ``data`` or ``out`` has no buffer or a non-contiguous one, is an
        array whose items are not plain bytes (object, ``StringDType``,
        bool, float...), or if ``out`` is read-only; if ``validate`` is not
        a bool.

    Notes
    -----
    The GIL is released while the units are read, so another thread may
    write to ``data`` during the call.  A decode that copies (a byte swap
    into a new array, or into a separate ``out``) checks each code unit as
    it writes it: it returns exactly what it checked, or raises; when it
    raises because ``data`` changed during the call, ``out`` may have been
    partly written.  A decode that copies nothing (the result a view of
    ``data``, or ``out`` being ``data``) checks the caller's own memory:
    the caller must not change it during the call.

    Examples
    --------
    >>> import fixedutf32
    >>> chunk = bytes.fromhex("000000480000006900000000")  # the spec's "Hi"
    >>> fixedutf32.decode_chunk(chunk, 12, endian="big")
    array(['Hi'], dtype='<U3')
    >>> fixedutf32.decode_chunk("abcdef".encode("utf-32-le"), 8, shape=(1, 3))
    array([['ab', 'cd', 'ef']], dtype='<U2')
    """
    # Each check is inlined for its common case; the helpers word the errors.
    # A width in the table of usual dtypes is valid: one lookup checks it.
    dtype = _NATIVE_DTYPES.get(length_bytes) if type(length_bytes) is int else None
    if dtype is None:
        length_bytes = check_length_bytes(length_bytes)
        dtype = unicode_dtype(length_bytes >> 2)
    flags = _VALIDATE if validate is True or check_bool(validate, "validate") else 0
    swapped = _SWAPPED.get(endian) if type(endian) is str else None
    if swapped is None:
        swapped = check_endian(endian)
    if order != "C":
        check_order(order)
    src: ByteView
    cls = type(data)
    if cls is bytes or cls is bytearray:
        src, nbytes = data, len(data)  # type: ignore[assignment,arg-type]
    else:
        src, nbytes = byte_view(data, "data")
    count = nbytes // length_bytes
    if shape is not None or count * length_bytes != nbytes:
        count, shape = element_count(nbytes, length_bytes, shape)
    if swapped:
        flags |= _SRC_SWAPPED | _SWAP

    # The common cases are spelled out inline: this function is on the hot
    # path of readers that decode many small chunks.
    if out is None:
        if not swapped:
            if validate:
                status = _kernels.validate(src, length_bytes >> 2, False)
                if status[0]:
                    raise status_error(status)
            result = np.frombuffer(src, dtype)
        else:
            status, result = _converted(src, dtype, count, nbytes, length_bytes >> 2, flags)
            if status[0]:
                raise status_error(status)
    else:
        check_out_endian(out, NATIVE_ENDIAN)  # the result is native
        dst, out_nbytes = writable_byte_view(out, "out")
        check_out_size(out_nbytes, nbytes, f"{count} elements of length_bytes {length_bytes}")
        _write_units(src, dst, flags, length_bytes >> 2)
        result = np.frombuffer(dst, dtype)

    if shape is not None and len(shape) != 1:
        result = result.reshape(shape, order=order)
    return result


def _write_units(src: ByteView, dst: ByteView, flags: int, width: int) -> None:
    """Convert ``src`` into ``dst`` by ``flags``, leaving ``dst`` untouched on error."""
    swapped = bool(flags & _SRC_SWAPPED)
    if check_out_overlap(dst, [("data", src)], in_place=True):
        # In place: the kernel swaps the prefix back if it finds a bad unit.
        if flags & _SWAP:
            status = _kernels.convert(src, dst, width, flags)
        elif flags & _VALIDATE:
            status = _kernels.validate(src, width, swapped)
        else:
            return
    else:
        # A separate buffer: check everything first so that a bad unit near
        # the end cannot leave ``out`` half written; the copy checks again
        # what it writes (at no cost: in the same pass), so that a unit
        # another thread changes in between cannot get through.
        status = _kernels.validate(src, width, swapped) if flags & _VALIDATE else _OK
        if not status[0]:
            flags |= _stream_flag(memoryview(dst).nbytes)  # type: ignore[arg-type]
            status = _kernels.convert(src, dst, width, flags)
    if status[0]:
        raise status_error(status)


def _repad_chunk(
    src: ByteView,
    out: BytesOutT | None,
    count: int,
    from_units: int,
    to_units: int,
    flags: int,
) -> BytesOutT:
    """Write ``count`` elements of ``src`` at the new width into a new array or ``out``."""
    nbytes = count * to_units * 4
    if out is None:
        result = new_array(nbytes, _UINT8)
        status = _kernels.repad(src, result, from_units, to_units, flags | _stream_flag(nbytes))
        if status[0]:
            raise status_error(status, capacity=to_units)
        return result  # type: ignore[return-value]  # out is None: the default type
    dst, out_nbytes = writable_byte_view(out, "out")
    check_out_size(out_nbytes, nbytes, f"{count} elements of length_bytes {4 * to_units}")
    check_out_overlap(dst, [("data", src)])
    # Check everything first so that a bad element late in the chunk cannot
    # leave ``out`` half written; the writing pass checks again what it
    # writes, so that a unit another thread changes in between cannot get through.
    status = _kernels.repad(src, None, from_units, to_units, flags)
    if not status[0]:
        status = _kernels.repad(src, dst, from_units, to_units, flags | _stream_flag(nbytes))
    if status[0]:
        raise status_error(status, capacity=to_units)
    return out


def _as_unicode_array(array: object) -> npt.NDArray[np.str_]:
    """``array`` as a NumPy ``U`` array (a view where it already is one)."""
    if isinstance(array, np.ndarray):
        kind = array.dtype.kind
        if kind == "U":
            return array
        if kind == "T":
            from .transcode import string_dtype_to_unicode

            return string_dtype_to_unicode(array)
        if kind != "O":
            raise TypeError(
                f"array must hold strings (NumPy 'U', StringDType, or object array of "
                f"str), got dtype {array.dtype}"
            )
        objects = array
    elif isinstance(array, str):
        return np.array(array)
    else:
        objects = np.empty(0, dtype=object)
        try:
            objects = np.array(array, dtype=object)
        except ValueError as exc:
            raise TypeError(f"array must be a (nested) sequence of str: {exc}") from None
    for index, item in enumerate(objects.flat):
        if not isinstance(item, str):
            raise TypeError(
                f"element {index} is a {type(item).__name__} ({item!r:.40}); expected str"
            )
    return objects.astype(np.str_) if objects.size else objects.astype("U1")


def encode_chunk(
    array: npt.ArrayLike,
    length_bytes: int | None = None,
    *,
    endian: str = "little",
    order: Literal["C", "F"] = "C",
    validate: bool = True,
    out: BytesOutT | None = None,
) -> BytesOutT:
    """Turn an array of strings into the bytes of a chunk.

    Parameters
    ----------
    array : array_like of str
        A NumPy ``U`` array of any width, byte order and memory layout; a
        NumPy 2 ``StringDType`` array; an object array of ``str``; a (nested)
        sequence of ``str``; or one ``str``.
    length_bytes : int, optional
        Bytes per element, a positive multiple of 4.  Default: the width of
        ``array`` (``4 * n`` for ``U{n}``).  Shorter strings are padded with
        U+0000.
    endian : {"little", "big"}
        Byte order of the code units in the chunk.
    order : {"C", "F"}
        Order in which the elements are written.
    validate : bool
        Check that every code unit is a Unicode scalar value (a NumPy ``U``
        array may hold lone surrogates).  ``False`` is for trusted data and
        is never slower.
    out : buffer, optional
        Writable C-contiguous buffer of exactly ``array.size * length_bytes``
        bytes to write the chunk to.

    Returns
    -------
    numpy.ndarray or out
        A 1-D ``uint8`` array of ``array.size * length_bytes`` bytes, or
        ``out`` when given.  When ``array`` is a ``U`` array already laid out
        as the chunk (same width, byte order ``endian``, contiguous in
        ``order``), the result is a view of ``array``'s memory, not a copy.

    Raises
    ------
    StringTooLongError
        If a string holds more than ``length_bytes // 4`` code points.
    InvalidCodePointError
        At the first code unit that is not a Unicode scalar value.
    ChunkSizeError
        If ``out`` is not exactly the chunk's size.
    TypeError
        If ``array`` does not hold strings, ``out`` is not a writable
        buffer of plain bytes (an object or ``StringDType`` array is not),
        or ``validate`` is not a bool.
    ValueError
        If ``length_bytes``, ``endian`` or ``order`` is invalid
        (``length_bytes`` above 2147483644, the widest NumPy ``U`` item,
        included); if ``out`` is a ``U`` array of the other byte order than
        ``endian``; if a ``StringDType`` array holds a missing value (its
        index is named).

    ``out`` is left exactly as it was when an error is raised.

    Notes
    -----
    The GIL is released while the units are read, so another thread may
    write to ``array`` during the call.  An encode that copies checks each
    code unit as it writes it: it returns exactly what it checked, or
    raises (and ``out`` may then have been partly written).  An encode that
    returns a view of ``array`` checks the caller's own memory: the caller
    must not change it during the call.

    Examples
    --------
    >>> import fixedutf32
    >>> bytes(fixedutf32.encode_chunk(["Hi"], 12, endian="big")).hex()
    '000000480000006900000000'
    >>> bytes(fixedutf32.encode_chunk(["a", "bc"])) == "a\\x00bc".encode("utf-32-le")
    True
    """
    target_swapped = _SWAPPED.get(endian) if type(endian) is str else None
    if target_swapped is None:
        target_swapped = check_endian(endian)
    if order != "C":
        check_order(order)
    if length_bytes is None:
        capacity = None
    elif type(length_bytes) is int and length_bytes in _NATIVE_DTYPES:  # a usual width
        capacity = length_bytes >> 2
    else:
        capacity = check_length_bytes(length_bytes) >> 2
    validate = validate is True or check_bool(validate, "validate")
    if type(array) is not np.ndarray or array.dtype.kind != "U":
        array = _as_unicode_array(array)
    dtype = array.dtype
    width = dtype.itemsize >> 2
    if capacity is None:
        capacity = width or 1
    if width == 0:  # a U0 array holds only empty strings
        array = array.astype("U1")
        dtype = array.dtype
        width = 1
    # The kernels read the array's buffer as it is when it is already in
    # the chunk's element order; anything else is gathered by NumPy first.
    src = array if order == "C" and array.flags.c_contiguous else array.ravel(order=order)
    source_swapped = not dtype.isnative
    count = src.size
    nbytes = count * capacity * 4
    flags = _VALIDATE if validate else 0
    if source_swapped:
        flags |= _SRC_SWAPPED
    if source_swapped != target_swapped:
        flags |= _SWAP

    if width == capacity:
        if out is None:
            if not flags & _SWAP:
                if validate:
                    status = _kernels.validate(src, width, source_swapped)
                    if status[0]:
                        raise status_error(status)
                return src.reshape(-1).view(np.uint8)  # type: ignore[return-value]
            status, result = _converted(src, _UINT8, nbytes, nbytes, width, flags)
            if status[0]:
                raise status_error(status)
            return result  # type: ignore[return-value]
        check_out_endian(out, endian)
        dst, out_nbytes = writable_byte_view(out, "out")
        check_out_size(out_nbytes, nbytes, f"{count} elements of length_bytes {4 * capacity}")
        _write_units(src, dst, flags, width)
        return out

    if out is not None:
        check_out_endian(out, endian)
    return _repad_chunk(src, out, count, width, capacity, flags)


def byteswap(buffer: Buffer) -> None:
    """Reverse the byte order of every 4-byte code unit, in place.

    Parameters
    ----------
    buffer : writable buffer
        C-contiguous, a multiple of 4 bytes (bytearray, memoryview, mmap,
        numpy.ndarray, ...).  It is modified; nothing is copied.  Code points
        are not checked.

    Returns
    -------
    None

    Raises
    ------
    ChunkSizeError
        If the size is not a multiple of 4 bytes.
    TypeError, BufferError
        If ``buffer`` is read-only, has no buffer or a non-contiguous one,
        or is an array whose items are not plain bytes (object,
        ``StringDType``, bool, float...).

    Examples
    --------
    >>> import fixedutf32
    >>> b = bytearray(b"H\\x00\\x00\\x00")
    >>> fixedutf32.byteswap(b)
    >>> bytes(b)
    b'\\x00\\x00\\x00H'
    """
    view, nbytes = writable_byte_view(buffer, "buffer")
    element_count(nbytes, 4, None, name="buffer")
    status = _kernels.convert(view, view, 1, _SWAP)
    if status[0]:  # pragma: no cover - nothing is checked
        raise FixedUTF32Error(f"internal error: byteswap reported {status}")


def repad(
    data: Buffer,
    from_length_bytes: int,
    to_length_bytes: int,
    *,
    endian: str = "little",
    out: BytesOutT | None = None,
    validate: bool = True,
) -> BytesOutT:
    """Change the element width of a chunk, keeping its byte order.

    Widening pads every element with U+0000; narrowing drops trailing
    padding and fails if a string does not fit.

    Parameters
    ----------
    data : buffer
        The chunk's bytes (C-contiguous), elements of ``from_length_bytes``.
    from_length_bytes, to_length_bytes : int
        Old and new bytes per element, positive multiples of 4.
    endian : {"little", "big"}
        Byte order of the code units, in ``data`` and in the result.
    out : buffer, optional
        Writable C-contiguous buffer of exactly
        ``len(data) // from_length_bytes * to_length_bytes`` bytes that does
        not overlap ``data``.
    validate : bool
        Check that every kept code unit is a Unicode scalar value.

    Returns
    -------
    numpy.ndarray or out
        A new 1-D ``uint8`` array holding the repadded chunk, or ``out``.

    Raises
    ------
    StringTooLongError
        When narrowing, at the first string longer than
        ``to_length_bytes // 4`` code points.
    InvalidCodePointError
        At the first invalid code unit (``validate=True``).
    ChunkSizeError
        If ``data`` is not a whole number of elements or ``out`` has the
        wrong size.
    ValueError, TypeError, BufferError
        For invalid widths (above 2147483644 too), ``endian``, buffers
        (arrays whose items are not plain bytes included), a ``validate``
        that is not a bool, an ``out`` that overlaps ``data``, or an ``out``
        that is a ``U`` array of the other byte order than ``endian``.

    ``out`` is left exactly as it was when an error is raised.

    Notes
    -----
    The GIL is released while the units are read, so another thread may
    write to ``data`` during the call.  Each kept code unit is checked as it
    is written, so the result holds exactly what was checked, or the call
    raises (and ``out`` may then have been partly written).

    Examples
    --------
    >>> import numpy as np, fixedutf32
    >>> chunk = fixedutf32.encode_chunk(np.array(["ab", "c"]))
    >>> wide = fixedutf32.repad(chunk, 8, 16)
    >>> fixedutf32.decode_chunk(wide, 16)
    array(['ab', 'c'], dtype='<U4')
    >>> fixedutf32.repad(wide, 16, 4)
    Traceback (most recent call last):
    ...
    fixedutf32.errors.StringTooLongError: string at element 0 has 2 code points; expected ...
    """
    from_length_bytes = check_length_bytes(from_length_bytes, "from_length_bytes")
    to_length_bytes = check_length_bytes(to_length_bytes, "to_length_bytes")
    swapped = check_endian(endian)
    validate = check_bool(validate, "validate")
    if out is not None:
        check_out_endian(out, endian)
    src, src_nbytes = byte_view(data, "data")
    count, _ = element_count(src_nbytes, from_length_bytes, None)
    from_units, to_units = from_length_bytes // 4, to_length_bytes // 4
    flags = (_VALIDATE if validate else 0) | (_SRC_SWAPPED if swapped else 0)
    return _repad_chunk(src, out, count, from_units, to_units, flags)


def str_lengths(
    data: Buffer, length_bytes: int, *, endian: str = "little", validate: bool = True
) -> npt.NDArray[np.intp]:
    """Count the code points of every element, without trailing U+0000.

    Parameters
    ----------
    data : buffer
        The chunk's bytes (C-contiguous); read only, never copied.
    length_bytes : int
        Bytes per element, a positive multiple of 4.
    endian : {"little", "big"}
        Byte order of the code units.
    validate : bool
        Check that every code unit is a Unicode scalar value.  Without it
        only the tail of each element is read.

    Returns
    -------
    numpy.ndarray
        New 1-D ``intp`` array, one length per element.  U+0000 inside a
        string counts; trailing U+0000 is padding and does not.

    Raises
    ------
    InvalidCodePointError
        At the first invalid code unit (``validate=True``).
    ChunkSizeError
        If ``data`` is not a whole number of elements.
    ValueError, TypeError, BufferError
        For an invalid ``length_bytes`` (above 2147483644 too), ``endian``
        or buffer (arrays whose items are not plain bytes included), or a
        ``validate`` that is not a bool.

    Examples
    --------
    >>> import fixedutf32
    >>> chunk = "ab\\x00\\x00a\\x00b\\x00".encode("utf-32-le")
    >>> fixedutf32.str_lengths(chunk, 16)
    array([2, 3])
    """
    length_bytes = check_length_bytes(length_bytes)
    swapped = check_endian(endian)
    validate = check_bool(validate, "validate")
    src, nbytes = byte_view(data, "data")
    count, _ = element_count(nbytes, length_bytes, None)
    lengths = np.empty(count, np.intp)
    flags = (_VALIDATE if validate else 0) | (_SRC_SWAPPED if swapped else 0)
    status = _kernels.str_lengths(src, lengths, length_bytes >> 2, flags)
    if status[0]:
        raise status_error(status)
    return lengths
