/* Seeds and random numbers, NumPy-exact ("philox-host-v1",
 * spec/models.md §6, spec/platform.md §4.2, spec/numpy-compat.md).
 *
 * seed_for turns a root seed, a partition, a stream and typed keys into a
 * 256-bit seed through SHA-256 of a JSON payload. A bl_gen is NumPy's
 * Generator(Philox(seed)): SeedSequence seeding, Philox-4x64-10 (Random123)
 * and NumPy's samplers, bit for bit. A bl_tape is the noise tape of
 * models.md §6.4. Everything here is deterministic given the seed; nothing
 * reads global state. */
#ifndef BRAINLESSLAB_RNG_H
#define BRAINLESSLAB_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/status.h"

/* ---- seeds ------------------------------------------------------------ */

/* A 256-bit unsigned seed, limbs little-endian (limb[0] least significant). */
typedef struct bl_seed {
    uint64_t limb[4];
} bl_seed;

typedef enum bl_key_type { BL_KEY_INT, BL_KEY_STR, BL_KEY_BOOL } bl_key_type;

/* One typed key; the type tag is part of the identity ("1" != 1). */
typedef struct bl_key {
    bl_key_type type;
    int64_t i;        /* BL_KEY_INT; BL_KEY_BOOL uses 0/1 */
    const char *s;    /* BL_KEY_STR, UTF-8, NUL-terminated */
} bl_key;

#define BL_KEY_I(v) ((bl_key){.type = BL_KEY_INT, .i = (v)})
#define BL_KEY_S(v) ((bl_key){.type = BL_KEY_STR, .s = (v)})

/* seed_for(root_seed, partition, stream, *keys). Fails only on invalid UTF-8
 * in a string (BL_EVALUE) or a libcrypto failure. */
bl_status bl_seed_for(int64_t root_seed, const char *partition, const char *stream,
                      const bl_key *keys, size_t nkeys, bl_seed *out, bl_error *err);
/* seed_for with a 256-bit root (the reference passes a summary seed as the
 * root seed of further streams; its JSON payload holds the integer in
 * decimal). Same contract as bl_seed_for. */
bl_status bl_seed_for_seed(const bl_seed *root, const char *partition, const char *stream,
                           const bl_key *keys, size_t nkeys, bl_seed *out, bl_error *err);

/* The JSON payload hashed by bl_seed_for (for programs and tests that show
 * or check what a seed was derived from; records carry only the seeds), as
 * a NUL-terminated heap string the caller releases with bl_free. */
bl_status bl_seed_payload(int64_t root_seed, const char *partition, const char *stream,
                          const bl_key *keys, size_t nkeys, char **out, bl_error *err);
/* Display form: 64 lowercase hex digits of the integer, zero padded. */
void bl_seed_hex(const bl_seed *seed, char hex[65]);
/* Parses the display form (exactly 64 hex digits, either case). */
bl_status bl_seed_from_hex(const char *hex, bl_seed *out, bl_error *err);
/* Decimal digits of the integer (at most 78 digits + NUL). */
void bl_seed_decimal(const bl_seed *seed, char dec[80]);
bl_seed bl_seed_from_u64(uint64_t v);

/* NumPy SeedSequence(entropy=seed).generate_state(n, uint32) with no spawn
 * key and pool size 4. */
void bl_seedseq_generate(const bl_seed *entropy, uint32_t *words, size_t n);

/* ---- Philox-4x64-10 bit generator -------------------------------------- */

typedef struct bl_philox {
    uint64_t ctr[4];
    uint64_t key[2];
    uint64_t buffer[4];
    int buffer_pos;        /* 4: buffer empty */
    int has_uint32;        /* cached upper half for next32 */
    uint32_t uinteger;
} bl_philox;

/* NumPy Philox(seed): key from SeedSequence, counter zero, buffer empty. */
void bl_philox_seed(bl_philox *p, const bl_seed *seed);
/* Philox(key=..., counter=...) as NumPy builds it from explicit words. */
void bl_philox_set(bl_philox *p, const uint64_t key[2], const uint64_t ctr[4]);
uint64_t bl_philox_next64(bl_philox *p);
/* n calls of bl_philox_next64 in one: out[0..n) and the state afterwards
 * (buffer and cached 32-bit half included) are exactly theirs. Whole
 * blocks are computed straight into out, which is much cheaper per word. */
void bl_philox_fill64(bl_philox *p, uint64_t *out, size_t n);
uint32_t bl_philox_next32(bl_philox *p);
double bl_philox_next_double(bl_philox *p);

/* ---- Generator(Philox(seed)) samplers --------------------------------- */

typedef struct bl_gen {
    bl_philox bits;
} bl_gen;

void bl_gen_init(bl_gen *g, const bl_seed *seed);
/* bl_seed_for followed by bl_gen_init. */
bl_status bl_gen_for(bl_gen *g, int64_t root_seed, const char *partition,
                     const char *stream, const bl_key *keys, size_t nkeys, bl_error *err);

double bl_gen_random(bl_gen *g);                          /* [0, 1) */
void bl_gen_random_fill(bl_gen *g, double *out, size_t n);
/* (random(n) < p) as 0.0/1.0: the draws of bl_gen_random_fill, compared as
 * they are drawn (construction's link masks). */
void bl_gen_bernoulli_fill(bl_gen *g, double *out, size_t n, double p);
double bl_gen_uniform(bl_gen *g, double lo, double hi);
double bl_gen_standard_normal(bl_gen *g);
void bl_gen_standard_normal_fill(bl_gen *g, double *out, size_t n);
/* integers(low, high) for int64, high exclusive, low < high (BL_ASSERTed);
 * consumes nothing when high - low == 1. */
int64_t bl_gen_integers(bl_gen *g, int64_t low, int64_t high);
/* random_interval(max): uniform in [0, max] by masked rejection. */
uint64_t bl_gen_interval(bl_gen *g, uint64_t max);
/* shuffle of a 1-D array of n items of itemsize bytes (itemsize <= 64). */
void bl_gen_shuffle(bl_gen *g, void *items, size_t n, size_t itemsize);
/* permutation(n) into out[0..n). */
void bl_gen_permutation(bl_gen *g, int64_t *out, size_t n);
/* choice(a) for a 1-D array of length n >= 1: the chosen index. */
size_t bl_gen_choice_index(bl_gen *g, size_t n);

/* ---- noise tapes (models.md §6.4) ------------------------------------- */

typedef enum bl_tape_dist { BL_TAPE_NORMAL, BL_TAPE_UNIFORM } bl_tape_dist;

typedef struct bl_tape bl_tape;

/* A tape of frames of `width` values drawn row by row from `seed`'s
 * generator; at most `tile` frames are prepared at a time (tile >= 1). */
bl_status bl_tape_create(bl_tape **out, const bl_seed *seed, size_t width, size_t tile,
                         bl_tape_dist dist, bl_error *err);
void bl_tape_destroy(bl_tape *t);
/* The next `count` frames (1 <= count <= tile) without consuming them, as a
 * row-major count x width block valid until the next tape call. Draws only
 * the frames not yet prefetched. */
bl_status bl_tape_preview(bl_tape *t, size_t count, const double **frames, bl_error *err);
/* Advances the logical cursor; count must not exceed what is prepared. */
bl_status bl_tape_consume(bl_tape *t, size_t count, bl_error *err);
/* preview(1) + consume(1). */
bl_status bl_tape_frame(bl_tape *t, const double **frame, bl_error *err);
uint64_t bl_tape_consumed(const bl_tape *t);
size_t bl_tape_width(const bl_tape *t);

#endif
