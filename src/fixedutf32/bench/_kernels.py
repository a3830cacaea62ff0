"""The rows of ``fixedutf32 bench``: each kernel as a ratio to its floor, memcpy and NumPy; the
transcoding against memcpy and the NumPy way; what a call costs per chunk, batched and through
the C API; and the check of hand-built Arrow strings (docs/performance.md)."""

import ctypes
import importlib.util
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import capi
from .._arrow import ArrowStrings
from ..batch import decode_chunks
from ..chunk import decode_chunk, encode_chunk, validate
from ..transcode import (
    decode_vlen_utf8,
    encode_vlen_utf8,
    from_utf8,
    to_arrow_strings,
    to_string_dtype,
    to_utf8,
)
from ._report import Row, judge
from .cases import (
    FOREIGN,
    NATIVE,
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
    sample_chunk,
)

BATCH_CHUNK = 4 * KiB
BATCH_SIZE = 64  # chunks per batch: 256 KiB in all, as a reader's batch of small chunks
C_API_SIZES = (64, 4 * KiB, 64 * KiB)
ARROW_STRINGS = 1 << 18  # strings of 16 code points: 16 MiB of UTF-32
ARROW_CHECK = "ArrowStrings built by hand (offsets checked)"


def measure(
    nbytes: int,
    repeat: int = 9,
    rounds: int = 5,
    numpy_repeat: int = 3,
    progress: Progress | None = None,
) -> list[Row]:
    """Every kernel on one chunk size: medians over ``rounds`` of each round's ratio."""
    rows = []
    cases = kernel_cases(nbytes)
    for index, case in enumerate(cases):
        if progress:
            progress(f"{case.name} @ {format_size(nbytes)} ({index + 1}/{len(cases)})")
        baseline = memcpy(case.nbytes)
        ratios: list[float] = []
        floor_ratios: list[float] = []
        kernel_times: list[float] = []
        for _ in range(rounds):
            for floor, into in ((baseline, ratios), (case.floor, floor_ratios)):
                if floor is not None:
                    kernel_time, floor_time = alternate(case.kernel, floor, repeat, case.prepare)
                    into.append(floor_time / kernel_time)
                    kernel_times.append(kernel_time)
        kernel_time = statistics.median(kernel_times)
        ratio = statistics.median(ratios)
        ratio_floor = statistics.median(floor_ratios) if floor_ratios else ratio
        prepare = case.prepare
        numpy_time = median_time(lambda: (prepare and prepare(), case.numpy_way()), numpy_repeat)
        if prepare is not None:
            numpy_time -= median_time(prepare, numpy_repeat)
        rows.append(
            {
                "kernel": case.name,
                "size": nbytes,
                "gbps": gbps(case.nbytes, kernel_time),
                "memcpy_gbps": gbps(case.nbytes, kernel_time) / ratio,
                "ratio_memcpy": ratio,
                "floor": case.floor_name,
                "ratio_floor": ratio_floor,
                "ratio_numpy": numpy_time / kernel_time,
                **judge("kernel", case.name, ratio_floor, nbytes),
            }
        )
    return rows


def measure_overhead(repeat: int = 20000) -> dict[str, float]:
    """Microseconds per call on a one-element chunk, beyond the kernel's own work."""
    little, foreign = sample_chunk(4 * WIDTH, NATIVE), sample_chunk(4 * WIDTH, FOREIGN)
    array = np.frombuffer(little, f"=U{WIDTH}")
    calls: dict[str, Timed] = {
        "validate": lambda: validate(little, 4 * WIDTH, endian=NATIVE),
        "decode_chunk (swap)": lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN),
        "encode_chunk (swap)": lambda: encode_chunk(array, endian=FOREIGN),
    }
    result = {}
    for name, call in calls.items():
        call()
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        result[name] = (time.perf_counter() - start) / repeat * 1e6
    return result


def measure_threads(nbytes: int, threads: int, repeat: int = 15) -> tuple[float, float]:
    """Median throughput of ``threads`` threads over one, of decode_chunk and of numpy.copyto
    (run alongside: on a shared machine the second core is not always there)."""
    chunks = [sample_chunk(nbytes, FOREIGN, seed=seed) for seed in range(threads)]
    copies = [memcpy(nbytes) for _ in range(threads)]
    count = max(1, int(256 * MiB // nbytes))  # runs of a few ms: thread start-up is noise

    def decode(i: int) -> None:
        for _ in range(count):
            decode_chunk(chunks[i], 4 * WIDTH, endian=FOREIGN)

    def copy(i: int) -> None:
        for _ in range(count):
            copies[i]()

    def throughput(work: Callable[[int], None], n: int) -> float:
        pool = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        start = time.perf_counter()
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        return n / (time.perf_counter() - start)

    throughput(decode, 1)
    decode_scaling, copy_scaling = [], []
    for _ in range(repeat):
        decode_scaling.append(throughput(decode, threads) / throughput(decode, 1))
        copy_scaling.append(throughput(copy, threads) / throughput(copy, 1))
    return statistics.median(decode_scaling), statistics.median(copy_scaling)


TRANSCODE = ("to_utf8", "from_utf8", "encode_vlen_utf8", "decode_vlen_utf8", "to_string_dtype")


def _transcode_baselines(u: npt.NDArray[np.str_]) -> dict[str, list[tuple[str, Timed]]]:
    """The NumPy, pyarrow and numcodecs ways of each conversion that are installed."""
    ways: dict[str, list[tuple[str, Timed]]] = {name: [] for name in TRANSCODE}
    try:
        from numpy.dtypes import StringDType
    except ImportError:  # NumPy < 2
        pass
    else:
        t = u.astype(StringDType())
        ways["to_utf8"].append(("astype(StringDType())", lambda: u.astype(StringDType())))
        ways["to_string_dtype"].append(("astype(StringDType())", lambda: u.astype(StringDType())))
        ways["from_utf8"].append(("StringDType astype U", lambda: t.astype(u.dtype)))
    if importlib.util.find_spec("pyarrow") is not None:
        import pyarrow

        ways["to_utf8"].append(("pyarrow.array", lambda: pyarrow.array(u)))
    if importlib.util.find_spec("numcodecs") is not None:
        import numcodecs

        codec = numcodecs.VLenUTF8()
        encoded = codec.encode(u.astype(object))
        way = "numcodecs VLenUTF8"
        ways["encode_vlen_utf8"].append((way, lambda: codec.encode(u.astype(object))))
        ways["decode_vlen_utf8"].append((way, lambda: codec.decode(encoded).astype(u.dtype)))
    return ways


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


def measure_transcode(
    size_bytes: int, repeat: int = 5, progress: Progress | None = None
) -> list[Row]:
    """Each transcoding kernel on ``size_bytes`` of ascii and of mixed text, in kernel rows
    (floor: memcpy of the UTF-32 bytes) naming the fastest installed NumPy-side ``baseline``."""
    rows = []
    for kind in ("ascii", "mixed"):
        u = make_text(kind, size_bytes)
        nbytes, length_bytes = u.nbytes, u.dtype.itemsize
        baseline = memcpy(nbytes, u.view(np.uint8).reshape(-1))
        offsets, values = to_utf8(u)
        vlen = encode_vlen_utf8(u)
        ways = _transcode_baselines(u)
        kernels: dict[str, Timed] = {
            "to_utf8": lambda: to_utf8(u),
            "from_utf8": lambda: from_utf8(offsets, values, length_bytes),
            "encode_vlen_utf8": lambda: encode_vlen_utf8(u),
            "decode_vlen_utf8": lambda: decode_vlen_utf8(vlen, length_bytes),
            "to_string_dtype": lambda: to_string_dtype(u),
        }
        for name, func in kernels.items():
            if progress:
                progress(f"{name} ({kind}) @ {format_size(size_bytes)}")
            seconds, memcpy_seconds = alternate(func, baseline, repeat)
            timed = [(median_time(way, max(1, min(repeat, 3))), label) for label, way in ways[name]]
            fastest, fastest_way = min(timed) if timed else (float("nan"), None)
            row, ratio = f"{name} ({kind})", memcpy_seconds / seconds
            rows.append(
                {
                    "kernel": row,
                    "size": nbytes,
                    "gbps": gbps(nbytes, seconds),
                    "memcpy_gbps": gbps(nbytes, memcpy_seconds),
                    "ratio_memcpy": ratio,
                    "floor": "memcpy",
                    "ratio_floor": ratio,
                    "ratio_numpy": fastest / seconds,
                    **judge("transcode", row, ratio, nbytes),
                    "baseline": fastest_way,
                }
            )
    return rows


def _per_chunk(first: Timed, second: Timed, count: int, repeat: int, rounds: int) -> list[float]:
    """Median microseconds per chunk of ``first`` and ``second`` over ``rounds`` rounds."""
    times = [alternate(first, second, repeat) for _ in range(rounds)]
    return [statistics.median(t[i] for t in times) / count * 1e6 for i in (0, 1)]


def _call_row(call: str, baseline: str, size: int, us: float, baseline_us: float) -> Row:
    """A call row judged on ``us / baseline_us``, its target "at most"."""
    return {
        "call": call,
        "baseline": baseline,
        "size": size,
        "us": us,
        "baseline_us": baseline_us,
        "ratio": us / baseline_us,
        **judge("calls", call, us / baseline_us, bound=True),
    }


def measure_batches(repeat: int = 21, rounds: int = 5) -> list[Row]:
    """Per-chunk cost of 4 KiB chunks decoded in a batch over one call per chunk."""
    rows = []
    for endian, label in ((FOREIGN, "swap"), (NATIVE, "native")):
        chunks = [sample_chunk(BATCH_CHUNK, endian, seed=seed) for seed in range(BATCH_SIZE)]
        made = [bytearray(BATCH_CHUNK) for _ in chunks]
        for what, outs in (("new arrays", None), ("into outs", made)):

            def singles() -> None:
                for i, chunk in enumerate(chunks):
                    decode_chunk(
                        chunk, 4 * WIDTH, endian=endian, out=None if outs is None else outs[i]
                    )

            def batch() -> object:
                return decode_chunks(chunks, 4 * WIDTH, endian=endian, outs=outs)

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
        c_us = max(full - overhead, 1e-3)
        rows.append(
            _call_row("validate through the C API", "fixedutf32.validate", nbytes, c_us, python)
        )
    return rows


def measure_arrow_check(repeat: int = 7, rounds: int = 3, strings: int = ARROW_STRINGS) -> Row:
    """``ArrowStrings(offsets, values, large)`` (offsets checked) over ``to_arrow_strings``
    making the same strings from ``<U16``."""
    text = make_text("mixed", strings * 64)
    made = to_arrow_strings(text)
    checked = lambda: [ArrowStrings(made.offsets, made.values, made.large) for _ in range(10)]  # noqa: E731
    check_us, make_us = _per_chunk(checked, lambda: to_arrow_strings(text), 1, repeat, rounds)
    return _call_row(ARROW_CHECK, "to_arrow_strings", text.nbytes, check_us / 10, make_us)
