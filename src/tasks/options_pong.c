/* Pong's options (spec/tasks.md §1.1, §8.1): only the sensory gain. */
#include "options_internal.h"

static const char *const keys[] = {"sensory_gain"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->sensory_gain = 1.0;
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    return bl_opt_sensory_gain(given, o, err);
}

static int64_t horizon(const bl_task_options *o)
{
    (void)o;
    return 7200;
}

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 46;
    d->min_scored_ticks = 6000;
    d->outcome_key = "hit_rate";
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("sensory_gain", bl_json_real(o->sensory_gain));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_pong, "pong", resolve);
