"""fixedutf32.zarr.PooledNDBuffer with real zarr-python: results from the pool, values as stock."""

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")

import fixedutf32.zarr as fz  # noqa: E402
from fixedutf32 import _kernels  # noqa: E402

# zarr 3.1.6 warns that fixed_length_utf32 has no V3 specification (3.3 and newer do not)
pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

POOLED = {"ndbuffer": "fixedutf32.zarr.PooledNDBuffer"}


def _array(tmp_path, name, dtype, shape, chunks, zarr_format=3, order="C"):
    extra = {"order": order} if zarr_format == 2 else {}
    z = zarr.create_array(
        tmp_path / name, shape=shape, chunks=chunks, dtype=dtype, zarr_format=zarr_format, **extra
    )
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "U":
        values = np.array(["abcd", "Жи", "😀", ""], dtype=dtype)[rng.integers(0, 4, shape)]
    else:
        values = rng.integers(0, 100, shape).astype(dtype)
    z[...] = values
    return z, values


@pytest.mark.parametrize(
    ("dtype", "shape", "chunks", "zarr_format", "order"),
    [
        ("<U4", (40_000,), (5_000,), 3, "C"),
        (">U3", (300, 200), (64, 50), 2, "F"),
        ("<i8", (256, 64), (32, 64), 3, "C"),
        ("<U2", (10,), (4,), 3, "C"),  # below the pool's 32 KiB: NumPy's own memory
    ],
)
def test_reads_through_the_pooled_buffer_equal_stock_and_are_aligned(
    tmp_path, dtype, shape, chunks, zarr_format, order
):
    _, values = _array(tmp_path, "a", dtype, shape, chunks, zarr_format, order)
    with fz.enabled(), zarr.config.set(POOLED):
        array = zarr.open_array(tmp_path / "a")
        result = array[...]
        part = array[1:-1]
    np.testing.assert_array_equal(result, values)
    np.testing.assert_array_equal(part, values[1:-1])
    assert result.flags.writeable
    if result.nbytes >= _kernels.POOL_MIN_BYTES:
        assert result.ctypes.data % 64 == 0  # from the pool, whose buffers start on 64 bytes
        assert not np.shares_memory(result, part)
        # the result's memory layout is the one zarr asked for
        f_order = order == "F" and len(shape) > 1
        assert result.flags.f_contiguous if f_order else result.flags.c_contiguous


def test_a_freed_result_is_reused_by_the_next_read_of_its_size(tmp_path):
    _array(tmp_path, "a", "<U4", (100_000,), (10_000,))
    with zarr.config.set(POOLED):
        array = zarr.open_array(tmp_path / "a")
        first = array[...]
        address = first.ctypes.data
        second = array[...]
        assert second.ctypes.data != address  # both alive: no memory shared
        del first
        gc.collect()
        third = array[...]
    assert third.ctypes.data == address  # the freed result's memory, already mapped
    np.testing.assert_array_equal(third, second)


def test_object_data_types_get_numpys_memory():
    buffer = fz.PooledNDBuffer.empty((50_000,), np.dtype(object))
    array = buffer.as_numpy_array()
    assert array.dtype == object and array.flags.owndata  # never raw pool bytes


def test_the_setting_works_from_the_environment_through_the_entry_point(tmp_path):
    # zarr finds the class by its entry point (zarr.ndbuffer), without fixedutf32.zarr imported.
    _array(tmp_path, "a", "<U4", (20_000,), (5_000,))
    code = textwrap.dedent(f"""
        import sys, warnings, zarr
        warnings.simplefilter("ignore")
        from zarr.core.buffer import default_buffer_prototype
        result = zarr.open_array({str(tmp_path / "a")!r})[...]
        print(default_buffer_prototype().nd_buffer.__qualname__, result.ctypes.data % 64)
        print("fixedutf32.zarr" in sys.modules)
        """)
    env = {**os.environ, "ZARR_NDBUFFER": "fixedutf32.zarr.PooledNDBuffer"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["PooledNDBuffer", "0", "True"]


@pytest.mark.parametrize("shape", [(-1,), (2, -3), (10**12, 10**12), (2**62,)])
def test_a_shape_numpy_refuses_is_refused_as_numpy_refuses_it(shape):
    with pytest.raises(ValueError) as numpy_error:
        np.empty(shape, "<U4")
    with pytest.raises(ValueError) as ours:
        fz.PooledNDBuffer.empty(shape, np.dtype("<U4"))
    assert str(ours.value) == str(numpy_error.value)  # never an array of another shape


def test_a_bad_data_type_or_shape_type_is_refused():
    with pytest.raises(TypeError, match="not understood"):
        fz.PooledNDBuffer.empty((4,), "not a dtype")
    with pytest.raises(TypeError):
        fz.PooledNDBuffer.empty((4.5,), np.dtype("<U4"))
