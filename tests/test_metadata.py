"""Unit tests for fixedutf32.metadata: every rule of the data type, no zarr needed."""

import dataclasses
import json
import re

import numpy
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fixedutf32.errors import DataError, FixedUTF32Error
from fixedutf32.metadata import (
    ArrayMetadata,
    FixedLengthUTF32,
    MetadataError,
    check_codecs,
    parse_array_metadata,
    parse_v2_dtype,
)

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}


def dt_json(length_bytes=48, **extra):
    return {"name": "fixed_length_utf32", "configuration": {"length_bytes": length_bytes}, **extra}


def v3_doc(**changes):
    doc = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [5, 3],
        "data_type": dt_json(12),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "",
        "codecs": [LE],
        "attributes": {},
    }
    doc.update(changes)
    return doc


def v2_doc(**changes):
    doc = {
        "zarr_format": 2,
        "shape": [5, 3],
        "chunks": [2, 2],
        "dtype": "<U3",
        "fill_value": "",
        "order": "C",
        "compressor": None,
        "filters": None,
        "dimension_separator": ".",
    }
    doc.update(changes)
    return doc


def rejects(*patterns):
    """pytest.raises(MetadataError) whose message contains every pattern, verbatim."""
    return pytest.raises(
        MetadataError, match="(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in patterns)
    )


# --- errors ---------------------------------------------------------------


def test_metadata_error_is_a_data_error_and_a_value_error():
    assert issubclass(MetadataError, DataError)
    assert issubclass(MetadataError, FixedUTF32Error)
    assert issubclass(MetadataError, ValueError)


# --- FixedLengthUTF32 -----------------------------------------------------


def test_attributes_and_capacity():
    dt = FixedLengthUTF32(48)
    assert dt.length_bytes == 48
    assert dt.capacity == 12
    assert FixedLengthUTF32(4).capacity == 1


def test_immutable():
    dt = FixedLengthUTF32(8)
    with pytest.raises(dataclasses.FrozenInstanceError):
        dt.length_bytes = 12
    with pytest.raises((AttributeError, TypeError)):
        dt.other = 1


def test_equal_and_hashable_by_length_bytes():
    assert FixedLengthUTF32(8) == FixedLengthUTF32(8)
    assert FixedLengthUTF32(8) != FixedLengthUTF32(12)
    assert hash(FixedLengthUTF32(8)) == hash(FixedLengthUTF32(8))
    assert len({FixedLengthUTF32(8), FixedLengthUTF32(8), FixedLengthUTF32(12)}) == 2
    assert FixedLengthUTF32(numpy.int64(8)) == FixedLengthUTF32(8)
    assert type(FixedLengthUTF32(numpy.int64(8)).length_bytes) is int


@pytest.mark.parametrize("bad", [0, -4, 13, 2, True, 4.0, "48", None])
def test_constructor_validates(bad):
    with rejects("length_bytes", json.dumps(bad)):
        FixedLengthUTF32(bad)


def test_to_json_and_back():
    dt = FixedLengthUTF32(48)
    assert dt.to_json() == {"name": "fixed_length_utf32", "configuration": {"length_bytes": 48}}
    assert FixedLengthUTF32.from_json(dt.to_json()) == dt
    assert FixedLengthUTF32.from_json(json.dumps(dt.to_json())) == dt
    assert FixedLengthUTF32.from_json(json.dumps(dt.to_json()).encode()) == dt
    dt.to_json()["configuration"]["length_bytes"] = 4  # a new dict each call
    assert dt.to_json()["configuration"]["length_bytes"] == 48


@pytest.mark.parametrize(
    "bad, shown",
    [
        (0, "0"),
        (-4, "-4"),
        (13, "13"),
        (True, "true"),
        (4.0, "4.0"),
        ("48", '"48"'),
        (None, "null"),
        (2, "2"),
        ([48], "[48]"),
    ],
)
def test_from_json_rejects_length_bytes(bad, shown):
    with rejects("data_type.configuration.length_bytes", f"got {shown}", "multiple of 4"):
        FixedLengthUTF32.from_json(dt_json(bad))


@pytest.mark.parametrize("name", ["fixed_length_utf33", "FIXED_LENGTH_UTF32", "string", None])
def test_from_json_rejects_name(name):
    with rejects("data_type.name", '"fixed_length_utf32"', json.dumps(name)):
        FixedLengthUTF32.from_json({"name": name, "configuration": {"length_bytes": 8}})


def test_from_json_rejects_missing_and_extra_keys_at_both_levels():
    with rejects("data_type", "missing key 'configuration'"):
        FixedLengthUTF32.from_json({"name": "fixed_length_utf32"})
    with rejects("data_type", "missing key 'name'"):
        FixedLengthUTF32.from_json({"configuration": {"length_bytes": 8}})
    with rejects("data_type", "unexpected key 'must_understand'"):
        FixedLengthUTF32.from_json(dt_json(8, must_understand=False))
    with rejects("data_type.configuration", "missing key 'length_bytes'", "{}"):
        FixedLengthUTF32.from_json({"name": "fixed_length_utf32", "configuration": {}})
    with rejects("data_type.configuration", "unexpected key 'x'"):
        FixedLengthUTF32.from_json(
            {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8, "x": 1}}
        )
    with rejects("data_type.configuration", "a JSON object", "null"):
        FixedLengthUTF32.from_json({"name": "fixed_length_utf32", "configuration": None})


def test_from_json_rejects_non_objects_and_bad_text():
    with rejects("data_type", '"fixed_length_utf32"'):
        FixedLengthUTF32.from_json('"fixed_length_utf32"')  # V3 short name form: no config
    with rejects("data_type", "a JSON object", "[]"):
        FixedLengthUTF32.from_json([])
    with rejects("data_type", "invalid JSON"):
        FixedLengthUTF32.from_json("{not json")


@pytest.mark.parametrize(
    "dtype",
    [
        "<U12",
        ">U12",
        "=U12",
        "U12",
        "|U12",
        numpy.dtype("<U12"),
        numpy.dtype(">U12"),
        numpy.array(["x" * 12]).dtype,
        (numpy.str_, 12),
    ],
)
def test_from_numpy_accepts_unicode_dtypes(dtype):
    assert FixedLengthUTF32.from_numpy(dtype) == FixedLengthUTF32(48)


@pytest.mark.parametrize("dtype", ["U", "U0", numpy.str_, "S12", "i4", "O", "<u4"])
def test_from_numpy_rejects(dtype):
    with rejects("dtype", "NumPy unicode dtype", "got"):
        FixedLengthUTF32.from_numpy(dtype)


def test_from_numpy_rejects_non_dtype():
    with rejects("dtype", "numpy.dtype()", "object"):
        FixedLengthUTF32.from_numpy(object())


def test_to_numpy_and_to_v2():
    dt = FixedLengthUTF32(48)
    assert dt.to_numpy() == numpy.dtype("<U12") and dt.to_numpy().str == "<U12"
    assert dt.to_numpy("big").str == ">U12"
    assert dt.to_v2() == "<U12" and dt.to_v2("little") == "<U12"
    assert dt.to_v2("big") == ">U12"
    for bad in ["native", "<", None, "LITTLE"]:
        with rejects("endian", json.dumps(bad)):
            dt.to_v2(bad)
        with rejects("endian", json.dumps(bad)):
            dt.to_numpy(bad)


# --- V2 dtype strings ---------------------------------------------------------


@pytest.mark.parametrize(
    "text, length_bytes, endian",
    [("<U12", 48, "little"), (">U12", 48, "big"), ("<U1", 4, "little"), (">U100", 400, "big")],
)
def test_parse_v2_dtype(text, length_bytes, endian):
    assert parse_v2_dtype(text) == (FixedLengthUTF32(length_bytes), endian)
    assert FixedLengthUTF32(length_bytes).to_v2(endian) == text


@pytest.mark.parametrize(
    "bad",
    [
        "<U0",
        ">U0",
        "|U2",
        "=U2",
        "U2",
        "<U",
        "<U02",
        "<S2",
        "<u4",
        "<U2 ",
        " <U2",
        "<U-1",
        "<U\u0663",
        "<U2x",
        "<U2\n",
        12,
        None,
        ["<U2"],
    ],
)
def test_parse_v2_dtype_rejects(bad):
    with rejects(
        "dtype", '"<U<n>" or ">U<n>" with n >= 1', "got " + json.dumps(bad, ensure_ascii=False)[:20]
    ):
        parse_v2_dtype(bad)


# --- fill values ------------------------------------------------------------------


def test_decode_fill_value():
    dt = FixedLengthUTF32(12)
    value = dt.decode_fill_value("foo")
    assert type(value) is numpy.str_ and value == "foo"
    assert dt.decode_fill_value("") == ""
    assert dt.decode_fill_value("a\x00b") == "a\x00b"  # inner U+0000 is content
    assert dt.decode_fill_value("ab\x00") == "ab"  # trailing U+0000 is padding
    assert dt.decode_fill_value("😀😀😀") == "😀😀😀"  # counted as code points


@pytest.mark.parametrize(
    "bad, shown",
    [
        (0, "0"),
        (None, "null"),
        (1.5, "1.5"),
        (["a"], '["a"]'),
        (True, "true"),
        ({"a": 1}, '{"a": 1}'),
    ],
)
def test_decode_fill_value_rejects_non_strings(bad, shown):
    with rejects("fill_value", "a JSON string", f"got {shown}"):
        FixedLengthUTF32(8).decode_fill_value(bad)


def test_decode_fill_value_rejects_too_many_code_points():
    dt = FixedLengthUTF32(4)
    assert dt.decode_fill_value("😀") == "😀"  # one code point, although two UTF-16 units
    with rejects("fill_value", "at most 1 code points", "got 2", '"😀😀"'):
        dt.decode_fill_value("😀😀")
    with rejects("fill_value", "at most 2 code points", "got 3", '"abc"'):
        FixedLengthUTF32(8).decode_fill_value("abc")
    with rejects("fill_value", "at most 2 code points", "got 3"):
        FixedLengthUTF32(8).decode_fill_value("ab\x00")  # the JSON string holds 3


@pytest.mark.parametrize("bad", ["\ud800", "a\udfff", "\udbff\udc00"[0] + "x"])
def test_decode_fill_value_rejects_lone_surrogates(bad):
    with rejects("fill_value", "lone surrogate", "U+D"):
        FixedLengthUTF32(12).decode_fill_value(bad)


def test_decode_fill_value_from_json_text_with_escaped_surrogates():
    dt = FixedLengthUTF32(4)
    # a surrogate pair escape is one code point once parsed ...
    assert dt.decode_fill_value(json.loads('"\\ud83d\\ude00"')) == "😀"
    # ... a lone one is rejected, naming its position
    with rejects("fill_value", "U+DE00 at code point 0"):
        dt.decode_fill_value(json.loads('"\\ude00"'))


def test_encode_fill_value():
    dt = FixedLengthUTF32(8)
    assert dt.encode_fill_value("ab") == "ab"
    assert type(dt.encode_fill_value(numpy.str_("ab"))) is str
    assert dt.encode_fill_value("ab\x00\x00\x00") == "ab"
    assert dt.encode_fill_value("a\x00") == "a"
    assert FixedLengthUTF32(12).encode_fill_value("a\x00b") == "a\x00b"
    with rejects("fill_value", "at most 2 code points", "got 3"):
        dt.encode_fill_value("abc")
    with rejects("fill_value", "lone surrogate", "U+D800"):
        dt.encode_fill_value("\ud800")
    with rejects("fill_value", "a str", "got"):
        dt.encode_fill_value(b"ab")
    with rejects("fill_value", "a str"):
        dt.encode_fill_value(None)


text_without_surrogates = st.text(st.characters(exclude_categories=["Cs"]), max_size=6)


@given(text=text_without_surrogates, capacity=st.integers(1, 6))
def test_fill_value_round_trip(text, capacity):
    dt = FixedLengthUTF32(4 * capacity)
    scalar = text.rstrip("\x00")
    if len(scalar) > capacity:
        with pytest.raises(MetadataError):
            dt.encode_fill_value(text)
        return
    encoded = dt.encode_fill_value(text)
    assert encoded == scalar
    assert dt.decode_fill_value(json.loads(json.dumps(encoded))) == scalar
    # the same value NumPy stores in an array of this capacity
    assert numpy.array([text], dtype=dt.to_numpy())[0] == scalar


def test_fill_array():
    dt = FixedLengthUTF32(8)
    out = dt.fill_array((2, 3), "hi")
    assert out.shape == (2, 3) and out.dtype == numpy.dtype("U2") and out.dtype.isnative
    assert (out == "hi").all() and out.flags.c_contiguous
    assert dt.fill_array(4).tolist() == [""] * 4
    assert dt.fill_array((2, 3), "x", order="F").flags.f_contiguous
    assert dt.fill_array((), "😀").item() == "😀"
    assert dt.fill_array((0, 3), "x").shape == (0, 3)
    with rejects("fill_value", "at most 2 code points"):
        dt.fill_array((2,), "abc")


def test_fill_array_is_one_numpy_call_on_large_shapes():
    # a Python loop over 4 million elements would take seconds; numpy.full does not
    out = FixedLengthUTF32(16).fill_array((2000, 2000), "abcd")
    assert out[0, 0] == "abcd" and out[-1, -1] == "abcd"


# --- codecs ---------------------------------------------------------------


DT = FixedLengthUTF32(8)


@pytest.mark.parametrize("codecs, endian", [([LE], "little"), ([BE], "big")])
def test_check_codecs_bytes_alone(codecs, endian):
    assert check_codecs(codecs, DT) == endian


def test_check_codecs_around_bytes():
    codecs = [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        BE,
        {"name": "gzip", "configuration": {"level": 5}},
        {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
        {
            "name": "blosc",
            "configuration": {
                "cname": "lz4",
                "clevel": 5,
                "shuffle": "shuffle",
                "typesize": 4,
                "blocksize": 0,
            },
        },
        {"name": "crc32c"},
        "crc32c",
        {"name": "numcodecs.lzma", "configuration": {}},
    ]
    assert check_codecs(codecs, DT) == "big"
    assert check_codecs(json.dumps(codecs), DT.to_json()) == "big"
    assert check_codecs(codecs, json.dumps(DT.to_json())) == "big"


@pytest.mark.parametrize(
    "codec",
    [
        {"name": "bytes"},
        "bytes",
        {"name": "bytes", "configuration": {}},
    ],
)
def test_check_codecs_rejects_bytes_without_endian(codec):
    with rejects("codecs[0].configuration.endian", "no endian", "explicit"):
        check_codecs([codec], DT)


@pytest.mark.parametrize("endian", ["middle", None, "LITTLE", "<", 1])
def test_check_codecs_rejects_bad_endian(endian):
    codec = {"name": "bytes", "configuration": {"endian": endian}}
    with rejects("codecs[0].configuration.endian", '"little" or "big"', json.dumps(endian)):
        check_codecs([codec], DT)


def test_check_codecs_rejects_extra_bytes_configuration():
    with rejects("codecs[0].configuration", "unexpected key 'x'"):
        check_codecs([{"name": "bytes", "configuration": {"endian": "little", "x": 1}}], DT)


@pytest.mark.parametrize("name", ["vlen-utf8", "vlen-bytes"])
def test_check_codecs_rejects_variable_length_codecs(name):
    for codecs in ([{"name": name}], [{"name": name, "configuration": {}}, LE], [LE, name]):
        with rejects(
            "codecs[", f'"{name}"', "variable-length codecs do not encode elements at a fixed size"
        ):
            check_codecs(codecs, DT)


@pytest.mark.parametrize("name", ["sharding_indexed", "numcodecs.pcodec", "packbits"])
def test_check_codecs_rejects_other_array_to_bytes_codecs(name):
    with rejects("codecs[0]", f'"{name}"', 'expected the "bytes" codec', "fixed-size"):
        check_codecs([{"name": name, "configuration": {}}], DT)


def test_check_codecs_rejects_bad_arrangements():
    with rejects("codecs", 'expected a "bytes" codec', '["gzip"]'):
        check_codecs([{"name": "gzip"}], DT)
    with rejects("codecs", 'expected a "bytes" codec', "[]"):
        check_codecs([], DT)
    with rejects("codecs[1]", 'second "bytes"', "codecs[0]"):
        check_codecs([LE, BE], DT)
    with rejects("codecs[0]", "array-to-array codec", '"gzip"'):
        check_codecs([{"name": "gzip"}, LE], DT)
    with rejects("codecs[1]", "bytes-to-bytes", '"transpose"'):
        check_codecs([LE, {"name": "transpose", "configuration": {"order": [0]}}], DT)
    with rejects("codecs", "a JSON array", '{"name": "bytes"}'):
        check_codecs({"name": "bytes"}, DT)
    with rejects("codecs[0]", "a codec object or name", "1"):
        check_codecs([1], DT)
    with rejects("codecs[0]", "unexpected key 'id'"):
        check_codecs([{"name": "bytes", "id": "x"}], DT)
    with rejects("codecs[0].configuration", "a JSON object", "[]"):
        check_codecs([{"name": "bytes", "configuration": []}], DT)


def test_check_codecs_validates_the_data_type():
    with rejects("data_type.configuration.length_bytes", "13"):
        check_codecs([LE], dt_json(13))


# --- parse_array_metadata: V3 ---------------------------------------------


def test_parse_v3():
    meta = parse_array_metadata(v3_doc(fill_value="ab", codecs=[BE, {"name": "gzip"}]))
    assert isinstance(meta, ArrayMetadata)
    assert meta.zarr_format == 3
    assert meta.shape == (5, 3) and meta.chunk_shape == (2, 2)
    assert meta.data_type == FixedLengthUTF32(12)
    assert meta.endian == "big" and meta.order == "C"
    assert meta.fill_value == "ab" and type(meta.fill_value) is numpy.str_
    assert meta.codecs == ({"name": "gzip"},) and meta.filters == ()
    assert meta.grid_shape == (3, 2)
    assert list(meta.chunk_indices()) == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    assert meta.chunk_key((2, 1)) == "c/2/1"
    assert meta.chunk_region((2, 1)) == ((slice(4, 5), slice(2, 3)), (slice(0, 1), slice(0, 1)))
    assert meta.decode_kwargs() == {
        "length_bytes": 12,
        "endian": "big",
        "shape": (2, 2),
        "order": "C",
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        meta.endian = "little"


def test_parse_v3_from_json_text_and_bytes():
    doc = v3_doc()
    assert parse_array_metadata(json.dumps(doc)) == parse_array_metadata(doc)
    assert parse_array_metadata(json.dumps(doc).encode()) == parse_array_metadata(doc)


def test_parse_v3_keeps_no_reference_to_the_document():
    doc = v3_doc(codecs=[LE, {"name": "gzip", "configuration": {"level": 1}}])
    meta = parse_array_metadata(doc)
    doc["codecs"][1]["name"] = "zstd"
    doc["codecs"][1]["configuration"]["level"] = 9
    assert meta.codecs[0] == {"name": "gzip", "configuration": {"level": 1}}
    meta.to_json()["codecs"][1]["configuration"]["level"] = 9
    assert meta.codecs[0] == {"name": "gzip", "configuration": {"level": 1}}


@pytest.mark.parametrize(
    "encoding, key",
    [
        ({"name": "default"}, "c/1/0"),
        ({"name": "default", "configuration": {"separator": "."}}, "c.1.0"),
        ({"name": "v2"}, "1.0"),
        ({"name": "v2", "configuration": {"separator": "/"}}, "1/0"),
    ],
)
def test_parse_v3_chunk_key_encoding(encoding, key):
    assert parse_array_metadata(v3_doc(chunk_key_encoding=encoding)).chunk_key((1, 0)) == key


def test_zero_dimensional_chunk_keys():
    meta = parse_array_metadata(
        v3_doc(shape=[], chunk_grid={"name": "regular", "configuration": {"chunk_shape": []}})
    )
    assert list(meta.chunk_indices()) == [()] and meta.chunk_key(()) == "c"
    meta2 = parse_array_metadata(v2_doc(shape=[], chunks=[]))
    assert meta2.chunk_key(()) == "0"


@pytest.mark.parametrize(
    "transposes, order",
    [
        ([], "C"),
        ([[0, 1, 2]], "C"),
        ([[2, 1, 0]], "F"),
        ([[2, 1, 0], [2, 1, 0]], "C"),
        ([[1, 0, 2], [0, 2, 1], [1, 0, 2]], "F"),
    ],
)
def test_parse_v3_transpose_becomes_order(transposes, order):
    codecs = [{"name": "transpose", "configuration": {"order": t}} for t in transposes] + [LE]
    doc = v3_doc(
        shape=[2, 3, 4],
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2, 3, 4]}},
        codecs=codecs,
    )
    assert parse_array_metadata(doc).order == order


def test_parse_v3_rejects_transposes_that_are_not_c_or_f():
    def doc(order):
        return v3_doc(
            shape=[2, 3, 4],
            chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2, 3, 4]}},
            codecs=[{"name": "transpose", "configuration": {"order": order}}, LE],
        )

    with rejects("codecs", "permutation [1, 0, 2]", "C or F order"):
        parse_array_metadata(doc([1, 0, 2]))
    with rejects("codecs[0].configuration.order", "a permutation of 0..2", "[0, 1]"):
        parse_array_metadata(doc([0, 1]))
    with rejects("codecs[0].configuration.order", "[0, 0, 1]"):
        parse_array_metadata(doc([0, 0, 1]))


@pytest.mark.parametrize(
    "data_type, found",
    [
        ("int32", '"int32"'),
        ("string", '"string"'),
        (
            {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}},
            '"numpy.datetime64"',
        ),
        ("fixed_length_utf32", '"fixed_length_utf32"'),
    ],
)
def test_parse_v3_rejects_other_data_types_naming_them(data_type, found):
    with rejects("data_type", "expected fixed_length_utf32", f"found the data type {found}"):
        parse_array_metadata(v3_doc(data_type=data_type))


@pytest.mark.parametrize(
    "changes, patterns",
    [
        ({"data_type": dt_json(13)}, ["data_type.configuration.length_bytes", "13"]),
        ({"data_type": dt_json(True)}, ["data_type.configuration.length_bytes", "true"]),
        ({"fill_value": "abcd"}, ["fill_value", "at most 3 code points", '"abcd"']),
        ({"fill_value": None}, ["fill_value", "a JSON string", "null"]),
        ({"fill_value": 0}, ["fill_value", "a JSON string", "0"]),
        ({"fill_value": "\ud800"}, ["fill_value", "U+D800"]),
        ({"codecs": [{"name": "bytes"}]}, ["codecs[0].configuration.endian", "no endian"]),
        ({"codecs": [{"name": "vlen-utf8"}]}, ["codecs[0]", "vlen-utf8", "variable-length"]),
        ({"zarr_format": 4}, ["zarr_format", "2 or 3", "4"]),
        ({"zarr_format": True}, ["zarr_format", "true"]),
        ({"zarr_format": "3"}, ["zarr_format", '"3"']),
        ({"node_type": "group"}, ["node_type", '"group"']),
        ({"shape": [5, -1]}, ["shape[1]", "-1"]),
        ({"shape": [5, 3.0]}, ["shape[1]", "3.0"]),
        ({"shape": [5, True]}, ["shape[1]", "true"]),
        (
            {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [True, 2]}}},
            ["chunk_grid.configuration.chunk_shape[0]", "true"],
        ),
        (
            {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 0]}}},
            ["chunk_grid.configuration.chunk_shape[1]", "0"],
        ),
        (
            {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}},
            ["chunk_grid.configuration.chunk_shape", "2 dimensions", "[2]"],
        ),
        (
            {"chunk_grid": {"name": "rectilinear", "configuration": {}}},
            ["chunk_grid", "rectilinear"],
        ),
        (
            {"chunk_key_encoding": {"name": "default", "configuration": {"separator": "-"}}},
            ["chunk_key_encoding.configuration.separator", '"-"'],
        ),
        ({"chunk_key_encoding": {"name": "other"}}, ["chunk_key_encoding", '"other"']),
        ({"storage_transformers": [{"name": "x"}]}, ["storage_transformers", '"x"']),
        ({"unknown": 1}, ["unknown", "must_understand", "1"]),
    ],
)
def test_parse_v3_rejects(changes, patterns):
    with rejects(*patterns):
        parse_array_metadata(v3_doc(**changes))


def test_parse_v3_accepts_extensions_that_need_not_be_understood():
    parse_array_metadata(
        v3_doc(ext={"must_understand": False}, storage_transformers=[], dimension_names=["y", "x"])
    )


def test_parse_v3_rejects_missing_keys():
    for key in [
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
    ]:
        doc = v3_doc()
        del doc[key]
        with rejects(key):
            parse_array_metadata(doc)


def test_parse_rejects_non_objects():
    with rejects("metadata", "a JSON object", "[]"):
        parse_array_metadata([])
    with rejects("metadata", "invalid JSON"):
        parse_array_metadata("{")


# --- parse_array_metadata: V2 ---------------------------------------------


def test_parse_v2():
    meta = parse_array_metadata(
        v2_doc(
            dtype=">U3",
            order="F",
            fill_value="xy",
            compressor={"id": "zstd", "level": 1},
            filters=[{"id": "delta", "dtype": ">U3"}],
        )
    )
    assert meta.zarr_format == 2
    assert meta.shape == (5, 3) and meta.chunk_shape == (2, 2)
    assert meta.data_type == FixedLengthUTF32(12)
    assert meta.endian == "big" and meta.order == "F" and meta.fill_value == "xy"
    assert meta.codecs == ({"id": "zstd", "level": 1},)
    assert meta.filters == ({"id": "delta", "dtype": ">U3"},)
    assert meta.chunk_key((2, 1)) == "2.1"
    assert meta.decode_kwargs() == {
        "length_bytes": 12,
        "endian": "big",
        "shape": (2, 2),
        "order": "F",
    }


def test_parse_v2_defaults_and_null_fill_value():
    doc = v2_doc(fill_value=None)
    del doc["dimension_separator"]
    meta = parse_array_metadata(json.dumps(doc))
    assert meta.fill_value == "" and meta.separator == "." and meta.codecs == ()
    assert parse_array_metadata(v2_doc(dimension_separator="/")).chunk_key((1, 1)) == "1/1"


@pytest.mark.parametrize(
    "dtype, found",
    [
        ("<i4", '"<i4"'),
        ("|O", '"|O"'),
        ("|S3", '"|S3"'),
        ([["a", "<U2"]], '[["a", "<U2"]]'),
    ],
)
def test_parse_v2_rejects_other_data_types_naming_them(dtype, found):
    with rejects("dtype", "fixed_length_utf32", f"found the data type {found}"):
        parse_array_metadata(v2_doc(dtype=dtype))


@pytest.mark.parametrize(
    "changes, patterns",
    [
        ({"dtype": "|U3"}, ["dtype", '"|U3"']),
        ({"dtype": "<U0"}, ["dtype", '"<U0"']),
        ({"dtype": "<U03"}, ["dtype", '"<U03"']),
        ({"fill_value": "abcd"}, ["fill_value", "at most 3 code points"]),
        ({"fill_value": 0}, ["fill_value", "a JSON string", "0"]),
        ({"order": "K"}, ["order", '"K"']),
        ({"compressor": "zstd"}, ["compressor", '"zstd"']),
        ({"filters": [1]}, ["filters[0]", 'a string "id"', "got 1"]),
        ({"chunks": [2]}, ["chunks", "2 dimensions", "[2]"]),
        ({"dimension_separator": ":"}, ["dimension_separator", '":"']),
        ({"extra": 1}, ["zarr_format 2 metadata", "unexpected key 'extra'"]),
    ],
)
def test_parse_v2_rejects(changes, patterns):
    with rejects(*patterns):
        parse_array_metadata(v2_doc(**changes))


def test_parse_v2_rejects_missing_keys():
    doc = v2_doc()
    del doc["order"]
    with rejects("missing key 'order'"):
        parse_array_metadata(doc)


# --- ArrayMetadata built by hand, and to_json -------------------------------


@pytest.mark.parametrize(
    "meta",
    [
        ArrayMetadata(3, (5, 3), (2, 2), FixedLengthUTF32(12)),
        ArrayMetadata(
            3,
            (5, 3, 2),
            (2, 2, 1),
            FixedLengthUTF32(4),
            endian="big",
            fill_value="😀",
            order="F",
            codecs=({"name": "gzip", "configuration": {"level": 1}},),
            chunk_key_encoding="v2",
        ),
        ArrayMetadata(3, (), (), FixedLengthUTF32(8), separator="."),
        ArrayMetadata(2, (5,), (2,), FixedLengthUTF32(8), order="F", fill_value="a\x00"),
        ArrayMetadata(
            2,
            (5, 3),
            (2, 2),
            FixedLengthUTF32(8),
            endian="big",
            codecs=({"id": "zstd", "level": 1},),
            separator="/",
        ),
    ],
)
def test_to_json_round_trips(meta):
    doc = meta.to_json()
    assert parse_array_metadata(doc) == meta
    assert parse_array_metadata(json.dumps(doc)) == meta


def test_hand_built_defaults_and_normalization():
    v3 = ArrayMetadata(3, [4], [2], FixedLengthUTF32(8), fill_value="ab\x00", order="F")
    assert (v3.endian, v3.order, v3.chunk_key_encoding, v3.separator) == (
        "little",
        "C",
        "default",
        "/",
    )
    assert v3.shape == (4,) and v3.fill_value == "ab" and type(v3.fill_value) is numpy.str_
    v2 = ArrayMetadata(2, [4], [2], FixedLengthUTF32(8))
    assert (v2.chunk_key_encoding, v2.separator, v2.order) == ("v2", ".", "C")
    f = ArrayMetadata(3, (2, 3), (2, 3), FixedLengthUTF32(8), order="F")
    assert f.to_json()["codecs"][0] == {"name": "transpose", "configuration": {"order": [1, 0]}}


@pytest.mark.parametrize(
    "kwargs, patterns",
    [
        ({"zarr_format": 1}, ["zarr_format", "1"]),
        ({"shape": (2, -1)}, ["shape[1]", "-1"]),
        ({"chunk_shape": (2,)}, ["chunk_shape", "2 dimensions"]),
        ({"data_type": 8}, ["data_type", "FixedLengthUTF32"]),
        ({"endian": "native"}, ["endian", '"native"']),
        ({"order": "A"}, ["order", '"A"']),
        ({"fill_value": "abc"}, ["fill_value", "at most 2 code points"]),
        ({"codecs": ({"name": "vlen-utf8"},)}, ["vlen-utf8", "variable-length"]),
        (
            {"codecs": ({"name": "transpose", "configuration": {"order": [1, 0]}},)},
            ["bytes-to-bytes", "transpose"],
        ),
        ({"filters": ({"id": "delta"},)}, ["filters", "zarr_format 3"]),
        ({"chunk_key_encoding": "v1"}, ["chunk_key_encoding", '"v1"']),
        ({"separator": "-"}, ["separator", '"-"']),
        ({"zarr_format": 2, "chunk_key_encoding": "default"}, ["chunk_key_encoding", '"default"']),
        ({"zarr_format": 2, "codecs": ({"id": "zstd"}, {"id": "gzip"})}, ["codecs", "at most one"]),
        # wrong types, each named (issue 8)
        ({"shape": 5}, ["shape", "a sequence", "5"]),
        ({"shape": "ab"}, ["shape", "a sequence", '"ab"']),
        ({"chunk_shape": 5}, ["chunk_shape", "a sequence", "5"]),
        ({"shape": (True, 4)}, ["shape[0]", "true"]),
        ({"shape": (numpy.bool_(True), 4)}, ["shape[0]"]),
        ({"chunk_shape": (2, False)}, ["chunk_shape[1]", "false"]),
        ({"shape": (2.0, 4)}, ["shape[0]", "2.0"]),
        ({"shape": (2**63, 4)}, ["shape[0]", "int64"]),
        ({"codecs": 5}, ["codecs", "a sequence", "5"]),
        ({"codecs": {"name": "gzip"}}, ["codecs", "a sequence"]),
        ({"codecs": (5,)}, ["codecs[0]", "a JSON object", "5"]),
        ({"filters": ("delta",)}, ["filters[0]", "a JSON object", '"delta"']),
        ({"zarr_format": 2, "codecs": ({"id": 5},)}, ["codecs[0]", 'a string "id"']),
        ({"zarr_format": 2, "filters": ({"name": "delta"},)}, ["filters[0]", 'a string "id"']),
        ({"chunk_key_encoding": ["default"]}, ["chunk_key_encoding", '["default"]']),
        ({"separator": ["/"]}, ["separator", '["/"]']),
        ({"endian": ["little"]}, ["endian", '["little"]']),
        ({"order": ["C"]}, ["order", '["C"]']),
    ],
)
def test_hand_built_rejects(kwargs, patterns):
    args = {
        "zarr_format": 3,
        "shape": (2, 3),
        "chunk_shape": (2, 2),
        "data_type": FixedLengthUTF32(8),
        **kwargs,
    }
    with rejects(*patterns):
        ArrayMetadata(**args)


def test_docstring_examples_run():
    """The Examples sections are doctests; run them with the suite."""
    import doctest

    import fixedutf32.metadata as package

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for name in package.__all__:
        # the public names are defined in the package's private modules
        for test in finder.find(getattr(package, name), name, module=False, globs=vars(package)):
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 30 and result.failed == 0


def test_a_parsed_document_equals_the_same_fields_built_by_hand(monkeypatch):
    """Parsing checks each field once: what it builds is what the checked constructor builds."""
    docs = [
        v3_doc(fill_value="ab", codecs=[BE, {"name": "gzip", "configuration": {"level": 1}}]),
        v3_doc(codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}}, LE]),
        v3_doc(shape=[7], chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2]}}),
    ]
    parsed = [parse_array_metadata(doc) for doc in docs]
    for meta in parsed:
        fields = {name: getattr(meta, name) for name in meta.__dataclass_fields__}
        assert ArrayMetadata(**fields) == meta

    # ... and does not run the constructor's checks a second time:
    def second_round(self):
        raise AssertionError("__post_init__ ran for a parsed document")

    monkeypatch.setattr(ArrayMetadata, "__post_init__", second_round)
    assert [parse_array_metadata(doc) for doc in docs] == parsed
    docs[0]["codecs"][1]["configuration"]["level"] = 9  # the caller's document changes ...
    assert parsed[0].codecs[0]["configuration"]["level"] == 1  # ... the parsed object does not


@pytest.mark.parametrize(
    "name",
    [
        "check_codecs",
        "parse_array_metadata",
        "parse_v2_dtype",
        "FixedLengthUTF32.from_json",
        "FixedLengthUTF32.from_numpy",
        "FixedLengthUTF32.to_numpy",
        "FixedLengthUTF32.to_v2",
        "FixedLengthUTF32.decode_fill_value",
        "FixedLengthUTF32.encode_fill_value",
        "FixedLengthUTF32.fill_array",
    ],
)
def test_public_functions_have_numpydoc_sections(name):
    import fixedutf32.metadata

    obj = fixedutf32.metadata
    for part in name.split("."):
        obj = getattr(obj, part)
    for section in ("Parameters", "Returns", "Raises", "Examples"):
        assert f"{section}\n" in obj.__doc__, f"{name} lacks a {section} section"


def test_pickle_round_trips():
    """Dask and multiprocessing users send these between processes."""
    import pickle

    dt = FixedLengthUTF32(8)
    assert pickle.loads(pickle.dumps(dt)) == dt
    meta = parse_array_metadata(v3_doc(fill_value="ab", codecs=[BE, {"name": "gzip"}]))
    assert pickle.loads(pickle.dumps(meta)) == meta
    error = pickle.loads(pickle.dumps(MetadataError("fill_value: expected a JSON string, got 0")))
    assert isinstance(error, MetadataError) and str(error).startswith("fill_value")


# --- hostile documents: every one a MetadataError at parse time (issue 8) ---

from fixedutf32.metadata import MAX_LENGTH_BYTES, MAX_NESTING_DEPTH  # noqa: E402


def nested_list(depth):
    value = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100000,
        "[" * 100000 + "]" * 100000,
        '{"a":' * 100000 + "1" + "}" * 100000,
    ],
)
def test_parse_rejects_json_nested_too_deep_for_the_parser(text):
    with rejects("metadata", f"at most {MAX_NESTING_DEPTH} levels", "deeper"):
        parse_array_metadata(text)


def test_parse_rejects_deep_attributes_in_text_and_in_dicts():
    inner = "[" * 100000 + "]" * 100000
    text = json.dumps(v3_doc())[:-1] + ', "attributes": {"deep": ' + inner + "}}"
    with rejects("metadata", f"at most {MAX_NESTING_DEPTH} levels"):
        parse_array_metadata(text)
    # Deep enough to pass json.loads but beyond the limit: the walk names where.
    doc = v3_doc(attributes={"deep": nested_list(MAX_NESTING_DEPTH)})
    with rejects(
        "metadata", f"at most {MAX_NESTING_DEPTH} levels", 'at metadata["attributes"]["deep"][0][0]'
    ):
        parse_array_metadata(json.dumps(doc))
    # A parsed dict far deeper than Python's recursion limit.
    with rejects("metadata", f"at most {MAX_NESTING_DEPTH} levels"):
        parse_array_metadata(v3_doc(attributes={"deep": nested_list(100000)}))


def test_nesting_at_the_limit_is_accepted():
    # the document is level 1, attributes level 2: 126 more lists reach the limit
    doc = v3_doc(attributes={"deep": nested_list(MAX_NESTING_DEPTH - 2)})
    assert parse_array_metadata(json.dumps(doc)) == parse_array_metadata(v3_doc())
    with rejects("metadata", f"at most {MAX_NESTING_DEPTH} levels"):
        parse_array_metadata(v3_doc(attributes={"deep": nested_list(MAX_NESTING_DEPTH - 1)}))


def test_self_referencing_dicts_are_rejected_not_looped_over():
    attributes = {}
    attributes["self"] = attributes
    attributes["again"] = attributes
    with rejects("metadata", f"at most {MAX_NESTING_DEPTH} levels"):
        parse_array_metadata(v3_doc(attributes=attributes))
    codec = {"name": "gzip", "configuration": {}}
    codec["configuration"]["loop"] = codec
    with rejects("codecs", f"at most {MAX_NESTING_DEPTH} levels"):
        ArrayMetadata(3, (2,), (2,), FixedLengthUTF32(8), codecs=(codec,))


def test_deep_codec_configuration_is_rejected_everywhere_it_enters():
    deep = {"name": "gzip", "configuration": {"x": nested_list(10000)}}
    with rejects("metadata", f"at most {MAX_NESTING_DEPTH} levels"):
        parse_array_metadata(v3_doc(codecs=[LE, deep]))
    with rejects("codecs", f"at most {MAX_NESTING_DEPTH} levels"):
        check_codecs([LE, deep], FixedLengthUTF32(8))
    with rejects("codecs", f"at most {MAX_NESTING_DEPTH} levels"):
        ArrayMetadata(3, (2,), (2,), FixedLengthUTF32(8), codecs=(deep,))
    with rejects("data_type", f"at most {MAX_NESTING_DEPTH} levels"):
        FixedLengthUTF32.from_json(dt_json(8, extra=nested_list(10000)))
    with rejects("data_type", f"at most {MAX_NESTING_DEPTH} levels"):
        FixedLengthUTF32.from_json("[" * 100000)


def test_max_length_bytes_is_numpys_largest_unicode_item():
    assert numpy.dtype(f"U{MAX_LENGTH_BYTES // 4}").itemsize == MAX_LENGTH_BYTES
    with pytest.raises(TypeError):
        numpy.dtype(f"U{MAX_LENGTH_BYTES // 4 + 1}")
    assert FixedLengthUTF32(MAX_LENGTH_BYTES).capacity == MAX_LENGTH_BYTES // 4
    assert parse_v2_dtype(f">U{MAX_LENGTH_BYTES // 4}")[0].length_bytes == MAX_LENGTH_BYTES


@pytest.mark.parametrize(
    "make, patterns",
    [
        (lambda: FixedLengthUTF32(2**40), ["length_bytes", "at most 2147483644", "1099511627776"]),
        (lambda: FixedLengthUTF32(MAX_LENGTH_BYTES + 4), ["length_bytes", "2147483648"]),
        (lambda: FixedLengthUTF32(10**5000), ["length_bytes", "an integer of 16610 bits"]),
        (
            lambda: FixedLengthUTF32.from_json(dt_json(2**40)),
            ["data_type.configuration.length_bytes", "at most 2147483644", "1099511627776"],
        ),
        (lambda: parse_v2_dtype("<U999999999999"), ["dtype", "n <= 536870911", '"<U999999999999"']),
        (lambda: parse_v2_dtype("<U536870912"), ["dtype", "n <= 536870911"]),
        (lambda: parse_v2_dtype("<U" + "9" * 5000), ["dtype", "n <= 536870911"]),
        (
            lambda: parse_array_metadata(v3_doc(data_type=dt_json(2**40))),
            ["data_type.configuration.length_bytes", "at most 2147483644"],
        ),
        (
            lambda: parse_array_metadata(v2_doc(dtype="<U999999999999")),
            ["dtype", "n <= 536870911", '"<U999999999999"'],
        ),
        (
            lambda: parse_array_metadata(v3_doc(shape=[2**63, 3])),
            ["shape[0]", "int64", "9223372036854775808"],
        ),
        (lambda: parse_array_metadata(v2_doc(shape=[5, 2**64])), ["shape[1]", "int64"]),
        (
            lambda: parse_array_metadata(
                v3_doc(chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2, 2**63]}})
            ),
            ["chunk_grid.configuration.chunk_shape[1]", "int64"],
        ),
        (
            lambda: parse_array_metadata(
                v3_doc(
                    chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2**31, 2**31]}}
                )
            ),
            [
                "chunk_grid.configuration.chunk_shape",
                "bytes",
                "[2147483648, 2147483648]",
                "length_bytes 12",
            ],
        ),
        (lambda: parse_array_metadata(v2_doc(chunks=[2**40, 2**40])), ["chunks", "bytes"]),
        (
            lambda: ArrayMetadata(3, (2**62,), (2**62,), FixedLengthUTF32(8)),
            ["chunk_shape", "bytes", "length_bytes 8"],
        ),
    ],
)
def test_sizes_nothing_could_hold_are_rejected_at_parse_time(make, patterns):
    with rejects(*patterns):
        make()


def test_largest_extents_parse_and_give_exact_grids():
    meta = parse_array_metadata(
        v3_doc(
            shape=[2**63 - 1, 3],
            chunk_grid={"name": "regular", "configuration": {"chunk_shape": [3, 2]}},
        )
    )
    # floating-point ceil(s / c) is off by dozens at this size
    assert meta.grid_shape == ((2**63 - 1 + 2) // 3, 2)
    # 2**63 - 1 = 3k + 1: the last chunk along axis 0 holds one element
    assert meta.chunk_region((meta.grid_shape[0] - 1, 1)) == (
        (slice(2**63 - 2, 2**63 - 1), slice(2, 3)),
        (slice(0, 1), slice(0, 1)),
    )


def test_chunk_indices_are_lazy_on_a_huge_grid():
    meta = ArrayMetadata(3, (10**12,), (10,), FixedLengthUTF32(8))
    indices = meta.chunk_indices()
    assert next(indices) == (0,)
    assert next(indices) == (1,)
    meta = ArrayMetadata(3, (2**63 - 1, 2**63 - 1), (1, 1), FixedLengthUTF32(4))
    indices = meta.chunk_indices()
    assert [next(indices) for _ in range(2)] == [(0, 0), (0, 1)]


@pytest.mark.parametrize(
    "shape, chunks, expected",
    [
        ((3, 4), (2, 2), [(0, 0), (0, 1), (1, 0), (1, 1)]),
        ((), (), [()]),
        ((0, 4), (2, 2), []),
        ((5,), (5,), [(0,)]),
    ],
)
def test_chunk_indices_in_c_order(shape, chunks, expected):
    assert list(ArrayMetadata(3, shape, chunks, FixedLengthUTF32(8)).chunk_indices()) == expected


@pytest.mark.parametrize(
    "changes, patterns",
    [
        (
            {"chunk_key_encoding": {"name": "default", "configuration": False}},
            ["chunk_key_encoding.configuration", "a JSON object", "false"],
        ),
        (
            {"chunk_key_encoding": {"name": "default", "configuration": None}},
            ["chunk_key_encoding.configuration", "a JSON object", "null"],
        ),
        (
            {"chunk_key_encoding": {"name": "v2", "configuration": []}},
            ["chunk_key_encoding.configuration", "a JSON object", "[]"],
        ),
        ({"storage_transformers": {}}, ["storage_transformers", "a JSON array", "{}"]),
        ({"storage_transformers": 0}, ["storage_transformers", "a JSON array", "0"]),
        ({"storage_transformers": None}, ["storage_transformers", "a JSON array", "null"]),
        (
            {"storage_transformers": [{"name": "x"}]},
            ["storage_transformers", "an empty array", "no storage transformer", '"x"'],
        ),
        ({"dimension_names": 5}, ["dimension_names", "2 strings or nulls", "5"]),
        ({"dimension_names": "xy"}, ["dimension_names", '"xy"']),
        ({"dimension_names": ["x"]}, ["dimension_names", "2 strings or nulls", '["x"]']),
        ({"dimension_names": ["x", "y", "z"]}, ["dimension_names", "2 strings or nulls"]),
        ({"dimension_names": ["x", 1]}, ["dimension_names", '["x", 1]']),
        ({"attributes": 5}, ["attributes", "a JSON object", "5"]),
        ({"attributes": []}, ["attributes", "a JSON object", "[]"]),
        ({"attributes": None}, ["attributes", "a JSON object", "null"]),
    ],
)
def test_parse_v3_rejects_optional_keys_of_the_wrong_shape(changes, patterns):
    with rejects(*patterns):
        parse_array_metadata(v3_doc(**changes))


@pytest.mark.parametrize(
    "changes",
    [
        {"dimension_names": ["x", None]},
        {"dimension_names": [None, None]},
        {"dimension_names": None},  # not the spec's, but written by zarrita and icechunk
        {"storage_transformers": []},
        {"attributes": {"a": [1, {"b": None}]}},
        {"chunk_key_encoding": {"name": "default", "configuration": {}}},
        {"chunk_key_encoding": {"name": "default"}},
    ],
)
def test_parse_v3_accepts_valid_optional_keys(changes):
    assert parse_array_metadata(v3_doc(**changes)) == parse_array_metadata(v3_doc())


@pytest.mark.parametrize(
    "changes, patterns",
    [
        ({"compressor": {"id": 5}}, ["compressor", 'a string "id"', '{"id": 5}']),
        ({"compressor": {"level": 1}}, ["compressor", 'a string "id"']),
        ({"compressor": []}, ["compressor", 'a string "id"', "[]"]),
        ({"filters": [{"id": "delta"}, {"id": None}]}, ["filters[1]", 'a string "id"']),
        ({"filters": {"id": "delta"}}, ["filters", "null or an array"]),
    ],
)
def test_parse_v2_rejects_codec_ids_that_are_not_strings(changes, patterns):
    with rejects(*patterns):
        parse_array_metadata(v2_doc(**changes))


def test_positional_ints_for_shapes_say_which_argument():
    with rejects("shape: expected a sequence (tuple or list) of integers >= 0, got 5"):
        ArrayMetadata(3, 5, 5, FixedLengthUTF32(8))


def test_hand_built_accepts_numpy_integers_and_arrays_as_shapes():
    meta = ArrayMetadata(
        3, numpy.array([4, 6]), (numpy.int64(2), numpy.uint8(3)), FixedLengthUTF32(8)
    )
    assert meta.shape == (4, 6) and meta.chunk_shape == (2, 3)
    assert all(type(n) is int for n in meta.shape + meta.chunk_shape)


@pytest.mark.parametrize(
    "call, patterns",
    [
        (lambda dt: dt.fill_array((True, 2)), ["shape[0]", "true"]),
        (lambda dt: dt.fill_array(True), ["shape", "true"]),
        (lambda dt: dt.fill_array((2, -1)), ["shape[1]", "-1"]),
        (lambda dt: dt.fill_array("ab"), ["shape", '"ab"']),
        (lambda dt: dt.fill_array((2,), order="A"), ["order", '"A"']),
        (lambda dt: dt.fill_array((2,), 5), ["fill_value", "a str"]),
        (lambda dt: dt.to_v2(["little"]), ["endian", '["little"]']),
        (lambda dt: dt.to_numpy(numpy.array(["little"])), ["endian"]),
        (lambda dt: FixedLengthUTF32.from_numpy((str, -1)), ["dtype", "numpy.dtype()"]),
        (
            lambda dt: FixedLengthUTF32.from_json(
                {"name": ["fixed_length_utf32"], "configuration": {"length_bytes": 8}}
            ),
            ["data_type.name", '["fixed_length_utf32"]'],
        ),
        (lambda dt: FixedLengthUTF32(numpy.bool_(True)), ["length_bytes"]),
        (
            lambda dt: check_codecs(
                [LE], {"name": "fixed_length_utf32", "configuration": {"length_bytes": 2**40}}
            ),
            ["data_type.configuration.length_bytes", "at most"],
        ),
        (lambda dt: check_codecs(5, dt), ["codecs", "a JSON array", "5"]),
        (lambda dt: parse_v2_dtype(["<U2"]), ["dtype", '["<U2"]']),
    ],
)
def test_other_public_helpers_reject_wrong_types_clearly(call, patterns):
    with rejects(*patterns):
        call(FixedLengthUTF32(8))


def test_fill_array_accepts_ints_and_numpy_integers():
    dt = FixedLengthUTF32(8)
    assert dt.fill_array(3, "a").shape == (3,)
    assert dt.fill_array((numpy.int32(2), 2)).shape == (2, 2)


@given(st.lists(st.integers(0, 4), max_size=4), st.data())
def test_chunk_indices_match_numpy_ndindex(grid, data):
    chunks = tuple(data.draw(st.integers(1, 3)) for _ in grid)
    shape = tuple(g * c for g, c in zip(grid, chunks))
    meta = ArrayMetadata(3, shape, chunks, FixedLengthUTF32(4))
    assert list(meta.chunk_indices()) == list(numpy.ndindex(*grid))
