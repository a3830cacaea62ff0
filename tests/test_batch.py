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


# --- outs that overlap (issue 24, finding 10) ---------------------------------


def test_an_out_given_twice_is_refused_before_anything_is_written():
    # At 87b362d this returned normally, with chunk 0's result overwritten by chunk 1's.
    chunks = _chunks("big")[:2]
    chunks[1] = chunks[0][::-1][::-1]  # the same size, another object
    out = bytearray(b"\xee" * len(chunks[0]))
    with pytest.raises(ValueError, match=r"outs\[0\] and outs\[1\] are the same buffer"):
        fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big", outs=[out, out])
    assert out == b"\xee" * len(chunks[0])
    arrays = [np.array(["ab"], "<U4"), np.array(["cd"], "<U4")]
    out = bytearray(b"\xee" * 16)
    with pytest.raises(ValueError, match=r"outs\[0\] and outs\[1\] are the same buffer"):
        fixedutf32.encode_chunks(arrays, 16, outs=[out, out])
    assert out == b"\xee" * 16


@pytest.mark.parametrize("validate", [True, False])
def test_outs_that_overlap_are_refused_naming_both(validate):
    chunks = [bytes(16)] * 5
    shared = bytearray(b"\xee" * 80)
    view = memoryview(shared)
    outs = [bytearray(16), view[0:16], bytearray(16), bytearray(16), view[8:24]]
    with pytest.raises(ValueError, match=r"outs\[1\] and outs\[4\] overlap in memory"):
        fixedutf32.decode_chunks(chunks, 16, validate=validate, outs=outs)
    assert shared == b"\xee" * 80
    # NumPy views of one array, one of them of another chunk's size and width.
    base = np.full(40, 0xEE, np.uint8)
    arrays = [np.array(["a"], "<U4"), np.array(["a", "b"], "<U2"), np.array(["c"], "<U4")]
    outs = [np.empty(16, np.uint8), base[:32], base[24:40]]
    with pytest.raises(ValueError, match=r"outs\[1\] and outs\[2\] overlap in memory"):
        fixedutf32.encode_chunks(arrays, 16, validate=validate, outs=outs)
    assert (base == 0xEE).all()


def test_an_out_over_another_chunk_is_refused_as_decode_chunk_refuses_its_own():
    # decode_chunk takes out as data itself (in place) and refuses any other
    # overlap; a batch does the same for every chunk, not only its own.
    chunks = [bytearray(chunk) for chunk in _chunks("big")]
    before = [bytes(chunk) for chunk in chunks]
    pair = [chunks[0], bytearray(chunks[0][::-1])]  # two chunks of one size
    # At 87b362d: chunk 0 was decoded into chunk 1 before chunk 1 was read.
    with pytest.raises(ValueError, match=r"outs\[0\] overlaps chunks\[1\], which the batch reads"):
        fixedutf32.decode_chunks(pair, 4 * WIDTH, endian="big", outs=[pair[1], bytearray(48)])
    assert [bytes(chunk) for chunk in chunks] == before and pair[1] == before[0][::-1]
    # The same chunk twice, decoded in place into the first.
    with pytest.raises(ValueError, match=r"outs\[0\] overlaps chunks\[1\]"):
        fixedutf32.decode_chunks(
            [chunks[0], chunks[0]], 4 * WIDTH, endian="big", outs=[chunks[0], bytearray(48)]
        )
    assert [bytes(chunk) for chunk in chunks] == before
    # An array encoded in place, another array read from the same memory.
    array = np.array(["ab", "cd"], "<U4")
    with pytest.raises(ValueError, match=r"outs\[1\] overlaps arrays\[0\]"):
        fixedutf32.encode_chunks(
            [array, array[::-1].copy()],
            16,
            endian="big",
            outs=[np.empty(32, np.uint8), array.view(np.uint8)],
        )
    assert array.tolist() == ["ab", "cd"]
    # In place stays allowed, chunk by chunk and array by array.
    fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big", outs=chunks)
    fixedutf32.encode_chunks([array], 16, endian="big", outs=[array.view(np.uint8)])
    assert array.view(np.uint8).tobytes() == "ab\0\0cd\0\0".encode("utf-32-be")


def _reference_conflicts(sources, outs):
    """Every pair that must be refused, by comparing all pairs: O(n^2)."""
    spans = lambda view: (view[0], view[0] + view[1])  # noqa: E731
    conflicts = set()
    for i, out in enumerate(outs):
        a0, a1 = spans(out)
        if a0 == a1:
            continue
        for j, other in enumerate(outs):
            b0, b1 = spans(other)
            if j != i and b0 != b1 and a0 < b1 and b0 < a1:
                conflicts.add(("outs", min(i, j), max(i, j)))
        for j, source in enumerate(sources):
            if source is None:
                continue
            b0, b1 = spans(source)
            if b0 != b1 and a0 < b1 and b0 < a1 and not (j == i and (a0, a1) == (b0, b1)):
                conflicts.add(("source", i, j))
    return conflicts


@pytest.mark.parametrize("seed", range(40))
def test_the_overlap_check_finds_what_comparing_every_pair_finds(seed):
    # The kernel sorts the address ranges (O(n log n)); compare with every
    # pair on random layouts of many small buffers inside one allocation.
    from fixedutf32 import _kernels

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400 if seed % 4 == 0 else 60))
    memory = np.zeros(4096, np.uint8)
    spread = int(rng.choice([64, 600, 4000]))  # from crowded to sparse

    def span():
        start = int(rng.integers(0, spread))
        return start, int(rng.choice([0, 4, 8, 16, 64]))

    layout_sources = [span() for _ in range(n)]
    layout_outs = [
        layout_sources[i] if rng.random() < 0.3 else span() for i in range(n)
    ]  # some in place
    for i in rng.choice(n, size=n // 3, replace=False):
        layout_sources[i] = None  # not read while writing (an encode's other widths)
    view = lambda s: memory[s[0] : s[0] + s[1]]  # noqa: E731
    sources = [None if s is None else view(s) for s in layout_sources]
    outs = [view(s) for s in layout_outs]
    index, status = _kernels.overlap_many(sources, outs)
    expected = _reference_conflicts(layout_sources, layout_outs)
    if not expected:
        assert (index, status) == (-1, _kernels.OK_STATUS)
        return
    kind, first, second, same = status
    assert index == first
    if kind == _kernels.BATCH_OUTS_OVERLAP:
        assert ("outs", first, second) in expected
        assert bool(same) == (layout_outs[first] == layout_outs[second])
    else:
        assert kind == _kernels.BATCH_OVERLAP and ("source", first, second) in expected


def test_many_outs_are_checked_in_one_sort():
    chunks = [bytes(16)] * 20_000
    outs = [bytearray(16) for _ in chunks]
    outs[-1] = outs[7]
    with pytest.raises(ValueError, match=r"outs\[7\] and outs\[19999\] are the same buffer"):
        fixedutf32.decode_chunks(chunks, 16, outs=outs)


# --- what an error leaves, and validate=False --------------------------------


def test_a_failing_chunk_at_the_end_leaves_every_earlier_out_unchanged():
    # The guarantee for every error that does not come from an input changed
    # during the call: the first pass finds it before anything is written.
    chunks = _chunks("big") * 50
    chunks = _bad(chunks, len(chunks) - 1, 0, endian="big")
    outs = [bytearray(b"\xee" * len(chunk)) for chunk in chunks]
    with pytest.raises(InvalidCodePointError) as caught:
        fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big", outs=outs)
    assert caught.value.chunk == len(chunks) - 1
    assert all(out == b"\xee" * len(out) for out in outs)
    # Encoding: arrays of the chunk's width, and narrower ones (encoded
    # apart, copied into their outs last), then one too long at the end.
    arrays = [np.array(["ab", "c"], "<U4"), np.array(["d"], "<U1")] * 20
    arrays.append(np.array(["ok", "abcde"], "<U5"))
    outs = [bytearray(b"\xee" * (16 * a.size)) for a in arrays]
    with pytest.raises(StringTooLongError) as too_long:
        fixedutf32.encode_chunks(arrays, 16, outs=outs)
    assert too_long.value.chunk == len(arrays) - 1
    surrogate = np.frombuffer(b"a\x00\x00\x00\x00\xd8\x00\x00", "<U2").astype("<U4")
    arrays[-1] = surrogate
    outs[-1] = bytearray(b"\xee" * 16)
    with pytest.raises(InvalidCodePointError) as invalid:
        fixedutf32.encode_chunks(arrays, 16, endian="big", outs=outs)
    assert invalid.value.chunk == len(arrays) - 1
    assert all(out == b"\xee" * len(out) for out in outs)


def test_validate_false_with_outs_checks_nothing_as_without_outs():
    # At 87b362d the first pass validated even with validate=False, so the
    # same chunk decoded without outs and raised with them.
    chunks = _bad(_chunks("big"), 1, 0, endian="big")
    expected = fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big", validate=False)
    outs = [bytearray(len(chunk)) for chunk in chunks]
    fixedutf32.decode_chunks(chunks, 4 * WIDTH, endian="big", validate=False, outs=outs)
    assert [bytes(out) for out in outs] == [array.tobytes() for array in expected]
    surrogate = np.frombuffer(b"a\x00\x00\x00\x00\xd8\x00\x00", "<U2")
    out = bytearray(8)
    fixedutf32.encode_chunks([surrogate], 8, validate=False, outs=[out])
    assert bytes(out) == surrogate.tobytes()
