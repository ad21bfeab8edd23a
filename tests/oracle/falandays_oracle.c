/* The scalar Falandays oracle: the per-dtype bodies (falandays_oracle.impl.inc,
 * compiled once for double and once for float) and the dtype-agnostic front.
 * See falandays_oracle.h. */
#include "falandays_oracle.h"

#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#define BL_ORACLE_DTYPE_FILE "falandays_oracle.impl.inc"
#include "oracle_dtypes.inc"

bl_status bl_oracle_falandays_create(const bl_falandays_init *init, bl_dtype dtype,
                                     bl_oracle_falandays **out, bl_error *err)
{
    *out = NULL;
    bl_oracle_falandays *o = bl_calloc(1, sizeof *o);
    if (!o)
        return bl_fail(err, BL_ENOMEM, "out of memory building the Falandays oracle");
    o->dtype = dtype;
    bl_status st = dtype == BL_FLOAT64 ? bl_oracle_falandays_f64_create(init, &o->f64, err)
                                       : bl_oracle_falandays_f32_create(init, &o->f32, err);
    if (st != BL_OK) {
        bl_free(o);
        return st;
    }
    *out = o;
    return BL_OK;
}

void bl_oracle_falandays_destroy(bl_oracle_falandays *o)
{
    if (!o)
        return;
    bl_oracle_falandays_f64_destroy(o->f64);
    bl_oracle_falandays_f32_destroy(o->f32);
    bl_free(o);
}

void bl_oracle_falandays_step(bl_oracle_falandays *o, const void *inputs, const void *noise)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_falandays_f64_step(o->f64, inputs, noise);
    else
        bl_oracle_falandays_f32_step(o->f32, inputs, noise);
}

void bl_oracle_falandays_reset(bl_oracle_falandays *o)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_falandays_f64_reset(o->f64);
    else
        bl_oracle_falandays_f32_reset(o->f32);
}

void bl_oracle_falandays_freeze_weights(bl_oracle_falandays *o)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_falandays_f64_freeze_weights(o->f64);
    else
        bl_oracle_falandays_f32_freeze_weights(o->f32);
}

void bl_oracle_falandays_freeze_plasticity(bl_oracle_falandays *o)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_falandays_f64_freeze_plasticity(o->f64);
    else
        bl_oracle_falandays_f32_freeze_plasticity(o->f32);
}

size_t bl_oracle_falandays_get(const bl_oracle_falandays *o, const char *key, double *out)
{
    return o->dtype == BL_FLOAT64 ? bl_oracle_falandays_f64_get(o->f64, key, out)
                                  : bl_oracle_falandays_f32_get(o->f32, key, out);
}

int32_t bl_oracle_falandays_finite(const bl_oracle_falandays *o)
{
    return o->dtype == BL_FLOAT64 ? o->f64->finite : o->f32->finite;
}
