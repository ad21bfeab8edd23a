/* The JSON value tree, reader and writers: the contract-hash vector of
 * spec/platform.md §1.5, Python repr of floats and json.dumps escaping
 * (differential against python3 where one is installed), integers beyond 64
 * bits, reader errors and allocation failures. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "support.h"

#define CONTRACT_DIGEST "790cbdeb4b4305b23e5f237de51aad3eed8741b0460539a9c08ded96328b15c3"

/* ---- helpers --------------------------------------------------------- */

static bl_json *parse_ok(const char *text)
{
    bl_json *v = NULL;
    bl_error err = {0};
    bl_status st = bl_json_parse(text, strlen(text), NULL, &v, &err);
    if (st != BL_OK)
        fail_msg("parsing %s failed: %s", text, err.msg);
    assert_non_null(v);
    return v;
}

/* The written text as a heap string (bl_free). */
static char *write_ok(const bl_json *v, unsigned flags)
{
    bl_buf b;
    bl_buf_init(&b);
    bl_error err = {0};
    bl_status st = bl_json_write(v, flags, &b, &err);
    if (st != BL_OK)
        fail_msg("writing failed: %s", err.msg);
    char *text = bl_buf_take(&b, NULL);
    assert_non_null(text);
    return text;
}

static void assert_writes(const bl_json *v, unsigned flags, const char *expected)
{
    char *text = write_ok(v, flags);
    assert_string_equal(text, expected);
    bl_free(text);
}

/* Parses `text` and checks its canonical form. */
static void assert_canonical(const char *text, const char *expected)
{
    bl_json *v = parse_ok(text);
    assert_writes(v, BL_JSON_CANONICAL, expected);
    bl_json_destroy(v);
}

static void assert_parse_fails(const char *text, bl_status status, const char *expected_msg)
{
    bl_json *v = (bl_json *)&v; /* must be reset to NULL on failure */
    bl_error err = {0};
    assert_int_equal(bl_json_parse(text, strlen(text), "in.json", &v, &err), status);
    assert_null(v);
    assert_int_equal(err.status, status);
    if (strcmp(err.msg, expected_msg) != 0)
        fail_msg("parsing %s: expected message \"%s\", got \"%s\"", text, expected_msg, err.msg);
}

static void assert_double(double d, const char *expected)
{
    char storage[8];
    bl_buf b;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    assert_true(bl_json_write_double(&b, d));
    if (strcmp(b.data, expected) != 0)
        fail_msg("%.17g written as %s, expected %s", d, b.data, expected);
    bl_buf_clear(&b);
    /* The tree writer agrees with the piece. */
    bl_json *v = bl_json_real(d);
    assert_non_null(v);
    assert_writes(v, BL_JSON_CANONICAL, expected);
    bl_json_destroy(v);
}

static void write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static const char *contract_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/data/delayed-cue.canonical.json", bl_test_tests_dir());
    return path;
}

/* The contract vector, byte-exact as in spec/platform.md §1.5. The data file
 * holds no trailing newline (the spec's text is one line without one). */
static char *contract_text(size_t *len)
{
    char *text = bl_test_read(contract_path(), len);
    assert_true(*len > 0);
    assert_int_not_equal(text[*len - 1], '\n');
    return text;
}


/* Runs `script` with python on the file `input` (in `dir`) and returns the
 * output file's contents (free()). */
static char *run_python(const char *dir, const char *script, const char *input, size_t *len)
{
    char spath[4096], ipath[4096], opath[4096], cmd[16384];
    snprintf(spath, sizeof spath, "%s/script.py", dir);
    snprintf(ipath, sizeof ipath, "%s/%s", dir, input);
    snprintf(opath, sizeof opath, "%s/output.txt", dir);
    write_text_file(spath, script);
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' '%s'", bl_test_python_plain(), spath, ipath, opath);
    if (system(cmd) != 0)
        fail_msg("python failed: %s", cmd);
    return bl_test_read(opath, len);
}

/* Splits text in place into lines; returns the count. */
static size_t split_lines(char *text, size_t len, char ***lines)
{
    size_t n = 0, cap = 1024;
    char **v = malloc(cap * sizeof *v);
    assert_non_null(v);
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        *nl = '\0';
        if (n == cap) {
            v = realloc(v, (cap *= 2) * sizeof *v);
            assert_non_null(v);
        }
        v[n++] = p;
        p = nl + 1;
    }
    *lines = v;
    return n;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}


/* ---- the contract vector --------------------------------------------- */

static void test_contract_vector_round_trips(void **state)
{
    (void)state;
    size_t len;
    char *text = contract_text(&len);
    bl_json *v = NULL;
    bl_error err = {0};
    assert_int_equal(bl_json_parse(text, len, "delayed-cue", &v, &err), BL_OK);

    char *canon = NULL;
    size_t clen = 0;
    assert_int_equal(bl_json_canonical(v, &canon, &clen, &err), BL_OK);
    assert_int_equal(clen, len);
    assert_memory_equal(canon, text, len);
    assert_int_equal(canon[clen], '\0');

    char hex[65];
    assert_int_equal(bl_json_digest(v, hex, &err), BL_OK);
    assert_string_equal(hex, CONTRACT_DIGEST);

    /* Reading the file itself gives the same tree. */
    bl_json *w = NULL;
    assert_int_equal(bl_json_read_file(contract_path(), &w, &err), BL_OK);
    assert_true(bl_json_equal(v, w));
    bl_json_destroy(w);

    /* The int/float distinction survives the reader. */
    bl_json *request = bl_json_get(v, "request");
    assert_non_null(request);
    bl_json *target = bl_json_at(bl_json_get(request, "targets"), 0);
    bl_json *composition = bl_json_get(target, "composition");
    assert_int_equal(bl_json_kindof(bl_json_get(composition, "input_gain")), BL_JSON_REAL);
    assert_int_equal(bl_json_kindof(bl_json_get(composition, "count")), BL_JSON_INT);
    assert_int_equal(bl_json_get_int(bl_json_get(composition, "count")), 64);
    assert_null(bl_json_get(composition, "no such key"));

    bl_free(canon);
    bl_json_destroy(v);
    free(text);
}

static void test_contract_int_float_swap_changes_digest(void **state)
{
    (void)state;
    size_t len;
    char *text = contract_text(&len);
    bl_json *v = NULL;
    bl_error err = {0};
    char hex[65];
    assert_int_equal(bl_json_parse(text, len, NULL, &v, &err), BL_OK);

    /* In the tree: replacing input_gain 1.0 by the integer 1. */
    bl_json *composition = bl_json_get(
        bl_json_at(bl_json_get(bl_json_get(v, "request"), "targets"), 0), "composition");
    size_t size = bl_json_size(composition);
    assert_int_equal(bl_json_object_set(composition, "input_gain", bl_json_int(1), &err), BL_OK);
    assert_int_equal(bl_json_size(composition), size);
    assert_int_equal(bl_json_digest(v, hex, &err), BL_OK);
    assert_string_not_equal(hex, CONTRACT_DIGEST);
    /* And back: the digest returns, so only the kind made the difference. */
    assert_int_equal(bl_json_object_set(composition, "input_gain", bl_json_real(1.0), &err), BL_OK);
    assert_int_equal(bl_json_digest(v, hex, &err), BL_OK);
    assert_string_equal(hex, CONTRACT_DIGEST);
    bl_json_destroy(v);

    /* In the text: the first "input_gain":1.0 becomes 1. */
    char *p = strstr(text, "\"input_gain\":1.0");
    assert_non_null(p);
    p += strlen("\"input_gain\":1");
    memmove(p, p + 2, len - (size_t)(p + 2 - text) + 1);
    assert_int_equal(bl_json_parse(text, len - 2, NULL, &v, &err), BL_OK);
    assert_int_equal(bl_json_digest(v, hex, &err), BL_OK);
    assert_string_not_equal(hex, CONTRACT_DIGEST);
    bl_json_destroy(v);
    free(text);
}

/* A copy of `v` with every object's keys in reverse order. */
static bl_json *reversed(const bl_json *v)
{
    if (bl_json_kindof(v) == BL_JSON_ARRAY) {
        bl_json *a = bl_json_array();
        for (size_t i = 0; i < bl_json_size(v); i++)
            assert_int_equal(bl_json_array_append(a, reversed(bl_json_at(v, i)), NULL), BL_OK);
        return a;
    }
    if (bl_json_kindof(v) == BL_JSON_OBJECT) {
        bl_json *o = bl_json_object();
        for (size_t i = bl_json_size(v); i-- > 0;) {
            size_t klen;
            const char *key = bl_json_key_at(v, i, &klen);
            assert_int_equal(
                bl_json_object_setn(o, key, klen, reversed(bl_json_value_at(v, i)), NULL), BL_OK);
        }
        return o;
    }
    return bl_json_copy(v);
}

static void test_contract_key_order_does_not_matter(void **state)
{
    (void)state;
    size_t len;
    char *text = contract_text(&len);
    bl_json *v = NULL;
    bl_error err = {0};
    assert_int_equal(bl_json_parse(text, len, NULL, &v, &err), BL_OK);

    bl_json *r = reversed(v);
    char *rtext = write_ok(r, BL_JSON_SPACED);
    /* The reordered text really is different... */
    assert_int_not_equal(strncmp(rtext, text, 20), 0);
    assert_true(strncmp(rtext, "{\"targets\": [{\"upper_bound\": 1.0", 32) == 0);
    bl_json *back = parse_ok(rtext);
    /* ...and keeps its order through the reader (insertion order)... */
    assert_writes(back, BL_JSON_SPACED, rtext);
    /* ...yet canonicalises to the same bytes. */
    char *canon = NULL;
    assert_int_equal(bl_json_canonical(back, &canon, NULL, &err), BL_OK);
    assert_string_equal(canon, text);
    assert_true(bl_json_equal(back, v));

    /* A small hand-written case, with whitespace and newlines. */
    assert_canonical("{ \"b\" : [ 2, {\"y\": 1, \"x\": 0.5} ],\n  \"a\" : null }",
                     "{\"a\":null,\"b\":[2,{\"x\":0.5,\"y\":1}]}");

    bl_free(canon);
    bl_free(rtext);
    bl_json_destroy(back);
    bl_json_destroy(r);
    bl_json_destroy(v);
    free(text);
}

/* ---- floats ---------------------------------------------------------- */

static void test_float_repr_examples(void **state)
{
    (void)state;
    assert_double(0.1, "0.1");
    assert_double(1.0, "1.0");
    assert_double(15000.0, "15000.0");
    assert_double(1e16, "1e+16");
    assert_double(9999999999999998.0, "9999999999999998.0");
    assert_double(1e15, "1000000000000000.0");
    assert_double(1e-5, "1e-05");
    assert_double(0.0001, "0.0001");
    assert_double(0.00012345, "0.00012345");
    assert_double(5e-324, "5e-324");
    assert_double(-5e-324, "-5e-324");
    assert_double(2.2250738585072014e-308, "2.2250738585072014e-308");
    assert_double(1.7976931348623157e308, "1.7976931348623157e+308");
    assert_double(0.0, "0.0");
    assert_double(-0.0, "-0.0");
    assert_double(-1.5, "-1.5");
    assert_double(0.017453292519943295, "0.017453292519943295");
    assert_double(1e22, "1e+22");
    assert_double(1e23, "1e+23");
    assert_double(123456789012345680.0, "1.2345678901234568e+17");
    assert_double(0.3, "0.3");
    assert_double(0.1 + 0.2, "0.30000000000000004");
    assert_double(1.0 / 3.0, "0.3333333333333333");
    assert_double(2.0 / 3.0, "0.6666666666666666");
    assert_double(100.0, "100.0");
    assert_double(1e100, "1e+100");
    assert_double(1.5e300, "1.5e+300");
    assert_double(123.456, "123.456");
    assert_double(9007199254740993.0, "9007199254740992.0");
    assert_double(ldexp(1.0, 60), "1.152921504606847e+18");
    assert_double(ldexp(1.0, -1074), "5e-324");
    assert_double(ldexp(1.0, -1022), "2.2250738585072014e-308");
    assert_double(ldexp(1.0, 1023), "8.98846567431158e+307");

    /* Non-finite values are refused and nothing is written. */
    bl_buf b;
    bl_buf_init(&b);
    assert_false(bl_json_write_double(&b, NAN));
    assert_false(bl_json_write_double(&b, INFINITY));
    assert_false(bl_json_write_double(&b, -INFINITY));
    assert_int_equal(b.len, 0);
    bl_buf_clear(&b);
}

enum { N_RANDOM_BITS = 110000, N_DECIMALS = 40000, N_SUBNORMALS = 30000 };

/* The doubles of the differential test: random finite bit patterns, random
 * short decimals, every power of two, neighbours of every power of ten (the
 * 1e16 and 1e-4 notation switches among them), subnormals, small integers
 * and tenths. */
static size_t float_cases(double **out)
{
    size_t cap = 260000, n = 0;
    double *v = malloc(cap * sizeof *v);
    assert_non_null(v);
    uint64_t rng = 0x5eed2024u;
    while (n < N_RANDOM_BITS) {
        double d = bl_test_double(splitmix64(&rng));
        if (isfinite(d))
            v[n++] = d;
    }
    for (int i = 0; i < N_DECIMALS; i++) {
        int ndig = 1 + (int)(splitmix64(&rng) % 17);
        uint64_t mant = splitmix64(&rng) % 100000000000000000u;
        uint64_t scale = 1;
        for (int k = 0; k < ndig; k++)
            scale *= 10;
        char text[64];
        int e = (int)(splitmix64(&rng) % 640) - 330;
        snprintf(text, sizeof text, "%s%" PRIu64 "e%d", i % 2 ? "-" : "", mant % scale, e);
        double d = strtod(text, NULL);
        if (isfinite(d))
            v[n++] = d;
    }
    for (int e = -1074; e <= 1023; e++)
        v[n++] = ldexp(e % 2 ? -1.0 : 1.0, e);
    for (int k = -323; k <= 308; k++) {
        char text[16];
        snprintf(text, sizeof text, "1e%d", k);
        double p = strtod(text, NULL);
        double lo = p, hi = p;
        v[n++] = p;
        for (int s = 0; s < 8; s++) {
            lo = nextafter(lo, 0.0);
            hi = nextafter(hi, INFINITY);
            v[n++] = lo;
            if (isfinite(hi))
                v[n++] = hi;
        }
    }
    for (int i = 0; i < N_SUBNORMALS; i++)
        v[n++] = bl_test_double(splitmix64(&rng) & 0x800fffffffffffffu);
    for (int i = 0; i < 4000; i++) {
        v[n++] = (double)i;
        v[n++] = i / 10.0;
        v[n++] = -i / 100.0;
    }
    assert_true(n <= cap);
    *out = v;
    return n;
}

static void test_float_repr_matches_python(void **state)
{
    (void)state;
    double *values;
    size_t n = float_cases(&values);
    assert_true(n >= 200000);

    /* Independent of Python: every output reads back as the same double. */
    bl_buf b;
    bl_buf_init(&b);
    for (size_t i = 0; i < n; i++) {
        bl_buf_reset(&b);
        assert_true(bl_json_write_double(&b, values[i]));
        if (bl_test_bits(strtod(b.data, NULL)) != bl_test_bits(values[i]))
            fail_msg("%s does not read back as %a", b.data, values[i]);
    }

    if (!bl_test_python_plain()) {
        bl_buf_clear(&b);
        free(values);
        bl_test_missing("python3 (the differential check against Python's repr)");
        skip();
    }
    char *dir = bl_test_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s/bits.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%016" PRIx64 "\n", bl_test_bits(values[i]));
    fclose(f);
    static const char script[] =
        "import struct, sys\n"
        "with open(sys.argv[1]) as f, open(sys.argv[2], 'w', newline='\\n') as g:\n"
        "    for line in f:\n"
        "        g.write(repr(struct.unpack('<d', struct.pack('<Q', int(line, 16)))[0]))\n"
        "        g.write('\\n')\n";
    size_t len;
    char *out = run_python(dir, script, "bits.txt", &len);
    char **lines;
    size_t nlines = split_lines(out, len, &lines);
    assert_int_equal(nlines, n);
    size_t mismatches = 0;
    for (size_t i = 0; i < n; i++) {
        bl_buf_reset(&b);
        bl_json_write_double(&b, values[i]);
        if (strcmp(b.data, lines[i]) != 0 && mismatches++ < 10)
            print_error("bits %016" PRIx64 ": ours %s, Python %s\n", bl_test_bits(values[i]), b.data,
                        lines[i]);
    }
    if (mismatches)
        fail_msg("%zu of %zu doubles differ from Python's repr", mismatches, n);
    bl_buf_clear(&b);
    free(lines);
    free(out);
    bl_test_rmtree(dir);
    free(dir);
    free(values);
}

/* ---- strings --------------------------------------------------------- */

static void assert_string_writes(const char *s, size_t len, bool ascii, const char *expected)
{
    bl_buf b;
    bl_buf_init(&b);
    bl_error err = {0};
    assert_int_equal(bl_json_write_string(&b, s, len, ascii, &err), BL_OK);
    assert_int_equal(b.len, strlen(expected));
    assert_string_equal(b.data, expected);
    bl_buf_clear(&b);
}

static void test_string_escaping(void **state)
{
    (void)state;
    static const char specials[] = "a\"b\\c\n\r\t\b\f/";
    assert_string_writes(specials, strlen(specials), true, "\"a\\\"b\\\\c\\n\\r\\t\\b\\f/\"");
    assert_string_writes(specials, strlen(specials), false, "\"a\\\"b\\\\c\\n\\r\\t\\b\\f/\"");
    assert_string_writes("", 0, true, "\"\"");
    /* Other control characters as lowercase \u00XX, NUL included. */
    assert_string_writes("\x01\x1f\x1b", 3, false, "\"\\u0001\\u001f\\u001b\"");
    assert_string_writes("a\0b", 3, true, "\"a\\u0000b\"");
    /* DEL only in ASCII mode, as Python. */
    assert_string_writes("\x7f", 1, true, "\"\\u007f\"");
    assert_string_writes("\x7f", 1, false, "\"\x7f\"");
    /* Non-ASCII: lowercase hex, astral as a surrogate pair; raw otherwise. */
    static const char text[] = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf\xf4\x8f\xbf\xbf";
    assert_string_writes(text, strlen(text), true,
                         "\"\\u00e9\\u20ac\\ud83d\\ude00\\uffff\\udbff\\udfff\"");
    assert_string_writes(text, strlen(text), false, "\"" "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                                                    "\xef\xbf\xbf\xf4\x8f\xbf\xbf" "\"");
    assert_string_writes("\xc2\x80", 2, true, "\"\\u0080\"");

    /* Keys are escaped like values; ASCII follows the flag. */
    bl_json *o = bl_json_object();
    assert_int_equal(bl_json_object_set(o, "\xc3\xa9\n", bl_json_string("\xe2\x82\xac"), NULL),
                     BL_OK);
    assert_writes(o, BL_JSON_CANONICAL, "{\"\\u00e9\\n\":\"\\u20ac\"}");
    assert_writes(o, BL_JSON_SORT_KEYS, "{\"\xc3\xa9\\n\":\"\xe2\x82\xac\"}");
    bl_json_destroy(o);
}

static void test_string_invalid_utf8(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t len;
    } bad[] = {
        {"\xff", 1},                 /* never a UTF-8 byte */
        {"\x80", 1},                 /* lone continuation */
        {"ab\xc0\xaf", 4},           /* overlong '/' */
        {"\xe0\x80\xaf", 3},         /* overlong, three bytes */
        {"\xed\xa0\x80", 3},         /* a surrogate */
        {"\xf4\x90\x80\x80", 4},     /* beyond U+10FFFF */
        {"\xe2\x82", 2},             /* truncated */
        {"\xe2\x28\xa1", 3},         /* bad continuation */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int ascii = 0; ascii < 2; ascii++) {
            bl_buf b;
            bl_buf_init(&b);
            bl_error err = {0};
            assert_int_equal(bl_json_write_string(&b, bad[i].s, bad[i].len, ascii, &err),
                             BL_EVALUE);
            assert_non_null(strstr(err.msg, "UTF-8"));
            bl_buf_clear(&b);
        }
        /* Through the tree writer too. */
        bl_json *v = bl_json_stringn(bad[i].s, bad[i].len);
        bl_buf b;
        bl_buf_init(&b);
        assert_int_equal(bl_json_write(v, 0, &b, NULL), BL_EVALUE);
        bl_buf_clear(&b);
        bl_json_destroy(v);
    }
}

static void test_string_escaping_matches_python(void **state)
{
    BL_REQUIRE(bl_test_python_plain(), "python3 (the differential check against json.dumps)");
    static const struct {
        const char *s;
        size_t len;
    } cases[] = {
        {"", 0},
        {"plain text", 10},
        {"quote\" back\\slash /solidus", 27},
        {"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
         "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x7e\x7f", 35},
        {"\xc2\x80\xc2\xa0\xc3\xbf\xc4\x80", 8},
        {"\xe2\x80\xa8\xe2\x80\xa9 \xef\xbb\xbf", 10},
        {"\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbd\xef\xbf\xbf", 12},
        {"\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", 12},
        {"Gr\xc3\xbc\xc3\x9f" "e \xe4\xb8\x96\xe7\x95\x8c \xce\xb1\xce\xb2", 17},
    };
    size_t ncases = sizeof cases / sizeof *cases;
    const char *dir = bl_test_dir(state);
    char path[4096];
    snprintf(path, sizeof path, "%s/strings.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < ncases; i++) {
        for (size_t k = 0; k < cases[i].len; k++)
            fprintf(f, "%02x", (unsigned char)cases[i].s[k]);
        fputc('\n', f);
    }
    fclose(f);
    static const char script[] =
        "import json, sys\n"
        "with open(sys.argv[1]) as f, open(sys.argv[2], 'w', encoding='utf-8', newline='\\n') as g:\n"
        "    for line in f:\n"
        "        s = bytes.fromhex(line.strip()).decode('utf-8')\n"
        "        g.write(json.dumps(s) + '\\n' + json.dumps(s, ensure_ascii=False) + '\\n')\n";
    size_t len;
    char *out = run_python(dir, script, "strings.txt", &len);
    char **lines;
    size_t nlines = split_lines(out, len, &lines);
    assert_int_equal(nlines, 2 * ncases);
    for (size_t i = 0; i < ncases; i++) {
        assert_string_writes(cases[i].s, cases[i].len, true, lines[2 * i]);
        assert_string_writes(cases[i].s, cases[i].len, false, lines[2 * i + 1]);
    }
    free(lines);
    free(out);
}

/* BL_JSON_INDENT against json.dumps(indent=2, ensure_ascii=False) of the
 * same document: nesting, empty containers, scalars, key order kept. */
static void test_indent_matches_python(void **state)
{
    BL_REQUIRE(bl_test_python_plain(), "python3 (the differential check against json.dumps)");
    static const char doc[] =
        "{\"format\": \"x\", \"b\": [1, 2.5, {\"z\": null, \"a\": []}, {}], \"e\": {},"
        " \"n\": {\"t\": true, \"f\": false, \"s\": \"\\u00e9\\n\"}, \"l\": [[]]}";
    const char *dir = bl_test_dir(state);
    char path[4096];
    snprintf(path, sizeof path, "%s/doc.json", dir);
    write_text_file(path, doc);
    static const char script[] =
        "import json, sys\n"
        "with open(sys.argv[1]) as f, open(sys.argv[2], 'w', encoding='utf-8') as g:\n"
        "    g.write(json.dumps(json.load(f), indent=2, ensure_ascii=False))\n";
    size_t len;
    char *want = run_python(dir, script, "doc.json", &len);
    bl_json *v = parse_ok(doc);
    assert_writes(v, BL_JSON_INDENT, want);
    bl_json_destroy(v);
    free(want);
}

/* ---- integers -------------------------------------------------------- */

static void assert_bigint_writes(bool negative, const uint64_t *limbs, size_t n,
                                 bl_json_kind kind, const char *expected)
{
    bl_json *v = bl_json_bigint(negative, limbs, n);
    assert_non_null(v);
    assert_int_equal(bl_json_kindof(v), kind);
    assert_writes(v, BL_JSON_CANONICAL, expected);
    bl_json_destroy(v);
}

static void test_integers(void **state)
{
    (void)state;
    bl_json *v = bl_json_int(INT64_MAX);
    assert_writes(v, 0, "9223372036854775807");
    bl_json_destroy(v);
    v = bl_json_int(INT64_MIN);
    assert_writes(v, 0, "-9223372036854775808");
    bl_json_destroy(v);
    assert_canonical("[0, -0, 7, -9223372036854775808, 9223372036854775807]",
                     "[0,0,7,-9223372036854775808,9223372036854775807]");

    /* Normalisation: whatever fits int64 is an INT. */
    static const uint64_t five[] = {5, 0, 0};
    assert_bigint_writes(false, five, 3, BL_JSON_INT, "5");
    assert_bigint_writes(true, five, 3, BL_JSON_INT, "-5");
    static const uint64_t zero[] = {0, 0};
    assert_bigint_writes(true, zero, 2, BL_JSON_INT, "0");
    assert_bigint_writes(false, NULL, 0, BL_JSON_INT, "0");
    static const uint64_t two63[] = {UINT64_C(1) << 63};
    assert_bigint_writes(true, two63, 1, BL_JSON_INT, "-9223372036854775808");
    assert_bigint_writes(false, two63, 1, BL_JSON_BIGINT, "9223372036854775808");
    static const uint64_t max64[] = {UINT64_MAX};
    assert_bigint_writes(false, max64, 1, BL_JSON_BIGINT, "18446744073709551615");
    static const uint64_t min_minus_one[] = {(UINT64_C(1) << 63) + 1};
    assert_bigint_writes(true, min_minus_one, 1, BL_JSON_BIGINT, "-9223372036854775809");

    /* Beyond 64 bits. */
    static const uint64_t two64[] = {0, 1};
    assert_bigint_writes(false, two64, 2, BL_JSON_BIGINT, "18446744073709551616");
    assert_bigint_writes(true, two64, 2, BL_JSON_BIGINT, "-18446744073709551616");
    static const uint64_t two128m1[] = {UINT64_MAX, UINT64_MAX, 0};
    assert_bigint_writes(true, two128m1, 3, BL_JSON_BIGINT,
                         "-340282366920938463463374607431768211455");
    static const uint64_t two255p[] = {12345, 0, 0, UINT64_C(1) << 63};
    assert_bigint_writes(false, two255p, 4, BL_JSON_BIGINT,
                         "57896044618658097711785492504343953926634992332820282019728792003956564832313");
    /* The 256-bit seed of spec/platform.md's seed_for example. */
    static const uint64_t seed[] = {0xa23d65115fc41e73u, 0x2dfd138aa6d1eeaau,
                                    0xf63b45e313be103fu, 0xfa4223269fd5d8d4u};
    assert_bigint_writes(false, seed, 4, BL_JSON_BIGINT,
                         "113195066654524707408919064520980712525691092774959388683569138008512333618803");
    /* 10^19 and 10^27: chunk boundaries of the decimal conversion. */
    static const uint64_t ten19[] = {UINT64_C(10000000000000000000)};
    assert_bigint_writes(false, ten19, 1, BL_JSON_BIGINT, "10000000000000000000");
    /* 10^27 = 0x33b2e3c9fd0803ce8000000 */
    static const uint64_t ten27[] = {0x9fd0803ce8000000u, 0x33b2e3cu};
    assert_bigint_writes(false, ten27, 2, BL_JSON_BIGINT, "1000000000000000000000000000");

    /* Reading the magnitude back. */
    v = bl_json_bigint(false, seed, 4);
    uint64_t limbs[4] = {0};
    bool negative = true;
    assert_int_equal(bl_json_get_bigint(v, &negative, NULL, 0), 4);
    assert_int_equal(bl_json_get_bigint(v, &negative, limbs, 4), 4);
    assert_false(negative);
    assert_memory_equal(limbs, seed, sizeof seed);
    bl_json *copy = bl_json_copy(v);
    assert_true(bl_json_equal(v, copy));
    bl_json_destroy(copy);
    bl_json *neg = bl_json_bigint(true, seed, 4);
    assert_false(bl_json_equal(v, neg));
    bl_json_destroy(neg);
    bl_json_destroy(v);
    v = bl_json_int(INT64_MIN);
    assert_int_equal(bl_json_get_bigint(v, &negative, limbs, 4), 1);
    assert_true(negative);
    assert_true(limbs[0] == UINT64_C(1) << 63);
    bl_json_destroy(v);
    v = bl_json_int(0);
    assert_int_equal(bl_json_get_bigint(v, &negative, limbs, 4), 0);
    assert_false(negative);
    bl_json_destroy(v);
}

static void test_bigint_decimal_matches_python(void **state)
{
    BL_REQUIRE(bl_test_python_plain(), "python3 (the differential check of big integers)");
    enum { N = 2000 };
    const char *dir = bl_test_dir(state);
    char path[4096];
    snprintf(path, sizeof path, "%s/ints.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    uint64_t rng = 77;
    char **ours = malloc(N * sizeof *ours);
    assert_non_null(ours);
    for (int i = 0; i < N; i++) {
        uint64_t limbs[6];
        size_t n = 1 + (size_t)(splitmix64(&rng) % 6);
        for (size_t k = 0; k < n; k++) {
            /* Runs of zero and all-one limbs stress the carries. */
            uint64_t r = splitmix64(&rng);
            limbs[k] = r % 5 == 0 ? 0 : r % 5 == 1 ? UINT64_MAX : splitmix64(&rng);
        }
        bool negative = i % 2;
        fprintf(f, "%d", negative);
        for (size_t k = n; k-- > 0;)
            fprintf(f, " %016" PRIx64, limbs[k]);
        fputc('\n', f);
        bl_json *v = bl_json_bigint(negative, limbs, n);
        assert_non_null(v);
        ours[i] = write_ok(v, 0);
        bl_json_destroy(v);
    }
    fclose(f);
    static const char script[] =
        "import sys\n"
        "with open(sys.argv[1]) as f, open(sys.argv[2], 'w') as g:\n"
        "    for line in f:\n"
        "        sign, *limbs = line.split()\n"
        "        v = int(''.join(limbs), 16)\n"
        "        g.write(str(-v if sign == '1' else v) + '\\n')\n";
    size_t len;
    char *out = run_python(dir, script, "ints.txt", &len);
    char **lines;
    assert_int_equal(split_lines(out, len, &lines), N);
    for (int i = 0; i < N; i++) {
        assert_string_equal(ours[i], lines[i]);
        bl_free(ours[i]);
    }
    free(ours);
    free(lines);
    free(out);
}

/* ---- the reader ------------------------------------------------------ */

static void test_reader_values(void **state)
{
    (void)state;
    bl_json *v = parse_ok("42");
    assert_int_equal(bl_json_kindof(v), BL_JSON_INT);
    assert_int_equal(bl_json_get_int(v), 42);
    bl_json_destroy(v);
    v = parse_ok(" 1.0 ");
    assert_int_equal(bl_json_kindof(v), BL_JSON_REAL);
    assert_true(bl_json_get_real(v) == 1.0);
    bl_json_destroy(v);
    v = parse_ok("1e2");
    assert_int_equal(bl_json_kindof(v), BL_JSON_REAL);
    bl_json_destroy(v);
    v = parse_ok("null");
    assert_int_equal(bl_json_kindof(v), BL_JSON_NULL);
    bl_json_destroy(v);
    v = parse_ok("[true, false]");
    assert_true(bl_json_get_bool(bl_json_at(v, 0)));
    assert_false(bl_json_get_bool(bl_json_at(v, 1)));
    bl_json_destroy(v);
    /* NUL inside strings is kept with its length. */
    v = parse_ok("\"a\\u0000b\\u00e9\"");
    size_t len;
    const char *s = bl_json_get_string(v, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(s, "a\0b\xc3\xa9", 5);
    assert_writes(v, BL_JSON_CANONICAL, "\"a\\u0000b\\u00e9\"");
    bl_json_destroy(v);
    /* Surrogate pairs decode to one code point and encode back. */
    assert_canonical("[\"\\uD83D\\uDE00\", \"/\\/\"]", "[\"\\ud83d\\ude00\",\"//\"]");
    /* Reals keep their value: 0.1 stays the double nearest 0.1. */
    assert_canonical("[0.1, 1E-5, -0.0, 1e16, 2.50]", "[0.1,1e-05,-0.0,1e+16,2.5]");
    /* A buffer need not be NUL-terminated: only len bytes are read. */
    bl_error err = {0};
    assert_int_equal(bl_json_parse("[1]xyz", 3, NULL, &v, &err), BL_OK);
    assert_int_equal(bl_json_size(v), 1);
    bl_json_destroy(v);
}

static void test_reader_errors(void **state)
{
    (void)state;
    assert_parse_fails("{\"a\": 1,\n  \"b\": }", BL_EVALUE,
                       "in.json:2:8: unexpected token near '}'");
    assert_parse_fails("{\"a\":1,\"a\":2}", BL_EVALUE,
                       "in.json:1:10: duplicate object key near '\"a\"'");
    assert_parse_fails("[NaN]", BL_EVALUE, "in.json:1:4: invalid token near 'NaN'");
    assert_parse_fails("[1, Infinity]", BL_EVALUE, "in.json:1:12: invalid token near 'Infinity'");
    assert_parse_fails("[-Infinity]", BL_EVALUE, "in.json:1:2: invalid token near '-'");
    assert_parse_fails("[18446744073709551616]", BL_EVALUE,
                       "in.json:1:21: integer out of the 64-bit range");
    assert_parse_fails("[-9223372036854775809]", BL_EVALUE,
                       "in.json:1:21: integer out of the 64-bit range");
    assert_parse_fails("{\"seed\":\n 113195066654524707408919064520980712525691092774959388683569138008512333618803}",
                       BL_EVALUE, "in.json:2:79: integer out of the 64-bit range");
    assert_parse_fails("", BL_EVALUE, "in.json:1:0: unexpected token near end of file");
    assert_parse_fails("1 2", BL_EVALUE, "in.json:1:3: end of file expected near '2'");
    assert_parse_fails("[1,]", BL_EVALUE, "in.json:1:4: unexpected token near ']'");
    assert_parse_fails("\"\xff\"", BL_EVALUE, "in.json:1:1: unable to decode byte 0xff near '\"'");

    /* Without a name, messages say "JSON text". */
    bl_json *v = NULL;
    bl_error err = {0};
    assert_int_equal(bl_json_parse("[", 1, NULL, &v, &err), BL_EVALUE);
    assert_true(strncmp(err.msg, "JSON text:1:", 12) == 0);
}

static void test_read_file(void **state)
{
    const char *dir = bl_test_dir(state);
    char path[4096];
    bl_json *v = NULL;
    bl_error err = {0};

    snprintf(path, sizeof path, "%s/missing.json", dir);
    assert_int_equal(bl_json_read_file(path, &v, &err), BL_ENOENT);
    assert_int_equal(err.status, BL_ENOENT);
    assert_non_null(strstr(err.msg, path));
    assert_null(v);

    assert_int_equal(bl_json_read_file(dir, &v, &err), BL_EISDIR);
    assert_non_null(strstr(err.msg, dir));
    assert_null(v);

    snprintf(path, sizeof path, "%s/missing/x.json", dir);
    assert_int_equal(bl_json_read_file(path, &v, &err), BL_ENOENT);

    snprintf(path, sizeof path, "%s/good.json", dir);
    write_text_file(path, "{\"b\": [1, 2.0, \"x\"],\n \"a\": {}}\n");
    assert_int_equal(bl_json_read_file(path, &v, &err), BL_OK);
    assert_writes(v, BL_JSON_CANONICAL, "{\"a\":{},\"b\":[1,2.0,\"x\"]}");
    bl_json_destroy(v);

    /* Syntax errors name the file. */
    snprintf(path, sizeof path, "%s/bad.json", dir);
    write_text_file(path, "{\"a\": 1}\n{");
    assert_int_equal(bl_json_read_file(path, &v, &err), BL_EVALUE);
    char expected[4200];
    snprintf(expected, sizeof expected, "%s:2:1: end of file expected near '{'", path);
    assert_string_equal(err.msg, expected);

    /* A file larger than the first read chunk of a non-regular file. */
    snprintf(path, sizeof path, "%s/big.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputc('[', f);
    for (int i = 0; i < 20000; i++)
        fprintf(f, "%s%d", i ? "," : "", i);
    fputc(']', f);
    fclose(f);
    assert_int_equal(bl_json_read_file(path, &v, &err), BL_OK);
    assert_int_equal(bl_json_size(v), 20000);
    assert_int_equal(bl_json_get_int(bl_json_at(v, 19999)), 19999);
    bl_json_destroy(v);

}

/* ---- the writer and the tree ----------------------------------------- */

static void test_writer_sorting_and_separators(void **state)
{
    (void)state;
    bl_json *v = parse_ok("{\"b\": {\"z\": 1, \"a\": [{\"y\": 1, \"x\": 2}, []]},"
                          " \"\xc3\xa9\": 1, \"aa\": 2, \"a\": null, \"\": true, \"B\": {},"
                          " \"\\u00e9z\": 0, \"\\u007f\": 3}");
    /* Sorted at every level by UTF-8 bytes, shorter key first on a tie. */
    assert_writes(v, BL_JSON_CANONICAL,
                  "{\"\":true,\"B\":{},\"a\":null,\"aa\":2,\"b\":{\"a\":[{\"x\":2,\"y\":1},[]],\"z\":1},"
                  "\"\\u007f\":3,\"\\u00e9\":1,\"\\u00e9z\":0}");
    /* Insertion order without SORT_KEYS; raw UTF-8 without ASCII. */
    assert_writes(v, 0,
                  "{\"b\":{\"z\":1,\"a\":[{\"y\":1,\"x\":2},[]]},\"\xc3\xa9\":1,\"aa\":2,\"a\":null,"
                  "\"\":true,\"B\":{},\"\xc3\xa9z\":0,\"\x7f\":3}");
    /* Python's default separators. */
    assert_writes(v, BL_JSON_SPACED | BL_JSON_SORT_KEYS,
                  "{\"\": true, \"B\": {}, \"a\": null, \"aa\": 2, \"b\": {\"a\": [{\"x\": 2, \"y\": 1}, []], "
                  "\"z\": 1}, \"\x7f\": 3, \"\xc3\xa9\": 1, \"\xc3\xa9z\": 0}");
    bl_json_destroy(v);

    /* Keys that differ only after an inner NUL sort by bytes and length. */
    bl_json *o = bl_json_object();
    assert_int_equal(bl_json_object_setn(o, "a\0b", 3, bl_json_int(3), NULL), BL_OK);
    assert_int_equal(bl_json_object_setn(o, "a\0", 2, bl_json_int(2), NULL), BL_OK);
    assert_int_equal(bl_json_object_setn(o, "a", 1, bl_json_int(1), NULL), BL_OK);
    assert_int_equal(bl_json_size(o), 3);
    assert_writes(o, BL_JSON_CANONICAL, "{\"a\":1,\"a\\u0000\":2,\"a\\u0000b\":3}");
    /* bl_json_get matches the whole key, not a prefix up to a NUL. */
    assert_int_equal(bl_json_get_int(bl_json_get(o, "a")), 1);
    bl_json_destroy(o);
}

static void test_writer_rejects_non_finite(void **state)
{
    (void)state;
    static const double bad[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        bl_json *v = parse_ok("[1, {\"x\": [0.5]}]");
        bl_json *inner = bl_json_get(bl_json_at(v, 1), "x");
        assert_int_equal(bl_json_array_append(inner, bl_json_real(bad[i]), NULL), BL_OK);
        bl_error err = {0};
        bl_buf b;
        bl_buf_init(&b);
        assert_int_equal(bl_json_write(v, 0, &b, &err), BL_EVALUE);
        assert_string_equal(err.msg, "Out of range float values are not JSON compliant");
        bl_buf_clear(&b);
        char *text = (char *)&text;
        assert_int_equal(bl_json_canonical(v, &text, NULL, &err), BL_EVALUE);
        assert_null(text);
        char hex[65];
        assert_int_equal(bl_json_digest(v, hex, &err), BL_EVALUE);
        bl_json_destroy(v);
    }
}

/* Typed access to untrusted documents never asserts: a wrong kind or a
 * missing member is NULL. */
static void test_typed_access(void **state)
{
    (void)state;
    const char *text = "{\"a\": {\"b\": \"x\", \"n\": 1}, \"s\": [1]}";
    bl_json *v = NULL;
    bl_error err = {0};
    assert_int_equal(bl_json_parse(text, strlen(text), NULL, &v, &err), BL_OK);
    const bl_json *a = bl_json_field(v, "a");
    assert_ptr_equal(bl_json_if(a, BL_JSON_OBJECT), a);
    assert_null(bl_json_if(a, BL_JSON_ARRAY));
    assert_null(bl_json_if(NULL, BL_JSON_OBJECT));
    assert_string_equal(bl_json_string_field(a, "b"), "x");
    assert_null(bl_json_string_field(a, "n"));      /* not a string */
    assert_null(bl_json_string_field(a, "absent"));
    assert_null(bl_json_field(bl_json_field(v, "s"), "b")); /* not an object */
    assert_null(bl_json_field(NULL, "a"));
    assert_null(bl_json_string_field(bl_json_field(a, "b"), "c"));
    bl_json_destroy(v);
}

static void test_equality_and_copy(void **state)
{
    (void)state;
    bl_json *i1 = bl_json_int(1), *r1 = bl_json_real(1.0);
    assert_false(bl_json_equal(i1, r1));
    bl_json *pz = bl_json_real(0.0), *nz = bl_json_real(-0.0);
    assert_false(bl_json_equal(pz, nz));
    bl_json *n1 = bl_json_real(NAN), *n2 = bl_json_real(-NAN);
    assert_true(bl_json_equal(n1, n2));
    bl_json *s1 = bl_json_stringn("a\0b", 3), *s2 = bl_json_stringn("a\0c", 3);
    bl_json *s3 = bl_json_string("a");
    assert_false(bl_json_equal(s1, s2));
    assert_false(bl_json_equal(s1, s3));
    bl_json *t = bl_json_bool(true), *f = bl_json_bool(false), *nul = bl_json_null();
    assert_false(bl_json_equal(t, f));
    assert_false(bl_json_equal(f, nul));
    bl_json *all[] = {i1, r1, pz, nz, n1, n2, s1, s2, s3, t, f, nul};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        assert_true(bl_json_equal(all[i], all[i]));
        bl_json_destroy(all[i]);
    }

    /* Objects ignore key order; arrays do not ignore element order. */
    bl_json *a = parse_ok("{\"x\": [1, 2.0, \"s\", null], \"y\": {\"p\": true, \"q\": false}}");
    bl_json *b = parse_ok("{\"y\": {\"q\": false, \"p\": true}, \"x\": [1, 2.0, \"s\", null]}");
    bl_json *c = parse_ok("{\"y\": {\"q\": false, \"p\": true}, \"x\": [2.0, 1, \"s\", null]}");
    bl_json *d = parse_ok("{\"y\": {\"q\": false, \"p\": true}, \"x\": [1, 2, \"s\", null]}");
    bl_json *e = parse_ok("{\"y\": {\"q\": false, \"p\": true}, \"z\": [1, 2.0, \"s\", null]}");
    assert_true(bl_json_equal(a, b));
    assert_false(bl_json_equal(a, c));
    assert_false(bl_json_equal(a, d));
    assert_false(bl_json_equal(a, e));

    /* A deep copy equals its original and is independent of it. */
    size_t len;
    char *text = contract_text(&len);
    bl_json *v = NULL;
    assert_int_equal(bl_json_parse(text, len, NULL, &v, NULL), BL_OK);
    bl_json *copy = bl_json_copy(v);
    assert_non_null(copy);
    assert_true(bl_json_equal(v, copy));
    assert_writes(copy, BL_JSON_CANONICAL, text);
    assert_int_equal(bl_json_object_set(copy, "request", bl_json_null(), NULL), BL_OK);
    assert_false(bl_json_equal(v, copy));
    assert_writes(v, BL_JSON_CANONICAL, text);

    /* Replacing keeps the key's place; appending a NULL item is ENOMEM. */
    assert_string_equal(bl_json_key_at(copy, 0, NULL), "request");
    assert_int_equal(bl_json_kindof(bl_json_value_at(copy, 0)), BL_JSON_NULL);
    bl_error err = {0};
    assert_int_equal(bl_json_object_set(copy, "k", NULL, &err), BL_ENOMEM);
    assert_int_equal(bl_json_array_append(bl_json_get(v, "targets"), NULL, &err), BL_ENOMEM);
    assert_int_equal(bl_json_size(copy), 2);

    bl_json_destroy(copy);
    bl_json_destroy(v);
    free(text);
    bl_json_destroy(a);
    bl_json_destroy(b);
    bl_json_destroy(c);
    bl_json_destroy(d);
    bl_json_destroy(e);
}

/* ---- sticky builders -------------------------------------------------- */

/* A document built by sticky calls, checked once: {"a": 1, "list": [true,
 * "x", ...], "nested": {"r": 0.5}}. */
static bl_status build_sticky(bl_json **out, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object(), *list = bl_json_array(), *nested = bl_json_object();
    bl_json_put(&st, o, "a", bl_json_int(1), err);
    bl_json_push(&st, list, bl_json_bool(true), err);
    for (int i = 0; i < 10; i++)
        bl_json_push(&st, list, bl_json_string("x"), err);
    bl_json_put(&st, o, "list", list, err);
    bl_json_put(&st, nested, "r", bl_json_real(0.5), err);
    bl_json_put(&st, o, "nested", nested, err);
    if (st != BL_OK) {
        bl_json_destroy(o);
        return st;
    }
    *out = o;
    return BL_OK;
}

static const char sticky_text[] =
    "{\"a\":1,\"list\":[true,\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"],"
    "\"nested\":{\"r\":0.5}}";

static void test_sticky_builders(void **state)
{
    (void)state;
    bl_json *v = NULL;
    OK_E(build_sticky(&v, &e_));
    assert_writes(v, BL_JSON_CANONICAL, sticky_text);
    bl_json_destroy(v);

    /* A NULL value or container is out of memory; the value is freed. */
    bl_error err = {0};
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, "k", NULL, &err);
    assert_int_equal(st, BL_ENOMEM);
    assert_string_equal(err.msg, "out of memory");
    st = BL_OK;
    bl_json_push(&st, NULL, bl_json_int(2), &err);
    assert_int_equal(st, BL_ENOMEM);
    st = BL_OK;
    bl_json_put(&st, NULL, "k", bl_json_int(3), &err);
    assert_int_equal(st, BL_ENOMEM);

    /* Once set, the status and its message stay: later calls only free. */
    st = bl_fail(&err, BL_EVALUE, "first");
    bl_json_put(&st, o, "k", bl_json_int(4), &err);
    bl_json_put(&st, o, "n", NULL, &err);
    bl_json_push(&st, NULL, bl_json_string("s"), &err);
    assert_int_equal(st, BL_EVALUE);
    assert_string_equal(err.msg, "first");
    assert_int_equal(bl_json_size(o), 0);

    /* Replacing a key keeps its place, as bl_json_object_set does. */
    st = BL_OK;
    bl_json_put(&st, o, "k", bl_json_int(5), &err);
    bl_json_put(&st, o, "m", bl_json_int(6), &err);
    bl_json_put(&st, o, "k", bl_json_int(7), &err);
    assert_int_equal(st, BL_OK);
    assert_string_equal(bl_json_key_at(o, 0, NULL), "k");
    assert_int_equal(bl_json_get_int(bl_json_value_at(o, 0)), 7);
    assert_int_equal(bl_json_size(o), 2);
    bl_json_destroy(o);
}

/* ---- allocation failures --------------------------------------------- */

/* Fails every allocation of `op` in turn until it succeeds: each run must end
 * in BL_OK or BL_ENOMEM (never another error), and leaks show under LSan. */
static void fail_each_allocation(bl_status (*op)(const void *ctx, bl_error *err), const void *ctx)
{
    for (long n = 1;; n++) {
        bl_error err = {0};
        bl_alloc_fail_at(n);
        bl_status st = op(ctx, &err);
        long count = bl_alloc_count();
        bl_alloc_fail_at(0);
        if (st == BL_OK) {
            assert_true(count < n);
            return;
        }
        if (st != BL_ENOMEM)
            fail_msg("failing allocation %ld gave %s: %s", n, bl_status_kind(st), err.msg);
        assert_int_equal(err.status, BL_ENOMEM);
        assert_true(n < 1000000);
    }
}

static bl_status op_parse_and_digest(const void *ctx, bl_error *err)
{
    const char *text = ctx;
    bl_json *v = NULL;
    bl_status st = bl_json_parse(text, strlen(text), NULL, &v, err);
    if (st != BL_OK) {
        assert_null(v);
        return st;
    }
    /* A parse that succeeds under injection must be the true tree. */
    char hex[65];
    st = bl_json_digest(v, hex, err);
    if (st == BL_OK)
        assert_string_equal(hex, CONTRACT_DIGEST);
    bl_json_destroy(v);
    return st;
}

static bl_status op_read_file(const void *ctx, bl_error *err)
{
    bl_json *v = NULL;
    bl_status st = bl_json_read_file(ctx, &v, err);
    if (st == BL_OK)
        assert_int_equal(bl_json_size(v), 2);
    else
        assert_null(v);
    bl_json_destroy(v);
    return st;
}

static bl_status op_copy_and_write(const void *ctx, bl_error *err)
{
    const bl_json *v = ctx;
    bl_json *copy = bl_json_copy(v);
    if (!copy)
        return bl_fail(err, BL_ENOMEM, "copy failed");
    char *text = NULL;
    bl_status st = bl_json_canonical(copy, &text, NULL, err);
    bl_free(text);
    if (st == BL_OK) {
        bl_buf b;
        bl_buf_init(&b);
        st = bl_json_write(copy, BL_JSON_SPACED | BL_JSON_SORT_KEYS, &b, err);
        bl_buf_clear(&b);
    }
    bl_json_destroy(copy);
    return st;
}

static bl_status op_build(const void *ctx, bl_error *err)
{
    (void)ctx;
    static const uint64_t big[] = {1, 2, 3};
    bl_json *o = bl_json_object();
    if (!o)
        return bl_fail(err, BL_ENOMEM, "no object");
    bl_json *a = bl_json_array();
    bl_status st = bl_json_object_set(o, "list", a, err);
    for (int i = 0; i < 20 && st == BL_OK; i++)
        st = bl_json_array_append(a, bl_json_bigint(i % 2, big, 3), err);
    for (int i = 0; i < 20 && st == BL_OK; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%02d", 19 - i);
        st = bl_json_object_set(o, key, bl_json_string(key), err);
    }
    char hex[65];
    if (st == BL_OK)
        st = bl_json_digest(o, hex, err);
    bl_json_destroy(o);
    return st;
}

static bl_status op_sticky_build(const void *ctx, bl_error *err)
{
    (void)ctx;
    bl_json *v = NULL;
    bl_status st = build_sticky(&v, err);
    if (st != BL_OK) {
        assert_null(v);
        return st;
    }
    /* A build that succeeds under injection must be the whole document. */
    char *text = NULL;
    st = bl_json_canonical(v, &text, NULL, err);
    if (st == BL_OK)
        assert_string_equal(text, sticky_text);
    bl_free(text);
    bl_json_destroy(v);
    return st;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    size_t len;
    char *text = contract_text(&len);
    fail_each_allocation(op_parse_and_digest, text);
    fail_each_allocation(op_read_file, contract_path());
    bl_json *v = NULL;
    assert_int_equal(bl_json_parse(text, len, NULL, &v, NULL), BL_OK);
    fail_each_allocation(op_copy_and_write, v);
    bl_json_destroy(v);
    fail_each_allocation(op_build, NULL);
    fail_each_allocation(op_sticky_build, NULL);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract_vector_round_trips),
        cmocka_unit_test(test_contract_int_float_swap_changes_digest),
        cmocka_unit_test(test_contract_key_order_does_not_matter),
        cmocka_unit_test(test_float_repr_examples),
        cmocka_unit_test(test_float_repr_matches_python),
        cmocka_unit_test(test_string_escaping),
        cmocka_unit_test(test_string_invalid_utf8),
        BL_TEST_IN_DIR(test_string_escaping_matches_python),
        BL_TEST_IN_DIR(test_indent_matches_python),
        cmocka_unit_test(test_integers),
        BL_TEST_IN_DIR(test_bigint_decimal_matches_python),
        cmocka_unit_test(test_reader_values),
        cmocka_unit_test(test_reader_errors),
        BL_TEST_IN_DIR(test_read_file),
        cmocka_unit_test(test_writer_sorting_and_separators),
        cmocka_unit_test(test_writer_rejects_non_finite),
        cmocka_unit_test(test_typed_access),
        cmocka_unit_test(test_equality_and_copy),
        cmocka_unit_test(test_sticky_builders),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
