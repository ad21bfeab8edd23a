/* Plans (spec/platform.md §1–§2): the TOML boundary, the specification
 * objects, resolution and the contract hash.
 *
 * A plan file is TOML (format "brainlesslab-plan", format_version 4). The
 * TOML bridge turns a document into the project's JSON value tree (tables →
 * objects, arrays → arrays, integers and floats kept apart); everything else
 * works on that tree. bl_plan is a validated plan: every specification object
 * of §1.2 with its defaults, kept as its plain() form (the JSON that enters
 * the contract hash) plus typed accessors for the runner. Resolution (§1.4)
 * adds per-target horizons, ports, frames, outcome keys, upper bounds, full
 * model configurations and resolved task options, and the contract hash. */
#ifndef BRAINLESSLAB_PLAN_H
#define BRAINLESSLAB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/status.h"

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
 * `profile` and `qualify` use bl_plan_profile; sweep, ablate, benchmark and
 * calibrate have no command yet and are public API). Objects are
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
bl_status bl_plan_benchmark(const bl_json *node, int64_t count, const bl_json *evaluation,
                            const bl_json *numerics, const char *id, bl_plan **out,
                            bl_error *err);
bl_status bl_plan_calibrate(const bl_json *task, int64_t root_seed, const bl_json *numerics,
                            int64_t warmup, bl_plan **out, bl_error *err);

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

/* Target i's resolved model configuration as the C config of its family
 * (*kind says which of fc / sc was filled). A Falandays input_link_p is a
 * heap array the caller owns as *input_link_p (fc->input_link_p points to
 * it; NULL when there is none, and on failure): bl_free(*input_link_p) once
 * fc is no longer used. */
bl_status bl_resolved_model_config(const bl_resolved_plan *r, size_t i, bl_model_kind *kind,
                                   bl_falandays_config *fc, bl_sorn_config *sc,
                                   double **input_link_p, bl_error *err);

/* ---- identities (§1.6, §4.2) ------------------------------------------- */

/* The construction seed of target i in (block, trial): (construction_key,
 * node kind, count, n_inputs, n_effectors) plus the scope keys of the
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
