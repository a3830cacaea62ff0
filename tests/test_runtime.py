"""Dispatch selection, the output buffer pool and the bench command."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fixedutf32
from fixedutf32 import _kernels


def run_python(code, **env):
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_environment_variable_forces_a_level(simd_level):
    result = run_python(
        "import fixedutf32; print(fixedutf32.get_simd_level())", FIXEDUTF32_SIMD=simd_level
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == simd_level


def test_environment_variable_best_is_the_default():
    best = fixedutf32.available_simd_levels()[-1]
    code = "import fixedutf32; print(fixedutf32.get_simd_level())"
    env = {key: value for key, value in os.environ.items() if key != "FIXEDUTF32_SIMD"}
    unset = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert unset.returncode == 0, unset.stderr
    assert unset.stdout.strip() == best
    for value, expected in (
        ("best", best),
        ("", best),
        ("portable", "portable"),
        ("scalar", "portable"),
    ):
        result = run_python(code, FIXEDUTF32_SIMD=value)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == expected, value


# --- the level chooser ---------------------------------------------------------

# Private on purpose: the public functions see only this CPU; the chooser's
# answer for other CPUs (a feature mask) is reachable only in the kernel module.
FEATURES = _kernels.CPU_FEATURES
ALL_FEATURES = 0
for _bit in FEATURES.values():
    ALL_FEATURES |= _bit
# What the chooser gives a CPU and OS with every feature the AVX2 code needs.
AVX2_IF_BUILT = "avx2" if _kernels.AVX2_COMPILED else "portable"


def features(*names):
    mask = 0
    for name in names:
        mask |= FEATURES[name]
    return mask


@pytest.mark.parametrize(
    "mask, expected",
    [
        (ALL_FEATURES, AVX2_IF_BUILT),
        (0, "portable"),
        (features("avx2"), "portable"),
        (ALL_FEATURES & ~features("bmi2"), "portable"),  # a VM that hides BMI2
        (ALL_FEATURES & ~features("os_ymm"), "portable"),  # the OS does not save YMM
        (ALL_FEATURES & ~features("osxsave"), "portable"),  # XGETBV may not run
        (ALL_FEATURES & ~features("lzcnt"), "portable"),  # lzcnt would run as bsr
        (ALL_FEATURES & ~features("avx2"), "portable"),  # an AVX-only CPU
        (features("avx2", "bmi1", "bmi2", "lzcnt", "popcnt"), "portable"),  # no OS state
        (ALL_FEATURES | 0x10000, AVX2_IF_BUILT),  # unknown bits do not matter
    ],
)
def test_level_chooser_table(mask, expected):
    assert _kernels._level_for_features(mask) == expected


@pytest.mark.parametrize("missing", sorted(FEATURES))
def test_each_required_feature_alone_decides(missing):
    assert _kernels._level_for_features(ALL_FEATURES & ~FEATURES[missing]) == "portable"


def test_required_features_match_the_compiled_target_flags():
    # Every instruction set the AVX2 functions are compiled for is required.
    flag_bits = {
        "avx2": "avx2",
        "bmi": "bmi1",
        "bmi2": "bmi2",
        "lzcnt": "lzcnt",
        "popcnt": "popcnt",
    }
    flags = _kernels.AVX2_TARGET_FLAGS.split(",")
    assert set(flags) == set(flag_bits)
    for flag in flags:
        assert _kernels.AVX2_NEEDS & FEATURES[flag_bits[flag]]
    assert _kernels.AVX2_NEEDS == ALL_FEATURES


def test_this_cpu_level_comes_from_the_chooser():
    mask = _kernels._cpu_features()
    assert fixedutf32.available_simd_levels()[-1] == _kernels._level_for_features(mask)


def test_cpu_features_agree_with_the_kernel_flags():
    cpuinfo = Path("/proc/cpuinfo")
    if not _kernels.AVX2_COMPILED or not cpuinfo.exists():
        pytest.skip("reads /proc/cpuinfo of an x86-64 Linux build")
    line = next(line for line in cpuinfo.read_text().splitlines() if line.startswith("flags"))
    flags = set(line.split(":", 1)[1].split())
    mask = _kernels._cpu_features()
    for flag, name in (
        ("avx2", "avx2"),
        ("bmi1", "bmi1"),
        ("bmi2", "bmi2"),
        ("abm", "lzcnt"),
        ("popcnt", "popcnt"),
        ("avx", "avx"),
    ):
        assert bool(mask & FEATURES[name]) == (flag in flags), flag


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="unknown SIMD level 'sse9'"):
        fixedutf32.set_simd_level("sse9")
    result = run_python("import fixedutf32", FIXEDUTF32_SIMD="sse9")
    assert result.returncode != 0 and "unknown SIMD level" in result.stderr


def test_set_simd_level_returns_previous():
    current = fixedutf32.get_simd_level()
    assert fixedutf32.set_simd_level("portable") == current
    assert fixedutf32.get_simd_level() == "portable"
    fixedutf32.set_simd_level(current)


def test_scalar_is_an_alias_of_portable():
    current = fixedutf32.get_simd_level()
    try:
        fixedutf32.set_simd_level("scalar")
        assert fixedutf32.get_simd_level() == "portable"
        assert fixedutf32.set_simd_level(current) == "portable"
    finally:
        fixedutf32.set_simd_level(current)
    assert "scalar" not in fixedutf32.available_simd_levels()


# --- the output buffer pool ---------------------------------------------------


def big_chunk():
    # The pool keeps only buffers above a kernel constant: the chunk must be larger.
    return np.array(
        ["big endian text"] * (2 * _kernels.POOL_MIN_BYTES // 64), dtype=">U16"
    ).tobytes()


def address(array):
    return array.__array_interface__["data"][0]


def test_pool_reuses_freed_output_memory():
    previous = fixedutf32.set_buffer_pool_limit(256 << 20)
    try:
        raw = big_chunk()
        first = fixedutf32.decode_chunk(raw, 64, endian="big")
        first_address = address(first)
        del first
        assert fixedutf32.buffer_pool_bytes() >= len(raw)
        second = fixedutf32.decode_chunk(raw, 64, endian="big")
        assert address(second) == first_address
        assert second.tolist() == ["big endian text"] * len(second)
        # While a result is alive its memory is never handed out again.
        third = fixedutf32.decode_chunk(raw, 64, endian="big")
        assert not np.shares_memory(second, third)
    finally:
        fixedutf32.set_buffer_pool_limit(previous)


def test_pooled_buffers_freed_at_interpreter_exit_say_nothing():
    # A thread-local scratch buffer lives until the interpreter tears the module down; freeing
    # it then must not touch the module's Python globals (it printed "Error in sys.excepthook").
    code = (  # kept by the module itself: freed as its globals are cleared, after the others
        "import fixedutf32._kernels as k\n"
        "k.zz_kept = [k.new_buffer((1 << 16) + i) for i in range(80)]\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == ""


@pytest.mark.parametrize("nbytes", [1, 100, 4096, 300_000, 5 << 20])
def test_buffers_files_are_read_into_start_on_a_cache_line(nbytes):
    # NumPy's large arrays start 16 bytes into a page, where reading a file into them ran 7x
    # slower here; every scratch and new buffer starts on 64 bytes instead.
    from fixedutf32._pool import aligned_empty, new_array
    from fixedutf32._source.scratch import Scratch

    scratch = Scratch()
    arrays = [new_array(nbytes, np.uint8), aligned_empty(nbytes // 4 + 1, np.uint32)]
    arrays += [scratch.bytes("chunk", nbytes), scratch.intp("list", nbytes // 8 + 1)]
    for array in arrays:
        assert array.ctypes.data % 64 == 0 and array.flags.writeable and array.ndim == 1
    assert arrays[0].size == nbytes and arrays[1].size == nbytes // 4 + 1


def test_pool_limit_zero_frees_everything():
    previous = fixedutf32.set_buffer_pool_limit(256 << 20)
    try:
        fixedutf32.decode_chunk(big_chunk(), 64, endian="big")
        assert fixedutf32.buffer_pool_bytes() > 0
        assert fixedutf32.set_buffer_pool_limit(0) == 256 << 20
        assert fixedutf32.buffer_pool_bytes() == 0
        fixedutf32.decode_chunk(big_chunk(), 64, endian="big")
        assert fixedutf32.buffer_pool_bytes() == 0
    finally:
        fixedutf32.set_buffer_pool_limit(previous)
    for bad in (-1, 2**63):
        with pytest.raises(
            ValueError, match=rf"must be between 0 and {sys.maxsize} bytes, got {bad}"
        ):
            fixedutf32.set_buffer_pool_limit(bad)
    with pytest.raises(TypeError, match="the pool limit must be an int"):
        fixedutf32.set_buffer_pool_limit(1.5)
    assert fixedutf32.set_buffer_pool_limit(previous) == previous  # nothing changed


def test_pooled_results_are_ordinary_writable_arrays():
    result = fixedutf32.decode_chunk(big_chunk(), 64, endian="big")
    assert result.flags.writeable and result.flags.c_contiguous
    result[0] = "changed"
    assert result[0] == "changed"
    encoded = fixedutf32.encode_chunk(result, endian="big")
    assert isinstance(encoded, np.ndarray) and encoded.dtype == np.uint8


# --- the bench command ----------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        ["-m", "fixedutf32"],
        ["-c", "import sys; from fixedutf32.__main__ import main; sys.exit(main())"],
    ],
)
def test_bench_command_runs_and_reports_json(entry):
    result = subprocess.run(
        [
            sys.executable,
            *entry,
            "bench",
            "--sizes",
            "64KiB",
            "--threads",
            "2",
            "--repeat",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    kernels = {row["kernel"] for row in report["rows"]}
    assert {
        "validate",
        "decode swap -> new",
        "decode swap in place",
        "encode -> swapped",
        "repad widen U8->U16",
        "repad narrow U16->U8",
        "str_lengths",
    } <= kernels
    for row in report["rows"]:
        # Each figure is a ratio of two timings of this run, consistent with
        # the others; the verdict follows from the floor ratio and the target.
        assert row["size"] == 64 * 1024
        assert row["memcpy_gbps"] == pytest.approx(row["gbps"] / row["ratio_memcpy"])
        if row["floor"] == "memcpy":
            assert row["ratio_floor"] == row["ratio_memcpy"]
        if row["target"] is not None:
            assert row["met"] is (row["ratio_floor"] >= row["target"])
    floors = {row["kernel"]: row["floor"] for row in report["rows"]}
    assert floors["validate"] == floors["str_lengths"].split(",")[0] == "read"
    assert report["simd_level"] == fixedutf32.get_simd_level()
    assert report["threads"]["threads"] == 2
    assert "measuring" in result.stderr  # progress goes to stderr


def test_bench_table_and_bad_arguments():
    from fixedutf32.bench import main

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "fixedutf32",
            "bench",
            "--sizes",
            "64KiB",
            "--threads",
            "1",
            "--repeat",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "x memcpy" in result.stdout and "x floor" in result.stdout
    assert "decode swap -> new" in result.stdout and "(read)" in result.stdout
    with pytest.raises(SystemExit) as info:
        main(["--sizes", "lots"])
    assert info.value.code == 2
    unknown = subprocess.run(
        [sys.executable, "-m", "fixedutf32", "frobnicate"], capture_output=True, text=True
    )
    assert unknown.returncode == 2 and "unknown command" in unknown.stderr


def test_version_and_usage():
    version = subprocess.run(
        [sys.executable, "-m", "fixedutf32", "--version"], capture_output=True, text=True
    )
    assert (
        version.returncode == 0 and version.stdout.strip() == f"fixedutf32 {fixedutf32.__version__}"
    )
    from importlib.metadata import version as installed_version

    assert installed_version("fixedutf32") == fixedutf32.__version__
    usage = subprocess.run(
        [sys.executable, "-m", "fixedutf32", "--help"], capture_output=True, text=True
    )
    assert usage.returncode == 0 and "bench" in usage.stdout
    bare = subprocess.run([sys.executable, "-m", "fixedutf32"], capture_output=True, text=True)
    assert bare.returncode == 2 and "usage:" in bare.stderr


GCC_ONLY = re.compile(r"__attribute__|__builtin_\w+|__asm__|__restrict__|__typeof__|__cpuid_count")


@pytest.mark.parametrize(
    "defines",
    [
        ["-D_MSC_VER=1930", "-D_M_X64", "-D_WIN32", "-D_WIN64"],  # MSVC on x86-64
        ["-D_MSC_VER=1930", "-D_M_ARM64", "-D_WIN32", "-D_WIN64"],  # MSVC on arm64
        [],  # a C99 compiler that is none of GCC, Clang, MSVC
    ],
    ids=["msvc-x64", "msvc-arm64", "plain-c99"],
)
def test_headers_have_a_fallback_for_every_gcc_only_construct(defines, tmp_path):
    # Preprocess the kernels' headers as another compiler would see them
    # (no predefined macros, system headers stubbed) and look for what only
    # GCC and Clang understand.
    compiler = shutil.which("gcc") or shutil.which("clang")
    headers = Path(fixedutf32.__file__).parent
    if compiler is None or not (headers / "csrc" / "kernels.h").exists():
        pytest.skip("needs gcc or clang and the kernels' headers next to the package")
    stubs = tmp_path / "include"
    stubs.mkdir()
    for name in (
        "stddef.h",
        "stdint.h",
        "string.h",
        "stdlib.h",
        "malloc.h",
        "intrin.h",
        "immintrin.h",
        "emmintrin.h",
        "arm_neon.h",
        "cpuid.h",
        "sys/mman.h",
    ):
        (stubs / name).parent.mkdir(exist_ok=True)
        (stubs / name).write_text("/* stub */\n")
    source = tmp_path / "t.c"
    source.write_text(
        '#include "csrc/kernels.h"\n#include "csrc/buffer.h"\n#include "csrc/layout.h"\n'
    )
    result = subprocess.run(
        [
            compiler,
            "-E",
            "-P",
            "-undef",
            "-nostdinc",
            f"-I{stubs}",
            f"-I{headers}",
            *defines,
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "fu32_cpu_level" in result.stdout
    assert sorted(set(GCC_ONLY.findall(result.stdout))) == []


def test_every_header_is_installed_with_the_package():
    # pyproject's package-data takes csrc/**/*.h: a wheel carries the headers of
    # every level's folder.  Compared with the source tree these tests come
    # from (in CI, the sdist's, with the wheel installed).
    source = Path(__file__).resolve().parent.parent / "src" / "fixedutf32" / "csrc"
    if not source.is_dir():
        pytest.skip("no source tree next to these tests")
    installed = Path(fixedutf32.__file__).parent / "csrc"

    def headers(root):
        return sorted(path.relative_to(root).as_posix() for path in root.rglob("*.h"))

    assert headers(installed) == headers(source)
    assert {"kernels.h", "portable/kernels.h", "avx2/kernels.h"} <= set(headers(source))


# --- the type stub ---------------------------------------------------------------


def test_kernels_stub_lists_every_name_with_its_parameters():
    import ast
    import inspect
    import types

    # Private on purpose: the stub describes the compiled module itself.
    stub = Path(_kernels.__file__).with_name("_kernels.pyi")
    if not stub.exists():
        pytest.skip("the stub is not next to this build of the module")
    declared = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            declared[node.name] = [arg.arg for arg in node.args.args]
        elif isinstance(node, ast.ClassDef):
            declared[node.name] = None
        elif isinstance(node, ast.AnnAssign):
            declared[node.target.id] = None
    public = {
        name
        for name, value in vars(_kernels).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert sorted(public - set(declared)) == []
    for name, parameters in declared.items():
        if parameters is not None:
            assert list(inspect.signature(getattr(_kernels, name)).parameters) == parameters, name
