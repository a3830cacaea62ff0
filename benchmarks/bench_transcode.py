"""pytest-benchmark groups for transcoding: each kernel beside memcpy and the NumPy/pyarrow ways.

Run with ``python -m pytest benchmarks/bench_transcode.py`` (kept out of the
default test run).  Every group holds one kernel on one kind of text at one
size: ``memcpy`` (``numpy.copyto`` of the UTF-32 bytes into a preallocated
array), this package, and the NumPy/pyarrow/numcodecs ways of doing the same.
Read the rows of a group as ratios; absolute times drift on shared machines.
The same comparisons, as a table: ``fixedutf32 bench`` (its transcoding rows).

Text (``fixedutf32.bench.cases.make_text``): 16-code-point elements,
``ascii`` = English-like words with 1 word in 20 accented, ``mixed`` =
Cyrillic, CJK, Japanese, Korean, Greek, Arabic, Hebrew, emoji and some ASCII.
"""

import numpy as np
import pytest

from fixedutf32 import encode_chunk
from fixedutf32.bench.cases import make_text
from fixedutf32.transcode import (
    decode_vlen_utf8,
    encode_vlen_utf8,
    from_arrow,
    from_utf8,
    to_arrow,
    to_string_dtype,
    to_utf8,
)

MiB = 1 << 20
SIZES = [1 * MiB, 64 * MiB]
KINDS = ["ascii", "mixed"]
_CACHE = {}


def data(nbytes, kind):
    """The inputs of every kernel for one size and kind of text (one set cached at a time)."""
    key = (nbytes, kind)
    if key not in _CACHE:
        _CACHE.clear()
        u = make_text(kind, nbytes)
        offsets, values = to_utf8(u)
        _CACHE[key] = {
            "u": u,
            "bytes": u.view(np.uint8).reshape(-1),
            "offsets": offsets,
            "values": values,
            "vlen": encode_vlen_utf8(u),
        }
    return _CACHE[key]


def _string_dtype():
    try:
        from numpy.dtypes import StringDType
    except ImportError:
        pytest.skip("NumPy >= 2 needed for StringDType")
    return StringDType


def ways(kernel, d):
    """{way: function} for one kernel."""
    u = d["u"]
    width_bytes = u.dtype.itemsize
    if kernel == "to_utf8":
        StringDType = _string_dtype()
        pa = pytest.importorskip("pyarrow")
        return {
            "fixedutf32": lambda: to_utf8(u),
            "pyarrow.array": lambda: pa.array(u),
            "astype(StringDType())": lambda: u.astype(StringDType()),
        }
    if kernel == "from_utf8":
        StringDType = _string_dtype()
        t = u.astype(StringDType())
        return {
            "fixedutf32": lambda: from_utf8(d["offsets"], d["values"], width_bytes),
            "StringDType astype U": lambda: t.astype(u.dtype),
        }
    if kernel == "to_arrow":
        pa = pytest.importorskip("pyarrow")
        return {"fixedutf32": lambda: to_arrow(u), "pyarrow.array": lambda: pa.array(u)}
    if kernel == "from_arrow":
        pa = pytest.importorskip("pyarrow")
        arr = pa.array(u)
        return {
            "fixedutf32": lambda: from_arrow(arr, width_bytes),
            "to_numpy().astype(U)": lambda: arr.to_numpy(zero_copy_only=False).astype(u.dtype),
        }
    if kernel == "encode_vlen_utf8":
        numcodecs = pytest.importorskip("numcodecs")
        codec = numcodecs.VLenUTF8()
        return {
            "fixedutf32": lambda: encode_vlen_utf8(u),
            "numcodecs VLenUTF8": lambda: codec.encode(u.astype(object)),
        }
    if kernel == "decode_vlen_utf8":
        numcodecs = pytest.importorskip("numcodecs")
        codec = numcodecs.VLenUTF8()
        chunk = d["vlen"].tobytes()
        return {
            "fixedutf32": lambda: decode_vlen_utf8(chunk, width_bytes),
            "numcodecs VLenUTF8 + astype(U)": lambda: codec.decode(chunk).astype(u.dtype),
        }
    if kernel == "to_string_dtype":
        StringDType = _string_dtype()
        return {"fixedutf32": lambda: to_string_dtype(u), "astype(StringDType())": lambda: u.astype(StringDType())}
    if kernel == "StringDType -> U (encode_chunk)":
        StringDType = _string_dtype()
        t = u.astype(StringDType())
        return {
            "fixedutf32": lambda: encode_chunk(t, width_bytes, endian="little"),
            "astype(U)": lambda: t.astype(u.dtype),
        }
    raise ValueError(kernel)


# kernel -> its NumPy / pyarrow / numcodecs baselines (names as in ``ways``)
BASELINES = {
    "to_utf8": ["pyarrow.array", "astype(StringDType())"],
    "from_utf8": ["StringDType astype U"],
    "to_arrow": ["pyarrow.array"],
    "from_arrow": ["to_numpy().astype(U)"],
    "encode_vlen_utf8": ["numcodecs VLenUTF8"],
    "decode_vlen_utf8": ["numcodecs VLenUTF8 + astype(U)"],
    "to_string_dtype": ["astype(StringDType())"],
    "StringDType -> U (encode_chunk)": ["astype(U)"],
}
PAIRS = [(kernel, way) for kernel, others in BASELINES.items() for way in ["memcpy", "fixedutf32", *others]]


@pytest.mark.parametrize("nbytes", SIZES, ids=["1MiB", "64MiB"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("kernel, way", PAIRS)
def test_transcode(benchmark, kernel, kind, nbytes, way):
    d = data(nbytes, kind)
    if way == "memcpy":
        source = d["bytes"]
        target = np.empty_like(source)
        function = lambda: np.copyto(target, source)  # noqa: E731
    else:
        function = ways(kernel, d)[way]
    benchmark.group = f"{kernel} ({kind}) @ {nbytes // MiB} MiB"
    benchmark.extra_info["bytes"] = d["bytes"].nbytes
    benchmark(function)
