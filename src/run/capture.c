/* Recording channels of a trial (spec/platform.md §4.11, §4.12): probe
 * events (the activity at a probe's three points) and replay frames (the
 * world, effectors, inputs and activity after every tick). */
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

static double value_at(bl_dtype dtype, const void *p, size_t i)
{
    return dtype == BL_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

bl_status bl_run_probe_begin(const slot *s, size_t n, bl_probe_capture *pc, bl_error *err)
{
    const bl_world_init *wi = s->world;
    /* Admission let only the decodable probes through; each has a round 1. */
    BL_ASSERT(wi->rounds >= 1);
    pc->ticks[0] = wi->cue_ends[0];
    pc->ticks[1] = wi->response_start[0];
    pc->ticks[2] = wi->response_end[0];
    pc->label = wi->labels[0];
    pc->n = n;
    pc->features = bl_calloc(3 * n, sizeof *pc->features);
    return pc->features ? BL_OK : nomem(err);
}

/* After a tick's advance: the activity at the cue's end (point 0), at the
 * response's start (point 1), and its mean over the response (point 2). */
void bl_run_probe_tick(bl_probe_capture *pc, int64_t tick, bl_dtype dtype, const void *activity)
{
    const int64_t rs = pc->ticks[1], re = pc->ticks[2];
    for (int k = 0; k < 3; k++)
        pc->counts[k] += tick == pc->ticks[k];
    for (size_t i = 0; i < pc->n; i++) {
        const double a = value_at(dtype, activity, i);
        if (tick == pc->ticks[0])
            pc->features[i] = a;
        if (tick == rs)
            pc->features[pc->n + i] = a;
        if (rs < tick && tick <= re)
            pc->features[2 * pc->n + i] += a / (double)(re - rs);
    }
}

static bl_json *real_array(bl_dtype dtype, const void *v, size_t n)
{
    bl_json *a = bl_json_array();
    for (size_t i = 0; a && i < n; i++)
        if (bl_json_array_append(a, bl_json_real(value_at(dtype, v, i)), NULL) != BL_OK) {
            bl_json_destroy(a);
            return NULL;
        }
    return a;
}

/* The display keys of a replay frame's "world" (§4.12). */
static const char *const display_keys[] = {
    "theta",   "phi",     "direction",    "ball_x",       "ball_y", "paddle_y",
    "vx",      "vy",      "width",        "height",       "paddle_x", "paddle_h",
    "paddle_min_y", "paddle_max_y", "ball_r", "x", "x_dot", "theta_dot", "max_x",
    "pole_length", "done", "round",
};

/* One replay frame after a tick: the post-advance world, the effectors that
 * advance used, the receptor vector encoded for it (before gain,
 * permutation or blinding) and the reservoir's activity (empty for direct
 * controllers). */
bl_status bl_run_replay_tick(bl_json *frames, const bl_worlds *w, int64_t tick,
                             const void *activity, size_t nact, const void *effectors,
                             size_t neff, bl_error *err)
{
    return bl_run_replay_tick_at(frames, w, 0, tick, activity, nact, effectors, neff, err);
}

/* The same for world b of the cohort (its inputs row and its snapshot). */
bl_status bl_run_replay_tick_at(bl_json *frames, const bl_worlds *w, size_t b, int64_t tick,
                                const void *activity, size_t nact, const void *effectors,
                                size_t neff, bl_error *err)
{
    const bl_dtype dt = bl_worlds_dtype(w);
    const size_t width = bl_worlds_inputs_width(w);
    const char *inputs = (const char *)bl_worlds_inputs(w) + b * width * bl_dtype_size(dt);
    bl_snapshot *snap = NULL;
    bl_json *f = bl_json_object(), *world = bl_json_object();
    bl_status st = !f || !world ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = bl_worlds_snapshot(w, b, &snap, err);
    for (size_t k = 0; st == BL_OK && k < sizeof display_keys / sizeof *display_keys; k++) {
        const bl_snapshot_array *a = bl_snapshot_get(snap, display_keys[k]);
        if (!a || a->ndim != 0)
            continue;
        st = bl_json_object_set(world, display_keys[k],
                                a->integer ? bl_json_int((int64_t)a->data[0])
                                           : bl_json_real(a->data[0]),
                                err);
    }
    if (st == BL_OK)
        st = bl_json_object_set(f, "tick", bl_json_int(tick), err);
    if (st == BL_OK)
        st = bl_json_object_set(f, "activity", real_array(dt, activity, nact), err);
    if (st == BL_OK)
        st = bl_json_object_set(f, "effectors", real_array(dt, effectors, neff), err);
    if (st == BL_OK)
        st = bl_json_object_set(f, "inputs", real_array(dt, inputs, width), err);
    if (st == BL_OK) {
        st = bl_json_object_set(f, "world", world, err);
        world = NULL;
    }
    if (st == BL_OK) {
        st = bl_json_array_append(frames, f, err);
        f = NULL;
    }
    bl_snapshot_destroy(snap);
    bl_json_destroy(world);
    bl_json_destroy(f);
    return st;
}
