"""Throughput of every kernel as a ratio to memcpy, measured side by side.

``fixedutf32 bench`` (or ``python -m fixedutf32 bench``) runs this.  Machines
are shared and noisy, so absolute speeds drift; each figure that matters is a
ratio between two timings taken alternately in the same run: the kernel, and
``numpy.copyto`` of the same number of bytes into a preallocated array (the
physical limit for anything that writes its output), or the NumPy way of doing
the same job.
"""

import argparse
import importlib.util
import json
import statistics
import sys
import threading
import time

import numpy as np

from . import _kernels
from .chunk import decode_chunk, encode_chunk, repad, str_lengths, validate

__all__ = ["sample_units", "sample_chunk", "run", "main"]

KiB = 1024
MiB = 1024 * KiB
DEFAULT_SIZES = (1 * MiB, 64 * MiB)
WIDTH = 16  # code points per element (64 bytes), as in the targets
NATIVE = sys.byteorder
FOREIGN = "big" if NATIVE == "little" else "little"

# Targets from the performance issue: (kernel, size class) -> least ratio to memcpy.
TARGETS = {
    ("validate", "cache"): 1.2,
    ("validate", "memory"): 1.0,
    ("decode swap -> new", "cache"): 0.85,
    ("decode swap -> new", "memory"): 0.8,
    ("decode swap in place", "cache"): 0.85,
    ("decode swap in place", "memory"): 0.7,
    ("encode -> swapped", "cache"): 0.85,
    ("encode -> swapped", "memory"): 0.8,
    ("repad widen U8->U16", "cache"): 0.8,
    ("repad widen U8->U16", "memory"): 1.0,
    ("repad narrow U16->U8", "cache"): 0.8,
    ("repad narrow U16->U8", "memory"): 1.0,
    ("str_lengths", "cache"): 0.8,
    ("str_lengths", "memory"): 0.8,
    # Per-call overhead of at most 2 us keeps 64 KiB chunks above 0.5x.
    ("validate", "small"): 0.5,
    ("decode swap -> new", "small"): 0.5,
    ("encode -> swapped", "small"): 0.5,
}


def sample_units(n_elements, width=WIDTH, *, max_length=None, seed=0):
    """Code units of generated text: mostly ASCII, some Cyrillic, CJK and emoji.

    Parameters
    ----------
    n_elements, width : int
        Number of strings and code points per element.
    max_length : int, optional
        Longest string (default ``width``); the rest is U+0000 padding.
    seed : int
        Seed of the random generator, for repeatable data.

    Returns
    -------
    numpy.ndarray
        New ``uint32`` array of shape ``(n_elements, width)``.
    """
    rng = np.random.default_rng(seed)
    max_length = width if max_length is None else max_length
    shape = (n_elements, width)
    units = rng.integers(0x20, 0x7F, size=shape, dtype=np.uint32)
    pick = rng.random(shape)
    units = np.where(pick < 0.06, rng.integers(0x410, 0x450, size=shape, dtype=np.uint32), units)
    units = np.where(pick > 0.96, rng.integers(0x4E00, 0x9FA5, size=shape, dtype=np.uint32), units)
    units = np.where(pick > 0.99, rng.integers(0x1F600, 0x1F650, size=shape, dtype=np.uint32), units)
    lengths = rng.integers(max(max_length // 2, 0), max_length + 1, size=n_elements)
    units[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return units


def sample_chunk(nbytes, endian, width=WIDTH, *, max_length=None, seed=0):
    """Bytes of a chunk of generated text, ``nbytes`` rounded down to whole elements."""
    units = sample_units(max(nbytes // (4 * width), 1), width, max_length=max_length, seed=seed)
    return units.astype("<u4" if endian == "little" else ">u4").tobytes()


def _median_time(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _alternate(kernel, baseline, repeat, prepare=None):
    """Median times of kernel and baseline, timed one after the other."""
    kernel_times, baseline_times = [], []
    if prepare is not None:
        prepare()
    kernel()
    baseline()  # warm up: page in buffers, fill the pool
    for _ in range(repeat):
        if prepare is not None:
            prepare()
        start = time.perf_counter()
        kernel()
        kernel_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        baseline()
        baseline_times.append(time.perf_counter() - start)
    return statistics.median(kernel_times), statistics.median(baseline_times)


def _size_class(nbytes):
    if nbytes < MiB:
        return "small"
    return "memory" if nbytes >= 32 * MiB else "cache"


def _cases(nbytes):
    """(kernel name, bytes counted, kernel call, NumPy call, prepare) for one size."""
    little = sample_chunk(nbytes, NATIVE)
    n_elements = len(little) // (4 * WIDTH)
    foreign = np.frombuffer(little, f"=U{WIDTH}").astype(f"{'>' if FOREIGN == 'big' else '<'}U{WIDTH}").tobytes()
    native_array = np.frombuffer(little, f"=U{WIDTH}")
    pristine = np.frombuffer(foreign, np.uint8)
    in_place = pristine.copy()
    narrow = np.frombuffer(sample_chunk(nbytes // 2, NATIVE, 8, seed=1), "=U8")
    narrow_bytes = narrow.tobytes()
    # Repad rows count output bytes: narrowing to `nbytes` reads twice that.
    fits = np.frombuffer(sample_chunk(2 * nbytes, NATIVE, WIDTH, max_length=8, seed=2), f"=U{WIDTH}")
    fits_bytes = fits.tobytes()
    foreign_prefix = ">" if FOREIGN == "big" else "<"

    def restore():
        np.copyto(in_place, pristine)

    def numpy_validate():
        units = np.frombuffer(little, np.uint32)
        return bool(((units <= 0x10FFFF) & ((units ^ 0xD800) >= 0x800)).all())

    size = len(little)
    return [
        ("validate", size, lambda: validate(little, 4 * WIDTH, endian=NATIVE), numpy_validate, None),
        ("decode native (no copy)", size, lambda: decode_chunk(little, 4 * WIDTH, endian=NATIVE),
         lambda: np.frombuffer(little, f"=U{WIDTH}").copy(), None),
        ("decode swap -> new", size, lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN),
         lambda: np.frombuffer(foreign, f"{foreign_prefix}U{WIDTH}").astype(f"=U{WIDTH}"), None),
        ("decode swap -> new, validate=False", size,
         lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN, validate=False),
         lambda: np.frombuffer(foreign, f"{foreign_prefix}U{WIDTH}").astype(f"=U{WIDTH}"), None),
        ("decode swap in place", size, lambda: decode_chunk(in_place, 4 * WIDTH, endian=FOREIGN, out=in_place),
         lambda: in_place.view(np.uint32).byteswap(inplace=True), restore),
        ("encode -> swapped", size, lambda: encode_chunk(native_array, endian=FOREIGN),
         lambda: native_array.astype(f"{foreign_prefix}U{WIDTH}"), None),
        ("encode -> swapped, validate=False", size,
         lambda: encode_chunk(native_array, endian=FOREIGN, validate=False),
         lambda: native_array.astype(f"{foreign_prefix}U{WIDTH}"), None),
        ("repad widen U8->U16", 2 * len(narrow_bytes), lambda: repad(narrow_bytes, 32, 64, endian=NATIVE),
         lambda: narrow.astype(f"=U{WIDTH}"), None),
        ("repad narrow U16->U8", len(fits_bytes) // 2, lambda: repad(fits_bytes, 64, 32, endian=NATIVE),
         lambda: fits.astype("=U8"), None),
        ("str_lengths", size, lambda: str_lengths(little, 4 * WIDTH, endian=NATIVE),
         lambda: np.strings.str_len(native_array), None),
    ], n_elements


def measure(nbytes, repeat=9, rounds=5, numpy_repeat=3, progress=None):
    """Measure every kernel on one chunk size; a list of row dicts.

    Each row runs ``rounds`` rounds of ``repeat`` alternating timings of the
    kernel and of memcpy; the ratio of each round's medians is taken, and the
    median of those ratios reported, so that a burst of load from elsewhere
    on a shared machine moves no figure much.
    """
    rows = []
    cases, _ = _cases(nbytes)
    for index, (name, counted, kernel, numpy_way, prepare) in enumerate(cases):
        if progress:
            progress(f"{name} @ {_format_size(nbytes)} ({index + 1}/{len(cases)})")
        source = np.full(counted, 7, np.uint8)
        target = np.empty(counted, np.uint8)
        ratios, kernel_times = [], []
        for _ in range(rounds):
            kernel_time, memcpy_time = _alternate(kernel, lambda: np.copyto(target, source), repeat, prepare)
            ratios.append(memcpy_time / kernel_time)
            kernel_times.append(kernel_time)
        kernel_time = statistics.median(kernel_times)
        ratio = statistics.median(ratios)
        numpy_time = _median_time(lambda: (prepare() if prepare else None, numpy_way()), numpy_repeat)
        if prepare is not None:
            numpy_time -= _median_time(prepare, numpy_repeat)
        target_ratio = TARGETS.get((name, _size_class(nbytes)))
        rows.append({
            "kernel": name,
            "size": nbytes,
            "gbps": counted / kernel_time / 1e9,
            "memcpy_gbps": counted / kernel_time * ratio / 1e9,
            "ratio_memcpy": ratio,
            "ratio_numpy": numpy_time / kernel_time,
            "target": target_ratio,
            "met": None if target_ratio is None else ratio >= target_ratio,
        })
    return rows


def measure_overhead(repeat=20000):
    """Microseconds per call on a one-element chunk, beyond the kernel's own work."""
    little = sample_chunk(4 * WIDTH, NATIVE)
    foreign = sample_chunk(4 * WIDTH, FOREIGN)
    array = np.frombuffer(little, f"=U{WIDTH}")
    calls = {
        "validate": lambda: validate(little, 4 * WIDTH, endian=NATIVE),
        "decode_chunk (swap)": lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN),
        "encode_chunk (swap)": lambda: encode_chunk(array, endian=FOREIGN),
    }
    result = {}
    for name, call in calls.items():
        call()
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        result[name] = (time.perf_counter() - start) / repeat * 1e6
    return result


def measure_threads(nbytes, threads, repeat=15):
    """Throughput of ``threads`` threads over one thread's, for decode_chunk and for memcpy.

    Each thread decodes its own chunks of ``nbytes``.  ``numpy.copyto``
    (which also releases the GIL) runs the same way, interleaved, as the
    machine's own reference: on a shared virtual machine the second core is
    not always there, and the copy shows when it is not.

    Returns
    -------
    tuple of float
        Median scaling of decode_chunk, and of numpy.copyto.
    """
    chunks = [sample_chunk(nbytes, FOREIGN, seed=seed) for seed in range(threads)]
    sources = [np.full(nbytes, 7, np.uint8) for _ in range(threads)]
    targets = [np.empty(nbytes, np.uint8) for _ in range(threads)]
    count = max(1, int(256 * MiB // nbytes))  # runs of a few ms: thread start-up is noise

    def decode(i):
        for _ in range(count):
            decode_chunk(chunks[i], 4 * WIDTH, endian=FOREIGN)

    def copy(i):
        for _ in range(count):
            np.copyto(targets[i], sources[i])

    def throughput(work, n):
        pool = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        start = time.perf_counter()
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        return n / (time.perf_counter() - start)

    throughput(decode, 1)
    decode_scaling, copy_scaling = [], []
    for _ in range(repeat):
        decode_scaling.append(throughput(decode, threads) / throughput(decode, 1))
        copy_scaling.append(throughput(copy, threads) / throughput(copy, 1))
    return statistics.median(decode_scaling), statistics.median(copy_scaling)


def _format_size(nbytes):
    if nbytes >= MiB and nbytes % MiB == 0:
        return f"{nbytes // MiB} MiB"
    if nbytes >= KiB and nbytes % KiB == 0:
        return f"{nbytes // KiB} KiB"
    return f"{nbytes} B"


def _parse_size(text):
    text = text.strip().lower().replace(" ", "")
    for suffix, factor in (("gib", 1024 * MiB), ("mib", MiB), ("kib", KiB), ("g", 1024 * MiB),
                           ("m", MiB), ("k", KiB), ("b", 1)):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


def run(sizes=DEFAULT_SIZES, threads=2, repeat=9, progress=None):
    """Run the whole benchmark, every ratio measured side by side in this run.

    Parameters
    ----------
    sizes : sequence of int
        Chunk sizes in bytes, each measured for every kernel.
    threads : int
        Threads for the scaling measurement; 1 skips it.
    repeat : int
        Timed repetitions per row.
    progress : callable, optional
        Called with a short text before each group of measurements.

    Returns
    -------
    dict
        ``simd_level``, ``native_byteorder``, ``rows`` (one dict per kernel and
        size: ``kernel``, ``size``, ``gbps``, ``ratio_memcpy``,
        ``ratio_numpy``, ``target``, ``met``, ...), ``overhead_us``,
        ``threads`` and ``notes``. A transcoding row whose NumPy-side
        baseline needs a package that is not installed (numcodecs for the
        vlen-utf8 rows) is left out, and ``notes`` says so. Nothing is
        shared with the caller.

    Raises
    ------
    MemoryError
        If a chunk of one of ``sizes`` cannot be allocated.

    Examples
    --------
    >>> report = run([64 * 1024], threads=1, repeat=1)
    >>> report["rows"][0]["kernel"], report["rows"][0]["ratio_memcpy"] > 0
    ('validate', True)
    """
    report = {
        "simd_level": _kernels.get_simd_level(),
        "native_byteorder": NATIVE,
        "rows": [],
        "overhead_us": {},
        "threads": {},
        "notes": [],
    }
    from ._bench_transcode import transcode_bench_rows

    left_out = []
    for nbytes in sizes:
        report["rows"].extend(measure(nbytes, repeat=repeat, progress=progress))
        if progress:
            progress(f"UTF-8 transcoding @ {_format_size(nbytes)}")
        for row in transcode_bench_rows(nbytes, repeat):
            if row["baseline"] is not None:
                report["rows"].append(row)
            elif row["kernel"].split(" (")[0] not in left_out:
                left_out.append(row["kernel"].split(" (")[0])
    report["notes"] = _optional_baseline_notes(left_out)
    if progress:
        progress("call overhead")
    report["overhead_us"] = measure_overhead()
    if progress:
        progress("64 KiB chunks")
    report["rows"].extend(
        row for row in measure(64 * KiB, repeat=max(repeat, 51), progress=None)
        if row["kernel"] in ("validate", "decode swap -> new", "encode -> swapped")
    )
    if threads > 1:
        if progress:
            progress(f"{threads} threads")
        scaling, copy_scaling = measure_threads(MiB, threads)
        report["threads"] = {"threads": threads, "size": MiB, "scaling": scaling,
                             "memcpy_scaling": copy_scaling}
    return report


def _optional_baseline_notes(left_out):
    """Notes on rows left out or compared differently for want of an optional package."""
    missing = [name for name in ("pyarrow", "numcodecs") if importlib.util.find_spec(name) is None]
    notes = []
    if left_out:
        why = f"not installed: {', '.join(missing)}" if missing else "NumPy has no StringDType before 2.0"
        notes.append(f"left out for want of a NumPy-side baseline ({why}): {', '.join(left_out)}")
    if "pyarrow" in missing:
        notes.append("to_utf8 x NumPy compares with NumPy's StringDType cast only (pyarrow is not installed)")
    return notes


def format_table(report):
    lines = [
        f"fixedutf32 bench: SIMD level {report['simd_level']}, {report['native_byteorder']}-endian host; "
        f"text of {WIDTH}-code-point elements, mostly ASCII",
        "",
        "size and GB/s count the bytes of the chunk read (repad: written); x memcpy is the",
        "ratio to numpy.copyto of as many bytes, x NumPy to the NumPy way, timed in the same run",
        "",
        f"{'kernel':36} {'size':>7} {'GB/s':>7} {'x memcpy':>9} {'x NumPy':>8}  target",
        "-" * 82,
    ]
    for row in report["rows"]:
        target = ""
        if row["target"] is not None:
            target = f">= {row['target']:.2f} {'met' if row['met'] else 'MISSED'}"
        lines.append(
            f"{row['kernel']:36} {_format_size(row['size']):>7} {row['gbps']:7.2f} "
            f"{row['ratio_memcpy']:9.2f} {row['ratio_numpy']:8.1f}  {target}"
        )
    lines.append("")
    lines.append("call overhead (one-element chunk): " + ", ".join(
        f"{name} {us:.2f} us" for name, us in report["overhead_us"].items()))
    if report["threads"]:
        t = report["threads"]
        lines.append(f"{t['threads']} threads on {_format_size(t['size'])} chunks: decode_chunk "
                     f"{t['scaling']:.2f}x the throughput of one (GIL released); numpy.copyto "
                     f"{t['memcpy_scaling']:.2f}x, measured alongside")
    lines.extend(f"note: {note}" for note in report.get("notes", []))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="fixedutf32 bench",
        description="Measure every fixedutf32 kernel against memcpy and NumPy, side by side.",
    )
    parser.add_argument("--sizes", default="1MiB,64MiB",
                        help="comma-separated chunk sizes (default: 1MiB,64MiB)")
    parser.add_argument("--threads", type=int, default=2,
                        help="threads for the scaling test (default: 2; 1 skips it)")
    parser.add_argument("--repeat", type=int, default=9, help="timed repetitions per row (default: 9)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--zarr", action="store_true",
                        help="instead, measure zarr-python reads and writes with and without fixedutf32.zarr")
    parser.add_argument("--zarr-size", default="256MiB",
                        help="bytes of the array for --zarr (default: 256MiB, in 1 MiB chunks)")
    args = parser.parse_args(argv)
    try:
        sizes = [_parse_size(text) for text in args.sizes.split(",") if text.strip()]
    except ValueError:
        parser.error(f"--sizes: cannot read {args.sizes!r}; use e.g. 64KiB,1MiB,64MiB")
    if not sizes or any(size < 4 * WIDTH for size in sizes):
        parser.error(f"--sizes: every size must be at least {4 * WIDTH} bytes")
    if args.threads < 1 or args.repeat < 1:
        parser.error("--threads and --repeat must be at least 1")
    try:
        zarr_size = _parse_size(args.zarr_size)
    except ValueError:
        parser.error(f"--zarr-size: cannot read {args.zarr_size!r}; use e.g. 8MiB or 256MiB")
    if zarr_size < 4 * WIDTH:
        parser.error(f"--zarr-size: must be at least {4 * WIDTH} bytes")

    interactive = sys.stderr.isatty()

    def progress(message):
        if interactive:
            sys.stderr.write(f"\r\x1b[Kmeasuring {message}")
        else:
            sys.stderr.write(f"measuring {message}\n")
        sys.stderr.flush()

    if args.zarr:
        from . import bench_zarr

        try:
            bench_zarr.require()
        except ImportError as error:
            parser.error(str(error))
        report = bench_zarr.run(zarr_size, repeat=args.repeat, progress=progress)
        status = 1 if bench_zarr.mismatches(report) else 0
        table = bench_zarr.format_table
    else:
        report = run(sizes, threads=args.threads, repeat=args.repeat, progress=progress)
        status, table = 0, format_table
    if interactive:
        sys.stderr.write("\r\x1b[K")
    print(json.dumps(report, indent=2) if args.json else table(report))
    return status
