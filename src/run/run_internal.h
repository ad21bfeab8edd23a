/* What the files of the evaluation runner share (src/run/ only): the loaded
 * targets' cohorts, the run context, a batch's wirings and
 * slots, what a slot reports and where its recordings go, and the stages'
 * entry points. The runner's files, in the order a run meets them:
 *
 *   preflight.c  sizes, recording and memory admission, cohorts, job lists
 *   batch.c      one batch: slots' seeds and worlds, wirings, lockstep groups,
 *                the parallel run
 *   trial.c      a lockstep group of reservoir trials (one model batch and
 *                one world cohort, frame by frame) or one direct trial, from
 *                the first frame to the last (the trial loop)
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

/* The runner reads its targets from the resolved plan's typed specs
 * (bl_target_spec, plan.h); what it adds is the cohort of each. */
typedef struct target {
    const bl_target_spec *spec;
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
    const bl_evaluation_spec *ev;
    size_t ntargets;
    target *targets;
    size_t njobs;
    size_t ncohorts;
    cohort *cohorts;
    int64_t recording_bytes;
    /* A part of the run (bl_run_prepare_part), else part_first NULL: per
     * target, the part's first job, its job count and the row of that
     * first job in the part's result; nrows jobs in all. */
    int64_t part, nparts;
    size_t *part_first, *part_count, *part_row;
    size_t nrows;
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
    bl_seed seed;                /* its construction seed */
    bl_falandays_init *fal;
    bl_sorn_init *sorn;
} wiring;

typedef struct slot {
    size_t job;
    size_t row;                  /* its row in the result (job, or its place in a part) */
    size_t target;               /* index in plan order */
    const bl_target_spec *t;
    int64_t block, trial;
    bl_seed world_seed, drive_seed, control_seed, shuffle_seed;
    bl_seed construction_seed;   /* reservoir slots only */
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
    /* The units a thread takes whole: unit u is order[unit[u]] up to
     * order[unit[u + 1]], a lockstep group of reservoir slots that share a
     * wiring, or one direct controller's slot. */
    slot **order;                /* [n] */
    size_t *unit;                /* [nunits + 1] */
    size_t nunits;
    struct capture *recs;        /* [n], in the order of `order` */
    struct slot_end *ends;       /* [n], likewise */
} batch;

/* The most trials one lockstep group steps together by default (batch.c
 * explains the choice); the environment's BL_GROUP_CAP overrides it. */
#define BL_GROUP_CAP 8

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

/* preflight.c: steps 2-6 of §4.4 into c (free with bl_run_ctx_clear,
 * also on failure); `jobs` also builds the cohorts' job lists, which only
 * execution needs. */
bl_status bl_run_preflight_ctx(run_ctx *c, const bl_resolved_plan *plan, const bl_execution *x,
                               bool jobs, bl_error *err);
void bl_run_ctx_clear(run_ctx *c);
/* partition.c: after a preflight without job lists, restricts c to the
 * jobs of part `part` of `nparts` and builds the cohorts' job lists of
 * those jobs alone. */
bl_status bl_run_ctx_restrict(run_ctx *c, int64_t part, int64_t nparts, bl_error *err);
/* preflight.c: the cohorts' job lists of c's jobs (all, or its part's). */
bl_status bl_run_ctx_job_lists(run_ctx *c, bl_error *err);

/* run.c: a result of n rows with the run's metadata (the whole plan's
 * cohorts, its policy) and room for its recording channels; part = nparts
 * = 1 and no job list (a part's caller adds them). */
bl_status bl_run_new_result(const run_ctx *c, size_t n, bl_run_result **out, bl_error *err);
/* run.c: a preparation's context (part.c decodes against it). */
const run_ctx *bl_run_prepared_ctx(const bl_run_prepared *p);

/* batch.c: the n jobs of cohort h from its first-th on, into rows. */
bl_status bl_run_batch(run_ctx *c, const cohort *h, size_t first, size_t n,
                       bl_trial_result *rows, bl_run_result *res, bl_error *err);
void bl_run_release_carry(run_ctx *c);

/* trial.c: the whole trials of a lockstep group (g slots of one wiring:
 * one model batch, one world cohort; recs and ends per member), or one
 * slot's by a direct controller (frame by frame when a recording needs
 * every tick, else fused). */
bl_status bl_run_group(const run_ctx *c, const batch *b, slot *const *slots, size_t g,
                       const capture *recs, slot_end *ends, bl_error *err);
bl_status bl_run_direct_frames(const run_ctx *c, const batch *b, slot *s, const capture *rec,
                               slot_end *e, bl_error *err);
bl_status bl_run_direct(const run_ctx *c, const batch *b, slot *s, slot_end *e, bl_error *err);

/* capture.c */
bl_status bl_run_probe_begin(const slot *s, size_t n, bl_probe_capture *pc, bl_error *err);
void bl_run_probe_tick(bl_probe_capture *pc, int64_t tick, bl_dtype dtype, const void *activity);
bl_status bl_run_replay_tick(bl_json *frames, const bl_worlds *w, int64_t tick,
                             const void *activity, size_t nact, const void *effectors,
                             size_t neff, bl_error *err);
bl_status bl_run_replay_tick_at(bl_json *frames, const bl_worlds *w, size_t b, int64_t tick,
                                const void *activity, size_t nact, const void *effectors,
                                size_t neff, bl_error *err);

#endif
