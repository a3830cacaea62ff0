/*
 * kernels.h -- every level's table of kernels (table.h), slowest first, and
 * the one chooser of the level for a CPU.  The Cython layer includes this
 * file (and buffer.h, layout.h) and nothing else: it picks a table once, at
 * import or by set_simd_level, and calls through it.
 *
 * A new instruction set is one folder holding its kernels and its table, and
 * one line below (with its FU32_CPU_* needs in cpu.h).
 */
#ifndef FIXEDUTF32_KERNELS_H
#define FIXEDUTF32_KERNELS_H

#include "cpu.h"
#include "table.h"
#include "portable/kernels.h"
#include "avx2/kernels.h"

static const fu32_kernels *const fu32_levels[] = {
    &fu32_portable_kernels,
#if FU32_HAVE_AVX2
    &fu32_avx2_kernels,
#endif
};

enum { FU32_LEVEL_COUNT = (int)(sizeof fu32_levels / sizeof fu32_levels[0]) };

/* The table of level `index` (0 .. FU32_LEVEL_COUNT - 1), else NULL. */
static const fu32_kernels *fu32_level(int index)
{
    return index >= 0 && index < FU32_LEVEL_COUNT ? fu32_levels[index] : NULL;
}

/* Whether a CPU and OS with these FU32_CPU_* features run level `index`. */
static int fu32_level_runs(int index, unsigned features)
{
    const fu32_kernels *k = fu32_level(index);
    return k != NULL && (features & k->needs) == k->needs;
}

/* The fastest level for a set of features: a pure function, tested on a table. */
static int fu32_level_for_features(unsigned features)
{
    int best = 0, i;
    for (i = 1; i < FU32_LEVEL_COUNT; i++) {
        if (fu32_level_runs(i, features)) best = i;
    }
    return best;
}

/* The one place that picks the fastest level this CPU runs. */
static int fu32_cpu_level(void) { return fu32_level_for_features(fu32_cpu_features()); }

#endif /* FIXEDUTF32_KERNELS_H */
