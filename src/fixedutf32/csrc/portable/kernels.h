/*
 * portable/kernels.h -- the portable level's table (table.h): plain C that
 * every target compiles, the level every CPU runs.
 */
#ifndef FIXEDUTF32_PORTABLE_KERNELS_H
#define FIXEDUTF32_PORTABLE_KERNELS_H

#include "../table.h"
#include "chunk.h"
#include "utf8.h"

static const fu32_kernels fu32_portable_kernels = {
    "portable",
    0, /* needs nothing */
    fu32_portable_validate,
    fu32_portable_convert,
    fu32_portable_repad,
    fu32_portable_str_lengths,
    fu32_portable_utf32_to_utf8,
    fu32_portable_utf8_to_utf32,
    fu32_portable_longest,
};

#endif /* FIXEDUTF32_PORTABLE_KERNELS_H */
