"""The bench's reports (what ``--json`` prints; one TypedDict per report and row) and tables."""

import json
from collections.abc import Iterable, Mapping
from typing import Literal, TypedDict

from ._targets import Ratio, Verdict
from ._timing import MiB, format_size
from .cases import WIDTH


class KernelRow(Verdict):
    """A kernel row: GB/s of the bytes counted, ratios to memcpy, the named floor and NumPy."""

    kernel: str
    size: int
    gbps: float
    memcpy_gbps: float
    ratio_memcpy: float
    floor: str
    ratio_floor: float  # what the target judges
    ratio_numpy: float


class TranscodeRow(KernelRow):
    """A transcoding row: a kernel row naming the NumPy or pyarrow way compared with."""

    baseline: str | None


class ThreadScaling(TypedDict, total=False):
    """decode_chunk and numpy.copyto on ``threads`` threads over one (every key, or none)."""

    threads: int
    size: int
    scaling: float | None  # None: withheld, impossible on this machine's cores
    memcpy_scaling: float


class CallRow(Verdict):
    """Microseconds per chunk of ``call`` and of ``baseline``, and their ratio."""

    call: str
    baseline: str
    size: int
    us: float
    baseline_us: float
    ratio: float


class BenchReport(TypedDict):
    """The report of ``fixedutf32 bench``."""

    simd_level: str
    native_byteorder: str
    rows: list[KernelRow]  # the transcoding rows are TranscodeRow
    overhead_us: dict[str, float]
    calls: list[CallRow]
    threads: ThreadScaling
    notes: list[str]


class ZarrRow(TypedDict):
    """A case of ``--zarr``: GB/s and data check per configuration (None: n/a)."""

    case: str
    endian: Literal["little", "big"]
    codec: str  # "raw", "zstd"; for a user's array its codecs, e.g. "zstd" or "sharded gzip"
    threads: int | None
    size: int
    chunk_size: int
    shard_size: int | None
    gbps: dict[str, float | None]
    same_data: dict[str, bool | None]


# The classes zarr picked for a configuration, as "module.qualname".
Selected = TypedDict("Selected", {"bytes codec": str, "pipeline": str})


class ZarrThreads(TypedDict):
    """The ``--zarr`` reference: decode_chunk and numpy.copyto on two threads."""

    threads: int
    size: int
    decode_chunk_scaling: float | None  # None: withheld, impossible on this machine's cores
    memcpy_scaling: float


class RequestCounts(TypedDict):
    """Requests a store served by kind, and the most in flight at once."""

    get: int
    range_get: int
    set: int
    delete: int
    other: int  # exists
    in_flight: int


def requests_total(counts: RequestCounts) -> int:
    """Every request counted (the most in flight is not a request)."""
    return sum(counts[kind] for kind in ("get", "range_get", "set", "delete", "other"))


class LatencyRow(TypedDict):
    """A latency row of ``--zarr``: best seconds, requests and data check per pipeline."""

    profile: Literal["async", "sync"]
    case: str
    latency_ms: float
    chunks: int
    chunk_size: int
    shard_chunks: int | None
    seconds: dict[str, float | None]
    requests: dict[str, RequestCounts | None]
    same_data: dict[str, bool | None]


class ZarrReport(TypedDict):
    """The report of ``fixedutf32 bench --zarr`` (``array``: the user's array, or None)."""

    zarr_version: str
    integration: bool
    selected: dict[str, Selected]
    native_byteorder: str
    dtype: str
    size: int
    chunk_size: int
    repeat: int
    rows: list[ZarrRow]
    latency: list[LatencyRow]
    ratios: list[Ratio]
    threads_reference: ZarrThreads
    array: str | None
    notes: list[str]


class StoreRow(TypedDict):
    """A row of ``--store``: the best time, and GB/s of chunk data."""

    row: str
    seconds: float
    gbps: float


class StoreReport(TypedDict):
    """The report of ``fixedutf32 bench --store``."""

    size: int
    chunk_size: int
    threads: int
    repeat: int
    check_ok: bool
    rows: list[StoreRow]
    ratios: list[Ratio]


def to_json(report: Mapping[str, object]) -> str:
    """The report as indented JSON (what ``--json`` prints)."""
    return json.dumps(report, indent=2)


def targets_line(missed: int, judged: int) -> str:
    """The line under every table: whose targets these are, and how many were missed."""
    outcome = f"all {judged} met" if not missed else f"{missed} of {judged} MISSED in this run"
    return (
        f"targets: the project's own goals for each ratio (docs/performance.md; "
        f"fixedutf32/bench/_targets.py), {outcome}; a miss does not change the exit "
        "status unless --strict is given"
    )


def _scaling(value: float | None) -> str:
    return "n/a (withheld, see the warning)" if value is None else f"{value:.2f}x"


def _number(value: float | None, width: int, digits: int = 2) -> str:
    return f"{'n/a':>{width}}" if value is None else f"{value:{width}.{digits}f}"


def verdict(entry: Verdict) -> str:
    """``">= 0.80 met"``, ``"... MISSED"`` or ``"... n/a"``; ``""`` without a target."""
    if entry["target"] is None:
        return ""
    met = "n/a" if entry["met"] is None else "met" if entry["met"] else "MISSED"
    return f"{entry.get('bound', '>=')} {entry['target']:.2f} {met}"


def format_table(report: BenchReport) -> str:
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
    if report["threads"]:
        t = report["threads"]
        lines.append(
            f"{t['threads']} threads on {format_size(t['size'])} chunks: decode_chunk "
            f"{_scaling(t['scaling'])} the throughput of one (GIL released); numpy.copyto "
            f"{t['memcpy_scaling']:.2f}x, measured alongside"
        )
    lines.extend(f"note: {note}" for note in report.get("notes", []))
    return "\n".join(lines)


def _ratio_lines(ratios: Iterable[Ratio]) -> list[str]:
    ratios = list(ratios)
    width = max([46, *(len(ratio["ratio"]) for ratio in ratios)])
    lines = [f"{'ratio':{width}} {'value':>6}  target", "-" * (width + 24)]
    for ratio in ratios:
        lines.append(f"{ratio['ratio']:{width}} {_number(ratio['value'], 6)}  {verdict(ratio)}")
    return [line.rstrip() for line in lines]


def mismatches(zarr_report: ZarrReport) -> list[tuple[str, str]]:
    """(case, configuration) pairs of a ``--zarr`` report that read back other data."""
    latency = zarr_report.get("latency", [])
    rows = [(row["case"], row["same_data"]) for row in zarr_report["rows"]]
    rows += [(f"{r['profile']} latency, {r['case']}", r["same_data"]) for r in latency]
    return [(case, name) for case, same in rows for name, s in same.items() if s is False]


def _latency_lines(rows: list[LatencyRow]) -> list[str]:
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
            counts = row["requests"][name]
            counted = "n/a"
            if counts is not None:
                counted = f"{requests_total(counts)}/{counts['range_get']}/{counts['in_flight']}"
            cells += [_number(row["seconds"][name], 10, 3), f"{counted:>18}"]
        lines.append(f"{row['profile'] + ', ' + row['case']:28} " + " ".join(cells))
    return lines


def format_zarr_table(report: ZarrReport) -> str:
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
            "zarr's pipelines; codec, pipeline = with fixedutf32.zarr; reader = fixedutf32's "
            "reader; floor = the files read plainly",
            "",
            f"{'case':26} {'layout':14} " + " ".join(f"{n:>8}" for n in configs) + "   threads",
            "-" * (44 + 9 * len(configs) + 18),
        ]
        if not report["integration"]:
            lines.insert(-2, "fixedutf32.zarr is not installed: its columns are n/a")
    for row in report["rows"]:
        layout = f"{format_size(row['chunk_size'])} chunks"
        if row.get("shard_size"):
            layout = f"{format_size(row['shard_size'] or 0)}/{format_size(row['chunk_size'])}"
        cells = " ".join(_number(row["gbps"][name], 8) for name in configs)
        lines.append(f"{row['case']:26} {layout:14} {cells}   {threads.get(row['threads'])}")
    lines += _latency_lines(report.get("latency", []))
    lines += ["", *_ratio_lines(report["ratios"]), ""]
    lines.extend(f"note: {note}" for note in report.get("notes", []))
    t = report["threads_reference"]
    lines.append(
        f"{t['threads']} threads on {format_size(t['size'])} chunks, measured after the rows: "
        f"decode_chunk {_scaling(t['decode_chunk_scaling'])} one thread, numpy.copyto "
        f"{t['memcpy_scaling']:.2f}x (the machine's own limit on scaling)"
    )
    mismatched = mismatches(report)
    if mismatched:
        found = ", ".join(f"{case}: {name}" for case, name in mismatched)
        lines.append(f"DIFFERENT DATA read back by: {found}")
    else:
        lines.append("every configuration read back (or wrote) the same data, checked once each")
    return "\n".join(lines)


def format_store_table(report: StoreReport) -> str:
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
        mibs = size / MiB / row["seconds"]
        lines.append(f"| {row['row']:<32} | {row['seconds']:8.3f} | {mibs:8.0f} |")
    lines += ["", *_ratio_lines(report["ratios"]), ""]
    if report["check_ok"]:
        lines.append("check found both stores clean, checked once each outside the timing")
    else:
        lines.append("CHECK FOUND PROBLEMS in the stores written: the rows time a failing check")
    return "\n".join(lines)
