/* Context Integration's options (spec/tasks.md §1.1, §8.1): a context cue,
 * then pulses of evidence whose answer the context decides. */
#include "options_internal.h"

static const char *const keys[] = {"cue_ticks",   "pulse_count",    "evidence_fraction",
                                   "pulse_ticks", "response_ticks", "context_mode",
                                   "congruency"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->cue_ticks = 8;
    o->pulse_count = 32;
    o->evidence_fraction = 0.25;
    o->pulse_ticks = 1;
    o->response_ticks = 8;
    o->context_mode = BL_CUE_TRANSIENT;
    o->congruency = BL_CONGRUENCY_MIXED;
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st;
    const bl_json *v;
    int mode;
    if ((st = bl_opt_pulses(given, o, err)) != BL_OK)
        return st;
    if ((v = bl_opt_given(given, "congruency"))) {
        if ((st = bl_py_mode(v, "congruency", bl_opt_congruencies, 3, &mode, err)) != BL_OK)
            return st;
        o->congruency = (bl_congruency)mode;
    }
    return BL_OK;
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return c + o->pulse_count * o->pulse_ticks + r;
}

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 7;
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("cue_ticks", bl_json_int(o->cue_ticks));
    BL_OPT_SET("pulse_count", bl_json_int(o->pulse_count));
    BL_OPT_SET("evidence_fraction", bl_json_real(o->evidence_fraction));
    BL_OPT_SET("pulse_ticks", bl_json_int(o->pulse_ticks));
    BL_OPT_SET("response_ticks", bl_json_int(o->response_ticks));
    BL_OPT_SET("context_mode", bl_json_string(bl_opt_cue_modes[o->context_mode]));
    BL_OPT_SET("congruency", bl_json_string(bl_opt_congruencies[o->congruency]));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_context_integration, "context_integration", resolve);
