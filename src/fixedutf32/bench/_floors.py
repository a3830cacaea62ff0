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
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["FileSlices", "read_floor_threads", "thread_count", "write_floor"]


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
    files: FileSlices, dtype: np.dtype[np.str_], threads: int, *, zstd: bool = False
) -> npt.NDArray[np.str_]:
    """The files' bytes in one new array of ``dtype``: read (or zstd-decompressed) in place.

    Raw files are read with ``readinto`` straight into their slice; a shard
    file holds its index after the data, which the slice's length leaves
    unread.  zstd files are read whole, then decompressed into their slice.
    Elements of missing files are left unset.
    """
    out = np.empty(files.total // dtype.itemsize, dtype)
    # NumPy declares the buffer protocol of an array for Python >= 3.12 only.
    raw = memoryview(out.view(np.uint8))  # type: ignore[arg-type,unused-ignore]
    decompress = None
    if zstd:
        import numcodecs

        decompress = numcodecs.Zstd().decode

    def read(item: tuple[pathlib.Path, slice]) -> None:
        path, where = item
        try:
            file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with file:
            if decompress is None:
                file.readinto(raw[where])
            elif where.stop - where.start == files.nbytes:
                decompress(file.read(), out=raw[where])
            else:  # the edge chunk: stored whole, of which the array holds the start
                whole = memoryview(decompress(file.read())).cast("B")
                raw[where] = whole[: where.stop - where.start]

    _on_threads(read, files.slices(), threads)
    return out


def write_floor(
    files: FileSlices, stored: npt.NDArray[np.str_], threads: int, *, zstd: bool = False
) -> pathlib.Path:
    """Write each chunk's bytes of ``stored`` (already in the stored byte order) to its file.

    With ``zstd``, each chunk is compressed (zarr's default level) before it
    is written.  Returns the directory of the files.
    """
    raw = memoryview(np.ascontiguousarray(stored).view(np.uint8))  # type: ignore[arg-type,unused-ignore]
    compress = None
    if zstd:
        import numcodecs

        compress = numcodecs.Zstd(level=0).encode
    files.paths[0].parent.mkdir(parents=True, exist_ok=True)

    def write(item: tuple[pathlib.Path, slice]) -> None:
        path, where = item
        data = raw[where] if compress is None else compress(raw[where])
        with open(path, "wb", buffering=0) as file:
            file.write(data)

    _on_threads(write, files.slices(), threads)
    return files.paths[0].parent.parent
