/* Results and statistics: bootstrap intervals, calibration records, null
 * adjustment of outcomes and intervals (spec/platform.md §5.3, §5.5;
 * spec/tasks.md §9).
 *
 * Every number here is NumPy-exact: the bootstraps draw from
 * Generator(Philox(seed)) with the reference's call pattern, means use
 * NumPy's pairwise summation and intervals NumPy's "linear" quantiles
 * (include/brainlesslab/npstat.h). A calibration record is content-hashed:
 * its id is the digest of every other field, so a record read from disk is
 * accepted only if it hashes to its id. */
#ifndef BRAINLESSLAB_RESULTS_H
#define BRAINLESSLAB_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/status.h"
#include "brainlesslab/task.h"

enum { BL_NULL_TRAJECTORIES = 1024, BL_BOOTSTRAP_REPETITIONS = 2000 };

/* §5.3: bootstrap interval of the mean of v[0..m): with Generator(Philox(
 * seed)) draw one repetitions x m matrix of integers in [0, m) (row-major,
 * one call), take each row's mean of v[index] and return the linear
 * quantiles 0.025 and 0.975. *available is false (and out untouched) when
 * m < 2. */
bl_status bl_bootstrap_interval(const double *v, size_t m, const bl_seed *seed,
                                size_t repetitions, double out[2], bool *available,
                                bl_error *err);

/* ---- calibration records (§5.5, tasks.md §9.3–9.5) ---------------------- */

typedef struct bl_calibration {
    char id[65];                  /* digest of every other field */
    bl_json *signature;           /* owned */
    char signature_id[65];        /* digest(signature) */
    const char *task;             /* points into signature */
    bool analytic;                /* method "analytic", else "empirical" */
    double upper_bound;
    double null_mean;
    double null_standard_error;
    double null_interval[2];
    size_t nscores;               /* 0 (analytic) or 1024 */
    double *trial_scores;         /* owned */
    bl_json *trajectory_ids;      /* owned array of strings or ints (empty if analytic) */
    int64_t root_seed;
    int64_t bootstrap_repetitions;
} bl_calibration;

/* Validates a signature (§5.5 "Validation": task known, backend valid and
 * architecture non-empty, horizon >= 1, warmup >= 0, cadence >= 1, policies
 * non-empty, rng_scheme == numerics.rng, source hashes non-empty, no
 * reservoir keys in task options) and returns digest(signature). */
bl_status bl_calibration_signature_id(const bl_json *signature, char id[65], bl_error *err);

/* analytic_calibration(signature): binary tasks only (the six decodable
 * probes and reversal_adaptation): U 1, null 0.5, SE 0, interval
 * (0.5, 0.5), no scores or ids, root_seed 0, repetitions 0. */
bl_status bl_calibration_analytic(const bl_json *signature, bl_calibration **out, bl_error *err);

/* create_empirical_calibration(signature, scores, upper_bound,
 * trajectory_ids, root_seed, repetitions): exactly 1024 finite scores
 * within [lower, U] (lower -1 for tracking, else 0); upper_bound NaN means
 * the task's declared bound, any other value must equal it; ids NULL means
 * 0..1023, else 1024 distinct strings or ints (never bools);
 * repetitions >= 2. The null interval bootstraps with
 * generator(root_seed, "calibration", "null-mean-bootstrap", signature id),
 * one integers(0, 1024, size=1024) call per repetition. */
bl_status bl_calibration_empirical(const bl_json *signature, const double *scores, size_t n,
                                   double upper_bound, const bl_json *trajectory_ids,
                                   int64_t root_seed, int64_t repetitions, bl_calibration **out,
                                   bl_error *err);

/* The record as JSON: {"bootstrap_repetitions", "frozen": true, "id",
 * "method", "null_interval", "null_mean", "null_standard_error",
 * "root_seed", "signature", "trajectory_ids", "trial_scores",
 * "upper_bound"}. */
bl_status bl_calibration_json(const bl_calibration *c, bl_json **out, bl_error *err);
/* Reads and validates one record: every field present and well-typed,
 * frozen true, the record rules above, and id == digest of the other
 * fields ("calibration content hash does not match the record"). */
bl_status bl_calibration_from_json(const bl_json *record, bl_calibration **out, bl_error *err);
void bl_calibration_destroy(bl_calibration *c);

/* A "brainlesslab-calibrations" version 1 document: {"calibrations":
 * [records], "format": "brainlesslab-calibrations", "version": 1}. */
bl_status bl_calibrations_document(const bl_calibration *const *cals, size_t n, bl_json **out,
                                   bl_error *err);
/* Reads such a document from a file; *out is an owned array of n records
 * (bl_calibrations_destroy). Errors name the file. */
bl_status bl_calibrations_read_file(const char *path, bl_calibration ***out, size_t *n,
                                    bl_error *err);
void bl_calibrations_destroy(bl_calibration **cals, size_t n);

/* ---- null adjustment (§5.5) ----------------------------------------------- */

/* null_adjusted(raw, calibration): raw NaN → no_scalar_outcome (normalised
 * NaN); cal NULL → calibration_unavailable; d = U − null_mean ≤ 0 or
 * non-finite → invalid_calibration_denominator (id kept); else
 * (raw − null)/d and null_adjusted_<method>. calibration_id gets the
 * record id whenever a calibration was consulted, "" otherwise. */
void bl_outcome_adjust(double raw, const bl_calibration *cal, double *normalised,
                       bl_adjust_status *status, char calibration_id[65]);

typedef enum bl_interval_status {
    BL_INTERVAL_AVAILABLE,                 /* "available" */
    BL_INTERVAL_INSUFFICIENT_BLOCKS,       /* "insufficient_independent_blocks" */
    BL_INTERVAL_INVALID_DENOMINATOR,       /* "invalid_calibration_denominator" */
} bl_interval_status;

const char *bl_interval_status_name(bl_interval_status s);

/* AdjustedInterval. NaN marks an absent number; has_* an absent pair. */
typedef struct bl_adjusted_interval {
    double estimate;
    bool has_interval;
    double interval[2];
    double raw_mean;
    bool has_raw_interval;
    double raw_interval[2];
    double null_mean;
    double null_interval[2];
    bl_interval_status status;
    int64_t invalid_denominator_draws;
    int64_t repetitions;
    char calibration_id[65];
} bl_adjusted_interval;

/* adjusted_interval(block_means, calibration, seed, repetitions) of §5.5:
 * fewer than 2 blocks → point estimate only; else the two generators
 * (seed, "uncertainty", "model-block-bootstrap", cal id) and (seed,
 * "uncertainty", "calibration-trajectory-bootstrap", cal id) with the
 * 256-bit seed as root, one m-vector (and one 1024-vector) per repetition,
 * invalid denominators counted, never dropped. */
bl_status bl_adjusted_interval_compute(const double *block_means, size_t m,
                                       const bl_calibration *cal, const bl_seed *seed,
                                       int64_t repetitions, bl_adjusted_interval *out,
                                       bl_error *err);
/* As JSON with the reference's field names (pairs as arrays, absent → null). */
bl_status bl_adjusted_interval_json(const bl_adjusted_interval *a, bl_json **out,
                                    bl_error *err);

#endif
