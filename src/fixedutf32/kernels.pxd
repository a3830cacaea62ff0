# The Cython face of the C API (include/fixedutf32/fixedutf32.h, which
# documents every entry): another Cython module writes
#
#     from fixedutf32 cimport kernels
#     kernels.import_kernels()          # once, at module level (needs the GIL)
#
#     cdef kernels.status s
#     with nogil:
#         s = kernels.validate(p, n_units, width, 0)
#     if s.kind != kernels.OK: ...
#
# and builds with include_dirs=[fixedutf32.get_include()].  Everything here is
# a declaration or an inline function: the module that cimports it imports
# nothing from fixedutf32 at run time but the capsule.
from libc.stdint cimport int64_t, uint8_t, uint32_t


cdef extern from "fixedutf32/fixedutf32.h" nogil:
    enum:
        ABI_MAJOR "FIXEDUTF32_ABI_MAJOR"
        ABI_MINOR "FIXEDUTF32_ABI_MINOR"
        UTF8_SLACK "FIXEDUTF32_UTF8_SLACK"
    # Flags
    enum:
        VALIDATE "FIXEDUTF32_VALIDATE"
        SRC_SWAPPED "FIXEDUTF32_SRC_SWAPPED"
        SWAP "FIXEDUTF32_SWAP"
        STREAM "FIXEDUTF32_STREAM"
        VLEN "FIXEDUTF32_VLEN"
    # Status kinds
    enum:
        OK "FIXEDUTF32_OK"
        TOO_LARGE "FIXEDUTF32_TOO_LARGE"
        SURROGATE "FIXEDUTF32_SURROGATE"
        STRING_TOO_LONG "FIXEDUTF32_STRING_TOO_LONG"
        UTF8_HEADER_BITS "FIXEDUTF32_UTF8_HEADER_BITS"
        UTF8_TOO_SHORT "FIXEDUTF32_UTF8_TOO_SHORT"
        UTF8_STRAY_CONTINUATION "FIXEDUTF32_UTF8_STRAY_CONTINUATION"
        UTF8_OVERLONG "FIXEDUTF32_UTF8_OVERLONG"
        UTF8_TOO_LARGE "FIXEDUTF32_UTF8_TOO_LARGE"
        UTF8_SURROGATE "FIXEDUTF32_UTF8_SURROGATE"
        BAD_OFFSETS "FIXEDUTF32_BAD_OFFSETS"
        BAD_VLEN "FIXEDUTF32_BAD_VLEN"
        BAD_ARGUMENT "FIXEDUTF32_BAD_ARGUMENT"

    Py_ssize_t UTF8_CAPACITY "FIXEDUTF32_UTF8_CAPACITY"(Py_ssize_t n_elems, Py_ssize_t width)

    ctypedef struct status "fixedutf32_status":
        int kind
        Py_ssize_t element
        Py_ssize_t position
        int64_t detail

    ctypedef struct api "fixedutf32_api":
        uint32_t abi_major
        uint32_t abi_minor
        size_t size
        const char *(*simd_level)() noexcept nogil
        status (*validate)(const uint8_t *src, Py_ssize_t n_units, Py_ssize_t width,
                           int flags) noexcept nogil
        status (*convert)(const uint8_t *src, uint8_t *dst, Py_ssize_t n_units, Py_ssize_t width,
                          int flags) noexcept nogil
        status (*decode_in_place)(uint8_t *buf, Py_ssize_t n_units, Py_ssize_t width,
                                  int flags) noexcept nogil
        status (*repad)(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                        Py_ssize_t from_units, Py_ssize_t to_units, int flags) noexcept nogil
        status (*str_lengths)(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                              Py_ssize_t *lengths, int flags) noexcept nogil
        status (*utf32_to_utf8)(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                int flags, int64_t *offsets, uint8_t *dst, Py_ssize_t pos,
                                Py_ssize_t cap, Py_ssize_t *out_len,
                                Py_ssize_t *done) noexcept nogil
        status (*utf8_to_utf32)(const int64_t *starts, const int64_t *ends, Py_ssize_t stride,
                                Py_ssize_t n, const uint8_t *values, Py_ssize_t values_len,
                                Py_ssize_t width, int flags, uint8_t *dst) noexcept nogil

    # The table import_kernels() loaded (one per module that cimports this).
    const api *fixedutf32_API


cdef extern from "fixedutf32/fixedutf32.h":
    const api *fixedutf32_import() except NULL


cdef inline const api *import_kernels() except NULL:
    """Load the table from the capsule and check its ABI version (ImportError if it does
    not fit); the inline functions below call through it."""
    return fixedutf32_import()


cdef inline status validate(const uint8_t *src, Py_ssize_t n_units, Py_ssize_t width,
                            int flags) noexcept nogil:
    return fixedutf32_API.validate(src, n_units, width, flags)


cdef inline status convert(const uint8_t *src, uint8_t *dst, Py_ssize_t n_units,
                           Py_ssize_t width, int flags) noexcept nogil:
    return fixedutf32_API.convert(src, dst, n_units, width, flags)


cdef inline status decode_in_place(uint8_t *buf, Py_ssize_t n_units, Py_ssize_t width,
                                   int flags) noexcept nogil:
    return fixedutf32_API.decode_in_place(buf, n_units, width, flags)


cdef inline status repad(const uint8_t *src, uint8_t *dst, Py_ssize_t n_elems,
                         Py_ssize_t from_units, Py_ssize_t to_units, int flags) noexcept nogil:
    return fixedutf32_API.repad(src, dst, n_elems, from_units, to_units, flags)


cdef inline status str_lengths(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                               Py_ssize_t *lengths, int flags) noexcept nogil:
    return fixedutf32_API.str_lengths(src, n_elems, width, lengths, flags)


cdef inline status utf32_to_utf8(const uint8_t *src, Py_ssize_t n_elems, Py_ssize_t width,
                                 int flags, int64_t *offsets, uint8_t *dst, Py_ssize_t pos,
                                 Py_ssize_t cap, Py_ssize_t *out_len,
                                 Py_ssize_t *done) noexcept nogil:
    return fixedutf32_API.utf32_to_utf8(src, n_elems, width, flags, offsets, dst, pos, cap,
                                        out_len, done)


cdef inline status utf8_to_utf32(const int64_t *starts, const int64_t *ends, Py_ssize_t stride,
                                 Py_ssize_t n, const uint8_t *values, Py_ssize_t values_len,
                                 Py_ssize_t width, int flags, uint8_t *dst) noexcept nogil:
    return fixedutf32_API.utf8_to_utf32(starts, ends, stride, n, values, values_len, width,
                                        flags, dst)
