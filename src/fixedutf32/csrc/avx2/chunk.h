/*
 * avx2/chunk.h -- the AVX2 level's chunk kernels: fast paths over blocks of
 * FU32_BLOCK_UNITS in AVX2 intrinsics, each returning -1 or a resume index,
 * then the reference loop from there (portable/reference.h), as at every
 * level.  Compiled for FU32_AVX2_TARGET_FLAGS (cpu.h) whatever the build's
 * flags, and only where FU32_HAVE_AVX2.
 */
#ifndef FIXEDUTF32_AVX2_CHUNK_H
#define FIXEDUTF32_AVX2_CHUNK_H

#include "../portable/reference.h"
#include "vector.h"

#if FU32_HAVE_AVX2

/* simdutf's test: every unit c is a scalar value iff max(c) <= 0x10FFFF and
 * min(c ^ 0xD800) >= 0x800.  `hi` holds a running max of c, `lo` a running
 * min of c ^ 0xD800. */
FU32_AVX2_INLINE int fu32_avx2_all_valid(__m256i hi, __m256i lo) {
    const __m256i max_scalar = _mm256_set1_epi32(0x10FFFF);
    const __m256i min_offset = _mm256_set1_epi32(0x800);
    __m256i ok_hi = _mm256_cmpeq_epi32(_mm256_max_epu32(hi, max_scalar), max_scalar);
    __m256i ok_lo = _mm256_cmpeq_epi32(_mm256_min_epu32(lo, min_offset), min_offset);
    return _mm256_movemask_epi8(_mm256_and_si256(ok_hi, ok_lo)) == -1;
}

/* Fold native code units c into the running max (hi) and the running min of
 * c ^ 0xD800 (lo) that fu32_avx2_all_valid tests. */
FU32_AVX2_INLINE void fu32_avx2_fold(__m256i *hi, __m256i *lo, __m256i c) {
    *hi = _mm256_max_epu32(*hi, c);
    *lo = _mm256_min_epu32(*lo, _mm256_xor_si256(c, _mm256_set1_epi32(0xD800)));
}

FU32_AVX2_INLINE void fu32_avx2_store(uint8_t *p, __m256i v, const int stream) {
    if (stream) _mm256_stream_si256((__m256i *)p, v);
    else _mm256_storeu_si256((__m256i *)p, v);
}

/* Returns 1 when all `n` units at src are valid. */
FU32_AVX2_INLINE int fu32_avx2_range_valid(const uint8_t *src, ptrdiff_t n, const int swapped) {
    /* Two pairs of accumulators keep the dependency chains short. */
    __m256i hi0 = _mm256_setzero_si256(), hi1 = _mm256_setzero_si256();
    __m256i lo0 = _mm256_set1_epi32(-1), lo1 = _mm256_set1_epi32(-1);
    ptrdiff_t j = 0;
    for (; j + 32 <= n; j += 32) {
        for (int k = 0; k < 4; k += 2) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32 * k));
            __m256i b = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32 * k + 32));
            fu32_avx2_fold(&hi0, &lo0, swapped ? fu32_avx2_bswap(a) : a);
            fu32_avx2_fold(&hi1, &lo1, swapped ? fu32_avx2_bswap(b) : b);
        }
    }
    for (; j < n; j += 8) {
        /* Masked-off lanes load as 0, which is valid. */
        __m256i a = (j + 8 <= n)
            ? _mm256_loadu_si256((const __m256i *)(src + 4 * j))
            : _mm256_maskload_epi32((const int *)(src + 4 * j), fu32_avx2_first_lanes(n - j));
        fu32_avx2_fold(&hi0, &lo0, swapped ? fu32_avx2_bswap(a) : a);
    }
    return fu32_avx2_all_valid(_mm256_max_epu32(hi0, hi1), _mm256_min_epu32(lo0, lo1));
}

/* Units before the first 32-byte boundary at or after src (0 when src is not
 * aligned to a unit, as no whole number of units reaches the boundary). */
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_units_to_boundary(const uint8_t *src, ptrdiff_t n) {
    const uintptr_t address = (uintptr_t)src;
    const ptrdiff_t head = (address % 4) ? 0 : (ptrdiff_t)((32 - address % 32) % 32) / 4;
    return head < n ? head : n;
}

FU32_AVX2_INLINE ptrdiff_t fu32_avx2_validate_impl(const uint8_t *src, ptrdiff_t n, const int swapped) {
    /* The main loop reads from a 32-byte boundary: about 30% faster than
     * from 16 bytes off, where a chunk held in a Python bytes object starts. */
    const ptrdiff_t head = fu32_avx2_units_to_boundary(src, n);
    if (head > 0 && !fu32_avx2_range_valid(src, head, swapped)) return 0;
    for (ptrdiff_t i = head; i < n; i += FU32_BLOCK_UNITS) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        if (!fu32_avx2_range_valid(src + 4 * i, count, swapped)) return i;
    }
    return -1;
}

/* -1 when all n units are valid, else the start of the first failing block. */
FU32_AVX2_FN ptrdiff_t fu32_avx2_validate_blocks(const uint8_t *src, ptrdiff_t n, int swapped) {
    return swapped ? fu32_avx2_validate_impl(src, n, 1) : fu32_avx2_validate_impl(src, n, 0);
}

/* Copy n units, byte-swapping them when `swap`; src may equal dst.  When
 * `validate`, also check the native value of each unit (byte-swapped first
 * if `src_swapped`) and return 1 only when all are valid; the units are
 * written either way. */
FU32_AVX2_INLINE int fu32_avx2_copy_block(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                                       const int validate, const int src_swapped,
                                       const int swap, const int stream) {
    __m256i hi0 = _mm256_setzero_si256(), hi1 = _mm256_setzero_si256();
    __m256i lo0 = _mm256_set1_epi32(-1), lo1 = _mm256_set1_epi32(-1);
    ptrdiff_t j = 0;
    for (; j + 32 <= n; j += 32) {
        for (int k = 0; k < 4; k++) {
            /* Pinned: checked and stored from this one load (common.h). */
            __m256i v = fu32_avx2_opaque(_mm256_loadu_si256((const __m256i *)(src + 4 * j + 32 * k)));
            __m256i swapped = (src_swapped || swap) ? fu32_avx2_bswap(v) : v;
            if (validate) {
                if (k % 2) fu32_avx2_fold(&hi1, &lo1, src_swapped ? swapped : v);
                else fu32_avx2_fold(&hi0, &lo0, src_swapped ? swapped : v);
            }
            fu32_avx2_store(dst + 4 * j + 32 * k, swap ? swapped : v, stream);
        }
    }
    for (; j < n; j += 8) {
        ptrdiff_t lanes = (n - j < 8) ? n - j : 8;
        __m256i v = fu32_avx2_opaque((lanes == 8)
            ? _mm256_loadu_si256((const __m256i *)(src + 4 * j))
            : _mm256_maskload_epi32((const int *)(src + 4 * j), fu32_avx2_first_lanes(lanes)));
        __m256i swapped = (src_swapped || swap) ? fu32_avx2_bswap(v) : v;
        if (validate) fu32_avx2_fold(&hi0, &lo0, src_swapped ? swapped : v);
        if (lanes == 8) {
            _mm256_storeu_si256((__m256i *)(dst + 4 * j), swap ? swapped : v);
        } else {
            uint32_t tail[8];
            _mm256_storeu_si256((__m256i *)tail, swap ? swapped : v);
            memcpy(dst + 4 * j, tail, 4 * (size_t)lanes);
        }
    }
    return !validate || fu32_avx2_all_valid(_mm256_max_epu32(hi0, hi1), _mm256_min_epu32(lo0, lo1));
}

FU32_AVX2_INLINE ptrdiff_t fu32_avx2_convert_impl(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                                                  const int validate, const int src_swapped,
                                                  const int swap, const int stream) {
    ptrdiff_t i = 0;
    ptrdiff_t head = 0;
    if (stream) {
        /* Streaming stores need 32-byte aligned destinations; the caller
         * only streams to destinations aligned to a code unit. */
        uintptr_t misalign = (uintptr_t)dst % 32;
        head = misalign ? (ptrdiff_t)((32 - misalign) / 4) : 0;
        if (head > n) head = n;
    }
    while (i < n) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        int block_stream = stream;
        if (i == 0 && head > 0) {
            count = head;
            block_stream = 0;
        }
        if (!fu32_avx2_copy_block(src + 4 * i, dst + 4 * i, count, validate, src_swapped, swap,
                               block_stream)) {
            /* In place, put the failing block back as it was; elsewhere the
             * reference loop writes it again, checking each unit. */
            if (src == dst && swap) fu32_avx2_copy_block(dst + 4 * i, dst + 4 * i, count, 0, 0, 1, 0);
            if (stream) _mm_sfence();
            return i;
        }
        i += count;
    }
    if (stream) _mm_sfence();
    return -1;
}

/* Converts n units from src to dst by `flags` (FU32_*).  Returns -1 when
 * done, else the start of the first block that failed validation: units
 * before it are written, and so is that block (each unit is checked and
 * stored from one load), except in place, where it is put back as it was. */
FU32_AVX2_FN ptrdiff_t fu32_avx2_convert_blocks(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    const int stream = (flags & FU32_STREAM) != 0 && (uintptr_t)dst % 4 == 0;
    /* Spell out the common combinations so each gets its own tight loop. */
    if (!validate) {
        if (swap) return stream ? fu32_avx2_convert_impl(src, dst, n, 0, 0, 1, 1)
                                : fu32_avx2_convert_impl(src, dst, n, 0, 0, 1, 0);
        return stream ? fu32_avx2_convert_impl(src, dst, n, 0, 0, 0, 1)
                      : fu32_avx2_convert_impl(src, dst, n, 0, 0, 0, 0);
    }
    if (swap && src_swapped)
        return stream ? fu32_avx2_convert_impl(src, dst, n, 1, 1, 1, 1)
                      : fu32_avx2_convert_impl(src, dst, n, 1, 1, 1, 0);
    if (swap)
        return stream ? fu32_avx2_convert_impl(src, dst, n, 1, 0, 1, 1)
                      : fu32_avx2_convert_impl(src, dst, n, 1, 0, 1, 0);
    if (src_swapped)
        return stream ? fu32_avx2_convert_impl(src, dst, n, 1, 1, 0, 1)
                      : fu32_avx2_convert_impl(src, dst, n, 1, 1, 0, 0);
    return stream ? fu32_avx2_convert_impl(src, dst, n, 1, 0, 0, 1)
                  : fu32_avx2_convert_impl(src, dst, n, 1, 0, 0, 0);
}

/* Element-wise width change.  Elements hold `from_units` code units in src
 * and `to_units` in dst (dst may be NULL: check only).  Returns the index of
 * the element from which the reference loop must resume: either the start of
 * a group that failed a check, or the last few elements, whose 32-byte
 * stores could run past the end of the buffer. */
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_repad_impl(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                                ptrdiff_t from_units, ptrdiff_t to_units,
                                                const int validate, const int src_swapped,
                                                const int swap) {
    const __m256i zero = _mm256_setzero_si256();
    const ptrdiff_t keep = from_units < to_units ? from_units : to_units;
    const ptrdiff_t to_round = (to_units + 7) & ~(ptrdiff_t)7;
    ptrdiff_t safe = n_elems;
    if (dst != NULL) {
        /* Element e stores up to unit e * to_units + to_round of dst, so
         * the last ceil(to_round / to_units) elements are left to the
         * reference loop.  Written so that no sum can overflow, whatever the
         * width (to_round - to_units is 0..7). */
        const ptrdiff_t extra = to_round - to_units;
        const ptrdiff_t tail = 1 + (extra > 0 ? (extra - 1) / to_units + 1 : 0);
        safe = n_elems - tail + 1;
        if (safe < 0) safe = 0;
    }
    ptrdiff_t group = FU32_BLOCK_UNITS / (from_units > to_units ? from_units : to_units);
    if (group < 1) group = 1;
    ptrdiff_t e = 0;
    while (e < safe) {
        ptrdiff_t group_end = (safe - e < group) ? safe : e + group;
        __m256i hi = zero, lo = _mm256_set1_epi32(-1), spill = zero;
        for (ptrdiff_t k = e; k < group_end; k++) {
            const uint8_t *s = src + 4 * k * from_units;
            uint8_t *d = dst ? dst + 4 * k * to_units : NULL;
            ptrdiff_t j;
            /* Units past the new width must all be padding. */
            for (j = to_units; j < from_units; j += 8) {
                __m256i v = (j + 8 <= from_units)
                    ? _mm256_loadu_si256((const __m256i *)(s + 4 * j))
                    : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_avx2_first_lanes(from_units - j));
                spill = _mm256_or_si256(spill, v);
            }
            for (j = 0; j < keep; j += 8) {
                __m256i v = fu32_avx2_opaque((j + 8 <= keep)
                    ? _mm256_loadu_si256((const __m256i *)(s + 4 * j))
                    : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_avx2_first_lanes(keep - j)));
                __m256i swapped_v = (src_swapped || swap) ? fu32_avx2_bswap(v) : v;
                if (validate) {
                    __m256i c = src_swapped ? swapped_v : v;
                    fu32_avx2_fold(&hi, &lo, c);
                }
                /* Lanes past `keep` are zero: the padding of this element or
                 * a part of the next one, which is written after this. */
                if (d) _mm256_storeu_si256((__m256i *)(d + 4 * j), swap ? swapped_v : v);
            }
            if (d) {
                const __m256i padding = fu32_avx2_opaque(zero);
                for (j = (keep + 7) & ~(ptrdiff_t)7; j < to_units; j += 8)
                    _mm256_storeu_si256((__m256i *)(d + 4 * j), padding);
            }
        }
        if (!_mm256_testz_si256(spill, spill)) return e;
        if (validate && !fu32_avx2_all_valid(hi, lo)) return e;
        e = group_end;
    }
    return e;
}

/* The same for widths that are whole vectors (U8, U16, U24, ...): no masks,
 * no stores past an element, so every element is done here. */
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_repad_vectors_impl(const uint8_t *src, uint8_t *dst,
                                                        ptrdiff_t n_elems, ptrdiff_t from_vectors,
                                                        ptrdiff_t to_vectors, const int validate,
                                                        const int src_swapped, const int swap,
                                                        const int stream) {
    const __m256i zero = fu32_avx2_opaque(_mm256_setzero_si256());
    const ptrdiff_t keep = from_vectors < to_vectors ? from_vectors : to_vectors;
    ptrdiff_t group = FU32_BLOCK_UNITS / 8 / (from_vectors > to_vectors ? from_vectors : to_vectors);
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        __m256i hi = zero, lo = _mm256_set1_epi32(-1), spill = zero;
        const __m256i *s = (const __m256i *)(src + 32 * e * from_vectors);
        __m256i *d = dst ? (__m256i *)(dst + 32 * e * to_vectors) : NULL;
        for (ptrdiff_t k = e; k < group_end; k++) {
            ptrdiff_t j;
            for (j = keep; j < from_vectors; j++) spill = _mm256_or_si256(spill, _mm256_loadu_si256(s + j));
            for (j = 0; j < keep; j++) {
                __m256i v = fu32_avx2_opaque(_mm256_loadu_si256(s + j));
                __m256i swapped_v = (src_swapped || swap) ? fu32_avx2_bswap(v) : v;
                if (validate) {
                    __m256i c = src_swapped ? swapped_v : v;
                    fu32_avx2_fold(&hi, &lo, c);
                }
                if (d) {
                    if (stream) _mm256_stream_si256(d + j, swap ? swapped_v : v);
                    else _mm256_storeu_si256(d + j, swap ? swapped_v : v);
                }
            }
            if (d) {
                for (j = keep; j < to_vectors; j++) {
                    if (stream) _mm256_stream_si256(d + j, zero);
                    else _mm256_storeu_si256(d + j, zero);
                }
                d += to_vectors;
            }
            s += from_vectors;
        }
        if (!_mm256_testz_si256(spill, spill) || (validate && !fu32_avx2_all_valid(hi, lo))) {
            if (stream) _mm_sfence();
            return e;
        }
    }
    if (stream) _mm_sfence();
    return n_elems;
}

FU32_AVX2_FN ptrdiff_t fu32_avx2_repad_blocks(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                       ptrdiff_t from_units, ptrdiff_t to_units, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    if (from_units % 8 == 0 && to_units % 8 == 0) {
        const ptrdiff_t f = from_units / 8, t = to_units / 8;
        const int stream = (flags & FU32_STREAM) != 0 && dst != NULL && (uintptr_t)dst % 32 == 0;
        /* U8 <-> U16 with validation, the most common change of width, gets
         * loops with constant widths (about a quarter faster in cache). */
        if (validate && !src_swapped && !stream) {
            if (f == 2 && t == 1)
                return swap ? fu32_avx2_repad_vectors_impl(src, dst, n_elems, 2, 1, 1, 0, 1, 0)
                            : fu32_avx2_repad_vectors_impl(src, dst, n_elems, 2, 1, 1, 0, 0, 0);
            if (f == 1 && t == 2)
                return swap ? fu32_avx2_repad_vectors_impl(src, dst, n_elems, 1, 2, 1, 0, 1, 0)
                            : fu32_avx2_repad_vectors_impl(src, dst, n_elems, 1, 2, 1, 0, 0, 0);
        }
        if (stream) {
            if (!validate) return fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 0, 0, swap, 1);
            return src_swapped ? fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 1, 1, swap, 1)
                               : fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 1, 0, swap, 1);
        }
        if (!validate)
            return swap ? fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 0, 0, 1, 0)
                        : fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 0, 0, 0, 0);
        if (src_swapped)
            return swap ? fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 1, 1, 1, 0)
                        : fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 1, 1, 0, 0);
        return swap ? fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 1, 0, 1, 0)
                    : fu32_avx2_repad_vectors_impl(src, dst, n_elems, f, t, 1, 0, 0, 0);
    }
    if (!validate)
        return swap ? fu32_avx2_repad_impl(src, dst, n_elems, from_units, to_units, 0, 0, 1)
                    : fu32_avx2_repad_impl(src, dst, n_elems, from_units, to_units, 0, 0, 0);
    if (src_swapped)
        return swap ? fu32_avx2_repad_impl(src, dst, n_elems, from_units, to_units, 1, 1, 1)
                    : fu32_avx2_repad_impl(src, dst, n_elems, from_units, to_units, 1, 1, 0);
    return swap ? fu32_avx2_repad_impl(src, dst, n_elems, from_units, to_units, 1, 0, 1)
                : fu32_avx2_repad_impl(src, dst, n_elems, from_units, to_units, 1, 0, 0);
}

/* Code points per element without trailing U+0000.  Returns -1 when done,
 * else the first element of a group that failed validation (lengths before
 * it are written). */
/* Length of one element: the position after its last non-zero unit.  Reads
 * from the end, one vector at a time, and stops at the first non-zero one. */
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_element_length(const uint8_t *s, ptrdiff_t width) {
    const __m256i zero = _mm256_setzero_si256();
    ptrdiff_t j = width - 8;
    for (; j >= 0; j -= 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + 4 * j));
        unsigned zeros = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero)));
        if (zeros != 0xFFu) return j + 32 - _lzcnt_u32(~zeros & 0xFFu);
    }
    if (j > -8) {  /* the first width % 8 units */
        __m256i v = _mm256_maskload_epi32((const int *)s, fu32_avx2_first_lanes(j + 8));
        unsigned zeros = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero)));
        if (zeros != 0xFFu) return 32 - _lzcnt_u32(~zeros & 0xFFu);
    }
    return 0;
}

/* Code points per element without trailing U+0000.  Returns -1 when done,
 * else the first element of a group that failed validation (lengths before
 * it are written).  Each group is validated first, then measured while it
 * is still in L1. */
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_str_lengths_impl(const uint8_t *src, ptrdiff_t n_elems,
                                                      ptrdiff_t width, ptrdiff_t *lengths,
                                                      const int validate, const int src_swapped) {
    ptrdiff_t group = FU32_BLOCK_UNITS / width;
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        const uint8_t *s = src + 4 * e * width;
        if (validate && width != 16 && !fu32_avx2_range_valid(s, (group_end - e) * width, src_swapped))
            return e;
        if (width == 16) {
            /* The common 64-byte layout, two elements per step: pack the
             * zero flags of both (4 vectors) into one 32-bit mask, units in
             * order, then length = index of the highest non-zero unit + 1. */
            const __m256i zero = _mm256_setzero_si256();
            const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            __m256i hi = zero, lo = _mm256_set1_epi32(-1), hi1 = zero, lo1 = lo;
            ptrdiff_t k = e;
            for (; k + 2 <= group_end; k += 2, s += 128) {
                __m256i u0 = _mm256_loadu_si256((const __m256i *)s);
                __m256i u1 = _mm256_loadu_si256((const __m256i *)(s + 32));
                __m256i u2 = _mm256_loadu_si256((const __m256i *)(s + 64));
                __m256i u3 = _mm256_loadu_si256((const __m256i *)(s + 96));
                if (validate) {
                    fu32_avx2_fold(&hi, &lo, src_swapped ? fu32_avx2_bswap(u0) : u0);
                    fu32_avx2_fold(&hi1, &lo1, src_swapped ? fu32_avx2_bswap(u1) : u1);
                    fu32_avx2_fold(&hi, &lo, src_swapped ? fu32_avx2_bswap(u2) : u2);
                    fu32_avx2_fold(&hi1, &lo1, src_swapped ? fu32_avx2_bswap(u3) : u3);
                }
                __m256i a = _mm256_packs_epi32(_mm256_cmpeq_epi32(u0, zero), _mm256_cmpeq_epi32(u1, zero));
                __m256i b = _mm256_packs_epi32(_mm256_cmpeq_epi32(u2, zero), _mm256_cmpeq_epi32(u3, zero));
                __m256i flags = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(a, b), order);
                uint32_t nonzero = ~(uint32_t)_mm256_movemask_epi8(flags);
                /* 31 - clz(2x + 1) is x's bit length, and 0 for x == 0. */
                lengths[k] = 31 - _lzcnt_u32(((nonzero & 0xFFFFu) << 1) | 1u);
                lengths[k + 1] = 31 - _lzcnt_u32(((nonzero >> 16) << 1) | 1u);
            }
            if (k < group_end) {
                if (validate && !fu32_avx2_range_valid(s, 16, src_swapped)) return e;
                lengths[k] = fu32_avx2_element_length(s, width);
            }
            if (validate && !fu32_avx2_all_valid(_mm256_max_epu32(hi, hi1), _mm256_min_epu32(lo, lo1)))
                return e;
        } else {
            for (ptrdiff_t k = e; k < group_end; k++, s += 4 * width)
                lengths[k] = fu32_avx2_element_length(s, width);
        }
    }
    return -1;
}

FU32_AVX2_FN ptrdiff_t fu32_avx2_str_lengths_blocks(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                             ptrdiff_t *lengths, int flags) {
    if (!(flags & FU32_VALIDATE)) return fu32_avx2_str_lengths_impl(src, n_elems, width, lengths, 0, 0);
    if (flags & FU32_SRC_SWAPPED) return fu32_avx2_str_lengths_impl(src, n_elems, width, lengths, 1, 1);
    return fu32_avx2_str_lengths_impl(src, n_elems, width, lengths, 1, 0);
}

/* The longest element in one pass, no length written: OR the elements
 * together unit by unit (a unit of the result is non-zero where any
 * element's is), so that the longest string ends at the result's last
 * non-zero unit.  The units are taken a period of lcm(width, 8) at a time,
 * one vector per 8 units, each folded into the validity test as it is ORed
 * in.  Returns -1 when done, else the first element of a group that failed
 * validation (*longest then covers the groups before it). */
#define FU32_AVX2_LONGEST_VECTORS 32

FU32_AVX2_INLINE ptrdiff_t fu32_avx2_longest_impl(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                                  ptrdiff_t period, const ptrdiff_t vectors,
                                                  ptrdiff_t *longest, const int validate, const int swapped) {
    const __m256i zero = _mm256_setzero_si256();
    __m256i all[FU32_AVX2_LONGEST_VECTORS];
    uint32_t units[8 * FU32_AVX2_LONGEST_VECTORS];
    ptrdiff_t periods = n_elems * width / period, per_group = FU32_BLOCK_UNITS / period, best = *longest;
    if (per_group < 1) per_group = 1;
    for (ptrdiff_t j = 0; j < vectors; j++) all[j] = zero;
    for (ptrdiff_t p = 0; p < periods; p += per_group) {
        ptrdiff_t end = periods - p < per_group ? periods : p + per_group;
        __m256i acc[FU32_AVX2_LONGEST_VECTORS], hi = zero, lo = _mm256_set1_epi32(-1);
        const uint8_t *s = src + 4 * p * period;
        for (ptrdiff_t j = 0; j < vectors; j++) acc[j] = zero;
        for (ptrdiff_t q = p; q < end; q++, s += 4 * period) {
            for (ptrdiff_t j = 0; j < vectors; j++) {
                __m256i v = _mm256_loadu_si256((const __m256i *)(s + 32 * j));
                if (validate) fu32_avx2_fold(&hi, &lo, swapped ? fu32_avx2_bswap(v) : v);
                acc[j] = _mm256_or_si256(acc[j], v);
            }
        }
        if (validate && !fu32_avx2_all_valid(hi, lo)) return p * (period / width);
        for (ptrdiff_t j = 0; j < vectors; j++) all[j] = _mm256_or_si256(all[j], acc[j]);
    }
    for (ptrdiff_t j = 0; j < vectors; j++) _mm256_storeu_si256((__m256i *)(units + 8 * j), all[j]);
    for (ptrdiff_t j = 0; j < period; j++)
        if (units[j] != 0 && j % width + 1 > best) best = j % width + 1;
    /* the last elements, fewer than a period's */
    ptrdiff_t e = periods * (period / width);
    const uint8_t *s = src + 4 * e * width;
    if (validate && e < n_elems && !fu32_avx2_range_valid(s, (n_elems - e) * width, swapped)) {
        *longest = best;
        return e;
    }
    for (; e < n_elems; e++, s += 4 * width) {
        ptrdiff_t length = fu32_avx2_element_length(s, width);
        if (length > best) best = length;
    }
    *longest = best;
    return -1;
}

FU32_AVX2_FN ptrdiff_t fu32_avx2_longest_blocks(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                                ptrdiff_t *longest, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0, swapped = validate && (flags & FU32_SRC_SWAPPED);
    ptrdiff_t period = width;
    while (period % 8) period += width;
    /* constant vector counts for the common widths, so that the accumulators stay in registers */
    if (period == 8) return fu32_avx2_longest_impl(src, n_elems, width, 8, 1, longest, validate, swapped);
    if (period == 16) return fu32_avx2_longest_impl(src, n_elems, width, 16, 2, longest, validate, swapped);
    if (period == 32) return fu32_avx2_longest_impl(src, n_elems, width, 32, 4, longest, validate, swapped);
    return fu32_avx2_longest_impl(src, n_elems, width, period, period / 8, longest, validate, swapped);
}

/* ------------------------------------------------------------------------
 * The AVX2 level's kernels (table.h): fast path, then reference loop.
 * ------------------------------------------------------------------------ */

static fu32_status fu32_avx2_validate(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int flags)
{
    return fu32_finish_validate(src, n, width, flags,
                                fu32_avx2_validate_blocks(src, n, (flags & FU32_SRC_SWAPPED) != 0));
}

static fu32_status fu32_avx2_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, ptrdiff_t width, int flags)
{
    return fu32_finish_convert(src, dst, n, width, flags, fu32_avx2_convert_blocks(src, dst, n, flags));
}

static fu32_status fu32_avx2_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                                   ptrdiff_t to_units, int flags)
{
    return fu32_finish_repad(src, dst, n_elems, from_units, to_units, flags,
                             fu32_avx2_repad_blocks(src, dst, n_elems, from_units, to_units, flags));
}

static fu32_status fu32_avx2_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                         ptrdiff_t *lengths, int flags)
{
    return fu32_finish_str_lengths(src, n_elems, width, lengths, flags,
                                   fu32_avx2_str_lengths_blocks(src, n_elems, width, lengths, flags));
}

static fu32_status fu32_avx2_longest(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width, ptrdiff_t *longest,
                                     int flags)
{
    ptrdiff_t period = width, resume;
    while (period % 8) period += width;
    if (period > 8 * FU32_AVX2_LONGEST_VECTORS)
        return fu32_longest_by_lengths(fu32_avx2_str_lengths, src, n_elems, width, longest, flags);
    resume = fu32_avx2_longest_blocks(src, n_elems, width, longest, flags);
    if (resume < 0) return fu32_ok();
    /* the exact error (or, were there none, the rest measured the slow way) */
    fu32_status status = fu32_longest_by_lengths(fu32_avx2_str_lengths, src + 4 * resume * width,
                                                 n_elems - resume, width, longest, flags);
    if (status.kind != FU32_OK) status.element += resume;
    return status;
}

#endif /* FU32_HAVE_AVX2 */

#endif /* FIXEDUTF32_AVX2_CHUNK_H */
