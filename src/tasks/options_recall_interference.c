/* Recall Interference's options (spec/tasks.md §1.1, §8.1): a cue to
 * recall across a delay with distractors. */
#include "options_internal.h"

static const char *const keys[] = {"cue_ticks",  "delay",           "response_ticks",
                                   "distractors", "distractor_ticks", "cue_mode",
                                   "distractor_mode"};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    (void)err;
    o->cue_ticks = 8;
    o->delay = 32;
    o->response_ticks = 8;
    o->distractors = 1;
    o->distractor_ticks = 4;
    o->cue_mode = BL_CUE_TRANSIENT;
    o->distractor_mode = BL_DISTRACTOR_RANDOM;
    return BL_OK;
}

static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st;
    const bl_json *v;
    int mode;
    int64_t k = o->distractors, d = o->delay, w = o->distractor_ticks;
    if (k && (d < 32 || k * w + k + 1 > d))
        return bl_fail(err, BL_EVALUE,
                       "distractors need delay >= 32 and blank frames between cues");
    if ((v = bl_opt_given(given, "distractor_mode"))) {
        if ((st = bl_py_mode(v, "distractor_mode", bl_opt_distractor_modes, 4, &mode, err)) !=
            BL_OK)
            return st;
        o->distractor_mode = (bl_distractor_mode)mode;
    }
    return BL_OK;
}

static int64_t horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks;
    return c + o->delay + r;
}

static void define(const bl_task_options *o, bl_task_definition *d)
{
    (void)o;
    d->n_inputs = 3;
}

static bl_status to_json(const bl_task_options *o, bl_json *obj, bl_error *err)
{
    BL_OPT_SET("cue_ticks", bl_json_int(o->cue_ticks));
    BL_OPT_SET("delay", bl_json_int(o->delay));
    BL_OPT_SET("response_ticks", bl_json_int(o->response_ticks));
    BL_OPT_SET("distractors", bl_json_int(o->distractors));
    BL_OPT_SET("distractor_ticks", bl_json_int(o->distractor_ticks));
    BL_OPT_SET("cue_mode", bl_json_string(bl_opt_cue_modes[o->cue_mode]));
    BL_OPT_SET("distractor_mode", bl_json_string(bl_opt_distractor_modes[o->distractor_mode]));
    return BL_OK;
}

BL_TASK_FAMILY(bl_family_recall_interference, "recall_interference", resolve);
