"""The Examples sections of the public docstrings, the README's usage tour and the
code of docs/guide.md run as written; the README starts with its two commands."""

import doctest
import importlib
import importlib.util
import json
import pathlib
import re
import shlex
import subprocess
import sys
import warnings

import pytest

ROOT = pathlib.Path(__file__).parents[1]
MODULES = [
    "fixedutf32._arrow",
    "fixedutf32.array",
    "fixedutf32.batch",
    "fixedutf32.capi",
    "fixedutf32.chunk",
    "fixedutf32.errors",
    "fixedutf32.bench",
    "fixedutf32.bench.cases",
    "fixedutf32.transcode",
    # The public SIMD-level and buffer-pool functions are defined in the compiled module.
    "fixedutf32._kernels",
]
# Packages whose public names are defined in private submodules; their
# examples, and those of the methods of their classes, are collected through
# __all__.  They need zarr: without it each shows as one skip with the reason.
PACKAGES = {"fixedutf32.metadata": None, "fixedutf32.zarr": "zarr", "fixedutf32.store": "zarr"}
# Docstrings whose examples need an optional dependency: skipped, with the
# reason, when it is not installed.
NEEDS = {
    "fixedutf32.transcode.to_arrow": "pyarrow",
    "fixedutf32.transcode.from_arrow": "pyarrow",
    # open_array opens stores with zarr-python's store classes
    "fixedutf32.array.open_array": "zarr",
    "fixedutf32.array.StoredArray.read": "zarr",
    "fixedutf32.array.StoredArray.read_arrow": "zarr",
}


def _has_examples(test):
    # Cython repeats each docstring of a compiled module in its __test__ dict.
    return test.examples and ".__test__." not in test.name


def _docstrings_with_examples():
    finder = doctest.DocTestFinder()
    tests = [
        test
        for name in MODULES
        for test in finder.find(importlib.import_module(name))
        if _has_examples(test)
    ]
    params = [pytest.param(test, id=test.name) for test in tests]
    for package, needs in PACKAGES.items():
        if needs is not None and importlib.util.find_spec(needs) is None:
            reason = f"the examples of {package} need {needs}, which is not installed"
            params.append(pytest.param(None, id=package, marks=pytest.mark.skip(reason=reason)))
            continue
        module = importlib.import_module(package)
        for attr in module.__all__:
            found = finder.find(
                getattr(module, attr), f"{package}.{attr}", module=False, globs=vars(module)
            )
            params += [pytest.param(test, id=test.name) for test in found if _has_examples(test)]
    return sorted(params, key=lambda param: param.id)


DOCSTRINGS = _docstrings_with_examples()


# zarr warns that fixed_length_utf32 has no V3 specification on every array it writes.
@pytest.mark.filterwarnings("ignore:The data type .* does not have a Zarr V3 specification")
@pytest.mark.parametrize("test", DOCSTRINGS)
def test_docstring_examples(test):
    if test.name in NEEDS:
        pytest.importorskip(
            NEEDS[test.name], reason=f"the examples of {test.name} need {NEEDS[test.name]}"
        )
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_every_examples_section_is_run_here():
    import fixedutf32

    names = {param.id for param in DOCSTRINGS}
    for name in fixedutf32.__all__:
        obj = getattr(fixedutf32, name)
        if "Examples" in (obj.__doc__ or ""):
            assert f"{obj.__module__}.{obj.__qualname__}" in names, (
                f"the examples of {name} are not run"
            )
    assert set(NEEDS) <= names, (
        f"NEEDS names docstrings without examples: {sorted(set(NEEDS) - names)}"
    )


def test_public_functions_are_documented():
    import fixedutf32

    for name in fixedutf32.__all__:
        obj = getattr(fixedutf32, name)
        assert obj.__doc__ and len(obj.__doc__) > 40, f"{name} has no docstring"
    # The chunk, batch and transcoding functions document every section.
    for name in fixedutf32.chunk.__all__ + fixedutf32.batch.__all__ + fixedutf32.transcode.__all__:
        doc = getattr(fixedutf32, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"{name} lacks a {section} section"


def python_blocks(text):
    """The ```python code blocks of a Markdown text, in order."""
    return re.findall(r"```python\n(.*?)```", text, re.S)


def readme_usage_tour():
    """The README's "## Use" section, up to the next section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Use\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def readme_store_commands():
    """The command lines of the tour's ```sh block on the store tools, comments dropped."""
    blocks = re.findall(r"```sh\n(.*?)```", readme_usage_tour(), re.S)
    block = next(block for block in blocks if "check" in block)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def _run_commands(lines, where):
    for line in lines:
        program, *arguments = shlex.split(line)
        assert program == "fixedutf32", line
        result = subprocess.run(
            [sys.executable, "-m", "fixedutf32", *arguments],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, f"{line}: exit {result.returncode}\n{result.stderr}"


def test_readme_usage_example_runs():
    source = python_blocks(readme_usage_tour())[0]
    namespace = {}
    exec(compile(source, "README usage", "exec"), namespace)
    assert namespace["arr"].tolist() == ["Hi"]
    assert namespace["grid"].tolist() == [["a", "b"], ["c", "d"]]
    assert namespace["wide"].nbytes == 2 * 40


def test_readme_usage_tour_runs_twice(tmp_path, monkeypatch):
    """The tour's blocks in order in one namespace, twice: chunks, transcoding, zarr, stores."""
    zarr = pytest.importorskip("zarr", reason="the tour's zarr and store blocks need zarr-python")
    pytest.importorskip("numcodecs", reason="the store tools need numcodecs")
    import fixedutf32.zarr

    blocks = python_blocks(readme_usage_tour())
    assert len(blocks) == 4
    monkeypatch.chdir(tmp_path)  # the tour writes strings.zarr and big.zarr where it runs
    namespace = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", zarr.errors.UnstableSpecificationWarning)
            for run in range(2):  # twice in a row: nothing it writes stops a second run
                for number, source in enumerate(blocks):
                    where = f"README usage block {number}, run {run}"
                    exec(compile(source, where, "exec"), namespace)
                    if number == 2:  # the store tools' commands, once strings.zarr exists
                        _run_commands(readme_store_commands(), tmp_path)
                fixedutf32.zarr.disable()
            big = zarr.open_array(tmp_path / "big.zarr")
            assert big[:].tolist() == [f"item {i}" for i in range(1000)]
    finally:
        fixedutf32.zarr.disable()
    assert namespace["report"].ok
    written = json.loads((tmp_path / "big.zarr" / "zarr.json").read_text())
    assert written["codecs"][0] == {"name": "bytes", "configuration": {"endian": "big"}}


def test_guide_examples_run():
    """The code of docs/guide.md (chunks, transcoding) runs as written."""
    pytest.importorskip("pyarrow", reason="the transcoding example calls to_arrow")
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    blocks = python_blocks(text)
    assert len(blocks) == 2
    for number, source in enumerate(blocks):
        exec(compile(source, f"docs/guide.md block {number}", "exec"), {})


def test_capi_guide_examples_run():
    """The Python code of docs/capi.md (batches, Arrow) runs as written (```py blocks,
    a setup.py, are not run)."""
    text = (ROOT / "docs" / "capi.md").read_text(encoding="utf-8")
    blocks = python_blocks(text)
    assert len(blocks) >= 2
    for number, source in enumerate(blocks):
        exec(compile(source, f"docs/capi.md block {number}", "exec"), {})


def test_zarr_guide_examples_run_twice(tmp_path, monkeypatch):
    """The code of docs/zarr.md runs as written, twice in a row, from any folder."""
    zarr = pytest.importorskip("zarr", reason="docs/zarr.md is about zarr-python")
    import fixedutf32.zarr

    blocks = python_blocks((ROOT / "docs" / "zarr.md").read_text(encoding="utf-8"))
    assert len(blocks) == 4
    monkeypatch.chdir(tmp_path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", zarr.errors.UnstableSpecificationWarning)
            for run in range(2):
                for number, source in enumerate(blocks):
                    exec(compile(source, f"docs/zarr.md block {number}, run {run}", "exec"), {})
                    fixedutf32.zarr.disable()
    finally:
        fixedutf32.zarr.disable()
    assert zarr.open_array(tmp_path / "zarr-guide.zarr")[:].tolist() == ["a", "bb", "ccc", "dddd"]


def test_store_guide_example_runs_twice(tmp_path, monkeypatch):
    """The code of docs/store.md runs as written, twice in a row, from any folder."""
    pytest.importorskip("zarr", reason="docs/store.md's tools need zarr-python")
    pytest.importorskip("numcodecs", reason="the store tools need numcodecs")
    (source,) = python_blocks((ROOT / "docs" / "store.md").read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    for run in range(2):
        namespace = {}
        exec(compile(source, f"docs/store.md, run {run}", "exec"), namespace)
        assert namespace["report"].ok
    assert (tmp_path / "archive-v3.zarr" / "names" / "zarr.json").is_file()


def test_markdown_links_point_at_files():
    """Relative links in the README, CONTRIBUTING and docs/ name files that exist."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, or a section of the same page
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.is_relative_to(ROOT) and path.exists(), f"{page.name}: broken link {target}"


def _slug(heading):
    """The anchor of a Markdown heading, as GitHub makes it and myst-parser too
    (myst_heading_anchors): lower case, punctuation but "-" and "_" dropped,
    each space a "-"."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_markdown_anchors_hold_on_github_and_in_sphinx():
    """Links to a section name one that exists, by the slug both renderers make,
    at a heading level the Sphinx build gives an anchor (docs/conf.py: 3); and no
    Sphinx role, which GitHub would show as raw text, is used in Markdown."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    anchors = {}
    for page in pages:
        headings = re.findall(r"^(#{1,3}) (.+)$", page.read_text(encoding="utf-8"), re.M)
        anchors[page.resolve()] = {_slug(text) for _, text in headings}
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\{(ref|doc|func|class|mod|meth)\}`", text), f"{page.name}: a role"
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or "#" not in target:
                continue
            name, anchor = target.split("#", 1)
            where = (page.parent / name).resolve() if name else page.resolve()
            if where.suffix != ".md":
                continue
            assert anchor in anchors[where], f"{page.name}: no section #{anchor} in {where.name}"


def test_readme_starts_with_the_two_commands():
    head = (ROOT / "README.md").read_text(encoding="utf-8").split("```")[1]
    assert 'pip install ".[test]" && fixedutf32 bench' in head
    assert 'pip install ".[test]" && python -m pytest' in head
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\s*python -m pytest$", ci, re.M), "CI must run the README's test command"


@pytest.mark.parametrize("module_name", ["fixedutf32", "fixedutf32.errors", *PACKAGES])
def test_public_classes_name_their_public_module(module_name):
    """A traceback or repr shows ``fixedutf32.store.StoreError``, never a private path."""
    needed = PACKAGES.get(module_name)
    if needed and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{module_name} needs {needed}, which is not installed")
    module = importlib.import_module(module_name)
    classes = [
        value
        for name in getattr(module, "__all__", dir(module))
        if isinstance(value := getattr(module, name), type)
        and value.__module__.startswith("fixedutf32")
        # the top level re-exports the errors and its own result types
        and (module_name != "fixedutf32" or issubclass(value, BaseException))
    ]
    assert classes
    for cls in classes:
        assert "._" not in f".{cls.__module__}", f"{cls.__qualname__} says {cls.__module__}"


def test_the_changelog_has_no_relative_links():
    """docs/changelog.md includes CHANGELOG.md, so a relative link would resolve from docs/."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    relative = [target for target in re.findall(r"\]\(([^)]+)\)", text) if "://" not in target]
    assert relative == [], f"CHANGELOG.md links {relative}; name the file in backticks instead"
