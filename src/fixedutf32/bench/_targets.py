"""The targets of every row the bench prints (docs/performance.md says why each is where it is)."""

from typing import Literal, NamedTuple, NotRequired, TypedDict

from ._timing import MiB

Family = Literal["kernel", "transcode", "zarr", "store", "calls"]
SizeClass = Literal["small", "cache", "memory"]
Bound = Literal[">=", "<="]
NOISE = 0.95  # "not slower than stock": within 5 %


class Target(NamedTuple):
    """A bound on a measured value: ``>=`` (at least) or ``<=`` (at most)."""

    bound: Bound
    value: float

    def met(self, measured: float | None) -> bool | None:
        """Whether ``measured`` meets the target; None when nothing was measured."""
        if measured is None:
            return None
        return measured >= self.value if self.bound == ">=" else measured <= self.value


class Verdict(TypedDict):
    """A row's or ratio's target and whether the measured value met it (None: no target)."""

    target: float | None
    met: bool | None
    bound: NotRequired[Bound]  # without it, ">="


class Ratio(Verdict):
    """A ratio of two timings of the same run (``--zarr``, ``--store``), with its target."""

    ratio: str
    value: float | None


# family, size class ("-": any; kernels: small < 1 MiB <= cache < 32 MiB <= memory), bound,
# value | a prefix of the names ("prefix, row") | rows.  Kernels: ratio to the row's floor;
# transcode: to memcpy of the UTF-32 bytes; zarr and store: speed ratios of one run; calls:
# time per chunk batched over one call per chunk, and hand-built Arrow strings over making them.
_TABLE = """
kernel cache >= 0.85 | | validate; decode swap -> new; encode -> swapped
kernel cache >= 0.8 | | decode native (no copy)
kernel cache >= 0.7 | | decode swap in place
kernel cache >= 0.55 | | repad widen U8->U16
kernel cache >= 0.9 | | repad narrow U16->U8
kernel cache >= 0.6 | | str_lengths
kernel memory >= 0.9 | | validate; decode native (no copy); decode swap in place
kernel memory >= 0.8 | | decode swap -> new; encode -> swapped
kernel memory >= 1.0 | | repad widen U8->U16; repad narrow U16->U8
kernel memory >= 0.75 | | str_lengths
kernel small >= 0.5 | | validate; decode swap -> new; encode -> swapped
transcode - >= 0.5 | | to_utf8 (ascii)
transcode - >= 0.25 | | to_utf8 (mixed)
transcode - >= 0.4 | | from_utf8 (ascii)
transcode memory >= 0.2 | | from_utf8 (mixed)
transcode - >= 0.1 | | from_utf8 (mixed)
zarr - >= 1.0 | pipeline / fastest zarr | read raw little; read zstd, 1 thread; read zstd, 2 threads
zarr - >= 1.0 | pipeline / fastest zarr | read raw, 64 KiB chunks; read raw, 16 KiB chunks
zarr - >= 1.0 | pipeline / fastest zarr | read sharded raw; read sharded zstd; write sharded raw
zarr - >= 1.0 | pipeline / fastest zarr | read 1000 random elements; read a 1000-element slice
zarr - >= 1.0 | pipeline / fastest zarr | write raw little; write raw big; write zstd
zarr - >= 1.2 | pipeline / fastest zarr | read raw big
zarr - >= 0.9 | pipeline / floor | read raw little; read raw big; write raw little; write raw big
zarr - >= 0.9 | pipeline / floor | write zstd
zarr - >= 0.8 | pipeline / floor | read raw, 64 KiB chunks; read sharded raw; write sharded raw
zarr - >= 0.7 | pipeline / floor | read sharded zstd
zarr - >= 0.6 | pipeline / floor | read raw, 16 KiB chunks
zarr - >= 0.5 | pipeline / floor | read 1000 random elements; read a 1000-element slice
zarr - >= 1.8 | pipeline / stock | read raw little; read raw big
zarr - >= 1.3 | pipeline / stock | write raw little; write raw big
zarr - >= 1.0 | pipeline / stock | read zstd, 1 thread
zarr - >= 0.95 | codec / stock | read raw little; read zstd, 1 thread; read zstd, 2 threads
zarr - >= 0.95 | codec / stock | write raw little; write raw big
zarr - >= 1.05 | codec / stock | read raw big
zarr - >= 1.7 | | zstd 2 threads / 1 thread, pipeline
store - >= 0.8 | | check raw / read files (speed); check raw / read files, cold cache (speed)
store - >= 1.7 | | check zstd N threads / 1 thread (speed)
store - <= 1.3 | | convert / zstd-compress (time)
calls - <= 0.25 | decode_chunks | swap, new arrays; swap, into outs; native, new arrays
calls - <= 0.25 | decode_chunks | native, into outs
calls - <= 0.05 | | ArrowStrings built by hand (offsets checked)
"""


def _parse(table: str) -> dict[tuple[Family, str, SizeClass | None], Target]:
    """The table above as (family, row, size class or None) -> target."""
    targets = {}
    for line in table.strip().splitlines():
        head, prefix, rows = (part.strip() for part in line.split("|"))
        family, size, bound, value = head.split()
        for row in rows.split("; "):
            name = f"{prefix}, {row}" if prefix else row
            targets[family, name, None if size == "-" else size] = Target(
                ">=" if bound == ">=" else "<=", float(value)
            )
    return targets  # type: ignore[return-value]  # the table's words are the Literals


TARGETS = _parse(_TABLE)


def size_class(nbytes: int) -> SizeClass:
    """The size class of a kernel row: ``small`` (< 1 MiB), ``cache`` or ``memory`` (>= 32 MiB)."""
    return "small" if nbytes < MiB else "memory" if nbytes >= 32 * MiB else "cache"


def target(family: Family, row: str, nbytes: int | None = None) -> Target | None:
    """The target of a row (for the size ``nbytes``, where it depends on it), or None."""
    found = None if nbytes is None else TARGETS.get((family, row, size_class(nbytes)))
    return found or TARGETS.get((family, row, None))


def judge(family: Family, row: str, measured: float | None, nbytes: int | None = None) -> Verdict:
    """The ``target`` (its value, or None) and ``met`` keys of a measured row or ratio."""
    found = target(family, row, nbytes)
    if found is None:
        return {"target": None, "met": None}
    return {"target": found.value, "met": found.met(measured)}


def ratio(family: Family, name: str, value: float | None, bound: bool = False) -> Ratio:
    """A ratio with its target; with ``bound``, the ``bound`` key too."""
    found = TARGETS.get((family, name, None))
    entry: Ratio = {"ratio": name, "value": value, **judge(family, name, value)}
    if bound and found is not None:
        entry["bound"] = found.bound
    return entry
