"""Fuzz targets: each takes the fuzzer's bytes and raises on a finding.

A finding is an exception that escapes a target (an ``AssertionError`` for a
wrong result, or any exception type the function does not document) or a
crash of the process. Differential targets compare every result with a plain
NumPy/Python reference; hostile targets pass arguments of every wrong kind and
accept only a correct result or an exception of the documented types.

Add a target: write ``def my_target(data): ...`` here and list it in
``TARGETS``; ``fuzz/seeds/<name>/`` may hold starting inputs.
"""

import contextlib
import json
import struct
import sys

import numpy as np
from draw import Draw, is_scalar, strings_to_units, units_to_bytes

import fixedutf32
from fixedutf32 import (
    ChunkSizeError,
    InvalidCodePointError,
    InvalidUTF8Error,
    MetadataError,
    StringTooLongError,
)

ENDIANS = ("little", "big")
NATIVE = sys.byteorder
VERBOSE = False  # set by run.py --reproduce: show each hostile call before it is made


def expect(errors, call):
    """Run ``call``; with errors expected, it must raise one of them."""
    if not errors:
        return call()
    try:
        result = call()
    except tuple(errors):
        return None
    raise AssertionError(
        f"expected one of {[e.__name__ for e in errors]}, got the result {result!r:.200}"
    )


def random_units(d, max_count=8, max_cap=8):
    """A chunk as an (n, cap) array of code units, sometimes with bad units."""
    cap = d.int(1, max_cap)
    n = d.int(0, max_count)
    units = strings_to_units([d.text(cap) for _ in range(n)], cap)
    for _ in range(d.int(0, 2) if d.bool(0.3) else 0):
        if n:
            units[d.int(0, n - 1), d.int(0, cap - 1)] = d.unit()
    return units


def random_chunk(d):
    """(units, endian, chunk bytes) of a random chunk."""
    units = random_units(d)
    endian = d.choice(ENDIANS)
    return units, endian, units_to_bytes(units, endian)


def as_buffer(d, chunk):
    """The chunk's bytes in one of the containers the functions accept."""
    kind = d.int(0, 4)
    if kind == 0:
        return chunk
    if kind == 1:
        return bytearray(chunk)
    if kind == 2:
        return memoryview(chunk)
    if kind == 3:
        return np.frombuffer(chunk, np.uint8)
    return np.frombuffer(chunk, np.uint32) if len(chunk) % 4 == 0 else chunk


def first_bad(units):
    """(element, position, unit) of the first non-scalar unit, or None."""
    flat = units.ravel()
    for i, u in enumerate(flat):
        if not is_scalar(int(u)):
            return i // units.shape[1], i % units.shape[1], int(u)
    return None


def native_units(array):
    """The code units of a U array in its element order, as native uint32."""
    flat = np.ascontiguousarray(array.reshape(-1))
    return flat.astype(f"={flat.dtype.char}{flat.dtype.itemsize // 4}").view(np.uint32)


# --- differential targets -------------------------------------------------------------------


def decode(data):
    """decode_chunk (and validate) against numpy.frombuffer."""
    d = Draw(data)
    units, endian, chunk = random_chunk(d)
    n, cap = units.shape
    validate = d.bool()
    shape, order = None, d.choice("CF")
    if d.bool() and n:
        rows = d.choice([r for r in range(1, n + 1) if n % r == 0])
        shape = (rows, n // rows)
    out_kind = d.int(0, 2) if d.bool(0.4) else None
    src = as_buffer(d, chunk)
    out = None
    if out_kind == 1:
        out = bytearray(len(chunk))
    elif out_kind == 2:
        src = out = bytearray(chunk)  # in place
    before = bytes(out) if out is not None else None
    bad = first_bad(units)
    if bad is not None and validate:
        try:
            fixedutf32.decode_chunk(
                src, 4 * cap, endian=endian, shape=shape, order=order, validate=True, out=out
            )
        except InvalidCodePointError as exc:
            assert (exc.index, exc.position, exc.code_point) == bad, (str(exc), bad)
            assert out is None or bytes(out) == before, "out changed on error"
            assert bytes(memoryview(src).cast("B")) == chunk, "data changed on error"
        else:
            raise AssertionError(f"decode_chunk accepted the bad unit {bad}")
        expect([InvalidCodePointError], lambda: fixedutf32.validate(chunk, 4 * cap, endian=endian))
        return
    result = fixedutf32.decode_chunk(
        src, 4 * cap, endian=endian, shape=shape, order=order, validate=validate, out=out
    )
    assert result.dtype == np.dtype(f"=U{cap}"), result.dtype
    assert result.shape == (shape or (n,)), result.shape
    got = np.ascontiguousarray(result.ravel(order=order)).view(np.uint32).reshape(n, cap)
    assert np.array_equal(got, units), "decoded units differ"
    if bad is None:
        fixedutf32.validate(chunk, 4 * cap, endian=endian)


def encode(data):
    """encode_chunk against Python's per-string encoding."""
    d = Draw(data)
    n = d.int(0, 8)
    strings = [d.text(6, surrogates=d.bool(0.1)).rstrip("\x00") for _ in range(n)]
    width = max([len(s) for s in strings] + [0]) + d.int(0, 2)
    kind = d.int(0, 4)
    byte_order = d.choice("<>")
    base = np.array(strings, dtype=f"{byte_order}U{max(width, 1)}")
    if kind == 1 and n:
        rows = d.choice([r for r in range(1, n + 1) if n % r == 0])
        base = base.reshape(rows, n // rows)
        if d.bool():
            base = np.asfortranarray(base)
    elif kind == 2:
        wide = np.empty(2 * n, dtype=base.dtype)
        wide[::2] = base
        base = wide[::2]  # not contiguous
    elif kind == 3:
        base = np.array(strings, dtype=object) if n else base
    elif kind == 4:
        base = list(strings)
    cap = d.int(1, width + 2) if d.bool(0.6) else None
    endian, order, validate = d.choice(ENDIANS), d.choice("CF"), d.bool(0.8)
    arr = np.asarray(base, dtype=f"U{max(width, 1)}")
    flat = [str(s) for s in arr.ravel(order=order)]
    # the default width is the array's: a list or object array gets NumPy's
    natural = max(width, 1) if kind < 3 or not n else max([len(s) for s in strings] + [1])
    effective = cap if cap is not None else natural
    use_out = d.bool(0.3)
    out = bytearray(len(flat) * 4 * effective) if use_out else None
    errors = []
    if any(len(s) > effective for s in flat):
        errors.append(StringTooLongError)
    if validate and any(0xD800 <= ord(c) <= 0xDFFF for s in flat for c in s):
        errors.append(InvalidCodePointError)
    call = lambda: fixedutf32.encode_chunk(  # noqa: E731
        base,
        None if cap is None else 4 * cap,
        endian=endian,
        order=order,
        validate=validate,
        out=out,
    )
    if errors:
        expect(errors, call)
        assert out is None or not any(out), "out changed on error"
        return
    result = call()
    expected = units_to_bytes(strings_to_units(flat, effective), endian)
    assert bytes(result) == expected, (bytes(result)[:64], expected[:64])


def repad(data):
    """repad against re-padding the code units."""
    d = Draw(data)
    units, endian, chunk = random_chunk(d)
    n, cap = units.shape
    to_cap, validate = d.int(1, 10), d.bool(0.8)
    kept = units[:, : min(cap, to_cap)]
    errors = []
    if to_cap < cap and units[:, to_cap:].any():
        errors.append(StringTooLongError)
    if validate and first_bad(kept) is not None:
        errors.append(InvalidCodePointError)
    out = bytearray(n * 4 * to_cap) if d.bool(0.3) else None
    call = lambda: fixedutf32.repad(  # noqa: E731
        as_buffer(d, chunk), 4 * cap, 4 * to_cap, endian=endian, out=out, validate=validate
    )
    if errors:
        expect(errors, call)
        assert out is None or not any(out), "out changed on error"
        return
    expected = np.zeros((n, to_cap), np.uint32)
    expected[:, : kept.shape[1]] = kept
    assert bytes(memoryview(call()).cast("B")) == units_to_bytes(expected, endian)


def str_lengths(data):
    """str_lengths against the index of the last non-zero unit."""
    d = Draw(data)
    units, endian, chunk = random_chunk(d)
    _, cap = units.shape
    validate = d.bool(0.8)
    call = lambda: fixedutf32.str_lengths(  # noqa: E731
        as_buffer(d, chunk), 4 * cap, endian=endian, validate=validate
    )
    if validate and first_bad(units) is not None:
        expect([InvalidCodePointError], call)
        return
    expected = [max([i + 1 for i in range(cap) if row[i]] + [0]) for row in units]
    assert call().tolist() == expected


def _utf8_strings(units):
    return ["".join(map(chr, row)).rstrip("\x00").encode("utf-8") for row in units]


def utf8(data):
    """to_utf8/from_utf8 against str.encode/bytes.decode('utf-8')."""
    d = Draw(data)
    if d.bool():
        units, endian, chunk = random_chunk(d)
        n, cap = units.shape
        call = lambda: fixedutf32.to_utf8(chunk, 4 * cap, endian=endian)  # noqa: E731
        if first_bad(units) is not None:
            expect([InvalidCodePointError], call)
            return
        offsets, values = call()
        pieces = _utf8_strings(units)
        assert offsets.tolist() == np.cumsum([0] + [len(p) for p in pieces]).tolist()
        assert values.tobytes() == b"".join(pieces)
        return
    n = d.int(0, 6)
    pieces = [d.text(6).encode("utf-8") for _ in range(n)]
    values = bytearray(b"".join(pieces))
    for _ in range(d.int(0, 2) if d.bool(0.4) and values else 0):
        values[d.int(0, len(values) - 1)] = d.int(0, 255)
    start = d.int(0, 3)
    values = bytes(d.bytes(start).ljust(start, b"x")) + bytes(values)
    offsets = np.cumsum([start] + [len(p) for p in pieces]).astype(d.choice(["i8", "u4", "i4"]))
    cap, endian = d.int(1, 7), d.choice(ENDIANS)
    call = lambda: fixedutf32.from_utf8(offsets, values, 4 * cap, endian=endian)  # noqa: E731
    _check_from_utf8(call, [values[offsets[i] : offsets[i + 1]] for i in range(n)], cap, endian)


def _check_from_utf8(call, pieces, cap, endian):
    strings, errors = [], set()
    for piece in pieces:
        try:
            s = bytes(piece).decode("utf-8")
        except UnicodeDecodeError:
            errors.add(InvalidUTF8Error)
            continue
        if len(s.rstrip("\x00")) > cap:
            errors.add(StringTooLongError)
        strings.append(s[:cap])
    if errors:
        # which bad string is reported first is the function's choice
        expect(errors, call)
        return
    result = call()
    assert result.dtype == np.dtype(f"{'<' if endian == 'little' else '>'}U{cap}"), result.dtype
    expected = units_to_bytes(strings_to_units(strings, cap), endian)
    assert result.tobytes() == expected


def vlen(data):
    """encode_vlen_utf8/decode_vlen_utf8 against numcodecs' layout, written out by hand."""
    d = Draw(data)
    units, endian, chunk = random_chunk(d)
    n, cap = units.shape
    pieces = None if first_bad(units) is not None else _utf8_strings(units)
    call = lambda: fixedutf32.encode_vlen_utf8(chunk, 4 * cap, endian=endian)  # noqa: E731
    if pieces is None:
        expect([InvalidCodePointError], call)
        pieces = [d.text(4).encode("utf-8") for _ in range(n)]
    else:
        expected = struct.pack("<I", n) + b"".join(struct.pack("<I", len(p)) + p for p in pieces)
        assert call().tobytes() == expected
    encoded = bytearray(
        struct.pack("<I", n) + b"".join(struct.pack("<I", len(p)) + p for p in pieces)
    )
    for _ in range(d.int(0, 3) if d.bool(0.5) else 0):
        action = d.int(0, 2)
        if action == 0 and encoded:
            encoded[d.int(0, len(encoded) - 1)] = d.int(0, 255)
        elif action == 1:
            del encoded[d.int(0, len(encoded)) :]
        else:
            encoded += d.bytes(d.int(1, 4))
    to_cap = d.int(1, 8)
    call = lambda: fixedutf32.decode_vlen_utf8(  # noqa: E731
        bytes(encoded),
        4 * to_cap,
        endian=endian,
    )
    items, structure_ok, pos = [], len(encoded) >= 4, 4
    if structure_ok:
        count = struct.unpack_from("<I", encoded)[0]
        for _ in range(count):
            if pos + 4 > len(encoded):
                structure_ok = False
                break
            size = struct.unpack_from("<I", encoded, pos)[0]
            if pos + 4 + size > len(encoded):
                structure_ok = False
                break
            items.append(encoded[pos + 4 : pos + 4 + size])
            pos += 4 + size
        structure_ok = structure_ok and pos == len(encoded)
    if not structure_ok:
        # a broken table may be found before or after a bad string in it
        expect([ChunkSizeError, InvalidUTF8Error, StringTooLongError], call)
        return
    _check_from_utf8(call, items, to_cap, endian)


# --- hostile arguments ----------------------------------------------------------------------

_BIG = [2**31 - 4, 2**31, 2**32, 2**33, 2**62, 2**63, 2**64, 2**64 + 4, 2**65, -(2**63), 2**1000]
_WIDTHS = [
    4,
    8,
    12,
    0,
    1,
    3,
    5,
    -4,
    4.0,
    "4",
    None,
    True,
    False,
    np.int64(8),
    np.uint64(2**63),
    np.int8(-4),
    np.float32(4),
    b"4",
] + _BIG
_ENDIAN_ARGS = ["little", "big", "native", None, b"little", 5, ["little"], "LITTLE"]
_ORDER_ARGS = ["C", "F", "A", None, 5, b"C"]
_SHAPE_ARGS = [
    None,
    2,
    (2,),
    (1, 2),
    (True, 2),
    (-1,),
    (2**63,),
    (2**64,),
    "ab",
    (1.5,),
    (),
    [2],
    np.array([2]),
]
_VALIDATE_ARGS = [True, False, "no", None, 0, 1, np.bool_(False)]


def _string_dtype_array(values):
    try:
        return np.array(values, dtype=np.dtypes.StringDType())
    except AttributeError:  # NumPy 1.x
        return np.array(values, dtype=object)


def _hostile_buffer(d, size):
    """Something passed where a chunk's bytes go: mostly wrong in some way."""
    raw = d.bytes(size).ljust(size, b"\0")
    options = [
        lambda: raw,
        lambda: bytearray(raw),
        lambda: memoryview(bytearray(raw))[::2],
        lambda: np.frombuffer(raw, np.uint8),
        lambda: np.frombuffer(raw[: size // 4 * 4], "<u4"),
        lambda: np.frombuffer(raw[: size // 4 * 4], ">u4").copy(),
        lambda: np.array(["ab", "c"], dtype=d.choice(["<U2", ">U2", "=U1"])),
        lambda: np.array([object(), "x"], dtype=object),
        lambda: np.array(["x", "yz"], dtype=object),
        lambda: _string_dtype_array(["x", "yz"]),
        lambda: np.zeros((2, 4), np.uint32)[:, ::2],
        lambda: np.zeros(4, np.float64),
        lambda: np.zeros(2, [("a", "<u4"), ("b", "O")]),
        lambda: np.zeros((), np.uint32),
        lambda: np.zeros(8, np.bool_),
        lambda: np.zeros(2, "S4"),
        lambda: None,
        lambda: "abcd",
        lambda: 5,
        lambda: ["a", "b"],
    ]
    return d.choice(options)()


def _hostile_out(d, data, size):
    try:
        return _hostile_out_options(d, data, size)
    except (TypeError, ValueError, BufferError):
        return None  # data cannot be viewed that way: no out


def _hostile_out_options(d, data, size):
    options = [
        lambda: None,
        lambda: bytearray(size),
        lambda: bytearray(size + 4),
        lambda: bytearray(max(size - 4, 0)),
        lambda: data,
        lambda: bytes(size),
        lambda: np.empty(max(size // 8, 1), dtype=object),
        lambda: _string_dtype_array([""] * max(size // 8, 1)),
        lambda: np.zeros(max(size // 4, 1), dtype=d.choice(["<U1", ">U1"])),
        lambda: memoryview(bytearray(2 * size))[::2],
        lambda: (
            np.frombuffer(data, np.uint8)[1:]
            if isinstance(data, (bytearray, np.ndarray)) and np.asarray(data).flags.writeable
            else bytearray(size)
        ),
    ]
    return d.choice(options)()


def _width(d):
    return d.choice(_WIDTHS)


def _is_huge(value):
    try:
        return abs(int(value)) > 4096
    except (TypeError, ValueError, OverflowError):
        return False


def _describe(value):
    """How a reproduced call's argument is shown: arrays with their dtype and flags."""
    if isinstance(value, np.ndarray):
        return (
            f"<ndarray {value.dtype.str if value.dtype.kind != 'T' else value.dtype} "
            f"shape={value.shape} contiguous={value.flags.c_contiguous} "
            f"writeable={value.flags.writeable} {value.tolist()!r:.60}>"
        )
    if isinstance(value, memoryview):
        return f"<memoryview {value.format} shape={value.shape} strides={value.strides}>"
    return f"{value!r:.80}"


def _holds_references(value):
    return isinstance(value, np.ndarray) and (value.dtype.hasobject or value.dtype.kind == "T")


def _snapshot(value):
    try:
        return bytes(memoryview(value).cast("B")) if not _holds_references(value) else None
    except (TypeError, ValueError, BufferError):
        return None


def hostile(data):
    """Every public function with arguments of every wrong kind.

    Acceptable: a result, or ValueError (FixedUTF32Error included), TypeError
    or BufferError that leaves the caller's buffers as they were. A finding:
    any other exception, a crash, a buffer holding references (object or
    StringDType array) taken as bytes, a ``U`` array ``out`` filled in the
    other byte order, or a buffer changed by a call that failed.
    """
    d = Draw(data)
    name = d.choice(
        [
            "decode_chunk",
            "validate",
            "encode_chunk",
            "byteswap",
            "repad",
            "str_lengths",
            "to_utf8",
            "to_string_dtype",
            "encode_vlen_utf8",
            "from_utf8",
            "decode_vlen_utf8",
            "set_buffer_pool_limit",
        ]
    )
    width, width2 = _width(d), _width(d)
    size = d.int(0, 24)
    if _is_huge(width) or _is_huge(width2):
        size = 0  # a valid huge width with data would allocate gigabytes
    huge = _is_huge(width) or _is_huge(width2)
    buf = _hostile_buffer(d, size)
    if huge:  # nothing to allocate for, whatever the function does with the width
        buf = d.choice(
            [
                b"",
                bytearray(),
                np.zeros(0, np.uint8),
                np.array([], "<U1"),
                np.array([], ">U1"),
                np.array([], object),
                None,
            ]
        )
    endian, order = d.choice(_ENDIAN_ARGS), d.choice(_ORDER_ARGS)
    shape, validate = d.choice(_SHAPE_ARGS), d.choice(_VALIDATE_ARGS)
    out = _hostile_out(d, buf, size) if d.bool(0.5) else None
    buffers = [buf, out]
    kwargs = {"endian": endian, "validate": validate, "out": out}
    if name == "decode_chunk":
        args = (buf, width)
        kwargs.update(shape=shape, order=order)
    elif name == "validate":
        args, kwargs = (buf, width), {"endian": endian}
    elif name == "encode_chunk":
        args = (buf, width)
        kwargs["order"] = order
    elif name == "byteswap":
        args, kwargs = (buf,), {}
    elif name == "repad":
        args = (buf, width, width2)
    elif name in ("str_lengths", "to_utf8", "to_string_dtype", "encode_vlen_utf8"):
        if name == "to_string_dtype" and not hasattr(np.dtypes, "StringDType"):
            return
        if name != "str_lengths" and d.bool(0.2):
            width = None
        args = (buf, width)
        del kwargs["out"]
    elif name in ("from_utf8", "decode_vlen_utf8"):
        del kwargs["validate"]
        args = (buf, width)
        if name == "from_utf8":
            offsets = d.choice(
                [
                    np.array([0, 2, 4], np.int64),
                    np.array([0, 2, 1], np.int64),
                    np.array([0, 2**62], np.int64),
                    np.array([-1, 2], np.int64),
                    np.array([0], np.int64),
                    np.array([], np.int64),
                    np.array([0.0, 2.0]),
                    [0, 1, 2, 3, 4],
                    np.array([[0, 1]]),
                    np.array([0, 2**63 - 1], np.uint64),
                    None,
                    "ab",
                ]
            )
            if huge:
                offsets = d.choice([np.array([0], np.int64), np.array([], np.int64)])
            if d.bool(0.3) and isinstance(offsets, np.ndarray) and offsets.dtype == np.int64:
                offsets = offsets.copy()
                out = kwargs["out"] = offsets.view(np.uint8)[d.int(0, max(offsets.nbytes - 1, 0)) :]
            buffers = [buf, out, offsets]
            args = (offsets, buf, width)
    else:
        limit = d.choice([0, 1, 2**20, 2**62, 2**63, 2**64, -1, None, 1.5, "1", True])
        if VERBOSE:
            print(f"fuzz: set_buffer_pool_limit({limit!r})", file=sys.stderr)
        previous = fixedutf32.set_buffer_pool_limit(2**26)
        try:
            fixedutf32.set_buffer_pool_limit(limit)
        except (ValueError, TypeError):
            pass
        finally:
            fixedutf32.set_buffer_pool_limit(previous)
        return
    if VERBOSE:
        shown = [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
        print(f"fuzz: {name}({', '.join(shown)})", file=sys.stderr, flush=True)
    fn = getattr(fixedutf32, name)
    call = lambda: fn(*args, **kwargs)  # noqa: E731
    before = [_snapshot(b) for b in buffers]
    try:
        call()
    except (ValueError, TypeError, BufferError):
        for b, snap in zip(buffers, before):
            if snap is not None:
                assert _snapshot(b) == snap, f"{name} changed a buffer, then raised"
        return
    out = kwargs.get("out")  # only where the function takes one
    for role, value in (("data", buf), ("out", out)):
        if _holds_references(value) and not (name == "encode_chunk" and role == "data"):
            raise AssertionError(f"{name} took a {value.dtype} array as the {role} buffer")
    if isinstance(validate, str) and name in (
        "decode_chunk",
        "encode_chunk",
        "repad",
        "str_lengths",
        "to_utf8",
        "to_string_dtype",
        "encode_vlen_utf8",
    ):
        raise AssertionError(f"{name} took validate={validate!r} for a bool")
    if isinstance(out, np.ndarray) and out.dtype.kind == "U" and out.size:
        written = NATIVE if name == "decode_chunk" else endian
        native = "<" if NATIVE == "little" else ">"
        have = {"=": native, "|": native}.get(out.dtype.byteorder, out.dtype.byteorder)
        if written in ENDIANS and have != ("<" if written == "little" else ">"):
            raise AssertionError(f"{name} wrote {written}-endian units into a {out.dtype} out")


# --- metadata -------------------------------------------------------------------------------

_V3 = {
    "zarr_format": 3,
    "node_type": "array",
    "shape": [5, 3],
    "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}},
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 2]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": "",
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {},
    "dimension_names": ["x", None],
}
_V2 = {
    "zarr_format": 2,
    "shape": [5, 3],
    "chunks": [2, 2],
    "dtype": "<U3",
    "fill_value": "",
    "order": "C",
    "compressor": {"id": "zlib", "level": 1},
    "filters": None,
    "dimension_separator": ".",
}
_VALUES = [
    None,
    True,
    False,
    0,
    1,
    -1,
    4,
    12,
    2**31,
    2**40,
    2**63,
    2**64,
    10**30,
    1.5,
    "",
    "x",
    "little",
    "big",
    "/",
    ".",
    "C",
    "F",
    "<U3",
    ">U999999999999",
    "default",
    "v2",
    "regular",
    "bytes",
    "transpose",
    "gzip",
    "fixed_length_utf32",
    [],
    {},
    [1],
    [0],
    [2**63],
    {"name": "bytes"},
    {"id": 5},
    {"must_understand": False},
]


def _random_json(d, depth=0):
    kind = d.int(0, 5)
    if kind < 3 or depth > 3:
        return d.choice(_VALUES)
    if kind == 3:
        return [_random_json(d, depth + 1) for _ in range(d.int(0, 3))]
    if kind == 4:
        return d.text(4)
    return {
        d.choice(["name", "configuration", "id", "x"]): _random_json(d, depth + 1)
        for _ in range(d.int(0, 3))
    }


def _mutate(d, doc):
    """Replace, delete or add a value somewhere in ``doc``, or nest it deeply."""
    node = doc
    for _ in range(d.int(0, 4)):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        child = node[d.choice(keys)]
        if not isinstance(child, (dict, list)):
            break
        node = child
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))
    action = d.int(0, 4)
    if action == 0 and keys:
        node[d.choice(keys)] = _random_json(d)
    elif action == 1 and keys:
        del node[d.choice(keys)]
    elif action == 2 and isinstance(node, dict):
        node[
            d.choice(
                [
                    "attributes",
                    "storage_transformers",
                    "dimension_names",
                    "extra",
                    "configuration",
                    "must_understand",
                    "name",
                ]
            )
        ] = _random_json(d)
    elif action == 3 and isinstance(node, list):
        node.append(_random_json(d))
    elif keys:
        value = node[d.choice(keys)]
        for _ in range(d.choice([2, 100, 127, 128, 1000, 5000])):
            value = [value] if d.bool(0.9) else {"a": value}
        node[d.choice(keys)] = value


def metadata(data):
    """parse_array_metadata on mutated and raw documents: MetadataError or a usable result."""
    d = Draw(data)
    mode = d.int(0, 3)
    if mode == 0:
        doc = d.bytes(len(data))  # the raw bytes as JSON text
    else:
        doc = json.loads(json.dumps(d.choice([_V3, _V2])))
        for _ in range(d.int(1, 4)):
            _mutate(d, doc)
        if mode == 1:
            try:
                doc = json.dumps(doc)
            except (ValueError, RecursionError):
                return  # our own mutation made something json cannot write
    try:
        meta = fixedutf32.parse_array_metadata(doc)
    except MetadataError:
        return
    # Parsed: everything the reader does next must work.
    again = fixedutf32.parse_array_metadata(meta.to_json())
    assert again == meta, (again, meta)
    kwargs = meta.decode_kwargs()
    np.dtype(f"=U{kwargs['length_bytes'] // 4}")
    nbytes = kwargs["length_bytes"]
    for n in kwargs["shape"]:
        nbytes *= n
    assert nbytes <= sys.maxsize
    first = next(meta.chunk_indices(), None)
    if first is not None:
        meta.chunk_key(first)
        meta.chunk_region(first)
    if nbytes <= 1 << 16:
        chunk = meta.data_type.fill_array(kwargs["shape"], meta.fill_value)
        encoded = fixedutf32.encode_chunk(
            chunk, kwargs["length_bytes"], endian=kwargs["endian"], order=kwargs["order"]
        )
        back = fixedutf32.decode_chunk(encoded, **kwargs)
        assert np.array_equal(back, chunk)


# -- stored chunks and stores, as check and convert read them ---------------------------------

# Input of store_chunk: byte 0 picks the codec chain, byte 1 the chunk's
# element count (1..64 elements of 16 bytes), the rest is the chunk as stored.
_CHAINS = (
    [{"name": "blosc", "configuration": {"typesize": 4}}],
    [{"name": "zstd"}],
    [{"name": "numcodecs.lz4"}],
    [{"name": "gzip"}],
    [],
    [{"name": "crc32c"}, {"name": "zstd"}],
)


def store_chunk(data):
    """A stored chunk (lying blosc/zstd/lz4 headers, bombs, short frames) through the
    chunk-source layer as check, convert and the pipeline decode it, and the same bytes
    as a shard through the one reader of keys: exactly the chunk's size, or
    ChunkSizeError / CorruptChunkError."""
    from fixedutf32 import CorruptChunkError
    from fixedutf32._source import ChunkDecoder, ChunkGrid, CodecChain, KeyReader, ShardLayout

    if len(data) < 2:
        return
    chain = _CHAINS[data[0] % len(_CHAINS)]
    count = 1 + data[1] % 64
    stored = data[2:]
    decoder = ChunkDecoder.build(16, "little", count, chain)
    try:
        out = decoder.decode(stored, key="c/0")
    except (ChunkSizeError, CorruptChunkError):
        pass
    else:
        assert out.nbytes == decoder.nbytes, (out.nbytes, decoder.nbytes)
    layout = ShardLayout((2,), index_checksum=bool(data[0] & 0x80))
    bound = layout.count * decoder.max_stored_nbytes + layout.index_nbytes
    reader = KeyReader(
        ChunkGrid((2 * count,), (count,)),
        ChunkGrid((2 * count,), (2 * count,)),
        decoder.chain,
        decoder,
        layout,
        CodecChain((), bound, exact=False),
    )

    def sink(index, chunk, error):
        # every inner chunk handed on is whole, or refused with one of the two errors
        if error is None:
            assert chunk.nbytes == decoder.nbytes, (chunk.nbytes, decoder.nbytes)
        else:
            assert isinstance(error, (ChunkSizeError, CorruptChunkError)), repr(error)

    reader.read((0,), {"c/0": stored}.get, sink)


def _store_from(data):
    """A zarr MemoryStore from store_check's input (see there), and the depth of its groups."""
    from zarr.core.buffer import cpu
    from zarr.storage import MemoryStore

    # mostly shallow (fast runs); 250..255 give 1000..1020 levels
    depth = (4 * data[0] if data[0] >= 250 else data[0] % 16) if data else 0
    group = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}).encode()
    array = {
        "zarr_format": 3,
        "node_type": "array",
        "shape": [8],
        "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "",
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "attributes": {},
    }
    where = ""
    keys = {}
    for _ in range(depth):
        keys[f"{where}zarr.json"] = group
        where += "g/"
    keys[f"{where}zarr.json"] = json.dumps(array).encode()
    for line in bytes(data[1:]).split(b"\n"):
        key, _, value = line.partition(b"=")
        keys[where + key.decode("utf-8", "replace")] = value
    return MemoryStore({k: cpu.Buffer.from_bytes(v) for k, v in keys.items()}), depth


def store_check(data):
    """check and convert of a store from the input: a report, or a StoreError.

    Byte 0 picks the nested groups (250 and up: four times as many, 1000
    levels and more), then lines ``key=value`` are stored under the array at
    the bottom (``..`` and empty segments, lying chunks).  Any other error is
    a finding.
    """
    from zarr.storage import MemoryStore

    from fixedutf32.store import InvalidChunkError, StoreError, check, convert

    store, _ = _store_from(data)
    try:
        report = check(store, threads=1, max_errors=8)
    except StoreError:
        return
    if report.ok:
        # too deep, or a chunk check reported: refused in one line
        with contextlib.suppress(StoreError, InvalidChunkError):
            convert(store, MemoryStore(), threads=1)


TARGETS = {
    "decode": decode,
    "encode": encode,
    "repad": repad,
    "str_lengths": str_lengths,
    "utf8": utf8,
    "vlen": vlen,
    "hostile": hostile,
    "metadata": metadata,
    "store_chunk": store_chunk,
    "store_check": store_check,
}
