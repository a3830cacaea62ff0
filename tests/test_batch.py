"""Batched calls (fixedutf32.batch): the single-chunk calls' results, in one call."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import BUFFER_KINDS, as_buffer

import fixedutf32
from fixedutf32 import ChunkSizeError, InvalidCodePointError, StringTooLongError

WIDTH = 4
TEXTS = [["ab", "ü", "日本語!"], ["😀"], [], ["x" * WIDTH, ""] * 20]


def _chunks(endian="little"):
    return [
        bytes(fixedutf32.encode_chunk(np.array(texts, f"U{WIDTH}"), 4 * WIDTH, endian=endian))
        for texts in TEXTS
    ]


def _bad(chunks, chunk, unit, value=0xD800, endian="little"):
    """``chunks`` with code unit ``unit`` of chunk ``chunk`` set to ``value``."""
    raw = bytearray(chunks[chunk])
    raw[4 * unit : 4 * unit + 4] = value.to_bytes(4, endian)
    return chunks[:chunk] + [bytes(raw)] + chunks[chunk + 1 :]


@pytest.mark.parametrize("endian", ["little", "big"])
def test_decode_chunks_is_decode_chunk_of_each(simd_level, endian):
    chunks = _chunks(endian)
    decoded = fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian=endian)
    assert [array.tolist() for array in decoded] == TEXTS
    for array, chunk in zip(decoded, chunks):
        single = fixedutf32.decode_chunk(chunk, 4 * WIDTH, endian=endian)
        assert array.dtype == single.dtype and array.tobytes() == single.tobytes()
    outs = [bytearray(len(chunk)) for chunk in chunks]
    assert fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian=endian, outs=outs) is None
    assert [bytes(out) for out in outs] == [array.tobytes() for array in decoded]


@pytest.mark.parametrize("kind", BUFFER_KINDS)
def test_every_buffer_kind(kind, tmp_path):
    chunks = [as_buffer(chunk, kind, tmp_path) for chunk in _chunks("big")]
    decoded = fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big")
    assert [array.tolist() for array in decoded] == TEXTS
    fixedutf32.validate_chunks(chunks, 4 * WIDTH, endian="big")


def test_equal_sizes_are_rows_of_one_buffer():
    chunks = [_chunks()[0]] * 3
    decoded = fixedutf32.decode_chunks(chunks, 4 * WIDTH)
    assert all(np.shares_memory(decoded[0].base, array) for array in decoded)
    decoded[0][0] = "zz"  # a copy: the chunks are untouched
    assert decoded[1][0] == "ab"
    assert fixedutf32.decode_chunks([], 4 * WIDTH) == []


@pytest.mark.parametrize("endian", ["little", "big"])
def test_in_place(endian):
    chunks = [bytearray(chunk) for chunk in _chunks(endian)]
    expected = [array.tobytes() for array in fixedutf32.decode_chunks(chunks, 16, endian=endian)]
    fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian=endian, outs=chunks)
    assert [bytes(chunk) for chunk in chunks] == expected


@pytest.mark.parametrize(("chunk", "unit"), [(0, 0), (0, 11), (1, 2), (3, 159)])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_first_error_names_its_chunk_and_leaves_outs(simd_level, chunk, unit, endian):
    chunks = _bad(_chunks(endian), chunk, unit, endian=endian)
    with pytest.raises(InvalidCodePointError) as single:
        fixedutf32.decode_chunk(chunks[chunk], 4 * WIDTH, endian=endian)
    for call in (
        lambda: fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian=endian),
        lambda: fixedutf32.validate_chunks(chunks, 4 * WIDTH, endian=endian),
    ):
        with pytest.raises(InvalidCodePointError) as batch:
            call()
        error = batch.value
        assert (error.chunk, error.index, error.position, error.code_point) == (
            chunk,
            single.value.index,
            single.value.position,
            0xD800,
        )
        assert f"at chunk {chunk}, element {error.index}, position {error.position}" in str(error)
    # Separate outs and in place: every buffer as it was, those before the bad chunk too.
    outs = [bytearray(b"\xee" * len(c)) for c in chunks]
    in_place = [bytearray(c) for c in chunks]
    for targets, sources in ((outs, chunks), (in_place, in_place)):
        before = [bytes(t) for t in targets]
        with pytest.raises(InvalidCodePointError):
            fixedutf32.decode_chunks(sources, 4 * WIDTH, endian=endian, outs=targets)
        assert [bytes(t) for t in targets] == before


def test_errors_pickle_with_their_chunk():
    with pytest.raises(InvalidCodePointError) as caught:
        fixedutf32.validate_chunks(_bad(_chunks(), 1, 0), 4 * WIDTH)
    again = pickle.loads(pickle.dumps(caught.value))
    assert again.chunk == 1 and str(again) == str(caught.value)


def test_argument_errors_name_the_chunk():
    chunks = _chunks()
    with pytest.raises(ChunkSizeError, match=r"chunks\[2\] holds 3 bytes"):
        fixedutf32.decode_chunks([chunks[0], chunks[1], b"abc"], 4 * WIDTH)
    with pytest.raises(TypeError, match=r"chunks\[1\] must support the buffer protocol"):
        fixedutf32.validate_chunks([chunks[0], 7], 4 * WIDTH)
    with pytest.raises(TypeError, match=r"chunks\[0\] must hold plain bytes"):
        fixedutf32.decode_chunks([np.array(["a"], dtype=object)], 4 * WIDTH)
    with pytest.raises(TypeError, match="wrap it in a list"):
        fixedutf32.decode_chunks(chunks[0], 4 * WIDTH)
    with pytest.raises(ValueError, match="one buffer per chunk: 4, got 1"):
        fixedutf32.decode_chunks(chunks, 4 * WIDTH, outs=[bytearray(16)])
    outs = [bytearray(len(c)) for c in chunks]
    outs[1] = bytearray(len(chunks[1]) + 4)
    with pytest.raises(ChunkSizeError, match=r"outs\[1\] holds 20 bytes, expected exactly 16"):
        fixedutf32.decode_chunks(chunks, 4 * WIDTH, outs=outs)
    outs[1] = bytes(16)
    with pytest.raises(TypeError, match=r"outs\[1\] must be a writable buffer"):
        fixedutf32.decode_chunks(chunks, 4 * WIDTH, outs=outs)
    shared = bytearray(len(chunks[0]) + 4)
    with pytest.raises(ValueError, match=r"outs\[0\] partly overlaps chunks\[0\]"):
        fixedutf32.decode_chunks(
            [memoryview(shared)[:-4]], 4 * WIDTH, outs=[memoryview(shared)[4:]]
        )
    with pytest.raises(ValueError, match="length_bytes"):
        fixedutf32.decode_chunks(chunks, 6)
    with pytest.raises(ValueError, match="endian"):
        fixedutf32.validate_chunks(chunks, 4 * WIDTH, endian="middle")


@pytest.mark.parametrize("endian", ["little", "big"])
def test_encode_chunks_is_encode_chunk_of_each(simd_level, endian):
    arrays = [
        np.array(["ab", "ü"], "<U4"),
        np.array(["日本"], ">U4"),  # the other byte order, same width
        np.array([["x"], ["yz"]], "<U4")[:, 0],  # not contiguous
        np.array(["a"], "<U1"),  # narrower: padded by encode_chunk
        ["list", "of"],
    ]
    chunks = fixedutf32.encode_chunks(arrays, 4 * WIDTH, endian=endian)
    expected = [bytes(fixedutf32.encode_chunk(a, 4 * WIDTH, endian=endian)) for a in arrays]
    assert [bytes(chunk) for chunk in chunks] == expected
    outs = [bytearray(len(e)) for e in expected]
    assert fixedutf32.encode_chunks(arrays, 4 * WIDTH, endian=endian, outs=outs) is None
    assert [bytes(out) for out in outs] == expected


def test_encode_chunks_errors_name_the_array_and_leave_outs():
    surrogate = np.frombuffer(b"a\x00\x00\x00\x00\xd8\x00\x00", "<U2")
    arrays = [np.array(["ok"], "<U2"), np.array(["abcde"]), surrogate]
    outs = [bytearray(b"\xee" * 8), bytearray(b"\xee" * 8), bytearray(b"\xee" * 8)]
    with pytest.raises(StringTooLongError, match="at chunk 1, element 0 has 5 code points"):
        fixedutf32.encode_chunks(arrays, 8, outs=outs)
    assert outs == [bytearray(b"\xee" * 8)] * 3
    with pytest.raises(InvalidCodePointError) as caught:
        fixedutf32.encode_chunks([arrays[0], arrays[2]], 8, outs=outs[:2])
    assert (caught.value.chunk, caught.value.index, caught.value.position) == (1, 0, 1)
    assert outs == [bytearray(b"\xee" * 8)] * 3
    with pytest.raises(TypeError, match=r"arrays\[1\]: element 0 is a int"):
        fixedutf32.encode_chunks([["a"], [3]], 8)


def test_threads_share_chunks():
    chunks = _chunks("big") * 8
    expected = [a.tobytes() for a in fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big")]

    def work(_):
        decoded = fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big")
        return [a.tobytes() for a in decoded]

    with ThreadPoolExecutor(4) as pool:
        assert all(result == expected for result in pool.map(work, range(32)))


def test_kernel_writes_one_destination_back_to_back():
    # convert_many's third mode (one buffer for all): what each chunk decodes to, in turn.
    from fixedutf32 import _kernels

    chunks = _chunks("big")
    whole = bytearray(sum(len(c) for c in chunks))
    flags = _kernels.VALIDATE | _kernels.SRC_SWAPPED | _kernels.SWAP
    assert _kernels.convert_many(chunks, whole, WIDTH, flags, True) == (-1, _kernels.OK_STATUS)
    expected = b"".join(a.tobytes() for a in fixedutf32.decode_chunks(chunks, 16, endian="big"))
    assert bytes(whole) == expected
    index, status = _kernels.convert_many(chunks, bytearray(len(whole) + 4), WIDTH, flags, True)
    assert (index, status[0]) == (-1, _kernels.BATCH_BAD_OUT_SIZE)
