"""Hostile arguments: each one that used to crash or corrupt memory raises a clear error.

Repros that killed the interpreter (SIGFPE, SIGSEGV, a heap overflow) run in
a subprocess, so that a regression fails this test instead of the whole run;
they assert the exit status and the last line of stderr (the exception).
"""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import fixedutf32

# Private on purpose: the kernel wrappers must protect memory even when called
# directly, with arguments the public functions would never pass them.
from fixedutf32 import ChunkSizeError, _kernels
from fixedutf32.metadata import MAX_LENGTH_BYTES

StringDType = pytest.importorskip("numpy.dtypes", reason="StringDType needs NumPy >= 2").StringDType


def run_python(code, level=None):
    env = dict(os.environ)
    if level is not None:
        env["FIXEDUTF32_SIMD"] = level
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_raises_in_subprocess(code, exception, text, level=None):
    """Run ``code``, which must end in an uncaught ``exception`` whose message holds ``text``."""
    result = run_python(
        "import numpy as np, fixedutf32\nfrom fixedutf32 import _kernels\n" + code, level
    )
    assert result.returncode == 1, (
        f"exit status {result.returncode} (negative: killed by a signal)\n{result.stderr}"
    )
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{exception}: "), result.stderr
    assert text in last, last


# --- 1. widths that overflowed 4 * width ---------------------------------------

TOO_WIDE = f"at most {MAX_LENGTH_BYTES} (the widest NumPy 'U' item, U{MAX_LENGTH_BYTES // 4})"


@pytest.mark.parametrize(
    "call",
    [
        "fixedutf32.str_lengths(b'', 2**64)",
        "fixedutf32.repad(b'', 2**64, 4)",
        "fixedutf32.to_utf8(b'', 2**64)",
        "fixedutf32.to_string_dtype(b'', 2**64)",
    ],
)
def test_width_that_wrapped_to_zero_is_refused(call):
    assert_raises_in_subprocess(call, "ValueError", f"must be {TOO_WIDE}, got {2**64}")


def test_kernel_wrapper_checks_its_own_width():
    assert_raises_in_subprocess(
        "_kernels.utf32_to_utf8(b'', 0, False, True, None, bytearray(100), True)",
        "ValueError",
        "width 0 out of range",
    )


@pytest.mark.parametrize(
    "call, text",
    [
        (
            "_kernels.utf32_to_utf8(b'abcd', -1, False, True, None, bytearray(100), True)",
            "width -1 out of range",
        ),
        (
            "_kernels.utf32_to_utf8(b'', 2**62, False, True, None, bytearray(100), True)",
            "out of range",
        ),
        (
            "_kernels.str_lengths(b'', np.empty(1, np.intp), 2**62, 0)",
            "width 4611686018427387904 out of range",
        ),
        ("_kernels.str_lengths(b'', np.empty(1, np.intp), 0, 0)", "width 0 out of range"),
        ("_kernels.repad(b'', None, 0, 4, 0)", "from_units 0 out of range"),
        ("_kernels.converted(b'abcd', np.dtype('<U1'), 2**62, 4, 1, 0)", "array is too big"),
        ("_kernels.converted(b'abcd', np.dtype('<U1'), -1, 2**20, 1, 0)", "holds 1048576 bytes"),
        ("_kernels.converted(b'abcd', np.dtype('<U1'), -1, 4, 1, 0)", "negative dimensions"),
        ("_kernels.converted(b'abcd', np.dtype('<U1'), 2, -1, 1, 0)", "holds 8 bytes, need 4"),
        ("_kernels.converted(b'abcd' * 4, np.dtype('<U1'), 1, 4, 1, 0)", "need 16"),
        ("_kernels.converted(b'abcd', np.dtype('<U1'), 1, 4, 0, 0)", "width 0 out of range"),
        (
            "_kernels.repad(b'', bytearray(0), 1, 2**62, 0)",
            "to_units 4611686018427387904 out of range",
        ),
        ("_kernels.repad(b'abcd' * 4, bytearray(16), 1, 2**59, 0)", "too few for 4 elements"),
        (
            "_kernels.utf8_to_utf32(np.zeros(2, np.int64), 1, 1, b'', 0, False, None)",
            "width 0 out of range",
        ),
        (
            "_kernels.utf8_to_utf32(np.zeros(2, np.int64), 1, 2**62, b'', 1, False, None)",
            "too few for",
        ),
        (
            "_kernels.utf8_to_utf32(np.zeros(2, np.int64), 0, 1, b'', 1, False, None)",
            "bad stride 0",
        ),
        (
            "_kernels.utf8_to_utf32(np.zeros(3, np.int64), 1, 2, b'', 2**59, False, bytearray(8))",
            "too few for 2",
        ),
        ("_kernels.utf8_vlen_parse(b'\\0' * 8, 2**62, np.empty(2, np.int64))", "too few for"),
        ("_kernels.utf8_vlen_parse(b'\\0' * 8, -1, np.empty(2, np.int64))", "bad count -1"),
        (
            "_kernels.utf8_scatter_fixed(np.array([0, 2**40]), b'ab', bytearray(8), 8)",
            "string 0: offsets outside",
        ),
        ("_kernels.utf8_scatter_fixed(np.array([0, 2]), b'ab', bytearray(8), 1)", "longer than 1"),
        (
            "_kernels.utf8_scatter_fixed(np.array([0, 2, 4]), b'abcd', bytearray(8), 2**62)",
            "too few for 2",
        ),
        ("_kernels.utf8_scatter_fixed(np.array([0, 2]), b'ab', bytearray(8), 0)", "bad stride 0"),
    ],
)
def test_every_kernel_wrapper_refuses_what_would_overrun(call, text):
    # In-process is safe now; a regression would crash the run, which is loud too.
    with pytest.raises(ValueError, match=re.escape(text)):
        eval(call, {"_kernels": _kernels, "np": np})


@pytest.mark.parametrize(
    "call",
    [
        lambda: fixedutf32.decode_chunk(b"", 2**33),
        lambda: fixedutf32.encode_chunk(["a"], 2**65),
        lambda: fixedutf32.validate(b"", MAX_LENGTH_BYTES + 4),
        lambda: fixedutf32.repad(b"abcd", 4, MAX_LENGTH_BYTES + 4),
        lambda: fixedutf32.from_utf8([0], b"", 2**40),
        lambda: fixedutf32.decode_vlen_utf8(b"\0\0\0\0", 2**40),
        lambda: fixedutf32.encode_vlen_utf8(b"", 2**40),
    ],
)
def test_length_bytes_beyond_numpy_u_is_a_value_error(call):
    with pytest.raises(
        ValueError, match=rf"must be at most {MAX_LENGTH_BYTES} \(the widest NumPy 'U' item"
    ):
        call()


def test_widest_numpy_u_still_works():
    assert fixedutf32.decode_chunk(b"", MAX_LENGTH_BYTES).dtype == np.dtype(
        f"=U{MAX_LENGTH_BYTES // 4}"
    )
    assert fixedutf32.str_lengths(b"", MAX_LENGTH_BYTES).size == 0


def test_pool_limit_out_of_range_is_a_clear_value_error():
    previous = fixedutf32.set_buffer_pool_limit(1 << 20)
    try:
        with pytest.raises(
            ValueError,
            match=rf"the pool limit must be between 0 and {sys.maxsize} bytes, got {2**63}",
        ):
            fixedutf32.set_buffer_pool_limit(2**63)
        assert fixedutf32.set_buffer_pool_limit(1 << 20) == 1 << 20
    finally:
        fixedutf32.set_buffer_pool_limit(previous)


# --- 2. the AVX2 repad's tail arithmetic --------------------------------------


def test_huge_target_width_repad_is_refused():
    assert_raises_in_subprocess(
        "fixedutf32.repad(b'', 4, 2**64 + 4)", "ValueError", f"got {2**64 + 4}"
    )


def test_repad_kernel_is_safe_for_any_width_the_wrapper_takes(simd_level):
    # (to_round + to_units - 1) overflowed for to_units near the wrapper's
    # limit and the AVX2 loop then wrote past an empty destination.
    code = """
    limit = _kernels.MAX_UNITS
    for to_units in (limit, limit - 1, limit - 7, 2**59 + 1):
        assert _kernels.repad(b"", bytearray(0), 1, to_units, 0) == _kernels.OK_STATUS
        assert _kernels.repad(b"", None, 1, to_units, 1) == _kernels.OK_STATUS
    print("ok")
    """
    result = run_python("from fixedutf32 import _kernels\n" + textwrap.dedent(code), simd_level)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize("to_width", [1, 2, 3, 5, 7, 9, 15, 17])
def test_repad_writes_exactly_its_output(simd_level, to_width):
    # The last elements of a narrow repad are where the 32-byte stores could
    # run past the end: the bytes after the output must stay untouched.
    data = np.array(["a", "bc", "d", "e"] * 5, dtype=f"<U{min(to_width, 2)}")
    storage = bytearray(b"\xee" * (data.size * 4 * to_width + 64))
    out = memoryview(storage)[: data.size * 4 * to_width]
    fixedutf32.repad(data, data.dtype.itemsize, 4 * to_width, out=out)
    assert storage[len(out) :] == b"\xee" * 64
    assert fixedutf32.decode_chunk(bytes(out), 4 * to_width).tolist() == data.tolist()


# --- 3. arrays whose items are not plain bytes ---------------------------------

REFUSED = (
    "must hold plain bytes (an integer, 'U' or 'S' array, or a byte buffer), "
    "got a NumPy array of dtype"
)


@pytest.mark.parametrize(
    "call",
    [
        "fixedutf32.byteswap(np.array([object(), 'x'], dtype=object))",
        "fixedutf32.repad(b'a\\0\\0\\0' * 4, 4, 4, out=np.empty(2, object))",
        "fixedutf32.from_utf8([0, 1, 2, 3, 4], b'abcd', 4, out=np.empty(2, object))",
        "fixedutf32.byteswap(np.array(['ab', 'cd'], dtype=np.dtypes.StringDType()))",
    ],
)
def test_reference_arrays_are_refused_where_they_crashed(call):
    assert_raises_in_subprocess(call, "TypeError", REFUSED)


def test_object_array_is_not_decoded_as_pointer_bits():
    data = np.array(["x", "y"], dtype=object)
    with pytest.raises(
        TypeError,
        match="got a NumPy array of dtype object, whose items are references to Python objects",
    ):
        fixedutf32.decode_chunk(data, 8, validate=False)


@pytest.mark.parametrize(
    "dtype",
    [
        object,
        StringDType(),
        StringDType(na_object=None),
        bool,
        np.float32,
        "datetime64[s]",
        np.dtype([("a", "<u4")]),
        np.dtype([("a", object)]),
    ],
    ids=str,
)
def test_refused_dtypes_as_data_and_as_out(dtype):
    array = np.zeros(4, dtype) if dtype not in (object,) else np.array([1, 2, 3, 4], dtype=object)
    if getattr(np.dtype(dtype), "kind", "") == "T":
        array = np.array(["a", "b", "c", "d"], dtype=dtype)
    chunk = "abcd".encode("utf-32-le")
    calls = [
        lambda: fixedutf32.validate(array, 4),
        lambda: fixedutf32.decode_chunk(array, 4),
        lambda: fixedutf32.str_lengths(array, 4),
        lambda: fixedutf32.repad(array, 4, 8),
        lambda: fixedutf32.byteswap(array),
        lambda: fixedutf32.to_utf8(array, 4),
        lambda: fixedutf32.from_utf8([0, 1], array, 4),
        lambda: fixedutf32.decode_vlen_utf8(array, 4),
        lambda: fixedutf32.decode_chunk(chunk, 4, out=array),
        lambda: fixedutf32.encode_chunk(["a", "b", "c", "d"], 4, out=array),
        lambda: fixedutf32.repad(chunk, 4, 4, out=array),
        lambda: fixedutf32.from_utf8([0, 1, 2, 3, 4], b"abcd", 4, out=array),
        lambda: fixedutf32.decode_vlen_utf8(fixedutf32.encode_vlen_utf8(chunk, 4), 4, out=array),
    ]
    before = array.copy()
    for call in calls:
        with pytest.raises(TypeError, match="must hold plain bytes"):
            call()
    if array.dtype.kind in "OT":
        assert array.tolist() == before.tolist()
    else:
        assert array.tobytes() == before.tobytes()


@pytest.mark.parametrize("dtype", ["<u4", ">i2", "u1", "S4", "<U1", ">U1", "V4"])
def test_plain_dtypes_are_still_raw_bytes(dtype):
    chunk = "abcd".encode("utf-32-le")
    array = np.frombuffer(bytearray(chunk), dtype)
    assert fixedutf32.decode_chunk(array, 4).tolist() == ["a", "b", "c", "d"]
    out = np.zeros(16 // np.dtype(dtype).itemsize, dtype)
    # (A 'U' out must be of the byte order written; the others carry none.)
    endian = "big" if dtype == ">U1" else "little"
    fixedutf32.repad(chunk, 4, 4, out=out, endian=endian, validate=False)
    assert out.tobytes() == chunk


def test_string_arrays_are_still_encode_chunk_input():
    for array in (np.array(["ab", "c"], dtype=object), np.array(["ab", "c"], dtype=StringDType())):
        assert bytes(fixedutf32.encode_chunk(array, 8)) == "abc\0".encode("utf-32-le")


# --- 4. out overlapping offsets; every pass checked ------------------------------


def test_out_overlapping_offsets_is_refused():
    offs = np.array([0, 2, 4, 6, 8], np.int64)
    with pytest.raises(ValueError, match="out must not overlap offsets"):
        fixedutf32.from_utf8(offs, b"abcdefgh", 8, out=offs.view(np.uint8)[8:])
    assert offs.tolist() == [0, 2, 4, 6, 8]


def test_out_overlapping_values_or_chunk_is_refused():
    values = bytearray(b"abcdefgh" + bytes(24))
    with pytest.raises(ValueError, match="out must not overlap values"):
        fixedutf32.from_utf8([0, 2, 4, 6, 8], memoryview(values)[:8], 8, out=values)
    chunk = bytearray(fixedutf32.encode_vlen_utf8(np.array(["ab"] * 8)))
    with pytest.raises(ValueError, match="out must not overlap chunk"):
        fixedutf32.decode_vlen_utf8(chunk, 4, out=memoryview(chunk)[: 4 * 8])


# --- 5. a 'U' out of the other byte order -----------------------------------------

OTHER = "big" if sys.byteorder == "little" else "little"
OTHER_U = ">U" if sys.byteorder == "little" else "<U"


def test_encode_chunk_into_itself_in_the_other_byte_order_is_refused():
    a = np.array(["ab", "cd"])
    with pytest.raises(
        ValueError,
        match=rf"but the code units written are {OTHER} endian: pass an out of dtype {OTHER_U}2",
    ):
        fixedutf32.encode_chunk(a, endian=OTHER, out=a)
    assert a.tolist() == ["ab", "cd"]


@pytest.mark.parametrize(
    "call",
    [
        lambda out: fixedutf32.encode_chunk(["ab", "cd"], 8, endian=OTHER, out=out),
        lambda out: fixedutf32.encode_chunk(["ab", "cd"], 12, endian=OTHER, out=np.empty(2, "=U3")),
        lambda out: fixedutf32.repad("abcd".encode("utf-32-le"), 8, 8, endian=OTHER, out=out),
        lambda out: fixedutf32.from_utf8([0, 2, 4], b"abcd", 8, endian=OTHER, out=out),
        lambda out: fixedutf32.decode_vlen_utf8(
            fixedutf32.encode_vlen_utf8(np.array(["ab", "cd"])), 8, endian=OTHER, out=out
        ),
        lambda out: fixedutf32.decode_chunk(
            "abcd".encode("utf-32-le"), 8, out=out.astype(f"{OTHER_U}2")
        ),
    ],
)
def test_u_out_of_the_wrong_byte_order_is_refused_everywhere(call):
    out = np.array(["xy", "zw"])  # native
    with pytest.raises(ValueError, match="but the code units written are"):
        call(out)
    assert out.tolist() == ["xy", "zw"]


def test_u_out_of_the_written_byte_order_is_taken():
    out = np.empty(2, f"{OTHER_U}2")
    assert fixedutf32.encode_chunk(["ab", "cd"], endian=OTHER, out=out) is out
    assert out.tolist() == ["ab", "cd"]
    assert fixedutf32.from_utf8([0, 2, 4], b"abcd", 8, endian=OTHER, out=out).tolist() == [
        "ab",
        "cd",
    ]
    native = np.empty(2, "=U2")
    assert fixedutf32.decode_chunk(
        "abcd".encode("utf-32-be"), 8, endian="big", out=native
    ).tolist() == ["ab", "cd"]


# --- 7. bad input that deserves a better message ------------------------------


def test_vlen_chunk_with_bytes_after_zero_items():
    with pytest.raises(
        ChunkSizeError,
        match="vlen-utf8 chunk of 5 bytes has 1 bytes left over: its header announces 0 items, "
        "which end at byte 4",
    ):
        fixedutf32.decode_vlen_utf8(b"\0\0\0\0x", 4)


@pytest.mark.parametrize("na", [None, np.nan])
def test_missing_string_dtype_value_names_its_element(na):
    array = np.array(["a", "b", na, "c", na], dtype=StringDType(na_object=na))
    for length_bytes in (None, 8):
        with pytest.raises(
            ValueError, match=rf"element 2 is a missing value \({na!r}, the dtype's na_object\)"
        ):
            fixedutf32.encode_chunk(array, length_bytes)
    present = np.array(["a", "bc"], dtype=StringDType(na_object=na))
    assert fixedutf32.encode_chunk(present).tobytes() == "a\0bc".encode("utf-32-le")


VALIDATE_CALLS = {
    "decode_chunk": lambda v: fixedutf32.decode_chunk(b"a\0\0\0", 4, validate=v),
    "encode_chunk": lambda v: fixedutf32.encode_chunk(["a"], validate=v),
    "repad": lambda v: fixedutf32.repad(b"a\0\0\0", 4, 8, validate=v),
    "str_lengths": lambda v: fixedutf32.str_lengths(b"a\0\0\0", 4, validate=v),
    "to_utf8": lambda v: fixedutf32.to_utf8(b"a\0\0\0", 4, validate=v),
    "to_string_dtype": lambda v: fixedutf32.to_string_dtype(b"a\0\0\0", 4, validate=v),
    "encode_vlen_utf8": lambda v: fixedutf32.encode_vlen_utf8(b"a\0\0\0", 4, validate=v),
}


@pytest.mark.parametrize("name", sorted(VALIDATE_CALLS))
def test_validate_must_be_a_bool(name):
    call = VALIDATE_CALLS[name]
    for bad in ("no", 0, 1, None, "False"):
        with pytest.raises(TypeError, match=rf"validate must be True or False, got {bad!r}"):
            call(bad)
    for good in (True, False, np.True_, np.False_):
        call(good)


def test_chunk_files_transcoded_in_c_refuse_bad_arguments_and_report_each_file(tmp_path):
    # read_utf8 (_files.pxi): ranges, positions and sizes checked before any file is read; a
    # backward run ends where a forward one starts; every file out of the ordinary reported.
    units = 2  # 8-byte elements
    words = ["ab", "é", "", "😀"]
    good = b"".join(w.ljust(units, "\0").encode("utf-32-le") for w in words)  # 32 bytes
    (tmp_path / "0").write_bytes(good)
    (tmp_path / "1").write_bytes(good[:-4] + b"\x00\xd8\x00\x00")  # a surrogate, element 3
    (tmp_path / "short").write_bytes(good[:16])
    os.symlink(tmp_path / "0", tmp_path / "link")
    values = np.zeros(256, np.uint8)
    offsets = np.full(16, -1, np.int32)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:

        def run(names, lows=None, highs=None, pos=0, limit=256, backward=False, **kw):
            lows = np.asarray([0] * len(names) if lows is None else lows, np.intp)
            highs = np.asarray([4] * len(names) if highs is None else highs, np.intp)
            args = dict(nbytes=32, bounce=bytearray(16), offsets=offsets, first=0, values=values)
            args.update(kw)
            return _kernels.read_utf8(
                fd,
                names,
                lows,
                highs,
                args["nbytes"],
                args["bounce"],
                units,
                False,
                args["offsets"],
                args["offsets"].dtype == np.int64,
                args["first"],
                args["values"],
                pos,
                limit,
                backward,
            )

        done, outcome, _, end = run([b"0", b"0"], [1, 0], [4, 2])
        utf8 = "é😀".encode() + "abé".encode()
        assert (done, outcome, end) == (2, 0, len(utf8)) and bytes(values[:end]) == utf8
        assert offsets[:5].tolist() == [0, 2, 2, 6, 8]  # no end entry written
        # Backward to 100, then forward from it: one stretch, offsets in array order.
        done, outcome, _, start = run([b"0"], pos=100, limit=0, backward=True)
        assert (done, outcome) == (1, 0)
        assert bytes(values[start:100]) == "abé😀".encode() and offsets[0] == start
        assert run([b"0", b"gone"])[:2] == (1, _kernels.FILE_MISSING)
        for name in (b"short", b"link"):  # another size, a link
            assert run([name])[:2] == (0, _kernels.FILE_UNUSUAL)
        # The surrogate is found outside the range transcoded too (the whole file is checked).
        done, outcome, status, _ = run([b"0", b"1"], [0, 0], [4, 1])
        assert (done, outcome) == (1, _kernels.FILE_INVALID) and status[1:] == (3, 1, 0xD800)
        # Backward, the last file is read first.
        assert run([b"1", b"0"], pos=100, limit=0, backward=True)[:2] == (1, _kernels.FILE_INVALID)
        assert run([b"0", b"0"], pos=10, limit=0, backward=True)[1] == _kernels.FILE_SHORT
        assert run([b"0"], limit=8)[1] == _kernels.FILE_SHORT  # no room before the limit
        with pytest.raises(ValueError, match="not within its 4"):
            run([b"0"], [3], [5])
        with pytest.raises(ValueError, match="not within"):
            run([b"0"], [3], [2])
        with pytest.raises(ValueError, match="1 names but 2 lows"):
            run([b"0"], [0, 0], [4])
        with pytest.raises(ValueError, match="do not fit values"):
            run([b"0"], pos=10, limit=5)
        with pytest.raises(ValueError, match="do not fit values"):
            run([b"0"], pos=300)
        with pytest.raises(ValueError, match="too few for entries"):
            run([b"0"], first=14)
        with pytest.raises(ValueError, match="too few for entries"):
            run([b"0"], first=-1)
        with pytest.raises(TypeError, match="names\\[0\\] must be bytes"):
            run(["0"])
        with pytest.raises(TypeError, match="bounce must be"):
            run([b"0"], bounce=None)
        with pytest.raises(ValueError, match="not a whole number of elements"):
            run([b"0"], nbytes=30)
        with pytest.raises(BufferError):
            run([b"0"], values=bytes(64), limit=64)  # read-only
    finally:
        os.close(fd)


def test_bool_extents_in_shape_are_refused():
    with pytest.raises(TypeError, match="not bools"):
        fixedutf32.decode_chunk(b"a\0\0\0" * 4, 4, shape=(True, 4))


def test_chunk_files_read_in_c_refuse_bad_arguments_and_report_each_file(tmp_path):
    # The file readers of _files.pxi: sizes and places checked before any file is read, every
    # file out of the ordinary reported (for the careful Python path), none followed or blocked.
    units = 2  # 8-byte elements
    good = "ab".encode("utf-32-le") * 4  # 32 bytes: 4 elements
    (tmp_path / "0").write_bytes(good)
    (tmp_path / "1").write_bytes(good[:-4] + b"\x00\xd8\x00\x00")  # a surrogate, element 3
    (tmp_path / "short").write_bytes(good[:16])
    os.mkfifo(tmp_path / "fifo")
    os.symlink(tmp_path / "0", tmp_path / "link")
    out = np.zeros(128, np.uint8)
    flags = _kernels.VALIDATE
    fd = os.open(tmp_path, os.O_RDONLY)
    try:

        def run(names, starts, nbytes=32, bounce=None, destination=out):
            starts = np.asarray(starts, np.intp)
            return _kernels.read_files(fd, names, destination, starts, nbytes, bounce, units, flags)

        done, outcome, _ = run([b"0", b"0"], [0, 32])
        assert (done, outcome) == (2, 0) and bytes(out[:64]) == good * 2
        assert run([b"0", b"gone"], [0, 32])[:2] == (1, _kernels.FILE_MISSING)
        for name in (b"short", b"fifo", b"link"):  # another size, not a regular file, a link
            assert run([name], [0])[:2] == (0, _kernels.FILE_UNUSUAL)
        done, outcome, status = run([b"0", b"1"], [0, 32], bounce=bytearray(16))
        assert (done, outcome) == (1, _kernels.FILE_INVALID) and status[1:] == (3, 1, 0xD800)
        with pytest.raises(ValueError, match="pass the destination"):
            run([b"0"], [100])
        with pytest.raises(ValueError, match="pass the destination"):
            run([b"0"], [-1])
        with pytest.raises(ValueError, match="2 names but 1 starts"):
            run([b"0", b"0"], [0])
        with pytest.raises(TypeError, match="names\\[0\\] must be bytes"):
            run(["0"], [0])
        with pytest.raises(ValueError, match="not a whole number of elements"):
            run([b"0"], [0], nbytes=30)
        with pytest.raises(ValueError, match="holds no element"):
            run([b"0"], [0], bounce=bytearray(4))
        with pytest.raises(BufferError):
            run([b"0"], [0], destination=bytes(64))  # read-only
        with open(tmp_path / "1", "rb") as file:
            into = np.zeros(32, np.uint8)
            outcome, status = _kernels.read_checked(file.fileno(), 0, into, None, units, flags)
            assert outcome == _kernels.FILE_INVALID and status[1:] == (3, 1, 0xD800)
            outcome, _ = _kernels.read_checked(file.fileno(), 8, into, None, units, flags)
            assert outcome == _kernels.FILE_SHORT  # 24 bytes left, 32 asked for
            with pytest.raises(ValueError, match="negative"):
                _kernels.read_checked(file.fileno(), -8, into, None, units, flags)
            with pytest.raises(ValueError, match="not whole elements"):
                _kernels.read_checked(file.fileno(), 0, into[:12], None, units, flags)
    finally:
        os.close(fd)
