"""The compiled kernels are reached in two ways only (issue 26, item 4).

The public functions, which check every argument on every call, and
``ElementLayout``, which checks an array's element width and byte order once
and is what readers and writers call per chunk.  Anything else goes through
one of those two, so that no module calls a kernel with arguments nobody
checked.  import-linter cannot see the compiled module (it reads ``.py`` files
only), hence this walk over the sources.
"""

from __future__ import annotations

import ast
import pathlib

import fixedutf32

PACKAGE = pathlib.Path(fixedutf32.__file__).resolve().parent
KERNELS = "fixedutf32._kernels"

# The modules that may import fixedutf32._kernels, and why.
ALLOWED = {
    # the public face: re-exports the SIMD level functions, buffer_pool_bytes
    # and the C API capsule fixedutf32._C_API
    "fixedutf32",
    # the public functions, each checking its arguments before the kernel
    "fixedutf32.chunk",
    "fixedutf32.batch",
    "fixedutf32.transcode",
    # the C API's public module: the capsule and its version
    "fixedutf32.capi",
    # helpers of the public functions: the argument checks (and the Buffer
    # type every module annotates with), the output pool, the status-to-
    # exception mapping, the Arrow capsules
    "fixedutf32._arguments",
    "fixedutf32._pool",
    "fixedutf32._status",
    "fixedutf32._arrow",
    # the one internal per-array entry: arguments checked once per array
    "fixedutf32._source.elements",
}


def _module_name(path: pathlib.Path) -> str:
    parts = ["fixedutf32", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``tree``, relative ones resolved."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.append((node.lineno, base))
            # `from .. import _kernels` names the module as an attribute
            found.extend((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and getattr(node.func, "attr", getattr(node.func, "id", None))
            in ("import_module", "__import__")
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def _kernel_importers() -> dict[str, list[int]]:
    importers: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for line, name in _imported(tree, module, path.name == "__init__.py"):
            if name == KERNELS or name.startswith(KERNELS + "."):
                importers.setdefault(module, []).append(line)
    return importers


def test_only_the_public_functions_and_element_layout_import_the_kernels():
    outside = {
        module: lines for module, lines in _kernel_importers().items() if module not in ALLOWED
    }
    assert not outside, (
        "these modules import fixedutf32._kernels (module: lines); call the public "
        f"functions or fixedutf32._source.ElementLayout instead: {outside}"
    )


def test_the_walk_sees_the_imports_it_is_meant_to_catch():
    """The allowed modules are found (so the walk is not blind), and so is every form."""
    found = _kernel_importers()
    assert set(found) == ALLOWED
    forms = [
        ("fixedutf32.zarr._read", False, "from .. import _kernels"),
        ("fixedutf32.zarr._read", False, "from .._kernels import convert"),
        ("fixedutf32.bench", True, "from .._kernels import get_simd_level"),
        ("fixedutf32.zarr._read", False, "import fixedutf32._kernels as k"),
        ("fixedutf32.zarr._read", False, "importlib.import_module('fixedutf32._kernels')"),
    ]
    for module, is_package, source in forms:
        names = [name for _, name in _imported(ast.parse(source), module, is_package)]
        assert any(name == KERNELS or name.startswith(KERNELS + ".") for name in names), source
    # the bench's own module of kernel rows is another module
    names = [
        name for _, name in _imported(ast.parse("from . import _kernels"), "fixedutf32.bench", True)
    ]
    assert KERNELS not in names
