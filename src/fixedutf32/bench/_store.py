"""Whole stores (``fixedutf32 bench --store``): ``check`` and ``convert`` beside reading the
chunk files and compressing their bytes (docs/performance.md)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import numpy.typing as npt

from ._report import Row, judge
from ._zarr import quiet_zarr, require
from .cases import WIDTH, MiB, Progress, Timed, best_time, format_size, gbps, sample_array

DEFAULT_SIZE = 256 * MiB
CHUNK_ELEMENTS = 32768  # 2 MiB chunks of 64-byte elements
INNER_ELEMENTS = 1024  # the sharded store: 64 KiB inner chunks in 8 MiB shards
SHARD_ELEMENTS = 131072
ELEMENT_BYTES = 4 * WIDTH
COLD = hasattr(os, "posix_fadvise")  # the cold-cache rows need it
COLD_RATIO = ("check raw, cold cache", "read chunk files, cold cache")
RATIOS = [  # ratio (its target's key; "N": the threads), numerator row, denominator row, kind
    ("check raw / read files (speed)", "check raw", "read chunk files", "speed"),
    ("check raw / read files, cold cache (speed)", *COLD_RATIO, "speed"),
    ("check sharded / read files (speed)", "check sharded raw", "read shard files", "speed"),
    (
        "check zstd N threads / 1 thread (speed)",
        "check zstd, N threads",
        "check zstd, 1 thread",
        "speed",
    ),
    (
        "convert / zstd-compress (time)",
        "convert raw -> V3 zstd",
        "zstd-compress the chunks",
        "time",
    ),
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
    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(lambda path: len(path.read_bytes()), files))


def _compress_chunks(data: npt.NDArray[np.str_], threads: int) -> int:
    import numcodecs

    codec, raw, size = numcodecs.Zstd(level=0), data.view(np.uint8), CHUNK_ELEMENTS * ELEMENT_BYTES
    chunks = [raw[i : i + size] for i in range(0, raw.nbytes, size)]
    with ThreadPoolExecutor(threads) as pool:
        return sum(map(len, pool.map(codec.encode, chunks)))


class _Stores:
    """The raw and zstd stores on disk, and one call per row."""

    def __init__(self, root: str, data: npt.NDArray[np.str_], threads: int) -> None:
        import zarr
        from zarr.codecs import BytesCodec, ZstdCodec

        self.root, self.data, self.threads = pathlib.Path(root), data, threads
        self.raw, self.packed, self.out = self.root / "raw", self.root / "zstd", self.root / "out"
        self.sharded = self.root / "sharded"
        stores = (
            (self.raw, None, CHUNK_ELEMENTS, None),
            (self.packed, [ZstdCodec(level=0)], CHUNK_ELEMENTS, None),
            (self.sharded, None, INNER_ELEMENTS, SHARD_ELEMENTS),
        )
        for path, compressors, chunks, shards in stores:
            zarr.create_array(
                str(path),
                shape=data.shape,
                chunks=(min(chunks, data.size),),
                shards=None if shards is None else (min(shards, data.size),),
                dtype=data.dtype,
                serializer=BytesCodec(endian="little"),
                compressors=compressors,
                fill_value="",
            )[:] = data
        self.files = sorted(p for p in (self.raw / "c").rglob("*") if p.is_file())
        self.shard_files = sorted(p for p in (self.sharded / "c").rglob("*") if p.is_file())

    def check(self) -> bool:
        """Whether ``check`` finds both stores clean (untimed, before the rows)."""
        from ..store import check

        stores = (self.raw, self.packed, self.sharded)
        return all(check(str(path), threads=self.threads).ok for path in stores)

    def rows(self) -> dict[str, tuple[str, Timed, Timed | None]]:
        """row -> (group, call, untimed call before each or None), in the order timed."""
        from ..store import check, convert

        threads, raw, packed = self.threads, str(self.raw), str(self.packed)
        shards = str(self.sharded)
        cold = (lambda: _evict(self.files)) if COLD else None
        read, warm = "read vs check", "read vs check, cold cache"
        sharded = "read vs check, 8 MiB shards of 64 KiB chunks"
        zstd, compress = "check zstd on threads", "convert vs compress"
        files = partial(_read_files, self.files, threads)
        rows: dict[str, tuple[str, Timed, Timed | None]] = {
            "read chunk files": (read, files, None),
            "check raw": (read, partial(check, raw, threads=threads), None),
            "read chunk files, cold cache": (warm, files, cold),
            "check raw, cold cache": (warm, partial(check, raw, threads=threads), cold),
            "read shard files": (sharded, partial(_read_files, self.shard_files, threads), None),
            "check sharded raw": (sharded, partial(check, shards, threads=threads), None),
            "check zstd, 1 thread": (zstd, partial(check, packed, threads=1), None),
            f"check zstd, {threads} threads": (zstd, partial(check, packed, threads=threads), None),
            "zstd-compress the chunks": (
                compress,
                partial(_compress_chunks, self.data, threads),
                None,
            ),
            "convert raw -> V3 zstd": (
                compress,
                partial(convert, raw, str(self.out), threads=threads, overwrite=True),
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
    require()
    if size < ELEMENT_BYTES:
        raise ValueError(
            f"size: expected at least {ELEMENT_BYTES} bytes (one <U{WIDTH} element), got {size}"
        )
    if threads < 1:
        raise ValueError(f"threads: expected at least 1, got {threads}")
    with (
        tempfile.TemporaryDirectory(prefix="fixedutf32-bench-store-", dir=directory) as root,
        quiet_zarr(),
    ):
        yield _Stores(root, sample_array(size // ELEMENT_BYTES), threads)


def run(
    size: int = DEFAULT_SIZE,
    threads: int = 2,
    repeat: int = 3,
    progress: Progress | None = None,
    directory: str | None = None,
) -> Row:
    """The ``--store`` report: both stores checked clean first, then each row best of
    ``repeat``, and the ratios with their targets."""
    say = progress or (lambda message: None)
    say(f"writing {format_size(size)} of <U{WIDTH} text, raw and zstd")
    with stores(size, threads, directory) as made:
        nbytes = made.data.nbytes
        say("check of both stores")
        check_ok = made.check()
        seconds: dict[str, float] = {}
        for name, (_, call, before) in made.rows().items():
            say(f"{name} ({format_size(nbytes)}, best of {repeat})")
            seconds[name] = best_time(call, repeat, before)
    ratios: list[Row] = []
    for key, top, bottom, kind in RATIOS:
        top, bottom = (text.replace("N threads", f"{threads} threads") for text in (top, bottom))
        if top in seconds and bottom in seconds:  # no cold-cache rows without posix_fadvise
            value = (
                seconds[bottom] / seconds[top]
                if kind == "speed"
                else seconds[top] / seconds[bottom]
            )
            name = key.replace("N threads", f"{threads} threads")
            ratios.append({"ratio": name, "value": value, **judge("store", key, value, bound=True)})
    rows = [{"row": name, "seconds": s, "gbps": gbps(nbytes, s)} for name, s in seconds.items()]
    return {
        "size": nbytes,
        "chunk_size": CHUNK_ELEMENTS * ELEMENT_BYTES,
        "threads": threads,
        "repeat": repeat,
        "check_ok": check_ok,
        "rows": rows,
        "ratios": ratios,
    }
