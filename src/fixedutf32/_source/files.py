"""Reading chunk files of a local store safely, and fast."""
# Opened without blocking (O_NONBLOCK: a FIFO returns at once), checked with fstat before a byte is
# read: a FIFO, a device (a chunk linked to /dev/zero), a socket or an oversized file is corrupt.
# Read in blocks a callback works on while in cache: the chunk's bytes cross memory once.

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .._arguments import as_bytes
from ..errors import CorruptChunkError

if TYPE_CHECKING:
    from .._arguments import Buffer

__all__ = [
    "BLOCK_BYTES",
    "ChunkDirectories",
    "ChunkFile",
    "is_within",
    "open_chunk_file",
    "outside_link_reason",
    "read_regular_file",
]

#: Bytes read at a time: blocks of this size stay in L2 while a callback works on them.
BLOCK_BYTES = 256 * 1024

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
# open() errors that mean "no chunk here", as LocalStore reads them.
_MISSING = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EISDIR})


def is_within(root: str, path: str) -> bool:
    """Whether the real path ``path`` is ``root`` or lies below it (both real, absolute paths)."""
    if os.name != "nt":  # a prefix test: commonpath costs more than reading a small chunk
        return path == root or path.startswith(root if root.endswith("/") else root + "/")
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:  # different drives (Windows), or a relative path: not inside
        return False


def outside_link_reason(target: str, root: str) -> str:
    """How a link out of the store is worded, by the reader and by ``check`` alike."""
    return (
        f"it links outside the store, to {target!r}; expected a file inside {root!r} "
        f"(links out of a store are followed only when asked: --follow-links)"
    )


# Where Linux shows the path an open file descriptor refers to (links resolved).
_PROC_FD = "/proc/self/fd"


def _opened_path(fd: int, path: str | os.PathLike[str]) -> str:
    """The real path of the file open at ``fd``: from /proc where there is one, else resolved."""
    try:
        return os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        return os.path.realpath(path)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class ChunkFile:
    """An open chunk file, checked to be a regular file of at most the chunk's size."""

    # Made by open_chunk_file; size (fstat) and mtime_ns fingerprint its content.
    __slots__ = ("_file", "key", "mtime_ns", "size")

    def __init__(self, file: io.FileIO, key: str, size: int, mtime_ns: int) -> None:
        self._file = file
        self.key = key
        self.size = size
        self.mtime_ns = mtime_ns

    def __enter__(self) -> ChunkFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def fileno(self) -> int:
        """The open file's descriptor."""
        return self._file.fileno()

    def _fill(self, view: memoryview) -> None:
        done, size = 0, view.nbytes
        while done < size:
            n = self._file.readinto(view[done:])
            if not n:
                raise CorruptChunkError(
                    self.key, f"the file shrank while it was read ({self.size} bytes at first)"
                )
            done += n

    def read_into(
        self,
        out: Buffer,
        *,
        block_bytes: int = BLOCK_BYTES,
        on_block: Callable[[memoryview, int], None] | None = None,
    ) -> memoryview:
        """Read the whole file into the start of ``out``, block by block; returns that view."""
        # on_block(block, offset) after each block (block_bytes a multiple of the element size);
        # its exception ends the read.  CorruptChunkError if the file shrinks while read.
        view = as_bytes(out)
        size = self.size
        if view.nbytes < size:
            raise ValueError(f"out holds {view.nbytes} bytes; the file holds {size}")
        view = view[:size]
        if on_block is None and size:
            self._fill(view)
            return view
        for start in range(0, size, block_bytes):
            block = view[start : start + block_bytes]
            self._fill(block)
            if on_block is not None:
                on_block(block, start)
        return view

    def stream(self, buffer: Buffer, on_block: Callable[[memoryview, int], None]) -> None:
        """Read the whole file through ``buffer``, reused for each block, for ``on_block``."""
        # For work that needs each block once (validating): nothing as large as the file is made.
        view = as_bytes(buffer)
        step = view.nbytes
        size = self.size
        for start in range(0, size, step):
            block = view[: min(step, size - start)]
            self._fill(block)
            on_block(block, start)

    def read_scatter(self, offset: int, outs: Sequence[Buffer]) -> None:
        """Fill each of ``outs`` in turn from ``offset`` of the file, in one ``preadv`` call."""
        # A dense run of a shard's inner chunks read straight into each chunk's place.
        views = [as_bytes(out) for out in outs]
        total = sum(view.nbytes for view in views)
        if not hasattr(os, "preadv") or offset < 0 or offset + total > self.size:
            for view in views:  # out of range: read_at says so
                self.read_at(offset, view)
                offset += view.nbytes
            return
        n = os.preadv(self._file.fileno(), views, offset)
        at = offset
        for view in views if n < total else ():  # a short read (rare): the rest one by one
            got = min(max(n - (at - offset), 0), view.nbytes)
            if got < view.nbytes:
                self.read_at(at + got, view[got:])
            at += view.nbytes

    def read_at(self, offset: int, out: Buffer) -> memoryview:
        """Read ``len(out)`` bytes from ``offset`` of the file into ``out`` (``pread``)."""
        # ValueError if the range is not inside the file as opened; CorruptChunkError if it shrank.
        view = as_bytes(out)
        if offset < 0 or offset + view.nbytes > self.size:
            end = offset + view.nbytes
            raise ValueError(f"bytes {offset}..{end} are not inside the file of {self.size} bytes")
        if not hasattr(os, "preadv"):  # Windows: seek, then read
            self._file.seek(offset)
            self._fill(view)
            return view
        done = 0
        fd = self._file.fileno()
        while done < view.nbytes:
            n = os.preadv(fd, [view[done:]], offset + done)
            if not n:
                raise CorruptChunkError(
                    self.key, f"the file shrank while it was read ({self.size} bytes at first)"
                )
            done += n
        return view


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_CAREFUL = -1  # a directory that is not plainly inside the store: its files go the careful way


class ChunkDirectories:
    """The short way to many small chunk files: each directory opened once, each file under it."""

    # A directory is checked once to lie inside within; its files are opened with O_NOFOLLOW, so
    # lie inside too with no check of their own.  read says when it cannot, open_chunk_file why.
    # POSIX only (``dir_fd``): :attr:`usable` says so.
    usable = os.open in os.supports_dir_fd and bool(_NOFOLLOW)

    def __init__(self, root: str, within: str | None) -> None:
        self.root = root
        self.within = within
        self._fds: dict[str, int | None] = {}

    def __enter__(self) -> ChunkDirectories:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self._fds.values():
            if fd is not None and fd >= 0:
                os.close(fd)
        self._fds.clear()

    def _directory(self, name: str) -> int | None:
        """The open directory ``name`` of the store; None if missing, ``_CAREFUL`` if unusual."""
        path = os.path.join(self.root, name) if name else self.root
        try:
            fd = os.open(path, _DIRECTORY)
        except OSError as exc:
            return None if exc.errno in _MISSING else _CAREFUL
        if self.within is not None and not is_within(self.within, _opened_path(fd, path)):
            os.close(fd)
            return _CAREFUL
        return fd

    def directory(self, head: str) -> int | None:
        """The open directory ``head`` of the store; None if missing, negative if unusual."""
        fds = self._fds
        return fds[head] if head in fds else fds.setdefault(head, self._directory(head))

    def read(self, key: str, out: memoryview) -> bool | None:
        """Fill ``out`` with the regular file ``key``, exactly its size: True; None if missing."""
        # False for anything else (a link, not a regular file, another size, an error, a short
        # read): out may then hold anything.
        head, _, name = key.rpartition("/")
        directory = self.directory(head)
        if directory is None:
            return None
        if directory == _CAREFUL:
            return False
        try:
            fd = os.open(name, _FLAGS | _NOFOLLOW, dir_fd=directory)
        except OSError as exc:
            return None if exc.errno in _MISSING else False
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size != out.nbytes:
                return False
            return os.readv(fd, [out]) == out.nbytes
        except OSError:
            return False
        finally:
            os.close(fd)


def open_chunk_file(
    path: str | os.PathLike[str], *, key: str, max_nbytes: int, within: str | None = None
) -> ChunkFile | None:
    """Open a local chunk file if it is a regular file of at most ``max_nbytes`` bytes."""
    # None for no file (or a directory) there: a missing chunk. within: the store root's real path,
    # which the opened file (links resolved) must lie in; None follows links anywhere.
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno in _MISSING:
            return None
        raise CorruptChunkError(key, f"cannot open the chunk's file: {exc.strerror}") from None
    try:
        if within is not None:
            # Checked on the open file, not the name: a link swapped in
            # since the store was listed is caught too.
            opened = _opened_path(fd, path)
            if not is_within(within, opened):
                raise CorruptChunkError(key, outside_link_reason(opened, within))
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            os.close(fd)
            return None
        if not stat.S_ISREG(info.st_mode):
            raise CorruptChunkError(key, f"expected a regular file, got {_kind(info.st_mode)}")
        if info.st_size > max_nbytes:
            raise CorruptChunkError(
                key,
                f"the file holds {info.st_size} bytes; a chunk here holds at most {max_nbytes}",
            )
        file = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    return ChunkFile(file, key, info.st_size, info.st_mtime_ns)


def read_regular_file(
    path: str | os.PathLike[str], *, key: str, max_nbytes: int, within: str | None = None
) -> bytes | None:
    """The bytes of a small local file (a metadata document, a record), read as a chunk file is."""
    # None for no file (or a directory) there; any other problem is a CorruptChunkError.
    file = open_chunk_file(path, key=key, max_nbytes=max_nbytes, within=within)
    if file is None:
        return None
    with file:
        try:
            return bytes(file.read_into(bytearray(file.size)))
        except OSError as exc:
            raise CorruptChunkError(key, f"cannot read the file: {exc.strerror}") from None
