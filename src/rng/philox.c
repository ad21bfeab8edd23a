/* Philox-4x64-10 as NumPy's Philox bit generator drives it: SeedSequence
 * key, zero counter, 4-word output buffer, cached 32-bit upper half. */
#include <string.h>

#include "brainlesslab/rng.h"
#include "rng/philox_inline.h"
#include "rng/philox_paths.h"

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

/* The bulk path's blocks. These are most of a construction's
 * instructions. Where the CPU has AVX-512, eight blocks at a time go
 * through vectors (below); this scalar loop takes the rest. The counter
 * and key live in locals, so that stores to out (which may alias them as
 * far as the compiler knows) do not force reloads; successive blocks are
 * independent, so the CPU overlaps their multiply chains. (Two variants
 * of this loop were measured and dropped: a BMI2 copy with MULX, and a
 * hand-written round over a precomputed key schedule. Both ran fewer
 * instructions and both were slower on the AMD EPYC used.) */
static inline __attribute__((always_inline)) size_t fill_blocks(uint64_t ctr[4],
                                                                const uint64_t key[2],
                                                                uint64_t *out, size_t blocks)
{
    const philox4x64_key_t k = {{key[0], key[1]}};
    for (size_t b = 0; b < blocks; b++) {
        bl_philox_ctr_inc(ctr);
        const philox4x64_ctr_t c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
        const philox4x64_ctr_t r = philox4x64_R(10, c, k);
        out[4 * b] = r.v[0];
        out[4 * b + 1] = r.v[1];
        out[4 * b + 2] = r.v[2];
        out[4 * b + 3] = r.v[3];
    }
    return blocks;
}

#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define PHILOX_X86 1
#include <immintrin.h>

#define PHILOX_AVX512 __attribute__((target("avx512f")))

/* hi:lo = x * m in each 64-bit lane, from four 32x32->64 products:
 * x*m = hh*2^64 + (lh + hl)*2^32 + ll, whose middle column
 * mid = (ll >> 32) + low32(lh) + low32(hl) < 3*2^32 cannot overflow. */
static inline PHILOX_AVX512 void mul128x8(__m512i x, __m512i mlo, __m512i mhi, __m512i *hi,
                                          __m512i *lo)
{
    const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
    const __m512i xh = _mm512_srli_epi64(x, 32);
    const __m512i ll = _mm512_mul_epu32(x, mlo), lh = _mm512_mul_epu32(x, mhi);
    const __m512i hl = _mm512_mul_epu32(xh, mlo), hh = _mm512_mul_epu32(xh, mhi);
    const __m512i mid = _mm512_add_epi64(
        _mm512_add_epi64(_mm512_srli_epi64(ll, 32), _mm512_and_si512(lh, low32)),
        _mm512_and_si512(hl, low32));
    *hi = _mm512_add_epi64(
        _mm512_add_epi64(hh, _mm512_srli_epi64(lh, 32)),
        _mm512_add_epi64(_mm512_srli_epi64(hl, 32), _mm512_srli_epi64(mid, 32)));
    /* (mid << 32) | low32(ll); 0xF8 is A | (B & C). */
    *lo = _mm512_ternarylogic_epi64(_mm512_slli_epi64(mid, 32), ll, low32, 0xF8);
}

/* Eight blocks as the scalar loop writes them (block-major) from lanes
 * x_j holding word j of each: a/b hold words 0,1 of the even/odd blocks
 * and c/d words 2,3, one block per 128-bit lane; the two-source permutes
 * gather two blocks' halves, and the 128-bit shuffles put them in order. */
static inline PHILOX_AVX512 void store8(uint64_t *o, __m512i x0, __m512i x1, __m512i x2,
                                        __m512i x3)
{
    const __m512i pair_lo = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0),
                  pair_hi = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    const __m512i a = _mm512_unpacklo_epi64(x0, x1), b = _mm512_unpackhi_epi64(x0, x1);
    const __m512i c = _mm512_unpacklo_epi64(x2, x3), d = _mm512_unpackhi_epi64(x2, x3);
    const __m512i e = _mm512_permutex2var_epi64(a, pair_lo, c),
                  f = _mm512_permutex2var_epi64(b, pair_lo, d);
    const __m512i g = _mm512_permutex2var_epi64(a, pair_hi, c),
                  h = _mm512_permutex2var_epi64(b, pair_hi, d);
    _mm512_storeu_si512(o, _mm512_shuffle_i64x2(e, f, 0x44));
    _mm512_storeu_si512(o + 8, _mm512_shuffle_i64x2(e, f, 0xEE));
    _mm512_storeu_si512(o + 16, _mm512_shuffle_i64x2(g, h, 0x44));
    _mm512_storeu_si512(o + 24, _mm512_shuffle_i64x2(g, h, 0xEE));
}

enum { PHILOX_ROUNDS = 10 };

/* Sixteen blocks a step, one per 64-bit lane of two vector sets (each
 * round is a chain of dependent operations, so two sets side by side
 * keep the units busy), where the counter's low word does not wrap within
 * the sixteen (the upper words are then common to all); the scalar loop
 * takes the rest. */
static size_t PHILOX_AVX512 fill_blocks_avx512(uint64_t ctr[4], const uint64_t key[2],
                                               uint64_t *out, size_t blocks)
{
    /* Philox-4x64-10 as Random123 defines it (philox4x64_R): per round,
     * two 64x64->128 products, the high halves crossed with the other
     * words and the round key, which is bumped by the Weyl constants each
     * round; its schedule is computed once here rather than per block. */
    uint64_t rk[2 * PHILOX_ROUNDS];
    uint64_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < PHILOX_ROUNDS; r++, k0 += PHILOX_W64_0, k1 += PHILOX_W64_1) {
        rk[2 * r] = k0;
        rk[2 * r + 1] = k1;
    }
    const __m512i m0lo = _mm512_set1_epi64((int64_t)(PHILOX_M4x64_0 & 0xFFFFFFFF)),
                  m0hi = _mm512_set1_epi64((int64_t)(PHILOX_M4x64_0 >> 32)),
                  m1lo = _mm512_set1_epi64((int64_t)(PHILOX_M4x64_1 & 0xFFFFFFFF)),
                  m1hi = _mm512_set1_epi64((int64_t)(PHILOX_M4x64_1 >> 32));
    const __m512i step = _mm512_set_epi64(8, 7, 6, 5, 4, 3, 2, 1), eight = _mm512_set1_epi64(8);
    size_t b = 0;
    while (b < blocks) {
        if (blocks - b < 16 || ctr[0] > UINT64_MAX - 16) {
            b += fill_blocks(ctr, key, out + 4 * b, 1);
            continue;
        }
        __m512i x0 = _mm512_add_epi64(_mm512_set1_epi64((int64_t)ctr[0]), step);
        __m512i y0 = _mm512_add_epi64(x0, eight);
        __m512i x1 = _mm512_set1_epi64((int64_t)ctr[1]), x2 = _mm512_set1_epi64((int64_t)ctr[2]),
                x3 = _mm512_set1_epi64((int64_t)ctr[3]);
        __m512i y1 = x1, y2 = x2, y3 = x3;
        ctr[0] += 16;
        for (int r = 0; r < PHILOX_ROUNDS; r++) {
            const __m512i kr0 = _mm512_set1_epi64((int64_t)rk[2 * r]),
                          kr1 = _mm512_set1_epi64((int64_t)rk[2 * r + 1]);
            __m512i hx0, lx0, hx1, lx1, hy0, ly0, hy1, ly1;
            mul128x8(x0, m0lo, m0hi, &hx0, &lx0);
            mul128x8(x2, m1lo, m1hi, &hx1, &lx1);
            mul128x8(y0, m0lo, m0hi, &hy0, &ly0);
            mul128x8(y2, m1lo, m1hi, &hy1, &ly1);
            /* 0x96 is A ^ B ^ C. */
            x0 = _mm512_ternarylogic_epi64(hx1, x1, kr0, 0x96);
            x1 = lx1;
            x2 = _mm512_ternarylogic_epi64(hx0, x3, kr1, 0x96);
            x3 = lx0;
            y0 = _mm512_ternarylogic_epi64(hy1, y1, kr0, 0x96);
            y1 = ly1;
            y2 = _mm512_ternarylogic_epi64(hy0, y3, kr1, 0x96);
            y3 = ly0;
        }
        store8(out + 4 * b, x0, x1, x2, x3);
        store8(out + 4 * b + 32, y0, y1, y2, y3);
        b += 16;
    }
    return blocks;
}
#endif

static size_t fill_blocks_base(uint64_t ctr[4], const uint64_t key[2], uint64_t *out,
                               size_t blocks)
{
    return fill_blocks(ctr, key, out, blocks);
}

/* Which bulk path the CPU can run; the best is the default. */
bool bl_philox_path_supported(bl_philox_path path)
{
    switch (path) {
    case BL_PHILOX_PATH_BASE:
        return true;
#ifdef PHILOX_X86
    case BL_PHILOX_PATH_AVX512:
        return __builtin_cpu_supports("avx512f");
#endif
    default:
        return false;
    }
}

static bl_philox_path best_path(void)
{
    /* Bit tests of what libgcc read from CPUID at start-up. */
    return bl_philox_path_supported(BL_PHILOX_PATH_AVX512) ? BL_PHILOX_PATH_AVX512
                                                            : BL_PHILOX_PATH_BASE;
}

void bl_philox_fill64_path(bl_philox *p, uint64_t *out, size_t n, bl_philox_path path)
{
    BL_ASSERT(bl_philox_path_supported(path));
    size_t i = 0;
    /* What the buffer still holds comes first, as next64 would return it. */
    while (i < n && p->buffer_pos < BL_PHILOX_BUFFER)
        out[i++] = p->buffer[p->buffer_pos++];
    const size_t blocks = (n - i) / BL_PHILOX_BUFFER;
    if (blocks > 0) {
        /* Whole blocks go straight to out. */
        uint64_t ctr[4] = {p->ctr[0], p->ctr[1], p->ctr[2], p->ctr[3]};
        const uint64_t key[2] = {p->key[0], p->key[1]};
        switch (path) {
#ifdef PHILOX_X86
        case BL_PHILOX_PATH_AVX512:
            fill_blocks_avx512(ctr, key, out + i, blocks);
            break;
#endif
        default:
            fill_blocks_base(ctr, key, out + i, blocks);
            break;
        }
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

void bl_philox_fill64(bl_philox *p, uint64_t *out, size_t n)
{
    bl_philox_fill64_path(p, out, n, best_path());
}
uint32_t bl_philox_next32(bl_philox *p) { return bl_philox_next32_i(p); }
double bl_philox_next_double(bl_philox *p) { return bl_philox_next_double_i(p); }
