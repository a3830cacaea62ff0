"""Which event loop runs the store tools' IO: zarr-python's own, always.

The rule, for every asynchronous call ``check``, ``convert`` and their
helpers make on a zarr store:

1. The coroutine runs on zarr-python's IO loop (the ``zarr_io`` thread of
   ``zarr.core.sync``, reached through ``zarr.core.sync.sync``): the loop on
   which zarr itself runs ``zarr.open_array``, array reads and writes, and
   the codec pipelines.  :func:`run` is the only way in.
2. An asynchronous iterator (``list_dir``, ``list_prefix``) is created *and*
   drained on that loop (:func:`collect`): obstore's ``list_dir`` starts its
   request when called, which needs a running loop.
3. A store the package opens itself from a URL is opened on that loop too
   (:func:`call`), so that whatever its file system binds at creation
   belongs to the loop that will use it.
4. Stores that do synchronous IO (``get_sync``/``set_sync``: ``LocalStore``,
   ``MemoryStore``) are called directly from the worker threads; no loop.
5. On Dask, a task opens the store itself in its worker process from the
   store's URL and ``storage_options``
   (:class:`~fixedutf32.store._stores.StoreSpec`), on that process's zarr
   loop (zarr makes a new one after a fork).

Why one loop: an asynchronous file system binds its HTTP session to the
loop it first runs on (s3fs, gcsfs, aiohttp), and fsspec hands the same
cached instance to every opening with the same options.  A store object a
user passes has usually been used by zarr already (``zarr.open_array`` on
it), and ``convert(verify=True)`` reads both stores back through zarr: with
a loop of the package's own beside zarr's, one session met two loops
("attached to a different loop").  The cost: calls from many worker
threads share one loop thread, as zarr's own calls do.
"""

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
