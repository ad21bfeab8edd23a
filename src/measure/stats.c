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

static bl_status put_real(bl_json *o, const char *key, double v, bl_error *err)
{
    bl_json *x = bl_json_real(v);
    if (!x)
        return bl_fail(err, BL_ENOMEM, "out of memory for statistics");
    return bl_json_object_set(o, key, x, err);
}

bl_status bl_sample_stats_json(const double *x, size_t n, bl_json **out, bl_error *err)
{
    *out = NULL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return bl_fail(err, BL_EVALUE, "statistics need finite samples");
    bl_json *o = bl_json_object();
    double *sorted = n ? bl_mallocarray(n, sizeof *sorted) : NULL;
    bl_json *count = bl_json_int((int64_t)n);
    if (!o || !count || (n && !sorted)) {
        bl_json_destroy(o);
        bl_json_destroy(count);
        bl_free(sorted);
        return bl_fail(err, BL_ENOMEM, "out of memory for statistics");
    }
    bl_status st = bl_json_object_set(o, "count", count, err);
    if (n > 0 && st == BL_OK) {
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
        st = put_real(o, "minimum", sorted[0], err);
        if (st == BL_OK)
            st = put_real(o, "maximum", sorted[n - 1], err);
        if (st == BL_OK)
            st = put_real(o, "median", bl_sorted_quantile(sorted, n, 0.5), err);
        if (st == BL_OK)
            st = put_real(o, "mean", mean, err);
        if (st == BL_OK)
            st = put_real(o, "standard_deviation", sqrt(ss / (double)n), err);
        if (st == BL_OK)
            st = put_real(o, "p25", bl_sorted_quantile(sorted, n, 0.25), err);
        if (st == BL_OK)
            st = put_real(o, "p75", bl_sorted_quantile(sorted, n, 0.75), err);
    }
    bl_free(sorted);
    return bl_measure_hand_over(st, o, out);
}
