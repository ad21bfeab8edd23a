/* The fast Falandays kernel (src/models/falandays_fast.h) against the
 * reference kernel (falandays_kernel.h), run side by side on identical
 * inputs through the internal switch of falandays_internal.h.
 *
 * Every scenario creates three batches from the same initial states: one on
 * the reference kernel, one on the fast kernel (compressed rows where the
 * state allows them) and one on the fast kernel restricted to dense
 * source-major rows. After every operation every snapshot key of every slot
 * must agree bit for bit (signed zeros included) with the reference, up to
 * and including the frame in which a slot first reports non-finite; from
 * then on the slot is not stepped again, as the runtime would do, until a
 * reset brings it back. The scenarios cover both axes and drives, rectify,
 * learning on and off, freezes, resets, inactive slots, several slots per
 * batch, constructed wirings and hand-made states (weights outside the
 * mask, signed zeros, non-binary initial spikes, dense masks), N up to ~300
 * at realistic spike rates, both dtypes, and non-finite injections (inf and
 * NaN inputs and noise, huge learning rates). The path counters prove that
 * each fast path actually ran.
 *
 * A last scenario keeps stepping failed slots (which the runtime never
 * does) to exercise the paths for possibly non-finite weights; there NaN
 * payloads are compared as "both NaN", since they depend on the operand
 * order the compiler picks for commutative operations. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/falandays_internal.h"
#include "support.h"
#include "model_support.h"

enum { MAXSLOTS = 5, NMODELS = 3 };

static const bl_fal_kernel KERNELS[NMODELS] = {BL_FAL_KERNEL_REFERENCE, BL_FAL_KERNEL_FAST,
                                               BL_FAL_KERNEL_DENSE};
static const char *const KERNEL_NAMES[NMODELS] = {"reference", "fast", "dense"};

/* ---- what a scenario covers -------------------------------------------- */

typedef struct stats {
    size_t scenarios, slot_frames, node_frames, spikes, failures, resets, freezes, switches;
    size_t weight_frames;    /* slot-frames with learning and weight learning on */
    size_t dale_clear_slots; /* Dale slots whose unmasked weights started nonzero or -0 */
    size_t hand_slots, nonbinary_slots, dense_mask_slots, unmasked_slots, big_slots;
    size_t inject_inputs, inject_noise, huge_lrate_slots;
    unsigned combos;         /* bit k: flag combination k (axis, drive, rectify, learn) */
    bl_fal_path_counts fast, dense; /* summed over the scenarios' models */
    uint64_t big_sparse;     /* compressed-row frames of slots with N >= 150 */
    size_t big_node_frames, big_spikes;
} stats;

static void add_paths(bl_fal_path_counts *to, const bl_model *m)
{
    bl_fal_path_counts c;
    bl_falandays_path_counts(m, &c);
    to->reference += c.reference;
    to->dense += c.dense;
    to->dense_all += c.dense_all;
    to->sparse += c.sparse;
    to->sparse_all += c.sparse_all;
    to->to_sparse += c.to_sparse;
    to->dense_inputs += c.dense_inputs;
    to->lanes += c.lanes;
}

/* ---- initial states ---------------------------------------------------- */

typedef enum shape {
    SHAPE_CONSTRUCTED, /* bl_falandays_construct */
    SHAPE_ZEROS,       /* hand-made; every unmasked weight ±0 (compressed rows) */
    SHAPE_UNMASKED,    /* hand-made; some unmasked weights non-zero (dense rows) */
    SHAPE_DENSE_MASK,  /* hand-made; most synapses exist (dense rows) */
} shape;

static void random_config(bl_gen *g, bl_dtype dt, unsigned combo, bl_falandays_config *c,
                          stats *st)
{
    bl_falandays_config_default(c);
    static const double leaks[] = {0.0, 0.25, 0.5, 1.0};
    c->leak = bl_test_pick(g, 2) ? leaks[bl_test_pick(g, 4)] : bl_test_uni(g);
    switch (bl_test_pick(g, 4)) {
    case 0: c->lrate_wmat = 0.0; break;
    case 1: c->lrate_wmat = 0.1; break;
    case 2: c->lrate_wmat = 1.0; break;
    default: c->lrate_wmat = 2.0 * bl_test_uni(g); break;
    }
    c->lrate_targ = bl_test_pick(g, 3) == 0 ? 0.0
                    : bl_test_pick(g, 2)    ? 0.01
                                            : 0.2 * bl_test_uni(g);
    c->threshold_mult = bl_test_pick(g, 2) ? 2.0 : 0.5 + 2.0 * bl_test_uni(g);
    c->targ_min = bl_test_pick(g, 2) ? 1.0 : 0.25 + bl_test_uni(g);
    c->input_weight = bl_test_pick(g, 2) ? 1.875 : 3.0 * bl_test_uni(g);
    c->weight_init_std = 0.25 + bl_test_uni(g);
    static const double links[] = {0.1, 0.1, 0.1, 0.05, 0.2, 0.3, 0.6, 1.0};
    c->link_p = links[bl_test_pick(g, 8)];
    bl_test_falandays_random_flags(g, combo, c);
    /* Now and then a learning rate that overflows weights or targets. */
    if (bl_test_pick(g, 14) == 0) {
        double huge = dt == BL_FLOAT64 ? 1e300 : 1e37;
        if (bl_test_pick(g, 2))
            c->lrate_wmat = huge;
        else
            c->lrate_targ = huge;
        st->huge_lrate_slots++;
    }
}

/* A signed zero or a small value, for hand-made state. */
static double odd_value(bl_gen *g)
{
    static const double v[] = {0.0, -0.0, 0.5, -0.25, 2.0, 1e-3, -1.0, 1.0};
    return v[bl_test_pick(g, 8)];
}

static bl_falandays_init *hand_made(bl_gen *g, const bl_falandays_config *c, size_t n, size_t r,
                                    size_t e, shape sh, stats *st)
{
    bl_falandays_init *h = NULL;
    bl_error err = {0};
    if (bl_falandays_init_create(c, n, r, e, &h, &err) != BL_OK)
        fail_msg("bl_falandays_init_create: %s", err.msg);
    const bool dale = c->axis == BL_AXIS_DALE;
    const double p_link =
        sh == SHAPE_DENSE_MASK ? 0.5 + 0.5 * bl_test_uni(g) : 0.03 + 0.2 * bl_test_uni(g);
    const double p_unmasked = sh == SHAPE_UNMASKED ? 0.02 + 0.3 * bl_test_uni(g) : 0.0;
    bool any_unmasked = false;
    for (size_t k = 0; k < n * n; k++) {
        const bool link = bl_test_uni(g) < p_link;
        h->recurrent_mask[k] = link ? 1.0 : 0.0;
        double w = 0.6 * bl_test_normal(g);
        /* Dale weights are magnitudes, but a hand-made state may start
         * with a negative one (it is not validated). */
        if (dale && bl_test_pick(g, 10) != 0)
            w = fabs(w);
        if (bl_test_pick(g, 12) == 0)
            w = bl_test_pick(g, 2) ? -0.0 : 0.0;
        if (!link && !(bl_test_uni(g) < p_unmasked))
            w = bl_test_pick(g, 2) ? -0.0 : 0.0; /* unmasked and zero, of either sign */
        any_unmasked = any_unmasked || (!link && w != 0.0);
        h->weights[k] = w;
    }
    for (size_t k = 0; k < n * r; k++) {
        switch (bl_test_pick(g, 6)) {
        case 0: h->input_weights[k] = 0.0; break;
        case 1: h->input_weights[k] = -0.0; break;
        case 2: h->input_weights[k] = -0.5 * bl_test_uni(g); break;
        default: h->input_weights[k] = 2.5 * bl_test_uni(g); break;
        }
    }
    /* Readout weights of either zero sign, which the fast readout skips. */
    for (size_t k = 0; k < n * e; k++)
        h->output_mask[k] = bl_test_pick(g, 3) == 0 ? (bl_test_pick(g, 2) ? -0.0 : 0.0)
                            : bl_test_pick(g, 2)    ? 1.0
                                                    : 2.0 * bl_test_uni(g);
    const bool nonbinary = bl_test_pick(g, 2) != 0;
    for (size_t i = 0; i < n; i++) {
        h->signs[i] = (dale && bl_test_uni(g) < 0.3) ? -1 : 1;
        h->acts[i] = bl_test_pick(g, 4) == 0 ? odd_value(g) : bl_test_normal(g);
        h->targets[i] = c->targ_min * (0.5 + 1.5 * bl_test_uni(g));
        h->spikes[i] = nonbinary ? odd_value(g) : (double)bl_test_pick(g, 2);
    }
    st->hand_slots++;
    st->nonbinary_slots += nonbinary;
    st->dense_mask_slots += sh == SHAPE_DENSE_MASK;
    st->unmasked_slots += any_unmasked;
    return h;
}

/* ---- one scenario ------------------------------------------------------ */

typedef struct scen {
    const char *what;
    bl_dtype dt;
    size_t nslots, n, r, e;
    bl_falandays_init *init[MAXSLOTS];
    bl_model *m[NMODELS];
    bool failed[MAXSLOTS];
    void *inputs, *noise;
    int32_t active[MAXSLOTS];
    size_t frame;
    bool nan_equiv; /* after failures (the last scenario only) */
} scen;

static void scen_start(scen *sc)
{
    const bl_falandays_init *inits[MAXSLOTS];
    for (size_t b = 0; b < sc->nslots; b++)
        inits[b] = sc->init[b];
    for (size_t k = 0; k < NMODELS; k++) {
        bl_error err = {0};
        if (bl_model_create_falandays(inits, sc->nslots, sc->dt, &sc->m[k], &err) != BL_OK)
            fail_msg("%s: create: %s", sc->what, err.msg);
        bl_falandays_set_kernel(sc->m[k], KERNELS[k]);
    }
    sc->inputs = calloc(sc->nslots * sc->r, bl_test_dtype_size(sc->dt));
    sc->noise = calloc(sc->nslots * sc->n, bl_test_dtype_size(sc->dt));
    assert_true(sc->inputs && sc->noise);
}

static void scen_end(scen *sc, stats *st)
{
    if (sc->n >= 150) {
        bl_fal_path_counts c;
        bl_falandays_path_counts(sc->m[1], &c);
        st->big_sparse += c.sparse;
    }
    add_paths(&st->fast, sc->m[1]);
    add_paths(&st->dense, sc->m[2]);
    for (size_t k = 0; k < NMODELS; k++)
        bl_model_destroy(sc->m[k]);
    for (size_t b = 0; b < sc->nslots; b++)
        bl_falandays_init_destroy(sc->init[b]);
    free(sc->inputs);
    free(sc->noise);
}

static void describe(const scen *sc, size_t b, char *buf, size_t size)
{
    const bl_falandays_config *c = &sc->init[b]->config;
    snprintf(buf, size,
             "%s N=%zu R=%zu E=%zu %s %s rectify=%d learn_on=%d leak=%.17g lrate_wmat=%.17g "
             "lrate_targ=%.17g link_p=%.3g",
             sc->dt == BL_FLOAT64 ? "float64" : "float32", sc->n, sc->r, sc->e,
             c->axis == BL_AXIS_DALE ? "dale" : "unsigned",
             c->drive == BL_DRIVE_OOSAWA ? "oosawa" : "no-drive", (int)c->rectify,
             (int)c->learn_on, c->leak, c->lrate_wmat, c->lrate_targ, c->link_p);
}

/* What the reference reports after a frame of slot b, for coverage. */
static void tally(scen *sc, size_t b, const bl_snapshot *s, stats *st)
{
    st->slot_frames++;
    st->node_frames += sc->n;
    const bl_snapshot_array *sp = bl_snapshot_get(s, "spikes");
    size_t spikes = 0;
    for (size_t i = 0; i < sc->n; i++)
        spikes += sp->data[i] != 0.0;
    st->spikes += spikes;
    if (sc->n >= 150) {
        st->big_node_frames += sc->n;
        st->big_spikes += spikes;
    }
    st->weight_frames += bl_snapshot_get(s, "learning")->data[0] != 0.0 &&
                         bl_snapshot_get(s, "weight_learning")->data[0] != 0.0;
    if (bl_snapshot_get(s, "finite")->data[0] == 0.0 && !sc->failed[b]) {
        sc->failed[b] = true;
        st->failures++;
    }
}

/* Every key of models 1.. against model 0, then the live views: for the
 * slots just stepped (`stepped`, tallied into st), and for all slots when
 * `every`, which also proves that slots left out stay untouched. */
static void compare(scen *sc, const char *after, const int32_t *stepped, bool every,
                    stats *st)
{
    for (size_t b = 0; b < sc->nslots; b++) {
        if (!every && !(stepped && stepped[b]))
            continue;
        bl_snapshot *s[NMODELS];
        for (size_t k = 0; k < NMODELS; k++) {
            bl_error err = {0};
            if (bl_model_snapshot(sc->m[k], b, &s[k], &err) != BL_OK)
                fail_msg("%s: snapshot: %s", sc->what, err.msg);
        }
        for (size_t k = 1; k < NMODELS; k++) {
            assert_int_equal(s[k]->count, s[0]->count);
            for (size_t a = 0; a < s[0]->count; a++) {
                const bl_snapshot_array *x = &s[0]->arrays[a], *y = &s[k]->arrays[a];
                assert_string_equal(x->name, y->name);
                assert_true(x->ndim == y->ndim && x->shape[0] == y->shape[0] &&
                            x->shape[1] == y->shape[1] && x->integer == y->integer);
                const size_t cnt = x->ndim == 0 ? 1 : x->shape[0] * x->shape[1];
                /* Same bytes is same bits; the loop finds what differs. */
                if (memcmp(x->data, y->data, cnt * sizeof *x->data) == 0)
                    continue;
                for (size_t i = 0; i < cnt; i++) {
                    if (bl_test_same(y->data[i], x->data[i], sc->nan_equiv))
                        continue;
                    char cfg[400];
                    describe(sc, b, cfg, sizeof cfg);
                    fail_msg("%s: after %s of frame %zu: slot %zu key %s[%zu]: %s kernel %.17g "
                             "(%016" PRIx64 "), reference %.17g (%016" PRIx64 "); %s",
                             sc->what, after, sc->frame, b, x->name, i, KERNEL_NAMES[k],
                             y->data[i], bl_test_bits(y->data[i]), x->data[i],
                             bl_test_bits(x->data[i]), cfg);
                }
            }
        }
        if (stepped && stepped[b])
            tally(sc, b, s[0], st);
        for (size_t k = 0; k < NMODELS; k++)
            bl_snapshot_destroy(s[k]);
    }
    const size_t w = bl_test_dtype_size(sc->dt);
    for (size_t k = 1; k < NMODELS; k++) {
        if (!sc->nan_equiv) {
            assert_memory_equal(bl_model_effector_data(sc->m[k]), bl_model_effector_data(sc->m[0]),
                                sc->nslots * sc->e * w);
            assert_memory_equal(bl_model_activity_data(sc->m[k]),
                                bl_model_activity_data(sc->m[0]), sc->nslots * sc->n * w);
        }
        assert_memory_equal(bl_model_finite(sc->m[k]), bl_model_finite(sc->m[0]),
                            sc->nslots * sizeof(int32_t));
    }
}

/* Reset or freeze a random subset on every model. */
static void random_op(scen *sc, bl_gen *g, stats *st)
{
    int32_t act[MAXSLOTS];
    for (size_t b = 0; b < sc->nslots; b++)
        act[b] = bl_test_uni(g) < 0.5;
    const bl_test_op which = (bl_test_op)bl_test_pick(g, 3);
    for (size_t k = 0; k < NMODELS; k++)
        bl_test_apply_op(sc->m[k], which, act, sc->nslots, sc->what);
    for (size_t b = 0; b < sc->nslots; b++) {
        if (!act[b])
            continue;
        if (which == BL_TEST_RESET) {
            sc->failed[b] = false;
            st->resets++;
        } else {
            st->freezes++;
        }
    }
    compare(sc, bl_test_op_name(which), NULL, true, st);
}

/* Inputs and noise for one frame, with rare non-finite injections into
 * stepped slots; slots not stepped get NaN, which must never reach them. */
static void fill_frame(scen *sc, bl_gen *g, double inject_p, stats *st)
{
    static const double bad[] = {INFINITY, -INFINITY, NAN, -NAN};
    for (size_t b = 0; b < sc->nslots; b++) {
        const bool on = sc->active[b] != 0;
        const double gainin = 0.5 + bl_test_uni(g);
        for (size_t q = 0; q < sc->r; q++) {
            double v = gainin * bl_test_normal(g) + 0.5;
            if (bl_test_uni(g) < 0.1)
                v *= 4.0 + 8.0 * bl_test_uni(g);
            /* Silent receptors, of either zero sign, whose terms the fast
             * input sums skip. */
            if (bl_test_uni(g) < 0.3)
                v = bl_test_pick(g, 2) ? 0.0 : -0.0;
            bl_test_put(sc->inputs, sc->dt, b * sc->r + q, on ? v : NAN);
        }
        for (size_t i = 0; i < sc->n; i++)
            bl_test_put(sc->noise, sc->dt, b * sc->n + i, on ? bl_test_normal(g) : NAN);
        if (on && bl_test_uni(g) < inject_p) {
            if (bl_test_pick(g, 2)) {
                bl_test_put(sc->inputs, sc->dt, b * sc->r + bl_test_pick(g, sc->r),
                            bad[bl_test_pick(g, 4)]);
                st->inject_inputs++;
            } else {
                bl_test_put(sc->noise, sc->dt, b * sc->n + bl_test_pick(g, sc->n),
                            bad[bl_test_pick(g, 4)]);
                st->inject_noise++;
            }
        }
    }
}

static void step(scen *sc, stats *st)
{
    bl_matrix in = {sc->dt, sc->nslots, sc->r, sc->inputs};
    bl_matrix nz = {sc->dt, sc->nslots, sc->n, sc->noise};
    for (size_t k = 0; k < NMODELS; k++) {
        bl_error err = {0};
        if (bl_model_step(sc->m[k], &in, &nz, sc->active, sc->nslots, &err) != BL_OK)
            fail_msg("%s: step: %s", sc->what, err.msg);
    }
    /* The stepped slots every frame, every slot now and then. */
    compare(sc, "step", sc->active, sc->frame % 8 == 0, st);
}

/* Random dimensions and slots for scenario `id`; big ones reach ~300 nodes
 * with few slots, so the compressed rows see realistic sizes. */
static void scen_setup(scen *sc, bl_gen *g, bl_dtype dt, size_t id, bool big, stats *st)
{
    memset(sc, 0, sizeof *sc);
    sc->dt = dt;
    sc->what = big ? "big scenario" : "scenario";
    sc->n = big ? 150 + bl_test_pick(g, 151) : id < 3 ? id + 1 : 1 + bl_test_pick(g, 48);
    sc->r = 1 + bl_test_pick(g, 4);
    sc->e = 1 + bl_test_pick(g, 3);
    sc->nslots = big ? 1 + bl_test_pick(g, 2) : 1 + bl_test_pick(g, MAXSLOTS);
    for (size_t b = 0; b < sc->nslots; b++) {
        bl_falandays_config c;
        /* Every fourth scenario starts with a learning Dale slot whose
         * unmasked weights are not all zero: dense rows until its first
         * clearing, compressed rows after it. */
        const bool clearing = b == 0 && id % 4 == 1;
        const unsigned combo = clearing ? 1u | (((unsigned)bl_test_pick(g, 8) << 1) & 6u)
                                        : (unsigned)bl_test_pick(g, 16);
        random_config(g, dt, combo, &c, st);
        st->combos |= 1u << combo;
        bl_error err = {0};
        if (bl_falandays_config_validate(&c, &err) != BL_OK)
            fail_msg("test made an invalid config: %s", err.msg);
        const shape sh = clearing
                             ? SHAPE_UNMASKED
                             : (shape)(bl_test_pick(g, 2) ? SHAPE_CONSTRUCTED : bl_test_pick(g, 4));
        if (sh == SHAPE_CONSTRUCTED) {
            bl_gen cg;
            bl_test_gen_seeded(&cg, (uint64_t)bl_gen_integers(g, 0, INT64_MAX));
            if (bl_falandays_construct(&c, sc->n, sc->r, sc->e, &cg, &sc->init[b], &err) != BL_OK)
                fail_msg("construct: %s", err.msg);
        } else {
            sc->init[b] = hand_made(g, &c, sc->n, sc->r, sc->e, sh, st);
        }
        if (c.axis == BL_AXIS_DALE) {
            const bl_falandays_init *in = sc->init[b];
            bool unmasked = false;
            for (size_t k = 0; k < sc->n * sc->n; k++)
                unmasked = unmasked || (in->recurrent_mask[k] == 0.0 &&
                                        bl_test_bits(in->weights[k]) != 0);
            st->dale_clear_slots += unmasked;
        }
    }
    st->big_slots += big ? sc->nslots : 0;
    st->scenarios++;
    scen_start(sc);
    compare(sc, "creation", NULL, true, st);
}

/* Runs `frames` frames with operations, kernel switches and injections. */
static void scen_run(scen *sc, bl_gen *g, size_t frames, double inject_p, bool step_failed,
                     stats *st)
{
    for (sc->frame = 0; sc->frame < frames; sc->frame++) {
        if (bl_test_uni(g) < 0.04)
            random_op(sc, g, st);
        if (bl_test_uni(g) < 0.02) {
            /* A kernel switch carries the state over exactly, whatever the
             * layouts were; switch back at once so each model keeps its
             * kernel for the path counts. */
            const size_t k = 1 + bl_test_pick(g, NMODELS - 1);
            bl_falandays_set_kernel(sc->m[k], KERNELS[bl_test_pick(g, NMODELS)]);
            compare(sc, "a kernel switch", NULL, true, st);
            bl_falandays_set_kernel(sc->m[k], KERNELS[k]);
            compare(sc, "a switch back", NULL, true, st);
            st->switches++;
        }
        const bool some_off = bl_test_uni(g) < 0.15;
        for (size_t b = 0; b < sc->nslots; b++)
            sc->active[b] = (step_failed || !sc->failed[b]) && !(some_off && bl_test_uni(g) < 0.5);
        fill_frame(sc, g, inject_p, st);
        step(sc, st);
    }
}

static void run_random(bl_dtype dt, uint64_t seed, size_t nsmall, size_t nbig, stats *st)
{
    bl_gen g;
    bl_test_gen_seeded(&g, seed);
    for (size_t id = 0; id < nsmall + nbig; id++) {
        scen sc;
        const bool big = id >= nsmall;
        scen_setup(&sc, &g, dt, id, big, st);
        const size_t frames = big ? 60 + bl_test_pick(&g, 30) : 120 + bl_test_pick(&g, 120);
        scen_run(&sc, &g, frames / BL_TEST_FRAME_DIV, 0.004 * BL_TEST_FRAME_DIV, false, st);
        scen_end(&sc, st);
    }
}

static void print_stats(const char *name, const stats *st)
{
    printf("%s: %zu scenarios, %zu slot-frames (%zu with weight learning), spike rate %.3f, "
           "%zu failures, %zu resets, %zu freezes, %zu switches; hand-made %zu (non-binary "
           "spikes %zu, dense masks %zu, unmasked weights %zu), big slots %zu, injections "
           "%zu/%zu, huge rates %zu\n",
           name, st->scenarios, st->slot_frames, st->weight_frames,
           st->node_frames ? (double)st->spikes / (double)st->node_frames : 0.0, st->failures,
           st->resets, st->freezes, st->switches, st->hand_slots, st->nonbinary_slots,
           st->dense_mask_slots, st->unmasked_slots, st->big_slots, st->inject_inputs,
           st->inject_noise, st->huge_lrate_slots);
    printf("  fast model paths: sparse %" PRIu64 ", dense %" PRIu64 ", sparse_all %" PRIu64
           ", dense_all %" PRIu64 ", to_sparse %" PRIu64 ", reference %" PRIu64
           ", dense inputs %" PRIu64 ", lanes %" PRIu64 "; dense model: dense %" PRIu64
           ", sparse %" PRIu64 "\n",
           st->fast.sparse, st->fast.dense, st->fast.sparse_all, st->fast.dense_all,
           st->fast.to_sparse, st->fast.reference, st->fast.dense_inputs, st->fast.lanes,
           st->dense.dense,
           st->dense.sparse);
    printf("  N >= 150: %" PRIu64 " compressed-row slot-frames, spike rate %.3f\n",
           st->big_sparse,
           st->big_node_frames ? (double)st->big_spikes / (double)st->big_node_frames : 0.0);
}

/* The coverage every random run must reach. */
static void expect_coverage(const stats *st)
{
    assert_int_equal(st->combos, 0xffffu);
    assert_true(st->fast.sparse > 500);
    assert_true(st->fast.dense > 100);
    assert_true(st->fast.to_sparse > 0);
    /* Frames with a non-finite input sum densely, the others skip zeros. */
    assert_true(st->fast.dense_inputs > 0);
    assert_true(st->fast.dense_inputs < st->fast.sparse + st->fast.dense);
    assert_int_equal(st->fast.reference, 0);
    assert_true(st->dense.dense > 500);
    assert_int_equal(st->dense.sparse, 0);
    assert_int_equal(st->dense.reference, 0);
    assert_true(st->failures > 5);
    assert_true(st->inject_inputs > 0 && st->inject_noise > 0 && st->huge_lrate_slots > 0);
    assert_true(st->resets > 0 && st->freezes > 0 && st->switches > 0);
    assert_true(st->nonbinary_slots > 0 && st->dense_mask_slots > 0 && st->unmasked_slots > 0);
    assert_true(st->dale_clear_slots > 0 && st->big_slots > 0);
    /* Realistic activity: neither silent nor saturated on average. */
    const double rate = (double)st->spikes / (double)st->node_frames;
    assert_true(rate > 0.05 && rate < 0.95);
    /* Compressed rows at N >= 150 with a realistic share of sources firing. */
    assert_true(st->big_sparse > 20);
    const double big_rate = (double)st->big_spikes / (double)st->big_node_frames;
    assert_true(big_rate > 0.05 && big_rate < 0.95);
}

static void random_runs(bl_dtype dt)
{
    stats st = {0};
    const bool f64 = dt == BL_FLOAT64;
    run_random(dt, f64 ? 0xfa57f64 : 0xfa57f32, 40, 3, &st);
    print_stats(f64 ? "float64" : "float32", &st);
    expect_coverage(&st);
}

BL_TEST_PER_DTYPE(test_random, random_runs)

/* Failed slots stepped on: weights may hold inf or NaN, which the paths
 * that visit silent sources must turn into NaN as w·0 does. NaN payloads
 * are no contract here (see the header). */
static void test_after_failure(void **state)
{
    (void)state;
    stats st = {0};
    bl_gen g;
    bl_test_gen_seeded(&g, 0xdead);
    for (size_t id = 0; id < 24; id++) {
        const bl_dtype dt = id % 2 ? BL_FLOAT32 : BL_FLOAT64;
        scen sc;
        scen_setup(&sc, &g, dt, 3 + id, id % 12 == 11, &st);
        sc.what = "stepping after failures";
        sc.nan_equiv = true;
        scen_run(&sc, &g, 60 / BL_TEST_FRAME_DIV, 0.05, true, &st);
        scen_end(&sc, &st);
    }
    print_stats("after failure", &st);
    assert_true(st.failures > 0);
    assert_true(st.fast.sparse_all > 0);
    assert_true(st.fast.dense_all > 0 || st.dense.dense_all > 0);
    assert_true(st.dense.dense_all > 0);
}

/* ---- targeted checks --------------------------------------------------- */

/* A 3-node Dale state whose unmasked weights are -0: compressed rows must
 * hand back -0 until the first clearing and +0 after it, as the reference
 * does; and a slot with a non-zero unmasked weight runs dense until the
 * clearing, then compressed. */
static void test_signed_zeros_and_layouts(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        bl_falandays_config c;
        bl_falandays_config_default(&c);
        c.axis = BL_AXIS_DALE;
        c.leak = 0.0;
        c.lrate_targ = 0.0;
        bl_falandays_init *in[2];
        bl_error err = {0};
        for (size_t b = 0; b < 2; b++) {
            if (bl_falandays_init_create(&c, 3, 1, 1, &in[b], &err) != BL_OK)
                fail_msg("%s", err.msg);
            /* Masked synapses 0 -> 1 and 1 -> 2 (W[dst][src]); all else
             * unmasked -0, except slot 1's W[0][2] = 0.75. */
            for (size_t k = 0; k < 9; k++)
                in[b]->weights[k] = -0.0;
            in[b]->recurrent_mask[1 * 3 + 0] = 1.0;
            in[b]->weights[1 * 3 + 0] = 0.5;
            in[b]->recurrent_mask[2 * 3 + 1] = 1.0;
            in[b]->weights[2 * 3 + 1] = 0.25;
            for (size_t i = 0; i < 3; i++) {
                in[b]->input_weights[i] = 1.0;
                in[b]->output_mask[i] = 1.0;
                in[b]->spikes[i] = 0.0;
            }
        }
        in[1]->weights[0 * 3 + 2] = 0.75;
        bl_model *ref = NULL, *fast = NULL;
        const bl_falandays_init *const inits[2] = {in[0], in[1]};
        if (bl_model_create_falandays(inits, 2, dt, &ref, &err) != BL_OK ||
            bl_model_create_falandays(inits, 2, dt, &fast, &err) != BL_OK)
            fail_msg("%s", err.msg);
        bl_falandays_set_reference_kernel(ref, true);
        const double frames[][1] = {{0.0}, {5.0}, {5.0}, {0.0}};
        const int32_t active[2] = {1, 1};
        for (size_t f = 0; f <= 4; f++) {
            for (size_t b = 0; b < 2; b++) {
                bl_snapshot *sr, *sf;
                OK_E(bl_model_snapshot(ref, b, &sr, &e_));
                OK_E(bl_model_snapshot(fast, b, &sf, &e_));
                const bl_snapshot_array *wr = bl_snapshot_get(sr, "weights");
                const bl_snapshot_array *wf = bl_snapshot_get(sf, "weights");
                for (size_t k = 0; k < 9; k++)
                    if (bl_test_bits(wr->data[k]) != bl_test_bits(wf->data[k]))
                        fail_msg("dtype %d frame %zu slot %zu weights[%zu]: fast %g, ref %g", d,
                                 f, b, k, wf->data[k], wr->data[k]);
                /* Before any source spiked nothing was cleared: -0 stays. */
                if (f <= 2)
                    assert_true(signbit(wf->data[0 * 3 + 1]));
                if (f >= 3)
                    assert_false(signbit(wf->data[0 * 3 + 1]));
                bl_snapshot_destroy(sr);
                bl_snapshot_destroy(sf);
            }
            if (f == 4)
                break;
            double u[2] = {frames[f][0], frames[f][0]};
            float uf[2] = {(float)u[0], (float)u[1]};
            double z64[6] = {0};
            float z32[6] = {0};
            bl_matrix im = {dt, 2, 1, d ? (const void *)uf : (const void *)u};
            bl_matrix nm = {dt, 2, 3, d ? (const void *)z32 : (const void *)z64};
            OK_E(bl_model_step(ref, &im, &nm, active, 2, &e_));
            OK_E(bl_model_step(fast, &im, &nm, active, 2, &e_));
        }
        bl_fal_path_counts pc;
        bl_falandays_path_counts(fast, &pc);
        /* Slot 0 compressed from the start (the slots share a wiring, so
         * in its lane); slot 1 dense until its first clearing, then
         * compressed (on the per-slot path until a reset admits it). */
        assert_int_equal(pc.to_sparse, 1);
        assert_int_equal(pc.lanes, 4);
        assert_int_equal(pc.sparse, 1);
        assert_int_equal(pc.dense, 3);
        bl_model_destroy(ref);
        bl_model_destroy(fast);
        bl_falandays_init_destroy(in[0]);
        bl_falandays_init_destroy(in[1]);
    }
}

/* Every key of slot b of two batches, bit for bit. */
static void expect_same_slot(const bl_model *x, const bl_model *y, size_t b, const char *what)
{
    bl_snapshot *sx, *sy;
    OK_E(bl_model_snapshot(x, b, &sx, &e_));
    OK_E(bl_model_snapshot(y, b, &sy, &e_));
    assert_int_equal(sx->count, sy->count);
    for (size_t a = 0; a < sx->count; a++) {
        const bl_snapshot_array *p = &sx->arrays[a], *q = &sy->arrays[a];
        const size_t cnt = p->ndim == 0 ? 1 : p->shape[0] * p->shape[1];
        for (size_t i = 0; i < cnt; i++)
            if (bl_test_bits(p->data[i]) != bl_test_bits(q->data[i]))
                fail_msg("%s: key %s[%zu]: %.17g vs %.17g", what, p->name, i, p->data[i],
                         q->data[i]);
    }
    bl_snapshot_destroy(sx);
    bl_snapshot_destroy(sy);
}

/* A weight update that overflows to -inf in compressed rows: the frame
 * fails with raw_finite 0 for that destination, and on the Dale axis the
 * clamp then turns the weight into +0 (the fast kernel clamps -inf only
 * after finding it); on the unsigned axis -inf stays. */
static void test_weight_to_minus_inf(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        for (int axis = 0; axis < 2; axis++) {
            const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
            bl_falandays_config c;
            bl_falandays_config_default(&c);
            c.axis = axis ? BL_AXIS_DALE : BL_AXIS_UNSIGNED;
            c.leak = 0.0;
            /* δ = (e / 1)·lrate with e = 2 overflows to +inf. */
            c.lrate_wmat = d ? 3e38 : 1e308;
            bl_falandays_init *in = NULL;
            bl_error err = {0};
            if (bl_falandays_init_create(&c, 3, 1, 1, &in, &err) != BL_OK)
                fail_msg("%s", err.msg);
            /* Synapses 0 -> 1 and 0 -> 2 (W[dst][src]); only node 1 gets input. */
            in->recurrent_mask[1 * 3 + 0] = 1.0;
            in->weights[1 * 3 + 0] = 0.5;
            in->recurrent_mask[2 * 3 + 0] = 1.0;
            in->weights[2 * 3 + 0] = 0.25;
            in->input_weights[1] = 1.0;
            for (size_t i = 0; i < 3; i++) {
                in->output_mask[i] = 1.0;
                in->targets[i] = 1.0;
                in->signs[i] = 1;
            }
            in->spikes[0] = 1.0;
            bl_model *ref = NULL, *fast = NULL;
            const bl_falandays_init *const inits[1] = {in};
            if (bl_model_create_falandays(inits, 1, dt, &ref, &err) != BL_OK ||
                bl_model_create_falandays(inits, 1, dt, &fast, &err) != BL_OK)
                fail_msg("%s", err.msg);
            bl_falandays_set_reference_kernel(ref, true);
            /* a = 4.5 + 0.5 fires at θ = 2, leaving a = 3 and e = 2. */
            const double u64 = 4.5;
            const float u32 = 4.5f;
            const double z64[3] = {0};
            const float z32[3] = {0};
            bl_matrix im = {dt, 1, 1, d ? (const void *)&u32 : (const void *)&u64};
            bl_matrix nm = {dt, 1, 3, d ? (const void *)z32 : (const void *)z64};
            const int32_t active[1] = {1};
            OK_E(bl_model_step(ref, &im, &nm, active, 1, &e_));
            OK_E(bl_model_step(fast, &im, &nm, active, 1, &e_));
            expect_same_slot(ref, fast, 0, "after the overflowing frame");
            assert_int_equal(bl_model_finite(fast)[0], 0);
            bl_snapshot *s;
            OK_E(bl_model_snapshot(fast, 0, &s, &e_));
            const double w10 = bl_snapshot_get(s, "weights")->data[1 * 3 + 0];
            const double w20 = bl_snapshot_get(s, "weights")->data[2 * 3 + 0];
            if (axis)
                assert_true(w10 == 0.0 && !signbit(w10));
            else
                assert_true(isinf(w10) && w10 < 0);
            /* Node 2 had count 1 and e = −1: its weight grows, finitely or not. */
            assert_true(w20 != 0.25);
            assert_int_equal(bl_snapshot_get(s, "raw_finite")->data[1], 0.0);
            bl_snapshot_destroy(s);
            bl_fal_path_counts pc;
            bl_falandays_path_counts(fast, &pc);
            assert_int_equal(pc.sparse, 1);
            bl_model_destroy(ref);
            bl_model_destroy(fast);
            bl_falandays_init_destroy(in);
        }
    }
}

/* Creation allocates the compressed rows after the state arrays: every
 * allocation failure must give BL_ENOMEM, nothing half-made, no leak (the
 * sanitizer build checks leaks), and success afterwards. */
static void test_allocation_failures(void **state)
{
    (void)state;
    bl_gen g;
    bl_test_gen_seeded(&g, 77);
    stats st = {0};
    bl_falandays_config c;
    random_config(&g, BL_FLOAT64, 1, &c, &st);
    c.lrate_wmat = 1.0;
    c.lrate_targ = 0.01;
    bl_falandays_init *in[2];
    bl_error err = {0};
    for (size_t b = 0; b < 2; b++)
        if (bl_falandays_construct(&c, 20, 2, 2, &g, &in[b], &err) != BL_OK)
            fail_msg("%s", err.msg);
    const bl_falandays_init *const inits[2] = {in[0], in[1]};
    bool done = false;
    for (long k = 1; k < 200 && !done; k++) {
        bl_model *m = NULL;
        bl_alloc_fail_at(k);
        bl_status rc = bl_model_create_falandays(inits, 2, BL_FLOAT32, &m, &err);
        const long attempts = bl_alloc_count();
        bl_alloc_fail_at(0);
        if (rc == BL_OK) {
            assert_true(attempts < k);
            bl_fal_path_counts pc;
            bl_falandays_path_counts(m, &pc);
            assert_int_equal(pc.sparse + pc.dense, 0);
            done = true;
            bl_model_destroy(m);
        } else {
            assert_int_equal(rc, BL_ENOMEM);
            assert_null(m);
        }
    }
    assert_true(done);
    bl_falandays_init_destroy(in[0]);
    bl_falandays_init_destroy(in[1]);
}

int main(void)
{
#ifdef __GLIBC__
    /* Snapshots of the big scenarios allocate and free megabytes per frame;
     * without these glibc returns that memory to the system and faults it
     * back in each time, which costs more than the whole test. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    /* Lanes wherever a wiring has two slots (not only where the policy
     * finds them faster), so that these scenarios keep checking the fast
     * kernel's lanes and their exits on every machine. */
    setenv("BL_LANES", "always", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signed_zeros_and_layouts),
        cmocka_unit_test(test_weight_to_minus_inf),
        cmocka_unit_test(test_random_float64),
        cmocka_unit_test(test_random_float32),
        cmocka_unit_test(test_after_failure),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
