/* Neural frames per second of both model families, one thread: N = 64, 256,
 * 1024 nodes, B = 1, 8, 128 slots, float64 and float32, with the mean
 * activity that the cost of a frame depends on. Slots are constructed from
 * seeds with default parameters (Falandays link_p 0.1, SORN p_ee 10/166) and
 * driven by uniform inputs on 3 receptors, as the cue tasks do. Rates, never
 * assertions. `bench_models quick` limits the table to N, B <= 256, 8. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"

enum { R = 3, E = 2, ACTIVITY_FRAMES = 32 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const bl_error *err)
{
    fprintf(stderr, "bench_models: %s: %s\n", what, err->msg);
    exit(1);
}

/* A batch of b slots of `kind`, each wired from its own construction seed. */
static bl_model *make_batch(bl_model_kind kind, size_t n, size_t b, bl_dtype dtype)
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
    for (size_t s = 0; s < b; s++) {
        bl_gen g;
        bl_key keys[2] = {BL_KEY_S("bench"), BL_KEY_I((int64_t)s)};
        bl_status st = bl_gen_for(&g, 1, "development", "construction", keys, 2, &err);
        if (st == BL_OK && kind == BL_MODEL_FALANDAYS)
            st = bl_falandays_construct(&fcfg, n, R, E, &g, (bl_falandays_init **)&inits[s], &err);
        else if (st == BL_OK)
            st = bl_sorn_construct(&scfg, n, R, E, &g, (bl_sorn_init **)&inits[s], &err);
        if (st != BL_OK)
            die("construct", &err);
    }
    bl_status st = kind == BL_MODEL_FALANDAYS
                       ? bl_model_create_falandays((const bl_falandays_init *const *)inits, b,
                                                   dtype, &m, &err)
                       : bl_model_create_sorn((const bl_sorn_init *const *)inits, b, dtype, &m,
                                              &err);
    if (st != BL_OK)
        die("create", &err);
    for (size_t s = 0; s < b; s++) {
        if (kind == BL_MODEL_FALANDAYS)
            bl_falandays_init_destroy(inits[s]);
        else
            bl_sorn_init_destroy(inits[s]);
    }
    bl_free(inits);
    return m;
}

/* One cell of the table: slot-frames/s, node-frames/s and the activity. */
static void run_cell(bl_model_kind kind, size_t n, size_t b, bl_dtype dtype)
{
    bl_error err = {0};
    bl_model *m = make_batch(kind, n, b, dtype);
    size_t fsize = dtype == BL_FLOAT64 ? sizeof(double) : sizeof(float);
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

    double spikes = 0, t0 = now(), dt;
    long frames = 0;
    do {
        bl_matrix in = {dtype, b, R, inputs + (size_t)(frames % TAPE) * b * R * fsize};
        if (bl_model_step(m, &in, &noise_m, active, b, &err) != BL_OK)
            die("step", &err);
        /* Activity over a fixed prefix of frames, so that it describes the
         * same trajectory whatever the speed of the machine. */
        if (frames < ACTIVITY_FRAMES) {
            const void *act = bl_model_activity_data(m);
            for (size_t i = 0; i < b * n; i++)
                spikes += dtype == BL_FLOAT64 ? ((const double *)act)[i] : ((const float *)act)[i];
        }
        frames++;
        dt = now() - t0;
    } while (dt < 0.4 || frames < ACTIVITY_FRAMES);

    printf("%-9s %6zu %5zu %-8s %14.4g %16.4g %9.4f\n",
           kind == BL_MODEL_FALANDAYS ? "falandays" : "sorn", n, b,
           dtype == BL_FLOAT64 ? "float64" : "float32",
           (double)frames * (double)b / dt, (double)frames * (double)b * (double)n / dt,
           spikes / ((double)ACTIVITY_FRAMES * (double)b * (double)n));
    bl_free(inputs);
    bl_free(noise);
    bl_free(active);
    bl_model_destroy(m);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    const size_t ns[] = {64, 256, 1024}, bs[] = {1, 8, 128};
    printf("bench_models (single thread)\n");
    printf("%-9s %6s %5s %-8s %14s %16s %9s\n", "model", "N", "B", "dtype", "slot-frames/s",
           "node-frames/s", "activity");
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < 3; j++)
                for (int d = 0; d < 2; d++) {
                    if (quick && (ns[i] > 256 || bs[j] > 8))
                        continue;
                    run_cell(k == 0 ? BL_MODEL_FALANDAYS : BL_MODEL_SORN, ns[i], bs[j],
                             d == 0 ? BL_FLOAT64 : BL_FLOAT32);
                }
    return 0;
}
