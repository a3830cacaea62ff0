"""What the benchmarks measure: generated text, each kernel beside the NumPy way, the timing,
the zarr configurations compared and the arrays they read (zarr imported only when used).

``fixedutf32 bench`` and the pytest-benchmark groups in ``benchmarks/`` share these, so that
both measure the same calls on the same data.  Every generator is seeded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pathlib
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..chunk import decode_chunk, encode_chunk, repad, str_lengths, validate
from ..transcode import (
    decode_vlen_utf8,
    encode_vlen_utf8,
    from_arrow,
    from_utf8,
    to_arrow,
    to_string_dtype,
    to_utf8,
)

if TYPE_CHECKING:
    from zarr.types import AnyArray

__all__ = ["WIDTH", "NATIVE", "FOREIGN", "Case", "sample_chunk", "make_text", "kernel_cases"]

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
WIDTH = 16  # code points per element (64 bytes), as in the targets
ELEMENT_BYTES = 4 * WIDTH
NATIVE = sys.byteorder
FOREIGN = "big" if NATIVE == "little" else "little"
Timed = Callable[[], object]  # a call without arguments: timed, or untimed around the timed ones
Progress = Callable[[str], object]  # called with a short message before each step
OURS = "fixedutf32"  # the way of transcode_calls that is the kernel's
FUSED_PATH = "zarr.core.codec_pipeline.FusedCodecPipeline"
INTEGRATION: dict[str, dict[str, str]] = {  # the zarr configuration of each configuration
    "stock": {},
    "fused": {"codec_pipeline.path": FUSED_PATH},
    "codec": {"codecs.bytes": "fixedutf32.zarr.BytesCodec"},
    "pipeline": {
        "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline",
        "codecs.bytes": "fixedutf32.zarr.BytesCodec",
    },
    # the pipeline, its results from the pool of freed buffers (docs/zarr.md)
    "pooled": {
        "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline",
        "codecs.bytes": "fixedutf32.zarr.BytesCodec",
        "ndbuffer": "fixedutf32.zarr.PooledNDBuffer",
    },
}
Selection = npt.NDArray[np.intp] | slice | None  # elements read: None, all


def quiet(message: str) -> None:
    """The progress display of a run that shows none."""


def seconds(function: Timed, before: Timed | None = None) -> float:
    """Seconds of one call of ``function``, ``before()`` untimed first."""
    if before is not None:
        before()
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def median_time(function: Timed, repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``function``."""
    return statistics.median(seconds(function) for _ in range(repeat))


def best_time(function: Timed, repeat: int, before: Timed | None = None) -> float:
    """Least seconds of ``repeat`` calls of ``function``, ``before()`` untimed ahead of each."""
    return min(seconds(function, before) for _ in range(repeat))


def in_turn(
    calls: Mapping[str, Timed],
    repeat: int,
    check: Callable[[Any], Any] = lambda result: None,
    before: Timed | None = None,
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """name -> seconds of each round of the calls in turn, and ``check`` of each first result."""
    # The first round is untimed (a warm-up); before() runs untimed ahead of every round.
    prepare = before or (lambda: None)
    prepare()
    checked = {name: check(call()) for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        prepare()
        for name, call in calls.items():
            times[name].append(seconds(call))
    return times, checked


def alternate(
    kernel: Timed, baseline: Timed, repeat: int, prepare: Timed | None = None
) -> tuple[float, float]:
    """Median times of ``kernel`` and ``baseline`` timed in turn; ``prepare()`` untimed first."""
    times, _ = in_turn({"kernel": kernel, "baseline": baseline}, repeat, before=prepare)
    return statistics.median(times["kernel"]), statistics.median(times["baseline"])


def repeated(call: Timed, times: int) -> Timed:
    """``call`` made ``times`` times in a row: one timing of calls too short to time alone."""

    def run() -> None:
        for _ in range(times):
            call()

    return run


def memcpy(nbytes: int, source: npt.NDArray[np.uint8] | None = None) -> Timed:
    """``numpy.copyto`` of ``nbytes`` (of ``source``) into a preallocated array: the baseline."""
    source = np.full(nbytes, 7, np.uint8) if source is None else source
    target = np.empty_like(source)
    return lambda: np.copyto(target, source)


def read_only_floor(source: npt.NDArray[np.uint8], tries: int = 5) -> Timed:
    """The fastest here of three NumPy reductions that read every byte and write one number."""
    units32, units64 = source.view(np.uint32), source.view(np.uint64)
    candidates: list[Timed] = [units32.max, partial(np.bitwise_or.reduce, units64), units64.sum]
    return min(candidates, key=lambda candidate: best_time(candidate, tries))


def rewrite_floor(buffer: npt.NDArray[np.uint8]) -> Timed:
    """``x | 0`` over 8-byte units in place: the floor of a kernel that rewrites its input."""
    units64 = buffer.view(np.uint64)
    return partial(np.bitwise_or, units64, np.uint64(0), out=units64)


def gbps(nbytes: int, seconds: float) -> float:
    """Throughput in GB/s (10**9 bytes a second)."""
    return nbytes / seconds / 1e9


def format_size(nbytes: int) -> str:
    """``1048576`` -> ``"1 MiB"``; whole KiB and MiB are named, others in bytes."""
    for unit, name in ((MiB, "MiB"), (KiB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    return f"{nbytes} B"


_UNITS = {"gib": GiB, "mib": MiB, "kib": KiB, "g": GiB, "m": MiB, "k": KiB, "b": 1}


def parse_size(text: str) -> int:
    """``"1MiB"`` -> ``1048576`` (also GiB/KiB, G/M/K, B, plain bytes); ValueError otherwise."""
    text = text.strip().lower().replace(" ", "")
    suffix = next((s for s in _UNITS if text.endswith(s)), "")
    return int(float(text[: len(text) - len(suffix)]) * _UNITS[suffix]) if suffix else int(text)


def _on_a_cache_line(data: bytes, tries: int = 16) -> bytes:
    """``data``, or a copy starting on a 64-byte line (up to 1 MiB: larger ones stay put)."""
    # The kernels run about 20% slower on data 16 bytes off a line, and where a small
    # bytes object lands depends on the allocator's history: a 64 KiB row would drift.
    held = []  # failed copies stay alive, so that each new copy lands elsewhere
    for _ in range(tries):
        if len(data) > MiB or np.frombuffer(data, np.uint8).ctypes.data % 64 == 0:
            break
        held.append(data)
        data = bytes(memoryview(data))
    return data


def sample_units(
    n_elements: int, width: int = WIDTH, *, max_length: int | None = None, seed: int = 0
) -> npt.NDArray[np.uint32]:
    """Code units of ``n_elements`` generated strings: mostly ASCII, some Cyrillic, CJK, emoji."""
    rng = np.random.default_rng(seed)
    max_length = width if max_length is None else max_length
    shape = (n_elements, width)
    units = rng.integers(0x20, 0x7F, size=shape, dtype=np.uint32)
    pick = rng.random(shape)
    for where, low, high in (
        (pick < 0.06, 0x410, 0x450),
        (pick > 0.96, 0x4E00, 0x9FA5),
        (pick > 0.99, 0x1F600, 0x1F650),
    ):
        units = np.where(where, rng.integers(low, high, size=shape, dtype=np.uint32), units)
    lengths = rng.integers(max(max_length // 2, 0), max_length + 1, size=n_elements)
    units[np.arange(width)[None, :] >= lengths[:, None]] = 0
    return units


def sample_chunk(
    nbytes: int, endian: str, width: int = WIDTH, *, max_length: int | None = None, seed: int = 0
) -> bytes:
    """A new chunk of :func:`sample_units` text in ``endian`` byte order: ``nbytes`` rounded
    down to whole elements (at least one)."""
    units = sample_units(max(nbytes // (4 * width), 1), width, max_length=max_length, seed=seed)
    return units.astype("<u4" if endian == "little" else ">u4").tobytes()


def sample_array(count: int, seed: int = 0) -> npt.NDArray[np.str_]:
    """A ``<U16`` array of :func:`sample_units` text, made 16 MiB (a seed) at a time."""
    data = np.empty(count, f"<U{WIDTH}")
    units = data.view("<u4").reshape(count, WIDTH)
    step = 16 * MiB // ELEMENT_BYTES  # bounds the generator's memory
    for piece, start in enumerate(range(0, count, step)):
        stop = min(start + step, count)
        units[start:stop] = sample_units(stop - start, WIDTH, seed=seed + piece)
    return data


_ASCII_WORDS = (  # split by make_text
    "the of and to in is was for on that with as by at from his her which or an be this are had "
    "not but were all have one they their said has more time would been 2024 data chunk array "
    "value 17 zarr 3.14 store id_42 key=value path/to/file"
)
_ACCENTED_WORDS = "café naïve résumé Zürich — “quoted” São Ångström ½"
_MIXED_WORDS = (
    "Привет мир данные 你好 世界 数据 東京 こんにちは 한국어 Καλημέρα "
    "مرحبا שלום 🎉 😀 🚀 👍🏽 data ok 42 x"
)


def make_text(
    kind: str, size_bytes: int, width: int = WIDTH, seed: int = 0
) -> npt.NDArray[np.str_]:
    """A native-order ``U{width}`` array of about ``size_bytes`` bytes (at least one element) of
    whole words filling 50% to 100% of each string (a pool of 4096, tiled): ``"ascii"``,
    English-like, 1 word in 20 with a non-ASCII character; ``"mixed"``, Cyrillic, CJK,
    Japanese, Korean, Greek, Arabic, Hebrew, emoji and some ASCII; ValueError for another kind."""
    rng = np.random.default_rng(seed)
    if kind == "ascii":
        vocabulary = _ASCII_WORDS.split() * 19 + _ACCENTED_WORDS.split() * 2
    elif kind == "mixed":
        vocabulary = _MIXED_WORDS.split()
    else:
        raise ValueError(f"kind must be 'ascii' or 'mixed', got {kind!r}")
    pool = []
    for _ in range(4096):
        target, text = int(rng.integers(width // 2, width + 1)), ""
        for _ in range(64):
            word = vocabulary[int(rng.integers(len(vocabulary)))]
            if len(f"{text} {word}" if text else word) > target:
                break
            text = f"{text} {word}" if text else word
        pool.append(text)
    count = max(size_bytes // (4 * width), 1)
    return np.resize(np.array(pool, dtype=f"=U{width}"), count)


class Case(NamedTuple):
    """One kernel row: the kernel's call, the NumPy way of doing the same job, and its floor.

    The floor is the least memory traffic of the job, done by NumPy on the same bytes
    (docs/performance.md): ``numpy.copyto`` of ``nbytes`` when ``floor`` is None.
    """

    name: str
    nbytes: int  # bytes counted: the chunk read (repad: written)
    kernel: Timed
    numpy_way: Timed
    prepare: Timed | None  # untimed, before each call: restores an in-place buffer
    floor: Timed | None = None  # None: numpy.copyto of nbytes
    floor_name: str = "memcpy"  # what the floor does, as the report names it


def kernel_cases(nbytes: int) -> list[Case]:
    """Every kernel row of ``fixedutf32 bench`` on about ``nbytes`` of :func:`sample_chunk` text
    (whole elements), over buffers made here and kept alive by the calls."""
    size, unit = ELEMENT_BYTES, f"=U{WIDTH}"
    foreign_u = f"{'>' if FOREIGN == 'big' else '<'}U{WIDTH}"
    little = _on_a_cache_line(sample_chunk(nbytes, NATIVE))
    foreign = _on_a_cache_line(np.frombuffer(little, unit).astype(foreign_u).tobytes())
    native_array = np.frombuffer(little, unit)
    pristine = np.frombuffer(foreign, np.uint8)
    in_place = pristine.copy()
    narrow = np.frombuffer(sample_chunk(nbytes // 2, NATIVE, 8, seed=1), "=U8")
    narrow_bytes = _on_a_cache_line(narrow.tobytes())
    # Repad rows count output bytes: narrowing to `nbytes` reads twice that.
    fits = np.frombuffer(sample_chunk(2 * nbytes, NATIVE, WIDTH, max_length=8, seed=2), unit)
    fits_bytes = _on_a_cache_line(fits.tobytes())

    def numpy_validate() -> bool:
        units = np.frombuffer(little, np.uint32)
        return bool(((units <= 0x10FFFF) & ((units ^ 0xD800) >= 0x800)).all())

    def numpy_view() -> npt.NDArray[np.str_]:  # the no-copy decode's job: check, then view
        if not numpy_validate():  # pragma: no cover - the generated text is valid
            raise ValueError("generated text is not valid")
        return np.frombuffer(little, unit)

    def both(*steps: Timed) -> Timed:
        return lambda: [step() for step in steps]

    read = read_only_floor(np.frombuffer(little, np.uint8))
    lengths = np.empty(len(little) // size, np.intp)  # str_lengths writes one intp an element
    # Widening reads the narrow chunk and writes a copy of it and as many zeros.
    narrow_source = np.frombuffer(narrow_bytes, np.uint8)
    wide = np.empty(2 * narrow_source.size, np.uint8)
    widen = both(
        lambda: np.copyto(wide[: narrow_source.size], narrow_source),
        lambda: wide[narrow_source.size :].fill(0),
    )
    # Narrowing reads twice the bytes it writes: a copy of half, a read of the other half.
    fits_source = np.frombuffer(fits_bytes, np.uint8)
    half = fits_source.size // 2
    narrow_out = np.empty(half, np.uint8)
    narrow_floor = both(
        lambda: np.copyto(narrow_out, fits_source[:half]), read_only_floor(fits_source[half:])
    )
    n, swapped, encoded = len(little), "decode swap -> new", "encode -> swapped"
    swap = partial(decode_chunk, foreign, size, endian=FOREIGN)
    encode = partial(encode_chunk, native_array, endian=FOREIGN)
    swap_numpy = lambda: np.frombuffer(foreign, foreign_u).astype(unit)  # noqa: E731
    encode_numpy = lambda: native_array.astype(foreign_u)  # noqa: E731
    swap_in = partial(decode_chunk, in_place, size, endian=FOREIGN, out=in_place)
    swap_in_numpy = lambda: in_place.view(np.uint32).byteswap(inplace=True)  # noqa: E731
    restore, rewrite = partial(np.copyto, in_place, pristine), rewrite_floor(in_place)
    checked = partial(validate, little, size, endian=NATIVE)
    viewed = partial(decode_chunk, little, size, endian=NATIVE)
    widened = partial(repad, narrow_bytes, 32, 64, endian=NATIVE)
    to_u16 = partial(narrow.astype, unit)
    narrowed, to_u8 = partial(repad, fits_bytes, 64, 32, endian=NATIVE), partial(fits.astype, "=U8")
    counted = partial(str_lengths, little, size, endian=NATIVE)
    str_len = partial(np.strings.str_len, native_array)
    count_floor, wide_n = both(read, partial(lengths.fill, 0)), 2 * len(narrow_bytes)
    return [
        Case("validate", n, checked, numpy_validate, None, read, "read"),
        Case("decode native (no copy)", n, viewed, numpy_view, None, read, "read"),
        Case(swapped, n, swap, swap_numpy, None),
        Case(f"{swapped}, validate=False", n, partial(swap, validate=False), swap_numpy, None),
        Case(
            "decode swap in place", n, swap_in, swap_in_numpy, restore, rewrite, "rewrite in place"
        ),
        Case(encoded, n, encode, encode_numpy, None),
        Case(f"{encoded}, validate=False", n, partial(encode, validate=False), encode_numpy, None),
        Case("repad widen U8->U16", wide_n, widened, to_u16, None, widen, "copy half, zero half"),
        Case(
            "repad narrow U16->U8", half, narrowed, to_u8, None, narrow_floor, "copy, read as much"
        ),
        Case("str_lengths", n, counted, str_len, None, count_floor, "read, write lengths"),
    ]


def transcode_calls(u: npt.NDArray[np.str_]) -> dict[str, dict[str, Timed]]:
    """kernel -> way -> call: each transcoding of ``u`` by fixedutf32 (way ``"fixedutf32"``) and
    the NumPy, pyarrow and numcodecs ways of doing the same that are installed; a kernel that
    needs what is missing (``to_arrow`` and ``from_arrow``: pyarrow) is left out."""
    length = u.dtype.itemsize
    offsets, values = to_utf8(u)
    vlen = encode_vlen_utf8(u)
    calls: dict[str, dict[str, Timed]] = {
        "to_utf8": {OURS: partial(to_utf8, u)},
        "from_utf8": {OURS: partial(from_utf8, offsets, values, length)},
        "encode_vlen_utf8": {OURS: partial(encode_vlen_utf8, u)},
        "decode_vlen_utf8": {OURS: partial(decode_vlen_utf8, vlen, length)},
        "to_string_dtype": {OURS: partial(to_string_dtype, u)},
    }
    try:
        from numpy.dtypes import StringDType
    except ImportError:  # NumPy < 2
        pass
    else:
        t = u.astype(StringDType())
        calls["to_utf8"]["astype(StringDType())"] = lambda: u.astype(StringDType())
        calls["to_string_dtype"]["astype(StringDType())"] = lambda: u.astype(StringDType())
        calls["from_utf8"]["StringDType astype U"] = lambda: t.astype(u.dtype)
        calls["StringDType -> U (encode_chunk)"] = {
            OURS: partial(encode_chunk, t, length, endian="little"),
            "astype(U)": lambda: t.astype(u.dtype),
        }
    if importlib.util.find_spec("pyarrow") is not None:
        import pyarrow

        calls["to_utf8"]["pyarrow.array"] = lambda: pyarrow.array(u)
        calls["to_arrow"] = {OURS: partial(to_arrow, u), "pyarrow.array": lambda: pyarrow.array(u)}
        arrow = pyarrow.array(u)
        calls["from_arrow"] = {
            OURS: partial(from_arrow, arrow, length),
            "to_numpy().astype(U)": lambda: arrow.to_numpy(zero_copy_only=False).astype(u.dtype),
        }
    if importlib.util.find_spec("numcodecs") is not None:
        import numcodecs

        codec, way = numcodecs.VLenUTF8(), "numcodecs VLenUTF8"
        encoded = codec.encode(u.astype(object))
        calls["encode_vlen_utf8"][way] = lambda: codec.encode(u.astype(object))
        calls["decode_vlen_utf8"][way] = lambda: codec.decode(encoded).astype(u.dtype)
    return calls


def create_array(
    path: str | os.PathLike[str],
    data: npt.NDArray[np.str_],
    chunk: int,
    shard: int | None = None,
    *,
    endian: str = NATIVE,
    zstd: int | None = None,
    fill: bool = True,
    **options: Any,
) -> None:
    """``data``'s 1-D array at ``path`` as stock zarr writes it (its elements only if ``fill``)."""
    import zarr
    from zarr.codecs import BytesCodec, ZstdCodec

    with config("stock"):
        array = zarr.create_array(
            str(path),
            shape=data.shape,
            chunks=(chunk,),
            shards=None if shard is None else (shard,),
            dtype=data.dtype,
            serializer=BytesCodec(endian=endian),
            compressors=None if zstd is None else ZstdCodec(level=zstd),
            fill_value="",
            overwrite=True,
            **options,
        )
        if fill:
            array[...] = data


def config(name: str, threads: int | None = None) -> contextlib.AbstractContextManager[object]:
    """The zarr configuration of configuration ``name``, on ``threads`` threads if given."""
    import zarr

    settings: dict[str, str | int] = dict(INTEGRATION[name])
    if threads is not None:  # chunks decoded at once, and the threads of each kind of pool
        for key in ("async.concurrency", "threading.max_workers", "codec_pipeline.max_workers"):
            settings[key] = threads
    context: contextlib.AbstractContextManager[object] = zarr.config.set(settings)
    return context  # zarr's config object (donfig's) has no type information


def open_with(name: str, store: Any, selected: dict[str, Any], **kwargs: Any) -> AnyArray:
    """The array opened with configuration ``name``; RuntimeError if zarr chose other classes."""
    import zarr

    with config(name):
        array = zarr.open_array(store, **{"mode": "r", **kwargs})
    codec, pipeline = type(array.serializer), type(array.async_array.codec_pipeline)
    chosen = selected[name] = {
        "bytes codec": f"{codec.__module__}.{codec.__qualname__}",
        "pipeline": f"{pipeline.__module__}.{pipeline.__qualname__}",
    }
    wanted = {"codec": "fixedutf32.", "pipeline": "fixedutf32.", "fused": FUSED_PATH}
    wanted["pooled"] = wanted["pipeline"]
    got = chosen["bytes codec" if name == "codec" else "pipeline"]
    if name in wanted and not got.startswith(wanted[name]):
        raise RuntimeError(f"zarr configuration {INTEGRATION[name]} selected {chosen}")
    return array


def with_config(name: str, threads: int | None, call: Timed) -> Timed:
    """``call`` inside the zarr configuration ``name`` (on ``threads`` threads)."""

    def run() -> object:
        with config(name, threads):
            return call()

    return run


def access_call(array: AnyArray, selection: Selection, data: Any = None, path: Any = None) -> Timed:
    """A read of ``selection`` of ``array``, or a write of ``data`` to all of it (``path``)."""
    if data is not None:

        def write() -> object:
            array[...] = data
            return path

        return write
    if selection is None:
        return lambda: array[...]
    if isinstance(selection, slice):
        return lambda: array[selection]
    return lambda: array.vindex[selection]


def holds(result: object, expected: npt.NDArray[np.str_]) -> bool:
    """Whether ``result`` (an array read, or the path of one written) holds ``expected``."""
    if isinstance(result, pathlib.Path):
        import zarr

        with config("stock"):
            result = zarr.open_array(str(result), mode="r")[...]
    array = np.asarray(result)
    if array.dtype.byteorder not in ("=", "|") and array.dtype != expected.dtype:
        array = array.astype(expected.dtype)  # the floor keeps the stored byte order
    return bool(array.shape == expected.shape and np.array_equal(array, expected))


def fastest_zarr(times: Mapping[str, list[float]]) -> list[float] | None:
    """Each round's time of the faster of stock and fused, or None if neither ran."""
    own = [times[name] for name in ("stock", "fused") if times.get(name)]
    return [min(round_times) for round_times in zip(*own)] if own else None
