"""Whole stores (``fixedutf32 bench --store``): ``check`` and ``convert`` beside reading the
chunk files and compressing their bytes (docs/performance.md)."""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import numpy.typing as npt

from ._report import Row, judge
from ._zarr import chunk_files, workspace
from .cases import (
    ELEMENT_BYTES,
    WIDTH,
    MiB,
    Progress,
    Timed,
    best_time,
    create_array,
    format_size,
    gbps,
    quiet,
)

DEFAULT_SIZE = 256 * MiB
CHUNK_ELEMENTS = 32768  # 2 MiB chunks of 64-byte elements
INNER_ELEMENTS = 1024  # the sharded store: 64 KiB inner chunks in 8 MiB shards
SHARD_ELEMENTS = 131072
COLD = hasattr(os, "posix_fadvise")  # the cold-cache rows need it
COLD_READ = "read chunk files, cold cache"
RATIOS = [  # ratio (its target's key; "N": the threads), numerator row, denominator row
    ("check raw / read files (speed)", "check raw", "read chunk files"),
    ("check raw / read files, cold cache (speed)", "check raw, cold cache", COLD_READ),
    ("check sharded / read files (speed)", "check sharded raw", "read shard files"),
    ("check zstd N threads / 1 thread (speed)", "check zstd, N threads", "check zstd, 1 thread"),
    ("convert / zstd-compress (time)", "convert raw -> V3 zstd", "zstd-compress the chunks"),
]


def _evict(files: Sequence[pathlib.Path]) -> None:
    """Drop ``files`` from the page cache (written back first): the next read hits the disk."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _read_files(files: Sequence[pathlib.Path], threads: int) -> int:
    """Every file read whole on ``threads`` threads; the bytes read."""
    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(lambda path: len(path.read_bytes()), files))


def _compress_chunks(data: npt.NDArray[np.str_], threads: int) -> int:
    """Each chunk's bytes zstd-compressed (level 0) on ``threads`` threads; the bytes made."""
    import numcodecs

    codec, raw, size = numcodecs.Zstd(level=0), data.view(np.uint8), CHUNK_ELEMENTS * ELEMENT_BYTES
    chunks = [raw[i : i + size] for i in range(0, raw.nbytes, size)]
    with ThreadPoolExecutor(threads) as pool:
        return sum(map(len, pool.map(codec.encode, chunks)))


class _Stores:
    """The raw, zstd and sharded stores on disk, and one call per row."""

    def __init__(self, root: str, data: npt.NDArray[np.str_], threads: int) -> None:
        self.root, self.data, self.threads = pathlib.Path(root), data, threads
        self.raw, self.packed, self.sharded = (self.root / n for n in ("raw", "zstd", "sharded"))
        chunk, n = min(CHUNK_ELEMENTS, data.size), data.size
        create_array(self.raw, data, chunk, endian="little")
        create_array(self.packed, data, chunk, endian="little", zstd=0)
        shard = min(SHARD_ELEMENTS, n)
        create_array(self.sharded, data, min(INNER_ELEMENTS, n), shard, endian="little")
        self.files, self.shard_files = chunk_files(self.raw), chunk_files(self.sharded)

    def check(self) -> bool:
        """Whether ``check`` finds the stores clean (untimed, before the rows)."""
        from ..store import check

        stores = (self.raw, self.packed, self.sharded)
        return all(check(str(path), threads=self.threads).ok for path in stores)

    def rows(self) -> dict[str, tuple[str, Timed, Timed | None]]:
        """row -> (group, call, untimed call before each or None), in the order timed."""
        from ..store import check, convert

        threads, raw, packed = self.threads, str(self.raw), str(self.packed)
        checks = partial(check, threads=threads)
        files = partial(_read_files, self.files, threads)
        cold = partial(_evict, self.files) if COLD else None
        read, warm = "read vs check", "read vs check, cold cache"
        sharded = "read vs check, 8 MiB shards of 64 KiB chunks"
        zstd, compress = "check zstd on threads", "convert vs compress"
        out = str(self.root / "out")
        rows: dict[str, tuple[str, Timed, Timed | None]] = {
            "read chunk files": (read, files, None),
            "check raw": (read, partial(checks, raw), None),
            COLD_READ: (warm, files, cold),
            "check raw, cold cache": (warm, partial(checks, raw), cold),
            "read shard files": (sharded, partial(_read_files, self.shard_files, threads), None),
            "check sharded raw": (sharded, partial(checks, str(self.sharded)), None),
            "check zstd, 1 thread": (zstd, partial(check, packed, threads=1), None),
            f"check zstd, {threads} threads": (zstd, partial(checks, packed), None),
            "zstd-compress the chunks": (
                compress,
                partial(_compress_chunks, self.data, threads),
                None,
            ),
            "convert raw -> V3 zstd": (
                compress,
                partial(convert, raw, out, threads=threads, overwrite=True),
                None,
            ),
        }
        return {name: row for name, row in rows.items() if COLD or not name.endswith("cold cache")}


@contextlib.contextmanager
def stores(
    size: int = DEFAULT_SIZE, threads: int = 2, directory: str | None = None
) -> Iterator[_Stores]:
    """The bench's raw and zstd stores of ``size`` bytes of chunk data in a temporary directory
    (in ``directory``), removed on exit: ``rows()`` gives row -> (group, call, untimed call before
    each or None), ``check()`` whether both check clean, ``data`` the array written."""
    with workspace("store", size, directory) as (root, data):
        if threads < 1:
            raise ValueError(f"threads: expected at least 1, got {threads}")
        yield _Stores(root, data, threads)


def run(
    size: int = DEFAULT_SIZE,
    threads: int = 2,
    repeat: int = 3,
    progress: Progress = quiet,
    directory: str | None = None,
) -> Row:
    """The ``--store`` report: the stores checked first, each row best of ``repeat``, ratios."""
    progress(f"writing {format_size(size)} of <U{WIDTH} text, raw and zstd")
    with stores(size, threads, directory) as made:
        nbytes = made.data.nbytes
        progress("check of both stores")
        check_ok = made.check()
        seconds: dict[str, float] = {}
        for name, (_, call, before) in made.rows().items():
            progress(f"{name} ({format_size(nbytes)}, best of {repeat})")
            seconds[name] = best_time(call, repeat, before)
    ratios: list[Row] = []
    for key, *pair in RATIOS:
        name, top, bottom = (
            text.replace("N threads", f"{threads} threads") for text in (key, *pair)
        )
        if top in seconds and bottom in seconds:  # no cold-cache rows without posix_fadvise
            times = (seconds[bottom], seconds[top])  # a ratio of speeds; of times, the inverse
            value = times[0] / times[1] if key.endswith("(speed)") else times[1] / times[0]
            ratios.append({"ratio": name, "value": value, **judge("store", key, value, bound=True)})
    return {
        "size": nbytes,
        "chunk_size": CHUNK_ELEMENTS * ELEMENT_BYTES,
        "threads": threads,
        "repeat": repeat,
        "check_ok": check_ok,
        "rows": [{"row": row, "seconds": s, "gbps": gbps(nbytes, s)} for row, s in seconds.items()],
        "ratios": ratios,
    }
