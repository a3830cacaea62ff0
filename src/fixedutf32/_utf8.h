/*
 * _utf8.h -- transcoding between fixed_length_utf32 chunks and UTF-8.
 *
 * Plain C99, static functions, no global state (the tables below are constant).
 * A portable scalar path is always compiled and always correct; AVX2 paths are
 * compiled on x86-64 (GCC/Clang with per-function target attributes, MSVC as it
 * is), so a default build (no -march flags) still contains them, and the caller
 * picks one at run time.
 *
 * All lengths are ptrdiff_t (Py_ssize_t compatible), counted in code units: UTF-32
 * code units for fixed-width chunks, bytes for UTF-8.  Inputs may start at any
 * address.  Kernels never raise: they return an fu32_utf8_result.
 *
 * Byte order: `swap` is 1 when the chunk's byte order differs from the machine's.
 *
 * Entry points (level FU32_LEVEL_PORTABLE or FU32_LEVEL_AVX2, from _simd.h's
 * fu32_cpu_level(); AVX2 falls back to scalar where the header was built without it):
 *   fu32_utf32_to_utf8     chunk -> UTF-8 (offsets + values, or the vlen-utf8 layout)
 *   fu32_utf8_to_utf32     UTF-8 strings -> chunk, strict, zero padded
 *   fu32_utf8_vlen_parse   the item table of a vlen-utf8 chunk
 *   fu32_utf8_scatter_fixed  UTF-8 strings -> fixed-width zero-padded bytes
 * An error found by an AVX2 path is always located and reported by the scalar
 * code, so both levels report the same error at the same place.
 *
 * Define FU32_UTF8_NO_SIMD to compile the scalar code only.
 */
#ifndef FIXEDUTF32_UTF8_H
#define FIXEDUTF32_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The level constants, the CPU check and the one set of AVX2 target flags. */
#include "_simd.h"

#if FU32_HAVE_AVX2 && !defined(FU32_UTF8_NO_SIMD)
#define FU32_UTF8_HAVE_AVX2 1
#define FU32_UTF8_AVX2_FN FU32_AVX2_TARGET
/* small helpers of the AVX2 loops: always inlined (GCC keeps some out of line otherwise) */
#define FU32_UTF8_AVX2_INLINE FU32_AVX2_TARGET FU32_FORCE_INLINE
#else
#define FU32_UTF8_HAVE_AVX2 0
#endif

/* Error kinds (fu32_utf8_result.error). */
enum {
    FU32_UTF8_OK = 0,
    FU32_UTF8_TOO_LARGE = 1,    /* code point above U+10FFFF */
    FU32_UTF8_SURROGATE = 2,    /* U+D800..U+DFFF (UTF-32 value or encoded in UTF-8) */
    FU32_UTF8_HEADER_BITS = 3,  /* UTF-8 byte that can never appear (F8..FF) */
    FU32_UTF8_TOO_SHORT = 4,    /* UTF-8 sequence cut short (end of element or a non-continuation byte) */
    FU32_UTF8_TOO_LONG = 5,     /* UTF-8 continuation byte that no lead byte claims */
    FU32_UTF8_OVERLONG = 6,     /* UTF-8 sequence longer than needed for its value */
    FU32_UTF8_CAPACITY = 7,     /* more code points than the element holds */
    FU32_UTF8_BAD_OFFSETS = 8,  /* offsets decreasing, negative, or past the end of values */
    FU32_UTF8_BAD_VLEN = 9      /* vlen-utf8 chunk truncated or with trailing bytes */
};

/*
 * index: element index; position: code unit position inside the element (UTF-32
 * side) or byte offset inside the element's UTF-8 bytes (UTF-8 side); value: the bad
 * code point (UTF-32 side) or the element's length in code points (CAPACITY).
 */
typedef struct {
    int error;
    ptrdiff_t index;
    ptrdiff_t position;
    int64_t value;
} fu32_utf8_result;

/* Output slack the encoders need past the worst-case size. */
#define FU32_UTF8_SLACK 64

static inline fu32_utf8_result fu32_utf8_ok(void)
{
    fu32_utf8_result r;
    r.error = FU32_UTF8_OK;
    r.index = 0;
    r.position = 0;
    r.value = 0;
    return r;
}

static inline fu32_utf8_result fu32_utf8_error(int error, ptrdiff_t index, ptrdiff_t position,
                                               int64_t value)
{
    fu32_utf8_result r;
    r.error = error;
    r.index = index;
    r.position = position;
    r.value = value;
    return r;
}

/* The result for element i of a UTF-8 -> UTF-32 decode whose element
 * decoder returned `kind` (the capacity error has no byte position). */
static inline fu32_utf8_result fu32_utf8_element_error(int kind, ptrdiff_t i, ptrdiff_t errpos,
                                                       ptrdiff_t count)
{
    return fu32_utf8_error(kind, i, kind == FU32_UTF8_CAPACITY ? 0 : errpos, count);
}

static inline uint32_t fu32_utf8_load32(const uint8_t *p, int swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    if (swap) {
        v = (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
    }
    return v;
}

static inline void fu32_utf8_store32(uint8_t *p, uint32_t v, int swap)
{
    if (swap) {
        v = (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
    }
    memcpy(p, &v, 4);
}

static inline void fu32_utf8_store_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* one store (GCC does not always merge the byte stores below) */
    memcpy(p, &v, 4);
#else
    uint8_t b[4];
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)(v >> 16);
    b[3] = (uint8_t)(v >> 24);
    memcpy(p, b, 4);
#endif
}

static inline uint32_t fu32_utf8_load_le32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
#endif
}

/* Lookup tables of the AVX2 paths (generated by tools/gen_utf8_tables.py). */
#include "_utf8_tables.h"

/* ======================================================================== */
/* UTF-32 -> UTF-8                                                           */
/* ======================================================================== */

static inline int fu32_utf8_cp_error(uint32_t c)
{
    if (c > 0x10FFFFu) {
        return FU32_UTF8_TOO_LARGE;
    }
    if ((c & 0xFFFFF800u) == 0xD800u) {
        return FU32_UTF8_SURROGATE;
    }
    return FU32_UTF8_OK;
}

/* Number of code units of an element before its trailing U+0000 padding. */
static inline ptrdiff_t fu32_utf8_content_len_scalar(const uint8_t *e, ptrdiff_t width)
{
    ptrdiff_t k = width;
    while (k >= 2) {
        uint64_t w;
        memcpy(&w, e + 4 * (k - 2), 8);
        if (w != 0) {
            break;
        }
        k -= 2;
    }
    while (k > 0) {
        uint32_t v;
        memcpy(&v, e + 4 * (k - 1), 4);
        if (v != 0) {
            break;
        }
        k--;
    }
    return k;
}

/* Encodes one code point; values that are not scalar values still take 1..4 bytes. */
static inline uint8_t *fu32_utf8_put(uint8_t *d, uint32_t c)
{
    if (c < 0x80u) {
        d[0] = (uint8_t)c;
        return d + 1;
    }
    if (c < 0x800u) {
        d[0] = (uint8_t)(0xC0u | (c >> 6));
        d[1] = (uint8_t)(0x80u | (c & 0x3Fu));
        return d + 2;
    }
    if (c < 0x10000u) {
        d[0] = (uint8_t)(0xE0u | (c >> 12));
        d[1] = (uint8_t)(0x80u | ((c >> 6) & 0x3Fu));
        d[2] = (uint8_t)(0x80u | (c & 0x3Fu));
        return d + 3;
    }
    d[0] = (uint8_t)(0xF0u | ((c >> 18) & 0x07u));
    d[1] = (uint8_t)(0x80u | ((c >> 12) & 0x3Fu));
    d[2] = (uint8_t)(0x80u | ((c >> 6) & 0x3Fu));
    d[3] = (uint8_t)(0x80u | (c & 0x3Fu));
    return d + 4;
}

/*
 * Transcodes n elements of `width` UTF-32 code units at `src` to UTF-8 at `dst`,
 * without each element's trailing padding.
 *   offsets: if not NULL, n + 1 entries, offsets[i] the start of element i in dst.
 *   vlen:    if 1, writes the vlen-utf8 layout instead (uint32 LE count, then per
 *            element a uint32 LE byte length and the bytes); the caller checks that
 *            n and every length fit in 32 bits (they do when 4 * width < 2**32).
 *   dst, pos, cap: writing starts at dst + pos, and offsets count from dst; dst
 *            holds cap bytes.  An element is started only while 4 * width (+ 4
 *            with vlen) + FU32_UTF8_SLACK bytes are left, so a dst of pos + 4 * n *
 *            width (+ 4 + 4 * n with vlen) + FU32_UTF8_SLACK bytes takes them all;
 *            with less, the caller continues from element *done in more room.
 *   *out_len receives the end of the bytes written (from dst), *done the number
 *            of elements transcoded.
 * With validate, the first code unit that is not a Unicode scalar value is reported
 * (element order, among the elements transcoded) and dst's contents are unspecified.
 */
static fu32_utf8_result fu32_utf32_to_utf8_scalar(const uint8_t *src, ptrdiff_t n, ptrdiff_t width,
                                                  int swap, int validate, int64_t *offsets, int vlen,
                                                  uint8_t *dst, ptrdiff_t pos, ptrdiff_t cap,
                                                  ptrdiff_t *out_len, ptrdiff_t *done)
{
    fu32_utf8_result r = fu32_utf8_ok();
    const ptrdiff_t need = 4 * width + (vlen ? 4 : 0) + FU32_UTF8_SLACK;
    uint8_t *const end = dst + cap;
    uint8_t *d = dst + pos;
    ptrdiff_t i, j;
    if (vlen) {
        fu32_utf8_store_le32(d, (uint32_t)n);
        d += 4;
    }
    if (offsets) {
        offsets[0] = (int64_t)(d - dst);
    }
    for (i = 0; i < n; i++) {
        const uint8_t *e = src + 4 * width * i;
        ptrdiff_t k;
        uint8_t *lenp = d;
        uint8_t *start;
        if (end - d < need) {
            break;
        }
        k = fu32_utf8_content_len_scalar(e, width);
        if (vlen) {
            d += 4;
        }
        start = d;
        for (j = 0; j < k; j++) {
            uint32_t c = fu32_utf8_load32(e + 4 * j, swap);
            if (validate) {
                int kind = fu32_utf8_cp_error(c);
                if (kind != FU32_UTF8_OK) {
                    r.error = kind;
                    r.index = i;
                    r.position = j;
                    r.value = c;
                    *out_len = d - dst;
                    *done = i;
                    return r;
                }
            }
            d = fu32_utf8_put(d, c);
        }
        if (vlen) {
            fu32_utf8_store_le32(lenp, (uint32_t)(d - start));
        }
        if (offsets) {
            offsets[i + 1] = (int64_t)(d - dst);
        }
    }
    *out_len = d - dst;
    *done = i;
    return r;
}

#if FU32_UTF8_HAVE_AVX2

FU32_UTF8_AVX2_INLINE __m256i fu32_utf8_bswap32_avx2(__m256i v)
{
    const __m256i m = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
                                       3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    return _mm256_shuffle_epi8(v, m);
}

/* Mask of the first k lanes (k may be <= 0 or >= 8). */
FU32_UTF8_AVX2_INLINE __m256i fu32_utf8_first_lanes_avx2(ptrdiff_t k)
{
    const int kk = k < 0 ? 0 : (k > 8 ? 8 : (int)k);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(kk), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The constants of the encoding loop.  fu32_utf8_enc_consts_avx2 hides their values
 * from the compiler, so that it keeps them in registers or on the stack instead of
 * rebuilding each one in every iteration (GCC does, three instructions apiece, when
 * the loop needs more constants than there are registers). */
typedef struct {
    __m256i k7f, k7ff, kffff;       /* length thresholds */
    __m256i split, marks, masks;    /* see fu32_utf8_build8_avx2 */
    __m256i kd800, k800;            /* see fu32_utf8_check_key_avx2 */
    __m256i not_ascii, not_two;     /* bits that take a code point past 1 or 2 bytes */
    __m256i w3f, w80, wc0, w7f;     /* 16-bit lanes, for the 2-byte path */
} fu32_utf8_enc_k;

FU32_UTF8_AVX2_INLINE void fu32_utf8_enc_consts_avx2(fu32_utf8_enc_k *k)
{
    /* per length (dword index: minus (length - 1), mod 8): the marker bits, and the
     * mask of the 6-bit fields in bytes 0 and 2 (7 bits in byte 0 for one byte:
     * the code point) */
    k->marks = _mm256_setr_epi32(0, 0, 0, 0, 0, (int)0xF0808080u, 0x00E08080, 0x0000C080);
    k->masks = _mm256_setr_epi32(0x0000007F, 0, 0, 0, 0, 0x003F003F, 0x003F003F, 0x003F003F);
    k->k7f = _mm256_set1_epi32(0x7F);
    k->k7ff = _mm256_set1_epi32(0x7FF);
    k->kffff = _mm256_set1_epi32(0xFFFF);
    k->split = _mm256_set1_epi32(0x07003F00);
    k->kd800 = _mm256_set1_epi32(0xD800);
    k->k800 = _mm256_set1_epi32(0x800);
    k->not_ascii = _mm256_set1_epi32((int)0xFFFFFF80u);
    k->not_two = _mm256_set1_epi32((int)0xFFFFF800u);
    k->w3f = _mm256_set1_epi16(0x3F);
    k->w80 = _mm256_set1_epi16(0x80);
    k->wc0 = _mm256_set1_epi16(0xC0);
    k->w7f = _mm256_set1_epi16(0x7F);
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+x"(k->k7f), "+x"(k->k7ff), "+x"(k->kffff), "+x"(k->split), "+x"(k->marks), "+x"(k->masks),
                 "+x"(k->kd800));
    __asm__("" : "+x"(k->k800), "+x"(k->not_ascii), "+x"(k->not_two), "+x"(k->w3f), "+x"(k->w80), "+x"(k->wc0),
                 "+x"(k->w7f));
#endif
}

/* The UTF-8 bytes of the 8 code points in v (native order), and for each half
 * of four lanes (*i0, *i1) the pack_shuffle index that packs them.  No branch on
 * the data: mixed-script blocks vary too much from one to the next for a branch
 * to be predicted.
 * Each lane is built with its UTF-8 bytes backwards from byte 0 (the last byte in
 * byte 0, the lead in byte length - 1), so every length shares one layout: the
 * code point's bits split 6/6/6/3 over bytes 0..3, then the lead and continuation
 * bits of its length or-ed in; the shuffle puts the bytes in order and drops the
 * bytes past the lead. */
FU32_UTF8_AVX2_INLINE __m256i fu32_utf8_build8_avx2(__m256i v, const fu32_utf8_enc_k *k, unsigned *i0,
                                                     unsigned *i1)
{
    const __m256i m1 = _mm256_cmpgt_epi32(v, k->k7f);
    const __m256i m2 = _mm256_cmpgt_epi32(v, k->k7ff);
    const __m256i m3 = _mm256_cmpgt_epi32(v, k->kffff);
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(m1, m2), m3);
    /* 16-bit halves: bits 0..15 of c (low; bits 12.. unused), bits 12..27 (high);
     * each half then splits into two bytes: its bits 0..5, then its bits 6..11 */
    const __m256i u = _mm256_blend_epi16(v, _mm256_slli_epi32(v, 4), 0xAA);
    __m256i r = _mm256_and_si256(u, _mm256_permutevar8x32_epi32(k->masks, s));
    unsigned idx;
    r = _mm256_or_si256(_mm256_or_si256(r, _mm256_and_si256(_mm256_slli_epi16(u, 2), k->split)),
                        _mm256_permutevar8x32_epi32(k->marks, s));
    /* length minus one, bit 0 (bit 0 of s: 2 or 4 bytes) and bit 1 (m2: 3 or 4
     * bytes), packed to one byte per half: low nibble bit 0 of lanes 0..3, high
     * nibble bit 1 */
    {
        const __m256i p = _mm256_packs_epi32(_mm256_slli_epi32(s, 31), m2);
        idx = (unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(p, p));
    }
    *i0 = idx & 0xFFu;
    *i1 = (idx >> 16) & 0xFFu;
    return r;
}

/* Stores the packed bytes of the four lanes of h (see fu32_utf8_build8_avx2) at d. */
FU32_UTF8_AVX2_INLINE void fu32_utf8_store4_avx2(uint8_t *d, __m128i h, unsigned i)
{
    _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(h, _mm_loadu_si128((const __m128i *)fu32_utf8_pack_shuffle[i])));
}

/* Encodes the 8 code points in v (native order) at d; returns the new end. Writes
 * up to 32 bytes past d. */
FU32_UTF8_AVX2_INLINE uint8_t *fu32_utf8_put8_avx2(uint8_t *d, __m256i v, const fu32_utf8_enc_k *k)
{
    unsigned i0, i1;
    const __m256i r = fu32_utf8_build8_avx2(v, k, &i0, &i1);
    fu32_utf8_store4_avx2(d, _mm256_castsi256_si128(r), i0);
    d += fu32_utf8_pack_len[i0];
    fu32_utf8_store4_avx2(d, _mm256_extracti128_si256(r, 1), i1);
    return d + fu32_utf8_pack_len[i1];
}

/* For a block of 16 code units whose bytes end at d + l (bit j of nz set if code
 * unit j is not zero), moves *content_end to the end of its last non-zero code
 * point: each trailing zero code unit is one 0x00 byte at the end.  With `single`
 * (the element is this one block) an all-zero block gives d + l - 16, the block's
 * start, so no test is needed. */
FU32_UTF8_AVX2_INLINE void fu32_utf8_content_end_avx2(uint8_t **content_end, uint8_t *d, ptrdiff_t l, unsigned nz,
                                                      int single)
{
    if (single || nz) {
        *content_end = d + (l - (ptrdiff_t)(_lzcnt_u32(nz) - 16u));
    }
}

/* Encodes 16 code points all below U+0800 (v0, v1 in native order), one or two
 * bytes each, at d; moves *content_end like fu32_utf8_put8_track_avx2.  Writes
 * up to 32 bytes past d. */
FU32_UTF8_AVX2_INLINE uint8_t *fu32_utf8_put16_two_byte_avx2(uint8_t *d, __m256i v0, __m256i v1,
                                                                       uint8_t **content_end, const fu32_utf8_enc_k *k,
                                                                       int single)
{
    const __m256i c = _mm256_permute4x64_epi64(_mm256_packus_epi32(v0, v1), 0xD8);
    const __m256i m = _mm256_cmpgt_epi16(c, k->w7f);
    const __m256i two = _mm256_or_si256(
        _mm256_or_si256(_mm256_srli_epi16(c, 6), k->wc0),
        _mm256_slli_epi16(_mm256_or_si256(_mm256_and_si256(c, k->w3f), k->w80), 8));
    const __m256i w = _mm256_blendv_epi8(c, two, m);
    const unsigned bits = (unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(m, _mm256_setzero_si256()));
    const unsigned zero = (unsigned)_mm256_movemask_epi8(
        _mm256_packs_epi16(_mm256_cmpeq_epi16(c, _mm256_setzero_si256()), _mm256_setzero_si256()));
    const unsigned k0 = bits & 0xFFu, k1 = (bits >> 16) & 0xFFu;
    const unsigned nz = ~((zero & 0xFFu) | ((zero >> 8) & 0xFF00u)) & 0xFFFFu;
    const ptrdiff_t l0 = fu32_utf8_two_byte_len[k0], l = l0 + fu32_utf8_two_byte_len[k1];
    _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(_mm256_castsi256_si128(w),
                                                     _mm_loadu_si128((const __m128i *)fu32_utf8_two_byte_shuffle[k0])));
    _mm_storeu_si128((__m128i *)(d + l0), _mm_shuffle_epi8(_mm256_extracti128_si256(w, 1),
                                                            _mm_loadu_si128((const __m128i *)fu32_utf8_two_byte_shuffle[k1])));
    fu32_utf8_content_end_avx2(content_end, d, l, nz, single);
    return d + l;
}

/* Like fu32_utf8_put8_avx2, and moves *content_end to the end of the last
 * non-zero code point's bytes if the block has one. */
FU32_UTF8_AVX2_INLINE uint8_t *fu32_utf8_put8_track_avx2(uint8_t *d, __m256i v, uint8_t **content_end,
                                                         const fu32_utf8_enc_k *k)
{
    const unsigned z = (unsigned)_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_cmpeq_epi32(v, _mm256_setzero_si256())));
    const unsigned nz = (~z) & 0xFFu;
    d = fu32_utf8_put8_avx2(d, v, k);
    if (nz) {
        /* each trailing zero lane is one 0x00 byte at the end */
        *content_end = d - (_lzcnt_u32(nz) - 24u);
    }
    return d;
}

/* One unsigned key per code point, at most FU32_UTF8_CHECK_KEY_MAX iff it is a
 * scalar value: xor 0xD800 takes the surrogates (only them) below 0x800, and
 * subtracting 0x800 wraps them around to the top; values above U+10FFFF stay above
 * 0x10FFFF - 0x800.  So one running max checks both rules. */
#define FU32_UTF8_CHECK_KEY_MAX 0x10F7FF
FU32_UTF8_AVX2_INLINE __m256i fu32_utf8_check_key_avx2(__m256i v, const fu32_utf8_enc_k *k)
{
    return _mm256_sub_epi32(_mm256_xor_si256(v, k->kd800), k->k800);
}

/*
 * Each element is encoded whole, 16 then 8 code units at a time (the last block
 * masked), padding included; the write position then moves back to the end of the
 * last non-zero code point, which drops the padding and keeps interior U+0000.
 */
/* Encodes 16 code points (v0, v1 in native order) at d, moving *content_end past
 * the last non-zero one; folds the non-ASCII, non-2-byte blocks into *vcheck
 * (see fu32_utf8_check_key_avx2). */
FU32_UTF8_AVX2_INLINE uint8_t *fu32_utf8_put16_avx2(uint8_t *d, __m256i v0, __m256i v1, uint8_t **content_end,
                                                    __m256i *vcheck, const fu32_utf8_enc_k *k, int single)
{
    const __m256i both = _mm256_or_si256(v0, v1);
    if (_mm256_testz_si256(both, k->not_ascii)) {
        /* 16 ASCII code points (all below 0x80, so valid): pack to bytes */
        const __m256i t = _mm256_packus_epi32(v0, v1);
        const __m256i u = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(t, t),
                                                      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        const __m128i b = _mm256_castsi256_si128(u);
        const unsigned nz = (~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_setzero_si128()))) & 0xFFFFu;
        _mm_storeu_si128((__m128i *)d, b);
        fu32_utf8_content_end_avx2(content_end, d, 16, nz, single);
        return d + 16;
    }
    if (_mm256_testz_si256(both, k->not_two)) {
        /* all below U+0800 (so valid): one or two bytes each */
        return fu32_utf8_put16_two_byte_avx2(d, v0, v1, content_end, k, single);
    }
    *vcheck = _mm256_max_epu32(*vcheck, _mm256_max_epu32(fu32_utf8_check_key_avx2(v0, k),
                                                         fu32_utf8_check_key_avx2(v1, k)));
    {
        const __m256i zero = _mm256_setzero_si256();
        const unsigned z = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v0, zero))) |
                           ((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v1, zero))) << 8);
        unsigned i0, i1, i2, i3;
        const __m256i r0 = fu32_utf8_build8_avx2(v0, k, &i0, &i1);
        const __m256i r1 = fu32_utf8_build8_avx2(v1, k, &i2, &i3);
        /* here one addition per block on the chain of write positions measured
         * faster than sums of the lengths */
        uint8_t *e = d;
        fu32_utf8_store4_avx2(e, _mm256_castsi256_si128(r0), i0);
        e += fu32_utf8_pack_len[i0];
        fu32_utf8_store4_avx2(e, _mm256_extracti128_si256(r0, 1), i1);
        e += fu32_utf8_pack_len[i1];
        fu32_utf8_store4_avx2(e, _mm256_castsi256_si128(r1), i2);
        e += fu32_utf8_pack_len[i2];
        fu32_utf8_store4_avx2(e, _mm256_extracti128_si256(r1, 1), i3);
        e += fu32_utf8_pack_len[i3];
        fu32_utf8_content_end_avx2(content_end, e, 0, ~z & 0xFFFFu, single);
        return e;
    }
}

/* Element shapes the loop is compiled for (see fu32_utf32_to_utf8_avx2). */
enum { FU32_W_ANY = 0, FU32_W_WHOLE16 = 1, FU32_W_ONE16 = 2 };

/*
 * Each element is encoded whole, 16 then 8 code units at a time (the last block
 * masked), padding included; the write position then moves back to the end of the
 * last non-zero code point, which drops the padding and keeps interior U+0000.
 * shape: FU32_W_WHOLE16 when width is a multiple of 16 (no tail), FU32_W_ONE16
 * when width <= 16 (one block per element, masked loads below 16).
 */
FU32_UTF8_AVX2_INLINE fu32_utf8_result
fu32_utf32_to_utf8_avx2_body(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int swap, int validate,
                             int64_t *offsets, int vlen, uint8_t *dst, ptrdiff_t pos, ptrdiff_t cap,
                             ptrdiff_t *out_len, ptrdiff_t *done, int shape)
{
    const ptrdiff_t need = 4 * width + (vlen ? 4 : 0) + FU32_UTF8_SLACK;
    uint8_t *const end = dst + cap;
    const __m256i mask0 = fu32_utf8_first_lanes_avx2(width);
    const __m256i mask1 = fu32_utf8_first_lanes_avx2(width - 8);
    __m256i vcheck = _mm256_setzero_si256();
    fu32_utf8_enc_k k;
    uint8_t *d = dst + pos;
    ptrdiff_t i, j, stop;
    fu32_utf8_enc_consts_avx2(&k);
    if (vlen) {
        fu32_utf8_store_le32(d, (uint32_t)n);
        d += 4;
    }
    if (offsets) {
        offsets[0] = (int64_t)(d - dst);
    }
    /* the next (end - d) / need elements fit whatever they hold: the room is
     * checked once for all of them, not once per element */
    for (i = 0; i < n && (stop = i + (end - d) / need) > i;) {
        if (stop > n) {
            stop = n;
        }
        for (; i < stop; i++) {
            const uint8_t *e = src + 4 * width * i;
            uint8_t *lenp = d;
            uint8_t *start, *content_end;
            if (vlen) {
                d += 4;
            }
            start = content_end = d;
            if (shape == FU32_W_ONE16) {
                __m256i v0, v1;
                if (width == 16) {
                    v0 = _mm256_loadu_si256((const __m256i *)e);
                    v1 = _mm256_loadu_si256((const __m256i *)(e + 32));
                } else {
                    v0 = _mm256_maskload_epi32((const int *)(const void *)e, mask0);
                    v1 = _mm256_maskload_epi32((const int *)(const void *)(e + 32), mask1);
                }
                if (swap) {
                    v0 = fu32_utf8_bswap32_avx2(v0);
                    v1 = fu32_utf8_bswap32_avx2(v1);
                }
                /* lanes past width are zeros: padding, dropped with the rest */
                d = fu32_utf8_put16_avx2(d, v0, v1, &content_end, &vcheck, &k, 1);
            } else {
                for (j = 0; j + 16 <= width; j += 16) {
                    __m256i v0 = _mm256_loadu_si256((const __m256i *)(e + 4 * j));
                    __m256i v1 = _mm256_loadu_si256((const __m256i *)(e + 4 * j + 32));
                    if (swap) {
                        v0 = fu32_utf8_bswap32_avx2(v0);
                        v1 = fu32_utf8_bswap32_avx2(v1);
                    }
                    d = fu32_utf8_put16_avx2(d, v0, v1, &content_end, &vcheck, &k, 0);
                }
                for (; shape != FU32_W_WHOLE16 && j < width; j += 8) {
                    __m256i v;
                    if (j + 8 <= width) {
                        v = _mm256_loadu_si256((const __m256i *)(e + 4 * j));
                    } else {
                        v = _mm256_maskload_epi32((const int *)(const void *)(e + 4 * j),
                                                  fu32_utf8_first_lanes_avx2(width - j));
                    }
                    if (swap) {
                        v = fu32_utf8_bswap32_avx2(v);
                    }
                    vcheck = _mm256_max_epu32(vcheck, fu32_utf8_check_key_avx2(v, &k));
                    d = fu32_utf8_put8_track_avx2(d, v, &content_end, &k);
                }
            }
            d = content_end;
            if (vlen) {
                fu32_utf8_store_le32(lenp, (uint32_t)(d - start));
            }
            if (offsets) {
                offsets[i + 1] = (int64_t)(d - dst);
            }
        }
    }
    *out_len = d - dst;
    *done = i;
    if (validate) {
        const __m256i limit = _mm256_set1_epi32(FU32_UTF8_CHECK_KEY_MAX);
        const __m256i ok = _mm256_cmpeq_epi32(_mm256_max_epu32(vcheck, limit), limit);
        if (!_mm256_testc_si256(ok, _mm256_set1_epi32(-1))) {
            /* rare: find the first bad code unit with the scalar path (it stops
             * at the same element: both write the same bytes) */
            return fu32_utf32_to_utf8_scalar(src, n, width, swap, 1, offsets, vlen, dst, pos, cap, out_len,
                                             done);
        }
    }
    return fu32_utf8_ok();
}

/* Dispatch to a loop compiled for one (swap, layout, element shape), so that
 * none of them is tested per element; width 16 (64-byte elements) gets its own,
 * with the width a constant. */
#define FU32_UTF8_ENCODE_SHAPES(SWAP, OFFSETS, VLEN)                                                          \
    (width == 16 ? fu32_utf32_to_utf8_avx2_body(src, n, 16, SWAP, validate, OFFSETS, VLEN, dst, pos, cap,    \
                                                out_len, done, FU32_W_ONE16)                                   \
     : width < 16 ? fu32_utf32_to_utf8_avx2_body(src, n, width, SWAP, validate, OFFSETS, VLEN, dst, pos, cap, \
                                                 out_len, done, FU32_W_ONE16)                                  \
     : width % 16 == 0 ? fu32_utf32_to_utf8_avx2_body(src, n, width, SWAP, validate, OFFSETS, VLEN, dst,     \
                                                      pos, cap, out_len, done, FU32_W_WHOLE16)                 \
                       : fu32_utf32_to_utf8_avx2_body(src, n, width, SWAP, validate, OFFSETS, VLEN, dst,     \
                                                      pos, cap, out_len, done, FU32_W_ANY))

FU32_UTF8_AVX2_FN static fu32_utf8_result fu32_utf32_to_utf8_avx2(const uint8_t *src, ptrdiff_t n,
                                                                   ptrdiff_t width, int swap, int validate,
                                                                   int64_t *offsets, int vlen, uint8_t *dst,
                                                                   ptrdiff_t pos, ptrdiff_t cap, ptrdiff_t *out_len,
                                                                   ptrdiff_t *done)
{
    if (vlen) {
        return swap ? FU32_UTF8_ENCODE_SHAPES(1, NULL, 1) : FU32_UTF8_ENCODE_SHAPES(0, NULL, 1);
    }
    if (offsets) {
        return swap ? FU32_UTF8_ENCODE_SHAPES(1, offsets, 0) : FU32_UTF8_ENCODE_SHAPES(0, offsets, 0);
    }
    return fu32_utf32_to_utf8_avx2_body(src, n, width, swap, validate, NULL, 0, dst, pos, cap, out_len, done,
                                        FU32_W_ANY);
}

#undef FU32_UTF8_ENCODE_SHAPES

#endif /* FU32_UTF8_HAVE_AVX2 */

static fu32_utf8_result fu32_utf32_to_utf8(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int swap,
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

/* Copies element i (values[offsets[i]:offsets[i+1]]) to dst + i * stride, zero-padded
 * to stride bytes; the caller checks that every element fits. */
static void fu32_utf8_scatter_fixed(const int64_t *offsets, ptrdiff_t n, const uint8_t *values,
                                    uint8_t *dst, ptrdiff_t stride)
{
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        ptrdiff_t len = (ptrdiff_t)(offsets[i + 1] - offsets[i]);
        memcpy(dst + stride * i, values + offsets[i], (size_t)len);
        memset(dst + stride * i + len, 0, (size_t)(stride - len));
    }
}

/* ======================================================================== */
/* UTF-8 -> UTF-32                                                           */
/* ======================================================================== */

/*
 * Strictly decodes s[pos:len] (one element's UTF-8 bytes), continuing at code point
 * index *o.  Code points at index < width are stored at dst (if not NULL) in the
 * chunk's byte order; *nz becomes the index + 1 of the last non-zero code point.
 * Returns FU32_UTF8_OK or an error kind with *errpos the byte offset of the
 * ill-formed sequence's first byte.  A lead byte's continuation bytes are checked
 * first (TOO_SHORT), then the value (OVERLONG, TOO_LARGE, SURROGATE).
 */
static inline int fu32_utf8_decode_scalar(const uint8_t *s, ptrdiff_t pos, ptrdiff_t len, uint8_t *dst,
                                          ptrdiff_t width, int swap, ptrdiff_t *o_io, ptrdiff_t *nz_io,
                                          ptrdiff_t *errpos)
{
    static const uint32_t min_value[5] = {0, 0, 0x80u, 0x800u, 0x10000u};
    ptrdiff_t o = *o_io;
    ptrdiff_t nz = *nz_io;
    while (pos < len) {
        uint32_t b0 = s[pos];
        uint32_t c;
        ptrdiff_t L, t;
        if (b0 < 0x80u) {
            c = b0;
            L = 1;
        } else {
            if (b0 < 0xC0u) {
                *errpos = pos;
                return FU32_UTF8_TOO_LONG;
            } else if (b0 < 0xE0u) {
                L = 2;
                c = b0 & 0x1Fu;
            } else if (b0 < 0xF0u) {
                L = 3;
                c = b0 & 0x0Fu;
            } else if (b0 < 0xF8u) {
                L = 4;
                c = b0 & 0x07u;
            } else {
                *errpos = pos;
                return FU32_UTF8_HEADER_BITS;
            }
            for (t = 1; t < L; t++) {
                uint32_t bt;
                if (pos + t >= len || ((bt = s[pos + t]) & 0xC0u) != 0x80u) {
                    *errpos = pos;
                    return FU32_UTF8_TOO_SHORT;
                }
                c = (c << 6) | (bt & 0x3Fu);
            }
            if (c < min_value[L]) {
                *errpos = pos;
                return FU32_UTF8_OVERLONG;
            }
            if (c > 0x10FFFFu) {
                *errpos = pos;
                return FU32_UTF8_TOO_LARGE;
            }
            if ((c & 0xFFFFF800u) == 0xD800u) {
                *errpos = pos;
                return FU32_UTF8_SURROGATE;
            }
        }
        if (dst && o < width) {
            fu32_utf8_store32(dst + 4 * o, c, swap);
        }
        if (c != 0) {
            nz = o + 1;
        }
        o++;
        pos += L;
    }
    *o_io = o;
    *nz_io = nz;
    return FU32_UTF8_OK;
}

/* Finishes an element: capacity check, then zero padding. */
static inline int fu32_utf8_finish(uint8_t *dst, ptrdiff_t width, ptrdiff_t o, ptrdiff_t nz)
{
    if (nz > width) {
        return FU32_UTF8_CAPACITY;
    }
    if (dst && o < width) {
        memset(dst + 4 * o, 0, (size_t)(4 * (width - o)));
    }
    return FU32_UTF8_OK;
}

static inline int fu32_utf8_elem_scalar(const uint8_t *s, ptrdiff_t len, uint8_t *dst, ptrdiff_t width,
                                        int swap, ptrdiff_t *errpos, ptrdiff_t *count)
{
    ptrdiff_t o = 0, nz = 0;
    int kind = fu32_utf8_decode_scalar(s, 0, len, dst, width, swap, &o, &nz, errpos);
    if (kind != FU32_UTF8_OK) {
        return kind;
    }
    *count = nz;
    return fu32_utf8_finish(dst, width, o, nz);
}

#if FU32_UTF8_HAVE_AVX2

/* The constants of the UTF-8 -> UTF-32 loops, read through a pointer the compiler
 * cannot see through (fu32_utf8_dec_k), so that it loads them where they are used
 * instead of rebuilding each one (mov, vmovq, vpbroadcast) in every iteration. */
typedef struct {
    uint8_t high1[16];
    uint8_t low1[16];
    uint8_t high2[16];
    uint8_t b0f[16];
    uint8_t b60[16];
    uint8_t b70[16];
    uint8_t b80[16];
    uint8_t bf4[16];
    uint8_t bef[16];
    uint8_t bff[16];
    uint8_t bc0[16];
    uint8_t limit[16];
    uint8_t windows[32];
    uint8_t shift[32];
    uint8_t lmask[32];
    uint8_t d0f[32];
    uint8_t d80808000[32];
    uint8_t d3f00[32];
    uint8_t d3f0000[32];
    uint8_t d3f[32];
    uint8_t pair[32];
    uint8_t third[32];
    uint8_t w3f[32];
    uint8_t wff[32];
    uint8_t wbf[32];
    uint8_t wdf[32];
    uint8_t w1f[32];
} fu32_utf8_dec_consts;
static const fu32_utf8_dec_consts fu32_utf8_dec_tab = {
    {0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x02,0x80,0x80,0x80,0x80,0x21,0x01,0x15,0x49},
    {0xe7,0xa3,0x83,0x83,0x8b,0x83,0x83,0x83,0x83,0x83,0x83,0x83,0x83,0x93,0x83,0x83},
    {0x21,0x21,0x21,0x21,0x21,0x21,0x21,0x21,0xe6,0xae,0xba,0xba,0x21,0x21,0x21,0x21},
    {0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f,0x0f},
    {0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60,0x60},
    {0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70,0x70},
    {0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80},
    {0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4,0xf4},
    {0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef,0xef},
    {0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff},
    {0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0,0xc0},
    {0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xff,0xef,0xdf,0xbf},
    {0x00,0x01,0x02,0x03,0x01,0x02,0x03,0x04,0x02,0x03,0x04,0x05,0x03,0x04,0x05,0x06,0x04,0x05,0x06,0x07,0x05,0x06,0x07,0x08,0x06,0x07,0x08,0x09,0x07,0x08,0x09,0x0a},
    {0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x0c,0x0c,0x06,0x00,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x12,0x0c,0x0c,0x06,0x00},
    {0x7f,0x7f,0x7f,0x7f,0x7f,0x7f,0x7f,0x7f,0x00,0x00,0x00,0x00,0x1f,0x1f,0x0f,0x07,0x7f,0x7f,0x7f,0x7f,0x7f,0x7f,0x7f,0x7f,0x00,0x00,0x00,0x00,0x1f,0x1f,0x0f,0x07},
    {0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00,0x0f,0x00,0x00,0x00},
    {0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80,0x00,0x80,0x80,0x80},
    {0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00},
    {0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00},
    {0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00,0x3f,0x00,0x00,0x00},
    {0x00,0x01,0x01,0x02,0x02,0x03,0x03,0x04,0x04,0x05,0x05,0x06,0x06,0x07,0x07,0x08,0x00,0x01,0x01,0x02,0x02,0x03,0x03,0x04,0x04,0x05,0x05,0x06,0x06,0x07,0x07,0x08},
    {0x02,0xff,0x03,0xff,0x04,0xff,0x05,0xff,0x06,0xff,0x07,0xff,0x08,0xff,0x09,0xff,0x02,0xff,0x03,0xff,0x04,0xff,0x05,0xff,0x06,0xff,0x07,0xff,0x08,0xff,0x09,0xff},
    {0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00,0x3f,0x00},
    {0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00,0xff,0x00},
    {0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00,0xbf,0x00},
    {0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00,0xdf,0x00},
    {0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00,0x1f,0x00},
};

static inline const fu32_utf8_dec_consts *fu32_utf8_dec_k(void)
{
    const fu32_utf8_dec_consts *k = &fu32_utf8_dec_tab;
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(k));
#endif
    return k;
}
#define FU32_K128(name) _mm_loadu_si128((const __m128i *)fu32_utf8_dec_k()->name)
#define FU32_K256(name) _mm256_loadu_si256((const __m256i *)fu32_utf8_dec_k()->name)

/* 16 bytes of 0xFF then 16 of 0x00: loadu(fu32_utf8_prefix + 16 - r) keeps r bytes. */
static const uint8_t fu32_utf8_prefix[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

/* Stores lo (and hi, with two) at d; when fewer than 8 (16) code units are left
 * before the element's end (`room`), only the first `count` lanes, masked. */
FU32_UTF8_AVX2_INLINE void fu32_utf8_store_lanes_avx2(uint8_t *d, __m256i lo, __m256i hi, int two,
                                                                ptrdiff_t count, ptrdiff_t room)
{
    if (room >= (two ? 16 : 8)) {
        _mm256_storeu_si256((__m256i *)d, lo);
        if (two) {
            _mm256_storeu_si256((__m256i *)(d + 32), hi);
        }
    } else {
        _mm256_maskstore_epi32((int *)(void *)d, fu32_utf8_first_lanes_avx2(count), lo);
        if (two && count > 8) {
            _mm256_maskstore_epi32((int *)(void *)(d + 32), fu32_utf8_first_lanes_avx2(count - 8), hi);
        }
    }
}

/* Zeros code units from..width-1 of an element at d. */
FU32_UTF8_AVX2_INLINE void fu32_utf8_zero_fill_avx2(uint8_t *d, ptrdiff_t from, ptrdiff_t width)
{
    const __m256i zero = _mm256_setzero_si256();
    for (; from + 8 <= width; from += 8) {
        _mm256_storeu_si256((__m256i *)(d + 4 * from), zero);
    }
    if (from < width) {
        _mm256_maskstore_epi32((int *)(void *)(d + 4 * from), fu32_utf8_first_lanes_avx2(width - from), zero);
    }
}

/*
 * UTF-8 validation by byte pairs, 16 bytes at a time: each error class is a
 * condition on (high nibble of the previous byte, its low nibble, high nibble of
 * this byte); three 16-entry lookups give, per byte, the classes each nibble
 * allows, and their AND is non-zero where a class applies.  Bits:
 *   0 lead byte not followed by a continuation byte    (Cx..Fx, any, 0x..7x|Cx..Fx)
 *   1 continuation byte after an ASCII byte            (0x..7x, any, 8x..Bx)
 *   2 E0 followed by 80..9F (overlong 3-byte)
 *   3 F4 followed by 90..BF (above U+10FFFF)
 *   4 ED followed by A0..BF (surrogate)
 *   5 C0 or C1 (overlong 2-byte)
 *   6 F0 followed by 80..8F (overlong 4-byte)
 *   7 continuation byte after a continuation byte: an error unless it is the 3rd
 *     or 4th byte of a sequence, which is known from the bytes 2 and 3 back.
 * Bytes F5..FF are checked apart.  This finds whether a block has an error, not
 * where: the scalar decoder is run on the element to report it.
 */
FU32_UTF8_AVX2_INLINE __m128i fu32_utf8_check16_avx2(__m128i x, __m128i prev)
{
    const __m128i high1 = FU32_K128(high1);
    const __m128i low1 = FU32_K128(low1);
    const __m128i high2 = FU32_K128(high2);
    const __m128i k0f = FU32_K128(b0f);
    const __m128i prev1 = _mm_alignr_epi8(x, prev, 15);
    const __m128i prev2 = _mm_alignr_epi8(x, prev, 14);
    const __m128i prev3 = _mm_alignr_epi8(x, prev, 13);
    __m128i sc = _mm_shuffle_epi8(high1, _mm_and_si128(_mm_srli_epi16(prev1, 4), k0f));
    sc = _mm_and_si128(sc, _mm_shuffle_epi8(low1, _mm_and_si128(prev1, k0f)));
    sc = _mm_and_si128(sc, _mm_shuffle_epi8(high2, _mm_and_si128(_mm_srli_epi16(x, 4), k0f)));
    {
        /* high bit set where this byte must be a 3rd or 4th byte */
        const __m128i must = _mm_or_si128(_mm_subs_epu8(prev2, FU32_K128(b60)), _mm_subs_epu8(prev3, FU32_K128(b70)));
        sc = _mm_xor_si128(sc, _mm_and_si128(must, FU32_K128(b80)));
    }
    return _mm_or_si128(sc, _mm_subs_epu8(x, FU32_K128(bf4)));
}

/* Non-zero if the block ends inside a sequence (a lead byte in its last 3 bytes
 * that needs more bytes than are left). */
FU32_UTF8_AVX2_INLINE __m128i fu32_utf8_incomplete16_avx2(__m128i x)
{
    return _mm_subs_epu8(x, FU32_K128(limit));
}

/*
 * Decodes the code points starting at byte positions 0..7 of z (already
 * validated): each position is read as a lead byte with the 3 bytes after it, the
 * payload bits of all four are put side by side as for a 4-byte sequence, and a
 * shift by the lead byte's class drops the bytes the sequence does not have.
 */
FU32_UTF8_AVX2_INLINE __m256i fu32_utf8_decode8_avx2(__m128i z)
{
    const __m256i windows = FU32_K256(windows);
    /* by high nibble of the lead byte: right shift, and lead payload mask */
    const __m256i shift = FU32_K256(shift);
    const __m256i lmask = FU32_K256(lmask);
    const __m256i w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(z), windows);
    /* lead >> 4 in byte 0 of each lane, 0x80 (looks up 0) in bytes 1..3 */
    const __m256i nib = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w, 4), FU32_K256(d0f)),
                                        FU32_K256(d80808000));
    const __m256i lead = _mm256_and_si256(w, _mm256_shuffle_epi8(lmask, nib));
    __m256i t = _mm256_or_si256(_mm256_slli_epi32(lead, 18),
                                _mm256_slli_epi32(_mm256_and_si256(w, FU32_K256(d3f00)), 4));
    t = _mm256_or_si256(t, _mm256_srli_epi32(_mm256_and_si256(w, FU32_K256(d3f0000)), 10));
    t = _mm256_or_si256(t, _mm256_and_si256(_mm256_srli_epi32(w, 24), FU32_K256(d3f)));
    return _mm256_srlv_epi32(t, _mm256_shuffle_epi8(shift, nib));
}

/* Loads up to 16 bytes at s + p as 16, the ones past len read as zero. */
FU32_UTF8_AVX2_INLINE __m128i fu32_utf8_load16_avx2(const uint8_t *s, ptrdiff_t p, ptrdiff_t len,
                                                               ptrdiff_t avail)
{
    const ptrdiff_t r = len - p;
    __m128i x;
    if (r <= 0) {
        return _mm_setzero_si128();
    }
    if (avail - p >= 16) {
        x = _mm_loadu_si128((const __m128i *)(s + p));
    } else {
        uint8_t tmp[16] = {0};
        memcpy(tmp, s + p, (size_t)(r < 16 ? r : 16));
        x = _mm_loadu_si128((const __m128i *)tmp);
    }
    if (r < 16) {
        x = _mm_and_si128(x, _mm_loadu_si128((const __m128i *)(fu32_utf8_prefix + 16 - r)));
    }
    return x;
}

/*
 * The code points starting at byte positions 0..15 of a validated block with no
 * 4-byte sequence, in 16-bit lanes: lanes 0..7 read x (bytes p..p+15), lanes
 * 8..15 read y (bytes p+8..p+23).  Returns them compressed by S (lanes of S's low
 * byte first, then of its high byte, each half at the front of its 128 bits).
 */
FU32_UTF8_AVX2_INLINE __m256i fu32_utf8_decode16_bmp_avx2(__m128i x, __m128i y, unsigned S)
{
    const __m256i pair = FU32_K256(pair);
    const __m256i third = FU32_K256(third);
    const __m256i k3f = FU32_K256(w3f);
    const __m256i xy = _mm256_inserti128_si256(_mm256_castsi128_si256(x), y, 1);
    const __m256i w = _mm256_shuffle_epi8(xy, pair);
    const __m256i lead = _mm256_and_si256(w, FU32_K256(wff));
    const __m256i c1 = _mm256_and_si256(_mm256_srli_epi16(w, 8), k3f);
    const __m256i c2 = _mm256_and_si256(_mm256_shuffle_epi8(xy, third), k3f);
    const __m256i m2 = _mm256_cmpgt_epi16(lead, FU32_K256(wbf));
    const __m256i m3 = _mm256_cmpgt_epi16(lead, FU32_K256(wdf));
    /* 2 bytes: 5 + 6 bits; 3 bytes: 4 + 6 + 6 bits (lead << 12 keeps its low nibble) */
    __m256i v = _mm256_blendv_epi8(
        lead, _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(lead, FU32_K256(w1f)), 6), c1), m2);
    v = _mm256_blendv_epi8(
        v, _mm256_or_si256(_mm256_slli_epi16(lead, 12), _mm256_or_si256(_mm256_slli_epi16(c1, 6), c2)), m3);
    return _mm256_shuffle_epi8(
        v, _mm256_inserti128_si256(
               _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)fu32_utf8_compress16x8[S & 0xFFu])),
               _mm_loadu_si128((const __m128i *)fu32_utf8_compress16x8[S >> 8]), 1));
}

FU32_UTF8_AVX2_INLINE void fu32_utf8_put_compressed_avx2(uint8_t *d, __m256i v, unsigned S, int swap,
                                                                   ptrdiff_t cnt, ptrdiff_t room)
{
    const __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)fu32_utf8_compress8[S]));
    v = _mm256_permutevar8x32_epi32(v, idx);
    if (swap) {
        v = fu32_utf8_bswap32_avx2(v);
    }
    fu32_utf8_store_lanes_avx2(d, v, v, 0, cnt, room);
}

/* The code points starting at byte positions 0..7 and 8..15 of a validated block
 * x (y: the bytes from position 8), each group compressed to the front of an
 * 8-lane vector and followed by zeros, in native order. */
FU32_UTF8_AVX2_INLINE void fu32_utf8_groups_avx2(__m128i x, __m128i y, unsigned S, __m256i *g0, __m256i *g1)
{
    if (_mm_testz_si128(_mm_subs_epu8(x, FU32_K128(bef)), FU32_K128(bff))) {
        const __m256i v = fu32_utf8_decode16_bmp_avx2(x, y, S);
        *g0 = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
        *g1 = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
    } else {
        const unsigned S0 = S & 0xFFu, S1 = S >> 8;
        const __m256i i0 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)fu32_utf8_compress8[S0]));
        const __m256i i1 = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)fu32_utf8_compress8[S1]));
        *g0 = _mm256_and_si256(_mm256_permutevar8x32_epi32(fu32_utf8_decode8_avx2(x), i0),
                               fu32_utf8_first_lanes_avx2(_mm_popcnt_u32(S0)));
        *g1 = _mm256_and_si256(_mm256_permutevar8x32_epi32(fu32_utf8_decode8_avx2(y), i1),
                               fu32_utf8_first_lanes_avx2(_mm_popcnt_u32(S1)));
    }
}

/* Stores a group (its code points, then zeros) at code unit o of an element of
 * width code units; lanes past width are not written. */
FU32_UTF8_AVX2_INLINE void fu32_utf8_put_group_avx2(uint8_t *dst, ptrdiff_t o, ptrdiff_t width, __m256i g,
                                                    int swap)
{
    if (swap) {
        g = fu32_utf8_bswap32_avx2(g);
    }
    if (o + 8 <= width) {
        _mm256_storeu_si256((__m256i *)(dst + 4 * o), g);
    } else if (o < width) {
        _mm256_maskstore_epi32((int *)(void *)(dst + 4 * o), fu32_utf8_first_lanes_avx2(width - o), g);
    }
}

/*
 * One element with AVX2, 16 bytes at a time, bytes past the element's end read
 * as 0x00 (from a short copy near the end of values).  Each block is validated
 * (fu32_utf8_check16_avx2); all ASCII -> widened; otherwise the code points that
 * start in it are decoded 8 positions at a time and compressed into place.  Any
 * error, or more code points than width, sends the element to the scalar decoder,
 * which reports exactly as the scalar path does.  `avail` is how many bytes may
 * be read from s (at least len).
 */
FU32_UTF8_AVX2_FN static inline int fu32_utf8_elem_avx2(const uint8_t *s, ptrdiff_t len, ptrdiff_t avail,
                                                        uint8_t *dst, ptrdiff_t width, int swap,
                                                        ptrdiff_t *errpos, ptrdiff_t *count)
{
    __m128i err = _mm_setzero_si128();
    __m128i prev = _mm_setzero_si128();
    ptrdiff_t p = 0, o = 0, clean = 0;
    if (len <= 16 && width >= 16 && avail >= 16) {
        /* the common short element: one block; if it is ASCII, done here */
        __m128i x = _mm_loadu_si128((const __m128i *)s);
        x = _mm_and_si128(x, _mm_loadu_si128((const __m128i *)(fu32_utf8_prefix + 16 - len)));
        if (_mm_movemask_epi8(x) == 0) {
            if (dst) {
                __m256i lo = _mm256_cvtepu8_epi32(x);
                __m256i hi = _mm256_cvtepu8_epi32(_mm_srli_si128(x, 8));
                if (swap) {
                    lo = fu32_utf8_bswap32_avx2(lo);
                    hi = fu32_utf8_bswap32_avx2(hi);
                }
                _mm256_storeu_si256((__m256i *)dst, lo);
                _mm256_storeu_si256((__m256i *)(dst + 32), hi);
                if (width > 16) {
                    fu32_utf8_zero_fill_avx2(dst, 16, width);
                }
            }
            *count = len;
            return FU32_UTF8_OK;
        }
        if (_mm_testz_si128(_mm_subs_epu8(x, FU32_K128(bef)), FU32_K128(bff))) {
            /* one block, no 4-byte sequence: validate, decode in 16-bit lanes, done */
            const __m128i bad = _mm_or_si128(fu32_utf8_check16_avx2(x, _mm_setzero_si128()),
                                             fu32_utf8_incomplete16_avx2(x));
            const unsigned real = (1u << len) - 1u;
            const unsigned S = ~(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(FU32_K128(bc0), x)) & real;
            const ptrdiff_t c1 = _mm_popcnt_u32(S & 0xFFu);
            if (!_mm_testz_si128(bad, bad)) {
                goto scalar;
            }
            if (dst) {
                /* the compressed lanes are followed by zeros: store the upper half's
                 * zeros, then lanes 0.., then the second group from lane c1 */
                const __m256i v = fu32_utf8_decode16_bmp_avx2(x, _mm_srli_si128(x, 8), S);
                __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
                __m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
                if (swap) {
                    lo = fu32_utf8_bswap32_avx2(lo);
                    hi = fu32_utf8_bswap32_avx2(hi);
                }
                _mm256_storeu_si256((__m256i *)(dst + 32), _mm256_setzero_si256());
                _mm256_storeu_si256((__m256i *)dst, lo);
                _mm256_storeu_si256((__m256i *)(dst + 4 * c1), hi);
                if (width > 16) {
                    fu32_utf8_zero_fill_avx2(dst, 16, width);
                }
            }
            *count = _mm_popcnt_u32(S);
            return FU32_UTF8_OK;
        }
    }
    if (len > 16 && len <= 32 && avail >= 32) {
        /* two blocks, in straight-line code */
        const __m128i x0 = _mm_loadu_si128((const __m128i *)s);
        const __m128i x1 = _mm_and_si128(_mm_loadu_si128((const __m128i *)(s + 16)),
                                         _mm_loadu_si128((const __m128i *)(fu32_utf8_prefix + 32 - len)));
        const __m128i bad = _mm_or_si128(
            _mm_or_si128(fu32_utf8_check16_avx2(x0, _mm_setzero_si128()), fu32_utf8_check16_avx2(x1, x0)),
            fu32_utf8_incomplete16_avx2(x1));
        const __m128i kcont = FU32_K128(bc0);
        const unsigned S0 = ~(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(kcont, x0)) & 0xFFFFu;
        const unsigned S1 = ~(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(kcont, x1)) & ((1u << (len - 16)) - 1u);
        const ptrdiff_t o1 = _mm_popcnt_u32(S0 & 0xFFu);
        const ptrdiff_t o2 = o1 + _mm_popcnt_u32(S0 >> 8);
        const ptrdiff_t o3 = o2 + _mm_popcnt_u32(S1 & 0xFFu);
        const ptrdiff_t total = o3 + _mm_popcnt_u32(S1 >> 8);
        if (!_mm_testz_si128(bad, bad) || total > width) {
            goto scalar;
        }
        if (dst) {
            __m256i g0, g1, g2, g3;
            fu32_utf8_groups_avx2(x0, _mm_alignr_epi8(x1, x0, 8), S0, &g0, &g1);
            fu32_utf8_groups_avx2(x1, _mm_srli_si128(x1, 8), S1, &g2, &g3);
            /* in this order, each group's zeros are overwritten by the next group */
            fu32_utf8_put_group_avx2(dst, 0, width, g0, swap);
            fu32_utf8_put_group_avx2(dst, o1, width, g1, swap);
            fu32_utf8_put_group_avx2(dst, o2, width, g2, swap);
            fu32_utf8_put_group_avx2(dst, o3, width, g3, swap);
            if (o3 + 8 < width) {
                fu32_utf8_zero_fill_avx2(dst, o3 + 8, width);
            }
        }
        *count = total;
        return FU32_UTF8_OK;
    }
    while (p < len) {
        const ptrdiff_t r = len - p < 16 ? len - p : 16;
        const __m128i x = fu32_utf8_load16_avx2(s, p, len, avail);
        if (_mm_movemask_epi8(x) == 0) {
            __m256i lo, hi;
            err = _mm_or_si128(err, fu32_utf8_incomplete16_avx2(prev));
            prev = x;
            if (o + r > width) {
                goto scalar;
            }
            if (dst) {
                lo = _mm256_cvtepu8_epi32(x);
                hi = _mm256_cvtepu8_epi32(_mm_srli_si128(x, 8));
                if (swap) {
                    lo = fu32_utf8_bswap32_avx2(lo);
                    hi = fu32_utf8_bswap32_avx2(hi);
                }
                fu32_utf8_store_lanes_avx2(dst + 4 * o, lo, hi, 1, r, width - o);
            }
            /* lanes r..15 were zeros: no padding to write below o + 16 */
            clean = width - o >= 16 ? o + 16 : o + r;
            o += r;
            p += 16;
            continue;
        }
        err = _mm_or_si128(err, fu32_utf8_check16_avx2(x, prev));
        prev = x;
        {
            const unsigned real = r == 16 ? 0xFFFFu : ((1u << r) - 1u);
            const unsigned S = ~(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(FU32_K128(bc0), x)) & real;
            const unsigned S1 = S & 0xFFu, S2 = S >> 8;
            const ptrdiff_t c1 = _mm_popcnt_u32(S1), c2 = _mm_popcnt_u32(S2);
            if (o + c1 + c2 > width) {
                goto scalar;
            }
            if (dst && _mm_testz_si128(_mm_subs_epu8(x, FU32_K128(bef)), FU32_K128(bff))) {
                /* no 4-byte sequence starts here: 16 positions at once in 16-bit lanes */
                const __m128i y = fu32_utf8_load16_avx2(s, p + 8, len, avail);
                const __m256i v = fu32_utf8_decode16_bmp_avx2(x, y, S);
                __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
                __m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
                if (swap) {
                    lo = fu32_utf8_bswap32_avx2(lo);
                    hi = fu32_utf8_bswap32_avx2(hi);
                }
                fu32_utf8_store_lanes_avx2(dst + 4 * o, lo, lo, 0, c1, width - o);
                fu32_utf8_store_lanes_avx2(dst + 4 * (o + c1), hi, hi, 0, c2, width - o - c1);
            } else if (dst) {
                fu32_utf8_put_compressed_avx2(dst + 4 * o, fu32_utf8_decode8_avx2(x), S1, swap, c1, width - o);
                if (S2) {
                    const __m128i y = fu32_utf8_load16_avx2(s, p + 8, len, avail);
                    fu32_utf8_put_compressed_avx2(dst + 4 * (o + c1), fu32_utf8_decode8_avx2(y), S2, swap, c2,
                                                  width - o - c1);
                }
            }
            o += c1 + c2;
            clean = o;
            p += 16;
        }
    }
    err = _mm_or_si128(err, fu32_utf8_incomplete16_avx2(prev));
    if (!_mm_testz_si128(err, err)) {
        goto scalar;
    }
    *count = o;
    if (dst && clean < width) {
        if (clean < o) {
            clean = o;
        }
        fu32_utf8_zero_fill_avx2(dst, clean, width);
    }
    return FU32_UTF8_OK;
scalar:
    return fu32_utf8_elem_scalar(s, len, dst, width, swap, errpos, count);
}

FU32_UTF8_AVX2_FN static fu32_utf8_result fu32_utf8_to_utf32_avx2(const int64_t *starts, const int64_t *ends,
                                                                   ptrdiff_t stride, ptrdiff_t n,
                                                                   const uint8_t *values, ptrdiff_t values_len,
                                                                   ptrdiff_t width, int swap, uint8_t *dst)
{
    fu32_utf8_result r = fu32_utf8_ok();
    ptrdiff_t i;
    for (i = 0; i < n; i++) {
        const int64_t a = starts[i * stride];
        const int64_t b = ends[i * stride];
        ptrdiff_t errpos = 0, count = 0;
        int kind;
        if (a < 0 || b < a || b > (int64_t)values_len) {
            return fu32_utf8_error(FU32_UTF8_BAD_OFFSETS, i, 0, b);
        }
        kind = fu32_utf8_elem_avx2(values + a, (ptrdiff_t)(b - a), (ptrdiff_t)(values_len - a),
                                   dst ? dst + 4 * width * i : NULL, width, swap, &errpos, &count);
        if (kind != FU32_UTF8_OK) return fu32_utf8_element_error(kind, i, errpos, count);
    }
    return r;
}

#endif /* FU32_UTF8_HAVE_AVX2 */

/*
 * Decodes n elements: element i is values[starts[i * stride]:ends[i * stride]].
 * (For an offsets array, starts = offsets, ends = offsets + 1, stride = 1.)
 * Writes n * width code units at dst in the chosen byte order, zero-padded; with
 * dst NULL only checks.  On error dst's contents are unspecified.
 */
static fu32_utf8_result fu32_utf8_to_utf32(const int64_t *starts, const int64_t *ends, ptrdiff_t stride,
                                           ptrdiff_t n, const uint8_t *values, ptrdiff_t values_len,
                                           ptrdiff_t width, int swap, uint8_t *dst, int level)
{
    fu32_utf8_result r = fu32_utf8_ok();
    ptrdiff_t i;
#if FU32_UTF8_HAVE_AVX2
    if (level == FU32_LEVEL_AVX2) {
        return fu32_utf8_to_utf32_avx2(starts, ends, stride, n, values, values_len, width, swap, dst);
    }
#endif
    (void)level;
    for (i = 0; i < n; i++) {
        const int64_t a = starts[i * stride];
        const int64_t b = ends[i * stride];
        uint8_t *d = dst ? dst + 4 * width * i : NULL;
        ptrdiff_t errpos = 0, count = 0;
        int kind;
        if (a < 0 || b < a || b > (int64_t)values_len) {
            return fu32_utf8_error(FU32_UTF8_BAD_OFFSETS, i, 0, b);
        }
        kind = fu32_utf8_elem_scalar(values + a, (ptrdiff_t)(b - a), d, width, swap, &errpos, &count);
        if (kind != FU32_UTF8_OK) return fu32_utf8_element_error(kind, i, errpos, count);
    }
    return r;
}

/*
 * Reads a vlen-utf8 chunk's item table: n items after the 4-byte count, each a
 * uint32 LE byte length and the bytes.  pos receives 2 * n entries, (start, end)
 * of each item.  The chunk must end exactly after the last item.
 */
static fu32_utf8_result fu32_utf8_vlen_parse(const uint8_t *buf, ptrdiff_t size, ptrdiff_t n, int64_t *pos)
{
    fu32_utf8_result r = fu32_utf8_ok();
    ptrdiff_t p = 4, i;
    for (i = 0; i < n; i++) {
        uint32_t L;
        if (size - p < 4) {
            r.error = FU32_UTF8_BAD_VLEN;
            r.index = i;
            r.position = p;
            return r;
        }
        L = fu32_utf8_load_le32(buf + p);
        p += 4;
        if ((uint64_t)(size - p) < (uint64_t)L) {
            r.error = FU32_UTF8_BAD_VLEN;
            r.index = i;
            r.position = p;
            r.value = L;
            return r;
        }
        pos[2 * i] = p;
        pos[2 * i + 1] = p + (ptrdiff_t)L;
        p += (ptrdiff_t)L;
    }
    if (p != size) {
        r.error = FU32_UTF8_BAD_VLEN;
        r.index = n;
        r.position = p;
    }
    return r;
}

#endif /* FIXEDUTF32_UTF8_H */
