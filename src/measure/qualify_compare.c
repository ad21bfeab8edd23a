/* The comparison rules and the ledger of `qualify` (qualify_internal.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "measure_internal.h"
#include "qualify_internal.h"

/* ---- element rules ------------------------------------------------------ */

bool bl_qualify_equal(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

bool bl_qualify_close(double a, double b, double rtol, double atol)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= atol + rtol * fabs(b);
}

bool bl_qualify_identical(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

bool bl_qualify_near_threshold(double margin, double threshold, double rtol, double atol)
{
    return fabs(margin) <= atol + rtol * fabs(threshold);
}

/* ---- margins -------------------------------------------------------------- */

static const double *values(const bl_snapshot *s, const char *name)
{
    const bl_snapshot_array *a = bl_snapshot_get(s, name);
    BL_ASSERT(a); /* the model's own snapshot keys */
    return a->data;
}

void bl_qualify_frame_margins(bl_model_kind kind, double threshold_mult,
                              const bl_snapshot *before, const bl_snapshot *after,
                              double *margin, double *threshold)
{
    if (kind == BL_MODEL_FALANDAYS) {
        const bl_snapshot_array *acts = bl_snapshot_get(after, "acts");
        BL_ASSERT(acts);
        const double *targets = values(before, "targets"), *spikes = values(after, "spikes");
        for (size_t i = 0; i < acts->shape[0]; i++) {
            /* The kernel's θ (models.md §2.5 step 4) and the activation
             * before the subtractive reset of step 8. */
            const double theta = targets[i] * threshold_mult;
            margin[i] = (acts->data[i] + spikes[i] * theta) - theta;
            threshold[i] = theta;
        }
        return;
    }
    const bl_snapshot_array *drive = bl_snapshot_get(after, "drive");
    const bl_snapshot_array *t_e = bl_snapshot_get(before, "t_e");
    const bl_snapshot_array *t_i = bl_snapshot_get(before, "t_i");
    BL_ASSERT(drive && t_e && t_i);
    const size_t n_e = t_e->shape[0];
    for (size_t k = 0; k < drive->shape[0]; k++) {
        margin[k] = drive->data[k]; /* already the distance from the threshold */
        threshold[k] = k < n_e ? t_e->data[k] : t_i->data[k - n_e];
    }
}

void bl_qualify_binary_arrays(bl_model_kind kind, size_t n, size_t n_e, const double *cur,
                              const double *cur_threshold, const double *prev,
                              const double *prev_threshold, bl_qualify_margins *out)
{
    memset(out, 0, sizeof *out);
    if (kind == BL_MODEL_FALANDAYS) {
        out->arrays[0] = (bl_qualify_binary){"spikes", cur, cur_threshold, n};
        out->arrays[1] = (bl_qualify_binary){"previous", prev, prev_threshold, n};
        out->count = 2;
        return;
    }
    /* SORN's arrays list E units first, then I units, as its drive does. */
    const size_t n_i = n - n_e;
    out->arrays[0] = (bl_qualify_binary){"x", cur, cur_threshold, n_e};
    out->arrays[1] = (bl_qualify_binary){"y", cur ? cur + n_e : NULL,
                                         cur ? cur_threshold + n_e : NULL, n_i};
    out->arrays[2] = (bl_qualify_binary){"prev_x", prev, prev_threshold, n_e};
    out->arrays[3] = (bl_qualify_binary){"prev_y", prev ? prev + n_e : NULL,
                                         prev ? prev_threshold + n_e : NULL, n_i};
    out->arrays[4] = (bl_qualify_binary){"activity", cur, cur_threshold, n};
    out->count = 5;
}

/* ---- the ledger ------------------------------------------------------------ */

typedef struct array_stat {
    char *key;
    size_t snapshots;
    double max_abs;
} array_stat;

struct bl_qualify_ledger {
    double rtol, atol;
    array_stat *arrays;  /* first-seen order */
    size_t narrays, cap;
    size_t snapshots;
    double max_abs;
    bl_json *divergences, *failures;
    size_t nfailures;    /* every failing element or check, recorded or not */
};

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a qualification");
}

bl_status bl_qualify_ledger_create(double rtol, double atol, bl_qualify_ledger **out,
                                   bl_error *err)
{
    *out = NULL;
    bl_qualify_ledger *l = bl_calloc(1, sizeof *l);
    if (!l)
        return nomem(err);
    l->rtol = rtol;
    l->atol = atol;
    l->divergences = bl_json_array();
    l->failures = bl_json_array();
    if (!l->divergences || !l->failures) {
        bl_qualify_ledger_destroy(l);
        return nomem(err);
    }
    *out = l;
    return BL_OK;
}

void bl_qualify_ledger_destroy(bl_qualify_ledger *l)
{
    if (!l)
        return;
    for (size_t k = 0; k < l->narrays; k++)
        bl_free(l->arrays[k].key);
    bl_free(l->arrays);
    bl_json_destroy(l->divergences);
    bl_json_destroy(l->failures);
    bl_free(l);
}

size_t bl_qualify_ledger_snapshots(const bl_qualify_ledger *l)
{
    return l->snapshots;
}

size_t bl_qualify_ledger_failures(const bl_qualify_ledger *l)
{
    return l->nfailures;
}

size_t bl_qualify_ledger_divergences(const bl_qualify_ledger *l)
{
    return bl_json_size(l->divergences);
}

double bl_qualify_ledger_max_abs(const bl_qualify_ledger *l)
{
    return l->max_abs;
}

static array_stat *stat_of(bl_qualify_ledger *l, const char *key, bl_error *err)
{
    for (size_t k = 0; k < l->narrays; k++)
        if (strcmp(l->arrays[k].key, key) == 0)
            return &l->arrays[k];
    if (l->narrays == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 64;
        array_stat *grown = bl_realloc(l->arrays, cap * sizeof *grown);
        if (!grown) {
            nomem(err);
            return NULL;
        }
        l->arrays = grown;
        l->cap = cap;
    }
    array_stat *s = &l->arrays[l->narrays];
    if (!(s->key = bl_strdup(key))) {
        nomem(err);
        return NULL;
    }
    s->snapshots = 0;
    s->max_abs = 0;
    l->narrays++;
    return s;
}

/* A value for JSON, which has no NaN or infinity. */
static bl_json *value_json(double v)
{
    if (isfinite(v))
        return bl_json_real(v);
    return bl_json_string(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* [i], [row, column] or [] for a scalar. */
static bl_json *index_json(const bl_snapshot_array *a, size_t flat)
{
    bl_json *idx = bl_json_array();
    bl_status st = BL_OK;
    if (a->ndim == 2) {
        bl_json_push(&st, idx, bl_json_int((int64_t)(flat / a->shape[1])), NULL);
        bl_json_push(&st, idx, bl_json_int((int64_t)(flat % a->shape[1])), NULL);
    } else if (a->ndim == 1) {
        bl_json_push(&st, idx, bl_json_int((int64_t)flat), NULL);
    }
    return bl_measure_built(st, idx);
}

static void site_members(bl_status *st, bl_json *o, const bl_qualify_site *site, bl_error *err)
{
    bl_json_put(st, o, "case", bl_json_string(site->label), err);
    bl_json_put(st, o, "stage", bl_json_string(site->stage), err);
    bl_json_put(st, o, "step", bl_json_int(site->step), err);
}

static bl_status record_failure(bl_qualify_ledger *l, const bl_qualify_site *site,
                                const char *key, const bl_snapshot_array *a, size_t flat,
                                double observed, double expected, const char *rule,
                                bl_error *err)
{
    l->nfailures++;
    if (bl_json_size(l->failures) >= BL_QUALIFY_MAX_FAILURES)
        return BL_OK;
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    site_members(&st, o, site, err);
    bl_json_put(&st, o, "array", bl_json_string(key), err);
    bl_json_put(&st, o, "index", index_json(a, flat), err);
    bl_json_put(&st, o, "rule", bl_json_string(rule), err);
    bl_json_put(&st, o, "comparison", bl_json_string(site->what), err);
    bl_json_put(&st, o, "observed", value_json(observed), err);
    bl_json_put(&st, o, "expected", value_json(expected), err);
    bl_json_push(&st, l->failures, o, err);
    return st;
}

bl_status bl_qualify_fail_message(bl_qualify_ledger *l, const char *label, const char *stage,
                                  const char *message, bl_error *err)
{
    l->nfailures++;
    if (bl_json_size(l->failures) >= BL_QUALIFY_MAX_FAILURES)
        return BL_OK;
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "case", bl_json_string(label), err);
    bl_json_put(&st, o, "stage", bl_json_string(stage), err);
    bl_json_put(&st, o, "message", bl_json_string(message), err);
    bl_json_push(&st, l->failures, o, err);
    return st;
}

static bl_status record_divergence(bl_qualify_ledger *l, const bl_qualify_site *site,
                                   const char *key, const bl_snapshot_array *a, size_t i,
                                   double margin, double threshold, double observed,
                                   double expected, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "case", bl_json_string(site->label), err);
    bl_json_put(&st, o, "frame", bl_json_int(site->step), err);
    bl_json_put(&st, o, "array", bl_json_string(key), err);
    bl_json_put(&st, o, "index", index_json(a, i), err);
    bl_json_put(&st, o, "margin", value_json(margin), err);
    bl_json_put(&st, o, "threshold", value_json(threshold), err);
    bl_json_put(&st, o, "float32", value_json(observed), err);
    bl_json_put(&st, o, "float64", value_json(expected), err);
    bl_json_push(&st, l->divergences, o, err);
    return st;
}

static const bl_qualify_binary *binary_of(const bl_qualify_margins *m, const char *name)
{
    for (size_t k = 0; m && k < m->count; k++)
        if (strcmp(m->arrays[k].name, name) == 0)
            return &m->arrays[k];
    return NULL;
}

/* Whether element i of a binary array may differ: only inside the band. */
static bool may_flip(const bl_qualify_ledger *l, const bl_qualify_binary *b, size_t i)
{
    return b->margin && i < b->n &&
           bl_qualify_near_threshold(b->margin[i], b->threshold[i], l->rtol, l->atol);
}

static bool same_layout(const bl_snapshot_array *a, const bl_snapshot_array *b)
{
    return strcmp(a->name, b->name) == 0 && a->ndim == b->ndim &&
           a->shape[0] == b->shape[0] && a->shape[1] == b->shape[1] &&
           a->integer == b->integer;
}

bl_status bl_qualify_compare(bl_qualify_ledger *l, const bl_qualify_site *site,
                             const bl_snapshot *observed, const bl_snapshot *expected,
                             bool identical, const bl_qualify_margins *margins,
                             bl_qualify_result *out, bl_error *err)
{
    *out = (bl_qualify_result){BL_QUALIFY_PASSED, 0, 0.0};
    char key[160];
    bool layout = observed->count == expected->count;
    for (size_t k = 0; layout && k < observed->count; k++)
        layout = same_layout(&observed->arrays[k], &expected->arrays[k]);
    if (!layout) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s snapshots differ in their arrays or shapes (%s)",
                 site->prefix, site->what);
        out->verdict = BL_QUALIFY_FAILED;
        return bl_qualify_fail_message(l, site->label, site->stage, msg, err);
    }
    if (identical)
        margins = NULL;

    /* First the binary arrays: a flip inside the band means the float32
     * state leaves the reference's trajectory here, legitimately, so the
     * frame is recorded as a divergence and nothing else in it is judged. */
    size_t near = 0;
    bool hard = false;
    for (size_t k = 0; k < observed->count; k++) {
        const bl_snapshot_array *a = &observed->arrays[k], *b = &expected->arrays[k];
        const bl_qualify_binary *bin = binary_of(margins, a->name);
        if (!bin)
            continue;
        const size_t n = a->shape[0] * a->shape[1];
        for (size_t i = 0; i < n; i++) {
            if (bl_qualify_equal(a->data[i], b->data[i]))
                continue;
            if (!may_flip(l, bin, i)) {
                hard = true;
                continue;
            }
            near++;
            snprintf(key, sizeof key, "%s/%s", site->prefix, a->name);
            bl_status st = record_divergence(l, site, key, a, i, bin->margin[i],
                                             bin->threshold[i], a->data[i], b->data[i], err);
            if (st != BL_OK)
                return st;
        }
    }
    if (near > 0 && !hard) {
        out->verdict = BL_QUALIFY_DIVERGED;
        return BL_OK;
    }

    for (size_t k = 0; k < observed->count; k++) {
        const bl_snapshot_array *a = &observed->arrays[k], *b = &expected->arrays[k];
        const bl_qualify_binary *bin = binary_of(margins, a->name);
        const char *rule = identical ? "identical"
                           : bin     ? "binary"
                           : a->integer ? "exact"
                                        : "tolerance";
        snprintf(key, sizeof key, "%s/%s", site->prefix, a->name);
        array_stat *s = stat_of(l, key, err);
        if (!s)
            return BL_ENOMEM;
        double mx = 0.0;
        const size_t n = a->shape[0] * a->shape[1];
        for (size_t i = 0; i < n; i++) {
            const double x = a->data[i], y = b->data[i];
            const bool pass = identical    ? bl_qualify_identical(x, y)
                              : bin        ? bl_qualify_equal(x, y) || may_flip(l, bin, i)
                              : a->integer ? bl_qualify_equal(x, y)
                                           : bl_qualify_close(x, y, l->rtol, l->atol);
            if (!pass) {
                out->verdict = BL_QUALIFY_FAILED;
                bl_status st = record_failure(l, site, key, a, i, x, y, rule, err);
                if (st != BL_OK)
                    return st;
            }
            if (isfinite(x) && isfinite(y) && fabs(x - y) > mx)
                mx = fabs(x - y);
        }
        s->snapshots++;
        l->snapshots++;
        out->snapshots++;
        /* The maxima describe float32 against float64; a bitwise check of
         * one dtype has no place in them (its failures are recorded). */
        if (!identical) {
            if (mx > s->max_abs)
                s->max_abs = mx;
            if (mx > l->max_abs)
                l->max_abs = mx;
            if (mx > out->max_abs)
                out->max_abs = mx;
        }
    }
    return BL_OK;
}

bl_status bl_qualify_ledger_json(const bl_qualify_ledger *l, bl_json *receipt, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json_put(&st, receipt, "snapshots", bl_json_int((int64_t)l->snapshots), err);
    bl_json_put(&st, receipt, "maximum_absolute_difference", bl_json_real(l->max_abs), err);
    bl_json *arrays = bl_json_object();
    for (size_t k = 0; k < l->narrays && st == BL_OK; k++) {
        bl_json *a = bl_json_object();
        bl_json_put(&st, a, "snapshots", bl_json_int((int64_t)l->arrays[k].snapshots), err);
        bl_json_put(&st, a, "maximum_absolute_difference",
                    bl_json_real(l->arrays[k].max_abs), err);
        bl_json_put(&st, arrays, l->arrays[k].key, a, err);
    }
    bl_json_put(&st, receipt, "arrays", arrays, err);
    bl_json_put(&st, receipt, "near_threshold_divergences", bl_json_copy(l->divergences),
                err);
    bl_json_put(&st, receipt, "failure_count", bl_json_int((int64_t)l->nfailures), err);
    bl_json_put(&st, receipt, "failures", bl_json_copy(l->failures), err);
    return st;
}
