"""Timing shared by every row: alternating rounds, medians, the memcpy baseline, sizes.

Machines are shared and noisy, so each figure that matters is a ratio of two
timings taken moments apart in the same run, never an absolute speed.
"""

import statistics
import time
from collections.abc import Callable, Mapping
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


def median_time(function: Timed, repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``function``."""
    return statistics.median([_seconds(function) for _ in range(repeat)])


def _seconds(function: Timed) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def best_time(function: Timed, repeat: int, before: Timed | None = None) -> float:
    """Least seconds of ``repeat`` calls of ``function``, ``before()`` untimed ahead of each."""
    times: list[float] = []
    for _ in range(repeat):
        if before is not None:
            before()
        times.append(_seconds(function))
    return min(times)


def alternate(
    kernel: Timed, baseline: Timed, repeat: int, prepare: Timed | None = None
) -> tuple[float, float]:
    """Median times of ``kernel`` and ``baseline``, timed one after the other.

    ``prepare`` (untimed) runs before each call of the kernel, e.g. to
    restore a buffer the kernel changes in place.
    """
    kernel_times: list[float] = []
    baseline_times: list[float] = []
    if prepare is not None:
        prepare()
    kernel()
    baseline()  # warm up: page in buffers, fill the pool
    for _ in range(repeat):
        if prepare is not None:
            prepare()
        kernel_times.append(_seconds(kernel))
        baseline_times.append(_seconds(baseline))
    return statistics.median(kernel_times), statistics.median(baseline_times)


def in_turn(
    calls: Mapping[str, Callable[[], _Result]],
    repeat: int,
    check: Callable[[_Result], _Checked],
) -> tuple[dict[str, list[float]], dict[str, _Checked]]:
    """Times of each call over ``repeat`` rounds, the calls in turn within a round.

    Each call runs once first, untimed: it warms the page cache and the
    pools, and its result is checked with ``check``.

    Returns
    -------
    tuple of dict
        name -> list of seconds, and name -> what ``check`` said.
    """
    same = {name: check(call()) for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            times[name].append(_seconds(call))
    return times, same


def memcpy(nbytes: int, source: npt.NDArray[np.uint8] | None = None) -> Callable[[], None]:
    """A call of ``numpy.copyto`` of ``nbytes`` into a preallocated array: the baseline.

    It copies from ``source`` (a ``uint8`` array) when given, else from an
    array of its own.  The physical limit of anything that writes its output.
    """
    if source is None:
        source = np.full(nbytes, 7, np.uint8)
    target = np.empty_like(source)
    return lambda: np.copyto(target, source)


def gbps(nbytes: int, seconds: float) -> float:
    """Throughput in GB/s (10**9 bytes a second)."""
    return nbytes / seconds / 1e9


def format_size(nbytes: int) -> str:
    """``1048576`` -> ``"1 MiB"``; whole KiB and MiB are named, others in bytes."""
    if nbytes >= MiB and nbytes % MiB == 0:
        return f"{nbytes // MiB} MiB"
    if nbytes >= KiB and nbytes % KiB == 0:
        return f"{nbytes // KiB} KiB"
    return f"{nbytes} B"


def parse_size(text: str) -> int:
    """``"1MiB"`` -> ``1048576``; also ``GiB``/``KiB``, ``G``/``M``/``K``, ``B`` and plain bytes.

    Raises ``ValueError`` for text that is none of those.
    """
    text = text.strip().lower().replace(" ", "")
    for suffix, factor in (
        ("gib", GiB),
        ("mib", MiB),
        ("kib", KiB),
        ("g", GiB),
        ("m", MiB),
        ("k", KiB),
        ("b", 1),
    ):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)
