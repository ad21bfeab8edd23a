/* Temporal Order's options (spec/tasks.md §1.1, §8.1): two cues across a
 * gap and a terminal signal. */
#include "options_internal.h"

static const char *const keys[] = {"cue_ticks", "gap", "terminal_ticks", "response_ticks",
                                   "input_mode"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->cue_ticks = 8;
    o->gap = 8;
    o->terminal_ticks = 8;
    o->response_ticks = 8;
    o->input_mode = BL_VISIBLE;
    return BL_OK;
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return 2 * c + o->gap + o->terminal_ticks + r;
}

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 4;
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("cue_ticks", bl_json_int(o->cue_ticks));
    BL_OPT_SET("gap", bl_json_int(o->gap));
    BL_OPT_SET("terminal_ticks", bl_json_int(o->terminal_ticks));
    BL_OPT_SET("response_ticks", bl_json_int(o->response_ticks));
    BL_OPT_SET("input_mode", bl_json_string(bl_opt_visibilities[o->input_mode]));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_temporal_order, "temporal_order", NULL);
