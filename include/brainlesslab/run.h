/* The evaluation runner (spec/platform.md §4, spec/tasks.md §1.4).
 *
 * bl_run_execute takes a resolved plan and an execution policy and returns
 * one TrialResult row per job, in job order. Jobs are enumerated target-major
 * (plan order), then block, then trial; every seed is derived from the
 * plan's seed bank and the job's scientific identity (§4.2), never from its
 * position, so the rows are bit-identical for every batch size, thread count
 * and noise-tile size.
 *
 * Preflight (§4.4–§4.6) runs before any world or wiring is built: recording
 * admission, the noise-tile check, cohorts and memory admission. Execution
 * is trial-major on the CPU: jobs of one cohort are cut into batches of the
 * admitted capacity; a batch prepares its worlds and constructs each distinct
 * wiring once, then every slot runs its whole trial (frame ⇄ tick) on one
 * thread; `cpu_threads` OpenMP threads share a batch's slots. */
#ifndef BRAINLESSLAB_RUN_H
#define BRAINLESSLAB_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/status.h"
#include "brainlesslab/task.h"

/* ---- execution policy (ExecutionSpec, §1.2) ---------------------------- */

typedef enum bl_backend { BL_BACKEND_CPU } bl_backend;
typedef enum bl_recording {
    BL_RECORDING_SUMMARY,
    BL_RECORDING_PROBE_EVENTS,
    BL_RECORDING_REPLAY,
} bl_recording;

const char *bl_backend_name(bl_backend b);        /* "cpu" */
const char *bl_recording_name(bl_recording r);    /* "summary", ... */

typedef struct bl_execution {
    bl_backend backend;              /* cpu */
    int64_t batch_size;              /* 32: requested maximum slots, >= 1 */
    int64_t memory_budget_bytes;     /* 268435456, >= 1 */
    double reserve_fraction;         /* 0.25, in [0, 1) */
    int64_t noise_tile_frames;       /* 64, >= 1 */
    bl_recording recording;          /* summary */
    int64_t recording_budget_bytes;  /* 33554432, >= 0 */
    int64_t cpu_threads;             /* 1, >= 1 */
    bool cache;                      /* true (no kernel cache exists here) */
} bl_execution;

void bl_execution_default(bl_execution *x);
/* §1.2 validation: "batch_size must be an integer >= 1", ...,
 * "reserve_fraction must be within [0, 1)". */
bl_status bl_execution_validate(const bl_execution *x, bl_error *err);
/* trunc(memory_budget_bytes × (1 − reserve_fraction)) in double precision. */
int64_t bl_execution_allocation_budget(const bl_execution *x);
/* plain(ExecutionSpec) with the reference's field names. */
bl_status bl_execution_json(const bl_execution *x, bl_json **out, bl_error *err);

/* §4.6: the admitted capacity min(batch_size, available ÷ per_trial) with
 * available = allocation budget − recording_bytes, or BL_ENOMEM "one
 * trajectory needs at least <per_trial + recording_bytes> managed bytes;
 * allocation budget is <budget>; increase memory_budget_bytes explicitly". */
bl_status bl_admit_batch(const bl_execution *x, int64_t per_trial_bytes, int64_t recording_bytes,
                         int64_t *capacity, bl_error *err);

/* ---- results (TrialResult, §4.9, §5.1) --------------------------------- */

typedef struct bl_trial_seed {
    const char *stream;  /* "world", "construction", "drive", "control", "input_shuffle" */
    char hex[65];        /* display form */
} bl_trial_seed;

typedef struct bl_trial_result {
    size_t target;            /* index in plan order */
    const char *target_id;    /* owned by the resolved plan */
    bl_task_kind task;
    int64_t block, trial;
    /* TaskOutcome. raw is NaN when absent (JSON null). */
    const char *outcome_key;  /* static */
    double raw;
    double normalised;        /* NaN when absent */
    bl_adjust_status normalisation;
    char calibration_id[65];  /* "" when none */
    int64_t scoring_window;   /* max(0, ticks − warmup) */
    bl_trial_status status;
    int64_t completed_ticks;
    int64_t neural_frames;    /* frames executed while active */
    /* Reservoir units active after each executed frame, summed (Falandays
     * spikes, SORN x and y); 0 for direct controllers. Not part of the
     * record row: profile reports it as a mean spike rate. */
    int64_t spikes;
    char world_seed[65];
    char wiring_id[65];       /* hex digest or "none" */
    size_t nseeds;
    bl_trial_seed seeds[5];   /* in §4.9 insertion order */
    bool failed;              /* error = "non-finite trajectory" */
} bl_trial_result;

/* What recording == probe_events captures of one trial (§4.11): the
 * reservoir's activity at the end of the cue (point 0), at the start of the
 * response (point 1) and its mean over the response ticks (point 2) of
 * round 1, with the schedule ticks, how often each was hit, and the
 * round-1 label. */
typedef struct bl_probe_capture {
    int64_t ticks[3];         /* cue_end, response_start, response_end */
    int32_t counts[3];
    int32_t label;
    size_t n;                 /* features per point (the node count) */
    double *features;         /* [3][n] */
} bl_probe_capture;

typedef struct bl_run_result {
    size_t ntrials;
    bl_trial_result *trials;        /* job order */
    size_t ncohorts;
    int64_t *batch_capacities;      /* admitted capacity per cohort, cohort order */
    int64_t *trial_bytes;           /* per-trajectory estimate per cohort */
    int64_t requested_batch_size;
    int64_t recording_estimate_bytes;
    int64_t allocation_budget;
    int64_t cpu_threads;
    /* Work done, for rates: world ticks and neural frames summed over
     * trials, and the frames of reservoir trials alone (the model work). */
    int64_t world_ticks, neural_frames, reservoir_frames;
    double seconds_preflight, seconds_execute;
    int64_t peak_rss_bytes;         /* measured (getrusage), after execution */
    /* Jobs in batch-processing order (cohort order, then slot order). */
    size_t nprocessed;
    size_t *processing_order;
    /* recording == probe_events: one capture per job, else NULL. */
    bl_probe_capture *probes;
    /* recording == replay: per job a JSON array of frames (§4.12: "tick",
     * "activity", "effectors", "inputs", "world"), else NULL. */
    bl_json **replays;
    /* A part of a run (bl_run_prepare_part): the part's number (1-based)
     * of nparts, and the global job index of each row, rows (and probes,
     * replays) in job order. A whole run has part = nparts = 1 and jobs
     * NULL: row j is job j. processing_order always holds global indices. */
    int64_t part, nparts;
    size_t *jobs;
} bl_run_result;

/* Optional observation and control of a run. */
typedef struct bl_run_hooks {
    /* Called from the calling thread after each batch: trials done so far. */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *ctx;
    /* When non-NULL and set non-zero (a signal handler may set it), the run
     * stops at the next tick boundary and returns BL_EINTERRUPT. */
    volatile sig_atomic_t *interrupt;
} bl_run_hooks;

/* §4.4 steps 2–6 alone (enumeration with the bytes its jobs keep,
 * recording admission, the noise-tile check, cohorts and memory admission),
 * creating no world, wiring or thread, nor any per-job list: for commands
 * that must reject a plan before they create anything and will not run it
 * (a command that runs it prepares it instead, below). */
bl_status bl_run_preflight(const bl_resolved_plan *plan, const bl_execution *x, bl_error *err);

/* A run prepared once: the plan's targets loaded, its jobs enumerated into
 * cohorts and every check of the preflight passed (the same checks and
 * messages as bl_run_preflight), before any world, wiring or thread
 * exists. A command that must refuse a plan before it creates anything
 * prepares it, then executes the preparation, and so reads its plan once.
 * The preparation borrows the resolved plan, which must outlive it, and
 * keeps its own copy of the execution policy. */
typedef struct bl_run_prepared bl_run_prepared;

bl_status bl_run_prepare(const bl_resolved_plan *plan, const bl_execution *x,
                         bl_run_prepared **out, bl_error *err);
/* Executes every job of a preparation; hooks may be NULL. The preparation
 * is not changed: executing it again gives the same rows. The result's
 * seconds_preflight includes the preparation's own time. */
bl_status bl_run_execute_prepared(const bl_run_prepared *p, const bl_run_hooks *hooks,
                                  bl_run_result **out, bl_error *err);
void bl_run_prepared_destroy(bl_run_prepared *p);

/* ---- parts of a run (docs/running.md "Parts of a run") ------------------ *
 *
 * The jobs of a plan split into nparts deterministic parts, for processes
 * that run them apart (MPI ranks, shards) and combine the rows afterwards.
 * The partition depends on the resolved plan alone (never on batch size,
 * threads or recording) and never splits a wiring: its units are the
 * wiring classes' scope cells (§4.2: targets with the same construction
 * key, node kind, count, ports and config share a class; the cell is the
 * whole evaluation, a block or a trial by construction scope), and a
 * direct controller's (target, block). Units, in order of first
 * appearance in the job list, are split into nparts contiguous runs of
 * about equal cost, a job costing horizon × neural_frames × (reservoir:
 * count × (count + n_inputs); else 1): unit u, with cost c_u after units
 * of cost B in all out of T, goes to part 1 + floor(nparts × (2B + c_u) ÷
 * 2T) (its midpoint decides). A part may be empty when nparts exceeds the
 * units: it holds no job and yields no row. */

/* The most parts a plan is split into. */
#define BL_RUN_MAX_PARTS INT64_C(1000000)

/* "<what> must be a part K of N with 1 <= K <= N <= 1000000" unless
 * 1 <= part <= nparts <= BL_RUN_MAX_PARTS (BL_EVALUE). */
bl_status bl_run_part_check(int64_t part, int64_t nparts, bl_error *err);
/* The jobs of part `part` of `nparts`: target i's jobs first[i] up to
 * first[i] + count[i] (global indices; count[i] may be 0). first and count
 * hold bl_resolved_target_count(plan) entries. Per target, not per job, so
 * it is quick for any number of trials. */
bl_status bl_run_part_jobs(const bl_resolved_plan *plan, int64_t part, int64_t nparts,
                           size_t *first, size_t *count, bl_error *err);
/* bl_run_prepare for the jobs of one part: every check of the preflight
 * is the whole plan's (a part refuses what the whole run refuses), and
 * only the part's jobs are listed and executed. bl_run_execute_prepared
 * then gives a part result (rows of the part's jobs, `jobs` set). */
bl_status bl_run_prepare_part(const bl_resolved_plan *plan, const bl_execution *x, int64_t part,
                              int64_t nparts, bl_run_prepared **out, bl_error *err);
/* The parts' rows as the whole run's result, as bl_run_execute_prepared
 * gives it (rows, probes and replays in job order, the whole run's
 * processing order and cohort metadata; work counts summed, timings and
 * peak RSS the largest part's). The parts may come in any order; their
 * jobs must be disjoint ("parts overlap: job <j> is in two parts") and
 * cover the plan ("parts do not cover the plan: job <j> is missing"), with
 * the preparation's recording. Takes the parts over (sets parts[i] NULL)
 * whether it succeeds or not. */
bl_status bl_run_combine(const bl_run_prepared *p, bl_run_result **parts, size_t nparts,
                         bl_run_result **out, bl_error *err);
/* A part result as bytes: a fixed little-endian layout behind a versioned
 * magic ("BLPART" + version), doubles bit for bit, probe captures and
 * replay frames (as a tagged binary tree, exact) included. */
bl_status bl_run_part_encode(const bl_run_result *part, bl_buf *out, bl_error *err);
/* The bytes back into a part result of a preparation of the same plan:
 * target ids, tasks and outcome keys are bound to the preparation's plan,
 * and everything is checked (the part's jobs are the partition's, rows
 * match their jobs, the recording is the preparation's); bad bytes are
 * BL_EVALUE "part result: <what>". */
bl_status bl_run_part_decode_prepared(const bl_run_prepared *p, const void *data, size_t len,
                                      bl_run_result **out, bl_error *err);

/* Executes every job of the plan: bl_run_prepare, bl_run_execute_prepared
 * and bl_run_prepared_destroy in one call. hooks may be NULL. */
bl_status bl_run_execute(const bl_resolved_plan *plan, const bl_execution *x,
                         const bl_run_hooks *hooks, bl_run_result **out, bl_error *err);
void bl_run_result_destroy(bl_run_result *r);

/* How many times this process has loaded a plan's targets (once per
 * bl_run_preflight or bl_run_prepare that got that far): shows, in tests,
 * that a command prepares its plan once. */
uint64_t bl_run_target_loads(void);

/* plain(TaskOutcome) (§1.2): {"key", "raw", "normalised",
 * "normalisation_status", "calibration_id", "scoring_window"}; NaN numbers
 * and an empty calibration id are null. */
bl_status bl_task_outcome_json(const char *key, double raw, double normalised,
                               bl_adjust_status status, const char *calibration_id,
                               int64_t scoring_window, bl_json **out, bl_error *err);

/* plain(TrialResult) (§5.1 field order) as a JSON object. */
bl_status bl_trial_result_json(const bl_trial_result *t, bl_json **out, bl_error *err);

/* The preflight's two memory estimates, public so that a program can size
 * memory_budget_bytes for a plan before it runs it (the runner computes the
 * same numbers from its own copy of the targets).
 *
 * What the run keeps for every job of target i until the record is
 * written (result row, job lists, with probe_events what its events cost;
 * docs/running.md), saturated at INT64_MAX.
 * The preflight refuses a plan whose jobs need more than
 * memory_budget_bytes in all (BL_ENOMEM, naming --memory-budget-mib),
 * separately from §4.6, which it leaves unchanged. */
int64_t bl_run_job_bytes(const bl_resolved_plan *plan, size_t target, const bl_execution *x);

/* The widest lockstep group of trials sharing a wiring (docs/running.md):
 * 8, or the environment's BL_GROUP_CAP (a whole number from 1 to 1024,
 * else BL_EVALUE "BL_GROUP_CAP=<v>: a group takes 1 to 1024 trials"), so
 * that the policy can be measured and tuned without a rebuild; it never
 * changes a result. The runner and `profile --isolated` both read it. */
bl_status bl_run_group_width(size_t *width, bl_error *err);

/* §4.6 per-trajectory managed-byte estimate of one target with horizon H
 * (the cohort's longest) and tile T. */
int64_t bl_trial_bytes(const bl_resolved_plan *plan, size_t target, int64_t horizon,
                       int64_t noise_tile_frames);

#endif
