"""The targets of every row the bench prints, from the project's performance issues.

One table: (family, row, size class) -> target.  Families: ``kernel`` (ratio to
the row's floor, by size class), ``transcode`` (ratio to memcpy of the UTF-32
bytes, any size), ``zarr`` (``fixedutf32 bench --zarr`` ratios) and ``store``
(``fixedutf32 bench --store`` ratios), ``calls`` (time per chunk of a batched
call over one call per chunk).  A size class of ``None`` is any size.
"""

from typing import Literal, NamedTuple, NotRequired, TypedDict

from ._timing import MiB

Family = Literal["kernel", "transcode", "zarr", "store", "calls"]
SizeClass = Literal["small", "cache", "memory"]
Bound = Literal[">=", "<="]


class Target(NamedTuple):
    """A bound on a measured value: ``>=`` (at least) or ``<=`` (at most)."""

    bound: Bound
    value: float

    def met(self, measured: float | None) -> bool | None:
        """Whether ``measured`` meets the target; None when nothing was measured."""
        if measured is None:
            return None
        return measured >= self.value if self.bound == ">=" else measured <= self.value

    def __str__(self) -> str:
        return f"{self.bound} {self.value:.2f}"


def _least(value: float) -> Target:
    return Target(">=", value)


class Verdict(TypedDict):
    """A row's or ratio's target and whether the measured value met it (None: no target)."""

    target: float | None
    met: bool | None
    bound: NotRequired[Bound]  # the ``--store`` ratios say it; without it the bound is ">="


class Ratio(Verdict):
    """A ratio of two timings of the same run (``--zarr``, ``--store``), with its target."""

    ratio: str
    value: float | None


NOISE = 0.95  # "not slower than stock": within 5 %

TARGETS: dict[tuple[Family, str, SizeClass | None], Target] = {
    # Kernels: least ratio to the row's floor, the least memory traffic of its
    # job done by NumPy on the same bytes (cases.Case): memcpy for the copies,
    # a read of the chunk for the read-only kernels, an in-place rewrite, and
    # for the repads the copy and the reads or zeros of their two widths.
    # "cache" is 1 MiB up to 32 MiB, "memory" above.  The read-only and repad
    # rows were held to memcpy before; docs/performance.md says why each
    # target is where it is (instruction counts, floors measured alongside).
    ("kernel", "validate", "cache"): _least(0.85),
    ("kernel", "validate", "memory"): _least(0.9),
    ("kernel", "decode native (no copy)", "cache"): _least(0.8),
    ("kernel", "decode native (no copy)", "memory"): _least(0.9),
    ("kernel", "decode swap -> new", "cache"): _least(0.85),
    ("kernel", "decode swap -> new", "memory"): _least(0.8),
    ("kernel", "decode swap in place", "cache"): _least(0.7),
    ("kernel", "decode swap in place", "memory"): _least(0.9),
    ("kernel", "encode -> swapped", "cache"): _least(0.85),
    ("kernel", "encode -> swapped", "memory"): _least(0.8),
    ("kernel", "repad widen U8->U16", "cache"): _least(0.55),
    ("kernel", "repad widen U8->U16", "memory"): _least(1.0),
    ("kernel", "repad narrow U16->U8", "cache"): _least(0.9),
    ("kernel", "repad narrow U16->U8", "memory"): _least(1.0),
    ("kernel", "str_lengths", "cache"): _least(0.6),
    ("kernel", "str_lengths", "memory"): _least(0.75),
    # Per-call overhead of at most 2 us keeps 64 KiB chunks ("small") above 0.5x.
    ("kernel", "validate", "small"): _least(0.5),
    ("kernel", "decode swap -> new", "small"): _least(0.5),
    ("kernel", "encode -> swapped", "small"): _least(0.5),
    # Transcoding: throughput over memcpy of the UTF-32 bytes, whatever the size
    # unless a size class is named.
    ("transcode", "to_utf8 (ascii)", None): _least(0.5),
    ("transcode", "to_utf8 (mixed)", None): _least(0.25),
    ("transcode", "from_utf8 (ascii)", None): _least(0.4),
    # From 64 MiB the chunk comes from memory; below, the decoder's work per
    # element of mixed text is the limit (docs/performance.md).
    ("transcode", "from_utf8 (mixed)", "memory"): _least(0.2),
    ("transcode", "from_utf8 (mixed)", None): _least(0.1),
    # zarr-python with fixedutf32.zarr (speed ratios of one run's rounds).  Against
    # the fastest of zarr's own pipelines (BatchedCodecPipeline, and
    # FusedCodecPipeline from zarr 3.4): never slower, 1.2x on big-endian reads,
    # validating every unit where zarr validates none.
    **{
        ("zarr", f"pipeline / fastest zarr, {case}", None): _least(1.0)
        for case in (
            "read raw little",
            "read zstd, 1 thread",
            "read zstd, 2 threads",
            "read raw, 64 KiB chunks",
            "read raw, 16 KiB chunks",
            "read sharded raw",
            "read sharded zstd",
            "read 1000 random elements",
            "read a 1000-element slice",
            "write raw little",
            "write raw big",
            "write zstd",
            "write sharded raw",
        )
    },
    ("zarr", "pipeline / fastest zarr, read raw big", None): _least(1.2),
    # Against the floor of the same files read (written) plainly on as many
    # threads: every layout, the selections against reading only their bytes.
    ("zarr", "pipeline / floor, read raw, 64 KiB chunks", None): _least(0.8),
    ("zarr", "pipeline / floor, read raw, 16 KiB chunks", None): _least(0.6),
    ("zarr", "pipeline / floor, read sharded raw", None): _least(0.8),
    ("zarr", "pipeline / floor, read sharded zstd", None): _least(0.7),
    ("zarr", "pipeline / floor, read 1000 random elements", None): _least(0.5),
    ("zarr", "pipeline / floor, read a 1000-element slice", None): _least(0.5),
    ("zarr", "pipeline / floor, write raw little", None): _least(0.9),
    ("zarr", "pipeline / floor, write raw big", None): _least(0.9),
    ("zarr", "pipeline / floor, write zstd", None): _least(0.9),
    ("zarr", "pipeline / floor, write sharded raw", None): _least(0.8),
    ("zarr", "pipeline / stock, read raw little", None): _least(1.8),
    ("zarr", "pipeline / stock, read raw big", None): _least(1.8),
    ("zarr", "pipeline / stock, read zstd, 1 thread", None): _least(1.0),
    ("zarr", "pipeline / stock, write raw little", None): _least(1.3),
    ("zarr", "pipeline / stock, write raw big", None): _least(1.3),
    ("zarr", "pipeline / floor, read raw little", None): _least(0.9),
    ("zarr", "pipeline / floor, read raw big", None): _least(0.9),
    ("zarr", "codec / stock, read raw little", None): _least(NOISE),
    ("zarr", "codec / stock, read raw big", None): _least(1.05),
    ("zarr", "codec / stock, read zstd, 1 thread", None): _least(NOISE),
    ("zarr", "codec / stock, read zstd, 2 threads", None): _least(NOISE),
    ("zarr", "codec / stock, write raw little", None): _least(NOISE),
    ("zarr", "codec / stock, write raw big", None): _least(NOISE),
    ("zarr", "zstd 2 threads / 1 thread, pipeline", None): _least(1.7),
    # Whole stores: check and convert against reading and compressing the bytes.
    ("store", "check raw / read files (speed)", None): _least(0.8),
    ("store", "check raw / read files, cold cache (speed)", None): _least(0.8),
    ("store", "check zstd N threads / 1 thread (speed)", None): _least(1.7),
    ("store", "convert / zstd-compress (time)", None): Target("<=", 1.3),
    # Batched calls (issue 20): a 4 KiB chunk in a batch costs at most a
    # quarter of a call of its own, in time per chunk.
    **{
        ("calls", f"decode_chunks, {endian}, {what}", None): Target("<=", 0.25)
        for endian in ("swap", "native")
        for what in ("new arrays", "into outs")
    },
    # Hand-built Arrow strings (issue 24): checking their offsets costs at
    # most a twentieth of making the same strings.
    ("calls", "ArrowStrings built by hand (offsets checked)", None): Target("<=", 0.05),
}


def size_class(nbytes: int) -> SizeClass:
    """The size class of a kernel row: ``small`` (< 1 MiB), ``cache`` or ``memory`` (>= 32 MiB)."""
    if nbytes < MiB:
        return "small"
    return "memory" if nbytes >= 32 * MiB else "cache"


def target(family: Family, row: str, nbytes: int | None = None) -> Target | None:
    """The target of a row (for the size ``nbytes``, where it depends on it), or None."""
    if nbytes is not None:
        found = TARGETS.get((family, row, size_class(nbytes)))
        if found is not None:
            return found
    return TARGETS.get((family, row, None))


def judge(family: Family, row: str, measured: float | None, nbytes: int | None = None) -> Verdict:
    """The ``target`` (its value, or None) and ``met`` keys of a measured row or ratio."""
    found = target(family, row, nbytes)
    if found is None:
        return {"target": None, "met": None}
    return {"target": found.value, "met": found.met(measured)}
