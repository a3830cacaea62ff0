"""The codec pipeline: fixed_length_utf32 chunks decoded straight into the result.

zarr's ``BatchedCodecPipeline`` decodes each chunk into an array of its own
and then copies it into the result (``out[selection] = chunk``).  Here a
chunk that the selection covers whole, and whose place in the result is one
contiguous block laid out like the chunk, is read (or decompressed) into
that block and decoded there in place: its bytes land once.  Other chunks
go through a scratch buffer.  Reading local files, decompressing and
large chunks run on zarr's thread pool (``threading.max_workers``) with the
GIL released, up to ``async.concurrency`` at a time; uncompressed chunks of
up to 4 MiB from other stores are decoded where they arrive, as a thread
hop would cost as much.  Everything this module does not handle goes to
zarr's own pipeline.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, Self, cast

import numcodecs
import numpy as np
from numcodecs.compat import ensure_bytes
from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
from zarr.abc.codec import CodecPipeline as _ZarrCodecPipeline
from zarr.codecs import BytesCodec as _ZarrBytesCodec
from zarr.codecs import TransposeCodec
from zarr.codecs.sharding import ShardingCodec
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.common import concurrent_map
from zarr.core.config import config
from zarr.core.indexing import is_scalar
from zarr.core.metadata import ArrayV2Metadata, ArrayV3Metadata
from zarr.dtype import FixedLengthUTF32 as _ZarrFixedLengthUTF32
from zarr.storage import LocalStore, StorePath

from .. import metadata as _rules
from .._checks import NATIVE_ENDIAN, byte_view, check_out_size, dtype_endian, unicode_dtype
from ..chunk import decode_chunk, encode_chunk, validate
from ..errors import InvalidCodePointError
from . import _compat
from ._codec import InvalidChunkCodePointError
from ._compat import MISSING, PRESENT, V2Codec
from ._compat import ChunkStatus as GetResult

if TYPE_CHECKING:
    from zarr.abc.codec import Codec
    from zarr.abc.store import ByteGetter, ByteSetter, Store
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer
    from zarr.core.dtype.wrapper import ZDType
    from zarr.core.indexing import SelectorTuple
    from zarr.core.metadata import ArrayMetadata

    # What zarr's Array hands read() and write(): per chunk, where it is
    # stored, its spec, the chunk and the result selections, and whether the
    # selection covers the whole chunk.
    ReadBatch = Iterable[tuple[ByteGetter, ArraySpec, SelectorTuple, SelectorTuple, bool]]
    WriteBatch = Iterable[tuple[ByteSetter, ArraySpec, SelectorTuple, SelectorTuple, bool]]

#: The zarr configuration key that names the pipeline for the arrays this one
#: does not handle (``ZARR_FIXEDUTF32__FALLBACK_PIPELINE`` in the environment).
FALLBACK_KEY = "fixedutf32.fallback_pipeline"
BATCHED_PATH = "zarr.core.codec_pipeline.BatchedCodecPipeline"

_UINT8 = np.dtype(np.uint8)
# Local chunk files are read and decoded in blocks of this size, which stay in L2.
_BLOCK_BYTES = 256 * 1024
# Uncompressed chunks up to this size are decoded and encoded on the event
# loop's thread: checking and swapping them takes about as long as handing the
# work to another thread would.
_INLINE_BYTES = 4 * 1024 * 1024


def _fallback_class() -> type[_ZarrCodecPipeline]:
    """The codec pipeline class configured for the arrays this pipeline hands on."""
    path = config.get(FALLBACK_KEY, None) or BATCHED_PATH
    cls = _compat.pipeline_class(path)
    if issubclass(cls, CodecPipeline):
        raise ValueError(
            f"zarr configuration {FALLBACK_KEY}: expected a pipeline other than "
            f"fixedutf32.zarr.CodecPipeline (which hands arrays on to it), got {path!r}"
        )
    return cls


def _numcodecs_decoder(codec: Any) -> Any:
    """The numcodecs codec that undoes a zarr bytes-to-bytes codec, or None.

    numcodecs' ``decode(buf, out=...)`` writes into the result's memory;
    zarr's own codec objects always return a new buffer.
    """
    spec = codec.to_dict()
    name = spec.get("name", "")
    conf = dict(spec.get("configuration") or {})
    if name == "gzip":
        return numcodecs.GZip(level=conf.get("level", 5))
    if name == "zstd":
        return numcodecs.Zstd(level=conf.get("level", 0), checksum=conf.get("checksum", False))
    if name == "blosc":
        return numcodecs.Blosc()  # decoding reads everything from the frame header
    if name.startswith("numcodecs."):
        try:
            return numcodecs.get_codec({"id": name[len("numcodecs.") :], **conf})
        except (KeyError, ValueError, TypeError):
            return None
    return None


def _zstd_size(data: Any) -> Any:
    """The content size a zstd frame header declares, or None."""
    head = bytes(memoryview(data)[:18])
    if len(head) < 6 or head[:4] != b"\x28\xb5\x2f\xfd":
        return None
    flags = head[4]
    single_segment = flags >> 5 & 1
    start = 5 + (not single_segment) + (0, 1, 2, 4)[flags & 3]
    width = (single_segment, 2, 4, 8)[flags >> 6]
    if not width or len(head) < start + width:
        return None
    return int.from_bytes(head[start : start + width], "little") + (256 if width == 2 else 0)


def _prefix_size(offset: Any) -> Any:
    """The size a compressor writes as a little-endian uint32 at ``offset``."""

    def size(data: Any) -> Any:
        head = bytes(memoryview(data)[offset : offset + 4])
        return int.from_bytes(head, "little") if len(head) == 4 else None

    return size


# numcodecs codecs whose output size can be read from their header: these
# decompress straight into the result.  The others decompress into a buffer
# of their own first, as numcodecs would let a short frame leave the rest of
# the result as it was.
_DECLARED_SIZE = {"zstd": _zstd_size, "blosc": _prefix_size(4), "lz4": _prefix_size(0)}


class _Plan:
    """How to turn the stored bytes of one array's chunks into elements.

    Built once per pipeline from its codecs; ``None`` stands for a chain
    this pipeline leaves to zarr.
    """

    __slots__ = ("bb_codecs", "compressor", "decoders", "endian", "order", "zarr_format")

    def __init__(
        self,
        zarr_format: Any,
        order: Any,
        endian: Any,
        bb_codecs: Any,
        decoders: Any,
        compressor: Any,
    ) -> None:
        self.zarr_format = zarr_format
        self.order = order  # element order of the stored chunk, or None: the spec's (V2)
        self.endian = endian  # None: the data type's (V2)
        self.bb_codecs = bb_codecs  # zarr codec objects (V3)
        self.decoders = decoders  # numcodecs equivalents, or None if one has none
        self.compressor = compressor  # numcodecs codec (V2) or None

    @classmethod
    def from_codecs(cls, codecs: Iterable[Codec]) -> _Plan | None:
        codecs = list(codecs)
        aa = [c for c in codecs if isinstance(c, ArrayArrayCodec)]
        bb = [c for c in codecs if isinstance(c, BytesBytesCodec)]
        ab = next((c for c in codecs if isinstance(c, ArrayBytesCodec)), None)
        if V2Codec is not None and isinstance(ab, V2Codec):
            if aa or bb or ab.filters:
                return None
            return cls(2, None, None, (), (), ab.compressor)
        if not isinstance(ab, _ZarrBytesCodec) or ab.endian is None or len(aa) > 1:
            return None
        order = "C"
        if aa:
            if not isinstance(aa[0], TransposeCodec):
                return None
            perm = tuple(aa[0].order)
            if perm == tuple(range(len(perm)))[::-1] and len(perm) > 1:
                order = "F"
            elif perm != tuple(range(len(perm))):
                return None
        decoders = tuple(_numcodecs_decoder(c) for c in bb)
        if any(d is None for d in decoders):
            decoders = None  # type: ignore[assignment]
        return cls(3, order, _compat.endian_name(ab.endian), tuple(bb), decoders, None)

    def chunk_layout(self, spec: Any) -> tuple[int, str, str]:
        """(length_bytes, endian, order) of the stored chunks of ``spec``."""
        dtype = spec.dtype
        if self.zarr_format == 2:
            return dtype.item_size, dtype.endianness, spec.order
        return dtype.item_size, self.endian, self.order

    @property
    def raw(self) -> bool:
        return not self.bb_codecs and self.compressor is None

    @property
    def decompresses_in_thread(self) -> bool:
        return self.compressor is not None or (self.bb_codecs and self.decoders is not None)

    def decompress(self, data: Any, out: Any = None) -> Any:
        """Undo the compression of ``data``: into ``out`` when the frame declares
        exactly its size (then ``out`` is returned), else into a new buffer."""
        decoders = (self.compressor,) if self.compressor is not None else self.decoders[::-1]
        for decoder in decoders[:-1]:
            data = decoder.decode(data)
        last = decoders[-1]
        if out is not None:
            size = _DECLARED_SIZE.get(getattr(last, "codec_id", None))  # type: ignore[arg-type]
            if size is not None and size(data) == out.nbytes:
                last.decode(data, out=out)
                return out
        return last.decode(data)


def _fill_value(spec: Any) -> Any:
    # zarr V2 metadata may hold a null fill value; zarr reads it as the default
    return spec.dtype.default_scalar() if spec.fill_value is None else spec.fill_value


def _store_key(getter: object) -> str | None:
    return getattr(getter, "path", None)


def _local_file(getter: object) -> str | None:
    """The path of a chunk in a LocalStore, or None for any other store."""
    if type(getter) is StorePath and isinstance(getter.store, LocalStore):
        return os.path.join(getter.store.root, getter.path)
    return None


def _plain_slices(selection: object) -> bool:
    return type(selection) is tuple and all(
        type(s) is slice and s.step in (None, 1) for s in selection
    )


def _whole_chunk(chunk_selection: Any, out_selection: Any, is_complete: Any, drop_axes: Any) -> Any:
    """Whether a chunk maps whole, in order, onto a block of the result (or value)."""
    return (
        is_complete
        and not drop_axes
        and _plain_slices(chunk_selection)
        and _plain_slices(out_selection)
    )


def _block(array: Any, selection: Any) -> Any:
    """``array[selection]`` for a tuple of slices, always a view.

    Indexing a 0-d array with ``()`` gives a NumPy scalar, a copy; the
    trailing ``...`` keeps it a 0-d view of the array's memory.
    """
    return array[(*selection, Ellipsis)]


def _direct_target(
    out_np: Any,
    spec: Any,
    chunk_selection: Any,
    out_selection: Any,
    is_complete: Any,
    drop_axes: Any,
    order: Any,
) -> Any:
    """The flat bytes of ``out`` where a whole chunk goes, if they are one block laid out
    like the stored chunk; else None."""
    if not _whole_chunk(chunk_selection, out_selection, is_complete, drop_axes):
        return None
    view = _block(out_np, out_selection)
    if view.shape != spec.shape:
        return None
    if order == "C" or view.ndim <= 1:
        if not view.flags.c_contiguous:
            return None
        flat = view.reshape(-1)
    else:
        if not view.flags.f_contiguous:
            return None
        flat = view.T.reshape(-1)
    if not flat.flags.writeable:
        return None
    return flat.view(_UINT8)


def _decode_into(src: Any, target: Any, length_bytes: Any, stored: Any, wanted: Any) -> None:
    """Check the elements of ``src`` and write them to ``target`` in ``wanted`` byte order.

    ``src`` holds them in ``stored`` byte order and may be ``target`` itself
    (in place).  zarr's result is native except for Zarr V2 arrays of the
    other byte order, whose result keeps the stored order.
    """
    if src is not target:
        src, nbytes = byte_view(src, "chunk")
        check_out_size(
            target.nbytes,
            nbytes,
            f"a chunk of {target.nbytes // length_bytes} elements of length_bytes {length_bytes}",
        )
    if wanted == NATIVE_ENDIAN:
        decode_chunk(src, length_bytes, endian=stored, out=target)
    elif stored == wanted:
        validate(src, length_bytes, endian=stored)
        if src is not target:
            target[:] = np.frombuffer(src, _UINT8)
    else:
        units = np.frombuffer(src, unicode_dtype(length_bytes // 4))
        encode_chunk(units, length_bytes, endian=wanted, out=target)


def _shares(items: Any, limit: Any) -> Any:
    """Split ``items`` into at most as many runs as zarr lets run at once."""
    if not items:
        return []
    workers = config.get("threading.max_workers", None) or os.cpu_count() or 1
    n = max(1, min(len(items), limit or len(items), workers))
    size = -(-len(items) // n)
    return [items[i : i + size] for i in range(0, len(items), size)]


def _read_file_into(path: Any, target: Any, length_bytes: Any, stored: Any, wanted: Any) -> Any:
    """Read a raw chunk file into ``target`` and decode it there, block by block.

    Each block is decoded while it is still in the cache, so the chunk's
    bytes cross memory once.  Returns True when done, False if there is no
    such file, None if the file is not the target's size (the caller then
    reads it the ordinary way, which reports the mismatch).  On a bad code
    unit the blocks before it stay decoded; the error's ``index`` counts
    from the start of the chunk.
    """
    try:
        f = open(path, "rb", buffering=0)  # noqa: SIM115 - only the open is guarded; `with f` below
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return False
    with f:
        size = os.fstat(f.fileno()).st_size
        if size != target.nbytes:
            return None
        step = max(1, _BLOCK_BYTES // length_bytes) * length_bytes
        view = memoryview(target)
        for start in range(0, size, step):
            block = view[start : start + step]
            done = 0
            while done < len(block):
                n = f.readinto(block[done:])
                if not n:
                    return None  # the file shrank while being read
                done += n
            try:
                _decode_into(block, block, length_bytes, stored, wanted)
            except InvalidCodePointError as exc:
                raise InvalidCodePointError(
                    exc.index + start // length_bytes, exc.position, exc.code_point
                ) from None
    return True


class CodecPipeline(_ZarrCodecPipeline):
    """A zarr codec pipeline that reads and writes fixed_length_utf32 arrays itself.

    For arrays of the ``fixed_length_utf32`` data type (Zarr V3) and Zarr V2
    ``<U``/``>U`` arrays, with the codecs ``[transpose?] bytes
    [compressors...]`` (V3, a transpose that keeps C order or reverses the
    axes) or no filters and any numcodecs compressor (V2), it reads chunks
    into the result and decodes them there with fixedutf32's kernels
    (validated, both byte orders), and encodes and validates chunks on
    write.  Sharded arrays of this data type go to zarr's
    ``BatchedCodecPipeline`` at the shard level (the chunks inside shards
    come back here).

    Every array of another data type goes to the *fallback* pipeline, built
    as zarr would build it: the class named by zarr's configuration key
    ``fixedutf32.fallback_pipeline`` (environment variable
    ``ZARR_FIXEDUTF32__FALLBACK_PIPELINE``), which :func:`fixedutf32.zarr.enable`
    sets to the pipeline that was configured before it (zarr's
    ``BatchedCodecPipeline`` when the key is unset).  Those arrays behave
    exactly as under that pipeline.

    Select it with ``zarr.config.set({"codec_pipeline.path":
    "fixedutf32.zarr.CodecPipeline"})``, ``ZARR_CODEC_PIPELINE__PATH``, or
    :func:`fixedutf32.zarr.enable`.

    Parameters
    ----------
    fallback : zarr codec pipeline
        The pipeline for the same codecs that handles what this one does
        not (a ``BatchedCodecPipeline`` for ``fixed_length_utf32`` arrays).
    array_metadata : zarr ArrayV3Metadata or ArrayV2Metadata, optional
        The array's metadata, when known: it lets errors give the array
        index of a bad element.

    Raises
    ------
    fixedutf32.InvalidCodePointError
        On read, for a chunk holding a surrogate or a value above U+10FFFF;
        on write, for such a value in the data (nothing is written for that
        chunk).  It is an :class:`InvalidChunkCodePointError` naming the
        chunk's store key and the element's array index.
    fixedutf32.MetadataError
        From :meth:`from_array_metadata_and_store`, for codecs the
        specification forbids with this data type.

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> with fixedutf32.zarr.enabled():
    ...     arr = zarr.create_array({}, shape=(3,), chunks=(2,), dtype="<U2")
    ...     arr[:] = ["a", "bc", "d"]
    ...     arr[1:]
    array(['bc', 'd'], dtype='<U2')
    """

    __module__ = "fixedutf32.zarr"

    def __init__(
        self, fallback: _ZarrCodecPipeline, array_metadata: ArrayMetadata | None = None
    ) -> None:
        self.fallback = fallback
        self.array_metadata = array_metadata
        # The array's codecs, or (from_codecs) those zarr's pipelines iterate
        # over, though its base class does not say so and zarrs-python's fails.
        self.codecs: tuple[Codec, ...] = tuple(
            _compat.codecs_of(array_metadata)
            if array_metadata is not None
            else cast("Iterable[Codec]", fallback)
        )
        self._plan = _Plan.from_codecs(self.codecs)

    def __repr__(self) -> str:
        return f"fixedutf32.zarr.CodecPipeline({self.fallback!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.fallback == self.fallback

    def __hash__(self) -> int:
        # as __eq__: the class, the fallback's class and the codecs decide (a
        # FusedCodecPipeline holds a transform that has no hash)
        return hash((type(self), type(self.fallback), self.codecs))

    def __iter__(self) -> Iterator[Codec]:
        return iter(self.codecs)

    def __getstate__(self) -> dict[str, Any]:
        return {"fallback": self.fallback, "array_metadata": self.array_metadata}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["fallback"], state["array_metadata"])  # type: ignore[misc]

    # ---- construction --------------------------------------------------

    @classmethod
    def from_codecs(cls, codecs: Iterable[Codec]) -> Self:
        """Build the pipeline for a list of codec objects.

        The fallback is the configured fallback pipeline's ``from_codecs``
        (see the class); :meth:`evolve_from_array_spec` makes it a
        ``BatchedCodecPipeline`` for chunks of ``fixed_length_utf32``.

        Parameters
        ----------
        codecs : iterable of zarr codecs

        Returns
        -------
        CodecPipeline

        Raises
        ------
        ValueError
            When ``fixedutf32.fallback_pipeline`` names no codec pipeline
            class, or names this one.

        Examples
        --------
        >>> from zarr.codecs import BytesCodec
        >>> CodecPipeline.from_codecs([BytesCodec(endian="big")])
        fixedutf32.zarr.CodecPipeline(BatchedCodecPipeline(...))
        """
        return cls(_fallback_class().from_codecs(list(codecs)))

    @classmethod
    def from_array_metadata_and_store(cls, array_metadata: ArrayMetadata, store: Store) -> Self:
        """Build the pipeline of an array; check its codecs against the specification.

        zarr calls this when it opens or creates an array.  For a
        ``fixed_length_utf32`` array the codecs (and those inside
        ``sharding_indexed``) are checked by
        :func:`fixedutf32.metadata.check_codecs`.  Arrays of other data
        types get the configured fallback pipeline, built as zarr builds
        its configured pipeline.

        Parameters
        ----------
        array_metadata : zarr ArrayV3Metadata or ArrayV2Metadata
        store : zarr.abc.store.Store
            Passed on to the fallback pipeline's constructor.

        Returns
        -------
        CodecPipeline

        Raises
        ------
        fixedutf32.MetadataError
            For a ``bytes`` codec without ``endian``, a variable-length
            codec (``vlen-utf8``, ``vlen-bytes``), another codec the
            specification forbids with this data type, or a fill value
            holding a lone surrogate; the message names the key
            (``codecs[1].configuration.endian``).
        ValueError
            When ``fixedutf32.fallback_pipeline`` names no codec pipeline
            class, or names this one.

        Examples
        --------
        >>> import zarr, fixedutf32.zarr
        >>> with fixedutf32.zarr.enabled():
        ...     arr = zarr.create_array({}, shape=(2,), dtype="<U2")
        >>> type(arr._async_array.codec_pipeline).__name__
        'CodecPipeline'
        """
        if not isinstance(array_metadata, (ArrayV3Metadata, ArrayV2Metadata)):
            raise NotImplementedError
        utf32 = isinstance(array_metadata.dtype, _ZarrFixedLengthUTF32)
        if utf32:
            _check_fill_value(array_metadata)
            if isinstance(array_metadata, ArrayV3Metadata):
                _check_v3_codecs(array_metadata)
        fallback_class = BatchedCodecPipeline if utf32 else _fallback_class()
        return cls(_compat.build_pipeline(fallback_class, array_metadata, store), array_metadata)

    def evolve_from_array_spec(self, array_spec: ArraySpec) -> Self:
        """The pipeline with each codec evolved for ``array_spec`` (as zarr's).

        Parameters
        ----------
        array_spec : zarr.core.array_spec.ArraySpec
            The shape, data type and fill value of the array's chunks.

        Returns
        -------
        CodecPipeline
            A new pipeline.

        Examples
        --------
        >>> from zarr.codecs import BytesCodec
        >>> from zarr.core.array_spec import ArraySpec, ArrayConfig
        >>> from zarr.core.buffer import default_buffer_prototype
        >>> from zarr.dtype import UInt8
        >>> spec = ArraySpec((2,), UInt8(), 0, ArrayConfig.from_dict({}),
        ...                  default_buffer_prototype())
        >>> p = CodecPipeline.from_codecs([BytesCodec()]).evolve_from_array_spec(spec)
        >>> p.fallback.array_bytes_codec.endian is None
        True
        """
        fallback = self.fallback
        if isinstance(array_spec.dtype, _ZarrFixedLengthUTF32) and (
            type(fallback) is not BatchedCodecPipeline
        ):
            # chunks of this type (inside shards, say): where this pipeline
            # hands them on, zarr's batched pipeline decodes each through the
            # bytes codec
            fallback = BatchedCodecPipeline.from_codecs(self.codecs)
        return type(self)(_compat.evolve_pipeline(fallback, array_spec), self.array_metadata)

    # ---- what zarr asks of every pipeline ------------------------------

    @property
    def supports_partial_decode(self) -> bool:
        """Whether zarr's pipeline for these codecs decodes parts of chunks.

        Only a sharding codec reads part of what is stored (the inner chunks
        a selection needs).

        Examples
        --------
        >>> from zarr.codecs import ShardingCodec
        >>> sharded = CodecPipeline.from_codecs([ShardingCodec(chunk_shape=(2,))])
        >>> sharded.supports_partial_decode
        True
        """
        return self.fallback.supports_partial_decode

    @property
    def supports_partial_encode(self) -> bool:
        """Whether zarr's pipeline for these codecs encodes parts of chunks.

        Examples
        --------
        >>> from zarr.codecs import BytesCodec
        >>> CodecPipeline.from_codecs([BytesCodec()]).supports_partial_encode
        False
        """
        return self.fallback.supports_partial_encode

    def validate(
        self,
        *,
        shape: tuple[int, ...],
        dtype: ZDType[Any, Any],
        chunk_grid: Any,  # zarr's ChunkGrid (3.1) or chunk-grid metadata (3.4)
    ) -> None:
        """Validate every codec against the array, as zarr's pipeline does.

        Parameters
        ----------
        shape : tuple of int
        dtype : zarr data type
        chunk_grid : zarr chunk grid
            What zarr passes: a ``ChunkGrid`` (zarr 3.1) or the array's
            chunk-grid metadata (zarr 3.4); handed on as it is.

        Returns
        -------
        None

        Raises
        ------
        ValueError, TypeError
            As zarr's codecs raise them.

        Examples
        --------
        >>> import zarr
        >>> from zarr.codecs import BytesCodec
        >>> arr = zarr.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
        >>> CodecPipeline.from_codecs([BytesCodec()]).validate(
        ...     shape=arr.shape, dtype=arr.metadata.data_type, chunk_grid=arr.metadata.chunk_grid)
        """
        self.fallback.validate(shape=shape, dtype=dtype, chunk_grid=chunk_grid)

    def compute_encoded_size(self, byte_length: int, array_spec: ArraySpec) -> int:
        """The encoded size of ``byte_length`` bytes, as zarr's pipeline computes it.

        Parameters
        ----------
        byte_length : int
        array_spec : zarr.core.array_spec.ArraySpec

        Returns
        -------
        int

        Raises
        ------
        NotImplementedError
            For codecs of variable output size (compressors).

        Examples
        --------
        >>> from zarr.codecs import BytesCodec
        >>> CodecPipeline.from_codecs([BytesCodec()]).compute_encoded_size(16, None)
        16
        """
        return self.fallback.compute_encoded_size(byte_length, array_spec)

    async def decode(
        self, chunk_bytes_and_specs: Iterable[tuple[Buffer | None, ArraySpec]]
    ) -> Iterable[NDBuffer | None]:
        """Decode a batch of chunks into chunk arrays (zarr's pipeline does it).

        The codecs run last to first: compressors, then the array-to-bytes
        codec, then array-to-array codecs such as ``transpose``.

        Parameters
        ----------
        chunk_bytes_and_specs : iterable of (Buffer or None, ArraySpec)
            The stored bytes of each chunk (``None`` for a chunk that is not
            stored) and the spec of the chunk they hold.

        Returns
        -------
        list of NDBuffer or None
            New arrays; with :class:`BytesCodec` configured,
            ``fixed_length_utf32`` chunks are validated.

        Examples
        --------
        >>> import asyncio
        >>> from zarr.codecs import BytesCodec
        >>> from zarr.core.array_spec import ArrayConfig, ArraySpec
        >>> from zarr.core.buffer import default_buffer_prototype
        >>> from zarr.dtype import FixedLengthUTF32
        >>> prototype = default_buffer_prototype()
        >>> spec = ArraySpec((2,), FixedLengthUTF32(length=1), "", ArrayConfig.from_dict({}),
        ...                  prototype)
        >>> raw = prototype.buffer.from_bytes("ab".encode("utf-32-le"))
        >>> pipeline = CodecPipeline.from_codecs([BytesCodec(endian="little")])
        >>> [chunk] = asyncio.run(pipeline.decode([(raw, spec)]))
        >>> chunk.as_numpy_array()
        array(['a', 'b'], dtype='<U1')
        """
        return await self.fallback.decode(chunk_bytes_and_specs)

    async def encode(
        self, chunk_arrays_and_specs: Iterable[tuple[NDBuffer | None, ArraySpec]]
    ) -> Iterable[Buffer | None]:
        """Encode a batch of chunk arrays (zarr's pipeline does it).

        Parameters
        ----------
        chunk_arrays_and_specs : iterable of (NDBuffer or None, ArraySpec)
            Each chunk's values and its spec.

        Returns
        -------
        list of Buffer or None
            New buffers.

        Examples
        --------
        >>> import asyncio, numpy as np
        >>> from zarr.codecs import BytesCodec
        >>> from zarr.core.array_spec import ArrayConfig, ArraySpec
        >>> from zarr.core.buffer import default_buffer_prototype
        >>> from zarr.dtype import FixedLengthUTF32
        >>> prototype = default_buffer_prototype()
        >>> spec = ArraySpec((2,), FixedLengthUTF32(length=1), "", ArrayConfig.from_dict({}),
        ...                  prototype)
        >>> chunk = prototype.nd_buffer.from_numpy_array(np.array(["a", "b"]))
        >>> pipeline = CodecPipeline.from_codecs([BytesCodec(endian="big")])
        >>> [raw] = asyncio.run(pipeline.encode([(chunk, spec)]))
        >>> raw.to_bytes() == "ab".encode("utf-32-be")
        True
        """
        return await self.fallback.encode(chunk_arrays_and_specs)

    # ---- reading -------------------------------------------------------

    def _plan_for(self, batch_info: list[Any], array: Any) -> _Plan | None:
        """The plan for this batch, or None when it goes to the fallback pipeline.

        ``array`` is the read's ``out`` or the write's ``value``.
        """
        plan = self._plan
        if (
            plan is None
            or not batch_info
            or type(array.as_ndarray_like()) is not np.ndarray
            or not isinstance(batch_info[0][1].dtype, _ZarrFixedLengthUTF32)
        ):
            return None
        return plan

    async def _hand_on(self, method: Any, batch_info: list[Any], array: Any, drop_axes: Any) -> Any:
        """The fallback's ``method`` (``read`` or ``write``) on the batch: what it returns."""
        if self._is_sharded_utf32(batch_info):
            return await self._by_shard(method, batch_info, array, drop_axes)
        return await method(batch_info, array, drop_axes)

    async def read(  # type: ignore[override,unused-ignore]  # zarr 3.1's read returns None
        self, batch_info: ReadBatch, out: NDBuffer, drop_axes: tuple[int, ...] = ()
    ) -> tuple[GetResult, ...]:
        """Read chunks from the store and decode them into ``out``.

        Parameters
        ----------
        batch_info : iterable of (ByteGetter, ArraySpec, chunk selection, out selection, bool)
            One entry per chunk, as zarr's ``Array`` makes them; the bool
            says whether the selection covers the whole chunk.
        out : NDBuffer
            The result; written in place.
        drop_axes : tuple of int
            Axes of the chunk selection that ``out`` does not have.

        Returns
        -------
        tuple of dict
            One ``{"status": "present"}`` or ``{"status": "missing"}`` per
            chunk, in the batch's order (zarr 3.2+ reads them to honour
            ``array.read_missing_chunks``; zarr 3.1 ignores them).  What the
            fallback pipeline returns when the batch goes there.

        Raises
        ------
        InvalidChunkCodePointError
            For a chunk holding a surrogate or a value above U+10FFFF (an
            :class:`fixedutf32.InvalidCodePointError` naming the chunk key
            and the array index).  Other chunks may have been written to
            ``out`` by then, as with zarr's pipeline.

        Examples
        --------
        zarr calls it for every read of an array that uses this pipeline:

        >>> import zarr, fixedutf32.zarr
        >>> with fixedutf32.zarr.enabled():
        ...     arr = zarr.create_array({}, shape=(4,), chunks=(2,), dtype=">U2",
        ...                             zarr_format=2, fill_value="-")
        ...     arr[1:3] = ["ab", "c"]
        ...     arr[:]            # chunk 0 partly, chunk 1 whole, straight into the result
        array(['-', 'ab', 'c', '-'], dtype='>U2')
        """
        batch_info = list(batch_info)
        plan = self._plan_for(batch_info, out)
        if plan is None:
            handed_on = await self._hand_on(self.fallback.read, batch_info, out, drop_axes)
            return tuple(handed_on or ())  # zarr 3.1's pipelines return None
        out_np = out.as_ndarray_like()
        statuses: list[GetResult] = [PRESENT] * len(batch_info)

        # Chunks in local files are read on a few threads, each looping over
        # its share: one thread hop per share rather than two per chunk.
        local: list[Any] = []
        other: list[Any] = []
        in_thread = plan.raw or plan.decompresses_in_thread
        for position, item in enumerate(batch_info):
            (local if in_thread and _local_file(item[0]) else other).append((position, item))

        async def read_one(position: int, item: Any) -> None:
            getter, spec, _, out_selection, _ = item
            layout, target = _chunk_target(plan, item, out_np, drop_axes)
            data = await getter.get(prototype=spec.prototype)
            if data is None:
                out_np[out_selection] = _fill_value(spec)
                statuses[position] = MISSING
                return
            if plan.bb_codecs and plan.decoders is None:
                data = await _zarr_decompress(plan, data, spec)
            args = (plan, data.as_numpy_array(), item, layout, target, out_np, drop_axes)
            if plan.decompresses_in_thread or len(data) > _INLINE_BYTES:
                await asyncio.to_thread(self._decode_chunk, *args)
            else:
                self._decode_chunk(*args)

        limit = config.get("async.concurrency")
        jobs: list[Awaitable[Any]] = [
            asyncio.to_thread(self._read_local_chunks, plan, share, out_np, drop_axes, statuses)
            for share in _shares(local, limit)
        ]
        if other:
            jobs.append(concurrent_map(other, read_one, limit))
        await asyncio.gather(*jobs)
        return tuple(statuses)

    def _read_local_chunks(
        self, plan: Any, items: Any, out_np: Any, drop_axes: Any, statuses: list[GetResult]
    ) -> None:
        """Read chunks from local files into the result (runs on a thread).

        ``items`` are (position in the batch, entry of the batch); a chunk
        that is not stored gets the fill value and ``MISSING`` at its position
        in ``statuses``.
        """
        wanted = dtype_endian(out_np.dtype)
        for position, item in items:
            getter, spec, _, out_selection, _ = item
            layout, target = _chunk_target(plan, item, out_np, drop_axes)
            path = _local_file(getter)
            if target is not None and plan.raw:
                length_bytes, endian, _ = layout
                with self._naming_chunk(getter, spec, layout):
                    found = _read_file_into(path, target, length_bytes, endian, wanted)
                if found is not None:
                    if not found:
                        out_np[out_selection] = _fill_value(spec)
                        statuses[position] = MISSING
                    continue
            try:
                with open(path, "rb") as f:  # type: ignore[arg-type]  # local items only
                    data = f.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                out_np[out_selection] = _fill_value(spec)
                statuses[position] = MISSING
                continue
            self._decode_chunk(
                plan, np.frombuffer(data, _UINT8), item, layout, target, out_np, drop_axes
            )

    def _decode_chunk(
        self,
        plan: Any,
        data: Any,
        item: Any,
        layout: Any,
        target: Any,
        out_np: Any,
        drop_axes: Any,
    ) -> None:
        """Decode the stored bytes of one chunk into the result (runs on a thread).

        ``item`` is the chunk's entry of the batch; ``layout`` and ``target``
        come from :func:`_chunk_target`.
        """
        getter, spec, chunk_selection, out_selection, _ = item
        length_bytes, endian, order = layout
        with self._naming_chunk(getter, spec, layout):
            if target is not None:
                wanted = dtype_endian(out_np.dtype)
                if plan.decompresses_in_thread:
                    data = plan.decompress(data, out=target)
                _decode_into(data, target, length_bytes, endian, wanted)
                return
            if plan.decompresses_in_thread:
                data = plan.decompress(data)
            chunk = decode_chunk(data, length_bytes, endian=endian, shape=spec.shape, order=order)
        part = chunk[chunk_selection]
        if drop_axes:
            part = part.squeeze(axis=drop_axes)
        out_np[out_selection] = part

    # ---- writing -------------------------------------------------------

    async def write(
        self, batch_info: WriteBatch, value: NDBuffer, drop_axes: tuple[int, ...] = ()
    ) -> None:
        """Encode the chunks ``value`` covers and write them to the store.

        Partial chunks are read, merged and written back; chunks that end up
        equal to the fill value are deleted unless the array's
        ``write_empty_chunks`` is set, as zarr's pipeline does.

        Parameters
        ----------
        batch_info : iterable of (ByteSetter, ArraySpec, chunk selection, value selection, bool)
            One entry per chunk the write touches; the bool says whether the
            selection covers the whole chunk (if not, the stored chunk is
            read and merged).
        value : NDBuffer
            The data to write; not modified.
        drop_axes : tuple of int
            Axes of the chunk selection that ``value`` lacks (integer indices).

        Raises
        ------
        InvalidChunkCodePointError
            For a string holding a lone surrogate (or a stored partial chunk
            holding an invalid code unit); nothing is written for that chunk.

        Examples
        --------
        zarr calls it for every write to an array that uses this pipeline:

        >>> import zarr, fixedutf32.zarr
        >>> with fixedutf32.zarr.enabled():
        ...     arr = zarr.create_array({}, shape=(2,), dtype="<U2")
        ...     arr[0] = "a\\ud800"
        Traceback (most recent call last):
        ...
        fixedutf32.zarr.InvalidChunkCodePointError: invalid code point U+D800 ... of chunk c/0 ...
        """
        batch_info = list(batch_info)
        plan = self._plan_for(batch_info, value)
        if plan is None:
            await self._hand_on(self.fallback.write, batch_info, value, drop_axes)
            return
        value_np = value.as_ndarray_like()

        async def write_one(*item: Any) -> None:
            setter, spec, chunk_selection, out_selection, is_complete = item
            layout = plan.chunk_layout(spec)
            chunk = None
            if _whole_chunk(
                chunk_selection, out_selection, is_complete, drop_axes
            ) and value_np.ndim == len(spec.shape):
                part = _block(value_np, out_selection)
                if part.shape == spec.shape:
                    chunk = part  # the whole chunk is in the value: encode it from there
            if chunk is None:
                existing = None
                if not is_complete:
                    existing = await setter.get(prototype=spec.prototype)
                    if existing is not None and plan.bb_codecs and plan.decoders is None:
                        existing = await _zarr_decompress(plan, existing, spec)
                chunk = await asyncio.to_thread(
                    self._merge, plan, existing, item, layout, value_np, drop_axes
                )
            skip_fill = not spec.config.write_empty_chunks
            with self._naming_chunk(setter, spec, layout):
                if chunk.nbytes <= _INLINE_BYTES:  # type: ignore[union-attr]
                    encoded = _encode_unless_fill(chunk, spec, layout, skip_fill)
                else:
                    encoded = await asyncio.to_thread(
                        _encode_unless_fill, chunk, spec, layout, skip_fill
                    )
            if encoded is None:
                await setter.delete()
                return
            data = await _compress(plan, encoded, spec, layout)
            await setter.set(data)

        await concurrent_map(batch_info, write_one, config.get("async.concurrency"))

    def _merge(
        self, plan: Any, existing: Any, item: Any, layout: Any, value_np: Any, drop_axes: Any
    ) -> Any:
        """The chunk after the write: the stored one (or fill) with ``value`` put in.

        ``item`` is the chunk's entry of the batch, as for :meth:`_decode_chunk`.
        """
        setter, spec, chunk_selection, out_selection, _ = item
        length_bytes, endian, order = layout
        dtype = spec.dtype.to_native_dtype()
        if existing is None:
            chunk = np.full(spec.shape, _fill_value(spec), dtype=dtype, order=order)
        else:
            data = existing.as_numpy_array()
            with self._naming_chunk(setter, spec, layout):
                if plan.decompresses_in_thread:
                    data = plan.decompress(data)
                chunk = decode_chunk(
                    data, length_bytes, endian=endian, shape=spec.shape, order=order
                )
            chunk = np.array(chunk, dtype=dtype, order=order)  # writable, own memory
        if chunk_selection == () or is_scalar(value_np, dtype):
            part = value_np
        else:
            part = value_np[out_selection]
            if drop_axes:
                part = part[
                    tuple(None if i in drop_axes else slice(None) for i in range(len(spec.shape)))
                ]
        chunk[chunk_selection] = part
        return chunk

    # ---- errors --------------------------------------------------------

    def _is_sharded_utf32(self, batch_info: Any) -> bool:
        return (
            bool(batch_info)
            and any(isinstance(codec, ShardingCodec) for codec in self.codecs)
            and isinstance(batch_info[0][1].dtype, _ZarrFixedLengthUTF32)
        )

    async def _by_shard(
        self, method: Any, batch_info: Any, array: Any, drop_axes: Any
    ) -> list[GetResult]:
        """zarr's pipeline one shard at a time, so that an error can name its shard.

        The chunks inside a shard come to a pipeline of this class, which
        knows where in the shard a bad element is but not the shard's key.
        Returns what ``method`` returns for each shard, in order (nothing
        from zarr 3.1's ``write`` and ``read``).
        """

        async def one(item: Any) -> Any:
            try:
                return await method([item], array, drop_axes)
            except InvalidChunkCodePointError as exc:
                if exc.chunk_key is not None:
                    raise
                getter, spec = item[0], item[1]
                key = _store_key(getter)
                coords = _chunk_coords(self.array_metadata, key)
                if key is None:  # a shard inside a shard: its place in the outer one
                    coords = getattr(getter, "chunk_coords", None)
                index = None
                if coords is not None and exc.array_index is not None:
                    index = tuple(c * n + i for c, n, i in zip(coords, spec.shape, exc.array_index))
                raise InvalidChunkCodePointError(
                    exc.index, exc.position, exc.code_point, key, index
                ) from None

        results = await concurrent_map(
            [(item,) for item in batch_info], one, config.get("async.concurrency")
        )
        return [status for result in results for status in (result or ())]

    def _naming_chunk(self, getter: Any, spec: Any, layout: Any) -> Any:
        return _ChunkErrors(self, getter, spec, layout)

    def _array_index(self, getter: Any, spec: Any, layout: Any, element: Any) -> Any:
        """The array coordinates of flat ``element`` of the chunk ``getter`` reads.

        Inside a shard (no store key) they are relative to the shard.
        """
        key = _store_key(getter)
        if key is None:
            coords = getattr(getter, "chunk_coords", None)  # zarr's shard reader
        else:
            coords = _chunk_coords(self.array_metadata, key)
        if coords is None or len(coords) != len(spec.shape):
            return None
        inner = np.unravel_index(element, spec.shape, order=layout[2]) if spec.shape else ()
        return tuple(int(c) * n + int(i) for c, n, i in zip(coords, spec.shape, inner))


class _ChunkErrors:
    """Turn an InvalidCodePointError into one that names the chunk."""

    __slots__ = ("getter", "layout", "pipeline", "spec")

    def __init__(self, pipeline: Any, getter: Any, spec: Any, layout: Any) -> None:
        self.pipeline = pipeline
        self.getter = getter
        self.spec = spec
        self.layout = layout

    def __enter__(self) -> _ChunkErrors:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> Literal[False]:
        if kind is None or not issubclass(kind, InvalidCodePointError):
            return False
        if isinstance(exc, InvalidChunkCodePointError):
            return False
        key = _store_key(self.getter)
        array_index = self.pipeline._array_index(self.getter, self.spec, self.layout, exc.index)
        raise InvalidChunkCodePointError(
            exc.index, exc.position, exc.code_point, key, array_index
        ) from None


def _chunk_target(plan: Any, item: Any, out_np: Any, drop_axes: Any) -> Any:
    """The chunk's layout, and the part of ``out_np`` it can be decoded into directly (or None)."""
    _, spec, chunk_selection, out_selection, is_complete = item
    layout = plan.chunk_layout(spec)
    target = _direct_target(
        out_np, spec, chunk_selection, out_selection, is_complete, drop_axes, layout[2]
    )
    return layout, target


def _chunk_coords(array_metadata: Any, key: Any) -> Any:
    """The grid coordinates of the chunk stored at ``key``, or None."""
    if array_metadata is None or key is None:
        return None
    ndim = len(array_metadata.shape)
    if isinstance(array_metadata, ArrayV3Metadata):
        encoding = array_metadata.chunk_key_encoding
        prefix = encoding.name == "default"
        separator = getattr(encoding, "separator", "/")
    else:
        prefix = False
        separator = array_metadata.dimension_separator
    parts = key.split("/")
    if separator == "/":
        parts = parts[len(parts) - ndim - prefix :] if ndim + prefix else parts[-1:]
    else:
        parts = parts[-1].split(separator)
    if prefix:
        parts = parts[1:]
    if ndim == 0:
        return ()
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        return None


def _check_fill_value(array_metadata: Any) -> None:
    """The fill value as parsed (zarr has cut a too-long one already): no lone surrogate."""
    fill = array_metadata.fill_value
    if isinstance(fill, str):
        _rules.FixedLengthUTF32(array_metadata.dtype.item_size).decode_fill_value(str(fill))


# What stands in for a sharding codec while the chain around it is checked.
_SHARD_STAND_IN = {"name": "bytes", "configuration": {"endian": "little"}}


def _check_v3_codecs(array_metadata: Any) -> None:
    """check_codecs on a V3 array's codecs, and on those inside its shards (nested too)."""
    dtype = _rules.FixedLengthUTF32(array_metadata.data_type.item_size)
    _check_chain([c.to_dict() for c in array_metadata.codecs], dtype, "")


def _check_chain(codecs: list[Any], dtype: _rules.FixedLengthUTF32, where: str) -> None:
    """check_codecs on one chain; a sharding codec in it is checked as a ``bytes``
    codec would be there, and its inner chain the same way.  ``where`` prefixes
    the keys of errors (``"codecs[0].configuration."`` inside a shard)."""
    sharding = [
        i
        for i, c in enumerate(codecs)
        if isinstance(c, dict) and c.get("name") == "sharding_indexed"
    ]
    chain = [(_SHARD_STAND_IN if i in sharding[:1] else c) for i, c in enumerate(codecs)]
    try:
        _rules.check_codecs(chain, dtype)
    except _rules.MetadataError as exc:
        raise _rules.MetadataError(f"{where}{exc}") from None
    if sharding:
        i = sharding[0]
        inner = codecs[i].get("configuration", {}).get("codecs", [])
        _check_chain(list(inner), dtype, f"{where}codecs[{i}].configuration.")


def _encode_unless_fill(chunk: Any, spec: Any, layout: Any, skip_fill: Any) -> Any:
    """The chunk's bytes, or None when ``skip_fill`` and every element is the fill value.

    zarr's pipeline compares the elements with the fill value
    (``NDBuffer.all_equal``); comparing their 4-byte code units instead
    gives the same answer much faster for a contiguous chunk.
    """
    if skip_fill and _equals_fill(chunk, _fill_value(spec)):
        return None
    length_bytes, endian, order = layout
    return encode_chunk(chunk, length_bytes, endian=endian, order=order)


def _equals_fill(chunk: Any, fill: Any) -> Any:
    if chunk.ndim == 0 or not (chunk.flags.c_contiguous or chunk.flags.f_contiguous):
        chunk = np.ascontiguousarray(chunk)
    units = np.array(fill, dtype=chunk.dtype).reshape(1).view(np.uint32)
    flat = chunk.reshape(-1, order="A").view(np.uint32)
    if flat.size and (flat[: units.size] != units).any():
        return False  # the usual answer, from the first element
    if not units.any():
        return not flat.any()
    return bool((flat.reshape(-1, units.size) == units).all())


async def _zarr_decompress(plan: Any, data: Any, spec: Any) -> Any:
    """Undo bytes-to-bytes codecs that have no numcodecs equivalent, with zarr's objects."""
    for codec in reversed(plan.bb_codecs):
        (data,) = await codec.decode([(data, spec)])
    return data


async def _compress(plan: Any, encoded: Any, spec: Any, layout: Any) -> Any:
    """The stored bytes of an encoded chunk: compressed as zarr would."""
    if plan.compressor is not None:
        length_bytes, endian, _ = layout
        # numcodecs compressors (blosc's shuffle) see the elements' size
        elements = encoded.view(_rules.FixedLengthUTF32(length_bytes).to_numpy(endian))
        data = await asyncio.to_thread(plan.compressor.encode, elements)
        return spec.prototype.buffer.from_bytes(ensure_bytes(data))
    data = spec.prototype.buffer.from_array_like(encoded)
    for codec in plan.bb_codecs:
        (data,) = await codec.encode([(data, spec)])
    return data
