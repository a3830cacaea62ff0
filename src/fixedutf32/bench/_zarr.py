"""zarr-python with and without fixedutf32, side by side: ``fixedutf32 bench --zarr``.

One ``<U16`` array is written to a temporary directory in each layout of ``CASES`` and read
or written by each configuration of ``CONFIGS`` in turn, round after round, beside its floor:
the same files read or written plainly, on as many threads as the configuration compared (no
checks, no byte swap, no Python per element); the latency rows (:mod:`._latency`) go through a
store that waits on every request.  ``--zarr PATH_OR_URL`` times the reads of a user's own
``fixed_length_utf32`` (V3) or ``U`` (V2) array, opened read-only and never written.
docs/performance.md says what each configuration and floor does.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from types import ModuleType
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from .._pool import aligned_empty
from .._source.reader import Get
from ..errors import FixedUTF32Error
from ..metadata._model import parse_stored
from ._kernels import measure_threads
from ._report import Row, judge
from .cases import (
    ELEMENT_BYTES,
    WIDTH,
    KiB,
    MiB,
    Progress,
    Selection,
    Timed,
    access_call,
    config,
    create_array,
    fastest_zarr,
    format_size,
    holds,
    in_turn,
    open_with,
    quiet,
    sample_array,
    with_config,
)

DEFAULT_SIZE = 256 * MiB
CONFIGS = ("stock", "fused", "codec", "pipeline", "pooled", "reader", "floor")
BUFFERED_FLOOR = "floor, through a buffer"  # beside "floor" on raw reads: a round takes the faster
SELECTED = 1000  # elements a selection row reads: at random, or in one run
USER_CASE = "read your array"
_NO_FLOOR = "the floor reads the chunk files with readinto, which needs a local directory"
_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
Place = tuple[pathlib.Path, slice]  # a file, and where its bytes go


class ZarrCase(NamedTuple):
    """What a case of ``fixedutf32 bench --zarr`` does, to which array."""

    operation: str  # read, write
    threads: int | None  # None: zarr's defaults
    endian: Literal["little", "big"]
    compressed: bool  # zstd, else raw
    chunk_bytes: int = MiB
    shard_bytes: int | None = None
    selection: str = "all"  # all, random, slice
    size_limit: int | None = None  # a smaller array for this case (many small chunks)
    via: str = "zarr"  # who reads the array: zarr, xarray, dask


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
Ratio = tuple[str, tuple[str, str], tuple[str, str]]  # name, numerator, denominator (case, config)


def _ratio(case: str, a: str, b: str) -> Ratio:
    """The ratio ``a / b, case`` ("fastest zarr": "zarr", see :func:`ratios`)."""
    return f"{a} / {b}, {case}", (case, a), (case, "zarr" if b == "fastest zarr" else b)


_PAIRS = (("pipeline", "fastest zarr"), ("pipeline", "stock"), ("pipeline", "floor"))
RATIOS: list[Ratio] = [
    _ratio(case, a, b)
    for a, b in (*_PAIRS, ("codec", "stock"))
    for case, spec in CASES.items()
    if a == "pipeline" or spec.via == "zarr"
]
RATIOS += [
    (f"zstd 2 threads / 1 thread, {n}", ("read zstd, 2 threads", n), ("read zstd, 1 thread", n))
    for n in ("pipeline", "stock")
]
READER_CASES = (  # the reader's rows with a target (issue 28), against the floor
    "read raw little",
    "read raw, 64 KiB chunks",
    "read raw, 16 KiB chunks",
    "read sharded raw",
    "read zstd, 1 thread",
    "read zstd, 2 threads",
)
RATIOS += [_ratio(case, "reader", "floor") for case in READER_CASES]
RATIOS += [_ratio(case, "pooled", "floor") for case in READER_CASES]


def configurations(case: str, *, fused: bool | None = None) -> tuple[str, ...]:
    """The configurations of ``CONFIGS`` that run ``case`` (``fused``: by default, if zarr has it):
    writes are zarr's and the floor's; the reader (``open_array``) reads whole arrays."""
    spec = CASES[case]
    fused = has_fused() if fused is None else fused
    plain = spec.operation == "read" and spec.selection == "all" and spec.via == "zarr"
    return tuple(
        name
        for name in CONFIGS
        if (fused or name != "fused")
        and (plain or name not in ("reader", "pooled"))
        and (spec.via == "zarr" or name != "codec")
    )


def has_fused() -> bool:
    """Whether the installed zarr has ``FusedCodecPipeline`` (zarr >= 3.4)."""
    from zarr.core import codec_pipeline

    return hasattr(codec_pipeline, "FusedCodecPipeline")


def read_array(store: str | os.PathLike[str]) -> npt.NDArray[np.str_]:
    """A local array read whole by the package's reader (:func:`fixedutf32.open_array`)."""
    from ..array import open_array

    with open_array(store) as stored:
        return stored.read()


def _reader_call(where: str, threads: int | None, **options: Any) -> Timed:
    """``open_array(where).read()``: into a new array, as a reader is used."""
    # Its memory comes from the pool of freed buffers after the first round.
    from ..array import open_array

    return partial(open_array(where, **options).read, threads=threads)


def chunk_files(store: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The files of a local array's chunks (or shards), sorted: all but its metadata."""
    metadata = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}
    files = pathlib.Path(store).rglob("*")
    return sorted(p for p in files if p.is_file() and p.name not in metadata)


def _raw(array: npt.NDArray[Any]) -> memoryview:
    """The bytes of ``array``, writable."""
    # NumPy declares the buffer protocol of an array for Python >= 3.12 only.
    return memoryview(array.view(np.uint8))  # type: ignore[arg-type,unused-ignore]


class FileSlices(NamedTuple):
    """A 1-D array's chunk (or shard) files in order, ``nbytes`` of data each, ``total`` in all."""

    paths: tuple[pathlib.Path, ...]
    nbytes: int
    total: int

    def slices(self) -> list[Place]:
        """Each file, and where its bytes go."""
        n = self.nbytes
        return [(p, slice(i * n, min(i * n + n, self.total))) for i, p in enumerate(self.paths)]


def file_slices(directory: pathlib.Path, nbytes: int, total: int) -> FileSlices:
    """The chunk files ``directory/c/0, c/1, ...`` of a one-dimensional V3 array."""
    return FileSlices(
        tuple(directory / "c" / str(i) for i in range(-(-total // nbytes))), nbytes, total
    )


def on_threads(
    work: Callable[[_Item], _Result], items: Sequence[_Item], threads: int
) -> list[_Result]:
    """``work`` on each item: one share of consecutive items per thread, as pipelines split."""
    size = max(1, -(-len(items) // max(threads, 1)))
    shares = [items[i : i + size] for i in range(0, len(items), size)]
    if threads <= 1 or len(shares) <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(threads) as pool:
        done = pool.map(lambda share: [work(item) for item in share], shares)
        return [result for share in done for result in share]


def read_floor_threads(
    files: FileSlices,
    dtype: np.dtype[Any],
    threads: int,
    zstd: bool,
    buffered: bool = False,
    inner: int | None = None,
    out: npt.NDArray[Any] | None = None,
) -> npt.NDArray[Any]:
    """The read floor: the files' bytes ``readinto`` one new array (or ``out``), or unzstd'd."""
    # buffered: through a reused buffer, then copied; inner: shards of zstd chunks of that many
    # bytes, each shard read whole; missing files (chunks not stored) are left unset.
    out = aligned_empty(files.total // dtype.itemsize, dtype) if out is None else out
    raw, buffers = _raw(out), threading.local()
    decompress: Any = importlib.import_module("numcodecs").Zstd().decode if zstd else None

    def unzstd(frame: bytes, start: int, stop: int, whole: int) -> None:
        if stop - start == whole:
            decompress(frame, out=raw[start:stop])
        elif start < stop:  # the array's edge cuts this chunk: stored whole, its start kept
            raw[start:stop] = memoryview(decompress(frame)).cast("B")[: stop - start]

    def read(item: Place) -> None:
        path, where = item
        try:
            file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with file:
            if decompress is None and buffered:
                if getattr(buffers, "buffer", None) is None:
                    buffers.buffer = aligned_empty(files.nbytes, np.uint8).data
                file.readinto(buffers.buffer[: where.stop - where.start])
                raw[where] = buffers.buffer[: where.stop - where.start]
            elif decompress is None:
                file.readinto(raw[where])  # a shard's index, after the data, is left unread
            elif inner is None:
                unzstd(file.read(), where.start, where.stop, files.nbytes)
            else:  # a shard of zstd chunks, its index (offset, size of each) at the end
                shard, per = file.read(), files.nbytes // inner
                index = np.frombuffer(shard, "<u8", count=2 * per, offset=len(shard) - 16 * per - 4)
                for i, (at, size) in enumerate(index.reshape(-1, 2).tolist()):
                    start = where.start + i * inner
                    unzstd(shard[at : at + size], start, min(start + inner, where.stop), inner)

    on_threads(read, files.slices(), threads)
    return out


def read_files(paths: Sequence[pathlib.Path], out: npt.NDArray[np.uint8], threads: int) -> int:
    """Each file ``readinto`` its place in ``out``, one after another; the bytes read."""
    raw, ends = _raw(out), np.cumsum([0, *(path.stat().st_size for path in paths)]).tolist()
    places = [(path, slice(a, b)) for path, a, b in zip(paths, ends, ends[1:])]

    def read(place: Place) -> int:
        with open(place[0], "rb", buffering=0) as file:
            return file.readinto(raw[place[1]]) or 0

    return sum(on_threads(read, places, threads))


def write_floor(
    files: FileSlices, stored: npt.NDArray[Any], threads: int, zstd: bool = False
) -> pathlib.Path:
    """The write floor: each file's bytes of ``stored`` to a new file renamed over it."""
    raw = _raw(np.ascontiguousarray(stored))
    compress = importlib.import_module("numcodecs").Zstd(level=0).encode if zstd else None
    files.paths[0].parent.mkdir(parents=True, exist_ok=True)
    suffix = f".{os.getpid()}.partial"

    def write(item: Place) -> None:
        path, where = item
        temporary = path.with_name(path.name + suffix)
        with open(temporary, "wb", buffering=0) as file:
            file.write(raw[where] if compress is None else compress(raw[where]))
        os.replace(temporary, path)

    on_threads(write, files.slices(), threads)
    return files.paths[0].parent.parent


def read_elements_floor(
    files: FileSlices, dtype: np.dtype[Any], elements: npt.NDArray[np.intp], threads: int
) -> npt.NDArray[Any]:
    """The selection floor: each run of neighbouring ``elements`` in a file read in one go."""
    out = aligned_empty(len(elements), dtype)
    raw, size = _raw(out), dtype.itemsize
    per_file = files.nbytes // size
    order = np.argsort(elements, kind="stable")
    ordered = elements[order]
    # runs of consecutive elements of one file, going to consecutive places of the result
    work: list[tuple[pathlib.Path, list[tuple[int, int, int]]]] = []
    for file_index in np.unique(ordered // per_file).tolist():
        mask = (ordered // per_file) == file_index
        picked, places = ordered[mask], order[mask]
        breaks = np.flatnonzero((np.diff(picked) != 1) | (np.diff(places) != 1)) + 1
        starts, stops = np.concatenate(([0], breaks)), np.concatenate((breaks, [picked.size]))
        runs = [
            (int(picked[a]) - file_index * per_file, int(places[a]), int(b - a))
            for a, b in zip(starts, stops)
        ]
        work.append((files.paths[file_index], runs))

    def read(item: tuple[pathlib.Path, list[tuple[int, int, int]]]) -> None:
        with open(item[0], "rb", buffering=0) as file:
            for start, place, count in item[1]:
                file.seek(start * size)
                file.readinto(raw[place * size : (place + count) * size])

    on_threads(read, work, threads)
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


@contextlib.contextmanager
def quiet_zarr() -> Iterator[None]:
    """Silence zarr's warning that the data type has no stable specification."""
    from zarr.errors import UnstableSpecificationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnstableSpecificationWarning)
        yield


@contextlib.contextmanager
def workspace(
    bench: str, size: int, directory: str | None
) -> Iterator[tuple[str, npt.NDArray[np.str_]]]:
    """A temporary directory (removed on exit) and ``size`` bytes of ``<U16`` text for a bench."""
    require()
    if size < ELEMENT_BYTES:
        raise ValueError(
            f"size: expected at least {ELEMENT_BYTES} bytes (one <U{WIDTH} element), got {size}"
        )
    data = sample_array(size // ELEMENT_BYTES)
    prefix = f"fixedutf32-bench-{bench}-"
    with tempfile.TemporaryDirectory(prefix=prefix, dir=directory) as root, quiet_zarr():
        yield root, data


def _integration() -> ModuleType | None:
    """The fixedutf32.zarr module if it provides the codec and the pipeline, else None."""
    try:
        module = importlib.import_module("fixedutf32.zarr")
    except ImportError:
        return None
    return module if hasattr(module, "BytesCodec") and hasattr(module, "CodecPipeline") else None


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


class _Bench:
    """The arrays on disk and one call per (case, configuration)."""

    def __init__(self, root: str, data: npt.NDArray[np.str_], integration: ModuleType | None):
        self.root, self.data, self.integration = pathlib.Path(root), data, integration
        self.fused = has_fused()
        self.selected: dict[str, Any] = {}
        self.expected: npt.NDArray[np.str_] = data

    def available(self) -> list[str]:
        """The configurations this zarr and this install can run."""
        names = [n for n in CONFIGS if self.fused or n != "fused"]
        return [n for n in names if self.integration or n not in ("codec", "pipeline", "pooled")]

    def case_data(self, case: ZarrCase) -> npt.NDArray[np.str_]:
        """The array a case writes or reads: the data, or its start for a smaller case."""
        limit = case.size_limit
        return self.data if limit is None else self.data[: max(1, limit // ELEMENT_BYTES)]

    def elements(self, nbytes: int, case: ZarrCase) -> int:
        """Elements in ``nbytes`` of array data (at least one, at most the whole array)."""
        return max(1, min(nbytes // ELEMENT_BYTES, len(self.case_data(case))))

    def create(self, path: pathlib.Path, case: ZarrCase, fill: bool = False) -> None:
        """The case's array at ``path`` (with the data if ``fill``), written by stock zarr."""
        shard = case.shard_bytes and self.elements(case.shard_bytes, case)
        zstd, chunk = 0 if case.compressed else None, self.elements(case.chunk_bytes, case)
        options: dict[str, Any] = {"endian": case.endian, "zstd": zstd, "fill": fill}
        options["dimension_names"] = ["x"]  # xarray reads them
        create_array(path, self.case_data(case), chunk, shard or None, **options)

    def files(self, path: pathlib.Path, case: ZarrCase) -> FileSlices:
        """The stored files of the case's array: its chunks, or its shards."""
        per_file = self.elements(case.shard_bytes or case.chunk_bytes, case) * ELEMENT_BYTES
        return file_slices(path, per_file, self.case_data(case).nbytes)

    def calls(self, case_name: str) -> dict[str, Timed | None]:
        """configuration -> call for one case (None: no integration); sets :attr:`expected`."""
        import zarr

        case = CASES[case_name]
        data = self.case_data(case)
        layout = f"{'zstd' if case.compressed else 'raw'}-{case.endian}-{case.chunk_bytes}"
        layout += f"-shards-{case.shard_bytes}" if case.shard_bytes else ""
        path = self.root / f"{case.operation}-{layout}-{data.nbytes}"
        via, read = None, case.operation == "read"
        if case.via != "zarr":  # the array "v" of a group, read through xarray or Dask
            group = path.with_name(path.name + "-group")
            path = group / "v"
            if not path.exists():
                with config("stock"):
                    zarr.create_group(str(group), zarr_format=3)
                self.create(path, case, fill=True)
            via = _via_reader(case.via, group)
        elif not read or not path.exists():
            self.create(path, case, fill=read)
        selection: Selection = None
        if case.selection == "random":  # a fixed sample
            picked = np.random.default_rng(1000).choice(
                len(data), min(SELECTED, len(data)), replace=False
            )
            selection = picked.astype(np.intp)
        elif case.selection == "slice":
            selection = slice(len(data) // 3, min(len(data), len(data) // 3 + SELECTED))
        self.expected = data if selection is None else data[selection]
        files, threads = self.files(path, case), case.threads or os.cpu_count() or 1
        dtype = data.dtype.newbyteorder("<" if case.endian == "little" else ">")
        inner = self.elements(case.chunk_bytes, case) * ELEMENT_BYTES
        calls: dict[str, Timed | None] = {}
        for name in configurations(case_name, fused=self.fused):
            if name in ("codec", "pipeline", "pooled") and self.integration is None:
                calls[name] = None
            elif name == "reader":
                calls[name] = _reader_call(str(path), case.threads)
            elif name == "floor" and selection is not None:
                elements = np.arange(len(data), dtype=np.intp)[selection]
                calls[name] = partial(read_elements_floor, files, dtype, elements, threads)
            elif name == "floor" and read:
                sharded_zstd = inner if case.shard_bytes and case.compressed else None
                floor = partial(read_floor_threads, files, dtype, threads, case.compressed)
                calls[name] = partial(floor, inner=sharded_zstd)
                if not case.compressed and case.via == "zarr":
                    calls[BUFFERED_FLOOR] = partial(floor, buffered=True)
            elif name == "floor":
                calls[name] = self._write_floor(path, files, case, dtype, threads)
            elif case.via != "zarr":
                calls[name] = None if via is None else with_config(name, None, via)
            else:
                array = open_with(name, str(path), self.selected, mode="r" if read else "r+")
                access = access_call(array, selection, None if read else data, path)
                calls[name] = with_config(name, case.threads, access)
        return calls

    def _write_floor(
        self,
        path: pathlib.Path,
        files: FileSlices,
        case: ZarrCase,
        dtype: np.dtype[Any],
        threads: int,
    ) -> Timed:
        """The write floor: the files of the same layout written plainly beside the array."""
        # With its metadata, so that same_data reads them: shards as stock zarr wrote them,
        # chunks whole, the edge one padded with the fill value ("") as zarr pads it.
        floor = path.with_name(path.name + "-floor")
        self.create(floor, case, fill=case.shard_bytes is not None)
        if case.shard_bytes is not None:
            paths = self.files(floor, case).paths
            stored = aligned_empty(sum(p.stat().st_size for p in paths), np.uint8)
            read_files(paths, stored, 1)
            target = file_slices(floor, paths[0].stat().st_size, stored.nbytes)
            return partial(write_floor, target, stored, threads)
        data = self.case_data(case)
        chunks = np.zeros(len(files.paths) * files.nbytes // ELEMENT_BYTES, data.dtype)
        chunks[: len(data)] = data
        target = file_slices(floor, files.nbytes, len(files.paths) * files.nbytes)
        return partial(write_floor, target, chunks.astype(dtype), threads, zstd=case.compressed)

    def same_data(self, result: object) -> bool:
        """Whether a call's result (an array read, or the path written) holds :attr:`expected`."""
        return holds(result, self.expected)


@contextlib.contextmanager
def arrays(size: int = DEFAULT_SIZE, directory: str | None = None) -> Iterator[_Bench]:
    """The bench's ``size`` bytes of ``<U16`` data and its arrays in a temporary directory
    (in ``directory``), removed on exit: ``calls(case)`` gives configuration -> call for a case
    of ``CASES`` (None where the integration is missing), ``same_data(result)`` checks one."""
    with workspace("zarr", size, directory) as (root, data):
        yield _Bench(root, data, _integration())


def latency_seconds(latency: float, rounds: int) -> float:
    """Roughly how long the latency rows take, in seconds."""
    # 226 requests a profile, about 8 in flight (FusedCodecPipeline on the synchronous profile:
    # one at a time), rounds + 2 calls each
    waits = 2 * 3 * 226 / 8 + (226 if has_fused() else 0)
    return 2.0 + (rounds + 2) * latency * waits


def _gbps_row(
    case: str, spec: ZarrCase, sizes: tuple[int, int, int | None], times: Any, same: Any
) -> Row:
    """A row: GB/s (median of the rounds) and data check per configuration, n/a where absent."""
    counted = sizes[0]
    return {
        "case": case,
        "endian": spec.endian,
        "codec": "zstd" if spec.compressed else "raw",
        "threads": spec.threads,
        "size": counted,
        "chunk_size": sizes[1],
        "shard_size": sizes[2],
        "gbps": {
            n: counted / statistics.median(times[n]) / 1e9 if n in times else None for n in CONFIGS
        },
        "same_data": {name: same.get(name) for name in CONFIGS},
    }


def run(
    size: int = DEFAULT_SIZE,
    repeat: int = 9,
    progress: Progress = quiet,
    directory: str | None = None,
    rows: Literal["all", "local", "latency"] = "all",
    latency: float = 0.020,
) -> Row:
    """The ``--zarr`` report: ``CASES`` (``rows="local"``), the latency rows, or ``"all"``."""
    progress(f"generating {format_size(size)} of <U{WIDTH} text")
    table: list[Row] = []
    times_by_case: dict[str, dict[str, list[float]]] = {}
    latency_rows: list[Row] = []
    latency_ratios: list[Row] = []
    # the latency rows make their own small array: the local rows' is made only for them
    with arrays(size if rows != "latency" else ELEMENT_BYTES, directory) as bench:
        if rows != "local":
            # First, while zarr has no pool of its own: the requests it runs on threads get
            # asyncio's default pool, as with zarr's defaults, not the pool sized below.
            from . import _latency

            names = [n for n in ("stock", "fused", "pipeline") if n in bench.available()]
            latency_rows, latency_times = _latency.measure(
                names, min(repeat, 5), latency, progress=progress, directory=directory
            )
            latency_ratios = _latency.ratios(latency_rows, latency_times)
        # zarr creates its thread pool once, at the first call made while threading.max_workers
        # is set: two threads wide (the widest row) before any row, or the 2-thread row would
        # run on the 1-thread row's pool of one.
        import zarr

        with zarr.config.set({"threading.max_workers": 2}):
            zarr.create_group(store=zarr.storage.MemoryStore())
        for case, spec in CASES.items() if rows != "latency" else ():
            calls = {name: call for name, call in bench.calls(case).items() if call is not None}
            counted = bench.expected.nbytes
            progress(f"{case} ({format_size(counted)}, {repeat} rounds)")
            times, same = in_turn(calls, repeat, bench.same_data)
            if BUFFERED_FLOOR in times:  # the best plain read of each round
                buffered = times.pop(BUFFERED_FLOOR)
                times["floor"] = [min(a, b) for a, b in zip(times["floor"], buffered)]
                same["floor"] = bool(same["floor"] and same.pop(BUFFERED_FLOOR))
            shard = spec.shard_bytes and bench.elements(spec.shard_bytes, spec) * ELEMENT_BYTES
            chunk = bench.elements(spec.chunk_bytes, spec) * ELEMENT_BYTES
            table.append(_gbps_row(case, spec, (counted, chunk, shard), times, same))
            times_by_case[case] = times
    found = (ratios(times_by_case, RATIOS) if table else []) + latency_ratios
    return _zarr_report(bench, table, progress, repeat=repeat, ratios=found, latency=latency_rows)


def _zarr_report(bench: _Bench, rows: list[Row], progress: Progress, **fields: Any) -> Row:
    """The ``--zarr`` report of ``rows`` and ``fields``, with the thread reference measured now."""
    import zarr

    progress("2 threads: decode_chunk and numpy.copyto, for reference")
    decode, copy = measure_threads(MiB, 2)  # how much scaling the machine allowed
    reference = {"threads": 2, "size": MiB, "decode_chunk_scaling": decode, "memcpy_scaling": copy}
    report = {
        "zarr_version": zarr.__version__,
        "integration": bench.integration is not None,
        "selected": bench.selected,
        "native_byteorder": sys.byteorder,
        "dtype": f"<U{WIDTH}",
        "size": bench.data.nbytes,
        "chunk_size": rows[0]["chunk_size"] if rows else 0,
        "repeat": 0,
        "rows": rows,
        "latency": [],
        "ratios": [],
        "threads_reference": reference,
        "array": None,
        "notes": [],
    }
    return {**report, **fields}


def ratios(times: Mapping[str, Mapping[str, list[float]]], wanted: list[Ratio]) -> list[Row]:
    """Each ratio of ``wanted``: the median of the rounds' speed ratios (times: case -> config)."""
    result = []
    for name, (num_case, num), (den_case, den) in wanted:
        top = times[num_case].get(num)
        bottom = fastest_zarr(times[den_case]) if den == "zarr" else times[den_case].get(den)
        value = statistics.median(b / t for t, b in zip(top, bottom)) if top and bottom else None
        result.append({"ratio": name, "value": value, **judge("zarr", name, value)})
    return result


def open_user_array(where: str, storage_options: str | None) -> dict[str, Any]:
    """The array at ``where`` checked, read-only; ValueError in one line if it cannot be benched."""
    options = json.loads(storage_options) if storage_options else {}
    url = "://" in where
    if not isinstance(options, dict):
        raise ValueError(f"--storage-options: expected a JSON object, got {storage_options}")
    if options and not url:
        raise ValueError("--storage-options: only for a URL")
    if not url and not os.path.isdir(where):
        raise ValueError(f"no Zarr array at {where}: not a directory")
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync
    from zarr.storage import FsspecStore, LocalStore

    open_url = partial(FsspecStore.from_url, where, storage_options=options, read_only=True)
    store = open_url() if url else LocalStore(where, read_only=True)

    def get(key: str) -> bytes | None:
        found = sync(store.get(key, default_buffer_prototype()))
        return None if found is None else found.to_bytes()

    source: str | Get = get if url else where
    raw = get("zarr.json") or get(".zarray")
    doc = json.loads(raw) if raw else {}
    if doc.get("node_type") == "group" or (not raw and get(".zgroup")):
        raise ValueError(f"{where} is a group: give the path of one of its arrays, {where}/NAME")
    if not raw:
        raise ValueError(f"no Zarr array at {where}: no zarr.json or .zarray")
    try:
        parse_stored(doc)
    except FixedUTF32Error as error:
        raise ValueError(f"cannot bench the array at {where}: {error}") from None
    return {"where": where, "doc": doc, "source": source, "options": options}


def _codecs(doc: dict[str, Any]) -> str:
    """The array's codecs in a word or two: ``raw``, ``zstd``, ``sharded zstd``..."""
    if doc.get("zarr_format") == 2:
        return str((doc.get("compressor") or {}).get("id", "raw"))
    names = []
    for codec in doc.get("codecs", []):
        if codec["name"] == "sharding_indexed":
            names.append("sharded " + _codecs({"codecs": codec["configuration"]["codecs"]}))
        elif codec["name"] not in ("bytes", "transpose"):
            names.append(codec["name"])
    return "+".join(names) or "raw"


def run_user_array(array: dict[str, Any], repeat: int = 9, progress: Progress = quiet) -> Row:
    """The ``--zarr PATH_OR_URL`` report: every configuration reading all of ``array`` in turn."""
    where, doc, source = array["where"], array["doc"], array["source"]
    model, meta, key_meta = parse_stored(doc)
    bench = _Bench("", np.empty(0, "<U1"), _integration())
    notes, calls, v2 = [], {}, doc.get("zarr_format") == 2
    options = array["options"] or None if callable(source) else None  # fsspec's, for a URL
    with quiet_zarr():
        for name in [n for n in bench.available() if n not in ("reader", "floor")]:
            if name == "codec" and v2:
                notes.append("codec: n/a: a V2 array has no bytes codec to replace")
                continue
            opened = open_with(name, where, bench.selected, storage_options=options)
            calls[name] = with_config(name, None, access_call(opened, None))
        try:
            calls["reader"] = _reader_call(where, None, storage_options=options)
        except FixedUTF32Error as error:
            notes.append(f"reader: n/a: {error}")
        if callable(source):
            notes.append(f"floor: n/a for a URL: {_NO_FLOOR}")
        else:
            files = chunk_files(source)
            buffer = aligned_empty(sum(path.stat().st_size for path in files), np.uint8)
            calls["floor"] = partial(read_files, files, buffer, os.cpu_count() or 1)
        expected = calls["stock"]()
        nbytes = int(np.asarray(expected).nbytes)
        progress(f"{USER_CASE} ({format_size(nbytes)}, {repeat} rounds)")

        def same(result: object) -> bool:
            if isinstance(result, int):  # the floor: every byte of the files read
                return result == buffer.nbytes
            return bool(np.array_equal(np.asarray(result), np.asarray(expected)))

        times, checked = in_turn(calls, repeat, same)
    spec = ZarrCase("read", None, model.endian or "little", False)
    item = meta.data_type.length_bytes
    shard = None if model.shard is None else int(np.prod(key_meta.chunk_shape)) * item
    sizes = (nbytes, int(np.prod(meta.chunk_shape)) * item, shard)
    row = _gbps_row(USER_CASE, spec, sizes, times, checked)
    row["codec"] = _codecs(doc)
    wanted = [("pipeline", "fastest zarr"), ("pipeline", "stock"), ("codec", "stock")]
    wanted += [(name, "floor") for name in CONFIGS if name != "floor"]
    ran = [(a, b) for a, b in wanted if a in times and (b == "fastest zarr" or b in times)]
    dtype = f"{meta.data_type.to_numpy(meta.endian).str} {list(meta.shape)}, {_codecs(doc)}"
    found = ratios({USER_CASE: times}, [_ratio(USER_CASE, a, b) for a, b in ran])
    fields = {"dtype": dtype, "size": nbytes, "repeat": repeat, "ratios": found, "array": where}
    return _zarr_report(bench, [row], progress, **fields, notes=notes)
