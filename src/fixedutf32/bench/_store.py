"""Whole stores (``fixedutf32 bench --store``): ``check`` and ``convert`` beside baselines.

A local Zarr V3 ``fixed_length_utf32`` store (256 MiB of chunk data by
default, 2 MiB chunks) is written with zarr-python, once raw and once zstd;
then each row is timed, best of ``repeat``:

- reading every chunk file of the raw store on ``threads`` threads (the
  baseline: plain ``open().read()``), and ``check`` of that store; both with a
  warm page cache (a race of memory copies) and, where ``posix_fadvise``
  exists, with the files evicted from the cache before each repetition (reads
  from the disk, as for a store not read recently);
- ``check`` of the zstd store on 1 thread and on ``threads`` threads;
- zstd-compressing every chunk's bytes on ``threads`` threads (numcodecs,
  zarr-python's default level), and ``convert`` of the raw store to V3 zstd.

Except for the cold-cache rows the page cache is warm for every row alike.
zarr and ``fixedutf32.store`` are imported here only, when the bench runs.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from ._report import StoreReport
from ._targets import TARGETS, Ratio
from ._timing import MiB, Progress, Timed, best_time, format_size, gbps
from ._zarr import require
from .cases import WIDTH, store_strings

if TYPE_CHECKING:
    from zarr.codecs import ZstdCodec

DEFAULT_SIZE = 256 * MiB
CHUNK_ELEMENTS = 32768  # 2 MiB chunks of 64-byte elements
ELEMENT_BYTES = 4 * WIDTH
COLD = hasattr(os, "posix_fadvise")  # the cold-cache rows need it

# Ratios reported, with their targets in ._targets under the same key ("N"
# stands for the thread count): key, numerator row, denominator row, and
# whether the ratio is of speeds (at least the target) or of times (at most).
RATIOS: list[tuple[str, str, str, Literal["speed", "time"]]] = [
    ("check raw / read files (speed)", "check raw", "read chunk files", "speed"),
    (
        "check raw / read files, cold cache (speed)",
        "check raw, cold cache",
        "read chunk files, cold cache",
        "speed",
    ),
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


def _write_store(
    path: pathlib.Path, data: npt.NDArray[np.str_], compressors: list[ZstdCodec] | None
) -> None:
    import zarr
    from zarr.codecs import BytesCodec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zarr: the data type has no stable specification
        array = zarr.create_array(
            str(path),
            shape=data.shape,
            chunks=(CHUNK_ELEMENTS,),
            dtype=data.dtype,
            serializer=BytesCodec(endian="little"),
            compressors=compressors,
            fill_value="",
        )
        array[:] = data


def _evict(files: Sequence[pathlib.Path]) -> None:
    """Drop ``files`` from the page cache (written back first), so the next read hits the disk."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _read_files(files: Sequence[pathlib.Path], threads: int) -> int:
    def read(path: pathlib.Path) -> int:
        with open(path, "rb") as file:
            return len(file.read())

    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(read, files))


def _compress_chunks(data: npt.NDArray[np.str_], threads: int) -> int:
    import numcodecs

    codec = numcodecs.Zstd(level=0)
    raw = data.view(np.uint8)
    size = CHUNK_ELEMENTS * ELEMENT_BYTES
    pieces = [raw[i : i + size] for i in range(0, raw.nbytes, size)]
    with ThreadPoolExecutor(threads) as pool:
        return sum(len(c) for c in pool.map(codec.encode, pieces))


class StoreCase(NamedTuple):
    """A row of ``fixedutf32 bench --store``: its group, the call timed, an untimed call before."""

    group: str  # rows read side by side (a pytest-benchmark group)
    call: Timed
    before: Timed | None  # untimed, before each call (the cold-cache rows evict the files)


class _Stores:
    """The two stores on disk and one call per row."""

    def __init__(self, root: str, data: npt.NDArray[np.str_], threads: int) -> None:
        from zarr.codecs import ZstdCodec

        self.root = pathlib.Path(root)
        self.data = data
        self.threads = threads
        self.raw, self.packed, self.out = self.root / "raw", self.root / "zstd", self.root / "out"
        _write_store(self.raw, data, None)
        _write_store(self.packed, data, [ZstdCodec(level=0)])
        self.files = sorted(p for p in (self.raw / "c").rglob("*") if p.is_file())

    def check(self) -> bool:
        """Whether ``check`` finds both stores clean (untimed, before the rows)."""
        from ..store import check

        return all(check(str(path), threads=self.threads).ok for path in (self.raw, self.packed))

    def rows(self) -> dict[str, StoreCase]:
        """row -> (group, call, untimed call before each or None), in the order they are timed."""
        from ..store import check, convert

        threads, raw, packed = self.threads, str(self.raw), str(self.packed)
        cold = (lambda: _evict(self.files)) if COLD else None
        rows = {
            "read chunk files": StoreCase(
                "read vs check", lambda: _read_files(self.files, threads), None
            ),
            "check raw": StoreCase("read vs check", lambda: check(raw, threads=threads), None),
            "read chunk files, cold cache": StoreCase(
                "read vs check, cold cache",
                lambda: _read_files(self.files, threads),
                cold,
            ),
            "check raw, cold cache": StoreCase(
                "read vs check, cold cache",
                lambda: check(raw, threads=threads),
                cold,
            ),
            "check zstd, 1 thread": StoreCase(
                "check zstd on threads",
                lambda: check(packed, threads=1),
                None,
            ),
            f"check zstd, {threads} threads": StoreCase(
                "check zstd on threads",
                lambda: check(packed, threads=threads),
                None,
            ),
            "zstd-compress the chunks": StoreCase(
                "convert vs compress",
                lambda: _compress_chunks(self.data, threads),
                None,
            ),
            "convert raw -> V3 zstd": StoreCase(
                "convert vs compress",
                lambda: convert(raw, str(self.out), threads=threads, overwrite=True),
                None,
            ),
        }
        if not COLD:
            rows = {name: row for name, row in rows.items() if not name.endswith("cold cache")}
        return rows


@contextlib.contextmanager
def stores(
    size: int = DEFAULT_SIZE, threads: int = 2, directory: str | None = None
) -> Iterator[_Stores]:
    """The bench's raw and zstd stores in a temporary directory, removed on exit.

    Parameters
    ----------
    size : int
        Bytes of chunk data (rounded down to whole 64-byte ``<U16``
        elements), in 2 MiB chunks.
    threads : int
        Threads of the multi-threaded rows.
    directory : str, optional
        Where to make the temporary directory.

    Yields
    ------
    _Stores
        ``rows()`` gives row -> (group, call, untimed call before each or
        None); ``check()`` says whether both stores check clean; ``data`` is
        the array written.

    Raises
    ------
    ImportError
        If zarr-python or numcodecs is not installed.
    ValueError
        If ``size`` is smaller than one element or ``threads`` is below 1.

    Examples
    --------
    >>> with stores(4096, threads=1) as made:
    ...     made.check(), sorted(made.rows())[:2]
    (True, ['check raw', 'check raw, cold cache'])
    """
    require()
    if size < ELEMENT_BYTES:
        raise ValueError(
            f"size: expected at least {ELEMENT_BYTES} bytes (one <U{WIDTH} element), got {size}"
        )
    if threads < 1:
        raise ValueError(f"threads: expected at least 1, got {threads}")
    with tempfile.TemporaryDirectory(prefix="fixedutf32-bench-store-", dir=directory) as root:
        yield _Stores(root, store_strings(size // ELEMENT_BYTES), threads)


def run(
    size: int = DEFAULT_SIZE,
    threads: int = 2,
    repeat: int = 3,
    progress: Progress | None = None,
    directory: str | None = None,
) -> StoreReport:
    """Measure ``check`` and ``convert`` of a whole store beside their baselines; a report dict.

    Two stores of the same ``<U16`` text are written first, one raw and one
    zstd-compressed, and both are checked clean before any row is timed.

    Parameters
    ----------
    size : int
        Bytes of chunk data, rounded down to whole 64-byte elements.
    threads : int
        Threads of the multi-threaded rows.
    repeat : int
        Timed repetitions of each row; a row's figure is the best of them.
    progress, directory
        A call taking a short message, made before each step; where the
        temporary stores are written (and removed afterwards).

    Returns
    -------
    dict
        ``size``, ``chunk_size``, ``threads``, ``repeat``; ``check_ok``
        (both stores checked clean, before the timing); ``rows``: ``row``,
        ``seconds`` and ``gbps`` (of chunk data) each; ``ratios``: ``ratio``,
        ``value``, ``bound`` (``>=`` or ``<=``), ``target`` and ``met``.

    Raises
    ------
    ImportError, ValueError
        As :func:`stores` does.

    Examples
    --------
    >>> report = run(size=64 * 1024, threads=2, repeat=1)
    >>> report["check_ok"], [ratio["bound"] for ratio in report["ratios"]][-1]
    (True, '<=')
    """
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
    ratios: list[Ratio] = []
    for key, top, bottom, kind in RATIOS:
        name, top, bottom = (
            text.replace("N threads", f"{threads} threads") for text in (key, top, bottom)
        )
        if top not in seconds or bottom not in seconds:
            continue  # no cold-cache rows without posix_fadvise
        value = (
            seconds[bottom] / seconds[top] if kind == "speed" else seconds[top] / seconds[bottom]
        )
        found = TARGETS["store", key, None]
        ratios.append(
            {
                "ratio": name,
                "value": value,
                "bound": found.bound,
                "target": found.value,
                "met": found.met(value),
            }
        )
    return {
        "size": nbytes,
        "chunk_size": CHUNK_ELEMENTS * ELEMENT_BYTES,
        "threads": threads,
        "repeat": repeat,
        "check_ok": check_ok,
        "rows": [
            {"row": name, "seconds": s, "gbps": gbps(nbytes, s)} for name, s in seconds.items()
        ],
        "ratios": ratios,
    }
