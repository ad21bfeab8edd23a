/* Neural models: configuration, construction and batched execution.
 *
 * A model batch (bl_model) holds B independent slots of one model family
 * with identical dimensions, in float64 (the reference) or float32
 * (spec/models.md §1). Each slot is created from an initial state, given in
 * canonical orientation: matrices are [destination][source] (row i = the
 * receiving node), input weights [node][receptor], output masks
 * [node][effector]. The batch copies what it is given; the caller keeps
 * ownership of its arrays. Internally the batch may store state however is
 * fastest; snapshots convert back to canonical orientation.
 *
 * Every operation takes an `active` mask of B int32 values: a slot with
 * active[b] == 0 is not touched at all (no state, flag or effector of it
 * changes). Finite flags are recomputed every frame and never latched here;
 * latching is the runtime's job.
 *
 * Programs outside the project build against this header (it is installed
 * with the library). */
#ifndef BRAINLESSLAB_MODEL_H
#define BRAINLESSLAB_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/rng.h"
#include "brainlesslab/status.h"

typedef enum bl_dtype { BL_FLOAT64, BL_FLOAT32 } bl_dtype;

/* Bytes of one value of the dtype. */
size_t bl_dtype_size(bl_dtype dtype);
/* "float64" / "float32". */
const char *bl_dtype_name(bl_dtype dtype);
/* x rounded to the dtype and back (float32: through float; float64: x). */
double bl_dtype_cast(bl_dtype dtype, double x);

/* A dense row-major matrix of the given dtype, as passed to bl_model_step. */
typedef struct bl_matrix {
    bl_dtype dtype;
    size_t rows, cols;
    const void *data;  /* rows * cols values of dtype */
} bl_matrix;

/* ---- Falandays (spec/models.md §2) ------------------------------------ */

typedef enum bl_axis { BL_AXIS_UNSIGNED, BL_AXIS_DALE } bl_axis;
typedef enum bl_weight_init {
    BL_WINIT_EXCITATORY,
    BL_WINIT_PONG_MIXED,
    BL_WINIT_LEGACY_NORMAL,
} bl_weight_init;
typedef enum bl_drive { BL_DRIVE_NONE, BL_DRIVE_OOSAWA } bl_drive;

/* FalandaysConfig (§2.1). Defaults from bl_falandays_config_default. */
typedef struct bl_falandays_config {
    double leak;                 /* 0.25, in [0, 1] */
    double lrate_wmat;           /* 1.0, >= 0 */
    double lrate_targ;           /* 0.01, >= 0 */
    double threshold_mult;       /* 2.0, > 0 */
    double targ_min;             /* 1.0, > 0 */
    double input_weight;         /* 1.875, >= 0 */
    double weight_init_std;      /* 1.0, >= 0 */
    bool learn_on;               /* true */
    double link_p;               /* 0.1, in [0, 1] */
    /* Per-receptor link probabilities, or NULL (none). A config never owns
     * this array: whoever points it somewhere owns the array, keeps it alive
     * while the config is used and frees it through its own pointer (for
     * the config of a resolved plan's target spec, the resolved plan). Construction reads
     * it; batches and initial states never keep it. */
    const double *input_link_p;
    size_t input_link_p_len;
    bl_weight_init weight_init_mode;  /* excitatory */
    double recurrent_init_scale; /* 1.0, >= 0 */
    bool rectify;                /* false */
    bool repair_masks;           /* false */
    bl_axis axis;                /* unsigned */
    double inhibitory_frac;      /* 0.25, in [0, 1] */
    bl_drive drive;              /* none */
    double membrane_noise;       /* 0.0, >= 0 */
    double noise_gain;           /* 0.0, >= 0 */
} bl_falandays_config;

void bl_falandays_config_default(bl_falandays_config *c);
/* The checks of §2.1 in the spec's order; BL_EVALUE with the first failure. */
bl_status bl_falandays_config_validate(const bl_falandays_config *c, bl_error *err);

/* Falandays InitialState (§2.2), canonical orientation, float64. */
typedef struct bl_falandays_init {
    bl_falandays_config config;  /* input_link_p is not used by a batch */
    size_t n, r, e;              /* nodes, receptors, effectors (all >= 1) */
    double *weights;             /* [n][n] W[i][j]: destination i <- source j */
    double *recurrent_mask;      /* [n][n] 0/1 (validated binary before use) */
    double *input_weights;       /* [n][r] */
    double *output_mask;         /* [n][e] >= 0 */
    int32_t *signs;              /* [n] +1/-1 (all +1 on the unsigned axis) */
    double *acts;                /* [n] */
    double *targets;             /* [n] */
    double *spikes;              /* [n] */
} bl_falandays_init;

/* Construction (§2.3) from a generator, in the normative draw order; the
 * result is owned by the caller (bl_falandays_init_destroy). input_link_p, when
 * given, must have length r. */
bl_status bl_falandays_construct(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                 bl_gen *rng, bl_falandays_init **out, bl_error *err);
/* An initial state with every array allocated and zeroed, signs +1, targets
 * at config->targ_min: for callers that fill arrays themselves. */
bl_status bl_falandays_init_create(const bl_falandays_config *c, size_t n, size_t r, size_t e,
                                   bl_falandays_init **out, bl_error *err);
void bl_falandays_init_destroy(bl_falandays_init *init);

/* ---- SORN (spec/models.md §3) ------------------------------------------ */

/* SORNConfig (§3.1). Defaults from bl_sorn_config_default. */
typedef struct bl_sorn_config {
    double inhibitory_fraction;  /* 0.2: an I/E ratio, in [0, 1] */
    double p_ee;                 /* 10/166, in [0, 1] */
    double p_ei;                 /* 1.0, in [0, 1] */
    double p_ie;                 /* 1.0, in [0, 1] */
    double p_input;              /* 0.05, in [0, 1] */
    double p_output;             /* 0.05, in [0, 1] */
    double ee_row_sum;           /* 1.0, >= 0 */
    double ei_row_sum;           /* 1.0, >= 0 */
    double ie_row_sum;           /* 1.0, >= 0 */
    double input_row_sum;        /* 1.0, >= 0 */
    double T_E_max;              /* 0.5, >= 0 */
    double T_I_max;              /* 1.0, >= 0 */
    double eta_stdp;             /* 0.001, >= 0 */
    double eta_ip;               /* 0.001, >= 0 */
    double H_ip;                 /* 0.1, in [0, 1] */
    bool learn_on;               /* true */
} bl_sorn_config;

void bl_sorn_config_default(bl_sorn_config *c);
/* The checks of §3.1; BL_EVALUE with the first failure. */
bl_status bl_sorn_config_validate(const bl_sorn_config *c, bl_error *err);
/* N_E = min(N, max(1, round_half_even(N / (1 + inhibitory_fraction)))) (§3.2). */
size_t bl_sorn_excitatory_count(double inhibitory_fraction, size_t n);

/* SORN InitialState (§3.3), canonical orientation, float64. N_I = n - n_e may
 * be 0; its arrays are then NULL. */
typedef struct bl_sorn_init {
    bl_sorn_config config;
    size_t n, r, e, n_e;         /* count, receptors, effectors, excitatory units */
    double *w_ee;                /* [n_e][n_e] E <- E, [destination][source] */
    double *ee_mask;             /* [n_e][n_e] 0/1 */
    double *c_e;                 /* [n_e] row normalisation targets */
    double *w_ei;                /* [n_e][n_i] E <- I (subtracted) */
    double *w_ie;                /* [n_i][n_e] I <- E */
    double *w_eu;                /* [n_e][r] E <- receptor */
    double *output_mask;         /* [e][n_e] 0/1: effector k reads E unit i */
    double *t_e;                 /* [n_e] */
    double *t_i;                 /* [n_i] */
    double *x;                   /* [n_e] 0/1 */
    double *y;                   /* [n_i] 0/1 */
} bl_sorn_init;

/* Construction (§3.4) from a generator in the normative draw order; owned by
 * the caller (bl_sorn_init_destroy). */
bl_status bl_sorn_construct(const bl_sorn_config *c, size_t n, size_t r, size_t e, bl_gen *rng,
                            bl_sorn_init **out, bl_error *err);
/* Every array allocated and zeroed, n_e from the config's ratio. */
bl_status bl_sorn_init_create(const bl_sorn_config *c, size_t n, size_t r, size_t e,
                              bl_sorn_init **out, bl_error *err);
void bl_sorn_init_destroy(bl_sorn_init *init);

/* ---- model batches ----------------------------------------------------- */

typedef struct bl_model bl_model;

typedef enum bl_model_kind { BL_MODEL_FALANDAYS, BL_MODEL_SORN } bl_model_kind;

/* Creates a batch of `nslots` SORN slots from initial states (equal
 * dimensions, "dimensions" in the message otherwise) in `dtype`, validating
 * them (§3.3) and the precision cast (§5.3) before allocating anything. */
bl_status bl_model_create_sorn(const bl_sorn_init *const *initials, size_t nslots,
                               bl_dtype dtype, bl_model **out, bl_error *err);

/* Creates a batch of `nslots` Falandays slots from initial states (one per
 * slot, equal dimensions) in `dtype`. Validates the initial states (§2.2)
 * and the precision cast (§5.3) before allocating anything. */
bl_status bl_model_create_falandays(const bl_falandays_init *const *initials, size_t nslots,
                                    bl_dtype dtype, bl_model **out, bl_error *err);
void bl_model_destroy(bl_model *m);

bl_model_kind bl_model_kindof(const bl_model *m);
bl_dtype bl_model_dtype(const bl_model *m);
size_t bl_model_slots(const bl_model *m);
size_t bl_model_nodes(const bl_model *m);      /* N */
size_t bl_model_receptors(const bl_model *m);  /* R */
size_t bl_model_effectors(const bl_model *m);  /* E */

/* One neural frame for every active slot. inputs is [B][R], noise [B][N],
 * both of the model's dtype; active holds B int32 values. Any violation is
 * BL_EVALUE and nothing is executed. */
bl_status bl_model_step(bl_model *m, const bl_matrix *inputs, const bl_matrix *noise,
                        const int32_t *active, size_t nactive, bl_error *err);
/* Restore the construction-time state of the active slots. */
bl_status bl_model_reset(bl_model *m, const int32_t *active, size_t nactive, bl_error *err);
/* Disable weight plasticity only (targets keep adapting). */
bl_status bl_model_freeze_weights(bl_model *m, const int32_t *active, size_t nactive,
                                  bl_error *err);
/* Disable all plasticity. */
bl_status bl_model_freeze_plasticity(bl_model *m, const int32_t *active, size_t nactive,
                                     bl_error *err);

/* Live views (valid until the next operation on the batch): effectors
 * [B][E] in the model dtype, activity [B][N] in the model dtype (Falandays:
 * the spikes), finite flags [B] int32. */
const void *bl_model_effector_data(const bl_model *m);
const void *bl_model_activity_data(const bl_model *m);
const int32_t *bl_model_finite(const bl_model *m);

/* ---- snapshots ---------------------------------------------------------- */

/* A deep copy of every state array of one slot, in canonical orientation,
 * each value converted to double (exact for float32). Integer state (masks,
 * signs, flags, counts of float32 batches included) is marked `integer`. */
typedef struct bl_snapshot_array {
    const char *name;   /* static string, e.g. "weights" */
    int ndim;           /* 0 (scalar), 1 or 2 */
    size_t shape[2];
    bool integer;
    double *data;       /* shape[0] * shape[1] values (1 for a scalar) */
} bl_snapshot_array;

typedef struct bl_snapshot {
    size_t count;
    bl_snapshot_array *arrays;
} bl_snapshot;

/* SORN keys: w_ee, ee_mask, c_e, w_ei, w_ie, w_eu, output_mask, t_e, t_i, x,
 * y, prev_x, prev_y, activity, drive, effectors, finite, adaptation_finite,
 * plasticity, parameters (zero-width I arrays keep their true zero width).
 * Falandays keys: acts, targets, spikes, previous, errors, counts, weights,
 * effectors, finite, learning, weight_learning, raw_finite, recurrent_mask,
 * input_weights, output_mask, signs. */
bl_status bl_model_snapshot(const bl_model *m, size_t slot, bl_snapshot **out, bl_error *err);
/* The named array, or NULL. */
const bl_snapshot_array *bl_snapshot_get(const bl_snapshot *s, const char *name);
void bl_snapshot_destroy(bl_snapshot *s);

/* Building a snapshot, for the model families and for world cohorts (whose
 * snapshots, bl_worlds_snapshot, are of this same form). */
/* A snapshot with `count` empty entries (names NULL, data NULL): the builder
 * fills each with bl_snapshot_entry; bl_snapshot_destroy releases a partially
 * filled one. */
bl_status bl_snapshot_create(size_t count, bl_snapshot **out, bl_error *err);
/* Names entry k and gives it zeroed storage for d0 * d1 values (ndim 0: one
 * value, ndim 1: d0 values); *data points at it. */
bl_status bl_snapshot_entry(bl_snapshot *s, size_t k, const char *name, int ndim, size_t d0,
                            size_t d1, bool integer, double **data, bl_error *err);

#endif
