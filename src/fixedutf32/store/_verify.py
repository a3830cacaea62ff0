"""``convert(verify=True)``: both stores read back with zarr-python, compared element-wise."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ._arrays import ArrayPlan, Index, Node
from ._conversions import Conversion
from ._plans import Problem
from ._stores import StoreHandle

__all__ = ["compare_stores"]


def compare_stores(
    src: StoreHandle,
    dst: StoreHandle,
    conversions: Sequence[Conversion],
    copies: Sequence[Node],
    skipped_chunks: Sequence[Problem],
) -> list[str]:
    """What differs between converted/copied arrays, one line each, read through zarr-python."""
    # skipped_chunks: source chunks written as the fill value, which the destination must hold.
    import zarr

    mismatches: list[str] = []
    skipped: dict[str, list[Index]] = {}
    for problem in skipped_chunks:
        if problem.chunk is not None:  # always: a skipped chunk has its index
            skipped.setdefault(problem.array, []).append(problem.chunk)
    paths = [conversion.path for conversion in conversions] + [node.path for node in copies]
    plans = {conversion.path: conversion.source for conversion in conversions}
    for path in paths:
        plan = plans.get(path)  # None for a copied array
        try:
            a = zarr.open_array(store=src.store, path=path, mode="r")
            b = zarr.open_array(store=dst.store, path=path, mode="r")
        except Exception as exc:  # noqa: BLE001 - zarr's reason, as a difference found
            mismatches.append(f"{path or '/'}: cannot be opened: {_one_line(exc)}")
            continue
        if a.shape != b.shape:
            mismatches.append(f"{path or '/'}: shape {a.shape} became {b.shape}")
            continue
        step = b.chunks if b.ndim else ()
        for index in np.ndindex(*[math.ceil(s / c) for s, c in zip(a.shape, step)]):
            region = tuple(
                slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(index, step, a.shape)
            )
            try:
                x, y = np.asarray(a[region]), np.asarray(b[region])
            except Exception as exc:  # noqa: BLE001 - a chunk zarr cannot read is a difference
                mismatches.append(
                    f"{path or '/'}: elements {_show(region)} cannot be read: {_one_line(exc)}"
                )
                continue
            mask = _skipped_mask(plan, skipped.get(path, ()), region, x.shape)
            if not _equal(x, y, mask, "" if plan is None else plan.fill):
                mismatches.append(f"{path or '/'}: elements differ in {_show(region)}")
    return mismatches


def _skipped_mask(
    plan: ArrayPlan | None,
    chunks: Sequence[Index],
    region: tuple[slice, ...],
    shape: tuple[int, ...],
) -> npt.NDArray[np.bool_]:
    """True where a skipped source chunk lies inside ``region`` (none in a copied array)."""
    mask = np.zeros(shape, bool)
    if plan is None:
        return mask
    for chunk in chunks:
        target, _ = plan.meta.chunk_region(chunk)
        inner = tuple(
            slice(max(t.start, r.start) - r.start, max(min(t.stop, r.stop) - r.start, 0))
            for t, r in zip(target, region)
        )
        mask[inner] = True
    return mask


def _equal(
    x: npt.NDArray[Any], y: npt.NDArray[Any], mask: npt.NDArray[np.bool_], fill: str
) -> bool:
    """Whether ``x`` and ``y`` hold the same elements; ``fill`` in ``y`` where ``mask``."""
    if x.dtype.kind in "UTO" or y.dtype.kind in "UTO":
        x, y = x.astype(object), y.astype(object)
        if mask.any():
            if not all(v == fill for v in y[mask].tolist()):
                return False
            return bool(x[~mask].tolist() == y[~mask].tolist())
        return bool(x.tolist() == y.tolist())  # tolist: Python objects (a scalar when 0-d)
    return np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")


def _one_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _show(region: tuple[slice, ...]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in region) + "]"
