"""Whole-store figures for ``fixedutf32 check`` and ``fixedutf32 convert``, side by side
with their baselines, measured in one run::

    python benchmarks/bench_store.py [--size-mib 256] [--threads 2] [--repeat 3] [--json]

It writes a local Zarr V3 fixed_length_utf32 store of ``--size-mib`` MiB of
chunk data with zarr-python (once raw, once zstd), then times, best of
``--repeat``:

* reading every chunk file of the raw store on ``--threads`` threads (the
  baseline: plain ``open().read()``), and ``check`` of that store; both
  with a warm page cache (a race of memory copies) and with the files
  evicted from the cache before each repetition (``posix_fadvise``,
  reads from the disk, as for a store not read recently);
* ``check`` of the zstd store on 1 thread and on ``--threads`` threads;
* zstd-compressing every chunk's bytes on ``--threads`` threads (numcodecs,
  zarr-python's default level), and ``convert`` of the raw store to V3 zstd.

Except for the cold-cache rows the page cache is warm for every row alike.
Read the rows as ratios; on a
shared machine the absolute times drift.  Not part of the test run.
"""

import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

MiB = 1 << 20
WIDTH = 16  # code points per element: 64-byte elements
CHUNK_ELEMENTS = 32768  # 2 MiB chunks


def make_strings(count, seed=0):
    """``count`` strings of 0..WIDTH code points: mostly ASCII words, some accented, some CJK."""
    rng = np.random.default_rng(seed)
    units = rng.integers(0x61, 0x7B, size=(count, WIDTH), dtype=np.uint32)
    accented = rng.random((count, WIDTH)) < 0.05
    units[accented] = rng.integers(0xE0, 0x100, size=int(accented.sum()), dtype=np.uint32)
    cjk = rng.random(count) < 0.1
    units[cjk] = rng.integers(0x4E00, 0x9FFF, size=(int(cjk.sum()), WIDTH), dtype=np.uint32)
    lengths = rng.integers(0, WIDTH + 1, size=count)
    units[np.arange(WIDTH)[None, :] >= lengths[:, None]] = 0
    return units.view(f"<U{WIDTH}").reshape(count)


def write_store(path, data, compressors):
    import zarr
    from zarr.codecs import BytesCodec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        array = zarr.create_array(str(path), shape=data.shape, chunks=(CHUNK_ELEMENTS,),
                                  dtype=data.dtype, serializer=BytesCodec(endian="little"),
                                  compressors=compressors, fill_value="")
        array[:] = data


def evict(files):
    """Drop ``files`` from the page cache (written back first), so the next read hits the disk."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def best(function, repeat, before=None):
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def chunk_files(store):
    return sorted(p for p in (store / "c").rglob("*") if p.is_file())


def read_files(files, threads):
    def read(path):
        with open(path, "rb") as f:
            return len(f.read())

    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(read, files))


def compress_chunks(data, threads):
    import numcodecs

    codec = numcodecs.Zstd(level=0)
    raw = data.view(np.uint8)
    size = CHUNK_ELEMENTS * 4 * WIDTH
    pieces = [raw[i:i + size] for i in range(0, raw.nbytes, size)]
    with ThreadPoolExecutor(threads) as pool:
        return sum(len(c) for c in pool.map(codec.encode, pieces))


def run(size_mib, threads, repeat, workdir):
    from fixedutf32.store import check, convert

    count = size_mib * MiB // (4 * WIDTH)
    data = make_strings(count)
    raw, packed, out = workdir / "raw", workdir / "zstd", workdir / "out"
    write_store(raw, data, None)
    from zarr.codecs import ZstdCodec

    write_store(packed, data, [ZstdCodec(level=0)])
    files = chunk_files(raw)
    nbytes = data.nbytes
    assert check(str(raw), threads=threads).ok

    def convert_once():
        convert(str(raw), str(out), threads=threads, overwrite=True)

    cold = (lambda: evict(files)) if hasattr(os, "posix_fadvise") else None
    rows = {
        "read chunk files": best(lambda: read_files(files, threads), repeat),
        "check raw": best(lambda: check(str(raw), threads=threads), repeat),
        "read chunk files, cold cache": best(lambda: read_files(files, threads), repeat, cold),
        "check raw, cold cache": best(lambda: check(str(raw), threads=threads), repeat, cold),
        "check zstd, 1 thread": best(lambda: check(str(packed), threads=1), repeat),
        f"check zstd, {threads} threads": best(lambda: check(str(packed), threads=threads), repeat),
        "zstd-compress the chunks": best(lambda: compress_chunks(data, threads), repeat),
        "convert raw -> V3 zstd": best(convert_once, repeat),
    }
    ratios = {
        "check raw / read files (speed, >= 0.8)":
            rows["read chunk files"] / rows["check raw"],
        "check raw / read files, cold cache (speed, >= 0.8)":
            rows["read chunk files, cold cache"] / rows["check raw, cold cache"],
        f"check zstd {threads} threads / 1 thread (speed, >= 1.7)":
            rows["check zstd, 1 thread"] / rows[f"check zstd, {threads} threads"],
        "convert / zstd-compress (time, <= 1.3)":
            rows["convert raw -> V3 zstd"] / rows["zstd-compress the chunks"],
    }
    return nbytes, rows, ratios


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=int, default=256, help="chunk data in MiB (default 256)")
    parser.add_argument("--threads", type=int, default=2, help="threads (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions (default 3)")
    parser.add_argument("--dir", default=None, help="where to write the stores (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fixedutf32-bench-store-", dir=args.dir))
    try:
        nbytes, rows, ratios = run(args.size_mib, args.threads, args.repeat, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps({"bytes": nbytes, "threads": args.threads, "seconds": rows,
                          "ratios": ratios}, indent=2))
        return 0
    print(f"{nbytes / MiB:.0f} MiB of fixed_length_utf32 chunks (2 MiB each), "
          f"{args.threads} threads, best of {args.repeat}")
    print(f"| {'row':<32} | {'seconds':>8} | {'MiB/s':>8} |")
    print(f"|{'-' * 34}|{'-' * 9}:|{'-' * 9}:|")
    for name, seconds in rows.items():
        print(f"| {name:<32} | {seconds:8.3f} | {nbytes / MiB / seconds:8.0f} |")
    print()
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
