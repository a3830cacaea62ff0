/*
 * common.h -- what every kernel shares: unaligned loads and stores of 4-byte
 * code units, the byte swap, and the flags of the chunk kernels.
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

static inline uint32_t fu32_utf8_load32(const uint8_t *p, int swap)
{
    uint32_t v;
    memcpy(&v, p, 4);
    if (swap) {
        v = fu32_bswap32(v);
    }
    return v;
}

static inline void fu32_utf8_store32(uint8_t *p, uint32_t v, int swap)
{
    if (swap) {
        v = fu32_bswap32(v);
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

#endif /* FIXEDUTF32_COMMON_H */
