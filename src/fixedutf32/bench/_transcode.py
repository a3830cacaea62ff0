"""Transcoding rows of ``fixedutf32 bench``: UTF-32 to and from UTF-8 against memcpy and NumPy.

Every figure is a throughput over the bytes of the UTF-32 chunk, measured in the
same run as its baselines: ``numpy.copyto`` of those bytes into a preallocated
array (memcpy) and the NumPy or pyarrow way of doing the same conversion.
"""

import importlib.util
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..transcode import decode_vlen_utf8, encode_vlen_utf8, from_utf8, to_string_dtype, to_utf8
from ._report import TranscodeRow
from ._targets import judge
from ._timing import Progress, Timed, alternate, format_size, gbps, median_time, memcpy
from .cases import make_text


def _baselines(u: npt.NDArray[np.str_]) -> dict[str, list[tuple[str, Timed]]]:
    """The NumPy and pyarrow ways of each conversion: {kernel: [(label, function)]}."""
    try:
        from numpy.dtypes import StringDType
    except ImportError:  # NumPy < 2
        StringDType = None  # type: ignore[assignment,misc]
    try:
        import pyarrow
    except ImportError:
        pyarrow = None
    try:
        import numcodecs
    except ImportError:
        numcodecs = None
    ways: dict[str, list[tuple[str, Timed]]] = {
        name: []
        for name in (
            "to_utf8",
            "from_utf8",
            "encode_vlen_utf8",
            "decode_vlen_utf8",
            "to_string_dtype",
        )
    }
    if StringDType is not None:
        t = u.astype(StringDType())
        ways["to_utf8"].append(("astype(StringDType())", lambda: u.astype(StringDType())))
        ways["to_string_dtype"].append(("astype(StringDType())", lambda: u.astype(StringDType())))
        ways["from_utf8"].append(("StringDType astype U", lambda: t.astype(u.dtype)))
    if pyarrow is not None:
        ways["to_utf8"].append(("pyarrow.array", lambda: pyarrow.array(u)))
    if numcodecs is not None:
        codec = numcodecs.VLenUTF8()
        objects = u.astype(object)
        encoded = codec.encode(objects)
        ways["encode_vlen_utf8"].append(
            ("numcodecs VLenUTF8", lambda: codec.encode(u.astype(object)))
        )
        ways["decode_vlen_utf8"].append(
            ("numcodecs VLenUTF8", lambda: codec.decode(encoded).astype(u.dtype))
        )
    return ways


def missing_baseline_notes(left_out: Sequence[str]) -> list[str]:
    """Notes on rows left out, or compared differently, for want of an optional package.

    ``left_out`` names the kernels whose rows had no baseline to compare with.
    """
    missing = [name for name in ("pyarrow", "numcodecs") if importlib.util.find_spec(name) is None]
    notes: list[str] = []
    if left_out:
        why = (
            f"not installed: {', '.join(missing)}"
            if missing
            else "NumPy has no StringDType before 2.0"
        )
        notes.append(f"left out for want of a NumPy-side baseline ({why}): {', '.join(left_out)}")
    if "pyarrow" in missing:
        notes.append(
            "to_utf8 x NumPy compares with NumPy's StringDType cast only (pyarrow is not installed)"
        )
    return notes


def measure(
    size_bytes: int, repeat: int = 5, progress: Progress | None = None
) -> list[TranscodeRow]:
    """Measure the transcoding kernels on ``size_bytes`` of UTF-32 text, in one run.

    Each kernel is timed alternately with ``numpy.copyto`` of the same UTF-32
    bytes into a preallocated array (medians of ``repeat`` rounds, as the
    kernel rows are), then its NumPy/pyarrow baselines.

    Parameters
    ----------
    size_bytes : int
        Size of the UTF-32 chunk for each kernel.
    repeat : int
        Rounds per measurement; baselines run ``min(repeat, 3)`` times.
    progress : callable, optional
        Called with a short text before each kernel.

    Returns
    -------
    list of dict
        One row per kernel and text kind, with the keys of the kernel
        rows: ``kernel``, ``size`` (bytes), ``gbps`` (GB/s
        of UTF-32 bytes), ``memcpy_gbps``, ``ratio_memcpy``, ``floor``
        (``"memcpy"``) and ``ratio_floor`` (the same ratio), ``ratio_numpy``
        (throughput over the fastest NumPy/pyarrow way, NaN when none is
        installed), ``target`` and ``met`` (the issue's memcpy ratio, or None);
        plus ``baseline``, naming the way ``ratio_numpy`` compares with.

    Examples
    --------
    >>> rows = measure(1 << 16, repeat=1)
    >>> sorted(rows[0])
    ['baseline', 'floor', 'gbps', 'kernel', 'memcpy_gbps', 'met', 'ratio_floor', 'ratio_memcpy',
     'ratio_numpy', 'size', 'target']
    """
    rows: list[TranscodeRow] = []
    slow_repeat = max(1, min(repeat, 3))
    for kind in ("ascii", "mixed"):
        u = make_text(kind, size_bytes)
        nbytes = u.nbytes
        baseline = memcpy(nbytes, u.view(np.uint8).reshape(-1))
        offsets, values = to_utf8(u)
        vlen = encode_vlen_utf8(u)
        ways = _baselines(u)
        length_bytes = u.dtype.itemsize
        kernels: list[tuple[str, Timed]] = [
            ("to_utf8", lambda: to_utf8(u)),
            ("from_utf8", lambda: from_utf8(offsets, values, length_bytes)),
            ("encode_vlen_utf8", lambda: encode_vlen_utf8(u)),
            ("decode_vlen_utf8", lambda: decode_vlen_utf8(vlen, length_bytes)),
            ("to_string_dtype", lambda: to_string_dtype(u)),
        ]
        for name, func in kernels:
            if progress:
                progress(f"{name} ({kind}) @ {format_size(size_bytes)}")
            seconds, memcpy_seconds = alternate(func, baseline, repeat)
            timed = [(median_time(way, slow_repeat), label) for label, way in ways[name]]
            ratio, fastest_way = float("nan"), None
            if timed:
                fastest, fastest_way = min(timed)
                ratio = fastest / seconds
            row = f"{name} ({kind})"
            rows.append(
                {
                    "kernel": row,
                    "size": nbytes,
                    "gbps": gbps(nbytes, seconds),
                    "memcpy_gbps": gbps(nbytes, memcpy_seconds),
                    "ratio_memcpy": memcpy_seconds / seconds,
                    "floor": "memcpy",
                    "ratio_floor": memcpy_seconds / seconds,
                    "ratio_numpy": ratio,
                    **judge("transcode", row, memcpy_seconds / seconds, nbytes),
                    "baseline": fastest_way,
                }
            )
    return rows
