/* The lockstep-lane Falandays kernel (src/models/falandays_lanes.h): slots
 * that share one wiring, stepped together one per vector lane, against the
 * reference kernel on the same batch and against 1-slot batches of each
 * slot stepped alone (no lanes there: a wiring of one slot stays on the
 * per-slot path).
 *
 * For each instruction set the machine has (BL_ISA), both dtypes and
 * B in {1, 2, 3, 5, 8, 9, 16}, every frame compares every slot's views
 * (activity, effectors, finite) and then every snapshot key (weights as
 * canonical doubles with their signed zeros, NaNs by their bits) bit for
 * bit. Scenarios mix active-mask holes (the slot must not change), weight
 * and plasticity freezes, resets, kernel switches, infinite inputs (the
 * slot fails in the same frame as the reference and stays inactive, as
 * the runner keeps it, until a reset), overflowing learning rates (the
 * lane leaves for the per-slot path), both axes, both drives, and now and
 * then a slot of another wiring in the same batch, and hand-made signed
 * zeros and negative Dale weights. Path counters prove
 * that the lanes ran. Those scenarios force lanes (BL_LANES=always), so
 * that the kernels of every instruction set are tested whatever the
 * policy; test_policy checks what BL_LANES=auto picks (docs/running.md)
 * and test_bad_lanes a bad BL_LANES. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/falandays_internal.h"
#include "models/isa.h"
#include "support.h"
#include "model_support.h"

enum { MAXB = 16, FRAMES = 48 };

static const size_t SLOT_COUNTS[] = {1, 2, 3, 5, 8, 9, 16};

/* Every key of slot b of x against slot c of y, bit for bit. */
static void expect_same(const bl_model *x, size_t b, const bl_model *y, size_t c,
                        const char *what, size_t frame)
{
    bl_snapshot *sx = bl_test_snap(x, b), *sy = bl_test_snap(y, c);
    char where[224];
    snprintf(where, sizeof where, "%s, frame %zu, slot %zu", what, frame, b);
    bl_test_assert_snap_identical(sx, sy, where);
    bl_snapshot_destroy(sx);
    bl_snapshot_destroy(sy);
}

/* The views of slot b of x against slot c of y, as bytes of the dtype. */
static void expect_same_views(const bl_model *x, size_t b, const bl_model *y, size_t c,
                              const char *what, size_t frame)
{
    const size_t rs = bl_test_dtype_size(bl_model_dtype(x));
    const size_t n = bl_model_nodes(x), ne = bl_model_effectors(x);
    const unsigned char *ax = bl_model_activity_data(x), *ay = bl_model_activity_data(y);
    const unsigned char *ex = bl_model_effector_data(x), *ey = bl_model_effector_data(y);
    if (memcmp(ax + b * n * rs, ay + c * n * rs, n * rs) != 0)
        fail_msg("%s, frame %zu, slot %zu: activity view differs", what, frame, b);
    if (memcmp(ex + b * ne * rs, ey + c * ne * rs, ne * rs) != 0)
        fail_msg("%s, frame %zu, slot %zu: effector view differs", what, frame, b);
    if (bl_model_finite(x)[b] != bl_model_finite(y)[c])
        fail_msg("%s, frame %zu, slot %zu: finite %d, want %d", what, frame, b,
                 bl_model_finite(x)[b], bl_model_finite(y)[c]);
}

typedef struct totals {
    bl_fal_path_counts lanes; /* of the lane batches */
    size_t scenarios, slot_frames, spikes, node_frames, failures, holes, resets, freezes;
    size_t foreign, zombies, odd;
} totals;

/* One scenario: B slots of one constructed wiring (and maybe one slot of
 * another), FRAMES frames of random inputs, noise and operations. */
static void run_scenario(bl_dtype dt, size_t nb, unsigned combo, uint64_t seed, totals *tot)
{
    bl_gen g;
    bl_test_gen_seeded(&g, seed);
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_test_falandays_random_flags(&g, combo, &c);
    c.leak = 0.25 * bl_test_uni(&g);
    c.lrate_wmat = bl_test_pick(&g, 4) ? 0.05 + bl_test_uni(&g) : 0.0;
    c.lrate_targ = 0.05 * bl_test_uni(&g);
    c.link_p = 0.05 + 0.3 * bl_test_uni(&g);
    c.input_weight = 1.0 + 2.0 * bl_test_uni(&g);
    const bool huge = bl_test_pick(&g, 4) == 0;
    if (huge)
        c.lrate_wmat = dt == BL_FLOAT64 ? 1e300 : 1e37;
    const size_t n = 24 + bl_test_pick(&g, 90), nr = 1 + bl_test_pick(&g, 4), ne = 2;
    bl_falandays_init *shared = NULL, *other = NULL;
    bl_error err = {0};
    bl_gen cg;
    bl_test_gen_seeded(&cg, seed ^ 0x5eedu);
    if (bl_falandays_construct(&c, n, nr, ne, &cg, &shared, &err) != BL_OK)
        fail_msg("construct: %s", err.msg);
    /* Now and then hand-made touches that compressed rows (and so lanes)
     * still take: masked weights of -0 and, on the Dale axis, negative
     * ones (not validated), unmasked weights of -0. */
    const bool odd = bl_test_pick(&g, 3) == 0;
    for (size_t k = 0; odd && k < n * n; k++) {
        if (bl_test_pick(&g, 6) != 0)
            continue;
        if (shared->recurrent_mask[k] == 0.0)
            shared->weights[k] = -0.0;
        else
            shared->weights[k] = bl_test_pick(&g, 2) ? -0.0 : -0.25;
    }
    tot->odd += odd;
    /* Now and then the last slot has a wiring of its own. */
    const bool foreign = nb >= 3 && bl_test_pick(&g, 2) == 0;
    if (foreign && bl_falandays_construct(&c, n, nr, ne, &cg, &other, &err) != BL_OK)
        fail_msg("construct: %s", err.msg);
    const bl_falandays_init *inits[MAXB];
    for (size_t b = 0; b < nb; b++)
        inits[b] = foreign && b == nb - 1 ? other : shared;
    tot->foreign += foreign;

    bl_model *lanes = NULL, *ref = NULL, *single[MAXB] = {0};
    if (bl_model_create_falandays(inits, nb, dt, &lanes, &err) != BL_OK ||
        bl_model_create_falandays(inits, nb, dt, &ref, &err) != BL_OK)
        fail_msg("create: %s", err.msg);
    bl_falandays_set_kernel(ref, BL_FAL_KERNEL_REFERENCE);
    for (size_t b = 0; b < nb; b++)
        if (bl_model_create_falandays(&inits[b], 1, dt, &single[b], &err) != BL_OK)
            fail_msg("create: %s", err.msg);

    double *u = bl_test_xcalloc(nb * nr, sizeof *u), *xi = bl_test_xcalloc(nb * n, sizeof *xi);
    int32_t active[MAXB], dead[MAXB] = {0}, one = 1;
    char what[160];
    snprintf(what, sizeof what, "%s B=%zu combo %u seed %" PRIu64 "%s%s", bl_dtype_name(dt), nb,
             combo, seed, huge ? " huge" : "", foreign ? " foreign" : "");
    const size_t fail_frame = bl_test_pick(&g, 2) ? bl_test_pick(&g, FRAMES) : FRAMES;
    const size_t fail_slot = bl_test_pick(&g, nb);
    /* Now and then failed slots are stepped on (the runner never does):
     * whatever they compute, the other lanes must not notice. */
    const bool zombies = bl_test_pick(&g, 3) == 0;
    for (size_t f = 0; f < FRAMES; f++) {
        /* Operations between frames on random slots. */
        const size_t op = bl_test_pick(&g, 12);
        if (op <= 2) {
            int32_t sel[MAXB];
            for (size_t b = 0; b < nb; b++)
                sel[b] = bl_test_pick(&g, 3) == 0;
            if (op == 0) {
                /* A reset brings failed slots back. */
                bl_test_reset(lanes, sel);
                bl_test_reset(ref, sel);
                for (size_t b = 0; b < nb; b++)
                    if (sel[b]) {
                        bl_test_reset(single[b], &one);
                        dead[b] = 0;
                        tot->resets++;
                    }
            } else {
                bl_test_freeze(lanes, sel, op == 2);
                bl_test_freeze(ref, sel, op == 2);
                for (size_t b = 0; b < nb; b++)
                    if (sel[b]) {
                        bl_test_freeze(single[b], &one, op == 2);
                        tot->freezes++;
                    }
            }
        } else if (op == 3 && bl_test_pick(&g, 4) == 0) {
            /* Out of the lanes and back: the state must carry over. */
            bl_falandays_set_kernel(lanes, BL_FAL_KERNEL_DENSE);
            bl_falandays_set_kernel(lanes, BL_FAL_KERNEL_FAST);
        }
        for (size_t b = 0; b < nb; b++) {
            for (size_t r = 0; r < nr; r++)
                u[b * nr + r] = bl_test_pick(&g, 3) == 0 ? 0.0 : 2.0 * bl_test_normal(&g);
            for (size_t i = 0; i < n; i++)
                xi[b * n + i] = bl_test_normal(&g);
            active[b] = (zombies || !dead[b]) && bl_test_pick(&g, 8) != 0;
            tot->holes += !active[b];
        }
        if (f == fail_frame && active[fail_slot])
            u[fail_slot * nr] = bl_test_pick(&g, 2) ? INFINITY : -INFINITY;
        bl_test_step(lanes, u, xi, active);
        bl_test_step(ref, u, xi, active);
        for (size_t b = 0; b < nb; b++)
            if (active[b])
                bl_test_step(single[b], u + b * nr, xi + b * n, NULL);
        for (size_t b = 0; b < nb; b++) {
            /* Bits are owed up to the frame a slot first fails. */
            if (dead[b])
                continue;
            expect_same_views(lanes, b, ref, b, what, f);
            expect_same_views(lanes, b, single[b], 0, what, f);
            /* Whole snapshots every third frame, in the last and when a
             * slot fails (views every frame). */
            if (f % 3 == 0 || f == FRAMES - 1 || !bl_model_finite(ref)[b]) {
                expect_same(lanes, b, ref, b, what, f);
                expect_same(lanes, b, single[b], 0, what, f);
            }
            if (!active[b])
                continue;
            tot->slot_frames++;
            tot->node_frames += n;
            for (size_t i = 0; i < n; i++)
                tot->spikes += dt == BL_FLOAT64
                                   ? ((const double *)bl_model_activity_data(lanes))[b * n + i] != 0
                                   : ((const float *)bl_model_activity_data(lanes))[b * n + i] != 0;
            /* As the runner: a failed slot is not stepped again (unless
             * this scenario keeps zombies) until a reset. */
            if (!bl_model_finite(lanes)[b]) {
                dead[b] = 1;
                tot->failures++;
            }
        }
    }
    bl_fal_path_counts pc;
    bl_falandays_path_counts(lanes, &pc);
    /* A wiring of two or more slots runs in lanes (unless every one of its
     * slots was inactive or evicted throughout, which these scenarios do
     * not make). */
    if (nb - (foreign ? 1 : 0) >= 2)
        assert_true(pc.lanes > 0);
    else
        assert_int_equal(pc.lanes, 0);
    tot->lanes.lanes += pc.lanes;
    tot->lanes.sparse += pc.sparse;
    tot->lanes.sparse_all += pc.sparse_all;
    tot->lanes.dense_inputs += pc.dense_inputs;
    tot->lanes.lane_exits += pc.lane_exits;
    tot->zombies += zombies;
    tot->scenarios++;

    free(u);
    free(xi);
    for (size_t b = 0; b < nb; b++)
        bl_model_destroy(single[b]);
    bl_model_destroy(lanes);
    bl_model_destroy(ref);
    bl_falandays_init_destroy(shared);
    bl_falandays_init_destroy(other);
}

static void run_isa(bl_isa isa)
{
    if (!bl_isa_supported(isa)) {
        printf("%s: not supported here, skipped\n", bl_isa_name(isa));
        return;
    }
    setenv("BL_ISA", bl_isa_name(isa), 1);
    setenv("BL_LANES", "always", 1);
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        totals tot = {0};
        for (size_t k = 0; k < sizeof SLOT_COUNTS / sizeof *SLOT_COUNTS; k++)
            for (unsigned combo = 0; combo < 16; combo++)
                run_scenario(dt, SLOT_COUNTS[k], combo, 1000u * k + combo + 77u * (unsigned)d,
                             &tot);
        printf("%s %s: %zu scenarios, %zu slot-frames, spike rate %.3f, %zu failures, %zu "
               "holes, %zu resets, %zu freezes, %zu foreign slots, %zu with zombies, %zu odd; lanes "
               "%" PRIu64
               ", lane exits %" PRIu64 ", per-slot sparse %" PRIu64 ", sparse_all %" PRIu64
               ", dense inputs %" PRIu64 "\n",
               bl_isa_name(isa), bl_dtype_name(dt), tot.scenarios, tot.slot_frames,
               tot.node_frames ? (double)tot.spikes / (double)tot.node_frames : 0.0,
               tot.failures, tot.holes, tot.resets, tot.freezes, tot.foreign, tot.zombies, tot.odd,
               tot.lanes.lanes, tot.lanes.lane_exits, tot.lanes.sparse, tot.lanes.sparse_all, tot.lanes.dense_inputs);
        /* The scenarios reached what they are meant to cover. */
        assert_true(tot.lanes.lanes > tot.slot_frames / 2);
        assert_true(tot.failures > 0);
        assert_true(tot.holes > 0 && tot.resets > 0 && tot.freezes > 0 && tot.foreign > 0);
        assert_true(tot.lanes.dense_inputs > 0 && tot.lanes.lane_exits > 0);
        assert_true(tot.zombies > 0 && tot.lanes.sparse_all > 0 && tot.odd > 0);
        assert_true(tot.spikes > tot.node_frames / 20);
    }
    unsetenv("BL_ISA");
    unsetenv("BL_LANES");
}

static void test_lanes_sse2(void **state)
{
    (void)state;
    run_isa(BL_ISA_SSE2);
}

static void test_lanes_avx2(void **state)
{
    (void)state;
    run_isa(BL_ISA_AVX2);
}

/* Creation with the environment variable var set to value fails with a
 * ValueError whose line is `want` (or, with exact false, contains it), and
 * leaves nothing allocated. */
static void expect_bad_env(const char *var, const char *value, const char *want, bool exact)
{
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_falandays_init *in = NULL;
    bl_error err = {0};
    bl_gen g;
    bl_test_gen_seeded(&g, 5);
    if (bl_falandays_construct(&c, 16, 2, 2, &g, &in, &err) != BL_OK)
        fail_msg("construct: %s", err.msg);
    const bl_falandays_init *inits[2] = {in, in};
    setenv(var, value, 1);
    bl_model *m = (bl_model *)&m;
    assert_int_equal(bl_model_create_falandays(inits, 2, BL_FLOAT32, &m, &err), BL_EVALUE);
    assert_null(m);
    if (exact)
        assert_string_equal(err.msg, want);
    else
        assert_non_null(strstr(err.msg, want));
    unsetenv(var);
    bl_falandays_init_destroy(in);
}

/* A bad BL_ISA is creation's ValueError, and nothing is left allocated. */
static void test_bad_isa(void **state)
{
    (void)state;
    expect_bad_env("BL_ISA", "avx512", "BL_ISA=avx512", false);
}

/* Slots of a wiring of nb slots that BL_LANES=auto puts into lanes, as
 * docs/running.md states it: none under SSE2; under AVX2 every full group
 * of L lanes, and the last partial one when it holds at least 2 slots and
 * at least three quarters of L. */
static size_t documented_taken(bl_isa isa, bl_dtype dt, size_t nb)
{
    const size_t L = (dt == BL_FLOAT32 ? 8 : 4), rest = nb % L;
    if (isa != BL_ISA_AVX2)
        return 0;
    return nb / L * L + (rest >= 2 && 4 * rest >= 3 * L ? rest : 0);
}

/* Lane slot-frames of a batch of nb slots of one wiring over `frames`
 * frames under the current BL_LANES. */
static uint64_t lane_slot_frames(const bl_falandays_init *in, bl_dtype dt, size_t nb,
                                 size_t frames)
{
    const bl_falandays_init *inits[MAXB];
    for (size_t b = 0; b < nb; b++)
        inits[b] = in;
    bl_model *m = NULL;
    bl_error err = {0};
    if (bl_model_create_falandays(inits, nb, dt, &m, &err) != BL_OK)
        fail_msg("create: %s", err.msg);
    double u[MAXB * 2], xi[MAXB * 32] = {0};
    int32_t active[MAXB];
    for (size_t b = 0; b < nb; b++) {
        active[b] = 1;
        u[2 * b] = 1.5;
        u[2 * b + 1] = 0.5 * (double)b;
    }
    for (size_t f = 0; f < frames; f++)
        bl_test_step(m, u, xi, active);
    bl_fal_path_counts pc;
    bl_falandays_path_counts(m, &pc);
    bl_model_destroy(m);
    return pc.lanes;
}

/* What BL_LANES=auto (and unset) picks, against the documented rule, for
 * every instruction set here, both dtypes and 1 to 16 slots of one
 * wiring; never and always for contrast. */
static void test_policy(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    bl_falandays_init *in = NULL;
    bl_error err = {0};
    bl_gen g;
    bl_test_gen_seeded(&g, 11);
    if (bl_falandays_construct(&c, 32, 2, 2, &g, &in, &err) != BL_OK)
        fail_msg("construct: %s", err.msg);
    enum { F = 6 };
    size_t checked = 0, with_lanes = 0;
    for (int i = 0; i < BL_ISA_COUNT; i++) {
        const bl_isa isa = (bl_isa)i;
        if (!bl_isa_supported(isa))
            continue;
        setenv("BL_ISA", bl_isa_name(isa), 1);
        for (int d = 0; d < 2; d++) {
            const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
            for (size_t nb = 1; nb <= MAXB; nb++) {
                const uint64_t want = documented_taken(isa, dt, nb) * F;
                unsetenv("BL_LANES");
                const uint64_t unset = lane_slot_frames(in, dt, nb, F);
                setenv("BL_LANES", "auto", 1);
                const uint64_t got = lane_slot_frames(in, dt, nb, F);
                if (got != want || unset != want)
                    fail_msg("%s %s B=%zu: auto ran %" PRIu64 " (unset %" PRIu64
                             ") lane slot-frames, the policy says %" PRIu64,
                             bl_isa_name(isa), bl_dtype_name(dt), nb, got, unset, want);
                setenv("BL_LANES", "never", 1);
                assert_int_equal(lane_slot_frames(in, dt, nb, F), 0);
                setenv("BL_LANES", "always", 1);
                assert_int_equal(lane_slot_frames(in, dt, nb, F), nb >= 2 ? nb * F : 0);
                checked++;
                with_lanes += want > 0;
            }
        }
    }
    unsetenv("BL_LANES");
    unsetenv("BL_ISA");
    /* SSE2 is everywhere here; AVX2, where present, takes some. */
    assert_true(checked >= 2 * MAXB);
    if (bl_isa_supported(BL_ISA_AVX2))
        assert_true(with_lanes > 0 && with_lanes < checked);
    bl_falandays_init_destroy(in);
}

/* A bad BL_LANES is creation's one-line ValueError, nothing left behind. */
static void test_bad_lanes(void **state)
{
    (void)state;
    expect_bad_env("BL_LANES", "sometimes",
                   "BL_LANES=sometimes: unknown lane policy (choose auto, always or never)", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lanes_sse2),
        cmocka_unit_test(test_lanes_avx2),
        cmocka_unit_test(test_bad_isa),
        cmocka_unit_test(test_policy),
        cmocka_unit_test(test_bad_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
