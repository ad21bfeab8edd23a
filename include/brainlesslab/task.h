/* Task families: options, world preparation, world cohorts, controllers,
 * null adjustment (spec/tasks.md).
 *
 * A world is one independent episode of a task family (Tracking, Pong, Plank
 * CartPole Easy, or one of the seven cue/memory probes). It is prepared on
 * the host in float64 from the world stream's generator (bl_world_prepare),
 * then run inside a cohort (bl_worlds: worlds of one family and one receptor
 * width, in float64 or float32) through the three operations of §1.3:
 * encode (observation for frame f), accumulate (effectors of frame f) and
 * advance (one world tick). Controllers that are not reservoirs (oracle,
 * reference_null, constants, probe controls) act on a cohort directly
 * (bl_controllers), frame by frame or fused over a whole tile
 * (bl_worlds_run_control), with bit-identical results.
 *
 * Conventions (§0.3): ticks count from 0; frames within a tick are 1..F;
 * effector 0 is "left/first", 1 "right/second"; binary labels and choices
 * are 1 and 2. All world arithmetic is in the cohort's dtype. */
#ifndef BRAINLESSLAB_TASK_H
#define BRAINLESSLAB_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/status.h"

/* ---- families and definitions (§1.1) ---------------------------------- */

typedef enum bl_task_kind {
    BL_TASK_TRACKING = 0,
    BL_TASK_PONG,
    BL_TASK_CARTPOLE_PLANK_EASY,
    BL_TASK_DELAYED_CUE,
    BL_TASK_RECALL_INTERFERENCE,
    BL_TASK_DELAYED_XOR,
    BL_TASK_EVIDENCE_ACCUMULATION,
    BL_TASK_CONTEXT_INTEGRATION,
    BL_TASK_TEMPORAL_ORDER,
    BL_TASK_REVERSAL_ADAPTATION,
    BL_TASK_COUNT
} bl_task_kind;

/* "tracking", "pong", ... (the reference's names). */
const char *bl_task_name(bl_task_kind kind);
/* Any other name: BL_EVALUE "unsupported task '<name>'; historical tasks require Julia". */
bl_status bl_task_from_name(const char *name, bl_task_kind *out, bl_error *err);
/* The seven cue and memory probes (Delayed Cue onwards): episodic worlds
 * scored by binary answers, unlike Tracking, Pong and CartPole. False for a
 * kind out of range. */
static inline bool bl_task_is_probe(bl_task_kind kind)
{
    return kind >= BL_TASK_DELAYED_CUE && kind < BL_TASK_COUNT;
}

/* ---- options (§8.1) --------------------------------------------------- */

typedef enum bl_cue_mode { BL_CUE_TRANSIENT, BL_CUE_PERSISTENT, BL_CUE_HIDDEN } bl_cue_mode;
typedef enum bl_visibility { BL_VISIBLE, BL_HIDDEN } bl_visibility;
typedef enum bl_distractor_mode {
    BL_DISTRACTOR_RANDOM,
    BL_DISTRACTOR_MATCHED,
    BL_DISTRACTOR_OPPOSITE,
    BL_DISTRACTOR_ABSENT,
} bl_distractor_mode;
typedef enum bl_congruency {
    BL_CONGRUENCY_MIXED,
    BL_CONGRUENCY_CONGRUENT,
    BL_CONGRUENCY_CONFLICTING,
} bl_congruency;

/* Resolved options of one task: defaults merged, validated. Only the fields
 * of `kind` are meaningful. Arrays are owned (bl_task_options_clear). */
typedef struct bl_task_options {
    bl_task_kind kind;
    /* tracking */
    double stim_speed_rad, movement_amp, eye_offset_deg, sensory_gain; /* pong: sensory_gain */
    double *sensor_offsets_deg;
    size_t n_sensor_offsets;
    bool randomize_start;
    bool has_theta0, has_phi0, has_direction0;
    double theta0, phi0, direction0;
    /* cartpole_plank_easy: (lo, hi) for x, x_dot, theta, theta_dot */
    double initial_ranges[4][2];
    /* probes */
    int64_t cue_ticks, response_ticks, delay, distractors, distractor_ticks, gap,
        pulse_count, pulse_ticks, terminal_ticks, feedback_ticks, rounds;
    int64_t reversal_range[2];
    int64_t *delays;
    size_t n_delays;
    double evidence_fraction;
    bl_cue_mode cue_mode, context_mode;
    bl_distractor_mode distractor_mode;
    bl_visibility input_mode, feedback_mode;
    bl_congruency congruency;
} bl_task_options;

/* The family's defaults (owned arrays; clear afterwards). */
bl_status bl_task_options_default(bl_task_kind kind, bl_task_options *out, bl_error *err);
/* Defaults merged with `given` (a JSON object as a plan carries it, or NULL),
 * then validated with the spec's messages: unknown keys → "unknown options
 * for <kind>: [sorted keys]", "<name> must be an integer >= <min>", ...
 * Integers and reals are kept apart as the plan wrote them where the spec
 * says so. */
bl_status bl_task_options_resolve(bl_task_kind kind, const bl_json *given, bl_task_options *out,
                                  bl_error *err);
/* The resolved options as the JSON object that enters contracts and
 * calibration signatures (every option, tuples as arrays, None as null). */
bl_status bl_task_options_json(const bl_task_options *o, bl_json **out, bl_error *err);
bl_status bl_task_options_copy(const bl_task_options *src, bl_task_options *dst, bl_error *err);
void bl_task_options_clear(bl_task_options *o);

/* What a task declares (§1.1) for given options. */
typedef struct bl_task_definition {
    bl_task_kind kind;
    size_t n_inputs;          /* receptors */
    size_t n_effectors;       /* always 2 */
    int32_t neural_frames;    /* frames per tick: 24 for CartPole, else 1 */
    int64_t default_horizon;
    int64_t min_scored_ticks;
    const char *outcome_key;  /* "track_score", "hit_rate", ... */
    double upper_bound;
    bool probe;
} bl_task_definition;

void bl_task_define(const bl_task_options *o, bl_task_definition *out);

/* The 64 development capacity-probe presets (§5.11), in order: public API
 * for programs that build probe plans (the `presets` command writes one
 * plan per preset). */
typedef struct bl_task_preset {
    char id[96];              /* "<task>__<suffix>" */
    bl_task_options options;  /* owned */
    int64_t horizon;          /* the options' default horizon */
} bl_task_preset;

bl_status bl_capacity_presets(bl_task_preset **out, size_t *count, bl_error *err);
void bl_capacity_presets_destroy(bl_task_preset *presets, size_t count);

/* ---- prepared worlds (§1.2, §2.2, §3.2, §4.2, §5) ---------------------- */

/* A prepared world, float64, owned by the caller. */
typedef struct bl_world_init {
    bl_task_kind kind;
    size_t n_inputs;
    double physical[8];
    double params[4];
    double *angles;           /* [n_inputs] (tracking, pong) or NULL */
    /* Pong: draws[n_draws][2]. A world from bl_world_prepare_lazy holds
     * only the first draws_ready rows here; the others are the next values
     * of draws_rng, row after row (draws_ready 0: all n_draws rows are
     * here, as bl_world_prepare and hand-made worlds have them). */
    double *draws;
    size_t n_draws;
    size_t draws_ready;
    bl_gen draws_rng;
    /* Probes: stimulus table S[length][n_inputs] and M rounds. */
    double *stimuli;
    size_t length;
    size_t rounds;
    int32_t *response_start, *response_end, *cue_ends, *labels;
    int32_t *round_bounds;    /* [rounds][2] */
    int32_t reversal;         /* one-based reversal round, 0 if none */
    bool feedback;            /* feedback_mode == visible */
    /* Diagnostic metadata (never read by worlds or controllers). meta_cue is
     * delayed_xor's first cue (its second is meta_cue if labels[0] == 1,
     * else 3 - meta_cue). */
    int32_t meta_cue, meta_delay, meta_context, meta_initial_mapping;
    bool meta_congruent;
    int32_t *meta_distractor_labels, *meta_distractor_starts;
    size_t meta_n_distractors;
} bl_world_init;

/* prepare(task, rng, horizon): every draw of the family from `rng`, in the
 * order of §7.1. horizon 0 stands for the reference's None (the family's
 * default horizon); it matters only for Pong's draw table. Ordinary worlds
 * get a one-row zero stimulus table, a one-row zero draw table (unless
 * Pong) and no schedule, as the reference's InitialState has. */
bl_status bl_world_prepare(const bl_task_options *o, bl_gen *rng, int64_t horizon,
                           bl_world_init **out, bl_error *err);
/* The same world with Pong's reset rows left undrawn: row 0 (the initial
 * state) is drawn, rows 1.. stay in draws_rng (a copy of rng after row 0)
 * until a miss needs them, so a Pong trial draws the few rows it uses
 * rather than horizon + 1. Cohorts, snapshots and validation treat both
 * forms alike, bit for bit. Only `rng`'s state afterwards differs (it has
 * not drawn rows 1..): for callers that draw nothing more from it, as the
 * runner does with the world stream. Other families: bl_world_prepare. */
bl_status bl_world_prepare_lazy(const bl_task_options *o, bl_gen *rng, int64_t horizon,
                                bl_world_init **out, bl_error *err);
/* Structural validation of a world made outside prepare (§8.2). */
bl_status bl_world_init_validate(const bl_world_init *w, const bl_task_options *o,
                                 bl_error *err);
void bl_world_init_destroy(bl_world_init *w);

/* ---- world cohorts (§1.3, §1.5, §8.3) --------------------------------- */

typedef struct bl_worlds bl_worlds;

/* A cohort of `n` worlds of one family and receptor width, run in `dtype`.
 * horizons[b] bounds world b; warmup ticks are not scored (0 required for
 * probes and CartPole: "probes and Plank CartPole require warmup=0"). The
 * cohort copies what it is given; every number is cast to the dtype first
 * ("... after casting to float32"). */
bl_status bl_worlds_create(const bl_world_init *const *inits, size_t n, const int64_t *horizons,
                           int64_t warmup, bl_dtype dtype, bl_worlds **out, bl_error *err);
void bl_worlds_destroy(bl_worlds *w);

size_t bl_worlds_count(const bl_worlds *w);
size_t bl_worlds_inputs_width(const bl_worlds *w);
int32_t bl_worlds_frames(const bl_worlds *w);   /* neural frames per tick */
bl_dtype bl_worlds_dtype(const bl_worlds *w);

/* encode(frame) for every world; enabled holds n int32 values. The receptor
 * vectors are then in bl_worlds_inputs ([n][R], dtype). */
bl_status bl_worlds_encode(bl_worlds *w, int32_t frame, const int32_t *enabled, size_t nenabled,
                           bl_error *err);
const void *bl_worlds_inputs(const bl_worlds *w);
/* accumulate(effectors, frame); effectors is [n][2] in the cohort dtype. */
bl_status bl_worlds_accumulate(bl_worlds *w, const bl_matrix *effectors, int32_t frame,
                               const int32_t *enabled, size_t nenabled, bl_error *err);
/* advance(effectors of the last frame). */
bl_status bl_worlds_advance(bl_worlds *w, const bl_matrix *effectors, const int32_t *enabled,
                            size_t nenabled, bl_error *err);

/* Live per-world views. */
const int32_t *bl_worlds_ticks(const bl_worlds *w);
const int32_t *bl_worlds_done(const bl_worlds *w);
const int32_t *bl_worlds_finite(const bl_worlds *w);
/* Completed probe decisions per world: the index of the current round
 * (0 for families without rounds). */
const int32_t *bl_worlds_rounds_done(const bl_worlds *w);
/* Native outcome of world b so far (NaN for an unfinished probe). */
double bl_worlds_outcome(const bl_worlds *w, size_t b);

typedef enum bl_trial_status {
    BL_TRIAL_COMPLETED,
    BL_TRIAL_FAILED,
    BL_TRIAL_INCOMPLETE,
} bl_trial_status;
/* §1.5 with the model's finite flag for the same slot. */
bl_trial_status bl_worlds_status(const bl_worlds *w, size_t b, bool model_finite);
const char *bl_trial_status_name(bl_trial_status s);  /* "completed", ... */

/* Every §1.2 state field of world b plus the §1.6 display fields. */
bl_status bl_worlds_snapshot(const bl_worlds *w, size_t b, bl_snapshot **out, bl_error *err);

/* ---- controllers (§6) -------------------------------------------------- */

typedef enum bl_policy {
    BL_POLICY_ORACLE = 0,
    BL_POLICY_REFERENCE_NULL,
    BL_POLICY_CONSTANT_LEFT,
    BL_POLICY_CONSTANT_RIGHT,
    BL_POLICY_MEMORYLESS,
    BL_POLICY_LAST,
    BL_POLICY_FIRST,
    BL_POLICY_CONTEXT_BLIND,
    BL_POLICY_IRRELEVANT,
    BL_POLICY_BAG,
    BL_POLICY_FIXED_MAPPING,
    BL_POLICY_COUNT
} bl_policy;

const char *bl_policy_name(bl_policy p);
/* Accepts the alias "reference_nullblindpolicy". "reservoir" is a controller
 * but not a direct policy: BL_EVALUE here. */
bl_status bl_policy_from_name(const char *name, bl_policy *out, bl_error *err);
/* "policy '<p>' is not defined for <kind>" (§6.1); `controller` may also be
 * "reservoir", which every family allows. */
bl_status bl_controller_validate(const char *controller, bl_task_kind kind, bl_error *err);

typedef struct bl_controllers bl_controllers;

/* Controller memory for every world of a cohort (§6.4 state, held choices). */
bl_status bl_controllers_create(bl_policy policy, const bl_worlds *w, bl_controllers **out,
                                bl_error *err);
void bl_controllers_destroy(bl_controllers *c);
/* One frame: effectors [n][2] (cohort dtype, caller-allocated) from the
 * current receptor vectors (and, for the CartPole oracle, the raw physical
 * state); randoms holds n uniforms in the cohort dtype for reference_null
 * (the value of this tick or round, §7.3), ignored otherwise. */
bl_status bl_controllers_act(bl_controllers *c, const bl_worlds *w, const void *randoms,
                             int32_t frame, void *effectors, bl_error *err);

/* The fused path (§1.4): runs up to `tile_ticks` ticks of every world with
 * the guard logic of the unfused loop. uniform_tile is [rows][n] in the
 * cohort dtype (rows >= tile_ticks for physical families, >= max rounds for
 * probes); tick o of this call uses row o (physical families) or row
 * min(round, rows - 1) (probes). guard[n] and frame_cursors[n] (int32) are
 * updated in place. Bit-identical to the unfused encode/act/accumulate/
 * advance loop. */
bl_status bl_worlds_run_control(bl_worlds *w, bl_controllers *c, const bl_matrix *uniform_tile,
                                int32_t tile_ticks, int32_t *guard, int32_t *frame_cursors,
                                bl_error *err);

/* ---- null adjustment (§9.1–9.2) ---------------------------------------- */

typedef enum bl_adjust_status {
    BL_ADJUST_EMPIRICAL,        /* "null_adjusted_empirical" */
    BL_ADJUST_ANALYTIC,         /* "null_adjusted_analytic" */
    BL_ADJUST_UNAVAILABLE,      /* "calibration_unavailable" */
    BL_ADJUST_NO_OUTCOME,       /* "no_scalar_outcome" */
    BL_ADJUST_BAD_DENOMINATOR,  /* "invalid_calibration_denominator" */
} bl_adjust_status;

const char *bl_adjust_status_name(bl_adjust_status s);
/* normalised = (raw - null_mean) / (upper - null_mean), unclipped. `raw` NaN
 * means no scalar outcome; has_null false means no calibration. *normalised
 * is NaN whenever it is absent. */
bl_adjust_status bl_null_adjust(double raw, bool has_null, bool analytic, double null_mean,
                                double upper, double *normalised);

/* ---- calibration signatures (§9.3) -------------------------------------- */

/* The signature a frozen null is bound to, for this build: action cadence,
 * architecture, backend, initialisation and null policies, numerics, rng
 * scheme, runtime fingerprint and world source hashes of this program (its
 * own, not the reference's), scoring horizon, task, resolved task options,
 * warm-up. Its id is bl_json_digest of it. */
bl_status bl_calibration_signature(const bl_task_options *o, int64_t horizon, int64_t warmup,
                                   bl_dtype dtype, const char *backend, bl_json **out,
                                   bl_error *err);

/* A signature's task options: a JSON object without reservoir keys (the
 * one check shared by building a signature and reading one back). */
bl_status bl_calibration_check_task_options(const bl_json *opts, bl_error *err);

/* This build's parts of a signature, which a record's metadata and a profile
 * receipt carry too, so a calibration can be matched to the build that
 * made it. */
/* SHA-256 hex of "brainlesslab <version> <compiler id> <compiler version>":
 * this build's stand-in for the reference's hash of its installed runtime. */
bl_status bl_runtime_fingerprint(char hex[65], bl_error *err);
/* {"<path>": "<sha256>", ...} for this build's sources that decide what a
 * null trajectory is: every file of src/tasks and src/rng and the .c files
 * of src/run, keyed by their path from the project root (CMakeLists.txt
 * hashes them into the build). */
bl_status bl_world_source_hashes(bl_json **out, bl_error *err);
/* The machine name uname(2) reports ("x86_64", "aarch64"), or "unspecified"
 * (the reference's default) when uname fails. */
void bl_architecture(char out[65]);

#endif
