/*
 * layout.h -- the layouts on the UTF-8 side that need no level: the item
 * table of a vlen-utf8 chunk, and UTF-8 strings spread to fixed-width slots.
 * Plain loops over offsets; the wrappers (_transcode.pxi) call them directly.
 */
#ifndef FIXEDUTF32_LAYOUT_H
#define FIXEDUTF32_LAYOUT_H

#include "common.h"

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

/*
 * Reads a vlen-utf8 chunk's item table: n items after the 4-byte count, each a
 * uint32 LE byte length and the bytes.  pos receives 2 * n entries, (start, end)
 * of each item.  The chunk must end exactly after the last item.
 */
static fu32_status fu32_utf8_vlen_parse(const uint8_t *buf, ptrdiff_t size, ptrdiff_t n, int64_t *pos)
{
    ptrdiff_t p = 4, i;
    for (i = 0; i < n; i++) {
        uint32_t L;
        if (size - p < 4) return fu32_error(FU32_BAD_VLEN, i, p, 0);
        L = fu32_load_le32(buf + p);
        p += 4;
        if ((uint64_t)(size - p) < (uint64_t)L) return fu32_error(FU32_BAD_VLEN, i, p, 0);
        pos[2 * i] = p;
        pos[2 * i + 1] = p + (ptrdiff_t)L;
        p += (ptrdiff_t)L;
    }
    /* detail: the bytes left over after the last item (element n) */
    return p == size ? fu32_ok() : fu32_error(FU32_BAD_VLEN, n, p, size - p);
}

#endif /* FIXEDUTF32_LAYOUT_H */
