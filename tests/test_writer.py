"""The one writer of stored chunks (fixedutf32._source.writer.KeyWriter): a value of any byte
order, width and memory order to the bytes a chunk stores, each element checked as written."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixedutf32 import InvalidCodePointError, StringTooLongError, decode_chunk
from fixedutf32._source import ElementLayout
from fixedutf32._source.writer import KeyWriter

SCALARS = st.characters(exclude_categories=("Cs",), exclude_characters="\x00")


def writer(length_bytes, endian, shape, order="C"):
    return KeyWriter(ElementLayout(length_bytes, endian), shape, order, None)


@given(
    strings=st.lists(st.text(SCALARS, max_size=3), min_size=6, max_size=6),
    value_units=st.integers(3, 6),
    stored_units=st.integers(3, 6),
    value_endian=st.sampled_from("<>"),
    stored_endian=st.sampled_from(["little", "big"]),
    order=st.sampled_from("CF"),
)
def test_any_width_byte_order_and_memory_order_is_stored_as_the_array_stores_it(
    strings, value_units, stored_units, value_endian, stored_endian, order
):
    value = np.array(strings, f"{value_endian}U{value_units}").reshape(2, 3)
    stored = writer(4 * stored_units, stored_endian, (2, 3), order).chunk(value)
    assert stored.nbytes == 6 * 4 * stored_units
    decoded = decode_chunk(
        stored, 4 * stored_units, endian=stored_endian, shape=(2, 3), order=order
    )
    assert decoded.tolist() == value.tolist()


def test_a_value_laid_out_as_stored_is_shared_not_copied():
    value = np.array(["ab", "c"], "<U2")
    stored = writer(8, "little", (2,)).chunk(value)
    assert np.shares_memory(stored, value)


def test_a_string_too_long_for_the_stored_width_names_its_element():
    value = np.array(["a", "bcd", "ef"], ">U3")
    with pytest.raises(StringTooLongError, match="element 1 has 3 code points") as caught:
        writer(8, "little", (3,)).chunk(value)
    assert caught.value.index == 1


@pytest.mark.parametrize("stored_units", [2, 4], ids=["narrower", "wider"])
@pytest.mark.parametrize("stored_endian", ["little", "big"])
def test_a_bad_code_point_is_refused_while_repadding(stored_units, stored_endian):
    units = np.array([[0x61, 0, 0], [0x62, 0xD800, 0], [0x63, 0, 0]], "<u4")  # element 1, unit 1
    value = units.view("<U3").reshape(3)
    with pytest.raises(InvalidCodePointError) as caught:
        writer(4 * stored_units, stored_endian, (3,)).chunk(value)
    assert (caught.value.index, caught.value.position, caught.value.code_point) == (1, 1, 0xD800)
