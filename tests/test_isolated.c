/* `profile --isolated`, the stepping benchmark (src/measure/stepping*.c):
 * the final-state digest is the same whatever the partition and path (batch
 * sizes, threads, lane policy, instruction set) and changes with the work;
 * a tape taken from a record steps the model through exactly the activity
 * the record's replay holds, frame by frame, bit for bit (Falandays with
 * drive noise, gain, a shuffle and a blinding; SORN); bad flags and
 * unsuitable records are one error line with nothing created; the parent
 * writes a stepping-benchmark receipt. No test asserts a wall-clock time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/records.h"
#include "brainlesslab/run.h"
#include "measure/stepping_internal.h"
#include "models/isa.h"

/* ---- helpers -------------------------------------------------------------------- */

static bl_profile_args synthetic_args(const char *node, const char *dtype, int64_t batch,
                                      int64_t threads)
{
    bl_profile_args a;
    bl_profile_args_default(&a);
    a.destination = "unused";
    a.worker_backend = "cpu";
    a.process_phase = "isolated_new_process";
    a.isolated = true;
    a.dtype = dtype;
    a.node = node;
    a.count = 24;
    a.batch_size = batch;
    a.cpu_threads = threads;
    a.samples = 2;
    a.warmups = 1;
    a.frames = 40;
    a.has_frames = true;
    a.tape_inputs = "bernoulli:0.4";
    a.tape_seed = 3;
    a.tape_seed_given = true;
    return a;
}

/* Runs the worker in this process; it must complete. Returns its receipt. */
static bl_json *worker(const bl_profile_args *a)
{
    bl_error err = {0};
    bl_json *r = NULL;
    int code = bl_stepping_worker(a, NULL, &r, &err);
    if (!r)
        fail_msg("no receipt: %s", err.msg);
    if (code != 0)
        fail_msg("worker failed: %s", bl_json_get(r, "error") &&
                                              bl_json_kindof(bl_json_get(r, "error")) ==
                                                  BL_JSON_STRING
                                          ? bl_test_str(r, "error")
                                          : "?");
    return r;
}

/* The receipt's digest into out; checks what every complete receipt holds. */
static void digest_of(const bl_profile_args *a, char out[65])
{
    bl_json *r = worker(a);
    assert_string_equal(bl_test_str(r, "status"), "complete");
    snprintf(out, 65, "%s", bl_test_str(r, "final_state_sha256"));
    assert_int_equal(strlen(out), 64);
    const bl_json *samples = bl_test_get(r, "samples");
    assert_int_equal(bl_json_size(samples), (size_t)a->samples);
    assert_int_equal(bl_json_size(bl_test_get(r, "warmups")), (size_t)a->warmups);
    for (size_t i = 0; i < bl_json_size(samples); i++) {
        const bl_json *s = bl_json_at(samples, i);
        assert_string_equal(bl_test_str(s, "final_state_sha256"), out);
        assert_int_equal(bl_json_get_int(bl_test_get(s, "neural_frames")), a->frames * a->batch_size);
        assert_true(bl_json_get_real(bl_test_get(s, "cpu_seconds")) >= 0);
    }
    const bl_json *stats = bl_test_get(r, "statistics");
    assert_int_equal(bl_json_get_int(bl_test_get(bl_test_get(stats, "neural_frames_per_second"), "count")),
                     a->samples);
    const double activity = bl_json_get_real(bl_test_get(r, "mean_activity"));
    assert_true(activity > 0 && activity < 1);
    const bl_json *paths = bl_test_get(r, "paths");
    const char *want_isa = getenv("BL_ISA");
    if (want_isa)
        assert_string_equal(bl_test_str(paths, "instruction_set"), want_isa);
    size_t slots = 0, width;
    bl_error err = {0};
    assert_int_equal(bl_run_group_width(&width, &err), BL_OK);
    const bl_json *sizes = bl_test_get(paths, "group_sizes");
    for (size_t i = 0; i < bl_json_size(sizes); i++) {
        assert_true(bl_json_get_int(bl_json_at(sizes, i)) <= (int64_t)width);
        slots += (size_t)bl_json_get_int(bl_json_at(sizes, i));
    }
    assert_int_equal(slots, (size_t)a->batch_size);
    assert_true(bl_json_get_int(bl_test_get(bl_test_get(r, "model"), "state_bytes_per_slot")) > 0);
    bl_json_destroy(r);
}

/* ---- digests across partitions and paths ------------------------------------------- */

static void digests_across_paths(const char *node, const char *dtype)
{
    static const int64_t batches[] = {1, 3, 8, 11};
    static const char *const lanes[] = {"always", "never"};
    char want[65] = "", got[65];
    size_t runs = 0;
    for (int isa = 0; isa < BL_ISA_COUNT; isa++) {
        if (!bl_isa_supported((bl_isa)isa))
            continue;
        setenv("BL_ISA", bl_isa_name((bl_isa)isa), 1);
        for (size_t l = 0; l < 2; l++) {
            setenv("BL_LANES", lanes[l], 1);
            for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
                for (int64_t threads = 1; threads <= 2; threads++) {
                    bl_profile_args a = synthetic_args(node, dtype, batches[b], threads);
                    digest_of(&a, got);
                    if (!want[0])
                        memcpy(want, got, sizeof want);
                    if (strcmp(want, got) != 0)
                        fail_msg("%s %s: digest %s at batch %lld, %lld threads, lanes %s, %s; "
                                 "%s first",
                                 node, dtype, got, (long long)batches[b], (long long)threads,
                                 lanes[l], bl_isa_name((bl_isa)isa), want);
                    runs++;
                }
        }
    }
    unsetenv("BL_ISA");
    unsetenv("BL_LANES");
    assert_true(runs >= 16);
    /* The digest follows the work: another tape, more frames, the other
     * dtype each give another. */
    bl_profile_args a = synthetic_args(node, dtype, 3, 1);
    a.tape_seed = 4;
    digest_of(&a, got);
    assert_string_not_equal(got, want);
    a = synthetic_args(node, dtype, 3, 1);
    a.frames = 41;
    digest_of(&a, got);
    assert_string_not_equal(got, want);
    a = synthetic_args(node, strcmp(dtype, "float32") == 0 ? "float64" : "float32", 3, 1);
    digest_of(&a, got);
    assert_string_not_equal(got, want);
}

static void test_digest_falandays_float32(void **state)
{
    (void)state;
    digests_across_paths("falandays", "float32");
}

static void test_digest_falandays_float64(void **state)
{
    (void)state;
    digests_across_paths("falandays", "float64");
}

static void test_digest_sorn(void **state)
{
    (void)state;
    digests_across_paths("sorn", "float32");
}

/* BL_GROUP_CAP narrows the groups here as in the runner, and the digest
 * does not move; a value out of range fails the receipt with its reason. */
static void test_group_cap(void **state)
{
    (void)state;
    char want[65], got[65];
    bl_profile_args a = synthetic_args("falandays", "float32", 11, 1);
    digest_of(&a, want);
    setenv("BL_GROUP_CAP", "3", 1);
    bl_json *r = worker(&a);
    const bl_json *sizes = bl_test_get(bl_test_get(r, "paths"), "group_sizes");
    assert_int_equal(bl_json_size(sizes), 4); /* 3 + 3 + 3 + 2 */
    bl_json_destroy(r);
    digest_of(&a, got);
    assert_string_equal(got, want);
    setenv("BL_GROUP_CAP", "0", 1);
    bl_error err = {0};
    r = NULL;
    const int code = bl_stepping_worker(&a, NULL, &r, &err);
    unsetenv("BL_GROUP_CAP");
    assert_int_not_equal(code, 0);
    assert_non_null(r);
    assert_string_equal(bl_test_str(r, "status"), "failed");
    assert_non_null(
        strstr(bl_test_str(r, "error"), "BL_GROUP_CAP=0: a group takes 1 to 1024 trials"));
    bl_json_destroy(r);
}

/* The state digest tells slots apart exactly: equal for two slots stepped
 * alike, different after one more frame of one of them. */
static void test_state_digest(void **state)
{
    (void)state;
    bl_profile_args a = synthetic_args("falandays", "float64", 2, 1);
    bl_step_tape t;
    OK_E(bl_step_tape_build(&a, &t, &e_));
    const bl_falandays_init *inits[2] = {t.fal[0], t.fal[0]};
    bl_model *m = NULL;
    OK_E(bl_model_create_falandays(inits, 2, t.dtype, &m, &e_));
    char d0[65], d1[65];
    OK_E(bl_step_state_digest(m, 0, d0, &e_));
    OK_E(bl_step_state_digest(m, 1, d1, &e_));
    assert_string_equal(d0, d1);
    const int32_t only0[2] = {1, 0};
    double *x = calloc(2 * t.r, sizeof *x), *noise = calloc(2 * t.n, sizeof *noise);
    memcpy(x, t.streams[0].inputs, t.r * sizeof *x);
    const bl_matrix xin = {t.dtype, 2, t.r, x}, nz = {t.dtype, 2, t.n, noise};
    OK_E(bl_model_step(m, &xin, &nz, only0, 2, &e_));
    OK_E(bl_step_state_digest(m, 0, d0, &e_));
    OK_E(bl_step_state_digest(m, 1, d1, &e_));
    assert_string_not_equal(d0, d1);
    OK_E(bl_model_reset(m, only0, 2, &e_));
    OK_E(bl_step_state_digest(m, 0, d0, &e_));
    assert_string_equal(d0, d1);
    free(x);
    free(noise);
    bl_model_destroy(m);
    bl_step_tape_clear(&t);
}

/* ---- tapes from records --------------------------------------------------------- */

/* Delayed Cue, 2 blocks of 2 trials, count nodes, with interventions that
 * touch the inputs, a gain and, for Falandays, the Oosawa drive. */
static const char plan_text[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"tape\"\n"
    "[evaluation]\n"
    "blocks = 2\n"
    "trials_per_block = 2\n"
    "root_seed = 21\n"
    "[numerics]\n"
    "dtype = \"%s\"\n"
    "[[targets]]\n"
    "id = \"net\"\n"
    "interventions = [{tick = 3, verb = \"shuffle_input\"}, {tick = 5, verb = "
    "\"blind_input\"}]\n"
    "[targets.composition]\n"
    "count = 16\n"
    "input_gain = 1.5\n"
    "[targets.composition.node]\n"
    "kind = \"%s\"\n"
    "%s"
    "[targets.composition.task]\n"
    "kind = \"delayed_cue\"\n"
    "[targets.composition.task.options]\n"
    "cue_ticks = 2\n"
    "delays = [1, 3]\n"
    "response_ticks = 2\n";

static const char oosawa[] = "[targets.composition.node.parameters]\n"
                             "drive = \"oosawa\"\n"
                             "membrane_noise = 0.2\n"
                             "noise_gain = 0.3\n";

/* Runs the plan with `recording` into dir/records; returns the record's
 * path (heap). */
static char *make_record(const char *dir, const char *node, const char *dtype, const char *extra,
                         const char *recording)
{
    char path[4096], text[4096], args[8192];
    snprintf(path, sizeof path, "%s/%s-%s-%s.toml", dir, node, dtype, recording);
    snprintf(text, sizeof text, plan_text, dtype, node, extra);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    snprintf(args, sizeof args, "run '%s' --root '%s/records' --recording %s", path, dir,
             recording);
    char *out = NULL, *err = NULL;
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("run failed (%d): %s", rc, err);
    bl_json *line = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &line, &e_));
    char *record = bl_strdup(bl_test_str(line, "record"));
    bl_json_destroy(line);
    free(out);
    free(err);
    return record;
}

static bl_profile_args record_args(const char *record, const char *keys, int64_t batch)
{
    bl_profile_args a;
    bl_profile_args_default(&a);
    a.destination = "unused";
    a.worker_backend = "cpu";
    a.isolated = true;
    a.batch_size = batch;
    a.samples = 1;
    a.warmups = 0;
    a.frames = 25;
    a.has_frames = true;
    a.tape_record = record;
    a.tape_trials = keys;
    return a;
}

/* Steps each stream of the tape through a one-slot model of its wiring
 * and compares the activity, frame by frame, with the replay document's
 * own frames (read here, apart from the tape); returns the frames compared. */
static size_t replay_through_model(const char *record, const bl_step_tape *t)
{
    const size_t vsize = bl_dtype_size(t->dtype);
    size_t compared = 0;
    for (size_t s = 0; s < t->nstreams; s++) {
        const bl_step_stream *st = &t->streams[s];
        bl_buf text;
        bl_buf_init(&text);
        OK_E(bl_replay_record_text(record, st->key, &text, &e_));
        bl_json *doc = NULL;
        OK_E(bl_json_parse(text.data, text.len, "replay", &doc, &e_));
        bl_buf_clear(&text);
        const bl_json *frames = bl_test_get(doc, "frames");
        assert_int_equal(bl_json_size(frames), st->frames);
        bl_model *m = NULL;
        if (t->fal) {
            const bl_falandays_init *init = t->fal[st->wiring];
            OK_E(bl_model_create_falandays(&init, 1, t->dtype, &m, &e_));
        } else {
            const bl_sorn_init *init = t->sorn[st->wiring];
            OK_E(bl_model_create_sorn(&init, 1, t->dtype, &m, &e_));
        }
        void *zero = calloc(t->n, vsize);
        const int32_t one = 1;
        for (size_t j = 0; j < st->frames; j++) {
            const bl_matrix xin = {t->dtype, 1, t->r, (const char *)st->inputs + j * t->r * vsize};
            const bl_matrix nz = {t->dtype, 1, t->n,
                                  st->noise ? (const char *)st->noise + j * t->n * vsize : zero};
            OK_E(bl_model_step(m, &xin, &nz, &one, 1, &e_));
            const bl_json *want = bl_test_get(bl_json_at(frames, j), "activity");
            assert_int_equal(bl_json_size(want), t->n);
            const void *act = bl_model_activity_data(m);
            for (size_t u = 0; u < t->n; u++) {
                const double got = t->dtype == BL_FLOAT32 ? (double)((const float *)act)[u]
                                                          : ((const double *)act)[u];
                const bl_json *w = bl_json_at(want, u);
                const double wv = bl_json_kindof(w) == BL_JSON_INT ? (double)bl_json_get_int(w)
                                                                   : bl_json_get_real(w);
                if (memcmp(&got, &wv, sizeof got) != 0)
                    fail_msg("%s frame %zu unit %zu: stepped %.17g, recorded %.17g", st->key, j,
                             u, got, wv);
            }
            compared++;
        }
        free(zero);
        bl_model_destroy(m);
        bl_json_destroy(doc);
    }
    return compared;
}

static void record_case(void **state, const char *node, const char *dtype, const char *extra)
{
    char *record = make_record(bl_test_dir(state), node, dtype, extra, "replay");
    bl_profile_args a = record_args(record, "net/0/0,net/0/1,net/1/1", 4);
    bl_step_tape t;
    OK_E(bl_step_tape_build(&a, &t, &e_));
    assert_int_equal(t.nstreams, 3);
    assert_int_equal(t.nwirings, 2); /* construction scope block: one per block */
    assert_string_equal(t.node, node);
    assert_int_equal(t.dtype, strcmp(dtype, "float32") == 0 ? BL_FLOAT32 : BL_FLOAT64);
    assert_int_equal(t.n, 16);
    assert_int_equal(t.r, 3);
    /* The inputs are transformed: a gain of 1.5, then blinded from tick 5. */
    bool scaled = false;
    for (size_t s = 0; s < t.nstreams; s++) {
        const bl_step_stream *st = &t.streams[s];
        assert_true(st->frames >= 5);
        for (size_t j = 0; j < st->frames; j++)
            for (size_t r = 0; r < t.r; r++) {
                const double v = t.dtype == BL_FLOAT32
                                     ? (double)((const float *)st->inputs)[j * t.r + r]
                                     : ((const double *)st->inputs)[j * t.r + r];
                if (j >= 4)
                    assert_true(v == 0);
                scaled = scaled || v == 1.5;
            }
        assert_true((st->noise != NULL) == (extra[0] != 0));
    }
    assert_true(scaled);
    assert_true(replay_through_model(record, &t) >= 18);
    bl_step_tape_clear(&t);

    /* The worker's own reference pass checks the same, on every slot. */
    bl_json *r = worker(&a);
    const bl_json *ref = bl_test_get(r, "reference");
    assert_true(bl_json_get_bool(bl_test_get(ref, "record_activity_reproduced")));
    assert_true(bl_json_get_int(bl_test_get(ref, "record_frames_compared")) >= 18);
    assert_string_equal(bl_test_str(bl_test_get(r, "tape"), "source"), "record");
    assert_string_equal(bl_test_str(r, "node"), node);
    char want[65];
    snprintf(want, sizeof want, "%s", bl_test_str(r, "final_state_sha256"));
    bl_json_destroy(r);
    /* Threads and lanes change nothing here either. */
    setenv("BL_LANES", "always", 1);
    a.cpu_threads = 2;
    a.batch_size = 7;
    r = worker(&a);
    assert_string_equal(bl_test_str(r, "final_state_sha256"), want);
    bl_json_destroy(r);
    unsetenv("BL_LANES");
    bl_free(record);
}

static void test_record_falandays_noise_float32(void **state)
{
    record_case(state, "falandays", "float32", oosawa);
}

static void test_record_falandays_float64(void **state)
{
    record_case(state, "falandays", "float64", "");
}

static void test_record_sorn(void **state)
{
    record_case(state, "sorn", "float32", "");
}

/* ---- the command line ---------------------------------------------------------------- */

/* The command must exit 2 with one error line holding `needle` (after
 * argparse's usage for a flag error) and create nothing. */
static void refused(void **state, const char *flags, const char *needle)
{
    const char *dest = bl_test_path(state, "dest");
    char args[16384];
    snprintf(args, sizeof args,
             "profile '%s' --isolated --allow-background-activity --activity-interval 0.05 %s",
             dest, flags);
    char *out = NULL, *err = NULL;
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 2 || !strstr(err, needle))
        fail_msg("%s: exit %d, stderr %s (wanted %s)", flags, rc, err, needle);
    size_t lines = 0;
    for (const char *p = err; *p; p++)
        lines += *p == '\n' && !(p[1] == ' ');
    const bool usage = strncmp(err, "usage:", 6) == 0;
    if (!usage && lines != 1)
        fail_msg("%s: %zu lines: %s", flags, lines, err);
    assert_string_equal(out, "");
    struct stat sb;
    assert_int_not_equal(lstat(dest, &sb), 0);
    free(out);
    free(err);
}

static void test_bad_flags(void **state)
{
    refused(state, "--dtype float32 --frames 0 --tape-inputs uniform --tape-seed 1",
            "--frames must be >= 1");
    refused(state, "--dtype float32 --tape-inputs uniform --tape-seed 1",
            "required: --frames");
    refused(state, "--dtype float32 --frames 5 --node bogus --tape-inputs uniform --tape-seed 1",
            "invalid choice: 'bogus'");
    refused(state, "--dtype float32 --frames 5", "needs a tape");
    refused(state, "--dtype float32 --frames 5 --tape-inputs uniform --tape-seed 1 "
                   "--tape-record x",
            "not allowed with argument --tape-record");
    refused(state, "--dtype float32 --frames 5 --tape-inputs uniform", "needs --tape-seed");
    refused(state, "--dtype float32 --frames 5 --tape-inputs poisson:2 --tape-seed 1",
            "invalid value: 'poisson:2'");
    refused(state, "--dtype float32 --frames 5 --tape-inputs bernoulli:1.5 --tape-seed 1",
            "invalid value");
    refused(state, "--dtype float32 --frames 5 --tape-inputs uniform --tape-seed 1 --trials 4",
            "--trials: not allowed with argument --isolated");
    refused(state, "--dtype float32 --frames 5 --tape-inputs uniform --tape-seed 1 "
                   "--recording replay",
            "--recording: not allowed with argument --isolated");
    refused(state, "--dtype float32 --frames 5 --tape-inputs uniform --tape-seed 1 --count 0",
            "--count must be >= 1");
    refused(state, "--frames 5 --tape-inputs uniform --tape-seed 1",
            "required: --dtype");

    /* Flags of --isolated without it. */
    const char *dest = bl_test_path(state, "dest");
    char args[8192];
    snprintf(args, sizeof args, "profile '%s' --dtype float32 --frames 5", dest);
    char *out = NULL, *err = NULL;
    assert_int_equal(bl_test_run_cli(args, &out, &err), 2);
    assert_non_null(strstr(err, "argument --frames: requires --isolated"));
    struct stat sb;
    assert_int_not_equal(lstat(dest, &sb), 0);
    free(out);
    free(err);
}

/* Copies a file (to restore it after tampering). */
static char *slurp(const char *path, size_t *len)
{
    return bl_test_read(path, len);
}

static void spill(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void test_unsuitable_records(void **state)
{
    const char *dir = bl_test_dir(state);
    char *record = make_record(dir, "falandays", "float32", "", "replay");
    char *summary = make_record(dir, "sorn", "float64", "", "summary");
    char flags[8192];

    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s'", record);
    refused(state, flags, "holds 4 replays: choose the trials with --tape-trials");
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s' --tape-trials net/0/7", record);
    refused(state, flags, "KeyError: --tape-record");
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s' --tape-trials net/0/0,net/0/0",
             record);
    refused(state, flags, "names net/0/0 twice");
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s' --tape-trials net/0/0 --count 9",
             record);
    refused(state, flags, "--count 9 conflicts with the record's model (16 nodes)");
    snprintf(flags, sizeof flags,
             "--frames 5 --tape-record '%s' --tape-trials net/0/0 --dtype float64", record);
    refused(state, flags, "--dtype float64 conflicts with the record's numerics (float32)");
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s' --tape-trials net/0/0 --seed 3",
             record);
    refused(state, flags, "--seed: not allowed with argument --tape-record");
    snprintf(flags, sizeof flags,
             "--frames 5 --tape-record '%s' --tape-trials net/0/0,net/1/0 --batch-size 1",
             record);
    refused(state, flags, "--batch-size 1 is less than the 2 tape trials");
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s'", summary);
    refused(state, flags, "the record holds no replays");
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s/nowhere'", dir);
    refused(state, flags, "--tape-record");

    /* A tampered replay: its checksum no longer matches. */
    char path[8192];
    snprintf(path, sizeof path, "%s/replays/trial_00000000.json", record);
    size_t len = 0;
    char *orig = slurp(path, &len);
    char *bad = bl_strdup(orig);
    char *digit = strstr(bad, "\"activity\": [") ? strstr(bad, "\"activity\": [") : strchr(bad, '1');
    assert_non_null(digit);
    digit[0] = digit[0] == ' ' ? '\t' : ' ';
    spill(path, bad, len);
    snprintf(flags, sizeof flags, "--frames 5 --tape-record '%s' --tape-trials net/0/0", record);
    refused(state, flags, "--tape-record");
    spill(path, orig, len);

    /* An incomplete record: no DONE marker. */
    char done[8192], moved[8192];
    snprintf(done, sizeof done, "%s/DONE", record);
    snprintf(moved, sizeof moved, "%s/../DONE.moved", record);
    assert_int_equal(rename(done, moved), 0);
    refused(state, flags, "the record is not complete");
    assert_int_equal(rename(moved, done), 0);

    free(orig);
    bl_free(bad);
    bl_free(record);
    bl_free(summary);
}

/* The whole command: parent, fresh worker, receipt. */
static void test_command_receipt(void **state)
{
    const char *dest = bl_test_path(state, "dest");
    char args[8192];
    snprintf(args, sizeof args,
             "profile '%s' --isolated --dtype float32 --node sorn --count 20 --frames 30 "
             "--batch-size 3 --samples 2 --warmups 1 --tape-inputs normal:0.5 --tape-seed 9 "
             "--allow-background-activity --activity-interval 0.05",
             dest);
    char *out = NULL, *err = NULL;
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    assert_non_null(strstr(out, "\"status\": \"complete\""));
    char path[8192];
    snprintf(path, sizeof path, "%s/receipt.json", dest);
    bl_json *r = NULL;
    OK_E(bl_json_read_file(path, &r, &e_));
    assert_string_equal(bl_test_str(r, "format"), "brainlesslab-stepping-benchmark");
    assert_int_equal(bl_json_get_int(bl_test_get(r, "version")), 1);
    assert_int_equal(bl_json_kindof(bl_test_get(r, "host")), BL_JSON_OBJECT);
    const bl_json *rows = bl_test_get(r, "measurements");
    assert_int_equal(bl_json_size(rows), 1);
    const bl_json *m = bl_json_at(rows, 0);
    assert_string_equal(bl_test_str(m, "phase"), "isolated_new_process");
    assert_string_equal(bl_test_str(m, "status"), "complete");
    assert_string_equal(bl_test_str(m, "node"), "sorn");
    assert_true(bl_json_get_bool(bl_test_get(m, "isolated_kernel_time")));
    assert_int_equal(bl_json_get_int(bl_test_get(m, "neural_frames_per_sample")), 90);
    assert_int_equal(bl_json_kindof(bl_test_get(bl_test_get(m, "model"), "batch_bytes_per_slot")), BL_JSON_NULL);
    assert_int_equal(strlen(bl_test_str(m, "final_state_sha256")), 64);
    bl_json_destroy(r);
    free(out);
    free(err);
}

/* ---- the parent, with a fake worker ---------------------------------------------- */

typedef struct fake {
    bl_json *receipt;      /* what the worker line carries */
    int returncode;
    char argv[4096];
} fake;

static bl_status quiet(void *ctx, const bl_activity_options *o, bl_json **out, bl_error *err)
{
    (void)ctx;
    (void)o;
    bl_json *t = bl_json_object();
    bl_status st = bl_json_object_set(t, "status", bl_json_string("available"), err);
    if (st == BL_OK)
        st = bl_json_object_set(t, "processes", bl_json_array(), err);
    *out = t;
    return st;
}

static bl_status fake_spawn(void *ctx, const char *const *argv, const char *stdout_path,
                            const char *stderr_path, int *returncode, char **stdout_text,
                            bl_error *err)
{
    fake *f = ctx;
    (void)stderr_path;
    size_t used = 0;
    for (size_t i = 0; argv[i]; i++)
        used += (size_t)snprintf(f->argv + used, sizeof f->argv - used, "%s ", argv[i]);
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_puts(&b, "PROFILE_RECEIPT=");
    OK_E(bl_json_write(f->receipt, BL_JSON_SORT_KEYS, &b, &e_));
    bl_buf_putc(&b, '\n');
    FILE *out = fopen(stdout_path, "w");
    assert_non_null(out);
    fwrite(b.data, 1, b.len, out);
    fclose(out);
    *stdout_text = bl_buf_take(&b, NULL);
    *returncode = f->returncode;
    (void)err;
    return BL_OK;
}

/* A worker that reports a final state that changed between samples fails
 * the command: exit 1, one line naming the phase and the reason, and the
 * receipt (a stepping benchmark's) still written. A complete one exits 0. */
static void test_parent_verdicts(void **state)
{
    bl_profile_args a = synthetic_args("falandays", "float32", 2, 1);
    a.worker_backend = NULL;
    a.process_phase = NULL;
    a.destination = bl_test_path(state, "ok");
    a.samples = 1;
    a.warmups = 0;
    bl_profile_args w = a;
    w.worker_backend = "cpu";
    fake f = {.receipt = worker(&w), .returncode = 0};
    bl_profile_hooks h = {.ctx = &f, .telemetry = quiet, .spawn = fake_spawn};
    char *path = NULL;
    bl_error err = {0};
    assert_int_equal(bl_profile_parent(&a, "/bin/self", &h, &path, &err), 0);
    assert_non_null(strstr(f.argv, " --isolated --frames 40 "));
    assert_non_null(strstr(f.argv, " --tape-inputs bernoulli:0.4 --tape-seed 3"));
    assert_null(strstr(f.argv, "--trials"));
    assert_null(strstr(f.argv, "--recording"));
    bl_json *r = NULL;
    OK_E(bl_json_read_file(path, &r, &e_));
    assert_string_equal(bl_test_str(r, "format"), "brainlesslab-stepping-benchmark");
    assert_null(bl_json_get(r, "cache_scope"));
    bl_json_destroy(r);
    bl_free(path);
    path = NULL;

    bl_json_object_set(f.receipt, "status", bl_json_string("failed"), &err);
    bl_json_object_set(f.receipt, "error",
                       bl_json_string("the final state of sample 0 differs from the reference "
                                      "pass's"),
                       &err);
    f.returncode = 1;
    a.destination = bl_test_path(state, "failed");
    assert_int_equal(bl_profile_parent(&a, "/bin/self", &h, &path, &err), 1);
    assert_non_null(path);
    assert_non_null(strstr(err.msg, "profile failed: cpu isolated_new_process: the final state "
                                    "of sample 0 differs"));
    assert_null(strchr(err.msg, '\n'));
    OK_E(bl_json_read_file(path, &r, &e_));
    assert_string_equal(bl_test_str(bl_json_at(bl_test_get(r, "measurements"), 0), "status"), "failed");
    bl_json_destroy(r);
    bl_free(path);
    bl_json_destroy(f.receipt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digest_falandays_float32),
        cmocka_unit_test(test_digest_falandays_float64),
        cmocka_unit_test(test_digest_sorn),
        cmocka_unit_test(test_state_digest),
        cmocka_unit_test(test_group_cap),
        BL_TEST_IN_DIR(test_record_falandays_noise_float32),
        BL_TEST_IN_DIR(test_record_falandays_float64),
        BL_TEST_IN_DIR(test_record_sorn),
        BL_TEST_IN_DIR(test_bad_flags),
        BL_TEST_IN_DIR(test_unsuitable_records),
        BL_TEST_IN_DIR(test_command_receipt),
        BL_TEST_IN_DIR(test_parent_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
