"""Call rows of ``fixedutf32 bench``: what a call costs per chunk, batched or through the C API.

Batches: the time per 4 KiB chunk of one :func:`~fixedutf32.decode_chunks`
call over a batch, over that of one :func:`~fixedutf32.decode_chunk` call
per chunk on the same chunks (so both read the same memory), alternately in
the same run.

The C API: a compiled caller is not at hand when the bench runs, so the
table in the capsule is called through ctypes (``ctypes.pythonapi``
gives the pointer).  A ctypes call costs far more than a C call, so the row
reports the ctypes call on the chunk minus the same call on an empty chunk
(which costs ctypes' own overhead and the entry's argument checks): an
estimate of what a C caller pays, next to ``fixedutf32.validate``'s whole
cost on the same chunk.

Hand-built Arrow strings: what ``ArrowStrings(offsets, values, large)``
costs with its offsets checked, over the :func:`~fixedutf32.to_arrow_strings`
call that makes the same strings (alternately, in the same run).
"""

import ctypes
import statistics
from typing import Any

from .. import capi
from .._arrow import ArrowStrings
from ..batch import decode_chunks
from ..chunk import decode_chunk, validate
from ..transcode import to_arrow_strings
from ._report import CallRow
from ._targets import judge
from ._timing import KiB, alternate
from .cases import FOREIGN, NATIVE, WIDTH, make_text, sample_chunk

BATCH_CHUNK = 4 * KiB
BATCH_SIZE = 64  # chunks per batch: 256 KiB in all, as a reader's batch of small chunks
C_API_SIZES = (64, 4 * KiB, 64 * KiB)
ARROW_STRINGS = 1 << 18  # strings of 16 code points: 16 MiB of UTF-32
ARROW_CHECK = "ArrowStrings built by hand (offsets checked)"


def _per_chunk(first: Any, second: Any, count: int, repeat: int, rounds: int) -> list[float]:
    """Median seconds per chunk of ``first`` and ``second`` over ``rounds`` rounds."""
    firsts: list[float] = []
    seconds: list[float] = []
    for _ in range(rounds):
        a, b = alternate(first, second, repeat)
        firsts.append(a / count)
        seconds.append(b / count)
    return [statistics.median(firsts), statistics.median(seconds)]


def measure_batches(repeat: int = 21, rounds: int = 5) -> list[CallRow]:
    """Per-chunk cost of 4 KiB chunks decoded in a batch over one call per chunk."""
    rows: list[CallRow] = []
    for endian, label in ((FOREIGN, "swap"), (NATIVE, "native")):
        chunks = [sample_chunk(BATCH_CHUNK, endian, seed=seed) for seed in range(BATCH_SIZE)]
        outs = [bytearray(BATCH_CHUNK) for _ in chunks]
        length = 4 * WIDTH

        def singles_new() -> None:
            for chunk in chunks:
                decode_chunk(chunk, length, endian=endian)

        def singles_out() -> None:
            for chunk, out in zip(chunks, outs):
                decode_chunk(chunk, length, endian=endian, out=out)

        cases = (
            ("new arrays", singles_new, lambda: decode_chunks(chunks, length, endian=endian)),
            (
                "into outs",
                singles_out,
                lambda: decode_chunks(chunks, length, endian=endian, outs=outs),
            ),
        )
        for what, singles, batch in cases:
            batch_time, single_time = _per_chunk(batch, singles, BATCH_SIZE, repeat, rounds)
            name = f"decode_chunks, {label}, {what}"
            ratio = batch_time / single_time
            rows.append(
                {
                    "call": name,
                    "baseline": "decode_chunk per chunk",
                    "size": BATCH_CHUNK,
                    "us": batch_time * 1e6,
                    "baseline_us": single_time * 1e6,
                    "ratio": ratio,
                    **judge("calls", name, ratio),
                    "bound": "<=",
                }
            )
    return rows


class _Status(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("element", ctypes.c_ssize_t),
        ("position", ctypes.c_ssize_t),
        ("detail", ctypes.c_int64),
    ]


_VALIDATE = ctypes.CFUNCTYPE(
    _Status, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_int
)


class _Table(ctypes.Structure):
    # The head of fixedutf32_api (include/fixedutf32/fixedutf32.h), up to validate.
    _fields_ = [
        ("abi_major", ctypes.c_uint32),
        ("abi_minor", ctypes.c_uint32),
        ("size", ctypes.c_size_t),
        ("simd_level", ctypes.CFUNCTYPE(ctypes.c_char_p)),
        ("validate", _VALIDATE),
    ]


def c_api_table() -> Any:
    """The C API's table, read through ctypes from the capsule ``fixedutf32._C_API``."""
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capi.C_API, b"fixedutf32._kernels._C_API")
    return _Table.from_address(address)


def measure_c_api(repeat: int = 21, rounds: int = 5) -> list[CallRow]:
    """Per-call cost of validate through the C API (estimated, see above) and from Python."""
    table = c_api_table()
    c_validate = table.validate
    rows: list[CallRow] = []
    empty = ctypes.create_string_buffer(4)
    for nbytes in C_API_SIZES:
        chunk = sample_chunk(nbytes, NATIVE)
        buffer = ctypes.create_string_buffer(chunk, len(chunk))
        units = len(chunk) // 4
        assert c_validate(buffer, units, WIDTH, 0).kind == 0

        def through_ctypes() -> None:
            for _ in range(100):
                c_validate(buffer, units, WIDTH, 0)

        def ctypes_alone() -> None:
            for _ in range(100):
                c_validate(empty, 0, WIDTH, 0)

        def from_python() -> None:
            for _ in range(100):
                validate(chunk, 4 * WIDTH, endian=NATIVE)

        full, overhead = _per_chunk(through_ctypes, ctypes_alone, 100, repeat, rounds)
        python, _ = _per_chunk(from_python, ctypes_alone, 100, repeat, rounds)
        c_time = max(full - overhead, 1e-9)
        name = "validate through the C API"
        rows.append(
            {
                "call": name,
                "baseline": "fixedutf32.validate",
                "size": nbytes,
                "us": c_time * 1e6,
                "baseline_us": python * 1e6,
                "ratio": c_time / python,
                **judge("calls", name, c_time / python),
            }
        )
    return rows


def measure_arrow_check(repeat: int = 7, rounds: int = 3, strings: int = ARROW_STRINGS) -> CallRow:
    """The check of hand-built Arrow strings, over making the same strings from ``<U16``.

    Both sides hand back an :class:`~fixedutf32.ArrowStrings` of the same
    strings: one built from the offsets and values (checked: monotonic,
    inside the values), the other by transcoding the ``U`` array.
    """
    text = make_text("mixed", strings * 64)
    made = to_arrow_strings(text)
    offsets, values, large = made.offsets, made.values, made.large

    def checked() -> None:
        for _ in range(10):
            ArrowStrings(offsets, values, large)

    def transcoded() -> None:
        to_arrow_strings(text)

    check_time, make_time = _per_chunk(checked, transcoded, 1, repeat, rounds)
    check_time /= 10
    ratio = check_time / make_time
    return {
        "call": ARROW_CHECK,
        "baseline": "to_arrow_strings",
        "size": text.nbytes,
        "us": check_time * 1e6,
        "baseline_us": make_time * 1e6,
        "ratio": ratio,
        **judge("calls", ARROW_CHECK, ratio),
        "bound": "<=",
    }
