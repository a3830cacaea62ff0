/*
 * common.h -- what every level's kernels share: loads and stores of 4-byte
 * code units, the byte swap, pinning a loaded value, the flags, the status
 * and its kinds, and the one test of a code point.
 *
 * Plain C99, static functions, no global state.  Inputs may start at any
 * address; all lengths are ptrdiff_t (Py_ssize_t compatible), counted in code
 * units: UTF-32 code units for fixed-width chunks, bytes for UTF-8.
 */
#ifndef FIXEDUTF32_COMMON_H
#define FIXEDUTF32_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Pin a value loaded from the source in a register.  C lets a compiler load
 * a value again from memory for a later use instead of keeping it (GCC does,
 * under register pressure, in the copy loops): with another thread writing
 * the source during the call, the unit stored would then not be the unit
 * checked.  An empty asm that "changes" the value makes every later use take
 * that register; MSVC gets a compiler barrier, after which memory can no
 * longer stand in for the value. */
#if defined(__GNUC__) || defined(__clang__)
#define FU32_PIN(v) __asm__("" : "+r"(v))
#if defined(__x86_64__) || defined(__i386__)
#define FU32_PIN_VECTOR(v) __asm__("" : "+x"(v))
#else
#define FU32_PIN_VECTOR(v) __asm__("" : "+w"(v))
#endif
#elif defined(_MSC_VER)
#include <intrin.h>
#define FU32_PIN(v) _ReadWriteBarrier()
#define FU32_PIN_VECTOR(v) _ReadWriteBarrier()
#else
/* Plain C99 has no way to say it: other compilers get no such guarantee. */
#define FU32_PIN(v) ((void)0)
#define FU32_PIN_VECTOR(v) ((void)0)
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

/* The native value of a unit stored in the byte order `swapped` says (1:
 * the other one than this machine's), and the other way round. */
static inline uint32_t fu32_load_native(const uint8_t *p, int swapped)
{
    const uint32_t v = fu32_load_unit(p);
    return swapped ? fu32_bswap32(v) : v;
}

static inline void fu32_store_native(uint8_t *p, uint32_t v, int swapped)
{
    fu32_store_unit(p, swapped ? fu32_bswap32(v) : v);
}

/* Little-endian 4-byte integers whatever the machine (the vlen-utf8 layout). */
static inline void fu32_store_le32(uint8_t *p, uint32_t v)
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

static inline uint32_t fu32_load_le32(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
#endif
}

/* Number of code units of an element of `width` units before its trailing
 * U+0000 padding (two units at a time from the end, then one). */
static inline ptrdiff_t fu32_element_length(const uint8_t *e, ptrdiff_t width)
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
    while (k > 0 && fu32_load_unit(e + 4 * (k - 1)) == 0) {
        k--;
    }
    return k;
}

/* Flags of the kernels (every level takes the same ones):
 *   FU32_VALIDATE     check every code point
 *   FU32_SRC_SWAPPED  the source's units are in the other byte order
 *   FU32_SWAP         byte-swap units on the way to the destination (the
 *                     UTF-8 decoder: write them in the other byte order)
 *   FU32_STREAM       non-temporal stores: output larger than the cache
 *   FU32_VLEN         UTF-32 -> UTF-8 writes the vlen-utf8 layout */
#define FU32_VALIDATE 1
#define FU32_SRC_SWAPPED 2
#define FU32_SWAP 4
#define FU32_STREAM 8
#define FU32_VLEN 16

/* Units per fast-check block (16 KiB): small enough to stay in L1 between
 * two passes over it, and what a fast path that finds a block wrong hands,
 * with all that follows, to the reference loop. */
#define FU32_BLOCK_UNITS 4096

/* Output slack the UTF-32 -> UTF-8 kernels need past the worst-case size. */
#define FU32_UTF8_SLACK 64

/* ------------------------------------------------------------------------
 * The status every kernel returns: one shape, one name per meaning.
 * element: the element (string, item) at fault; position: the code unit
 * inside it (UTF-32 side) or the byte offset inside its UTF-8 bytes (UTF-8
 * side); detail: the bad code unit (FU32_TOO_LARGE, FU32_SURROGATE), the
 * string's length in code points (FU32_STRING_TOO_LONG), the bad end offset
 * (FU32_BAD_OFFSETS), the bytes left over after the last item (FU32_BAD_VLEN,
 * element n; 0 when an item runs past the end); 0 otherwise.
 * ------------------------------------------------------------------------ */
enum {
    FU32_OK = 0,
    FU32_TOO_LARGE = 1,                /* UTF-32 code unit above U+10FFFF */
    FU32_SURROGATE = 2,                /* UTF-32 code unit in U+D800..U+DFFF */
    FU32_STRING_TOO_LONG = 3,          /* more code points than the element holds */
    FU32_UTF8_HEADER_BITS = 4,         /* UTF-8 byte that can never appear (F8..FF) */
    FU32_UTF8_TOO_SHORT = 5,           /* UTF-8 sequence cut short (end of element or a non-continuation byte) */
    FU32_UTF8_STRAY_CONTINUATION = 6,  /* UTF-8 continuation byte that no lead byte claims */
    FU32_UTF8_OVERLONG = 7,            /* UTF-8 sequence longer than needed for its value */
    FU32_UTF8_TOO_LARGE = 8,           /* UTF-8 sequence encoding a value above U+10FFFF */
    FU32_UTF8_SURROGATE = 9,           /* UTF-8 sequence encoding U+D800..U+DFFF */
    FU32_BAD_OFFSETS = 10,             /* offsets decreasing, negative, or past the end of values */
    FU32_BAD_VLEN = 11                 /* vlen-utf8 chunk truncated or with trailing bytes */
};

typedef struct {
    int kind;
    ptrdiff_t element;
    ptrdiff_t position;
    int64_t detail;
} fu32_status;

static inline fu32_status fu32_error(int kind, ptrdiff_t element, ptrdiff_t position, int64_t detail)
{
    fu32_status r;
    r.kind = kind;
    r.element = element;
    r.position = position;
    r.detail = detail;
    return r;
}

static inline fu32_status fu32_ok(void) { return fu32_error(FU32_OK, 0, 0, 0); }

/* FU32_OK for a Unicode scalar value, else why it is not one. */
static inline int fu32_code_point_kind(uint32_t c)
{
    if (c > 0x10FFFFu) return FU32_TOO_LARGE;
    if ((c ^ 0xD800u) < 0x800u) return FU32_SURROGATE;
    return FU32_OK;
}

#endif /* FIXEDUTF32_COMMON_H */
