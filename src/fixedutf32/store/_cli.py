"""``fixedutf32 check`` and ``fixedutf32 convert``: results on stdout, progress on stderr."""
# Exit 0 clean; 1 problems/leftovers (check), an invalid chunk or a verify difference (convert); 2
# usage or unopenable store (one line on stderr); 130 when convert is interrupted.

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, Literal, NoReturn, TypeAlias, TypedDict

__all__ = ["check_main", "convert_main"]

# --compressor: "default", None for none, or (name, level or None).
_Choice: TypeAlias = Literal["default"] | tuple[str, int | None] | None


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's "(default: ...)" after an option's help, only where a default means something."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        flag = action.nargs == 0
        if flag or action.default in (None, argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (exit status 2) and every default shown."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(**kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse(self, argv: Sequence[str]) -> tuple[argparse.Namespace | None, int]:
        """``(arguments, 0)``, or ``(None, status)`` after --help, a usage error or without zarr."""
        try:
            args = self.parse_args(argv)
        except SystemExit as exc:
            # argparse exits with 0 (--help) or 2 (error, above).
            return None, exc.code if isinstance(exc.code, int) else 2
        missing = _missing_zarr(self.prog)
        return (None, missing) if missing is not None else (args, 0)


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
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help="read symbolic links that lead outside a local source store as if their "
        "targets were in it (without it, check reports them and convert refuses the source)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show progress on stderr (default: when stderr is a terminal)",
    )
    group.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress, not even on a terminal",
    )


class _RunOptions(TypedDict):
    """The keyword arguments of check/convert that the options of ``_common`` give."""

    threads: int | None
    scheduler: str | None
    progress: bool
    follow_links: bool


def _run_options(args: argparse.Namespace) -> _RunOptions:
    """The run options parsed; progress by default when stderr is a terminal (not --json)."""
    progress = args.progress
    if progress is None:
        progress = not args.json and sys.stderr.isatty()
    return {
        "threads": args.threads,
        "scheduler": args.dask,
        "progress": progress,
        "follow_links": args.follow_links,
    }


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
        "chunks and every code point.  Also lists leftovers, keys no reader looks at "
        "(*.partial files of killed writes, keys outside every array's grid), apart from "
        "the data's problems.  Exit status: 0 clean, 1 problems or leftovers found, 2 usage "
        "errors and stores that cannot be opened.",
    )
    parser.add_argument(
        "store", metavar="STORE", help="a directory, a .zip file, or a URL (memory://, s3://, ...)"
    )
    parser.add_argument(
        "--path",
        default="",
        help="the group or array to check, a key path inside the store such as a/b "
        "(default: the root group)",
    )
    parser.add_argument("--max-errors", type=int, default=100, help="stop after this many problems")
    parser.add_argument(
        "--remove-leftovers",
        action="store_true",
        help="after the check, delete the leftovers it lists (only those, only inside the "
        "store; not for .zip stores); the exit status is then that of the rest",
    )
    _common(parser)
    args, status = parser.parse(argv)
    if args is None:
        return status
    try:
        report = check(
            args.store,
            args.path,
            max_errors=args.max_errors,
            remove_leftovers=args.remove_leftovers,
            **_run_options(args),
        )
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


# --compressor's codecs: the numcodecs key of the level, and the levels each accepts.
_LEVELS = {"zstd": ("level", -131072, 22), "gzip": ("level", 0, 9), "blosc": ("clevel", 0, 9)}


def _compressor(text: str) -> _Choice:
    """``zstd[:LEVEL]``, ``gzip[:LEVEL]``, ``blosc[:LEVEL]`` or ``none``; the level checked."""
    if text == "default":
        return "default"
    name, colon, level = text.partition(":")
    if name == "none" and not colon:
        return None
    if name not in _LEVELS:
        raise argparse.ArgumentTypeError(
            f"expected zstd[:LEVEL], gzip[:LEVEL], blosc[:LEVEL] or none, got {text!r}"
        )
    if not colon:
        return (name, None)
    _, low, high = _LEVELS[name]
    try:
        value = int(level)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{name}: expected an integer level from {low} to {high}, got {level!r}"
        ) from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(
            f"{name}: expected a level from {low} to {high}, got {value}"
        )
    return (name, value)


def _compressors(choice: _Choice, zarr_format: int) -> str | list[dict[str, Any]] | None:
    """The ``compressors`` of ``convert`` for a --compressor choice (settings: DEFAULTS)."""
    from .._source import parse_codec

    if choice == "default":
        return "default"
    if choice is None:
        return None
    name, level = choice
    config = {} if level is None else {_LEVELS[name][0]: level}
    spec = parse_codec({"name": name, "configuration": config}, 3)
    return [dict(spec.to_json(zarr_format))]


def convert_main(argv: Sequence[str]) -> int:
    """``fixedutf32 convert SRC DST ...``; returns the exit status."""
    from . import InvalidChunkError, StoreError, convert
    from ._plans import count

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
        help="the data type the string arrays are written as: fixed_length_utf32, or "
        "zarr-python's variable-length string type",
    )
    parser.add_argument(
        "--zarr-format",
        type=int,
        choices=[2, 3],
        default=3,
        help="the Zarr format of the destination (2 writes <U/>U arrays)",
    )
    parser.add_argument(
        "--endian",
        choices=["little", "big"],
        default="little",
        help="the byte order of the code units written (fixed_length_utf32)",
    )
    parser.add_argument(
        "--length-bytes",
        type=_length_bytes,
        default=None,
        help="the new length_bytes (a multiple of 4), or 'auto' for the longest string's "
        "(default: the source's)",
    )
    parser.add_argument(
        "--compressor",
        type=_compressor,
        default="default",
        help="zstd[:LEVEL] (levels -131072..22), gzip[:LEVEL] (0..9), blosc[:LEVEL] (0..9, "
        "zstd inside, shuffled by code unit) or none (default: zstd at zarr-python's "
        "default level, as zarr-python writes)",
    )
    parser.add_argument(
        "--chunks", default=None, help="new chunk shape, comma-separated (default: the source's)"
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a destination that is a Zarr store or an empty directory (anything "
        "else is refused)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted conversion with the same options",
    )
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
    except KeyboardInterrupt as exc:
        # Ctrl-C: what was written and the command that finishes it, as a shell's 128 + SIGINT.
        return _fail(parser.prog, str(exc.args[0]) if exc.args else "interrupted", 130)
    print(report.to_json(indent=2) if args.json else report.to_text())
    if report.skipped_chunks:
        # Said on stderr too, so that a --json run or a script sees it.
        n = report.skipped_chunks
        print(
            f"{parser.prog}: {count(n, 'invalid chunk')} skipped (--skip-invalid); "
            f"they read as the fill value, and the report lists them",
            file=sys.stderr,
        )
    return 0 if report.verified is not False else 1
