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
 * The AVX2 functions (here and in _utf8.h) are all compiled for one set of
 * instructions, FU32_AVX2_TARGET_FLAGS, and are only called when
 * fu32_cpu_level() says the CPU and the OS support every one of them: they
 * compile in the default (portable) build, without -march flags.
 */
#ifndef FIXEDUTF32_SIMD_H
#define FIXEDUTF32_SIMD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

#if defined(_MSC_VER) && !defined(__clang__)
#include <stdlib.h>
#define fu32_bswap32(x) _byteswap_ulong(x)
#elif defined(__GNUC__) || defined(__clang__)
#define fu32_bswap32(x) __builtin_bswap32(x)
#else
static inline uint32_t fu32_bswap32(uint32_t v) {
    return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}
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

/* Output buffers: 64-byte aligned (whole cache lines, and 32-byte aligned
 * for streaming stores); large ones are offered huge pages, as NumPy does,
 * so that first touch and TLB misses cost less. */
#if defined(_WIN32)
#include <malloc.h>
static void *fu32_buffer_alloc(size_t size) { return _aligned_malloc(size ? size : 1, 64); }
static void fu32_buffer_free(void *p) { _aligned_free(p); }
#else
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
static void *fu32_buffer_alloc(size_t size) {
    void *p = NULL;
    size_t alignment = size >= ((size_t)4 << 20) ? ((size_t)2 << 20) : 64;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= ((size_t)4 << 20)) madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}
static void fu32_buffer_free(void *p) { free(p); }
#endif

/* Flags shared by the convert kernels (scalar and SIMD). */
#define FU32_VALIDATE 1    /* check every code point */
#define FU32_SRC_SWAPPED 2 /* source units are in non-native byte order */
#define FU32_SWAP 4        /* byte-swap units on the way to the destination */
#define FU32_STREAM 8      /* non-temporal stores: output larger than cache */

/* Units per fast-check block (16 KiB): small enough to stay in L1 between
 * the validating pass and the writing pass over the same block. */
#define FU32_BLOCK_UNITS 4096

/* ------------------------------------------------------------------------
 * Portable fast paths: plain loops without early exits, which compilers
 * vectorize for the baseline of any target (SSE2 on x86-64, NEON on
 * aarch64).  They find the failing block; the reference loops in
 * _kernels.pyx pin down the error, as they do after the AVX2 paths.
 * ------------------------------------------------------------------------ */

/* 1 when all n units are scalar values.  Flags are ORed rather than tracked
 * as a max and a min: unsigned compares vectorize on SSE2, unsigned max does
 * not.  Swapped units are tested byte by byte where they lie, without
 * swapping them first. */
static int fu32_portable_block_valid(const uint8_t *src, ptrdiff_t n, int swapped) {
    uint32_t bad = 0;
    ptrdiff_t i;
    if (swapped) {
        for (i = 0; i < n; i++) {
            uint32_t s = fu32_load_unit(src + 4 * i);
            /* Native top byte is s's low byte, the next one s's second. */
            bad |= (uint32_t)((s & 0xFFu) != 0) | (uint32_t)(((s >> 8) & 0xFFu) > 0x10u)
                 | (uint32_t)((s & 0x00F8FFFFu) == 0x00D80000u);
        }
    } else {
        for (i = 0; i < n; i++) {
            uint32_t c = fu32_load_unit(src + 4 * i);
            bad |= (uint32_t)(c > 0x10FFFFu) | (uint32_t)(c - 0xD800u < 0x800u);
        }
    }
    return bad == 0;
}

/* Byte-swap n units from s to d (which may be s), with the baseline SIMD of
 * the target: compilers do not vectorize a byte swap on SSE2 by themselves. */
static void fu32_portable_swap_copy(const uint8_t *s, uint8_t *d, ptrdiff_t n) {
    ptrdiff_t j = 0;
#if defined(__SSE2__) || defined(_M_X64)
    for (; j + 4 <= n; j += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + 4 * j));
        v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xB1), 0xB1); /* swap 16-bit halves */
        v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8)); /* swap bytes in them */
        _mm_storeu_si128((__m128i *)(d + 4 * j), v);
    }
#elif defined(__ARM_NEON)
    for (; j + 4 <= n; j += 4) vst1q_u8(d + 4 * j, vrev32q_u8(vld1q_u8(s + 4 * j)));
#endif
    for (; j < n; j++) fu32_store_unit(d + 4 * j, fu32_bswap32(fu32_load_unit(s + 4 * j)));
}

/* -1 when all n units are valid, else the start of the first failing block. */
static ptrdiff_t fu32_portable_validate(const uint8_t *src, ptrdiff_t n, int swapped) {
    for (ptrdiff_t i = 0; i < n; i += FU32_BLOCK_UNITS) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        if (!fu32_portable_block_valid(src + 4 * i, count, swapped)) return i;
    }
    return -1;
}

/* Like fu32_avx2_convert: -1, or the start of the first block that failed
 * validation (units before it written, the block itself untouched). */
static ptrdiff_t fu32_portable_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    for (ptrdiff_t i = 0; i < n; i += FU32_BLOCK_UNITS) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        const uint8_t *s = src + 4 * i;
        uint8_t *d = dst + 4 * i;
        if (validate && !fu32_portable_block_valid(s, count, src_swapped)) return i;
        if (swap) {
            fu32_portable_swap_copy(s, d, count);
        } else if (s != d) {
            memcpy(d, s, 4 * (size_t)count);
        }
    }
    return -1;
}

/* Like fu32_avx2_str_lengths: -1, or the first element of a group that
 * failed validation (lengths before it written). */
static ptrdiff_t fu32_portable_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                           ptrdiff_t *lengths, int flags) {
    ptrdiff_t group = FU32_BLOCK_UNITS / width;
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        const uint8_t *s = src + 4 * e * width;
        if ((flags & FU32_VALIDATE) &&
            !fu32_portable_block_valid(s, (group_end - e) * width, (flags & FU32_SRC_SWAPPED) != 0))
            return e;
        for (ptrdiff_t k = e; k < group_end; k++, s += 4 * width) {
            ptrdiff_t length = width;
            while (length > 0 && fu32_load_unit(s + 4 * (length - 1)) == 0) length--;
            lengths[k] = length;
        }
    }
    return -1;
}

/* Like fu32_avx2_repad: the element from which the reference loop resumes
 * (n_elems when all are done).  Each group is checked before it is written. */
static ptrdiff_t fu32_portable_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                     ptrdiff_t from_units, ptrdiff_t to_units, int flags) {
    const ptrdiff_t keep = from_units < to_units ? from_units : to_units;
    ptrdiff_t group = FU32_BLOCK_UNITS / (from_units > to_units ? from_units : to_units);
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        const uint8_t *s = src + 4 * e * from_units;
        uint32_t spill = 0;
        for (ptrdiff_t k = e; k < group_end; k++, s += 4 * from_units)
            for (ptrdiff_t j = keep; j < from_units; j++) spill |= fu32_load_unit(s + 4 * j);
        s = src + 4 * e * from_units;
        if (spill || ((flags & FU32_VALIDATE) &&
                      !fu32_portable_block_valid(s, (group_end - e) * from_units,
                                                 (flags & FU32_SRC_SWAPPED) != 0)))
            return e;
        if (dst == NULL) continue;
        uint8_t *d = dst + 4 * e * to_units;
        for (ptrdiff_t k = e; k < group_end; k++, s += 4 * from_units, d += 4 * to_units) {
            if (flags & FU32_SWAP) fu32_portable_swap_copy(s, d, keep);
            else memcpy(d, s, 4 * (size_t)keep);
            memset(d + 4 * keep, 0, 4 * (size_t)(to_units - keep));
        }
    }
    return n_elems;
}

/* ------------------------------------------------------------------------
 * Choosing the level.  The AVX2 code uses BMI1/BMI2/LZCNT/POPCNT as well
 * (andn, shlx, lzcnt), so the AVX2 level needs all of them, and the OS's
 * saving of YMM registers (XGETBV): a CPU or a virtual machine that lacks
 * one gets the portable level.  A CPU without LZCNT would run lzcnt as bsr
 * and give wrong results without any fault.
 * ------------------------------------------------------------------------ */

#define FU32_LEVEL_PORTABLE 0
#define FU32_LEVEL_AVX2 1

/* Feature bits of fu32_cpu_features(). */
#define FU32_CPU_AVX2 0x01u
#define FU32_CPU_BMI1 0x02u
#define FU32_CPU_BMI2 0x04u
#define FU32_CPU_LZCNT 0x08u
#define FU32_CPU_POPCNT 0x10u
#define FU32_CPU_AVX 0x20u
#define FU32_CPU_OSXSAVE 0x40u  /* the OS uses XSAVE: XGETBV may be run */
#define FU32_CPU_OS_YMM 0x80u   /* XCR0 has the XMM and YMM state bits */

/* Everything the AVX2 functions are compiled for, and the OS state they need. */
#define FU32_AVX2_TARGET_FLAGS "avx2,bmi,bmi2,lzcnt,popcnt"
#define FU32_AVX2_NEEDS (FU32_CPU_AVX2 | FU32_CPU_BMI1 | FU32_CPU_BMI2 | FU32_CPU_LZCNT | \
                         FU32_CPU_POPCNT | FU32_CPU_AVX | FU32_CPU_OSXSAVE | FU32_CPU_OS_YMM)

#if (defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))) || \
    (defined(_MSC_VER) && defined(_M_X64))
#define FU32_HAVE_AVX2 1
#else
#define FU32_HAVE_AVX2 0
#endif

/* The level for a set of features: a pure function, tested on a table. */
static int fu32_level_for_features(unsigned features) {
    if (FU32_HAVE_AVX2 && (features & FU32_AVX2_NEEDS) == FU32_AVX2_NEEDS) return FU32_LEVEL_AVX2;
    return FU32_LEVEL_PORTABLE;
}

#if FU32_HAVE_AVX2 && defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
static void fu32_cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
    int regs[4];
    __cpuidex(regs, (int)leaf, (int)sub);
    r[0] = (unsigned)regs[0]; r[1] = (unsigned)regs[1]; r[2] = (unsigned)regs[2]; r[3] = (unsigned)regs[3];
}
static unsigned fu32_xcr0(void) { return (unsigned)_xgetbv(0); }
#elif FU32_HAVE_AVX2
#include <cpuid.h>
static void fu32_cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static unsigned fu32_xcr0(void) {
    unsigned eax, edx;
    /* xgetbv, spelled as bytes for old assemblers; only run when OSXSAVE. */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}
#endif

/* The features of this CPU and OS (FU32_CPU_* bits); 0 off x86-64. */
static unsigned fu32_cpu_features(void) {
    unsigned features = 0;
#if FU32_HAVE_AVX2
    unsigned r[4];
    fu32_cpuid(0, 0, r);
    const unsigned max_leaf = r[0];
    if (max_leaf >= 1) {
        fu32_cpuid(1, 0, r);
        if (r[2] & (1u << 23)) features |= FU32_CPU_POPCNT;
        if (r[2] & (1u << 27)) features |= FU32_CPU_OSXSAVE;
        if (r[2] & (1u << 28)) features |= FU32_CPU_AVX;
    }
    if (max_leaf >= 7) {
        fu32_cpuid(7, 0, r);
        if (r[1] & (1u << 3)) features |= FU32_CPU_BMI1;
        if (r[1] & (1u << 5)) features |= FU32_CPU_AVX2;
        if (r[1] & (1u << 8)) features |= FU32_CPU_BMI2;
    }
    fu32_cpuid(0x80000000u, 0, r);
    if (r[0] >= 0x80000001u) {
        fu32_cpuid(0x80000001u, 0, r);
        if (r[2] & (1u << 5)) features |= FU32_CPU_LZCNT;  /* ABM */
    }
    if ((features & FU32_CPU_OSXSAVE) && (fu32_xcr0() & 6u) == 6u) features |= FU32_CPU_OS_YMM;
#endif
    return features;
}

/* The one place that picks the fastest level this CPU runs. */
static int fu32_cpu_level(void) { return fu32_level_for_features(fu32_cpu_features()); }

/* Attributes of the AVX2 functions.  GCC and Clang compile them for
 * FU32_AVX2_TARGET_FLAGS whatever the build's flags; MSVC compiles AVX2
 * intrinsics without any flag. */
#if FU32_HAVE_AVX2 && (defined(__GNUC__) || defined(__clang__))
#define FU32_AVX2_TARGET __attribute__((target(FU32_AVX2_TARGET_FLAGS)))
#define FU32_FORCE_INLINE static inline __attribute__((always_inline))
#define FU32_NOINLINE static __attribute__((noinline))
#elif FU32_HAVE_AVX2
#define FU32_AVX2_TARGET
#define FU32_FORCE_INLINE static __forceinline
#define FU32_NOINLINE static __declspec(noinline)
#endif

#if FU32_HAVE_AVX2
#include <immintrin.h>

#define FU32_AVX2_FN FU32_AVX2_TARGET FU32_NOINLINE
#define FU32_AVX2_INLINE FU32_AVX2_TARGET FU32_FORCE_INLINE

FU32_AVX2_INLINE __m256i fu32_v_bswap(__m256i v) {
    const __m256i order = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    return _mm256_shuffle_epi8(v, order);
}

/* Hide a value from the optimiser.  Without it GCC and Clang turn the short
 * per-element copy and zero-fill loops into calls to memcpy and memset, which
 * costs more than the loops for the 32..128 bytes of an element. */
FU32_AVX2_INLINE __m256i fu32_v_opaque(__m256i v) {
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+x"(v));
#endif
    return v;
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

/* Fold native code units c into the running max (hi) and the running min of
 * c ^ 0xD800 (lo) that fu32_v_all_valid tests. */
FU32_AVX2_INLINE void fu32_v_fold(__m256i *hi, __m256i *lo, __m256i c) {
    *hi = _mm256_max_epu32(*hi, c);
    *lo = _mm256_min_epu32(*lo, _mm256_xor_si256(c, _mm256_set1_epi32(0xD800)));
}

FU32_AVX2_INLINE void fu32_v_store(uint8_t *p, __m256i v, const int stream) {
    if (stream) _mm256_stream_si256((__m256i *)p, v);
    else _mm256_storeu_si256((__m256i *)p, v);
}

/* Returns 1 when all `n` units at src are valid. */
FU32_AVX2_INLINE int fu32_v_range_valid(const uint8_t *src, ptrdiff_t n, const int swapped) {
    /* Two pairs of accumulators keep the dependency chains short. */
    __m256i hi0 = _mm256_setzero_si256(), hi1 = _mm256_setzero_si256();
    __m256i lo0 = _mm256_set1_epi32(-1), lo1 = _mm256_set1_epi32(-1);
    ptrdiff_t j = 0;
    for (; j + 32 <= n; j += 32) {
        for (int k = 0; k < 4; k += 2) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32 * k));
            __m256i b = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32 * k + 32));
            fu32_v_fold(&hi0, &lo0, swapped ? fu32_v_bswap(a) : a);
            fu32_v_fold(&hi1, &lo1, swapped ? fu32_v_bswap(b) : b);
        }
    }
    for (; j < n; j += 8) {
        /* Masked-off lanes load as 0, which is valid. */
        __m256i a = (j + 8 <= n)
            ? _mm256_loadu_si256((const __m256i *)(src + 4 * j))
            : _mm256_maskload_epi32((const int *)(src + 4 * j), fu32_v_lanes_below(n - j));
        fu32_v_fold(&hi0, &lo0, swapped ? fu32_v_bswap(a) : a);
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

/* Copy n units, byte-swapping them when `swap`; src may equal dst.  When
 * `validate`, also check the native value of each unit (byte-swapped first
 * if `src_swapped`) and return 1 only when all are valid; the units are
 * written either way. */
FU32_AVX2_INLINE int fu32_v_copy_block(const uint8_t *src, uint8_t *dst, ptrdiff_t n,
                                       const int validate, const int src_swapped,
                                       const int swap, const int stream) {
    __m256i hi0 = _mm256_setzero_si256(), hi1 = _mm256_setzero_si256();
    __m256i lo0 = _mm256_set1_epi32(-1), lo1 = _mm256_set1_epi32(-1);
    ptrdiff_t j = 0;
    for (; j + 32 <= n; j += 32) {
        for (int k = 0; k < 4; k++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(src + 4 * j + 32 * k));
            __m256i swapped = (src_swapped || swap) ? fu32_v_bswap(v) : v;
            if (validate) {
                if (k % 2) fu32_v_fold(&hi1, &lo1, src_swapped ? swapped : v);
                else fu32_v_fold(&hi0, &lo0, src_swapped ? swapped : v);
            }
            fu32_v_store(dst + 4 * j + 32 * k, swap ? swapped : v, stream);
        }
    }
    for (; j < n; j += 8) {
        ptrdiff_t lanes = (n - j < 8) ? n - j : 8;
        __m256i v = (lanes == 8)
            ? _mm256_loadu_si256((const __m256i *)(src + 4 * j))
            : _mm256_maskload_epi32((const int *)(src + 4 * j), fu32_v_lanes_below(lanes));
        __m256i swapped = (src_swapped || swap) ? fu32_v_bswap(v) : v;
        if (validate) fu32_v_fold(&hi0, &lo0, src_swapped ? swapped : v);
        if (lanes == 8) {
            _mm256_storeu_si256((__m256i *)(dst + 4 * j), swap ? swapped : v);
        } else {
            uint32_t tail[8];
            _mm256_storeu_si256((__m256i *)tail, swap ? swapped : v);
            memcpy(dst + 4 * j, tail, 4 * (size_t)lanes);
        }
    }
    return !validate || fu32_v_all_valid(_mm256_max_epu32(hi0, hi1), _mm256_min_epu32(lo0, lo1));
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
        if (!fu32_v_copy_block(src + 4 * i, dst + 4 * i, count, validate, src_swapped, swap,
                               block_stream)) {
            /* Leave the failing block as it was before: in place, swap it
             * back; elsewhere the scalar loop rewrites it. */
            if (src == dst && swap) fu32_v_copy_block(dst + 4 * i, dst + 4 * i, count, 0, 0, 1, 0);
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
    const __m256i zero = _mm256_setzero_si256();
    const ptrdiff_t keep = from_units < to_units ? from_units : to_units;
    const ptrdiff_t to_round = (to_units + 7) & ~(ptrdiff_t)7;
    ptrdiff_t safe = n_elems;
    if (dst != NULL) {
        /* Element e stores up to unit e * to_units + to_round of dst, so
         * the last ceil(to_round / to_units) elements are left to the
         * scalar loop.  Written so that no sum can overflow, whatever the
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
                    : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_v_lanes_below(from_units - j));
                spill = _mm256_or_si256(spill, v);
            }
            for (j = 0; j < keep; j += 8) {
                __m256i v = fu32_v_opaque((j + 8 <= keep)
                    ? _mm256_loadu_si256((const __m256i *)(s + 4 * j))
                    : _mm256_maskload_epi32((const int *)(s + 4 * j), fu32_v_lanes_below(keep - j)));
                __m256i swapped_v = (src_swapped || swap) ? fu32_v_bswap(v) : v;
                if (validate) {
                    __m256i c = src_swapped ? swapped_v : v;
                    fu32_v_fold(&hi, &lo, c);
                }
                /* Lanes past `keep` are zero: the padding of this element or
                 * a part of the next one, which is written after this. */
                if (d) _mm256_storeu_si256((__m256i *)(d + 4 * j), swap ? swapped_v : v);
            }
            if (d) {
                const __m256i padding = fu32_v_opaque(zero);
                for (j = (keep + 7) & ~(ptrdiff_t)7; j < to_units; j += 8)
                    _mm256_storeu_si256((__m256i *)(d + 4 * j), padding);
            }
        }
        if (!_mm256_testz_si256(spill, spill)) return e;
        if (validate && !fu32_v_all_valid(hi, lo)) return e;
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
    const __m256i zero = fu32_v_opaque(_mm256_setzero_si256());
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
                __m256i v = fu32_v_opaque(_mm256_loadu_si256(s + j));
                __m256i swapped_v = (src_swapped || swap) ? fu32_v_bswap(v) : v;
                if (validate) {
                    __m256i c = src_swapped ? swapped_v : v;
                    fu32_v_fold(&hi, &lo, c);
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
        if (!_mm256_testz_si256(spill, spill) || (validate && !fu32_v_all_valid(hi, lo))) {
            if (stream) _mm_sfence();
            return e;
        }
    }
    if (stream) _mm_sfence();
    return n_elems;
}

FU32_AVX2_FN ptrdiff_t fu32_avx2_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
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
FU32_AVX2_INLINE ptrdiff_t fu32_v_element_length(const uint8_t *s, ptrdiff_t width) {
    const __m256i zero = _mm256_setzero_si256();
    ptrdiff_t j = width - 8;
    for (; j >= 0; j -= 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(s + 4 * j));
        unsigned zeros = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, zero)));
        if (zeros != 0xFFu) return j + 32 - _lzcnt_u32(~zeros & 0xFFu);
    }
    if (j > -8) {  /* the first width % 8 units */
        __m256i v = _mm256_maskload_epi32((const int *)s, fu32_v_lanes_below(j + 8));
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
        if (validate && width != 16 && !fu32_v_range_valid(s, (group_end - e) * width, src_swapped))
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
                    fu32_v_fold(&hi, &lo, src_swapped ? fu32_v_bswap(u0) : u0);
                    fu32_v_fold(&hi1, &lo1, src_swapped ? fu32_v_bswap(u1) : u1);
                    fu32_v_fold(&hi, &lo, src_swapped ? fu32_v_bswap(u2) : u2);
                    fu32_v_fold(&hi1, &lo1, src_swapped ? fu32_v_bswap(u3) : u3);
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
                if (validate && !fu32_v_range_valid(s, 16, src_swapped)) return e;
                lengths[k] = fu32_v_element_length(s, width);
            }
            if (validate && !fu32_v_all_valid(_mm256_max_epu32(hi, hi1), _mm256_min_epu32(lo, lo1)))
                return e;
        } else {
            for (ptrdiff_t k = e; k < group_end; k++, s += 4 * width)
                lengths[k] = fu32_v_element_length(s, width);
        }
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
