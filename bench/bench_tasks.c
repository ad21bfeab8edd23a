/* World ticks per second of every task family under the reference-null
 * controller, one thread, float64: 64 worlds per family prepared from the
 * calibration seed bank, run to the end through the fused control path in
 * tiles of 64 frames, as the runner does for controllers without a
 * reservoir. Rates, never assertions. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/task.h"

enum { WORLDS = 64, TILE_FRAMES = 64, ROOT = 91337 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const bl_error *err)
{
    fprintf(stderr, "bench_tasks: %s: %s\n", what, err->msg);
    exit(1);
}

static void gen_for(const char *stream, const char *key, const char *task, int64_t block,
                    bl_gen *g)
{
    bl_error err = {0};
    const bl_key keys[4] = {BL_KEY_S(key), BL_KEY_S(task), BL_KEY_I(block), BL_KEY_I(0)};
    if (bl_gen_for(g, ROOT, "calibration", stream, keys, 4, &err) != BL_OK)
        die("seed", &err);
}

/* One pass over WORLDS worlds; adds the ticks, frames and seconds it took. */
static void run_family(bl_task_kind kind, double *ticks, double *frames, double *seconds)
{
    bl_error err = {0};
    const char *task = bl_task_name(kind);
    bl_task_options o;
    bl_task_definition def;
    if (bl_task_options_default(kind, &o, &err) != BL_OK)
        die("options", &err);
    bl_task_define(&o, &def);

    bl_world_init *inits[WORLDS];
    int64_t horizons[WORLDS];
    bl_gen control[WORLDS];
    size_t max_rounds = 1;
    for (int64_t b = 0; b < WORLDS; b++) {
        bl_gen g;
        gen_for("world", "paired-worlds", task, b, &g);
        horizons[b] = def.default_horizon;
        if (bl_world_prepare(&o, &g, horizons[b], &inits[b], &err) != BL_OK)
            die("prepare", &err);
        if (inits[b]->rounds > max_rounds)
            max_rounds = inits[b]->rounds;
        gen_for("control", "paired-mechanism", task, b, &control[b]);
    }
    double t0 = now();
    bl_worlds *w;
    bl_controllers *c;
    if (bl_worlds_create((const bl_world_init *const *)inits, WORLDS, horizons, 0, BL_FLOAT64, &w,
                         &err) != BL_OK ||
        bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &err) != BL_OK)
        die("create", &err);
    for (int b = 0; b < WORLDS; b++)
        bl_world_init_destroy(inits[b]);

    /* §7.3: physical worlds take the next uniform of their control stream
     * every tick; probes take one vector of `rounds` uniforms up front. */
    int32_t tile_ticks = TILE_FRAMES / def.neural_frames;
    size_t rows = def.probe ? max_rounds : (size_t)tile_ticks;
    double *tile = bl_calloc(rows * WORLDS, sizeof *tile);
    if (!tile)
        die("allocation", &err);
    if (def.probe)
        for (size_t b = 0; b < WORLDS; b++)
            for (size_t r = 0; r < rows; r++)
                tile[r * WORLDS + b] = bl_gen_random(&control[b]);
    int32_t guard[WORLDS], cursors[WORLDS];
    for (int b = 0; b < WORLDS; b++)
        guard[b] = 1, cursors[b] = 0;
    for (int64_t start = 0; start < def.default_horizon; start += tile_ticks) {
        if (!def.probe)
            for (size_t r = 0; r < rows; r++)
                for (size_t b = 0; b < WORLDS; b++)
                    tile[r * WORLDS + b] = bl_gen_random(&control[b]);
        bl_matrix tm = {BL_FLOAT64, rows, WORLDS, tile};
        if (bl_worlds_run_control(w, c, &tm, tile_ticks, guard, cursors, &err) != BL_OK)
            die("run_control", &err);
        int any = 0;
        for (int b = 0; b < WORLDS; b++)
            any |= guard[b];
        if (!any)
            break;
    }
    *seconds += now() - t0;
    for (int b = 0; b < WORLDS; b++) {
        *ticks += bl_worlds_ticks(w)[b];
        *frames += cursors[b];
    }
    bl_free(tile);
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);
    bl_task_options_clear(&o);
}

int main(void)
{
    printf("bench_tasks (reference_null, %d worlds per family, float64, single thread)\n",
           WORLDS);
    printf("%-22s %12s %14s %14s\n", "task", "ticks run", "ticks/s", "frames/s");
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        /* Short families repeat until the measured time is meaningful. */
        double ticks = 0, frames = 0, seconds = 0;
        do
            run_family((bl_task_kind)k, &ticks, &frames, &seconds);
        while (seconds < 0.3);
        printf("%-22s %12.0f %14.4g %14.4g\n", bl_task_name((bl_task_kind)k), ticks,
               ticks / seconds, frames / seconds);
    }
    return 0;
}
