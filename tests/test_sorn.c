/* SORN model batches (spec/models.md §3.3, §3.5–§3.8, §5.3, §5.5, §7.2,
 * §7.3): the worked examples, pruning, normalisation, freezes and resets,
 * inactive and batched slots, non-finite detection, the argument
 * contracts, the initial-state and cast validation, snapshots and
 * allocation failures. The equations against an independent oracle (§7.2
 * test 1) live with the oracle.
 *
 * Initial states here are built by hand with plain calloc, so that the
 * allocation failure tests count only the batch's own allocations. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "support.h"
#include "model_support.h"

/* ---- initial states ------------------------------------------------------- */

static void setv(double *dst, size_t count, const double *src)
{
    memcpy(dst, src, count * sizeof *dst);
}

/* ---- batch helpers ---------------------------------------------------------- */

#define FAMILY (&bl_test_sorn_family)

static bl_model *create(bl_sorn_init **ins, size_t nslots, bl_dtype dtype)
{
    return bl_test_family_create(FAMILY, ins, nslots, dtype);
}

static void expect_create_error(bl_sorn_init **ins, size_t nslots, bl_dtype dtype,
                                const char *needle)
{
    bl_test_family_create_fails(FAMILY, ins, nslots, dtype, needle);
}

/* One frame; u [B][R] may be NULL (zeros), active NULL (all); the noise is
 * junk, which SORN must ignore. */
static void step(bl_model *m, const double *u, const int32_t *active)
{
    FAMILY->step(m, u, active);
}

static const int32_t ALL3[3] = {1, 1, 1};

static bl_sorn_config config_with(double ratio, double eta_stdp, double eta_ip, bool learn_on)
{
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    c.inhibitory_fraction = ratio;
    c.eta_stdp = eta_stdp;
    c.eta_ip = eta_ip;
    c.learn_on = learn_on;
    return c;
}

/* ---- deterministic pseudo-random states ---------------------------------------- */

/* Row-normalises the masked entries of a rows x cols matrix to `target`,
 * the way construction does (sequential total, one division). */
static void normalise_rows(double *w, size_t rows, size_t cols, double target)
{
    for (size_t i = 0; i < rows; i++) {
        double tot = 0;
        for (size_t j = 0; j < cols; j++)
            tot += w[i * cols + j];
        if (tot > 0) {
            double s = target / tot;
            for (size_t j = 0; j < cols; j++)
                w[i * cols + j] *= s;
        }
    }
}

/* A plausible constructed-looking state (not construction's draws): sparse
 * E->E mask without self links, rows normalised, c_e the row sums, random
 * binary x and y, low thresholds so that units fire. */
static bl_sorn_init *random_init(bl_test_trng *g, size_t n, size_t r, size_t e,
                                 const bl_sorn_config *c)
{
    const size_t ne = bl_sorn_excitatory_count(c->inhibitory_fraction, n), ni = n - ne;
    bl_sorn_init *in = bl_test_sorn_init_create(n, r, e, ne, c);
    for (size_t i = 0; i < ne; i++) {
        for (size_t j = 0; j < ne; j++) {
            if (i != j && bl_test_urand(g) < 0.5) {
                in->ee_mask[i * ne + j] = 1;
                in->w_ee[i * ne + j] = 0.05 + bl_test_urand(g);
            }
        }
        for (size_t k = 0; k < ni; k++)
            in->w_ei[i * ni + k] = 0.2 * bl_test_urand(g);
        for (size_t q = 0; q < r; q++)
            if (bl_test_urand(g) < 0.6)
                in->w_eu[i * r + q] = bl_test_urand(g);
        in->t_e[i] = 0.5 * bl_test_urand(g);
        in->x[i] = bl_test_urand(g) < 0.5;
    }
    normalise_rows(in->w_ee, ne, ne, c->ee_row_sum);
    for (size_t i = 0; i < ne; i++) {
        double tot = 0;
        for (size_t j = 0; j < ne; j++)
            tot += in->w_ee[i * ne + j];
        in->c_e[i] = tot;
    }
    for (size_t k = 0; k < ni; k++) {
        for (size_t j = 0; j < ne; j++)
            in->w_ie[k * ne + j] = bl_test_urand(g);
        in->t_i[k] = bl_test_urand(g);
        in->y[k] = bl_test_urand(g) < 0.5;
    }
    normalise_rows(in->w_ie, ni, ne, 1.0);
    for (size_t k = 0; k < e; k++) {
        for (size_t i = 0; i < ne; i++)
            in->output_mask[k * ne + i] = bl_test_urand(g) < 0.4;
        in->output_mask[k * ne + (k % ne)] = 1;
    }
    return in;
}

/* ---- §3.8 worked examples, §7.2 tests 2-4 --------------------------------------------- */

/* N = 3, N_E = 2, N_I = 1: every drive lands exactly on its threshold. */
static bl_sorn_init *synchronous_init(void)
{
    bl_sorn_config c = config_with(0.2, 0.001, 0.001, false);
    assert_int_equal(bl_sorn_excitatory_count(0.2, 3), 2);
    bl_sorn_init *in = bl_test_sorn_init_create(3, 1, 1, 2, &c);
    setv(in->w_ei, 2, (double[]){1, 1});
    setv(in->w_ie, 2, (double[]){1, 0});
    setv(in->w_eu, 2, (double[]){1, 1});
    setv(in->x, 2, (double[]){1, 0});
    in->y[0] = 0;
    setv(in->t_e, 2, (double[]){1, 1});
    in->t_i[0] = 1;
    setv(in->output_mask, 2, (double[]){1, 1});
    return in;
}

static void test_threshold_equality_and_synchronous_old_populations(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_sorn_init *in = synchronous_init();
        bl_model *m = create(&in, 1, d ? BL_FLOAT32 : BL_FLOAT64);
        const double one[1] = {1};
        step(m, one, NULL);
        bl_snapshot *s = bl_test_snap(m, 0);
        bl_test_expect_key(s, "activity", (double[]){1, 1, 1}, 3, "activity");
        /* Exactly +0: ((0 - 0) + 1) - 1 for E, (1·1 + 0·0) - 1 for I. */
        bl_test_expect_key(s, "drive", (double[]){0, 0, 0}, 3, "drive");
        bl_test_expect_key(s, "x", (double[]){1, 1}, 2, "x");
        bl_test_expect_key(s, "y", (double[]){1}, 1, "y");
        bl_test_expect_key(s, "prev_x", (double[]){1, 0}, 2, "prev_x");
        bl_test_expect_key(s, "prev_y", (double[]){0}, 1, "prev_y");
        bl_test_expect_key(s, "effectors", (double[]){1}, 1, "effectors");
        assert_int_equal(bl_model_finite(m)[0], 1);
        bl_snapshot_destroy(s);
        /* The inhibition that fired in frame 1 reaches E only now, while
         * I reads the E state of frame 1. */
        step(m, one, NULL);
        s = bl_test_snap(m, 0);
        bl_test_expect_key(s, "drive", (double[]){-1, -1, 0}, 3, "drive, frame 2");
        bl_test_expect_key(s, "activity", (double[]){0, 0, 1}, 3, "activity, frame 2");
        bl_test_expect_key(s, "effectors", (double[]){0}, 1, "effectors, frame 2");
        bl_snapshot_destroy(s);
        bl_model_destroy(m);
        bl_test_sorn_init_destroy(in);
    }
}

/* A drive of exactly zero fires whatever the sign of the zero threshold. */
static void test_zero_drive_fires(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_sorn_config c = config_with(0, 0, 0, false);
        bl_sorn_init *in = bl_test_sorn_init_create(2, 1, 1, 2, &c);
        in->t_e[0] = 0.0;
        in->t_e[1] = -0.0;
        in->output_mask[0] = 1;
        bl_model *m = create(&in, 1, d ? BL_FLOAT32 : BL_FLOAT64);
        step(m, NULL, NULL);
        bl_snapshot *s = bl_test_snap(m, 0);
        bl_test_expect_key(s, "x", (double[]){1, 1}, 2, "x");
        assert_true(bl_test_sget(s, "drive")[0] == 0 && bl_test_sget(s, "drive")[1] == 0);
        bl_snapshot_destroy(s);
        bl_model_destroy(m);
        bl_test_sorn_init_destroy(in);
    }
}

/* N = 2 with ratio 0 (two E units, no I): the §3.8 normalisation and
 * pruning states. */
static bl_sorn_init *pair_init(double eta_stdp, double eta_ip, const double w[4],
                               const double c_e[2], const double w_eu[2])
{
    bl_sorn_config c = config_with(0, eta_stdp, eta_ip, true);
    assert_int_equal(bl_sorn_excitatory_count(0, 2), 2);
    bl_sorn_init *in = bl_test_sorn_init_create(2, 1, 1, 2, &c);
    setv(in->w_ee, 4, w);
    setv(in->ee_mask, 4, (double[]){0, 1, 1, 0});
    setv(in->c_e, 2, c_e);
    setv(in->w_eu, 2, w_eu);
    setv(in->t_e, 2, (double[]){2, -1});
    setv(in->x, 2, (double[]){1, 0});
    setv(in->output_mask, 2, (double[]){1, 1});
    return in;
}

static void test_zero_original_normalisation_target_skips_scaling(void **state)
{
    (void)state;
    bl_sorn_init *in =
        pair_init(0.1, 0, (double[]){0, 0.2, 0.2, 0}, (double[]){0, 0}, (double[]){1, 1});
    bl_model *m = create(&in, 1, BL_FLOAT64);
    step(m, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    bl_test_expect_key(s, "x", (double[]){0, 1}, 2, "x");
    /* Row 0: 0.2 + 0.1·(0·0 - 1·1); row 1: 0.2 + 0.1·(1·1 - 0·0); no
     * scaling because c_e = 0. */
    volatile double w01 = 0.2, w10 = 0.2, eta = 0.1;
    const double want[4] = {0, w01 + eta * -1.0, w10 + eta * 1.0, 0};
    bl_test_expect_key(s, "w_ee", want, 4, "w_ee");
    assert_true(fabs(want[1] - 0.1) < 1e-15 && fabs(want[2] - 0.3) < 1e-15);
    bl_test_expect_key(s, "ee_mask", (double[]){0, 1, 1, 0}, 4, "ee_mask");
    bl_test_expect_key(s, "t_e", (double[]){2, -1}, 2, "t_e (eta_ip 0)");
    bl_test_expect_key(s, "effectors", (double[]){0.5}, 1, "effectors");
    assert_int_equal(bl_model_finite(m)[0], 1);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

static void test_pruning_is_permanent_zero_rows_stay_zero_and_reset_restores_mask(void **state)
{
    (void)state;
    bl_sorn_init *in = pair_init(0.001, 0.001, (double[]){0, 0.0005, 0.2, 0},
                                 (double[]){0.0005, 0.2}, (double[]){1, 0});
    bl_model *m = create(&in, 1, BL_FLOAT64);
    bl_snapshot *s0 = bl_test_snap(m, 0);
    step(m, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    bl_test_expect_key(s, "x", (double[]){0, 1}, 2, "x");
    /* (0, 1) is depressed below zero: pruned, its row total 0, no division. */
    bl_test_expect_key(s, "ee_mask", (double[]){0, 0, 1, 0}, 4, "ee_mask");
    volatile double w10 = 0.2, eta = 0.001, target = 0.2;
    const double grown = w10 + eta * 1.0;
    const double renorm = grown * (target / grown);
    bl_test_expect_key(s, "w_ee", (double[]){0, 0, renorm, 0}, 4, "w_ee");
    assert_true(fabs(renorm - 0.2) < 1e-16);
    bl_test_expect_key(s, "adaptation_finite", (double[]){1, 1}, 2, "adaptation_finite");
    assert_int_equal(bl_model_finite(m)[0], 1);
    bl_snapshot_destroy(s);

    /* Input 3 makes unit 0 fire after unit 1: STDP would potentiate (0, 1),
     * but the edge is gone. */
    const double three[1] = {3};
    step(m, three, NULL);
    s = bl_test_snap(m, 0);
    bl_test_expect_key(s, "x", (double[]){1, 1}, 2, "x, frame 2");
    bl_test_expect_key(s, "prev_x", (double[]){0, 1}, 2, "prev_x, frame 2");
    bl_test_assert_bits(bl_test_sget(s, "w_ee")[1], 0.0, "pruned weight stays 0");
    bl_test_assert_bits(bl_test_sget(s, "ee_mask")[1], 0.0, "pruned mask stays 0");
    assert_int_equal(bl_model_finite(m)[0], 1);
    bl_snapshot_destroy(s);

    bl_test_reset(m, ALL3);
    s = bl_test_snap(m, 0);
    bl_test_assert_snap_identical(s, s0, "reset");
    bl_test_assert_bits(bl_test_sget(s, "w_ee")[1], 0.0005, "restored weight");
    bl_test_assert_bits(bl_test_sget(s, "ee_mask")[1], 1.0, "restored mask");
    bl_snapshot_destroy(s);
    bl_snapshot_destroy(s0);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* STDP rewrites unmasked entries to +0 on every plastic frame; with the
 * weights frozen nothing of w_ee is touched. */
static void test_unmasked_entries_and_frozen_weights(void **state)
{
    (void)state;
    bl_sorn_init *in = pair_init(0.001, 0.001, (double[]){-0.0, 0.5, 0.5, 0.25},
                                 (double[]){0.5, 0.5}, (double[]){1, 0});
    setv(in->x, 2, (double[]){1, 1});
    bl_sorn_init *ins[2] = {in, in};
    bl_model *m = create(ins, 2, BL_FLOAT64);
    const int32_t second[2] = {0, 1};
    bl_test_freeze(m, second, false);
    step(m, NULL, NULL);
    bl_snapshot *a = bl_test_snap(m, 0), *b = bl_test_snap(m, 1);
    /* Slot 0: the unmasked diagonal becomes +0 (the -0.0 and the 0.25). */
    bl_test_assert_bits(bl_test_sget(a, "w_ee")[0], 0.0, "unmasked -0.0");
    bl_test_assert_bits(bl_test_sget(a, "w_ee")[3], 0.0, "unmasked 0.25");
    /* Slot 1: frozen, bit for bit the initial weights; thresholds adapt. */
    bl_test_expect_key(b, "w_ee", (double[]){-0.0, 0.5, 0.5, 0.25}, 4, "frozen w_ee");
    bl_test_expect_key(b, "plasticity", (double[]){0, 1}, 2, "plasticity");
    assert_true(bl_test_sget(b, "t_e")[0] != 2 && bl_test_sget(b, "t_e")[1] != -1);
    /* The unmasked weights still drive (the sum ignores the mask):
     * ((-0.0 + 0.5) - 0) + 0 - 2 and ((0.5 + 0.25) - 0) + 0 + 1. */
    for (int k = 0; k < 2; k++)
        bl_test_expect_key(k ? b : a, "drive", (double[]){-1.5, 1.75}, 2, "drive");
    bl_snapshot_destroy(a);
    bl_snapshot_destroy(b);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* float32 batches compute in float: the expected values are formed here in
 * float variables with the kernel's associations. */
static void test_float32_arithmetic_stays_in_float(void **state)
{
    (void)state;
    bl_sorn_init *in = pair_init(0.0123, 0.0371, (double[]){0, 0.3, 0.7, 0},
                                 (double[]){0.9, 1.1}, (double[]){0.6, 0.2});
    in->config.H_ip = 0.137;
    setv(in->t_e, 2, (double[]){0.123456789, -0.33});
    bl_model *m = create(&in, 1, BL_FLOAT32);
    const double u[1] = {0.7};
    step(m, u, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    volatile float w01 = 0.3f, w10 = 0.7f, eta = 0.0123f, etai = 0.0371f, h = 0.137f;
    volatile float te0 = 0.123456789f, te1 = -0.33f, c0 = 0.9f, c1 = 1.1f, u0 = 0.7f;
    volatile float wu0 = 0.6f, wu1 = 0.2f;
    /* prev_x = [1, 0] */
    float d0 = ((w01 * 0.0f - 0.0f) + wu0 * u0) - te0;
    float d1 = ((w10 * 1.0f - 0.0f) + wu1 * u0) - te1;
    float x0 = d0 >= 0 ? 1.0f : 0.0f, x1 = d1 >= 0 ? 1.0f : 0.0f;
    assert_true(x0 == 1 && x1 == 1);
    float n01 = w01 + eta * (x0 * 0.0f - 1.0f * x1);
    float n10 = w10 + eta * (x1 * 1.0f - 0.0f * x0);
    float s0 = c0 / n01, s1 = c1 / n10;
    float t0 = te0 + etai * (x0 - h), t1 = te1 + etai * (x1 - h);
    bl_test_expect_key(s, "drive", (double[]){d0, d1}, 2, "drive");
    bl_test_expect_key(s, "w_ee", (double[]){0, n01 * s0, n10 * s1, 0}, 4, "w_ee");
    bl_test_expect_key(s, "t_e", (double[]){t0, t1}, 2, "t_e");
    bl_test_expect_key(s, "parameters", (double[]){0.0123f, 0.0371f, 0.137f}, 3,
                  "parameters");
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);

    /* A drive that tells float from double temporaries: ((1 - 0) + 2^-30) - 1
     * is +0 in float (1 + 2^-30 rounds to 1) and 2^-30 in double. The
     * self-weight lies outside the mask and still drives. */
    bl_sorn_config c = config_with(0, 0, 0, false);
    bl_sorn_init *one = bl_test_sorn_init_create(1, 1, 1, 1, &c);
    one->w_ee[0] = 1;
    one->x[0] = 1;
    one->w_eu[0] = 0x1p-30;
    one->t_e[0] = 1;
    one->output_mask[0] = 1;
    for (int d = 0; d < 2; d++) {
        m = create(&one, 1, d ? BL_FLOAT32 : BL_FLOAT64);
        step(m, (const double[]){1}, NULL);
        s = bl_test_snap(m, 0);
        bl_test_assert_bits(bl_test_sget(s, "drive")[0], d ? 0.0 : 0x1p-30, "drive");
        bl_test_assert_bits(bl_test_sget(s, "x")[0], 1.0, "x");
        bl_snapshot_destroy(s);
        bl_model_destroy(m);
    }
    bl_test_sorn_init_destroy(one);
}

/* ---- §7.2 test 5: freezes, resets and owned storage ------------------------------------ */

static void test_freeze_modes_reset_and_owned_storage(void **state)
{
    (void)state;
    bl_test_trng g = {0x5eed};
    bl_sorn_config c = config_with(0.2, 0.05, 0.03, true);
    bl_sorn_init *in = random_init(&g, 5, 2, 2, &c);
    assert_int_equal(in->n_e, 4);
    bl_sorn_init *ins[3] = {in, in, in};
    bl_model *m = create(ins, 3, BL_FLOAT64);
    bl_snapshot *initial[3];
    for (int b = 0; b < 3; b++)
        initial[b] = bl_test_snap(m, (size_t)b);
    bl_test_freeze(m, (const int32_t[]){1, 0, 0}, false);
    bl_test_freeze(m, (const int32_t[]){0, 1, 0}, true);
    /* Mutating the constructor's arrays or a snapshot changes nothing. */
    for (size_t k = 0; k < 16; k++)
        in->w_ee[k] = 9;
    in->t_e[0] = 9;
    bl_snapshot *scratch = bl_test_snap(m, 2);
    ((double *)bl_test_sget(scratch, "w_ee"))[1] = 42;
    ((double *)bl_test_sget(scratch, "t_e"))[0] = 42;
    bl_snapshot_destroy(scratch);

    const double u[6] = {1, 1, 1, 1, 1, 1};
    for (int t = 0; t < 4; t++)
        step(m, u, NULL);
    bl_snapshot *after[3];
    for (int b = 0; b < 3; b++)
        after[b] = bl_test_snap(m, (size_t)b);
    for (int b = 0; b < 2; b++) {
        assert_true(bl_test_same_key(after[b], initial[b], "w_ee"));
        assert_true(bl_test_same_key(after[b], initial[b], "ee_mask"));
    }
    assert_false(bl_test_same_key(after[2], initial[2], "w_ee"));
    assert_false(bl_test_same_key(after[0], initial[0], "t_e"));
    assert_true(bl_test_same_key(after[1], initial[1], "t_e"));
    assert_false(bl_test_same_key(after[2], initial[2], "t_e"));
    for (int b = 0; b < 3; b++) {
        assert_true(bl_test_same_key(after[b], initial[b], "w_ei"));
        assert_true(bl_test_same_key(after[b], initial[b], "w_ie"));
        assert_true(bl_test_same_key(after[b], initial[b], "w_eu"));
        assert_true(bl_test_same_key(after[b], initial[b], "t_i"));
        assert_true(bl_test_same_key(after[b], initial[b], "c_e"));
    }
    bl_test_expect_key(after[0], "plasticity", (double[]){0, 1}, 2, "slot 0 plasticity");
    bl_test_expect_key(after[1], "plasticity", (double[]){0, 0}, 2, "slot 1 plasticity");
    bl_test_expect_key(after[2], "plasticity", (double[]){1, 1}, 2, "slot 2 plasticity");

    bl_test_reset(m, (const int32_t[]){1, 1, 0});
    for (int b = 0; b < 2; b++) {
        bl_snapshot *r = bl_test_snap(m, (size_t)b);
        bl_test_assert_snap_identical(r, initial[b], "reset slot");
        bl_snapshot_destroy(r);
    }
    bl_snapshot *slot2 = bl_test_snap(m, 2);
    bl_test_assert_snap_identical(slot2, after[2], "slot 2 untouched by the reset");
    bl_test_expect_key(slot2, "plasticity", (double[]){1, 1}, 2, "slot 2 plasticity");
    bl_snapshot_destroy(slot2);
    for (int b = 0; b < 3; b++) {
        bl_snapshot_destroy(initial[b]);
        bl_snapshot_destroy(after[b]);
    }
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* ---- §7.2 test 6 and batching ------------------------------------------------------------ */

enum { BN = 9, BR = 3, BE = 2, BSLOTS = 4, BFRAMES = 30 };

static void batch_configs(bl_sorn_config c[BSLOTS])
{
    c[0] = config_with(0.2, 0.05, 0.02, true);
    c[1] = config_with(0.2, 0.3, 0.001, true);
    c[1].H_ip = 0.3;
    c[2] = config_with(0.2, 0.01, 0.05, false);
    c[3] = config_with(0.2, 0.2, 0.1, true);
    c[3].H_ip = 0.5;
}

/* Every slot of a mixed batch, stepped on an irregular activity pattern
 * with freezes and resets, equals the same slot run alone on exactly its
 * active frames; inactive slots are fed junk that must not matter. */
static void batch_matches_single(bl_dtype dtype)
{
    bl_test_trng g = {0x9e3779b97f4a7c15u};
    bl_sorn_config c[BSLOTS];
    batch_configs(c);
    bl_sorn_init *ins[BSLOTS];
    bl_model *single[BSLOTS];
    for (int b = 0; b < BSLOTS; b++) {
        ins[b] = random_init(&g, BN, BR, BE, &c[b]);
        single[b] = create(&ins[b], 1, dtype);
    }
    bl_model *m = create(ins, BSLOTS, dtype);
    size_t fired = 0, pruned = 0;
    for (int t = 0; t < BFRAMES; t++) {
        double u[BSLOTS * BR];
        int32_t active[BSLOTS];
        for (int b = 0; b < BSLOTS; b++) {
            active[b] = (t + b) % 3 != 0;
            for (int q = 0; q < BR; q++)
                u[b * BR + q] = active[b] ? 1.6 * bl_test_urand(&g) - 0.3 : (q ? INFINITY : NAN);
        }
        step(m, u, active);
        for (int b = 0; b < BSLOTS; b++)
            if (active[b])
                step(single[b], u + b * BR, NULL);
        if (t == 11 || t == 19) {
            const int32_t sel[BSLOTS] = {t == 11, 0, t == 19, 1};
            bl_test_freeze(m, sel, t == 19);
            for (int b = 0; b < BSLOTS; b++)
                if (sel[b])
                    bl_test_freeze(single[b], ALL3, t == 19);
        }
        if (t == 23) {
            const int32_t sel[BSLOTS] = {0, 1, 0, 0};
            bl_test_reset(m, sel);
            bl_test_reset(single[1], ALL3);
        }
        for (int b = 0; b < BSLOTS; b++) {
            bl_snapshot *x = bl_test_expect_as_single(m, (size_t)b, single[b]);
            const double *act = bl_test_sget(x, "activity"), *mask = bl_test_sget(x, "ee_mask");
            const size_t ne = ins[b]->n_e;
            for (int i = 0; i < BN; i++)
                fired += act[i] != 0;
            for (size_t k = 0; k < ne * ne; k++)
                pruned += ins[b]->ee_mask[k] != 0 && mask[k] == 0;
            bl_snapshot_destroy(x);
        }
        /* The live views are the snapshot's values. */
        const bool f32 = dtype == BL_FLOAT32;
        for (int b = 0; b < BSLOTS; b++) {
            bl_snapshot *x = bl_test_snap(m, (size_t)b);
            for (int i = 0; i < BN; i++) {
                double v = f32 ? ((const float *)bl_model_activity_data(m))[b * BN + i]
                               : ((const double *)bl_model_activity_data(m))[b * BN + i];
                bl_test_assert_bits(v, bl_test_sget(x, "activity")[i], "activity view");
            }
            for (int k = 0; k < BE; k++) {
                double v = f32 ? ((const float *)bl_model_effector_data(m))[b * BE + k]
                               : ((const double *)bl_model_effector_data(m))[b * BE + k];
                bl_test_assert_bits(v, bl_test_sget(x, "effectors")[k], "effector view");
            }
            bl_snapshot_destroy(x);
        }
    }
    /* The run exercised firing and pruning. */
    assert_true(fired > 0);
    assert_true(pruned > 0);
    bl_model_destroy(m);
    for (int b = 0; b < BSLOTS; b++) {
        bl_model_destroy(single[b]);
        bl_test_sorn_init_destroy(ins[b]);
    }
}

BL_TEST_PER_DTYPE(test_batch_matches_single, batch_matches_single)

/* §7.2 test 6 as the reference states it: slot 0 of a 2-slot batch with
 * slot 1 inactive and fed 999s equals a 1-slot batch; slot 1 unchanged. */
static void test_inactive_batch_members_are_unchanged_and_batching_matches_single(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_dtype dtype = d ? BL_FLOAT32 : BL_FLOAT64;
        bl_test_trng g = {4242};
        bl_sorn_config c = config_with(0.2, 0.07, 0.03, true);
        bl_sorn_init *a = random_init(&g, 8, 2, 3, &c), *b = random_init(&g, 8, 2, 3, &c);
        bl_sorn_init *pair[2] = {a, b};
        bl_model *m = create(pair, 2, dtype), *one = create(&a, 1, dtype);
        bl_snapshot *before = bl_test_snap(m, 1);
        const int32_t active[2] = {1, 0};
        for (int t = 0; t < 8; t++) {
            double u[4] = {2 * bl_test_urand(&g) - 0.3, 2 * bl_test_urand(&g) - 0.3, 999, 999};
            step(m, u, active);
            step(one, u, NULL);
            /* Freezes and resets aimed elsewhere leave it alone too. */
            if (t == 3 || t == 6) {
                bl_test_freeze(m, active, t == 6);
                bl_test_freeze(one, ALL3, t == 6);
            }
            if (t == 5) {
                bl_test_reset(m, active);
                bl_test_reset(one, ALL3);
            }
            bl_snapshot_destroy(bl_test_expect_as_single(m, 0, one));
        }
        bl_test_expect_slot_kept(m, 1, before, "inactive slot");
        bl_model_destroy(m);
        bl_model_destroy(one);
        bl_test_sorn_init_destroy(a);
        bl_test_sorn_init_destroy(b);
    }
}

/* ---- §7.2 test 8: one node, no inhibitory population ----------------------------------- */

static void test_one_node_no_inhibitory_population_and_initial_learning_disabled(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_sorn_config c = config_with(0.2, 0.001, 0.001, false);
        assert_int_equal(bl_sorn_excitatory_count(0.2, 1), 1);
        bl_sorn_init *in = bl_test_sorn_init_create(1, 1, 1, 1, &c);
        in->w_eu[0] = 1;
        in->output_mask[0] = 1;
        in->t_e[0] = 0.3;
        bl_model *m = create(&in, 1, d ? BL_FLOAT32 : BL_FLOAT64);
        assert_int_equal(bl_model_nodes(m), 1);
        bl_snapshot *s0 = bl_test_snap(m, 0);
        const double one[1] = {1};
        for (int t = 0; t < 3; t++)
            step(m, one, NULL);
        bl_snapshot *s = bl_test_snap(m, 0);
        const struct {
            const char *name;
            int ndim;
            size_t d0, d1;
        } empty[] = {
            {"w_ei", 2, 1, 0}, {"w_ie", 2, 0, 1}, {"t_i", 1, 0, 1},
            {"y", 1, 0, 1},    {"prev_y", 1, 0, 1},
        };
        for (size_t k = 0; k < sizeof empty / sizeof *empty; k++) {
            const bl_snapshot_array *a = bl_snapshot_get(s, empty[k].name);
            assert_non_null(a);
            assert_int_equal(a->ndim, empty[k].ndim);
            assert_int_equal(a->shape[0], empty[k].d0);
            assert_int_equal(a->shape[1], empty[k].d1);
            assert_int_equal(bl_test_values_of(a), 0);
        }
        bl_test_expect_key(s, "activity", (double[]){1}, 1, "activity");
        bl_test_expect_key(s, "effectors", (double[]){1}, 1, "effectors");
        assert_true(bl_test_same_key(s, s0, "t_e"));
        assert_true(bl_test_same_key(s, s0, "w_ee"));
        bl_test_expect_key(s, "plasticity", (double[]){0, 0}, 2, "plasticity");
        assert_int_equal(bl_model_finite(m)[0], 1);
        bl_test_reset(m, ALL3);
        bl_snapshot *r = bl_test_snap(m, 0);
        bl_test_expect_key(r, "plasticity", (double[]){0, 0}, 2, "plasticity after reset");
        bl_test_assert_snap_identical(r, s0, "reset");
        bl_snapshot_destroy(r);
        bl_snapshot_destroy(s);
        bl_snapshot_destroy(s0);
        bl_model_destroy(m);
        bl_test_sorn_init_destroy(in);
    }
}

/* ---- §7.2 test 11 and §5.5: non-finite detection ---------------------------------------- */

static void test_nonfinite_drive_is_reported_even_when_threshold_output_is_binary(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_sorn_config c = config_with(0.2, 0.001, 0.001, true);
        bl_sorn_init *in = bl_test_sorn_init_create(1, 1, 1, 1, &c);
        in->w_eu[0] = 1;
        in->output_mask[0] = 1;
        in->t_e[0] = 0.3;
        bl_model *m = create(&in, 1, d ? BL_FLOAT32 : BL_FLOAT64);
        const double inf[1] = {INFINITY}, one[1] = {1};
        step(m, inf, NULL);
        bl_snapshot *s = bl_test_snap(m, 0);
        bl_test_expect_key(s, "activity", (double[]){1}, 1, "activity");
        assert_true(isinf(bl_test_sget(s, "drive")[0]));
        assert_int_equal(bl_model_finite(m)[0], 0);
        assert_true(bl_test_sget(s, "finite")[0] == 0);
        /* The weights and thresholds themselves stayed finite. */
        assert_true(bl_test_sget(s, "adaptation_finite")[0] == 1 &&
                    isfinite(bl_test_sget(s, "t_e")[0]));
        bl_snapshot_destroy(s);
        /* Not latched by the model. */
        step(m, one, NULL);
        assert_int_equal(bl_model_finite(m)[0], 1);
        step(m, inf, NULL);
        assert_int_equal(bl_model_finite(m)[0], 0);
        bl_test_reset(m, ALL3);
        assert_int_equal(bl_model_finite(m)[0], 1);
        /* A NaN drive (inf - inf) does not fire and is reported too. */
        const double nan_u[1] = {NAN};
        step(m, nan_u, NULL);
        s = bl_test_snap(m, 0);
        assert_true(isnan(bl_test_sget(s, "drive")[0]) && bl_test_sget(s, "x")[0] == 0);
        assert_int_equal(bl_model_finite(m)[0], 0);
        bl_snapshot_destroy(s);
        bl_model_destroy(m);
        bl_test_sorn_init_destroy(in);
    }
}

/* An inhibitory drive counts too. */
static void test_nonfinite_inhibitory_drive(void **state)
{
    (void)state;
    bl_sorn_init *in = synchronous_init();
    in->w_ie[0] = 1e308;
    in->w_ie[1] = 1e308;
    in->x[1] = 1;
    bl_model *m = create(&in, 1, BL_FLOAT64);
    step(m, (const double[]){0}, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    assert_true(isfinite(bl_test_sget(s, "drive")[0]) && isfinite(bl_test_sget(s, "drive")[1]));
    assert_true(isinf(bl_test_sget(s, "drive")[2]) && bl_test_sget(s, "y")[0] == 1);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* §7.3 #3: a row total that overflows float32 cannot be hidden by the
 * normalisation (c_e / inf = 0 would give finite-looking weights). */
static void test_sorn_row_sum_overflow_cannot_be_normalised_away(void **state)
{
    (void)state;
    bl_sorn_config c = config_with(0, 0, 0, true);
    assert_int_equal(bl_sorn_excitatory_count(0, 3), 3);
    bl_sorn_init *in = bl_test_sorn_init_create(3, 1, 1, 3, &c);
    for (size_t k = 0; k < 9; k++) {
        in->w_ee[k] = 2e38;
        in->ee_mask[k] = 1;
    }
    for (size_t i = 0; i < 3; i++)
        in->c_e[i] = 1;
    in->output_mask[0] = 1;
    bl_model *m = create(&in, 1, BL_FLOAT32);
    step(m, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    const double *drive = bl_test_sget(s, "drive");
    for (size_t i = 0; i < 3; i++) {
        assert_true(isfinite(drive[i]));
        assert_true(bl_test_sget(s, "adaptation_finite")[i] == 0);
    }
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);

    /* The same state in float64 is harmless and renormalises to 1/3. */
    m = create(&in, 1, BL_FLOAT64);
    step(m, NULL, NULL);
    s = bl_test_snap(m, 0);
    assert_int_equal(bl_model_finite(m)[0], 1);
    volatile double w = 2e38, tot = 0;
    tot = (tot + w + w) + w;
    bl_test_assert_bits(bl_test_sget(s, "w_ee")[4], w * (1.0 / tot), "renormalised");
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* An STDP result that overflows is flagged before pruning could hide it;
 * a NaN scale is flagged too. */
static void test_stdp_overflow_and_scale_are_flagged(void **state)
{
    (void)state;
    /* float32: w + eta > FLT_MAX on a potentiated synapse (x[0] fires now,
     * x[1] fired before). */
    bl_sorn_init *in = pair_init(3e38, 0, (double[]){0, 3e38, 0.5, 0}, (double[]){0, 0},
                                 (double[]){1, 0});
    setv(in->x, 2, (double[]){0, 1});
    setv(in->t_e, 2, (double[]){-1, 2});
    bl_model *m = create(&in, 1, BL_FLOAT32);
    step(m, NULL, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    bl_test_expect_key(s, "x", (double[]){1, 0}, 2, "x");
    assert_true(isinf(bl_test_sget(s, "w_ee")[1]));
    assert_true(bl_test_sget(s, "adaptation_finite")[0] == 0);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);

    /* float64: a depressed synapse reaching -inf is flagged, then pruned to
     * 0 (the clamp must not hide it). */
    in->config.eta_stdp = 1e308;
    in->w_ee[2] = -1e308; /* row 1: x[1] = 0 now, fired before, x[0] fires */
    in->ee_mask[2] = 1;
    setv(in->x, 2, (double[]){1, 1});
    setv(in->t_e, 2, (double[]){-1, 2});
    m = create(&in, 1, BL_FLOAT64);
    step(m, NULL, NULL);
    s = bl_test_snap(m, 0);
    bl_test_expect_key(s, "x", (double[]){1, 0}, 2, "x");
    bl_test_assert_bits(bl_test_sget(s, "w_ee")[2], 0.0, "pruned");
    bl_test_assert_bits(bl_test_sget(s, "ee_mask")[2], 0.0, "pruned mask");
    assert_true(bl_test_sget(s, "adaptation_finite")[1] == 0);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);

    /* c_e / tot overflowing (a tiny total): the scale is flagged. */
    bl_sorn_init *tiny = pair_init(0, 0, (double[]){0, 1e-300, 0.5, 0}, (double[]){1e300, 0.5},
                                   (double[]){0, 0});
    m = create(&tiny, 1, BL_FLOAT64);
    step(m, NULL, NULL);
    s = bl_test_snap(m, 0);
    assert_true(bl_test_sget(s, "adaptation_finite")[0] == 0 &&
                bl_test_sget(s, "adaptation_finite")[1] == 1);
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(tiny);
    bl_test_sorn_init_destroy(in);
}

/* IP driving a threshold past the float32 range is reported; the drive
 * that made it fire was finite. */
static void test_threshold_overflow_is_reported(void **state)
{
    (void)state;
    bl_sorn_init *in = pair_init(0, 3e38, (double[]){0, 0, 0, 0}, (double[]){0, 0},
                                 (double[]){0, 1});
    setv(in->t_e, 2, (double[]){0, 2e38});
    in->config.H_ip = 0;
    bl_model *m = create(&in, 1, BL_FLOAT32);
    step(m, (const double[]){3e38}, NULL);
    bl_snapshot *s = bl_test_snap(m, 0);
    bl_test_expect_key(s, "x", (double[]){1, 1}, 2, "x");
    assert_true(isfinite(bl_test_sget(s, "drive")[0]) && isfinite(bl_test_sget(s, "drive")[1]));
    assert_true(isfinite(bl_test_sget(s, "t_e")[0]) && isinf(bl_test_sget(s, "t_e")[1]));
    bl_test_expect_key(s, "adaptation_finite", (double[]){1, 1}, 2, "adaptation_finite");
    assert_int_equal(bl_model_finite(m)[0], 0);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* ---- contracts -------------------------------------------------------------------------- */

/* §7.2 test 10 and §7.3 #8, plus the argument contract of step/reset/freeze. */
static void test_incompatible_batch_and_ports_rejected(void **state)
{
    (void)state;
    bl_test_trng g = {31};
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    bl_sorn_init *five = random_init(&g, 5, 2, 2, &c), *six = random_init(&g, 6, 2, 2, &c);
    bl_sorn_init *mixed[2] = {five, six};
    expect_create_error(mixed, 2, BL_FLOAT64, "dimensions");
    /* Same N, different N_E. */
    bl_sorn_init *other = bl_test_sorn_init_create(5, 2, 2, 3, &c);
    bl_sorn_init *mixed_e[2] = {five, other};
    expect_create_error(mixed_e, 2, BL_FLOAT64, "dimensions");
    bl_test_sorn_init_destroy(other);
    /* In C a w_ee of the wrong shape is a missing array or an n_e that does
     * not fit the count. */
    double *keep = five->w_ee;
    five->w_ee = NULL;
    expect_create_error(&five, 1, BL_FLOAT64, "w_ee");
    five->w_ee = keep;
    five->n_e = 6;
    expect_create_error(&five, 1, BL_FLOAT64, "w_ee");
    five->n_e = 4;
    expect_create_error(&five, 0, BL_FLOAT64, "at least one");
    expect_create_error(&five, 1, (bl_dtype)7, "dtype");

    bl_sorn_init *two[2] = {five, five};
    for (int d = 0; d < 2; d++) {
        bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        bl_model *m = create(two, 2, dt);
        bl_test_expect_call_contracts(FAMILY, m, dt, 5);
        bl_model_destroy(m);
    }
    bl_test_sorn_init_destroy(five);
    bl_test_sorn_init_destroy(six);
}

static void test_initial_state_validation(void **state)
{
    (void)state;
    bl_test_trng g = {77};
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    bl_sorn_init *in = random_init(&g, 5, 2, 2, &c), *ok = random_init(&g, 5, 2, 2, &c);
    bl_sorn_init *pair[2] = {ok, in};
    bl_sorn_init *none = NULL;
    expect_create_error(&none, 1, BL_FLOAT64, "initials[0]");

    in->config.p_ee = 1.5;
    expect_create_error(&in, 1, BL_FLOAT64, "p_ee");
    /* Without an error buffer the failure is still a failure. */
    bl_model *m = (bl_model *)&m;
    assert_int_equal(bl_model_create_sorn((const bl_sorn_init *const *)&in, 1, BL_FLOAT64, &m,
                                          NULL),
                     BL_EVALUE);
    assert_null(m);
    expect_create_error(pair, 2, BL_FLOAT64, "initials[1]: SORNConfig.p_ee");
    in->config.p_ee = 0.1;
    in->config.eta_ip = INFINITY;
    expect_create_error(&in, 1, BL_FLOAT64, "eta_ip");
    in->config.eta_ip = 0.001;

    const struct {
        size_t *field;
        size_t bad;
        const char *needle;
    } sizes[] = {
        {&in->n, 0, "count"},
        {&in->r, 0, "n_inputs"},
        {&in->e, 0, "n_effectors"},
        {&in->n_e, 0, "n_e"},
        {&in->n_e, 6, "n_e"},
    };
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t keep = *sizes[k].field;
        *sizes[k].field = sizes[k].bad;
        expect_create_error(&in, 1, BL_FLOAT64, sizes[k].needle);
        *sizes[k].field = keep;
    }

    double **fields[] = {&in->w_ee, &in->ee_mask, &in->c_e, &in->w_ei, &in->w_ie, &in->w_eu,
                         &in->output_mask, &in->t_e, &in->t_i, &in->x, &in->y};
    const char *const names[] = {"w_ee", "ee_mask", "c_e", "w_ei", "w_ie", "w_eu",
                                 "output_mask", "t_e", "t_i", "x", "y"};
    double *arrays[11];
    for (size_t k = 0; k < 11; k++) {
        arrays[k] = *fields[k];
        *fields[k] = NULL;
        expect_create_error(&in, 1, BL_FLOAT64, names[k]);
        *fields[k] = arrays[k];
    }
    bl_test_expect_values_rejected(FAMILY, &in, BL_FLOAT64, arrays, names, 11, 0, NAN, INFINITY,
                                   "%s must be finite", false);
    /* The 0/1 arrays: binary before conversion. */
    double *const binary[] = {in->ee_mask, in->output_mask, in->x, in->y};
    const char *const bnames[] = {"ee_mask", "output_mask", "x", "y"};
    bl_test_expect_values_rejected(FAMILY, &in, BL_FLOAT32, binary, bnames, 4, 0, -1.0, 2.0,
                                   "%s must be binary before conversion", false);
    bl_model_destroy(create(&in, 1, BL_FLOAT64));

    /* N_I = 0: the inhibitory arrays may be absent. */
    bl_sorn_config c0 = config_with(0, 0.001, 0.001, true);
    bl_sorn_init *exc = bl_test_sorn_init_create(3, 1, 1, 3, &c0);
    assert_null(exc->w_ei);
    bl_model_destroy(create(&exc, 1, BL_FLOAT32));
    bl_test_sorn_init_destroy(exc);
    bl_test_sorn_init_destroy(in);
    bl_test_sorn_init_destroy(ok);
}

/* ---- §7.3: precision casts and lossy masks ------------------------------------------------ */

static void test_precision_overflow_rejected_before_upload(void **state)
{
    (void)state;
    bl_sorn_config c = config_with(0.2, 1e40, 0.001, true);
    bl_sorn_init *in = synchronous_init();
    in->config = c;
    expect_create_error(&in, 1, BL_FLOAT32, "after casting");
    expect_create_error(&in, 1, BL_FLOAT32, "eta_stdp is not finite after casting to float32");
    bl_model_destroy(create(&in, 1, BL_FLOAT64));
    in->config.eta_stdp = 0.001;
    in->config.T_E_max = 1e39; /* unused by a batch, still cast */
    expect_create_error(&in, 1, BL_FLOAT32, "T_E_max is not finite after casting");
    in->config.T_E_max = 0.5;
    double *const arrays[] = {in->c_e, in->w_ei, in->w_ie, in->w_eu, in->t_e, in->t_i};
    const char *const names[] = {"c_e", "w_ei", "w_ie", "w_eu", "t_e", "t_i"};
    bl_test_expect_values_rejected(FAMILY, &in, BL_FLOAT32, arrays, names, 6, 0, 3.5e38, -4e38,
                                   "%s is not finite after casting to float32", true);
    in->w_ee[1] = 1e39;
    expect_create_error(&in, 1, BL_FLOAT32, "w_ee is not finite after casting");
    /* The largest float survives. */
    in->w_ee[1] = 3.4028234663852886e38;
    bl_model_destroy(create(&in, 1, BL_FLOAT32));
    /* The cast check runs for every slot. */
    bl_sorn_init *bad = synchronous_init();
    bad->config.eta_ip = 1e40;
    bl_sorn_init *pair[2] = {in, bad};
    expect_create_error(pair, 2, BL_FLOAT32, "initials[1]: config.eta_ip");
    bl_test_sorn_init_destroy(bad);
    bl_test_sorn_init_destroy(in);
}

static void test_lossy_mask_casts_are_rejected(void **state)
{
    (void)state;
    bl_sorn_init *in = synchronous_init();
    in->ee_mask[1] = 0.1;
    expect_create_error(&in, 1, BL_FLOAT32, "binary before");
    expect_create_error(&in, 1, BL_FLOAT64, "ee_mask must be binary before conversion");
    in->ee_mask[1] = 0;
    in->x[0] = 0.5;
    expect_create_error(&in, 1, BL_FLOAT64, "x must be binary before conversion");
    bl_test_sorn_init_destroy(in);
}

/* ---- snapshots ------------------------------------------------------------------------- */

static void test_snapshot_layout(void **state)
{
    (void)state;
    bl_sorn_init *in = synchronous_init();
    in->w_ee[1] = -0.0;
    in->ee_mask[2] = 1;
    bl_model *m = create(&in, 1, BL_FLOAT32);
    bl_snapshot *s = bl_test_snap(m, 0);
    const bl_test_layout keys[] = {
        {"w_ee", 2, 2, 2, false},         {"ee_mask", 2, 2, 2, true},
        {"c_e", 1, 2, 1, false},          {"w_ei", 2, 2, 1, false},
        {"w_ie", 2, 1, 2, false},         {"w_eu", 2, 2, 1, false},
        {"output_mask", 2, 1, 2, true},   {"t_e", 1, 2, 1, false},
        {"t_i", 1, 1, 1, false},          {"x", 1, 2, 1, false},
        {"y", 1, 1, 1, false},            {"prev_x", 1, 2, 1, false},
        {"prev_y", 1, 1, 1, false},       {"activity", 1, 3, 1, false},
        {"drive", 1, 3, 1, false},        {"effectors", 1, 1, 1, false},
        {"finite", 0, 1, 1, true},        {"adaptation_finite", 1, 2, 1, true},
        {"plasticity", 1, 2, 1, true},    {"parameters", 1, 3, 1, false},
    };
    bl_test_expect_layout(s, keys, sizeof keys / sizeof *keys);
    assert_null(bl_snapshot_get(s, "weights"));
    /* Creation state: activity = concat(x, y), prev = current, drive 0,
     * effectors 0 even though x would read 0.5, flags set. */
    bl_test_expect_key(s, "activity", (double[]){1, 0, 0}, 3, "activity");
    bl_test_expect_key(s, "prev_x", (double[]){1, 0}, 2, "prev_x");
    bl_test_expect_key(s, "drive", (double[]){0, 0, 0}, 3, "drive");
    bl_test_expect_key(s, "effectors", (double[]){0}, 1, "effectors");
    bl_test_expect_key(s, "adaptation_finite", (double[]){1, 1}, 2, "adaptation_finite");
    bl_test_expect_key(s, "plasticity", (double[]){0, 0}, 2, "plasticity");
    bl_test_expect_key(s, "parameters", (double[]){0.001f, 0.001f, 0.1f}, 3, "parameters");
    bl_test_expect_key(s, "ee_mask", (double[]){0, 0, 1, 0}, 4, "ee_mask");
    bl_test_expect_key(s, "output_mask", (double[]){1, 1}, 2, "output_mask");
    bl_test_assert_bits(bl_test_sget(s, "w_ee")[1], -0.0, "signed zero survives");
    assert_true(bl_test_sget(s, "finite")[0] == 1);
    assert_true(bl_model_finite(m)[0] == 1);
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    bl_test_sorn_init_destroy(in);
}

/* §7.3 #4 for SORN: step, freeze, step, reset gives the creation snapshot. */
static void test_full_reset_matches_creation_snapshot(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        bl_test_trng g = {2024};
        bl_sorn_config c = config_with(0.2, 0.2, 0.05, true);
        bl_sorn_init *in = random_init(&g, 8, 2, 3, &c);
        bl_model *m = create(&in, 1, d ? BL_FLOAT32 : BL_FLOAT64);
        bl_test_expect_full_reset(FAMILY, m, (const double[]){1, 0.5}, "w_ee");
        bl_model_destroy(m);
        bl_test_sorn_init_destroy(in);
    }
}

/* ---- allocation failures ----------------------------------------------------------------- */

static void test_allocation_failures(void **state)
{
    (void)state;
    bl_test_trng g = {99};
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    bl_sorn_config c0 = config_with(0, 0.001, 0.001, true);
    /* With and without an inhibitory population. */
    bl_sorn_init *ins[2] = {random_init(&g, 6, 2, 3, &c), random_init(&g, 6, 2, 3, &c)};
    bl_sorn_init *exc[2] = {random_init(&g, 4, 2, 3, &c0), random_init(&g, 4, 2, 3, &c0)};
    for (int v = 0; v < 4; v++)
        bl_test_expect_allocation_failures(FAMILY, v < 2 ? ins : exc,
                                           v % 2 ? BL_FLOAT32 : BL_FLOAT64);
    for (int b = 0; b < 2; b++) {
        bl_test_sorn_init_destroy(ins[b]);
        bl_test_sorn_init_destroy(exc[b]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threshold_equality_and_synchronous_old_populations),
        cmocka_unit_test(test_zero_drive_fires),
        cmocka_unit_test(test_zero_original_normalisation_target_skips_scaling),
        cmocka_unit_test(test_pruning_is_permanent_zero_rows_stay_zero_and_reset_restores_mask),
        cmocka_unit_test(test_unmasked_entries_and_frozen_weights),
        cmocka_unit_test(test_float32_arithmetic_stays_in_float),
        cmocka_unit_test(test_freeze_modes_reset_and_owned_storage),
        cmocka_unit_test(test_batch_matches_single_float64),
        cmocka_unit_test(test_batch_matches_single_float32),
        cmocka_unit_test(test_inactive_batch_members_are_unchanged_and_batching_matches_single),
        cmocka_unit_test(test_one_node_no_inhibitory_population_and_initial_learning_disabled),
        cmocka_unit_test(test_nonfinite_drive_is_reported_even_when_threshold_output_is_binary),
        cmocka_unit_test(test_nonfinite_inhibitory_drive),
        cmocka_unit_test(test_sorn_row_sum_overflow_cannot_be_normalised_away),
        cmocka_unit_test(test_stdp_overflow_and_scale_are_flagged),
        cmocka_unit_test(test_threshold_overflow_is_reported),
        cmocka_unit_test(test_incompatible_batch_and_ports_rejected),
        cmocka_unit_test(test_initial_state_validation),
        cmocka_unit_test(test_precision_overflow_rejected_before_upload),
        cmocka_unit_test(test_lossy_mask_casts_are_rejected),
        cmocka_unit_test(test_snapshot_layout),
        cmocka_unit_test(test_full_reset_matches_creation_snapshot),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
