/* An independent scalar oracle of the Falandays equations (spec/models.md
 * §2.4-§2.6), used only by tests (tests/test_falandays_oracle.c); `qualify` does not
 * use it, it compares the engine's float32 batches with its float64 ones.
 *
 * It is written from the spec alone, never from the production kernels, so
 * that a differential test between the two can catch a mistake in either.
 * It favours being obviously right over being fast: one slot, plain loops in
 * the literal order and association of §2.5, every phase finished for all
 * nodes before the next begins. The same source is compiled twice, for
 * double (f64, the reference) and for float (f32), with every float32 value
 * held in a float variable so that no step is silently done in double.
 *
 * bl_oracle_falandays (below the per-dtype declarations) is a thin
 * dtype-agnostic front for callers that handle both dtypes alike. */
#ifndef BL_ORACLE_FALANDAYS_H
#define BL_ORACLE_FALANDAYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/model.h"
#include "brainlesslab/status.h"

#define BL_ORC_PASTE_(a, b) a##_##b
#define BL_ORC_PASTE(a, b) BL_ORC_PASTE_(a, b)
#define BL_ORC_NAME(base) BL_ORC_PASTE(base, BL_ORACLE_SFX)
#define BL_ORC_FN(op) BL_ORC_PASTE(BL_ORC_NAME(bl_oracle_falandays), op)

#define BL_ORACLE_DTYPE_FILE "falandays_oracle.decl.inc"
#include "oracle_dtypes.inc"

/* Either dtype behind one handle. Exactly one of f64/f32 is set. */
typedef struct bl_oracle_falandays {
    bl_dtype dtype;
    bl_oracle_falandays_f64 *f64;
    bl_oracle_falandays_f32 *f32;
} bl_oracle_falandays;

bl_status bl_oracle_falandays_create(const bl_falandays_init *init, bl_dtype dtype,
                                     bl_oracle_falandays **out, bl_error *err);
void bl_oracle_falandays_destroy(bl_oracle_falandays *o);
/* inputs [r] and noise [n] in the oracle's dtype. */
void bl_oracle_falandays_step(bl_oracle_falandays *o, const void *inputs, const void *noise);
void bl_oracle_falandays_reset(bl_oracle_falandays *o);
void bl_oracle_falandays_freeze_weights(bl_oracle_falandays *o);
void bl_oracle_falandays_freeze_plasticity(bl_oracle_falandays *o);
/* As the per-dtype get: the named array widened to double, or 0. */
size_t bl_oracle_falandays_get(const bl_oracle_falandays *o, const char *key, double *out);
int32_t bl_oracle_falandays_finite(const bl_oracle_falandays *o);

#endif
