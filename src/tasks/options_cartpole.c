/* Plank CartPole's options (spec/tasks.md §1.1, §8.1): the ranges of the
 * initial state. */
#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "options_internal.h"

static bl_json *initial_ranges_json(const bl_task_options *o)
{
    bl_status st = BL_OK;
    bl_json *ranges = bl_json_array();
    for (int i = 0; i < 4; i++)
        bl_json_push(&st, ranges, bl_opt_numbers(NULL, o->initial_ranges[i], 2), NULL);
    if (st != BL_OK) {
        bl_json_destroy(ranges);
        return NULL;
    }
    return ranges;
}

static const bl_opt_field fields[] = {BL_OPT_CUSTOM_FIELD(initial_ranges, initial_ranges_json)};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    static const double ranges[4][2] = {
        {-1.2, 1.2}, {-0.05, 0.05}, {-0.10475, 0.10475}, {-0.05, 0.05}};
    memcpy(o->initial_ranges, ranges, sizeof ranges);
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    const bl_json *v = bl_opt_given(given, "initial_ranges");
    if (!v)
        return BL_OK;
    static const char *const bad = "initial_ranges needs four finite ordered pairs";
    bl_json_kind k = bl_opt_kind(v);
    bl_status st;
    if (k == BL_JSON_STRING) {
        /* Each character is a one-element "pair": convert them as Python
         * would (a conversion error comes first), then reject the shape. */
        size_t len = 0;
        const char *s = bl_json_get_string(v, &len);
        for (size_t at = 0; at < len;) {
            size_t l = bl_opt_cp_len(s + at, len - at);
            double x;
            if ((st = bl_py_float_text(s + at, l, &x, err)) != BL_OK)
                return st;
            at += l;
        }
        return bl_fail(err, BL_EVALUE, "%s", bad);
    }
    if (k != BL_JSON_ARRAY)
        return bl_fail(err, BL_ETYPE, "'%s' object is not iterable", bl_py_type(v));
    size_t n = bl_json_size(v);
    bool ok = n == 4;
    double ranges[4][2] = {{0}};
    for (size_t i = 0; i < n; i++) {
        double *pair = NULL;
        size_t m = 0;
        if ((st = bl_py_float_seq(bl_json_at(v, i), &pair, &m, err)) != BL_OK)
            return st;
        if (m != 2 || !isfinite(pair[0]) || !isfinite(pair[1]) || pair[0] > pair[1])
            ok = false;
        else if (i < 4)
            ranges[i][0] = pair[0], ranges[i][1] = pair[1];
        bl_free(pair);
    }
    if (!ok)
        return bl_fail(err, BL_EVALUE, "%s", bad);
    memcpy(o->initial_ranges, ranges, sizeof ranges);
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_cartpole, "cartpole_plank_easy", defaults, resolve, NULL, NULL,
               .n_inputs = 8, .neural_frames = 24, .default_horizon = 15000,
               .min_scored_ticks = 15000, .outcome_key = "fitness", .upper_bound = 15000.0);
