"""Build the Cython kernels.

This file is the one place for the Cython directives (``_kernels.pyx`` has no
``# cython:`` header, which would override them).

Environment switches (off by default):

FIXEDUTF32_DEBUG=1     bounds and initialisation checks on, -O0 -g
FIXEDUTF32_SANITIZE=1  build with -fsanitize=address,undefined and -g

The default build adds no -march flag: the SIMD paths are chosen at run time,
so one wheel is fast on every CPU.  CFLAGS from the environment are honoured:
-O3 is added only when CFLAGS names no optimisation level.  MSVC (Windows)
gets no extra flags.

Each combination of switches cythonizes and compiles under its own folder in
build/, so switching between them never reuses a module built the other way
(Cython and setuptools only compare timestamps).  A change of compiler or
CFLAGS is not detected: remove build/ first.
"""

import glob
import os

import Cython
from Cython.Build import cythonize
from setuptools import Extension, setup


def _switch(name):
    return os.environ.get(name, "") not in ("", "0")


DEBUG = _switch("FIXEDUTF32_DEBUG")
SANITIZE = _switch("FIXEDUTF32_SANITIZE")
BUILD_BASE = os.path.join(
    "build", ("debug" if DEBUG else "release") + ("-sanitize" if SANITIZE else "")
)

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}
# On free-threaded Python the module runs without the GIL: the table in use
# is an atomic pointer (csrc/capi.h), the buffer pool has a lock, and the rest
# of its state is set once at import.  Cython 3.1 is the first to know it.
if tuple(int(part) for part in Cython.__version__.split(".")[:2]) >= (3, 1):
    directives["freethreading_compatible"] = True


def _compile_args():
    """Extra flags for GCC and Clang; the user's CFLAGS come before them."""
    if os.name == "nt":
        return [], []
    compile_args, link_args = [], []
    if DEBUG:
        compile_args += ["-O0", "-g"]
    elif not any(flag.startswith("-O") for flag in os.environ.get("CFLAGS", "").split()):
        compile_args.append("-O3")
    if SANITIZE:
        compile_args += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
        link_args += ["-fsanitize=address,undefined"]
    return compile_args, link_args


compile_args, link_args = _compile_args()
# Every header under csrc/ (one folder per instruction set) and the public
# one under include/: a change to any of them rebuilds the module.
headers = sorted(
    glob.glob("src/fixedutf32/csrc/**/*.h", recursive=True)
    + glob.glob("src/fixedutf32/include/**/*.h", recursive=True)
)
extensions = [
    Extension(
        "fixedutf32._kernels",
        sources=["src/fixedutf32/_kernels.pyx"],
        include_dirs=["src/fixedutf32"],
        depends=[
            *glob.glob("src/fixedutf32/*.pxi"),
            *headers,
        ],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
]

setup(
    ext_modules=cythonize(
        extensions, compiler_directives=directives, build_dir=os.path.join(BUILD_BASE, "cython")
    ),
    options={"build": {"build_base": BUILD_BASE}},
)
