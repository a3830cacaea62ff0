"""Argument checks shared by the public functions: the normalised value, or what/which was wrong."""

from __future__ import annotations

import operator
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from . import _kernels
from .errors import ChunkSizeError

if TYPE_CHECKING:
    # the type of every buffer argument, for the modules above that may not import _kernels
    from ._kernels import Buffer as Buffer

# A buffer the kernels read: the object itself or a flat uint8 memoryview of it.
ByteView: TypeAlias = "bytes | bytearray | np.ndarray[Any, Any] | memoryview"

NATIVE_ENDIAN = sys.byteorder
# The byte orders a chunk may have, for function arguments and for metadata.
ENDIANS = ("little", "big")
# Whether data in each byte order must be swapped to be read natively.
_SWAPPED = {endian: endian != NATIVE_ENDIAN for endian in ENDIANS}
_ORDERS = ("C", "F")
_unicode_dtypes: dict[tuple[int, str], np.dtype[np.str_]] = {}

# NumPy keeps a dtype's itemsize in a C int: the widest 'U' item is
# U536870911, 2**31 - 4 bytes.  No element can be wider than that.
MAX_LENGTH_BYTES = 4 * ((2**31 - 1) // 4)

# Array kinds whose items are plain bytes: unsigned and signed integers,
# 'U' and 'S' strings (and 'V' without fields, checked apart).
_PLAIN_KINDS = frozenset("uiUS")


def check_length_bytes(value: object, name: str = "length_bytes") -> int:
    """``value`` as an int if a positive multiple of 4 a 'U' item can hold, else ValueError."""
    if type(value) is int and 0 < value <= MAX_LENGTH_BYTES and not value & 3:
        return value  # the common case, first: this runs on every call
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(
            f"{name} must be a positive int multiple of 4, got {value!r} "
            f"of type {type(value).__name__}"
        )
    value = operator.index(value)
    if value <= 0 or value % 4:
        raise ValueError(
            f"{name} must be a positive multiple of 4 (4 bytes per UTF-32 code unit), got {value}"
        )
    if value > MAX_LENGTH_BYTES:
        raise ValueError(
            f"{name} must be at most {MAX_LENGTH_BYTES} (the widest NumPy 'U' item, "
            f"U{MAX_LENGTH_BYTES // 4}), got {value}"
        )
    return value


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` as a bool if it is True, False or a NumPy bool, else raise TypeError."""
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")


def check_byte_count(value: object, name: str) -> int:
    """Return ``value`` as an int in 0..sys.maxsize (a size in bytes), else raise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {value!r} of type {type(value).__name__}")
    value = operator.index(value)
    if not 0 <= value <= sys.maxsize:
        raise ValueError(f"{name} must be between 0 and {sys.maxsize} bytes, got {value}")
    return value


def check_endian(endian: Any, name: str = "endian") -> bool:
    """Return True when data in ``endian`` byte order needs swapping on this machine."""
    try:
        return _SWAPPED[endian]
    except (KeyError, TypeError):
        raise ValueError(f"{name} must be 'little' or 'big', got {endian!r}") from None


def check_order(order: Any) -> Any:
    if order not in _ORDERS:
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    return order


def dtype_endian(dtype: np.dtype[Any]) -> str:
    """'little' or 'big': the byte order of a NumPy dtype's items."""
    byteorder = dtype.byteorder
    if byteorder == "=" or byteorder == "|":
        return NATIVE_ENDIAN
    return "little" if byteorder == "<" else "big"


def check_out_endian(out: object, endian: str, name: str = "out") -> None:
    """Refuse an ``out`` that is a NumPy 'U' array whose byte order is not ``endian``."""
    # Units of one order in a 'U' array of the other make an array NumPy cannot read.
    if isinstance(out, np.ndarray) and out.dtype.kind == "U":
        own = dtype_endian(out.dtype)
        if own != endian:
            expected = unicode_dtype(out.dtype.itemsize // 4, endian).str
            raise ValueError(
                f"{name} is a NumPy array of dtype {out.dtype.str} ({own} endian), but the code "
                f"units written are {endian} endian: pass an out of dtype {expected} or a "
                f"plain byte buffer"
            )


def check_plain_dtype(dtype: np.dtype[Any], name: str) -> None:
    """Raise TypeError unless ``dtype``'s items are plain bytes the kernels may read and write."""
    # Object/StringDType items are pointers; bool, float, datetime have rules of their own: only
    # integers, 'U', 'S' and field-less 'V' are raw bytes.
    kind = dtype.kind
    if kind in _PLAIN_KINDS or (
        kind == "V" and not dtype.hasobject and dtype.names is None and dtype.subdtype is None
    ):
        return
    what = "references to Python objects" if kind in "OT" or dtype.hasobject else "typed values"
    raise TypeError(
        f"{name} must hold plain bytes (an integer, 'U' or 'S' array, or a byte buffer), "
        f"got a NumPy array of dtype {dtype}, whose items are {what}, not raw bytes"
    )


def unicode_dtype(units: int, endian: str = NATIVE_ENDIAN) -> np.dtype[np.str_]:
    """The NumPy ``U{units}`` dtype in ``endian`` byte order (cached: this is on the hot path)."""
    key = (units, endian)
    dtype = _unicode_dtypes.get(key)
    if dtype is None:
        dtype = _unicode_dtypes[key] = np.dtype(("<U" if endian == "little" else ">U") + str(units))
    return dtype


def byte_view(obj: Any, name: str) -> tuple[ByteView, int]:
    """``obj``'s bytes as ``(buffer, nbytes)`` without copying (TypeError, BufferError if unfit)."""
    # The buffer is obj itself for bytes, bytearray or C-contiguous ndarray, else a flat uint8 view.
    cls = type(obj)
    if cls is bytes or cls is bytearray:
        return obj, len(obj)
    if cls is np.ndarray and obj.flags.c_contiguous:
        if obj.dtype.kind not in _PLAIN_KINDS:
            check_plain_dtype(obj.dtype, name)
        return obj, obj.nbytes
    if isinstance(obj, np.ndarray):
        check_plain_dtype(obj.dtype, name)
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(
            f"{name} must support the buffer protocol (bytes, bytearray, memoryview, "
            f"mmap, array.array, numpy.ndarray), got {type(obj).__name__}"
        ) from None
    if not view.c_contiguous:
        raise BufferError(
            f"{name} must be a C-contiguous buffer, got one of shape {view.shape} "
            f"with strides {view.strides}"
        )
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view, view.nbytes


def writable_byte_view(obj: Any, name: str) -> tuple[ByteView, int]:
    """Like :func:`byte_view`, and raise TypeError if the buffer is read-only."""
    if type(obj) is np.ndarray and obj.flags.c_contiguous:
        if obj.dtype.kind not in _PLAIN_KINDS:
            check_plain_dtype(obj.dtype, name)
        if not obj.flags.writeable:
            raise TypeError(f"{name} must be a writable buffer, got a read-only numpy.ndarray")
        return obj, obj.nbytes
    view, nbytes = byte_view(obj, name)
    if type(view) is bytes or (type(view) is memoryview and view.readonly):
        raise TypeError(f"{name} must be a writable buffer, got a read-only {type(obj).__name__}")
    return view, nbytes


def as_bytes(buffer: Any) -> memoryview:
    """A flat ``uint8`` memoryview of a buffer returned by :func:`byte_view`."""
    view = memoryview(buffer)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _extent(value: Any) -> int:
    # operator.index takes True as 1; a bool as an extent is a mistake.
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("a bool is not an extent")
    return operator.index(value)


def element_count(
    nbytes: int, length_bytes: int, shape: Any, name: str = "data"
) -> tuple[int, tuple[int, ...] | None]:
    """``(count, shape)`` of a chunk of ``nbytes``, checked against ``shape`` (None: 1-D)."""
    count, remainder = divmod(nbytes, length_bytes)
    if shape is None and not remainder:
        return count, None
    if remainder:
        raise ChunkSizeError(
            f"{name} holds {nbytes} bytes, which is not a multiple of "
            f"length_bytes {length_bytes} ({remainder} bytes left over)"
        )
    try:
        shape = (_extent(shape),)
    except TypeError:
        try:
            shape = tuple(_extent(extent) for extent in shape)
        except TypeError:
            raise TypeError(
                f"shape must be an int or a sequence of ints (not bools), got {shape!r}"
            ) from None
    if any(extent < 0 for extent in shape):
        raise ValueError(f"shape must not have negative extents, got {shape}")
    expected = 1
    for extent in shape:
        expected *= extent
    if expected != count:
        raise ChunkSizeError(
            f"shape {shape} needs {expected} elements ({expected * length_bytes} bytes), "
            f"but {name} holds {count} elements ({nbytes} bytes) of length_bytes {length_bytes}"
        )
    return count, shape


def check_out_size(out_nbytes: int, nbytes: int, what: str) -> None:
    """Raise ChunkSizeError unless ``out`` holds exactly the ``nbytes`` of ``what`` it receives."""
    if out_nbytes != nbytes:
        raise ChunkSizeError(
            f"out holds {out_nbytes} bytes, expected exactly {nbytes} bytes for {what}"
        )


def check_out_overlap(
    out: Buffer, sources: Iterable[tuple[str, Buffer]], in_place: bool = False
) -> bool:
    """Refuse an ``out`` overlapping any of ``sources``; True when it is the first, ``in_place``."""
    # A partial overlap is always refused.
    for name, source in sources:
        relation = _kernels.overlap(out, source)
        if relation == 1 and in_place:
            return True
        if relation:
            hint = f"{name} itself or a separate buffer" if in_place else "a separate buffer"
            raise ValueError(f"out must not overlap {name}; pass {hint}")
    return False


def _batch_items(items: Any, name: str) -> list[Any]:
    """``items`` (a sequence of buffers or arrays) as a list; one buffer or array is refused."""
    if isinstance(items, (bytes, bytearray, memoryview, str, np.ndarray)):
        raise TypeError(
            f"{name} must be a sequence (a list, a tuple...) of buffers, got one "
            f"{type(items).__name__}: wrap it in a list"
        )
    try:
        return list(items)
    except TypeError:
        raise TypeError(
            f"{name} must be a sequence of buffers, got {type(items).__name__}"
        ) from None


def byte_views(items: Any, name: str) -> list[Any]:
    """``items`` as a list, each buffer as :func:`byte_view` gives it (``name[i]`` in messages)."""
    views = _batch_items(items, name)
    for index, item in enumerate(views):
        cls = type(item)
        # bytes, bytearray and plain C-contiguous arrays pass as they are: this runs per chunk.
        if (
            cls is not bytes
            and cls is not bytearray
            and not (
                cls is np.ndarray and item.flags.c_contiguous and item.dtype.kind in _PLAIN_KINDS
            )
        ):
            views[index] = byte_view(item, f"{name}[{index}]")[0]
    return views


def writable_byte_views(items: Any, name: str) -> list[ByteView]:
    """Each of ``items`` as :func:`writable_byte_view` gives it (``name[i]`` in messages)."""
    views: list[ByteView] = []
    for index, item in enumerate(_batch_items(items, name)):
        if type(item) is bytearray:
            views.append(item)
        else:
            views.append(writable_byte_view(item, f"{name}[{index}]")[0])
    return views


# The offsets dtype of each Arrow string type: string (False), large_string (True).
_ARROW_OFFSETS = {False: np.dtype(np.int32), True: np.dtype(np.int64)}


def check_arrow_strings(offsets: Any, values: Any, large: Any) -> bool:
    """Refuse offsets and values that are not an Arrow string array; return ``large`` as a bool."""
    # One vectorised pass over the offsets (neighbours compared); messages name the first bad index.
    wide = check_bool(large, "large")
    expected = _ARROW_OFFSETS[wide]
    kind = "large_string" if wide else "string"
    if not isinstance(offsets, np.ndarray) or offsets.dtype != expected:
        got = (
            f"an array of dtype {offsets.dtype.str}"
            if isinstance(offsets, np.ndarray)
            else type(offsets).__name__
        )
        raise TypeError(
            f"offsets must be a NumPy array of native {expected} for large={wide} "
            f"({kind}), got {got}"
        )
    if not isinstance(values, np.ndarray) or values.dtype != np.uint8:
        got = (
            f"an array of dtype {values.dtype.str}"
            if isinstance(values, np.ndarray)
            else type(values).__name__
        )
        raise TypeError(f"values must be a NumPy array of uint8 (the UTF-8 bytes), got {got}")
    for name, array in (("offsets", offsets), ("values", values)):
        if array.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
        if not array.flags.c_contiguous:
            raise BufferError(
                f"{name} must be C-contiguous (Arrow shares it as it is), got strides "
                f"{array.strides}"
            )
    if offsets.size < 1:
        raise ValueError("offsets must hold n + 1 entries for n strings, at least one; got none")
    first = int(offsets[0])
    if first < 0:
        raise ValueError(f"offsets must be 0 or more, got offsets[0] = {first}")
    # Non-decreasing and >= offsets[0] >= 0: then only the last can pass the end.
    decreasing = offsets[1:] < offsets[:-1]
    if decreasing.any():
        at = int(np.argmax(decreasing))
        raise ValueError(
            f"offsets must not decrease (string i is values[offsets[i]:offsets[i + 1]]), got "
            f"offsets[{at}] = {offsets[at]} > offsets[{at + 1}] = {offsets[at + 1]}"
        )
    nbytes = values.size
    if int(offsets[-1]) > nbytes:
        at = int(np.argmax(offsets > nbytes))
        raise ValueError(
            f"offsets must lie inside values ({nbytes} bytes), got offsets[{at}] = "
            f"{offsets[at]}, past its end"
        )
    return wide
