"""The nodes of a Zarr hierarchy, read from their raw metadata documents, and
how the chunks of a string array are laid out in the store.

Documents are read as stored (``zarr.json``, ``.zarray``, ``.zgroup``,
``.zattrs``) and checked with :mod:`fixedutf32.metadata`, so that a document
zarr-python itself would refuse to open is reported, not raised.

An array's *chunks* here are the chunks its elements are encoded in: the
regular chunks, or the inner chunks of a sharded array.  A *key* is what the
store holds: one chunk, or one shard of several chunks.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from .._checks import ByteView
from ..errors import MetadataError
from ..metadata import ArrayMetadata, FixedLengthUTF32, parse_array_metadata
from ._stores import StoreHandle

V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS = "zarr.json", ".zarray", ".zgroup", ".zattrs"
METADATA_NAMES = frozenset({V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS, ".zmetadata"})
FIXED, STRING = "fixed_length_utf32", "string"

_BLOSC_SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_EMPTY = 2**64 - 1  # an inner chunk that a shard does not hold

# A chunk's (or a key's) index in its grid.
Index: TypeAlias = tuple[int, ...]
# One chunk read from a key: (index, bytes with the codecs undone, None) or
# (index, None, why it could not be decoded).
ChunkPart: TypeAlias = tuple[Index, "ByteView | None", str | None]


class Codec(Protocol):
    """A bytes-to-bytes codec as numcodecs runs it (numcodecs ships no type information)."""

    def encode(self, buf: ByteView) -> ByteView: ...

    def decode(self, buf: ByteView) -> ByteView: ...


@dataclass
class Node:
    """One group or array of the hierarchy, or a directory without metadata.

    Attributes
    ----------
    path : str
        Path in the store, ``""`` for the root, ``"a/b"`` below it.
    kind : {"group", "array", "incomplete"}
        ``"incomplete"``: keys under ``path`` but no metadata document.
    zarr_format : int or None
    doc : dict
        The parsed ``zarr.json`` (V3) or ``.zarray``/``.zgroup`` (V2); empty
        when there is none or it could not be read.
    attributes : dict
        The node's attributes (``.zattrs`` for V2).
    documents : dict of str to bytes
        The metadata documents exactly as stored, by name.
    error : str or None
        Why the documents could not be read (invalid JSON, ...).
    """

    path: str
    kind: str
    zarr_format: int | None = None
    doc: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    documents: dict[str, bytes] = field(default_factory=dict)
    error: str | None = None


def join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name


def _prefix(path: str) -> str:
    return f"{path}/" if path else ""


def _load_json(data: bytes, where: str) -> dict[str, Any]:
    try:
        value = json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MetadataError(
            f"{where}: expected a JSON document, got invalid JSON ({exc})"
        ) from None
    if not isinstance(value, dict):
        raise MetadataError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def read_node(handle: StoreHandle, path: str) -> Node | None:
    """The :class:`Node` at ``path``, or None when no metadata document is there."""
    prefix = _prefix(path)
    documents = {}
    for name in (V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS):
        data = handle.get(prefix + name)
        if data is not None:
            documents[name] = bytes(data)
    if not documents or set(documents) == {V2_ATTRS}:
        return None
    node = Node(path, "group", documents=documents)
    try:
        if V3_DOC in documents:
            node.zarr_format = 3
            node.doc = _load_json(documents[V3_DOC], prefix + V3_DOC)
            node.kind = "array" if node.doc.get("node_type") == "array" else "group"
            if node.doc.get("node_type") not in ("array", "group"):
                raise MetadataError(
                    f'{prefix}{V3_DOC}: node_type: expected "array" or "group", '
                    f"got {node.doc.get('node_type')!r}"
                )
            attributes = node.doc.get("attributes", {})
        else:
            node.zarr_format = 2
            name = V2_ARRAY if V2_ARRAY in documents else V2_GROUP
            node.kind = "array" if name == V2_ARRAY else "group"
            node.doc = _load_json(documents[name], prefix + name)
            attributes = (
                _load_json(documents[V2_ATTRS], prefix + V2_ATTRS) if V2_ATTRS in documents else {}
            )
        node.attributes = attributes if isinstance(attributes, dict) else {}
    except MetadataError as exc:
        node.error = str(exc)
    return node


def walk(handle: StoreHandle, path: str = "") -> list[Node]:
    """Every node at and below ``path``, parents before children.

    Returns
    -------
    list of Node
        Directories under a group that hold keys but no metadata document
        are included as ``"incomplete"`` nodes; plain keys are not nodes.
        Empty when there is nothing at ``path``.
    """
    node = read_node(handle, path)
    if node is None:
        return []
    nodes = [node]
    if node.kind != "group" or node.error:
        return nodes
    for name in handle.list_dir(path):
        if name in METADATA_NAMES:
            continue
        child = join(path, name)
        below = walk(handle, child)
        if below:
            nodes.extend(below)
        elif handle.list_dir(child):
            nodes.append(Node(child, "incomplete"))
    return nodes


def data_type_of(node: Node) -> str:
    """``"fixed_length_utf32"``, ``"string"``, or the name of another data type."""
    doc = node.doc
    if node.zarr_format == 3:
        dtype = doc.get("data_type")
        name = dtype.get("name") if isinstance(dtype, dict) else dtype
        return name if isinstance(name, str) else json.dumps(dtype)
    dtype = doc.get("dtype")
    if isinstance(dtype, str) and dtype.lstrip("<>|=")[:1] == "U":
        return FIXED
    return dtype if isinstance(dtype, str) else json.dumps(dtype)


# -- codecs --------------------------------------------------------------------


def make_codec(codec: Any, zarr_format: int, where: str = "codecs") -> Codec:
    """A numcodecs object that undoes (and redoes) one bytes-to-bytes codec.

    V3 ``gzip``, ``zstd``, ``blosc`` and ``crc32c`` map to the numcodecs
    classes zarr-python itself runs them with; ``numcodecs.<id>`` and every V2
    compressor or filter go through ``numcodecs.get_codec``.
    """
    import numcodecs

    built: Codec | None = None
    try:
        if zarr_format == 2:
            built = numcodecs.get_codec(dict(codec))
        else:
            if isinstance(codec, str):
                codec = {"name": codec}
            name = codec["name"]
            config = dict(codec.get("configuration") or {})
            if name == "gzip":
                built = numcodecs.GZip(level=config.get("level", 1))
            elif name == "zstd":
                built = numcodecs.Zstd(
                    level=config.get("level", 0), checksum=config.get("checksum", False)
                )
            elif name == "blosc":
                built = numcodecs.Blosc(
                    cname=config.get("cname", "zstd"),
                    clevel=config.get("clevel", 5),
                    shuffle=_BLOSC_SHUFFLE[config.get("shuffle", "noshuffle")],
                    blocksize=config.get("blocksize", 0),
                )
            elif name == "crc32c":
                built = numcodecs.CRC32C(location="end")
            elif name.startswith("numcodecs."):
                built = numcodecs.get_codec({"id": name[len("numcodecs.") :], **config})
    except (KeyError, TypeError, ValueError) as exc:
        raise MetadataError(f"{where}: cannot build the codec {codec!r}: {exc}") from None
    if built is None:
        raise MetadataError(
            f"{where}: expected a codec this tool can run (gzip, zstd, blosc, crc32c, "
            f"numcodecs.*), got {name!r}"
        )
    return built


def undo(codecs: Sequence[Codec], data: ByteView) -> ByteView:
    """``data`` with ``codecs`` (in the order they were applied) undone."""
    for codec in reversed(codecs):
        data = codec.decode(data)
    return data


def redo(codecs: Sequence[Codec], data: ByteView) -> ByteView:
    """Apply ``codecs`` in order to the bytes of a chunk."""
    for codec in codecs:
        data = codec.encode(data)
    return data


# -- array plans --------------------------------------------------------------


def memory_order(meta: ArrayMetadata) -> Literal["C", "F"]:
    """``meta.order`` as NumPy takes it (parsing admits only "C" and "F")."""
    return "F" if meta.order == "F" else "C"


@dataclass(frozen=True)
class Shard:
    """How the chunks of a ``sharding_indexed`` array sit in one shard key."""

    per_shard: Index  # chunks along each axis of a shard
    index_endian: str
    index_crc: bool
    index_at_start: bool

    @property
    def count(self) -> int:
        return math.prod(self.per_shard)

    @property
    def index_nbytes(self) -> int:
        return 16 * self.count + (4 if self.index_crc else 0)


@dataclass(frozen=True)
class ArrayPlan:
    """Everything a worker needs to read the chunks of one string array.

    Picklable: Dask tasks receive it with the store's spec.

    Attributes
    ----------
    path : str
    kind : {"fixed_length_utf32", "string"}
    zarr_format : int
    meta : ArrayMetadata
        The chunk layout: ``chunk_shape`` is the shape of one encoded chunk
        (an inner chunk for sharded arrays), ``order``/``endian``/
        ``length_bytes`` its encoding.  For ``"string"`` arrays only the
        shape, chunks and fill value are meaningful.
    key_meta : ArrayMetadata
        Names the store keys (``chunk_key``) on the key grid (shards).
    codecs : tuple
        numcodecs objects to undo for each chunk, in the order applied.
    key_codecs : tuple
        numcodecs objects applied to a whole shard after sharding.
    shard : Shard or None
    fill : str
        The fill value (missing chunks read as it).
    """

    path: str
    kind: str
    zarr_format: int
    meta: ArrayMetadata
    key_meta: ArrayMetadata
    codecs: tuple[Codec, ...] = ()
    key_codecs: tuple[Codec, ...] = ()
    shard: Shard | None = None
    fill: str = ""

    @property
    def grid_shape(self) -> Index:
        return self.meta.grid_shape

    @property
    def chunk_count(self) -> int:
        return math.prod(self.grid_shape)

    @property
    def key_indices(self) -> list[Index]:
        return list(self.key_meta.chunk_indices())

    def chunk_nbytes(self) -> int:
        """Bytes of one decoded chunk (the elements times ``length_bytes``)."""
        return math.prod(self.meta.chunk_shape) * self.meta.data_type.length_bytes

    def key(self, key_index: Sequence[int]) -> str:
        """The store key (from the store's root) of the key at grid ``key_index``."""
        return join(self.path, self.key_meta.chunk_key(key_index))

    def chunks_of_key(self, key_index: Sequence[int]) -> list[Index]:
        """Grid indices of the chunks stored under the key at ``key_index``."""
        if self.shard is None:
            return [tuple(key_index)]
        base = [k * n for k, n in zip(key_index, self.shard.per_shard)]
        return [
            tuple(b + i for b, i in zip(base, local))
            for local in np.ndindex(*self.shard.per_shard)
            if all(b + i < g for b, i, g in zip(base, local, self.grid_shape))
        ]

    def coordinates(self, chunk_index: Sequence[int], element: int) -> Index:
        """Array coordinates of flat ``element`` (in the chunk's order) of a chunk."""
        shape = self.meta.chunk_shape
        local = np.unravel_index(element, shape, order=memory_order(self.meta)) if shape else ()
        return tuple(int(i * c + j) for i, c, j in zip(chunk_index, shape, local))

    def read_key(
        self, handle: StoreHandle, key_index: Sequence[int]
    ) -> tuple[int, list[ChunkPart]] | None:
        """Read one key and split it into chunks.

        Returns
        -------
        (int, list) or None
            None when the key is missing; else the bytes read and a list of
            ``(chunk_index, data, error)``: ``data`` the chunk's bytes with
            every codec undone (not yet checked for size), or ``error`` a
            message saying why it could not be decoded.  Chunks a shard does
            not hold are left out.
        """
        raw = handle.get(self.key(key_index))
        if raw is None:
            return None
        if self.shard is None:
            return raw.nbytes, [_decoded(tuple(key_index), self.codecs, raw)]
        try:
            data = np.frombuffer(undo(self.key_codecs, raw), np.uint8)
            entries = _shard_index(self.shard, data)
        except Exception as exc:  # noqa: BLE001 - a codec's error is data, reported
            return raw.nbytes, [(tuple(key_index), None, f"shard index unreadable: {_reason(exc)}")]
        grid = self.grid_shape
        base = [k * n for k, n in zip(key_index, self.shard.per_shard)]
        out: list[ChunkPart] = []
        for local, (offset, nbytes) in zip(np.ndindex(*self.shard.per_shard), entries.tolist()):
            index = tuple(b + i for b, i in zip(base, local))
            if offset == _EMPTY and nbytes == _EMPTY:
                continue
            if any(i >= g for i, g in zip(index, grid)):
                continue
            if offset + nbytes > data.nbytes:
                out.append(
                    (
                        index,
                        None,
                        f"shard index points at bytes {offset}..{offset + nbytes} "
                        f"of a shard of {data.nbytes} bytes",
                    )
                )
                continue
            out.append(_decoded(index, self.codecs, data[offset : offset + nbytes]))
        return raw.nbytes, out


def _reason(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _decoded(index: Index, codecs: Sequence[Codec], raw: ByteView) -> ChunkPart:
    try:
        return index, undo(codecs, raw), None
    except Exception as exc:  # noqa: BLE001 - a codec's error is data, reported
        return index, None, f"codec error: {_reason(exc)}"


def _shard_index(shard: Shard, data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The ``(offset, nbytes)`` pairs of a shard, as a (n, 2) uint64 array."""
    size = shard.index_nbytes
    if data.nbytes < size:
        raise ValueError(f"a shard of {data.nbytes} bytes cannot hold its {size}-byte index")
    index = data[:size] if shard.index_at_start else data[data.nbytes - size :]
    if shard.index_crc:
        import numcodecs

        index = numcodecs.CRC32C(location="end").decode(index)
    dtype = np.dtype("<u8" if shard.index_endian == "little" else ">u8")
    return np.frombuffer(index, dtype, count=2 * shard.count).reshape(-1, 2)


def _regular(doc: dict[str, Any], chunk_shape: Any) -> dict[str, Any]:
    return {
        **doc,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunk_shape)}},
    }


def plan_array(node: Node) -> ArrayPlan | None:
    """The :class:`ArrayPlan` of a string array node.

    Returns
    -------
    ArrayPlan or None
        None when the array holds another data type.

    Raises
    ------
    MetadataError
        When the metadata breaks the spec, or uses codecs this tool cannot run.
    """
    if node.error:
        raise MetadataError(node.error)
    kind = data_type_of(node)
    if kind == FIXED:
        return _plan_fixed(node)
    if kind == STRING and node.zarr_format == 3:
        return _plan_string(node)
    return None


def _plan_fixed(node: Node) -> ArrayPlan:
    doc = node.doc
    if node.zarr_format == 2:
        meta = parse_array_metadata(doc)
        v2_codecs = tuple(make_codec(c, 2, "filters") for c in meta.filters)
        v2_codecs += tuple(make_codec(c, 2, "compressor") for c in meta.codecs)
        return ArrayPlan(node.path, FIXED, 2, meta, meta, v2_codecs, fill=str(meta.fill_value))
    listed = doc.get("codecs")
    codecs: list[Any] = listed if isinstance(listed, list) else []
    sharded = [
        i
        for i, c in enumerate(codecs)
        if isinstance(c, dict) and c.get("name") == "sharding_indexed"
    ]
    if not sharded:
        meta = parse_array_metadata(doc)
        return ArrayPlan(
            node.path, FIXED, 3, meta, meta, _v3_codecs(meta.codecs), fill=str(meta.fill_value)
        )
    where = sharded[0]
    if where != 0 or len(sharded) > 1:
        raise MetadataError(
            f'codecs[{where}]: expected "sharding_indexed" first and once; this tool reads '
            f"shards with no codec before them"
        )
    config = codecs[0].get("configuration")
    key = "codecs[0].configuration"
    if not isinstance(config, dict) or not {"chunk_shape", "codecs"} <= set(config):
        raise MetadataError(
            f"{key}: expected an object with chunk_shape and codecs, got {config!r}"
        )
    inner = parse_array_metadata(
        {**_regular(doc, config["chunk_shape"]), "codecs": config["codecs"]}
    )
    outer = parse_array_metadata(
        {**doc, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, *codecs[1:]]}
    )
    per_shard = []
    for axis, (s, c) in enumerate(zip(outer.chunk_shape, inner.chunk_shape)):
        if s % c:
            raise MetadataError(
                f"{key}.chunk_shape[{axis}]: expected a divisor of the shard shape "
                f"{list(outer.chunk_shape)}, "
                f"got {c}"
            )
        per_shard.append(s // c)
    location = config.get("index_location", "end")
    if location not in ("start", "end"):
        raise MetadataError(f'{key}.index_location: expected "start" or "end", got {location!r}')
    index_endian, index_crc = _index_codecs(config.get("index_codecs"), f"{key}.index_codecs")
    shard = Shard(tuple(per_shard), index_endian, index_crc, location == "start")
    return ArrayPlan(
        node.path,
        FIXED,
        3,
        inner,
        outer,
        _v3_codecs(inner.codecs),
        _v3_codecs(outer.codecs),
        shard,
        str(inner.fill_value),
    )


def _index_codecs(codecs: Any, key: str) -> tuple[str, bool]:
    names = [c.get("name") if isinstance(c, dict) else c for c in codecs or []]
    if names not in (["bytes"], ["bytes", "crc32c"]):
        raise MetadataError(
            f"{key}: expected [bytes] or [bytes, crc32c] (the index codecs this tool reads), "
            f"got {names}"
        )
    config = codecs[0].get("configuration") if isinstance(codecs[0], dict) else None
    endian = (config or {}).get("endian", "little")
    if endian not in ("little", "big"):
        raise MetadataError(
            f'{key}[0].configuration.endian: expected "little" or "big", got {endian!r}'
        )
    return endian, len(names) == 2


def _v3_codecs(codecs: Sequence[Any]) -> tuple[Codec, ...]:
    return tuple(make_codec(c, 3, f"codecs[{i}]") for i, c in enumerate(codecs, start=1))


def _plan_string(node: Node) -> ArrayPlan:
    """A V3 ``string`` (vlen-utf8) array, as a source of conversions."""
    doc = node.doc
    codecs = doc.get("codecs") or []
    names = [c.get("name") if isinstance(c, dict) else c for c in codecs]
    if not names or names[0] != "vlen-utf8":
        raise MetadataError(
            f'codecs: expected "vlen-utf8" first for the string data type (the layout this '
            f"tool reads), got {names}"
        )
    chunks = doc.get("chunk_grid", {}).get("configuration", {}).get("chunk_shape")
    fill = doc.get("fill_value") or ""
    encoding = doc.get("chunk_key_encoding") or {}
    separator = (encoding.get("configuration") or {}).get("separator")
    # ArrayMetadata names keys and walks the grid; its data type is a stand-in.
    meta = ArrayMetadata(
        3,
        tuple(doc.get("shape", ())),
        tuple(chunks or ()),
        FixedLengthUTF32(4),
        chunk_key_encoding=encoding.get("name", "default"),
        separator=separator,
    )
    return ArrayPlan(node.path, STRING, 3, meta, meta, _v3_codecs(codecs[1:]), fill=str(fill))
