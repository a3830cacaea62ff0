# Included at the end of _kernels.pyx (``include "_transcode.pxi"``), so the
# file directives, the chosen table (``fu32_active_table()``), ``acquire``, ``check_units``,
# ``fits`` and ``status_tuple`` are shared.
#
# Kernels between fixed_length_utf32 chunks and UTF-8: the loops are entries
# of each level's table (csrc/table.h), and csrc/layout.h holds the two that
# need no level; these wrappers release the GIL around them and hand back
# the status tuple ``(kind, element, position, detail)`` that
# ``fixedutf32._status`` turns into exceptions.  Nothing here raises on bad
# data, and nothing here allocates: the Python layer passes every buffer in.

cdef extern from "csrc/layout.h" nogil:
    void fu32_utf8_scatter_fixed(const int64_t *offsets, Py_ssize_t n, const uint8_t *values,
                                 uint8_t *dst, Py_ssize_t stride)
    fu32_status fu32_utf8_vlen_parse(const uint8_t *buf, Py_ssize_t size, Py_ssize_t n,
                                     int64_t *pos)

UTF8_SLACK = FU32_UTF8_SLACK


# The wrappers take any C-contiguous buffers, acquired as plain bytes with the
# core's ``acquire`` (so U arrays, bytes and memoryviews pass without a cast);
# ``fixedutf32.transcode`` has checked types, sizes and dtypes already.


# Returns (status, nbytes, done): the end of the bytes written and the elements transcoded, both
# counted from the start of their buffers.  offsets (int64, n + 1 entries) gets each element's
# start (offsets[start] = pos), or is None with vlen (the vlen-utf8 layout; start and pos 0).
def utf32_to_utf8(source, Py_ssize_t width, bint swap, bint validate, offsets, destination,
                  bint vlen, Py_ssize_t start=0, Py_ssize_t pos=0):
    """Transcode elements ``start ..`` of ``source`` to UTF-8 in ``destination``, from ``pos``."""
    cdef Py_buffer src, dst, off
    cdef Py_ssize_t n, out_len = 0, done = 0
    cdef int64_t *offs = NULL
    cdef fu32_status r
    cdef const fu32_kernels *k = fu32_active_table()
    cdef int flags = ((FU32_SRC_SWAPPED if swap else 0) | (FU32_VALIDATE if validate else 0)
                      | (FU32_VLEN if vlen else 0))
    cdef bint have_offsets = offsets is not None
    check_units(width, "width")
    acquire(source, &src, False)
    try:
        acquire(destination, &dst, True)
        try:
            n = src.len // (4 * width)
            if start < 0 or start > n or pos < 0 or pos > dst.len or (vlen and (start or pos)):
                raise ValueError(f"bad start {start} or pos {pos}")
            # vlen needs room for the worst case plus UTF8_SLACK; otherwise the kernel stops
            # before the first element that might not fit and the caller resumes with more room.
            if vlen and dst.len < 4 * n * width + 4 * n + 4 + FU32_UTF8_SLACK:
                raise ValueError(f"destination holds {dst.len} bytes, too few for {n} elements")
            if have_offsets:
                acquire(offsets, &off, True)
                if off.len < 8 * (n + 1):
                    PyBuffer_Release(&off)
                    raise ValueError(f"offsets hold {off.len} bytes, need {8 * (n + 1)}")
                offs = <int64_t *>off.buf + start
            try:
                with nogil:
                    r = k.utf32_to_utf8(<const uint8_t *>src.buf + 4 * width * start,
                                        n - start, width, flags, offs, <uint8_t *>dst.buf, pos,
                                        dst.len, &out_len, &done)
            finally:
                if have_offsets:
                    PyBuffer_Release(&off)
        finally:
            PyBuffer_Release(&dst)
    finally:
        PyBuffer_Release(&src)
    if r.kind != FU32_OK:
        r.element += start
    return status_tuple(r), out_len, done + start


def utf8_to_utf32(positions, Py_ssize_t stride, Py_ssize_t n, values, Py_ssize_t width,
                  bint swap, destination):
    """Decode ``n`` UTF-8 strings into ``destination`` (n * width units, zero padded); a status."""
    # String i is values[positions[i * stride]:positions[i * stride + 1]] (int64 positions);
    # destination None only checks.
    cdef Py_buffer pos, val, dst
    cdef fu32_status r
    cdef const fu32_kernels *k = fu32_active_table()
    cdef bint checking = destination is None
    cdef uint8_t *d = NULL
    cdef const int64_t *p
    check_units(width, "width")
    if stride <= 0 or n < 0:
        raise ValueError(f"bad stride {stride} or count {n}")
    if n == 0:
        return OK_STATUS
    acquire(positions, &pos, False)
    try:
        # The loop reads entries up to (n - 1) * stride + 1.
        if pos.len < 16 or n - 1 > (pos.len // 8 - 2) // stride:
            raise ValueError(f"positions hold {pos.len} bytes, too few for {n} strings")
        acquire(values, &val, False)
        try:
            if not checking:
                acquire(destination, &dst, True)
                if not fits(dst.len, n, 4 * width):
                    PyBuffer_Release(&dst)
                    raise ValueError(f"destination holds {dst.len} bytes, too few for {n} elements")
                d = <uint8_t *>dst.buf
            try:
                p = <const int64_t *>pos.buf
                with nogil:
                    r = k.utf8_to_utf32(p, p + 1, stride, n, <const uint8_t *>val.buf, val.len,
                                        width, FU32_SWAP if swap else 0, d)
            finally:
                if not checking:
                    PyBuffer_Release(&dst)
        finally:
            PyBuffer_Release(&val)
    finally:
        PyBuffer_Release(&pos)
    return status_tuple(r)


def utf8_vlen_parse(chunk, Py_ssize_t n, positions):
    """Fill ``positions`` (int64) with each item's (start, end) in a vlen-utf8 chunk; a status."""
    cdef Py_buffer buf, pos
    cdef fu32_status r
    if n < 0:
        raise ValueError(f"bad count {n}")
    acquire(chunk, &buf, False)
    try:
        acquire(positions, &pos, True)
        try:
            if n > pos.len // 16:
                raise ValueError(f"positions hold {pos.len} bytes, too few for {n} items")
            with nogil:
                r = fu32_utf8_vlen_parse(<const uint8_t *>buf.buf, buf.len, n, <int64_t *>pos.buf)
        finally:
            PyBuffer_Release(&pos)
    finally:
        PyBuffer_Release(&buf)
    return status_tuple(r)


cdef Py_ssize_t bad_fixed_offsets(const int64_t *offsets, Py_ssize_t n, Py_ssize_t values_len,
                                  Py_ssize_t stride) noexcept nogil:
    """The first string whose offsets leave ``values`` or whose length exceeds ``stride``, or -1."""
    cdef Py_ssize_t i
    cdef int64_t a, b
    for i in range(n):
        a = offsets[i]
        b = offsets[i + 1]
        if a < 0 or b < a or b > values_len or b - a > stride:
            return i
    return -1


def utf8_scatter_fixed(offsets, values, destination, Py_ssize_t stride):
    """Copy each string into its ``stride``-byte slot of ``destination``, zero padded."""
    # String i (int64 offsets) goes to destination[i * stride:(i + 1) * stride].
    cdef Py_buffer off, val, dst
    cdef Py_ssize_t n, bad = -1
    if stride <= 0:
        raise ValueError(f"bad stride {stride}")
    acquire(offsets, &off, False)
    try:
        n = off.len // 8 - 1
        acquire(values, &val, False)
        try:
            acquire(destination, &dst, True)
            try:
                if n > 0 and not fits(dst.len, n, stride):
                    raise ValueError(f"destination holds {dst.len} bytes, too few for {n} strings")
                if n > 0:
                    with nogil:
                        bad = bad_fixed_offsets(<const int64_t *>off.buf, n, val.len, stride)
                        if bad < 0:
                            fu32_utf8_scatter_fixed(<const int64_t *>off.buf, n,
                                                    <const uint8_t *>val.buf,
                                                    <uint8_t *>dst.buf, stride)
                if bad >= 0:
                    raise ValueError(
                        f"string {bad}: offsets outside values or longer than {stride}")
            finally:
                PyBuffer_Release(&dst)
        finally:
            PyBuffer_Release(&val)
    finally:
        PyBuffer_Release(&off)
