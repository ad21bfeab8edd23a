/* Context Integration's options (spec/tasks.md §1.1, §8.1): a context cue,
 * then pulses of evidence whose answer the context decides. */
#include "options_internal.h"

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(cue_ticks, 8),
    BL_OPT_INT_FIELD(pulse_count, 32),
    BL_OPT_REAL_FIELD(evidence_fraction, 0.25),
    BL_OPT_INT_FIELD(pulse_ticks, 1),
    BL_OPT_INT_FIELD(response_ticks, 8),
    BL_OPT_MODE_FIELD(context_mode, BL_CUE_TRANSIENT, bl_opt_cue_modes),
    BL_OPT_MODE_FIELD(congruency, BL_CONGRUENCY_MIXED, bl_opt_congruencies),
};

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

BL_TASK_FAMILY(bl_family_context_integration, "context_integration", NULL, resolve, horizon, NULL,
               .n_inputs = 7);
