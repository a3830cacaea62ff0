/*
 * fixedutf32.h -- the C API of fixedutf32: its kernels for Zarr V3
 * fixed_length_utf32 chunks (NumPy <U / >U), callable from C, C++, Cython or
 * Rust without going through Python.
 *
 * The kernels are a table of function pointers (fixedutf32_api) that the
 * extension module fixedutf32._kernels publishes as a PyCapsule named
 * FIXEDUTF32_CAPSULE_NAME.  An extension includes this header (the folder
 * fixedutf32.get_include() returns goes on its include path), calls
 * fixedutf32_import() once, with the GIL held (in its module init), and then
 * calls the entries of the table it returns from any thread, with or without
 * the GIL:
 *
 *     #include <Python.h>
 *     #include "fixedutf32/fixedutf32.h"
 *
 *     const fixedutf32_api *api = fixedutf32_import();   // NULL: exception set
 *     fixedutf32_status s = api->validate(bytes, n_bytes / 4, width, 0);
 *     if (s.kind != FIXEDUTF32_OK) { ... s.element, s.position, s.detail ... }
 *
 * Every entry takes pointers and lengths, never a Python object, holds no
 * lock, allocates nothing and keeps no state: it may run on any thread,
 * concurrently with any other call, without the GIL (on free-threaded Python
 * too).  Lengths are ptrdiff_t (Py_ssize_t), counted in 4-byte code units on
 * the UTF-32 side and in bytes on the UTF-8 side; a width is the number of
 * code units per element (length_bytes / 4).  Buffers may start at any
 * address.  Each call runs at the SIMD level fixedutf32.set_simd_level chose
 * (read once per call).
 *
 * Errors come back as a fixedutf32_status with the kinds and the positions
 * the Python API reports (fixedutf32.InvalidCodePointError's index and
 * position are a status's element and position).  Arguments the kernels cannot
 * work with (a width out of range, a count that is negative or not a whole
 * number of elements, a NULL buffer) give FIXEDUTF32_BAD_ARGUMENT and nothing
 * is read or written.
 *
 * ABI rule: FIXEDUTF32_ABI_MAJOR changes when an entry changes its meaning
 * or signature or a struct changes its layout; an extension built against
 * another major refuses to import.  FIXEDUTF32_ABI_MINOR grows when entries
 * are appended at the end of the table (nothing moves); an extension built
 * against minor m imports from any library with the same major and a minor
 * >= m.  fixedutf32_import() checks both.  The kinds and the flags never
 * change value.
 */
#ifndef FIXEDUTF32_FIXEDUTF32_H
#define FIXEDUTF32_FIXEDUTF32_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FIXEDUTF32_ABI_MAJOR 1
#define FIXEDUTF32_ABI_MINOR 0
#define FIXEDUTF32_CAPSULE_NAME "fixedutf32._kernels._C_API"

/* Flags.  VALIDATE: check every code point.  SRC_SWAPPED: the source's units
 * are in the other byte order than this machine's.  SWAP: write the
 * destination's units in the other byte order than the source's.  STREAM:
 * non-temporal stores, for outputs much larger than the cache.  VLEN:
 * utf32_to_utf8 writes the Zarr vlen-utf8 layout instead of offsets. */
enum {
    FIXEDUTF32_VALIDATE = 1,
    FIXEDUTF32_SRC_SWAPPED = 2,
    FIXEDUTF32_SWAP = 4,
    FIXEDUTF32_STREAM = 8,
    FIXEDUTF32_VLEN = 16
};

/* Status kinds: the data errors are those of the Python API (the
 * fixedutf32._kernels constants of the same names). */
enum {
    FIXEDUTF32_OK = 0,
    FIXEDUTF32_TOO_LARGE = 1,               /* code unit above U+10FFFF */
    FIXEDUTF32_SURROGATE = 2,               /* code unit in U+D800..U+DFFF */
    FIXEDUTF32_STRING_TOO_LONG = 3,         /* more code points than the element holds */
    FIXEDUTF32_UTF8_HEADER_BITS = 4,        /* byte F8..FF */
    FIXEDUTF32_UTF8_TOO_SHORT = 5,          /* sequence cut short */
    FIXEDUTF32_UTF8_STRAY_CONTINUATION = 6, /* continuation byte without a lead byte */
    FIXEDUTF32_UTF8_OVERLONG = 7,           /* longer than its value needs */
    FIXEDUTF32_UTF8_TOO_LARGE = 8,          /* encodes a value above U+10FFFF */
    FIXEDUTF32_UTF8_SURROGATE = 9,          /* encodes U+D800..U+DFFF */
    FIXEDUTF32_BAD_OFFSETS = 10,            /* offsets decreasing, negative or past the values */
    FIXEDUTF32_BAD_VLEN = 11,               /* vlen-utf8 chunk truncated or with bytes left over */
    FIXEDUTF32_BAD_ARGUMENT = 64            /* C API only: see above; nothing was touched */
};

/* Output slack utf32_to_utf8 needs past the worst case of 4 bytes per code
 * unit: a destination of FIXEDUTF32_UTF8_CAPACITY(n, width) bytes always
 * takes all n elements in one call. */
#define FIXEDUTF32_UTF8_SLACK 64
#define FIXEDUTF32_UTF8_CAPACITY(n_elems, width) \
    (4 * (ptrdiff_t)(n_elems) * (ptrdiff_t)(width) + 4 * (ptrdiff_t)(n_elems) + 4 + FIXEDUTF32_UTF8_SLACK)

/* element: the element (string) at fault; position: the code unit inside it
 * (UTF-32 side) or the byte inside its UTF-8 bytes (UTF-8 side); detail: the
 * bad code unit (TOO_LARGE, SURROGATE), the string's length in code points
 * (STRING_TOO_LONG), the bad end offset (BAD_OFFSETS), 0 otherwise. */
typedef struct fixedutf32_status {
    int kind;
    ptrdiff_t element;
    ptrdiff_t position;
    int64_t detail;
} fixedutf32_status;

typedef struct fixedutf32_api {
    uint32_t abi_major;
    uint32_t abi_minor;
    size_t size; /* sizeof the table the library was built with */

    /* The SIMD level in use ("portable", "avx2"): a static string. */
    const char *(*simd_level)(void);

    /* Is every code unit of src (n_units, elements of width units) a
     * Unicode scalar value?  Flags: SRC_SWAPPED. */
    fixedutf32_status (*validate)(const uint8_t *src, ptrdiff_t n_units, ptrdiff_t width, int flags);

    /* Copy n_units from src to dst (4 * n_units bytes each): a chunk to
     * native units is SRC_SWAPPED | SWAP for a chunk of the other byte
     * order, 0 otherwise; add VALIDATE to check each unit as it is written.
     * dst may be src (in place: on error it is left as it was); a partial
     * overlap is not allowed.  A copy into a separate dst may have written a
     * prefix of dst when it reports an error: validate first to avoid it. */
    fixedutf32_status (*convert)(const uint8_t *src, uint8_t *dst, ptrdiff_t n_units, ptrdiff_t width,
                                 int flags);

    /* Decode a chunk in place into native units: swap it when SRC_SWAPPED
     * (the chunk is in the other byte order), check it when VALIDATE.  On
     * error buf is left exactly as it was. */
    fixedutf32_status (*decode_in_place)(uint8_t *buf, ptrdiff_t n_units, ptrdiff_t width, int flags);

    /* Change the width of n_elems elements from from_units to to_units
     * (padding with U+0000 or dropping padding; STRING_TOO_LONG when a
     * string does not fit); dst NULL only checks.  dst (n_elems * to_units
     * units) must not overlap src.  Flags: VALIDATE, SRC_SWAPPED (the byte
     * order is kept). */
    fixedutf32_status (*repad)(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                               ptrdiff_t to_units, int flags);

    /* Code points of each element without its trailing U+0000 into lengths
     * (n_elems entries).  Flags: VALIDATE, SRC_SWAPPED. */
    fixedutf32_status (*str_lengths)(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                     ptrdiff_t *lengths, int flags);

    /* n_elems elements of width units at src to UTF-8 at dst + pos (dst
     * holds cap bytes), each without its trailing padding; offsets
     * (n_elems + 1 entries) gets each string's start and the end, counted
     * from dst, or with VLEN (offsets NULL, pos 0) the vlen-utf8 layout is
     * written.  An element is started only while 4 * width (+ 4 with VLEN)
     * + FIXEDUTF32_UTF8_SLACK bytes are left: *done gets the elements done
     * and *out_len the end of the bytes written, and the caller continues
     * from element *done at *out_len with more room (a cap of
     * FIXEDUTF32_UTF8_CAPACITY(n_elems, width) needs one call).  Flags:
     * VALIDATE, SRC_SWAPPED, VLEN. */
    fixedutf32_status (*utf32_to_utf8)(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, int flags,
                                       int64_t *offsets, uint8_t *dst, ptrdiff_t pos, ptrdiff_t cap,
                                       ptrdiff_t *out_len, ptrdiff_t *done);

    /* Strictly decode n UTF-8 strings, string i being values[starts[i *
     * stride] : ends[i * stride]] (Arrow offsets: starts = offsets, ends =
     * offsets + 1, stride 1), into n elements of width units at dst, zero
     * padded; dst NULL only checks (on error dst's contents are
     * unspecified).  Flags: SWAP (write the other byte order than this
     * machine's). */
    fixedutf32_status (*utf8_to_utf32)(const int64_t *starts, const int64_t *ends, ptrdiff_t stride,
                                       ptrdiff_t n, const uint8_t *values, ptrdiff_t values_len,
                                       ptrdiff_t width, int flags, uint8_t *dst);
} fixedutf32_api;

#ifdef __cplusplus
}
#endif

/* The loader, for code that includes Python.h first (C extensions, Cython).
 * Define FIXEDUTF32_NO_IMPORT to leave it out (bindings that get the table
 * pointer some other way). */
#if defined(Py_PYTHON_H) && !defined(FIXEDUTF32_NO_IMPORT)

/* The table fixedutf32_import() loaded last in this translation unit. */
static const fixedutf32_api *fixedutf32_API = NULL;

/* Load the table from the capsule (importing fixedutf32._kernels) and check
 * its ABI version.  Call it with the GIL held; it returns NULL with an
 * ImportError set when the package is missing or its ABI does not fit. */
static inline const fixedutf32_api *fixedutf32_import(void)
{
    /* Variables, not the macros: a compiler warns of "unsigned < 0" while the minor is 0. */
    const uint32_t built_major = FIXEDUTF32_ABI_MAJOR, built_minor = FIXEDUTF32_ABI_MINOR;
    const fixedutf32_api *api = (const fixedutf32_api *)PyCapsule_Import(FIXEDUTF32_CAPSULE_NAME, 0);
    if (api == NULL) {
        return NULL;
    }
    if (api->abi_major != built_major || api->abi_minor < built_minor) {
        PyErr_Format(PyExc_ImportError,
                     "fixedutf32 C API version %u.%u is installed, but this extension was built "
                     "against version %u.%u: expected the same major version and at least its minor "
                     "version (rebuild the extension against the installed fixedutf32)",
                     (unsigned)api->abi_major, (unsigned)api->abi_minor,
                     (unsigned)FIXEDUTF32_ABI_MAJOR, (unsigned)FIXEDUTF32_ABI_MINOR);
        return NULL;
    }
    fixedutf32_API = api;
    return api;
}

#endif /* Py_PYTHON_H */

#endif /* FIXEDUTF32_FIXEDUTF32_H */
