/* Falandays model batches (spec/models.md §2, §7.1, §7.3, §8): the archival
 * fixture replays, the worked examples, freezes and resets, inactive and
 * batched slots, float32 failure detection, the argument contracts, the
 * initial-state and cast validation, and allocation failures.
 *
 * Initial states here are built by hand (plain calloc, so the allocation
 * failure tests count only the batch's own allocations). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/sha256.h"
#include "support.h"
#include "model_support.h"

/* ---- initial states ------------------------------------------------------- */

static void set4(double *dst, double a, double b, double c, double d)
{
    dst[0] = a;
    dst[1] = b;
    dst[2] = c;
    dst[3] = d;
}

/* ---- batch helpers ---------------------------------------------------------- */

#define FAMILY (&bl_test_falandays_family)

static bl_model *create(bl_falandays_init **ins, size_t nslots, bl_dtype dtype)
{
    return bl_test_family_create(FAMILY, ins, nslots, dtype);
}

static void expect_create_error(bl_falandays_init **ins, size_t nslots, bl_dtype dtype,
                                const char *needle)
{
    bl_test_family_create_fails(FAMILY, ins, nslots, dtype, needle);
}

static const int32_t ALL3[3] = {1, 1, 1};

/* ---- deterministic pseudo-random states ---------------------------------------- */

/* Not a true normal; the tests only need signed, spread-out noise. */
static double nrand(bl_test_trng *g)
{
    double s = 0;
    for (int k = 0; k < 12; k++)
        s += bl_test_urand(g);
    return s - 6.0;
}

static bl_falandays_init *random_init(bl_test_trng *g, size_t n, size_t r, size_t e,
                                      const bl_falandays_config *c)
{
    bl_falandays_init *in = bl_test_falandays_init_create(n, r, e, c);
    bool dale = c->axis == BL_AXIS_DALE;
    for (size_t i = 0; i < n; i++) {
        if (dale && bl_test_urand(g) < 0.3)
            in->signs[i] = -1;
        in->acts[i] = bl_test_urand(g) - 0.3;
        in->targets[i] = c->targ_min + bl_test_urand(g);
        in->spikes[i] = bl_test_urand(g) < 0.5 ? 1.0 : 0.0;
        for (size_t j = 0; j < n; j++) {
            bool link = i != j && bl_test_urand(g) < 0.45;
            in->recurrent_mask[i * n + j] = link;
            double w = dale ? 0.8 * bl_test_urand(g) : 1.2 * bl_test_urand(g) - 0.4;
            /* A few weights outside the mask: they drive on both axes and
             * Dale clearing removes them. */
            if (link || bl_test_urand(g) < 0.1)
                in->weights[i * n + j] = w;
        }
        for (size_t q = 0; q < r; q++)
            if (bl_test_urand(g) < 0.6)
                in->input_weights[i * r + q] = 1.875;
        for (size_t k = 0; k < e; k++)
            in->output_mask[i * e + k] =
                bl_test_urand(g) < 0.5 ? (bl_test_urand(g) < 0.3 ? 0.5 : 1.0) : 0.0;
    }
    return in;
}

/* ---- §8 fixture replays ----------------------------------------------------------- */

static void check_sha(const char *dir, const char *want)
{
    char rel[256], hex[2 * BL_SHA256_BYTES + 1];
    uint8_t d[BL_SHA256_BYTES];
    bl_error err = {0};
    snprintf(rel, sizeof rel, "fixtures/%s.npz", dir);
    if (bl_sha256_file(bl_test_shared_path(rel), d, &err) != BL_OK)
        fail_msg("%s", err.msg);
    bl_hex(d, sizeof d, hex);
    assert_string_equal(hex, want);
}

/* Replays `frames` frames of a fixture. float64 must be bit-exact (the gate
 * is 1e-9, exactness is asserted too because the spec's association
 * reproduces the fixtures exactly); float32 is held to `tol`. */
static void replay(const char *dir, const char *sha, bool dale, bl_dtype dtype, size_t frames,
                   double tol)
{
    BL_REQUIRE_SHARED();
    check_sha(dir, sha);
    bl_falandays_init *in = bl_test_fixture_init(dir, dale);
    const bl_falandays_config c = in->config;
    assert_true(c.lrate_wmat == 0.1);
    assert_true(c.rectify == !dale);

    bl_npy *inputs = bl_test_fixture(dir, "inputs"), *noise = bl_test_fixture(dir, "noise_draws");
    bl_npy *acts_t = bl_test_fixture(dir, "acts_T"), *targets_t = bl_test_fixture(dir, "targets_T");
    bl_npy *spikes_t = bl_test_fixture(dir, "spikes_T");
    bl_npy *margin_t = bl_test_fixture(dir, "margin_T");
    const size_t n = in->n, nr = in->r, ne = in->e;
    assert_int_equal(n, 24);
    assert_int_equal(nr, 8);
    assert_int_equal(ne, 2);
    assert_int_equal(inputs->shape[0], 40);

    bl_model *m = create(&in, 1, dtype);

    double maxdev = 0;
    size_t inexact = 0, spike_checked = 0, near = 0;
    double *prev_spikes = bl_test_xcalloc(n, sizeof(double)),
           *prev_targets = bl_test_xcalloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++)
        prev_targets[i] = c.targ_min;
    for (size_t t = 0; t < frames; t++) {
        bl_test_step(m, (const double *)inputs->data + t * nr, (const double *)noise->data + t * n,
                     NULL);
        assert_int_equal(bl_model_finite(m)[0], 1);
        bl_snapshot *s = bl_test_snap(m, 0);
        const double *acts = bl_test_sget(s, "acts"), *targets = bl_test_sget(s, "targets");
        const double *spikes = bl_test_sget(s, "spikes"), *prev = bl_test_sget(s, "previous");
        const double *errors = bl_test_sget(s, "errors"), *counts = bl_test_sget(s, "counts");
        const double *eff = bl_test_sget(s, "effectors"), *om = bl_test_sget(s, "output_mask");
        const double *mask = bl_test_sget(s, "recurrent_mask");
        for (size_t i = 0; i < n; i++) {
            double fa = bl_npy_get_f64(acts_t, t * n + i);
            double ft = bl_npy_get_f64(targets_t, t * n + i);
            double da = fabs(acts[i] - fa), dt = fabs(targets[i] - ft);
            if (da > maxdev)
                maxdev = da;
            if (dt > maxdev)
                maxdev = dt;
            inexact += (bl_test_bits(acts[i]) != bl_test_bits(fa)) +
                       (bl_test_bits(targets[i]) != bl_test_bits(ft));
            if (!(da <= tol && dt <= tol))
                fail_msg("%s frame %zu node %zu: acts %.17g vs %.17g, targets %.17g vs %.17g",
                         dir, t, i, acts[i], fa, targets[i], ft);
            if (fabs(bl_npy_get_f64(margin_t, t * n + i)) > 1e-6) {
                spike_checked++;
                if (spikes[i] != bl_npy_get_f64(spikes_t, t * n + i))
                    fail_msg("%s frame %zu node %zu: spike differs", dir, t, i);
            }
            /* Equations that the snapshot must satisfy on its own. */
            assert_true(prev[i] == prev_spikes[i]);
            if (dtype == BL_FLOAT64)
                bl_test_assert_bits(errors[i], acts[i] - prev_targets[i], "errors");
            double cnt = 0;
            for (size_t j = 0; j < n; j++)
                cnt += mask[i * n + j] != 0 && prev[j] != 0;
            assert_true(counts[i] == cnt);
        }
        for (size_t e = 0; e < ne; e++) {
            double tot = 0, den = 0;
            for (size_t i = 0; i < n; i++) {
                tot += spikes[i] * om[i * ne + e];
                den += om[i * ne + e];
            }
            if (dtype == BL_FLOAT64)
                bl_test_assert_bits(eff[e], den > 0 ? tot / den : 0.0, "effector");
            else
                assert_true(fabs(eff[e] - (den > 0 ? tot / den : 0.0)) <= 1e-6);
        }
        memcpy(prev_spikes, spikes, n * sizeof(double));
        memcpy(prev_targets, targets, n * sizeof(double));
        bl_snapshot_destroy(s);
    }
    for (size_t k = 0; k < margin_t->count; k++)
        near += fabs(bl_npy_get_f64(margin_t, k)) <= 1e-6;
    assert_true((double)near < 0.05 * (double)margin_t->count);
    assert_true(spike_checked > 0);
    print_message("%s %s, %zu frames: max |deviation| %.3g, %zu inexact of %zu acts/targets\n",
                  dir, dtype == BL_FLOAT32 ? "float32" : "float64", frames, maxdev, inexact,
                  2 * frames * n);
    if (dtype == BL_FLOAT64)
        assert_int_equal(inexact, 0);

    free(prev_spikes);
    free(prev_targets);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
    bl_npy *all[] = {inputs, noise, acts_t, targets_t, spikes_t, margin_t};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        bl_npy_destroy(all[k]);
}

#define SHA_BASE "2e9ab4482e97ae190d82c28989799480f0e750c31b86833a9cdfdbd9fd643108"
#define SHA_DALE "1650b9c3627e626af4d6bbb504b21f3de0deeec76aa981d3d268378f946143ca"

static void test_fixture_falandays(void **state)
{
    (void)state;
    replay("falandays", SHA_BASE, false, BL_FLOAT64, 40, 1e-9);
}

static void test_fixture_falandays_dale(void **state)
{
    (void)state;
    replay("falandays_dale", SHA_DALE, true, BL_FLOAT64, 40, 1e-9);
}

/* Not in the reference suite (§8.3): float32 tracks the fixtures for a few
 * frames only, so the gate is loose and the run short. */
static void test_fixture_float32_short(void **state)
{
    (void)state;
    replay("falandays", SHA_BASE, false, BL_FLOAT32, 12, 2e-6);
    replay("falandays_dale", SHA_DALE, true, BL_FLOAT32, 12, 2e-6);
}

/* ---- §2.7 worked examples ----------------------------------------------------------- */

static void test_threshold_equality_residual_error_and_floor(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_tiny_init(&c);
    set4(in->recurrent_mask, 1, 1, 1, 1);
    bl_model *m = create(&in, 1, BL_FLOAT64);
    const double u[2] = {2, -3};
    bl_test_step(m, u, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    const double *spikes = bl_test_sget(s, "spikes"), *acts = bl_test_sget(s, "acts");
    const double *errors = bl_test_sget(s, "errors"), *targets = bl_test_sget(s, "targets");
    const double *w = bl_test_sget(s, "weights");
    assert_true(spikes[0] == 1 && spikes[1] == 0);
    assert_true(acts[0] == 0 && acts[1] == -3);
    assert_true(errors[0] == -1 && errors[1] == -4);
    assert_true(targets[0] == 1 && targets[1] == 1);
    for (int k = 0; k < 4; k++)
        bl_test_assert_bits(w[k], 0.0, "weights unchanged");
    assert_int_equal(bl_model_finite(m)[0], 1);
    /* The effectors are the identity readout of the new spikes. */
    const double *eff = bl_model_effector_data(m);
    assert_true(eff[0] == 1 && eff[1] == 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

static void test_learning_uses_previous_spikes_and_destination_mask(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_tiny_init(&c);
    in->spikes[0] = 1;
    set4(in->weights, 0, 7, 0, 0);
    set4(in->recurrent_mask, 1, 0, 1, 1);
    bl_model *m = create(&in, 1, BL_FLOAT64);
    const double u[2] = {0, 1.5};
    bl_test_step(m, u, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    const double *spikes = bl_test_sget(s, "spikes"), *w = bl_test_sget(s, "weights");
    const double *prev = bl_test_sget(s, "previous"), *targets = bl_test_sget(s, "targets");
    assert_true(spikes[0] == 0 && spikes[1] == 0);
    assert_true(w[0] == 1 && w[1] == 7 && w[2] == -0.5 && w[3] == 0);
    assert_true(prev[0] == 1 && prev[1] == 0);
    assert_true(targets[0] == 1);
    bl_test_assert_bits(targets[1], 1.0 + 0.5 * 0.1, "target");
    assert_true(fabs(targets[1] - 1.05) < 1e-12);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

static void test_dale_signed_learning_floor_and_unmasked_clearing(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.lrate_targ = 0.0;
    c.axis = BL_AXIS_DALE;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    set4(in->weights, 0.1, 0.2, 0.4, 0.1);
    set4(in->recurrent_mask, 1, 0, 1, 1);
    in->signs[0] = -1;
    in->spikes[0] = 1;
    bl_model *m = create(&in, 1, BL_FLOAT64);
    const double u[2] = {0, 2};
    bl_test_step(m, u, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    const double *w = bl_test_sget(s, "weights"), *acts = bl_test_sget(s, "acts");
    const double *errors = bl_test_sget(s, "errors"), *targets = bl_test_sget(s, "targets");
    /* Node 0: a = -0.1, e = -1.1, the inhibitory source's update raises
     * 0.1 - 1.1 < 0, clamped; the unmasked entry is cleared. */
    bl_test_assert_bits(acts[0], (0.0 + 0.0) + 0.1 * -1.0, "acts[0]");
    bl_test_assert_bits(errors[0], acts[0] - 1.0, "errors[0]");
    bl_test_assert_bits(w[0], 0.0, "W[0][0]");
    bl_test_assert_bits(w[1], 0.0, "W[0][1]");
    /* Node 1: a = 1.6, e = 0.6, W[1][0] = 0.4 + 0.6. */
    double a1 = (0.0 + 2.0) + 0.4 * -1.0, e1 = a1 - 1.0;
    bl_test_assert_bits(acts[1], a1, "acts[1]");
    bl_test_assert_bits(w[2], 0.4 - -((e1 / 1.0) * 1.0), "W[1][0]");
    assert_true(fabs(w[2] - 1.0) < 1e-12);
    bl_test_assert_bits(w[3], 0.1, "W[1][1]");
    assert_true(targets[0] == 1 && targets[1] == 1);
    assert_int_equal(bl_model_finite(m)[0], 1);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* Oosawa σ from the pre-noise activation and the old threshold; noise
 * before rectification; finiteness judged before rectification. */
static void test_oosawa_drive_and_rectify_order(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.drive = BL_DRIVE_OOSAWA;
    c.membrane_noise = 0.5;
    c.noise_gain = 0.25;
    c.learn_on = false;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    bl_model *m = create(&in, 1, BL_FLOAT64);
    /* Node 0: θ = 2, a = 1, σ = 0.5 + 0.25 * 1, a = 1 + 2 * 0.75 = 2.5 -> spike,
     * residual 0.5. Node 1: a = 3 >= θ, deficit negative so σ = 0.5,
     * a = 3 - 1 * 0.5 = 2.5 -> spike, residual 0.5. */
    const double u[2] = {1, 3}, xi[2] = {2, -1};
    bl_test_step(m, u, xi, NULL);
    const double *acts_view = bl_model_activity_data(m);
    assert_true(acts_view[0] == 1 && acts_view[1] == 1);
    bl_snapshot *s = bl_test_snap(m, 0);
    assert_true(bl_test_sget(s, "acts")[0] == 0.5 && bl_test_sget(s, "acts")[1] == 0.5);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);

    /* An infinite input would poison both nodes (inf * 0); overflow in
     * node 1's own sum reaches -inf without touching node 0. */
    c = bl_test_tiny_config();
    c.rectify = true;
    in = bl_test_tiny_init(&c);
    in->acts[1] = -1e308;
    m = create(&in, 1, BL_FLOAT64);
    const double v[2] = {-1, -1e308};
    bl_test_step(m, v, NULL, NULL);
    s = bl_test_snap(m, 0);
    bl_test_assert_bits(bl_test_sget(s, "acts")[0], 0.0, "rectified");
    bl_test_assert_bits(bl_test_sget(s, "acts")[1], 0.0, "rectified -inf");
    assert_true(bl_test_sget(s, "raw_finite")[0] == 1 && bl_test_sget(s, "raw_finite")[1] == 0);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* In float32 the kernel forms 1 - leak in float, which for many leaks is
 * not the float rounding of the double 1 - leak. */
static void test_float32_leak_complement_in_dtype(void **state)
{
    (void)state;
    double leak = -1;
    for (int k = 1; k < 1000 && leak < 0; k++) {
        double l = k / 1000.0;
        if (1.0f - (float)l != (float)(1.0 - l))
            leak = l;
    }
    assert_true(leak > 0);
    bl_falandays_config c = bl_test_tiny_config();
    c.leak = leak;
    c.learn_on = false;
    c.threshold_mult = 100;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    in->acts[0] = 1;
    bl_model *m = create(&in, 1, BL_FLOAT32);
    bl_test_step(m, NULL, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    float want = 1.0f * (1.0f - (float)leak);
    bl_test_assert_bits(bl_test_sget(s, "acts")[0], (double)want, "acts");
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* ---- §7.1 #5 freezes and resets ------------------------------------------------------- */

static void test_freeze_modes_are_distinct_and_reset_restores_flags(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *ins[3];
    for (int b = 0; b < 3; b++) {
        ins[b] = bl_test_tiny_init(&c);
        set4(ins[b]->recurrent_mask, 1, 1, 1, 1);
        ins[b]->spikes[0] = ins[b]->spikes[1] = 1;
    }
    bl_model *m = create(ins, 3, BL_FLOAT64);
    bl_snapshot *initial[3];
    for (int b = 0; b < 3; b++)
        initial[b] = bl_test_snap(m, (size_t)b);
    const int32_t s1[3] = {0, 1, 0}, s2[3] = {0, 0, 1}, s12[3] = {0, 1, 1};
    bl_test_freeze(m, s1, false);
    bl_test_freeze(m, s2, true);
    const double u[6] = {1.5, 1.5, 1.5, 1.5, 1.5, 1.5};
    bl_test_step(m, u, NULL, NULL);

    bl_snapshot *after[3];
    for (int b = 0; b < 3; b++)
        after[b] = bl_test_snap(m, (size_t)b);
    const double *w0 = bl_test_sget(after[0], "weights");
    for (int k = 0; k < 4; k++)
        assert_true(w0[k] == -0.25); /* e = 0.5 over two spiking sources */
    for (int b = 1; b < 3; b++)
        assert_memory_equal(bl_test_sget(after[b], "weights"), bl_test_sget(initial[b], "weights"),
                            4 * sizeof(double));
    for (int b = 0; b < 3; b++) {
        const double *t = bl_test_sget(after[b], "targets");
        double want = b < 2 ? 1.0 + 0.5 * 0.1 : 1.0;
        assert_true(t[0] == want && t[1] == want);
    }
    assert_true(bl_test_sget(after[1], "learning")[0] == 1 &&
                bl_test_sget(after[1], "weight_learning")[0] == 0);
    assert_true(bl_test_sget(after[2], "learning")[0] == 0 &&
                bl_test_sget(after[2], "weight_learning")[0] == 0);

    bl_test_reset(m, s12);
    bl_snapshot *slot0 = bl_test_snap(m, 0);
    bl_test_assert_snap_identical(slot0, after[0], "slot 0 untouched by the reset");
    for (int b = 1; b < 3; b++) {
        bl_snapshot *r = bl_test_snap(m, (size_t)b);
        bl_test_assert_snap_identical(r, initial[b], "reset slot");
        assert_true(bl_test_sget(r, "learning")[0] == 1 &&
                    bl_test_sget(r, "weight_learning")[0] == 1);
        bl_snapshot_destroy(r);
    }
    bl_test_step(m, u, NULL, s12);
    for (int b = 1; b < 3; b++) {
        bl_snapshot *r = bl_test_snap(m, (size_t)b);
        assert_memory_equal(bl_test_sget(r, "weights"), w0, 4 * sizeof(double));
        bl_snapshot_destroy(r);
    }
    bl_snapshot *slot0b = bl_test_snap(m, 0);
    bl_test_assert_snap_identical(slot0b, after[0], "slot 0 inactive");
    bl_snapshot_destroy(slot0);
    bl_snapshot_destroy(slot0b);
    for (int b = 0; b < 3; b++) {
        bl_snapshot_destroy(initial[b]);
        bl_snapshot_destroy(after[b]);
        bl_test_falandays_init_destroy(ins[b]);
    }
    bl_model_destroy(m);
}

/* ---- §7.1 #6 and batching ------------------------------------------------------------------ */

enum { BN = 7, BR = 3, BE = 2, BSLOTS = 4, BFRAMES = 24 };

static void batch_configs(bl_falandays_config c[BSLOTS])
{
    for (int b = 0; b < BSLOTS; b++) {
        bl_falandays_config_default(&c[b]);
        c[b].drive = BL_DRIVE_OOSAWA;
        c[b].noise_gain = 0.1;
        c[b].membrane_noise = 0.05 * b;
        c[b].lrate_wmat = 0.3;
        c[b].lrate_targ = 0.05;
    }
    c[1].axis = BL_AXIS_DALE;
    c[1].rectify = true;
    c[2].learn_on = false;
    c[3].axis = BL_AXIS_DALE;
    c[3].leak = 0.1;
    c[3].threshold_mult = 1.5;
}

/* Every slot of a mixed batch, stepped on an irregular activity pattern,
 * equals the same slot run alone on exactly its active frames. */
static void batch_matches_single(bl_dtype dtype)
{
    bl_test_trng g = {0x9e3779b97f4a7c15u};
    bl_falandays_config c[BSLOTS];
    batch_configs(c);
    bl_falandays_init *ins[BSLOTS];
    bl_model *single[BSLOTS];
    for (int b = 0; b < BSLOTS; b++) {
        ins[b] = random_init(&g, BN, BR, BE, &c[b]);
        single[b] = create(&ins[b], 1, dtype);
    }
    bl_model *m = create(ins, BSLOTS, dtype);
    size_t spikes_seen = 0;
    for (int t = 0; t < BFRAMES; t++) {
        double u[BSLOTS * BR], xi[BSLOTS * BN];
        int32_t active[BSLOTS];
        for (int b = 0; b < BSLOTS; b++) {
            active[b] = (t + b) % 3 != 0;
            for (int q = 0; q < BR; q++)
                u[b * BR + q] = active[b] ? 2.0 * bl_test_urand(&g) - 0.3 : 999.0;
            for (int i = 0; i < BN; i++)
                xi[b * BN + i] = active[b] ? nrand(&g) : 999.0;
        }
        bl_test_step(m, u, xi, active);
        for (int b = 0; b < BSLOTS; b++) {
            if (active[b])
                bl_test_step(single[b], u + b * BR, xi + b * BN, NULL);
            bl_snapshot *x = bl_test_expect_as_single(m, (size_t)b, single[b]);
            const double *sp = bl_test_sget(x, "spikes");
            for (int i = 0; i < BN; i++)
                spikes_seen += sp[i] != 0;
            bl_snapshot_destroy(x);
        }
    }
    assert_true(spikes_seen > 0);
    bl_model_destroy(m);
    for (int b = 0; b < BSLOTS; b++) {
        bl_model_destroy(single[b]);
        bl_test_falandays_init_destroy(ins[b]);
    }
}

BL_TEST_PER_DTYPE(test_batch_matches_single, batch_matches_single)

static void test_inactive_slots_hold_state(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_dtype dtype = d ? BL_FLOAT32 : BL_FLOAT64;
        bl_test_trng g = {12345};
        bl_falandays_config c;
        bl_falandays_config_default(&c);
        c.drive = BL_DRIVE_OOSAWA;
        c.noise_gain = 0.1;
        bl_falandays_init *ins[3];
        for (int b = 0; b < 3; b++)
            ins[b] = random_init(&g, BN, BR, BE, &c);
        bl_model *m = create(ins, 3, dtype);
        bl_snapshot *before = bl_test_snap(m, 1);
        const int32_t active[3] = {1, 0, 1};
        double inf_u[3 * BR], xi[3 * BN];
        for (int t = 0; t < 6; t++) {
            for (int k = 0; k < 3 * BR; k++)
                inf_u[k] = k / BR == 1 ? INFINITY : bl_test_urand(&g);
            for (int k = 0; k < 3 * BN; k++)
                xi[k] = k / BN == 1 ? NAN : nrand(&g);
            bl_test_step(m, inf_u, xi, active);
            /* Freezes and resets aimed elsewhere leave it alone too. */
            const int32_t others[3] = {1, 0, 0};
            bl_test_freeze(m, others, t % 2 == 0);
            bl_test_reset(m, others);
        }
        bl_test_expect_slot_kept(m, 1, before, "inactive slot");
        bl_model_destroy(m);
        for (int b = 0; b < 3; b++)
            bl_test_falandays_init_destroy(ins[b]);
    }
}

/* ---- §7.1 #8 float32, zero effector degree, non-finite detection ----------------------- */

static void test_zero_effector_degree_float32_and_nonfinite(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_tiny_init(&c);
    set4(in->output_mask, 0, 0, 0, 0);
    bl_model *m = create(&in, 1, BL_FLOAT32);
    assert_int_equal(bl_model_dtype(m), BL_FLOAT32);
    const double u[2] = {3, 3};
    bl_test_step(m, u, NULL, NULL);
    const float *eff = bl_model_effector_data(m), *act = bl_model_activity_data(m);
    assert_true(eff[0] == 0.0f && eff[1] == 0.0f);
    assert_true(act[0] == 1.0f && act[1] == 1.0f);
    assert_int_equal(bl_model_finite(m)[0], 1);
    const double v[2] = {INFINITY, 0};
    bl_test_step(m, v, NULL, NULL);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_test_reset(m, ALL3);
    assert_int_equal(bl_model_finite(m)[0], 1);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* The model never latches: a frame that is finite again reports 1. */
static void test_finite_is_recomputed_every_frame(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.lrate_targ = 1e38;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    bl_model *m = create(&in, 1, BL_FLOAT32);
    const double u[2] = {-1e38, 0};
    bl_test_step(m, u, NULL, NULL);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_test_freeze(m, ALL3, true);
    bl_test_step(m, NULL, NULL, NULL);
    assert_int_equal(bl_model_finite(m)[0], 1);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* ---- §7.1 #10 shapes, dtypes and the active mask --------------------------------------- */

static void test_shape_and_dtype_contracts(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *ins[2] = {bl_test_tiny_init(&c), bl_test_tiny_init(&c)};
    expect_create_error(ins, 0, BL_FLOAT64, "at least one");
    expect_create_error(NULL, 1, BL_FLOAT64, "at least one");
    expect_create_error(ins, 2, (bl_dtype)7, "float64 or float32");
    bl_falandays_init *wide = bl_test_falandays_init_create(3, 2, 2, &c);
    bl_falandays_init *mixed[2] = {ins[0], wide};
    expect_create_error(mixed, 2, BL_FLOAT64, "dimensions");
    bl_test_falandays_init_destroy(wide);
    wide = bl_test_falandays_init_create(2, 3, 2, &c);
    mixed[1] = wide;
    expect_create_error(mixed, 2, BL_FLOAT64, "dimensions");
    bl_test_falandays_init_destroy(wide);

    for (int d = 0; d < 2; d++) {
        bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        bl_model *m = create(ins, 2, dt);
        bl_test_expect_call_contracts(FAMILY, m, dt, 2);
        bl_model_destroy(m);
    }
    bl_model_destroy(NULL);
    bl_test_falandays_init_destroy(ins[0]);
    bl_test_falandays_init_destroy(ins[1]);
}

/* ---- §2.2 initial-state validation ------------------------------------------------------- */

static void test_initial_state_validation(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_tiny_init(&c);
    bl_falandays_init *ok = bl_test_tiny_init(&c);
    bl_falandays_init *pair[2] = {ok, in};

    in->recurrent_mask[1] = 0.1;
    expect_create_error(&in, 1, BL_FLOAT64, "binary before integer conversion");
    expect_create_error(pair, 2, BL_FLOAT64, "initials[1]");
    in->recurrent_mask[1] = NAN;
    expect_create_error(&in, 1, BL_FLOAT64, "binary before integer conversion");
    in->recurrent_mask[1] = 1;

    in->signs[1] = 0;
    expect_create_error(&in, 1, BL_FLOAT64, "signs");
    in->signs[1] = -1;
    expect_create_error(&in, 1, BL_FLOAT64, "unsigned axis");
    in->config.axis = BL_AXIS_DALE;
    bl_model *m = create(&in, 1, BL_FLOAT64);
    bl_model_destroy(m);
    in->config.axis = BL_AXIS_UNSIGNED;
    in->signs[1] = 1;

    double *const fields[] = {in->weights, in->input_weights, in->output_mask,
                              in->acts,    in->targets,       in->spikes};
    const char *const names[] = {"weights", "input_weights", "output_mask", "acts", "targets",
                                 "spikes"};
    bl_test_expect_values_rejected(FAMILY, &in, BL_FLOAT64, fields, names, 6, 1, NAN, INFINITY,
                                   "%s must be finite", false);
    in->output_mask[1] = -0.5;
    expect_create_error(&in, 1, BL_FLOAT64, "output_mask");
    in->output_mask[1] = 0;

    in->config.leak = 1.5;
    expect_create_error(&in, 1, BL_FLOAT64, "leak");
    in->config.leak = 0;
    in->config.targ_min = 0;
    expect_create_error(&in, 1, BL_FLOAT64, "targ_min");
    in->config.targ_min = 1;

    size_t keep_n = in->n;
    in->n = 0;
    expect_create_error(&in, 1, BL_FLOAT64, "N >= 1");
    in->n = keep_n;
    in->r = 0;
    expect_create_error(&in, 1, BL_FLOAT64, "R >= 1");
    in->r = 2;
    in->e = 0;
    expect_create_error(&in, 1, BL_FLOAT64, "E >= 1");
    in->e = 2;
    double *keep_w = in->weights;
    in->weights = NULL;
    expect_create_error(&in, 1, BL_FLOAT64, "weights");
    in->weights = keep_w;
    bl_falandays_init *none = NULL;
    expect_create_error(&none, 1, BL_FLOAT64, "initials[0]");

    m = create(&in, 1, BL_FLOAT32);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
    bl_test_falandays_init_destroy(ok);
}

/* The batch owns deep copies: changing the caller's arrays or a snapshot
 * after the fact changes nothing. */
static void test_owned_storage(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_tiny_init(&c);
    set4(in->weights, 0.5, 0.25, 0.125, 1);
    set4(in->recurrent_mask, 0, 1, 1, 0);
    bl_model *m = create(&in, 1, BL_FLOAT64);
    bl_snapshot *a = bl_test_snap(m, 0);
    set4(in->weights, 9, 9, 9, 9);
    in->acts[0] = 9;
    ((double *)bl_test_sget(a, "weights"))[0] = 42;
    bl_snapshot *b = bl_test_snap(m, 0);
    assert_true(bl_test_sget(b, "weights")[0] == 0.5 && bl_test_sget(b, "acts")[0] == 0);
    bl_test_reset(m, ALL3);
    bl_snapshot *r = bl_test_snap(m, 0);
    bl_test_assert_snap_identical(r, b, "reset after caller mutation");
    bl_snapshot_destroy(a);
    bl_snapshot_destroy(b);
    bl_snapshot_destroy(r);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* The snapshot's keys, shapes and integer marks. */
static void test_snapshot_layout(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_falandays_init_create(3, 2, 4, &c);
    in->spikes[1] = 1;
    in->output_mask[1 * 4 + 2] = 2;
    in->output_mask[0 * 4 + 2] = 2;
    in->weights[1] = -0.0;
    bl_model *m = create(&in, 1, BL_FLOAT32);
    bl_snapshot *s = bl_test_snap(m, 0);
    const bl_test_layout keys[] = {
        {"acts", 1, 3, 1, false},          {"targets", 1, 3, 1, false},
        {"spikes", 1, 3, 1, false},        {"previous", 1, 3, 1, false},
        {"errors", 1, 3, 1, false},        {"counts", 1, 3, 1, true},
        {"weights", 2, 3, 3, false},       {"effectors", 1, 4, 1, false},
        {"finite", 0, 1, 1, true},         {"learning", 0, 1, 1, true},
        {"weight_learning", 0, 1, 1, true}, {"raw_finite", 1, 3, 1, true},
        {"recurrent_mask", 2, 3, 3, true}, {"input_weights", 2, 3, 2, false},
        {"output_mask", 2, 3, 4, false},   {"signs", 1, 3, 1, true},
    };
    bl_test_expect_layout(s, keys, sizeof keys / sizeof *keys);
    assert_null(bl_snapshot_get(s, "w_ee"));
    /* Initial effectors are the readout of the initial spikes. */
    const double *eff = bl_test_sget(s, "effectors");
    assert_true(eff[0] == 0 && eff[1] == 0 && eff[2] == 0.5 && eff[3] == 0);
    bl_test_assert_bits(bl_test_sget(s, "weights")[1], -0.0, "signed zero survives");
    assert_true(bl_test_sget(s, "finite")[0] == 1 && bl_test_sget(s, "learning")[0] == 1);
    assert_true(bl_test_sget(s, "signs")[2] == 1 && bl_test_sget(s, "raw_finite")[0] == 1);
    bl_snapshot_destroy(s);
    bl_snapshot_destroy(NULL);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

/* ---- §7.3 float32 numerical failures ------------------------------------------------------ */

static void test_precision_overflow_rejected_before_upload(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.lrate_wmat = 1e40;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    expect_create_error(&in, 1, BL_FLOAT32, "after casting");
    expect_create_error(&in, 1, BL_FLOAT32, "lrate_wmat is not finite after casting to float32");
    bl_model_destroy(create(&in, 1, BL_FLOAT64));
    in->config.lrate_wmat = 1;
    in->config.input_weight = 1e39; /* unused by a batch, still cast */
    expect_create_error(&in, 1, BL_FLOAT32, "input_weight is not finite after casting");
    in->config.input_weight = 1;
    in->weights[2] = -4e38;
    expect_create_error(&in, 1, BL_FLOAT32, "weights is not finite after casting to float32");
    in->weights[2] = 0;
    in->targets[1] = 3.5e38;
    expect_create_error(&in, 1, BL_FLOAT32, "targets is not finite after casting");
    in->targets[1] = 1;
    /* The largest float survives. */
    in->acts[0] = 3.4028234663852886e38;
    bl_model_destroy(create(&in, 1, BL_FLOAT32));
    bl_test_falandays_init_destroy(in);
}

static void test_dale_clamp_cannot_hide_learning_overflow(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.axis = BL_AXIS_DALE;
    c.lrate_wmat = 1e38;
    c.lrate_targ = 0.01;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    set4(in->recurrent_mask, 0, 1, 1, 0);
    set4(in->weights, 0, 1, 1, 0);
    in->spikes[0] = in->spikes[1] = 1;
    bl_model *m = create(&in, 1, BL_FLOAT32);
    const double u[2] = {1e38, 1e38};
    bl_test_step(m, u, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    assert_true(bl_test_sget(s, "weights")[1] == 0 &&
                bl_test_sget(s, "weights")[2] == 0); /* clamped */
    assert_true(bl_test_sget(s, "raw_finite")[0] == 0);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

static void test_full_reset_matches_creation_snapshot(void **state)
{
    (void)state;
    bl_test_trng g = {777};
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_falandays_init *in = random_init(&g, 4, 2, 2, &c);
    for (size_t i = 0; i < 4; i++) {
        in->spikes[i] = 1;
        in->output_mask[i * 2] = in->output_mask[i * 2 + 1] = 1;
    }
    bl_model *m = create(&in, 1, BL_FLOAT32);
    bl_test_expect_full_reset(FAMILY, m, (const double[]){1, 0.5}, "acts");
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

static void test_target_floor_cannot_hide_overflow(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.lrate_targ = 1e38;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    bl_model *m = create(&in, 1, BL_FLOAT32);
    const double u[2] = {-1e38, 0};
    bl_test_step(m, u, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    assert_true(bl_test_sget(s, "targets")[0] == 1); /* floored */
    assert_true(isfinite(bl_test_sget(s, "acts")[0]) && isfinite(bl_test_sget(s, "errors")[0]));
    assert_true(bl_test_sget(s, "raw_finite")[0] == 0);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_falandays_init_destroy(in);
}

static void test_required_positive_values_cannot_underflow(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    c.targ_min = 1e-50;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    expect_create_error(&in, 1, BL_FLOAT32, "positive after casting");
    expect_create_error(&in, 1, BL_FLOAT32, "targ_min");
    bl_model_destroy(create(&in, 1, BL_FLOAT64));
    in->config.targ_min = 1;
    in->config.threshold_mult = 1e-46;
    expect_create_error(&in, 1, BL_FLOAT32, "threshold_mult must remain positive after casting");
    bl_test_falandays_init_destroy(in);
}

static void test_lossy_mask_casts_are_rejected(void **state)
{
    (void)state;
    bl_falandays_config c = bl_test_tiny_config();
    bl_falandays_init *in = bl_test_tiny_init(&c);
    in->recurrent_mask[2] = 0.1;
    expect_create_error(&in, 1, BL_FLOAT32, "binary before");
    expect_create_error(&in, 1, BL_FLOAT64, "binary before");
    bl_test_falandays_init_destroy(in);
}

/* ---- allocation failures ----------------------------------------------------------------- */

static void test_allocation_failures(void **state)
{
    (void)state;
    bl_test_trng g = {99};
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_falandays_init *ins[2] = {random_init(&g, 5, 2, 3, &c), random_init(&g, 5, 2, 3, &c)};
    bl_test_expect_allocation_failures(FAMILY, ins, BL_FLOAT64);
    bl_test_expect_allocation_failures(FAMILY, ins, BL_FLOAT32);
    bl_test_falandays_init_destroy(ins[0]);
    bl_test_falandays_init_destroy(ins[1]);
}

/* A rejected initial state is rejected whether or not the caller wants the
 * message: the status must not depend on the error buffer. */
static void test_invalid_config_rejected_without_error_buffer(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.leak = 1.5;
    bl_falandays_init *in = bl_test_tiny_init(&c);
    const bl_falandays_init *slots[1] = {in};
    bl_model *m = NULL;
    assert_int_equal(bl_model_create_falandays(slots, 1, BL_FLOAT64, &m, NULL), BL_EVALUE);
    assert_null(m);
    bl_error err = {0};
    assert_int_equal(bl_model_create_falandays(slots, 1, BL_FLOAT64, &m, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "initials[0]: FalandaysConfig.leak"));
    bl_test_falandays_init_destroy(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid_config_rejected_without_error_buffer),
        cmocka_unit_test(test_fixture_falandays),
        cmocka_unit_test(test_fixture_falandays_dale),
        cmocka_unit_test(test_fixture_float32_short),
        cmocka_unit_test(test_threshold_equality_residual_error_and_floor),
        cmocka_unit_test(test_learning_uses_previous_spikes_and_destination_mask),
        cmocka_unit_test(test_dale_signed_learning_floor_and_unmasked_clearing),
        cmocka_unit_test(test_oosawa_drive_and_rectify_order),
        cmocka_unit_test(test_float32_leak_complement_in_dtype),
        cmocka_unit_test(test_freeze_modes_are_distinct_and_reset_restores_flags),
        cmocka_unit_test(test_batch_matches_single_float64),
        cmocka_unit_test(test_batch_matches_single_float32),
        cmocka_unit_test(test_inactive_slots_hold_state),
        cmocka_unit_test(test_zero_effector_degree_float32_and_nonfinite),
        cmocka_unit_test(test_finite_is_recomputed_every_frame),
        cmocka_unit_test(test_shape_and_dtype_contracts),
        cmocka_unit_test(test_initial_state_validation),
        cmocka_unit_test(test_owned_storage),
        cmocka_unit_test(test_snapshot_layout),
        cmocka_unit_test(test_precision_overflow_rejected_before_upload),
        cmocka_unit_test(test_dale_clamp_cannot_hide_learning_overflow),
        cmocka_unit_test(test_full_reset_matches_creation_snapshot),
        cmocka_unit_test(test_target_floor_cannot_hide_overflow),
        cmocka_unit_test(test_required_positive_values_cannot_underflow),
        cmocka_unit_test(test_lossy_mask_casts_are_rejected),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
