/* NumPy-exact sums and statistics: hand cases that pin the order of the
 * additions, then a differential test against Debian's NumPy, bit for bit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/npstat.h"
#include "support.h"

/* ---- pairwise sum and numpy.sum ---------------------------------------- */

static void test_short_sums_start_from_positive_zero(void **state)
{
    (void)state;
    double nz[8] = {-0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0};
    /* n < 8: 0.0 + -0.0 is +0.0, so the result is +0.0 however many -0.0. */
    for (size_t n = 1; n < 8; n++)
        BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(nz, n), 0.0);
    /* n = 8: the accumulators start from the elements themselves. */
    BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(nz, 8), -0.0);
    /* numpy.sum adds the block to the identity +0.0. */
    BL_ASSERT_SAME_BITS(bl_np_sum(nz, 8), 0.0);
    BL_ASSERT_SAME_BITS(bl_np_sum(nz, 0), 0.0);
    BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(nz, 0), 0.0);
}

static void test_pairwise_order(void **state)
{
    (void)state;
    /* Left to right this is 1.0; NumPy's eight accumulators give 0.0. */
    double a[8] = {1e100, 1.0, -1e100, 1.0, 0.0, 0.0, 0.0, 0.0};
    BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(a, 7), 1.0);
    BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(a, 8), 0.0);
    BL_ASSERT_SAME_BITS(bl_np_sum(a, 8), 0.0);

    /* 8..128: accumulators over full blocks of eight, then the leftover in
     * order after the combination. */
    double b[19];
    for (size_t i = 0; i < 19; i++)
        b[i] = 1.0 / (double)(i + 3) * (i % 2 ? -1.0 : 1.0) * (double)(1u << (i % 5));
    double r[8];
    for (size_t j = 0; j < 8; j++)
        r[j] = b[j] + b[8 + j];
    double want = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    want += b[16];
    want += b[17];
    want += b[18];
    BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(b, 19), want);

    /* > 128: split at n/2 rounded down to a multiple of 8 (150 -> 72). */
    double *c = malloc(150 * sizeof *c);
    assert_non_null(c);
    for (size_t i = 0; i < 150; i++)
        c[i] = sin((double)i) * 1e3;
    BL_ASSERT_SAME_BITS(bl_np_pairwise_sum(c, 150),
                       bl_np_pairwise_sum(c, 72) + bl_np_pairwise_sum(c + 72, 78));
    free(c);
}

static void test_sum_chunks_of_8192(void **state)
{
    (void)state;
    size_t n = 8192 * 2 + 100;
    double *a = malloc(n * sizeof *a);
    assert_non_null(a);
    for (size_t i = 0; i < n; i++)
        a[i] = cos((double)i * 0.37) * (double)(i % 97 + 1);
    double want = 0.0;
    want += bl_np_pairwise_sum(a, 8192);
    want += bl_np_pairwise_sum(a + 8192, 8192);
    want += bl_np_pairwise_sum(a + 16384, 100);
    BL_ASSERT_SAME_BITS(bl_np_sum(a, n), want);
    BL_ASSERT_SAME_BITS(bl_np_mean(a, n), want / (double)n);
    BL_ASSERT_SAME_BITS(bl_np_sum(a, 8192), bl_np_pairwise_sum(a, 8192));
    free(a);
}

/* ---- mean and std -------------------------------------------------------- */

static void test_mean_std_small(void **state)
{
    (void)state;
    bl_error err = {0};
    double out;
    double one = 2.5;
    BL_ASSERT_SAME_BITS(bl_np_sum(&one, 1), 2.5);
    BL_ASSERT_SAME_BITS(bl_np_mean(&one, 1), 2.5);
    assert_int_equal(bl_np_std(&one, 1, 0, NULL, &out, &err), BL_OK);
    BL_ASSERT_SAME_BITS(out, 0.0);
    /* ddof >= n: NumPy divides by max(n - ddof, 0) = 0, so 0/0 is NaN ... */
    assert_int_equal(bl_np_std(&one, 1, 1, NULL, &out, &err), BL_OK);
    assert_true(isnan(out));
    double same[3] = {4.0, 4.0, 4.0};
    assert_int_equal(bl_np_std(same, 3, 3, NULL, &out, &err), BL_OK);
    assert_true(isnan(out));
    assert_int_equal(bl_np_std(same, 3, 7, NULL, &out, &err), BL_OK);
    assert_true(isnan(out));
    /* ... but a positive sum of squares over 0 is +inf (np.std([1., 2.],
     * ddof=2) is inf in NumPy 1.24, with a RuntimeWarning). */
    double two[2] = {1.0, 2.0};
    assert_int_equal(bl_np_std(two, 2, 2, NULL, &out, &err), BL_OK);
    assert_true(isinf(out) && out > 0);
    assert_int_equal(bl_np_std(two, 2, 5, NULL, &out, &err), BL_OK);
    assert_true(isinf(out) && out > 0);
    /* n = 0: the mean is NaN and so is everything after it. */
    assert_true(isnan(bl_np_mean(two, 0)));
    assert_int_equal(bl_np_std(two, 0, 0, NULL, &out, &err), BL_OK);
    assert_true(isnan(out));

    /* By hand: mean 2.5, squared deviations 2.25 0.25 0.25 2.25. */
    double four[4] = {1.0, 2.0, 3.0, 4.0};
    double scratch[4];
    BL_ASSERT_SAME_BITS(bl_np_mean(four, 4), 2.5);
    assert_int_equal(bl_np_std(four, 4, 0, scratch, &out, &err), BL_OK);
    BL_ASSERT_SAME_BITS(out, sqrt(5.0 / 4.0));
    assert_int_equal(bl_np_std(four, 4, 1, NULL, &out, &err), BL_OK);
    BL_ASSERT_SAME_BITS(out, sqrt(5.0 / 3.0));
    /* The input itself may serve as scratch (it is overwritten). */
    assert_int_equal(bl_np_std(four, 4, 1, four, &out, &err), BL_OK);
    BL_ASSERT_SAME_BITS(out, sqrt(5.0 / 3.0));

    double withnan[3] = {1.0, NAN, 2.0};
    assert_true(isnan(bl_np_sum(withnan, 3)));
    assert_true(isnan(bl_np_mean(withnan, 3)));
    assert_int_equal(bl_np_std(withnan, 3, 1, NULL, &out, &err), BL_OK);
    assert_true(isnan(out));
}

/* ---- quantile ------------------------------------------------------------ */

static double quantile(const double *a, size_t n, double q)
{
    bl_error err = {0};
    double out = -12345.0;
    bl_status st = bl_np_quantile(a, n, q, NULL, &out, &err);
    if (st != BL_OK)
        fail_msg("bl_np_quantile: %s", err.msg);
    return out;
}

static void test_quantile_by_hand(void **state)
{
    (void)state;
    double a[4] = {3.0, 1.0, 2.0, 4.0};
    BL_ASSERT_SAME_BITS(quantile(a, 4, 0.0), 1.0);
    BL_ASSERT_SAME_BITS(quantile(a, 4, 0.25), 1.75);
    BL_ASSERT_SAME_BITS(quantile(a, 4, 0.5), 2.5);
    BL_ASSERT_SAME_BITS(quantile(a, 4, 1.0 / 3.0), 2.0);
    BL_ASSERT_SAME_BITS(quantile(a, 4, 0.75), 3.25);
    BL_ASSERT_SAME_BITS(quantile(a, 4, 1.0), 4.0);
    /* The input is left alone when no scratch is shared with it. */
    BL_ASSERT_SAME_BITS(a[0], 3.0);

    /* Which end the interpolation starts from shows in the last bit
     * (values from NumPy 1.24): g >= 0.5 goes down from B ... */
    double hi[2] = {0.1, 0.1 + 1.1};
    BL_ASSERT_SAME_BITS(quantile(hi, 2, 0.7), 0.8700000000000001);
    /* ... g < 0.5 goes up from A. */
    double lo[2] = {0.2, 0.1};
    BL_ASSERT_SAME_BITS(quantile(lo, 2, 0.1), 0.11000000000000001);

    /* n = 1: every quantile is the element. */
    double one = -7.25;
    for (int k = 0; k <= 10; k++)
        BL_ASSERT_SAME_BITS(quantile(&one, 1, k / 10.0), -7.25);
    BL_ASSERT_SAME_BITS(bl_np_quantile_sorted(&one, 1, 0.975), -7.25);

    /* Infinities go through the same arithmetic as in NumPy. */
    double inf[3] = {1.0, INFINITY, 2.0};
    BL_ASSERT_SAME_BITS(quantile(inf, 3, 0.0), 1.0);
    assert_true(isnan(quantile(inf, 3, 0.5)));  /* 2 + inf * 0 */
    assert_true(isnan(quantile(inf, 3, 0.75))); /* inf - inf * 0.5 */
    BL_ASSERT_SAME_BITS(quantile(inf, 3, 0.25), 1.5);
    double minf[3] = {1.0, -INFINITY, 2.0};
    assert_true(isnan(quantile(minf, 3, 0.0)));  /* -inf + inf * 0 */
    BL_ASSERT_SAME_BITS(quantile(minf, 3, 0.75), 1.5);

    /* The sorted entry point gives the same. */
    double sorted[4] = {1.0, 2.0, 3.0, 4.0};
    BL_ASSERT_SAME_BITS(bl_np_quantile_sorted(sorted, 4, 0.25), 1.75);
    BL_ASSERT_SAME_BITS(bl_np_quantile_sorted(sorted, 4, 0.75), 3.25);
}

static void test_quantile_nan_and_errors(void **state)
{
    (void)state;
    double a[5] = {1.0, 2.0, NAN, 4.0, 5.0};
    for (int k = 0; k <= 4; k++)
        assert_true(isnan(quantile(a, 5, k / 4.0)));
    double b[2] = {NAN, NAN};
    assert_true(isnan(quantile(b, 2, 0.5)));
    /* NumPy returns its own np.nan (sign bit clear), whatever the input's. */
    double negnan = -NAN;
    double c2[2] = {1.0, negnan};
    assert_true(bl_test_bits(quantile(c2, 2, 0.5)) == UINT64_C(0x7ff8000000000000));

    bl_error err = {0};
    double out;
    double c[3] = {1.0, 2.0, 3.0};
    assert_int_equal(bl_np_quantile(c, 0, 0.5, NULL, &out, &err), BL_EVALUE);
    assert_int_equal(bl_np_quantile(c, 3, -0.1, NULL, &out, &err), BL_EVALUE);
    assert_int_equal(bl_np_quantile(c, 3, 1.5, NULL, &out, &err), BL_EVALUE);
    assert_int_equal(bl_np_quantile(c, 3, NAN, NULL, &out, &err), BL_EVALUE);
    assert_string_equal(err.msg, "Quantiles must be in the range [0, 1]");

    /* Several at once: a bad q anywhere in the list fails before anything
     * is written, and NaN gives NaN for each. */
    const double qs[3] = {0.5, 0.25, 2.0};
    double outs[3] = {-1.0, -1.0, -1.0};
    assert_int_equal(bl_np_quantiles(c, 3, qs, 3, NULL, outs, &err), BL_EVALUE);
    assert_string_equal(err.msg, "Quantiles must be in the range [0, 1]");
    BL_ASSERT_SAME_BITS(outs[0], -1.0);
    assert_int_equal(bl_np_quantiles(c, 0, qs, 2, NULL, outs, &err), BL_EVALUE);
    assert_int_equal(bl_np_quantiles(c2, 2, qs, 2, NULL, outs, &err), BL_OK);
    assert_true(isnan(outs[0]) && isnan(outs[1]));
    BL_ASSERT_SAME_BITS(outs[2], -1.0);
    assert_int_equal(bl_np_quantiles(c, 3, qs, 2, NULL, outs, &err), BL_OK);
    BL_ASSERT_SAME_BITS(outs[0], 2.0);
    BL_ASSERT_SAME_BITS(outs[1], 1.5);

    /* A caller's scratch is used (and sorted) when given, even the input. */
    double d[3] = {3.0, 1.0, 2.0};
    assert_int_equal(bl_np_quantile(d, 3, 0.5, d, &out, &err), BL_OK);
    BL_ASSERT_SAME_BITS(out, 2.0);
    BL_ASSERT_SAME_BITS(d[0], 1.0);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    double a[5] = {5.0, 1.0, 4.0, 2.0, 3.0};
    bl_error err = {0};
    double out = 0.0;
    bl_alloc_fail_at(1);
    assert_int_equal(bl_np_quantile(a, 5, 0.5, NULL, &out, &err), BL_ENOMEM);
    assert_int_equal(err.status, BL_ENOMEM);
    bl_alloc_fail_at(1);
    assert_int_equal(bl_np_std(a, 5, 1, NULL, &out, &err), BL_ENOMEM);
    /* With scratch supplied nothing is allocated. */
    double scratch[5];
    bl_alloc_fail_at(1);
    assert_int_equal(bl_np_quantile(a, 5, 0.5, scratch, &out, &err), BL_OK);
    assert_int_equal(bl_np_std(a, 5, 1, scratch, &out, &err), BL_OK);
    assert_int_equal(bl_alloc_count(), 0);
    bl_alloc_fail_at(0);
}

/* ---- differential test against NumPy ------------------------------------ */

/* Must match QS in tests/oracle/numpy_ref.py (the record length checks it). */
static const double QS[] = {0.0, 0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 1.0, 1.0 / 3.0};
#define NQS (sizeof QS / sizeof *QS)

static void check_case(const double *a, size_t n, const char *kind, const double *want)
{
    const char *names[4] = {"sum", "mean", "std ddof 0", "std ddof 1"};
    double got[4 + NQS];
    bl_error err = {0};
    double *scratch = malloc((n ? n : 1) * sizeof *scratch);
    assert_non_null(scratch);
    got[0] = bl_np_sum(a, n);
    got[1] = bl_np_mean(a, n);
    assert_int_equal(bl_np_std(a, n, 0, scratch, &got[2], &err), BL_OK);
    assert_int_equal(bl_np_std(a, n, 1, NULL, &got[3], &err), BL_OK);
    for (size_t k = 0; k < NQS; k++) {
        double *s = k % 2 ? NULL : scratch;
        assert_int_equal(bl_np_quantile(a, n, QS[k], s, &got[4 + k], &err), BL_OK);
    }
    for (size_t k = 0; k < 4 + NQS; k++) {
        if (bl_test_bits(got[k]) != bl_test_bits(want[k])) {
            char qname[48];
            snprintf(qname, sizeof qname, "quantile %.17g", k >= 4 ? QS[k - 4] : 0.0);
            fail_msg("n=%zu kind=%s %s: got %a (%.17g), numpy %a (%.17g)", n, kind,
                     k < 4 ? names[k] : qname, got[k], got[k], want[k], want[k]);
        }
    }
    /* Every quantile from one sort (bl_np_quantiles), with and without
     * scratch, is NumPy's too. */
    for (int pass = 0; pass < 2; pass++) {
        double all[NQS];
        assert_int_equal(bl_np_quantiles(a, n, QS, NQS, pass ? NULL : scratch, all, &err), BL_OK);
        for (size_t k = 0; k < NQS; k++)
            if (bl_test_bits(all[k]) != bl_test_bits(want[4 + k]))
                fail_msg("n=%zu kind=%s bl_np_quantiles %.17g: got %a, numpy %a", n, kind, QS[k],
                         all[k], want[4 + k]);
    }
    /* Sorting once and reusing the sorted array gives the same quantiles. */
    memcpy(scratch, a, n * sizeof *a);
    double dummy;
    assert_int_equal(bl_np_quantile(scratch, n, 0.5, scratch, &dummy, &err), BL_OK);
    for (size_t k = 0; k < NQS; k++)
        assert_true(bl_test_bits(bl_np_quantile_sorted(scratch, n, QS[k])) == bl_test_bits(want[4 + k]));
    free(scratch);
}

static void test_against_numpy(void **state)
{
    (void)state;
    BL_REQUIRE_NUMPY();
    static const size_t fixed[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 127, 128, 129, 130,
                                   136, 255, 256, 257, 1000, 1023, 1024, 1031, 4096, 4097,
                                   8191, 8192, 8193, 16384, 16385, 20000, 50000};
    static const char *kinds[] = {"normal", "scaled", "ties"};
    enum { NFIXED = sizeof fixed / sizeof *fixed, NRANDOM = 12, NKINDS = 3 };
    size_t sizes[NFIXED + NRANDOM];
    memcpy(sizes, fixed, sizeof fixed);
    /* A fixed LCG, so a failure names a size that reproduces. */
    uint64_t lcg = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < NRANDOM; i++) {
        lcg = lcg * 6364136223846793005u + 1442695040888963407u;
        sizes[NFIXED + i] = (size_t)(lcg >> 33) % 20000 + 1;
    }
    size_t ncases = (NFIXED + NRANDOM) * NKINDS;

    size_t cap = ncases * 2 * 96 + 1, used = 0;
    char *req = malloc(cap);
    assert_non_null(req);
    for (size_t i = 0; i < NFIXED + NRANDOM; i++) {
        for (size_t k = 0; k < NKINDS; k++) {
            /* Seeds in the 256-bit display form, distinct per case. */
            unsigned long long seed = 0x5eed0000ull + i * 16 + k;
            used += (size_t)snprintf(req + used, cap - used,
                                     "data %llx%016llx %zu %s\nstats %llx%016llx %zu %s\n",
                                     seed, seed * 0x2545f4914f6cdd1dull, sizes[i], kinds[k],
                                     seed, seed * 0x2545f4914f6cdd1dull, sizes[i], kinds[k]);
            assert_true(used < cap);
        }
    }
    unsigned char *out;
    size_t len, pos = 0;
    bl_test_numpy(req, &out, &len);
    free(req);

    for (size_t i = 0; i < NFIXED + NRANDOM; i++) {
        for (size_t k = 0; k < NKINDS; k++) {
            size_t n = sizes[i], nb;
            const unsigned char *rec = bl_test_numpy_next(out, len, &pos, &nb);
            assert_int_equal(nb, n * sizeof(double));
            double *a = malloc(n * sizeof *a);
            assert_non_null(a);
            memcpy(a, rec, nb);
            rec = bl_test_numpy_next(out, len, &pos, &nb);
            assert_int_equal(nb, (4 + NQS) * sizeof(double));
            double want[4 + NQS];
            memcpy(want, rec, nb);
            check_case(a, n, kinds[k], want);
            free(a);
        }
    }
    assert_int_equal(pos, len);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_sums_start_from_positive_zero),
        cmocka_unit_test(test_pairwise_order),
        cmocka_unit_test(test_sum_chunks_of_8192),
        cmocka_unit_test(test_mean_std_small),
        cmocka_unit_test(test_quantile_by_hand),
        cmocka_unit_test(test_quantile_nan_and_errors),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_against_numpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
