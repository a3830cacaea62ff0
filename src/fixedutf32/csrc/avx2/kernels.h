/*
 * avx2/kernels.h -- the AVX2 level's table (table.h), where the compiler can
 * build AVX2 code (FU32_HAVE_AVX2, cpu.h); chosen when the CPU and the OS
 * have every feature in FU32_AVX2_NEEDS.
 */
#ifndef FIXEDUTF32_AVX2_KERNELS_H
#define FIXEDUTF32_AVX2_KERNELS_H

#include "../table.h"
#include "chunk.h"
#include "utf8.h"

#if FU32_HAVE_AVX2
static const fu32_kernels fu32_avx2_kernels = {
    "avx2",
    FU32_AVX2_NEEDS,
    fu32_avx2_validate,
    fu32_avx2_convert,
    fu32_avx2_repad,
    fu32_avx2_str_lengths,
    fu32_avx2_utf32_to_utf8,
    fu32_avx2_utf8_to_utf32,
    fu32_avx2_longest,
};
#endif

#endif /* FIXEDUTF32_AVX2_KERNELS_H */
