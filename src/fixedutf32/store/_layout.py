"""The nodes of a Zarr hierarchy, read from their raw metadata documents, and
how the chunks of a string array are laid out in the store.

Documents are read as stored (``zarr.json``, ``.zarray``, ``.zgroup``,
``.zattrs``) and checked with :mod:`fixedutf32.metadata`, so that a document
zarr-python itself would refuse to open is reported, not raised.

An array's *chunks* here are the chunks its elements are encoded in: the
regular chunks, or the inner chunks of a sharded array.  A *key* is what the
store holds: one chunk, or one shard of several chunks.
"""

import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import MetadataError
from ..metadata import ArrayMetadata, FixedLengthUTF32, parse_array_metadata

V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS = "zarr.json", ".zarray", ".zgroup", ".zattrs"
METADATA_NAMES = frozenset({V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS, ".zmetadata"})
FIXED, STRING = "fixed_length_utf32", "string"

_BLOSC_SHUFFLE = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
_EMPTY = 2**64 - 1  # an inner chunk that a shard does not hold


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
    doc : dict or None
        The parsed ``zarr.json`` (V3) or ``.zarray``/``.zgroup`` (V2).
    attributes : dict
        The node's attributes (``.zattrs`` for V2).
    documents : dict of str to bytes
        The metadata documents exactly as stored, by name.
    error : str or None
        Why the documents could not be read (invalid JSON, ...).
    """

    path: str
    kind: str
    zarr_format: int = None
    doc: dict = None
    attributes: dict = field(default_factory=dict)
    documents: dict = field(default_factory=dict)
    error: str = None


def join(path, name):
    return f"{path}/{name}" if path else name


def _prefix(path):
    return f"{path}/" if path else ""


def _load_json(data, where):
    try:
        value = json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MetadataError(f"{where}: expected a JSON document, got invalid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise MetadataError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def read_node(handle, path):
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
                    f"{prefix}{V3_DOC}: node_type: expected \"array\" or \"group\", "
                    f"got {node.doc.get('node_type')!r}")
            attributes = node.doc.get("attributes", {})
        else:
            node.zarr_format = 2
            name = V2_ARRAY if V2_ARRAY in documents else V2_GROUP
            node.kind = "array" if name == V2_ARRAY else "group"
            node.doc = _load_json(documents[name], prefix + name)
            attributes = (_load_json(documents[V2_ATTRS], prefix + V2_ATTRS)
                          if V2_ATTRS in documents else {})
        node.attributes = attributes if isinstance(attributes, dict) else {}
    except MetadataError as exc:
        node.error = str(exc)
    return node


def walk(handle, path=""):
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


def data_type_of(node):
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


def make_codec(codec, zarr_format, where="codecs"):
    """A numcodecs object that undoes (and redoes) one bytes-to-bytes codec.

    V3 ``gzip``, ``zstd``, ``blosc`` and ``crc32c`` map to the numcodecs
    classes zarr-python itself runs them with; ``numcodecs.<id>`` and every V2
    compressor or filter go through ``numcodecs.get_codec``.
    """
    import numcodecs

    try:
        if zarr_format == 2:
            return numcodecs.get_codec(dict(codec))
        if isinstance(codec, str):
            codec = {"name": codec}
        name = codec["name"]
        config = dict(codec.get("configuration") or {})
        if name == "gzip":
            return numcodecs.GZip(level=config.get("level", 1))
        if name == "zstd":
            return numcodecs.Zstd(level=config.get("level", 0), checksum=config.get("checksum", False))
        if name == "blosc":
            return numcodecs.Blosc(
                cname=config.get("cname", "zstd"), clevel=config.get("clevel", 5),
                shuffle=_BLOSC_SHUFFLE[config.get("shuffle", "noshuffle")],
                blocksize=config.get("blocksize", 0))
        if name == "crc32c":
            return numcodecs.CRC32C(location="end")
        if name.startswith("numcodecs."):
            return numcodecs.get_codec({"id": name[len("numcodecs."):], **config})
    except (KeyError, TypeError, ValueError) as exc:
        raise MetadataError(f"{where}: cannot build the codec {codec!r}: {exc}") from None
    raise MetadataError(
        f"{where}: expected a codec this tool can run (gzip, zstd, blosc, crc32c, "
        f"numcodecs.*), got {name!r}")


def undo(codecs, data):
    """``data`` with ``codecs`` (in the order they were applied) undone."""
    for codec in reversed(codecs):
        data = codec.decode(data)
    return data


def redo(codecs, data):
    """Apply ``codecs`` in order to the bytes of a chunk."""
    for codec in codecs:
        data = codec.encode(data)
    return data


# -- array plans --------------------------------------------------------------


@dataclass(frozen=True)
class Shard:
    """How the chunks of a ``sharding_indexed`` array sit in one shard key."""

    per_shard: tuple          # chunks along each axis of a shard
    index_endian: str
    index_crc: bool
    index_at_start: bool

    @property
    def count(self):
        return math.prod(self.per_shard)

    @property
    def index_nbytes(self):
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
    codecs: tuple = ()
    key_codecs: tuple = ()
    shard: Shard = None
    fill: str = ""

    @property
    def grid_shape(self):
        return self.meta.grid_shape

    @property
    def chunk_count(self):
        return math.prod(self.grid_shape)

    @property
    def key_indices(self):
        return list(self.key_meta.chunk_indices())

    def chunk_nbytes(self):
        """Bytes of one decoded chunk (the elements times ``length_bytes``)."""
        return math.prod(self.meta.chunk_shape) * self.meta.data_type.length_bytes

    def key(self, key_index):
        """The store key (from the store's root) of the key at grid ``key_index``."""
        return join(self.path, self.key_meta.chunk_key(key_index))

    def chunks_of_key(self, key_index):
        """Grid indices of the chunks stored under the key at ``key_index``."""
        if self.shard is None:
            return [tuple(key_index)]
        base = [k * n for k, n in zip(key_index, self.shard.per_shard)]
        return [tuple(b + i for b, i in zip(base, local))
                for local in np.ndindex(*self.shard.per_shard)
                if all(b + i < g for b, i, g in zip(base, local, self.grid_shape))]

    def coordinates(self, chunk_index, element):
        """Array coordinates of flat ``element`` (in the chunk's order) of a chunk."""
        shape = self.meta.chunk_shape
        local = np.unravel_index(element, shape, order=self.meta.order) if shape else ()
        return tuple(int(i * c + j) for i, c, j in zip(chunk_index, shape, local))

    def read_key(self, handle, key_index):
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
        out = []
        for local, (offset, nbytes) in zip(np.ndindex(*self.shard.per_shard), entries.tolist()):
            index = tuple(b + i for b, i in zip(base, local))
            if offset == _EMPTY and nbytes == _EMPTY:
                continue
            if any(i >= g for i, g in zip(index, grid)):
                continue
            if offset + nbytes > data.nbytes:
                out.append((index, None, f"shard index points at bytes {offset}..{offset + nbytes} "
                                         f"of a shard of {data.nbytes} bytes"))
                continue
            out.append(_decoded(index, self.codecs, data[offset:offset + nbytes]))
        return raw.nbytes, out


def _reason(exc):
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _decoded(index, codecs, raw):
    try:
        return index, undo(codecs, raw), None
    except Exception as exc:  # noqa: BLE001 - a codec's error is data, reported
        return index, None, f"codec error: {_reason(exc)}"


def _shard_index(shard, data):
    """The ``(offset, nbytes)`` pairs of a shard, as a (n, 2) uint64 array."""
    size = shard.index_nbytes
    if data.nbytes < size:
        raise ValueError(f"a shard of {data.nbytes} bytes cannot hold its {size}-byte index")
    index = data[:size] if shard.index_at_start else data[data.nbytes - size:]
    if shard.index_crc:
        import numcodecs

        index = numcodecs.CRC32C(location="end").decode(index)
    dtype = np.dtype("<u8" if shard.index_endian == "little" else ">u8")
    return np.frombuffer(index, dtype, count=2 * shard.count).reshape(-1, 2)


def _regular(doc, chunk_shape):
    return {**doc, "chunk_grid": {"name": "regular",
                                  "configuration": {"chunk_shape": list(chunk_shape)}}}


def plan_array(node):
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


def _plan_fixed(node):
    doc = node.doc
    if node.zarr_format == 2:
        meta = parse_array_metadata(doc)
        codecs = tuple(make_codec(c, 2, "filters") for c in meta.filters)
        codecs += tuple(make_codec(c, 2, "compressor") for c in meta.codecs)
        return ArrayPlan(node.path, FIXED, 2, meta, meta, codecs, fill=str(meta.fill_value))
    codecs = doc.get("codecs")
    sharded = [i for i, c in enumerate(codecs if isinstance(codecs, list) else [])
               if isinstance(c, dict) and c.get("name") == "sharding_indexed"]
    if not sharded:
        meta = parse_array_metadata(doc)
        return ArrayPlan(node.path, FIXED, 3, meta, meta, _v3_codecs(meta.codecs),
                         fill=str(meta.fill_value))
    where = sharded[0]
    if where != 0 or len(sharded) > 1:
        raise MetadataError(
            f"codecs[{where}]: expected \"sharding_indexed\" first and once; this tool reads "
            f"shards with no codec before them")
    config = codecs[0].get("configuration")
    key = "codecs[0].configuration"
    if not isinstance(config, dict) or not {"chunk_shape", "codecs"} <= set(config):
        raise MetadataError(f"{key}: expected an object with chunk_shape and codecs, got {config!r}")
    inner = parse_array_metadata({**_regular(doc, config["chunk_shape"]), "codecs": config["codecs"]})
    outer = parse_array_metadata(
        {**doc, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, *codecs[1:]]})
    per_shard = []
    for axis, (s, c) in enumerate(zip(outer.chunk_shape, inner.chunk_shape)):
        if s % c:
            raise MetadataError(
                f"{key}.chunk_shape[{axis}]: expected a divisor of the shard shape {list(outer.chunk_shape)}, "
                f"got {c}")
        per_shard.append(s // c)
    location = config.get("index_location", "end")
    if location not in ("start", "end"):
        raise MetadataError(f"{key}.index_location: expected \"start\" or \"end\", got {location!r}")
    index_endian, index_crc = _index_codecs(config.get("index_codecs"), f"{key}.index_codecs")
    shard = Shard(tuple(per_shard), index_endian, index_crc, location == "start")
    return ArrayPlan(node.path, FIXED, 3, inner, outer, _v3_codecs(inner.codecs),
                     _v3_codecs(outer.codecs), shard, str(inner.fill_value))


def _index_codecs(codecs, key):
    names = [c.get("name") if isinstance(c, dict) else c for c in codecs or []]
    if names not in (["bytes"], ["bytes", "crc32c"]):
        raise MetadataError(
            f"{key}: expected [bytes] or [bytes, crc32c] (the index codecs this tool reads), "
            f"got {names}")
    config = codecs[0].get("configuration") if isinstance(codecs[0], dict) else None
    endian = (config or {}).get("endian", "little")
    if endian not in ("little", "big"):
        raise MetadataError(f"{key}[0].configuration.endian: expected \"little\" or \"big\", got {endian!r}")
    return endian, len(names) == 2


def _v3_codecs(codecs):
    return tuple(make_codec(c, 3, f"codecs[{i}]") for i, c in enumerate(codecs, start=1))


def _plan_string(node):
    """A V3 ``string`` (vlen-utf8) array, as a source of conversions."""
    doc = node.doc
    codecs = doc.get("codecs")
    names = [c.get("name") if isinstance(c, dict) else c for c in codecs or []]
    if not names or names[0] != "vlen-utf8":
        raise MetadataError(
            f"codecs: expected \"vlen-utf8\" first for the string data type (the layout this "
            f"tool reads), got {names}")
    chunks = doc.get("chunk_grid", {}).get("configuration", {}).get("chunk_shape")
    fill = doc.get("fill_value") or ""
    encoding = doc.get("chunk_key_encoding") or {}
    separator = (encoding.get("configuration") or {}).get("separator")
    # ArrayMetadata names keys and walks the grid; its data type is a stand-in.
    meta = ArrayMetadata(3, tuple(doc.get("shape", ())), tuple(chunks or ()), FixedLengthUTF32(4),
                         chunk_key_encoding=encoding.get("name", "default"), separator=separator)
    return ArrayPlan(node.path, STRING, 3, meta, meta, _v3_codecs(codecs[1:]), fill=str(fill))
