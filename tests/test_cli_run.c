/* `brainlesslab run` (spec/platform.md §3.2, adapted until records exist):
 * one JSON document on stdout whose trial rows do not depend on batch size
 * or thread count; a per-target summary on stderr; every refused run is one
 * line on stderr, nothing on stdout, the spec's exit code, and no directory
 * created; Ctrl-C during execution exits 130. */
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
#include "support.h"

/* A small Delayed Cue profile (horizon 2 + 3 + 2 = 7 ticks; 5 for a trial
 * that draws delay 1) with a reservoir target and a reference_null target on
 * the same worlds: 2 blocks × 3 trials each, 12 rows, so batch sizes 1 and 3
 * cut it differently. Arguments: id, count, extra composition lines of the
 * reservoir, the null's count. */
static const char tiny_plan[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"%s\"\n"
    "operation = \"profile\"\n"
    "\n"
    "[evaluation]\n"
    "blocks = 2\n"
    "trials_per_block = 3\n"
    "root_seed = 7\n"
    "\n"
    "[[targets]]\n"
    "id = \"cue\"\n"
    "[targets.composition]\n"
    "count = %d\n"
    "%s" /* more composition keys of the reservoir target */
    "[targets.composition.node]\n"
    "kind = \"falandays\"\n"
    "[targets.composition.task]\n"
    "kind = \"delayed_cue\"\n"
    "[targets.composition.task.options]\n"
    "cue_ticks = 2\n"
    "delays = [1, 3]\n"
    "response_ticks = 2\n"
    "\n"
    "[[targets]]\n"
    "id = \"null\"\n"
    "controller = \"reference_null\"\n"
    "[targets.composition]\n"
    "count = %d\n"
    "[targets.composition.task]\n"
    "kind = \"delayed_cue\"\n"
    "[targets.composition.task.options]\n"
    "cue_ticks = 2\n"
    "delays = [1, 3]\n"
    "response_ticks = 2\n";

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

/* One long trial (Tracking, 10^7 ticks) to interrupt. */
static const char long_plan[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"long\"\n"
    "[evaluation]\n"
    "horizon = 10000000\n"
    "[[targets]]\n"
    "id = \"tracking\"\n"
    "[targets.composition]\n"
    "count = 64\n"
    "[targets.composition.task]\n"
    "kind = \"tracking\"\n";

typedef struct fixture {
    char *dir;
    char tiny[4200];  /* the tiny plan, id "tiny" */
    char root[4200];  /* <dir>/records, never created by a refused run */
} fixture;

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
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    fx->dir = bl_test_mkdtemp();
    /* Arguments are single-quoted for the shell. */
    if (strchr(fx->dir, '\'')) {
        free(fx->dir);
        free(fx);
        return -1;
    }
    snprintf(fx->tiny, sizeof fx->tiny, "%s/tiny.toml", fx->dir);
    snprintf(fx->root, sizeof fx->root, "%s/records", fx->dir);
    write_file(fx->dir, "tiny.toml", tiny_plan, "tiny", 8, "", 8);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    bl_test_rmtree(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

/* Runs `brainlesslab run <args>` (args formatted, already shell-quoted). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int run(char **out, char **err, const char *fmt, ...)
{
    char args[12288] = "run ";
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(args + 4, sizeof args - 4, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof args - 4);
    return bl_test_run_cli(args, out, err);
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
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

static bl_json *parse_output(const char *out)
{
    size_t n = strlen(out);
    assert_true(n > 2 && out[n - 1] == '\n');
    assert_null(memchr(out, '\n', n - 1)); /* one line */
    bl_json *doc = NULL;
    BL_CHECK(bl_json_parse(out, n, "run output", &doc, NULL));
    assert_int_equal(bl_json_kindof(doc), BL_JSON_OBJECT);
    return doc;
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

/* The canonical text of the "trials" array of a run's stdout. */
static char *trials_text(const char *out)
{
    bl_json *doc = parse_output(out);
    char *text = NULL;
    size_t len;
    BL_CHECK(bl_json_canonical(member(doc, "trials", BL_JSON_ARRAY), &text, &len, NULL));
    bl_json_free(doc);
    return text;
}

static void test_tiny_plan_runs(void **state)
{
    fixture *fx = *state;
    char *out, *err;
    char root[4300];
    /* mkdir -p: the parents of the root are created too. */
    snprintf(root, sizeof root, "%s/nested/records", fx->dir);
    int rc = run(&out, &err, "'%s' --root '%s'", fx->tiny, root);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    struct stat sb;
    assert_int_equal(stat(root, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    bl_json *doc = parse_output(out);
    assert_int_equal(bl_json_size(doc), 8);
    /* Summaries per target, the reservoir's contrast against its null, and
     * the analytic chance record both targets used. */
    assert_int_equal(bl_json_size(member(doc, "summaries", BL_JSON_ARRAY)), 2);
    assert_int_equal(bl_json_size(member(doc, "contrasts", BL_JSON_ARRAY)), 1);
    assert_int_equal(bl_json_size(member(doc, "calibrations", BL_JSON_ARRAY)), 1);
    assert_int_equal(strlen(string_of(doc, "contract_hash")), 64);
    assert_string_equal(string_of(doc, "plan_id"), "tiny");

    const bl_json *meta = member(doc, "metadata", BL_JSON_OBJECT);
    assert_string_equal(string_of(meta, "dtype"), "float64");
    assert_int_equal(int_of(meta, "requested_batch_size"), 32);
    assert_int_equal(int_of(meta, "cpu_threads"), 1);
    assert_int_equal(int_of(meta, "recording_estimate_bytes"), 0);
    /* trunc(256 MiB × 0.75) */
    assert_int_equal(int_of(meta, "allocation_budget"), 201326592);
    assert_true(int_of(meta, "peak_rss_bytes") > 0);
    /* The totals are the rows' sums (episodes with delay 1 end after 5
     * ticks, those with delay 3 after 7). */
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

    const bl_json *timings = member(doc, "timings", BL_JSON_OBJECT);
    assert_true(bl_json_get_real(member(timings, "preflight_seconds", BL_JSON_REAL)) >= 0);
    assert_true(bl_json_get_real(member(timings, "execute_seconds", BL_JSON_REAL)) >= 0);

    /* Job order: target-major, then block, then trial (§4.1). */
    const bl_json *trials = member(doc, "trials", BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(trials), 12);
    static const char *const fields[] = {
        "target_id", "task",     "block_id",  "trial_id", "outcome", "status",
        "completed_ticks", "neural_frames", "world_seed", "wiring_id", "seeds", "error",
    };
    for (size_t i = 0; i < 12; i++) {
        const bl_json *row = bl_json_at(trials, i);
        assert_int_equal(bl_json_kindof(row), BL_JSON_OBJECT);
        assert_int_equal(bl_json_size(row), sizeof fields / sizeof *fields);
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            if (!bl_json_get(row, fields[f]))
                fail_msg("trial %zu lacks '%s'", i, fields[f]);
        assert_string_equal(string_of(row, "target_id"), i < 6 ? "cue" : "null");
        assert_string_equal(string_of(row, "task"), "delayed_cue");
        assert_int_equal(int_of(row, "block_id"), (int64_t)(i % 6 / 3));
        assert_int_equal(int_of(row, "trial_id"), (int64_t)(i % 3));
        assert_string_equal(string_of(row, "status"), "completed");
        int64_t ticks = int_of(row, "completed_ticks");
        assert_true(ticks == 5 || ticks == 7);
        world_ticks -= int_of(row, "completed_ticks");
        neural_frames -= int_of(row, "neural_frames");
        assert_int_equal(bl_json_kindof(bl_json_get(row, "error")), BL_JSON_NULL);
        const bl_json *outcome = member(row, "outcome", BL_JSON_OBJECT);
        assert_string_equal(string_of(outcome, "key"), "recall_accuracy");
        if (i >= 6)
            assert_string_equal(string_of(row, "wiring_id"), "none");
        else
            assert_int_equal(strlen(string_of(row, "wiring_id")), 64);
        /* The null shares the reservoir's worlds (same pairing key). */
        if (i >= 6)
            assert_string_equal(string_of(row, "world_seed"),
                                string_of(bl_json_at(trials, i - 6), "world_seed"));
    }
    assert_int_equal(world_ticks, 0);
    assert_int_equal(neural_frames, 0);
    bl_json_free(doc);

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

    /* Running again into the same root is fine (it exists already). */
    assert_int_equal(run(&out, &err, "'%s' --root '%s'", fx->tiny, root), 0);
    free(out);
    free(err);
}

/* DESIGN.md rule 1: batch size and thread count never change a row. */
static void test_rows_do_not_depend_on_batch_or_threads(void **state)
{
    fixture *fx = *state;
    static const char *const variants[] = {
        "--batch-size 1 --cpu-threads 1",
        "--batch-size 3 --cpu-threads 1",
        "--batch-size 3 --cpu-threads 2",
        "--batch-size 1 --cpu-threads 2",
        "--batch-size 5 --cpu-threads 3",
    };
    char *reference = NULL;
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        char *out, *err;
        int rc = run(&out, &err, "'%s' --root '%s' %s", fx->tiny, fx->root, variants[i]);
        if (rc != 0)
            fail_msg("%s: exit %d: %s", variants[i], rc, err);
        bl_json *doc = parse_output(out);
        const bl_json *meta = member(doc, "metadata", BL_JSON_OBJECT);
        int64_t batch = strtoll(variants[i] + strlen("--batch-size "), NULL, 10);
        assert_int_equal(int_of(meta, "requested_batch_size"), batch);
        const bl_json *caps = member(meta, "batch_capacities", BL_JSON_ARRAY);
        for (size_t c = 0; c < bl_json_size(caps); c++)
            assert_true(bl_json_get_int(bl_json_at(caps, c)) <= batch);
        bl_json_free(doc);
        char *rows = trials_text(out);
        if (!reference)
            reference = rows;
        else {
            if (strcmp(rows, reference) != 0)
                fail_msg("%s changed the trial rows", variants[i]);
            bl_free(rows);
        }
        free(out);
        free(err);
    }
    bl_free(reference);
}

/* A run whose trials fail still prints its JSON and summary, and exits 1
 * (§3.3): an input gain of 1e308 overflows the reservoir's input, so its
 * trials latch as failed (DESIGN.md rule 3); the null's never do. */
static void test_failed_trials_exit_1(void **state)
{
    fixture *fx = *state;
    write_file(fx->dir, "fail.toml", tiny_plan, "fail", 8, "input_gain = 1e308\n", 8);
    char plan[4300];
    snprintf(plan, sizeof plan, "%s/fail.toml", fx->dir);
    char *out, *err;
    int rc = run(&out, &err, "'%s' --root '%s'", plan, fx->root);
    if (rc != 1)
        fail_msg("exit %d, stderr:\n%s", rc, err);
    bl_json *doc = parse_output(out);
    const bl_json *trials = member(doc, "trials", BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(trials), 12);
    size_t failed = 0;
    for (size_t i = 0; i < 12; i++) {
        const bl_json *row = bl_json_at(trials, i);
        if (strcmp(string_of(row, "status"), "failed") != 0) {
            assert_int_equal(bl_json_kindof(bl_json_get(row, "error")), BL_JSON_NULL);
            continue;
        }
        failed++;
        assert_true(i < 6); /* the null never fails */
        assert_string_equal(string_of(row, "error"), "non-finite trajectory");
    }
    assert_true(failed > 0);
    bl_json_free(doc);
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
    fixture *fx = *state;
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
        {fx->tiny, "--backend metal", 2,
         "brainlesslab run: error: argument --backend: invalid choice: 'metal' (choose from "
         "'cpu')\n"},
        {fx->tiny, "--backend cuda", 2,
         "brainlesslab run: error: argument --backend: invalid choice: 'cuda' (choose from "
         "'cpu')\n"},
        {fx->tiny, "--batch-size x", 2,
         "brainlesslab run: error: argument --batch-size: invalid int value: 'x'\n"},
        {fx->tiny, "--batch-size 2.5", 2,
         "brainlesslab run: error: argument --batch-size: invalid int value: '2.5'\n"},
        {fx->tiny, "--batch-size 0", 1,
         "brainlesslab: ValueError: batch_size must be an integer >= 1\n"},
        {fx->tiny, "--batch-size -3", 1,
         "brainlesslab: ValueError: batch_size must be an integer >= 1\n"},
        {fx->tiny, "--cpu-threads 0", 1,
         "brainlesslab: ValueError: cpu_threads must be an integer >= 1\n"},
        {fx->tiny, "--memory-budget-mib 0", 1,
         "brainlesslab: ValueError: memory_budget_bytes must be an integer >= 1\n"},
        {fx->tiny, "--memory-budget-mib -1", 1,
         "brainlesslab: ValueError: memory_budget_bytes must be an integer >= 1\n"},
        {fx->tiny, "--memory-budget-mib -9223372036854775807", 1,
         "brainlesslab: ValueError: memory_budget_bytes must be an integer >= 1\n"},
        {fx->tiny, "--recording-budget-mib -1", 1,
         "brainlesslab: ValueError: recording_budget_bytes must be an integer >= 0\n"},
        /* MiB × 1048576 beyond int64 is refused, not wrapped. */
        {fx->tiny, "--memory-budget-mib 8796093022208", 1,
         "brainlesslab: ValueError: --memory-budget-mib 8796093022208 is too large: the "
         "budget must fit in 64-bit bytes (at most 8796093022207 MiB)\n"},
        {fx->tiny, "--recording-budget-mib 9223372036854775807", 1,
         "brainlesslab: ValueError: --recording-budget-mib 9223372036854775807 is too large: "
         "the budget must fit in 64-bit bytes (at most 8796093022207 MiB)\n"},
        {big, "--memory-budget-mib 1", 1,
         "brainlesslab: MemoryError: one trajectory needs at least 1444424 managed bytes; "
         "allocation budget is 786432; increase memory_budget_bytes explicitly\n"},
        {fx->tiny, "--recording probe_events", 1,
         "brainlesslab: RuntimeError: --recording probe_events is not implemented in this "
         "build yet\n"},
        {fx->tiny, "--recording replay", 1,
         "brainlesslab: RuntimeError: --recording replay is not implemented in this build "
         "yet\n"},
        {fx->tiny, "--calibration /", 1,
         "brainlesslab: RuntimeError: /: calibration record directories are not readable in "
         "this build yet; pass the calibration JSON file\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cmd[12288];
        snprintf(cmd, sizeof cmd, "'%s' --root '%s' %s", cases[i].plan, fx->root,
                 cases[i].options);
        char *out, *err;
        int rc = run(&out, &err, "%s", cmd);
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
        if (exists(fx->root))
            fail_msg("`run %s` created the records root", cmd);
        free(out);
        free(err);
    }
}

static void test_plan_id_must_be_portable(void **state)
{
    fixture *fx = *state;
    static const char *const ids[] = {"a/b", "..", ".", "a\\\\b", "tiny/"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        write_file(fx->dir, "id.toml", tiny_plan, ids[i], 8, "", 8);
        char plan[4300];
        snprintf(plan, sizeof plan, "%s/id.toml", fx->dir);
        char *out, *err;
        assert_int_equal(run(&out, &err, "'%s' --root '%s'", plan, fx->root), 1);
        assert_string_equal(out, "");
        assert_string_equal(err, "brainlesslab: ValueError: plan id must be a portable "
                                 "record-name component\n");
        assert_false(exists(fx->root));
        free(out);
        free(err);
    }
    /* Dots and dashes inside a name are fine. */
    write_file(fx->dir, "id.toml", tiny_plan, "a.b-c..d", 8, "", 8);
    char plan[4300];
    snprintf(plan, sizeof plan, "%s/id.toml", fx->dir);
    char *out, *err;
    int rc = run(&out, &err, "'%s' --root '%s'", plan, fx->root);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(out);
    free(err);
}

/* A root that cannot be a directory fails for real, also as root (CI): a
 * regular file in the way, or a path in /proc, where mkdir never works. */
static void test_bad_root(void **state)
{
    fixture *fx = *state;
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
        int rc = run(&out, &err, "'%s' --root '%s'", fx->tiny, cases[i].root);
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
    assert_false(exists(proc));

    /* A failure deep down removes the parents this run created: fresh/a is
     * creatable, a 300-byte name below it is not (ENAMETOOLONG). */
    char fresh[4300], toolong[4700];
    snprintf(fresh, sizeof fresh, "%s/fresh", fx->dir);
    snprintf(toolong, sizeof toolong, "%s/a/%0300d", fresh, 0);
    char *out, *err;
    assert_int_equal(run(&out, &err, "'%s' --root '%s'", fx->tiny, toolong), 1);
    assert_string_equal(out, "");
    assert_one_line(err, "brainlesslab: OSError: ", toolong);
    assert_non_null(strstr(err, "File name too long"));
    free(out);
    free(err);
    assert_false(exists(fresh));
}

/* Ctrl-C during execution: the runner stops at a tick boundary; exit 130,
 * one line, nothing on stdout. */
static void test_interrupt_exits_130(void **state)
{
    fixture *fx = *state;
    write_file(fx->dir, "long.toml", "%s", long_plan);
    char plan[4300], outp[4300], errp[4300], root[4300];
    snprintf(plan, sizeof plan, "%s/long.toml", fx->dir);
    snprintf(outp, sizeof outp, "%s/stdout", fx->dir);
    snprintf(errp, sizeof errp, "%s/stderr", fx->dir);
    snprintf(root, sizeof root, "%s/long-records", fx->dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        execl(bl_test_cli_path(), "brainlesslab", "run", plan, "--root", root, (char *)NULL);
        _exit(98);
    }
    /* The root appears right after the flag handler is installed; wait for
     * it (at most 60 s), then a little more so execution is under way. */
    struct timespec tick = {0, 20 * 1000 * 1000};
    int status = 0;
    bool ended = false;
    for (int i = 0; i < 3000 && !exists(root); i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            ended = true;
            break;
        }
        nanosleep(&tick, NULL);
    }
    if (ended)
        fail_msg("run ended (status %d) before it could be interrupted", status);
    assert_true(exists(root));
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(kill(pid, SIGINT), 0);
    /* The runner must stop within 60 s; a hang is a failure, not a stall. */
    for (int i = 0; i < 3000 && !ended; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            ended = true;
        else
            nanosleep(&tick, NULL);
    }
    if (!ended) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fail_msg("run did not stop within 60 s of SIGINT");
    }
    assert_true(WIFEXITED(status));
    FILE *f = fopen(errp, "r");
    assert_non_null(f);
    char line[2048] = "", extra[16];
    if (!fgets(line, sizeof line, f))
        line[0] = 0;
    bool more = fgets(extra, sizeof extra, f) != NULL;
    fclose(f);
    if (WEXITSTATUS(status) != 130 || more ||
        strncmp(line, "brainlesslab: KeyboardInterrupt: ", 33) != 0)
        fail_msg("exit %d, stderr: %s", WEXITSTATUS(status), line);
    f = fopen(outp, "r");
    assert_non_null(f);
    assert_int_equal(fgetc(f), EOF);
    fclose(f);
}

int main(void)
{
    /* Each test gets its own directory, so no test sees another's root. */
#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_tiny_plan_runs),
        TEST(test_rows_do_not_depend_on_batch_or_threads),
        TEST(test_failed_trials_exit_1),
        TEST(test_refusals_create_nothing),
        TEST(test_plan_id_must_be_portable),
        TEST(test_bad_root),
        TEST(test_interrupt_exits_130),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
