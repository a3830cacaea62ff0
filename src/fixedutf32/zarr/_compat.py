"""What differs between the zarr-python releases the integration supports.

The integration is tested on zarr-python 3.1.6 (the newest release for
Python 3.11) and on the newest release (3.4.x, Python >= 3.12).  Every
difference the rest of ``fixedutf32.zarr`` depends on is decided here, once,
by looking for the feature itself rather than comparing version numbers:

- ``BytesCodec.endian`` is an ``Endian`` enum up to zarr 3.3 and a plain
  ``"little"``/``"big"`` string from 3.4 on (:func:`endian_name`);
- a ``bytes`` codec parsed without ``endian`` gets the machine's byte order
  from zarr 3.1 and stays ``None`` from 3.4 on (:data:`UNSPECIFIED_ENDIAN`);
- ``CodecPipeline.read`` returns one ``GetResult`` per chunk from zarr 3.2
  on (:data:`PRESENT`, :data:`MISSING`; zarr 3.1 ignores the value);
- zarr 3.4 evolves a pipeline against the array's chunk spec when it creates
  one (``FusedCodecPipeline`` builds its synchronous transform then), and
  threads the spec through the codecs when it evolves one
  (:func:`build_pipeline`, :func:`evolve_pipeline`);
- zarr 3.4 has ``FusedCodecPipeline`` (:data:`FusedCodecPipeline`).

It also holds how a store's requests are issued: synchronously when the
store does its IO so (:func:`sync_store_path`), and with ``async.concurrency``
of them in flight on threads of their own when each may wait on a network
(:func:`waits_per_request`, :func:`fan_out`) rather than one chunk after
another on a share of the CPUs; both rules are :mod:`fixedutf32._store_kinds`'s,
which the store tools follow too.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from collections.abc import Callable, Sequence
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
    "codecs_of",
    "endian_name",
    "literal",
    "evolve_pipeline",
    "fan_out",
    "is_scalar",
    "pipeline_class",
    "sync_store_path",
    "waits_per_request",
]


def literal(setting: object) -> str | None:
    """A codec setting as its string, whether an Enum member (zarr <= 3.3) or a literal (3.4).

    ``BytesCodec.endian`` (``"little"``, ``"big"``), ``ShardingCodec.index_location``
    (``"end"``, ``"start"``); None stays None.

    Examples
    --------
    >>> import zarr.codecs
    >>> literal(zarr.codecs.BytesCodec(endian="big").endian)
    'big'
    >>> literal(None) is None
    True
    """
    name = getattr(setting, "value", setting)  # an Enum member carries the string as .value
    return None if name is None else str(name)


#: ``BytesCodec.endian`` as ``"little"``, ``"big"`` or None.
endian_name = literal


#: The byte order zarr's own ``BytesCodec.from_dict`` gives a codec whose JSON
#: has no ``endian``: the machine's (zarr 3.1) or None (zarr 3.4).
UNSPECIFIED_ENDIAN: Final = endian_name(zarr.codecs.BytesCodec.from_dict({"name": "bytes"}).endian)


class ChunkStatus(TypedDict):
    """What ``read()`` returns per chunk: zarr's ``GetResult`` (zarr >= 3.2), a TypedDict."""

    status: Literal["present", "missing"]


PRESENT: Final[ChunkStatus] = {"status": "present"}
MISSING: Final[ChunkStatus] = {"status": "missing"}


def sync_store_path(getter: object) -> bool:
    """Whether ``getter`` is a ``StorePath`` whose store :func:`does_sync_io`.

    ``StorePath.get_sync``, ``set_sync`` and ``delete_sync`` then work.
    """
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
    """``call(item)`` for every item on threads, ``async.concurrency`` of them at once.

    For synchronous requests to a store that :func:`waits_per_request`: one
    item each, so that a slow request holds up nothing else (zarr's own
    threads are ``threading.max_workers`` wide, one per CPU by default).
    """
    if not items:
        return
    limit = max(1, int(config.get("async.concurrency") or len(items)))
    pool = _request_pool(limit)
    loop = asyncio.get_running_loop()

    async def one(item: _T) -> None:
        await loop.run_in_executor(pool, call, item)

    await settled_map(one, items, limit)


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
    """The codec pipeline class a ``codec_pipeline.path`` value names.

    Parameters
    ----------
    path : str
        ``"module.ClassName"``, as zarr's configuration holds it.

    Returns
    -------
    type
        A subclass of ``zarr.abc.codec.CodecPipeline``.

    Raises
    ------
    ValueError
        When ``path`` does not name an importable codec pipeline class.

    Examples
    --------
    >>> pipeline_class("zarr.core.codec_pipeline.BatchedCodecPipeline").__name__
    'BatchedCodecPipeline'
    """
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
    """A pipeline of class ``cls`` for an array, built as zarr builds the configured one.

    Parameters
    ----------
    cls : type
        A codec pipeline class (zarr's ``BatchedCodecPipeline``,
        ``FusedCodecPipeline``, a third-party one).
    metadata : zarr ArrayV3Metadata or ArrayV2Metadata
    store : zarr.abc.store.Store

    Returns
    -------
    CodecPipeline
        What zarr's ``create_codec_pipeline`` would return with ``cls``
        configured.
    """
    try:
        return cls.from_array_metadata_and_store(array_metadata=metadata, store=store)
    except NotImplementedError:
        pass
    pipeline = cls.from_codecs(codecs_of(metadata))
    if _EVOLVES_AT_CREATION:
        pipeline = pipeline.evolve_from_array_spec(_creation_spec(metadata))
    return pipeline


def evolve_pipeline(pipeline: Any, array_spec: ArraySpec) -> Any:
    """``pipeline.evolve_from_array_spec(array_spec)``, correct on every zarr.

    Parameters
    ----------
    pipeline : CodecPipeline
    array_spec : zarr.core.array_spec.ArraySpec

    Returns
    -------
    CodecPipeline
        A new pipeline of the same class.
    """
    if not _THREADS_SPECS and type(pipeline) is BatchedCodecPipeline:
        codecs = [c.evolve_from_array_spec(array_spec=array_spec) for c in pipeline]
        return BatchedCodecPipeline.from_codecs(codecs, batch_size=pipeline.batch_size)
    return pipeline.evolve_from_array_spec(array_spec)
