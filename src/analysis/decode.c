/* Probe decoding (spec/platform.md §6): per (target, task, block) group and
 * requested point, a standardised ridge decoder with a fixed intercept, its
 * label-permutation null and the constant reference, with every check in
 * the order and wording of §6 and its "precise readings".
 *
 * Arithmetic: centre and scale are NumPy's axis-0 mean and std(ddof=0) of
 * the fit rows (row by row in split order, as NumPy reduces a C-order
 * array's first axis); the intercept and the native accuracy are NumPy's
 * pairwise means; Gram matrix, right-hand side and scores are dot products
 * in ascending index order; the ridge systems go to LAPACK's dgesv, the
 * routine numpy.linalg.solve calls. NumPy forms SᵀS and S·w through BLAS,
 * whose order of additions is its own, so weights agree with the reference
 * to within what the systems' conditioning makes of a last-bit difference
 * (tests/test_decode_numpy.py bounds it). */
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"
#include "brainlesslab/alloc.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/rng.h"

static const char *const point_names[] = {"cue_end", "delay_end", "response"};
enum { N_POINTS = 3 };

static const char *const decodable_tasks[] = {
    "delayed_cue", "recall_interference", "delayed_xor",
    "evidence_accumulation", "context_integration", "temporal_order",
};

static const double default_lambdas[] = {1e-4, 1e-2, 1.0, 100.0};

bl_decode_options bl_decode_defaults(void)
{
    return (bl_decode_options){
        .points = point_names, .n_points = N_POINTS,
        .fit_trials = 256, .validation_trials = 128, .evaluation_trials = 256,
        .lambdas = default_lambdas, .n_lambdas = sizeof default_lambdas / sizeof *default_lambdas,
        .split_seed = 701, .permutation_seed = 702, .memory_budget_bytes = 33554432,
    };
}

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory while decoding");
}

/* ---- options ----------------------------------------------------------- */

/* Index of each requested point in point_names, in the given order. */
static bl_status check_points(const bl_decode_options *o, size_t *which, bl_error *err)
{
    static const char msg[] = "points must be distinct cue_end, delay_end or response";
    if (o->n_points == 0 || o->n_points > N_POINTS)
        return bl_fail(err, BL_EVALUE, msg);
    for (size_t i = 0; i < o->n_points; i++) {
        which[i] = N_POINTS;
        for (size_t k = 0; k < N_POINTS; k++)
            if (o->points[i] && strcmp(o->points[i], point_names[k]) == 0)
                which[i] = k;
        if (which[i] == N_POINTS)
            return bl_fail(err, BL_EVALUE, msg);
        for (size_t j = 0; j < i; j++)
            if (which[j] == which[i])
                return bl_fail(err, BL_EVALUE, msg);
    }
    return BL_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorted(set(lambdas)) into grid (n_lambdas room); *n its length. */
static bl_status lambda_grid(const bl_decode_options *o, double *grid, size_t *n, bl_error *err)
{
    for (size_t i = 0; i < o->n_lambdas; i++)
        if (!isfinite(o->lambdas[i]) || !(o->lambdas[i] > 0.0))
            return bl_fail(err, BL_EVALUE, "ridge lambdas must be finite and positive");
    if (o->n_lambdas == 0)
        return bl_fail(err, BL_EVALUE, "ridge lambdas must be finite and positive");
    memcpy(grid, o->lambdas, o->n_lambdas * sizeof *grid);
    qsort(grid, o->n_lambdas, sizeof *grid, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < o->n_lambdas; i++)
        if (k == 0 || grid[i] != grid[k - 1])
            grid[k++] = grid[i];
    *n = k;
    return BL_OK;
}

/* ---- trials -------------------------------------------------------------- */

static int cmp_key(const char *ta, const char *ka, int64_t ba, int64_t ia, const char *tb,
                   const char *kb, int64_t bb, int64_t ib)
{
    int c = strcmp(ta, tb);
    if (!c)
        c = strcmp(ka, kb);
    if (!c)
        c = (ba > bb) - (ba < bb);
    if (!c)
        c = (ia > ib) - (ia < ib);
    return c;
}

static int cmp_trial(const void *a, const void *b)
{
    const bl_probe_trial *x = *(const bl_probe_trial *const *)a,
                         *y = *(const bl_probe_trial *const *)b;
    return cmp_key(x->target_id, x->task, x->block_id, x->trial_id, y->target_id, y->task,
                   y->block_id, y->trial_id);
}

static bool decodable(const char *task)
{
    for (size_t k = 0; k < sizeof decodable_tasks / sizeof *decodable_tasks; k++)
        if (strcmp(task, decodable_tasks[k]) == 0)
            return true;
    return false;
}

/* The checks of the trial list, then `order` = the trials sorted by
 * (target, task, block, trial). */
static bl_status check_trials(const bl_probe_set *s, const bl_probe_trial **order, bl_error *err)
{
    for (size_t i = 0; i < s->n_trials; i++)
        order[i] = &s->trials[i];
    qsort(order, s->n_trials, sizeof *order, cmp_trial);
    for (size_t i = 1; i < s->n_trials; i++)
        if (cmp_trial(&order[i - 1], &order[i]) == 0)
            return bl_fail(err, BL_EVALUE, "duplicate decoder trial IDs");
    for (size_t i = 0; i < s->n_trials; i++) {
        const bl_probe_trial *t = &s->trials[i];
        if (!decodable(t->task))
            return bl_fail(err, BL_EVALUE,
                           "decoder supports only the six stimulus-driven binary probe tasks");
        if (strcmp(t->construction_scope, "block") != 0 || strcmp(t->reset, "full") != 0)
            return bl_fail(err, BL_EVALUE, "decoder requires block construction and full reset");
        if (!isfinite(t->native_score) || t->native_score < 0.0 || t->native_score > 1.0)
            return bl_fail(err, BL_EVALUE, "every trial needs a completed native score in [0, 1]");
    }
    if (s->n_trials == 0)
        return bl_fail(err, BL_EVALUE, "decoder requires trials");
    return BL_OK;
}

/* Position in `order` of the trial an event belongs to, or SIZE_MAX. */
static size_t find_trial(const bl_probe_set *s, const bl_probe_trial *const *order,
                         const bl_probe_event *e)
{
    size_t lo = 0, hi = s->n_trials;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const bl_probe_trial *t = order[mid];
        int c = cmp_key(t->target_id, t->task, t->block_id, t->trial_id, e->target_id, e->task,
                        e->block_id, e->trial_id);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

/* obs[pos * n_points + p] = the event of sorted trial `pos` at requested
 * point p (SIZE_MAX: none), with the event checks in input order. */
static bl_status assign_events(const bl_probe_set *s, const bl_decode_options *o,
                               const bl_probe_trial *const *order, size_t *obs, bl_error *err)
{
    for (size_t i = 0; i < s->n_trials * o->n_points; i++)
        obs[i] = SIZE_MAX;
    for (size_t i = 0; i < s->n_events; i++) {
        const bl_probe_event *e = &s->events[i];
        size_t pos = find_trial(s, order, e);
        if (pos == SIZE_MAX)
            return bl_fail(err, BL_EVALUE, "probe event has no corresponding trial");
        size_t p = o->n_points;
        for (size_t k = 0; k < o->n_points; k++)
            if (strcmp(e->point, o->points[k]) == 0)
                p = k;
        if (p == o->n_points)
            continue; /* a point not requested */
        if (obs[pos * o->n_points + p] != SIZE_MAX)
            return bl_fail(err, BL_EVALUE,
                           "exactly one observation per trial and point is required");
        if (strcmp(e->channel, "emitted_activity") != 0 || e->round != 1)
            return bl_fail(err, BL_EVALUE, "decoder requires emitted activity from round 1");
        obs[pos * o->n_points + p] = i;
    }
    return BL_OK;
}

/* ---- one group ------------------------------------------------------------ */

static bool same_ids(const bl_probe_event *a, const bl_probe_event *b)
{
    if (strcmp(a->entity_id, b->entity_id) != 0 || a->n_feature_ids != b->n_feature_ids)
        return false;
    for (size_t k = 0; k < a->n_feature_ids; k++)
        if (strcmp(a->feature_ids[k], b->feature_ids[k]) != 0)
            return false;
    return true;
}

static int cmp_string_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Python's integers do not overflow; where theirs could pass 64 bits, the
 * decoder's arithmetic uses 128 (a GNU C extension of gcc and clang). */
__extension__ typedef unsigned __int128 u128;

/* 8 × (6·m·f + 4·f²) > budget, exactly as Python's unbounded integers
 * compare: m and f count objects in memory, so the products fit 128 bits. */
static bool over_budget(size_t m, size_t f, int64_t budget)
{
    if (budget < 0)
        return true;
    const u128 need = 8 * (6 * (u128)m * f + 4 * (u128)f * f);
    return need > (u128)budget;
}

/* Decimal digits of v (at most 39 + NUL). */
static void u128_text(u128 v, char out[40])
{
    char rev[40];
    size_t n = 0;
    do {
        rev[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = rev[n - 1 - i];
    out[n] = '\0';
}

/* The scratch of one group and point. */
typedef struct work {
    size_t m, f, a, b, c;
    const size_t *fit, *val, *eval; /* indices into the sorted members, split order */
    double *s;       /* m × f standardised features */
    double *centre, *scale;
    double *gram;    /* f × f */
    double *system;  /* f × f, overwritten by dgesv */
    double *rhs, *w, *best_w;
    double *t;       /* a targets */
    int64_t *pred, *best_pred;
    lapack_int *ipiv;
    int64_t *fit_pred, *null_pred, *tmp; /* m each */
    double *native_eval;                 /* c */
} work;

/* One fit with the given labels (targets from the fit rows, accuracy on
 * the validation rows): the DecoderFit object, and its predictions over
 * all members into pred_out. */
static bl_status fit_ridge(work *k, const int64_t *labels, const double *grid, size_t n_grid,
                           int64_t *pred_out, bl_json **out, bl_error *err)
{
    const size_t f = k->f, a = k->a;
    for (size_t r = 0; r < a; r++)
        k->t[r] = labels[k->fit[r]] == 1 ? 1.0 : -1.0;
    const double intercept = bl_np_mean(k->t, a);
    for (size_t i = 0; i < f; i++) {
        double acc = 0.0;
        for (size_t r = 0; r < a; r++)
            acc += k->s[k->fit[r] * f + i] * (k->t[r] - intercept);
        k->rhs[i] = acc;
    }
    double best_acc = -1.0, best_lambda = 0.0;
    for (size_t g = 0; g < n_grid; g++) {
        memcpy(k->system, k->gram, f * f * sizeof *k->system);
        for (size_t i = 0; i < f; i++)
            k->system[i * f + i] += grid[g];
        memcpy(k->w, k->rhs, f * sizeof *k->w);
        /* The system is symmetric, so row and column order are the same
         * matrix; column-major spares LAPACKE a transposed copy. */
        lapack_int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, (lapack_int)f, 1, k->system,
                                        (lapack_int)f, k->ipiv, k->w, (lapack_int)f);
        if (info > 0)
            return bl_fail(err, BL_EVALUE, "Singular matrix");
        if (info < 0)
            return bl_fail(err, BL_ERUNTIME, "LAPACKE_dgesv rejected argument %d", (int)-info);
        for (size_t r = 0; r < k->m; r++) {
            double score = 0.0;
            for (size_t j = 0; j < f; j++)
                score += k->s[r * f + j] * k->w[j];
            k->pred[r] = score + intercept >= 0.0 ? 1 : 2;
        }
        size_t hits = 0;
        for (size_t r = 0; r < k->b; r++)
            hits += k->pred[k->val[r]] == labels[k->val[r]];
        const double acc = (double)hits / (double)k->b;
        if (acc > best_acc) { /* ties keep the smaller λ */
            best_acc = acc;
            best_lambda = grid[g];
            memcpy(k->best_w, k->w, f * sizeof *k->w);
            memcpy(k->best_pred, k->pred, k->m * sizeof *k->pred);
        }
    }
    bl_status st = BL_OK;
    bl_json *fit = bl_json_object(), *w = bl_json_array(), *centre = bl_json_array(),
            *scale = bl_json_array(), *pred = bl_json_array();
    for (size_t i = 0; i < f; i++) {
        bl_json_push(&st, w, bl_json_real(k->best_w[i]), err);
        bl_json_push(&st, centre, bl_json_real(k->centre[i]), err);
        bl_json_push(&st, scale, bl_json_real(k->scale[i]), err);
    }
    for (size_t r = 0; r < k->m; r++)
        bl_json_push(&st, pred, bl_json_int(k->best_pred[r]), err);
    memcpy(pred_out, k->best_pred, k->m * sizeof *pred_out);
    bl_json_put(&st, fit, "regularisation", bl_json_real(best_lambda), err);
    bl_json_put(&st, fit, "weights", w, err);
    bl_json_put(&st, fit, "intercept", bl_json_real(intercept), err);
    bl_json_put(&st, fit, "centre", centre, err);
    bl_json_put(&st, fit, "scale", scale, err);
    bl_json_put(&st, fit, "predictions", pred, err);
    bl_json_put(&st, fit, "validation_accuracy", bl_json_real(best_acc), err);
    return bl_json_hand_over(st, fit, out);
}

/* Centre, scale, standardised features and Gram matrix of one point. */
static void standardise(work *k, const bl_probe_set *s, const size_t *events)
{
    const size_t f = k->f, a = k->a;
    for (size_t j = 0; j < f; j++) {
        double sum = 0.0;
        for (size_t r = 0; r < a; r++)
            sum += s->events[events[k->fit[r]]].features[j];
        k->centre[j] = sum / (double)a;
        double sq = 0.0;
        for (size_t r = 0; r < a; r++) {
            const double d = s->events[events[k->fit[r]]].features[j] - k->centre[j];
            sq += d * d;
        }
        const double sd = sqrt(sq / (double)a);
        k->scale[j] = sd == 0.0 ? 1.0 : sd;
    }
    for (size_t r = 0; r < k->m; r++)
        for (size_t j = 0; j < f; j++)
            k->s[r * f + j] = (s->events[events[r]].features[j] - k->centre[j]) / k->scale[j];
    for (size_t i = 0; i < f; i++)
        for (size_t j = 0; j < f; j++) {
            double acc = 0.0;
            for (size_t r = 0; r < a; r++)
                acc += k->s[k->fit[r] * f + i] * k->s[k->fit[r] * f + j];
            k->gram[i * f + j] = acc;
        }
}

static double accuracy(const int64_t *pred, const int64_t *labels, const size_t *idx, size_t n)
{
    size_t hits = 0;
    for (size_t r = 0; r < n; r++)
        hits += pred[idx[r]] == labels[idx[r]];
    return (double)hits / (double)n;
}

static bl_json *int_list(const int64_t *v, const size_t *idx, size_t n)
{
    bl_json *a = bl_json_array();
    bl_status st = a ? BL_OK : BL_ENOMEM;
    for (size_t i = 0; i < n; i++)
        bl_json_push(&st, a, bl_json_int(idx ? v[idx[i]] : v[i]), NULL);
    return st == BL_OK ? a : (bl_json_destroy(a), NULL);
}

typedef struct group {
    const bl_probe_trial *const *members; /* sorted by trial id */
    const size_t *obs;                    /* members' rows of the obs table */
    size_t m;
    int64_t *trial_ids, *labels, *first_labels, *permuted;
    double *native;
    const bl_probe_event *first_ids;      /* (entity, feature ids) of the first point */
} group;

static bl_status decode_point(const bl_probe_set *s, const bl_decode_options *o, group *g,
                              size_t p, const size_t *split, const double *grid, size_t n_grid,
                              bl_json *results, bl_error *err)
{
    const size_t m = g->m;
    size_t *events = bl_mallocarray(m, sizeof *events);
    if (!events)
        return nomem(err);
    bl_status st = BL_OK;
    work k = {0};
    bl_json *r = NULL, *fitted = NULL, *null_fit = NULL;
    for (size_t i = 0; i < m; i++) {
        events[i] = g->obs[i * o->n_points + p];
        if (events[i] == SIZE_MAX) {
            st = bl_fail(err, BL_EVALUE, "missing observation: exactly one event per trial and "
                                         "point is required");
            goto done;
        }
    }
    const bl_probe_event *e0 = &s->events[events[0]];
    for (size_t i = 1; i < m; i++)
        if (!same_ids(e0, &s->events[events[i]])) {
            st = bl_fail(err, BL_EVALUE, "incompatible entity or feature IDs across trials");
            goto done;
        }
    if (g->first_ids && !same_ids(g->first_ids, e0)) {
        st = bl_fail(err, BL_EVALUE, "feature identities must be stable across observation points");
        goto done;
    }
    const size_t f = e0->n_feature_ids;
    if (over_budget(m, f, o->memory_budget_bytes)) {
        st = bl_fail(err, BL_ENOMEM, "decoder exceeds the declared offline memory budget");
        goto done;
    }
    for (size_t i = 0; i < m; i++) {
        g->labels[i] = s->events[events[i]].label;
        if (g->first_ids && g->labels[i] != g->first_labels[i]) {
            st = bl_fail(err, BL_EVALUE,
                         "labels must agree across observation points within each trial");
            goto done;
        }
    }
    if (!g->first_ids) {
        memcpy(g->first_labels, g->labels, m * sizeof *g->labels);
        g->first_ids = e0;
    }
    k = (work){.m = m, .f = f, .a = (size_t)o->fit_trials, .b = (size_t)o->validation_trials,
               .c = (size_t)o->evaluation_trials};
    k.fit = split;
    k.val = split + k.a;
    k.eval = split + k.a + k.b;
    const size_t *parts[3] = {k.fit, k.val, k.eval};
    const size_t sizes[3] = {k.a, k.b, k.c};
    for (int q = 0; q < 3; q++) {
        bool one = false, two = false;
        for (size_t i = 0; i < sizes[q]; i++) {
            one = one || g->labels[parts[q][i]] == 1;
            two = two || g->labels[parts[q][i]] == 2;
        }
        if (!one || !two) {
            st = bl_fail(err, BL_EVALUE,
                         "every split needs both classes; revise the declared split seed");
            goto done;
        }
    }
    k.s = bl_mallocarray(m * f, sizeof *k.s);
    k.centre = bl_mallocarray(f, sizeof(double));
    k.scale = bl_mallocarray(f, sizeof(double));
    k.gram = bl_mallocarray(f * f, sizeof(double));
    k.system = bl_mallocarray(f * f, sizeof(double));
    k.rhs = bl_mallocarray(f, sizeof(double));
    k.w = bl_mallocarray(f, sizeof(double));
    k.best_w = bl_mallocarray(f, sizeof(double));
    k.t = bl_mallocarray(k.a, sizeof(double));
    k.pred = bl_mallocarray(m, sizeof(int64_t));
    k.best_pred = bl_mallocarray(m, sizeof(int64_t));
    k.ipiv = bl_mallocarray(f, sizeof(lapack_int));
    k.fit_pred = bl_mallocarray(m, sizeof(int64_t));
    k.null_pred = bl_mallocarray(m, sizeof(int64_t));
    k.tmp = bl_mallocarray(m, sizeof(int64_t));
    k.native_eval = bl_mallocarray(k.c, sizeof(double));
    if (!k.s || !k.centre || !k.scale || !k.gram || !k.system || !k.rhs || !k.w || !k.best_w ||
        !k.t || !k.pred || !k.best_pred || !k.ipiv || !k.fit_pred || !k.null_pred || !k.tmp ||
        !k.native_eval) {
        st = nomem(err);
        goto done;
    }
    standardise(&k, s, events);
    st = fit_ridge(&k, g->labels, grid, n_grid, k.fit_pred, &fitted, err);
    if (st != BL_OK)
        goto done;
    /* The null: permuted[fit] = permutation(labels[fit]), then (same
     * generator) permuted[validation] = permutation(labels[validation]). */
    bl_gen gen;
    st = bl_gen_for(&gen, o->permutation_seed, "analysis", "probe-label-permutation", NULL, 0,
                    err);
    if (st != BL_OK)
        goto done;
    memcpy(g->permuted, g->labels, m * sizeof *g->labels);
    for (int q = 0; q < 2; q++) {
        for (size_t i = 0; i < sizes[q]; i++)
            k.tmp[i] = g->labels[parts[q][i]];
        bl_gen_shuffle(&gen, k.tmp, sizes[q], sizeof *k.tmp);
        for (size_t i = 0; i < sizes[q]; i++)
            g->permuted[parts[q][i]] = k.tmp[i];
    }
    st = fit_ridge(&k, g->permuted, grid, n_grid, k.null_pred, &null_fit, err);
    if (st != BL_OK)
        goto done;
    size_t ones = 0;
    for (size_t i = 0; i < k.a; i++)
        ones += g->labels[k.fit[i]] == 1;
    const int64_t constant = 2 * ones >= k.a ? 1 : 2;
    size_t const_hits = 0;
    for (size_t i = 0; i < k.c; i++) {
        const_hits += g->labels[k.eval[i]] == constant;
        k.native_eval[i] = g->native[k.eval[i]];
    }
    r = bl_json_object();
    bl_json *ids = bl_json_array(), *native = bl_json_array();
    for (size_t j = 0; j < f; j++)
        bl_json_push(&st, ids, bl_json_string(e0->feature_ids[j]), err);
    for (size_t i = 0; i < m; i++)
        bl_json_push(&st, native, bl_json_real(g->native[i]), err);
    const bl_probe_trial *t0 = g->members[0];
    bl_json_put(&st, r, "target_id", bl_json_string(t0->target_id), err);
    bl_json_put(&st, r, "task", bl_json_string(t0->task), err);
    bl_json_put(&st, r, "block_id", bl_json_int(t0->block_id), err);
    bl_json_put(&st, r, "point", bl_json_string(o->points[p]), err);
    bl_json_put(&st, r, "entity_id", bl_json_string(e0->entity_id), err);
    bl_json_put(&st, r, "feature_ids", ids, err);
    bl_json_put(&st, r, "trial_ids", int_list(g->trial_ids, NULL, m), err);
    bl_json_put(&st, r, "fit_trial_ids", int_list(g->trial_ids, k.fit, k.a), err);
    bl_json_put(&st, r, "validation_trial_ids", int_list(g->trial_ids, k.val, k.b), err);
    bl_json_put(&st, r, "evaluation_trial_ids", int_list(g->trial_ids, k.eval, k.c), err);
    bl_json_put(&st, r, "labels", int_list(g->labels, NULL, m), err);
    bl_json_put(&st, r, "permutation_labels", int_list(g->permuted, NULL, m), err);
    bl_json_put(&st, r, "native_scores", native, err);
    bl_json_put(&st, r, "fitted", fitted, err);
    fitted = NULL;
    bl_json_put(&st, r, "permutation", null_fit, err);
    null_fit = NULL;
    bl_json_put(&st, r, "accuracy", bl_json_real(accuracy(k.fit_pred, g->labels, k.eval, k.c)), err);
    bl_json_put(&st, r, "native_accuracy", bl_json_real(bl_np_mean(k.native_eval, k.c)), err);
    bl_json_put(&st, r, "permutation_accuracy",
                bl_json_real(accuracy(k.null_pred, g->labels, k.eval, k.c)), err);
    bl_json_put(&st, r, "constant_accuracy", bl_json_real((double)const_hits / (double)k.c), err);
    bl_json_put(&st, r, "constant_prediction", bl_json_int(constant), err);
    bl_json_put(&st, r, "chance_accuracy", bl_json_real(0.5), err);
    bl_json_put(&st, r, "independent_blocks", bl_json_int(1), err);
    bl_json_put(&st, r, "channel", bl_json_string("emitted_activity"), err);
    bl_json_push(&st, results, r, err);
    r = NULL;
done:
    bl_json_destroy(r);
    bl_json_destroy(fitted);
    bl_json_destroy(null_fit);
    bl_free(k.s);
    bl_free(k.centre);
    bl_free(k.scale);
    bl_free(k.gram);
    bl_free(k.system);
    bl_free(k.rhs);
    bl_free(k.w);
    bl_free(k.best_w);
    bl_free(k.t);
    bl_free(k.pred);
    bl_free(k.best_pred);
    bl_free(k.ipiv);
    bl_free(k.fit_pred);
    bl_free(k.null_pred);
    bl_free(k.tmp);
    bl_free(k.native_eval);
    bl_free(events);
    return st;
}

static bl_status decode_group(const bl_probe_set *s, const bl_decode_options *o, group *g,
                              const double *grid, size_t n_grid, bl_json *results, bl_error *err)
{
    const size_t m = g->m;
    /* Each count is >= 2 here; their sum may pass int64 (Python's would not overflow). */
    const u128 want =
        (u128)o->fit_trials + (u128)o->validation_trials + (u128)o->evaluation_trials;
    if ((u128)m != want) {
        char text[40];
        u128_text(want, text);
        return bl_fail(err, BL_EVALUE, "decoder requires exactly %s whole trials per block", text);
    }
    const bl_probe_trial *t0 = g->members[0];
    for (size_t i = 0; i < m; i++) {
        const bl_probe_trial *t = g->members[i];
        if (!*t->wiring_id || !*t->node_signature || !*t->interface_signature ||
            strcmp(t->wiring_id, t0->wiring_id) != 0 ||
            strcmp(t->node_signature, t0->node_signature) != 0 ||
            strcmp(t->interface_signature, t0->interface_signature) != 0)
            return bl_fail(err, BL_EVALUE,
                           "trials must share fixed wiring, node parameters and interface");
    }
    const char **seeds = bl_mallocarray(m, sizeof *seeds);
    int64_t *order = bl_mallocarray(m, sizeof *order);
    size_t *split = bl_mallocarray(m, sizeof *split);
    bl_status st = seeds && order && split ? BL_OK : nomem(err);
    if (st == BL_OK) {
        for (size_t i = 0; i < m; i++)
            seeds[i] = g->members[i]->world_seed;
        qsort(seeds, m, sizeof *seeds, cmp_string_ptr);
        for (size_t i = 1; i < m && st == BL_OK; i++)
            if (strcmp(seeds[i - 1], seeds[i]) == 0)
                st = bl_fail(err, BL_EVALUE, "trial worlds must have distinct seeds");
    }
    bl_gen gen;
    if (st == BL_OK)
        st = bl_gen_for(&gen, o->split_seed, "analysis", "probe-split", NULL, 0, err);
    if (st == BL_OK) {
        bl_gen_permutation(&gen, order, m);
        for (size_t i = 0; i < m; i++)
            split[i] = (size_t)order[i];
        for (size_t i = 0; i < m; i++) {
            g->trial_ids[i] = g->members[i]->trial_id;
            g->native[i] = g->members[i]->native_score;
        }
        g->first_ids = NULL;
    }
    for (size_t p = 0; st == BL_OK && p < o->n_points; p++)
        st = decode_point(s, o, g, p, split, grid, n_grid, results, err);
    bl_free(seeds);
    bl_free(order);
    bl_free(split);
    return st;
}

bl_status bl_decode(const bl_probe_set *s, const bl_decode_options *o, bl_json **out,
                    bl_error *err)
{
    *out = NULL;
    size_t which[N_POINTS];
    bl_status st = check_points(o, which, err);
    if (st != BL_OK)
        return st;
    if (o->fit_trials < 2 || o->validation_trials < 2 || o->evaluation_trials < 2)
        return bl_fail(err, BL_EVALUE, "each split requires at least two whole trials");
    double *grid = bl_mallocarray(o->n_lambdas ? o->n_lambdas : 1, sizeof *grid);
    const bl_probe_trial **order = bl_mallocarray(s->n_trials ? s->n_trials : 1, sizeof *order);
    size_t *obs = bl_mallocarray(s->n_trials ? s->n_trials * o->n_points : 1, sizeof *obs);
    const size_t nt = s->n_trials ? s->n_trials : 1;
    group g = {0};
    g.trial_ids = bl_mallocarray(nt, sizeof(int64_t));
    g.labels = bl_mallocarray(nt, sizeof(int64_t));
    g.first_labels = bl_mallocarray(nt, sizeof(int64_t));
    g.permuted = bl_mallocarray(nt, sizeof(int64_t));
    g.native = bl_mallocarray(nt, sizeof(double));
    bl_json *results = bl_json_array();
    size_t n_grid = 0;
    if (!grid || !order || !obs || !g.trial_ids || !g.labels || !g.first_labels ||
        !g.permuted || !g.native || !results)
        st = nomem(err);
    if (st == BL_OK)
        st = lambda_grid(o, grid, &n_grid, err);
    if (st == BL_OK)
        st = check_trials(s, order, err);
    if (st == BL_OK)
        st = assign_events(s, o, order, obs, err);
    /* Groups: runs of equal (target, task, block) in the sorted trials. */
    for (size_t start = 0; st == BL_OK && start < s->n_trials;) {
        const bl_probe_trial *t0 = order[start];
        size_t end = start;
        while (end < s->n_trials) {
            const bl_probe_trial *t = order[end];
            if (strcmp(t->target_id, t0->target_id) || strcmp(t->task, t0->task) ||
                t->block_id != t0->block_id)
                break;
            end++;
        }
        g.members = order + start;
        g.obs = obs + start * o->n_points;
        g.m = end - start;
        st = decode_group(s, o, &g, grid, n_grid, results, err);
        start = end;
    }
    bl_free(grid);
    bl_free(order);
    bl_free(obs);
    bl_free(g.trial_ids);
    bl_free(g.labels);
    bl_free(g.first_labels);
    bl_free(g.permuted);
    bl_free(g.native);
    return bl_json_hand_over(st, results, out);
}
