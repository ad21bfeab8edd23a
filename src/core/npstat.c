/* NumPy-exact reductions (spec/numpy-compat.md §3). Every addition here is
 * one NumPy 1.17+ performs, in the same order: a different but "more
 * accurate" order would change the last bits and break bit identity with
 * the reference's summaries. */
#include "brainlesslab/npstat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"

/* NumPy's PW_BLOCKSIZE and its reduction buffer size (NPY_BUFSIZE). */
#define PW_BLOCK 128
#define NP_BUFSIZE 8192

double bl_np_pairwise_sum(const double *a, size_t n)
{
    if (n < 8) {
        /* Starting from +0.0 rather than a[0] matters for signed zeros. */
        double s = 0.0;
        for (size_t i = 0; i < n; i++)
            s += a[i];
        return s;
    }
    if (n <= PW_BLOCK) {
        double r[8];
        for (size_t j = 0; j < 8; j++)
            r[j] = a[j];
        size_t i;
        for (i = 8; i < n - n % 8; i += 8)
            for (size_t j = 0; j < 8; j++)
                r[j] += a[i + j];
        double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            s += a[i];
        return s;
    }
    /* The split point is a multiple of 8 so both halves keep NumPy's
     * (unrolled) block boundaries. */
    size_t m = n / 2;
    m -= m % 8;
    return bl_np_pairwise_sum(a, m) + bl_np_pairwise_sum(a + m, n - m);
}

double bl_np_sum(const double *a, size_t n)
{
    /* The reduction starts from the identity +0.0 and receives the array
     * one buffer at a time, each buffer summed pairwise on its own. */
    double s = 0.0;
    for (size_t i = 0; i < n; i += NP_BUFSIZE) {
        size_t len = n - i < NP_BUFSIZE ? n - i : NP_BUFSIZE;
        s += bl_np_pairwise_sum(a + i, len);
    }
    return s;
}

double bl_np_mean(const double *a, size_t n)
{
    /* n = 0 divides 0.0 by 0 at run time like NumPy: the NaN's sign bit is
     * the hardware's default one (set on x86), which the NAN macro is not. */
    return bl_np_sum(a, n) / (double)n;
}

bl_status bl_np_std(const double *a, size_t n, size_t ddof, double *scratch,
                    double *out, bl_error *err)
{
    double *d = scratch;
    if (!d) {
        d = bl_mallocarray(n, sizeof *d);
        if (!d)
            return bl_fail(err, BL_ENOMEM, "out of memory for a standard deviation of %zu values", n);
    }
    double m = bl_np_mean(a, n);
    /* NumPy materialises the squared deviations and sums them like any
     * array; computing them elementwise into d is safe even when d == a. */
    for (size_t i = 0; i < n; i++) {
        double x = a[i] - m;
        d[i] = x * x;
    }
    double ss = bl_np_sum(d, n);
    /* NumPy clamps the degrees of freedom at 0 and divides anyway: +inf for
     * a positive sum of squares, the hardware's default NaN for 0 / 0 (n = 0
     * included), so the division is kept rather than replaced by constants. */
    double dof = n > ddof ? (double)(n - ddof) : 0.0;
    *out = sqrt(ss / dof);
    if (d != scratch)
        bl_free(d);
    return BL_OK;
}

double bl_np_quantile_sorted(const double *sorted, size_t n, double q)
{
    BL_ASSERT(n >= 1);
    BL_ASSERT(q >= 0.0 && q <= 1.0);
    double v = (double)(n - 1) * q;
    double flo = floor(v);
    size_t lo = (size_t)flo;
    size_t hi = lo + 1 < n ? lo + 1 : n - 1;
    double g = v - flo;
    double A = sorted[lo], B = sorted[hi];
    double d = B - A;
    /* NumPy's _lerp: from the nearer end, which is why both forms exist. */
    if (g >= 0.5)
        return B - d * (1.0 - g);
    return A + d * g;
}

static int cmp_double(const void *pa, const void *pb)
{
    double x = *(const double *)pa, y = *(const double *)pb;
    return (x > y) - (x < y);
}

bl_status bl_np_quantiles(const double *a, size_t n, const double *qs, size_t nq,
                          double *scratch, double *out, bl_error *err)
{
    if (n == 0)
        return bl_fail(err, BL_EVALUE, "quantile of an empty array");
    for (size_t k = 0; k < nq; k++)
        if (!(qs[k] >= 0.0 && qs[k] <= 1.0))
            return bl_fail(err, BL_EVALUE, "Quantiles must be in the range [0, 1]");
    /* NumPy sorts NaN last and then reports NaN for the whole quantile; a
     * scan first also keeps NaN out of the comparison function. */
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i])) {
            for (size_t k = 0; k < nq; k++)
                out[k] = NAN;
            return BL_OK;
        }
    }
    double *s = scratch;
    if (!s) {
        s = bl_mallocarray(n, sizeof *s);
        if (!s)
            return bl_fail(err, BL_ENOMEM, "out of memory for a quantile of %zu values", n);
    }
    if (s != a)
        memcpy(s, a, n * sizeof *s);
    /* Only the values at the order statistics are used, so the sort's
     * instability cannot change the result (up to the sign of equal zeros,
     * which the spec keeps out of scope); nor can taking every quantile
     * from one sorted copy: NumPy's linear quantile is a function of the
     * sorted values alone, which is why one sort serves them all. */
    qsort(s, n, sizeof *s, cmp_double);
    for (size_t k = 0; k < nq; k++)
        out[k] = bl_np_quantile_sorted(s, n, qs[k]);
    if (s != scratch)
        bl_free(s);
    return BL_OK;
}

bl_status bl_np_quantile(const double *a, size_t n, double q, double *scratch,
                         double *out, bl_error *err)
{
    return bl_np_quantiles(a, n, &q, 1, scratch, out, err);
}
