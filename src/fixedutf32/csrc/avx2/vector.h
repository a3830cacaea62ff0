/*
 * avx2/vector.h -- what the AVX2 kernels share: the attributes their
 * functions are compiled with, and the vector helpers both families use.
 * Only where FU32_HAVE_AVX2 (cpu.h).
 */
#ifndef FIXEDUTF32_AVX2_VECTOR_H
#define FIXEDUTF32_AVX2_VECTOR_H

#include "../common.h"
#include "../cpu.h"

#if FU32_HAVE_AVX2
#include <immintrin.h>

/* A kernel's own functions (kept out of line), and its small helpers
 * (always inlined: GCC keeps some out of line otherwise). */
#define FU32_AVX2_FN FU32_AVX2_TARGET FU32_NOINLINE
#define FU32_AVX2_INLINE FU32_AVX2_TARGET FU32_FORCE_INLINE

/* The byte swap of every 32-bit lane. */
FU32_AVX2_INLINE __m256i fu32_avx2_bswap(__m256i v) {
    const __m256i order = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    return _mm256_shuffle_epi8(v, order);
}

/* Hide a value from the optimiser: FU32_PIN_VECTOR (common.h), so that a
 * loaded vector is checked and stored from one load.  It also keeps GCC and
 * Clang from turning the short per-element copy and zero-fill loops into
 * calls to memcpy and memset, which cost more than the loops for the 32..128
 * bytes of an element. */
FU32_AVX2_INLINE __m256i fu32_avx2_opaque(__m256i v) {
    FU32_PIN_VECTOR(v);
    return v;
}

/* The first `count` 32-bit lanes set, the others clear (count may be <= 0
 * or >= 8). */
FU32_AVX2_INLINE __m256i fu32_avx2_first_lanes(ptrdiff_t count) {
    const int k = count < 0 ? 0 : (count > 8 ? 8 : (int)count);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#endif /* FU32_HAVE_AVX2 */

#endif /* FIXEDUTF32_AVX2_VECTOR_H */
