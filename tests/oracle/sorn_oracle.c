/* The scalar SORN oracle: the per-dtype bodies (sorn_oracle.impl.inc,
 * compiled once for double and once for float) and the dtype-agnostic front.
 * See sorn_oracle.h. */
#include "sorn_oracle.h"

#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"

const char *const bl_oracle_sorn_keys[] = {
    "w_ee",   "ee_mask", "c_e",      "w_ei",     "w_ie",      "w_eu",   "output_mask",
    "t_e",    "t_i",     "x",        "y",        "prev_x",    "prev_y", "activity",
    "drive",  "effectors", "finite", "adaptation_finite", "plasticity", "parameters",
};
const size_t bl_oracle_sorn_nkeys = sizeof bl_oracle_sorn_keys / sizeof *bl_oracle_sorn_keys;

#define BL_ORACLE_DTYPE_FILE "sorn_oracle.impl.inc"
#include "oracle_dtypes.inc"

bl_status bl_oracle_sorn_create(const bl_sorn_init *init, bl_dtype dtype, bl_oracle_sorn **out,
                                bl_error *err)
{
    *out = NULL;
    bl_oracle_sorn *o = bl_calloc(1, sizeof *o);
    if (!o)
        return bl_fail(err, BL_ENOMEM, "out of memory building the SORN oracle");
    o->dtype = dtype;
    bl_status st = dtype == BL_FLOAT64 ? bl_oracle_sorn_f64_create(init, &o->f64, err)
                                       : bl_oracle_sorn_f32_create(init, &o->f32, err);
    if (st != BL_OK) {
        bl_free(o);
        return st;
    }
    *out = o;
    return BL_OK;
}

void bl_oracle_sorn_destroy(bl_oracle_sorn *o)
{
    if (!o)
        return;
    bl_oracle_sorn_f64_destroy(o->f64);
    bl_oracle_sorn_f32_destroy(o->f32);
    bl_free(o);
}

void bl_oracle_sorn_step(bl_oracle_sorn *o, const void *inputs)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_sorn_f64_step(o->f64, inputs);
    else
        bl_oracle_sorn_f32_step(o->f32, inputs);
}

void bl_oracle_sorn_reset(bl_oracle_sorn *o)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_sorn_f64_reset(o->f64);
    else
        bl_oracle_sorn_f32_reset(o->f32);
}

void bl_oracle_sorn_freeze_weights(bl_oracle_sorn *o)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_sorn_f64_freeze_weights(o->f64);
    else
        bl_oracle_sorn_f32_freeze_weights(o->f32);
}

void bl_oracle_sorn_freeze_plasticity(bl_oracle_sorn *o)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_sorn_f64_freeze_plasticity(o->f64);
    else
        bl_oracle_sorn_f32_freeze_plasticity(o->f32);
}

bool bl_oracle_sorn_get(const bl_oracle_sorn *o, const char *key, double *out,
                        bl_oracle_sorn_shape *shape)
{
    return o->dtype == BL_FLOAT64 ? bl_oracle_sorn_f64_get(o->f64, key, out, shape)
                                  : bl_oracle_sorn_f32_get(o->f32, key, out, shape);
}

size_t bl_oracle_sorn_max_values(const bl_oracle_sorn *o)
{
    return o->dtype == BL_FLOAT64 ? bl_oracle_sorn_f64_max_values(o->f64)
                                  : bl_oracle_sorn_f32_max_values(o->f32);
}

int32_t bl_oracle_sorn_finite(const bl_oracle_sorn *o)
{
    return o->dtype == BL_FLOAT64 ? o->f64->finite : o->f32->finite;
}

size_t bl_oracle_sorn_last_prunes(const bl_oracle_sorn *o)
{
    return o->dtype == BL_FLOAT64 ? o->f64->last_prunes : o->f32->last_prunes;
}

size_t bl_oracle_sorn_last_normalised(const bl_oracle_sorn *o)
{
    return o->dtype == BL_FLOAT64 ? o->f64->last_normalised : o->f32->last_normalised;
}
