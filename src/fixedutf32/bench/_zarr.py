"""zarr-python with and without fixedutf32, side by side: ``fixedutf32 bench --zarr``.

One ``<U16`` array is written to a temporary directory in each layout of ``CASES`` and read
or written by each configuration of ``CONFIGS`` in turn, round after round; the latency rows
(:mod:`._latency`) go through a store that waits on every request.  docs/performance.md says
what each configuration and floor does.
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
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from .._source.reader import Get, KeyReader
from ..chunk import decode_chunk
from ..metadata._model import parse_stored
from ._floors import (
    FileSlices,
    read_elements_floor,
    read_files,
    read_floor_threads,
    read_sharded_zstd_floor,
    stored_files,
    thread_count,
    write_floor,
)
from ._kernels import measure_threads
from ._report import LatencyRow, Selected, ZarrReport, ZarrRow, ZarrThreads
from ._targets import Ratio, judge
from ._timing import KiB, MiB, Progress, Timed, format_size, in_turn
from .cases import WIDTH, sample_array

if TYPE_CHECKING:
    from zarr.types import AnyArray

DEFAULT_SIZE = 256 * MiB
ELEMENT_BYTES = 4 * WIDTH
CONFIGS = ("stock", "fused", "codec", "pipeline", "reader", "floor")
BUFFERED_FLOOR = "floor, through a buffer"  # beside "floor" on raw reads: a round takes the faster
FUSED_PATH = "zarr.core.codec_pipeline.FusedCodecPipeline"
INTEGRATION: dict[str, dict[str, str]] = {  # the zarr configuration of each configuration
    "stock": {},
    "fused": {"codec_pipeline.path": FUSED_PATH},
    "codec": {"codecs.bytes": "fixedutf32.zarr.BytesCodec"},
    "pipeline": {
        "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline",
        "codecs.bytes": "fixedutf32.zarr.BytesCodec",
    },
}
SELECTED = 1000  # elements a selection row reads: at random, or in one run


class ZarrCase(NamedTuple):
    """What a case of ``fixedutf32 bench --zarr`` does, to which array."""

    operation: Literal["read", "write"]
    threads: int | None  # None: zarr's defaults
    endian: Literal["little", "big"]
    compressed: bool  # zstd, else raw
    chunk_bytes: int = MiB
    shard_bytes: int | None = None
    selection: Literal["all", "random", "slice"] = "all"
    size_limit: int | None = None  # a smaller array for this case (many small chunks)
    via: Literal["zarr", "xarray", "dask"] = "zarr"  # who reads the array


CASES = {
    "read raw little": ZarrCase("read", None, "little", False),
    "read raw big": ZarrCase("read", None, "big", False),
    "read zstd, 1 thread": ZarrCase("read", 1, "little", True),
    "read zstd, 2 threads": ZarrCase("read", 2, "little", True),
    "read raw, 64 KiB chunks": ZarrCase("read", None, "little", False, 64 * KiB),
    "read raw, 16 KiB chunks": ZarrCase(
        "read", None, "little", False, 16 * KiB, size_limit=64 * MiB
    ),
    "read sharded raw": ZarrCase("read", None, "little", False, 64 * KiB, 8 * MiB),
    "read sharded zstd": ZarrCase("read", None, "little", True, 64 * KiB, 8 * MiB),
    "read 1000 random elements": ZarrCase("read", None, "little", False, selection="random"),
    "read a 1000-element slice": ZarrCase("read", None, "little", False, selection="slice"),
    "write raw little": ZarrCase("write", None, "little", False),
    "write raw big": ZarrCase("write", None, "big", False),
    "write zstd": ZarrCase("write", None, "little", True),
    "write sharded raw": ZarrCase("write", None, "little", False, 64 * KiB, 8 * MiB),
    # through xarray's open_zarr and Dask's from_zarr, when installed: their costs are theirs
    "xarray open_zarr": ZarrCase("read", None, "little", False, via="xarray"),
    "dask from_zarr": ZarrCase("read", None, "little", False, via="dask"),
}
# name, numerator (case, configuration), denominator; "zarr": the faster of stock and fused
# in each round.
_PAIRS = (("pipeline", "fastest zarr"), ("pipeline", "stock"), ("pipeline", "floor"))
RATIOS: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    (f"{a} / {b}, {case}", (case, a), (case, "zarr" if b == "fastest zarr" else b))
    for a, b in (*_PAIRS, ("codec", "stock"))
    for case, spec in CASES.items()
    if a == "pipeline" or spec.via == "zarr"
]
RATIOS += [
    (f"zstd 2 threads / 1 thread, {n}", ("read zstd, 2 threads", n), ("read zstd, 1 thread", n))
    for n in ("pipeline", "stock")
]
RATIOS.append(
    ("reader / floor, read raw little", ("read raw little", "reader"), ("read raw little", "floor"))
)


def configurations(case: str, *, fused: bool | None = None) -> tuple[str, ...]:
    """The configurations that run ``case``.

    Writes are zarr's and the floor's; the standalone reader is single threaded and reads
    plain chunks; ``fused`` only where zarr has it.

    Parameters
    ----------
    case : str
        A key of ``CASES``, e.g. ``"read raw big"``.
    fused : bool, optional
        Whether to run zarr's ``FusedCodecPipeline``; by default, whether zarr has it.

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
    >>> configurations("read zstd, 2 threads", fused=False)
    ('stock', 'codec', 'pipeline', 'floor')
    """
    spec = CASES[case]
    fused = has_fused() if fused is None else fused
    plain = spec.operation == "read" and spec.threads != 2 and spec.shard_bytes is None
    plain = plain and spec.selection == "all" and spec.via == "zarr"
    return tuple(
        name
        for name in CONFIGS
        if (fused or name != "fused")
        and (plain or name != "reader")
        and (spec.via == "zarr" or name != "codec")
    )


def has_fused() -> bool:
    """Whether the installed zarr has ``FusedCodecPipeline`` (zarr >= 3.4)."""
    from zarr.core import codec_pipeline

    return hasattr(codec_pipeline, "FusedCodecPipeline")


def _read(doc: bytes | dict[str, Any], source: str | Get) -> npt.NDArray[np.str_]:
    """The whole array of metadata ``doc`` read through the package's one reader of keys,
    each whole chunk decoded straight into its slice of the result."""
    model, meta, key_meta = parse_stored(doc)
    reader = KeyReader.build(model, meta.grid, key_meta.grid)
    out = meta.data_type.fill_array(meta.shape, meta.fill_value)
    kwargs = meta.decode_kwargs()

    def place(index: tuple[int, ...], data: memoryview | None, error: Exception | None) -> None:
        if error is not None:
            raise error
        assert data is not None  # the reader gives each chunk's data or an error
        target, source = meta.chunk_region(index)
        view = out[target]
        if view.shape == kwargs["shape"] and view.flags.c_contiguous and kwargs["order"] == "C":
            decode_chunk(data, **kwargs, out=view)  # the whole chunk, in place
        else:
            out[target] = decode_chunk(data, **kwargs)[source]  # an edge chunk

    for key_index in key_meta.chunk_indices():  # missing keys read as the fill value
        reader.read(key_index, source, place)
    return out


def read_array(store: str | os.PathLike[str]) -> npt.NDArray[np.str_]:
    """A local array read by :func:`_read` (docs/reader.md's reader on ``KeyReader``)."""
    store = pathlib.Path(store)
    name = "zarr.json" if (store / "zarr.json").exists() else ".zarray"
    return _read((store / name).read_bytes(), str(store))


def chunk_files(store: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The files of a local array's chunks (or shards), sorted: all but its metadata."""
    root = pathlib.Path(store)
    metadata = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name not in metadata)


def read_floor(store: str | os.PathLike[str], threads: int = 1) -> npt.NDArray[np.uint8]:
    """A local array's chunk files as stored, each ``readinto`` its place in one new buffer."""
    files = chunk_files(store)
    out = np.empty(sum(path.stat().st_size for path in files), np.uint8)
    read_files(files, out, threads)
    return out


def require() -> ModuleType:
    """zarr (with numcodecs), which the zarr and store benches need; ImportError saying so."""
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


def config(name: str, threads: int | None = None) -> contextlib.AbstractContextManager[object]:
    """The zarr configuration of configuration ``name``, on ``threads`` threads if given."""
    import zarr

    settings: dict[str, str | int] = dict(INTEGRATION[name])
    if threads is not None:  # chunks decoded at once, and the threads of each kind of pool
        for key in ("async.concurrency", "threading.max_workers", "codec_pipeline.max_workers"):
            settings[key] = threads
    context: contextlib.AbstractContextManager[object] = zarr.config.set(settings)
    return context  # zarr's config object (donfig's) has no type information


def open_with(name: str, store: Any, selected: dict[str, Selected], **kwargs: Any) -> AnyArray:
    """The array at ``store`` opened read-only (or as ``kwargs`` say) with configuration
    ``name``, the classes zarr chose recorded in ``selected``; RuntimeError if not ours."""
    import zarr

    with config(name):
        array = zarr.open_array(store, **{"mode": "r", **kwargs})
    codec, pipeline = type(array.serializer), type(array.async_array.codec_pipeline)
    chosen = selected[name] = {
        "bytes codec": f"{codec.__module__}.{codec.__qualname__}",
        "pipeline": f"{pipeline.__module__}.{pipeline.__qualname__}",
    }
    wanted = {"codec": "fixedutf32.", "pipeline": "fixedutf32.", "fused": FUSED_PATH}
    got = chosen["bytes codec" if name == "codec" else "pipeline"]
    if name in wanted and not got.startswith(wanted[name]):
        raise RuntimeError(f"zarr configuration {INTEGRATION[name]} selected {chosen}")
    return array


class _Bench:
    """The arrays on disk and one call per (case, configuration)."""

    def __init__(self, root: str, data: npt.NDArray[np.str_], integration: ModuleType | None):
        self.root, self.data, self.integration = pathlib.Path(root), data, integration
        self.fused = has_fused()
        self.selected: dict[str, Selected] = {}
        self.expected: npt.NDArray[np.str_] = data
        self.config = config

    def available(self) -> list[str]:
        """The configurations this zarr and this install can run."""
        names = [n for n in CONFIGS if self.fused or n != "fused"]
        return [n for n in names if self.integration or n not in ("codec", "pipeline")]

    def case_data(self, case: ZarrCase) -> npt.NDArray[np.str_]:
        """The array a case writes or reads: the data, or its start for a smaller case."""
        limit = case.size_limit
        return self.data if limit is None else self.data[: max(1, limit // ELEMENT_BYTES)]

    def selection(self, case: ZarrCase) -> npt.NDArray[np.intp] | slice | None:
        """The elements a selection case reads (random: a fixed sample), or None for all."""
        count = len(self.case_data(case))
        if case.selection == "random":
            rng = np.random.default_rng(1000)
            return rng.choice(count, size=min(SELECTED, count), replace=False).astype(np.intp)
        if case.selection == "slice":
            return slice(count // 3, min(count, count // 3 + SELECTED))
        return None

    def elements(self, nbytes: int, case: ZarrCase) -> int:
        """Elements in ``nbytes`` of array data (at least one, at most the whole array)."""
        return max(1, min(nbytes // ELEMENT_BYTES, len(self.case_data(case))))

    def create(self, path: pathlib.Path, case: ZarrCase, fill: bool = False) -> AnyArray:
        """The case's array at ``path`` (with the data if ``fill``), written by stock zarr."""
        import zarr
        from zarr.codecs import BytesCodec, ZstdCodec

        data = self.case_data(case)
        with config("stock"):
            array = zarr.create_array(
                str(path),
                shape=data.shape,
                chunks=(self.elements(case.chunk_bytes, case),),
                shards=None
                if case.shard_bytes is None
                else (self.elements(case.shard_bytes, case),),
                dtype=data.dtype,
                serializer=BytesCodec(endian=case.endian),
                compressors=ZstdCodec() if case.compressed else None,
                fill_value="",
                overwrite=True,
                dimension_names=["x"],  # xarray reads it
            )
            if fill:
                array[...] = data
        return array

    def files(self, path: pathlib.Path, case: ZarrCase) -> FileSlices:
        """The stored files of the case's array: its chunks, or its shards."""
        per_file = self.elements(case.shard_bytes or case.chunk_bytes, case) * ELEMENT_BYTES
        return FileSlices.of(path, per_file, self.case_data(case).nbytes)

    def calls(self, case_name: str) -> dict[str, Timed | None]:
        """configuration -> call for one case (None where the integration is missing); sets
        what :meth:`same_data` compares their results with."""
        import zarr

        case = CASES[case_name]
        data = self.case_data(case)
        layout = f"{'zstd' if case.compressed else 'raw'}-{case.endian}-{case.chunk_bytes}"
        layout += f"-shards-{case.shard_bytes}" if case.shard_bytes else ""
        path = self.root / f"{case.operation}-{layout}-{data.nbytes}"
        via = None
        if case.via != "zarr":  # the array "v" of a group, read through xarray or Dask
            group = path.with_name(path.name + "-group")
            path = group / "v"
            if not path.exists():
                with config("stock"):
                    zarr.create_group(str(group), zarr_format=3)
                self.create(path, case, fill=True)
            via = _via_reader(case.via, group)
        elif case.operation == "write" or not path.exists():
            self.create(path, case, fill=case.operation == "read")
        selection = self.selection(case)
        self.expected = data if selection is None else data[selection]
        files, threads = self.files(path, case), thread_count(case.threads)
        calls: dict[str, Timed | None] = {}
        for name in configurations(case_name, fused=self.fused):
            if name in ("codec", "pipeline") and self.integration is None:
                calls[name] = None
            elif name == "reader":
                calls[name] = lambda: read_array(path)
            elif name == "floor" and case.operation == "read":
                calls[name] = self._read_floor(files, case, selection, threads)
                if selection is None and not case.compressed and case.via == "zarr":
                    dtype = self.stored_dtype(case)
                    calls[BUFFERED_FLOOR] = lambda: read_floor_threads(
                        files, dtype, threads, buffered=True
                    )
            elif name == "floor":
                calls[name] = self._write_floor(path, files, case, threads)
            elif case.via != "zarr":
                calls[name] = None if via is None else _with_config(name, None, via)
            elif case.operation == "read":
                array = open_with(name, str(path), self.selected)
                calls[name] = _with_config(name, case.threads, _reader(array, selection))
            else:
                array = open_with(name, str(path), self.selected, mode="r+")
                calls[name] = _with_config(name, case.threads, _writer(array, data, path))
        return calls

    def stored_dtype(self, case: ZarrCase) -> np.dtype[np.str_]:
        return self.data.dtype.newbyteorder("<" if case.endian == "little" else ">")

    def _read_floor(
        self,
        files: FileSlices,
        case: ZarrCase,
        selection: npt.NDArray[np.intp] | slice | None,
        threads: int,
    ) -> Timed:
        dtype = self.stored_dtype(case)
        if selection is not None:
            elements = np.arange(len(self.case_data(case)), dtype=np.intp)[selection]
            return lambda: read_elements_floor(files, dtype, elements, threads)
        if case.shard_bytes is not None and case.compressed:
            inner = self.elements(case.chunk_bytes, case) * ELEMENT_BYTES
            return lambda: read_sharded_zstd_floor(files, dtype, inner, threads)
        return lambda: read_floor_threads(files, dtype, threads, zstd=case.compressed)

    def _write_floor(
        self, path: pathlib.Path, files: FileSlices, case: ZarrCase, threads: int
    ) -> Timed:
        # The files of an array of the same layout, written plainly beside it (with its
        # metadata, so that same_data reads them): shards as stock zarr wrote them, chunks
        # whole, the edge one padded with the fill value ("") as zarr pads it.
        floor = path.with_name(path.name + "-floor")
        self.create(floor, case, fill=case.shard_bytes is not None)
        if case.shard_bytes is not None:
            stored, per_file = stored_files(self.files(floor, case).paths)
            target = FileSlices.of(floor, per_file, stored.nbytes)
            return lambda: write_floor(target, stored, threads)
        data = self.case_data(case)
        chunks = np.zeros(len(files.paths) * files.nbytes // ELEMENT_BYTES, data.dtype)
        chunks[: len(data)] = data
        chunks = chunks.astype(self.stored_dtype(case))
        target = FileSlices.of(floor, files.nbytes, len(files.paths) * files.nbytes)
        return lambda: write_floor(target, chunks, threads, zstd=case.compressed)

    def same_data(self, result: object) -> bool:
        """Whether a call's result (an array read, or the path written) holds the data of the
        case :meth:`calls` made last (its selection, for a selection case)."""
        if isinstance(result, pathlib.Path):
            import zarr

            with config("stock"):
                result = zarr.open_array(str(result), mode="r")[...]
        expected, array = self.expected, np.asarray(result)
        if array.dtype.byteorder not in ("=", "|") and array.dtype != expected.dtype:
            array = array.astype(expected.dtype)  # the floor keeps the stored byte order
        return bool(array.shape == expected.shape and np.array_equal(array, expected))


def _with_config(name: str, threads: int | None, call: Timed) -> Timed:
    """``call`` inside the zarr configuration ``name`` (on ``threads`` threads)."""

    def run() -> object:
        with config(name, threads):
            return call()

    return run


def _reader(array: AnyArray, selection: npt.NDArray[np.intp] | slice | None) -> Timed:
    if selection is None:
        return lambda: array[...]
    if isinstance(selection, slice):
        return lambda: array[selection]
    return lambda: array.vindex[selection]


def _writer(array: AnyArray, data: npt.NDArray[np.str_], path: pathlib.Path) -> Timed:
    def write() -> pathlib.Path:
        array[...] = data
        return path

    return write


def _via_reader(via: str, group: pathlib.Path) -> Timed | None:
    """A call reading the group's array ``v`` through xarray or Dask, or None without them."""
    try:
        if via == "xarray":
            import xarray

            return lambda: xarray.open_zarr(str(group), consolidated=False)["v"].values
        import dask.array

        return lambda: dask.array.from_zarr(str(group), component="v").compute()
    except ImportError:
        return None


@contextlib.contextmanager
def arrays(size: int = DEFAULT_SIZE, directory: str | None = None) -> Iterator[_Bench]:
    """The bench's data and arrays in a temporary directory, removed on exit.

    Parameters
    ----------
    size : int
        Bytes of the ``<U16`` array (whole elements); chunks of 1 MiB, or the whole array.
    directory : str, optional
        Where to make the temporary directory.

    Yields
    ------
    _Bench
        ``calls(case)`` gives configuration -> call for a case of ``CASES`` (None where
        the integration is missing), ``same_data(result)`` checks a call's result; zarr's
        warning that the data type has no stable specification is silenced inside.

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
    data = sample_array(size // ELEMENT_BYTES)
    with (
        tempfile.TemporaryDirectory(prefix="fixedutf32-bench-zarr-", dir=directory) as root,
        quiet_zarr(),
    ):
        yield _Bench(root, data, _integration())


@contextlib.contextmanager
def quiet_zarr() -> Iterator[None]:
    """Silence zarr's warning that the data type has no stable specification."""
    from zarr.errors import UnstableSpecificationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnstableSpecificationWarning)
        yield


def latency_seconds(latency: float, rounds: int) -> float:
    """Roughly how long the latency rows take: 226 requests a profile, about 8 in flight (one
    at a time for FusedCodecPipeline on the synchronous profile), ``rounds`` + 2 calls each."""
    waits = 2 * 3 * 226 / 8 + (226 if has_fused() else 0)
    return 2.0 + (rounds + 2) * latency * waits


def size_thread_pool() -> None:
    """Make zarr's thread pool two threads wide (the widest row), before any row runs."""
    # zarr creates its pool once, at the first call made while threading.max_workers is
    # set: had the 1-thread row come first, the 2-thread row would run on a pool of one.
    import zarr

    with zarr.config.set({"threading.max_workers": 2}):
        zarr.create_group(store=zarr.storage.MemoryStore())


def gbps_row(
    case: str, spec: ZarrCase, counted: int, sizes: tuple[int, int | None], times: Any, same: Any
) -> ZarrRow:
    """A row: GB/s (median of the rounds) and data check per configuration, n/a where absent."""
    gbps = {n: counted / statistics.median(times[n]) / 1e9 if n in times else None for n in CONFIGS}
    codec = "zstd" if spec.compressed else "raw"
    same_data = {name: same.get(name) for name in CONFIGS}
    return ZarrRow(
        case=case,
        endian=spec.endian,
        codec=codec,
        threads=spec.threads,
        size=counted,
        chunk_size=sizes[0],
        shard_size=sizes[1],
        gbps=gbps,
        same_data=same_data,
    )


def threads_reference(say: Progress) -> ZarrThreads:
    """decode_chunk and numpy.copyto on two threads: how much scaling the machine allowed."""
    say("2 threads: decode_chunk and numpy.copyto, for reference")
    decode, copy = measure_threads(MiB, 2)
    return {"threads": 2, "size": MiB, "decode_chunk_scaling": decode, "memcpy_scaling": copy}


def run(
    size: int = DEFAULT_SIZE,
    repeat: int = 9,
    progress: Progress | None = None,
    directory: str | None = None,
    rows: Literal["all", "local", "latency"] = "all",
    latency: float = 0.020,
) -> ZarrReport:
    """The ``--zarr`` report: ``CASES`` on ``size`` bytes of ``<U16`` (``rows``: ``local``),
    the latency rows at ``latency`` seconds a request (``latency``), or both (``all``)."""
    say = progress or (lambda message: None)
    say(f"generating {format_size(size)} of <U{WIDTH} text")
    table: list[ZarrRow] = []
    times_by_case: dict[str, dict[str, list[float]]] = {}
    latency_rows: list[LatencyRow] = []
    latency_ratios: list[Ratio] = []
    # the latency rows make their own small array: the local rows' is made only for them
    with arrays(size if rows != "latency" else ELEMENT_BYTES, directory) as bench:
        if rows != "local":
            # First, while zarr has no pool of its own: the requests it runs on threads get
            # asyncio's default pool, as with zarr's defaults, not the pool sized below.
            from . import _latency

            names = [n for n in ("stock", "fused", "pipeline") if n in bench.available()]
            latency_rows, latency_times = _latency.measure(
                config, names, min(repeat, 5), latency, progress=say, directory=directory
            )
            latency_ratios = _latency.ratios(latency_rows, latency_times)
        size_thread_pool()
        for case, spec in CASES.items() if rows != "latency" else ():
            calls = {name: call for name, call in bench.calls(case).items() if call is not None}
            counted = bench.expected.nbytes
            say(f"{case} ({format_size(counted)}, {repeat} rounds)")
            times, same = in_turn(calls, repeat, bench.same_data)
            if BUFFERED_FLOOR in times:  # the best plain read of each round
                buffered = times.pop(BUFFERED_FLOOR)
                times["floor"] = [min(a, b) for a, b in zip(times["floor"], buffered)]
                same["floor"] = bool(same["floor"] and same.pop(BUFFERED_FLOOR))
            shard = spec.shard_bytes and bench.elements(spec.shard_bytes, spec) * ELEMENT_BYTES
            sizes = (bench.elements(spec.chunk_bytes, spec) * ELEMENT_BYTES, shard)
            table.append(gbps_row(case, spec, counted, sizes, times, same))
            times_by_case[case] = times
    ratios_ = (ratios(times_by_case, RATIOS) if table else []) + latency_ratios
    return report(bench, f"<U{WIDTH}", bench.data.nbytes, repeat, table, ratios_, say, latency_rows)


def report(
    bench: _Bench,
    dtype: str,
    size: int,
    repeat: int,
    rows: list[ZarrRow],
    ratios: list[Ratio],
    say: Progress,
    latency: list[LatencyRow] | None = None,
    array: str | None = None,
    notes: list[str] | None = None,
) -> ZarrReport:
    """The ``--zarr`` report of these rows and ratios, with the thread reference measured now."""
    import zarr

    return {
        "zarr_version": zarr.__version__,
        "integration": bench.integration is not None,
        "selected": bench.selected,
        "native_byteorder": sys.byteorder,
        "dtype": dtype,
        "size": size,
        "chunk_size": rows[0]["chunk_size"] if rows else 0,
        "repeat": repeat,
        "rows": rows,
        "latency": latency or [],
        "ratios": ratios,
        "threads_reference": threads_reference(say),
        "array": array,
        "notes": notes or [],
    }


def ratios(
    times: Mapping[str, Mapping[str, list[float]]],
    wanted: list[tuple[str, tuple[str, str], tuple[str, str]]],
) -> list[Ratio]:
    """Each ratio of ``wanted``: the median over rounds of the round's speed ratio; ``times``
    maps case -> configuration -> seconds of each round ("zarr": the faster of stock, fused)."""
    result: list[Ratio] = []
    for name, (num_case, num), (den_case, den) in wanted:
        top = times[num_case].get(num)
        if den == "zarr":
            own = [times[den_case][n] for n in ("stock", "fused") if times[den_case].get(n)]
            bottom = [min(round_times) for round_times in zip(*own)] if own else None
        else:
            bottom = times[den_case].get(den)
        value = statistics.median(b / t for t, b in zip(top, bottom)) if top and bottom else None
        result.append({"ratio": name, "value": value, **judge("zarr", name, value)})
    return result
