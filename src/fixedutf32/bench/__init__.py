"""Throughput of fixedutf32 as ratios to baselines measured side by side: ``fixedutf32 bench``.

``fixedutf32 bench`` (also ``python -m fixedutf32 bench`` and ``python -m fixedutf32.bench``)
runs :func:`main`: by default every kernel and the UTF-8 transcoding against memcpy and the
NumPy way; ``--zarr``: zarr-python with and without ``fixedutf32.zarr`` (``--zarr PATH_OR_URL``:
on your own array); ``--store``: ``fixedutf32 check`` and ``convert`` of a whole store.  Each
figure that matters is a ratio of timings taken in turn in the same run (docs/performance.md).
"""

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .. import get_simd_level
from . import _kernels, _report, _store, _zarr
from ._report import Row, format_table
from ._store import stores
from ._zarr import CASES as ZARR_CASES
from ._zarr import arrays as zarr_arrays
from ._zarr import configurations as zarr_configurations
from .cases import NATIVE, WIDTH, KiB, MiB, Progress, parse_size, quiet, sample_chunk

# The pytest-benchmark groups in benchmarks/ use the zarr arrays and cases, and the stores.
__all__ = [
    "run",
    "format_table",
    "main",
    "sample_chunk",
    "ZARR_CASES",
    "zarr_arrays",
    "zarr_configurations",
    "stores",
]

DEFAULT_SIZES = (1 * MiB, 64 * MiB)


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    threads: int = 2,
    repeat: int = 9,
    progress: Progress | None = None,
) -> Row:
    """The report of ``fixedutf32 bench``: the kernels and the transcoding at each chunk size of
    ``sizes``, the call overhead and call rows, and decode_chunk on ``threads`` threads (1: not)."""
    if any(size < 4 * WIDTH for size in sizes):
        raise ValueError(
            f"sizes: expected at least {4 * WIDTH} bytes each (one element), got {list(sizes)}"
        )
    say = progress or quiet
    rows: list[Row] = []
    left_out: list[str] = []
    for nbytes in sizes:
        rows += _kernels.measure(nbytes, repeat=repeat, progress=say)
        for row in _kernels.measure_transcode(nbytes, repeat, progress=say):
            kernel = row["kernel"].split(" (")[0]
            if row["baseline"] is not None:
                rows.append(row)
            elif kernel not in left_out:
                left_out.append(kernel)
    say("call overhead")
    overhead = _kernels.measure_overhead()
    say("batched calls and the C API")
    calls = [*_kernels.measure_batches(), *_kernels.measure_c_api(), _kernels.measure_arrow_check()]
    say("64 KiB chunks")
    small = ("validate", "decode swap -> new", "encode -> swapped")
    rows += [r for r in _kernels.measure(64 * KiB, repeat=max(repeat, 51)) if r["kernel"] in small]
    scaling: Row = {}
    if threads > 1:
        say(f"{threads} threads")
        decode, copy = _kernels.measure_threads(MiB, threads)
        scaling = {"threads": threads, "size": MiB, "scaling": decode, "memcpy_scaling": copy}
    return {
        "simd_level": get_simd_level(),
        "native_byteorder": NATIVE,
        "rows": rows,
        "overhead_us": overhead,
        "calls": calls,
        "threads": scaling,
        "notes": _kernels.missing_baseline_notes(left_out),
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fixedutf32 bench",
        description="Measure fixedutf32 against memcpy, NumPy and zarr-python, side by side "
        "(docs/performance.md).",
    )
    add = parser.add_argument
    add("--sizes", default="1MiB,64MiB", help="comma-separated chunk sizes (default: %(default)s)")
    add("--threads", type=int, default=2, help="threads of the scaling test and of --store (2)")
    add("--repeat", type=int, help="timed rounds per row (default: 9; --store: 3, best of them)")
    add("--json", action="store_true", help="print the results as JSON")
    add("--strict", action="store_true", help="exit 3 when a row or ratio misses its target")
    family = parser.add_mutually_exclusive_group()
    family.add_argument(
        "--zarr",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH_OR_URL",
        help="instead, zarr-python reads and writes with and without fixedutf32.zarr; "
        "given the path or URL of a fixed_length_utf32 (or V2 U) array, its reads",
    )
    family.add_argument("--store", action="store_true", help="instead, check and convert a store")
    add("--storage-options", metavar="JSON", help="fsspec options for --zarr URL (a JSON object)")
    add("--zarr-size", default="256MiB", help="bytes of the --zarr array (default: 256MiB)")
    add("--zarr-rows", choices=("all", "local", "latency"), default="all", help="--zarr's rows")
    add("--latency-ms", type=float, default=20.0, help="ms a request of the latency rows (20)")
    add("--store-size", default="256MiB", help="bytes of chunk data for --store (256MiB)")
    add("--dir", help="where --zarr and --store write their temporary stores")
    return parser


def _sizes(parser: argparse.ArgumentParser, option: str, text: str, example: str) -> list[int]:
    """The sizes of ``option`` (comma-separated), each of one element at least; else exit 2."""
    try:
        sizes = [parse_size(part) for part in text.split(",") if part.strip()]
    except ValueError:
        parser.error(f"{option}: cannot read {text!r}; use e.g. {example}")
    if not sizes or any(size < 4 * WIDTH for size in sizes):
        parser.error(f"{option}: every size must be at least {4 * WIDTH} bytes")
    return sizes


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``fixedutf32 bench`` with the arguments ``argv`` (default: ``sys.argv[1:]``).

    One line on stderr says how long the run should take, then one progress display covers
    every step; the table (or ``--json``) goes to stdout, then the targets met and missed, a
    warning for each reason the figures cannot be trusted, and the total time.  The exit
    status: 0; 1 when ``--zarr`` read back different data or ``--store``'s check found
    problems; 2 on a usage error, after one line; 3 with ``--strict`` when a target is missed.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    sizes = _sizes(parser, "--sizes", args.sizes, "64KiB,1MiB,64MiB")
    (zarr_size,) = _sizes(parser, "--zarr-size", args.zarr_size, "8MiB or 256MiB")
    (store_size,) = _sizes(parser, "--store-size", args.store_size, "8MiB or 256MiB")
    if args.threads < 1 or (args.repeat is not None and args.repeat < 1):
        parser.error("--threads and --repeat must be at least 1")
    if not 0 <= args.latency_ms <= 10_000:
        parser.error(f"--latency-ms: expected 0 to 10000 milliseconds, got {args.latency_ms:g}")
    if args.dir is not None and not os.path.isdir(args.dir):
        parser.error(f"--dir: expected an existing directory, got {args.dir!r}")
    user = None
    if args.zarr or args.store:
        try:
            _zarr.require()
        except ImportError as error:
            parser.error(str(error))
    if isinstance(args.zarr, str):
        try:
            user = _zarr.open_user_array(args.zarr, args.storage_options)
        except (ValueError, OSError) as error:  # one line: what is wrong with the array
            parser.exit(2, f"fixedutf32 bench: error: --zarr: {error}\n")
    family = "zarr" if args.zarr else "store" if args.store else "kernels"
    repeat = args.repeat or {"zarr": 9, "store": 3, "kernels": 9}[family]
    measured = {"zarr": [zarr_size], "store": [store_size], "kernels": sizes}[family]
    if user is not None or (family == "zarr" and args.zarr_rows == "latency"):
        measured = []
    estimate = _report.estimate_seconds(family, measured, repeat, _report.copy_gbps())
    if family == "zarr" and user is None and args.zarr_rows != "local":
        estimate += _zarr.latency_seconds(args.latency_ms / 1000, min(repeat, 5))
    sys.stderr.write(
        f"fixedutf32 bench{'' if family == 'kernels' else ' --' + family}: "
        f"{_report.format_duration(estimate)} on this machine (longer when it is busy)\n"
    )
    loads = [_report.load_average()]
    steps = _report.Steps(estimate)
    try:
        if user is not None:
            report = _zarr.run_user_array(user, repeat, steps)
        elif args.zarr:
            latency = args.latency_ms / 1000
            report = _zarr.run(zarr_size, repeat, steps, args.dir, args.zarr_rows, latency)
        elif args.store:
            report = _store.run(store_size, args.threads, repeat, steps, args.dir)
        else:
            report = run(sizes, threads=args.threads, repeat=repeat, progress=steps)
    finally:
        seconds = steps.close()
    verdicts: list[Row] = report["rows" if family == "kernels" else "ratios"]
    warnings = [] if family == "kernels" else _report.withhold_impossible(verdicts)
    # a speed-up of decode_chunk on threads: (where, its key), withheld if impossible
    scaled = (report["threads_reference"], "decode_chunk_scaling") if args.zarr else None
    if family == "kernels" and report["threads"]:
        scaled = (report["threads"], "scaling")
    if scaled is not None:
        where, key = scaled
        name = f"decode_chunk on {where['threads']} threads"
        warning = _report.speedup_warning(name, where[key], where["threads"])
        if warning:
            warnings.append(warning)
            where[key] = None
    loads.append(_report.load_average())
    warnings[:0] = [w for w in [_report.load_warning(loads)] if w]
    missed = [entry for entry in verdicts if entry.get("met") is False]
    if args.json:
        print(json.dumps({**report, "seconds": seconds, "warnings": warnings}, indent=2))
    else:
        table = {"zarr": _report.format_zarr_table, "store": _report.format_store_table}
        print(table.get(family, format_table)(report))
        print()
        judged = [entry for entry in verdicts if entry.get("met") is not None]
        print(_report.targets_line(len(missed), len(judged)))
        for warning in warnings:
            print(f"WARNING: {warning}")
        print(f"took {seconds:.0f} s")
    status = 0
    if args.zarr:
        status = 1 if _report.mismatches(report) else 0
    elif args.store:
        status = 0 if report["check_ok"] else 1
    return 3 if args.strict and missed and status == 0 else status
