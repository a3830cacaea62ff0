"""The Examples sections of the public docstrings run as written."""

import doctest
import importlib

import pytest

MODULES = ["fixedutf32.chunk", "fixedutf32.errors", "fixedutf32.metadata", "fixedutf32.bench"]


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
    for name in ["decode_chunk", "encode_chunk", "validate", "byteswap", "repad", "str_lengths"]:
        doc = getattr(fixedutf32, name).__doc__
        for section in ("Parameters", "Returns", "Raises", "Examples"):
            assert section in doc, f"{name} lacks a {section} section"
