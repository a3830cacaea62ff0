"""The strict bytes codec, the strict data type and the error that names a chunk."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Self

import zarr.codecs
from zarr.dtype import FixedLengthUTF32 as _ZarrFixedLengthUTF32

from .. import metadata as _rules
from ..chunk import decode_chunk, encode_chunk
from . import _compat

if TYPE_CHECKING:
    import numpy as np
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.common import JSON
    from zarr.core.dtype.common import DTypeJSON

_DTYPE_NAME = "fixed_length_utf32"


def _is_fixed_utf32(dtype: object) -> bool:
    """Whether ``dtype`` is zarr's ``fixed_length_utf32`` data type (or the strict one)."""
    return isinstance(dtype, _ZarrFixedLengthUTF32)


def _same_fields(a: Any, b: Any) -> bool:
    """zarr's dataclass ``__eq__`` without its same-class test: the compared fields."""
    return all(getattr(a, f.name) == getattr(b, f.name) for f in fields(a) if f.compare)


# --------------------------------------------------------------------------
# The bytes codec


class BytesCodec(zarr.codecs.BytesCodec):
    """zarr's ``bytes`` codec, with fixedutf32's kernels for ``fixed_length_utf32``.

    For chunks of the ``fixed_length_utf32`` data type, decoding validates
    every code unit and returns a native-byte-order ``U`` array (one pass,
    GIL released, both byte orders); encoding validates and writes the
    codec's byte order.  For every other data type it is zarr's own class.
    Select it with ``zarr.config.set({"codecs.bytes":
    "fixedutf32.zarr.BytesCodec"})`` or the environment variable
    ``ZARR_CODECS__BYTES=fixedutf32.zarr.BytesCodec``.  It compares equal
    to, and hashes like, zarr's own ``BytesCodec`` with the same ``endian``:
    both stand for the same JSON.

    Parameters
    ----------
    endian : {"little", "big"} or zarr.codecs.Endian or None
        As for zarr's ``BytesCodec``.  Metadata without an ``endian`` is
        kept as ``None`` for this data type (zarr would assume the
        machine's byte order) and refused when a chunk is decoded or
        encoded, or at ``open_array`` with :class:`CodecPipeline`.

    Raises
    ------
    fixedutf32.InvalidCodePointError
        When a decoded or encoded chunk holds a surrogate or a value above
        U+10FFFF; nothing is written then.
    fixedutf32.MetadataError
        When a ``fixed_length_utf32`` chunk meets a codec without ``endian``.

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> with zarr.config.set({"codecs.bytes": "fixedutf32.zarr.BytesCodec"}):
    ...     arr = zarr.create_array({}, shape=(2,), dtype="<U3")
    ...     arr[:] = ["ab", "cde"]
    ...     arr[:]
    array(['ab', 'cde'], dtype='<U3')
    >>> BytesCodec(endian="big") == zarr.codecs.BytesCodec(endian="big")
    True
    """

    # zarr's registry and configuration name classes by module and name
    __module__ = "fixedutf32.zarr"

    def __eq__(self, other: object) -> bool:
        # zarr's dataclass __eq__ wants the same class, but both stand for the same JSON: metadata
        # parsed with either must be equal, either way round (Python asks the subclass first).
        if type(other) in _SAME_CODEC:
            return _same_fields(self, other)
        return NotImplemented

    # zarr's hash is that of (endian,): equal codecs of either class hash alike
    __hash__ = zarr.codecs.BytesCodec.__hash__

    @classmethod
    def from_dict(cls, data: dict[str, JSON]) -> Self:
        """Parse the codec's JSON; a missing ``endian`` is kept as ``None``.

        Parameters
        ----------
        data : dict
            ``{"name": "bytes", "configuration": {"endian": ...}}``, the
            configuration optional.

        Returns
        -------
        BytesCodec
            A new codec.

        Examples
        --------
        >>> BytesCodec.from_dict({"name": "bytes"}).endian is None
        True
        """
        codec = super().from_dict(data)
        config = data.get("configuration") if isinstance(data, dict) else None
        if not config or "endian" not in config:  # type: ignore[operator]
            object.__setattr__(codec, "endian", None)
        return codec

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        """Fill in what the array implies, as zarr does.

        A codec without ``endian`` stays so for ``fixed_length_utf32``,
        whose byte order must be explicit (it is refused when a chunk is
        decoded or encoded).  For other data types it is what zarr's own
        class makes of it: the machine's byte order on zarr 3.1, zarr's
        ``ValueError`` for multi-byte types on zarr 3.4.

        Parameters
        ----------
        array_spec : zarr.core.array_spec.ArraySpec
            The chunk spec; its data type decides the default byte order.

        Returns
        -------
        BytesCodec
            ``self`` or a new codec.

        Examples
        --------
        >>> from zarr.core.array_spec import ArraySpec, ArrayConfig
        >>> from zarr.core.buffer import default_buffer_prototype
        >>> from zarr.dtype import FixedLengthUTF32
        >>> spec = ArraySpec((2,), FixedLengthUTF32(length=3), "", ArrayConfig.from_dict({}),
        ...                  default_buffer_prototype())
        >>> BytesCodec(endian=None).evolve_from_array_spec(spec).endian is None
        True
        """
        if self.endian is None:
            if _is_fixed_utf32(array_spec.dtype):
                return self
            if _compat.UNSPECIFIED_ENDIAN is not None:
                # zarr 3.1's from_dict would have given the machine's byte
                # order (BytesCodec.__init__ parses the str into its Endian)
                codec = replace(self, endian=_compat.UNSPECIFIED_ENDIAN)  # type: ignore[arg-type]
                return codec.evolve_from_array_spec(array_spec)
        return super().evolve_from_array_spec(array_spec)

    def _endian_of(self, chunk_spec: ArraySpec) -> str:
        if self.endian is None:
            dtype = _rules.FixedLengthUTF32(chunk_spec.dtype.item_size)  # type: ignore[attr-defined]
            # check_codecs words the error: the byte order must be explicit
            _rules.check_codecs([self.to_dict()], dtype)
        endian = _compat.endian_name(self.endian)
        assert endian is not None  # check_codecs raised on None
        return endian

    def _decode_utf32(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        chunk = decode_chunk(
            chunk_bytes.as_array_like(),  # type: ignore[arg-type]
            chunk_spec.dtype.item_size,  # type: ignore[attr-defined]
            endian=self._endian_of(chunk_spec),
            shape=chunk_spec.shape,
        )
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(chunk)  # type: ignore[arg-type,unused-ignore]

    def _encode_utf32(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer:
        encoded = encode_chunk(
            chunk_array.as_ndarray_like(),
            chunk_spec.dtype.item_size,  # type: ignore[attr-defined]
            endian=self._endian_of(chunk_spec),
        )
        return chunk_spec.prototype.buffer.from_array_like(encoded)

    # zarr 3.1.6 calls the sync hooks where it can; 3.1.0..3.1.5 have only
    # the async ones, and their BytesCodec no sync hooks to defer to.

    def _decode_sync(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        if _is_fixed_utf32(chunk_spec.dtype):
            return self._decode_utf32(chunk_bytes, chunk_spec)
        return super()._decode_sync(chunk_bytes, chunk_spec)

    async def _decode_single(self, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        if _is_fixed_utf32(chunk_spec.dtype):
            return self._decode_utf32(chunk_bytes, chunk_spec)
        return await super()._decode_single(chunk_bytes, chunk_spec)

    def _encode_sync(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        if _is_fixed_utf32(chunk_spec.dtype):
            return self._encode_utf32(chunk_array, chunk_spec)
        return super()._encode_sync(chunk_array, chunk_spec)

    async def _encode_single(self, chunk_array: NDBuffer, chunk_spec: ArraySpec) -> Buffer | None:
        if _is_fixed_utf32(chunk_spec.dtype):
            return self._encode_utf32(chunk_array, chunk_spec)
        return await super()._encode_single(chunk_array, chunk_spec)


_SAME_CODEC = (zarr.codecs.BytesCodec, BytesCodec)


# --------------------------------------------------------------------------
# The strict data type


@dataclass(frozen=True, kw_only=True)
class StrictFixedLengthUTF32(_ZarrFixedLengthUTF32):
    """zarr's ``FixedLengthUTF32`` data type, parsed by the specification's rules.

    :func:`enable` registers it in zarr's data-type registry in place of
    zarr's class, so that ``open_array`` refuses what the specification
    forbids with a :class:`fixedutf32.MetadataError` naming the key:
    ``length_bytes`` that is not a positive multiple of 4, a V2 dtype
    string NumPy would not write (``"<U02"``, ``"<U0"``), and a fill value
    with more code points than the type holds (zarr would truncate it) or
    with a lone surrogate.  The rules are those of :mod:`fixedutf32.metadata`.
    It compares equal to, and hashes like, zarr's class with the same
    ``length`` and ``endianness``.

    Examples
    --------
    >>> from zarr.dtype import FixedLengthUTF32
    >>> StrictFixedLengthUTF32(length=2) == FixedLengthUTF32(length=2)
    True
    >>> StrictFixedLengthUTF32.from_json(
    ...     {"name": "fixed_length_utf32", "configuration": {"length_bytes": 13}},
    ...     zarr_format=3)
    Traceback (most recent call last):
    ...
    fixedutf32.errors.MetadataError: data_type.configuration.length_bytes: expected a ... got 13
    """

    __module__ = "fixedutf32.zarr"

    def __eq__(self, other: object) -> bool:
        # The same JSON as zarr's class: metadata opened with this type equals
        # metadata zarr made with its own, either way round.
        if type(other) in _SAME_DTYPE:
            return _same_fields(self, other)
        return NotImplemented

    # as BytesCodec's: the hash of the compared fields, whichever class
    __hash__ = _ZarrFixedLengthUTF32.__hash__

    @classmethod
    def _from_json_v3(cls, data: DTypeJSON) -> Self:
        if isinstance(data, dict) and data.get("name") == _DTYPE_NAME:
            return cls(length=_rules.FixedLengthUTF32.from_json(data).capacity)
        return super()._from_json_v3(data)

    @classmethod
    def _from_json_v2(cls, data: DTypeJSON) -> Self:
        if cls._check_json_v2(data):
            dtype, endian = _rules.parse_v2_dtype(data["name"])
            return cls(length=dtype.capacity, endianness=endian)  # type: ignore[arg-type]
        return super()._from_json_v2(data)

    def from_json_scalar(self, data: JSON, *, zarr_format: Any) -> np.str_:
        """The fill value from its JSON, refusing one too long once its trailing U+0000 count.

        Parameters
        ----------
        data : JSON
            The array metadata's ``fill_value``.
        zarr_format : {2, 3}

        Returns
        -------
        numpy.str_
            A new scalar (NumPy drops trailing U+0000, as it stores ``U``
            strings).

        Raises
        ------
        fixedutf32.MetadataError
            For a string ending in U+0000 of more than ``length`` code
            points (others are checked by :meth:`cast_scalar`).
        TypeError
            From zarr-python, for a value that is not a string.

        Examples
        --------
        >>> StrictFixedLengthUTF32(length=1).from_json_scalar("a\\u0000", zarr_format=3)
        Traceback (most recent call last):
        ...
        fixedutf32.errors.MetadataError: fill_value: expected at most 1 code points, got 2 ...
        """
        # Others are checked by cast_scalar, where zarr does not rewrap the error as a TypeError.
        if isinstance(data, str) and data.endswith("\0"):
            _rules.FixedLengthUTF32(self.item_size).decode_fill_value(data)
        return super().from_json_scalar(data, zarr_format=zarr_format)

    def cast_scalar(self, data: object) -> np.str_:
        """The fill value as a ``numpy.str_``, refusing what zarr would truncate.

        Parameters
        ----------
        data : object
            A ``str`` is checked against the capacity and for lone
            surrogates; anything else is converted as zarr does.

        Returns
        -------
        numpy.str_

        Raises
        ------
        fixedutf32.MetadataError
            For a string of more than ``length`` code points or one that
            holds a lone surrogate.

        Examples
        --------
        >>> StrictFixedLengthUTF32(length=2).cast_scalar("abc")
        Traceback (most recent call last):
        ...
        fixedutf32.errors.MetadataError: fill_value: expected at most 2 code points, got 3 in "abc"
        """
        if isinstance(data, str):
            _rules.FixedLengthUTF32(self.item_size).decode_fill_value(str(data))
        return super().cast_scalar(data)


_SAME_DTYPE = (_ZarrFixedLengthUTF32, StrictFixedLengthUTF32)
