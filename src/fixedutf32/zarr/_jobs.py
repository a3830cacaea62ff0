"""One typed record per chunk of a batch (:class:`ChunkJob`), made once from zarr's 5-tuples."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from zarr.storage import StorePath

from .._store_kinds import local_root
from ._plan import ChunkLayout, ChunkPlan, ShardPlan

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec

__all__ = ["ChunkJob", "direct_block", "fill_value", "jobs_of", "plain_slices", "shares"]

_UINT8 = np.dtype(np.uint8)


@dataclass(slots=True)
class ChunkJob:
    """One chunk of a batch, with its store key, local file, layout and the block it fills whole."""

    position: int
    getter: Any
    key: str | None
    path: str | None
    spec: ArraySpec
    layout: ChunkLayout
    chunk_selection: Any
    out_selection: Any
    complete: bool
    # the flat bytes of the result (or value) the whole chunk fills, laid out as stored
    block: np.ndarray[Any, np.dtype[np.uint8]] | None


def fill_value(spec: ArraySpec) -> Any:
    """The spec's fill value (zarr V2 metadata may hold null: zarr reads the default)."""
    return spec.dtype.default_scalar() if spec.fill_value is None else spec.fill_value


def plain_slices(selection: object, ndim: int | None = None) -> bool:
    """Whether ``selection`` is a tuple of slices of step 1 (``ndim`` of them, if given)."""
    # A loop, not all() over a generator: this runs twice for every chunk read.
    if type(selection) is not tuple or (ndim is not None and len(selection) != ndim):
        return False
    for part in selection:  # noqa: SIM110
        if type(part) is not slice or part.step not in (None, 1):
            return False
    return True


def direct_block(
    array: np.ndarray[Any, Any],
    layout: ChunkLayout,
    chunk_selection: Any,
    out_selection: Any,
    complete: bool,
    drop_axes: tuple[int, ...],
) -> np.ndarray[Any, np.dtype[np.uint8]] | None:
    """The flat bytes of ``array`` a whole chunk maps onto, laid out like the chunk; or None."""
    if not (
        complete and not drop_axes and plain_slices(chunk_selection) and plain_slices(out_selection)
    ):
        return None
    view = array[(*out_selection, Ellipsis)]  # the trailing ... keeps a 0-d view, not a copy
    if view.shape != layout.shape:
        return None
    if layout.order == "C" or view.ndim <= 1:
        if not view.flags.c_contiguous:
            return None
        flat = view.reshape(-1)
    else:
        if not view.flags.f_contiguous:
            return None
        flat = view.T.reshape(-1)
    if not flat.flags.writeable:
        return None
    return flat.view(_UINT8)


def jobs_of(
    batch: Iterable[tuple[Any, ArraySpec, Any, Any, bool]],
    plan: ChunkPlan | ShardPlan,
    array: np.ndarray[Any, Any] | None,
    drop_axes: tuple[int, ...],
) -> list[ChunkJob]:
    """A :class:`ChunkJob` per entry of a batch; ``array`` (result or value) for the blocks."""
    jobs = []
    last_spec: object = None
    layout: ChunkLayout | None = None
    last_store: object = None
    root: str | None = None  # the local directory of last_store, if it is one
    for position, (getter, spec, chunk_selection, out_selection, complete) in enumerate(batch):
        if spec is not last_spec:  # a regular grid: one spec for the whole batch
            layout, last_spec = plan.layout(spec), spec
        assert layout is not None
        block = None
        if array is not None:
            block = direct_block(array, layout, chunk_selection, out_selection, complete, drop_axes)
        path = getattr(getter, "path", None)
        local = None
        if type(getter) is StorePath:
            if getter.store is not last_store:  # one store for the whole batch, as a rule
                last_store = getter.store
                root = local_root(last_store)
            if root is not None:
                local = os.path.join(root, getter.path)
        jobs.append(
            ChunkJob(
                position,
                getter,
                path,
                local,
                spec,
                layout,
                chunk_selection,
                out_selection,
                complete,
                block,
            )
        )
    return jobs


def shares(jobs: list[ChunkJob]) -> list[list[ChunkJob]]:
    """``jobs`` in runs of consecutive chunks, one per thread zarr lets run at once."""
    # one thread hop per run rather than per chunk
    if not jobs:
        return []
    from zarr import config

    limit = config.get("async.concurrency")
    workers = config.get("threading.max_workers", None) or os.cpu_count() or 1
    n = max(1, min(len(jobs), limit or len(jobs), workers))
    size = -(-len(jobs) // n)
    return [jobs[i : i + size] for i in range(0, len(jobs), size)]
