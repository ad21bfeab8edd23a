/* The fixed workloads of the instruction-count regression gate
 * (scripts/instruction-gate, docs/performance.md "The instruction-count gate").
 *
 * Each workload builds its state from fixed seeds through the public API,
 * steps a few frames of warm-up, then steps a fixed number of frames between
 * CALLGRIND_START_INSTRUMENTATION and CALLGRIND_STOP_INSTRUMENTATION and asks
 * callgrind for a dump named after the workload. Run under
 * `valgrind --tool=callgrind --instr-atstart=no`, each dump therefore counts
 * the instructions of that stepping span alone: construction, warm-up,
 * digests and printing run uninstrumented. Run without valgrind the client
 * requests cost a few instructions and do nothing, so the program is also a
 * plain smoke test of the workloads.
 *
 * Model workloads: Falandays and SORN at N = 128 with default parameters, in
 * float64 and float32, as a batch of 8 slots that share ONE wiring (the same
 * initial-state pointer for every slot, the case lockstep lane kernels step
 * in SIMD lanes) and as a single slot. Inputs differ per slot and frame, so
 * slots of one wiring still follow different trajectories. The world
 * workload runs 8 Tracking worlds under the reference-null controller through
 * the fused control path, as the runner does for controllers without a
 * reservoir.
 *
 * Standard output: one JSON object per workload, one line each, with the
 * work it measured and the SHA-256 of its final state, so a reader (and the
 * gate) can see that a count belongs to the same computation. The digest
 * covers every snapshot array of every slot or world; kernels are bit-exact
 * on every instruction-set path, so it does not change when only speed does.
 *
 *     gate_workloads            run every workload
 *     gate_workloads NAME...    run the named ones
 *     gate_workloads --list     print the names */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define GATE_HAVE_CALLGRIND 1
#endif
#endif
#ifndef GATE_HAVE_CALLGRIND
/* Without the valgrind headers the workloads still build and run (CI's and
 * developers' ordinary builds), they just cannot be measured; the gate
 * script checks that its own build found the header. */
#define CALLGRIND_START_INSTRUMENTATION ((void)0)
#define CALLGRIND_STOP_INSTRUMENTATION ((void)0)
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#define GATE_HAVE_CALLGRIND 0
#endif

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/task.h"

#define BENCH_NAME "gate_workloads"
#include "bench_support.h"

/* N, receptors and effectors as bench_models uses them (the cue tasks'
 * widths); warm-up frames leave the start-up transient out of the span. */
enum { NODES = 128, R = 3, E = 2, WARMUP_FRAMES = 16, MEASURED_FRAMES = 64 };
/* The world workload: worlds, ticks per fused call, measured calls. */
enum { WORLDS = 8, TILE_TICKS = 16, WARMUP_TILES = 1, MEASURED_TILES = 4 };

static void *xcalloc(size_t n, size_t size)
{
    void *p = bl_calloc(n, size);
    if (!p) {
        fprintf(stderr, "gate_workloads: out of memory\n");
        exit(1);
    }
    return p;
}

/* Adds one snapshot to a running digest: every array's name, shape and
 * values (as doubles, which snapshots hold exactly for both dtypes). */
static void digest_snapshot(bl_sha256_ctx *ctx, const bl_snapshot *s)
{
    bl_error err = {0};
    for (size_t k = 0; k < s->count; k++) {
        const bl_snapshot_array *a = &s->arrays[k];
        uint64_t shape[2] = {a->shape[0], a->shape[1]};
        size_t values = a->ndim == 0 ? 1 : a->ndim == 1 ? a->shape[0] : a->shape[0] * a->shape[1];
        if (bl_sha256_update(ctx, a->name, strlen(a->name) + 1, &err) != BL_OK ||
            bl_sha256_update(ctx, shape, sizeof shape, &err) != BL_OK ||
            bl_sha256_update(ctx, a->data, values * sizeof *a->data, &err) != BL_OK)
            die("digest", &err);
    }
}

static void digest_finish(bl_sha256_ctx *ctx, char hex[2 * BL_SHA256_BYTES + 1])
{
    bl_error err = {0};
    uint8_t bytes[BL_SHA256_BYTES];
    if (bl_sha256_finish(ctx, bytes, &err) != BL_OK)
        die("digest", &err);
    bl_hex(bytes, sizeof bytes, hex);
}

static bl_sha256_ctx *digest_start(void)
{
    bl_error err = {0};
    bl_sha256_ctx *ctx;
    if (bl_sha256_create(&ctx, &err) != BL_OK)
        die("digest", &err);
    return ctx;
}

/* A batch of `slots` slots of one wiring, constructed from a fixed seed. */
static bl_model *make_batch(bl_model_kind kind, size_t slots, bl_dtype dtype)
{
    bl_error err = {0};
    bl_gen g;
    const bl_key keys[2] = {BL_KEY_S("instruction-gate"), BL_KEY_S(kind == BL_MODEL_FALANDAYS
                                                                        ? "falandays"
                                                                        : "sorn")};
    if (bl_gen_for(&g, 17, "development", "construction", keys, 2, &err) != BL_OK)
        die("seed", &err);
    const void **inits = xcalloc(slots, sizeof *inits);
    bl_model *m = NULL;
    bl_status st;
    if (kind == BL_MODEL_FALANDAYS) {
        bl_falandays_config c;
        bl_falandays_config_default(&c);
        bl_falandays_init *init;
        if (bl_falandays_construct(&c, NODES, R, E, &g, &init, &err) != BL_OK)
            die("construct", &err);
        for (size_t s = 0; s < slots; s++)
            inits[s] = init;
        st = bl_model_create_falandays((const bl_falandays_init *const *)inits, slots, dtype, &m,
                                       &err);
        bl_falandays_init_destroy(init);
    } else {
        bl_sorn_config c;
        bl_sorn_config_default(&c);
        bl_sorn_init *init;
        if (bl_sorn_construct(&c, NODES, R, E, &g, &init, &err) != BL_OK)
            die("construct", &err);
        for (size_t s = 0; s < slots; s++)
            inits[s] = init;
        st = bl_model_create_sorn((const bl_sorn_init *const *)inits, slots, dtype, &m, &err);
        bl_sorn_init_destroy(init);
    }
    if (st != BL_OK)
        die("create", &err);
    bl_free(inits);
    return m;
}

/* The steps of one model workload: the input tape is drawn before the span
 * so that only bl_model_step is counted. Noise is zero: SORN takes none, and
 * Falandays ignores it with its default drive ("none"). */
static void run_model(const char *name, bl_model_kind kind, bl_dtype dtype, size_t slots)
{
    bl_error err = {0};
    bl_model *m = make_batch(kind, slots, dtype);
    size_t fsize = bl_dtype_size(dtype);
    size_t frames = WARMUP_FRAMES + MEASURED_FRAMES, per_frame = slots * R;
    unsigned char *inputs = xcalloc(frames * per_frame, fsize);
    unsigned char *noise = xcalloc(slots * NODES, fsize);
    int32_t *active = xcalloc(slots, sizeof *active);
    bl_gen g;
    bl_seed seed = bl_seed_from_u64(7);
    bl_gen_init(&g, &seed);
    for (size_t i = 0; i < frames * per_frame; i++) {
        double u = 2.0 * bl_gen_random(&g);
        if (dtype == BL_FLOAT64)
            ((double *)inputs)[i] = u;
        else
            ((float *)inputs)[i] = (float)u;
    }
    for (size_t s = 0; s < slots; s++)
        active[s] = 1;
    bl_matrix noise_m = {dtype, slots, NODES, noise};

    for (size_t f = 0; f < frames; f++) {
        if (f == WARMUP_FRAMES)
            CALLGRIND_START_INSTRUMENTATION;
        bl_matrix in = {dtype, slots, R, inputs + f * per_frame * fsize};
        if (bl_model_step(m, &in, &noise_m, active, slots, &err) != BL_OK)
            die("step", &err);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT(name);

    bl_sha256_ctx *ctx = digest_start();
    double spikes = 0;
    for (size_t s = 0; s < slots; s++) {
        bl_snapshot *snap;
        if (bl_model_snapshot(m, s, &snap, &err) != BL_OK)
            die("snapshot", &err);
        digest_snapshot(ctx, snap);
        const bl_snapshot_array *act = bl_snapshot_get(
            snap, kind == BL_MODEL_FALANDAYS ? "spikes" : "x");
        for (size_t i = 0; act && i < act->shape[0]; i++)
            spikes += act->data[i];
        bl_snapshot_destroy(snap);
    }
    char hex[2 * BL_SHA256_BYTES + 1];
    digest_finish(ctx, hex);
    printf("{\"name\": \"%s\", \"kind\": \"model\", \"model\": \"%s\", \"dtype\": \"%s\", "
           "\"nodes\": %d, \"slots\": %zu, \"shared_wiring\": true, \"warmup_frames\": %d, "
           "\"frames\": %d, \"slot_frames\": %zu, \"final_active_units\": %.0f, "
           "\"digest\": \"%s\"}\n",
           name, kind == BL_MODEL_FALANDAYS ? "falandays" : "sorn", bl_dtype_name(dtype), NODES,
           slots, WARMUP_FRAMES, MEASURED_FRAMES, slots * MEASURED_FRAMES, spikes, hex);
    bl_free(inputs);
    bl_free(noise);
    bl_free(active);
    bl_model_destroy(m);
}

/* WORLDS Tracking worlds under the reference-null controller, float64,
 * through bl_worlds_run_control in tiles of TILE_TICKS ticks (each tick takes
 * the next uniform of its world's control stream, §7.3 of spec/tasks.md). */
static void run_worlds(const char *name)
{
    bl_error err = {0};
    bl_task_options o;
    bl_task_definition def;
    if (bl_task_options_default(BL_TASK_TRACKING, &o, &err) != BL_OK)
        die("options", &err);
    bl_task_define(&o, &def);
    bl_world_init *inits[WORLDS];
    int64_t horizons[WORLDS];
    bl_gen control[WORLDS];
    for (int b = 0; b < WORLDS; b++) {
        bl_gen g;
        const bl_key keys[2] = {BL_KEY_S("instruction-gate"), BL_KEY_I(b)};
        if (bl_gen_for(&g, 17, "development", "world", keys, 2, &err) != BL_OK ||
            bl_gen_for(&control[b], 17, "development", "control", keys, 2, &err) != BL_OK)
            die("seed", &err);
        horizons[b] = def.default_horizon;
        if (bl_world_prepare(&o, &g, horizons[b], &inits[b], &err) != BL_OK)
            die("prepare", &err);
    }
    bl_worlds *w;
    bl_controllers *c;
    if (bl_worlds_create((const bl_world_init *const *)inits, WORLDS, horizons, 0, BL_FLOAT64, &w,
                         &err) != BL_OK ||
        bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &err) != BL_OK)
        die("create", &err);
    for (int b = 0; b < WORLDS; b++)
        bl_world_init_destroy(inits[b]);

    enum { TILES = WARMUP_TILES + MEASURED_TILES };
    double *tiles = xcalloc((size_t)TILES * TILE_TICKS * WORLDS, sizeof *tiles);
    for (size_t t = 0; t < (size_t)TILES * TILE_TICKS; t++)
        for (size_t b = 0; b < WORLDS; b++)
            tiles[t * WORLDS + b] = bl_gen_random(&control[b]);
    int32_t guard[WORLDS], cursors[WORLDS];
    for (int b = 0; b < WORLDS; b++)
        guard[b] = 1, cursors[b] = 0;
    for (int t = 0; t < TILES; t++) {
        if (t == WARMUP_TILES)
            CALLGRIND_START_INSTRUMENTATION;
        bl_matrix tm = {BL_FLOAT64, TILE_TICKS, WORLDS, tiles + (size_t)t * TILE_TICKS * WORLDS};
        if (bl_worlds_run_control(w, c, &tm, TILE_TICKS, guard, cursors, &err) != BL_OK)
            die("run_control", &err);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT(name);

    bl_sha256_ctx *ctx = digest_start();
    long ticks = 0;
    for (size_t b = 0; b < WORLDS; b++) {
        bl_snapshot *snap;
        if (bl_worlds_snapshot(w, b, &snap, &err) != BL_OK)
            die("snapshot", &err);
        digest_snapshot(ctx, snap);
        bl_snapshot_destroy(snap);
        ticks += bl_worlds_ticks(w)[b];
    }
    char hex[2 * BL_SHA256_BYTES + 1];
    digest_finish(ctx, hex);
    printf("{\"name\": \"%s\", \"kind\": \"world\", \"task\": \"%s\", \"controller\": "
           "\"reference_null\", \"dtype\": \"float64\", \"worlds\": %d, \"warmup_ticks\": %d, "
           "\"ticks\": %d, \"world_ticks\": %d, \"final_ticks\": %ld, \"digest\": \"%s\"}\n",
           name, bl_task_name(BL_TASK_TRACKING), WORLDS, WARMUP_TILES * TILE_TICKS,
           MEASURED_TILES * TILE_TICKS, WORLDS * MEASURED_TILES * TILE_TICKS, ticks, hex);
    bl_free(tiles);
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);
    bl_task_options_clear(&o);
}

static const struct workload {
    const char *name;
    int model;  /* -1: the world workload */
    bl_dtype dtype;
    size_t slots;
} workloads[] = {
    {"falandays-float64-n128-b8", BL_MODEL_FALANDAYS, BL_FLOAT64, 8},
    {"falandays-float64-n128-b1", BL_MODEL_FALANDAYS, BL_FLOAT64, 1},
    {"falandays-float32-n128-b8", BL_MODEL_FALANDAYS, BL_FLOAT32, 8},
    {"falandays-float32-n128-b1", BL_MODEL_FALANDAYS, BL_FLOAT32, 1},
    {"sorn-float64-n128-b8", BL_MODEL_SORN, BL_FLOAT64, 8},
    {"sorn-float64-n128-b1", BL_MODEL_SORN, BL_FLOAT64, 1},
    {"sorn-float32-n128-b8", BL_MODEL_SORN, BL_FLOAT32, 8},
    {"sorn-float32-n128-b1", BL_MODEL_SORN, BL_FLOAT32, 1},
    {"tracking-null-float64-w8", -1, BL_FLOAT64, WORLDS},
};
enum { WORKLOADS = sizeof workloads / sizeof workloads[0] };

static void run(const struct workload *w)
{
    if (w->model < 0)
        run_worlds(w->name);
    else
        run_model(w->name, (bl_model_kind)w->model, w->dtype, w->slots);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < WORKLOADS; i++)
            printf("%s\n", workloads[i].name);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--has-callgrind") == 0)
        return GATE_HAVE_CALLGRIND ? 0 : 1;
    for (int a = 1; a < argc; a++) {
        int i = 0;
        while (i < WORKLOADS && strcmp(argv[a], workloads[i].name) != 0)
            i++;
        if (i == WORKLOADS) {
            fprintf(stderr, "gate_workloads: unknown workload '%s' (--list names them)\n",
                    argv[a]);
            return 2;
        }
    }
    for (int i = 0; i < WORKLOADS; i++) {
        int chosen = argc == 1;
        for (int a = 1; a < argc && !chosen; a++)
            chosen = strcmp(argv[a], workloads[i].name) == 0;
        if (chosen)
            run(&workloads[i]);
    }
    return 0;
}
