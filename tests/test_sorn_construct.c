/* SORN construction (spec/models.md §3.2–§3.4): the known answer of
 * Appendix A.5, population sizes, a differential test against an independent
 * NumPy construction over many random configurations (generator position
 * included), the construction and validation tests of §7.2, and allocation
 * failures. Doubles are compared on bit patterns. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/rng.h"
#include "support.h"
#include "model_support.h"

/* ---- helpers ----------------------------------------------------------- */

#define FAMILY (&bl_test_sorn_family)

static bl_sorn_init *construct_ok(const bl_sorn_config *c, size_t n, size_t r, size_t e,
                                  bl_gen *g)
{
    return bl_test_construct_ok(FAMILY, c, n, r, e, g);
}

static void expect_zeros(const char *what, const double *a, size_t count)
{
    for (size_t k = 0; k < count; k++)
        bl_test_expect_bits(what, k, a[k], 0.0);
}

/* Every array of a state, with its length, in the oracle's order. */
enum { NPARTS = 9 };

static void state_parts(const bl_sorn_init *s, bl_test_part out[NPARTS])
{
    size_t ne = s->n_e, ni = s->n - s->n_e;
    size_t k = 0;
    out[k++] = (bl_test_part){"ee_mask", ne * ne, s->ee_mask};
    out[k++] = (bl_test_part){"w_ee", ne * ne, s->w_ee};
    out[k++] = (bl_test_part){"c_e", ne, s->c_e};
    out[k++] = (bl_test_part){"w_ei", ne * ni, s->w_ei};
    out[k++] = (bl_test_part){"w_ie", ni * ne, s->w_ie};
    out[k++] = (bl_test_part){"w_eu", ne * s->r, s->w_eu};
    out[k++] = (bl_test_part){"output_mask", s->e * ne, s->output_mask};
    out[k++] = (bl_test_part){"t_e", ne, s->t_e};
    out[k++] = (bl_test_part){"t_i", ni, s->t_i};
}

/* Two states hold the same values in distinct arrays. */
static void expect_same_state(const void *x, const void *y)
{
    const bl_sorn_init *a = x, *b = y;
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->n_e, b->n_e);
    bl_test_part pa[NPARTS], pb[NPARTS];
    state_parts(a, pa);
    state_parts(b, pb);
    for (size_t p = 0; p < NPARTS; p++) {
        if (pa[p].len == 0)
            continue;
        assert_ptr_not_equal(pa[p].data, pb[p].data);
        assert_memory_equal(pa[p].data, pb[p].data, pa[p].len * sizeof(double));
    }
}

/* ---- known answer (Appendix A.5) --------------------------------------- */

static void test_kat(void **state)
{
    (void)state;
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    c.p_ee = c.p_input = c.p_output = 0.4;
    bl_gen g = bl_test_gen_for("kat-sorn");
    bl_sorn_init *s = construct_ok(&c, 6, 2, 2, &g);
    assert_int_equal(s->n, 6);
    assert_int_equal(s->r, 2);
    assert_int_equal(s->e, 2);
    assert_int_equal(s->n_e, 5);
    assert_memory_equal(&s->config, &c, sizeof c);

    const double mask[25] = {0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0,
                             1, 0, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0};
    bl_test_expect_table("ee_mask", s->ee_mask, mask, 25);
    /* The non-zero weights, [row][column]. */
    static const struct {
        size_t i, j;
        double v;
    } nz[] = {
        {0, 2, 0.2872775756513713},  {0, 3, 0.20267546860901164}, {0, 4, 0.5100469557396171},
        {1, 2, 0.5714630437137352},  {1, 4, 0.4285369562862648},  {2, 3, 1.0},
        {3, 1, 0.3729287764701384},  {3, 2, 0.4575011763737802},  {3, 4, 0.16957004715608132},
        {4, 0, 0.6206461160219001},  {4, 2, 0.2576872450533732},  {4, 3, 0.1216666389247266},
    };
    double w[25] = {0};
    for (size_t k = 0; k < sizeof nz / sizeof *nz; k++)
        w[nz[k].i * 5 + nz[k].j] = nz[k].v;
    /* Unlisted entries are np.zeros' +0.0 (times a positive scale). */
    bl_test_expect_table("w_ee", s->w_ee, w, 25);
    const double c_e[5] = {1.0, 1.0, 1.0, 0.9999999999999998, 0.9999999999999999};
    bl_test_expect_table("c_e", s->c_e, c_e, 5);
    const double w_ei[5] = {1.0, 1.0, 1.0, 1.0, 1.0};
    bl_test_expect_table("w_ei", s->w_ei, w_ei, 5);
    const double w_ie[5] = {0.11182904619065026, 0.44374051474988985, 0.045626743627724724,
                            0.20986474005062797, 0.1889389553811071};
    bl_test_expect_table("w_ie", s->w_ie, w_ie, 5);
    const double w_eu[10] = {0.5643262312559971, 0.4356737687440028, 0, 0, 0, 0.9999999999999999,
                             1.0, 0, 0, 0};
    bl_test_expect_table("w_eu", s->w_eu, w_eu, 10);
    const double outm[10] = {1, 0, 0, 0, 1, 0, 0, 1, 1, 0};
    bl_test_expect_table("output_mask", s->output_mask, outm, 10);
    const double t_e[5] = {0.05521415482600617, 0.14061543672519106, 0.3216829365942005,
                           0.22531392318064525, 0.09167769568696166};
    bl_test_expect_table("t_e", s->t_e, t_e, 5);
    bl_test_expect_bits("t_i", 0, s->t_i[0], 0.6553740702898639);
    expect_zeros("x", s->x, 5);
    expect_zeros("y", s->y, 1);
    bl_sorn_init_destroy(s);
}

/* ---- population sizes (§3.2) ------------------------------------------- */

static void test_population_sizes(void **state)
{
    (void)state;
    const struct {
        double ratio;
        size_t n, n_e;
    } cases[] = {
        {0.2, 200, 167}, {0.2, 64, 53}, {0.2, 8, 7}, {0.2, 6, 5}, {1.0, 5, 2},
        {0.2, 3, 2},     {0.2, 1, 1},   {0.0, 1, 1}, {0.0, 7, 7}, {0.0, 200, 200},
        {-0.0, 9, 9},    {1.0, 1, 1},   {1.0, 2, 1}, {1.0, 3, 2}, {1.0, 7, 4},
        {1.0, 9, 4},     {0.5, 7, 5},   {0.2, 2, 2},
        /* Near SIZE_MAX the quotient rounds past size_t; the count stays n. */
        {0.0, SIZE_MAX, SIZE_MAX},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        size_t got = bl_sorn_excitatory_count(cases[k].ratio, cases[k].n);
        if (got != cases[k].n_e)
            fail_msg("ratio %g, N = %zu: N_E %zu, expected %zu", cases[k].ratio, cases[k].n, got,
                     cases[k].n_e);
        if (cases[k].n > 200)
            continue;
        /* Construction agrees, with NULL arrays for an empty I population. */
        bl_sorn_config c;
        bl_sorn_config_default(&c);
        c.inhibitory_fraction = cases[k].ratio;
        bl_gen g = bl_test_gen_for("sizes");
        bl_sorn_init *s = construct_ok(&c, cases[k].n, 2, 3, &g);
        assert_int_equal(s->n_e, cases[k].n_e);
        bool empty = cases[k].n_e == cases[k].n;
        assert_true((s->w_ei == NULL) == empty);
        assert_true((s->w_ie == NULL) == empty);
        assert_true((s->t_i == NULL) == empty);
        assert_true((s->y == NULL) == empty);
        bl_sorn_init_destroy(s);
    }
}

/* N = 1: no E->E candidate exists (no repair draw), permutation(1) draws
 * nothing, and an empty w_ee row draws nothing: one uniform for the mask,
 * one per receptor weight and one threshold. */
static void test_single_node_draws(void **state)
{
    (void)state;
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    bl_gen g = bl_test_gen_for("single");
    bl_gen ref = g;
    bl_sorn_init *s = construct_ok(&c, 1, 2, 3, &g);
    assert_int_equal(s->n_e, 1);
    bl_test_expect_bits("ee_mask", 0, s->ee_mask[0], 0.0);
    bl_test_expect_bits("w_ee", 0, s->w_ee[0], 0.0);
    bl_test_expect_bits("c_e", 0, s->c_e[0], 0.0);
    double u[4];
    for (int k = 0; k < 4; k++)
        u[k] = bl_gen_random(&ref);
    /* The receptor row [u1, u2] scaled by 1/(u1 + u2). */
    double scale = 1.0 / (u[1] + u[2]);
    bl_test_expect_bits("w_eu", 0, s->w_eu[0], u[1] * scale);
    bl_test_expect_bits("w_eu", 1, s->w_eu[1], u[2] * scale);
    for (size_t k = 0; k < 3; k++)
        bl_test_expect_bits("output_mask", k, s->output_mask[k], 1.0);
    bl_test_expect_bits("t_e", 0, s->t_e[0], 0.5 * u[3]);
    assert_memory_equal(&g, &ref, sizeof g);
    bl_sorn_init_destroy(s);
}

/* ---- differential test against NumPy ---------------------------------- */

#define CASES 420

typedef struct dcase {
    bl_seed seed;
    size_t n, r, e;
    bl_sorn_config c;
} dcase;

/* Probabilities: the edges (0, -0.0, 1), small values (repairs) and draws. */
static double pick_prob(bl_gen *g)
{
    switch (bl_gen_integers(g, 0, 7)) {
    case 0:
        return 0.0;
    case 1:
        return 1.0;
    case 2:
        return -0.0;
    case 3:
        return 0.2 * bl_gen_random(g);
    default:
        return bl_gen_random(g);
    }
}

/* Row sums and threshold scales: zeros of both signs (no draws), the
 * defaults, draws, and sizes whose scale overflows. */
static double pick_scale(bl_gen *g, double usual)
{
    switch (bl_gen_integers(g, 0, 24)) {
    case 0:
    case 1:
    case 2:
    case 3:
        return 0.0;
    case 4:
        return -0.0;
    case 5:
    case 6:
    case 7:
    case 8:
        return usual;
    case 9:
        return 1e300;
    case 10:
        return 1.7976931348623157e308;
    default:
        return 3.0 * bl_gen_random(g);
    }
}

static void make_case(bl_gen *g, size_t idx, void *dc)
{
    dcase *d = dc;
    for (int k = 0; k < 4; k++)
        d->seed.limb[k] = bl_philox_next64(&g->bits);
    /* Mostly small networks (repairs, empty I populations), some up to 200
     * (pairwise c_e over more than 128 values). */
    d->n = (size_t)(idx % 3 == 0 ? bl_gen_integers(g, 1, 201) : bl_gen_integers(g, 1, 13));
    d->r = (size_t)bl_gen_integers(g, 1, 9);
    d->e = (size_t)bl_gen_integers(g, 1, 9);
    bl_sorn_config *c = &d->c;
    bl_sorn_config_default(c);
    switch (bl_gen_integers(g, 0, 6)) {
    case 0:
        c->inhibitory_fraction = 0.0;
        break;
    case 1:
        c->inhibitory_fraction = 1.0;
        break;
    case 2:
        c->inhibitory_fraction = 0.2;
        break;
    default:
        c->inhibitory_fraction = bl_gen_random(g);
    }
    c->p_ee = bl_gen_integers(g, 0, 2) ? 0.3 * bl_gen_random(g) : pick_prob(g);
    c->p_ei = pick_prob(g);
    c->p_ie = pick_prob(g);
    c->p_input = pick_prob(g);
    c->p_output = pick_prob(g);
    c->ee_row_sum = pick_scale(g, 1.0);
    c->ei_row_sum = pick_scale(g, 1.0);
    c->ie_row_sum = pick_scale(g, 1.0);
    c->input_row_sum = pick_scale(g, 1.0);
    c->T_E_max = pick_scale(g, 0.5);
    c->T_I_max = pick_scale(g, 1.0);
}

/* One oracle request line; %.17g round-trips through float(). */
static size_t format_case(char *buf, size_t cap, const void *dc)
{
    const dcase *d = dc;
    char hex[65];
    bl_seed_hex(&d->seed, hex);
    const bl_sorn_config *c = &d->c;
    int len = snprintf(buf, cap,
                       "sorn_construct %s %zu %zu %zu ratio=%.17g,p_ee=%.17g,p_ei=%.17g,"
                       "p_ie=%.17g,p_input=%.17g,p_output=%.17g,ee_sum=%.17g,ei_sum=%.17g,"
                       "ie_sum=%.17g,input_sum=%.17g,te_max=%.17g,ti_max=%.17g\n",
                       hex, d->n, d->r, d->e, c->inhibitory_fraction, c->p_ee, c->p_ei, c->p_ie,
                       c->p_input, c->p_output, c->ee_row_sum, c->ei_row_sum, c->ie_row_sum,
                       c->input_row_sum, c->T_E_max, c->T_I_max);
    assert_true(len > 0 && (size_t)len < cap);
    return (size_t)len;
}

/* Coverage of the corners, so a change in the case maker cannot drop them
 * silently. */
typedef struct tally {
    size_t empty_i, nan, repaired, big, ratio0, ratio1, p0, p1, sum0, n1;
} tally;

static void compare_case(size_t idx, const void *dc, const unsigned char *rec, size_t nbytes,
                         void *ctx)
{
    const dcase *d = dc;
    bl_gen g;
    bl_gen_init(&g, &d->seed);
    bl_sorn_init *s = construct_ok(&d->c, d->n, d->r, d->e, &g);
    size_t ne = s->n_e, ni = d->n - ne;
    size_t count = 1 + 2 * ne * ne + ne + 2 * ne * ni + ne * d->r + d->e * ne + ne + ni + 2;
    if (nbytes != count * 8)
        fail_msg("case %zu: oracle record of %zu bytes, expected %zu (N_E %zu)", idx, nbytes,
                 count * 8, ne);
    char what[128];
    snprintf(what, sizeof what, "case %zu N_E", idx);
    bl_test_expect_bits(what, 0, (double)ne, bl_test_le_double(rec));
    bl_test_part parts[NPARTS];
    state_parts(s, parts);
    size_t off = bl_test_expect_parts(idx, d->n, d->r, d->e, parts, NPARTS, rec, 1);
    bl_test_expect_gen_position(idx, &g, rec, off);

    tally *t = ctx;
    for (size_t p = 0; p < NPARTS; p++)
        for (size_t k = 0; k < parts[p].len; k++)
            t->nan += isnan(parts[p].data[k]) != 0;
    t->empty_i += ni == 0;
    t->big += ne > 128;
    t->repaired += d->c.p_ee == 0.0 && ne >= 2;
    bl_sorn_init_destroy(s);
    const bl_sorn_config *c = &d->c;
    t->ratio0 += c->inhibitory_fraction == 0.0;
    t->ratio1 += c->inhibitory_fraction == 1.0;
    const double probs[] = {c->p_ee, c->p_ei, c->p_ie, c->p_input, c->p_output};
    for (size_t k = 0; k < 5; k++) {
        t->p0 += probs[k] == 0.0;
        t->p1 += probs[k] == 1.0;
    }
    const double sums[] = {c->ee_row_sum, c->ei_row_sum, c->ie_row_sum, c->input_row_sum};
    for (size_t k = 0; k < 4; k++)
        t->sum0 += sums[k] == 0.0;
    t->n1 += d->n == 1;
}

static void test_numpy_differential(void **state)
{
    (void)state;
    const bl_test_numpy_run run = {CASES, sizeof(dcase), UINT64_C(0x5eed0050a2c0), make_case,
                                   format_case, compare_case};
    tally t = {0};
    free(bl_test_numpy_differential(&run, &t));
    print_message("compared %d random constructions: ratio 0: %zu, ratio 1: %zu, "
                  "probabilities 0: %zu, 1: %zu, zero row sums %zu, N = 1: %zu, N_I = 0: %zu, "
                  "E->E repairs %zu, N_E > 128: %zu, NaN values %zu\n",
                  CASES, t.ratio0, t.ratio1, t.p0, t.p1, t.sum0, t.n1, t.empty_i, t.repaired,
                  t.big, t.nan);
    assert_true(t.ratio0 > 30 && t.ratio1 > 30 && t.p0 > 150 && t.p1 > 100 && t.sum0 > 150);
    assert_true(t.n1 > 10 && t.empty_i > 50 && t.repaired > 20 && t.big > 20 && t.nan > 0);
}

/* ---- §7.2 test 7 -------------------------------------------------------- */

/* Every entry of the rows x cols matrix w is positive and every row sums
 * to 1. */
static void expect_full_rows(const double *w, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++) {
        double tot = 0.0;
        for (size_t j = 0; j < cols; j++) {
            assert_true(w[i * cols + j] > 0.0);
            tot += w[i * cols + j];
        }
        assert_true(fabs(tot - 1.0) < 1e-12);
    }
}

static void test_defaults_fanout_no_self_determinism(void **state)
{
    (void)state;
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    const size_t n = 200, r = 8, e = 2;
    bl_gen g1 = bl_test_gen_for("sorn-200");
    bl_sorn_init *a = construct_ok(&c, n, r, e, &g1);
    const size_t ne = a->n_e, ni = n - ne;
    assert_int_equal(ne, 167);
    assert_int_equal(ni, 33);
    assert_non_null(a->w_ie);

    size_t pairwise_differs = 0;
    for (size_t i = 0; i < ne; i++) {
        const double *m = a->ee_mask + i * ne, *w = a->w_ee + i * ne;
        bl_test_expect_bits("ee_mask diagonal", i, m[i], 0.0);
        bl_test_expect_bits("w_ee diagonal", i, w[i], 0.0);
        size_t links = 0;
        double tot = 0.0;
        for (size_t j = 0; j < ne; j++) {
            assert_true(m[j] == 0.0 || m[j] == 1.0);
            links += m[j] == 1.0;
            /* Weights exactly where the links are. */
            assert_true((w[j] > 0.0) == (m[j] == 1.0));
            tot += w[j];
        }
        assert_true(links >= 1);
        assert_true(fabs(tot - 1.0) < 1e-12);
        assert_true(fabs(a->c_e[i] - 1.0) < 1e-12);
        bl_test_expect_bits("c_e", i, a->c_e[i], bl_np_pairwise_sum(w, ne));
        pairwise_differs += a->c_e[i] != tot;
    }
    /* 167-wide rows: the pairwise and sequential sums differ in most rows,
     * so c_e really is the pairwise one (§3.4 step 7). */
    print_message("c_e differs from the sequential row sum in %zu of %zu rows\n",
                  pairwise_differs, ne);
    assert_true(pairwise_differs > 0);

    /* p_ei = p_ie = 1: full E<-I and I<-E rows summing to 1. */
    expect_full_rows(a->w_ei, ne, ni);
    expect_full_rows(a->w_ie, ni, ne);
    /* round(0.05 * 167) = 8: each receptor feeds exactly 8 E units, each
     * effector reads exactly 8. */
    for (size_t q = 0; q < r; q++) {
        size_t fed = 0;
        for (size_t i = 0; i < ne; i++)
            fed += a->w_eu[i * r + q] > 0.0;
        assert_int_equal(fed, 8);
    }
    for (size_t i = 0; i < ne; i++) {
        double tot = 0.0;
        for (size_t q = 0; q < r; q++)
            tot += a->w_eu[i * r + q];
        assert_true(tot == 0.0 || fabs(tot - 1.0) < 1e-12);
    }
    for (size_t k = 0; k < e; k++) {
        size_t read = 0;
        for (size_t i = 0; i < ne; i++) {
            double m = a->output_mask[k * ne + i];
            assert_true(m == 0.0 || m == 1.0);
            read += m == 1.0;
        }
        assert_int_equal(read, 8);
    }
    for (size_t i = 0; i < ne; i++)
        assert_true(a->t_e[i] >= 0.0 && a->t_e[i] < 0.5);
    for (size_t i = 0; i < ni; i++)
        assert_true(a->t_i[i] >= 0.0 && a->t_i[i] < 1.0);
    expect_zeros("x", a->x, ne);
    expect_zeros("y", a->y, ni);

    /* Deterministic, and owned: the same seed gives the same state in
     * distinct arrays, leaving the generators in the same position. */
    bl_gen g2 = bl_test_gen_for("sorn-200");
    bl_sorn_init *b = construct_ok(&c, n, r, e, &g2);
    expect_same_state(a, b);
    assert_memory_equal(&g1, &g2, sizeof g1);
    assert_ptr_not_equal(a->x, b->x);
    assert_ptr_not_equal(a->y, b->y);
    double kept = b->w_ee[a->n_e - 1];
    a->w_ee[a->n_e - 1] = 42.0;
    bl_test_expect_bits("unaliased w_ee", 0, b->w_ee[a->n_e - 1], kept);
    bl_sorn_init_destroy(a);
    bl_sorn_init_destroy(b);

    /* Ratio 1 with N = 5: 2.5 rounds to even. */
    c.inhibitory_fraction = 1.0;
    bl_gen g3 = bl_test_gen_for("ratio-1");
    bl_sorn_init *s = construct_ok(&c, 5, 1, 1, &g3);
    assert_int_equal(s->n_e, 2);
    /* Two E units without self links: each links to the other. */
    const double two[4] = {0, 1, 1, 0};
    bl_test_expect_table("ee_mask", s->ee_mask, two, 4);
    bl_sorn_init_destroy(s);
}

/* ---- §7.2 test 9: invalid configurations; bad shapes ---------------------- */

static void expect_reject(const bl_sorn_config *c, size_t n, size_t r, size_t e, bl_gen *g,
                          bl_status want, const char *needle)
{
    bl_test_expect_construct_rejected(FAMILY, c, n, r, e, g, want, needle);
}

static void test_invalid_configs(void **state)
{
    (void)state;
    bl_gen g = bl_test_gen_for("invalid");
    bl_sorn_config c;
#define AT(field) offsetof(bl_sorn_config, field)
    static const bl_test_fault faults[] = {
        {1, {AT(inhibitory_fraction)}, {1.01}, "inhibitory_fraction must be in [0, 1]"},
        {1, {AT(p_ee)}, {-0.1}, "p_ee must be finite and non-negative"},
        {1, {AT(eta_ip)}, {INFINITY}, "eta_ip must be finite"},
        {1, {AT(H_ip)}, {NAN}, "H_ip must be finite"},
        {1, {AT(ee_row_sum)}, {-INFINITY}, "ee_row_sum"},
        {1, {AT(H_ip)}, {1.5}, "H_ip must be in [0, 1]"},
        /* Two faults: every field is checked for finite and >= 0 before
         * any probability is checked against 1, each round in declaration
         * order. */
        {2, {AT(inhibitory_fraction), AT(eta_ip)}, {1.01, INFINITY}, "eta_ip"},
        {2, {AT(p_input), AT(H_ip)}, {2.0, NAN}, "H_ip"},
        {2, {AT(p_output), AT(p_ei)}, {1.5, 1.25}, "p_ei"},
        {2, {AT(T_I_max), AT(p_ie)}, {-1.0, -1.0}, "p_ie"},
    };
#undef AT
    for (size_t k = 0; k < sizeof faults / sizeof *faults; k++) {
        bl_sorn_config_default(&c);
        bl_test_apply_fault(&c, &faults[k]);
        expect_reject(&c, 6, 2, 2, &g, BL_EVALUE, faults[k].needle);
    }
    /* The config comes before the dimensions and the generator. */
    expect_reject(&c, 0, 0, 0, NULL, BL_EVALUE, "p_ie");

    /* Boundaries are valid: zeros of both signs and ones. */
    bl_sorn_config_default(&c);
    c.inhibitory_fraction = 1.0;
    c.p_ee = -0.0;
    c.H_ip = 1.0;
    c.eta_stdp = 0.0;
    c.T_E_max = -0.0;
    bl_sorn_init *s = construct_ok(&c, 4, 1, 1, &g);
    bl_sorn_init_destroy(s);
}

static void test_invalid_shapes(void **state)
{
    (void)state;
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    bl_test_expect_construct_shapes(FAMILY, &c);
    /* So do too many receptors. */
    bl_gen g = bl_test_gen_for("shapes");
    expect_reject(&c, 6, SIZE_MAX / 4, 1, &g, BL_ENOMEM, "too large");
}

static void test_init_alloc(void **state)
{
    (void)state;
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    c.inhibitory_fraction = 0.5;
    c.learn_on = false;
    bl_sorn_init *s = NULL;
    bl_error err = {0};
    assert_int_equal(bl_sorn_init_create(&c, 7, 3, 4, &s, &err), BL_OK);
    assert_int_equal(s->n, 7);
    assert_int_equal(s->r, 3);
    assert_int_equal(s->e, 4);
    assert_int_equal(s->n_e, 5);  /* round(7 / 1.5) */
    assert_memory_equal(&s->config, &c, sizeof c);
    expect_zeros("w_ee", s->w_ee, 25);
    expect_zeros("ee_mask", s->ee_mask, 25);
    expect_zeros("c_e", s->c_e, 5);
    expect_zeros("w_ei", s->w_ei, 10);
    expect_zeros("w_ie", s->w_ie, 10);
    expect_zeros("w_eu", s->w_eu, 15);
    expect_zeros("output_mask", s->output_mask, 20);
    expect_zeros("t_e", s->t_e, 5);
    expect_zeros("t_i", s->t_i, 2);
    expect_zeros("x", s->x, 5);
    expect_zeros("y", s->y, 2);
    bl_sorn_init_destroy(s);
    bl_sorn_init_destroy(NULL);

    c.inhibitory_fraction = 0.0;
    assert_int_equal(bl_sorn_init_create(&c, 3, 1, 1, &s, &err), BL_OK);
    assert_int_equal(s->n_e, 3);
    assert_null(s->w_ei);
    assert_null(s->w_ie);
    assert_null(s->t_i);
    assert_null(s->y);
    bl_sorn_init_destroy(s);

    static bl_sorn_init sentinel;
    s = &sentinel;
    assert_int_equal(bl_sorn_init_create(&c, 3, 0, 5, &s, &err), BL_EVALUE);
    assert_null(s);
    c.p_ee = 2.0;
    s = &sentinel;
    assert_int_equal(bl_sorn_init_create(&c, 3, 1, 5, &s, &err), BL_EVALUE);
    assert_null(s);
}

/* ---- allocation failures ------------------------------------------------ */

static void test_allocation_failures(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        bl_sorn_config c;
        bl_sorn_config_default(&c);
        c.p_ee = 0.3;
        c.inhibitory_fraction = variant == 0 ? 0.2 : 0.0;
        long total = bl_test_construct_allocations(FAMILY, &c, 9, expect_same_state);
        /* Struct + 7 arrays (+ 4 for the I population) + the permutation +
         * one row of uniforms. */
        assert_int_equal(total, variant == 0 ? 14 : 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kat),
        cmocka_unit_test(test_population_sizes),
        cmocka_unit_test(test_single_node_draws),
        cmocka_unit_test(test_numpy_differential),
        cmocka_unit_test(test_defaults_fanout_no_self_determinism),
        cmocka_unit_test(test_invalid_configs),
        cmocka_unit_test(test_invalid_shapes),
        cmocka_unit_test(test_init_alloc),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
