/* seed_for (spec/models.md §6.1, spec/platform.md §4.2), the seed's display
 * forms, and NumPy's SeedSequence for the integer entropy seed_for makes. */
#include <string.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/sha256.h"

__extension__ typedef unsigned __int128 bl_u128;

/* Typical payloads are ~100 bytes; a stack buffer of this size keeps
 * seed_for allocation-free, and bl_buf moves to the heap past it. */
#define BL_PAYLOAD_STACK 512

/* Python's str(int): shortest decimal, '-' for negatives, INT64_MIN included. */
static void put_i64(bl_buf *b, int64_t v)
{
    char tmp[21];
    size_t pos = sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--pos] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--pos] = '-';
    bl_buf_append(b, tmp + pos, sizeof tmp - pos);
}

static bl_status put_str(bl_buf *b, const char *s, const char *what, bl_error *err)
{
    if (!s)
        return bl_fail(err, BL_EVALUE, "seed_for: %s must be a string", what);
    return bl_json_write_string(b, s, strlen(s), true, err);
}

/* The exact text json.dumps(..., separators=(",", ":"), ensure_ascii=True)
 * gives for the reference's payload list. The root is `big` (a 256-bit seed
 * used as a root, written in decimal as Python writes any int) when not
 * NULL, else root_seed. */
static bl_status build_payload(bl_buf *b, const bl_seed *big, int64_t root_seed,
                               const char *partition, const char *stream, const bl_key *keys,
                               size_t nkeys, bl_error *err)
{
    bl_status st;
    bl_buf_puts(b, "[\"philox-host-v1\",");
    if (big) {
        char dec[80];
        bl_seed_decimal(big, dec);
        bl_buf_puts(b, dec);
    } else {
        put_i64(b, root_seed);
    }
    bl_buf_putc(b, ',');
    if ((st = put_str(b, partition, "partition", err)) != BL_OK)
        return st;
    bl_buf_putc(b, ',');
    if ((st = put_str(b, stream, "stream", err)) != BL_OK)
        return st;
    bl_buf_puts(b, ",[");
    if (nkeys && !keys)
        return bl_fail(err, BL_EVALUE, "seed_for: keys missing");
    for (size_t i = 0; i < nkeys; i++) {
        const bl_key *k = &keys[i];
        if (i)
            bl_buf_putc(b, ',');
        switch (k->type) {
        case BL_KEY_INT:
            bl_buf_puts(b, "[\"int\",");
            put_i64(b, k->i);
            break;
        case BL_KEY_STR:
            bl_buf_puts(b, "[\"str\",");
            if ((st = put_str(b, k->s, "a string key", err)) != BL_OK)
                return st;
            break;
        case BL_KEY_BOOL:
            bl_buf_puts(b, k->i ? "[\"bool\",true" : "[\"bool\",false");
            break;
        default:
            return bl_fail(err, BL_EVALUE, "seed_for: key %zu has an unknown type", i);
        }
        bl_buf_putc(b, ']');
    }
    bl_buf_puts(b, "]]");
    return bl_buf_status(b, err);
}

bl_status bl_seed_payload(int64_t root_seed, const char *partition, const char *stream,
                          const bl_key *keys, size_t nkeys, char **out, bl_error *err)
{
    char storage[BL_PAYLOAD_STACK];
    bl_buf b;
    *out = NULL;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    bl_status st = build_payload(&b, NULL, root_seed, partition, stream, keys, nkeys, err);
    if (st == BL_OK) {
        *out = bl_buf_take(&b, NULL);
        if (!*out)
            st = bl_fail(err, BL_ENOMEM, "out of memory building a seed payload");
    }
    bl_buf_clear(&b);
    return st;
}

static bl_status seed_for(const bl_seed *big, int64_t root_seed, const char *partition,
                          const char *stream, const bl_key *keys, size_t nkeys, bl_seed *out,
                          bl_error *err)
{
    char storage[BL_PAYLOAD_STACK];
    uint8_t digest[BL_SHA256_BYTES];
    bl_buf b;
    memset(out, 0, sizeof *out);
    bl_buf_init_fixed(&b, storage, sizeof storage);
    bl_status st = build_payload(&b, big, root_seed, partition, stream, keys, nkeys, err);
    if (st == BL_OK)
        st = bl_sha256(b.data, b.len, digest, err);
    bl_buf_clear(&b);
    if (st != BL_OK)
        return st;
    /* The reference reads the digest as a little-endian integer. */
    for (int l = 0; l < 4; l++) {
        uint64_t v = 0;
        for (int j = 7; j >= 0; j--)
            v = v << 8 | digest[8 * l + j];
        out->limb[l] = v;
    }
    return BL_OK;
}

bl_status bl_seed_for(int64_t root_seed, const char *partition, const char *stream,
                      const bl_key *keys, size_t nkeys, bl_seed *out, bl_error *err)
{
    return seed_for(NULL, root_seed, partition, stream, keys, nkeys, out, err);
}

bl_status bl_seed_for_seed(const bl_seed *root, const char *partition, const char *stream,
                           const bl_key *keys, size_t nkeys, bl_seed *out, bl_error *err)
{
    BL_ASSERT(root);
    return seed_for(root, 0, partition, stream, keys, nkeys, out, err);
}

void bl_seed_hex(const bl_seed *seed, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int l = 0; l < 4; l++) {
        uint64_t v = seed->limb[3 - l];
        for (int j = 15; j >= 0; j--) {
            hex[16 * l + j] = digits[v & 0xf];
            v >>= 4;
        }
    }
    hex[64] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bl_status bl_seed_from_hex(const char *hex, bl_seed *out, bl_error *err)
{
    bl_seed s = {{0, 0, 0, 0}};
    size_t n = 0;
    if (hex) {
        for (; n < 65 && hex[n]; n++) {
            int d = hex_value(hex[n]);
            if (d < 0 || n >= 64)
                break;
            s.limb[3 - n / 16] = s.limb[3 - n / 16] << 4 | (uint64_t)d;
        }
    }
    if (!hex || n != 64 || hex[64] != '\0')
        return bl_fail(err, BL_EVALUE, "a seed must be exactly 64 hexadecimal digits");
    *out = s;
    return BL_OK;
}

void bl_seed_decimal(const bl_seed *seed, char dec[80])
{
    /* Base 10^19 chunks (the largest power of ten below 2^64), least
     * significant first; 2^256 needs at most 5 of them. */
    const uint64_t base = UINT64_C(10000000000000000000);
    uint64_t limb[4], chunk[5];
    int nchunks = 0;
    memcpy(limb, seed->limb, sizeof limb);
    do {
        uint64_t rem = 0;
        for (int i = 3; i >= 0; i--) {
            bl_u128 cur = (bl_u128)rem << 64 | limb[i];
            limb[i] = (uint64_t)(cur / base);
            rem = (uint64_t)(cur % base);
        }
        chunk[nchunks++] = rem;
    } while (limb[0] | limb[1] | limb[2] | limb[3]);
    size_t pos = 0;
    for (int c = nchunks - 1; c >= 0; c--) {
        char tmp[20];
        int n = 0;
        uint64_t v = chunk[c];
        do {
            tmp[n++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        /* Inner chunks keep their leading zeros. */
        if (c != nchunks - 1)
            while (n < 19)
                tmp[n++] = '0';
        while (n)
            dec[pos++] = tmp[--n];
    }
    dec[pos] = '\0';
}

bl_seed bl_seed_from_u64(uint64_t v)
{
    bl_seed s = {{v, 0, 0, 0}};
    return s;
}

/* ---- SeedSequence ------------------------------------------------------ */

#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_MULT_L 0xca01f9ddu
#define SS_MIX_MULT_R 0x4973f715u
#define SS_POOL 4

/* The running hash constant is shared by every hashmix of one mixing pass,
 * so it is threaded through explicitly. */
static inline uint32_t ss_hashmix(uint32_t v, uint32_t *h)
{
    v ^= *h;
    *h *= SS_MULT_A;
    v *= *h;
    return v ^ v >> 16;
}

static inline uint32_t ss_mix(uint32_t x, uint32_t y)
{
    uint32_t r = SS_MIX_MULT_L * x - SS_MIX_MULT_R * y;
    return r ^ r >> 16;
}

void bl_seedseq_generate(const bl_seed *entropy, uint32_t *words, size_t n)
{
    uint32_t ent[8];
    size_t nent = 0;
    for (size_t i = 0; i < 8; i++) {
        ent[i] = (uint32_t)(entropy->limb[i / 2] >> (32 * (i % 2)));
        if (ent[i])
            nent = i + 1;
    }
    /* NumPy converts the integer to only as many words as it needs, and
     * zero to a single word; the word count changes the mixing below. */
    if (nent == 0)
        nent = 1;

    uint32_t pool[SS_POOL];
    uint32_t h = SS_INIT_A;
    for (size_t i = 0; i < SS_POOL; i++)
        pool[i] = ss_hashmix(i < nent ? ent[i] : 0, &h);
    for (size_t src = 0; src < SS_POOL; src++)
        for (size_t dst = 0; dst < SS_POOL; dst++)
            if (src != dst)
                pool[dst] = ss_mix(pool[dst], ss_hashmix(pool[src], &h));
    for (size_t src = SS_POOL; src < nent; src++)
        for (size_t dst = 0; dst < SS_POOL; dst++)
            pool[dst] = ss_mix(pool[dst], ss_hashmix(ent[src], &h));

    uint32_t hb = SS_INIT_B;
    for (size_t k = 0; k < n; k++) {
        uint32_t d = pool[k % SS_POOL];
        d ^= hb;
        hb *= SS_MULT_B;
        d *= hb;
        words[k] = d ^ d >> 16;
    }
}
