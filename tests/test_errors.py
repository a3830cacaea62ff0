"""The hierarchy of fixedutf32's errors, where users import them, and their one home."""

import ast
import importlib
import importlib.util
import pathlib
import pickle

import pytest

import fixedutf32
from fixedutf32 import errors

SRC = pathlib.Path(fixedutf32.__file__).parent

DATA_ERRORS = [
    "InvalidCodePointError",
    "StringTooLongError",
    "ChunkSizeError",
    "MetadataError",
    "InvalidUTF8Error",
    "CorruptChunkError",
]
# (public module, name, base within fixedutf32)
SUBPACKAGE_ERRORS = [
    ("fixedutf32.zarr", "InvalidChunkCodePointError", errors.InvalidCodePointError),
    ("fixedutf32.zarr", "StringTooLongForArrayError", errors.StringTooLongError),
    ("fixedutf32.store", "InvalidChunkError", errors.DataError),
    ("fixedutf32.store", "StoreError", errors.FixedUTF32Error),
]


def test_the_root_catches_every_error_and_is_not_a_value_error():
    assert issubclass(errors.FixedUTF32Error, Exception)
    assert not issubclass(errors.FixedUTF32Error, ValueError)
    assert issubclass(errors.DataError, errors.FixedUTF32Error)
    assert issubclass(errors.DataError, ValueError)


@pytest.mark.parametrize("name", DATA_ERRORS)
def test_data_errors_are_value_errors_at_the_top_level(name):
    cls = getattr(fixedutf32, name)
    assert cls is getattr(errors, name)
    assert name in fixedutf32.__all__
    assert issubclass(cls, errors.DataError) and issubclass(cls, ValueError)


def test_store_errors_are_not_data_errors():
    store_error = errors.StoreError
    assert issubclass(store_error, errors.FixedUTF32Error)
    assert not issubclass(store_error, errors.DataError)
    assert not issubclass(store_error, ValueError)
    assert str(pickle.loads(pickle.dumps(store_error("cannot open 'x'")))) == "cannot open 'x'"


@pytest.mark.parametrize(("module_name", "name", "base"), SUBPACKAGE_ERRORS)
def test_subpackage_errors_are_exported_where_users_catch_them(module_name, name, base):
    if importlib.util.find_spec("zarr") is None:
        pytest.skip("needs zarr")
    module = importlib.import_module(module_name)
    cls = getattr(module, name)
    assert name in module.__all__
    assert cls is getattr(errors, name)
    assert cls.__module__ == module_name
    assert issubclass(cls, base)


def test_the_warning_is_exported_by_the_zarr_adapter():
    if importlib.util.find_spec("zarr") is None:
        pytest.skip("needs zarr")
    import fixedutf32.zarr

    assert fixedutf32.zarr.UncheckedChunksWarning is errors.UncheckedChunksWarning
    assert issubclass(errors.UncheckedChunksWarning, UserWarning)


def test_importing_the_errors_needs_no_zarr():
    """errors.py defines the subpackages' errors without importing them."""
    tree = ast.parse((SRC / "errors.py").read_text(encoding="utf-8"))
    top_imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    assert all(
        isinstance(node, ast.Import) or node.level == 0 or node.module is None
        for node in top_imports
    ), "errors.py imports fixedutf32 modules only under TYPE_CHECKING"


def _exception_classes(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(base) for base in node.bases]
            if any(base.endswith(("Error", "Warning", "Exception")) for base in bases):
                yield node.name


def test_every_exception_and_warning_is_defined_in_errors_py():
    elsewhere = {
        str(path.relative_to(SRC)): names
        for path in SRC.rglob("*.py")
        if path.name != "errors.py" and (names := list(_exception_classes(path)))
    }
    assert elsewhere == {}, "define exceptions and warnings in fixedutf32/errors.py"
