"""zarr-python with and without fixedutf32, side by side: ``fixedutf32 bench --zarr``.

One ``<U16`` array (256 MiB by default) in 1 MiB chunks is written to a
temporary local directory, raw little endian, raw big endian and zstd, and
read back by:

- ``stock``: zarr-python as installed, default configuration;
- ``codec``: zarr with ``codecs.bytes = fixedutf32.zarr.BytesCodec``;
- ``pipeline``: zarr with ``codec_pipeline.path = fixedutf32.zarr.CodecPipeline``;
- ``reader``: the standalone reader of docs/reader.md, decoding each chunk straight
  into its slice of the result (``decode_chunk(..., out=...)``);
- ``floor``: the chunk files read into one array allocated up front
  (``readinto`` its slice, no decoding): the least any reader can cost.

Writes compare stock, codec and pipeline.  Each configuration's first call
(not timed) is checked against the data written; then every round times each
configuration once, in turn, and a figure is the median over the rounds.  A
ratio is the median of the per-round ratios, so both sides of it are always
timed moments apart.  zarr is imported here only, when the bench runs.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pathlib
import statistics
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from ..chunk import decode_chunk
from ..metadata import parse_array_metadata
from ._kernels import measure_threads
from ._report import Selected, ZarrReport, ZarrRow
from ._targets import Ratio, judge
from ._timing import MiB, Progress, Timed, format_size, in_turn
from .cases import WIDTH, sample_units

if TYPE_CHECKING:
    from zarr.types import AnyArray

DEFAULT_SIZE = 256 * MiB
CHUNK_BYTES = MiB
ELEMENT_BYTES = 4 * WIDTH
CONFIGS = ("stock", "codec", "pipeline", "reader", "floor")
ZARR_CONFIGS = ("stock", "codec", "pipeline")
INTEGRATION: dict[
    str, dict[str, str]
] = {  # zarr configuration that selects each part of fixedutf32.zarr
    "stock": {},
    "codec": {"codecs.bytes": "fixedutf32.zarr.BytesCodec"},
    "pipeline": {"codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"},
}


class ZarrCase(NamedTuple):
    """What a case of ``fixedutf32 bench --zarr`` does, to which array."""

    operation: Literal["read", "write"]
    threads: int | None  # None: zarr's defaults
    endian: Literal["little", "big"]
    compressed: bool  # zstd, else raw


CASES = {
    "read raw little": ZarrCase("read", None, "little", False),
    "read raw big": ZarrCase("read", None, "big", False),
    "read zstd, 1 thread": ZarrCase("read", 1, "little", True),
    "read zstd, 2 threads": ZarrCase("read", 2, "little", True),
    "write raw little": ZarrCase("write", None, "little", False),
    "write raw big": ZarrCase("write", None, "big", False),
}

# Ratios reported (their targets are in ._targets): name, numerator (case,
# configuration), denominator (case, configuration).
RATIOS: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    *[(f"pipeline / stock, {case}", (case, "pipeline"), (case, "stock")) for case in CASES],
    *[
        (f"pipeline / floor, {case}", (case, "pipeline"), (case, "floor"))
        for case in ("read raw little", "read raw big")
    ],
    *[(f"codec / stock, {case}", (case, "codec"), (case, "stock")) for case in CASES],
    (
        "zstd 2 threads / 1 thread, pipeline",
        ("read zstd, 2 threads", "pipeline"),
        ("read zstd, 1 thread", "pipeline"),
    ),
    (
        "zstd 2 threads / 1 thread, stock",
        ("read zstd, 2 threads", "stock"),
        ("read zstd, 1 thread", "stock"),
    ),
    (
        "reader / floor, read raw little",
        ("read raw little", "reader"),
        ("read raw little", "floor"),
    ),
]


def configurations(case: str) -> tuple[str, ...]:
    """The configurations that run ``case``: writes are zarr's alone; the
    standalone reader is single threaded; the floor reads raw chunks only.

    Parameters
    ----------
    case : str
        A key of ``CASES``, e.g. ``"read raw big"``.

    Returns
    -------
    tuple of str
        Names from ``CONFIGS``.

    Raises
    ------
    KeyError
        If ``case`` is not a key of ``CASES``.

    Examples
    --------
    >>> configurations("read zstd, 2 threads")
    ('stock', 'codec', 'pipeline')
    """
    operation, threads, _, compressed = CASES[case]
    if operation == "write":
        return ZARR_CONFIGS
    return tuple(
        name
        for name in CONFIGS
        if not (name == "reader" and threads == 2) and not (name == "floor" and compressed)
    )


def read_array(store: str | os.PathLike[str]) -> npt.NDArray[np.str_]:
    """Read a local Zarr array of the ``fixed_length_utf32`` type with fixedutf32 alone.

    The standalone reader of docs/reader.md, with each whole chunk decoded straight
    into its slice of the result (``decode_chunk(..., out=...)``), so its
    bytes are written once.

    Parameters
    ----------
    store : str or os.PathLike
        Directory of the array (holding ``zarr.json`` or ``.zarray``).

    Returns
    -------
    numpy.ndarray
        A new native ``U`` array holding the whole array; missing chunks read
        as the fill value.

    Raises
    ------
    fixedutf32.MetadataError
        If the metadata breaks the specification.
    fixedutf32.InvalidCodePointError
        If a chunk holds a code unit that is not a Unicode scalar value.

    Examples
    --------
    >>> import tempfile, zarr
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = zarr.create_array(path, data=np.array(["ab", "c", "d"]), chunks=(2,))
    ...     read_array(path).tolist()
    ['ab', 'c', 'd']
    """
    import numcodecs

    store = pathlib.Path(store)
    name = "zarr.json" if (store / "zarr.json").exists() else ".zarray"
    meta = parse_array_metadata((store / name).read_bytes())
    out = meta.data_type.fill_array(meta.shape, meta.fill_value)
    kwargs = meta.decode_kwargs()
    for index in meta.chunk_indices():
        path = store / meta.chunk_key(index)
        if not path.exists():
            continue  # a missing chunk reads as the fill value
        data = path.read_bytes()
        for codec in reversed(meta.codecs):  # gzip, zstd, ... after "bytes"
            config = {"id": codec["name"], **codec.get("configuration", {})}
            data = numcodecs.get_codec(config).decode(data)
        target, source = meta.chunk_region(index)
        view = out[target]
        if view.shape == kwargs["shape"] and view.flags.c_contiguous and kwargs["order"] == "C":
            decode_chunk(data, **kwargs, out=view)  # the whole chunk, in place
        else:
            out[target] = decode_chunk(data, **kwargs)[source]  # an edge chunk
    return out


def read_floor(store: str | os.PathLike[str]) -> npt.NDArray[np.str_]:
    """Read the chunk files of a raw, one-dimensional local array into one new array.

    No decoding, no byte swap, no check: each file is read with ``readinto``
    into its slice of an array allocated up front.  The least a reader of
    the array can cost.

    Parameters
    ----------
    store : str or os.PathLike
        Directory of a one-dimensional V3 array without compressors.

    Returns
    -------
    numpy.ndarray
        A new ``U`` array in the stored byte order; elements of missing
        chunks are left unset.

    Raises
    ------
    ValueError
        If the array is not one-dimensional or is compressed.

    Examples
    --------
    >>> import tempfile, zarr
    >>> with tempfile.TemporaryDirectory() as path:
    ...     data = np.array(["ab", "c", "d"])
    ...     _ = zarr.create_array(path, data=data, chunks=(2,), compressors=None)
    ...     read_floor(path).tolist()
    ['ab', 'c', 'd']
    """
    store = pathlib.Path(store)
    meta = parse_array_metadata((store / "zarr.json").read_bytes())
    if len(meta.shape) != 1 or meta.codecs:
        raise ValueError(
            f"read_floor: expected a one-dimensional array without compressors in {store}, "
            f"got shape {meta.shape} and codecs {list(meta.codecs)}"
        )
    out = np.empty(meta.shape, meta.data_type.to_numpy(meta.endian))
    raw = out.view(np.uint8)
    item = meta.data_type.length_bytes
    for index in meta.chunk_indices():
        (target,), _ = meta.chunk_region(index)
        path = store / meta.chunk_key(index)
        if path.exists():
            with open(path, "rb", buffering=0) as file:
                # NumPy declares the buffer protocol of an array for Python >= 3.12 only.
                file.readinto(raw[target.start * item : target.stop * item])  # type: ignore[arg-type]
    return out


def require() -> ModuleType:
    """Import zarr-python and numcodecs, which the zarr bench needs.

    Returns
    -------
    module
        The ``zarr`` module.

    Raises
    ------
    ImportError
        Naming the missing package and how to install it.

    Examples
    --------
    >>> require().__name__
    'zarr'
    """
    try:
        importlib.import_module("numcodecs")
        return importlib.import_module("zarr")
    except ImportError as error:
        raise ImportError(
            f"the zarr and store benches need zarr-python >= 3.1 and numcodecs "
            f"(pip install zarr numcodecs), and: {error}"
        ) from error


def _integration() -> ModuleType | None:
    """The fixedutf32.zarr module if it provides the codec and the pipeline, else None."""
    try:
        module = importlib.import_module("fixedutf32.zarr")
    except ImportError:
        return None
    return module if hasattr(module, "BytesCodec") and hasattr(module, "CodecPipeline") else None


def _sample_data(size: int) -> npt.NDArray[np.str_]:
    """``<U16`` text of ``size`` bytes, made in 16 MiB pieces (distinct seeds) to bound memory."""
    n = size // ELEMENT_BYTES
    data = np.empty(n, f"<U{WIDTH}")
    units = data.view("<u4").reshape(n, WIDTH)
    step = 16 * MiB // ELEMENT_BYTES
    for seed, start in enumerate(range(0, n, step)):
        stop = min(start + step, n)
        units[start:stop] = sample_units(stop - start, WIDTH, seed=seed)
    return data


class _Bench:
    """The arrays on disk and one call per (case, configuration)."""

    def __init__(
        self,
        root: str,
        data: npt.NDArray[np.str_],
        chunk_elements: int,
        integration: ModuleType | None,
    ) -> None:
        self.root = pathlib.Path(root)
        self.data = data
        self.chunks = (chunk_elements,)
        self.integration = integration
        self.selected: dict[str, Selected] = {}

    def config(
        self, name: str, threads: int | None = None
    ) -> contextlib.AbstractContextManager[object]:
        import zarr

        settings: dict[str, str | int] = dict(INTEGRATION[name])
        if threads is not None:
            # async.concurrency bounds the chunks zarr decodes at once;
            # threading.max_workers the threads of a pool.
            settings.update({"async.concurrency": threads, "threading.max_workers": threads})
        # zarr's config object (donfig's) has no type information.
        context: contextlib.AbstractContextManager[object] = zarr.config.set(settings)
        return context

    def create(
        self, path: pathlib.Path, endian: Literal["little", "big"], compressed: bool
    ) -> AnyArray:
        import zarr
        from zarr.codecs import BytesCodec, ZstdCodec

        return zarr.create_array(
            str(path),
            shape=self.data.shape,
            chunks=self.chunks,
            dtype=self.data.dtype,
            serializer=BytesCodec(endian=endian),
            compressors=ZstdCodec() if compressed else None,
            fill_value="",
            overwrite=True,
        )

    def open(self, name: str, path: pathlib.Path, mode: Literal["r", "r+"]) -> AnyArray:
        """The array opened with configuration ``name`` (zarr fixes the classes when it opens)."""
        import zarr

        with self.config(name):
            array = zarr.open_array(str(path), mode=mode)
        codec = type(array.serializer)  # the array -> bytes codec
        pipeline = type(array.async_array.codec_pipeline)
        self.selected[name] = {
            "bytes codec": f"{codec.__module__}.{codec.__qualname__}",
            "pipeline": f"{pipeline.__module__}.{pipeline.__qualname__}",
        }
        if name != "stock" and not self.selected[name][
            "bytes codec" if name == "codec" else "pipeline"
        ].startswith("fixedutf32."):
            raise RuntimeError(
                f"zarr configuration {INTEGRATION[name]} did not select fixedutf32: "
                f"got {self.selected[name]} for {path}"
            )
        return array

    def calls(self, case: str) -> dict[str, Timed | None]:
        """configuration -> call for one case; None where the integration is missing."""
        operation, threads, endian, compressed = CASES[case]
        path = self.root / f"{operation}-{endian}-{'zstd' if compressed else 'raw'}"
        if operation == "write":
            with self.config("stock"):
                self.create(path, endian, compressed)
        elif not path.exists():
            with self.config("stock"):
                self.create(path, endian, compressed)[...] = self.data
        calls: dict[str, Timed | None] = {}
        for name in configurations(case):
            if name in ("codec", "pipeline") and self.integration is None:
                calls[name] = None
            elif name == "reader":
                calls[name] = lambda: read_array(path)
            elif name == "floor":
                calls[name] = lambda: read_floor(path)
            elif operation == "read":
                calls[name] = self._read(name, self.open(name, path, "r"), threads)
            else:
                calls[name] = self._write(name, self.open(name, path, "r+"), threads, path)
        return calls

    def _read(self, name: str, array: AnyArray, threads: int | None) -> Timed:
        def read() -> object:
            with self.config(name, threads):
                return array[...]

        return read

    def _write(self, name: str, array: AnyArray, threads: int | None, path: pathlib.Path) -> Timed:
        def write() -> pathlib.Path:
            with self.config(name, threads):
                array[...] = self.data
            return path

        return write

    def same_data(self, result: object) -> bool:
        """Whether a call's result (an array read, or the path written) holds the data."""
        if isinstance(result, pathlib.Path):
            import zarr

            with self.config("stock"):
                result = zarr.open_array(str(result), mode="r")[...]
        array = np.asarray(result)  # the array itself: every reader returns a NumPy array
        if array.dtype.byteorder not in ("=", "|") and array.dtype != self.data.dtype:
            array = array.astype(self.data.dtype)  # the floor keeps the stored byte order
        return bool(array.shape == self.data.shape and np.array_equal(array, self.data))


@contextlib.contextmanager
def arrays(size: int = DEFAULT_SIZE, directory: str | None = None) -> Iterator[_Bench]:
    """The bench's data and arrays in a temporary directory, removed on exit.

    Parameters
    ----------
    size : int
        Bytes of the ``<U16`` array (rounded down to whole elements); chunks
        are 1 MiB, or the whole array if smaller.
    directory : str, optional
        Where to make the temporary directory.

    Yields
    ------
    _Bench
        ``calls(case)`` gives configuration -> call for a case of ``CASES``
        (``None`` where the integration is missing), ``same_data(result)``
        checks a call's result against ``data``.  zarr's warning that the
        data type has no stable specification is silenced inside.

    Raises
    ------
    ImportError
        If zarr-python or numcodecs is not installed.
    ValueError
        If ``size`` is smaller than one element.

    Examples
    --------
    >>> with arrays(4096) as bench:
    ...     bench.same_data(bench.calls("read raw big")["stock"]())
    True
    """
    require()
    if size < ELEMENT_BYTES:
        raise ValueError(
            f"size: expected at least {ELEMENT_BYTES} bytes (one <U{WIDTH} element), got {size}"
        )
    data = _sample_data(size)
    chunk_elements = min(CHUNK_BYTES // ELEMENT_BYTES, len(data))
    with (
        tempfile.TemporaryDirectory(prefix="fixedutf32-bench-zarr-", dir=directory) as root,
        warnings.catch_warnings(),
    ):
        from zarr.errors import UnstableSpecificationWarning

        warnings.simplefilter("ignore", UnstableSpecificationWarning)
        yield _Bench(root, data, chunk_elements, _integration())


def _size_zarr_thread_pool() -> None:
    """Make zarr's thread pool as wide as the widest row asks for.

    zarr creates its pool once, at the first call made while
    ``threading.max_workers`` is set, and keeps it: had the 1-thread row come
    first, the 2-thread row would run on a pool of one.  Each row's own
    settings then bound how many threads it uses.
    """
    import zarr

    widest = max(case.threads for case in CASES.values() if case.threads)
    with zarr.config.set({"threading.max_workers": widest}):
        zarr.create_group(store=zarr.storage.MemoryStore())


def run(
    size: int = DEFAULT_SIZE,
    repeat: int = 9,
    progress: Progress | None = None,
    directory: str | None = None,
) -> ZarrReport:
    """Measure zarr reads and writes with and without fixedutf32; a report dict.

    Parameters
    ----------
    size : int
        Bytes of the ``<U16`` array (rounded down to whole elements); chunks
        are 1 MiB, or the whole array if smaller.
    repeat : int
        Timed rounds; each figure is the median over them.
    progress : callable, optional
        Called with a short message before each step.
    directory : str, optional
        Where to make the temporary directory (removed afterwards).

    Returns
    -------
    dict
        ``rows``: one per case with ``gbps`` and ``same_data`` per
        configuration (``None`` where it does not apply or the integration
        is missing); ``ratios``: name, value, target and ``met``;
        ``threads_reference``: the scaling of ``decode_chunk`` and of
        ``numpy.copyto`` on two threads, the machine's own limit.

    Raises
    ------
    ImportError, ValueError
        As :func:`arrays` does: zarr-python or numcodecs missing, ``size``
        under one element.

    Examples
    --------
    >>> report = run(size=64 * 1024, repeat=1)
    >>> report["rows"][0]["same_data"]["stock"]
    True
    """
    say = progress or (lambda message: None)
    say(f"generating {format_size(size)} of <U{WIDTH} text")
    rows: list[ZarrRow] = []
    times_by_case: dict[str, dict[str, list[float]]] = {}
    with arrays(size, directory) as bench:
        import zarr

        _size_zarr_thread_pool()
        counted, chunk_size = bench.data.nbytes, bench.chunks[0] * ELEMENT_BYTES
        for case, (_, threads, endian, compressed) in CASES.items():
            say(f"{case} ({format_size(size)}, {repeat} rounds)")
            calls = {name: call for name, call in bench.calls(case).items() if call is not None}
            times, same = in_turn(calls, repeat, bench.same_data)
            rows.append(
                {
                    "case": case,
                    "endian": endian,
                    "codec": "zstd" if compressed else "raw",
                    "threads": threads,
                    "size": counted,
                    "chunk_size": chunk_size,
                    "gbps": {
                        name: (
                            counted / statistics.median(times[name]) / 1e9
                            if name in times
                            else None
                        )
                        for name in CONFIGS
                    },
                    "same_data": {name: same.get(name) for name in CONFIGS},
                }
            )
            times_by_case[case] = times
    ratios = _ratios(times_by_case)
    # On a shared machine the second core is not always there: the kernel and a
    # plain copy on two threads say how much scaling the machine allowed.
    say("2 threads: decode_chunk and numpy.copyto, for reference")
    decode_scaling, copy_scaling = measure_threads(MiB, 2)
    return {
        "zarr_version": zarr.__version__,
        "integration": bench.integration is not None,
        "selected": bench.selected,
        "native_byteorder": sys.byteorder,
        "dtype": f"<U{WIDTH}",
        "size": counted,
        "chunk_size": chunk_size,
        "repeat": repeat,
        "rows": rows,
        "ratios": ratios,
        "threads_reference": {
            "threads": 2,
            "size": MiB,
            "decode_chunk_scaling": decode_scaling,
            "memcpy_scaling": copy_scaling,
        },
    }


def _ratios(times: Mapping[str, Mapping[str, list[float]]]) -> list[Ratio]:
    """Each ratio: the median over rounds of the round's two times (speed ratio).

    ``times`` maps case -> configuration -> seconds of each round.
    """
    result: list[Ratio] = []
    for name, (num_case, num), (den_case, den) in RATIOS:
        top, bottom = times[num_case].get(num), times[den_case].get(den)
        value = None
        if top and bottom:
            value = statistics.median(b / t for t, b in zip(top, bottom))
        result.append({"ratio": name, "value": value, **judge("zarr", name, value)})
    return result
