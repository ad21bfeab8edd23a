/* NumPy-exact reductions and statistics on contiguous float64 arrays
 * (spec/numpy-compat.md §3): the same additions in the same order as NumPy,
 * so summaries, bootstrap intervals and calibrations match the reference to
 * the bit. */
#ifndef BRAINLESSLAB_NPSTAT_H
#define BRAINLESSLAB_NPSTAT_H

#include <stddef.h>

#include "brainlesslab/status.h"

/* NumPy's pairwise summation of one block (the inner loop). */
double bl_np_pairwise_sum(const double *a, size_t n);
/* numpy.sum: 8192-element chunks, each pairwise, added left to right. */
double bl_np_sum(const double *a, size_t n);
/* numpy.mean (n >= 1; n = 0 gives NaN as NumPy does). */
double bl_np_mean(const double *a, size_t n);
/* numpy.std(a, ddof). When n - ddof <= 0 NumPy divides by 0 anyway: NaN
 * when every deviation is 0 (n = 1, ddof = 1 included), +inf otherwise.
 * `scratch` holds n doubles (or NULL to allocate; BL_ENOMEM then possible);
 * it may be `a` itself, which is then overwritten. */
bl_status bl_np_std(const double *a, size_t n, size_t ddof, double *scratch,
                    double *out, bl_error *err);
/* numpy.quantile(a, q) with method "linear" (0 <= q <= 1, n >= 1, else
 * BL_EVALUE); NaN in `a` gives NaN. `scratch` holds n doubles (or NULL to
 * allocate); it may be `a` itself, which is then sorted in place. */
bl_status bl_np_quantile(const double *a, size_t n, double q, double *scratch,
                         double *out, bl_error *err);
/* Several quantiles of one array with a single sort: out[k] is exactly
 * bl_np_quantile(a, n, qs[k]) (every q is checked before anything is
 * written; NaN in `a` gives NaN for each). `scratch` as above. */
bl_status bl_np_quantiles(const double *a, size_t n, const double *qs, size_t nq,
                          double *scratch, double *out, bl_error *err);
/* The same on an already ascending-sorted array without NaN. */
double bl_np_quantile_sorted(const double *sorted, size_t n, double q);

#endif
