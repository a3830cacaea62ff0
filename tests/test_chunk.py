"""decode_chunk / encode_chunk and the other chunk functions, with NumPy as the reference."""

import sys

import numpy as np
import pytest
from conftest import BUFFER_KINDS, as_buffer
from hypothesis import given, settings
from hypothesis import strategies as st

import fixedutf32
from fixedutf32 import (
    ChunkSizeError,
    FixedUTF32Error,
    InvalidCodePointError,
    StringTooLongError,
)

ENDIANS = ["little", "big"]
PREFIX = {"little": "<", "big": ">"}
NATIVE = sys.byteorder

SAMPLE = np.array(
    [["Hi", "", "héllo"], ["a\x00b", "😀🎉", "ДОБРО"], ["漢字かな", "x" * 6, "\U0010fffd"]]
)


def chunk_bytes(values, endian, order="C", width=None):
    """The chunk NumPy itself writes: the reference for every test."""
    values = np.asarray(values)
    width = width or values.dtype.itemsize // 4
    return values.astype(f"{PREFIX[endian]}U{width}").tobytes(order=order)


# --- the spec's example -------------------------------------------------------


@pytest.mark.parametrize(
    "endian, hex_bytes",
    [("little", "480000006900000000000000"), ("big", "000000480000006900000000")],
)
def test_spec_hi_example(endian, hex_bytes):
    assert bytes(fixedutf32.encode_chunk(["Hi"], 12, endian=endian)).hex() == hex_bytes
    decoded = fixedutf32.decode_chunk(bytes.fromhex(hex_bytes), 12, endian=endian)
    assert decoded.dtype == np.dtype("=U3")
    assert decoded.tolist() == ["Hi"]


# --- round trips over every buffer type -----------------------------------------


@pytest.mark.parametrize("kind", BUFFER_KINDS)
@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize("order", ["C", "F"])
def test_decode_every_buffer_type(kind, endian, order):
    raw = chunk_bytes(SAMPLE, endian, order)
    data = as_buffer(raw, kind)
    result = fixedutf32.decode_chunk(data, 24, endian=endian, shape=SAMPLE.shape, order=order)
    np.testing.assert_array_equal(result, SAMPLE)
    assert result.dtype.isnative
    assert result.flags["C_CONTIGUOUS" if order == "C" else "F_CONTIGUOUS"]


@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("source_order", [">", "<"])
def test_encode_matches_numpy(endian, order, source_order):
    source = SAMPLE.astype(f"{source_order}U6")
    expected = chunk_bytes(SAMPLE, endian, order)
    assert bytes(fixedutf32.encode_chunk(source, endian=endian, order=order)) == expected
    assert (
        bytes(fixedutf32.encode_chunk(np.asfortranarray(source), endian=endian, order=order))
        == expected
    )


@pytest.mark.parametrize("endian", ENDIANS)
def test_encode_non_contiguous_input(endian):
    big = np.array([f"s{i}" for i in range(40)]).reshape(5, 8)
    view = big[::2, 1::3]
    assert bytes(fixedutf32.encode_chunk(view, endian=endian)) == chunk_bytes(view, endian)


@pytest.mark.parametrize("endian", ENDIANS)
def test_encode_widens_and_narrows(endian):
    values = np.array(["ab", "", "abcd"])
    assert bytes(fixedutf32.encode_chunk(values, 40, endian=endian)) == chunk_bytes(
        values, endian, width=10
    )
    narrow = np.array(["ab", "", "abc"], dtype="U9")
    assert bytes(fixedutf32.encode_chunk(narrow, 12, endian=endian)) == chunk_bytes(
        narrow, endian, width=3
    )


@pytest.mark.parametrize(
    "source",
    [
        ["Hi", "", "héllo"],
        np.array(["Hi", "", "héllo"], dtype=object),
        np.array(["Hi", "", "héllo"], dtype=np.dtypes.StringDType()),
        (["Hi"], [""], ["héllo"]),
    ],
    ids=["list", "object", "StringDType", "nested"],
)
def test_encode_other_inputs(source):
    expected = chunk_bytes(np.array(["Hi", "", "héllo"]), "little", width=8)
    assert bytes(fixedutf32.encode_chunk(source, 32)) == expected


def test_encode_default_width_of_sequences():
    assert bytes(fixedutf32.encode_chunk(["a", "abc"])) == chunk_bytes(["a", "abc"], "little")
    assert bytes(fixedutf32.encode_chunk("hey", 12)) == chunk_bytes(["hey"], "little")


@pytest.mark.parametrize("bad", [[1, "a"], ["a", None], [b"a"], [["a", "b"], ["c"]]])
def test_encode_rejects_non_strings(bad):
    with pytest.raises(TypeError):
        fixedutf32.encode_chunk(bad, 8)


def test_encode_rejects_non_string_arrays():
    with pytest.raises(TypeError, match="dtype int64"):
        fixedutf32.encode_chunk(np.arange(3, dtype=np.int64), 8)


@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)])
def test_empty_chunks(endian, shape):
    empty = np.empty(shape, dtype="U5")
    encoded = fixedutf32.encode_chunk(empty, endian=endian)
    assert len(bytes(encoded)) == 0
    decoded = fixedutf32.decode_chunk(b"", 20, endian=endian, shape=shape)
    assert decoded.shape == shape and decoded.dtype == np.dtype("=U5")
    assert fixedutf32.str_lengths(b"", 20, endian=endian).shape == (0,)
    fixedutf32.validate(b"", 20, endian=endian)
    assert len(fixedutf32.repad(b"", 20, 8, endian=endian)) == 0
    assert bytes(fixedutf32.encode_chunk([], 8)) == b""


@pytest.mark.parametrize("endian", ENDIANS)
def test_nd_chunk_round_trip(endian):
    values = np.array([f"{i}é{i * 7}" for i in range(2 * 3 * 4)]).reshape(2, 3, 4)
    for order in "CF":
        raw = fixedutf32.encode_chunk(values, 40, endian=endian, order=order)
        back = fixedutf32.decode_chunk(raw, 40, endian=endian, shape=values.shape, order=order)
        np.testing.assert_array_equal(back, values)


# --- memory sharing -----------------------------------------------------------


def test_decode_native_shares_memory():
    raw = bytearray(chunk_bytes(SAMPLE.ravel(), NATIVE))
    result = fixedutf32.decode_chunk(raw, 24, endian=NATIVE)
    assert np.shares_memory(result, np.frombuffer(raw, np.uint8))
    assert result.flags.writeable
    readonly = fixedutf32.decode_chunk(bytes(raw), 24, endian=NATIVE)
    assert not readonly.flags.writeable


def test_decode_swapped_owns_new_memory():
    other = "big" if NATIVE == "little" else "little"
    raw = bytearray(chunk_bytes(SAMPLE.ravel(), other))
    result = fixedutf32.decode_chunk(raw, 24, endian=other)
    assert not np.shares_memory(result, np.frombuffer(raw, np.uint8))
    assert result.flags.writeable


def test_encode_shares_memory_when_already_laid_out():
    values = SAMPLE.astype(f"={'U'}6")
    encoded = fixedutf32.encode_chunk(values, endian=NATIVE)
    assert np.shares_memory(encoded, values)
    other = "big" if NATIVE == "little" else "little"
    assert not np.shares_memory(fixedutf32.encode_chunk(values, endian=other), values)


@pytest.mark.parametrize("endian", ENDIANS)
def test_decode_in_place(endian):
    raw = bytearray(chunk_bytes(SAMPLE.ravel(), endian))
    result = fixedutf32.decode_chunk(raw, 24, endian=endian, out=raw)
    np.testing.assert_array_equal(result, SAMPLE.ravel())
    assert np.shares_memory(result, np.frombuffer(raw, np.uint8))
    assert bytes(raw) == chunk_bytes(SAMPLE.ravel(), NATIVE)


@pytest.mark.parametrize("endian", ENDIANS)
def test_decode_into_out(endian):
    raw = chunk_bytes(SAMPLE, endian, "F")
    out = np.zeros(len(raw), np.uint8)
    result = fixedutf32.decode_chunk(raw, 24, endian=endian, shape=SAMPLE.shape, order="F", out=out)
    np.testing.assert_array_equal(result, SAMPLE)
    assert np.shares_memory(result, out)


@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize("length_bytes", [24, 40])
def test_encode_into_out(endian, length_bytes):
    out = bytearray(SAMPLE.size * length_bytes)
    returned = fixedutf32.encode_chunk(SAMPLE, length_bytes, endian=endian, out=out)
    assert returned is out
    assert bytes(out) == chunk_bytes(SAMPLE, endian, width=length_bytes // 4)


def test_encode_in_place_into_its_own_memory():
    values = np.array(["ab", "cd"], dtype=f"={'U'}2")
    other = "big" if NATIVE == "little" else "little"
    expected = chunk_bytes(values, other)
    memory = values.view(np.uint8)
    fixedutf32.encode_chunk(values, endian=other, out=memory)
    assert memory.tobytes() == expected


def test_partial_overlap_is_refused():
    raw = bytearray(chunk_bytes(["abcd", "efgh", "ijkl"], "big"))
    view = memoryview(raw)
    with pytest.raises(ValueError, match="overlap"):
        fixedutf32.decode_chunk(view[:32], 16, endian="big", out=view[16:48])


# --- byteswap, repad, str_lengths ----------------------------------------------


def test_byteswap_every_buffer_type():
    raw = chunk_bytes(SAMPLE, "little")
    for kind in ["bytearray", "ndarray", "mmap", "array"]:
        buffer = as_buffer(raw, kind)
        fixedutf32.byteswap(buffer)
        assert bytes(buffer) == chunk_bytes(SAMPLE, "big")


def test_byteswap_does_not_validate():
    buffer = bytearray(b"\x00\xd8\x00\x00")
    fixedutf32.byteswap(buffer)
    assert bytes(buffer) == b"\x00\x00\xd8\x00"


def test_byteswap_errors():
    with pytest.raises(TypeError, match="read-only bytes"):
        fixedutf32.byteswap(b"abcd")
    with pytest.raises(ChunkSizeError, match="multiple of length_bytes 4"):
        fixedutf32.byteswap(bytearray(6))
    with pytest.raises(BufferError, match="C-contiguous"):
        fixedutf32.byteswap(np.zeros((4, 4), np.uint32)[:, ::2])


@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize(
    "from_units, to_units", [(6, 6), (6, 9), (6, 17), (8, 16), (16, 8), (9, 5), (3, 1), (1, 3)]
)
def test_repad_matches_numpy(endian, from_units, to_units):
    values = np.array(
        ["", "a", "ab\x00c"[: min(4, to_units, from_units)], "x" * min(from_units, to_units)] * 5
    )
    raw = chunk_bytes(values, endian, width=from_units)
    result = fixedutf32.repad(raw, 4 * from_units, 4 * to_units, endian=endian)
    assert bytes(result) == chunk_bytes(values, endian, width=to_units)
    out = bytearray(len(result))
    assert fixedutf32.repad(raw, 4 * from_units, 4 * to_units, endian=endian, out=out) is out
    assert bytes(out) == bytes(result)


def test_repad_too_long():
    raw = chunk_bytes(["abc", "abcdef", "a\x00\x00b"], "little", width=6)
    with pytest.raises(StringTooLongError) as info:
        fixedutf32.repad(raw, 24, 12)
    assert (info.value.index, info.value.length, info.value.capacity) == (1, 6, 3)
    assert "element 1 has 6 code points; expected at most 3" in str(info.value)
    out = bytearray(b"\xaa" * 36)
    with pytest.raises(StringTooLongError):
        fixedutf32.repad(raw, 24, 12, out=out)
    assert out == bytearray(b"\xaa" * 36)


def test_repad_keeps_interior_nul():
    raw = chunk_bytes(["a\x00\x00b"], "big", width=5)
    with pytest.raises(StringTooLongError) as info:
        fixedutf32.repad(raw, 20, 12, endian="big")
    assert info.value.length == 4
    assert bytes(fixedutf32.repad(raw, 20, 16, endian="big")) == chunk_bytes(
        ["a\x00\x00b"], "big", width=4
    )


@pytest.mark.parametrize("endian", ENDIANS)
def test_str_lengths_matches_python(endian):
    values = np.array(["", "a", "a\x00b", "😀" * 6, "\x00\x00x", "abc"])
    lengths = fixedutf32.str_lengths(chunk_bytes(values, endian), 24, endian=endian)
    assert lengths.dtype == np.intp
    assert lengths.tolist() == [len(str(v)) for v in values]
    unchecked = fixedutf32.str_lengths(
        chunk_bytes(values, endian), 24, endian=endian, validate=False
    )
    assert unchecked.tolist() == lengths.tolist()


# --- hypothesis ---------------------------------------------------------------

scalar_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(scalar_text, max_size=20),
    endian=st.sampled_from(ENDIANS),
    extra=st.integers(0, 3),
)
def test_hypothesis_round_trip(values, endian, extra):
    values = np.array(values, dtype="U12") if values else np.empty(0, "U12")
    capacity = max([len(v) for v in values.tolist()] + [1]) + extra
    raw = fixedutf32.encode_chunk(values, 4 * capacity, endian=endian)
    assert bytes(raw) == chunk_bytes(values, endian, width=capacity)
    back = fixedutf32.decode_chunk(raw, 4 * capacity, endian=endian)
    np.testing.assert_array_equal(back, values)
    assert fixedutf32.str_lengths(raw, 4 * capacity, endian=endian).tolist() == [
        len(v) for v in values.tolist()
    ]


@settings(max_examples=100, deadline=None)
@given(
    values=st.lists(
        st.text(st.characters(exclude_categories=["Cs"], min_codepoint=1), min_size=1, max_size=8),
        min_size=1,
        max_size=10,
    )
)
def test_hypothesis_strings_at_capacity(values):
    # Strings that fill the width exactly: no padding left to strip.
    capacity = max(len(v) for v in values)
    exact = [v + v[0] * (capacity - len(v)) for v in values]
    raw = fixedutf32.encode_chunk(exact, 4 * capacity, endian="big")
    assert fixedutf32.decode_chunk(raw, 4 * capacity, endian="big").tolist() == exact
    if capacity > 1:
        with pytest.raises(StringTooLongError) as info:
            fixedutf32.encode_chunk(exact, 4 * (capacity - 1))
        assert info.value.index == next(
            i for i, v in enumerate(exact) if len(v.rstrip("\x00")) == capacity
        )


def test_interior_nul_is_content_trailing_nul_is_padding():
    raw = fixedutf32.encode_chunk(["a\x00b", "ab\x00"], 16)
    assert bytes(raw) == "a\x00b\x00ab\x00\x00".encode("utf-32-le")
    assert fixedutf32.decode_chunk(raw, 16).tolist() == ["a\x00b", "ab"]


# --- bad code units at every position ------------------------------------------

BAD_UNITS = [0x110000, 0xFFFFFFFF, 0xD800, 0xDFFF]


def planted(endian, position, bad, n_elements=3, width=4):
    units = np.array([ord(c) for c in "abcdéfgh😀ijk"][: n_elements * width], dtype=np.uint32)
    units[position] = bad
    return units.astype(f"{PREFIX[endian]}u4").tobytes()


def check_error(info, position, bad, width=4):
    error = info.value
    assert isinstance(error, FixedUTF32Error) and isinstance(error, ValueError)
    assert (error.index, error.position, error.code_point) == (
        position // width,
        position % width,
        bad,
    )
    assert f"U+{bad:04X}" in str(error)
    assert f"at element {position // width}, position {position % width}" in str(error)
    assert error.kind == ("surrogate" if 0xD800 <= bad <= 0xDFFF else "too_large")


@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize("bad", BAD_UNITS)
def test_bad_unit_everywhere_decode(endian, bad, simd_level):
    for position in range(12):
        raw = planted(endian, position, bad)
        with pytest.raises(InvalidCodePointError) as info:
            fixedutf32.validate(raw, 16, endian=endian)
        check_error(info, position, bad)
        with pytest.raises(InvalidCodePointError) as info:
            fixedutf32.decode_chunk(raw, 16, endian=endian)
        check_error(info, position, bad)
        # In place: the buffer comes back exactly as it was.
        buffer = bytearray(raw)
        with pytest.raises(InvalidCodePointError) as info:
            fixedutf32.decode_chunk(buffer, 16, endian=endian, out=buffer)
        check_error(info, position, bad)
        assert bytes(buffer) == raw
        out = bytearray(b"\x55" * len(raw))
        with pytest.raises(InvalidCodePointError) as info:
            fixedutf32.decode_chunk(raw, 16, endian=endian, out=out)
        check_error(info, position, bad)
        assert out == bytearray(b"\x55" * len(raw))
        with pytest.raises(InvalidCodePointError) as info:
            fixedutf32.str_lengths(raw, 16, endian=endian)
        check_error(info, position, bad)
        for to_length in (16, 24):
            with pytest.raises(InvalidCodePointError) as info:
                fixedutf32.repad(raw, 16, to_length, endian=endian)
            check_error(info, position, bad)
        # validate=False passes the unit through untouched.
        trusted = fixedutf32.decode_chunk(raw, 16, endian=endian, validate=False)
        assert trusted.view(np.uint32).ravel()[position] == bad


@pytest.mark.parametrize("source_endian", ENDIANS)
@pytest.mark.parametrize("endian", ENDIANS)
@pytest.mark.parametrize("bad", BAD_UNITS)
def test_bad_unit_everywhere_encode(source_endian, endian, bad, simd_level):
    for position in range(12):
        array = np.frombuffer(planted(source_endian, position, bad), f"{PREFIX[source_endian]}U4")
        for length_bytes in (16, 24):
            out = bytearray(b"\x55" * (3 * length_bytes))
            with pytest.raises(InvalidCodePointError) as info:
                fixedutf32.encode_chunk(array, length_bytes, endian=endian)
            check_error(info, position, bad)
            with pytest.raises(InvalidCodePointError) as info:
                fixedutf32.encode_chunk(array, length_bytes, endian=endian, out=out)
            check_error(info, position, bad)
            assert out == bytearray(b"\x55" * (3 * length_bytes))


def test_encode_in_place_error_leaves_array_unchanged():
    array = np.frombuffer(bytearray(planted(NATIVE, 9, 0xD800)), f"={'U'}4")
    before = array.view(np.uint8).tobytes()
    other = "big" if NATIVE == "little" else "little"
    with pytest.raises(InvalidCodePointError):
        fixedutf32.encode_chunk(array, endian=other, out=array.view(np.uint8))
    assert array.view(np.uint8).tobytes() == before


def test_message_example():
    raw = np.array([0x61] * 13 + [0xD800] + [0x62] * 2, dtype="<u4").tobytes()
    with pytest.raises(
        InvalidCodePointError,
        match=r"^invalid code point U\+D800 \(surrogate\) at element 3, position 1",
    ):
        fixedutf32.decode_chunk(raw, 16)


def test_too_long_fill_message():
    with pytest.raises(StringTooLongError) as info:
        fixedutf32.encode_chunk(["ok", "😀😀😀"], 8)
    assert (info.value.index, info.value.length, info.value.capacity) == (1, 3, 2)


def test_too_long_index_follows_order():
    values = np.array([["a", "b"], ["toolong", "c"]])
    with pytest.raises(StringTooLongError) as info:
        fixedutf32.encode_chunk(values, 8, order="F")
    assert info.value.index == 1
    with pytest.raises(StringTooLongError) as info:
        fixedutf32.encode_chunk(values, 8, order="C")
    assert info.value.index == 2


def test_errors_pickle():
    import pickle

    errors = [
        InvalidCodePointError(1, 2, 0xD800),
        StringTooLongError(1, 5, 3),
        fixedutf32.InvalidUTF8Error(4, 7, "truncated sequence"),
    ]
    for error in errors:
        clone = pickle.loads(pickle.dumps(error))
        assert type(clone) is type(error)
        assert str(clone) == str(error)
        assert vars(clone) == vars(error)


def test_package_all_is_the_submodules_public_names():
    from fixedutf32 import chunk, errors, transcode

    names = fixedutf32.__all__
    assert len(names) == len(set(names))
    assert {*chunk.__all__, *transcode.__all__, *errors.__all__} <= set(names)
    for name in names:
        assert getattr(fixedutf32, name).__module__.startswith("fixedutf32"), name


# --- unaligned, read-only, wrong sizes and types ------------------------------


@pytest.mark.parametrize("offset", [1, 2, 3, 5])
@pytest.mark.parametrize("endian", ENDIANS)
def test_unaligned_inputs(offset, endian, simd_level):
    values = np.array([f"{i}-élément-{i}" for i in range(300)])
    raw = chunk_bytes(values, endian)
    storage = bytearray(offset) + bytearray(raw)
    view = memoryview(storage)[offset:]
    np.testing.assert_array_equal(
        fixedutf32.decode_chunk(view, values.dtype.itemsize, endian=endian), values
    )
    assert fixedutf32.str_lengths(view, values.dtype.itemsize, endian=endian).tolist() == [
        len(v) for v in values
    ]
    wide = fixedutf32.repad(view, values.dtype.itemsize, values.dtype.itemsize + 12, endian=endian)
    assert bytes(wide) == chunk_bytes(values, endian, width=values.dtype.itemsize // 4 + 3)
    fixedutf32.decode_chunk(view, values.dtype.itemsize, endian=endian, out=view)
    np.testing.assert_array_equal(np.frombuffer(view, values.dtype.newbyteorder("=")), values)
    out_storage = bytearray(len(raw) + offset)
    out_view = memoryview(out_storage)[offset:]
    fixedutf32.encode_chunk(values, endian=endian, out=out_view)
    assert bytes(out_view) == raw


def test_read_only_out_is_refused():
    raw = chunk_bytes(["ab"], "big")
    with pytest.raises(TypeError, match="writable"):
        fixedutf32.decode_chunk(raw, 8, endian="big", out=bytes(8))
    with pytest.raises(TypeError, match="writable"):
        fixedutf32.decode_chunk(raw, 8, endian="big", out=raw)
    with pytest.raises(TypeError, match="writable"):
        fixedutf32.encode_chunk(["ab"], 8, out=b"\x00" * 8)


def test_non_contiguous_buffers_are_refused():
    strided = np.zeros((4, 8), np.uint8)[:, ::2]
    with pytest.raises(BufferError, match="C-contiguous"):
        fixedutf32.decode_chunk(strided, 4)
    with pytest.raises(BufferError, match="C-contiguous"):
        fixedutf32.decode_chunk(b"\x00" * 16, 4, out=strided)


@pytest.mark.parametrize("call", ["decode", "validate", "str_lengths", "repad"])
def test_size_not_multiple(call):
    raw = b"a\x00\x00\x00" * 5
    functions = {
        "decode": lambda: fixedutf32.decode_chunk(raw, 8),
        "validate": lambda: fixedutf32.validate(raw, 8),
        "str_lengths": lambda: fixedutf32.str_lengths(raw, 8),
        "repad": lambda: fixedutf32.repad(raw, 8, 4),
    }
    with pytest.raises(ChunkSizeError, match="20 bytes, which is not a multiple of length_bytes 8"):
        functions[call]()


def test_shape_and_out_size_mismatch():
    raw = b"a\x00\x00\x00" * 6
    with pytest.raises(ChunkSizeError, match=r"shape \(4,\) needs 4 elements"):
        fixedutf32.decode_chunk(raw, 4, shape=(4,))
    with pytest.raises(ChunkSizeError, match="out holds 8 bytes, expected exactly 24"):
        fixedutf32.decode_chunk(raw, 4, out=bytearray(8))
    with pytest.raises(ChunkSizeError, match="out holds 4 bytes, expected exactly 8"):
        fixedutf32.encode_chunk(["ab"], 8, out=bytearray(4))
    assert fixedutf32.decode_chunk(raw, 4, shape=(2, 3)).shape == (2, 3)
    assert fixedutf32.decode_chunk(raw, 4, shape=6).shape == (6,)


@pytest.mark.parametrize("length_bytes", [True, 0, 6, -4, 4.0, "48", None, 13])
def test_bad_length_bytes(length_bytes):
    with pytest.raises(ValueError, match="length_bytes must be a positive"):
        fixedutf32.decode_chunk(b"", length_bytes)
    with pytest.raises(ValueError, match="length_bytes must be a positive"):
        fixedutf32.validate(b"", length_bytes)
    if length_bytes is not None:
        with pytest.raises(ValueError, match="length_bytes must be a positive"):
            fixedutf32.encode_chunk(["a"], length_bytes)


def test_numpy_integer_length_bytes_is_accepted():
    assert fixedutf32.decode_chunk(b"a\x00\x00\x00", np.int64(4)).tolist() == ["a"]


@pytest.mark.parametrize("endian", ["LITTLE", "<", None, "native", ["little"]])
def test_bad_endian(endian):
    with pytest.raises(ValueError, match="endian must be 'little' or 'big'"):
        fixedutf32.decode_chunk(b"", 4, endian=endian)
    with pytest.raises(ValueError, match="endian must be 'little' or 'big'"):
        fixedutf32.encode_chunk(["a"], endian=endian)


def test_bad_order():
    with pytest.raises(ValueError, match="order must be 'C' or 'F'"):
        fixedutf32.decode_chunk(b"", 4, order="A")


@pytest.mark.parametrize("data", [None, 12, "abcd", [1, 2]])
def test_non_buffer_data(data):
    with pytest.raises(TypeError, match="buffer protocol"):
        fixedutf32.decode_chunk(data, 4)


def test_validate_false_keeps_bytes_exactly():
    raw = np.array([0x61, 0xD800, 0x110000, 0xFFFFFFFF], dtype=">u4").tobytes()
    decoded = fixedutf32.decode_chunk(raw, 16, endian="big", validate=False)
    assert decoded.view(np.uint32).tolist() == [0x61, 0xD800, 0x110000, 0xFFFFFFFF]
    encoded = fixedutf32.encode_chunk(decoded, endian="big", validate=False)
    assert bytes(encoded) == raw


WRITABLE_KINDS = ["bytearray", "memoryview", "array", "ndarray", "mmap"]


def writable_buffer(nbytes, kind):
    if kind == "memoryview":
        return memoryview(bytearray(nbytes))
    return as_buffer(bytes(nbytes), kind)


@pytest.mark.parametrize("kind", WRITABLE_KINDS)
@pytest.mark.parametrize("endian", ENDIANS)
def test_out_of_every_writable_buffer_type(kind, endian):
    raw = chunk_bytes(SAMPLE, endian)
    out = writable_buffer(len(raw), kind)
    assert fixedutf32.encode_chunk(SAMPLE, endian=endian, out=out) is out
    assert bytes(out) == raw
    target = writable_buffer(len(raw), kind)
    decoded = fixedutf32.decode_chunk(out, 24, endian=endian, shape=SAMPLE.shape, out=target)
    np.testing.assert_array_equal(decoded, SAMPLE)
    in_place = fixedutf32.decode_chunk(out, 24, endian=endian, shape=SAMPLE.shape, out=out)
    np.testing.assert_array_equal(in_place, SAMPLE)
    assert bytes(out) == chunk_bytes(SAMPLE, NATIVE)
