/* Preflight of an evaluation (spec/platform.md §4.4 steps 2-6): the size
 * estimates of §4.5 and §4.6, recording admission, the noise tile check,
 * cohorts and batch admission, and the memory every job keeps until the
 * record is written. Refusals happen here, before anything per job exists. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

/* ---- sizes (§4.5, §4.6) --------------------------------------------------- */

/* Saturating arithmetic on non-negative estimates: one that does not fit
 * is simply too big, and INT64_MAX is then a true "at least". */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* "<v>", or "more than <v>" when v saturated, for a message. */
static const char *bytes_text(int64_t v, char buf[48])
{
    snprintf(buf, 48, "%s%lld", v == INT64_MAX ? "more than " : "", (long long)v);
    return buf;
}

static int64_t target_bytes(const bl_target_spec *t, int64_t horizon, int64_t tile)
{
    const int64_t n = t->nodes, p = t->n_inputs;
    int64_t model = 0, world = 0, noise = 0;
    if (t->reservoir)
        model = sat_mul(64, sat_add(sat_add(sat_mul(n, n), sat_mul(n, p)), sat_mul(12, n)));
    if (t->task_options.kind == BL_TASK_PONG)
        world = sat_mul(sat_add(horizon, 1), 64);
    else if (bl_task_is_probe(t->task_options.kind))
        world = sat_mul(sat_add(horizon, 1), sat_mul(24, p));
    if (t->reservoir && t->model == BL_MODEL_FALANDAYS)
        noise = sat_mul(sat_mul(24, tile), n);
    return sat_add(sat_add(sat_add(model, world), sat_add(noise, sat_mul(128, p))), 65536);
}

/* What the whole run keeps per job, besides the batches of §4.6: the
 * result row and its place in the processing order and in its cohort's
 * job list; with probe_events, its probe capture and what the evaluation
 * and the record writer make of it (its ProbeTrial row as JSON and the
 * features archive; the events themselves are made one at a time as they
 * are written); with replay, the pointer to its frames (the frames are
 * what §4.5 charges to the recording budget). The record writer writes
 * trials.csv, seeds.csv and data/probe_events.csv a chunk at a time
 * (record.c), so their text costs a fixed 1 MiB at most, nothing per job.
 * The probe constants are measured: peak heap (valgrind massif) of `run
 * --recording probe_events` over 1 000 and 4 000 Delayed Cue trials of a
 * Falandays reservoir grew by 5 654 bytes per trial with 16 nodes and
 * 9 045 with 64, so 4 524 + 71 per node (the allocator's own overhead
 * adds 887 per trial); the constants bound both with a little to spare.
 * docs/running.md lists the figures. */
enum { PROBE_TRIAL_BYTES = 6144, PROBE_NODE_BYTES = 80 };

static int64_t target_job_bytes(const bl_target_spec *t, const bl_execution *x)
{
    int64_t b = (int64_t)(sizeof(bl_trial_result) + 2 * sizeof(size_t));
    if (x->recording == BL_RECORDING_PROBE_EVENTS)
        b = sat_add(b, sat_add(PROBE_TRIAL_BYTES, sat_mul(PROBE_NODE_BYTES, t->nodes)));
    else if (x->recording == BL_RECORDING_REPLAY)
        b += (int64_t)sizeof(bl_json *);
    return b;
}

int64_t bl_run_job_bytes(const bl_resolved_plan *plan, size_t i, const bl_execution *x)
{
    return target_job_bytes(bl_resolved_target_spec(plan, i), x);
}

/* The bytes every job keeps until the record is written must fit the
 * memory budget on their own. They are not deducted from the §4.6
 * allocation budget, so admitted batch capacities stay the reference's. */
static bl_status admit_jobs(const run_ctx *c, int64_t per_target, bl_error *err)
{
    int64_t total = 0, most = 0;
    for (size_t i = 0; i < c->ntargets; i++) {
        const int64_t b = target_job_bytes(c->targets[i].spec, c->x);
        most = b > most ? b : most;
        total = sat_add(total, sat_mul(b, per_target));
    }
    if (total <= c->x->memory_budget_bytes)
        return BL_OK;
    char need[48];
    return bl_fail(err, BL_ENOMEM,
                   "the %zu trial%s of this plan need%s an estimated %s bytes for results "
                   "until the record is written (%s%lld bytes per trial); memory budget is %lld "
                   "bytes; raise --memory-budget-mib or run fewer trials",
                   c->njobs, c->njobs == 1 ? "" : "s", c->njobs == 1 ? "s" : "",
                   bytes_text(total, need), c->ntargets > 1 ? "up to " : "",
                   (long long)most, (long long)c->x->memory_budget_bytes);
}

int64_t bl_trial_bytes(const bl_resolved_plan *plan, size_t i, int64_t horizon,
                       int64_t noise_tile_frames)
{
    return target_bytes(bl_resolved_target_spec(plan, i), horizon, noise_tile_frames);
}

/* ---- preflight (§4.4 steps 2–6) ------------------------------------------ */

_Static_assert(SIZE_MAX >= INT64_MAX, "a job index is a size_t");

/* §4.7 cohort key. */
static bool same_cohort(const bl_target_spec *a, const bl_target_spec *b)
{
    return a->task_options.kind == b->task_options.kind && a->reservoir == b->reservoir &&
           (a->reservoir || a->policy == b->policy) && strcmp(a->node, b->node) == 0 &&
           a->nodes == b->nodes && a->n_inputs == b->n_inputs &&
           a->n_effectors == b->n_effectors && a->neural_frames == b->neural_frames &&
           a->excitatory == b->excitatory;
}

/* Preflights that reached the loading of their plan's targets. */
static atomic_uint_fast64_t target_loads;

uint64_t bl_run_target_loads(void)
{
    return (uint64_t)atomic_load_explicit(&target_loads, memory_order_relaxed);
}

/* Steps 2–6; `jobs` also builds the cohorts' job lists, which only
 * execution needs (a refused plan may have more jobs than fit in memory). */
bl_status bl_run_preflight_ctx(run_ctx *c, const bl_resolved_plan *plan, const bl_execution *x,
                               bool jobs, bl_error *err)
{
    memset(c, 0, sizeof *c);
    c->plan = plan;
    c->x = x;
    bl_status st = bl_execution_validate(x, err);
    if (st != BL_OK)
        return st;
    c->ev = bl_resolved_evaluation(plan);
    c->ntargets = bl_resolved_target_count(plan);
    /* Resolution refuses plans whose trial count does not fit (§4.1). */
    int64_t per_target, njobs;
    if (__builtin_mul_overflow(c->ev->blocks, c->ev->trials_per_block, &per_target) ||
        __builtin_mul_overflow(per_target, (int64_t)c->ntargets, &njobs) || per_target <= 0)
        return bl_fail(err, BL_EVALUE, "an evaluation of %zu targets x %lld blocks x %lld trials "
                       "is too large", c->ntargets, (long long)c->ev->blocks,
                       (long long)c->ev->trials_per_block);
    c->njobs = (size_t)njobs;
    c->targets = bl_calloc(c->ntargets, sizeof *c->targets);
    c->cohorts = bl_calloc(c->ntargets, sizeof *c->cohorts); /* at most one per target */
    if (!c->targets || !c->cohorts)
        return nomem(err);
    atomic_fetch_add_explicit(&target_loads, 1, memory_order_relaxed);
    for (size_t i = 0; i < c->ntargets; i++)
        c->targets[i].spec = bl_resolved_target_spec(plan, i);

    /* Step 4: recording admission, summed over all jobs. */
    int64_t rec = 0;
    for (size_t i = 0; i < c->ntargets; i++) {
        const bl_target_spec *t = c->targets[i].spec;
        int64_t per = 0;
        if (x->recording == BL_RECORDING_PROBE_EVENTS) {
            if (!t->reservoir || !is_decodable(t->task_options.kind))
                return bl_fail(err, BL_EVALUE,
                               "probe_events requires a reservoir and a single binary probe "
                               "episode");
            per = sat_mul(3, sat_add(sat_mul(t->nodes, 16), 1024));
        } else if (x->recording == BL_RECORDING_REPLAY) {
            per = sat_mul(t->horizon,
                          sat_add(sat_add(sat_mul(t->nodes, 32), sat_mul(t->n_inputs, 32)), 4096));
        }
        rec = sat_add(rec, sat_mul(per, per_target));
    }
    char need[48];
    if (rec > x->recording_budget_bytes)
        return bl_fail(err, BL_ENOMEM,
                       "recording needs an estimated %s bytes; recording budget is %lld; reduce "
                       "trials or recording",
                       bytes_text(rec, need), (long long)x->recording_budget_bytes);
    c->recording_bytes = rec;

    /* Step 5: one complete neural cycle per tile. */
    for (size_t i = 0; i < c->ntargets; i++)
        if (c->targets[i].spec->neural_frames > x->noise_tile_frames)
            return bl_fail(err, BL_EVALUE,
                           "noise_tile_frames must hold at least one complete neural cycle");

    /* Step 6: cohorts in order of first appearance, then admission. */
    for (size_t i = 0; i < c->ntargets; i++) {
        const bl_target_spec *t = c->targets[i].spec;
        size_t k = 0;
        while (k < c->ncohorts && !same_cohort(c->targets[c->cohorts[k].first_target].spec, t))
            k++;
        if (k == c->ncohorts)
            c->cohorts[c->ncohorts++].first_target = i;
        c->targets[i].cohort = k;
        cohort *h = &c->cohorts[k];
        if (t->horizon > h->horizon)
            h->horizon = t->horizon;
        h->njobs += (size_t)per_target;
    }
    for (size_t k = 0; k < c->ncohorts; k++) {
        cohort *h = &c->cohorts[k];
        for (size_t i = 0; i < c->ntargets; i++) {
            if (c->targets[i].cohort != k)
                continue;
            const int64_t b = target_bytes(c->targets[i].spec, h->horizon, x->noise_tile_frames);
            if (b > h->trial_bytes)
                h->trial_bytes = b;
        }
        if ((st = bl_admit_batch(x, h->trial_bytes, c->recording_bytes, &h->capacity, err)) !=
            BL_OK)
            return st;
    }
    /* Ours, after every check of the spec, and before anything per job
     * exists. */
    if ((st = admit_jobs(c, per_target, err)) != BL_OK || !jobs)
        return st;
    return bl_run_ctx_job_lists(c, err);
}

bl_status bl_run_ctx_job_lists(run_ctx *c, bl_error *err)
{
    const size_t per = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    for (size_t k = 0; k < c->ncohorts; k++)
        c->cohorts[k].njobs = 0;
    for (size_t i = 0; i < c->ntargets; i++)
        c->cohorts[c->targets[i].cohort].njobs += c->part_first ? c->part_count[i] : per;
    for (size_t k = 0; k < c->ncohorts; k++) {
        cohort *h = &c->cohorts[k];
        h->jobs = bl_mallocarray(h->njobs, sizeof *h->jobs);
        if (!h->jobs)
            return nomem(err);
        h->njobs = 0;
    }
    /* Targets in plan order keep every cohort's list in job order. */
    for (size_t i = 0; i < c->ntargets; i++) {
        cohort *h = &c->cohorts[c->targets[i].cohort];
        const size_t first = c->part_first ? c->part_first[i] : i * per;
        const size_t n = c->part_first ? c->part_count[i] : per;
        for (size_t j = first; j < first + n; j++)
            h->jobs[h->njobs++] = j;
    }
    return BL_OK;
}

void bl_run_ctx_clear(run_ctx *c)
{
    bl_free(c->part_first);
    bl_free(c->part_count);
    bl_free(c->part_row);
    c->part_first = c->part_count = c->part_row = NULL;
    bl_free(c->targets);
    for (size_t k = 0; c->cohorts && k < c->ncohorts; k++)
        bl_free(c->cohorts[k].jobs);
    bl_free(c->cohorts);
    c->targets = NULL;
    c->cohorts = NULL;
    c->ncohorts = 0;
}

bl_status bl_run_preflight(const bl_resolved_plan *plan, const bl_execution *x, bl_error *err)
{
    run_ctx c;
    bl_status st = bl_run_preflight_ctx(&c, plan, x, false, err);
    bl_run_ctx_clear(&c);
    return st;
}
