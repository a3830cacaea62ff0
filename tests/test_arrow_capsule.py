"""Arrow data through the Arrow PyCapsule interface, with pyarrow and nanoarrow on the other side.

to_arrow_strings exports without pyarrow; from_arrow takes any exporter of
__arrow_c_array__ or __arrow_c_stream__.  The wrappers below hide pyarrow's
own types, so that only the capsules cross.
"""

import gc
import subprocess
import sys

import numpy as np
import pytest

import fixedutf32
from fixedutf32 import InvalidUTF8Error, StringTooLongError, from_arrow, to_arrow_strings
from fixedutf32._arrow import import_strings

pa = pytest.importorskip("pyarrow")

TEXTS = ["Hi", "", "Привет", "日本語", "😀x"]


class ArrayOnly:
    """Exports only ``__arrow_c_array__`` (as nanoarrow or a third-party engine would)."""

    def __init__(self, array):
        self.array = array

    def __arrow_c_array__(self, requested_schema=None):
        return self.array.__arrow_c_array__(requested_schema)


class StreamOnly:
    """Exports only ``__arrow_c_stream__`` (as polars or a DuckDB result would)."""

    def __init__(self, array):
        self.array = array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])

    def __arrow_c_stream__(self, requested_schema=None):
        return self.array.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize("large", [False, True])
def test_exported_strings_are_read_by_pyarrow_in_place(large):
    strings = to_arrow_strings(np.array(TEXTS), large=large)
    array = pa.array(strings)
    assert array.type == (pa.large_string() if large else pa.string())
    assert array.to_pylist() == TEXTS == strings.to_pylist()
    # Shared, not copied: the Arrow buffer is the exported values array.
    assert array.buffers()[2].address == strings.values.ctypes.data
    # The consumer keeps the buffers alive after the exporter is gone.
    del strings
    gc.collect()
    assert array.to_pylist() == TEXTS


def test_requested_schema_of_the_other_string_type_is_honoured():
    strings = to_arrow_strings(np.array(TEXTS))
    assert pa.array(strings, type=pa.large_string()).type == pa.large_string()
    large = to_arrow_strings(np.array(TEXTS), large=True)
    assert pa.array(large, type=pa.string()).to_pylist() == TEXTS


def test_nanoarrow_reads_and_exports():
    na = pytest.importorskip("nanoarrow")
    strings = to_arrow_strings(np.array(TEXTS))
    assert na.Array(strings).to_pylist() == TEXTS
    back = from_arrow(na.Array(strings), 4 * 8)
    assert back.tolist() == TEXTS


@pytest.mark.parametrize("wrap", [ArrayOnly, StreamOnly])
@pytest.mark.parametrize("kind", ["string", "large_string"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_from_arrow_takes_any_exporter(wrap, kind, endian):
    array = pa.array(TEXTS, type=getattr(pa, kind)())
    expected = from_arrow(array, 32, endian=endian)  # pyarrow's own path
    result = from_arrow(wrap(array), 32, endian=endian)
    assert result.dtype == expected.dtype and result.tobytes() == expected.tobytes()
    out = np.empty(len(TEXTS), expected.dtype)
    assert from_arrow(wrap(array), 32, endian=endian, out=out) is out
    assert out.tobytes() == expected.tobytes()


def test_large_string_offsets_and_values_are_read_in_place():
    array = pa.array(TEXTS, type=pa.large_string())
    [(offsets, values, count)] = list(import_strings(ArrayOnly(array)))
    assert count == len(TEXTS)
    assert offsets.ctypes.data == array.buffers()[1].address
    assert memoryview(values).readonly
    assert np.frombuffer(values, np.uint8).ctypes.data == array.buffers()[2].address


def test_sliced_arrays_and_streams_of_several_arrays():
    array = pa.array(["skip", *TEXTS, "skip"])[1:-1]
    assert from_arrow(ArrayOnly(array), 32).tolist() == TEXTS
    chunked = pa.chunked_array([TEXTS[:2], [], TEXTS[2:]])
    assert from_arrow(StreamOnly(chunked), 32).tolist() == TEXTS
    assert from_arrow(StreamOnly(pa.chunked_array([], pa.string())), 32).tolist() == []


def test_errors_in_a_stream_count_elements_from_its_start():
    bad = pa.array([b"ok", b"\xff"], type=pa.binary()).cast(pa.string(), safe=False)
    chunked = pa.chunked_array([pa.array(TEXTS), bad])
    with pytest.raises(InvalidUTF8Error) as caught:
        from_arrow(StreamOnly(chunked), 32)
    assert (caught.value.index, caught.value.byte_offset) == (len(TEXTS) + 1, 0)
    with pytest.raises(StringTooLongError) as too_long:
        from_arrow(StreamOnly(pa.chunked_array([["a"], ["a", "toolong"]])), 8)
    assert too_long.value.index == 2
    out = np.full(3, "zz", "<U2")
    with pytest.raises(StringTooLongError):
        from_arrow(StreamOnly(pa.chunked_array([["a"], ["a", "toolong"]])), 8, out=out)
    assert out.tolist() == ["zz"] * 3


def test_what_is_refused():
    with pytest.raises(ValueError, match=r"nulls \(the first at element 1\)"):
        from_arrow(ArrayOnly(pa.array(["a", None, "b"])), 8)
    with pytest.raises(ValueError, match=r"nulls \(the first at element 3\)"):
        from_arrow(StreamOnly(pa.chunked_array([["a", "b"], ["c", None]])), 8)
    with pytest.raises(TypeError, match="format 'l'"):
        from_arrow(ArrayOnly(pa.array([1, 2])), 8)
    with pytest.raises(TypeError, match="dictionary-encoded"):
        from_arrow(ArrayOnly(pa.array(["a", "a"]).dictionary_encode()), 8)
    if hasattr(pa, "string_view"):
        with pytest.raises(TypeError, match="string_view"):
            from_arrow(ArrayOnly(pa.array(["a"], type=pa.string_view())), 8)
    with pytest.raises(TypeError, match="__arrow_c_array__ or __arrow_c_stream__"):
        from_arrow(["a", "b"], 8)

    class Liar:
        def __arrow_c_array__(self, requested_schema=None):
            return "not", "capsules"

    with pytest.raises(TypeError, match="must return"):
        from_arrow(Liar(), 8)


def test_round_trip_without_pyarrow():
    # pyarrow blocked: export, then import the export, capsules only.
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "import numpy as np, fixedutf32\n"
        "strings = fixedutf32.to_arrow_strings(np.array(['Hi', 'Привет']), large=True)\n"
        "print(fixedutf32.from_arrow(strings, 24).tolist())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['Hi', 'Привет']"


def test_to_arrow_strings_checks_like_to_utf8():
    with pytest.raises(fixedutf32.InvalidCodePointError):
        to_arrow_strings(b"\x00\xd8\x00\x00", 4)
    with pytest.raises(TypeError, match="large must be True or False"):
        to_arrow_strings(np.array(["a"]), large=1)


# --- hand-built ArrowStrings and hostile producers (issue 24, finding 6) ------

MARKER = b"\xfe\xfd\xfc\xfbMRKR"  # planted right after the values buffer


def _marked(values: bytes):
    """``values`` as a uint8 array whose memory is followed by MARKER (sliced off)."""
    whole = np.frombuffer(values + MARKER, np.uint8).copy()
    return whole[: len(values)]


def _no_marker(message):
    # Neither the bytes nor their hex (as "bytes there: fe fd ..." quotes them).
    hexed = MARKER.hex(" ")
    pairs = {hexed[i : i + 5] for i in range(0, len(hexed) - 3, 3)}
    assert "MRKR" not in message and not any(pair in message for pair in pairs), message


class RawProducer:
    """Exports offsets and values exactly as given, unchecked: a producer that lies."""

    def __init__(self, offsets, values, large=True):
        self.offsets, self.values, self.large = offsets, values, large

    def __arrow_c_array__(self, requested_schema=None):
        return fixedutf32._kernels.arrow_export(
            self.offsets, self.values, self.offsets.size - 1, self.large
        )


def test_hand_built_offsets_past_the_values_fail_cleanly_before_pyarrow_reads_them():
    # At 87b362d ArrowStrings took these and pyarrow crashed reading them
    # (a subprocess, so that a crash fails this test rather than pytest).
    code = (
        "import numpy as np, pyarrow as pa, fixedutf32\n"
        "values = np.frombuffer(b'abc', np.uint8)\n"
        "for large, dtype in ((True, np.int64), (False, np.int32)):\n"
        "    offsets = np.array([0, 1, 1 << 30], dtype)\n"
        "    try:\n"
        "        strings = fixedutf32.ArrowStrings(offsets, values, large)\n"
        "        print(len(pa.array(strings).to_pylist()[-1]))\n"
        "    except ValueError as error:\n"
        "        print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    expected = "offsets must lie inside values (3 bytes), got offsets[2] = 1073741824, past its end"
    assert result.stdout.splitlines() == [expected, expected]


@pytest.mark.parametrize("large", [False, True])
def test_from_arrow_never_quotes_bytes_from_past_the_producers_values(large):
    dtype = np.int64 if large else np.int32
    # Offsets past the values: refused when the strings are built, before any
    # read (at 87b362d from_arrow read on and quoted the marker's bytes).
    values = _marked(b"ok")
    with pytest.raises(ValueError, match=r"offsets\[1\] = 10, past its end") as caught:
        from_arrow(fixedutf32.ArrowStrings(np.array([0, 10], dtype), values, large), 64)
    _no_marker(str(caught.value))
    # Invalid UTF-8 at the very end of the values: only bytes inside are quoted.
    values = _marked(b"ok\xe6\x97")
    strings = fixedutf32.ArrowStrings(np.array([0, 2, 4], dtype), values, large)
    for producer in (strings, ArrayOnly(pa.array(strings)), pa.array(strings)):
        with pytest.raises(
            InvalidUTF8Error, match=r"element 1, byte 0.*\(bytes there: e6 97\)"
        ) as error:
            from_arrow(producer, 64)
        _no_marker(str(error.value))
    # A producer that lies about its offsets (decreasing, one past the last):
    # refused before the bytes it points at are read.
    liar = RawProducer(np.array([0, 9, 4], dtype), values, large)
    with pytest.raises(ValueError, match="offsets of string 0 do not lie inside values") as bad:
        from_arrow(liar, 64)
    _no_marker(str(bad.value))
