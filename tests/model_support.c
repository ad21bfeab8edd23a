#include "model_support.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "oracle/falandays_oracle.h"
#include "oracle/sorn_oracle.h"
#include "support.h"

void *bl_test_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    assert_non_null(p);
    return p;
}

/* ---- model calls -------------------------------------------------------- */

/* count doubles as a buffer of the model dtype (src NULL: zeros); free it. */
static void *to_dtype(const bl_model *m, const double *src, size_t count)
{
    bool f32 = bl_model_dtype(m) == BL_FLOAT32;
    void *buf = bl_test_xcalloc(count, f32 ? sizeof(float) : sizeof(double));
    for (size_t k = 0; k < count && src; k++) {
        if (f32)
            ((float *)buf)[k] = (float)src[k];
        else
            ((double *)buf)[k] = src[k];
    }
    return buf;
}

void bl_test_step(bl_model *m, const double *u, const double *xi, const int32_t *active)
{
    size_t nb = bl_model_slots(m), nr = bl_model_receptors(m), n = bl_model_nodes(m);
    void *ub = to_dtype(m, u, nb * nr), *xb = to_dtype(m, xi, nb * n);
    int32_t *all = bl_test_xcalloc(nb, sizeof *all);
    for (size_t b = 0; b < nb; b++)
        all[b] = 1;
    bl_matrix mu = {bl_model_dtype(m), nb, nr, ub}, mx = {bl_model_dtype(m), nb, n, xb};
    bl_error err = {0};
    if (bl_model_step(m, &mu, &mx, active ? active : all, nb, &err) != BL_OK)
        fail_msg("step: %s", err.msg);
    free(ub);
    free(xb);
    free(all);
}

void bl_test_reset(bl_model *m, const int32_t *active)
{
    bl_error err = {0};
    if (bl_model_reset(m, active, bl_model_slots(m), &err) != BL_OK)
        fail_msg("reset: %s", err.msg);
}

void bl_test_freeze(bl_model *m, const int32_t *active, bool all)
{
    bl_error err = {0};
    bl_status st = all ? bl_model_freeze_plasticity(m, active, bl_model_slots(m), &err)
                       : bl_model_freeze_weights(m, active, bl_model_slots(m), &err);
    if (st != BL_OK)
        fail_msg("freeze: %s", err.msg);
}

bl_snapshot *bl_test_snap(const bl_model *m, size_t slot)
{
    bl_snapshot *s = NULL;
    bl_error err = {0};
    if (bl_model_snapshot(m, slot, &s, &err) != BL_OK)
        fail_msg("snapshot: %s", err.msg);
    return s;
}

const double *bl_test_sget(const bl_snapshot *s, const char *name)
{
    const bl_snapshot_array *a = bl_snapshot_get(s, name);
    if (!a)
        fail_msg("snapshot lacks %s", name);
    return a->data;
}

size_t bl_test_values_of(const bl_snapshot_array *a) { return a->shape[0] * a->shape[1]; }

void bl_test_assert_snap_identical(const bl_snapshot *a, const bl_snapshot *b, const char *what)
{
    assert_int_equal(a->count, b->count);
    for (size_t k = 0; k < a->count; k++) {
        const bl_snapshot_array *x = &a->arrays[k], *y = &b->arrays[k];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->ndim, y->ndim);
        assert_int_equal(x->shape[0], y->shape[0]);
        assert_int_equal(x->shape[1], y->shape[1]);
        assert_int_equal(x->integer, y->integer);
        if (memcmp(x->data, y->data, bl_test_values_of(x) * sizeof(double)) != 0)
            fail_msg("%s: key %s differs", what, x->name);
    }
}

void bl_test_assert_bits(double got, double want, const char *what)
{
    if (bl_test_bits(got) != bl_test_bits(want))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* The model of a create call that must succeed (else the test fails with
 * its message). */
static bl_model *created(bl_status st, bl_model *m, const bl_error *err)
{
    if (st != BL_OK)
        fail_msg("create: %s", err->msg);
    assert_non_null(m);
    return m;
}

/* A create call that must fail with ValueError naming needle, leaving
 * *out NULL (m). */
static void expect_create_failed(bl_status st, const bl_model *m, const bl_error *err,
                                  const char *needle)
{
    assert_int_equal(st, BL_EVALUE);
    assert_null(m);
    if (!strstr(err->msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err->msg, needle);
}

/* ---- the two families: shared property checks ---------------------------- */

static bl_status create_falandays(const void *inits, size_t nslots, bl_dtype dtype,
                                  bl_model **out, bl_error *err)
{
    return bl_model_create_falandays((const bl_falandays_init *const *)inits, nslots, dtype, out,
                                     err);
}

static bl_status create_sorn(const void *inits, size_t nslots, bl_dtype dtype, bl_model **out,
                             bl_error *err)
{
    return bl_model_create_sorn((const bl_sorn_init *const *)inits, nslots, dtype, out, err);
}

static void step_falandays(bl_model *m, const double *u, const int32_t *active)
{
    bl_test_step(m, u, NULL, active);
}

/* The noise is junk: SORN must ignore it. */
static void step_sorn(bl_model *m, const double *u, const int32_t *active)
{
    size_t n = bl_model_slots(m) * bl_model_nodes(m);
    double *junk = bl_test_xcalloc(n, sizeof(double));
    for (size_t k = 0; k < n; k++)
        junk[k] = k % 2 ? NAN : 1e30;
    bl_test_step(m, u, junk, active);
    free(junk);
}

static bl_status construct_falandays(const void *config, size_t n, size_t r, size_t e,
                                     bl_gen *g, void **out, bl_error *err)
{
    bl_falandays_init *s = *out;
    bl_status st = bl_falandays_construct(config, n, r, e, g, &s, err);
    *out = s;
    return st;
}

static bl_status construct_sorn(const void *config, size_t n, size_t r, size_t e, bl_gen *g,
                                void **out, bl_error *err)
{
    bl_sorn_init *s = *out;
    bl_status st = bl_sorn_construct(config, n, r, e, g, &s, err);
    *out = s;
    return st;
}

static void destroy_falandays(void *init) { bl_falandays_init_destroy(init); }

static void destroy_sorn(void *init) { bl_sorn_init_destroy(init); }

static void hand_destroy_falandays(void *init) { bl_test_falandays_init_destroy(init); }

static void hand_destroy_sorn(void *init) { bl_test_sorn_init_destroy(init); }

const bl_test_family bl_test_falandays_family = {
    BL_MODEL_FALANDAYS, create_falandays,  step_falandays, construct_falandays,
    destroy_falandays,  hand_destroy_falandays};
const bl_test_family bl_test_sorn_family = {BL_MODEL_SORN, create_sorn,  step_sorn,
                                            construct_sorn, destroy_sorn, hand_destroy_sorn};

bl_model *bl_test_family_create(const bl_test_family *f, const void *inits, size_t nslots,
                                bl_dtype dtype)
{
    bl_model *m = NULL;
    bl_error err = {0};
    bl_status st = f->create(inits, nslots, dtype, &m, &err);
    return created(st, m, &err);
}

void bl_test_family_create_fails(const bl_test_family *f, const void *inits, size_t nslots,
                                 bl_dtype dtype, const char *needle)
{
    bl_model *m = (bl_model *)&m; /* must be cleared on failure */
    bl_error err = {0};
    bl_status st = f->create(inits, nslots, dtype, &m, &err);
    expect_create_failed(st, m, &err, needle);
}

void bl_test_expect_allocation_failures(const bl_test_family *f, const void *inits,
                                        bl_dtype dtype)
{
    bl_alloc_fail_at(0);
    bl_model *m = bl_test_family_create(f, inits, 2, dtype);
    /* First the creation, then a snapshot of slot 1: each allocation that
     * a clean call makes fails in turn. */
    for (int snap = 0; snap < 2; snap++) {
        bl_snapshot *ref = NULL;
        if (snap) {
            bl_alloc_fail_at(0);
            ref = bl_test_snap(m, 1);
        }
        long total = bl_alloc_count();
        assert_true(total > 1);
        for (long k = 1; k <= total; k++) {
            bl_model *x = (bl_model *)&x;  /* each must come back NULL */
            bl_snapshot *s = (bl_snapshot *)&s;
            bl_error err = {0};
            bl_alloc_fail_at(k);
            bl_status st = snap ? bl_model_snapshot(m, 1, &s, &err)
                                : f->create(inits, 2, dtype, &x, &err);
            bl_alloc_fail_at(0);
            assert_int_equal(st, BL_ENOMEM);
            assert_null(snap ? (void *)s : (void *)x);
            assert_int_equal(err.status, BL_ENOMEM);
        }
        bl_snapshot_destroy(ref);
    }
    bl_model_destroy(m);
}

void bl_test_expect_full_reset(const bl_test_family *f, bl_model *m, const double *u,
                               const char *moved)
{
    size_t nb = bl_model_slots(m);
    int32_t *all = bl_test_xcalloc(nb, sizeof *all);
    for (size_t b = 0; b < nb; b++)
        all[b] = 1;
    bl_snapshot *s[3]; /* at creation, after the frames, after the reset */
    s[0] = bl_test_snap(m, 0);
    f->step(m, u, NULL);
    bl_test_freeze(m, all, true);
    f->step(m, u, NULL);
    s[1] = bl_test_snap(m, 0);
    assert_false(bl_test_same_key(s[1], s[0], moved));
    bl_test_reset(m, all);
    s[2] = bl_test_snap(m, 0);
    bl_test_assert_snap_identical(s[2], s[0], "full reset");
    for (size_t k = 0; k < 3; k++)
        bl_snapshot_destroy(s[k]);
    free(all);
}

static void expect_step_rejected(bl_model *m, const bl_matrix *u, const bl_matrix *x,
                                 const int32_t *active, size_t nactive, const char *needle)
{
    bl_error err = {0};
    assert_int_equal(bl_model_step(m, u, x, active, nactive, &err), BL_EVALUE);
    if (!strstr(err.msg, needle))
        fail_msg("step (inputs %zux%zu, noise %zux%zu, %zu active): \"%s\" lacks \"%s\"",
                 u->rows, u->cols, x->rows, x->cols, nactive, err.msg, needle);
}

void bl_test_expect_call_contracts(const bl_test_family *f, bl_model *m, bl_dtype dt,
                                   size_t nodes)
{
    const bl_dtype other = dt == BL_FLOAT64 ? BL_FLOAT32 : BL_FLOAT64;
    assert_int_equal(bl_model_kindof(m), f->kind);
    assert_int_equal(bl_model_dtype(m), dt);
    assert_int_equal(bl_model_slots(m), 2);
    assert_int_equal(bl_model_nodes(m), nodes);
    assert_int_equal(bl_model_receptors(m), 2);
    assert_int_equal(bl_model_effectors(m), 2);
    bl_snapshot *before = bl_test_snap(m, 0);
    /* Room for every shape below, in either dtype. */
    double big[32];
    float bigf[32];
    for (size_t k = 0; k < 32; k++)
        big[k] = bigf[k] = 5;
    assert_true(3 * (nodes + 1) <= 32);
    const void *right = dt == BL_FLOAT32 ? (const void *)bigf : (const void *)big;
    const void *wrong = dt == BL_FLOAT32 ? (const void *)big : (const void *)bigf;
    const int32_t active[3] = {1, 1, 1};
    const size_t n = nodes;
    const struct {
        bl_matrix u, x;
        size_t nactive;
        const int32_t *act;
        const char *needle;
    } cases[] = {
        {{other, 2, 2, wrong}, {dt, 2, n, right}, 2, active, "inputs must match the model dtype"},
        {{dt, 2, 2, right}, {other, 2, n, wrong}, 2, active, "noise must match the model dtype"},
        {{dt, 2, 3, right}, {dt, 2, n, right}, 2, active, "inputs"},
        {{dt, 1, 2, right}, {dt, 2, n, right}, 2, active, "inputs"},
        {{dt, 3, 2, right}, {dt, 3, n, right}, 2, active, "inputs"},
        {{dt, 2, 2, NULL}, {dt, 2, n, right}, 2, active, "inputs"},
        {{dt, 2, 2, right}, {dt, 2, n, right}, 3, active, "active"},
        {{dt, 2, 2, right}, {dt, 2, n, right}, 1, active, "active"},
        {{dt, 2, 2, right}, {dt, 2, n, right}, 2, NULL, "active"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        expect_step_rejected(m, &cases[k].u, &cases[k].x, cases[k].act, cases[k].nactive,
                             cases[k].needle);
    /* Noise of any other width. */
    const bl_matrix u = {dt, 2, 2, right};
    for (size_t w = 1; w <= n + 1; w++) {
        const bl_matrix x = {dt, 2, w, right};
        if (w != n)
            expect_step_rejected(m, &u, &x, active, 2, "noise");
    }
    const bl_matrix x = {dt, 2, n, right};
    bl_error err = {0};
    assert_int_equal(bl_model_step(m, NULL, &x, active, 2, &err), BL_EVALUE);
    assert_int_equal(bl_model_step(m, &u, NULL, active, 2, &err), BL_EVALUE);
    assert_int_equal(bl_model_reset(m, active, 3, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "active"));
    assert_int_equal(bl_model_freeze_weights(m, active, 1, &err), BL_EVALUE);
    assert_int_equal(bl_model_freeze_plasticity(m, NULL, 2, &err), BL_EVALUE);
    bl_snapshot *s = (bl_snapshot *)&s;
    assert_int_equal(bl_model_snapshot(m, 2, &s, &err), BL_EVALUE);
    assert_null(s);
    /* Nothing ran. */
    bl_snapshot *after = bl_test_snap(m, 0);
    bl_test_assert_snap_identical(after, before, "rejected calls");
    bl_snapshot_destroy(before);
    bl_snapshot_destroy(after);
}

/* g's state before a call (all zeros when g is NULL), for
 * expect_rejected. */
static bl_gen gen_state(const bl_gen *g)
{
    bl_gen before;
    memset(&before, 0, sizeof before);
    if (g)
        before = *g;
    return before;
}

/* What a rejected construction must leave: status want, with needle in
 * its message, no initial state (out NULL), and the generator g (if any)
 * in its state `before`, since a rejected construction draws nothing. */
static void expect_rejected(bl_status st, const bl_error *err, const void *out,
                             const bl_gen *before, const bl_gen *g, bl_status want,
                             const char *needle)
{
    if (st != want)
        fail_msg("expected %s containing \"%s\", got %s: %s", bl_status_kind(want), needle,
                 bl_status_kind(st), err->msg);
    assert_null(out);
    assert_int_equal(err->status, want);
    if (!strstr(err->msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err->msg, needle);
    /* A rejected construction draws nothing. */
    if (g)
        assert_memory_equal(before, g, sizeof *before);
}
void *bl_test_construct_ok(const bl_test_family *f, const void *config, size_t n, size_t r,
                           size_t e, bl_gen *g)
{
    void *s = NULL;
    bl_error err = {0};
    if (f->construct(config, n, r, e, g, &s, &err) != BL_OK)
        fail_msg("construct: %s", err.msg);
    assert_non_null(s);
    return s;
}

void bl_test_expect_construct_rejected(const bl_test_family *f, const void *config, size_t n,
                                       size_t r, size_t e, bl_gen *g, bl_status want,
                                       const char *needle)
{
    static char sentinel;
    void *s = &sentinel; /* must come back NULL */
    bl_error err = {0};
    const bl_gen before = gen_state(g);
    bl_status st = f->construct(config, n, r, e, g, &s, &err);
    expect_rejected(st, &err, s, &before, g, want, needle);
}

void bl_test_expect_construct_shapes(const bl_test_family *f, const void *config)
{
    bl_gen g = bl_test_gen_for("shapes");
    const struct {
        size_t n, r, e;
        bool gen;
        bl_status want;
        const char *needle;
    } cases[] = {
        {0, 2, 2, true, BL_EVALUE, "N must be an integer >= 1"},
        {3, 0, 2, true, BL_EVALUE, "R must be an integer >= 1"},
        {3, 2, 0, true, BL_EVALUE, "E must be an integer >= 1"},
        {3, 2, 2, false, BL_ETYPE, "rng"},
        /* Dimensions come before the generator, as in the reference. */
        {0, 2, 2, false, BL_EVALUE, "N must be"},
        /* A network too large to address fails cleanly, allocating nothing. */
        {SIZE_MAX / 2, 1, 1, true, BL_ENOMEM, "too large"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        bl_test_expect_construct_rejected(f, config, cases[k].n, cases[k].r, cases[k].e,
                                          cases[k].gen ? &g : NULL, cases[k].want,
                                          cases[k].needle);
}

long bl_test_construct_allocations(const bl_test_family *f, const void *config, size_t n,
                                   void (*same)(const void *got, const void *want))
{
    bl_gen ref = bl_test_gen_for("alloc");
    void *want = bl_test_construct_ok(f, config, n, 2, 3, &ref);
    long total = -1;
    for (long k = 1; total < 0; k++) {
        bl_gen g = bl_test_gen_for("alloc");
        const bl_gen fresh = g;
        void *s = NULL;
        bl_error err = {0};
        bl_alloc_fail_at(k);
        bl_status st = f->construct(config, n, 2, 3, &g, &s, &err);
        long attempts = bl_alloc_count();
        bl_alloc_fail_at(0);
        if (st == BL_OK) {
            /* No injected failure was reached: the full count is known. */
            assert_true(attempts < k);
            same(s, want);
            assert_memory_equal(&g, &ref, sizeof g);
            f->init_destroy(s);
            total = k - 1;
            continue;
        }
        assert_int_equal(st, BL_ENOMEM);
        assert_int_equal(err.status, BL_ENOMEM);
        assert_null(s);
        /* Nothing is drawn before every allocation has succeeded. */
        assert_memory_equal(&g, &fresh, sizeof g);
    }
    f->init_destroy(want);
    return total;
}

void bl_test_apply_fault(void *config, const bl_test_fault *fault)
{
    for (size_t k = 0; k < fault->count; k++)
        memcpy((char *)config + fault->at[k], &fault->v[k], sizeof(double));
}

void *bl_test_numpy_differential(const bl_test_numpy_run *run, void *ctx)
{
    BL_REQUIRE_NUMPY();
    unsigned char *cases = bl_test_xcalloc(run->count, run->size);
    bl_gen g;
    bl_test_gen_seeded(&g, run->root);
    size_t cap = run->count * 512, len = 0;
    char *req = bl_test_xcalloc(cap, 1);
    for (size_t i = 0; i < run->count; i++) {
        run->make(&g, i, cases + i * run->size);
        len += run->format(req + len, cap - len, cases + i * run->size);
    }
    unsigned char *out = NULL;
    size_t outlen = 0, pos = 0;
    bl_test_numpy(req, &out, &outlen);
    free(req);
    for (size_t i = 0; i < run->count; i++) {
        size_t nbytes = 0;
        const unsigned char *rec = bl_test_numpy_next(out, outlen, &pos, &nbytes);
        run->check(i, cases + i * run->size, rec, nbytes, ctx);
    }
    assert_int_equal(pos, outlen);
    free(out);
    return cases;
}

size_t bl_test_expect_parts(size_t idx, size_t n, size_t r, size_t e, const bl_test_part *parts,
                            size_t count, const unsigned char *rec, size_t off)
{
    char what[128];
    for (size_t p = 0; p < count; p++) {
        snprintf(what, sizeof what, "case %zu (N=%zu R=%zu E=%zu) %s", idx, n, r, e,
                 parts[p].name);
        for (size_t k = 0; k < parts[p].len; k++, off++)
            bl_test_expect_bits(what, k, parts[p].data[k], bl_test_le_double(rec + 8 * off));
    }
    return off;
}

void bl_test_expect_gen_position(size_t idx, bl_gen *g, const unsigned char *rec, size_t off)
{
    char what[64];
    snprintf(what, sizeof what, "case %zu generator position", idx);
    bl_test_expect_bits(what, 0, (double)bl_gen_integers(g, 0, 1000),
                        bl_test_le_double(rec + 8 * off));
    bl_test_expect_bits(what, 1, bl_gen_random(g), bl_test_le_double(rec + 8 * (off + 1)));
}

bl_snapshot *bl_test_expect_as_single(const bl_model *m, size_t b, const bl_model *single)
{
    bl_snapshot *x = bl_test_snap(m, b), *y = bl_test_snap(single, 0);
    bl_test_assert_snap_identical(x, y, "batched slot vs single run");
    assert_int_equal(bl_model_finite(m)[b], bl_model_finite(single)[0]);
    assert_int_equal(bl_model_finite(m)[b], 1);
    bl_snapshot_destroy(y);
    return x;
}

void bl_test_expect_slot_kept(const bl_model *m, size_t b, bl_snapshot *before,
                              const char *what)
{
    bl_snapshot *after = bl_test_snap(m, b);
    bl_test_assert_snap_identical(after, before, what);
    assert_int_equal(bl_model_finite(m)[b], 1);
    bl_snapshot_destroy(before);
    bl_snapshot_destroy(after);
}

void bl_test_expect_layout(const bl_snapshot *s, const bl_test_layout *keys, size_t count)
{
    assert_int_equal(s->count, count);
    for (size_t k = 0; k < count; k++) {
        const bl_snapshot_array *a = &s->arrays[k];
        assert_string_equal(a->name, keys[k].name);
        assert_ptr_equal(bl_snapshot_get(s, keys[k].name), a);
        assert_int_equal(a->ndim, keys[k].ndim);
        assert_int_equal(a->shape[0], keys[k].d0);
        assert_int_equal(a->shape[1], keys[k].d1);
        assert_int_equal(a->integer, keys[k].integer);
    }
}

bool bl_test_same_key(const bl_snapshot *a, const bl_snapshot *b, const char *name)
{
    const bl_snapshot_array *x = bl_snapshot_get(a, name), *y = bl_snapshot_get(b, name);
    assert_non_null(x);
    assert_non_null(y);
    return x->shape[0] == y->shape[0] && x->shape[1] == y->shape[1] &&
           memcmp(x->data, y->data, bl_test_values_of(x) * sizeof(double)) == 0;
}

void bl_test_expect_values(const double *got, const double *want, size_t count,
                           const char *what)
{
    for (size_t k = 0; k < count; k++)
        if (bl_test_bits(got[k]) != bl_test_bits(want[k]))
            fail_msg("%s[%zu]: got %.17g, want %.17g", what, k, got[k], want[k]);
}

void bl_test_expect_key(const bl_snapshot *s, const char *key, const double *want, size_t count,
                        const char *what)
{
    bl_test_expect_values(bl_test_sget(s, key), want, count, what);
}

void bl_test_expect_values_rejected(const bl_test_family *f, const void *inits, bl_dtype dtype,
                                    double *const *arrays, const char *const *names,
                                    size_t count, size_t at, double even, double odd,
                                    const char *format, bool f64_accepts)
{
    for (size_t k = 0; k < count; k++) {
        double keep = arrays[k][at];
        arrays[k][at] = k % 2 ? odd : even;
        char want[96];
        snprintf(want, sizeof want, format, names[k]);
        bl_test_family_create_fails(f, inits, 1, dtype, want);
        if (f64_accepts)
            bl_model_destroy(bl_test_family_create(f, inits, 1, BL_FLOAT64));
        arrays[k][at] = keep;
    }
}

double bl_test_urand(bl_test_trng *g)
{
    g->s ^= g->s << 13;
    g->s ^= g->s >> 7;
    g->s ^= g->s << 17;
    return (double)(g->s >> 11) * 0x1.0p-53;
}

/* ---- generator draws and dtype buffers ---------------------------------- */

double bl_test_uni(bl_gen *g) { return bl_gen_random(g); }

size_t bl_test_pick(bl_gen *g, size_t k) { return (size_t)bl_gen_integers(g, 0, (int64_t)k); }

double bl_test_normal(bl_gen *g) { return bl_gen_standard_normal(g); }

void bl_test_gen_seeded(bl_gen *g, uint64_t seed)
{
    bl_seed s = bl_seed_from_u64(seed);
    bl_gen_init(g, &s);
}

bl_gen bl_test_gen_for(const char *key)
{
    bl_gen g;
    bl_error err = {0};
    bl_key k = BL_KEY_S(key);
    if (bl_gen_for(&g, 0, "development", "construction", &k, 1, &err) != BL_OK)
        fail_msg("bl_gen_for: %s", err.msg);
    return g;
}

size_t bl_test_dtype_size(bl_dtype dt) { return dt == BL_FLOAT64 ? sizeof(double) : sizeof(float); }

void bl_test_put(void *buf, bl_dtype dt, size_t k, double v)
{
    if (dt == BL_FLOAT64)
        ((double *)buf)[k] = v;
    else
        ((float *)buf)[k] = (float)v;
}

static double dtype_get(const void *buf, bl_dtype dt, size_t k)
{
    return dt == BL_FLOAT64 ? ((const double *)buf)[k] : (double)((const float *)buf)[k];
}

bool bl_test_same(double a, double b, bool nan_equiv)
{
    if (nan_equiv && isnan(a) && isnan(b))
        return true;
    return bl_test_bits(a) == bl_test_bits(b);
}

/* ---- differential tests against an oracle ------------------------------- */

const char *bl_test_op_name(bl_test_op which)
{
    return which == BL_TEST_RESET ? "reset"
           : which == BL_TEST_FREEZE_WEIGHTS ? "freeze_weights"
                                             : "freeze_plasticity";
}

void bl_test_apply_op(bl_model *m, bl_test_op which, const int32_t *active, size_t nslots,
                      const char *what)
{
    bl_error err = {0};
    bl_status rc = which == BL_TEST_RESET ? bl_model_reset(m, active, nslots, &err)
                   : which == BL_TEST_FREEZE_WEIGHTS
                       ? bl_model_freeze_weights(m, active, nslots, &err)
                       : bl_model_freeze_plasticity(m, active, nslots, &err);
    if (rc != BL_OK)
        fail_msg("%s: operation %d: %s", what, (int)which, err.msg);
}

/* Draws each of the nslots slots into active with probability 1/2, then
 * applies `which` to those slots of m; the caller applies it to its
 * oracles. */
static void random_op(bl_model *m, bl_gen *g, int32_t *active, size_t nslots, bl_test_op which,
                       const char *what)
{
    for (size_t b = 0; b < nslots; b++)
        active[b] = bl_test_uni(g) < 0.5 ? 1 : 0;
    bl_test_apply_op(m, which, active, nslots, what);
}

/* Slot b's cnt values of a live view (cnt per slot, in dtype) must be
 * want's; a difference fails the test naming the view ("effector"). */
static void check_view(const void *view, bl_dtype dtype, size_t b, size_t cnt,
                        const double *want, bool nan_equiv, const char *view_name,
                        const char *what, size_t frame)
{
    for (size_t i = 0; i < cnt; i++)
        if (!bl_test_same(dtype_get(view, dtype, b * cnt + i), want[i], nan_equiv))
            fail_msg("%s: frame %zu: slot %zu live %s %zu differs", what, frame, b, view_name,
                     i);
}

/* ---- the Falandays fixtures of spec/models.md §8 --------------------------- */

bl_npy *bl_test_fixture(const char *dir, const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "fixtures/%s/%s.npy", dir, name);
    bl_npy *a = NULL;
    bl_error err = {0};
    if (bl_npy_read(bl_test_shared_path(rel), &a, &err) != BL_OK)
        fail_msg("%s", err.msg);
    return a;
}

/* A one-value fixture array. */
static double fixture_scalar(const char *dir, const char *name)
{
    bl_npy *a = bl_test_fixture(dir, name);
    assert_int_equal(a->count, 1);
    double v = bl_npy_get_f64(a, 0);
    bl_npy_destroy(a);
    return v;
}

bl_falandays_init *bl_test_fixture_init(const char *dir, bool dale)
{
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.leak = fixture_scalar(dir, "leak");
    c.lrate_wmat = fixture_scalar(dir, "lrate_wmat");
    c.lrate_targ = fixture_scalar(dir, "lrate_targ");
    c.threshold_mult = fixture_scalar(dir, "threshold_mult");
    c.targ_min = fixture_scalar(dir, "targ_min");
    c.input_weight = fixture_scalar(dir, "input_weight");
    c.weight_init_std = fixture_scalar(dir, "weight_init_std");
    c.membrane_noise = fixture_scalar(dir, "membrane_noise");
    c.noise_gain = fixture_scalar(dir, "noise_gain");
    c.learn_on = fixture_scalar(dir, "learn_on") != 0.0;
    c.rectify = fixture_scalar(dir, "rectify") != 0.0;
    c.axis = dale ? BL_AXIS_DALE : BL_AXIS_UNSIGNED;

    bl_npy *wmat0 = bl_test_fixture(dir, "wmat0"), *mask = bl_test_fixture(dir, "recurrent_mask");
    bl_npy *inw = bl_test_fixture(dir, "input_wmat"), *outm = bl_test_fixture(dir, "output_mask");
    bl_npy *sign = bl_test_fixture(dir, "sign");
    const size_t n = wmat0->shape[0], r = inw->shape[0], e = outm->shape[1];
    bl_falandays_init *in = bl_test_falandays_init_create(n, r, e, &c);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            in->weights[i * n + j] = bl_npy_get_f64(wmat0, j * n + i);
            in->recurrent_mask[i * n + j] = (double)bl_npy_get_i64(mask, j * n + i);
        }
        for (size_t q = 0; q < r; q++)
            in->input_weights[i * r + q] = bl_npy_get_f64(inw, q * n + i);
        for (size_t k = 0; k < e; k++)
            in->output_mask[i * e + k] = bl_npy_get_f64(outm, i * e + k);
        in->signs[i] = (int32_t)bl_npy_get_i64(sign, i);
    }
    bl_npy_destroy(wmat0);
    bl_npy_destroy(mask);
    bl_npy_destroy(inw);
    bl_npy_destroy(outm);
    bl_npy_destroy(sign);
    return in;
}

/* ---- differential batches: a model and an oracle per slot ----------------- */

/* The Falandays snapshot keys of model.h. */
static const char *const falandays_keys[] = {
    "acts",       "targets",         "spikes",         "previous",
    "errors",     "counts",          "weights",        "effectors",
    "finite",     "learning",        "weight_learning", "raw_finite",
    "recurrent_mask", "input_weights", "output_mask",  "signs",
};
static const size_t falandays_nkeys = sizeof falandays_keys / sizeof *falandays_keys;

static void falandays_destroy(void *o) { bl_oracle_falandays_destroy(o); }
static void falandays_step(void *o, const void *in, const void *nz)
{
    bl_oracle_falandays_step(o, in, nz);
}
static void falandays_reset(void *o) { bl_oracle_falandays_reset(o); }
static void falandays_freeze_weights(void *o) { bl_oracle_falandays_freeze_weights(o); }
static void falandays_freeze_plasticity(void *o) { bl_oracle_falandays_freeze_plasticity(o); }

/* The Falandays oracle knows the value count of an array only. */
static bool falandays_get(const void *o, const char *key, double *out, bl_test_layout *layout)
{
    size_t count = bl_oracle_falandays_get(o, key, out);
    *layout = (bl_test_layout){key, -1, count, 1, false};
    return count != 0;
}

static int32_t falandays_finite(const void *o) { return bl_oracle_falandays_finite(o); }

const bl_test_oracle_ops bl_test_falandays_oracle = {
    falandays_keys,
    &falandays_nkeys,
    "spikes",
    falandays_destroy,
    falandays_step,
    {falandays_reset, falandays_freeze_weights, falandays_freeze_plasticity},
    falandays_get,
    falandays_finite,
};

static void sorn_destroy(void *o) { bl_oracle_sorn_destroy(o); }

/* SORN has no noise term (spec/models.md §3.6). */
static void sorn_step(void *o, const void *in, const void *noise)
{
    (void)noise;
    bl_oracle_sorn_step(o, in);
}

static void sorn_reset(void *o) { bl_oracle_sorn_reset(o); }
static void sorn_freeze_weights(void *o) { bl_oracle_sorn_freeze_weights(o); }
static void sorn_freeze_plasticity(void *o) { bl_oracle_sorn_freeze_plasticity(o); }

static bool sorn_get(const void *o, const char *key, double *out, bl_test_layout *layout)
{
    bl_oracle_sorn_shape sh;
    if (!bl_oracle_sorn_get(o, key, out, &sh))
        return false;
    *layout = (bl_test_layout){key, sh.ndim, sh.shape[0], sh.shape[1], sh.integer};
    return true;
}

static int32_t sorn_finite(const void *o) { return bl_oracle_sorn_finite(o); }

const bl_test_oracle_ops bl_test_sorn_oracle = {
    bl_oracle_sorn_keys, &bl_oracle_sorn_nkeys, "activity", sorn_destroy, sorn_step,
    {sorn_reset, sorn_freeze_weights, sorn_freeze_plasticity}, sorn_get, sorn_finite,
};

void bl_test_obatch_init(bl_test_obatch *bt, const bl_test_family *f,
                         const bl_test_oracle_ops *ops,
                         void (*describe)(const bl_test_oslot *sl, char *buf, size_t size),
                         bl_dtype dtype)
{
    memset(bt, 0, sizeof *bt);
    bt->family = f;
    bt->ops = ops;
    bt->describe = describe;
    bt->dtype = dtype;
}

void bl_test_obatch_oracles(bl_test_obatch *bt)
{
    for (size_t b = 0; b < bt->nslots; b++) {
        bl_error err = {0};
        bl_status st;
        if (bt->family->kind == BL_MODEL_FALANDAYS) {
            bl_oracle_falandays *o = NULL;
            st = bl_oracle_falandays_create(bt->slots[b].init, bt->dtype, &o, &err);
            bt->slots[b].orc = o;
        } else {
            bl_oracle_sorn *o = NULL;
            st = bl_oracle_sorn_create(bt->slots[b].init, bt->dtype, &o, &err);
            bt->slots[b].orc = o;
        }
        if (st != BL_OK)
            fail_msg("oracle: %s", err.msg);
    }
}

void bl_test_obatch_buffers(bl_test_obatch *bt, size_t scratch)
{
    bt->scratch = bl_test_xcalloc(scratch, sizeof(double));
    bt->inputs = bl_test_xcalloc(bt->nslots * bt->r, bl_test_dtype_size(bt->dtype));
    bt->noise = bl_test_xcalloc(bt->nslots * bt->n, bl_test_dtype_size(bt->dtype));
    bt->active = bl_test_xcalloc(bt->nslots, sizeof(int32_t));
}

void bl_test_obatch_clear(bl_test_obatch *bt)
{
    for (size_t b = 0; b < bt->nslots; b++) {
        bl_test_oslot *sl = &bt->slots[b];
        bt->ops->destroy(sl->orc);
        (sl->hand ? bt->family->hand_destroy : bt->family->init_destroy)(sl->init);
    }
    bl_model_destroy(bt->model);
    void *const buffers[] = {bt->slots, bt->scratch, bt->inputs, bt->noise, bt->active};
    for (size_t k = 0; k < sizeof buffers / sizeof *buffers; k++)
        free(buffers[k]);
    memset(bt, 0, sizeof *bt);
}

/* Every snapshot key of slot b against the oracle, then the live views. */
static void obatch_compare_slot(bl_test_obatch *bt, size_t b, bool nan_equiv, const char *after)
{
    const bl_test_oracle_ops *ops = bt->ops;
    const void *o = bt->slots[b].orc;
    bl_snapshot *s = NULL;
    bl_error err = {0};
    if (bl_model_snapshot(bt->model, b, &s, &err) != BL_OK)
        fail_msg("%s: snapshot of slot %zu: %s", bt->what, b, err.msg);
    for (size_t k = 0; k < *ops->nkeys; k++)
        if (!bl_snapshot_get(s, ops->keys[k]))
            fail_msg("%s: snapshot lacks key %s", bt->what, ops->keys[k]);
    if (s->count != *ops->nkeys)
        fail_msg("%s: snapshot has %zu keys, expected %zu", bt->what, s->count, *ops->nkeys);
    for (size_t a = 0; a < s->count; a++) {
        const bl_snapshot_array *arr = &s->arrays[a];
        bl_test_layout lay;
        if (!ops->get(o, arr->name, bt->scratch, &lay))
            fail_msg("%s: snapshot key %s is unknown to the oracle", bt->what, arr->name);
        size_t cnt = lay.d0 * lay.d1;
        if (lay.ndim < 0 && bl_test_values_of(arr) != cnt)
            fail_msg("%s: key %s has %zu values, oracle %zu", bt->what, arr->name,
                     bl_test_values_of(arr), cnt);
        if (lay.ndim >= 0 && (arr->ndim != lay.ndim || arr->shape[0] != lay.d0 ||
                              arr->shape[1] != lay.d1 || arr->integer != lay.integer))
            fail_msg("%s: key %s is ndim %d shape %zux%zu integer %d, oracle ndim %d shape "
                     "%zux%zu integer %d",
                     bt->what, arr->name, arr->ndim, arr->shape[0], arr->shape[1],
                     (int)arr->integer, lay.ndim, lay.d0, lay.d1, (int)lay.integer);
        for (size_t i = 0; i < cnt; i++) {
            if (!bl_test_same(arr->data[i], bt->scratch[i], nan_equiv)) {
                char cfg[512];
                bt->describe(&bt->slots[b], cfg, sizeof cfg);
                fail_msg("%s: after %s of frame %zu: slot %zu key %s[%zu]: kernel %.17g "
                         "(%016" PRIx64 "), oracle %.17g (%016" PRIx64 "); slot: %s",
                         bt->what, after, bt->frame, b, arr->name, i, arr->data[i],
                         bl_test_bits(arr->data[i]), bt->scratch[i],
                         bl_test_bits(bt->scratch[i]), cfg);
            }
        }
    }
    bl_snapshot_destroy(s);

    /* The live views must agree with the snapshot's view of the same state. */
    const int32_t *fin = bl_model_finite(bt->model);
    bl_test_layout lay;
    ops->get(o, "effectors", bt->scratch, &lay);
    check_view(bl_model_effector_data(bt->model), bt->dtype, b, lay.d0 * lay.d1,
                       bt->scratch, nan_equiv, "effector", bt->what, bt->frame);
    ops->get(o, ops->activity, bt->scratch, &lay);
    check_view(bl_model_activity_data(bt->model), bt->dtype, b, lay.d0 * lay.d1,
                       bt->scratch, nan_equiv, "activity", bt->what, bt->frame);
    if (fin[b] != ops->finite(o))
        fail_msg("%s: frame %zu: slot %zu live finite %d, oracle %d", bt->what, bt->frame, b,
                 (int)fin[b], (int)ops->finite(o));
}

void bl_test_obatch_compare(bl_test_obatch *bt, bool nan_equiv, const char *after)
{
    for (size_t b = 0; b < bt->nslots; b++)
        obatch_compare_slot(bt, b, nan_equiv, after);
}

/* `which` on a random subset of slots, on both sides, then compares;
 * returns how many slots it touched. */
static size_t obatch_op(bl_test_obatch *bt, bl_gen *g, bl_test_op which)
{
    random_op(bt->model, g, bt->active, bt->nslots, which, bt->what);
    size_t count = 0;
    for (size_t b = 0; b < bt->nslots; b++) {
        if (!bt->active[b])
            continue;
        bt->ops->op[which](bt->slots[b].orc);
        if (which == BL_TEST_RESET)
            bt->slots[b].failed = false;
        count++;
    }
    bl_test_obatch_compare(bt, false, bl_test_op_name(which));
    return count;
}

/* Freezes the weights, freezes plasticity and resets, each with chance
 * 1/odds[op] (bl_test_op), in that order; counts the slots into ops. */
static void obatch_random_ops(bl_test_obatch *bt, bl_gen *g, const size_t odds[3],
                               size_t ops[3])
{
    static const bl_test_op order[] = {BL_TEST_FREEZE_WEIGHTS, BL_TEST_FREEZE_PLASTICITY,
                                       BL_TEST_RESET};
    for (size_t k = 0; k < 3; k++)
        if (bl_test_pick(g, odds[order[k]]) == 0)
            ops[order[k]] += obatch_op(bt, g, order[k]);
}

size_t bl_test_obatch_step(bl_test_obatch *bt, bool nan_equiv,
                           void (*tally)(const bl_test_obatch *bt, size_t b, void *ctx),
                           void *ctx)
{
    bl_matrix in = {bt->dtype, bt->nslots, bt->r, bt->inputs};
    bl_matrix nz = {bt->dtype, bt->nslots, bt->n, bt->noise};
    bl_error err = {0};
    if (bl_model_step(bt->model, &in, &nz, bt->active, bt->nslots, &err) != BL_OK)
        fail_msg("%s: frame %zu: bl_model_step: %s", bt->what, bt->frame, err.msg);
    size_t w = bl_test_dtype_size(bt->dtype);
    for (size_t b = 0; b < bt->nslots; b++) {
        if (!bt->active[b])
            continue;
        bt->ops->step(bt->slots[b].orc, (const char *)bt->inputs + b * bt->r * w,
                      (const char *)bt->noise + b * bt->n * w);
        tally(bt, b, ctx);
    }
    bl_test_obatch_compare(bt, nan_equiv, "step");
    size_t failures = 0;
    for (size_t b = 0; b < bt->nslots; b++) {
        if (bt->active[b] && !bt->ops->finite(bt->slots[b].orc)) {
            bt->slots[b].failed = true;
            failures++;
        }
    }
    return failures;
}

size_t bl_test_obatch_random_frames(bl_test_obatch *bt, bl_gen *g, size_t frames,
                                    const size_t odds[3], size_t ops[3],
                                    void (*fill)(bl_test_obatch *bt, bl_gen *g),
                                    void (*tally)(const bl_test_obatch *bt, size_t b, void *ctx),
                                    void *ctx)
{
    size_t failures = 0;
    bt->frame = 0;
    bl_test_obatch_compare(bt, false, "creation");
    for (size_t t = 0; t < frames; t++) {
        bt->frame = t;
        obatch_random_ops(bt, g, odds, ops);
        for (size_t b = 0; b < bt->nslots; b++)
            bt->active[b] = !bt->slots[b].failed && (t % 5 == 0 || bl_test_uni(g) < 0.8);
        fill(bt, g);
        failures += bl_test_obatch_step(bt, false, tally, ctx);
    }
    return failures;
}

void bl_test_obatch_frame(bl_test_obatch *bt, bl_gen *g, size_t t, double p,
                          void (*fill)(bl_test_obatch *bt, bl_gen *g))
{
    bt->frame = t;
    for (size_t b = 0; b < bt->nslots; b++)
        bt->active[b] = !bt->slots[b].failed && bl_test_uni(g) < p;
    fill(bt, g);
}

size_t bl_test_obatch_reset_failed(bl_test_obatch *bt, bl_gen *g)
{
    int32_t *to_reset = bl_test_xcalloc(bt->nslots, sizeof *to_reset);
    size_t count = 0;
    for (size_t b = 0; b < bt->nslots; b++) {
        if (bt->slots[b].failed && bt->active[b] && bl_test_pick(g, 2) == 0) {
            to_reset[b] = 1;
            count++;
        }
    }
    if (count) {
        bl_test_apply_op(bt->model, BL_TEST_RESET, to_reset, bt->nslots, bt->what);
        for (size_t b = 0; b < bt->nslots; b++) {
            if (!to_reset[b])
                continue;
            bt->ops->op[BL_TEST_RESET](bt->slots[b].orc);
            bt->slots[b].failed = false;
        }
        bl_test_obatch_compare(bt, true, "reset after failure");
        for (size_t b = 0; b < bt->nslots; b++)
            if (to_reset[b])
                assert_int_equal(bl_model_finite(bt->model)[b], 1);
    }
    free(to_reset);
    return count;
}

/* ---- hand-made initial states --------------------------------------------- */

static void free_fields(double **const *fields, size_t count)
{
    for (size_t k = 0; k < count; k++)
        free(*fields[k]);
}

/* The double arrays of a hand-made Falandays state, with their lengths. */
enum { FALANDAYS_ARRAYS = 7 };

static void falandays_arrays(bl_falandays_init *in, double **fields[FALANDAYS_ARRAYS],
                             size_t counts[FALANDAYS_ARRAYS])
{
    const size_t n = in->n;
    double **f[] = {&in->weights, &in->recurrent_mask, &in->input_weights, &in->output_mask,
                    &in->acts,    &in->targets,        &in->spikes};
    const size_t c[] = {n * n, n * n, n * in->r, n * in->e, n, n, n};
    memcpy(fields, f, sizeof f);
    memcpy(counts, c, sizeof c);
}

/* Zero arrays, signs +1, targets at targ_min: the adapter's defaults. */
bl_falandays_init *bl_test_falandays_init_create(size_t n, size_t r, size_t e,
                                              const bl_falandays_config *c)
{
    bl_falandays_init *in = bl_test_xcalloc(1, sizeof *in);
    *in = (bl_falandays_init){.config = *c, .n = n, .r = r, .e = e};
    double **fields[FALANDAYS_ARRAYS];
    size_t counts[FALANDAYS_ARRAYS];
    falandays_arrays(in, fields, counts);
    for (size_t k = 0; k < FALANDAYS_ARRAYS; k++)
        *fields[k] = bl_test_xcalloc(counts[k], sizeof(double));
    in->signs = bl_test_xcalloc(n, sizeof(int32_t));
    for (size_t i = 0; i < n; i++) {
        in->signs[i] = 1;
        in->targets[i] = in->config.targ_min;
    }
    return in;
}

void bl_test_falandays_init_destroy(bl_falandays_init *in)
{
    if (in) {
        free(in->signs);
        double **fields[FALANDAYS_ARRAYS];
        size_t counts[FALANDAYS_ARRAYS];
        falandays_arrays(in, fields, counts);
        free_fields(fields, FALANDAYS_ARRAYS);
    }
    free(in);
}

void bl_test_falandays_random_flags(bl_gen *g, unsigned combo, bl_falandays_config *c)
{
    c->weight_init_mode = (bl_weight_init)bl_test_pick(g, 3);
    c->recurrent_init_scale = bl_test_pick(g, 2) ? 1.0 : 2.0 * bl_test_uni(g);
    c->repair_masks = bl_test_pick(g, 2) != 0;
    c->inhibitory_frac = 0.5 * bl_test_uni(g);
    c->axis = (combo & 1u) ? BL_AXIS_DALE : BL_AXIS_UNSIGNED;
    c->drive = (combo & 2u) ? BL_DRIVE_OOSAWA : BL_DRIVE_NONE;
    c->rectify = (combo & 4u) != 0;
    c->learn_on = (combo & 8u) == 0;
    /* Non-zero gains mostly, also under drive "none", which must ignore
     * them; sometimes zero, which is legal and inert. */
    c->membrane_noise = bl_test_pick(g, 5) ? 0.05 + 0.5 * bl_test_uni(g) : 0.0;
    c->noise_gain = bl_test_pick(g, 5) ? 0.05 + 0.3 * bl_test_uni(g) : 0.0;
}

bl_falandays_config bl_test_tiny_config(void)
{
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.leak = 0.0;
    c.lrate_wmat = 1.0;
    c.lrate_targ = 0.1;
    c.rectify = false;
    return c;
}

bl_falandays_init *bl_test_tiny_init(const bl_falandays_config *c)
{
    bl_falandays_init *in = bl_test_falandays_init_create(2, 2, 2, c);
    in->input_weights[0] = in->input_weights[3] = 1.0;
    in->output_mask[0] = in->output_mask[3] = 1.0;
    return in;
}

/* The arrays of a hand-made SORN state with their lengths: the E arrays
 * first, then the I_ARRAYS of the inhibitory population. */
enum { SORN_ARRAYS = 11, I_ARRAYS = 4 };

static void sorn_arrays(bl_sorn_init *in, double **fields[SORN_ARRAYS],
                        size_t counts[SORN_ARRAYS])
{
    const size_t ne = in->n_e, ni = in->n - in->n_e;
    double **f[] = {&in->w_ee, &in->ee_mask, &in->c_e,  &in->w_eu, &in->output_mask, &in->t_e,
                    &in->x,    &in->w_ei,    &in->w_ie, &in->t_i,  &in->y};
    const size_t c[] = {ne * ne, ne * ne, ne, ne * in->r, in->e * ne, ne, ne,
                        ne * ni, ni * ne, ni, ni};
    memcpy(fields, f, sizeof f);
    memcpy(counts, c, sizeof c);
}

/* Every array zero; the arrays of an empty inhibitory population are NULL,
 * as model.h allows. */
bl_sorn_init *bl_test_sorn_init_create(size_t n, size_t r, size_t e, size_t n_e,
                                    const bl_sorn_config *c)
{
    bl_sorn_init *in = bl_test_xcalloc(1, sizeof *in);
    *in = (bl_sorn_init){.config = *c, .n = n, .r = r, .e = e, .n_e = n_e};
    double **fields[SORN_ARRAYS];
    size_t counts[SORN_ARRAYS];
    sorn_arrays(in, fields, counts);
    const size_t allocated = n > n_e ? SORN_ARRAYS : SORN_ARRAYS - I_ARRAYS;
    for (size_t k = 0; k < allocated; k++)
        *fields[k] = bl_test_xcalloc(counts[k], sizeof(double));
    return in;
}

void bl_test_sorn_init_destroy(bl_sorn_init *in)
{
    if (in) {
        double **fields[SORN_ARRAYS];
        size_t counts[SORN_ARRAYS];
        sorn_arrays(in, fields, counts);
        free_fields(fields, SORN_ARRAYS);
    }
    free(in);
}

/* ---- construction comparisons ------------------------------------------- */

void bl_test_expect_bits(const char *what, size_t i, double c, double ref)
{
    if (bl_test_bits(c) != bl_test_bits(ref))
        fail_msg("%s: element %zu: C %.17g (%016" PRIx64 "), expected %.17g (%016" PRIx64 ")",
                 what, i, c, bl_test_bits(c), ref, bl_test_bits(ref));
}

void bl_test_expect_table(const char *what, const double *a, const double *want, size_t count)
{
    for (size_t k = 0; k < count; k++)
        bl_test_expect_bits(what, k, a[k], want[k]);
}

double bl_test_le_double(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return bl_test_double(v);
}
