"""What compiled callers need to use the kernels without Python: the C API.

The kernels are published as a table of C function pointers in the capsule
``fixedutf32._C_API`` (``fixedutf32/fixedutf32.h`` declares it and loads it
with ``fixedutf32_import()``), and for Cython in ``fixedutf32/kernels.pxd``.
docs/capi.md is the guide.
"""

from __future__ import annotations

import pathlib

from . import _kernels

__all__ = ["get_include"]

# (major, minor) of the table in the capsule: an extension built against
# major M, minor m loads it when the major is M and the minor at least m.
C_API_VERSION: tuple[int, int] = _kernels.C_API_VERSION
# The capsule itself (also ``fixedutf32._C_API``), named
# b"fixedutf32._kernels._C_API": for code that reads the table through
# ``PyCapsule_GetPointer`` from Python (ctypes, cffi) rather than C.
C_API: object = _kernels._C_API


def get_include() -> str:
    """Return the folder that holds the C header ``fixedutf32/fixedutf32.h``.

    Put it on the include path of an extension that calls the kernels from C
    or Cython (``Extension(..., include_dirs=[fixedutf32.get_include()])``),
    as with ``numpy.get_include()``.

    Returns
    -------
    str
        An absolute path inside the installed package.

    Examples
    --------
    >>> import os, fixedutf32
    >>> os.path.isfile(os.path.join(fixedutf32.get_include(), "fixedutf32", "fixedutf32.h"))
    True
    """
    return str(pathlib.Path(__file__).resolve().parent / "include")
