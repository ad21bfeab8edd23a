/* Provenance (include/brainlesslab/provenance.h): deterministic ZIP and .npz
 * archives, the embedded source bundle and its receipt, the build lock and
 * the environment description.
 *
 * The archives are checked by readers other than ours: Python's zipfile
 * (timestamps, modes, extra fields, local headers, member hashes) and
 * NumPy's own .npz loader with pickles refused. The bundle is checked
 * against the source tree itself, so it really is the source. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/version.h"
#include "records/provenance_bundle.h"
#include "support.h"

/* ---- helpers ------------------------------------------------------------------ */

static char *sha256_hex(const void *data, size_t len)
{
    uint8_t d[BL_SHA256_BYTES];
    OK_E(bl_sha256(data, len, d, &e_));
    char *hex = malloc(2 * BL_SHA256_BYTES + 1);
    assert_non_null(hex);
    bl_hex(d, sizeof d, hex);
    return hex;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* A file's bytes (malloc), or NULL when it cannot be read. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Runs a shell command and returns its stdout (malloc) and exit status. */
static char *capture(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        fail_msg("cannot run %s", cmd);
    size_t cap = 1 << 16, n = 0, got;
    char *out = malloc(cap + 1);
    assert_non_null(out);
    while ((got = fread(out + n, 1, cap - n, p)) > 0) {
        n += got;
        if (n == cap) {
            out = realloc(out, (cap *= 2) + 1);
            assert_non_null(out);
        }
    }
    out[n] = '\0';
    *status = pclose(p);
    return out;
}

/* Python's zipfile on an archive: checks every member's fixed fields in the
 * central directory and in its local header, then prints the member count
 * and one "sha256 name" line per member, in archive order. */
static const char zip_check_py[] =
    "import hashlib, struct, sys, zipfile\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "z = zipfile.ZipFile(sys.argv[1])\n"
    "assert z.testzip() is None\n"
    "infos = z.infolist()\n"
    "names = [i.filename for i in infos]\n"
    "assert names == sorted(names, key=lambda s: s.encode('utf-8')), 'not sorted'\n"
    "assert len(set(names)) == len(names), 'duplicates'\n"
    "for i in infos:\n"
    "    assert i.date_time == (1980, 1, 1, 0, 0, 0), (i.filename, i.date_time)\n"
    "    assert i.external_attr >> 16 == 0o100644, (i.filename, oct(i.external_attr))\n"
    "    assert i.create_system == 3, (i.filename, i.create_system)\n"
    "    assert i.compress_type == zipfile.ZIP_DEFLATED, (i.filename, i.compress_type)\n"
    "    assert i.extra == b'' and i.comment == b'', i.filename\n"
    "    assert not i.flag_bits & 0x08, i.filename\n"
    "    sig, _, flags, method, t, d = struct.unpack('<IHHHHH', data[i.header_offset:i.header_offset + 14])\n"
    "    n, e = struct.unpack('<HH', data[i.header_offset + 26:i.header_offset + 30])\n"
    "    assert sig == 0x04034b50 and e == 0 and (t, d) == (0, 0x21) and method == 8, i.filename\n"
    "assert z.comment == b''\n"
    "print(len(infos))\n"
    "for i in infos:\n"
    "    print(hashlib.sha256(z.read(i)).hexdigest(), i.filename)\n";

/* Writes the archive to a temporary file, runs zip_check_py on it and
 * returns its output (malloc); fails the test when Python objects. */
static char *python_zip_check(const void *zip, size_t len)
{
    const char *py = bl_test_python_plain();
    if (!py)
        return NULL;
    char *dir = bl_test_mkdtemp();
    char script[4096], archive[4096], cmd[12288];
    snprintf(script, sizeof script, "%s/check.py", dir);
    snprintf(archive, sizeof archive, "%s/archive.zip", dir);
    write_file(script, zip_check_py, sizeof zip_check_py - 1);
    write_file(archive, zip, len);
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", py, script, archive);
    int status;
    char *out = capture(cmd, &status);
    if (status != 0)
        fail_msg("Python's zipfile rejected the archive: %s", cmd);
    bl_test_rmtree(dir);
    free(dir);
    return out;
}

#define REQUIRE_PYTHON()                                                        \
    BL_REQUIRE(bl_test_python_plain(), "python3 (its zipfile module checks the archives)")

/* Some members: nested names, an empty file, binary bytes, and a large
 * compressible one so deflate has real work. */
static unsigned char binary[256];
static char *large;
static size_t large_len;
static bl_zip_entry sample[6];
static const size_t nsample = sizeof sample / sizeof *sample;

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof binary; i++)
        binary[i] = (unsigned char)(255 - i);
    large_len = 200000;
    large = malloc(large_len);
    if (!large)
        return -1;
    for (size_t i = 0; i < large_len; i++)
        large[i] = (char)('a' + (i * 7 + i / 13) % 26);
    sample[0] = (bl_zip_entry){"src/zeta.c", "int zeta;\n", 10};
    sample[1] = (bl_zip_entry){"README.md", "# read me\n", 10};
    sample[2] = (bl_zip_entry){"empty", NULL, 0};
    sample[3] = (bl_zip_entry){"data/binary.bin", binary, sizeof binary};
    sample[4] = (bl_zip_entry){"data/large.txt", large, large_len};
    sample[5] = (bl_zip_entry){"caf\xc3\xa9/\xe2\x82\xac.txt", "euro", 4};
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(large);
    return 0;
}

static void build(const bl_zip_entry *entries, size_t n, bl_buf *out)
{
    bl_buf_init(out);
    bl_error err = {0};
    bl_status st = bl_zip_build(entries, n, out, &err);
    if (st != BL_OK)
        fail_msg("bl_zip_build: %s", err.msg);
}

/* ---- archives ----------------------------------------------------------------- */

static void test_zip_deterministic(void **state)
{
    (void)state;
    bl_buf a, b, c;
    build(sample, nsample, &a);
    build(sample, nsample, &b);
    /* The same members in another order give the same bytes. */
    bl_zip_entry shuffled[6];
    const size_t order[6] = {4, 2, 5, 0, 3, 1};
    for (size_t i = 0; i < nsample; i++)
        shuffled[i] = sample[order[i]];
    build(shuffled, nsample, &c);
    assert_true(a.len > 22 && memcmp(a.data, "PK\3\4", 4) == 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.data, b.data, a.len);
    assert_int_equal(a.len, c.len);
    assert_memory_equal(a.data, c.data, a.len);
    /* Deflate did its work on the large member. */
    assert_true(a.len < large_len / 4);
    /* bl_zip_build appends: a prefix already in the buffer is kept. */
    bl_buf d;
    bl_buf_init(&d);
    bl_buf_puts(&d, "prefix");
    OK_E(bl_zip_build(sample, nsample, &d, &e_));
    assert_int_equal(d.len, 6 + a.len);
    assert_memory_equal(d.data, "prefix", 6);
    assert_memory_equal(d.data + 6, a.data, a.len);
    bl_buf_clear(&a);
    bl_buf_clear(&b);
    bl_buf_clear(&c);
    bl_buf_clear(&d);
}

static void test_zip_round_trip(void **state)
{
    (void)state;
    bl_buf zip;
    build(sample, nsample, &zip);
    bl_zip_entry *got = NULL;
    size_t n = 0;
    bl_error err = {0};
    if (bl_zip_read(zip.data, zip.len, &got, &n, &err) != BL_OK)
        fail_msg("bl_zip_read: %s", err.msg);
    assert_int_equal(n, nsample);
    /* Byte order of names: "README.md" < "caf\xc3\xa9/..." < "data/..." < ... */
    const char *expect[6] = {"README.md", "caf\xc3\xa9/\xe2\x82\xac.txt", "data/binary.bin",
                             "data/large.txt", "empty", "src/zeta.c"};
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(got[i].name, expect[i]);
        const bl_zip_entry *want = NULL;
        for (size_t k = 0; k < nsample; k++)
            if (strcmp(sample[k].name, got[i].name) == 0)
                want = &sample[k];
        assert_non_null(want);
        assert_int_equal(got[i].len, want->len);
        if (want->len)
            assert_memory_equal(got[i].data, want->data, want->len);
    }
    bl_zip_entries_destroy(got, n);

    /* An archive without members is the bare end record, and reads back empty. */
    bl_buf empty;
    build(NULL, 0, &empty);
    assert_int_equal(empty.len, 22);
    assert_memory_equal(empty.data, "PK\5\6", 4);
    OK_E(bl_zip_read(empty.data, empty.len, &got, &n, &e_));
    assert_int_equal(n, 0);
    bl_zip_entries_destroy(got, n);
    bl_buf_clear(&empty);
    bl_buf_clear(&zip);
}

static void test_zip_python_reads_it(void **state)
{
    (void)state;
    REQUIRE_PYTHON();
    bl_buf zip;
    build(sample, nsample, &zip);
    char *out = python_zip_check(zip.data, zip.len);
    /* Python's member hashes agree with the bytes we put in. */
    char expect[4096] = "6\n";
    const size_t sorted[6] = {1, 5, 3, 4, 2, 0};
    for (size_t i = 0; i < nsample; i++) {
        const bl_zip_entry *e = &sample[sorted[i]];
        char *hex = sha256_hex(e->len ? e->data : "", e->len);
        snprintf(expect + strlen(expect), sizeof expect - strlen(expect), "%s %s\n", hex, e->name);
        free(hex);
    }
    assert_string_equal(out, expect);
    free(out);
    bl_buf_clear(&zip);

    bl_buf empty;
    build(NULL, 0, &empty);
    out = python_zip_check(empty.data, empty.len);
    assert_string_equal(out, "0\n");
    free(out);
    bl_buf_clear(&empty);
}

static void test_zip_unsafe_names(void **state)
{
    (void)state;
    const char *bad[] = {"", "/etc/passwd", "../up", "a/../b", "a/..", "./a", "a/./b",
                         "a//b", "dir/", "a\\b", "C:evil", "tab\there", "bad\xff",
                         "overlong\xc0\xaf", "surrogate\xed\xa0\x80", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bl_buf out;
        bl_buf_init(&out);
        bl_buf_puts(&out, "kept");
        bl_zip_entry e[2] = {{"fine.txt", "x", 1}, {bad[i], "y", 1}};
        bl_error err = {0};
        bl_status st = bl_zip_build(e, 2, &out, &err);
        if (st != BL_EVALUE)
            fail_msg("name %zu (\"%s\") gave %s", i, bad[i] ? bad[i] : "(null)", bl_status_kind(st));
        assert_non_null(strstr(err.msg, "unsafe archive member name"));
        assert_int_equal(out.len, 4); /* the buffer is left as it was */
        assert_string_equal(out.data, "kept");
        bl_buf_clear(&out);
    }
    /* Duplicates, and data missing behind a length. */
    bl_zip_entry dup[3] = {{"a", "1", 1}, {"b", "2", 1}, {"a", "3", 1}};
    bl_buf out;
    bl_buf_init(&out);
    bl_error err = {0};
    assert_int_equal(bl_zip_build(dup, 3, &out, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "duplicate"));
    bl_zip_entry nodata[1] = {{"a", NULL, 5}};
    assert_int_equal(bl_zip_build(nodata, 1, &out, &err), BL_EVALUE);
    assert_int_equal(out.len, 0);
    /* Names that are fine: dots inside names, hidden files, UTF-8. */
    bl_zip_entry good[3] = {{".ci/run", "", 0}, {"a..b/c.d", "", 0}, {"\xc3\xa9t\xc3\xa9", "", 0}};
    OK_E(bl_zip_build(good, 3, &out, &e_));
    bl_buf_clear(&out);
}

/* An archive made with libzip directly, naming a member `name`. */
static void raw_archive(const char *name, bl_buf *out)
{
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
    assert_non_null(src);
    zip_t *za = zip_open_from_source(src, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    assert_non_null(za);
    zip_source_keep(src);
    zip_source_t *member = zip_source_buffer(za, "evil", 4, 0);
    assert_non_null(member);
    assert_true(zip_file_add(za, name, member, ZIP_FL_ENC_UTF_8) >= 0);
    assert_int_equal(zip_close(za), 0);
    assert_int_equal(zip_source_open(src), 0);
    unsigned char chunk[4096];
    zip_int64_t got;
    bl_buf_init(out);
    while ((got = zip_source_read(src, chunk, sizeof chunk)) > 0)
        bl_buf_append(out, chunk, (size_t)got);
    zip_source_close(src);
    zip_source_free(src);
    zip_error_fini(&ze);
}

static void test_zip_read_refuses(void **state)
{
    (void)state;
    bl_zip_entry *got = (bl_zip_entry *)1;
    size_t n = 7;
    bl_error err = {0};
    assert_int_equal(bl_zip_read("not a zip archive at all, no", 28, &got, &n, &err), BL_EVALUE);
    assert_null(got);
    assert_int_equal(n, 0);
    assert_int_equal(bl_zip_read("PK", 2, &got, &n, &err), BL_EVALUE);

    bl_buf zip;
    build(sample, nsample, &zip);
    /* Truncated: the central directory is gone. */
    assert_int_equal(bl_zip_read(zip.data, zip.len / 2, &got, &n, &err), BL_EVALUE);
    /* A flipped bit inside the large member's deflate stream: either the
     * stream or the CRC check catches it. */
    size_t at = 0;
    for (size_t i = 0; i + 14 < zip.len; i++)
        if (memcmp(zip.data + i, "data/large.txt", 14) == 0) {
            at = i + 14 + 200; /* well inside its compressed data */
            break;
        }
    assert_true(at > 0 && at < zip.len);
    zip.data[at] ^= 0x10;
    assert_int_equal(bl_zip_read(zip.data, zip.len, &got, &n, &err), BL_EVALUE);
    assert_null(got);
    bl_buf_clear(&zip);

    /* Names another writer let through are refused on reading too. */
    const char *evil[] = {"../evil", "/abs", "dir/"};
    for (size_t i = 0; i < sizeof evil / sizeof *evil; i++) {
        bl_buf raw;
        raw_archive(evil[i], &raw);
        assert_int_equal(bl_zip_read(raw.data, raw.len, &got, &n, &err), BL_EVALUE);
        assert_non_null(strstr(err.msg, "unsafe archive member name"));
        bl_buf_clear(&raw);
    }
    bl_buf ok;
    raw_archive("fine/name.txt", &ok);
    OK_E(bl_zip_read(ok.data, ok.len, &got, &n, &e_));
    assert_int_equal(n, 1);
    assert_memory_equal(got[0].data, "evil", 4);
    bl_zip_entries_destroy(got, n);
    bl_buf_clear(&ok);
}

/* ---- .npz ----------------------------------------------------------------------- */

static void test_npz_loads_in_numpy(void **state)
{
    (void)state;
    BL_REQUIRE_NUMPY();
    double special[] = {1.5, -0.0, 0.0, 1e-300, 4.9e-324, DBL_MAX, -DBL_MAX, 0.1, INFINITY,
                        -INFINITY, NAN};
    size_t nlong = 1000;
    double *longer = malloc(nlong * sizeof *longer);
    assert_non_null(longer);
    for (size_t i = 0; i < nlong; i++)
        longer[i] = sin((double)i) * pow(10.0, (double)(i % 40) - 20.0);
    const char *names[] = {"event_00000001", "event_00000000", "empty"};
    const double *arrays[] = {special, longer, NULL};
    const size_t lengths[] = {sizeof special / sizeof *special, nlong, 0};

    bl_buf npz;
    bl_buf_init(&npz);
    bl_error err = {0};
    if (bl_npz_build(names, arrays, lengths, 3, &npz, &err) != BL_OK)
        fail_msg("bl_npz_build: %s", err.msg);
    bl_buf again;
    bl_buf_init(&again);
    OK_E(bl_npz_build(names, arrays, lengths, 3, &again, &e_));
    assert_int_equal(npz.len, again.len);
    assert_memory_equal(npz.data, again.data, npz.len);
    bl_buf_clear(&again);

    char *dir = bl_test_mkdtemp();
    char path[4096], request[8192];
    snprintf(path, sizeof path, "%s/features.npz", dir);
    write_file(path, npz.data, npz.len);
    snprintf(request, sizeof request, "npz %s\n", path);
    unsigned char *out;
    size_t len, pos = 0, nbytes;
    bl_test_numpy(request, &out, &len);
    const unsigned char *rec = bl_test_numpy_next(out, len, &pos, &nbytes);
    /* NumPy lists the members by name: empty, event_00000000, event_00000001. */
    const size_t order[3] = {2, 1, 0};
    size_t at = 0;
    char line[256];
    const char *nl = memchr(rec, '\n', nbytes);
    assert_non_null(nl);
    assert_memory_equal(rec, "3\n", 2);
    at = (size_t)(nl - (const char *)rec) + 1;
    for (size_t k = 0; k < 3; k++) {
        size_t i = order[k];
        nl = memchr(rec + at, '\n', nbytes - at);
        assert_non_null(nl);
        size_t hl = (size_t)(nl - (const char *)(rec + at));
        assert_true(hl < sizeof line);
        memcpy(line, rec + at, hl);
        line[hl] = '\0';
        at += hl + 1;
        char expect[256];
        snprintf(expect, sizeof expect, "%s <f8 1 %zu", names[i], lengths[i]);
        assert_string_equal(line, expect);
        assert_true(nbytes - at >= 8 * lengths[i]);
        for (size_t j = 0; j < lengths[i]; j++) {
            uint64_t bits = 0;
            for (int b = 7; b >= 0; b--)
                bits = (bits << 8) | rec[at + 8 * j + (size_t)b];
            if (bits != bl_test_bits(arrays[i][j]))
                fail_msg("%s[%zu]: NumPy read %016llx, wrote %016llx", names[i], j,
                         (unsigned long long)bits, (unsigned long long)bl_test_bits(arrays[i][j]));
        }
        at += 8 * lengths[i];
    }
    assert_int_equal(at, nbytes);
    free(out);

    /* The members are what np.save writes: our reader sees the header NumPy
     * 1.24 lays out (64-byte aligned, room for the shape to grow). */
    bl_zip_entry *members = NULL;
    size_t n = 0;
    OK_E(bl_zip_read(npz.data, npz.len, &members, &n, &e_));
    assert_int_equal(n, 3);
    assert_string_equal(members[0].name, "empty.npy");
    assert_int_equal(members[0].len, 128);
    assert_memory_equal(members[0].data,
                        "\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': False, "
                        "'shape': (0,), }",
                        10 + 57);
    assert_int_equal(members[2].len, 128 + 8 * lengths[0]);
    bl_zip_entries_destroy(members, n);
    bl_test_rmtree(dir);
    free(dir);
    free(longer);
    bl_buf_clear(&npz);

    /* Member names are checked like any archive name. */
    const char *bad[] = {"../up"};
    const double *one[] = {special};
    const size_t len1[] = {1};
    bl_buf_init(&npz);
    assert_int_equal(bl_npz_build(bad, one, len1, 1, &npz, &err), BL_EVALUE);
    bl_buf_clear(&npz);
}

/* ---- the source bundle ------------------------------------------------------------ */

/* "<project root>/<rel>", the project root being the parent of tests/. */
static const char *tree_path(const char *rel)
{
    static char path[8192];
    snprintf(path, sizeof path, "%s/../%s", bl_test_tests_dir(), rel);
    return path;
}

static const bl_zip_entry *find_entry(const bl_zip_entry *e, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(e[i].name, name) == 0)
            return &e[i];
    return NULL;
}

static void test_source_receipt(void **state)
{
    (void)state;
    size_t len = 0;
    const void *bundle = bl_source_bundle(&len);
    assert_non_null(bundle);
    assert_true(len > 1000);
    char *hex = sha256_hex(bundle, len);
    assert_string_equal(hex, bl_source_bundle_sha256());

    bl_json *receipt = NULL;
    bl_error err = {0};
    if (bl_source_receipt(&receipt, &err) != BL_OK)
        fail_msg("bl_source_receipt: %s", err.msg);
    assert_string_equal(bl_json_get_string(bl_json_get(receipt, "sha256"), NULL), hex);
    assert_string_equal(bl_json_get_string(bl_json_get(receipt, "format"), NULL),
                        "brainlesslab-source-bundle");
    assert_string_equal(bl_json_get_string(bl_json_get(receipt, "entrypoint"), NULL),
                        "brainlesslab");
    assert_int_equal(bl_json_get_int(bl_json_get(receipt, "version")), 1);
    assert_int_equal(bl_json_size(receipt), 6);
    const bl_json *files = bl_json_get(receipt, "files");
    const bl_json *hashes = bl_json_get(receipt, "file_sha256");
    assert_int_equal(bl_json_kindof(files), BL_JSON_ARRAY);
    assert_int_equal(bl_json_kindof(hashes), BL_JSON_OBJECT);
    assert_int_equal(bl_json_size(files), bl_json_size(hashes));

    /* Every member: listed in order, hashed right. */
    bl_zip_entry *members = NULL;
    size_t n = 0;
    OK_E(bl_zip_read(bundle, len, &members, &n, &e_));
    assert_int_equal(n, bl_json_size(files));
    for (size_t i = 0; i < n; i++) {
        const char *name = bl_json_get_string(bl_json_at(files, i), NULL);
        assert_string_equal(name, members[i].name);
        if (i > 0)
            assert_true(strcmp(members[i - 1].name, name) < 0);
        char *mh = sha256_hex(members[i].len ? members[i].data : "", members[i].len);
        assert_string_equal(bl_json_get_string(bl_json_get(hashes, name), NULL), mh);
        free(mh);
    }
    /* The build files and this very module are in it. */
    const char *expected[] = {"CMakeLists.txt", "Makefile", "include/brainlesslab/provenance.h",
                              "src/records/provenance.c", "src/records/zip.c",
                              "tests/test_provenance.c", "tools/source_bundle.c",
                              "tools/provenance.cmake"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        if (!find_entry(members, n, expected[i]))
            fail_msg("the source bundle lacks %s", expected[i]);
    /* Nothing from a build directory. */
    for (size_t i = 0; i < n; i++)
        assert_true(strncmp(members[i].name, "build", 5) != 0);
    /* The bundle is the source: members equal the files of the tree this
     * test was built from (files of this module, which nobody else edits
     * between the build and the test). */
    const char *same[] = {"include/brainlesslab/provenance.h", "src/records/provenance.c",
                          "src/records/zip.c", "tests/test_provenance.c",
                          "tools/source_bundle.c"};
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        size_t flen = 0;
        unsigned char *bytes = slurp(tree_path(same[i]), &flen);
        if (!bytes)
            fail_msg("cannot read %s", tree_path(same[i]));
        const bl_zip_entry *e = find_entry(members, n, same[i]);
        assert_non_null(e);
        if (e->len != flen || memcmp(e->data, bytes, flen) != 0)
            fail_msg("bundle member %s differs from the tree (rebuild?)", same[i]);
        free(bytes);
    }
    bl_zip_entries_destroy(members, n);

    /* The receipt writes as record JSON. */
    bl_buf text;
    bl_buf_init(&text);
    OK_E(bl_json_write(receipt, BL_JSON_SORT_KEYS, &text, &e_));
    const char *start = "{\"entrypoint\":\"brainlesslab\",\"file_sha256\":{";
    assert_true(strncmp(text.data, start, strlen(start)) == 0);
    bl_buf_clear(&text);
    bl_json_destroy(receipt);
    free(hex);
}

/* The receipt embedded at build time is, byte for byte, what the run-time
 * computation it replaces gives for the embedded bundle: every member
 * inflated and hashed now, the whole written as record JSON. */
static void test_build_time_receipt_equals_run_time(void **state)
{
    (void)state;
    size_t len = 0, tlen = 0;
    const void *bundle = bl_source_bundle(&len);
    const char *embedded = bl_source_receipt_text(&tlen);
    assert_non_null(embedded);
    assert_true(tlen > 100 && embedded[tlen - 1] == '\n');

    bl_json *now = NULL;
    OK_E(bl_source_receipt_of(bundle, len, &now, &e_));
    bl_buf text;
    bl_buf_init(&text);
    OK_E(bl_record_json_text(now, &text, &e_));
    assert_int_equal(text.len, tlen);
    assert_memory_equal(text.data, embedded, tlen);
    /* The text form the generator used is record JSON too. */
    bl_buf again;
    bl_buf_init(&again);
    OK_E(bl_source_receipt_text_of(bundle, len, &again, &e_));
    assert_int_equal(again.len, tlen);
    assert_memory_equal(again.data, embedded, tlen);
    /* bl_source_receipt is the parsed embedded text. */
    bl_json *parsed = NULL;
    OK_E(bl_source_receipt(&parsed, &e_));
    assert_true(bl_json_equal(parsed, now));
    assert_string_equal(bl_json_get_string(bl_json_get(parsed, "sha256"), NULL),
                        bl_source_bundle_sha256());
    /* The embedded bundle still matches its embedded hash. */
    OK_E(bl_source_bundle_verify(&e_));
    bl_json_destroy(parsed);
    bl_buf_clear(&again);
    bl_buf_clear(&text);
    bl_json_destroy(now);
}

static void test_bundle_python_reads_it(void **state)
{
    (void)state;
    REQUIRE_PYTHON();
    size_t len = 0;
    const void *bundle = bl_source_bundle(&len);
    char *out = python_zip_check(bundle, len);
    bl_json *receipt = NULL;
    OK_E(bl_source_receipt(&receipt, &e_));
    const bl_json *files = bl_json_get(receipt, "files");
    const bl_json *hashes = bl_json_get(receipt, "file_sha256");
    /* Python's listing, line by line, is the receipt. */
    bl_buf expect;
    bl_buf_init(&expect);
    bl_buf_printf(&expect, "%zu\n", bl_json_size(files));
    for (size_t i = 0; i < bl_json_size(files); i++) {
        const char *name = bl_json_get_string(bl_json_at(files, i), NULL);
        bl_buf_printf(&expect, "%s %s\n", bl_json_get_string(bl_json_get(hashes, name), NULL),
                      name);
    }
    assert_string_equal(out, expect.data);
    bl_buf_clear(&expect);
    bl_json_destroy(receipt);
    free(out);
}

/* ---- build lock and environment ------------------------------------------------- */

static void test_build_lock(void **state)
{
    (void)state;
    bl_buf lock;
    bl_buf_init(&lock);
    OK_E(bl_build_lock(&lock, &e_));
    const char *need[] = {"\n[build]\n", "\nbrainlesslab = ", "\nbuild_type = ",
                          "\nc_compiler = ", "\nc_flags = ", "-ffp-contract=off",
                          "\n[packages]\n", "\nlibjansson-dev = ", "\nlibzip-dev = ",
                          "\nlibssl-dev = ", "\nlibrandom123-dev = ", "\nzlib1g-dev = "};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (!strstr(lock.data, need[i]))
            fail_msg("build lock lacks \"%s\":\n%s", need[i], lock.data);
    char line[256];
    snprintf(line, sizeof line, "\nsource_sha256 = %s\n", bl_source_bundle_sha256());
    assert_non_null(strstr(lock.data, line));
    /* Within each section: "name = value" lines in byte order of names. */
    char prev[256] = "";
    for (char *p = lock.data; *p;) {
        char *end = strchr(p, '\n');
        assert_non_null(end); /* every line ends with a newline */
        size_t n = (size_t)(end - p);
        if (n == 0 || *p == '#') {
        } else if (*p == '[') {
            prev[0] = '\0';
        } else {
            char *eq = strstr(p, " = ");
            assert_true(eq && eq < end && eq > p);
            size_t kl = (size_t)(eq - p);
            assert_true(kl < sizeof prev);
            char key[256];
            memcpy(key, p, kl);
            key[kl] = '\0';
            if (strcmp(prev, key) >= 0)
                fail_msg("build lock keys out of order: %s then %s", prev, key);
            strcpy(prev, key);
        }
        p = end + 1;
    }
    bl_buf_clear(&lock);
}

static void test_environment_json(void **state)
{
    (void)state;
    bl_json *env = NULL;
    bl_error err = {0};
    if (bl_environment_json(&env, &err) != BL_OK)
        fail_msg("bl_environment_json: %s", err.msg);
    const char *keys[] = {"compiler", "cpu", "kernel", "libraries", "machine", "os",
                          "package_version", "platform"};
    assert_int_equal(bl_json_size(env), sizeof keys / sizeof *keys);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!bl_json_get(env, keys[i]))
            fail_msg("environment.json lacks \"%s\"", keys[i]);
    assert_string_equal(bl_json_get_string(bl_json_get(env, "platform"), NULL), "linux");
    assert_string_equal(bl_json_get_string(bl_json_get(env, "package_version"), NULL),
                        bl_version());
    /* This suite runs on Linux, where uname always answers. */
    assert_int_equal(bl_json_kindof(bl_json_get(env, "machine")), BL_JSON_STRING);
    assert_int_equal(bl_json_kindof(bl_json_get(env, "kernel")), BL_JSON_STRING);
    const bl_json *compiler = bl_json_get(env, "compiler");
    const char *ckeys[] = {"id", "version", "flags"};
    assert_int_equal(bl_json_size(compiler), 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(bl_json_kindof(bl_json_get(compiler, ckeys[i])), BL_JSON_STRING);
    const bl_json *libs = bl_json_get(env, "libraries");
    const char *lkeys[] = {"jansson", "libcrypto", "random123", "tomlplusplus", "libzip",
                           "zlib", "openmp"};
    assert_int_equal(bl_json_size(libs), sizeof lkeys / sizeof *lkeys);
    for (size_t i = 0; i < sizeof lkeys / sizeof *lkeys; i++)
        if (!bl_json_get(libs, lkeys[i]))
            fail_msg("environment.json libraries lack \"%s\"", lkeys[i]);
    /* Built with OpenMP, so its version is known. */
    assert_int_equal(bl_json_kindof(bl_json_get(libs, "openmp")), BL_JSON_STRING);
    assert_string_equal(bl_json_get_string(bl_json_get(libs, "libzip"), NULL),
                        zip_libzip_version());
    /* Writable as record JSON (finite, valid UTF-8). */
    bl_buf text;
    bl_buf_init(&text);
    OK_E(bl_json_write(env, BL_JSON_SORT_KEYS, &text, &e_));
    bl_buf_clear(&text);
    bl_json_destroy(env);
}

/* ---- allocation failures --------------------------------------------------------- */

static bl_status op_zip_build(void *ctx, bl_error *err)
{
    (void)ctx;
    char storage[8];
    bl_buf out;
    bl_buf_init_fixed(&out, storage, sizeof storage);
    bl_buf_puts(&out, "kept"); /* fits the fixed storage: allocates nothing */
    bl_status st = bl_zip_build(sample, nsample, &out, err);
    if (st != BL_OK && (out.len != 4 || strcmp(out.data, "kept") != 0))
        st = BL_ERUNTIME; /* a failure must leave the buffer as it was */
    bl_buf_clear(&out);
    return st;
}

static bl_status op_zip_read(void *ctx, bl_error *err)
{
    const bl_buf *zip = ctx;
    bl_zip_entry *e = NULL;
    size_t n = 0;
    bl_status st = bl_zip_read(zip->data, zip->len, &e, &n, err);
    if (st != BL_OK && (e || n))
        st = BL_ERUNTIME;
    bl_zip_entries_destroy(e, n);
    return st;
}

static bl_status op_npz(void *ctx, bl_error *err)
{
    (void)ctx;
    const double a[] = {1.0, 2.0, 3.0}, b[] = {-1.0};
    const char *names[] = {"b", "a"};
    const double *arrays[] = {a, b};
    const size_t lengths[] = {3, 1};
    bl_buf out;
    bl_buf_init(&out);
    bl_status st = bl_npz_build(names, arrays, lengths, 2, &out, err);
    bl_buf_clear(&out);
    return st;
}

static bl_status op_receipt(void *ctx, bl_error *err)
{
    (void)ctx;
    bl_json *r = NULL;
    bl_status st = bl_source_receipt(&r, err);
    return bl_test_json_made(st, r);
}

static bl_status op_receipt_of(void *ctx, bl_error *err)
{
    (void)ctx;
    size_t len = 0;
    const void *bundle = bl_source_bundle(&len);
    bl_json *r = NULL;
    bl_status st = bl_source_receipt_of(bundle, len, &r, err);
    return bl_test_json_made(st, r);
}

static bl_status op_environment(void *ctx, bl_error *err)
{
    (void)ctx;
    bl_json *env = NULL;
    bl_status st = bl_environment_json(&env, err);
    return bl_test_json_made(st, env);
}

static bl_status op_lock(void *ctx, bl_error *err)
{
    (void)ctx;
    bl_buf out;
    bl_buf_init(&out);
    bl_status st = bl_build_lock(&out, err);
    bl_buf_clear(&out);
    return st;
}

/* libzip's and zlib's own allocations use the C library directly and are
 * beyond injection; only ours are failed. */
static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(bl_test_fail_each(op_zip_build, NULL, 1) > 1);
    bl_buf zip;
    build(sample, nsample, &zip);
    assert_true(bl_test_fail_each(op_zip_read, &zip, 1) > 1);
    bl_buf_clear(&zip);
    assert_true(bl_test_fail_each(op_npz, NULL, 1) > 1);
    assert_true(bl_test_fail_each(op_environment, NULL, 1) > 1);
    assert_true(bl_test_fail_each(op_lock, NULL, 1) > 1);
    /* The embedded receipt is parsed on every try, the run-time receipt
     * unpacks the whole bundle: hundreds of allocations each (a few per
     * member): every one of the first 32, then every 7th, so each kind of
     * site (list growth, strings, object members) is failed many times
     * without unpacking the bundle a thousand times. */
    assert_true(bl_test_fail_each(op_receipt, NULL, 7) > 32);
    assert_true(bl_test_fail_each(op_receipt_of, NULL, 7) > 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zip_deterministic),
        cmocka_unit_test(test_zip_round_trip),
        cmocka_unit_test(test_zip_python_reads_it),
        cmocka_unit_test(test_zip_unsafe_names),
        cmocka_unit_test(test_zip_read_refuses),
        cmocka_unit_test(test_npz_loads_in_numpy),
        cmocka_unit_test(test_source_receipt),
        cmocka_unit_test(test_build_time_receipt_equals_run_time),
        cmocka_unit_test(test_bundle_python_reads_it),
        cmocka_unit_test(test_build_lock),
        cmocka_unit_test(test_environment_json),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
