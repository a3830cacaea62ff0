"""The event loop of the store tools' IO: zarr-python's own, always (:func:`run` is the way in)."""
# Async iterators are created and drained on it (obstore's list_dir starts on call); stores opened
# from a URL are opened on it; sync stores (LocalStore, MemoryStore) are called from the threads; on
# Dask each task opens its store on its process's zarr loop. Why one loop: s3fs/gcsfs/aiohttp bind
# their session to the first loop and fsspec caches instances, so a second loop of ours beside
# zarr's met "attached to a different loop".

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["call", "collect", "run"]

_T = TypeVar("_T")


def run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` on zarr-python's IO loop and return its result (or raise its error)."""
    from zarr.core.sync import sync

    return sync(coroutine)


async def _drain(make: Callable[[], AsyncIterator[_T]]) -> list[_T]:
    return [item async for item in make()]


def collect(make: Callable[[], AsyncIterator[_T]]) -> list[_T]:
    """Every item of the iterator ``make()`` returns, made and drained on zarr's loop."""
    return run(_drain(make))


async def _call(function: Callable[[], _T]) -> _T:
    return function()


def call(function: Callable[[], _T]) -> _T:
    """``function()`` called on zarr's loop thread (opening a store that binds to its loop)."""
    return run(_call(function))
