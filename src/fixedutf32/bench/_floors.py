"""The floors of ``fixedutf32 bench --zarr``: the same files read or written plainly.

A floor does the least any reader or writer of the array must do, on the
same number of threads as the configuration it is compared with, and
nothing more: the stored bytes of each chunk file (or each shard) read with
one ``readinto`` into their place in one new array; decompressed into their
place (zstd); the encoded chunk bytes written to one file each; compressed
and written (zstd).  No checks, no byte swap, no Python per element.  A zarr
pipeline that beats a floor means the floor is not one: the floors run on
as many threads as zarr's own pipelines may.
"""

from __future__ import annotations

import os
import pathlib
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "FileSlices",
    "read_elements_floor",
    "read_floor_threads",
    "read_sharded_zstd_floor",
    "stored_files",
    "thread_count",
    "write_floor",
]


def thread_count(threads: int | None) -> int:
    """Threads a configuration uses: ``threads``, or zarr's default (one per CPU)."""
    return threads or os.cpu_count() or 1


@dataclass(frozen=True)
class FileSlices:
    """Where each stored file's bytes go in the array's bytes.

    Attributes
    ----------
    paths : tuple of pathlib.Path
        One per chunk (or shard) file, in array order.
    nbytes : int
        Bytes of array data per file (the last may hold fewer).
    total : int
        Bytes of the whole array.
    """

    paths: tuple[pathlib.Path, ...]
    nbytes: int
    total: int

    @classmethod
    def of(cls, directory: pathlib.Path, nbytes: int, total: int) -> FileSlices:
        """The chunk files ``directory/c/0, c/1, ...`` of a one-dimensional V3 array."""
        count = -(-total // nbytes)
        return cls(tuple(directory / "c" / str(i) for i in range(count)), nbytes, total)

    def slices(self) -> list[tuple[pathlib.Path, slice]]:
        return [
            (path, slice(i * self.nbytes, min((i + 1) * self.nbytes, self.total)))
            for i, path in enumerate(self.paths)
        ]


def _on_threads(
    work: Callable[[tuple[pathlib.Path, slice]], None],
    items: Sequence[tuple[pathlib.Path, slice]],
    threads: int,
) -> None:
    if threads <= 1:
        for item in items:
            work(item)
        return
    # One share of consecutive files per thread, as the pipelines split a batch.
    size = -(-len(items) // threads)
    shares = [items[i : i + size] for i in range(0, len(items), size)]

    def run(share: Sequence[tuple[pathlib.Path, slice]]) -> None:
        for item in share:
            work(item)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, shares))


def read_floor_threads(
    files: FileSlices,
    dtype: np.dtype[np.str_],
    threads: int,
    *,
    zstd: bool = False,
    buffered: bool = False,
) -> npt.NDArray[np.str_]:
    """The files' bytes in one new array of ``dtype``: read (or zstd-decompressed) in place.

    Raw files are read with ``readinto`` straight into their slice, or, with
    ``buffered``, into a buffer of the thread's reused from file to file and
    then copied into their slice (on this machine the second is sometimes
    the faster: the kernel then writes memory that is already mapped and in
    cache).  A shard file holds its index after the data, which the slice's
    length leaves unread.  zstd files are read whole, then decompressed into
    their slice.  Elements of missing files are left unset.
    """
    out = np.empty(files.total // dtype.itemsize, dtype)
    # NumPy declares the buffer protocol of an array for Python >= 3.12 only.
    raw = memoryview(out.view(np.uint8))  # type: ignore[arg-type,unused-ignore]
    decompress = None
    if zstd:
        import numcodecs

        decompress = numcodecs.Zstd().decode

    buffers = threading.local()

    def read(item: tuple[pathlib.Path, slice]) -> None:
        path, where = item
        try:
            file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with file:
            if decompress is None and buffered:
                buffer = getattr(buffers, "buffer", None)
                if buffer is None or len(buffer) < files.nbytes:
                    buffer = buffers.buffer = memoryview(bytearray(files.nbytes))
                n = where.stop - where.start
                file.readinto(buffer[:n])
                raw[where] = buffer[:n]
            elif decompress is None:
                file.readinto(raw[where])
            elif where.stop - where.start == files.nbytes:
                decompress(file.read(), out=raw[where])
            else:  # the edge chunk: stored whole, of which the array holds the start
                whole = memoryview(decompress(file.read())).cast("B")
                raw[where] = whole[: where.stop - where.start]

    _on_threads(read, files.slices(), threads)
    return out


def stored_files(paths: Sequence[pathlib.Path]) -> tuple[npt.NDArray[np.uint8], int]:
    """The bytes of ``paths`` one after another (a new array), and the size of the first.

    Each but the last file must have the first's size (a shard of a regular
    grid, the last cut by the array), as :class:`FileSlices` places them.
    """
    sizes = [path.stat().st_size for path in paths]
    if len(set(sizes[:-1])) > 1 or (sizes and sizes[-1] > sizes[0]):
        raise ValueError(f"expected files of one size but the last, got sizes {sizes}")
    stored = np.empty(sum(sizes), np.uint8)
    at = 0
    for path, size in zip(paths, sizes):
        with open(path, "rb", buffering=0) as file:
            file.readinto(memoryview(stored[at : at + size]))  # type: ignore[arg-type,unused-ignore]
        at += size
    return stored, sizes[0] if sizes else 0


def write_floor(
    files: FileSlices,
    stored: npt.NDArray[np.str_] | npt.NDArray[np.uint8],
    threads: int,
    *,
    zstd: bool = False,
) -> pathlib.Path:
    """Write each chunk's bytes of ``stored`` (already in the stored byte order) to its file.

    As a store that never leaves a chunk half written must (zarr's
    ``LocalStore`` does): each chunk to a new file beside its own, then
    renamed over it.  Writing over the old file in place is about 1.5 times
    faster here, but a reader (or a crash) in between sees a chunk cut
    short.  With ``zstd``, each chunk is compressed (zarr's default level)
    before it is written.  Returns the directory of the files.
    """
    raw = memoryview(np.ascontiguousarray(stored).view(np.uint8))  # type: ignore[arg-type,unused-ignore]
    compress = None
    if zstd:
        import numcodecs

        compress = numcodecs.Zstd(level=0).encode
    files.paths[0].parent.mkdir(parents=True, exist_ok=True)

    suffix = f".{os.getpid()}.partial"

    def write(item: tuple[pathlib.Path, slice]) -> None:
        path, where = item
        data = raw[where] if compress is None else compress(raw[where])
        partial = path.with_name(path.name + suffix)
        with open(partial, "wb", buffering=0) as file:
            file.write(data)
        os.replace(partial, path)

    _on_threads(write, files.slices(), threads)
    return files.paths[0].parent.parent


def read_elements_floor(
    files: FileSlices, dtype: np.dtype[np.str_], elements: npt.NDArray[np.intp], threads: int
) -> npt.NDArray[np.str_]:
    """Only the bytes of the ``elements`` of a raw one-dimensional array, by byte range.

    Each chunk file that holds some is opened once; each run of neighbouring
    elements in it is read with one ``pread`` straight into its place in the
    result (in the order of ``elements``).  What reading a selection costs at
    the least.
    """
    out = np.empty(len(elements), dtype)
    raw = memoryview(out.view(np.uint8))  # type: ignore[arg-type,unused-ignore]
    size = dtype.itemsize
    per_file = files.nbytes // size
    order = np.argsort(elements, kind="stable")
    ordered = elements[order]
    # runs of consecutive elements in one file, each going to consecutive places
    # of the result only when the selection is in order (a slice)
    work: list[tuple[pathlib.Path, list[tuple[int, int, int]]]] = []
    for file_index in np.unique(ordered // per_file).tolist():
        mask = (ordered // per_file) == file_index
        picked, places = ordered[mask], order[mask]
        breaks = np.flatnonzero((np.diff(picked) != 1) | (np.diff(places) != 1)) + 1
        runs = [
            (int(picked[a]) - file_index * per_file, int(places[a]), int(b - a))
            for a, b in zip(np.concatenate(([0], breaks)), np.concatenate((breaks, [picked.size])))
        ]
        work.append((files.paths[file_index], runs))

    def read(item: tuple[pathlib.Path, slice]) -> None:
        path, where = item
        with open(path, "rb", buffering=0) as file:
            for start, place, count in work[where.start][1]:
                file.seek(start * size)
                file.readinto(raw[place * size : (place + count) * size])

    _on_threads(read, [(path, slice(i, i + 1)) for i, (path, _) in enumerate(work)], threads)
    return out


def read_sharded_zstd_floor(
    files: FileSlices, dtype: np.dtype[np.str_], inner_nbytes: int, threads: int
) -> npt.NDArray[np.str_]:
    """A one-dimensional array of zstd inner chunks in shards (index at the end, crc32c):
    each shard file read whole, each inner chunk decompressed into its place."""
    import numcodecs

    out = np.empty(files.total // dtype.itemsize, dtype)
    raw = memoryview(out.view(np.uint8))  # type: ignore[arg-type,unused-ignore]
    per_shard = files.nbytes // inner_nbytes
    decompress = numcodecs.Zstd().decode

    def read(item: tuple[pathlib.Path, slice]) -> None:
        path, where = item
        with open(path, "rb", buffering=0) as file:
            shard = file.read()
        index = np.frombuffer(
            shard, "<u8", count=2 * per_shard, offset=len(shard) - 16 * per_shard - 4
        )
        for local, (offset, nbytes) in enumerate(index.reshape(-1, 2).tolist()):
            start = where.start + local * inner_nbytes
            stop = min(start + inner_nbytes, where.stop)
            if stop - start == inner_nbytes:
                decompress(shard[offset : offset + nbytes], out=raw[start:stop])
            elif start < stop:  # the array's edge cuts this inner chunk
                raw[start:stop] = memoryview(decompress(shard[offset : offset + nbytes]))[
                    : stop - start
                ]

    _on_threads(read, files.slices(), threads)
    return out
