"""Running a batch's store requests so that an error ends the batch, not just the wait.

zarr's ``concurrent_map`` is ``asyncio.gather``: when one item fails, the
error reaches the caller while the other items go on running, so a write
refused for one chunk would go on changing the store (and a read, the
caller's ``out``) after the caller has its exception.  Here, once an item
has failed no further item starts, those already under way finish, and
only then is the first error raised: when a call into the pipeline
returns or raises, nothing of it is still running.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

__all__ = ["settled", "settled_map"]

_T = TypeVar("_T")


async def settled_map(
    call: Callable[[_T], Awaitable[object]], items: Sequence[_T], limit: int | None
) -> None:
    """``await call(item)`` for every item, ``limit`` at once; the first error once all stop.

    Parameters
    ----------
    call : callable
        A coroutine function of one item.
    items : sequence
        Its arguments; after an item has failed, the ones not yet started
        are left out.
    limit : int or None
        Items under way at once (zarr's ``async.concurrency``); None or less
        than 1: all.

    Raises
    ------
    Exception
        The first error an item raised, after every started item has ended.
    """
    if not items:
        return
    width = int(limit) if limit and int(limit) > 0 else len(items)
    gate = asyncio.Semaphore(width)
    errors: list[Exception] = []

    async def one(item: _T) -> None:
        async with gate:
            if errors:
                return  # the batch has failed: start nothing more
            try:
                await call(item)
            except Exception as exc:  # noqa: BLE001 - kept, raised once all have ended
                errors.append(exc)

    await asyncio.gather(*(one(item) for item in items))
    if errors:
        raise errors[0]


async def settled(*awaitables: Awaitable[Any]) -> None:
    """Await every one of ``awaitables`` to its end, then raise the first error.

    Raises
    ------
    Exception
        The first error (in argument order) of those that failed.
    """
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
