"""fixedutf32.zarr beside zarr-python's own pipelines, on every supported zarr.

``enable()`` replaces whatever pipeline was configured (zarr's
``BatchedCodecPipeline``, ``FusedCodecPipeline`` from zarr 3.4, zarrs-python's
``ZarrsCodecPipeline``) and keeps it as the fallback: arrays of other data
types must behave exactly as under it, and ``disable()`` must put it back.
The newer pipeline contract (zarr 3.2+: ``read()`` results that drive
``array.read_missing_chunks``; zarr 3.3+: ``is_fixed_size`` and sync
capability of codecs) is checked against stock zarr on the same stores.
"""

import importlib.util
import json

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")
pytest.importorskip("numcodecs", reason="zarr V2 compressors come from numcodecs")

from zarr.codecs import BytesCodec, Crc32cCodec, ZstdCodec  # noqa: E402

import fixedutf32.zarr as fz  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

BATCHED = "zarr.core.codec_pipeline.BatchedCodecPipeline"
FUSED = "zarr.core.codec_pipeline.FusedCodecPipeline"
ZARRS = "zarrs.ZarrsCodecPipeline"


def _pipeline_param(path):
    module, _, name = path.rpartition(".")
    marks = []
    if importlib.util.find_spec(module.split(".")[0]) is None:
        marks.append(pytest.mark.skip(reason=f"{module.split('.')[0]} is not installed"))
    elif not hasattr(importlib.import_module(module), name):
        marks.append(pytest.mark.skip(reason=f"this zarr-python has no {name} (zarr >= 3.4)"))
    return pytest.param(path, id=name, marks=marks)


PIPELINES = [_pipeline_param(p) for p in (BATCHED, FUSED, ZARRS)]


def other_arrays(root):
    """Arrays of other data types, written by whatever pipeline is configured."""
    data = np.arange(60, dtype="i4").reshape(6, 10)
    arrays = {
        "i4": dict(dtype="i4"),
        "f8-big": dict(dtype="f8", serializer=BytesCodec(endian="big")),
        "u2-zstd": dict(dtype="u2", compressors=[ZstdCodec(level=1)]),
        "i4-sharded": dict(dtype="i4", shards=(6, 6), compressors=None),
        "v2-i8": dict(dtype="<i8", zarr_format=2),
    }
    for name, kwargs in arrays.items():
        arr = zarr.create_array(root / name, shape=(6, 10), chunks=(3, 3), fill_value=0, **kwargs)
        arr[:5, :8] = data[:5, :8]
    return sorted(arrays)


def files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_fallback_setting_when_nothing_chose_a_pipeline():
    with fz.enabled():
        assert zarr.config.get(fz.FALLBACK_KEY) == BATCHED
        arr = zarr.create_array({}, shape=(2,), dtype="i4")
        assert type(arr._async_array.codec_pipeline.fallback).__name__ == "BatchedCodecPipeline"


@pytest.mark.parametrize("path", PIPELINES)
def test_enable_keeps_the_chosen_pipeline_for_other_data_types(tmp_path, path):
    pipeline_name = path.rpartition(".")[2]
    with zarr.config.set({"codec_pipeline.path": path}):
        names = other_arrays(tmp_path / "stock")
        stock = {n: zarr.open_array(tmp_path / "stock" / n)[:] for n in names}
        assert {
            type(zarr.open_array(tmp_path / "stock" / n)._async_array.codec_pipeline).__name__
            for n in names
        } == {pipeline_name}

        def synchronous(pipeline):
            return getattr(pipeline, "sync_transform", None) is not None

        stock_synchronous = {
            n: synchronous(zarr.open_array(tmp_path / "stock" / n)._async_array.codec_pipeline)
            for n in names
        }
        fz.enable()
        try:
            assert zarr.config.get("codec_pipeline.path") == "fixedutf32.zarr.CodecPipeline"
            assert zarr.config.get(fz.FALLBACK_KEY) == path
            other_arrays(tmp_path / "ours")
            for name in names:
                arr = zarr.open_array(tmp_path / "stock" / name)
                pipeline = arr._async_array.codec_pipeline
                assert type(pipeline) is fz.CodecPipeline
                assert type(pipeline.fallback).__name__ == pipeline_name, name
                # built as zarr builds it (FusedCodecPipeline: with its sync transform)
                assert synchronous(pipeline.fallback) == stock_synchronous[name]
                np.testing.assert_array_equal(arr[:], stock[name], err_msg=name)
                np.testing.assert_array_equal(arr[1:4, 2:9], stock[name][1:4, 2:9])
                assert (
                    arr.oindex[[0, 5], [1, 9]].tolist() == stock[name][[0, 5]][:, [1, 9]].tolist()
                )
            # written byte for byte as the chosen pipeline writes them
            assert files(tmp_path / "ours") == files(tmp_path / "stock")
        finally:
            fz.disable()
        assert zarr.config.get("codec_pipeline.path") == path
        assert zarr.config.get(fz.FALLBACK_KEY, None) is None


@pytest.mark.parametrize("path", PIPELINES)
def test_strings_stay_checked_whatever_the_fallback(tmp_path, path):
    """Sharded and other declined string arrays never reach an unchecking pipeline.

    zarr 3.4's FusedCodecPipeline reads whole uncompressed shards without
    calling any codec; with the integration on, string arrays never go there.
    """
    store = tmp_path / "s"
    arr = zarr.create_array(
        store, shape=(8,), chunks=(2,), shards=(4,), dtype="<U2", compressors=None,
        serializer=BytesCodec(endian="little"), fill_value="",
    )  # fmt: skip
    arr[:] = np.array(list("abcdefgh"))
    shard = store / "c" / "1"
    raw = bytearray(shard.read_bytes())
    raw[8:12] = (0xD800).to_bytes(4, "little")  # element 5, position 0
    shard.write_bytes(bytes(raw))
    with (
        zarr.config.set({"codec_pipeline.path": path}),
        fz.enabled(),
        pytest.raises(fz.InvalidChunkCodePointError) as info,
    ):
        zarr.open_array(store)[:]
    assert info.value.chunk_key == "c/1"
    assert info.value.array_index == (5,)


def test_a_fallback_that_is_no_pipeline_is_refused():
    with (
        zarr.config.set(
            {fz.FALLBACK_KEY: "numpy.ndarray", "codec_pipeline.path": fz.PIPELINE_PATH}
        ),
        pytest.raises(ValueError, match=r"expected the path of a zarr codec pipeline class"),
    ):
        zarr.create_array({}, shape=(2,), dtype="i4")
    with (
        zarr.config.set(
            {fz.FALLBACK_KEY: fz.PIPELINE_PATH, "codec_pipeline.path": fz.PIPELINE_PATH}
        ),
        pytest.raises(ValueError, match=r"expected a pipeline other than fixedutf32"),
    ):
        zarr.create_array({}, shape=(2,), dtype="i4")


def test_fallback_from_the_environment(tmp_path):
    import subprocess
    import sys

    code = """
import zarr
arr = zarr.create_array({}, shape=(2,), dtype="i4")
print(type(arr._async_array.codec_pipeline.fallback).__name__)
"""
    env = {
        "ZARR_CODEC_PIPELINE__PATH": fz.PIPELINE_PATH,
        "ZARR_FIXEDUTF32__FALLBACK_PIPELINE": "tests_fallback_pipeline.CountingPipeline",
        "PYTHONPATH": str(tmp_path),
    }
    (tmp_path / "tests_fallback_pipeline.py").write_text(
        "from zarr.core.codec_pipeline import BatchedCodecPipeline\n"
        "class CountingPipeline(BatchedCodecPipeline):\n    pass\n"
    )
    import os

    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["CountingPipeline"]


# ---------------------------------------------------------------------------
# The pipeline contract of zarr 3.2+ and the codec's declarations (3.3+)

needs_read_missing_chunks = pytest.mark.skipif(
    "read_missing_chunks" not in zarr.config.get("array"),
    reason="array.read_missing_chunks is new in zarr 3.2",
)

STRING_LAYOUTS = {
    "v3-raw": dict(serializer=BytesCodec(endian="big"), compressors=None),
    "v3-zstd": dict(compressors=[ZstdCodec(level=1)]),
    "v3-sharded": dict(shards=(4, 4), compressors=None),
    "v2": dict(zarr_format=2, compressors=None),
}


def _outcome(read):
    try:
        return ("ok", read().tolist())
    except Exception as exc:  # noqa: BLE001 - the outcome is compared, whatever it is
        return (type(exc).__name__, str(exc))


@needs_read_missing_chunks
@pytest.mark.parametrize("layout", sorted(STRING_LAYOUTS))
def test_read_missing_chunks_false_raises_as_stock(tmp_path, layout):
    store = tmp_path / layout
    arr = zarr.create_array(
        store, shape=(8, 8), chunks=(2, 2), dtype="<U3", fill_value="-", **STRING_LAYOUTS[layout]
    )
    arr[:4, :4] = "ab"
    selections = {
        "all": np.s_[:],
        "stored part": np.s_[:4, :4],
        "one missing": np.s_[6, 6],
        "mixed": np.s_[2:6, 3],
    }
    for setting in (False, True):
        with zarr.config.set({"array.read_missing_chunks": setting}):
            for name, selection in selections.items():
                stock = _outcome(lambda: zarr.open_array(store)[selection])
                with fz.enabled():
                    ours = _outcome(lambda: zarr.open_array(store)[selection])
                assert ours == stock, (setting, name)
                assert (stock[0] == "ChunkNotFoundError") == (not setting and name != "stored part")


@needs_read_missing_chunks
def test_read_results_say_which_chunks_are_missing(tmp_path):
    import asyncio

    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    arr = zarr.create_array(tmp_path / "a", shape=(6,), chunks=(2,), dtype="<U2", fill_value="")
    arr[2:4] = ["x", "y"]
    with fz.enabled():
        a = zarr.open_array(tmp_path / "a")._async_array
    prototype = default_buffer_prototype()
    spec = ArraySpec((2,), a.metadata.dtype, "", ArrayConfig.from_dict({}), prototype)
    out = prototype.nd_buffer.empty(shape=(6,), dtype=np.dtype("<U2"))
    batch = [
        (a.store_path / f"c/{i}", spec, (slice(0, 2),), (slice(2 * i, 2 * i + 2),), True)
        for i in range(3)
    ]
    results = asyncio.run(a.codec_pipeline.read(batch, out))
    assert [r["status"] for r in results] == ["missing", "present", "missing"]
    assert out.as_numpy_array().tolist() == ["", "", "x", "y", "", ""]


def test_codec_declares_what_zarr_asks(tmp_path):
    assert fz.BytesCodec.is_fixed_size is True
    assert fz.BytesCodec(endian="big").is_fixed_size is True
    try:
        from zarr.abc.codec import SupportsSyncCodec
    except ImportError:
        pass  # zarr < 3.3 calls _decode_sync where it finds it
    else:
        assert isinstance(fz.BytesCodec(endian="little"), SupportsSyncCodec)
        assert getattr(fz.BytesCodec(endian="little"), "_sync_capable", True)
    # as a shard index codec (zarr 3.4.1 refuses codecs of variable size there)
    with zarr.config.set({"codecs.bytes": fz.BYTES_CODEC_PATH}):
        arr = zarr.create_array(
            tmp_path / "a", shape=(8,), chunks=(2,), shards=(4,), dtype="i4", compressors=None,
            serializer=zarr.codecs.ShardingCodec(
                chunk_shape=(2,), codecs=[fz.BytesCodec(endian="little")],
                index_codecs=[fz.BytesCodec(endian="little"), Crc32cCodec()],
            ),
        )  # fmt: skip
        arr[:] = np.arange(8)
        assert zarr.open_array(tmp_path / "a")[:].tolist() == list(range(8))
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["codecs"][0]["configuration"]["index_codecs"][0]["name"] == "bytes"
