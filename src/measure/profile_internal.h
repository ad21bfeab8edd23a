/* The pieces of `profile` that tests drive directly (spec/measurement.md
 * §1.5, §1.10, §1.11): the fixed workload, one evaluation's sample row, the
 * parent's reading of a worker's output and its verdict on a row. */
#ifndef BL_MEASURE_PROFILE_INTERNAL_H
#define BL_MEASURE_PROFILE_INTERNAL_H

#include "brainlesslab/measure.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"

/* bl_profile_validate with the refusals told apart: BL_EUSAGE for a flag
 * value it refuses (the CLI answers with argparse's usage and error); a
 * workload that does not resolve or is not admitted keeps the resolver's
 * status and message and sets *refused (exit 2, one error line); then
 * BL_EEXIST for an existing destination and BL_ENOMEM "out of memory ..."
 * for a real allocation failure, neither refused (exit 1). */
bl_status bl_profile_preflight(const bl_profile_args *a, bool *refused, bl_error *err);

/* The fixed workload of §1.3 built from the arguments. */
typedef struct bl_profile_workload {
    bl_plan *plan;
    bl_resolved_plan *resolved;
    bl_execution execution;
    int64_t resolved_horizon;
} bl_profile_workload;

/* Builds and resolves the plan and the execution policy; the runner's
 * preflight too. Errors keep the resolver's status (the CLI turns them into
 * usage errors). */
bl_status bl_profile_workload_build(const bl_profile_args *a, bl_profile_workload *w,
                                    bl_error *err);
void bl_profile_workload_destroy(bl_profile_workload *w);

/* protocol (§1.10) and protocol_signature: SHA-256 of the canonical JSON
 * {"contract": <contract hash>, "plan": <the plan's TOML text>}. */
bl_status bl_profile_protocol(const bl_profile_args *a, const bl_profile_workload *w,
                              bl_json **protocol, char signature[65], bl_error *err);

/* What one evaluation produced, for its sample row. */
typedef struct bl_profile_sample {
    const char *phase;                 /* first_run, warmup, warm_process */
    int64_t index;
    const bl_trial_result *trials;     /* in evaluation order; NULL when it failed */
    size_t ntrials;
    int64_t requested_trials;
    int64_t resolved_horizon;
    int64_t node_count;                /* units per frame, for the spike rate */
    const int64_t *capacities;         /* admitted capacity per cohort */
    size_t ncapacities;
    double execute_seconds;
    double timings[3];                 /* resolve_and_runtime, construction_compile_run, total */
    bool recorded;                     /* a writer ran */
    double record_seconds;
    const char *record_path;           /* relative to DEST, or NULL */
    const char *error;                 /* an evaluation or record error, or NULL */
} bl_profile_sample;

/* The sample row of §1.10 with its status (§1.5 success rules: trials
 * complete, unique, finite; a positive finite duration; no error). */
bl_status bl_profile_sample_row(const bl_profile_sample *s, bl_json **row, bl_error *err);

/* The one PROFILE_RECEIPT= line of a worker's stdout, parsed; otherwise
 * BL_EVALUE "invalid worker receipt: ...". */
bl_status bl_profile_parse_worker_output(const char *text, bl_json **receipt, bl_error *err);

/* §1.11: whether a measurement row (parent fields with the worker receipt
 * merged over them) is complete. `first` is the backend's earlier row (the
 * cold phase) for the cross-process check, or NULL. On failure *error gets a
 * static reason. */
bool bl_profile_row_complete(const bl_json *row, int returncode, const bl_profile_args *a,
                             const bl_json *first, const char **error);

#endif
