/* Evidence Accumulation's options (spec/tasks.md §1.1, §8.1): a train of
 * pulses whose majority is the answer. */
#include "options_internal.h"

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(pulse_count, 32), BL_OPT_REAL_FIELD(evidence_fraction, 0.25),
    BL_OPT_INT_FIELD(pulse_ticks, 1), BL_OPT_INT_FIELD(response_ticks, 8),
    BL_OPT_MODE_FIELD(input_mode, bl_opt_visibilities)};

static int64_t horizon(const bl_task_options *o)
{
    int64_t r = o->response_ticks;
    return o->pulse_count * o->pulse_ticks + r;
}

BL_TASK_FAMILY(bl_family_evidence_accumulation, "evidence_accumulation", NULL, bl_opt_pulses,
               horizon, NULL, .n_inputs = 3);
