"""Golden chunks written once by NumPy (tests/fixtures/make_golden.py)."""

import pathlib

import numpy as np
import pytest

import fixedutf32

GOLDEN = pathlib.Path(__file__).parent / "fixtures" / "golden"
CASES = sorted(GOLDEN.glob("array.*.npy"))


def test_golden_cases_exist():
    assert len(CASES) >= 5


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
@pytest.mark.parametrize("endian", ["little", "big"])
def test_golden_chunk(path, endian, simd_level):
    array = np.load(path)
    number = path.stem.split(".")[1]
    encoded = (GOLDEN / f"encoded.{number}.{endian}.dat").read_bytes()
    length_bytes = array.dtype.itemsize
    assert bytes(fixedutf32.encode_chunk(array, length_bytes, endian=endian)) == encoded
    decoded = fixedutf32.decode_chunk(encoded, length_bytes, endian=endian, shape=array.shape)
    np.testing.assert_array_equal(decoded, array)
    assert decoded.dtype == array.dtype.newbyteorder("=")
    fixedutf32.validate(encoded, length_bytes, endian=endian)
    lengths = fixedutf32.str_lengths(encoded, length_bytes, endian=endian)
    assert lengths.tolist() == [len(s) for s in array.ravel().tolist()]
