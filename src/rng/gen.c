/* NumPy Generator(Philox) samplers (spec/models.md §6.3,
 * spec/numpy-compat.md §2). Each one consumes the bit stream exactly as
 * NumPy does, because later draws of the same stream depend on it. */
#include <math.h>
#include <string.h>

#include "brainlesslab/rng.h"
#include "rng/bernoulli.h"
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

/* Bulk draws go through a chunk of raw words on the stack: big enough that
 * the per-call cost of bl_philox_fill64 vanishes, small enough for L1. */
enum { GEN_CHUNK = 256 };

static inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* NumPy's next_double on a raw word. */
static inline double raw_to_double(uint64_t r)
{
    return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

/* random(n), or with `threshold` (random(n) < p) as 0.0/1.0. Forced inline
 * into both callers, so each gets a loop specialised for its constant. */
static inline __attribute__((always_inline)) void uniform_fill(bl_gen *g, double *out, size_t n, bool threshold, double p)
{
    uint64_t raw[GEN_CHUNK];
    bool all = false;
    const uint64_t bound = threshold ? bl_bernoulli_bound(p, &all) : 0;
    while (n > 0) {
        const size_t m = min_size(n, GEN_CHUNK);
        bl_philox_fill64(&g->bits, raw, m);
        if (threshold) {
            /* The words must still be drawn when every outcome is known.
             * The outcome is random, so 1.0 or 0.0 comes from a mask of
             * its bits, not from a branch the CPU would mispredict. */
            const uint64_t one = UINT64_C(0x3FF0000000000000); /* 1.0 */
            if (all) {
                for (size_t i = 0; i < m; i++)
                    out[i] = 1.0;
            } else {
                for (size_t i = 0; i < m; i++) {
                    const uint64_t bits = (UINT64_C(0) - (uint64_t)(raw[i] < bound)) & one;
                    memcpy(&out[i], &bits, sizeof bits);
                }
            }
        } else {
            for (size_t i = 0; i < m; i++)
                out[i] = raw_to_double(raw[i]);
        }
        out += m;
        n -= m;
    }
}

void bl_gen_random_fill(bl_gen *g, double *out, size_t n) { uniform_fill(g, out, n, false, 0.0); }

void bl_gen_bernoulli_fill(bl_gen *g, double *out, size_t n, double p)
{
    uniform_fill(g, out, n, true, p);
}

double bl_gen_uniform(bl_gen *g, double lo, double hi)
{
    /* NumPy forms the width first, then lo + width * u (no FMA: the build
     * forbids contraction). */
    double width = hi - lo;
    return lo + width * bl_philox_next_double_i(&g->bits);
}

/* ---- standard normal: 256-layer ziggurat ------------------------------ */

/* Where a normal draw reads its raw words: first the ones a bulk fill has
 * already taken from the stream (raw[pos..len)), then the bit generator
 * itself. A one-at-a-time draw has an empty cursor. Because the chunk holds
 * exactly the stream's next words, both read the same sequence. */
typedef struct raw_cursor {
    bl_philox *p;
    const uint64_t *raw;
    size_t pos, len;
} raw_cursor;

static inline uint64_t cursor_next64(raw_cursor *c)
{
    return c->pos < c->len ? c->raw[c->pos++] : bl_philox_next64_i(c->p);
}

static inline double cursor_next_double(raw_cursor *c) { return raw_to_double(cursor_next64(c)); }

/* One ziggurat candidate from raw word r: layer idx = the low 8 bits, then
 * a sign bit, then 52 bits of magnitude rabs. x carries the sign; accept
 * says whether x lies inside the layer's rectangle (~99 % of candidates).
 * The sign is applied by flipping the IEEE sign bit, which is exactly -x
 * (zero included) without a branch on a random bit that the CPU would
 * mispredict half the time. */
typedef struct zig_candidate {
    double x;
    uint64_t rabs;
    unsigned idx;
    bool accept;
} zig_candidate;

static inline zig_candidate zig_decode(uint64_t r)
{
    zig_candidate z;
    z.idx = (unsigned)(r & 0xff);
    z.rabs = (r >> 9) & UINT64_C(0x000fffffffffffff);
    z.x = (double)z.rabs * bl_zig_wi[z.idx];
    uint64_t bits;
    memcpy(&bits, &z.x, sizeof bits);
    bits ^= ((r >> 8) & 1) << 63;
    memcpy(&z.x, &bits, sizeof z.x);
    z.accept = z.rabs < bl_zig_ki[z.idx];
    return z;
}

/* A normal whose first candidate, raw word r, fell outside its rectangle:
 * the wedge test or, for layer 0, the exponential tail beyond r, and new
 * candidates from the cursor until one is accepted. Kept out of line so
 * the common path stays small enough to inline into fill loops. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static double normal_slow(raw_cursor *c, uint64_t r)
{
    for (;;) {
        const zig_candidate z = zig_decode(r);
        if (z.accept)
            return z.x;
        if (z.idx == 0) {
            for (;;) {
                /* log1p(-u), not log(1 - u): the two differ on some draws. */
                double xx = -BL_ZIG_INV_R * log1p(-cursor_next_double(c));
                double yy = -log1p(-cursor_next_double(c));
                if (yy + yy > xx * xx)
                    return (z.rabs >> 8) & 1 ? -(BL_ZIG_R + xx) : BL_ZIG_R + xx;
            }
        }
        double f = (bl_zig_fi[z.idx - 1] - bl_zig_fi[z.idx]) * cursor_next_double(c) +
                   bl_zig_fi[z.idx];
        if (f < exp(-0.5 * z.x * z.x))
            return z.x;
        r = cursor_next64(c);
    }
}

static inline double normal(bl_philox *p)
{
    const uint64_t r = bl_philox_next64_i(p);
    const zig_candidate z = zig_decode(r);
    if (z.accept)
        return z.x;
    raw_cursor c = {p, NULL, 0, 0};
    return normal_slow(&c, r);
}

double bl_gen_standard_normal(bl_gen *g) { return normal(&g->bits); }

void bl_gen_standard_normal_fill(bl_gen *g, double *out, size_t n)
{
    uint64_t raw[GEN_CHUNK];
    size_t i = 0;
    while (i < n) {
        /* Every normal takes at least one word, so a chunk of no more words
         * than normals still owed is always used up: nothing is drawn that
         * one-at-a-time draws would not have drawn. Rejections take their
         * extra words from the chunk's rest, then from the generator. */
        const size_t len = min_size(n - i, GEN_CHUNK);
        bl_philox_fill64(&g->bits, raw, len);
        size_t pos = 0;
        while (pos < len) {
            const uint64_t r = raw[pos++];
            const zig_candidate z = zig_decode(r);
            if (z.accept) {
                out[i++] = z.x;
            } else {
                /* The cursor exists only here, so the fast path keeps its
                 * position in a register. */
                raw_cursor c = {&g->bits, raw, pos, len};
                out[i++] = normal_slow(&c, r);
                pos = c.pos;
            }
        }
    }
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
