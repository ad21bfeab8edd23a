#include "model_support.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

void *bl_test_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    assert_non_null(p);
    return p;
}

/* ---- model calls -------------------------------------------------------- */

void *bl_test_to_dtype(const bl_model *m, const double *src, size_t count)
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
    void *ub = bl_test_to_dtype(m, u, nb * nr), *xb = bl_test_to_dtype(m, xi, nb * n);
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

bl_model *bl_test_created(bl_status st, bl_model *m, const bl_error *err)
{
    if (st != BL_OK)
        fail_msg("create: %s", err->msg);
    assert_non_null(m);
    return m;
}

void bl_test_expect_create_failed(bl_status st, const bl_model *m, const bl_error *err,
                                  const char *needle)
{
    assert_int_equal(st, BL_EVALUE);
    assert_null(m);
    if (!strstr(err->msg, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err->msg, needle);
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

double bl_test_get(const void *buf, bl_dtype dt, size_t k)
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

void bl_test_random_op(bl_model *m, bl_gen *g, int32_t *active, size_t nslots, bl_test_op which,
                       const char *what)
{
    for (size_t b = 0; b < nslots; b++)
        active[b] = bl_test_uni(g) < 0.5 ? 1 : 0;
    bl_error err = {0};
    bl_status rc = which == BL_TEST_RESET ? bl_model_reset(m, active, nslots, &err)
                   : which == BL_TEST_FREEZE_WEIGHTS
                       ? bl_model_freeze_weights(m, active, nslots, &err)
                       : bl_model_freeze_plasticity(m, active, nslots, &err);
    if (rc != BL_OK)
        fail_msg("%s: operation %d: %s", what, (int)which, err.msg);
}

void bl_test_check_view(const void *view, bl_dtype dtype, size_t b, size_t cnt,
                        const double *want, bool nan_equiv, const char *view_name,
                        const char *what, size_t frame)
{
    for (size_t i = 0; i < cnt; i++)
        if (!bl_test_same(bl_test_get(view, dtype, b * cnt + i), want[i], nan_equiv))
            fail_msg("%s: frame %zu: slot %zu live %s %zu differs", what, frame, b, view_name,
                     i);
}

/* ---- hand-made initial states --------------------------------------------- */

/* Zero arrays, signs +1, targets at targ_min: the adapter's defaults. */
bl_falandays_init *bl_test_falandays_init_create(size_t n, size_t r, size_t e,
                                              const bl_falandays_config *c)
{
    bl_falandays_init *in = bl_test_xcalloc(1, sizeof *in);
    if (c)
        in->config = *c;
    else
        bl_falandays_config_default(&in->config);
    in->n = n;
    in->r = r;
    in->e = e;
    in->weights = bl_test_xcalloc(n * n, sizeof(double));
    in->recurrent_mask = bl_test_xcalloc(n * n, sizeof(double));
    in->input_weights = bl_test_xcalloc(n * r, sizeof(double));
    in->output_mask = bl_test_xcalloc(n * e, sizeof(double));
    in->signs = bl_test_xcalloc(n, sizeof(int32_t));
    in->acts = bl_test_xcalloc(n, sizeof(double));
    in->targets = bl_test_xcalloc(n, sizeof(double));
    in->spikes = bl_test_xcalloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        in->signs[i] = 1;
        in->targets[i] = in->config.targ_min;
    }
    return in;
}

void bl_test_falandays_init_destroy(bl_falandays_init *in)
{
    if (!in)
        return;
    free(in->weights);
    free(in->recurrent_mask);
    free(in->input_weights);
    free(in->output_mask);
    free(in->signs);
    free(in->acts);
    free(in->targets);
    free(in->spikes);
    free(in);
}

/* Every array zero; the arrays of an empty inhibitory population are NULL,
 * as model.h allows. */
bl_sorn_init *bl_test_sorn_init_create(size_t n, size_t r, size_t e, size_t n_e,
                                    const bl_sorn_config *c)
{
    bl_sorn_init *in = bl_test_xcalloc(1, sizeof *in);
    if (c)
        in->config = *c;
    else
        bl_sorn_config_default(&in->config);
    const size_t ni = n - n_e;
    in->n = n;
    in->r = r;
    in->e = e;
    in->n_e = n_e;
    in->w_ee = bl_test_xcalloc(n_e * n_e, sizeof(double));
    in->ee_mask = bl_test_xcalloc(n_e * n_e, sizeof(double));
    in->c_e = bl_test_xcalloc(n_e, sizeof(double));
    in->w_eu = bl_test_xcalloc(n_e * r, sizeof(double));
    in->output_mask = bl_test_xcalloc(e * n_e, sizeof(double));
    in->t_e = bl_test_xcalloc(n_e, sizeof(double));
    in->x = bl_test_xcalloc(n_e, sizeof(double));
    if (ni) {
        in->w_ei = bl_test_xcalloc(n_e * ni, sizeof(double));
        in->w_ie = bl_test_xcalloc(ni * n_e, sizeof(double));
        in->t_i = bl_test_xcalloc(ni, sizeof(double));
        in->y = bl_test_xcalloc(ni, sizeof(double));
    }
    return in;
}

void bl_test_sorn_init_destroy(bl_sorn_init *in)
{
    if (!in)
        return;
    free(in->w_ee);
    free(in->ee_mask);
    free(in->c_e);
    free(in->w_ei);
    free(in->w_ie);
    free(in->w_eu);
    free(in->output_mask);
    free(in->t_e);
    free(in->t_i);
    free(in->x);
    free(in->y);
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

bl_gen bl_test_gen_state(const bl_gen *g)
{
    bl_gen before;
    memset(&before, 0, sizeof before);
    if (g)
        before = *g;
    return before;
}

void bl_test_expect_rejected(bl_status st, const bl_error *err, const void *out,
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
