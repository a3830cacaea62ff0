"""The latency rows of ``fixedutf32 bench --zarr``: a small array read and written through a
store around a ``LocalStore`` that waits on every request and counts them, as S3 (``async``)
or NFS (``sync``) would (docs/performance.md; zarr's own ``LatencyStore`` mixes the two)."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt
from zarr.abc.store import Store
from zarr.storage import LocalStore, WrapperStore

from ._report import NOISE, Row, Target, requests_total
from .cases import WIDTH, KiB, Progress, Timed, in_turn, sample_array

if TYPE_CHECKING:
    from zarr.abc.store import ByteRequest
    from zarr.core.buffer import Buffer, BufferPrototype

__all__ = ["AsyncLatencyStore", "Counter", "SyncLatencyStore", "measure", "ratios"]

Kind = Literal["get", "range_get", "set", "delete", "other"]
KINDS = ("get", "range_get", "set", "delete", "other")  # what a request is counted as
LATENCY = 0.020  # seconds per request
CHUNKS = 100
CHUNK_BYTES = 64 * KiB
SHARD_CHUNKS = 10  # inner chunks per shard of the sharded array
PIPELINES = ("stock", "fused", "pipeline")
_T = TypeVar("_T")
Config = Callable[[str], contextlib.AbstractContextManager[object]]


class Counter:
    """Counts of a store's requests, and the most in flight at once, safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = 0
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.counts = dict.fromkeys((*KINDS, "in_flight"), 0)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.counts)

    @contextlib.contextmanager
    def request(self, kind: Kind) -> Iterator[None]:
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
    return "get" if byte_range is None else "range_get"


class _LatencyStore(WrapperStore[Store]):
    """A store around ``store`` whose requests each wait ``latency`` seconds, counted; zarr's
    batching helpers run as ``Store`` writes them, over the waiting ``get`` and ``set``."""

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
    """As a ``LocalStore`` on NFS: each request blocks its thread ``latency`` seconds; the
    asynchronous methods run the synchronous ones on a thread (``store`` does sync IO)."""

    _supports_sync_io = True

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


# what a row does, from its name: read or write; a slice, or all; sharded, or chunks alone
CASES = ("read all", "read a slice", "read a slice, sharded", "write all")


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
    config: Config,
    names: Sequence[str],
    repeat: int = 3,
    latency: float = LATENCY,
    chunks: int = CHUNKS,
    chunk_bytes: int = CHUNK_BYTES,
    progress: Progress | None = None,
    directory: str | None = None,
) -> tuple[list[Row], dict[str, dict[str, list[float]]]]:
    """Every latency row with each configuration of ``names`` (``config(name)`` sets it): a
    first untimed call counted and checked, then ``repeat`` rounds (a selection's: 3 times
    as many) in turn.  The rows, and ``"<profile> latency, <case>"`` -> name -> seconds."""
    import zarr

    say = progress or (lambda message: None)
    per_chunk = max(1, chunk_bytes // (4 * WIDTH))
    count = per_chunk * chunks
    data = sample_array(count, seed=25)
    rows: list[Row] = []
    times_by_row: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="fixedutf32-bench-latency-", dir=directory) as root:
        base = pathlib.Path(root)
        with config("stock"):
            _create(base / "chunked", data, per_chunk, None)
            _create(base / "sharded", data, per_chunk, per_chunk * SHARD_CHUNKS)
        for profile, store_type in STORES.items():
            for case in CASES:
                name = f"{profile} latency, {case}"
                say(f"{name} ({chunks} chunks, {latency * 1000:g} ms a request)")
                write, sharded = case.startswith("write"), case.endswith("sharded")
                path = base / ("sharded" if sharded else "chunked")
                if write:
                    path = base / f"write-{profile}"
                    with config("stock"):
                        _create(path, data, per_chunk, None)
                # a tenth of the array from a third of the way in, off a chunk boundary
                start = count // 3 + 7
                selection = slice(start, min(count, start + max(1, count // 10)))
                selection = selection if "slice" in case else slice(None)
                counters: dict[str, Counter] = {}
                calls: dict[str, Timed] = {}
                for config_name in names:
                    store = store_type(LocalStore(path), latency)
                    with config(config_name):
                        array = zarr.open_array(store, mode="r+" if write else "r")
                    counters[config_name] = store.counter
                    calls[config_name] = _call(config, config_name, array, selection, data, write)
                requests, same = {}, {}
                for config_name, call in calls.items():
                    counters[config_name].reset()
                    result = call()
                    requests[config_name] = counters[config_name].snapshot()
                    if result is True:  # a write: what the array holds now
                        with config("stock"):
                            result = zarr.open_array(str(path), mode="r")[...]
                    expected, got = data[selection], np.asarray(result)
                    same[config_name] = got.shape == expected.shape and np.array_equal(
                        got, expected
                    )
                # a selection takes a wave or two of requests: more rounds cost little
                rounds = repeat * (3 if "slice" in case else 1)
                times, checked = in_turn(calls, rounds, lambda result: result is not None)
                rows.append(
                    {
                        "profile": profile,
                        "case": case,
                        "latency_ms": latency * 1000,
                        "chunks": chunks,
                        "chunk_size": per_chunk * 4 * WIDTH,
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


def _call(
    config: Config, name: str, array: Any, selection: slice, data: npt.NDArray[np.str_], write: bool
) -> Timed:
    """A read of ``selection``, or a write of ``data`` (returning True), with config ``name``."""

    def call() -> object:
        with config(name):
            if not write:
                return array[selection]
            array[...] = data
            return True

    return call


def ratios(rows: Sequence[Row], times: Mapping[str, Mapping[str, list[float]]]) -> list[Row]:
    """Per row, the pipeline's best time over the fastest of zarr's (at least ``NOISE``: the
    rows wait on the same latency); per selection, its requests over the fewest (at most 1)."""
    speed, at_most = Target(">=", NOISE), Target("<=", 1.0)
    result: list[Row] = []
    for row in rows:
        name = f"{row['profile']} latency, {row['case']}"
        own = [min(times[name][n]) for n in ("stock", "fused") if times[name].get(n)]
        mine = times[name].get("pipeline")
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
            result.append(
                {
                    "ratio": f"requests pipeline / fewest zarr, {name}",
                    "value": share,
                    "target": 1.0,
                    "met": at_most.met(share),
                    "bound": "<=",
                }
            )
    return result
