"""What a type checker infers for the functions with ``out=``; checked by mypy, not run.

``mypy tests/typing`` (the lint job of ``.ci/run``) fails if an inferred type
differs from the one asserted here.
"""

from typing import Any, assert_type

import numpy as np
import numpy.typing as npt

from fixedutf32 import encode_chunk, repad
from fixedutf32.transcode import decode_vlen_utf8, from_arrow, from_utf8

U8 = npt.NDArray[np.uint8]
Str = npt.NDArray[np.str_]
offsets = np.array([0, 1])
out_u1: np.ndarray[tuple[int], np.dtype[Any]] = np.empty(1, "<U1")

# Without out (or with out=None): a new array of the function's default type.
assert_type(encode_chunk(["a"]), U8)
assert_type(encode_chunk(["a"], out=None), U8)
assert_type(repad(b"a\0\0\0", 4, 8), U8)
assert_type(from_utf8(offsets, b"a", 4), Str)
assert_type(from_utf8([0, 1], b"a", 4), Str)  # offsets: any array_like of int
assert_type(decode_vlen_utf8(b"\0\0\0\0", 4), Str)
assert_type(from_arrow(None, 4), Str)

# With out: out's own type, as given.
assert_type(encode_chunk(["a"], out=bytearray(4)), bytearray)
assert_type(repad(b"a\0\0\0", 4, 8, out=memoryview(bytearray(8))), memoryview)
assert_type(from_utf8(offsets, b"a", 4, out=out_u1), np.ndarray[tuple[int], np.dtype[Any]])
