# cython: language_level=3, freethreading_compatible=True
"""A Cython extension that calls fixedutf32's kernels through fixedutf32/kernels.pxd only
(tests/test_capi.py builds it against the installed package).  Each function
releases the GIL around the kernels and returns the status as a tuple
(kind, element, position, detail)."""

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from fixedutf32 cimport kernels

kernels.import_kernels()


cdef tuple as_tuple(kernels.status s):
    return (s.kind, s.element, s.position, s.detail)


def validate(const uint8_t[::1] chunk, Py_ssize_t width, int flags):
    cdef kernels.status s
    with nogil:
        s = kernels.validate(&chunk[0] if chunk.shape[0] else NULL, chunk.shape[0] // 4, width,
                             flags)
    return as_tuple(s)


def decode_in_place(uint8_t[::1] chunk, Py_ssize_t width, int flags):
    cdef kernels.status s
    with nogil:
        s = kernels.decode_in_place(&chunk[0] if chunk.shape[0] else NULL, chunk.shape[0] // 4,
                                    width, flags)
    return as_tuple(s)


def decode(const uint8_t[::1] chunk, Py_ssize_t width, int flags):
    """Validate, then copy into a new bytearray: (status, bytearray or None)."""
    cdef kernels.status s
    out = bytearray(chunk.shape[0])
    cdef uint8_t[::1] dst = out
    cdef const uint8_t *src = &chunk[0] if chunk.shape[0] else NULL
    cdef uint8_t *d = &dst[0] if dst.shape[0] else NULL
    with nogil:
        s = kernels.validate(src, chunk.shape[0] // 4, width, flags & kernels.SRC_SWAPPED)
        if s.kind == kernels.OK:
            s = kernels.convert(src, d, chunk.shape[0] // 4, width, flags)
    return as_tuple(s), (out if s.kind == kernels.OK else None)


def to_utf8(const uint8_t[::1] chunk, Py_ssize_t width, int flags):
    """(status, UTF-8 bytes, int64 offsets as bytes) or (status, None, None)."""
    cdef kernels.status s
    cdef Py_ssize_t n = chunk.shape[0] // (4 * width), out_len = 0, done = 0
    cdef Py_ssize_t cap = kernels.UTF8_CAPACITY(n, width)
    cdef uint8_t *dst = <uint8_t *>malloc(cap)
    cdef int64_t *offsets = <int64_t *>malloc(8 * (n + 1))
    if dst == NULL or offsets == NULL:
        free(dst)
        free(offsets)
        raise MemoryError()
    try:
        with nogil:
            s = kernels.utf32_to_utf8(&chunk[0] if chunk.shape[0] else NULL, n, width, flags,
                                      offsets, dst, 0, cap, &out_len, &done)
        if s.kind != kernels.OK:
            return as_tuple(s), None, None
        assert done == n
        return as_tuple(s), dst[:out_len], (<char *>offsets)[:8 * (n + 1)]
    finally:
        free(dst)
        free(offsets)


def from_utf8(const uint8_t[::1] offsets, const uint8_t[::1] values, Py_ssize_t width,
              int flags):
    """(status, chunk bytearray or None); ``offsets`` the bytes of n + 1 int64 offsets."""
    cdef kernels.status s
    cdef Py_ssize_t n = offsets.shape[0] // 8 - 1
    cdef const int64_t *starts = <const int64_t *>&offsets[0]
    out = bytearray(4 * n * width)
    cdef uint8_t[::1] dst = out
    with nogil:
        s = kernels.utf8_to_utf32(starts, starts + 1, 1, n,
                                  &values[0] if values.shape[0] else NULL, values.shape[0],
                                  width, flags, &dst[0] if dst.shape[0] else NULL)
    return as_tuple(s), (out if s.kind == kernels.OK else None)


def simd_level():
    return kernels.fixedutf32_API.simd_level().decode("ascii")
