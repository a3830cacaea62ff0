"""Each implementation's reader of the corpus, one row of the table each.

    python -m conformance.readers ROW CORPUS    # prints the row as JSON on stdout

Every row runs in a process of its own (:mod:`conformance.runner` starts them),
so that fixedutf32's zarr integration, once enabled, cannot reach the stock
zarr-python row, and so that GDAL's row can run on Debian's ``/usr/bin/python3``.
This module imports nothing but the standard library at the top: each row
imports what it needs, and says "not installed" when it cannot.

A row is ``{"row", "installed", "version", "note", "results": {case: observation}}``;
an observation is one of

- ``{"values": [...]}``: what was read, nested in the array's shape; each value
  a string, or ``{"code_points": [...]}`` when it holds a code point that no
  string can (above U+10FFFF);
- ``{"error": "Type: message"}``: it refused (or failed);
- ``{"check": exit status, "found": "..."}``: ``fixedutf32 check``'s verdict;
- ``{"na": "why"}``: the case is not one this implementation can be asked.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import io
import json
import pathlib
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from . import stored

RECORDS = pathlib.Path(__file__).parent / "records"
Observation = dict[str, Any]
Reader = Callable[[pathlib.Path, dict[str, Any]], Observation]


class NotApplicable(Exception):
    """The case is not one this implementation can be asked (its reason is the message)."""


def records() -> list[dict[str, Any]]:
    """The committed records, in file-name order."""
    return [json.loads(p.read_text(encoding="ascii")) for p in sorted(RECORDS.glob("*.json"))]


def describe(exc: BaseException) -> str:
    """``Type: first line of the message``, without file paths and TensorStore's echo of
    its spec, at most 240 characters (the cause's too, when the message is empty)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    text = re.sub(r" \[tensorstore_spec=.*$", "", text)
    text = re.sub(r'Error reading local file "[^"]*": ', "", text)
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if exc.__cause__ is not None and not str(exc).strip():
        text += f" (from {describe(exc.__cause__)})"
    return text if len(text) <= 240 else text[:237] + "..."


def _value(points: list[int]) -> Any:
    while points and points[-1] == 0:
        points.pop()
    if all(p <= 0x10FFFF for p in points):
        return "".join(map(chr, points))
    return {"code_points": points}


def u_values(array: Any) -> Any:
    """A NumPy ``U`` array as nested lists of values, read through its code units (a ``str``
    is never made of a unit above U+10FFFF, which CPython cannot hold)."""
    import numpy as np

    array = np.asarray(array)
    if array.dtype.kind != "U":
        raise TypeError(f"expected a U array, got dtype {array.dtype}")
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    width = array.dtype.itemsize // 4
    units = np.frombuffer(little.tobytes(), dtype="<u4").reshape(*array.shape, width)

    def nest(block: Any) -> Any:
        if block.ndim == 1:
            return _value([int(u) for u in block])
        return [nest(b) for b in block]

    return nest(units)


@contextlib.contextmanager
def scratch_copy(root: pathlib.Path) -> Iterator[pathlib.Path]:
    """A copy of a store to write into (the corpus stays as generated)."""
    with tempfile.TemporaryDirectory(prefix="conformance-") as folder:
        copy = pathlib.Path(folder) / root.name
        shutil.copytree(root, copy)
        yield copy


def _capacity(root: pathlib.Path) -> int:
    """Code points per element, as the metadata says (the write cases' metadata is valid)."""
    document = stored.load(root)
    if document["zarr_format"] == 2:
        return int(document["dtype"][2:])
    return int(document["data_type"]["configuration"]["length_bytes"]) // 4


# ---------------------------------------------------------------------------
# fixedutf32


def fixedutf32_version() -> str:
    import fixedutf32

    return str(fixedutf32.__version__)


def read_chunk_api(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """``parse_array_metadata`` on the document (a sharded array seen as its inner chunks),
    then ``decode_chunk`` on every stored chunk into ``fill_array``: reader.md's reader."""
    from fixedutf32 import decode_chunk, encode_chunk
    from fixedutf32.metadata import parse_array_metadata

    if record["layer"] == "write":
        meta = parse_array_metadata(stored.load(root))
        encoded = encode_chunk(record["write"], meta.data_type.length_bytes, endian=meta.endian)
        return {"values": u_values(decode_chunk(encoded, **meta.decode_kwargs()))}
    document = stored.load(root)
    meta = parse_array_metadata(stored.unsharded(document))
    out = meta.data_type.fill_array(meta.shape, meta.fill_value)
    for index, data in stored.stored_chunks(root, document):
        chunk = decode_chunk(data, **meta.decode_kwargs())
        target, source = meta.chunk_region(index)
        out[target] = chunk[source]
    return {"values": u_values(out)}


def _zarr_read(root: pathlib.Path, record: dict[str, Any], setitem: Any) -> Observation:
    import numpy as np
    import zarr

    if record["layer"] == "write":
        with scratch_copy(root) as copy:
            array = zarr.open_array(copy, mode="r+")
            setitem(array, record["write"])
            return {"values": u_values(zarr.open_array(copy, mode="r")[...])}
    array = zarr.open_array(root, mode="r")
    return {"values": u_values(np.asarray(array[...]))}


def _zarr_setitem(array: Any, values: list[str]) -> None:
    array[...] = values


def read_pipeline(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """zarr-python with ``fixedutf32.zarr.enable()``; writes through ``fixedutf32.zarr.setitem``
    (plain assignment is zarr's cast, which truncates before any codec runs)."""
    import fixedutf32.zarr

    def setitem(array: Any, values: list[str]) -> None:
        fixedutf32.zarr.setitem(array, slice(None), values)

    with fixedutf32.zarr.enabled():
        return _zarr_read(root, record, setitem)


def read_zarr(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """Stock zarr-python: ``zarr.open_array`` and ``array[...]``; writes ``array[...] = values``."""
    return _zarr_read(root, record, _zarr_setitem)


def read_zarrs(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """zarrs-python's ``ZarrsCodecPipeline`` with ``codec_pipeline.strict`` (no fallback
    to zarr's own pipeline, so what is read is read by zarrs)."""
    import zarr

    settings = {"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True}
    with zarr.config.set(settings):
        return _zarr_read(root, record, _zarr_setitem)


def read_check(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """``fixedutf32 check STORE --json`` (the command's own function, in this process)."""
    from fixedutf32.__main__ import main

    if record["layer"] == "write":
        raise NotApplicable("check reads stores; it writes none")
    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(io.StringIO()):
        status = main(["check", str(root), "--json", "--threads", "1"])
    found = ""
    if status in (0, 1):
        report = json.loads(output.getvalue())
        problems = report["problems"] + report["leftovers"]
        if problems:
            found = f"{problems[0].get('kind')}: {problems[0].get('message')}"
        elif report["skipped"]:
            found = f"skipped: {report['skipped'][0]}"
    return {"check": status, "found": found[:160]}


# ---------------------------------------------------------------------------
# Readers without metadata checks: the stored bytes as NumPy's U dtype


def _lenient_array(root: pathlib.Path, record: dict[str, Any]) -> Any:
    """The array as NumPy views its chunks: ``<Un``/``>Un`` from length_bytes // 4 and the
    bytes codec's endian (little when none), chunks placed by hand, missing ones filled."""
    import numpy as np

    if record["layer"] == "metadata":
        raise NotApplicable("reads no metadata: the case is about the metadata")
    document = stored.unsharded(stored.load(root))
    if document["zarr_format"] == 2:
        dtype = np.dtype(document["dtype"])
        chunk_shape = document["chunks"]
        order = document["order"]
        fill = document["fill_value"] or ""
    else:
        codecs = document["codecs"]
        names = [c["name"] for c in codecs]
        endian = codecs[names.index("bytes")].get("configuration", {}).get("endian", "little")
        width = document["data_type"]["configuration"]["length_bytes"] // 4
        dtype = np.dtype(f"{'<' if endian == 'little' else '>'}U{width}")
        chunk_shape = document["chunk_grid"]["configuration"]["chunk_shape"]
        order = "F" if "transpose" in names else "C"
        fill = document["fill_value"]
    shape = document["shape"]
    out = np.full(shape, fill, dtype=dtype)
    for index, data in stored.stored_chunks(root, stored.load(root)):
        chunk = np.frombuffer(data, dtype=dtype).reshape(chunk_shape, order=order)
        region = tuple(
            slice(i * c, min((i + 1) * c, n)) for i, c, n in zip(index, chunk_shape, shape)
        )
        out[region] = chunk[tuple(slice(0, s.stop - s.start) for s in region)]
    return out


def read_numpy(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """NumPy's conversions: the chunks' bytes viewed as its ``U`` dtype, then ``tolist()``;
    a write is ``numpy.array(values, dtype=<Un>)``."""
    import numpy as np

    if record["layer"] == "write":
        return {"values": np.array(record["write"], dtype=f"<U{_capacity(root)}").tolist()}
    return {"values": _lenient_array(root, record).tolist()}


def read_pyarrow(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """pyarrow's conversion of the NumPy ``U`` array: ``pyarrow.array(u).to_pylist()``."""
    import pyarrow

    if record["layer"] == "write":
        raise NotApplicable("pyarrow writes no Zarr array")
    array = _lenient_array(root, record)
    flat = pyarrow.array(array.reshape(-1)).to_pylist()

    def nest(items: list[Any], shape: tuple[int, ...]) -> Any:
        if len(shape) <= 1:
            return items
        step = len(items) // shape[0]
        return [nest(items[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]

    return {"values": nest(flat, array.shape)}


# ---------------------------------------------------------------------------
# Other Zarr implementations


def read_tensorstore(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """TensorStore's ``zarr3`` (V3) or ``zarr`` (V2) driver over the local files."""
    import tensorstore

    driver = "zarr3" if record["zarr_format"] == 3 else "zarr"

    def spec(path: pathlib.Path) -> dict[str, Any]:
        return {"driver": driver, "kvstore": {"driver": "file", "path": str(path)}}

    if record["layer"] == "write":
        with scratch_copy(root) as copy:
            array = tensorstore.open(spec(copy), open=True, read=True, write=True).result()
            array[...].write(record["write"]).result()
            return {"values": _ts_values(array.read().result())}
    array = tensorstore.open(spec(root), open=True, read=True).result()
    return {"values": _ts_values(array.read().result())}


def _ts_values(result: Any) -> Any:
    import numpy as np

    result = np.asarray(result)
    if result.dtype.kind == "U":
        return u_values(result)
    return result.tolist()


def _gdal() -> Any:
    """``osgeo.gdal`` (Debian's python3-gdal; it ships no type information)."""
    return importlib.import_module("osgeo.gdal")


_V3_PROBE = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [1],
    "data_type": "uint8",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
    "chunk_key_encoding": {"name": "default"},
    "fill_value": 0,
    "codecs": [{"name": "bytes"}],
}
_gdal_v3: list[bool] = []


def _gdal_reads_v3() -> bool:
    """Whether GDAL reads a plain V3 uint8 array (once per process)."""
    gdal = _gdal()

    if not _gdal_v3:
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder) / "probe"
            (root / "c").mkdir(parents=True)
            (root / "zarr.json").write_text(json.dumps(_V3_PROBE))
            (root / "c" / "0").write_bytes(b"\x07")
            try:
                dataset = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER)
                group = dataset.GetRootGroup()
                array = group.OpenMDArray(group.GetMDArrayNames()[0])
                _gdal_v3.append(bytes(array.Read()) == b"\x07")
            except Exception:  # noqa: BLE001 - any failure means: does not read V3
                _gdal_v3.append(False)
    return _gdal_v3[0]


def read_gdal(root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """GDAL's Zarr driver through its multidimensional API (``OpenMDArray(...).Read()``)."""
    gdal = _gdal()

    gdal.UseExceptions()
    if record["layer"] == "write":
        raise NotApplicable("not tried: GDAL's Zarr writer is not part of this comparison")
    if record["zarr_format"] == 3 and not _gdal_reads_v3():
        raise NotApplicable(
            f"GDAL {gdal.__version__} opens no V3 array of the published spec (a uint8 one "
            "neither): its Zarr driver predates it"
        )
    dataset = gdal.OpenEx(str(root), gdal.OF_MULTIDIM_RASTER)
    group = None if dataset is None else dataset.GetRootGroup()
    names = None if group is None else group.GetMDArrayNames()
    if group is None or not names:
        raise RuntimeError(gdal.GetLastErrorMsg() or "GDAL opened no array")
    array = group.OpenMDArray(names[0])
    shape = [d.GetSize() for d in array.GetDimensions()]
    flat = array.Read()
    if isinstance(flat, (bytes, bytearray)):
        raise RuntimeError(f"GDAL read {len(flat)} bytes, not strings")

    def text(item: Any) -> Any:
        if isinstance(item, bytes):
            try:
                return item.decode("utf-8")
            except UnicodeDecodeError:
                return {"utf8_bytes": item.hex(" ")}
        return item

    values = [text(v) for v in flat]

    def nest(items: list[Any], dims: list[int]) -> Any:
        if len(dims) <= 1:
            return items
        step = len(items) // dims[0]
        return [nest(items[i * step : (i + 1) * step], dims[1:]) for i in range(dims[0])]

    return {"values": nest(values, shape)}


# ---------------------------------------------------------------------------
# The rows


def _version(module: str, distribution: str | None = None) -> Callable[[], str]:
    """The installed version of ``distribution`` (default ``module``), once ``module`` imports."""

    def version() -> str:
        importlib.import_module(module)
        return importlib.metadata.version(distribution or module)

    return version


def _pipeline_version() -> str:
    import zarr

    return f"{fixedutf32_version()}, zarr {zarr.__version__}"


def _check_version() -> str:
    import numcodecs  # noqa: F401  (the store tools need it)
    import zarr

    return f"{fixedutf32_version()}, zarr {zarr.__version__}"


def _gdal_version() -> str:
    return str(_gdal().__version__)


# row -> (reader, version, what it is)
ROWS: dict[str, tuple[Reader, Callable[[], str], str]] = {
    "fixedutf32 chunk API": (
        read_chunk_api,
        fixedutf32_version,
        "parse_array_metadata, then decode_chunk on every chunk (docs/reader.md); "
        "writes with encode_chunk",
    ),
    "fixedutf32 zarr pipeline": (
        read_pipeline,
        _pipeline_version,
        "zarr-python with fixedutf32.zarr.enable(); writes with fixedutf32.zarr.setitem",
    ),
    "fixedutf32 check": (
        read_check,
        _check_version,
        "fixedutf32 check STORE --json: exit 0 clean, 1 problems, 2 unreadable",
    ),
    "zarr-python": (read_zarr, _version("zarr"), "stock: zarr.open_array(...)[...]"),
    "zarrs-python": (
        read_zarrs,
        _version("zarrs"),
        "ZarrsCodecPipeline, codec_pipeline.strict (no fallback to zarr's pipeline)",
    ),
    "TensorStore": (read_tensorstore, _version("tensorstore"), "zarr3 / zarr drivers"),
    "NumPy": (
        read_numpy,
        _version("numpy"),
        "chunk bytes as the U dtype, .tolist(); data and write cases only",
    ),
    "pyarrow": (
        read_pyarrow,
        _version("pyarrow"),
        "pyarrow.array(numpy U array).to_pylist(); data cases only",
    ),
    "GDAL": (
        read_gdal,
        _gdal_version,
        "Debian's python3-gdal (/usr/bin/python3), the Zarr driver's multidimensional API",
    ),
}


def observe(reader: Reader, root: pathlib.Path, record: dict[str, Any]) -> Observation:
    """One case through one reader: its values, its refusal, or why it does not apply."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return reader(root, record)
        except NotApplicable as exc:
            return {"na": str(exc)}
        except stored.Unsupported as exc:
            return {"na": f"the corpus's reader for this row does not undo {exc}"}
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": describe(exc)}


def run_row(row: str, corpus: pathlib.Path) -> dict[str, Any]:
    """Every case of the corpus through one row; ``installed`` False when it cannot import."""
    reader, version, note = ROWS[row]
    result: dict[str, Any] = {"row": row, "note": note, "installed": True, "results": {}}
    try:
        result["version"] = version()
    except ImportError as exc:
        result.update(installed=False, version="", note=f"not installed ({describe(exc)})")
        return result
    for record in records():
        result["results"][record["case"]] = observe(reader, corpus / record["case"], record)
    return result


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] not in ROWS:
        print(f"usage: python -m conformance.readers ROW CORPUS; ROW one of {list(ROWS)}")
        return 2
    print(json.dumps(run_row(argv[0], pathlib.Path(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
