/* `brainlesslab run` and `inspect` around records (spec/platform.md §3.2,
 * §7; the §8 test_cli items): inspect's output and exit codes, the
 * recording channels through the command line, calibration record
 * directories, and crash safety: Ctrl-C, SIGTERM, SIGHUP, SIGKILL at any
 * moment, a full disk and a read-only root must never leave a directory
 * that inspects as complete unless it is one.
 *
 * Every failure is real for root too (CI runs as root): a full disk is
 * RLIMIT_FSIZE, a read-only root is /proc or a read-only bind mount. */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "record_support.h"
#include "support.h"

/* Delayed Cue, horizon 7, one reservoir target: id, node count, blocks,
 * trials per block, delays. */
static const char cue_plan[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"%s\"\n"
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
    "delays = %s\n"
    "response_ticks = 2\n";

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

static void cue_plan_file(const char *path, const char *id, int blocks, int trials,
                          const char *delays)
{
    char text[4096];
    snprintf(text, sizeof text, cue_plan, id, blocks, trials, delays);
    bl_rt_write_text(path, text);
}

static int setup(void **state)
{
    bl_rt_fixture *fx = bl_rt_fixture_create("cue.toml");
    if (!fx)
        return -1;
    cue_plan_file(fx->plan, "cue", 2, 3, "[1, 3]");
    *state = fx;
    return 0;
}

/* The one record directory under root (NULL if there is none); fails when
 * there are several. Heap string. */
static char *only_record(const char *root)
{
    DIR *d = opendir(root);
    if (!d)
        return NULL;
    char *found = NULL;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        if (found)
            fail_msg("more than one record under %s", root);
        found = malloc(strlen(root) + strlen(e->d_name) + 2);
        sprintf(found, "%s/%s", root, e->d_name);
    }
    closedir(d);
    return found;
}

/* Runs `run PLAN --root ROOT [extra]`; returns the record path (heap). */
static char *run_ok(const char *plan, const char *root, const char *extra)
{
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s' %s", plan, root, extra);
    if (rc != 0)
        fail_msg("run %s %s: exit %d: %s", plan, extra, rc, err);
    bl_json *doc = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &doc, &e_));
    char *rec = strdup(bl_json_get_string(bl_json_get(doc, "record"), NULL));
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "status"), NULL), "complete");
    bl_json_destroy(doc);
    free(out);
    free(err);
    return rec;
}

static bl_json *inspect_map(const char *path)
{
    bl_json *map = NULL;
    bl_error err = {0};
    if (bl_record_inspect(path, &map, &err) != BL_OK)
        fail_msg("inspect %s: %s", path, err.msg);
    return map;
}

/* ---- inspect ------------------------------------------------------------------------ */

static void test_inspect_command(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    /* A non-ASCII plan id: the record's name, and so run's and inspect's
     * outputs, keep it raw (ensure_ascii=False). */
    bl_rt_at(p, fx->dir, "gr\xc3\xbc\xc3\x9f" "e.toml");
    cue_plan_file(p, "gr\xc3\xbc\xc3\x9f" "e", 1, 2, "[1, 3]");
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "run '%s' --root '%s'", p, fx->root), 0);
    char *rec = only_record(fx->root);
    char expected[4400];
    snprintf(expected, sizeof expected, "{\"record\": \"%s\", \"status\": \"complete\"}\n", rec);
    assert_string_equal(out, expected);
    assert_non_null(strstr(out, "gr\xc3\xbc\xc3\x9f" "e-"));
    free(out);
    free(err);

    /* §3.2 inspect: the map, sorted keys, default separators, exit 0. */
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", rec), 0);
    assert_string_equal(err, "");
    static const char head[] = "{\"checksums_valid\": true, \"complete\": true, "
                               "\"invalid_artifacts\": [], \"manifest\": {\"artifact_sha256\": {";
    assert_int_equal(strncmp(out, head, strlen(head)), 0);
    assert_non_null(strstr(out, "\"id\": \"gr\xc3\xbc\xc3\x9f" "e-"));
    assert_non_null(strstr(out, "}, \"status\": \"complete\", \"unlisted_artifacts\": []}\n"));
    bl_json *printed = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &printed, &e_));
    bl_json *map = inspect_map(rec);
    assert_true(bl_json_equal(printed, map));
    bl_json_destroy(printed);
    bl_json_destroy(map);
    free(out);
    free(err);

    /* The source capture is the build's: the receipt computed when the
     * program was built, byte for byte, beside the archive it names. */
    size_t wlen = 0, elen = 0, zlen = 0, blen = 0;
    char *written = bl_test_read(bl_rt_at(q, rec, "environment/source.json"), &wlen);
    const void *embedded = bl_source_receipt_text(&elen);
    assert_int_equal(wlen, elen);
    assert_memory_equal(written, embedded, elen);
    free(written);
    char *zip = bl_test_read(bl_rt_at(q, rec, "environment/package-source.zip"), &zlen);
    const void *bundle = bl_source_bundle(&blen);
    assert_int_equal(zlen, blen);
    assert_memory_equal(zip, bundle, blen);
    free(zip);

    /* A tampered artifact: the map still prints, naming it; exit 1. */
    char *summary = bl_test_read(bl_rt_at(q, rec, "summary/summary.json"), NULL);
    bl_rt_write_text(q, "{}\n");
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", rec), 1);
    assert_non_null(strstr(out, "\"invalid_artifacts\": [\"summary/summary.json\"]"));
    assert_non_null(strstr(out, "\"status\": \"incomplete\""));
    free(out);
    free(err);
    bl_rt_write_text(q, summary);
    free(summary);
    /* A deleted one too. */
    char *seeds = bl_test_read(bl_rt_at(q, rec, "seeds.csv"), NULL);
    assert_int_equal(unlink(q), 0);
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", rec), 1);
    assert_non_null(strstr(out, "\"invalid_artifacts\": [\"seeds.csv\"]"));
    free(out);
    free(err);
    bl_rt_write_text(q, seeds);
    free(seeds);
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", rec), 0);
    free(out);
    free(err);

    /* A truncated manifest: one error line, nothing on stdout, exit 1. */
    char *manifest = bl_test_read(bl_rt_at(q, rec, "record.toml"), NULL);
    char *cut = strdup(manifest);
    cut[strlen(cut) - 30] = 0;
    bl_rt_write_text(q, cut);
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", rec), 1);
    assert_string_equal(out, "");
    assert_int_equal(strncmp(err, "brainlesslab: ValueError: ", 26), 0);
    assert_non_null(strstr(err, "record.toml:"));
    assert_int_equal(strchr(err, '\n') - err, (long)strlen(err) - 1);
    free(out);
    free(err);
    bl_rt_write_text(q, manifest);
    free(manifest);
    free(cut);

    /* Not a real directory (§8 test_inspect_reports_bad_record_without_execution). */
    char link[4400];
    assert_int_equal(symlink(rec, bl_rt_at(link, fx->dir, "record-link")), 0);
    const char *bad[] = {bl_rt_at(p, fx->dir, "missing"), link, bl_rt_at(q, rec, "DONE")};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", bad[i]), 1);
        assert_string_equal(out, "");
        assert_string_equal(err, "brainlesslab: ValueError: a record must be a real directory\n");
        free(out);
        free(err);
    }
    /* A directory without a manifest is no record. */
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", fx->dir), 1);
    assert_string_equal(out, "");
    assert_int_equal(strncmp(err, "brainlesslab: FileNotFoundError: ", 33), 0);
    free(out);
    free(err);
    free(rec);
}

/* ---- recording channels ---------------------------------------------------------------- */

/* The replay of one trial ends at its last world tick; files are numbered
 * by sorted trial key; probe events come three per completed trial (§8
 * test_records_replay_and_cli_are_real). */
static void test_recording_channels(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    /* Delays (0, 3) with 8-tick cues and responses: horizon 19. */
    bl_rt_at(p, fx->dir, "replay.toml");
    char text[4096];
    snprintf(text, sizeof text, cue_plan, "replay", 2, 6, "[0, 3]");
    char *cue = strstr(text, "cue_ticks = 2\n");
    memcpy(cue, "cue_ticks = 8\n", 14);
    char *resp = strstr(text, "response_ticks = 2\n");
    memcpy(resp, "response_ticks = 8\n", 19);
    bl_rt_write_text(p, text);
    char *rec = run_ok(p, fx->root, "--recording replay");
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "inspect '%s'", rec), 0);
    assert_non_null(strstr(out, "\"status\": \"complete\""));
    free(out);
    free(err);
    /* Twelve trials, keys sorted as bytes: baseline/0/0 .. baseline/1/5. */
    bl_json *first = NULL;
    OK_E(bl_json_read_file(bl_rt_at(q, rec, "replays/trial_00000000.json"), &first, &e_));
    assert_true(bl_rt_exists(bl_rt_at(q, rec, "replays/trial_00000011.json")));
    assert_false(bl_rt_exists(bl_rt_at(q, rec, "replays/trial_00000012.json")));
    assert_string_equal(bl_json_get_string(bl_json_get(first, "format"), NULL),
                        "brainlesslab-replay");
    assert_int_equal(bl_json_get_int(bl_json_get(first, "version")), 1);
    assert_string_equal(bl_json_get_string(bl_json_get(first, "trial_key"), NULL),
                        "baseline/0/0");
    assert_string_equal(bl_json_get_string(bl_json_get(first, "task"), NULL), "delayed_cue");
    assert_string_equal(bl_json_get_string(bl_json_get(first, "node"), NULL), "falandays");
    const bl_json *prov = bl_json_get(first, "provenance");
    bl_json *m = NULL;
    OK_E(bl_toml_read_file(bl_rt_at(q, rec, "record.toml"), &m, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(prov, "contract_hash"), NULL),
                        bl_json_get_string(bl_json_get(m, "contract_hash"), NULL));
    bl_json_destroy(m);
    const bl_json *frames = bl_json_get(first, "frames");
    const bl_json *trial = bl_json_get(prov, "trial");
    int64_t ticks = bl_json_get_int(bl_json_get(trial, "completed_ticks"));
    assert_true(ticks == 16 || ticks == 19);
    assert_int_equal(bl_json_size(frames), ticks);
    const bl_json *last = bl_json_at(frames, bl_json_size(frames) - 1);
    assert_int_equal(bl_json_get_int(bl_json_get(last, "tick")), ticks);
    bl_json_destroy(first);
    free(rec);

    /* probe_events: the three data files, three events per trial. */
    rec = run_ok(fx->plan, fx->root, "--recording probe_events");
    char *events = bl_test_read(bl_rt_at(q, rec, "data/probe_events.csv"), NULL);
    size_t lines = 0;
    for (char *s = events; (s = strstr(s, "\r\n")) != NULL; s += 2)
        lines++;
    assert_int_equal(lines, 1 + 3 * 6);
    assert_non_null(strstr(events, ",event_00000017,"));
    free(events);
    assert_true(bl_rt_exists(bl_rt_at(q, rec, "data/probe_features.npz")));
    assert_true(bl_rt_exists(bl_rt_at(q, rec, "data/probe_trials.csv")));
    bl_json *map = inspect_map(rec);
    assert_true(bl_json_get_bool(bl_json_get(map, "complete")));
    bl_json_destroy(map);
    free(rec);
}

/* ---- calibration records ---------------------------------------------------------------- */

static void test_calibration_record_directory(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    /* Freeze a CartPole null (its episodes are short) into a record. */
    bl_json *task = NULL;
    OK_E(bl_json_parse("{\"kind\": \"cartpole_plank_easy\"}", 31, "task", &task, &e_));
    bl_plan *plan = NULL;
    OK_E(bl_plan_calibrate(task, 91337, NULL, 0, &plan, &e_));
    bl_json_destroy(task);
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_plan_write(plan, &b, &e_));
    bl_plan_destroy(plan);
    bl_rt_write_text(bl_rt_at(p, fx->dir, "calibrate.toml"), b.data);
    bl_buf_clear(&b);
    char cal_root[4400];
    bl_rt_at(cal_root, fx->dir, "calibrations");
    char *cal = run_ok(p, cal_root, "--batch-size 256");

    /* A profile of the same null pools it: empirical adjustment. */
    bl_rt_at(p, fx->dir, "cartpole.toml");
    bl_rt_write_text(p, "format = \"brainlesslab-plan\"\n"
                "format_version = 4\n"
                "id = \"cartpole\"\n"
                "[evaluation]\n"
                "blocks = 2\n"
                "trials_per_block = 2\n"
                "[[targets]]\n"
                "id = \"null\"\n"
                "controller = \"reference_null\"\n"
                "[targets.composition.task]\n"
                "kind = \"cartpole_plank_easy\"\n");
    char extra[4500];
    snprintf(extra, sizeof extra, "--calibration '%s'", cal);
    char *rec = run_ok(p, fx->root, extra);
    char *trials = bl_test_read(bl_rt_at(q, rec, "trials.csv"), NULL);
    assert_non_null(strstr(trials, ",null_adjusted_empirical,"));
    assert_null(strstr(trials, "calibration_unavailable"));
    free(trials);
    free(rec);

    /* An incomplete calibration record is refused before anything exists. */
    char *doc = bl_test_read(bl_rt_at(q, cal, "calibration.json"), NULL);
    bl_rt_write_text(q, "{\"calibrations\":[],\"format\":\"brainlesslab-calibrations\",\"version\":1}\n");
    char root2[4400];
    bl_rt_at(root2, fx->dir, "refused");
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "run '%s' --root '%s' %s", p, root2, extra), 1);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "calibration record is incomplete or has invalid checksums\n"));
    assert_false(bl_rt_exists(root2));
    free(out);
    free(err);
    bl_rt_write_text(q, doc);
    free(doc);
    free(cal);
}

/* ---- crash safety ------------------------------------------------------------------------ */

typedef struct child {
    pid_t pid;
    char out[4400], err[4400];
} child;

/* Starts `brainlesslab run plan --root root` with stdout and stderr in
 * files (stdout into `out_fd` instead when it is not -1); `fsize` > 0 sets
 * RLIMIT_FSIZE (SIGXFSZ left at its default: the program must protect
 * itself). */
static void start_run_to(child *c, const char *dir, const char *plan, const char *root,
                         rlim_t fsize, int out_fd)
{
    bl_rt_at(c->out, dir, "stdout");
    bl_rt_at(c->err, dir, "stderr");
    c->pid = fork();
    assert_true(c->pid >= 0);
    if (c->pid == 0) {
        int o = out_fd >= 0 ? out_fd : open(c->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(c->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(99);
        signal(SIGXFSZ, SIG_DFL);
        struct rlimit rl = {fsize, fsize};
        if (fsize > 0 && setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(97);
        execl(bl_test_cli_path(), "brainlesslab", "run", plan, "--root", root, (char *)NULL);
        _exit(98);
    }
}

static void start_run(child *c, const char *dir, const char *plan, const char *root,
                      rlim_t fsize)
{
    start_run_to(c, dir, plan, root, fsize, -1);
}

/* Waits at most `seconds` for the child; returns its wait status. */
static int finish(child *c, double seconds)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    int status = 0;
    for (int i = 0; i < (int)(seconds * 100); i++) {
        if (waitpid(c->pid, &status, WNOHANG) == c->pid)
            return status;
        nanosleep(&tick, NULL);
    }
    kill(c->pid, SIGKILL);
    waitpid(c->pid, &status, 0);
    fail_msg("the run did not end within %.0f s", seconds);
    return status;
}

/* Waits until the run's reservation exists (at most 60 s); returns the
 * record path (heap). */
static char *await_reservation(child *c, const char *root)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 6000; i++) {
        char *rec = only_record(root);
        if (rec) {
            char p[4400];
            if (bl_rt_exists(bl_rt_at(p, rec, ".RESERVED")))
                return rec;
            free(rec);
        }
        int status;
        if (waitpid(c->pid, &status, WNOHANG) == c->pid)
            fail_msg("the run ended (status %d) before its reservation was seen", status);
        nanosleep(&tick, NULL);
    }
    kill(c->pid, SIGKILL);
    fail_msg("no reservation within 60 s");
    return NULL;
}

/* A stop signal during execution: FAILED written with the signal's kind and
 * message, .RESERVED kept, exit 128 + the signal, one line on stderr,
 * nothing on stdout. */
static void stop_during_execution(const bl_rt_fixture *fx, int sig, const char *kind,
                                  const char *message)
{
    char p[4400], q[4400], root[4400], line[200], expected[300];
    snprintf(root, sizeof root, "%s/records-%d", fx->dir, sig);
    bl_rt_write_text(bl_rt_at(p, fx->dir, "long.toml"), long_plan);
    child c;
    start_run(&c, fx->dir, p, root, 0);
    char *rec = await_reservation(&c, root);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL); /* execution under way */
    assert_int_equal(kill(c.pid, sig), 0);
    int status = finish(&c, 60);
    if (!WIFEXITED(status)) {
        /* Say how it ended (seen once in CI, not reproduced since): the
         * stop signal itself means its handler was not installed yet. */
        char *early = bl_test_read(c.err, NULL);
        fail_msg("signal %d: the run ended by signal %d, not an exit; stderr: %s", sig,
                 WIFSIGNALED(status) ? WTERMSIG(status) : -1, early ? early : "");
    }
    char *err = bl_test_read(c.err, NULL), *out = bl_test_read(c.out, NULL);
    snprintf(line, sizeof line, "brainlesslab: %s: %s\n", kind, message);
    if (WEXITSTATUS(status) != 128 + sig || strcmp(err, line) != 0)
        fail_msg("signal %d: exit %d, stderr: %s", sig, WEXITSTATUS(status), err);
    assert_string_equal(out, "");
    free(err);
    free(out);
    char *failed = bl_test_read(bl_rt_at(q, rec, "FAILED"), NULL);
    snprintf(expected, sizeof expected,
             "{\"error_type\":\"%s\",\"message\":\"%s\",\"status\":\"failed\"}\n", kind, message);
    assert_string_equal(failed, expected);
    free(failed);
    assert_true(bl_rt_exists(bl_rt_at(q, rec, ".RESERVED")));
    assert_false(bl_rt_exists(bl_rt_at(q, rec, "DONE")));
    /* No manifest: inspect refuses it (exit 1), never "complete". */
    char *o, *e;
    assert_int_equal(bl_rt_cli(&o, &e, "inspect '%s'", rec), 1);
    assert_string_equal(o, "");
    free(o);
    free(e);
    free(rec);
}

static void test_sigint_fails_the_reservation(void **state)
{
    stop_during_execution(*state, SIGINT, "KeyboardInterrupt", "interrupted");
}

/* kill's default signal and a closed terminal stop a run as Ctrl-C does,
 * as Python's handled SIGTERM does: SystemExit, exit 143 and 129. */
static void test_sigterm_and_sighup_fail_the_reservation(void **state)
{
    stop_during_execution(*state, SIGTERM, "SystemExit", "terminated by SIGTERM");
    stop_during_execution(*state, SIGHUP, "SystemExit", "terminated by SIGHUP");
}

/* A stop signal that arrives once DONE is written changes nothing: the
 * record is complete, so the run prints it and exits 0, as stdout and the
 * exit code must always agree with the record. Deterministic: stdout is a
 * pipe the test has filled, so the run cannot finish (it must print its
 * line) until the test has seen DONE and sent the signal. */
static void test_signal_after_done_reports_the_record(void **state)
{
    bl_rt_fixture *fx = *state;
    static const int sigs[] = {SIGTERM, SIGHUP, SIGINT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char root[4400], q[4400];
        snprintf(root, sizeof root, "%s/after-%d", fx->dir, sigs[i]);
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        (void)fcntl(fds[1], F_SETPIPE_SZ, 4096);
        assert_int_equal(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
        char fill[4096];
        memset(fill, 'x', sizeof fill);
        size_t filled = 0;
        for (ssize_t n; (n = write(fds[1], fill, sizeof fill)) > 0;)
            filled += (size_t)n;
        assert_int_equal(errno, EAGAIN);
        assert_int_equal(fcntl(fds[1], F_SETFL, 0), 0); /* the run's writes block */
        child c;
        start_run_to(&c, fx->dir, fx->plan, root, 0, fds[1]);
        close(fds[1]);
        char *rec = NULL;
        struct timespec tick = {0, 5 * 1000 * 1000};
        for (int k = 0; k < 12000 && !rec; k++) {
            rec = only_record(root);
            if (rec && !bl_rt_exists(bl_rt_at(q, rec, "DONE"))) {
                free(rec);
                rec = NULL;
            }
            int st;
            if (!rec && waitpid(c.pid, &st, WNOHANG) == c.pid)
                fail_msg("the run ended (status %d) before DONE was seen", st);
            if (!rec)
                nanosleep(&tick, NULL);
        }
        if (!rec) {
            kill(c.pid, SIGKILL);
            fail_msg("no DONE within 60 s");
        }
        assert_int_equal(kill(c.pid, sigs[i]), 0);
        char *out = calloc(1, filled + 4096);
        assert_non_null(out);
        size_t got = 0;
        for (ssize_t n; got < filled + 4095 && (n = read(fds[0], out + got, filled + 4095 - got)) > 0;)
            got += (size_t)n;
        close(fds[0]);
        int status = finish(&c, 60);
        char *err = bl_test_read(c.err, NULL);
        char line[4600];
        snprintf(line, sizeof line, "{\"record\": \"%s\", \"status\": \"complete\"}\n", rec);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got < filled ||
            strcmp(out + filled, line) != 0 || strstr(err, "brainlesslab:"))
            fail_msg("signal %d after DONE: status %d, stdout '%s', stderr: %s", sigs[i], status,
                     got >= filled ? out + filled : "", err);
        assert_true(bl_rt_exists(bl_rt_at(q, rec, "DONE")));
        assert_false(bl_rt_exists(bl_rt_at(q, rec, "FAILED")));
        bl_json *map = inspect_map(rec);
        assert_true(bl_json_get_bool(bl_json_get(map, "complete")));
        bl_json_destroy(map);
        free(err);
        free(out);
        free(rec);
    }
}

/* SIGKILL leaves only the reservation, which never inspects as complete. */
static void test_sigkill_never_looks_complete(void **state)
{
    bl_rt_fixture *fx = *state;
    char p[4400], q[4400];
    bl_rt_write_text(bl_rt_at(p, fx->dir, "long.toml"), long_plan);
    child c;
    start_run(&c, fx->dir, p, fx->root, 0);
    char *rec = await_reservation(&c, fx->root);
    assert_int_equal(kill(c.pid, SIGKILL), 0);
    int status = finish(&c, 60);
    assert_true(WIFSIGNALED(status));
    assert_true(bl_rt_exists(bl_rt_at(q, rec, ".RESERVED")));
    assert_false(bl_rt_exists(bl_rt_at(q, rec, "DONE")));
    char *o, *e;
    assert_int_equal(bl_rt_cli(&o, &e, "inspect '%s'", rec), 1);
    free(o);
    free(e);
    free(rec);

    /* And at any moment of a short run, writing included: whatever is left
     * is complete only if it really is (all files, all rows, DONE). */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char once[4400];
    free(run_ok(fx->plan, bl_rt_at(once, fx->dir, "timing"), ""));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double run_ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    size_t complete = 0, cut = 0;
    for (int k = 0; k < 24; k++) {
        char root[4400];
        snprintf(root, sizeof root, "%s/kill-%02d", fx->dir, k);
        start_run(&c, fx->dir, fx->plan, root, 0);
        double ns = run_ns * k / 20.0;
        struct timespec delay = {(time_t)(ns / 1e9), (long)((long long)ns % 1000000000LL)};
        nanosleep(&delay, NULL);
        kill(c.pid, SIGKILL);
        (void)finish(&c, 60);
        rec = only_record(root);
        if (!rec) {
            cut++;
            continue;
        }
        bl_json *map = NULL;
        bl_error error = {0};
        if (bl_record_inspect(rec, &map, &error) != BL_OK ||
            !bl_json_get_bool(bl_json_get(map, "complete"))) {
            assert_false(bl_rt_exists(bl_rt_at(q, rec, "DONE")) && bl_rt_exists(bl_rt_at(q, rec, "record.toml")) &&
                         !bl_rt_exists(bl_rt_at(p, rec, "FAILED")) && map &&
                         bl_json_get_bool(bl_json_get(map, "checksums_valid")));
            bl_json_destroy(map);
            free(rec);
            cut++;
            continue;
        }
        complete++;
        char *done = bl_test_read(bl_rt_at(q, rec, "DONE"), NULL);
        assert_string_equal(done, "complete\n");
        free(done);
        assert_false(bl_rt_exists(bl_rt_at(q, rec, "FAILED")));
        const bl_json *artifacts = bl_json_get(bl_json_get(map, "manifest"), "artifacts");
        assert_int_equal(bl_json_size(artifacts), 10);
        char *trials = bl_test_read(bl_rt_at(q, rec, "trials.csv"), NULL);
        size_t lines = 0;
        for (char *s = trials; (s = strstr(s, "\r\n")) != NULL; s += 2)
            lines++;
        assert_int_equal(lines, 7);
        free(trials);
        bl_json_destroy(map);
        free(rec);
    }
    print_message("SIGKILL at 24 moments: %zu complete records, %zu cut short\n", complete, cut);
    assert_true(cut > 0);
}

/* A full disk (RLIMIT_FSIZE, SIGXFSZ at its default): the write fails with
 * EFBIG, the record ends FAILED with its partial files, exit 1. */
static void test_disk_full_run(void **state)
{
    bl_rt_fixture *fx = *state;
    char q[4400];
    child c;
    start_run(&c, fx->dir, fx->plan, fx->root, 16384);
    int status = finish(&c, 60);
    assert_true(WIFEXITED(status));
    char *err = bl_test_read(c.err, NULL), *out = bl_test_read(c.out, NULL);
    char *rec = only_record(fx->root);
    assert_non_null(rec);
    if (WEXITSTATUS(status) != 1 || strncmp(err, "brainlesslab: OSError: ", 23) != 0 ||
        !strstr(err, ": cannot write: File too large\n") || strchr(err, '\n')[1] != 0)
        fail_msg("exit %d, stderr: %s", WEXITSTATUS(status), err);
    assert_string_equal(out, "");
    free(out);
    free(err);
    bl_json *failed = NULL;
    OK_E(bl_json_read_file(bl_rt_at(q, rec, "FAILED"), &failed, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(failed, "error_type"), NULL), "OSError");
    const char *message = bl_json_get_string(bl_json_get(failed, "message"), NULL);
    if (strncmp(message, "<record>/", 9) != 0 || !strstr(message, "File too large"))
        fail_msg("FAILED message: %s", message);
    bl_json_destroy(failed);
    assert_true(bl_rt_exists(bl_rt_at(q, rec, ".RESERVED")));
    assert_true(bl_rt_exists(bl_rt_at(q, rec, "request.toml")));
    assert_false(bl_rt_exists(bl_rt_at(q, rec, "DONE")));
    free(rec);
}

/* A read-only root: /proc (nothing can be created there, also as root),
 * and, where a private mount namespace is available, a read-only bind
 * mount. The run is refused with one line and creates nothing. */
static void test_read_only_root(void **state)
{
    bl_rt_fixture *fx = *state;
    char root[4400];
    snprintf(root, sizeof root, "/proc/bl-test-%ld/records", (long)getpid());
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "run '%s' --root '%s'", fx->plan, root), 1);
    assert_string_equal(out, "");
    assert_int_equal(strncmp(err, "brainlesslab: FileNotFoundError: ", 33), 0);
    free(out);
    free(err);

    char ro[4400], cmd[32768], outp[4400];
    bl_rt_at(ro, fx->dir, "ro");
    assert_int_equal(mkdir(ro, 0777), 0);
    bl_rt_at(outp, fx->dir, "ro-stderr");
    snprintf(cmd, sizeof cmd,
             "unshare --mount sh -c \"mount --bind -o ro '%s' '%s' && "
             "'%s' run '%s' --root '%s/records' 2>'%s'; echo \\$?\" 2>/dev/null",
             ro, ro, bl_test_cli_path(), fx->plan, ro, outp);
    FILE *pipe = popen(cmd, "r");
    assert_non_null(pipe);
    char line[64] = "";
    bool got = fgets(line, sizeof line, pipe) != NULL;
    pclose(pipe);
    if (!got || strcmp(line, "1\n") != 0) {
        print_message("no private read-only bind mount here (%s); /proc covered it\n",
                      got ? line : "unshare failed");
        return;
    }
    char *text = bl_test_read(outp, NULL);
    if (strncmp(text, "brainlesslab: OSError: ", 23) != 0 ||
        !strstr(text, "Read-only file system"))
        fail_msg("stderr: %s", text);
    free(text);
    char p[4400];
    assert_false(bl_rt_exists(bl_rt_at(p, ro, "records")));
}

/* `inspect` runs with a deadline and must fail with exactly `line` on
 * stderr, nothing on stdout, exit 1. */
static void expect_inspect_line(const char *record, const char *line)
{
    char *out, *err;
    char args[4600];
    snprintf(args, sizeof args, "inspect '%s'", record);
    int rc = bl_test_run_cli_within(20, args, &out, &err);
    if (rc != 1 || strcmp(err, line) != 0)
        fail_msg("inspect: exit %d, stderr:\n%s\nexpected:\n%s", rc, err, line);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

/* A record whose record.toml is a FIFO: inspect once waited forever for a
 * writer; now it answers at once with what it found. */
static void test_inspect_fifo_manifest(void **state)
{
    bl_rt_fixture *fx = *state;
    char rec[4400], q[4400], line[9000];
    bl_rt_at(rec, fx->dir, "fifo-record");
    assert_int_equal(mkdir(rec, 0777), 0);
    assert_int_equal(mkfifo(bl_rt_at(q, rec, "record.toml"), 0600), 0);
    bl_rt_write_text(bl_rt_at(q, rec, "DONE"), "complete\n");
    snprintf(line, sizeof line,
             "brainlesslab: OSError: %s/record.toml: is a FIFO, not a regular file\n", rec);
    expect_inspect_line(rec, line);
}

/* A record that failed before its manifest was written (.RESERVED and
 * FAILED only): still exit 1 (§3.3), but the line says the record failed
 * and quotes its FAILED marker. */
static void test_inspect_failed_before_manifest(void **state)
{
    bl_rt_fixture *fx = *state;
    char rec[4400], line[9000];
    bl_rt_at(rec, fx->dir, "early");
    bl_rt_fail_before_manifest(rec, BL_ENOMEM, "allocation budget is 786432; increase "
                                               "memory_budget_bytes explicitly");
    snprintf(line, sizeof line,
             "brainlesslab: FileNotFoundError: %s/record.toml: No such file or directory; the "
             "record failed before its manifest was written: MemoryError: allocation budget is "
             "786432; increase memory_budget_bytes explicitly\n",
             rec);
    expect_inspect_line(rec, line);
}

int main(void)
{
#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, bl_rt_teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_inspect_command),
        TEST(test_recording_channels),
        TEST(test_calibration_record_directory),
        TEST(test_sigint_fails_the_reservation),
        TEST(test_sigterm_and_sighup_fail_the_reservation),
        TEST(test_signal_after_done_reports_the_record),
        TEST(test_sigkill_never_looks_complete),
        TEST(test_disk_full_run),
        TEST(test_read_only_root),
        TEST(test_inspect_fifo_manifest),
        TEST(test_inspect_failed_before_manifest),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
