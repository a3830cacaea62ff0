"""Run per-key tasks ``(function, args, chunks, nbytes)`` on threads or Dask, with progress."""
# Functions are module-level (Dask sends them by reference); on Dask the store arguments are
# StoreSpecs that resolve() opens in the worker, on that process's zarr loop.

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from ._stores import StoreError, StoreHandle, StoreSpec, handle_for

if TYPE_CHECKING:
    import distributed

__all__ = [
    "Progress",
    "close_scheduler",
    "dask_client",
    "open_scheduler",
    "resolve",
    "run_tasks",
    "run_with_progress",
]

_R = TypeVar("_R")

# What a task receives for a store: the handle on threads, its spec on Dask.
StoreRef: TypeAlias = StoreHandle | StoreSpec
# (function, arguments, chunks, bytes): the function returns a small report.
Task: TypeAlias = tuple[Callable[..., _R], tuple[Any, ...], int, int]


def resolve(ref: StoreRef, mode: str = "r") -> StoreHandle:
    """The store handle a task was given, or the one this process opens for its spec."""
    return ref if isinstance(ref, StoreHandle) else handle_for(ref, mode)


class Progress:
    """Chunks and bytes done, throughput and time left, on stderr (tqdm, else a line every 2 s)."""

    def __init__(self, enabled: bool, total_chunks: int, total_bytes: int, what: str) -> None:
        self.enabled = enabled
        self.total_chunks = total_chunks
        self.total_bytes = total_bytes
        self.what = what
        self.chunks = 0
        self.nbytes = 0
        self.bar: Any = None  # a tqdm bar (tqdm ships no type information)
        self.started = time.perf_counter()
        self.shown = self.started
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            print(
                f'fixedutf32 {what}: tqdm is not installed (pip install "fixedutf32[progress]"); '
                f"plain progress lines follow",
                file=sys.stderr,
            )
            return
        self.bar = tqdm(
            total=total_bytes,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=what,
            file=sys.stderr,
            dynamic_ncols=True,
            leave=True,
        )
        self.bar.set_postfix_str(f"0/{total_chunks} chunks", refresh=False)

    def update(self, chunks: int, nbytes: int) -> None:
        self.chunks += chunks
        self.nbytes += nbytes
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(f"{self.chunks}/{self.total_chunks} chunks", refresh=False)
            self.bar.update(nbytes)
            return
        now = time.perf_counter()
        if now - self.shown >= 2:
            self.shown = now
            self._line(now)

    def _line(self, now: float) -> None:
        elapsed = max(now - self.started, 1e-9)
        rate = self.nbytes / elapsed
        left = (self.total_bytes - self.nbytes) / rate if rate else float("nan")
        print(
            f"fixedutf32 {self.what}: {self.chunks}/{self.total_chunks} chunks, "
            f"{self.nbytes / 2**20:.1f}/{self.total_bytes / 2**20:.1f} MiB, "
            f"{rate / 2**20:.1f} MiB/s, {left:.0f} s left",
            file=sys.stderr,
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            self._line(time.perf_counter())


def default_threads(threads: int | None) -> int:
    if threads is None:
        return os.cpu_count() or 1
    if type(threads) is not int or threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    return threads


def dask_client(scheduler: str) -> tuple[distributed.Client, distributed.LocalCluster | None]:
    """``(client, cluster)`` for ``"local"`` (a new LocalCluster) or an address (cluster None)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise StoreError(
            'Dask runs need the "dask" extra: pip install "fixedutf32[dask]"'
        ) from None
    if scheduler == "local":
        # ":0": the dashboard on a free port (None would mean Dask's default,
        # 8787, and a second cluster on the machine would fail to start)
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        return Client(cluster), cluster
    try:
        return Client(scheduler, timeout="10s"), None
    except (OSError, TimeoutError, ValueError) as exc:
        raise StoreError(f"cannot connect to the Dask scheduler {scheduler!r}: {exc}") from None


def open_scheduler(
    scheduler: str | None, threads: int | None
) -> tuple[int, distributed.Client | None, distributed.LocalCluster | None]:
    """(threads, client, cluster) for ``scheduler`` None/"threads", "local" or an address."""
    threads = default_threads(threads)
    if scheduler in (None, "threads"):
        return threads, None, None
    if not isinstance(scheduler, str):
        raise ValueError(
            f"scheduler must be None, 'threads', 'local' or a Dask address, got {scheduler!r}"
        )
    client, cluster = dask_client(scheduler)
    return threads, client, cluster


def close_scheduler(
    client: distributed.Client | None, cluster: distributed.LocalCluster | None
) -> None:
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()


def _batch(batch: list[tuple[Callable[..., _R], tuple[Any, ...]]]) -> list[_R]:
    """One Dask task: run each ``(function, args)`` of ``batch``, return the results."""
    return [function(*args) for function, args in batch]


def run_tasks(
    tasks: Sequence[Task[_R]],
    consume: Callable[[_R], bool],
    *,
    threads: int = 1,
    client: distributed.Client | None = None,
    progress: Progress | None = None,
) -> int:
    """Run every task, handing each result to ``consume`` until it returns False; the count run."""
    # consume runs in the caller's thread; a False drops the tasks not started.
    if client is not None:
        return _run_dask(tasks, consume, client, progress)
    done = 0
    if threads <= 1:
        for function, args, chunks, nbytes in tasks:
            result = function(*args)
            done += 1
            if progress:
                progress.update(chunks, nbytes)
            if consume(result) is False:
                break
        return done
    pending: dict[Future[_R], tuple[int, int]] = {}
    queue = iter(tasks)
    stop = False
    with ThreadPoolExecutor(threads, thread_name_prefix="fixedutf32-store") as pool:
        try:
            while True:
                while not stop and len(pending) < 2 * threads:
                    task = next(queue, None)
                    if task is None:
                        break
                    function, args, chunks, nbytes = task
                    pending[pool.submit(function, *args)] = (chunks, nbytes)
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    chunks, nbytes = pending.pop(future)
                    result = future.result()
                    done += 1
                    if progress:
                        progress.update(chunks, nbytes)
                    if not stop and consume(result) is False:
                        stop = True
        finally:
            for future in pending:
                future.cancel()
    return done


def _run_dask(
    tasks: Sequence[Task[_R]],
    consume: Callable[[_R], bool],
    client: distributed.Client,
    progress: Progress | None,
) -> int:
    from distributed import as_completed

    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    size = max(1, -(-len(tasks) // (4 * workers)))
    batches: dict[distributed.Future[list[_R]], tuple[int, int, int]] = {}
    for start in range(0, len(tasks), size):
        group = tasks[start : start + size]
        future = client.submit(
            _batch, [(function, args) for function, args, _, _ in group], pure=False
        )
        batches[future] = (len(group), sum(t[2] for t in group), sum(t[3] for t in group))
    done = 0
    running = as_completed(list(batches))
    stop = False
    for future in running:
        count, chunks, nbytes = batches[future]
        results = future.result()
        done += count
        if progress:
            progress.update(chunks, nbytes)
        for result in results:
            if not stop and consume(result) is False:
                stop = True
        if stop:
            for other in batches:
                other.cancel()
            break
    return done


def run_with_progress(
    tasks: Sequence[Task[_R]],
    consume: Callable[[_R], bool],
    what: str,
    *,
    threads: int,
    client: distributed.Client | None,
    show: bool,
) -> int:
    """:func:`run_tasks` under a :class:`Progress` named ``what`` (shown when ``show``)."""
    bar = Progress(show, sum(t[2] for t in tasks), sum(t[3] for t in tasks), what)
    try:
        return run_tasks(tasks, consume, threads=threads, client=client, progress=bar)
    finally:
        bar.close()
