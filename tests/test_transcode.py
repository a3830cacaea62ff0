"""Tests of fixedutf32.transcode: fixed_length_utf32 chunks <-> UTF-8.

Python's own codecs are the reference for UTF-8; NumPy's ``U`` dtype for the
fixed-width side.  Every kernel test runs on each SIMD level this machine has.
"""

import array
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import SIMD_LEVELS, at_simd_level
from hypothesis import given, settings
from hypothesis import strategies as st

from fixedutf32 import (
    ChunkSizeError,
    InvalidCodePointError,
    InvalidUTF8Error,
    StringTooLongError,
    _kernels,
    encode_chunk,
)
from fixedutf32.transcode import (
    decode_vlen_utf8,
    encode_vlen_utf8,
    from_arrow,
    from_utf8,
    to_arrow,
    to_string_dtype,
    to_utf8,
)


def run_on_each_level(func, *args, **kwargs):
    """Call func on every SIMD level; return the results (or exceptions)."""
    outcomes = []
    for name in SIMD_LEVELS:
        with at_simd_level(name):
            try:
                outcomes.append(("ok", func(*args, **kwargs)))
            except Exception as exc:  # noqa: BLE001 - compared below
                outcomes.append(("error", exc))
    return outcomes


def same_outcome(outcomes):
    """Assert every level gave the same result or the same exception; return it."""
    kind, first = outcomes[0]
    for other_kind, other in outcomes[1:]:
        assert other_kind == kind, (first, other)
        if kind == "error":
            assert type(other) is type(first)
            assert other.args == first.args
        elif isinstance(first, tuple):
            for a, b in zip(first, other, strict=True):
                np.testing.assert_array_equal(a, b)
        else:
            assert np.asarray(other).tobytes() == np.asarray(first).tobytes()
    if kind == "error":
        raise first
    return first


def utf8_layout(strings):
    data = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(data) + 1, np.int64)
    offsets[1:] = np.cumsum([len(d) for d in data])
    return offsets, b"".join(data)


# Text over all planes, without surrogates (which UTF-32 cannot hold).
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)


# ---------------------------------------------------------------------------
# Round trips against Python's codecs
# ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    strings=st.lists(text, max_size=12),
    extra=st.integers(0, 9),
    endian=st.sampled_from(["little", "big"]),
)
def test_round_trip_all_planes(strings, extra, endian):
    capacity = max([len(s) for s in strings] + [1]) + extra
    prefix = "<" if endian == "little" else ">"
    u = (
        np.array(strings, dtype=f"{prefix}U{capacity}")
        if strings
        else np.zeros(0, f"{prefix}U{capacity}")
    )
    expected = [s.rstrip("\x00") for s in strings]  # NumPy drops trailing U+0000 too
    exp_offsets, exp_values = utf8_layout(expected)

    offsets, values = same_outcome(
        run_on_each_level(to_utf8, u.tobytes(), 4 * capacity, endian=endian)
    )
    np.testing.assert_array_equal(offsets, exp_offsets)
    assert values.tobytes() == exp_values

    back = same_outcome(run_on_each_level(from_utf8, offsets, values, 4 * capacity, endian=endian))
    assert back.dtype == np.dtype(f"{prefix}U{capacity}")
    assert back.tobytes() == u.tobytes()

    vlen = same_outcome(run_on_each_level(encode_vlen_utf8, u))
    back = same_outcome(run_on_each_level(decode_vlen_utf8, vlen, 4 * capacity, endian=endian))
    assert back.tobytes() == u.tobytes()


def test_interior_nul_kept_trailing_padding_stripped(simd_level):
    u = np.array(["a\x00b", "\x00x", "", "abc"], dtype="<U5")
    offsets, values = to_utf8(u)
    assert offsets.tolist() == [0, 3, 5, 5, 8]
    assert values.tobytes() == b"a\x00b\x00xabc"
    # raw chunk with explicit trailing U+0000 padding
    raw = np.array([0x61, 0, 0x62, 0, 0], "<u4").tobytes()
    assert to_utf8(raw, 20)[1].tobytes() == b"a\x00b"


def test_spec_example_both_byte_orders(simd_level):
    little = bytes.fromhex("48000000 69000000 00000000")
    big = bytes.fromhex("00000048 00000069 00000000")
    assert to_utf8(little, 12)[1].tobytes() == b"Hi"
    assert to_utf8(big, 12, endian="big")[1].tobytes() == b"Hi"
    assert from_utf8([0, 2], b"Hi", 12).tobytes() == little
    assert from_utf8([0, 2], b"Hi", 12, endian="big").tobytes() == big


@pytest.mark.parametrize(
    "make",
    [
        bytes,
        bytearray,
        memoryview,
        lambda b: np.frombuffer(b, np.uint8),
        lambda b: array.array("B", b),
    ],
    ids=["bytes", "bytearray", "memoryview", "ndarray", "array"],
)
def test_buffer_types(make, simd_level):
    u = np.array(["Hi", "Привет", "🎉"], dtype="<U6")
    offsets, values = to_utf8(make(u.tobytes()), 24)
    assert values.tobytes() == "HiПривет🎉".encode()
    assert from_utf8(offsets, make(values.tobytes()), 24).tobytes() == u.tobytes()
    assert decode_vlen_utf8(make(encode_vlen_utf8(u).tobytes()), 24).tobytes() == u.tobytes()


def test_numpy_input_shapes_orders_and_widths(simd_level):
    u = np.array([["ab", "Ωmega"], ["", "終わり"]], dtype=">U7")
    _, values = to_utf8(u)  # byte order and width from the dtype
    assert values.tobytes() == "abΩmega終わり".encode()
    fortran = np.asfortranarray(u)
    assert to_utf8(fortran)[1].tobytes() == values.tobytes()  # read in C order
    assert to_utf8(u[:, ::-1])[1].tobytes() == "Ωmegaab終わり".encode()
    with pytest.raises(ValueError, match="does not match"):
        to_utf8(u, 12)
    with pytest.raises(ValueError, match="does not match"):
        to_utf8(u, endian="little")
    with pytest.raises(TypeError, match="length_bytes is required"):
        to_utf8(b"abcd")


POOLS = {
    "all": list("abc xyz")
    + ["Я", "ж", "中", "文", "🎉", "\U0010ffff", "\x00", "\u07ff", "\u0800", "\uffff"],
    "below-U+0800": list("abc xyz") + ["Я", "ж", "é", "\x80", "\u07ff", "\x00", "\x7f"],
    "ascii": list("abc xyz\x00\x7f"),
}


@pytest.mark.parametrize("pool", list(POOLS))
@pytest.mark.parametrize("width", list(range(1, 20)) + [31, 32, 33, 40])
@pytest.mark.parametrize("shift", [0, 1, 3])
def test_levels_agree_on_widths_and_unaligned_starts(pool, width, shift):
    rng = np.random.default_rng(width)
    pool = POOLS[pool]
    strings = ["".join(rng.choice(pool, rng.integers(0, width + 1))) for _ in range(37)]
    u = np.array(strings, dtype=f"<U{width}")
    raw = bytearray(shift) + u.tobytes()
    data = memoryview(raw)[shift:]
    offsets, values = same_outcome(run_on_each_level(to_utf8, data, 4 * width))
    exp_offsets, exp_values = utf8_layout([s.rstrip("\x00") for s in strings])
    np.testing.assert_array_equal(offsets, exp_offsets)
    assert values.tobytes() == exp_values
    vraw = bytearray(shift) + values.tobytes()
    back = same_outcome(run_on_each_level(from_utf8, offsets, memoryview(vraw)[shift:], 4 * width))
    assert back.tobytes() == u.tobytes()


# One code point of each UTF-8 length, with the values at the edges of each length.
BY_LENGTH = {
    1: ["a", "\x01", "\x3f", "\x40", "\x7f"],
    2: ["\x80", "é", "\u07ff", "Я", "\u07bf"],
    3: ["\u0800", "中", "\ud7ff", "\ue000", "\uffff", "\u2014"],
    4: ["\U00010000", "🎉", "\U0010ffff", "\U0001f44d"],
}


def _by_length(rng, length):
    pool = BY_LENGTH[length]
    return pool[rng.integers(len(pool))]


def test_by_length_table():
    for length, pool in BY_LENGTH.items():
        assert all(len(c) == 1 and len(c.encode("utf-8")) == length for c in pool)


@pytest.mark.parametrize("width", [4, 8, 15, 16, 17, 24, 32, 33])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_levels_agree_on_every_length_at_every_lane(width, endian):
    """Every UTF-8 length at every code unit position, next to every other length,
    with interior U+0000 and trailing padding: the levels agree with Python."""
    rng = np.random.default_rng(width)
    strings = []
    for position in range(width):
        for length in (1, 2, 3, 4):
            for neighbour in (1, 2, 3, 4):
                chars = [_by_length(rng, neighbour) for _ in range(width)]
                chars[position] = _by_length(rng, length)
                fill = int(rng.integers(position + 1, width + 1))
                strings.append("".join(chars[:fill]))
    # random mixes, some with U+0000 inside and all lengths of padding
    for _ in range(200):
        fill = int(rng.integers(0, width + 1))
        chars = [_by_length(rng, int(rng.integers(1, 5))) for _ in range(fill)]
        if fill > 1 and rng.integers(3) == 0:
            chars[int(rng.integers(fill - 1))] = "\x00"
        strings.append("".join(chars))
    prefix = "<" if endian == "little" else ">"
    u = np.array(strings, dtype=f"{prefix}U{width}")
    expected = [s.rstrip("\x00") for s in strings]
    exp_offsets, exp_values = utf8_layout(expected)
    for func in (to_utf8, encode_vlen_utf8):
        outcome = same_outcome(run_on_each_level(func, u.tobytes(), 4 * width, endian=endian))
        if func is to_utf8:
            offsets, values = outcome
            np.testing.assert_array_equal(offsets, exp_offsets)
            assert values.tobytes() == exp_values
        else:
            items = b"".join(
                len(e).to_bytes(4, "little") + e for e in (x.encode("utf-8") for x in expected)
            )
            assert bytes(outcome) == len(expected).to_bytes(4, "little") + items


@pytest.mark.parametrize("good", [0xD7FF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF])
@pytest.mark.parametrize("bad", [0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0x110000, 0x7FFFFFFF, 0x80000000])
def test_validity_edges_next_to_each_other(good, bad):
    """Scalar values at the edges of the invalid ranges pass; the values just
    past them fail at the same place on every level."""
    width = 16
    units = np.full(3 * width, good, "<u4")
    _, values = same_outcome(run_on_each_level(to_utf8, units.tobytes(), 4 * width))
    assert values.tobytes() == (chr(good) * 3 * width).encode("utf-8")
    for flat in (0, 7, 8, 15, 16, 31, 47):
        bad_units = units.copy()
        bad_units[flat] = bad
        with pytest.raises(InvalidCodePointError) as info:
            same_outcome(run_on_each_level(to_utf8, bad_units.tobytes(), 4 * width))
        assert (info.value.index, info.value.position, info.value.code_point) == (
            flat // width,
            flat % width,
            bad,
        )


# ---------------------------------------------------------------------------
# Invalid UTF-32 input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0xD800, 0xDFFF, 0x110000, 0xFFFFFFFF])
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("width", [5, 16, 19, 32])
def test_invalid_code_point_at_every_position(bad, endian, width):
    count = 3
    dtype = "<u4" if endian == "little" else ">u4"
    for flat in range(width * count):
        units = np.full(width * count, ord("a"), dtype)
        units[flat] = bad
        chunk = units.tobytes()
        for func in (to_utf8, encode_vlen_utf8):
            with pytest.raises(InvalidCodePointError) as info:
                same_outcome(run_on_each_level(func, chunk, 4 * width, endian=endian))
            assert (info.value.index, info.value.position, info.value.code_point) == (
                flat // width,
                flat % width,
                bad,
            )
        # validate=False never fails (the output is unspecified)
        to_utf8(chunk, 4 * width, endian=endian, validate=False)


@pytest.mark.parametrize("kind", ["cjk", "emoji", "mixed-halves"])
def test_text_needing_more_than_half_the_worst_case(kind):
    """Large chunks are first transcoded into half the worst case's room; text
    that needs more continues in a larger buffer, with the same result."""
    from fixedutf32 import transcode

    width = 16
    # The private size from which to_utf8 starts with half the room sizes the
    # input only; what is asserted is to_utf8's result.
    count = 2 * transcode._HALF_ROOM_MIN // (4 * width) + 5
    rng = np.random.default_rng(7)
    strings = []
    for i in range(count):
        if kind == "cjk":
            chars = [_by_length(rng, 3) for _ in range(width)]
        elif kind == "emoji":
            chars = [
                _by_length(rng, 4) for _ in range(int(rng.integers(width // 2 + 1, width + 1)))
            ]
        else:  # ASCII first, so the room runs out in the second half
            length = 1 if i < count // 2 else 4
            chars = [_by_length(rng, length) for _ in range(width)]
        strings.append("".join(chars))
    u = np.array(strings, dtype=f"<U{width}")
    exp_offsets, exp_values = utf8_layout(strings)
    assert len(exp_values) > u.nbytes // 2  # the continuation is taken
    offsets, values = same_outcome(run_on_each_level(to_utf8, u))
    np.testing.assert_array_equal(offsets, exp_offsets)
    assert values.tobytes() == exp_values
    # an invalid code point before and after the point where the room ran out
    units = u.view("<u4").copy()
    for flat in (3, units.size // 3, units.size - 2):
        bad = units.copy()
        bad[flat] = 0xDC00
        with pytest.raises(InvalidCodePointError) as info:
            same_outcome(run_on_each_level(to_utf8, bad.tobytes(), 4 * width))
        assert (info.value.index, info.value.position) == (flat // width, flat % width)


def test_kernel_stops_where_room_runs_out(simd_level):
    """The kernel starts an element only with room for its worst case; the
    caller continues from (done, nbytes) and gets the same bytes."""
    # Private on purpose: to_utf8 picks the room itself (half or all of the
    # worst case); the kernel's contract at any other room is reachable only here.
    width = 5
    strings = ["Я中🎉ab", "", "x", "中中中中中", "🎉🎉🎉🎉🎉", "a\x00b", "ok"] * 9
    u = np.array(strings, dtype=f"<U{width}")
    exp_offsets, exp_values = utf8_layout([s.rstrip("\x00") for s in strings])
    n = len(strings)
    for room in (0, 1, 4 * width + _kernels.UTF8_SLACK, 100, 333):
        offsets = np.zeros(n + 1, np.int64)
        dst = np.zeros(room, np.uint8)
        status, written, done = _kernels.utf32_to_utf8(u, width, False, True, offsets, dst, False)
        assert status == _kernels.OK_STATUS and done <= n
        # each element started had room for 4 * width bytes plus the slack
        assert done == n or room - written < 4 * width + _kernels.UTF8_SLACK
        assert bytes(dst[:written]) == exp_values[:written]
        np.testing.assert_array_equal(offsets[: done + 1], exp_offsets[: done + 1])
        grown = np.zeros(written + (n - done) * 4 * width + _kernels.UTF8_SLACK, np.uint8)
        grown[:written] = dst[:written]
        status, written, done = _kernels.utf32_to_utf8(
            u, width, False, True, offsets, grown, False, done, written
        )
        assert status == _kernels.OK_STATUS and done == n
        assert bytes(grown[:written]) == exp_values
        np.testing.assert_array_equal(offsets, exp_offsets)


def test_invalid_code_point_message():
    chunk = np.array([0x61, 0, 0x62, 0xD800], "<u4").tobytes()
    with pytest.raises(
        InvalidCodePointError, match=r"U\+D800 \(surrogate\) at element 1, position 1"
    ):
        to_utf8(chunk, 8)


# ---------------------------------------------------------------------------
# Invalid UTF-8 input
# ---------------------------------------------------------------------------

INVALID_UTF8 = [
    pytest.param(b"\xc0\xaf", "overlong", id="overlong-2-C0"),
    pytest.param(b"\xc1\xbf", "overlong", id="overlong-2-C1"),
    pytest.param(b"\xe0\x80\xaf", "overlong", id="overlong-3"),
    pytest.param(b"\xe0\x9f\xbf", "overlong", id="overlong-3-max"),
    pytest.param(b"\xf0\x80\x80\xaf", "overlong", id="overlong-4"),
    pytest.param(b"\xf0\x8f\xbf\xbf", "overlong", id="overlong-4-max"),
    pytest.param(b"\xed\xa0\x80", "surrogate", id="surrogate-D800"),
    pytest.param(b"\xed\xbf\xbf", "surrogate", id="surrogate-DFFF"),
    pytest.param(b"\xf4\x90\x80\x80", "above U+10FFFF", id="too-large-F4-90"),
    pytest.param(b"\xf5\x80\x80\x80", "above U+10FFFF", id="lead-F5"),
    pytest.param(b"\xf7\xbf\xbf\xbf", "above U+10FFFF", id="lead-F7"),
    pytest.param(b"\xf8\x88\x80\x80\x80", "never occurs", id="lead-F8"),
    pytest.param(b"\xfe", "never occurs", id="byte-FE"),
    pytest.param(b"\xff", "never occurs", id="byte-FF"),
    pytest.param(b"\x80", "continuation byte without", id="stray-continuation"),
    pytest.param(b"\xbf\x80", "continuation byte without", id="stray-continuations"),
    pytest.param(b"\xc3", "truncated", id="truncated-2-end"),
    pytest.param(b"\xe4\xb8", "truncated", id="truncated-3-end"),
    pytest.param(b"\xf0\x9f\x8e", "truncated", id="truncated-4-end"),
    pytest.param(b"\xe4\xb8x", "truncated", id="truncated-3-mid"),
    pytest.param(b"\xf0\x9f\x8ez", "truncated", id="truncated-4-mid"),
    pytest.param(b"\xc3\xc3\xa9", "truncated", id="lead-after-lead"),
]


@pytest.mark.parametrize("bad, reason", INVALID_UTF8)
@pytest.mark.parametrize(
    "prefix", [b"", b"ab", "Привет".encode(), b"0123456789abcdef" * 2 + "ж".encode()]
)
@pytest.mark.parametrize("suffix", [b"", b"tail", b"z" * 40])
def test_invalid_utf8_rejected_at_element_and_byte(bad, reason, prefix, suffix):
    strings = [b"fine", prefix + bad + suffix, b"\xff never reached"]
    offsets = np.cumsum([0] + [len(s) for s in strings])
    values = b"".join(strings)
    with pytest.raises(UnicodeDecodeError) as py:
        strings[1].decode("utf-8")
    width = 64
    out = bytearray(b"\x07" * (3 * 4 * width))
    before = bytes(out)
    for kwargs in ({}, {"out": out}, {"endian": "big", "out": out}):
        with pytest.raises(InvalidUTF8Error) as info:
            same_outcome(run_on_each_level(from_utf8, offsets, values, 4 * width, **kwargs))
        assert info.value.index == 1
        assert info.value.byte_offset == len(prefix) == py.value.start
        assert reason in info.value.reason
        assert f"element 1, byte {len(prefix)}" in str(info.value)
        assert bytes(out) == before
    # the vlen-utf8 decoder reports the same
    items = [len(strings).to_bytes(4, "little")] + [
        len(s).to_bytes(4, "little") + s for s in strings
    ]
    with pytest.raises(InvalidUTF8Error) as info:
        same_outcome(run_on_each_level(decode_vlen_utf8, b"".join(items), 4 * width))
    assert (info.value.index, info.value.byte_offset) == (1, len(prefix))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=48), width=st.integers(1, 50))
def test_random_bytes_match_python(data, width):
    try:
        expected = data.decode("utf-8")
        error = None
    except UnicodeDecodeError as exc:
        expected, error = None, exc
    outcome = run_on_each_level(from_utf8, [0, len(data)], data, 4 * width)
    if error is not None:
        with pytest.raises(InvalidUTF8Error) as info:
            same_outcome(outcome)
        assert info.value.byte_offset == error.start
        assert info.value.index == 0
    elif len(expected.rstrip("\x00")) > width:
        with pytest.raises(StringTooLongError) as info:
            same_outcome(outcome)
        assert (info.value.index, info.value.length, info.value.capacity) == (
            0,
            len(expected.rstrip("\x00")),
            width,
        )
    else:
        result = same_outcome(outcome)
        assert result[0] == expected.rstrip("\x00")[:width]


@settings(max_examples=300, deadline=None)
@given(
    strings=st.lists(text, min_size=1, max_size=4),
    where=st.floats(0, 1, exclude_max=True),
    byte=st.integers(0, 255),
    mode=st.sampled_from(["replace", "insert", "delete"]),
)
def test_one_corrupted_byte_matches_python(strings, where, byte, mode):
    """Valid text with one byte changed: both levels agree with Python's decoder."""
    data = bytearray("".join(strings).encode())
    if not data:
        data = bytearray(b"x")
    at = int(where * len(data))
    if mode == "replace":
        data[at] = byte
    elif mode == "insert":
        data.insert(at, byte)
    else:
        del data[at]
    data = bytes(data)
    width = 4 * max(len(data), 1)
    try:
        expected = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        with pytest.raises(InvalidUTF8Error) as info:
            same_outcome(run_on_each_level(from_utf8, [0, 0, len(data)], data, 4 * width))
        assert (info.value.index, info.value.byte_offset) == (1, exc.start)
    else:
        result = same_outcome(run_on_each_level(from_utf8, [0, 0, len(data)], data, 4 * width))
        assert result[1] == expected.rstrip("\x00")


def _sequences():
    """Every 2-byte sequence; 3- and 4-byte ones for every lead and second byte."""
    for b0 in range(0x80, 0x100):
        for b1 in range(0x100):
            yield bytes([b0, b1])
    for b0 in range(0xE0, 0xF8):
        for b1 in range(0x100):
            for b2 in (0x00, 0x7F, 0x80, 0xBF, 0xC0):
                yield bytes([b0, b1, b2]) if b0 < 0xF0 else bytes([b0, b1, b2, 0x80])


@pytest.mark.parametrize("before", [0, 14, 15])
def test_levels_and_python_agree_on_short_sequences(before):
    """Each sequence placed so that it crosses a 16-byte block boundary (or not)."""
    prefix, suffix = b"a" * before, b"z" * 9
    width = 32
    for seq in _sequences():
        data = prefix + seq + suffix
        try:
            expected = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            expected, start = None, exc.start
        outcomes = run_on_each_level(from_utf8, [0, len(data)], data, 4 * width)
        if expected is None:
            with pytest.raises(InvalidUTF8Error) as info:
                same_outcome(outcomes)
            assert info.value.byte_offset == start, seq
        else:
            assert same_outcome(outcomes)[0] == expected.rstrip("\x00"), seq


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("total", [15, 16, 17, 31, 32, 33, 47, 64, 100])
def test_bad_byte_in_first_middle_last_vector(position, total):
    for fill in ("a", "ж", "中", "🎉"):
        good = (fill * total).encode()[:total]
        good = good[: len(good.decode("utf-8", "ignore").encode())]
        n = len(good)
        at = {"first": 0, "middle": n // 2, "last": max(n - 1, 0)}[position]
        # move to a code point boundary
        while at > 0 and (good[at] & 0xC0) == 0x80:
            at -= 1
        data = good[:at] + b"\x80" + good[at:]
        with pytest.raises(InvalidUTF8Error) as info:
            same_outcome(run_on_each_level(from_utf8, [0, 0, len(data)], data, 4 * 128))
        assert (info.value.index, info.value.byte_offset) == (1, at)


def test_string_too_long_and_trailing_nul_is_padding(simd_level):
    with pytest.raises(StringTooLongError) as info:
        from_utf8([0, 1, 5], b"aabcd", 12)
    assert (info.value.index, info.value.length, info.value.capacity) == (1, 4, 3)
    assert "element 1 has 4 code points; expected at most 3" in str(info.value)
    # U+0000 beyond the capacity is padding
    assert from_utf8([0, 5], b"ab\x00\x00\x00", 8).tolist() == ["ab"]
    long_ascii = b"x" * 40
    with pytest.raises(StringTooLongError):
        from_utf8([0, 40], long_ascii, 4 * 39)
    assert from_utf8([0, 40], long_ascii, 4 * 40).tolist() == ["x" * 40]


def test_bad_offsets(simd_level):
    for offsets in ([0, 5], [2, 1], [-1, 0], [0, 2, 1]):
        with pytest.raises(ValueError, match="offsets of string"):
            from_utf8(offsets, b"abcd", 8)
    with pytest.raises(ValueError, match="1-D array of at least one integer"):
        from_utf8([0.0, 1.0], b"a", 8)
    with pytest.raises(ValueError, match="1-D array"):
        from_utf8([], b"", 8)
    assert from_utf8([3], b"abc", 8).shape == (0,)
    # offsets need not start at 0, int32 works
    assert from_utf8(np.array([1, 3], np.int32), b"xab", 8).tolist() == ["ab"]


def test_out_argument(simd_level):
    offsets, values = utf8_layout(["Hi", "Привет"])
    out = bytearray(2 * 24)
    assert from_utf8(offsets, values, 24, out=out) is out
    assert bytes(out) == np.array(["Hi", "Привет"], "<U6").tobytes()
    out = np.zeros(2, "<U6")
    from_utf8(offsets, values, 24, out=out)
    assert out.tolist() == ["Hi", "Привет"]
    with pytest.raises(ChunkSizeError, match="expected exactly 48"):
        from_utf8(offsets, values, 24, out=bytearray(47))
    with pytest.raises(TypeError, match="writable"):
        from_utf8(offsets, values, 24, out=bytes(48))
    shared = bytearray(values + bytes(48))
    with pytest.raises(ValueError, match="overlap"):
        from_utf8(offsets, memoryview(shared)[: len(values)], 24, out=memoryview(shared)[:48])
    out = bytearray(b"\x01" * 48)
    with pytest.raises(StringTooLongError):
        from_utf8([0, 2, 9], b"Hiabcdefg", 24, out=out)
    assert out == bytearray(b"\x01" * 48)


def test_argument_errors():
    with pytest.raises(ValueError, match="length_bytes"):
        to_utf8(b"abcd", 6)
    with pytest.raises(ValueError, match="endian"):
        to_utf8(b"abcd", 4, endian="middle")
    with pytest.raises(ChunkSizeError, match="not a multiple"):
        to_utf8(b"abcdef", 4)
    with pytest.raises(TypeError, match="buffer protocol"):
        to_utf8(object(), 4)
    with pytest.raises(ValueError, match="endian"):
        from_utf8([0], b"", 4, endian="native")


# ---------------------------------------------------------------------------
# pyarrow
# ---------------------------------------------------------------------------


def test_arrow_round_trip(simd_level):
    pa = pytest.importorskip("pyarrow")
    strings = ["Hi", "", "Привет мир", "a\x00b", "🎉" * 5, "東京"]
    u = np.array(strings, dtype="<U10")
    arr = to_arrow(u)
    assert arr.type == pa.string()
    assert arr.equals(pa.array(strings))
    # pyarrow's own conversion agrees except that it cuts "a\x00b" at the U+0000
    assert to_arrow(np.delete(u, 3)).equals(pa.array(np.delete(u, 3)))
    large = to_arrow(u.tobytes(), 40, large=True)
    assert large.type == pa.large_string() and large.to_pylist() == strings
    assert from_arrow(arr, 40).tobytes() == u.tobytes()
    assert from_arrow(large, 40, endian="big").tobytes() == u.astype(">U10").tobytes()
    # sliced, chunked, view arrays
    assert from_arrow(arr[2:4], 40).tolist() == strings[2:4]
    chunked = pa.chunked_array([arr[:3], arr[3:]])
    assert from_arrow(chunked, 40).tolist() == strings
    assert from_arrow(pa.chunked_array([arr]), 40).tolist() == strings
    if hasattr(pa, "string_view"):
        assert from_arrow(arr.cast(pa.string_view()), 40).tolist() == strings
    assert from_arrow(pa.array([], pa.string()), 8).shape == (0,)


def test_arrow_shares_buffers(monkeypatch):
    pytest.importorskip("pyarrow")
    import fixedutf32.transcode as transcode

    made = []

    def recording_to_utf8(*args, **kwargs):
        made.append(to_utf8(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(transcode, "to_utf8", recording_to_utf8)
    u = np.array(["abc", "de", "Привет"] * 1000)
    for large in (False, True):
        arr = transcode.to_arrow(u, large=large)
        arr.validate(full=True)
        offsets, values = made[-1]
        assert arr.buffers()[2].address == values.ctypes.data  # the UTF-8 bytes are not copied
        if large:
            assert arr.buffers()[1].address == offsets.ctypes.data
    # from_arrow reads Arrow's buffers in place: a sliced array decodes without copying values
    arr = transcode.to_arrow(u, large=True)
    assert from_arrow(arr[1:4], 24).tolist() == ["de", "Привет", "abc"]


def test_arrow_errors():
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match=r"nulls .* at element 1"):
        from_arrow(pa.array(["a", None]), 8)
    with pytest.raises(TypeError, match="strings"):
        from_arrow(pa.array([1, 2]), 8)
    with pytest.raises(TypeError, match="pyarrow string array"):
        from_arrow(["a"], 8)
    offsets = pa.py_buffer(np.array([0, 1], np.int32))
    with pytest.raises(InvalidUTF8Error):
        from_arrow(pa.Array.from_buffers(pa.string(), 1, [None, offsets, pa.py_buffer(b"\xff")]), 8)


def test_arrow_argument_errors_are_from_utf8s():
    # from_arrow checks length_bytes, endian and out as from_utf8 does, in the
    # same order, and leaves out as it was.
    pa = pytest.importorskip("pyarrow")
    strings = pa.array(["ab", "Я"])
    offsets, values = np.array([0, 2, 4]), "abЯ".encode()
    calls = [
        ((6,), {}),
        ((8,), {"endian": "middle"}),
        ((6,), {"endian": "middle"}),
        ((8,), {"out": bytearray(12)}),
        ((8,), {"out": np.zeros(2, ">U2")}),
    ]
    for args, kwargs in calls:
        out = kwargs.get("out")
        before = None if out is None else bytes(out)
        with pytest.raises(ValueError) as expected:
            from_utf8(offsets, values, *args, **kwargs)
        with pytest.raises(type(expected.value), match="^" + re.escape(str(expected.value)) + "$"):
            from_arrow(strings, *args, **kwargs)
        assert out is None or bytes(out) == before


def _arrow_strings_error(offsets, values=b"abcdef", large=True):
    """The exception ArrowStrings raises for these arguments (the test fails if none)."""
    from fixedutf32 import ArrowStrings

    if isinstance(values, bytes):
        values = np.frombuffer(values, np.uint8)
    with pytest.raises((TypeError, ValueError, BufferError)) as caught:
        ArrowStrings(offsets, values, large)
    return caught


@pytest.mark.parametrize(
    ("offsets", "large", "kind", "message"),
    [
        # past the end of the 6 values bytes: the first offset beyond is named
        ([0, 2, 7, 9], True, ValueError, r"values \(6 bytes\), got offsets\[2\] = 7, past its end"),
        ([0, 6, 2**31 - 1], False, ValueError, r"got offsets\[2\] = 2147483647, past its end"),
        # decreasing: the first pair that decreases is named
        ([0, 4, 2, 1, 6], True, ValueError, r"got offsets\[1\] = 4 > offsets\[2\] = 2"),
        ([0, 3, 3, 6, 5], False, ValueError, r"got offsets\[3\] = 6 > offsets\[4\] = 5"),
        ([-2, 0, 6], True, ValueError, r"0 or more, got offsets\[0\] = -2"),
        ([], True, ValueError, "at least one; got none"),
        ([[0, 1], [1, 2]], True, ValueError, r"offsets must be 1-D, got shape \(2, 2\)"),
    ],
)
def test_hand_built_arrow_strings_with_bad_offsets_are_refused(offsets, large, kind, message):
    caught = _arrow_strings_error(np.array(offsets, np.int64 if large else np.int32), large=large)
    assert caught.type is kind
    assert re.search(message, str(caught.value)), str(caught.value)


def test_hand_built_arrow_strings_of_the_wrong_types_are_refused():
    int64, int32 = np.array([0, 1], np.int64), np.array([0, 1], np.int32)
    for offsets, large, message in [
        (int64, False, "native int32 for large=False (string), got an array of dtype <i8"),
        (int32, True, "native int64 for large=True (large_string), got an array of dtype <i4"),
        (int64.astype(">i8"), True, "got an array of dtype >i8"),
        (int64.astype(np.uint64), True, "got an array of dtype <u8"),
        (int64.astype(np.float64), True, "got an array of dtype <f8"),
        ([0, 1], True, "got list"),
    ]:
        caught = _arrow_strings_error(offsets, large=large)
        assert caught.type is TypeError and message in str(caught.value)
    caught = _arrow_strings_error(int64, values=np.zeros(4, np.int8))
    assert caught.type is TypeError and "values must be a NumPy array of uint8" in str(caught.value)
    caught = _arrow_strings_error(int64, values=bytearray(b"ab"))
    assert caught.type is TypeError and "got bytearray" in str(caught.value)
    caught = _arrow_strings_error(np.array([0, 9, 1, 9, 2], np.int64)[::2])
    assert caught.type is BufferError and "offsets must be C-contiguous" in str(caught.value)
    caught = _arrow_strings_error(int64, large=1)
    assert caught.type is TypeError and "large must be True or False" in str(caught.value)
    # What is checked holds: the attributes cannot be replaced afterwards.
    from fixedutf32 import ArrowStrings

    strings = ArrowStrings(int64, np.frombuffer(b"a", np.uint8), True)
    with pytest.raises(AttributeError):
        strings.offsets = np.array([0, 99], np.int64)
    assert (len(strings), strings.to_pylist()) == (1, ["a"])
    # Good offsets of any start are taken as they are, shared.
    values = np.frombuffer("xxПриветy".encode(), np.uint8)
    offsets = np.array([2, 2, 14, 15], np.int32)
    strings = ArrowStrings(offsets, values, False)
    assert strings.offsets is offsets and strings.values is values
    assert strings.to_pylist() == ["", "Привет", "y"]


def test_missing_pyarrow_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"fixedutf32\[arrow\]"):
        to_arrow(np.array(["a"]))
    # from_arrow needs no pyarrow: any exporter of the Arrow PyCapsule interface does.
    with pytest.raises(TypeError, match="__arrow_c_array__ or __arrow_c_stream__"):
        from_arrow(None, 4)


# ---------------------------------------------------------------------------
# NumPy StringDType
# ---------------------------------------------------------------------------

needs_numpy2 = pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0", reason="NumPy >= 2"
)


@needs_numpy2
def test_string_dtype_round_trip(simd_level):
    from numpy.dtypes import StringDType

    strings = [["Hi", "", "Привет"], ["a\x00b", "🎉🎉", "x" * 9]]
    u = np.array(strings, dtype=">U9")
    t = to_string_dtype(u)
    assert t.dtype == StringDType() and t.shape == (2, 3)
    assert t.tolist() == strings
    # (NumPy's own cast rejects the big-endian array: go through native order)
    assert (t == u.astype("=U9").astype(StringDType())).all()
    assert to_string_dtype(u.tobytes(), 36, endian="big").tolist() == [
        s for row in strings for s in row
    ]
    assert to_string_dtype(np.zeros(0, "<U3")).shape == (0,)
    assert bytes(encode_chunk(t, 36, endian="little")) == u.astype("<U9").tobytes()
    assert bytes(encode_chunk(t, endian="big")) == u.tobytes()


@needs_numpy2
def test_string_dtype_too_long():
    from numpy.dtypes import StringDType

    t = np.array(["ab", "abcd", "abc\x00\x00"], dtype=StringDType())
    with pytest.raises(StringTooLongError) as info:
        encode_chunk(t, 12)
    assert (info.value.index, info.value.length, info.value.capacity) == (1, 4, 3)
    ok = np.array(["ab", "abc\x00\x00"], dtype=StringDType())
    assert bytes(encode_chunk(ok, 12)) == np.array(["ab", "abc"], "<U3").tobytes()


@needs_numpy2
@pytest.mark.parametrize("with_pyarrow", [True, False])
def test_encode_chunk_of_string_dtype_with_and_without_pyarrow(with_pyarrow, monkeypatch):
    from numpy.dtypes import StringDType

    if not with_pyarrow:
        monkeypatch.setitem(sys.modules, "pyarrow", None)
    strings = [["Hi", "", "Привет"], ["a\x00b", "🎉🎉", "x" * 9]]
    t = np.array(strings, dtype=StringDType())
    for endian, prefix in (("little", "<"), ("big", ">")):
        assert bytes(encode_chunk(t, endian=endian)) == np.array(strings, f"{prefix}U9").tobytes()
    result = encode_chunk(t[:, ::-1], 40)
    assert bytes(result) == np.array([row[::-1] for row in strings], "<U10").tobytes()
    with pytest.raises(StringTooLongError) as info:
        encode_chunk(t, 4 * 8)
    assert (info.value.index, info.value.length, info.value.capacity) == (5, 9, 8)
    assert encode_chunk(np.array([], dtype=StringDType())).size == 0
    # arrays that may hold missing values go through NumPy
    na = np.array(["ab", "c"], dtype=StringDType(na_object=None))
    assert bytes(encode_chunk(na, 8)) == np.array(["ab", "c"], "<U2").tobytes()


@needs_numpy2
def test_encode_chunk_takes_string_dtype_through_the_transcoder():
    from numpy.dtypes import StringDType

    import fixedutf32

    strings = ["Hi", "Привет", "🎉", ""]
    t = np.array(strings, dtype=StringDType())
    expected = np.array(strings, dtype="<U6").tobytes()
    assert bytes(fixedutf32.encode_chunk(t, 24)) == expected
    assert bytes(fixedutf32.encode_chunk(t)) == expected
    assert bytes(fixedutf32.encode_chunk(t, 28, endian="big")) == np.array(strings, ">U7").tobytes()
    with pytest.raises(StringTooLongError):
        fixedutf32.encode_chunk(t, 20)


def test_string_dtype_needs_numpy2(monkeypatch):
    import numpy.dtypes

    monkeypatch.delattr(numpy.dtypes, "StringDType", raising=False)
    with pytest.raises(ImportError, match=r"NumPy >= 2.0"):
        to_string_dtype(np.array(["a"]))


# ---------------------------------------------------------------------------
# vlen-utf8 (numcodecs / zarr-python)
# ---------------------------------------------------------------------------


def test_vlen_utf8_matches_numcodecs(simd_level):
    numcodecs = pytest.importorskip("numcodecs")
    codec = numcodecs.VLenUTF8()
    strings = ["Hi", "", "Привет", "a\x00b", "🎉東京", "x" * 17]
    u = np.array(strings, dtype="<U17")
    ours = encode_vlen_utf8(u)
    theirs = bytes(codec.encode(np.array(strings, dtype=object)))
    assert ours.tobytes() == theirs
    assert decode_vlen_utf8(theirs, 68).tobytes() == u.tobytes()
    assert list(codec.decode(ours)) == strings
    empty = bytes(codec.encode(np.array([], dtype=object)))
    assert encode_vlen_utf8(np.zeros(0, "<U2")).tobytes() == empty
    assert decode_vlen_utf8(empty, 8).shape == (0,)


FIXTURES = Path(__file__).parent / "fixtures" / "transcode"


def test_vlen_utf8_golden_chunk(simd_level):
    """A chunk numcodecs wrote once (see fixtures/make_transcode.py)."""
    u = np.load(FIXTURES / "strings.U12.npy")
    chunk = (FIXTURES / "strings.vlen-utf8.dat").read_bytes()
    assert decode_vlen_utf8(chunk, 48).tobytes() == u.tobytes()
    assert decode_vlen_utf8(chunk, 48, endian="big").tobytes() == u.astype(">U12").tobytes()
    assert encode_vlen_utf8(u).tobytes() == chunk
    assert encode_vlen_utf8(u.astype(">U12")).tobytes() == chunk


def test_vlen_utf8_malformed_chunks(simd_level):
    good = encode_vlen_utf8(np.array(["ab", "cde"])).tobytes()
    with pytest.raises(ChunkSizeError, match="4-byte item count"):
        decode_vlen_utf8(b"\x01\x00", 8)
    with pytest.raises(ChunkSizeError, match="truncated"):
        decode_vlen_utf8(good[:-1], 12)
    with pytest.raises(
        ChunkSizeError,
        match=f"chunk of {len(good) + 1} bytes has 1 bytes left over: "
        "its header announces 2 items, "
        f"which end at byte {len(good)}",
    ):
        decode_vlen_utf8(good + b"\x00", 12)
    with pytest.raises(ChunkSizeError, match="cannot hold"):
        decode_vlen_utf8(b"\xff\xff\xff\x00" + good[4:], 12)
    out = bytearray(b"\x05" * 24)
    with pytest.raises(StringTooLongError):
        decode_vlen_utf8(good, 8, out=bytearray(16))
    with pytest.raises(ChunkSizeError):
        decode_vlen_utf8(good, 12, out=bytearray(25))
    assert decode_vlen_utf8(good, 12, out=out) is out
    assert bytes(out) == np.array(["ab", "cde"], "<U3").tobytes()


def test_vlen_utf8_zarr_python_interop(tmp_path):
    zarr = pytest.importorskip("zarr")
    strings = np.array(["Hi", "", "Привет мир", "🎉", "東京", "x"], dtype="<U10")
    path = tmp_path / "store"
    z = zarr.create_array(
        store=str(path), shape=(6,), chunks=(6,), dtype=str, compressors=None, zarr_format=3
    )
    z[:] = strings.astype(object)
    chunk = (path / "c" / "0").read_bytes()
    assert decode_vlen_utf8(chunk, 40).tolist() == strings.tolist()
    # our chunk, written in place of theirs, reads back through zarr-python
    replacement = np.array(["one", "два", "三", "🎉", "", "six"], dtype="<U10")
    (path / "c" / "0").write_bytes(encode_vlen_utf8(replacement).tobytes())
    reread = zarr.open_array(str(path), mode="r")[:]
    assert [str(s) for s in reread] == replacement.tolist()


def test_public_functions_are_documented():
    # The examples themselves run in test_docs.py, which skips the pyarrow ones without pyarrow.
    import fixedutf32.transcode as transcode

    for name in transcode.__all__:
        doc = getattr(transcode, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"{name} lacks a {section} section"
