/* Inline Philox-4x64-10 stream steps, private to src/rng. The samplers and
 * tapes call these in their inner loops, so they live in a header rather
 * than behind the out-of-line bl_philox_next* entry points. */
#ifndef BL_RNG_PHILOX_INLINE_H
#define BL_RNG_PHILOX_INLINE_H

#include <Random123/philox.h>
#include <stdint.h>

#include "brainlesslab/rng.h"

#define BL_PHILOX_BUFFER 4

/* Advances a 256-bit Philox counter by one, as NumPy does before each block. */
static inline void bl_philox_ctr_inc(uint64_t ctr[4])
{
    if (++ctr[0] == 0 && ++ctr[1] == 0 && ++ctr[2] == 0)
        ++ctr[3];
}

/* Refills the 4-word buffer. NumPy increments the 256-bit counter before
 * computing a block, so a fresh generator's first block is counter 1. */
static inline uint64_t bl_philox_refill(bl_philox *p)
{
    bl_philox_ctr_inc(p->ctr);
    philox4x64_ctr_t c = {{p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]}};
    philox4x64_key_t k = {{p->key[0], p->key[1]}};
    philox4x64_ctr_t r = philox4x64_R(10, c, k);
    p->buffer[0] = r.v[0];
    p->buffer[1] = r.v[1];
    p->buffer[2] = r.v[2];
    p->buffer[3] = r.v[3];
    p->buffer_pos = 1;
    return r.v[0];
}

static inline uint64_t bl_philox_next64_i(bl_philox *p)
{
    if (p->buffer_pos < BL_PHILOX_BUFFER)
        return p->buffer[p->buffer_pos++];
    return bl_philox_refill(p);
}

/* The upper half is cached across calls and next64 leaves it alone, which
 * is how NumPy interleaves 32- and 64-bit consumers. */
static inline uint32_t bl_philox_next32_i(bl_philox *p)
{
    if (p->has_uint32) {
        p->has_uint32 = 0;
        return p->uinteger;
    }
    uint64_t v = bl_philox_next64_i(p);
    p->has_uint32 = 1;
    p->uinteger = (uint32_t)(v >> 32);
    return (uint32_t)v;
}

static inline double bl_philox_next_double_i(bl_philox *p)
{
    return (double)(bl_philox_next64_i(p) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
