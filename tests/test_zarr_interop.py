"""fixedutf32 against real zarr-python: reading its stores, writing stores it reads,
and what zarr-python does with each rule of the data type (docs/strictness.md).

The ``test_zarr_*`` tests at the end record zarr-python's behaviour as observed;
if one fails after a zarr-python upgrade, update the table in docs/strictness.md.
"""

import json
import pathlib
import re
import sys
import tempfile

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixedutf32 import InvalidCodePointError, decode_chunk, encode_chunk
from fixedutf32.metadata import (
    ArrayMetadata,
    FixedLengthUTF32,
    MetadataError,
    check_codecs,
    parse_array_metadata,
)

# Optional test dependencies: without them this module is skipped, visibly.
zarr = pytest.importorskip(
    "zarr", reason="zarr-python is not installed (pip install 'fixedutf32[test]')"
)
numcodecs = pytest.importorskip(
    "numcodecs", reason="numcodecs is not installed (pip install 'fixedutf32[test]')"
)

TESTS = pathlib.Path(__file__).resolve().parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures" / "zarr_stores"

import make_zarr_stores  # noqa: E402 - tests/fixtures/, on the path from conftest.py

DATA = make_zarr_stores.DATA
FILL = make_zarr_stores.FILL
STORE_NAMES = sorted(make_zarr_stores.STORES)

# Only writing V3 metadata warns; opening does not. Filtered where zarr-python
# writes a fixed_length_utf32 zarr.json itself, because its registry still marks
# the type as having no V3 spec.
unstable_spec = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")


def _numcodecs(meta, codec):
    if meta.zarr_format == 3:
        codec = {"id": codec["name"], **codec.get("configuration", {})}
    return numcodecs.get_codec(dict(codec))


def read_store(store):
    """Read a V3 or V2 fixed_length_utf32 array with fixedutf32 alone."""
    store = pathlib.Path(store)
    name = "zarr.json" if (store / "zarr.json").exists() else ".zarray"
    meta = parse_array_metadata((store / name).read_bytes())
    assert meta.filters == ()
    out = meta.data_type.fill_array(meta.shape, meta.fill_value)
    for index in meta.chunk_indices():
        path = store / meta.chunk_key(index)
        if not path.exists():
            continue
        data = path.read_bytes()
        for codec in reversed(meta.codecs):
            data = _numcodecs(meta, codec).decode(data)
        chunk = decode_chunk(data, **meta.decode_kwargs())
        target, source = meta.chunk_region(index)
        out[target] = chunk[source]
    return out


def write_store(store, data, meta):
    """Write ``data`` with fixedutf32 alone; chunks equal to the fill value stay missing."""
    store = pathlib.Path(store)
    store.mkdir(parents=True)
    name = "zarr.json" if meta.zarr_format == 3 else ".zarray"
    (store / name).write_text(json.dumps(meta.to_json()), encoding="utf-8")
    written = 0
    for index in meta.chunk_indices():
        target, source = meta.chunk_region(index)
        chunk = meta.data_type.fill_array(meta.chunk_shape, meta.fill_value)
        chunk[source] = data[target]
        if (chunk == meta.fill_value).all():
            continue
        raw = encode_chunk(chunk, meta.data_type.length_bytes, endian=meta.endian, order=meta.order)
        assert len(memoryview(raw).cast("B")) == chunk.size * meta.data_type.length_bytes
        for codec in meta.codecs:
            raw = _numcodecs(meta, codec).encode(raw)
        path = store / meta.chunk_key(index)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(memoryview(raw).cast("B")))
        written += 1
    return written


def zarr_read(store):
    return zarr.open_array(str(store), mode="r")[...]


def assert_same(actual, expected):
    """Same values and capacity; the byte order may differ (zarr keeps ">U" for V2)."""
    assert actual.dtype.kind == expected.dtype.kind == "U"
    assert actual.dtype.itemsize == expected.dtype.itemsize
    assert actual.shape == expected.shape
    assert actual.tolist() == expected.tolist()


# --- reading what zarr-python wrote ---------------------------------------


@pytest.mark.parametrize("name", STORE_NAMES)
def test_fresh_zarr_store_reads_the_same(tmp_path, name):
    """The installed zarr-python writes each fixture kind; we read what it reads."""
    store = make_zarr_stores.make_store(tmp_path / name, name)
    ours = read_store(store)
    assert ours.dtype == numpy.dtype("U4")  # native order, whatever the store's
    assert_same(ours, DATA)
    assert_same(ours, zarr_read(store))


@pytest.mark.parametrize("name", STORE_NAMES)
def test_committed_zarr_store_reads_the_same(name):
    """Stores written once by zarr-python (see expected.json) keep reading the same."""
    expected = json.loads((FIXTURES / "expected.json").read_text(encoding="ascii"))
    assert name in expected["stores"]
    values = numpy.array(expected["data"], dtype="U4")
    store = FIXTURES / name
    assert_same(read_store(store), values)
    assert_same(zarr_read(store), values)


def test_committed_stores_cover_what_they_claim():
    """Both byte orders, compressors, V2 orders and missing chunks are really there."""
    seen = {}
    for name in STORE_NAMES:
        store = FIXTURES / name
        doc = store / ("zarr.json" if name.startswith("v3") else ".zarray")
        meta = parse_array_metadata(doc.read_text(encoding="utf-8"))
        missing = [i for i in meta.chunk_indices() if not (store / meta.chunk_key(i)).exists()]
        assert missing == [(0, 1), (1, 2)], name
        seen[name] = (
            meta.zarr_format,
            meta.endian,
            meta.order,
            tuple(c.get("name", c.get("id")) for c in meta.codecs),
        )
    assert seen == {
        "v2_big_C": (2, "big", "C", ()),
        "v2_big_F_zstd": (2, "big", "F", ("zstd",)),
        "v2_little_C": (2, "little", "C", ()),
        "v2_little_F_gzip": (2, "little", "F", ("gzip",)),
        "v3_big": (3, "big", "C", ()),
        "v3_big_gzip": (3, "big", "C", ("gzip",)),
        "v3_big_transpose_zstd": (3, "big", "F", ("zstd",)),
        "v3_little": (3, "little", "C", ()),
        "v3_little_zstd": (3, "little", "C", ("zstd",)),
    }
    # the big-endian chunk really is big-endian: "abcd" starts 00 00 00 61
    raw = (FIXTURES / "v2_big_F_zstd" / "0.0").read_bytes()
    raw = numcodecs.Zstd().decode(raw)
    assert bytes(raw)[:16] == b"\0\0\0\0" * 4  # DATA[0, 0] == ""
    assert bytes(raw)[16:24] == b"\0\0\0a\0\0\0\0"  # DATA[1, 0] == "a\0b", F order


def test_raw_chunk_matches_decode_chunk_with_each_endian():
    raw = (FIXTURES / "v3_little" / "c" / "0" / "0").read_bytes()
    chunk = decode_chunk(raw, 16, endian="little", shape=(2, 2))
    assert chunk.tolist() == DATA[:2, :2].tolist()
    with pytest.raises(InvalidCodePointError):
        decode_chunk(raw, 16, endian="big", shape=(2, 2))


# --- writing what zarr-python reads ---------------------------------------------


WRITTEN = {
    "v3_little": ArrayMetadata(3, DATA.shape, (2, 2), FixedLengthUTF32(16), fill_value=FILL),
    "v3_big_gzip": ArrayMetadata(
        3,
        DATA.shape,
        (2, 2),
        FixedLengthUTF32(16),
        endian="big",
        fill_value=FILL,
        codecs=({"name": "gzip", "configuration": {"level": 1}},),
    ),
    "v3_little_F_zstd_dot": ArrayMetadata(
        3,
        DATA.shape,
        (2, 2),
        FixedLengthUTF32(20),
        order="F",
        fill_value=FILL,
        codecs=({"name": "zstd", "configuration": {"level": 1, "checksum": False}},),
        separator=".",
    ),
    "v3_big_v2_keys": ArrayMetadata(
        3,
        DATA.shape,
        (1, 1),
        FixedLengthUTF32(16),
        endian="big",
        fill_value=FILL,
        chunk_key_encoding="v2",
    ),
    "v2_little_C": ArrayMetadata(2, DATA.shape, (2, 2), FixedLengthUTF32(16), fill_value=FILL),
    "v2_big_F_zstd": ArrayMetadata(
        2,
        DATA.shape,
        (2, 2),
        FixedLengthUTF32(16),
        endian="big",
        order="F",
        fill_value=FILL,
        codecs=({"id": "zstd", "level": 1},),
        separator="/",
    ),
}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_store_written_by_fixedutf32_opens_in_zarr(tmp_path, name):
    meta = WRITTEN[name]
    written = write_store(tmp_path / name, DATA, meta)
    total = len(list(meta.chunk_indices()))
    assert 0 < written < total  # some chunks were left missing
    array = zarr.open_array(str(tmp_path / name), mode="r", zarr_format=meta.zarr_format)
    assert array.fill_value == FILL
    expected = DATA.astype(meta.data_type.to_numpy())
    assert_same(array[...], expected)
    assert_same(read_store(tmp_path / name), expected)


def test_missing_chunks_read_as_fill_in_zarr(tmp_path):
    meta = ArrayMetadata(3, (4, 4), (2, 2), FixedLengthUTF32(8), fill_value="😀?")
    data = meta.data_type.fill_array(meta.shape, meta.fill_value)
    data[3, 3] = "x"
    assert write_store(tmp_path / "a", data, meta) == 1
    values = zarr_read(tmp_path / "a")
    assert (values[:3] == "😀?").all() and values[3, 3] == "x"


# --- the standalone reader of docs/reader.md ------------------------------


def _reader_source():
    """The code block of docs/reader.md, 'Reading a Zarr array without zarr-python'."""
    text = (ROOT / "docs" / "reader.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    return next(block for block in blocks if "def read_array(" in block)  # the reader by hand


@pytest.mark.parametrize("name", [n for n in STORE_NAMES if n.startswith("v3")])
def test_docs_reader_runs_as_written(name):
    source = _reader_source()
    assert len(source.strip().splitlines()) <= 25
    namespace = {}
    exec(compile(source, "docs/reader.md", "exec"), namespace)
    values = namespace["read_array"](FIXTURES / name)
    assert_same(values, DATA)
    assert_same(values, zarr_read(FIXTURES / name))


# --- what zarr-python does with each rule (docs/strictness.md) ------------


def v3_store(tmp_path, data_type=None, fill_value="", codecs=None, chunks=None, shape=(2,)):
    """A V3 store written by hand, so that zarr-python's checks on writing are skipped."""
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": list(shape),
        "data_type": data_type if data_type is not None else FixedLengthUTF32(8).to_json(),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value,
        "codecs": codecs
        if codecs is not None
        else [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }
    store = tmp_path / "a"
    store.mkdir(parents=True)
    (store / "zarr.json").write_text(json.dumps(doc), encoding="utf-8")
    for key, raw in (chunks or {}).items():
        (store / key).parent.mkdir(parents=True, exist_ok=True)
        (store / key).write_bytes(raw)
    return store, doc


def v2_store(tmp_path, dtype="<U2", fill_value=""):
    doc = {
        "zarr_format": 2,
        "shape": [2],
        "chunks": [2],
        "dtype": dtype,
        "compressor": None,
        "filters": None,
        "fill_value": fill_value,
        "order": "C",
    }
    store = tmp_path / "a"
    store.mkdir(parents=True)
    (store / ".zarray").write_text(json.dumps(doc), encoding="utf-8")
    return store, doc


def zarr_open(store, **kwargs):
    return zarr.open_array(str(store), mode="r", **kwargs)


def test_zarr_length_bytes_13(tmp_path):
    dt = {"name": "fixed_length_utf32", "configuration": {"length_bytes": 13}}
    store, doc = v3_store(tmp_path, data_type=dt)
    array = zarr.open_array(str(store), mode="r+")
    assert array.dtype == numpy.dtype("<U3")  # 13 // 4 code points, no complaint
    array[...] = ["abc", "d"]
    assert len((store / "c" / "0").read_bytes()) == 2 * 12  # not 2 * 13
    with pytest.raises(MetadataError, match=r"length_bytes: .*got 13"):
        parse_array_metadata(doc)


@pytest.mark.parametrize("value", [0, -4, True])
def test_zarr_length_bytes_not_positive(tmp_path, value):
    dt = {"name": "fixed_length_utf32", "configuration": {"length_bytes": value}}
    store, doc = v3_store(tmp_path, data_type=dt)
    with pytest.raises(ValueError, match="length must be >= 1"):
        zarr_open(store)
    with pytest.raises(MetadataError, match=f"length_bytes: .*got {json.dumps(value)}"):
        parse_array_metadata(doc)


@pytest.mark.parametrize("value", [4.0, "48", None])
def test_zarr_length_bytes_not_an_integer(tmp_path, value):
    dt = {"name": "fixed_length_utf32", "configuration": {"length_bytes": value}}
    store, doc = v3_store(tmp_path, data_type=dt)
    with pytest.raises(ValueError, match="No Zarr data type found"):
        zarr_open(store)
    with pytest.raises(MetadataError, match=re.escape(f"got {json.dumps(value)}")):
        parse_array_metadata(doc)


@pytest.mark.parametrize(
    "data_type, key",
    [
        ({"name": "fixed_length_utf33", "configuration": {"length_bytes": 8}}, "data_type"),
        ({"name": "fixed_length_utf32"}, "data_type"),
        ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}, "x": 1}, "data_type"),
        ({"name": "fixed_length_utf32", "configuration": {}}, "data_type.configuration"),
        (
            {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8, "x": 1}},
            "data_type.configuration",
        ),
    ],
)
def test_zarr_rejects_bad_name_and_keys(tmp_path, data_type, key):
    store, doc = v3_store(tmp_path, data_type=data_type)
    with pytest.raises(ValueError, match=r"No Zarr data type found|Invalid data_type"):
        zarr_open(store)
    with pytest.raises(MetadataError, match=re.escape(key)):
        parse_array_metadata(doc)


@unstable_spec
def test_zarr_truncates_too_long_fill_value(tmp_path):
    store, doc = v3_store(tmp_path, fill_value="abcdef")
    assert zarr_open(store).fill_value == "ab"
    assert zarr_read(store).tolist() == ["ab", "ab"]
    with pytest.raises(
        MetadataError, match='fill_value: expected at most 2 code points, got 6 in "abcdef"'
    ):
        parse_array_metadata(doc)
    # V2 the same
    store2, doc2 = v2_store(tmp_path / "v2", fill_value="abcdef")
    assert zarr_open(store2, zarr_format=2).fill_value == "ab"
    with pytest.raises(MetadataError, match="fill_value"):
        parse_array_metadata(doc2)
    # and zarr-python writes the truncated value when creating an array
    created = zarr.create_array(str(tmp_path / "c"), shape=(2,), dtype="<U2", fill_value="abcdef")
    assert created.fill_value == "ab"
    written = json.loads((tmp_path / "c" / "zarr.json").read_text(encoding="utf-8"))
    assert written["fill_value"] == "ab"


def test_zarr_counts_code_points(tmp_path):
    dt = FixedLengthUTF32(4).to_json()
    store, doc = v3_store(tmp_path, data_type=dt, fill_value="😀")
    assert zarr_read(store).tolist() == ["😀", "😀"]
    assert parse_array_metadata(doc).fill_value == "😀"


def test_zarr_accepts_surrogate_fill_value(tmp_path):
    store, doc = v3_store(tmp_path, fill_value="\ud800")
    assert [ord(c) for c in zarr_read(store)[0]] == [0xD800]
    with pytest.raises(
        MetadataError,
        match=r"fill_value: .*lone surrogate U\+D800 at code "
        "point 0",
    ):
        parse_array_metadata(doc)


@pytest.mark.parametrize("value", [0, None])
def test_zarr_fill_value_not_a_string(tmp_path, value):
    store, doc = v3_store(tmp_path, fill_value=value)
    with pytest.raises(TypeError, match="Expected a string"):
        zarr_open(store)
    with pytest.raises(
        MetadataError, match=f"fill_value: expected a JSON string, got {json.dumps(value)}"
    ):
        parse_array_metadata(doc)


def test_zarr_v2_null_fill_value_reads_as_empty(tmp_path):
    store, doc = v2_store(tmp_path, fill_value=None)
    assert zarr_read(store).tolist() == ["", ""]
    assert parse_array_metadata(doc).fill_value == ""


# zarr 3.1 gives a bytes codec parsed without endian the machine's byte order;
# zarr 3.4 keeps it None and refuses it for multi-byte data types.
ZARR_ASSUMES_ENDIAN = zarr.codecs.BytesCodec.from_dict({"name": "bytes"}).endian is not None


def test_zarr_bytes_without_endian(tmp_path):
    little = numpy.array(["ab", "c"], "<U2").tobytes()
    store, doc = v3_store(tmp_path, codecs=[{"name": "bytes"}], chunks={"c/0": little})
    big = numpy.array(["ab", "c"], ">U2").tobytes()
    store2, _ = v3_store(tmp_path / "big", codecs=[{"name": "bytes"}], chunks={"c/0": big})
    if ZARR_ASSUMES_ENDIAN:
        assert zarr_read(store).tolist() == ["ab", "c"]  # the machine's byte order (little here)
        if sys.byteorder == "little":
            # big-endian "a" (00 00 00 61) read as little endian: U+61000000, not a code point
            assert zarr_read(store2).view("<u4")[0] == 0x6100_0000
    else:
        for where in (store, store2):
            with pytest.raises(ValueError, match="`endian` configuration needs to be specified"):
                zarr_open(where)
    with pytest.raises(
        MetadataError,
        match=r"codecs\[0\].configuration.endian: .*got no "
        "endian",
    ):
        parse_array_metadata(doc)


def test_zarr_rejects_bad_endian(tmp_path):
    codecs = [{"name": "bytes", "configuration": {"endian": "middle"}}]
    store, doc = v3_store(tmp_path, codecs=codecs)
    with pytest.raises(ValueError, match="must be one of"):
        zarr_open(store)
    with pytest.raises(MetadataError, match='endian: expected "little" or "big", got "middle"'):
        parse_array_metadata(doc)


@unstable_spec
def test_zarr_accepts_vlen_utf8(tmp_path):
    raw = numcodecs.VLenUTF8().encode(numpy.array(["ab", "cde"], dtype=object))
    store, doc = v3_store(tmp_path, codecs=[{"name": "vlen-utf8"}], chunks={"c/0": bytes(raw)})
    assert zarr_read(store).tolist() == ["ab", "cd"]  # "cde" cut to the capacity, silently
    with pytest.raises(
        MetadataError,
        match=r"vlen-utf8.*variable-length codecs do not encode "
        "elements at a fixed size",
    ):
        parse_array_metadata(doc)
    # zarr-python also creates such arrays
    zarr.create_array(
        str(tmp_path / "c"),
        shape=(2,),
        dtype="<U2",
        serializer=zarr.codecs.VLenUTF8Codec(),
        compressors=None,
    )
    written = json.loads((tmp_path / "c" / "zarr.json").read_text(encoding="utf-8"))
    assert written["codecs"] == [{"name": "vlen-utf8", "configuration": {}}]
    assert written["data_type"]["name"] == "fixed_length_utf32"
    with pytest.raises(MetadataError, match="vlen-utf8"):
        parse_array_metadata(written)


def test_zarr_accepts_vlen_bytes(tmp_path):
    raw = numcodecs.VLenBytes().encode(numpy.array([b"ab", b"c"], dtype=object))
    store, doc = v3_store(tmp_path, codecs=[{"name": "vlen-bytes"}], chunks={"c/0": bytes(raw)})
    assert zarr_read(store).tolist() == ["ab", "c"]
    with pytest.raises(MetadataError, match=r"vlen-bytes.*variable-length"):
        parse_array_metadata(doc)


@pytest.mark.parametrize(
    "dtype, zarr_accepts",
    [
        ("<U2", True),
        (">U2", True),
        ("<U02", True),
        ("|U2", False),
        ("=U2", False),
        ("U2", False),
        ("<U0", False),
        ("<S2", False),
    ],
)
def test_zarr_v2_dtype_strings(tmp_path, dtype, zarr_accepts):
    store, doc = v2_store(tmp_path, dtype=dtype)
    if zarr_accepts:
        assert zarr_open(store, zarr_format=2).dtype == numpy.dtype(dtype)
    else:
        with pytest.raises(ValueError):
            zarr_open(store, zarr_format=2)
    if dtype in ("<U2", ">U2"):
        assert parse_array_metadata(doc).data_type == FixedLengthUTF32(8)
    else:
        with pytest.raises(
            MetadataError,
            match=re.escape('dtype: expected "<U<n>" or ">U<n>"')
            + ".*"
            + re.escape(json.dumps(dtype)),
        ):
            parse_array_metadata(doc)


def test_zarr_invalid_code_points_in_chunks(tmp_path):
    surrogate = numpy.array([0xD800, 0x61, 0x62, 0], "<u4").tobytes()
    store, doc = v3_store(tmp_path, chunks={"c/0": surrogate})
    assert [ord(c) for c in zarr_read(store)[0]] == [0xD800, 0x61]
    too_large = numpy.array([0x110000, 0x61, 0x62, 0], "<u4").tobytes()
    store2, _ = v3_store(tmp_path / "large", chunks={"c/0": too_large})
    text = zarr_read(store2).tolist()[0]  # a str holding U+110000, which Python forbids
    assert len(text) == 2
    with pytest.raises(SystemError):
        [ord(c) for c in text]
    meta = parse_array_metadata(doc)
    for raw in (surrogate, too_large):
        with pytest.raises(InvalidCodePointError):
            decode_chunk(raw, **meta.decode_kwargs())


@unstable_spec
def test_zarr_sharding(tmp_path):
    """zarr-python shards this type; a shard is not a chunk, so parse_array_metadata
    rejects it, and check_codecs accepts the codecs inside the shard."""
    array = zarr.create_array(
        str(tmp_path / "s"), shape=(4,), chunks=(1,), shards=(2,), dtype="<U2", fill_value=""
    )
    array[...] = ["a", "bc", "", "d"]
    assert zarr_read(tmp_path / "s").tolist() == ["a", "bc", "", "d"]
    doc = json.loads((tmp_path / "s" / "zarr.json").read_text(encoding="utf-8"))
    (shard,) = [c for c in doc["codecs"] if c["name"] == "sharding_indexed"]
    with pytest.raises(
        MetadataError, match='codecs\\[0\\]: expected the "bytes" codec, got "sharding_indexed"'
    ):
        parse_array_metadata(doc)
    assert check_codecs(shard["configuration"]["codecs"], FixedLengthUTF32(8)) == "little"


# --- random arrays both ways ------------------------------------------------


@st.composite
def stored_arrays(draw):
    capacity = draw(st.integers(1, 4))
    text = st.text(st.characters(exclude_categories=["Cs"]), max_size=capacity)
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    chunks = tuple(draw(st.integers(1, 3)) for _ in shape)
    size = int(numpy.prod(shape))
    values = numpy.array(
        draw(st.lists(text, min_size=size, max_size=size)) or [""], dtype=f"U{capacity}"
    )[:size].reshape(shape)
    fill = draw(text).rstrip("\x00")
    meta = ArrayMetadata(
        draw(st.sampled_from([2, 3])),
        shape,
        chunks,
        FixedLengthUTF32(4 * capacity),
        endian=draw(st.sampled_from(["little", "big"])),
        order=draw(st.sampled_from("CF")),
        fill_value=fill,
    )
    return meta, values


@unstable_spec
@settings(max_examples=25, deadline=None)
@given(stored_arrays())
def test_random_arrays_both_ways(case):
    meta, values = case
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        # zarr-python writes, fixedutf32 reads
        kwargs = {"zarr_format": meta.zarr_format, "compressors": None}
        if meta.zarr_format == 2:
            kwargs.update(dtype=meta.data_type.to_numpy(meta.endian), order=meta.order)
        else:
            kwargs.update(
                dtype=meta.data_type.to_numpy(),
                serializer=zarr.codecs.BytesCodec(endian=meta.endian),
            )
            if meta.order == "F":
                axes = tuple(range(len(meta.shape)))[::-1]
                kwargs["filters"] = [zarr.codecs.TransposeCodec(order=axes)]
        array = zarr.create_array(
            str(tmp / "z"),
            shape=meta.shape,
            chunks=meta.chunk_shape,
            fill_value=str(meta.fill_value),
            **kwargs,
        )
        array[...] = values
        theirs = read_store(tmp / "z")
        assert theirs.tolist() == values.tolist()
        name = "zarr.json" if meta.zarr_format == 3 else ".zarray"
        parsed = parse_array_metadata((tmp / "z" / name).read_bytes())
        assert (parsed.endian, parsed.order, parsed.fill_value) == (
            meta.endian,
            meta.order,
            meta.fill_value,
        )
        # fixedutf32 writes, zarr-python reads
        write_store(tmp / "f", values, meta)
        ours = zarr.open_array(str(tmp / "f"), mode="r", zarr_format=meta.zarr_format)
        assert ours[...].tolist() == values.tolist()
