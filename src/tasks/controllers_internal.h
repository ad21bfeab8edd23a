/* The inside of a controller bundle (bl_controllers), shared by
 * controllers.c, its per-dtype template controllers_kernel.h and the tests
 * that compare the fused path with the unfused loop state by state
 * (spec/tasks.md §10.3: "controller memory/counts/effectors").
 *
 * A bundle holds only what §6 lets a direct controller remember: the probe
 * machine's integer memory m[10] and real counts[2] per world, plus the
 * effectors the fused path produced last. It never holds labels,
 * schedules, draws or stimuli (§6.1: controllers read the receptor vector,
 * and the CartPole oracle the four raw observations, nothing else). */
#ifndef BL_CONTROLLERS_INTERNAL_H
#define BL_CONTROLLERS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/task.h"

/* Memory slots of §6.4. The reference null keeps its held choice in
 * BL_CTL_RANDOM_CHOICE and the tick (CartPole) or round (probes) that
 * choice belongs to in BL_CTL_RANDOM_ROUND, so "the first call of a tick /
 * round" is a comparison with live world state rather than a frame number. */
enum {
    BL_CTL_FIRST_CUE = 0,
    BL_CTL_LAST_CUE = 1,
    BL_CTL_SECOND_CUE = 2,
    BL_CTL_CONTEXT = 3,
    BL_CTL_SWAPPED = 4,
    BL_CTL_FEEDBACK_SEEN = 5,
    BL_CTL_CURRENT_CUE = 6,
    BL_CTL_RANDOM_CHOICE = 7,
    BL_CTL_RANDOM_ROUND = 8,
    BL_CTL_OBSERVED_TICK = 9,
    BL_CTL_MEMORY = 10
};

struct bl_controllers {
    bl_policy policy;
    bl_task_kind kind;
    bl_dtype dtype;
    size_t n;            /* worlds of the cohort the bundle was made for */
    size_t width;        /* their receptor width */
    int32_t *memory;     /* i32 [n][10], initially [0,1,1,1,0,0,1,1,-1,-1];
                          * the one allocation, holding the two below too */
    void *counts;        /* real [n][2], initially 0 */
    void *effectors;     /* real [n][2]: last effectors of the fused path */
};

#endif
