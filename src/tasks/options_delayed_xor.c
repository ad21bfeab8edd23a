/* Delayed XOR's options (spec/tasks.md §1.1, §8.1): two cues across a gap. */
#include "options_internal.h"

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(cue_ticks, 8), BL_OPT_INT_FIELD(gap, 32), BL_OPT_INT_FIELD(response_ticks, 8),
    BL_OPT_MODE_FIELD(cue_mode, bl_opt_cue_modes)};

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return 2 * c + o->gap + r;
}

BL_TASK_FAMILY(bl_family_delayed_xor, "delayed_xor", NULL, NULL, horizon, NULL, .n_inputs = 5);
