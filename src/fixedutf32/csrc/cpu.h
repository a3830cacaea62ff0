/*
 * cpu.h -- the one CPU-feature check, and what each instruction set's code is
 * compiled for and needs: the AVX2 target flags and the features they need.
 *
 * The AVX2 functions (avx2/) compile in the default build, without -march
 * flags, and are only called when the level chooser (kernels.h) finds every
 * feature they are built for (FU32_AVX2_NEEDS) in fu32_cpu_features().
 */
#ifndef FIXEDUTF32_CPU_H
#define FIXEDUTF32_CPU_H

/* ------------------------------------------------------------------------
 * The features a level needs.  The AVX2 code uses BMI1/BMI2/LZCNT/POPCNT as
 * well (andn, shlx, lzcnt), so the AVX2 level needs all of them, and the
 * OS's saving of YMM registers (XGETBV): a CPU or a virtual machine that
 * lacks one gets the portable level.  A CPU without LZCNT would run lzcnt as
 * bsr and give wrong results without any fault.
 * ------------------------------------------------------------------------ */

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

#endif /* FIXEDUTF32_CPU_H */
