/* buffer.h -- the allocator of the output buffer pool (_kernels.pyx). */
#ifndef FIXEDUTF32_BUFFER_H
#define FIXEDUTF32_BUFFER_H

#include <stddef.h>

/* Output buffers: 64-byte aligned (whole cache lines, and 32-byte aligned
 * for streaming stores); large ones are offered huge pages, as NumPy does,
 * so that first touch and TLB misses cost less. */
#if defined(_WIN32)
#include <malloc.h>
static void *fu32_buffer_alloc(size_t size) { return _aligned_malloc(size ? size : 1, 64); }
static void fu32_buffer_free(void *p) { _aligned_free(p); }
#else
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
static void *fu32_buffer_alloc(size_t size) {
    void *p = NULL;
    size_t alignment = size >= ((size_t)4 << 20) ? ((size_t)2 << 20) : 64;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size >= ((size_t)4 << 20)) madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}
static void fu32_buffer_free(void *p) { free(p); }
#endif

#endif /* FIXEDUTF32_BUFFER_H */
