"""Command line: ``fixedutf32 bench`` (also ``python -m fixedutf32 bench``)."""

import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: fixedutf32 bench [--sizes 1MiB,64MiB] [--threads N] [--repeat N] [--json]\n\n"
              "commands:\n  bench   measure every kernel against memcpy and NumPy, side by side")
        return 0 if argv else 2
    if argv[0] != "bench":
        print(f"fixedutf32: unknown command {argv[0]!r}; try 'fixedutf32 bench'", file=sys.stderr)
        return 2
    from .bench import main as bench_main

    return bench_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
