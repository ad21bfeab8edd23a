/* An independent scalar oracle of the SORN equations (spec/models.md
 * §3.5-§3.7), used only by tests (tests/test_sorn_oracle.c); `qualify` does not
 * use it, it compares the engine's float32 batches with its float64 ones.
 *
 * It is written from the spec alone, never from the production kernels, so
 * that a differential test between the two can catch a mistake in either.
 * It favours being obviously right over being fast: one slot, dense plain
 * loops in the literal order and association of §3.6, each phase finished
 * for every unit before the next begins. The same source is compiled twice,
 * for double (f64, the reference) and for float (f32), with every float32
 * value held in a float variable so that no step is silently done in double
 * (§5.1, pitfall 21).
 *
 * bl_oracle_sorn (below the per-dtype declarations) is a thin dtype-agnostic
 * front for callers that handle both dtypes alike. */
#ifndef BL_ORACLE_SORN_H
#define BL_ORACLE_SORN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/model.h"
#include "brainlesslab/status.h"

/* Names of the per-dtype instances: bl_oracle_sorn_f64, bl_oracle_sorn_f64_step,
 * ... (macros of their own, so this header can share a translation unit with
 * the Falandays oracle's). */
#define BL_SORC_PASTE_(a, b) a##_##b
#define BL_SORC_PASTE(a, b) BL_SORC_PASTE_(a, b)
#define BL_SORC_NAME BL_SORC_PASTE(bl_oracle_sorn, BL_ORACLE_SFX)
#define BL_SORC_FN(op) BL_SORC_PASTE(BL_SORC_NAME, op)

/* How a state array is laid out, in the convention of bl_snapshot_array:
 * ndim 0 (a scalar, shape {1, 1}), 1 (shape {d0, 1}) or 2 (shape {d0, d1}),
 * and whether it is integer state. Zero-width I arrays keep their true
 * zero extent (§3.5), so their value count shape[0]·shape[1] is 0. */
typedef struct bl_oracle_sorn_shape {
    int ndim;
    size_t shape[2];
    bool integer;
} bl_oracle_sorn_shape;

/* The snapshot keys of model.h, in its order. */
extern const char *const bl_oracle_sorn_keys[];
extern const size_t bl_oracle_sorn_nkeys;

#define BL_ORACLE_DTYPE_FILE "sorn_oracle.decl.inc"
#include "oracle_dtypes.inc"

/* Either dtype behind one handle. Exactly one of f64/f32 is set. */
typedef struct bl_oracle_sorn {
    bl_dtype dtype;
    bl_oracle_sorn_f64 *f64;
    bl_oracle_sorn_f32 *f32;
} bl_oracle_sorn;

bl_status bl_oracle_sorn_create(const bl_sorn_init *init, bl_dtype dtype, bl_oracle_sorn **out,
                                bl_error *err);
void bl_oracle_sorn_destroy(bl_oracle_sorn *o);
/* inputs [r] in the oracle's dtype. SORN has no noise term (§3.6). */
void bl_oracle_sorn_step(bl_oracle_sorn *o, const void *inputs);
void bl_oracle_sorn_reset(bl_oracle_sorn *o);
void bl_oracle_sorn_freeze_weights(bl_oracle_sorn *o);
void bl_oracle_sorn_freeze_plasticity(bl_oracle_sorn *o);
/* As the per-dtype get: the named array widened to double. */
bool bl_oracle_sorn_get(const bl_oracle_sorn *o, const char *key, double *out,
                        bl_oracle_sorn_shape *shape);
/* Room `out` of get needs for any key. */
size_t bl_oracle_sorn_max_values(const bl_oracle_sorn *o);
int32_t bl_oracle_sorn_finite(const bl_oracle_sorn *o);
/* Diagnostics of the last frame (0 after creation and reset): synapses
 * pruned, rows rescaled by the normalisation. */
size_t bl_oracle_sorn_last_prunes(const bl_oracle_sorn *o);
size_t bl_oracle_sorn_last_normalised(const bl_oracle_sorn *o);

#endif
