"""Reads and writes through a store with a fixed latency per request: the latency rows
of ``fixedutf32 bench --zarr``.

A small array (100 chunks by default) is read and written by zarr's pipelines
and by fixedutf32's through a wrapper around a ``LocalStore`` that waits
``latency`` seconds on every request and counts the requests, in two
profiles:

- ``async``, as an object store (S3 through s3fs or obstore) is: a request
  awaits ``asyncio.sleep(latency)``, and the store has no synchronous IO;
- ``sync``, as a ``LocalStore`` on a network file system (NFS, Lustre, GPFS)
  is: a request blocks its thread for ``latency`` (``time.sleep``) and the
  store does its IO synchronously (``get_sync``, ``set_sync``,
  ``delete_sync``), its asynchronous methods running those on a thread, as
  ``LocalStore``'s do.

zarr's own ``zarr.testing.store.LatencyStore`` (in its test helpers, which
import pytest) has one profile that mixes the two, an ``asyncio.sleep`` in
its asynchronous methods and, from zarr 3.4, a ``time.sleep`` in its
synchronous ones, and counts nothing; hence these.
"""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from zarr.abc.store import Store
from zarr.storage import LocalStore, WrapperStore

from ._report import LatencyRow, RequestCounts, requests_total
from ._targets import NOISE, Ratio, Target
from ._timing import KiB, Progress, Timed, in_turn
from .cases import WIDTH, sample_units

if TYPE_CHECKING:
    from zarr.abc.store import ByteRequest
    from zarr.core.buffer import Buffer, BufferPrototype

__all__ = ["AsyncLatencyStore", "Counter", "SyncLatencyStore", "measure", "ratios"]

Profile = Literal["async", "sync"]
PROFILES: tuple[Profile, ...] = ("async", "sync")
LATENCY = 0.020  # seconds per request
CHUNKS = 100
CHUNK_BYTES = 64 * KiB
SHARD_CHUNKS = 10  # inner chunks per shard of the sharded array
ELEMENT_BYTES = 4 * WIDTH


class Counter:
    """Counts of a store's requests, and of those in flight, safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = 0
        self.counts = self._zero()

    @staticmethod
    def _zero() -> RequestCounts:
        return {"get": 0, "range_get": 0, "set": 0, "delete": 0, "other": 0, "in_flight": 0}

    def reset(self) -> None:
        with self._lock:
            self.counts = self._zero()

    def snapshot(self) -> RequestCounts:
        with self._lock:
            return RequestCounts(**self.counts)

    @contextlib.contextmanager
    def request(
        self, kind: Literal["get", "range_get", "set", "delete", "other"]
    ) -> Iterator[None]:
        with self._lock:
            self.counts[kind] += 1
            self._now += 1
            self.counts["in_flight"] = max(self.counts["in_flight"], self._now)
        try:
            yield
        finally:
            with self._lock:
                self._now -= 1


def _kind(byte_range: ByteRequest | None) -> Literal["get", "range_get"]:
    return "get" if byte_range is None else "range_get"


class _LatencyStore(WrapperStore[Store]):
    """A store around ``store`` whose requests each wait ``latency`` seconds, counted.

    Every read, whole or by range, goes through :meth:`get` (and, for a store
    with synchronous IO, ``get_sync``): the coalescing and batching helpers
    of zarr's ``Store`` are used as written over them, not the wrapped
    store's own, which would skip the wait and the count.
    """

    def __init__(
        self, store: Store, latency: float = LATENCY, counter: Counter | None = None
    ) -> None:
        super().__init__(store)
        self.latency = latency
        self.counter = Counter() if counter is None else counter

    def _with_store(self, store: Store) -> Any:
        return type(self)(store, self.latency, self.counter)

    # zarr >= 3.4: the coalescing byte-range readers, as Store has them (over get/get_sync)
    if hasattr(Store, "get_ranges"):
        get_ranges = Store.get_ranges
    if hasattr(Store, "get_ranges_sync"):
        get_ranges_sync = Store.get_ranges_sync
    _get_many = Store._get_many

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        return list(
            await asyncio.gather(
                *(self.get(key, prototype, byte_range) for key, byte_range in key_ranges)
            )
        )

    async def _set_many(self, values: Iterable[tuple[str, Buffer]]) -> None:
        await asyncio.gather(*(self.set(key, value) for key, value in values))

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        if not await self.exists(key):
            await self.set(key, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._store!r}, latency={self.latency})"


class AsyncLatencyStore(_LatencyStore):
    """As an object store: each request awaits ``latency`` seconds; no synchronous IO.

    Examples
    --------
    >>> import zarr
    >>> store = AsyncLatencyStore(zarr.storage.MemoryStore(), latency=0.001)
    >>> zarr.create_array(store, shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    >>> store.counter.counts["set"] >= 2
    True
    """

    # zarr >= 3.4 gives every wrapper the synchronous methods of the store it wraps
    _supports_sync_io = False

    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        with self.counter.request(_kind(byte_range)):
            await asyncio.sleep(self.latency)
            return await self._store.get(key, prototype, byte_range)

    async def set(self, key: str, value: Buffer) -> None:
        with self.counter.request("set"):
            await asyncio.sleep(self.latency)
            await self._store.set(key, value)

    async def delete(self, key: str) -> None:
        with self.counter.request("delete"):
            await asyncio.sleep(self.latency)
            await self._store.delete(key)

    async def exists(self, key: str) -> bool:
        with self.counter.request("other"):
            await asyncio.sleep(self.latency)
            return await self._store.exists(key)


class SyncLatencyStore(_LatencyStore):
    """As a ``LocalStore`` on NFS: each request blocks its thread ``latency`` seconds.

    ``store`` must do its IO synchronously (``LocalStore``, ``MemoryStore``).
    The asynchronous methods run the synchronous ones on a thread, as
    ``LocalStore``'s do.

    Examples
    --------
    >>> import zarr
    >>> store = SyncLatencyStore(zarr.storage.MemoryStore(), latency=0.001)
    >>> zarr.create_array(store, shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    >>> store.counter.counts["set"] >= 2
    True
    """

    _supports_sync_io = True

    def get_sync(
        self,
        key: str,
        *,
        prototype: BufferPrototype | None = None,
        byte_range: ByteRequest | None = None,
    ) -> Buffer | None:
        with self.counter.request(_kind(byte_range)):
            time.sleep(self.latency)
            return self._store.get_sync(  # type: ignore[attr-defined,no-any-return]
                key, prototype=prototype, byte_range=byte_range
            )

    def set_sync(self, key: str, value: Buffer) -> None:
        with self.counter.request("set"):
            time.sleep(self.latency)
            self._store.set_sync(key, value)  # type: ignore[attr-defined]

    def delete_sync(self, key: str) -> None:
        with self.counter.request("delete"):
            time.sleep(self.latency)
            self._store.delete_sync(key)  # type: ignore[attr-defined]

    def _exists_sync(self, key: str) -> bool:
        with self.counter.request("other"):
            time.sleep(self.latency)
            return self._store.get_sync(key) is not None  # type: ignore[attr-defined]

    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        return await asyncio.to_thread(
            self.get_sync, key, prototype=prototype, byte_range=byte_range
        )

    async def set(self, key: str, value: Buffer) -> None:
        await asyncio.to_thread(self.set_sync, key, value)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self.delete_sync, key)

    async def exists(self, key: str) -> bool:
        return await asyncio.to_thread(self._exists_sync, key)


STORES: dict[Profile, type[_LatencyStore]] = {"async": AsyncLatencyStore, "sync": SyncLatencyStore}


class LatencyCase(NamedTuple):
    """A latency row: what it does, to which array."""

    operation: Literal["read", "write"]
    sharded: bool = False
    selection: Literal["all", "slice"] = "all"


# A slice of a tenth of the array, from a third of the way in: whole chunks and
# a part of one at each end; of the sharded array, parts of two shards.
CASES: dict[str, LatencyCase] = {
    "read all": LatencyCase("read"),
    "read a slice": LatencyCase("read", selection="slice"),
    "read a slice, sharded": LatencyCase("read", sharded=True, selection="slice"),
    "write all": LatencyCase("write"),
}


def _slice(count: int) -> slice:
    start = count // 3 + 7  # off a chunk boundary
    return slice(start, min(count, start + max(1, count // 10)))


def _data(count: int) -> npt.NDArray[np.str_]:
    data = np.empty(count, f"<U{WIDTH}")
    data.view("<u4").reshape(count, WIDTH)[:] = sample_units(count, WIDTH, seed=25)
    return data


def _create(path: pathlib.Path, data: npt.NDArray[np.str_], chunk: int, shard: int | None) -> None:
    import zarr

    zarr.create_array(
        str(path),
        shape=data.shape,
        chunks=(chunk,),
        shards=None if shard is None else (shard,),
        dtype=data.dtype,
        compressors=None,
        fill_value="",
        overwrite=True,
    )[...] = data


def measure(
    config: Callable[[str], contextlib.AbstractContextManager[object]],
    names: Sequence[str],
    repeat: int = 3,
    latency: float = LATENCY,
    chunks: int = CHUNKS,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Progress | None = None,
    directory: str | None = None,
) -> tuple[list[LatencyRow], dict[str, dict[str, list[float]]]]:
    """Time every latency row with each configuration of ``names``; the rows, and the times.

    ``config(name)`` is the zarr configuration of a configuration (it is set
    when the array is opened and around each call).  Each call runs once
    first, untimed, counting its requests and checking its result; then
    ``repeat`` rounds (3 times as many for a selection, which takes a wave or
    two of requests) time each configuration in turn (a row's seconds: the
    best of them).  Returns the rows and
    ``"<profile> latency, <case>" -> configuration -> seconds of each round``.
    """
    import zarr

    say = progress or (lambda message: None)
    per_chunk = max(1, chunk_bytes // ELEMENT_BYTES)
    count = per_chunk * chunks
    data = _data(count)
    shard = per_chunk * SHARD_CHUNKS
    rows: list[LatencyRow] = []
    times_by_row: dict[str, dict[str, list[float]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="fixedutf32-bench-latency-", dir=directory) as root,
        warnings.catch_warnings(),
    ):
        from zarr.errors import UnstableSpecificationWarning

        warnings.simplefilter("ignore", UnstableSpecificationWarning)
        base = pathlib.Path(root)
        with config("stock"):
            _create(base / "chunked", data, per_chunk, None)
            _create(base / "sharded", data, per_chunk, shard)
        for profile in PROFILES:
            for case_name, case in CASES.items():
                name = f"{profile} latency, {case_name}"
                say(f"{name} ({chunks} chunks, {latency * 1000:g} ms a request)")
                path = base / ("sharded" if case.sharded else "chunked")
                if case.operation == "write":
                    path = base / f"write-{profile}"
                    with config("stock"):
                        _create(path, data, per_chunk, None)
                selection = _slice(count) if case.selection == "slice" else slice(None)
                expected = data[selection]
                counters: dict[str, Counter] = {}
                calls: dict[str, Timed] = {}
                for config_name in names:
                    store = STORES[profile](LocalStore(path), latency)
                    with config(config_name):
                        array = zarr.open_array(
                            store, mode="r+" if case.operation == "write" else "r"
                        )
                    counters[config_name] = store.counter
                    calls[config_name] = _call(config, config_name, array, case, selection, data)
                requests: dict[str, RequestCounts] = {}
                same: dict[str, bool] = {}
                for config_name, call in calls.items():
                    counters[config_name].reset()
                    result = call()
                    requests[config_name] = counters[config_name].snapshot()
                    same[config_name] = _same(result, expected, path, config)
                # a selection's few requests take a wave or two of latency: a few
                # milliseconds of scheduling matter, and more rounds cost little
                rounds = repeat * (3 if case.selection == "slice" else 1)
                times, checked = in_turn(calls, rounds, lambda result: result is not None)
                rows.append(
                    {
                        "profile": profile,
                        "case": case_name,
                        "latency_ms": latency * 1000,
                        "chunks": chunks,
                        "chunk_size": per_chunk * ELEMENT_BYTES,
                        "shard_chunks": SHARD_CHUNKS if case.sharded else None,
                        "seconds": {
                            n: min(times[n]) if n in times else None
                            for n in ("stock", "fused", "pipeline")
                        },
                        "requests": {n: requests.get(n) for n in ("stock", "fused", "pipeline")},
                        "same_data": {
                            n: (same[n] and checked[n]) if n in same else None
                            for n in ("stock", "fused", "pipeline")
                        },
                    }
                )
                times_by_row[name] = times
    return rows, times_by_row


def _call(
    config: Callable[[str], contextlib.AbstractContextManager[object]],
    name: str,
    array: Any,
    case: LatencyCase,
    selection: slice,
    data: npt.NDArray[np.str_],
) -> Timed:
    if case.operation == "write":

        def write() -> object:
            with config(name):
                array[...] = data
            return True

        return write

    def read() -> object:
        with config(name):
            return array[selection]

    return read


def _same(
    result: object,
    expected: npt.NDArray[np.str_],
    path: pathlib.Path,
    config: Callable[[str], contextlib.AbstractContextManager[object]],
) -> bool:
    """Whether a read returned ``expected``, or a write left it in the array at ``path``."""
    import zarr

    if result is True:
        with config("stock"):
            result = zarr.open_array(str(path), mode="r")[...]
    array = np.asarray(result)
    return bool(array.shape == expected.shape and np.array_equal(array, expected))


def ratios(
    rows: Sequence[LatencyRow], times: Mapping[str, Mapping[str, list[float]]]
) -> list[Ratio]:
    """The latency rows' ratios and their targets.

    Per row: the pipeline's speed over the fastest of zarr's pipelines, best
    time over best time (waiting adds no variation of its own: what a busy
    machine adds to a round is noise), at least ``NOISE`` (the rows wait on
    the same fixed latency, so equal is what "never slower" can mean); and
    of the reads of a selection, the pipeline's requests over the fewest of
    zarr's, at most 1.
    """
    result: list[Ratio] = []
    for row in rows:
        name = f"{row['profile']} latency, {row['case']}"
        round_times = times[name]
        value = None
        own = [min(round_times[n]) for n in ("stock", "fused") if round_times.get(n)]
        mine = round_times.get("pipeline")
        if own and mine:
            value = min(own) / min(mine)
        target = Target(">=", NOISE)
        result.append(
            {
                "ratio": f"pipeline / fastest zarr, {name}",
                "value": value,
                "target": target.value,
                "met": target.met(value),
            }
        )
        if row["case"].startswith("read a slice"):
            counts = row["requests"]
            fewest = [
                requests_total(c) for n in ("stock", "fused") if (c := counts.get(n)) is not None
            ]
            pipeline = counts.get("pipeline")
            share = None
            if fewest and pipeline is not None and min(fewest):
                share = requests_total(pipeline) / min(fewest)
            at_most = Target("<=", 1.0)
            result.append(
                {
                    "ratio": f"requests pipeline / fewest zarr, {name}",
                    "value": share,
                    "target": at_most.value,
                    "met": at_most.met(share),
                    "bound": "<=",
                }
            )
    return result
