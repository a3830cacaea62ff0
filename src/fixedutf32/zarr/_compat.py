"""What differs between the zarr-python releases supported (3.1.6 to 3.4.x); store requests."""
# Each difference is decided once, here, by looking for the feature, never by version number.
# Store requests: synchronous where the store does its IO so; on threads of their own,
# async.concurrency at once, where each may wait on a network (_store_kinds' rules).

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, TypeVar

import zarr.codecs
from zarr.core import codec_pipeline as _codec_pipeline
from zarr.core.array import create_codec_pipeline as _create_codec_pipeline
from zarr.core.codec_pipeline import BatchedCodecPipeline
from zarr.core.config import config
from zarr.core.indexing import is_scalar
from zarr.core.metadata import ArrayV2Metadata, ArrayV3Metadata

from .._store_kinds import does_sync_io, waits_per_request
from ._settle import settled_map

if TYPE_CHECKING:
    from zarr.abc.codec import Codec, CodecPipeline
    from zarr.abc.store import Store
    from zarr.core.array_spec import ArraySpec
    from zarr.core.metadata import ArrayMetadata

try:  # zarr's V2 codec wrapper; its module is private but has not moved since 3.0
    from zarr.codecs._v2 import V2Codec
except ImportError:  # pragma: no cover - every supported zarr has it
    V2Codec = None  # type: ignore[assignment,misc]

__all__ = [
    "ArrayV2Metadata",
    "ArrayV3Metadata",
    "BatchedCodecPipeline",
    "ChunkStatus",
    "MISSING",
    "PRESENT",
    "UNSPECIFIED_ENDIAN",
    "FusedCodecPipeline",
    "V2Codec",
    "build_pipeline",
    "each_request",
    "codecs_of",
    "endian_name",
    "evolve_pipeline",
    "fan_out",
    "is_scalar",
    "pipeline_class",
    "sync_store_path",
    "waits_per_request",
]


def endian_name(setting: object) -> str | None:
    """``BytesCodec.endian`` as ``"little"``, ``"big"`` or None."""
    # an Endian enum up to zarr 3.3 (the string is its .value), a plain string from 3.4
    name = getattr(setting, "value", setting)
    return None if name is None else str(name)


#: The byte order zarr's own ``BytesCodec.from_dict`` gives a codec whose JSON
#: has no ``endian``: the machine's (zarr 3.1) or None (zarr 3.4).
UNSPECIFIED_ENDIAN: Final = endian_name(zarr.codecs.BytesCodec.from_dict({"name": "bytes"}).endian)


class ChunkStatus(TypedDict):
    """What ``read()`` returns per chunk: zarr's ``GetResult`` (zarr >= 3.2), a TypedDict."""

    status: Literal["present", "missing"]


PRESENT: Final[ChunkStatus] = {"status": "present"}
MISSING: Final[ChunkStatus] = {"status": "missing"}


def sync_store_path(getter: object) -> bool:
    """Whether ``getter`` is a ``StorePath`` whose store :func:`does_sync_io` (``*_sync`` work)."""
    from zarr.storage import StorePath

    return type(getter) is StorePath and does_sync_io(getter.store)


_T = TypeVar("_T")
_pool: ThreadPoolExecutor | None = None
_pool_width = 0
_pool_lock = threading.Lock()


def _request_pool(width: int) -> ThreadPoolExecutor:
    """The threads that make the synchronous requests of :func:`fan_out`, at least ``width``."""
    global _pool, _pool_width
    with _pool_lock:
        if _pool is None or _pool_width < width:
            old, _pool = _pool, ThreadPoolExecutor(width, thread_name_prefix="fixedutf32-io")
            _pool_width = width
            if old is not None:
                old.shutdown(wait=False)  # its running calls finish; nothing new goes there
        return _pool


async def fan_out(call: Callable[[_T], object], items: Sequence[_T]) -> None:
    """``call(item)`` for every item on threads, ``async.concurrency`` of them at once."""
    # one item a thread, so a slow request holds up nothing else (zarr's threads: one per CPU)
    if not items:
        return
    limit = max(1, int(config.get("async.concurrency") or len(items)))
    pool = _request_pool(limit)
    loop = asyncio.get_running_loop()

    async def one(item: _T) -> None:
        await loop.run_in_executor(pool, call, item)

    await settled_map(one, items, limit)


async def each_request(
    jobs: Sequence[Any],
    here: Callable[[Any], object],
    one: Callable[[Any], Awaitable[object]],
    threads: bool = True,
) -> None:
    """``here(job)`` through :func:`fan_out`, or ``await one(job)``, for every job."""
    # fan_out where the store does synchronous IO and each request may wait (NFS, a wrapper)
    getter: Any = jobs[0].getter if jobs else None
    if threads and sync_store_path(getter) and waits_per_request(getter.store):
        await fan_out(here, jobs)
    else:
        await settled_map(one, jobs, config.get("async.concurrency"))


#: zarr's FusedCodecPipeline class (zarr >= 3.4), or None.
FusedCodecPipeline: Final[type[CodecPipeline] | None] = getattr(
    _codec_pipeline, "FusedCodecPipeline", None
)

# zarr 3.4's create_codec_pipeline evolves the pipeline it builds against the
# array's chunk spec; zarr 3.1's hands it over as built.
_EVOLVES_AT_CREATION = "evolve_from_array_spec" in _create_codec_pipeline.__code__.co_names
# zarr 3.4 threads the spec through spec-changing codecs when it evolves a
# pipeline (zarr.core.chunk_utils.evolve_codecs); zarr 3.1's
# BatchedCodecPipeline.evolve_from_array_spec hands from_codecs a generator
# that codecs_from_list reads twice, so it loses the codecs.
_THREADS_SPECS = importlib.util.find_spec("zarr.core.chunk_utils") is not None

_classes: dict[str, type[CodecPipeline]] = {}


def pipeline_class(path: str) -> type[CodecPipeline]:
    """The codec pipeline class a ``codec_pipeline.path`` value names; ValueError if none."""
    cls = _classes.get(path)
    if cls is not None:
        return cls
    from zarr.abc.codec import CodecPipeline

    module_name, _, name = path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(
            f"expected the path of a zarr codec pipeline class, got {path!r} ({exc})"
        ) from None
    if not (isinstance(found, type) and issubclass(found, CodecPipeline)):
        raise ValueError(
            f"expected the path of a zarr codec pipeline class, got {path!r}, which names {found!r}"
        )
    _classes[path] = found
    return found


def _creation_spec(metadata: ArrayMetadata) -> ArraySpec:
    """The chunk spec zarr 3.4's create_codec_pipeline evolves a new pipeline with."""
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    if isinstance(metadata, ArrayV2Metadata):
        shape, config = metadata.chunks, ArrayConfig.from_dict({"order": metadata.order})
        dtype = metadata.dtype
    else:
        chunk_shape = getattr(metadata.chunk_grid, "chunk_shape", None)
        shape = tuple(chunk_shape) if chunk_shape is not None else (1,) * len(metadata.shape)
        config, dtype = ArrayConfig.from_dict({}), metadata.data_type
    return ArraySpec(
        shape=shape,
        dtype=dtype,
        fill_value=metadata.fill_value,
        config=config,
        prototype=default_buffer_prototype(),
    )


def codecs_of(metadata: ArrayMetadata) -> list[Codec]:
    """The codecs a pipeline for ``metadata`` is built from (V2: zarr's V2Codec)."""
    if isinstance(metadata, ArrayV3Metadata):
        return list(metadata.codecs)
    return [V2Codec(filters=metadata.filters, compressor=metadata.compressor)]


def build_pipeline(cls: type[CodecPipeline], metadata: ArrayMetadata, store: Store) -> Any:
    """A pipeline of class ``cls`` for an array, as zarr's ``create_codec_pipeline`` builds it."""
    try:
        return cls.from_array_metadata_and_store(array_metadata=metadata, store=store)
    except NotImplementedError:
        pass
    pipeline = cls.from_codecs(codecs_of(metadata))
    if _EVOLVES_AT_CREATION:
        pipeline = pipeline.evolve_from_array_spec(_creation_spec(metadata))
    return pipeline


def evolve_pipeline(pipeline: Any, array_spec: ArraySpec) -> Any:
    """``pipeline.evolve_from_array_spec(array_spec)``, correct on every zarr (a new pipeline)."""
    if not _THREADS_SPECS and type(pipeline) is BatchedCodecPipeline:
        codecs = [c.evolve_from_array_spec(array_spec=array_spec) for c in pipeline]
        return BatchedCodecPipeline.from_codecs(codecs, batch_size=pipeline.batch_size)
    return pipeline.evolve_from_array_spec(array_spec)
