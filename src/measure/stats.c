/* Sample statistics of timing distributions (spec/measurement.md §1.7):
 * count, extremes, median, mean, population standard deviation and the
 * quartiles, with the linear quantile rule NumPy calls "linear" (position
 * (n−1)·q between order statistics). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/measure.h"
#include "measure_internal.h"

double bl_sorted_quantile(const double *sorted, size_t n, double q)
{
    BL_ASSERT(n >= 1 && q >= 0.0 && q <= 1.0);
    double pos = (double)(n - 1) * q;
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - (double)lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

bl_status bl_sample_stats_json(const double *x, size_t n, bl_json **out, bl_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return bl_fail(err, BL_EVALUE, "statistics need finite samples");
    double *sorted = n ? bl_mallocarray(n, sizeof *sorted) : NULL;
    if (n && !sorted)
        return bl_fail(err, BL_ENOMEM, "out of memory");
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "count", bl_json_int((int64_t)n), err);
    if (n > 0) {
        memcpy(sorted, x, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, compare_doubles);
        /* Sums in sample order, as Python's statistics over a list. */
        double sum = 0.0;
        for (size_t i = 0; i < n; i++)
            sum += x[i];
        double mean = sum / (double)n;
        double ss = 0.0;
        for (size_t i = 0; i < n; i++)
            ss += (x[i] - mean) * (x[i] - mean);
        bl_json_put(&st, o, "minimum", bl_json_real(sorted[0]), err);
        bl_json_put(&st, o, "maximum", bl_json_real(sorted[n - 1]), err);
        bl_json_put(&st, o, "median", bl_json_real(bl_sorted_quantile(sorted, n, 0.5)), err);
        bl_json_put(&st, o, "mean", bl_json_real(mean), err);
        bl_json_put(&st, o, "standard_deviation", bl_json_real(sqrt(ss / (double)n)), err);
        bl_json_put(&st, o, "p25", bl_json_real(bl_sorted_quantile(sorted, n, 0.25)), err);
        bl_json_put(&st, o, "p75", bl_json_real(bl_sorted_quantile(sorted, n, 0.75)), err);
    }
    bl_free(sorted);
    return bl_json_hand_over(st, o, out);
}
