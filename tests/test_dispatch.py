"""Every SIMD level gives the portable level's bytes and errors, byte for byte.

The inputs are sized to hit every part of the vector loops: lengths that are
not a multiple of the vector width, starts at odd addresses, several fast-check
blocks (4096 code units each), and bad units in the first, a middle and the
last vector.
"""

import numpy as np
import pytest
from conftest import SIMD_LEVELS, at_simd_level
from hypothesis import given, settings
from hypothesis import strategies as st

import fixedutf32
from fixedutf32 import InvalidCodePointError, StringTooLongError

BLOCK_UNITS = 4096

# A parity test compares every SIMD level with the portable one: on a CPU with
# the portable level only there is nothing to compare, and it says so.
parity = pytest.mark.skipif(
    len(SIMD_LEVELS) < 2,
    reason=f"this CPU runs only the {SIMD_LEVELS[0]!r} kernels: no SIMD level to compare with them",
)


def outcome(function):
    """The result bytes, or the error's type and attributes."""
    try:
        result = function()
    except (InvalidCodePointError, StringTooLongError) as error:
        attributes = vars(error).copy()
        assert attributes.pop("chunk") is None  # a call on one chunk names no chunk of a batch
        return type(error).__name__, attributes
    return np.asarray(result).tobytes() if result is not None else None


def per_level(function):
    results = {}
    for level in SIMD_LEVELS:
        with at_simd_level(level):
            results[level] = outcome(function)
    return results


def assert_same_everywhere(function):
    results = per_level(function)
    reference = results["portable"]
    for level, result in results.items():
        assert result == reference, f"{level} differs from portable"
    return reference


def random_text_units(rng, n_elements, width, fill=0.7):
    """Code units of random strings: mostly ASCII, some BMP and astral."""
    pools = [
        rng.integers(0x20, 0x7F, size=(n_elements, width)),
        rng.integers(0x400, 0x4FF, size=(n_elements, width)),
        rng.integers(0x4E00, 0x9FFF, size=(n_elements, width)),
        rng.integers(0x1F300, 0x1FAFF, size=(n_elements, width)),
    ]
    choice = rng.choice(4, size=(n_elements, width), p=[0.85, 0.05, 0.05, 0.05])
    units = np.choose(choice, pools).astype(np.uint32)
    lengths = rng.integers(0, width + 1, size=n_elements)
    lengths[rng.random(n_elements) < 0.1] = width  # some at capacity
    units[np.arange(width)[None, :] >= (lengths * fill).astype(int)[:, None]] = 0
    return units


def to_bytes(units, endian, offset=0):
    raw = units.astype("<u4" if endian == "little" else ">u4").tobytes()
    storage = bytearray(offset) + bytearray(raw)
    return memoryview(storage)[offset:]


@parity
@pytest.mark.parametrize("width", [1, 3, 8, 13, 16, 40])
@pytest.mark.parametrize("n_elements", [1, 7, 333, 2 * BLOCK_UNITS // 3 + 5])
@pytest.mark.parametrize("offset", [0, 1, 4])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_valid_data_same_everywhere(width, n_elements, offset, endian):
    rng = np.random.default_rng(width * 1000 + n_elements)
    units = random_text_units(rng, n_elements, width)
    data = to_bytes(units, endian, offset)
    lb = 4 * width
    decoded = assert_same_everywhere(lambda: fixedutf32.decode_chunk(data, lb, endian=endian))
    assert decoded == units.astype("=u4").tobytes()
    assert_same_everywhere(lambda: fixedutf32.str_lengths(data, lb, endian=endian))
    assert_same_everywhere(lambda: fixedutf32.str_lengths(data, lb, endian=endian, validate=False))
    values = np.frombuffer(bytes(data), f"{'<' if endian == 'little' else '>'}U{width}")
    for to_width in {1, max(width // 2, 1), width + 1, width + 9, 2 * width}:
        assert_same_everywhere(lambda: fixedutf32.repad(data, lb, 4 * to_width, endian=endian))
        for target in ("little", "big"):
            assert_same_everywhere(
                lambda: fixedutf32.encode_chunk(values, 4 * to_width, endian=target)
            )
    for target in ("little", "big"):
        assert_same_everywhere(lambda: fixedutf32.encode_chunk(values, endian=target))
        assert_same_everywhere(lambda: fixedutf32.encode_chunk(values, lb + 12, endian=target))

    def in_place():
        buffer = bytearray(data)
        fixedutf32.decode_chunk(buffer, lb, endian=endian, out=buffer)
        return bytes(buffer)

    assert_same_everywhere(in_place)

    def swapped():
        buffer = bytearray(data)
        fixedutf32.byteswap(buffer)
        return bytes(buffer)

    assert_same_everywhere(swapped)


def bad_positions(n_units):
    """First vector, a middle one, the last one, and block edges."""
    candidates = {
        0,
        3,
        7,
        8,
        31,
        32,
        n_units // 2,
        n_units - 9,
        n_units - 8,
        n_units - 1,
        BLOCK_UNITS - 1,
        BLOCK_UNITS,
        BLOCK_UNITS + 1,
    }
    return sorted(p for p in candidates if 0 <= p < n_units)


@parity
@pytest.mark.parametrize("endian", ["little", "big"])
def test_validate_at_every_alignment(endian):
    # The AVX2 loop checks the units before the first 32-byte boundary on
    # their own: a bad unit on either side of that boundary, at every start
    # address, is found where the portable level finds it.
    width, n_units = 8, BLOCK_UNITS + 40
    units = np.full(n_units, 0x61, np.uint32)
    storage = np.zeros(4 * n_units + 128, np.uint8)
    aligned = (-storage.ctypes.data) % 64
    for offset in range(36):
        start = aligned + offset
        for position in [0, 1, 6, 7, 8, 9, 15, BLOCK_UNITS + 7, BLOCK_UNITS + 8, n_units - 1]:
            bad = units.copy()
            bad[position] = 0xD800
            raw = bad.astype("<u4" if endian == "little" else ">u4").view(np.uint8)
            storage[start : start + raw.size] = raw
            data = storage[start : start + raw.size]
            lb = 4 * width
            result = assert_same_everywhere(lambda: fixedutf32.validate(data, lb, endian=endian))
            assert result[1]["index"] == position // width, (offset, position)
            assert result[1]["position"] == position % width, (offset, position)
        storage[start : start + 4 * n_units] = units.astype(
            "<u4" if endian == "little" else ">u4"
        ).view(np.uint8)
        data = storage[start : start + 4 * n_units]
        assert (
            assert_same_everywhere(lambda: fixedutf32.validate(data, 4 * width, endian=endian))
            is None
        )


@parity
@pytest.mark.parametrize("bad", [0x110000, 0xFFFFFFFF, 0xD800, 0xDFFF])
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("offset", [0, 3])
@pytest.mark.parametrize("width", [13, 16])
def test_bad_unit_same_error_everywhere(bad, endian, offset, width):
    n_elements = 2 * BLOCK_UNITS // width + 3
    rng = np.random.default_rng(7)
    base = random_text_units(rng, n_elements, width, fill=1.0)
    base[base == 0] = 0x61
    n_units = base.size
    for position in bad_positions(n_units):
        units = base.copy()
        units.flat[position] = bad
        data = to_bytes(units, endian, offset)
        lb = 4 * width
        expected = (
            "InvalidCodePointError",
            {
                "index": position // width,
                "position": position % width,
                "code_point": bad,
                "kind": "surrogate" if bad < 0x110000 else "too_large",
            },
        )
        assert (
            assert_same_everywhere(lambda: fixedutf32.validate(data, lb, endian=endian)) == expected
        )
        assert (
            assert_same_everywhere(lambda: fixedutf32.decode_chunk(data, lb, endian=endian))
            == expected
        )
        assert (
            assert_same_everywhere(lambda: fixedutf32.str_lengths(data, lb, endian=endian))
            == expected
        )
        assert (
            assert_same_everywhere(lambda: fixedutf32.repad(data, lb, lb + 8, endian=endian))
            == expected
        )

        def in_place():
            buffer = bytearray(data)
            try:
                fixedutf32.decode_chunk(buffer, lb, endian=endian, out=buffer)
            finally:
                assert buffer == bytearray(data), "in-place decode changed the buffer on error"

        assert assert_same_everywhere(in_place) == expected
        values = np.frombuffer(bytes(data), f"{'<' if endian == 'little' else '>'}U{width}")
        for target in ("little", "big"):
            assert (
                assert_same_everywhere(lambda: fixedutf32.encode_chunk(values, endian=target))
                == expected
            )


@parity
@pytest.mark.parametrize("from_width, to_width", [(16, 8), (13, 5), (9, 8), (40, 1)])
def test_too_long_same_everywhere(from_width, to_width):
    rng = np.random.default_rng(3)
    n_elements = BLOCK_UNITS // from_width * 2 + 11
    units = random_text_units(rng, n_elements, from_width)
    units[:, to_width:] = 0
    for element in sorted({0, n_elements // 2, n_elements - 1}):
        planted = units.copy()
        planted[element, from_width - 1] = 0x62
        data = to_bytes(planted, "big")
        expected = (
            "StringTooLongError",
            {"index": element, "length": from_width, "capacity": to_width},
        )
        assert (
            assert_same_everywhere(
                lambda: fixedutf32.repad(data, 4 * from_width, 4 * to_width, endian="big")
            )
            == expected
        )


@parity
def test_streaming_path_same_everywhere():
    # Large enough for the non-temporal store path.
    from fixedutf32 import chunk

    rng = np.random.default_rng(11)
    n_units = chunk.STREAM_THRESHOLD_BYTES // 4 + 8 * 37 + 5
    units = rng.integers(0, 0xD7FF, size=n_units, dtype=np.uint32)
    data = to_bytes(units, "big", offset=4)
    decoded = assert_same_everywhere(lambda: fixedutf32.decode_chunk(data, 4, endian="big"))
    assert decoded == units.astype("=u4").tobytes()


BOUNDARY_VALUES = [
    0,
    1,
    0x7F,
    0x80,
    0xFF,
    0x100,
    0x7FF,
    0x800,
    0xD7FF,
    0xD800,
    0xD801,
    0xDBFF,
    0xDC00,
    0xDFFF,
    0xE000,
    0xFFFF,
    0x10000,
    0x10FFFF,
    0x110000,
    0x1FFFFF,
    0xD800 << 8,
    0xD800 << 16,
    0x00D80000,
    0x0000D8FF,
    0x01000000,
    0x10000000,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    0x0010FF00,
    0x00110000,
    0xFF000000,
    0x000000FF,
    0x0000FF00,
    0x00FF0000,
]


def is_scalar_value(value):
    return value <= 0x10FFFF and not 0xD800 <= value <= 0xDFFF


@pytest.mark.parametrize("endian", ["little", "big"])
def test_boundary_values_every_level(simd_level, endian):
    # Each value alone in a long valid chunk, early (vector loops) and in the
    # tail: the fast checks and the reference loop must agree on each.
    base = np.full(3 * BLOCK_UNITS + 5, 0x61, dtype=np.uint32)
    for value in BOUNDARY_VALUES:
        for position in (17, base.size - 2):
            units = base.copy()
            units[position] = value
            data = to_bytes(units, endian)
            if is_scalar_value(value):
                fixedutf32.validate(data, 4, endian=endian)
                decoded = fixedutf32.decode_chunk(data, 4, endian=endian)
                assert decoded.view(np.uint32)[position] == value
            else:
                with pytest.raises(InvalidCodePointError) as info:
                    fixedutf32.validate(data, 4, endian=endian)
                assert (info.value.index, info.value.code_point) == (position, value)
                with pytest.raises(InvalidCodePointError):
                    fixedutf32.decode_chunk(data, 4, endian=endian)


# The longest string (what `check` keeps of a chunk) is found in one pass that ORs the elements
# together over periods of lcm(width, 8) units: widths whose period is 8, 16, 32, other, or too
# long for that pass (over 256 units), counts that leave a part of a period, and bad units.
LONGEST_WIDTHS = [1, 3, 5, 8, 13, 16, 24, 33, 40, 100]


def longest_of(data, width, endian):
    from fixedutf32._source import ElementLayout

    return ElementLayout(4 * width, endian).longest_string(data)


@parity
@pytest.mark.parametrize("width", LONGEST_WIDTHS)
@pytest.mark.parametrize("n_elements", [0, 1, 7, 333, 2 * BLOCK_UNITS // 3 + 5])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_longest_string_is_the_longest_length_everywhere(width, n_elements, endian):
    rng = np.random.default_rng(width * 7 + n_elements)
    units = random_text_units(rng, n_elements, width)
    if n_elements > 3:  # an interior U+0000 counts: the length ends at the last non-zero unit
        units[n_elements // 2, :] = 0
        units[n_elements // 2, width - 1] = 0x41
    data = to_bytes(units, endian, offset=1)
    lengths = fixedutf32.str_lengths(data, 4 * width, endian=endian)
    expected = int(lengths.max()) if n_elements else 0
    for level in SIMD_LEVELS:
        with at_simd_level(level):
            assert longest_of(data, width, endian) == expected, level


@parity
@pytest.mark.parametrize("width", LONGEST_WIDTHS)
@pytest.mark.parametrize("endian", ["little", "big"])
def test_longest_string_names_the_first_bad_unit_everywhere(width, endian):
    n_elements = 2 * BLOCK_UNITS // width + 3
    rng = np.random.default_rng(width)
    base = random_text_units(rng, n_elements, width, fill=1.0)
    for position in bad_positions(base.size):
        units = base.copy()
        units.flat[position] = 0xD800
        data = to_bytes(units, endian)
        expected = assert_same_everywhere(
            lambda: fixedutf32.validate(data, 4 * width, endian=endian)
        )
        assert expected[0] == "InvalidCodePointError"
        assert assert_same_everywhere(lambda: longest_of(data, width, endian)) == expected


@given(
    width=st.integers(1, 70),
    n_elements=st.integers(0, 300),
    bad_at=st.none() | st.floats(0, 1, exclude_max=True),
    endian=st.sampled_from(["little", "big"]),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=300, deadline=None)
def test_longest_string_matches_lengths_and_validate_at_every_level(
    width, n_elements, bad_at, endian, seed
):
    units = random_text_units(np.random.default_rng(seed), n_elements, width)
    if bad_at is not None and units.size:
        units.flat[int(bad_at * units.size)] = 0xDFFF
    data = to_bytes(units, endian)
    try:
        expected = fixedutf32.str_lengths(data, 4 * width, endian=endian)
        expected = int(expected.max()) if n_elements else 0
    except InvalidCodePointError as error:
        expected = (error.index, error.position)
    for level in SIMD_LEVELS:
        with at_simd_level(level):
            try:
                got = longest_of(data, width, endian)
            except InvalidCodePointError as error:
                got = (error.index, error.position)
            assert got == expected, level
