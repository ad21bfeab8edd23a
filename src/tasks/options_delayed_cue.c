/* Delayed Cue's options (spec/tasks.md §1.1, §8.1): cue, response and the
 * set of delays a trial draws from. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "options_internal.h"

static bl_json *delays_json(const bl_task_options *o)
{
    return bl_opt_numbers(o->delays, NULL, o->n_delays);
}

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(cue_ticks, 8), BL_OPT_CUSTOM_FIELD(delays, delays_json),
    BL_OPT_INT_FIELD(response_ticks, 8),
    BL_OPT_MODE_FIELD(cue_mode, bl_opt_cue_modes)};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    o->n_delays = 3;
    o->delays = bl_mallocarray(3, sizeof(int64_t));
    if (!o->delays)
        return bl_fail(err, BL_ENOMEM, "out of memory for task options");
    o->delays[0] = 8;
    o->delays[1] = 32;
    o->delays[2] = 128;
    return BL_OK;
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bl_status resolve_delays(const bl_json *v, bl_task_options *o, bl_error *err)
{
    bl_json_kind k = bl_opt_kind(v);
    if (k == BL_JSON_STRING) {
        /* Python iterates the characters, none of which is an int. */
        size_t len = 0;
        bl_json_get_string(v, &len);
        if (len == 0)
            return bl_fail(err, BL_EVALUE, "delays must be nonempty and distinct");
        return bl_fail(err, BL_EVALUE, "delays must be an integer >= 0");
    }
    if (k != BL_JSON_ARRAY)
        return bl_fail(err, BL_ETYPE, "'%s' object is not iterable", bl_py_type(v));
    size_t n = bl_json_size(v);
    int64_t *vals = n ? bl_mallocarray(n, sizeof *vals) : NULL;
    int64_t *sorted = n ? bl_mallocarray(n, sizeof *sorted) : NULL;
    bl_status st = BL_OK;
    if (n && (!vals || !sorted)) {
        st = bl_fail(err, BL_ENOMEM, "out of memory for task options");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        st = bl_py_integer(bl_json_at(v, i), "delays", 0, &vals[i], err);
        if (st != BL_OK)
            goto fail;
    }
    if (n)
        memcpy(sorted, vals, n * sizeof *vals);
    bool distinct = n > 0;
    if (n) {
        qsort(sorted, n, sizeof *sorted, i64_cmp);
        for (size_t i = 1; i < n; i++)
            if (sorted[i] == sorted[i - 1])
                distinct = false;
    }
    if (!distinct) {
        st = bl_fail(err, BL_EVALUE, "delays must be nonempty and distinct");
        goto fail;
    }
    bl_free(sorted);
    bl_free(o->delays);
    o->delays = vals;
    o->n_delays = n;
    return BL_OK;
fail:
    bl_free(vals);
    bl_free(sorted);
    return st;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    const bl_json *v = bl_opt_given(given, "delays");
    return v ? resolve_delays(v, o, err) : BL_OK;
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    int64_t most = 0;
    for (size_t i = 0; i < o->n_delays; i++)
        if (i == 0 || o->delays[i] > most)
            most = o->delays[i];
    return c + most + r;
}

BL_TASK_FAMILY(bl_family_delayed_cue, "delayed_cue", defaults, resolve, horizon, NULL,
               .n_inputs = 3, .outcome_key = "recall_accuracy");
