/* What the files of the evaluation runner share (src/run/ only): the loaded
 * targets and cohorts of a plan, the run context, a batch's wirings and
 * slots, what a slot reports and where its recordings go, and the stages'
 * entry points. The runner's files, in the order a run meets them:
 *
 *   targets.c    a resolved plan's targets, read once into plain structs
 *   preflight.c  sizes, recording and memory admission, cohorts, job lists
 *   batch.c      one batch: slots' seeds and worlds, wirings, the parallel run
 *   trial.c      one trial from its first frame to its last (the trial loop)
 *   capture.c    recording channels: probe events and replay frames
 *   run.c        a prepared run (bl_run_prepare) executed over its cohorts'
 *                batches; result rows as JSON */
#ifndef BL_RUN_INTERNAL_H
#define BL_RUN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/run.h"
#include "brainlesslab/task.h"

/* ---- targets ------------------------------------------------------------ */

typedef enum verb { V_FREEZE_WEIGHTS, V_FREEZE_PLASTICITY, V_BLIND, V_SHUFFLE } verb;

typedef struct intervention {
    int64_t tick;
    verb verb;
} intervention;

typedef struct target {
    const char *id;
    const char *pairing_key, *mechanism_key;
    bool reservoir;
    bl_policy policy;            /* direct controllers */
    bl_model_kind node;
    const char *node_name;
    int64_t count, n_inputs, n_effectors, frames, horizon, excitatory;
    double input_gain;
    const char *outcome_key;
    bl_task_options options;
    bl_falandays_config fcfg;    /* input_link_p points to input_link_p below */
    double *input_link_p;        /* owned (bl_resolved_model_config), or NULL */
    bl_sorn_config scfg;
    intervention *ivs;
    size_t nivs;
    bool shuffle;                /* has a shuffle_input intervention */
    size_t cohort;
} target;

typedef struct cohort {
    size_t first_target;         /* the key's representative */
    int64_t horizon;             /* longest horizon of its targets */
    int64_t trial_bytes;
    int64_t capacity;
    size_t *jobs;
    size_t njobs;
} cohort;

typedef struct run_ctx {
    const bl_resolved_plan *plan;
    const bl_execution *x;
    const bl_run_hooks *hooks;
    int64_t root_seed, blocks, trials, warmup;
    const char *partition;
    bl_dtype dtype;
    size_t ntargets;
    target *targets;
    size_t njobs;
    size_t ncohorts;
    cohort *cohorts;
    int64_t recording_bytes;
    /* The wirings the last batch constructed (struct wiring, below), kept
     * for the next batch: consecutive batches usually share a block's
     * wiring, and construction at large N costs more than a short trial. */
    struct wiring *carry;
    size_t ncarry;
} run_ctx;

/* ---- one batch --------------------------------------------------------------- */

typedef struct wiring {
    char id[65];
    size_t target;
    int64_t block, trial;
    bl_falandays_init *fal;
    bl_sorn_init *sorn;
} wiring;

typedef struct slot {
    size_t job;
    const target *t;
    int64_t block, trial;
    bl_seed world_seed, drive_seed, control_seed, shuffle_seed;
    char wiring_id[65];
    size_t wiring;               /* index into the batch's wirings */
    bl_world_init *world;
    int64_t *perm;               /* [n_inputs] when the target shuffles */
    bl_error err;
    bl_status st;
} slot;

typedef struct batch {
    slot *slots;
    size_t n;
    wiring *wirings;
    size_t nwirings;
    size_t max_rounds;           /* K of spec/tasks.md §7.3 */
} batch;

/* What a finished slot reports, read from its world and model. */
typedef struct slot_end {
    bl_trial_status status;
    double raw;
    int64_t ticks, frames;
    int64_t spikes; /* active units summed over the executed frames */
    bool failed;
} slot_end;

/* Where a slot's recordings go (NULL members when not recording). */
typedef struct capture {
    bl_probe_capture *probe;
    bl_json *frames;
} capture;

static inline bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for an evaluation");
}

static inline bool is_decodable(bl_task_kind k)
{
    return bl_task_is_probe(k) && k != BL_TASK_REVERSAL_ADAPTATION;
}

static inline bool interrupted(const run_ctx *c)
{
    return c->hooks && c->hooks->interrupt && *c->hooks->interrupt;
}

static inline bl_status interrupt_status(bl_error *err)
{
    return bl_fail(err, BL_EINTERRUPT, "interrupted");
}

/* targets.c */
bl_status bl_run_load_target(const bl_resolved_plan *plan, size_t i, target *t, bl_error *err);
void bl_run_free_targets(run_ctx *c);
bool bl_run_same_cohort(const target *a, const target *b);

/* preflight.c: steps 2-6 of §4.4 into c (free with bl_run_free_targets,
 * also on failure); `jobs` also builds the cohorts' job lists, which only
 * execution needs. */
bl_status bl_run_preflight_ctx(run_ctx *c, const bl_resolved_plan *plan, const bl_execution *x,
                               bool jobs, bl_error *err);

/* batch.c: the n jobs of cohort h from its first-th on, into rows. */
bl_status bl_run_batch(run_ctx *c, const cohort *h, size_t first, size_t n,
                       bl_trial_result *rows, bl_run_result *res, bl_error *err);
void bl_run_release_carry(run_ctx *c);

/* trial.c: one slot's whole trial, by a reservoir or a direct controller
 * (frame by frame when a recording needs every tick, else fused). */
bl_status bl_run_reservoir(const run_ctx *c, const batch *b, slot *s, const capture *rec,
                           slot_end *e, bl_error *err);
bl_status bl_run_direct_frames(const run_ctx *c, const batch *b, slot *s, const capture *rec,
                               slot_end *e, bl_error *err);
bl_status bl_run_direct(const run_ctx *c, const batch *b, slot *s, slot_end *e, bl_error *err);

/* capture.c */
bl_status bl_run_probe_begin(const slot *s, size_t n, bl_probe_capture *pc, bl_error *err);
void bl_run_probe_tick(bl_probe_capture *pc, int64_t tick, bl_dtype dtype, const void *activity);
bl_status bl_run_replay_tick(bl_json *frames, const bl_worlds *w, int64_t tick,
                             const void *activity, size_t nact, const void *effectors,
                             size_t neff, bl_error *err);

#endif
