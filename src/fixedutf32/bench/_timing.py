"""Timing shared by every row: alternating rounds, medians, the memcpy baseline, sizes.

Machines are shared and noisy, so each figure that matters is a ratio of two
timings taken moments apart in the same run, never an absolute speed.
"""

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


def read_only_floor(source: npt.NDArray[np.uint8], tries: int = 5) -> Callable[[], object]:
    """A call that reads every byte of ``source`` and writes nothing: a read-only kernel's floor.

    NumPy has no plain "read these bytes" call, but each reduction here reads
    every 4- or 8-byte unit once into registers and writes one number; which
    one is fastest depends on the size and the machine (``max`` of 4-byte
    units from cache, ``bitwise_or.reduce`` of 8-byte units from memory on the
    machine of docs/performance.md).  Each is timed ``tries`` times now and
    the fastest is returned.  ``source`` must hold a whole number of 8-byte
    units.
    """
    units32 = source.view(np.uint32)
    units64 = source.view(np.uint64)
    candidates: list[Callable[[], object]] = [
        units32.max,
        partial(np.bitwise_or.reduce, units64),
        units64.sum,
    ]
    return min(candidates, key=lambda candidate: best_time(candidate, tries))


def rewrite_floor(buffer: npt.NDArray[np.uint8]) -> Callable[[], object]:
    """A call that reads every byte of ``buffer`` and writes it back unchanged, in place.

    ``x | 0`` over 8-byte units with NumPy: the floor of a kernel that
    rewrites its input in place (the cache lines are read and written, none
    other).  ``buffer`` must hold a whole number of 8-byte units.
    """
    units64 = buffer.view(np.uint64)
    return partial(np.bitwise_or, units64, np.uint64(0), out=units64)


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
