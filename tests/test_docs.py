"""The Examples sections of the public docstrings run as written."""

import doctest
import importlib

import pytest

MODULES = ["fixedutf32.chunk", "fixedutf32.errors", "fixedutf32.metadata", "fixedutf32.bench",
           "fixedutf32.bench.cases", "fixedutf32.transcode"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


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
    import pathlib
    import re

    readme = pathlib.Path(__file__).parents[1] / "README.md"
    text = readme.read_text(encoding="utf-8")
    section = text[text.index("## Use") :]
    source = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace = {}
    exec(compile(source, "README usage", "exec"), namespace)
    assert namespace["arr"].tolist() == ["Hi"]
    assert namespace["grid"].tolist() == [["a", "b"], ["c", "d"]]
    assert namespace["wide"].nbytes == 2 * 40


def test_readme_starts_with_the_two_commands():
    import pathlib

    readme = pathlib.Path(__file__).parents[1] / "README.md"
    head = readme.read_text(encoding="utf-8").split("```")[1]
    assert "fixedutf32 bench" in head and "python -m pytest" in head
    ci = (pathlib.Path(__file__).parents[1] / ".ci" / "run").read_text()
    assert "\npython -m pytest\n" in ci, "CI must run the README's test command"
