/*
 * Fast paths for the fixed_length_utf32 kernels in _kernels.pyx.
 *
 * Each function here runs over a whole buffer and returns either -1 (all done,
 * all valid) or a "resume index": the first code unit (or element) from which
 * the scalar kernel in _kernels.pyx, which is the reference, must carry on.
 * Everything before the resume index has been checked and written exactly as
 * the scalar kernel would have done it; nothing from the resume index on has
 * been written.  The scalar kernel then pins down the exact error, so every
 * error is reported by one piece of code, whatever the instruction set.
 *
 * The AVX2 functions carry __attribute__((target("avx2"))): they compile in
 * the default (portable) build and are only called after the CPU check.
 */
#ifndef FIXEDUTF32_SIMD_H
#define FIXEDUTF32_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_MSC_VER)
#include <stdlib.h>
#define fu32_bswap32(x) _byteswap_ulong(x)
#else
#define fu32_bswap32(x) __builtin_bswap32(x)
#endif

/* Unaligned 4-byte access: inputs may start at any address. */
static inline uint32_t fu32_load_unit(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline void fu32_store_unit(uint8_t *p, uint32_t v) {
    memcpy(p, &v, 4);
}

/* Flags shared by the convert kernels (scalar and SIMD). */
#define FU32_VALIDATE 1    /* check every code point */
#define FU32_SRC_SWAPPED 2 /* source units are in non-native byte order */
#define FU32_SWAP 4        /* byte-swap units on the way to the destination */
#define FU32_STREAM 8      /* non-temporal stores: output larger than cache */

/* Units per fast-check block (16 KiB): small enough to stay in L1 between
 * the validating pass and the writing pass over the same block. */
#define FU32_BLOCK_UNITS 4096

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FU32_HAVE_AVX2 1
#include <immintrin.h>

static int fu32_cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

#define FU32_AVX2_FN static __attribute__((target("avx2"), noinline))
#define FU32_AVX2_INLINE static inline __attribute__((target("avx2"), always_inline))

FU32_AVX2_INLINE __m256i fu32_v_bswap(__m256i v) {
    const __m256i order = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    return _mm256_shuffle_epi8(v, order);
}

/* Lanes below `count` (0..8) set, the others clear. */
FU32_AVX2_INLINE __m256i fu32_v_lanes_below(ptrdiff_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)count),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* simdutf's test: every unit c is a scalar value iff max(c) <= 0x10FFFF and
 * min(c ^ 0xD800) >= 0x800.  `hi` holds a running max of c, `lo` a running
 * min of c ^ 0xD800. */
FU32_AVX2_INLINE int fu32_v_all_valid(__m256i hi, __m256i lo) {
    const __m256i max_scalar = _mm256_set1_epi32(0x10FFFF);
    const __m256i min_offset = _mm256_set1_epi32(0x800);
    __m256i ok_hi = _mm256_cmpeq_epi32(_mm256_max_epu32(hi, max_scalar), max_scalar);
    __m256i ok_lo = _mm256_cmpeq_epi32(_mm256_min_epu32(lo, min_offset), min_offset);
    return _mm256_movemask_epi8(_mm256_and_si256(ok_hi, ok_lo)) == -1;
}

/* Returns 1 when all `n` units at src are valid. */
FU32_AVX2_INLINE int fu32_v_range_valid(const uint8_t *src, ptrdiff_t n, const int swapped) {
    const __m256i surrogate = _mm256_set1_epi32(0xD800);
    __m256i hi0 = _mm256_setzero_si256(), hi1 = _mm256_setzero_si256();
    __m256i lo0 = _mm256_set1_epi32(-1), lo1 = _mm256_set1_epi32(-1);
    ptrdiff_t j = 0;
    for (; j + 32 <= n; j += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + 4 * j));
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 96));
        if (swapped) {
            a = fu32_v_bswap(a); b = fu32_v_bswap(b);
            c = fu32_v_bswap(c); d = fu32_v_bswap(d);
        }
        hi0 = _mm256_max_epu32(hi0, _mm256_max_epu32(a, b));
        hi1 = _mm256_max_epu32(hi1, _mm256_max_epu32(c, d));
        lo0 = _mm256_min_epu32(lo0, _mm256_min_epu32(_mm256_xor_si256(a, surrogate),
                                                     _mm256_xor_si256(b, surrogate)));
        lo1 = _mm256_min_epu32(lo1, _mm256_min_epu32(_mm256_xor_si256(c, surrogate),
                                                     _mm256_xor_si256(d, surrogate)));
    }
    for (; j < n; j += 8) {
        /* Masked-off lanes load as 0, which is valid. */
        __m256i a = (j + 8 <= n)
            ? _mm256_loadu_si256((const __m256i *)(src + 4 * j))
            : _mm256_maskload_epi32((const int *)(src + 4 * j), fu32_v_lanes_below(n - j));
        if (swapped) a = fu32_v_bswap(a);
        hi0 = _mm256_max_epu32(hi0, a);
        lo0 = _mm256_min_epu32(lo0, _mm256_xor_si256(a, surrogate));
    }
    return fu32_v_all_valid(_mm256_max_epu32(hi0, hi1), _mm256_min_epu32(lo0, lo1));
}

FU32_AVX2_INLINE ptrdiff_t fu32_avx2_validate_impl(const uint8_t *src, ptrdiff_t n, const int swapped) {
    for (ptrdiff_t i = 0; i < n; i += FU32_BLOCK_UNITS) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        if (!fu32_v_range_valid(src + 4 * i, count, swapped)) return i;
    }
    return -1;
}

/* -1 when all n units are valid, else the start of the first failing block. */
FU32_AVX2_FN ptrdiff_t fu32_avx2_validate(const uint8_t *src, ptrdiff_t n, int swapped) {
    return swapped ? fu32_avx2_validate_impl(src, n, 1) : fu32_avx2_validate_impl(src, n, 0);
}

/* Copy n units, byte-swapping when `swap`; src may equal dst. */
FU32_AVX2_INLINE void fu32_v_transform(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                                       const int swap, const int stream) {
    ptrdiff_t j = 0;
    for (; j + 32 <= n; j += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + 4 * j));
        __m256i b = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 96));
        if (swap) {
            a = fu32_v_bswap(a); b = fu32_v_bswap(b);
            c = fu32_v_bswap(c); d = fu32_v_bswap(d);
        }
        if (stream) {
            _mm256_stream_si256((__m256i *)(dst + 4 * j), a);
            _mm256_stream_si256((__m256i *)(dst + 4 * j + 32), b);
            _mm256_stream_si256((__m256i *)(dst + 4 * j + 64), c);
            _mm256_stream_si256((__m256i *)(dst + 4 * j + 96), d);
        } else {
            _mm256_storeu_si256((__m256i *)(dst + 4 * j), a);
            _mm256_storeu_si256((__m256i *)(dst + 4 * j + 32), b);
            _mm256_storeu_si256((__m256i *)(dst + 4 * j + 64), c);
            _mm256_storeu_si256((__m256i *)(dst + 4 * j + 96), d);
        }
    }
    for (; j + 8 <= n; j += 8) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(src + 4 * j));
        if (swap) a = fu32_v_bswap(a);
        _mm256_storeu_si256((__m256i *)(dst + 4 * j), a);
    }
    for (; j < n; j++) {
        uint32_t u = fu32_load_unit(src + 4 * j);
        fu32_store_unit(dst + 4 * j, swap ? fu32_bswap32(u) : u);
    }
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
    if (head > 0) {
        if (validate && !fu32_v_range_valid(src, head, src_swapped)) return 0;
        fu32_v_transform(src, dst, head, swap, 0);
        i = head;
    }
    while (i < n) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        if (validate && !fu32_v_range_valid(src + 4 * i, count, src_swapped)) {
            if (stream) _mm_sfence();
            return i;
        }
        fu32_v_transform(src + 4 * i, dst + 4 * i, count, swap, stream);
        i += count;
    }
    if (stream) _mm_sfence();
    return -1;
}

/* Converts n units from src to dst by `flags` (FU32_*).  Returns -1 when
 * done, else the start of the first block that failed validation: units
 * before it are written, units from it on are untouched. */
FU32_AVX2_FN ptrdiff_t fu32_avx2_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags) {
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
 * the element from which the scalar kernel must resume: either the start of
 * a group that failed a check, or the last few elements, whose 32-byte
 * stores could run past the end of the buffer. */
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_repad_impl(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                                ptrdiff_t from_units, ptrdiff_t to_units,
                                                const int validate, const int src_swapped,
                                                const int swap) {
    const __m256i surrogate = _mm256_set1_epi32(0xD800);
    const __m256i zero = _mm256_setzero_si256();
    const ptrdiff_t keep = from_units < to_units ? from_units : to_units;
    const ptrdiff_t to_round = (to_units + 7) & ~(ptrdiff_t)7;
    ptrdiff_t safe = n_elems;
    if (dst != NULL) {
        /* Element e stores up to unit e * to_units + to_round of dst. */
        ptrdiff_t tail = (to_round + to_units - 1) / to_units;
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
                    : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_v_lanes_below(from_units - j));
                spill = _mm256_or_si256(spill, v);
            }
            for (j = 0; j < keep; j += 8) {
                __m256i v = (j + 8 <= keep)
                    ? _mm256_loadu_si256((const __m256i *)(s + 4 * j))
                    : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_v_lanes_below(keep - j));
                __m256i swapped_v = (src_swapped || swap) ? fu32_v_bswap(v) : v;
                if (validate) {
                    __m256i c = src_swapped ? swapped_v : v;
                    hi = _mm256_max_epu32(hi, c);
                    lo = _mm256_min_epu32(lo, _mm256_xor_si256(c, surrogate));
                }
                /* Lanes past `keep` are zero: the padding of this element or
                 * a part of the next one, which is written after this. */
                if (d) _mm256_storeu_si256((__m256i *)(d + 4 * j), swap ? swapped_v : v);
            }
            if (d) {
                for (j = (keep + 7) & ~(ptrdiff_t)7; j < to_units; j += 8)
                    _mm256_storeu_si256((__m256i *)(d + 4 * j), zero);
            }
        }
        if (!_mm256_testz_si256(spill, spill)) return e;
        if (validate && !fu32_v_all_valid(hi, lo)) return e;
        e = group_end;
    }
    return e;
}

FU32_AVX2_FN ptrdiff_t fu32_avx2_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                       ptrdiff_t from_units, ptrdiff_t to_units, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
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
FU32_AVX2_INLINE ptrdiff_t fu32_avx2_str_lengths_impl(const uint8_t *src, ptrdiff_t n_elems,
                                                      ptrdiff_t width, ptrdiff_t *lengths,
                                                      const int validate, const int src_swapped) {
    const __m256i surrogate = _mm256_set1_epi32(0xD800);
    const __m256i zero = _mm256_setzero_si256();
    ptrdiff_t group = FU32_BLOCK_UNITS / width;
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        __m256i hi = zero, lo = _mm256_set1_epi32(-1);
        for (ptrdiff_t k = e; k < group_end; k++) {
            const uint8_t *s = src + 4 * k * width;
            ptrdiff_t length = 0;
            if (validate) {
                for (ptrdiff_t j = 0; j < width; j += 8) {
                    __m256i v = (j + 8 <= width)
                        ? _mm256_loadu_si256((const __m256i *)(s + 4 * j))
                        : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_v_lanes_below(width - j));
                    unsigned nonzero = ~(unsigned)_mm256_movemask_ps(
                        _mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero))) & 0xFFu;
                    if (nonzero) length = j + 32 - __builtin_clz(nonzero);
                    if (src_swapped) v = fu32_v_bswap(v);
                    hi = _mm256_max_epu32(hi, v);
                    lo = _mm256_min_epu32(lo, _mm256_xor_si256(v, surrogate));
                }
            } else {
                /* Without validation only the tail needs reading. */
                ptrdiff_t j = (width - 1) & ~(ptrdiff_t)7;
                for (; j >= 0; j -= 8) {
                    __m256i v = (j + 8 <= width)
                        ? _mm256_loadu_si256((const __m256i *)(s + 4 * j))
                        : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_v_lanes_below(width - j));
                    unsigned nonzero = ~(unsigned)_mm256_movemask_ps(
                        _mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero))) & 0xFFu;
                    if (nonzero) {
                        length = j + 32 - __builtin_clz(nonzero);
                        break;
                    }
                }
            }
            lengths[k] = length;
        }
        if (validate && !fu32_v_all_valid(hi, lo)) return e;
    }
    return -1;
}

FU32_AVX2_FN ptrdiff_t fu32_avx2_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                             ptrdiff_t *lengths, int flags) {
    if (!(flags & FU32_VALIDATE)) return fu32_avx2_str_lengths_impl(src, n_elems, width, lengths, 0, 0);
    if (flags & FU32_SRC_SWAPPED) return fu32_avx2_str_lengths_impl(src, n_elems, width, lengths, 1, 1);
    return fu32_avx2_str_lengths_impl(src, n_elems, width, lengths, 1, 0);
}

#else /* no AVX2 path on this compiler / architecture */
#define FU32_HAVE_AVX2 0

static int fu32_cpu_has_avx2(void) { return 0; }

/* Never called: the dispatcher only picks AVX2 when FU32_HAVE_AVX2. Each
 * returns 0 so that the scalar kernel would redo all of the work. */
static ptrdiff_t fu32_avx2_validate(const uint8_t *src, ptrdiff_t n, int swapped) {
    (void)src; (void)n; (void)swapped; return 0;
}
static ptrdiff_t fu32_avx2_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags) {
    (void)src; (void)dst; (void)n; (void)flags; return 0;
}
static ptrdiff_t fu32_avx2_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                 ptrdiff_t from_units, ptrdiff_t to_units, int flags) {
    (void)src; (void)dst; (void)n_elems; (void)from_units; (void)to_units; (void)flags; return 0;
}
static ptrdiff_t fu32_avx2_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                       ptrdiff_t *lengths, int flags) {
    (void)src; (void)n_elems; (void)width; (void)lengths; (void)flags; return 0;
}
#endif

#endif /* FIXEDUTF32_SIMD_H */
