/* Measurement: how the program measures and qualifies itself
 * (spec/measurement.md §1, §2, §7, with the Linux/C equivalents of §8).
 *
 * - Sample statistics (§1.7) for timing distributions.
 * - Host conditions read from /proc, /sys and /etc, and the background-
 *   activity check: CPU use of every other process measured over an
 *   interval from two /proc/<pid>/stat samples (never judged by names).
 * - `profile`: timing receipts of a fixed workload, each phase in a fresh
 *   worker process (the parent execs this same binary), format
 *   "brainlesslab-backend-profile" v1.
 * - `profile --isolated`: the stepping benchmark, model stepping alone on a
 *   fixed tape in one fresh worker, format "brainlesslab-stepping-benchmark"
 *   v1 (src/measure/stepping*.c, docs/performance.md).
 * - `qualify`: float32 against the float64 reference, frame by frame on
 *   identical inputs and noise, format "brainlesslab-backend-conformance" v1.
 *
 * profile takes its clock, its telemetry and its worker launcher from a
 * hooks struct, so tests drive it with synthetic clocks and fakes; the
 * activity telemetry itself sleeps and reads CLOCK_MONOTONIC, and its
 * judgement (bl_activity_judge) is tested on fake samples. Tests never
 * assert wall-clock time. */
#ifndef BRAINLESSLAB_MEASURE_H
#define BRAINLESSLAB_MEASURE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/status.h"

/* ---- sample statistics (§1.7) ------------------------------------------ */

/* {"count", "minimum", "maximum", "median", "mean", "standard_deviation"
 * (population), "p25", "p75"} with linear interpolation between order
 * statistics at (n−1)·q; {"count": 0} alone for n == 0. Non-finite samples
 * are BL_EVALUE. */
bl_status bl_sample_stats_json(const double *x, size_t n, bl_json **out, bl_error *err);
/* The q-quantile (q in [0, 1]) of n >= 1 sorted values, linear method. */
double bl_sorted_quantile(const double *sorted, size_t n, double q);

/* ---- host conditions (§1.9, §8) ---------------------------------------- */

/* Where the host is read from; NULL members mean "/proc", "/sys", "/etc".
 * Tests point them at fake trees. */
typedef struct bl_host_paths {
    const char *proc, *sys, *etc;
} bl_host_paths;

/* What this host is and how it is doing now, as a JSON object:
 * "machine", "kernel" (release and version), "os" (PRETTY_NAME),
 * "product" (DMI), "cpu" {"model", "logical_cpus", "online", "smt",
 * "governors" (distinct values), "frequency_mhz" {current min/median/max,
 * scaling min/max}}, "memory" {"total_bytes", "available_bytes",
 * "swap_total_bytes", "swap_free_bytes"}, "load_average" [1, 5, 15],
 * "pressure" {"cpu", "memory", "io": {"some_avg10", ...}}, "thermal"
 * [{"zone", "type", "celsius"}], "power_supply" [{"name", "type",
 * "online"}], "compiler" {"id", "version", "flags"}. A source that is
 * missing or unreadable is null (or an empty array), never an error:
 * containers and small machines lack many of them. */
bl_status bl_host_describe(const bl_host_paths *paths, bl_json **out, bl_error *err);

/* One process's accumulated CPU time, from /proc/<pid>/stat. */
typedef struct bl_proc_times {
    int64_t pid;
    char executable[64];  /* comm, the executable's basename (at most 15 chars) */
    uint64_t cpu_ticks;   /* utime + stime, in clock ticks */
} bl_proc_times;

/* Reads every numeric /proc/<pid>/stat under `proc_root` (NULL: "/proc").
 * Processes that vanish while being read are skipped. *out is heap-owned
 * (bl_free). A missing or unreadable root, or no parsable process at all,
 * is BL_EOS with the reason. */
bl_status bl_proc_times_read(const char *proc_root, bl_proc_times **out, size_t *n,
                             bl_error *err);

/* The judgement over two samples `interval_seconds` apart:
 * cpu_percent = 100 × Δticks ÷ (interval × ticks_per_second) per process
 * present in both samples (not in `skip`); a process is listed when its
 * cpu_percent >= threshold_percent. The result is the JSON array of listed
 * processes [{"pid", "executable", "cpu_percent"}], highest use first. */
bl_status bl_activity_judge(const bl_proc_times *before, size_t nbefore,
                            const bl_proc_times *after, size_t nafter, double interval_seconds,
                            double ticks_per_second, double threshold_percent,
                            const int64_t *skip, size_t nskip, bl_json **processes,
                            bl_error *err);

typedef struct bl_activity_options {
    double cpu_threshold_percent;  /* > 0 and finite (2.0 in the CLI) */
    double interval_seconds;       /* > 0: the time between the two samples */
    const int64_t *skip;           /* pids to ignore (this process, its parent) */
    size_t nskip;
    const char *proc_root;         /* NULL: "/proc" */
} bl_activity_options;

/* The background-activity telemetry: two samples over the interval, then
 * {"status": "available", "cpu_threshold_percent", "interval_seconds",
 * "processes": [...], "method", "limits", "load_average", "pressure"}; when
 * /proc cannot be read, {"status": "unavailable", "diagnostic": <reason>,
 * "processes": [], ...}. Only an out-of-memory is an error. */
bl_status bl_activity_snapshot(const bl_activity_options *o, bl_json **out, bl_error *err);

/* ---- profile (§1) --------------------------------------------------------- */

/* The profile command line (§1.2), parsed. Strings point into argv. */
typedef struct bl_profile_args {
    const char *destination;
    const char *backends[8];       /* distinct, in order; "cpu" */
    size_t nbackends;
    const char *dtype;             /* "float32" | "float64" | NULL (missing: an error) */
    const char *node;              /* "falandays" | "sorn" */
    const char *task;              /* delayed_cue | tracking | pong | cartpole_plank_easy */
    int64_t count, batch_size, trials, blocks, samples, warmups, cpu_threads;
    int64_t memory_budget_mib, recording_budget_mib, seed;
    int64_t horizon;               /* 0: the task default */
    bool has_horizon;
    bool diagnostic;
    const char *recording;         /* none | summary | probe_events | replay */
    bool allow_background_activity;
    double activity_cpu_threshold;
    double activity_interval;      /* seconds between the two activity samples */
    const char *worker_backend;    /* hidden: non-NULL in a worker */
    const char *process_phase;     /* hidden: cold_/warm_cache_new_process */
    /* --isolated: the stepping benchmark (stepping.c) instead of the
     * end-to-end workload. Its tape is either a record's replayed trials
     * (tape_record, tape_trials: comma-separated trial keys or NULL) or a
     * synthetic one (tape_inputs: "uniform", "bernoulli:P" or "normal:SD",
     * drawn from tape_seed; the model is the workload's block-0 wiring of
     * --seed). A record's plan decides --node, --count and --dtype, which
     * must agree with it when given. */
    bool isolated;
    int64_t frames;                /* frames each slot steps per sample */
    const char *tape_record, *tape_trials, *tape_inputs;
    int64_t tape_seed;
    /* Which flags were on the command line (defaults aside). */
    bool has_frames, tape_seed_given, node_given, count_given, task_given, seed_given;
    /* The first flag given that does not apply to the mode (a profile-only
     * flag with --isolated, an --isolated one without it), or NULL. */
    const char *inapplicable;
} bl_profile_args;

/* The defaults of §1.2 (dtype stays NULL: it is required). */
void bl_profile_args_default(bl_profile_args *a);

/* Test seams. Every member may be NULL (the real thing is used). */
typedef struct bl_profile_hooks {
    void *ctx;
    /* When non-NULL and set non-zero (a SIGINT handler may set it), the
     * worker stops its evaluation and the parent launches no more workers;
     * both then return 130. */
    volatile sig_atomic_t *interrupt;
    /* A monotonic clock in seconds (CLOCK_MONOTONIC). */
    double (*clock)(void *ctx);
    /* The activity telemetry (bl_activity_snapshot). */
    bl_status (*telemetry)(void *ctx, const bl_activity_options *o, bl_json **out,
                           bl_error *err);
    /* Runs one worker process for (backend, phase) with `argv`, stdout and
     * stderr into the given files; returns its exit status in *returncode
     * and its whole stdout text in *stdout_text (heap, bl_free). */
    bl_status (*spawn)(void *ctx, const char *const *argv, const char *stdout_path,
                       const char *stderr_path, int *returncode, char **stdout_text,
                       bl_error *err);
} bl_profile_hooks;

/* §1.2 validate_args, the plan build and resolution, and the runner's
 * preflight: BL_EUSAGE with the message for anything that makes the command
 * line unusable (the CLI exits 2 before creating anything); then, in the
 * parent, BL_EEXIST "<DEST>: File exists" when the destination exists. */
bl_status bl_profile_validate(const bl_profile_args *a, bl_error *err);

/* The parent (§1.4): validation, telemetry, destination, the two phases per
 * backend in fresh processes, the cross-process check, receipt.json.
 * `self` is the path of this executable (for the workers). Returns the exit
 * code: 0 every row complete, 1 a failed row (the receipt is still written;
 * err holds BL_ERUNTIME "profile failed: <backend> <phase>: <why>; see
 * <receipt>") or an error (err says which; an existing destination is refused with
 * BL_EEXIST before anything is created), 2 a refusal before anything was
 * created, 130 interrupted. With 2, err->status is BL_EUSAGE for a flag
 * value it refuses (argparse's usage and error); otherwise err holds the
 * reason as one error line: the resolver's kind and message for a workload
 * that does not resolve or is not admitted, BL_ERUNTIME for background
 * activity or unavailable telemetry without the opt-in. *receipt_path is
 * set iff a receipt was written. */
int bl_profile_parent(const bl_profile_args *a, const char *self, const bl_profile_hooks *hooks,
                      char **receipt_path, bl_error *err);

/* The worker (§1.5): runs the workload 1 + warmups + samples times and
 * returns its receipt (always, also on failure: *receipt is set unless out
 * of memory). Returns the exit code: 0 iff the receipt is complete. */
int bl_profile_worker(const bl_profile_args *a, const bl_profile_hooks *hooks,
                      bl_json **receipt, bl_error *err);

/* ---- qualify (§2, float32 against float64) --------------------------------- */

typedef struct bl_qualify_options {
    int64_t count;     /* reservoir nodes, >= 1 (64) */
    int64_t frames;    /* compared frames per case, >= 1 (12) */
    int64_t trials;    /* whole trials per case for outcome differences, >= 0 (4) */
    int64_t seed;      /* root seed of the qualification worlds and wirings, >= 0 */
    double rtol, atol; /* 2e-5, 2e-5 */
} bl_qualify_options;

void bl_qualify_options_default(bl_qualify_options *o);

/* Runs every case (Falandays unsigned, Dale and Oosawa, SORN × the ten task
 * families) and returns the receipt ("brainlesslab-backend-conformance",
 * version 1); *passed is true iff every gated comparison passed. */
bl_status bl_qualify_run(const bl_qualify_options *o, bl_json **receipt, bool *passed,
                         bl_error *err);

/* What a failed qualification's receipt says, as the one error line of the
 * command: BL_ERUNTIME "qualify failed: <n> of <m> cases, <k> failed
 * comparisons (first: <case, step, array, values, rule>); see <path>".
 * Always returns BL_ERUNTIME. */
bl_status bl_qualify_failure(const bl_json *receipt, const char *receipt_path, bl_error *err);

#endif
