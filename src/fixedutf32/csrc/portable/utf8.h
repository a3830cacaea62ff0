/*
 * portable/utf8.h -- the portable level's UTF-8 kernels, one code point at a
 * time: always compiled, always correct, and the code that locates and
 * reports every error, whatever the level (a faster level that finds an
 * error hands the element or the chunk over to it).
 *
 * Kernels never raise: they return an fu32_status (common.h).  Byte order:
 * `swap` is 1 when the chunk's byte order differs from the machine's.
 */
#ifndef FIXEDUTF32_PORTABLE_UTF8_H
#define FIXEDUTF32_PORTABLE_UTF8_H

#include "../common.h"

/* The result for element i of a UTF-8 -> UTF-32 decode whose element
 * decoder returned `kind` (the capacity error has no byte position). */
static inline fu32_status fu32_utf8_element_error(int kind, ptrdiff_t i, ptrdiff_t errpos, ptrdiff_t count)
{
    return kind == FU32_STRING_TOO_LONG ? fu32_error(kind, i, 0, count) : fu32_error(kind, i, errpos, 0);
}

/* ======================================================================== */
/* UTF-32 -> UTF-8                                                           */
/* ======================================================================== */

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
 * The utf32_to_utf8 kernel (table.h): n elements of `width` UTF-32 code units
 * at `src` to UTF-8 at `dst`, without each element's trailing padding.
 *   offsets: if not NULL, n + 1 entries, offsets[i] the start of element i in dst.
 *   FU32_VLEN: writes the vlen-utf8 layout instead (uint32 LE count, then per
 *            element a uint32 LE byte length and the bytes); the caller checks that
 *            n and every length fit in 32 bits (they do when 4 * width < 2**32).
 *   dst, pos, cap: writing starts at dst + pos, and offsets count from dst; dst
 *            holds cap bytes.  An element is started only while 4 * width (+ 4
 *            with vlen) + FU32_UTF8_SLACK bytes are left, so a dst of pos + 4 * n *
 *            width (+ 4 + 4 * n with vlen) + FU32_UTF8_SLACK bytes takes them all;
 *            with less, the caller continues from element *done in more room.
 *   *out_len receives the end of the bytes written (from dst), *done the number
 *            of elements transcoded.
 * With FU32_VALIDATE, the first code unit that is not a Unicode scalar value is
 * reported (element order, among the elements transcoded) and dst's contents are
 * unspecified.  FU32_SRC_SWAPPED: the chunk is in the other byte order.
 */
static fu32_status fu32_portable_utf32_to_utf8(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int flags,
                                               int64_t *offsets, uint8_t *dst, ptrdiff_t pos, ptrdiff_t cap,
                                               ptrdiff_t *out_len, ptrdiff_t *done)
{
    const int swap = (flags & FU32_SRC_SWAPPED) != 0;
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int vlen = (flags & FU32_VLEN) != 0;
    fu32_status r = fu32_ok();
    const ptrdiff_t need = 4 * width + (vlen ? 4 : 0) + FU32_UTF8_SLACK;
    uint8_t *const end = dst + cap;
    uint8_t *d = dst + pos;
    ptrdiff_t i, j;
    if (vlen) {
        fu32_store_le32(d, (uint32_t)n);
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
        k = fu32_element_length(e, width);
        if (vlen) {
            d += 4;
        }
        start = d;
        for (j = 0; j < k; j++) {
            uint32_t c = fu32_load_native(e + 4 * j, swap);
            FU32_PIN(c); /* checked and encoded from this one load (common.h) */
            if (validate) {
                int kind = fu32_code_point_kind(c);
                if (kind != FU32_OK) {
                    r.kind = kind;
                    r.element = i;
                    r.position = j;
                    r.detail = c;
                    *out_len = d - dst;
                    *done = i;
                    return r;
                }
            }
            d = fu32_utf8_put(d, c);
        }
        if (vlen) {
            fu32_store_le32(lenp, (uint32_t)(d - start));
        }
        if (offsets) {
            offsets[i + 1] = (int64_t)(d - dst);
        }
    }
    *out_len = d - dst;
    *done = i;
    return r;
}

/* ======================================================================== */
/* UTF-8 -> UTF-32                                                           */
/* ======================================================================== */

/*
 * Strictly decodes s[pos:len] (one element's UTF-8 bytes), continuing at code point
 * index *o.  Code points at index < width are stored at dst (if not NULL) in the
 * chunk's byte order; *nz becomes the index + 1 of the last non-zero code point.
 * Returns FU32_OK or an error kind with *errpos the byte offset of the
 * ill-formed sequence's first byte.  A lead byte's continuation bytes are checked
 * first (TOO_SHORT), then the value (OVERLONG, TOO_LARGE, SURROGATE).
 */
static inline int fu32_portable_utf8_decode(const uint8_t *s, ptrdiff_t pos, ptrdiff_t len, uint8_t *dst,
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
        /* Each byte is read once and kept (common.h): what is stored is what
         * was checked, even if another thread changes the bytes meanwhile. */
        FU32_PIN(b0);
        if (b0 < 0x80u) {
            c = b0;
            L = 1;
        } else {
            if (b0 < 0xC0u) {
                *errpos = pos;
                return FU32_UTF8_STRAY_CONTINUATION;
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
                if (pos + t >= len) {
                    *errpos = pos;
                    return FU32_UTF8_TOO_SHORT;
                }
                bt = s[pos + t];
                FU32_PIN(bt);
                if ((bt & 0xC0u) != 0x80u) {
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
            fu32_store_native(dst + 4 * o, c, swap);
        }
        if (c != 0) {
            nz = o + 1;
        }
        o++;
        pos += L;
    }
    *o_io = o;
    *nz_io = nz;
    return FU32_OK;
}

/* Finishes an element: capacity check, then zero padding. */
static inline int fu32_utf8_finish(uint8_t *dst, ptrdiff_t width, ptrdiff_t o, ptrdiff_t nz)
{
    if (nz > width) {
        return FU32_STRING_TOO_LONG;
    }
    if (dst && o < width) {
        memset(dst + 4 * o, 0, (size_t)(4 * (width - o)));
    }
    return FU32_OK;
}

static inline int fu32_portable_utf8_element(const uint8_t *s, ptrdiff_t len, ptrdiff_t avail, uint8_t *dst,
                                        ptrdiff_t width, int swap, ptrdiff_t *errpos, ptrdiff_t *count)
{
    ptrdiff_t o = 0, nz = 0;
    int kind = fu32_portable_utf8_decode(s, 0, len, dst, width, swap, &o, &nz, errpos);
    (void)avail; /* reads only the string's own bytes */
    if (kind != FU32_OK) {
        return kind;
    }
    *count = nz;
    return fu32_utf8_finish(dst, width, o, nz);
}

/* A decoder of one string: its `len` bytes at `s` (`avail` bytes may be
 * read from `s`), into the element at `dst` (NULL: only check).  Returns
 * FU32_OK or an error kind, with *errpos and *count set as
 * fu32_utf8_element_error reads them. */
typedef int (*fu32_utf8_element_fn)(const uint8_t *s, ptrdiff_t len, ptrdiff_t avail, uint8_t *dst,
                                    ptrdiff_t width, int swap, ptrdiff_t *errpos, ptrdiff_t *count);

/* The loop over the strings of a UTF-8 -> UTF-32 decode, for every level:
 * each level calls it with its element decoder, a constant, so that the
 * compiler inlines both into the level's own function. */
static inline fu32_status fu32_utf8_decode_strings(fu32_utf8_element_fn element, const int64_t *starts,
                                                   const int64_t *ends, ptrdiff_t stride, ptrdiff_t n,
                                                   const uint8_t *values, ptrdiff_t values_len, ptrdiff_t width,
                                                   int swap, uint8_t *dst)
{
    /* The destination is stepped, rather than computed and tested for NULL
     * for each string: measured 12-20% faster on short strings with GCC.  It
     * steps as an integer, because NULL + 0 is undefined in C. */
    const uintptr_t step = dst ? (uintptr_t)(4 * width) : 0;
    uint8_t *d = dst;
    ptrdiff_t i;
    for (i = 0; i < n; i++, d = (uint8_t *)((uintptr_t)d + step)) {
        int64_t a = starts[i * stride];
        int64_t b = ends[i * stride];
        ptrdiff_t errpos = 0, count = 0;
        int kind;
        /* Bounds are checked on these loads and used from them (common.h). */
        FU32_PIN(a);
        FU32_PIN(b);
        if (a < 0 || b < a || b > (int64_t)values_len) {
            return fu32_error(FU32_BAD_OFFSETS, i, 0, b);
        }
        kind = element(values + a, (ptrdiff_t)(b - a), (ptrdiff_t)(values_len - a), d, width, swap, &errpos,
                       &count);
        if (kind != FU32_OK) return fu32_utf8_element_error(kind, i, errpos, count);
    }
    return fu32_ok();
}

/* The utf8_to_utf32 kernel (table.h), and the reference decoder of every level. */
static fu32_status fu32_portable_utf8_to_utf32(const int64_t *starts, const int64_t *ends, ptrdiff_t stride,
                                               ptrdiff_t n, const uint8_t *values, ptrdiff_t values_len,
                                               ptrdiff_t width, int flags, uint8_t *dst)
{
    return fu32_utf8_decode_strings(fu32_portable_utf8_element, starts, ends, stride, n, values, values_len, width,
                                    (flags & FU32_SWAP) != 0, dst);
}

#endif /* FIXEDUTF32_PORTABLE_UTF8_H */
