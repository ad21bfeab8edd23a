/* Context Integration's options (spec/tasks.md §1.1, §8.1): a context cue,
 * then pulses of evidence whose answer the context decides. */
#include "options_internal.h"

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(cue_ticks, 8), BL_OPT_INT_FIELD(pulse_count, 32),
    BL_OPT_REAL_FIELD(evidence_fraction, 0.25), BL_OPT_INT_FIELD(pulse_ticks, 1),
    BL_OPT_INT_FIELD(response_ticks, 8), BL_OPT_MODE_FIELD(context_mode, bl_opt_cue_modes),
    BL_OPT_MODE_FIELD(congruency, bl_opt_congruencies)};

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st = bl_opt_pulses(given, o, err);
    return st != BL_OK ? st : bl_opt_check(given, "congruency", 0, o, err);
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return c + o->pulse_count * o->pulse_ticks + r;
}

BL_TASK_FAMILY(bl_family_context_integration, "context_integration", NULL, resolve, horizon, NULL,
               .n_inputs = 7);
