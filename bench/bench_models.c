/* Neural frames per second of both model families, one thread: N = 64, 256,
 * 1024 nodes (and 2048, 4096 for Falandays but in `quick`), B = 1, 8, 128
 * slots, float64 and float32, with the mean activity that the cost of a
 * frame depends on, the model's heap bytes per slot and, for Falandays, the
 * bytes per slot the model reports holding (bl_falandays_bytes) and their
 * ratio to the compressed synapses plus the node state, nnz·(value + 4
 * index bytes) + N·(6 values + a 4-byte flag) per slot (the target is
 * <= 1.5 for shared wirings). Slots are
 * constructed from seeds with default parameters (Falandays link_p 0.1,
 * SORN p_ee 10/166) and driven by uniform inputs on 3 receptors, as the cue
 * tasks do. Wiring "own": each slot from its own construction seed; "shared"
 * (both models): every slot of the batch from one, as the runner batches the
 * trials of one wiring, which the lockstep lanes step together. Rates are
 * taken after WARMUP frames (or WARMUP_S seconds, whichever ends first), in
 * the steady state, and the activity over the first timed frames; the lane
 * instruction set is BL_ISA's, else the best the CPU has. Rates, never
 * assertions. `bench_models quick` limits the table to N, B <= 256, 8. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"
#include "models/falandays_internal.h"

#define BENCH_NAME "bench_models"
#include "bench_support.h"

enum { R = 3, E = 2, ACTIVITY_FRAMES = 32, WARMUP = 750 };
#define WARMUP_S 2.0

/* Bytes the allocator hands out now (0 where that is unknown). */
static double heap_bytes(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 mi = mallinfo2();
    return (double)mi.uordblks + (double)mi.hblkhd;
#else
    return 0.0;
#endif
}

/* A batch of b slots of `kind`, each wired from its own construction seed,
 * or (shared) all from the first; *bytes is the heap the batch holds, *nnz
 * the mean number of recurrent synapses per slot (Falandays). */
static bl_model *make_batch(bl_model_kind kind, size_t n, size_t b, bl_dtype dtype, bool shared,
                            double *bytes, double *nnz)
{
    bl_error err = {0};
    bl_model *m = NULL;
    void **inits = bl_calloc(b, sizeof *inits);
    if (!inits)
        die("allocation", &err);
    bl_falandays_config fcfg;
    bl_sorn_config scfg;
    bl_falandays_config_default(&fcfg);
    bl_sorn_config_default(&scfg);
    for (size_t s = 0; s < (shared ? 1 : b); s++) {
        bl_gen g;
        bl_key keys[2] = {BL_KEY_S("bench"), BL_KEY_I((int64_t)s)};
        bl_status st = bl_gen_for(&g, 1, "development", "construction", keys, 2, &err);
        if (st == BL_OK && kind == BL_MODEL_FALANDAYS)
            st = bl_falandays_construct(&fcfg, n, R, E, &g, (bl_falandays_init **)&inits[s], &err);
        else if (st == BL_OK)
            st = bl_sorn_construct(&scfg, n, R, E, &g, (bl_sorn_init **)&inits[s], &err);
        if (st != BL_OK)
            die("construct", &err);
        if (kind == BL_MODEL_FALANDAYS)
            for (size_t k = 0; k < n * n; k++)
                *nnz += ((bl_falandays_init *)inits[s])->recurrent_mask[k] != 0.0;
    }
    *nnz /= (double)(shared ? 1 : b);
    for (size_t s = 1; shared && s < b; s++)
        inits[s] = inits[0];
    const double before = heap_bytes();
    bl_status st = kind == BL_MODEL_FALANDAYS
                       ? bl_model_create_falandays((const bl_falandays_init *const *)inits, b,
                                                   dtype, &m, &err)
                       : bl_model_create_sorn((const bl_sorn_init *const *)inits, b, dtype, &m,
                                              &err);
    if (st != BL_OK)
        die("create", &err);
    *bytes = heap_bytes() - before;
    for (size_t s = 0; s < (shared ? 1 : b); s++) {
        if (kind == BL_MODEL_FALANDAYS)
            bl_falandays_init_destroy(inits[s]);
        else
            bl_sorn_init_destroy(inits[s]);
    }
    bl_free(inits);
    return m;
}

/* One cell of the table: slot-frames/s, node-frames/s and the activity. */
static void run_cell(bl_model_kind kind, size_t n, size_t b, bl_dtype dtype, bool shared,
                     long fixed)
{
    bl_error err = {0};
    double bytes = 0, nnz = 0;
    bl_model *m = make_batch(kind, n, b, dtype, shared, &bytes, &nnz);
    size_t fsize = dtype == BL_FLOAT64 ? sizeof(double) : sizeof(float);
    double model = 0, ratio = 0;
    if (kind == BL_MODEL_FALANDAYS) {
        model = (double)bl_falandays_bytes(m) / (double)b;
        ratio = model / (nnz * (double)(fsize + 4) + (double)n * (double)(6 * fsize + 4));
    }
    enum { TAPE = 64 }; /* distinct input frames, cycled */
    unsigned char *inputs = bl_calloc(TAPE * b * R, fsize);
    unsigned char *noise = bl_calloc(b * n, fsize);
    int32_t *active = bl_malloc(b * sizeof *active);
    if (!inputs || !noise || !active)
        die("allocation", &err);
    bl_gen g;
    bl_seed seed = bl_seed_from_u64(7);
    bl_gen_init(&g, &seed);
    for (size_t i = 0; i < TAPE * b * R; i++) {
        double u = 2.0 * bl_gen_random(&g);
        if (dtype == BL_FLOAT64)
            ((double *)inputs)[i] = u;
        else
            ((float *)inputs)[i] = (float)u;
    }
    for (size_t s = 0; s < b; s++)
        active[s] = 1;
    bl_matrix noise_m = {dtype, b, n, noise};

    long frames = 0;
    for (const double w0 = bench_seconds(CLOCK_MONOTONIC); frames < (fixed ? fixed : WARMUP) && (fixed || bench_seconds(CLOCK_MONOTONIC) - w0 < WARMUP_S);
         frames++) {
        bl_matrix in = {dtype, b, R, inputs + (size_t)(frames % TAPE) * b * R * fsize};
        if (bl_model_step(m, &in, &noise_m, active, b, &err) != BL_OK)
            die("step", &err);
    }
    const long warm = frames;
    double spikes = 0, t0 = bench_seconds(CLOCK_MONOTONIC), dt = 0;
    while (!fixed || frames - warm < ACTIVITY_FRAMES) {
        bl_matrix in = {dtype, b, R, inputs + (size_t)(frames % TAPE) * b * R * fsize};
        if (bl_model_step(m, &in, &noise_m, active, b, &err) != BL_OK)
            die("step", &err);
        /* Activity over a fixed prefix of frames, so that it describes the
         * same trajectory whatever the speed of the machine. */
        if (frames - warm < ACTIVITY_FRAMES) {
            const void *act = bl_model_activity_data(m);
            for (size_t i = 0; i < b * n; i++)
                spikes += dtype == BL_FLOAT64 ? ((const double *)act)[i] : ((const float *)act)[i];
        }
        frames++;
        dt = bench_seconds(CLOCK_MONOTONIC) - t0;
        if (!fixed && dt >= 0.4 && frames - warm >= ACTIVITY_FRAMES)
            break;
    }

    const double timed = (double)(frames - warm);
    printf("%-9s %6zu %5zu %-8s %-6s %14.4g %16.4g %9.4f %14.4g %14.4g %6.3f %6ld\n",
           kind == BL_MODEL_FALANDAYS ? "falandays" : "sorn", n, b,
           dtype == BL_FLOAT64 ? "float64" : "float32", shared ? "shared" : "own",
           timed * (double)b / dt, timed * (double)b * (double)n / dt,
           spikes / ((double)ACTIVITY_FRAMES * (double)b * (double)n), bytes / (double)b, model,
           ratio, warm);
    bl_free(inputs);
    bl_free(noise);
    bl_free(active);
    bl_model_destroy(m);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "one") == 0) {
        /* `bench_models one N B float32|float64 own|shared [sorn]`: one
         * cell (Falandays unless `sorn`), a fixed WARMUP + ACTIVITY_FRAMES
         * frames (for instruction counts under callgrind; its rate means
         * nothing there). */
        const bool sorn = argc == 7 && strcmp(argv[6], "sorn") == 0;
        run_cell(sorn ? BL_MODEL_SORN : BL_MODEL_FALANDAYS, (size_t)strtoul(argv[2], NULL, 10),
                 (size_t)strtoul(argv[3], NULL, 10),
                 strcmp(argv[4], "float64") == 0 ? BL_FLOAT64 : BL_FLOAT32,
                 strcmp(argv[5], "shared") == 0, WARMUP);
        return 0;
    }
    const size_t ns[] = {64, 256, 1024, 2048, 4096}, bs[] = {1, 8, 128};
    const char *isa = getenv("BL_ISA");
#if defined(__x86_64__) || defined(__i386__)
    const char *best = __builtin_cpu_supports("avx2") ? "avx2" : "sse2";
#else
    const char *best = "sse2";
#endif
    printf("bench_models (single thread; lanes %s)\n", isa && *isa ? isa : best);
    printf("%-9s %6s %5s %-8s %-6s %14s %16s %9s %14s %14s %6s %6s\n", "model", "N", "B", "dtype",
           "wiring", "slot-frames/s", "node-frames/s", "activity", "bytes/slot", "model B/slot",
           "ratio", "warmup");
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 3; j++)
                for (int d = 0; d < 2; d++)
                    for (int sh = 0; sh < 2; sh++) {
                        const bool fal = k == 0, shared = sh == 1;
                        if (quick && (ns[i] > 256 || bs[j] > 8))
                            continue;
                        /* SORN up to N = 1024; past N = 1024 only up to the
                         * memory of N = 1024, B = 128. */
                        if ((!fal && ns[i] > 1024) || (shared && bs[j] == 1) ||
                            bs[j] * ns[i] * ns[i] > 128u * 1024u * 1024u)
                            continue;
                        run_cell(fal ? BL_MODEL_FALANDAYS : BL_MODEL_SORN, ns[i], bs[j],
                                 d == 0 ? BL_FLOAT64 : BL_FLOAT32, shared, 0);
                    }
    return 0;
}
