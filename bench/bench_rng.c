/* Seed bank and generator throughput: seed_for calls per second (the cost of
 * wiring every trial's streams), standard-normal and uniform draws per
 * second in bulk (the Falandays noise tape's cost per neuron-frame, and
 * wiring construction's) and one at a time, and raw words per second.
 * Rates, never assertions. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/rng.h"

#define BENCH_NAME "bench_rng"
#include "bench_support.h"

/* Repeats the body with doubling counts until one repetition takes >= 0.5 s, so
 * the rate is measured over a meaningful interval on any machine. The rate
 * per CPU second is printed beside the wall-clock one: on a shared machine
 * it is the steadier of the two. */
#define MEASURE(label, unit_per_iter, ...)                                      \
    do {                                                                           \
        double t0, c0, dt, dc;                                                     \
        long iters = 1000;                                                         \
        for (;;) {                                                                 \
            t0 = bench_seconds(CLOCK_MONOTONIC);                                             \
            c0 = bench_seconds(CLOCK_PROCESS_CPUTIME_ID);                                    \
            for (long it_ = 0; it_ < iters; it_++) {                               \
                __VA_ARGS__;                                                       \
            }                                                                      \
            dt = bench_seconds(CLOCK_MONOTONIC) - t0;                                        \
            dc = bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;                               \
            if (dt >= 0.5)                                                         \
                break;                                                             \
            iters *= 2;                                                            \
        }                                                                          \
        printf("%-28s %14.4g /s wall %14.4g /s cpu\n", label,                      \
               (double)iters * (unit_per_iter) / dt,                               \
               (double)iters * (unit_per_iter) / dc);                              \
    } while (0)

int main(void)
{
    volatile uint64_t sink = 0;
    bl_seed seed;
    printf("bench_rng (single thread)\n");

    MEASURE("seed_for (4 keys)", 1, {
        bl_key keys[4] = {BL_KEY_S("paired-worlds"), BL_KEY_S("delayed_cue"),
                          BL_KEY_I(it_ & 1023), BL_KEY_I(it_ >> 10)};
        if (bl_seed_for(11001, "development", "world", keys, 4, &seed, NULL) != BL_OK)
            abort();
        sink += seed.limb[0];
    });

    MEASURE("generator init (seedseq)", 1, {
        bl_gen g;
        seed.limb[0] = (uint64_t)it_;
        bl_gen_init(&g, &seed);
        sink += g.bits.key[0];
    });

    enum { BLOCK = 4096 };
    double *block = bl_malloc(BLOCK * sizeof *block);
    if (!block)
        return 1;
    bl_gen g;
    bl_gen_init(&g, &seed);

    MEASURE("standard_normal", BLOCK, {
        bl_gen_standard_normal_fill(&g, block, BLOCK);
        sink += (uint64_t)(block[it_ % BLOCK] > 0);
    });
    MEASURE("random (double)", BLOCK, {
        bl_gen_random_fill(&g, block, BLOCK);
        sink += (uint64_t)(block[it_ % BLOCK] > 0.5);
    });
    MEASURE("raw next64", BLOCK, {
        for (int i = 0; i < BLOCK; i++)
            sink += bl_philox_next64(&g.bits);
    });
    /* The one-at-a-time entry points, as construction used them, and the
     * bulk raw fill that the fills above are built on. */
    MEASURE("standard_normal (single)", BLOCK, {
        for (int i = 0; i < BLOCK; i++)
            block[i] = bl_gen_standard_normal(&g);
        sink += (uint64_t)(block[it_ % BLOCK] > 0);
    });
    MEASURE("random (single)", BLOCK, {
        for (int i = 0; i < BLOCK; i++)
            block[i] = bl_gen_random(&g);
        sink += (uint64_t)(block[it_ % BLOCK] > 0.5);
    });
    uint64_t *raw = bl_malloc(BLOCK * sizeof *raw);
    if (!raw)
        return 1;
    MEASURE("raw fill64", BLOCK, {
        bl_philox_fill64(&g.bits, raw, BLOCK);
        sink += raw[it_ % BLOCK];
    });
    bl_free(raw);
    MEASURE("numpy sum (4096)", BLOCK, { sink += (uint64_t)(bl_np_sum(block, BLOCK) > 0); });
    bl_free(block);
    (void)sink;
    return 0;
}
