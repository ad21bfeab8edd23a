/* The .npy reader: every shared fixture and a set of crafted valid files
 * compared with what NumPy itself reads, then one crafted bad file per
 * error class, allocation failures, and the element getters. */
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/npy.h"
#include "support.h"

/* ---- crafting files ------------------------------------------------------ */

typedef struct bytes {
    unsigned char *p;
    size_t len;
} bytes;

/* A .npy file as NumPy lays it out: preamble, the dict padded with spaces
 * and a newline to a multiple of 64 bytes, then the data. */
static bytes craft(int major, int minor, const char *dict, const void *data, size_t nbytes)
{
    size_t pre = major == 1 ? 10 : 12;
    size_t dlen = strlen(dict);
    size_t hlen = dlen + 1;
    hlen += (64 - (pre + hlen) % 64) % 64;
    bytes b = {malloc(pre + hlen + nbytes + 1), pre + hlen + nbytes};
    assert_non_null(b.p);
    memcpy(b.p, "\x93NUMPY", 6);
    b.p[6] = (unsigned char)major;
    b.p[7] = (unsigned char)minor;
    for (size_t i = 0; i < pre - 8; i++)
        b.p[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(b.p + pre, dict, dlen);
    memset(b.p + pre + dlen, ' ', hlen - dlen - 1);
    b.p[pre + hlen - 1] = '\n';
    if (nbytes)
        memcpy(b.p + pre + hlen, data, nbytes);
    return b;
}

static char *write_file(const char *dir, const char *name, bytes b)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s", path);
    if (b.len)
        assert_int_equal(fwrite(b.p, 1, b.len, f), b.len);
    fclose(f);
    return path;
}

static bytes read_bytes(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    bytes b = {malloc((size_t)n + 1), (size_t)n};
    assert_non_null(b.p);
    assert_int_equal(fread(b.p, 1, b.len, f), b.len);
    fclose(f);
    return b;
}

static const char *descr_of(bl_npy_dtype t)
{
    switch (t) {
    case BL_NPY_F8: return "<f8";
    case BL_NPY_F4: return "<f4";
    case BL_NPY_I8: return "<i8";
    case BL_NPY_I4: return "<i4";
    case BL_NPY_I1: return "|i1";
    case BL_NPY_B1: return "|b1";
    }
    return "?";
}

/* ---- valid files against NumPy ------------------------------------------ */

typedef struct good_file {
    const char *name;
    int major;
    const char *dict;
    const void *data;
    size_t nbytes;
} good_file;

static void compare_with_numpy(const char *path, const bl_npy *a, const unsigned char *rec, size_t nb)
{
    const unsigned char *nl = memchr(rec, '\n', nb);
    if (!nl)
        fail_msg("%s: oracle record without a header line", path);
    char line[256];
    size_t ll = (size_t)(nl - rec);
    assert_true(ll < sizeof line);
    memcpy(line, rec, ll);
    line[ll] = '\0';
    char descr[16];
    int ndim, used;
    if (sscanf(line, "%15s %d%n", descr, &ndim, &used) != 2)
        fail_msg("%s: bad oracle line '%s'", path, line);
    if (strcmp(descr, descr_of(a->dtype)) != 0)
        fail_msg("%s: dtype %s, numpy says %s", path, descr_of(a->dtype), descr);
    if (ndim != a->ndim)
        fail_msg("%s: ndim %d, numpy says %d", path, a->ndim, ndim);
    const char *p = line + used;
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        char *end;
        unsigned long long d = strtoull(p, &end, 10);
        assert_true(end != p);
        p = end;
        if (d != a->shape[i])
            fail_msg("%s: shape[%d] = %zu, numpy says %llu", path, i, a->shape[i], d);
        count *= (size_t)d;
    }
    assert_int_equal(a->count, count);
    size_t data_len = nb - ll - 1;
    assert_int_equal(data_len, a->count * a->itemsize);
    if (data_len && memcmp(a->data, nl + 1, data_len) != 0)
        fail_msg("%s: data differ from numpy's", path);
}

static void test_files_match_numpy(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    BL_REQUIRE_NUMPY();

    glob_t g;
    int rc = glob(bl_test_shared_path("fixtures/*/*.npy"), 0, NULL, &g);
    if (rc != 0 || g.gl_pathc == 0)
        fail_msg("no .npy fixtures under %s", bl_test_shared_path("fixtures"));

    /* Crafted files for what the fixtures lack: version 2, odd layouts,
     * empty arrays, every dtype, special values. */
    double f8[6] = {1.5, -0.0, INFINITY, -INFINITY, 4.9e-324, NAN};
    float f4[5] = {1.0f, -2.5f, NAN, 1e-45f, 3.4028235e38f};
    int64_t i8[3] = {INT64_MIN, -1, INT64_MAX};
    int32_t i4[4] = {INT32_MIN, 0, 7, INT32_MAX};
    int8_t i1[3] = {-128, 0, 127};
    unsigned char b1[6] = {1, 0, 0, 1, 1, 0};
    double scalar = -3.25;
    const good_file good[] = {
        {"v2.npy", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", f8, sizeof f8},
        {"v2_empty.npy", 2, "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }", NULL, 0},
        {"scalar.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &scalar, 8},
        {"empty.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", NULL, 0},
        {"empty2.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 0), }", NULL, 0},
        {"f4.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f4, sizeof f4},
        {"i8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", i8, sizeof i8},
        {"i4.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", i4, sizeof i4},
        {"i1.npy", 1, "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 3, 1), }", i1, sizeof i1},
        {"b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3, 2), }", b1, sizeof b1},
        /* Key order, quotes, spacing and the trailing comma are free. */
        {"layout.npy", 1, "{\"shape\":(6,) ,\t'fortran_order'\n:False,'descr' : \"<f8\"}", f8, sizeof f8},
        {"layout2.npy", 2, "{ 'fortran_order': False, 'descr': '|b1', 'shape': ( 2 , 3 , ) , }", b1, sizeof b1},
    };
    enum { NGOOD = sizeof good / sizeof *good };

    char *dir = bl_test_mkdtemp();
    char *paths[NGOOD];
    for (size_t i = 0; i < NGOOD; i++) {
        bytes b = craft(good[i].major, 0, good[i].dict, good[i].data, good[i].nbytes);
        paths[i] = write_file(dir, good[i].name, b);
        free(b.p);
    }

    size_t cap = (g.gl_pathc + NGOOD) * 4200 + 1, used = 0;
    char *req = malloc(cap);
    assert_non_null(req);
    req[0] = '\0';
    for (size_t i = 0; i < g.gl_pathc + NGOOD; i++) {
        const char *p = i < g.gl_pathc ? g.gl_pathv[i] : paths[i - g.gl_pathc];
        if (strpbrk(p, " \t\n"))
            fail_msg("the oracle cannot take a path with whitespace: %s", p);
        used += (size_t)snprintf(req + used, cap - used, "npy %s\n", p);
        assert_true(used < cap);
    }
    unsigned char *out;
    size_t len, pos = 0;
    bl_test_numpy(req, &out, &len);
    free(req);

    for (size_t i = 0; i < g.gl_pathc + NGOOD; i++) {
        const char *p = i < g.gl_pathc ? g.gl_pathv[i] : paths[i - g.gl_pathc];
        size_t nb;
        const unsigned char *rec = bl_test_numpy_next(out, len, &pos, &nb);
        bl_error err = {0};
        bl_npy *a = NULL;
        if (bl_npy_read(p, &a, &err) != BL_OK)
            fail_msg("%s", err.msg);
        compare_with_numpy(p, a, rec, nb);
        bl_npy_destroy(a);
        /* The in-memory entry point reads the same bytes the same way. */
        bytes b = read_bytes(p);
        if (bl_npy_parse(b.p, b.len, p, &a, &err) != BL_OK)
            fail_msg("%s", err.msg);
        compare_with_numpy(p, a, rec, nb);
        bl_npy_destroy(a);
        free(b.p);
    }
    assert_int_equal(pos, len);
    free(out);
    for (size_t i = 0; i < NGOOD; i++)
        free(paths[i]);
    bl_test_rmtree(dir);
    free(dir);
    globfree(&g);
}

/* ---- values, getters and special layouts ------------------------------- */

static bl_npy *parse_ok(bytes b)
{
    bl_error err = {0};
    bl_npy *a = NULL;
    if (bl_npy_parse(b.p, b.len, "crafted", &a, &err) != BL_OK)
        fail_msg("%s", err.msg);
    free(b.p);
    return a;
}

static void test_getters(void **state)
{
    double f8[3] = {0.5, -0.0, 1e300};
    bl_npy *a = parse_ok(craft(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f8, sizeof f8));
    assert_int_equal(a->dtype, BL_NPY_F8);
    assert_int_equal(a->itemsize, 8);
    assert_int_equal(a->ndim, 1);
    assert_int_equal(a->shape[0], 3);
    assert_int_equal(a->count, 3);
    assert_true(bl_npy_get_f64(a, 0) == 0.5);
    assert_true(signbit(bl_npy_get_f64(a, 1)));
    assert_true(bl_npy_get_f64(a, 2) == 1e300);
    bl_npy_destroy(a);

    float f4[2] = {0.1f, -7.0f};
    a = parse_ok(craft(1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4, sizeof f4));
    assert_int_equal(a->itemsize, 4);
    assert_true(bl_npy_get_f64(a, 0) == (double)0.1f);
    assert_true(bl_npy_get_f64(a, 1) == -7.0);
    bl_npy_destroy(a);

    int64_t i8[2] = {INT64_MIN, 123456789012345};
    a = parse_ok(craft(1, 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", i8, sizeof i8));
    assert_int_equal(a->ndim, 2);
    assert_true(bl_npy_get_i64(a, 0) == INT64_MIN);
    assert_true(bl_npy_get_i64(a, 1) == 123456789012345);
    assert_true(bl_npy_get_f64(a, 1) == 123456789012345.0);
    bl_npy_destroy(a);

    int32_t i4[2] = {-5, INT32_MAX};
    a = parse_ok(craft(1, 0, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", i4, sizeof i4));
    assert_true(bl_npy_get_i64(a, 0) == -5);
    assert_true(bl_npy_get_i64(a, 1) == INT32_MAX);
    bl_npy_destroy(a);

    int8_t i1[2] = {-128, 5};
    a = parse_ok(craft(1, 0, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", i1, sizeof i1));
    assert_int_equal(a->itemsize, 1);
    assert_true(bl_npy_get_i64(a, 0) == -128);
    assert_true(bl_npy_get_f64(a, 1) == 5.0);
    bl_npy_destroy(a);

    unsigned char b1[2] = {0, 1};
    a = parse_ok(craft(1, 0, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", b1, sizeof b1));
    assert_true(bl_npy_get_i64(a, 0) == 0);
    assert_true(bl_npy_get_i64(a, 1) == 1);
    assert_true(bl_npy_get_f64(a, 1) == 1.0);
    bl_npy_destroy(a);

    /* 0-d: no dimensions, one element. */
    int64_t one = 42;
    a = parse_ok(craft(1, 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", &one, 8));
    assert_int_equal(a->ndim, 0);
    assert_int_equal(a->count, 1);
    assert_true(bl_npy_get_i64(a, 0) == 42);
    bl_npy_destroy(a);

    /* Empty: zero elements, a valid (freeable) data pointer. */
    a = parse_ok(craft(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", NULL, 0));
    assert_int_equal(a->ndim, 1);
    assert_int_equal(a->count, 0);
    assert_non_null(a->data);
    bl_npy_destroy(a);
    /* A zero dimension empties the array even beside huge ones, as long as
     * the others times the item size fit (NumPy's rule: np.empty((2**59, 0))
     * exists, np.empty((2**62, 0)) is "too big"). */
    a = parse_ok(craft(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (576460752303423488, 0), }", NULL, 0));
    assert_int_equal(a->count, 0);
    assert_int_equal(a->shape[0], (size_t)576460752303423488u);
    bl_npy_destroy(a);
    bl_error err0 = {0};
    bytes tb = craft(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 0), }", NULL, 0);
    assert_int_equal(bl_npy_parse(tb.p, tb.len, "x", &a, &err0), BL_EVALUE);
    assert_non_null(strstr(err0.msg, "shape overflows"));
    free(tb.p);
    /* Eight dimensions is the most. */
    double eight = 8.0;
    a = parse_ok(craft(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1), }", &eight, 8));
    assert_int_equal(a->ndim, 8);
    bl_npy_destroy(a);

    /* Version 2 with a header beyond version 1's 65535-byte limit. */
    size_t big = 70000;
    char *dict = malloc(big + 1);
    assert_non_null(dict);
    const char *head = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), ";
    memset(dict, ' ', big);
    memcpy(dict, head, strlen(head));
    dict[big - 1] = '}';
    dict[big] = '\0';
    a = parse_ok(craft(2, 0, dict, f8, sizeof f8));
    assert_int_equal(a->count, 3);
    assert_true(bl_npy_get_f64(a, 2) == 1e300);
    bl_npy_destroy(a);
    /* ... and the same through the file reader. */
    const char *dir = bl_test_dir(state);
    bytes b = craft(2, 0, dict, f8, sizeof f8);
    char *path = write_file(dir, "bighead.npy", b);
    free(b.p);
    bl_error err = {0};
    assert_int_equal(bl_npy_read(path, &a, &err), BL_OK);
    assert_true(bl_npy_get_f64(a, 0) == 0.5);
    bl_npy_destroy(a);
    free(path);
    free(dict);
}

/* ---- bad files ----------------------------------------------------------- */

typedef struct bad_case {
    const char *name;
    bytes b;
    bl_status status;
    const char *says; /* a piece of the message after "<path>: " */
} bad_case;

static bytes raw(const void *p, size_t n)
{
    bytes b = {malloc(n + 1), n};
    assert_non_null(b.p);
    memcpy(b.p, p, n);
    return b;
}

static bytes with_tail(bytes b, size_t drop, size_t add)
{
    b.len -= drop;
    unsigned char *p = realloc(b.p, b.len + add + 1);
    assert_non_null(p);
    b.p = p;
    memset(b.p + b.len, 0xab, add);
    b.len += add;
    return b;
}

#define F8_DICT(shape) "{'descr': '<f8', 'fortran_order': False, 'shape': " shape ", }"

static void check_error(const char *path, bl_status got, const bl_error *err, bl_status want,
                        const char *says)
{
    if (got != want)
        fail_msg("%s: status %s, expected %s (%s)", path, bl_status_kind(got), bl_status_kind(want),
                 err->msg);
    assert_int_equal(err->status, want);
    size_t pl = strlen(path);
    if (strncmp(err->msg, path, pl) != 0 || strncmp(err->msg + pl, ": ", 2) != 0)
        fail_msg("message does not start with the path: %s", err->msg);
    if (!strstr(err->msg, says))
        fail_msg("message '%s' lacks '%s'", err->msg, says);
}

static void test_bad_files(void **state)
{
    double d[4] = {1, 2, 3, 4};
    unsigned char bad_bool[3] = {0, 2, 1};
    bad_case cases[] = {
        {"magic.npy", raw("\x93NUMPZ\x01\x00\x10\x00{}              \n", 26), BL_EVALUE, "bad magic"},
        {"text.npy", raw("hello, world\n", 13), BL_EVALUE, "bad magic"},
        {"empty.npy", raw("", 0), BL_EVALUE, "truncated .npy file"},
        {"short.npy", raw("\x93NUM", 4), BL_EVALUE, "truncated .npy file"},
        {"nolen.npy", raw("\x93NUMPY\x02\x00\x10\x00", 10), BL_EVALUE, "truncated .npy header"},
        {"v3.npy", craft(3, 0, F8_DICT("(1,)"), d, 8), BL_EVALUE, "unsupported .npy format version 3.0"},
        {"v1_1.npy", craft(1, 1, F8_DICT("(1,)"), d, 8), BL_EVALUE, "format version 1.1"},
        {"bigendian.npy", craft(1, 0, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", d, 8),
         BL_EVALUE, "big-endian dtype '>f8' is not supported"},
        {"bigendian4.npy", craft(1, 0, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", d, 8),
         BL_EVALUE, "big-endian dtype '>i4'"},
        {"fortran.npy", craft(1, 0, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", d, 32),
         BL_EVALUE, "fortran_order True is not supported"},
        {"c16.npy", craft(1, 0, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", d, 32),
         BL_EVALUE, "unsupported dtype '<c16'"},
        {"u2.npy", craft(1, 0, "{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }", d, 8),
         BL_EVALUE, "unsupported dtype '<u2'"},
        {"lt_i1.npy", craft(1, 0, "{'descr': '<i1', 'fortran_order': False, 'shape': (8,), }", d, 8),
         BL_EVALUE, "unsupported dtype '<i1'"},
        {"object.npy", craft(1, 0, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", d, 8),
         BL_EVALUE, "object arrays"},
        {"struct.npy", craft(1, 0, "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", d, 8),
         BL_EVALUE, "unsupported dtype"},
        {"truncated.npy", craft(1, 0, F8_DICT("(4,)"), d, 24), BL_EVALUE,
         "truncated .npy data (32 bytes expected, 24 found)"},
        {"truncated0d.npy", craft(1, 0, F8_DICT("()"), d, 0), BL_EVALUE,
         "truncated .npy data (8 bytes expected, 0 found)"},
        {"trailing.npy", with_tail(craft(1, 0, F8_DICT("(4,)"), d, 32), 0, 3), BL_EVALUE,
         "unexpected bytes after the .npy data"},
        {"emptytrail.npy", craft(1, 0, F8_DICT("(0,)"), d, 8), BL_EVALUE,
         "unexpected bytes after the .npy data"},
        {"cuthead.npy", with_tail(craft(1, 0, F8_DICT("(1,)"), d, 0), 30, 0), BL_EVALUE,
         "truncated .npy header"},
        {"junk.npy", craft(1, 0, F8_DICT("(1,)") " x", d, 8), BL_EVALUE, "malformed .npy header"},
        {"junk2.npy", craft(1, 0, F8_DICT("(1,)") "}", d, 8), BL_EVALUE, "nothing after the header dict"},
        {"notdict.npy", craft(1, 0, "[1, 2]", d, 8), BL_EVALUE, "not a dict"},
        {"nulhead.npy", craft(1, 0, "", d, 8), BL_EVALUE, "not a dict"},
        {"missing.npy", craft(1, 0, "{'descr': '<f8', 'shape': (1,)}", d, 8), BL_EVALUE,
         "no 'fortran_order' key"},
        {"unknown.npy", craft(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", d, 8),
         BL_EVALUE, "unexpected key 'x'"},
        {"repeated.npy", craft(1, 0, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", d, 8),
         BL_EVALUE, "repeated key"},
        {"nocomma.npy", craft(1, 0, "{'descr': '<f8' 'fortran_order': False, 'shape': (1,)}", d, 8),
         BL_EVALUE, "malformed .npy header"},
        {"nocolon.npy", craft(1, 0, "{'descr' '<f8', 'fortran_order': False, 'shape': (1,)}", d, 8),
         BL_EVALUE, "expected ':'"},
        {"notuple.npy", craft(1, 0, F8_DICT("(1)"), d, 8), BL_EVALUE, "shape is not a tuple"},
        {"list.npy", craft(1, 0, F8_DICT("[1]"), d, 8), BL_EVALUE, "shape is not a tuple"},
        {"negative.npy", craft(1, 0, F8_DICT("(-1,)"), d, 8), BL_EVALUE, "non-negative integer"},
        {"float.npy", craft(1, 0, F8_DICT("(1.0,)"), d, 8), BL_EVALUE, "malformed .npy header"},
        {"leading0.npy", craft(1, 0, F8_DICT("(01,)"), d, 8), BL_EVALUE, "malformed .npy header"},
        {"bool.npy", craft(1, 0, "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", d, 8), BL_EVALUE,
         "True or False"},
        {"string.npy", craft(1, 0, "{'descr': '<f8", d, 8), BL_EVALUE, "expected a closed string"},
        {"string2.npy", craft(1, 0, "{'descr': '<f8, 'fortran_order': False, 'shape': (1,)}", d, 8),
         BL_EVALUE, "unsupported dtype '<f8, '"},
        {"overflow.npy", craft(1, 0, F8_DICT("(4611686018427387904, 4611686018427387904)"), d, 8),
         BL_EVALUE, "shape overflows"},
        {"overflow2.npy", craft(1, 0, F8_DICT("(1152921504606846976,)"), d, 8), BL_EVALUE,
         "shape overflows"},
        {"hugedim.npy", craft(1, 0, F8_DICT("(99999999999999999999999,)"), d, 8), BL_EVALUE,
         "dimension too large"},
        {"ninedims.npy", craft(1, 0, F8_DICT("(1,1,1,1,1,1,1,1,1)"), d, 8), BL_EVALUE,
         "more than 8 dimensions"},
        {"control.npy", craft(1, 0, "{'descr': '<f8\x01', 'fortran_order': False, 'shape': (1,), }", d, 8),
         BL_EVALUE, "unsupported dtype '<f8?'"},
        {"longdescr.npy", craft(1, 0, "{'descr': '<f8aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', "
                                "'fortran_order': False, 'shape': (1,), }", d, 8),
         BL_EVALUE, "unsupported dtype '<f8aaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'"},
        {"badbool.npy", craft(1, 0, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bad_bool, 3),
         BL_EVALUE, "bool element 1 holds byte 2"},
    };
    enum { NCASES = sizeof cases / sizeof *cases };

    const char *dir = bl_test_dir(state);
    for (size_t i = 0; i < NCASES; i++) {
        char *path = write_file(dir, cases[i].name, cases[i].b);
        bl_error err = {0};
        bl_npy *a = (bl_npy *)&err; /* must be reset to NULL on failure */
        bl_status st = bl_npy_read(path, &a, &err);
        check_error(path, st, &err, cases[i].status, cases[i].says);
        assert_null(a);
        /* The in-memory parser agrees and names what it was given. */
        a = (bl_npy *)&err;
        st = bl_npy_parse(cases[i].b.p, cases[i].b.len, cases[i].name, &a, &err);
        check_error(cases[i].name, st, &err, cases[i].status, cases[i].says);
        assert_null(a);
        free(path);
        free(cases[i].b.p);
    }

    /* No bytes at all. */
    bl_error err0 = {0};
    bl_npy *none = NULL;
    assert_int_equal(bl_npy_parse(NULL, 0, "nothing", &none, &err0), BL_EVALUE);
    assert_string_equal(err0.msg, "nothing: truncated .npy file (0 bytes)");

    /* File-system errors keep their own kinds. */
    bl_error err = {0};
    bl_npy *a = NULL;
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/absent.npy", dir);
    check_error(path, bl_npy_read(path, &a, &err), &err, BL_ENOENT, "No such file");
    check_error(dir, bl_npy_read(dir, &a, &err), &err, BL_EISDIR, "Is a directory");
    snprintf(path, n, "%s/magic.npy/x.npy", dir);
    check_error(path, bl_npy_read(path, &a, &err), &err, BL_EOS, "Not a directory");
    /* Not a regular file: refused, never read (a FIFO could block, a
     * device never end). */
    check_error("/dev/null", bl_npy_read("/dev/null", &a, &err), &err, BL_EOS,
                "is a character device, not a regular file");
    assert_null(a);
    free(path);
}

/* ---- allocation failures ------------------------------------------------- */

/* A .npy that is a FIFO is refused at once: the old reader waited in open()
 * for a writer that never came (SIGALRM fails the test if it still does). */
static void test_fifo_refused(void **state)
{
    const char *path = bl_test_path(state, "array.npy");
    assert_int_equal(mkfifo(path, 0600), 0);
    bl_npy *a = (bl_npy *)&a;
    bl_error err = {0};
    alarm(10);
    check_error(path, bl_npy_read(path, &a, &err), &err, BL_EOS, "is a FIFO, not a regular file");
    alarm(0);
    assert_null(a);
}

static void test_allocation_failures(void **state)
{
    double d[4] = {1, 2, 3, 4};
    bytes b = craft(1, 0, F8_DICT("(2, 2)"), d, sizeof d);
    const char *dir = bl_test_dir(state);
    char *path = write_file(dir, "ok.npy", b);
    int ok_read = 0, ok_parse = 0;
    for (long k = 1; k < 20 && !(ok_read && ok_parse); k++) {
        bl_error err = {0};
        bl_npy *a = NULL;
        bl_alloc_fail_at(k);
        bl_status st = bl_npy_read(path, &a, &err);
        if (st == BL_OK) {
            ok_read = 1;
            bl_npy_destroy(a);
        } else {
            assert_int_equal(st, BL_ENOMEM);
            assert_null(a);
            assert_non_null(strstr(err.msg, path));
        }
        bl_alloc_fail_at(k);
        st = bl_npy_parse(b.p, b.len, "mem", &a, &err);
        if (st == BL_OK) {
            ok_parse = 1;
            bl_npy_destroy(a);
        } else {
            assert_int_equal(st, BL_ENOMEM);
            assert_null(a);
        }
    }
    bl_alloc_fail_at(0);
    assert_true(ok_read && ok_parse);
    bl_npy_destroy(NULL);
    free(path);
    free(b.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files_match_numpy),
        BL_TEST_IN_DIR(test_getters),
        BL_TEST_IN_DIR(test_bad_files),
        BL_TEST_IN_DIR(test_fifo_refused),
        BL_TEST_IN_DIR(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
