"""The one reader of an array's keys: a chunk, or the inner chunks of a shard, to their bytes.

:class:`KeyReader` is built once per array (from its
:class:`~fixedutf32.metadata._model.ArrayModel` and grids, or from a codec
chain for chunks of no fixed size) and reads one key at a time, from a local
directory (:func:`~fixedutf32._source.files.open_chunk_file`: regular files
only, no larger than the key can be, inside ``within``) or from any store
(``get(key)``).  Every frame is checked before it is inflated, every size
against the metadata; each chunk goes to a sink, or why it cannot be read.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from .._checks import as_bytes
from ..errors import CorruptChunkError, FixedUTF32Error, MetadataError
from .chunks import ChunkDecoder
from .codecs import CodecChain
from .files import open_chunk_file
from .grid import ChunkGrid, Index
from .scratch import Scratch, thread_scratch
from .shard import ShardLayout

if TYPE_CHECKING:
    from .._checks import Buffer
    from ..metadata._model import ArrayModel  # the layer above: only its fields are read

__all__ = ["Get", "KeyReader", "OnBlock", "Sink"]

# sink(chunk index, its bytes with the codecs undone, None), or (chunk index,
# None, why it cannot be read); the bytes are a reused buffer, valid during the call.
Sink: TypeAlias = Callable[[Index, "memoryview | None", "FixedUTF32Error | None"], None]
# on_block(chunk index, block, offset): decoded bytes of a chunk as they are read (in cache).
OnBlock: TypeAlias = Callable[[Index, memoryview, int], None]
# get(key): a key's bytes from any store, or None when it is missing.
Get: TypeAlias = Callable[[str], "Buffer | None"]

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


@dataclass(frozen=True)
class KeyReader:
    """Reads the keys of one array and hands each chunk they hold to a sink.

    ``grid`` is the grid of the chunks (inner chunks, when sharded) and
    ``key_grid`` the grid of the keys; ``chain`` undoes a chunk's codecs and
    ``decoder`` sizes it (None for chunks of no fixed size); ``shard`` and
    ``shard_chain`` (the codecs applied to whole shards) for sharded arrays.
    ``path`` is the array's path in the store, before each key.
    """

    grid: ChunkGrid
    key_grid: ChunkGrid
    chain: CodecChain
    decoder: ChunkDecoder | None = None
    shard: ShardLayout | None = None
    shard_chain: CodecChain | None = None
    path: str = ""

    @classmethod
    def build(
        cls, model: ArrayModel, grid: ChunkGrid, key_grid: ChunkGrid, path: str = ""
    ) -> KeyReader:
        """The reader of a ``fixed_length_utf32`` array; MetadataError for codecs it cannot run."""
        specs = model.runnable()
        if model.length_bytes is None or model.endian is None:
            raise MetadataError("the array's data type and byte order are not given")
        shard = model.shard
        inner = specs if shard is None else shard.inner.runnable()
        decoder = ChunkDecoder.build(model.length_bytes, model.endian, grid.chunk_elements, inner)
        if shard is None:
            return cls(grid, key_grid, decoder.chain, decoder, path=path)
        layout = ShardLayout(
            shard.chunks_per_shard(key_grid.chunk_shape),
            shard.index_endian,
            shard.index_checksum,
            shard.index_location,
        )
        bound = layout.count * decoder.max_stored_nbytes + layout.index_nbytes
        outer = CodecChain(specs, bound, exact=False)
        return cls(grid, key_grid, decoder.chain, decoder, layout, outer, path)

    def key(self, key_index: Sequence[int]) -> str:
        """The store key of the key at grid ``key_index``."""
        name = self.key_grid.key(key_index)
        return f"{self.path}/{name}" if self.path else name

    def read(
        self,
        key_index: Sequence[int],
        source: str | Get,
        sink: Sink,
        *,
        within: str | None = None,
        on_block: OnBlock | None = None,
        scratch: Scratch | None = None,
    ) -> int | None:
        """Read the key at ``key_index`` and hand each chunk it holds to ``sink``.

        ``source`` is a local store's directory or ``get(key)``; ``within``
        the real path local files must lie in.  ``on_block`` sees the decoded
        bytes of each chunk before ``sink`` does: block by block as a raw
        local chunk is read (while in cache), else once on the whole chunk.
        Chunks a shard does not hold, or past the array's edge, are left out.
        ``scratch``: the buffers to reuse (default this thread's).  Returns the
        bytes read, or None when the key is missing.
        """
        scratch = thread_scratch() if scratch is None else scratch
        key = self.key(key_index)
        index = tuple(key_index)
        if self.shard is None or self.shard_chain is None:
            return self._read_chunk(source, key, index, sink, within, on_block, scratch)
        try:
            stored = self._stored(source, key, self.shard_chain.max_stored_nbytes, within, scratch)
            if stored is None:
                return None
            shard = self.shard_chain.decode(stored, key=key)
            entries = list(
                self.shard.read_index(
                    shard, key=key, max_chunk_nbytes=self.chain.max_stored_nbytes
                ).entries()
            )
        except _READ_ERRORS as exc:
            sink(index, None, _as_error(key, exc))
            return 0
        grid = self.grid.grid_shape
        for local, start, nbytes in entries:
            chunk = self.shard.chunk_index(index, local)
            if any(i >= g for i, g in zip(chunk, grid)):
                continue  # an entry past the array's edge: nothing reads it
            self._decode(key, chunk, shard[start : start + nbytes], sink, on_block, scratch)
        return stored.nbytes

    def _stored(
        self,
        source: str | Get,
        key: str,
        max_nbytes: int,
        within: str | None,
        scratch: Scratch,
    ) -> memoryview | None:
        """A key's bytes as stored (a reused buffer for local files), checked against its bound."""
        if isinstance(source, str):
            path = os.path.join(source, key)
            file = open_chunk_file(path, key=key, max_nbytes=max_nbytes, within=within)
            if file is None:
                return None
            with file:
                return file.read_into(scratch.bytes("stored", file.size))
        raw = source(key)
        if raw is None:
            return None
        data = as_bytes(raw)
        if data.nbytes > max_nbytes:
            raise CorruptChunkError(
                key, f"it holds {data.nbytes} bytes; a chunk here holds at most {max_nbytes}"
            )
        return data

    def _read_chunk(
        self,
        source: str | Get,
        key: str,
        index: Index,
        sink: Sink,
        within: str | None,
        on_block: OnBlock | None,
        scratch: Scratch,
    ) -> int | None:
        decoder = self.decoder
        if isinstance(source, str) and decoder is not None and self.chain.raw:
            # A raw local chunk: read into the chunk buffer block by block,
            # each block handed on while it is in cache.
            try:
                file = decoder.open_file(os.path.join(source, key), key=key, within=within)
            except _READ_ERRORS as exc:
                sink(index, None, _as_error(key, exc))
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
                    sink(index, None, _as_error(key, exc))
                    return file.size
            sink(index, data, None)
            return file.size
        try:
            stored = self._stored(source, key, self.chain.max_stored_nbytes, within, scratch)
        except _READ_ERRORS as exc:
            sink(index, None, _as_error(key, exc))
            return 0
        if stored is None:
            return None
        self._decode(key, index, stored, sink, on_block, scratch)
        return stored.nbytes

    def _decode(
        self,
        key: str,
        index: Index,
        stored: memoryview,
        sink: Sink,
        on_block: OnBlock | None,
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
            sink(index, None, _as_error(key, exc))
            return
        if on_block is not None:
            on_block(index, data, 0)
        sink(index, data, None)
