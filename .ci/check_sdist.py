"""Check that an sdist holds what building and testing need, and no build products.

Usage: python .ci/check_sdist.py SDIST TREE

TREE is the source tree the sdist was built from, before the build. Every file
of TREE under src/, tests/, benchmarks/, docs/, fuzz/, tools/ and conformance/
(fixtures and their dot files included) must be in SDIST, and so must its
top-level Markdown files (the docs link them) and the files named below.
"""

import pathlib
import sys
import tarfile

REQUIRED = [
    "LICENSE",
    "README.md",
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    ".ci/run",
    "docs/spec.md",
    "src/fixedutf32/_kernels.pyx",
    "tests/conftest.py",
]
TREES = ["src", "tests", "benchmarks", "docs", "fuzz", "tools", "conformance"]
BUILD_PRODUCTS = (".so", ".pyd", ".o", ".obj", ".c", ".pyc", ".html")
# Hand-written C sources, whose suffix is a build product's elsewhere.
C_SOURCES = ("tests/capi_callers/",)


def _is_product(name):
    return name.endswith(BUILD_PRODUCTS) and not name.startswith(C_SOURCES)


def main(sdist, tree):
    tree = pathlib.Path(tree)
    with tarfile.open(sdist) as tar:
        names = [member.name for member in tar.getmembers() if member.isfile()]
    top = names[0].split("/")[0]
    inside = {name[len(top) + 1 :] for name in names}
    expected = (
        set(REQUIRED)
        | {path.name for path in tree.glob("*.md")}
        | {
            path.relative_to(tree).as_posix()
            for folder in TREES
            if (tree / folder).is_dir()
            for path in (tree / folder).rglob("*")
            if path.is_file()
            and "__pycache__" not in path.parts
            and not _is_product(path.relative_to(tree).as_posix())
        }
    )
    missing = sorted(expected - inside)
    products = sorted(
        name
        for name in inside
        if _is_product(name) or name.startswith("build/") or "__pycache__" in name
    )
    dotfiles = sorted(name for name in inside if name.rsplit("/", 1)[-1].startswith("."))
    print(
        f"{sdist}: {len(inside)} files, {len(dotfiles)} dot files ({', '.join(dotfiles[:3])}, ...)"
    )
    if missing:
        print("missing from the sdist:\n  " + "\n  ".join(missing))
    if products:
        print("build products in the sdist:\n  " + "\n  ".join(products))
    return 1 if missing or products else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
