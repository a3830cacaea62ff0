"""Transcoding rows for ``fixedutf32 bench`` and the data the benchmarks share.

Every figure is a throughput over the bytes of the UTF-32 chunk, measured in the
same run as its baselines: ``numpy.copyto`` of those bytes into a preallocated
array (memcpy) and the NumPy or pyarrow way of doing the same conversion.
"""

import numpy as np

from .transcode import decode_vlen_utf8, encode_vlen_utf8, from_utf8, to_string_dtype, to_utf8

WIDTH = 16  # code points per element: 64-byte elements

_ASCII_WORDS = (
    "the of and to in is was for on that with as by at from his her which or an be "
    "this are had not but were all have one they their said has more time would been "
    "2024 data chunk array value 17 zarr 3.14 store id_42 key=value path/to/file"
).split()
_ACCENTED_WORDS = ["café", "naïve", "résumé", "Zürich", "—", "“quoted”", "São", "Ångström", "½"]
_MIXED_WORDS = [
    "Привет", "мир", "данные", "你好", "世界", "数据", "東京", "こんにちは", "한국어",
    "Καλημέρα", "مرحبا", "שלום", "🎉", "😀", "🚀", "👍🏽", "data", "ok", "42", "x",
]


def make_text(kind, size_bytes, width=WIDTH, seed=0):
    """A native-order ``U{width}`` array of about ``size_bytes`` bytes of text.

    ``kind`` is ``"ascii"`` (English-like words, 1 word in 20 with a non-ASCII
    character) or ``"mixed"`` (Cyrillic, CJK, Japanese, Korean, Greek, Arabic,
    Hebrew, emoji and some ASCII).  Each string is whole words filling 50% to
    100% of the width.  A pool of 4096 strings is generated and tiled.
    """
    rng = np.random.default_rng(seed)
    if kind == "ascii":
        vocabulary = _ASCII_WORDS * 19 + _ACCENTED_WORDS * 2
    elif kind == "mixed":
        vocabulary = _MIXED_WORDS
    else:
        raise ValueError(f"kind must be 'ascii' or 'mixed', got {kind!r}")
    pool = []
    for _ in range(4096):
        target = int(rng.integers(width // 2, width + 1))
        text = ""
        for _ in range(64):
            word = vocabulary[int(rng.integers(len(vocabulary)))]
            candidate = f"{text} {word}" if text else word
            if len(candidate) > target:
                break
            text = candidate
        pool.append(text)
    count = max(size_bytes // (4 * width), 1)
    return np.resize(np.array(pool, dtype=f"=U{width}"), count)


# Issue targets: throughput over memcpy of the UTF-32 bytes, whatever the size.
TARGETS = {
    ("to_utf8", "ascii"): 0.5,
    ("to_utf8", "mixed"): 0.25,
    ("from_utf8", "ascii"): 0.4,
    ("from_utf8", "mixed"): 0.2,
}


def _baselines(u):
    """The NumPy and pyarrow ways of each conversion: {kernel: [(label, function)]}."""
    try:
        from numpy.dtypes import StringDType
    except ImportError:  # NumPy < 2
        StringDType = None
    try:
        import pyarrow
    except ImportError:
        pyarrow = None
    try:
        import numcodecs
    except ImportError:
        numcodecs = None
    ways = {name: [] for name in ("to_utf8", "from_utf8", "encode_vlen_utf8", "decode_vlen_utf8", "to_string_dtype")}
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
        ways["encode_vlen_utf8"].append(("numcodecs VLenUTF8", lambda: codec.encode(u.astype(object))))
        ways["decode_vlen_utf8"].append(("numcodecs VLenUTF8", lambda: codec.decode(encoded).astype(u.dtype)))
    return ways


def transcode_bench_rows(size_bytes, repeat=5, progress=None):
    """Measure the transcoding kernels on ``size_bytes`` of UTF-32 text, in one run.

    Each kernel is timed alternately with ``numpy.copyto`` of the same UTF-32
    bytes into a preallocated array (medians of ``repeat`` rounds, as in
    ``fixedutf32.bench``), then its NumPy/pyarrow baselines.

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
        One row per kernel and text kind, with the keys of
        ``fixedutf32.bench`` rows: ``kernel``, ``size`` (bytes), ``gbps`` (GB/s
        of UTF-32 bytes), ``memcpy_gbps``, ``ratio_memcpy``, ``ratio_numpy``
        (throughput over the fastest NumPy/pyarrow way, NaN when none is
        installed), ``target`` and ``met`` (the issue's memcpy ratio, or None);
        plus ``baseline``, naming the way ``ratio_numpy`` compares with.

    Examples
    --------
    >>> rows = transcode_bench_rows(1 << 16, repeat=1)
    >>> sorted(rows[0])
    ['baseline', 'gbps', 'kernel', 'memcpy_gbps', 'met', 'ratio_memcpy', 'ratio_numpy', 'size', 'target']
    """
    from .bench import _alternate, _median_time

    rows = []
    slow_repeat = max(1, min(repeat, 3))
    for kind in ("ascii", "mixed"):
        u = make_text(kind, size_bytes)
        nbytes = u.nbytes
        source = u.view(np.uint8).reshape(-1)
        copy_target = np.empty_like(source)
        offsets, values = to_utf8(u)
        vlen = encode_vlen_utf8(u)
        ways = _baselines(u)
        length_bytes = u.dtype.itemsize
        kernels = [
            ("to_utf8", lambda: to_utf8(u)),
            ("from_utf8", lambda: from_utf8(offsets, values, length_bytes)),
            ("encode_vlen_utf8", lambda: encode_vlen_utf8(u)),
            ("decode_vlen_utf8", lambda: decode_vlen_utf8(vlen, length_bytes)),
            ("to_string_dtype", lambda: to_string_dtype(u)),
        ]
        for name, func in kernels:
            if progress:
                progress(f"{name} ({kind}) @ {size_bytes >> 20} MiB")
            seconds, memcpy = _alternate(func, lambda: np.copyto(copy_target, source), repeat)
            timed = [(_median_time(way, slow_repeat), label) for label, way in ways[name]]
            ratio, baseline = float("nan"), None
            if timed:
                fastest, baseline = min(timed)
                ratio = fastest / seconds
            target = TARGETS.get((name, kind))
            rows.append(
                {
                    "kernel": f"{name} ({kind})",
                    "size": nbytes,
                    "gbps": nbytes / seconds / 1e9,
                    "memcpy_gbps": nbytes / memcpy / 1e9,
                    "ratio_memcpy": memcpy / seconds,
                    "ratio_numpy": ratio,
                    "target": target,
                    "met": None if target is None else memcpy / seconds >= target,
                    "baseline": baseline,
                }
            )
    return rows


def _main():  # pragma: no cover - a convenience for development
    import sys

    sizes = [int(s) for s in sys.argv[1:]] or [1 << 20, 64 << 20]
    print(f"{'kernel':28s} {'size':>9s} {'GB/s':>7s} {'x memcpy':>9s} {'x numpy':>8s}  target / baseline")
    for size in sizes:
        for row in transcode_bench_rows(size, repeat=9):
            target = ""
            if row["target"] is not None:
                target = f">= {row['target']:.2f} {'met' if row['met'] else 'MISSED'}"
            print(
                f"{row['kernel']:28s} {row['size'] / 2**20:7.1f}Mi {row['gbps']:7.2f} "
                f"{row['ratio_memcpy']:9.2f} {row['ratio_numpy']:8.1f}  {target:18s} {row['baseline'] or ''}"
            )


if __name__ == "__main__":  # pragma: no cover
    _main()
