# Included at the end of _kernels.pyx, after _transcode.pxi: the batched
# wrapper, which shares ``acquire``, ``check_units`` and ``status_tuple``.
#
# One call acquires every buffer of a batch, releases the GIL once and runs
# the kernels over all of them; ``fixedutf32.batch`` checks the arguments
# and words the errors.  A batch goes in two passes when asked (check every
# chunk, then write), so that a bad chunk late in the batch leaves every
# destination as it was.

from cpython.mem cimport PyMem_Calloc, PyMem_Free

cdef extern from "csrc/common.h" nogil:
    fu32_status fu32_ok()

# What convert_many reports about a chunk's sizes, as a status kind (the
# data kinds are >= 0): the source is not a whole number of elements, its
# destination does not have its size, or the destination partly overlaps it.
BATCH_BAD_SIZE = -1
BATCH_BAD_OUT_SIZE = -2
BATCH_OVERLAP = -3


cdef inline bint partly_overlap(const Py_buffer *a, const Py_buffer *b) noexcept nogil:
    cdef uintptr_t a0 = <uintptr_t>a.buf, b0 = <uintptr_t>b.buf
    cdef uintptr_t a1 = a0 + <uintptr_t>a.len, b1 = b0 + <uintptr_t>b.len
    if a0 == a1 or b0 == b1 or (a0 == b0 and a1 == b1):
        return False
    return a0 < b1 and b0 < a1


cdef fu32_status convert_all(const fu32_kernels *k, Py_buffer *src, Py_buffer *dst,
                             uint8_t *whole, Py_ssize_t n, Py_ssize_t width, int flags,
                             bint check_first, Py_ssize_t *bad) noexcept nogil:
    """Run the batch; on error *bad is the chunk at fault."""
    cdef Py_ssize_t i, offset = 0
    cdef fu32_status status = fu32_ok()
    cdef uint8_t *d
    if check_first or (dst == NULL and whole == NULL):
        for i in range(n):
            status = k.validate(<const uint8_t *>src[i].buf, src[i].len // 4, width,
                                flags & FU32_SRC_SWAPPED)
            if status.kind != FU32_OK:
                bad[0] = i
                return status
    if dst == NULL and whole == NULL:
        return status
    for i in range(n):
        if whole != NULL:
            d = whole + offset
            offset += src[i].len
        else:
            d = <uint8_t *>dst[i].buf
        if d == <uint8_t *>src[i].buf and not flags & FU32_SWAP:
            # In place without a swap: nothing to write, only to check.
            if flags & FU32_VALIDATE and not check_first:
                status = k.validate(<const uint8_t *>d, src[i].len // 4, width, 0)
        else:
            status = k.convert(<const uint8_t *>src[i].buf, d, src[i].len // 4, width, flags)
        if status.kind != FU32_OK:
            bad[0] = i
            return status
    return status


def convert_many(list sources, destinations, Py_ssize_t width, int flags, bint check_first):
    """Convert each of ``sources`` by ``flags``, with the GIL released once.

    ``destinations`` is None (only check: ``flags`` VALIDATE and
    SRC_SWAPPED), a list of as many buffers, each exactly as large as its
    source (it may be the source itself: in place), or one buffer holding
    all of them back to back.  ``check_first`` validates every source
    before anything is written.  Returns ``(index, status)``: ``(-1,
    OK_STATUS)``, or the chunk at fault and its status, whose kind is a
    BATCH_* value for a size or an overlap.
    """
    check_units(width, "width")
    cdef Py_ssize_t n = len(sources), i, total = 0, bad = -1
    cdef Py_ssize_t got_src = 0, got_dst = 0
    cdef bint each = destinations is not None and type(destinations) is list
    cdef bint one = destinations is not None and not each
    cdef Py_buffer whole
    cdef bint got_whole = False
    cdef Py_buffer *src = NULL
    cdef Py_buffer *dst = NULL
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status
    if each and len(destinations) != n:
        raise ValueError(f"{len(destinations)} destinations for {n} sources")
    if n == 0:
        return -1, _OK_STATUS
    src = <Py_buffer *>PyMem_Calloc(n, sizeof(Py_buffer))
    if each:
        dst = <Py_buffer *>PyMem_Calloc(n, sizeof(Py_buffer))
    if src == NULL or (each and dst == NULL):
        PyMem_Free(src)
        PyMem_Free(dst)
        raise MemoryError(f"cannot track the buffers of {n} chunks")
    try:
        for i in range(n):
            acquire(sources[i], &src[got_src], False)
            got_src += 1
            if src[i].len % (4 * width):
                return i, (BATCH_BAD_SIZE, i, src[i].len, 0)
            total += src[i].len
        if each:
            for i in range(n):
                acquire(destinations[i], &dst[got_dst], True)
                got_dst += 1
                if dst[i].len != src[i].len:
                    return i, (BATCH_BAD_OUT_SIZE, i, dst[i].len, src[i].len)
                if partly_overlap(&src[i], &dst[i]):
                    return i, (BATCH_OVERLAP, i, 0, 0)
        elif one:
            acquire(destinations, &whole, True)
            got_whole = True
            if whole.len != total:
                return -1, (BATCH_BAD_OUT_SIZE, -1, whole.len, total)
        with nogil:
            status = convert_all(k, src, dst, <uint8_t *>whole.buf if one else NULL, n, width,
                                 flags, check_first, &bad)
    finally:
        if got_whole:
            PyBuffer_Release(&whole)
        for i in range(got_dst):
            PyBuffer_Release(&dst[i])
        for i in range(got_src):
            PyBuffer_Release(&src[i])
        PyMem_Free(dst)
        PyMem_Free(src)
    return bad, status_tuple(status)


def converted_many(list sources, Py_ssize_t width, int flags):
    """Convert all of ``sources`` by ``flags`` into one new buffer, back to back.

    Returns ``(index, status, buffer, size)``: ``index`` and ``status`` as
    convert_many's, ``buffer`` a new uint8 array (its memory from the pool
    when large; None on error), ``size`` the size of every source when they are all alike,
    else -1.
    """
    check_units(width, "width")
    cdef Py_ssize_t n = len(sources), i, total = 0, size = -1, bad = -1
    cdef Py_ssize_t got_src = 0
    cdef Py_buffer *src = NULL
    cdef const fu32_kernels *k = fu32_active_table()
    cdef fu32_status status = fu32_ok()
    cdef Py_buffer whole
    cdef bint got_whole = False
    result = None
    if n == 0:
        return -1, _OK_STATUS, _np_empty(0, "u1"), -1
    src = <Py_buffer *>PyMem_Calloc(n, sizeof(Py_buffer))
    if src == NULL:
        raise MemoryError(f"cannot track the buffers of {n} chunks")
    try:
        for i in range(n):
            acquire(sources[i], &src[got_src], False)
            got_src += 1
            if src[i].len % (4 * width):
                return i, (BATCH_BAD_SIZE, i, src[i].len, 0), None, -1
            if i == 0:
                size = src[0].len
            elif size != src[i].len:
                size = -1
            total += src[i].len
        result = (_np_frombuffer(_new_buffer(total), "u1") if total >= _POOL_MIN
                  else _np_empty(total, "u1"))
        acquire(result, &whole, True)
        got_whole = True
        with nogil:
            status = convert_all(k, src, NULL, <uint8_t *>whole.buf, n, width, flags, False, &bad)
    finally:
        if got_whole:
            PyBuffer_Release(&whole)
        for i in range(got_src):
            PyBuffer_Release(&src[i])
        PyMem_Free(src)
    if status.kind != FU32_OK:
        return bad, status_tuple(status), None, -1
    return -1, _OK_STATUS, result, size
