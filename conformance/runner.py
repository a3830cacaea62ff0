"""Run the corpus against every implementation installed here and compare with the records.

    python -m conformance               # the table; exit 1 if a fixedutf32 row does not conform
    python -m conformance --write-docs  # the same, and docs/conformance.md rewritten
    python -m conformance --python VENV/bin/python --python OTHER/bin/python --write-docs

Each row runs in a process of its own (:mod:`conformance.readers`): each
``--python`` interpreter (default: this one) runs the Python rows, and GDAL's
row runs on Debian's ``/usr/bin/python3``, where ``apt-get install
python3-gdal`` puts it.  A row that cannot import its implementation is shown
as "not installed".
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import generate, readers

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS_PAGE = ROOT / "docs" / "conformance.md"
GDAL_PYTHON = "/usr/bin/python3"
GDAL_ROW = "GDAL"
OURS = "fixedutf32"
# Where a row of this package is known not to conform: (row, case) -> what happens and why.
# Shown as "known" in the table and allowed by the exit status; tests/test_conformance.py
# fails once the deviation is gone, so that the entry is removed.
KNOWN: dict[tuple[str, str], str] = {}  # (row, case) -> why this package departs
ROW_TIMEOUT = 600


@dataclass(frozen=True)
class Cell:
    """One case through one row: ``mark`` is ok, FAIL, differs, known or n/a."""

    mark: str
    detail: str


@dataclass(frozen=True)
class Row:
    """One implementation's run: where it ran, and a cell per case."""

    name: str
    version: str
    python: str
    installed: bool
    note: str
    cells: dict[str, Cell]

    @property
    def ours(self) -> bool:
        return self.name.startswith(OURS)

    def count(self, mark: str) -> int:
        return sum(cell.mark == mark for cell in self.cells.values())

    def not_conforming(self) -> list[str]:
        return [case for case, cell in self.cells.items() if cell.mark in ("FAIL", "known")]

    @property
    def reads_nothing(self) -> bool:
        """Whether it refused every case it was asked to read (it cannot open the type)."""
        return not any(cell.detail.startswith("reads ") for cell in self.cells.values())

    def failing_text(self, limit: int = 6) -> str:
        failing = self.not_conforming()
        if not failing:
            return "-"
        if self.reads_nothing and self.count("FAIL") > limit:
            return f"opens no array of this type: refuses all {self.count('FAIL')} cases to read"
        shown = ", ".join(failing[:limit])
        return shown if len(failing) <= limit else f"{shown} and {len(failing) - limit} more"

    @property
    def conforms(self) -> bool:
        return self.installed and self.count("FAIL") == 0


def _short(value: Any, limit: int = 90) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def judge(record: dict[str, Any], observation: dict[str, Any], row: str) -> Cell:
    """Compare one observation with the record of its case."""
    if "na" in observation:
        return Cell("n/a", observation["na"])
    wants_values = record["expect"] == "values"
    if "check" in observation:
        status = observation["check"]
        detail = {0: "exit 0: no problem found", 2: "exit 2: unreadable"}.get(
            status, f"exit {status}: {observation.get('found', '')}"
        )
        conforms = status == 0 if wants_values else status in (1, 2)
    elif "error" in observation:
        detail = f"rejects: {observation['error']}"
        conforms = not wants_values
    else:
        detail = f"reads {_short(observation['values'])}"
        conforms = wants_values and observation["values"] == record["values"]
    if (row, record["case"]) in KNOWN:
        return Cell("ok" if conforms else "known", detail)
    if conforms:
        return Cell("ok", detail)
    if record["spec_silent"] and not row.startswith(OURS):
        return Cell("differs", detail)
    return Cell("FAIL", detail)


def _run_process(python: str, row: str, corpus: pathlib.Path) -> dict[str, Any]:
    """One row in a process of its own; its JSON, or a row saying why there is none."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if not pathlib.Path(python).exists():
        return {"row": row, "installed": False, "version": "", "note": f"no {python}"}
    try:
        done = subprocess.run(
            [python, "-m", "conformance.readers", row, str(corpus)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=ROW_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"row": row, "installed": True, "version": "?", "note": "timed out", "crash": True}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {
            "row": row,
            "installed": True,
            "version": "?",
            "note": f"crashed (exit {done.returncode}): {tail}",
            "crash": True,
        }
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _python_version(python: str) -> str:
    if python == sys.executable:
        return platform.python_version()
    try:
        done = subprocess.run(
            [python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "?"
    return done.stdout.strip()


def plan(pythons: Sequence[str], rows: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(interpreter, row) pairs: every Python row on each interpreter, GDAL once."""
    names = list(readers.ROWS) if rows is None else list(rows)
    jobs = [(python, row) for python in pythons for row in names if row != GDAL_ROW]
    if GDAL_ROW in names:
        jobs.append((GDAL_PYTHON if pathlib.Path(GDAL_PYTHON).exists() else pythons[0], GDAL_ROW))
    return jobs


def run(
    corpus: pathlib.Path,
    pythons: Sequence[str] = (sys.executable,),
    rows: Sequence[str] | None = None,
) -> list[Row]:
    """Every planned row over the corpus (generated there beforehand), judged."""
    records = {record["case"]: record for record in readers.records()}
    jobs = plan(pythons, rows)
    versions = {python: _python_version(python) for python in {p for p, _ in jobs}}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda job: _run_process(job[0], job[1], corpus), jobs))
    judged = []
    for (python, name), result in zip(jobs, results):
        observations = result.get("results", {})
        cells = {
            case: judge(records[case], observations[case], name)
            for case in records
            if case in observations
        }
        if result.get("crash"):
            cells = {case: Cell("FAIL", result["note"]) for case in records}
        judged.append(
            Row(
                name=name,
                version=result.get("version", ""),
                python=versions[python],
                installed=bool(result.get("installed")),
                note=result.get("note", ""),
                cells=cells,
            )
        )
    return judged


# ---------------------------------------------------------------------------
# Tables


def _cell_text(text: str) -> str:
    """Text that cannot break a Markdown table or be read as markup."""
    return "`" + text.replace("`", "'").replace("|", "/") + "`" if text else ""


def summary_lines(rows: Sequence[Row], markdown: bool = False) -> list[str]:
    """The table: one line per row (installed or not)."""
    header = ["implementation", "version", "Python", "ok", "FAIL", "known", "differs", "n/a"]
    header.append("not conforming")
    lines = []
    for row in rows:
        if not row.installed:
            lines.append([row.name, "not installed", row.python, "", "", "", "", ""] + [row.note])
            continue
        lines.append(
            [row.name, row.version, row.python]
            + [str(row.count(m)) for m in ("ok", "FAIL", "known", "differs", "n/a")]
            + [row.failing_text(limit=6 if markdown else 3)]
        )
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return out + ["| " + " | ".join(c.replace("|", "/") for c in line) + " |" for line in lines]
    widths = [max(len(line[i]) for line in [header, *lines]) for i in range(len(header) - 1)]
    out = []
    for line in [header, *lines]:
        cells = [c.ljust(w) for c, w in zip(line[:-1], widths)] + [line[-1]]
        out.append("  ".join(cells).rstrip())
    out.insert(1, "  ".join("-" * w for w in [*widths, len(header[-1])]))
    return out


def departures(row: Row) -> list[tuple[str, list[str], str]]:
    """(mark, cases, what it did) where a row does not conform (FAIL, known) or departs from
    the proposal on a case the specification leaves open (differs); cases with the same mark
    and the same outcome in one entry (one for a row that opens no array of the type)."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for case, cell in row.cells.items():
        if cell.mark in ("FAIL", "known", "differs"):
            detail = cell.detail
            if cell.mark == "known":
                detail += f" [{KNOWN[(row.name, case)]}]"
            elif row.reads_nothing:
                detail = re.sub(r"([<>])U\d+", r"\1Un", detail)  # one V2 reason, not one per width
            grouped.setdefault((cell.mark, detail), []).append(case)
    if row.reads_nothing and len(grouped) > 1:
        cases = [case for group in grouped.values() for case in group]
        reasons = " / ".join(detail for _, detail in grouped)
        return [("FAIL", sorted(cases), reasons)]
    return [(mark, cases, detail) for (mark, detail), cases in grouped.items()]


def detail_lines(rows: Sequence[Row]) -> list[str]:
    """Each row's departures, a line each."""
    out = []
    for row in rows:
        shown = departures(row)
        if not row.installed or not shown:
            continue
        out.append(f"{row.name} {row.version} (Python {row.python}):")
        for mark, cases, detail in shown:
            names = cases[0] if len(cases) == 1 else f"{len(cases)} cases ({', '.join(cases)})"
            out.append(f"  {mark:8} {names}: {detail}")
    return out


def _columns(rows: Sequence[Row]) -> list[tuple[str, list[Row]]]:
    """Installed rows, those of the same implementation with the same marks in one column."""
    columns: list[tuple[str, list[Row]]] = []
    for row in rows:
        if not row.installed:
            continue
        marks = {case: cell.mark for case, cell in row.cells.items()}
        for _title, group in columns:
            first = group[0]
            if first.name == row.name and {c: x.mark for c, x in first.cells.items()} == marks:
                group.append(row)
                break
        else:
            columns.append((row.name, [row]))
    order = list(readers.ROWS)
    columns.sort(key=lambda column: order.index(column[0]))
    return [
        (f"{name} {' / '.join(dict.fromkeys(r.version for r in group))}", group)
        for name, group in columns
    ]


def docs_page(rows: Sequence[Row], environment: dict[str, str]) -> str:
    records = readers.records()
    columns = _columns(rows)
    lines = [
        "# Conformance across implementations",
        "",
        "<!-- Written by `python -m conformance --write-docs`; do not edit by hand. -->",
        "",
        f"The corpus in `conformance/` ({len(records)} cases) run against every implementation "
        f"installed on {environment['date']} ({environment['platform']}). Each case is a "
        "small store written byte by byte by `conformance/generate.py` and a record, "
        "`conformance/records/<case>.json`, of what a conforming reader must do: the values, "
        "or a refusal. Where the specification is silent (code units that are not Unicode "
        "scalar values), the record is what fixedutf32 does and why; "
        "[the proposal](spec-gaps.md) asks the specification to say so.",
        "",
        "Marks: **ok** conforms (on a case the specification leaves open: does what the "
        "proposal says); **FAIL** does not conform; **known** a deviation of this package, "
        "listed in `conformance/runner.py` and reported; **differs** departs from the "
        "proposal where the specification is silent; **n/a** the case does not apply "
        "(NumPy and pyarrow read no metadata, `check` writes nothing, GDAL's writer is not "
        "tried). For `fixedutf32 check`, ok is exit 0 on a case to read and a problem "
        "found (exit 1) or an unreadable store (exit 2) on a case to refuse.",
        "",
        "## Summary",
        "",
        *summary_lines(rows, markdown=True),
        "",
        "## Case by case",
        "",
        "Columns: "
        + "; ".join(f"({n}) {title}" for n, (title, _) in enumerate(columns, start=1))
        + ".",
        "",
        "| case | expected | " + " | ".join(f"({n})" for n in range(1, len(columns) + 1)) + " |",
        "|---|---|" + "---|" * len(columns),
    ]
    for record in records:
        expected = "read" if record["expect"] == "values" else "reject"
        if record["spec_silent"]:
            expected += " (spec silent)"
        marks = [
            group[0].cells[record["case"]].mark if record["case"] in group[0].cells else "?"
            for _, group in columns
        ]
        lines.append(f"| `{record['case']}` | {expected} | " + " | ".join(marks) + " |")
    lines += ["", "## Where they depart", ""]
    for title, group in columns:
        shown = departures(group[0])
        if not shown:
            continue
        lines += [f"### {title}", "", "| cases | mark | what it did |", "|---|---|---|"]
        for mark, cases, detail in shown:
            names = ", ".join(f"`{case}`" for case in cases)
            lines.append(f"| {names} | {mark} | {_cell_text(detail)} |")
        lines.append("")
    lines += [
        "## How the rows read",
        "",
        "| implementation | how |",
        "|---|---|",
    ]
    seen = set()
    for row in rows:
        if row.name not in seen:
            seen.add(row.name)
            lines.append(f"| {row.name} | {_cell_text(readers.ROWS[row.name][2])} |")
    lines += [
        "",
        "Run it again with `python -m conformance --write-docs` from the repository root "
        f"(this page: {environment['command']}).",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------


def stale_known(rows: Sequence[Row]) -> list[tuple[str, str]]:
    """Entries of KNOWN whose row now conforms on their case."""
    return [
        (name, case)
        for name, case in KNOWN
        for row in rows
        if row.name == name and case in row.cells and row.cells[case].mark == "ok"
    ]


def _as_json(rows: Sequence[Row]) -> str:
    return json.dumps(
        [
            {**row.__dict__, "cells": {case: cell.__dict__ for case, cell in row.cells.items()}}
            for row in rows
        ],
        indent=1,
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m conformance", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument(
        "--python",
        action="append",
        help="an interpreter to run the Python rows on (repeatable; default: this one)",
    )
    parser.add_argument("--write-docs", action="store_true", help="rewrite docs/conformance.md")
    parser.add_argument("--json", type=pathlib.Path, help="write every verdict here as JSON")
    parser.add_argument(
        "--keep", type=pathlib.Path, help="generate the corpus into this new folder and keep it"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the table; 0 if every fixedutf32 row conforms (known deviations aside), else 1."""
    parser = _parser()
    args = parser.parse_args(argv)
    pythons = args.python or [sys.executable]
    for python in pythons:  # a bad path is a usage error, not a row that does not conform
        if _python_version(python) == "?":
            parser.error(f"--python {python}: not a Python interpreter that runs here")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fixedutf32-corpus-") as scratch:
        corpus = args.keep or pathlib.Path(scratch) / "corpus"
        generate.write_corpus(corpus)
        rows = run(corpus, pythons)
    seconds = time.monotonic() - start
    cases = len(readers.records())
    print(
        f"fixed_length_utf32 conformance corpus: {cases} cases, {len(rows)} rows, {seconds:.1f} s"
    )
    print()
    print("\n".join(summary_lines(rows)))
    details = detail_lines(rows)
    if details:
        print()
        print("\n".join(details))
    for name, case in stale_known(rows):
        print(f"\nnote: {name} now conforms on {case}: remove it from KNOWN in {__name__}")
    if args.json:
        args.json.write_text(_as_json(rows), encoding="utf-8")
    if args.write_docs:
        versions = " ".join(f"--python <Python {_python_version(p)}>" for p in args.python or [])
        environment = {
            "date": datetime.date.today().isoformat(),
            "platform": f"{platform.system()} {platform.machine()}",
            "command": f"`python -m conformance --write-docs {versions}`".replace(" `", "`"),
        }
        DOCS_PAGE.write_text(docs_page(rows, environment), encoding="utf-8")
        print(f"\nwrote {DOCS_PAGE.relative_to(ROOT)}")
    ours = [row for row in rows if row.ours]
    failing = [row.name for row in ours if not row.conforms]
    if failing:
        print(f"\nfixedutf32 rows that do not conform: {', '.join(failing)}")
        return 1
    print(f"\nevery fixedutf32 row conforms ({len(ours)} rows; known deviations: {len(KNOWN)})")
    return 0
