"""The one reader of an array's keys: a chunk, or the inner chunks of a shard, to their bytes.

:class:`KeyReader` is built once per array and reads one key at a time, from a local directory
(:func:`~fixedutf32._source.files.open_chunk_file`: regular files only, no larger than the key can
be, inside ``within``) or from any store (``get(key)``).  Every frame is checked before it is
inflated, every size against the metadata; each chunk goes to a sink, or why it cannot be read.
A local shard is read index first, then only the inner chunks needed, neighbouring byte ranges
coalesced into reads of at most :data:`RUN_BYTES`, each block checked while in cache.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeGuard

import numpy as np
import numpy.typing as npt

from .._arguments import as_bytes
from ..errors import CorruptChunkError, FixedUTF32Error, InvalidCodePointError, MetadataError
from .chunks import ChunkDecoder
from .codecs import CodecChain, CodecSpec
from .elements import (
    FILE_INVALID,
    FILE_MISSING,
    FILE_SHORT,
    FILE_UNUSUAL,
)
from .files import BLOCK_BYTES, ChunkDirectories, ChunkFile, open_chunk_file
from .grid import ChunkGrid, Index
from .runs import ElementRuns
from .scratch import Scratch, thread_scratch
from .shard import ShardIndex, ShardLayout

if TYPE_CHECKING:
    from .._arguments import Buffer
    from ..metadata._model import ArrayModel  # the layer above: only its fields are read

__all__ = ["RUN_BYTES", "Get", "KeyReader", "OnBlock", "OnLongest", "Sink", "Span", "Target"]

# sink(chunk index, its bytes with the codecs undone, None), or (chunk index,
# None, why it cannot be read); the bytes are a reused buffer, valid during the call.
# (chunk index, None, None): a chunk read through a span smaller than its shard, which
# on_block alone saw.
Sink: TypeAlias = Callable[[Index, "memoryview | None", "FixedUTF32Error | None"], None]
# on_block(chunk index, block, offset): decoded bytes of a chunk as they are read (in cache).
OnBlock: TypeAlias = Callable[[Index, memoryview, int], None]
# get(key): a key's bytes from any store, or None when it is missing.
Get: TypeAlias = Callable[[str], "Buffer | None"]
# target(chunk index): the caller's own memory, exactly a decoded chunk's bytes, to decode it
# straight into (None: the reader's scratch); it may be left holding part of a chunk that fails.
Target: TypeAlias = Callable[[Index], "npt.NDArray[np.uint8] | None"]
# span(shard index): the caller's own memory for every chunk of a shard inside the grid, back to
# back in the shard's C order (exactly their bytes), or None. The reader fills it, checked and in
# native order (not on_block's business), and hands each chunk to sink as a view of it. Read
# through a block in cache (not in_cache), a chunk of up to BLOCK_BYTES that fails is not written.
Span: TypeAlias = Callable[[Index], "npt.NDArray[np.uint8] | None"]

# on_longest(key index, its chunks, the longest string): a whole local shard of raw chunks back
# to back, or a raw local chunk file, none at the array's edge, checked in C with only its longest
# string kept (check).
OnLongest: TypeAlias = Callable[[Index, "list[Index]", int], None]

# Bytes of a raw local chunk read before ``on_block`` sees them: a chunk of
# up to 4 MiB in one read, larger ones in 4 MiB blocks.  Such a block is still
# in the last-level cache when it is validated, and fewer, larger blocks mean
# fewer hand-offs of the GIL between worker threads (256 KiB blocks made two
# threads slower than one).
_READ_BLOCK = 4 << 20
# Chunk files of one read_utf8 call at most (a window: see read_utf8).
_UTF8_FILES = 64

# A shard's neighbouring inner chunks are read in one request of up to this many bytes (at least
# one chunk), across gaps of up to _GAP_BYTES: about half of L2, so that each chunk is still in
# cache when it is checked.
RUN_BYTES = 512 << 10
_GAP_BYTES = 64 << 10

# The bound of a raw shard's stored size: none (the sharding spec allows unused bytes in a shard).
_ANY_SIZE = sys.maxsize

# What reading a chunk may raise on hostile bytes: reported, never a traceback.
_READ_ERRORS = (FixedUTF32Error, OSError, ValueError)


def _as_error(key: str, exc: Exception) -> FixedUTF32Error:
    if isinstance(exc, FixedUTF32Error):
        return exc
    return CorruptChunkError(key, f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class KeyReader:
    """Reads the keys of one array and hands each chunk they hold to a sink."""

    grid: ChunkGrid  # of the chunks (the inner chunks, when sharded)
    key_grid: ChunkGrid  # of the keys
    chain: CodecChain  # undoes a chunk's codecs
    decoder: ChunkDecoder | None = None  # sizes a chunk; None for chunks of no fixed size
    shard: ShardLayout | None = None
    shard_chain: CodecChain | None = None  # the codecs applied to whole shards
    path: str = ""  # the array's path in the store, before each key

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
        return cls.sharded(decoder, layout, grid, key_grid, specs, path)

    @classmethod
    def sharded(
        cls,
        decoder: ChunkDecoder,
        layout: ShardLayout,
        grid: ChunkGrid,
        key_grid: ChunkGrid,
        specs: Sequence[CodecSpec] = (),
        path: str = "",
    ) -> KeyReader:
        """The reader of shards laid out as ``layout``, ``specs`` the codecs on whole shards."""
        bound = layout.count * decoder.max_stored_nbytes + layout.index_nbytes
        outer = CodecChain(tuple(specs), bound, exact=False)
        return cls(grid, key_grid, decoder.chain, decoder, layout, outer, path)

    @functools.cached_property
    def _dense_steps(self) -> npt.NDArray[np.uint64]:
        # where each inner chunk of a dense shard starts, from the first (C order)
        assert self.shard is not None and self.decoder is not None  # dense shards only
        return np.arange(self.shard.count, dtype=np.uint64) * np.uint64(self.decoder.nbytes)

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
        needed: Collection[int] | npt.NDArray[np.intp] | None = None,
        target: Target | None = None,
        span: Span | None = None,
        on_longest: OnLongest | None = None,
        in_cache: bool = False,
        key: str | None = None,
    ) -> int | None:
        """Read the key at ``key_index`` and hand each chunk it holds to ``sink``."""
        # Returns the key's stored size, 0 if unreadable (the error went to sink), None if missing.
        # What on_block raises goes to sink as the chunk's error; chunks not held or past the edge
        # are left out.  needed: flat C-order inner chunks (None: all); see Target, Span, OnLongest.
        scratch = thread_scratch() if scratch is None else scratch
        key = self.key(key_index) if key is None else key
        index = tuple(key_index)
        shard, chain = self.shard, self.shard_chain
        if shard is None or chain is None:
            return self._read_chunk(
                source, key, index, sink, within, on_block, scratch, target, on_longest
            )
        if isinstance(source, str) and chain.raw:
            return self._read_local_shard(
                source,
                key,
                index,
                sink,
                within,
                on_block,
                scratch,
                needed,
                target,
                span,
                on_longest,
                in_cache,
            )
        try:
            # Held in memory already (a store's bytes): a raw shard may be any size, as unused
            # bytes between its chunks are allowed; one under codecs of its own is read whole
            # and inflated, so its stored size is bounded.
            bound = _ANY_SIZE if chain.raw else chain.max_stored_nbytes
            stored = self._stored(source, key, bound, within, scratch)
            if stored is None:
                return None
            data = chain.decode(stored, key=key)
            found = shard.read_index(data, key=key, max_chunk_nbytes=self.chain.max_stored_nbytes)
        except _READ_ERRORS as exc:
            sink(index, None, _as_error(key, exc))
            return 0
        for chunk, start, nbytes in self._entries(index, found, needed):
            piece = data[start : start + nbytes]
            self._decode(key, chunk, piece, sink, on_block, scratch, target)
        return stored.nbytes

    def read_many(
        self,
        key_indices: Iterable[Sequence[int]],
        source: str | Get,
        sink: Sink,
        *,
        within: str | None = None,
        on_block: OnBlock | None = None,
        scratch: Scratch | None = None,
        target: Target | None = None,
        into: npt.NDArray[np.uint8] | None = None,
        starts: npt.NDArray[np.intp] | None = None,
        in_cache: bool = False,
        keys: Sequence[str] | None = None,
    ) -> list[int | None]:
        """:meth:`read` of each key in turn, raw local files the short way; what each returned."""
        # The short way: each directory opened once, each file under it without following links, an
        # unusual one through read.  into/starts: files read in C to into[starts[i]:], only errors
        # to sink; unless in_cache, a failing chunk of up to BLOCK_BYTES leaves its place as it was.
        scratch = thread_scratch() if scratch is None else scratch
        decoder = self.decoder
        key_indices = list(key_indices)
        names = [self.key(k) for k in key_indices] if keys is None else list(keys)
        if decoder is None or not self._raw_files(source) or decoder.nbytes > _READ_BLOCK:
            return [
                self.read(
                    k,
                    source,
                    sink,
                    within=within,
                    on_block=on_block,
                    scratch=scratch,
                    target=target,
                    key=name,
                )
                for k, name in zip(key_indices, names)
            ]
        done: list[int | None] = []
        buffer = as_bytes(scratch.bytes("chunk", decoder.nbytes))
        with ChunkDirectories(source, within) as directories:
            if into is not None and starts is not None:
                return self._read_into(
                    key_indices,
                    names,
                    source,
                    directories,
                    into,
                    starts,
                    sink,
                    within,
                    on_block,
                    scratch,
                    target,
                    in_cache,
                )
            for key_index, key in zip(key_indices, names):
                index = tuple(key_index)
                place = None if target is None else target(index)
                data = buffer if place is None else as_bytes(place)
                read = directories.read(key, data)
                if read is None:
                    done.append(None)
                elif read:
                    done.append(decoder.nbytes)
                    self._hand_on(key, index, data, sink, on_block)
                else:
                    done.append(
                        self._read_chunk(
                            source, key, index, sink, within, on_block, scratch, target
                        )
                    )
        return done

    def read_runs(
        self,
        source: str,
        key: str,
        runs: ElementRuns,
        *,
        within: str | None = None,
        scratch: Scratch | None = None,
    ) -> npt.NDArray[np.str_] | None:
        """The elements ``runs`` selects of a raw local chunk, read by byte range and checked."""
        # None if the key is missing; else a new array in the stored byte order.  An invalid
        # element's InvalidCodePointError counts it in the chunk (stored order), not the selection.
        decoder = self.decoder
        assert decoder is not None and self.chain.raw  # byte ranges of raw chunks only
        file = decoder.open_file(os.path.join(source, key), key=key, within=within)
        if file is None:
            return None
        elements = decoder.elements
        size = elements.length_bytes
        scratch = thread_scratch() if scratch is None else scratch
        stored = scratch.bytes("runs", int(runs.lengths.sum()) * size)
        with file:
            for start, length, base in zip(
                runs.starts.tolist(), runs.lengths.tolist(), runs.bases.tolist()
            ):
                file.read_at(start * size, stored[base * size : (base + length) * size])
        # take(), not [...]: a 0-d selection would give a NumPy scalar, in native order
        values = np.frombuffer(stored, elements.dtype).take(runs.positions.reshape(-1))
        try:
            elements.validate(values)
        except InvalidCodePointError as exc:
            element = int(runs.selected.reshape(-1)[exc.index])
            raise InvalidCodePointError(element, exc.position, exc.code_point) from None
        return values.reshape(runs.positions.shape)

    def _read_into(
        self,
        key_indices: list[Sequence[int]],
        names: list[str],
        source: str,
        directories: ChunkDirectories,
        into: npt.NDArray[np.uint8],
        starts: npt.NDArray[np.intp],
        sink: Sink,
        within: str | None,
        on_block: OnBlock | None,
        scratch: Scratch,
        target: Target | None,
        in_cache: bool,
    ) -> list[int | None]:
        """:meth:`read_many`'s keys straight into ``into``: runs of one directory in C."""
        assert self.decoder is not None  # raw chunks of a fixed size only
        nbytes, elements = self.decoder.nbytes, self.decoder.elements
        bounce = None if in_cache else self._bounce(scratch)
        keys = [name.rpartition("/") for name in names]
        done: list[int | None] = [nbytes] * len(keys)
        first = 0
        while first < len(keys):
            head = keys[first][0]
            last = first + 1
            while last < len(keys) and keys[last][0] == head:
                last += 1
            directory = directories.directory(head)
            if directory is None:  # no such directory: none of these chunks is stored
                done[first:last] = [None] * (last - first)
                first = last
                continue
            at = first
            files = [os.fsencode(name) for _, _, name in keys[first:last]]
            while at < last:
                count, outcome, error = (
                    elements.read_files(
                        directory, files[at - first :], into, starts[at:last], nbytes, bounce
                    )
                    if directory >= 0
                    else (0, FILE_UNUSUAL, None)
                )
                at += count
                if at == last:
                    break
                index = tuple(key_indices[at])
                if outcome == FILE_MISSING:
                    done[at] = None
                elif outcome == FILE_INVALID and error is not None:
                    sink(index, None, _as_error(names[at], error))
                else:  # the careful way says what is wrong with it
                    done[at] = self._read_chunk(
                        source, names[at], index, sink, within, on_block, scratch, target
                    )
                at += 1
            first = last
        return done

    def read_utf8(
        self,
        key_indices: Sequence[Sequence[int]],
        source: str | Get,
        ranges: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]],
        offsets: npt.NDArray[np.int32] | npt.NDArray[np.int64],
        first: int,
        values: npt.NDArray[np.uint8],
        bounds: tuple[int, int],
        *,
        backward: bool = False,
        within: str | None = None,
        fill: bytes | None = None,
    ) -> int | None:
        """Elements ``ranges[0][i]:ranges[1][i]`` of each key's chunk as Arrow UTF-8, in C."""
        # Returns where the UTF-8 ends (backward: starts), never passing bounds[1]; None if the keys
        # are not raw local files, or one is unusual, invalid or missing without fill: the caller
        # then reads the careful way (values and offsets may hold partial output).
        decoder = self.decoder
        if decoder is None or not self._raw_files(source):
            return None
        bounce = self._bounce(thread_scratch())
        keys = [self.key(k).rpartition("/") for k in key_indices]
        # Where each key's elements start among the offsets' entries.
        entry = first + np.concatenate(([0], np.cumsum(ranges[1] - ranges[0])))
        pos, limit = bounds

        def filled(i: int) -> None:  # key i is not stored: its elements are the fill value
            nonlocal pos
            assert fill is not None  # called only with a fill
            count = int(entry[i + 1] - entry[i])
            size = count * len(fill)
            start = pos - size if backward else pos
            if start < limit if backward else start + size > limit:  # pragma: no cover
                raise ValueError(f"the fill value's UTF-8 passes the limit {limit}")
            values[start : start + size] = np.frombuffer(fill * count, np.uint8)
            offsets[entry[i] : entry[i + 1]] = start + np.arange(count) * len(fill)
            pos = start if backward else start + size

        # Runs of keys under one directory, in the order they are written.
        runs = [list(g) for _, g in itertools.groupby(range(len(keys)), lambda i: keys[i][0])]
        with ChunkDirectories(source, within) as directories:
            for run in reversed(runs) if backward else runs:
                directory = directories.directory(keys[run[0]][0])
                if (directory is None and fill is None) or (directory or 0) < 0:
                    return None  # unusual, or nothing stored and no fill: the careful way
                low, high = run[0], run[-1] + 1  # the keys of the run not yet done
                while low < high:
                    # At most _UTF8_FILES keys a call, so that a run with many chunks not stored
                    # costs in proportion to its keys (each call starts again after one).
                    a, b = (
                        (max(low, high - _UTF8_FILES), high)
                        if backward
                        else (low, min(high, low + _UTF8_FILES))
                    )
                    if directory is None:  # no such directory: none of these is stored
                        done, outcome = 0, FILE_MISSING
                    else:
                        done, outcome, _, pos = decoder.elements.read_utf8(
                            directory,
                            [os.fsencode(keys[i][2]) for i in range(a, b)],
                            (ranges[0][a:b], ranges[1][a:b]),
                            decoder.nbytes,
                            bounce,
                            offsets,
                            int(entry[a]),
                            values,
                            (pos, limit),
                            backward,
                        )
                    if backward:
                        high -= done
                    else:
                        low += done
                    if done == b - a:  # the whole window (outcome 0)
                        continue
                    if outcome != FILE_MISSING or fill is None:
                        return None
                    filled(high - 1 if backward else low)
                    if backward:
                        high -= 1
                    else:
                        low += 1
        return int(pos)

    def _raw_files(self, source: str | Get) -> TypeGuard[str]:
        """Whether the keys are raw chunk files of a fixed size in a local directory (POSIX)."""
        return (
            isinstance(source, str)
            and self.shard is None
            and self.decoder is not None
            and self.chain.raw
            and ChunkDirectories.usable
        )

    @staticmethod
    def _bounce(scratch: Scratch) -> memoryview:
        """The block buffer in cache that caller's memory is filled through."""
        # Read in place, a cold result's lines are fetched from memory before they are written;
        # through a block in cache they are only written, with non-temporal stores (measured:
        # 0.66 -> 0.82 of the floor for whole 8 MiB shards into a 256 MiB result).
        return as_bytes(scratch.bytes("block", BLOCK_BYTES))

    def _entries(
        self,
        index: Index,
        found: ShardIndex,
        needed: Collection[int] | npt.NDArray[np.intp] | None,
    ) -> list[tuple[Index, int, int]]:
        """``(chunk index, offset, nbytes)`` of chunks held, needed and in the grid, by offset."""
        assert self.shard is not None  # sharded arrays only
        present = found.present
        if needed is not None:
            wanted = np.zeros_like(present)
            wanted[needed if isinstance(needed, np.ndarray) else np.fromiter(needed, np.intp)] = 1
            present = present & wanted
        local = np.flatnonzero(present)
        per = self.shard.chunks_per_shard
        coords = [
            np.asarray(c) + i * n for c, i, n in zip(np.unravel_index(local, per), index, per)
        ]
        inside = np.ones(local.size, bool)
        for c, g in zip(coords, self.grid.grid_shape):
            inside &= c < g  # an entry past the array's edge: nothing reads it
        order = np.argsort(found.offsets[local[inside]], kind="stable")
        chunks = zip(*(c[inside][order].tolist() for c in coords)) if coords else iter([()])
        picked = local[inside][order]
        offsets, nbytes = found.offsets[picked].tolist(), found.nbytes[picked].tolist()
        return [(tuple(c), o, m) for c, o, m in zip(chunks, offsets, nbytes)]

    def _read_local_shard(
        self,
        root: str,
        key: str,
        index: Index,
        sink: Sink,
        within: str | None,
        on_block: OnBlock | None,
        scratch: Scratch,
        needed: Collection[int] | npt.NDArray[np.intp] | None,
        target: Target | None,
        span: Span | None,
        on_longest: OnLongest | None = None,
        in_cache: bool = False,
    ) -> int | None:
        """A local shard without codecs of its own: its index, then runs of the chunks needed."""
        assert self.shard is not None and self.shard_chain is not None  # sharded arrays only
        layout = self.shard
        try:
            # Any size: only the index and the ranges it points at (each at most an inner
            # chunk's bound) are read, and unused bytes between chunks are allowed.
            file = open_chunk_file(
                os.path.join(root, key), key=key, max_nbytes=_ANY_SIZE, within=within
            )
        except _READ_ERRORS as exc:
            sink(index, None, _as_error(key, exc))
            return 0
        if file is None:
            return None
        with file:
            size = file.size
            try:
                raw: Buffer = b""
                if size >= layout.index_nbytes:  # else parse_index says it is too small
                    raw = file.read_at(
                        layout.index_offset(size), scratch.bytes("index", layout.index_nbytes)
                    )
                found = layout.parse_index(
                    raw, size, key=key, max_chunk_nbytes=self.chain.max_stored_nbytes
                )
            except _READ_ERRORS as exc:
                sink(index, None, _as_error(key, exc))
                return 0
            wanted = span is not None or on_longest is not None
            usable = wanted and needed is None and ChunkDirectories.usable  # POSIX
            dense = self._dense(index, found) if usable else None
            if dense is not None and on_longest is not None:
                longest = self._dense_longest(file, *dense, scratch)
                if longest is not None:
                    on_longest(index, dense[0], longest)
                    return size
            place = None if dense is None or span is None else span(index)
            if dense is not None and place is not None:
                self._read_span(file, key, *dense, as_bytes(place), sink, scratch, in_cache)
                return size
            entries = self._entries(index, found, needed)
            start = 0
            while start < len(entries):
                stop = start + 1
                _, begin, end = entries[start]
                end += begin
                while stop < len(entries):
                    _, offset, nbytes = entries[stop]
                    if offset - end > _GAP_BYTES or offset + nbytes - begin > RUN_BYTES:
                        break
                    end = max(end, offset + nbytes)
                    stop += 1
                run = entries[start:stop]
                self._read_run(file, key, run, begin, end, sink, on_block, scratch, target)
                start = stop
        return size

    def _dense(self, index: Index, found: ShardIndex) -> tuple[list[Index], int] | None:
        """A shard's chunks in the grid (C order) and their start, if raw and back to back."""
        assert self.shard is not None  # sharded arrays only
        decoder = self.decoder
        if decoder is None or not self.chain.raw:
            return None
        per = self.shard.chunks_per_shard
        inside = [min(p, g - i * p) for i, p, g in zip(index, per, self.grid.grid_shape)]
        n = decoder.nbytes
        if inside == list(per):  # the whole shard inside the grid: one comparison for all
            offsets = found.offsets
            if not (
                offsets.size
                and found.present.all()
                and (offsets == offsets[0] + self._dense_steps).all()
                and (found.nbytes == n).all()
            ):
                return None
        else:  # an edge shard: its chunks inside the grid
            axes = np.meshgrid(*[np.arange(k) for k in inside], indexing="ij")
            local = np.ravel_multi_index(axes, per).ravel()
            offsets = found.offsets[local]
            if not (
                offsets.size
                and found.present[local].all()
                and (found.nbytes[local] == n).all()
                and (np.diff(offsets) == n).all()
            ):
                return None
        ranges = [range(i * p, i * p + k) for i, p, k in zip(index, per, inside)]
        return list(itertools.product(*ranges)), int(offsets[0])

    def _dense_longest(
        self, file: ChunkFile, chunks: list[Index], begin: int, scratch: Scratch
    ) -> int | None:
        """A dense shard's longest string, checked in C; None at the array's edge or on a fault."""
        assert self.decoder is not None  # dense shards only
        if self.grid.is_edge(chunks[-1]):  # its last chunk is at the edge if any is
            return None
        nbytes = self.decoder.nbytes * len(chunks)
        outcome, _, longest = self.decoder.elements.read_longest(
            file.fileno(), begin, nbytes, self._bounce(scratch)
        )
        return longest if outcome == 0 else None

    def _read_span(
        self,
        file: ChunkFile,
        key: str,
        chunks: list[Index],
        begin: int,
        place: memoryview,
        sink: Sink,
        scratch: Scratch,
        in_cache: bool,
    ) -> None:
        """A dense shard's chunks straight into ``place``, checked and put in native order, in C."""
        assert self.decoder is not None  # dense shards only
        n, total = self.decoder.nbytes, self.decoder.nbytes * len(chunks)
        if place.nbytes != total:
            raise ValueError(f"the span holds {place.nbytes} bytes; the chunks {total}")
        bounce = None
        if not in_cache:  # whole chunks a block: a chunk that fails is not written to place
            bounce = self._bounce(scratch)
            bounce = bounce[: max(n, bounce.nbytes - bounce.nbytes % n)]
        outcome, error = self.decoder.elements.read_checked(file.fileno(), begin, place, bounce)
        if outcome == FILE_SHORT:
            error = CorruptChunkError(
                key, f"the file shrank while it was read ({file.size} bytes at first)"
            )
        if error is not None:
            at = 0  # the chunk it met, and the element in that chunk
            if isinstance(error, InvalidCodePointError):
                at, element = divmod(error.index, n // self.decoder.elements.length_bytes)
                error = InvalidCodePointError(element, error.position, error.code_point)
            sink(chunks[at], None, _as_error(key, error))
            return
        for k, chunk in enumerate(chunks):
            sink(chunk, place[k * n : (k + 1) * n], None)

    def _read_run(
        self,
        file: ChunkFile,
        key: str,
        run: list[tuple[Index, int, int]],
        begin: int,
        end: int,
        sink: Sink,
        on_block: OnBlock | None,
        scratch: Scratch,
        target: Target | None,
    ) -> None:
        """Neighbouring inner chunks of a shard in one read, each then decoded and handed on."""
        decoder = self.decoder
        places = None
        if target is not None and decoder is not None and self.chain.raw:
            # Read in one scatter only when each chunk starts where the one before it ends: chunks
            # that share bytes beside a gap of the same size add up to the run's length too.
            size = decoder.nbytes
            dense = all(n == size and at == begin + i * size for i, (_, at, n) in enumerate(run))
            places = [target(chunk) for chunk, _, _ in run] if dense else None
        try:
            if places is not None and all(p is not None for p in places):
                file.read_scatter(begin, places)  # type: ignore[arg-type]  # none is None
            else:
                places = None
                data = file.read_at(begin, scratch.bytes("run", end - begin))
        except _READ_ERRORS as exc:
            for chunk, _, _ in run:
                sink(chunk, None, _as_error(key, exc))
            return
        for i, (chunk, offset, nbytes) in enumerate(run):
            if places is not None:
                self._hand_on(key, chunk, as_bytes(places[i]), sink, on_block)
            else:
                piece = data[offset - begin : offset - begin + nbytes]
                self._decode(key, chunk, piece, sink, on_block, scratch, target)

    def _hand_on(
        self, key: str, index: Index, data: memoryview, sink: Sink, on_block: OnBlock | None
    ) -> None:
        """``on_block`` on a whole decoded chunk, then ``sink`` (its error, if it raised)."""
        if on_block is not None:
            try:
                on_block(index, data, 0)
            except _READ_ERRORS as exc:
                sink(index, None, _as_error(key, exc))
                return
        sink(index, data, None)

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
        target: Target | None = None,
        on_longest: OnLongest | None = None,
    ) -> int | None:
        """One unsharded key: a raw local chunk block by block, else as stored, then decoded."""
        decoder = self.decoder
        if isinstance(source, str) and decoder is not None and self.chain.raw:
            # A raw local chunk: read into its place (or the chunk buffer) block by block, each
            # block handed on while it is in cache.
            try:
                file = decoder.open_file(os.path.join(source, key), key=key, within=within)
            except _READ_ERRORS as exc:
                sink(index, None, _as_error(key, exc))
                return 0
            if file is None:
                return None
            place = None if target is None else target(index)
            blocks = None if on_block is None else functools.partial(on_block, index)
            with file:
                if on_longest is not None and not self.grid.is_edge(index):
                    # Only checked, in C through a block in cache; one that fails is read below.
                    outcome, _, longest = decoder.elements.read_longest(
                        file.fileno(), 0, decoder.nbytes, self._bounce(scratch)
                    )
                    if outcome == 0:
                        on_longest(index, [index], longest)
                        return file.size
                try:
                    data = file.read_into(
                        scratch.bytes("chunk", decoder.nbytes) if place is None else place,
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
        self._decode(key, index, stored, sink, on_block, scratch, target)
        return stored.nbytes

    def _decode(
        self,
        key: str,
        index: Index,
        stored: memoryview,
        sink: Sink,
        on_block: OnBlock | None,
        scratch: Scratch,
        target: Target | None = None,
    ) -> None:
        """Undo a stored chunk's codecs (into its ``target`` place, if any) and hand it on."""
        decoder = self.decoder
        try:
            if decoder is None:
                data = self.chain.decode(stored, key=key)
            else:
                out = None if target is None else target(index)
                if out is None and not decoder.chain.raw:
                    out = scratch.bytes("chunk", decoder.nbytes)
                data = decoder.decode(stored, key=key, out=out)
        except _READ_ERRORS as exc:
            sink(index, None, _as_error(key, exc))
            return
        self._hand_on(key, index, data, sink, on_block)
