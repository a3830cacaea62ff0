"""The data path of a sharded raw read alone, without zarr: ``python tools/shard_data_path.py``.

The 256 MiB array of ``fixedutf32 bench --zarr``'s "read sharded raw" row (32 shards of 8 MiB,
64 KiB inner chunks back to back) is read on 2 threads, a half of the shards each, three ways:
``floor`` (``preadv`` into the result), ``bounce`` (the pipeline's way: each 256 KiB block read
into a buffer in cache, checked, then written to the result with non-temporal stores, so that a
chunk that fails leaves the result as it was) and ``inplace`` (read into the result and checked
there). Each into a new result (``fresh``: the pages are mapped and zeroed as they are first
written, as zarr's ``NDBuffer.empty`` results are) and into one already mapped (``warm``), in
turn for 9 rounds; medians, and each against the fresh floor of the same round.
"""

import glob
import os
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from fixedutf32._pool import aligned_empty
from fixedutf32._source import ElementLayout
from fixedutf32.bench import _zarr

SHARD_BYTES = 8 * 2**20
BLOCK_BYTES = 256 * 1024


def main() -> None:
    elements = ElementLayout(64, "little")  # the bench's <U16
    blocks = threading.local()
    with _zarr.arrays(256 * 2**20) as bench, ThreadPoolExecutor(2) as pool:
        bench.calls("read sharded raw")  # writes the array
        (directory,) = glob.glob(str(bench.root / "read-raw-little-65536-shards-8388608-*"))
        files = sorted(glob.glob(directory + "/c/*"), key=lambda p: int(p.rsplit("/", 1)[1]))
        warm = aligned_empty(len(files) * SHARD_BYTES, np.uint8)
        warm[:] = 0

        def read(mode: str, out: np.ndarray, i: int) -> None:
            fd = os.open(files[i], os.O_RDONLY)
            try:
                place = out[i * SHARD_BYTES : (i + 1) * SHARD_BYTES]
                if mode == "floor":
                    os.preadv(fd, [place], 0)
                    return
                if getattr(blocks, "block", None) is None:
                    blocks.block = aligned_empty(BLOCK_BYTES, np.uint8)
                bounce = blocks.block if mode == "bounce" else None
                outcome, error = elements.read_checked(fd, 0, place, bounce)
                assert outcome == 0 and error is None
            finally:
                os.close(fd)

        def run(mode: str, fresh: bool) -> float:
            out = aligned_empty(len(files) * SHARD_BYTES, np.uint8) if fresh else warm
            half = len(files) // 2
            shares = [range(0, half), range(half, len(files))]
            start = time.perf_counter()
            list(pool.map(lambda share: [read(mode, out, i) for i in share], shares))
            return time.perf_counter() - start

        ways = [(mode, fresh) for fresh in (True, False) for mode in ("floor", "bounce", "inplace")]
        times: dict[tuple[str, bool], list[float]] = {way: [] for way in ways}
        for _ in range(9):
            for way in ways:
                times[way].append(run(*way))
        floor = times[("floor", True)]
        for (mode, fresh), seconds in times.items():
            ratio = statistics.median(f / s for f, s in zip(floor, seconds))
            print(
                f"{mode:8} {'fresh' if fresh else 'warm':5} {statistics.median(seconds) * 1e3:6.1f}"
                f" ms   fresh floor / this {ratio:.2f}"
            )


if __name__ == "__main__":
    main()
