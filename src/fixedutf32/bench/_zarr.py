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
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from .._pool import aligned_empty
from .._source.reader import Get
from ..errors import FixedUTF32Error
from ..metadata._model import parse_stored
from ._kernels import measure_threads
from ._report import Row, judge
from .cases import WIDTH, KiB, MiB, Progress, Timed, format_size, in_turn, sample_array

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
USER_CASE = "read your array"
_NO_FLOOR = "the floor reads the chunk files with readinto, which needs a local directory"
_Item = TypeVar("_Item")
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
        "read", None, "little", False, 16 * KiB, None, "all", 64 * MiB
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
READER_CASES = (  # the reader's rows with a target (issue 28), against the floor
    "read raw little",
    "read raw, 64 KiB chunks",
    "read raw, 16 KiB chunks",
    "read sharded raw",
    "read zstd, 1 thread",
    "read zstd, 2 threads",
)
RATIOS += [(f"reader / floor, {c}", (c, "reader"), (c, "floor")) for c in READER_CASES]


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
        and (plain or name != "reader")
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
    """``open_array(where).read()``: into a new array, as a reader is used (its memory from the
    pool of freed buffers after the first round)."""
    from ..array import open_array

    stored = open_array(where, **options)
    return lambda: stored.read(threads=threads)


def chunk_files(store: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The files of a local array's chunks (or shards), sorted: all but its metadata."""
    metadata = {"zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata"}
    files = pathlib.Path(store).rglob("*")
    return sorted(p for p in files if p.is_file() and p.name not in metadata)


def _raw(array: npt.NDArray[np.generic]) -> memoryview:
    # NumPy declares the buffer protocol of an array for Python >= 3.12 only.
    return memoryview(array.view(np.uint8))  # type: ignore[arg-type,unused-ignore]


class FileSlices(NamedTuple):
    """The chunk (or shard) files of a one-dimensional array, in order, ``nbytes`` of array
    data each (the last may hold fewer), ``total`` bytes in all."""

    paths: tuple[pathlib.Path, ...]
    nbytes: int
    total: int

    def slices(self) -> list[Place]:
        return [
            (path, slice(i * self.nbytes, min((i + 1) * self.nbytes, self.total)))
            for i, path in enumerate(self.paths)
        ]


def _file_slices(directory: pathlib.Path, nbytes: int, total: int) -> FileSlices:
    """The chunk files ``directory/c/0, c/1, ...`` of a one-dimensional V3 array."""
    count = -(-total // nbytes)
    return FileSlices(tuple(directory / "c" / str(i) for i in range(count)), nbytes, total)


def on_threads(work: Callable[[_Item], object], items: Sequence[_Item], threads: int) -> None:
    """``work`` on each item: one share of consecutive items per thread, as pipelines split."""
    size = max(1, -(-len(items) // max(threads, 1)))
    shares = [items[i : i + size] for i in range(0, len(items), size)]
    if threads <= 1 or len(shares) <= 1:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda share: [work(item) for item in share], shares))


def read_floor_threads(
    files: FileSlices, dtype: np.dtype[np.str_], threads: int, zstd: bool, buffered: bool = False
) -> npt.NDArray[np.str_]:
    """The files' bytes in one new array of ``dtype``: ``readinto`` their slice (``buffered``:
    into a reused buffer, then copied), or zstd-decompressed into it; missing files unset."""
    out = aligned_empty(files.total // dtype.itemsize, dtype)
    raw = _raw(out)
    decompress = importlib.import_module("numcodecs").Zstd().decode if zstd else None
    buffers = threading.local()

    def read(item: Place) -> None:
        path, where = item
        try:
            file = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        n = where.stop - where.start
        with file:
            if decompress is None and buffered:
                if getattr(buffers, "buffer", None) is None:
                    buffers.buffer = aligned_empty(files.nbytes, np.uint8).data
                file.readinto(buffers.buffer[:n])
                raw[where] = buffers.buffer[:n]
            elif decompress is None:
                file.readinto(raw[where])  # a shard's index, after the data, is left unread
            elif n == files.nbytes:
                decompress(file.read(), out=raw[where])
            else:  # the edge chunk: stored whole, of which the array holds the start
                raw[where] = memoryview(decompress(file.read())).cast("B")[:n]

    on_threads(read, files.slices(), threads)
    return out


def read_files(paths: Sequence[pathlib.Path], out: npt.NDArray[np.uint8], threads: int) -> int:
    """Each file ``readinto`` its place in ``out``, one after another; the bytes read."""
    raw, at, places = _raw(out), 0, []
    for path in paths:
        size = path.stat().st_size
        places.append((path, slice(at, at + size)))
        at += size
    counts = [0] * len(places)

    def read(index: int) -> None:
        path, where = places[index]
        with open(path, "rb", buffering=0) as file:
            counts[index] = file.readinto(raw[where]) or 0

    on_threads(read, range(len(places)), threads)
    return sum(counts)


def write_floor(
    files: FileSlices, stored: npt.NDArray[Any], threads: int, zstd: bool = False
) -> pathlib.Path:
    """Each chunk's bytes of ``stored`` (zstd-compressed) to a new file renamed over its own,
    as zarr's ``LocalStore`` writes; the directory of the files."""
    raw = _raw(np.ascontiguousarray(stored))
    compress = importlib.import_module("numcodecs").Zstd(level=0).encode if zstd else None
    files.paths[0].parent.mkdir(parents=True, exist_ok=True)
    suffix = f".{os.getpid()}.partial"

    def write(item: Place) -> None:
        path, where = item
        partial = path.with_name(path.name + suffix)
        with open(partial, "wb", buffering=0) as file:
            file.write(raw[where] if compress is None else compress(raw[where]))
        os.replace(partial, path)

    on_threads(write, files.slices(), threads)
    return files.paths[0].parent.parent


def read_elements_floor(
    files: FileSlices, dtype: np.dtype[np.str_], elements: npt.NDArray[np.intp], threads: int
) -> npt.NDArray[np.str_]:
    """Only the bytes of ``elements`` of a raw one-dimensional array: each run of neighbours
    in a file read with one ``pread`` into its place in the result."""
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


def read_sharded_zstd_floor(
    files: FileSlices, dtype: np.dtype[np.str_], inner_nbytes: int, threads: int
) -> npt.NDArray[np.str_]:
    """Shards of zstd inner chunks (index at the end, crc32c): each shard file read whole,
    each inner chunk decompressed into its place."""
    out = aligned_empty(files.total // dtype.itemsize, dtype)
    raw = _raw(out)
    per_shard = files.nbytes // inner_nbytes
    decompress = importlib.import_module("numcodecs").Zstd().decode

    def read(item: Place) -> None:
        path, where = item
        shard = path.read_bytes()
        at = len(shard) - 16 * per_shard - 4
        index = np.frombuffer(shard, "<u8", count=2 * per_shard, offset=at)
        for local, (offset, nbytes) in enumerate(index.reshape(-1, 2).tolist()):
            start = where.start + local * inner_nbytes
            stop = min(start + inner_nbytes, where.stop)
            if stop - start == inner_nbytes:
                decompress(shard[offset : offset + nbytes], out=raw[start:stop])
            elif start < stop:  # the array's edge cuts this inner chunk
                whole = memoryview(decompress(shard[offset : offset + nbytes]))
                raw[start:stop] = whole[: stop - start]

    on_threads(read, files.slices(), threads)
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


def open_with(name: str, store: Any, selected: dict[str, Any], **kwargs: Any) -> AnyArray:
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
        return [n for n in names if self.integration or n not in ("codec", "pipeline")]

    def case_data(self, case: ZarrCase) -> npt.NDArray[np.str_]:
        """The array a case writes or reads: the data, or its start for a smaller case."""
        limit = case.size_limit
        return self.data if limit is None else self.data[: max(1, limit // ELEMENT_BYTES)]

    def elements(self, nbytes: int, case: ZarrCase) -> int:
        """Elements in ``nbytes`` of array data (at least one, at most the whole array)."""
        return max(1, min(nbytes // ELEMENT_BYTES, len(self.case_data(case))))

    def create(self, path: pathlib.Path, case: ZarrCase, fill: bool = False) -> None:
        """The case's array at ``path`` (with the data if ``fill``), written by stock zarr."""
        import zarr
        from zarr.codecs import BytesCodec, ZstdCodec

        data = self.case_data(case)
        shards = None if case.shard_bytes is None else (self.elements(case.shard_bytes, case),)
        with config("stock"):
            array = zarr.create_array(
                str(path),
                shape=data.shape,
                chunks=(self.elements(case.chunk_bytes, case),),
                shards=shards,
                dtype=data.dtype,
                serializer=BytesCodec(endian=case.endian),
                compressors=ZstdCodec() if case.compressed else None,
                fill_value="",
                overwrite=True,
                dimension_names=["x"],  # xarray reads it
            )
            if fill:
                array[...] = data

    def files(self, path: pathlib.Path, case: ZarrCase) -> FileSlices:
        """The stored files of the case's array: its chunks, or its shards."""
        per_file = self.elements(case.shard_bytes or case.chunk_bytes, case) * ELEMENT_BYTES
        return _file_slices(path, per_file, self.case_data(case).nbytes)

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
        selection: npt.NDArray[np.intp] | slice | None = None
        if case.selection == "random":  # a fixed sample
            rng = np.random.default_rng(1000)
            size = min(SELECTED, len(data))
            selection = rng.choice(len(data), size=size, replace=False).astype(np.intp)
        elif case.selection == "slice":
            selection = slice(len(data) // 3, min(len(data), len(data) // 3 + SELECTED))
        self.expected = data if selection is None else data[selection]
        files, threads = self.files(path, case), case.threads or os.cpu_count() or 1
        dtype = data.dtype.newbyteorder("<" if case.endian == "little" else ">")
        calls: dict[str, Timed | None] = {}
        for name in configurations(case_name, fused=self.fused):
            if name in ("codec", "pipeline") and self.integration is None:
                calls[name] = None
            elif name == "reader":
                calls[name] = _reader_call(str(path), case.threads)
            elif name == "floor" and selection is not None:
                elements = np.arange(len(data), dtype=np.intp)[selection]
                calls[name] = lambda: read_elements_floor(files, dtype, elements, threads)
            elif (
                name == "floor"
                and case.operation == "read"
                and case.shard_bytes
                and case.compressed
            ):
                inner = self.elements(case.chunk_bytes, case) * ELEMENT_BYTES
                calls[name] = lambda: read_sharded_zstd_floor(files, dtype, inner, threads)
            elif name == "floor" and case.operation == "read":
                calls[name] = lambda: read_floor_threads(files, dtype, threads, case.compressed)
                if not case.compressed and case.via == "zarr":
                    calls[BUFFERED_FLOOR] = lambda: read_floor_threads(
                        files, dtype, threads, False, buffered=True
                    )
            elif name == "floor":
                calls[name] = self._write_floor(path, files, case, dtype, threads)
            elif case.via != "zarr":
                calls[name] = None if via is None else _with_config(name, None, via)
            elif case.operation == "read":
                array = open_with(name, str(path), self.selected)
                calls[name] = _with_config(name, case.threads, _reader(array, selection))
            else:
                array = open_with(name, str(path), self.selected, mode="r+")

                def write(array: AnyArray = array) -> pathlib.Path:
                    array[...] = data
                    return path

                calls[name] = _with_config(name, case.threads, write)
        return calls

    def _write_floor(
        self,
        path: pathlib.Path,
        files: FileSlices,
        case: ZarrCase,
        dtype: np.dtype[np.str_],
        threads: int,
    ) -> Timed:
        # The files of an array of the same layout, written plainly beside it (with its
        # metadata, so that same_data reads them): shards as stock zarr wrote them, chunks
        # whole, the edge one padded with the fill value ("") as zarr pads it.
        floor = path.with_name(path.name + "-floor")
        self.create(floor, case, fill=case.shard_bytes is not None)
        if case.shard_bytes is not None:
            paths = self.files(floor, case).paths
            stored = aligned_empty(sum(p.stat().st_size for p in paths), np.uint8)
            read_files(paths, stored, 1)
            target = _file_slices(floor, paths[0].stat().st_size, stored.nbytes)
            return lambda: write_floor(target, stored, threads)
        data = self.case_data(case)
        chunks = np.zeros(len(files.paths) * files.nbytes // ELEMENT_BYTES, data.dtype)
        chunks[: len(data)] = data
        stored_chunks = chunks.astype(dtype)
        target = _file_slices(floor, files.nbytes, len(files.paths) * files.nbytes)
        return lambda: write_floor(target, stored_chunks, threads, zstd=case.compressed)

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


@contextlib.contextmanager
def arrays(size: int = DEFAULT_SIZE, directory: str | None = None) -> Iterator[_Bench]:
    """The bench's ``size`` bytes of ``<U16`` data and its arrays in a temporary directory
    (in ``directory``), removed on exit: ``calls(case)`` gives configuration -> call for a case
    of ``CASES`` (None where the integration is missing), ``same_data(result)`` checks one."""
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
    progress: Progress | None = None,
    directory: str | None = None,
    rows: Literal["all", "local", "latency"] = "all",
    latency: float = 0.020,
) -> Row:
    """The ``--zarr`` report: ``CASES`` on ``size`` bytes of ``<U16`` (``rows``: ``local``),
    the latency rows at ``latency`` seconds a request (``latency``), or both (``all``)."""
    say = progress or (lambda message: None)
    say(f"generating {format_size(size)} of <U{WIDTH} text")
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
                config, names, min(repeat, 5), latency, progress=say, directory=directory
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
            say(f"{case} ({format_size(counted)}, {repeat} rounds)")
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
    return _zarr_report(
        bench, f"<U{WIDTH}", bench.data.nbytes, repeat, table, found, say, latency_rows
    )


def _zarr_report(
    bench: _Bench,
    dtype: str,
    size: int,
    repeat: int,
    rows: list[Row],
    ratios: list[Row],
    say: Progress,
    latency: list[Row] | None = None,
    array: str | None = None,
    notes: list[str] | None = None,
) -> Row:
    """The ``--zarr`` report of these rows and ratios, with the thread reference measured now:
    decode_chunk and numpy.copyto on two threads, how much scaling the machine allowed."""
    import zarr

    say("2 threads: decode_chunk and numpy.copyto, for reference")
    decode, copy = measure_threads(MiB, 2)
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
        "threads_reference": {
            "threads": 2,
            "size": MiB,
            "decode_chunk_scaling": decode,
            "memcpy_scaling": copy,
        },
        "array": array,
        "notes": notes or [],
    }


def ratios(
    times: Mapping[str, Mapping[str, list[float]]],
    wanted: list[tuple[str, tuple[str, str], tuple[str, str]]],
) -> list[Row]:
    """Each ratio of ``wanted``: the median over rounds of the round's speed ratio; ``times``
    maps case -> configuration -> seconds of each round ("zarr": the faster of stock, fused)."""
    result = []
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


def open_user_array(where: str, storage_options: str | None) -> dict[str, Any]:
    """The array at ``where`` checked for the bench (``where``, its metadata ``doc``, its
    ``source``: the directory, or get(key) for a URL, and a URL's ``options``); ValueError in
    one line if it is none, a group, or not of this data type (nothing is written)."""
    options = json.loads(storage_options) if storage_options else {}
    if not isinstance(options, dict):
        raise ValueError(f"--storage-options: expected a JSON object, got {storage_options}")
    if "://" in where:
        from zarr.core.buffer import default_buffer_prototype
        from zarr.core.sync import sync
        from zarr.storage import FsspecStore

        store = FsspecStore.from_url(where, storage_options=options, read_only=True)

        def get(key: str) -> bytes | None:
            found = sync(store.get(key, default_buffer_prototype()))
            return None if found is None else found.to_bytes()

        source: str | Get = get
    elif options:
        raise ValueError("--storage-options: only for a URL")
    elif not os.path.isdir(where):
        raise ValueError(f"no Zarr array at {where}: not a directory")
    else:
        source = where

        def get(key: str) -> bytes | None:
            path = pathlib.Path(where, key)
            return path.read_bytes() if path.is_file() else None

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


def run_user_array(array: dict[str, Any], repeat: int = 9, progress: Progress | None = None) -> Row:
    """Every configuration of ``--zarr`` reading the whole of ``array`` in turn, round after
    round; the floor reads its chunk files into one preallocated buffer (local only)."""
    say = progress or (lambda message: None)
    where, doc, source = array["where"], array["doc"], array["source"]
    model, meta, key_meta = parse_stored(doc)
    bench = _Bench("", np.empty(0, "<U1"), _integration())
    notes, calls, v2 = [], {}, doc.get("zarr_format") == 2
    options = array["options"] if callable(source) else None
    with quiet_zarr():
        for name in [n for n in bench.available() if n not in ("reader", "floor")]:
            if name == "codec" and v2:
                notes.append("codec: n/a: a V2 array has no bytes codec to replace")
                continue
            opened = open_with(name, where, bench.selected, storage_options=options or None)
            calls[name] = _with_config(name, None, _reader(opened, None))
        try:
            calls["reader"] = _reader_call(where, None, storage_options=options or None)
        except FixedUTF32Error as error:
            notes.append(f"reader: n/a: {error}")
        if callable(source):
            notes.append(f"floor: n/a for a URL: {_NO_FLOOR}")
        else:
            files = chunk_files(source)
            buffer = aligned_empty(sum(path.stat().st_size for path in files), np.uint8)
            floor_call: Timed = lambda: read_files(files, buffer, os.cpu_count() or 1)  # noqa: E731
            calls["floor"] = floor_call
        expected = calls["stock"]()
        nbytes = int(np.asarray(expected).nbytes)
        say(f"{USER_CASE} ({format_size(nbytes)}, {repeat} rounds)")

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
    pairs = [
        (
            f"{a} / {b}, {USER_CASE}",
            (USER_CASE, a),
            (USER_CASE, "zarr" if b == "fastest zarr" else b),
        )
        for a, b in wanted
        if a in times and (b == "fastest zarr" or b in times)
    ]
    dtype = f"{meta.data_type.to_numpy(meta.endian).str} {list(meta.shape)}, {_codecs(doc)}"
    found = ratios({USER_CASE: times}, pairs)
    return _zarr_report(bench, dtype, nbytes, repeat, [row], found, say, None, where, notes)
