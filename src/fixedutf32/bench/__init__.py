"""Throughput of fixedutf32 as ratios to baselines measured side by side: ``fixedutf32 bench``.

``fixedutf32 bench`` (also ``python -m fixedutf32 bench`` and
``python -m fixedutf32.bench``) runs :func:`main`:

- by default, every kernel and the UTF-8 transcoding against ``numpy.copyto``
  of as many bytes (memcpy) and the NumPy way of doing the same job;
- ``--zarr``: zarr-python reads and writes with and without
  ``fixedutf32.zarr``, on a local directory and through a store with a
  latency per request (``--zarr-rows``, ``--latency-ms``);
- ``--store``: ``fixedutf32 check`` and ``convert`` of a whole store against
  reading its chunk files and compressing its bytes.

Machines are shared and noisy, so absolute speeds drift; each figure that
matters is a ratio between timings taken alternately in the same run.

Layout: ``_timing`` (timing and sizes), ``cases`` (the generated text and
the calls measured, shared with the pytest-benchmark groups in
``benchmarks/``), one module per family of rows (``_kernels``,
``_transcode``, ``_zarr``, ``_store``), ``_targets`` (the targets of every
row) and ``_report`` (tables and JSON).
"""

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from .. import get_simd_level
from . import _calls, _kernels, _report, _session, _store, _transcode, _zarr
from ._report import BenchReport
from ._store import stores
from ._targets import Verdict
from ._timing import KiB, MiB, Progress, parse_size
from ._zarr import CASES as ZARR_CASES
from ._zarr import arrays as zarr_arrays
from ._zarr import configurations as zarr_configurations
from ._zarr import read_array, read_floor
from .cases import NATIVE, WIDTH, sample_chunk, sample_units

# The pytest-benchmark groups in benchmarks/ use the cases module, the zarr
# arrays and cases, and the stores; the zarr bench's two readers are public too.
__all__ = [
    "run",
    "format_table",
    "main",
    "sample_units",
    "sample_chunk",
    "ZARR_CASES",
    "zarr_arrays",
    "zarr_configurations",
    "read_array",
    "read_floor",
    "stores",
]

DEFAULT_SIZES = (1 * MiB, 64 * MiB)
format_table = _report.format_table


def run(
    sizes: Sequence[int] = DEFAULT_SIZES,
    threads: int = 2,
    repeat: int = 9,
    progress: Progress | None = None,
) -> BenchReport:
    """Measure the kernels and the transcoding at each chunk size (``fixedutf32 bench``).

    Parameters
    ----------
    sizes : sequence of int
        Chunk sizes in bytes, each at least one 64-byte element.
    threads : int
        Threads for the scaling test of ``decode_chunk``; 1 skips it.
    repeat : int
        Alternating timings per round of a row (5 rounds per kernel row).
    progress : callable, optional
        Called with a short message before each step.

    Returns
    -------
    dict
        ``simd_level``, ``native_byteorder``; ``rows``: ``kernel``, ``size``,
        ``gbps``, ``memcpy_gbps``, ``ratio_memcpy``, ``floor`` and
        ``ratio_floor`` (what the target is judged on), ``ratio_numpy``,
        ``target`` and ``met`` each (transcoding rows add ``baseline``);
        ``overhead_us``: microseconds per call on a one-element chunk;
        ``calls``: ``call``, ``baseline``, ``size``, ``us`` and
        ``baseline_us`` (microseconds per chunk), ``ratio`` (of the two),
        ``target`` and ``met``: a 4 KiB chunk in a batch
        (``decode_chunks``) against a call per chunk, and ``validate``
        through the C API (estimated through ctypes) against Python;
        ``threads``: the scaling on ``threads`` threads (empty for 1);
        ``notes``: a transcoding row whose NumPy-side baseline needs a package
        that is not installed (numcodecs for the vlen-utf8 rows) is left out,
        and a note says so.  A new dict; nothing is kept.

    Raises
    ------
    ValueError
        If a size is smaller than one element.

    Examples
    --------
    >>> report = run([64 * 1024], threads=1, repeat=1)
    >>> report["rows"][0]["kernel"], report["rows"][0]["target"]
    ('validate', 0.5)
    >>> print(format_table(report).splitlines()[0])
    fixedutf32 bench: SIMD level ..., ...-endian host; text of 16-code-point elements, mostly ASCII
    """
    if any(size < 4 * WIDTH for size in sizes):
        raise ValueError(
            f"sizes: expected at least {4 * WIDTH} bytes each (one element), got {list(sizes)}"
        )
    report: BenchReport = {
        "simd_level": get_simd_level(),
        "native_byteorder": NATIVE,
        "rows": [],
        "overhead_us": {},
        "calls": [],
        "threads": {},
        "notes": [],
    }
    left_out: list[str] = []
    for nbytes in sizes:
        report["rows"].extend(_kernels.measure(nbytes, repeat=repeat, progress=progress))
        for row in _transcode.measure(nbytes, repeat, progress=progress):
            kernel = row["kernel"].split(" (")[0]
            if row["baseline"] is not None:
                report["rows"].append(row)
            elif kernel not in left_out:
                left_out.append(kernel)
    report["notes"] = _transcode.missing_baseline_notes(left_out)
    if progress:
        progress("call overhead")
    report["overhead_us"] = _kernels.measure_overhead()
    if progress:
        progress("batched calls and the C API")
    report["calls"] = [
        *_calls.measure_batches(),
        *_calls.measure_c_api(),
        _calls.measure_arrow_check(),
    ]
    if progress:
        progress("64 KiB chunks")
    report["rows"].extend(
        row
        for row in _kernels.measure(64 * KiB, repeat=max(repeat, 51), progress=None)
        if row["kernel"] in ("validate", "decode swap -> new", "encode -> swapped")
    )
    if threads > 1:
        if progress:
            progress(f"{threads} threads")
        scaling, copy_scaling = _kernels.measure_threads(MiB, threads)
        report["threads"] = {
            "threads": threads,
            "size": MiB,
            "scaling": scaling,
            "memcpy_scaling": copy_scaling,
        }
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fixedutf32 bench",
        description="Measure every fixedutf32 kernel against memcpy and NumPy, side by side.",
    )
    parser.add_argument(
        "--sizes", default="1MiB,64MiB", help="comma-separated chunk sizes (default: 1MiB,64MiB)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="threads for the scaling test, and of --store's threaded rows (default: 2; "
        "1 skips the scaling test)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="timed repetitions per row (default: 9; --store: 3, best of them)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 3 when a row or ratio misses its target (default: report "
        "misses, exit 0)",
    )
    family = parser.add_mutually_exclusive_group()
    family.add_argument(
        "--zarr",
        action="store_true",
        help="instead, measure zarr-python reads and writes with and without fixedutf32.zarr",
    )
    family.add_argument(
        "--store",
        action="store_true",
        help="instead, measure fixedutf32 check and convert of a whole local store against "
        "reading its chunk files and zstd-compressing its bytes",
    )
    parser.add_argument(
        "--zarr-size",
        default="256MiB",
        help="bytes of the array for --zarr (default: 256MiB, in 1 MiB chunks)",
    )
    parser.add_argument(
        "--zarr-rows",
        choices=("all", "local", "latency"),
        default="all",
        help="--zarr's rows: on a local directory, through a store with a latency per "
        "request (as S3 and NFS), or all (default)",
    )
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=20.0,
        help="milliseconds each request of --zarr's latency rows waits (default: 20)",
    )
    parser.add_argument(
        "--store-size",
        default="256MiB",
        help="bytes of chunk data for --store (default: 256MiB, in 2 MiB chunks)",
    )
    parser.add_argument(
        "--dir",
        default=None,
        help="where --zarr and --store write their temporary stores (default: the system's "
        "temporary directory)",
    )
    return parser


def _size_option(
    parser: argparse.ArgumentParser, args: argparse.Namespace, option: str, example: str
) -> int:
    text: str = getattr(args, option.lstrip("-").replace("-", "_"))
    try:
        size = parse_size(text)
    except ValueError:
        parser.error(f"{option}: cannot read {text!r}; use e.g. {example}")
    if size < 4 * WIDTH:
        parser.error(f"{option}: must be at least {4 * WIDTH} bytes")
    return size


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``fixedutf32 bench`` with the command-line arguments ``argv``; the exit status.

    Before it starts, one line on stderr says how long the run should take;
    then one progress display (a tqdm bar where tqdm is installed and stderr
    is a terminal) covers every step.  The table (or ``--json``) goes to
    stdout, followed by a line on the targets met and missed, a warning for
    each reason the figures cannot be trusted (a load average above the
    cores, a speed-up on threads that the cores cannot give: such a figure is
    withheld, shown as n/a) and the total time.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``bench`` (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0; 1 when ``--zarr`` read back different data or ``--store``'s
        check found problems in the stores it wrote; 3 with ``--strict``
        when a row or ratio missed its target (and nothing else failed).

    Raises
    ------
    SystemExit
        With status 2 on a usage error (an unreadable size, a missing
        zarr-python for ``--zarr``/``--store``), after one line on stderr.

    Examples
    --------
    >>> main(["--sizes", "lots"])
    Traceback (most recent call last):
    SystemExit: 2
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        sizes = [parse_size(text) for text in args.sizes.split(",") if text.strip()]
    except ValueError:
        parser.error(f"--sizes: cannot read {args.sizes!r}; use e.g. 64KiB,1MiB,64MiB")
    if not sizes or any(size < 4 * WIDTH for size in sizes):
        parser.error(f"--sizes: every size must be at least {4 * WIDTH} bytes")
    if args.threads < 1 or (args.repeat is not None and args.repeat < 1):
        parser.error("--threads and --repeat must be at least 1")
    zarr_size = _size_option(parser, args, "--zarr-size", "8MiB or 256MiB")
    store_size = _size_option(parser, args, "--store-size", "8MiB or 256MiB")
    if not 0 <= args.latency_ms <= 10_000:
        parser.error(f"--latency-ms: expected 0 to 10000 milliseconds, got {args.latency_ms:g}")
    if args.dir is not None and not os.path.isdir(args.dir):
        parser.error(f"--dir: expected an existing directory, got {args.dir!r}")

    if args.zarr or args.store:
        try:
            _zarr.require()
        except ImportError as error:
            parser.error(str(error))
    family: _session.Family = "zarr" if args.zarr else "store" if args.store else "kernels"
    repeat = args.repeat or {"zarr": 9, "store": 3, "kernels": 9}[family]
    measured = {"zarr": [zarr_size], "store": [store_size], "kernels": sizes}[family]
    if family == "zarr" and args.zarr_rows == "latency":
        measured = []
    estimate = _session.estimate_seconds(family, measured, repeat, _session.copy_gbps())
    if family == "zarr" and args.zarr_rows != "local":
        estimate += _zarr.latency_seconds(args.latency_ms / 1000, min(repeat, 5))
    sys.stderr.write(
        f"fixedutf32 bench{'' if family == 'kernels' else ' --' + family}: "
        f"{_session.format_duration(estimate)} on this machine (longer when it is busy)\n"
    )
    loads = [_session.load_average()]
    steps = _session.Steps(estimate)
    report: Mapping[str, object]
    table: Callable[[], str]
    verdicts: Sequence[Verdict]
    warnings: list[str] = []
    try:
        if args.zarr:
            zarr_report = _zarr.run(
                zarr_size,
                repeat=repeat,
                progress=steps,
                directory=args.dir,
                rows=args.zarr_rows,
                latency=args.latency_ms / 1000,
            )
            status = 1 if _report.mismatches(zarr_report) else 0
            warnings += _session.withhold_impossible(zarr_report["ratios"])
            reference = zarr_report["threads_reference"]
            warning = _session.speedup_warning(
                "decode_chunk on 2 threads", reference["decode_chunk_scaling"], 2
            )
            if warning:
                warnings.append(warning)
                reference["decode_chunk_scaling"] = None
            verdicts = zarr_report["ratios"]
            report, table = zarr_report, partial(_report.format_zarr_table, zarr_report)
        elif args.store:
            store_report = _store.run(
                store_size, threads=args.threads, repeat=repeat, progress=steps, directory=args.dir
            )
            status = 0 if store_report["check_ok"] else 1
            warnings += _session.withhold_impossible(store_report["ratios"])
            verdicts = store_report["ratios"]
            report, table = store_report, partial(_report.format_store_table, store_report)
        else:
            bench_report = run(sizes, threads=args.threads, repeat=repeat, progress=steps)
            scaling = bench_report["threads"]
            if scaling:
                warning = _session.speedup_warning(
                    f"decode_chunk on {scaling['threads']} threads",
                    scaling["scaling"],
                    scaling["threads"],
                )
                if warning:
                    warnings.append(warning)
                    scaling["scaling"] = None
            status, verdicts = 0, bench_report["rows"]
            report, table = bench_report, partial(format_table, bench_report)
    finally:
        seconds = steps.close()
    loads.append(_session.load_average())
    load_warning = _session.load_warning(loads)
    if load_warning:
        warnings.insert(0, load_warning)
    missed = _session.missed(verdicts)
    if args.json:
        print(_report.to_json({**report, "seconds": seconds, "warnings": warnings}))
    else:
        print(table())
        print()
        print(_report.targets_line(len(missed), len(_session.judged(verdicts))))
        for warning in warnings:
            print(f"WARNING: {warning}")
        print(f"took {seconds:.0f} s")
    if args.strict and missed and status == 0:
        return 3
    return status
