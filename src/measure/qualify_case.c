/* One lockstep case of `qualify` (see qualify.c for the protocol): the
 * world, wiring, batches and cohorts of a (configuration, task) pair, run
 * frame by frame in float64 and float32 on identical inputs and noise, with
 * every state array compared after every frame and every world state after
 * every tick; then the inactive slot and world, and the reset. Also the
 * profile plan of a case, which the lockstep case and qualify.c's
 * whole-trial outcomes both run (so qualify.c uses this file, never the
 * other way round). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/task.h"
#include "measure_internal.h"
#include "qualify_internal.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a qualification");
}

typedef struct qcase {
    const bl_qualify_config *cfg;
    bl_task_kind task;
    char label[96];
    char world_prefix[64];
    const char *model_prefix;
    bl_model_kind kind;
    bl_falandays_config fc;
    bl_sorn_config sc;
    bl_task_options opts;
    bool has_opts;
    bl_task_definition def;
    size_t n, r, n_e;
    bl_world_init *world;
    bl_falandays_init *fal;
    bl_sorn_init *sorn;
    bl_model *m64, *m32;
    bl_worlds *w64, *w32;
    double *in64, *nz64, *marg; /* marg: this frame's margins and thresholds, then the last */
    float *in32, *nz32, *eff32;
    bl_snapshot *init64[2], *init32[2], *winit64[2], *winit32[2], *before64;
    /* What the case found. */
    const char *precision;      /* NULL: passed; else the rejected cast's message */
    char precision_msg[BL_ERROR_MAX];
    int64_t frames, ticks, compared_frames, diverged_at;
    size_t snapshots;
    double max_abs;
    bool failed;
} qcase;

static void qcase_clear(qcase *c)
{
    if (c->has_opts)
        bl_task_options_clear(&c->opts);
    bl_world_init_destroy(c->world);
    bl_falandays_init_destroy(c->fal);
    bl_sorn_init_destroy(c->sorn);
    bl_model_destroy(c->m64);
    bl_model_destroy(c->m32);
    bl_worlds_destroy(c->w64);
    bl_worlds_destroy(c->w32);
    bl_free(c->in64);
    bl_free(c->nz64);
    bl_free(c->marg);
    bl_free(c->in32);
    bl_free(c->nz32);
    bl_free(c->eff32);
    for (int s = 0; s < 2; s++) {
        bl_snapshot_destroy(c->init64[s]);
        bl_snapshot_destroy(c->init32[s]);
        bl_snapshot_destroy(c->winit64[s]);
        bl_snapshot_destroy(c->winit32[s]);
    }
    bl_snapshot_destroy(c->before64);
}

static bl_status case_gen(const qcase *c, int64_t seed, const char *stream, bl_gen *g,
                          bl_error *err)
{
    const bl_key keys[2] = {BL_KEY_S(c->cfg->name), BL_KEY_S(bl_task_name(c->task))};
    return bl_gen_for(g, seed, BL_QUALIFY_PARTITION, stream, keys, 2, err);
}

/* A float32 cast the batch or cohort refused (models.md §5.3, tasks'
 * "after casting to float32") is the precision check failing: a verdict of
 * the case, not an error of the program. */
static bl_status precision(qcase *c, bl_status st, const bl_error *cast_err, bl_error *err)
{
    if (st != BL_EVALUE) {
        if (st != BL_OK && err)
            *err = *cast_err;
        return st;
    }
    snprintf(c->precision_msg, sizeof c->precision_msg, "%s", cast_err->msg);
    c->precision = c->precision_msg;
    return BL_OK;
}

/* World, wiring, batches, cohorts and buffers of a case. */
static bl_status case_setup(qcase *c, const bl_qualify_options *o, bl_error *err)
{
    bl_gen g;
    bl_status st = bl_task_options_default(c->task, &c->opts, err);
    if (st != BL_OK)
        return st;
    c->has_opts = true;
    bl_task_define(&c->opts, &c->def);
    c->n = (size_t)o->count;
    c->r = c->def.n_inputs;
    if ((st = case_gen(c, o->seed, "world", &g, err)) != BL_OK ||
        (st = bl_world_prepare(&c->opts, &g, 0, &c->world, err)) != BL_OK ||
        (st = case_gen(c, o->seed, "construction", &g, err)) != BL_OK)
        return st;
    const size_t ne = c->def.n_effectors;
    bl_error cast_err = {0};
    if (c->kind == BL_MODEL_FALANDAYS) {
        if ((st = bl_falandays_construct(&c->fc, c->n, c->r, ne, &g, &c->fal, err)) != BL_OK)
            return st;
        const bl_falandays_init *pair[2] = {c->fal, c->fal};
        if ((st = bl_model_create_falandays(pair, 2, BL_FLOAT64, &c->m64, err)) != BL_OK)
            return st;
        st = precision(c, bl_model_create_falandays(pair, 2, BL_FLOAT32, &c->m32, &cast_err),
                       &cast_err, err);
    } else {
        if ((st = bl_sorn_construct(&c->sc, c->n, c->r, ne, &g, &c->sorn, err)) != BL_OK)
            return st;
        const bl_sorn_init *pair[2] = {c->sorn, c->sorn};
        c->n_e = c->sorn->n_e;
        if ((st = bl_model_create_sorn(pair, 2, BL_FLOAT64, &c->m64, err)) != BL_OK)
            return st;
        st = precision(c, bl_model_create_sorn(pair, 2, BL_FLOAT32, &c->m32, &cast_err),
                       &cast_err, err);
    }
    if (st != BL_OK)
        return st;
    const bl_world_init *worlds[2] = {c->world, c->world};
    const int64_t horizons[2] = {c->def.default_horizon, c->def.default_horizon};
    st = bl_worlds_create(worlds, 2, horizons, 0, BL_FLOAT64, &c->w64, err);
    if (st == BL_OK && !c->precision)
        st = precision(c, bl_worlds_create(worlds, 2, horizons, 0, BL_FLOAT32, &c->w32, &cast_err),
                       &cast_err, err);
    if (st != BL_OK || c->precision)
        return st;
    c->in64 = bl_calloc(2 * c->r, sizeof *c->in64);
    c->in32 = bl_calloc(2 * c->r, sizeof *c->in32);
    c->nz64 = bl_calloc(2 * c->n, sizeof *c->nz64);
    c->nz32 = bl_calloc(2 * c->n, sizeof *c->nz32);
    c->eff32 = bl_calloc(2 * ne, sizeof *c->eff32);
    c->marg = bl_calloc(4 * c->n, sizeof *c->marg);
    if (!c->in64 || !c->in32 || !c->nz64 || !c->nz32 || !c->eff32 || !c->marg)
        return nomem(err);
    for (size_t s = 0; s < 2; s++)
        if ((st = bl_model_snapshot(c->m64, s, &c->init64[s], err)) != BL_OK ||
            (st = bl_model_snapshot(c->m32, s, &c->init32[s], err)) != BL_OK ||
            (st = bl_worlds_snapshot(c->w64, s, &c->winit64[s], err)) != BL_OK ||
            (st = bl_worlds_snapshot(c->w32, s, &c->winit32[s], err)) != BL_OK)
            return st;
    return BL_OK;
}

/* One comparison, folded into the case's figures. */
static bl_status check(qcase *c, bl_qualify_ledger *l, const char *stage, int64_t step,
                       bool model, const char *what, const bl_snapshot *observed,
                       const bl_snapshot *expected, bool identical,
                       const bl_qualify_margins *margins, bl_qualify_verdict *verdict,
                       bl_error *err)
{
    const bl_qualify_site site = {c->label, stage, step,
                                  model ? c->model_prefix : c->world_prefix, what};
    bl_qualify_result r;
    bl_status st = bl_qualify_compare(l, &site, observed, expected, identical, margins, &r, err);
    if (st != BL_OK)
        return st;
    c->snapshots += r.snapshots;
    if (r.max_abs > c->max_abs)
        c->max_abs = r.max_abs;
    c->failed |= r.verdict == BL_QUALIFY_FAILED;
    if (verdict)
        *verdict = r.verdict;
    return BL_OK;
}

static const char cross[] = "float32 vs float64";

/* Slot 0 of both batches after frame `frame`, under the rules; the
 * remembered arrays take the previous frame's margins (none before the
 * first frame: they hold the initial state there, equal in both dtypes). */
static bl_status compare_frame(qcase *c, bl_qualify_ledger *l, int64_t frame, bool *comparing,
                               bl_error *err)
{
    bl_snapshot *s64 = NULL, *s32 = NULL;
    bl_status st;
    if ((st = bl_model_snapshot(c->m64, 0, &s64, err)) != BL_OK ||
        (st = bl_model_snapshot(c->m32, 0, &s32, err)) != BL_OK)
        goto done;
    const size_t n = c->n;
    double *cur = c->marg, *cur_t = c->marg + n, *prev = c->marg + 2 * n,
           *prev_t = c->marg + 3 * n;
    bl_qualify_frame_margins(c->kind, c->fc.threshold_mult, c->before64, s64, cur, cur_t);
    bl_qualify_margins m;
    bl_qualify_binary_arrays(c->kind, n, c->n_e, cur, cur_t, frame > 1 ? prev : NULL,
                             frame > 1 ? prev_t : NULL, &m);
    bl_qualify_verdict v;
    st = check(c, l, "frame", frame, true, cross, s32, s64, false, &m, &v, err);
    if (st != BL_OK)
        goto done;
    if (v == BL_QUALIFY_DIVERGED) {
        /* From here on the float32 state is legitimately elsewhere. */
        c->diverged_at = frame;
        *comparing = false;
        goto done;
    }
    c->compared_frames++;
    /* After a failure the states differ anyway; the first one says it. */
    *comparing = v == BL_QUALIFY_PASSED;
    memcpy(prev, cur, 2 * n * sizeof *cur);
    bl_snapshot_destroy(c->before64);
    c->before64 = s64;
    s64 = NULL;
done:
    bl_snapshot_destroy(s64);
    bl_snapshot_destroy(s32);
    return st;
}

static bl_status compare_worlds(qcase *c, bl_qualify_ledger *l, int64_t tick, bl_error *err)
{
    bl_snapshot *s64 = NULL, *s32 = NULL;
    bl_status st;
    if ((st = bl_worlds_snapshot(c->w64, 0, &s64, err)) == BL_OK &&
        (st = bl_worlds_snapshot(c->w32, 0, &s32, err)) == BL_OK)
        st = check(c, l, "tick", tick, false, cross, s32, s64, false, NULL, NULL, err);
    bl_snapshot_destroy(s64);
    bl_snapshot_destroy(s32);
    return st;
}

/* The float32 copy of n doubles (round to nearest). */
static void round_to_float(const double *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)src[i];
}

static bl_status lockstep(qcase *c, const bl_qualify_options *o, bl_qualify_ledger *l,
                          bl_error *err)
{
    static const int32_t active[2] = {1, 0};
    const size_t n = c->n, r = c->r, ne = c->def.n_effectors;
    const int32_t F = c->def.neural_frames;
    const int64_t ticks = (o->frames + F - 1) / F; /* whole ticks */
    const bool noisy = c->kind == BL_MODEL_FALANDAYS;
    bl_gen drive;
    bl_status st = case_gen(c, o->seed, "drive", &drive, err);
    if (st != BL_OK)
        return st;
    const bl_matrix x64 = {BL_FLOAT64, 2, r, c->in64}, x32 = {BL_FLOAT32, 2, r, c->in32};
    const bl_matrix z64 = {BL_FLOAT64, 2, n, c->nz64}, z32 = {BL_FLOAT32, 2, n, c->nz32};
    /* The model's views are valid until its next operation (model.h). */
    bl_matrix e64 = {BL_FLOAT64, 2, ne, NULL};
    const bl_matrix e32 = {BL_FLOAT32, 2, ne, c->eff32};
    const int32_t *done = bl_worlds_done(c->w64), *tfin = bl_worlds_finite(c->w64),
                  *wticks = bl_worlds_ticks(c->w64);

    /* The initial states, and the float64 "before" of the first frame. */
    if ((st = check(c, l, "initial", 0, true, cross, c->init32[0], c->init64[0], false, NULL,
                    NULL, err)) != BL_OK ||
        (st = check(c, l, "initial", 0, false, cross, c->winit32[0], c->winit64[0], false, NULL,
                    NULL, err)) != BL_OK ||
        (st = bl_model_snapshot(c->m64, 0, &c->before64, err)) != BL_OK)
        return st;
    bool comparing = true;
    for (int64_t t = 0; t < ticks; t++) {
        /* The runner's activity rule (models.md §4 item 5), for the slot
         * that runs: a world that ended or failed takes no more frames. */
        if (done[0] || !tfin[0] || !bl_model_finite(c->m64)[0] ||
            wticks[0] >= c->def.default_horizon)
            break;
        for (int32_t f = 1; f <= F; f++) {
            if (c->frames + 1 == BL_QUALIFY_FREEZE_FRAME &&
                ((st = bl_model_freeze_weights(c->m64, active, 2, err)) != BL_OK ||
                 (st = bl_model_freeze_weights(c->m32, active, 2, err)) != BL_OK))
                return st;
            if ((st = bl_worlds_encode(c->w64, f, active, 2, err)) != BL_OK ||
                (st = bl_worlds_encode(c->w32, f, active, 2, err)) != BL_OK)
                return st;
            memcpy(c->in64, bl_worlds_inputs(c->w64), 2 * r * sizeof *c->in64);
            round_to_float(c->in64, c->in32, 2 * r);
            /* Row k of the drive stream for the running slot; the inactive
             * slot's row stays zero, as the runner gives it. */
            if (noisy) {
                bl_gen_standard_normal_fill(&drive, c->nz64, n);
                round_to_float(c->nz64, c->nz32, n);
            }
            if ((st = bl_model_step(c->m64, &x64, &z64, active, 2, err)) != BL_OK ||
                (st = bl_model_step(c->m32, &x32, &z32, active, 2, err)) != BL_OK)
                return st;
            c->frames++;
            if (comparing && (st = compare_frame(c, l, c->frames, &comparing, err)) != BL_OK)
                return st;
            e64.data = bl_model_effector_data(c->m64);
            round_to_float(e64.data, c->eff32, 2 * ne);
            if ((st = bl_worlds_accumulate(c->w64, &e64, f, active, 2, err)) != BL_OK ||
                (st = bl_worlds_accumulate(c->w32, &e32, f, active, 2, err)) != BL_OK)
                return st;
        }
        if ((st = bl_worlds_advance(c->w64, &e64, active, 2, err)) != BL_OK ||
            (st = bl_worlds_advance(c->w32, &e32, active, 2, err)) != BL_OK)
            return st;
        c->ticks++;
        if ((st = compare_worlds(c, l, c->ticks, err)) != BL_OK)
            return st;
    }
    return BL_OK;
}

/* The inactive slot and world, untouched; then a reset of the active slot
 * back to its creation-time state; both bit for bit within each dtype. */
static bl_status untouched_and_reset(qcase *c, bl_qualify_ledger *l, bl_error *err)
{
    static const int32_t active[2] = {1, 0};
    /* Slot 1 of each batch and world against its initial state: model
     * float64, float32, then world float64, float32. */
    static const char *const dtype[4] = {"float64", "float32", "float64", "float32"};
    const bl_snapshot *const initial[4] = {c->init64[1], c->init32[1], c->winit64[1],
                                           c->winit32[1]};
    bl_snapshot *s[4] = {0};
    bl_status st;
    if ((st = bl_model_snapshot(c->m64, 1, &s[0], err)) != BL_OK ||
        (st = bl_model_snapshot(c->m32, 1, &s[1], err)) != BL_OK ||
        (st = bl_worlds_snapshot(c->w64, 1, &s[2], err)) != BL_OK ||
        (st = bl_worlds_snapshot(c->w32, 1, &s[3], err)) != BL_OK)
        goto done;
    for (int k = 0; k < 4; k++)
        if ((st = check(c, l, "inactive", 0, k < 2, dtype[k], s[k], initial[k], true, NULL, NULL,
                        err)) != BL_OK)
            goto done;
    for (int k = 0; k < 4; k++) {
        bl_snapshot_destroy(s[k]);
        s[k] = NULL;
    }
    if ((st = bl_model_reset(c->m64, active, 2, err)) != BL_OK ||
        (st = bl_model_reset(c->m32, active, 2, err)) != BL_OK ||
        (st = bl_model_snapshot(c->m64, 0, &s[0], err)) != BL_OK ||
        (st = bl_model_snapshot(c->m32, 0, &s[1], err)) != BL_OK ||
        (st = check(c, l, "reset", 0, true, "float64", s[0], c->init64[0], true, NULL, NULL,
                    err)) != BL_OK)
        goto done;
    st = check(c, l, "reset", 0, true, "float32", s[1], c->init32[0], true, NULL, NULL, err);
done:
    for (int k = 0; k < 4; k++)
        bl_snapshot_destroy(s[k]);
    return st;
}

static bl_json *case_json(const qcase *c)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "model", bl_json_string(c->cfg->name), NULL);
    bl_json_put(&st, o, "task", bl_json_string(bl_task_name(c->task)), NULL);
    bl_json_put(&st, o, "neural_frames", bl_json_int(c->def.neural_frames), NULL);
    bl_json_put(&st, o, "frames", bl_json_int(c->frames), NULL);
    bl_json_put(&st, o, "ticks", bl_json_int(c->ticks), NULL);
    bl_json_put(&st, o, "compared_frames", bl_json_int(c->compared_frames), NULL);
    bl_json_put(&st, o, "diverged_at_frame",
                c->diverged_at ? bl_json_int(c->diverged_at) : bl_json_null(), NULL);
    bl_json_put(&st, o, "snapshots", bl_json_int((int64_t)c->snapshots), NULL);
    bl_json_put(&st, o, "maximum_absolute_difference", bl_json_real(c->max_abs), NULL);
    bl_json_put(&st, o, "status",
                bl_json_string(c->failed || c->precision ? "failed" : "passed"), NULL);
    bl_json_put(&st, o, "precision_check",
                bl_json_string(c->precision ? c->precision : "passed"), NULL);
    return bl_measure_built(st, o);
}

/* ---- the plan of a case ------------------------------------------------------ */

/* A profile plan of one configuration on one task: `trials` blocks of one
 * trial (so every trial has its own wiring), in `dtype`. */
bl_status bl_qualify_case_plan(const bl_qualify_config *cfg, bl_task_kind task,
                               const bl_qualify_options *o, int64_t trials, const char *dtype,
                               bl_resolved_plan **out, bl_error *err)
{
    *out = NULL;
    char text[512];
    snprintf(text, sizeof text,
             "{\"count\": %" PRId64 ", \"node\": {\"kind\": \"%s\", \"parameters\": %s}, "
             "\"task\": {\"kind\": \"%s\"}}",
             o->count, cfg->node, cfg->parameters, bl_task_name(task));
    bl_json *composition = NULL, *evaluation = NULL, *numerics = NULL;
    bl_plan *plan = NULL;
    bl_status st = bl_json_parse(text, strlen(text), "composition", &composition, err);
    if (st != BL_OK)
        goto done;
    snprintf(text, sizeof text,
             "{\"blocks\": %" PRId64 ", \"trials_per_block\": 1, \"root_seed\": %" PRId64
             ", \"seed_partition\": \"" BL_QUALIFY_PARTITION "\"}",
             trials, o->seed);
    if ((st = bl_json_parse(text, strlen(text), "evaluation", &evaluation, err)) != BL_OK)
        goto done;
    snprintf(text, sizeof text, "{\"dtype\": \"%s\"}", dtype);
    if ((st = bl_json_parse(text, strlen(text), "numerics", &numerics, err)) != BL_OK ||
        (st = bl_plan_profile(composition, evaluation, numerics, "qualify", false, &plan,
                              err)) != BL_OK)
        goto done;
    st = bl_plan_resolve(plan, out, err);
done:
    bl_plan_destroy(plan);
    bl_json_destroy(composition);
    bl_json_destroy(evaluation);
    bl_json_destroy(numerics);
    return st;
}

bl_status bl_qualify_case_run(const bl_qualify_config *cfg, bl_task_kind task,
                              const bl_qualify_options *o, bl_qualify_ledger *l, bl_json *cases,
                              bl_error *err)
{
    qcase c = {.cfg = cfg, .task = task};
    snprintf(c.label, sizeof c.label, "%s/%s", cfg->name, bl_task_name(task));
    snprintf(c.world_prefix, sizeof c.world_prefix, "%s/world", bl_task_name(task));
    c.model_prefix = cfg->node;
    /* The configuration as resolution completes it. */
    bl_resolved_plan *plan = NULL;
    bl_status st = bl_qualify_case_plan(cfg, task, o, 1, "float64", &plan, err);
    if (st == BL_OK) {
        const bl_target_spec *t = bl_resolved_target_spec(plan, 0);
        c.kind = t->model;
        if (c.kind == BL_MODEL_FALANDAYS) {
            c.fc = t->falandays;
            c.fc.input_link_p = NULL; /* the plan's, released below */
        } else {
            c.sc = t->sorn;
        }
    }
    bl_resolved_plan_destroy(plan);
    if (st == BL_OK)
        st = case_setup(&c, o, err);
    if (st == BL_OK && c.precision)
        st = bl_qualify_fail_message(l, c.label, "precision_check", c.precision, err);
    else if (st == BL_OK)
        st = lockstep(&c, o, l, err);
    if (st == BL_OK && !c.precision)
        st = untouched_and_reset(&c, l, err);
    if (st == BL_OK) {
        bl_json_push(&st, cases, case_json(&c), err);
    } else {
        bl_error_prefix(err, "%s", c.label);
    }
    qcase_clear(&c);
    return st;
}

