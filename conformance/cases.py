"""The cases of the corpus: each one a small store and what a conforming reader must do.

A case is written by hand, byte by byte (:mod:`conformance.generate`), so that
hostile stores can exist: metadata no writer would make, chunks holding code
units that are not Unicode scalar values.  Its expectation (:class:`Expect`)
comes from the specification (the zarr-extensions repository's
``data-types/fixed_length_utf32``, summed up in docs/spec.md), never from what an
implementation does; where the specification says nothing (surrogates, values
above U+10FFFF), the expectation is what fixedutf32 does, marked
``spec_silent`` with the reason (the proposal is docs/spec-gaps.md).

Values to store are given as ``str`` or, for code units that no ``str`` can
hold, as a tuple of strings and code points in order (``(0x110000,)``,
``("a", 0xDFFF)``); the records (``conformance/records/*.json``) hold only
what must be read, as JSON strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import encoding as enc

SPEC_RULES = {
    "length_bytes": "Configuration: length_bytes is a positive integer, a multiple of 4",
    "data_type": "Data type representation: name and configuration, nothing else (schema.json)",
    "bytes": "Bytes codec encoding: length_bytes / 4 code units per element, zero-padded",
    "endian": "Endianness: the bytes codec MUST name its byte order",
    "json": "JSON scalar encoding: trailing U+0000 removed; more than capacity MUST be rejected",
    "fill": "Fill value representation: a JSON string of at most length_bytes / 4 code points",
    "codecs": "Codec compatibility: bytes-to-bytes codecs MAY follow; variable-length are NOT",
    "valid": "What valid means: Unicode scalar values only (the project's reading; spec silent)",
}


@dataclass(frozen=True)
class Expect:
    """What a conforming reader (or writer) does with a case.

    ``values`` (nested lists of ``str``, in the array's shape) when it must read
    the array; ``reject`` (the reason) when it must refuse it.  With
    ``spec_silent`` the specification does not decide: this is fixedutf32's
    behaviour, ``why`` says why.
    """

    values: Any = None
    reject: str | None = None
    spec_silent: bool = False
    why: str | None = None


@dataclass(frozen=True)
class Case:
    """One store of the corpus and what must come of it.

    ``layer`` says what is tested: ``"metadata"`` (the JSON document),
    ``"data"`` (the chunks' bytes) or ``"write"`` (``write`` is assigned to the
    whole array, then read back). ``chunks`` maps a chunk key to its stored
    bytes as the generator builds them (see :mod:`conformance.generate`).
    """

    name: str
    rule: str
    layer: str
    description: str
    zarr_format: int
    metadata: dict[str, Any]
    expect: Expect
    chunks: dict[str, bytes] = field(default_factory=dict)
    write: list[str] | None = None
    tags: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        """The case's JSON record (conformance/records/NAME.json)."""
        record: dict[str, Any] = {
            "case": self.name,
            "zarr_format": self.zarr_format,
            "layer": self.layer,
            "rule": SPEC_RULES[self.rule],
            "description": self.description,
        }
        if self.write is not None:
            record["write"] = self.write
        if self.expect.reject is not None:
            record["expect"] = "reject"
            record["reason"] = self.expect.reject
        else:
            record["expect"] = "values"
            record["values"] = self.expect.values
        record["spec_silent"] = self.expect.spec_silent
        if self.expect.why is not None:
            record["why"] = self.expect.why
        return record


# ---------------------------------------------------------------------------
# Builders of the usual stores


def _transpose(ndim: int) -> dict[str, Any]:
    return {"name": "transpose", "configuration": {"order": list(reversed(range(ndim)))}}


_GZIP = {"name": "gzip", "configuration": {"level": 5}}


def _v3(
    values: Any,
    shape: list[int],
    chunk_shape: list[int],
    length_bytes: int,
    *,
    endian: str = "little",
    fill: str = "",
    transpose: bool = False,
    compress: bool = False,
    skip: tuple[tuple[int, ...], ...] = (),
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The metadata and chunks of a V3 array written as zarr-python would."""
    order = "F" if transpose else "C"
    chunks = enc.split_chunks(
        values, shape, chunk_shape, length_bytes // 4, endian, order=order, fill=fill, skip=skip
    )
    codecs = [_transpose(len(shape))] if transpose else []
    codecs += [enc.bytes_codec(endian)] + ([_GZIP] if compress else [])
    metadata = enc.v3_metadata(shape, chunk_shape, enc.data_type(length_bytes), fill, codecs)
    stored = {
        enc.v3_key(index): enc.gzip_bytes(data) if compress else data
        for index, data in chunks.items()
    }
    return metadata, stored


def _v2(
    values: Any,
    shape: list[int],
    chunk_shape: list[int],
    dtype: str,
    *,
    fill: str = "",
    order: str = "C",
    compress: bool = False,
    skip: tuple[tuple[int, ...], ...] = (),
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The .zarray and chunks of a V2 array (dtype ``<Un`` or ``>Un``)."""
    endian = "little" if dtype[0] == "<" else "big"
    chunks = enc.split_chunks(
        values, shape, chunk_shape, int(dtype[2:]), endian, order=order, fill=fill, skip=skip
    )
    compressor = {"id": "zlib", "level": 1} if compress else None
    metadata = enc.v2_metadata(shape, chunk_shape, dtype, fill, order=order, compressor=compressor)
    stored = {
        enc.v2_key(index): enc.zlib_bytes(data) if compress else data
        for index, data in chunks.items()
    }
    return metadata, stored


def _case(
    name: str,
    rule: str,
    layer: str,
    description: str,
    built: tuple[dict[str, Any], dict[str, bytes]],
    expect: Expect,
    *,
    write: list[str] | None = None,
) -> Case:
    metadata, chunks = built
    return Case(
        name=name,
        rule=rule,
        layer=layer,
        description=description,
        zarr_format=metadata["zarr_format"],
        metadata=metadata,
        expect=expect,
        chunks=chunks,
        write=write,
    )


def _v3_doc(length_bytes: Any, fill: Any = "", codecs: Any = None, **dtype_extra: Any) -> Any:
    """Metadata only (shape [2], one chunk of 2), for the metadata cases."""
    codecs = [enc.bytes_codec("little")] if codecs is None else codecs
    return enc.v3_metadata([2], [2], enc.data_type(length_bytes, **dtype_extra), fill, codecs)


def _raw(key: str, data: bytes) -> dict[str, bytes]:
    return {key: data}


# ---------------------------------------------------------------------------
# The cases

_GRID = [["00", "01", "02", "03"], ["10", "é1", "", "13"], ["2", "21", "😀", "23"]]
_SILENT_INVALID = (
    "The specification does not say whether a code unit that is not a Unicode scalar "
    "value may be stored. UTF-32 is well formed only for scalar values (Unicode, "
    "Encoding Forms), so fixedutf32 refuses the chunk with InvalidCodePointError naming "
    "the element and position, instead of handing on text that is not Unicode "
    "(docs/spec-gaps.md)."
)


def _cases() -> list[Case]:
    cases = [
        # -- what must be read --------------------------------------------------
        _case(
            "v3_little_endian",
            "bytes",
            "data",
            'The specification\'s example ("Hi" in length_bytes 12) and its neighbours, '
            "little endian, two chunks.",
            _v3(["Hi", "", "abc", "é"], [4], [2], 12),
            Expect(values=["Hi", "", "abc", "é"]),
        ),
        _case(
            "v3_big_endian",
            "endian",
            "data",
            "The same array with the bytes codec's endian big.",
            _v3(["Hi", "", "abc", "é"], [4], [2], 12, endian="big"),
            Expect(values=["Hi", "", "abc", "é"]),
        ),
        _case(
            "v3_length_bytes_4",
            "length_bytes",
            "data",
            "The smallest length_bytes, 4: one code point per element (an astral one too).",
            _v3(["a", "", "😀", "é"], [4], [4], 4, endian="big"),
            Expect(values=["a", "", "😀", "é"]),
        ),
        _case(
            "v3_length_bytes_large",
            "length_bytes",
            "data",
            "length_bytes 4096 (1024 code points): one element filled to capacity, one short.",
            _v3(["0123456789abcdef" * 64, "short"], [2], [1], 4096),
            Expect(values=["0123456789abcdef" * 64, "short"]),
        ),
        _case(
            "v3_2d_c_order",
            "bytes",
            "data",
            "A 3x4 array in 2x3 chunks (edge chunks cut), C order.",
            _v3(_GRID, [3, 4], [2, 3], 8),
            Expect(values=_GRID),
        ),
        _case(
            "v3_2d_transpose_f_order",
            "bytes",
            "data",
            "The same array with a transpose codec (order [1, 0]) before bytes: chunks in F order.",
            _v3(_GRID, [3, 4], [2, 3], 8, endian="big", transpose=True),
            Expect(values=_GRID),
        ),
        _case(
            "v2_little_endian_c_order",
            "bytes",
            "data",
            'Zarr V2 dtype "<U2", C order, 2x3 chunks.',
            _v2(_GRID, [3, 4], [2, 3], "<U2"),
            Expect(values=_GRID),
        ),
        _case(
            "v2_big_endian_f_order",
            "endian",
            "data",
            'Zarr V2 dtype ">U2", order "F".',
            _v2(_GRID, [3, 4], [2, 3], ">U2", order="F"),
            Expect(values=_GRID),
        ),
        _case(
            "v3_empty_strings",
            "bytes",
            "data",
            'Stored elements that are all padding read as "", not as the fill value "x".',
            _v3(["", "", "", ""], [4], [2], 8, fill="x"),
            Expect(values=["", "", "", ""]),
        ),
        _case(
            "v3_interior_nul",
            "json",
            "data",
            "U+0000 before other code points is content: kept where it is.",
            _v3(["a\x00b", "\x00a", "\x00\x00c", "ab\x00c"], [4], [2], 16),
            Expect(values=["a\x00b", "\x00a", "\x00\x00c", "ab\x00c"]),
        ),
        _case(
            "v3_trailing_nul",
            "json",
            "data",
            'Trailing U+0000 is padding: "ab" then U+0000 U+0000, "x\\u0000y" then U+0000, '
            "and all U+0000, read without it (the bytes are those of the padded strings).",
            _v3(["ab\x00\x00", "x\x00y\x00", "\x00\x00\x00\x00", "abcd"], [4], [4], 16),
            Expect(values=["ab", "x\x00y", "", "abcd"]),
        ),
        _case(
            "v3_code_point_limits",
            "valid",
            "data",
            "Scalar values at the edges: U+10FFFF, U+D7FF and U+E000 (either side of the "
            "surrogates), U+FFFF, U+007F U+0080.",
            _v3(["\U0010ffff", "\ud7ff\ue000", "\uffff", "\x7f\x80"], [4], [2], 8, endian="big"),
            Expect(values=["\U0010ffff", "\ud7ff\ue000", "\uffff", "\x7f\x80"]),
        ),
        _case(
            "v3_missing_chunks_fill",
            "fill",
            "data",
            'Chunks 0 and 2 of 3 are not stored: their elements read as the fill value "zz".',
            _v3(["zz", "zz", "a", "b", "zz", "zz"], [6], [2], 8, fill="zz", skip=((0,), (2,))),
            Expect(values=["zz", "zz", "a", "b", "zz", "zz"]),
        ),
        _case(
            "v2_missing_chunks_fill",
            "fill",
            "data",
            'Zarr V2 "<U2": chunk 1 of 2 is not stored; it reads as the fill value "q".',
            _v2(["ab", "c", "q", "q"], [4], [2], "<U2", fill="q", skip=((1,),)),
            Expect(values=["ab", "c", "q", "q"]),
        ),
        _case(
            "v3_fill_interior_nul",
            "fill",
            "metadata",
            'The fill value "a\\u0000b": its U+0000 is content, kept in every missing element.',
            _v3(["a\x00b", "a\x00b"], [2], [2], 12, fill="a\x00b", skip=((0,),)),
            Expect(values=["a\x00b", "a\x00b"]),
        ),
        _case(
            "v3_fill_trailing_nul",
            "fill",
            "metadata",
            'The fill value "a\\u0000" (2 code points, capacity 2) is the scalar "a": '
            "trailing U+0000 is padding.",
            _v3(["a", "a"], [2], [2], 8, fill="a\x00", skip=((0,),)),
            Expect(values=["a", "a"]),
        ),
        _case(
            "v3_fill_astral",
            "fill",
            "metadata",
            'The fill value "😀" is one code point (two UTF-16 units): it fits capacity 1.',
            _v3(["😀", "😀"], [2], [2], 4, fill="😀", skip=((0,),)),
            Expect(values=["😀", "😀"]),
        ),
        _case(
            "v3_gzip",
            "codecs",
            "data",
            "bytes (big endian) then gzip, two chunks.",
            _v3(["Hi", "", "abc", "é"], [4], [2], 12, endian="big", compress=True),
            Expect(values=["Hi", "", "abc", "é"]),
        ),
        _case(
            "v2_zlib",
            "codecs",
            "data",
            'Zarr V2 "<U3" with the zlib compressor.',
            _v2(["Hi", "", "abc", "é"], [4], [2], "<U3", compress=True),
            Expect(values=["Hi", "", "abc", "é"]),
        ),
        _sharded(),
        # -- what must be rejected: metadata ---------------------------------------
        _case(
            "v3_length_bytes_0",
            "length_bytes",
            "metadata",
            "length_bytes 0: not positive.",
            (_v3_doc(0), {}),
            Expect(reject="length_bytes 0 is not a positive integer"),
        ),
        _case(
            "v3_length_bytes_6",
            "length_bytes",
            "metadata",
            'length_bytes 6: not a multiple of 4. The chunk holds "a" and "b" in 4 bytes '
            "each, as a writer that floors 6 to one code point writes them.",
            (_v3_doc(6), _raw("c/0", "ab".encode("utf-32-le"))),
            Expect(reject="length_bytes 6 is not a multiple of 4"),
        ),
        _case(
            "v3_length_bytes_negative",
            "length_bytes",
            "metadata",
            "length_bytes -4.",
            (_v3_doc(-4), {}),
            Expect(reject="length_bytes -4 is not a positive integer"),
        ),
        _case(
            "v3_length_bytes_huge",
            "length_bytes",
            "metadata",
            "length_bytes 2**64 (a multiple of 4, beyond any 64-bit size): no reader can hold "
            "one element; it must refuse, not crash or try to allocate.",
            (_v3_doc(2**64), {}),
            Expect(reject="length_bytes 2**64: one element cannot be held"),
        ),
        _case(
            "v3_length_bytes_string",
            "length_bytes",
            "metadata",
            'length_bytes "48", a JSON string: not an integer.',
            (_v3_doc("48"), {}),
            Expect(reject="length_bytes is not a JSON integer"),
        ),
        _case(
            "v3_data_type_extra_key",
            "data_type",
            "metadata",
            'A configuration key other than length_bytes ("encoding"): the schema allows no '
            "other key.",
            (_v3_doc(8, encoding="utf-32"), {}),
            Expect(reject="the data type's configuration has a key other than length_bytes"),
        ),
        _case(
            "v3_fill_too_long",
            "fill",
            "metadata",
            'The fill value "abcdef" has 6 code points, capacity 2.',
            (_v3_doc(8, "abcdef"), {}),
            Expect(reject="the fill value has more code points than length_bytes / 4"),
        ),
        _case(
            "v3_fill_trailing_nul_over_capacity",
            "fill",
            "metadata",
            'The fill value "a\\u0000" has 2 code points, capacity 1: the JSON string is '
            "too long although its second code point is U+0000 (see docs/spec-gaps.md).",
            (_v3_doc(4, "a\x00"), {}),
            Expect(reject="the fill value has more code points than length_bytes / 4"),
        ),
        _case(
            "v3_fill_not_a_string",
            "fill",
            "metadata",
            "The fill value 0, a JSON number.",
            (_v3_doc(8, 0), {}),
            Expect(reject="the fill value is not a JSON string"),
        ),
        _case(
            "v3_fill_null",
            "fill",
            "metadata",
            "The fill value null.",
            (_v3_doc(8, None), {}),
            Expect(reject="the fill value is not a JSON string"),
        ),
        _case(
            "v3_bytes_without_endian",
            "endian",
            "metadata",
            'A bytes codec with no endian; its chunk holds "a" and "b" big endian.',
            (_v3_doc(4, codecs=[enc.bytes_codec(None)]), _raw("c/0", "ab".encode("utf-32-be"))),
            Expect(reject="the bytes codec names no endian"),
        ),
        _case(
            "v3_vlen_utf8",
            "codecs",
            "metadata",
            'vlen-utf8 as the array-to-bytes codec; its chunk holds "abc" and "d" (longer '
            "than capacity 2 for the first).",
            (
                _v3_doc(8, codecs=[{"name": "vlen-utf8"}]),
                _raw("c/0", enc.vlen_utf8_bytes(["abc", "d"])),
            ),
            Expect(reject="a variable-length codec cannot serialize fixed_length_utf32"),
        ),
        _case(
            "v2_dtype_u0",
            "length_bytes",
            "metadata",
            'Zarr V2 dtype "<U0": zero code points, length_bytes 0.',
            (enc.v2_metadata([2], [2], "<U0", ""), {}),
            Expect(reject="<U0 is length_bytes 0, not positive"),
        ),
        # -- what must be rejected: data -----------------------------------------------
        _case(
            "v3_chunk_wrong_size",
            "bytes",
            "data",
            "A chunk of 10 bytes where 2 elements of length_bytes 8 take 16.",
            (_v3_doc(8), _raw("c/0", "ab".encode("utf-32-le") + b"\0\0")),
            Expect(reject="the chunk is not 2 elements of 8 bytes"),
        ),
        # -- where the specification is silent -------------------------------------------
        _case(
            "v3_surrogate",
            "valid",
            "data",
            'Lone surrogates in a chunk: U+D800 alone, and U+DFFF after "a".',
            _v3(["ok", (0xD800,), ("a", 0xDFFF), "z"], [4], [2], 8),
            Expect(
                reject="U+D800 is a surrogate, not a Unicode scalar value",
                spec_silent=True,
                why=_SILENT_INVALID,
            ),
        ),
        _case(
            "v3_above_max",
            "valid",
            "data",
            "Code units above U+10FFFF: U+110000 and 0xFFFFFFFF.",
            _v3(["ok", (0x110000,), ("a", 0xFFFFFFFF), "z"], [4], [2], 8, endian="big"),
            Expect(reject="U+110000 is above U+10FFFF", spec_silent=True, why=_SILENT_INVALID),
        ),
        _case(
            "v2_surrogate",
            "valid",
            "data",
            'Zarr V2 "<U2" holding U+D800 and U+DBFF U+DC00 (a surrogate pair, which UTF-32 '
            "does not use).",
            _v2(["ok", (0xD800,), (0xDBFF, 0xDC00), "z"], [4], [2], "<U2"),
            Expect(
                reject="U+D800 is a surrogate, not a Unicode scalar value",
                spec_silent=True,
                why=_SILENT_INVALID,
            ),
        ),
        _case(
            "v2_above_max",
            "valid",
            "data",
            'Zarr V2 ">U2" holding U+110000.',
            _v2(["ok", (0x110000,), "y", "z"], [4], [2], ">U2"),
            Expect(reject="U+110000 is above U+10FFFF", spec_silent=True, why=_SILENT_INVALID),
        ),
        _case(
            "v3_fill_surrogate",
            "valid",
            "metadata",
            'The fill value "\\ud800", a JSON string holding a lone surrogate.',
            (_v3_doc(8, "\ud800"), {}),
            Expect(
                reject="the fill value holds the lone surrogate U+D800",
                spec_silent=True,
                why="The specification asks for a JSON string of at most capacity code points; "
                "JSON's \\ud800 escape names no Unicode scalar value, and a chunk could not "
                "hold it validly (see v3_surrogate), so fixedutf32 refuses the metadata.",
            ),
        ),
        # -- writing ----------------------------------------------------------------------
        _case(
            "write_too_long",
            "json",
            "write",
            'Writing "abc" into capacity 2 (length_bytes 8).',
            (_v3_doc(8), {}),
            Expect(reject="a string of 3 code points does not fit capacity 2"),
            write=["abc", "d"],
        ),
        _case(
            "write_trailing_nul",
            "json",
            "write",
            'Writing "ab\\u0000" (capacity 3): the U+0000 is indistinguishable from padding, '
            'so it reads back as "ab".',
            (_v3_doc(12), {}),
            Expect(values=["ab", "c"]),
            write=["ab\x00", "c"],
        ),
        _case(
            "write_interior_nul",
            "json",
            "write",
            'Writing "a\\u0000b" and "\\u0000z": U+0000 before other code points is kept.',
            (_v3_doc(12), {}),
            Expect(values=["a\x00b", "\x00z"]),
            write=["a\x00b", "\x00z"],
        ),
        _case(
            "write_surrogate",
            "valid",
            "write",
            'Writing the lone surrogate "\\ud800".',
            (_v3_doc(8), {}),
            Expect(
                reject="U+D800 is a surrogate, not a Unicode scalar value",
                spec_silent=True,
                why=_SILENT_INVALID,
            ),
            write=["\ud800", "d"],
        ),
    ]
    names = [case.name for case in cases]
    assert len(set(names)) == len(names), "case names must be unique"
    return cases


def _sharded() -> Case:
    """Two shards of 4 (inner chunks of 2, big endian, gzip); the last inner chunk is absent."""
    values = ["s0", "s1", "é", "", "😀", "5", "f", "f"]
    inner = enc.split_chunks(values, [8], [2], 2, "big", fill="f")
    encoded = [enc.gzip_bytes(inner[(i,)]) for i in range(4)]
    sharding = {
        "name": "sharding_indexed",
        "configuration": {
            "chunk_shape": [2],
            "codecs": [enc.bytes_codec("big"), _GZIP],
            "index_codecs": [enc.bytes_codec("little"), {"name": "crc32c"}],
            "index_location": "end",
        },
    }
    metadata = enc.v3_metadata([8], [4], enc.data_type(8), "f", [sharding])
    chunks = {
        "c/0": enc.shard_bytes(encoded[:2]),
        "c/1": enc.shard_bytes([encoded[2], None]),
    }
    return _case(
        "v3_sharded",
        "codecs",
        "data",
        "sharding_indexed: shards of 4, inner chunks of 2 (bytes big endian, gzip), index "
        'with crc32c; the last inner chunk is absent and reads as the fill value "f".',
        (metadata, chunks),
        Expect(values=values),
    )


CASES: list[Case] = _cases()
