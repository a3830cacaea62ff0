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
(higher is faster; 1.0 is the floor).  The arrays are written, the floor's
files read and the rounds timed by ``fixedutf32.bench``'s own helpers; each
call's result is checked once, untimed, before the rounds.

    python benchmarks/bench_array.py --size 256 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import pathlib
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import fixedutf32
import fixedutf32.zarr
from fixedutf32._pool import new_array
from fixedutf32.array import open_array
from fixedutf32.bench._zarr import file_slices, read_floor_threads
from fixedutf32.bench.cases import WIDTH, KiB, MiB, create_array, in_turn

# name: (chunk bytes, shard bytes or None, zstd)
CASES = {
    "1 MiB raw chunks": (MiB, None, False),
    "64 KiB chunks in 8 MiB shards": (64 * KiB, 8 * MiB, False),
    "16 KiB chunks": (16 * KiB, None, False),
    "zstd, 1 MiB chunks": (MiB, None, True),
}


def sample(count: int) -> np.ndarray:
    """``count`` strings of 0..16 code points, mostly ASCII, some of 2-4 UTF-8 bytes."""
    rng = np.random.default_rng(0)
    alphabet = np.array([*map(ord, "abcdefghij klmnopqrstuvwxyz0123456789"), 0xE9, 0x4E2D, 0x1F600])
    units = alphabet[rng.integers(0, alphabet.size, (4096, WIDTH))].astype(np.uint32)
    units[np.arange(WIDTH) >= rng.integers(0, WIDTH + 1, 4096)[:, None]] = 0
    return np.resize(units.view(f"<U{WIDTH}").ravel(), count)


def best(calls: dict, rounds: int, expected: np.ndarray | None = None) -> dict[str, float]:
    """The best time of each call over ``rounds``, the calls timed in turn (their results, if
    ``expected``, checked once first)."""
    want = None if expected is None else expected.view(np.uint8)
    same = lambda got: want is None or np.array_equal(np.asarray(got).view(np.uint8), want)  # noqa: E731
    times, checked = in_turn(calls, rounds, same)
    assert all(checked.values()), checked
    return {name: min(seconds) for name, seconds in times.items()}


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

    data, threads = sample(args.size * MiB // (4 * WIDTH)), args.threads
    print(f"zarr {zarr.__version__}, {args.size} MiB of <U{WIDTH}, {threads} threads, ", end="")
    print(f"best of {args.rounds}")
    print(f"{'case':32} {'floor s':>8} {'reader':>8} {'pipeline':>8} {'stock':>8}  (speed / floor)")
    with tempfile.TemporaryDirectory(dir=args.dir) as where:
        for name, (chunk, shard, zstd) in CASES.items():
            if args.case not in name:
                continue
            path = pathlib.Path(where) / name.replace(" ", "_").replace(",", "")
            item = data.dtype.itemsize
            create_array(
                path, data, chunk // item, shard and shard // item, zstd=1 if zstd else None
            )
            reader = open_array(path)
            stock = zarr.open_array(str(path), mode="r")
            with fixedutf32.zarr.enabled():  # the pipeline is chosen as the array is opened
                piped = zarr.open_array(str(path), mode="r")
            # The floor reads into the memory the reader's results come from (the kernels'
            # pool: huge pages where the system gives them, which the kernel copies into
            # several times faster), faulted in once.
            out = new_array(data.nbytes, np.uint8)
            out[:] = 0
            files = file_slices(path, shard or chunk, data.nbytes)
            calls = {
                "floor": lambda: read_floor_threads(files, out.dtype, threads, zstd, out=out),
                "reader": lambda: reader.read(threads=threads),
                "pipeline": lambda: piped[...],
                "stock": lambda: stock[...],
            }
            times = best(calls, args.rounds, data)
            figures = "".join(f"{times['floor'] / times[k]:9.2f}" for k in calls if k != "floor")
            print(f"{name:32} {times['floor']:8.3f}{figures}")
        path = pathlib.Path(where) / "1_MiB_raw_chunks"
        if not path.exists():
            return
        reader = open_array(path)
        pieces = np.array_split(data, threads)
        pool = ThreadPoolExecutor(threads)
        assert reader.read_arrow(threads=threads).to_pylist()[:100] == data[:100].tolist()
        times = best(
            {
                "to_utf8": lambda: list(pool.map(fixedutf32.to_utf8, pieces)),
                "arrow": lambda: reader.read_arrow(threads=threads),
            },
            args.rounds,
        )
        print(
            f"{'Arrow, 1 MiB raw chunks':32} to_utf8 in memory {times['to_utf8']:.3f} s; "
            f"read_arrow {times['to_utf8'] / times['arrow']:.2f} of its speed"
        )


if __name__ == "__main__":
    main()
