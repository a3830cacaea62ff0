/*
 * capi.h -- the C API table (include/fixedutf32/fixedutf32.h) over the
 * level tables (table.h), and the one pointer to the level in use.
 *
 * The level in use is read and written atomically: set_simd_level may run
 * on one thread while C callers (without the GIL) or, on free-threaded
 * Python, the Cython wrappers call kernels on others.  Each call reads it
 * once, so a call runs wholly at one level.
 *
 * The entries check what a C caller could get wrong that would make a
 * kernel read or write out of bounds (FIXEDUTF32_BAD_ARGUMENT), then call
 * the level's kernel: the statuses are the Python API's.
 */
#ifndef FIXEDUTF32_CAPI_H
#define FIXEDUTF32_CAPI_H

#include "kernels.h"
/* The loader in the header is for the callers; this module is the capsule. */
#define FIXEDUTF32_NO_IMPORT
#include "../include/fixedutf32/fixedutf32.h"

/* The public header names the same flags and kinds: they are one ABI (int
 * casts: the two sets are different enum types). */
#define FU32_SAME(a, b) ((int)(a) == (int)(b))
typedef char fu32_capi_same_flags[(FU32_SAME(FIXEDUTF32_VALIDATE, FU32_VALIDATE)
                                   && FU32_SAME(FIXEDUTF32_SRC_SWAPPED, FU32_SRC_SWAPPED)
                                   && FU32_SAME(FIXEDUTF32_SWAP, FU32_SWAP)
                                   && FU32_SAME(FIXEDUTF32_STREAM, FU32_STREAM)
                                   && FU32_SAME(FIXEDUTF32_VLEN, FU32_VLEN)
                                   && FU32_SAME(FIXEDUTF32_UTF8_SLACK, FU32_UTF8_SLACK)) ? 1 : -1];
typedef char fu32_capi_same_kinds[(FU32_SAME(FIXEDUTF32_TOO_LARGE, FU32_TOO_LARGE)
                                   && FU32_SAME(FIXEDUTF32_SURROGATE, FU32_SURROGATE)
                                   && FU32_SAME(FIXEDUTF32_STRING_TOO_LONG, FU32_STRING_TOO_LONG)
                                   && FU32_SAME(FIXEDUTF32_UTF8_HEADER_BITS, FU32_UTF8_HEADER_BITS)
                                   && FU32_SAME(FIXEDUTF32_UTF8_TOO_SHORT, FU32_UTF8_TOO_SHORT)
                                   && FU32_SAME(FIXEDUTF32_UTF8_STRAY_CONTINUATION, FU32_UTF8_STRAY_CONTINUATION)
                                   && FU32_SAME(FIXEDUTF32_UTF8_OVERLONG, FU32_UTF8_OVERLONG)
                                   && FU32_SAME(FIXEDUTF32_UTF8_TOO_LARGE, FU32_UTF8_TOO_LARGE)
                                   && FU32_SAME(FIXEDUTF32_UTF8_SURROGATE, FU32_UTF8_SURROGATE)
                                   && FU32_SAME(FIXEDUTF32_BAD_OFFSETS, FU32_BAD_OFFSETS)
                                   && FU32_SAME(FIXEDUTF32_BAD_VLEN, FU32_BAD_VLEN)) ? 1 : -1];
typedef char fu32_capi_same_status[(sizeof(fixedutf32_status) == sizeof(fu32_status)
                                    && offsetof(fixedutf32_status, detail) == offsetof(fu32_status, detail))
                                       ? 1 : -1];

/* ------------------------------------------------------------------------
 * The level in use
 * ------------------------------------------------------------------------ */
static const fu32_kernels *fu32_active_level = &fu32_portable_kernels;

#if defined(__GNUC__) || defined(__clang__)
static inline const fu32_kernels *fu32_active_table(void)
{
    return __atomic_load_n(&fu32_active_level, __ATOMIC_ACQUIRE);
}
static inline void fu32_set_active_table(const fu32_kernels *k)
{
    __atomic_store_n(&fu32_active_level, k, __ATOMIC_RELEASE);
}
#else
/* MSVC: an aligned pointer is loaded and stored in one access on x86 and
 * ARM64; volatile keeps the compiler from splitting or caching it. */
static inline const fu32_kernels *fu32_active_table(void)
{
    return *(const fu32_kernels *volatile *)&fu32_active_level;
}
static inline void fu32_set_active_table(const fu32_kernels *k)
{
    *(const fu32_kernels *volatile *)&fu32_active_level = k;
}
#endif

/* ------------------------------------------------------------------------
 * The entries
 * ------------------------------------------------------------------------ */

/* Widest element the entries take, as the Python wrappers (MAX_UNITS): no
 * product of a count of units and 8 wraps. */
#define FU32_CAPI_MAX_UNITS (PTRDIFF_MAX / 8)

static fixedutf32_status fu32_capi_status(fu32_status s)
{
    fixedutf32_status r;
    r.kind = s.kind;
    r.element = s.element;
    r.position = s.position;
    r.detail = s.detail;
    return r;
}

static fixedutf32_status fu32_capi_bad_argument(void)
{
    return fu32_capi_status(fu32_error(FIXEDUTF32_BAD_ARGUMENT, 0, 0, 0));
}

static int fu32_capi_width_ok(ptrdiff_t width) { return width > 0 && width <= FU32_CAPI_MAX_UNITS; }

/* n_units is a whole number of elements of width units, and its bytes can be counted. */
static int fu32_capi_units_ok(const void *p, ptrdiff_t n_units, ptrdiff_t width)
{
    return fu32_capi_width_ok(width) && n_units >= 0 && n_units <= FU32_CAPI_MAX_UNITS && n_units % width == 0
           && (p != NULL || n_units == 0);
}

/* n_elems elements of width units can be counted in bytes. */
static int fu32_capi_elems_ok(const void *p, ptrdiff_t n_elems, ptrdiff_t width)
{
    return fu32_capi_width_ok(width) && n_elems >= 0 && (n_elems == 0 || FU32_CAPI_MAX_UNITS / width >= n_elems)
           && (p != NULL || n_elems == 0);
}

static const char *fu32_capi_simd_level(void) { return fu32_active_table()->name; }

static fixedutf32_status fu32_capi_validate(const uint8_t *src, ptrdiff_t n_units, ptrdiff_t width, int flags)
{
    if (!fu32_capi_units_ok(src, n_units, width)) return fu32_capi_bad_argument();
    return fu32_capi_status(fu32_active_table()->validate(src, n_units, width, flags & FU32_SRC_SWAPPED));
}

static fixedutf32_status fu32_capi_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n_units, ptrdiff_t width,
                                           int flags)
{
    if (!fu32_capi_units_ok(src, n_units, width) || (dst == NULL && n_units > 0)) return fu32_capi_bad_argument();
    return fu32_capi_status(fu32_active_table()->convert(src, dst, n_units, width, flags));
}

static fixedutf32_status fu32_capi_decode_in_place(uint8_t *buf, ptrdiff_t n_units, ptrdiff_t width, int flags)
{
    const fu32_kernels *k = fu32_active_table();
    if (!fu32_capi_units_ok(buf, n_units, width)) return fu32_capi_bad_argument();
    if (flags & FU32_SRC_SWAPPED) {
        /* convert in place swaps the prefix back when it finds a bad unit */
        return fu32_capi_status(k->convert(buf, buf, n_units, width, (flags & FU32_VALIDATE) | FU32_SRC_SWAPPED | FU32_SWAP));
    }
    if (flags & FU32_VALIDATE) return fu32_capi_status(k->validate(buf, n_units, width, 0));
    return fu32_capi_status(fu32_ok());
}

static fixedutf32_status fu32_capi_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                                         ptrdiff_t to_units, int flags)
{
    if (!fu32_capi_elems_ok(src, n_elems, from_units) || !fu32_capi_elems_ok(src, n_elems, to_units))
        return fu32_capi_bad_argument();
    return fu32_capi_status(fu32_active_table()->repad(src, dst, n_elems, from_units, to_units, flags));
}

static fixedutf32_status fu32_capi_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                               ptrdiff_t *lengths, int flags)
{
    if (!fu32_capi_elems_ok(src, n_elems, width) || (lengths == NULL && n_elems > 0)) return fu32_capi_bad_argument();
    return fu32_capi_status(fu32_active_table()->str_lengths(src, n_elems, width, lengths, flags));
}

static fixedutf32_status fu32_capi_utf32_to_utf8(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, int flags,
                                                 int64_t *offsets, uint8_t *dst, ptrdiff_t pos, ptrdiff_t cap,
                                                 ptrdiff_t *out_len, ptrdiff_t *done)
{
    const int vlen = (flags & FU32_VLEN) != 0;
    if (!fu32_capi_elems_ok(src, n_elems, width) || dst == NULL || out_len == NULL || done == NULL || cap < 0
        || pos < 0 || pos > cap || (vlen ? (offsets != NULL || pos != 0) : offsets == NULL))
        return fu32_capi_bad_argument();
    /* vlen-utf8 writes every element in one call: the destination must hold the worst case. */
    if (vlen && cap < FIXEDUTF32_UTF8_CAPACITY(n_elems, width)) return fu32_capi_bad_argument();
    return fu32_capi_status(
        fu32_active_table()->utf32_to_utf8(src, n_elems, width, flags, offsets, dst, pos, cap, out_len, done));
}

static fixedutf32_status fu32_capi_utf8_to_utf32(const int64_t *starts, const int64_t *ends, ptrdiff_t stride,
                                                 ptrdiff_t n, const uint8_t *values, ptrdiff_t values_len,
                                                 ptrdiff_t width, int flags, uint8_t *dst)
{
    if (!fu32_capi_elems_ok(dst == NULL ? (const void *)"" : dst, n, width) || stride <= 0 || values_len < 0
        || (n > 0 && (starts == NULL || ends == NULL)) || (values == NULL && values_len > 0))
        return fu32_capi_bad_argument();
    if (n == 0) return fu32_capi_status(fu32_ok());
    return fu32_capi_status(
        fu32_active_table()->utf8_to_utf32(starts, ends, stride, n, values, values_len, width, flags, dst));
}

static const fixedutf32_api fu32_capi = {
    FIXEDUTF32_ABI_MAJOR,
    FIXEDUTF32_ABI_MINOR,
    sizeof(fixedutf32_api),
    fu32_capi_simd_level,
    fu32_capi_validate,
    fu32_capi_convert,
    fu32_capi_decode_in_place,
    fu32_capi_repad,
    fu32_capi_str_lengths,
    fu32_capi_utf32_to_utf8,
    fu32_capi_utf8_to_utf32,
};

#endif /* FIXEDUTF32_CAPI_H */
