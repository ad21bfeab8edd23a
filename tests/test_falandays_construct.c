/* Falandays construction (spec/models.md §2.3): the known answers of
 * Appendix A.3/A.4, a differential test against an independent NumPy
 * construction over many random configurations, the construction and
 * validation tests of §7.1, and allocation failures. Every comparison of
 * doubles is on bit patterns: signed zeros of masked weights matter. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "support.h"
#include "model_support.h"

/* ---- helpers ----------------------------------------------------------- */

#define FAMILY (&bl_test_falandays_family)

static bl_falandays_init *construct_ok(const bl_falandays_config *c, size_t n, size_t r,
                                       size_t e, bl_gen *g)
{
    return bl_test_construct_ok(FAMILY, c, n, r, e, g);
}

/* A sparse known answer: listed [i][j] values, every other entry +0.0. */
typedef struct entry {
    size_t i, j;
    double v;
} entry;

static void expect_sparse(const char *what, const double *a, size_t n, const entry *nz,
                          size_t count)
{
    for (size_t k = 0; k < n * n; k++) {
        double want = 0.0;
        for (size_t m = 0; m < count; m++)
            if (nz[m].i * n + nz[m].j == k)
                want = nz[m].v;
        /* Unlisted entries are zeros of either sign (W*0.0 keeps W's). */
        if (want != 0.0) {
            bl_test_expect_bits(what, k, a[k], want);
        } else if (a[k] != 0.0) {
            fail_msg("%s: element %zu is %.17g, expected zero", what, k, a[k]);
        }
    }
}

/* ---- known answers (Appendix A.3, A.4) ---------------------------------- */

/* Links with probability 0.4, masks repaired, and three receptors linked
 * with the probabilities ilp (which must outlive the configuration). */
static bl_falandays_config repair_config(const double ilp[3])
{
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.link_p = 0.4;
    c.repair_masks = true;
    c.input_link_p = ilp;
    c.input_link_p_len = 3;
    return c;
}

static void test_kat_unsigned_repair(void **state)
{
    (void)state;
    const double ilp[3] = {0.0, 0.5, 1.0};
    bl_falandays_config c = repair_config(ilp);
    bl_gen g = bl_test_gen_for("kat");
    bl_falandays_init *s = construct_ok(&c, 6, 3, 2, &g);
    assert_int_equal(s->n, 6);
    assert_int_equal(s->r, 3);
    assert_int_equal(s->e, 2);
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(s->signs[i], 1);
    const double mask[36] = {0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 1,
                             0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0};
    bl_test_expect_table("mask", s->recurrent_mask, mask, 36);
    const double in[18] = {0, 0, 1.875, 0, 0, 1.875, 0, 1.875, 1.875,
                           0, 1.875, 1.875, 0, 1.875, 1.875, 0, 1.875, 1.875};
    bl_test_expect_table("input_weights", s->input_weights, in, 18);
    const double outm[12] = {0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1};
    bl_test_expect_table("output_mask", s->output_mask, outm, 12);
    const entry w[] = {
        {0, 2, 2.032780768513767},  {0, 4, 1.8586262860013454}, {0, 5, 2.033132158809259},
        {1, 0, 1.8456869285286135}, {1, 4, 2.062157286507973},  {2, 3, 1.7547818720715802},
        {2, 4, 1.896686160586268},  {2, 5, 1.9655093660282497}, {3, 1, 1.743875571435667},
        {3, 2, 1.8995376502425387}, {3, 4, 1.826791006806822},  {3, 5, 2.0016157787457325},
        {4, 0, 1.7990109451409673}, {4, 1, 1.756778164697681},  {4, 5, 1.9940871442712564},
        {5, 0, 1.885292443208175},  {5, 3, 1.9062622616999734}, {5, 4, 1.9952681867984998},
    };
    expect_sparse("weights", s->weights, 6, w, sizeof w / sizeof *w);
    for (size_t i = 0; i < 6; i++) {
        bl_test_expect_bits("acts", i, s->acts[i], 0.0);
        bl_test_expect_bits("targets", i, s->targets[i], 1.0);
        bl_test_expect_bits("spikes", i, s->spikes[i], 0.0);
    }
    /* The state keeps no pointer to the caller's probabilities. */
    assert_null(s->config.input_link_p);
    assert_true(s->config.repair_masks);
    bl_falandays_init_destroy(s);
}

static void test_kat_dale(void **state)
{
    (void)state;
    bl_gen g = bl_test_gen_for("kat-dale");
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.axis = BL_AXIS_DALE;
    c.link_p = 0.5;
    bl_falandays_init *s = construct_ok(&c, 5, 2, 2, &g);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(s->signs[i], 1);
    const double mask[25] = {0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0,
                             1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0};
    bl_test_expect_table("mask", s->recurrent_mask, mask, 25);
    const double in[10] = {1.875, 0, 1.875, 0, 0, 1.875, 1.875, 1.875, 0, 0};
    bl_test_expect_table("input_weights", s->input_weights, in, 10);
    const double outm[10] = {0, 1, 0, 1, 1, 0, 1, 0, 1, 0};
    bl_test_expect_table("output_mask", s->output_mask, outm, 10);
    const entry w[] = {
        {0, 3, 0.9383939259535279}, {0, 4, 1.2136582050609073}, {1, 0, 0.779128136645435},
        {2, 0, 0.6678667706720327}, {2, 1, 0.9546427941189815}, {2, 3, 1.249750844544423},
        {2, 4, 1.2145158277153683}, {3, 1, 1.5604775917235947}, {3, 4, 0.845761061992482},
    };
    expect_sparse("weights", s->weights, 5, w, sizeof w / sizeof *w);
    /* Dale magnitudes are max(0, ·) >= +0 and masking multiplies by +0.0, so
     * no weight may be -0.0. */
    for (size_t k = 0; k < 25; k++)
        assert_false(signbit(s->weights[k]));
    bl_falandays_init_destroy(s);
}

/* ---- differential test against NumPy ---------------------------------- */

#define MAX_R 5
#define CASES 600

typedef struct dcase {
    bl_seed seed;
    size_t n, r, e;
    bl_falandays_config c;
    double ilp[MAX_R];
} dcase;

/* Values a probability or gain can take: the edges (0, -0.0, 1) and draws. */
static double pick_prob(bl_gen *g)
{
    switch (bl_gen_integers(g, 0, 6)) {
    case 0:
        return 0.0;
    case 1:
        return 1.0;
    case 2:
        return -0.0;
    default:
        return bl_gen_random(g);
    }
}

static double pick_gain(bl_gen *g, double usual)
{
    switch (bl_gen_integers(g, 0, 6)) {
    case 0:
        return 0.0;
    case 1:
        return -0.0;
    case 2:
        return usual;
    case 3:
        return 2.0;
    default:
        return 3.0 * bl_gen_random(g);
    }
}

static void make_case(bl_gen *g, size_t idx, void *dc)
{
    dcase *d = dc;
    for (int k = 0; k < 4; k++)
        d->seed.limb[k] = bl_philox_next64(&g->bits);
    /* Mostly small networks (where repairs happen), some up to 70 nodes. */
    d->n = (size_t)(idx % 3 == 0 ? bl_gen_integers(g, 1, 71) : bl_gen_integers(g, 1, 9));
    d->r = (size_t)bl_gen_integers(g, 1, MAX_R + 1);
    d->e = (size_t)bl_gen_integers(g, 1, 6);
    bl_falandays_config *c = &d->c;
    bl_falandays_config_default(c);
    c->axis = bl_gen_integers(g, 0, 3) == 0 ? BL_AXIS_DALE : BL_AXIS_UNSIGNED;
    c->weight_init_mode = (bl_weight_init)bl_gen_integers(g, 0, 3);
    c->repair_masks = bl_gen_integers(g, 0, 2) == 1;
    c->link_p = bl_gen_integers(g, 0, 2) ? 0.5 * bl_gen_random(g) : pick_prob(g);
    if (bl_gen_integers(g, 0, 2)) {
        for (size_t q = 0; q < d->r; q++)
            d->ilp[q] = pick_prob(g);
        c->input_link_p = d->ilp;
        c->input_link_p_len = d->r;
    }
    c->inhibitory_frac = pick_prob(g);
    c->recurrent_init_scale = pick_gain(g, 1.0);
    c->input_weight = pick_gain(g, 1.875);
    c->weight_init_std = pick_gain(g, 1.0);
    c->targ_min = 0.25 + 4.0 * bl_gen_random(g);
}

static const char *mode_name(bl_weight_init m)
{
    return m == BL_WINIT_EXCITATORY ? "excitatory"
           : m == BL_WINIT_PONG_MIXED ? "pong_mixed"
                                      : "legacy_normal";
}

/* One oracle request line for a case; %.17g round-trips through float(). */
static size_t format_case(char *buf, size_t cap, const void *dc)
{
    const dcase *d = dc;
    char hex[65];
    bl_seed_hex(&d->seed, hex);
    const bl_falandays_config *c = &d->c;
    int len = snprintf(buf, cap,
                       "falandays_construct %s %zu %zu %zu axis=%s,mode=%s,repair=%d,"
                       "link_p=%.17g,inhibitory_frac=%.17g,scale=%.17g,input_weight=%.17g,"
                       "weight_init_std=%.17g,targ_min=%.17g,input_link_p=",
                       hex, d->n, d->r, d->e, c->axis == BL_AXIS_DALE ? "dale" : "unsigned",
                       mode_name(c->weight_init_mode), c->repair_masks ? 1 : 0, c->link_p,
                       c->inhibitory_frac, c->recurrent_init_scale, c->input_weight,
                       c->weight_init_std, c->targ_min);
    assert_true(len > 0 && (size_t)len < cap);
    if (!c->input_link_p) {
        len += snprintf(buf + len, cap - (size_t)len, "none");
    } else {
        for (size_t q = 0; q < d->r; q++)
            len += snprintf(buf + len, cap - (size_t)len, "%s%.17g", q ? ":" : "", d->ilp[q]);
    }
    len += snprintf(buf + len, cap - (size_t)len, "\n");
    assert_true((size_t)len < cap);
    return (size_t)len;
}

/* Coverage of the interesting corners, so a change in the case maker
 * cannot silently drop them. */
typedef struct tally {
    size_t dale, pong, legacy, repaired, lp0, lp1, ilp0, negzero, big;
} tally;

static void compare_case(size_t idx, const void *dc, const unsigned char *rec, size_t nbytes,
                         void *ctx)
{
    const dcase *d = dc;
    size_t n = d->n, r = d->r, e = d->e;
    size_t count = n + n * n + n * r + n * e + n * n + 3 * n + 2;
    if (nbytes != count * 8)
        fail_msg("case %zu: oracle record of %zu bytes, expected %zu", idx, nbytes, count * 8);
    bl_gen g;
    bl_gen_init(&g, &d->seed);
    bl_falandays_init *s = construct_ok(&d->c, n, r, e, &g);
    const bl_test_part parts[] = {
        {"recurrent_mask", n * n, s->recurrent_mask},
        {"input_weights", n * r, s->input_weights},
        {"output_mask", n * e, s->output_mask},
        {"weights", n * n, s->weights},
        {"acts", n, s->acts},
        {"targets", n, s->targets},
        {"spikes", n, s->spikes},
    };
    char what[96];
    snprintf(what, sizeof what, "case %zu signs", idx);
    for (size_t i = 0; i < n; i++)
        bl_test_expect_bits(what, i, (double)s->signs[i], bl_test_le_double(rec + 8 * i));
    size_t off = bl_test_expect_parts(idx, n, r, e, parts, sizeof parts / sizeof *parts, rec, n);
    bl_test_expect_gen_position(idx, &g, rec, off);
    bl_falandays_init_destroy(s);

    tally *t = ctx;
    const bl_falandays_config *c = &d->c;
    t->dale += c->axis == BL_AXIS_DALE;
    t->pong += c->axis != BL_AXIS_DALE && c->weight_init_mode == BL_WINIT_PONG_MIXED;
    t->legacy += c->axis != BL_AXIS_DALE && c->weight_init_mode == BL_WINIT_LEGACY_NORMAL;
    t->repaired += c->repair_masks;
    t->lp0 += c->link_p == 0.0;
    t->lp1 += c->link_p == 1.0;
    t->negzero += signbit(c->recurrent_init_scale) || signbit(c->input_weight);
    t->big += n >= 50;
    if (c->input_link_p)
        for (size_t q = 0; q < r; q++)
            t->ilp0 += c->input_link_p[q] == 0.0;
}

static void test_numpy_differential(void **state)
{
    (void)state;
    const bl_test_numpy_run run = {CASES, sizeof(dcase), UINT64_C(0x5eed0fa1a4da75), make_case,
                                   format_case, compare_case};
    tally t = {0};
    free(bl_test_numpy_differential(&run, &t));
    print_message("compared %d random constructions: dale %zu, pong_mixed %zu, legacy %zu, "
                  "repair %zu, link_p 0: %zu, link_p 1: %zu, zero input_link_p: %zu, "
                  "-0.0 gains %zu, N >= 50: %zu\n",
                  CASES, t.dale, t.pong, t.legacy, t.repaired, t.lp0, t.lp1, t.ilp0, t.negzero,
                  t.big);
    assert_true(t.dale > 50 && t.pong > 50 && t.legacy > 50 && t.repaired > 100);
    assert_true(t.lp0 > 10 && t.lp1 > 10 && t.ilp0 > 50 && t.negzero > 50 && t.big > 10);
}

/* ---- §7.1 test 7 -------------------------------------------------------- */

static void test_scale_preserves_draws(void **state)
{
    (void)state;
    const double ilp[3] = {0.0, 0.2, 0.8};
    bl_falandays_config c = repair_config(ilp);
    const size_t n = 8, r = 3, e = 2;
    for (int variant = 0; variant < 4; variant++) {
        char key[32];
        snprintf(key, sizeof key, "scale-%d", variant);
        c.weight_init_mode = (bl_weight_init)(variant % 3);
        c.axis = variant == 3 ? BL_AXIS_DALE : BL_AXIS_UNSIGNED;
        c.recurrent_init_scale = 1.0;
        bl_gen g1 = bl_test_gen_for(key);
        bl_falandays_init *a = construct_ok(&c, n, r, e, &g1);
        c.recurrent_init_scale = 2.0;
        bl_gen g2 = bl_test_gen_for(key);
        bl_falandays_init *b = construct_ok(&c, n, r, e, &g2);
        /* Identical generator positions afterwards: the scale draws nothing. */
        assert_memory_equal(&g1, &g2, sizeof g1);

        assert_ptr_not_equal(a->weights, b->weights);
        assert_ptr_not_equal(a->recurrent_mask, b->recurrent_mask);
        assert_ptr_not_equal(a->input_weights, b->input_weights);
        assert_ptr_not_equal(a->output_mask, b->output_mask);
        assert_ptr_not_equal(a->signs, b->signs);
        for (size_t k = 0; k < n * n; k++)
            bl_test_expect_bits("scaled weights", k, b->weights[k], 2.0 * a->weights[k]);
        assert_memory_equal(a->recurrent_mask, b->recurrent_mask, n * n * sizeof(double));
        assert_memory_equal(a->input_weights, b->input_weights, n * r * sizeof(double));
        assert_memory_equal(a->output_mask, b->output_mask, n * e * sizeof(double));
        assert_memory_equal(a->signs, b->signs, n * sizeof(int32_t));

        size_t links = 0;
        for (size_t i = 0; i < n; i++) {
            assert_true(a->input_weights[i * r + 0] == 0.0);
            assert_true(a->recurrent_mask[i * n + i] == 0.0);
            bool any = false;
            for (size_t j = 0; j < n; j++)
                any |= a->recurrent_mask[i * n + j] != 0.0;
            for (size_t q = 0; q < r; q++)
                any |= a->input_weights[i * r + q] != 0.0;
            /* Input repair guarantees every node a link on the unsigned axis. */
            if (c.axis == BL_AXIS_UNSIGNED)
                assert_true(any);
            for (size_t j = 0; j < n; j++) {
                double m = a->recurrent_mask[i * n + j];
                assert_true(m == 0.0 || m == 1.0);
                links += m == 1.0;
                /* Weights outside the mask are zero (and stay zero scaled). */
                if (m == 0.0)
                    assert_true(a->weights[i * n + j] == 0.0);
            }
        }
        assert_true(links > 0);
        for (size_t k = 0; k < e; k++) {
            size_t sources = 0;
            for (size_t i = 0; i < n; i++)
                sources += a->output_mask[i * e + k] == 1.0;
            assert_true(sources >= 1);
        }
        bl_falandays_init_destroy(a);
        bl_falandays_init_destroy(b);
    }
}

/* A masked-out negative weight keeps its sign: W*0.0 = -0.0, and a -0.0
 * scale flips every zero, as NumPy's two products do. */
static void test_signed_zeros(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_gen g = bl_test_gen_for("signed-zeros");
    c.weight_init_mode = BL_WINIT_LEGACY_NORMAL;
    c.link_p = 0.0;
    bl_falandays_init *s = construct_ok(&c, 16, 1, 1, &g);
    size_t neg = 0;
    for (size_t k = 0; k < 256; k++) {
        assert_true(s->weights[k] == 0.0);
        neg += signbit(s->weights[k]) != 0;
    }
    assert_true(neg > 64 && neg < 192);
    bl_falandays_init_destroy(s);

    c.recurrent_init_scale = -0.0;
    c.input_weight = -0.0;
    bl_gen g2 = bl_test_gen_for("signed-zeros");
    bl_falandays_init *t = construct_ok(&c, 16, 1, 1, &g2);
    g = bl_test_gen_for("signed-zeros");
    c.recurrent_init_scale = 1.0;
    c.input_weight = 1.875;
    bl_falandays_init *u = construct_ok(&c, 16, 1, 1, &g);
    for (size_t k = 0; k < 256; k++)
        assert_true(signbit(t->weights[k]) != signbit(u->weights[k]));
    for (size_t i = 0; i < 16; i++)
        assert_true(signbit(t->input_weights[i]));
    bl_falandays_init_destroy(t);
    bl_falandays_init_destroy(u);
}

/* ---- §7.1 tests 9 and 10: invalid configurations and shapes ------------- */

static void expect_reject(const bl_falandays_config *c, size_t n, size_t r, size_t e, bl_gen *g,
                          bl_status want, const char *needle)
{
    bl_test_expect_construct_rejected(FAMILY, c, n, r, e, g, want, needle);
}

static void test_invalid_configs(void **state)
{
    (void)state;
    bl_gen g = bl_test_gen_for("invalid");
    bl_falandays_config c;
#define AT(field) offsetof(bl_falandays_config, field)
    static const bl_test_fault faults[] = {
        {1, {AT(leak)}, {1.1}, "leak"},
        {1, {AT(link_p)}, {-0.1}, "link_p"},
        {1, {AT(noise_gain)}, {NAN}, "noise_gain"},
        {1, {AT(targ_min)}, {0.0}, "targ_min"},
        /* Two faults: the spec's order (finite, [0,1], non-negative,
         * positive, enums, input_link_p) decides which is reported. */
        {2, {AT(leak), AT(noise_gain)}, {1.1, NAN}, "noise_gain"},
        {2, {AT(threshold_mult), AT(link_p)}, {0.0, -0.1}, "link_p"},
        {2, {AT(targ_min), AT(lrate_targ)}, {0.0, -1.0}, "lrate_targ"},
    };
#undef AT
    for (size_t k = 0; k < sizeof faults / sizeof *faults; k++) {
        bl_falandays_config_default(&c);
        bl_test_apply_fault(&c, &faults[k]);
        expect_reject(&c, 4, 2, 2, &g, BL_EVALUE, faults[k].needle);
    }
    bl_falandays_config_default(&c);
    c.weight_init_mode = (bl_weight_init)7;
    expect_reject(&c, 4, 2, 2, &g, BL_EVALUE, "weight_init_mode");
    c.targ_min = -1.0; /* a bad value comes before a bad enum */
    expect_reject(&c, 4, 2, 2, &g, BL_EVALUE, "targ_min");
    const double bad[2] = {0.5, 1.5};
    bl_falandays_config_default(&c);
    c.input_link_p = bad;
    c.input_link_p_len = 2;
    c.axis = (bl_axis)9;
    expect_reject(&c, 4, 2, 2, &g, BL_EVALUE, "axis");
    c.axis = BL_AXIS_UNSIGNED;
    expect_reject(&c, 4, 2, 2, &g, BL_EVALUE, "input_link_p");
    /* An invalid config is reported before bad dimensions. */
    expect_reject(&c, 0, 2, 2, &g, BL_EVALUE, "input_link_p");
}

static void test_invalid_shapes(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_test_expect_construct_shapes(FAMILY, &c);

    bl_gen g = bl_test_gen_for("shapes");
    const double ilp[2] = {0.1, 0.2};
    c.input_link_p = ilp;
    c.input_link_p_len = 2;
    expect_reject(&c, 3, 3, 2, &g, BL_EVALUE, "input_link_p must have one probability per");
    expect_reject(&c, 3, 1, 2, &g, BL_EVALUE, "input_link_p must have one probability per");
    bl_falandays_init *s = construct_ok(&c, 3, 2, 2, &g);
    bl_falandays_init_destroy(s);
}

static void test_init_alloc(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.targ_min = 0.5;
    const double ilp[1] = {0.3};
    c.input_link_p = ilp;
    c.input_link_p_len = 1;
    bl_falandays_init *s = NULL;
    bl_error err = {0};
    assert_int_equal(bl_falandays_init_create(&c, 3, 4, 5, &s, &err), BL_OK);
    assert_int_equal(s->n, 3);
    assert_int_equal(s->r, 4);
    assert_int_equal(s->e, 5);
    assert_null(s->config.input_link_p);
    assert_int_equal(s->config.input_link_p_len, 0);
    for (size_t k = 0; k < 9; k++) {
        bl_test_expect_bits("weights", k, s->weights[k], 0.0);
        bl_test_expect_bits("mask", k, s->recurrent_mask[k], 0.0);
    }
    for (size_t k = 0; k < 12; k++)
        bl_test_expect_bits("input_weights", k, s->input_weights[k], 0.0);
    for (size_t k = 0; k < 15; k++)
        bl_test_expect_bits("output_mask", k, s->output_mask[k], 0.0);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(s->signs[i], 1);
        bl_test_expect_bits("acts", i, s->acts[i], 0.0);
        bl_test_expect_bits("targets", i, s->targets[i], 0.5);
        bl_test_expect_bits("spikes", i, s->spikes[i], 0.0);
    }
    bl_falandays_init_destroy(s);
    bl_falandays_init_destroy(NULL);

    static bl_falandays_init sentinel;
    s = &sentinel;
    assert_int_equal(bl_falandays_init_create(&c, 3, 0, 5, &s, &err), BL_EVALUE);
    assert_null(s);
    c.leak = -1.0;
    s = &sentinel;
    assert_int_equal(bl_falandays_init_create(&c, 3, 1, 5, &s, &err), BL_EVALUE);
    assert_null(s);
}

/* ---- allocation failures ------------------------------------------------ */

static void same_weights(const void *got, const void *want)
{
    const bl_falandays_init *a = got, *b = want;
    assert_memory_equal(a->weights, b->weights, 49 * sizeof(double));
}

static void test_allocation_failures(void **state)
{
    (void)state;
    const double ilp[2] = {0.0, 0.6};
    for (int variant = 0; variant < 4; variant++) {
        bl_falandays_config c;
        bl_falandays_config_default(&c);
        c.repair_masks = true;
        c.input_link_p = ilp;
        c.input_link_p_len = 2;
        c.weight_init_mode = (bl_weight_init)(variant % 3);
        c.axis = variant == 3 ? BL_AXIS_DALE : BL_AXIS_UNSIGNED;
        long total = bl_test_construct_allocations(FAMILY, &c, 7, same_weights);
        /* Struct + 8 arrays, plus pong_mixed's scratch. */
        assert_int_equal(total, c.axis != BL_AXIS_DALE &&
                                        c.weight_init_mode == BL_WINIT_PONG_MIXED
                                    ? 10
                                    : 9);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kat_unsigned_repair),
        cmocka_unit_test(test_kat_dale),
        cmocka_unit_test(test_numpy_differential),
        cmocka_unit_test(test_scale_preserves_draws),
        cmocka_unit_test(test_signed_zeros),
        cmocka_unit_test(test_invalid_configs),
        cmocka_unit_test(test_invalid_shapes),
        cmocka_unit_test(test_init_alloc),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
