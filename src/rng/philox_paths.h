/* The bulk Philox paths (private to src/rng and its tests). Every path
 * computes the same integers; the tests run each one the CPU has against
 * the one-at-a-time stream, and bl_philox_fill64 takes the best. */
#ifndef BL_RNG_PHILOX_PATHS_H
#define BL_RNG_PHILOX_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/rng.h"

typedef enum bl_philox_path {
    BL_PHILOX_PATH_BASE,   /* x86-64 baseline (or any other CPU) */
    BL_PHILOX_PATH_AVX512, /* eight blocks a vector (AVX-512F) */
    BL_PHILOX_PATH_COUNT
} bl_philox_path;

bool bl_philox_path_supported(bl_philox_path path);
/* bl_philox_fill64 on a given path, which must be supported. */
void bl_philox_fill64_path(bl_philox *p, uint64_t *out, size_t n, bl_philox_path path);

#endif
