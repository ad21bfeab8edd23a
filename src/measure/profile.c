/* `profile`: the command line's checks, the fixed workload and the sample
 * rows (spec/measurement.md §1.2, §1.3, §1.5, §1.10). The worker and the
 * parent are in profile_worker.c and profile_parent.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/sha256.h"
#include "measure_internal.h"
#include "profile_internal.h"
#include "stepping_internal.h"

void bl_profile_args_default(bl_profile_args *a)
{
    memset(a, 0, sizeof *a);
    a->backends[0] = "cpu";
    a->nbackends = 1;
    a->node = "falandays";
    a->task = "delayed_cue";
    a->count = 64;
    a->batch_size = 8;
    a->trials = 8;
    a->blocks = 2;
    a->samples = 7;
    a->warmups = 1;
    a->cpu_threads = 1;
    a->memory_budget_mib = 256;
    a->recording_budget_mib = 32;
    a->seed = 49001;
    a->recording = "none";
    a->activity_cpu_threshold = 2.0;
    a->activity_interval = 1.0;
}

/* §1.2 validate_args, in the order of the table. */
static bl_status validate_flags(const bl_profile_args *a, bl_error *err)
{
    /* A record tape's plan names its dtype (stepping_tape.c). */
    if (!a->dtype && !(a->isolated && a->tape_record))
        return bl_fail(err, BL_EUSAGE, "the following arguments are required: --dtype");
    for (size_t i = 0; i < a->nbackends; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(a->backends[i], a->backends[j]) == 0)
                return bl_fail(err, BL_EUSAGE, "--backends must be distinct");
    static const struct {
        const char *flag;
        size_t offset;
        int64_t minimum;
    } ints[] = {
        {"--count", offsetof(bl_profile_args, count), 1},
        {"--batch-size", offsetof(bl_profile_args, batch_size), 1},
        {"--trials", offsetof(bl_profile_args, trials), 1},
        {"--blocks", offsetof(bl_profile_args, blocks), 1},
        {"--samples", offsetof(bl_profile_args, samples), 1},
        {"--warmups", offsetof(bl_profile_args, warmups), 0},
        {"--cpu-threads", offsetof(bl_profile_args, cpu_threads), 1},
        {"--memory-budget-mib", offsetof(bl_profile_args, memory_budget_mib), 1},
        {"--recording-budget-mib", offsetof(bl_profile_args, recording_budget_mib), 1},
        {"--seed", offsetof(bl_profile_args, seed), 0},
    };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        int64_t v;
        memcpy(&v, (const char *)a + ints[i].offset, sizeof v);
        if (v < ints[i].minimum)
            return bl_fail(err, BL_EUSAGE, "%s must be >= %lld", ints[i].flag,
                           (long long)ints[i].minimum);
    }
    if (a->trials % a->blocks != 0)
        return bl_fail(err, BL_EUSAGE,
                       "--trials must be divisible by --blocks (batch size never changes trials)");
    if (a->has_horizon && a->horizon < 1)
        return bl_fail(err, BL_EUSAGE, "--horizon must be >= 1");
    /* Budgets in bytes must fit int64 (×1,048,576). */
    if (a->memory_budget_mib > INT64_MAX / 1048576 || a->recording_budget_mib > INT64_MAX / 1048576)
        return bl_fail(err, BL_EUSAGE, "budgets must fit in 64-bit bytes");
    if (strcmp(a->recording, "probe_events") == 0 && strcmp(a->task, "delayed_cue") != 0)
        return bl_fail(err, BL_EUSAGE, "--recording probe_events requires --task delayed_cue");
    if (!isfinite(a->activity_cpu_threshold) || a->activity_cpu_threshold <= 0)
        return bl_fail(err, BL_EUSAGE, "--activity-cpu-threshold must be finite and > 0");
    if (!isfinite(a->activity_interval) || a->activity_interval <= 0 || a->activity_interval > 60)
        return bl_fail(err, BL_EUSAGE, "--activity-interval must be within (0, 60] seconds");
    return BL_OK;
}

/* The tape of --isolated, built and released: what the worker will build. */
static bl_status isolated_preflight(const bl_profile_args *a, bl_error *err)
{
    bl_step_tape t;
    bl_status st = bl_step_tape_build(a, &t, err);
    if (st == BL_OK && (size_t)a->batch_size < t.nstreams)
        st = bl_fail(err, BL_EUSAGE,
                     "--batch-size %lld is less than the %zu tape trials (each needs a slot)",
                     (long long)a->batch_size, t.nstreams);
    bl_step_tape_clear(&t);
    return st;
}

bl_status bl_profile_preflight(const bl_profile_args *a, bool *refused, bl_error *err)
{
    *refused = false;
    bl_status st = validate_flags(a, err);
    if (st == BL_OK)
        st = bl_stepping_validate(a, err);
    if (st != BL_OK)
        return st;
    /* A resolution or admission error makes this command line unusable
     * (§1.2 preflight: exit 2), but it is no syntax error: the resolver's
     * own kind and message say what is wrong with the workload. So is a
     * tape that cannot be built (an unsuitable record): the parent builds
     * it once before creating anything; the worker builds its own. */
    if (a->isolated) {
        if (!a->worker_backend)
            st = isolated_preflight(a, err);
    } else {
        bl_profile_workload w;
        st = bl_profile_workload_build(a, &w, err);
        bl_profile_workload_destroy(&w);
    }
    /* Admission refusals are MemoryErrors of the plan; a real allocation
     * failure ("out of memory ...") stays what it is. */
    BL_ASSERT(err);
    if (st != BL_OK) {
        *refused = !(st == BL_ENOMEM && strncmp(err->msg, "out of memory", 13) == 0);
        return st;
    }
    struct stat sb;
    if (!a->worker_backend && lstat(a->destination, &sb) == 0)
        return bl_fail(err, BL_EEXIST, "%s: %s", a->destination, strerror(EEXIST));
    return BL_OK;
}

bl_status bl_profile_validate(const bl_profile_args *a, bl_error *err)
{
    bool refused = false;
    bl_status st = bl_profile_preflight(a, &refused, err);
    if (refused)
        err->status = st = BL_EUSAGE;
    return st;
}

/* ---- the workload (§1.3) ---------------------------------------------------- */

bl_status bl_profile_workload_build(const bl_profile_args *a, bl_profile_workload *w,
                                    bl_error *err)
{
    memset(w, 0, sizeof *w);
    bl_status st = BL_OK;
    bl_json *comp = bl_json_object(), *node = bl_json_object(), *task = bl_json_object();
    bl_json *eval = bl_json_object(), *num = bl_json_object();
    bl_json_put(&st, node, "kind", bl_json_string(a->node), err);
    bl_json_put(&st, task, "kind", bl_json_string(a->task), err);
    bl_json_put(&st, comp, "node", node, err);
    node = NULL;
    bl_json_put(&st, comp, "task", task, err);
    task = NULL;
    bl_json_put(&st, comp, "count", bl_json_int(a->count), err);
    bl_json_put(&st, comp, "input_gain", bl_json_real(1.0), err);
    bl_json_put(&st, eval, "blocks", bl_json_int(a->blocks), err);
    bl_json_put(&st, eval, "trials_per_block", bl_json_int(a->trials / a->blocks), err);
    if (a->has_horizon)
        bl_json_put(&st, eval, "horizon", bl_json_int(a->horizon), err);
    bl_json_put(&st, eval, "warmup", bl_json_int(0), err);
    bl_json_put(&st, eval, "construction_scope", bl_json_string("block"), err);
    bl_json_put(&st, eval, "root_seed", bl_json_int(a->seed), err);
    bl_json_put(&st, eval, "seed_partition", bl_json_string("development"), err);
    bl_json_put(&st, num, "dtype", bl_json_string(a->dtype ? a->dtype : "float64"), err);
    bl_json_put(&st, num, "fast_math", bl_json_bool(false), err);
    bl_json_put(&st, num, "reduction", bl_json_string("ordered"), err);
    bl_json_put(&st, num, "rng", bl_json_string("philox-host-v1"), err);
    if (st == BL_OK && !(comp && eval && num))
        st = bl_fail(err, BL_ENOMEM, "out of memory for the profile plan");
    if (st == BL_OK)
        st = bl_plan_profile(comp, eval, num, "software-timing", a->diagnostic, &w->plan, err);
    bl_json_destroy(node);
    bl_json_destroy(task);
    bl_json_destroy(comp);
    bl_json_destroy(eval);
    bl_json_destroy(num);
    if (st == BL_OK)
        st = bl_plan_resolve(w->plan, &w->resolved, err);
    if (st != BL_OK)
        return st;
    w->resolved_horizon = bl_resolved_target_spec(w->resolved, 0)->horizon;

    bl_execution *x = &w->execution;
    bl_execution_default(x);
    x->backend = BL_BACKEND_CPU;
    x->batch_size = a->batch_size;
    x->cpu_threads = a->cpu_threads;
    x->cache = true;
    x->memory_budget_bytes = a->memory_budget_mib * 1048576;
    x->recording_budget_bytes = a->recording_budget_mib * 1048576;
    x->recording = strcmp(a->recording, "probe_events") == 0 ? BL_RECORDING_PROBE_EVENTS
                   : strcmp(a->recording, "replay") == 0     ? BL_RECORDING_REPLAY
                                                             : BL_RECORDING_SUMMARY;
    st = bl_execution_validate(x, err);
    if (st == BL_OK)
        st = bl_run_preflight(w->resolved, x, err);
    return st;
}

void bl_profile_workload_destroy(bl_profile_workload *w)
{
    bl_resolved_plan_destroy(w->resolved);
    bl_plan_destroy(w->plan);
    memset(w, 0, sizeof *w);
}

bl_status bl_profile_protocol(const bl_profile_args *a, const bl_profile_workload *w,
                              bl_json **protocol, char signature[65], bl_error *err)
{
    *protocol = NULL;
    bl_status st = BL_OK;
    bl_json *p = bl_json_object();
    if (!p)
        return bl_fail(err, BL_ENOMEM, "out of memory for the protocol");
    bl_json_put(&st, p, "task", bl_json_string(a->task), err);
    bl_json_put(&st, p, "resolved_horizon", bl_json_int(w->resolved_horizon), err);
    bl_json_put(&st, p, "requested_horizon",
                a->has_horizon ? bl_json_int(a->horizon) : bl_json_null(), err);
    bl_json_put(&st, p, "diagnostic", bl_json_bool(a->diagnostic), err);
    bl_json_put(&st, p, "controller", bl_json_string("reservoir"), err);
    bl_json_put(&st, p, "scoring_warmup", bl_json_int(0), err);
    bl_json_put(&st, p, "blocks", bl_json_int(a->blocks), err);
    bl_json_put(&st, p, "trials_per_block", bl_json_int(a->trials / a->blocks), err);
    bl_json_put(&st, p, "root_seed", bl_json_int(a->seed), err);
    bl_json_put(&st, p, "seed_partition", bl_json_string("development"), err);
    bl_json_put(&st, p, "construction_scope", bl_json_string("block"), err);
    bl_json_put(&st, p, "reset", bl_json_string("full"), err);

    /* The signature binds the contract and the plan text: what a cell of a
     * scaling matrix must share with its neighbours whatever its capacity. */
    bl_buf text;
    bl_buf_init(&text);
    bl_json *sig = bl_json_object();
    if (st == BL_OK && !sig)
        st = bl_fail(err, BL_ENOMEM, "out of memory for the protocol");
    if (st == BL_OK)
        st = bl_plan_write(w->plan, &text, err);
    if (st == BL_OK)
        st = bl_buf_status(&text, err);
    bl_json_put(&st, sig, "contract", bl_json_string(bl_resolved_contract_hash(w->resolved)),
                err);
    bl_json_put(&st, sig, "plan", st == BL_OK ? bl_json_stringn(text.data, text.len) : NULL,
                err);
    if (st == BL_OK)
        st = bl_json_digest(sig, signature, err);
    bl_json_destroy(sig);
    bl_buf_clear(&text);
    return bl_json_hand_over(st, p, protocol);
}

/* ---- sample rows (§1.5, §1.10) ---------------------------------------------- */

const char bl_profile_execute_boundary[] =
    "evaluation span: every worker thread joined before the clock starts and before it "
    "stops; includes plan resolution, admission, fresh construction of worlds and wirings, "
    "noise staging, stepping, readback and summaries (bootstrap intervals, contrasts); "
    "not a kernel timer";

const char bl_profile_record_boundary[] =
    "record writing: serialisation, embedded source archive, checksums, verification and "
    "file I/O of one record; probe/replay capture stays inside the evaluation span";

static int compare_trials(const void *pa, const void *pb)
{
    const bl_trial_result *a = *(const bl_trial_result *const *)pa;
    const bl_trial_result *b = *(const bl_trial_result *const *)pb;
    int c = strcmp(a->target_id, b->target_id);
    if (c)
        return c;
    if (a->block != b->block)
        return a->block < b->block ? -1 : 1;
    return (a->trial > b->trial) - (a->trial < b->trial);
}

/* SHA-256 of the canonical JSON of the trials' identity tuples, sorted:
 * [target, block, trial, world_seed, wiring_id] (+ [ticks, frames] when
 * `work`). Identities are unique iff no two sorted neighbours are equal. */
static bl_status signature(const bl_trial_result *trials, size_t n, bool work, char hex[65],
                           bool *unique, bl_error *err)
{
    const bl_trial_result **order = n ? bl_mallocarray(n, sizeof *order) : NULL;
    bl_json *list = bl_json_array();
    bl_status st = (n && !order) || !list ? bl_fail(err, BL_ENOMEM, "out of memory") : BL_OK;
    for (size_t i = 0; i < n && st == BL_OK; i++)
        order[i] = &trials[i];
    if (st == BL_OK && n > 1)
        qsort(order, n, sizeof *order, compare_trials);
    *unique = true;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        const bl_trial_result *t = order[i];
        if (i > 0 && compare_trials(&order[i - 1], &order[i]) == 0)
            *unique = false;
        bl_json *tuple = bl_json_array();
        bl_json_push(&st, tuple, bl_json_string(t->target_id), err);
        bl_json_push(&st, tuple, bl_json_int(t->block), err);
        bl_json_push(&st, tuple, bl_json_int(t->trial), err);
        bl_json_push(&st, tuple, bl_json_string(t->world_seed), err);
        bl_json_push(&st, tuple, bl_json_string(t->wiring_id), err);
        if (work) {
            bl_json_push(&st, tuple, bl_json_int(t->completed_ticks), err);
            bl_json_push(&st, tuple, bl_json_int(t->neural_frames), err);
        }
        bl_json_push(&st, list, tuple, err);
    }
    if (st == BL_OK)
        st = bl_json_digest(list, hex, err);
    bl_json_destroy(list);
    bl_free(order);
    return st;
}

/* Python's repr of a non-finite float. */
static const char *nonfinite_repr(double v)
{
    return isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

/* One trial's entry of a row's trial_work list. */
static void append_trial_work(bl_status *st, bl_json *work, const bl_trial_result *t,
                              const char *name, bl_error *err)
{
    bl_json *w = bl_json_object();
    bl_json_put(st, w, "target_id", bl_json_string(t->target_id), err);
    bl_json_put(st, w, "block_id", bl_json_int(t->block), err);
    bl_json_put(st, w, "trial_id", bl_json_int(t->trial), err);
    bl_json_put(st, w, "world_seed", bl_json_string(t->world_seed), err);
    bl_json_put(st, w, "wiring_id", bl_json_string(t->wiring_id), err);
    bl_json_put(st, w, "status", bl_json_string(name), err);
    bl_json_put(st, w, "completed_world_ticks", bl_json_int(t->completed_ticks), err);
    bl_json_put(st, w, "completed_neural_frames", bl_json_int(t->neural_frames), err);
    bl_json_push(st, work, w, err);
}

/* A row's wall times, each with its boundary, and the record's path. */
static void put_timings(bl_status *st, bl_json *r, const bl_profile_sample *s, bl_error *err)
{
    bl_json_put(st, r, "wall_seconds", bl_measure_real_or_null(s->execute_seconds), err);
    bl_json_put(st, r, "execute_wall_seconds", bl_measure_real_or_null(s->execute_seconds),
                err);
    bl_json_put(st, r, "timing_boundary", bl_json_string(bl_profile_execute_boundary), err);
    bl_json_put(st, r, "isolated_kernel_time", bl_json_bool(false), err);
    bl_json *timings = bl_json_object();
    bl_json_put(st, timings, "resolve_and_runtime_seconds",
                bl_measure_real_or_null(s->timings[0]), err);
    bl_json_put(st, timings, "construction_compile_run_seconds",
                bl_measure_real_or_null(s->timings[1]), err);
    bl_json_put(st, timings, "total_seconds", bl_measure_real_or_null(s->timings[2]), err);
    bl_json_put(st, r, "timings", timings, err);
    bl_json_put(st, r, "record_wall_seconds",
                s->recorded ? bl_measure_real_or_null(s->record_seconds) : bl_json_null(), err);
    if (s->record_path)
        bl_json_put(st, r, "record_path", bl_json_string(s->record_path), err);
    if (s->recorded)
        bl_json_put(st, r, "record_timing_boundary",
                    bl_json_string(bl_profile_record_boundary), err);
    double combined = s->execute_seconds + (s->recorded ? s->record_seconds : 0.0);
    bl_json_put(st, r, "combined_wall_seconds", bl_measure_real_or_null(combined), err);
}

bl_status bl_profile_sample_row(const bl_profile_sample *s, bl_json **row, bl_error *err)
{
    *row = NULL;
    bl_status st = BL_OK;
    bl_json *r = bl_json_object();
    bl_json *statuses = bl_json_array(), *counts = bl_json_object(), *raws = bl_json_array();
    bl_json *nonfinite = bl_json_object(), *work = bl_json_array(), *caps = bl_json_array();
    if (!r || !statuses || !counts || !raws || !nonfinite || !work || !caps)
        st = bl_fail(err, BL_ENOMEM, "out of memory for a sample row");

    int64_t ticks = 0, frames = 0, spikes = 0, completed = 0, early = 0;
    bool valid = s->trials && (int64_t)s->ntrials == s->requested_trials;
    bool all_raw_valid = s->trials != NULL;
    for (size_t i = 0; i < (s->trials ? s->ntrials : 0) && st == BL_OK; i++) {
        const bl_trial_result *t = &s->trials[i];
        const char *name = bl_trial_status_name(t->status);
        bl_json_push(&st, statuses, bl_json_string(name), err);
        const bl_json *have = bl_json_get(counts, name);
        bl_json_put(&st, counts, name, bl_json_int(have ? bl_json_get_int(have) + 1 : 1), err);
        bool done = t->status == BL_TRIAL_COMPLETED;
        /* A trial that did not complete has no outcome (None); a completed
         * one with a non-finite outcome is kept by its text. */
        if (done && isfinite(t->raw)) {
            bl_json_push(&st, raws, bl_json_real(t->raw), err);
        } else {
            bl_json_push(&st, raws, bl_json_null(), err);
            all_raw_valid = false;
            if (done) {
                char key[32];
                snprintf(key, sizeof key, "%zu", i);
                bl_json_put(&st, nonfinite, key, bl_json_string(nonfinite_repr(t->raw)), err);
            }
        }
        if (done) {
            completed++;
            ticks += t->completed_ticks;
            frames += t->neural_frames;
            spikes += t->spikes;
            early += t->completed_ticks < s->resolved_horizon;
        }
        valid = valid && done && isfinite(t->raw) && t->completed_ticks > 0 && t->neural_frames > 0;
        append_trial_work(&st, work, t, name, err);
    }
    for (size_t i = 0; i < s->ncapacities; i++)
        bl_json_push(&st, caps, bl_json_int(s->capacities[i]), err);

    char identity[65] = "", work_sig[65] = "", outcome_sig[65] = "";
    bool unique = true;
    if (st == BL_OK && s->trials) {
        st = signature(s->trials, s->ntrials, false, identity, &unique, err);
        if (st == BL_OK)
            st = signature(s->trials, s->ntrials, true, work_sig, &unique, err);
        if (st == BL_OK && all_raw_valid)
            st = bl_json_digest(raws, outcome_sig, err);
    }
    valid = valid && unique;

    const char *error = s->error;
    if (!error && !valid)
        error = "failed, incomplete, missing, duplicate or non-finite trials";
    if (!error && !(isfinite(s->execute_seconds) && s->execute_seconds > 0))
        error = "invalid measured duration";
    if (!error && s->recorded && !(isfinite(s->record_seconds) && s->record_seconds > 0))
        error = "invalid measured duration";
    const bool complete = error == NULL;

    bl_json_put(&st, r, "phase", bl_json_string(s->phase), err);
    bl_json_put(&st, r, "sample_index", bl_json_int(s->index), err);
    bl_json_put(&st, r, "status", bl_json_string(complete ? "complete" : "failed"), err);
    bl_json_put(&st, r, "error", error ? bl_json_string(error) : bl_json_null(), err);
    bl_json_put(&st, r, "requested_trials", bl_json_int(s->requested_trials), err);
    bl_json_put(&st, r, "completed_trials", bl_json_int(completed), err);
    bl_json_put(&st, r, "trial_statuses", statuses, err);
    bl_json_put(&st, r, "status_counts", counts, err);
    bl_json_put(&st, r, "raw_outcomes", raws, err);
    bl_json_put(&st, r, "nonfinite_raw_outcomes", nonfinite, err);
    statuses = counts = raws = nonfinite = NULL;
    bl_json_put(&st, r, "completed_world_ticks", bl_json_int(ticks), err);
    bl_json_put(&st, r, "completed_neural_frames", bl_json_int(frames), err);
    bl_json_put(&st, r, "early_ending_trials",
                s->trials ? bl_json_int(early) : bl_json_null(), err);
    bl_json_put(&st, r, "early_ending_definition",
                bl_json_string("completed trials ending before the resolved horizon"), err);
    bl_json_put(&st, r, "trial_work", work, err);
    work = NULL;
    bl_json_put(&st, r, "identity_signature",
                s->trials ? bl_json_string(identity) : bl_json_null(), err);
    bl_json_put(&st, r, "work_signature", s->trials ? bl_json_string(work_sig) : bl_json_null(),
                err);
    bl_json_put(&st, r, "outcome_signature",
                outcome_sig[0] ? bl_json_string(outcome_sig) : bl_json_null(), err);
    bl_json_put(&st, r, "admitted_batch_capacities", caps, err);
    caps = NULL;
    put_timings(&st, r, s, err);
    /* Rates count the work that was done, and only for a complete row: a
     * failed or short evaluation must never look fast. */
    bl_json_put(&st, r, "world_ticks_per_second",
                complete ? bl_json_real((double)ticks / s->execute_seconds) : bl_json_null(),
                err);
    bl_json_put(&st, r, "neural_frames_per_second",
                complete ? bl_json_real((double)frames / s->execute_seconds) : bl_json_null(),
                err);
    bl_json_put(&st, r, "mean_spike_rate",
                frames > 0 && s->node_count > 0
                    ? bl_json_real((double)spikes / ((double)frames * (double)s->node_count))
                    : bl_json_null(),
                err);
    bl_json_put(&st, r, "compiled_functions", bl_json_string("not_applicable"), err);

    bl_json_destroy(statuses);
    bl_json_destroy(counts);
    bl_json_destroy(raws);
    bl_json_destroy(nonfinite);
    bl_json_destroy(work);
    bl_json_destroy(caps);
    return bl_json_hand_over(st, r, row);
}
