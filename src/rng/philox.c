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
uint32_t bl_philox_next32(bl_philox *p) { return bl_philox_next32_i(p); }
double bl_philox_next_double(bl_philox *p) { return bl_philox_next_double_i(p); }
