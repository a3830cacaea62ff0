"""Write the corpus: one store per case, and the cases' JSON records.

    python -m conformance.generate OUT            # the stores, OUT/<case>/ (OUT must not exist)
    python -m conformance.generate --records      # rewrite conformance/records/*.json

Every store is written by hand: the metadata document (``zarr.json`` or
``.zarray``) as the case gives it, and each chunk's bytes as a file, so that
stores breaking the rules exist.  The stores are not kept in the repository;
the records are, and ``tests/test_conformance.py`` checks that they are what
this module writes.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .cases import CASES, Case

RECORDS = pathlib.Path(__file__).parent / "records"


def dump(document: Any) -> str:
    """JSON as the corpus writes it: ASCII only (lone surrogates and U+0000 as escapes)."""
    return json.dumps(document, indent=2, ensure_ascii=True) + "\n"


def metadata_name(case: Case) -> str:
    return "zarr.json" if case.zarr_format == 3 else ".zarray"


def write_store(case: Case, folder: pathlib.Path) -> pathlib.Path:
    """Write one case's store into ``folder / case.name``; return its path."""
    root = folder / case.name
    root.mkdir(parents=True)
    (root / metadata_name(case)).write_text(dump(case.metadata), encoding="ascii")
    for key, data in case.chunks.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def write_corpus(folder: pathlib.Path, cases: Iterable[Case] = CASES) -> list[pathlib.Path]:
    """Write every case's store under ``folder`` (created; must not hold the cases)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_store(case, folder) for case in cases]


def record_text(case: Case) -> str:
    return dump(case.record())


def write_records(folder: pathlib.Path = RECORDS) -> list[str]:
    """Write every case's record as ``folder/<case>.json``; remove records of no case.

    Returns the names of the files that changed.
    """
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    names = {f"{case.name}.json" for case in CASES}
    for stale in sorted(folder.glob("*.json")):
        if stale.name not in names:
            stale.unlink()
            changed.append(stale.name)
    for case in CASES:
        path = folder / f"{case.name}.json"
        text = record_text(case)
        if not path.exists() or path.read_text(encoding="ascii") != text:
            path.write_text(text, encoding="ascii")
            changed.append(path.name)
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.generate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("out", nargs="?", type=pathlib.Path, help="folder to write the stores in")
    parser.add_argument("--records", action="store_true", help="rewrite conformance/records/*.json")
    args = parser.parse_args(argv)
    if args.out is None and not args.records:
        parser.error("name a folder for the stores, or --records")
    if args.records:
        changed = write_records()
        print(f"{len(CASES)} records, {len(changed)} changed: {', '.join(changed) or 'none'}")
    if args.out is not None:
        if args.out.exists():
            parser.error(f"{args.out} exists; name a new folder")
        write_corpus(args.out)
        print(f"{len(CASES)} stores written under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
