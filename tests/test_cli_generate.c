/* The plan generators `sweep`, `ablate`, `benchmark`, `calibrate` and the
 * capacity library `presets` (spec/platform.md §1.6, §2.2, §2.3, §3.4;
 * tasks.md §5.11), run as the built program: what they write passes
 * `check`, reproduces the reference's own generated plans (same `check`
 * output: contract hash, target ids, everything), and every bad input is
 * one line (or argparse's usage) with the right exit code and nothing left
 * on disk. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/task.h"
#include "record_support.h"

static void assert_one_error_line(const char *err, const char *prefix)
{
    size_t n = strlen(err);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || n == 0 || err[n - 1] != '\n' ||
        strchr(err, '\n') != err + n - 1)
        fail_msg("expected one line starting with '%s', got:\n%s", prefix, err);
}

/* argparse's form: the usage, then one "brainlesslab <cmd>: error: ..." line
 * holding `text`. */
static void assert_usage_error(const char *err, const char *cmd, const char *text)
{
    char want[128];
    snprintf(want, sizeof want, "\nbrainlesslab %s: error: ", cmd);
    const char *line = strstr(err, want);
    if (strncmp(err, "usage: brainlesslab ", 20) != 0 || !line || !strstr(line, text) ||
        strchr(line + 1, '\n') != err + strlen(err) - 1)
        fail_msg("expected argparse's usage and an error with '%s', got:\n%s", text, err);
}

/* `brainlesslab check PATH`'s output; fails the test unless it succeeds. */
static char *check_output(const char *path)
{
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "check '%s'", path);
    if (rc != 0)
        fail_msg("check %s: exit %d: %s", path, rc, err);
    assert_string_equal(err, "");
    free(err);
    return out;
}

static bl_json *parse(const char *text)
{
    bl_json *doc = NULL;
    OK_E(bl_json_parse(text, strlen(text), "output", &doc, &e_));
    return doc;
}

/* A member path ("request.evaluation.root_seed") of a JSON document. */
static const bl_json *at(const bl_json *doc, const char *path)
{
    char key[64];
    const bl_json *v = doc;
    while (*path) {
        size_t n = strcspn(path, ".");
        assert_true(n < sizeof key);
        memcpy(key, path, n);
        key[n] = 0;
        v = bl_json_get(v, key);
        if (!v)
            fail_msg("no member %s", key);
        path += n + (path[n] == '.');
    }
    return v;
}

static const char *str_at(const bl_json *doc, const char *path)
{
    return bl_json_get_string(at(doc, path), NULL);
}

/* The resolved targets' ids of a check output. */
static const char *target_id(const bl_json *check, size_t i)
{
    return str_at(bl_json_at(at(check, "targets"), i), "target.id");
}

/* The generator writes --out, prints {"plan", "contract_hash"}, and the
 * file's check output equals `want_check` byte for byte. */
static void assert_same_check(void **state, const char *args, const char *want_path)
{
    const char *out_path = bl_test_path(state, "generated.toml");
    unlink(out_path);
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "%s --out '%s'", args, out_path);
    if (rc != 0)
        fail_msg("%s: exit %d: %s", args, rc, err);
    assert_string_equal(err, "");
    char *want = check_output(want_path), *got = check_output(out_path);
    assert_string_equal(got, want);
    bl_json *line = parse(out), *doc = parse(got);
    assert_string_equal(str_at(line, "plan"), out_path);
    assert_string_equal(str_at(line, "contract_hash"), str_at(doc, "contract_hash"));
    bl_json_destroy(line);
    bl_json_destroy(doc);
    free(want);
    free(got);
    free(out);
    free(err);
}

/* The one-target base of the reference's delayed-cue sweep and ablation
 * (platform.md §2.3 d, e): count 16, Falandays and delayed_cue defaults,
 * 2 x 2 trials, root seed 0. Its own id, controller and keys are not used. */
static const char delayed_cue_base[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"base\"\n"
    "question = \"not carried over\"\n"
    "[evaluation]\n"
    "blocks = 2\n"
    "trials_per_block = 2\n"
    "[[targets]]\n"
    "id = \"some-target\"\n"
    "label = \"ignored\"\n"
    "controller = \"oracle\"\n"
    "[targets.composition]\n"
    "count = 16\n"
    "[targets.composition.task]\n"
    "kind = \"delayed_cue\"\n";

static const char *base_path(void **state)
{
    const char *path = bl_test_path(state, "base.toml");
    if (!bl_rt_exists(path))
        bl_rt_write_text(path, delayed_cue_base);
    return path;
}

static void test_sweep_reproduces_reference(void **state)
{
    BL_REQUIRE_SHARED();
    char args[4400];
    snprintf(args, sizeof args,
             "sweep '%s' --axis leak=0.1,0.25,0.5 --id sweep --question 'How does leak rate "
             "change delayed-cue outcomes under paired development worlds?'",
             base_path(state));
    assert_same_check(state, args, bl_test_shared_path("plans/sweep-delayed-cue.toml"));
    /* The target ids are the spec's cell digests (§2.3 d). */
    char *got = check_output(bl_test_path(state, "generated.toml"));
    bl_json *doc = parse(got);
    assert_string_equal(target_id(doc, 0), "84f6b98f6e57c127");
    assert_string_equal(target_id(doc, 1), "e902202a74b75788");
    assert_string_equal(target_id(doc, 2), "c5ffb217c5bae322");
    bl_json_destroy(doc);
    free(got);
}

static void test_calibrate_reproduces_reference(void **state)
{
    BL_REQUIRE_SHARED();
    static const char *const tasks[] = {"tracking", "pong", "cartpole_plank_easy"};
    /* The shared plans all ask the tracking plan's question (platform.md
     * §2.3 f gives pong and cartpole other texts for the older plans). */
    static const char question[] = "What is the mean of the task-bound random-action null?";
    for (size_t k = 0; k < 3; k++) {
        /* A base that differs in everything calibration fixes (blocks,
         * trials, partition, seed, warm-up, controller): only the
         * composition, the scope and the numerics reach the plan. */
        char base[2048], path[64], want[256], args[4600];
        snprintf(base, sizeof base,
                 "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"b\"\n"
                 "[evaluation]\nblocks = 3\ntrials_per_block = 2\nroot_seed = 5\n"
                 "construction_scope = \"trial\"\nseed_partition = \"tuning\"\n"
                 "[[targets]]\nid = \"x\"\n[targets.composition]\ncount = 1\n"
                 "[targets.composition.task]\nkind = \"%s\"\n",
                 tasks[k]);
        snprintf(path, sizeof path, "base-%s.toml", tasks[k]);
        bl_rt_write_text(bl_test_path(state, path), base);
        snprintf(want, sizeof want, "plans/calibration-published-%s.toml", tasks[k]);
        snprintf(args, sizeof args,
                 "calibrate '%s' --root-seed 91337 --id %s-published-null-calibration "
                 "--question '%s'",
                 bl_test_path(state, path), tasks[k], question);
        assert_same_check(state, args, bl_test_shared_path(want));
    }
}

/* platform.md §2.3 e: the reference's ablate-delayed-cue.toml (not among
 * the shared plans) as the spec describes it. */
static const char ablate_reference[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"ablation\"\n"
    "operation = \"ablate\"\n"
    "question = \"How do frozen weights and frozen plasticity change delayed-cue outcomes?\"\n"
    "version = \"1\"\nevidence = \"exploratory\"\ndiagnostic = false\n"
    "[[targets]]\nid = \"baseline\"\ninterventions = []\n"
    "[targets.composition]\ncount = 16\ninput_gain = 1.0\n"
    "[targets.composition.node]\nkind = \"falandays\"\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[[targets]]\nid = \"freeze_weights\"\n"
    "interventions = [ { tick = 1, verb = \"freeze_weights\" }, ]\n"
    "[targets.composition]\ncount = 16\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[[targets]]\nid = \"freeze_plasticity\"\n"
    "interventions = [ { tick = 1, verb = \"freeze_plasticity\" }, ]\n"
    "[targets.composition]\ncount = 16\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[evaluation]\nblocks = 2\ntrials_per_block = 2\nwarmup = 0\n"
    "construction_scope = \"block\"\nroot_seed = 0\nseed_partition = \"development\"\n"
    "[numerics]\ndtype = \"float64\"\n";

static void test_ablate_matches_spec(void **state)
{
    const char *want = bl_test_path(state, "ablate-delayed-cue.toml");
    bl_rt_write_text(want, ablate_reference);
    char args[4400];
    snprintf(args, sizeof args,
             "ablate '%s' --question 'How do frozen weights and frozen plasticity change "
             "delayed-cue outcomes?'",
             base_path(state));
    assert_same_check(state, args, want);
    /* The same with the default verbs spelt out. */
    snprintf(args, sizeof args,
             "ablate '%s' --verb freeze_weights --verb freeze_plasticity --tick 1 --question "
             "'How do frozen weights and frozen plasticity change delayed-cue outcomes?'",
             base_path(state));
    assert_same_check(state, args, want);
    /* Other verbs, in the order given, at the given tick. */
    char *out, *err;
    const char *path = bl_test_path(state, "blind.toml");
    assert_int_equal(bl_rt_cli(&out, &err, "ablate '%s' --verb shuffle_input --verb blind_input "
                                     "--tick 5 --out '%s'",
                         base_path(state), path),
                     0);
    free(out);
    free(err);
    char *got = check_output(path);
    bl_json *doc = parse(got);
    assert_int_equal(bl_json_size(at(doc, "targets")), 3);
    assert_string_equal(target_id(doc, 1), "shuffle_input");
    assert_string_equal(target_id(doc, 2), "blind_input");
    const bl_json *iv = bl_json_at(at(bl_json_at(at(doc, "targets"), 2), "target.interventions"), 0);
    assert_int_equal(bl_json_get_int(at(iv, "tick")), 5);
    assert_string_equal(str_at(iv, "verb"), "blind_input");
    assert_string_equal(str_at(doc, "request.operation"), "ablate");
    bl_json_destroy(doc);
    free(got);
}

static void test_benchmark_takes_node_count_evaluation(void **state)
{
    /* A Falandays-with-parameters base, 2 x 1 trials, default horizons. */
    const char *base = bl_test_path(state, "bench-base.toml");
    bl_rt_write_text(base, "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"b\"\n"
                     "[evaluation]\nblocks = 2\nroot_seed = 12001\n"
                     "[numerics]\ndtype = \"float32\"\n"
                     "[[targets]]\nid = \"x\"\n[targets.composition]\ncount = 24\n"
                     "input_gain = 3.0\n"
                     "[targets.composition.node]\nkind = \"sorn\"\n"
                     "[targets.composition.node.parameters]\neta_ip = 0.002\n"
                     "[targets.composition.task]\nkind = \"pong\"\n");
    const char *path = bl_test_path(state, "bench.toml");
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "benchmark '%s' --id core --version 2 --evidence planned "
                                     "--out '%s'",
                         base, path),
                     0);
    free(out);
    free(err);
    char *got = check_output(path);
    bl_json *doc = parse(got);
    static const char *const ids[] = {"tracking", "tracking_null", "pong", "pong_null",
                                      "cartpole_plank_easy", "cartpole_plank_easy_null",
                                      "delayed_cue", "delayed_cue_null"};
    const bl_json *targets = at(doc, "targets");
    assert_int_equal(bl_json_size(targets), 8);
    for (size_t k = 0; k < 8; k++) {
        const bl_json *t = bl_json_at(targets, k);
        assert_string_equal(str_at(t, "target.id"), ids[k]);
        assert_string_equal(str_at(t, "target.controller"),
                            k % 2 ? "reference_null" : "reservoir");
        char pairing[64];
        snprintf(pairing, sizeof pairing, "benchmark/%s", ids[k - k % 2]);
        assert_string_equal(str_at(t, "target.pairing_key"), pairing);
        /* The base's node and count; not its task or input gain. */
        assert_string_equal(str_at(t, "target.composition.node.kind"), "sorn");
        assert_true(bl_json_get_real(at(t, "target.composition.node.parameters.eta_ip")) ==
                    0.002);
        assert_int_equal(bl_json_get_int(at(t, "target.composition.count")), 24);
        assert_true(bl_json_get_real(at(t, "target.composition.input_gain")) == 1.0);
    }
    assert_string_equal(str_at(doc, "request.id"), "core");
    assert_string_equal(str_at(doc, "request.version"), "2");
    assert_string_equal(str_at(doc, "request.evidence"), "planned");
    assert_string_equal(str_at(doc, "request.question"), "");
    assert_string_equal(str_at(doc, "request.operation"), "benchmark");
    assert_string_equal(str_at(doc, "request.numerics.dtype"), "float32");
    assert_int_equal(bl_json_get_int(at(doc, "request.evaluation.root_seed")), 12001);
    assert_int_equal(bl_json_get_int(at(doc, "request.evaluation.blocks")), 2);
    bl_json_destroy(doc);
    free(got);
}

/* Axis values are TOML values: ints and floats stay apart, strings and
 * arrays are values, two axes make a product with the first outermost. */
static void test_axis_values(void **state)
{
    const char *path = bl_test_path(state, "axes.toml");
    char *out, *err;
    int rc = bl_rt_cli(&out, &err,
                 "sweep '%s' --axis node.leak=1,1.0 --axis 'weight_init_mode=\"excitatory\", "
                 "\"pong_mixed\"' --axis 'input_link_p=[0.5, 0.5, 0.5]' --out '%s'",
                 base_path(state), path);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(out);
    free(err);
    char *got = check_output(path);
    bl_json *doc = parse(got);
    assert_int_equal(bl_json_size(at(doc, "targets")), 4);
    static const char *const labels[] = {
        "{'leak': 1, 'weight_init_mode': 'excitatory', 'input_link_p': (0.5, 0.5, 0.5)}",
        "{'leak': 1, 'weight_init_mode': 'pong_mixed', 'input_link_p': (0.5, 0.5, 0.5)}",
        "{'leak': 1.0, 'weight_init_mode': 'excitatory', 'input_link_p': (0.5, 0.5, 0.5)}",
        "{'leak': 1.0, 'weight_init_mode': 'pong_mixed', 'input_link_p': (0.5, 0.5, 0.5)}",
    };
    static const char *const cells[] = {
        "{\"leak\": 1, \"weight_init_mode\": \"excitatory\", \"input_link_p\": [0.5, 0.5, 0.5]}",
        "{\"leak\": 1, \"weight_init_mode\": \"pong_mixed\", \"input_link_p\": [0.5, 0.5, 0.5]}",
        "{\"leak\": 1.0, \"weight_init_mode\": \"excitatory\", \"input_link_p\": [0.5, 0.5, 0.5]}",
        "{\"leak\": 1.0, \"weight_init_mode\": \"pong_mixed\", \"input_link_p\": [0.5, 0.5, 0.5]}",
    };
    for (size_t k = 0; k < 4; k++) {
        const bl_json *t = bl_json_at(at(doc, "targets"), k);
        assert_string_equal(str_at(t, "target.label"), labels[k]);
        bl_json *cell = parse(cells[k]);
        char id[17];
        OK_E(bl_sweep_target_id(cell, id, &e_));
        assert_string_equal(str_at(t, "target.id"), id);
        assert_true(bl_json_equal(at(t, "target.composition.node.parameters"), cell));
        bl_json_destroy(cell);
    }
    /* 1 and 1.0 are different cells. */
    assert_string_not_equal(target_id(doc, 0), target_id(doc, 2));
    bl_json_destroy(doc);
    free(got);
}

/* Without --out the plan goes to stdout: the same text --out writes. */
static void test_stdout_and_out_agree(void **state)
{
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "sweep '%s' --axis leak=0.2,0.3", base_path(state)), 0);
    assert_string_equal(err, "");
    assert_true(strncmp(out, "format = \"brainlesslab-plan\"\n", 29) == 0);
    const char *path = bl_test_path(state, "deep/er/plan.toml");
    char *out2, *err2;
    assert_int_equal(bl_rt_cli(&out2, &err2, "sweep '%s' --axis leak=0.2,0.3 --out '%s'",
                         base_path(state), path),
                     0);
    char *file = bl_test_read(path, NULL);
    assert_string_equal(file, out);
    free(file);
    free(out);
    free(err);
    free(out2);
    free(err2);
}

/* An existing --out is FileExistsError and stays as it was; a refused
 * plan creates neither the file nor its parents. */
static void test_out_is_exclusive_and_clean(void **state)
{
    const char *path = bl_test_path(state, "taken.toml");
    bl_rt_write_text(path, "mine\n");
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "ablate '%s' --out '%s'", base_path(state), path), 1);
    assert_string_equal(out, "");
    assert_one_error_line(err, "brainlesslab: FileExistsError: ");
    char *text = bl_test_read(path, NULL);
    assert_string_equal(text, "mine\n");
    free(text);
    free(out);
    free(err);
    const char *fresh = bl_test_path(state, "new-dir/plan.toml");
    assert_int_equal(bl_rt_cli(&out, &err, "ablate '%s' --evidence sure --out '%s'", base_path(state),
                         fresh),
                     1);
    assert_string_equal(out, "");
    assert_one_error_line(err, "brainlesslab: ValueError: unknown evidence state");
    assert_false(bl_rt_exists(bl_test_path(state, "new-dir")));
    free(out);
    free(err);
}

static void test_bad_command_lines_exit_2(void **state)
{
    const char *base = base_path(state);
    const char *out_path = bl_test_path(state, "never.toml");
    struct {
        const char *cmd, *args, *text;
    } cases[] = {
        {"sweep", "--axis lek=0.1", "unknown falandays parameter 'lek' (allowed: leak,"},
        {"sweep", "--axis leak", "expected NAME=VALUES, got 'leak'"},
        {"sweep", "--axis leak=dale", "the values of leak are not TOML values"},
        {"sweep", "--axis 'leak=1]\n[evaluation'", "the values of leak are not TOML values"},
        {"sweep", "--axis leak=0.1 --axis node.leak=0.2", "leak is given twice"},
        {"sweep", "", "the following arguments are required: --axis"},
        {"ablate", "--verb freeze", "invalid choice: 'freeze'"},
        {"ablate", "--tick one", "argument --tick: invalid int value: 'one'"},
        {"calibrate", "--root-seed x", "argument --root-seed: invalid int value: 'x'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = bl_rt_cli(&out, &err, "%s '%s' %s --out '%s'", cases[i].cmd, base, cases[i].args,
                     out_path);
        if (rc != 2)
            fail_msg("%s %s: exit %d: %s", cases[i].cmd, cases[i].args, rc, err);
        assert_string_equal(out, "");
        assert_usage_error(err, cases[i].cmd, cases[i].text);
        assert_false(bl_rt_exists(out_path));
        free(out);
        free(err);
    }
    /* An unknown option or a missing base, for every generator. */
    static const char *const cmds[] = {"sweep", "ablate", "benchmark", "calibrate", "presets"};
    for (size_t i = 0; i < 5; i++) {
        char *out, *err;
        assert_int_equal(bl_rt_cli(&out, &err, "%s '%s' --bogus", cmds[i], out_path), 2);
        assert_true(strstr(err, "unrecognized arguments: --bogus") != NULL);
        free(out);
        free(err);
        assert_int_equal(bl_rt_cli(&out, &err, "%s", cmds[i]), 2);
        assert_true(strstr(err, "the following arguments are required:") != NULL);
        free(out);
        free(err);
        assert_int_equal(bl_rt_cli(&out, &err, "%s --help", cmds[i]), 0);
        assert_true(strncmp(out, "usage: brainlesslab ", 20) == 0);
        assert_string_equal(err, "");
        free(out);
        free(err);
    }
    assert_false(bl_rt_exists(out_path));
}

/* Values the plan rules refuse: the spec's kind and text, exit 1. */
static void test_invalid_values_exit_1(void **state)
{
    const char *base = base_path(state);
    const char *out_path = bl_test_path(state, "never.toml");
    const char *three = bl_test_path(state, "three.toml");
    /* A base with more than one target. */
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "ablate '%s' --out '%s'", base, three), 0);
    free(out);
    free(err);
    struct {
        const char *args, *line;
    } cases[] = {
        {"sweep BASE --axis leak=", "ValueError: sweep needs non-empty explicit parameter axes"},
        {"sweep BASE --axis leak=2.0", "ValueError: targets[0].composition.node.parameters: "},
        {"sweep BASE --axis leak=0.1 --id ''",
         "ValueError: a plan needs an id and at least one target"},
        {"ablate BASE --tick 0",
         "ValueError: targets[1].interventions[0]: intervention tick must be an integer >= 1"},
        {"ablate BASE --verb blind_input --verb blind_input",
         "ValueError: condition IDs must be unique"},
        {"ablate BASE --evidence confirmed",
         "ValueError: the development runner cannot confer confirmed or promoted evidence"},
        {"calibrate BASE --root-seed -1",
         "ValueError: evaluation: root_seed must be an integer >= 0"},
        {"benchmark THREE", "ValueError: "},
        {"calibrate MISSING", "FileNotFoundError: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[8192];
        const char *a = cases[i].args;
        size_t n = 0;
        /* BASE, THREE and MISSING stand for paths. */
        while (*a && n + 4200 < sizeof args) {
            const char *sub = strncmp(a, "BASE", 4) == 0      ? base
                              : strncmp(a, "THREE", 5) == 0   ? three
                              : strncmp(a, "MISSING", 7) == 0 ? bl_test_path(state, "no.toml")
                                                              : NULL;
            if (!sub) {
                args[n++] = *a++;
                continue;
            }
            n += (size_t)snprintf(args + n, sizeof args - n, "'%s'", sub);
            a += *a == 'B' ? 4 : *a == 'T' ? 5 : 7;
        }
        snprintf(args + n, sizeof args - n, " --out '%s'", out_path);
        int rc = bl_test_run_cli(args, &out, &err);
        if (rc != 1)
            fail_msg("%s: exit %d: %s", args, rc, err);
        assert_string_equal(out, "");
        char prefix[256];
        snprintf(prefix, sizeof prefix, "brainlesslab: %s", cases[i].line);
        assert_one_error_line(err, prefix);
        assert_false(bl_rt_exists(out_path));
        free(out);
        free(err);
    }
    /* The base's file is named, and the target count said. */
    assert_int_equal(bl_rt_cli(&out, &err, "sweep '%s' --axis leak=0.1", three), 1);
    assert_non_null(strstr(err, "a base plan needs exactly one target (found 3)"));
    assert_non_null(strstr(err, three));
    free(out);
    free(err);
}

static void test_presets_library(void **state)
{
    bl_task_preset *presets = NULL;
    size_t n = 0;
    OK_E(bl_capacity_presets(&presets, &n, &e_));
    assert_int_equal(n, 64);
    static const char *const nodes[] = {"falandays", "sorn"};
    for (size_t k = 0; k < 2; k++) {
        char dest[4200];
        snprintf(dest, sizeof dest, "%s/lib/%s", bl_test_dir(state), nodes[k]);
        char *out, *err;
        int rc = bl_rt_cli(&out, &err, "presets '%s' --node %s", dest, nodes[k]);
        if (rc != 0)
            fail_msg("presets: exit %d: %s", rc, err);
        assert_string_equal(err, "");
        bl_json *line = parse(out);
        assert_string_equal(str_at(line, "directory"), dest);
        assert_int_equal(bl_json_get_int(at(line, "plans")), 64);
        bl_json_destroy(line);
        free(out);
        free(err);
        /* Exactly the 64 files <cell id>.toml. */
        DIR *d = opendir(dest);
        assert_non_null(d);
        size_t files = 0;
        for (struct dirent *e; (e = readdir(d));)
            files += e->d_name[0] != '.';
        closedir(d);
        assert_int_equal(files, 64);
        for (size_t i = 0; i < n; i++) {
            char path[4400];
            snprintf(path, sizeof path, "%s/%s.toml", dest, presets[i].id);
            char *got = check_output(path);
            bl_json *doc = parse(got);
            assert_string_equal(str_at(doc, "request.id"), presets[i].id);
            assert_string_equal(str_at(doc, "request.operation"), "profile");
            const bl_json *ev = at(doc, "request.evaluation");
            assert_int_equal(bl_json_get_int(at(ev, "blocks")), 4);
            assert_int_equal(bl_json_get_int(at(ev, "trials_per_block")), 8);
            assert_int_equal(bl_json_get_int(at(ev, "root_seed")), 31001);
            assert_int_equal(bl_json_get_int(at(ev, "warmup")), 0);
            assert_int_equal(bl_json_get_int(at(ev, "horizon")), presets[i].horizon);
            assert_string_equal(str_at(ev, "construction_scope"), "block");
            const bl_json *t = bl_json_at(at(doc, "targets"), 0);
            assert_int_equal(bl_json_size(at(doc, "targets")), 1);
            assert_int_equal(bl_json_get_int(at(t, "target.composition.count")), 64);
            assert_string_equal(str_at(t, "target.composition.node.kind"), nodes[k]);
            assert_string_equal(str_at(t, "target.composition.task.kind"),
                                bl_task_name(presets[i].options.kind));
            /* The preset's options, every one of them. */
            bl_json *want = NULL;
            OK_E(bl_task_options_json(&presets[i].options, &want, &e_));
            assert_true(bl_json_equal(at(t, "target.composition.task.options"), want));
            assert_true(bl_json_equal(at(t, "task_options"), want));
            bl_json_destroy(want);
            bl_json_destroy(doc);
            free(got);
        }
    }
    bl_capacity_presets_destroy(presets, n);
}

/* DEST must be new: an existing one (even empty) is FileExistsError and
 * keeps what it held; a DEST under a file creates nothing. */
static void test_presets_destination_must_be_new(void **state)
{
    const char *dest = bl_test_path(state, "taken");
    assert_int_equal(mkdir(dest, 0777), 0);
    char keep[4400];
    snprintf(keep, sizeof keep, "%s/keep.txt", dest);
    bl_rt_write_text(keep, "keep\n");
    char *out, *err;
    assert_int_equal(bl_rt_cli(&out, &err, "presets '%s'", dest), 1);
    assert_string_equal(out, "");
    assert_one_error_line(err, "brainlesslab: FileExistsError: ");
    free(out);
    free(err);
    DIR *d = opendir(dest);
    size_t entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, 1);
    char under[4500];
    snprintf(under, sizeof under, "%s/a/b", keep);
    assert_int_equal(bl_rt_cli(&out, &err, "presets '%s'", under), 1);
    assert_string_equal(out, "");
    assert_one_error_line(err, "brainlesslab: FileExistsError: ");
    assert_false(bl_rt_exists(under));
    free(out);
    free(err);
    assert_int_equal(bl_rt_cli(&out, &err, "presets '%s' --node julia", bl_test_path(state, "x")), 2);
    assert_usage_error(err, "presets", "argument --node: invalid choice: 'julia'");
    assert_false(bl_rt_exists(bl_test_path(state, "x")));
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        BL_TEST_IN_DIR(test_sweep_reproduces_reference),
        BL_TEST_IN_DIR(test_calibrate_reproduces_reference),
        BL_TEST_IN_DIR(test_ablate_matches_spec),
        BL_TEST_IN_DIR(test_benchmark_takes_node_count_evaluation),
        BL_TEST_IN_DIR(test_axis_values),
        BL_TEST_IN_DIR(test_stdout_and_out_agree),
        BL_TEST_IN_DIR(test_out_is_exclusive_and_clean),
        BL_TEST_IN_DIR(test_bad_command_lines_exit_2),
        BL_TEST_IN_DIR(test_invalid_values_exit_1),
        BL_TEST_IN_DIR(test_presets_library),
        BL_TEST_IN_DIR(test_presets_destination_must_be_new),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
