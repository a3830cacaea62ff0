"""Around a bench run's table: its estimated length, one progress display, the total time,
whether the machine was too busy to trust, and which targets were missed."""

import os
import re
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

import numpy as np

from ._targets import Ratio, Verdict
from ._timing import MiB, best_time

Family = Literal["kernels", "zarr", "store"]

# The reference machine's memcpy GB/s at 64 MiB, and each family's (fixed seconds, seconds
# per MiB of --sizes/--zarr-size/--store-size, default --repeat) on it.
_REFERENCE_COPY_GBPS = 15.0
_SECONDS: dict[Family, tuple[float, float, int]] = {
    "kernels": (5.5, 0.21, 9),
    "zarr": (20.0, 1.2, 9),
    "store": (5.0, 0.08, 3),
}


def copy_gbps() -> float:
    """This machine's ``numpy.copyto`` speed over 64 MiB, in GB/s (best of 3, about 20 ms)."""
    source = np.ones(64 * MiB, dtype=np.uint8)
    target = np.empty_like(source)
    return source.nbytes / best_time(lambda: np.copyto(target, source), 3) / 1e9


def estimate_seconds(family: Family, sizes: Iterable[int], repeat: int, gbps: float) -> float:
    """Seconds a run of ``family`` over ``sizes`` should take here, at ``gbps`` of memcpy."""
    fixed, per_mib, default_repeat = _SECONDS[family]
    speed = _REFERENCE_COPY_GBPS / max(gbps, 1e-3)
    seconds = sum(fixed + per_mib * size / MiB * repeat / default_repeat for size in sizes)
    return round(max(1.0, seconds * speed), 2)


def format_duration(seconds: float) -> str:
    """``"about 40 s"``, ``"about 6 min"``."""
    if seconds < 90:
        return f"about {max(1, round(seconds, -1 if seconds >= 20 else 0)):.0f} s"
    return f"about {seconds / 60:.0f} min"


@dataclass
class Steps:
    """One progress display for a run, called with each step's name: a tqdm bar (tqdm, and
    stderr a terminal) or a line per step with the time elapsed and left; ``close`` ends it."""

    estimate: float
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    started: float = field(default_factory=time.perf_counter)
    _bar: Any = None  # a tqdm bar (tqdm ships no type information)

    def __post_init__(self) -> None:
        self._interactive = self.stream.isatty()
        if self._interactive:
            try:
                from tqdm import tqdm
            except ImportError:
                return
            self._bar = tqdm(
                total=round(self.estimate),
                unit="s",
                file=self.stream,
                dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {elapsed} of about {total} s",
            )

    def __call__(self, message: str) -> None:
        elapsed = time.perf_counter() - self.started
        if self._bar is not None:  # it measures time: short of the end until the run ends
            self._bar.set_description_str(f"{message[:44]:44}", refresh=False)
            self._bar.n = min(round(elapsed), max(self._bar.total - 1, 0))
            self._bar.refresh()
            return
        left = format_duration(max(self.estimate - elapsed, 0.0))
        line = f"[{elapsed:4.0f} s, {left} left] measuring {message}"
        self.stream.write(f"\r\x1b[K{line}" if self._interactive else f"{line}\n")
        self.stream.flush()

    def close(self) -> float:
        """End the display; the seconds since the run started."""
        if self._bar is not None:
            self._bar.n = self._bar.total
            self._bar.close()
        elif self._interactive:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        return time.perf_counter() - self.started


def load_average() -> float | None:
    """The one-minute load average, or None where the system does not tell it."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def load_warning(loads: Iterable[float | None]) -> str | None:
    """A warning when a load average taken around the run exceeds the cores; else None."""
    cores = os.cpu_count() or 1
    busiest = max((load for load in loads if load is not None), default=None)
    if busiest is None or busiest <= cores:
        return None
    return (
        f"the machine was busy: load average {busiest:.1f} on {cores} cores; other work "
        "shared the cores, so the figures may be low and the ratios noisy: run again when "
        "it is quiet"
    )


def speedup_warning(name: str, speedup: float | None, threads: int) -> str | None:
    """A warning when a speed-up on ``threads`` threads exceeds the usable cores (+10 %)."""
    if speedup is None or speedup <= min(threads, os.cpu_count() or 1) * 1.1:
        return None
    return (
        f"{name}: a speed-up of {speedup:.2f} with {threads} threads on "
        f"{os.cpu_count() or 1} cores is impossible: the one-thread timing was slowed by "
        "other work, so the figure is not shown"
    )


def withhold_impossible(ratios: Iterable[Ratio]) -> list[str]:
    """Blank (in place) every "N threads / 1 thread" ratio that cannot be real; the warnings."""
    warnings = []
    for ratio in ratios:
        found = re.search(r"(\d+) threads / 1 thread", ratio["ratio"])
        warning = found and speedup_warning(ratio["ratio"], ratio["value"], int(found.group(1)))
        if warning:
            ratio["value"], ratio["met"] = None, None
            warnings.append(warning)
    return warnings


def missed(entries: Iterable[Verdict]) -> list[Verdict]:
    """The rows or ratios whose target was measured and missed."""
    return [entry for entry in entries if entry.get("met") is False]


def judged(entries: Iterable[Verdict]) -> list[Verdict]:
    """The rows or ratios with a target and a measured value (met or missed)."""
    return [entry for entry in entries if entry.get("met") is not None]
