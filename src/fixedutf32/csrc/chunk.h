/*
 * chunk.h -- the chunk kernels' entry points, each taking the level
 * (FU32_LEVEL_PORTABLE or FU32_LEVEL_AVX2, from cpu.h's fu32_cpu_level()):
 *   fu32_validate      every code unit a Unicode scalar value?
 *   fu32_convert       copy code units, swapping and checking them by flags
 *   fu32_repad         change the width of every element
 *   fu32_str_lengths   code points per element, without trailing U+0000
 * The level's fast path (chunk_portable.h, chunk_avx2.h) does the bulk and
 * returns a resume index; the reference loop (chunk_portable.h) finishes
 * from there, so that every error is pinned down by the same code.  Each
 * returns an fu32_status (common.h); `width` is the element width in code
 * units, which places a bad unit in its element.
 */
#ifndef FIXEDUTF32_CHUNK_H
#define FIXEDUTF32_CHUNK_H

#include "buffer.h"
#include "chunk_avx2.h"
#include "chunk_portable.h"
#include "common.h"
#include "cpu.h"

/* The status for flat unit `unit`, whose native value `c` (as the reference
 * loop read it: never read again, since a racing writer may have changed it
 * back) is not a scalar value. */
static fu32_status fu32_unit_error(ptrdiff_t unit, ptrdiff_t width, uint32_t c)
{
    return fu32_error(fu32_code_point_kind(c), unit / width, unit % width, c);
}

static fu32_status fu32_validate(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int swapped, int level)
{
    const ptrdiff_t resume = level == FU32_LEVEL_AVX2 ? fu32_avx2_validate(src, n, swapped)
                                                     : fu32_portable_validate(src, n, swapped);
    ptrdiff_t bad;
    uint32_t seen = 0;
    if (resume < 0) return fu32_ok();
    bad = fu32_reference_validate(src + 4 * resume, n - resume, swapped, &seen);
    return bad < 0 ? fu32_ok() : fu32_unit_error(resume + bad, width, seen);
}

/* Returns -1, or the index of the first invalid unit (units before it
 * written; its native value in *seen). */
static ptrdiff_t fu32_convert_units(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags, int level,
                                    uint32_t *seen)
{
    const ptrdiff_t resume = level == FU32_LEVEL_AVX2 ? fu32_avx2_convert(src, dst, n, flags)
                                                     : fu32_portable_convert(src, dst, n, flags);
    ptrdiff_t bad;
    if (resume < 0) return -1;
    bad = fu32_reference_convert(src + 4 * resume, dst + 4 * resume, n - resume, flags, seen);
    return bad < 0 ? -1 : resume + bad;
}

/* dst may be src (in place): on error its converted prefix is swapped back,
 * so that the caller's buffer is exactly as it was. */
static fu32_status fu32_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, ptrdiff_t width, int flags,
                                int level)
{
    uint32_t seen = 0, unused = 0;
    const ptrdiff_t bad = fu32_convert_units(src, dst, n, flags, level, &seen);
    if (bad < 0) return fu32_ok();
    if (src == dst && (flags & FU32_SWAP)) fu32_convert_units(dst, dst, bad, FU32_SWAP, level, &unused);
    return fu32_unit_error(bad, width, seen);
}

/* dst may be NULL: check only. */
static fu32_status fu32_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                              ptrdiff_t to_units, int flags, int level)
{
    const ptrdiff_t resume =
        level == FU32_LEVEL_AVX2 ? fu32_avx2_repad(src, dst, n_elems, from_units, to_units, flags)
                                 : fu32_portable_repad(src, dst, n_elems, from_units, to_units, flags);
    fu32_status status = fu32_reference_repad(src + 4 * resume * from_units,
                                              dst != NULL ? dst + 4 * resume * to_units : NULL,
                                              n_elems - resume, from_units, to_units, flags & ~FU32_STREAM);
    if (status.kind != FU32_OK) status.element += resume;
    return status;
}

static fu32_status fu32_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, ptrdiff_t *lengths,
                                    int flags, int level)
{
    const ptrdiff_t resume = level == FU32_LEVEL_AVX2 ? fu32_avx2_str_lengths(src, n_elems, width, lengths, flags)
                                                     : fu32_portable_str_lengths(src, n_elems, width, lengths, flags);
    ptrdiff_t bad;
    uint32_t seen = 0;
    if (resume < 0) return fu32_ok();
    bad = fu32_reference_str_lengths(src + 4 * resume * width, n_elems - resume, width, lengths + resume, flags,
                                     &seen);
    return bad < 0 ? fu32_ok() : fu32_unit_error(resume * width + bad, width, seen);
}

#endif /* FIXEDUTF32_CHUNK_H */
