/* Evidence Accumulation's options (spec/tasks.md §1.1, §8.1): a train of
 * pulses whose majority is the answer. */
#include "options_internal.h"

static const char *const keys[] = {"pulse_count", "evidence_fraction", "pulse_ticks",
                                   "response_ticks", "input_mode"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->pulse_count = 32;
    o->evidence_fraction = 0.25;
    o->pulse_ticks = 1;
    o->response_ticks = 8;
    o->input_mode = BL_VISIBLE;
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    return bl_opt_pulses(given, o, err);
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t r = o->response_ticks;
    return o->pulse_count * o->pulse_ticks + r;
}

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 3;
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("pulse_count", bl_json_int(o->pulse_count));
    BL_OPT_SET("evidence_fraction", bl_json_real(o->evidence_fraction));
    BL_OPT_SET("pulse_ticks", bl_json_int(o->pulse_ticks));
    BL_OPT_SET("response_ticks", bl_json_int(o->response_ticks));
    BL_OPT_SET("input_mode", bl_json_string(bl_opt_visibilities[o->input_mode]));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_evidence_accumulation, "evidence_accumulation", resolve);
