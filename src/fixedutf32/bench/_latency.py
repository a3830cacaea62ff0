"""The latency rows of ``fixedutf32 bench --zarr``: a small array read and written through a
store around a ``LocalStore`` that waits on every request and counts them, as S3 (``async``)
or NFS (``sync``) would (docs/performance.md; zarr's own ``LatencyStore`` mixes the two)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import pathlib
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from zarr.abc.store import Store
from zarr.storage import LocalStore, WrapperStore

from ._report import NOISE, Row, Target, requests_total
from .cases import (
    ELEMENT_BYTES,
    KiB,
    Progress,
    access_call,
    create_array,
    fastest_zarr,
    holds,
    in_turn,
    open_with,
    quiet,
    sample_array,
    with_config,
)

if TYPE_CHECKING:
    from zarr.abc.store import ByteRequest
    from zarr.core.buffer import Buffer, BufferPrototype

Kind = Literal["get", "range_get", "set", "delete", "other"]
KINDS = ("get", "range_get", "set", "delete", "other")  # what a request is counted as
LATENCY = 0.020  # seconds per request
CHUNKS = 100
CHUNK_BYTES = 64 * KiB
SHARD_CHUNKS = 10  # inner chunks per shard of the sharded array
PIPELINES = ("stock", "fused", "pipeline")
# what a row does, from its name: read or write; a slice, or all; sharded, or chunks alone
CASES = ("read all", "read a slice", "read a slice, sharded", "write all")
_T = TypeVar("_T")


class Counter:
    """Counts of a store's requests, and the most in flight at once, safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = 0
        self.reset()

    def reset(self) -> None:
        """Count from nothing again."""
        with self._lock:
            self.counts = dict.fromkeys((*KINDS, "in_flight"), 0)

    def snapshot(self) -> dict[str, int]:
        """The counts now."""
        with self._lock:
            return dict(self.counts)

    @contextlib.contextmanager
    def request(self, kind: Kind) -> Iterator[None]:
        """Count a request of ``kind`` for as long as it is in flight."""
        with self._lock:
            self.counts[kind] += 1
            self._now += 1
            self.counts["in_flight"] = max(self.counts["in_flight"], self._now)
        try:
            yield
        finally:
            with self._lock:
                self._now -= 1


def _kind(byte_range: ByteRequest | None) -> Kind:
    """How a read is counted: whole, or a byte range."""
    return "get" if byte_range is None else "range_get"


class _LatencyStore(WrapperStore[Store]):
    """A store around ``store`` whose requests each wait ``latency`` seconds, counted."""

    def __init__(
        self, store: Store, latency: float = LATENCY, counter: Counter | None = None
    ) -> None:
        super().__init__(store)
        self.latency = latency
        self.counter = Counter() if counter is None else counter

    def _with_store(self, store: Store) -> Any:
        return type(self)(store, self.latency, self.counter)

    # zarr's batching helpers run as Store writes them, over the waiting get and set; zarr >= 3.4
    # has coalescing byte-range readers too (over get/get_sync)
    if hasattr(Store, "get_ranges"):
        get_ranges = Store.get_ranges
    if hasattr(Store, "get_ranges_sync"):
        get_ranges_sync = Store.get_ranges_sync
    _get_many = Store._get_many

    async def get_partial_values(
        self, prototype: BufferPrototype, key_ranges: Iterable[tuple[str, ByteRequest | None]]
    ) -> list[Buffer | None]:
        return list(await asyncio.gather(*(self.get(k, prototype, r) for k, r in key_ranges)))

    async def _set_many(self, values: Iterable[tuple[str, Buffer]]) -> None:
        await asyncio.gather(*(self.set(key, value) for key, value in values))

    async def set_if_not_exists(self, key: str, value: Buffer) -> None:
        if not await self.exists(key):
            await self.set(key, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._store!r}, latency={self.latency})"


class AsyncLatencyStore(_LatencyStore):
    """As an object store: each request awaits ``latency`` seconds; no synchronous IO."""

    _supports_sync_io = False  # zarr >= 3.4 gives every wrapper its store's sync methods

    async def _wait(self, kind: Kind, call: Awaitable[_T]) -> _T:
        with self.counter.request(kind):
            await asyncio.sleep(self.latency)
            return await call

    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        return await self._wait(_kind(byte_range), self._store.get(key, prototype, byte_range))

    async def set(self, key: str, value: Buffer) -> None:
        await self._wait("set", self._store.set(key, value))

    async def delete(self, key: str) -> None:
        await self._wait("delete", self._store.delete(key))

    async def exists(self, key: str) -> bool:
        return await self._wait("other", self._store.exists(key))


class SyncLatencyStore(_LatencyStore):
    """As a ``LocalStore`` on NFS: each request blocks its thread ``latency`` seconds."""

    _supports_sync_io = True  # and the asynchronous methods run the synchronous ones on a thread

    def _block(self, kind: Kind, call: Callable[[], _T]) -> _T:
        with self.counter.request(kind):
            time.sleep(self.latency)
            return call()

    def get_sync(
        self,
        key: str,
        *,
        prototype: BufferPrototype | None = None,
        byte_range: ByteRequest | None = None,
    ) -> Buffer | None:
        inner: Any = self._store  # a store with sync IO
        get = lambda: inner.get_sync(key, prototype=prototype, byte_range=byte_range)  # noqa: E731
        return self._block(_kind(byte_range), get)  # type: ignore[no-any-return]

    def set_sync(self, key: str, value: Buffer) -> None:
        self._block("set", lambda: self._store.set_sync(key, value))  # type: ignore[attr-defined]

    def delete_sync(self, key: str) -> None:
        self._block("delete", lambda: self._store.delete_sync(key))  # type: ignore[attr-defined]

    def _exists_sync(self, key: str) -> bool:
        inner: Any = self._store
        return self._block("other", lambda: inner.get_sync(key) is not None)

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


STORES: dict[str, type[_LatencyStore]] = {"async": AsyncLatencyStore, "sync": SyncLatencyStore}


def measure(
    names: Sequence[str],
    repeat: int = 3,
    latency: float = LATENCY,
    progress: Progress = quiet,
    directory: str | None = None,
) -> tuple[list[Row], dict[str, dict[str, list[float]]]]:
    """The latency rows of configurations ``names``, and row -> configuration -> seconds."""
    # a first untimed call counted and checked, then repeat rounds (a selection's: 3 times as
    # many, it takes a wave or two of requests) in turn
    chunks, per_chunk = CHUNKS, CHUNK_BYTES // ELEMENT_BYTES
    count = per_chunk * chunks
    data = sample_array(count, seed=25)
    # a tenth of the array from a third of the way in, off a chunk boundary
    start = count // 3 + 7
    part = slice(start, min(count, start + max(1, count // 10)))
    rows: list[Row] = []
    times_by_row: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="fixedutf32-bench-latency-", dir=directory) as root:
        base = pathlib.Path(root)
        create_array(base / "chunked", data, per_chunk)
        create_array(base / "sharded", data, per_chunk, per_chunk * SHARD_CHUNKS)
        for (profile, store_type), case in itertools.product(STORES.items(), CASES):
            name, write = f"{profile} latency, {case}", case.startswith("write")
            progress(f"{name} ({chunks} chunks, {latency * 1000:g} ms a request)")
            sharded, selection = case.endswith("sharded"), part if "slice" in case else slice(None)
            path = base / ("sharded" if sharded else "chunked")
            if write:
                path = base / f"write-{profile}"
                create_array(path, data, per_chunk)
            stores = {n: store_type(LocalStore(path), latency) for n in names}
            arrays = {n: open_with(n, stores[n], {}, mode="r+" if write else "r") for n in names}
            new = data if write else None
            calls = {
                n: with_config(n, None, access_call(arrays[n], selection, new, path)) for n in names
            }
            requests, same = {}, {}
            for config_name, call in calls.items():
                stores[config_name].counter.reset()
                result = call()
                requests[config_name] = stores[config_name].counter.snapshot()
                same[config_name] = holds(result, data[selection])
            rounds = repeat * (3 if "slice" in case else 1)
            times, checked = in_turn(calls, rounds, lambda result: result is not None)
            rows.append(
                {
                    "profile": profile,
                    "case": case,
                    "latency_ms": latency * 1000,
                    "chunks": chunks,
                    "chunk_size": per_chunk * ELEMENT_BYTES,
                    "shard_chunks": SHARD_CHUNKS if sharded else None,
                    "seconds": {n: min(times[n]) if n in times else None for n in PIPELINES},
                    "requests": {n: requests.get(n) for n in PIPELINES},
                    "same_data": {
                        n: (same[n] and checked[n]) if n in same else None for n in PIPELINES
                    },
                }
            )
            times_by_row[name] = times
    return rows, times_by_row


def ratios(rows: Sequence[Row], times: Mapping[str, Mapping[str, list[float]]]) -> list[Row]:
    """Per row, the pipeline's speed over the fastest zarr's; per selection, its requests."""
    # the speeds at least NOISE (the rows wait on the same latency), the requests at most 1x
    speed, at_most = Target(">=", NOISE), Target("<=", 1.0)
    result: list[Row] = []
    for row in rows:
        name = f"{row['profile']} latency, {row['case']}"
        own, mine = fastest_zarr(times[name]), times[name].get("pipeline")
        value = min(own) / min(mine) if own and mine else None
        ratio = f"pipeline / fastest zarr, {name}"
        result.append({"ratio": ratio, "value": value, "target": NOISE, "met": speed.met(value)})
        if row["case"].startswith("read a slice"):
            counts = row["requests"]
            zarrs = [requests_total(c) for n in ("stock", "fused") if (c := counts.get(n))]
            pipeline = counts.get("pipeline")
            share = None
            if zarrs and pipeline is not None and min(zarrs):
                share = requests_total(pipeline) / min(zarrs)
            ratio = f"requests pipeline / fewest zarr, {name}"
            met = at_most.met(share)
            result.append(
                {"ratio": ratio, "value": share, "target": 1.0, "met": met, "bound": "<="}
            )
    return result
