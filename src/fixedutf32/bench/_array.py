"""``fixedutf32 bench --zarr PATH_OR_URL``: the read ratios of ``--zarr`` on a user's own
``fixed_length_utf32`` (V3) or ``U`` (V2) array, opened read-only and never written."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._source.reader import Get, KeyReader
from ..errors import FixedUTF32Error
from ..metadata._model import parse_stored
from . import _zarr
from ._floors import read_files, thread_count
from ._report import ZarrReport
from ._timing import Progress, Timed, format_size, in_turn

CASE = "read your array"
_Get = Callable[[str], bytes | None]
_NO_FLOOR = "the floor reads the chunk files with readinto, which needs a local directory"


@dataclass(frozen=True)
class UserArray:
    """A user's array: where it is, its metadata document, and how its keys are read."""

    where: str  # the path or URL given
    doc: dict[str, Any]
    source: str | Get  # the local directory, or get(key) for a URL
    options: dict[str, Any]  # zarr.open_array's storage_options (a URL's)

    @property
    def local(self) -> str | None:
        return self.source if isinstance(self.source, str) else None


def _get(where: str, options: dict[str, Any]) -> _Get:
    """get(key) -> bytes or None of the store at URL ``where``, read-only."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync
    from zarr.storage import FsspecStore

    store = FsspecStore.from_url(where, storage_options=options, read_only=True)

    def get(key: str) -> bytes | None:
        found = sync(store.get(key, default_buffer_prototype()))
        return None if found is None else found.to_bytes()

    return get


def open_user_array(where: str, storage_options: str | None) -> UserArray:
    """The array at ``where`` checked for the bench; ValueError in one line if it is none,
    a group, or not of this data type (nothing is written)."""
    options = json.loads(storage_options) if storage_options else {}
    if not isinstance(options, dict):
        raise ValueError(f"--storage-options: expected a JSON object, got {storage_options}")
    if "://" in where:
        source: str | _Get = _get(where, options)
    elif options:
        raise ValueError("--storage-options: only for a URL")
    elif not os.path.isdir(where):
        raise ValueError(f"no Zarr array at {where}: not a directory")
    else:
        source = where
    get = source if callable(source) else _read_local(where)
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
    return UserArray(where, doc, source, options if callable(source) else {})


def _read_local(where: str) -> _Get:
    def get(key: str) -> bytes | None:
        path = pathlib.Path(where, key)
        return path.read_bytes() if path.is_file() else None

    return get


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


def run(array: UserArray, repeat: int = 9, progress: Progress | None = None) -> ZarrReport:
    """Every configuration of ``--zarr`` reading the whole of ``array`` in turn, round after
    round; the floor reads its chunk files into one preallocated buffer (local only)."""
    say = progress or (lambda message: None)
    model, meta, key_meta = parse_stored(array.doc)
    bench = _zarr._Bench("", np.empty(0, "<U1"), _zarr._integration())
    notes, calls, v2 = [], {}, array.doc.get("zarr_format") == 2
    with _zarr.quiet_zarr():
        for name in [n for n in bench.available() if n not in ("reader", "floor")]:
            if name == "codec" and v2:
                notes.append("codec: n/a: a V2 array has no bytes codec to replace")
                continue
            opened = _zarr.open_with(
                name, array.where, bench.selected, storage_options=array.options or None
            )
            calls[name] = _zarr._with_config(name, None, _zarr._reader(opened, None))
        try:
            KeyReader.build(model, meta.grid, key_meta.grid)
            calls["reader"] = lambda: _zarr._read(array.doc, array.source)
        except FixedUTF32Error as error:
            notes.append(f"reader: n/a: {error}")
        if array.local is None:
            notes.append(f"floor: n/a for a URL: {_NO_FLOOR}")
        else:
            files = _zarr.chunk_files(array.local)
            buffer = np.empty(sum(path.stat().st_size for path in files), np.uint8)
            floor_call: Timed = lambda: read_files(files, buffer, thread_count(None))  # noqa: E731
            calls["floor"] = floor_call
        expected = calls["stock"]()
        nbytes = int(np.asarray(expected).nbytes)
        say(f"{CASE} ({format_size(nbytes)}, {repeat} rounds)")

        def same(result: object) -> bool:
            if isinstance(result, int):  # the floor: every byte of the files read
                return result == buffer.nbytes
            return bool(np.array_equal(np.asarray(result), np.asarray(expected)))

        times, checked = in_turn(calls, repeat, same)
    spec = _zarr.ZarrCase("read", None, model.endian or "little", False)
    item = meta.data_type.length_bytes
    shard = None if model.shard is None else int(np.prod(key_meta.chunk_shape)) * item
    row = _zarr.gbps_row(
        CASE, spec, nbytes, (int(np.prod(meta.chunk_shape)) * item, shard), times, checked
    )
    row["codec"] = _codecs(array.doc)
    wanted = [("pipeline", "fastest zarr"), ("pipeline", "stock"), ("codec", "stock")]
    wanted += [(name, "floor") for name in _zarr.CONFIGS if name != "floor"]
    pairs = [
        (f"{a} / {b}, {CASE}", (CASE, a), (CASE, "zarr" if b == "fastest zarr" else b))
        for a, b in wanted
        if a in times and (b == "fastest zarr" or b in times)
    ]
    dtype = f"{meta.data_type.to_numpy(meta.endian).str} {list(meta.shape)}, {_codecs(array.doc)}"
    return _zarr.report(
        bench,
        dtype,
        nbytes,
        repeat,
        [row],
        _zarr.ratios({CASE: times}, pairs),
        say,
        None,
        array.where,
        notes,
    )
