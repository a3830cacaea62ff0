"""The conformance corpus (conformance/) against this package: every case conforms for the
chunk API, the zarr pipeline and ``fixedutf32 check``; the committed records are what the
generator writes, and docs/conformance.md names every case.

The other implementations' rows are reported by ``python -m conformance``, not asserted.
The zarr rows run in a process of their own, as the runner runs them, so that enabling the
integration there cannot reach the rest of this session."""

import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[1]
if importlib.util.find_spec("conformance") is None:  # pytest run from another folder
    sys.path.append(str(ROOT))

from conformance import generate, readers, runner  # noqa: E402
from conformance.cases import CASES  # noqa: E402

RECORDS = {record["case"]: record for record in readers.records()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("conformance") / "corpus"
    generate.write_corpus(folder)
    return folder


def assert_conforms(row, cells):
    """Every case ok (or n/a), a known deviation excepted, which must still be there."""
    assert set(cells) == set(RECORDS), f"{row}: cases missing from the run"
    wrong = {
        case: cell
        for case, cell in cells.items()
        if cell.mark not in ("ok", "n/a") and (row, case) not in runner.KNOWN
    }
    assert not wrong, f"{row} does not conform: " + "; ".join(
        f"{case}: {cell.mark}, {cell.detail}" for case, cell in wrong.items()
    )
    for known_row, case in runner.KNOWN:
        if known_row == row:
            assert cells[case].mark == "known", (
                f"{row} now conforms on {case}: remove it from conformance.runner.KNOWN"
            )


def test_records_are_what_the_generator_writes():
    on_disk = sorted(path.name for path in generate.RECORDS.glob("*.json"))
    assert on_disk == sorted(f"{case.name}.json" for case in CASES)
    for case in CASES:
        text = (generate.RECORDS / f"{case.name}.json").read_text(encoding="ascii")
        assert text == generate.record_text(case), (
            f"{case.name}.json differs from its case: python -m conformance.generate --records"
        )


def test_every_store_is_written(corpus):
    for case in CASES:
        root = corpus / case.name
        assert (root / generate.metadata_name(case)).is_file()
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == (
            sorted([generate.metadata_name(case), *case.chunks])
        )


def test_the_chunk_api_conforms(corpus):
    row = "fixedutf32 chunk API"
    reader = readers.ROWS[row][0]
    cells = {
        case: runner.judge(record, readers.observe(reader, corpus / case, record), row)
        for case, record in RECORDS.items()
    }
    assert_conforms(row, cells)
    assert all(cell.mark == "ok" for cell in cells.values())  # every case applies


@pytest.mark.parametrize("row", ["fixedutf32 zarr pipeline", "fixedutf32 check"])
def test_the_zarr_rows_conform(corpus, row):
    pytest.importorskip("zarr", reason=f"the {row} row needs zarr-python")
    pytest.importorskip("numcodecs", reason=f"the {row} row needs numcodecs")
    (judged,) = runner.run(corpus, [sys.executable], [row])
    assert judged.installed, judged.note
    assert_conforms(row, judged.cells)


def test_a_silent_case_differs_for_others_and_fails_for_this_package():
    record = RECORDS["v3_surrogate"]
    read = {"values": ["ok", "\ud800", "a\udfff", "z"]}
    assert runner.judge(record, read, "zarr-python").mark == "differs"
    assert runner.judge(record, read, "fixedutf32 chunk API").mark == "FAIL"
    refused = {"error": "InvalidCodePointError: ..."}
    assert runner.judge(record, refused, "zarr-python").mark == "ok"
    assert runner.judge(RECORDS["v3_little_endian"], refused, "zarr-python").mark == "FAIL"
    assert runner.judge(RECORDS["v3_fill_too_long"], {"check": 1}, "fixedutf32 check").mark == "ok"
    assert runner.judge(RECORDS["v3_gzip"], {"check": 1}, "fixedutf32 check").mark == "FAIL"


def test_the_docs_page_names_every_case():
    page = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    missing = [case for case in RECORDS if f"`{case}`" not in page]
    assert not missing, f"docs/conformance.md lacks {missing}: python -m conformance --write-docs"


def test_a_python_that_does_not_run_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        runner.main(["--python", str(tmp_path / "no-such-python")])
    assert stopped.value.code == 2
    assert "no-such-python: not a Python interpreter that runs here" in capsys.readouterr().err
