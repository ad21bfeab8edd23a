/* The execution policy (ExecutionSpec, spec/platform.md §1.2) and memory
 * admission (§4.6). The policy never enters a contract: it decides how a
 * plan runs, never what it computes. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/run.h"

const char *bl_backend_name(bl_backend b)
{
    (void)b;
    return "cpu";
}

const char *bl_recording_name(bl_recording r)
{
    switch (r) {
    case BL_RECORDING_SUMMARY: return "summary";
    case BL_RECORDING_PROBE_EVENTS: return "probe_events";
    case BL_RECORDING_REPLAY: return "replay";
    }
    return "unknown";
}

void bl_execution_default(bl_execution *x)
{
    memset(x, 0, sizeof *x);
    x->backend = BL_BACKEND_CPU;
    x->batch_size = 32;
    x->memory_budget_bytes = 268435456;
    x->reserve_fraction = 0.25;
    x->noise_tile_frames = 64;
    x->recording = BL_RECORDING_SUMMARY;
    x->recording_budget_bytes = 33554432;
    x->cpu_threads = 1;
    x->cache = true;
}

bl_status bl_execution_validate(const bl_execution *x, bl_error *err)
{
    if (x->backend != BL_BACKEND_CPU)
        return bl_fail(err, BL_EVALUE,
                       "only CPU and Metal are implemented; other backends are unqualified");
    if (x->batch_size < 1)
        return bl_fail(err, BL_EVALUE, "batch_size must be an integer >= 1");
    if (x->memory_budget_bytes < 1)
        return bl_fail(err, BL_EVALUE, "memory_budget_bytes must be an integer >= 1");
    if (!(x->reserve_fraction >= 0.0 && x->reserve_fraction < 1.0))
        return bl_fail(err, BL_EVALUE, "reserve_fraction must be within [0, 1)");
    if (x->noise_tile_frames < 1)
        return bl_fail(err, BL_EVALUE, "noise_tile_frames must be an integer >= 1");
    if (x->recording != BL_RECORDING_SUMMARY && x->recording != BL_RECORDING_PROBE_EVENTS &&
        x->recording != BL_RECORDING_REPLAY)
        return bl_fail(err, BL_EVALUE, "unknown recording channel");
    if (x->recording_budget_bytes < 0)
        return bl_fail(err, BL_EVALUE, "recording_budget_bytes must be an integer >= 0");
    if (x->cpu_threads < 1)
        return bl_fail(err, BL_EVALUE, "cpu_threads must be an integer >= 1");
    return BL_OK;
}

int64_t bl_execution_allocation_budget(const bl_execution *x)
{
    /* Double precision, truncated toward zero, as the reference computes it.
     * A budget near INT64_MAX rounds up to 2^63, which int64 cannot hold
     * (converting it would be undefined): that is all of int64. */
    const double budget = (double)x->memory_budget_bytes * (1.0 - x->reserve_fraction);
    return budget >= 0x1p63 ? INT64_MAX : (int64_t)budget;
}

bl_status bl_execution_json(const bl_execution *x, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object();
    if (!o)
        return bl_fail(err, BL_ENOMEM, "out of memory for an execution policy");
    bl_status st = bl_json_object_set(o, "backend", bl_json_string(bl_backend_name(x->backend)),
                                      err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "batch_size", bl_json_int(x->batch_size), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "memory_budget_bytes", bl_json_int(x->memory_budget_bytes),
                                err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "reserve_fraction", bl_json_real(x->reserve_fraction), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "noise_tile_frames", bl_json_int(x->noise_tile_frames), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "recording", bl_json_string(bl_recording_name(x->recording)),
                                err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "recording_budget_bytes",
                                bl_json_int(x->recording_budget_bytes), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "cpu_threads", bl_json_int(x->cpu_threads), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "cache", bl_json_bool(x->cache), err);
    return bl_json_hand_over(st, o, out);
}

bl_status bl_admit_batch(const bl_execution *x, int64_t per_trial_bytes, int64_t recording_bytes,
                         int64_t *capacity, bl_error *err)
{
    *capacity = 0;
    const int64_t budget = bl_execution_allocation_budget(x);
    const int64_t available = budget - recording_bytes;
    if (per_trial_bytes <= 0 || available < per_trial_bytes) {
        /* The message adds the fixed recording cost to what one trajectory
         * needs, as the reference reports it. Saturate rather than wrap. */
        const int64_t need = per_trial_bytes > INT64_MAX - recording_bytes
                                 ? INT64_MAX
                                 : per_trial_bytes + recording_bytes;
        return bl_fail(err, BL_ENOMEM,
                       "one trajectory needs at least %lld managed bytes; allocation budget is "
                       "%lld; increase memory_budget_bytes explicitly",
                       (long long)need, (long long)budget);
    }
    const int64_t fit = available / per_trial_bytes;
    *capacity = fit < x->batch_size ? fit : x->batch_size;
    return BL_OK;
}
