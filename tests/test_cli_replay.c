/* `brainlesslab export-replay` and `brainlesslab replays` (spec/platform.md
 * §7.8; docs/records.md "Replays"): a replay exported from a real record
 * is the record's document and holds the frames the runner recorded; the
 * trial selection and its messages are §7.8's; bad records, an existing
 * output and bad command lines are one line with the §3.3 exit codes and
 * leave nothing behind; `replays` writes the eight development cases and
 * their index, each file what `run` + `export-replay` give for the same
 * plan, and a failure or a stop signal leaves neither DEST nor its partial
 * sibling. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "brainlesslab/sha256.h"
#include "record_support.h"
#include "support.h"

/* Delayed Cue with replays: `blocks` x `trials` trials of 8 nodes. */
static const char cue_plan[] = "format = \"brainlesslab-plan\"\n"
                               "format_version = 4\n"
                               "id = \"cue\"\n"
                               "[evaluation]\n"
                               "blocks = %d\n"
                               "trials_per_block = %d\n"
                               "root_seed = 11\n"
                               "[[targets]]\n"
                               "id = \"baseline\"\n"
                               "[targets.composition]\n"
                               "count = 8\n"
                               "[targets.composition.task]\n"
                               "kind = \"delayed_cue\"\n"
                               "[targets.composition.task.options]\n"
                               "cue_ticks = 2\n"
                               "delays = [0, 3]\n"
                               "response_ticks = 2\n";

static void write_cue_plan(const char *path, int blocks, int trials)
{
    char text[2048];
    snprintf(text, sizeof text, cue_plan, blocks, trials);
    bl_rt_write_text(path, text);
}

static int setup(void **state)
{
    bl_rt_fixture *fx = bl_rt_fixture_create("cue.toml");
    if (!fx)
        return -1;
    *state = fx;
    return 0;
}

static bl_json *parse_text(const char *text)
{
    bl_json *v = NULL;
    OK_E(bl_json_parse(text, strlen(text), "test text", &v, &e_));
    return v;
}

static bl_json *parse_file(const char *path)
{
    char *text = bl_test_read(path, NULL);
    bl_json *v = parse_text(text);
    free(text);
    return v;
}

/* `run PLAN --root ROOT <extra>`, which must make a complete record;
 * returns the record's path (heap). */
static char *run_record(const char *plan, const char *root, const char *extra)
{
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s' %s", plan, root, extra);
    if (rc != 0)
        fail_msg("run %s: exit %d, stderr:\n%s", plan, rc, err);
    bl_json *line = parse_text(out);
    assert_string_equal(bl_json_get_string(bl_json_get(line, "status"), NULL), "complete");
    char *rec = strdup(bl_json_get_string(bl_json_get(line, "record"), NULL));
    bl_json_destroy(line);
    free(out);
    free(err);
    return rec;
}

/* A refused command (bl_rt_cli's formatted, already shell-quoted
 * arguments after the first three): exit `code`, nothing on stdout,
 * exactly `line` on stderr, and nothing at `left` (when not NULL). */
#define refused(code, line, left, ...)                                         \
    do {                                                                       \
        char *ro_, *re_;                                                       \
        int rc_ = bl_rt_cli(&ro_, &re_, __VA_ARGS__);                          \
        check_refused(rc_, ro_, re_, (code), (line), (left));                  \
    } while (0)

static void check_refused(int rc, char *out, char *err, int code, const char *line,
                          const char *left)
{
    if (rc != code || strcmp(err, line) != 0)
        fail_msg("exit %d (want %d), stderr:\n%s\nwanted:\n%s", rc, code, err, line);
    assert_string_equal(out, "");
    if (left)
        assert_false(bl_rt_exists(left));
    free(out);
    free(err);
}

/* `export-replay REC [--trial KEY] OUT` that must succeed: its stdout line
 * is checked; returns the parsed document. */
static bl_json *export_ok(const char *rec, const char *key, const char *dest)
{
    char *out, *err, trial[600] = "", line[4600];
    if (key)
        snprintf(trial, sizeof trial, "--trial '%s'", key);
    int rc = bl_rt_cli(&out, &err, "export-replay '%s' %s '%s'", rec, trial, dest);
    if (rc != 0)
        fail_msg("export-replay %s: exit %d, stderr:\n%s", key ? key : "", rc, err);
    snprintf(line, sizeof line, "{\"replay\": \"%s\", \"status\": \"complete\"}\n", dest);
    assert_string_equal(out, line);
    assert_string_equal(err, "");
    free(out);
    free(err);
    return parse_file(dest);
}

/* The frames the runner records for the plan, by trial key (the library's
 * own path, no record involved). */
static bl_json *frames_in_memory(const char *plan_path)
{
    char *text = bl_test_read(plan_path, NULL);
    struct bl_resolved_plan *plan = bl_test_resolve_text(text);
    free(text);
    bl_execution x;
    bl_execution_default(&x);
    x.recording = BL_RECORDING_REPLAY;
    bl_evaluation *e = NULL;
    OK_E(bl_evaluate(plan, &x, NULL, 0, NULL, &e, &e_));
    bl_recordings recs = {0};
    OK_E(bl_evaluation_recordings(plan, e, &recs, &e_));
    bl_json *frames = recs.replay_frames;
    recs.replay_frames = NULL;
    bl_recordings_clear(&recs);
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(plan);
    return frames;
}

/* Runs the program (argv[0] ignored) with RLIMIT_FSIZE `fsize` and
 * SIGXFSZ at its default, stdout and stderr into files in `dir` (read into
 * *out and *err); returns the wait status. */
static int run_limited(char *const argv[], rlim_t fsize, const char *dir, char **out, char **err)
{
    char o[BL_RT_PATH], e[BL_RT_PATH];
    bl_rt_at(o, dir, "limited.stdout");
    bl_rt_at(e, dir, "limited.stderr");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(o, "w", stdout) || !freopen(e, "w", stderr))
            _exit(99);
        signal(SIGXFSZ, SIG_DFL);
        struct rlimit rl = {fsize, fsize};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(97);
        execv(bl_test_cli_path(), argv);
        _exit(98);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    *out = bl_test_read(o, NULL);
    *err = bl_test_read(e, NULL);
    unlink(o);
    unlink(e);
    return status;
}

/* ---- export-replay ------------------------------------------------------- */

/* Every trial of a four-trial record, exported by key: the file is the
 * record's replay artifact byte for byte, the document has §7.8's fields
 * for that trial, and its frames are the ones the runner recorded. */
static void test_export_round_trip(void **state)
{
    bl_rt_fixture *fx = *state;
    write_cue_plan(fx->plan, 2, 2);
    char *rec = run_record(fx->plan, fx->root, "--recording replay");
    bl_json *memory = frames_in_memory(fx->plan);
    assert_int_equal(bl_json_size(memory), 4);
    char p[BL_RT_PATH], q[BL_RT_PATH];
    bl_json *inspection = NULL;
    OK_E(bl_record_inspect(rec, &inspection, &e_));
    const char *hash =
        bl_json_get_string(bl_json_get(bl_json_get(inspection, "manifest"), "contract_hash"), NULL);
    static const char *const keys[] = {"baseline/0/0", "baseline/0/1", "baseline/1/0",
                                       "baseline/1/1"};
    for (size_t i = 0; i < 4; i++) {
        char name[64];
        snprintf(name, sizeof name, "out-%zu.json", i);
        bl_json *doc = export_ok(rec, keys[i], bl_rt_at(p, fx->dir, name));
        /* The record's artifacts are numbered in the keys' byte order. */
        snprintf(name, sizeof name, "replays/trial_%08zu.json", i);
        size_t na, nb;
        char *exported = bl_test_read(p, &na),
             *artifact = bl_test_read(bl_rt_at(q, rec, name), &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(exported, artifact, na);
        free(exported);
        free(artifact);

        assert_string_equal(bl_json_get_string(bl_json_get(doc, "format"), NULL),
                            "brainlesslab-replay");
        assert_int_equal(bl_json_get_int(bl_json_get(doc, "version")), 1);
        assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL), keys[i]);
        assert_string_equal(bl_json_get_string(bl_json_get(doc, "task"), NULL), "delayed_cue");
        assert_string_equal(bl_json_get_string(bl_json_get(doc, "node"), NULL), "falandays");
        const bl_json *prov = bl_json_get(doc, "provenance");
        static const char *const fields[] = {"backend",     "dtype",      "seed_partition",
                                             "resolved",    "evidence",   "contract_hash",
                                             "composition", "evaluation", "numerics",
                                             "trial",       "environment"};
        for (size_t f = 0; f < sizeof fields / sizeof *fields; f++)
            if (!bl_json_get(prov, fields[f]))
                fail_msg("provenance lacks %s", fields[f]);
        static const char *const resolved[] = {"composition", "model_parameters", "task_options",
                                               "horizon", "diagnostic"};
        for (size_t f = 0; f < sizeof resolved / sizeof *resolved; f++)
            if (!bl_json_get(bl_json_get(prov, "resolved"), resolved[f]))
                fail_msg("provenance.resolved lacks %s", resolved[f]);
        assert_string_equal(bl_json_get_string(bl_json_get(prov, "contract_hash"), NULL), hash);
        const bl_json *trial = bl_json_get(prov, "trial");
        char own[128];
        snprintf(own, sizeof own, "%s/%lld/%lld",
                 bl_json_get_string(bl_json_get(trial, "target_id"), NULL),
                 (long long)bl_json_get_int(bl_json_get(trial, "block_id")),
                 (long long)bl_json_get_int(bl_json_get(trial, "trial_id")));
        assert_string_equal(own, keys[i]);
        const bl_json *frames = bl_json_get(doc, "frames");
        assert_true(bl_json_size(frames) > 0);
        assert_true(bl_json_equal(frames, bl_json_get(memory, keys[i])));
        /* Ticks count 1, 2, ... up to the trial's completed ticks (§4.12). */
        for (size_t k = 0; k < bl_json_size(frames); k++)
            assert_int_equal(bl_json_get_int(bl_json_get(bl_json_at(frames, k), "tick")),
                             (int64_t)k + 1);
        assert_int_equal(bl_json_size(frames),
                         bl_json_get_int(bl_json_get(trial, "completed_ticks")));
        bl_json_destroy(doc);
    }
    bl_json_destroy(inspection);
    bl_json_destroy(memory);
    free(rec);
}

/* --trial: required with several replays, optional with one, and an
 * unknown key is §7.8's KeyError; nothing is written on a refusal. */
static void test_trial_selection(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[BL_RT_PATH], root[BL_RT_PATH], plan[BL_RT_PATH];
    write_cue_plan(fx->plan, 1, 3);
    char *rec = run_record(fx->plan, fx->root, "--recording replay");
    char *out, *err;
    bl_rt_at(p, fx->dir, "out.json");
    refused(1, "brainlesslab: ValueError: select one trial_key when exporting multiple replays\n",
            p, "export-replay '%s' '%s'", rec, p);
    refused(1, "brainlesslab: KeyError: unknown replay trial_key\n", p,
            "export-replay '%s' --trial baseline/0/9 '%s'", rec, p);
    refused(1, "brainlesslab: KeyError: unknown replay trial_key\n", p,
            "export-replay '%s' --trial baseline/0 '%s'", rec, p);
    bl_json *doc = export_ok(rec, "baseline/0/2", p);
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL), "baseline/0/2");
    bl_json_destroy(doc);
    /* --opt=value and the option after the positionals, as argparse takes them. */
    char q[BL_RT_PATH];
    assert_int_equal(bl_rt_cli(&out, &err, "export-replay '%s' '%s' --trial=baseline/0/1", rec,
                               bl_rt_at(q, fx->dir, "out-1.json")),
                     0);
    free(out);
    free(err);
    doc = parse_file(q);
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL), "baseline/0/1");
    bl_json_destroy(doc);
    free(rec);

    /* One trial: no key needed, and its own key works too. */
    bl_rt_at(plan, fx->dir, "one.toml");
    write_cue_plan(plan, 1, 1);
    rec = run_record(plan, bl_rt_at(root, fx->dir, "one"), "--recording replay");
    doc = export_ok(rec, NULL, bl_rt_at(p, fx->dir, "one.json"));
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL), "baseline/0/0");
    bl_json_destroy(doc);
    doc = export_ok(rec, "baseline/0/0", bl_rt_at(p, fx->dir, "one-keyed.json"));
    bl_json_destroy(doc);
    free(rec);
}

/* Records that cannot give a replay: one line each (exit 1) and no output
 * file. */
static void test_bad_records(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[BL_RT_PATH], q[BL_RT_PATH], root[BL_RT_PATH], line[2 * BL_RT_PATH + 200];
    bl_rt_at(p, fx->dir, "out.json");

    /* A summary record has no replay channel. */
    write_cue_plan(fx->plan, 1, 1);
    char *plain = run_record(fx->plan, bl_rt_at(root, fx->dir, "plain"), "");
    refused(1,
            "brainlesslab: ValueError: record holds no replays (record it with --recording "
            "replay)\n",
            p, "export-replay '%s' '%s'", plain, p);
    free(plain);

    /* A failed record (a generation failure: FAILED beside .RESERVED). */
    bl_rt_fail_before_manifest(bl_rt_at(q, fx->dir, "failed"), BL_EVALUE, "boom");
    snprintf(line, sizeof line,
             "brainlesslab: FileNotFoundError: %s/record.toml: No such file or directory; the "
             "record failed before its manifest was written: ValueError: boom\n",
             q);
    refused(1, line, p, "export-replay '%s' '%s'", q, p);

    /* A replay record whose replay artifact was edited: incomplete. */
    char *rec = run_record(fx->plan, fx->root, "--recording replay");
    char *artifact = bl_test_read(bl_rt_at(q, rec, "replays/trial_00000000.json"), NULL);
    bl_rt_write_text(q, "{\"format\":\"brainlesslab-replay\"}\n");
    refused(1, "brainlesslab: ValueError: replay record is not complete (status: incomplete)\n", p,
            "export-replay '%s' '%s'", rec, p);
    bl_rt_write_text(q, artifact);
    free(artifact);
    /* Its completion marker removed: incomplete too. */
    char *done = bl_test_read(bl_rt_at(q, rec, "DONE"), NULL);
    assert_int_equal(unlink(q), 0);
    refused(1, "brainlesslab: ValueError: replay record is not complete (status: incomplete)\n", p,
            "export-replay '%s' '%s'", rec, p);
    bl_rt_write_text(q, done);
    free(done);
    /* A FAILED marker beside DONE: failed. */
    bl_rt_write_text(bl_rt_at(q, rec, "FAILED"), "{}\n");
    refused(1, "brainlesslab: ValueError: replay record is not complete (status: failed)\n", p,
            "export-replay '%s' '%s'", rec, p);
    assert_int_equal(unlink(q), 0);
    /* A corrupted manifest. */
    char *manifest = bl_test_read(bl_rt_at(q, rec, "record.toml"), NULL);
    bl_rt_write_text(q, "format = \"brainlesslab-record\"\nformat_version = 9\n");
    refused(1, "brainlesslab: ValueError: unsupported record format\n", p,
            "export-replay '%s' '%s'", rec, p);
    bl_rt_write_text(q, manifest);
    free(manifest);
    /* Restored, it exports again. */
    bl_json_destroy(export_ok(rec, NULL, p));
    assert_int_equal(unlink(p), 0);
    free(rec);

    /* Not a record at all. */
    refused(1, "brainlesslab: ValueError: a record must be a real directory\n", p,
            "export-replay '%s' '%s'", fx->plan, p);
    snprintf(line, sizeof line, "brainlesslab: ValueError: a record must be a real directory\n");
    refused(1, line, p, "export-replay '%s/nowhere' '%s'", fx->dir, p);
}

/* The output is created exclusively: an existing file (or a link) stays
 * byte for byte; a missing folder or a file over the size limit leaves
 * nothing. */
static void test_output_is_new_only(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[BL_RT_PATH], q[BL_RT_PATH], line[BL_RT_PATH + 200];
    char *out, *err;
    write_cue_plan(fx->plan, 1, 1);
    char *rec = run_record(fx->plan, fx->root, "--recording replay");

    bl_rt_write_text(bl_rt_at(p, fx->dir, "taken.json"), "keep me\n");
    snprintf(line, sizeof line, "brainlesslab: FileExistsError: %s: File exists\n", p);
    refused(1, line, NULL, "export-replay '%s' '%s'", rec, p);
    char *kept = bl_test_read(p, NULL);
    assert_string_equal(kept, "keep me\n");
    free(kept);
    /* A dangling link is not followed either. */
    assert_int_equal(
        symlink(bl_rt_at(q, fx->dir, "target.json"), bl_rt_at(p, fx->dir, "link.json")), 0);
    snprintf(line, sizeof line, "brainlesslab: FileExistsError: %s: File exists\n", p);
    refused(1, line, q, "export-replay '%s' '%s'", rec, p);

    snprintf(q, sizeof q, "%s/no/such/dir/out.json", fx->dir);
    snprintf(line, sizeof line, "brainlesslab: FileNotFoundError: %s: No such file or directory\n",
             q);
    refused(1, line, q, "export-replay '%s' '%s'", rec, q);

    /* A write that fails halfway (RLIMIT_FSIZE below the document's size)
     * removes its partial file; SIGXFSZ does not kill the program. */
    bl_rt_at(q, fx->dir, "limited.json");
    char *argv[] = {"brainlesslab", "export-replay", rec, q, NULL};
    int status = run_limited(argv, 512, fx->dir, &out, &err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "brainlesslab: OSError: "));
    assert_non_null(strstr(err, "File too large\n"));
    assert_false(bl_rt_exists(q));
    free(out);
    free(err);
    free(rec);
}

/* Bad command lines: argparse's usage errors, exit 2, nothing written. */
static void test_usage_errors(void **state)
{
    bl_rt_fixture *fx = *state;
    static const struct {
        const char *args, *line;
    } cases[] = {
        {"export-replay", "brainlesslab export-replay: error: the following arguments are "
                          "required: record, out\n"},
        {"export-replay rec", "brainlesslab export-replay: error: the following arguments are "
                              "required: out\n"},
        {"export-replay rec out.json --trial", "brainlesslab export-replay: error: argument "
                                               "--trial: expected one argument\n"},
        {"export-replay rec out.json extra", "brainlesslab: error: unrecognized arguments: "
                                             "extra\n"},
        {"export-replay rec out.json --bogus", "brainlesslab: error: unrecognized arguments: "
                                               "--bogus\n"},
        {"replays", "brainlesslab replays: error: the following arguments are required: dest\n"},
        {"replays a b", "brainlesslab: error: unrecognized arguments: b\n"},
        {"replays a --trial x", "brainlesslab: error: unrecognized arguments: --trial x\n"},
    };
    char cwd[BL_RT_PATH];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(fx->dir), 0); /* any file the program made would be here */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = bl_test_run_cli(cases[i].args, &out, &err);
        const size_t n = strlen(err), m = strlen(cases[i].line);
        if (rc != 2 || n < m || strcmp(err + n - m, cases[i].line) != 0 ||
            strncmp(err, "usage: brainlesslab ", 20) != 0)
            fail_msg("`%s`: exit %d, stderr:\n%s", cases[i].args, rc, err);
        assert_string_equal(out, "");
        free(out);
        free(err);
    }
    DIR *d = opendir(".");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            fail_msg("a refused command line left %s", e->d_name);
    closedir(d);
    assert_int_equal(chdir(cwd), 0);
    /* Both commands have their help (exit 0). */
    bl_test_cli_prints("export-replay -h",
                       "usage: brainlesslab export-replay [-h] [--trial TRIAL] record out\n",
                       "\n  --trial TRIAL ", (char *)NULL);
    bl_test_cli_prints("replays --help", "usage: brainlesslab replays [-h] dest\n", (char *)NULL);
    bl_test_cli_prints("--help", "\n    export-replay ", "\n    replays ", (char *)NULL);
}

/* ---- replays ------------------------------------------------------------- */

/* §7.8's cases, written out independently of the program's table: node
 * outermost, then the tasks with their horizons and label titles. */
static const struct {
    const char *task, *dashed, *title;
    int64_t horizon;
} dev_tasks[] = {
    {"tracking", "tracking", "Tracking", 240},
    {"pong", "pong", "Pong", 240},
    {"cartpole_plank_easy", "cartpole-plank-easy", "Cartpole Plank Easy", 96},
    {"delayed_cue", "delayed-cue", "Delayed Cue", 144},
};
static const char *const dev_nodes[] = {"falandays", "sorn"};

/* The entries of directory `dir` other than . and .., sorted, joined by
 * spaces (heap). */
static char *listing(const char *dir)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        fail_msg("cannot list %s: %s", dir, strerror(errno));
    bl_buf b;
    bl_buf_init(&b);
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
            bl_buf_printf(&b, "%s%s", b.len ? " " : "", names[i]->d_name);
        free(names[i]);
    }
    free(names);
    bl_buf_putc(&b, 0);
    char *text = strdup(b.data);
    bl_buf_clear(&b);
    return text;
}

/* The plan of one development case as a TOML file, built by the library's
 * profile constructor as generate_replays.py builds it. */
static void write_case_plan(const char *path, const char *id, const char *node, const char *task,
                            int64_t horizon)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"node\": {\"kind\": \"%s\"}, \"task\": {\"kind\": \"%s\"}, \"count\": 64}", node,
             task);
    bl_json *comp = parse_text(text);
    snprintf(text, sizeof text, "{\"horizon\": %lld, \"root_seed\": 91407}", (long long)horizon);
    bl_json *eval = parse_text(text);
    bl_plan *plan = NULL;
    OK_E(bl_plan_profile(comp, eval, NULL, id, strcmp(task, "delayed_cue") != 0, &plan, &e_));
    bl_buf toml;
    bl_buf_init(&toml);
    OK_E(bl_plan_write(plan, &toml, &e_));
    bl_rt_write(path, toml.data, toml.len);
    bl_buf_clear(&toml);
    bl_plan_destroy(plan);
    bl_json_destroy(comp);
    bl_json_destroy(eval);
}

/* The peak resident size of the process that ran it is the one member of a
 * replay document that differs between two runs of one plan. */
static void forget_peak_rss(bl_json *doc)
{
    bl_json *env = bl_json_get(bl_json_get(doc, "provenance"), "environment");
    assert_non_null(bl_json_get(env, "peak_rss_bytes"));
    OK_E(bl_json_object_set(env, "peak_rss_bytes", bl_json_int(0), &e_));
}

/* DEST/<stem>.js is DEST/<stem>.json, byte for byte, as the argument of
 * the viewer's register call. */
static void script_wraps(const char *dest, const char *stem, const char *call)
{
    char p[BL_RT_PATH], name[96], head[160];
    size_t jlen, slen;
    snprintf(name, sizeof name, "%s.json", stem);
    char *json = bl_test_read(bl_rt_at(p, dest, name), &jlen);
    snprintf(name, sizeof name, "%s.js", stem);
    char *script = bl_test_read(bl_rt_at(p, dest, name), &slen);
    snprintf(head, sizeof head, "brainlesslabViewer.%s(\"%s\", ", call, stem);
    const size_t hlen = strlen(head);
    assert_int_equal(slen, hlen + jlen + 3);
    assert_memory_equal(script, head, hlen);
    assert_memory_equal(script + hlen, json, jlen);
    assert_memory_equal(script + hlen + jlen, ");\n", 3);
    free(script);
    free(json);
}

static void test_replays_writes_the_cases(void **state)
{
    bl_rt_fixture *fx = *state;
    char site[BL_RT_PATH], dest[BL_RT_PATH], p[BL_RT_PATH], line[BL_RT_PATH + 100];
    bl_rt_at(site, fx->dir, "site");
    bl_rt_at(dest, site, "replays"); /* its parent does not exist yet */
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "replays '%s'", dest);
    if (rc != 0)
        fail_msg("replays: exit %d, stderr:\n%s", rc, err);
    snprintf(line, sizeof line, "{\"index\": \"%s/index.json\", \"status\": \"complete\"}\n", dest);
    assert_string_equal(out, line);
    assert_string_equal(err, "");
    free(out);
    free(err);
    /* DEST alone beside nothing else: the partial directory is gone. */
    char *names = listing(site);
    assert_string_equal(names, "replays");
    free(names);
    names = listing(dest);
    /* Each document also as a script that registers it, and the viewer
     * page (docs/viewer.md). */
    assert_string_equal(names, "falandays-cartpole-plank-easy.js falandays-cartpole-plank-easy.json "
                               "falandays-delayed-cue.js falandays-delayed-cue.json "
                               "falandays-pong.js falandays-pong.json "
                               "falandays-tracking.js falandays-tracking.json "
                               "index.html index.js index.json "
                               "sorn-cartpole-plank-easy.js sorn-cartpole-plank-easy.json "
                               "sorn-delayed-cue.js sorn-delayed-cue.json "
                               "sorn-pong.js sorn-pong.json sorn-tracking.js sorn-tracking.json "
                               "viewer.css viewer.js");
    free(names);
    script_wraps(dest, "index", "registerIndex");
    char *page = bl_test_read(bl_rt_at(p, dest, "index.html"), NULL);
    assert_non_null(strstr(page, "<script src=\"viewer.js\"></script>"));
    assert_non_null(strstr(page, "<script src=\"index.js\"></script>"));
    free(page);

    /* index.json: json.dumps(indent=2) of the index, ASCII only. */
    char *text = bl_test_read(bl_rt_at(p, dest, "index.json"), NULL);
    const char *head = "{\n  \"format\": \"brainlesslab-replay-index\",\n  \"version\": 1,\n"
                       "  \"cases\": [\n    {\n      \"id\": \"falandays-tracking\",\n";
    assert_true(strncmp(text, head, strlen(head)) == 0);
    assert_string_equal(text + strlen(text) - 6, "  ]\n}\n");
    for (const char *c = text; *c; c++)
        assert_true((unsigned char)*c < 0x80);
    assert_non_null(strstr(text, "\"label\": \"SORN \\u00b7 Cartpole Plank Easy \\u00b7 "
                                 "development\",\n"));
    bl_json *index = parse_text(text);
    free(text);
    const bl_json *cases = bl_json_get(index, "cases");
    assert_int_equal(bl_json_size(cases), 8);

    char root[BL_RT_PATH];
    bl_rt_at(root, fx->dir, "runs");
    for (size_t n = 0, i = 0; n < 2; n++)
        for (size_t t = 0; t < 4; t++, i++) {
            const bl_json *c = bl_json_at(cases, i);
            char id[64], label[128], path[96], file[80];
            snprintf(id, sizeof id, "%s-%s", dev_nodes[n], dev_tasks[t].dashed);
            snprintf(label, sizeof label, "%s \xc2\xb7 %s \xc2\xb7 development",
                     n ? "SORN" : "Falandays", dev_tasks[t].title);
            snprintf(path, sizeof path, "/replays/%s.json", id);
            snprintf(file, sizeof file, "%s.json", id);
            assert_int_equal(bl_json_size(c), 6);
            assert_string_equal(bl_json_get_string(bl_json_get(c, "id"), NULL), id);
            assert_string_equal(bl_json_get_string(bl_json_get(c, "task"), NULL),
                                dev_tasks[t].task);
            assert_string_equal(bl_json_get_string(bl_json_get(c, "node"), NULL), dev_nodes[n]);
            assert_string_equal(bl_json_get_string(bl_json_get(c, "label"), NULL), label);
            assert_string_equal(bl_json_get_string(bl_json_get(c, "path"), NULL), path);
            size_t len;
            char *bytes = bl_test_read(bl_rt_at(p, dest, file), &len);
            char hex[65];
            OK_E(bl_sha256_hex(bytes, len, hex, &e_));
            free(bytes);
            assert_string_equal(bl_json_get_string(bl_json_get(c, "sha256"), NULL), hex);
            script_wraps(dest, id, "registerReplay");

            bl_json *doc = parse_file(p);
            assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL),
                                "baseline/0/0");
            assert_string_equal(bl_json_get_string(bl_json_get(doc, "node"), NULL), dev_nodes[n]);
            assert_string_equal(bl_json_get_string(bl_json_get(doc, "task"), NULL),
                                dev_tasks[t].task);
            const bl_json *prov = bl_json_get(doc, "provenance");
            const bl_json *resolved = bl_json_get(prov, "resolved");
            assert_int_equal(bl_json_get_int(bl_json_get(resolved, "horizon")),
                             dev_tasks[t].horizon);
            assert_int_equal(bl_json_get_bool(bl_json_get(resolved, "diagnostic")), t != 3);
            assert_int_equal(
                bl_json_get_int(bl_json_get(bl_json_get(prov, "evaluation"), "root_seed")), 91407);
            assert_int_equal(
                bl_json_get_int(bl_json_get(bl_json_get(prov, "composition"), "count")), 64);
            assert_string_equal(
                bl_json_get_string(bl_json_get(bl_json_get(prov, "trial"), "status"), NULL),
                "completed");
            assert_true(bl_json_size(bl_json_get(doc, "frames")) > 0);

            /* The same plan through run --recording replay and export-replay. */
            char plan[BL_RT_PATH], exported[BL_RT_PATH];
            snprintf(plan, sizeof plan, "%s/%s.toml", fx->dir, id);
            write_case_plan(plan, id, dev_nodes[n], dev_tasks[t].task, dev_tasks[t].horizon);
            char *rec = run_record(plan, root, "--recording replay");
            snprintf(exported, sizeof exported, "%s/%s-exported.json", fx->dir, id);
            bl_json *again = export_ok(rec, NULL, exported);
            forget_peak_rss(doc);
            forget_peak_rss(again);
            if (!bl_json_equal(doc, again))
                fail_msg("%s: replays and run + export-replay differ", id);
            bl_json_destroy(again);
            bl_json_destroy(doc);
            free(rec);
        }
    bl_json_destroy(index);
}

/* An existing DEST (directory or file) is refused before anything runs and
 * stays as it was; a write that fails halfway removes DEST, its partial
 * sibling and the parents the command made. */
static void test_replays_leave_nothing_on_failure(void **state)
{
    bl_rt_fixture *fx = *state;
    char base[BL_RT_PATH], dest[BL_RT_PATH], line[BL_RT_PATH + 100];
    char *out, *err;
    bl_rt_at(base, fx->dir, "taken");
    assert_int_equal(mkdir(base, 0777), 0);
    bl_rt_at(dest, base, "replays");
    assert_int_equal(mkdir(dest, 0777), 0);
    snprintf(line, sizeof line, "brainlesslab: FileExistsError: %s: File exists\n", dest);
    refused(1, line, NULL, "replays '%s'", dest);
    char *names = listing(base);
    assert_string_equal(names, "replays");
    free(names);
    names = listing(dest);
    assert_string_equal(names, "");
    free(names);
    assert_int_equal(rmdir(dest), 0);
    bl_rt_write_text(dest, "a file\n");
    refused(1, line, NULL, "replays '%s/'", dest);
    char *kept = bl_test_read(dest, NULL);
    assert_string_equal(kept, "a file\n");
    free(kept);
    /* A file where a parent should be. */
    snprintf(line, sizeof line,
             "brainlesslab: FileExistsError: %s: exists and is not a directory\n", dest);
    refused(1, line, NULL, "replays '%s/sub/replays'", dest);
    names = listing(base);
    assert_string_equal(names, "replays");
    free(names);

    /* RLIMIT_FSIZE below the first document's size. */
    bl_rt_at(base, fx->dir, "limited");
    bl_rt_at(dest, base, "new/replays");
    char *argv[] = {"brainlesslab", "replays", dest, NULL};
    int status = run_limited(argv, 65536, fx->dir, &out, &err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "brainlesslab: OSError: "));
    assert_non_null(strstr(err, "File too large\n"));
    assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    assert_false(bl_rt_exists(base));
    free(out);
    free(err);
}

/* A stop signal while the cases run: exit 128 + signal with its one line,
 * and DEST, the partial directory and the parents the command made are
 * gone. The signal is sent once the partial directory exists; a run that
 * finished first must be complete, and the attempt is repeated. */
static void stop_replays(const bl_rt_fixture *fx, int sig, const char *line)
{
    int stopped = 0;
    for (int attempt = 0; attempt < 40 && !stopped; attempt++) {
        char base[BL_RT_PATH], dest[BL_RT_PATH], o[BL_RT_PATH], e[BL_RT_PATH];
        snprintf(base, sizeof base, "%s/stop-%d-%d", fx->dir, sig, attempt);
        bl_rt_at(dest, base, "replays");
        bl_rt_at(o, fx->dir, "stop.stdout");
        bl_rt_at(e, fx->dir, "stop.stderr");
        char *argv[] = {"brainlesslab", "replays", dest, NULL};
        pid_t pid = bl_test_start_cli(argv, o, e);
        int status = 0;
        bool sent = false, ended = false;
        struct timespec tick = {0, 200 * 1000};
        for (long k = 0; k < 600000 && !ended; k++) {
            if (waitpid(pid, &status, WNOHANG) == pid) {
                ended = true;
                break;
            }
            if (!sent) {
                DIR *d = opendir(base);
                for (struct dirent *ent; d && (ent = readdir(d));)
                    if (strncmp(ent->d_name, "replays.partial-", 16) == 0)
                        sent = true;
                if (d)
                    closedir(d);
                if (sent)
                    assert_int_equal(kill(pid, sig), 0);
            }
            nanosleep(&tick, NULL);
        }
        if (!ended) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("replays did not end");
        }
        char *out = bl_test_read(o, NULL), *err = bl_test_read(e, NULL);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 128 + sig) {
            stopped = 1;
            assert_string_equal(err, line);
            assert_string_equal(out, "");
            assert_false(bl_rt_exists(base));
        } else {
            /* Finished before the signal could stop it: complete. */
            if (WEXITSTATUS(status) != 0)
                fail_msg("exit %d, stderr:\n%s", WEXITSTATUS(status), err);
            char p[BL_RT_PATH];
            assert_true(bl_rt_exists(bl_rt_at(p, dest, "index.json")));
            char *names = listing(base);
            assert_string_equal(names, "replays");
            free(names);
        }
        free(out);
        free(err);
    }
    if (!stopped)
        fail_msg("signal %d never arrived while the replays were built", sig);
}

static void test_replays_stop_signals(void **state)
{
    stop_replays(*state, SIGINT, "brainlesslab: KeyboardInterrupt: interrupted\n");
    stop_replays(*state, SIGTERM, "brainlesslab: SystemExit: terminated by SIGTERM\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_export_round_trip, setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_trial_selection, setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_bad_records, setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_output_is_new_only, setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_replays_writes_the_cases, setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_replays_leave_nothing_on_failure, setup,
                                        bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_replays_stop_signals, setup, bl_rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
