"""The chunk kernels for the blocks of one array's chunks, their arguments
checked once per array.

:func:`fixedutf32.validate`, :func:`fixedutf32.str_lengths` and
:func:`fixedutf32.decode_chunk` check every argument on every call, which
is what a public function must do and costs about a microsecond; a reader
that validates a chunk block by block while the block is in cache would
pay it for every block.  :class:`ElementLayout` checks ``length_bytes`` and
``endian`` once and then calls the kernels directly.  Errors are the
package's own (:func:`fixedutf32._status.status_error`), with element
indices counted from the start of the buffer given.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from .. import _kernels
from .._checks import as_bytes, check_endian, check_length_bytes
from .._status import status_error
from ..errors import InvalidCodePointError
from .files import BLOCK_BYTES

if TYPE_CHECKING:
    from .._checks import Buffer

__all__ = ["ElementLayout"]

_VALIDATE = _kernels.VALIDATE
_SRC_SWAPPED = _kernels.SRC_SWAPPED
_SWAP = _kernels.SWAP
_STREAM = _kernels.STREAM
_STREAM_MIN = _kernels.STREAM_MIN_BYTES


@dataclass(frozen=True)
class ElementLayout:
    """How the elements of a chunk are stored: their width and byte order.

    Parameters
    ----------
    length_bytes : int
        Bytes per element, a positive multiple of 4.
    endian : {"little", "big"}
        Byte order of the stored code units.

    Attributes
    ----------
    units : int
        Code units per element.
    swapped : bool
        Whether the stored byte order is not this machine's.

    Raises
    ------
    ValueError
        For an invalid ``length_bytes`` or ``endian`` (checked here, once).

    Examples
    --------
    >>> import numpy as np
    >>> layout = ElementLayout(8, "little")
    >>> lengths = np.empty(layout.block_elements(), np.intp)
    >>> layout.longest("ab\\x00\\x00c\\x00\\x00\\x00".encode("utf-32-le")[:16], lengths)
    2
    >>> layout.validate(b"\\x00\\xd8\\x00\\x00" * 2)
    Traceback (most recent call last):
    ...
    fixedutf32.errors.InvalidCodePointError: invalid code point U+D800 (surrogate) at element 0, ...
    """

    length_bytes: int
    endian: Literal["little", "big"]
    units: int = field(init=False)
    swapped: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "length_bytes", check_length_bytes(self.length_bytes))
        object.__setattr__(self, "swapped", check_endian(self.endian))
        object.__setattr__(self, "units", self.length_bytes // 4)

    def block_bytes(self, target: int = BLOCK_BYTES) -> int:
        """The largest whole number of elements in ``target`` bytes (at least one element).

        Parameters
        ----------
        target : int

        Returns
        -------
        int
        """
        return max(1, target // self.length_bytes) * self.length_bytes

    def block_elements(self, target: int = BLOCK_BYTES) -> int:
        """Elements in a block of :meth:`block_bytes` (the size a lengths buffer needs).

        Parameters
        ----------
        target : int

        Returns
        -------
        int
        """
        return self.block_bytes(target) // self.length_bytes

    def validate(self, data: Buffer) -> None:
        """Check every code unit of whole elements.

        Parameters
        ----------
        data : buffer
            Whole elements (read only).

        Raises
        ------
        InvalidCodePointError
            At the first invalid unit; ``index`` counts from the start of ``data``.
        """
        status = _kernels.validate(data, self.units, self.swapped)
        if status[0]:
            raise status_error(status)

    def longest_string(self, data: Buffer) -> int:
        """Check every code unit of whole elements; the longest string's length.

        As :meth:`longest`, without writing each element's length anywhere:
        for a caller that keeps only the maximum.

        Parameters
        ----------
        data : buffer
            Whole elements (read only).

        Returns
        -------
        int
            Code points of the longest string (0 for no elements).

        Raises
        ------
        InvalidCodePointError
            At the first invalid unit; ``index`` counts from the start of ``data``.

        Examples
        --------
        >>> import numpy as np
        >>> ElementLayout(16, "little").longest_string(np.array(["ab", "", "xyz"], "<U4"))
        3
        """
        flags = _VALIDATE | (_SRC_SWAPPED if self.swapped else 0)
        status, longest = _kernels.longest(data, self.units, flags)
        if status[0]:
            raise status_error(status)
        return longest

    def longest(self, data: Buffer, lengths: npt.NDArray[np.intp], *, validate: bool = True) -> int:
        """Check every code unit of whole elements and return the longest string's length.

        Parameters
        ----------
        data : buffer
            Whole elements (read only).
        lengths : numpy.ndarray of intp
            Scratch for one length per element: at least as many entries as
            ``data`` holds elements (:meth:`block_elements` for a block);
            the first of them receive each element's length.
        validate : bool
            False: count without checking the units (for a chunk already
            known to hold an invalid one).

        Returns
        -------
        int
            Code points of the longest string, trailing U+0000 not counted
            (0 for no elements).

        Raises
        ------
        InvalidCodePointError
            At the first invalid unit; ``index`` counts from the start of ``data``.
        """
        flags = (_VALIDATE if validate else 0) | (_SRC_SWAPPED if self.swapped else 0)
        status = _kernels.str_lengths(data, lengths, self.units, flags)
        if status[0]:
            raise status_error(status)
        count = as_bytes(data).nbytes // self.length_bytes
        return int(lengths[:count].max()) if count else 0

    def lengths(self, data: Buffer) -> npt.NDArray[np.intp]:
        """Each element's length in code points, without checking the units (a new array).

        Parameters
        ----------
        data : buffer
            Whole elements (read only).

        Returns
        -------
        numpy.ndarray of intp
        """
        count = as_bytes(data).nbytes // self.length_bytes
        lengths = np.empty(count, np.intp)
        status = _kernels.str_lengths(
            data, lengths, self.units, _SRC_SWAPPED if self.swapped else 0
        )
        if status[0]:  # pragma: no cover - nothing fails without validation
            raise status_error(status)
        return lengths

    def invalid_units(self, data: Buffer, limit: int) -> list[InvalidCodePointError]:
        """Every invalid code unit of whole elements, up to ``limit``, in order.

        Parameters
        ----------
        data : buffer
            Whole elements (read only).
        limit : int
            Stop after this many.

        Returns
        -------
        list of InvalidCodePointError
            One per invalid unit: ``index`` the element (from the start of
            ``data``), ``position`` the unit in it, ``code_point`` its value.

        Examples
        --------
        >>> bad = ElementLayout(8, "little").invalid_units(
        ...     "a\\ud800\\U00010000\\udfff".encode("utf-32-le", "surrogatepass"), 10)
        >>> [(e.index, e.position, hex(e.code_point)) for e in bad]
        [(0, 1, '0xd800'), (1, 1, '0xdfff')]
        """
        view = as_bytes(data)
        total = view.nbytes // 4
        found: list[InvalidCodePointError] = []
        unit = 0
        while len(found) < limit and unit < total:
            # One unit per "element": the kernel finds the next bad unit from here.
            status = _kernels.validate(view[4 * unit :], 1, self.swapped)
            if not status[0]:
                break
            unit += status[1]
            element, position = divmod(unit, self.units)
            found.append(InvalidCodePointError(element, position, status[3]))
            unit += 1
        return found

    def convert_into(
        self, src: Buffer, dst: Buffer, endian: Literal["little", "big"] = sys.byteorder
    ) -> None:
        """Check the elements of ``src`` and write them to ``dst`` in ``endian`` byte order.

        Parameters
        ----------
        src : buffer
            Whole elements, stored as this layout says (read only, unless it is ``dst``).
        dst : writable buffer
            As large as ``src``; may be ``src`` itself (in place).
        endian : {"little", "big"}
            Byte order to write; default this machine's.

        Raises
        ------
        InvalidCodePointError
            At the first invalid unit; ``dst`` is then as it was (in place too).
        ValueError
            If ``dst`` is smaller than ``src``, partly overlaps it, or
            ``endian`` is invalid.

        Examples
        --------
        >>> data = bytearray("ab".encode("utf-32-be"))
        >>> ElementLayout(4, "big").convert_into(data, data, "little")
        >>> bytes(data) == "ab".encode("utf-32-le")
        True
        """
        swap = check_endian(endian) != self.swapped
        flags = _VALIDATE | (_SRC_SWAPPED if self.swapped else 0) | (_SWAP if swap else 0)
        relation = _kernels.overlap(src, dst)
        if relation == 2:
            raise ValueError("dst must be src itself or a separate buffer, not a part of it")
        if relation == 1:
            status = _kernels.convert(src, dst, self.units, flags) if swap else self._check(src)
        else:
            # Separate: check first, so that a bad unit late in src leaves dst as it was;
            # the copy checks again what it writes (free in its one pass), so that a unit
            # another thread changes in between cannot get through.
            status = self._check(src)
            if not status[0]:
                status = _kernels.convert(src, dst, self.units, flags)
        if status[0]:
            raise status_error(status)

    def place(self, src: Buffer, dst: npt.NDArray[Any], endian: Literal["little", "big"]) -> None:
        """Copy elements already checked into ``dst`` (contiguous) in ``endian`` byte order.

        For a reader that validated ``src`` while it was in cache: one unchecked
        pass, with non-temporal stores for a destination too large for the cache.
        ``endian`` is not checked (this runs once per chunk).
        """
        flags = _SWAP if endian != self.endian else 0
        if dst.nbytes >= _STREAM_MIN:
            flags |= _STREAM
        status = _kernels.convert(src, dst, self.units, flags)
        if status[0]:  # pragma: no cover - nothing fails without validation
            raise status_error(status)

    def store(self, src: Buffer, dst: Buffer, endian: Literal["little", "big"]) -> None:
        """Check elements held in ``endian`` byte order and write them to ``dst`` as stored.

        The inverse of :meth:`convert_into`, in one pass: ``dst`` may be ``src``
        (left as it was on an error) or a scratch buffer (then partly written).
        ``endian`` is not checked.

        Raises
        ------
        InvalidCodePointError
            At the first invalid unit; ``index`` counts from the start of ``src``.
        """
        held = endian != sys.byteorder
        flags = _VALIDATE | (_SRC_SWAPPED if held else 0) | (_SWAP if held != self.swapped else 0)
        status = _kernels.convert(src, dst, self.units, flags)
        if status[0]:
            raise status_error(status)

    def _check(self, data: Buffer) -> _kernels.Status:
        return _kernels.validate(data, self.units, self.swapped)
