/* Pong's options (spec/tasks.md §1.1, §8.1): only the sensory gain. */
#include "options_internal.h"

static const bl_opt_field fields[] = {BL_OPT_REAL_FIELD(sensory_gain, 1.0)};

BL_TASK_FAMILY(bl_family_pong, "pong", NULL, bl_opt_sensory_gain, NULL, NULL, .n_inputs = 46,
               .default_horizon = 7200, .min_scored_ticks = 6000, .outcome_key = "hit_rate");
