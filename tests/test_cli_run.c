/* `brainlesslab run` (spec/platform.md §3.2): one line
 * {"record": PATH, "status": ...} on stdout naming a new record whose trial
 * rows do not depend on batch size or thread count; a per-target summary on
 * stderr; exit 0 iff the record is complete; every refused run is one line
 * on stderr, nothing on stdout, the spec's exit code, and no directory
 * created. Crash safety (Ctrl-C, SIGKILL, disk full) is tested in
 * test_cli_records.c. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/run.h"
#include "record_support.h"
#include "support.h"

/* The tiny two-target Delayed Cue profile of record_support.h. */
static const char tiny_plan[] = BL_RT_TINY_PLAN;

/* The default Delayed Cue (horizon 144) with 128 nodes: §4.6 estimates
 * 64·(128² + 128·3 + 12·128) + 145·24·3 + 24·64·128 + 128·3 + 65536
 * = 1 444 424 bytes per trial, more than 1 MiB × 0.75. */
static const char big_plan[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"big\"\n"
    "[[targets]]\n"
    "id = \"cue\"\n"
    "[targets.composition]\n"
    "count = 128\n";

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void write_file(const char *dir, const char *name, const char *fmt, ...)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    bl_rt_fixture *fx = bl_rt_fixture_create("tiny.toml");
    if (!fx)
        return -1;
    write_file(fx->dir, "tiny.toml", tiny_plan, "tiny", 8, "", 8);
    *state = fx;
    return 0;
}

static void assert_one_line(const char *err, const char *expected_start, const char *cmd)
{
    size_t n = strlen(err);
    if (strncmp(err, expected_start, strlen(expected_start)) != 0 || n == 0 ||
        err[n - 1] != '\n' || strchr(err, '\n') != err + n - 1)
        fail_msg("`%s`: expected one line starting with '%s', got:\n%s", cmd, expected_start,
                 err);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The record path of a run's stdout, which must be exactly
 * {"record": "<root>/<id>-<stamp>-<hex>", "status": "<status>"} and one
 * newline. Heap string. */
static char *record_of(const char *out, const char *root, const char *id, const char *status)
{
    char head[4400], tail[64];
    snprintf(head, sizeof head, "{\"record\": \"%s/%s-", root, id);
    snprintf(tail, sizeof tail, "\", \"status\": \"%s\"}\n", status);
    size_t n = strlen(out), hl = strlen(head), tl = strlen(tail);
    /* <stamp>-<hex>: 16 + 1 + 8 characters. */
    if (n != hl + 25 + tl || strncmp(out, head, hl) != 0 || strcmp(out + n - tl, tail) != 0)
        fail_msg("stdout: %s", out);
    return strndup(out + 12, hl - 12 + 25);
}

static char *read_text(const char *dir, const char *rel)
{
    char path[BL_RT_PATH];
    return bl_test_read(bl_rt_at(path, dir, rel), NULL);
}

static bl_json *read_json(const char *dir, const char *rel)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    bl_json *v = NULL;
    OK_E(bl_json_read_file(path, &v, &e_));
    return v;
}

/* trials.csv has no quoted fields: cell `col` of row `row` (0 = first data
 * row) by splitting on CRLF and commas. */
static const char trial_columns[] =
    "block_id,calibration_id,completed_ticks,error,key,neural_frames,normalisation_status,"
    "normalised,raw,scoring_window,status,target_id,task,trial_id,wiring_id,world_seed";
enum { C_BLOCK = 0, C_TICKS = 2, C_ERROR = 3, C_KEY = 4, C_FRAMES = 5, C_STATUS = 10,
       C_TARGET = 11, C_TASK = 12, C_TRIAL = 13, C_WIRING = 14, C_WORLD = 15 };

static void cell(const char *csv, size_t row, size_t col, char *out, size_t size)
{
    const char *p = csv;
    for (size_t r = 0; r <= row; r++) {
        p = strstr(p, "\r\n");
        assert_non_null(p);
        p += 2;
    }
    for (size_t c = 0; c < col; c++) {
        p = strpbrk(p, ",\r");
        assert_true(p && *p == ',');
        p++;
    }
    size_t n = strcspn(p, ",\r");
    assert_true(n < size);
    memcpy(out, p, n);
    out[n] = 0;
}

static size_t csv_rows(const char *csv)
{
    size_t n = 0;
    for (const char *p = csv; (p = strstr(p, "\r\n")) != NULL; p += 2)
        n++;
    return n - 1;
}

static const bl_json *member(const bl_json *obj, const char *key, bl_json_kind kind)
{
    const bl_json *v = bl_json_get(obj, key);
    if (!v)
        fail_msg("missing key '%s'", key);
    if (bl_json_kindof(v) != kind)
        fail_msg("key '%s' has kind %d, expected %d", key, (int)bl_json_kindof(v), (int)kind);
    return v;
}

static const char *string_of(const bl_json *obj, const char *key)
{
    return bl_json_get_string(member(obj, key, BL_JSON_STRING), NULL);
}

static int64_t int_of(const bl_json *obj, const char *key)
{
    return bl_json_get_int(member(obj, key, BL_JSON_INT));
}

static void test_tiny_plan_runs(void **state)
{
    bl_rt_fixture *fx = *state;
    char *out, *err;
    char root[4300];
    /* mkdir -p: the parents of the root are created too. */
    snprintf(root, sizeof root, "%s/nested/records", fx->dir);
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s'", fx->plan, root);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    char *rec = record_of(out, root, "tiny", "complete");
    struct stat sb;
    assert_int_equal(stat(rec, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    bl_json *summary = read_json(rec, "summary/summary.json");
    /* Summaries per target, the reservoir's contrast against its null, and
     * the analytic chance record both targets used. */
    assert_int_equal(bl_json_size(member(summary, "summaries", BL_JSON_ARRAY)), 2);
    assert_int_equal(bl_json_size(member(summary, "contrasts", BL_JSON_ARRAY)), 1);
    bl_json *cals = read_json(rec, "calibration.json");
    assert_int_equal(bl_json_size(member(cals, "calibrations", BL_JSON_ARRAY)), 1);
    bl_json_destroy(cals);

    const bl_json *meta = member(summary, "metadata", BL_JSON_OBJECT);
    assert_string_equal(string_of(meta, "dtype"), "float64");
    assert_int_equal(int_of(meta, "requested_batch_size"), 32);
    assert_int_equal(int_of(meta, "cpu_threads"), 1);
    assert_int_equal(int_of(meta, "recording_estimate_bytes"), 0);
    /* trunc(256 MiB × 0.75) */
    assert_int_equal(int_of(meta, "allocation_budget"), 201326592);
    assert_true(int_of(meta, "peak_rss_bytes") > 0);
    int64_t world_ticks = int_of(meta, "world_ticks");
    int64_t neural_frames = int_of(meta, "neural_frames");
    char totals[200];
    snprintf(totals, sizeof totals,
             "\ntotal: 12 trials, 12 completed, 0 failed, 0 incomplete; %lld world ticks, ",
             (long long)world_ticks);
    const bl_json *caps = member(meta, "batch_capacities", BL_JSON_ARRAY);
    assert_true(bl_json_size(caps) >= 1);
    for (size_t i = 0; i < bl_json_size(caps); i++) {
        assert_int_equal(bl_json_kindof(bl_json_at(caps, i)), BL_JSON_INT);
        int64_t c = bl_json_get_int(bl_json_at(caps, i));
        assert_true(c >= 1 && c <= 32);
    }
    const bl_json *exec = member(meta, "execution", BL_JSON_OBJECT);
    assert_string_equal(string_of(exec, "backend"), "cpu");
    assert_int_equal(int_of(exec, "batch_size"), 32);
    assert_int_equal(int_of(exec, "memory_budget_bytes"), 268435456);
    assert_int_equal(int_of(exec, "recording_budget_bytes"), 33554432);
    assert_string_equal(string_of(exec, "recording"), "summary");
    const bl_json *timings = member(summary, "timings", BL_JSON_OBJECT);
    assert_true(bl_json_get_real(member(timings, "total_seconds", BL_JSON_REAL)) >= 0);

    /* Job order: target-major, then block, then trial (§4.1). The totals
     * are the rows' sums (episodes with delay 1 end after 5 ticks, those
     * with delay 3 after 7). */
    char *trials = read_text(rec, "trials.csv");
    assert_int_equal(strncmp(trials, trial_columns, strlen(trial_columns)), 0);
    assert_int_equal(csv_rows(trials), 12);
    char v[128], w[128];
    for (size_t i = 0; i < 12; i++) {
        cell(trials, i, C_TARGET, v, sizeof v);
        assert_string_equal(v, i < 6 ? "cue" : "null");
        cell(trials, i, C_TASK, v, sizeof v);
        assert_string_equal(v, "delayed_cue");
        cell(trials, i, C_BLOCK, v, sizeof v);
        assert_int_equal(atoi(v), (int)(i % 6 / 3));
        cell(trials, i, C_TRIAL, v, sizeof v);
        assert_int_equal(atoi(v), (int)(i % 3));
        cell(trials, i, C_STATUS, v, sizeof v);
        assert_string_equal(v, "completed");
        cell(trials, i, C_ERROR, v, sizeof v);
        assert_string_equal(v, "");
        cell(trials, i, C_KEY, v, sizeof v);
        assert_string_equal(v, "recall_accuracy");
        cell(trials, i, C_TICKS, v, sizeof v);
        assert_true(atoi(v) == 5 || atoi(v) == 7);
        world_ticks -= atoi(v);
        cell(trials, i, C_FRAMES, v, sizeof v);
        neural_frames -= atoi(v);
        cell(trials, i, C_WIRING, v, sizeof v);
        if (i >= 6)
            assert_string_equal(v, "none");
        else
            assert_int_equal(strlen(v), 64);
        /* The null shares the reservoir's worlds (same pairing key). */
        if (i >= 6) {
            cell(trials, i, C_WORLD, v, sizeof v);
            cell(trials, i - 6, C_WORLD, w, sizeof w);
            assert_string_equal(v, w);
        }
    }
    assert_int_equal(world_ticks, 0);
    assert_int_equal(neural_frames, 0);
    free(trials);
    bl_json_destroy(summary);

    /* The summary: one line per target, one per contrast, then the totals. */
    static const char first[] = "cue: 6 trials, 6 completed, recall_accuracy ";
    assert_int_equal(count_lines(err), 4);
    if (strncmp(err, first, strlen(first)) != 0 ||
        !strstr(err, "(null_adjusted_analytic)\n") ||
        !strstr(err, "\nnull: 6 trials, 6 completed, recall_accuracy ") ||
        !strstr(err, "\ncue - null: recall_accuracy ") || !strstr(err, totals))
        fail_msg("summary:\n%s", err);
    free(out);
    free(err);

    /* Running again into the same root makes a second, separate record. */
    assert_int_equal(bl_rt_cli(&out, &err, "run '%s' --root '%s'", fx->plan, root), 0);
    char *second = record_of(out, root, "tiny", "complete");
    assert_string_not_equal(rec, second);
    free(second);
    free(rec);
    free(out);
    free(err);
}

/* DESIGN.md rule 1: batch size and thread count never change a row. */
static void test_rows_do_not_depend_on_batch_or_threads(void **state)
{
    bl_rt_fixture *fx = *state;
    static const char *const variants[] = {
        "--batch-size 1 --cpu-threads 1",
        "--batch-size 3 --cpu-threads 1",
        "--batch-size 3 --cpu-threads 2",
        "--batch-size 1 --cpu-threads 2",
        "--batch-size 5 --cpu-threads 3",
    };
    char *reference = NULL, *reference_seeds = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        char *out, *err;
        int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s' %s", fx->plan, fx->root, variants[i]);
        if (rc != 0)
            fail_msg("%s: exit %d: %s", variants[i], rc, err);
        char *rec = record_of(out, fx->root, "tiny", "complete");
        bl_json *summary = read_json(rec, "summary/summary.json");
        const bl_json *meta = member(summary, "metadata", BL_JSON_OBJECT);
        int64_t batch = strtoll(variants[i] + strlen("--batch-size "), NULL, 10);
        assert_int_equal(int_of(meta, "requested_batch_size"), batch);
        const bl_json *caps = member(meta, "batch_capacities", BL_JSON_ARRAY);
        for (size_t c = 0; c < bl_json_size(caps); c++)
            assert_true(bl_json_get_int(bl_json_at(caps, c)) <= batch);
        bl_json_destroy(summary);
        /* Whole files, byte for byte. */
        char *rows = read_text(rec, "trials.csv"), *seeds = read_text(rec, "seeds.csv");
        if (!reference) {
            reference = rows;
            reference_seeds = seeds;
        } else {
            if (strcmp(rows, reference) != 0 || strcmp(seeds, reference_seeds) != 0)
                fail_msg("%s changed the trial rows", variants[i]);
            free(rows);
            free(seeds);
        }
        free(rec);
        free(out);
        free(err);
    }
    free(reference);
    free(reference_seeds);
}

/* A run whose trials fail still writes its record (with FAILED, no DONE),
 * prints it with status "failed" and its summary, and exits 1 (§3.3): an
 * input gain of 1e308 overflows the reservoir's input, so its trials latch
 * as failed (DESIGN.md rule 3); the null's never do. */
static void test_failed_trials_exit_1(void **state)
{
    bl_rt_fixture *fx = *state;
    write_file(fx->dir, "fail.toml", tiny_plan, "fail", 8, "input_gain = 1e308\n", 8);
    char plan[4300], marker[4400];
    snprintf(plan, sizeof plan, "%s/fail.toml", fx->dir);
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s'", plan, fx->root);
    if (rc != 1)
        fail_msg("exit %d, stderr:\n%s", rc, err);
    char *rec = record_of(out, fx->root, "fail", "failed");
    snprintf(marker, sizeof marker, "%s/DONE", rec);
    assert_false(bl_rt_exists(marker));
    snprintf(marker, sizeof marker, "%s/FAILED", rec);
    assert_true(bl_rt_exists(marker));
    char *trials = read_text(rec, "trials.csv");
    assert_int_equal(csv_rows(trials), 12);
    size_t failed = 0;
    char v[128];
    for (size_t i = 0; i < 12; i++) {
        cell(trials, i, C_STATUS, v, sizeof v);
        bool is_failed = strcmp(v, "failed") == 0;
        cell(trials, i, C_ERROR, v, sizeof v);
        if (!is_failed) {
            assert_string_equal(v, "");
            continue;
        }
        failed++;
        assert_true(i < 6); /* the null never fails */
        assert_string_equal(v, "non-finite trajectory");
    }
    assert_true(failed > 0);
    free(trials);
    free(rec);
    /* The summary, no error line: the rows say what happened. */
    char totals[200];
    snprintf(totals, sizeof totals, "\ntotal: 12 trials, %zu completed, %zu failed, ",
             12 - failed, failed);
    assert_int_equal(count_lines(err), 4); /* two targets, one (failed) pair, totals */
    if (!strstr(err, totals) || strstr(err, "brainlesslab:"))
        fail_msg("stderr:\n%s", err);
    free(out);
    free(err);
}

/* Each refused run: the exit code, one stderr line (a usage error: usage
 * text and one error line), nothing on stdout, and no records root. */
static void test_refusals_create_nothing(void **state)
{
    bl_rt_fixture *fx = *state;
    char missing[4300], big[4300];
    snprintf(missing, sizeof missing, "%s/missing.toml", fx->dir);
    write_file(fx->dir, "big.toml", "%s", big_plan);
    snprintf(big, sizeof big, "%s/big.toml", fx->dir);
    const struct {
        const char *plan, *options;
        int rc;
        const char *line; /* the whole line, or its start when ending in "…" */
    } cases[] = {
        {missing, "", 1, "brainlesslab: FileNotFoundError: "},
        {fx->dir, "", 1, "brainlesslab: IsADirectoryError: "},
        {fx->plan, "--backend metal", 2,
         "brainlesslab run: error: argument --backend: invalid choice: 'metal' (choose from "
         "'cpu')\n"},
        {fx->plan, "--backend cuda", 2,
         "brainlesslab run: error: argument --backend: invalid choice: 'cuda' (choose from "
         "'cpu')\n"},
        {fx->plan, "--batch-size x", 2,
         "brainlesslab run: error: argument --batch-size: invalid int value: 'x'\n"},
        {fx->plan, "--batch-size 2.5", 2,
         "brainlesslab run: error: argument --batch-size: invalid int value: '2.5'\n"},
        {fx->plan, "--batch-size 0", 1,
         "brainlesslab: ValueError: batch_size must be an integer >= 1\n"},
        {fx->plan, "--batch-size -3", 1,
         "brainlesslab: ValueError: batch_size must be an integer >= 1\n"},
        {fx->plan, "--cpu-threads 0", 1,
         "brainlesslab: ValueError: cpu_threads must be an integer >= 1\n"},
        {fx->plan, "--memory-budget-mib 0", 1,
         "brainlesslab: ValueError: memory_budget_bytes must be an integer >= 1\n"},
        {fx->plan, "--memory-budget-mib -1", 1,
         "brainlesslab: ValueError: memory_budget_bytes must be an integer >= 1\n"},
        {fx->plan, "--memory-budget-mib -9223372036854775807", 1,
         "brainlesslab: ValueError: memory_budget_bytes must be an integer >= 1\n"},
        {fx->plan, "--recording-budget-mib -1", 1,
         "brainlesslab: ValueError: recording_budget_bytes must be an integer >= 0\n"},
        /* MiB × 1048576 beyond int64 is refused, not wrapped. */
        {fx->plan, "--memory-budget-mib 8796093022208", 1,
         "brainlesslab: ValueError: --memory-budget-mib 8796093022208 is too large: the "
         "budget must fit in 64-bit bytes (at most 8796093022207 MiB)\n"},
        {fx->plan, "--recording-budget-mib 9223372036854775807", 1,
         "brainlesslab: ValueError: --recording-budget-mib 9223372036854775807 is too large: "
         "the budget must fit in 64-bit bytes (at most 8796093022207 MiB)\n"},
        {big, "--memory-budget-mib 1", 1,
         "brainlesslab: MemoryError: one trajectory needs at least 1444424 managed bytes; "
         "allocation budget is 786432; increase memory_budget_bytes explicitly\n"},
        /* The recording channels' preflight (§4.5): a null cannot record
         * probe events, and a replay must fit its budget. */
        {fx->plan, "--recording probe_events", 1,
         "brainlesslab: ValueError: probe_events requires a reservoir and a single binary probe "
         "episode\n"},
        {fx->plan, "--recording replay --recording-budget-mib 0", 1,
         "brainlesslab: MemoryError: recording needs an estimated "},
        /* A calibration directory must be a complete record. */
        {fx->plan, "--calibration /", 1,
         "brainlesslab: FileNotFoundError: /record.toml: No such file or directory\n"},
        {fx->plan, "--calibration /proc/self", 1, "brainlesslab: ValueError: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[12288];
        snprintf(cmd, sizeof cmd, "'%s' --root '%s' %s", cases[i].plan, fx->root,
                 cases[i].options);
        char *out, *err;
        int rc = bl_rt_cli(&out, &err, "run %s", cmd);
        if (rc != cases[i].rc)
            fail_msg("`run %s`: exit %d, expected %d; stderr:\n%s", cmd, rc, cases[i].rc, err);
        assert_string_equal(out, "");
        size_t len = strlen(cases[i].line);
        bool whole = cases[i].line[len - 1] == '\n';
        if (cases[i].rc == 2) {
            const char *last = err + strlen(err) - 1;
            while (last > err && last[-1] != '\n')
                last--;
            assert_true(strncmp(err, "usage: brainlesslab run [-h]", 28) == 0);
            if (strcmp(last, cases[i].line) != 0)
                fail_msg("`run %s`: stderr:\n%s", cmd, err);
        } else if (whole) {
            if (strcmp(err, cases[i].line) != 0)
                fail_msg("`run %s`: stderr:\n%s", cmd, err);
        } else {
            assert_one_line(err, cases[i].line, cmd);
        }
        if (bl_rt_exists(fx->root))
            fail_msg("`run %s` created the records root", cmd);
        free(out);
        free(err);
    }
}

static void test_plan_id_must_be_portable(void **state)
{
    bl_rt_fixture *fx = *state;
    static const char *const ids[] = {"a/b", "..", ".", "a\\\\b", "tiny/"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        write_file(fx->dir, "id.toml", tiny_plan, ids[i], 8, "", 8);
        char plan[4300];
        snprintf(plan, sizeof plan, "%s/id.toml", fx->dir);
        char *out, *err;
        assert_int_equal(bl_rt_cli(&out, &err, "run '%s' --root '%s'", plan, fx->root), 1);
        assert_string_equal(out, "");
        assert_string_equal(err, "brainlesslab: ValueError: plan id must be a portable "
                                 "record-name component\n");
        assert_false(bl_rt_exists(fx->root));
        free(out);
        free(err);
    }
    /* Dots and dashes inside a name are fine. */
    write_file(fx->dir, "id.toml", tiny_plan, "a.b-c..d", 8, "", 8);
    char plan[4300];
    snprintf(plan, sizeof plan, "%s/id.toml", fx->dir);
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s'", plan, fx->root);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(out);
    free(err);
}

/* A root that cannot be a directory fails for real, also as root (CI): a
 * regular file in the way, or a path in /proc, where mkdir never works. */
static void test_bad_root(void **state)
{
    bl_rt_fixture *fx = *state;
    char file[4300], under[4400], proc[200];
    snprintf(file, sizeof file, "%s/file", fx->dir);
    write_file(fx->dir, "file", "not a directory\n");
    snprintf(under, sizeof under, "%s/file/records", fx->dir);
    snprintf(proc, sizeof proc, "/proc/brainlesslab-test-%ld/records", (long)getpid());
    const struct {
        const char *root, *line;
    } cases[] = {
        {file, "brainlesslab: FileExistsError: "},
        {under, "brainlesslab: FileExistsError: "},
        {proc, "brainlesslab: FileNotFoundError: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s'", fx->plan, cases[i].root);
        if (rc != 1)
            fail_msg("--root %s: exit %d: %s", cases[i].root, rc, err);
        assert_string_equal(out, "");
        assert_one_line(err, cases[i].line, cases[i].root);
        free(out);
        free(err);
    }
    struct stat sb;
    assert_int_equal(stat(file, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_false(bl_rt_exists(proc));

    /* A failure deep down removes the parents this run created: fresh/a is
     * creatable, a 300-byte name below it is not (ENAMETOOLONG). */
    char fresh[4300], toolong[4700];
    snprintf(fresh, sizeof fresh, "%s/fresh", fx->dir);
    snprintf(toolong, sizeof toolong, "%s/a/%0300d", fresh, 0);
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "run '%s' --root '%s'", fx->plan, toolong), 1);
    assert_string_equal(out, "");
    assert_one_line(err, "brainlesslab: OSError: ", toolong);
    assert_non_null(strstr(err, "File name too long"));
    free(out);
    free(err);
    assert_false(bl_rt_exists(fresh));
}

/* Plans whose count products do not fit the engine's integers (issue 15):
 * `check` and `run` refuse them with one ValueError line and exit 1, and
 * `run` creates no record; 200000 x 1000 trials resolve, so `check`
 * accepts them, but their rows cannot fit 256 MiB and `run` refuses them
 * with a MemoryError naming --memory-budget-mib before the record exists. */
static void test_count_overflows_create_nothing(void **state)
{
    bl_rt_fixture *fx = *state;
    static const char plan_fmt[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"counts\"\n"
        "diagnostic = true\n[evaluation]\n%s\n[[targets]]\nid = \"t\"\n%s\n"
        "[targets.composition]\ncount = %s\n[targets.composition.task]\nkind = \"%s\"\n";
    static const char null[] = "controller = \"reference_null\"";
    static const char too_many[] =
        "brainlesslab: ValueError: %s: the plan has too many trials: targets x blocks x "
        "trials_per_block (%s) must be at most 9223372036854775807\n";
    const struct {
        const char *evaluation, *controller, *count, *task, *line, *arg;
        int check_rc;
    } cases[] = {
        {"blocks = 9223372036854775807\ntrials_per_block = 9223372036854775807", null, "1",
         "tracking", too_many, "1 x 9223372036854775807 x 9223372036854775807", 1},
        {"blocks = 3\ntrials_per_block = 6148914691236517206", null, "1", "tracking", too_many,
         "1 x 3 x 6148914691236517206", 1},
        {"horizon = 3000000000", null, "1", "tracking",
         "brainlesslab: ValueError: %s: targets[0]: horizon 3000000000 is too large: horizon x neural frames per "
         "tick (3000000000 x 1) must be at most 2147483647, the range of the engine's tick and "
         "frame counters\n", "", 1},
        {"horizon = 100000000", null, "1", "cartpole_plank_easy",
         "brainlesslab: ValueError: %s: targets[0]: horizon 100000000 is too large: horizon x neural frames per "
         "tick (100000000 x 24) must be at most 2147483647, the range of the engine's tick and "
         "frame counters\n", "", 1},
        {"horizon = 10", "", "4611686018427387904", "tracking",
         "brainlesslab: ValueError: %s: targets[0]: count 4611686018427387904 is too large: the reservoir's "
         "memory estimate 64 x (count^2 + count x n_inputs + 12 x count) must fit in 64-bit "
         "bytes\n", "", 1},
        {"blocks = 200000\ntrials_per_block = 1000", null, "1", "tracking",
         "brainlesslab: MemoryError: the 200000000 trials of this plan need an estimated %s "
         "bytes for results until the record is written (%s bytes per trial); memory budget is "
         "268435456 bytes; raise --memory-budget-mib or run fewer trials\n", "", 0},
    };
    /* A trial's row and job-list entries: see test_run.c. */
    const long long per = (long long)(sizeof(bl_trial_result) + 2 * sizeof(size_t));
    char plan[4300], line[1024], need[32], per_text[32];
    snprintf(plan, sizeof plan, "%s/counts.toml", fx->dir);
    snprintf(need, sizeof need, "%lld", per * 200000000);
    snprintf(per_text, sizeof per_text, "%lld", per);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_file(fx->dir, "counts.toml", plan_fmt, cases[i].evaluation, cases[i].controller,
                   cases[i].count, cases[i].task);
        if (cases[i].check_rc == 0)
            snprintf(line, sizeof line, cases[i].line, need, per_text);
        else
            snprintf(line, sizeof line, cases[i].line, plan, cases[i].arg);
        char *out, *err;
        int rc = bl_rt_cli(&out, &err, "check '%s'", plan);
        if (rc != cases[i].check_rc)
            fail_msg("case %zu: check exit %d; stderr:\n%s", i, rc, err);
        if (rc == 0) {
            assert_string_equal(err, "");
        } else {
            assert_string_equal(out, "");
            assert_string_equal(err, line);
        }
        free(out);
        free(err);
        rc = bl_rt_cli(&out, &err, "run '%s' --root '%s'", plan, fx->root);
        if (rc != 1)
            fail_msg("case %zu: run exit %d; stderr:\n%s", i, rc, err);
        assert_string_equal(out, "");
        assert_string_equal(err, line);
        if (bl_rt_exists(fx->root))
            fail_msg("case %zu: run created the records root", i);
        free(out);
        free(err);
    }
}

/* Inputs that once stalled or flooded `run`: a calibration that is a FIFO
 * (open() waited forever for a writer), /dev/zero (read until memory ran
 * out), a sparse file far over the cap, and a plan from /dev/zero. Each
 * fails at once with one line and exit 1, and creates no record. */
static void test_unreadable_inputs_fail_promptly(void **state)
{
    bl_rt_fixture *fx = *state;
    char fifo[4300], sparse[4300];
    snprintf(fifo, sizeof fifo, "%s/calibration.fifo", fx->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(sparse, sizeof sparse, "%s/calibration.json", fx->dir);
    bl_test_make_sparse(sparse, (int64_t)1 << 40);
    char fifo_line[4400], sparse_line[4400];
    snprintf(fifo_line, sizeof fifo_line,
             "brainlesslab: OSError: %s: is a FIFO, not a regular file\n", fifo);
    snprintf(sparse_line, sizeof sparse_line,
             "brainlesslab: ValueError: %s: calibration file is larger than 64 MiB\n", sparse);
    const struct {
        const char *plan, *calibration, *line;
    } cases[] = {
        {fx->plan, fifo, fifo_line},
        {fx->plan, "/dev/zero",
         "brainlesslab: OSError: /dev/zero: is a character device, not a regular file\n"},
        {fx->plan, sparse, sparse_line},
        {"/dev/zero", NULL, "brainlesslab: ValueError: /dev/zero: plan file is larger than 16 MiB\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[12288];
        int n = snprintf(cmd, sizeof cmd, "run '%s' --root '%s'", cases[i].plan, fx->root);
        if (cases[i].calibration)
            snprintf(cmd + n, sizeof cmd - (size_t)n, " --calibration '%s'", cases[i].calibration);
        char *out, *err;
        int rc = bl_test_run_cli_within(30, cmd, &out, &err);
        if (rc != 1 || strcmp(err, cases[i].line) != 0)
            fail_msg("`%s`: exit %d, stderr:\n%s\nexpected:\n%s", cmd, rc, err, cases[i].line);
        assert_string_equal(out, "");
        if (bl_rt_exists(fx->root))
            fail_msg("`%s` created the records root", cmd);
        free(out);
        free(err);
    }
}

/* Plans may still come from a pipe (`run <(cat plan.toml)`), and from a
 * FIFO whose writer arrives after the program has started: a plan waits
 * for its writer as any Unix reader does (docs/plans.md). */
static void test_plan_from_pipe_or_fifo(void **state)
{
    bl_rt_fixture *fx = *state;
    char *text = bl_test_read(fx->plan, NULL);
    size_t len = strlen(text);
    /* A pipe, as a process substitution gives one: written and closed
     * before the program reads it (a tiny plan fits the pipe's buffer). */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_true(write(fds[1], text, len) == (ssize_t)len);
    close(fds[1]);
    char cmd[8800];
    snprintf(cmd, sizeof cmd, "run /dev/fd/%d --root '%s'", fds[0], fx->root);
    char *out, *err;
    int rc = bl_test_run_cli_within(120, cmd, &out, &err);
    close(fds[0]);
    if (rc != 0)
        fail_msg("`%s`: exit %d, stderr:\n%s", cmd, rc, err);
    free(record_of(out, fx->root, "tiny", "complete"));
    free(out);
    free(err);
    /* A FIFO nobody has opened yet: the writer comes 200 ms later. */
    char fifo[4300];
    snprintf(fifo, sizeof fifo, "%s/plan.fifo", fx->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct timespec pause = {0, 200 * 1000 * 1000};
        nanosleep(&pause, NULL);
        int w = open(fifo, O_WRONLY);
        _exit(w >= 0 && write(w, text, len) == (ssize_t)len ? 0 : 1);
    }
    snprintf(cmd, sizeof cmd, "run '%s' --root '%s'", fifo, fx->root);
    rc = bl_test_run_cli_within(120, cmd, &out, &err);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (rc != 0)
        fail_msg("`%s`: exit %d, stderr:\n%s", cmd, rc, err);
    free(record_of(out, fx->root, "tiny", "complete"));
    free(out);
    free(err);
    free(text);
}

/* Target ids are the user's text: in the summary their control characters
 * are escaped (a bell must not ring, an escape sequence must not clear the
 * screen), printable non-ASCII stays as it is. */
static void test_summary_escapes_target_ids(void **state)
{
    bl_rt_fixture *fx = *state;
    char text[4096], plan[4300];
    snprintf(text, sizeof text, tiny_plan, "ctl", 8, "", 8);
    /* The reservoir target's id, "cue" in the tiny plan, becomes
     * "cue<BEL><NEL><ESC>[2Jé" (TOML escapes), its null "null<TAB>". */
    static const char from[] = "id = \"cue\"\n", to[] = "id = \"cue\\u0007\\u0085\\u001b[2J\xc3\xa9\"\n";
    static const char from2[] = "id = \"null\"\n", to2[] = "id = \"null\\t\"\n";
    char *at = strstr(text, from), *at2 = strstr(text, from2);
    assert_true(at && at2 && at < at2);
    char edited[4300];
    snprintf(edited, sizeof edited, "%.*s%s%.*s%s%s", (int)(at - text), text, to,
             (int)(at2 - at - strlen(from)), at + strlen(from), to2, at2 + strlen(from2));
    write_file(fx->dir, "ctl.toml", "%s", edited);
    snprintf(plan, sizeof plan, "%s/ctl.toml", fx->dir);
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s'", plan, fx->root);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(record_of(out, fx->root, "ctl", "complete"));
    static const char first[] = "cue\\x07\\x85\\x1b[2J\xc3\xa9: 6 trials, 6 completed, ";
    if (strncmp(err, first, strlen(first)) != 0 ||
        !strstr(err, "\nnull\\t: 6 trials, 6 completed, ") ||
        !strstr(err, "\ncue\\x07\\x85\\x1b[2J\xc3\xa9 - null\\t: recall_accuracy "))
        fail_msg("summary:\n%s", err);
    /* Nothing raw is left: no control byte but the line ends, no C1. */
    for (const unsigned char *p = (const unsigned char *)err; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0xa0))
            fail_msg("raw control byte 0x%02x in the summary:\n%s", *p, err);
    free(out);
    free(err);
}

int main(void)
{
    /* Each test gets its own directory, so no test sees another's root. */
#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, bl_rt_teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_tiny_plan_runs),
        TEST(test_rows_do_not_depend_on_batch_or_threads),
        TEST(test_failed_trials_exit_1),
        TEST(test_refusals_create_nothing),
        TEST(test_plan_id_must_be_portable),
        TEST(test_bad_root),
        TEST(test_count_overflows_create_nothing),
        TEST(test_unreadable_inputs_fail_promptly),
        TEST(test_plan_from_pipe_or_fifo),
        TEST(test_summary_escapes_target_ids),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
