# Included at the end of _kernels.pyx, after _transcode.pxi: the batched
# wrapper, which shares ``acquire``, ``check_units`` and ``status_tuple``.
#
# One call acquires every buffer of a batch, releases the GIL once and runs
# the kernels over all of them; ``fixedutf32.batch`` checks the arguments
# and words the errors.  A batch goes in two passes when asked (check every
# chunk, then write), so that a bad chunk late in the batch leaves every
# destination as it was.

from cpython.mem cimport PyMem_Calloc, PyMem_Free
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cdef extern from "csrc/common.h" nogil:
    fu32_status fu32_ok()

# What convert_many reports about a chunk's sizes and addresses, as a status
# kind (the data kinds are >= 0): the source is not a whole number of
# elements, its destination does not have its size, a destination overlaps a
# source other than its own or partly its own (element: the destination,
# position: the source), or two destinations overlap (element and position:
# the two, detail: 1 when they are the same bytes).
cdef enum:
    _BAD_SIZE = -1
    _BAD_OUT_SIZE = -2
    _OVERLAP = -3
    _OUTS_OVERLAP = -4
    _NO_MEMORY = 1  # find_overlap only: never a status
BATCH_BAD_SIZE = _BAD_SIZE
BATCH_BAD_OUT_SIZE = _BAD_OUT_SIZE
BATCH_OVERLAP = _OVERLAP
BATCH_OUTS_OVERLAP = _OUTS_OVERLAP


cdef struct _Span:
    uintptr_t start
    uintptr_t end
    Py_ssize_t index
    int is_out


cdef inline bint _before(const _Span *a, const _Span *b) noexcept nogil:
    # By start address; at one address sources before destinations (so that
    # a destination meets its own source, in place, after it).
    return a.start < b.start or (a.start == b.start and a.is_out < b.is_out)


# A bottom-up merge sort, the comparison inlined (libc's qsort calls a function per comparison:
# several times slower on a batch of small chunks); runs of 8 insertion-sorted first.
cdef void _sort_spans(_Span *spans, _Span *scratch, Py_ssize_t m) noexcept nogil:
    """Sort ``m`` spans by :func:`_before`, stably, with ``m`` spans of scratch space."""
    cdef Py_ssize_t lo, mid, hi, i, j, k, width = 8
    cdef _Span *src = spans
    cdef _Span *dst = scratch
    cdef _Span *swap
    cdef _Span item
    for i in range(1, m):
        lo = i - i % 8
        item = spans[i]
        j = i
        while j > lo and _before(&item, &spans[j - 1]):
            spans[j] = spans[j - 1]
            j -= 1
        spans[j] = item
    while width < m:
        lo = -2 * width
        while lo + 2 * width < m:
            lo += 2 * width
            mid = lo + width if lo + width < m else m
            hi = lo + 2 * width if lo + 2 * width < m else m
            if mid >= hi or not _before(&src[mid], &src[mid - 1]):  # already in order: copied
                memcpy(dst + lo, src + lo, (hi - lo) * sizeof(_Span))
                continue
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _before(&src[j], &src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            memcpy(dst + k, src + i, (mid - i) * sizeof(_Span))
            k += mid - i
            memcpy(dst + k, src + j, (hi - j) * sizeof(_Span))
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != spans:
        memcpy(spans, src, m * sizeof(_Span))


# Empty or NULL buffers are left out; sources may overlap, dst[i] may be exactly src[i].  Returns
# 0, BATCH_OVERLAP (*first the destination, *second the source), BATCH_OUTS_OVERLAP (the two
# destinations in order, *same: the same bytes) or _NO_MEMORY.
cdef int find_overlap(const Py_buffer *src, const Py_buffer *dst, Py_ssize_t n,
                      Py_ssize_t *first, Py_ssize_t *second, int *same) noexcept nogil:
    """The first conflict between the address ranges of a batch's buffers, in O(n log n)."""
    # Room for 2n spans and as many again to sort them.
    cdef _Span *spans = <_Span *>malloc(4 * n * sizeof(_Span) + 1)
    cdef Py_ssize_t i, m = 0, s, t, best_out = -1, top1 = -1, top2 = -1
    cdef Py_ssize_t tops[2]
    cdef _Span *x
    cdef _Span *o
    cdef int kind = 0
    if spans == NULL:
        return _NO_MEMORY
    for i in range(n):
        if src[i].buf != NULL and src[i].len > 0:
            spans[m].start = <uintptr_t>src[i].buf
            spans[m].end = spans[m].start + <uintptr_t>src[i].len
            spans[m].index = i
            spans[m].is_out = 0
            m += 1
        if dst[i].buf != NULL and dst[i].len > 0:
            spans[m].start = <uintptr_t>dst[i].buf
            spans[m].end = spans[m].start + <uintptr_t>dst[i].len
            spans[m].index = i
            spans[m].is_out = 1
            m += 1
    _sort_spans(spans, spans + 2 * n, m)
    # A sweep by start address: a span overlaps an earlier one iff it starts
    # before the largest end seen, so the earlier destination with the
    # largest end, and the two earlier sources with the largest ends (one
    # of them may be the span's own source, in place), are all it needs.
    for s in range(m):
        x = &spans[s]
        if best_out >= 0 and spans[best_out].end > x.start:
            o = &spans[best_out]
            if x.is_out:
                kind = _OUTS_OVERLAP
                first[0] = o.index if o.index < x.index else x.index
                second[0] = x.index if o.index < x.index else o.index
                same[0] = o.start == x.start and o.end == x.end
            else:
                kind = _OVERLAP
                first[0] = o.index
                second[0] = x.index
            break
        if x.is_out:
            tops[0] = top1
            tops[1] = top2
            for i in range(2):
                t = tops[i]
                if t < 0 or spans[t].end <= x.start:
                    break
                if (spans[t].index == x.index and spans[t].start == x.start
                        and spans[t].end == x.end):
                    continue  # in place
                kind = _OVERLAP
                first[0] = x.index
                second[0] = spans[t].index
                break
            if kind:
                break
            if best_out < 0 or x.end > spans[best_out].end:
                best_out = s
        elif top1 < 0 or x.end > spans[top1].end:
            top2 = top1
            top1 = s
        elif top2 < 0 or x.end > spans[top2].end:
            top2 = s
    free(spans)
    return kind


cdef tuple overlap_status(int kind, Py_ssize_t first, Py_ssize_t second, int same):
    if kind == _NO_MEMORY:
        raise MemoryError("cannot sort the buffers of a batch")
    return (kind, first, second, same)


# sources[i] is None when not read while the destinations are written; destinations[i] may be
# exactly sources[i].  Returns (-1, OK_STATUS) or (index, BATCH_OVERLAP/_OUTS_OVERLAP status).
def overlap_many(list sources, list destinations):
    """Whether a batch's destinations overlap one another or another's source."""
    cdef Py_ssize_t n = len(destinations), i, got_src = 0, got_dst = 0, first = -1, second = -1
    cdef int kind, same = 0
    cdef Py_buffer *src = NULL
    cdef Py_buffer *dst = NULL
    if len(sources) != n:
        raise ValueError(f"{n} destinations for {len(sources)} sources")
    if n == 0:
        return -1, _OK_STATUS
    src = <Py_buffer *>PyMem_Calloc(n, sizeof(Py_buffer))
    dst = <Py_buffer *>PyMem_Calloc(n, sizeof(Py_buffer))
    if src == NULL or dst == NULL:
        PyMem_Free(src)
        PyMem_Free(dst)
        raise MemoryError(f"cannot track the buffers of {n} chunks")
    # Acquired in order, so that the first got_src (got_dst) are released.
    try:
        for i in range(n):
            if sources[i] is not None:
                acquire(sources[i], &src[i], False)
            got_src += 1
        for i in range(n):
            acquire(destinations[i], &dst[i], False)
            got_dst += 1
        with nogil:
            kind = find_overlap(src, dst, n, &first, &second, &same)
    finally:
        for i in range(got_dst):
            PyBuffer_Release(&dst[i])
        for i in range(got_src):
            if sources[i] is not None:
                PyBuffer_Release(&src[i])
        PyMem_Free(dst)
        PyMem_Free(src)
    if kind == 0:
        return -1, _OK_STATUS
    return first, overlap_status(kind, first, second, same)


cdef fu32_status convert_all(const fu32_kernels *k, Py_buffer *src, Py_buffer *dst,
                             uint8_t *whole, Py_ssize_t n, Py_ssize_t width, int flags,
                             bint check_first, Py_ssize_t *bad) noexcept nogil:
    """Run the batch; on error *bad is the chunk at fault."""
    cdef Py_ssize_t i, offset = 0
    cdef fu32_status status = fu32_ok()
    cdef uint8_t *d
    # The first pass checks: it has nothing to find without VALIDATE.
    if (check_first and flags & FU32_VALIDATE) or (dst == NULL and whole == NULL):
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


# destinations: None (only check; flags VALIDATE, SRC_SWAPPED), a list of buffers each exactly its
# source's size (or the source) overlapping no other, or one buffer for all back to back.  Returns
# (-1, OK_STATUS) or the chunk at fault and its status (a BATCH_* kind for a size or an overlap).
def convert_many(list sources, destinations, Py_ssize_t width, int flags, bint check_first):
    """Convert each of ``sources`` by ``flags``, with the GIL released once; ``(index, status)``."""
    check_units(width, "width")
    cdef Py_ssize_t n = len(sources), i, total = 0, bad = -1
    cdef Py_ssize_t got_src = 0, got_dst = 0, first = -1, second = -1
    cdef int kind = 0, same = 0
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
            with nogil:
                kind = find_overlap(src, dst, n, &first, &second, &same)
            if kind:
                return first, overlap_status(kind, first, second, same)
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


# Returns (index, status, buffer, size): index and status as convert_many's, buffer a new uint8
# array (pool memory when large; None on error), size every source's size if all alike, else -1.
def converted_many(list sources, Py_ssize_t width, int flags):
    """Convert all of ``sources`` by ``flags`` into one new buffer, back to back."""
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
