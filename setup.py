"""Build the Cython kernels.

Environment switches (off by default):

FIXEDUTF32_DEBUG=1     bounds checks back on, -O0 -g
FIXEDUTF32_SANITIZE=1  build with -fsanitize=address,undefined

The default build adds no -march flag: the SIMD paths are chosen at run time,
so one wheel is fast on every CPU.  CFLAGS from the environment are honoured.
"""

import os

from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("FIXEDUTF32_DEBUG", "") not in ("", "0")
SANITIZE = os.environ.get("FIXEDUTF32_SANITIZE", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}

compile_args = []
link_args = []
if os.name != "nt":
    compile_args.append("-O0" if DEBUG else "-O3")
    if DEBUG:
        compile_args.append("-g")
    if SANITIZE:
        compile_args += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
        link_args += ["-fsanitize=address,undefined"]

extensions = [
    Extension(
        "fixedutf32._kernels",
        sources=["src/fixedutf32/_kernels.pyx"],
        include_dirs=["src/fixedutf32"],
        depends=["src/fixedutf32/_transcode.pxi"] + [f"src/fixedutf32/csrc/{name}.h" for name in ("buffer", "chunk", "chunk_avx2", "chunk_portable", "common", "cpu", "utf8", "utf8_avx2", "utf8_scalar", "utf8_tables")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
    )
]

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
