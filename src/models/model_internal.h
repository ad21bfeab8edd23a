/* What every model family shares inside src/models: the batch header that
 * model.c reads for dispatch, argument checks and live views, and the
 * validation helpers. (The dtype helpers and the snapshot builder, which
 * world cohorts use too, are public in model.h.) A family embeds `bl_model` as the first member of its
 * own batch struct and supplies an operations table; model.c validates
 * every argument before a family sees it, so the family functions cannot
 * fail (except snapshot, which allocates). */
#ifndef BL_MODEL_INTERNAL_H
#define BL_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/model.h"

typedef struct bl_model_ops {
    void (*destroy)(bl_model *m);
    /* inputs [B][R] and noise [B][N] in the model dtype, active [B]: all
     * checked by model.c. */
    void (*step)(bl_model *m, const void *inputs, const void *noise, const int32_t *active);
    void (*reset)(bl_model *m, const int32_t *active);
    /* all == false: weight plasticity only; all == true: every plasticity. */
    void (*freeze)(bl_model *m, const int32_t *active, bool all);
    /* slot < B, checked by model.c. */
    bl_status (*snapshot)(const bl_model *m, size_t slot, bl_snapshot **out, bl_error *err);
} bl_model_ops;

struct bl_model {
    const bl_model_ops *ops;
    bl_model_kind kind;
    bl_dtype dtype;
    size_t slots;      /* B */
    size_t nodes;      /* N (the width of noise and activity) */
    size_t receptors;  /* R */
    size_t effectors;  /* E */
    /* Live views owned by the family: effectors [B][E] and activity [B][N]
     * in the dtype, finite [B]. */
    const void *effector_view;
    const void *activity_view;
    const int32_t *finite_view;
    /* Wirings: a run of slots created from the same initial-state pointer
     * (the runner passes one wiring to every trial of a lockstep group)
     * shares one copy of what never changes; wiring[b] < nwirings is slot
     * b's (bl_batch_create; ascending, wiring[0] = 0). */
    size_t nwirings;
    size_t *wiring; /* [B] */
};

/* A named run of doubles of an initial state or config (a scalar field has
 * count 1), so validation and the cast check share one list per family. */
typedef struct bl_named_values {
    const char *name;
    const double *p;
    size_t count;
} bl_named_values;

/* The numeric fields of each config, in declaration order (the order in
 * which the reference reports the first failure). */
enum { BL_FALANDAYS_NUMERIC_FIELDS = 12, BL_SORN_NUMERIC_FIELDS = 15 };
void bl_falandays_config_fields(const bl_falandays_config *c,
                                bl_named_values out[BL_FALANDAYS_NUMERIC_FIELDS]);
void bl_sorn_config_fields(const bl_sorn_config *c, bl_named_values out[BL_SORN_NUMERIC_FIELDS]);

/* §5.3: the first value of `v` that is not finite after the cast to dtype
 * fails with "initials[<slot>]: <prefix><name> is not finite after casting
 * to <dtype>". */
bl_status bl_check_cast(const bl_named_values *v, size_t n, const char *prefix, size_t slot,
                        bl_dtype dtype, bl_error *err);

/* Construction's port checks: N, R, E >= 1 with the reference's wording. */
bl_status bl_model_check_ports(size_t n, size_t r, size_t e, bl_error *err);

/* One array of an initial state, count values of the field's own type:
 * exactly one of the pointers is set, so that allocation never writes
 * through a differently typed lvalue. A family lists its arrays once, for
 * its init_create and its init_destroy. */
typedef struct bl_init_array {
    double **reals;
    int32_t **ints;
    size_t count;
} bl_init_array;

/* Allocates every array of the list zeroed (calloc's all-zero bytes are
 * +0.0 in IEEE 754, the reference's np.zeros) and leaves those of count 0
 * NULL; false when out of memory (those allocated stay for
 * bl_init_arrays_destroy). The caller has checked that the counts fit. */
bool bl_init_arrays_create(const bl_init_array *arrays, size_t count);
/* Releases every array of the list, whatever its count. */
void bl_init_arrays_destroy(const bl_init_array *arrays, size_t count);
/* Whether an n x m array of doubles is addressable, so no later product of
 * those sizes wraps. */
bool bl_doubles_fit(size_t n, size_t m);

#endif
