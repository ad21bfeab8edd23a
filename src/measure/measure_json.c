/* The receipt helpers of measure_internal.h. */
#include <math.h>
#include <string.h>

#include "measure_internal.h"

bl_json *bl_measure_real_or_null(double v)
{
    return isfinite(v) ? bl_json_real(v) : bl_json_null();
}

bl_json *bl_measure_built(bl_status st, bl_json *value)
{
    if (st != BL_OK) {
        bl_json_destroy(value);
        return NULL;
    }
    return value;
}

const char *bl_measure_string(const bl_json *o, const char *key)
{
    const bl_json *v = o ? bl_json_get(o, key) : NULL;
    return v && bl_json_kindof(v) == BL_JSON_STRING ? bl_json_get_string(v, NULL) : NULL;
}

bool bl_measure_equal(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}
