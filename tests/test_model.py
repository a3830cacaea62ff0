"""The array model's one parser: V2 and V3 JSON, and what it declines."""

from __future__ import annotations

import pytest

pytest.importorskip("numcodecs", reason="codec specs need numcodecs (extra [zarr])")

from fixedutf32.errors import MetadataError
from fixedutf32.metadata._model import ArrayModel, Declined, parse_model

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
DT = {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}}


def v3(*codecs: object) -> ArrayModel | Declined:
    return parse_model({"zarr_format": 3, "data_type": DT, "codecs": list(codecs)})


def shard(inner: list[object], index: list[object], location: str | None = "end") -> object:
    config = {"chunk_shape": [2, 2], "codecs": inner, "index_codecs": index}
    if location is not None:
        config["index_location"] = location
    return {"name": "sharding_indexed", "configuration": config}


@pytest.mark.parametrize("bytes_codec, endian", [(LE, "little"), (BE, "big")])
def test_v3_byte_orders(bytes_codec, endian):
    model = v3(bytes_codec)
    assert model == ArrayModel(3, 8, endian, "C", ())


@pytest.mark.parametrize(
    "order, expected",
    [([0, 1], "C"), ([1, 0], "F"), ((1, 0), "F")],  # zarr's to_dict gives tuples
)
def test_v3_transpose(order, expected):
    model = v3({"name": "transpose", "configuration": {"order": order}}, LE)
    assert isinstance(model, ArrayModel) and model.order == expected


def test_v3_transposes_compose():
    t = {"name": "transpose", "configuration": {"order": [1, 0]}}
    assert v3(t, t, LE).order == "C"  # type: ignore[union-attr]


def test_v3_compressors_in_order():
    model = v3(BE, {"name": "crc32c"}, {"name": "zstd", "configuration": {"level": 3}})
    assert isinstance(model, ArrayModel)
    assert [s.id for s in model.specs or ()] == ["crc32c", "zstd"]
    assert model.specs[1].config == {"level": 3, "checksum": False}  # type: ignore[index]


def test_v3_codec_not_run_here_is_unrunnable_not_declined():
    model = v3(LE, {"name": "bogus"})
    assert isinstance(model, ArrayModel) and model.specs is None
    assert "codecs[1]" in (model.unrunnable or "") and "'bogus'" in (model.unrunnable or "")
    with pytest.raises(MetadataError, match="bogus"):
        model.runnable()


@pytest.mark.parametrize("location", ["end", "start", None])
@pytest.mark.parametrize("crc", [False, True])
@pytest.mark.parametrize("index_endian", ["little", "big"])
def test_v3_sharding(location, crc, index_endian):
    index = [{"name": "bytes", "configuration": {"endian": index_endian}}]
    index += [{"name": "crc32c"}] if crc else []
    model = v3(shard([BE, {"name": "gzip"}], index, location), {"name": "zstd"})
    assert isinstance(model, ArrayModel) and model.shard is not None
    s = model.shard
    assert (s.chunk_shape, s.index_endian, s.index_checksum) == ((2, 2), index_endian, crc)
    assert s.index_location == (location or "end")
    assert s.inner.endian == "big" and [c.id for c in s.inner.specs or ()] == ["gzip"]
    assert [c.id for c in model.specs or ()] == ["zstd"]  # applied to whole shards
    assert s.chunks_per_shard((4, 5)) == (2, 3)


def test_v3_shard_index_without_endian_is_little():
    model = v3(shard([LE], [{"name": "bytes"}]))
    assert model.shard.index_endian == "little"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "codecs, reason",
    [
        ([{"name": "bytes"}], "a bytes codec without endian"),
        ([{"name": "vlen-utf8"}], "the array-to-bytes codec vlen-utf8"),
        ([{"name": "numcodecs.delta"}, LE], "array-to-array codecs ['numcodecs.delta']"),
        (
            [{"name": "transpose", "configuration": {"order": [1, 2, 0]}}, LE],
            "a transpose of order [1, 2, 0]",
        ),
        ([shard([shard([LE], [LE])], [LE])], "shards of shards"),
        ([shard([LE], [LE, {"name": "gzip"}])], "a shard index stored other than as bytes"),
        ([shard([LE], [BE], "middle")], "a shard index at 'middle'"),
        ([shard([{"name": "bytes"}], [LE])], "a bytes codec without endian"),
        (
            [{"name": "transpose", "configuration": {"order": [0, 1]}}, shard([LE], [LE])],
            "codecs around the sharding codec",
        ),
    ],
)
def test_v3_declined_with_the_reason(codecs, reason):
    model = v3(*codecs)
    assert isinstance(model, Declined) and reason in model.reason
    assert model.sharded == any(c.get("name") == "sharding_indexed" for c in codecs)


@pytest.mark.parametrize("dtype, endian", [("<U2", "little"), (">U2", "big")])
@pytest.mark.parametrize("order", ["C", "F"])
def test_v2(dtype, endian, order):
    doc = {"zarr_format": 2, "dtype": dtype, "order": order, "compressor": None, "filters": None}
    assert parse_model(doc) == ArrayModel(2, 8, endian, order, ())


def test_v2_filters_then_compressor():
    doc = {
        "zarr_format": 2,
        "dtype": "<U1",
        "order": "C",
        "compressor": {"id": "zstd", "level": 1},
        "filters": [{"id": "crc32c"}],
    }
    model = parse_model(doc)
    assert isinstance(model, ArrayModel) and model.filters == 1
    assert [s.id for s in model.specs or ()] == ["crc32c", "zstd"]


def test_v2_codec_chain_alone_leaves_the_element_layout_open():
    model = parse_model({"zarr_format": 2, "compressor": {"id": "gzip"}})
    assert isinstance(model, ArrayModel)
    assert (model.length_bytes, model.endian, model.order) == (None, None, None)


def test_v2_bad_compressor_is_unrunnable():
    model = parse_model({"zarr_format": 2, "compressor": "zstd"})
    assert isinstance(model, ArrayModel) and model.specs is None
    assert "compressor" in (model.unrunnable or "")
