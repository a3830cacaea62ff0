"""``fixedutf32 check`` and ``fixedutf32 convert``.

Results on stdout (text, or JSON with ``--json``), progress on stderr.
Exit status: 0 clean, 1 problems found (check) or an invalid chunk stopped
the conversion / verify found a difference (convert), 2 usage errors and
stores that cannot be opened, with one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, Literal, NoReturn, TypeAlias, TypedDict

__all__ = ["check_main", "convert_main"]

# --compressor: "default", None for none, or (name, level or None).
_Choice: TypeAlias = Literal["default"] | tuple[str, int | None] | None


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse(self, argv: Sequence[str]) -> tuple[argparse.Namespace | None, int]:
        """``(arguments, 0)``, or ``(None, status)`` after --help or a usage error."""
        try:
            return self.parse_args(argv), 0
        except SystemExit as exc:
            # argparse exits with 0 (--help) or 2 (error, above).
            return None, exc.code if isinstance(exc.code, int) else 2


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threads", type=int, default=None, help="worker threads (default: the number of CPUs)"
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help='run on Dask: "local" starts a LocalCluster of 2 worker processes; '
        "or a scheduler address such as tcp://host:8786",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the report as JSON (no progress)"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show progress on stderr (default: when stderr is a terminal)",
    )
    group.add_argument("--no-progress", dest="progress", action="store_false")


class _RunOptions(TypedDict):
    """The keyword arguments of check/convert that the options of ``_common`` give."""

    threads: int | None
    scheduler: str | None
    progress: bool


def _run_options(args: argparse.Namespace) -> _RunOptions:
    """The run options parsed; progress by default when stderr is a terminal (not --json)."""
    progress = args.progress
    if progress is None:
        progress = not args.json and sys.stderr.isatty()
    return {"threads": args.threads, "scheduler": args.dask, "progress": progress}


def _fail(prog: str, exc: Exception | str, status: int = 2) -> int:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    print(f"{prog}: {text}", file=sys.stderr)
    return status


def _missing_zarr(prog: str) -> int | None:
    """Exit status 2 and one line when the ``zarr`` extra is not installed, else None."""
    import importlib

    for name in ("zarr", "numcodecs"):
        try:
            importlib.import_module(name)
        except ImportError:
            return _fail(
                prog,
                f"needs zarr-python and numcodecs, and {name} cannot be imported; "
                f'install them with: pip install "fixedutf32[zarr]"',
            )
    return None


def check_main(argv: Sequence[str]) -> int:
    """``fixedutf32 check STORE ...``; returns the exit status."""
    from . import StoreError, check

    parser = _Parser(
        prog="fixedutf32 check",
        description="Check every fixed_length_utf32 array of a Zarr store: metadata, "
        "chunks and every code point.",
    )
    parser.add_argument(
        "store", metavar="STORE", help="a directory, a .zip file, or a URL (memory://, s3://, ...)"
    )
    parser.add_argument(
        "--path", default="", help="the group or array to check (default: the root)"
    )
    parser.add_argument(
        "--max-errors", type=int, default=100, help="stop after this many problems (default: 100)"
    )
    _common(parser)
    args, status = parser.parse(argv)
    if args is None:
        return status
    missing = _missing_zarr(parser.prog)
    if missing is not None:
        return missing
    try:
        report = check(args.store, args.path, max_errors=args.max_errors, **_run_options(args))
    except (StoreError, ValueError, OSError) as exc:
        return _fail(parser.prog, exc)
    print(report.to_json(indent=2) if args.json else report.to_text())
    return 0 if report.ok else 1


def _length_bytes(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a multiple of 4 or 'auto', got {text!r}"
        ) from None


def _compressor(text: str) -> _Choice:
    """``zstd[:LEVEL]``, ``gzip[:LEVEL]``, ``blosc`` or ``none``."""
    if text == "default":
        return "default"
    name, _, level = text.partition(":")
    if name == "none":
        return None
    if name not in ("zstd", "gzip", "blosc"):
        raise argparse.ArgumentTypeError(
            f"expected zstd[:LEVEL], gzip[:LEVEL], blosc or none, got {text!r}"
        )
    try:
        return (name, int(level) if level else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer level, got {level!r}") from None


def _compressors(choice: _Choice, zarr_format: int) -> str | list[dict[str, Any]] | None:
    if choice == "default":
        return "default"
    if choice is None:
        return None
    name, level = choice
    if zarr_format == 2:
        return [{"id": name, **({"level": level} if level is not None else {})}]
    config = {
        "zstd": {"level": 0 if level is None else level, "checksum": False},
        "gzip": {"level": 5 if level is None else level},
        "blosc": {
            "cname": "zstd",
            "clevel": 5,
            "shuffle": "shuffle",
            "typesize": 4,
            "blocksize": 0,
        },
    }[name]
    return [{"name": name, "configuration": config}]


def convert_main(argv: Sequence[str]) -> int:
    """``fixedutf32 convert SRC DST ...``; returns the exit status."""
    from . import InvalidChunkError, StoreError, convert

    parser = _Parser(
        prog="fixedutf32 convert",
        description="Write a copy of a Zarr store with its string arrays converted; "
        "everything else is copied as it is.",
    )
    parser.add_argument("source", metavar="SRC", help="a directory, a .zip file or a URL")
    parser.add_argument("dest", metavar="DST", help="a new directory, .zip file or URL")
    parser.add_argument(
        "--to",
        choices=["fixed_length_utf32", "string"],
        default="fixed_length_utf32",
        help="data type written",
    )
    parser.add_argument("--zarr-format", type=int, choices=[2, 3], default=3)
    parser.add_argument("--endian", choices=["little", "big"], default="little")
    parser.add_argument(
        "--length-bytes",
        type=_length_bytes,
        default=None,
        help="new width, or 'auto' to shrink to the longest string",
    )
    parser.add_argument(
        "--compressor",
        type=_compressor,
        default="default",
        help="zstd[:LEVEL] (default), gzip[:LEVEL], blosc or none",
    )
    parser.add_argument(
        "--chunks", default=None, help="new chunk shape, comma-separated (default: the source's)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing destination")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted conversion")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="write the fill value where a source chunk is invalid, and list it",
    )
    parser.add_argument(
        "--verify", action="store_true", help="compare both stores element by element afterwards"
    )
    _common(parser)
    args, status = parser.parse(argv)
    if args is None:
        return status
    missing = _missing_zarr(parser.prog)
    if missing is not None:
        return missing
    chunks = None
    if args.chunks:
        try:
            chunks = tuple(int(c) for c in args.chunks.split(","))
        except ValueError:
            return _fail(
                parser.prog, f"--chunks: expected integers separated by commas, got {args.chunks!r}"
            )
    try:
        report = convert(
            args.source,
            args.dest,
            to=args.to,
            zarr_format=args.zarr_format,
            endian=args.endian,
            length_bytes=args.length_bytes,
            compressors=_compressors(args.compressor, args.zarr_format),
            chunks=chunks,
            overwrite=args.overwrite,
            resume=args.resume,
            skip_invalid=args.skip_invalid,
            verify=args.verify,
            **_run_options(args),
        )
    except InvalidChunkError as exc:
        return _fail(parser.prog, exc, 1)
    except (StoreError, ValueError, OSError) as exc:
        return _fail(parser.prog, exc)
    print(report.to_json(indent=2) if args.json else report.to_text())
    if report.skipped_chunks:
        # Said on stderr too, so that a --json run or a script sees it.
        n = report.skipped_chunks
        print(
            f"{parser.prog}: {n} invalid chunk{'' if n == 1 else 's'} skipped (--skip-invalid); "
            f"they read as the fill value, and the report lists them",
            file=sys.stderr,
        )
    return 0 if report.verified is not False else 1
