"""Which keys may be written: none leads out of the store it is written to (decided here only)."""
# A key such as a/../../x, written as it is, resolves outside a directory store.

from __future__ import annotations

from ..errors import StoreError

__all__ = ["check_safe_key", "key_problem"]

_RULE = (
    "expected segments separated by '/', none of them empty, '.' or '..', "
    "without backslashes or NUL characters"
)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be a destination key ("a '..' segment", ...), or None when it can."""
    if not isinstance(key, str) or not key:
        return "an empty key"
    if "\0" in key:
        return "a NUL character"
    if "\\" in key:
        return "a backslash"
    if key.startswith("/"):
        return "an absolute path"
    for segment in key.split("/"):
        if segment == "":
            return "an empty segment"
        if segment in (".", ".."):
            return f"a {segment!r} segment"
    if len(key) >= 2 and key[1] == ":" and key[0].isalpha():
        return "a drive letter"
    return None


def check_safe_key(key: str, where: str) -> None:
    """Raise StoreError unless ``key`` (from ``where``, for the message) is safe to write."""
    problem = key_problem(key)
    if problem is not None:
        raise StoreError(
            f"unsafe key {key!r} in {where}: it holds {problem}; {_RULE}. Nothing was written"
        )
