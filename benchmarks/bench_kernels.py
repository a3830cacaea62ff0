"""pytest-benchmark groups: each kernel beside memcpy and the NumPy way.

Run with ``python -m pytest benchmarks/`` (kept out of the default test run).
Read each group as ratios between its rows, measured in the same run; the
absolute times drift on shared machines.  ``fixedutf32 bench`` prints the
same comparisons as a table.
"""

import numpy as np
import pytest

from fixedutf32.bench.cases import kernel_cases

MiB = 1 << 20

SIZES = [1 * MiB, 64 * MiB]
_CACHE = {}


def cases(nbytes):
    if nbytes not in _CACHE:
        _CACHE.clear()  # one size's data at a time: 64 MiB cases are large
        _CACHE[nbytes] = {case.name: case for case in kernel_cases(nbytes)}
    return _CACHE[nbytes]


KERNELS = [
    "validate",
    "decode swap -> new",
    "decode swap in place",
    "encode -> swapped",
    "repad widen U8->U16",
    "repad narrow U16->U8",
    "str_lengths",
]


def run(benchmark, function, prepare):
    if prepare is None:
        benchmark(function)
    else:
        benchmark.pedantic(function, setup=prepare, rounds=20)


@pytest.mark.parametrize("nbytes", SIZES, ids=["1MiB", "64MiB"])
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("way", ["memcpy", "numpy", "fixedutf32"])
def test_kernel(benchmark, kernel, nbytes, way):
    _, counted, function, numpy_way, prepare = cases(nbytes)[kernel]
    benchmark.group = f"{kernel} @ {nbytes // MiB} MiB"
    benchmark.extra_info["bytes"] = counted
    if way == "memcpy":
        source = np.full(counted, 7, np.uint8)
        target = np.empty_like(source)
        run(benchmark, lambda: np.copyto(target, source), None)
    elif way == "numpy":
        run(benchmark, numpy_way, prepare)
    else:
        run(benchmark, function, prepare)
