"""Kernel rows of ``fixedutf32 bench``: each kernel as a ratio to its floor, to memcpy and to NumPy.

Each ratio is taken between timings made alternately in the same run: the
kernel, and ``numpy.copyto`` of the same number of bytes into a preallocated
array (the physical limit for anything that reads its input and writes as
many bytes), the row's floor (the least memory traffic its job needs, on the
same bytes: a read for a kernel that only reads, see ``cases.Case``), or the
NumPy way of doing the same job.  The targets are ratios to the floor.
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
    kernel and of memcpy (and of the row's floor, when that is not memcpy);
    the ratio of each round's medians is taken, and the median of those
    ratios reported, so that a burst of load from elsewhere on a shared
    machine moves no figure much.  The target is judged on the ratio to the
    floor.
    """
    rows: list[KernelRow] = []
    cases = kernel_cases(nbytes)
    for index, case in enumerate(cases):
        if progress:
            progress(f"{case.name} @ {format_size(nbytes)} ({index + 1}/{len(cases)})")
        baseline = memcpy(case.nbytes)
        ratios: list[float] = []
        floor_ratios: list[float] = []
        kernel_times: list[float] = []
        for _ in range(rounds):
            kernel_time, memcpy_time = alternate(case.kernel, baseline, repeat, case.prepare)
            ratios.append(memcpy_time / kernel_time)
            kernel_times.append(kernel_time)
            if case.floor is not None:
                kernel_time, floor_time = alternate(case.kernel, case.floor, repeat, case.prepare)
                floor_ratios.append(floor_time / kernel_time)
                kernel_times.append(kernel_time)
        kernel_time = statistics.median(kernel_times)
        ratio = statistics.median(ratios)
        ratio_floor = statistics.median(floor_ratios) if floor_ratios else ratio
        prepare = case.prepare
        numpy_time = median_time(
            lambda: (prepare() if prepare else None, case.numpy_way()), numpy_repeat
        )
        if prepare is not None:
            numpy_time -= median_time(prepare, numpy_repeat)
        rows.append(
            {
                "kernel": case.name,
                "size": nbytes,
                "gbps": gbps(case.nbytes, kernel_time),
                "memcpy_gbps": gbps(case.nbytes, kernel_time) / ratio,
                "ratio_memcpy": ratio,
                "floor": case.floor_name,
                "ratio_floor": ratio_floor,
                "ratio_numpy": numpy_time / kernel_time,
                **judge("kernel", case.name, ratio_floor, nbytes),
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
