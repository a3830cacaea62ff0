"""pytest-benchmark groups: zarr-python reads and writes with and without fixedutf32.

One group per case of ``fixedutf32 bench --zarr`` (a 64 MiB ``<U16`` array in
1 MiB chunks here, to keep the rounds short): stock zarr, zarr with
``fixedutf32.zarr.BytesCodec``, zarr with ``fixedutf32.zarr.CodecPipeline``,
the standalone reader of docs/reader.md and the floor, side by side.  Read each group
as ratios between its rows; ``fixedutf32 bench --zarr`` prints them as a
table with the targets.
"""

import pytest

pytest.importorskip("zarr", reason="the zarr benchmarks need zarr-python")
pytest.importorskip("numcodecs", reason="the zarr benchmarks need numcodecs")
pytest.importorskip("fixedutf32.zarr", reason="the zarr benchmarks measure fixedutf32.zarr")

from fixedutf32.bench import ZARR_CASES as CASES
from fixedutf32.bench import zarr_arrays as arrays
from fixedutf32.bench import zarr_configurations as configurations

SIZE = 64 << 20
# The fixtures outlive one test's warning filters: zarr warns at each array it opens.
pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")


@pytest.fixture(scope="module")
def bench():
    with arrays(SIZE) as made:
        yield made


@pytest.fixture(scope="module")
def calls(bench):
    made = {}

    def get(case):
        if case not in made:
            made.clear()  # one case's arrays open at a time
            made[case] = bench.calls(case)
        return made[case]

    return get


@pytest.mark.parametrize(
    ("case", "configuration"), [(case, name) for case in CASES for name in configurations(case)]
)
def test_zarr(benchmark, bench, calls, case, configuration):
    call = calls(case)[configuration]
    if call is None:
        pytest.skip(f"{case}: {configuration} needs what is not installed")
    assert bench.same_data(call())  # the data, checked once before the timing
    benchmark.group = f"zarr {case} @ {SIZE >> 20} MiB"
    benchmark.extra_info["bytes"] = bench.data.nbytes
    benchmark.pedantic(call, rounds=9, warmup_rounds=1)
