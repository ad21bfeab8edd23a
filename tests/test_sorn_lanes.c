/* SORN lockstep lanes (src/models/sorn_lanes*.{c,h}): slots that share a
 * wiring step together, one per SIMD lane, and must give every bit that
 * each slot gives stepped alone.
 *
 * For every instruction set this CPU supports (BL_ISA), both dtypes and
 * B in {1, 2, 3, 5, 8, 9, 16}, a batch of B slots sharing a constructed
 * wiring (the same initial-state pointer for most slots; for others a copy
 * of it with their own weights, thresholds, states, rates and learning
 * flag, which shares the wiring by content; one slot with non-zero weights
 * outside the mask, which joins its lane after its first plastic frame; one
 * slot of another wiring, which steps on its own) is run side by side with
 * a reference-kernel batch of the same states and with a 1-slot batch per
 * slot, on varied inputs (signed zeros, infinities and NaNs), with
 * inactive slots, freezes, resets and kernel switches. After every
 * operation every snapshot key of every slot (w_ee as canonical
 * [destination][source] doubles, signed zeros included) must agree bit for
 * bit with both, up to and including the frame in which a slot first
 * reports non-finite; such a slot is not stepped again (as the runtime
 * does) until a reset, and the other lanes go on unaffected. The path
 * counters prove that the lanes ran. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/isa.h"
#include "models/sorn_internal.h"
#include "model_support.h"
#include "support.h"

enum { MAXB = 16 };

typedef struct totals {
    uint64_t lanes, lanes_all, lanes_dense_inputs, failures, resets, freezes, switches,
        slot_frames, sparse;
} totals;

/* Slot b of a against slot b of b_ (or slot 0 of a 1-slot batch), every
 * key bit for bit. */
static void same_slot(const bl_model *a, size_t sa, const bl_model *c, size_t sc,
                      const char *what, size_t frame)
{
    bl_snapshot *x = bl_test_snap(a, sa), *y = bl_test_snap(c, sc);
    assert_int_equal(x->count, y->count);
    for (size_t k = 0; k < x->count; k++) {
        const bl_snapshot_array *p = &x->arrays[k], *q = &y->arrays[k];
        assert_string_equal(p->name, q->name);
        assert_int_equal(p->shape[0], q->shape[0]);
        assert_int_equal(p->shape[1], q->shape[1]);
        for (size_t v = 0; v < p->shape[0] * p->shape[1]; v++)
            if (bl_test_bits(p->data[v]) != bl_test_bits(q->data[v])) {
                print_error("%s frame %zu slot %zu key %s[%zu]: lanes %a, other %a\n", what,
                            frame, sa, p->name, v, p->data[v], q->data[v]);
                fail();
            }
    }
    bl_snapshot_destroy(x);
    bl_snapshot_destroy(y);
}

static void compare_all(const bl_model *lanes, const bl_model *ref, bl_model *const *single,
                        size_t nb, const char *what, size_t frame)
{
    for (size_t b = 0; b < nb; b++) {
        same_slot(lanes, b, ref, b, what, frame);
        same_slot(lanes, b, single[b], 0, what, frame);
    }
}

/* An empty inhibitory population leaves its arrays NULL. */
static void copy(double *dst, const double *src, size_t count)
{
    if (count > 0)
        memcpy(dst, src, count * sizeof *dst);
}

static double signed_zero(bl_gen *g) { return bl_test_uni(g) < 0.5 ? 0.0 : -0.0; }

/* A copy of `base` that shares its wiring (mask, fixed weights, c_e, t_i,
 * readout) with weights, thresholds, states, rates and learning of its own;
 * `unmasked` puts non-zero weights outside the mask. */
static bl_sorn_init *variant(bl_gen *g, const bl_sorn_init *base, bool unmasked)
{
    bl_sorn_config c = base->config;
    c.eta_stdp = bl_test_uni(g) < 0.2 ? 0.0 : 0.002 + 0.05 * bl_test_uni(g);
    c.eta_ip = 0.02 * bl_test_uni(g);
    c.H_ip = bl_test_uni(g);
    c.learn_on = bl_test_uni(g) < 0.8;
    bl_sorn_init *in = NULL;
    bl_error err;
    assert_int_equal(bl_sorn_init_create(&c, base->n, base->r, base->e, &in, &err), BL_OK);
    const size_t ne = base->n_e, ni = base->n - base->n_e;
    assert_int_equal(in->n_e, ne);
    copy(in->ee_mask, base->ee_mask, ne * ne);
    copy(in->c_e, base->c_e, ne);
    copy(in->w_ei, base->w_ei, ne * ni);
    copy(in->w_ie, base->w_ie, ni * ne);
    copy(in->w_eu, base->w_eu, ne * base->r);
    copy(in->output_mask, base->output_mask, base->e * ne);
    copy(in->t_i, base->t_i, ni);
    for (size_t k = 0; k < ne * ne; k++) {
        if (base->ee_mask[k] != 0)
            in->w_ee[k] = bl_test_uni(g) < 0.05 ? signed_zero(g) : 0.3 * bl_test_uni(g);
        else if (unmasked && bl_test_uni(g) < 0.2)
            in->w_ee[k] = bl_test_uni(g) - 0.5;
        else
            in->w_ee[k] = signed_zero(g);
    }
    for (size_t i = 0; i < ne; i++) {
        in->t_e[i] = 0.5 * bl_test_uni(g) - 0.05;
        in->x[i] = bl_test_uni(g) < 0.3 ? 1.0 : signed_zero(g);
    }
    for (size_t k = 0; k < ni; k++)
        in->y[k] = bl_test_uni(g) < 0.3 ? 1.0 : signed_zero(g);
    return in;
}

static void run_case(bl_gen *g, bl_dtype dt, size_t nb, totals *t)
{
    bl_error err;
    const size_t n = 20 + bl_test_pick(g, 100), r = 1 + bl_test_pick(g, 4);
    const size_t e = 1 + bl_test_pick(g, 3);
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    c.p_ee = 0.05 + 0.2 * bl_test_uni(g);
    c.eta_stdp = 0.005 + 0.05 * bl_test_uni(g);
    c.eta_ip = 0.01 * bl_test_uni(g);
    c.inhibitory_fraction = bl_test_uni(g) < 0.2 ? 0.0 : 0.25;
    bl_sorn_init *base = NULL, *other = NULL, *own[MAXB] = {0};
    assert_int_equal(bl_sorn_construct(&c, n, r, e, g, &base, &err), BL_OK);
    const bl_sorn_init *inits[MAXB];
    for (size_t b = 0; b < nb; b++) {
        inits[b] = base;
        if (nb > 1 && b % 4 == 1)
            inits[b] = own[b] = variant(g, base, b == 5);
    }
    if (nb >= 3) {
        /* A slot of another wiring steps on its own. */
        assert_int_equal(bl_sorn_construct(&c, n, r, e, g, &other, &err), BL_OK);
        inits[2] = other;
    }
    bl_model *m = NULL, *ref = NULL, *single[MAXB] = {0};
    assert_int_equal(bl_model_create_sorn(inits, nb, dt, &m, &err), BL_OK);
    assert_int_equal(bl_model_create_sorn(inits, nb, dt, &ref, &err), BL_OK);
    bl_sorn_set_reference_kernel(ref, true);
    for (size_t b = 0; b < nb; b++)
        assert_int_equal(bl_model_create_sorn(&inits[b], 1, dt, &single[b], &err), BL_OK);
    compare_all(m, ref, single, nb, "create", 0);

    const size_t ds = bl_test_dtype_size(dt);
    void *u = bl_test_xcalloc(nb * r, ds), *noise = bl_test_xcalloc(nb * n, ds);
    bool failed[MAXB] = {0};
    int32_t act[MAXB];
    const int32_t one = 1;
    const size_t frames = 160 / BL_TEST_FRAME_DIV;
    for (size_t f = 0; f < frames; f++) {
        const double op = bl_test_uni(g);
        if (op < 0.08) {
            const bool reset = op < 0.03;
            const bl_test_op which = reset ? BL_TEST_RESET
                                     : op < 0.055 ? BL_TEST_FREEZE_WEIGHTS
                                                  : BL_TEST_FREEZE_PLASTICITY;
            for (size_t b = 0; b < nb; b++) {
                act[b] = bl_test_uni(g) < 0.4;
                if (reset && act[b])
                    failed[b] = false;
                if (act[b])
                    bl_test_apply_op(single[b], which, &one, 1, bl_test_op_name(which));
            }
            bl_test_apply_op(m, which, act, nb, bl_test_op_name(which));
            bl_test_apply_op(ref, which, act, nb, bl_test_op_name(which));
            t->resets += reset;
            t->freezes += !reset;
            compare_all(m, ref, single, nb, bl_test_op_name(which), f);
            continue;
        }
        if (op < 0.095) {
            bl_sorn_set_reference_kernel(m, true);
            compare_all(m, ref, single, nb, "switch", f);
            bl_sorn_set_reference_kernel(m, false);
            compare_all(m, ref, single, nb, "switch back", f);
            t->switches++;
            continue;
        }
        for (size_t b = 0; b < nb; b++) {
            act[b] = !failed[b] && bl_test_uni(g) < 0.85;
            for (size_t q = 0; q < r; q++) {
                double v = bl_test_uni(g) < 0.6 ? 1.5 * bl_test_uni(g) : signed_zero(g);
                /* A failing slot: slot 0 once mid-run, rarely any slot. */
                if ((b == 0 && f == frames / 2 && q == 0) || bl_test_uni(g) < 0.002)
                    v = bl_test_uni(g) < 0.5 ? INFINITY : NAN;
                bl_test_put(u, dt, b * r + q, v);
            }
        }
        const bl_matrix mu = {dt, nb, r, u}, mn = {dt, nb, n, noise};
        assert_int_equal(bl_model_step(m, &mu, &mn, act, nb, &err), BL_OK);
        assert_int_equal(bl_model_step(ref, &mu, &mn, act, nb, &err), BL_OK);
        for (size_t b = 0; b < nb; b++) {
            if (!act[b])
                continue;
            const bl_matrix su = {dt, 1, r, (const char *)u + b * r * ds};
            const bl_matrix sn = {dt, 1, n, noise};
            assert_int_equal(bl_model_step(single[b], &su, &sn, &one, 1, &err), BL_OK);
        }
        compare_all(m, ref, single, nb, "step", f);
        const int32_t *fin = bl_model_finite(m);
        for (size_t b = 0; b < nb; b++) {
            if (!act[b])
                continue;
            t->slot_frames++;
            if (!fin[b]) {
                failed[b] = true;
                t->failures++;
            }
        }
    }
    bl_sorn_paths p;
    bl_sorn_path_counts(m, &p);
    if (nb == 1)
        assert_int_equal(p.lanes, 0);
    else
        assert_true(p.lanes > 0);
    t->lanes += p.lanes;
    t->lanes_all += p.lanes_all;
    t->lanes_dense_inputs += p.lanes_dense_inputs;
    t->sparse += p.sparse + p.sparse_all;
    bl_sorn_path_counts(ref, &p);
    assert_int_equal(p.lanes, 0);
    free(u);
    free(noise);
    bl_model_destroy(m);
    bl_model_destroy(ref);
    for (size_t b = 0; b < nb; b++) {
        bl_model_destroy(single[b]);
        bl_sorn_init_destroy(own[b]);
    }
    bl_sorn_init_destroy(other);
    bl_sorn_init_destroy(base);
}

static void run_isa(bl_dtype dt, const char *isa, uint64_t seed)
{
    static const size_t sizes[] = {1, 2, 3, 5, 8, 9, 16};
    assert_int_equal(setenv("BL_ISA", isa, 1), 0);
    totals t = {0};
    bl_gen g;
    bl_test_gen_seeded(&g, seed);
    const size_t rounds = 2;
    for (size_t k = 0; k < rounds; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            run_case(&g, dt, sizes[s], &t);
    assert_int_equal(unsetenv("BL_ISA"), 0);
    printf("sorn lanes %s %s: %llu slot-frames, lanes %llu (all sources %llu, dense inputs "
           "%llu), per-slot %llu, %llu failures, %llu resets, %llu freezes, %llu switches\n",
           isa, dt == BL_FLOAT64 ? "float64" : "float32", (unsigned long long)t.slot_frames,
           (unsigned long long)t.lanes, (unsigned long long)t.lanes_all,
           (unsigned long long)t.lanes_dense_inputs, (unsigned long long)t.sparse,
           (unsigned long long)t.failures, (unsigned long long)t.resets,
           (unsigned long long)t.freezes, (unsigned long long)t.switches);
    assert_true(t.lanes > t.slot_frames / 2);
    assert_true(t.lanes_dense_inputs > 0);
    assert_true(t.sparse > 0);
    assert_true(t.failures > 0 && t.resets > 0 && t.freezes > 0 && t.switches > 0);
}

static void run_all(bl_dtype dt)
{
    static const struct {
        const char *name;
        bl_isa isa;
    } isas[] = {{"sse2", BL_ISA_SSE2}, {"avx2", BL_ISA_AVX2}};
    size_t ran = 0;
    for (size_t k = 0; k < sizeof isas / sizeof *isas; k++) {
        if (!bl_isa_supported(isas[k].isa)) {
            printf("sorn lanes: this CPU lacks %s, not tested\n", isas[k].name);
            continue;
        }
        run_isa(dt, isas[k].name, 700 + 10 * k + (dt == BL_FLOAT32));
        ran++;
    }
    assert_true(ran > 0);
}

BL_TEST_PER_DTYPE(test_lanes, run_all)

/* A bad BL_ISA is the ValueError of isa.c, from creation. */
static void test_bad_isa(void **state)
{
    (void)state;
    bl_sorn_config c;
    bl_sorn_config_default(&c);
    bl_sorn_init *in = NULL;
    bl_error err;
    assert_int_equal(bl_sorn_init_create(&c, 4, 1, 1, &in, &err), BL_OK);
    const bl_sorn_init *cin[2] = {in, in};
    bl_model *m = NULL;
    assert_int_equal(setenv("BL_ISA", "mmx", 1), 0);
    assert_int_equal(bl_model_create_sorn(cin, 2, BL_FLOAT32, &m, &err), BL_EVALUE);
    assert_null(m);
    assert_non_null(strstr(err.msg, "BL_ISA=mmx"));
    assert_int_equal(unsetenv("BL_ISA"), 0);
    assert_int_equal(bl_model_create_sorn(cin, 2, BL_FLOAT32, &m, &err), BL_OK);
    bl_model_destroy(m);
    bl_sorn_init_destroy(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_isa),
        cmocka_unit_test(test_lanes_float64),
        cmocka_unit_test(test_lanes_float32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
