/* `run --shard K/N` and `merge` (docs/running.md "Shards and merge"):
 * N = 1, 2, 3 shards (every K) merged give the single process's results
 * byte for byte (trials.csv, seeds.csv, calibration.json, the probe files,
 * the replay documents but their provenance, summary.json's summaries and
 * contrasts) on the mixed plans tests/plans/shards-{block,trial}.toml and
 * a probe_events plan; every bad merge (missing, overlapping, foreign,
 * other build, other recording or calibrations, tampered, incomplete, not
 * a shard) and every bad --shard value is one line, exit 1, and leaves
 * nothing behind; `inspect` shows a shard, `--calibration` refuses one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "record_support.h"
#include "support.h"

/* A shell-quoted path of the tests' plans folder. */
static const char *plan_path(const char *name, char buf[BL_RT_PATH])
{
    snprintf(buf, BL_RT_PATH, "%s/plans/%s", bl_test_tests_dir(), name);
    return buf;
}

/* Runs the program, which must exit 0 and print {"record": PATH, ...};
 * PATH into path. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void record_of(char path[BL_RT_PATH], const char *fmt, ...)
{
    char args[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out, *err;
    const int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("%s: exit %d: %s", args, rc, err);
    bl_json *doc = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &doc, &e_));
    snprintf(path, BL_RT_PATH, "%s", bl_json_get_string(bl_json_get(doc, "record"), NULL));
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "status"), NULL), "complete");
    bl_json_destroy(doc);
    free(out);
    free(err);
}

static bl_json *read_json(const char *path)
{
    size_t len = 0;
    char *text = bl_test_read(path, &len);
    bl_json *v = NULL;
    OK_E(bl_json_parse(text, len, path, &v, &e_));
    free(text);
    return v;
}

static void assert_same_json(const bl_json *a, const bl_json *b, const char *what)
{
    if (!bl_json_equal(a, b))
        fail_msg("%s differs", what);
}

/* Both files absent, or both present with the same bytes. */
static void assert_same_file(const char *a, const char *b, const char *rel)
{
    char pa[BL_RT_PATH], pb[BL_RT_PATH];
    bl_rt_at(pa, a, rel);
    bl_rt_at(pb, b, rel);
    assert_int_equal(bl_rt_exists(pa), bl_rt_exists(pb));
    if (!bl_rt_exists(pa))
        return;
    size_t la = 0, lb = 0;
    char *ta = bl_test_read(pa, &la), *tb = bl_test_read(pb, &lb);
    if (la != lb || memcmp(ta, tb, la) != 0)
        fail_msg("%s differs between %s and %s", rel, a, b);
    free(ta);
    free(tb);
}

/* The results of two records, compared as the issue compares them. */
static void assert_same_results(const char *merged, const char *single, size_t nreplays)
{
    static const char *const files[] = {"trials.csv",           "seeds.csv",
                                        "calibration.json",     "data/probe_events.csv",
                                        "data/probe_features.npz", "data/probe_trials.csv"};
    for (size_t k = 0; k < sizeof files / sizeof *files; k++)
        assert_same_file(merged, single, files[k]);
    char pa[BL_RT_PATH], pb[BL_RT_PATH];
    bl_json *sa = read_json(bl_rt_at(pa, merged, "summary/summary.json")),
            *sb = read_json(bl_rt_at(pb, single, "summary/summary.json"));
    assert_same_json(bl_json_get(sa, "summaries"), bl_json_get(sb, "summaries"), "summaries");
    assert_same_json(bl_json_get(sa, "contrasts"), bl_json_get(sb, "contrasts"), "contrasts");
    assert_null(bl_json_get(bl_json_get(sb, "metadata"), "distribution"));
    bl_json_destroy(sa);
    bl_json_destroy(sb);
    /* Replay documents: all but their provenance (the run's metadata). */
    for (size_t i = 0; i <= nreplays; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "replays/trial_%08zu.json", i);
        bl_rt_at(pa, merged, rel);
        bl_rt_at(pb, single, rel);
        assert_int_equal(bl_rt_exists(pa), bl_rt_exists(pb));
        assert_int_equal(bl_rt_exists(pa), i < nreplays);
        if (i == nreplays)
            break;
        bl_json *ra = read_json(pa), *rb = read_json(pb);
        assert_int_equal(bl_json_size(ra), bl_json_size(rb));
        for (size_t k = 0; k < bl_json_size(ra); k++) {
            const char *key = bl_json_key_at(ra, k, NULL);
            if (strcmp(key, "provenance") != 0)
                assert_same_json(bl_json_value_at(ra, k), bl_json_get(rb, key), key);
        }
        bl_json_destroy(ra);
        bl_json_destroy(rb);
    }
}

/* The plan at `plan` (a shell-quoted path) run whole and as N = 1, 2, 3
 * shards merged; `options` go to every run. */
static void check_merges(const char *dir, const char *plan, const char *options,
                         size_t nreplays)
{
    char single[BL_RT_PATH], merged[BL_RT_PATH], shard[BL_RT_PATH];
    record_of(single, "run '%s' --root '%s/single' %s", plan, dir, options);
    for (int n = 1; n <= 3; n++) {
        char list[3 * BL_RT_PATH + 16] = "";
        /* Shards in reverse order, each with another batch size and
         * thread count than the single run's. */
        for (int k = n; k >= 1; k--) {
            record_of(shard, "run '%s' --shard %d/%d --root '%s/shards-%d' --batch-size %d "
                             "--cpu-threads %d %s",
                      plan, k, n, dir, n, k + 1, 3 - k % 2, options);
            strcat(list, " '");
            strcat(list, shard);
            strcat(list, "'");
        }
        record_of(merged, "merge%s --root '%s/merged-%d'", list, dir, n);
        assert_same_results(merged, single, nreplays);
        char p[BL_RT_PATH];
        bl_json *s = read_json(bl_rt_at(p, merged, "summary/summary.json"));
        const bl_json *d = bl_json_get(bl_json_get(s, "metadata"), "distribution");
        assert_string_equal(bl_json_get_string(bl_json_get(d, "kind"), NULL), "shards");
        assert_int_equal(bl_json_get_int(bl_json_get(d, "shards")), n);
        bl_json_destroy(s);
    }
}

static void test_merge_equals_run_block(void **state)
{
    const char *dir = bl_test_dir(state);
    char plan[BL_RT_PATH], cal[BL_RT_PATH], options[2 * BL_RT_PATH];
    plan_path("shards-block.toml", plan);
    /* The calibrations of a first run, applied to every run after it: the
     * shards carry them to the merge. */
    record_of(cal, "run '%s' --root '%s/calibration'", plan, dir);
    snprintf(options, sizeof options,
             "--recording replay --recording-budget-mib 64 --calibration '%s'", cal);
    check_merges(dir, plan, options, 45);
}

static void test_merge_equals_run_trial(void **state)
{
    char plan[BL_RT_PATH];
    check_merges(bl_test_dir(state), plan_path("shards-trial.toml", plan),
                 "--recording replay --recording-budget-mib 64", 45);
}

static void test_merge_equals_run_probes(void **state)
{
    char plan[BL_RT_PATH];
    check_merges(bl_test_dir(state), plan_path("shards-probes.toml", plan),
                 "--recording probe_events", 0);
}

/* ---- refusals ------------------------------------------------------------------ */

/* The program, which must exit 1 with nothing on stdout and one line on
 * stderr holding `fragment`, and leave `root` uncreated. */
static void refused(const char *root, const char *fragment, const char *args)
{
    char *out, *err;
    const int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 1 || !strstr(err, fragment))
        fail_msg("%s: exit %d, '%s' (expected '%s')", args, rc, err, fragment);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "brainlesslab: ValueError: "));
    assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    assert_false(bl_rt_exists(root));
    free(out);
    free(err);
}

typedef struct shards {
    char of3[3][BL_RT_PATH];      /* block plan, parts 1..3 of 3 */
    char of2[2][BL_RT_PATH];      /* block plan, parts 1..2 of 2 */
    char trial2[BL_RT_PATH];      /* trial plan, part 2 of 2 */
    char replay3[BL_RT_PATH];     /* block plan, part 3 of 3, recording replay */
    char cal3[BL_RT_PATH];        /* block plan, part 3 of 3, with calibrations */
    char single[BL_RT_PATH];      /* a record, no shard */
} shards;

static void make_shards(const char *dir, shards *s)
{
    char block[BL_RT_PATH], trial[BL_RT_PATH];
    plan_path("shards-block.toml", block);
    plan_path("shards-trial.toml", trial);
    for (int k = 1; k <= 3; k++)
        record_of(s->of3[k - 1], "run '%s' --shard %d/3 --root '%s/s3'", block, k, dir);
    for (int k = 1; k <= 2; k++)
        record_of(s->of2[k - 1], "run '%s' --shard %d/2 --root '%s/s2'", block, k, dir);
    record_of(s->trial2, "run '%s' --shard 2/2 --root '%s/t2'", trial, dir);
    record_of(s->replay3, "run '%s' --shard 3/3 --root '%s/r3' --recording replay "
                          "--recording-budget-mib 64", block, dir);
    record_of(s->single, "run '%s' --root '%s/single'", block, dir);
    record_of(s->cal3, "run '%s' --shard 3/3 --root '%s/c3' --calibration '%s'", block, dir,
              s->single);
}

/* A copy of shard `from` at `to` (cp -r keeps everything but the times). */
static void copy_tree(const char *from, const char *to)
{
    char cmd[3 * BL_RT_PATH];
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
}

static void test_bad_merges(void **state)
{
    const char *dir = bl_test_dir(state);
    shards s;
    make_shards(dir, &s);
    char root[BL_RT_PATH], args[8 * BL_RT_PATH], copy[BL_RT_PATH], p[BL_RT_PATH];
    bl_rt_at(root, dir, "merged");
    /* The good merge first: the refusals below are of their shards alone. */
    char ok[BL_RT_PATH];
    record_of(ok, "merge '%s' '%s' '%s' --root '%s/ok'", s.of3[0], s.of3[1], s.of3[2], dir);

    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", s.of3[0], s.of3[1], root);
    refused(root, "shard 3 of 3 is missing", args);
    snprintf(args, sizeof args, "merge '%s' '%s' '%s' '%s' --root '%s'", s.of3[0], s.of3[1],
             s.of3[1], s.of3[2], root);
    refused(root, "part 2 of 3 is given twice", args);
    snprintf(args, sizeof args, "merge '%s' '%s' '%s' --root '%s'", s.of3[0], s.of2[1], s.of3[2],
             root);
    refused(root, "shard 2 of 2, the first shard is one of 3", args);
    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", s.of2[0], s.trial2, root);
    refused(root, "shard of another plan", args);
    snprintf(args, sizeof args, "merge '%s' '%s' '%s' --root '%s'", s.of3[0], s.of3[1],
             s.replay3, root);
    refused(root, "shard recorded with replay, the first shard with summary", args);
    snprintf(args, sizeof args, "merge '%s' '%s' '%s' --root '%s'", s.of3[0], s.of3[1], s.cal3,
             root);
    refused(root, "applied other calibrations", args);
    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", s.of2[0], s.single, root);
    refused(root, "not a shard record", args);
    snprintf(args, sizeof args, "merge '%s' '%s/nowhere' --root '%s'", s.of2[0], dir, root);
    refused(root, "a record must be a real directory", args);

    /* Tampered: one byte of the part changed. */
    bl_rt_at(copy, dir, "tampered");
    copy_tree(s.of2[1], copy);
    size_t len = 0;
    char *bytes = bl_test_read(bl_rt_at(p, copy, "shard/part.bin"), &len);
    bytes[len / 2] ^= 1;
    bl_rt_write(p, bytes, len);
    free(bytes);
    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", s.of2[0], copy, root);
    refused(root, "shard artifacts do not match their checksums", args);
    /* Incomplete: no DONE. */
    bl_rt_at(copy, dir, "incomplete");
    copy_tree(s.of2[1], copy);
    assert_int_equal(remove(bl_rt_at(p, copy, "DONE")), 0);
    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", s.of2[0], copy, root);
    refused(root, "shard is not complete (status: incomplete)", args);
    /* Another build: the manifest names another source bundle. */
    bl_rt_at(copy, dir, "other-build");
    copy_tree(s.of2[1], copy);
    char *manifest = bl_test_read(bl_rt_at(p, copy, "record.toml"), &len);
    char *at = strstr(manifest, "source_sha256 = \"");
    assert_non_null(at);
    at += strlen("source_sha256 = \"");
    *at = *at == '0' ? '1' : '0';
    bl_rt_write(p, manifest, len);
    free(manifest);
    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", s.of2[0], copy, root);
    refused(root, "shard of another build (source_sha256", args);
    /* Both of the other build's shards: this program is not their build. */
    bl_rt_at(copy, dir, "other-build-1");
    copy_tree(s.of2[0], copy);
    manifest = bl_test_read(bl_rt_at(p, copy, "record.toml"), &len);
    at = strstr(manifest, "source_sha256 = \"") + strlen("source_sha256 = \"");
    *at = *at == '0' ? '1' : '0';
    bl_rt_write(p, manifest, len);
    free(manifest);
    char other2[BL_RT_PATH];
    bl_rt_at(other2, dir, "other-build");
    snprintf(args, sizeof args, "merge '%s' '%s' --root '%s'", copy, other2, root);
    refused(root, "merge with the build that ran the shards", args);
}

static void test_bad_shard_values(void **state)
{
    const char *dir = bl_test_dir(state);
    char plan[BL_RT_PATH], root[BL_RT_PATH], args[3 * BL_RT_PATH];
    plan_path("shards-block.toml", plan);
    bl_rt_at(root, dir, "records");
    static const char *const bad[] = {"0/3",  "4/3",  "x",   "1/0",     "1/3/4", "' 1/3'",
                                      "-1/3", "1/",   "/3",  "1/1000001", "+1/3", "1.0/3",
                                      "1/3x", "''",   "3/03x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "run '%s' --shard=%s --root '%s'", plan, bad[i], root);
        refused(root, "--shard must be K/N with whole numbers 1 <= K <= N <= 1000000", args);
    }
}

static void test_shard_inspected_and_no_calibration(void **state)
{
    const char *dir = bl_test_dir(state);
    char plan[BL_RT_PATH], shard[BL_RT_PATH], root[BL_RT_PATH], args[4 * BL_RT_PATH];
    plan_path("shards-block.toml", plan);
    record_of(shard, "run '%s' --shard 2/2 --root '%s/s'", plan, dir);
    char *out, *err;
    snprintf(args, sizeof args, "inspect '%s'", shard);
    assert_int_equal(bl_test_run_cli(args, &out, &err), 0);
    assert_non_null(strstr(out, "\"kind\": \"shard\""));
    assert_non_null(strstr(out, "\"part\": 2, \"parts\": 2"));
    free(out);
    free(err);
    bl_rt_at(root, dir, "records");
    snprintf(args, sizeof args, "run '%s' --calibration '%s' --root '%s'", plan, shard, root);
    refused(root, "a shard record holds no calibrations", args);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        BL_TEST_IN_DIR(test_merge_equals_run_block),
        BL_TEST_IN_DIR(test_merge_equals_run_trial),
        BL_TEST_IN_DIR(test_merge_equals_run_probes),
        BL_TEST_IN_DIR(test_bad_merges),
        BL_TEST_IN_DIR(test_bad_shard_values),
        BL_TEST_IN_DIR(test_shard_inspected_and_no_calibration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
