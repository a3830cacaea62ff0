"""pytest-benchmark groups: ``fixedutf32 check`` and ``convert`` of a whole store, with baselines.

The rows of ``fixedutf32 bench --store`` (a 64 MiB store in 2 MiB chunks here,
to keep the rounds short), grouped so that each group is read as a ratio:
reading the chunk files and ``check`` (warm and cold page cache), reading the
shard files and ``check`` of the sharded store, ``check`` of the zstd store on
1 and 2 threads, zstd-compressing the chunks' bytes and ``convert`` to V3
zstd.  ``fixedutf32 bench --store`` prints them as a table with the targets.
"""

import pytest

pytest.importorskip("zarr", reason="the store benchmarks need zarr-python")
pytest.importorskip("numcodecs", reason="the store benchmarks need numcodecs")

from fixedutf32.bench import stores

SIZE = 64 << 20
THREADS = 2
ROWS = [
    "read chunk files",
    "check raw",
    "read chunk files, cold cache",
    "check raw, cold cache",
    "read shard files",
    "check sharded raw",
    "check zstd, 1 thread",
    f"check zstd, {THREADS} threads",
    "zstd-compress the chunks",
    "convert raw -> V3 zstd",
]


@pytest.fixture(scope="module")
def rows():
    with stores(SIZE, threads=THREADS) as made:
        assert made.check()  # the stores clean, once before the timing
        yield made.rows()


@pytest.mark.parametrize("row", ROWS)
def test_store(benchmark, rows, row):
    if row not in rows:
        pytest.skip("the cold-cache rows need os.posix_fadvise")
    group, call, before = rows[row]
    benchmark.group = f"store {group} @ {SIZE >> 20} MiB"
    benchmark.extra_info["bytes"] = SIZE
    benchmark.pedantic(call, setup=before, rounds=5, warmup_rounds=0 if before else 1)
