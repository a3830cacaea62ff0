"""Which keys may be written: no key leads out of the store it is written to.

A store read from anywhere may hold keys such as ``a/../../x``; written as
they are, a directory store (or fsspec's local file system) resolves them
outside the destination.  This rule lives here, and nothing else decides it.
"""

from __future__ import annotations

from ..errors import StoreError

__all__ = ["check_safe_key", "key_problem"]

_RULE = (
    "expected segments separated by '/', none of them empty, '.' or '..', "
    "without backslashes or NUL characters"
)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be used as a destination key, or None when it can.

    Parameters
    ----------
    key : str
        A store key (a path relative to the store's root, ``/``-separated).

    Returns
    -------
    str or None
        A short reason ("a '..' segment", ...), or None for a safe key.

    Examples
    --------
    >>> from fixedutf32.store._keys import key_problem
    >>> key_problem("a/c/0") is None, key_problem("a/../../victim.txt")
    (True, "a '..' segment")
    """
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
    """Raise StoreError unless ``key`` is safe to write (see :func:`key_problem`).

    Parameters
    ----------
    key : str
    where : str
        Where the key came from, for the message ("the source 'in.zip'").
    """
    problem = key_problem(key)
    if problem is not None:
        raise StoreError(
            f"unsafe key {key!r} in {where}: it holds {problem}; {_RULE}. Nothing was written"
        )
