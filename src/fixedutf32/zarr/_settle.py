"""Running a batch's requests so that an error ends the batch, not just the wait."""
# zarr's concurrent_map (asyncio.gather) lets the other items run on after one fails, changing
# the store or ``out`` after the caller has its error: here nothing runs on once a call returns.

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

__all__ = ["here_or_thread", "settled", "settled_map"]

_T = TypeVar("_T")


async def settled_map(
    call: Callable[[_T], Awaitable[object]], items: Sequence[_T], limit: int | None
) -> None:
    """``await call(item)`` for every item, ``limit`` at once; the first error once all stop."""
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
    """Await every one of ``awaitables`` to its end, then raise the first error (argument order)."""
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result


async def here_or_thread(here: bool, call: Callable[..., _T], *args: Any) -> _T:
    """``call(*args)`` on this thread when ``here`` (small work: a thread hop costs as much)."""
    return call(*args) if here else await asyncio.to_thread(call, *args)
