"""Whole shards written by fixedutf32.zarr's pipeline itself, read back by stock zarr.

A write that covers a shard whole (edge shards: their part inside the
array) is encoded by the pipeline into one buffer with its index and
stored with one write; shards written in part go to zarr's sharding codec.
Every case is checked against stock zarr-python (fixedutf32.zarr disabled)
element by element, and against what stock zarr stores: the same shard
files, each holding the same inner chunks (fill-value chunks left out
unless ``write_empty_chunks``).
"""

import itertools

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="fixedutf32.zarr needs zarr-python (extra [zarr])")
pytest.importorskip("numcodecs", reason="the inner chunks' compressors come from numcodecs")

from zarr.codecs import (  # noqa: E402
    BytesCodec,
    Crc32cCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

import fixedutf32.zarr as fz  # noqa: E402
from fixedutf32._source import ShardLayout  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::zarr.errors.UnstableSpecificationWarning")

FILL = "·"
TEXT = ["", "a", "hé", "Жи", "漢字", "😀x", "wxyz", "🎉🎉🎉🎉", FILL]
# name: (shape, inner chunks, shards); every shape leaves edge shards (and
# edge inner chunks) cut by the array
LAYOUTS = {
    "1-D": ((90,), (8,), (32,)),
    "2-D": ((13, 17), (2, 3), (4, 6)),
    "3-D": ((5, 6, 7), (2, 2, 3), (4, 4, 6)),
}
# (index location, crc32c after the index): each value of both, twice over
INDEXES = [("end", True), ("start", False)]


def sharded(store, name, *, endian="little", compressed=False, order="C", index=("end", True),
            write_empty_chunks=False, dtype="<U4"):  # fmt: skip
    """A sharded array created by stock zarr, in one of the LAYOUTS."""
    shape, chunks, shards = LAYOUTS[name]
    inner = [BytesCodec(endian=endian)]
    if order == "F":
        inner.insert(0, TransposeCodec(order=tuple(reversed(range(len(shape))))))
    if compressed:
        inner.append(ZstdCodec())
    location, crc = index
    codec = ShardingCodec(
        chunk_shape=chunks,
        codecs=inner,
        index_codecs=[BytesCodec(endian="little"), *([Crc32cCodec()] if crc else [])],
        index_location=location,
    )
    return zarr.create_array(
        store, shape=shape, chunks=shards, dtype=dtype, fill_value=FILL, serializer=codec,
        compressors=None, config={"write_empty_chunks": write_empty_chunks},
    )  # fmt: skip


def sample(shape, seed=0):
    """Text of every width, with inner chunks (and a shard) holding the fill value only."""
    rng = np.random.default_rng(seed)
    data = np.array(TEXT, dtype="<U4")[rng.integers(0, len(TEXT), shape)]
    data[(slice(0, 2),) * len(shape)] = FILL  # an inner chunk of fill values
    data[tuple(slice(-1, None) for _ in shape)] = FILL  # the last shard's corner
    return data


def files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def stored_chunks(path, name, index):
    """shard key -> which of its inner chunks it holds (from its index)."""
    _, chunks, shards = LAYOUTS[name]
    per_shard = tuple(s // c for s, c in zip(shards, chunks))
    layout = ShardLayout(per_shard, "little", index[1], index[0])
    found = {}
    for key, raw in files(path).items():
        if key.startswith("c/"):
            read = layout.read_index(raw, key=key, max_chunk_nbytes=len(raw))
            found[key] = read.present.tolist()
    return found


@pytest.fixture
def encoded(monkeypatch):
    """The shards the pipeline encoded itself, by key (an observer)."""
    # Private on purpose: who encoded a shard shows nowhere in what is stored.
    from fixedutf32.zarr._shard_writing import ShardWrite

    keys = []
    encode = ShardWrite.encoded

    def observed(self, job):
        keys.append(job.key)
        return encode(self, job)

    monkeypatch.setattr(ShardWrite, "encoded", observed)
    return keys


def shard_keys(name, region=None):
    """The keys of the shards a region (default: everything) touches."""
    shape, _, shards = LAYOUTS[name]
    region = region or tuple(slice(0, n) for n in shape)
    ranges = [range(r.start // s, -(-r.stop // s)) for r, s in zip(region, shards)]
    return sorted("c/" + "/".join(map(str, i)) for i in itertools.product(*ranges))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_whole_shards_read_back_as_stock_zarr_writes_them(
    tmp_path, name, compressed, endian, order, encoded
):
    shape = LAYOUTS[name][0]
    data = sample(shape)
    for index in INDEXES:
        for write_empty_chunks in (False, True):
            kwargs = dict(endian=endian, compressed=compressed, order=order, index=index,
                          write_empty_chunks=write_empty_chunks)  # fmt: skip
            where = f"{index}-{write_empty_chunks}"
            sharded(tmp_path / f"stock-{where}", name, **kwargs)[...] = data
            encoded.clear()
            with fz.enabled():  # created here: write_empty_chunks lives in the array object
                ours = sharded(tmp_path / f"ours-{where}", name, **kwargs)
                ours[...] = data
                np.testing.assert_array_equal(ours[...], data, err_msg=where)
            assert sorted(encoded) == shard_keys(name), where  # every shard, by the pipeline
            stock = zarr.open_array(tmp_path / f"ours-{where}", mode="r")
            np.testing.assert_array_equal(stock[...], data, err_msg=where)
            assert stored_chunks(tmp_path / f"ours-{where}", name, index) == stored_chunks(
                tmp_path / f"stock-{where}", name, index
            ), where


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_a_shard_left_empty_is_deleted_and_scalars_fill_whole_shards(tmp_path, name, encoded):
    shape, _, shards = LAYOUTS[name]
    arr = sharded(tmp_path / "a", name)
    arr[...] = sample(shape)
    first = "c/" + "/".join("0" for _ in shape)
    with fz.enabled():
        ours = zarr.open_array(tmp_path / "a", mode="r+")
        ours[tuple(slice(0, s) for s in shards)] = FILL  # the first shard: fill only
        assert first not in files(tmp_path / "a")
        ours[...] = "zz"
        np.testing.assert_array_equal(ours[...], np.full(shape, "zz"))
        ours[...] = FILL
    assert encoded == [first] + shard_keys(name) * 2
    assert [key for key in files(tmp_path / "a") if key.startswith("c/")] == []
    assert zarr.open_array(tmp_path / "a")[...].tolist() == np.full(shape, FILL).tolist()


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_partial_shards_still_go_through_zarr(tmp_path, name, encoded):
    shape, _, shards = LAYOUTS[name]
    expected = sample(shape)
    arr = sharded(tmp_path / "a", name, compressed=True)
    arr[...] = expected
    # one shard whole (the second along the first axis), its neighbours in part
    region = (slice(shards[0] - 1, 2 * shards[0] + 1),) + tuple(slice(0, n) for n in shape[1:])
    value = sample(expected[region].shape, seed=1)
    with fz.enabled():
        zarr.open_array(tmp_path / "a", mode="r+")[region] = value
        expected[region] = value
        inside = (slice(1, 2),) * len(shape)  # a few elements of one shard: zarr's
        zarr.open_array(tmp_path / "a", mode="r+")[inside] = "q"
        expected[inside] = "q"
    whole = (slice(shards[0], 2 * shards[0]),) + region[1:]
    assert sorted(encoded) == shard_keys(name, whole)
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a")[...], expected)
    with fz.enabled():
        np.testing.assert_array_equal(zarr.open_array(tmp_path / "a")[...], expected)


def _fsspec_local(path):
    pytest.importorskip("fsspec", reason="zarr's FsspecStore needs fsspec")
    return zarr.storage.FsspecStore.from_url(f"file://{path}", storage_options={"auto_mkdir": True})


@pytest.mark.parametrize("store", ["local", "fsspec", "zip"])
def test_every_store(tmp_path, store, encoded):
    # LocalStore does its IO synchronously (zarr's set_sync); FsspecStore and
    # ZipStore only through the event loop
    make = {
        "local": lambda: zarr.storage.LocalStore(tmp_path / "a"),
        "fsspec": lambda: _fsspec_local(tmp_path / "a"),
        "zip": lambda: zarr.storage.ZipStore(tmp_path / "a.zip", mode="w"),
    }[store]
    shape = LAYOUTS["2-D"][0]
    data = sample(shape)
    data[:4, :6] = "full"  # nothing to delete: a zip store cannot
    with fz.enabled():
        arr = sharded(make(), "2-D", compressed=True)
        arr[...] = data
        np.testing.assert_array_equal(arr[...], data)
    assert sorted(encoded) == shard_keys("2-D")
    if store == "zip":
        arr.store.close()
        stock = zarr.open_array(zarr.storage.ZipStore(tmp_path / "a.zip", mode="r"), mode="r")
    else:
        stock = zarr.open_array(make(), mode="r")
    np.testing.assert_array_equal(stock[...], data)


BAD = "a\ud800"


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_a_lone_surrogate_leaves_every_shard_as_it_was(tmp_path, name, order, encoded):
    shape, chunks, shards = LAYOUTS[name]
    arr = sharded(tmp_path / "a", name, order=order, endian="big")
    arr[...] = sample(shape)
    before = files(tmp_path / "a")
    everything = tuple(slice(0, n) for n in shape)
    beyond_first = (slice(1, shape[0]),) + everything[1:]  # the first shards in part: zarr's
    last = tuple(n - 3 for n in shape)  # in the last shard, in an edge inner chunk
    in_part = (1,) * len(shape)  # in the first shard, written in part
    for region, bad in ((everything, last), (beyond_first, last), (beyond_first, in_part)):
        key = "c/" + "/".join(str(b // s) for b, s in zip(bad, shards))
        within = tuple(b % s % c for b, s, c in zip(bad, shards, chunks))
        element = int(np.ravel_multi_index(within, chunks, order=order))
        value = sample(shape, seed=2)
        value[bad] = BAD
        value = value[region]
        with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
            zarr.open_array(tmp_path / "a", mode="r+")[region] = value
        err = info.value
        expected = (key, bad, element, 1)
        assert (err.chunk_key, err.array_index, err.index, err.position) == expected, bad
        assert err.code_point == 0xD800
        assert files(tmp_path / "a") == before  # every shard as it was
    assert encoded == []


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_a_value_changed_after_the_check_is_caught_where_it_is_encoded(tmp_path, name, monkeypatch):
    # The elements are checked again as they are copied (swapped: big endian),
    # so that one changed in between (by another thread) cannot get through.
    import fixedutf32.zarr._pipeline as pipeline

    monkeypatch.setattr(pipeline, "check_value", lambda *args: None)
    shape, chunks, shards = LAYOUTS[name]
    arr = sharded(tmp_path / "a", name, endian="big")
    region = tuple(slice(0, s) for s in shards)  # the first shard
    arr[region] = "ok"
    before = files(tmp_path / "a")
    bad = tuple(s - 1 for s in shards)
    value = np.full(shards, "ok", "<U4")
    value[bad] = BAD
    with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
        zarr.open_array(tmp_path / "a", mode="r+")[region] = value
    err = info.value
    element = int(np.ravel_multi_index(tuple(b % c for b, c in zip(bad, chunks)), chunks))
    key = "c/" + "/".join("0" for _ in shape)
    assert (err.chunk_key, err.array_index, err.index, err.position) == (key, bad, element, 1)
    assert files(tmp_path / "a") == before


VIEWS = {  # a value laid out otherwise than in C order, as a function of its C-order copy
    "transposed": lambda a: np.ascontiguousarray(a.T).T,  # F order: checked in one call
    "strided": lambda a: np.repeat(np.repeat(a, 2, axis=0), 3, axis=1)[::2, ::3],  # per shard
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_values_in_any_layout_are_checked_and_written(tmp_path, view, encoded):
    shape = LAYOUTS["2-D"][0]
    arr = sharded(tmp_path / "a", "2-D")
    arr[...] = "ok"
    before = files(tmp_path / "a")
    value = sample(shape, seed=3)
    value[12, 16] = BAD
    with fz.enabled(), pytest.raises(fz.InvalidChunkCodePointError) as info:
        zarr.open_array(tmp_path / "a", mode="r+")[...] = VIEWS[view](value)
    assert (info.value.chunk_key, info.value.array_index) == ("c/3/2", (12, 16))
    assert files(tmp_path / "a") == before
    value[12, 16] = "yo"
    with fz.enabled():
        zarr.open_array(tmp_path / "a", mode="r+")[...] = VIEWS[view](value)
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "a")[...], value)
    assert sorted(encoded) == shard_keys("2-D")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("dtype", ["<U4", ">U4"])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_whole_shards_keep_the_values_byte_order_apart_from_the_stored_one(
    tmp_path, name, dtype, compressed, endian, order, encoded
):
    # The array's data type decides the byte order of the value zarr hands
    # over (">U4" stays big-endian in memory); the bytes codec decides the
    # stored one. Every pairing, from arrays of both orders, lists and scalars.
    shape = LAYOUTS[name][0]
    data = sample(shape)
    kwargs = dict(endian=endian, compressed=compressed, order=order, dtype=dtype)
    values = {
        "same order": data.astype(dtype),
        "other order": data.astype(dtype.replace("<", "=").replace(">", "<").replace("=", ">")),
        "list": data.tolist(),
    }
    for how, value in values.items():
        encoded.clear()
        with fz.enabled():
            ours = sharded(tmp_path / how, name, **kwargs)
            ours[...] = value
            np.testing.assert_array_equal(ours[...], data, err_msg=how)
        # a value of the other byte order is zarr's to merge (it is not cast)
        assert sorted(encoded) == (shard_keys(name) if how != "other order" else []), how
        np.testing.assert_array_equal(zarr.open_array(tmp_path / how)[...], data, err_msg=how)
    with fz.enabled():
        ours = sharded(tmp_path / "scalar", name, **kwargs)
        ours[...] = "\u0100\u1000😀"
    expected = np.full(shape, "\u0100\u1000😀")
    np.testing.assert_array_equal(zarr.open_array(tmp_path / "scalar")[...], expected)
