/* Pieces shared by the bootstrap and calibration files of src/results. */
#ifndef BL_RESULTS_INTERNAL_H
#define BL_RESULTS_INTERNAL_H

#include <stddef.h>

#include "brainlesslab/json.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/status.h"

/* `reps` bootstrap means of v[0..m): per repetition integers(0, m, size=m)
 * from `g`, then the NumPy mean of v at those indices, into means[0..reps).
 * `row` holds m doubles. NumPy draws every bounded integer below 2^32
 * through the bit generator's own 32-bit cache, so one reps x m call and
 * reps calls of m draws consume the stream identically; this one loop
 * therefore serves the single-matrix bootstrap of platform.md §5.3 and the
 * per-repetition ones of §5.5 (tests/test_results.c proves both against
 * NumPy). */
void bl_bootstrap_means(bl_gen *g, const double *v, size_t m, size_t reps, double *row,
                        double *means);

/* NumPy linear quantiles 0.025 and 0.975 of draws[0..n) (n >= 1), which
 * are sorted in place. */
bl_status bl_bootstrap_quantiles(double *draws, size_t n, double out[2], bl_error *err);

/* A JSON array of n reals, or NULL when out of memory. */
bl_json *bl_json_reals(const double *v, size_t n);

#endif
