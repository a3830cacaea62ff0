"""The chunks of a fixed_length_utf32 array checked: every code unit, the longest string."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from .._arguments import ByteView
from .._source import ElementLayout, Scratch, borrowed_scratch, thread_scratch
from ..errors import FixedUTF32Error, InvalidCodePointError
from ._arrays import ArrayPlan, Index, memory_order
from ._plans import Problem, chunk_problem
from ._run import StoreRef, resolve

__all__ = ["KeyCheck", "KeyLongest", "check_chunk", "check_key", "check_keys"]


def _code_point_problems(
    plan: ArrayPlan, key: str, index: Index, data: ByteView, budget: int
) -> list[Problem]:
    """Every invalid code unit of a chunk known to hold one, up to ``budget``."""
    elements = _elements(plan)
    return [chunk_problem(plan, key, index, e) for e in elements.invalid_units(data, budget)]


def _elements(plan: ArrayPlan) -> ElementLayout:
    decoder = plan.reader.decoder
    assert decoder is not None  # a fixed_length_utf32 array's reader sizes its chunks
    return decoder.elements


def _longest(plan: ArrayPlan, index: Index, lengths: npt.NDArray[np.intp]) -> int:
    meta = plan.meta
    if lengths.size == 0:
        return 0
    if not plan.grid.is_edge(index):
        return int(lengths.max())
    _, source = plan.grid.region(index)
    inside = lengths.reshape(meta.chunk_shape, order=memory_order(meta))[source]
    return int(inside.max()) if inside.size else 0


def check_chunk(
    plan: ArrayPlan, key: str, index: Index, data: ByteView, budget: int
) -> tuple[list[Problem], int]:
    """(problems, longest) for one decoded chunk of exactly :meth:`ArrayPlan.chunk_nbytes`."""
    elements = _elements(plan)
    lengths = thread_scratch().intp("lengths", plan.grid.chunk_elements)
    try:
        elements.longest(data, lengths)
        problems: list[Problem] = []
    except InvalidCodePointError:
        problems = _code_point_problems(plan, key, index, data, budget)
        elements.longest(data, lengths, validate=False)
    return problems, _longest(plan, index, lengths)


class KeyLongest(TypedDict):
    """The longest string under one key, and the problems met reading it."""

    path: str
    chunks: int
    longest: int
    problems: list[Problem]


class KeyCheck(KeyLongest):
    """What :func:`check_key` found under one key."""

    present: int
    missing: int
    bytes_read: int


class _ChunkCheck:
    """Checks the chunks of one key as they are read: each block validated while in cache."""

    # A block with an invalid unit is only marked; its chunk is searched for every one once whole.

    def __init__(
        self, plan: ArrayPlan, result: KeyCheck, max_errors: int, scratch: Scratch
    ) -> None:
        self.plan, self.result, self.max_errors = plan, result, max_errors
        self.key = ""  # the key being read
        elements = _elements(plan)
        self.elements = elements
        self.length_bytes = elements.length_bytes
        self.lengths = scratch.intp("lengths", plan.grid.chunk_elements)
        self.longest = 0
        self.bad = False

    def block(self, index: Index, block: memoryview, offset: int) -> None:
        if not self.bad and not self.plan.grid.is_edge(index):
            # Only the longest string is kept: no lengths are written.
            try:
                self.longest = max(self.longest, self.elements.longest_string(block))
                return
            except InvalidCodePointError:
                self.bad = True
        # An edge chunk's padding is left out of its longest string: each
        # length is kept (and a bad block's, counted without checking).
        start = offset // self.length_bytes
        lengths = self.lengths[start : start + block.nbytes // self.length_bytes]
        try:
            self.longest = max(self.longest, self.elements.longest(block, lengths))
        except InvalidCodePointError:
            self.bad = True
            self.elements.longest(block, lengths, validate=False)

    def whole(self, index: Index, chunks: list[Index], longest: int) -> None:
        """A whole shard checked at once (none of its chunks at the edge): all present, valid."""
        self.result["present"] += len(chunks)
        self.result["longest"] = max(self.result["longest"], longest)

    def chunk(self, index: Index, data: memoryview | None, error: FixedUTF32Error | None) -> None:
        result, plan = self.result, self.plan
        bad, longest = self.bad, self.longest
        self.bad, self.longest = False, 0
        problems = result["problems"]
        budget = self.max_errors - len(problems)
        result["present"] += 1  # stored, whether it reads or not
        if data is None:
            assert error is not None  # read_key gives each chunk's data or an error
            if budget > 0:
                problems.append(chunk_problem(plan, self.key, index, error))
            return
        if bad and budget > 0:
            problems.extend(_code_point_problems(plan, self.key, index, data, budget))
        if plan.grid.is_edge(index):
            longest = _longest(plan, index, self.lengths)
        result["longest"] = max(result["longest"], longest)


def check_keys(
    ref: StoreRef, plan: ArrayPlan, key_indices: Sequence[Index], max_errors: int
) -> KeyCheck:
    """Check the chunks under some keys of one array (a task); a dict of counts and problems."""
    # Several keys per task so the cost is the reading, not the scheduling; stops after max_errors.
    handle = resolve(ref)
    result: KeyCheck = {
        "path": plan.path,
        "chunks": 0,
        "present": 0,
        "missing": 0,
        "bytes_read": 0,
        "longest": 0,
        "problems": [],
    }
    with borrowed_scratch() as scratch:
        checker = _ChunkCheck(plan, result, max_errors, scratch)
        for key_index in key_indices:
            chunks = plan.chunks_in_key(key_index)
            present = result["present"]
            checker.key = plan.key(key_index)
            nread = plan.read_key(
                handle,
                key_index,
                checker.chunk,
                on_block=checker.block,
                scratch=scratch,
                on_longest=checker.whole,
            )
            result["chunks"] += chunks
            result["bytes_read"] += nread or 0
            result["missing"] += chunks - min(result["present"] - present, chunks)
            if len(result["problems"]) >= max_errors:
                break
    return result


def check_key(ref: StoreRef, plan: ArrayPlan, key_index: Index, max_errors: int) -> KeyCheck:
    """:func:`check_keys` of one key."""
    return check_keys(ref, plan, (key_index,), max_errors)
