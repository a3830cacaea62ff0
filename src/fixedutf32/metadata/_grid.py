"""Regular chunk grids: shapes and extents checked, chunk sizes bounded, chunks in C order."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy

from ..errors import MetadataError
from ._json import _MAX_EXTENT, _fail, _is_json_int, _show


def _check_shape(value: Any, key: str, *, minimum: int) -> tuple[int, ...]:
    expected = f"a JSON array of integers >= {minimum}"
    if not isinstance(value, (list, tuple)):
        raise _fail(key, expected, value)
    for i, n in enumerate(value):
        if not _is_json_int(n) or n < minimum:
            raise _fail(f"{key}[{i}]", f"an integer >= {minimum}", n)
        if n > _MAX_EXTENT:
            raise _fail(f"{key}[{i}]", f"an integer <= 2**63 - 1 ({_MAX_EXTENT}, int64)", n)
    return tuple(value)


def _as_shape(value: Any, key: str, *, minimum: int) -> tuple[int, ...]:
    """A shape given in Python: a sequence of ints (NumPy integers too, not bools)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, numpy.ndarray)):
        raise _fail(key, f"a sequence (tuple or list) of integers >= {minimum}", value)
    return _check_shape(
        [int(n) if isinstance(n, numpy.integer) else n for n in value], key, minimum=minimum
    )


def _check_chunk_size(chunks: tuple[int, ...], length_bytes: int, key: str) -> None:
    """One chunk must fit in one buffer: decode_chunk makes it one NumPy array."""
    nbytes = length_bytes
    for n in chunks:
        nbytes *= n
    if nbytes > sys.maxsize:
        raise MetadataError(
            f"{key}: expected a chunk of at most {sys.maxsize} bytes (the largest buffer), "
            f"got {_show(list(chunks))} elements of length_bytes {length_bytes}, "
            f"{nbytes} bytes"
        )
