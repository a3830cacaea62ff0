/*
 * portable/reference.h -- the reference loops of the chunk kernels: one code
 * unit (or element) at a time, with early exits.
 *
 * Every level's fast path runs over whole blocks and returns either -1 (all
 * done, all valid) or a resume index: the first code unit (or element) from
 * which a reference loop must carry on.  Everything before it has been
 * checked and written exactly as the reference loop would have done it; past
 * it, a separate destination may hold the failing block as the fast path
 * wrote it (the reference loop writes it again), an in-place one is as it
 * was.  The fu32_finish_* functions at the end run the reference loop from
 * there and make the status, so that every error is located and reported by
 * this one piece of code, whatever the level.
 *
 * Every loop that writes code units loads each unit once, checks it and
 * stores that same value (pinned in a register, common.h): what is written is
 * what was checked, even when another thread changes the source during the
 * call; an error reports the unit as it was read.
 */
#ifndef FIXEDUTF32_PORTABLE_REFERENCE_H
#define FIXEDUTF32_PORTABLE_REFERENCE_H

#include "../common.h"

/* Index of the first unit that is not a scalar value, or -1.  *seen gets
 * that unit's native value as it was read (the source may have changed since
 * under a racing writer: the error names what was checked). */
static ptrdiff_t fu32_reference_validate(const uint8_t *src, ptrdiff_t n, int swapped, uint32_t *seen)
{
    for (ptrdiff_t i = 0; i < n; i++) {
        const uint32_t c = fu32_load_native(src + 4 * i, swapped);
        if (fu32_code_point_kind(c) != FU32_OK) {
            *seen = c;
            return i;
        }
    }
    return -1;
}

/* Copy (and swap) n units, checking each before it is written.  Returns -1,
 * or the index of the first invalid unit (its native value in *seen): units
 * before it are written, it and the ones after are not. */
static ptrdiff_t fu32_reference_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, int flags, uint32_t *seen)
{
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        uint32_t raw = fu32_load_unit(src + 4 * i);
        FU32_PIN(raw);
        const uint32_t c = src_swapped ? fu32_bswap32(raw) : raw;
        if (validate && fu32_code_point_kind(c) != FU32_OK) {
            *seen = c;
            return i;
        }
        fu32_store_unit(dst + 4 * i, swap ? fu32_bswap32(raw) : raw);
    }
    return -1;
}

/* Element by element width change; dst may be NULL (check only).  A string
 * too long for to_units is FU32_STRING_TOO_LONG at the first non-zero unit
 * past the new width. */
static fu32_status fu32_reference_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems,
                                        ptrdiff_t from_units, ptrdiff_t to_units, int flags)
{
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    const int swap = (flags & FU32_SWAP) != 0;
    const ptrdiff_t keep = from_units < to_units ? from_units : to_units;
    for (ptrdiff_t e = 0; e < n_elems; e++) {
        const uint8_t *s = src + 4 * e * from_units;
        ptrdiff_t j;
        for (j = to_units; j < from_units; j++)
            if (fu32_load_unit(s + 4 * j) != 0)
                return fu32_error(FU32_STRING_TOO_LONG, e, j, fu32_element_length(s, from_units));
        {
            /* Each unit is loaded once, checked and written from the same value. */
            uint8_t *d = dst != NULL ? dst + 4 * e * to_units : NULL;
            for (j = 0; j < keep; j++) {
                uint32_t raw = fu32_load_unit(s + 4 * j);
                FU32_PIN(raw);
                const uint32_t c = src_swapped ? fu32_bswap32(raw) : raw;
                if (validate && fu32_code_point_kind(c) != FU32_OK) return fu32_error(fu32_code_point_kind(c), e, j, c);
                if (d != NULL) fu32_store_unit(d + 4 * j, swap ? fu32_bswap32(raw) : raw);
            }
            if (d != NULL) memset(d + 4 * keep, 0, 4 * (size_t)(to_units - keep));
        }
    }
    return fu32_ok();
}

/* Lengths without trailing U+0000; -1, or the flat index of the first
 * invalid unit (its native value in *seen). */
static ptrdiff_t fu32_reference_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                            ptrdiff_t *lengths, int flags, uint32_t *seen)
{
    const int validate = (flags & FU32_VALIDATE) != 0;
    const int src_swapped = (flags & FU32_SRC_SWAPPED) != 0;
    for (ptrdiff_t e = 0; e < n_elems; e++) {
        const uint8_t *s = src + 4 * e * width;
        if (validate) {
            for (ptrdiff_t j = 0; j < width; j++) {
                const uint32_t c = fu32_load_native(s + 4 * j, src_swapped);
                if (fu32_code_point_kind(c) != FU32_OK) {
                    *seen = c;
                    return e * width + j;
                }
            }
        }
        lengths[e] = fu32_element_length(s, width);
    }
    return -1;
}

/* The status for flat unit `unit`, whose native value `c` (as the reference
 * loop read it: never read again, since a racing writer may have changed it
 * back) is not a scalar value. */
static fu32_status fu32_unit_error(ptrdiff_t unit, ptrdiff_t width, uint32_t c)
{
    return fu32_error(fu32_code_point_kind(c), unit / width, unit % width, c);
}

/* ------------------------------------------------------------------------
 * A level's kernel is its fast path, then one of these from the resume
 * index the fast path returned (-1: nothing left to do).
 * ------------------------------------------------------------------------ */

static fu32_status fu32_finish_validate(const uint8_t *src, ptrdiff_t n, ptrdiff_t width, int flags,
                                        ptrdiff_t resume)
{
    uint32_t seen = 0;
    ptrdiff_t bad;
    if (resume < 0) return fu32_ok();
    bad = fu32_reference_validate(src + 4 * resume, n - resume, (flags & FU32_SRC_SWAPPED) != 0, &seen);
    return bad < 0 ? fu32_ok() : fu32_unit_error(resume + bad, width, seen);
}

/* In place (dst == src) with a swap, an error swaps back the prefix already
 * converted, so that the caller's buffer is exactly as it was. */
static fu32_status fu32_finish_convert(const uint8_t *src, uint8_t *dst, ptrdiff_t n, ptrdiff_t width, int flags,
                                       ptrdiff_t resume)
{
    uint32_t seen = 0, unused = 0;
    ptrdiff_t bad;
    if (resume < 0) return fu32_ok();
    bad = fu32_reference_convert(src + 4 * resume, dst + 4 * resume, n - resume, flags, &seen);
    if (bad < 0) return fu32_ok();
    bad += resume;
    if (src == dst && (flags & FU32_SWAP)) fu32_reference_convert(dst, dst, bad, FU32_SWAP, &unused);
    return fu32_unit_error(bad, width, seen);
}

/* Here the fast path returns the element to resume from (n_elems: done). */
static fu32_status fu32_finish_repad(const uint8_t *src, uint8_t *dst, ptrdiff_t n_elems, ptrdiff_t from_units,
                                     ptrdiff_t to_units, int flags, ptrdiff_t resume)
{
    fu32_status status = fu32_reference_repad(src + 4 * resume * from_units,
                                              dst != NULL ? dst + 4 * resume * to_units : NULL,
                                              n_elems - resume, from_units, to_units, flags & ~FU32_STREAM);
    if (status.kind != FU32_OK) status.element += resume;
    return status;
}

static fu32_status fu32_finish_str_lengths(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                           ptrdiff_t *lengths, int flags, ptrdiff_t resume)
{
    uint32_t seen = 0;
    ptrdiff_t bad;
    if (resume < 0) return fu32_ok();
    bad = fu32_reference_str_lengths(src + 4 * resume * width, n_elems - resume, width, lengths + resume, flags,
                                     &seen);
    return bad < 0 ? fu32_ok() : fu32_unit_error(resume * width + bad, width, seen);
}

/* The longest element through a level's str_lengths, a block of lengths at a
 * time on the stack (elements too wide for a level's own longest pass). */
typedef fu32_status (*fu32_str_lengths_fn)(const uint8_t *src, ptrdiff_t n_elems, ptrdiff_t width,
                                           ptrdiff_t *lengths, int flags);

static fu32_status fu32_longest_by_lengths(fu32_str_lengths_fn str_lengths, const uint8_t *src,
                                           ptrdiff_t n_elems, ptrdiff_t width, ptrdiff_t *longest, int flags)
{
    ptrdiff_t lengths[256];
    for (ptrdiff_t start = 0; start < n_elems; start += 256) {
        ptrdiff_t count = n_elems - start < 256 ? n_elems - start : 256;
        fu32_status status = str_lengths(src + 4 * start * width, count, width, lengths, flags);
        if (status.kind != FU32_OK) {
            status.element += start;
            return status;
        }
        for (ptrdiff_t i = 0; i < count; i++)
            if (lengths[i] > *longest) *longest = lengths[i];
    }
    return fu32_ok();
}

#endif /* FIXEDUTF32_PORTABLE_REFERENCE_H */
