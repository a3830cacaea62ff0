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

import dataclasses
import functools
import json
import math
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from .._checks import ByteView, as_bytes
from .._source import (
    ChunkDecoder,
    ChunkGrid,
    CodecChain,
    CodecSpec,
    Scratch,
    ShardDecoder,
    ShardLayout,
    open_chunk_file,
    parse_codec,
    thread_scratch,
)
from .._source.files import is_within, outside_link_reason, read_regular_file
from .._store_kinds import local_root as store_root
from ..errors import CorruptChunkError, FixedUTF32Error, MetadataError
from ..metadata import ArrayMetadata, FixedLengthUTF32, parse_array_metadata
from ..metadata._model import Declined, parse_model
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
    keys : list of str
        Of a group: the keys directly under it that are neither metadata
        documents nor nodes (stray files; the store's root lists the
        conversion's bookkeeping here too), as :func:`walk` found them.
    """

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
    """A metadata document's bytes, or None; local ones read as chunk files are.

    Raises
    ------
    MetadataError
        For a local document that is a FIFO, a device, larger than
        :data:`_MAX_DOCUMENT` or outside ``within`` (nothing is read from it).
    """
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
    """The :class:`Node` at ``path``, or None when no metadata document is there.

    Documents whose keys are in ``skip`` (links out of the store) are not
    read; local ones are read only inside ``within`` (see :func:`walk`).
    """
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
    """Every node at and below ``path``, parents before children.

    Iterative (a stack, not recursion): a hierarchy of any depth is walked
    in memory proportional to its nodes.

    Parameters
    ----------
    handle : StoreHandle
    path : str
    max_depth : int, optional
        Refuse a hierarchy with nodes more than this many levels below
        ``path`` (for a caller whose own work recurses per level).
    skip : collection of str
        Keys not to read or walk into (the links out of the store that
        :func:`outside_links` found, when they are not followed).
    within : str, optional
        The real path of a local store's root: documents are read only
        inside it (a link made since the store was listed is refused).

    Returns
    -------
    list of Node
        Directories under a group that hold keys but no metadata document
        are included as ``"incomplete"`` nodes; plain keys are not nodes.
        Empty when there is nothing at ``path``.

    Raises
    ------
    StoreError
        When a node lies deeper than ``max_depth``.
    """
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


class Codec:
    """One bytes-to-bytes codec of a destination, as :mod:`fixedutf32._source` runs it.

    ``encode`` gives blosc the element size of the data as its typesize
    (the metadata's ``typesize``, else a UTF-32 code unit); ``decode``
    checks the frame before it is inflated.
    """

    __slots__ = ("chain", "spec")

    def __init__(self, spec: CodecSpec) -> None:
        self.spec = spec
        self.chain = CodecChain((spec,), _UNSIZED_BOUND, exact=False)

    def encode(self, data: ByteView) -> ByteView:
        return self.chain.encode(data)

    def decode(self, data: ByteView) -> ByteView:
        return self.chain.decode(data, key="(destination chunk)")


def make_codec(codec: Any, zarr_format: int, where: str = "codecs") -> Codec:
    """One bytes-to-bytes codec from its JSON (V3 object or V2 numcodecs configuration).

    Read with :func:`fixedutf32._source.parse_codec` (its one table of
    defaults) and built by numcodecs now, so that a codec numcodecs cannot
    build fails here.

    Raises
    ------
    MetadataError
        For a codec that cannot be read or built.
    """
    return Codec(parse_codec(codec, zarr_format, where))


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


def local_root(handle: StoreHandle) -> str | None:
    """:func:`fixedutf32._store_kinds.local_root` of the handle's store."""
    return store_root(handle.store)


def local_directory(handle: StoreHandle) -> str | None:
    """The directory holding a store's keys when they are local files, however it is opened.

    ``LocalStore``'s root, or the path of an fsspec store on the local file
    system (``local://``, ``file://`` URLs); None for other stores.
    """
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
    """A key of a local store that is a symbolic link resolving outside the store.

    Attributes
    ----------
    key : str
        The link's key (a chunk, a document, or a directory of keys).
    target : str
        The real path it resolves to.
    """

    key: str
    target: str


def outside_links(handle: StoreHandle, path: str = "") -> list[Link]:
    """Every symbolic link at or below ``path`` of a local store that resolves outside it.

    One walk of the directory tree, links not followed, except links to
    directories inside the store (zarr-python reads through those: they are
    walked once each, so that a loop of links ends).  Containment is decided
    on real paths (:func:`os.path.realpath`, :func:`os.path.commonpath`).
    Stores that are not local files hold no links: an empty list.

    Parameters
    ----------
    handle : StoreHandle
    path : str
        The group or array walked (a safe key path, or ``""``).

    Returns
    -------
    list of Link
        In key order.
    """
    directory = local_directory(handle)
    if directory is None:
        return []
    real = real_root(directory)
    top = os.path.join(directory, path) if path else directory
    if path and not is_within(real, os.path.realpath(top)):
        return [Link(path, os.path.realpath(top))]  # the path itself leads out
    found: list[Link] = []
    entered: set[str] = set()  # real directories entered through a link
    stack = [path]
    while stack:
        where = stack.pop()
        try:
            entries = list(os.scandir(os.path.join(directory, where) if where else directory))
        except OSError:
            continue  # gone, or not a directory: nothing under it
        for entry in entries:
            key = join(where, entry.name)
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if not is_within(real, target):
                    found.append(Link(key, target))
                elif os.path.isdir(target) and target not in entered:
                    entered.add(target)
                    stack.append(key)
            elif entry.is_dir(follow_symlinks=False):
                stack.append(key)
    found.sort(key=lambda link: link.key)
    return found


def link_reason(link: Link, handle: StoreHandle) -> str:
    """Why a link out of the store is refused, in the reader's words."""
    directory = local_directory(handle)
    return outside_link_reason(link.target, real_root(directory) if directory else "")


def _local_keys(
    root: str, path: str, follow: bool = False, entered: set[str] | None = None
) -> list[str]:
    """Every key under ``path`` of a local store: each entry that is not a directory.

    Unlike ``LocalStore.list_prefix``, which lists regular files only, FIFOs,
    devices and symlinks to them are listed too, so that reading them
    reports them rather than calling the chunk missing.  Iterative.  A
    symlinked directory is walked when it resolves inside the store (once:
    a loop of links ends), as zarr-python reads keys through it; one that
    leads out is walked with ``follow``, else listed as a key, which
    :func:`outside_links` names.  ``entered`` collects the real
    directories entered through a link.
    """
    keys: list[str] = []
    entered = set() if entered is None else entered
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
            elif entry.is_symlink() and _is_dir(entry):
                target = os.path.realpath(entry.path)
                if not follow and not is_within(real_root(root), target):
                    keys.append(key)
                elif target not in entered:
                    entered.add(target)
                    stack.append(key)
            else:
                keys.append(key)
    return keys


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


# -- array plans --------------------------------------------------------------


def memory_order(meta: ArrayMetadata) -> Literal["C", "F"]:
    """``meta.order`` as NumPy takes it (parsing admits only "C" and "F")."""
    return "F" if meta.order == "F" else "C"


def _grid(meta: ArrayMetadata) -> ChunkGrid:
    encoding: Literal["default", "v2"] = "v2" if meta.chunk_key_encoding == "v2" else "default"
    separator: Literal["/", "."] = "." if meta.separator == "." else "/"
    return ChunkGrid(meta.shape, meta.chunk_shape, encoding, separator, memory_order(meta))


# Called after each chunk of a key is read: (chunk index, its bytes with the
# codecs undone, None) or (chunk index, None, why it cannot be read).  The
# bytes are a reused buffer: valid during the call only.
ChunkVisit: TypeAlias = Callable[[Index, "memoryview | None", "FixedUTF32Error | None"], None]
# Called on the parts of a chunk as they are read (while in cache): the
# chunk's index, a block of its decoded bytes and where the block starts.
BlockVisit: TypeAlias = Callable[[Index, memoryview, int], None]


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
    chain : CodecChain
        The bytes-to-bytes codecs of one chunk, as the chunk-source layer
        runs them (every frame checked before it is inflated).
    decoder : ChunkDecoder or None
        The chunks' decoder (``fixed_length_utf32`` arrays); None for
        ``string`` arrays, whose chunks have no fixed size.
    shard : ShardDecoder or None
        How the inner chunks sit in a shard (sharded arrays).
    fill : str
        The fill value (missing chunks read as it).
    within : str or None
        The real path of a local store's root that every file read must lie
        in (links out of the store are refused as they are opened); None
        where links are followed.
    """

    path: str
    kind: str
    zarr_format: int
    meta: ArrayMetadata
    key_meta: ArrayMetadata
    chain: CodecChain
    decoder: ChunkDecoder | None = None
    shard: ShardDecoder | None = None
    fill: str = ""
    within: str | None = None
    grid: ChunkGrid = field(init=False, repr=False, compare=False)
    key_grid: ChunkGrid = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "grid", _grid(self.meta))
        object.__setattr__(self, "key_grid", _grid(self.key_meta))

    @property
    def grid_shape(self) -> Index:
        return self.grid.grid_shape

    @property
    def chunk_count(self) -> int:
        return self.grid.chunk_count

    @property
    def key_indices(self) -> Iterator[Index]:
        """Every key's grid index, lazily (the whole grid: prefer :meth:`stored_keys`)."""
        return self.key_grid.indices()

    @property
    def per_shard(self) -> Index | None:
        """Chunks along each axis of a shard (None when not sharded)."""
        return None if self.shard is None else self.shard.layout.chunks_per_shard

    def chunk_nbytes(self) -> int:
        """Bytes of one decoded chunk (the elements times ``length_bytes``)."""
        return self.grid.chunk_elements * self.meta.data_type.length_bytes

    def key(self, key_index: Sequence[int]) -> str:
        """The store key (from the store's root) of the key at grid ``key_index``."""
        return join(self.path, self.key_grid.key(key_index))

    def stored_keys(self, handle: StoreHandle) -> list[Index]:
        """The grid indices of the keys the store holds, listed once, in C order.

        Costs what is stored, not the size of the grid: a grid of 10**12
        chunks with nothing stored lists nothing.  Keys that are not chunk
        keys of the grid (stray files, partial writes) are left out.
        """
        return self.listed_keys(handle)[0]

    def listed_keys(
        self, handle: StoreHandle, skip: Collection[str] = ()
    ) -> tuple[list[Index], list[str]]:
        """:meth:`stored_keys`, and the other keys under the array, from one listing.

        Parameters
        ----------
        handle : StoreHandle
        skip : collection of str
            Keys left out of both lists (links out of the store).

        Returns
        -------
        (list of tuple of int, list of str)
            The grid indices of the chunk keys held, in C order; and every
            other key under the array that is not one of its metadata
            documents (what no reader of the array looks at), in key order.
        """
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

    def _stored(
        self,
        handle: StoreHandle,
        root: str | None,
        key: str,
        max_nbytes: int,
        scratch: Scratch,
    ) -> memoryview | None:
        """A key's bytes as stored (a reused buffer for local files), checked against its bound."""
        if root is not None:
            path = os.path.join(root, key)
            file = open_chunk_file(path, key=key, max_nbytes=max_nbytes, within=self.within)
            if file is None:
                return None
            with file:
                return file.read_into(scratch.bytes("stored", file.size))
        raw = handle.get(key)
        if raw is None:
            return None
        if raw.nbytes > max_nbytes:
            raise CorruptChunkError(
                key, f"it holds {raw.nbytes} bytes; a chunk here holds at most {max_nbytes}"
            )
        return as_bytes(raw)

    def read_key(
        self,
        handle: StoreHandle,
        key_index: Sequence[int],
        visit: ChunkVisit,
        *,
        on_block: BlockVisit | None = None,
        scratch: Scratch | None = None,
    ) -> int | None:
        """Read one key through the chunk-source layer and hand each chunk to ``visit``.

        Local files are opened as :func:`fixedutf32._source.open_chunk_file`
        opens them (regular files no larger than a chunk can be); every
        frame is checked before it is inflated; every size is checked
        against the metadata.  Chunks a shard does not hold are left out.

        Parameters
        ----------
        handle : StoreHandle
        key_index : sequence of int
            The key's index in the key grid.
        visit : callable
            ``visit(chunk_index, data, error)`` for each chunk read:
            ``data`` its bytes with every codec undone (exactly
            :meth:`chunk_nbytes` for ``fixed_length_utf32`` arrays; a reused
            buffer, valid during the call), or ``error`` why not.
        on_block : callable, optional
            ``on_block(chunk_index, block, offset)`` on the decoded bytes of
            a chunk before ``visit``: block by block as a raw local chunk
            file is read (while in cache), else once on the whole chunk.
        scratch : Scratch, optional
            The buffers to reuse; default this thread's.  Pass a new one
            when the bytes given to ``visit`` must outlive the next read.

        Returns
        -------
        int or None
            The bytes read; None when the key is missing.
        """
        scratch = thread_scratch() if scratch is None else scratch
        root = local_root(handle)
        key = self.key(key_index)
        index = tuple(key_index)
        if self.shard is None:
            return self._read_chunk(handle, root, key, index, visit, on_block, scratch)
        try:
            stored = self._stored(handle, root, key, self.shard.max_stored_nbytes, scratch)
            if stored is None:
                return None
            nread = stored.nbytes
            chunks = list(self.shard.chunks(stored, key=key))
        except _READ_ERRORS as exc:
            visit(index, None, _as_error(key, exc))
            return 0
        layout = self.shard.layout
        grid = self.grid_shape
        for local, data in chunks:
            chunk = layout.chunk_index(index, local)
            if any(i >= g for i, g in zip(chunk, grid)):
                continue  # an entry past the array's edge: nothing reads it
            self._decode(key, chunk, data, visit, on_block, scratch)
        return nread

    def read_parts(
        self, handle: StoreHandle, key_index: Sequence[int]
    ) -> tuple[int, list[ChunkPart]] | None:
        """:meth:`read_key`, collected: the bytes read and each chunk's own copy, or its error.

        Returns
        -------
        (int, list) or None
            None when the key is missing; else the bytes read and
            ``(chunk_index, data, error)`` per chunk: ``data`` a new array of
            the chunk's bytes, or ``error`` the exception saying why not.
        """
        parts: list[ChunkPart] = []

        def visit(index: Index, data: memoryview | None, error: FixedUTF32Error | None) -> None:
            parts.append((index, None if data is None else np.array(data, np.uint8), error))

        nread = self.read_key(handle, key_index, visit)
        return None if nread is None else (nread, parts)

    def _read_chunk(
        self,
        handle: StoreHandle,
        root: str | None,
        key: str,
        index: Index,
        visit: ChunkVisit,
        on_block: BlockVisit | None,
        scratch: Scratch,
    ) -> int | None:
        decoder = self.decoder
        if root is not None and decoder is not None and self.chain.raw:
            # A raw local chunk: read into the chunk buffer block by block,
            # each block handed on while it is in cache.
            try:
                file = decoder.open_file(os.path.join(root, key), key=key, within=self.within)
            except _READ_ERRORS as exc:
                visit(index, None, _as_error(key, exc))
                return 0
            if file is None:
                return None
            blocks = None if on_block is None else functools.partial(on_block, index)
            with file:
                try:
                    data = file.read_into(
                        scratch.bytes("chunk", decoder.nbytes),
                        block_bytes=decoder.elements.block_bytes(_READ_BLOCK),
                        on_block=blocks,
                    )
                except _READ_ERRORS as exc:
                    visit(index, None, _as_error(key, exc))
                    return file.size
            visit(index, data, None)
            return file.size
        try:
            stored = self._stored(handle, root, key, self.chain.max_stored_nbytes, scratch)
        except _READ_ERRORS as exc:
            visit(index, None, _as_error(key, exc))
            return 0
        if stored is None:
            return None
        self._decode(key, index, stored, visit, on_block, scratch)
        return stored.nbytes

    def _decode(
        self,
        key: str,
        index: Index,
        stored: memoryview,
        visit: ChunkVisit,
        on_block: BlockVisit | None,
        scratch: Scratch,
    ) -> None:
        decoder = self.decoder
        try:
            if decoder is None:
                data = self.chain.decode(stored, key=key)
            else:
                out = None if decoder.chain.raw else scratch.bytes("chunk", decoder.nbytes)
                data = decoder.decode(stored, key=key, out=out)
        except _READ_ERRORS as exc:
            visit(index, None, _as_error(key, exc))
            return
        if on_block is not None:
            on_block(index, data, 0)
        visit(index, data, None)


# Bytes of a raw local chunk read before ``on_block`` sees them: a chunk of
# up to 4 MiB in one read, larger ones in 4 MiB blocks.  Such a block is still
# in the last-level cache when it is validated, and fewer, larger blocks mean
# fewer hand-offs of the GIL between worker threads (256 KiB blocks made two
# threads slower than one).
_READ_BLOCK = 4 << 20

# What reading a chunk may raise on hostile bytes: reported, never a traceback.
_READ_ERRORS = (FixedUTF32Error, OSError, ValueError)


def _as_error(key: str, exc: Exception) -> FixedUTF32Error:
    if isinstance(exc, FixedUTF32Error):
        return exc
    return CorruptChunkError(key, f"{type(exc).__name__}: {exc}")


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
        return _fixed_plan(node)
    if kind == STRING and node.zarr_format == 3:
        return _plan_string(node)
    return None


def _fixed_plan(node: Node) -> ArrayPlan:
    """A ``fixed_length_utf32`` array: its :class:`~fixedutf32.metadata._model.ArrayModel`
    and the document parsed for the grid (as the inner chunks see it, when sharded)."""
    doc = node.doc
    model = parse_model(doc)
    if isinstance(model, Declined):
        if not model.sharded:
            parse_array_metadata(doc)  # what the document breaks, if it does
        raise MetadataError(f"codecs: expected codecs this tool reads, got {model.reason}")
    shard = model.shard
    if shard is None:
        meta = key_meta = parse_array_metadata(doc)
    else:  # the document as its inner chunks see it, on the grid of shards
        inner_codecs = doc["codecs"][0]["configuration"]["codecs"]
        key_meta = parse_array_metadata({**doc, "codecs": inner_codecs})
        meta = dataclasses.replace(key_meta, chunk_shape=shard.chunk_shape)
    specs = model.runnable()
    elements = cast("Literal['little', 'big']", meta.endian)
    decoder = ChunkDecoder.build(
        meta.data_type.length_bytes, elements, math.prod(meta.chunk_shape), specs
    )
    sharded = None
    if shard is not None:
        per_shard = shard.chunks_per_shard(key_meta.chunk_shape)
        for axis, (s, c) in enumerate(zip(key_meta.chunk_shape, shard.chunk_shape)):
            if s % c:
                raise MetadataError(
                    f"codecs[0].configuration.chunk_shape[{axis}]: expected a divisor of the "
                    f"shard shape {list(key_meta.chunk_shape)}, got {c}"
                )
        layout = ShardLayout(
            per_shard, shard.index_endian, shard.index_checksum, shard.index_location
        )
        count = math.prod(meta.chunk_shape)
        inner = shard.inner.runnable()
        decoder = ChunkDecoder.build(meta.data_type.length_bytes, elements, count, inner)
        sharded = ShardDecoder(layout, decoder, specs)
    return ArrayPlan(
        node.path,
        FIXED,
        meta.zarr_format,
        meta,
        key_meta,
        decoder.chain,
        decoder,
        sharded,
        str(meta.fill_value),
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
    return ArrayPlan(node.path, STRING, 3, meta, meta, chain, fill=str(fill))
