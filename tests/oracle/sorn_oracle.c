/* The scalar SORN oracle: the per-dtype bodies (sorn_oracle.impl.inc,
 * compiled once for double and once for float) and the dtype-agnostic front
 * (oracle_front.inc, the part both oracles share, and the calls that differ).
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

#define BL_ORACLE_FRONT bl_oracle_sorn
#define BL_ORACLE_INIT bl_sorn_init
#define BL_ORACLE_LABEL "SORN"
#include "oracle_front.inc"
#undef BL_ORACLE_FRONT
#undef BL_ORACLE_INIT
#undef BL_ORACLE_LABEL

void bl_oracle_sorn_step(bl_oracle_sorn *o, const void *inputs)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_sorn_f64_step(o->f64, inputs);
    else
        bl_oracle_sorn_f32_step(o->f32, inputs);
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

size_t bl_oracle_sorn_last_prunes(const bl_oracle_sorn *o)
{
    return o->dtype == BL_FLOAT64 ? o->f64->last_prunes : o->f32->last_prunes;
}

size_t bl_oracle_sorn_last_normalised(const bl_oracle_sorn *o)
{
    return o->dtype == BL_FLOAT64 ? o->f64->last_normalised : o->f32->last_normalised;
}
