"""``ArrayMetadata``: what a reader needs to decode the chunks of one array."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy

from .._source.grid import ChunkGrid
from ._codecs import _check_v2_codec, _copy_objects, _split_codecs
from ._dtype import FixedLengthUTF32, _check_endian
from ._grid import _as_shape, _check_chunk_size
from ._json import _fail, _is_json_int, _show


@dataclass(frozen=True)
class ArrayMetadata:
    """What a reader needs to decode the chunks of one array.

    Made by :func:`parse_array_metadata`, or by hand to write a store (then
    :meth:`to_json` gives the document). Frozen and compared field by field;
    not hashable, as it holds codec dicts.

    Attributes
    ----------
    zarr_format : {2, 3}
    shape : tuple of int
        Shape of the whole array.
    chunk_shape : tuple of int
        Shape of every chunk (edge chunks are stored at full size).
    data_type : FixedLengthUTF32
    endian : {"little", "big"}
        Byte order of the chunk data once ``codecs`` are undone.
    fill_value : str
        Value of elements in missing chunks; any ``str`` that fits, kept as a
        ``numpy.str_``.
    order : {"C", "F"}
        Memory order of the elements inside one chunk.
    codecs : tuple of dict
        Codecs to undo, in reverse, before :func:`fixedutf32.decode_chunk`.
        V3: the bytes-to-bytes codecs after ``bytes`` (``{"name", "configuration"}``
        objects). V2: ``(compressor,)`` (numcodecs ``{"id", ...}`` object) or ``()``.
    filters : tuple of dict
        V2 ``filters`` (applied before the compressor when writing); ``()`` for V3.
    chunk_key_encoding : {"default", "v2"}
        Default: "default" for V3, "v2" for V2 (the only one V2 has).
    separator : {"/", "."}
        Default: "/" for the "default" encoding, "." for "v2".

    Raises
    ------
    MetadataError
        When built by hand with a field that the metadata could not hold.
    """

    zarr_format: int
    shape: tuple[int, ...]
    chunk_shape: tuple[int, ...]
    data_type: FixedLengthUTF32
    endian: str = "little"
    fill_value: str = ""  # kept as a numpy.str_ (__post_init__)
    order: str = "C"
    codecs: tuple[Any, ...] = ()
    filters: tuple[Any, ...] = ()
    chunk_key_encoding: str | None = None
    separator: str | None = None

    def __post_init__(self) -> None:
        # Built by hand (to write a store) as well as by parse_array_metadata:
        # check every field once, so that to_json() always writes valid metadata.
        set_ = object.__setattr__
        if not _is_json_int(self.zarr_format) or self.zarr_format not in (2, 3):
            raise _fail("zarr_format", "2 or 3", self.zarr_format)
        shape = _as_shape(self.shape, "shape", minimum=0)
        chunks = _as_shape(self.chunk_shape, "chunk_shape", minimum=1)
        if len(chunks) != len(shape):
            raise _fail("chunk_shape", f"{len(shape)} dimensions like shape", chunks)
        set_(self, "shape", shape)
        set_(self, "chunk_shape", chunks)
        if not isinstance(self.data_type, FixedLengthUTF32):
            raise _fail("data_type", "a FixedLengthUTF32", repr(self.data_type))
        _check_chunk_size(chunks, self.data_type.length_bytes, "chunk_shape")
        _check_endian(self.endian)
        if not isinstance(self.order, str) or self.order not in ("C", "F"):
            raise _fail("order", '"C" or "F"', self.order)
        set_(self, "fill_value", numpy.str_(self.data_type.encode_fill_value(self.fill_value)))
        # deep copies: the frozen object must not change when the caller's dicts do
        codecs = _copy_objects(self.codecs, "codecs")
        filters = _copy_objects(self.filters, "filters")
        if self.zarr_format == 2:
            for key, codec in [("codecs[0]", c) for c in codecs] + [
                (f"filters[{i}]", f) for i, f in enumerate(filters)
            ]:
                _check_v2_codec(codec, key)
        if self.zarr_format == 3:
            _split_codecs(
                [{"name": "bytes", "configuration": {"endian": "little"}}, *codecs], self.data_type
            )
            if filters:
                raise _fail("filters", "none for zarr_format 3 (use codecs)", list(filters))
            encodings = {"default": "/", "v2": "."}
            if len(shape) <= 1:  # one axis: C and F are the same layout
                set_(self, "order", "C")
        else:
            if len(codecs) > 1:
                raise _fail("codecs", "at most one V2 compressor", list(codecs))
            encodings = {"v2": "."}
        if self.chunk_key_encoding is None:
            set_(self, "chunk_key_encoding", next(iter(encodings)))
        if not isinstance(self.chunk_key_encoding, str) or self.chunk_key_encoding not in encodings:
            raise _fail(
                "chunk_key_encoding", " or ".join(map(_show, encodings)), self.chunk_key_encoding
            )
        if self.separator is None:
            set_(self, "separator", encodings[self.chunk_key_encoding])
        if not isinstance(self.separator, str) or self.separator not in ("/", "."):
            raise _fail("separator", '"/" or "."', self.separator)
        set_(self, "codecs", codecs)
        set_(self, "filters", filters)

    @classmethod
    def _from_checked(cls, **fields: Any) -> ArrayMetadata:
        """Build from fields a parser has checked, skipping ``__post_init__``'s second round."""
        meta = object.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(meta, name, value)
        return meta

    def to_json(self) -> dict[str, Any]:
        """Return the ``zarr.json`` (V3) or ``.zarray`` (V2) document, a new dict.

        ``parse_array_metadata(meta.to_json()) == meta``. Order "F" is written
        as a V3 ``transpose`` codec reversing the axes.

        Examples
        --------
        >>> meta = ArrayMetadata(3, shape=(4,), chunk_shape=(2,),
        ...                      data_type=FixedLengthUTF32(8), endian="big",
        ...                      codecs=({"name": "gzip", "configuration": {"level": 1}},))
        >>> meta.to_json()["codecs"]
        [{'name': 'bytes', 'configuration': {'endian': 'big'}}, {'name': 'gzip', ...}]
        >>> ArrayMetadata(2, (4,), (2,), FixedLengthUTF32(8), fill_value="x").to_json()["dtype"]
        '<U2'
        """
        fill = self.data_type.encode_fill_value(self.fill_value)
        if self.zarr_format == 2:
            return {
                "zarr_format": 2,
                "shape": list(self.shape),
                "chunks": list(self.chunk_shape),
                "dtype": self.data_type.to_v2(self.endian),
                "fill_value": fill,
                "order": self.order,
                "compressor": copy.deepcopy(self.codecs[0]) if self.codecs else None,
                "filters": copy.deepcopy(list(self.filters)) or None,
                "dimension_separator": self.separator,
            }
        codecs = [{"name": "bytes", "configuration": {"endian": self.endian}}]
        codecs += copy.deepcopy(list(self.codecs))
        if self.order == "F" and len(self.shape) > 1:
            axes = list(range(len(self.shape)))[::-1]
            codecs.insert(0, {"name": "transpose", "configuration": {"order": axes}})
        return {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": self.data_type.to_json(),
            "chunk_grid": {
                "name": "regular",
                "configuration": {"chunk_shape": list(self.chunk_shape)},
            },
            "chunk_key_encoding": {
                "name": self.chunk_key_encoding,
                "configuration": {"separator": self.separator},
            },
            "fill_value": fill,
            "codecs": codecs,
            "attributes": {},
        }

    @cached_property
    def grid(self) -> ChunkGrid:
        """The chunk grid: keys both ways, regions, coordinates (the chunk-source layer's).

        Examples
        --------
        >>> ArrayMetadata(3, (5, 4), (2, 2), FixedLengthUTF32(8)).grid.parse_key("c/2/1")
        (2, 1)
        """
        return ChunkGrid(
            self.shape,
            self.chunk_shape,
            "v2" if self.chunk_key_encoding == "v2" else "default",
            "." if self.separator == "." else "/",
            "F" if self.order == "F" else "C",
        )

    @property
    def grid_shape(self) -> tuple[int, ...]:
        """Number of chunks along each axis (edge chunks included).

        Examples
        --------
        >>> ArrayMetadata(3, (5, 4), (2, 2), FixedLengthUTF32(8)).grid_shape
        (3, 2)
        """
        return self.grid.grid_shape

    def chunk_indices(self) -> Iterator[tuple[int, ...]]:
        """Return an iterator over the grid index of every chunk, in C order.

        Lazy: each index is made when asked for, so a grid of 10**12 chunks
        costs no memory up front.

        Returns
        -------
        iterator of tuple of int
            ``()`` once for a zero-dimensional array; nothing when a
            dimension is 0.

        Examples
        --------
        >>> list(ArrayMetadata(3, (3, 4), (2, 2), FixedLengthUTF32(8)).chunk_indices())
        [(0, 0), (0, 1), (1, 0), (1, 1)]
        """
        return self.grid.indices()

    def chunk_key(self, index: Sequence[int]) -> str:
        """Return the store key of the chunk at grid ``index``.

        Parameters
        ----------
        index : sequence of int
            The chunk's position in the chunk grid.

        Returns
        -------
        str
            ``"c/1/0"`` for the V3 ``default`` encoding, ``"1.0"`` for ``v2``
            (with the array's separator); ``"c"`` and ``"0"`` for 0-d arrays.

        Examples
        --------
        >>> meta = parse_array_metadata({
        ...     "zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": "<U3",
        ...     "fill_value": "", "order": "C", "compressor": None, "filters": None})
        >>> meta.chunk_key((1, 0))
        '1.0'
        """
        return self.grid.key(index)

    def chunk_region(self, index: Sequence[int]) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
        """Where the chunk at grid ``index`` goes in the array.

        Parameters
        ----------
        index : sequence of int
            As for :meth:`chunk_key`.

        Returns
        -------
        (tuple of slice, tuple of slice)
            The slices of the array the chunk covers, and the slices of the
            decoded chunk to put there: edge chunks are stored at full
            ``chunk_shape`` and their part outside the array is cut off.

        Examples
        --------
        >>> meta = ArrayMetadata(3, (5,), (2,), FixedLengthUTF32(8))
        >>> meta.chunk_region((2,))
        ((slice(4, 5, None),), (slice(0, 1, None),))
        """
        return self.grid.region(index)

    def decode_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`fixedutf32.decode_chunk` on one chunk.

        Returns
        -------
        dict
            A new dict: ``length_bytes``, ``endian``, ``shape`` (the chunk
            shape) and ``order``, for ``decode_chunk(data, **kwargs)``.

        Examples
        --------
        >>> meta = parse_array_metadata({
        ...     "zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": ">U3",
        ...     "fill_value": "", "order": "F", "compressor": None, "filters": None})
        >>> meta.decode_kwargs()
        {'length_bytes': 12, 'endian': 'big', 'shape': (2, 2), 'order': 'F'}
        """
        return {
            "length_bytes": self.data_type.length_bytes,
            "endian": self.endian,
            "shape": self.chunk_shape,
            "order": self.order,
        }
