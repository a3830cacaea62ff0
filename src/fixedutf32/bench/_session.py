"""What a bench run says around its table: how long it will take, one progress bar, the total time,
whether the machine was too busy to trust, and which targets were missed.

The estimate scales figures measured on the project's reference machine (a
2-core AMD EPYC, warm page cache) by this machine's copy speed, measured in a
few milliseconds before the run; it is a guide, not a promise: a busy machine
takes longer.
"""

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

# The reference machine's memcpy speed at 64 MiB and each family's seconds:
# fixed + per MiB of data (of each --sizes entry, of --zarr-size, of
# --store-size), at the default --repeat; the timed part scales with --repeat.
_REFERENCE_COPY_GBPS = 15.0
_SECONDS: dict[Family, tuple[float, float, int]] = {
    # family: (fixed seconds, seconds per MiB, default repeat)
    "kernels": (5.5, 0.21, 9),
    "zarr": (20.0, 1.2, 9),
    "store": (5.0, 0.08, 3),
}


def copy_gbps() -> float:
    """This machine's ``numpy.copyto`` speed over 64 MiB, in GB/s (best of 3, about 20 ms)."""
    source = np.ones(64 * MiB, dtype=np.uint8)
    target = np.empty_like(source)
    seconds = best_time(lambda: np.copyto(target, source), 3, None)
    return source.nbytes / seconds / 1e9


def estimate_seconds(family: Family, sizes: Iterable[int], repeat: int, gbps: float) -> float:
    """Seconds a run of ``family`` over ``sizes`` (bytes) is expected to take on this machine.

    Parameters
    ----------
    family : {"kernels", "zarr", "store"}
        ``fixedutf32 bench``, ``--zarr`` or ``--store``.
    sizes : iterable of int
        The chunk sizes (``kernels``) or the array's or store's size.
    repeat : int
        Timed rounds per row.
    gbps : float
        This machine's copy speed (:func:`copy_gbps`).

    Returns
    -------
    float
        The estimate, at least one second.

    Examples
    --------
    >>> estimate_seconds("kernels", [MiB], 9, _REFERENCE_COPY_GBPS)
    5.71
    """
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
    """One progress display across every step of a run; called with each step's name.

    A tqdm bar on stderr where tqdm is installed and stderr is a terminal, its
    length the estimated seconds; otherwise a line per step (rewritten in
    place on a terminal) with the time elapsed and the time left.  ``close``
    ends the display and returns the seconds the run took.
    """

    estimate: float
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    started: float = field(default_factory=time.perf_counter)
    steps: int = 0
    _bar: Any = None  # a tqdm bar (tqdm ships no type information)

    def __post_init__(self) -> None:
        self._interactive = self.stream.isatty()
        if not self._interactive:
            return
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
        self.steps += 1
        elapsed = time.perf_counter() - self.started
        if self._bar is not None:
            # The bar measures time; it stops short of the end until the run has ended.
            self._bar.set_description_str(f"{message[:44]:44}", refresh=False)
            self._bar.n = min(round(elapsed), max(self._bar.total - 1, 0))
            self._bar.refresh()
            return
        left = max(self.estimate - elapsed, 0.0)
        line = f"[{elapsed:4.0f} s, {format_duration(left)} left] measuring {message}"
        if self._interactive:
            self.stream.write(f"\r\x1b[K{line}")
        else:
            self.stream.write(f"{line}\n")
        self.stream.flush()

    def close(self) -> float:
        """End the display; the seconds since the run started."""
        seconds = time.perf_counter() - self.started
        if self._bar is not None:
            self._bar.n = self._bar.total
            self._bar.close()
        elif self._interactive:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        return seconds


def load_average() -> float | None:
    """The one-minute load average, or None where the system does not tell it."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def load_warning(loads: Iterable[float | None]) -> str | None:
    """A warning when a load average taken around the run exceeds the cores; None otherwise.

    Parameters
    ----------
    loads : iterable of float or None
        Load averages (:func:`load_average`) taken before and after the run.

    Returns
    -------
    str or None
        One sentence naming the load and the cores.
    """
    cores = os.cpu_count() or 1
    busiest = max((load for load in loads if load is not None), default=None)
    if busiest is None or busiest <= cores:
        return None
    return (
        f"the machine was busy: load average {busiest:.1f} on {cores} cores; other work "
        "shared the cores, so the figures may be low and the ratios noisy: run again when "
        "it is quiet"
    )


_SPEEDUP = re.compile(r"(\d+) threads / 1 thread")


def speedup_warning(name: str, speedup: float | None, threads: int) -> str | None:
    """A warning when a ``threads``-thread speed-up over one thread cannot be real here.

    A speed-up above the threads usable on this machine (the fewer of
    ``threads`` and its cores, plus 10 % for timer noise) means the one-thread
    timing was slowed by other work.

    Returns
    -------
    str or None
        One sentence, or None when the figure is possible.

    Examples
    --------
    >>> speedup_warning("2 threads", 1.8, 2) is None
    True
    """
    usable = min(threads, os.cpu_count() or 1)
    if speedup is None or speedup <= usable * 1.1:
        return None
    return (
        f"{name}: a speed-up of {speedup:.2f} with {threads} threads on "
        f"{os.cpu_count() or 1} cores is impossible: the one-thread timing was slowed by "
        "other work, so the figure is not shown"
    )


def withhold_impossible(ratios: Iterable[Ratio]) -> list[str]:
    """Blank (value and ``met`` None) every "N threads / 1 thread" ratio that cannot be real.

    The ratios are changed in place; the warnings are returned.
    """
    warnings = []
    for ratio in ratios:
        found = _SPEEDUP.search(ratio["ratio"])
        if found is None:
            continue
        warning = speedup_warning(ratio["ratio"], ratio["value"], int(found.group(1)))
        if warning is not None:
            ratio["value"], ratio["met"] = None, None
            warnings.append(warning)
    return warnings


def missed(entries: Iterable[Verdict]) -> list[Verdict]:
    """The rows or ratios whose target was measured and missed."""
    return [entry for entry in entries if entry.get("met") is False]


def judged(entries: Iterable[Verdict]) -> list[Verdict]:
    """The rows or ratios with a target and a measured value (met or missed)."""
    return [entry for entry in entries if entry.get("met") is not None]
