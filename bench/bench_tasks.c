/* World ticks per second of every task family under the reference-null
 * controller (and the CartPole oracle, whose episodes run their full 15000
 * ticks), one thread, float64, trial by trial as the runner's direct path
 * runs them: per trial the world and control seeds (seed_for), the world's
 * preparation, a one-world cohort and its controllers ("setup"), then the
 * trial's ticks through the fused control path with the control stream's
 * uniforms drawn tile by tile ("run"). Reports run-only ticks/s, ticks/s
 * with setup, and setup microseconds per trial. Rates, never assertions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/task.h"

#define BENCH_NAME "bench_tasks"
#include "bench_support.h"

enum { TRIALS = 64, ROOT = 91337 };

static void gen_for(const char *stream, const char *key, const char *task, int64_t block,
                    bl_gen *g)
{
    bl_error err = {0};
    const bl_key keys[4] = {BL_KEY_S(key), BL_KEY_S(task), BL_KEY_I(block), BL_KEY_I(0)};
    if (bl_gen_for(g, ROOT, "calibration", stream, keys, 4, &err) != BL_OK)
        die("seed", &err);
}

typedef struct totals {
    double ticks, frames, setup_s, run_s, trials;
} totals;

/* One trial's cohort between its setup and its run. */
typedef struct trial {
    bl_worlds *w;
    bl_controllers *c;
    bl_gen control;
    size_t rounds;
} trial;

/* Setup of trial `block` of the family: seeds, preparation, cohort and
 * controllers. */
static void setup_trial(const bl_task_options *o, const bl_task_definition *def, bl_policy policy,
                        int64_t block, trial *tr)
{
    bl_error err = {0};
    const char *task = bl_task_name(def->kind);
    bl_gen world;
    gen_for("world", "paired-worlds", task, block, &world);
    if (policy == BL_POLICY_REFERENCE_NULL)
        gen_for("control", "paired-mechanism", task, block, &tr->control);
    bl_world_init *init;
    int64_t horizon = def->default_horizon;
    if (bl_world_prepare_lazy(o, &world, horizon, &init, &err) != BL_OK)
        die("prepare", &err);
    if (bl_worlds_create((const bl_world_init *const *)&init, 1, &horizon, 0, BL_FLOAT64, &tr->w,
                         &err) != BL_OK ||
        bl_controllers_create(policy, tr->w, &tr->c, &err) != BL_OK)
        die("create", &err);
    tr->rounds = init->rounds ? init->rounds : 1;
    bl_world_init_destroy(init);
}

/* The trial's ticks, tile by tile: §7.3, physical worlds take the next
 * uniform of their control stream every tick, probes one vector of
 * `rounds` uniforms up front. Tiles start at 32 ticks and double up to
 * 1024, as the runner's direct path does. */
static void run_trial(const bl_task_definition *def, bl_policy policy, trial *tr, double *tile,
                      totals *t)
{
    bl_error err = {0};
    const bool null = policy == BL_POLICY_REFERENCE_NULL;
    const int64_t horizon = def->default_horizon;
    int32_t tile_ticks = 32;
    if (null && def->probe)
        bl_gen_random_fill(&tr->control, tile, tr->rounds);
    int32_t guard = 1, cursor = 0;
    for (int64_t start = 0; start < horizon && guard; start += tile_ticks) {
        if (start > 0 && tile_ticks < 1024)
            tile_ticks *= 2;
        if (tile_ticks > horizon - start)
            tile_ticks = (int32_t)(horizon - start);
        const size_t rows = def->probe ? tr->rounds : (size_t)tile_ticks;
        if (null && !def->probe)
            bl_gen_random_fill(&tr->control, tile, rows);
        bl_matrix tm = {BL_FLOAT64, rows, 1, tile};
        if (bl_worlds_run_control(tr->w, tr->c, null ? &tm : NULL, tile_ticks, &guard, &cursor,
                                  &err) != BL_OK)
            die("run_control", &err);
    }
    t->ticks += bl_worlds_ticks(tr->w)[0];
    t->frames += cursor;
}

/* TRIALS trials: all set up, all run, all torn down, each phase timed
 * as a whole (a clock read per trial would weigh on 22-tick episodes), in
 * CPU time of this thread: the machine is shared, and wall time there
 * measures the neighbours too. */
static void pass(const bl_task_options *o, const bl_task_definition *def, bl_policy policy,
                 trial *trials, double *tile, totals *t)
{
    double t0 = bench_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t b = 0; b < TRIALS; b++)
        setup_trial(o, def, policy, b, &trials[b]);
    double t1 = bench_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t b = 0; b < TRIALS; b++)
        run_trial(def, policy, &trials[b], tile, t);
    double t2 = bench_seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int64_t b = 0; b < TRIALS; b++) {
        bl_controllers_destroy(trials[b].c);
        bl_worlds_destroy(trials[b].w);
    }
    double t3 = bench_seconds(CLOCK_THREAD_CPUTIME_ID);
    t->setup_s += (t1 - t0) + (t3 - t2);
    t->run_s += t2 - t1;
    t->trials += TRIALS;
}

static void bench(bl_task_kind kind, bl_policy policy, double *tile)
{
    bl_error err = {0};
    bl_task_options o;
    bl_task_definition def;
    if (bl_task_options_default(kind, &o, &err) != BL_OK)
        die("options", &err);
    bl_task_define(&o, &def);
    totals t = {0};
    trial trials[TRIALS];
    /* Short families repeat until the measured time is meaningful. */
    do
        pass(&o, &def, policy, trials, tile, &t);
    while (t.setup_s + t.run_s < 0.3);
    char name[64];
    snprintf(name, sizeof name, "%s%s", bl_task_name(kind),
             policy == BL_POLICY_ORACLE ? " (oracle)" : "");
    printf("%-30s %11.0f %11.4g %11.4g %11.4g %9.2f\n", name, t.ticks, t.ticks / t.run_s,
           t.ticks / (t.run_s + t.setup_s), t.frames / t.run_s, 1e6 * t.setup_s / t.trials);
    bl_task_options_clear(&o);
}

/* An optional argument names the one family to run. */
int main(int argc, char **argv)
{
    printf("bench_tasks (reference_null unless named, one world per trial as the runner runs "
           "them, float64, single thread, CPU time)\n");
    printf("%-30s %11s %11s %11s %11s %9s\n", "task", "ticks run", "ticks/s", "+setup",
           "frames/s", "setup us");
    /* Probe tables have one row per round; the default reversal has 96. */
    double *tile = bl_calloc(4096, sizeof *tile);
    if (!tile)
        return 1;
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        if (argc > 1 && strcmp(argv[1], bl_task_name((bl_task_kind)k)) != 0)
            continue;
        bench((bl_task_kind)k, BL_POLICY_REFERENCE_NULL, tile);
        if (k == BL_TASK_CARTPOLE_PLANK_EASY)
            bench((bl_task_kind)k, BL_POLICY_ORACLE, tile);
    }
    bl_free(tile);
    return 0;
}
