"""Time the kernel rows that sit under their targets against floors of the same bytes.

Usage:
    python tools/kernel_floors.py                  # the table of docs/performance.md
    python tools/kernel_floors.py --rounds 400
    python tools/kernel_floors.py --only to_utf8_mixed --calls 4   # one call site, for:
    valgrind --tool=callgrind --collect-atstart=no \\
        --toggle-collect=fu32_avx2_utf32_to_utf8 \\
        python tools/kernel_floors.py --only to_utf8_mixed --calls 4

Each kernel is called through its wrapper in ``fixedutf32._kernels`` (no Python
argument checks: the C loop and the buffer protocol only) on the data of
``fixedutf32 bench`` at 1 MiB, and beside it the floors: ``numpy.copyto`` of
the chunk (memcpy), reads of the same bytes (``max``, ``bitwise_or.reduce``),
and a write of as many bytes (``fill``).  All calls run in turn, round after
round, so that each figure is read against the others of the same moment;
the table gives the least and the median microseconds of each.
"""

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from fixedutf32 import _kernels as k
from fixedutf32.bench.cases import NATIVE, WIDTH, make_text, sample_chunk
from fixedutf32.transcode import to_utf8

MiB = 1 << 20


def calls() -> dict[str, Callable[[], object]]:
    """Every kernel and floor of the table, as calls without arguments."""
    little = np.frombuffer(sample_chunk(MiB, NATIVE), np.uint8)
    foreign = np.frombuffer(
        np.frombuffer(little.tobytes(), f"=U{WIDTH}").astype(f">U{WIDTH}").tobytes(), np.uint8
    )
    out = np.empty_like(little)
    lengths = np.empty(little.size // (4 * WIDTH), np.intp)
    mixed = make_text("mixed", MiB)
    offsets, values = to_utf8(mixed)
    room = np.empty(4 * mixed.nbytes + k.UTF8_SLACK, np.uint8)
    starts = np.empty(mixed.size + 1, np.int64)
    decoded = np.empty(mixed.nbytes, np.uint8)
    wide = np.frombuffer(sample_chunk(2 * MiB, NATIVE, WIDTH, max_length=8, seed=2), np.uint8)
    narrow = np.empty(MiB, np.uint8)
    swap = k.VALIDATE | k.SRC_SWAPPED | k.SWAP
    return {
        "str_lengths": lambda: k.str_lengths(little, lengths, WIDTH, k.VALIDATE),
        "decode_big_new": lambda: k.converted(foreign, np.dtype(f"=U{WIDTH}"), 1, MiB, WIDTH, swap),
        "decode_big_out": lambda: k.convert(foreign, out, WIDTH, swap),
        "to_utf8_mixed": lambda: k.utf32_to_utf8(mixed, WIDTH, False, True, starts, room, False),
        "from_utf8_mixed": lambda: k.utf8_to_utf32(
            offsets, 1, mixed.size, values, WIDTH, False, decoded
        ),
        "repad_narrow": lambda: k.repad(wide, narrow, WIDTH, WIDTH // 2, k.VALIDATE),
        "floor: memcpy 1 MiB": lambda: np.copyto(out, little),
        "floor: read 1 MiB (max)": little.view(np.uint32).max,
        "floor: read 1 MiB (or)": lambda: np.bitwise_or.reduce(little.view(np.uint64)),
        "floor: read 2 MiB (max)": wide.view(np.uint32).max,
        "floor: write 1 MiB": lambda: out.fill(0),
        "floor: read UTF-8 of mixed (max)": values[: values.size // 8 * 8].view(np.uint64).max,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--only", help="run one call --calls times, untimed (for callgrind)")
    parser.add_argument("--calls", type=int, default=4)
    args = parser.parse_args(argv)
    table = calls()
    if args.only:
        for _ in range(args.calls):
            table[args.only]()
        return 0
    times: dict[str, list[float]] = {name: [] for name in table}
    for call in table.values():
        call()
    for _ in range(args.rounds):
        for name, call in table.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    print(f"{'call (1 MiB of UTF-32 unless said)':36} {'least us':>9} {'median us':>10}")
    for name, seconds in times.items():
        print(f"{name:36} {min(seconds) * 1e6:9.1f} {statistics.median(seconds) * 1e6:10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
