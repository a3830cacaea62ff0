"""A string array straight from its store into NumPy or Arrow, every code unit checked.

:func:`open_array` opens a ``fixed_length_utf32`` array, or a Zarr V2
``<U``/``>U`` array, as ``fixedutf32 check`` opens stores (a directory, a
``.zip``, a URL with ``storage_options``, a zarr store object; its metadata
read and checked by :mod:`fixedutf32.metadata`, links out of a local store
refused).  :class:`StoredArray` reads the whole array or a basic selection
through the package's one reader of keys
(:class:`~fixedutf32._source.reader.KeyReader`) on threads: local files
straight, with no zarr-python on the read path; a chunk read into the result
is checked block by block while in cache, and a shard yields only the inner
chunks a selection touches.
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._arrow import ArrowStrings
from ._pool import new_array
from ._source.elements import STREAM_MIN_BYTES, UTF8_SLACK, ElementLayout
from ._source.reader import RUN_BYTES
from ._utf8_runs import read_utf8_runs
from .errors import (
    FixedUTF32Error,
    InvalidChunkCodePointError,
    InvalidCodePointError,
    MetadataError,
    StoreError,
)

if TYPE_CHECKING:
    from .store._arrays import ArrayPlan
    from .store._stores import StoreHandle

__all__ = ["StoredArray", "open_array"]

# Requests in flight on a store that is not local files, by default.
_REMOTE_THREADS = 16
_INT32_MAX = 2**31 - 1
# Axis of a selection: (start, stop, step) of a slice, or an int (the axis is dropped).
_Item = tuple[int, int, int] | int
_Chunk = tuple[int, ...]

# Keys read between looks at whether another thread met an error.
_GROUP = 64

_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


_buffers = threading.local()
# Buffers of this thread are at least this large: the kernels' pool gives such buffers huge pages,
# which the kernel copies a file into several times faster than into small pages.
_BUFFER_MIN = 4 << 20
# A result from this size on is written past the cache (streaming stores).
_STREAM_MIN = STREAM_MIN_BYTES
# A buffer of a thread larger than this (huge chunks, the rows of a wide array) is freed after use.
_KEEP = 64 << 20
# Bytes of chunks read into a buffer of ours before they are copied to your out (in cache).
_STAGE_BYTES = 4 << 20


def _buffer(name: str, nbytes: int) -> npt.NDArray[np.uint8]:
    """This thread's buffer ``name``, of at least ``nbytes`` (kept for its next read)."""
    buffer: npt.NDArray[np.uint8] | None = getattr(_buffers, name, None)
    if buffer is None or buffer.size < nbytes:
        buffer = new_array(max(nbytes, _BUFFER_MIN), np.uint8)
        setattr(_buffers, name, buffer)
    return buffer[:nbytes]


def _drop_large() -> None:
    """Free this thread's buffers larger than ``_KEEP``."""
    for name, buffer in list(vars(_buffers).items()):
        if isinstance(buffer, np.ndarray) and buffer.size > _KEEP:
            delattr(_buffers, name)


def _bounce(nbytes: int) -> npt.NDArray[np.uint8]:
    """The next ``nbytes`` of this thread's ring of chunk buffers (holds a shard's run at once)."""
    ring = _buffer("ring", 2 * RUN_BYTES + 2 * nbytes)
    at = getattr(_buffers, "at", 0)
    at = 0 if at + nbytes > ring.size else at
    _buffers.at = at + nbytes
    return ring[at : at + nbytes]


def _pool(threads: int) -> ThreadPoolExecutor:
    """A thread pool of ``threads`` workers kept for the process (their scratch stays warm)."""
    with _pools_lock:
        pool = _pools.get(threads)
        if pool is None:
            pool = _pools[threads] = ThreadPoolExecutor(threads, "fixedutf32-read")
        return pool


def open_array(
    store: str | os.PathLike[str] | Any,
    path: str = "",
    *,
    storage_options: dict[str, Any] | None = None,
) -> StoredArray:
    """Open a stored string array for reading, without zarr-python on the read path.

    Parameters
    ----------
    store : str or os.PathLike or zarr.abc.store.Store
        A local directory, a ``.zip`` file, a URL zarr-python opens through
        fsspec (``s3://``, ``memory://``...), or an open zarr store.
    path : str
        The array inside the store (``""``: the store is the array).
    storage_options : dict, optional
        For a URL: fsspec's options (``endpoint_url``, ``key``...).

    Returns
    -------
    StoredArray
        Close it (or use it as a context manager) to close a store it opened.

    Raises
    ------
    StoreError
        If the store cannot be opened, ``path`` is not a path inside it,
        nothing is there, or it is a group or an array of another data type.
    MetadataError
        If the array's metadata breaks the specification, names codecs this
        package cannot run, or lies outside a local store.
    ValueError
        If ``storage_options`` come with a store that is not a URL.

    Examples
    --------
    >>> import tempfile, numpy as np, zarr
    >>> from fixedutf32.array import open_array
    >>> with tempfile.TemporaryDirectory() as where:
    ...     _ = zarr.create_array(where, data=np.array(["ab", "c", "déf"]), chunks=(2,))
    ...     with open_array(where) as array:
    ...         array.shape, array.dtype.str, array.chunks, array[1:].tolist()
    ((3,), '<U3', (2,), ['c', 'déf'])
    """
    from .store._arrays import FIXED, data_type_of, local_root, plan_array, read_node, real_root
    from .store._plans import check_key_path, check_store_arg
    from .store._stores import open_handle

    check_store_arg(store, "store")
    path = check_key_path(path)
    handle = open_handle(store, "r", storage_options)
    try:
        root = local_root(handle)
        within = None if root is None else real_root(root)
        node = read_node(handle, path, within=within)
        where = f"at path {path!r} in {handle.name}" if path else f"in {handle.name}"
        if node is None:
            raise StoreError(f"no Zarr array {where} (no zarr.json or .zarray)")
        if node.error:
            raise MetadataError(node.error)
        if node.kind != "array":
            raise StoreError(f"a Zarr group is {where}; expected an array")
        if data_type_of(node) != FIXED:
            raise StoreError(
                f"the array {where} holds {data_type_of(node)}, not fixed_length_utf32"
            )
        plan = plan_array(node)
        assert plan is not None  # a fixed_length_utf32 array always has a plan
        return StoredArray(handle, replace(plan, within=within), root)
    except BaseException:
        handle.close()
        raise


class StoredArray:
    """A stored ``fixed_length_utf32`` array (or V2 ``U`` array), read on demand.

    Made by :func:`open_array`.  Indexing (``array[1:5, 0]``) reads a basic
    selection (an int or a slice per axis, ``...``) into a new native-order
    ``U`` array, as :meth:`read` does.

    Attributes
    ----------
    shape : tuple of int
    dtype : numpy.dtype
        The native-order ``U`` dtype of what is read (the stored byte order
        may differ).
    chunks : tuple of int
        The shape of a chunk (an inner chunk of a sharded array).
    shards : tuple of int or None
        The shape of a shard (None when not sharded).
    fill_value : str
        What a chunk that is not stored reads as.
    zarr_format : int
    path : str
    """

    def __init__(self, handle: StoreHandle, plan: ArrayPlan, root: str | None) -> None:
        meta = plan.meta
        self._handle = handle
        self._plan = plan
        self._reader = plan.reader
        self._grid = plan.reader.grid
        self._source: str | Callable[[str], Any] = handle.get if root is None else root
        self._local = root is not None
        self._elements = ElementLayout(meta.data_type.length_bytes, meta.endian)  # type: ignore[arg-type]  # "little" or "big"
        self._stored = meta.data_type.to_numpy(meta.endian)
        self.dtype: np.dtype[np.str_] = meta.data_type.to_numpy(sys.byteorder)
        self.shape: tuple[int, ...] = meta.shape
        self.chunks: tuple[int, ...] = meta.chunk_shape
        self.shards = None if plan.per_shard is None else plan.key_meta.chunk_shape
        self.fill_value: str = str(meta.fill_value)
        self.zarr_format: int = meta.zarr_format
        self.path: str = plan.path

    @property
    def ndim(self) -> int:
        """Dimensions of the array."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Elements in the array."""
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array once read."""
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        sharded = "" if self.shards is None else f", shards={self.shards}"
        return (
            f"<StoredArray {self.path or '/'} shape={self.shape} dtype={self.dtype.str} "
            f"chunks={self.chunks}{sharded} in {self._handle.name}>"
        )

    def __enter__(self) -> StoredArray:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store, if :func:`open_array` opened it."""
        self._handle.close()

    def __getitem__(self, selection: Any) -> npt.NDArray[np.str_]:
        return self.read(selection)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> npt.NDArray[Any]:
        data = self.read()
        return data if dtype is None else data.astype(dtype, copy=False)

    def read(
        self,
        selection: Any = ...,
        *,
        out: npt.NDArray[np.str_] | None = None,
        threads: int | None = None,
    ) -> npt.NDArray[np.str_]:
        """Read the array, or a basic selection of it, into a native-order ``U`` array.

        Every code unit read is checked.  Chunks not stored read as
        :attr:`fill_value`.

        Parameters
        ----------
        selection : int, slice, Ellipsis or tuple of them
            NumPy's basic indexing, an int or a slice (any step) per axis.
        out : numpy.ndarray, optional
            Where to read to: of :attr:`dtype` and the selection's shape, any
            layout.  When a chunk fails, its part of ``out`` is left as it
            was; parts of chunks read before may be written.
        threads : int, optional
            Worker threads (default: the CPUs for local files, 16 requests
            in flight for other stores).

        Returns
        -------
        numpy.ndarray
            ``out``, or a new C-order array; 0-d when every axis is an int
            (as zarr-python gives it).

        Raises
        ------
        fixedutf32.zarr.InvalidChunkCodePointError
            At a code unit that is not a Unicode scalar value: the chunk's
            key, the element in it and the element's array coordinates.
        CorruptChunkError, ChunkSizeError
            If a chunk does not decode to its size, is not a regular file or
            lies outside a local store (its key named).
        IndexError, TypeError, ValueError
            For a selection out of bounds or not basic, an ``out`` of another
            dtype or shape, or a bad ``threads``.

        Examples
        --------
        >>> import tempfile, numpy as np, zarr
        >>> from fixedutf32.array import open_array
        >>> data = np.array([["a", "b", "c"], ["d", "e", "f"]], ">U1")
        >>> with tempfile.TemporaryDirectory() as where:
        ...     _ = zarr.create_array(where, data=data, chunks=(1, 2), zarr_format=2)
        ...     array = open_array(where)
        ...     out = np.empty(2, "U1")
        ...     array.read((slice(None), 2), out=out).tolist(), array[1, ::-2].tolist()
        (['c', 'f'], ['f', 'd'])
        """
        items = self._items(selection)
        shape = tuple(len(range(*i)) for i in items if isinstance(i, tuple))
        if out is None:  # large results from the kernels' pool: freed memory, no page faults
            result = new_array(math.prod(shape), self.dtype).reshape(shape)
        else:
            result = self._check_out(out, shape)
        self._read(items, result, out is None, self._threads(threads))
        return result

    def read_arrow(
        self, selection: Any = ..., *, threads: int | None = None, large: bool = False
    ) -> ArrowStrings:
        """Read the array, or a basic selection, as Arrow UTF-8 strings, flat in C order.

        Band by band (the rows of a chunk or shard along the first axis), each
        read into a reused buffer and transcoded while in cache: the whole
        ``U`` array is never built.  A one-dimensional array of raw local
        chunk files is read and transcoded in C (chunks not stored as the
        fill value), the threads' UTF-8 written into one buffer without a
        second copy (two threads meet in its middle).  Any Arrow consumer takes the result
        (``pyarrow.array(strings)``); pyarrow is not needed here.

        Parameters
        ----------
        selection, threads
            As for :meth:`read`.
        large : bool, default False
            ``large_string`` (64-bit offsets) instead of ``string``.

        Returns
        -------
        ArrowStrings
            Trailing U+0000 padding removed, no nulls.  New memory; its
            ``values`` may be a view of a larger buffer sized for the worst
            case (4 bytes a code unit), of which only the pages written are
            touched.

        Raises
        ------
        InvalidChunkCodePointError, CorruptChunkError, ChunkSizeError
            As :meth:`read`.
        ValueError
            If the UTF-8 exceeds 2**31 - 1 bytes and ``large`` is False.

        Examples
        --------
        >>> import tempfile, numpy as np, zarr
        >>> from fixedutf32.array import open_array
        >>> with tempfile.TemporaryDirectory() as where:
        ...     _ = zarr.create_array(where, data=np.array(["ab", "", "€"]), chunks=(2,))
        ...     open_array(where).read_arrow().to_pylist()
        ['ab', '', '€']
        """
        items = self._items(selection)
        threads = self._threads(threads)
        bands = self._bands(items)
        counts = [math.prod(len(range(*i)) for i in band if isinstance(i, tuple)) for band in bands]
        starts = [0, *itertools.accumulate(counts)]
        offsets = new_array(starts[-1] + 1, np.int64)
        # Each thread transcodes a run of bands into a buffer of its own, their offsets straight
        # into ``offsets`` (counted from its buffer's start until the runs are joined).
        cut = [round(i * len(bands) / threads) for i in range(threads + 1)]
        runs = [range(a, b) for a, b in itertools.pairwise(cut) if b > a]
        units = self.dtype.itemsize // 4
        one_axis = len(items) == 1 and isinstance(items[0], tuple) and items[0][2] == 1
        direct = one_axis and self._plan.per_shard is None
        if direct and self._local:  # raw chunk files: each read, checked and transcoded in C
            start, stop, _ = items[0]  # type: ignore[misc]  # one slice
            fast = read_utf8_runs(
                self._reader,
                self._source,
                self._plan.within,
                self.chunks[0],
                (start, stop),
                units,
                threads,
                large,
                lambda n: _pool(n).map,
                self._fill_utf8(),
            )
            if fast is not None:
                return fast

        native = ElementLayout(self.dtype.itemsize, sys.byteorder)  # the bands read (checked)

        def run(bands_run: range) -> tuple[npt.NDArray[np.uint8], int]:
            worst = 4 * units * (starts[bands_run.stop] - starts[bands_run.start])
            values = new_array(worst + UTF8_SLACK, np.uint8)  # touched as written
            end = 0
            for i in bands_run:
                if direct:  # each chunk transcoded from the buffer it is read into
                    end = self._utf8(bands[i], offsets[starts[i] : starts[i + 1] + 1], values, end)
                    continue
                shape = tuple(len(range(*j)) for j in bands[i] if isinstance(j, tuple))
                band = _buffer("band", counts[i] * self.dtype.itemsize)
                self._read(bands[i], band.view(self.dtype).reshape(shape), True, 1)  # checked
                end = native.to_utf8(
                    band, offsets[starts[i] : starts[i + 1] + 1], values, end, validate=False
                )
            _drop_large()
            return values, end

        parts = [run(r) for r in runs] if len(runs) < 2 else list(_pool(len(runs)).map(run, runs))
        return _joined(offsets, [starts[r.start] for r in runs], parts, large)

    # -- the work ---------------------------------------------------------------------------

    def _utf8(
        self,
        items: list[_Item],
        offsets: npt.NDArray[np.int64],
        values: npt.NDArray[np.uint8],
        end: int,
    ) -> int:
        """Transcode a one-axis selection of an unsharded array into ``values`` from ``end``."""
        touched = [_touched(items[0], self.chunks[0])]
        job = _Utf8(self, items, touched, offsets, values, end)
        if touched[0]:
            job.run(list(itertools.product(touched[0])))
            job.fill_until(touched[0][-1] + 1)
        job.finish()
        return job.end

    def _fill_utf8(self) -> bytes | None:
        """The fill value as Arrow holds it (no trailing U+0000), or None if not UTF-8."""
        try:
            return str(np.array(self.fill_value, self.dtype).item()).encode()
        except UnicodeEncodeError:  # a lone surrogate: the careful way names it
            return None

    def _threads(self, threads: int | None) -> int:
        """The worker threads of a read."""
        if threads is None:
            return (os.cpu_count() or 1) if self._local else _REMOTE_THREADS
        if type(threads) is not int or threads < 1:
            raise ValueError(f"threads must be a positive int, got {threads!r}")
        return threads

    def _items(self, selection: Any) -> list[_Item]:
        """A basic selection as one ``(start, stop, step)`` or int per axis."""
        sel = selection if isinstance(selection, tuple) else (selection,)
        if sum(s is Ellipsis for s in sel) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        if any(s is Ellipsis for s in sel):
            at = next(i for i, s in enumerate(sel) if s is Ellipsis)
            sel = sel[:at] + (slice(None),) * (self.ndim - len(sel) + 1) + sel[at + 1 :]
        if len(sel) > self.ndim:
            raise IndexError(
                f"too many indices for array: array is {self.ndim}-dimensional, "
                f"but {len(sel)} were indexed"
            )
        sel = sel + (slice(None),) * (self.ndim - len(sel))
        items: list[_Item] = []
        for axis, (item, n) in enumerate(zip(sel, self.shape)):
            if isinstance(item, slice):
                items.append(item.indices(n))
                continue
            if isinstance(item, (bool, np.bool_)):
                raise TypeError("boolean indices are not a basic selection")
            try:
                i = operator.index(item)
            except TypeError:
                raise TypeError(
                    f"only integers, slices and ellipsis ('...') are read here (a basic "
                    f"selection), got {type(item).__name__} for axis {axis}"
                ) from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            items.append(i % n)
        return items

    def _check_out(self, out: Any, shape: tuple[int, ...]) -> npt.NDArray[np.str_]:
        """``out`` if it can take the selection, else TypeError or ValueError."""
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
        if out.dtype != self.dtype:
            raise TypeError(f"out must be of dtype {self.dtype.str}, got {out.dtype.str}")
        if out.shape != shape:
            raise ValueError(f"out has shape {out.shape}; the selection has shape {shape}")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        return out

    def _bands(self, items: list[_Item]) -> list[list[_Item]]:
        """The selection cut along its first axis into ~4 MiB bands (one if that axis is an int)."""
        if not items or not isinstance(items[0], tuple):
            return [items]
        start, stop, step = items[0]
        row = self.dtype.itemsize * math.prod(
            len(range(*i)) for i in items[1:] if isinstance(i, tuple)
        )
        if step != 1:
            selected, size = range(start, stop, step), max(1, _BUFFER_MIN // max(1, row))
            parts = [selected[i : i + size] for i in range(0, len(selected), size)]
            return [[(r.start, r.stop, r.step), *items[1:]] for r in parts]
        extent = self._plan.key_meta.chunk_shape[0]
        size = extent * max(1, _BUFFER_MIN // max(1, extent * row))  # keys of ~4 MiB together
        cuts = [start, *range((start // size + 1) * size, stop, size), stop]
        return [[(a, b, 1), *items[1:]] for a, b in itertools.pairwise(cuts) if b > a]

    def _read(
        self, items: list[_Item], result: npt.NDArray[np.str_], own: bool, threads: int
    ) -> None:
        """Read the selection ``items`` into ``result``: key by key, on ``threads``."""
        if result.size == 0:
            return
        grid = self._grid
        per = self._plan.per_shard or (1,) * len(items)
        touched = [_touched(i, c) for i, c in zip(items, grid.chunk_shape)]
        keys = list(itertools.product(*[_keys(t, p) for t, p in zip(touched, per)]))
        job = _Job(self, items, touched, result, own)
        if threads == 1 or len(keys) == 1:
            job.run(keys)
        else:
            batches = min(len(keys), 8 * threads)
            size = -(-len(keys) // batches)
            list(
                _pool(threads).map(job.run, [keys[i : i + size] for i in range(0, len(keys), size)])
            )
        job.finish()


def _touched(item: _Item, chunk: int) -> range | list[int]:
    """The chunks along one axis that an item touches, in order."""
    if isinstance(item, int):
        return [item // chunk]
    selected = range(*item)
    if not selected:
        return []
    if abs(item[2]) >= chunk:  # each element in a chunk of its own
        return sorted(i // chunk for i in selected)
    low, high = min(selected[0], selected[-1]), max(selected[0], selected[-1])
    return range(low // chunk, high // chunk + 1)  # steps shorter than a chunk touch them all


def _keys(touched: range | list[int], per: int) -> range | list[int]:
    """The keys along one axis that hold the chunks touched (``per`` chunks a key)."""
    if isinstance(touched, range):
        return range(touched[0] // per, touched[-1] // per + 1) if touched else touched
    return sorted({c // per for c in touched})


def _place(item: _Item, chunk: int, i: int) -> tuple[slice | None, slice | int, bool]:
    """Where chunk ``i`` of one axis goes: its part of the result, its own part, whether whole."""
    if isinstance(item, int):
        return None, item - i * chunk, chunk == 1
    start, stop, step = item
    lo, hi = i * chunk, (i + 1) * chunk
    if step == 1:  # the common case, short
        first, last = max(start, lo), min(stop, hi)
        return (
            slice(first - start, last - start),
            slice(first - lo, last - lo),
            last - first == chunk,
        )
    if step > 0:
        first = start if start >= lo else start + -(-(lo - start) // step) * step
        last = min(stop, hi) - 1
    else:
        first = start if start < hi else start - -(-(start - hi + 1) // -step) * -step
        last = max(stop, lo - 1) + 1
    count = len(range(first, last + (1 if step > 0 else -1), step))
    at = (first - start) // step
    end = first + (count - 1) * step - lo + (1 if step > 0 else -1)
    inner = slice(first - lo, end if end >= 0 else None, step)
    return slice(at, at + count), inner, False


class _Job:
    """One read: the selection, the result, the errors met; ``run`` is called on each thread."""

    def __init__(
        self,
        array: StoredArray,
        items: list[_Item],
        touched: list[range | list[int]],
        result: npt.NDArray[np.str_],
        own: bool,
    ) -> None:
        self.array = array
        self.items = items
        self.touched = touched
        self.result = result
        self.own = own  # result is ours: a chunk may be written there as it is checked
        self.errors: list[tuple[_Chunk, FixedUTF32Error]] = []
        # A chunk's (or, under its first chunk, a shard's) bytes in our result, where ``check``
        # writes each block as it checks it.
        self.places: dict[_Chunk, npt.NDArray[np.uint8]] = {}
        self.stop = False
        grid = array._grid
        self.chunk_shape = grid.chunk_shape
        # A chunk's bytes lie as in the result when C order (or one axis longer than 1).
        self.flat = grid.order == "C" or sum(c > 1 for c in grid.chunk_shape) <= 1
        elements = array._elements
        # Checked and in native order in one pass; a large result written past the cache.
        self.stream = result.nbytes >= _STREAM_MIN
        self.length_bytes = elements.length_bytes
        self.native = ElementLayout(self.length_bytes, sys.byteorder)  # staged chunks' order
        self.chunk_nbytes = grid.chunk_elements * self.length_bytes
        # One axis, step 1: a chunk's place in the result is arithmetic.  Into your ``out``,
        # runs of chunks and whole shards are read into a buffer of ours first (staged) and
        # copied once all are checked, so that a chunk that fails leaves its part as it was.
        line = len(items) == 1 and isinstance(items[0], tuple) and items[0][2] == 1
        self.line = result.view(np.uint8) if line and result.flags.c_contiguous else None

    def regions(self, chunk: _Chunk) -> tuple[tuple[Any, ...], tuple[Any, ...], bool]:
        """A chunk's part of the result, its own part, and whether it is whole."""
        out, inner, whole = [], [], True
        for item, c, i in zip(self.items, self.chunk_shape, chunk):
            o, n, w = _place(item, c, i)
            if o is not None:
                out.append(o)
            inner.append(n)
            whole = whole and w
        return (*out, Ellipsis), tuple(inner), whole

    def at_line(self, chunk: _Chunk) -> int | None:
        """Where a whole chunk starts in a one-axis result of ours (None: not so)."""
        if self.line is None or not self.own:
            return None
        start, stop, _ = self.items[0]  # type: ignore[misc]  # a slice: line is set
        at = chunk[0] * self.chunk_shape[0] - start
        return at if at >= 0 and at + self.chunk_shape[0] <= stop - start else None

    def line_starts(self, keys: Sequence[_Chunk]) -> npt.NDArray[np.intp] | None:
        """Where each key's chunk starts in our one-axis result (bytes), if all lie whole there."""
        if self.line is None or not keys:
            return None
        start, stop, _ = self.items[0]  # type: ignore[misc]  # a slice: line is set
        extent = self.chunk_shape[0]
        at = np.fromiter((k[0] for k in keys), np.intp, len(keys)) * extent - start
        if at.min() < 0 or at.max() + extent > stop - start:
            return None
        starts: npt.NDArray[np.intp] = at * self.length_bytes
        return starts

    def target(self, chunk: _Chunk) -> npt.NDArray[np.uint8]:
        """A buffer of this thread's to read a chunk into; its place in our result noted."""
        # Read into a small buffer still in cache, each block is checked and written to the
        # result in one pass (streaming stores): cheaper than reading straight into the result
        # and checking it there. Your out sees only checked chunks.
        place = self.place_of(chunk)
        if place is not None:
            self.places[chunk] = place
        if self.array._plan.per_shard is None:  # one chunk at a time: the same buffer, in cache
            return _buffer("chunk", self.chunk_nbytes)
        return _bounce(self.chunk_nbytes)  # a run of a shard's chunks lies in it at once

    def place_of(self, chunk: _Chunk) -> npt.NDArray[np.uint8] | None:
        """The bytes of our result that a whole chunk laid out as stored fills, if any."""
        if not self.own:
            return None
        at = self.at_line(chunk)
        if at is not None:
            line: npt.NDArray[np.uint8] = self.line  # type: ignore[assignment]  # at_line: set
            return line[at * self.length_bytes : at * self.length_bytes + self.chunk_nbytes]
        out, _, whole = self.regions(chunk)
        view = self.result[out]
        if not (whole and self.flat and view.flags.c_contiguous):
            return None
        place: npt.NDArray[np.uint8] = view.reshape(-1).view(np.uint8)
        return place

    def span(self, key: _Chunk) -> npt.NDArray[np.uint8] | None:
        """A shard's part of a one-axis result of ours, if it lies whole there (else None)."""
        if self.line is None:
            return None
        start, stop, _ = self.items[0]  # type: ignore[misc]  # a slice: line is set
        extent = self.array._plan.key_meta.chunk_shape[0]
        lo = key[0] * extent
        hi = min(lo + extent, self.array._grid.grid_shape[0] * self.chunk_shape[0])
        if lo < start or hi > stop:
            return None  # hi > stop: the array's last chunk has padding
        return self.line[(lo - start) * self.length_bytes : (hi - start) * self.length_bytes]

    def check(self, chunk: _Chunk, block: memoryview, offset: int) -> None:
        """Check a block of a chunk while in cache (and write it to its place, if noted)."""
        place = self.places.get(chunk)
        try:
            if place is None:
                self.array._elements.validate(block)
            else:
                into = place[offset : offset + block.nbytes]
                self.array._elements.check_into(block, into, stream=self.stream)
        except InvalidCodePointError as exc:
            if not offset:
                raise
            element = exc.index + offset // self.length_bytes
            raise InvalidCodePointError(element, exc.position, exc.code_point) from None

    def run(self, keys: Sequence[_Chunk]) -> None:
        """Read each key in turn (until an error is met anywhere)."""
        try:
            self.run_keys(keys)
        finally:
            _drop_large()

    def run_keys(self, keys: Sequence[_Chunk]) -> None:
        """:meth:`run`, its buffers kept."""
        reader = self.array._reader
        source = self.array._source
        within = self.array._plan.within
        target = self.target
        if self.array._plan.per_shard is None:
            for start in range(0, len(keys), _GROUP):
                if self.stop:
                    return
                group = keys[start : start + _GROUP]
                starts = self.line_starts(group)
                if starts is not None and not self.own:
                    self.run_staged(group, starts)
                    continue
                done = reader.read_many(
                    group,
                    source,
                    self.sink,
                    within=within,
                    on_block=self.check,
                    target=target,
                    into=None if starts is None else self.line,
                    starts=starts,
                )
                for key, nbytes in zip(group, done):
                    if nbytes is None:
                        self.fill(key, set())
            return
        for key in keys:
            if self.stop:
                return
            needed, chunks = self.needed(key)
            seen: set[_Chunk] = set()
            spans: list[npt.NDArray[np.uint8]] = []

            failed: list[FixedUTF32Error] = []

            def span(index: _Chunk) -> npt.NDArray[np.uint8] | None:
                place = self.span(index)
                if place is not None:
                    spans.append(place)
                    if not self.own:  # staged: copied to your out once all of it is checked
                        spans.append(_buffer("span", place.nbytes))
                return spans[-1] if spans else None

            def sink(chunk: _Chunk, data: memoryview | None, error: FixedUTF32Error | None) -> None:
                seen.add(chunk)
                failed.extend(() if error is None else (error,))
                if not spans or error is not None:  # a shard's span: written as it was checked
                    self.sink(chunk, data, error)

            reader.read(
                key,
                source,
                sink,
                within=within,
                on_block=self.check,
                needed=needed,
                target=target,
                span=span,
                in_cache=not self.own,
            )
            if len(spans) == 2 and not failed:
                self.native.place(spans[1], spans[0], sys.byteorder)
            if len(seen) < chunks:
                self.fill(key, seen)

    def run_staged(self, group: Sequence[_Chunk], starts: npt.NDArray[np.intp]) -> None:
        """Whole chunks into your ``out`` at ``starts``: read in C into a buffer of ours a few at
        a time, each run copied once read and checked (a chunk that fails is not)."""
        reader, n = self.array._reader, self.chunk_nbytes
        per = max(1, _STAGE_BYTES // n)
        for first in range(0, len(group), per):
            keys = group[first : first + per]
            stage = _buffer("stage", len(keys) * n)
            seen: set[_Chunk] = set()

            def sink(chunk: _Chunk, data: memoryview | None, error: FixedUTF32Error | None) -> None:
                seen.add(chunk)  # the careful way: placed, or failed
                self.sink(chunk, data, error)

            done = reader.read_many(
                keys,
                self.array._source,
                sink,
                within=self.array._plan.within,
                on_block=self.check,
                target=self.target,
                into=stage,
                starts=np.arange(len(keys), dtype=np.intp) * n,
                in_cache=True,
            )
            read = [i for i, (k, m) in enumerate(zip(keys, done)) if m and tuple(k) not in seen]
            at = starts[first : first + len(keys)]
            line: npt.NDArray[np.uint8] = self.line  # type: ignore[assignment]  # starts: set
            if len(read) == len(keys) and (np.diff(at) == n).all():  # one copy for them all
                self.native.place(stage, line[at[0] : at[0] + len(keys) * n], sys.byteorder)
            else:
                for i in read:  # read in C: checked, in native order
                    self.native.place(
                        stage[i * n : (i + 1) * n], line[at[i] : at[i] + n], sys.byteorder
                    )
            for key, nbytes in zip(keys, done):
                if nbytes is None:
                    self.fill(key, set())

    def sink(self, chunk: _Chunk, data: memoryview | None, error: FixedUTF32Error | None) -> None:
        """A chunk from the reader: placed, or its error kept."""
        if error is not None:
            self.fail(chunk, error)
        else:
            assert data is not None  # the reader gives data or an error
            self.put(chunk, data)

    def in_key(self, key: _Chunk) -> list[range | list[int]]:
        """Along each axis, the chunks of a shard that the selection touches."""
        per = self.array._plan.per_shard or (1,) * len(key)
        axes: list[range | list[int]] = []
        for t, k, p in zip(self.touched, key, per):
            low, high = k * p, (k + 1) * p
            if isinstance(t, range):  # t[i] = t.start + i: cut by arithmetic, not a walk
                axes.append(range(max(t.start, low), min(t.stop, high)))
            else:
                axes.append([c for c in t if low <= c < high])
        return axes

    def needed(self, key: _Chunk) -> tuple[list[int] | None, int]:
        """The flat indices in a shard of the chunks touched (None: all), and how many."""
        per = self.array._plan.per_shard
        if per is None:
            return None, 1
        axes = self.in_key(key)
        count = math.prod(len(axis) for axis in axes)
        grid = self.array._grid.grid_shape
        if count == math.prod(min(p, g - k * p) for k, p, g in zip(key, per, grid)):
            return None, count
        local = [np.asarray(axis) - k * p for axis, k, p in zip(axes, key, per)]
        flat = np.ravel_multi_index(np.meshgrid(*local, indexing="ij"), per).ravel()
        return flat.tolist(), count

    def chunks_of(self, key: _Chunk) -> Iterable[_Chunk]:
        """The chunks of a key that the selection touches."""
        return itertools.product(*self.in_key(key))

    def put(self, chunk: _Chunk, data: memoryview) -> None:
        """Place a checked chunk in the result (there already when its place was noted)."""
        if self.places.pop(chunk, None) is not None:
            return
        out, inner, whole = self.regions(chunk)
        view = self.result[out]
        elements = self.array._elements
        if whole and self.flat and view.flags.c_contiguous:
            elements.place(data, view.reshape(-1), sys.byteorder)
            return
        stored = np.frombuffer(data, self.array._stored)
        view[...] = stored.reshape(self.chunk_shape, order=self.array._grid.order)[inner]

    def fill(self, key: _Chunk, seen: set[_Chunk]) -> None:
        """The fill value where a key's chunks are not stored."""
        for chunk in self.chunks_of(key):
            if chunk not in seen:
                self.result[self.regions(chunk)[0]] = self.array.fill_value

    def fail(self, chunk: _Chunk, error: FixedUTF32Error) -> None:
        """Keep a chunk's error, named as zarr's pipeline names it; stop the read."""
        per = self.array._plan.per_shard or (1,) * len(chunk)
        key = self.array._reader.key([c // p for c, p in zip(chunk, per)])
        if isinstance(error, InvalidCodePointError) and not isinstance(
            error, InvalidChunkCodePointError
        ):
            at = self.array._grid.coordinates(chunk, error.index)
            error = InvalidChunkCodePointError(
                error.index, error.position, error.code_point, key, at
            )
        self.errors.append((chunk, error))
        self.stop = True

    def finish(self) -> None:
        """Raise the error of the first chunk that failed, if any did."""
        if self.errors:
            raise min(self.errors, key=lambda e: e[0])[1]


class _Utf8(_Job):
    """A one-axis read of an unsharded array, each chunk transcoded to UTF-8 as it is checked."""

    # Keys are read in order, so a chunk not stored is filled in when the next one comes.

    def __init__(
        self,
        array: StoredArray,
        items: list[_Item],
        touched: list[range | list[int]],
        offsets: npt.NDArray[np.int64],
        values: npt.NDArray[np.uint8],
        end: int,
    ) -> None:
        super().__init__(array, items, touched, np.empty(0, array.dtype), False)
        self.line = None  # no result: each block is transcoded where it is read
        self.offsets, self.values, self.end = offsets, values, end
        self.next = touched[0][0] if touched[0] else 0
        self.swap = array._elements.swapped

    def selected(self, i: int) -> tuple[int, int]:
        """The array's elements of chunk ``i`` that the selection holds."""
        start, stop, _ = self.items[0]  # type: ignore[misc]  # one slice
        c = self.chunk_shape[0]
        return max(start, i * c), min(stop, (i + 1) * c)

    def transcode(self, units: Any, first: int, count: int, swap: bool) -> None:
        """``count`` elements from array index ``first`` on, as UTF-8 at ``end``."""
        at = first - self.items[0][0]  # type: ignore[index]  # one slice
        offsets = self.offsets[at : at + count + 1]
        layout = self.array._elements if swap else self.native
        self.end = layout.to_utf8(units, offsets, self.values, self.end)

    def fill_until(self, i: int) -> None:
        """The fill value for the chunks before ``i`` not yet given (not stored)."""
        for j in range(self.next, i):
            lo, hi = self.selected(j)
            if hi > lo:
                fill = np.full(hi - lo, self.array.fill_value, self.array.dtype)
                self.transcode(fill, lo, hi - lo, False)
        self.next = max(self.next, i)

    def check(self, chunk: _Chunk, block: memoryview, offset: int) -> None:
        """Check a block of a chunk and transcode the part of it the selection holds."""
        i, c, n = chunk[0], self.chunk_shape[0], self.length_bytes
        self.fill_until(i)
        lo, hi = self.selected(i)
        first = i * c + offset // n
        last = first + block.nbytes // n
        a, z = max(lo, first), min(hi, last)
        at = first  # where the element counting of an error starts, in the array
        try:
            if a > first or z < last:  # the part not selected (padding too) is checked as well
                self.array._elements.validate(block)
            if z > a:
                at = a
                self.transcode(block[(a - first) * n : (z - first) * n], a, z - a, self.swap)
        except InvalidCodePointError as exc:
            element = exc.index + at - i * c
            raise InvalidCodePointError(element, exc.position, exc.code_point) from None
        if last >= (i + 1) * c:
            self.next = i + 1

    def put(self, chunk: _Chunk, data: memoryview) -> None:
        """Nothing: transcoded as it was checked."""

    def fill(self, key: _Chunk, seen: set[_Chunk]) -> None:
        """Nothing: filled in order (:meth:`fill_until`)."""


def _joined(
    offsets: npt.NDArray[np.int64],
    firsts: list[int],
    parts: list[tuple[npt.NDArray[np.uint8], int]],
    large: bool,
) -> ArrowStrings:
    """The runs' values as one array, their offsets counted from its start (one pass each)."""
    nbytes = sum(end for _, end in parts)
    if not large and nbytes > _INT32_MAX:
        raise ValueError(
            f"the strings take {nbytes} bytes of UTF-8, more than a string array's 32-bit "
            f"offsets can address ({_INT32_MAX}); pass large=True"
        )
    values = new_array(nbytes, np.uint8)
    base = 0
    for first, last, (part, end) in zip(firsts, [*firsts[1:], offsets.size - 1], parts):
        values[base : base + end] = part[:end]
        offsets[first] = 0  # a run's first entry, which the run before may have written last
        if base:
            offsets[first:last] += base
        base += end
    offsets[-1] = base
    return ArrowStrings(offsets if large else offsets.astype(np.int32), values, large)
