/* Records (spec/platform.md §7; the §8 test_records list): the bundle
 * layout and formats, the manifest and its checksums, completion states,
 * reservation and failure semantics, read-only inspection of v1 and v2
 * records, manifest attacks, calibration reading, the recording channels'
 * files, and failures in the middle of a write (disk full, allocation
 * failure), which must never leave a record that inspects as complete.
 *
 * Every failure here is real for root too (CI runs as root): nothing relies
 * on file permissions. */
#define _GNU_SOURCE /* unshare() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "brainlesslab/sha256.h"
#include "record_support.h"
#include "support.h"

#define RECORD_ERROR(st) ((st) == BL_OK ? "OK" : bl_status_kind(st))

/* ---- helpers ------------------------------------------------------------------ */

typedef struct evaluated {
    bl_plan *plan;
    bl_resolved_plan *resolved;
    bl_execution x;
    bl_evaluation *e;
} evaluated;

static void evaluate_doc(const bl_json *doc, evaluated *ev)
{
    memset(ev, 0, sizeof *ev);
    bl_error err = {0};
    if (bl_plan_from_document(doc, &ev->plan, &err) != BL_OK ||
        bl_plan_resolve(ev->plan, &ev->resolved, &err) != BL_OK)
        fail_msg("plan: %s", err.msg);
    bl_execution_default(&ev->x);
    if (bl_evaluate(ev->resolved, &ev->x, NULL, 0, NULL, &ev->e, &err) != BL_OK)
        fail_msg("evaluate: %s", err.msg);
}

static void evaluate_text(const char *toml, evaluated *ev)
{
    bl_json *doc = NULL;
    bl_error err = {0};
    if (bl_toml_parse(toml, strlen(toml), "plan", &doc, &err) != BL_OK)
        fail_msg("toml: %s", err.msg);
    evaluate_doc(doc, ev);
    bl_json_destroy(doc);
}

static void evaluate_tiny(const char *extra, evaluated *ev)
{
    char text[4096];
    snprintf(text, sizeof text, BL_RT_TINY_PLAN, "tiny", 8, extra, 8);
    evaluate_text(text, ev);
}

static void evaluated_free(evaluated *ev)
{
    bl_evaluation_destroy(ev->e);
    bl_resolved_plan_destroy(ev->resolved);
    bl_plan_destroy(ev->plan);
    memset(ev, 0, sizeof *ev);
}

static bl_record_input input_of(const evaluated *ev)
{
    bl_record_input in = {.plan = ev->plan, .resolved = ev->resolved, .execution = &ev->x,
                          .evaluation = ev->e};
    return in;
}

/* Reserves `dest` and writes the record; returns the write's status. */
static bl_status write_record(const bl_record_input *in, const char *dest, const char **status,
                              bl_error *err)
{
    bl_reservation r;
    bl_status st = bl_record_reserve(dest, &r, err);
    if (st != BL_OK)
        fail_msg("reserve %s: %s", dest, err->msg);
    st = bl_record_write(in, &r, status, err);
    bl_reservation_clear(&r);
    return st;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Every non-directory under dir (relative, sorted, one per line) and, with
 * dirs, every directory as "name/". An independent walk from the library's. */
static void list_tree(const char *dir, const char *prefix, bool dirs, char *out, size_t size)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char names[256][256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            assert_true(n < 256);
            snprintf(names[n++], 256, "%s", e->d_name);
        }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n; i++) {
        char path[4400], rel[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(rel, sizeof rel, "%s%s", prefix, names[i]);
        struct stat sb;
        assert_int_equal(lstat(path, &sb), 0);
        if (S_ISDIR(sb.st_mode)) {
            if (dirs)
                snprintf(out + strlen(out), size - strlen(out), "%s/\n", rel);
            strcat(rel, "/");
            list_tree(path, rel, dirs, out, size);
        } else {
            snprintf(out + strlen(out), size - strlen(out), "%s\n", rel);
        }
    }
}

static void sha256_hex_of(const char *path, char hex[65])
{
    uint8_t d[BL_SHA256_BYTES];
    OK_E(bl_sha256_file(path, d, &e_));
    bl_hex(d, sizeof d, hex);
}

/* Inspects; fails the test on an error. The map is the caller's. */
static bl_json *inspect_ok(const char *path)
{
    bl_json *map = NULL;
    bl_error err = {0};
    if (bl_record_inspect(path, &map, &err) != BL_OK)
        fail_msg("inspect %s: %s: %s", path, bl_status_kind(err.status), err.msg);
    return map;
}

static const char *status_of(const bl_json *map)
{
    return bl_json_get_string(bl_json_get(map, "status"), NULL);
}

/* The one string of a one-element array, or fails. */
static const char *only_string(const bl_json *arr)
{
    assert_int_equal(bl_json_kindof(arr), BL_JSON_ARRAY);
    if (bl_json_size(arr) != 1)
        fail_msg("expected one entry, got %zu", bl_json_size(arr));
    return bl_json_get_string(bl_json_at(arr, 0), NULL);
}

static void expect_inspect_error(const char *path, bl_status status, const char *fragment)
{
    bl_json *map = NULL;
    bl_error err = {0};
    bl_status st = bl_record_inspect(path, &map, &err);
    if (st != status || !strstr(err.msg, fragment))
        fail_msg("inspect %s: %s '%s', expected %s containing '%s'", path, RECORD_ERROR(st),
                 err.msg, bl_status_kind(status), fragment);
    assert_null(map);
}

/* The file's bytes are exactly record JSON: sorted keys, compact, raw
 * non-ASCII, one trailing newline. Returns the parsed tree. */
/* A write that failed part way: FAILED written, the reservation kept (so
 * the directory can never be completed later), no DONE. */
static void expect_failed_partial(const char *dir)
{
    char q[4400];
    assert_true(bl_rt_exists(bl_rt_at(q, dir, "FAILED")));
    assert_true(bl_rt_exists(bl_rt_at(q, dir, ".RESERVED")));
    assert_false(bl_rt_exists(bl_rt_at(q, dir, "DONE")));
}

static bl_json *record_json_file(const char *path)
{
    size_t len;
    char *text = bl_test_read(path, &len);
    bl_json *v = NULL;
    OK_E(bl_json_parse(text, len, path, &v, &e_));
    bl_buf again;
    bl_buf_init(&again);
    OK_E(bl_record_json_text(v, &again, &e_));
    if (again.len != len || memcmp(again.data, text, len) != 0)
        fail_msg("%s is not in record JSON form:\n%s", path, text);
    bl_buf_clear(&again);
    free(text);
    return v;
}

static int setup(void **state)
{
    bl_rt_fixture *fx = bl_rt_fixture_create("plan.toml");
    if (!fx)
        return -1;
    *state = fx;
    return 0;
}

/* ---- formats (§7.3) -------------------------------------------------------------- */

static bl_json *parse(const char *json)
{
    bl_json *v = NULL;
    OK_E(bl_json_parse(json, strlen(json), "test", &v, &e_));
    return v;
}

static void test_record_json_and_csv_formats(void **state)
{
    (void)state;
    bl_buf b;
    bl_buf_init(&b);
    bl_json *v = parse("{\"b\": [1, 2.5, null, true], \"a\": \"Grüße \\u2603\", "
                       "\"c\": {\"z\": 1e-05, \"y\": 1e16}}");
    OK_E(bl_record_json_text(v, &b, &e_));
    assert_string_equal(b.data, "{\"a\":\"Grüße ☃\",\"b\":[1,2.5,null,true],"
                                "\"c\":{\"y\":1e+16,\"z\":1e-05}}\n");
    bl_json_destroy(v);

    /* Any non-finite number anywhere is refused, before a byte is written. */
    v = parse("{\"a\": [1.0, {\"b\": 2.0}]}");
    OK_E(bl_json_object_set(bl_json_at(bl_json_get(v, "a"), 1), "b",
                                bl_json_real(-1.0 / 0.0), &e_));
    bl_buf_reset(&b);
    bl_error err = {0};
    assert_int_equal(bl_record_json_text(v, &b, &err), BL_EVALUE);
    assert_string_equal(err.msg, "records require finite numbers or explicit missing values");
    assert_int_equal(b.len, 0);
    bl_json_destroy(v);
    v = parse("[{\"a\": 1}, 2]");
    assert_int_equal(bl_csv_text(v, &b, &err), BL_ETYPE); /* not rows of objects */
    bl_json_destroy(v);

    /* CSV: sorted union header, CRLF, minimal quoting, Python spellings. */
    v = parse("[{\"b\": \"plain\", \"a\": 1, \"list\": [\"x\", \"é\"], \"n\": null},"
              " {\"a\": -0.0, \"b\": \"comma, \\\"quote\\\"\", \"t\": true, \"m\": {\"k\": 1}},"
              " {\"a\": 0.1, \"b\": \"line\\nbreak\", \"t\": false, \"r\": \"cr\\r\"},"
              " {\"a\": 0}]");
    /* 2^64 + 1: integers beyond 64 bits are written in full. */
    const uint64_t limbs[2] = {1, 1};
    OK_E(bl_json_object_set(bl_json_at(v, 3), "a", bl_json_bigint(false, limbs, 2), &e_));
    bl_buf_reset(&b);
    OK_E(bl_csv_text(v, &b, &e_));
    assert_string_equal(b.data,
                        "a,b,list,m,n,r,t\r\n"
                        "1,plain,\"[\"\"x\"\",\"\"é\"\"]\",,,,\r\n"
                        "-0.0,\"comma, \"\"quote\"\"\",,\"{\"\"k\"\":1}\",,,True\r\n"
                        "0.1,\"line\nbreak\",,,,\"cr\r\",False\r\n"
                        "18446744073709551617,,,,,,\r\n");
    bl_json_destroy(v);
    /* A lone empty field is written "" (Python), so the row is not blank. */
    v = parse("[{\"a\": null}, {\"a\": \"x\"}]");
    bl_buf_reset(&b);
    OK_E(bl_csv_text(v, &b, &e_));
    assert_string_equal(b.data, "a\r\n\"\"\r\nx\r\n");
    bl_json_destroy(v);
    v = parse("[{\"a\": 1.5}]");
    OK_E(bl_json_object_set(bl_json_at(v, 0), "a", bl_json_real(0.0 / 0.0), &e_));
    bl_buf_reset(&b);
    assert_int_equal(bl_csv_text(v, &b, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "finite"));
    bl_json_destroy(v);
    bl_buf_clear(&b);
}

/* Row by row, rows of one shape give bl_csv_text's bytes; a row of another
 * shape is refused; no rows give the empty header. */
static void stream_all(const bl_json *rows, bl_buf *out, bl_status want, const char *msg)
{
    bl_csv_stream s;
    bl_csv_stream_init(&s, out);
    bl_error err = {0};
    bl_status st = BL_OK;
    for (size_t r = 0; r < bl_json_size(rows) && st == BL_OK; r++)
        st = bl_csv_stream_row(&s, bl_json_at(rows, r), &err);
    if (st == BL_OK)
        st = bl_csv_stream_finish(&s, &err);
    assert_int_equal(st, want);
    if (msg)
        assert_string_equal(err.msg, msg);
    bl_csv_stream_clear(&s);
}

static void test_csv_row_by_row(void **state)
{
    (void)state;
    static const char *const same_shape[] = {
        "[{\"b\": \"plain\", \"a\": 1, \"list\": [\"x\", \"é\"], \"n\": null},"
        " {\"n\": \"comma, \\\"quote\\\"\", \"a\": -0.0, \"list\": {\"k\": 1}, \"b\": true},"
        " {\"a\": 0.1, \"b\": \"line\\nbreak\", \"list\": false, \"n\": \"cr\\r\"}]",
        "[{\"a\": null}, {\"a\": \"x\"}, {\"a\": null}]",
        "[]",
    };
    for (size_t i = 0; i < sizeof same_shape / sizeof *same_shape; i++) {
        bl_json *v = parse(same_shape[i]);
        bl_buf whole, rows;
        bl_buf_init(&whole);
        bl_buf_init(&rows);
        OK_E(bl_csv_text(v, &whole, &e_));
        stream_all(v, &rows, BL_OK, NULL);
        assert_int_equal(rows.len, whole.len);
        assert_memory_equal(rows.data, whole.data, whole.len);
        bl_json_destroy(v);
        bl_buf_clear(&whole);
        bl_buf_clear(&rows);
    }
    bl_buf b;
    bl_buf_init(&b);
    bl_json *v = parse("[{\"a\": 1, \"b\": 2}, {\"a\": 1}]"); /* a column missing */
    stream_all(v, &b, BL_EVALUE, "CSV row 1 does not have the first row's columns");
    bl_json_destroy(v);
    v = parse("[{\"a\": 1}, {\"a\": 1, \"c\": 2}]"); /* one more */
    bl_buf_reset(&b);
    stream_all(v, &b, BL_EVALUE, "CSV row 1 does not have the first row's columns");
    bl_json_destroy(v);
    v = parse("[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"c\": 2}]"); /* another */
    bl_buf_reset(&b);
    stream_all(v, &b, BL_EVALUE, "CSV row 1 does not have the first row's columns");
    bl_json_destroy(v);
    v = parse("[{\"a\": 1.5}]");
    OK_E(bl_json_object_set(bl_json_at(v, 0), "a", bl_json_real(0.0 / 0.0), &e_));
    bl_buf_reset(&b);
    stream_all(v, &b, BL_EVALUE, "records require finite numbers or explicit missing values");
    bl_json_destroy(v);
    bl_buf_clear(&b);
}

/* ---- naming and reservation (§7.1) ------------------------------------------------- */

static void test_record_names(void **state)
{
    (void)state;
    char *a = NULL, *b = NULL;
    OK_E(bl_record_name("root/dir", "plan", &a, &e_));
    OK_E(bl_record_name("root/dir/", "plan", &b, &e_));
    /* root/dir/plan-YYYYmmddTHHMMSSZ-xxxxxxxx */
    for (char *p = a;; p = b) {
        assert_int_equal(strlen(p), strlen("root/dir/plan-20260101T000000Z-0123abcd"));
        assert_int_equal(strncmp(p, "root/dir/plan-", 14), 0);
        for (int i = 0; i < 8; i++)
            assert_non_null(strchr("0123456789", p[14 + i]));
        assert_int_equal(p[22], 'T');
        assert_int_equal(p[29], 'Z');
        assert_int_equal(p[30], '-');
        for (int i = 31; i < 39; i++)
            assert_non_null(strchr("0123456789abcdef", p[i]));
        if (p == b)
            break;
    }
    /* Eight random hex digits: two names in the same second differ. */
    assert_string_not_equal(a + 31, b + 31);
    bl_free(a);
    bl_free(b);
    OK_E(bl_record_name("", "plan", &a, &e_));
    assert_int_equal(strncmp(a, "plan-", 5), 0);
    bl_free(a);
}

static void test_reservation_refusals_leave_no_trace(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400], target[4400];
    bl_reservation r;
    bl_error err = {0};

    /* A fresh reservation: parents created, a 64-hex token in .RESERVED. */
    bl_rt_at(p, fx->dir, "a/b/rec");
    OK_E(bl_record_reserve(p, &r, &e_));
    assert_string_equal(r.path, p);
    assert_int_equal(strlen(r.token), 64);
    char *token = bl_test_read(bl_rt_at(q, p, ".RESERVED"), NULL);
    assert_string_equal(token, r.token);
    free(token);
    /* Reserving it again: FileExistsError, nothing changed. */
    bl_reservation again;
    assert_int_equal(bl_record_reserve(p, &again, &err), BL_EEXIST);
    token = bl_test_read(bl_rt_at(q, p, ".RESERVED"), NULL);
    assert_string_equal(token, r.token);
    free(token);
    bl_reservation_clear(&r);

    /* A link where the record should go (to a directory, or dangling) is
     * an existing name: nothing is created at its target. */
    bl_rt_at(target, fx->dir, "target");
    assert_int_equal(mkdir(target, 0777), 0);
    bl_rt_at(p, fx->dir, "link");
    assert_int_equal(symlink(target, p), 0);
    assert_int_equal(bl_record_reserve(p, &r, &err), BL_EEXIST);
    char tree[4096] = "";
    list_tree(target, "", true, tree, sizeof tree);
    assert_string_equal(tree, "");
    bl_rt_at(p, fx->dir, "dangling");
    assert_int_equal(symlink(bl_rt_at(q, fx->dir, "nowhere"), p), 0);
    assert_int_equal(bl_record_reserve(p, &r, &err), BL_EEXIST);
    assert_false(bl_rt_exists(q));

    /* A regular file in the way of a parent. */
    bl_rt_write(bl_rt_at(p, fx->dir, "file"), "x", 1);
    assert_int_equal(bl_record_reserve(bl_rt_at(q, p, "rec"), &r, &err), BL_EEXIST);
    assert_non_null(strstr(err.msg, "exists and is not a directory"));

    /* A root where nothing can be created (also as root): /proc. */
    snprintf(p, sizeof p, "/proc/bl-test-%ld/records/rec", (long)getpid());
    assert_int_equal(bl_record_reserve(p, &r, &err), BL_ENOENT);
    assert_false(bl_rt_exists(p));

    /* A failure deep down removes the parents the call created. */
    char longname[4700];
    snprintf(longname, sizeof longname, "%s/fresh/x/%0300d", fx->dir, 0);
    assert_int_equal(bl_record_reserve(longname, &r, &err), BL_EOS);
    assert_non_null(strstr(err.msg, "File name too long"));
    assert_false(bl_rt_exists(bl_rt_at(p, fx->dir, "fresh")));
    assert_null(r.path);
}

/* §8 test_reserved_path_failure_preserves_data_without_done. */
static void test_fail_record_keeps_reservation_and_first_cause(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    bl_reservation r;
    bl_rt_at(p, fx->dir, "failed-rec");
    OK_E(bl_record_reserve(p, &r, &e_));
    bl_rt_write(bl_rt_at(q, p, "partial.txt"), "partial", 7);

    bl_error cause = {0};
    bl_fail(&cause, BL_EOS, "%s/trials.csv: cannot write: No space left on device", p);
    OK_E(bl_record_fail(&r, &cause, &e_));
    bl_json *failed = record_json_file(bl_rt_at(q, p, "FAILED"));
    assert_int_equal(bl_json_size(failed), 3);
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "status"), NULL), "failed");
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "error_type"), NULL), "OSError");
    /* No machine path leaks into the record. */
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "message"), NULL),
                        "<record>/trials.csv: cannot write: No space left on device");
    bl_json_destroy(failed);
    assert_true(bl_rt_exists(bl_rt_at(q, p, ".RESERVED")));
    assert_false(bl_rt_exists(bl_rt_at(q, p, "DONE")));
    assert_true(bl_rt_exists(bl_rt_at(q, p, "partial.txt")));

    /* FAILED is written once: a second cause does not replace the first. */
    size_t len1, len2;
    char *first = bl_test_read(bl_rt_at(q, p, "FAILED"), &len1);
    bl_fail(&cause, BL_EINTERRUPT, "interrupted");
    OK_E(bl_record_fail(&r, &cause, &e_));
    char *second = bl_test_read(q, &len2);
    assert_int_equal(len1, len2);
    assert_memory_equal(first, second, len1);
    free(first);
    free(second);

    /* Writing into it afterwards fails (it is not empty) and changes nothing. */
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    const char *status = "unset";
    bl_error err = {0};
    assert_int_equal(bl_record_write(&in, &r, &status, &err), BL_EEXIST);
    assert_string_equal(err.msg, "reserved record is not empty");
    assert_null(status);
    char tree[4096] = "";
    list_tree(p, "", true, tree, sizeof tree);
    assert_string_equal(tree, ".RESERVED\nFAILED\npartial.txt\n");

    /* Another writer's token: the reservation is not ours to fail or fill. */
    bl_reservation other = r;
    memset(other.token, 'a', 64);
    assert_int_equal(bl_record_fail(&other, &cause, &err), BL_ERUNTIME);
    assert_string_equal(err.msg, "record reservation is no longer owned");
    bl_rt_at(q, fx->dir, "other-rec");
    bl_reservation fresh;
    OK_E(bl_record_reserve(q, &fresh, &e_));
    memset(fresh.token, 'b', 64);
    assert_int_equal(bl_record_write(&in, &fresh, &status, &err), BL_EVALUE);
    assert_string_equal(err.msg, "invalid record reservation");
    tree[0] = 0;
    list_tree(q, "", true, tree, sizeof tree);
    assert_string_equal(tree, ".RESERVED\n");
    bl_reservation_clear(&fresh);
    bl_reservation_clear(&r);
    evaluated_free(&ev);
}

/* ---- a fresh record (§7.2–§7.5) --------------------------------------------------- */

static const char *const metadata_keys[] = {
    "engine_version", "requested_backend", "actual_arch", "dtype", "fast_math", "cpu_threads",
    "cache_enabled", "runtime_fingerprint", "rng_scheme", "source_hashes", "execution",
    "batch_capacities", "reset", "evidence", "diagnostic", "recording_estimate_bytes",
};

static void check_csv_header(const char *path, const char *header, size_t rows)
{
    char *text = bl_test_read(path, NULL);
    if (strncmp(text, header, strlen(header)) != 0)
        fail_msg("%s header:\n%.300s", path, text);
    size_t lines = 0;
    for (char *p = text; (p = strstr(p, "\r\n")) != NULL; p += 2)
        lines++;
    assert_int_equal(lines, rows + 1);
    free(text);
}

/* §8 test_fresh_bundle_inventory_source_and_authoritative_outcomes. */
static void test_fresh_record(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    const char *status = NULL;
    bl_error err = {0};
    bl_rt_at(p, fx->dir, "records/tiny-fresh");
    if (write_record(&in, p, &status, &err) != BL_OK)
        fail_msg("write: %s", err.msg);
    assert_string_equal(status, "complete");

    /* The layout, exactly: no .RESERVED, data/ empty for summary recording. */
    char tree[8192] = "";
    list_tree(p, "", true, tree, sizeof tree);
    assert_string_equal(tree, "DONE\n"
                              "calibration.json\n"
                              "data/\n"
                              "environment/\n"
                              "environment/build.lock\n"
                              "environment/environment.json\n"
                              "environment/package-source.zip\n"
                              "environment/source.json\n"
                              "record.toml\n"
                              "request.toml\n"
                              "resolved.toml\n"
                              "seeds.csv\n"
                              "summary/\n"
                              "summary/summary.json\n"
                              "trials.csv\n");
    char *done = bl_test_read(bl_rt_at(q, p, "DONE"), NULL);
    assert_string_equal(done, "complete\n");
    free(done);

    /* The manifest. */
    bl_json *m = NULL;
    OK_E(bl_toml_read_file(bl_rt_at(q, p, "record.toml"), &m, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(m, "format"), NULL),
                        "brainlesslab-record");
    assert_int_equal(bl_json_get_int(bl_json_get(m, "format_version")), 2);
    assert_string_equal(bl_json_get_string(bl_json_get(m, "id"), NULL), "tiny-fresh");
    assert_string_equal(bl_json_get_string(bl_json_get(m, "kind"), NULL), "profile");
    assert_string_equal(bl_json_get_string(bl_json_get(m, "evidence"), NULL), "exploratory");
    assert_string_equal(bl_json_get_string(bl_json_get(m, "completion_marker"), NULL), "DONE");
    assert_string_equal(bl_json_get_string(bl_json_get(m, "contract_hash"), NULL),
                        bl_resolved_contract_hash(ev.resolved));
    assert_non_null(bl_json_get(m, "package_version"));
    const char *created = bl_json_get_string(bl_json_get(m, "created_utc"), NULL);
    size_t cl = strlen(created);
    /* 2026-01-02T03:04:05[.123456]+00:00 */
    assert_true(cl == 25 || cl == 32);
    assert_string_equal(created + cl - 6, "+00:00");
    assert_int_equal(created[10], 'T');
    const bl_json *counts = bl_json_get(m, "trial_status_counts");
    assert_int_equal(bl_json_size(counts), 1);
    assert_int_equal(bl_json_get_int(bl_json_get(counts, "completed")), 12);
    const bl_json *artifacts = bl_json_get(m, "artifacts");
    const bl_json *hashes = bl_json_get(m, "artifact_sha256");
    static const char *const listed[] = {
        "calibration.json", "environment/build.lock", "environment/environment.json",
        "environment/package-source.zip", "environment/source.json", "request.toml",
        "resolved.toml", "seeds.csv", "summary/summary.json", "trials.csv",
    };
    assert_int_equal(bl_json_size(artifacts), sizeof listed / sizeof *listed);
    assert_int_equal(bl_json_size(hashes), sizeof listed / sizeof *listed);
    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++) {
        assert_string_equal(bl_json_get_string(bl_json_at(artifacts, i), NULL), listed[i]);
        char hex[65];
        sha256_hex_of(bl_rt_at(q, p, listed[i]), hex);
        assert_string_equal(bl_json_get_string(bl_json_get(hashes, listed[i]), NULL), hex);
    }
    bl_json_destroy(m);

    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    assert_true(bl_json_get_bool(bl_json_get(map, "complete")));
    assert_true(bl_json_get_bool(bl_json_get(map, "checksums_valid")));
    assert_int_equal(bl_json_size(bl_json_get(map, "invalid_artifacts")), 0);
    assert_int_equal(bl_json_size(bl_json_get(map, "unlisted_artifacts")), 0);
    assert_int_equal(bl_json_size(map), 6);
    bl_json_destroy(map);

    /* Tables: the spec's columns, one row per trial and per (trial, stream). */
    check_csv_header(bl_rt_at(q, p, "trials.csv"),
                     "block_id,calibration_id,completed_ticks,error,key,neural_frames,"
                     "normalisation_status,normalised,raw,scoring_window,status,target_id,task,"
                     "trial_id,wiring_id,world_seed\r\n",
                     12);
    size_t nseeds = 0;
    for (size_t i = 0; i < ev.e->run->ntrials; i++)
        nseeds += ev.e->run->trials[i].nseeds;
    check_csv_header(bl_rt_at(q, p, "seeds.csv"),
                     "block_id,seed,stream,target_id,trial_id,wiring_id,world_seed\r\n", nseeds);

    /* summary.json: the authoritative outcomes, and §4.13 metadata. */
    bl_json *summary = record_json_file(bl_rt_at(q, p, "summary/summary.json"));
    assert_int_equal(bl_json_size(summary), 4);
    const bl_json *sums = bl_json_get(summary, "summaries");
    assert_int_equal(bl_json_size(sums), 2);
    for (size_t t = 0; t < 2; t++) {
        const bl_json *oc = bl_json_get(bl_json_at(sums, t), "outcome");
        double raw = bl_json_get_real(bl_json_get(oc, "raw"));
        assert_true(bl_test_bits(raw) == bl_test_bits(ev.e->summaries[t].raw));
        assert_non_null(bl_json_get(bl_json_at(sums, t), "adjusted"));
    }
    assert_int_equal(bl_json_size(bl_json_get(summary, "contrasts")), 1);
    const bl_json *timings = bl_json_get(summary, "timings");
    assert_non_null(bl_json_get(timings, "resolve_and_runtime_seconds"));
    assert_non_null(bl_json_get(timings, "construction_compile_run_seconds"));
    assert_non_null(bl_json_get(timings, "total_seconds"));
    const bl_json *meta = bl_json_get(summary, "metadata");
    for (size_t i = 0; i < sizeof metadata_keys / sizeof *metadata_keys; i++)
        if (!bl_json_get(meta, metadata_keys[i]))
            fail_msg("metadata lacks '%s'", metadata_keys[i]);
    assert_string_equal(bl_json_get_string(bl_json_get(meta, "reset"), NULL), "full");
    assert_string_equal(bl_json_get_string(bl_json_get(meta, "rng_scheme"), NULL),
                        "philox-host-v1");
    assert_false(bl_json_get_bool(bl_json_get(meta, "fast_math")));

    /* environment.json: the metadata under "execution" and the machine. */
    bl_json *env = record_json_file(bl_rt_at(q, p, "environment/environment.json"));
    assert_true(bl_json_equal(bl_json_get(env, "execution"), meta));
    assert_non_null(bl_json_get(env, "machine"));
    assert_non_null(bl_json_get(env, "package_version"));
    bl_json_destroy(env);
    bl_json_destroy(summary);

    /* The source capture: receipt hashes match the archive and its members,
     * members are portable relative paths, the lock is a separate copy. */
    size_t zlen;
    char *zip = bl_test_read(bl_rt_at(q, p, "environment/package-source.zip"), &zlen);
    bl_json *receipt = record_json_file(bl_rt_at(q, p, "environment/source.json"));
    char hex[65];
    sha256_hex_of(bl_rt_at(q, p, "environment/package-source.zip"), hex);
    assert_string_equal(bl_json_get_string(bl_json_get(receipt, "sha256"), NULL), hex);
    assert_string_equal(bl_json_get_string(bl_json_get(receipt, "format"), NULL),
                        "brainlesslab-source-bundle");
    bl_zip_entry *entries = NULL;
    size_t nentries = 0;
    OK_E(bl_zip_read(zip, zlen, &entries, &nentries, &e_));
    const bl_json *files = bl_json_get(receipt, "files");
    const bl_json *file_sha = bl_json_get(receipt, "file_sha256");
    assert_true(nentries > 10);
    assert_int_equal(bl_json_size(files), nentries);
    bool has_records_c = false;
    for (size_t i = 0; i < nentries; i++) {
        const char *name = entries[i].name;
        assert_true(name[0] != '/' && !strstr(name, "..") && !strstr(name, "__pycache__"));
        assert_string_equal(bl_json_get_string(bl_json_at(files, i), NULL), name);
        uint8_t d[BL_SHA256_BYTES];
        OK_E(bl_sha256(entries[i].data, entries[i].len, d, &e_));
        bl_hex(d, sizeof d, hex);
        assert_string_equal(bl_json_get_string(bl_json_get(file_sha, name), NULL), hex);
        has_records_c |= strcmp(name, "src/records/record.c") == 0;
    }
    assert_true(has_records_c);
    bl_zip_entries_destroy(entries, nentries);
    bl_json_destroy(receipt);
    free(zip);
    bl_buf lock;
    bl_buf_init(&lock);
    OK_E(bl_build_lock(&lock, &e_));
    size_t llen;
    char *lock_file = bl_test_read(bl_rt_at(q, p, "environment/build.lock"), &llen);
    assert_int_equal(llen, lock.len);
    assert_memory_equal(lock_file, lock.data, llen);
    free(lock_file);
    bl_buf_clear(&lock);

    /* request.toml reads back as the same plan; resolved.toml holds the
     * resolved plan without nulls, with a [request] table. */
    bl_plan *again = NULL;
    bl_resolved_plan *again_resolved = NULL;
    OK_E(bl_plan_read(bl_rt_at(q, p, "request.toml"), &again, &e_));
    OK_E(bl_plan_resolve(again, &again_resolved, &e_));
    assert_string_equal(bl_resolved_contract_hash(again_resolved),
                        bl_resolved_contract_hash(ev.resolved));
    bl_resolved_plan_destroy(again_resolved);
    bl_plan_destroy(again);
    char *resolved = bl_test_read(bl_rt_at(q, p, "resolved.toml"), NULL);
    assert_non_null(strstr(resolved, "\n[request]\n"));
    assert_non_null(strstr(resolved, "\n[[targets]]\n"));
    assert_null(strstr(resolved, "horizon = null"));
    free(resolved);
    bl_json *rdoc = NULL;
    OK_E(bl_toml_read_file(q, &rdoc, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(rdoc, "contract_hash"), NULL),
                        bl_resolved_contract_hash(ev.resolved));
    assert_int_equal(bl_json_size(bl_json_get(rdoc, "targets")), 2);
    bl_json_destroy(rdoc);

    /* Calibrations round-trip through the record directory. */
    bl_json_destroy(record_json_file(bl_rt_at(q, p, "calibration.json")));
    bl_calibration **cals = NULL;
    size_t ncals = 0;
    OK_E(bl_calibrations_read(p, &cals, &ncals, &e_));
    assert_int_equal(ncals, ev.e->ncalibrations);
    for (size_t i = 0; i < ncals; i++)
        assert_string_equal(cals[i]->id, ev.e->calibrations[i]->id);
    bl_calibrations_destroy(cals, ncals);

    /* Writing a second record to the same place: FileExistsError, and the
     * first record is byte-identical afterwards (§7.10). */
    char before[8192] = "", after[8192] = "";
    list_tree(p, "", true, before, sizeof before);
    char hashes_before[16][65];
    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++)
        sha256_hex_of(bl_rt_at(q, p, listed[i]), hashes_before[i]);
    bl_reservation r;
    assert_int_equal(bl_record_reserve(p, &r, &err), BL_EEXIST);
    list_tree(p, "", true, after, sizeof after);
    assert_string_equal(before, after);
    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++) {
        sha256_hex_of(bl_rt_at(q, p, listed[i]), hex);
        assert_string_equal(hex, hashes_before[i]);
    }
    evaluated_free(&ev);
}

/* §8 test_no_overwrite_and_checksum_tampering, and the other states of §7.5. */
static void test_tampering_and_completion_states(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    const char *status;
    bl_rt_at(p, fx->dir, "tamper");
    OK_E(write_record(&in, p, &status, &e_));
    evaluated_free(&ev);

    /* One byte changed in summary.json: incomplete, exactly that artifact. */
    size_t len;
    char *text = bl_test_read(bl_rt_at(q, p, "summary/summary.json"), &len);
    char *orig = malloc(len);
    memcpy(orig, text, len);
    text[len / 2] ^= 1;
    bl_rt_write(q, text, len);
    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "incomplete");
    assert_false(bl_json_get_bool(bl_json_get(map, "complete")));
    assert_false(bl_json_get_bool(bl_json_get(map, "checksums_valid")));
    assert_string_equal(only_string(bl_json_get(map, "invalid_artifacts")),
                        "summary/summary.json");
    assert_int_equal(bl_json_size(bl_json_get(map, "unlisted_artifacts")), 0);
    bl_json_destroy(map);
    bl_rt_write(q, orig, len);
    free(orig);
    free(text);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    bl_json_destroy(map);

    /* A deleted artifact is invalid; a truncated one too. */
    char *trials = bl_test_read(bl_rt_at(q, p, "trials.csv"), &len);
    assert_int_equal(unlink(q), 0);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "incomplete");
    assert_string_equal(only_string(bl_json_get(map, "invalid_artifacts")), "trials.csv");
    bl_json_destroy(map);
    bl_rt_write(q, trials, len - 1);
    map = inspect_ok(p);
    assert_string_equal(only_string(bl_json_get(map, "invalid_artifacts")), "trials.csv");
    bl_json_destroy(map);
    /* A directory where the artifact was is not the artifact either. */
    assert_int_equal(unlink(q), 0);
    assert_int_equal(mkdir(q, 0777), 0);
    map = inspect_ok(p);
    assert_string_equal(only_string(bl_json_get(map, "invalid_artifacts")), "trials.csv");
    bl_json_destroy(map);
    assert_int_equal(rmdir(q), 0);
    bl_rt_write(q, trials, len);
    free(trials);

    /* A file nobody listed: unlisted (the markers and manifest never are). */
    bl_rt_write(bl_rt_at(q, p, "data/extra.bin"), "x", 1);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "incomplete");
    assert_true(bl_json_get_bool(bl_json_get(map, "checksums_valid")) == false);
    assert_string_equal(only_string(bl_json_get(map, "unlisted_artifacts")), "data/extra.bin");
    bl_json_destroy(map);
    assert_int_equal(unlink(q), 0);
    bl_rt_write(bl_rt_at(q, p, ".RESERVED"), "stale", 5);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    bl_json_destroy(map);
    assert_int_equal(unlink(q), 0);

    /* DONE missing: incomplete; FAILED beside DONE: failed. */
    char saved[4400];
    assert_int_equal(rename(bl_rt_at(q, p, "DONE"), bl_rt_at(saved, fx->dir, "DONE.saved")), 0);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "incomplete");
    assert_true(bl_json_get_bool(bl_json_get(map, "checksums_valid")));
    bl_json_destroy(map);
    assert_int_equal(rename(saved, q), 0);
    bl_rt_write(bl_rt_at(q, p, "FAILED"), "{}\n", 3);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "failed");
    assert_false(bl_json_get_bool(bl_json_get(map, "complete")));
    bl_json_destroy(map);
}

/* §8 test_nonportable_numbers_leave_failed_partial_bundle: a NaN in the
 * metadata (here the execution policy's reserve_fraction). */
/* Reads <rec>/<rel> as CSV and checks that its rows name the trials of
 * `run` in order, `per` rows per trial (seeds.csv: one per stream). */
static void expect_trial_rows(const char *rec, const char *rel, const bl_run_result *run,
                              size_t per)
{
    char q[4400];
    size_t len;
    char *text = bl_test_read(bl_rt_at(q, rec, rel), &len);
    bl_csv_table t = {0};
    OK_E(bl_csv_parse(text, len, rel, &t, &e_));
    assert_int_equal(t.nrows, run->ntrials * per);
    const long block = bl_csv_column(&t, "block_id"), trial = bl_csv_column(&t, "trial_id");
    assert_true(block >= 0 && trial >= 0);
    for (size_t r = 0; r < t.nrows; r++) {
        const bl_trial_result *want = &run->trials[r / per];
        char b[32], k[32];
        snprintf(b, sizeof b, "%lld", (long long)want->block);
        snprintf(k, sizeof k, "%lld", (long long)want->trial);
        if (strcmp(bl_csv_cell(&t, r, (size_t)block), b) != 0 ||
            strcmp(bl_csv_cell(&t, r, (size_t)trial), k) != 0)
            fail_msg("%s row %zu: block %s trial %s, expected %s %s", rel, r,
                     bl_csv_cell(&t, r, (size_t)block), bl_csv_cell(&t, r, (size_t)trial), b, k);
    }
    bl_csv_table_clear(&t);
    free(text);
}

/* trials.csv and seeds.csv go to disk a chunk (256 KiB) at a time: 3,000
 * null trials (about 0.5 MB of trial rows and 0.9 MB of seed rows) cross
 * several chunk boundaries, and every row arrives once, whole, in order. */
static void test_trial_files_span_chunks(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_text("format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"chunks\"\n"
                  "operation = \"profile\"\ndiagnostic = true\n"
                  "[evaluation]\nblocks = 3\ntrials_per_block = 1000\nhorizon = 2\n"
                  "root_seed = 11\n"
                  "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
                  "[targets.composition.task]\nkind = \"tracking\"\n",
                  &ev);
    bl_record_input in = input_of(&ev);
    const char *status = NULL;
    bl_error err = {0};
    bl_rt_at(p, fx->dir, "chunks");
    if (write_record(&in, p, &status, &err) != BL_OK)
        fail_msg("write: %s", err.msg);
    assert_string_equal(status, "complete");
    const bl_run_result *run = ev.e->run;
    assert_int_equal(run->ntrials, 3000);
    size_t tlen, slen;
    free(bl_test_read(bl_rt_at(q, p, "trials.csv"), &tlen));
    free(bl_test_read(bl_rt_at(q, p, "seeds.csv"), &slen));
    assert_true(tlen > 256 * 1024 && slen > 3 * 256 * 1024);
    expect_trial_rows(p, "trials.csv", run, 1);
    expect_trial_rows(p, "seeds.csv", run, run->trials[0].nseeds);
    assert_int_equal(run->trials[0].nseeds, 2); /* world, control */
    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    bl_json_destroy(map);
    evaluated_free(&ev);
}

static void test_nan_leaves_failed_partial_bundle(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_execution x = ev.x;
    x.reserve_fraction = 0.0 / 0.0;
    bl_record_input in = input_of(&ev);
    in.execution = &x;
    const char *status = "unset";
    bl_error err = {0};
    bl_rt_at(p, fx->dir, "nan");
    assert_int_equal(write_record(&in, p, &status, &err), BL_EVALUE);
    assert_null(status);
    assert_string_equal(err.msg, "records require finite numbers or explicit missing values");
    expect_failed_partial(p);
    assert_false(bl_rt_exists(bl_rt_at(q, p, "record.toml")));
    bl_json *failed = record_json_file(bl_rt_at(q, p, "FAILED"));
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "error_type"), NULL),
                        "ValueError");
    bl_json_destroy(failed);
    /* The partial files stay: request.toml exactly as written. */
    bl_buf plan;
    bl_buf_init(&plan);
    OK_E(bl_plan_write(ev.plan, &plan, &e_));
    size_t len;
    char *request = bl_test_read(bl_rt_at(q, p, "request.toml"), &len);
    assert_int_equal(len, plan.len);
    assert_memory_equal(request, plan.data, len);
    free(request);
    bl_buf_clear(&plan);
    /* Without a manifest this is no record at all. */
    expect_inspect_error(p, BL_ENOENT, "record.toml");
    evaluated_free(&ev);
}

/* §8 test_failed_trial_preserves_inventory_without_success_marker: an
 * input gain of 1e308 overflows the reservoir, whose trials latch failed. */
static void test_failed_trials_give_failed_record(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("input_gain = 1e308\n", &ev);
    bl_record_input in = input_of(&ev);
    const char *status = NULL;
    bl_rt_at(p, fx->dir, "failed-trials");
    OK_E(write_record(&in, p, &status, &e_));
    assert_string_equal(status, "failed");
    assert_false(bl_rt_exists(bl_rt_at(q, p, "DONE")));
    assert_false(bl_rt_exists(bl_rt_at(q, p, ".RESERVED")));
    assert_true(bl_rt_exists(bl_rt_at(q, p, "trials.csv")));
    assert_true(bl_rt_exists(bl_rt_at(q, p, "summary/summary.json")));
    bl_json *failed = record_json_file(bl_rt_at(q, p, "FAILED"));
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "reason"), NULL),
                        "one or more trials failed or remained incomplete");
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "status"), NULL), "failed");
    const bl_json *counts = bl_json_get(failed, "trial_status_counts");
    int64_t nfailed = bl_json_get_int(bl_json_get(counts, "failed"));
    assert_true(nfailed > 0);
    assert_int_equal(bl_json_get_int(bl_json_get(counts, "completed")) + nfailed, 12);
    bl_json *m = NULL;
    OK_E(bl_toml_read_file(bl_rt_at(q, p, "record.toml"), &m, &e_));
    assert_true(bl_json_equal(bl_json_get(m, "trial_status_counts"), counts));
    bl_json_destroy(m);
    bl_json_destroy(failed);
    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "failed");
    assert_true(bl_json_get_bool(bl_json_get(map, "checksums_valid")));
    bl_json_destroy(map);
    evaluated_free(&ev);
}

/* ---- inspection of hand-made records (§7.6) ----------------------------------------- */

/* A record with one artifact and the given manifest tail. */
static void make_record(const char *dir, const char *manifest)
{
    assert_int_equal(mkdir(dir, 0777), 0);
    char p[4400];
    bl_rt_write(bl_rt_at(p, dir, "artifact.txt"), "hello\n", 6);
    bl_rt_write(bl_rt_at(p, dir, "record.toml"), manifest, strlen(manifest));
    bl_rt_write(bl_rt_at(p, dir, "DONE"), "complete\n", 9);
}

#define HELLO_SHA "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"

/* §8 test_historical_inspection_does_not_modify_or_execute. */
static void test_historical_v1_record(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    bl_rt_at(p, fx->dir, "v1");
    make_record(p, "format = \"brainlesslab-record\"\n"
                   "format_version = 1\n"
                   "git_sha = \"0123abc\"\n"
                   "julia_version = \"1.10.0\"\n"
                   "threads = 8\n"
                   "[artifact_sha256]\n"
                   "\"artifact.txt\" = \"" HELLO_SHA "\"\n");
    /* Something that would run if inspection executed anything. */
    bl_rt_write(bl_rt_at(q, p, "run.sh"), "#!/bin/sh\ntouch executed\n", 25);
    chmod(q, 0755);
    char after[4096] = "";
    char *manifest = bl_test_read(bl_rt_at(q, p, "record.toml"), NULL);
    struct stat sb0, sb1;
    assert_int_equal(stat(q, &sb0), 0);
    bl_json *map = inspect_ok(p);
    /* run.sh is unlisted, so the record is not complete; remove it. */
    assert_string_equal(only_string(bl_json_get(map, "unlisted_artifacts")), "run.sh");
    bl_json_destroy(map);
    assert_int_equal(unlink(bl_rt_at(q, p, "run.sh")), 0);
    map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    /* Historical keys are echoed; artifacts default to the hash keys. */
    const bl_json *m = bl_json_get(map, "manifest");
    assert_string_equal(bl_json_get_string(bl_json_get(m, "julia_version"), NULL), "1.10.0");
    assert_int_equal(bl_json_get_int(bl_json_get(m, "threads")), 8);
    bl_json_destroy(map);
    list_tree(p, "", true, after, sizeof after);
    assert_string_equal(after, "DONE\nartifact.txt\nrecord.toml\n");
    assert_false(bl_rt_exists(bl_rt_at(q, p, "executed")));
    char *manifest_after = bl_test_read(bl_rt_at(q, p, "record.toml"), NULL);
    assert_string_equal(manifest, manifest_after);
    assert_int_equal(stat(q, &sb1), 0);
    assert_true(sb0.st_mtime == sb1.st_mtime);
    free(manifest);
    free(manifest_after);
}

/* §8 test_manifest_path_traversal_rejected, and every other manifest rule. */
static void test_manifest_rules(void **state)
{
    bl_rt_fixture *fx = *state;
    static const struct {
        const char *tail; /* after the format lines */
        bl_status status;
        const char *message;
    } cases[] = {
        /* Unsafe artifact names (the spec's five, and more). */
        {"artifacts = [\"../outside\"]\n[artifact_sha256]\n\"../outside\" = \"" HELLO_SHA "\"\n",
         BL_EVALUE, "artifact paths must be portable relative paths"},
        {"artifacts = [\"/tmp/outside\"]\n[artifact_sha256]\n\"/tmp/outside\" = \"" HELLO_SHA
         "\"\n",
         BL_EVALUE, "artifact paths must be portable relative paths"},
        {"artifacts = ['C:\\outside']\n[artifact_sha256]\n'C:\\outside' = \"" HELLO_SHA "\"\n",
         BL_EVALUE, "artifact paths must be portable relative paths"},
        {"artifacts = [\"folder/../../outside\"]\n[artifact_sha256]\n\"folder/../../outside\" = "
         "\"" HELLO_SHA "\"\n",
         BL_EVALUE, "artifact paths must be portable relative paths"},
        {"artifacts = [\"./artifact.txt\"]\n[artifact_sha256]\n\"./artifact.txt\" = \"" HELLO_SHA
         "\"\n",
         BL_EVALUE, "artifact paths must be portable relative paths"},
        {"artifacts = [\"a//b\"]\n[artifact_sha256]\n\"a//b\" = \"" HELLO_SHA "\"\n", BL_EVALUE,
         "artifact paths must be portable relative paths"},
        {"artifacts = [\"\"]\n[artifact_sha256]\n\"\" = \"" HELLO_SHA "\"\n", BL_EVALUE,
         "artifact paths must be portable relative paths"},
        {"artifacts = [\"dir/\"]\n[artifact_sha256]\n\"dir/\" = \"" HELLO_SHA "\"\n", BL_EVALUE,
         "artifact paths must be portable relative paths"},
        /* Checksums. */
        {"[artifact_sha256]\n\"artifact.txt\" = \"ABC\"\n", BL_EVALUE,
         "artifact checksum must be a SHA-256 hexadecimal value"},
        {"[artifact_sha256]\n\"artifact.txt\" = "
         "\"5891B5B522D5DF086D0FF0B110FBD9D21BB4FC7163AF34D08286A2E846F6BE03\"\n",
         BL_EVALUE, "artifact checksum must be a SHA-256 hexadecimal value"},
        {"[artifact_sha256]\n\"artifact.txt\" = 5\n", BL_EVALUE,
         "artifact checksum must be a SHA-256 hexadecimal value"},
        /* Inventory. */
        {"artifacts = [\"artifact.txt\", \"other.txt\"]\n[artifact_sha256]\n\"artifact.txt\" = "
         "\"" HELLO_SHA "\"\n",
         BL_EVALUE, "record artifact inventory does not match its checksums"},
        {"artifacts = [\"artifact.txt\", \"artifact.txt\"]\n[artifact_sha256]\n\"artifact.txt\" ="
         " \"" HELLO_SHA "\"\nb = \"" HELLO_SHA "\"\n",
         BL_EVALUE, "record artifact inventory does not match its checksums"},
        {"artifacts = [\"artifact.txt\"]\nartifact_sha256 = \"" HELLO_SHA "\"\n", BL_EVALUE,
         "record artifact inventory does not match its checksums"},
        {"artifacts = \"artifact.txt\"\n[artifact_sha256]\n\"artifact.txt\" = \"" HELLO_SHA
         "\"\n",
         BL_EVALUE, "record artifact inventory does not match its checksums"},
        {"artifacts = [1]\n[artifact_sha256]\n\"artifact.txt\" = \"" HELLO_SHA "\"\n", BL_EVALUE,
         "record artifact inventory does not match its checksums"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char p[4400], name[32], manifest[2048];
        snprintf(name, sizeof name, "m%zu", i);
        snprintf(manifest, sizeof manifest,
                 "format = \"brainlesslab-record\"\nformat_version = 2\n%s", cases[i].tail);
        make_record(bl_rt_at(p, fx->dir, name), manifest);
        expect_inspect_error(p, cases[i].status, cases[i].message);
    }

    /* Formats: an unknown format or version. */
    static const char *const formats[] = {
        "format = \"brainlesslab-record\"\nformat_version = 3\n",
        "format = \"brainlesslab-record\"\nformat_version = 2.0\n",
        "format = \"other\"\nformat_version = 2\n",
        "format_version = 2\n",
        "title = \"not a record\"\n",
    };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char p[4400], name[32];
        snprintf(name, sizeof name, "f%zu", i);
        make_record(bl_rt_at(p, fx->dir, name), formats[i]);
        expect_inspect_error(p, BL_EVALUE, "unsupported record format");
    }

    /* A truncated manifest: cut inside a string, a syntax error; cut at a
     * line end, a shorter inventory than the listed artifacts. */
    char p[4400], q[4400];
    const char full[] = "format = \"brainlesslab-record\"\nformat_version = 2\n"
                        "artifacts = [\"artifact.txt\"]\n[artifact_sha256]\n"
                        "\"artifact.txt\" = \"" HELLO_SHA "\"\n";
    char cut[sizeof full];
    memcpy(cut, full, sizeof full);
    cut[sizeof full - 20] = 0;
    make_record(bl_rt_at(p, fx->dir, "cut-string"), cut);
    expect_inspect_error(p, BL_EVALUE, "record.toml:");
    cut[strstr(full, "[artifact_sha256]") - full] = 0;
    make_record(bl_rt_at(p, fx->dir, "cut-table"), cut);
    expect_inspect_error(p, BL_EVALUE, "record artifact inventory does not match its checksums");
    make_record(bl_rt_at(p, fx->dir, "empty-manifest"), "");
    expect_inspect_error(p, BL_EVALUE, "unsupported record format");

    /* And the sound version of the same record is complete. */
    make_record(bl_rt_at(p, fx->dir, "sound"), full);
    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    bl_json_destroy(map);
    /* A missing manifest is an error, not an incomplete record. */
    assert_int_equal(unlink(bl_rt_at(q, p, "record.toml")), 0);
    expect_inspect_error(p, BL_ENOENT, "record.toml");
}

/* §8 test_manifest_symlink_rejected, and links anywhere. */
static void test_links_are_refused(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400], r[4400];
    const char manifest[] = "format = \"brainlesslab-record\"\nformat_version = 2\n"
                            "[artifact_sha256]\n\"artifact.txt\" = \"" HELLO_SHA "\"\n";
    /* The artifact itself a link to an identical file outside. */
    bl_rt_at(p, fx->dir, "link-artifact");
    make_record(p, manifest);
    bl_rt_write(bl_rt_at(r, fx->dir, "outside.txt"), "hello\n", 6);
    assert_int_equal(unlink(bl_rt_at(q, p, "artifact.txt")), 0);
    assert_int_equal(symlink(r, q), 0);
    expect_inspect_error(p, BL_EVALUE, "record artifacts cannot be symlinks");
    /* A link anywhere inside, listed or not, to a directory or dangling. */
    bl_rt_at(p, fx->dir, "link-inside");
    make_record(p, manifest);
    assert_int_equal(mkdir(bl_rt_at(q, p, "sub"), 0777), 0);
    assert_int_equal(symlink("/", bl_rt_at(q, p, "sub/root")), 0);
    expect_inspect_error(p, BL_EVALUE, "record artifacts cannot be symlinks");
    bl_rt_at(p, fx->dir, "link-manifest");
    make_record(p, manifest);
    assert_int_equal(rename(bl_rt_at(q, p, "record.toml"), bl_rt_at(r, fx->dir, "manifest.toml")), 0);
    assert_int_equal(symlink(r, q), 0);
    expect_inspect_error(p, BL_EVALUE, "record artifacts cannot be symlinks");
    bl_rt_at(p, fx->dir, "link-done");
    make_record(p, manifest);
    assert_int_equal(unlink(bl_rt_at(q, p, "DONE")), 0);
    assert_int_equal(symlink(bl_rt_at(r, fx->dir, "outside.txt"), q), 0);
    expect_inspect_error(p, BL_EVALUE, "record artifacts cannot be symlinks");

    /* The record itself: a link to a record, a file, nothing. */
    bl_rt_at(p, fx->dir, "sound");
    make_record(p, manifest);
    bl_rt_at(q, fx->dir, "sound-link");
    assert_int_equal(symlink(p, q), 0);
    expect_inspect_error(q, BL_EVALUE, "a record must be a real directory");
    expect_inspect_error(bl_rt_at(q, p, "artifact.txt"), BL_EVALUE, "a record must be a real directory");
    expect_inspect_error(bl_rt_at(q, fx->dir, "missing"), BL_EVALUE,
                         "a record must be a real directory");
    /* A FIFO listed as an artifact is invalid, and never blocks inspection. */
    assert_int_equal(unlink(bl_rt_at(q, p, "artifact.txt")), 0);
    assert_int_equal(mkfifo(q, 0666), 0);
    bl_json *map = inspect_ok(p);
    assert_string_equal(only_string(bl_json_get(map, "invalid_artifacts")), "artifact.txt");
    bl_json_destroy(map);
}

/* ---- files that are not plain files -------------------------------------------------- */

/* A manifest, calibration or FAILED marker that is a FIFO, a device or far
 * too large is refused at once: the old readers waited forever in open()
 * on a FIFO and read /dev/zero until memory ran out. SIGALRM fails the
 * test if any of them still waits. */
static void test_inspect_and_calibrations_refuse_non_files(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    const char manifest[] = "format = \"brainlesslab-record\"\nformat_version = 2\n"
                            "[artifact_sha256]\n\"artifact.txt\" = \"" HELLO_SHA "\"\n";
    alarm(20);
    bl_rt_at(p, fx->dir, "fifo-manifest");
    make_record(p, manifest);
    assert_int_equal(unlink(bl_rt_at(q, p, "record.toml")), 0);
    assert_int_equal(mkfifo(q, 0600), 0);
    expect_inspect_error(p, BL_EOS, "record.toml: is a FIFO, not a regular file");
    /* Over the plans' 16 MiB, refused by its size without being read. */
    assert_int_equal(unlink(q), 0);
    bl_test_make_sparse(q, (int64_t)1 << 40);
    expect_inspect_error(p, BL_EVALUE, "record.toml: record manifest is larger than 16 MiB");

    /* A FAILED marker beside no manifest is read the same careful way. */
    bl_rt_at(p, fx->dir, "fifo-failed");
    assert_int_equal(mkdir(p, 0777), 0);
    assert_int_equal(mkfifo(bl_rt_at(q, p, "FAILED"), 0600), 0);
    expect_inspect_error(p, BL_ENOENT, "its FAILED marker cannot be read: ");
    expect_inspect_error(p, BL_ENOENT, "FAILED: is a FIFO, not a regular file");

    /* Calibrations: a FIFO, a device, a sparse giant. */
    bl_calibration **cals = NULL;
    size_t n = 0;
    bl_error err = {0};
    bl_rt_at(p, fx->dir, "calibration-fifo.json");
    assert_int_equal(mkfifo(p, 0600), 0);
    assert_int_equal(bl_calibrations_read(p, &cals, &n, &err), BL_EOS);
    assert_non_null(strstr(err.msg, "calibration-fifo.json: is a FIFO, not a regular file"));
    assert_int_equal(bl_calibrations_read("/dev/zero", &cals, &n, &err), BL_EOS);
    assert_string_equal(err.msg, "/dev/zero: is a character device, not a regular file");
    bl_rt_at(p, fx->dir, "calibration-huge.json");
    bl_test_make_sparse(p, (int64_t)1 << 40);
    assert_int_equal(bl_calibrations_read(p, &cals, &n, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "calibration-huge.json: calibration file is larger than 64 MiB"));
    assert_null(cals);
    assert_int_equal(n, 0);
    alarm(0);
}

/* A run that failed before writing its manifest leaves .RESERVED and
 * FAILED (§7.1): inspection still fails (§7.6 step 2), but says that the
 * record failed and why instead of only that record.toml is missing. */
static void test_inspect_failed_before_manifest(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    bl_rt_at(p, fx->dir, "early-failure");
    bl_rt_fail_before_manifest(p, BL_EVALUE, "calibration content hash does not match the record");
    char want[9000];
    snprintf(want, sizeof want,
             "%s: No such file or directory; the record failed before its manifest was written: "
             "ValueError: calibration content hash does not match the record",
             bl_rt_at(q, p, "record.toml"));
    bl_json *map = NULL;
    bl_error err = {0};
    assert_int_equal(bl_record_inspect(p, &map, &err), BL_ENOENT);
    assert_null(map);
    assert_string_equal(err.msg, want);
    /* A marker that is not what fail_record writes is reported as such. */
    bl_rt_write(bl_rt_at(q, p, "FAILED"), "[1, 2]", 6);
    expect_inspect_error(p, BL_ENOENT, "(its FAILED marker cannot be read: not a JSON object)");
    /* Without FAILED it is the plain missing manifest. */
    assert_int_equal(unlink(q), 0);
    expect_inspect_error(p, BL_ENOENT, "record.toml: No such file or directory");
    assert_int_equal(bl_record_inspect(p, &map, &err), BL_ENOENT);
    assert_null(strstr(err.msg, "failed"));
}

/* ---- calibrations (§7.7) ------------------------------------------------------------ */

/* §8 test_calibration_content_hash_rejected_after_modification. */
static void test_calibration_reading(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    /* A physical task (binary ones freeze analytic chance): the null's
     * CartPole episodes end after a few dozen ticks. */
    bl_json *task = parse("{\"kind\": \"cartpole_plank_easy\"}");
    bl_plan *plan = NULL;
    OK_E(bl_plan_calibrate(task, 91337, NULL, 0, &plan, &e_));
    bl_json_destroy(task);
    evaluated ev;
    memset(&ev, 0, sizeof ev);
    ev.plan = plan;
    OK_E(bl_plan_resolve(plan, &ev.resolved, &e_));
    bl_execution_default(&ev.x);
    ev.x.batch_size = 256;
    OK_E(bl_evaluate(ev.resolved, &ev.x, NULL, 0, NULL, &ev.e, &e_));
    assert_int_equal(ev.e->ncalibrations, 1);
    assert_false(ev.e->calibrations[0]->analytic);
    bl_record_input in = input_of(&ev);
    const char *status;
    bl_rt_at(p, fx->dir, "calibration-record");
    OK_E(write_record(&in, p, &status, &e_));
    assert_string_equal(status, "complete");

    /* The record directory reads back the frozen null. */
    bl_calibration **cals = NULL;
    size_t n = 0;
    OK_E(bl_calibrations_read(p, &cals, &n, &e_));
    assert_int_equal(n, 1);
    assert_string_equal(cals[0]->id, ev.e->calibrations[0]->id);
    assert_true(bl_test_bits(cals[0]->null_mean) == bl_test_bits(ev.e->calibrations[0]->null_mean));
    bl_calibrations_destroy(cals, n);

    /* An exported copy with an edited null_mean fails its content hash. */
    bl_json *doc = record_json_file(bl_rt_at(q, p, "calibration.json"));
    bl_json *rec = bl_json_at(bl_json_get(doc, "calibrations"), 0);
    double mean = bl_json_get_real(bl_json_get(rec, "null_mean"));
    OK_E(bl_json_object_set(rec, "null_mean", bl_json_real(mean * 0.5 + 0.01), &e_));
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_record_json_text(doc, &b, &e_));
    bl_json_destroy(doc);
    bl_rt_write(bl_rt_at(q, fx->dir, "edited.json"), b.data, b.len);
    bl_error err = {0};
    assert_int_not_equal(bl_calibrations_read(q, &cals, &n, &err), BL_OK);
    assert_non_null(strstr(err.msg, "hash"));
    /* A link to a calibration file is refused. */
    char link[4400];
    assert_int_equal(symlink(bl_rt_at(q, p, "calibration.json"), bl_rt_at(link, fx->dir, "cal-link")), 0);
    assert_int_equal(bl_calibrations_read(link, &cals, &n, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "calibration cannot be a symlink"));
    /* The same edit inside the record: the record is no longer complete. */
    bl_rt_write(bl_rt_at(q, p, "calibration.json"), b.data, b.len);
    bl_buf_clear(&b);
    assert_int_equal(bl_calibrations_read(p, &cals, &n, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "calibration record is incomplete or has invalid checksums"));
    /* A link to a record directory, and a directory that is no record. */
    bl_rt_at(q, fx->dir, "record-link");
    assert_int_equal(symlink(p, q), 0);
    assert_int_equal(bl_calibrations_read(q, &cals, &n, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "calibration cannot be a symlink"));
    assert_int_not_equal(bl_calibrations_read(fx->dir, &cals, &n, &err), BL_OK);
    assert_non_null(strstr(err.msg, "record.toml"));
    evaluated_free(&ev);
}

/* ---- recording channels (§7.2, §7.3) ------------------------------------------------- */

/* A record input's probe events from fixed arrays (the writer's form). */
typedef struct fixed_events {
    const bl_json *events;
    const double *const *features;
    const size_t *lens;
    size_t made;
} fixed_events;

static bl_status fixed_event(const void *ctx, size_t i, bl_json **row, const double **features,
                             size_t *n, bl_error *err)
{
    fixed_events *f = (fixed_events *)ctx;
    (void)err;
    f->made++;
    *row = bl_json_copy(bl_json_at(f->events, i));
    *features = f->features[i];
    *n = f->lens[i];
    return BL_OK;
}

static void test_probe_and_replay_files(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    bl_json *events = parse("[{\"block_id\": 0, \"channel\": \"emitted_activity\", "
                            "\"entity_id\": \"reservoir\", \"feature_ids\": [\"neuron/0\", "
                            "\"neuron/1\"], \"label\": 1, \"point\": \"cue_end\", \"round\": 1, "
                            "\"target_id\": \"cue\", \"task\": \"delayed_cue\", \"tick\": 2, "
                            "\"trial_id\": 0},"
                            "{\"block_id\": 0, \"channel\": \"emitted_activity\", "
                            "\"entity_id\": \"reservoir\", \"feature_ids\": [\"neuron/0\", "
                            "\"neuron/1\"], \"label\": 1, \"point\": \"response\", \"round\": 1, "
                            "\"target_id\": \"cue\", \"task\": \"delayed_cue\", \"tick\": 7, "
                            "\"trial_id\": 0}]");
    bl_json *ptrials = parse("[{\"block_id\": 0, \"construction_scope\": \"block\", "
                             "\"interface_signature\": \"i\", \"native_score\": 1.0, "
                             "\"node_signature\": \"n\", \"reset\": \"full\", \"target_id\": "
                             "\"cue\", \"task\": \"delayed_cue\", \"trial_id\": 0, \"wiring_id\": "
                             "\"w\", \"world_seed\": \"s\"}]");
    /* Keys sort as bytes: "cue/10/0" < "cue/2/0". */
    bl_json *replays = parse("{\"cue/2/0\": {\"trial_key\": \"cue/2/0\", \"frames\": [1]}, "
                             "\"cue/10/0\": {\"trial_key\": \"cue/10/0\", \"frames\": [2]}}");
    const double f0[] = {0.5, -0.0}, f1[] = {1e-300, 3.0};
    const double *const features[] = {f0, f1};
    const size_t lens[] = {2, 2};
    fixed_events fixed = {events, features, lens, 0};
    in.probe_nevents = 2;
    in.probe_event = fixed_event;
    in.probe_ctx = &fixed;
    in.probe_trials = ptrials;
    in.replays = replays;
    const char *status;
    bl_rt_at(p, fx->dir, "channels");
    OK_E(write_record(&in, p, &status, &e_));
    assert_string_equal(status, "complete");
    assert_int_equal(fixed.made, 2); /* each event made once */

    check_csv_header(bl_rt_at(q, p, "data/probe_events.csv"),
                     "block_id,channel,entity_id,feature_array,feature_ids,label,point,round,"
                     "target_id,task,tick,trial_id\r\n"
                     "0,emitted_activity,reservoir,event_00000000,\"[\"\"neuron/0\"\",\"\"neuron/"
                     "1\"\"]\",1,cue_end,1,cue,delayed_cue,2,0\r\n",
                     2);
    check_csv_header(bl_rt_at(q, p, "data/probe_trials.csv"),
                     "block_id,construction_scope,interface_signature,native_score,"
                     "node_signature,reset,target_id,task,trial_id,wiring_id,world_seed\r\n"
                     "0,block,i,1.0,n,full,cue,delayed_cue,0,w,s\r\n",
                     1);
    size_t zlen;
    char *zip = bl_test_read(bl_rt_at(q, p, "data/probe_features.npz"), &zlen);
    bl_zip_entry *entries;
    size_t n;
    OK_E(bl_zip_read(zip, zlen, &entries, &n, &e_));
    assert_int_equal(n, 2);
    for (size_t i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "event_%08zu.npy", i);
        assert_string_equal(entries[i].name, name);
        bl_npy *a = NULL;
        OK_E(bl_npy_parse(entries[i].data, entries[i].len, name, &a, &e_));
        assert_int_equal(a->dtype, BL_NPY_F8);
        assert_int_equal(a->ndim, 1);
        assert_int_equal(a->count, 2);
        for (size_t k = 0; k < 2; k++)
            assert_true(bl_test_bits(bl_npy_get_f64(a, k)) == bl_test_bits(features[i][k]));
        bl_npy_destroy(a);
    }
    bl_zip_entries_destroy(entries, n);
    free(zip);
    bl_json *r0 = record_json_file(bl_rt_at(q, p, "replays/trial_00000000.json"));
    assert_string_equal(bl_json_get_string(bl_json_get(r0, "trial_key"), NULL), "cue/10/0");
    bl_json_destroy(r0);
    bl_json *r1 = record_json_file(bl_rt_at(q, p, "replays/trial_00000001.json"));
    assert_string_equal(bl_json_get_string(bl_json_get(r1, "trial_key"), NULL), "cue/2/0");
    bl_json_destroy(r1);
    assert_false(bl_rt_exists(bl_rt_at(q, p, "replays/trial_00000002.json")));
    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    assert_int_equal(bl_json_size(bl_json_get(bl_json_get(map, "manifest"), "artifacts")), 15);
    bl_json_destroy(map);

    /* A non-finite feature fails the record like any other NaN. */
    const double bad[] = {1.0, 1.0 / 0.0};
    const double *const bad_features[] = {f0, bad};
    fixed.features = bad_features;
    in.replays = NULL;
    bl_error err = {0};
    bl_rt_at(p, fx->dir, "bad-features");
    assert_int_equal(write_record(&in, p, &status, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "finite"));
    expect_failed_partial(p);
    assert_false(bl_rt_exists(bl_rt_at(q, p, "data/probe_features.npz")));
    bl_json_destroy(events);
    bl_json_destroy(ptrials);
    bl_json_destroy(replays);
    evaluated_free(&ev);
}

/* ---- failures in the middle of a write ---------------------------------------------- */

/* Disk full, for real and also as root: RLIMIT_FSIZE in a forked child
 * (with SIGXFSZ ignored, writes past the limit fail with EFBIG). The
 * record must end FAILED, with the partial files and no DONE. */
static void test_disk_full_leaves_failed_record(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    bl_rt_at(p, fx->dir, "full");
    static const rlim_t limits[] = {2000, 16384};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        char dest[4500];
        snprintf(dest, sizeof dest, "%s-%zu", p, i);
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {limits[i], limits[i]};
            bl_reservation r;
            bl_error err = {0};
            const char *status = NULL;
            int code = setrlimit(RLIMIT_FSIZE, &rl) != 0      ? 3
                       : bl_record_reserve(dest, &r, &err) != BL_OK ? 4
                       : bl_record_write(&in, &r, &status, &err) == BL_OK ? 5
                                                                          : 0;
            ssize_t w = write(fds[1], &err, sizeof err);
            (void)w;
            _exit(code);
        }
        close(fds[1]);
        bl_error err = {0};
        ssize_t got = read(fds[0], &err, sizeof err);
        close(fds[0]);
        int wst;
        assert_int_equal(waitpid(pid, &wst, 0), pid);
        assert_true(WIFEXITED(wst));
        if (WEXITSTATUS(wst) != 0 || got != (ssize_t)sizeof err)
            fail_msg("limit %ld: child exit %d: %s", (long)limits[i], WEXITSTATUS(wst), err.msg);
        assert_int_equal(err.status, BL_EOS);
        assert_non_null(strstr(err.msg, "File too large"));
        expect_failed_partial(dest);
        assert_true(bl_rt_exists(bl_rt_at(q, dest, "request.toml")));
        bl_json *failed = record_json_file(bl_rt_at(q, dest, "FAILED"));
        assert_string_equal(bl_json_get_string(bl_json_get(failed, "error_type"), NULL),
                            "OSError");
        const char *message = bl_json_get_string(bl_json_get(failed, "message"), NULL);
        if (strncmp(message, "<record>/", 9) != 0 || strstr(message, fx->dir))
            fail_msg("FAILED message: %s", message);
        bl_json_destroy(failed);
        expect_inspect_error(dest, BL_ENOENT, "record.toml");
    }
    evaluated_free(&ev);
}

/* Every allocation of a record write that fails (sampled across the whole
 * write) gives BL_ENOMEM, a FAILED record and never DONE; nothing leaks
 * (the sanitizer build checks). */
static void test_allocation_failures_never_complete(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    /* Count the allocations of one whole write first. */
    const char *status;
    bl_reservation r;
    bl_rt_at(p, fx->dir, "count");
    OK_E(bl_record_reserve(p, &r, &e_));
    bl_alloc_fail_at(0);
    OK_E(bl_record_write(&in, &r, &status, &e_));
    long total = bl_alloc_count();
    bl_reservation_clear(&r);
    assert_true(total > 100);
    /* About 60 points spread over the write, plus the first few. */
    long step = total / 60 + 1;
    size_t tried = 0;
    for (long n = 1; n <= total; n += n < 8 ? 1 : step) {
        char dest[4400];
        snprintf(dest, sizeof dest, "%s/alloc-%ld", fx->dir, n);
        OK_E(bl_record_reserve(dest, &r, &e_));
        bl_error err = {0};
        bl_alloc_fail_at(n);
        bl_status st = bl_record_write(&in, &r, &status, &err);
        bl_alloc_fail_at(0);
        bl_reservation_clear(&r);
        assert_false(bl_rt_exists(bl_rt_at(q, dest, "DONE")) && st != BL_OK);
        if (st == BL_OK) {
            /* The failed allocation was one whose failure is not an error
             * (none is expected; tolerate and check the record). */
            bl_json *map = inspect_ok(dest);
            assert_string_equal(status_of(map), "complete");
            bl_json_destroy(map);
            continue;
        }
        if (st != BL_ENOMEM)
            fail_msg("allocation %ld: %s: %s", n, bl_status_kind(st), err.msg);
        expect_failed_partial(dest);
        tried++;
    }
    assert_true(tried > 30);
    evaluated_free(&ev);
}

/* The directory and file helpers the receipts share: parents made and
 * undone exactly, nothing overwritten, nothing half-written through a link. */
static void test_new_directories_and_files(void **state)
{
    const char *dir = bl_test_dir(state);
    char dest[4200], first[4200], file[4300];
    snprintf(first, sizeof first, "%s/a", dir);
    snprintf(dest, sizeof dest, "%s/a/b/c/", dir);
    size_t created = 0;
    OK_E(bl_dir_create_exclusive(dest, &created, &e_));
    assert_int_equal(created, strlen(first));
    bl_error err = {0};
    assert_int_equal(bl_dir_create_exclusive(dest, NULL, &err), BL_EEXIST);
    assert_non_null(strstr(err.msg, "File exists"));
    snprintf(file, sizeof file, "%s/a/b/c/x.txt", dir);
    OK_E(bl_file_write_new(file, "one", 3, &e_));
    assert_int_equal(bl_file_write_new(file, "two", 3, &err), BL_EEXIST);
    char got[8] = {0};
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    assert_int_equal(fread(got, 1, sizeof got, f), 3);
    fclose(f);
    assert_string_equal(got, "one"); /* never overwritten */
    /* A dangling link is not followed: nothing is created at its target. */
    char link_path[4300], target[4300];
    snprintf(link_path, sizeof link_path, "%s/a/b/c/link", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    assert_int_equal(symlink(target, link_path), 0);
    assert_int_equal(bl_file_write_new(link_path, "x", 1, &err), BL_EEXIST);
    struct stat sb;
    assert_int_not_equal(lstat(target, &sb), 0);
    assert_int_equal(unlink(link_path), 0);
    assert_int_equal(unlink(file), 0);
    /* Undo removes exactly what the creation made. */
    bl_dir_remove_created(dest, created);
    assert_int_not_equal(stat(first, &sb), 0);
    assert_int_equal(stat(dir, &sb), 0);
    /* A file in the way of a parent is refused. */
    assert_int_equal(mkdir(first, 0777), 0);
    snprintf(file, sizeof file, "%s/a/n", dir);
    OK_E(bl_file_write_new(file, "", 0, &e_));
    snprintf(dest, sizeof dest, "%s/a/n/m", dir);
    assert_int_equal(bl_dir_create_exclusive(dest, NULL, &err), BL_EEXIST);
    assert_non_null(strstr(err.msg, "exists and is not a directory"));
}

/* ---- a stop signal while the record is written ----------------------------------- */

/* The flag a stop signal raises, as the program's handler raises it. */
static volatile sig_atomic_t stop_flag;

static void raise_stop_flag(int sig)
{
    stop_flag = sig;
}

/* The before_file hook of these tests: it notes each file it is asked
 * about and, before the file named `at`, a real SIGTERM arrives; from then
 * on it refuses, as the program's hook does. */
typedef struct stop_hook {
    const char *at;
    char asked[32][64];
    size_t n;
} stop_hook;

static bl_status stop_at(void *ctx, const char *rel, bl_error *err)
{
    stop_hook *h = ctx;
    assert_true(h->n < 32);
    snprintf(h->asked[h->n++], sizeof h->asked[0], "%s", rel);
    if (h->at && strcmp(rel, h->at) == 0)
        raise(SIGTERM);
    return stop_flag ? bl_fail(err, BL_ETERMINATED, "terminated by SIGTERM") : BL_OK;
}

/* Writes `in` into <fx>/<name> with the hook stopping before `at` (NULL:
 * never); returns the write's status with its error in *err. */
static bl_status write_stopping_at(bl_record_input *in, const char *dest, const char *at,
                                   stop_hook *h, const char **status, bl_error *err)
{
    memset(h, 0, sizeof *h);
    h->at = at;
    in->before_file = stop_at;
    in->hook_ctx = h;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = raise_stop_flag;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGTERM, &sa, &old), 0);
    stop_flag = 0;
    bl_status st = write_record(in, dest, status, err);
    assert_int_equal(sigaction(SIGTERM, &old, NULL), 0);
    assert_int_equal(stop_flag, at ? SIGTERM : 0);
    stop_flag = 0;
    return st;
}

/* Once a stop signal has arrived, the writer writes no further file, above
 * all no completion marker: the reservation is failed with the signal's
 * error (FAILED names it), even when the signal comes after the manifest
 * was verified, right before DONE. Without a signal, the marker is the last
 * file the hook is asked about, after the manifest. */
static void test_stop_signal_before_the_marker_fails_the_record(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    stop_hook h;
    const char *status = NULL;
    bl_error err = {0};

    bl_rt_at(p, fx->dir, "no-signal");
    if (write_stopping_at(&in, p, NULL, &h, &status, &err) != BL_OK)
        fail_msg("write: %s", err.msg);
    assert_string_equal(status, "complete");
    assert_true(h.n >= 3);
    assert_string_equal(h.asked[0], "request.toml");
    assert_string_equal(h.asked[h.n - 2], "record.toml");
    assert_string_equal(h.asked[h.n - 1], "DONE");

    static const char signal_failed[] =
        "{\"error_type\":\"SystemExit\",\"message\":\"terminated by SIGTERM\","
        "\"status\":\"failed\"}\n";
    /* Right before DONE, and earlier (before trials.csv). */
    static const char *const points[] = {"DONE", "trials.csv"};
    for (size_t i = 0; i < sizeof points / sizeof *points; i++) {
        char dest[4500];
        snprintf(dest, sizeof dest, "%s/stopped-%zu", fx->dir, i);
        status = "unset";
        assert_int_equal(write_stopping_at(&in, dest, points[i], &h, &status, &err),
                         BL_ETERMINATED);
        assert_null(status);
        assert_string_equal(err.msg, "terminated by SIGTERM");
        assert_string_equal(h.asked[h.n - 1], points[i]);
        expect_failed_partial(dest);
        char *failed = bl_test_read(bl_rt_at(q, dest, "FAILED"), NULL);
        assert_string_equal(failed, signal_failed);
        free(failed);
        assert_false(bl_rt_exists(bl_rt_at(q, dest, points[i])));
        assert_int_equal(bl_rt_exists(bl_rt_at(q, dest, "record.toml")), i == 0);
    }
    bl_json *map = inspect_ok(p);
    assert_string_equal(status_of(map), "complete");
    bl_json_destroy(map);
    char dest[4500];
    snprintf(dest, sizeof dest, "%s/stopped-0", fx->dir);
    map = inspect_ok(dest); /* the manifest is there and verified: failed, never complete */
    assert_string_equal(status_of(map), "failed");
    bl_json_destroy(map);
    evaluated_free(&ev);

    /* A record of failed trials: the signal's FAILED replaces the trials'. */
    evaluate_tiny("input_gain = 1e308\n", &ev);
    in = input_of(&ev);
    snprintf(dest, sizeof dest, "%s/failed-trials", fx->dir);
    assert_int_equal(write_stopping_at(&in, dest, "FAILED", &h, &status, &err), BL_ETERMINATED);
    assert_string_equal(h.asked[h.n - 2], "record.toml");
    char *failed = bl_test_read(bl_rt_at(q, dest, "FAILED"), NULL);
    assert_string_equal(failed, signal_failed);
    free(failed);
    evaluated_free(&ev);
}

/* ---- no space, no inodes ----------------------------------------------------------- */

/* What one write into a small tmpfs gave (sent from the child). */
typedef struct full_result {
    int stage;            /* 0 reserve failed, 1 write failed, 2 written */
    bl_status status;
    char msg[BL_ERROR_MAX];
    char dest[BL_RT_PATH + 16];
} full_result;

/* In the child: a private mount namespace (as root, else as root of a new
 * user namespace) whose mounts never reach the test's own. */
static bool private_mounts(void)
{
    if (unshare(CLONE_NEWNS) != 0) {
        uid_t uid = geteuid();
        gid_t gid = getegid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return false;
        char map[64];
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        FILE *f = fopen("/proc/self/uid_map", "w");
        if (!f || fputs(map, f) < 0 || fclose(f) != 0)
            return false;
        /* gid_map is writable only once setgroups is denied (if it exists). */
        if ((f = fopen("/proc/self/setgroups", "w")) != NULL && (fputs("deny", f), fclose(f)) != 0)
            return false;
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        if (!(f = fopen("/proc/self/gid_map", "w")) || fputs(map, f) < 0 || fclose(f) != 0)
            return false;
    }
    return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

/* Every way a record write can run out of room reads the same: a directory
 * or a file that cannot be created for want of an inode, and a file whose
 * bytes do not fit, are "<path>: cannot write: No space left on device"
 * (OSError), whether it is the records root, the reservation, .RESERVED, a
 * subdirectory, an artifact or the manifest. Real filesystems: a tmpfs with
 * 1, 2, 3, ... inodes (each write meets the first creation that no longer
 * fits) and one too small for the bytes, in a private mount namespace. */
static void test_no_space_or_inodes_reads_cannot_write(void **state)
{
    bl_rt_fixture *fx = *state;
    evaluated ev;
    evaluate_tiny("", &ev);
    bl_record_input in = input_of(&ev);
    /* The last case: bl_file_write_new (receipts) where no inode is left. */
    enum { MAX_INODES = 40, CASES = MAX_INODES + 2 };
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (!private_mounts())
            _exit(77);
        for (int k = 0; k < CASES - 1; k++) {
            /* cases 0..MAX_INODES-1: k+1 inodes (the root takes one); the
             * last: inodes to spare, 64 KiB of bytes. */
            char mnt[4400], opts[64];
            full_result r = {0};
            snprintf(mnt, sizeof mnt, "%s/fs-%02d", fx->dir, k);
            if (k < MAX_INODES)
                snprintf(opts, sizeof opts, "size=4m,nr_inodes=%d", k + 1);
            else
                snprintf(opts, sizeof opts, "size=64k,nr_inodes=1000");
            if (mkdir(mnt, 0777) != 0 || mount("none", mnt, "tmpfs", 0, opts) != 0)
                _exit(k == 0 ? 77 : 3);
            snprintf(r.dest, sizeof r.dest, "%s/records/rec", mnt);
            bl_reservation res;
            bl_error err = {0};
            const char *status = NULL;
            if (bl_record_reserve(r.dest, &res, &err) != BL_OK) {
                r.stage = 0;
            } else {
                r.stage = bl_record_write(&in, &res, &status, &err) == BL_OK ? 2 : 1;
                bl_reservation_clear(&res);
            }
            r.status = err.status;
            memcpy(r.msg, err.msg, sizeof r.msg);
            if (write(fds[1], &r, sizeof r) != (ssize_t)sizeof r)
                _exit(4);
        }
        full_result r = {.stage = 1};
        snprintf(r.dest, sizeof r.dest, "%s/fs-00/records/rec", fx->dir);
        char receipt[4400];
        snprintf(receipt, sizeof receipt, "%s/fs-00/receipt.json", fx->dir);
        bl_error err = {0};
        if (bl_file_write_new(receipt, "{}\n", 3, &err) == BL_OK)
            r.stage = 2;
        r.status = err.status;
        memcpy(r.msg, err.msg, sizeof r.msg);
        _exit(write(fds[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 4);
    }
    close(fds[1]);
    full_result *got = calloc(CASES, sizeof *got);
    assert_non_null(got);
    size_t n = 0;
    for (ssize_t r; n < CASES * sizeof *got &&
                    (r = read(fds[0], (char *)got + n, CASES * sizeof *got - n)) > 0;)
        n += (size_t)r;
    close(fds[0]);
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    assert_true(WIFEXITED(wst));
    if (WEXITSTATUS(wst) == 77) {
        free(got);
        evaluated_free(&ev);
        bl_test_missing("a private mount namespace for a small tmpfs (unshare, mount)");
        skip();
    }
    assert_int_equal(WEXITSTATUS(wst), 0);
    assert_int_equal(n, CASES * sizeof *got);
    static const char reason[] = ": cannot write: No space left on device";
    size_t reserve_failures = 0, write_failures = 0, complete = 0;
    char seen[4096] = "";
    for (int k = 0; k < CASES; k++) {
        const full_result *r = &got[k];
        if (r->stage == 2) {
            complete++;
            assert_true(k < MAX_INODES); /* 64 KiB never holds a whole record; a full fs no receipt */
            continue;
        }
        /* "<path inside the record's filesystem>: cannot write: ..." */
        size_t mlen = strlen(r->dest) - strlen("/records/rec");
        const char *tail = strstr(r->msg, reason);
        if (r->status != BL_EOS || strncmp(r->msg, r->dest, mlen) != 0 || !tail ||
            tail[strlen(reason)] != 0)
            fail_msg("case %d (%s): %s '%s'", k, r->stage ? "write" : "reserve",
                     bl_status_kind(r->status), r->msg);
        reserve_failures += r->stage == 0;
        write_failures += r->stage == 1;
        /* The names that ran out, for the report below. */
        char name[600];
        snprintf(name, sizeof name, "%.*s ", (int)(tail - r->msg - mlen), r->msg + mlen);
        if (!strstr(seen, name) && strlen(seen) + strlen(name) < sizeof seen)
            strcat(seen, name);
    }
    print_message("out of room at: %s\n", seen);
    /* Directories and files, in the reservation and in the record. */
    static const char *const expected[] = {"/records ", "/records/rec ", "/records/rec/.RESERVED ",
                                           "/records/rec/request.toml ", "/records/rec/summary ",
                                           "/records/rec/record.toml "};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        if (!strstr(seen, expected[i]))
            fail_msg("no case ran out of room at %s; seen: %s", expected[i], seen);
    assert_true(reserve_failures >= 3 && write_failures >= 10 && complete >= 1);
    assert_int_equal(got[MAX_INODES].stage, 1); /* the bytes, not the inodes */
    assert_non_null(strstr(seen, "/receipt.json "));
    free(got);
    evaluated_free(&ev);
}

int main(void)
{
#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, bl_rt_teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_json_and_csv_formats),
        BL_TEST_IN_DIR(test_new_directories_and_files),
        cmocka_unit_test(test_csv_row_by_row),
        cmocka_unit_test(test_record_names),
        TEST(test_reservation_refusals_leave_no_trace),
        TEST(test_fail_record_keeps_reservation_and_first_cause),
        TEST(test_fresh_record),
        TEST(test_tampering_and_completion_states),
        TEST(test_trial_files_span_chunks),
        TEST(test_nan_leaves_failed_partial_bundle),
        TEST(test_failed_trials_give_failed_record),
        TEST(test_historical_v1_record),
        TEST(test_manifest_rules),
        TEST(test_links_are_refused),
        TEST(test_inspect_and_calibrations_refuse_non_files),
        TEST(test_inspect_failed_before_manifest),
        TEST(test_calibration_reading),
        TEST(test_probe_and_replay_files),
        TEST(test_disk_full_leaves_failed_record),
        TEST(test_allocation_failures_never_complete),
        TEST(test_stop_signal_before_the_marker_fails_the_record),
        TEST(test_no_space_or_inodes_reads_cannot_write),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
