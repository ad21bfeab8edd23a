/* Reversal Adaptation's options (spec/tasks.md §1.1, §8.1): rounds of cue,
 * response and feedback with one reversal in a drawn range. */
#include "options_internal.h"

static bl_json *reversal_range_json(const bl_task_options *o)
{
    return bl_opt_numbers(o->reversal_range, NULL, 2);
}

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(rounds, 96), BL_OPT_INT_FIELD(cue_ticks, 8),
    BL_OPT_INT_FIELD(response_ticks, 8), BL_OPT_INT_FIELD(feedback_ticks, 8),
    BL_OPT_CUSTOM_FIELD(reversal_range, reversal_range_json),
    BL_OPT_MODE_FIELD(feedback_mode, bl_opt_visibilities)};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->reversal_range[0] = 32;
    o->reversal_range[1] = 64;
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st = bl_opt_check(given, "rounds", 48, o, err);
    if (st != BL_OK)
        return st;
    const bl_json *v = bl_opt_given(given, "reversal_range");
    if (v) {
        bl_json_kind k = bl_opt_kind(v);
        size_t len;
        if (k == BL_JSON_ARRAY) {
            len = bl_json_size(v);
        } else if (k == BL_JSON_STRING) {
            size_t bytes = 0;
            const char *s = bl_json_get_string(v, &bytes);
            len = bl_opt_cp_count(s, bytes);
        } else {
            return bl_fail(err, BL_ETYPE, "object of type '%s' has no len()", bl_py_type(v));
        }
        if (len != 2)
            return bl_fail(err, BL_EVALUE, "reversal_range needs two endpoints");
        if (k == BL_JSON_STRING)
            return bl_fail(err, BL_EVALUE, "reversal_range must be an integer >= 2");
        for (size_t i = 0; i < 2; i++)
            if ((st = bl_py_integer(bl_json_at(v, i), "reversal_range", 2,
                                    &o->reversal_range[i], err)) != BL_OK)
                return st;
    }
    if (!(o->reversal_range[0] <= o->reversal_range[1] &&
          o->reversal_range[1] <= o->rounds - 15))
        return bl_fail(err, BL_EVALUE, "reversal must leave sixteen scored rounds");
    return BL_OK;
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    int64_t period = c + r + o->feedback_ticks;
    if (o->rounds > 0 && period > INT32_MAX / o->rounds)
        return -1;
    return o->rounds * period;
}

BL_TASK_FAMILY(bl_family_reversal_adaptation, "reversal_adaptation", defaults, resolve, horizon,
               NULL, .n_inputs = 8, .outcome_key = "adaptation_accuracy");
