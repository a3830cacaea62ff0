"""Kernel rows of ``fixedutf32 bench``: each kernel as a ratio to memcpy and to NumPy.

Each ratio is taken between timings made alternately in the same run: the
kernel, and ``numpy.copyto`` of the same number of bytes into a preallocated
array (the physical limit for anything that writes its output), or the NumPy
way of doing the same job.
"""

import statistics
import threading
import time
from collections.abc import Callable

import numpy as np

from ..chunk import decode_chunk, encode_chunk, validate
from ._report import KernelRow
from ._targets import judge
from ._timing import MiB, Progress, Timed, alternate, format_size, gbps, median_time, memcpy
from .cases import FOREIGN, NATIVE, WIDTH, kernel_cases, sample_chunk


def measure(
    nbytes: int,
    repeat: int = 9,
    rounds: int = 5,
    numpy_repeat: int = 3,
    progress: Progress | None = None,
) -> list[KernelRow]:
    """Measure every kernel on one chunk size; a list of row dicts.

    Each row runs ``rounds`` rounds of ``repeat`` alternating timings of the
    kernel and of memcpy; the ratio of each round's medians is taken, and the
    median of those ratios reported, so that a burst of load from elsewhere
    on a shared machine moves no figure much.
    """
    rows: list[KernelRow] = []
    cases = kernel_cases(nbytes)
    for index, (name, counted, kernel, numpy_way, prepare) in enumerate(cases):
        if progress:
            progress(f"{name} @ {format_size(nbytes)} ({index + 1}/{len(cases)})")
        baseline = memcpy(counted)
        ratios: list[float] = []
        kernel_times: list[float] = []
        for _ in range(rounds):
            kernel_time, memcpy_time = alternate(kernel, baseline, repeat, prepare)
            ratios.append(memcpy_time / kernel_time)
            kernel_times.append(kernel_time)
        kernel_time = statistics.median(kernel_times)
        ratio = statistics.median(ratios)
        numpy_time = median_time(
            lambda: (prepare() if prepare else None, numpy_way()), numpy_repeat
        )
        if prepare is not None:
            numpy_time -= median_time(prepare, numpy_repeat)
        rows.append(
            {
                "kernel": name,
                "size": nbytes,
                "gbps": gbps(counted, kernel_time),
                "memcpy_gbps": gbps(counted, kernel_time) * ratio,
                "ratio_memcpy": ratio,
                "ratio_numpy": numpy_time / kernel_time,
                **judge("kernel", name, ratio, nbytes),
            }
        )
    return rows


def measure_overhead(repeat: int = 20000) -> dict[str, float]:
    """Microseconds per call on a one-element chunk, beyond the kernel's own work."""
    little = sample_chunk(4 * WIDTH, NATIVE)
    foreign = sample_chunk(4 * WIDTH, FOREIGN)
    array = np.frombuffer(little, f"=U{WIDTH}")
    calls: dict[str, Timed] = {
        "validate": lambda: validate(little, 4 * WIDTH, endian=NATIVE),
        "decode_chunk (swap)": lambda: decode_chunk(foreign, 4 * WIDTH, endian=FOREIGN),
        "encode_chunk (swap)": lambda: encode_chunk(array, endian=FOREIGN),
    }
    result: dict[str, float] = {}
    for name, call in calls.items():
        call()
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        result[name] = (time.perf_counter() - start) / repeat * 1e6
    return result


def measure_threads(nbytes: int, threads: int, repeat: int = 15) -> tuple[float, float]:
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
    copies = [memcpy(nbytes) for _ in range(threads)]
    count = max(1, int(256 * MiB // nbytes))  # runs of a few ms: thread start-up is noise

    def decode(i: int) -> None:
        for _ in range(count):
            decode_chunk(chunks[i], 4 * WIDTH, endian=FOREIGN)

    def copy(i: int) -> None:
        for _ in range(count):
            copies[i]()

    def throughput(work: Callable[[int], None], n: int) -> float:
        pool = [threading.Thread(target=work, args=(i,)) for i in range(n)]
        start = time.perf_counter()
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        return n / (time.perf_counter() - start)

    throughput(decode, 1)
    decode_scaling: list[float] = []
    copy_scaling: list[float] = []
    for _ in range(repeat):
        decode_scaling.append(throughput(decode, threads) / throughput(decode, 1))
        copy_scaling.append(throughput(copy, threads) / throughput(copy, 1))
    return statistics.median(decode_scaling), statistics.median(copy_scaling)
