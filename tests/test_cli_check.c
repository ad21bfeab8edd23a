/* `brainlesslab check` (spec/platform.md §3.2): the resolved plan on stdout,
 * byte for byte as the reference's json.dumps prints it; errors as one line
 * on stderr with nothing on stdout; Ctrl-C exits 130. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/json.h"
#include "support.h"

#define DELAYED_CUE_HASH "790cbdeb4b4305b23e5f237de51aad3eed8741b0460539a9c08ded96328b15c3"


static void assert_one_error_line(const char *err, const char *prefix)
{
    size_t n = strlen(err);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || n == 0 || err[n - 1] != '\n' ||
        strchr(err, '\n') != err + n - 1)
        fail_msg("expected one line starting with '%s', got:\n%s", prefix, err);
}

/* The shell-quoted form of a path (no single quotes in our paths). */
static const char *quoted(const char *cmd, const char *path)
{
    static char buf[8400];
    assert_null(strchr(path, '\''));
    int n = snprintf(buf, sizeof buf, "%s '%s'", cmd, path);
    assert_true(n > 0 && (size_t)n < sizeof buf);
    return buf;
}

static void test_delayed_cue_matches_reference(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    char *out, *err;
    int rc = bl_test_run_cli(quoted("check", bl_test_shared_path("plans/delayed-cue.toml")),
                             &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    assert_string_equal(err, "");
    size_t n = strlen(out);
    assert_true(n > 2 && out[n - 1] == '\n');

    bl_json *doc = NULL;
    OK_E(bl_json_parse(out, n, "check output", &doc, &e_));
    assert_int_equal(bl_json_kindof(doc), BL_JSON_OBJECT);
    assert_int_equal(bl_json_size(doc), 3);
    const bl_json *hash = bl_json_get(doc, "contract_hash");
    assert_non_null(hash);
    assert_string_equal(bl_json_get_string(hash, NULL), DELAYED_CUE_HASH);
    assert_non_null(bl_json_get(doc, "request"));
    assert_non_null(bl_json_get(doc, "targets"));
    bl_json_destroy(doc);

    /* Byte for byte what Python prints for the reference's canonical JSON. */
    const char *py = bl_test_python_plain();
    if (!py) {
        bl_test_missing("python3 (for the expected json.dumps text)");
        free(out);
        free(err);
        skip();
    }
    char *dir = bl_test_mkdtemp();
    char expected_path[4200], cmd[16384];
    snprintf(expected_path, sizeof expected_path, "%s/expected.json", dir);
    snprintf(cmd, sizeof cmd,
             "'%s' -c 'import json, sys\n"
             "d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
             "d[\"contract_hash\"] = sys.argv[2]\n"
             "sys.stdout.write(json.dumps(d, sort_keys=True, ensure_ascii=False) + \"\\n\")' "
             "'%s/data/delayed-cue.canonical.json' %s >'%s'",
             py, bl_test_tests_dir(), DELAYED_CUE_HASH, expected_path);
    assert_int_equal(system(cmd), 0);
    char *expected = bl_test_read(expected_path, NULL);
    assert_string_equal(out, expected);
    free(expected);
    bl_test_rmtree(dir);
    free(dir);
    free(out);
    free(err);
}

/* Runs check on every *.toml of `dir`; returns how many there were. */
static size_t check_all(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot list %s", dir);
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".toml") != 0)
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *out, *err;
        int rc = bl_test_run_cli(quoted("check", path), &out, &err);
        if (rc != 0)
            fail_msg("check %s: exit %d: %s", path, rc, err);
        assert_string_equal(err, "");
        bl_json *doc = NULL;
        OK_E(bl_json_parse(out, strlen(out), path, &doc, &e_));
        const bl_json *hash = bl_json_get(doc, "contract_hash");
        assert_non_null(hash);
        assert_int_equal(strlen(bl_json_get_string(hash, NULL)), 64);
        const bl_json *targets = bl_json_get(doc, "targets");
        assert_non_null(targets);
        assert_true(bl_json_size(targets) >= 1);
        bl_json_destroy(doc);
        free(out);
        free(err);
        count++;
    }
    closedir(d);
    return count;
}

static void test_every_plan_checks(void **state)
{
    (void)state;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/../plans", bl_test_tests_dir());
    assert_int_equal(check_all(dir), 4); /* quick-start, benchmark, sweep-leak, site-decode */
    BL_REQUIRE_SHARED();
    assert_true(check_all(bl_test_shared_path("plans")) >= 6);
}

/* Our sweep's target ids are the spec's sweep-cell digests. */
static void test_sweep_leak_ids(void **state)
{
    (void)state;
    char path[4200];
    snprintf(path, sizeof path, "%s/../plans/sweep-leak.toml", bl_test_tests_dir());
    char *out, *err;
    assert_int_equal(bl_test_run_cli(quoted("check", path), &out, &err), 0);
    /* sha256('{"leak":0.05}'), sha256('{"leak":0.1}') (the spec's check
     * value), ... first 16 hex digits. */
    static const char *const ids[] = {
        "\"id\": \"4251fa87f9db9fb1\"", "\"id\": \"84f6b98f6e57c127\"",
        "\"id\": \"6af512a1673a80b1\"", "\"id\": \"9ca081a7ea7121f2\"",
    };
    for (size_t i = 0; i < 4; i++)
        assert_non_null(strstr(out, ids[i]));
    free(out);
    free(err);
}

static void test_errors_are_one_line(void **state)
{
    const char *dir = bl_test_dir(state);
    char path[4200];
    struct {
        const char *name, *text, *prefix;
    } cases[] = {
        {"syntax.toml", "format = \"brainlesslab-plan\"\nid = [\n", "brainlesslab: ValueError: "},
        {"v3.toml",
         "format = \"brainlesslab-plan\"\nformat_version = 3\nid = \"x\"\n",
         "brainlesslab: ValueError: "},
        {"empty.toml", "", "brainlesslab: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cases[i].text, f);
        assert_int_equal(fclose(f), 0);
        char *out, *err;
        assert_int_equal(bl_test_run_cli(quoted("check", path), &out, &err), 1);
        assert_string_equal(out, "");
        assert_one_error_line(err, cases[i].prefix);
        free(out);
        free(err);
    }
    char *out, *err;
    snprintf(path, sizeof path, "%s/missing.toml", dir);
    assert_int_equal(bl_test_run_cli(quoted("check", path), &out, &err), 1);
    assert_string_equal(out, "");
    assert_one_error_line(err, "brainlesslab: FileNotFoundError: ");
    free(out);
    free(err);
    assert_int_equal(bl_test_run_cli(quoted("check", dir), &out, &err), 1);
    assert_string_equal(out, "");
    assert_one_error_line(err, "brainlesslab: IsADirectoryError: ");
    free(out);
    free(err);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Runs `<cmd> '<path>'<rest>` and expects exit 1, nothing on stdout and
 * exactly the line "brainlesslab: <kind>: <path>: <message>". */
static void expect_plan_error(const char *cmd, const char *path, const char *rest,
                              const char *kind, const char *message)
{
    char args[8600], want[8600];
    snprintf(args, sizeof args, "%s%s", quoted(cmd, path), rest);
    snprintf(want, sizeof want, "brainlesslab: %s: %s: %s\n", kind, path, message);
    char *out, *err;
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 1 || out[0] || strcmp(err, want) != 0)
        fail_msg("brainlesslab %s: exit %d, stdout '%s', stderr\n  %s  expected\n  %s", args, rc,
                 out, err, want);
    free(out);
    free(err);
}

#define PLAN_HEAD "format = \"brainlesslab-plan\"\nformat_version = 4\n"
#define FORMAT "requires fresh Python plan v4; historical plans require archived Julia"

/* Files that are no plan say what they are instead, after the spec's
 * text: an empty file, a newer plan, a plan without its format, and the
 * manifest of a real record (written here by `run`). */
static void test_not_a_plan_says_what_was_found(void **state)
{
    const char *dir = bl_test_dir(state);
    char path[4200];

    snprintf(path, sizeof path, "%s/empty.toml", dir);
    write_text(path, "");
    expect_plan_error("check", path, "", "ValueError", FORMAT " (the file is empty)");

    snprintf(path, sizeof path, "%s/v5.toml", dir);
    write_text(path, "format = \"brainlesslab-plan\"\nformat_version = 5\nid = \"x\"\n");
    expect_plan_error("check", path, "", "ValueError",
                      FORMAT " (found format_version = 5, expected format_version = 4)");

    snprintf(path, sizeof path, "%s/unformatted.toml", dir);
    write_text(path, "id = \"x\"\n[[targets]]\nid = \"a\"\n");
    expect_plan_error("check", path, "", "ValueError",
                      FORMAT " (found no format key, expected format = \"brainlesslab-plan\")");

    char plan[4200], args[8600];
    snprintf(plan, sizeof plan, "%s/../plans/quick-start.toml", bl_test_tests_dir());
    snprintf(args, sizeof args, "%s --root '%s/records'", quoted("run", plan), dir);
    char *out, *err;
    if (bl_test_run_cli(args, &out, &err) != 0)
        fail_msg("run quick-start: %s", err);
    bl_json *line = NULL;
    OK_E(bl_json_parse(out, strlen(out), "run output", &line, &e_));
    snprintf(path, sizeof path, "%s/record.toml",
             bl_json_get_string(bl_json_get(line, "record"), NULL));
    bl_json_destroy(line);
    free(out);
    free(err);
    expect_plan_error("check", path, "", "ValueError",
                      FORMAT " (found format = \"brainlesslab-record\": this is a record "
                             "manifest, not a plan; run plans, inspect records)");
}

/* Unknown keys name the file, the table (a TOML path) and what is allowed
 * there, after the spec's "invalid <Class> fields: "; so do the errors of
 * resolution, in the target they belong to. */
static void test_plan_errors_name_file_and_table(void **state)
{
    const char *path = bl_test_path(state, "plan.toml");
    static const struct {
        const char *toml, *kind, *message;
    } cases[] = {
        {PLAN_HEAD "id = \"p\"\nfoo = 1\n[[targets]]\nid = \"a\"\n", "ValueError",
         "invalid Plan fields: unknown key 'foo' (allowed: id, targets, evaluation, numerics, "
         "operation, question, version, evidence, diagnostic)"},
        {PLAN_HEAD "id = \"p\"\n[[targets]]\nid = \"a\"\n[[targets]]\nid = \"b\"\n"
                   "[[targets]]\nid = \"c\"\n[targets.composition.node]\nfoo = 1\n",
         "ValueError",
         "targets[2].composition.node: invalid NodeSpec fields: unknown key 'foo' (allowed: "
         "kind, parameters)"},
        {PLAN_HEAD "id = \"p\"\n[[targets]]\nid = \"a\"\n[evaluation]\nseeds = 3\n",
         "ValueError",
         "evaluation: invalid EvaluationSpec fields: unknown key 'seeds' (allowed: blocks, "
         "trials_per_block, horizon, warmup, construction_scope, root_seed, seed_partition)"},
        {PLAN_HEAD "id = \"p\"\n[[targets]]\nid = \"a\"\n[numerics]\nfma = true\n",
         "ValueError",
         "numerics: invalid NumericalPolicy fields: unknown key 'fma' (allowed: dtype, "
         "fast_math, reduction, rng)"},
        {PLAN_HEAD "id = \"p\"\n[[targets]]\nid = \"a\"\ninterventions = [{tick = 1, verb = "
                   "\"blind_input\"}, {tick = 2, verb = \"shuffle_input\", at = 3}]\n",
         "ValueError",
         "targets[0].interventions[1]: invalid Intervention fields: unknown key 'at' (allowed: "
         "tick, verb)"},
        {PLAN_HEAD "id = \"p\"\n[[targets]]\nid = \"a\"\n[[targets]]\nid = \"b\"\n"
                   "[targets.composition.task.options]\ncue_tiks = 4\n",
         "ValueError", "targets[1].composition.task.options: unknown options for delayed_cue: "
                       "['cue_tiks']"},
        {PLAN_HEAD "id = \"p\"\n[[targets]]\nid = \"a\"\n[targets.composition.node."
                   "parameters]\nleek = 0.1\n",
         "TypeError",
         "targets[0].composition.node.parameters: unknown falandays parameter 'leek' (allowed: "
         "leak, lrate_wmat, lrate_targ, threshold_mult, targ_min, input_weight, "
         "weight_init_std, learn_on, link_p, input_link_p, weight_init_mode, "
         "recurrent_init_scale, rectify, repair_masks, axis, inhibitory_frac, drive, "
         "membrane_noise, noise_gain)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_text(path, cases[i].toml);
        expect_plan_error("check", path, "", cases[i].kind, cases[i].message);
    }
}

/* A plan id with a control character (C0, DEL, C1) is refused by check,
 * and by run before anything exists on disk: the record directory would
 * carry the character in its name. */
static void test_control_characters_in_plan_ids(void **state)
{
    const char *dir = bl_test_dir(state);
    static const struct {
        const char *id, *code;
    } cases[] = {
        {"line\\nbreak", "U+000A"}, {"tab\\tbed", "U+0009"}, {"del\\u007F", "U+007F"},
        {"next\\u0085line", "U+0085"}, {"csi\\u009B", "U+009B"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[4200], text[512], message[256], root[4300], rest[4400];
        snprintf(path, sizeof path, "%s/plan%zu.toml", dir, i);
        snprintf(text, sizeof text,
                 PLAN_HEAD "id = \"%s\"\n[[targets]]\nid = \"a\"\n[targets.composition]\n"
                           "count = 8\n[evaluation]\nblocks = 1\n",
                 cases[i].id);
        write_text(path, text);
        snprintf(message, sizeof message,
                 "plan id must be a portable record-name component (the id holds the control "
                 "character %s)",
                 cases[i].code);
        expect_plan_error("check", path, "", "ValueError", message);
        snprintf(root, sizeof root, "%s/records", dir);
        snprintf(rest, sizeof rest, " --root '%s'", root);
        expect_plan_error("run", path, rest, "ValueError", message);
        struct stat sb;
        if (stat(root, &sb) == 0)
            fail_msg("run created %s for a refused plan id", root);
    }
    /* The same plan with a plain id runs: the refusal above was the id's. */
    char path[4200], args[8600];
    snprintf(path, sizeof path, "%s/plain.toml", dir);
    write_text(path, PLAN_HEAD "id = \"plain\"\n[[targets]]\nid = \"a\"\n"
                     "[targets.composition]\ncount = 8\n[evaluation]\nblocks = 1\n");
    snprintf(args, sizeof args, "%s --root '%s/records'", quoted("run", path), dir);
    char *out, *err;
    if (bl_test_run_cli(args, &out, &err) != 0)
        fail_msg("run plain.toml: %s", err);
    free(out);
    free(err);
}

/* Ctrl-C while check waits for its plan (a FIFO nobody writes) ends it with
 * exit 130 and one line, and nothing on stdout. */
static void test_interrupt_exits_130(void **state)
{
    const char *fifo = bl_test_path(state, "plan.toml"), *outp = bl_test_path(state, "stdout"),
               *errp = bl_test_path(state, "stderr");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* Held open for writing so the program's read blocks instead of
     * seeing end of file. */
    int keep = open(fifo, O_RDWR);
    assert_true(keep >= 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        close(keep);
        execl(bl_test_cli_path(), "brainlesslab", "check", fifo, (char *)NULL);
        _exit(98);
    }
    /* Give it time to install its handler and block in read. */
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(kill(pid, SIGINT), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(keep);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    char *out = bl_test_read(outp, NULL), *err = bl_test_read(errp, NULL);
    assert_string_equal(out, "");
    assert_string_equal(err, "brainlesslab: KeyboardInterrupt: interrupted\n");
    free(out);
    free(err);
}

/* A reader that has gone away (`check plan | head -c 0`) gives one OSError
 * line and exit 1, not a silent death by SIGPIPE. The pipe's read end is
 * closed before the program starts, so the outcome does not race. */
static void test_closed_stdout_is_one_oserror_line(void **state)
{
    const char *dir = bl_test_dir(state);
    char plan[4200], errpath[4200];
    snprintf(plan, sizeof plan, "%s/../plans/quick-start.toml", bl_test_tests_dir());
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (errfd < 0 || dup2(fds[1], STDOUT_FILENO) < 0 || dup2(errfd, STDERR_FILENO) < 0)
            _exit(99);
        execl(bl_test_cli_path(), "brainlesslab", "check", plan, (char *)NULL);
        _exit(98);
    }
    close(fds[1]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    FILE *f = fopen(errpath, "r");
    assert_non_null(f);
    char line[1024] = "", extra[16];
    assert_non_null(fgets(line, sizeof line, f));
    assert_null(fgets(extra, sizeof extra, f));
    fclose(f);
    assert_true(strncmp(line, "brainlesslab: OSError: ", 23) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delayed_cue_matches_reference),
        BL_TEST_IN_DIR(test_closed_stdout_is_one_oserror_line),
        cmocka_unit_test(test_every_plan_checks),
        cmocka_unit_test(test_sweep_leak_ids),
        BL_TEST_IN_DIR(test_errors_are_one_line),
        BL_TEST_IN_DIR(test_not_a_plan_says_what_was_found),
        BL_TEST_IN_DIR(test_plan_errors_name_file_and_table),
        BL_TEST_IN_DIR(test_control_characters_in_plan_ids),
        BL_TEST_IN_DIR(test_interrupt_exits_130),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
