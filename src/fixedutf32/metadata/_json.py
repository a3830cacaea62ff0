"""JSON as read here: nesting and extent limits, single-value checks, messages naming the key."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import MetadataError

#: Deepest nesting of JSON arrays and objects a document may have.
MAX_NESTING_DEPTH = 128
# MAX_LENGTH_BYTES (from _arguments): NumPy's largest ``U`` item size.
_MAX_EXTENT = 2**63 - 1  # int64, as zarr-python holds shapes


def _show(value: Any) -> str:
    """Spell a JSON value the way it appears in a document, shortened."""
    if _is_json_int(value) and value.bit_length() > 64:
        # Python refuses to print ints of more than 4300 digits
        return f"an integer of {value.bit_length()} bits"
    try:
        text = json.dumps(value, ensure_ascii=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        try:
            text = json.dumps(value)
        except (TypeError, ValueError, RecursionError):
            try:
                text = repr(value)
            except (ValueError, RecursionError):
                text = f"a {type(value).__name__}"
    if len(text) > 80:
        text = text[:77] + "..."
    return text


def _fail(key: str, expected: str, value: Any) -> MetadataError:
    return MetadataError(f"{key}: expected {expected}, got {_show(value)}")


def _too_deep(key: str, where: str) -> MetadataError:
    return MetadataError(
        f"{key}: expected at most {MAX_NESTING_DEPTH} levels of nested JSON arrays and "
        f"objects, got deeper nesting {where}"
    )


def _check_depth(value: Any, key: str) -> None:
    """Reject nesting deeper than MAX_NESTING_DEPTH, without recursing."""
    # Parsers, deepcopy and json.dumps recurse (RecursionError); dicts may share or contain
    # themselves, so a node is walked again only when reached deeper than before.
    seen: dict[int, int] = {}
    # (node, depth, (parent link, key in parent))
    stack: list[tuple[Any, int, Any]] = [(value, 1, None)]
    while stack:
        node, depth, link = stack.pop()
        items: Iterable[tuple[Any, Any]]
        if isinstance(node, Mapping):
            items = node.items()
        elif isinstance(node, (list, tuple)):
            items = enumerate(node)
        else:
            continue
        if depth > MAX_NESTING_DEPTH:
            path: list[str] = []
            while link is not None:
                link, part = link
                path.append(f"[{part}]" if isinstance(part, int) else f"[{_show(part)}]")
            where = "".join(reversed(path))
            if len(where) > 60:
                where = where[:60] + "..."
            raise _too_deep(key, f"at {key}{where}")
        if seen.get(id(node), 0) >= depth:
            continue
        seen[id(node)] = depth
        for part, child in items:
            if isinstance(child, (Mapping, list, tuple)):
                stack.append((child, depth + 1, (link, part)))


def _load(doc: Any, key: str) -> Any:
    """Parse JSON text (``str``/``bytes``) or take a parsed value; check its depth."""
    if isinstance(doc, (str, bytes, bytearray)):
        try:
            doc = json.loads(doc)
        except RecursionError:
            # json recurses once per level; far beyond our limit it runs out of stack
            raise _too_deep(key, "(the JSON parser ran out of stack)") from None
        except ValueError as exc:
            raise MetadataError(f"{key}: expected JSON text, got invalid JSON ({exc})") from None
    _check_depth(doc, key)
    return doc


def _is_str(value: Any, text: str) -> bool:
    # type first: == on a NumPy array in a parsed dict would not give a bool
    return isinstance(value, str) and value == text


def _is_json_int(value: Any) -> bool:
    # JSON integers only: bool is an int subclass in Python but is JSON true/false.
    return isinstance(value, int) and not isinstance(value, bool)


def _check_keys(obj: Mapping[str, Any], required: set[str], optional: set[str], key: str) -> None:
    missing = sorted(required - obj.keys(), key=str)
    if missing:
        raise MetadataError(
            f"{key}: missing key {missing[0]!r}; expected keys {sorted(required | optional)}, "
            f"got {_show(obj)}"
        )
    extra = sorted(set(obj) - required - optional, key=str)
    if extra:
        raise MetadataError(
            f"{key}: unexpected key {extra[0]!r}; expected keys {sorted(required | optional)}, "
            f"got {_show(obj)}"
        )
