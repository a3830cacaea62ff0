"""pytest-benchmark groups: each kernel beside memcpy, its floor and the NumPy way.

Run with ``python -m pytest benchmarks/`` (kept out of the default test run).
Read each group as ratios between its rows, measured in the same run; the
absolute times drift on shared machines.  The floor is the least memory
traffic of the kernel's job done by NumPy on the same bytes (a read of the
chunk for the kernels that only read it: see ``fixedutf32.bench.cases.Case``);
kernels whose floor is memcpy have no separate floor row.  ``fixedutf32
bench`` prints the same comparisons as a table.
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
    "decode native (no copy)",
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


# The ways of each group: a floor row only where the floor is not memcpy.
FLOORED = {case.name for case in kernel_cases(64 * 1024) if case.floor is not None}
WAYS = [
    (kernel, way)
    for kernel in KERNELS
    for way in ("memcpy", "floor", "numpy", "fixedutf32")
    if way != "floor" or kernel in FLOORED
]


@pytest.mark.parametrize("nbytes", SIZES, ids=["1MiB", "64MiB"])
@pytest.mark.parametrize("kernel, way", WAYS)
def test_kernel(benchmark, kernel, way, nbytes):
    case = cases(nbytes)[kernel]
    benchmark.group = f"{kernel} @ {nbytes // MiB} MiB"
    benchmark.extra_info["bytes"] = case.nbytes
    benchmark.extra_info["floor"] = case.floor_name
    if way == "memcpy":
        source = np.full(case.nbytes, 7, np.uint8)
        target = np.empty_like(source)
        run(benchmark, lambda: np.copyto(target, source), None)
    elif way == "floor":
        run(benchmark, case.floor, None)
    elif way == "numpy":
        run(benchmark, case.numpy_way, case.prepare)
    else:
        run(benchmark, case.kernel, case.prepare)
