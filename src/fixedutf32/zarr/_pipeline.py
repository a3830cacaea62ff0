"""The codec pipeline: fixed_length_utf32 chunks read and written by fixedutf32 itself."""
# Each chunk is read into a buffer of the reading thread's, validated while in cache and
# converted straight into the result (a failing chunk leaves it as it was); the work is in
# _read, _writing and _plan. Everything else goes to the fallback pipeline.

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Self, cast

import numpy as np
from zarr import config
from zarr.abc.codec import CodecPipeline as _ZarrCodecPipeline
from zarr.codecs import ShardingCodec
from zarr.dtype import FixedLengthUTF32 as _ZarrFixedLengthUTF32

from .. import metadata as _rules
from ..errors import InvalidChunkCodePointError, UncheckedChunksWarning
from . import _compat
from ._codec import BytesCodec
from ._compat import ArrayV2Metadata, ArrayV3Metadata, BatchedCodecPipeline
from ._compat import ChunkStatus as GetResult
from ._jobs import jobs_of
from ._naming import ChunkNames
from ._plan import ChunkPlan, Declined, ShardPlan, plan_for
from ._read import BatchRead
from ._settle import here_or_thread, settled, settled_map
from ._shard_writing import ShardWrite, check_value
from ._writing import BatchWrite

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

__all__ = ["BATCHED_PATH", "FALLBACK_KEY", "CodecPipeline"]

#: The zarr configuration key that names the pipeline for the arrays this one
#: does not handle (``ZARR_FIXEDUTF32__FALLBACK_PIPELINE`` in the environment).
FALLBACK_KEY = "fixedutf32.fallback_pipeline"
BATCHED_PATH = "zarr.core.codec_pipeline.BatchedCodecPipeline"
# Values up to this size are checked on the event loop's thread (about a
# millisecond): a thread hop costs as much.
_INLINE_CHECK_BYTES = 4 * 1024 * 1024


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


def _checked_by_codec(codecs: Iterable[Any]) -> bool:
    """Whether every bytes codec of a chain (inside shards too) is fixedutf32's."""
    for codec in codecs:
        if isinstance(codec, ShardingCodec):
            return True  # zarr hands the chunks inside shards back to this pipeline class
        if _compat.V2Codec is not None and isinstance(codec, _compat.V2Codec):
            return False  # V2 arrays have no bytes codec
        if type(codec).__name__ == "BytesCodec" and not isinstance(codec, BytesCodec):
            return False
    return True


class CodecPipeline(_ZarrCodecPipeline):
    """A zarr codec pipeline that reads and writes fixed_length_utf32 arrays itself.

    For arrays of the ``fixed_length_utf32`` data type (Zarr V3) and Zarr V2
    ``<U``/``>U`` arrays, with the codecs ``[transpose?] bytes
    [compressors...]`` (V3, a transpose that keeps C order or reverses the
    axes) or no filters and any numcodecs compressor (V2), it reads chunks
    into the result and decodes them there with fixedutf32's kernels
    (validated, both byte orders), and encodes and validates chunks on
    write.  Sharded arrays are read shard by shard, through each shard's
    index; shards a write covers whole are encoded here into one buffer
    each (index included) and stored with one write, while shards written
    in part go to zarr's ``BatchedCodecPipeline``, which reads, merges and
    rewrites them (the chunks inside shards come back here).

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
        self._plan = plan_for(self.codecs)
        self._names = ChunkNames(array_metadata)
        self._warned = False

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

    # ---- reading and writing -------------------------------------------

    def _plan_for(self, batch_info: list[Any], array: Any) -> ChunkPlan | ShardPlan | None:
        """The plan for this batch (``array``: read's ``out`` or write's ``value``), or None."""
        plan = self._plan
        if not batch_info or not isinstance(batch_info[0][1].dtype, _ZarrFixedLengthUTF32):
            return None
        if isinstance(plan, Declined):
            if not self._warned and not _checked_by_codec(self.codecs):
                self._warned = True
                warnings.warn(
                    f"fixedutf32.zarr.CodecPipeline leaves this array to zarr ({plan.reason}); "
                    "its chunks are not checked: configure codecs.bytes = "
                    "fixedutf32.zarr.BytesCodec (V3) to check them",
                    UncheckedChunksWarning,
                    stacklevel=4,
                )
            return None
        if type(array.as_ndarray_like()) is not np.ndarray:
            return None  # a GPU buffer, say: zarr's pipeline and the codec
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
            and the array index).
        fixedutf32.ChunkSizeError, fixedutf32.CorruptChunkError
            For a chunk whose size, frame or shard index is not what the
            array's metadata allows (checked before anything is inflated),
            or a local chunk file that is not a regular file.
        On any of these, that chunk's part of ``out`` is as it was; other
        chunks may have been written to ``out`` by then, as with zarr's
        pipeline.

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
        out_np = cast("np.ndarray[Any, Any]", out.as_ndarray_like())  # _plan_for checked it
        jobs = jobs_of(batch_info, plan, out_np, drop_axes)
        return await BatchRead(plan, self._names, out_np, drop_axes, len(jobs)).run(jobs)

    async def write(
        self, batch_info: WriteBatch, value: NDBuffer, drop_axes: tuple[int, ...] = ()
    ) -> None:
        """Encode the chunks ``value`` covers and write them to the store.

        Partial chunks are read, merged and written back; chunks that end up
        equal to the fill value are deleted unless the array's
        ``write_empty_chunks`` is set, as zarr's pipeline does.  Of a
        sharded array, each shard the selection covers whole is encoded
        into one buffer, index included, and stored with one write (inner
        chunks of fill values left out, the same way); shards written in
        part go to zarr's sharding codec.

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
            holding an invalid code unit); nothing is written for that chunk
            (of a sharded array with a shard written whole: for any shard).

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
        if isinstance(plan, ShardPlan):
            await self._write_shards(plan, batch_info, value, drop_axes)
            return
        if plan is None:
            await self._hand_on(self.fallback.write, batch_info, value, drop_axes)
            return
        value_np = cast("np.ndarray[Any, Any]", value.as_ndarray_like())  # _plan_for checked it
        jobs = jobs_of(batch_info, plan, None, drop_axes)
        writer = BatchWrite(plan, self._names, value_np, drop_axes)
        # every element checked before any chunk is written: a refused write
        # leaves the store as it was
        await here_or_thread(value_np.nbytes <= _INLINE_CHECK_BYTES, writer.check_value, jobs)
        await writer.run(jobs)

    async def _write_shards(
        self, plan: ShardPlan, batch_info: list[Any], value: NDBuffer, drop_axes: tuple[int, ...]
    ) -> None:
        """Whole shards written here, the others merged by zarr's sharding codec."""
        # every element checked first (if a shard is whole): a bad one leaves every shard as it was
        value_np = cast("np.ndarray[Any, Any]", value.as_ndarray_like())  # _plan_for checked it
        jobs = jobs_of(batch_info, plan, None, drop_axes)
        writer = ShardWrite(plan, self._names, value_np)
        whole = [job for job in jobs if writer.takes(job, drop_axes)]
        if not whole:
            await self._hand_on(self.fallback.write, batch_info, value, drop_axes)
            return
        small = value_np.nbytes <= _INLINE_CHECK_BYTES
        await here_or_thread(small, check_value, value_np, jobs, plan, self._names)
        taken = {job.position for job in whole}
        rest = [item for position, item in enumerate(batch_info) if position not in taken]
        if rest:
            await settled(
                writer.run(whole), self._hand_on(self.fallback.write, rest, value, drop_axes)
            )
        else:
            await writer.run(whole)

    # ---- shards handed to zarr -----------------------------------------

    def _is_sharded_utf32(self, batch_info: Any) -> bool:
        return (
            bool(batch_info)
            and any(isinstance(codec, ShardingCodec) for codec in self.codecs)
            and isinstance(batch_info[0][1].dtype, _ZarrFixedLengthUTF32)
        )

    async def _by_shard(
        self, method: Any, batch_info: Any, array: Any, drop_axes: Any
    ) -> list[GetResult]:
        """zarr's pipeline one shard at a time, so that an error can name its shard."""
        # the chunks inside a shard come to a pipeline of this class, which does not know the
        # shard's key; returns method's statuses for each shard in order (none from zarr 3.1)

        async def one(item: Any) -> Any:
            try:
                return await method([item], array, drop_axes)
            except InvalidChunkCodePointError as exc:
                if exc.chunk_key is not None:
                    raise
                getter, spec = item[0], item[1]
                key = getattr(getter, "path", None)
                raise self._names.in_shard(key, getter, tuple(spec.shape), exc) from None

        results: list[Any] = [None] * len(batch_info)

        async def into(position: int) -> None:
            results[position] = await one(batch_info[position])

        await settled_map(into, range(len(batch_info)), config.get("async.concurrency"))
        return [status for result in results for status in (result or ())]


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
    """check_codecs on a chain (a sharding codec as ``bytes`` there), then on its inner chain."""
    # where: the prefix of the error's key ("codecs[0].configuration." inside a shard)
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
