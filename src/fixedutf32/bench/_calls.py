"""Call rows of ``fixedutf32 bench``: what a call costs per chunk, batched, through the C API,
and the check of hand-built Arrow strings (docs/performance.md)."""

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
from ._timing import KiB, Timed, alternate
from .cases import FOREIGN, NATIVE, WIDTH, make_text, sample_chunk

BATCH_CHUNK = 4 * KiB
BATCH_SIZE = 64  # chunks per batch: 256 KiB in all, as a reader's batch of small chunks
C_API_SIZES = (64, 4 * KiB, 64 * KiB)
ARROW_STRINGS = 1 << 18  # strings of 16 code points: 16 MiB of UTF-32
ARROW_CHECK = "ArrowStrings built by hand (offsets checked)"


def _per_chunk(first: Timed, second: Timed, count: int, repeat: int, rounds: int) -> list[float]:
    """Median seconds per chunk of ``first`` and ``second`` over ``rounds`` rounds."""
    times = [alternate(first, second, repeat) for _ in range(rounds)]
    return [statistics.median(t[i] for t in times) / count for i in (0, 1)]


def _row(call: str, baseline: str, size: int, us: float, baseline_us: float) -> CallRow:
    """A call row judged on ``us / baseline_us``; ``bound`` where its target is "at most"."""
    row: CallRow = {
        "call": call,
        "baseline": baseline,
        "size": size,
        "us": us,
        "baseline_us": baseline_us,
        "ratio": us / baseline_us,
        **judge("calls", call, us / baseline_us),
    }
    if row["target"] is not None:
        row["bound"] = "<="
    return row


def measure_batches(repeat: int = 21, rounds: int = 5) -> list[CallRow]:
    """Per-chunk cost of 4 KiB chunks decoded in a batch over one call per chunk."""
    rows = []
    length = 4 * WIDTH
    for endian, label in ((FOREIGN, "swap"), (NATIVE, "native")):
        chunks = [sample_chunk(BATCH_CHUNK, endian, seed=seed) for seed in range(BATCH_SIZE)]
        outs = [bytearray(BATCH_CHUNK) for _ in chunks]

        def singles(into: bool, chunks: list[bytes] = chunks, endian: str = endian) -> Timed:
            def run() -> None:
                for chunk, out in zip(chunks, outs):
                    decode_chunk(chunk, length, endian=endian, out=out if into else None)

            return run

        def batch(into: bool, chunks: list[bytes] = chunks, endian: str = endian) -> Timed:
            return lambda: decode_chunks(chunks, length, endian=endian, outs=outs if into else None)

        for what, into in (("new arrays", False), ("into outs", True)):
            batch_time, single_time = _per_chunk(
                batch(into), singles(into), BATCH_SIZE, repeat, rounds
            )
            name = f"decode_chunks, {label}, {what}"
            rows.append(
                _row(
                    name, "decode_chunk per chunk", BATCH_CHUNK, batch_time * 1e6, single_time * 1e6
                )
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
    return _Table.from_address(get_pointer(capi.C_API, b"fixedutf32._kernels._C_API"))


def measure_c_api(repeat: int = 21, rounds: int = 5) -> list[CallRow]:
    """Per-call cost of validate through the C API (ctypes' cost on an empty chunk taken off)
    and from Python."""
    c_validate = c_api_table().validate
    empty = ctypes.create_string_buffer(4)
    rows = []
    for nbytes in C_API_SIZES:
        chunk = sample_chunk(nbytes, NATIVE)
        buffer = ctypes.create_string_buffer(chunk, len(chunk))
        units = len(chunk) // 4
        assert c_validate(buffer, units, WIDTH, 0).kind == 0

        def hundred(call: Timed) -> Timed:
            return lambda: [call() for _ in range(100)]

        through_ctypes = hundred(lambda: c_validate(buffer, units, WIDTH, 0))
        ctypes_alone = hundred(lambda: c_validate(empty, 0, WIDTH, 0))
        from_python = hundred(lambda: validate(chunk, 4 * WIDTH, endian=NATIVE))
        full, overhead = _per_chunk(through_ctypes, ctypes_alone, 100, repeat, rounds)
        python, _ = _per_chunk(from_python, ctypes_alone, 100, repeat, rounds)
        c_time = max(full - overhead, 1e-9)
        rows.append(
            _row(
                "validate through the C API",
                "fixedutf32.validate",
                nbytes,
                c_time * 1e6,
                python * 1e6,
            )
        )
    return rows


def measure_arrow_check(repeat: int = 7, rounds: int = 3, strings: int = ARROW_STRINGS) -> CallRow:
    """``ArrowStrings(offsets, values, large)`` (offsets checked) over ``to_arrow_strings``
    making the same strings from ``<U16``."""
    text = make_text("mixed", strings * 64)
    made = to_arrow_strings(text)
    checked = lambda: [ArrowStrings(made.offsets, made.values, made.large) for _ in range(10)]  # noqa: E731
    check_time, make_time = _per_chunk(checked, lambda: to_arrow_strings(text), 1, repeat, rounds)
    return _row(
        ARROW_CHECK, "to_arrow_strings", text.nbytes, check_time / 10 * 1e6, make_time * 1e6
    )
