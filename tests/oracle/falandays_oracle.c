/* The scalar Falandays oracle: the per-dtype bodies (falandays_oracle.impl.inc,
 * compiled once for double and once for float) and the dtype-agnostic front
 * (oracle_front.inc, the part both oracles share, and the calls that differ).
 * See falandays_oracle.h. */
#include "falandays_oracle.h"

#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#define BL_ORACLE_DTYPE_FILE "falandays_oracle.impl.inc"
#include "oracle_dtypes.inc"

#define BL_ORACLE_FRONT bl_oracle_falandays
#define BL_ORACLE_INIT bl_falandays_init
#define BL_ORACLE_LABEL "Falandays"
#include "oracle_front.inc"
#undef BL_ORACLE_FRONT
#undef BL_ORACLE_INIT
#undef BL_ORACLE_LABEL

void bl_oracle_falandays_step(bl_oracle_falandays *o, const void *inputs, const void *noise)
{
    if (o->dtype == BL_FLOAT64)
        bl_oracle_falandays_f64_step(o->f64, inputs, noise);
    else
        bl_oracle_falandays_f32_step(o->f32, inputs, noise);
}

size_t bl_oracle_falandays_get(const bl_oracle_falandays *o, const char *key, double *out)
{
    return o->dtype == BL_FLOAT64 ? bl_oracle_falandays_f64_get(o->f64, key, out)
                                  : bl_oracle_falandays_f32_get(o->f32, key, out);
}
