"""zarr-python integration: a strict ``bytes`` codec and a codec pipeline.

``enable()`` makes zarr-python read and write every ``fixed_length_utf32`` array (and every
Zarr V2 ``<U``/``>U`` array) through fixedutf32's kernels: chunks are validated, decoded with
the GIL released, and metadata that breaks the specification raises
:class:`fixedutf32.MetadataError`. Importing this module changes nothing in zarr-python: zarr
finds the classes through the entry points ``zarr.codecs`` (``bytes``) and
``zarr.codec_pipeline`` and uses them when its configuration names them, as :func:`enable`
does (it also installs the strict data type)::

    zarr.config.set({"codecs.bytes": "fixedutf32.zarr.BytesCodec",
                     "codec_pipeline.path": "fixedutf32.zarr.CodecPipeline"})
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

try:
    import zarr
    from zarr.dtype import FixedLengthUTF32 as _ZarrFixedLengthUTF32
    from zarr.dtype import data_type_registry
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"fixedutf32.zarr needs zarr-python >= 3.1 ({exc}); install it with "
        f"pip install 'fixedutf32[zarr]'"
    ) from exc

from ..errors import InvalidChunkCodePointError, StringTooLongForArrayError, UncheckedChunksWarning
from ._buffer import POOLED_NDBUFFER_PATH, PooledNDBuffer
from ._codec import _DTYPE_NAME, BytesCodec, StrictFixedLengthUTF32
from ._pipeline import BATCHED_PATH, FALLBACK_KEY, CodecPipeline
from ._setitem import setitem

__all__ = [
    "BytesCodec",
    "CodecPipeline",
    "PooledNDBuffer",
    "StrictFixedLengthUTF32",
    "InvalidChunkCodePointError",
    "StringTooLongForArrayError",
    "UncheckedChunksWarning",
    "enable",
    "disable",
    "enabled",
    "setitem",
]

BYTES_CODEC_PATH = "fixedutf32.zarr.BytesCodec"
# Also an entry point (zarr.ndbuffer); registered here too for a tree not installed.
zarr.registry.register_ndbuffer(PooledNDBuffer, POOLED_NDBUFFER_PATH)
PIPELINE_PATH = "fixedutf32.zarr.CodecPipeline"
_ZARR_BYTES_CODEC_PATH = "zarr.codecs.bytes.BytesCodec"


# --------------------------------------------------------------------------
# Switching it on and off

_CONFIG_KEYS = ("codecs.bytes", "codec_pipeline.path")
_ZARR_DEFAULTS = {"codecs.bytes": _ZARR_BYTES_CODEC_PATH, "codec_pipeline.path": BATCHED_PATH}
_OURS = {"codecs.bytes": BYTES_CODEC_PATH, "codec_pipeline.path": PIPELINE_PATH}
# What enable() replaced, for disable() to put back: the two settings, the
# fallback setting and the registered data type.
_replaced: dict[str, Any] = {}


def _registered_dtype() -> Any:
    """The class zarr's data-type registry holds for ``fixed_length_utf32``."""
    return data_type_registry.contents.get(_DTYPE_NAME)


def _settings_for_enable() -> dict[str, Any]:
    """The zarr settings enable() makes: ours, and the pipeline they replace as fallback."""
    settings: dict[str, Any] = dict(_OURS)
    current = zarr.config.get("codec_pipeline.path", None)
    if current not in (None, PIPELINE_PATH):
        # the pipeline the user chose goes on handling every other array
        settings[FALLBACK_KEY] = current
    return settings


def enable() -> None:
    """Make zarr-python use fixedutf32 for fixed_length_utf32 arrays.

    Sets ``codecs.bytes`` to ``fixedutf32.zarr.BytesCodec`` and
    ``codec_pipeline.path`` to ``fixedutf32.zarr.CodecPipeline`` in
    ``zarr.config``, and registers :class:`StrictFixedLengthUTF32` for
    ``fixed_length_utf32`` in zarr's data-type registry.  The pipeline that
    was configured before (zarr's ``BatchedCodecPipeline``,
    ``FusedCodecPipeline``, a third party's) becomes the fallback, the
    ``fixedutf32.fallback_pipeline`` setting: arrays of other data types go
    on being read and written by it.  Arrays opened afterwards use these
    classes (an array already open keeps its own).  Calling it again
    changes nothing.  Settings are not checked here: a fallback that names
    no pipeline class raises ``ValueError`` when an array is opened.

    Returns
    -------
    None

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> fixedutf32.zarr.enable()
    >>> zarr.config.get("codec_pipeline.path")
    'fixedutf32.zarr.CodecPipeline'
    >>> zarr.config.get("fixedutf32.fallback_pipeline")
    'zarr.core.codec_pipeline.BatchedCodecPipeline'
    >>> fixedutf32.zarr.disable()
    >>> zarr.config.get("codec_pipeline.path")
    'zarr.core.codec_pipeline.BatchedCodecPipeline'
    """
    settings = _settings_for_enable()
    for key in (*_CONFIG_KEYS, FALLBACK_KEY):
        current = zarr.config.get(key, None)
        if key in settings and current != settings[key] and key not in _replaced:
            _replaced[key] = current
    dtype_cls = _registered_dtype()
    if dtype_cls is not StrictFixedLengthUTF32:
        _replaced["dtype"] = dtype_cls
    zarr.config.set(settings)
    data_type_registry.register(_DTYPE_NAME, StrictFixedLengthUTF32)


def disable() -> None:
    """Undo :func:`enable`: zarr-python's own classes again.

    Each setting that names a fixedutf32 class goes back to what
    :func:`enable` found; ``codec_pipeline.path`` goes back to the fallback
    pipeline if :func:`enable` did not set it (the integration came from the
    environment or a config file), else to zarr's default.  The fallback
    setting goes back to what :func:`enable` found, and zarr's
    ``FixedLengthUTF32`` back into the data-type registry.  Settings that
    name other classes are left alone.

    Returns
    -------
    None

    Examples
    --------
    The pipeline chosen before :func:`enable` comes back:

    >>> import zarr, fixedutf32.zarr
    >>> with zarr.config.set({"codec_pipeline.path": "my_package.Pipeline"}):
    ...     fixedutf32.zarr.enable()
    ...     fixedutf32.zarr.disable()
    ...     zarr.config.get("codec_pipeline.path")
    'my_package.Pipeline'
    """
    fallback = zarr.config.get(FALLBACK_KEY, None)
    updates: dict[str, Any] = {}
    for key in _CONFIG_KEYS:
        if zarr.config.get(key, None) != _OURS[key]:
            _replaced.pop(key, None)
            continue
        if key in _replaced:
            previous = _replaced.pop(key)
        elif key == "codec_pipeline.path" and fallback:
            previous = fallback
        else:
            previous = None
        updates[key] = previous if previous not in (None, _OURS[key]) else _ZARR_DEFAULTS[key]
    if FALLBACK_KEY in _replaced:
        updates[FALLBACK_KEY] = _replaced.pop(FALLBACK_KEY)
    if updates:
        zarr.config.set(updates)
    previous_dtype = _replaced.pop("dtype", None)
    if _registered_dtype() is StrictFixedLengthUTF32:
        data_type_registry.register(_DTYPE_NAME, previous_dtype or _ZarrFixedLengthUTF32)


@contextlib.contextmanager
def enabled() -> Iterator[None]:
    """Use fixedutf32 within a ``with`` block; restore the previous state after.

    Yields
    ------
    None

    Examples
    --------
    >>> import zarr, fixedutf32.zarr
    >>> with fixedutf32.zarr.enabled():
    ...     zarr.config.get("codecs.bytes")
    'fixedutf32.zarr.BytesCodec'
    >>> zarr.config.get("codecs.bytes")
    'zarr.codecs.bytes.BytesCodec'
    """
    dtype_cls = _registered_dtype()
    replaced = dict(_replaced)
    try:
        with zarr.config.set(_settings_for_enable()):
            data_type_registry.register(_DTYPE_NAME, StrictFixedLengthUTF32)
            yield
    finally:
        data_type_registry.register(_DTYPE_NAME, dtype_cls)
        _replaced.clear()
        _replaced.update(replaced)
