/* The screens in front of the batch creation checks (src/models/
 * batch_common.h): bl_batch_all_finite and bl_batch_all_binary must say
 * "all pass" exactly when the per-entry checks they stand for would find
 * nothing, for every special value at every position (the loops have no
 * early exit, so a position effect would be a bug in the reduction), and
 * bl_batch_check_cast must report bl_check_cast's first failure word for
 * word. Tests of the families' messages are in test_falandays.c and
 * test_sorn.c. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "models/batch_common.h"
#include "support.h"

/* Around every edge of the float64 -> float32 cast: the overflow
 * threshold (half an ulp above FLT_MAX rounds to infinity, to even), the
 * subnormals, the signed zeros, and the non-finite values. */
static double specials[32];
static size_t nspecials;

static void fill_specials(void)
{
    const double half_up = 0x1.ffffffp127; /* halfway between FLT_MAX and 2^128 */
    const double v[] = {0.0,
                        -0.0,
                        1.0,
                        -1.0,
                        0.5,
                        2.0,
                        FLT_MAX,
                        -FLT_MAX,
                        nextafter(FLT_MAX, INFINITY),
                        nextafter(half_up, 0.0),
                        half_up,
                        -half_up,
                        nextafter(half_up, INFINITY),
                        0x1p128,
                        DBL_MAX,
                        -DBL_MAX,
                        DBL_MIN,
                        0x1p-1074,
                        0x1p-150,
                        FLT_MIN,
                        INFINITY,
                        -INFINITY,
                        NAN,
                        -NAN};
    nspecials = sizeof v / sizeof *v;
    memcpy(specials, v, sizeof v);
}

static bool ref_finite(const double *p, size_t n, bl_dtype dt)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(bl_dtype_cast(dt, p[i])))
            return false;
    return true;
}

static bool ref_binary(const double *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!(p[i] == 0.0 || p[i] == 1.0))
            return false;
    return true;
}

static void test_screens(void **state)
{
    (void)state;
    fill_specials();
    size_t finite_fails[2] = {0}, binary_fails = 0, cases = 0;
    double a[11];
    for (size_t len = 1; len <= 11; len++)
        for (size_t pos = 0; pos < len; pos++)
            for (size_t s = 0; s < nspecials; s++) {
                /* Fillers that pass every screen, then one special. */
                for (size_t i = 0; i < len; i++)
                    a[i] = (double)(i % 2);
                a[pos] = specials[s];
                for (int d = 0; d < 2; d++) {
                    const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
                    const bool want = ref_finite(a, len, dt);
                    if (bl_batch_all_finite(a, len, dt) != want)
                        fail_msg("all_finite %s len %zu pos %zu value %a: screen %d, checks %d",
                                 bl_dtype_name(dt), len, pos, specials[s], !want, want);
                    finite_fails[d] += !want;
                }
                const bool want = ref_binary(a, len);
                if (bl_batch_all_binary(a, len) != want)
                    fail_msg("all_binary len %zu pos %zu value %a: screen %d, checks %d", len, pos,
                             specials[s], !want, want);
                binary_fails += !want;
                cases++;
            }
    /* Both outcomes were reached, and float32 rejects more than float64. */
    assert_true(finite_fails[0] > 0 && finite_fails[0] < cases);
    assert_true(finite_fails[1] > finite_fails[0] && finite_fails[1] < cases);
    assert_true(binary_fails > 0 && binary_fails < cases);
    /* Nothing to screen passes. */
    assert_true(bl_batch_all_finite(NULL, 0, BL_FLOAT32));
    assert_true(bl_batch_all_binary(NULL, 0));
}

static void test_check_cast_messages(void **state)
{
    (void)state;
    double ok[3] = {1.0, -2.5, FLT_MAX};
    double big[4] = {0.0, 1.0, 1e39, NAN};
    const bl_named_values v[2] = {{"acts", ok, 3}, {"weights", big, 4}};
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        for (size_t n = 1; n <= 2; n++) {
            bl_error e1 = {0}, e2 = {0};
            const bl_status s1 = bl_check_cast(v, n, "", 3, dt, &e1);
            const bl_status s2 = bl_batch_check_cast(v, n, "", 3, dt, &e2);
            assert_int_equal(s1, s2);
            if (s1 != BL_OK)
                assert_string_equal(e1.msg, e2.msg);
        }
    }
    bl_error e = {0};
    assert_int_equal(bl_batch_check_cast(v, 2, "", 3, BL_FLOAT32, &e), BL_EVALUE);
    assert_string_equal(e.msg, "initials[3]: weights is not finite after casting to float32");
    assert_int_equal(bl_batch_check_cast(v, 1, "", 3, BL_FLOAT32, &e), BL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_screens),
        cmocka_unit_test(test_check_cast_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
