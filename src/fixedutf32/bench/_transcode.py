"""Transcoding rows of ``fixedutf32 bench``: UTF-32 to and from UTF-8 against memcpy and NumPy."""

import importlib.util
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..transcode import decode_vlen_utf8, encode_vlen_utf8, from_utf8, to_string_dtype, to_utf8
from ._report import TranscodeRow
from ._targets import judge
from ._timing import Progress, Timed, alternate, format_size, gbps, median_time, memcpy
from .cases import make_text

_KERNELS = ("to_utf8", "from_utf8", "encode_vlen_utf8", "decode_vlen_utf8", "to_string_dtype")


def _baselines(u: npt.NDArray[np.str_]) -> dict[str, list[tuple[str, Timed]]]:
    """The NumPy, pyarrow and numcodecs ways of each conversion that are installed."""
    ways: dict[str, list[tuple[str, Timed]]] = {name: [] for name in _KERNELS}
    try:
        from numpy.dtypes import StringDType
    except ImportError:  # NumPy < 2
        pass
    else:
        t = u.astype(StringDType())
        ways["to_utf8"].append(("astype(StringDType())", lambda: u.astype(StringDType())))
        ways["to_string_dtype"].append(("astype(StringDType())", lambda: u.astype(StringDType())))
        ways["from_utf8"].append(("StringDType astype U", lambda: t.astype(u.dtype)))
    if importlib.util.find_spec("pyarrow") is not None:
        import pyarrow

        ways["to_utf8"].append(("pyarrow.array", lambda: pyarrow.array(u)))
    if importlib.util.find_spec("numcodecs") is not None:
        import numcodecs

        codec = numcodecs.VLenUTF8()
        encoded = codec.encode(u.astype(object))
        way = "numcodecs VLenUTF8"
        ways["encode_vlen_utf8"].append((way, lambda: codec.encode(u.astype(object))))
        ways["decode_vlen_utf8"].append((way, lambda: codec.decode(encoded).astype(u.dtype)))
    return ways


def missing_baseline_notes(left_out: Sequence[str]) -> list[str]:
    """Notes on the kernels ``left_out`` (no baseline), and on a missing pyarrow."""
    missing = [name for name in ("pyarrow", "numcodecs") if importlib.util.find_spec(name) is None]
    notes = []
    if left_out:
        why = f"not installed: {', '.join(missing)}" if missing else "NumPy has no StringDType"
        notes.append(f"left out for want of a NumPy-side baseline ({why}): {', '.join(left_out)}")
    if "pyarrow" in missing:
        notes.append(
            "to_utf8 x NumPy compares with NumPy's StringDType cast only (pyarrow is not installed)"
        )
    return notes


def measure(
    size_bytes: int, repeat: int = 5, progress: Progress | None = None
) -> list[TranscodeRow]:
    """Each transcoding kernel on ``size_bytes`` of ascii and of mixed text, in kernel rows
    (floor: memcpy of the UTF-32 bytes) naming the fastest installed NumPy-side ``baseline``."""
    rows: list[TranscodeRow] = []
    for kind in ("ascii", "mixed"):
        u = make_text(kind, size_bytes)
        nbytes, length_bytes = u.nbytes, u.dtype.itemsize
        baseline = memcpy(nbytes, u.view(np.uint8).reshape(-1))
        offsets, values = to_utf8(u)
        vlen = encode_vlen_utf8(u)
        ways = _baselines(u)
        kernels: dict[str, Timed] = {
            "to_utf8": lambda: to_utf8(u),
            "from_utf8": lambda: from_utf8(offsets, values, length_bytes),
            "encode_vlen_utf8": lambda: encode_vlen_utf8(u),
            "decode_vlen_utf8": lambda: decode_vlen_utf8(vlen, length_bytes),
            "to_string_dtype": lambda: to_string_dtype(u),
        }
        for name, func in kernels.items():
            if progress:
                progress(f"{name} ({kind}) @ {format_size(size_bytes)}")
            seconds, memcpy_seconds = alternate(func, baseline, repeat)
            timed = [(median_time(way, max(1, min(repeat, 3))), label) for label, way in ways[name]]
            fastest, fastest_way = min(timed) if timed else (float("nan"), None)
            row, ratio = f"{name} ({kind})", memcpy_seconds / seconds
            rows.append(
                {
                    "kernel": row,
                    "size": nbytes,
                    "gbps": gbps(nbytes, seconds),
                    "memcpy_gbps": gbps(nbytes, memcpy_seconds),
                    "ratio_memcpy": ratio,
                    "floor": "memcpy",
                    "ratio_floor": ratio,
                    "ratio_numpy": fastest / seconds,
                    **judge("transcode", row, ratio, nbytes),
                    "baseline": fastest_way,
                }
            )
    return rows
