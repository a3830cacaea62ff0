"""What ``check`` and ``convert`` share: the source walked and planned, and the reports' words."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from ..errors import InvalidCodePointError, InvalidUTF8Error, MetadataError, StringTooLongError
from ._arrays import (
    FIXED,
    ArrayPlan,
    Index,
    Node,
    data_type_of,
    local_root,
    outside_links,
    plan_array,
    real_root,
    walk,
)
from ._keys import key_problem
from ._stores import StoreError, StoreHandle

__all__ = [
    "Problem",
    "SourcePlans",
    "check_key_path",
    "check_store_arg",
    "chunk_problem",
    "count",
    "plan_nodes",
    "source_nodes",
    "source_within",
]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, plural unless n is 1 ("1 array", "2 arrays", "2 entries")."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


@dataclass
class Problem:
    """One thing wrong in a store.

    Attributes
    ----------
    kind : {"metadata", "incomplete", "link", "chunk", "code_point"}
        ``metadata``: a document breaks the spec or cannot be read;
        ``incomplete``: keys under a path with no metadata document (an
        interrupted write); ``link``: a key that is a symbolic link leading
        outside the store (not read); ``chunk``: a chunk that does not
        decode (codec error, wrong size); ``code_point``: a code unit that
        is not a Unicode scalar value.
    array : str
        Path of the array (or node) in the store.
    message : str
    key : str or None
        The store key of the chunk (the shard, for sharded arrays).
    chunk : tuple of int or None
        The chunk's index in the chunk grid (inner chunks for sharded arrays).
    coordinates : tuple of int or None
        The element's coordinates in the array (``code_point`` problems).
        An element of an edge chunk's padding has coordinates at or past
        the array's shape.
    position : int or None
        Code point position inside the element.
    code_point : int or None
        The offending value.
    """

    kind: str
    array: str
    message: str
    key: str | None = None
    chunk: tuple[int, ...] | None = None
    coordinates: tuple[int, ...] | None = None
    position: int | None = None
    code_point: int | None = None

    def sort_key(self) -> tuple[str, int, tuple[int, ...], tuple[int, ...], int, str]:
        order = {"metadata": 0, "incomplete": 0, "link": 0, "chunk": 1, "code_point": 1}[self.kind]
        return (
            self.array,
            order,
            self.chunk or (),
            self.coordinates or (),
            self.position or 0,
            self.message,
        )

    def __str__(self) -> str:
        """One line in one style: the array, the chunk key (and index), then what is wrong.

        ``names, chunk names/0.0: invalid code point U+D800 ...``;
        ``names: metadata: fill_value: expected ...``; ``/: incomplete: ...``;
        ``names, key names/c/0: link: it links outside the store, to ...``.
        """
        where = f"{self.array or '/'}"
        if self.kind == "link":
            return f"{where}, key {self.key}: link: {self.message}"
        if self.key is not None:
            where += f", chunk {self.key}"
            if self.chunk is not None and self.coordinates is None:
                where += f" (chunk index {list(self.chunk)})"
        if self.kind in ("metadata", "incomplete"):
            return f"{where}: {self.kind}: {self.message}"
        return f"{where}: {self.message}"


def chunk_problem(plan: ArrayPlan, key: str, index: Index, exc: Exception) -> Problem:
    """The report's Problem for an error met reading or decoding one chunk."""
    if not isinstance(exc, (InvalidCodePointError, InvalidUTF8Error, StringTooLongError)):
        return Problem("chunk", plan.path, str(exc), key, index)
    # The one place the kernels' element indices (from the chunk's start) become array coordinates.
    coordinates = plan.coordinates(index, exc.index)
    at = f"element {list(coordinates)}"
    problem, position, value = "code_point", None, None
    if isinstance(exc, InvalidCodePointError):
        position, value = exc.position, exc.code_point
        kind = "surrogate" if 0xD800 <= value <= 0xDFFF else "above U+10FFFF"
        outside = any(c >= s for c, s in zip(coordinates, plan.meta.shape))
        padding = " (edge chunk padding, outside the array)" if outside else ""
        message = (
            f"invalid code point U+{value:04X} ({kind}) at {at}, "
            f"position {position}{padding}; expected a Unicode scalar value"
        )
    elif isinstance(exc, InvalidUTF8Error):
        message = f"invalid UTF-8 at {at}, byte {exc.byte_offset}: {exc.reason}"
    else:
        problem = "chunk"
        message = (
            f"string at {at} has {exc.length} code points; "
            f"expected at most {exc.capacity} (length_bytes {4 * exc.capacity})"
        )
    return Problem(problem, plan.path, message, key, index, coordinates, position, value)


def check_store_arg(spec: object, role: str) -> None:
    """Refuse an empty store path (it would name the current directory) with StoreError."""
    if isinstance(spec, str) and not spec.strip():
        raise StoreError(f"the {role}: expected a store path or URL, got an empty string")


def check_key_path(path: object) -> str:
    """``path`` if it names a node inside a store (``""`` or a safe key), else StoreError."""
    if not isinstance(path, str):
        raise StoreError(f"path: expected a str, got {type(path).__name__}")
    problem = None if path == "" else key_problem(path)
    if problem is not None:
        raise StoreError(
            f"path {path!r}: expected a group or array inside the store (segments separated "
            f"by '/', none of them empty, '.' or '..', no backslash or NUL), got {problem}"
        )
    return path


def source_within(handle: StoreHandle) -> str | None:
    """The real root a local source is read in (None: not local); StoreError if links lead out."""
    # For convert without follow_links: the whole source is listed once, before anything is read.
    links = outside_links(handle)
    if links:
        first = links[0]
        raise StoreError(
            f"the source {handle.name!r} holds {count(len(links), 'symbolic link')} leading "
            f"outside it, the first {first.key!r} to {first.target!r}; links out of a store "
            f"are read only when asked: pass follow_links=True (--follow-links). Nothing was "
            f"written"
        )
    root = local_root(handle)
    return None if root is None else real_root(root)


def source_nodes(
    handle: StoreHandle,
    path: str,
    strings_only: bool = True,
    max_depth: int | None = None,
    incomplete: bool = False,
    skip: Collection[str] = (),
    within: str | None = None,
) -> list[Node]:
    """The hierarchy at ``path`` (as :func:`_arrays.walk`); StoreError if nothing usable."""
    # incomplete: keys at path without a document are one "incomplete" node rather than an error.
    nodes = walk(handle, path, max_depth, skip=skip, within=within)
    where = f"at path {path!r} in {handle.name}" if path else f"in {handle.name}"
    if not nodes and incomplete and handle.list_dir(path):
        # Keys but no metadata at the top: an interrupted write, reported as
        # such (check), not as a store that is not there.
        return [Node(path, "incomplete")]
    if not nodes:
        raise StoreError(f"no Zarr group or array {where} (no zarr.json, .zarray or .zgroup)")
    root = nodes[0]
    if strings_only and root.kind == "array" and root.error is None and data_type_of(root) != FIXED:
        raise StoreError(f"the array {where} holds {data_type_of(root)}, not fixed_length_utf32")
    return nodes


@dataclass
class SourcePlans:
    """A source hierarchy planned node by node, in hierarchy order."""

    # arrays: plan None for a data type the tools do not read (copied by convert, skipped by check).

    arrays: list[tuple[Node, ArrayPlan | None]] = field(default_factory=list)
    groups: list[Node] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def plan_nodes(
    nodes: Sequence[Node], finish: str | None = None, within: str | None = None
) -> SourcePlans:
    """Plan each node: its array's plan, or the metadata problem that stops it."""
    # finish: the command named by incomplete problems; within goes to each plan.
    planned = SourcePlans()
    for node in nodes:
        if node.kind == "incomplete":
            why = (
                "an interrupted conversion; finish it with: " + finish
                if finish is not None
                else "an array or group whose metadata was never written (an interrupted "
                "write or conversion?)"
            )
            planned.problems.append(
                Problem(
                    "incomplete",
                    node.path,
                    "chunks without metadata (keys but no zarr.json, .zarray or .zgroup): " + why,
                )
            )
        elif node.kind == "group":
            planned.groups.append(node)
            if node.error:
                planned.problems.append(Problem("metadata", node.path, node.error))
        else:
            try:
                plan = plan_array(node)
            except MetadataError as exc:
                planned.problems.append(Problem("metadata", node.path, str(exc)))
                continue
            if plan is not None and within is not None:
                plan = replace(plan, within=within)
            planned.arrays.append((node, plan))
    return planned
