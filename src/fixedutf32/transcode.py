"""Transcoding between fixed_length_utf32 chunks and variable-length UTF-8.

The layouts on the UTF-8 side are the ones engines use:

- *offsets + values* (Apache Arrow's string layout): ``values`` holds every
  string's UTF-8 bytes back to back and string ``i`` is
  ``values[offsets[i]:offsets[i + 1]]``;
- Arrow arrays themselves (``pyarrow.StringArray`` / ``LargeStringArray``);
- NumPy 2's variable-width ``StringDType``;
- the chunk layout of the Zarr ``vlen-utf8`` codec (numcodecs ``VLenUTF8``): a
  little-endian ``uint32`` item count, then for each item a little-endian
  ``uint32`` byte length followed by that many UTF-8 bytes.

Going to UTF-8, each element's trailing U+0000 padding is dropped and U+0000
inside a string is kept.  Coming from UTF-8, the bytes are checked strictly
(overlong forms, encoded surrogates, values above U+10FFFF, truncated
sequences and stray continuation bytes are all rejected) and each string is
zero-padded to the element width.

The loops are in ``_utf8.h`` (scalar and AVX2, picked at run time like the
other kernels) and run with the GIL released; this module checks arguments,
allocates the outputs and turns kernel statuses into exceptions.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._arguments import (
    _SWAPPED,
    NATIVE_ENDIAN,
    as_bytes,
    byte_view,
    check_bool,
    check_endian,
    check_length_bytes,
    check_out_endian,
    check_out_overlap,
    check_out_size,
    dtype_endian,
    element_count,
    unicode_dtype,
    writable_byte_view,
)
from ._arrow import ArrowStrings, import_strings
from ._pool import new_array
from ._status import status_error
from .errors import ChunkSizeError, FixedUTF32Error, InvalidUTF8Error, StringTooLongError

if TYPE_CHECKING:
    from ._arguments import ByteView
    from ._kernels import Buffer, StrOutT


__all__ = [
    "to_utf8",
    "from_utf8",
    "to_arrow",
    "to_arrow_strings",
    "from_arrow",
    "to_string_dtype",
    "encode_vlen_utf8",
    "decode_vlen_utf8",
]

_INT32_MAX = 2**31 - 1
_UINT32_MAX = 2**32 - 1
# Looked up once: to_utf8 is called per chunk.
_utf32_to_utf8 = _kernels.utf32_to_utf8
_UTF8_SLACK = _kernels.UTF8_SLACK
_UINT8 = np.dtype(np.uint8)

# ---------------------------------------------------------------------------
# Argument handling
# ---------------------------------------------------------------------------


def _chunk_input(
    data: Buffer, length_bytes: int | None, endian: str | None
) -> tuple[ByteView, int, bool, int, tuple[int, ...]]:
    """``(buffer, width, swap, count, shape)`` of a chunk given as a ``U`` array or any buffer."""
    if isinstance(data, np.ndarray) and data.dtype.kind == "U":
        itemsize = data.dtype.itemsize
        if length_bytes is None:
            length_bytes = itemsize
        else:
            length_bytes = check_length_bytes(length_bytes)
            if length_bytes != itemsize:
                raise ValueError(
                    f"length_bytes {length_bytes} does not match the array's dtype "
                    f"{data.dtype.str} ({itemsize} bytes per element)"
                )
        own = dtype_endian(data.dtype)
        if endian is not None and endian != own:
            check_endian(endian)
            raise ValueError(
                f"endian {endian!r} does not match the array's dtype {data.dtype.str} "
                f"({own} endian); leave endian out for NumPy arrays"
            )
        return np.ascontiguousarray(data), itemsize // 4, _SWAPPED[own], data.size, data.shape
    if length_bytes is None:
        raise TypeError(
            "length_bytes is required unless data is a NumPy 'U' array, "
            f"got data of type {type(data).__name__}"
        )
    length_bytes = check_length_bytes(length_bytes)
    swap = check_endian("little" if endian is None else endian)
    view, nbytes = byte_view(data, "data")
    count, _ = element_count(nbytes, length_bytes, None)
    return view, length_bytes // 4, swap, count, (count,)


# Chunks from this size on are first transcoded to UTF-8 in half the worst case's room.
_HALF_ROOM_MIN = 1 << 16


def _shrink(buffer: npt.NDArray[np.uint8], nbytes: int) -> npt.NDArray[np.uint8]:
    """The first ``nbytes`` of a worst-case-sized output: a view, or a copy when much smaller."""
    # A copy so that a result kept alive does not pin up to four times its size.
    if 2 * nbytes >= buffer.size:
        return buffer[:nbytes]
    result = new_array(nbytes, _UINT8)
    np.copyto(result, buffer[:nbytes])
    return result


# ---------------------------------------------------------------------------
# UTF-32 -> UTF-8
# ---------------------------------------------------------------------------


def to_utf8(
    data: Buffer,
    length_bytes: int | None = None,
    *,
    endian: str | None = None,
    validate: bool = True,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """Transcode a fixed_length_utf32 chunk to UTF-8 in the offsets + values layout.

    Parameters
    ----------
    data : buffer or numpy.ndarray
        The chunk: a C-contiguous buffer of ``n * length_bytes`` bytes (bytes,
        bytearray, memoryview, mmap, NumPy array), or a NumPy ``U`` array of
        any shape, byte order and layout (read in C order; a non-contiguous
        array is copied first).
    length_bytes : int, optional
        Bytes per element, a positive multiple of 4.  Required for a raw
        buffer; for a ``U`` array it defaults to (and must equal) its itemsize.
    endian : {"little", "big"}, optional
        Byte order of the chunk.  Defaults to ``"little"``, or to the dtype's
        byte order for a ``U`` array.
    validate : bool, default True
        Check that every code unit is a Unicode scalar value.  With False the
        output for invalid data is unspecified (but memory safe).

    Returns
    -------
    offsets : numpy.ndarray
        ``int64``, ``n + 1`` entries starting at 0: string ``i`` is
        ``values[offsets[i]:offsets[i + 1]]``.
    values : numpy.ndarray
        ``uint8``, the UTF-8 bytes of every string, without the trailing
        U+0000 padding (U+0000 inside a string is kept).  Both arrays are new
        and share no memory with ``data``.

    Raises
    ------
    InvalidCodePointError
        With ``validate``, at the first code unit that is not a scalar value.
    ChunkSizeError
        If the buffer's size is not a multiple of ``length_bytes``.
    ValueError, TypeError
        For a bad ``length_bytes`` (above 2147483644, the widest NumPy
        ``U`` item, too), ``endian`` or ``data`` (an array whose items are
        not plain bytes, such as an object array, is a TypeError), or a
        ``validate`` that is not a bool (TypeError).

    Examples
    --------
    >>> import numpy as np
    >>> from fixedutf32.transcode import to_utf8
    >>> offsets, values = to_utf8(np.array(["Hi", "", "Я\\x00🎉"], dtype="<U3"))
    >>> offsets.tolist()
    [0, 2, 2, 9]
    >>> bytes(values)
    b'Hi\\xd0\\xaf\\x00\\xf0\\x9f\\x8e\\x89'
    >>> to_utf8(b"H\\x00\\x00\\x00i\\x00\\x00\\x00\\x00\\x00\\x00\\x00", 12)[1].tobytes()
    b'Hi'
    """
    validate = check_bool(validate, "validate")
    view, width, swap, count, _ = _chunk_input(data, length_bytes, endian)
    return _to_utf8(view, width, swap, validate, count)


def _to_utf8(
    view: ByteView, width: int, swap: bool, validate: bool, count: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]:
    """:func:`to_utf8` on arguments already checked (see :func:`_chunk_input`)."""
    nbytes = 4 * width * count
    offsets = np.empty(count + 1, np.int64)
    # Most text needs well under the worst case (4 bytes per code unit): start
    # with half of it, so that such a result is kept as a view (see _shrink)
    # instead of copied out; text that needs more continues in a larger buffer.
    room = nbytes // 2 if nbytes >= _HALF_ROOM_MIN else nbytes
    dst = new_array(room + _UTF8_SLACK, _UINT8)
    status, written, done = _utf32_to_utf8(view, width, swap, validate, offsets, dst, False)
    if not status[0] and done < count:
        grown = new_array(written + (count - done) * 4 * width + _UTF8_SLACK, _UINT8)
        np.copyto(grown[:written], dst[:written])
        dst = grown
        status, written, done = _utf32_to_utf8(
            view, width, swap, validate, offsets, dst, False, done, written
        )
    if status[0]:
        raise status_error(status)
    if done != count:  # pragma: no cover - the second pass has room for all
        raise FixedUTF32Error(f"internal error: transcoded {done} of {count} elements")
    return offsets, _shrink(dst, written)


def to_arrow(
    data: Buffer,
    length_bytes: int | None = None,
    *,
    endian: str | None = None,
    validate: bool = True,
    large: bool = False,
) -> Any:
    """Transcode a fixed_length_utf32 chunk to a ``pyarrow`` string array.

    Needs pyarrow (``pip install fixedutf32[arrow]``).  The array is built on
    the buffers :func:`to_utf8` returns, without another copy of the UTF-8
    bytes.

    Parameters
    ----------
    data, length_bytes, endian, validate
        As for :func:`to_utf8`; the array is flat, in C order.
    large : bool, default False
        Return a ``LargeStringArray`` (64-bit offsets, shared as they are)
        instead of a ``StringArray`` (32-bit offsets, converted).

    Returns
    -------
    pyarrow.StringArray or pyarrow.LargeStringArray
        One string per element, trailing U+0000 padding removed, no nulls.

    Raises
    ------
    InvalidCodePointError, ChunkSizeError
        As for :func:`to_utf8`.
    ValueError
        If the UTF-8 bytes exceed 2**31 - 1 and ``large`` is False.
    ImportError
        If pyarrow is not installed.

    Examples
    --------
    >>> import numpy as np, pyarrow as pa
    >>> from fixedutf32.transcode import to_arrow
    >>> strings = to_arrow(np.array(["Hi", "Привет"]))
    >>> strings.to_pylist(), strings.type == pa.string()
    (['Hi', 'Привет'], True)
    >>> to_arrow(np.array(["a"]), large=True).type == pa.large_string()
    True
    """
    pa = _import_pyarrow("to_arrow")
    offsets, values = to_utf8(data, length_bytes, endian=endian, validate=validate)
    array = pa.LargeStringArray if large else pa.StringArray
    arrow_offsets = _arrow_offsets(offsets, values, large, "a StringArray's")
    return array.from_buffers(offsets.size - 1, pa.py_buffer(arrow_offsets), pa.py_buffer(values))


def _arrow_offsets(
    offsets: npt.NDArray[np.int64], values: npt.NDArray[np.uint8], large: bool, array: str
) -> npt.NDArray[Any]:
    """The offsets as they are (``large``) or as int32, refused when 32 bits cannot address."""
    if large:
        return offsets
    if values.size > _INT32_MAX:
        raise ValueError(
            f"the strings take {values.size} bytes of UTF-8, more than {array} "
            f"32-bit offsets can address ({_INT32_MAX}); pass large=True"
        )
    return offsets.astype(np.int32)


def to_arrow_strings(
    data: Buffer,
    length_bytes: int | None = None,
    *,
    endian: str | None = None,
    validate: bool = True,
    large: bool = False,
) -> ArrowStrings:
    """Transcode a chunk to Arrow strings that any Arrow consumer takes, without pyarrow.

    The result implements the Arrow PyCapsule interface
    (``__arrow_c_array__``): ``pyarrow.array(result)``,
    ``polars.Series(result)``, ``nanoarrow.c_array(result)`` or DuckDB
    read it in place, sharing the buffers :func:`to_utf8` returns.

    Parameters
    ----------
    data, length_bytes, endian, validate
        As for :func:`to_utf8`; the array is flat, in C order.
    large : bool, default False
        Export a ``large_string`` array (64-bit offsets, shared as they
        are) instead of a ``string`` array (32-bit offsets, converted).

    Returns
    -------
    ArrowStrings
        One string per element, trailing U+0000 padding removed, no nulls;
        its ``offsets`` and ``values`` are new arrays (the consumer shares
        them, no copy).

    Raises
    ------
    InvalidCodePointError, ChunkSizeError
        As for :func:`to_utf8`.
    ValueError
        If the UTF-8 bytes exceed 2**31 - 1 and ``large`` is False.

    Examples
    --------
    >>> import numpy as np
    >>> from fixedutf32 import to_arrow_strings
    >>> strings = to_arrow_strings(np.array(["Hi", "🎉"]))
    >>> strings
    <ArrowStrings: 2 string values, 6 bytes of UTF-8>
    >>> schema_capsule, array_capsule = strings.__arrow_c_array__()
    >>> strings.to_pylist()
    ['Hi', '🎉']
    """
    large = check_bool(large, "large")
    offsets, values = to_utf8(data, length_bytes, endian=endian, validate=validate)
    return ArrowStrings(_arrow_offsets(offsets, values, large, "a string array's"), values, large)


def to_string_dtype(
    data: Buffer,
    length_bytes: int | None = None,
    *,
    endian: str | None = None,
    validate: bool = True,
) -> npt.NDArray[Any]:
    """Transcode a fixed_length_utf32 chunk to a NumPy ``StringDType`` array.

    Needs NumPy >= 2.  The UTF-8 is made by this package's kernel; NumPy then
    builds its variable-width strings from fixed-width UTF-8 bytes (its
    fastest public route in).

    Parameters
    ----------
    data, length_bytes, endian, validate
        As for :func:`to_utf8`.

    Returns
    -------
    numpy.ndarray
        A new ``StringDType()`` array, shaped like ``data`` for a ``U`` array
        and flat otherwise, trailing U+0000 padding removed.

    Raises
    ------
    InvalidCodePointError, ChunkSizeError
        As for :func:`to_utf8`.
    ImportError
        On NumPy < 2, which has no ``StringDType``.

    Examples
    --------
    >>> import numpy as np
    >>> from fixedutf32.transcode import to_string_dtype
    >>> out = to_string_dtype(np.array([["Hi", "Я"], ["", "🎉"]]))
    >>> out.dtype, out.shape, out.tolist()
    (StringDType(), (2, 2), [['Hi', 'Я'], ['', '🎉']])
    """
    string_dtype = _string_dtype_class("to_string_dtype")
    view, width, swap, count, shape = _chunk_input(data, length_bytes, endian)
    validate = check_bool(validate, "validate")
    offsets, values = _to_utf8(view, width, swap, validate, count)
    stride = int(np.diff(offsets).max()) if count else 1
    stride = max(stride, 1)
    fixed = np.empty(count, f"S{stride}")
    if count:
        _kernels.utf8_scatter_fixed(offsets, values, fixed.view(np.uint8), stride)
    return fixed.astype(string_dtype()).reshape(shape)


def encode_vlen_utf8(
    data: Buffer,
    length_bytes: int | None = None,
    *,
    endian: str | None = None,
    validate: bool = True,
) -> npt.NDArray[np.uint8]:
    """Transcode a fixed_length_utf32 chunk to a Zarr ``vlen-utf8`` chunk.

    The layout is numcodecs' ``VLenUTF8``: a little-endian ``uint32`` count of
    items, then for each item a little-endian ``uint32`` byte length and its
    UTF-8 bytes (trailing U+0000 padding removed).  This turns a Zarr V2
    ``<U`` chunk into a Zarr V3 ``string`` chunk in one pass.

    Parameters
    ----------
    data, length_bytes, endian, validate
        As for :func:`to_utf8`; the items follow the elements in C order,
        as Zarr V3 lays out a chunk.

    Returns
    -------
    numpy.ndarray
        A new ``uint8`` array holding the encoded chunk.

    Raises
    ------
    ValueError
        If the chunk has 2**32 or more elements.
    InvalidCodePointError, ChunkSizeError
        As for :func:`to_utf8`.

    Examples
    --------
    >>> import numpy as np
    >>> from fixedutf32.transcode import encode_vlen_utf8
    >>> encode_vlen_utf8(np.array(["ab", "Я"])).tobytes()
    b'\\x02\\x00\\x00\\x00\\x02\\x00\\x00\\x00ab\\x02\\x00\\x00\\x00\\xd0\\xaf'
    """
    validate = check_bool(validate, "validate")
    view, width, swap, count, _ = _chunk_input(data, length_bytes, endian)
    nbytes = 4 * width * count
    if count > _UINT32_MAX or 4 * width > _UINT32_MAX:
        raise ValueError(
            f"a vlen-utf8 chunk holds fewer than 2**32 items of fewer than 2**32 bytes; "
            f"got {count} elements of {4 * width} bytes"
        )
    dst = new_array(4 + 4 * count + nbytes + _UTF8_SLACK, _UINT8)
    status, written, _ = _utf32_to_utf8(view, width, swap, validate, None, dst, True)
    if status[0]:
        raise status_error(status)
    return _shrink(dst, written)


# ---------------------------------------------------------------------------
# UTF-8 -> UTF-32
# ---------------------------------------------------------------------------


def _decode(
    positions: npt.NDArray[np.int64],
    stride: int,
    count: int,
    values: Buffer,
    length_bytes: int,
    endian: str,
    swap: bool,
    out: StrOutT | None,
    inputs: Sequence[tuple[str, Buffer]],
) -> StrOutT:
    """Shared tail of the decoders: check, allocate or fill ``out`` (apart from ``inputs``)."""
    width = length_bytes // 4
    nbytes = count * length_bytes
    target: ByteView | None
    if out is None:
        result = new_array(count, unicode_dtype(width, endian))
        target = result if count else None
        status = _kernels.utf8_to_utf32(positions, stride, count, values, width, swap, target)
        if status[0]:
            raise status_error(status, capacity=width, values=values, starts=positions[::stride])
        return result  # type: ignore[return-value]  # out is None: the default type
    check_out_endian(out, endian)
    target, out_nbytes = writable_byte_view(out, "out")
    check_out_size(out_nbytes, nbytes, f"{count} elements of length_bytes {length_bytes}")
    check_out_overlap(target, inputs)
    # Check everything first, so that an error leaves out as it was.
    status = _kernels.utf8_to_utf32(positions, stride, count, values, width, swap, None)
    if not status[0] and count:
        status = _kernels.utf8_to_utf32(positions, stride, count, values, width, swap, target)
    if status[0]:
        raise status_error(status, capacity=width, values=values, starts=positions[::stride])
    return out


def from_utf8(
    offsets: npt.ArrayLike,
    values: Buffer,
    length_bytes: int,
    *,
    endian: str = "little",
    out: StrOutT | None = None,
) -> StrOutT:
    """Encode UTF-8 strings (offsets + values layout) as a fixed_length_utf32 chunk.

    Parameters
    ----------
    offsets : array_like of int
        ``n + 1`` non-decreasing offsets into ``values`` (``int64``, or any
        integer type, converted): string ``i`` is
        ``values[offsets[i]:offsets[i + 1]]``.  ``offsets[0]`` need not be 0.
    values : buffer
        The UTF-8 bytes (bytes, bytearray, memoryview, NumPy ``uint8`` array...).
    length_bytes : int
        Bytes per element of the chunk, a positive multiple of 4.
    endian : {"little", "big"}, default "little"
        Byte order to write.
    out : writable buffer, optional
        Exactly ``n * length_bytes`` bytes to write the chunk into, not
        overlapping ``values``.

    Returns
    -------
    numpy.ndarray or out
        Without ``out``, a new ``U{length_bytes // 4}`` array of ``n``
        elements in the requested byte order (its bytes are the chunk);
        with ``out``, ``out`` itself.

    Raises
    ------
    InvalidUTF8Error
        At the first ill-formed string: ``index`` the string, ``byte_offset``
        the first byte of the bad sequence inside that string's bytes.
    StringTooLongError
        If a string has more than ``length_bytes // 4`` code points (U+0000
        beyond the capacity is padding and accepted).
    ValueError
        If the offsets do not lie inside ``values``, ``out`` overlaps
        ``values`` or ``offsets``, ``out`` is a ``U`` array of the other
        byte order than ``endian``, or ``length_bytes`` is invalid (above
        2147483644 too).
    TypeError
        If ``values`` or ``out`` is not a buffer of plain bytes (an object
        or ``StringDType`` array is not).
    ChunkSizeError
        If ``out`` has the wrong size.

    On any error, ``out`` is left as it was.

    Examples
    --------
    >>> from fixedutf32.transcode import from_utf8
    >>> from_utf8([0, 2, 2, 8], "HiПривет".encode()[:8], 12)
    array(['Hi', '', 'При'], dtype='<U3')
    >>> from_utf8([0, 2], b"Hi", 12, endian="big").tobytes()
    b'\\x00\\x00\\x00H\\x00\\x00\\x00i\\x00\\x00\\x00\\x00'
    """
    length_bytes = check_length_bytes(length_bytes)
    swap = check_endian(endian)
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or offsets.size < 1 or offsets.dtype.kind not in "iu":
        raise ValueError(
            "offsets must be a 1-D array of at least one integer, "
            f"got shape {offsets.shape} and dtype {offsets.dtype}"
        )
    positions = np.ascontiguousarray(offsets, dtype=np.int64)
    if offsets.dtype.kind == "u" and offsets.size and offsets.max() > np.iinfo(np.int64).max:
        raise ValueError("offsets do not fit in int64")
    values, _ = byte_view(values, "values")
    return _from_offsets(positions, values, length_bytes, endian, swap, out)


def _from_offsets(
    positions: npt.NDArray[np.int64],
    values: ByteView,
    length_bytes: int,
    endian: str,
    swap: bool,
    out: StrOutT | None,
) -> StrOutT:
    """:func:`from_utf8` on arguments already checked: int64 offsets, a byte view of values."""
    # ``positions`` is the caller's offsets itself when they were C-contiguous int64.
    inputs = [("values", values), ("offsets", positions)]
    return _decode(
        positions, 1, positions.size - 1, values, length_bytes, endian, swap, out, inputs
    )


def from_arrow(
    array: Any, length_bytes: int, *, endian: str = "little", out: StrOutT | None = None
) -> StrOutT:
    """Encode an Arrow string array as a fixed_length_utf32 chunk.

    Reads the Arrow buffers in place (no copy of the UTF-8 bytes; the 32-bit
    offsets of a ``string`` array are widened).  Any object that exports
    the Arrow PyCapsule interface is taken (``__arrow_c_array__`` or
    ``__arrow_c_stream__``: polars, nanoarrow, DuckDB results...), without
    pyarrow.

    Parameters
    ----------
    array : pyarrow.Array, pyarrow.ChunkedArray or Arrow PyCapsule exporter
        Of type ``string`` or ``large_string``, without nulls; a stream's
        arrays are encoded one after the other.  ``string_view`` is taken
        from pyarrow objects (cast to ``large_string`` first).
    length_bytes, endian, out
        As for :func:`from_utf8`.

    Returns
    -------
    numpy.ndarray or out
        As for :func:`from_utf8`.

    Raises
    ------
    TypeError
        If ``array`` is not an Arrow string array.
    ValueError
        If ``array`` has nulls or is malformed (offsets negative, decreasing
        or past the values: checked before the bytes they point at are read).
    InvalidUTF8Error, StringTooLongError, ChunkSizeError
        As for :func:`from_utf8` (a stream's elements counted from its first).

    Notes
    -----
    A pyarrow array's buffers carry their sizes, and every offset is checked
    against them.  Arrow's C data interface (the PyCapsule path) passes no
    sizes: as the Arrow format defines, the values buffer is taken to end at
    the last offset, and nothing past it is read or quoted in a message.  A
    producer whose own last offset runs past its buffer breaks the format in
    a way no consumer can see (:class:`~fixedutf32.ArrowStrings` refuses to
    be one).

    Examples
    --------
    >>> import numpy as np, pyarrow as pa
    >>> from fixedutf32.transcode import from_arrow
    >>> from_arrow(pa.array(["Hi", "🎉"]), 8)
    array(['Hi', '🎉'], dtype='<U2')
    >>> from fixedutf32 import to_arrow_strings  # any PyCapsule exporter, pyarrow or not
    >>> from_arrow(to_arrow_strings(np.array(["a", "bc"])), 8)
    array(['a', 'bc'], dtype='<U2')
    """
    pa = sys.modules.get("pyarrow")
    if pa is None or not isinstance(array, (pa.Array, pa.ChunkedArray)):
        return _from_capsules(array, length_bytes, endian, out)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if not isinstance(array, pa.Array):
        raise TypeError(f"array must be a pyarrow string array, got {type(array).__name__}")
    if pa.types.is_string_view(array.type):
        array = array.cast(pa.large_string())
    offset_type: type[np.signedinteger[Any]]
    if pa.types.is_string(array.type):
        offset_type = np.int32
    elif pa.types.is_large_string(array.type):
        offset_type = np.int64
    else:
        raise TypeError(f"array must hold strings (string or large_string), got type {array.type}")
    if array.null_count:
        first = array.is_null().index(True).as_py()
        raise ValueError(
            f"array has {array.null_count} nulls (the first at element {first}); "
            "fixed_length_utf32 has no null, fill them first (pyarrow.compute.fill_null)"
        )
    length_bytes = check_length_bytes(length_bytes)
    swap = check_endian(endian)
    count = len(array)
    buffers = array.buffers()
    if count:
        offsets = np.frombuffer(buffers[1], offset_type)[array.offset : array.offset + count + 1]
    else:
        offsets = np.zeros(1, np.int64)
    values = buffers[2] if len(buffers) > 2 and buffers[2] is not None else b""
    # Arrow's offsets are a 1-D integer array: only widened, as from_utf8 would.
    positions = np.ascontiguousarray(offsets, dtype=np.int64)
    view, _ = byte_view(values, "values")
    return _from_offsets(positions, view, length_bytes, endian, swap, out)


def _from_capsules(array: Any, length_bytes: int, endian: str, out: StrOutT | None) -> StrOutT:
    """:func:`from_arrow` of an object exporting the Arrow PyCapsule interface."""
    length_bytes = check_length_bytes(length_bytes)
    swap = check_endian(endian)
    parts = list(import_strings(array))
    if len(parts) == 1:
        positions, values, _ = parts[0]
        view, _ = byte_view(values, "values")
        return _from_offsets(positions, view, length_bytes, endian, swap, out)
    # A stream of several arrays: each into its part of one new array (an
    # out is written only once all of them are encoded).
    result = new_array(
        sum(count for _, _, count in parts), unicode_dtype(length_bytes // 4, endian)
    )
    base = 0
    for positions, values, count in parts:
        view, _ = byte_view(values, "values")
        try:
            _from_offsets(positions, view, length_bytes, endian, swap, result[base : base + count])
        except InvalidUTF8Error as error:
            raise InvalidUTF8Error(error.index + base, error.byte_offset, error.reason) from None
        except StringTooLongError as error:
            raise StringTooLongError(error.index + base, error.length, error.capacity) from None
        base += count
    if out is None:
        return result  # type: ignore[return-value]
    dst, out_nbytes = writable_byte_view(out, "out")
    check_out_endian(out, endian)
    check_out_size(
        out_nbytes, result.nbytes, f"{result.size} elements of length_bytes {length_bytes}"
    )
    np.copyto(np.frombuffer(dst, np.uint8), result.view(np.uint8))
    return out


def decode_vlen_utf8(
    chunk: Buffer, length_bytes: int, *, endian: str = "little", out: StrOutT | None = None
) -> StrOutT:
    """Decode a Zarr ``vlen-utf8`` chunk into a fixed_length_utf32 chunk.

    The inverse of :func:`encode_vlen_utf8`: reads numcodecs' ``VLenUTF8``
    layout, checks the UTF-8 strictly and pads each string to
    ``length_bytes // 4`` code points.

    Parameters
    ----------
    chunk : buffer
        The encoded chunk (bytes, bytearray, memoryview, NumPy array...).
    length_bytes, endian, out
        As for :func:`from_utf8`.

    Returns
    -------
    numpy.ndarray or out
        As for :func:`from_utf8`: ``n`` elements, ``n`` read from the chunk.

    Raises
    ------
    ChunkSizeError
        If the chunk is shorter than its item table says, or has bytes left
        over after the last item, or ``out`` has the wrong size.
    ValueError, TypeError
        As for :func:`from_utf8` (``out`` must not overlap ``chunk``).
    InvalidUTF8Error, StringTooLongError
        As for :func:`from_utf8`.

    Examples
    --------
    >>> from fixedutf32.transcode import decode_vlen_utf8
    >>> chunk = b"\\x02\\x00\\x00\\x00" b"\\x02\\x00\\x00\\x00ab" b"\\x02\\x00\\x00\\x00\\xd0\\xaf"
    >>> decode_vlen_utf8(chunk, 8)
    array(['ab', 'Я'], dtype='<U2')
    """
    length_bytes = check_length_bytes(length_bytes)
    swap = check_endian(endian)
    view, nbytes = byte_view(chunk, "chunk")
    if nbytes < 4:
        raise ChunkSizeError(
            f"a vlen-utf8 chunk starts with a 4-byte item count; got {nbytes} bytes"
        )
    count = int.from_bytes(as_bytes(view)[:4], "little")
    if 4 * count > nbytes - 4:
        raise ChunkSizeError(
            f"vlen-utf8 chunk of {nbytes} bytes cannot hold the {count} items its header announces"
        )
    positions = np.empty(2 * count, np.int64)
    status = _kernels.utf8_vlen_parse(view, count, positions)
    if status[0]:
        raise status_error(status, values=view)
    return _decode(positions, 2, count, view, length_bytes, endian, swap, out, [("chunk", view)])


# ---------------------------------------------------------------------------
# NumPy StringDType and optional imports
# ---------------------------------------------------------------------------


def _string_dtype_class(what: str) -> Any:
    try:
        from numpy.dtypes import StringDType
    except ImportError:
        raise ImportError(
            f"{what} needs NumPy >= 2.0 (numpy.dtypes.StringDType); NumPy {np.__version__} is "
            "installed"
        ) from None
    return StringDType


def _import_pyarrow(what: str) -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ImportError(
            f"{what} needs pyarrow; install it with: pip install 'fixedutf32[arrow]' (or use "
            "to_arrow_strings, which any Arrow consumer reads without pyarrow)"
        ) from None
    return pyarrow


def string_dtype_to_unicode(array: npt.NDArray[Any]) -> npt.NDArray[np.str_]:
    """A ``StringDType`` array as a new native ``U`` array as wide as its longest string (>= U1)."""
    # NumPy hides StringDType's UTF-8 from Python; pyarrow reads it through the C API, so with
    # pyarrow the strings go through from_arrow (~3x NumPy's cast); else (or with nulls) astype.
    flat = array.reshape(-1)
    try:
        import pyarrow
        import pyarrow.compute
    except ImportError:
        pyarrow = None
    if pyarrow is not None and getattr(array.dtype, "na_object", _NO_NA) is _NO_NA:
        strings = pyarrow.array(flat)
        longest = (
            pyarrow.compute.max(pyarrow.compute.utf8_length(strings)).as_py() if len(flat) else 0
        )
        decoded = from_arrow(strings, 4 * max(longest or 0, 1), endian=NATIVE_ENDIAN)
        return decoded.reshape(array.shape)
    try:
        lengths = np.strings.str_len(flat)
    except ValueError:
        # NumPy cannot measure a missing value (na_object None or NaN).
        raise _missing_value_error(flat) from None
    width = max(int(lengths.max()) if lengths.size else 1, 1)
    return np.ascontiguousarray(array.astype(unicode_dtype(width)))


_NO_NA = object()


def _missing_value_error(flat: Iterable[object]) -> ValueError:
    """The ValueError for the first missing value of a flat StringDType array."""
    for index, item in enumerate(flat):  # noqa: B007 - read after the loop
        if not isinstance(item, str):
            break
    else:  # pragma: no cover - only called when NumPy found one
        index, item = -1, None
    return ValueError(
        f"element {index} is a missing value ({item!r}, the dtype's na_object); "
        f"fixed_length_utf32 has no missing value: fill them first"
    )
