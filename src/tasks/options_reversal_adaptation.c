/* Reversal Adaptation's options (spec/tasks.md §1.1, §8.1): rounds of cue,
 * response and feedback with one reversal in a drawn range. */
#include "options_internal.h"

static const char *const keys[] = {"rounds",         "cue_ticks",      "response_ticks",
                                   "feedback_ticks", "reversal_range", "feedback_mode"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->rounds = 96;
    o->cue_ticks = 8;
    o->response_ticks = 8;
    o->feedback_ticks = 8;
    o->reversal_range[0] = 32;
    o->reversal_range[1] = 64;
    o->feedback_mode = BL_VISIBLE;
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st;
    const bl_json *v = bl_opt_given(given, "rounds");
    if (v && (st = bl_py_integer(v, "rounds", 48, &o->rounds, err)) != BL_OK)
        return st;
    v = bl_opt_given(given, "reversal_range");
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

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 8;
    d->outcome_key = "adaptation_accuracy";
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("rounds", bl_json_int(o->rounds));
    BL_OPT_SET("cue_ticks", bl_json_int(o->cue_ticks));
    BL_OPT_SET("response_ticks", bl_json_int(o->response_ticks));
    BL_OPT_SET("feedback_ticks", bl_json_int(o->feedback_ticks));
    BL_OPT_SET("reversal_range", bl_opt_ints(o->reversal_range, 2));
    BL_OPT_SET("feedback_mode", bl_json_string(bl_opt_visibilities[o->feedback_mode]));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_reversal_adaptation, "reversal_adaptation", resolve);
