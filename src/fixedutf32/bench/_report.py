"""The bench's targets, reports (what ``--json`` prints) and tables, and what a run says around
them: its estimated length, one progress display, the total time, and whether the machine was
too busy to trust (docs/performance.md says why each target is where it is)."""

import os
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TextIO

from .cases import WIDTH, MiB, best_time, format_size, gbps, memcpy

Row = dict[str, Any]  # a row or ratio of a report, as --json prints it
Family = Literal["kernel", "transcode", "zarr", "store", "calls"]
NOISE = 0.95  # "not slower than stock": within 5 %

# family, size class ("-": any; kernels: small < 1 MiB <= cache < 32 MiB <= memory), bound,
# value | a prefix of the names ("prefix, row") | rows.  Kernels: ratio to the row's floor;
# transcode: to memcpy of the UTF-32 bytes; zarr and store: speed ratios of one run; calls:
# time per chunk batched over one call per chunk, and hand-built Arrow strings over making them.
_TABLE = """
kernel cache >= 0.85 | | validate; decode swap -> new; encode -> swapped
kernel cache >= 0.8 | | decode native (no copy)
kernel cache >= 0.7 | | decode swap in place
kernel cache >= 0.55 | | repad widen U8->U16
kernel cache >= 0.9 | | repad narrow U16->U8
kernel cache >= 0.6 | | str_lengths
kernel memory >= 0.9 | | validate; decode native (no copy); decode swap in place
kernel memory >= 0.8 | | decode swap -> new; encode -> swapped
kernel memory >= 1.0 | | repad widen U8->U16; repad narrow U16->U8
kernel memory >= 0.75 | | str_lengths
kernel small >= 0.5 | | validate; decode swap -> new; encode -> swapped
transcode - >= 0.5 | | to_utf8 (ascii)
transcode - >= 0.25 | | to_utf8 (mixed)
transcode - >= 0.4 | | from_utf8 (ascii)
transcode memory >= 0.2 | | from_utf8 (mixed)
transcode - >= 0.1 | | from_utf8 (mixed)
zarr - >= 1.0 | pipeline / fastest zarr | read raw little; read zstd, 1 thread; read zstd, 2 threads
zarr - >= 1.0 | pipeline / fastest zarr | read raw, 64 KiB chunks; read raw, 16 KiB chunks
zarr - >= 1.0 | pipeline / fastest zarr | read sharded raw; read sharded zstd; write sharded raw
zarr - >= 1.0 | pipeline / fastest zarr | read 1000 random elements; read a 1000-element slice
zarr - >= 1.0 | pipeline / fastest zarr | write raw little; write raw big; write zstd
zarr - >= 1.2 | pipeline / fastest zarr | read raw big
zarr - >= 0.9 | pipeline / floor | read raw little; read raw big; write raw little; write raw big
zarr - >= 0.9 | pipeline / floor | write zstd
zarr - >= 0.8 | pipeline / floor | read raw, 64 KiB chunks; read sharded raw; write sharded raw
zarr - >= 0.8 | pipeline / floor | read sharded zstd
zarr - >= 0.8 | reader / floor | read raw little; read zstd, 1 thread; read zstd, 2 threads
zarr - >= 0.7 | reader / floor | read sharded raw
zarr - >= 0.6 | reader / floor | read raw, 16 KiB chunks
zarr - >= 0.8 | pooled / floor | read raw little; read sharded raw
zarr - >= 0.6 | pipeline / floor | read raw, 16 KiB chunks
zarr - >= 0.5 | pipeline / floor | read 1000 random elements; read a 1000-element slice
zarr - >= 1.8 | pipeline / stock | read raw little; read raw big
zarr - >= 1.3 | pipeline / stock | write raw little; write raw big
zarr - >= 1.0 | pipeline / stock | read zstd, 1 thread
zarr - >= 0.95 | codec / stock | read raw little; read zstd, 1 thread; read zstd, 2 threads
zarr - >= 0.95 | codec / stock | write raw little; write raw big
zarr - >= 1.05 | codec / stock | read raw big
zarr - >= 1.7 | | zstd 2 threads / 1 thread, pipeline
store - >= 0.8 | | check raw / read files (speed); check raw / read files, cold cache (speed)
store - >= 0.7 | | check sharded / read files (speed)
store - >= 1.7 | | check zstd N threads / 1 thread (speed)
store - <= 1.3 | | convert / zstd-compress (time)
calls - <= 0.25 | decode_chunks | swap, new arrays; swap, into outs; native, new arrays
calls - <= 0.25 | decode_chunks | native, into outs
calls - <= 0.05 | | ArrowStrings built by hand (offsets checked)
"""


class Target(NamedTuple):
    """A bound on a measured value: ``>=`` (at least) or ``<=`` (at most)."""

    bound: str
    value: float

    def met(self, measured: float | None) -> bool | None:
        """Whether ``measured`` meets the target; None when nothing was measured."""
        if measured is None:
            return None
        return measured >= self.value if self.bound == ">=" else measured <= self.value


def _parse(table: str) -> dict[tuple[str, str, str | None], Target]:
    """The table above as (family, row, size class or None) -> target."""
    targets = {}
    for line in table.strip().splitlines():
        head, prefix, rows = (part.strip() for part in line.split("|"))
        family, size, bound, value = head.split()
        for row in rows.split("; "):
            name = f"{prefix}, {row}" if prefix else row
            targets[family, name, None if size == "-" else size] = Target(bound, float(value))
    return targets


TARGETS = _parse(_TABLE)


def target(family: Family, row: str, nbytes: int | None = None) -> Target | None:
    """The target of a row (for the size ``nbytes``, where it depends on it), or None."""
    size = None
    if nbytes is not None:
        size = "small" if nbytes < MiB else "memory" if nbytes >= 32 * MiB else "cache"
    return TARGETS.get((family, row, size)) or TARGETS.get((family, row, None))


def judge(
    family: Family, row: str, measured: float | None, nbytes: int | None = None, bound: bool = False
) -> Row:
    """The ``target`` and ``met`` keys of a measured row or ratio (``bound``: that key too)."""
    found = target(family, row, nbytes)
    if found is None:
        return {"target": None, "met": None}
    verdict = {"target": found.value, "met": found.met(measured)}
    return {**verdict, "bound": found.bound} if bound else verdict


def verdict(entry: Row) -> str:
    """``">= 0.80 met"``, ``"... MISSED"`` or ``"... n/a"``; ``""`` without a target."""
    if entry["target"] is None:
        return ""
    met = "n/a" if entry["met"] is None else "met" if entry["met"] else "MISSED"
    return f"{entry.get('bound', '>=')} {entry['target']:.2f} {met}"


def targets_line(missed: int, judged: int) -> str:
    """The line under every table: whose targets these are, and how many were missed."""
    outcome = f"all {judged} met" if not missed else f"{missed} of {judged} MISSED in this run"
    return (
        f"targets: the project's own goals for each ratio (docs/performance.md; "
        f"fixedutf32/bench/_report.py), {outcome}; a miss does not change the exit "
        "status unless --strict is given"
    )


def requests_total(counts: Mapping[str, int]) -> int:
    """Every request counted (the most in flight is not a request)."""
    return sum(counts[kind] for kind in ("get", "range_get", "set", "delete", "other"))


def _scaling(value: float | None) -> str:
    """A speed-up, or why it is not shown."""
    return "n/a (withheld, see the warning)" if value is None else f"{value:.2f}x"


def _number(value: float | None, width: int, digits: int = 2) -> str:
    """``value`` in ``width`` columns, or n/a."""
    return f"{'n/a':>{width}}" if value is None else f"{value:{width}.{digits}f}"


def _ratio_lines(ratios: list[Row]) -> list[str]:
    """The ratios with their verdicts, under a heading."""
    width = max([46, *(len(ratio["ratio"]) for ratio in ratios)])
    lines = [f"{'ratio':{width}} {'value':>6}  target", "-" * (width + 24)]
    lines += [f"{r['ratio']:{width}} {_number(r['value'], 6)}  {verdict(r)}" for r in ratios]
    return [line.rstrip() for line in lines]


def format_table(report: Row) -> str:
    """The kernel and transcoding report as the text table ``fixedutf32 bench`` prints."""
    lines = [
        f"fixedutf32 bench: SIMD level {report['simd_level']}, "
        f"{report['native_byteorder']}-endian host; "
        f"text of {WIDTH}-code-point elements, mostly ASCII",
        "",
        "GB/s of the chunk read (repad: written); ratios to numpy.copyto of as many bytes, to",
        "the floor named (memcpy when none is) and to the NumPy way, timed in the same run",
        "",
        f"{'kernel':36} {'size':>7} {'GB/s':>7} {'x memcpy':>9} {'x floor':>8} {'x NumPy':>8}"
        "  target (floor)",
        "-" * 104,
    ]
    for row in report["rows"]:
        floor = f" ({row['floor']})" if row["floor"] != "memcpy" else ""
        lines.append(
            f"{row['kernel']:36} {format_size(row['size']):>7} {row['gbps']:7.2f} "
            f"{row['ratio_memcpy']:9.2f} {row['ratio_floor']:8.2f} {row['ratio_numpy']:8.1f}"
            f"  {verdict(row)}{floor}".rstrip()
        )
    overhead = ", ".join(f"{name} {us:.2f} us" for name, us in report["overhead_us"].items())
    lines += ["", f"call overhead (one-element chunk): {overhead}"]
    if report.get("calls"):
        lines += [
            "",
            f"{'call (us per chunk)':36} {'size':>7} {'us':>7} {'baseline':>24} {'us':>7} "
            f"{'ratio':>6}  target",
        ]
        lines += [
            f"{call['call']:36} {format_size(call['size']):>7} {call['us']:7.3f} "
            f"{call['baseline']:>24} {call['baseline_us']:7.3f} {call['ratio']:6.3f}  "
            f"{verdict(call)}".rstrip()
            for call in report["calls"]
        ]
        lines.append("C API rows: ctypes' own cost (a call on an empty chunk) taken off")
    if t := report["threads"]:
        lines.append(
            f"{t['threads']} threads on {format_size(t['size'])} chunks: decode_chunk "
            f"{_scaling(t['scaling'])} the throughput of one (GIL released); numpy.copyto "
            f"{t['memcpy_scaling']:.2f}x, measured alongside"
        )
    return "\n".join(lines + [f"note: {note}" for note in report.get("notes", [])])


def mismatches(zarr_report: Row) -> list[tuple[str, str]]:
    """(case, configuration) pairs of a ``--zarr`` report that read back other data."""
    rows = [(row["case"], row["same_data"]) for row in zarr_report["rows"]]
    latency = zarr_report.get("latency", [])
    rows += [(f"{r['profile']} latency, {r['case']}", r["same_data"]) for r in latency]
    return [(case, name) for case, same in rows for name, s in same.items() if s is False]


def _latency_lines(rows: list[Row]) -> list[str]:
    """The latency rows: seconds and requests (all / byte ranges / most in flight) per pipeline."""
    if not rows:
        return []
    first = rows[0]
    shards = next((row["shard_chunks"] for row in rows if row["shard_chunks"]), None)
    names = [n for n in ("stock", "fused", "pipeline") if any(r["seconds"][n] for r in rows)]
    lines = [
        "",
        f"Through a store with {first['latency_ms']:g} ms a request around a LocalStore: "
        f"{first['chunks']} chunks of {format_size(first['chunk_size'])}"
        + (f" ({shards} a shard when sharded)" if shards else "")
        + "; async as S3, sync as NFS;",
        "seconds: the best round; requests: all / byte ranges / the most in flight at once.",
        "",
        f"{'latency row':28} " + " ".join(f"{n + ' s':>10} {n + ' requests':>18}" for n in names),
        "-" * (28 + 30 * len(names)),
    ]
    for row in rows:
        cells = []
        for name in names:
            c = row["requests"][name]
            counted = (
                "n/a" if c is None else f"{requests_total(c)}/{c['range_get']}/{c['in_flight']}"
            )
            cells += [_number(row["seconds"][name], 10, 3), f"{counted:>18}"]
        lines.append(f"{row['profile'] + ', ' + row['case']:28} " + " ".join(cells))
    return lines


def format_zarr_table(report: Row) -> str:
    """The ``--zarr`` report as the text table ``fixedutf32 bench --zarr`` prints."""
    configs = list(report["rows"][0]["gbps"]) if report["rows"] else []
    threads = {None: "zarr's defaults", 1: "1 thread", 2: "2 threads"}
    size = format_size(report["size"])
    where = f"a {size} {report['dtype']} array on a local directory"
    if report.get("array"):
        where = f"{report['array']} ({size} of {report['dtype']})"
    lines = [f"fixedutf32 bench --zarr: zarr-python {report['zarr_version']}, {where}"]
    if report["rows"]:
        lines += [
            "",
            f"GB/s of array data, median of {report['repeat']} rounds, configurations in turn "
            "(docs/performance.md): stock, fused =",
            "zarr's pipelines; codec, pipeline = with fixedutf32.zarr; pooled = the pipeline "
            "with its PooledNDBuffer; reader = fixedutf32's reader; floor = the files read plainly",
            "",
            f"{'case':26} {'layout':14} " + " ".join(f"{n:>8}" for n in configs) + "   threads",
            "-" * (44 + 9 * len(configs) + 18),
        ]
        if not report["integration"]:
            lines.insert(-2, "fixedutf32.zarr is not installed: its columns are n/a")
    for row in report["rows"]:
        layout = f"{format_size(row['chunk_size'])} chunks"
        if row.get("shard_size"):
            layout = f"{format_size(row['shard_size'])}/{format_size(row['chunk_size'])}"
        cells = " ".join(_number(row["gbps"][name], 8) for name in configs)
        lines.append(f"{row['case']:26} {layout:14} {cells}   {threads.get(row['threads'])}")
    lines += [*_latency_lines(report.get("latency", [])), "", *_ratio_lines(report["ratios"]), ""]
    lines += [f"note: {note}" for note in report.get("notes", [])]
    t = report["threads_reference"]
    lines.append(
        f"{t['threads']} threads on {format_size(t['size'])} chunks, measured after the rows: "
        f"decode_chunk {_scaling(t['decode_chunk_scaling'])} one thread, numpy.copyto "
        f"{t['memcpy_scaling']:.2f}x (the machine's own limit on scaling)"
    )
    found = ", ".join(f"{case}: {name}" for case, name in mismatches(report))
    same = "every configuration read back (or wrote) the same data, checked once each"
    lines.append(f"DIFFERENT DATA read back by: {found}" if found else same)
    return "\n".join(lines)


def format_store_table(report: Row) -> str:
    """The ``--store`` report as the table ``fixedutf32 bench --store`` prints (Markdown rows)."""
    size = report["size"]
    lines = [
        f"fixedutf32 bench --store: {format_size(size)} of fixed_length_utf32 chunks "
        f"({format_size(report['chunk_size'])} each), {report['threads']} threads, best of "
        f"{report['repeat']}",
        "",
        f"| {'row':<32} | {'seconds':>8} | {'MiB/s':>8} |",
        f"|{'-' * 34}|{'-' * 9}:|{'-' * 9}:|",
    ]
    for row in report["rows"]:
        lines.append(
            f"| {row['row']:<32} | {row['seconds']:8.3f} | {size / MiB / row['seconds']:8.0f} |"
        )
    lines += ["", *_ratio_lines(report["ratios"]), ""]
    if report["check_ok"]:
        lines.append("check found both stores clean, checked once each outside the timing")
    else:
        lines.append("CHECK FOUND PROBLEMS in the stores written: the rows time a failing check")
    return "\n".join(lines)


# The reference machine's memcpy GB/s at 64 MiB, and each family's (fixed seconds, seconds
# per MiB of --sizes/--zarr-size/--store-size, default --repeat) on it.
_REFERENCE_COPY_GBPS = 15.0
_SECONDS = {"kernels": (5.5, 0.21, 9), "zarr": (20.0, 1.2, 9), "store": (5.0, 0.08, 3)}


def copy_gbps() -> float:
    """This machine's ``numpy.copyto`` speed over 64 MiB, in GB/s (best of 3, about 20 ms)."""
    return gbps(64 * MiB, best_time(memcpy(64 * MiB), 3))


def estimate_seconds(family: str, sizes: Iterable[int], repeat: int, gbps: float) -> float:
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
    """One progress display for a run: a tqdm bar on a terminal, else a line per step."""

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


def withhold_impossible(ratios: Iterable[Row]) -> list[str]:
    """Blank (in place) every "N threads / 1 thread" ratio that cannot be real; the warnings."""
    warnings = []
    for ratio in ratios:
        found = re.search(r"(\d+) threads / 1 thread", ratio["ratio"])
        warning = found and speedup_warning(ratio["ratio"], ratio["value"], int(found.group(1)))
        if warning:
            ratio["value"], ratio["met"] = None, None
            warnings.append(warning)
    return warnings
