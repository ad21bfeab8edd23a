/* Delayed XOR's options (spec/tasks.md §1.1, §8.1): two cues across a gap. */
#include "options_internal.h"

static const char *const keys[] = {"cue_ticks", "gap", "response_ticks", "cue_mode"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->cue_ticks = 8;
    o->gap = 32;
    o->response_ticks = 8;
    o->cue_mode = BL_CUE_TRANSIENT;
    return BL_OK;
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return 2 * c + o->gap + r;
}

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 5;
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("cue_ticks", bl_json_int(o->cue_ticks));
    BL_OPT_SET("gap", bl_json_int(o->gap));
    BL_OPT_SET("response_ticks", bl_json_int(o->response_ticks));
    BL_OPT_SET("cue_mode", bl_json_string(bl_opt_cue_modes[o->cue_mode]));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_delayed_xor, "delayed_xor", NULL);
