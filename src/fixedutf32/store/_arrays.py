"""The nodes of a Zarr hierarchy read from their documents, and how string arrays' chunks lie."""
# Documents are checked with fixedutf32.metadata, so one zarr would refuse is reported, not raised.
# Chunks: the encoded chunks (inner ones when sharded); a key: one chunk or one shard.

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from .._source import ChunkGrid, CodecChain, CodecSpec, Scratch, parse_codec
from .._source.files import is_within, outside_link_reason, read_regular_file
from .._source.reader import KeyReader, OnBlock, OnLongest, Sink
from .._store_kinds import local_root as store_root
from ..errors import CorruptChunkError, FixedUTF32Error, MetadataError
from ..metadata import ArrayMetadata, FixedLengthUTF32
from ..metadata._model import parse_stored
from ._stores import StoreError, StoreHandle

V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS = "zarr.json", ".zarray", ".zgroup", ".zattrs"
METADATA_NAMES = frozenset({V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS, ".zmetadata"})
FIXED, STRING = "fixed_length_utf32", "string"

# A chunk's (or a key's) index in its grid.
Index: TypeAlias = tuple[int, ...]
# One chunk read from a key, as :meth:`ArrayPlan.read_parts` collects it:
# (index, its bytes with the codecs undone, None) or (index, None, the error).
ChunkPart: TypeAlias = tuple[Index, "npt.NDArray[np.uint8] | None", "FixedUTF32Error | None"]


@dataclass
class Node:
    """One group or array of the hierarchy, or a directory without metadata ("incomplete")."""

    # doc is empty when missing or unreadable (error says why); documents: bytes as stored; keys (of
    # a group): stray keys directly under it, the root's listing the conversion's bookkeeping too.

    path: str
    kind: str
    zarr_format: int | None = None
    doc: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    documents: dict[str, bytes] = field(default_factory=dict)
    error: str | None = None
    keys: list[str] = field(default_factory=list)


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


# The largest metadata document read (a V3 zarr.json may hold consolidated metadata).
_MAX_DOCUMENT = 64 << 20


def _document(
    handle: StoreHandle, root: str | None, key: str, within: str | None = None
) -> bytes | None:
    """A metadata document's bytes, or None; local ones read as chunk files are (safely)."""
    if root is None:
        data = handle.get(key)
        return None if data is None else bytes(data)
    try:
        return read_regular_file(
            os.path.join(root, key), key=key, max_nbytes=_MAX_DOCUMENT, within=within
        )
    except CorruptChunkError as exc:
        raise MetadataError(f"{key}: {exc.reason}") from None


def read_node(
    handle: StoreHandle,
    path: str,
    skip: Collection[str] = (),
    within: str | None = None,
) -> Node | None:
    """The :class:`Node` at ``path``, or None; ``skip``: unread keys, ``within``: local root."""
    prefix = _prefix(path)
    root = local_root(handle)
    documents = {}
    unreadable = None
    for name in (V3_DOC, V2_ARRAY, V2_GROUP, V2_ATTRS):
        if prefix + name in skip:
            continue
        try:
            data = _document(handle, root, prefix + name, within)
        except MetadataError as exc:
            unreadable = unreadable or str(exc)
            continue
        if data is not None:
            documents[name] = data
    if unreadable is not None:
        return Node(path, "group", documents=documents, error=unreadable)
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


def walk(
    handle: StoreHandle,
    path: str = "",
    max_depth: int | None = None,
    *,
    skip: Collection[str] = (),
    within: str | None = None,
) -> list[Node]:
    """Every node at and below ``path``, parents before children ([] when nothing is there)."""
    # Iterative, so any depth fits. max_depth: StoreError below it (for callers that recurse per
    # level); skip: links out not read; within: a local store's real root, documents read only
    # inside it. Directories holding keys but no document are "incomplete" nodes.
    if path in skip:
        return []
    root = read_node(handle, path, skip, within)
    if root is None:
        return []
    nodes: list[Node] = []
    # Depth first, children in name order: the order a recursive walk gives.
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if node.kind != "group" or node.error:
            continue
        depth = node.path.count("/") + 1 - (path.count("/") + 1 if path else 0)
        if max_depth is not None and depth >= max_depth and handle.list_dir(node.path):
            where = f"{path!r}" if path else "the root"
            raise StoreError(
                f"the hierarchy goes deeper than {max_depth} levels below {where} (the group "
                f"{node.path[:40]!r}... has children); expected at most {max_depth}"
            )
        children: list[Node] = []
        for name in handle.list_dir(node.path):
            child = join(node.path, name)
            if name in METADATA_NAMES or child in skip:
                continue
            found = read_node(handle, child, skip, within)
            if found is not None:
                children.append(found)
            elif handle.list_dir(child):
                children.append(Node(child, "incomplete"))
            else:
                node.keys.append(child)  # a key, not a directory
        stack.extend(reversed(children))
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

# The most bytes a destination chunk read back (resume) or a vlen-utf8 source
# chunk may inflate to: their decoded size is not fixed by the metadata, so
# frames are checked against this bound (a blosc frame's size against the
# bytes held, always).
_UNSIZED_BOUND = 1 << 32


def destination_chain(codecs: Sequence[Any], zarr_format: int, where: str) -> CodecChain:
    """A destination's bytes-to-bytes codecs from their JSON, built now (MetadataError if not)."""
    specs = tuple(parse_codec(codec, zarr_format, where) for codec in codecs)
    return CodecChain(specs, _UNSIZED_BOUND, exact=False)


def local_root(handle: StoreHandle) -> str | None:
    """:func:`fixedutf32._store_kinds.local_root` of the handle's store."""
    return store_root(handle.store)


def local_directory(handle: StoreHandle) -> str | None:
    """The directory of a store's keys when they are local files (LocalStore, fsspec), or None."""
    root = local_root(handle)
    if root is not None:
        return root
    from zarr.storage import FsspecStore

    store = handle.store
    if isinstance(store, FsspecStore):
        protocol = store.fs.protocol
        protocols = (protocol,) if isinstance(protocol, str) else tuple(protocol)
        if {"file", "local"} & set(protocols):
            return os.fspath(store.path) or os.sep
    return None


@functools.lru_cache(maxsize=64)
def real_root(root: str) -> str:
    """The real path of a store's directory (its links resolved), once per process."""
    return os.path.realpath(root)


@dataclass(frozen=True)
class Link:
    """A key of a local store that is a symbolic link resolving outside it (``target``)."""

    key: str
    target: str


def outside_links(handle: StoreHandle, path: str = "") -> list[Link]:
    """Every symbolic link at or below ``path`` of a local store resolving outside it, by key."""
    # Links to directories inside the store are walked once each (zarr reads through them; loops
    # end); containment is decided on real paths. Non-local stores: [].
    directory = local_directory(handle)
    if directory is None:
        return []
    real = real_root(directory)
    top = os.path.join(directory, path) if path else directory
    if path and not is_within(real, os.path.realpath(top)):
        return [Link(path, os.path.realpath(top))]  # the path itself leads out
    found = [
        Link(key, target)
        for key, target, out in _scan(directory, path, False, set())
        if out and target is not None  # only links lead out
    ]
    found.sort(key=lambda link: link.key)
    return found


def link_reason(link: Link, handle: StoreHandle) -> str:
    """Why a link out of the store is refused, in the reader's words."""
    directory = local_directory(handle)
    return outside_link_reason(link.target, real_root(directory) if directory else "")


def _local_keys(
    root: str, path: str, follow: bool = False, entered: set[str] | None = None
) -> list[str]:
    """Every key under ``path`` of a local store: each entry that is not a directory."""
    # Unlike LocalStore.list_prefix, FIFOs, devices and links to them are listed, so reading
    # reports them rather than a missing chunk; a link leading out: walked with follow, else listed.
    entered = set() if entered is None else entered
    return [key for key, _, _ in _scan(root, path, follow, entered)]


def _scan(
    root: str, path: str, follow: bool, entered: set[str]
) -> Iterator[tuple[str, str | None, bool]]:
    """``(key, real target or None, leads out)`` for each entry under ``path`` not walked into."""
    # The one walk of outside_links and _local_keys: a link to a directory is walked once (loops
    # end) when inside the store, or anywhere with follow; entered collects the directories entered.
    real = real_root(root)
    stack = [path]
    while stack:
        where = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(root, where) if where else root))
        except OSError:
            continue  # gone, or not a directory: nothing under it
        for entry in entries:
            key = join(where, entry.name)
            if entry.is_dir(follow_symlinks=False):
                stack.append(key)
                continue
            if not entry.is_symlink():
                yield key, None, False
                continue
            target = os.path.realpath(entry.path)
            out = not is_within(real, target)
            if _is_dir(entry) and (follow or not out):
                if target not in entered:
                    entered.add(target)
                    stack.append(key)
                continue
            yield key, target, out


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


# -- array plans --------------------------------------------------------------


def memory_order(meta: ArrayMetadata) -> Literal["C", "F"]:
    """``meta.order`` as NumPy takes it (parsing admits only "C" and "F")."""
    return "F" if meta.order == "F" else "C"


@dataclass(frozen=True)
class ArrayPlan:
    """Everything a worker needs to read the chunks of one string array (picklable, for Dask)."""

    # meta: the encoded chunk's layout (only shape, chunks, fill for "string" arrays); key_meta: the
    # key grid (shards); within: the real root every read lies in, None where links are followed.

    path: str
    kind: str
    zarr_format: int
    meta: ArrayMetadata
    key_meta: ArrayMetadata
    reader: KeyReader
    fill: str = ""
    within: str | None = None

    @property
    def grid(self) -> ChunkGrid:
        return self.reader.grid

    @property
    def key_grid(self) -> ChunkGrid:
        return self.reader.key_grid

    @property
    def grid_shape(self) -> Index:
        return self.grid.grid_shape

    @property
    def chunk_count(self) -> int:
        return self.grid.chunk_count

    @property
    def key_indices(self) -> Iterator[Index]:
        """Every key's grid index, lazily (the whole grid: prefer :meth:`listed_keys`)."""
        return self.key_grid.indices()

    @property
    def per_shard(self) -> Index | None:
        """Chunks along each axis of a shard (None when not sharded)."""
        shard = self.reader.shard
        return None if shard is None else shard.chunks_per_shard

    def chunk_nbytes(self) -> int:
        """Bytes of one decoded chunk (the elements times ``length_bytes``)."""
        return self.grid.chunk_elements * self.meta.data_type.length_bytes

    def key(self, key_index: Sequence[int]) -> str:
        """The store key (from the store's root) of the key at grid ``key_index``."""
        return self.reader.key(key_index)

    def listed_keys(
        self, handle: StoreHandle, skip: Collection[str] = ()
    ) -> tuple[list[Index], list[str]]:
        """From one listing: chunk keys held (grid indices, C order), other non-metadata keys."""
        prefix = _prefix(self.path)
        parse = self.key_grid.parse_key
        root = local_root(handle)
        entered: set[str] = set()
        if root is None:
            keys = handle.list_prefix(prefix)
        else:  # links out of the store are walked when followed (no ``within``)
            keys = _local_keys(root, self.path, self.within is None, entered)
        found = []
        chunk_keys = []
        others = []
        for key in keys:
            name = key[len(prefix) :]
            index = parse(name)
            if index is not None:
                if key not in skip:
                    found.append(index)
                    chunk_keys.append(key)
            elif name not in METADATA_NAMES and key not in skip:
                others.append(key)
        if entered and others and root is not None:
            # A file reached as a chunk through a link is that chunk, under another name.
            read = {os.path.realpath(os.path.join(root, key)) for key in chunk_keys}
            others = [k for k in others if os.path.realpath(os.path.join(root, k)) not in read]
        found.sort()
        others.sort()
        return found, others

    def chunks_in_key(self, key_index: Sequence[int]) -> int:
        """How many chunks of the grid the key at ``key_index`` holds (edge shards: fewer)."""
        per_shard = self.per_shard
        if per_shard is None:
            return 1
        return math.prod(
            max(0, min(n, g - k * n)) for k, n, g in zip(key_index, per_shard, self.grid_shape)
        )

    def chunks_of_key(self, key_index: Sequence[int]) -> list[Index]:
        """Grid indices of the chunks stored under the key at ``key_index``."""
        per_shard = self.per_shard
        if per_shard is None:
            return [tuple(key_index)]
        base = [k * n for k, n in zip(key_index, per_shard)]
        return [
            tuple(b + i for b, i in zip(base, local))
            for local in np.ndindex(*per_shard)
            if all(b + i < g for b, i, g in zip(base, local, self.grid_shape))
        ]

    def coordinates(self, chunk_index: Sequence[int], element: int) -> Index:
        """Array coordinates of flat ``element`` (in the chunk's order) of a chunk."""
        return self.grid.coordinates(chunk_index, element)

    def read_key(
        self,
        handle: StoreHandle,
        key_index: Sequence[int],
        visit: Sink,
        *,
        on_block: OnBlock | None = None,
        scratch: Scratch | None = None,
        on_longest: OnLongest | None = None,
    ) -> int | None:
        """:meth:`KeyReader.read` of one key (local files inside ``within``); bytes read or None."""
        # visit(chunk_index, data, error): data is a reused buffer, valid during the call only.
        root = local_root(handle)
        source = handle.get if root is None else root
        return self.reader.read(
            key_index,
            source,
            visit,
            within=self.within,
            on_block=on_block,
            scratch=scratch,
            on_longest=on_longest,
        )

    def read_parts(
        self, handle: StoreHandle, key_index: Sequence[int]
    ) -> tuple[int, list[ChunkPart]] | None:
        """:meth:`read_key` collected: bytes read, ``(chunk_index, copy, error)`` per chunk."""
        parts: list[ChunkPart] = []

        def visit(index: Index, data: memoryview | None, error: FixedUTF32Error | None) -> None:
            parts.append((index, None if data is None else np.array(data, np.uint8), error))

        nread = self.read_key(handle, key_index, visit)
        return None if nread is None else (nread, parts)


def plan_array(node: Node) -> ArrayPlan | None:
    """The :class:`ArrayPlan` of a string array node (None: another data type), or MetadataError."""
    if node.error:
        raise MetadataError(node.error)
    kind = data_type_of(node)
    if kind == FIXED:
        return _fixed_plan(node)
    if kind == STRING and node.zarr_format == 3:
        return _plan_string(node)
    return None


def _fixed_plan(node: Node) -> ArrayPlan:
    """A ``fixed_length_utf32`` array, read by the :class:`KeyReader` of its model."""
    model, meta, key_meta = parse_stored(node.doc)
    reader = KeyReader.build(model, meta.grid, key_meta.grid, node.path)
    return ArrayPlan(
        node.path, FIXED, meta.zarr_format, meta, key_meta, reader, str(meta.fill_value)
    )


def _v3_specs(codecs: Sequence[Any]) -> tuple[CodecSpec, ...]:
    return tuple(parse_codec(c, 3, f"codecs[{i}]") for i, c in enumerate(codecs, start=1))


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
    # A vlen-utf8 chunk has no fixed size: its frames are checked against a bound.
    chain = CodecChain(_v3_specs(codecs[1:]), _UNSIZED_BOUND, exact=False)
    reader = KeyReader(meta.grid, meta.grid, chain, path=node.path)
    return ArrayPlan(node.path, STRING, 3, meta, meta, reader, fill=str(fill))
