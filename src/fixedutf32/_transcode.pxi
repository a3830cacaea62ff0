# Included at the end of _kernels.pyx (``include "_transcode.pxi"``), so the
# file directives and the runtime dispatch level ``_simd_level`` are shared.
#
# Kernels between fixed_length_utf32 chunks and UTF-8: the loops live in
# _utf8.h (scalar + AVX2); these wrappers release the GIL around them and hand
# back a status tuple ``(error, index, position, value)`` that
# ``fixedutf32.transcode`` turns into exceptions.  Nothing here raises on bad
# data, and nothing here allocates: the Python layer passes every buffer in.

from libc.stdint cimport int64_t, uint8_t

cdef extern from "_utf8.h" nogil:
    ctypedef struct fu32_utf8_result:
        int error
        Py_ssize_t index
        Py_ssize_t position
        int64_t value
    const int FU32_UTF8_SLACK
    const int FU32_UTF8_OK
    const int FU32_UTF8_TOO_LARGE
    const int FU32_UTF8_SURROGATE
    const int FU32_UTF8_HEADER_BITS
    const int FU32_UTF8_TOO_SHORT
    const int FU32_UTF8_TOO_LONG
    const int FU32_UTF8_OVERLONG
    const int FU32_UTF8_CAPACITY
    const int FU32_UTF8_BAD_OFFSETS
    const int FU32_UTF8_BAD_VLEN
    fu32_utf8_result fu32_utf32_to_utf8(const uint8_t *src, Py_ssize_t n, Py_ssize_t width, int swap,
                                        int validate, int64_t *offsets, int vlen, uint8_t *dst,
                                        Py_ssize_t *out_len, int level)
    void fu32_utf8_scatter_fixed(const int64_t *offsets, Py_ssize_t n, const uint8_t *values,
                                 uint8_t *dst, Py_ssize_t stride)
    fu32_utf8_result fu32_utf8_to_utf32(const int64_t *starts, const int64_t *ends, Py_ssize_t stride,
                                        Py_ssize_t n, const uint8_t *values, Py_ssize_t values_len,
                                        Py_ssize_t width, int swap, uint8_t *dst, int level)
    fu32_utf8_result fu32_utf8_vlen_parse(const uint8_t *buf, Py_ssize_t size, Py_ssize_t n, int64_t *pos)

UTF8_SLACK = FU32_UTF8_SLACK
UTF8_OK = FU32_UTF8_OK
UTF8_TOO_LARGE = FU32_UTF8_TOO_LARGE
UTF8_SURROGATE = FU32_UTF8_SURROGATE
UTF8_HEADER_BITS = FU32_UTF8_HEADER_BITS
UTF8_TOO_SHORT = FU32_UTF8_TOO_SHORT
UTF8_TOO_LONG = FU32_UTF8_TOO_LONG
UTF8_OVERLONG = FU32_UTF8_OVERLONG
UTF8_CAPACITY = FU32_UTF8_CAPACITY
UTF8_BAD_OFFSETS = FU32_UTF8_BAD_OFFSETS
UTF8_BAD_VLEN = FU32_UTF8_BAD_VLEN


cdef inline tuple _utf8_status(fu32_utf8_result r):
    return (r.error, r.index, r.position, r.value)


def utf32_to_utf8(const uint8_t[::1] src, Py_ssize_t width, bint swap, bint validate,
                  int64_t[::1] offsets, uint8_t[::1] dst, bint vlen):
    """Transcode ``len(src) // (4 * width)`` elements to UTF-8 in ``dst``.

    ``offsets`` (n + 1 entries) receives each element's start, or is None with
    ``vlen`` (the vlen-utf8 layout).  ``dst`` must hold the worst case plus
    ``UTF8_SLACK`` bytes.  Returns ``(error, index, position, value, nbytes)``.
    """
    cdef Py_ssize_t n = src.shape[0] // (4 * width)
    cdef Py_ssize_t out_len = 0
    cdef int64_t *offs = NULL
    cdef const uint8_t *s = NULL
    cdef fu32_utf8_result r
    cdef int level = _simd_level
    if offsets is not None:
        offs = &offsets[0]
    if src.shape[0] > 0:
        s = &src[0]
    with nogil:
        r = fu32_utf32_to_utf8(s, n, width, swap, validate, offs, vlen, &dst[0], &out_len, level)
    return (r.error, r.index, r.position, r.value, out_len)


def utf8_to_utf32(const int64_t[::1] pos, Py_ssize_t stride, Py_ssize_t n, const uint8_t[::1] values,
                  Py_ssize_t width, bint swap, uint8_t[::1] dst):
    """Decode ``n`` UTF-8 strings into ``dst`` (n * width code units, zero padded).

    String ``i`` is ``values[pos[i * stride]:pos[i * stride + 1]]``; ``dst`` None
    only checks.  Returns ``(error, index, position, value)``.
    """
    cdef const int64_t *p = NULL
    cdef const uint8_t *v = NULL
    cdef uint8_t *d = NULL
    cdef Py_ssize_t nv = values.shape[0]
    cdef fu32_utf8_result r
    cdef int level = _simd_level
    if n == 0:
        return (FU32_UTF8_OK, 0, 0, 0)
    p = &pos[0]
    if nv > 0:
        v = &values[0]
    else:
        v = <const uint8_t *>""
    if dst is not None:
        d = &dst[0]
    with nogil:
        r = fu32_utf8_to_utf32(p, p + 1, stride, n, v, nv, width, swap, d, level)
    return _utf8_status(r)


def utf8_vlen_parse(const uint8_t[::1] buf, Py_ssize_t n, int64_t[::1] pos):
    """Fill ``pos`` (2 * n entries) with each item's (start, end) in a vlen-utf8 chunk.

    Returns ``(error, index, position, value)``.
    """
    cdef fu32_utf8_result r
    cdef int64_t *p = NULL
    if n > 0:
        p = &pos[0]
    with nogil:
        r = fu32_utf8_vlen_parse(&buf[0], buf.shape[0], n, p)
    return _utf8_status(r)


def utf8_scatter_fixed(const int64_t[::1] offsets, const uint8_t[::1] values, uint8_t[::1] dst,
                       Py_ssize_t stride):
    """Copy string ``i`` to ``dst[i * stride:(i + 1) * stride]``, zero padded."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef const uint8_t *v = <const uint8_t *>""
    if n <= 0:
        return
    if values.shape[0] > 0:
        v = &values[0]
    with nogil:
        fu32_utf8_scatter_fixed(&offsets[0], n, v, &dst[0], stride)
