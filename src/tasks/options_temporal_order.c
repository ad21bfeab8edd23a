/* Temporal Order's options (spec/tasks.md §1.1, §8.1): two cues across a
 * gap and a terminal signal. */
#include "options_internal.h"

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(cue_ticks, 8), BL_OPT_INT_FIELD(gap, 8), BL_OPT_INT_FIELD(terminal_ticks, 8),
    BL_OPT_INT_FIELD(response_ticks, 8),
    BL_OPT_MODE_FIELD(input_mode, bl_opt_visibilities)};

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return 2 * c + o->gap + o->terminal_ticks + r;
}

BL_TASK_FAMILY(bl_family_temporal_order, "temporal_order", NULL, NULL, horizon, NULL,
               .n_inputs = 4);
