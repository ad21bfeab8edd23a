/* Whole closed-loop trials through the evaluation runner: the project's
 * four-task Falandays benchmark plan (plans/benchmark.toml: Tracking, Pong,
 * Plank CartPole, Delayed Cue) with its reference-null targets left out, so
 * every frame counted is a reservoir frame, raised to 256 trials per target
 * (16 blocks x 16 trials), at N = 64, 256 and 1024, float32 and float64, on
 * 1 and 2 threads. Reports neural frames per second and per core, world
 * ticks per second, and the peak RSS. Rates, never assertions.
 *
 *   bench_run [N ...]     (default 64 256 1024)
 *   BL_BENCH_TRIALS=T     trials per target (a multiple of 16). Default 256,
 *                         except 32 at N > 256, where 256 trials take many
 *                         minutes per row on a small machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"

#define BENCH_NAME "bench_run"
#include "bench_support.h"

/* The benchmark plan with the given count, dtype and trials, reservoir
 * targets only. */
static bl_resolved_plan *variant(const bl_json *doc, int64_t count, const char *dtype,
                                 int64_t trials)
{
    bl_error err = {0};
    bl_json *d = bl_json_copy(doc);
    bl_json *targets = bl_json_array();
    if (!d || !targets)
        die("copy", &err);
    const bl_json *all = bl_json_get(d, "targets");
    for (size_t i = 0; i < bl_json_size(all); i++) {
        const bl_json *t = bl_json_at(all, i);
        const bl_json *c = bl_json_get(t, "controller");
        if (c && strcmp(bl_json_get_string(c, NULL), "reservoir") != 0)
            continue;
        bl_json *copy = bl_json_copy(t);
        if (bl_json_object_set(bl_json_get(copy, "composition"), "count", bl_json_int(count),
                               &err) != BL_OK ||
            bl_json_array_append(targets, copy, &err) != BL_OK)
            die("plan", &err);
    }
    bl_json *eval = bl_json_get(d, "evaluation"), *num = bl_json_get(d, "numerics");
    if (bl_json_object_set(d, "targets", targets, &err) != BL_OK ||
        bl_json_object_set(eval, "blocks", bl_json_int(16), &err) != BL_OK ||
        bl_json_object_set(eval, "trials_per_block", bl_json_int(trials / 16), &err) != BL_OK ||
        bl_json_object_set(num, "dtype", bl_json_string(dtype), &err) != BL_OK)
        die("plan", &err);
    bl_plan *plan = NULL;
    bl_resolved_plan *r = NULL;
    if (bl_plan_from_document(d, &plan, &err) != BL_OK || bl_plan_resolve(plan, &r, &err) != BL_OK)
        die("plan", &err);
    bl_plan_destroy(plan);
    bl_json_destroy(d);
    return r;
}

int main(int argc, char **argv)
{
    bl_error err = {0};
    bl_json *doc = NULL;
    if (bl_toml_read_file(BL_SOURCE_DIR "/plans/benchmark.toml", &doc, &err) != BL_OK)
        die("plans/benchmark.toml", &err);
    const char *env = getenv("BL_BENCH_TRIALS");
    int64_t fixed = env ? atoll(env) : 0;
    if (env && fixed < 16)
        fixed = 16;
    fixed -= fixed % 16;
    int64_t counts[8] = {64, 256, 1024};
    int ncounts = 3;
    if (argc > 1) {
        ncounts = 0;
        for (int i = 1; i < argc && ncounts < 8; i++)
            counts[ncounts++] = atoll(argv[i]);
    }
    static const char *const dtypes[] = {"float32", "float64"};
    printf("bench_run: plans/benchmark.toml, its 4 Falandays reservoir targets\n");
    printf("%6s %8s %8s %8s %12s %16s %16s %14s %10s\n", "N", "dtype", "trials", "threads",
           "seconds",
           "frames/s", "frames/s/core", "ticks/s", "peak MiB");
    for (int i = 0; i < ncounts; i++)
        for (int d = 0; d < 2; d++) {
            const int64_t trials = fixed ? fixed : counts[i] > 256 ? 32 : 256;
            bl_resolved_plan *r = variant(doc, counts[i], dtypes[d], trials);
            for (int64_t threads = 1; threads <= 2; threads++) {
                bl_execution x;
                bl_execution_default(&x);
                x.cpu_threads = threads;
                /* The budget admits whole batches of the largest networks. */
                x.memory_budget_bytes = (int64_t)4 << 30;
                bl_run_result *res = NULL;
                if (bl_run_execute(r, &x, NULL, &res, &err) != BL_OK)
                    die("run", &err);
                const double s = res->seconds_execute;
                printf("%6lld %8s %8lld %8lld %12.3f %16.4g %16.4g %14.4g %10.1f\n",
                       (long long)counts[i], dtypes[d], (long long)trials, (long long)threads, s,
                       (double)res->reservoir_frames / s,
                       (double)res->reservoir_frames / s / (double)threads,
                       (double)res->world_ticks / s,
                       (double)res->peak_rss_bytes / 1048576.0);
                fflush(stdout);
                bl_run_result_destroy(res);
            }
            bl_resolved_plan_destroy(r);
        }
    bl_json_destroy(doc);
    return 0;
}
