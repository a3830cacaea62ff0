"""fixedutf32.open_array against the physical floor, zarr with fixedutf32's pipeline, stock zarr.

Writes one ``<U16`` array (256 MiB by default, ``--size``) with zarr-python in
each layout below, then times, in turn and in the same run:

- ``floor``: the chunk files read with ``readinto`` into one preallocated
  buffer (a shard's data part; zstd: each frame read, then decompressed into
  its place), on as many threads as the reader;
- ``reader``: ``fixedutf32.open_array(path).read(threads=...)``;
- ``pipeline``: zarr with ``fixedutf32.zarr.enable()``'s pipeline (docs/zarr.md);
- ``stock``: zarr-python as installed.

The Arrow row times ``read_arrow`` against :func:`fixedutf32.to_utf8` on the
same data already in memory, cut into as many pieces as threads.  Each figure
is the best of ``--rounds``; a ratio is the speed of a reader over the floor's
(higher is faster; 1.0 is the floor).

    python benchmarks/bench_array.py --size 256 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import fixedutf32
import fixedutf32.zarr
from fixedutf32._pool import new_array
from fixedutf32.array import open_array

MiB = 1 << 20
WIDTH = 16  # code points per element: 64 bytes
# name: (chunk bytes, shard bytes or None, zstd)
CASES = {
    "1 MiB raw chunks": (MiB, None, False),
    "64 KiB chunks in 8 MiB shards": (64 << 10, 8 * MiB, False),
    "16 KiB chunks": (16 << 10, None, False),
    "zstd, 1 MiB chunks": (MiB, None, True),
}


def sample(count: int) -> np.ndarray:
    """``count`` strings of 0..16 code points, mostly ASCII, some of 2-4 UTF-8 bytes."""
    rng = np.random.default_rng(0)
    alphabet = np.array([*map(ord, "abcdefghij klmnopqrstuvwxyz0123456789"), 0xE9, 0x4E2D, 0x1F600])
    base = 4096
    units = alphabet[rng.integers(0, alphabet.size, (base, WIDTH))].astype(np.uint32)
    lengths = rng.integers(0, WIDTH + 1, base)
    units[np.arange(WIDTH) >= lengths[:, None]] = 0
    strings = units.view(f"<U{WIDTH}").ravel()
    return np.resize(strings, count)


def write(path: pathlib.Path, data: np.ndarray, chunk: int, shard: int | None, zstd: bool) -> None:
    """The array as zarr-python writes it."""
    import zarr

    item = data.dtype.itemsize
    zarr.create_array(
        str(path),
        data=data,
        chunks=(chunk // item,),
        shards=None if shard is None else (shard // item,),
        compressors=zarr.codecs.ZstdCodec(level=1) if zstd else None,
    )


def floor(path: pathlib.Path, nbytes: int, threads: int, zstd: bool) -> Callable[[], object]:
    """The key files read into one buffer allocated once, unchecked: the least a reader costs."""
    import numcodecs

    files = sorted((path / "c").iterdir(), key=lambda p: int(p.name))
    per_key = -(-nbytes // len(files))
    # The memory the reader's results come from (the kernels' pool: huge pages where the system
    # gives them, which the kernel copies into several times faster), faulted in once.
    out = new_array(nbytes, np.uint8)
    out[:] = 0
    decode = numcodecs.Zstd().decode if zstd else None
    pool = ThreadPoolExecutor(threads)

    def some(first: int) -> None:
        for i in range(first, len(files), threads):
            start, stop = i * per_key, min((i + 1) * per_key, nbytes)
            with open(files[i], "rb", buffering=0) as file:
                if decode is None:
                    file.readinto(memoryview(out)[start:stop])  # a shard's index is left unread
                elif stop - start == per_key:
                    decode(file.read(), out=out[start:stop])
                else:
                    out[start:stop] = np.frombuffer(decode(file.read()), np.uint8)[: stop - start]

    return lambda: list(pool.map(some, range(threads)))


def best(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """The best time of each call over ``rounds``, the calls timed in turn."""
    times = {name: float("inf") for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name] = min(times[name], time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="MiB per array (default 256)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--dir", default=None, help="where to write the arrays (default: a temp dir)"
    )
    parser.add_argument("--case", default="", help="only the cases whose name holds this text")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import zarr

    count = args.size * MiB // (4 * WIDTH)
    data = sample(count)
    threads = args.threads
    print(f"zarr {zarr.__version__}, {args.size} MiB of <U{WIDTH}, {threads} threads, ", end="")
    print(f"best of {args.rounds}")
    print(f"{'case':32} {'floor s':>8} {'reader':>8} {'pipeline':>8} {'stock':>8}  (speed / floor)")
    with tempfile.TemporaryDirectory(dir=args.dir) as where:
        for name, (chunk, shard, zstd) in CASES.items():
            if args.case not in name:
                continue
            path = pathlib.Path(where) / name.replace(" ", "_").replace(",", "")
            write(path, data, chunk, shard, zstd)
            reader = open_array(path)
            assert (reader.read(threads=threads) == data).all()
            stock = zarr.open_array(str(path), mode="r")
            with fixedutf32.zarr.enabled():  # the pipeline is chosen as the array is opened
                piped = zarr.open_array(str(path), mode="r")
            calls = {
                "floor": floor(path, data.nbytes, threads, zstd),
                "reader": lambda: reader.read(threads=threads),
                "pipeline": lambda: piped[...],
                "stock": lambda: stock[...],
            }
            times = best(calls, args.rounds)
            ratios = [times["floor"] / times[k] for k in ("reader", "pipeline", "stock")]
            figures = "".join(f"{r:9.2f}" for r in ratios)
            print(f"{name:32} {times['floor']:8.3f}{figures}")
        path = pathlib.Path(where) / "1_MiB_raw_chunks"
        if not path.exists():
            return
        reader = open_array(path)
        pieces = np.array_split(data, threads)
        pool = ThreadPoolExecutor(threads)

        def in_memory() -> object:
            return list(pool.map(fixedutf32.to_utf8, pieces))

        assert reader.read_arrow(threads=threads).to_pylist()[:100] == data[:100].tolist()
        times = best(
            {"to_utf8": in_memory, "arrow": lambda: reader.read_arrow(threads=threads)}, args.rounds
        )
        print(
            f"{'Arrow, 1 MiB raw chunks':32} to_utf8 in memory {times['to_utf8']:.3f} s; "
            f"read_arrow {times['to_utf8'] / times['arrow']:.2f} of its speed"
        )


if __name__ == "__main__":
    main()
