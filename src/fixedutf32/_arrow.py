"""Arrow strings through the Arrow PyCapsule interface, without pyarrow (C structs: _arrow.pxi)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _kernels
from ._arguments import check_arrow_strings

__all__ = ["ArrowStrings"]

_INT32_MAX = 2**31 - 1
# Largest length + offset whose offsets can be counted in bytes.
_MAX_ENTRIES = 2**60
_FORMATS: dict[bytes, np.dtype[Any]] = {b"u": np.dtype(np.int32), b"U": np.dtype(np.int64)}


class ArrowStrings:
    """Strings in Arrow's layout, that any Arrow consumer takes without a copy.

    What :func:`~fixedutf32.to_arrow_strings` returns.  It implements the
    Arrow PyCapsule interface (``__arrow_c_array__``,
    ``__arrow_c_schema__``), so ``pyarrow.array(strings)``,
    ``polars.Series(strings)``, ``nanoarrow.c_array(strings)`` and DuckDB
    read it; nothing here needs pyarrow.  A consumer shares the buffers and
    keeps them alive for as long as it holds them.

    Parameters
    ----------
    offsets : numpy.ndarray
        Native ``int32`` (``string``) or ``int64`` (``large_string``),
        1-D, C-contiguous, ``n + 1`` entries: string ``i`` is
        ``values[offsets[i]:offsets[i + 1]]``.  Checked: at least one
        entry, the first 0 or more, never decreasing, the last at most
        ``values.size``; shared, not copied (so is ``values``).
    values : numpy.ndarray
        The UTF-8 bytes: ``uint8``, 1-D, C-contiguous.  Not checked for
        UTF-8 (Arrow consumers and :func:`~fixedutf32.from_arrow` check it).
    large : bool
        Whether the Arrow type is ``large_string`` (64-bit offsets).

    Attributes
    ----------
    offsets, values, large
        As given, read-only.  The arrays are shared: writing into them after
        the check (another thread included) is the caller's to avoid; a
        consumer reads them as they are when it does.

    Raises
    ------
    TypeError
        If ``offsets`` is not a NumPy array of the dtype ``large`` calls for,
        ``values`` not a ``uint8`` array, or ``large`` not a bool.
    ValueError
        If the offsets are empty, negative, decreasing or past the end of
        ``values`` (the first bad index is named), or an array is not 1-D.
    BufferError
        If an array is not C-contiguous.

    Examples
    --------
    >>> import numpy as np, fixedutf32
    >>> strings = fixedutf32.to_arrow_strings(np.array(["Hi", "Привет"]))
    >>> len(strings), strings.to_pylist()
    (2, ['Hi', 'Привет'])
    >>> hasattr(strings, "__arrow_c_array__")
    True
    >>> values = np.frombuffer(b"Hi!", np.uint8)
    >>> fixedutf32.ArrowStrings(np.array([0, 2, 9], np.int64), values, large=True)
    Traceback (most recent call last):
    ...
    ValueError: offsets must lie inside values (3 bytes), got offsets[2] = 9, past its end
    """

    __slots__ = ("_large", "_offsets", "_values")

    def __init__(
        self, offsets: npt.NDArray[np.integer[Any]], values: npt.NDArray[np.uint8], large: bool
    ) -> None:
        # Checked here, once: an export hands these to C code that trusts them.
        self._large = check_arrow_strings(offsets, values, large)
        self._offsets = offsets
        self._values = values

    @property
    def offsets(self) -> npt.NDArray[np.integer[Any]]:
        """The offsets, as given (shared)."""
        return self._offsets

    @property
    def values(self) -> npt.NDArray[np.uint8]:
        """The UTF-8 bytes, as given (shared)."""
        return self._values

    @property
    def large(self) -> bool:
        """Whether the Arrow type is ``large_string``."""
        return self._large

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    def __repr__(self) -> str:
        kind = "large_string" if self.large else "string"
        return f"<ArrowStrings: {len(self)} {kind} values, {self.values.size} bytes of UTF-8>"

    def to_pylist(self) -> list[str]:
        """The strings as a list of ``str`` (a copy)."""
        data = self.values.tobytes()
        bounds = self.offsets.tolist()
        return [data[a:b].decode() for a, b in itertools.pairwise(bounds)]

    def __arrow_c_schema__(self) -> object:
        """An ``arrow_schema`` capsule: the type, ``string`` or ``large_string``."""
        return _kernels.arrow_schema(self.large)

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        """``(arrow_schema, arrow_array)`` capsules sharing the buffers.

        A ``requested_schema`` of the other string type is honoured (the
        offsets are converted, when they fit); any other is ignored, as the
        protocol allows.
        """
        large = self.large
        if requested_schema is not None and _kernels.is_capsule(requested_schema, b"arrow_schema"):
            wanted = _kernels.arrow_schema_format(requested_schema)[0]
            if wanted == b"U":
                large = True
            elif wanted == b"u" and self.values.size <= _INT32_MAX:
                large = False
        offsets = self.offsets
        if large != self.large:
            offsets = offsets.astype(np.int64 if large else np.int32)
        return _kernels.arrow_export(offsets, self.values, len(self), large)


def _arrays(obj: Any) -> tuple[object, list[object]]:
    """The ``arrow_schema`` capsule and the ``arrow_array`` capsules ``obj`` exports."""
    kind = type(obj)
    if hasattr(kind, "__arrow_c_array__"):
        schema, array = obj.__arrow_c_array__()
        if not (
            _kernels.is_capsule(schema, b"arrow_schema")
            and _kernels.is_capsule(array, b"arrow_array")
        ):
            raise TypeError(
                f"{kind.__name__}.__arrow_c_array__() must return (arrow_schema, arrow_array) "
                f"capsules, got ({type(schema).__name__}, {type(array).__name__})"
            )
        return schema, [array]
    if hasattr(kind, "__arrow_c_stream__"):
        stream = obj.__arrow_c_stream__()
        if not _kernels.is_capsule(stream, b"arrow_array_stream"):
            raise TypeError(
                f"{kind.__name__}.__arrow_c_stream__() must return an arrow_array_stream "
                f"capsule, got {type(stream).__name__}"
            )
        return _kernels.arrow_stream_arrays(stream)
    raise TypeError(
        "array must be a pyarrow string array or any object exporting __arrow_c_array__ or "
        f"__arrow_c_stream__ (polars, nanoarrow, DuckDB, ...), got {kind.__name__}"
    )


def _offset_dtype(schema: object) -> np.dtype[Any]:
    format, _, dictionary = _kernels.arrow_schema_format(schema)
    if dictionary:
        raise TypeError("array is dictionary-encoded: decode it to plain strings first")
    dtype = _FORMATS.get(format)
    if dtype is not None:
        return dtype
    if format == b"vu":
        raise TypeError(
            "array is of type string_view, which is read without pyarrow only as string or "
            "large_string: pass a pyarrow array, or cast it to large_string first"
        )
    raise TypeError(
        f"array must hold strings (Arrow format 'u', string, or 'U', large_string), got "
        f"format {format.decode('ascii', 'replace')!r}"
    )


def _first_null(bitmap: object, offset: int, length: int) -> int:
    """The first null of a validity bitmap (``offset`` bits in), or -1."""
    bits = np.unpackbits(np.frombuffer(bitmap, np.uint8), bitorder="little")  # type: ignore[call-overload]
    valid = bits[offset : offset + length]
    return -1 if valid.all() else int(np.argmin(valid))


def import_strings(obj: Any) -> Iterator[tuple[npt.NDArray[np.int64], Any, int]]:
    """Each string array ``obj`` exports, as ``(offsets, values, count)`` read in place."""
    # offsets are int64 (widened for string); both keep the producer's array alive. TypeError for a
    # non-string array, ValueError for nulls or a malformed one.
    schema, arrays = _arrays(obj)
    dtype = _offset_dtype(schema)
    base = 0
    for array in arrays:
        length, null_count, offset, buffers = _kernels.arrow_array_fields(array)
        if len(buffers) != 3:
            raise ValueError(f"a string array has 3 buffers, this one has {len(buffers)}")
        if length < 0 or offset < 0 or length + offset >= _MAX_ENTRIES:
            raise ValueError(f"bad Arrow array: length {length}, offset {offset}")
        if length == 0:
            yield np.zeros(1, np.int64), b"", 0
            continue
        if null_count != 0 and buffers[0]:
            bitmap = _kernels.borrowed_buffer(buffers[0], (offset + length + 7) // 8, array)
            first = _first_null(bitmap, offset, length)
            if first >= 0:
                raise ValueError(
                    f"array has nulls (the first at element {base + first}); "
                    "fixed_length_utf32 has no null, fill them first"
                )
        nbytes = (offset + length + 1) * dtype.itemsize
        entries = np.frombuffer(
            memoryview(_kernels.borrowed_buffer(buffers[1], nbytes, array)), dtype
        )
        positions = np.ascontiguousarray(entries[offset:], dtype=np.int64)
        end = int(positions[-1])
        if end < 0 or int(positions[0]) < 0:
            raise ValueError(f"offsets of the Arrow array are negative ({positions[0]}, {end})")
        values = _kernels.borrowed_buffer(buffers[2], end, array) if end else b""
        yield positions, values, length
        base += length
