/* Falandays per-wiring storage (src/models/falandays_batch.h): slots
 * created from one initial state share its fixed arrays and initial
 * weights; a slot owns its compressed plastic weights and O(N) state, and a
 * dense N x N buffer only while its layout needs one.
 *
 *   - Exactness: batches whose wirings repeat in runs, come back after
 *     another wiring (A A B A A: three wirings, two of equal bytes), repeat
 *     a state by value under another pointer, or keep non-zero weights
 *     outside the mask (a dense wiring, shared by two slots) are stepped
 *     with resets, freezes, kernel switches (dense buffers made and given
 *     back) and failing slots (infinite inputs, overflowing learning), and
 *     every snapshot key of every slot must equal the reference kernel's,
 *     bit for bit (signed zeros, NaN bits), every frame.
 *   - Memory (bl_falandays_bytes): a shared wiring's slots hold no N x N
 *     array; a slot added to a shared batch costs at most 1.5 x (its
 *     compressed synapses, nnz x (value + 4 index bytes), plus its node
 *     state, N x (6 values + 4 bytes)) at N = 256 and 1024 in float32; the
 *     reference kernel materialises N x N per slot and returning to the
 *     fast kernel gives it all back; a dense wiring's buffers belong to its
 *     slots only. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/falandays_internal.h"
#include "support.h"
#include "model_support.h"

enum { NB = 6, FRAMES = 40 };

static bl_falandays_init *construct(const bl_falandays_config *c, size_t n, size_t nr,
                                    uint64_t seed)
{
    bl_gen g;
    bl_test_gen_seeded(&g, seed);
    bl_falandays_init *in = NULL;
    bl_error err = {0};
    if (bl_falandays_construct(c, n, nr, 2, &g, &in, &err) != BL_OK)
        fail_msg("construct: %s", err.msg);
    return in;
}

/* A copy of `in` under another pointer (the same bytes). */
static bl_falandays_init *copy_init(const bl_falandays_init *in, const bl_falandays_config *c,
                                    uint64_t seed)
{
    bl_falandays_init *out = construct(c, in->n, in->r, seed);
    const size_t n = in->n;
    memcpy(out->weights, in->weights, n * n * sizeof(double));
    memcpy(out->recurrent_mask, in->recurrent_mask, n * n * sizeof(double));
    memcpy(out->input_weights, in->input_weights, n * in->r * sizeof(double));
    memcpy(out->output_mask, in->output_mask, n * in->e * sizeof(double));
    memcpy(out->signs, in->signs, n * sizeof *in->signs);
    memcpy(out->acts, in->acts, n * sizeof(double));
    memcpy(out->targets, in->targets, n * sizeof(double));
    memcpy(out->spikes, in->spikes, n * sizeof(double));
    return out;
}

static void expect_same(const bl_model *x, const bl_model *y, size_t b, const char *what,
                        size_t frame)
{
    bl_snapshot *sx = bl_test_snap(x, b), *sy = bl_test_snap(y, b);
    char where[200];
    snprintf(where, sizeof where, "%s, frame %zu, slot %zu", what, frame, b);
    bl_test_assert_snap_identical(sx, sy, where);
    bl_snapshot_destroy(sx);
    bl_snapshot_destroy(sy);
}

/* Slot b's weights and mask keys hold exactly its initial state's, cast to
 * the dtype (signed zeros included): the independent check of what the
 * batch rebuilds from its shared compressed rows and sign bits. */
static void expect_initial(const bl_model *m, size_t b, const bl_falandays_init *in,
                           const char *what)
{
    bl_snapshot *s = bl_test_snap(m, b);
    const double *w = bl_test_sget(s, "weights"), *mask = bl_test_sget(s, "recurrent_mask");
    const double *win = bl_test_sget(s, "input_weights");
    char where[200];
    for (size_t k = 0; k < in->n * in->n; k++) {
        const double want = bl_model_dtype(m) == BL_FLOAT32 ? (double)(float)in->weights[k]
                                                            : in->weights[k];
        snprintf(where, sizeof where, "%s, slot %zu, weights[%zu]", what, b, k);
        bl_test_assert_bits(w[k], want, where);
        snprintf(where, sizeof where, "%s, slot %zu, recurrent_mask[%zu]", what, b, k);
        bl_test_assert_bits(mask[k], in->recurrent_mask[k] != 0.0 ? 1.0 : 0.0, where);
    }
    for (size_t k = 0; k < in->n * in->r; k++) {
        const double want = bl_model_dtype(m) == BL_FLOAT32
                                ? (double)(float)in->input_weights[k]
                                : in->input_weights[k];
        snprintf(where, sizeof where, "%s, slot %zu, input_weights[%zu]", what, b, k);
        bl_test_assert_bits(win[k], want, where);
    }
    bl_snapshot_destroy(s);
}

/* One scenario: six slots of the initial states `inits` (equal pointers
 * in a run are one wiring), stepped on the fast kernel and on the
 * reference kernel. */
static void run_scenario(bl_dtype dt, uint64_t seed, const char *shape,
                         const bl_falandays_init *const inits[NB])
{
    bl_error err = {0};
    bl_model *fast = NULL, *ref = NULL;
    if (bl_model_create_falandays(inits, NB, dt, &fast, &err) != BL_OK ||
        bl_model_create_falandays(inits, NB, dt, &ref, &err) != BL_OK)
        fail_msg("create: %s", err.msg);
    assert_int_equal(bl_falandays_set_kernel(ref, BL_FAL_KERNEL_REFERENCE), BL_OK);
    for (size_t b = 0; b < NB; b++) {
        expect_initial(fast, b, inits[b], "created");
        expect_initial(ref, b, inits[b], "created, reference");
    }
    const size_t fresh = bl_falandays_bytes(fast);
    const size_t n = bl_model_nodes(fast), nr = bl_model_receptors(fast);
    bl_gen g;
    bl_test_gen_seeded(&g, seed);
    double u[NB * 4], *xi = bl_test_xcalloc(NB * n, sizeof *xi);
    int32_t active[NB], dead[NB] = {0};
    char what[160];
    snprintf(what, sizeof what, "%s %s seed %" PRIu64, bl_dtype_name(dt), shape, seed);
    size_t failures = 0, switches = 0;
    for (size_t f = 0; f < FRAMES; f++) {
        const size_t op = bl_test_pick(&g, 10);
        int32_t sel[NB];
        for (size_t b = 0; b < NB; b++)
            sel[b] = bl_test_pick(&g, 3) == 0;
        if (op == 0) {
            bl_test_reset(fast, sel);
            bl_test_reset(ref, sel);
            for (size_t b = 0; b < NB; b++)
                dead[b] = dead[b] && !sel[b];
        } else if (op == 1) {
            const bool every = bl_test_pick(&g, 2) != 0;
            bl_test_freeze(fast, sel, every);
            bl_test_freeze(ref, sel, every);
        } else if (op == 2) {
            /* Dense buffers for every slot, and back: the state carries
             * over, and the fast kernel holds what it held before. */
            const size_t before = bl_falandays_bytes(fast);
            const bl_fal_kernel k =
                bl_test_pick(&g, 2) ? BL_FAL_KERNEL_REFERENCE : BL_FAL_KERNEL_DENSE;
            assert_int_equal(bl_falandays_set_kernel(fast, k), BL_OK);
            assert_true(bl_falandays_bytes(fast) >= before);
            assert_int_equal(bl_falandays_set_kernel(fast, BL_FAL_KERNEL_FAST), BL_OK);
            assert_true(bl_falandays_bytes(fast) <= before);
            switches++;
        }
        for (size_t b = 0; b < NB; b++) {
            for (size_t r = 0; r < nr; r++)
                u[b * nr + r] = bl_test_pick(&g, 3) == 0 ? 0.0 : 2.0 * bl_test_normal(&g);
            for (size_t i = 0; i < n; i++)
                xi[b * n + i] = bl_test_normal(&g);
            active[b] = !dead[b] && bl_test_pick(&g, 8) != 0;
        }
        if (bl_test_pick(&g, 12) == 0) {
            const size_t b = bl_test_pick(&g, NB);
            u[b * nr] = bl_test_pick(&g, 2) ? INFINITY : -INFINITY;
        }
        bl_test_step(fast, u, xi, active);
        bl_test_step(ref, u, xi, active);
        for (size_t b = 0; b < NB; b++) {
            if (dead[b])
                continue;
            expect_same(fast, ref, b, what, f);
            if (active[b] && !bl_model_finite(ref)[b]) {
                dead[b] = 1;
                failures++;
            }
        }
    }
    /* Whatever happened, a full reset brings back the creation storage. */
    int32_t all[NB];
    for (size_t b = 0; b < NB; b++)
        all[b] = 1;
    bl_test_reset(fast, all);
    bl_test_reset(ref, all);
    for (size_t b = 0; b < NB; b++) {
        expect_same(fast, ref, b, what, FRAMES);
        expect_initial(fast, b, inits[b], "reset");
    }
    assert_true(bl_falandays_bytes(fast) <= fresh);
    print_message("  %s: %zu failures, %zu kernel round trips\n", what, failures, switches);
    free(xi);
    bl_model_destroy(fast);
    bl_model_destroy(ref);
}

static void test_exact(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
        for (uint64_t seed = 1; seed <= 12; seed++) {
            bl_gen g;
            bl_test_gen_seeded(&g, seed * 977u);
            bl_falandays_config c;
            bl_falandays_config_default(&c);
            bl_test_falandays_random_flags(&g, (unsigned)bl_test_pick(&g, 16), &c);
            c.link_p = 0.05 + 0.3 * bl_test_uni(&g);
            c.lrate_wmat = seed % 3 == 0 ? (dt == BL_FLOAT64 ? 1e300 : 1e37) : 0.2;
            c.lrate_targ = 0.05;
            const size_t n = 20 + bl_test_pick(&g, 40), nr = 1 + bl_test_pick(&g, 3);
            bl_falandays_init *a = construct(&c, n, nr, seed);
            bl_falandays_init *b = construct(&c, n, nr, seed + 100);
            bl_falandays_init *a2 = copy_init(a, &c, seed + 200);
            /* A hand-made wiring with non-zero weights outside its mask
             * (kept dense) and signed zeros. */
            bl_falandays_init *h = copy_init(b, &c, seed + 300);
            for (size_t k = 0; k < n * n; k++)
                if (h->recurrent_mask[k] == 0.0 && bl_test_pick(&g, 5) == 0)
                    h->weights[k] = bl_test_pick(&g, 2) ? 0.125 * bl_test_normal(&g) : -0.0;
            const bl_falandays_init *runs[NB] = {a, a, b, a, a, a2};
            run_scenario(dt, seed, "A A B A A A'", runs);
            const bl_falandays_init *dense[NB] = {h, h, a, a, h, b};
            run_scenario(dt, seed, "H H A A H B", dense);
            bl_falandays_init_destroy(a);
            bl_falandays_init_destroy(b);
            bl_falandays_init_destroy(a2);
            bl_falandays_init_destroy(h);
        }
    }
}

static size_t bytes_of(const bl_falandays_init *const *inits, size_t nb, bl_dtype dt)
{
    bl_model *m = NULL;
    bl_error err = {0};
    if (bl_model_create_falandays(inits, nb, dt, &m, &err) != BL_OK)
        fail_msg("create: %s", err.msg);
    const size_t bytes = bl_falandays_bytes(m);
    bl_model_destroy(m);
    return bytes;
}

static void test_memory(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    const size_t ns[] = {256, 1024};
    for (size_t t = 0; t < 2; t++) {
        const size_t n = ns[t], rs = sizeof(float);
        bl_falandays_init *a = construct(&c, n, 3, 11 + t);
        size_t nnz = 0;
        for (size_t k = 0; k < n * n; k++)
            nnz += a->recurrent_mask[k] != 0.0;
        const bl_falandays_init *inits[16];
        for (size_t b = 0; b < 16; b++)
            inits[b] = a;
        /* 8 slots more of one wiring (whole lane groups for every
         * instruction set) cost 8 slots' own storage, no N x N. */
        const size_t b8 = bytes_of(inits, 8, BL_FLOAT32), b16 = bytes_of(inits, 16, BL_FLOAT32);
        assert_true(b16 > b8);
        const double per_slot = (double)(b16 - b8) / 8.0;
        const double bound = 1.5 * ((double)nnz * (double)(rs + 4) + (double)n * (6.0 * rs + 4));
        print_message("  N=%zu float32: %.0f bytes per added slot, bound %.0f; %.0f per slot "
                      "of B=8\n",
                      n, per_slot, bound, (double)b8 / 8.0);
        assert_true(per_slot <= bound);
        assert_true(per_slot < (double)(n * n * rs) / 2.0); /* not half a dense array */
        /* The whole batch per slot too (its wiring shared by 8). */
        assert_true((double)b8 / 8.0 <= bound);

        /* The reference kernel materialises N x N per slot; the fast
         * kernel gives every byte back. */
        bl_model *m = NULL;
        bl_error err = {0};
        if (bl_model_create_falandays(inits, 8, BL_FLOAT32, &m, &err) != BL_OK)
            fail_msg("create: %s", err.msg);
        assert_int_equal(bl_falandays_bytes(m), b8);
        assert_int_equal(bl_falandays_set_reference_kernel(m, true), BL_OK);
        assert_true(bl_falandays_bytes(m) >= b8 + 8 * n * n * rs);
        assert_int_equal(bl_falandays_set_reference_kernel(m, false), BL_OK);
        assert_int_equal(bl_falandays_bytes(m), b8);
        bl_model_destroy(m);

        /* Separate wirings of the same bytes are not shared; pointers are
         * the identity. */
        bl_falandays_init *a2 = copy_init(a, &c, 99);
        const bl_falandays_init *two[2] = {a, a2}, *same[2] = {a, a};
        assert_true(bytes_of(two, 2, BL_FLOAT32) > bytes_of(same, 2, BL_FLOAT32));

        /* A wiring with a non-zero weight outside its mask keeps its
         * initial weights and its slots' weights dense; others do not. */
        for (size_t k = 0; k < n * n; k++)
            if (a2->recurrent_mask[k] == 0.0) {
                a2->weights[k] = 0.5;
                break;
            }
        const bl_falandays_init *mixed[3] = {a, a, a2}, *plain[3] = {a, a, a};
        const size_t dense = bytes_of(mixed, 3, BL_FLOAT32), sparse = bytes_of(plain, 3, BL_FLOAT32);
        assert_true(dense >= sparse + 2 * n * n * rs);
        assert_true(dense < sparse + 3 * n * n * rs);
        bl_falandays_init_destroy(a2);
        bl_falandays_init_destroy(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
