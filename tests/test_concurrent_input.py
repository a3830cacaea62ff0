"""An input changed by another thread during a call: what is returned is what was validated.

The kernels run with the GIL released, so another thread can write to the
input while a call reads it (a caller's bug, but one that must not let
invalid text through a validating call).  Here one thread flips code units
(or UTF-8 bytes) of the input between a valid value and U+D800 while the
test calls a copying function many times: every call must either raise or
return exactly the valid result, never one that holds the surrogate.  It
used to: the portable loops checked a block and then copied it again from
the input, the Python layer checked a whole chunk before a copy that did not
check, an error's code point was read from the input a second time (and a
unit that had turned valid again made the kernel report success over a
half-written result), and the AVX2 UTF-8 decoder loaded a block's second
half twice.

The zero-copy and in-place decodes are not here: their result is the input
itself, and their documentation says the caller must not change it during
the call.
"""

import sys
import threading
import time

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import fixedutf32
from fixedutf32 import FixedUTF32Error
from fixedutf32._source.elements import ElementLayout
from fixedutf32.transcode import from_utf8, to_utf8

GOOD = 0x61  # "a"
BAD = 0xD800
WIDTH = 16
ELEMENTS = 16384  # 1 MiB of code units: long enough calls for the flipper to act in
# Each case makes calls for this long (seconds), or until a wrong result; on a
# loaded machine it goes on (up to LIMIT) until the flipper has done a burst
# and a call has returned, so that the case has shown something.
BUDGET = 0.3
LIMIT = 10.0
# The flipper's rhythms, as (period, bad): of every `period` writes, the
# first `bad` write U+D800 and the others the valid value.  Fast ones catch
# a unit read twice a few nanoseconds apart, the slow square wave (tens of
# microseconds each way) a chunk checked in one pass and copied in another;
# the sparse ones let most calls succeed.
RHYTHMS = ((2, 1), (16, 1), (64, 1), (40_000, 20_000))
WRITES_PER_BURST = 100_000


class Flipper:
    """A thread that writes ``bad`` and ``good`` into ``view`` until stopped.

    The writes are done by NumPy with the GIL released (a stride-0 copy of a
    pattern), so they overlap the kernel's reads on another core.
    """

    def __init__(self, view, good, bad):
        self.view, self.good, self.bad = view, good, bad
        self.stop = threading.Event()
        self.bursts = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        shape = (WRITES_PER_BURST,) + self.view.shape
        target = as_strided(
            self.view, shape=shape, strides=(0,) + self.view.strides, writeable=True
        )
        patterns = []
        for period, bad in RHYTHMS:
            pattern = np.empty(shape, self.view.dtype)
            pattern[...] = self.good
            pattern[np.arange(WRITES_PER_BURST) % period < bad] = self.bad
            patterns.append(pattern)
        while not self.stop.is_set():
            np.copyto(target, patterns[self.bursts % len(patterns)])
            self.bursts += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.view[...] = self.good


def units_chunk(endian):
    """A chunk of ELEMENTS strings of WIDTH code units, the last unit of each padding."""
    units = np.full((ELEMENTS, WIDTH), 0x62, np.uint32)
    units[:, 0] = GOOD
    units[:, -1] = 0
    return units


def unit_bytes(value, endian):
    return np.array(value, "<u4" if endian == "little" else ">u4").view(np.uint32)


def native_units(result, width):
    """The code units of a U array (any byte order) or chunk bytes, native order."""
    return np.ascontiguousarray(result).view(np.uint32)


# Each case: (what it calls, the expected result as native code units, the
# view the flipper writes, its good and bad values).  The flipped unit is
# the first of an element in the middle of the chunk.


def chunk_case(name, endian):
    prefix = "<" if endian == "little" else ">"
    other = "big" if endian == "little" else "little"
    units = units_chunk(endian)
    storage = units.astype(f"{prefix}u4")
    data = storage.reshape(-1).view(np.uint8)  # the input, as raw chunk bytes
    strings = storage.view(f"{prefix}U{WIDTH}").reshape(-1)  # the same memory as strings
    flipped = storage[ELEMENTS // 2, :1].view(np.uint32)
    good, bad = unit_bytes(GOOD, endian), unit_bytes(BAD, endian)
    lb = 4 * WIDTH
    out = np.empty(data.size, np.uint8)
    wide_out = np.empty(ELEMENTS * (lb + 4), np.uint8)

    def wider(raw, order):
        return np.frombuffer(raw, f"{order}u4").reshape(ELEMENTS, WIDTH + 1)

    calls = {
        "decode_chunk, new array": (
            lambda: fixedutf32.decode_chunk(data, lb, endian=endian),
            lambda r: native_units(r, WIDTH).reshape(ELEMENTS, WIDTH),
        ),
        "decode_chunk, out": (
            lambda: fixedutf32.decode_chunk(data, lb, endian=endian, out=out),
            lambda r: native_units(r, WIDTH).reshape(ELEMENTS, WIDTH),
        ),
        "encode_chunk, other byte order": (
            lambda: fixedutf32.encode_chunk(strings, endian=other),
            lambda r: np.frombuffer(r, "<u4" if other == "little" else ">u4").reshape(
                ELEMENTS, WIDTH
            ),
        ),
        "encode_chunk, out": (
            lambda: fixedutf32.encode_chunk(strings, endian=endian, out=out),
            lambda r: np.frombuffer(r, f"{prefix}u4").reshape(ELEMENTS, WIDTH),
        ),
        "encode_chunk, wider": (
            lambda: fixedutf32.encode_chunk(strings, lb + 4, endian=endian),
            lambda r: wider(r, prefix)[:, :WIDTH],
        ),
        "encode_chunk, wider into out": (
            lambda: fixedutf32.encode_chunk(strings, lb + 4, endian=endian, out=wide_out),
            lambda r: wider(r, prefix)[:, :WIDTH],
        ),
        "repad, narrower": (
            lambda: fixedutf32.repad(data, lb, lb - 4, endian=endian),
            lambda r: np.frombuffer(r, f"{prefix}u4").reshape(ELEMENTS, WIDTH - 1),
        ),
        "repad, wider into out": (
            lambda: fixedutf32.repad(data, lb, lb + 4, endian=endian, out=wide_out),
            lambda r: wider(r, prefix)[:, :WIDTH],
        ),
        # The one writer's checked copy (KeyWriter: chunk and whole-shard writes use it).
        "ElementLayout.store": (
            lambda: (ElementLayout(lb, other).store(data, out, endian), out)[1],
            lambda r: np.frombuffer(r, "<u4" if other == "little" else ">u4").reshape(
                ELEMENTS, WIDTH
            ),
        ),
    }
    call, read = calls[name]
    expected = units[:, : WIDTH - 1] if name == "repad, narrower" else units
    return call, lambda r: first_difference(read(r), expected), flipped, good, bad


def first_difference(got, expected):
    """None when the code units are as expected, else where and what the first wrong one is."""
    wrong = np.argwhere(got != expected)
    if not wrong.size:
        return None
    element, position = wrong[0]
    return (
        f"element {element}, position {position}: U+{int(got[element, position]):04X}, "
        f"expected U+{int(expected[element, position]):04X}"
    )


def utf8_case(name, endian):
    # 40-byte strings: the AVX2 decoder's general loop, a non-ASCII first
    # block; the flipped bytes 9..11 lie in the second half of that block.
    good, bad = np.frombuffer(b"abc", np.uint8), np.frombuffer(b"\xed\xa0\x80", np.uint8)
    one = ("\u00e9" + "x" * 38).encode()
    values = np.frombuffer(one * ELEMENTS, np.uint8).copy()
    flipped = values.reshape(ELEMENTS, len(one))[ELEMENTS // 2, 9:12]
    flipped[...] = good
    offsets = np.arange(ELEMENTS + 1, dtype=np.int64) * len(one)
    expected = from_utf8(offsets, values.copy(), 4 * 40, endian=endian)
    out = np.empty_like(expected)
    if name == "from_utf8, new array":
        call = lambda: from_utf8(offsets, values, 4 * 40, endian=endian)  # noqa: E731
    else:
        call = lambda: from_utf8(offsets, values, 4 * 40, endian=endian, out=out)  # noqa: E731

    def difference(result):
        return first_difference(
            result.view(np.uint32).reshape(ELEMENTS, -1),
            expected.view(np.uint32).reshape(ELEMENTS, -1),
        )

    return call, difference, flipped, good, bad


def to_utf8_case(name, endian):
    units = units_chunk(endian)
    storage = units.astype("<u4" if endian == "little" else ">u4")
    flipped = storage[ELEMENTS // 2, :1].view(np.uint32)
    data = storage.reshape(-1).view(np.uint8)
    expected = to_utf8(data.copy(), 4 * WIDTH, endian=endian)

    def difference(result):
        offsets, values = result
        if not np.array_equal(offsets, expected[0]):
            return f"offsets from string {np.argmax(offsets != expected[0]) - 1} on"
        if not np.array_equal(values, expected[1]):
            return f"UTF-8 bytes from byte {np.argmax(values != expected[1])} on"
        return None

    call = lambda: to_utf8(data, 4 * WIDTH, endian=endian)  # noqa: E731
    return call, difference, flipped, unit_bytes(GOOD, endian), unit_bytes(BAD, endian)


CHUNK_CASES = [
    "decode_chunk, new array",
    "decode_chunk, out",
    "encode_chunk, other byte order",
    "encode_chunk, out",
    "encode_chunk, wider",
    "encode_chunk, wider into out",
    "repad, narrower",
    "repad, wider into out",
    "ElementLayout.store",
]
CASES = [
    (name, make, endian)
    for name, make in [(name, chunk_case) for name in CHUNK_CASES]
    + [(name, utf8_case) for name in ("from_utf8, new array", "from_utf8, out")]
    + [("to_utf8", to_utf8_case)]
    for endian in ("little", "big")
    # A chunk in this machine's byte order decodes to a view of itself.
    if not (name == "decode_chunk, new array" and endian == sys.byteorder)
]


@pytest.fixture
def quick_switching():
    # The calling thread needs the GIL back between calls while the flipper
    # thread runs Python code between its bursts.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(previous)


@pytest.mark.parametrize(
    "name, make, endian", CASES, ids=[f"{name} ({endian})" for name, _, endian in CASES]
)
def test_result_is_what_was_validated(simd_level, quick_switching, name, make, endian):
    call, difference, flipped, good, bad = make(name, endian)
    returned = raised = 0
    wrong = []
    with Flipper(flipped, good, bad) as flipper:
        start = time.monotonic()
        while not wrong:
            elapsed = time.monotonic() - start
            if elapsed >= LIMIT or (elapsed >= BUDGET and returned and flipper.bursts):
                break
            try:
                result = call()
            except FixedUTF32Error:
                raised += 1
                continue
            returned += 1
            found = difference(result)
            if found is not None:
                wrong.append(f"call {returned + raised} returned {found}")
    assert flipper.bursts > 0
    assert not wrong, (
        f"{name} ({endian}, {simd_level}): {wrong[0]} ({returned} returned, {raised} raised)"
    )
    # A run where every call raised would show nothing: some must return.
    assert returned > 0, f"every one of {raised} calls raised"
