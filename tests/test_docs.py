"""The Examples sections of the public docstrings, the README's usage tour and the
code of docs/guide.md run as written; the README starts with its two commands."""

import doctest
import importlib
import importlib.util
import json
import pathlib
import re
import warnings

import pytest

ROOT = pathlib.Path(__file__).parents[1]
MODULES = [
    "fixedutf32.chunk",
    "fixedutf32.errors",
    "fixedutf32.metadata",
    "fixedutf32.bench",
    "fixedutf32.bench.cases",
    "fixedutf32.transcode",
    # The public SIMD-level and buffer-pool functions are defined in the compiled module.
    "fixedutf32._kernels",
]
# Packages whose public names are defined in private submodules; their
# examples, and those of the methods of their classes, are collected through
# __all__.  They need zarr: without it each shows as one skip with the reason.
PACKAGES = {"fixedutf32.zarr": "zarr", "fixedutf32.store": "zarr"}
# Docstrings whose examples need an optional dependency: skipped, with the
# reason, when it is not installed.
NEEDS = {
    "fixedutf32.transcode.to_arrow": "pyarrow",
    "fixedutf32.transcode.from_arrow": "pyarrow",
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
        if importlib.util.find_spec(needs) is None:
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
    # The chunk and transcoding functions document every section.
    for name in fixedutf32.chunk.__all__ + fixedutf32.transcode.__all__:
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


def test_readme_usage_example_runs():
    source = python_blocks(readme_usage_tour())[0]
    namespace = {}
    exec(compile(source, "README usage", "exec"), namespace)
    assert namespace["arr"].tolist() == ["Hi"]
    assert namespace["grid"].tolist() == [["a", "b"], ["c", "d"]]
    assert namespace["wide"].nbytes == 2 * 40


def test_readme_usage_tour_runs(tmp_path, monkeypatch):
    """Every block of the tour, in order in one namespace: chunks, transcoding, zarr, stores."""
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
            for number, source in enumerate(blocks):
                exec(compile(source, f"README usage block {number}", "exec"), namespace)
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


def test_markdown_links_point_at_files():
    """Relative links in the README, CONTRIBUTING and docs/ name files that exist."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL, or a section of the same page
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.is_relative_to(ROOT) and path.exists(), f"{page.name}: broken link {target}"


def test_readme_starts_with_the_two_commands():
    head = (ROOT / "README.md").read_text(encoding="utf-8").split("```")[1]
    assert 'pip install ".[test]" && fixedutf32 bench' in head
    assert 'pip install ".[test]" && python -m pytest' in head
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\s*python -m pytest$", ci, re.M), "CI must run the README's test command"
