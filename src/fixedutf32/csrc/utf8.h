/*
 * utf8.h -- the UTF-8 kernels' entry points, each taking the level
 * (FU32_LEVEL_PORTABLE or FU32_LEVEL_AVX2, from cpu.h's fu32_cpu_level()):
 *   fu32_utf32_to_utf8     chunk -> UTF-8 (offsets + values, or the vlen-utf8 layout)
 *   fu32_utf8_to_utf32     UTF-8 strings -> chunk, strict, zero padded
 *   fu32_utf8_vlen_parse   the item table of a vlen-utf8 chunk (utf8_scalar.h)
 *   fu32_utf8_scatter_fixed  UTF-8 strings -> fixed-width zero-padded bytes (utf8_scalar.h)
 */
#ifndef FIXEDUTF32_UTF8_H
#define FIXEDUTF32_UTF8_H

#include "utf8_avx2.h"
#include "utf8_scalar.h"

static fu32_status fu32_utf32_to_utf8(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int swap,
                                           int validate, int64_t *offsets, int vlen, uint8_t *dst, ptrdiff_t pos,
                                           ptrdiff_t cap, ptrdiff_t *out_len, ptrdiff_t *done, int level)
{
#if FU32_UTF8_HAVE_AVX2
    if (level == FU32_LEVEL_AVX2) {
        return fu32_utf32_to_utf8_avx2(src, n, width, swap, validate, offsets, vlen, dst, pos, cap, out_len,
                                       done);
    }
#endif
    (void)level;
    return fu32_utf32_to_utf8_scalar(src, n, width, swap, validate, offsets, vlen, dst, pos, cap, out_len, done);
}

/*
 * Decodes n elements: element i is values[starts[i * stride]:ends[i * stride]].
 * (For an offsets array, starts = offsets, ends = offsets + 1, stride = 1.)
 * Writes n * width code units at dst in the chosen byte order, zero-padded; with
 * dst NULL only checks.  On error dst's contents are unspecified.
 */
static fu32_status fu32_utf8_to_utf32(const int64_t *starts, const int64_t *ends, ptrdiff_t stride,
                                           ptrdiff_t n, const uint8_t *values, ptrdiff_t values_len,
                                           ptrdiff_t width, int swap, uint8_t *dst, int level)
{
#if FU32_UTF8_HAVE_AVX2
    if (level == FU32_LEVEL_AVX2) {
        return fu32_utf8_to_utf32_avx2(starts, ends, stride, n, values, values_len, width, swap, dst);
    }
#endif
    (void)level;
    return fu32_utf8_to_utf32_scalar(starts, ends, stride, n, values, values_len, width, swap, dst);
}

#endif /* FIXEDUTF32_UTF8_H */
