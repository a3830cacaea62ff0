"""Command line: ``fixedutf32 COMMAND ...`` (also ``python -m fixedutf32 COMMAND ...``).

Each command is a function ``f(argv) -> int`` (the exit status) in its own
module; this module only picks one, so that ``fixedutf32 --help`` imports
nothing heavy.
"""

import importlib
import sys

from ._version import __version__

# name -> (module relative to this package, function in it, one-line description)
COMMANDS = {
    "bench": (".bench", "main", "measure the kernels (--zarr: zarr, --store: whole stores) against baselines"),
    "check": (".store._cli", "check_main", "check every fixed_length_utf32 array of a Zarr store"),
    "convert": (".store._cli", "convert_main", "copy a Zarr store with its string arrays converted"),
}


def _usage():
    width = max(len(name) for name in COMMANDS)
    lines = [
        "usage: fixedutf32 [--version] COMMAND [options]",
        "",
        "commands:",
        *(f"  {name:<{width}}  {text}" for name, (_, _, text) in COMMANDS.items()),
        "",
        "'fixedutf32 COMMAND --help' describes a command's options.",
    ]
    return "\n".join(lines)


def main(argv=None):
    """Run one command; return its exit status (0 success, 2 usage error)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] in ("-V", "--version"):
        print(f"fixedutf32 {__version__}")
        return 0
    entry = COMMANDS.get(argv[0])
    if entry is None:
        print(
            f"fixedutf32: unknown command {argv[0]!r}; expected one of {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    module_name, function_name, _ = entry
    command = getattr(importlib.import_module(module_name, __package__), function_name)
    return command(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
