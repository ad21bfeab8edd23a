/* The profile worker (spec/measurement.md §1.5): one fresh process that runs
 * the fixed workload 1 + warmups + samples times and reports one receipt.
 *
 * Clock reads, in order (tests drive them with a synthetic clock): worker
 * entry; runtime preparation start and end; then per evaluation its start
 * and end and, when it writes a record, the record's start and end. The CPU
 * engine has no device to synchronise: every OpenMP region has joined when
 * bl_evaluate returns, which is the synchronisation point of §8. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/task.h"
#include "brainlesslab/version.h"
#include "measure_internal.h"
#include "profile_internal.h"
#include "stepping_internal.h"

double bl_measure_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(const bl_profile_hooks *h)
{
    return h && h->clock ? h->clock(h->ctx) : bl_measure_monotonic();
}

/* The runtime description (§4.2's report, §8's equivalents): what executes
 * the workload. Identifying this executable and starting the thread team
 * once are the runtime preparation. The executable is named by its build
 * id (the linker's SHA-1 of it, read in memory: microseconds); the SHA-256
 * of its file (milliseconds for 5 MB) is computed once the evaluations are
 * done (executable_sha256), off the span from entry to first result. */
static bl_status runtime_prepare(const bl_profile_args *a, bl_json **out, bl_error *err)
{
    *out = NULL;
    char fingerprint[65], arch[65], build_id[2 * 64 + 1];
    bl_status st = bl_runtime_fingerprint(fingerprint, err);
    if (st != BL_OK)
        return st;
    bool have_id = bl_measure_build_id(build_id, sizeof build_id);
    bl_architecture(arch);
#ifdef _OPENMP
    /* Start the team the evaluations will use, so the first evaluation
     * does not pay for thread creation inside its span. */
    int threads = (int)a->cpu_threads;
#pragma omp parallel num_threads(threads)
    {
        (void)0;
    }
#endif
    bl_json *r = bl_json_object();
    bl_json_put(&st, r, "engine_version", bl_json_string(bl_version()), err);
    bl_json_put(&st, r, "requested_backend", bl_json_string(a->worker_backend), err);
    bl_json_put(&st, r, "actual_arch", bl_json_string(arch), err);
    bl_json_put(&st, r, "dtype", bl_json_string(a->dtype), err);
    bl_json_put(&st, r, "fast_math", bl_json_bool(false), err);
    bl_json_put(&st, r, "cpu_threads", bl_json_int(a->cpu_threads), err);
    bl_json_put(&st, r, "cache_enabled", bl_json_string("not_applicable"), err);
    bl_json_put(&st, r, "runtime_fingerprint", bl_json_string(fingerprint), err);
    bl_json_put(&st, r, "executable_build_id",
                have_id ? bl_json_string(build_id) : bl_json_null(), err);
    return bl_json_hand_over(st, r, out);
}

/* executable_sha256: the SHA-256 of the running executable's file, added
 * to the runtime block after the evaluations. */
static bl_status executable_sha256(bl_json *runtime, bl_error *err)
{
    uint8_t digest[BL_SHA256_BYTES];
    char hex[65];
    bl_status st = bl_sha256_file("/proc/self/exe", digest, err);
    if (st != BL_OK)
        return st;
    bl_hex(digest, sizeof digest, hex);
    bl_json_put(&st, runtime, "executable_sha256", bl_json_string(hex), err);
    return st;
}

/* The worker's source block (§1.9): which program and build ran. The
 * source receipt was computed at build time (provenance.h); the embedded
 * bundle is re-hashed against its hash before the receipt vouches for it.
 * Built after the evaluations: nothing in it bears on them. */
static bl_status source_block(bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_status st = BL_OK;
    bl_json *src = bl_json_object(), *env = NULL, *receipt = NULL;
    bl_buf lock;
    bl_buf_init(&lock);
    char lock_hex[65] = "";
    if (bl_build_lock(&lock, err) == BL_OK)
        (void)bl_sha256_hex(lock.data, lock.len, lock_hex, err);
    bl_buf_clear(&lock);
    st = bl_environment_json(&env, err);
    if (st == BL_OK)
        st = bl_source_bundle_verify(err);
    if (st == BL_OK)
        st = bl_source_receipt(&receipt, err);
    bl_json_put(&st, src, "package_version", bl_json_string(bl_version()), err);
    bl_json_put(&st, src, "build_lock_sha256",
                lock_hex[0] ? bl_json_string(lock_hex) : bl_json_null(), err);
    bl_json_put(&st, src, "build_lock_status",
                bl_json_string(lock_hex[0] ? "captured" : "unavailable"), err);
    bl_json_put(&st, src, "compiler",
                env ? bl_json_copy(bl_json_get(env, "compiler")) : NULL, err);
    bl_json_put(&st, src, "libraries",
                env ? bl_json_copy(bl_json_get(env, "libraries")) : NULL, err);
    bl_json_put(&st, src, "logical_cpu_count", bl_json_int(sysconf(_SC_NPROCESSORS_CONF)),
                err);
    bl_json_put(&st, src, "package_source_sha256", bl_json_string(bl_source_bundle_sha256()),
                err);
    bl_json_put(&st, src, "package_source_files",
                receipt ? bl_json_copy(bl_json_get(receipt, "file_sha256")) : NULL, err);
    bl_json_destroy(env);
    bl_json_destroy(receipt);
    return bl_json_hand_over(st, src, out);
}

/* Statistics over the warm_process rows (§1.7): each field over the rows
 * where it is a number. */
static bl_status statistics(const bl_json *samples, bl_json **out, bl_error *err)
{
    static const char *const fields[] = {"execute_wall_seconds", "world_ticks_per_second",
                                         "neural_frames_per_second", "record_wall_seconds"};
    size_t n = bl_json_size(samples);
    double *v = bl_mallocarray(n ? n : 1, sizeof *v);
    bl_json *o = bl_json_object();
    bl_status st = v && o ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory for statistics");
    for (size_t f = 0; f < 4 && st == BL_OK; f++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const bl_json *row = bl_json_at(samples, i);
            const bl_json *x = bl_json_get(row, fields[f]);
            if (strcmp(bl_json_get_string(bl_json_get(row, "phase"), NULL), "warm_process") != 0 ||
                !x || bl_json_kindof(x) != BL_JSON_REAL)
                continue;
            v[k++] = bl_json_get_real(x);
        }
        bl_json *s = NULL;
        st = bl_sample_stats_json(v, k, &s, err);
        bl_json_put(&st, o, fields[f], s, err);
    }
    bl_json_put(&st, o, "scope",
                bl_json_string("warmed evaluation samples only; first run and warmups excluded"),
                err);
    bl_free(v);
    return bl_json_hand_over(st, o, out);
}

/* DEST/records/<backend>/<process phase>/<phase>_<NNNN> and its path
 * relative to DEST. */
static bl_status record_paths(const bl_profile_args *a, const char *phase, int64_t index,
                              char **full, char **relative, bl_error *err)
{
    char rel[256];
    snprintf(rel, sizeof rel, "records/%s/%s/%s_%04lld", a->worker_backend,
             a->process_phase ? a->process_phase : "worker", phase, (long long)index);
    size_t n = strlen(a->destination) + strlen(rel) + 2;
    *full = bl_malloc(n);
    *relative = bl_malloc(strlen(rel) + 1);
    if (!*full || !*relative)
        return bl_fail(err, BL_ENOMEM, "out of memory for a record path");
    snprintf(*full, n, "%s/%s", a->destination, rel);
    strcpy(*relative, rel);
    return BL_OK;
}

/* Writes one record of the evaluation (§1.5 "record writing"). */
static bl_status write_record(const bl_profile_workload *w, const bl_evaluation *e,
                              const char *path, bl_error *err)
{
    bl_reservation res = {0};
    bl_recordings recs = {0};
    bl_json *replays = NULL;
    const char *status = NULL;
    bl_record_input in = {
        .plan = w->plan,
        .resolved = w->resolved,
        .execution = &w->execution,
        .evaluation = e,
    };
    bl_status st = bl_record_reserve(path, &res, err);
    if (st == BL_OK) {
        st = bl_record_channels(&in, &recs, &replays, err);
        if (st != BL_OK) {
            bl_error ferr;
            (void)bl_record_fail(&res, err, &ferr);
        }
    }
    if (st == BL_OK)
        st = bl_record_write(&in, &res, &status, err);
    if (st == BL_OK && strcmp(status, "complete") != 0)
        st = bl_fail(err, BL_ERUNTIME, "the record is %s", status);
    bl_json_destroy(replays);
    bl_recordings_clear(&recs);
    bl_reservation_clear(&res);
    return st;
}

/* The evaluation metadata that replaces the runtime block after each
 * evaluation (§1.9): the record metadata with the preparation report over
 * it (its cache field reads not_applicable here, whatever the policy
 * flag says). */
static bl_status evaluation_runtime(const bl_json *prepared, const bl_profile_workload *w,
                                    const bl_evaluation *e, bl_json **out, bl_error *err)
{
    bl_record_input in = {
        .plan = w->plan, .resolved = w->resolved, .execution = &w->execution, .evaluation = e};
    bl_json *meta = NULL;
    bl_status st = bl_record_metadata(&in, &meta, err);
    for (size_t i = 0; st == BL_OK && i < bl_json_size(prepared); i++)
        bl_json_put(&st, meta, bl_json_key_at(prepared, i, NULL),
                    bl_json_copy(bl_json_value_at(prepared, i)), err);
    return bl_json_hand_over(st, meta, out);
}

/* "<Kind>: <message>" of a stop signal, as the command line reports it: the
 * hook holds the number of the signal that arrived (0 or SIGINT: Ctrl-C). */
static void stop_reason(const bl_profile_hooks *h, char *out, size_t size)
{
    bl_error serr;
    bl_fail_signal(&serr, h && h->interrupt ? *h->interrupt : 0);
    snprintf(out, size, "%s: %s", bl_status_kind(serr.status), serr.msg);
}

/* One evaluation: resolve, evaluate (timed as one span), then the optional
 * record (timed apart). The row goes to *row. */
static bl_status one_evaluation(const bl_profile_args *a, const bl_profile_hooks *h,
                                const bl_profile_workload *w, const bl_json *prepared,
                                const char *phase, int64_t index, double *end_time,
                                bl_json **runtime, bl_json **row, bl_error *err)
{
    bl_resolved_plan *resolved = NULL;
    bl_evaluation *e = NULL;
    bl_error eerr = {0};
    char *full = NULL, *relative = NULL;
    char message[BL_ERROR_MAX + 64] = "";
    bl_profile_sample s = {
        .phase = phase,
        .index = index,
        .requested_trials = a->trials,
        .resolved_horizon = w->resolved_horizon,
        .node_count = a->count,
        .record_seconds = NAN,
    };
    bl_run_hooks run_hooks = {.interrupt = h ? h->interrupt : NULL};

    double t0 = now(h);
    /* The breakdown inside the span reads the real clock whatever clock
     * the hooks give the span itself. */
    double resolve0 = bl_measure_monotonic();
    bl_status est = bl_plan_resolve(w->plan, &resolved, &eerr);
    double resolve_seconds = bl_measure_monotonic() - resolve0;
    if (est == BL_OK)
        est = bl_evaluate(resolved, &w->execution, NULL, 0, &run_hooks, &e, &eerr);
    double t1 = now(h);
    *end_time = t1;
    s.execute_seconds = t1 - t0;
    if (est == BL_OK) {
        const bl_run_result *r = e->run;
        s.trials = r->trials;
        s.ntrials = r->ntrials;
        s.capacities = r->batch_capacities;
        s.ncapacities = r->ncohorts;
        s.timings[0] = resolve_seconds + r->seconds_preflight;
        s.timings[1] = r->seconds_execute;
        s.timings[2] = s.execute_seconds;
        bl_json_destroy(*runtime);
        *runtime = NULL;
        bl_status rst = evaluation_runtime(prepared, w, e, runtime, err);
        if (rst != BL_OK) {
            bl_evaluation_destroy(e);
            bl_resolved_plan_destroy(resolved);
            return rst;
        }
    } else {
        if (eerr.status == BL_EINTERRUPT) /* which signal, as the command reports it */
            stop_reason(h, message, sizeof message);
        else
            snprintf(message, sizeof message, "%s: %s", bl_status_kind(eerr.status), eerr.msg);
        s.error = message;
        s.timings[0] = s.timings[1] = s.timings[2] = NAN;
    }

    /* Warm-ups write no record; a failed evaluation has nothing to write. */
    bl_status st = BL_OK;
    if (est == BL_OK && strcmp(a->recording, "none") != 0 && strcmp(phase, "warmup") != 0) {
        st = record_paths(a, phase, index, &full, &relative, err);
        if (st == BL_OK) {
            bl_error rerr = {0};
            double r0 = now(h);
            bl_status rst = write_record(w, e, full, &rerr);
            double r1 = now(h);
            s.recorded = true;
            s.record_seconds = r1 - r0;
            s.record_path = relative;
            if (rst != BL_OK) {
                snprintf(message, sizeof message, "record writing: %s: %s",
                         bl_status_kind(rerr.status), rerr.msg);
                s.error = message;
            }
        }
    }
    if (st == BL_OK)
        st = bl_profile_sample_row(&s, row, err);
    bl_free(full);
    bl_free(relative);
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(resolved);
    if (st == BL_OK && est == BL_EINTERRUPT)
        return BL_EINTERRUPT;
    return st;
}

/* Marks a row failed with `error` (the repeatability rule of §1.5). */
static bl_status fail_row(bl_json *row, const char *error, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json_put(&st, row, "status", bl_json_string("failed"), err);
    bl_json_put(&st, row, "error", bl_json_string(error), err);
    bl_json_put(&st, row, "world_ticks_per_second", bl_json_null(), err);
    bl_json_put(&st, row, "neural_frames_per_second", bl_json_null(), err);
    return st;
}

/* The request's fields that open every receipt, and a "failed" status
 * until the evaluations say otherwise. */
static void receipt_request(bl_status *st, bl_json *r, const bl_profile_args *a, bl_error *err)
{
    bl_json_put(st, r, "backend", bl_json_string(a->worker_backend), err);
    bl_json_put(st, r, "dtype", bl_json_string(a->dtype), err);
    bl_json_put(st, r, "fast_math", bl_json_bool(false), err);
    bl_json_put(st, r, "node", bl_json_string(a->node), err);
    bl_json_put(st, r, "count", bl_json_int(a->count), err);
    bl_json_put(st, r, "batch_size", bl_json_int(a->batch_size), err);
    bl_json_put(st, r, "cpu_threads", bl_json_int(a->cpu_threads), err);
    bl_json_put(st, r, "requested_trials", bl_json_int(a->trials), err);
    bl_json_put(st, r, "recording", bl_json_string(a->recording), err);
    bl_json_put(st, r, "qualification",
                bl_json_string("synchronised evaluation latency only; ahead-of-time compiled "
                               "kernels, so no specialisation diagnostic applies"),
                err);
    bl_json_put(st, r, "status", bl_json_string("failed"), err);
}

/* The first run, the warm-ups and the samples, each row appended to its
 * phase's list, until one fails or a stop signal arrives: *failure names
 * why (already set: nothing runs), *interrupted tells a stop signal. */
static bl_status run_evaluations(const bl_profile_args *a, const bl_profile_hooks *h,
                                 const bl_profile_workload *w, const bl_json *prepared,
                                 bl_json **runtime, bl_json *samples, bl_json *warmups,
                                 double *first_end, const char **failure, bool *interrupted,
                                 bl_error *err)
{
    const int64_t runs = 1 + a->warmups + a->samples;
    const bl_json *first = NULL;
    bl_status st = BL_OK;
    for (int64_t i = 0; i < runs && !*failure && !*interrupted && st == BL_OK; i++) {
        const char *phase = i == 0 ? "first_run" : i <= a->warmups ? "warmup" : "warm_process";
        int64_t index = i == 0 ? 0 : i <= a->warmups ? i - 1 : i - 1 - a->warmups;
        bl_json *row = NULL;
        double end = NAN;
        bl_status est = one_evaluation(a, h, w, prepared, phase, index, &end, runtime, &row, err);
        if (est == BL_EINTERRUPT) {
            *interrupted = true;
            est = BL_OK;
        }
        if (est != BL_OK) {
            st = est;
            break;
        }
        if (i == 0)
            *first_end = end;
        /* Every evaluation repeats the same worlds: its work and outcomes
         * must equal the first's, or the timings describe different work. */
        if (first && bl_measure_equal(bl_measure_string(row, "status"), "complete") &&
            (!bl_measure_equal(bl_measure_string(row, "work_signature"), bl_measure_string(first, "work_signature")) ||
             !bl_measure_equal(bl_measure_string(row, "outcome_signature"),
                          bl_measure_string(first, "outcome_signature"))))
            st = fail_row(row, "repeated scientific work or raw outcomes changed", err);
        bl_json *list = strcmp(phase, "warmup") == 0 ? warmups : samples;
        bl_json_push(&st, list, row, err);
        if (st != BL_OK)
            break;
        row = bl_json_at(list, bl_json_size(list) - 1);
        if (i == 0)
            first = row;
        if (!bl_measure_equal(bl_measure_string(row, "status"), "complete"))
            *failure = bl_measure_string(row, "error");
    }
    return st;
}

int bl_profile_worker(const bl_profile_args *a, const bl_profile_hooks *h, bl_json **receipt,
                      bl_error *err)
{
    if (a->isolated)
        return bl_stepping_worker(a, h, receipt, err);
    const double entry = now(h);
    *receipt = NULL;
    bl_status st = BL_OK;
    bl_profile_workload w = {0};
    bl_json *r = bl_json_object(), *samples = bl_json_array(), *warmups = bl_json_array();
    bl_json *prepared = NULL, *runtime = NULL, *protocol = NULL, *source = NULL;
    char protocol_sig[65] = "";
    const char *failure = NULL;
    char failure_text[BL_ERROR_MAX + 64];
    bool interrupted = false;

    receipt_request(&st, r, a, err);
    if (st == BL_OK && (!samples || !warmups))
        st = bl_fail(err, BL_ENOMEM, "out of memory");
    if (st != BL_OK)
        goto out_of_memory;

    /* Everything after entry that can fail is a failed receipt, not a
     * missing one: the parent must always get a line to read. */
    bl_error werr = {0};
    double p0 = now(h);
    bl_status wst = runtime_prepare(a, &prepared, &werr);
    double p1 = now(h);
    if (wst == BL_OK)
        wst = bl_profile_workload_build(a, &w, &werr);
    if (wst == BL_OK)
        wst = bl_profile_protocol(a, &w, &protocol, protocol_sig, &werr);
    if (wst != BL_OK) {
        if (wst == BL_ENOMEM && strncmp(werr.msg, "out of memory", 13) == 0) {
            *err = werr;
            goto out_of_memory;
        }
        snprintf(failure_text, sizeof failure_text, "%s: %s", bl_status_kind(werr.status),
                 werr.msg);
        failure = failure_text;
    }
    if (prepared && !(runtime = bl_json_copy(prepared)))
        st = bl_fail(err, BL_ENOMEM, "out of memory for the runtime block");

    double first_end = NAN;
    if (st == BL_OK)
        st = run_evaluations(a, h, &w, prepared, &runtime, samples, warmups, &first_end, &failure,
                             &interrupted, err);
    if (st != BL_OK)
        goto out_of_memory;
    if (interrupted && !failure) { /* stopped after an evaluation that completed */
        stop_reason(h, failure_text, sizeof failure_text);
        failure = failure_text;
    }
    /* What describes the program but bears on no evaluation comes after
     * them all, outside the span from entry to first result. */
    bl_status sst = source_block(&source, &werr);
    if (sst == BL_OK && runtime)
        sst = executable_sha256(runtime, &werr);
    if (sst != BL_OK) {
        if (sst == BL_ENOMEM && strncmp(werr.msg, "out of memory", 13) == 0) {
            *err = werr;
            goto out_of_memory;
        }
        if (!failure) {
            snprintf(failure_text, sizeof failure_text, "%s: %s", bl_status_kind(werr.status),
                     werr.msg);
            failure = failure_text;
        }
    }

    bl_json *stats = NULL;
    st = statistics(samples, &stats, err);
    bool complete = !failure && bl_json_size(samples) == (size_t)(1 + a->samples) &&
                    bl_json_size(warmups) == (size_t)a->warmups;
    if (!complete && !failure)
        failure = "not every evaluation ran";
    bl_json_put(&st, r, "status", bl_json_string(complete ? "complete" : "failed"), err);
    if (failure)
        bl_json_put(&st, r, "error", bl_json_string(failure), err);
    bl_json_put(&st, r, "source", source ? source : bl_json_null(), err);
    source = NULL;
    bl_json_put(&st, r, "runtime", runtime ? runtime : bl_json_null(), err);
    runtime = NULL;
    bl_json_put(&st, r, "runtime_preparation_seconds",
                prepared ? bl_measure_real_or_null(p1 - p0) : bl_json_null(), err);
    bl_json_put(&st, r, "runtime_preparation_boundary",
                bl_json_string("runtime fingerprint, executable build id (read from the "
                               "running image) and start of the worker thread team"),
                err);
    bl_json_put(&st, r, "worker_entry_to_first_result_seconds",
                bl_measure_real_or_null(first_end - entry), err);
    bl_json_put(&st, r, "worker_entry_to_first_result_boundary",
                bl_json_string("worker entry (after argument parsing) through the end of the "
                               "first evaluation; excludes process start-up, argument parsing "
                               "and record writing"),
                err);
    bl_json_put(&st, r, "actual_arch",
                prepared ? bl_json_copy(bl_json_get(prepared, "actual_arch")) : bl_json_null(),
                err);
    bl_json_put(&st, r, "protocol_signature",
                protocol_sig[0] ? bl_json_string(protocol_sig) : bl_json_null(), err);
    bl_json_put(&st, r, "protocol", protocol ? protocol : bl_json_null(), err);
    protocol = NULL;
    bl_json_put(&st, r, "samples", samples, err);
    bl_json_put(&st, r, "warmups", warmups, err);
    samples = warmups = NULL;
    bl_json_put(&st, r, "typed_bundle_compiled_counts", bl_json_string("not_applicable"), err);
    bl_json_put(&st, r, "statistics", stats, err);
    bl_json_put(&st, r, "peak_rss", bl_measure_peak_rss(), err);
    if (st != BL_OK)
        goto out_of_memory;
    bl_profile_workload_destroy(&w);
    bl_json_destroy(prepared);
    *receipt = r;
    return interrupted ? 130 : complete ? 0 : 1;

out_of_memory:
    bl_profile_workload_destroy(&w);
    bl_json_destroy(r);
    bl_json_destroy(samples);
    bl_json_destroy(warmups);
    bl_json_destroy(prepared);
    bl_json_destroy(runtime);
    bl_json_destroy(protocol);
    bl_json_destroy(source);
    return 1;
}
