/* chunk.h -- the chunk kernels: validate, convert, repad, str_lengths. */
#ifndef FIXEDUTF32_CHUNK_H
#define FIXEDUTF32_CHUNK_H

#include "buffer.h"
#include "chunk_avx2.h"
#include "chunk_portable.h"
#include "common.h"
#include "cpu.h"

#endif /* FIXEDUTF32_CHUNK_H */
