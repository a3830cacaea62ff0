"""A checked write: ``array[selection] = value`` that refuses to truncate."""
# zarr casts every written value to <U{capacity} (NumPy cuts longer strings silently) before
# any codec or pipeline sees it: no extension point can check, so this is a function.

from __future__ import annotations

from typing import Any

import numpy as np

from .._arguments import dtype_endian
from ..chunk import str_lengths
from ..errors import StringTooLongForArrayError
from ..transcode import string_dtype_to_unicode

__all__ = ["setitem"]


def _array_dtype(array: Any) -> np.dtype[Any]:
    """The NumPy dtype of a zarr array (or of the array behind ``.oindex``/``.vindex``)."""
    target = getattr(array, "array", array)  # zarr's OIndex, VIndex and BlockIndex hold it
    dtype = getattr(target, "dtype", None)
    if not isinstance(dtype, np.dtype) or not hasattr(array, "__setitem__"):
        raise TypeError(
            "expected a zarr array (or its .oindex, .vindex or .blocks), "
            f"got {type(array).__module__}.{type(array).__qualname__}"
        )
    if dtype.kind != "U":
        raise TypeError(
            f"expected an array of fixed-length strings (fixed_length_utf32, V2 <U/>U), "
            f"got one of dtype {dtype}"
        )
    return dtype


def _as_unicode(value: object) -> np.ndarray[Any, np.dtype[np.str_]]:
    """``value`` as a ``U`` array as wide as its longest string (shares memory if it is one)."""
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype.kind == "U":
        return array
    if array.dtype.kind == "T":  # NumPy's StringDType
        return string_dtype_to_unicode(array)
    # numbers, bytes, objects: what zarr's cast would make of them, at full width
    return array.astype(np.str_)


def setitem(array: Any, selection: Any, value: object) -> None:
    """``array[selection] = value``, refusing any string zarr would cut to the capacity.

    zarr-python casts written values to the array's ``<U{capacity}`` dtype,
    which silently truncates a longer string (plain assignment does this
    with or without :func:`fixedutf32.zarr.enable`).  This function first
    counts the code points of every string of ``value`` with fixedutf32's
    kernel, at the value's own width (one pass, no Python loop), and checks
    that each is a Unicode scalar value; only then does it assign.

    Parameters
    ----------
    array : zarr.Array
        A Zarr V3 ``fixed_length_utf32`` or Zarr V2 ``<U``/``>U`` array, or
        its ``.oindex``, ``.vindex`` or ``.blocks`` (then ``selection`` is
        of that kind).
    selection : selection
        Anything ``array[selection] = ...`` accepts.
    value : str, sequence of str, numpy.ndarray
        A scalar, a (nested) list, a ``U`` array of any width and byte
        order, a ``StringDType`` array, or anything zarr itself would cast
        to strings.  Not modified.

    Returns
    -------
    None

    Raises
    ------
    StringTooLongForArrayError
        A :class:`fixedutf32.StringTooLongError` naming the first string
        with more code points than the array's elements hold (its index in
        the value, its length and the capacity).  Nothing is written.
    fixedutf32.InvalidCodePointError
        For a string holding a lone surrogate.  Nothing is written.
    TypeError
        When ``array`` is not a zarr array of fixed-length strings.
    ValueError
        For a ``StringDType`` value with missing values, and whatever zarr
        raises for the assignment (a selection out of bounds, shapes that
        do not broadcast).

    Notes
    -----
    A ``U`` value is checked where it is (a non-contiguous one is copied
    once); other values are converted to a ``U`` array first.  zarr then
    casts and copies the value as for a plain assignment.  The check costs
    one read of the value; zarr's own cast and encoding come after it.

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> arr = zarr.create_array({}, shape=(3,), dtype="<U4", fill_value="")
    >>> fixedutf32.zarr.setitem(arr, slice(None), ["ab", "cdef", "g"])
    >>> arr[:]
    array(['ab', 'cdef', 'g'], dtype='<U4')
    >>> fixedutf32.zarr.setitem(arr, 0, "toolong")
    Traceback (most recent call last):
    ...
    fixedutf32.zarr.StringTooLongForArrayError: string at value index () has 7 code points; ...
    >>> arr[0]
    array('ab', dtype='<U4')

    Plain assignment would have cut it:

    >>> arr[0] = "toolong"
    >>> arr[0]
    array('tool', dtype='<U4')
    """
    capacity = _array_dtype(array).itemsize // 4
    strings = _as_unicode(value)
    width = strings.dtype.itemsize // 4
    if strings.size and width:
        contiguous = np.ascontiguousarray(strings)
        lengths = str_lengths(contiguous, 4 * width, endian=dtype_endian(contiguous.dtype))
        if width > capacity and lengths.max() > capacity:
            first = int(np.argmax(lengths > capacity))
            raise StringTooLongForArrayError(
                first,
                int(lengths[first]),
                capacity,
                tuple(int(i) for i in np.unravel_index(first, strings.shape)),
            )
    array[selection] = strings
