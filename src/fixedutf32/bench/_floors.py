"""The floors of ``fixedutf32 bench --zarr``: the same files read or written plainly, on as
many threads as the configuration compared (no checks, no byte swap, no Python per element)."""

from __future__ import annotations

import os
import pathlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

_Item = TypeVar("_Item")
Place = tuple[pathlib.Path, slice]  # a file, and where its bytes go


def thread_count(threads: int | None) -> int:
    """Threads a configuration uses: ``threads``, or zarr's default (one per CPU)."""
    return threads or os.cpu_count() or 1


def _raw(array: npt.NDArray[np.generic]) -> memoryview:
    # NumPy declares the buffer protocol of an array for Python >= 3.12 only.
    return memoryview(array.view(np.uint8))  # type: ignore[arg-type,unused-ignore]


@dataclass(frozen=True)
class FileSlices:
    """The chunk (or shard) files of a one-dimensional array, in order, ``nbytes`` of array
    data each (the last may hold fewer), ``total`` bytes in all."""

    paths: tuple[pathlib.Path, ...]
    nbytes: int
    total: int

    @classmethod
    def of(cls, directory: pathlib.Path, nbytes: int, total: int) -> FileSlices:
        """The chunk files ``directory/c/0, c/1, ...`` of a one-dimensional V3 array."""
        count = -(-total // nbytes)
        return cls(tuple(directory / "c" / str(i) for i in range(count)), nbytes, total)

    def slices(self) -> list[Place]:
        return [
            (path, slice(i * self.nbytes, min((i + 1) * self.nbytes, self.total)))
            for i, path in enumerate(self.paths)
        ]


def on_threads(work: Callable[[_Item], object], items: Sequence[_Item], threads: int) -> None:
    """``work`` on each item: one share of consecutive items per thread, as pipelines split."""
    size = max(1, -(-len(items) // max(threads, 1)))
    shares = [items[i : i + size] for i in range(0, len(items), size)]
    if threads <= 1 or len(shares) <= 1:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda share: [work(item) for item in share], shares))


def read_floor_threads(
    files: FileSlices,
    dtype: np.dtype[np.str_],
    threads: int,
    *,
    zstd: bool = False,
    buffered: bool = False,
) -> npt.NDArray[np.str_]:
    """The files' bytes in one new array of ``dtype``: ``readinto`` their slice (``buffered``:
    into a reused buffer, then copied), or zstd-decompressed into it; missing files unset."""
    out = np.empty(files.total // dtype.itemsize, dtype)
    raw = _raw(out)
    decompress = None
    if zstd:
        import numcodecs

        decompress = numcodecs.Zstd().decode
    buffers = threading.local()

    def read(item: Place) -> None:
        path, where = item
        try:
            file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        n = where.stop - where.start
        with file:
            if decompress is None and buffered:
                if getattr(buffers, "buffer", None) is None:
                    buffers.buffer = memoryview(bytearray(files.nbytes))
                file.readinto(buffers.buffer[:n])
                raw[where] = buffers.buffer[:n]
            elif decompress is None:
                file.readinto(raw[where])  # a shard's index, after the data, is left unread
            elif n == files.nbytes:
                decompress(file.read(), out=raw[where])
            else:  # the edge chunk: stored whole, of which the array holds the start
                raw[where] = memoryview(decompress(file.read())).cast("B")[:n]

    on_threads(read, files.slices(), threads)
    return out


def read_files(paths: Sequence[pathlib.Path], out: npt.NDArray[np.uint8], threads: int) -> int:
    """Each file ``readinto`` its place in ``out``, one after another as listed (``out`` at
    least their total size); the bytes read."""
    raw, at, places = _raw(out), 0, []
    for path in paths:
        size = path.stat().st_size
        places.append((path, slice(at, at + size)))
        at += size
    counts = [0] * len(places)

    def read(index: int) -> None:
        path, where = places[index]
        with open(path, "rb", buffering=0) as file:
            counts[index] = file.readinto(raw[where]) or 0

    on_threads(read, range(len(places)), threads)
    return sum(counts)


def stored_files(paths: Sequence[pathlib.Path]) -> tuple[npt.NDArray[np.uint8], int]:
    """The bytes of ``paths`` one after another (a new array), and the size of the first;
    each but the last of the first's size, as :class:`FileSlices` places them."""
    sizes = [path.stat().st_size for path in paths]
    if len(set(sizes[:-1])) > 1 or (sizes and sizes[-1] > sizes[0]):
        raise ValueError(f"expected files of one size but the last, got sizes {sizes}")
    stored = np.empty(sum(sizes), np.uint8)
    read_files(paths, stored, 1)
    return stored, sizes[0] if sizes else 0


def write_floor(
    files: FileSlices,
    stored: npt.NDArray[np.str_] | npt.NDArray[np.uint8],
    threads: int,
    *,
    zstd: bool = False,
) -> pathlib.Path:
    """Each chunk's bytes of ``stored`` (zstd-compressed) to a new file renamed over its own,
    as zarr's ``LocalStore`` writes; the directory of the files."""
    raw = _raw(np.ascontiguousarray(stored))
    compress = None
    if zstd:
        import numcodecs

        compress = numcodecs.Zstd(level=0).encode
    files.paths[0].parent.mkdir(parents=True, exist_ok=True)
    suffix = f".{os.getpid()}.partial"

    def write(item: Place) -> None:
        path, where = item
        partial = path.with_name(path.name + suffix)
        with open(partial, "wb", buffering=0) as file:
            file.write(raw[where] if compress is None else compress(raw[where]))
        os.replace(partial, path)

    on_threads(write, files.slices(), threads)
    return files.paths[0].parent.parent


def read_elements_floor(
    files: FileSlices, dtype: np.dtype[np.str_], elements: npt.NDArray[np.intp], threads: int
) -> npt.NDArray[np.str_]:
    """Only the bytes of ``elements`` of a raw one-dimensional array: each run of neighbours
    in a file read with one ``pread`` into its place in the result."""
    out = np.empty(len(elements), dtype)
    raw, size = _raw(out), dtype.itemsize
    per_file = files.nbytes // size
    order = np.argsort(elements, kind="stable")
    ordered = elements[order]
    # runs of consecutive elements of one file, going to consecutive places of the result
    work: list[tuple[pathlib.Path, list[tuple[int, int, int]]]] = []
    for file_index in np.unique(ordered // per_file).tolist():
        mask = (ordered // per_file) == file_index
        picked, places = ordered[mask], order[mask]
        breaks = np.flatnonzero((np.diff(picked) != 1) | (np.diff(places) != 1)) + 1
        starts, stops = np.concatenate(([0], breaks)), np.concatenate((breaks, [picked.size]))
        runs = [
            (int(picked[a]) - file_index * per_file, int(places[a]), int(b - a))
            for a, b in zip(starts, stops)
        ]
        work.append((files.paths[file_index], runs))

    def read(item: tuple[pathlib.Path, list[tuple[int, int, int]]]) -> None:
        with open(item[0], "rb", buffering=0) as file:
            for start, place, count in item[1]:
                file.seek(start * size)
                file.readinto(raw[place * size : (place + count) * size])

    on_threads(read, work, threads)
    return out


def read_sharded_zstd_floor(
    files: FileSlices, dtype: np.dtype[np.str_], inner_nbytes: int, threads: int
) -> npt.NDArray[np.str_]:
    """Shards of zstd inner chunks (index at the end, crc32c): each shard file read whole,
    each inner chunk decompressed into its place."""
    out = np.empty(files.total // dtype.itemsize, dtype)
    raw = _raw(out)
    per_shard = files.nbytes // inner_nbytes
    import numcodecs

    decompress = numcodecs.Zstd().decode

    def read(item: Place) -> None:
        path, where = item
        shard = path.read_bytes()
        at = len(shard) - 16 * per_shard - 4
        index = np.frombuffer(shard, "<u8", count=2 * per_shard, offset=at)
        for local, (offset, nbytes) in enumerate(index.reshape(-1, 2).tolist()):
            start = where.start + local * inner_nbytes
            stop = min(start + inner_nbytes, where.stop)
            if stop - start == inner_nbytes:
                decompress(shard[offset : offset + nbytes], out=raw[start:stop])
            elif start < stop:  # the array's edge cuts this inner chunk
                whole = memoryview(decompress(shard[offset : offset + nbytes]))
                raw[start:stop] = whole[: stop - start]

    on_threads(read, files.slices(), threads)
    return out
