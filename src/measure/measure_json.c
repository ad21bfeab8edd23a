/* The receipt helpers of measure_internal.h. */
#include <math.h>
#include <string.h>
#include <sys/resource.h>

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

/* peak_rss (§1.9): getrusage's high-water mark, KiB on Linux. */
bl_json *bl_measure_peak_rss(void)
{
    struct rusage ru;
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        bl_json_put(&st, o, "status", bl_json_string("unsupported"), NULL);
        bl_json_put(&st, o, "diagnostic", bl_json_string("getrusage failed"), NULL);
    } else {
        bl_json_put(&st, o, "status", bl_json_string("available"), NULL);
        bl_json_put(&st, o, "value", bl_json_int(ru.ru_maxrss), NULL);
        bl_json_put(&st, o, "units", bl_json_string("KiB"), NULL);
        bl_json_put(&st, o, "bytes", bl_json_int((int64_t)ru.ru_maxrss * 1024), NULL);
        bl_json_put(&st, o, "scope",
                    bl_json_string("process high-water mark; includes all stages, not VRAM "
                                   "or allocator pool"),
                    NULL);
    }
    return bl_measure_built(st, o);
}
