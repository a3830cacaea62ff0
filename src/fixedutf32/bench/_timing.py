"""Timing shared by every row: alternating rounds, medians, the memcpy and read floors, sizes."""

import statistics
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TypeVar

import numpy as np
import numpy.typing as npt

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

Timed = Callable[[], object]  # a call without arguments: timed, or untimed around the timed ones
Progress = Callable[[str], object]  # called with a short message before each step

_Result = TypeVar("_Result")
_Checked = TypeVar("_Checked")


def seconds(function: Timed) -> float:
    """Seconds of one call of ``function``."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def median_time(function: Timed, repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``function``."""
    return statistics.median([seconds(function) for _ in range(repeat)])


def best_time(function: Timed, repeat: int, before: Timed | None = None) -> float:
    """Least seconds of ``repeat`` calls of ``function``, ``before()`` untimed ahead of each."""
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        times.append(seconds(function))
    return min(times)


def alternate(
    kernel: Timed, baseline: Timed, repeat: int, prepare: Timed | None = None
) -> tuple[float, float]:
    """Median times of ``kernel`` and ``baseline`` timed in turn; ``prepare()`` untimed first."""
    before = prepare or (lambda: None)
    for call in (before, kernel, baseline):  # warm up: page in buffers, fill the pool
        call()
    kernel_times, baseline_times = [], []
    for _ in range(repeat):
        before()
        kernel_times.append(seconds(kernel))
        baseline_times.append(seconds(baseline))
    return statistics.median(kernel_times), statistics.median(baseline_times)


def in_turn(
    calls: Mapping[str, Callable[[], _Result]], repeat: int, check: Callable[[_Result], _Checked]
) -> tuple[dict[str, list[float]], dict[str, _Checked]]:
    """name -> seconds of each of ``repeat`` rounds (calls in turn), and what ``check`` said of
    each call's first, untimed result."""
    same = {name: check(call()) for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            times[name].append(seconds(call))
    return times, same


def memcpy(nbytes: int, source: npt.NDArray[np.uint8] | None = None) -> Callable[[], None]:
    """``numpy.copyto`` of ``nbytes`` (of ``source``) into a preallocated array: the baseline."""
    source = np.full(nbytes, 7, np.uint8) if source is None else source
    target = np.empty_like(source)
    return lambda: np.copyto(target, source)


def read_only_floor(source: npt.NDArray[np.uint8], tries: int = 5) -> Callable[[], object]:
    """The fastest here of three NumPy reductions that read every byte and write one number."""
    units32, units64 = source.view(np.uint32), source.view(np.uint64)
    candidates: list[Callable[[], object]] = [
        units32.max,
        partial(np.bitwise_or.reduce, units64),
        units64.sum,
    ]
    return min(candidates, key=lambda candidate: best_time(candidate, tries))


def rewrite_floor(buffer: npt.NDArray[np.uint8]) -> Callable[[], object]:
    """``x | 0`` over 8-byte units in place: the floor of a kernel that rewrites its input."""
    units64 = buffer.view(np.uint64)
    return partial(np.bitwise_or, units64, np.uint64(0), out=units64)


def gbps(nbytes: int, seconds: float) -> float:
    """Throughput in GB/s (10**9 bytes a second)."""
    return nbytes / seconds / 1e9


def format_size(nbytes: int) -> str:
    """``1048576`` -> ``"1 MiB"``; whole KiB and MiB are named, others in bytes."""
    for unit, name in ((MiB, "MiB"), (KiB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    return f"{nbytes} B"


_UNITS = {"gib": GiB, "mib": MiB, "kib": KiB, "g": GiB, "m": MiB, "k": KiB, "b": 1}


def parse_size(text: str) -> int:
    """``"1MiB"`` -> ``1048576`` (also GiB/KiB, G/M/K, B, plain bytes); ValueError otherwise."""
    text = text.strip().lower().replace(" ", "")
    suffix = next((s for s in _UNITS if text.endswith(s)), "")
    return int(float(text[: len(text) - len(suffix)]) * _UNITS[suffix]) if suffix else int(text)
