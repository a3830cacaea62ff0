"""The C API and the Cython API, proven by real callers.

Two small extensions in tests/capi_callers/ are compiled here, once per
session, against the installed package only: a C one that includes
``fixedutf32/fixedutf32.h`` (from ``fixedutf32.get_include()``) and loads the
capsule, and a Cython one that cimports ``fixedutf32.kernels``.  Each
decodes, validates and transcodes chunks with the GIL released; their
statuses and outputs are compared with the Python API's on the same inputs,
from several threads at once.

The compiler runs in a subprocess without the AddressSanitizer runtime that
the sanitizer build of CI preloads (the compiler is not instrumented); the
extensions themselves are not instrumented either, and load into the
instrumented interpreter as any uninstrumented library does.
"""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import fixedutf32
from fixedutf32 import InvalidCodePointError, InvalidUTF8Error, _kernels

CALLERS = pathlib.Path(__file__).parent / "capi_callers"
SETUP = """\
import os, sys
from setuptools import Extension, setup

include = [os.environ["FIXEDUTF32_INCLUDE"]]
if sys.argv[1] == "c":
    modules = [Extension("fu32_c_caller", ["c_caller.c"], include_dirs=include)]
else:
    import Cython
    from Cython.Build import cythonize

    directives = {"language_level": 3}
    if tuple(int(part) for part in Cython.__version__.split(".")[:2]) >= (3, 1):
        directives["freethreading_compatible"] = True
    modules = cythonize(
        [Extension("fu32_cython_caller", ["cython_caller.pyx"], include_dirs=include)],
        # Where the package is installed: Cython finds fixedutf32/kernels.pxd there
        # (site-packages for a wheel, src/ for an editable install).
        include_path=[os.environ["FIXEDUTF32_PACKAGE_PARENT"]],
        compiler_directives=directives,
        quiet=True,
    )
setup(name="fu32_callers", ext_modules=modules, script_args=["build_ext", "--inplace", "-q"])
"""
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")


def _compiler_missing():
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if os.name != "nt" and shutil.which(compiler) is None:
        return f"no C compiler: {compiler!r} (sysconfig CC) is not on PATH"
    return None


def _build(folder, kind, source, module_name):
    reason = _compiler_missing()
    if reason:
        pytest.skip(reason)
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is not installed: the test callers cannot be built")
    if kind == "cython" and importlib.util.find_spec("Cython") is None:
        pytest.skip("Cython is not installed: the Cython API's caller cannot be built")
    folder.mkdir()
    shutil.copy(CALLERS / source, folder / source)
    (folder / "setup.py").write_text(SETUP)
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "PYTHONMALLOC")}
    env["FIXEDUTF32_INCLUDE"] = fixedutf32.get_include()
    env["FIXEDUTF32_PACKAGE_PARENT"] = str(pathlib.Path(fixedutf32.__file__).parents[1])
    # The build must not import fixedutf32 itself: under the sanitizer build its
    # module needs the preloaded runtime, which the compiler must not have.
    proc = subprocess.run(
        [sys.executable, "setup.py", kind],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode:
        log = proc.stdout[-3000:] + proc.stderr[-3000:]
        if SANITIZED:
            pytest.skip(
                f"building the {kind} caller failed under AddressSanitizer's settings: {log}"
            )
        pytest.fail(f"building the {kind} caller failed:\n{log}")
    built = [
        p
        for p in folder.iterdir()
        if p.name.startswith(module_name) and p.suffix in (".so", ".pyd")
    ]
    assert len(built) == 1, list(folder.iterdir())
    spec = importlib.util.spec_from_file_location(module_name, built[0])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def c_caller(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("capi") / "c", "c", "c_caller.c", "fu32_c_caller")


@pytest.fixture(scope="session")
def cython_caller(tmp_path_factory):
    folder = tmp_path_factory.mktemp("capi") / "cython"
    return _build(folder, "cython", "cython_caller.pyx", "fu32_cython_caller")


@pytest.fixture(params=["c", "cython"])
def caller(request):
    return request.getfixturevalue(f"{request.param}_caller")


WIDTH = 8
TEXTS = ["", "a", "Hi", "ünïcødé", "日本語テキスト", "😀 emoji", "x" * WIDTH, "\x00mid"]


def _chunk(texts=TEXTS, endian="little"):
    return bytes(fixedutf32.encode_chunk(np.array(texts, f"U{WIDTH}"), 4 * WIDTH, endian=endian))


def _planted(chunk, unit, value, endian="little"):
    """``chunk`` with code unit ``unit`` replaced by ``value``."""
    raw = bytearray(chunk)
    raw[4 * unit : 4 * unit + 4] = value.to_bytes(4, endian)
    return bytes(raw)


# Chunks with one bad unit at many places: (chunk, endian).
BAD_CHUNKS = [
    (_planted(_chunk(endian=endian), unit, value, endian), endian)
    for endian in ("little", "big")
    for unit in (0, 5, 17, 31, 63)
    for value in (0xD800, 0xDFFF, 0x110000, 0xFFFFFFFF)
]
GOOD_CHUNKS = [(_chunk(endian=endian), endian) for endian in ("little", "big")]
KIND = {"surrogate": _kernels.SURROGATE, "too_large": _kernels.TOO_LARGE}


def _python_status(call):
    """What the Python API reports, as a status: (kind, element, position, code point)."""
    try:
        call()
    except InvalidCodePointError as error:
        return (KIND[error.kind], error.index, error.position, error.code_point)
    return _kernels.OK_STATUS


def _flags(endian):
    swapped = endian != sys.byteorder
    return (_kernels.SRC_SWAPPED | _kernels.SWAP) if swapped else 0


def test_import_and_abi(caller):
    assert caller.simd_level() == fixedutf32.get_simd_level()
    assert fixedutf32.C_API_VERSION[0] == 1
    assert fixedutf32._C_API is _kernels._C_API


def test_simd_level_follows_python(caller):
    for level in fixedutf32.available_simd_levels():
        previous = fixedutf32.set_simd_level(level)
        try:
            assert caller.simd_level() == level
        finally:
            fixedutf32.set_simd_level(previous)


@pytest.mark.parametrize(("chunk", "endian"), GOOD_CHUNKS + BAD_CHUNKS)
def test_validate_and_decode_match_python(caller, chunk, endian):
    swapped = _kernels.SRC_SWAPPED if endian != sys.byteorder else 0
    expected = _python_status(lambda: fixedutf32.validate(chunk, 4 * WIDTH, endian=endian))
    assert caller.validate(chunk, WIDTH, swapped) == expected
    status, decoded = caller.decode(chunk, WIDTH, _flags(endian) | _kernels.VALIDATE)
    assert status == expected
    # In place: swapped and checked, or left exactly as it was.
    buffer = bytearray(chunk)
    assert caller.decode_in_place(buffer, WIDTH, swapped | _kernels.VALIDATE) == expected
    if expected == _kernels.OK_STATUS:
        python = fixedutf32.decode_chunk(chunk, 4 * WIDTH, endian=endian)
        assert bytes(decoded) == python.tobytes() == bytes(buffer)
        assert python.tolist() == TEXTS
    else:
        assert decoded is None
        assert bytes(buffer) == chunk


@pytest.mark.parametrize(("chunk", "endian"), GOOD_CHUNKS + BAD_CHUNKS)
def test_to_utf8_matches_python(caller, chunk, endian):
    swapped = _kernels.SRC_SWAPPED if endian != sys.byteorder else 0
    status, values, offsets = caller.to_utf8(chunk, WIDTH, swapped | _kernels.VALIDATE)
    expected = _python_status(lambda: fixedutf32.to_utf8(chunk, 4 * WIDTH, endian=endian))
    assert status == expected
    if expected == _kernels.OK_STATUS:
        python_offsets, python_values = fixedutf32.to_utf8(chunk, 4 * WIDTH, endian=endian)
        assert np.frombuffer(offsets, np.int64).tolist() == python_offsets.tolist()
        assert values == python_values.tobytes() == "".join(TEXTS).encode()


UTF8_CASES = [
    [b"ab", "ü".encode(), b"\xf0\x9f\x98\x80"],
    [b"ok", b"\xc3"],  # cut short
    [b"\x80"],  # stray continuation
    [b"x", b"a\xed\xa0\x80"],  # surrogate
    [b"\xc0\x80"],  # overlong
    [b"\xf4\x90\x80\x80"],  # above U+10FFFF
    [b"\xff"],
    [b"x" * (WIDTH + 1)],  # too long for the element
]


def _python_utf8_status(offsets, values):
    try:
        fixedutf32.from_utf8(offsets, values, 4 * WIDTH)
    except InvalidUTF8Error as error:
        return (error.index, error.byte_offset)
    except fixedutf32.StringTooLongError as error:
        return (error.index, "too long")
    return None


@pytest.mark.parametrize("strings", UTF8_CASES)
def test_from_utf8_matches_python(caller, strings):
    values = b"".join(strings)
    offsets = np.cumsum([0] + [len(s) for s in strings]).astype(np.int64)
    status, chunk = caller.from_utf8(offsets.tobytes(), values, WIDTH, 0)
    expected = _python_utf8_status(offsets, values)
    if expected is None:
        assert status == _kernels.OK_STATUS
        python = fixedutf32.from_utf8(offsets, values, 4 * WIDTH)
        assert bytes(chunk) == python.tobytes()
    elif expected[1] == "too long":
        assert (status[0], status[1]) == (_kernels.STRING_TOO_LONG, expected[0])
    else:
        assert chunk is None
        assert status[0] in range(_kernels.UTF8_HEADER_BITS, _kernels.UTF8_SURROGATE + 1)
        assert (status[1], status[2]) == expected


def test_bad_argument_touches_nothing(c_caller):
    # A width of 0 would divide by zero in a kernel: the entry refuses it.
    assert c_caller.bad_width()[0] == 64  # FIXEDUTF32_BAD_ARGUMENT
    buffer = bytearray(_chunk())
    # 9 units are not a whole number of elements of 8 units.
    status = c_caller.decode_in_place(memoryview(buffer)[:36], WIDTH, _kernels.SRC_SWAPPED)
    assert status[0] == 64
    assert bytes(buffer) == _chunk()


def test_threads(caller):
    """Many calls at once on shared and separate buffers, each the Python API's answer."""
    cases = (GOOD_CHUNKS + BAD_CHUNKS) * 6
    expected = [
        _python_status(lambda c=c, e=e: fixedutf32.validate(c, 4 * WIDTH, endian=e))
        for c, e in cases
    ]
    shared_utf8 = fixedutf32.to_utf8(GOOD_CHUNKS[0][0], 4 * WIDTH)

    def work(index):
        chunk, endian = cases[index]
        swapped = _kernels.SRC_SWAPPED if endian != sys.byteorder else 0
        results = [caller.validate(chunk, WIDTH, swapped)]
        results.append(caller.decode(chunk, WIDTH, _flags(endian) | _kernels.VALIDATE)[0])
        results.append(caller.to_utf8(chunk, WIDTH, swapped | _kernels.VALIDATE)[0])
        # The same UTF-8 buffers, read by every thread.
        status, out = caller.from_utf8(shared_utf8[0].tobytes(), shared_utf8[1].tobytes(), WIDTH, 0)
        assert status == _kernels.OK_STATUS and bytes(out) == GOOD_CHUNKS[0][0]
        return results

    with ThreadPoolExecutor(8) as pool:
        for index, results in zip(range(len(cases)), pool.map(work, range(len(cases)))):
            assert results == [expected[index]] * 3, index
