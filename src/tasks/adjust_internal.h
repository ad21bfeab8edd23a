/* Pieces of the calibration signature (spec/tasks.md §9.3) below the public
 * bl_calibration_signature, for the runner's metadata and for tests that
 * must reach inputs the public function cannot produce (a cadence other than
 * the task's, reservoir keys in the task options). */
#ifndef BL_ADJUST_INTERNAL_H
#define BL_ADJUST_INTERNAL_H

#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/status.h"

/* SHA-256 hex of "brainlesslab <version> <compiler id> <compiler version>":
 * this build's stand-in for the reference's hash of its installed runtime. */
bl_status bl_runtime_fingerprint(char hex[65], bl_error *err);
/* {"src/tasks/<file>": "<sha256>", ...} for this build's task sources. */
bl_status bl_world_source_hashes(bl_json **out, bl_error *err);
/* The machine name uname(2) reports ("x86_64", "aarch64"), or "unspecified"
 * (the reference's default) when uname fails. */
void bl_architecture(char out[65]);

/* A signature's task options: a JSON object without reservoir keys (the
 * one check shared by building a signature and reading one back). */
bl_status bl_calibration_check_task_options(const bl_json *opts, bl_error *err);

/* The signature from its parts. task_options is borrowed (copied into the
 * result) and must be a JSON object without reservoir keys. */
bl_status bl_calibration_signature_parts(const char *task, const bl_json *task_options,
                                         int64_t action_cadence, int64_t horizon,
                                         int64_t warmup, bl_dtype dtype, const char *backend,
                                         bl_json **out, bl_error *err);

#endif
