"""Stores written by zarr-python for the fixedutf32.store tests, with invalid
code units planted at known coordinates.

zarr-python writes a NumPy ``U`` array as it is, surrogates and values above
U+10FFFF included, so the planted units reach the chunks through zarr's own
codecs (compressed, sharded, transposed, V2 F order) and ``check`` must find
them at exactly these coordinates.
"""

import contextlib
import pathlib
import warnings

import numcodecs
import numpy as np
import zarr
from zarr.codecs import BytesCodec, TransposeCodec, ZstdCodec

SHAPE = (7, 5)
CHUNKS = (3, 2)
# (coordinates, position, code point): a surrogate, a value above U+10FFFF,
# and two in the same element of an edge chunk.
PLANTED = [
    ((0, 1), 1, 0xD800),
    ((4, 3), 0, 0x110000),
    ((6, 4), 0, 0xDFFF),
    ((6, 4), 2, 0xFFFFFFFF),
]

# name -> keyword arguments of zarr.create_array (with shards: the inner chunks are CHUNKS)
LAYOUTS = {
    "v3_raw": dict(zarr_format=3, serializer=BytesCodec(endian="little"), compressors=None),
    "v3_zstd_big": dict(zarr_format=3, serializer=BytesCodec(endian="big"),
                        compressors=[ZstdCodec(level=1)]),
    "v3_transpose": dict(zarr_format=3, filters=[TransposeCodec(order=(1, 0))],
                         serializer=BytesCodec(endian="big"), compressors=None),
    "v3_sharded": dict(zarr_format=3, shards=(6, 4), compressors=[ZstdCodec(level=1)]),
    "v2_C": dict(zarr_format=2, dtype="<U4", order="C", compressors=None),
    "v2_F_zstd_big": dict(zarr_format=2, dtype=">U4", order="F",
                          compressors=numcodecs.Zstd(level=1)),
    "v2_gzip": dict(zarr_format=2, dtype="<U4", compressors=numcodecs.GZip(level=1)),
}


def text(shape=SHAPE, width=4):
    """Valid strings of every length up to ``width - 1``, non-BMP ones too."""
    alphabet = ["a", "é", "日", "😀", "\U0010ffff"]
    out = np.empty(shape, dtype=f"<U{width}")
    for n, index in enumerate(np.ndindex(*shape)):
        out[index] = "".join(alphabet[(n + k) % len(alphabet)] for k in range(n % width))
    return out


def planted(shape=SHAPE, planted=PLANTED):
    """``text()`` with the code units of ``planted`` written into it."""
    data = text(shape)
    units = data.view(np.uint32).reshape(*shape, -1)
    for coordinates, position, value in planted:
        units[coordinates + (position,)] = value
    return data


@contextlib.contextmanager
def quiet():
    """zarr-python warns when it writes V3 fixed_length_utf32 metadata (its spec is unstable)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", zarr.errors.UnstableSpecificationWarning)
        yield


def open_store(where, mode="w"):
    """A zarr store for a directory, a ``.zip`` path or a ``memory://`` URL."""
    where = str(where)
    if where.endswith(".zip"):
        return zarr.storage.ZipStore(where, mode=mode)
    return where


def write_array(where, data, layout, chunks=CHUNKS, fill_value=""):
    """Write ``data`` with zarr-python as the root array of the store at ``where``."""
    kwargs = dict(LAYOUTS[layout])
    kwargs.setdefault("dtype", data.dtype)
    store = open_store(where)
    with quiet():
        array = zarr.create_array(store, shape=data.shape, chunks=chunks,
                                  fill_value=fill_value, **kwargs)
        array[...] = data
    if isinstance(store, zarr.storage.ZipStore):
        store.close()


def expected_key(layout, coordinates, chunks=CHUNKS):
    """The store key of the chunk (shard) that holds ``coordinates``."""
    size = LAYOUTS[layout].get("shards") or chunks
    index = [c // s for c, s in zip(coordinates, size)]
    if layout.startswith("v2"):
        return ".".join(map(str, index))
    return "/".join(["c", *map(str, index)])


def found(report):
    """The code point problems of a report as (array, key, coordinates, position, code point)."""
    return sorted((p.array, p.key, tuple(p.coordinates), p.position, p.code_point)
                  for p in report.problems if p.kind == "code_point")


def tree(root):
    """Every file under ``root`` and its bytes (a snapshot to compare)."""
    root = pathlib.Path(root)
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def hierarchy(where, zarr_format=2):
    """A group with attributes, a planted-free string array in a subgroup,
    an int array and a float array with NaN: what convert must carry over."""
    with quiet():
        root = zarr.open_group(where, mode="w", zarr_format=zarr_format)
        root.attrs["title"] = "names"
        sub = root.create_group("people")
        sub.attrs["unit"] = "person"
        names = sub.create_array("names", shape=SHAPE, chunks=CHUNKS, dtype=">U4",
                                 fill_value="?", compressors=(
                                     numcodecs.Zstd(level=1) if zarr_format == 2
                                     else [ZstdCodec(level=1)]),
                                 **({"order": "F"} if zarr_format == 2 else {}))
        data = text()
        data[0:3, 2:4] = "?"  # one chunk equal to the fill value: zarr leaves it out
        names[:] = data
        names.attrs["note"] = "ünïcode"
        ages = root.create_array("ages", shape=(10,), chunks=(4,), dtype="<i4")
        ages[:] = np.arange(10)
        heights = root.create_array("heights", shape=(3,), chunks=(2,), dtype="<f8")
        heights[:] = [1.5, np.nan, 2.0]
    return data
