"""The arguments of ``convert`` checked before a store is opened, gathered in ConvertOptions."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._source import parse_codec
from ._arrays import FIXED, STRING, Index

__all__ = [
    "DEFAULT_COMPRESSORS",
    "ConvertOptions",
    "check_chunk_shape",
    "check_to",
    "compressor_json",
    "compressor_option",
]


DEFAULT_COMPRESSORS = "default"
_ZSTD_V3 = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}
_ZSTD_V2 = {"id": "zstd", "level": 0}


def check_to(to: str, zarr_format: int) -> None:
    if to not in (FIXED, STRING):
        raise ValueError(f"to must be {FIXED!r} or {STRING!r}, got {to!r}")
    if zarr_format not in (2, 3) or type(zarr_format) is not int:
        raise ValueError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    if to == STRING and zarr_format != 3:
        raise ValueError(
            "to='string' writes Zarr V3 (the string data type has no V2 form here); "
            f"got zarr_format={zarr_format}"
        )


def compressor_json(compressors: Any, zarr_format: int) -> tuple[dict[str, Any], ...]:
    """The destination's bytes-to-bytes codecs as JSON (V3 objects or one V2 compressor)."""
    if isinstance(compressors, str) and compressors == DEFAULT_COMPRESSORS:
        return (dict(_ZSTD_V3) if zarr_format == 3 else dict(_ZSTD_V2),)
    if compressors is None:
        return ()
    if (
        isinstance(compressors, (dict, str))
        or hasattr(compressors, "to_dict")
        or hasattr(compressors, "get_config")
    ):
        compressors = [compressors]
    out: list[dict[str, Any]] = []
    for codec in compressors:
        if hasattr(codec, "to_dict"):
            codec = codec.to_dict()
        elif hasattr(codec, "get_config"):
            config = dict(codec.get_config())
            codec = (
                config
                if zarr_format == 2
                else {"name": f"numcodecs.{config.pop('id')}", "configuration": config}
            )
        elif isinstance(codec, str):
            codec = {"name": codec} if zarr_format == 3 else {"id": codec}
        if not isinstance(codec, dict):
            raise ValueError(f"compressors: expected codec objects or JSON dicts, got {codec!r}")
        # fails now, not after the chunks; the metadata then says every setting
        # the chunks are compressed with (the chunk-source layer's defaults)
        spec = parse_codec(codec, zarr_format, "compressors")
        written = spec.to_json(zarr_format)
        if zarr_format == 2 and spec.typesize is not None:
            written["typesize"] = spec.typesize
        out.append(written)
    if zarr_format == 2 and len(out) > 1:
        raise ValueError(f"compressors: Zarr V2 holds one compressor, got {len(out)}")
    return tuple(out)


def check_chunk_shape(chunks: Sequence[int] | None) -> Index | None:
    if chunks is None:
        return None
    # Integers only (operator.index): 2.5 or "4" is refused, not cut to 2 or read as 4.
    try:
        given = tuple(chunks)  # once: chunks may be an iterator
        checked = tuple(operator.index(c) for c in given)
    except TypeError:
        raise ValueError(f"chunks must be a sequence of positive ints, got {chunks!r}") from None
    if any(type(c) is bool or c < 1 for c in given):
        raise ValueError(f"chunks must be positive ints, one per dimension, got {list(given)}")
    return checked


@dataclass(frozen=True)
class ConvertOptions:
    """The checked options of :func:`convert` that shape each converted array."""

    to: str
    zarr_format: int
    endian: str
    length_bytes: int | str | None  # an int, "auto" or None (see convert)
    compressors: tuple[dict[str, Any], ...]  # JSON, as the destination's metadata holds them
    chunks: Index | None
    resume: bool
    skip_invalid: bool


def compressor_option(compressors: tuple[dict[str, Any], ...], zarr_format: int) -> str | None:
    """``--compressor`` for these codecs: None for the default, "?" when none says them."""
    if compressors == compressor_json(DEFAULT_COMPRESSORS, zarr_format):
        return None
    if not compressors:
        return "none"
    if len(compressors) == 1:
        codec = compressors[0]
        name = codec.get("name", codec.get("id"))
        level = (codec.get("configuration") or codec).get("level")
        if name in ("zstd", "gzip") and isinstance(level, int):
            return f"{name}:{level}"
    return "?"
