/* SORN storage (src/models/sorn_batch.c): a slot owns only what changes;
 * wirings and initial weights are shared by slots equal bit for bit, and
 * dense weights are made per slot only when it needs them.
 *
 * Pinned here, for both dtypes and every layout a slot can be in (lanes of
 * a shared wiring, a slot sharing the wiring by content with initial
 * weights of its own and -0 outside the mask, a slot of its own wiring, a
 * hand-made slot with non-zero weights outside the mask that starts dense,
 * and all of them on the reference kernel):
 *   - a snapshot at creation, and after stepping, freezing and a reset, is
 *     the initial state itself cast to the dtype, bit for bit (signed
 *     zeros included): an oracle independent of the layouts;
 *   - snapshots change nothing: a batch snapshotted after every operation
 *     ends bit for bit where an identical batch never snapshotted does;
 *   - memory: at float32 N = 256 and 1024 a slot of a shared wiring costs
 *     at most 1.5 × (its compressed synapses + O(N)), whether its slots
 *     share one initial-state pointer or equal copies of it. */
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/sorn_internal.h"
#include "model_support.h"
#include "support.h"

/* The heap is measured by AddressSanitizer's allocator where it replaces
 * malloc, else by glibc's mallinfo2. */
#if defined(__SANITIZE_ADDRESS__)
#define STORE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STORE_ASAN 1
#endif
#endif
#ifdef STORE_ASAN
/* Declared by <sanitizer/allocator_interface.h>, which Debian's gcc does
 * not install; libasan exports it. */
size_t __sanitizer_get_current_allocated_bytes(void);
#elif !defined(__GLIBC__) || __GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 33)
#error "test_sorn_store measures the heap with glibc's mallinfo2 (glibc 2.33 or later)"
#endif

enum { NSLOTS = 6, R = 3, E = 2 };

/* The value v as the batch stores it, back as a double. */
static double cast(double v, bl_dtype dt) { return dt == BL_FLOAT32 ? (double)(float)v : v; }

static void copy(double *dst, const double *src, size_t count)
{
    memcpy(dst, src, count * sizeof *dst);
}

/* A copy of `base` sharing its wiring, with initial weights of its own
 * (signed zeros inside, -0 outside the mask) or, `unmasked`, non-zero
 * weights outside the mask too. */
static bl_sorn_init *variant(bl_gen *g, const bl_sorn_init *base, bool unmasked)
{
    bl_sorn_init *in = NULL;
    bl_error err;
    assert_int_equal(bl_sorn_init_create(&base->config, base->n, base->r, base->e, &in, &err),
                     BL_OK);
    const size_t ne = base->n_e, ni = base->n - base->n_e;
    /* Everything but w_ee as in base: the wiring and the initial states. */
    const struct {
        double *to;
        const double *from;
        size_t count;
    } same[] = {
        {in->ee_mask, base->ee_mask, ne * ne},  {in->c_e, base->c_e, ne},
        {in->w_ei, base->w_ei, ne * ni},        {in->w_ie, base->w_ie, ni * ne},
        {in->w_eu, base->w_eu, ne * base->r},   {in->output_mask, base->output_mask, base->e * ne},
        {in->t_i, base->t_i, ni},               {in->t_e, base->t_e, ne},
        {in->x, base->x, ne},                   {in->y, base->y, ni},
    };
    for (size_t k = 0; k < sizeof same / sizeof *same; k++)
        copy(same[k].to, same[k].from, same[k].count);
    for (size_t k = 0; k < ne * ne; k++) {
        if (base->ee_mask[k] != 0)
            in->w_ee[k] = bl_test_uni(g) < 0.1 ? -0.0 : 0.4 * bl_test_uni(g);
        else if (unmasked && bl_test_uni(g) < 0.2)
            in->w_ee[k] = bl_test_uni(g) - 0.5;
        else
            in->w_ee[k] = bl_test_uni(g) < 0.5 ? -0.0 : 0.0;
    }
    return in;
}

/* Every key of slot b that an initial state fixes, against `in` cast to
 * the dtype, bit for bit. */
static void expect_initial(const bl_model *m, size_t b, const bl_sorn_init *in, bl_dtype dt,
                           const char *what)
{
    const size_t ne = in->n_e, ni = in->n - in->n_e;
    const struct {
        const char *key;
        const double *want;
        size_t count;
    } keys[] = {
        {"w_ee", in->w_ee, ne * ne},     {"ee_mask", in->ee_mask, ne * ne},
        {"c_e", in->c_e, ne},            {"w_ei", in->w_ei, ne * ni},
        {"w_ie", in->w_ie, ni * ne},     {"w_eu", in->w_eu, ne * in->r},
        {"output_mask", in->output_mask, in->e * ne},
        {"t_e", in->t_e, ne},            {"t_i", in->t_i, ni},
        {"x", in->x, ne},                {"y", in->y, ni},
        {"prev_x", in->x, ne},           {"prev_y", in->y, ni},
    };
    bl_snapshot *s = bl_test_snap(m, b);
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const double *got = bl_test_sget(s, keys[k].key);
        for (size_t v = 0; v < keys[k].count; v++)
            if (bl_test_bits(got[v]) != bl_test_bits(cast(keys[k].want[v], dt))) {
                print_error("%s slot %zu %s[%zu]: %a, initial %a\n", what, b, keys[k].key, v,
                            got[v], keys[k].want[v]);
                fail();
            }
    }
    const double *drive = bl_test_sget(s, "drive");
    for (size_t v = 0; v < in->n; v++)
        bl_test_assert_bits(drive[v], 0.0, "drive after a reset");
    bl_snapshot_destroy(s);
}

/* The slots of one batch: 0, 1, 3 one constructed state (lanes of a shared
 * wiring), 2 a copy with initial weights of its own (-0 outside the mask),
 * 4 another wiring (rows of its own), 5 a copy with non-zero weights
 * outside the mask (dense until its first plastic frame). */
typedef struct cast_of {
    bl_sorn_init *base, *other, *own, *unmasked;
    const bl_sorn_init *inits[NSLOTS];
} cast_of;

static void cast_make(bl_gen *g, cast_of *c)
{
    bl_error err;
    bl_sorn_config cfg;
    bl_sorn_config_default(&cfg);
    cfg.p_ee = 0.15;
    cfg.eta_stdp = 0.02;
    cfg.eta_ip = 0.01;
    assert_int_equal(bl_sorn_construct(&cfg, 70, R, E, g, &c->base, &err), BL_OK);
    assert_int_equal(bl_sorn_construct(&cfg, 70, R, E, g, &c->other, &err), BL_OK);
    c->own = variant(g, c->base, false);
    c->unmasked = variant(g, c->base, true);
    const bl_sorn_init *in[NSLOTS] = {c->base, c->base, c->own, c->base, c->other, c->unmasked};
    memcpy(c->inits, in, sizeof in);
}

static void cast_free(cast_of *c)
{
    bl_sorn_init_destroy(c->base);
    bl_sorn_init_destroy(c->other);
    bl_sorn_init_destroy(c->own);
    bl_sorn_init_destroy(c->unmasked);
}

/* Inputs of frame f for every slot: varied, zero now and then. */
static void inputs(bl_gen *g, double *u)
{
    for (size_t v = 0; v < NSLOTS * R; v++)
        u[v] = bl_test_uni(g) < 0.3 ? 0.0 : 2.0 * bl_test_uni(g);
}

static void snapshot_is_initial(bl_dtype dt)
{
    bl_gen g;
    bl_test_gen_seeded(&g, 1701);
    cast_of c;
    cast_make(&g, &c);
    for (int reference = 0; reference < 2; reference++) {
        bl_model *m = NULL;
        bl_error err;
        assert_int_equal(bl_model_create_sorn(c.inits, NSLOTS, dt, &m, &err), BL_OK);
        if (reference)
            assert_true(bl_sorn_set_reference_kernel(m, true));
        for (size_t b = 0; b < NSLOTS; b++)
            expect_initial(m, b, c.inits[b], dt, "creation");
        double u[NSLOTS * R];
        for (size_t f = 0; f < 30; f++) {
            inputs(&g, u);
            bl_test_step(m, u, NULL, NULL);
            if (f == 12) {
                /* Slot 1 keeps learning. */
                const int32_t frozen[NSLOTS] = {1, 0, 1, 1, 1, 1};
                bl_test_freeze(m, frozen, false);
            }
        }
        /* The frames moved every slot's weights (so the reset has work). */
        for (size_t b = 0; b < NSLOTS; b++) {
            bl_snapshot *s = bl_test_snap(m, b);
            const double *w = bl_test_sget(s, "w_ee");
            size_t moved = 0;
            for (size_t v = 0; v < c.inits[b]->n_e * c.inits[b]->n_e; v++)
                moved += bl_test_bits(w[v]) != bl_test_bits(cast(c.inits[b]->w_ee[v], dt));
            assert_true(moved > 0);
            bl_snapshot_destroy(s);
        }
        const int32_t all[NSLOTS] = {1, 1, 1, 1, 1, 1};
        bl_test_reset(m, all);
        for (size_t b = 0; b < NSLOTS; b++)
            expect_initial(m, b, c.inits[b], dt, reference ? "reference reset" : "reset");
        bl_sorn_paths p;
        bl_sorn_path_counts(m, &p);
        if (reference) {
            assert_true(p.reference > 0 && p.lanes == 0 && p.sparse == 0);
        } else {
            /* Every layout stepped: lanes, own rows, and the dense slot. */
            assert_true(p.lanes > 0 && p.sparse > 0 && p.canonical > 0 && p.to_sparse > 0);
        }
        bl_model_destroy(m);
    }
    cast_free(&c);
}

BL_TEST_PER_DTYPE(test_snapshot_is_initial, snapshot_is_initial)

static void snapshots_change_nothing(bl_dtype dt)
{
    bl_gen g;
    bl_test_gen_seeded(&g, 1702);
    cast_of c;
    cast_make(&g, &c);
    bl_model *looked = NULL, *plain = NULL;
    bl_error err;
    assert_int_equal(bl_model_create_sorn(c.inits, NSLOTS, dt, &looked, &err), BL_OK);
    assert_int_equal(bl_model_create_sorn(c.inits, NSLOTS, dt, &plain, &err), BL_OK);
    double u[NSLOTS * R];
    int32_t act[NSLOTS];
    for (size_t f = 0; f < 60; f++) {
        inputs(&g, u);
        for (size_t b = 0; b < NSLOTS; b++)
            act[b] = bl_test_uni(&g) < 0.85;
        const double op = bl_test_uni(&g);
        bl_model *both[2] = {looked, plain};
        for (int k = 0; k < 2; k++) {
            if (op < 0.05)
                bl_test_reset(both[k], act);
            else if (op < 0.1)
                bl_test_freeze(both[k], act, op < 0.07);
            else
                bl_test_step(both[k], u, NULL, act);
        }
        /* Two snapshots in a row agree, and leave the batch as it was. */
        for (size_t b = 0; b < NSLOTS; b++) {
            bl_snapshot *s = bl_test_snap(looked, b), *t = bl_test_snap(looked, b);
            bl_test_assert_snap_identical(s, t, "two snapshots in a row");
            bl_snapshot_destroy(s);
            bl_snapshot_destroy(t);
        }
    }
    for (size_t b = 0; b < NSLOTS; b++) {
        bl_snapshot *s = bl_test_snap(looked, b), *t = bl_test_snap(plain, b);
        bl_test_assert_snap_identical(s, t, "snapshotted batch against the other");
        bl_snapshot_destroy(s);
        bl_snapshot_destroy(t);
    }
    bl_model_destroy(looked);
    bl_model_destroy(plain);
    cast_free(&c);
}

BL_TEST_PER_DTYPE(test_snapshots_change_nothing, snapshots_change_nothing)

/* Bytes the allocator hands out now. */
static double heap_bytes(void)
{
#ifdef STORE_ASAN
    return (double)__sanitizer_get_current_allocated_bytes();
#else
    const struct mallinfo2 mi = mallinfo2();
    return (double)mi.uordblks + (double)mi.hblkhd;
#endif
}

/* Heap of a float32 batch of nb slots of `in`: every slot the same pointer,
 * or (copies) each its own equal copy. */
static double batch_bytes(const bl_sorn_init *in, size_t nb, bool copies)
{
    const bl_sorn_init *inits[16];
    bl_sorn_init *own[16] = {0};
    BL_ASSERT(nb <= 16);
    bl_gen g;
    bl_test_gen_seeded(&g, 1);
    for (size_t b = 0; b < nb; b++) {
        inits[b] = in;
        if (copies) {
            own[b] = variant(&g, in, false);
            copy(own[b]->w_ee, in->w_ee, in->n_e * in->n_e);
            inits[b] = own[b];
        }
    }
    bl_model *m = NULL;
    bl_error err;
    const double before = heap_bytes();
    assert_int_equal(bl_model_create_sorn(inits, nb, BL_FLOAT32, &m, &err), BL_OK);
    const double bytes = heap_bytes() - before;
    bl_model_destroy(m);
    for (size_t b = 0; b < nb; b++)
        bl_sorn_init_destroy(own[b]);
    return bytes;
}

static void test_memory_per_slot(void **state)
{
    (void)state;
    static const size_t ns[] = {256, 1024};
    for (size_t t = 0; t < 2; t++) {
        const size_t n = ns[t];
        bl_gen g;
        bl_test_gen_seeded(&g, 1703);
        bl_sorn_config cfg;
        bl_sorn_config_default(&cfg);
        bl_sorn_init *in = NULL;
        bl_error err;
        assert_int_equal(bl_sorn_construct(&cfg, n, R, E, &g, &in, &err), BL_OK);
        size_t nnz = 0;
        for (size_t k = 0; k < in->n_e * in->n_e; k++)
            nnz += in->ee_mask[k] != 0;
        /* Compressed synapses: a weight and a mask bit (a lane mask of the
         * dtype's width) each; O(N): 16 values per node. */
        const double rs = sizeof(float);
        const double bound = 1.5 * ((double)(2 * nnz) * rs + 16.0 * (double)n * rs);
        const double b8 = batch_bytes(in, 8, false), b16 = batch_bytes(in, 16, false);
        const double copies = batch_bytes(in, 16, true);
        const double marginal = (b16 - b8) / 8.0;
        printf("sorn float32 N=%zu: %zu synapses, bound %.0f B/slot; B=16 %.0f B/slot "
               "(equal copies %.0f), each further slot %.0f B\n",
               n, nnz, bound, b16 / 16.0, copies / 16.0, marginal);
        assert_true(marginal > 0 && marginal <= bound);
        assert_true(b16 / 16.0 <= bound);
        /* Equal copies share as one pointer does. A wiring per copy would
         * cost each slot its own (about 3.5 times a shared slot at N = 256),
         * so 5 % leaves room only for the allocator's bookkeeping, which
         * differs with the order of the batch's allocations. */
        assert_true(copies <= b16 * 1.05);
        /* Far below one dense N_E x N_E array of the dtype per slot. */
        assert_true(marginal < (double)(in->n_e * in->n_e) * rs);
        bl_sorn_init_destroy(in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_is_initial_float64),
        cmocka_unit_test(test_snapshot_is_initial_float32),
        cmocka_unit_test(test_snapshots_change_nothing_float64),
        cmocka_unit_test(test_snapshots_change_nothing_float32),
        cmocka_unit_test(test_memory_per_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
