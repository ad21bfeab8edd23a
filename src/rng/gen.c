/* NumPy Generator(Philox) samplers (spec/models.md §6.3,
 * spec/numpy-compat.md §2). Each one consumes the bit stream exactly as
 * NumPy does, because later draws of the same stream depend on it. */
#include <math.h>
#include <string.h>

#include "brainlesslab/rng.h"
#include "rng/philox_inline.h"
#include "rng/ziggurat.h"

__extension__ typedef unsigned __int128 bl_u128;

void bl_gen_init(bl_gen *g, const bl_seed *seed) { bl_philox_seed(&g->bits, seed); }

bl_status bl_gen_for(bl_gen *g, int64_t root_seed, const char *partition,
                     const char *stream, const bl_key *keys, size_t nkeys, bl_error *err)
{
    bl_seed seed;
    bl_status st = bl_seed_for(root_seed, partition, stream, keys, nkeys, &seed, err);
    if (st != BL_OK)
        return st;
    bl_gen_init(g, &seed);
    return BL_OK;
}

double bl_gen_random(bl_gen *g) { return bl_philox_next_double_i(&g->bits); }

void bl_gen_random_fill(bl_gen *g, double *out, size_t n)
{
    bl_philox *p = &g->bits;
    for (size_t i = 0; i < n; i++)
        out[i] = bl_philox_next_double_i(p);
}

double bl_gen_uniform(bl_gen *g, double lo, double hi)
{
    /* NumPy forms the width first, then lo + width * u (no FMA: the build
     * forbids contraction). */
    double width = hi - lo;
    return lo + width * bl_philox_next_double_i(&g->bits);
}

/* ---- standard normal: 256-layer ziggurat ------------------------------ */

/* The ~1 % of draws outside a layer's rectangle: the wedge test or, for
 * layer 0, the exponential tail beyond r. Kept out of line so the common
 * path stays small enough to inline into fill loops. Returns false when
 * the candidate is rejected and the caller must start over. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static bool normal_rare(bl_philox *p, unsigned idx, uint64_t rabs, double x, double *out)
{
    if (idx == 0) {
        for (;;) {
            /* log1p(-u), not log(1 - u): the two differ on some draws. */
            double xx = -BL_ZIG_INV_R * log1p(-bl_philox_next_double_i(p));
            double yy = -log1p(-bl_philox_next_double_i(p));
            if (yy + yy > xx * xx) {
                *out = (rabs >> 8) & 1 ? -(BL_ZIG_R + xx) : BL_ZIG_R + xx;
                return true;
            }
        }
    }
    double f = (bl_zig_fi[idx - 1] - bl_zig_fi[idx]) * bl_philox_next_double_i(p) +
               bl_zig_fi[idx];
    if (f < exp(-0.5 * x * x)) {
        *out = x;
        return true;
    }
    return false;
}

static inline double normal(bl_philox *p)
{
    for (;;) {
        uint64_t r = bl_philox_next64_i(p);
        unsigned idx = (unsigned)(r & 0xff);
        r >>= 8;
        uint64_t rabs = (r >> 1) & UINT64_C(0x000fffffffffffff);
        double x = (double)rabs * bl_zig_wi[idx];
        if (r & 1)
            x = -x;
        if (rabs < bl_zig_ki[idx])
            return x;
        double y;
        if (normal_rare(p, idx, rabs, x, &y))
            return y;
    }
}

double bl_gen_standard_normal(bl_gen *g) { return normal(&g->bits); }

void bl_gen_standard_normal_fill(bl_gen *g, double *out, size_t n)
{
    bl_philox *p = &g->bits;
    for (size_t i = 0; i < n; i++)
        out[i] = normal(p);
}

/* ---- bounded integers ------------------------------------------------- */

/* Lemire's multiply-shift with rejection; the threshold (a modulo) is only
 * computed in the rare case where the low half could be biased. */
static inline uint32_t lemire32(bl_philox *p, uint32_t rng)
{
    const uint32_t excl = rng + 1;
    uint64_t m = (uint64_t)bl_philox_next32_i(p) * excl;
    uint32_t low = (uint32_t)m;
    if (low < excl) {
        const uint32_t threshold = (UINT32_MAX - rng) % excl;
        while (low < threshold) {
            m = (uint64_t)bl_philox_next32_i(p) * excl;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

static inline uint64_t lemire64(bl_philox *p, uint64_t rng)
{
    const uint64_t excl = rng + 1;
    bl_u128 m = (bl_u128)bl_philox_next64_i(p) * excl;
    uint64_t low = (uint64_t)m;
    if (low < excl) {
        const uint64_t threshold = (UINT64_MAX - rng) % excl;
        while (low < threshold) {
            m = (bl_u128)bl_philox_next64_i(p) * excl;
            low = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* Uniform in [0, rng]. The special cases are NumPy's and change how much
 * of the stream is consumed, so they are part of the contract. */
static inline uint64_t bounded(bl_philox *p, uint64_t rng)
{
    if (rng == 0)
        return 0;
    if (rng <= UINT32_MAX) {
        if (rng == UINT32_MAX)
            return bl_philox_next32_i(p);
        return lemire32(p, (uint32_t)rng);
    }
    if (rng == UINT64_MAX)
        return bl_philox_next64_i(p);
    return lemire64(p, rng);
}

/* Two's-complement reinterpretation without implementation-defined casts. */
static inline int64_t u64_to_i64(uint64_t u)
{
    return u <= INT64_MAX ? (int64_t)u : -(int64_t)(UINT64_MAX - u) - 1;
}

int64_t bl_gen_integers(bl_gen *g, int64_t low, int64_t high)
{
    BL_ASSERT(low < high);
    uint64_t off = (uint64_t)low;
    uint64_t rng = (uint64_t)high - off - 1;
    return u64_to_i64(off + bounded(&g->bits, rng));
}

static inline uint64_t interval(bl_philox *p, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    uint64_t v;
    if (max <= UINT32_MAX) {
        while ((v = bl_philox_next32_i(p) & mask) > max) {
        }
    } else {
        while ((v = bl_philox_next64_i(p) & mask) > max) {
        }
    }
    return v;
}

uint64_t bl_gen_interval(bl_gen *g, uint64_t max) { return interval(&g->bits, max); }

void bl_gen_shuffle(bl_gen *g, void *items, size_t n, size_t itemsize)
{
    BL_ASSERT(itemsize <= 64);
    bl_philox *p = &g->bits;
    unsigned char *a = items;
    if (n < 2 || itemsize == 0)
        return;
    if (itemsize == 8) {
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)interval(p, i);
            uint64_t t;
            memcpy(&t, a + 8 * i, 8);
            memmove(a + 8 * i, a + 8 * j, 8);
            memcpy(a + 8 * j, &t, 8);
        }
        return;
    }
    unsigned char t[64];
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)interval(p, i);
        memcpy(t, a + itemsize * i, itemsize);
        memmove(a + itemsize * i, a + itemsize * j, itemsize);
        memcpy(a + itemsize * j, t, itemsize);
    }
}

void bl_gen_permutation(bl_gen *g, int64_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (int64_t)i;
    bl_gen_shuffle(g, out, n, sizeof *out);
}

size_t bl_gen_choice_index(bl_gen *g, size_t n)
{
    BL_ASSERT(n >= 1);
    return (size_t)bounded(&g->bits, (uint64_t)n - 1);
}
