"""Codec JSON (V3 objects, V2 numcodecs configs) to numcodecs objects, built once per array."""
# Decoding checks every frame before inflating it (frames.py); streams that declare no size are
# capped at the chunk's size plus one byte. Encoding gives blosc the metadata's element size.

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

import numpy as np

from .._arguments import as_bytes
from ..errors import CorruptChunkError, MetadataError
from .frames import check_frame
from .sizes import DecodedSize, compress_bound

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = ["DEFAULTS", "JSON", "CodecSpec", "CodecChain", "parse_codec", "parse_codecs"]

JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"

#: The configuration of every codec this package writes, and what a stored
#: configuration that leaves a key out means: numcodecs' names and values
#: (blosc's ``shuffle`` as numcodecs' int), one table for V2 and V3 alike.
#: The levels and blosc's settings are zarr-python's defaults for V3.
DEFAULTS: Mapping[str, Mapping[str, JSON]] = {
    "gzip": {"level": 5},
    "zstd": {"level": 0, "checksum": False},
    "blosc": {"cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "crc32c": {},
}
#: The element size blosc's shuffle works in when a configuration gives none:
#: a UTF-32 code unit.
DEFAULT_TYPESIZE = 4

# V3 names of the codecs zarr-python knows without a "numcodecs." prefix, and
# the configuration keys each may have there.
_V3_KEYS = {
    "gzip": {"level"},
    "zstd": {"level", "checksum"},
    "blosc": {"typesize", "cname", "clevel", "shuffle", "blocksize"},
    "crc32c": set(),
}
_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
# Checksum codecs: the bytes they add to their input.
_CHECKSUMS = {"crc32c": 4, "crc32": 4, "adler32": 4, "fletcher32": 4}
# Codecs whose output size this package does not know are allowed this much
# growth on encoding when sizing what a stored chunk may be.
_UNKNOWN_GROWTH = 16

StageKind: TypeAlias = Literal[
    "zstd", "blosc", "lz4", "gzip", "zlib", "bz2", "lzma", "checksum", "other"
]
_DECLARING: frozenset[str] = frozenset({"zstd", "blosc", "lz4"})


class _Codec(Protocol):
    """A numcodecs codec object (numcodecs ships no type information)."""

    def encode(self, buf: Buffer) -> Buffer: ...

    def decode(self, buf: Buffer, out: Buffer | None = None) -> Buffer: ...


def _fail(key: str, expected: str, value: object) -> MetadataError:
    return MetadataError(f"{key}: expected {expected}, got {value!r}")


@dataclass(frozen=True)
class CodecSpec:
    """One bytes-to-bytes codec as numcodecs runs it (id, config with DEFAULTS, blosc typesize)."""

    id: str
    config: dict[str, JSON]
    typesize: int | None = None

    def to_v3(self) -> dict[str, JSON]:
        """The codec as a new V3 metadata object (``numcodecs.<id>`` for non-core codecs)."""
        config = dict(self.config)
        if self.id == "blosc":
            shuffle = config.get("shuffle")
            if isinstance(shuffle, int) and 0 <= shuffle < len(_SHUFFLES):
                config["shuffle"] = _SHUFFLES[shuffle]
            typesize = DEFAULT_TYPESIZE if self.typesize is None else self.typesize
            return {"name": "blosc", "configuration": {"typesize": typesize, **config}}
        if self.id == "crc32c":
            return {"name": "crc32c", "configuration": {}}
        if self.id in _V3_KEYS:
            return {"name": self.id, "configuration": config}
        return {"name": f"numcodecs.{self.id}", "configuration": config}

    def to_v2(self) -> dict[str, JSON]:
        """The codec as a new V2 numcodecs configuration (``{"id": ...}``)."""
        return {"id": self.id, **self.config}

    def to_json(self, zarr_format: int) -> dict[str, JSON]:
        """:meth:`to_v3` or :meth:`to_v2`, by ``zarr_format``."""
        return self.to_v3() if zarr_format == 3 else self.to_v2()


def _with_defaults(codec_id: str, config: dict[str, JSON]) -> dict[str, JSON]:
    return {**DEFAULTS.get(codec_id, {}), **config}


def _typesize(value: JSON, key: str) -> int:
    if type(value) is not int or not 1 <= value <= 255:
        raise _fail(key, "an integer 1..255 (bytes per element)", value)
    return value


def parse_codec(codec: object, zarr_format: int, key: str = "codecs[0]") -> CodecSpec:
    """Read a V3 (object or name) or V2 codec as a new CodecSpec; MetadataError if not run here."""
    # Values are checked only when numcodecs builds the codec (CodecChain).
    if zarr_format == 2:
        if not isinstance(codec, Mapping) or not isinstance(codec.get("id"), str):
            raise _fail(key, 'a numcodecs configuration {"id": ...}', codec)
        config: dict[str, JSON] = {k: v for k, v in codec.items() if k != "id"}
        codec_id: str = codec["id"]
        typesize = None
        if codec_id == "blosc" and "typesize" in config:
            typesize = _typesize(config.pop("typesize"), f"{key}.typesize")
        return CodecSpec(codec_id, _with_defaults(codec_id, config), typesize)
    if isinstance(codec, str):
        codec = {"name": codec}
    if not isinstance(codec, Mapping) or not isinstance(codec.get("name"), str):
        raise _fail(key, 'a codec object {"name": ..., "configuration": {...}}', codec)
    name: str = codec["name"]
    extra = set(codec) - {"name", "configuration"}
    if extra:
        raise _fail(key, 'only "name" and "configuration"', sorted(extra))
    given = codec.get("configuration", {})
    if not isinstance(given, Mapping):
        raise _fail(f"{key}.configuration", "a JSON object", given)
    config = dict(given)
    if name.startswith("numcodecs.") and len(name) > len("numcodecs."):
        codec_id = name[len("numcodecs.") :]
        return CodecSpec(codec_id, _with_defaults(codec_id, config))
    allowed = _V3_KEYS.get(name)
    if allowed is None:
        raise MetadataError(
            f"{key}: expected a bytes-to-bytes codec this package runs (gzip, zstd, blosc, "
            f"crc32c, numcodecs.*), got {name!r}"
        )
    unknown = sorted(set(config) - allowed)
    if unknown:
        raise _fail(f"{key}.configuration", f"only the keys {sorted(allowed)} for {name}", unknown)
    typesize = None
    if name == "blosc":
        if "typesize" in config:
            typesize = _typesize(config.pop("typesize"), f"{key}.configuration.typesize")
        if "shuffle" in config:
            shuffle = config["shuffle"]
            if not isinstance(shuffle, str) or shuffle not in _SHUFFLES:
                raise _fail(f"{key}.configuration.shuffle", " or ".join(_SHUFFLES), shuffle)
            config["shuffle"] = _SHUFFLES.index(shuffle)
    if name == "crc32c":
        config = {"location": "end"}  # V3 crc32c: the checksum after the bytes
    return CodecSpec(name, _with_defaults(name, config), typesize)


def parse_codecs(
    codecs: Sequence[object], zarr_format: int, key: str = "codecs"
) -> tuple[CodecSpec, ...]:
    """:func:`parse_codec` on each codec of a chain (``key[i]``), in the order applied."""
    return tuple(parse_codec(c, zarr_format, f"{key}[{i}]") for i, c in enumerate(codecs))


def _kind(spec: CodecSpec) -> StageKind:
    if spec.id in ("zstd", "blosc", "lz4", "gzip", "zlib", "bz2", "lzma"):
        return spec.id  # type: ignore[return-value]  # one of the literal kinds, by the test
    if spec.id in _CHECKSUMS:
        return "checksum"
    return "other"


def _build(spec: CodecSpec, key: str) -> _Codec:
    import numcodecs

    try:
        codec: _Codec = numcodecs.get_codec({"id": spec.id, **spec.config})
    except (KeyError, TypeError, ValueError) as exc:
        raise MetadataError(
            f"{key}: numcodecs cannot build the codec {spec.to_v2()!r}: {exc}"
        ) from None
    return codec


@dataclass(frozen=True, slots=True)
class _Stage:
    """One codec of a chain: the numcodecs object and what its decoding must give."""

    spec: CodecSpec
    codec: _Codec
    kind: StageKind
    decoded: DecodedSize  # what undoing this codec must give


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _inflate_capped(
    new: Callable[[], zlib._Decompress | bz2.BZ2Decompressor | lzma.LZMADecompressor],
    name: str,
    data: memoryview,
    expected: DecodedSize,
    key: str,
) -> bytes:
    """Inflate a stream that declares no size, stopping one byte past what the chunk allows."""
    cap = expected.nbytes
    stream = new()
    try:
        inflated = stream.decompress(data, cap + 1)
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError) as exc:
        raise CorruptChunkError(key, f"{name}: {_reason(exc)}") from None
    if len(inflated) > cap:
        raise CorruptChunkError(
            key,
            f"the {name} stream inflates past {cap} bytes; a chunk here holds "
            f"{expected.describe()} (stopped there)",
        )
    if not stream.eof:
        raise CorruptChunkError(key, f"the {name} stream is truncated (no end of stream)")
    if stream.unused_data:
        raise CorruptChunkError(
            key, f"{len(stream.unused_data)} bytes follow the end of the {name} stream"
        )
    if not expected.allows(len(inflated)):
        raise CorruptChunkError(
            key,
            f"the {name} stream inflates to {len(inflated)} bytes; a chunk here holds "
            f"{expected.describe()}",
        )
    return inflated


def _stream_decompressor(
    spec: CodecSpec,
) -> Callable[[], zlib._Decompress | bz2.BZ2Decompressor | lzma.LZMADecompressor]:
    if spec.id == "gzip":
        return lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    if spec.id == "zlib":
        return lambda: zlib.decompressobj()
    if spec.id == "bz2":
        return bz2.BZ2Decompressor
    form = spec.config.get("format", lzma.FORMAT_XZ)
    if not isinstance(form, int):
        form = lzma.FORMAT_AUTO
    filters = spec.config.get("filters") if form == lzma.FORMAT_RAW else None
    return lambda: lzma.LZMADecompressor(form, None, filters)  # type: ignore[arg-type]  # JSON filters


def _decode_stage(stage: _Stage, data: memoryview, key: str, out: memoryview | None) -> memoryview:
    """Undo one codec; into ``out`` when given (exactly the decoded size)."""
    expected = stage.decoded
    kind = stage.kind
    name = stage.spec.id
    if kind in _DECLARING:
        declared = check_frame(kind, data, expected, key)  # type: ignore[arg-type]  # a FrameKind
        if declared is None and not expected.exact:
            raise CorruptChunkError(
                key,
                f"the zstd frame declares no size, and the size it inflates to is not known "
                f"exactly here ({expected.describe()})",
            )
        nbytes = expected.nbytes if declared is None else declared
        target = out if out is not None and out.nbytes == nbytes else None
        if target is None:
            target = as_bytes(np.empty(nbytes, np.uint8))
        try:
            stage.codec.decode(data, out=target)
        except Exception as exc:  # noqa: BLE001 - a codec's own error: the chunk is corrupt
            raise CorruptChunkError(key, f"{name}: {_reason(exc)}") from None
        return target
    if kind in ("gzip", "zlib", "bz2", "lzma"):
        return memoryview(
            _inflate_capped(_stream_decompressor(stage.spec), name, data, expected, key)
        )
    try:
        result = as_bytes(stage.codec.decode(data))
    except Exception as exc:  # noqa: BLE001 - a codec's own error: the chunk is corrupt
        raise CorruptChunkError(key, f"{name}: {_reason(exc)}") from None
    if not expected.allows(result.nbytes):
        raise CorruptChunkError(
            key,
            f"{name} decodes to {result.nbytes} bytes; a chunk here holds {expected.describe()}",
        )
    return result


@dataclass(frozen=True)
class CodecChain:
    """One array's bytes-to-bytes codecs, built once."""

    # exact=False: decoded_nbytes is a bound (a whole shard under codecs applied after sharding).

    specs: tuple[CodecSpec, ...]
    decoded_nbytes: int
    exact: bool = True
    element_size: int = DEFAULT_TYPESIZE
    max_stored_nbytes: int = field(init=False)  # bounds a sound stored chunk
    _stages: tuple[_Stage, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        stages = []
        decoded = DecodedSize(self.decoded_nbytes, self.exact)
        for i, spec in enumerate(self.specs):
            kind = _kind(spec)
            if kind == "checksum":
                bound = decoded.nbytes + _CHECKSUMS[spec.id]
            elif kind == "other":
                bound = _UNKNOWN_GROWTH * decoded.nbytes + compress_bound(0)
            else:
                bound = compress_bound(decoded.nbytes)
            stages.append(_Stage(spec, _build(spec, f"codecs[{i}]"), kind, decoded))
            decoded = DecodedSize(bound, decoded.exact and kind == "checksum")
        object.__setattr__(self, "_stages", tuple(stages))
        object.__setattr__(self, "max_stored_nbytes", decoded.nbytes)

    @property
    def raw(self) -> bool:
        """True when there is no codec: a stored chunk is its bytes as they are."""
        return not self.specs

    def decode(self, data: Buffer, *, key: str, out: Buffer | None = None) -> memoryview:
        """Undo every codec of a stored chunk, each frame checked first (CorruptChunkError)."""
        # Without codecs the result is a view of data, unchecked in size. On error out may hold
        # part of the chunk: decode into scratch when the caller's memory must stay as it was.
        view = as_bytes(data)
        target = None
        if out is not None:
            target = as_bytes(out)
            if target.nbytes != self.decoded_nbytes or not self.exact:
                raise ValueError(
                    f"out holds {target.nbytes} bytes; expected exactly the {self.decoded_nbytes} "
                    f"bytes a chunk of this chain decodes to"
                )
        stages = self._stages
        if not stages:
            if target is None:
                return view
            if view.nbytes == target.nbytes:
                target[:] = view
            return target if view.nbytes == target.nbytes else view
        for stage in reversed(stages[1:]):
            view = _decode_stage(stage, view, key, None)
        view = _decode_stage(stages[0], view, key, target)
        if target is not None and view is not target:
            target[:] = view
            return target
        return view

    def encode(self, data: Buffer) -> memoryview:
        """Apply every codec to a chunk's bytes, blosc with the element size as its typesize."""
        view = as_bytes(data)
        for stage in self._stages:
            if stage.kind == "blosc":
                typesize = self.element_size if stage.spec.typesize is None else stage.spec.typesize
                if typesize > 1 and view.nbytes % typesize == 0:
                    elements = np.frombuffer(view, np.dtype((np.void, typesize)))
                    view = as_bytes(stage.codec.encode(elements))
                    continue
            view = as_bytes(stage.codec.encode(view))
        return view
