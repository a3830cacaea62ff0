"""The bench's reports: their shapes, and their text tables or JSON, each target met or MISSED.

Each report is a dict (what ``--json`` prints); the ``TypedDict`` classes here
give its keys, one class per report and per kind of row.
"""

import json
from collections.abc import Iterable, Mapping
from typing import Literal, TypedDict

from ._targets import Ratio, Verdict
from ._timing import MiB, format_size
from .cases import WIDTH


class KernelRow(Verdict):
    """A kernel row of ``fixedutf32 bench``: GB/s of the bytes counted, ratios to the baselines.

    ``floor`` names what the row's floor does (``"memcpy"``, ``"read"``, ...;
    see ``cases.Case``) and ``ratio_floor`` is the ratio the target is judged on.
    """

    kernel: str
    size: int
    gbps: float
    memcpy_gbps: float
    ratio_memcpy: float
    floor: str
    ratio_floor: float
    ratio_numpy: float


class TranscodeRow(KernelRow):
    """A transcoding row: a kernel row naming the NumPy or pyarrow way compared with."""

    baseline: str | None


class ThreadScaling(TypedDict, total=False):
    """``decode_chunk`` and ``numpy.copyto`` on ``threads`` threads, over one thread.

    Every key, or none (a run on one thread measures no scaling).
    """

    threads: int
    size: int
    scaling: float | None  # None: withheld, impossible on this machine's cores
    memcpy_scaling: float


class CallRow(Verdict):
    """A call row: microseconds per chunk of ``call`` and of ``baseline``, and their ratio."""

    call: str
    baseline: str
    size: int
    us: float
    baseline_us: float
    ratio: float


class BenchReport(TypedDict):
    """The report of ``fixedutf32 bench``: kernel and transcoding rows, call overhead, threads."""

    simd_level: str
    native_byteorder: str
    rows: list[KernelRow]  # the transcoding rows are TranscodeRow
    overhead_us: dict[str, float]
    calls: list[CallRow]
    threads: ThreadScaling
    notes: list[str]


class ZarrRow(TypedDict):
    """A case of ``fixedutf32 bench --zarr``; GB/s and data check per configuration (None: n/a)."""

    case: str
    endian: Literal["little", "big"]
    codec: Literal["raw", "zstd"]
    threads: int | None
    size: int
    chunk_size: int
    shard_size: int | None
    gbps: dict[str, float | None]
    same_data: dict[str, bool | None]


# The classes zarr picked for a configuration, as "module.qualname".
Selected = TypedDict("Selected", {"bytes codec": str, "pipeline": str})


class ZarrThreads(TypedDict):
    """The ``--zarr`` reference: ``decode_chunk`` and ``numpy.copyto`` on two threads."""

    threads: int
    size: int
    decode_chunk_scaling: float | None  # None: withheld, impossible on this machine's cores
    memcpy_scaling: float


class RequestCounts(TypedDict):
    """The requests a store served: whole values read, byte ranges read, writes, deletes,
    other (``exists``), and the most in flight at once."""

    get: int
    range_get: int
    set: int
    delete: int
    other: int
    in_flight: int


def requests_total(counts: RequestCounts) -> int:
    """Every request counted (the most in flight is not a request)."""
    return counts["get"] + counts["range_get"] + counts["set"] + counts["delete"] + counts["other"]


class LatencyRow(TypedDict):
    """A ``--zarr`` row through a store with a latency per request (``_latency``): best
    seconds, requests and data check per configuration (None: n/a)."""

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
    """The report of ``fixedutf32 bench --zarr``."""

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


class StoreRow(TypedDict):
    """A row of ``fixedutf32 bench --store``: the best time, and GB/s of chunk data."""

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


def verdict(entry: Verdict) -> str:
    """``">= 0.80 met"``, ``"... MISSED"`` or ``"... n/a"`` for a row or ratio with a target.

    ``""`` for one without.
    """
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
        "size and GB/s count the bytes of the chunk read (repad: written); x memcpy is the",
        "ratio to numpy.copyto of as many bytes, x floor to the least memory traffic of the job",
        "done by NumPy on the same bytes (the floor named; memcpy when none is), x NumPy to the",
        "NumPy way, all timed in the same run; targets are ratios to the floor",
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
    lines.append("")
    lines.append(
        "call overhead (one-element chunk): "
        + ", ".join(f"{name} {us:.2f} us" for name, us in report["overhead_us"].items())
    )
    if report.get("calls"):
        lines.append("")
        lines.append(
            f"{'call (us per chunk)':36} {'size':>7} {'us':>7} {'baseline':>24} {'us':>7} "
            f"{'ratio':>6}  target"
        )
        for call in report["calls"]:
            lines.append(
                f"{call['call']:36} {format_size(call['size']):>7} {call['us']:7.3f} "
                f"{call['baseline']:>24} {call['baseline_us']:7.3f} {call['ratio']:6.3f}  "
                f"{verdict(call)}".rstrip()
            )
        lines.append(
            "C API rows: ctypes' own cost (a call on an empty chunk) taken off; "
            "a compiled caller pays about that"
        )
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
        value = "n/a" if ratio["value"] is None else f"{ratio['value']:.2f}"
        lines.append(f"{ratio['ratio']:{width}} {value:>6}  {verdict(ratio)}".rstrip())
    return lines


def mismatches(zarr_report: ZarrReport) -> list[tuple[str, str]]:
    """(case, configuration) pairs of a ``--zarr`` report that read back other data."""
    found = [
        (row["case"], name)
        for row in zarr_report["rows"]
        for name, same in row["same_data"].items()
        if same is False
    ]
    return found + [
        (f"{row['profile']} latency, {row['case']}", name)
        for row in zarr_report.get("latency", [])
        for name, same in row["same_data"].items()
        if same is False
    ]


_PIPELINES = ("stock", "fused", "pipeline")


def _latency_lines(rows: list[LatencyRow]) -> list[str]:
    """The latency rows as table lines: seconds and requests per configuration."""
    if not rows:
        return []
    first = rows[0]
    shards = next((row["shard_chunks"] for row in rows if row["shard_chunks"]), None)
    names = [name for name in _PIPELINES if any(row["seconds"][name] for row in rows)]
    lines = [
        f"Through a store with {first['latency_ms']:g} ms a request around a LocalStore: "
        f"{first['chunks']} chunks of {format_size(first['chunk_size'])}"
        + (f" ({shards} a shard when sharded)" if shards else "")
        + ";",
        "async = each request awaits asyncio.sleep, no synchronous IO (as S3); sync = each "
        "request blocks its",
        "thread with time.sleep, synchronous IO (as a LocalStore on NFS).  Seconds: the best of "
        "the rounds;",
        "requests: all of them / byte ranges among them / the most in flight at once.",
        "",
        f"{'latency row':28} "
        + " ".join(f"{name + ' s':>10} {name + ' requests':>18}" for name in names),
        "-" * (28 + 30 * len(names)),
    ]
    for row in rows:
        cells = []
        for name in names:
            seconds, counts = row["seconds"][name], row["requests"][name]
            cells.append(f"{'n/a' if seconds is None else f'{seconds:.3f}':>10}")
            counted = (
                "n/a"
                if counts is None
                else f"{requests_total(counts)}/{counts['range_get']}/{counts['in_flight']}"
            )
            cells.append(f"{counted:>18}")
        lines.append(f"{row['profile'] + ', ' + row['case']:28} " + " ".join(cells))
    return lines


def format_zarr_table(report: ZarrReport) -> str:
    """The ``--zarr`` report as the text table ``fixedutf32 bench --zarr`` prints."""
    configs = list(report["rows"][0]["gbps"]) if report["rows"] else []
    threads = {None: "zarr's defaults", 1: "1 thread", 2: "2 threads"}
    where = (
        f"a {format_size(report['size'])} {report['dtype']} array on a local directory"
        if report["rows"]
        else "the latency rows alone"
    )
    lines = [
        f"fixedutf32 bench --zarr: zarr-python {report['zarr_version']}, {where}",
        "",
        f"GB/s of array data, median of {report['repeat']} rounds, each configuration timed in "
        "turn within a round.",
        "stock = zarr's BatchedCodecPipeline; fused = zarr's FusedCodecPipeline (zarr >= 3.4);",
        "codec = zarr + fixedutf32.zarr.BytesCodec; pipeline = zarr + "
        "fixedutf32.zarr.CodecPipeline and its codec;",
        "reader = the standalone reader with decode_chunk(out=...); floor = the same files read "
        "(or written)",
        "plainly into (from) one array, zstd decompressed (compressed) in place, on the "
        "pipeline's threads:",
        "raw reads the faster each round of readinto straight into place and a read through "
        "a buffer; selections",
        "read only their elements' bytes; writes a new file renamed over the old, as zarr's "
        "LocalStore writes.",
        "The 1- and 2-thread rows set async.concurrency and the pipelines' max_workers. A "
        "ratio is the median",
        "over rounds of that round's ratio; fastest zarr = the faster of stock and fused in "
        "each round.",
        "",
        f"{'case':26} {'layout':14} " + " ".join(f"{name:>8}" for name in configs) + "   threads",
        "-" * (44 + 9 * len(configs) + 18),
    ]
    if not report["integration"]:
        lines.insert(-2, "fixedutf32.zarr is not installed: its columns are n/a")
        lines.insert(-2, "")
    for row in report["rows"]:
        cells = [
            f"{'n/a':>8}" if row["gbps"][name] is None else f"{row['gbps'][name]:8.2f}"
            for name in configs
        ]
        layout = f"{format_size(row['chunk_size'])} chunks"
        shard_size = row.get("shard_size")
        if shard_size:
            layout = f"{format_size(shard_size)}/{format_size(row['chunk_size'])}"
        lines.append(
            f"{row['case']:26} {layout:14} " + " ".join(cells) + f"   {threads[row['threads']]}"
        )
    if not report["rows"]:  # the latency rows alone: no header of the local rows
        lines = lines[:1]
    latency = _latency_lines(report.get("latency", []))
    if latency:
        lines += ["", *latency]
    lines += ["", *_ratio_lines(report["ratios"])]
    t = report["threads_reference"]
    lines.append("")
    lines.append(
        f"{t['threads']} threads on {format_size(t['size'])} chunks, measured after the rows: "
        "decode_chunk "
        f"{_scaling(t['decode_chunk_scaling'])} one thread, numpy.copyto "
        f"{t['memcpy_scaling']:.2f}x "
        "(the machine's own limit on scaling)"
    )
    mismatched = mismatches(report)
    if mismatched:
        lines.append(
            "DIFFERENT DATA read back by: "
            + ", ".join(f"{case}: {name}" for case, name in mismatched)
        )
    else:
        lines.append(
            "every configuration read back (or wrote) the same data, checked once each outside "
            "the timing"
        )
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
        lines.append(
            f"| {row['row']:<32} | {row['seconds']:8.3f} | {size / MiB / row['seconds']:8.0f} |"
        )
    lines += ["", *_ratio_lines(report["ratios"]), ""]
    if report["check_ok"]:
        lines.append("check found both stores clean, checked once each outside the timing")
    else:
        lines.append("CHECK FOUND PROBLEMS in the stores written: the rows time a failing check")
    return "\n".join(lines)
