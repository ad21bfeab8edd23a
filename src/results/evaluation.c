/* Evaluations: calibration selection, the run, adjusted outcomes, target
 * summaries, paired contrasts and frozen calibrations (spec/platform.md
 * §4.4, §4.10, §5.2, §5.4, §5.5). Everything a bad plan or a bad
 * calibration can cause is refused before the run starts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/npstat.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for an evaluation");
}

/* What the summaries need of one target. */
typedef struct tinfo {
    const bl_target_spec *spec;
    const bl_calibration *cal;   /* selected or produced analytic one, or NULL */
    bl_calibration *own;         /* an analytic record made here (owned) */
    bl_json *signature;          /* this program's signature for the target */
    ptrdiff_t reference;         /* paired reference target, or -1 */
} tinfo;

typedef struct ectx {
    bl_run_prepared *run;        /* owned; NULL after a preflight alone */
    const bl_evaluation_spec *ev;
    size_t ntargets;
    tinfo *t;
} ectx;

static void ectx_free(ectx *c)
{
    bl_run_prepared_destroy(c->run);
    c->run = NULL;
    for (size_t i = 0; c->t && i < c->ntargets; i++) {
        bl_calibration_destroy(c->t[i].own);
        bl_json_destroy(c->t[i].signature);
    }
    bl_free(c->t);
    c->t = NULL;
}

/* §5.4 reference candidates of reservoir target i. */
static bl_status pair_of(const ectx *c, size_t i, bl_error *err)
{
    tinfo *t = &c->t[i];
    t->reference = -1;
    if (!t->spec->reservoir)
        return BL_OK;
    const bool ablate = strcmp(c->ev->operation, "ablate") == 0;
    const bl_json *task = bl_plan_member(bl_plan_member(t->spec->target, "composition"), "task");
    for (size_t k = 0; k < c->ntargets; k++) {
        const tinfo *r = &c->t[k];
        if (k == i || strcmp(r->spec->pairing_key, t->spec->pairing_key) != 0 || r->spec->horizon != t->spec->horizon ||
            !bl_json_equal(bl_plan_member(bl_plan_member(r->spec->target, "composition"), "task"), task))
            continue;
        if (ablate ? strcmp(r->spec->id, "baseline") != 0 : strcmp(r->spec->controller, "reference_null") != 0)
            continue;
        if (t->reference >= 0)
            return bl_fail(err, BL_EVALUE,
                           "a paired contrast requires one unambiguous reference condition");
        t->reference = (ptrdiff_t)k;
    }
    return BL_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* §4.4 step 3: no supplied empirical trajectory may be one of our worlds. */
static bl_status check_disjoint(const ectx *c, const bl_calibration *const *sup, size_t nsup,
                                bl_error *err)
{
    size_t nids = 0;
    for (size_t k = 0; k < nsup; k++)
        if (!sup[k]->analytic)
            nids += bl_json_size(sup[k]->trajectory_ids);
    if (nids == 0)
        return BL_OK;
    const char **ids = bl_mallocarray(nids, sizeof *ids);
    if (!ids)
        return nomem(err);
    nids = 0;
    for (size_t k = 0; k < nsup; k++) {
        if (sup[k]->analytic)
            continue;
        for (size_t j = 0; j < bl_json_size(sup[k]->trajectory_ids); j++) {
            const bl_json *v = bl_json_at(sup[k]->trajectory_ids, j);
            if (bl_json_kindof(v) == BL_JSON_STRING) /* integer ids name no world */
                ids[nids++] = bl_json_get_string(v, NULL);
        }
    }
    qsort(ids, nids, sizeof *ids, cmp_str);
    bl_status st = BL_OK;
    for (size_t i = 0; i < c->ntargets && st == BL_OK; i++)
        for (int64_t b = 0; b < c->ev->blocks && st == BL_OK; b++)
            for (int64_t k = 0; k < c->ev->trials_per_block && st == BL_OK; k++) {
                const bl_key keys[4] = {BL_KEY_S(c->t[i].spec->pairing_key),
                                        BL_KEY_S(bl_task_name(c->t[i].spec->task_options.kind)), BL_KEY_I(b),
                                        BL_KEY_I(k)};
                bl_seed s;
                char hex[65];
                const char *key = hex;
                if ((st = bl_seed_for(c->ev->root_seed, c->ev->seed_partition, "world", keys, 4, &s, err)) !=
                    BL_OK)
                    break;
                bl_seed_hex(&s, hex);
                if (nids && bsearch(&key, ids, nids, sizeof *ids, cmp_str))
                    st = bl_fail(err, BL_EVALUE,
                                 "calibration and evaluation world identities must be disjoint");
            }
    bl_free(ids);
    return st;
}

/* ---- signature mismatch -------------------------------------------------- */

/* A value as compact JSON, or "missing"; long ones (source hashes) are cut
 * so that a message stays one readable line. */
static void put_value(bl_buf *b, const bl_json *v)
{
    enum { MOST = 40 };
    if (!v) {
        bl_buf_puts(b, "missing");
        return;
    }
    bl_buf text;
    bl_buf_init(&text);
    if (bl_json_write(v, 0, &text, NULL) != BL_OK)
        bl_buf_puts(b, "?");
    else if (text.len > MOST)
        bl_buf_printf(b, "%.*s...", MOST - 3, text.data);
    else
        bl_buf_append(b, text.data, text.len);
    bl_buf_clear(&text);
}

static void put_difference(bl_buf *b, const char *path, size_t plen, const char *key,
                           size_t klen, const bl_json *cal, const bl_json *plan)
{
    bl_buf_printf(b, "%s%.*s%.*s (calibration ", b->len ? ", " : "", (int)plen, path, (int)klen,
                  key);
    put_value(b, cal);
    bl_buf_puts(b, ", plan ");
    put_value(b, plan);
    bl_buf_putc(b, ')');
}

/* Appends "<field> (calibration <v>, plan <v>)" for every field where two
 * signatures differ, descending into objects (task_options.delays,
 * numerics.dtype); fields the calibration alone has come last. */
static void signature_differences(bl_buf *b, const char *path, size_t plen, const bl_json *cal,
                                  const bl_json *plan)
{
    for (size_t i = 0; i < bl_json_size(plan); i++) {
        size_t klen;
        const char *key = bl_json_key_at(plan, i, &klen);
        const bl_json *pv = bl_json_value_at(plan, i), *cv = bl_json_get(cal, key);
        if (cv && bl_json_equal(cv, pv))
            continue;
        if (cv && bl_json_kindof(cv) == BL_JSON_OBJECT && bl_json_kindof(pv) == BL_JSON_OBJECT) {
            bl_buf sub;
            bl_buf_init(&sub);
            bl_buf_printf(&sub, "%.*s%.*s.", (int)plen, path, (int)klen, key);
            if (!sub.failed)
                signature_differences(b, sub.data, sub.len, cv, pv);
            b->failed = b->failed || sub.failed;
            bl_buf_clear(&sub);
        } else {
            put_difference(b, path, plen, key, klen, cv, pv);
        }
    }
    for (size_t i = 0; i < bl_json_size(cal); i++) {
        size_t klen;
        const char *key = bl_json_key_at(cal, i, &klen);
        if (!bl_json_get(plan, key))
            put_difference(b, path, plen, key, klen, bl_json_value_at(cal, i), NULL);
    }
}

/* §5.5 "calibration signature mismatch for <task>", followed (ours) by the
 * fields in which the supplied record's signature differs from the plan's. */
static bl_status signature_mismatch(const tinfo *t, const bl_calibration *cal, bl_error *err)
{
    bl_buf diff;
    bl_buf_init(&diff);
    signature_differences(&diff, "", 0, cal->signature, t->signature);
    bl_status st = bl_buf_status(&diff, err);
    if (st == BL_OK)
        st = bl_fail(err, BL_EVALUE, "calibration signature mismatch for %s%s%s",
                     bl_task_name(t->spec->task_options.kind), diff.len ? ": " : "", diff.len ? diff.data : "");
    bl_buf_clear(&diff);
    return st;
}

/* Everything before the run: the runner's preparation (`run`), or its
 * preflight alone, then targets, pairs, calibrations, disjointness. */
static bl_status prepare(ectx *c, const bl_resolved_plan *plan, const bl_execution *x,
                         const bl_calibration *const *sup, size_t nsup, bool run, int64_t part,
                         int64_t nparts, bl_error *err)
{
    memset(c, 0, sizeof *c);
    bl_status st = !run   ? bl_run_preflight(plan, x, err)
                   : part ? bl_run_prepare_part(plan, x, part, nparts, &c->run, err)
                          : bl_run_prepare(plan, x, &c->run, err);
    if (st != BL_OK)
        return st;
    c->ev = bl_resolved_evaluation(plan);
    c->ntargets = bl_resolved_target_count(plan);
    c->t = bl_calloc(c->ntargets, sizeof *c->t);
    if (!c->t)
        return nomem(err);
    for (size_t i = 0; i < c->ntargets; i++)
        c->t[i].spec = bl_resolved_target_spec(plan, i);
    for (size_t i = 0; i < c->ntargets; i++)
        if ((st = pair_of(c, i, err)) != BL_OK)
            return st;
    /* §4.4 step 3 comes before the selection of step 8. */
    if (strcmp(c->ev->operation, "calibrate") != 0 &&
        (st = check_disjoint(c, sup, nsup, err)) != BL_OK)
        return st;

    /* §5.5 calibration selection, per target. */
    for (size_t i = 0; i < c->ntargets; i++) {
        tinfo *t = &c->t[i];
        char sid[65];
        if ((st = bl_calibration_signature(&t->spec->task_options, t->spec->horizon,
                                           c->ev->warmup, c->ev->dtype, "cpu", &t->signature,
                                           err)) != BL_OK ||
            (st = bl_calibration_signature_id(t->signature, sid, err)) != BL_OK)
            return st;
        const bl_calibration *same_task = NULL; /* the first record for this task */
        for (size_t k = 0; k < nsup; k++) {
            if (!same_task && strcmp(sup[k]->task, bl_task_name(t->spec->task_options.kind)) == 0)
                same_task = sup[k];
            if (strcmp(sup[k]->signature_id, sid) != 0)
                continue;
            if (t->cal && strcmp(t->cal->id, sup[k]->id) != 0)
                return bl_fail(err, BL_EVALUE, "ambiguous calibration records for one task contract");
            t->cal = sup[k];
        }
        if (t->cal)
            continue;
        /* Supplying a record for this task asserts it was meant to apply. */
        if (same_task)
            return signature_mismatch(t, same_task, err);
        if (bl_task_is_probe(t->spec->task_options.kind)) {
            if ((st = bl_calibration_analytic(t->signature, &t->own, err)) != BL_OK)
                return st;
            t->cal = t->own;
        }
    }
    return BL_OK;
}

bl_status bl_evaluation_preflight(const bl_resolved_plan *plan, const bl_execution *x,
                                  const bl_calibration *const *supplied, size_t nsupplied,
                                  bl_error *err)
{
    ectx c;
    bl_status st = prepare(&c, plan, x, supplied, nsupplied, false, 0, 0, err);
    ectx_free(&c);
    return st;
}

struct bl_evaluation_prepared {
    ectx c;
};

static bl_status prepare_run(const bl_resolved_plan *plan, const bl_execution *x,
                             const bl_calibration *const *supplied, size_t nsupplied,
                             int64_t part, int64_t nparts, bl_evaluation_prepared **out,
                             bl_error *err)
{
    *out = NULL;
    bl_evaluation_prepared *p = bl_malloc(sizeof *p);
    bl_status st = p ? prepare(&p->c, plan, x, supplied, nsupplied, true, part, nparts, err)
                     : nomem(err);
    if (st == BL_OK)
        *out = p;
    else
        bl_evaluation_prepared_destroy(p);
    return st;
}

bl_status bl_evaluation_prepare(const bl_resolved_plan *plan, const bl_execution *x,
                                const bl_calibration *const *supplied, size_t nsupplied,
                                bl_evaluation_prepared **out, bl_error *err)
{
    return prepare_run(plan, x, supplied, nsupplied, 0, 0, out, err);
}

bl_status bl_evaluation_prepare_part(const bl_resolved_plan *plan, const bl_execution *x,
                                     const bl_calibration *const *calibrations,
                                     size_t ncalibrations, int64_t part, int64_t nparts,
                                     bl_evaluation_prepared **out, bl_error *err)
{
    *out = NULL;
    /* Checked first, so a bad part number is refused before the plan is. */
    bl_status st = bl_run_part_check(part, nparts, err);
    return st != BL_OK ? st
                       : prepare_run(plan, x, calibrations, ncalibrations, part, nparts, out,
                                     err);
}

void bl_evaluation_prepared_destroy(bl_evaluation_prepared *p)
{
    if (!p)
        return;
    ectx_free(&p->c);
    bl_free(p);
}

/* ---- seeds of the summaries (§4.2) --------------------------------------- */

/* summary-bootstrap: digest({composition, interventions, pairing, mechanism}). */
static bl_status summary_seed(const ectx *c, const tinfo *t, bl_seed *out, bl_error *err)
{
    const bl_json *tg = t->spec->target;
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "composition", bl_json_copy(bl_plan_member(tg, "composition")), err);
    bl_json_put(&st, o, "interventions", bl_json_copy(bl_plan_member(tg, "interventions")), err);
    bl_json_put(&st, o, "pairing", bl_json_string(t->spec->pairing_key), err);
    bl_json_put(&st, o, "mechanism", bl_json_string(t->spec->mechanism_key), err);
    char hex[65];
    if (st == BL_OK)
        st = bl_json_digest(o, hex, err);
    bl_json_destroy(o);
    if (st != BL_OK)
        return st;
    const bl_key key = BL_KEY_S(hex);
    return bl_seed_for(c->ev->root_seed, c->ev->seed_partition, "summary-bootstrap", &key, 1, out, err);
}

/* contrast-bootstrap: digest(target composition), digest(target
 * interventions), digest(reference composition). */
static bl_status contrast_seed(const ectx *c, const tinfo *t, const tinfo *r, bl_seed *out,
                               bl_error *err)
{
    char a[65], b[65], d[65];
    bl_status st = bl_json_digest(bl_plan_member(t->spec->target, "composition"), a, err);
    if (st == BL_OK)
        st = bl_json_digest(bl_plan_member(t->spec->target, "interventions"), b, err);
    if (st == BL_OK)
        st = bl_json_digest(bl_plan_member(r->spec->target, "composition"), d, err);
    if (st != BL_OK)
        return st;
    const bl_key keys[3] = {BL_KEY_S(a), BL_KEY_S(b), BL_KEY_S(d)};
    return bl_seed_for(c->ev->root_seed, c->ev->seed_partition, "contrast-bootstrap", keys, 3, out, err);
}

/* ---- summaries and contrasts --------------------------------------------- */

static const char *unit_of(bl_construction_scope scope)
{
    if (scope == BL_SCOPE_EVALUATION)
        return "world_blocks_conditional_on_fixed_wiring";
    if (scope == BL_SCOPE_TRIAL)
        return "independent_randomised_blocks";
    return "independent_wiring_blocks";
}

static bl_status summarise(const ectx *c, size_t i, const bl_run_result *run,
                           bl_target_summary *s, double *scratch, bl_error *err)
{
    const tinfo *t = &c->t[i];
    const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    const bl_trial_result *rows = run->trials + i * per;
    memset(s, 0, sizeof *s);
    s->target_id = t->spec->id;
    s->task = t->spec->task_options.kind;
    s->outcome_key = rows[0].outcome_key;
    s->independent_unit = unit_of(c->ev->construction_scope);
    s->scoring_window = t->spec->horizon - c->ev->warmup;
    for (size_t k = 0; k < per; k++) {
        if (rows[k].status == BL_TRIAL_COMPLETED)
            s->completed_trials++;
        else
            s->failed_trials++; /* incomplete counts as failed (§5.2 step 1) */
    }
    /* Block values: blocks with every trial completed, in block order. */
    double *blocks = scratch, *vals = scratch + c->ev->blocks;
    size_t m = 0;
    for (int64_t b = 0; b < c->ev->blocks; b++) {
        bool whole = true;
        for (int64_t k = 0; k < c->ev->trials_per_block; k++) {
            const bl_trial_result *r = &rows[b * c->ev->trials_per_block + k];
            whole = whole && r->status == BL_TRIAL_COMPLETED;
            vals[k] = r->raw;
        }
        if (whole)
            blocks[m++] = bl_np_mean(vals, (size_t)c->ev->trials_per_block);
    }
    s->independent_blocks = m;
    const bool estimate = s->failed_trials == 0; /* no estimate over survivors */
    s->raw = estimate ? bl_np_mean(blocks, m) : NAN;
    bl_outcome_adjust(s->raw, t->cal, &s->normalised, &s->normalisation, s->calibration_id);
    if (!estimate)
        return BL_OK;
    bl_seed seed;
    bl_status st = summary_seed(c, t, &seed, err);
    if (st == BL_OK)
        st = bl_bootstrap_interval(blocks, m, &seed, BL_BOOTSTRAP_REPETITIONS, s->raw_interval,
                                   &s->has_raw_interval, err);
    if (st == BL_OK && t->cal) {
        st = bl_adjusted_interval_compute(blocks, m, t->cal, &seed, BL_BOOTSTRAP_REPETITIONS,
                                          &s->adjusted, err);
        s->has_adjusted = st == BL_OK;
    }
    return st;
}

static bl_status contrast(const ectx *c, size_t i, const bl_run_result *run, bl_contrast *out,
                          double *scratch, bl_error *err)
{
    const tinfo *t = &c->t[i], *r = &c->t[(size_t)t->reference];
    const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    const bl_trial_result *a = run->trials + i * per,
                          *b = run->trials + (size_t)t->reference * per;
    memset(out, 0, sizeof *out);
    out->target_id = t->spec->id;
    out->reference_id = r->spec->id;
    out->key = a[0].outcome_key;
    bool complete = true;
    for (size_t k = 0; k < per; k++) {
        if (strcmp(a[k].world_seed, b[k].world_seed) != 0)
            return bl_fail(err, BL_ERUNTIME, "paired contrast has different world identities");
        complete = complete && a[k].status == BL_TRIAL_COMPLETED &&
                   b[k].status == BL_TRIAL_COMPLETED;
    }
    if (!complete) {
        out->status = BL_CONTRAST_FAILED_PAIR;
        return BL_OK;
    }
    out->status = BL_CONTRAST_PAIRED_RAW;
    out->nblocks = (size_t)c->ev->blocks;
    out->block_differences = bl_mallocarray(out->nblocks, sizeof *out->block_differences);
    if (!out->block_differences)
        return nomem(err);
    for (int64_t blk = 0; blk < c->ev->blocks; blk++) {
        for (int64_t k = 0; k < c->ev->trials_per_block; k++) {
            const size_t j = (size_t)(blk * c->ev->trials_per_block + k);
            scratch[k] = a[j].raw - b[j].raw;
        }
        out->block_differences[blk] = bl_np_mean(scratch, (size_t)c->ev->trials_per_block);
    }
    out->estimate = bl_np_mean(out->block_differences, out->nblocks);
    bl_seed seed;
    bl_status st = contrast_seed(c, t, r, &seed, err);
    if (st == BL_OK)
        st = bl_bootstrap_interval(out->block_differences, out->nblocks, &seed,
                                   BL_BOOTSTRAP_REPETITIONS, out->interval, &out->has_interval,
                                   err);
    return st;
}

/* §4.10: one frozen record per target of a calibrate plan. */
static bl_status freeze(const ectx *c, size_t i, const bl_run_result *run, bl_calibration **out,
                        bl_error *err)
{
    const tinfo *t = &c->t[i];
    const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    const bl_trial_result *rows = run->trials + i * per;
    for (size_t k = 0; k < per; k++)
        if (rows[k].status != BL_TRIAL_COMPLETED)
            return bl_fail(err, BL_ERUNTIME,
                           "cannot freeze a calibration containing failed trajectories");
    for (size_t k = 0; k < per; k++)
        if (isnan(rows[k].raw))
            return bl_fail(err, BL_ERUNTIME,
                           "cannot freeze a calibration containing missing outcomes");
    if (bl_task_is_probe(t->spec->task_options.kind))
        return bl_calibration_analytic(t->signature, out, err);
    double *scores = bl_mallocarray(per, sizeof *scores);
    bl_json *ids = bl_json_array();
    bl_status st = !scores || !ids ? nomem(err) : BL_OK;
    for (size_t k = 0; k < per && st == BL_OK; k++) {
        scores[k] = rows[k].raw;
        st = bl_json_array_append(ids, bl_json_string(rows[k].world_seed), err);
    }
    if (st == BL_OK)
        st = bl_calibration_empirical(t->signature, scores, per, NAN, ids, c->ev->root_seed,
                                      BL_BOOTSTRAP_REPETITIONS, out, err);
    bl_free(scores);
    bl_json_destroy(ids);
    return st;
}

/* Appends a copy of `cal` unless a record with its id is listed. */
static bl_status list_calibration(bl_evaluation *e, const bl_calibration *cal, bl_error *err)
{
    for (size_t k = 0; k < e->ncalibrations; k++)
        if (strcmp(e->calibrations[k]->id, cal->id) == 0)
            return BL_OK;
    bl_json *j = NULL;
    bl_calibration *copy = NULL;
    bl_status st = bl_calibration_json(cal, &j, err);
    if (st == BL_OK)
        st = bl_calibration_from_json(j, &copy, err);
    bl_json_destroy(j);
    if (st == BL_OK)
        e->calibrations[e->ncalibrations++] = copy;
    return st;
}

void bl_evaluation_destroy(bl_evaluation *e)
{
    if (!e)
        return;
    bl_run_result_destroy(e->run);
    bl_free(e->summaries);
    for (size_t k = 0; e->contrasts && k < e->ncontrasts; k++)
        bl_free(e->contrasts[k].block_differences);
    bl_free(e->contrasts);
    for (size_t k = 0; e->calibrations && k < e->ncalibrations; k++)
        bl_calibration_destroy(e->calibrations[k]);
    bl_free(e->calibrations);
    bl_free(e);
}

/* The evaluation of the whole run's rows e->run: adjusted outcomes,
 * summaries, contrasts, calibrations. On failure e is destroyed. */
static bl_status finish(const ectx *c, bl_evaluation *e, bl_evaluation **out, bl_error *err)
{
    double *scratch = NULL;
    bl_status st = BL_OK;
    /* Every trial's outcome against its target's calibration. */
    const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    for (size_t j = 0; j < e->run->ntrials; j++) {
        bl_trial_result *r = &e->run->trials[j];
        bl_outcome_adjust(r->raw, c->t[j / per].cal, &r->normalised, &r->normalisation,
                          r->calibration_id);
    }
    e->ntargets = c->ntargets;
    e->summaries = bl_calloc(c->ntargets, sizeof *e->summaries);
    e->contrasts = bl_calloc(c->ntargets, sizeof *e->contrasts);
    e->calibrations = bl_calloc(2 * c->ntargets, sizeof *e->calibrations);
    /* The preflight bounded blocks × trials, but not yet their sum. */
    int64_t nscratch;
    if (!__builtin_add_overflow(c->ev->blocks, c->ev->trials_per_block, &nscratch))
        scratch = bl_mallocarray((size_t)nscratch, sizeof *scratch);
    if (!e->summaries || !e->contrasts || !e->calibrations || !scratch) {
        st = nomem(err);
        goto done;
    }
    for (size_t i = 0; i < c->ntargets && st == BL_OK; i++)
        st = summarise(c, i, e->run, &e->summaries[i], scratch, err);
    for (size_t i = 0; i < c->ntargets && st == BL_OK; i++)
        if (c->t[i].reference >= 0)
            st = contrast(c, i, e->run, &e->contrasts[e->ncontrasts++], scratch, err);
    if (st == BL_OK && strcmp(c->ev->operation, "calibrate") == 0)
        for (size_t i = 0; i < c->ntargets && st == BL_OK; i++) {
            bl_calibration *made = NULL;
            st = freeze(c, i, e->run, &made, err);
            if (st == BL_OK) {
                st = list_calibration(e, made, err);
                bl_calibration_destroy(made);
            }
        }
    for (size_t i = 0; i < c->ntargets && st == BL_OK; i++)
        if (c->t[i].cal)
            st = list_calibration(e, c->t[i].cal, err);
    if (st == BL_OK) {
        *out = e;
        e = NULL;
    }
done:
    bl_free(scratch);
    bl_evaluation_destroy(e);
    return st;
}

/* finish() of a whole run's rows, which it takes over. */
static bl_status evaluate_run(const ectx *c, bl_run_result *run, bl_evaluation **out,
                              bl_error *err)
{
    bl_evaluation *e = bl_calloc(1, sizeof *e);
    if (!e) {
        bl_run_result_destroy(run);
        return nomem(err);
    }
    e->run = run;
    return finish(c, e, out, err);
}

bl_status bl_evaluate_prepared(const bl_evaluation_prepared *p, const bl_run_hooks *hooks,
                               bl_evaluation **out, bl_error *err)
{
    *out = NULL;
    bl_run_result *run = NULL;
    bl_status st = bl_run_execute_prepared(p->c.run, hooks, &run, err);
    if (st != BL_OK)
        return st;
    /* A preparation of a part: its rows alone, combined (the whole plan
     * when N = 1, refused as not covering the plan otherwise). */
    if (run->jobs)
        return bl_evaluate_parts(p, &run, 1, out, err);
    return evaluate_run(&p->c, run, out, err);
}

bl_status bl_evaluate_part(const bl_evaluation_prepared *p, const bl_run_hooks *hooks,
                           bl_run_result **out, bl_error *err)
{
    return bl_run_execute_prepared(p->c.run, hooks, out, err);
}

bl_status bl_run_part_decode(const bl_evaluation_prepared *p, const void *data, size_t len,
                             bl_run_result **out, bl_error *err)
{
    return bl_run_part_decode_prepared(p->c.run, data, len, out, err);
}

bl_status bl_evaluate_parts(const bl_evaluation_prepared *p, bl_run_result **parts,
                            size_t nparts, bl_evaluation **out, bl_error *err)
{
    *out = NULL;
    bl_run_result *run = NULL;
    const bl_status st = bl_run_combine(p->c.run, parts, nparts, &run, err);
    return st != BL_OK ? st : evaluate_run(&p->c, run, out, err);
}

bl_status bl_evaluate(const bl_resolved_plan *plan, const bl_execution *x,
                      const bl_calibration *const *supplied, size_t nsupplied,
                      const bl_run_hooks *hooks, bl_evaluation **out, bl_error *err)
{
    *out = NULL;
    bl_evaluation_prepared *p = NULL;
    bl_status st = bl_evaluation_prepare(plan, x, supplied, nsupplied, &p, err);
    if (st == BL_OK)
        st = bl_evaluate_prepared(p, hooks, out, err);
    bl_evaluation_prepared_destroy(p);
    return st;
}

/* ---- JSON ---------------------------------------------------------------------- */

static bl_json *pair_or_null(bool has, const double p[2])
{
    if (!has)
        return bl_json_null();
    bl_json *a = bl_json_array();
    if (a && (bl_json_array_append(a, bl_json_real(p[0]), NULL) != BL_OK ||
              bl_json_array_append(a, bl_json_real(p[1]), NULL) != BL_OK)) {
        bl_json_destroy(a);
        return NULL;
    }
    return a;
}

bl_status bl_target_summary_json(const bl_target_summary *s, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object(), *oc = NULL, *adj = NULL;
    bl_status st = bl_task_outcome_json(s->outcome_key, s->raw, s->normalised, s->normalisation,
                                        s->calibration_id, s->scoring_window, &oc, err);
    if (st == BL_OK && s->has_adjusted)
        st = bl_adjusted_interval_json(&s->adjusted, &adj, err);
    else if (st == BL_OK)
        adj = bl_json_null();
    bl_json_put(&st, o, "target_id", bl_json_string(s->target_id), err);
    bl_json_put(&st, o, "task", bl_json_string(bl_task_name(s->task)), err);
    bl_json_put(&st, o, "outcome", oc, err);
    bl_json_put(&st, o, "completed_trials", bl_json_int((int64_t)s->completed_trials), err);
    bl_json_put(&st, o, "failed_trials", bl_json_int((int64_t)s->failed_trials), err);
    bl_json_put(&st, o, "independent_blocks", bl_json_int((int64_t)s->independent_blocks), err);
    bl_json_put(&st, o, "independent_unit", bl_json_string(s->independent_unit), err);
    bl_json_put(&st, o, "raw_interval", pair_or_null(s->has_raw_interval, s->raw_interval), err);
    bl_json_put(&st, o, "adjusted", adj, err);
    return bl_json_hand_over(st, o, out);
}

bl_status bl_contrast_json(const bl_contrast *c, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "target_id", bl_json_string(c->target_id), err);
    bl_json_put(&st, o, "reference_id", bl_json_string(c->reference_id), err);
    bl_json_put(&st, o, "status",
                bl_json_string(c->status == BL_CONTRAST_PAIRED_RAW ? "paired_raw" : "failed_pair"),
                err);
    if (c->status == BL_CONTRAST_PAIRED_RAW) {
        bl_json *diffs = bl_json_array();
        for (size_t k = 0; k < c->nblocks; k++)
            bl_json_push(&st, diffs, bl_json_real(c->block_differences[k]), err);
        bl_json_put(&st, o, "key", bl_json_string(c->key), err);
        bl_json_put(&st, o, "estimate", bl_json_real(c->estimate), err);
        bl_json_put(&st, o, "block_differences", diffs, err);
        bl_json_put(&st, o, "interval", pair_or_null(c->has_interval, c->interval), err);
    }
    return bl_json_hand_over(st, o, out);
}
