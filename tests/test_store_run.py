"""How check and convert run their per-key tasks on threads (fixedutf32.store._run.run_tasks):
every task once, results handed over as they finish, a stop that starts nothing more."""

import threading
import time

import pytest

pytest.importorskip("zarr", reason="fixedutf32.store needs zarr-python (extra [zarr])")

from fixedutf32.store._run import run_tasks


def _task(log, lock, n, seconds=0.0):
    with lock:
        log.append(("start", n))
    time.sleep(seconds)
    return n


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_every_task_runs_once_and_every_result_is_consumed(threads):
    log, lock, results = [], threading.Lock(), []
    tasks = [(_task, (log, lock, n), 1, 1) for n in range(500)]
    assert run_tasks(tasks, lambda r: results.append(r) is None, threads=threads) == 500
    assert sorted(results) == list(range(500))
    assert sorted(n for _, n in log) == list(range(500))


def test_a_stop_hands_over_nothing_more_and_starts_no_new_task():
    log, lock, results = [], threading.Lock(), []
    tasks = [(_task, (log, lock, n, 0.01), 1, 1) for n in range(200)]

    def consume(result):
        results.append(result)
        return False  # stop at the first result

    run_tasks(tasks, consume, threads=2)
    assert results == [results[0]]  # nothing consumed after the stop
    # only what was already handed to the threads (two per thread) still runs
    assert 1 <= len(log) <= 1 + 2 * 2, len(log)


def test_a_failing_task_raises_in_the_caller_and_starts_nothing_more():
    log, lock = [], threading.Lock()

    def fails(n):
        raise ValueError(f"task {n} failed")

    tasks = [(fails, (0,), 1, 1)] + [(_task, (log, lock, n, 0.01), 1, 1) for n in range(1, 200)]
    with pytest.raises(ValueError, match="task 0 failed"):
        run_tasks(tasks, lambda r: True, threads=2)
    assert len(log) < 10  # the queued tasks were cancelled
