/* The JSON-building helpers of measure_internal.h. */
#include <math.h>
#include <string.h>

#include "measure_internal.h"

/* A NULL value or container is reported in the receipts' own words; the
 * rest is core's sticky builder. */
static void receipt_nomem(bl_status *st, const bl_json *container, const bl_json *value,
                          bl_error *err)
{
    if (*st == BL_OK && (!container || !value))
        *st = bl_fail(err, BL_ENOMEM, "out of memory for a receipt");
}

void bl_measure_put(bl_status *st, bl_json *object, const char *key, bl_json *value,
                    bl_error *err)
{
    receipt_nomem(st, object, value, err);
    bl_json_put(st, object, key, value, err);
}

void bl_measure_append(bl_status *st, bl_json *array, bl_json *value, bl_error *err)
{
    receipt_nomem(st, array, value, err);
    bl_json_push(st, array, value, err);
}

bl_json *bl_measure_real_or_null(double v)
{
    return isfinite(v) ? bl_json_real(v) : bl_json_null();
}

bl_status bl_measure_hand_over(bl_status st, bl_json *value, bl_json **out)
{
    if (st != BL_OK) {
        bl_json_destroy(value);
        return st;
    }
    *out = value;
    return BL_OK;
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
