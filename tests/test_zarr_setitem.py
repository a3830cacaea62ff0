"""fixedutf32.zarr.setitem: array[selection] = value without zarr's silent truncation.

Real zarr-python arrays on disk, V2 and V3, with and without the
integration switched on; every refusal leaves the store's files exactly as
they were.
"""

import contextlib

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")

import fixedutf32  # noqa: E402
import fixedutf32.zarr as fz  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

LAYOUTS = {
    "v3": dict(zarr_format=3),
    "v3-big": dict(zarr_format=3, serializer=zarr.codecs.BytesCodec(endian="big")),
    "v2": dict(zarr_format=2),
    "v2-big": dict(zarr_format=2, dtype=">U4"),
}


def create(path, layout):
    kwargs = dict(shape=(3, 4), chunks=(2, 2), dtype="<U4", fill_value="-")
    kwargs.update(LAYOUTS[layout])
    return zarr.create_array(path, **kwargs)


def snapshot(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


@contextlib.contextmanager
def switch(enabled):
    if enabled:
        with fz.enabled():
            yield
    else:
        yield


VALUES = {
    "U array": lambda rows: np.array(rows, dtype="<U8"),
    "big-endian U array": lambda rows: np.array(rows, dtype=">U8"),
    "strided U array": lambda rows: np.repeat(np.array(rows, dtype="<U8"), 2, axis=1)[:, ::2],
    "StringDType": lambda rows: np.array(rows, dtype=np.dtypes.StringDType()),
    "list": lambda rows: rows,
}


@pytest.mark.parametrize("enabled", [False, True], ids=["stock", "enabled"])
@pytest.mark.parametrize("kind", sorted(VALUES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_writes_what_fits_and_refuses_what_zarr_would_cut(tmp_path, layout, kind, enabled):
    make = VALUES[kind]
    rows = [["a", "bb", "ccc", "dddd"], ["😀", "", "x\x00y", "wxyz"]]
    path = tmp_path / "a"
    with switch(enabled):
        arr = create(path, layout)
        fz.setitem(arr, np.s_[:2], make(rows))
        np.testing.assert_array_equal(arr[:2], np.array(rows, dtype="<U4"))
        before = snapshot(path)
        too_long = [["a", "bb", "ccc", "dddd"], ["ok", "five!", "toolong", "z"]]
        with pytest.raises(fz.StringTooLongForArrayError) as info:
            fz.setitem(arr, np.s_[1:3], make(too_long))
        # the first string that does not fit, in C order of the value
        assert (info.value.index, info.value.length, info.value.capacity) == (5, 5, 4)
        assert info.value.value_index == (1, 1)
        assert isinstance(info.value, fixedutf32.StringTooLongError)
        assert "nothing was written" in str(info.value)
        assert snapshot(path) == before
    # zarr itself, by plain assignment, cuts the same string
    arr = zarr.open_array(path)
    arr[1:3] = np.array(too_long)
    assert arr[2, 1] == "five"


def test_scalars_broadcasts_and_other_selections(tmp_path):
    arr = create(tmp_path / "a", "v3")
    fz.setitem(arr, (0, 0), "abcd")
    fz.setitem(arr, np.s_[2], np.str_("e"))  # broadcast over a row
    fz.setitem(arr.oindex, ([1], [0, 3]), [["O", "P"]])
    fz.setitem(arr.vindex, ([1, 2], [1, 2]), ["V", "W"])
    expected = np.array(
        [["abcd", "-", "-", "-"], ["O", "V", "-", "P"], ["e", "e", "W", "e"]], dtype="<U4"
    )
    np.testing.assert_array_equal(arr[:], expected)
    with pytest.raises(fz.StringTooLongForArrayError, match=r"value index \(\) has 5"):
        fz.setitem(arr, (0, 0), "abcde")
    with pytest.raises(fz.StringTooLongForArrayError, match=r"value index \(0, 1\) has 6"):
        fz.setitem(arr.oindex, ([1], [0, 3]), [["O", "PPPPPP"]])
    np.testing.assert_array_equal(arr[:], expected)


def test_numbers_are_checked_as_zarr_casts_them(tmp_path):
    arr = create(tmp_path / "a", "v2")
    fz.setitem(arr, np.s_[0, :2], [1234, 7])
    assert arr[0, :2].tolist() == ["1234", "7"]
    with pytest.raises(fz.StringTooLongForArrayError, match="has 5 code points"):
        fz.setitem(arr, np.s_[0, :2], [12345, 7])


def test_lone_surrogates_are_refused_too(tmp_path):
    path = tmp_path / "a"
    arr = create(path, "v3")
    before = snapshot(path)
    with pytest.raises(fixedutf32.InvalidCodePointError, match="U\\+D800"):
        fz.setitem(arr, np.s_[0, 0], "a\ud800")
    assert snapshot(path) == before


def test_bad_arguments():
    ints = zarr.create_array({}, shape=(2,), dtype="i4")
    with pytest.raises(TypeError, match=r"expected an array of fixed-length strings.*int32"):
        fz.setitem(ints, 0, "a")
    with pytest.raises(TypeError, match=r"expected a zarr array.*got builtins.list"):
        fz.setitem(["a"], 0, "a")
    strings = zarr.create_array({}, shape=(2,), dtype="<U2")
    missing = np.array(["a", None], dtype=np.dtypes.StringDType(na_object=None))
    with pytest.raises(ValueError, match="element 1 is a missing value"):
        fz.setitem(strings, np.s_[:], missing)
    with pytest.raises(IndexError):  # zarr's own error for a selection out of bounds
        fz.setitem(strings, 5, "a")
