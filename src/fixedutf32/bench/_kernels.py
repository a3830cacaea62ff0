"""The rows of ``fixedutf32 bench``: each kernel as a ratio to its floor, memcpy and NumPy; the
transcoding against memcpy and the NumPy way; what a call costs per chunk, batched and through
the C API; and the check of hand-built Arrow strings (docs/performance.md)."""

import ctypes
import importlib.util
import statistics
import threading
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from .. import capi
from .._arrow import ArrowStrings
from ..batch import decode_chunks
from ..chunk import decode_chunk, encode_chunk, validate
from ..transcode import to_arrow_strings
from ._report import Family, Row, judge
from .cases import (
    ELEMENT_BYTES,
    FOREIGN,
    NATIVE,
    OURS,
    WIDTH,
    KiB,
    MiB,
    Progress,
    Timed,
    alternate,
    format_size,
    gbps,
    kernel_cases,
    make_text,
    median_time,
    memcpy,
    quiet,
    repeated,
    sample_chunk,
    seconds,
    transcode_calls,
)

BATCH_CHUNK = 4 * KiB
BATCH_SIZE = 64  # chunks per batch: 256 KiB in all, as a reader's batch of small chunks
C_API_SIZES = (64, 4 * KiB, 64 * KiB)
ARROW_STRINGS = 1 << 18  # strings of 16 code points: 16 MiB of UTF-32
ARROW_CHECK = "ArrowStrings built by hand (offsets checked)"
TRANSCODE = ("to_utf8", "from_utf8", "encode_vlen_utf8", "decode_vlen_utf8", "to_string_dtype")


def _row(
    family: Family, kernel: str, size: int, nbytes: int, seconds: float, floor: str, *ratios: float
) -> Row:
    """A kernel row: GB/s of ``nbytes``, the ratios to memcpy, the floor and NumPy, the verdict."""
    ratio, ratio_floor, ratio_numpy = ratios
    return {
        "kernel": kernel,
        "size": size,
        "gbps": gbps(nbytes, seconds),
        "memcpy_gbps": gbps(nbytes, seconds) / ratio,
        "ratio_memcpy": ratio,
        "floor": floor,
        "ratio_floor": ratio_floor,
        "ratio_numpy": ratio_numpy,
        **judge(family, kernel, ratio_floor, size),
    }


def measure(
    nbytes: int, repeat: int = 9, rounds: int = 5, numpy_repeat: int = 3, progress: Progress = quiet
) -> list[Row]:
    """Every kernel on one chunk size: medians over ``rounds`` of each round's ratio."""
    rows = []
    cases = kernel_cases(nbytes)
    for index, case in enumerate(cases, 1):
        progress(f"{case.name} @ {format_size(nbytes)} ({index}/{len(cases)})")
        floors = [memcpy(case.nbytes), *([case.floor] if case.floor else [])]
        ratios: list[list[float]] = [[] for _ in floors]
        kernel_times = []
        for _ in range(rounds):
            for floor, into in zip(floors, ratios):
                kernel_time, floor_time = alternate(case.kernel, floor, repeat, case.prepare)
                into.append(floor_time / kernel_time)
                kernel_times.append(kernel_time)
        took, prepare = statistics.median(kernel_times), case.prepare
        numpy_time = median_time(lambda: (prepare and prepare(), case.numpy_way()), numpy_repeat)
        if prepare is not None:
            numpy_time -= median_time(prepare, numpy_repeat)
        ratio, floor_ratio = statistics.median(ratios[0]), statistics.median(ratios[-1])
        found = (ratio, floor_ratio, numpy_time / took)
        rows.append(_row("kernel", case.name, nbytes, case.nbytes, took, case.floor_name, *found))
    return rows


def measure_overhead(repeat: int = 20000) -> dict[str, float]:
    """Microseconds per call on a one-element chunk, beyond the kernel's own work."""
    little, foreign = sample_chunk(ELEMENT_BYTES, NATIVE), sample_chunk(ELEMENT_BYTES, FOREIGN)
    array = np.frombuffer(little, f"=U{WIDTH}")
    calls: dict[str, Timed] = {
        "validate": lambda: validate(little, ELEMENT_BYTES, endian=NATIVE),
        "decode_chunk (swap)": lambda: decode_chunk(foreign, ELEMENT_BYTES, endian=FOREIGN),
        "encode_chunk (swap)": lambda: encode_chunk(array, endian=FOREIGN),
    }
    result = {}
    for name, call in calls.items():
        call()
        result[name] = seconds(repeated(call, repeat)) / repeat * 1e6
    return result


def measure_threads(nbytes: int, threads: int, repeat: int = 15) -> tuple[float, float]:
    """Median speed-ups of decode_chunk and numpy.copyto on ``threads`` threads over one."""
    # numpy.copyto runs alongside: on a shared machine the second core is not always there.
    chunks = [sample_chunk(nbytes, FOREIGN, seed=seed) for seed in range(threads)]
    count = max(1, int(256 * MiB // nbytes))  # runs of a few ms: thread start-up is noise
    decodes = [
        repeated(partial(decode_chunk, c, ELEMENT_BYTES, endian=FOREIGN), count) for c in chunks
    ]
    copies = [repeated(memcpy(nbytes), count) for _ in range(threads)]

    def throughput(work: list[Timed], n: int) -> float:
        pool = [threading.Thread(target=work[i]) for i in range(n)]
        start = time.perf_counter()
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        return n / (time.perf_counter() - start)

    throughput(decodes, 1)
    decode_scaling, copy_scaling = [], []
    for _ in range(repeat):
        decode_scaling.append(throughput(decodes, threads) / throughput(decodes, 1))
        copy_scaling.append(throughput(copies, threads) / throughput(copies, 1))
    return statistics.median(decode_scaling), statistics.median(copy_scaling)


def missing_baseline_notes(left_out: Sequence[str]) -> list[str]:
    """Notes on the kernels ``left_out`` (no baseline), and on a missing pyarrow."""
    missing = [name for name in ("pyarrow", "numcodecs") if importlib.util.find_spec(name) is None]
    notes = []
    if left_out:
        why = f"not installed: {', '.join(missing)}" if missing else "NumPy has no StringDType"
        notes.append(f"left out for want of a NumPy-side baseline ({why}): {', '.join(left_out)}")
    if "pyarrow" in missing:
        notes.append(
            "to_utf8 x NumPy compares with NumPy's StringDType cast only (pyarrow is not installed)"
        )
    return notes


def measure_transcode(size_bytes: int, repeat: int = 5, progress: Progress = quiet) -> list[Row]:
    """Each transcoding kernel on ascii and mixed text, beside memcpy and the fastest other way."""
    rows: list[Row] = []
    tries = max(1, min(repeat, 3))
    for kind in ("ascii", "mixed"):
        u = make_text(kind, size_bytes)
        baseline = memcpy(u.nbytes, u.view(np.uint8).reshape(-1))
        calls = transcode_calls(u)
        for name in TRANSCODE:
            progress(f"{name} ({kind}) @ {format_size(size_bytes)}")
            ways = calls[name].copy()
            took, memcpy_seconds = alternate(ways.pop(OURS), baseline, repeat)
            timed = [(median_time(way, tries), label) for label, way in ways.items()]
            fastest, fastest_way = min(timed) if timed else (float("nan"), None)
            ratios = (memcpy_seconds / took,) * 2 + (fastest / took,)
            row = _row("transcode", f"{name} ({kind})", u.nbytes, u.nbytes, took, "memcpy", *ratios)
            rows.append({**row, "baseline": fastest_way})
    return rows


def _per_chunk(first: Timed, second: Timed, count: int, repeat: int, rounds: int) -> list[float]:
    """Median microseconds per chunk of ``first`` and ``second`` over ``rounds`` rounds."""
    times = [alternate(first, second, repeat) for _ in range(rounds)]
    return [statistics.median(t[i] for t in times) / count * 1e6 for i in (0, 1)]


def _call_row(call: str, baseline: str, size: int, us: float, baseline_us: float) -> Row:
    """A call row judged on ``us / baseline_us``, its target "at most"."""
    ratio = us / baseline_us
    found = {"call": call, "baseline": baseline, "size": size, "us": us, "baseline_us": baseline_us}
    return {**found, "ratio": ratio, **judge("calls", call, ratio, bound=True)}


def measure_batches(repeat: int = 21, rounds: int = 5) -> list[Row]:
    """Per-chunk cost of 4 KiB chunks decoded in a batch over one call per chunk."""
    rows = []
    for endian, label in ((FOREIGN, "swap"), (NATIVE, "native")):
        chunks = [sample_chunk(BATCH_CHUNK, endian, seed=seed) for seed in range(BATCH_SIZE)]
        made = [bytearray(BATCH_CHUNK) for _ in chunks]
        for what, outs in (("new arrays", None), ("into outs", made)):

            def singles() -> None:
                for i, chunk in enumerate(chunks):
                    out = None if outs is None else outs[i]
                    decode_chunk(chunk, ELEMENT_BYTES, endian=endian, out=out)

            batch = partial(decode_chunks, chunks, ELEMENT_BYTES, endian=endian, outs=outs)
            us = _per_chunk(batch, singles, BATCH_SIZE, repeat, rounds)
            name = f"decode_chunks, {label}, {what}"
            rows.append(_call_row(name, "decode_chunk per chunk", BATCH_CHUNK, *us))
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


def measure_c_api(repeat: int = 21, rounds: int = 5) -> list[Row]:
    """Per-call cost of validate through the C API (less ctypes' own) and from Python."""
    c_validate = c_api_table().validate
    empty = ctypes.create_string_buffer(4)
    ctypes_alone = repeated(lambda: c_validate(empty, 0, WIDTH, 0), 100)
    rows = []
    for nbytes in C_API_SIZES:
        chunk = sample_chunk(nbytes, NATIVE)
        buffer = ctypes.create_string_buffer(chunk, len(chunk))
        units = len(chunk) // 4
        assert c_validate(buffer, units, WIDTH, 0).kind == 0
        through_ctypes = repeated(lambda: c_validate(buffer, units, WIDTH, 0), 100)
        from_python = repeated(lambda: validate(chunk, ELEMENT_BYTES, endian=NATIVE), 100)
        full, overhead = _per_chunk(through_ctypes, ctypes_alone, 100, repeat, rounds)
        python, _ = _per_chunk(from_python, ctypes_alone, 100, repeat, rounds)
        c_us = max(full - overhead, 1e-3)
        rows.append(
            _call_row("validate through the C API", "fixedutf32.validate", nbytes, c_us, python)
        )
    return rows


def measure_arrow_check(repeat: int = 7, rounds: int = 3, strings: int = ARROW_STRINGS) -> Row:
    """Hand-built ``ArrowStrings`` (offsets checked) over ``to_arrow_strings`` making them."""
    text = make_text("mixed", strings * 64)
    made = to_arrow_strings(text)
    checked = repeated(partial(ArrowStrings, made.offsets, made.values, made.large), 10)
    check_us, make_us = _per_chunk(checked, partial(to_arrow_strings, text), 1, repeat, rounds)
    return _call_row(ARROW_CHECK, "to_arrow_strings", text.nbytes, check_us / 10, make_us)
