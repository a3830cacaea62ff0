"""The chunk kernels on blocks of one array's chunks, their arguments checked once per array."""
# The public functions check every argument per call (~1 us), too much per cache-sized block. Errors
# are the package's own (status_error), indices counted from the buffer given.

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from .. import _kernels
from .._arguments import as_bytes, check_endian, check_length_bytes, unicode_dtype
from .._status import status_error
from ..errors import InvalidCodePointError
from .files import BLOCK_BYTES

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = ["FILE_INVALID", "FILE_MISSING", "FILE_SHORT", "FILE_UNUSUAL", "ElementLayout"]

_VALIDATE = _kernels.VALIDATE
_SRC_SWAPPED = _kernels.SRC_SWAPPED
_SWAP = _kernels.SWAP
_STREAM = _kernels.STREAM
_STREAM_MIN = _kernels.STREAM_MIN_BYTES
STREAM_MIN_BYTES = _STREAM_MIN  # a result this large is written past the cache
UTF8_SLACK = _kernels.UTF8_SLACK  # bytes to_utf8 may write past its last element
FILE_MISSING, FILE_UNUSUAL, FILE_INVALID, FILE_SHORT = (
    _kernels.FILE_MISSING,
    _kernels.FILE_UNUSUAL,
    _kernels.FILE_INVALID,
    _kernels.FILE_SHORT,
)


@dataclass(frozen=True)
class ElementLayout:
    """How a chunk's elements are stored (width, byte order); ValueError for bad arguments, once."""

    length_bytes: int
    endian: Literal["little", "big"]
    units: int = field(init=False)
    swapped: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "length_bytes", check_length_bytes(self.length_bytes))
        object.__setattr__(self, "swapped", check_endian(self.endian))
        object.__setattr__(self, "units", self.length_bytes // 4)

    @property
    def dtype(self) -> np.dtype[np.str_]:
        """The NumPy ``U`` dtype of these elements as stored (their byte order)."""
        return unicode_dtype(self.units, self.endian)

    def block_bytes(self, target: int = BLOCK_BYTES) -> int:
        """The largest whole number of elements in ``target`` bytes (at least one element)."""
        return max(1, target // self.length_bytes) * self.length_bytes

    def validate(self, data: Buffer) -> None:
        """Check every code unit of whole elements; index counts from the start of ``data``."""
        status = _kernels.validate(data, self.units, self.swapped)
        if status[0]:
            raise status_error(status)

    def longest_string(self, data: Buffer) -> int:
        """As :meth:`longest`, keeping only the maximum (no lengths buffer)."""
        flags = _VALIDATE | (_SRC_SWAPPED if self.swapped else 0)
        status, longest = _kernels.longest(data, self.units, flags)
        if status[0]:
            raise status_error(status)
        return longest

    def longest(self, data: Buffer, lengths: npt.NDArray[np.intp], *, validate: bool = True) -> int:
        """Check (if ``validate``) whole elements, write each length; return the longest."""
        # lengths: scratch of at least one entry per element; trailing U+0000 are not counted.
        flags = (_VALIDATE if validate else 0) | (_SRC_SWAPPED if self.swapped else 0)
        status = _kernels.str_lengths(data, lengths, self.units, flags)
        if status[0]:
            raise status_error(status)
        count = as_bytes(data).nbytes // self.length_bytes
        return int(lengths[:count].max()) if count else 0

    def lengths(self, data: Buffer) -> npt.NDArray[np.intp]:
        """Each element's length in code points, units unchecked (a new array)."""
        count = as_bytes(data).nbytes // self.length_bytes
        lengths = np.empty(count, np.intp)
        status = _kernels.str_lengths(
            data, lengths, self.units, _SRC_SWAPPED if self.swapped else 0
        )
        if status[0]:  # pragma: no cover - nothing fails without validation
            raise status_error(status)
        return lengths

    def invalid_units(self, data: Buffer, limit: int) -> list[InvalidCodePointError]:
        """Every invalid code unit of whole elements, up to ``limit``, in order."""
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

    def place(self, src: Buffer, dst: npt.NDArray[Any], endian: Literal["little", "big"]) -> None:
        """Copy elements already checked into contiguous ``dst`` in ``endian`` byte order."""
        # For a reader that validated src in cache: one pass, non-temporal stores for a large dst.
        flags = _SWAP if endian != self.endian else 0
        if dst.nbytes >= _STREAM_MIN:
            flags |= _STREAM
        status = _kernels.convert(src, dst, self.units, flags)
        if status[0]:  # pragma: no cover - nothing fails without validation
            raise status_error(status)

    def check_into(self, src: Buffer, dst: Buffer, *, stream: bool = False) -> None:
        """Check ``src``'s elements and write them to separate ``dst`` in native order, one pass."""
        # For a reader's block in cache: dst may be left partly written on an error, so it must be
        # the reader's own memory; stream: non-temporal stores (dst part of a large result).
        status = _kernels.convert(src, dst, self.units, self._native | (_STREAM if stream else 0))
        if status[0]:
            raise status_error(status)

    def read_files(
        self,
        directory: int,
        names: list[bytes],
        into: Buffer,
        starts: npt.NDArray[np.intp],
        nbytes: int,
        bounce: Buffer | None = None,
    ) -> tuple[int, int, Exception | None]:
        """Read files under ``directory`` into ``into`` at ``starts``, checked, native order."""
        # Without the GIL.  bounce: a block in cache, checked, then copied past the cache (a large
        # result; a file of up to one block that fails leaves into as it was); None: in place.
        # Returns (files done, why the next stopped: 0 or a FILE_* outcome, that file's error if
        # FILE_INVALID).
        done, outcome, status = _kernels.read_files(
            directory,
            names,
            into,
            starts,
            nbytes,
            bounce,
            self.units,
            self._native,
            bounce is not None,
        )
        return done, outcome, status_error(status) if outcome == FILE_INVALID else None

    def read_utf8(
        self,
        directory: int,
        names: list[bytes],
        ranges: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]],
        nbytes: int,
        bounce: Buffer,
        offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64],
        first: int,
        values: Buffer,
        bounds: tuple[int, int],
        backward: bool,
    ) -> tuple[int, int, Exception | None, int]:
        """Transcode ``ranges`` of files under ``directory`` to Arrow UTF-8, each file checked."""
        # Without the GIL.  ranges: (starts, stops) of elements per file; bounds: (pos, limit) in
        # values; offsets filled from entry first (_kernels.read_utf8).  Returns (files done,
        # why the next stopped, 0 if none did; its error if invalid; the position reached).
        done, outcome, status, pos = _kernels.read_utf8(
            directory,
            names,
            ranges[0],
            ranges[1],
            nbytes,
            bounce,
            self.units,
            self.swapped,
            offsets,
            offsets.dtype.itemsize == 8,
            first,
            values,
            bounds[0],
            bounds[1],
            backward,
        )
        error = status_error(status) if outcome == FILE_INVALID else None
        return done, outcome, error, pos

    def read_checked(
        self, fd: int, offset: int, into: Buffer, bounce: Buffer | None = None
    ) -> tuple[int, Exception | None]:
        """Fill ``into`` from ``offset`` of the open file ``fd``, checked, in native order."""
        # Without the GIL; bounce as for read_files, each block through it checked before any of
        # it is written (a block that fails leaves into as it was).  Returns (0, None), or
        # FILE_SHORT or FILE_INVALID and the error (its element counted from into).
        outcome, status = _kernels.read_checked(
            fd, offset, into, bounce, self.units, self._native, bounce is not None
        )
        return outcome, status_error(status) if outcome == FILE_INVALID else None

    def read_longest(
        self, fd: int, offset: int, nbytes: int, bounce: Buffer
    ) -> tuple[int, Exception | None, int]:
        """Check ``nbytes`` of the open file ``fd`` from ``offset``, keeping the longest string."""
        # Read through bounce, without the GIL.  Returns (0, None, longest), or FILE_SHORT or
        # FILE_INVALID, the error and the longest before it.
        flags = _VALIDATE | (_SRC_SWAPPED if self.swapped else 0)
        outcome, status, longest = _kernels.read_longest(
            fd, offset, nbytes, bounce, self.units, flags
        )
        return outcome, status_error(status) if outcome == FILE_INVALID else None, longest

    @property
    def _native(self) -> int:
        """convert's flags from this layout to native order, checked."""
        return _VALIDATE | ((_SRC_SWAPPED | _SWAP) if self.swapped else 0)

    def to_utf8(
        self, src: Buffer, offsets: Buffer, values: Buffer, end: int, *, validate: bool = True
    ) -> int:
        """Append ``src``'s elements to Arrow ``values`` at byte ``end``; returns the new end."""
        # offsets are written too; values needs UTF8_SLACK bytes past the worst case.
        status, end, _ = _kernels.utf32_to_utf8(
            src, self.units, self.swapped, validate, offsets, values, False, 0, end
        )
        if status[0]:
            raise status_error(status)
        return end

    def store(
        self,
        src: Buffer,
        dst: Buffer,
        endian: Literal["little", "big"],
        from_units: int | None = None,
    ) -> None:
        """Check elements held in ``endian`` order, write them to ``dst`` as stored (inverse)."""
        # dst may be src (left as it was on an error) or scratch (then partly written); src of
        # another width (from_units, not in place) is repadded in the same pass, a string too
        # long for this width a StringTooLongError.
        held = endian != sys.byteorder
        flags = _VALIDATE | (_SRC_SWAPPED if held else 0) | (_SWAP if held != self.swapped else 0)
        if from_units is None or from_units == self.units:
            status = _kernels.convert(src, dst, self.units, flags)
        else:
            status = _kernels.repad(src, dst, from_units, self.units, flags)
        if status[0]:
            raise status_error(status, capacity=self.units)
