"""pytest-benchmark groups: each kernel beside memcpy, its floor and the NumPy way.

Run with ``python -m pytest benchmarks/`` (kept out of the default test run).
Read each group as ratios between its rows, measured in the same run; the
absolute times drift on shared machines.  The floor is the least memory
traffic of the kernel's job done by NumPy on the same bytes (a read of the
chunk for the kernels that only read it: see ``fixedutf32.bench.cases.Case``);
kernels whose floor is memcpy have no separate floor row.  ``fixedutf32
bench`` prints the same comparisons as a table.
"""

import pytest

from fixedutf32.bench.cases import MiB, kernel_cases, memcpy

SIZES = [1 * MiB, 64 * MiB]
_CACHE = {}


def cases(nbytes):
    if nbytes not in _CACHE:
        _CACHE.clear()  # one size's data at a time: 64 MiB cases are large
        _CACHE[nbytes] = {case.name: case for case in kernel_cases(nbytes)}
    return _CACHE[nbytes]


# The ways of each kernel (its validate=False variants aside): a floor row only where the
# floor is not memcpy.
WAYS = [
    (case.name, way)
    for case in kernel_cases(64 * 1024)
    if not case.name.endswith("validate=False")
    for way in ("memcpy", "floor", "numpy", "fixedutf32")
    if way != "floor" or case.floor is not None
]


@pytest.mark.parametrize("nbytes", SIZES, ids=["1MiB", "64MiB"])
@pytest.mark.parametrize("kernel, way", WAYS)
def test_kernel(benchmark, kernel, way, nbytes):
    case = cases(nbytes)[kernel]
    benchmark.group = f"{kernel} @ {nbytes // MiB} MiB"
    benchmark.extra_info["bytes"] = case.nbytes
    benchmark.extra_info["floor"] = case.floor_name
    if way in ("memcpy", "floor"):
        benchmark(memcpy(case.nbytes) if way == "memcpy" else case.floor)
    else:
        function = case.numpy_way if way == "numpy" else case.kernel
        if case.prepare is None:
            benchmark(function)
        else:
            benchmark.pedantic(function, setup=case.prepare, rounds=20)
