/* Wiring construction cost: microseconds per Falandays and SORN wiring
 * (default configs, R = 3, E = 2 as the cue tasks use) at N = 256 and 1024,
 * median of several timed rounds, with CPU time beside wall time. Each
 * wiring also gets a checksum of its arrays, so a change to the generator or
 * to construction that moved a single bit shows up as a different line.
 * Only the construct call is timed (allocation and first-touch page faults
 * of its arrays included, seeding and checksums not). Rates, never
 * assertions.
 *
 *   bench_construct                      the table
 *   bench_construct falandays|sorn N K   K constructions only (for callgrind
 *                                        and perf, which want one workload)
 *   bench_construct cold falandays|sorn N K
 *                                        the first K wirings of this process,
 *                                        each timed (CPU time is the thread's) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/rng.h"

#define BENCH_NAME "bench_construct"
#include "bench_support.h"

enum { R = 3, E = 2, ROUNDS = 7 };

/* FNV-1a over the 64-bit words of an array: a fingerprint, not a security
 * hash. */
static uint64_t fnv(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * UINT64_C(0x100000001b3);
    }
    return h;
}

/* Seconds spent inside the construct calls (wall and CPU), so that neither
 * seeding nor the checksum counts. */
static double spent_wall, spent_cpu;

/* One wiring from seed `s`; returns its checksum. */
static uint64_t construct_one(bool sorn, size_t n, int64_t s)
{
    bl_error err = {0};
    bl_gen g;
    bl_key keys[2] = {BL_KEY_S("bench"), BL_KEY_I(s)};
    if (bl_gen_for(&g, 1, "development", "construction", keys, 2, &err) != BL_OK)
        die("seed", &err);
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    if (!sorn) {
        bl_falandays_config c;
        bl_falandays_config_default(&c);
        bl_falandays_init *w = NULL;
        double w0 = bench_seconds(CLOCK_MONOTONIC), c0 = bench_seconds(CLOCK_THREAD_CPUTIME_ID);
        if (bl_falandays_construct(&c, n, R, E, &g, &w, &err) != BL_OK)
            die("falandays", &err);
        spent_wall += bench_seconds(CLOCK_MONOTONIC) - w0;
        spent_cpu += bench_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
        h = fnv(h, w->weights, n * n * sizeof(double));
        h = fnv(h, w->recurrent_mask, n * n * sizeof(double));
        h = fnv(h, w->input_weights, n * R * sizeof(double));
        h = fnv(h, w->output_mask, n * E * sizeof(double));
        bl_falandays_init_destroy(w);
    } else {
        bl_sorn_config c;
        bl_sorn_config_default(&c);
        bl_sorn_init *w = NULL;
        double w0 = bench_seconds(CLOCK_MONOTONIC), c0 = bench_seconds(CLOCK_THREAD_CPUTIME_ID);
        if (bl_sorn_construct(&c, n, R, E, &g, &w, &err) != BL_OK)
            die("sorn", &err);
        spent_wall += bench_seconds(CLOCK_MONOTONIC) - w0;
        spent_cpu += bench_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
        size_t ne = w->n_e, ni = n - ne;
        h = fnv(h, w->w_ee, ne * ne * sizeof(double));
        h = fnv(h, w->c_e, ne * sizeof(double));
        if (ni > 0) {
            h = fnv(h, w->w_ei, ne * ni * sizeof(double));
            h = fnv(h, w->w_ie, ni * ne * sizeof(double));
            h = fnv(h, w->t_i, ni * sizeof(double));
        }
        h = fnv(h, w->w_eu, ne * R * sizeof(double));
        h = fnv(h, w->output_mask, E * ne * sizeof(double));
        h = fnv(h, w->t_e, ne * sizeof(double));
        bl_sorn_init_destroy(w);
    }
    /* The generator's position after construction is part of the contract. */
    return h ^ bl_philox_next64(&g.bits);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void row(bool sorn, size_t n)
{
    /* Enough wirings per round that a round lasts a few tens of ms. */
    size_t per_round = n <= 256 ? 64 : 4;
    double wall[ROUNDS], cpu[ROUNDS];
    uint64_t check = 0;
    construct_one(sorn, n, 0); /* warm-up: page faults, caches */
    for (int k = 0; k < ROUNDS; k++) {
        spent_wall = spent_cpu = 0.0;
        for (size_t s = 0; s < per_round; s++)
            check ^= construct_one(sorn, n, (int64_t)s);
        wall[k] = spent_wall / (double)per_round * 1e6;
        cpu[k] = spent_cpu / (double)per_round * 1e6;
    }
    qsort(wall, ROUNDS, sizeof *wall, cmp_double);
    qsort(cpu, ROUNDS, sizeof *cpu, cmp_double);
    /* Rounds are identical, so an odd count XORs to one round's checksum. */
    printf("%-10s N=%-5zu %10.1f us wall %10.1f us cpu  (median of %d rounds of %zu)  "
           "check %016llx\n",
           sorn ? "sorn" : "falandays", n, wall[ROUNDS / 2], cpu[ROUNDS / 2], ROUNDS, per_round,
           (unsigned long long)check);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "cold") == 0) {
        /* The first wirings of a fresh process, each timed on its own, as
         * a run's first evaluation meets them: cold caches, fresh pages. */
        bool sorn = strcmp(argv[2], "sorn") == 0;
        size_t n = (size_t)strtoul(argv[3], NULL, 10);
        long k = strtol(argv[4], NULL, 10);
        printf("cold %s N=%zu:", argv[2], n);
        for (long s = 0; s < k; s++) {
            spent_wall = spent_cpu = 0.0;
            construct_one(sorn, n, s);
            printf(" %.1f us wall %.1f us cpu%s", spent_wall * 1e6, spent_cpu * 1e6,
                   s + 1 < k ? ";" : "\n");
        }
        return 0;
    }
    if (argc == 4) {
        bool sorn = strcmp(argv[1], "sorn") == 0;
        size_t n = (size_t)strtoul(argv[2], NULL, 10);
        long k = strtol(argv[3], NULL, 10);
        uint64_t check = 0;
        for (long s = 0; s < k; s++)
            check ^= construct_one(sorn, n, s);
        printf("%s N=%zu x%ld check %016llx\n", argv[1], n, k, (unsigned long long)check);
        return 0;
    }
    printf("bench_construct (single thread, default configs, R = %d, E = %d)\n", R, E);
    static const size_t sizes[] = {256, 1024};
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < 2; i++)
            row(m == 1, sizes[i]);
    return 0;
}
