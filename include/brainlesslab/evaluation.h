/* An evaluation: a resolved plan executed and summarised (spec/platform.md
 * §4.4 steps 3 and 8, §4.10, §5).
 *
 * bl_evaluate selects a calibration for every target (supplied records with
 * the target's signature, else analytic chance for binary probes), checks
 * that supplied empirical calibrations never share a world with the
 * evaluation, runs the plan (include/brainlesslab/run.h), adjusts every
 * trial's outcome, and summarises: one TargetSummary per target (block
 * means, bootstrap interval, null-adjusted outcome and interval), the paired
 * contrasts of the plan's operation, and — for a calibrate plan — the
 * frozen calibration records it produced. */
#ifndef BRAINLESSLAB_EVALUATION_H
#define BRAINLESSLAB_EVALUATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/results.h"
#include "brainlesslab/run.h"
#include "brainlesslab/status.h"

typedef struct bl_target_summary {
    const char *target_id;       /* owned by the resolved plan */
    bl_task_kind task;
    /* outcome: raw NaN when there is no estimate (any trial not completed) */
    const char *outcome_key;
    double raw, normalised;
    bl_adjust_status normalisation;
    char calibration_id[65];
    int64_t scoring_window;      /* declared: horizon − warmup */
    size_t completed_trials, failed_trials, independent_blocks;
    const char *independent_unit;
    bool has_raw_interval;
    double raw_interval[2];
    bool has_adjusted;
    bl_adjusted_interval adjusted;
} bl_target_summary;

typedef enum bl_contrast_status { BL_CONTRAST_PAIRED_RAW, BL_CONTRAST_FAILED_PAIR } bl_contrast_status;

typedef struct bl_contrast {
    const char *target_id, *reference_id;
    bl_contrast_status status;
    const char *key;
    double estimate;
    size_t nblocks;
    double *block_differences;   /* owned */
    bool has_interval;
    double interval[2];
} bl_contrast;

typedef struct bl_evaluation {
    bl_run_result *run;          /* trials (outcomes adjusted), metadata */
    size_t ntargets;
    bl_target_summary *summaries;
    size_t ncontrasts;
    bl_contrast *contrasts;
    /* Produced records first, then applied ones, de-duplicated by id. */
    size_t ncalibrations;
    bl_calibration **calibrations; /* owned */
} bl_evaluation;

/* An evaluation prepared once: the runner's preparation (bl_run_prepare)
 * and, after it, every check bl_evaluate makes before it runs anything
 * (world disjointness and the calibration selected for every target), for
 * a command that must refuse bad input before it creates files and then
 * runs what it checked. `supplied` holds the caller's calibration records
 * (pooled from every --calibration source): they are not taken over, and
 * they and the resolved plan must outlive the preparation. */
typedef struct bl_evaluation_prepared bl_evaluation_prepared;

bl_status bl_evaluation_prepare(const bl_resolved_plan *plan, const bl_execution *x,
                                const bl_calibration *const *supplied, size_t nsupplied,
                                bl_evaluation_prepared **out, bl_error *err);
/* Runs and summarises a prepared evaluation; hooks may be NULL. The
 * preparation is not changed and may be evaluated again. */
bl_status bl_evaluate_prepared(const bl_evaluation_prepared *p, const bl_run_hooks *hooks,
                               bl_evaluation **out, bl_error *err);
void bl_evaluation_prepared_destroy(bl_evaluation_prepared *p);

/* ---- parts of an evaluation (run.h, "parts of a run") -------------------
 *
 * A run split over processes: each prepares part K of N and evaluates it
 * (rows of its jobs only, unadjusted), its result travels as bytes, and
 * one process combines every part into the evaluation a single process
 * gives, bit for bit in its rows, summaries, contrasts and recordings. */

/* 1-based part K of N (1 <= K <= N <= BL_RUN_MAX_PARTS); N = 1 is the
 * whole plan. Every check of bl_evaluation_prepare is made, for the whole
 * plan. bl_evaluate_prepared of a part of N > 1 fails ("parts do not cover
 * the plan ..."); use bl_evaluate_part. */
bl_status bl_evaluation_prepare_part(const bl_resolved_plan *plan, const bl_execution *x,
                                     const bl_calibration *const *calibrations,
                                     size_t ncalibrations, int64_t part, int64_t nparts,
                                     bl_evaluation_prepared **out, bl_error *err);
/* Executes only the part's jobs: a part result (bl_run_result with `jobs`,
 * rows in job order, their probe captures or replay frames when
 * recording). Outcomes are not yet adjusted: bl_evaluate_parts does it. */
bl_status bl_evaluate_part(const bl_evaluation_prepared *p, const bl_run_hooks *hooks,
                           bl_run_result **out, bl_error *err);
/* bl_run_part_decode_prepared against the evaluation's preparation (which
 * may be of any part of the same plan, or the whole). */
bl_status bl_run_part_decode(const bl_evaluation_prepared *p, const void *data, size_t len,
                             bl_run_result **out, bl_error *err);
/* Combines parts (any order) into the whole run (bl_run_combine: disjoint,
 * covering, same recording), then finishes exactly as bl_evaluate_prepared
 * does (adjustment with the calibrations, summaries, contrasts, the
 * calibrate operation). Takes the parts over (sets parts[i] NULL) whether
 * it succeeds or not. */
bl_status bl_evaluate_parts(const bl_evaluation_prepared *p, bl_run_result **parts,
                            size_t nparts, bl_evaluation **out, bl_error *err);

/* Runs and summarises the plan: bl_evaluation_prepare, bl_evaluate_prepared
 * and bl_evaluation_prepared_destroy in one call. */
bl_status bl_evaluate(const bl_resolved_plan *plan, const bl_execution *x,
                      const bl_calibration *const *supplied, size_t nsupplied,
                      const bl_run_hooks *hooks, bl_evaluation **out, bl_error *err);
void bl_evaluation_destroy(bl_evaluation *e);

/* The checks of bl_evaluation_prepare (with bl_run_preflight in place of
 * the runner's preparation), kept nothing of, for commands that must refuse
 * bad input before they create files and will not run the plan. */
bl_status bl_evaluation_preflight(const bl_resolved_plan *plan, const bl_execution *x,
                                  const bl_calibration *const *supplied, size_t nsupplied,
                                  bl_error *err);

/* The recording channels of an evaluation in record form (§4.11, §4.12):
 * ProbeEvents and ProbeTrials of every completed trial in batch-processing
 * order, and the replay frames of every trial by trial key
 * "<target>/<block>/<trial>". The events are not held: each names every
 * feature of its reservoir (about 240 bytes a node as JSON), so
 * bl_recordings_event makes event i when it is wanted, from the run's
 * captures, which must outlive the recordings. */
typedef struct bl_recordings {
    const bl_run_result *run;   /* the captures events are made from */
    size_t nevents;             /* three per emitting job */
    size_t *probe_jobs;         /* [nevents / 3] job indices into run */
    bl_json *probe_trials;      /* array of objects, or NULL */
    bl_json *replay_frames;     /* object: trial key → frames array, or NULL */
} bl_recordings;

bl_status bl_evaluation_recordings(const bl_resolved_plan *plan, const bl_evaluation *e,
                                   bl_recordings *out, bl_error *err);

/* Event i < r->nevents: its ProbeEvent object without its features in
 * *row (the caller's to destroy), and its n features in *features,
 * pointing into the run's capture. */
bl_status bl_recordings_event(const bl_recordings *r, size_t i, bl_json **row,
                              const double **features, size_t *n, bl_error *err);
void bl_recordings_clear(bl_recordings *r);

/* plain(TargetSummary) and a contrast as JSON (§5.2, §5.4 field order). */
bl_status bl_target_summary_json(const bl_target_summary *s, bl_json **out, bl_error *err);
bl_status bl_contrast_json(const bl_contrast *c, bl_json **out, bl_error *err);

#endif
