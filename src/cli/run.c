/* `brainlesslab run PLAN` (spec/platform.md §3.2): validate everything the
 * reference validates before touching the disk, reserve
 * <root>/<plan id>-<UTC>-<hex>, execute, write the record into the
 * reservation (include/brainlesslab/records.h), inspect it and print
 * {"record": PATH, "status": ...} on stdout, with a short human summary on
 * stderr.
 *
 * Every check that can refuse a run comes before the reservation, so a
 * refused run leaves no trace. After it, every error and every stop signal
 * (Ctrl-C, SIGTERM, SIGHUP) turns the reservation into a FAILED record
 * before it is reported, so no run ever leaves a directory that could pass
 * for a complete record. What the run prints always agrees with its
 * record: a record completed before the signal arrived is reported as
 * usual. Exit 0 iff the record is complete (§3.3), 128 + the signal after
 * a stop signal (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "brainlesslab/run.h"
#include "cli.h"
#include "run_mpi.h"

static const char usage[] =
    "usage: brainlesslab run [-h] [--root ROOT] [--backend {cpu}]\n"
    "                        [--batch-size BATCH_SIZE]\n"
    "                        [--memory-budget-mib MEMORY_BUDGET_MIB]\n"
    "                        [--recording {summary,probe_events,replay}]\n"
    "                        [--recording-budget-mib RECORDING_BUDGET_MIB]\n"
    "                        [--cpu-threads CPU_THREADS]\n"
    "                        [--calibration CALIBRATION] [--shard K/N]\n"
    "                        plan\n";

static const char help[] =
    "\n"
    "Execute a plan and write one new checksummed record under ROOT; print\n"
    "{\"record\": PATH, \"status\": STATUS} on stdout and a per-target summary on\n"
    "stderr. Exit 0 iff the record is complete. Started by mpirun or srun as\n"
    "several ranks, each rank runs a part of the plan and rank 0 writes the one\n"
    "record (docs/cluster.md).\n"
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
    "                        recording channel (default: summary)\n"
    "  --recording-budget-mib RECORDING_BUDGET_MIB\n"
    "                        recording budget in MiB, 0 allowed (default: 32)\n"
    "  --cpu-threads CPU_THREADS\n"
    "                        CPU threads (default: 1)\n"
    "  --calibration CALIBRATION\n"
    "                        calibration JSON file or complete record directory;\n"
    "                        repeatable, all records are pooled\n"
    "  --shard K/N           run only part K of N (1 <= K <= N) and write a shard\n"
    "                        record for merge instead of a record\n";

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
    OPT_SHARD,
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
    [OPT_SHARD] = {.name = "--shard", .kind = BL_CLI_STRING},
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

/* §3.2 step 4: every --calibration source, pooled in the order given: a
 * calibration file, or a complete record's calibration.json (§7.7). */
typedef bl_cli_pool pool;

static void pool_free(pool *p)
{
    bl_calibrations_destroy(p->cals, p->n);
    p->cals = NULL;
    p->n = 0;
}

static bl_status load_calibrations(const bl_cli_args *args, pool *p, bl_error *err)
{
    for (size_t i = 0; i < args->count[OPT_CALIBRATION]; i++) {
        const char *path = args->all[OPT_CALIBRATION][i];
        bl_calibration **got = NULL;
        size_t n = 0;
        bl_status st = bl_calibrations_read(path, &got, &n, err);
        if (st != BL_OK)
            return st;
        if (n == 0)
            continue; /* an empty document adds nothing (and allocated nothing) */
        bl_calibration **grown = bl_realloc(p->cals, (p->n + n) * sizeof *grown);
        if (!grown) {
            bl_calibrations_destroy(got, n);
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

/* ---- execution hooks ---------------------------------------------------- */

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

/* The human summary on stderr: one line per target in plan order (trials,
 * completed, the summary's raw estimate with its interval and, where a
 * calibration applies, the adjusted value), then the totals and the rate. */
static void print_summary(const bl_evaluation *e)
{
    const bl_run_result *r = e->run;
    size_t completed_all = 0, failed_all = 0;
    for (size_t i = 0; i < r->ntrials; i++) {
        completed_all += r->trials[i].status == BL_TRIAL_COMPLETED;
        failed_all += r->trials[i].status == BL_TRIAL_FAILED;
    }
    for (size_t t = 0; t < e->ntargets; t++) {
        const bl_target_summary *s = &e->summaries[t];
        bl_cli_print_text(stderr, s->target_id);
        fprintf(stderr, ": %zu trials, %zu completed", s->completed_trials + s->failed_trials,
                s->completed_trials);
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
        bl_cli_print_text(stderr, c->target_id);
        fputs(" - ", stderr);
        bl_cli_print_text(stderr, c->reference_id);
        if (c->status == BL_CONTRAST_PAIRED_RAW)
            fprintf(stderr, ": %s %+.6g\n", c->key, c->estimate);
        else
            fputs(": failed pair\n", stderr);
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
}

/* ---- the command -------------------------------------------------------- */

/* What an MPI launch of the command shares with run_main (run_mpi.h). */
static const bl_cli_run_steps steps = {
    .execution = build_execution,
    .calibrations = load_calibrations,
    .pool_free = pool_free,
    .plan_id = check_plan_id,
    .summary = print_summary,
};

/* ---- shards (--shard K/N) ------------------------------------------------ */

/* A whole number of 1 to 7 digits, nothing else (no sign, no space). */
static bool shard_number(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 7)
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = 10 * v + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* --shard K/N into *part and *nparts (0 and 0 without the option). */
static bl_status parse_shard(const bl_cli_args *args, int64_t *part, int64_t *nparts,
                             bl_error *err)
{
    *part = *nparts = 0;
    if (!args->count[OPT_SHARD])
        return BL_OK;
    const char *v = args->value[OPT_SHARD], *slash = strchr(v, '/');
    if (!slash || !shard_number(v, (size_t)(slash - v), part) ||
        !shard_number(slash + 1, strlen(slash + 1), nparts) || *part < 1 || *part > *nparts ||
        *nparts > BL_RUN_MAX_PARTS)
        return bl_fail(err, BL_EVALUE,
                       "--shard must be K/N with whole numbers 1 <= K <= N <= %lld (got '%s')",
                       (long long)BL_RUN_MAX_PARTS, v);
    return BL_OK;
}

/* The shard record's name: "<plan id>-shard-<K>-of-<N>-<UTC>-<hex>". */
static bl_status shard_record_name(const bl_cli_args *args, const char *plan_id, int64_t part,
                                   int64_t nparts, char **dest, bl_error *err)
{
    bl_buf id;
    bl_buf_init(&id);
    bl_buf_printf(&id, "%s-shard-%lld-of-%lld", plan_id, (long long)part, (long long)nparts);
    bl_status st = bl_buf_status(&id, err);
    if (st == BL_OK)
        st = bl_record_name(args->value[OPT_ROOT], id.data, dest, err);
    bl_buf_clear(&id);
    return st;
}

/* After the reservation of a shard: the part's trials, then the shard
 * record (include/brainlesslab/records.h), its line on stdout and a short
 * summary on stderr. Errors and stop signals fail the reservation as a
 * run's do. */
static int run_shard(const bl_reservation *res, const bl_plan *plan,
                     const bl_resolved_plan *resolved, const bl_execution *x,
                     const bl_evaluation_prepared *prepared, const pool *cals,
                     const bl_run_hooks *hooks, const progress_state *progress)
{
    bl_error err = {0};
    bl_run_result *part = NULL;
    int rc;
    bl_status st = bl_evaluate_part(prepared, hooks, &part, &err);
    if (progress->shown)
        fputc('\n', stderr);
    const int sig = bl_cli_interrupted;
    if (sig && (st == BL_OK || st == BL_EINTERRUPT))
        st = bl_fail_signal(&err, sig);
    if (st != BL_OK) {
        rc = bl_cli_fail_reserved(res, &err);
        goto done;
    }
    const bl_shard_input input = {
        .plan = plan,
        .resolved = resolved,
        .execution = x,
        .part = part,
        .calibrations = (const bl_calibration *const *)cals->cals,
        .ncalibrations = cals->n,
        .before_file = bl_cli_stop_requested,
    };
    if (bl_shard_write(&input, res, &err) != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }
    bool printed;
    rc = bl_cli_record_written(res->path, &printed);
    if (printed) {
        size_t completed = 0;
        for (size_t i = 0; i < part->ntrials; i++)
            completed += part->trials[i].status == BL_TRIAL_COMPLETED;
        fprintf(stderr, "shard %lld of %lld: %zu trials, %zu completed; %lld world ticks, %lld "
                        "neural frames in %.3f s\n",
                (long long)part->part, (long long)part->nparts, part->ntrials, completed,
                (long long)part->world_ticks, (long long)part->neural_frames,
                part->seconds_execute);
    }
done:
    bl_run_result_destroy(part);
    return rc;
}

static int run_main(const bl_cli_args *args)
{
    int mpi_rc;
    if (bl_cli_run_mpi(args, &steps, &mpi_rc))
        return mpi_rc;
    /* Until the reservation exists the command owns nothing on disk, so a
     * stop signal may end it on the spot (exit 128 + signal, one line). */
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    bl_plan *plan = NULL;
    bl_resolved_plan *resolved = NULL;
    bl_evaluation_prepared *prepared = NULL;
    bl_evaluation *result = NULL;
    pool cals = {0};
    char *dest = NULL;
    bl_reservation res = {0};
    bl_execution x;
    progress_state progress = {0};
    bl_run_hooks hooks = {.interrupt = &bl_cli_interrupted};
    int rc;
    bl_status st;
    int64_t part = 0, nparts = 0; /* --shard K/N */

    if (parse_shard(args, &part, &nparts, &err) != BL_OK ||
        bl_plan_read(args->positional, &plan, &err) != BL_OK ||
        bl_plan_resolve(plan, &resolved, &err) != BL_OK ||
        build_execution(args, &x, &err) != BL_OK ||
        load_calibrations(args, &cals, &err) != BL_OK ||
        check_plan_id(bl_plan_id(plan), &err) != BL_OK ||
        (part ? bl_evaluation_prepare_part(resolved, &x, (const bl_calibration *const *)cals.cals,
                                           cals.n, part, nparts, &prepared, &err)
              : bl_evaluation_prepare(resolved, &x, (const bl_calibration *const *)cals.cals,
                                      cals.n, &prepared, &err)) != BL_OK ||
        (part ? shard_record_name(args, bl_plan_id(plan), part, nparts, &dest, &err)
              : bl_record_name(args->value[OPT_ROOT], bl_plan_id(plan), &dest, &err)) != BL_OK ||
        bl_cli_reserve_record(dest, &res, &err) != BL_OK)
        goto report;

    if (isatty(STDERR_FILENO)) {
        hooks.progress = on_progress;
        hooks.ctx = &progress;
    }
    if (part) {
        rc = run_shard(&res, plan, resolved, &x, prepared, &cals, &hooks, &progress);
        goto done;
    }
    st = bl_evaluate_prepared(prepared, &hooks, &result, &err);
    if (progress.shown)
        fputc('\n', stderr); /* end the progress line before any report */
    /* A signal after the last tick still means the user asked to stop; the
     * runner's own "interrupted" becomes the signal's kind and message. */
    const int sig = bl_cli_interrupted;
    if (sig && (st == BL_OK || st == BL_EINTERRUPT))
        st = bl_fail_signal(&err, sig);
    if (st != BL_OK) {
        rc = bl_cli_fail_reserved(&res, &err);
        goto done;
    }
    bl_record_input input = {
        .plan = plan,
        .resolved = resolved,
        .execution = &x,
        .evaluation = result,
    };
    bool printed;
    rc = bl_cli_write_evaluation(&input, &res, &printed);
    if (printed)
        print_summary(result);
    goto done;

report:
    rc = bl_cli_report(&err);
done:
    bl_reservation_clear(&res);
    bl_free(dest);
    bl_evaluation_destroy(result);
    bl_evaluation_prepared_destroy(prepared);
    pool_free(&cals);
    bl_resolved_plan_destroy(resolved);
    bl_plan_destroy(plan);
    return rc;
}

const bl_cli_command bl_cli_run = {
    .name = "run", .positional = "plan", BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = run_main,
};
