/* The evaluation runner (spec/platform.md §4, spec/tasks.md §1.4): job
 * enumeration, seeds, preflight, cohorts, batches and trial-major
 * execution.
 *
 * A batch (a cohort slice of at most the admitted capacity) is prepared
 * first: every slot's seeds and world, then every distinct wiring of the
 * batch, constructed once. Then each slot runs its whole trial on one
 * thread, with a model batch and a world cohort of its own, so its weights
 * stay in cache from its first frame to its last. Nothing a slot computes
 * depends on its neighbours: every stream is keyed by the job's scientific
 * identity, the noise a slot receives is row k of its own tape for its k-th
 * executed frame, and the null's uniforms are its own control stream. So
 * batch size, thread count and tile size change no bit of any row; the tile
 * size only decides how many noise frames are drawn ahead. */
#include <math.h>
#include <sys/resource.h>
#include <time.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

/* ---- results ---------------------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bl_run_result_destroy(bl_run_result *r)
{
    if (!r)
        return;
    for (size_t j = 0; r->probes && j < r->ntrials; j++)
        bl_free(r->probes[j].features);
    for (size_t j = 0; r->replays && j < r->ntrials; j++)
        bl_json_destroy(r->replays[j]);
    bl_free(r->probes);
    bl_free(r->replays);
    bl_free(r->processing_order);
    bl_free(r->jobs);
    bl_free(r->trials);
    bl_free(r->batch_capacities);
    bl_free(r->trial_bytes);
    bl_free(r);
}

static int64_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (int64_t)ru.ru_maxrss * 1024; /* Linux reports KiB */
}

bl_status bl_run_new_result(const run_ctx *c, size_t n, bl_run_result **out, bl_error *err)
{
    const bl_execution *x = c->x;
    bl_run_result *res = bl_calloc(1, sizeof *res);
    if (!res || !(res->trials = bl_calloc(n, sizeof *res->trials)) ||
        !(res->batch_capacities = bl_calloc(c->ncohorts, sizeof *res->batch_capacities)) ||
        !(res->trial_bytes = bl_calloc(c->ncohorts, sizeof *res->trial_bytes)) ||
        !(res->processing_order = bl_calloc(n, sizeof *res->processing_order)) ||
        (x->recording == BL_RECORDING_PROBE_EVENTS &&
         !(res->probes = bl_calloc(n, sizeof *res->probes))) ||
        (x->recording == BL_RECORDING_REPLAY &&
         !(res->replays = bl_calloc(n, sizeof *res->replays)))) {
        bl_run_result_destroy(res);
        return nomem(err);
    }
    res->ntrials = n;
    res->part = res->nparts = 1;
    res->ncohorts = c->ncohorts;
    res->requested_batch_size = x->batch_size;
    res->recording_estimate_bytes = c->recording_bytes;
    res->allocation_budget = bl_execution_allocation_budget(x);
    res->cpu_threads = x->cpu_threads;
    for (size_t k = 0; k < c->ncohorts; k++) {
        res->batch_capacities[k] = c->cohorts[k].capacity;
        res->trial_bytes[k] = c->cohorts[k].trial_bytes;
    }
    *out = res;
    return BL_OK;
}

/* ---- a prepared run ---------------------------------------------------------- */

struct bl_run_prepared {
    bl_execution x;       /* the caller's policy, copied (ctx.x points here) */
    run_ctx ctx;          /* targets and cohorts with their job lists (owned) */
    double seconds;       /* what the preparation took */
};

/* The whole run (part 0), or part `part` of `nparts`. */
static bl_status prepare(const bl_resolved_plan *plan, const bl_execution *x, int64_t part,
                         int64_t nparts, bl_run_prepared **out, bl_error *err)
{
    *out = NULL;
    const double t0 = now();
    bl_run_prepared *p = bl_calloc(1, sizeof *p);
    if (!p)
        return nomem(err);
    p->x = *x;
    bl_status st = part ? bl_run_part_check(part, nparts, err) : BL_OK;
    if (st == BL_OK)
        st = bl_run_preflight_ctx(&p->ctx, plan, &p->x, !part, err);
    if (st == BL_OK && part)
        st = bl_run_ctx_restrict(&p->ctx, part, nparts, err);
    p->seconds = now() - t0;
    if (st == BL_OK)
        *out = p;
    else
        bl_run_prepared_destroy(p);
    return st;
}

const run_ctx *bl_run_prepared_ctx(const bl_run_prepared *p)
{
    return &p->ctx;
}

bl_status bl_run_prepare(const bl_resolved_plan *plan, const bl_execution *x,
                         bl_run_prepared **out, bl_error *err)
{
    return prepare(plan, x, 0, 0, out, err);
}

bl_status bl_run_prepare_part(const bl_resolved_plan *plan, const bl_execution *x, int64_t part,
                              int64_t nparts, bl_run_prepared **out, bl_error *err)
{
    return prepare(plan, x, part, nparts, out, err);
}

void bl_run_prepared_destroy(bl_run_prepared *p)
{
    if (!p)
        return;
    bl_run_ctx_clear(&p->ctx);
    bl_free(p);
}

bl_status bl_run_execute_prepared(const bl_run_prepared *p, const bl_run_hooks *hooks,
                                  bl_run_result **out, bl_error *err)
{
    *out = NULL;
    const double t0 = now();
    /* This execution's context: the preparation's targets and cohorts,
     * read-only, with its own hooks and its own carried wirings. */
    run_ctx c = p->ctx;
    c.hooks = hooks;
    c.carry = NULL;
    c.ncarry = 0;
    bl_status st = BL_OK;
    bl_run_result *res = NULL;
    const size_t nrows = c.part_first ? c.nrows : c.njobs;
    if ((st = bl_run_new_result(&c, nrows, &res, err)) != BL_OK)
        goto done;
    if (c.part_first) {
        if (!(res->jobs = bl_calloc(nrows, sizeof *res->jobs))) {
            st = nomem(err);
            goto done;
        }
        for (size_t i = 0, r = 0; i < c.ntargets; i++)
            for (size_t k = 0; k < c.part_count[i]; k++)
                res->jobs[r++] = c.part_first[i] + k;
        res->part = c.part;
        res->nparts = c.nparts;
    }
    const double t1 = now();
    res->seconds_preflight = p->seconds + (t1 - t0);

    size_t done_jobs = 0;
    for (size_t k = 0; k < c.ncohorts && st == BL_OK; k++) {
        const cohort *h = &c.cohorts[k];
        for (size_t first = 0; first < h->njobs && st == BL_OK;) {
            const size_t cap = (size_t)h->capacity;
            const size_t n = h->njobs - first < cap ? h->njobs - first : cap;
            st = bl_run_batch(&c, h, first, n, res->trials, res, err);
            first += n;
            done_jobs += n;
            if (st == BL_OK && hooks && hooks->progress)
                hooks->progress(hooks->ctx, done_jobs, nrows);
        }
    }
    if (st != BL_OK)
        goto done;
    /* Every job exactly once: the scheduler's own invariant. */
    for (size_t j = 0; j < nrows; j++)
        if (!res->trials[j].target_id) {
            st = bl_fail(err, BL_ERUNTIME, "internal scheduler omitted a trial");
            goto done;
        }
    res->seconds_execute = now() - t1;
    res->peak_rss_bytes = peak_rss();
    *out = res;
    res = NULL;
done:
    bl_run_release_carry(&c);
    bl_run_result_destroy(res);
    return st;
}

/* ---- parts combined ------------------------------------------------------------ */

/* Moves part q's rows (and their captures) into the whole result `w`,
 * marking each job taken in `seen`. */
static bl_status take_part(const run_ctx *c, bl_run_result *q, bl_run_result *w, bool *seen,
                           bl_error *err)
{
    if ((q->ntrials && (!q->probes != !w->probes || !q->replays != !w->replays)))
        return bl_fail(err, BL_EVALUE, "a part was recorded with another recording channel");
    for (size_t k = 0; k < q->ntrials; k++) {
        const size_t j = q->jobs ? q->jobs[k] : k;
        if (j >= c->njobs)
            return bl_fail(err, BL_EVALUE, "a part holds job %zu of a plan of %zu jobs", j,
                           c->njobs);
        if (seen[j])
            return bl_fail(err, BL_EVALUE, "parts overlap: job %zu is in two parts", j);
        seen[j] = true;
        w->trials[j] = q->trials[k];
        if (w->probes) {
            w->probes[j] = q->probes[k];
            q->probes[k].features = NULL;
        }
        if (w->replays) {
            w->replays[j] = q->replays[k];
            q->replays[k] = NULL;
        }
    }
    w->world_ticks += q->world_ticks;
    w->neural_frames += q->neural_frames;
    w->reservoir_frames += q->reservoir_frames;
    /* Parts run side by side: the slowest and the largest tell. */
    if (q->seconds_preflight > w->seconds_preflight)
        w->seconds_preflight = q->seconds_preflight;
    if (q->seconds_execute > w->seconds_execute)
        w->seconds_execute = q->seconds_execute;
    if (q->peak_rss_bytes > w->peak_rss_bytes)
        w->peak_rss_bytes = q->peak_rss_bytes;
    return BL_OK;
}

bl_status bl_run_combine(const bl_run_prepared *p, bl_run_result **parts, size_t nparts,
                         bl_run_result **out, bl_error *err)
{
    *out = NULL;
    const run_ctx *c = &p->ctx;
    bl_run_result *w = NULL;
    bool *seen = bl_calloc(c->njobs, sizeof *seen);
    bl_status st = seen ? bl_run_new_result(c, c->njobs, &w, err) : nomem(err);
    for (size_t q = 0; q < nparts && st == BL_OK; q++)
        st = parts[q] ? take_part(c, parts[q], w, seen, err)
                      : bl_fail(err, BL_EVALUE, "a part is missing");
    for (size_t j = 0; j < c->njobs && st == BL_OK; j++)
        if (!seen[j])
            st = bl_fail(err, BL_EVALUE, "parts do not cover the plan: job %zu is missing", j);
    if (st == BL_OK) {
        /* The whole run's processing order: cohort by cohort, each cohort's
         * jobs in job order (its targets in plan order), as the batches of
         * one process take them whatever their size. */
        const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
        for (size_t k = 0; k < c->ncohorts; k++)
            for (size_t i = 0; i < c->ntargets; i++)
                if (c->targets[i].cohort == k)
                    for (size_t j = i * per; j < (i + 1) * per; j++)
                        w->processing_order[w->nprocessed++] = j;
        *out = w;
        w = NULL;
    }
    for (size_t q = 0; q < nparts; q++) {
        bl_run_result_destroy(parts[q]);
        parts[q] = NULL;
    }
    bl_run_result_destroy(w);
    bl_free(seen);
    return st;
}

bl_status bl_run_execute(const bl_resolved_plan *plan, const bl_execution *x,
                         const bl_run_hooks *hooks, bl_run_result **out, bl_error *err)
{
    *out = NULL;
    bl_run_prepared *p = NULL;
    bl_status st = bl_run_prepare(plan, x, &p, err);
    if (st == BL_OK)
        st = bl_run_execute_prepared(p, hooks, out, err);
    bl_run_prepared_destroy(p);
    return st;
}

/* ---- TrialResult as JSON ------------------------------------------------------ */

static bl_json *real_or_null(double v)
{
    return isnan(v) ? bl_json_null() : bl_json_real(v);
}

bl_status bl_task_outcome_json(const char *key, double raw, double normalised,
                               bl_adjust_status status, const char *calibration_id,
                               int64_t scoring_window, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_status st = BL_OK;
    bl_json *oc = bl_json_object();
    bl_json_put(&st, oc, "key", bl_json_string(key), err);
    bl_json_put(&st, oc, "raw", real_or_null(raw), err);
    bl_json_put(&st, oc, "normalised", real_or_null(normalised), err);
    bl_json_put(&st, oc, "normalisation_status", bl_json_string(bl_adjust_status_name(status)),
                err);
    bl_json_put(&st, oc, "calibration_id",
                calibration_id[0] ? bl_json_string(calibration_id) : bl_json_null(), err);
    bl_json_put(&st, oc, "scoring_window", bl_json_int(scoring_window), err);
    return bl_json_hand_over(st, oc, out);
}

bl_status bl_trial_result_json(const bl_trial_result *t, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object(), *oc = NULL, *seeds = bl_json_object();
    bl_status st = bl_task_outcome_json(t->outcome_key, t->raw, t->normalised, t->normalisation,
                                        t->calibration_id, t->scoring_window, &oc, err);
    for (size_t k = 0; k < t->nseeds; k++)
        bl_json_put(&st, seeds, t->seeds[k].stream, bl_json_string(t->seeds[k].hex), err);
    bl_json_put(&st, o, "target_id", bl_json_string(t->target_id), err);
    bl_json_put(&st, o, "task", bl_json_string(bl_task_name(t->task)), err);
    bl_json_put(&st, o, "block_id", bl_json_int(t->block), err);
    bl_json_put(&st, o, "trial_id", bl_json_int(t->trial), err);
    bl_json_put(&st, o, "outcome", oc, err);
    bl_json_put(&st, o, "status", bl_json_string(bl_trial_status_name(t->status)), err);
    bl_json_put(&st, o, "completed_ticks", bl_json_int(t->completed_ticks), err);
    bl_json_put(&st, o, "neural_frames", bl_json_int(t->neural_frames), err);
    bl_json_put(&st, o, "world_seed", bl_json_string(t->world_seed), err);
    bl_json_put(&st, o, "wiring_id", bl_json_string(t->wiring_id), err);
    bl_json_put(&st, o, "seeds", seeds, err);
    bl_json_put(&st, o, "error",
                t->failed ? bl_json_string("non-finite trajectory") : bl_json_null(), err);
    return bl_json_hand_over(st, o, out);
}
