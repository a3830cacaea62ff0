# Included at the end of _kernels.pyx: chunk files read and checked (and put in
# native order) in place, block by block as they land, with the GIL released:
# many small files under one directory in one call (read_files), or a range of
# an open file (read_checked, a shard's inner chunks back to back).  The
# callers (ElementLayout, then KeyReader) check the arguments' meaning; here
# only what memory safety needs.

from libc.stdint cimport INT32_MAX, int32_t, uint64_t

cdef extern from "csrc/files.h" nogil:
    int fu32_open_at(int dir_fd, const char *name, size_t nbytes, int *fd)
    size_t fu32_pread_full(int fd, uint8_t *out, size_t nbytes, uint64_t offset)
    void fu32_close(int fd)
    const int FU32_FILE_READ
    const int FU32_FILE_MISSING
    const int FU32_FILE_UNUSUAL

cdef enum:
    _FILE_INVALID = 3  # a code unit that is not a scalar value: the status says which
    _FILE_SHORT = 4    # the file ended before the bytes asked for (it shrank)
FILE_MISSING = FU32_FILE_MISSING
FILE_UNUSUAL = FU32_FILE_UNUSUAL
FILE_INVALID = _FILE_INVALID
FILE_SHORT = _FILE_SHORT


# Each block is checked (and converted) in cache: in place, or via bounce (not NULL) into out with
# non-temporal stores (a large cold result: its lines are not read before written).  check_first
# (with bounce): a failing block leaves out as it was.  status.element counts from out.
cdef int _read_blocks(int fd, uint64_t offset, uint8_t *out, Py_ssize_t nbytes,
                      Py_ssize_t block, uint8_t *bounce, Py_ssize_t width, int flags,
                      const fu32_kernels *k, fu32_status *status,
                      bint check_first=False) noexcept nogil:
    """Read ``nbytes`` from ``offset`` into ``out`` a block at a time, checked (and converted)."""
    cdef Py_ssize_t at = 0, size
    cdef uint8_t *land
    while at < nbytes:
        size = min(block, nbytes - at)
        land = out + at if bounce == NULL else bounce
        if fu32_pread_full(fd, land, <size_t>size, offset + <uint64_t>at) != <size_t>size:
            return _FILE_SHORT
        if bounce != NULL and check_first:
            # the block is in L1/L2: checking it first costs little beside the page-cache copy
            status[0] = k.validate(land, size // 4, width, flags & FU32_SRC_SWAPPED)
            if status.kind == FU32_OK:
                k.convert(land, out + at, size // 4, width,
                          (flags & ~FU32_VALIDATE) | FU32_STREAM)
        elif bounce != NULL:
            status[0] = k.convert(land, out + at, size // 4, width, flags | FU32_STREAM)
        elif flags & FU32_SWAP:
            status[0] = k.convert(land, land, size // 4, width, flags)
        else:
            status[0] = k.validate(land, size // 4, width, flags & FU32_SRC_SWAPPED)
        if status.kind != FU32_OK:
            status.element += at // (4 * width)
            return _FILE_INVALID
        at += size
    return FU32_FILE_READ


cdef Py_ssize_t _take_bounce(object bounce, Py_buffer *spare, Py_ssize_t width) except -1:
    """The block size, from ``bounce`` (acquired into ``spare``) or 256 KiB in place (NULL)."""
    cdef Py_ssize_t block = 256 << 10
    spare.buf = NULL
    if bounce is not None:
        acquire(bounce, spare, True)
        block = spare.len
    if block < 4 * width:
        if bounce is not None:
            PyBuffer_Release(spare)
        raise ValueError(f"a block of {block} bytes holds no element of {width} units")
    return block - block % (4 * width)


# bounce (its size the block; None: 256 KiB in place) and check_first as for _read_blocks.
# Returns (count, outcome, status): the files done before the first missing, unusual, short or
# invalid one, its FILE_* outcome (0: all done), the kernel's status (element from its start).
def read_files(int dir_fd, list names, destination, const Py_ssize_t[::1] starts,
               Py_ssize_t nbytes, bounce, Py_ssize_t width, int flags, bint check_first=False):
    """Read file ``names[i]`` (under ``dir_fd``) into ``destination[starts[i]:][:nbytes]``."""
    check_units(width, "width")
    cdef Py_ssize_t count = len(names), i, done = 0, block
    cdef int outcome = FU32_FILE_READ, fd
    cdef Py_buffer dst
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status = fu32_ok()
    cdef const char **paths
    cdef Py_buffer spare
    if starts.shape[0] != count:
        raise ValueError(f"{count} names but {starts.shape[0]} starts")
    if nbytes < 0 or nbytes % (4 * width):
        raise ValueError(f"nbytes {nbytes} is not a whole number of elements of {width} units")
    for i in range(count):
        if type(names[i]) is not bytes:
            raise TypeError(f"names[{i}] must be bytes, got {type(names[i]).__name__}")
    block = _take_bounce(bounce, &spare, width)
    acquire(destination, &dst, True)
    paths = <const char **>malloc(max(count, 1) * sizeof(char *))
    try:
        if paths == NULL:
            raise MemoryError()
        for i in range(count):
            if starts[i] < 0 or starts[i] > dst.len or nbytes > dst.len - starts[i]:
                raise ValueError(
                    f"starts[{i}] = {starts[i]}: {nbytes} bytes from there pass the "
                    f"destination's {dst.len}")
            paths[i] = <const char *>(<bytes>names[i])  # names holds them for the call
        with nogil:
            for i in range(count):
                # Only a regular file of exactly nbytes bytes opens (links not followed).
                outcome = fu32_open_at(dir_fd, paths[i], <size_t>nbytes, &fd)
                if outcome != FU32_FILE_READ:
                    break
                outcome = _read_blocks(fd, 0, <uint8_t *>dst.buf + starts[i], nbytes, block,
                                       <uint8_t *>spare.buf, width, flags, k, &status,
                                       check_first)
                fu32_close(fd)
                if outcome != FU32_FILE_READ:
                    break
                done += 1
    finally:
        free(paths)
        PyBuffer_Release(&dst)
        if bounce is not None:
            PyBuffer_Release(&spare)
    return done, outcome, status_tuple(status)


# bounce and check_first as for read_files.  Returns (outcome, status): 0 (all read and checked),
# FILE_SHORT or FILE_INVALID with the kernel's status (element from the destination's start).
def read_checked(int fd, Py_ssize_t offset, destination, bounce, Py_ssize_t width, int flags,
                 bint check_first=False):
    """Read ``len(destination)`` bytes of the open file ``fd`` from ``offset``, block by block."""
    check_units(width, "width")
    cdef Py_buffer dst, spare
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status = fu32_ok()
    cdef int outcome
    cdef Py_ssize_t block
    if offset < 0:
        raise ValueError(f"offset {offset} is negative")
    block = _take_bounce(bounce, &spare, width)
    try:
        acquire(destination, &dst, True)
    except BaseException:
        if bounce is not None:
            PyBuffer_Release(&spare)
        raise
    try:
        if dst.len % (4 * width):
            raise ValueError(f"destination {dst.len} bytes: not whole elements of {width} units")
        with nogil:
            outcome = _read_blocks(fd, <uint64_t>offset, <uint8_t *>dst.buf, dst.len, block,
                                   <uint8_t *>spare.buf, width, flags, k, &status, check_first)
    finally:
        PyBuffer_Release(&dst)
        if bounce is not None:
            PyBuffer_Release(&spare)
    return outcome, status_tuple(status)


# Read through bounce (its size the block), each block checked in cache.  outcome is 0,
# FILE_SHORT or FILE_INVALID with the kernel's status (element counted from offset).
def read_longest(int fd, Py_ssize_t offset, Py_ssize_t nbytes, bounce, Py_ssize_t width,
                 int flags):
    """Return ``(outcome, status, longest)`` over ``nbytes`` of the file ``fd`` from ``offset``."""
    check_units(width, "width")
    cdef Py_buffer spare
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status = fu32_ok()
    cdef int outcome = FU32_FILE_READ
    cdef Py_ssize_t block, at = 0, size, best = 0
    if offset < 0 or nbytes < 0:
        raise ValueError(f"offset {offset} and nbytes {nbytes} must be >= 0")
    if nbytes % (4 * width):
        raise ValueError(f"nbytes {nbytes}: not whole elements of {width} units")
    if bounce is None:
        raise TypeError("bounce must be a writable buffer")
    block = _take_bounce(bounce, &spare, width)
    try:
        with nogil:
            while at < nbytes:
                size = min(block, nbytes - at)
                if fu32_pread_full(fd, <uint8_t *>spare.buf, <size_t>size,
                                   <uint64_t>offset + <uint64_t>at) != <size_t>size:
                    outcome = _FILE_SHORT
                    break
                status = k.longest(<const uint8_t *>spare.buf, size // (4 * width), width, &best,
                                   flags)
                if status.kind != FU32_OK:
                    status.element += at // (4 * width)
                    outcome = _FILE_INVALID
                    break
                at += size
    finally:
        PyBuffer_Release(&spare)
    return outcome, status_tuple(status), best


# Where read_utf8 writes: the UTF-8 of each selected element and its start.
cdef struct _Utf8Out:
    uint8_t *values
    Py_ssize_t pos          # forward: the end so far; backward: the start so far
    Py_ssize_t limit        # forward: no byte at or past it; backward: none before it
    void *offsets           # int64 (wide) or int32 entries, absolute positions in values
    bint wide
    Py_ssize_t index        # forward: the next element's entry; backward: one past it
    bint backward
    uint8_t *scratch        # backward: a block's UTF-8 before it is moved to its place
    Py_ssize_t scratch_len
    int64_t *starts         # a block's element starts, from the kernel


cdef int _utf8_block(const uint8_t *src, Py_ssize_t n, Py_ssize_t width, int flags,
                     const fu32_kernels *k, _Utf8Out *out, fu32_status *status) noexcept nogil:
    """Transcode ``n`` elements of a block in cache to ``out`` (see _Utf8Out)."""
    cdef Py_ssize_t length = 0, done = 0, i, shift = 0
    if out.backward:  # into scratch, then moved below what is written already
        status[0] = k.utf32_to_utf8(src, n, width, flags, out.starts, out.scratch, 0,
                                    out.scratch_len, &length, &done)
        if status.kind == FU32_OK and (done != n or out.pos - out.limit < length):
            return _FILE_SHORT  # more than the worst case: cannot happen
        if status.kind != FU32_OK:
            return _FILE_INVALID
        out.pos -= length
        memcpy(out.values + out.pos, out.scratch, <size_t>length)
        out.index -= n
        shift = out.pos
    else:
        status[0] = k.utf32_to_utf8(src, n, width, flags, out.starts, out.values, out.pos,
                                    out.limit, &length, &done)
        if status.kind != FU32_OK:
            return _FILE_INVALID
        if done != n:
            return _FILE_SHORT
        out.pos = length
    if out.wide:
        for i in range(n):
            (<int64_t *>out.offsets)[out.index + i] = out.starts[i] + shift
    else:
        for i in range(n):
            (<int32_t *>out.offsets)[out.index + i] = <int32_t>(out.starts[i] + shift)
    if not out.backward:
        out.index += n
    return FU32_FILE_READ


cdef int _utf8_file(int fd, Py_ssize_t nbytes, Py_ssize_t low, Py_ssize_t high,
                    Py_ssize_t block, uint8_t *bounce, Py_ssize_t width, int flags,
                    const fu32_kernels *k, _Utf8Out *out, fu32_status *status) noexcept nogil:
    """Read a chunk file by blocks (backward: last first), checked; transcode ``low .. high``."""
    cdef Py_ssize_t item = 4 * width, blocks = (nbytes + block - 1) // block, j, at, size
    cdef Py_ssize_t first, last, a, z
    cdef int outcome
    for j in range(blocks):
        at = (blocks - 1 - j if out.backward else j) * block
        size = min(block, nbytes - at)
        if fu32_pread_full(fd, bounce, <size_t>size, <uint64_t>at) != <size_t>size:
            return _FILE_SHORT
        first = at // item
        last = first + size // item
        a = min(max(low, first), last)
        z = max(min(high, last), a)
        # The elements not selected are checked as well (padding past the array's edge too).
        if a > first:
            status[0] = k.validate(bounce, (a - first) * width, width, flags & FU32_SRC_SWAPPED)
            if status.kind != FU32_OK:
                status.element += first
                return _FILE_INVALID
        if last > z:
            status[0] = k.validate(bounce + (z - first) * item, (last - z) * width, width,
                                   flags & FU32_SRC_SWAPPED)
            if status.kind != FU32_OK:
                status.element += z
                return _FILE_INVALID
        if z > a:
            outcome = _utf8_block(bounce + (a - first) * item, z - a, width, flags, k, out,
                                  status)
            if outcome != FU32_FILE_READ:
                if outcome == _FILE_INVALID:
                    status.element += a
                return outcome
    return FU32_FILE_READ


# Files and bounce as for read_files; every code unit checked.  Returns (done, outcome, status,
# pos): the files done (backward: from the last), why the next stopped (0: none did, else FILE_*),
# the kernel's status (element from the file's start), where the UTF-8 ends (backward: starts).
def read_utf8(int dir_fd, list names, const Py_ssize_t[::1] lows, const Py_ssize_t[::1] highs,
              Py_ssize_t nbytes, bounce, Py_ssize_t width, bint swapped, offsets, bint wide,
              Py_ssize_t first, values, Py_ssize_t pos, Py_ssize_t limit, bint backward):
    """Transcode elements ``lows[i]:highs[i]`` of each chunk file ``names[i]`` to Arrow UTF-8."""
    check_units(width, "width")
    cdef Py_ssize_t count = len(names), i, j, block, total = 0, per_file
    cdef int outcome = FU32_FILE_READ, fd, done = 0
    cdef int flags = FU32_VALIDATE | (FU32_SRC_SWAPPED if swapped else 0)
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status = fu32_ok()
    cdef Py_buffer dst, off, spare
    cdef const char **paths = NULL
    cdef _Utf8Out out
    if lows.shape[0] != count or highs.shape[0] != count:
        raise ValueError(f"{count} names but {lows.shape[0]} lows and {highs.shape[0]} highs")
    if nbytes < 0 or nbytes % (4 * width):
        raise ValueError(f"nbytes {nbytes} is not a whole number of elements of {width} units")
    per_file = nbytes // (4 * width)
    for i in range(count):
        if type(names[i]) is not bytes:
            raise TypeError(f"names[{i}] must be bytes, got {type(names[i]).__name__}")
        if not 0 <= lows[i] <= highs[i] <= per_file:
            raise ValueError(f"elements {lows[i]}:{highs[i]} of file {i}: not within its "
                             f"{per_file}")
        total += highs[i] - lows[i]
    if bounce is None:
        raise TypeError("bounce must be a writable buffer")
    block = _take_bounce(bounce, &spare, width)
    out.scratch = NULL
    out.starts = NULL
    off.buf = NULL
    dst.buf = NULL
    try:
        acquire(values, &dst, True)
        acquire(offsets, &off, True)
        if not (0 <= limit <= dst.len and 0 <= pos <= dst.len
                and (limit <= pos if backward else pos <= limit)):
            raise ValueError(f"pos {pos} and limit {limit} do not fit values of {dst.len} "
                             f"bytes {'backward' if backward else 'forward'}")
        if not wide and dst.len > INT32_MAX:
            raise ValueError(f"values of {dst.len} bytes: int32 offsets cannot address them")
        if first < 0 or first > off.len // (8 if wide else 4) - total:
            raise ValueError(f"offsets hold {off.len} bytes, too few for entries {first} to "
                             f"{first + total}")
        # Backward: last file and block first, the UTF-8 ending at pos (never before limit), so
        # that a forward run from pos continues it.  offsets get each selected element's start
        # from entry first on, in array order; no end entry is written.
        out.values = <uint8_t *>dst.buf
        out.pos = pos
        out.limit = limit
        out.offsets = off.buf
        out.wide = wide
        out.index = first + total if backward else first
        out.backward = backward
        out.scratch_len = block + FU32_UTF8_SLACK
        out.scratch = <uint8_t *>malloc(<size_t>out.scratch_len)
        out.starts = <int64_t *>malloc(<size_t>(block // (4 * width) + 1) * sizeof(int64_t))
        paths = <const char **>malloc(max(count, 1) * sizeof(char *))
        if out.scratch == NULL or out.starts == NULL or paths == NULL:
            raise MemoryError()
        for i in range(count):
            paths[i] = <const char *>(<bytes>names[i])  # names holds them for the call
        with nogil:
            for j in range(count):
                i = count - 1 - j if backward else j
                outcome = fu32_open_at(dir_fd, paths[i], <size_t>nbytes, &fd)
                if outcome != FU32_FILE_READ:
                    break
                outcome = _utf8_file(fd, nbytes, lows[i], highs[i], block,
                                     <uint8_t *>spare.buf, width, flags, k, &out, &status)
                fu32_close(fd)
                if outcome != FU32_FILE_READ:
                    break
                done += 1
    finally:
        free(paths)
        free(out.scratch)
        free(out.starts)
        if off.buf != NULL:
            PyBuffer_Release(&off)
        if dst.buf != NULL:
            PyBuffer_Release(&dst)
        PyBuffer_Release(&spare)
    return done, outcome, status_tuple(status), out.pos
