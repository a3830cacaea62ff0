"""zarr-python integration: a strict ``bytes`` codec and a codec pipeline.

``enable()`` makes zarr-python read and write every ``fixed_length_utf32``
array (and every Zarr V2 ``<U``/``>U`` array) through fixedutf32's kernels:
chunks are validated, decoded with the GIL released, and metadata that
breaks the specification raises :class:`fixedutf32.MetadataError`.

Nothing changes in zarr-python until it is asked to: importing this module
registers nothing.  zarr finds the classes through the entry points
``zarr.codecs`` (``bytes``) and ``zarr.codec_pipeline`` and uses them when its
configuration names them::

    zarr.config.set({"codecs.bytes": "fixedutf32.zarr.BytesCodec",
                     "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"})

which is what :func:`enable` does (it also installs the strict data type).
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, replace

try:
    import zarr
    import zarr.codecs
    from zarr.abc.codec import CodecPipeline as _ZarrCodecPipeline
    from zarr.core.codec_pipeline import BatchedCodecPipeline
    from zarr.dtype import DataTypeValidationError, data_type_registry
    from zarr.dtype import FixedLengthUTF32 as _ZarrFixedLengthUTF32
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"fixedutf32.zarr needs zarr-python >= 3.1 ({exc}); install it with "
        f"pip install 'fixedutf32[zarr]'"
    ) from exc

from . import metadata as _rules
from .chunk import decode_chunk, encode_chunk

__all__ = [
    "BytesCodec",
    "CodecPipeline",
    "StrictFixedLengthUTF32",
    "enable",
    "disable",
    "enabled",
]

BYTES_CODEC_PATH = "fixedutf32.zarr.BytesCodec"
PIPELINE_PATH = "fixedutf32.zarr.CodecPipeline"
_ZARR_BYTES_CODEC_PATH = "zarr.codecs.bytes.BytesCodec"
_ZARR_PIPELINE_PATH = "zarr.core.codec_pipeline.BatchedCodecPipeline"
_DTYPE_NAME = "fixed_length_utf32"
_SYSTEM_ENDIAN = sys.byteorder


def _is_fixed_utf32(dtype):
    return isinstance(dtype, _ZarrFixedLengthUTF32)


# --------------------------------------------------------------------------
# The bytes codec


@dataclass(frozen=True)
class BytesCodec(zarr.codecs.BytesCodec):
    """zarr's ``bytes`` codec, with fixedutf32's kernels for ``fixed_length_utf32``.

    For chunks of the ``fixed_length_utf32`` data type, decoding validates
    every code unit and returns a native-byte-order ``U`` array (one pass,
    GIL released, both byte orders); encoding validates and writes the
    codec's byte order.  For every other data type it is zarr's own class.
    Select it with ``zarr.config.set({"codecs.bytes":
    "fixedutf32.zarr.BytesCodec"})`` or the environment variable
    ``ZARR_CODECS__BYTES=fixedutf32.zarr.BytesCodec``.

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
    """

    @classmethod
    def from_dict(cls, data):
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
        if not config or "endian" not in config:
            object.__setattr__(codec, "endian", None)
        return codec

    def evolve_from_array_spec(self, array_spec):
        """Fill in what the array implies, as zarr does.

        A codec without ``endian`` gets the machine's byte order for
        multi-byte data types (zarr's default), except for
        ``fixed_length_utf32``, whose byte order must be explicit.

        Parameters
        ----------
        array_spec : zarr.core.array_spec.ArraySpec

        Returns
        -------
        BytesCodec
            ``self`` or a new codec.

        Examples
        --------
        >>> from zarr.core.array_spec import ArraySpec, ArrayConfig
        >>> from zarr.core.buffer import default_buffer_prototype
        >>> from zarr.dtype import Int32
        >>> spec = ArraySpec((2,), Int32(), 0, ArrayConfig.from_dict({}),
        ...                  default_buffer_prototype())
        >>> BytesCodec(endian=None).evolve_from_array_spec(spec).endian.value
        'little'
        """
        if self.endian is None:
            if _is_fixed_utf32(array_spec.dtype):
                return self
            # zarr's from_dict would have given the machine's byte order
            return replace(self, endian=_SYSTEM_ENDIAN).evolve_from_array_spec(array_spec)
        return super().evolve_from_array_spec(array_spec)

    def _endian_of(self, chunk_spec):
        if self.endian is None:
            dtype = _rules.FixedLengthUTF32(chunk_spec.dtype.item_size)
            # check_codecs words the error: the byte order must be explicit
            _rules.check_codecs([self.to_dict()], dtype)
        return self.endian.value

    def _decode_sync(self, chunk_bytes, chunk_spec):
        if not _is_fixed_utf32(chunk_spec.dtype):
            return super()._decode_sync(chunk_bytes, chunk_spec)
        chunk = decode_chunk(
            chunk_bytes.as_array_like(),
            chunk_spec.dtype.item_size,
            endian=self._endian_of(chunk_spec),
            shape=chunk_spec.shape,
        )
        return chunk_spec.prototype.nd_buffer.from_ndarray_like(chunk)

    async def _decode_single(self, chunk_bytes, chunk_spec):
        # zarr 3.1.0..3.1.5 call only the async hooks
        return self._decode_sync(chunk_bytes, chunk_spec)

    def _encode_sync(self, chunk_array, chunk_spec):
        if not _is_fixed_utf32(chunk_spec.dtype):
            return super()._encode_sync(chunk_array, chunk_spec)
        encoded = encode_chunk(
            chunk_array.as_ndarray_like(),
            chunk_spec.dtype.item_size,
            endian=self._endian_of(chunk_spec),
        )
        return chunk_spec.prototype.buffer.from_array_like(encoded)

    async def _encode_single(self, chunk_array, chunk_spec):
        return self._encode_sync(chunk_array, chunk_spec)


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

    Examples
    --------
    >>> StrictFixedLengthUTF32.from_json(
    ...     {"name": "fixed_length_utf32", "configuration": {"length_bytes": 13}},
    ...     zarr_format=3)
    Traceback (most recent call last):
    ...
    fixedutf32.errors.MetadataError: data_type.configuration.length_bytes: expected a positive integer multiple of 4, got 13
    """

    @classmethod
    def _from_json_v3(cls, data):
        if isinstance(data, dict) and data.get("name") == _DTYPE_NAME:
            return cls(length=_rules.FixedLengthUTF32.from_json(data).capacity)
        return super()._from_json_v3(data)

    @classmethod
    def _from_json_v2(cls, data):
        if cls._check_json_v2(data):
            dtype, endian = _rules.parse_v2_dtype(data["name"])
            return cls(length=dtype.capacity, endianness=endian)
        return super()._from_json_v2(data)

    def cast_scalar(self, data):
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


# --------------------------------------------------------------------------
# The codec pipeline


class CodecPipeline(_ZarrCodecPipeline):
    """A zarr codec pipeline that reads and writes fixed_length_utf32 arrays itself.

    Arrays of other data types, and codec chains it does not handle, go to
    zarr's own ``BatchedCodecPipeline`` built from the same codecs.

    Parameters
    ----------
    fallback : zarr.core.codec_pipeline.BatchedCodecPipeline
        zarr's pipeline for the same codecs.

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> with fixedutf32.zarr.enabled():
    ...     arr = zarr.create_array({}, shape=(3,), chunks=(2,), dtype="<U2")
    ...     arr[:] = ["a", "bc", "d"]
    ...     arr[1:]
    array(['bc', 'd'], dtype='<U2')
    """

    def __init__(self, fallback):
        self.fallback = fallback

    def __repr__(self):
        return f"fixedutf32.zarr.CodecPipeline({self.fallback!r})"

    def __eq__(self, other):
        return type(other) is type(self) and other.fallback == self.fallback

    __hash__ = None

    def __iter__(self):
        return iter(self.fallback)

    @classmethod
    def from_codecs(cls, codecs):
        return cls(BatchedCodecPipeline.from_codecs(codecs))

    def evolve_from_array_spec(self, array_spec):
        return type(self)(self.fallback.evolve_from_array_spec(array_spec))

    @property
    def supports_partial_decode(self):
        return self.fallback.supports_partial_decode

    @property
    def supports_partial_encode(self):
        return self.fallback.supports_partial_encode

    def validate(self, *, shape, dtype, chunk_grid):
        self.fallback.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length, array_spec):
        return self.fallback.compute_encoded_size(byte_length, array_spec)

    async def decode(self, chunk_bytes_and_specs):
        return await self.fallback.decode(chunk_bytes_and_specs)

    async def encode(self, chunk_arrays_and_specs):
        return await self.fallback.encode(chunk_arrays_and_specs)

    async def read(self, batch_info, out, drop_axes=()):
        await self.fallback.read(batch_info, out, drop_axes)

    async def write(self, batch_info, value, drop_axes=()):
        await self.fallback.write(batch_info, value, drop_axes)


# --------------------------------------------------------------------------
# Switching it on and off

_CONFIG_KEYS = ("codecs.bytes", "codec_pipeline.path")
_ZARR_DEFAULTS = {"codecs.bytes": _ZARR_BYTES_CODEC_PATH, "codec_pipeline.path": _ZARR_PIPELINE_PATH}
_OURS = {"codecs.bytes": BYTES_CODEC_PATH, "codec_pipeline.path": PIPELINE_PATH}
# What enable() replaced, for disable() to put back.
_replaced = {}


def _registered_dtype():
    data_type_registry._lazy_load()
    return data_type_registry.contents.get(_DTYPE_NAME)


def enable():
    """Make zarr-python use fixedutf32 for fixed_length_utf32 arrays.

    Sets ``codecs.bytes`` to ``fixedutf32.zarr.BytesCodec`` and
    ``codec_pipeline.path`` to ``fixedutf32.zarr.CodecPipeline`` in
    ``zarr.config``, and registers :class:`StrictFixedLengthUTF32` for
    ``fixed_length_utf32`` in zarr's data-type registry.  Arrays opened
    afterwards use them (an array already open keeps its classes).
    Calling it again changes nothing.

    Returns
    -------
    None

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> fixedutf32.zarr.enable()
    >>> zarr.config.get("codec_pipeline.path")
    'fixedutf32.zarr.CodecPipeline'
    >>> fixedutf32.zarr.disable()
    >>> zarr.config.get("codec_pipeline.path")
    'zarr.core.codec_pipeline.BatchedCodecPipeline'
    """
    for key in _CONFIG_KEYS:
        current = zarr.config.get(key, None)
        if current != _OURS[key]:
            _replaced[key] = current
    dtype_cls = _registered_dtype()
    if dtype_cls is not StrictFixedLengthUTF32:
        _replaced["dtype"] = dtype_cls
    zarr.config.set({key: _OURS[key] for key in _CONFIG_KEYS})
    data_type_registry.register(_DTYPE_NAME, StrictFixedLengthUTF32)


def disable():
    """Undo :func:`enable`: zarr-python's own classes again.

    Each setting that names a fixedutf32 class goes back to what
    :func:`enable` found (zarr's default if it found none, or if the
    setting came from the environment), and zarr's ``FixedLengthUTF32``
    goes back into the data-type registry.  Settings that name other
    classes are left alone.

    Returns
    -------
    None

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> fixedutf32.zarr.disable()
    >>> zarr.config.get("codecs.bytes")
    'zarr.codecs.bytes.BytesCodec'
    """
    updates = {}
    for key in _CONFIG_KEYS:
        previous = _replaced.pop(key, None)
        if zarr.config.get(key, None) == _OURS[key]:
            updates[key] = previous if previous not in (None, _OURS[key]) else _ZARR_DEFAULTS[key]
    if updates:
        zarr.config.set(updates)
    previous_dtype = _replaced.pop("dtype", None)
    if _registered_dtype() is StrictFixedLengthUTF32:
        data_type_registry.register(_DTYPE_NAME, previous_dtype or _ZarrFixedLengthUTF32)


@contextlib.contextmanager
def enabled():
    """Use fixedutf32 within a ``with`` block; restore the previous state after.

    Yields
    ------
    None

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> with fixedutf32.zarr.enabled():
    ...     zarr.config.get("codecs.bytes")
    'fixedutf32.zarr.BytesCodec'
    >>> zarr.config.get("codecs.bytes")
    'zarr.codecs.bytes.BytesCodec'
    """
    dtype_cls = _registered_dtype()
    replaced = dict(_replaced)
    try:
        with zarr.config.set({key: _OURS[key] for key in _CONFIG_KEYS}):
            data_type_registry.register(_DTYPE_NAME, StrictFixedLengthUTF32)
            yield
    finally:
        data_type_registry.register(_DTYPE_NAME, dtype_cls)
        _replaced.clear()
        _replaced.update(replaced)
