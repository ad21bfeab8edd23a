/* The fast SORN kernel (src/models/sorn_fast.h) against the reference
 * kernel (sorn_kernel.h), run side by side on identical inputs through the
 * internal switch of sorn_internal.h.
 *
 * Every scenario creates two batches from the same initial states, one on
 * the reference kernel and one on the fast kernel. After every operation
 * every snapshot key of every slot must agree bit for bit (signed zeros and
 * NaN payloads included), up to and including the frame in which a slot
 * first reports non-finite; from then on the slot is not stepped again, as
 * the runtime would do, until a reset brings it back. The scenarios cover
 * constructed wirings and hand-made states (signed zeros inside and outside
 * the mask, non-positive masked weights, non-zero weights outside the mask,
 * dense masks, -0 initial spikes), learning on and off, freezes, resets,
 * inactive slots, kernel switches in mid-run, several slots per batch,
 * N_I = 0, N up to ~300, both dtypes, and non-finite injections (inf and
 * NaN inputs, huge weights, learning rates and targets). The path counters
 * prove that each fast path actually ran. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/sorn_internal.h"
#include "support.h"
#include "model_support.h"

enum { MAXSLOTS = 4 };


typedef struct stats {
    size_t scenarios, slot_frames, failures, resets, freezes, switches, hand_slots,
        unmasked_slots, big_slots, inject_inputs, prunes;
    bl_sorn_paths paths;
} stats;

/* Every key of every slot, bit for bit. */
static void compare(const bl_model *ref, const bl_model *fast, const char *where, size_t frame)
{
    bl_error err;
    for (size_t b = 0; b < bl_model_slots(ref); b++) {
        bl_snapshot *sr = NULL, *sf = NULL;
        assert_int_equal(bl_model_snapshot(ref, b, &sr, &err), BL_OK);
        assert_int_equal(bl_model_snapshot(fast, b, &sf, &err), BL_OK);
        assert_int_equal(sr->count, sf->count);
        for (size_t k = 0; k < sr->count; k++) {
            const bl_snapshot_array *a = &sr->arrays[k], *c = &sf->arrays[k];
            assert_string_equal(a->name, c->name);
            assert_int_equal(a->shape[0], c->shape[0]);
            assert_int_equal(a->shape[1], c->shape[1]);
            for (size_t v = 0; v < a->shape[0] * a->shape[1]; v++) {
                if (bl_test_bits(a->data[v]) != bl_test_bits(c->data[v])) {
                    print_error("%s frame %zu slot %zu key %s[%zu]: reference %a, fast %a\n",
                                where, frame, b, a->name, v, a->data[v], c->data[v]);
                    fail();
                }
            }
        }
        bl_snapshot_destroy(sr);
        bl_snapshot_destroy(sf);
    }
}

typedef enum shape {
    SHAPE_CONSTRUCTED,
    SHAPE_ZEROS,    /* hand-made, ±0 outside the mask */
    SHAPE_UNMASKED, /* hand-made, non-zero weights outside the mask */
    SHAPE_COUNT
} shape;

/* A huge finite value of the scenario's dtype (the precision cast check
 * rejects values that overflow it). */
static double g_huge = 1e300;

static double signed_zero(bl_gen *g) { return bl_test_uni(g) < 0.5 ? 0.0 : -0.0; }

/* A hand-made state of the dimensions of `in` (allocated, zeroed). */
static void hand_fill(bl_gen *g, bl_sorn_init *in, shape sh, bool extreme)
{
    const size_t ne = in->n_e, ni = in->n - in->n_e;
    const double density = bl_test_uni(g) < 0.2 ? 0.9 : 0.05 + 0.3 * bl_test_uni(g);
    for (size_t k = 0; k < ne * ne; k++) {
        const bool m = bl_test_uni(g) < density;
        in->ee_mask[k] = m;
        if (m) {
            const double r = bl_test_uni(g);
            in->w_ee[k] = r < 0.05  ? signed_zero(g)
                          : r < 0.1 ? -bl_test_uni(g)
                                    : 0.5 * bl_test_uni(g);
        } else if (sh == SHAPE_UNMASKED && bl_test_uni(g) < 0.3) {
            in->w_ee[k] = bl_test_uni(g) - 0.3;
        } else {
            in->w_ee[k] = signed_zero(g);
        }
        if (extreme && bl_test_uni(g) < 0.01)
            in->w_ee[k] = g_huge * (bl_test_uni(g) < 0.5 ? 1 : -1);
    }
    for (size_t i = 0; i < ne; i++) {
        const double r = bl_test_uni(g);
        in->c_e[i] = r < 0.1 ? 0.0 : r < 0.15 ? -0.0 : 0.5 + bl_test_uni(g);
        if (extreme && bl_test_uni(g) < 0.05)
            in->c_e[i] = g_huge;
        in->t_e[i] = bl_test_uni(g) * 0.6 - 0.05;
        in->x[i] = bl_test_uni(g) < 0.3 ? 1.0 : signed_zero(g);
        for (size_t q = 0; q < in->r; q++)
            in->w_eu[i * in->r + q] = bl_test_uni(g) < 0.3 ? bl_test_uni(g) : signed_zero(g);
        for (size_t k = 0; k < ni; k++)
            in->w_ei[i * ni + k] =
                bl_test_uni(g) < 0.1 ? signed_zero(g) : bl_test_uni(g) / (double)(ni + 1);
    }
    for (size_t k = 0; k < ni; k++) {
        in->t_i[k] = bl_test_uni(g);
        in->y[k] = bl_test_uni(g) < 0.3 ? 1.0 : signed_zero(g);
        for (size_t j = 0; j < ne; j++)
            in->w_ie[k * ne + j] =
                bl_test_uni(g) < 0.1 ? signed_zero(g) : 3.0 * bl_test_uni(g) / (double)ne;
    }
    for (size_t k = 0; k < in->e * ne; k++)
        in->output_mask[k] = bl_test_uni(g) < 0.3;
}

static void random_config(bl_gen *g, bl_sorn_config *c, double inh_frac, bool extreme)
{
    bl_sorn_config_default(c);
    c->inhibitory_fraction = inh_frac;
    c->p_ee = bl_test_uni(g) < 0.2 ? 1.0 : 0.02 + 0.2 * bl_test_uni(g);
    c->learn_on = bl_test_uni(g) < 0.85;
    c->eta_stdp = bl_test_uni(g) < 0.3 ? 0.0 : 0.001 + 0.05 * bl_test_uni(g);
    c->eta_ip = bl_test_uni(g) < 0.2 ? 0.0 : 0.001 + 0.02 * bl_test_uni(g);
    c->H_ip = bl_test_uni(g);
    c->T_E_max = 0.1 + bl_test_uni(g);
    if (extreme) {
        if (bl_test_uni(g) < 0.5)
            c->eta_stdp = g_huge;
        else
            c->eta_ip = g_huge;
    }
}

static void run_scenario(uint64_t seed, bl_dtype dt, stats *st)
{
    bl_gen g;
    bl_test_gen_seeded(&g, seed);
    g_huge = dt == BL_FLOAT64 ? 1e300 : 1e37;
    bl_error err;
    const size_t big = bl_test_uni(&g) < 0.25;
    const size_t n = big ? 150 + bl_test_pick(&g, 150) : 2 + bl_test_pick(&g, 60);
    const size_t r = 1 + bl_test_pick(&g, 4), e = 1 + bl_test_pick(&g, 3);
    const size_t nb = 1 + bl_test_pick(&g, MAXSLOTS);
    const double fracs[] = {0.0, 0.2, 0.25, 0.5};
    const double inh_frac = fracs[bl_test_pick(&g, 4)];
    bl_sorn_init *inits[MAXSLOTS] = {0};
    for (size_t b = 0; b < nb; b++) {
        const shape sh = (shape)bl_test_pick(&g, SHAPE_COUNT);
        const bool extreme = bl_test_uni(&g) < 0.15;
        bl_sorn_config c;
        random_config(&g, &c, inh_frac, extreme);
        if (sh == SHAPE_CONSTRUCTED) {
            if (bl_sorn_construct(&c, n, r, e, &g, &inits[b], &err) != BL_OK) {
                print_error("%s\n", err.msg);
                fail();
            }
        } else {
            assert_int_equal(bl_sorn_init_create(&c, n, r, e, &inits[b], &err), BL_OK);
            hand_fill(&g, inits[b], sh, extreme);
            st->hand_slots++;
            st->unmasked_slots += sh == SHAPE_UNMASKED;
        }
        st->big_slots += big;
    }
    bl_model *ref = NULL, *fast = NULL;
    const bl_sorn_init *const *cin = (const bl_sorn_init *const *)inits;
    assert_int_equal(bl_model_create_sorn(cin, nb, dt, &ref, &err), BL_OK);
    assert_int_equal(bl_model_create_sorn(cin, nb, dt, &fast, &err), BL_OK);
    bl_sorn_set_reference_kernel(ref, true);
    compare(ref, fast, "create", 0);

    const size_t ds = dt == BL_FLOAT64 ? sizeof(double) : sizeof(float);
    void *u = calloc(nb * r, ds), *noise = calloc(nb * n, ds);
    assert_non_null(u);
    assert_non_null(noise);
    bool failed[MAXSLOTS] = {0};
    int32_t act[MAXSLOTS];
    const size_t frames = (big ? 40 : 80) / BL_TEST_FRAME_DIV;
    for (size_t f = 0; f < frames; f++) {
        const double op = bl_test_uni(&g);
        if (op < 0.08) {
            /* A reset (op below 0.04) or a freeze of a random subset of
             * slots, on both kernels; a reset slot may run again. */
            const bool reset = op < 0.04;
            const bl_test_op which = reset ? BL_TEST_RESET
                                     : bl_test_uni(&g) < 0.5 ? BL_TEST_FREEZE_PLASTICITY
                                                             : BL_TEST_FREEZE_WEIGHTS;
            for (size_t b = 0; b < nb; b++) {
                act[b] = bl_test_uni(&g) < (reset ? 0.6 : 0.5);
                if (reset && act[b])
                    failed[b] = false;
            }
            bl_test_apply_op(ref, which, act, nb, bl_test_op_name(which));
            bl_test_apply_op(fast, which, act, nb, bl_test_op_name(which));
            st->resets += reset;
            st->freezes += !reset;
            compare(ref, fast, reset ? "reset" : "freeze", f);
            continue;
        }
        if (op < 0.10) {
            /* Round trip through the reference kernel and back. */
            bl_sorn_set_reference_kernel(fast, true);
            compare(ref, fast, "switch", f);
            bl_sorn_set_reference_kernel(fast, false);
            st->switches++;
            compare(ref, fast, "switch back", f);
            continue;
        }
        for (size_t b = 0; b < nb; b++) {
            act[b] = !failed[b] && bl_test_uni(&g) < 0.9;
            for (size_t q = 0; q < r; q++) {
                double v = bl_test_uni(&g) < 0.5 ? bl_test_uni(&g) : signed_zero(&g);
                if (bl_test_uni(&g) < 0.004) {
                    v = bl_test_uni(&g) < 0.5 ? INFINITY : NAN;
                    st->inject_inputs++;
                }
                bl_test_put(u, dt, b * r + q, v);
            }
        }
        const bl_matrix mu = {dt, nb, r, u}, mn = {dt, nb, n, noise};
        assert_int_equal(bl_model_step(ref, &mu, &mn, act, nb, &err), BL_OK);
        assert_int_equal(bl_model_step(fast, &mu, &mn, act, nb, &err), BL_OK);
        compare(ref, fast, "step", f);
        const int32_t *fin = bl_model_finite(ref);
        for (size_t b = 0; b < nb; b++) {
            if (!act[b])
                continue;
            st->slot_frames++;
            if (!fin[b]) {
                failed[b] = true;
                st->failures++;
            }
        }
    }
    bl_sorn_paths p;
    bl_sorn_path_counts(fast, &p);
    st->paths.sparse += p.sparse;
    st->paths.sparse_all += p.sparse_all;
    st->paths.canonical += p.canonical;
    st->paths.to_sparse += p.to_sparse;
    st->paths.reference += p.reference;
    st->paths.dense_inputs += p.dense_inputs;
    bl_sorn_path_counts(ref, &p);
    assert_int_equal(p.sparse + p.sparse_all + p.canonical, 0);
    for (size_t b = 0; b < nb; b++) {
        bl_snapshot *s = NULL;
        assert_int_equal(bl_model_snapshot(fast, b, &s, &err), BL_OK);
        const bl_snapshot_array *m = bl_snapshot_get(s, "ee_mask");
        for (size_t k = 0; k < m->shape[0] * m->shape[1]; k++)
            st->prunes += inits[b]->ee_mask[k] != m->data[k];
        bl_snapshot_destroy(s);
    }
    free(u);
    free(noise);
    bl_model_destroy(ref);
    bl_model_destroy(fast);
    for (size_t b = 0; b < nb; b++)
        bl_sorn_init_destroy(inits[b]);
    st->scenarios++;
}

static void run_random(bl_dtype dt, uint64_t seed0)
{
    stats st = {0};
    const size_t count = 60 / BL_TEST_FRAME_DIV;
    for (size_t s = 0; s < count; s++)
        run_scenario(seed0 + s, dt, &st);
    printf("sorn fast %s: %zu scenarios, %zu slot-frames, %zu failures, %zu resets, %zu "
           "freezes, %zu switches, %zu hand-made (%zu with weights outside the mask), %zu big, "
           "%zu injected inputs, %zu pruned synapses; paths: sparse %llu, sparse_all %llu, "
           "canonical %llu, to_sparse %llu, dense inputs %llu\n",
           dt == BL_FLOAT64 ? "float64" : "float32", st.scenarios, st.slot_frames, st.failures,
           st.resets, st.freezes, st.switches, st.hand_slots, st.unmasked_slots, st.big_slots,
           st.inject_inputs, st.prunes, (unsigned long long)st.paths.sparse,
           (unsigned long long)st.paths.sparse_all, (unsigned long long)st.paths.canonical,
           (unsigned long long)st.paths.to_sparse, (unsigned long long)st.paths.dense_inputs);
    assert_true(st.paths.sparse > 0);
    /* Frames with a non-finite input sum densely, the others skip zeros. */
    assert_true(st.paths.dense_inputs > 0);
    assert_true(st.paths.dense_inputs < st.paths.sparse + st.paths.sparse_all);
    assert_true(st.paths.canonical > 0);
    assert_true(st.paths.to_sparse > 0);
    assert_int_equal(st.paths.reference, 0);
    assert_true(st.failures > 0);
    assert_true(st.resets > 0 && st.freezes > 0 && st.switches > 0);
    assert_true(st.prunes > 0);
    assert_true(st.big_slots > 0);
}

static void random_runs(bl_dtype dt)
{
    run_random(dt, dt == BL_FLOAT64 ? 1000 : 5000);
}

BL_TEST_PER_DTYPE(test_random, random_runs)

/* test_wild_weights in lockstep lanes: slots 0 (the wiring `in`, whose
 * product overflows), 1 and 2 (a copy with a weight whose product stays
 * finite) share a wiring. After slot 0 goes wild its group visits every
 * source; slot 0 fails then and is not stepped again, and the other lanes
 * keep the reference's bits throughout. */
static void wild_lanes(bl_dtype dt, const bl_sorn_init *in)
{
    bl_error err;
    bl_sorn_init *calm = NULL;
    assert_int_equal(bl_sorn_init_create(&in->config, 3, 1, 1, &calm, &err), BL_OK);
    memcpy(calm->ee_mask, in->ee_mask, 9 * sizeof *in->ee_mask);
    memcpy(calm->c_e, in->c_e, 3 * sizeof *in->c_e);
    memcpy(calm->t_e, in->t_e, 3 * sizeof *in->t_e);
    memcpy(calm->output_mask, in->output_mask, 3 * sizeof *in->output_mask);
    calm->w_ee[0 * 3 + 1] = 1.0;
    calm->x[0] = calm->x[1] = 1.0;
    const bl_sorn_init *cin[3] = {in, calm, calm};
    bl_model *ref = NULL, *lanes = NULL;
    assert_int_equal(bl_model_create_sorn(cin, 3, dt, &ref, &err), BL_OK);
    assert_int_equal(bl_model_create_sorn(cin, 3, dt, &lanes, &err), BL_OK);
    bl_sorn_set_reference_kernel(ref, true);
    void *u = calloc(3, sizeof(double)), *noise = calloc(9, sizeof(double));
    assert_non_null(u);
    assert_non_null(noise);
    const bl_matrix mu = {dt, 3, 1, u}, mn = {dt, 3, 3, noise};
    for (size_t f = 0; f < 3; f++) {
        const int32_t act[3] = {f < 2, 1, 1};
        assert_int_equal(bl_model_step(ref, &mu, &mn, act, 3, &err), BL_OK);
        assert_int_equal(bl_model_step(lanes, &mu, &mn, act, 3, &err), BL_OK);
        compare(ref, lanes, "wild lanes", f);
        if (f < 2)
            assert_int_equal(bl_model_finite(lanes)[0], f == 0);
        assert_int_equal(bl_model_finite(lanes)[1], 1);
    }
    bl_sorn_paths p;
    bl_sorn_path_counts(lanes, &p);
    assert_int_equal(p.lanes, 8);
    assert_int_equal(p.lanes_all, 3); /* frame 1, while slot 0 is wild */
    free(u);
    free(noise);
    bl_model_destroy(ref);
    bl_model_destroy(lanes);
    bl_sorn_init_destroy(calm);
}

/* A normalisation product that overflows although no flag of §3.6 fires
 * (scale = c_e / tot finite, w · scale rounded past the largest finite
 * value): the next frame must see the infinite weight through every
 * source, silent ones included (inf · 0 is NaN), so the fast kernel takes
 * its "_all" path (wild_lanes: its lanes too). */
static void test_wild_weights(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        const double big = d ? (double)FLT_MAX : DBL_MAX;
        double w = 0;
        for (double cand = 3.0; cand < 1000.0; cand += 1.0) {
            bool over;
            if (d) {
                const float s = (float)big / (float)cand;
                over = isinf((float)cand * s);
            } else {
                const double s = big / cand;
                over = isinf(cand * s);
            }
            if (over) {
                w = cand;
                break;
            }
        }
        assert_true(w > 0);
        bl_sorn_config c;
        bl_sorn_config_default(&c);
        c.inhibitory_fraction = c.eta_stdp = c.eta_ip = 0.0;
        bl_sorn_init *in = NULL;
        bl_error err;
        assert_int_equal(bl_sorn_init_create(&c, 3, 1, 1, &in, &err), BL_OK);
        assert_int_equal(in->n_e, 3);
        /* Row 0 has one synapse, from unit 1, which stays silent. */
        in->ee_mask[0 * 3 + 1] = 1;
        in->w_ee[0 * 3 + 1] = w;
        in->c_e[0] = big;
        for (size_t i = 0; i < 3; i++)
            in->t_e[i] = 0.5;
        in->output_mask[0] = 1;
        bl_model *ref = NULL, *fast = NULL;
        const bl_sorn_init *cin[1] = {in};
        assert_int_equal(bl_model_create_sorn(cin, 1, dt, &ref, &err), BL_OK);
        assert_int_equal(bl_model_create_sorn(cin, 1, dt, &fast, &err), BL_OK);
        bl_sorn_set_reference_kernel(ref, true);
        double ub[1] = {0};
        float uf[1] = {0};
        double nbd[3] = {0};
        float nbf[3] = {0};
        const bl_matrix mu = {dt, 1, 1, d ? (const void *)uf : (const void *)ub};
        const bl_matrix mn = {dt, 1, 3, d ? (const void *)nbf : (const void *)nbd};
        const int32_t act[1] = {1};
        for (size_t f = 0; f < 2; f++) {
            assert_int_equal(bl_model_step(ref, &mu, &mn, act, 1, &err), BL_OK);
            assert_int_equal(bl_model_step(fast, &mu, &mn, act, 1, &err), BL_OK);
            compare(ref, fast, "wild", f);
            /* Finite after the overflowing frame, non-finite after the next. */
            assert_int_equal(bl_model_finite(fast)[0], f == 0);
        }
        bl_sorn_paths p;
        bl_sorn_path_counts(fast, &p);
        assert_int_equal(p.sparse, 1);
        assert_int_equal(p.sparse_all, 1);
        bl_model_destroy(ref);
        bl_model_destroy(fast);
        wild_lanes(dt, in);
        bl_sorn_init_destroy(in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wild_weights),
        cmocka_unit_test(test_random_float64),
        cmocka_unit_test(test_random_float32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
