/* Shared helpers of the task and world test executables (test_worlds.c,
 * test_world_prepare.c, test_controllers.c, test_calibration_known.c,
 * test_rng.c): the seed streams of worlds and controls, prepared worlds,
 * the calibration bank's known answers of spec/tasks.md §7.4, and the tests'
 * own arbitrary numbers. Every helper fails the running cmocka test rather
 * than return an error. */
#ifndef BL_TEST_TASK_SUPPORT_H
#define BL_TEST_TASK_SUPPORT_H

#include <stdint.h>

#include "brainlesslab/rng.h"
#include "brainlesslab/task.h"

/* splitmix64, advancing *state: the tests' own source of arbitrary seeds,
 * options and scripts, independent of the program's generators. */
uint64_t bl_test_splitmix64(uint64_t *state);

/* The world stream of the paired-worlds key (task, block, trial) in
 * `partition` of `root` (spec/tasks.md §7.1). */
void bl_test_world_gen(bl_gen *g, int64_t root, const char *partition, const char *task,
                       int64_t block, int64_t trial);

/* The calibration seed bank (root 91337, partition "calibration", trial 0,
 * §7.4): stream "world" (key "paired-worlds") or "control" (key
 * "paired-mechanism") of `task`'s `block`; the seed's hex into `hex` unless
 * it is NULL. */
enum { BL_TEST_CALIBRATION_ROOT = 91337 };
void bl_test_calibration_gen(bl_gen *g, const char *stream, const char *task, int64_t block,
                             char *hex);

/* The default options of `kind` into *o (clear them) and their definition
 * into *d. */
void bl_test_task_defaults(bl_task_kind kind, bl_task_options *o, bl_task_definition *d);

/* bl_world_prepare that must succeed. */
bl_world_init *bl_test_prepare(const bl_task_options *o, bl_gen *g, int64_t horizon);

/* §7.4's block 0 of the three physical tasks: the world and control seeds
 * (hex), the initial state prepared from the world stream with the default
 * options, and the first three uniforms of the control stream. */
typedef struct bl_test_block0 {
    const char *task, *world, *control;
    double physical[8];
    double u[3];
} bl_test_block0;
extern const bl_test_block0 bl_test_calibration_block0[3];

#endif
