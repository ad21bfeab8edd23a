/* The profile parent (spec/measurement.md §1.4, §1.11): it checks the
 * command line, the plan and the machine's background activity before it
 * creates anything, then runs each backend's two phases in fresh worker
 * processes (this same executable, exec'd), one at a time, and writes
 * receipt.json.
 *
 * The reference's phases are "empty application cache" and "populated
 * cache". This engine is compiled ahead of time and has no application
 * cache, so both phases always run and the cache fields read
 * "not_applicable"; the phases then measure what a new process pays here:
 * page faults and first touch, the dynamic loader, the allocator (§8). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/file.h"
#include "brainlesslab/records.h"
#include "brainlesslab/version.h"
#include "measure_internal.h"
#include "profile_internal.h"
#include "stepping_internal.h"

extern char **environ;

static const char *const phases[] = {"cold_cache_new_process", "warm_cache_new_process"};
/* --isolated: one fresh process; its model and buffers are allocated once
 * and every run inside it starts from the same reset state. */
static const char *const isolated_phases[] = {"isolated_new_process"};

static const char process_boundary[] =
    "full worker process: exec through exit; loader, argument parsing, runtime preparation, "
    "all evaluations and optional records";

static const char cache_scope[] =
    "not_applicable: kernels are compiled ahead of time, so there is no application cache to "
    "empty or populate; OS page cache and CPU caches uncontrolled. The cold and warm phases are "
    "two fresh processes in series.";

static const char isolated_interpretation[] =
    "Pure stepping time of one model on a fixed tape: comparable across engines, instruction "
    "sets, lane policies, thread counts and batch sizes only when the final-state digest is "
    "the same; not the cost of a closed-loop evaluation (use profile for that).";

static const char interpretation[] =
    "Repeated identical development worlds measure software latency, not additional "
    "independent scientific evidence or a fixed speed claim.";

/* ---- reading a worker ----------------------------------------------------- */

bl_status bl_profile_parse_worker_output(const char *text, bl_json **receipt, bl_error *err)
{
    static const char prefix[] = "PROFILE_RECEIPT=";
    *receipt = NULL;
    const char *found = NULL;
    size_t found_len = 0, lines = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= sizeof prefix - 1 && strncmp(p, prefix, sizeof prefix - 1) == 0) {
            lines++;
            found = p + sizeof prefix - 1;
            found_len = len - (sizeof prefix - 1);
        }
        p = nl ? nl + 1 : NULL;
    }
    if (lines != 1)
        return bl_fail(err, BL_EVALUE,
                       "invalid worker receipt: expected exactly one PROFILE_RECEIPT line, "
                       "found %zu",
                       lines);
    bl_error perr = {0};
    bl_json *v = NULL;
    if (bl_json_parse(found, found_len, "PROFILE_RECEIPT", &v, &perr) != BL_OK)
        return bl_fail(err, perr.status == BL_ENOMEM ? BL_ENOMEM : BL_EVALUE,
                       "invalid worker receipt: %s", perr.msg);
    if (bl_json_kindof(v) != BL_JSON_OBJECT) {
        bl_json_destroy(v);
        return bl_fail(err, BL_EVALUE, "invalid worker receipt: not a JSON object");
    }
    *receipt = v;
    return BL_OK;
}

/* Every sample of `list` complete with `trials` completed trials. */
static bool rows_complete(const bl_json *list, int64_t trials)
{
    for (size_t i = 0; i < bl_json_size(list); i++) {
        const bl_json *row = bl_json_at(list, i);
        if (!bl_measure_equal(bl_measure_string(row, "status"), "complete"))
            return false;
        const bl_json *st = bl_json_get(row, "trial_statuses");
        if (!st || bl_json_kindof(st) != BL_JSON_ARRAY || (int64_t)bl_json_size(st) != trials)
            return false;
        for (size_t k = 0; k < bl_json_size(st); k++)
            if (bl_json_kindof(bl_json_at(st, k)) != BL_JSON_STRING ||
                !bl_measure_equal(bl_json_get_string(bl_json_at(st, k), NULL), "completed"))
                return false;
    }
    return true;
}

bool bl_profile_row_complete(const bl_json *row, int returncode, const bl_profile_args *a,
                             const bl_json *first, const char **error)
{
    *error = NULL;
    /* The stepping worker checks its own runs (digests, the record's
     * activity) and says why one failed. */
    if (a->isolated) {
        if (returncode == 0 && bl_measure_equal(bl_measure_string(row, "status"), "complete"))
            return true;
        *error = "worker failed or reported an incomplete receipt";
        return false;
    }
    const bl_json *samples = bl_json_get(row, "samples");
    const bl_json *warmups = bl_json_get(row, "warmups");
    if (returncode != 0 || !bl_measure_equal(bl_measure_string(row, "status"), "complete") || !samples ||
        !warmups || bl_json_kindof(samples) != BL_JSON_ARRAY ||
        bl_json_kindof(warmups) != BL_JSON_ARRAY ||
        bl_json_size(samples) != (size_t)(1 + a->samples) ||
        bl_json_size(warmups) != (size_t)a->warmups || !rows_complete(samples, a->trials) ||
        !rows_complete(warmups, a->trials)) {
        *error = "worker failed or reported an incomplete receipt";
        return false;
    }
    if (first) {
        const bl_json *s0 = bl_json_at(samples, 0);
        const bl_json *f0 = bl_json_at(bl_json_get(first, "samples"), 0);
        if (!bl_measure_equal(bl_measure_string(row, "protocol_signature"),
                           bl_measure_string(first, "protocol_signature")) ||
            !bl_measure_equal(bl_measure_string(s0, "work_signature"), bl_measure_string(f0, "work_signature")) ||
            !bl_measure_equal(bl_measure_string(s0, "outcome_signature"),
                           bl_measure_string(f0, "outcome_signature"))) {
            *error = "scientific work/outcomes changed between processes";
            return false;
        }
    }
    return true;
}

/* ---- launching a worker ----------------------------------------------------- */

static bl_status spawn_worker(void *ctx, const char *const *argv, const char *stdout_path,
                              const char *stderr_path, int *returncode, char **stdout_text,
                              bl_error *err)
{
    (void)ctx;
    *stdout_text = NULL;
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return bl_fail(err, BL_ENOMEM, "cannot prepare a worker process");
    const int flags = O_WRONLY | O_CREAT | O_EXCL;
    int rc = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, stdout_path, flags, 0644);
    if (rc == 0)
        rc = posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, stderr_path, flags, 0644);
    pid_t pid = -1;
    if (rc == 0)
        rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return bl_fail(err, BL_EOS, "cannot start the worker %s: %s", argv[0], strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return bl_fail(err, BL_EOS, "cannot wait for the worker: %s", strerror(errno));
    }
    /* Python's convention: the exit status, or minus the signal. */
    *returncode = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    /* The worker wrote this file, but it is read as any other input: a
     * regular file, capped, so a runaway worker cannot fill memory. */
    size_t len;
    return bl_file_read(stdout_path, BL_FILE_JSON_MAX, "worker output", 0, stdout_text, &len,
                        err);
}

/* The worker's command line: this executable, the destination, the hidden
 * worker flags and every workload flag explicitly (§1.4). */
typedef struct worker_argv {
    const char *argv[64];
    char numbers[16][32];
    size_t n, nnum;
} worker_argv;

static void arg(worker_argv *w, const char *s)
{
    BL_ASSERT(w->n + 1 < sizeof w->argv / sizeof *w->argv);
    w->argv[w->n++] = s;
    w->argv[w->n] = NULL;
}

static void arg_int(worker_argv *w, const char *flag, int64_t v)
{
    BL_ASSERT(w->nnum < sizeof w->numbers / sizeof *w->numbers);
    snprintf(w->numbers[w->nnum], sizeof w->numbers[0], "%lld", (long long)v);
    arg(w, flag);
    arg(w, w->numbers[w->nnum++]);
}

/* The stepping benchmark's worker: the flags it was given that apply. */
static void isolated_argv(worker_argv *w, const bl_profile_args *a)
{
    arg(w, "--isolated");
    arg_int(w, "--frames", a->frames);
    if (a->dtype) {
        arg(w, "--dtype");
        arg(w, a->dtype);
    }
    if (a->node_given || !a->tape_record) {
        arg(w, "--node");
        arg(w, a->node);
    }
    if (a->count_given || !a->tape_record)
        arg_int(w, "--count", a->count);
    arg_int(w, "--batch-size", a->batch_size);
    arg_int(w, "--samples", a->samples);
    arg_int(w, "--warmups", a->warmups);
    arg_int(w, "--cpu-threads", a->cpu_threads);
    if (a->tape_record) {
        arg(w, "--tape-record");
        arg(w, a->tape_record);
        if (a->tape_trials) {
            arg(w, "--tape-trials");
            arg(w, a->tape_trials);
        }
        return;
    }
    arg(w, "--task");
    arg(w, a->task);
    arg_int(w, "--seed", a->seed);
    arg(w, "--tape-inputs");
    arg(w, a->tape_inputs);
    arg_int(w, "--tape-seed", a->tape_seed);
}

static void build_argv(worker_argv *w, const char *self, const bl_profile_args *a,
                       const char *backend, const char *phase)
{
    memset(w, 0, sizeof *w);
    arg(w, self);
    arg(w, "profile");
    arg(w, a->destination);
    arg(w, "--worker-backend");
    arg(w, backend);
    arg(w, "--process-phase");
    arg(w, phase);
    if (a->isolated) {
        isolated_argv(w, a);
        return;
    }
    arg(w, "--dtype");
    arg(w, a->dtype);
    arg(w, "--node");
    arg(w, a->node);
    arg(w, "--task");
    arg(w, a->task);
    arg_int(w, "--count", a->count);
    arg_int(w, "--batch-size", a->batch_size);
    arg_int(w, "--trials", a->trials);
    arg_int(w, "--blocks", a->blocks);
    arg_int(w, "--samples", a->samples);
    arg_int(w, "--warmups", a->warmups);
    arg_int(w, "--cpu-threads", a->cpu_threads);
    arg_int(w, "--memory-budget-mib", a->memory_budget_mib);
    arg_int(w, "--recording-budget-mib", a->recording_budget_mib);
    arg_int(w, "--seed", a->seed);
    if (a->has_horizon)
        arg_int(w, "--horizon", a->horizon);
    if (a->diagnostic)
        arg(w, "--diagnostic");
    arg(w, "--recording");
    arg(w, a->recording);
}

/* ---- the parent ------------------------------------------------------------- */

static bl_status telemetry(const bl_profile_args *a, const bl_profile_hooks *h, bl_json **out,
                           bl_error *err)
{
    int64_t skip[2] = {(int64_t)getpid(), (int64_t)getppid()};
    bl_activity_options o = {
        .cpu_threshold_percent = a->activity_cpu_threshold,
        .interval_seconds = a->activity_interval,
        .skip = skip,
        .nskip = 2,
    };
    if (h && h->telemetry)
        return h->telemetry(h->ctx, &o, out, err);
    return bl_activity_snapshot(&o, out, err);
}

/* §1.2: unknown telemetry is treated like activity. A refusal is a
 * RuntimeError (the command exits 2): the machine, not the command line,
 * is what is wrong, so the line says what was seen and which option
 * measures anyway. */
static bl_status judge_activity(const bl_profile_args *a, const bl_json *t, bl_error *err)
{
    if (a->allow_background_activity)
        return BL_OK;
    const char *status = bl_measure_string(t, "status");
    if (!bl_measure_equal(status, "available")) {
        const char *why = bl_measure_string(t, "diagnostic");
        return bl_fail(err, BL_ERUNTIME,
                       "background-activity telemetry is %s%s%s; pass "
                       "--allow-background-activity to measure without it (the receipt "
                       "records that)",
                       status ? status : "missing", why ? ": " : "", why ? why : "");
    }
    const bl_json *procs = bl_json_get(t, "processes");
    size_t n = procs ? bl_json_size(procs) : 0;
    if (n == 0)
        return BL_OK;
    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && i < 5; i++) {
        const bl_json *p = bl_json_at(procs, i);
        const bl_json *pid = bl_json_get(p, "pid"), *cpu = bl_json_get(p, "cpu_percent");
        int k = snprintf(list + used, sizeof list - used, "%s%s (pid %lld, %.1f%% CPU)",
                         i ? ", " : "", bl_measure_string(p, "executable") ? bl_measure_string(p, "executable") : "?",
                         pid && bl_json_kindof(pid) == BL_JSON_INT ? (long long)bl_json_get_int(pid) : -1LL,
                         cpu && bl_json_kindof(cpu) == BL_JSON_REAL ? bl_json_get_real(cpu) : 0.0);
        if (k < 0 || (size_t)k >= sizeof list - used)
            break;
        used += (size_t)k;
    }
    return bl_fail(err, BL_ERUNTIME,
                   "background activity observed: %zu process%s at or above %.3g%% CPU: %s%s; "
                   "measure on a quiet machine or pass --allow-background-activity to measure "
                   "anyway (the receipt records that)",
                   n, n == 1 ? "" : "es", a->activity_cpu_threshold, list, n > 5 ? ", ..." : "");
}

/* receipt.json: JSON with indent 2 and a newline, created exclusively and
 * synced (never half-written). */
static bl_status write_receipt(const char *path, const bl_json *receipt, bl_error *err)
{
    bl_buf b;
    bl_buf_init(&b);
    bl_status st = bl_json_write(receipt, BL_JSON_INDENT, &b, err);
    if (st == BL_OK) {
        bl_buf_putc(&b, '\n');
        st = bl_buf_status(&b, err);
    }
    if (st == BL_OK)
        st = bl_file_write_new(path, b.data, b.len, err);
    bl_buf_clear(&b);
    return st;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = bl_malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* One phase: launch, time, read; the row with the worker receipt merged
 * over the parent's fields and the status recomputed. */
static bl_status run_phase(const bl_profile_args *a, const char *self, const bl_profile_hooks *h,
                           const char *backend, const char *phase, const bl_json *first,
                           bl_json **row_out, bl_error *err)
{
    char name[128];
    snprintf(name, sizeof name, "%s-%s.stdout.txt", backend, phase);
    char *out_path = join(a->destination, name);
    snprintf(name, sizeof name, "%s-%s.stderr.txt", backend, phase);
    char *err_path = join(a->destination, name);
    bl_json *row = bl_json_object(), *worker = NULL;
    bl_status st = out_path && err_path && row ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory");
    worker_argv wa;
    build_argv(&wa, self, a, backend, phase);
    int returncode = -1;
    char *text = NULL;
    const char *error = NULL;
    char error_text[BL_ERROR_MAX + 64];
    double t0 = 0, t1 = 0;
    if (st == BL_OK) {
        bl_error serr = {0};
        t0 = h && h->clock ? h->clock(h->ctx) : bl_measure_monotonic();
        bl_status sst = (h && h->spawn ? h->spawn : spawn_worker)(
            h ? h->ctx : NULL, wa.argv, out_path, err_path, &returncode, &text, &serr);
        t1 = h && h->clock ? h->clock(h->ctx) : bl_measure_monotonic();
        if (sst == BL_ENOMEM) {
            *err = serr;
            st = sst;
        } else if (sst != BL_OK) {
            snprintf(error_text, sizeof error_text, "%s: %s", bl_status_kind(serr.status),
                     serr.msg);
            error = error_text;
        } else {
            bl_error perr = {0};
            bl_status pst = bl_profile_parse_worker_output(text, &worker, &perr);
            if (pst == BL_ENOMEM) {
                *err = perr;
                st = pst;
            } else if (pst != BL_OK) {
                snprintf(error_text, sizeof error_text, "%s", perr.msg);
                error = error_text;
            }
        }
    }
    bl_json_put(&st, row, "backend", bl_json_string(backend), err);
    bl_json_put(&st, row, "phase", bl_json_string(phase), err);
    bl_json_put(&st, row, "status", bl_json_string("failed"), err);
    bl_json_put(&st, row, "returncode", bl_json_int(returncode), err);
    bl_json_put(&st, row, "process_wall_seconds", bl_measure_real_or_null(t1 - t0), err);
    bl_json_put(&st, row, "process_timing_boundary", bl_json_string(process_boundary), err);
    bl_json_put(&st, row, "cache_files_before", bl_json_string("not_applicable"), err);
    for (size_t i = 0; st == BL_OK && worker && i < bl_json_size(worker); i++)
        bl_json_put(&st, row, bl_json_key_at(worker, i, NULL),
                    bl_json_copy(bl_json_value_at(worker, i)), err);
    if (st == BL_OK && !error && !bl_profile_row_complete(row, returncode, a, first, &error)) {
        /* Keep the worker's own reason when it gave one. */
        const char *own = bl_measure_string(row, "error");
        if (own && strcmp(error, "worker failed or reported an incomplete receipt") == 0)
            error = own;
    }
    bl_json_put(&st, row, "status", bl_json_string(error ? "failed" : "complete"), err);
    if (error)
        bl_json_put(&st, row, "error", bl_json_string(error), err);
    /* the cache fields are the parent's: the worker cannot override them */
    bl_json_put(&st, row, "cache_files_before", bl_json_string("not_applicable"), err);
    bl_json_destroy(worker);
    bl_free(text);
    bl_free(out_path);
    bl_free(err_path);
    return bl_json_hand_over(st, row, row_out);
}

static bl_json *not_applicable(void)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    const char *why = "kernels are compiled ahead of time: no application cache, no run-time "
                      "specialisation, no compiled-function counter";
    bl_json_put(&st, o, "cache_files_before", bl_json_string(why), NULL);
    bl_json_put(&st, o, "cache_enabled", bl_json_string(why), NULL);
    bl_json_put(&st, o, "compiled_functions", bl_json_string(why), NULL);
    bl_json_put(&st, o, "typed_bundle_compiled_counts", bl_json_string(why), NULL);
    return bl_measure_built(st, o);
}

int bl_profile_parent(const bl_profile_args *a, const char *self, const bl_profile_hooks *h,
                      char **receipt_path, bl_error *err)
{
    *receipt_path = NULL;
    bl_json *before = NULL, *after = NULL, *host = NULL, *receipt = NULL, *rows = NULL;
    char *path = NULL;
    int code = 1;
    bool refused = false;
    bl_status st = bl_profile_preflight(a, &refused, err);
    if (st == BL_OK)
        st = telemetry(a, h, &before, err);
    if (st == BL_OK)
        refused = (st = judge_activity(a, before, err)) != BL_OK;
    if (st == BL_OK)
        st = bl_host_describe(NULL, &host, err);
    if (st == BL_OK && h && h->interrupt && *h->interrupt)
        st = bl_fail(err, BL_EINTERRUPT, "interrupted");
    if (st != BL_OK) {
        code = st == BL_EUSAGE || refused ? 2 : st == BL_EINTERRUPT ? 130 : 1;
        goto done;
    }
    /* Exclusive: a destination that appeared since the check is refused
     * like one that was there (FileExistsError), and left alone. */
    if ((st = bl_dir_create_exclusive(a->destination, NULL, err)) != BL_OK)
        goto done;

    rows = bl_json_array();
    if (!rows)
        st = bl_fail(err, BL_ENOMEM, "out of memory for the receipt");
    bool all_complete = true, interrupted = false;
    char first_failure[BL_ERROR_MAX] = ""; /* for the command's error line */
    for (size_t b = 0; b < a->nbackends && st == BL_OK && !interrupted; b++) {
        const bl_json *first = NULL;
        const char *const *names = a->isolated ? isolated_phases : phases;
        const size_t nphases = a->isolated ? 1 : 2;
        for (size_t p = 0; p < nphases && st == BL_OK; p++) {
            bl_json *row = NULL;
            st = run_phase(a, self, h, a->backends[b], names[p], first, &row, err);
            bl_json_push(&st, rows, row, err);
            if (st != BL_OK)
                break;
            const bl_json *last = bl_json_at(rows, bl_json_size(rows) - 1);
            if (p == 0)
                first = last;
            interrupted = h && h->interrupt && *h->interrupt;
            if (!bl_measure_equal(bl_measure_string(last, "status"), "complete")) {
                if (all_complete) {
                    const char *why = bl_measure_string(last, "error");
                    snprintf(first_failure, sizeof first_failure, "%s %s: %s", a->backends[b],
                             names[p], why ? why : "failed");
                }
                all_complete = false;
                break; /* this backend's later phases would measure a failure */
            }
            if (interrupted)
                break;
        }
    }
    if (st == BL_OK)
        st = telemetry(a, h, &after, err);
    /* The host again (temperatures, frequencies, load), to compare. */
    bl_json *host_after = NULL;
    if (st == BL_OK)
        st = bl_host_describe(NULL, &host_after, err);

    struct utsname uts;
    bool have_uts = uname(&uts) == 0;
    char platform[512] = "linux";
    if (have_uts)
        snprintf(platform, sizeof platform, "%s-%s-%s", uts.sysname, uts.release, uts.machine);
    receipt = bl_json_object();
    bl_json_put(&st, receipt, "format",
                bl_json_string(a->isolated ? "brainlesslab-stepping-benchmark"
                                           : "brainlesslab-backend-profile"),
                err);
    bl_json_put(&st, receipt, "version", bl_json_int(1), err);
    bl_json_put(&st, receipt, "engine_version", bl_json_string(bl_version()), err);
    bl_json_put(&st, receipt, "machine", bl_json_string(have_uts ? uts.machine : "unknown"),
                err);
    bl_json_put(&st, receipt, "platform", bl_json_string(platform), err);
    bl_json_put(&st, receipt, "host", host, err);
    host = NULL;
    bl_json_put(&st, receipt, "host_after", host_after ? host_after : bl_json_null(), err);
    bl_json_put(&st, receipt, "background_activity",
                before ? bl_json_copy(bl_json_get(before, "processes")) : NULL, err);
    bl_json_put(&st, receipt, "background_activity_allowed",
                bl_json_bool(a->allow_background_activity), err);
    bl_json_put(&st, receipt, "activity_telemetry", before, err);
    before = NULL;
    bl_json_put(&st, receipt, "activity_after", after ? after : bl_json_null(), err);
    after = NULL;
    bl_json_put(&st, receipt, "measurements", rows, err);
    rows = NULL;
    if (a->isolated) {
        bl_json_put(&st, receipt, "timing_boundary", bl_json_string(bl_stepping_boundary), err);
        bl_json_put(&st, receipt, "interpretation",
                    bl_json_string(isolated_interpretation), err);
    } else {
        bl_json_put(&st, receipt, "timing_boundary",
                    bl_json_string(bl_profile_execute_boundary), err);
        bl_json_put(&st, receipt, "cache_scope", bl_json_string(cache_scope), err);
        bl_json_put(&st, receipt, "not_applicable", not_applicable(), err);
        bl_json_put(&st, receipt, "interpretation", bl_json_string(interpretation), err);
    }
    if (st == BL_OK && !(path = join(a->destination, "receipt.json")))
        st = bl_fail(err, BL_ENOMEM, "out of memory");
    if (st == BL_OK)
        st = write_receipt(path, receipt, err);
    if (st == BL_OK) {
        *receipt_path = path;
        path = NULL;
        code = interrupted ? 130 : all_complete ? 0 : 1;
        /* A failed measurement is the command's failure: one line saying
         * which phase failed and why, the receipt has the rest. */
        if (code == 1)
            bl_fail(err, BL_ERUNTIME, "profile failed: %s; see %s", first_failure, *receipt_path);
    }
done:
    bl_free(path);
    bl_json_destroy(before);
    bl_json_destroy(after);
    bl_json_destroy(host);
    bl_json_destroy(rows);
    bl_json_destroy(receipt);
    return code;
}
