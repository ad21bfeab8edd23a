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

void bl_philox_fill64(bl_philox *p, uint64_t *out, size_t n)
{
    size_t i = 0;
    /* What the buffer still holds comes first, as next64 would return it. */
    while (i < n && p->buffer_pos < BL_PHILOX_BUFFER)
        out[i++] = p->buffer[p->buffer_pos++];
    if (n - i >= BL_PHILOX_BUFFER) {
        /* Whole blocks go straight to out. The counter and key live in
         * locals so that stores to out (which may alias them as far as the
         * compiler knows) do not force reloads; successive blocks are
         * independent, so the CPU overlaps their multiply chains. Philox is
         * then bound by its twenty 64x64->128 multiplies per block. */
        uint64_t ctr[4] = {p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]};
        const philox4x64_key_t k = {{p->key[0], p->key[1]}};
        philox4x64_ctr_t r = {{0, 0, 0, 0}};
        for (; n - i >= BL_PHILOX_BUFFER; i += BL_PHILOX_BUFFER) {
            bl_philox_ctr_inc(ctr);
            const philox4x64_ctr_t c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
            r = philox4x64_R(10, c, k);
            out[i] = r.v[0];
            out[i + 1] = r.v[1];
            out[i + 2] = r.v[2];
            out[i + 3] = r.v[3];
        }
        memcpy(p->ctr, ctr, sizeof ctr);
        /* The state one-at-a-time draws would leave: the last block in the
         * buffer, all of it used. */
        memcpy(p->buffer, r.v, sizeof p->buffer);
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
