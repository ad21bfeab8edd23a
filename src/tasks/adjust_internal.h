/* The calibration signature (spec/tasks.md §9.3) from its parts, below the
 * public bl_calibration_signature: for tests that must reach inputs the
 * public function cannot produce (a cadence other than the task's,
 * reservoir keys in the task options). Internal to src/tasks and its tests;
 * the parts other modules write into their metadata are public in task.h. */
#ifndef BL_ADJUST_INTERNAL_H
#define BL_ADJUST_INTERNAL_H

#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/status.h"

/* The signature from its parts. task_options is borrowed (copied into the
 * result) and must be a JSON object without reservoir keys. */
bl_status bl_calibration_signature_parts(const char *task, const bl_json *task_options,
                                         int64_t action_cadence, int64_t horizon,
                                         int64_t warmup, bl_dtype dtype, const char *backend,
                                         bl_json **out, bl_error *err);

#endif
