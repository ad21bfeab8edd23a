/* Plans (spec/platform.md §1–§2): the TOML boundary, the specification
 * objects, resolution and the contract hash.
 *
 * A plan file is TOML (format "brainlesslab-plan", format_version 4). The
 * TOML bridge turns a document into the project's JSON value tree (tables →
 * objects, arrays → arrays, integers and floats kept apart); everything else
 * works on that tree. bl_plan is a validated plan: every specification object
 * of §1.2 with its defaults, kept as its plain() form (the JSON that enters
 * the contract hash). Resolution (§1.4) adds per-target horizons, ports,
 * frames, outcome keys, upper bounds, full model configurations and resolved
 * task options, and the contract hash, and keeps the result typed as well
 * (bl_target_spec), so that nothing downstream reads the JSON again. */
#ifndef BRAINLESSLAB_PLAN_H
#define BRAINLESSLAB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/status.h"
#include "brainlesslab/task.h"

/* ---- TOML bridge (the project's one C++ file) ------------------------- */

/* Parses TOML 1.0 text into a JSON value tree (root: object). Errors are
 * BL_EVALUE "<what>:<line>:<column>: <parser message>". Values TOML has and
 * plans cannot hold (dates and times) are BL_ETYPE "unsupported
 * configuration value: <type>". Integers are 64-bit (a documented limit of
 * this implementation: the reference accepts larger ones). */
bl_status bl_toml_parse(const char *text, size_t len, const char *what, bl_json **out,
                        bl_error *err);
/* Reads a file (missing → BL_ENOENT, directory → BL_EISDIR, other I/O →
 * BL_EOS; a file over 16 MiB → BL_EVALUE) and parses it. Pipes, FIFOs and
 * character devices are read to their end under the same cap
 * (bl_file_read with BL_FILE_STREAM). */
bl_status bl_toml_read_file(const char *path, bl_json **out, bl_error *err);
/* Writes an object tree as TOML in the layout of §2.2 (root scalars, then
 * arrays of tables, then sub-tables; null-valued keys omitted). Reading the
 * output back gives an equal tree. */
bl_status bl_toml_write(const bl_json *doc, bl_buf *out, bl_error *err);

/* ---- plans ------------------------------------------------------------- */

typedef struct bl_plan bl_plan;

/* §2.1 steps 2–5 and every §1.2 validation, from a parsed document (`what`
 * names it in messages). */
bl_status bl_plan_from_document(const bl_json *doc, bl_plan **out, bl_error *err);
/* bl_toml_read_file + bl_plan_from_document. */
bl_status bl_plan_read(const char *path, bl_plan **out, bl_error *err);
/* §2.2: the TOML text of a plan; read back, it gives the same contract hash. */
bl_status bl_plan_write(const bl_plan *plan, bl_buf *out, bl_error *err);
void bl_plan_destroy(bl_plan *plan);

/* plain(plan): every field of every specification object, defaults
 * included (the "request" of the contract). Owned by the plan. */
const bl_json *bl_plan_plain(const bl_plan *plan);
const char *bl_plan_id(const bl_plan *plan);

/* ---- operation constructors (§1.6) ------------------------------------- */

/* Plans built as the reference's library functions build them, for the
 * operation commands and for C programs that build plans in code (today
 * `profile` and `qualify` use bl_plan_profile; the sweep, ablate, benchmark
 * and calibrate commands the others). Objects are
 * plan-document JSON (a composition table, an evaluation table, ...); NULL
 * means defaults; an id of NULL the operation's default id. Every result is
 * validated like a plan read from a file.
 *
 * profile: one target "baseline".
 * sweep: one target per cell of the Cartesian product of `axes` (an object
 *   name → non-empty array; first axis outermost, last fastest), node
 *   parameters = the composition's overlaid with the cell, id = first 16
 *   hex digits of digest(merged parameters), label = repr(cell).
 * ablate: "baseline", then one target per verb (id = verb) with the single
 *   intervention (tick, verb); verbs NULL means freeze_weights and
 *   freeze_plasticity.
 * benchmark: for tracking, pong, cartpole_plank_easy and delayed_cue in
 *   turn, a reservoir target <task> and a reference_null <task>_null, both
 *   with pairing key "benchmark/<task>"; `node` is the node table or NULL.
 * calibrate: plan "calibration", one reference_null target on `task` (a
 *   task table or NULL), 1024 blocks x 1 trial in partition "calibration". */
bl_status bl_plan_profile(const bl_json *composition, const bl_json *evaluation,
                          const bl_json *numerics, const char *id, bool diagnostic,
                          bl_plan **out, bl_error *err);
bl_status bl_plan_sweep(const bl_json *composition, const bl_json *axes,
                        const bl_json *evaluation, const bl_json *numerics, const char *id,
                        bool diagnostic, bl_plan **out, bl_error *err);
bl_status bl_plan_ablate(const bl_json *composition, const char *const *verbs, size_t nverbs,
                         int64_t tick, const bl_json *evaluation, const bl_json *numerics,
                         const char *id, bool diagnostic, bl_plan **out, bl_error *err);
bl_status bl_plan_benchmark(const bl_json *node, int64_t nodes, const bl_json *evaluation,
                            const bl_json *numerics, const char *id, bl_plan **out,
                            bl_error *err);
bl_status bl_plan_calibrate(const bl_json *task, int64_t root_seed, const bl_json *numerics,
                            int64_t warmup, bl_plan **out, bl_error *err);
/* calibrate over a whole composition and evaluation (the `calibrate`
 * command's base plan): the composition as given (task, node, count, input
 * gain) on the one reference_null target, the evaluation as given (horizon,
 * construction scope) with blocks 1024, trials 1, partition "calibration",
 * root_seed and warmup set. bl_plan_calibrate is this with the composition
 * {task} and no evaluation. */
bl_status bl_plan_calibrate_from(const bl_json *composition, const bl_json *evaluation,
                                 int64_t root_seed, const bl_json *numerics, int64_t warmup,
                                 bl_plan **out, bl_error *err);
/* A copy of `plan` with its id, question, version and evidence replaced
 * (NULL keeps one), validated again: the constructors leave the question
 * "", the version "1" and the evidence "exploratory", and all four enter
 * the contract hash. */
bl_status bl_plan_retitle(const bl_plan *plan, const char *id, const char *question,
                          const char *version, const char *evidence, bl_plan **out,
                          bl_error *err);

/* A member of a validated plan's (or resolved plan's) plain JSON that
 * validation guarantees (BL_ASSERTed present): for code that reads plans
 * after they were checked. */
const bl_json *bl_plan_member(const bl_json *obj, const char *key);
const char *bl_plan_string(const bl_json *obj, const char *key);
int64_t bl_plan_int(const bl_json *obj, const char *key);

/* ---- resolution -------------------------------------------------------- */

typedef struct bl_resolved_plan bl_resolved_plan;

/* §1.4, in plan order, with the spec's error texts. Pure host work. */
bl_status bl_plan_resolve(const bl_plan *plan, bl_resolved_plan **out, bl_error *err);
void bl_resolved_plan_destroy(bl_resolved_plan *r);

/* plain(ResolvedPlan): {"contract_hash": ..., "request": ..., "targets": [...]}
 * as `brainlesslab check` prints it. Owned by r. */
const bl_json *bl_resolved_plain(const bl_resolved_plan *r);
/* Lowercase hex SHA-256 of the canonical JSON of {"request", "targets"}. */
const char *bl_resolved_contract_hash(const bl_resolved_plan *r);

/* The resolved targets in plan order: plain(ResolvedTarget), i.e. {"target",
 * "horizon", "model_config", "n_inputs", "n_effectors", "neural_frames",
 * "outcome_key", "upper_bound", "task_options"}. Owned by r. */
size_t bl_resolved_target_count(const bl_resolved_plan *r);
const bl_json *bl_resolved_target(const bl_resolved_plan *r, size_t i);

/* ---- typed resolved plan ---------------------------------------------- */

/* Resolution validates a plan once and keeps what it resolved twice: as
 * JSON (plain(ResolvedPlan) above, for the contract hash, `check` and the
 * records, which hash or copy it) and as the typed specs below, which the
 * runner, the evaluation, the ids, profile and qualify read instead of
 * looking keys up again. Both are owned by the resolved plan and agree
 * field by field. Strings point into its JSON. */

typedef enum bl_construction_scope {
    BL_SCOPE_EVALUATION, /* one wiring per target */
    BL_SCOPE_BLOCK,      /* one per target and block */
    BL_SCOPE_TRIAL,      /* one per trial */
} bl_construction_scope;

/* The request's EvaluationSpec and the plan-wide fields the runner needs. */
typedef struct bl_evaluation_spec {
    int64_t root_seed, blocks, trials_per_block, warmup;
    const char *seed_partition;
    bl_construction_scope construction_scope;
    const char *operation;       /* the plan's operation ("profile", "ablate", ...) */
    bl_dtype dtype;              /* numerics.dtype */
    bool diagnostic;
} bl_evaluation_spec;

typedef enum bl_intervention_verb {
    BL_FREEZE_WEIGHTS,
    BL_FREEZE_PLASTICITY,
    BL_BLIND_INPUT,
    BL_SHUFFLE_INPUT,
} bl_intervention_verb;

typedef struct bl_intervention {
    int64_t tick;
    bl_intervention_verb verb;
} bl_intervention;

/* One resolved target (plain(ResolvedTarget) with its TargetSpec). */
typedef struct bl_target_spec {
    const bl_json *plain;        /* plain(ResolvedTarget), for what hashes JSON */
    const bl_json *target;       /* its "target": plain(TargetSpec) */
    const char *id, *pairing_key, *mechanism_key, *construction_key;
    const char *controller;      /* as the plan names it */
    bool reservoir;              /* controller "reservoir" */
    bl_policy policy;            /* the direct controller, when not a reservoir */
    bl_model_kind model;
    const char *node;            /* the node kind's name: "falandays", "sorn" */
    int64_t nodes;               /* the reservoir size N (the plan's `count`) */
    double input_gain;
    int64_t n_inputs, n_effectors, neural_frames, horizon;
    int64_t excitatory;          /* SORN's excitatory units; `nodes` for Falandays */
    const char *outcome_key;     /* static */
    double upper_bound;
    bl_task_options task_options;
    /* The family's full configuration (the other one is zero). A Falandays
     * input_link_p is owned by the resolved plan. */
    bl_falandays_config falandays;
    bl_sorn_config sorn;
    /* Sorted by tick, then verb in enum order. */
    const bl_intervention *interventions;
    size_t ninterventions;
    bool shuffle;                /* has a shuffle_input intervention */
} bl_target_spec;

const bl_evaluation_spec *bl_resolved_evaluation(const bl_resolved_plan *r);
/* Target i < bl_resolved_target_count(r), in plan order. */
const bl_target_spec *bl_resolved_target_spec(const bl_resolved_plan *r, size_t i);

/* ---- identities (§1.6, §4.2) ------------------------------------------- */

/* The construction seed of target i in (block, trial): (construction_key,
 * node kind, nodes, n_inputs, n_effectors) plus the scope keys of the
 * plan's construction_scope (block: block; trial: block, trial). */
bl_status bl_plan_construction_seed(const bl_resolved_plan *r, size_t i, int64_t block,
                                   int64_t trial, bl_seed *out, bl_error *err);
/* Wiring id of target i in (block, trial): digest({"seed": construction
 * seed in decimal, "node", "count", "ports": [n_inputs, n_effectors],
 * "config": full model config}); the construction seed takes the scope keys
 * of the plan's construction_scope. "none" for a non-reservoir controller. */
bl_status bl_plan_wiring_id(const bl_resolved_plan *r, size_t i, int64_t block, int64_t trial,
                            char hex[65], bl_error *err);
/* A sweep cell's target id: the first 16 hex digits of digest(parameters),
 * the base parameters overlaid with the cell's values. */
bl_status bl_sweep_target_id(const bl_json *parameters, char id[17], bl_error *err);
/* A sweep cell's label: Python's repr of the cell-only dict ("{'leak': 0.1}";
 * arrays as tuples). A heap string the caller releases with bl_free. */
bl_status bl_sweep_label(const bl_json *cell, char **out, bl_error *err);

#endif
