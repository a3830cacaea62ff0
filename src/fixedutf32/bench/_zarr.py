"""zarr-python with and without fixedutf32, side by side: ``fixedutf32 bench --zarr``.

One ``<U16`` array (256 MiB by default) is written to a temporary local
directory in each layout of ``CASES`` (1 MiB chunks raw little and big
endian, zstd, and 8 MiB shards of 64 KiB chunks), and read or written by:

- ``stock``: zarr-python as installed, its default ``BatchedCodecPipeline``;
- ``fused``: zarr with its ``FusedCodecPipeline`` (zarr >= 3.4; n/a before);
- ``codec``: zarr with ``codecs.bytes = fixedutf32.zarr.BytesCodec``;
- ``pipeline``: zarr with ``codec_pipeline.path = fixedutf32.zarr.CodecPipeline``
  (and its codec);
- ``reader``: the standalone reader of docs/reader.md, decoding each chunk straight
  into its slice of the result (``decode_chunk(..., out=...)``);
- ``floor``: the same files read plainly into one new array (``readinto``
  each file into its slice; zstd: decompressed into it), or the encoded
  chunks written plainly (zstd: compressed, then written), on as many
  threads as the pipelines use: the least any reader or writer can cost.

The latency rows (:mod:`._latency`) read and write a small array through a
store that waits on every request, as S3 (``async``) or NFS (``sync``)
does, with stock, fused and pipeline, counting the requests.

Each configuration's first call (not timed) is checked against the data
written; then every round times each configuration once, in turn, and a
figure is the median over the rounds.  A ratio is the median of the
per-round ratios, so both sides of it are always timed moments apart;
"fastest zarr" is, per round, the faster of ``stock`` and ``fused``.  zarr
is imported here only, when the bench runs.
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

from .._source.reader import KeyReader
from ..chunk import decode_chunk
from ..metadata import parse_array_metadata
from ..metadata._model import parse_stored
from ._floors import (
    FileSlices,
    read_elements_floor,
    read_floor_threads,
    read_sharded_zstd_floor,
    stored_files,
    thread_count,
    write_floor,
)
from ._kernels import measure_threads
from ._report import LatencyRow, Selected, ZarrReport, ZarrRow
from ._targets import Ratio, judge
from ._timing import MiB, Progress, Timed, format_size, in_turn
from .cases import WIDTH, sample_units

if TYPE_CHECKING:
    from zarr.types import AnyArray

DEFAULT_SIZE = 256 * MiB
CHUNK_BYTES = MiB
ELEMENT_BYTES = 4 * WIDTH
CONFIGS = ("stock", "fused", "codec", "pipeline", "reader", "floor")
# Timed beside "floor" on raw reads; the floor of a round is the faster of the two.
BUFFERED_FLOOR = "floor, through a buffer"
ZARR_CONFIGS = ("stock", "fused", "codec", "pipeline")
FUSED_PATH = "zarr.core.codec_pipeline.FusedCodecPipeline"
# zarr configuration that selects each configuration (fused: where zarr has it)
INTEGRATION: dict[str, dict[str, str]] = {
    "stock": {},
    "fused": {"codec_pipeline.path": FUSED_PATH},
    "codec": {"codecs.bytes": "fixedutf32.zarr.BytesCodec"},
    "pipeline": {
        "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline",
        "codecs.bytes": "fixedutf32.zarr.BytesCodec",
    },
}


class ZarrCase(NamedTuple):
    """What a case of ``fixedutf32 bench --zarr`` does, to which array."""

    operation: Literal["read", "write"]
    threads: int | None  # None: zarr's defaults
    endian: Literal["little", "big"]
    compressed: bool  # zstd, else raw
    chunk_bytes: int = CHUNK_BYTES
    shard_bytes: int | None = None  # None: not sharded
    selection: Literal["all", "random", "slice"] = "all"
    size_limit: int | None = None  # a smaller array for this case (many small chunks)
    via: Literal["zarr", "xarray", "dask"] = "zarr"  # who reads the array


KiB = 1024
# The elements a selection row reads: 1000 of them, random, or in one run.
SELECTED = 1000

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
    # through xarray (open_zarr(...)[v].values) and Dask (from_zarr(...).compute()),
    # when they are installed: their own costs are theirs (docs/performance.md)
    "xarray open_zarr": ZarrCase("read", None, "little", False, via="xarray"),
    "dask from_zarr": ZarrCase("read", None, "little", False, via="dask"),
}

# Ratios reported (their targets are in ._targets): name, numerator (case,
# configuration), denominator (case, configuration); "fastest zarr" is the
# faster of stock and fused in each round.
RATIOS: list[tuple[str, tuple[str, str], tuple[str, str]]] = [
    *[(f"pipeline / fastest zarr, {case}", (case, "pipeline"), (case, "zarr")) for case in CASES],
    *[(f"pipeline / stock, {case}", (case, "pipeline"), (case, "stock")) for case in CASES],
    *[(f"pipeline / floor, {case}", (case, "pipeline"), (case, "floor")) for case in CASES],
    *[
        (f"codec / stock, {case}", (case, "codec"), (case, "stock"))
        for case, spec in CASES.items()
        if spec.via == "zarr"
    ],
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


def configurations(case: str, *, fused: bool | None = None) -> tuple[str, ...]:
    """The configurations that run ``case``.

    Writes are zarr's and the floor's; the standalone reader is single
    threaded and reads plain chunks; ``fused`` only where zarr has it.

    Parameters
    ----------
    case : str
        A key of ``CASES``, e.g. ``"read raw big"``.
    fused : bool, optional
        Whether to run zarr's ``FusedCodecPipeline``; by default, whether the
        installed zarr has it.

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
    if fused is None:
        fused = has_fused()
    names = [name for name in CONFIGS if fused or name != "fused"]
    if (
        spec.operation == "write"
        or spec.threads == 2
        or spec.shard_bytes is not None
        or spec.selection != "all"
        or spec.via != "zarr"
    ):
        names.remove("reader")
    if spec.via != "zarr":
        names.remove("codec")
    return tuple(names)


def has_fused() -> bool:
    """Whether the installed zarr has ``FusedCodecPipeline`` (zarr >= 3.4)."""
    from zarr.core import codec_pipeline

    return hasattr(codec_pipeline, "FusedCodecPipeline")


def read_array(store: str | os.PathLike[str]) -> npt.NDArray[np.str_]:
    """Read a local Zarr array of the ``fixed_length_utf32`` type with fixedutf32 alone.

    The standalone reader of docs/reader.md on the package's one reader of
    keys (:class:`fixedutf32._source.reader.KeyReader`, sharded arrays too),
    with each whole chunk decoded straight into its slice of the result
    (``decode_chunk(..., out=...)``), so its bytes are written once.

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
    fixedutf32.CorruptChunkError, fixedutf32.ChunkSizeError
        If a chunk file is not a regular file, or a chunk does not decode
        to its size (a frame's header is checked before it is inflated).

    Examples
    --------
    >>> import tempfile, zarr
    >>> with tempfile.TemporaryDirectory() as path:
    ...     _ = zarr.create_array(path, data=np.array(["ab", "c", "d"]), chunks=(2,))
    ...     read_array(path).tolist()
    ['ab', 'c', 'd']
    """
    store = pathlib.Path(store)
    name = "zarr.json" if (store / "zarr.json").exists() else ".zarray"
    model, meta, key_meta = parse_stored((store / name).read_bytes())
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

    # Missing keys (and chunks a shard does not hold) read as the fill value.
    for key_index in key_meta.chunk_indices():
        reader.read(key_index, str(store), place)
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
        integration: ModuleType | None,
    ) -> None:
        self.root = pathlib.Path(root)
        self.data = data
        self.integration = integration
        self.fused = has_fused()
        self.selected: dict[str, Selected] = {}
        self.expected: npt.NDArray[np.str_] = data

    def config(
        self, name: str, threads: int | None = None
    ) -> contextlib.AbstractContextManager[object]:
        import zarr

        settings: dict[str, str | int] = dict(INTEGRATION[name])
        if threads is not None:
            # async.concurrency bounds the chunks zarr decodes at once;
            # threading.max_workers the threads of a pool, and
            # codec_pipeline.max_workers those of FusedCodecPipeline's.
            settings.update(
                {
                    "async.concurrency": threads,
                    "threading.max_workers": threads,
                    "codec_pipeline.max_workers": threads,
                }
            )
        # zarr's config object (donfig's) has no type information.
        context: contextlib.AbstractContextManager[object] = zarr.config.set(settings)
        return context

    def case_data(self, case: ZarrCase) -> npt.NDArray[np.str_]:
        """The array a case writes or reads: the data, or its start for a smaller case."""
        if case.size_limit is None:
            return self.data
        return self.data[: max(1, case.size_limit // ELEMENT_BYTES)]

    def selection(self, case: ZarrCase) -> npt.NDArray[np.intp] | slice | None:
        """The elements a selection case reads (random: a fixed sample), or None for all."""
        count = len(self.case_data(case))
        if case.selection == "random":
            rng = np.random.default_rng(1000)
            return rng.choice(count, size=min(SELECTED, count), replace=False).astype(np.intp)
        if case.selection == "slice":
            start = count // 3
            return slice(start, min(count, start + SELECTED))
        return None

    def elements(self, nbytes: int, case: ZarrCase | None = None) -> int:
        """Elements in ``nbytes`` of array data (at least one, at most the whole array)."""
        total = len(self.data if case is None else self.case_data(case))
        return max(1, min(nbytes // ELEMENT_BYTES, total))

    def create(self, path: pathlib.Path, case: ZarrCase) -> AnyArray:
        import zarr
        from zarr.codecs import BytesCodec, ZstdCodec

        data = self.case_data(case)
        shards = None
        if case.shard_bytes is not None:
            shards = (self.elements(case.shard_bytes, case),)
        return zarr.create_array(
            str(path),
            shape=data.shape,
            chunks=(self.elements(case.chunk_bytes, case),),
            shards=shards,
            dtype=data.dtype,
            serializer=BytesCodec(endian=case.endian),
            compressors=ZstdCodec() if case.compressed else None,
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
        chosen = {"codec": self.selected[name]["bytes codec"]}.get(
            name, self.selected[name]["pipeline"]
        )
        if name in ("codec", "pipeline") and not chosen.startswith("fixedutf32."):
            raise RuntimeError(
                f"zarr configuration {INTEGRATION[name]} did not select fixedutf32: "
                f"got {self.selected[name]} for {path}"
            )
        if name == "fused" and self.selected[name]["pipeline"] != FUSED_PATH:
            raise RuntimeError(f"zarr did not select {FUSED_PATH}: got {self.selected[name]}")
        return array

    def files(self, path: pathlib.Path, case: ZarrCase) -> FileSlices:
        """The stored files of the case's array: its chunks, or its shards."""
        per_file = self.elements(case.shard_bytes or case.chunk_bytes, case) * ELEMENT_BYTES
        return FileSlices.of(path, per_file, self.case_data(case).nbytes)

    def calls(self, case_name: str) -> dict[str, Timed | None]:
        """configuration -> call for one case; None where the integration is missing.

        Also sets what :meth:`same_data` compares the calls' results with.
        """
        case = CASES[case_name]
        data = self.case_data(case)
        layout = f"{'zstd' if case.compressed else 'raw'}-{case.endian}-{case.chunk_bytes}"
        if case.shard_bytes is not None:
            layout += f"-shards-{case.shard_bytes}"
        path = self.root / f"{case.operation}-{layout}-{data.nbytes}"
        if case.via != "zarr":
            return self._via_calls(case_name, case, path, data)
        if case.operation == "write":
            with self.config("stock"):
                self.create(path, case)
        elif not path.exists():
            with self.config("stock"):
                self.create(path, case)[...] = data
        selection = self.selection(case)
        self.expected = data if selection is None else data[selection]
        files = self.files(path, case)
        threads = thread_count(case.threads)
        calls: dict[str, Timed | None] = {}
        for name in configurations(case_name, fused=self.fused):
            if name in ("codec", "pipeline") and self.integration is None:
                calls[name] = None
            elif name == "reader":
                calls[name] = lambda: read_array(path)
            elif name == "floor" and case.operation == "read":
                calls[name] = self._read_floor(files, case, selection, threads)
                if selection is None and not case.compressed:
                    dtype = self.data.dtype.newbyteorder("<" if case.endian == "little" else ">")
                    calls[BUFFERED_FLOOR] = lambda: read_floor_threads(
                        files, dtype, threads, buffered=True
                    )
            elif name == "floor":
                calls[name] = self._write_floor(path, files, case, threads)
            elif case.operation == "read":
                array = self.open(name, path, "r")
                calls[name] = self._read(name, array, case.threads, selection)
            else:
                calls[name] = self._write(name, self.open(name, path, "r+"), case.threads, path)
        return calls

    def _via_calls(
        self, case_name: str, case: ZarrCase, path: pathlib.Path, data: npt.NDArray[np.str_]
    ) -> dict[str, Timed | None]:
        """Calls that read the array through xarray or Dask (None where it is not installed)."""
        import zarr

        group = path.with_name(path.name + "-group")
        if not group.exists():
            with self.config("stock"):
                root = zarr.create_group(str(group), zarr_format=3)
                stored = root.create_array(
                    "v",
                    shape=data.shape,
                    chunks=(self.elements(case.chunk_bytes, case),),
                    dtype=data.dtype,
                    serializer=zarr.codecs.BytesCodec(endian=case.endian),
                    compressors=None,
                    fill_value="",
                    dimension_names=["x"],
                )
                stored[...] = data
        self.expected = data
        files = self.files(group / "v", case)
        threads = thread_count(case.threads)
        reader = _via_reader(case.via, group)
        calls: dict[str, Timed | None] = {}
        for name in configurations(case_name, fused=self.fused):
            if name == "floor":
                calls[name] = self._read_floor(files, case, None, threads)
            elif reader is None or (name == "pipeline" and self.integration is None):
                calls[name] = None
            else:
                calls[name] = self._through(name, reader)
        return calls

    def _through(self, name: str, reader: Timed) -> Timed:
        def read() -> object:
            with self.config(name):
                return reader()

        return read

    def _read(
        self,
        name: str,
        array: AnyArray,
        threads: int | None,
        selection: npt.NDArray[np.intp] | slice | None,
    ) -> Timed:
        def read() -> object:
            with self.config(name, threads):
                if selection is None:
                    return array[...]
                if isinstance(selection, slice):
                    return array[selection]
                return array.vindex[selection]

        return read

    def _read_floor(
        self,
        files: FileSlices,
        case: ZarrCase,
        selection: npt.NDArray[np.intp] | slice | None,
        threads: int,
    ) -> Timed:
        dtype = self.data.dtype.newbyteorder("<" if case.endian == "little" else ">")
        if selection is not None:
            elements = (
                np.arange(len(self.case_data(case)), dtype=np.intp)[selection]
                if isinstance(selection, slice)
                else selection
            )
            return lambda: read_elements_floor(files, dtype, elements, threads)
        if case.shard_bytes is not None and case.compressed:
            inner = self.elements(case.chunk_bytes, case) * ELEMENT_BYTES
            return lambda: read_sharded_zstd_floor(files, dtype, inner, threads)
        return lambda: read_floor_threads(files, dtype, threads, zstd=case.compressed)

    def _write(self, name: str, array: AnyArray, threads: int | None, path: pathlib.Path) -> Timed:
        data = self.expected

        def write() -> pathlib.Path:
            with self.config(name, threads):
                array[...] = data
            return path

        return write

    def _write_floor(
        self, path: pathlib.Path, files: FileSlices, case: ZarrCase, threads: int
    ) -> Timed:
        # The files of an array of the same layout, written plainly beside it:
        # whole chunks, the edge one padded with the fill value ("") as zarr pads it.
        if case.shard_bytes is not None:
            return self._write_shards_floor(path, case, threads)
        data = self.case_data(case)
        count = len(files.paths)
        stored = np.zeros(count * files.nbytes // ELEMENT_BYTES, data.dtype)
        stored[: len(data)] = data
        if case.endian == "big":
            stored = stored.astype(stored.dtype.newbyteorder(">"))
        floor = path.with_name(path.name + "-floor")
        with self.config("stock"):
            self.create(floor, case)  # its metadata, so that same_data can read the result
        target = FileSlices.of(floor, files.nbytes, count * files.nbytes)
        return lambda: write_floor(target, stored, threads, zstd=case.compressed)

    def _write_shards_floor(self, path: pathlib.Path, case: ZarrCase, threads: int) -> Timed:
        # The shard files stock zarr writes (inner chunks and index), written again
        # plainly: their bytes are made once, before the timing, by zarr itself.
        floor = path.with_name(path.name + "-floor")
        with self.config("stock"):
            self.create(floor, case)[...] = self.case_data(case)
        stored, per_file = stored_files(self.files(floor, case).paths)
        target = FileSlices.of(floor, per_file, stored.nbytes)
        return lambda: write_floor(target, stored, threads)

    def same_data(self, result: object) -> bool:
        """Whether a call's result (an array read, or the path written) holds what it should:
        the data of the case :meth:`calls` made last (its selection, for a selection case)."""
        if isinstance(result, pathlib.Path):
            import zarr

            with self.config("stock"):
                result = zarr.open_array(str(result), mode="r")[...]
        expected = self.expected
        array = np.asarray(result)  # the array itself: every reader returns a NumPy array
        if array.dtype.byteorder not in ("=", "|") and array.dtype != expected.dtype:
            array = array.astype(expected.dtype)  # the floor keeps the stored byte order
        return bool(array.shape == expected.shape and np.array_equal(array, expected))


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
    with (
        tempfile.TemporaryDirectory(prefix="fixedutf32-bench-zarr-", dir=directory) as root,
        warnings.catch_warnings(),
    ):
        from zarr.errors import UnstableSpecificationWarning

        warnings.simplefilter("ignore", UnstableSpecificationWarning)
        yield _Bench(root, data, _integration())


def latency_seconds(latency: float, rounds: int) -> float:
    """Roughly how long the latency rows take: their requests, about 8 in flight (one at a
    time for FusedCodecPipeline on the synchronous profile), in ``rounds`` + 2 calls each."""
    requests = 226  # per profile: whole-array read and write, two selections
    waits = 2 * 3 * requests / 8 + (requests if has_fused() else 0)
    return 2.0 + (rounds + 2) * latency * waits


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
    rows: Literal["all", "local", "latency"] = "all",
    latency: float = 0.020,
) -> ZarrReport:
    """Measure zarr reads and writes with and without fixedutf32; a report dict.

    Parameters
    ----------
    size : int
        Bytes of the ``<U16`` array (rounded down to whole elements); chunks
        are 1 MiB, or the whole array if smaller.
    repeat : int
        Timed rounds; each figure is the median over them (the latency rows:
        the best of at most 5 rounds).
    progress : callable, optional
        Called with a short message before each step.
    directory : str, optional
        Where to make the temporary directory (removed afterwards).
    rows : {"all", "local", "latency"}
        The rows of ``CASES`` on a local directory, the rows through a store
        with ``latency`` seconds a request (:mod:`._latency`: 100 chunks of
        64 KiB), or both.
    latency : float
        Seconds each request of the latency rows waits.

    Returns
    -------
    dict
        ``rows``: one per case with ``gbps`` and ``same_data`` per
        configuration (``None`` where it does not apply or the integration
        is missing); ``latency``: one per latency row with ``seconds``,
        ``requests`` (gets, byte-range gets, sets, deletes, other, the most
        in flight) and ``same_data`` per pipeline; ``ratios``: name, value,
        target and ``met`` (``bound`` ``"<="`` on the request counts);
        ``threads_reference``: the scaling of ``decode_chunk`` and of
        ``numpy.copyto`` on two threads, the machine's own limit.

    Raises
    ------
    ImportError, ValueError
        As :func:`arrays` does: zarr-python or numcodecs missing, ``size``
        under one element.

    Examples
    --------
    >>> report = run(size=64 * 1024, repeat=1, latency=0.001)
    >>> report["rows"][0]["same_data"]["stock"], report["latency"][0]["same_data"]["stock"]
    (True, True)
    """
    say = progress or (lambda message: None)
    say(f"generating {format_size(size)} of <U{WIDTH} text")
    table: list[ZarrRow] = []
    times_by_case: dict[str, dict[str, list[float]]] = {}
    latency_rows: list[LatencyRow] = []
    latency_ratios: list[Ratio] = []
    # the latency rows make their own small array: the local rows' is made only for them
    with arrays(size if rows != "latency" else ELEMENT_BYTES, directory) as bench:
        import zarr

        if rows != "local":
            # First, while zarr has no pool of its own: its requests on threads
            # (a LocalStore's, the synchronous profile's) get asyncio's default
            # pool, as with zarr's default settings, not the pool sized below.
            from . import _latency

            names = [
                name
                for name in ("stock", "fused", "pipeline")
                if (name != "fused" or bench.fused)
                and (name != "pipeline" or bench.integration is not None)
            ]
            latency_rows, latency_times = _latency.measure(
                bench.config, names, min(repeat, 5), latency, progress=say, directory=directory
            )
            latency_ratios = _latency.ratios(latency_rows, latency_times)
        _size_zarr_thread_pool()
        for case, spec in CASES.items():
            if rows == "latency":
                break
            calls = {name: call for name, call in bench.calls(case).items() if call is not None}
            counted = bench.expected.nbytes
            say(f"{case} ({format_size(counted)}, {repeat} rounds)")
            times, same = in_turn(calls, repeat, bench.same_data)
            if BUFFERED_FLOOR in times:  # the best plain read of each round
                buffered = times.pop(BUFFERED_FLOOR)
                times["floor"] = [min(a, b) for a, b in zip(times["floor"], buffered)]
                same["floor"] = bool(same["floor"] and same.pop(BUFFERED_FLOOR))
            table.append(
                {
                    "case": case,
                    "endian": spec.endian,
                    "codec": "zstd" if spec.compressed else "raw",
                    "threads": spec.threads,
                    "size": counted,
                    "chunk_size": bench.elements(spec.chunk_bytes, spec) * ELEMENT_BYTES,
                    "shard_size": (
                        None
                        if spec.shard_bytes is None
                        else bench.elements(spec.shard_bytes, spec) * ELEMENT_BYTES
                    ),
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
    ratios = (_ratios(times_by_case) if table else []) + latency_ratios
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
        "size": bench.data.nbytes,
        "chunk_size": table[0]["chunk_size"] if table else 0,
        "repeat": repeat,
        "rows": table,
        "latency": latency_rows,
        "ratios": ratios,
        "threads_reference": {
            "threads": 2,
            "size": MiB,
            "decode_chunk_scaling": decode_scaling,
            "memcpy_scaling": copy_scaling,
        },
    }


def _fastest_zarr(times: Mapping[str, list[float]]) -> list[float] | None:
    """Per round, the time of the faster of zarr's own pipelines (stock, fused)."""
    own = [times[name] for name in ("stock", "fused") if times.get(name)]
    if not own:
        return None
    return [min(round_times) for round_times in zip(*own)]


def _ratios(times: Mapping[str, Mapping[str, list[float]]]) -> list[Ratio]:
    """Each ratio: the median over rounds of the round's two times (speed ratio).

    ``times`` maps case -> configuration -> seconds of each round; the
    configuration ``"zarr"`` stands for the fastest of zarr's own pipelines.
    """
    result: list[Ratio] = []
    for name, (num_case, num), (den_case, den) in RATIOS:
        top = times[num_case].get(num)
        bottom = _fastest_zarr(times[den_case]) if den == "zarr" else times[den_case].get(den)
        value = None
        if top and bottom:
            value = statistics.median(b / t for t, b in zip(top, bottom))
        result.append({"ratio": name, "value": value, **judge("zarr", name, value)})
    return result
