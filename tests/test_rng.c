/* Seeds and random numbers: the known answers of spec/models.md Appendix A,
 * spec/platform.md §4.2 and spec/tasks.md §7.4, the ziggurat tables, noise
 * tapes, and differential tests against NumPy itself (numpy-compat.md §1).
 * Every comparison is on exact bit patterns. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/sha256.h"
#include "rng/bernoulli.h"
#include "rng/philox_paths.h"
#include "rng/ziggurat.h"
#include "support.h"
#include "task_support.h"

/* ---- helpers ----------------------------------------------------------- */

static uint64_t sm_state = UINT64_C(0x9e3779b97f4a7c15);

/* The tests' own source of arbitrary seeds and op scripts. */
static uint64_t sm_next(void) { return bl_test_splitmix64(&sm_state); }

static uint64_t le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static bl_seed seed_of_hex(const char *hex)
{
    bl_seed s;
    bl_error err = {0};
    if (bl_seed_from_hex(hex, &s, &err) != BL_OK)
        fail_msg("bad seed hex %s: %s", hex, err.msg);
    return s;
}

static void expect_double(const char *what, size_t i, double c, double ref)
{
    if (bl_test_bits(c) != bl_test_bits(ref))
        fail_msg("%s: element %zu: C %.17g (%016" PRIx64 "), expected %.17g (%016" PRIx64 ")",
                 what, i, c, bl_test_bits(c), ref, bl_test_bits(ref));
}

static void expect_u64(const char *what, size_t i, uint64_t c, uint64_t ref)
{
    if (c != ref)
        fail_msg("%s: element %zu: C %016" PRIx64 ", expected %016" PRIx64, what, i, c, ref);
}

static void expect_i64(const char *what, size_t i, int64_t c, int64_t ref)
{
    if (c != ref)
        fail_msg("%s: element %zu: C %" PRId64 ", expected %" PRId64, what, i, c, ref);
}

/* The next oracle record, which must hold exactly `nbytes` bytes. */
static const unsigned char *record(const unsigned char *out, size_t len, size_t *pos,
                                   size_t nbytes, const char *what)
{
    size_t n = 0;
    const unsigned char *rec = bl_test_numpy_next(out, len, pos, &n);
    if (n != nbytes)
        fail_msg("%s: oracle record of %zu bytes, expected %zu", what, n, nbytes);
    return rec;
}

static void finish_oracle(unsigned char *out, size_t len, size_t pos)
{
    if (pos != len)
        fail_msg("oracle output has %zu unread bytes", len - pos);
    free(out);
}

static void run_oracle(bl_buf *req, unsigned char **out, size_t *len)
{
    assert_int_equal(bl_buf_status(req, NULL), BL_OK);
    bl_test_numpy(req->data, out, len);
    bl_buf_clear(req);
}

/* Seeds that exercise SeedSequence's word count: zero, small integers, 2^32
 * and 2^64 boundaries, values with fewer than 4 and more than 4 words, zero
 * words inside and at the bottom, all ones, and random 256-bit values. */
#define N_SEEDS 32
static void make_seeds(bl_seed seeds[N_SEEDS], char hex[N_SEEDS][65])
{
    const uint64_t M = UINT64_MAX;
    const bl_seed fixed[] = {
        {{0, 0, 0, 0}},
        {{1, 0, 0, 0}},
        {{2, 0, 0, 0}},
        {{UINT32_MAX, 0, 0, 0}},
        {{UINT64_C(1) << 32, 0, 0, 0}},
        {{(UINT64_C(1) << 32) + 1, 0, 0, 0}},
        {{M, 0, 0, 0}},
        {{0, 1, 0, 0}},
        {{5, 0, 1, 0}},
        {{0, 0, 0, UINT64_C(1) << 32}},
        {{1, 0, 0, UINT64_C(1) << 63}},
        {{M, M, M, M}},
        {{0x12345678, 0, 0, 0xabcdef}},
        {{UINT64_C(0xdeadbeef00000000), 0, 0, 0}},
    };
    size_t n = sizeof fixed / sizeof fixed[0];
    for (size_t i = 0; i < n; i++)
        seeds[i] = fixed[i];
    sm_state = 20240601;
    for (size_t i = n; i < N_SEEDS; i++) {
        for (int l = 0; l < 4; l++)
            seeds[i].limb[l] = sm_next();
        /* Some with leading zero words, so 3, 5, 6 and 7 entropy words. */
        if (i % 4 == 1)
            seeds[i].limb[3] = 0, seeds[i].limb[2] &= UINT32_MAX;
        if (i % 4 == 2)
            seeds[i].limb[3] = 0, seeds[i].limb[2] = 0, seeds[i].limb[1] &= UINT32_MAX;
        if (i % 4 == 3)
            seeds[i].limb[3] &= UINT32_MAX;
    }
    for (size_t i = 0; i < N_SEEDS; i++)
        bl_seed_hex(&seeds[i], hex[i]);
}

/* One differential test against the NumPy oracle over the seeds of
 * make_seeds: requests go to req, diff_send runs them, diff_record reads
 * the records back in order and diff_end checks that none is left. */
typedef struct differential {
    bl_seed seeds[N_SEEDS];
    char hex[N_SEEDS][65];
    bl_buf req;
    unsigned char *out;
    size_t len, pos;
} differential;

static differential diff_begin(void)
{
    BL_REQUIRE_NUMPY();
    differential d = {.out = NULL};
    make_seeds(d.seeds, d.hex);
    bl_buf_init(&d.req);
    return d;
}

static void diff_send(differential *d) { run_oracle(&d->req, &d->out, &d->len); }

static const unsigned char *diff_record(differential *d, size_t nbytes, const char *what)
{
    return record(d->out, d->len, &d->pos, nbytes, what);
}

static void diff_end(differential *d) { finish_oracle(d->out, d->len, d->pos); }

/* ---- seeds: known answers ---------------------------------------------- */

typedef struct seed_case {
    int64_t root;
    const char *partition, *stream;
    const bl_key *keys;
    size_t nkeys;
    const char *hex;
    const char *payload;   /* NULL where the spec gives none */
    uint64_t k0, k1;       /* 0, 0 where the spec gives no Philox key */
} seed_case;

static void check_seed_case(const seed_case *c)
{
    bl_seed s;
    char hex[65];
    bl_error err = {0};
    assert_int_equal(bl_seed_for(c->root, c->partition, c->stream, c->keys, c->nkeys, &s, &err),
                     BL_OK);
    bl_seed_hex(&s, hex);
    assert_string_equal(hex, c->hex);
    if (c->payload) {
        char *p = NULL;
        assert_int_equal(bl_seed_payload(c->root, c->partition, c->stream, c->keys, c->nkeys,
                                         &p, &err),
                         BL_OK);
        assert_string_equal(p, c->payload);
        bl_free(p);
    }
    if (c->k0 || c->k1) {
        bl_philox ph;
        bl_philox_seed(&ph, &s);
        expect_u64("philox key 0", 0, ph.key[0], c->k0);
        expect_u64("philox key 1", 1, ph.key[1], c->k1);
    }
}

static void test_seed_known_answers(void **state)
{
    (void)state;
    const bl_key trial[] = {BL_KEY_S("trial")};
    const bl_key cue_world[] = {BL_KEY_S("paired-worlds"), BL_KEY_S("delayed_cue"), BL_KEY_I(0),
                                BL_KEY_I(0)};
    const bl_key construction[] = {BL_KEY_S("paired-construction"), BL_KEY_S("falandays"),
                                   BL_KEY_I(64), BL_KEY_I(3), BL_KEY_I(2), BL_KEY_I(0)};
    const bl_key mechanism[] = {BL_KEY_S("paired-mechanism"), BL_KEY_S("falandays"), BL_KEY_I(0),
                                BL_KEY_I(0)};
    const bl_key pair_int[] = {BL_KEY_S("pair"), BL_KEY_I(1)};
    const bl_key pair_str[] = {BL_KEY_S("pair"), BL_KEY_S("1")};
    const bl_key tracking[] = {BL_KEY_S("tracking")};
    const seed_case cases[] = {
        /* models.md Appendix A.1 */
        {1, "development", "drive", trial, 1,
         "f3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c53180",
         "[\"philox-host-v1\",1,\"development\",\"drive\",[[\"str\",\"trial\"]]]",
         UINT64_C(0x45ec4b57fdb1dfb9), UINT64_C(0xa54b4bf1b8bbf4be)},
        {0, "development", "world", cue_world, 4,
         "1acf45837d9102f34b6b05cce6077ec33d3d9d9c05c8bca113c12351f63f60c2", NULL,
         UINT64_C(0xcced038103d3e8b4), UINT64_C(0xcf5ddfca0551b9bf)},
        {12001, "development", "construction", construction, 6,
         "d55386b281c32ae309c0ce50038a639c7511f8a10cda6c42da6638d52d84fd60",
         "[\"philox-host-v1\",12001,\"development\",\"construction\",[[\"str\",\"paired-"
         "construction\"],[\"str\",\"falandays\"],[\"int\",64],[\"int\",3],[\"int\",2],[\"int\","
         "0]]]",
         UINT64_C(0xd10efd18bde53047), UINT64_C(0x904711fa1b238ead)},
        {1, "development", "world", pair_int, 2,
         "a4a3bdfee5e1e99f1e7c2eb8b1896ef4352613c65e1f2a1f3a7075022831166d",
         "[\"philox-host-v1\",1,\"development\",\"world\",[[\"str\",\"pair\"],[\"int\",1]]]",
         UINT64_C(0x19437793a88f5600), UINT64_C(0x998a1470a8d0351a)},
        {1, "development", "world", pair_str, 2,
         "b2b6b754be548ce3eec1792648098de8e6d372cd42d977af30d24dbf67f27593",
         "[\"philox-host-v1\",1,\"development\",\"world\",[[\"str\",\"pair\"],[\"str\",\"1\"]]]",
         UINT64_C(0xf64db64681177ea6), UINT64_C(0xdbad37786f1ff9b2)},
        {0, "validation", "world", tracking, 1,
         "425b81728c208348467daa13730f4fe0206381ad2c08b154bf531ad74d97b8c5",
         "[\"philox-host-v1\",0,\"validation\",\"world\",[[\"str\",\"tracking\"]]]",
         UINT64_C(0x1c9b41ddf26847bf), UINT64_C(0x4056cac33d6199fb)},
        /* platform.md §4.2 (payloads of rows 2-5 follow the rule of step 1) */
        {11001, "development", "world", cue_world, 4,
         "fa4223269fd5d8d4f63b45e313be103f2dfd138aa6d1eeaaa23d65115fc41e73",
         "[\"philox-host-v1\",11001,\"development\",\"world\",[[\"str\",\"paired-worlds\"],"
         "[\"str\",\"delayed_cue\"],[\"int\",0],[\"int\",0]]]",
         0, 0},
        {11001, "development", "construction", construction, 6,
         "6e3d4efe93bfcd068a677746ef0de84899f559ecbc30d407d65120e4f02e3626",
         "[\"philox-host-v1\",11001,\"development\",\"construction\",[[\"str\",\"paired-"
         "construction\"],[\"str\",\"falandays\"],[\"int\",64],[\"int\",3],[\"int\",2],[\"int\","
         "0]]]",
         0, 0},
        {11001, "development", "drive", mechanism, 4,
         "354d2ce68199393aa1bae20848537f668adcc933b61c881d3ad57cf423d7b4d6",
         "[\"philox-host-v1\",11001,\"development\",\"drive\",[[\"str\",\"paired-mechanism\"],"
         "[\"str\",\"falandays\"],[\"int\",0],[\"int\",0]]]",
         0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_seed_case(&cases[i]);
    /* tasks.md §7.4: world seeds, root 91337, "calibration", block 0, trial 0. */
    for (size_t i = 0; i < 3; i++) {
        const bl_test_block0 *v = &bl_test_calibration_block0[i];
        const bl_key keys[] = {BL_KEY_S("paired-worlds"), BL_KEY_S(v->task), BL_KEY_I(0),
                               BL_KEY_I(0)};
        check_seed_case(&(seed_case){BL_TEST_CALIBRATION_ROOT, "calibration", "world", keys, 4,
                                     v->world, NULL, 0, 0});
    }

    /* The display form is the byte-reverse of hexdigest() (platform.md §4.2). */
    char *p = NULL;
    uint8_t digest[BL_SHA256_BYTES];
    char dhex[65];
    OK_E(bl_seed_payload(11001, "development", "world", cases[6].keys, 4, &p, &e_));
    OK_E(bl_sha256(p, strlen(p), digest, &e_));
    bl_hex(digest, sizeof digest, dhex);
    assert_memory_equal(dhex, "731ec45f", 8);
    assert_string_equal(dhex + 56, "262342fa");
    bl_free(p);
}

/* tasks.md §7.4: control seeds and their first three uniforms. */
static void test_seed_control_stream(void **state)
{
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        const bl_test_block0 *v = &bl_test_calibration_block0[i];
        const bl_key keys[] = {BL_KEY_S("paired-mechanism"), BL_KEY_S(v->task), BL_KEY_I(0),
                               BL_KEY_I(0)};
        bl_seed s;
        char hex[65];
        OK_E(bl_seed_for(BL_TEST_CALIBRATION_ROOT, "calibration", "control", keys, 4, &s, &e_));
        bl_seed_hex(&s, hex);
        assert_string_equal(hex, v->control);
        bl_gen g;
        OK_E(bl_gen_for(&g, BL_TEST_CALIBRATION_ROOT, "calibration", "control", keys, 4, &e_));
        for (size_t k = 0; k < 3; k++)
            expect_double(v->task, k, bl_gen_random(&g), v->u[k]);
    }
}

static void test_seed_identity_and_payload(void **state)
{
    (void)state;
    bl_seed a, b, c, d;
    const bl_key k_int[] = {BL_KEY_S("pair"), BL_KEY_I(1)};
    const bl_key k_str[] = {BL_KEY_S("pair"), BL_KEY_S("1")};
    const bl_key k_bool[] = {BL_KEY_S("pair"), {.type = BL_KEY_BOOL, .i = 1}};
    OK_E(bl_seed_for(1, "development", "world", k_int, 2, &a, &e_));
    OK_E(bl_seed_for(1, "development", "world", k_int, 2, &b, &e_));
    assert_memory_equal(&a, &b, sizeof a);
    OK_E(bl_seed_for(1, "development", "world", k_str, 2, &b, &e_));
    assert_memory_not_equal(&a, &b, sizeof a);
    OK_E(bl_seed_for(1, "development", "world", k_bool, 2, &c, &e_));
    assert_memory_not_equal(&a, &c, sizeof a);
    assert_memory_not_equal(&b, &c, sizeof b);
    OK_E(bl_seed_for(1, "validation", "world", k_int, 2, &d, &e_));
    assert_memory_not_equal(&a, &d, sizeof a);
    OK_E(bl_seed_for(1, "development", "world", NULL, 0, &d, &e_));
    char *p = NULL;
    OK_E(bl_seed_payload(1, "development", "world", NULL, 0, &p, &e_));
    assert_string_equal(p, "[\"philox-host-v1\",1,\"development\",\"world\",[]]");
    bl_free(p);

    /* Python json.dumps escaping with ensure_ascii (DEL included), bools,
     * negative roots and the int64 extremes (expected text from Python). */
    const bl_key odd[] = {
        BL_KEY_S("caf\xc3\xa9 \"q\" \\ \n\t\b\f\r\x01\x7f \xf0\x9f\x98\x80 \xe2\x82\xac"),
        {.type = BL_KEY_BOOL, .i = 1},
        {.type = BL_KEY_BOOL, .i = 0},
        BL_KEY_I(INT64_MIN),
        BL_KEY_I(INT64_MAX),
    };
    OK_E(bl_seed_payload(-7, "d\xc3\xa9v", "a/b", odd, 5, &p, &e_));
    assert_string_equal(
        p, "[\"philox-host-v1\",-7,\"d\\u00e9v\",\"a/b\",[[\"str\",\"caf\\u00e9 \\\"q\\\" \\\\ "
           "\\n\\t\\b\\f\\r\\u0001\\u007f \\ud83d\\ude00 \\u20ac\"],[\"bool\",true],[\"bool\","
           "false],[\"int\",-9223372036854775808],[\"int\",9223372036854775807]]]");
    bl_free(p);
    char hex[65];
    OK_E(bl_seed_for(-7, "d\xc3\xa9v", "a/b", odd, 5, &a, &e_));
    bl_seed_hex(&a, hex);
    assert_string_equal(hex, "0a5eccd51683a706933fbc66992b1be95ca6e7cb25ae9b047d66a0d48d779373");

    /* Invalid UTF-8 and missing strings are value errors, never a seed. */
    bl_error err = {0};
    const bl_key bad[] = {BL_KEY_S("ok"), BL_KEY_S("\xff")};
    assert_int_equal(bl_seed_for(1, "development", "world", bad, 2, &a, &err), BL_EVALUE);
    assert_int_equal(bl_seed_for(1, "\xc3", "world", NULL, 0, &a, &err), BL_EVALUE);
    assert_int_equal(bl_seed_for(1, NULL, "world", NULL, 0, &a, &err), BL_EVALUE);
    assert_int_equal(bl_seed_payload(1, "d", "s", bad, 2, &p, &err), BL_EVALUE);
    assert_null(p);
    const bl_key badtype[] = {{.type = (bl_key_type)42}};
    assert_int_equal(bl_seed_for(1, "d", "s", badtype, 1, &a, &err), BL_EVALUE);
}

static void test_seed_forms(void **state)
{
    (void)state;
    char hex[65], dec[80];
    bl_seed s = bl_seed_from_u64(0);
    bl_seed_hex(&s, hex);
    assert_string_equal(hex, "0000000000000000000000000000000000000000000000000000000000000000");
    bl_seed_decimal(&s, dec);
    assert_string_equal(dec, "0");
    s = bl_seed_from_u64(UINT64_C(10000000000000000000));
    bl_seed_decimal(&s, dec);
    assert_string_equal(dec, "10000000000000000000");
    s = (bl_seed){{0, 1, 0, 0}};
    bl_seed_decimal(&s, dec);
    assert_string_equal(dec, "18446744073709551616");
    s = (bl_seed){{UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX}};
    bl_seed_decimal(&s, dec);
    assert_string_equal(dec, "1157920892373161954235709850086879078532699846656405640394575840079"
                             "13129639935");
    bl_seed_hex(&s, hex);
    assert_string_equal(hex, "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
    s = seed_of_hex("F3EB1DA8B788B4CA41531CF9D84FC5BDF5646A1B1E1A89DECDAD1935A2C53180");
    assert_true(s.limb[3] == UINT64_C(0xf3eb1da8b788b4ca));
    assert_true(s.limb[0] == UINT64_C(0xcdad1935a2c53180));
    bl_seed_decimal(&s, dec);
    assert_string_equal(dec, "1103274359652001367485463263126913126887572457067446363523456598"
                             "63941429670272");
    bl_seed_hex(&s, hex);
    assert_string_equal(hex, "f3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c53180");

    bl_error err = {0};
    const char *bad[] = {
        "",
        "f3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c5318",
        "f3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c531800",
        "g3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c53180",
        "f3eb1da8b788b4ca41531cf9d84fc5bdf5646a1b1e1a89decdad1935a2c5318 ",
        NULL,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(bl_seed_from_hex(bad[i], &s, &err), BL_EVALUE);
}

static void test_seed_allocation_failures(void **state)
{
    (void)state;
    /* A key longer than the stack buffer sends the payload to the heap;
     * every allocation on the way may fail and must fail cleanly. */
    char longkey[1500];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    const bl_key keys[] = {BL_KEY_S(longkey), BL_KEY_I(3)};
    bl_seed ref, s;
    OK_E(bl_seed_for(5, "development", "drive", keys, 2, &ref, &e_));
    for (long n = 1;; n++) {
        bl_error err = {0};
        bl_alloc_fail_at(n);
        bl_status st = bl_seed_for(5, "development", "drive", keys, 2, &s, &err);
        bl_alloc_fail_at(0);
        if (st == BL_OK) {
            assert_true(n > 1);
            assert_memory_equal(&s, &ref, sizeof s);
            break;
        }
        assert_int_equal(st, BL_ENOMEM);
    }
    for (int big = 0; big < 2; big++) {
        for (long n = 1;; n++) {
            bl_error err = {0};
            char *p = NULL;
            bl_alloc_fail_at(n);
            bl_status st = bl_seed_payload(5, "development", "drive", big ? keys : keys + 1,
                                           big ? 2 : 1, &p, &err);
            bl_alloc_fail_at(0);
            if (st == BL_OK) {
                assert_true(n > 1);
                assert_non_null(p);
                bl_free(p);
                break;
            }
            assert_int_equal(st, BL_ENOMEM);
            assert_null(p);
        }
    }
    /* The common case allocates nothing at all. */
    bl_alloc_fail_at(1);
    OK_E(bl_seed_for(5, "development", "drive", keys + 1, 1, &s, &e_));
    assert_int_equal(bl_alloc_count(), 0);
    bl_alloc_fail_at(0);
}

/* ---- ziggurat tables --------------------------------------------------- */

static void test_ziggurat_tables(void **state)
{
    (void)state;
    static unsigned char blob[3 * BL_ZIG_LAYERS * 8];
    for (size_t i = 0; i < BL_ZIG_LAYERS; i++) {
        uint64_t v[3] = {bl_zig_ki[i], bl_test_bits(bl_zig_wi[i]), bl_test_bits(bl_zig_fi[i])};
        for (size_t t = 0; t < 3; t++)
            for (size_t b = 0; b < 8; b++)
                blob[(t * BL_ZIG_LAYERS + i) * 8 + b] = (unsigned char)(v[t] >> (8 * b));
    }
    uint8_t digest[BL_SHA256_BYTES];
    char hex[65];
    OK_E(bl_sha256(blob, sizeof blob, digest, &e_));
    bl_hex(digest, sizeof digest, hex);
    assert_string_equal(hex, "d46841a090f638a74c6bd112345fe681089be798d725b251129f062cad5521a3");
    /* The first entries as models.md §6.3 prints them. */
    expect_u64("ki", 0, bl_zig_ki[0], UINT64_C(0x000EF33D8025EF6A));
    expect_u64("ki", 1, bl_zig_ki[1], 0);
    expect_double("wi", 0, bl_zig_wi[0], 8.68362706080130616677e-16);
    expect_double("fi", 0, bl_zig_fi[0], 1.0);
    expect_double("fi", 1, bl_zig_fi[1], 9.77101701267671596263e-01);
}

/* ---- generator: known answers (models.md A.2) --------------------------- */

static void kat_gen(bl_gen *g)
{
    const bl_key keys[] = {BL_KEY_S("trial")};
    OK_E(bl_gen_for(g, 1, "development", "drive", keys, 1, &e_));
}

static void test_generator_known_answers(void **state)
{
    (void)state;
    bl_gen g;
    const uint64_t raw[6] = {
        UINT64_C(0x0c3ff8770f272ec7), UINT64_C(0xa020c5b35ec6bbb9), UINT64_C(0x4122b9777d7e5932),
        UINT64_C(0xc64dab8af162c1ea), UINT64_C(0x33f224530231d08f), UINT64_C(0x44211b69e15c9c04),
    };
    kat_gen(&g);
    for (size_t i = 0; i < 6; i++)
        expect_u64("raw", i, bl_philox_next64(&g.bits), raw[i]);
    /* The same stream from the explicit key and a zero counter. */
    bl_philox p;
    const uint64_t key[2] = {UINT64_C(0x45ec4b57fdb1dfb9), UINT64_C(0xa54b4bf1b8bbf4be)};
    const uint64_t ctr[4] = {0, 0, 0, 0};
    bl_philox_set(&p, key, ctr);
    for (size_t i = 0; i < 6; i++)
        expect_u64("raw from key", i, bl_philox_next64(&p), raw[i]);
    /* next32: low half first, then the cached high half. */
    bl_philox_set(&p, key, ctr);
    expect_u64("next32", 0, bl_philox_next32(&p), raw[0] & UINT32_MAX);
    expect_u64("next64 keeps the cache", 1, bl_philox_next64(&p), raw[1]);
    expect_u64("next32", 2, bl_philox_next32(&p), raw[0] >> 32);
    expect_u64("next32", 3, bl_philox_next32(&p), raw[2] & UINT32_MAX);
    expect_double("next_double", 4, bl_philox_next_double(&p),
                  (double)(raw[3] >> 11) * 0x1p-53);

    const double rnd[4] = {0.04785111338346992, 0.6255000651279045, 0.25443610350839074,
                           0.774622651502237};
    kat_gen(&g);
    for (size_t i = 0; i < 4; i++)
        expect_double("random", i, bl_gen_random(&g), rnd[i]);

    const double nrm[6] = {0.8013643686741515, -0.007850994764264565, -0.03502714492764279,
                           -0.506051717186213, 1.0213569024911926, 0.04840617901350069};
    double buf[6];
    kat_gen(&g);
    bl_gen_standard_normal_fill(&g, buf, 6);
    for (size_t i = 0; i < 6; i++)
        expect_double("standard_normal fill", i, buf[i], nrm[i]);
    kat_gen(&g);
    for (size_t i = 0; i < 6; i++)
        expect_double("standard_normal", i, bl_gen_standard_normal(&g), nrm[i]);

    const int64_t ints[5] = {0, 0, 2, 4, 3};
    kat_gen(&g);
    for (size_t i = 0; i < 5; i++)
        expect_i64("integers(0,7)", i, bl_gen_integers(&g, 0, 7), ints[i]);
    /* Five 32-bit draws used three 64-bit words (the cache holds one half). */
    assert_int_equal(g.bits.buffer_pos, 3);
    assert_int_equal(g.bits.has_uint32, 1);

    const int64_t perm[10] = {6, 8, 0, 4, 5, 2, 3, 1, 9, 7};
    int64_t out[10];
    kat_gen(&g);
    bl_gen_permutation(&g, out, 10);
    for (size_t i = 0; i < 10; i++)
        expect_i64("permutation(10)", i, out[i], perm[i]);

    /* integers(0, 1) and choice of one element consume nothing. */
    kat_gen(&g);
    assert_int_equal(bl_gen_integers(&g, 0, 1), 0);
    assert_int_equal(bl_gen_integers(&g, -5, -4), -5);
    assert_int_equal(bl_gen_choice_index(&g, 1), 0);
    assert_int_equal(bl_gen_interval(&g, 0), 0);
    expect_u64("after no-ops", 0, bl_philox_next64(&g.bits), raw[0]);
    /* Uniform is lo + (hi - lo) * random. */
    kat_gen(&g);
    expect_double("uniform", 0, bl_gen_uniform(&g, -2.0, 3.0), -2.0 + 5.0 * rnd[0]);
}

/* ---- bulk fills against one-at-a-time draws ----------------------------- */

/* Fails unless two bit generators are in the same state, word for word
 * (the last block's buffer included, as NumPy's state would show it). */
static void expect_same_philox(const char *what, size_t i, const bl_philox *a, const bl_philox *b)
{
    bool same = a->buffer_pos == b->buffer_pos && a->has_uint32 == b->has_uint32 &&
                (!a->has_uint32 || a->uinteger == b->uinteger);
    for (size_t k = 0; k < 4; k++)
        same = same && a->ctr[k] == b->ctr[k] && a->buffer[k] == b->buffer[k];
    same = same && a->key[0] == b->key[0] && a->key[1] == b->key[1];
    if (!same)
        fail_msg("%s: case %zu: state differs (buffer_pos %d vs %d, ctr[0] %016" PRIx64
                 " vs %016" PRIx64 ")",
                 what, i, a->buffer_pos, b->buffer_pos, a->ctr[0], b->ctr[0]);
}

/* Lengths around every boundary a fill has: the 4-word block, the
 * generator's 256-word chunk, and a few chunks. */
static const size_t fill_lengths[] = {0,   1,   2,   3,   4,   5,   7,   8,    9,    15,
                                      16,  17,  63,  64,  65,  252, 255, 256,  257,  260,
                                      511, 512, 513, 767, 769, 1000, 1024, 1025, 4099};
#define N_FILL_LENGTHS (sizeof fill_lengths / sizeof fill_lengths[0])

/* A generator from the test's seed source, advanced by `skip` words (so
 * its buffer starts part-used) and, when `half`, by one 32-bit draw (so
 * the cached upper half is set: next64 and the fills must leave it be). */
static void fill_gen(bl_gen *g, uint64_t seed, size_t skip, bool half)
{
    const bl_seed s = bl_seed_from_u64(seed);
    bl_gen_init(g, &s);
    for (size_t k = 0; k < skip; k++)
        (void)bl_philox_next64(&g->bits);
    if (half)
        (void)bl_philox_next32(&g->bits);
}

/* Every bulk path the CPU has, and the default, against one-at-a-time
 * draws (Random123's function): values, the state left behind, and the
 * stream after it. */
static void test_fill64_matches_next64(void **state)
{
    (void)state;
    uint64_t *bulk = bl_mallocarray(4099, sizeof *bulk);
    assert_non_null(bulk);
    size_t cases = 0, paths = 0;
    for (int path = -1; path < (int)BL_PHILOX_PATH_COUNT; path++) {
        if (path >= 0 && !bl_philox_path_supported((bl_philox_path)path))
            continue;
        paths++;
        for (size_t si = 0; si < 6; si++) {
            const uint64_t seed = sm_next();
            for (size_t skip = 0; skip < 6; skip++) {
                for (size_t li = 0; li < N_FILL_LENGTHS; li++) {
                    const size_t n = fill_lengths[li];
                    bl_gen a, b;
                    fill_gen(&a, seed, skip, skip % 2 == 1);
                    fill_gen(&b, seed, skip, skip % 2 == 1);
                    if (path < 0)
                        bl_philox_fill64(&a.bits, bulk, n);
                    else
                        bl_philox_fill64_path(&a.bits, bulk, n, (bl_philox_path)path);
                    for (size_t k = 0; k < n; k++)
                        expect_u64("fill64", k, bulk[k], bl_philox_next64(&b.bits));
                    expect_same_philox("fill64 state", cases, &a.bits, &b.bits);
                    /* And the streams go on together, in both widths. */
                    expect_u64("after fill64", 0, bl_philox_next64(&a.bits),
                               bl_philox_next64(&b.bits));
                    expect_u64("next32 after fill64", 0, bl_philox_next32(&a.bits),
                               bl_philox_next32(&b.bits));
                    cases++;
                }
            }
        }
        /* The 256-bit counter carries across words inside a fill, near
         * the start, the middle and the end of an eight-block stretch. */
        const uint64_t key[2] = {sm_next(), sm_next()};
        const uint64_t ctrs[][4] = {{UINT64_MAX - 2, 5, 0, 0},
                                    {UINT64_MAX - 5, UINT64_MAX, 0, 0},
                                    {UINT64_MAX - 8, 7, 0, 0},
                                    {UINT64_MAX - 9, UINT64_MAX, 3, 0},
                                    {UINT64_MAX - 1, UINT64_MAX, UINT64_MAX, 9},
                                    {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX}};
        const size_t lens[] = {41, 200};
        for (size_t ci = 0; ci < sizeof ctrs / sizeof ctrs[0]; ci++) {
            for (size_t skip = 0; skip < 5; skip++) {
                for (size_t li = 0; li < 2; li++) {
                    bl_philox a, b;
                    bl_philox_set(&a, key, ctrs[ci]);
                    bl_philox_set(&b, key, ctrs[ci]);
                    for (size_t k = 0; k < skip; k++) {
                        (void)bl_philox_next64(&a);
                        (void)bl_philox_next64(&b);
                    }
                    if (path < 0)
                        bl_philox_fill64(&a, bulk, lens[li]);
                    else
                        bl_philox_fill64_path(&a, bulk, lens[li], (bl_philox_path)path);
                    for (size_t k = 0; k < lens[li]; k++)
                        expect_u64("fill64 across a carry", k, bulk[k], bl_philox_next64(&b));
                    expect_same_philox("fill64 state across a carry", ci, &a, &b);
                    cases++;
                }
            }
        }
    }
    bl_free(bulk);
    print_message("  %zu fill64 cases on %zu paths (the default included)\n", cases, paths);
}

static void test_uniform_fills_match_single(void **state)
{
    (void)state;
    double *bulk = bl_mallocarray(4099, sizeof *bulk);
    assert_non_null(bulk);
    /* Thresholds at the edges: nothing, everything, the smallest
     * subnormal, and values a uniform can equal exactly. */
    const double ps[] = {0.0, 1.0, 0.1, 0.5, 0x1p-1074, 0x1p-53, 1.0 - 0x1p-53, 0.75};
    size_t cases = 0;
    for (size_t si = 0; si < 4; si++) {
        const uint64_t seed = sm_next();
        for (size_t skip = 0; skip < 4; skip++) {
            for (size_t li = 0; li < N_FILL_LENGTHS; li++) {
                const size_t n = fill_lengths[li];
                bl_gen a, b;
                fill_gen(&a, seed, skip, skip == 3);
                fill_gen(&b, seed, skip, skip == 3);
                bl_gen_random_fill(&a, bulk, n);
                for (size_t k = 0; k < n; k++)
                    expect_double("random fill", k, bulk[k], bl_gen_random(&b));
                expect_same_philox("random fill state", cases, &a.bits, &b.bits);

                const double p = ps[(si * N_FILL_LENGTHS + li) % (sizeof ps / sizeof ps[0])];
                bl_gen_bernoulli_fill(&a, bulk, n, p);
                for (size_t k = 0; k < n; k++)
                    expect_double("bernoulli fill", k, bulk[k],
                                  bl_gen_random(&b) < p ? 1.0 : 0.0);
                expect_same_philox("bernoulli fill state", cases, &a.bits, &b.bits);
                cases++;
            }
        }
    }
    bl_free(bulk);
    print_message("  %zu uniform fill cases\n", cases);
}

/* The raw-word bound of the Bernoulli fill against the comparison it
 * stands for, random() < p with random() = (r >> 11) * 2^-53, on the words
 * where the two could part: either side of the bound, either side of each
 * 2^11 step around it, the extremes, and random words; for thresholds at
 * the edges (nothing, everything, NaN, the grid's own values and their
 * neighbours, just under 1 where ceil(p * 2^53) is 2^53). */
static void test_bernoulli_bound_edges(void **state)
{
    (void)state;
    double ps[64];
    size_t np = 0;
    const double fixed[] = {0.0,   -0.0,      -1.0,        NAN,         2.0,         1.0,
                            0.5,   0.1,       0.75,        0x1p-53,     0x1p-1074,   1.0 - 0x1p-53,
                            1.0 - 0x1p-54, 3 * 0x1p-53, 0x1p-52 + 0x1p-53, 1e-300, INFINITY};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        ps[np++] = fixed[i];
        if (isfinite(fixed[i])) {
            ps[np++] = nextafter(fixed[i], 0.0);
            ps[np++] = nextafter(fixed[i], 2.0);
        }
    }
    size_t checked = 0;
    for (size_t i = 0; i < np + 16; i++) {
        const double p = i < np ? ps[i] : (double)(sm_next() >> 11) * 0x1p-53;
        bool all;
        const uint64_t bound = bl_bernoulli_bound(p, &all);
        const uint64_t k = p > 0.0 && p < 1.0 ? (uint64_t)(p * 0x1p53) : 0;
        uint64_t words[24] = {0, 1, 2047, 2048, UINT64_MAX, UINT64_MAX - 2047, bound - 1, bound,
                              bound + 1, bound - 2048, bound + 2048, bound - 2049, (k << 11) - 1,
                              k << 11, (k << 11) | 2047, (k + 1) << 11, ((k + 1) << 11) - 1};
        for (size_t j = 17; j < 24; j++)
            words[j] = sm_next();
        for (size_t j = 0; j < 24; j++) {
            const uint64_t r = words[j];
            const bool want = (double)(r >> 11) * (1.0 / 9007199254740992.0) < p;
            if ((all || r < bound) != want)
                fail_msg("p %a, word %016" PRIx64 ": bound %016" PRIx64 " (all %d) says %d, the "
                         "comparison %d",
                         p, r, bound, all, all || r < bound, want);
            checked++;
        }
    }
    print_message("  %zu bernoulli bound cases\n", checked);
}

/* Whether raw word r is a ziggurat candidate that is rejected outright
 * (outside its layer's rectangle), and whether it starts the tail. */
static bool zig_rejects(uint64_t r, bool *tail)
{
    const unsigned idx = (unsigned)(r & 0xff);
    const uint64_t rabs = (r >> 9) & UINT64_C(0x000fffffffffffff);
    *tail = idx == 0;
    return rabs >= bl_zig_ki[idx];
}

/* n normals from a generator advanced by `skip` words: bulk against one at
 * a time, values and the state left behind. */
static void expect_normal_fill(uint64_t seed, size_t skip, size_t n, double *bulk)
{
    bl_gen a, b;
    fill_gen(&a, seed, skip, false);
    fill_gen(&b, seed, skip, false);
    bl_gen_standard_normal_fill(&a, bulk, n);
    for (size_t k = 0; k < n; k++)
        expect_double("standard_normal fill", k, bulk[k], bl_gen_standard_normal(&b));
    expect_same_philox("standard_normal fill state", skip, &a.bits, &b.bits);
}

static void test_normal_fill_matches_single(void **state)
{
    (void)state;
    enum { SCAN = 40000, LONG = 300000 };
    double *bulk = bl_mallocarray(LONG, sizeof *bulk);
    uint64_t *raw = bl_mallocarray(SCAN, sizeof *raw);
    assert_non_null(bulk);
    assert_non_null(raw);
    size_t cases = 0;
    /* Every length, from part-used buffers. */
    for (size_t si = 0; si < 4; si++) {
        const uint64_t seed = sm_next();
        for (size_t skip = 0; skip < 4; skip++)
            for (size_t li = 0; li < N_FILL_LENGTHS; li++, cases++)
                expect_normal_fill(seed, skip, fill_lengths[li], bulk);
    }
    /* Long fills: hundreds of wedge and tail rejections at arbitrary
     * places. */
    size_t tails = 0;
    for (size_t si = 0; si < 2; si++, cases++) {
        const uint64_t seed = sm_next();
        expect_normal_fill(seed, si, LONG, bulk);
        for (size_t k = 0; k < LONG; k++)
            tails += bulk[k] > BL_ZIG_R || bulk[k] < -BL_ZIG_R;
    }
    assert_true(tails >= 100);
    /* A rejected candidate, and one that starts the tail, at every place in
     * and around the first 256-word chunk: at its last word the extra words
     * come from the generator itself, and a fill that ends on a rejection
     * draws its extra words after its chunk. The starting offsets sweep the
     * candidate through every chunk position (whatever chunk size up to 300
     * words the fill uses). */
    const uint64_t seed = sm_next();
    bl_gen g;
    fill_gen(&g, seed, 0, false);
    bl_philox_fill64(&g.bits, raw, SCAN);
    size_t reject = 0, tail = 0;
    for (size_t k = 300; k < SCAN && (!reject || !tail); k++) {
        bool is_tail;
        if (!zig_rejects(raw[k], &is_tail))
            continue;
        if (!reject && !is_tail)
            reject = k;
        if (!tail && is_tail)
            tail = k;
    }
    assert_true(reject > 0 && tail > 0);
    const size_t at[2] = {reject, tail};
    for (size_t w = 0; w < 2; w++) {
        for (size_t skip = at[w] - 300; skip <= at[w]; skip++) {
            expect_normal_fill(seed, skip, 600, bulk);
            /* The fill's last normal is the rejected candidate's. */
            expect_normal_fill(seed, skip, at[w] - skip + 1, bulk);
            cases += 2;
        }
    }
    bl_free(raw);
    bl_free(bulk);
    print_message("  %zu standard_normal fill cases, %zu tail draws in the long fills\n", cases,
                  tails);
}

/* ---- noise tapes -------------------------------------------------------- */

#define TAPE_ROWS 99
#define TAPE_W 3

static void tape_seed(bl_seed *s)
{
    const bl_key keys[] = {BL_KEY_S("paired-mechanism"), BL_KEY_S("falandays"), BL_KEY_I(0),
                           BL_KEY_I(0)};
    OK_E(bl_seed_for(0, "development", "drive", keys, 4, s, &e_));
}

static void test_tape_tiles(void **state)
{
    (void)state;
    bl_seed seed;
    tape_seed(&seed);
    /* The reference: standard_normal((99 + 64, 3)) in C order. */
    double ref[(TAPE_ROWS + 64) * TAPE_W];
    bl_gen g;
    bl_gen_init(&g, &seed);
    bl_gen_standard_normal_fill(&g, ref, sizeof ref / sizeof ref[0]);

    const size_t tiles[] = {1, 8, 64};
    for (size_t t = 0; t < 3; t++) {
        bl_tape *tape = NULL;
        const double *f = NULL;
        OK_E(bl_tape_create(&tape, &seed, TAPE_W, tiles[t], BL_TAPE_NORMAL, &e_));
        assert_int_equal(bl_tape_width(tape), TAPE_W);
        for (size_t r = 0; r < TAPE_ROWS; r++) {
            OK_E(bl_tape_frame(tape, &f, &e_));
            for (size_t j = 0; j < TAPE_W; j++)
                expect_double("tape frame", r * TAPE_W + j, f[j], ref[r * TAPE_W + j]);
        }
        assert_int_equal(bl_tape_consumed(tape), TAPE_ROWS);
        bl_tape_destroy(tape);
    }

    /* Preview does not consume; after consuming 3, preview(8) is rows 3-10. */
    bl_tape *tape = NULL;
    const double *f = NULL;
    bl_error err = {0};
    OK_E(bl_tape_create(&tape, &seed, TAPE_W, 64, BL_TAPE_NORMAL, &e_));
    OK_E(bl_tape_preview(tape, 5, &f, &e_));
    assert_int_equal(bl_tape_consumed(tape), 0);
    assert_memory_equal(f, ref, 5 * TAPE_W * sizeof *f);
    OK_E(bl_tape_preview(tape, 2, &f, &e_));
    assert_memory_equal(f, ref, 2 * TAPE_W * sizeof *f);
    OK_E(bl_tape_consume(tape, 3, &e_));
    assert_int_equal(bl_tape_consumed(tape), 3);
    OK_E(bl_tape_preview(tape, 8, &f, &e_));
    assert_memory_equal(f, ref + 3 * TAPE_W, 8 * TAPE_W * sizeof *f);
    /* More than prepared is an error and changes nothing. */
    assert_int_equal(bl_tape_consume(tape, 9, &err), BL_EVALUE);
    assert_int_equal(bl_tape_consumed(tape), 3);
    OK_E(bl_tape_consume(tape, 0, &e_));
    OK_E(bl_tape_consume(tape, 8, &e_));
    assert_int_equal(bl_tape_consume(tape, 1, &err), BL_EVALUE);
    assert_int_equal(bl_tape_preview(tape, 0, &f, &err), BL_EVALUE);
    assert_int_equal(bl_tape_preview(tape, 65, &f, &err), BL_EVALUE);
    OK_E(bl_tape_preview(tape, 64, &f, &e_));
    assert_memory_equal(f, ref + 11 * TAPE_W, 64 * TAPE_W * sizeof *f);
    bl_tape_destroy(tape);

    /* Arbitrary preview/consume patterns on several tiles read the same rows. */
    sm_state = 77;
    const size_t tiles2[] = {1, 2, 3, 5, 8, 64};
    for (size_t t = 0; t < 6; t++) {
        size_t tile = tiles2[t], cursor = 0;
        OK_E(bl_tape_create(&tape, &seed, TAPE_W, tile, BL_TAPE_NORMAL, &e_));
        while (cursor < TAPE_ROWS) {
            size_t c = 1 + (size_t)(sm_next() % tile);
            OK_E(bl_tape_preview(tape, c, &f, &e_));
            assert_memory_equal(f, ref + cursor * TAPE_W, c * TAPE_W * sizeof *f);
            size_t k = (size_t)(sm_next() % (c + 1));
            OK_E(bl_tape_consume(tape, k, &e_));
            cursor += k;
            assert_int_equal(bl_tape_consumed(tape), cursor);
        }
        bl_tape_destroy(tape);
    }
}

static void test_tape_uniform_and_errors(void **state)
{
    (void)state;
    bl_seed seed = seed_of_hex("a3a97a9cef01b9e91ad3dd2fea3e098ca0dd7333574488b31a9ef9cdb2a60d20");
    double ref[200];
    bl_gen g;
    bl_gen_init(&g, &seed);
    bl_gen_random_fill(&g, ref, 200);
    expect_double("control uniform", 0, ref[0], 0.508355480901416);

    const size_t widths[] = {1, 5};
    for (size_t w = 0; w < 2; w++) {
        bl_tape *tape = NULL;
        const double *f = NULL;
        size_t width = widths[w];
        OK_E(bl_tape_create(&tape, &seed, width, 7, BL_TAPE_UNIFORM, &e_));
        OK_E(bl_tape_preview(tape, 7, &f, &e_));
        assert_memory_equal(f, ref, 7 * width * sizeof *f);
        for (size_t r = 0; r < 200 / width; r++) {
            OK_E(bl_tape_frame(tape, &f, &e_));
            assert_memory_equal(f, ref + r * width, width * sizeof *f);
        }
        bl_tape_destroy(tape);
    }

    bl_tape *tape = (bl_tape *)&seed;
    bl_error err = {0};
    assert_int_equal(bl_tape_create(&tape, &seed, 0, 4, BL_TAPE_NORMAL, &err), BL_EVALUE);
    assert_null(tape);
    assert_int_equal(bl_tape_create(&tape, &seed, 3, 0, BL_TAPE_NORMAL, &err), BL_EVALUE);
    assert_int_equal(bl_tape_create(&tape, &seed, 3, 4, (bl_tape_dist)9, &err), BL_EVALUE);
    assert_int_equal(bl_tape_create(&tape, &seed, SIZE_MAX / 2, 4, BL_TAPE_NORMAL, &err),
                     BL_ENOMEM);
    bl_tape_destroy(NULL);

    for (long n = 1;; n++) {
        bl_alloc_fail_at(n);
        bl_status st = bl_tape_create(&tape, &seed, 3, 8, BL_TAPE_NORMAL, &err);
        bl_alloc_fail_at(0);
        if (st == BL_OK) {
            assert_true(n > 2);
            bl_tape_destroy(tape);
            break;
        }
        assert_int_equal(st, BL_ENOMEM);
        assert_null(tape);
    }
}

/* ---- differential tests against NumPy ---------------------------------- */

static void test_numpy_bitstream(void **state)
{
    (void)state;
    differential np = diff_begin();
    const size_t raw_n[] = {1, 3, 4, 5, 8, 1000, 4097};
    enum { NCTR = 6 };
    const uint64_t M = UINT64_MAX;
    const uint64_t ctrs[NCTR][4] = {
        {0, 0, 0, 0},         {M - 2, 0, 0, 0},   {M - 1, M, 0, 0},
        {M - 1, M, M, 0},     {M - 1, M, M, M},   {12345, 678, 9, 10},
    };
    uint64_t keys[NCTR][2];
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_buf_printf(&np.req, "seedseq %s 16\n", np.hex[i]);
        bl_buf_printf(&np.req, "raw %s %zu\n", np.hex[i], raw_n[i % 7]);
        bl_buf_printf(&np.req, "raw %s 512\n", np.hex[i]);
    }
    for (size_t c = 0; c < NCTR; c++) {
        keys[c][0] = sm_next();
        keys[c][1] = sm_next();
        bl_buf_printf(&np.req,
                      "rawkey %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
                      " 9\n",
                      keys[c][0], keys[c][1], ctrs[c][0], ctrs[c][1], ctrs[c][2], ctrs[c][3]);
    }
    diff_send(&np);

    size_t words = 0;
    for (size_t i = 0; i < N_SEEDS; i++) {
        uint32_t ss[16];
        bl_seedseq_generate(&np.seeds[i], ss, 16);
        const unsigned char *rec = diff_record(&np, 16 * 4, "seedseq");
        for (size_t k = 0; k < 16; k++)
            if (ss[k] != le32(rec + 4 * k))
                fail_msg("seedseq %s word %zu: C %08x numpy %08x", np.hex[i], k, ss[k],
                         le32(rec + 4 * k));

        bl_philox p;
        bl_philox_seed(&p, &np.seeds[i]);
        size_t n = raw_n[i % 7];
        rec = diff_record(&np, n * 8, "raw");
        for (size_t k = 0; k < n; k++)
            expect_u64(np.hex[i], k, bl_philox_next64(&p), le64(rec + 8 * k));
        words += n;

        /* The 512-word stream also proves next32, next_double and
         * random_interval's consumption, derived from raw words here. */
        rec = diff_record(&np, 512 * 8, "raw 512");
        bl_philox_seed(&p, &np.seeds[i]);
        for (size_t k = 0; k < 64; k++) {
            uint64_t w = le64(rec + 8 * k);
            expect_u64("next32 low", k, bl_philox_next32(&p), w & UINT32_MAX);
            expect_u64("next32 high", k, bl_philox_next32(&p), w >> 32);
        }
        for (size_t k = 64; k < 128; k++)
            expect_double("next_double", k, bl_philox_next_double(&p),
                          (double)(le64(rec + 8 * k) >> 11) * 0x1p-53);
        bl_gen g;
        bl_gen_init(&g, &np.seeds[i]);
        for (size_t k = 0; k < 128; k++)
            (void)bl_philox_next64(&g.bits);
        size_t at = 128;
        const uint64_t maxes[] = {(UINT64_C(1) << 40) + 12345, UINT64_C(0x1ffffffff),
                                  UINT64_MAX - 7, UINT64_C(1) << 32};
        for (size_t m = 0; m < 4; m++) {
            uint64_t max = maxes[m], mask = max, v;
            for (int sh = 1; sh < 64; sh <<= 1)
                mask |= mask >> sh;
            do
                v = le64(rec + 8 * at++) & mask;
            while (v > max);
            expect_u64("interval64", m, bl_gen_interval(&g, max), v);
        }
        /* 32-bit interval: halves of the following words, low half first. */
        uint32_t halves[2 * 64];
        for (size_t k = 0; k < 64; k++) {
            uint64_t w = le64(rec + 8 * (at + k));
            halves[2 * k] = (uint32_t)w;
            halves[2 * k + 1] = (uint32_t)(w >> 32);
        }
        size_t h = 0;
        const uint64_t maxes32[] = {1, 2, 5, 1000, UINT32_MAX - 3, 0x80000000u, UINT32_MAX, 3};
        for (size_t m = 0; m < 8; m++) {
            uint64_t max = maxes32[m], mask = max, v;
            for (int sh = 1; sh < 64; sh <<= 1)
                mask |= mask >> sh;
            do
                v = halves[h++] & mask;
            while (v > max);
            expect_u64("interval32", m, bl_gen_interval(&g, max), v);
        }
        assert_true(h < 128);
    }
    for (size_t c = 0; c < NCTR; c++) {
        bl_philox p;
        bl_philox_set(&p, keys[c], ctrs[c]);
        const unsigned char *rec = diff_record(&np, 9 * 8, "rawkey");
        for (size_t k = 0; k < 9; k++)
            expect_u64("raw from key and counter", c * 100 + k, bl_philox_next64(&p),
                       le64(rec + 8 * k));
    }
    diff_end(&np);
    print_message("  %d seeds, %zu raw words, %d counter wraps\n", N_SEEDS, words, NCTR);
}

static void test_numpy_random_uniform(void **state)
{
    (void)state;
    differential np = diff_begin();
    const double bounds[][2] = {{0.0, 1.0}, {-1.0, 2.0}, {1e-3, 1e3}, {-3.25, 2.5},
                                {0.1, 0.7}, {-1e300, 1e300}, {5.0, 5.0}};
    const size_t nb = sizeof bounds / sizeof bounds[0];
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_buf_printf(&np.req, "random %s %zu\n", np.hex[i], 1000 + i);
        const double *b = bounds[i % nb];
        bl_buf_printf(&np.req, "uniform %s %.17g %.17g 777\n", np.hex[i], b[0], b[1]);
    }
    size_t draws = 0;
    diff_send(&np);
    double *buf = bl_mallocarray(2000, sizeof *buf);
    assert_non_null(buf);
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_gen g;
        size_t n = 1000 + i;
        bl_gen_init(&g, &np.seeds[i]);
        const unsigned char *rec = diff_record(&np, n * 8, "random");
        if (i % 2) {
            bl_gen_random_fill(&g, buf, n);
        } else {
            for (size_t k = 0; k < n; k++)
                buf[k] = bl_gen_random(&g);
        }
        for (size_t k = 0; k < n; k++)
            expect_u64("random", k, bl_test_bits(buf[k]), le64(rec + 8 * k));
        const double *b = bounds[i % nb];
        bl_gen_init(&g, &np.seeds[i]);
        rec = diff_record(&np, 777 * 8, "uniform");
        for (size_t k = 0; k < 777; k++)
            expect_u64("uniform", k, bl_test_bits(bl_gen_uniform(&g, b[0], b[1])), le64(rec + 8 * k));
        draws += n + 777;
    }
    bl_free(buf);
    diff_end(&np);
    print_message("  %d seeds, %zu draws\n", N_SEEDS, draws);
}

static void test_numpy_standard_normal(void **state)
{
    (void)state;
    differential np = diff_begin();
    /* 32 seeds x 32,000 plus a few short runs: over 10^6 normals. */
    const size_t big = 32000;
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_buf_printf(&np.req, "normal %s %zu\n", np.hex[i], big);
        bl_buf_printf(&np.req, "normal %s %zu\n", np.hex[i], 1 + i % 5);
    }
    size_t draws = 0, tail = 0;
    diff_send(&np);
    double *buf = bl_mallocarray(big, sizeof *buf);
    assert_non_null(buf);
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_gen g;
        bl_gen_init(&g, &np.seeds[i]);
        const unsigned char *rec = diff_record(&np, big * 8, "normal");
        if (i % 2) {
            bl_gen_standard_normal_fill(&g, buf, big);
        } else {
            for (size_t k = 0; k < big; k++)
                buf[k] = bl_gen_standard_normal(&g);
        }
        for (size_t k = 0; k < big; k++) {
            if (bl_test_bits(buf[k]) != le64(rec + 8 * k))
                fail_msg("normal seed %s draw %zu: C %.17g numpy %.17g", np.hex[i], k, buf[k],
                         bl_test_double(le64(rec + 8 * k)));
            /* Only the tail branch can give |x| beyond r. */
            if (buf[k] > BL_ZIG_R || buf[k] < -BL_ZIG_R)
                tail++;
        }
        draws += big;
        size_t n = 1 + i % 5;
        bl_gen_init(&g, &np.seeds[i]);
        rec = diff_record(&np, n * 8, "normal short");
        for (size_t k = 0; k < n; k++)
            expect_u64("normal short", k, bl_test_bits(bl_gen_standard_normal(&g)), le64(rec + 8 * k));
        draws += n;
    }
    bl_free(buf);
    diff_end(&np);
    print_message("  %d seeds, %zu normals, %zu tail draws\n", N_SEEDS, draws, tail);
    assert_true(draws >= 1000000);
    assert_true(tail >= 100);
}

typedef struct int_case {
    int64_t low, high;
} int_case;

static void test_numpy_integers(void **state)
{
    (void)state;
    differential np = diff_begin();
    const int64_t P32 = INT64_C(1) << 32;
    const int_case cases[] = {
        {0, 1},
        {0, 2},
        {0, 7},
        {0, INT64_C(1) << 31},
        {0, P32 - 1},
        {0, P32},
        {0, P32 + 1},
        {0, INT64_C(1) << 40},
        {0, INT64_MAX},
        {-5, 5},
        {-1, 0},
        {-(INT64_C(1) << 31), INT64_C(1) << 31},
        {-P32, 1},
        {-1000000000000, 1000000000003},
        {INT64_MIN, 0},
        {INT64_MIN, INT64_MAX},
        {INT64_MIN + 1, INT64_MAX},
        {INT64_MAX - 3, INT64_MAX},
        {3, 1000},
        {-7, 0x7fffffff},
        {0, (INT64_C(1) << 62) + 1},
    };
    const size_t nc = sizeof cases / sizeof cases[0];
    const size_t n = 300;
    for (size_t i = 0; i < N_SEEDS; i++)
        for (size_t c = 0; c < nc; c++)
            bl_buf_printf(&np.req, "%s %s %" PRId64 " %" PRId64 " %zu\n",
                          (i + c) % 4 ? "integers" : "integers1", np.hex[i], cases[c].low,
                          cases[c].high, n);
    size_t draws = 0;
    diff_send(&np);
    for (size_t i = 0; i < N_SEEDS; i++) {
        for (size_t c = 0; c < nc; c++) {
            bl_gen g;
            bl_gen_init(&g, &np.seeds[i]);
            const unsigned char *rec = diff_record(&np, n * 8, "integers");
            for (size_t k = 0; k < n; k++) {
                int64_t v = bl_gen_integers(&g, cases[c].low, cases[c].high);
                int64_t ref = (int64_t)le64(rec + 8 * k);
                if (v != ref)
                    fail_msg("integers(%" PRId64 ", %" PRId64 ") seed %s draw %zu: C %" PRId64
                             " numpy %" PRId64,
                             cases[c].low, cases[c].high, np.hex[i], k, v, ref);
            }
            draws += n;
        }
    }
    diff_end(&np);
    print_message("  %d seeds, %zu ranges, %zu draws\n", N_SEEDS, nc, draws);
}

static void test_numpy_permutation_shuffle_choice(void **state)
{
    (void)state;
    differential np = diff_begin();
    const size_t sizes[] = {0, 1, 2, 3, 10, 17, 100, 1000, 65539};
    const size_t ns = sizeof sizes / sizeof sizes[0];
    const size_t choice_len[] = {1, 2, 7, 1000, 100003};
    const size_t nch = sizeof choice_len / sizeof choice_len[0];
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_buf_printf(&np.req, "permutation %s %zu\n", np.hex[i], sizes[i % ns]);
        bl_buf_printf(&np.req, "shuffle %s %zu\n", np.hex[i], sizes[(i + 3) % ns]);
        bl_buf_printf(&np.req, "choice %s %zu 50\n", np.hex[i], choice_len[i % nch]);
    }
    size_t items = 0;
    diff_send(&np);
    int64_t *a = bl_mallocarray(2 * 65539, sizeof *a);
    unsigned char *b3 = bl_mallocarray(65539, 3);
    assert_non_null(a);
    assert_non_null(b3);
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_gen g;
        size_t n = sizes[i % ns];
        bl_gen_init(&g, &np.seeds[i]);
        bl_gen_permutation(&g, a, n);
        const unsigned char *rec = diff_record(&np, n * 8, "permutation");
        for (size_t k = 0; k < n; k++)
            expect_i64("permutation", k, a[k], (int64_t)le64(rec + 8 * k));
        items += n;

        /* shuffle twice in a row; the 3-byte copy proves the generic path. */
        n = sizes[(i + 3) % ns];
        bl_gen g3;
        bl_gen_init(&g, &np.seeds[i]);
        bl_gen_init(&g3, &np.seeds[i]);
        rec = diff_record(&np, 2 * n * 8, "shuffle");
        for (int round = 0; round < 2; round++) {
            for (size_t k = 0; k < n; k++) {
                a[k] = (int64_t)k;
                b3[3 * k] = (unsigned char)k;
                b3[3 * k + 1] = (unsigned char)(k >> 8);
                b3[3 * k + 2] = (unsigned char)(k >> 16);
            }
            bl_gen_shuffle(&g, a, n, sizeof *a);
            bl_gen_shuffle(&g3, b3, n, 3);
            for (size_t k = 0; k < n; k++) {
                int64_t ref = (int64_t)le64(rec + 8 * (round * n + k));
                expect_i64("shuffle", k, a[k], ref);
                expect_i64("shuffle 3-byte", k,
                           b3[3 * k] | b3[3 * k + 1] << 8 | b3[3 * k + 2] << 16, ref);
            }
            items += n;
        }

        size_t cl = choice_len[i % nch];
        bl_gen_init(&g, &np.seeds[i]);
        rec = diff_record(&np, 50 * 8, "choice");
        for (size_t k = 0; k < 50; k++)
            expect_i64("choice", k, (int64_t)bl_gen_choice_index(&g, cl),
                       (int64_t)le64(rec + 8 * k));
        items += 50;
    }
    bl_free(a);
    bl_free(b3);
    diff_end(&np);
    print_message("  %d seeds, %zu items\n", N_SEEDS, items);
}

/* One op of an interleaving script; see numpy_ref.py's "ops" request. */
typedef struct op {
    char kind;
    int64_t a, b;
} op;

static void op_text(bl_buf *b, const op *o)
{
    switch (o->kind) {
    case 'u':
        bl_buf_printf(b, "u:%.17g:%.17g", (double)o->a / 4.0, (double)o->b / 4.0);
        break;
    case 'i':
        bl_buf_printf(b, "i:%" PRId64 ":%" PRId64, o->a, o->b);
        break;
    case 'p':
    case 's':
    case 'c':
        bl_buf_printf(b, "%c:%" PRId64, o->kind, o->a);
        break;
    default:
        bl_buf_putc(b, o->kind);
    }
}

static op random_op(void)
{
    const int64_t P32 = INT64_C(1) << 32;
    const op menu[] = {
        {'r', 0, 0}, {'n', 0, 0}, {'w', 0, 0}, {'u', -8, 12},
        {'i', 0, 7}, {'i', 0, 1}, {'i', 0, 2}, {'i', -3, INT64_C(1) << 40},
        {'i', 0, P32}, {'i', 0, P32 - 1}, {'i', 0, P32 + 1}, {'i', INT64_MIN, INT64_MAX},
        {'p', 7, 0}, {'p', 1, 0}, {'s', 5, 0}, {'c', 1, 0}, {'c', 13, 0}, {'c', 1000, 0},
    };
    return menu[sm_next() % (sizeof menu / sizeof menu[0])];
}

static void test_numpy_interleaved(void **state)
{
    (void)state;
    differential np = diff_begin();
    enum { NOPS = 400, MIXED = 500 };
    static op script[N_SEEDS][NOPS];
    sm_state = 4242;
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_buf_printf(&np.req, "mixed %s %d\nops %s ", np.hex[i], MIXED, np.hex[i]);
        for (size_t k = 0; k < NOPS; k++) {
            script[i][k] = random_op();
            if (k)
                bl_buf_putc(&np.req, ',');
            op_text(&np.req, &script[i][k]);
        }
        bl_buf_putc(&np.req, '\n');
    }
    size_t values = 0;
    diff_send(&np);
    for (size_t i = 0; i < N_SEEDS; i++) {
        bl_gen g;
        bl_gen_init(&g, &np.seeds[i]);
        const unsigned char *rec = diff_record(&np, MIXED * 4 * 8, "mixed");
        for (size_t k = 0; k < MIXED; k++) {
            double v[4];
            v[0] = (double)bl_gen_integers(&g, 0, 7);
            v[1] = bl_gen_random(&g);
            v[2] = bl_gen_standard_normal(&g);
            v[3] = (double)bl_gen_integers(&g, 0, INT64_C(1) << 40);
            for (size_t j = 0; j < 4; j++)
                expect_u64("mixed", 4 * k + j, bl_test_bits(v[j]), le64(rec + 8 * (4 * k + j)));
        }
        values += 4 * MIXED;

        size_t nbytes = 0;
        for (size_t k = 0; k < NOPS; k++)
            nbytes += 8 * (script[i][k].kind == 'p' || script[i][k].kind == 's'
                               ? (size_t)script[i][k].a
                               : 1);
        rec = diff_record(&np, nbytes, "ops");
        bl_gen_init(&g, &np.seeds[i]);
        size_t at = 0;
        for (size_t k = 0; k < NOPS; k++) {
            const op *o = &script[i][k];
            int64_t buf[7];
            uint64_t v = 0;
            switch (o->kind) {
            case 'r':
                v = bl_test_bits(bl_gen_random(&g));
                break;
            case 'n':
                v = bl_test_bits(bl_gen_standard_normal(&g));
                break;
            case 'w':
                v = bl_philox_next64(&g.bits);
                break;
            case 'u':
                v = bl_test_bits(bl_gen_uniform(&g, (double)o->a / 4.0, (double)o->b / 4.0));
                break;
            case 'i':
                v = (uint64_t)bl_gen_integers(&g, o->a, o->b);
                break;
            case 'c':
                v = (uint64_t)bl_gen_choice_index(&g, (size_t)o->a);
                break;
            case 'p':
                bl_gen_permutation(&g, buf, (size_t)o->a);
                break;
            case 's':
                for (int64_t j = 0; j < o->a; j++)
                    buf[j] = j;
                bl_gen_shuffle(&g, buf, (size_t)o->a, sizeof *buf);
                break;
            }
            if (o->kind == 'p' || o->kind == 's') {
                for (int64_t j = 0; j < o->a; j++, at++)
                    expect_u64("ops permutation", k, (uint64_t)buf[j], le64(rec + 8 * at));
            } else {
                expect_u64("ops", k, v, le64(rec + 8 * at));
                at++;
            }
            values++;
        }
    }
    diff_end(&np);
    print_message("  %d seeds, %zu interleaved values\n", N_SEEDS, values);
}

static void test_numpy_seed_for(void **state)
{
    (void)state;
    differential np = diff_begin();
    /* Random roots, partitions, streams and typed keys, strings drawn from
     * every UTF-8 length class plus the characters JSON must escape. The
     * request carries the arguments as UTF-8 JSON escaped only where JSON
     * requires, so the oracle sees exactly these strings. */
    enum { NCASES = 200, MAXK = 5 };
    static char strs[NCASES][2 + MAXK][64];
    static bl_key keys[NCASES][MAXK];
    static size_t nkeys[NCASES];
    static int64_t roots[NCASES];
    sm_state = 99;
    for (size_t c = 0; c < NCASES; c++) {
        roots[c] = (int64_t)(sm_next() >> (1 + sm_next() % 63)) * (sm_next() % 2 ? 1 : -1);
        nkeys[c] = (size_t)(sm_next() % (MAXK + 1));
        for (size_t s = 0; s < 2 + MAXK; s++) {
            char *p = strs[c][s];
            size_t n = 0, len = (size_t)(sm_next() % 12);
            for (size_t j = 0; j < len; j++) {
                uint32_t cp;
                switch (sm_next() % 6) {
                case 0: cp = (uint32_t)(sm_next() % 0x20); break;
                case 1: cp = "\"\\/\x7f"[sm_next() % 4]; break;
                case 2: cp = 0x20 + (uint32_t)(sm_next() % 0x5f); break;
                case 3: cp = 0x80 + (uint32_t)(sm_next() % 0x780); break;
                case 4:
                    cp = 0x800 + (uint32_t)(sm_next() % (0x10000 - 0x800));
                    if (cp >= 0xd800 && cp < 0xe000)
                        cp -= 0x1000;
                    break;
                default: cp = 0x10000 + (uint32_t)(sm_next() % 0x100000); break;
                }
                if (cp == 0)
                    cp = 1; /* C strings end at NUL */
                if (cp < 0x80) {
                    p[n++] = (char)cp;
                } else if (cp < 0x800) {
                    p[n++] = (char)(0xc0 | cp >> 6);
                    p[n++] = (char)(0x80 | (cp & 0x3f));
                } else if (cp < 0x10000) {
                    p[n++] = (char)(0xe0 | cp >> 12);
                    p[n++] = (char)(0x80 | (cp >> 6 & 0x3f));
                    p[n++] = (char)(0x80 | (cp & 0x3f));
                } else {
                    p[n++] = (char)(0xf0 | cp >> 18);
                    p[n++] = (char)(0x80 | (cp >> 12 & 0x3f));
                    p[n++] = (char)(0x80 | (cp >> 6 & 0x3f));
                    p[n++] = (char)(0x80 | (cp & 0x3f));
                }
            }
            p[n] = '\0';
        }
        for (size_t k = 0; k < nkeys[c]; k++) {
            switch (sm_next() % 3) {
            case 0: keys[c][k] = BL_KEY_S(strs[c][2 + k]); break;
            case 1:
                keys[c][k] = BL_KEY_I((int64_t)(sm_next() >> 1) - (int64_t)(sm_next() >> 1));
                break;
            default: keys[c][k] = (bl_key){.type = BL_KEY_BOOL, .i = (int64_t)(sm_next() % 2)};
            }
        }
        /* The request: hex of [root, partition, stream, [keys]]. */
        bl_buf js;
        bl_buf_init(&js);
        bl_buf_printf(&js, "[%" PRId64, roots[c]);
        for (size_t k = 0; k < 2 + nkeys[c]; k++) {
            const bl_key *key = k < 2 ? NULL : &keys[c][k - 2];
            bl_buf_puts(&js, k == 2 ? ",[" : ",");
            if (key && key->type == BL_KEY_INT) {
                bl_buf_printf(&js, "%" PRId64, key->i);
            } else if (key && key->type == BL_KEY_BOOL) {
                bl_buf_puts(&js, key->i ? "true" : "false");
            } else {
                const unsigned char *s = (const unsigned char *)(key ? key->s : strs[c][k]);
                bl_buf_putc(&js, '"');
                for (; *s; s++) {
                    if (*s < 0x20 || *s == '"' || *s == '\\')
                        bl_buf_printf(&js, "\\u%04x", *s);
                    else
                        bl_buf_putc(&js, (char)*s);
                }
                bl_buf_putc(&js, '"');
            }
        }
        bl_buf_puts(&js, nkeys[c] ? "]]" : ",[]]");
        assert_int_equal(bl_buf_status(&js, NULL), BL_OK);
        bl_buf_puts(&np.req, "seedfor ");
        for (size_t j = 0; j < js.len; j++)
            bl_buf_printf(&np.req, "%02x", (unsigned char)js.data[j]);
        bl_buf_putc(&np.req, '\n');
        bl_buf_clear(&js);
    }
    diff_send(&np);
    for (size_t c = 0; c < NCASES; c++) {
        size_t n = 0;
        const unsigned char *rec = bl_test_numpy_next(np.out, np.len, &np.pos, &n);
        assert_true(n > 32);
        char *payload = NULL;
        bl_seed s;
        OK_E(bl_seed_payload(roots[c], strs[c][0], strs[c][1], keys[c], nkeys[c], &payload,
                                 &e_));
        if (strlen(payload) != n - 32 || memcmp(payload, rec + 32, n - 32) != 0)
            fail_msg("payload %zu: C %s, Python %.*s", c, payload, (int)(n - 32), rec + 32);
        bl_free(payload);
        OK_E(bl_seed_for(roots[c], strs[c][0], strs[c][1], keys[c], nkeys[c], &s, &e_));
        for (size_t l = 0; l < 4; l++)
            expect_u64("seed limb", c * 4 + l, s.limb[l], le64(rec + 8 * l));
    }
    diff_end(&np);
    print_message("  %d seed_for payloads\n", NCASES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_known_answers),
        cmocka_unit_test(test_seed_control_stream),
        cmocka_unit_test(test_seed_identity_and_payload),
        cmocka_unit_test(test_seed_forms),
        cmocka_unit_test(test_seed_allocation_failures),
        cmocka_unit_test(test_ziggurat_tables),
        cmocka_unit_test(test_generator_known_answers),
        cmocka_unit_test(test_fill64_matches_next64),
        cmocka_unit_test(test_uniform_fills_match_single),
        cmocka_unit_test(test_bernoulli_bound_edges),
        cmocka_unit_test(test_normal_fill_matches_single),
        cmocka_unit_test(test_tape_tiles),
        cmocka_unit_test(test_tape_uniform_and_errors),
        cmocka_unit_test(test_numpy_bitstream),
        cmocka_unit_test(test_numpy_random_uniform),
        cmocka_unit_test(test_numpy_standard_normal),
        cmocka_unit_test(test_numpy_integers),
        cmocka_unit_test(test_numpy_permutation_shuffle_choice),
        cmocka_unit_test(test_numpy_interleaved),
        cmocka_unit_test(test_numpy_seed_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
