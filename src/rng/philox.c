/* Philox-4x64-10 as NumPy's Philox bit generator drives it: SeedSequence
 * key, zero counter, 4-word output buffer, cached 32-bit upper half. */
#include <string.h>

#include "brainlesslab/rng.h"
#include "rng/philox_inline.h"

void bl_philox_set(bl_philox *p, const uint64_t key[2], const uint64_t ctr[4])
{
    memset(p, 0, sizeof *p);
    p->key[0] = key[0];
    p->key[1] = key[1];
    memcpy(p->ctr, ctr, sizeof p->ctr);
    p->buffer_pos = BL_PHILOX_BUFFER;
}

void bl_philox_seed(bl_philox *p, const bl_seed *seed)
{
    uint32_t w[4];
    bl_seedseq_generate(seed, w, 4);
    const uint64_t key[2] = {w[0] | (uint64_t)w[1] << 32, w[2] | (uint64_t)w[3] << 32};
    const uint64_t ctr[4] = {0, 0, 0, 0};
    bl_philox_set(p, key, ctr);
}

uint64_t bl_philox_next64(bl_philox *p) { return bl_philox_next64_i(p); }

/* The bulk path's blocks: Philox-4x64-10 written out over a key schedule
 * computed once per call (Random123's philox4x64_R bumps the key inside
 * every block), with the multiplies as 128-bit products so that a BMI2
 * copy gets MULX, which names its output registers (the baseline MUL ties
 * both halves to RAX:RDX and costs about three moves apiece). These are
 * most of a construction's instructions. Constants: Salmon et al. (2011),
 * as Random123 and NumPy use them; test_fill64_matches_next64 holds this
 * copy to Random123's function, which the one-at-a-time path calls. */
__extension__ typedef unsigned __int128 bl_philox_u128;
enum { PHILOX_ROUNDS = 10 };
#define PHILOX_M0 UINT64_C(0xD2E7470EE14C6C93)
#define PHILOX_M1 UINT64_C(0xCA5A826395121157)
#define PHILOX_W0 UINT64_C(0x9E3779B97F4A7C15)
#define PHILOX_W1 UINT64_C(0xBB67AE8584CAA73B)

static inline __attribute__((always_inline)) size_t
fill_blocks(uint64_t ctr[4], const uint64_t rk[2 * PHILOX_ROUNDS], uint64_t *out, size_t blocks)
{
    uint64_t c0 = ctr[0];
    for (size_t b = 0; b < blocks; b++) {
        /* The 256-bit increment; the carry is rare, so the upper words
         * stay in memory. */
        if (++c0 == 0 && ++ctr[1] == 0 && ++ctr[2] == 0)
            ++ctr[3];
        uint64_t x0 = c0, x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
#pragma GCC unroll 10
        for (int r = 0; r < PHILOX_ROUNDS; r++) {
            const bl_philox_u128 p0 = (bl_philox_u128)PHILOX_M0 * x0;
            const bl_philox_u128 p1 = (bl_philox_u128)PHILOX_M1 * x2;
            x0 = (uint64_t)(p1 >> 64) ^ x1 ^ rk[2 * r];
            x1 = (uint64_t)p1;
            x2 = (uint64_t)(p0 >> 64) ^ x3 ^ rk[2 * r + 1];
            x3 = (uint64_t)p0;
        }
        out[4 * b] = x0;
        out[4 * b + 1] = x1;
        out[4 * b + 2] = x2;
        out[4 * b + 3] = x3;
    }
    ctr[0] = c0;
    return blocks;
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define PHILOX_BMI2 1
static size_t __attribute__((target("bmi2"))) fill_blocks_bmi2(uint64_t ctr[4], const uint64_t *rk,
                                                                 uint64_t *out, size_t blocks)
{
    return fill_blocks(ctr, rk, out, blocks);
}
#endif

static size_t fill_blocks_base(uint64_t ctr[4], const uint64_t *rk, uint64_t *out, size_t blocks)
{
    return fill_blocks(ctr, rk, out, blocks);
}

void bl_philox_fill64(bl_philox *p, uint64_t *out, size_t n)
{
    size_t i = 0;
    /* What the buffer still holds comes first, as next64 would return it. */
    while (i < n && p->buffer_pos < BL_PHILOX_BUFFER)
        out[i++] = p->buffer[p->buffer_pos++];
    const size_t blocks = (n - i) / BL_PHILOX_BUFFER;
    if (blocks > 0) {
        /* Whole blocks go straight to out; the counter and the key
         * schedule live in locals, which stores to out cannot alias. */
        uint64_t ctr[4] = {p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]};
        uint64_t rk[2 * PHILOX_ROUNDS];
        uint64_t k0 = p->key[0], k1 = p->key[1];
        for (int r = 0; r < PHILOX_ROUNDS; r++, k0 += PHILOX_W0, k1 += PHILOX_W1) {
            rk[2 * r] = k0;
            rk[2 * r + 1] = k1;
        }
#ifdef PHILOX_BMI2
        /* A bit test of what libgcc read from CPUID at start-up. */
        if (__builtin_cpu_supports("bmi2"))
            fill_blocks_bmi2(ctr, rk, out + i, blocks);
        else
#endif
            fill_blocks_base(ctr, rk, out + i, blocks);
        i += blocks * BL_PHILOX_BUFFER;
        memcpy(p->ctr, ctr, sizeof ctr);
        /* The state one-at-a-time draws would leave: the last block in the
         * buffer, all of it used. */
        memcpy(p->buffer, out + i - BL_PHILOX_BUFFER, sizeof p->buffer);
        p->buffer_pos = BL_PHILOX_BUFFER;
    }
    if (i < n) {
        out[i++] = bl_philox_refill(p);
        while (i < n)
            out[i++] = p->buffer[p->buffer_pos++];
    }
}
uint32_t bl_philox_next32(bl_philox *p) { return bl_philox_next32_i(p); }
double bl_philox_next_double(bl_philox *p) { return bl_philox_next_double_i(p); }
