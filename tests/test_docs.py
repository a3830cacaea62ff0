"""The Examples sections of the public docstrings run as written."""

import doctest
import importlib
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).parents[1]
MODULES = ["fixedutf32.chunk", "fixedutf32.errors", "fixedutf32.metadata", "fixedutf32.bench", "fixedutf32.transcode",
           "fixedutf32._kernels"]
# Docstrings whose examples need an optional dependency: skipped, with the
# reason, when it is not installed.
NEEDS = {
    "fixedutf32.transcode.to_arrow": "pyarrow",
    "fixedutf32.transcode.from_arrow": "pyarrow",
}


def _docstrings_with_examples():
    finder = doctest.DocTestFinder()
    tests = [test for name in MODULES for test in finder.find(importlib.import_module(name))
             # Cython repeats each docstring of a compiled module in its __test__ dict.
             if test.examples and ".__test__." not in test.name]
    return sorted(tests, key=lambda test: test.name)


DOCSTRINGS = _docstrings_with_examples()


@pytest.mark.parametrize("test", DOCSTRINGS, ids=lambda test: test.name)
def test_docstring_examples(test):
    if test.name in NEEDS:
        pytest.importorskip(NEEDS[test.name], reason=f"the examples of {test.name} need {NEEDS[test.name]}")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_every_examples_section_is_run_here():
    import fixedutf32

    names = {test.name for test in DOCSTRINGS}
    for name in fixedutf32.__all__:
        obj = getattr(fixedutf32, name)
        if "Examples" in (obj.__doc__ or ""):
            assert f"{obj.__module__}.{obj.__qualname__}" in names, f"the examples of {name} are not run"
    assert set(NEEDS) <= names, f"NEEDS names docstrings without examples: {sorted(set(NEEDS) - names)}"


def test_public_functions_are_documented():
    import fixedutf32

    for name in fixedutf32.__all__:
        obj = getattr(fixedutf32, name)
        assert obj.__doc__ and len(obj.__doc__) > 40, f"{name} has no docstring"
    for name in ["decode_chunk", "encode_chunk", "validate", "byteswap", "repad", "str_lengths",
                 "to_utf8", "from_utf8", "to_arrow", "from_arrow", "to_string_dtype",
                 "encode_vlen_utf8", "decode_vlen_utf8"]:
        doc = getattr(fixedutf32, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"{name} lacks a {section} section"


def test_readme_usage_example_runs():
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    section = text[text.index("## Use") :]
    source = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {}
    exec(compile(source, "README usage", "exec"), namespace)
    assert namespace["arr"].tolist() == ["Hi"]
    assert namespace["grid"].tolist() == [["a", "b"], ["c", "d"]]
    assert namespace["wide"].nbytes == 2 * 40


def test_readme_starts_with_the_two_commands():
    readme = ROOT / "README.md"
    head = readme.read_text(encoding="utf-8").split("```")[1]
    assert "fixedutf32 bench" in head and "python -m pytest" in head
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\s*python -m pytest$", ci, re.M), "CI must run the README's test command"


@pytest.mark.parametrize("name", ["README.md", "docs/spec.md"])
def test_relative_links_resolve_inside_the_project(name):
    page = ROOT / name
    for target in re.findall(r"\]\(([^)#\s]+)", page.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        path = (page.parent / target).resolve()
        assert path.is_relative_to(ROOT) and path.exists(), f"{name} links to {target}, not a file of the project"
