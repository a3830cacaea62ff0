/*
 * portable/chunk.h -- the portable level's chunk kernels: plain C loops
 * without early exits, which compilers vectorize for the baseline of any
 * target, with SSE2 (x86-64) and NEON (aarch64) written out where compilers
 * do not vectorize by themselves (a byte swap, a check fused with a copy).
 *
 * Each kernel is a fast path over blocks of FU32_BLOCK_UNITS, which returns
 * -1 or a resume index, then the reference loop from there
 * (portable/reference.h), as at every level.
 */
#ifndef FIXEDUTF32_PORTABLE_CHUNK_H
#define FIXEDUTF32_PORTABLE_CHUNK_H

#include "../common.h"
#include "reference.h"

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

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
static ptrdiff_t fu32_portable_validate_blocks(const uint8_t *src, ptrdiff_t n, int swapped) {
    for (ptrdiff_t i = 0; i < n; i += FU32_BLOCK_UNITS) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        if (!fu32_portable_block_valid(src + 4 * i, count, swapped)) return i;
    }
    return -1;
}

/* Copy n units from s to d (which may be s), byte-swapping them when `swap`,
 * and return 1 when every one is a scalar value (its native value: swapped
 * first when `src_swapped`), or when not `validate`.  One pass: each unit is
 * loaded once, checked and stored from the same register (pinned there,
 * common.h), so that what is written is what was checked even if another
 * thread changes the source.
 * The units are written whatever the check finds.  SSE2 has no unsigned
 * 32-bit compare: flipping the sign bit first turns the signed compare into
 * an unsigned one. */
static int fu32_portable_copy_block(const uint8_t *s, uint8_t *d, ptrdiff_t n, int validate, int src_swapped,
                                    int swap) {
    uint32_t bad = 0;
    ptrdiff_t j = 0;
#if defined(__SSE2__) || defined(_M_X64)
    /* The bounds with the sign bit flipped, as the units are. */
    const __m128i sign = _mm_set1_epi32((int)0x80000000u);
    const __m128i max_scalar = _mm_set1_epi32((int)(0x10FFFFu ^ 0x80000000u));
    const __m128i surrogate = _mm_set1_epi32(0xD800);
    const __m128i surrogate_span = _mm_set1_epi32((int)(0x800u ^ 0x80000000u));
    __m128i flags = _mm_setzero_si128();
    for (; j + 4 <= n; j += 4) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + 4 * j));
        __m128i w;
        FU32_PIN_VECTOR(v);
        w = v;
        if (src_swapped || swap) {
            w = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xB1), 0xB1); /* swap 16-bit halves */
            w = _mm_or_si128(_mm_slli_epi16(w, 8), _mm_srli_epi16(w, 8)); /* swap bytes in them */
        }
        if (validate) {
            const __m128i c = _mm_xor_si128(src_swapped ? w : v, sign);
            flags = _mm_or_si128(flags, _mm_cmpgt_epi32(c, max_scalar));
            /* (unit ^ 0xD800) below 0x800, both with the sign bit flipped */
            flags = _mm_or_si128(flags, _mm_cmplt_epi32(_mm_xor_si128(c, surrogate), surrogate_span));
        }
        _mm_storeu_si128((__m128i *)(d + 4 * j), swap ? w : v);
    }
    bad = (uint32_t)_mm_movemask_epi8(flags);
#elif defined(__ARM_NEON)
    const uint32x4_t max_scalar = vdupq_n_u32(0x10FFFFu);
    const uint32x4_t surrogate = vdupq_n_u32(0xD800u);
    const uint32x4_t surrogate_span = vdupq_n_u32(0x800u);
    uint32x4_t flags = vdupq_n_u32(0);
    for (; j + 4 <= n; j += 4) {
        uint8x16_t v = vld1q_u8(s + 4 * j);
        uint8x16_t w;
        FU32_PIN_VECTOR(v);
        w = (src_swapped || swap) ? vrev32q_u8(v) : v;
        if (validate) {
            const uint32x4_t c = vreinterpretq_u32_u8(src_swapped ? w : v);
            flags = vorrq_u32(flags, vcgtq_u32(c, max_scalar));
            flags = vorrq_u32(flags, vcltq_u32(veorq_u32(c, surrogate), surrogate_span));
        }
        vst1q_u8(d + 4 * j, swap ? w : v);
    }
    {
        const uint32x2_t half = vorr_u32(vget_low_u32(flags), vget_high_u32(flags));
        bad = vget_lane_u32(half, 0) | vget_lane_u32(half, 1);
    }
#endif
    for (; j < n; j++) {
        uint32_t raw = fu32_load_unit(s + 4 * j);
        FU32_PIN(raw);
        const uint32_t swapped = fu32_bswap32(raw);
        const uint32_t c = src_swapped ? swapped : raw;
        if (validate) bad |= (uint32_t)(c > 0x10FFFFu) | (uint32_t)((c ^ 0xD800u) < 0x800u);
        fu32_store_unit(d + 4 * j, swap ? swapped : raw);
    }
    return bad == 0;
}

/* -1, or the start of the first block that failed validation (units before
 * it written; the block itself written too, except in place, where it is put
 * back as it was). */
static ptrdiff_t fu32_portable_convert_blocks(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    if (src == dst && !swap) {
        /* In place without a swap there is nothing to write: check only. */
        return validate ? fu32_portable_validate_blocks(src, n, src_swapped) : -1;
    }
    for (ptrdiff_t i = 0; i < n; i += FU32_BLOCK_UNITS) {
        ptrdiff_t count = (n - i < FU32_BLOCK_UNITS) ? n - i : FU32_BLOCK_UNITS;
        const uint8_t *s = src + 4 * i;
        uint8_t *d = dst + 4 * i;
        if (!validate && !swap) {
            memcpy(d, s, 4 * (size_t)count);
        } else if (!fu32_portable_copy_block(s, d, count, validate, src_swapped, swap)) {
            if (src == dst) fu32_portable_swap_copy(d, d, count);
            return i;
        }
    }
    return -1;
}

/* -1, or the first element of a group that failed validation (lengths
 * before it written). */
static ptrdiff_t fu32_portable_str_lengths_blocks(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                                  ptrdiff_t *lengths, int flags) {
    ptrdiff_t group = FU32_BLOCK_UNITS / width;
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        const uint8_t *s = src + 4 * e * width;
        if ((flags & FU32_VALIDATE) &&
            !fu32_portable_block_valid(s, (group_end - e) * width, (flags & FU32_SRC_SWAPPED) != 0))
            return e;
        for (ptrdiff_t k = e; k < group_end; k++, s += 4 * width) lengths[k] = fu32_element_length(s, width);
    }
    return -1;
}

/* The element from which the reference loop resumes (n_elems when all are
 * done).  Each group is checked as it is written (one load of each unit),
 * and only then known good. */
static ptrdiff_t fu32_portable_repad_blocks(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                            ptrdiff_t from_units, ptrdiff_t to_units, int flags) {
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    const ptrdiff_t keep = from_units < to_units ? from_units : to_units;
    ptrdiff_t group = FU32_BLOCK_UNITS / (from_units > to_units ? from_units : to_units);
    if (group < 1) group = 1;
    for (ptrdiff_t e = 0; e < n_elems; e += group) {
        ptrdiff_t group_end = (n_elems - e < group) ? n_elems : e + group;
        const uint8_t *s = src + 4 * e * from_units;
        uint32_t spill = 0;
        int ok = 1;
        /* Units past the new width are never written: they need only be padding. */
        for (ptrdiff_t k = e; k < group_end; k++, s += 4 * from_units)
            for (ptrdiff_t j = keep; j < from_units; j++) spill |= fu32_load_unit(s + 4 * j);
        s = src + 4 * e * from_units;
        if (dst == NULL) {
            ok = !validate || fu32_portable_block_valid(s, (group_end - e) * from_units, src_swapped);
        } else {
            uint8_t *d = dst + 4 * e * to_units;
            for (ptrdiff_t k = e; k < group_end; k++, s += 4 * from_units, d += 4 * to_units) {
                ok &= fu32_portable_copy_block(s, d, keep, validate, src_swapped, swap);
                memset(d + 4 * keep, 0, 4 * (size_t)(to_units - keep));
            }
        }
        if (spill || !ok) return e;
    }
    return n_elems;
}

/* ------------------------------------------------------------------------
 * The portable level's kernels (table.h): fast path, then reference loop.
 * ------------------------------------------------------------------------ */

static fu32_status fu32_portable_validate(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int flags)
{
    return fu32_finish_validate(src, n, width, flags,
                                fu32_portable_validate_blocks(src, n, (flags & FU32_SRC_SWAPPED) != 0));
}

static fu32_status fu32_portable_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, ptrdiff_t width, int flags)
{
    return fu32_finish_convert(src, dst, n, width, flags, fu32_portable_convert_blocks(src, dst, n, flags));
}

static fu32_status fu32_portable_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                                       ptrdiff_t to_units, int flags)
{
    return fu32_finish_repad(src, dst, n_elems, from_units, to_units, flags,
                             fu32_portable_repad_blocks(src, dst, n_elems, from_units, to_units, flags));
}

static fu32_status fu32_portable_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                             ptrdiff_t *lengths, int flags)
{
    return fu32_finish_str_lengths(src, n_elems, width, lengths, flags,
                                   fu32_portable_str_lengths_blocks(src, n_elems, width, lengths, flags));
}

static fu32_status fu32_portable_longest(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                         ptrdiff_t *longest, int flags)
{
    return fu32_longest_by_lengths(fu32_portable_str_lengths, src, n_elems, width, longest, flags);
}

#endif /* FIXEDUTF32_PORTABLE_CHUNK_H */
