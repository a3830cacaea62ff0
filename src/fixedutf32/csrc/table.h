/*
 * table.h -- the kernels of one level (one instruction set), as a table of
 * function pointers with one signature per kernel, the same at every level.
 *
 * Each level's folder (portable/, avx2/) fills one such table (its
 * kernels.h); kernels.h lists the tables and picks one, once, for the CPU at
 * hand.  Every entry takes pointers and lengths (counted in code units, or
 * bytes for UTF-8, as ptrdiff_t) and FU32_* flags (common.h), returns an
 * fu32_status, holds no state and allocates nothing, so that other compiled
 * code can call the entries straight through a pointer to the table.
 */
#ifndef FIXEDUTF32_TABLE_H
#define FIXEDUTF32_TABLE_H

#include "common.h"

typedef struct fu32_kernels {
    /* The level's name ("portable", "avx2"), as set_simd_level takes it. */
    const char *name;
    /* The FU32_CPU_* features (cpu.h) the CPU and the OS must have. */
    unsigned needs;

    /* Is every unit of src (n units, elements of `width`) a scalar value?
     * Flags: FU32_SRC_SWAPPED. */
    fu32_status (*validate)(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int flags);

    /* Copy n units from src to dst, which may be src (in place: on error it
     * is left as it was); FU32_VALIDATE checks each unit as it is written,
     * FU32_SRC_SWAPPED says how src is stored, FU32_SWAP swaps on the way,
     * FU32_STREAM writes with non-temporal stores. */
    fu32_status (*convert)(const uint8_t *src, uint8_t *dst, ptrdiff_t n, ptrdiff_t width, int flags);

    /* Change the width of n_elems elements from from_units to to_units
     * (padding with U+0000, or dropping padding); dst NULL only checks.
     * Flags as for convert. */
    fu32_status (*repad)(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                         ptrdiff_t to_units, int flags);

    /* Code points of each element without trailing U+0000 into lengths
     * (n_elems entries).  Flags: FU32_VALIDATE, FU32_SRC_SWAPPED. */
    fu32_status (*str_lengths)(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, ptrdiff_t *lengths,
                               int flags);

    /* n_elems elements of `width` units to UTF-8 at dst + pos (dst holds cap
     * bytes), each without its trailing padding: offsets (n_elems + 1
     * entries, counted from dst) or, with FU32_VLEN, the vlen-utf8 layout.
     * An element is started only while 4 * width (+ 4 with FU32_VLEN) +
     * FU32_UTF8_SLACK bytes are left; *out_len gets the end of the bytes
     * written, *done the elements done (the caller continues from there).
     * Flags: FU32_VALIDATE, FU32_SRC_SWAPPED, FU32_VLEN. */
    fu32_status (*utf32_to_utf8)(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, int flags,
                                 int64_t *offsets, uint8_t *dst, ptrdiff_t pos, ptrdiff_t cap,
                                 ptrdiff_t *out_len, ptrdiff_t *done);

    /* Strictly decode n strings, string i being values[starts[i * stride] :
     * ends[i * stride]], into n elements of `width` units at dst, zero
     * padded; dst NULL only checks (on error its contents are unspecified).
     * Flags: FU32_SWAP (write the other byte order than this machine's). */
    fu32_status (*utf8_to_utf32)(const int64_t *starts, const int64_t *ends, ptrdiff_t stride, ptrdiff_t n,
                                 const uint8_t *values, ptrdiff_t values_len, ptrdiff_t width, int flags,
                                 uint8_t *dst);

    /* Raise *longest to the code points of the longest element without
     * trailing U+0000 (no lengths written: what `check` needs); on error it
     * covers some of the elements before the one named.  Flags: FU32_VALIDATE,
     * FU32_SRC_SWAPPED. */
    fu32_status (*longest)(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, ptrdiff_t *longest,
                           int flags);
} fu32_kernels;

#endif /* FIXEDUTF32_TABLE_H */
