"""Whole Zarr stores: ``check`` every fixed_length_utf32 array, ``convert`` a store.

``check`` reads every stored chunk of every fixed_length_utf32 array in a
hierarchy (Zarr V2 and V3, compressed and sharded) and reports what breaks the
spec: metadata, chunks that do not decode, every invalid code point with its
coordinates.  ``convert`` writes a new store with those arrays as V3
``fixed_length_utf32`` (a new byte order or width) or as zarr-python's
variable-length ``string`` type, validating each chunk before it is written.

Both need the ``zarr`` extra and run on threads (the kernels release the GIL)
or, with the ``dask`` extra, on a Dask cluster (each task opens the store
itself and only small reports come back).
"""

from ..errors import InvalidChunkError, StoreError
from ._check import ArrayReport, CheckReport, Leftover, Problem, check
from ._convert import ConvertReport, convert

# Shown, in tracebacks and reprs, by the module they are imported from.
for _public in (
    ArrayReport,
    CheckReport,
    Leftover,
    Problem,
    ConvertReport,
):
    _public.__module__ = __name__
del _public

__all__ = [
    "check",
    "convert",
    "CheckReport",
    "ArrayReport",
    "Leftover",
    "ConvertReport",
    "Problem",
    "StoreError",
    "InvalidChunkError",
]
