/* `brainlesslab run PLAN` (spec/platform.md §3.2), adapted to a build that has
 * the evaluation runner but no records yet: it validates everything the
 * reference validates before it touches the disk, creates the records root
 * (where the records issue will reserve `<root>/<plan id>-<timestamp>-<hex>`),
 * executes the plan and prints one JSON document with the trial rows on
 * stdout and a short human summary on stderr.
 *
 * Every check that can refuse a run comes before the first directory is
 * created, so a refused run leaves no trace; after that, only the runner's own
 * errors and Ctrl-C can stop it. Exit 0 iff every trial completed (§3.3). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab run [-h] [--root ROOT] [--backend {cpu}]\n"
    "                        [--batch-size BATCH_SIZE]\n"
    "                        [--memory-budget-mib MEMORY_BUDGET_MIB]\n"
    "                        [--recording {summary,probe_events,replay}]\n"
    "                        [--recording-budget-mib RECORDING_BUDGET_MIB]\n"
    "                        [--cpu-threads CPU_THREADS]\n"
    "                        [--calibration CALIBRATION]\n"
    "                        plan\n";

static const char help[] =
    "\n"
    "Execute a plan and print its trials, summaries, contrasts and calibrations as\n"
    "one JSON document (a calibrate plan prints its frozen calibration records); a\n"
    "summary goes to stderr. This build creates the records root but writes no\n"
    "record yet.\n"
    "\n"
    "positional arguments:\n"
    "  plan                  path of a v4 TOML plan\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --root ROOT           parent directory for the new record (default: records)\n"
    "  --backend {cpu}       execution backend (default: cpu)\n"
    "  --batch-size BATCH_SIZE\n"
    "                        requested maximum batch slots (default: 32)\n"
    "  --memory-budget-mib MEMORY_BUDGET_MIB\n"
    "                        managed-memory budget in MiB (default: 256)\n"
    "  --recording {summary,probe_events,replay}\n"
    "                        recording channel (default: summary; the others are\n"
    "                        not implemented in this build yet)\n"
    "  --recording-budget-mib RECORDING_BUDGET_MIB\n"
    "                        recording budget in MiB, 0 allowed (default: 32)\n"
    "  --cpu-threads CPU_THREADS\n"
    "                        CPU threads (default: 1)\n"
    "  --calibration CALIBRATION\n"
    "                        calibration JSON file (record directories: not in\n"
    "                        this build yet); repeatable, all records are pooled\n";

static const char *const backends[] = {"cpu", NULL}; /* DESIGN.md: this build's backends */
static const char *const recordings[] = {"summary", "probe_events", "replay", NULL};

/* Indices into `options` (and so into bl_cli_args' per-option arrays). */
enum {
    OPT_ROOT,
    OPT_BACKEND,
    OPT_BATCH_SIZE,
    OPT_MEMORY_BUDGET,
    OPT_RECORDING,
    OPT_RECORDING_BUDGET,
    OPT_CPU_THREADS,
    OPT_CALIBRATION,
};

/* spec/platform.md §3.1, in the reference's order. */
static const bl_cli_option options[] = {
    [OPT_ROOT] = {.name = "--root", .kind = BL_CLI_STRING, .fallback = "records"},
    [OPT_BACKEND] = {.name = "--backend", .kind = BL_CLI_CHOICE, .choices = backends,
                     .fallback = "cpu"},
    [OPT_BATCH_SIZE] = {.name = "--batch-size", .kind = BL_CLI_INT, .fallback = "32"},
    [OPT_MEMORY_BUDGET] = {.name = "--memory-budget-mib", .kind = BL_CLI_INT, .fallback = "256"},
    [OPT_RECORDING] = {.name = "--recording", .kind = BL_CLI_CHOICE, .choices = recordings,
                       .fallback = "summary"},
    [OPT_RECORDING_BUDGET] = {.name = "--recording-budget-mib", .kind = BL_CLI_INT,
                              .fallback = "32"},
    [OPT_CPU_THREADS] = {.name = "--cpu-threads", .kind = BL_CLI_INT, .fallback = "1"},
    [OPT_CALIBRATION] = {.name = "--calibration", .kind = BL_CLI_STRING, .repeatable = true},
};

#define MIB INT64_C(1048576)

/* ---- execution policy from the options -------------------------------- */

/* mib × 1048576 into *bytes. The product of a positive value that does not
 * fit int64 is refused here: silently wrapping would turn a huge budget into
 * a tiny or negative one. A negative product that does not fit saturates,
 * because validation rejects every negative budget with the spec's text. */
static bl_status mib_to_bytes(const char *option, int64_t mib, int64_t *bytes, bl_error *err)
{
    if (mib > INT64_MAX / MIB)
        return bl_fail(err, BL_EVALUE,
                       "%s %lld is too large: the budget must fit in 64-bit bytes "
                       "(at most %lld MiB)",
                       option, (long long)mib, (long long)(INT64_MAX / MIB));
    *bytes = mib < INT64_MIN / MIB ? INT64_MIN : mib * MIB;
    return BL_OK;
}

/* §3.2 step 2: ExecutionSpec from the options; reserve_fraction,
 * noise_tile_frames and cache keep their defaults (§3.1). */
static bl_status build_execution(const bl_cli_args *args, bl_execution *x, bl_error *err)
{
    bl_execution_default(x);
    x->backend = BL_BACKEND_CPU; /* the parser admits no other */
    x->batch_size = args->integer[OPT_BATCH_SIZE];
    x->cpu_threads = args->integer[OPT_CPU_THREADS];
    const char *rec = args->value[OPT_RECORDING];
    x->recording = strcmp(rec, "probe_events") == 0 ? BL_RECORDING_PROBE_EVENTS
                   : strcmp(rec, "replay") == 0     ? BL_RECORDING_REPLAY
                                                    : BL_RECORDING_SUMMARY;
    bl_status st = mib_to_bytes("--memory-budget-mib", args->integer[OPT_MEMORY_BUDGET],
                                &x->memory_budget_bytes, err);
    if (st == BL_OK)
        st = mib_to_bytes("--recording-budget-mib", args->integer[OPT_RECORDING_BUDGET],
                          &x->recording_budget_bytes, err);
    if (st == BL_OK)
        st = bl_execution_validate(x, err);
    return st;
}

/* What this build parses but cannot do yet is refused before anything is
 * created, rather than run without it and give a misleadingly plain result. */
static bl_status refuse_unimplemented(const bl_execution *x, bl_error *err)
{
    if (x->recording != BL_RECORDING_SUMMARY)
        return bl_fail(err, BL_ERUNTIME,
                       "--recording %s is not implemented in this build yet",
                       bl_recording_name(x->recording));
    return BL_OK;
}

/* §3.2 step 4: every --calibration source, pooled in the order given. A
 * record directory is read through inspect, which the records work adds. */
typedef struct pool {
    bl_calibration **cals;
    size_t n;
} pool;

static void pool_free(pool *p)
{
    bl_calibrations_free(p->cals, p->n);
    p->cals = NULL;
    p->n = 0;
}

static bl_status load_calibrations(const bl_cli_args *args, pool *p, bl_error *err)
{
    for (size_t i = 0; i < args->count[OPT_CALIBRATION]; i++) {
        const char *path = args->all[OPT_CALIBRATION][i];
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            return bl_fail(err, BL_ERUNTIME,
                           "%s: calibration record directories are not readable in this build "
                           "yet; pass the calibration JSON file",
                           path);
        bl_calibration **got = NULL;
        size_t n = 0;
        bl_status st = bl_calibrations_read_file(path, &got, &n, err);
        if (st != BL_OK)
            return st;
        if (n == 0)
            continue; /* an empty document adds nothing (and allocated nothing) */
        bl_calibration **grown = bl_realloc(p->cals, (p->n + n) * sizeof *grown);
        if (!grown) {
            bl_calibrations_free(got, n);
            return bl_fail(err, BL_ENOMEM, "out of memory for calibration records");
        }
        memcpy(grown + p->n, got, n * sizeof *got);
        bl_free(got); /* the records now belong to the pool */
        p->cals = grown;
        p->n += n;
    }
    return BL_OK;
}

/* §3.2 step 5: the plan id names the record directory, so it must be one
 * portable path component: Path(id).name == id, not "." or "..", no '\'. */
static bl_status check_plan_id(const char *id, bl_error *err)
{
    if (!*id || strchr(id, '/') || strchr(id, '\\') || strcmp(id, ".") == 0 ||
        strcmp(id, "..") == 0)
        return bl_fail(err, BL_EVALUE, "plan id must be a portable record-name component");
    return BL_OK;
}

/* ---- the records root --------------------------------------------------- */

/* mkdir -p `root`, or one error line and nothing left behind: the
 * directories this call created are removed again when a deeper one fails.
 * A component that exists but is not a directory (a regular file in the way)
 * is FileExistsError "<path>: exists and is not a directory"; any other
 * failure (a path under /proc, a read-only file system, ...) carries the
 * system's message, as FileNotFoundError when the system says ENOENT and as
 * OSError otherwise: "<path>: cannot create directory: <message>". */
static bl_status make_root(const char *root, bl_error *err)
{
    size_t len = strlen(root);
    if (len == 0)
        return bl_fail(err, BL_ENOENT, "'': cannot create directory: %s", strerror(ENOENT));
    char *path = bl_strdup(root);
    /* Ends of the created prefixes, for the rollback: at most one per '/'. */
    size_t *created = bl_mallocarray(len + 1, sizeof *created);
    size_t ncreated = 0;
    bl_status st = BL_OK;
    if (!path || !created) {
        st = bl_fail(err, BL_ENOMEM, "cannot allocate the records root path");
        goto done;
    }
    for (size_t end = 1; end <= len; end++) {
        if (end < len && path[end] != '/')
            continue;
        if (path[end - 1] == '/')
            continue; /* "a//b" or the leading "/" */
        char saved = path[end];
        path[end] = 0;
        if (mkdir(path, 0777) == 0) {
            created[ncreated++] = end;
        } else {
            int e = errno;
            struct stat sb;
            if (e == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
                /* an existing directory (or a link to one): go deeper */
            } else if (e == EEXIST || e == ENOTDIR) {
                st = bl_fail(err, BL_EEXIST, "%s: exists and is not a directory", path);
            } else {
                st = bl_fail(err, e == ENOENT ? BL_ENOENT : BL_EOS,
                             "%s: cannot create directory: %s", path, strerror(e));
            }
        }
        path[end] = saved;
        if (st != BL_OK)
            break;
    }
    if (st != BL_OK)
        while (ncreated > 0) {
            path[created[--ncreated]] = 0;
            (void)rmdir(path);
        }
done:
    bl_free(created);
    bl_free(path);
    return st;
}

/* ---- execution hooks ---------------------------------------------------- */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* From here on the run owns a directory (later a reservation), so Ctrl-C
 * must let it finish cleanly: the handler only raises the flag the runner
 * polls at tick boundaries. SA_RESTART keeps stdio writes from failing with
 * EINTR. */
static void interrupt_sets_flag(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}

typedef struct progress_state {
    bool shown; /* a line was drawn, so the summary needs a newline first */
} progress_state;

static void on_progress(void *ctx, size_t done, size_t total)
{
    progress_state *p = ctx;
    fprintf(stderr, "\r[run] %zu/%zu trials", done, total);
    fflush(stderr);
    p->shown = true;
}

/* ---- output ------------------------------------------------------------- */

static bl_json *int_array(const int64_t *v, size_t n)
{
    bl_json *a = bl_json_array();
    for (size_t i = 0; a && i < n; i++)
        if (bl_json_array_append(a, bl_json_int(v[i]), NULL) != BL_OK) {
            bl_json_free(a);
            return NULL;
        }
    return a;
}

static bl_status build_metadata(const bl_resolved_plan *plan, const bl_execution *x,
                                const bl_run_result *r, bl_json **out, bl_error *err)
{
    bl_json *m = bl_json_object(), *exec = NULL;
    if (!m)
        return bl_fail(err, BL_ENOMEM, "cannot allocate the run metadata");
    const bl_json *numerics = bl_json_get(bl_json_get(bl_resolved_plain(plan), "request"),
                                          "numerics");
    const bl_json *dtype = numerics ? bl_json_get(numerics, "dtype") : NULL;
    BL_ASSERT(dtype && bl_json_kindof(dtype) == BL_JSON_STRING); /* resolution fills it in */
    bl_status st = bl_execution_json(x, &exec, err);
    if (st == BL_OK)
        st = bl_json_object_set(m, "execution", exec, err);
    if (st == BL_OK)
        st = bl_json_object_set(m, "batch_capacities",
                                int_array(r->batch_capacities, r->ncohorts), err);
    const struct {
        const char *key;
        int64_t value;
    } ints[] = {
        {"requested_batch_size", r->requested_batch_size},
        {"recording_estimate_bytes", r->recording_estimate_bytes},
        {"allocation_budget", r->allocation_budget},
        {"cpu_threads", r->cpu_threads},
        {"peak_rss_bytes", r->peak_rss_bytes},
        {"world_ticks", r->world_ticks},
        {"neural_frames", r->neural_frames},
        {"reservoir_frames", r->reservoir_frames},
    };
    for (size_t i = 0; st == BL_OK && i < sizeof ints / sizeof *ints; i++)
        st = bl_json_object_set(m, ints[i].key, bl_json_int(ints[i].value), err);
    if (st == BL_OK)
        st = bl_json_object_set(m, "dtype", bl_json_copy(dtype), err);
    if (st != BL_OK) {
        bl_json_free(m);
        return st;
    }
    *out = m;
    return BL_OK;
}

/* Appends bl_<what>_json of every item to a new array under `key`. */
#define ADD_ARRAY(doc, key, n, json_of)                                        \
    do {                                                                       \
        bl_json *arr_ = bl_json_array();                                       \
        st = bl_json_object_set(doc, key, arr_, err);                          \
        for (size_t i_ = 0; st == BL_OK && i_ < (n); i_++) {                   \
            bl_json *item_ = NULL;                                             \
            st = json_of;                                                      \
            if (st == BL_OK)                                                   \
                st = bl_json_array_append(arr_, item_, err);                   \
        }                                                                      \
    } while (0)

/* The stdout document: {"calibrations", "contract_hash", "contrasts",
 * "metadata", "plan_id", "summaries", "timings", "trials"}, rows in job
 * order. A calibrate plan prints its frozen records as a
 * "brainlesslab-calibrations" document instead (until records exist). Built
 * whole before anything is written. */
static bl_status build_document(const bl_resolved_plan *plan, const char *plan_id,
                                const bl_execution *x, const bl_evaluation *e, bl_json **out,
                                bl_error *err)
{
    const bl_run_result *r = e->run;
    const bl_json *request = bl_json_get(bl_resolved_plain(plan), "request");
    if (strcmp(bl_json_get_string(bl_json_get(request, "operation"), NULL), "calibrate") == 0)
        return bl_calibrations_document((const bl_calibration *const *)e->calibrations,
                                        e->ncalibrations, out, err);
    bl_json *doc = bl_json_object(), *meta = NULL, *timings = NULL;
    if (!doc)
        return bl_fail(err, BL_ENOMEM, "cannot allocate the run document");
    bl_status st = bl_json_object_set(doc, "contract_hash",
                                      bl_json_string(bl_resolved_contract_hash(plan)), err);
    if (st == BL_OK)
        st = bl_json_object_set(doc, "plan_id", bl_json_string(plan_id), err);
    if (st == BL_OK && (st = build_metadata(plan, x, r, &meta, err)) == BL_OK)
        st = bl_json_object_set(doc, "metadata", meta, err);
    if (st == BL_OK) {
        timings = bl_json_object();
        st = bl_json_object_set(doc, "timings", timings, err);
    }
    if (st == BL_OK)
        st = bl_json_object_set(timings, "preflight_seconds",
                                bl_json_real(r->seconds_preflight), err);
    if (st == BL_OK)
        st = bl_json_object_set(timings, "execute_seconds", bl_json_real(r->seconds_execute),
                                err);
    if (st == BL_OK)
        ADD_ARRAY(doc, "trials", r->ntrials, bl_trial_result_json(&r->trials[i_], &item_, err));
    if (st == BL_OK)
        ADD_ARRAY(doc, "summaries", e->ntargets,
                  bl_target_summary_json(&e->summaries[i_], &item_, err));
    if (st == BL_OK)
        ADD_ARRAY(doc, "contrasts", e->ncontrasts, bl_contrast_json(&e->contrasts[i_], &item_, err));
    if (st == BL_OK)
        ADD_ARRAY(doc, "calibrations", e->ncalibrations,
                  bl_calibration_json(e->calibrations[i_], &item_, err));
    if (st != BL_OK) {
        bl_json_free(doc);
        return st;
    }
    *out = doc;
    return BL_OK;
}

/* The human summary on stderr: one line per target in plan order (trials,
 * completed, the summary's raw estimate with its interval and, where a
 * calibration applies, the adjusted value), then the totals and the rate.
 * Returns whether every trial completed. */
static bool print_summary(const bl_evaluation *e)
{
    const bl_run_result *r = e->run;
    size_t completed_all = 0, failed_all = 0;
    for (size_t i = 0; i < r->ntrials; i++) {
        completed_all += r->trials[i].status == BL_TRIAL_COMPLETED;
        failed_all += r->trials[i].status == BL_TRIAL_FAILED;
    }
    for (size_t t = 0; t < e->ntargets; t++) {
        const bl_target_summary *s = &e->summaries[t];
        fprintf(stderr, "%s: %zu trials, %zu completed", s->target_id,
                s->completed_trials + s->failed_trials, s->completed_trials);
        if (isnan(s->raw))
            fprintf(stderr, ", no %s estimate", s->outcome_key);
        else
            fprintf(stderr, ", %s %.6g", s->outcome_key, s->raw);
        if (s->has_raw_interval)
            fprintf(stderr, " [%.6g, %.6g]", s->raw_interval[0], s->raw_interval[1]);
        if (!isnan(s->normalised))
            fprintf(stderr, ", adjusted %.6g (%s)", s->normalised,
                    bl_adjust_status_name(s->normalisation));
        fputc('\n', stderr);
    }
    for (size_t k = 0; k < e->ncontrasts; k++) {
        const bl_contrast *c = &e->contrasts[k];
        if (c->status == BL_CONTRAST_PAIRED_RAW)
            fprintf(stderr, "%s - %s: %s %+.6g\n", c->target_id, c->reference_id, c->key,
                    c->estimate);
        else
            fprintf(stderr, "%s - %s: failed pair\n", c->target_id, c->reference_id);
    }
    fprintf(stderr,
            "total: %zu trials, %zu completed, %zu failed, %zu incomplete; "
            "%lld world ticks, %lld neural frames in %.3f s",
            r->ntrials, completed_all, failed_all, r->ntrials - completed_all - failed_all,
            (long long)r->world_ticks, (long long)r->neural_frames, r->seconds_execute);
    /* The rate counts reservoir frames only: a null's frames cost next to
     * nothing and would flatter the model's throughput. */
    if (r->seconds_execute > 0 && r->reservoir_frames > 0)
        fprintf(stderr, " (%.4g reservoir frames/s)\n",
                (double)r->reservoir_frames / r->seconds_execute);
    else
        fputc('\n', stderr);
    return completed_all == r->ntrials;
}

/* ---- the command -------------------------------------------------------- */

static int run_main(const bl_cli_args *args)
{
    /* Until the records root exists the command owns nothing on disk, so
     * Ctrl-C may end it on the spot (exit 130, one line). */
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    bl_plan *plan = NULL;
    bl_resolved_plan *resolved = NULL;
    bl_evaluation *result = NULL;
    pool cals = {0};
    bl_json *doc = NULL;
    bl_execution x;
    progress_state progress = {0};
    bl_run_hooks hooks = {.interrupt = &interrupted};
    bl_buf out;
    bl_buf_init(&out);
    int rc;
    bl_status st;

    if (bl_plan_read(args->positional, &plan, &err) != BL_OK ||
        bl_plan_resolve(plan, &resolved, &err) != BL_OK ||
        build_execution(args, &x, &err) != BL_OK ||
        refuse_unimplemented(&x, &err) != BL_OK ||
        load_calibrations(args, &cals, &err) != BL_OK ||
        check_plan_id(bl_plan_id(plan), &err) != BL_OK ||
        bl_evaluation_preflight(resolved, &x, (const bl_calibration *const *)cals.cals, cals.n,
                                &err) != BL_OK)
        goto report;

    interrupt_sets_flag();
    if (make_root(args->value[OPT_ROOT], &err) != BL_OK)
        goto report;
    /* The records issue reserves <root>/<plan id>-<timestamp>-<hex> here. */

    if (isatty(STDERR_FILENO)) {
        hooks.progress = on_progress;
        hooks.ctx = &progress;
    }
    st = bl_evaluate(resolved, &x, (const bl_calibration *const *)cals.cals, cals.n, &hooks,
                     &result, &err);
    if (progress.shown)
        fputc('\n', stderr); /* end the progress line before any report */
    if (st != BL_OK)
        goto report;
    /* A Ctrl-C after the last tick still means the user asked to stop. */
    if (interrupted) {
        bl_fail(&err, BL_EINTERRUPT, "interrupted");
        goto report;
    }
    if (build_document(resolved, bl_plan_id(plan), &x, result, &doc, &err) != BL_OK ||
        bl_json_write(doc, BL_JSON_SORT_KEYS | BL_JSON_SPACED, &out, &err) != BL_OK ||
        (bl_buf_putc(&out, '\n'), bl_buf_status(&out, &err)) != BL_OK)
        goto report;
    rc = bl_cli_emit(&out);
    if (rc == 0)
        rc = print_summary(result) ? 0 : 1;
    goto done;

report:
    rc = bl_cli_report(&err);
done:
    bl_buf_free(&out);
    bl_json_free(doc);
    bl_evaluation_free(result);
    pool_free(&cals);
    bl_resolved_plan_free(resolved);
    bl_plan_free(plan);
    return rc;
}

const bl_cli_command bl_cli_run = {
    .name = "run",
    .positional = "plan",
    .options = options,
    .n_options = sizeof options / sizeof *options,
    .usage = usage,
    .help = help,
    .main = run_main,
};
