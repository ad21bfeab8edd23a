/* The shared text helpers (brainlesslab/text.h): strict UTF-8 decoding and
 * Python's repr of a str, whose bytes reach contract hashes through sweep
 * labels and are proven here against the plan's repr as it was before it
 * moved into core. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "brainlesslab/task.h"
#include "brainlesslab/text.h"
#include "support.h"

/* ---- UTF-8 ------------------------------------------------------------------------ */

/* The UTF-8 bytes of any value below 0x200000 (surrogates included, which
 * the decoder must refuse) into out; their count. */
static size_t encode(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

static void test_utf8_decodes_every_code_point(void **state)
{
    (void)state;
    for (uint32_t cp = 0; cp < 0x140000; cp++) {
        unsigned char s[4];
        size_t n = encode(cp, s);
        uint32_t back = 0xffffffffu;
        size_t got = bl_utf8_decode(s, n, &back);
        bool valid = cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        if (valid) {
            assert_int_equal(got, n);
            assert_int_equal(back, cp);
        } else {
            assert_int_equal(got, 0);
        }
        assert_int_equal(bl_utf8_valid((const char *)s, n), valid);
        /* Cut short, a multibyte sequence is invalid. */
        if (n > 1) {
            assert_int_equal(bl_utf8_decode(s, n - 1, &back), 0);
            assert_false(bl_utf8_valid((const char *)s, n - 1));
        }
    }
}

static void test_utf8_refuses_malformed_bytes(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "\x80",         "\xbf",             "\xc0\x80",     "\xc1\xbf", /* overlong */
        "\xe0\x80\x80", "\xf0\x80\x80\x80", "\xf8\x88\x80\x80\x80",     "\xff",
        "\xc3\x28",     "\xe2\x28\xa1",     "\xf4\x90\x80\x80", /* past U+10FFFF */
        "\xed\xa0\x80", /* a surrogate */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint32_t cp;
        assert_int_equal(bl_utf8_decode((const unsigned char *)bad[i], strlen(bad[i]), &cp), 0);
        assert_false(bl_utf8_valid(bad[i], strlen(bad[i])));
    }
    assert_true(bl_utf8_valid("", 0));
    assert_true(bl_utf8_valid("a\0b", 3));
    assert_true(bl_utf8_valid("caf\xc3\xa9 \xf0\x9f\x98\x80", 10));
    assert_false(bl_utf8_valid("caf\xc3\xa9 \xf0\x9f\x98", 9));
}

/* ---- Python repr ------------------------------------------------------------------ */

/* The plan's repr of a str exactly as src/plan/ids.c wrote it before it moved
 * into core (frozen: the differential reference of bl_repr_string, whose
 * bytes reach contract hashes through sweep labels). */
static void frozen_plan_repr(bl_buf *b, const char *s, size_t n)
{
    bool has_single = memchr(s, '\'', n) != NULL, has_double = memchr(s, '"', n) != NULL;
    char q = has_single && !has_double ? '"' : '\'';
    bl_buf_putc(b, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q) {
            bl_buf_putc(b, '\\');
            bl_buf_putc(b, (char)c);
        } else if (c == '\n') {
            bl_buf_puts(b, "\\n");
        } else if (c == '\r') {
            bl_buf_puts(b, "\\r");
        } else if (c == '\t') {
            bl_buf_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            bl_buf_printf(b, "\\x%02x", c);
        } else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] <= 0xa0) {
            bl_buf_printf(b, "\\x%02x", (unsigned char)s[i + 1]);
            i++;
        } else {
            bl_buf_putc(b, (char)c);
        }
    }
    bl_buf_putc(b, q);
}

/* Both reprs of the n bytes at s agree byte for byte. */
static void same_repr(const char *s, size_t n)
{
    bl_buf want, got;
    bl_buf_init(&want);
    bl_buf_init(&got);
    frozen_plan_repr(&want, s, n);
    bl_repr_string(&got, s, n);
    assert_false(want.failed || got.failed);
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.data, want.data, want.len);
    bl_buf_clear(&want);
    bl_buf_clear(&got);
}

static void test_repr_matches_the_plan_repr(void **state)
{
    (void)state;
    /* Every code point (and every surrogate's bytes) alone and between text
     * with either quote, so each class meets each quoting choice. */
    static const char *const around[][2] = {{"", ""}, {"a'", "b"}, {"\"", "'"}, {"x\\", "\n"}};
    for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
        unsigned char u[4];
        size_t n = encode(cp, u);
        size_t k = cp < 0x3000 || cp % 61 == 0 ? 4 : 1;
        for (size_t a = 0; a < k; a++) {
            char s[16];
            size_t pre = strlen(around[a][0]), post = strlen(around[a][1]);
            memcpy(s, around[a][0], pre);
            memcpy(s + pre, u, n);
            memcpy(s + pre + n, around[a][1], post);
            same_repr(s, pre + n + post);
        }
    }
    /* Every pair and, with a quote, every triple of leading bytes: stray and
     * truncated sequences as well as the C1 range's 0xC2 lead. */
    for (unsigned x = 0; x < 256; x++)
        for (unsigned y = 0; y < 256; y++) {
            char s[3] = {(char)x, (char)y, '\''};
            same_repr(s, 2);
            same_repr(s, 3);
            same_repr(s + 1, 2);
        }
    /* Random byte strings, biased towards the bytes the repr treats apart. */
    static const unsigned char special[] = {'\'', '"', '\\', '\n', '\r', '\t', 0x00, 0x1f,
                                            0x7f, 0xc2, 0x80, 0x9f, 0xa0, 0xa1, 0xc3, 0xe2};
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int t = 0; t < 200000; t++) {
        char s[24];
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = (size_t)(x % sizeof s);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            s[i] = (char)(x % 3 ? special[(x >> 8) % sizeof special] : (x >> 16) & 0xff);
        }
        same_repr(s, n);
    }
}

/* What Python's repr writes, for the classes of characters. */
static void test_repr_reads_as_python(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", "''"},
        {"plain", "'plain'"},
        {"it's", "\"it's\""},
        {"both ' and \"", "'both \\' and \"'"},
        {"say \"hi\"", "'say \"hi\"'"},
        {"back\\slash", "'back\\\\slash'"},
        {"a\nb\rc\td", "'a\\nb\\rc\\td'"},
        {"\x01\x1b\x7f", "'\\x01\\x1b\\x7f'"},
        {"nel \xc2\x85 nbsp \xc2\xa0", "'nel \\x85 nbsp \\xa0'"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "'caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bl_buf b;
        bl_buf_init(&b);
        bl_repr_string(&b, cases[i].in, strlen(cases[i].in));
        assert_string_equal(b.data, cases[i].out);
        bl_buf_clear(&b);
    }
}

/* A task option's message quotes what the plan said with the same repr: a
 * C1 control reads as \x85, as the plan's labels write it. */
static void test_task_option_messages_escape_c1(void **state)
{
    (void)state;
    bl_json *given = NULL;
    bl_error err = {0};
    static const char gain[] = "{\"sensory_gain\": \"1\\u0085x\"}";
    OK_E(bl_json_parse(gain, strlen(gain), "JSON text", &given, &e_));
    bl_task_options o;
    assert_int_equal(bl_task_options_resolve(BL_TASK_PONG, given, &o, &err), BL_EVALUE);
    assert_string_equal(err.msg, "could not convert string to float: '1\\x85x'");
    bl_json_destroy(given);

    static const char key[] = "{\"gain\\u009b\": 1}";
    OK_E(bl_json_parse(key, strlen(key), "JSON text", &given, &e_));
    assert_int_equal(bl_task_options_resolve(BL_TASK_PONG, given, &o, &err), BL_EVALUE);
    assert_string_equal(err.msg, "unknown options for pong: ['gain\\x9b']");
    bl_json_destroy(given);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_decodes_every_code_point),
        cmocka_unit_test(test_utf8_refuses_malformed_bytes),
        cmocka_unit_test(test_repr_matches_the_plan_repr),
        cmocka_unit_test(test_repr_reads_as_python),
        cmocka_unit_test(test_task_option_messages_escape_c1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
