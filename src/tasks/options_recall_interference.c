/* Recall Interference's options (spec/tasks.md §1.1, §8.1): a cue to
 * recall across a delay with distractors. */
#include "options_internal.h"

static const bl_opt_field fields[] = {
    BL_OPT_INT_FIELD(cue_ticks, 8), BL_OPT_INT_FIELD(delay, 32),
    BL_OPT_INT_FIELD(response_ticks, 8), BL_OPT_INT_FIELD(distractors, 1),
    BL_OPT_INT_FIELD(distractor_ticks, 4), BL_OPT_MODE_FIELD(cue_mode, bl_opt_cue_modes),
    BL_OPT_MODE_FIELD(distractor_mode, bl_opt_distractor_modes)};

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    int64_t k = o->distractors, d = o->delay, w = o->distractor_ticks;
    if (k && (d < 32 || k * w + k + 1 > d))
        return bl_fail(err, BL_EVALUE,
                       "distractors need delay >= 32 and blank frames between cues");
    return bl_opt_check(given, "distractor_mode", 0, o, err);
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return c + o->delay + r;
}

BL_TASK_FAMILY(bl_family_recall_interference, "recall_interference", NULL, resolve, horizon, NULL,
               .n_inputs = 3);
