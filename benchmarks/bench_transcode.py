"""pytest-benchmark groups for transcoding: each kernel beside memcpy and the NumPy/pyarrow ways.

Run with ``python -m pytest benchmarks/bench_transcode.py`` (kept out of the
default test run).  Every group holds one kernel on one kind of text at one
size: ``memcpy`` (``numpy.copyto`` of the UTF-32 bytes into a preallocated
array), this package, and the NumPy/pyarrow/numcodecs ways of doing the same
that are installed (``fixedutf32.bench.cases.transcode_calls``, which the
transcoding rows of ``fixedutf32 bench`` time too).  Read the rows of a group
as ratios; absolute times drift on shared machines.

Text (``fixedutf32.bench.cases.make_text``): 16-code-point elements,
``ascii`` = English-like words with 1 word in 20 accented, ``mixed`` =
Cyrillic, CJK, Japanese, Korean, Greek, Arabic, Hebrew, emoji and some ASCII.
"""

import numpy as np
import pytest

from fixedutf32.bench.cases import MiB, make_text, memcpy, transcode_calls

SIZES = [1 * MiB, 64 * MiB]
KINDS = ["ascii", "mixed"]
_CACHE = {}


def data(nbytes, kind):
    """The text's bytes and every kernel's ways on it (one size and kind cached at a time)."""
    if (nbytes, kind) not in _CACHE:
        _CACHE.clear()
        u = make_text(kind, nbytes)
        _CACHE[nbytes, kind] = u.view(np.uint8).reshape(-1), transcode_calls(u)
    return _CACHE[nbytes, kind]


# kernel -> memcpy, fixedutf32 and each installed NumPy / pyarrow / numcodecs way
PAIRS = [
    (kernel, way)
    for kernel, ways in transcode_calls(make_text("ascii", 64)).items()
    for way in ["memcpy", *ways]
]


@pytest.mark.parametrize("nbytes", SIZES, ids=["1MiB", "64MiB"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("kernel, way", PAIRS)
def test_transcode(benchmark, kernel, kind, nbytes, way):
    utf32, calls = data(nbytes, kind)
    benchmark.group = f"{kernel} ({kind}) @ {nbytes // MiB} MiB"
    benchmark.extra_info["bytes"] = utf32.nbytes
    benchmark(memcpy(utf32.nbytes, utf32) if way == "memcpy" else calls[kernel][way])
