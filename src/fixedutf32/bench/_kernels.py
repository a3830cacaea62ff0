"""Kernel rows of ``fixedutf32 bench``: each kernel as a ratio to its floor, memcpy and NumPy."""

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
    """Every kernel on one chunk size: medians over ``rounds`` of each round's ratio."""
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
            for floor, into in ((baseline, ratios), (case.floor, floor_ratios)):
                if floor is not None:
                    kernel_time, floor_time = alternate(case.kernel, floor, repeat, case.prepare)
                    into.append(floor_time / kernel_time)
                    kernel_times.append(kernel_time)
        kernel_time = statistics.median(kernel_times)
        ratio = statistics.median(ratios)
        ratio_floor = statistics.median(floor_ratios) if floor_ratios else ratio
        prepare = case.prepare
        numpy_time = median_time(lambda: (prepare and prepare(), case.numpy_way()), numpy_repeat)
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
    little, foreign = sample_chunk(4 * WIDTH, NATIVE), sample_chunk(4 * WIDTH, FOREIGN)
    array = np.frombuffer(little, f"=U{WIDTH}")
    calls: dict[str, Timed] = {
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


def measure_threads(nbytes: int, threads: int, repeat: int = 15) -> tuple[float, float]:
    """Median throughput of ``threads`` threads over one, of decode_chunk and of numpy.copyto
    (run alongside: on a shared machine the second core is not always there)."""
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
    decode_scaling, copy_scaling = [], []
    for _ in range(repeat):
        decode_scaling.append(throughput(decode, threads) / throughput(decode, 1))
        copy_scaling.append(throughput(copy, threads) / throughput(copy, 1))
    return statistics.median(decode_scaling), statistics.median(copy_scaling)
