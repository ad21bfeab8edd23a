/* Task families, options, definitions and capacity presets (spec/tasks.md
 * §1.1, §5.11, §8.1; tests §10.1 #1 and #13). Messages are compared in
 * full: they are the reference's, and the CLI prints them verbatim. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/task.h"
#include "support.h"

/* ---- helpers ----------------------------------------------------------- */

static bl_json *parse(const char *text)
{
    bl_json *v = NULL;
    bl_error err = {0};
    if (bl_json_parse(text, strlen(text), "test", &v, &err) != BL_OK)
        fail_msg("bad test JSON %s: %s", text, err.msg);
    return v;
}

/* Expects resolution to fail with exactly `status` and `message`. */
static void resolve_fails(const char *task, const char *text, bl_status status,
                          const char *message)
{
    bl_json *given = parse(text);
    bl_task_options o;
    bl_error err = {0};
    bl_status st = bl_task_options_resolve(bl_test_task_kind(task), given, &o, &err);
    bl_json_destroy(given);
    if (st == BL_OK) {
        bl_task_options_clear(&o);
        fail_msg("%s %s: resolved, expected \"%s\"", task, text, message);
    }
    if (st != status || strcmp(err.msg, message) != 0)
        fail_msg("%s %s: got %s \"%s\", expected %s \"%s\"", task, text, bl_status_kind(st),
                 err.msg, bl_status_kind(status), message);
    assert_int_equal(err.status, status);
}

/* A task and the options given to it (JSON text, NULL for the defaults). */
typedef struct task_given {
    const char *task, *given;
} task_given;

/* A resolution that must fail: the task, its options, the status and the
 * whole message. */
typedef struct bad_options {
    const char *task, *given;
    bl_status status;
    const char *message;
} bad_options;

static void expect_failures(const bad_options *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        resolve_fails(cases[i].task, cases[i].given, cases[i].status, cases[i].message);
}

/* The canonical JSON text of resolved options (caller frees). */
static char *options_text(const bl_task_options *o)
{
    bl_json *j = NULL;
    bl_error err = {0};
    if (bl_task_options_json(o, &j, &err) != BL_OK)
        fail_msg("options json: %s", err.msg);
    char *text = NULL;
    size_t len = 0;
    if (bl_json_canonical(j, &text, &len, &err) != BL_OK)
        fail_msg("canonical: %s", err.msg);
    bl_json_destroy(j);
    return text;
}

static void expect_canonical(const char *task, const char *given, const char *expected)
{
    bl_task_options o;
    bl_test_task_resolve(task, given, &o);
    char *text = options_text(&o);
    if (strcmp(text, expected) != 0)
        fail_msg("%s %s:\n got      %s\n expected %s", task, given ? given : "(defaults)",
                 text, expected);
    bl_free(text);
    bl_task_options_clear(&o);
}

/* ---- families and definitions (§1.1) ----------------------------------- */


static void test_names_and_unsupported_tasks(void **state)
{
    (void)state;
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        assert_string_equal(bl_task_name((bl_task_kind)k), bl_test_task_names[k]);
        assert_int_equal(bl_test_task_kind(bl_test_task_names[k]), k);
        assert_int_equal(bl_task_is_probe((bl_task_kind)k), k >= 3);
    }
    const char *bad[] = {"wall", "cartpole", "pong_hitrate", "Tracking", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bl_task_kind k = BL_TASK_PONG;
        bl_error err = {0};
        assert_int_equal(bl_task_from_name(bad[i], &k, &err), BL_EVALUE);
        char expected[128];
        snprintf(expected, sizeof expected,
                 "unsupported task '%s'; historical tasks require Julia", bad[i]);
        assert_string_equal(err.msg, expected);
    }
}

static void test_ten_families_resolve_with_defaults(void **state)
{
    (void)state;
    static const size_t inputs[] = {62, 46, 8, 3, 3, 5, 3, 7, 4, 8};
    static const int32_t frames[] = {1, 1, 24, 1, 1, 1, 1, 1, 1, 1};
    static const int64_t horizons[] = {2000, 7200, 15000, 144, 48, 56, 40, 48, 40, 2304};
    static const int64_t minimum[] = {2000, 6000, 15000, 1, 1, 1, 1, 1, 1, 1};
    static const char *const keys[] = {
        "track_score",    "hit_rate",       "fitness",        "recall_accuracy",
        "probe_accuracy", "probe_accuracy", "probe_accuracy", "probe_accuracy",
        "probe_accuracy", "adaptation_accuracy"};
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        for (int form = 0; form < 3; form++) {
            bl_task_options o;
            bl_error err = {0};
            bl_json *empty = form == 1 ? bl_json_object() : NULL;
            bl_status st = form == 2
                               ? bl_task_options_default((bl_task_kind)k, &o, &err)
                               : bl_task_options_resolve((bl_task_kind)k, empty, &o, &err);
            bl_json_destroy(empty);
            assert_int_equal(st, BL_OK);
            bl_task_definition d;
            bl_task_define(&o, &d);
            assert_int_equal(d.kind, k);
            assert_int_equal(d.n_inputs, inputs[k]);
            assert_int_equal(d.n_effectors, 2);
            assert_int_equal(d.neural_frames, frames[k]);
            assert_int_equal(d.default_horizon, horizons[k]);
            assert_int_equal(d.min_scored_ticks, minimum[k]);
            assert_string_equal(d.outcome_key, keys[k]);
            assert_true(d.upper_bound == (k == 2 ? 15000.0 : 1.0));
            assert_int_equal(d.probe, k >= 3);
            bl_task_options_clear(&o);
        }
    }
    /* Receptors and horizons follow the options. */
    static const struct {
        task_given options;
        size_t inputs;
        int64_t horizon;
    } shaped[] = {
        {{"tracking", "{\"sensor_offsets_deg\": [-4, 0, 4]}"}, 6, 2000},
        {{"delayed_cue", "{\"delays\": [3, 50, 7], \"cue_ticks\": 2, \"response_ticks\": 5}"},
         3, 57},
        {{"reversal_adaptation", "{\"rounds\": 50, \"cue_ticks\": 1, \"response_ticks\": 2,"
                                 " \"feedback_ticks\": 3, \"reversal_range\": [2, 35]}"},
         8, 300},
        {{"evidence_accumulation",
          "{\"pulse_count\": 8, \"evidence_fraction\": 0.5, \"pulse_ticks\": 3}"},
         3, 32},
    };
    for (size_t i = 0; i < sizeof shaped / sizeof *shaped; i++) {
        bl_task_options o;
        bl_task_definition d;
        bl_test_task_resolve(shaped[i].options.task, shaped[i].options.given, &o);
        bl_task_define(&o, &d);
        assert_int_equal(d.n_inputs, shaped[i].inputs);
        assert_int_equal(d.default_horizon, shaped[i].horizon);
        bl_task_options_clear(&o);
    }
}

/* ---- the JSON form (contracts, calibration signatures) ------------------ */

static void test_resolved_options_json_match_the_reference(void **state)
{
    (void)state;
    /* platform.md §1.5's canonical test vector. */
    expect_canonical("delayed_cue", NULL,
                     "{\"cue_mode\":\"transient\",\"cue_ticks\":8,\"delays\":[8,32,128],"
                     "\"response_ticks\":8}");
    expect_canonical("pong", NULL, "{\"sensory_gain\":1.0}");
    expect_canonical("cartpole_plank_easy", NULL,
                     "{\"initial_ranges\":[[-1.2,1.2],[-0.05,0.05],[-0.10475,0.10475],"
                     "[-0.05,0.05]]}");
    expect_canonical("recall_interference", NULL,
                     "{\"cue_mode\":\"transient\",\"cue_ticks\":8,\"delay\":32,"
                     "\"distractor_mode\":\"random\",\"distractor_ticks\":4,\"distractors\":1,"
                     "\"response_ticks\":8}");
    expect_canonical("delayed_xor", NULL,
                     "{\"cue_mode\":\"transient\",\"cue_ticks\":8,\"gap\":32,"
                     "\"response_ticks\":8}");
    expect_canonical("evidence_accumulation", NULL,
                     "{\"evidence_fraction\":0.25,\"input_mode\":\"visible\",\"pulse_count\":32,"
                     "\"pulse_ticks\":1,\"response_ticks\":8}");
    expect_canonical("context_integration", NULL,
                     "{\"congruency\":\"mixed\",\"context_mode\":\"transient\",\"cue_ticks\":8,"
                     "\"evidence_fraction\":0.25,\"pulse_count\":32,\"pulse_ticks\":1,"
                     "\"response_ticks\":8}");
    expect_canonical("temporal_order", NULL,
                     "{\"cue_ticks\":8,\"gap\":8,\"input_mode\":\"visible\",\"response_ticks\":8,"
                     "\"terminal_ticks\":8}");
    expect_canonical("reversal_adaptation", NULL,
                     "{\"cue_ticks\":8,\"feedback_mode\":\"visible\",\"feedback_ticks\":8,"
                     "\"response_ticks\":8,\"reversal_range\":[32,64],\"rounds\":96}");
    /* Numbers are normalised: reals become floats whatever the plan wrote;
     * counts stay ints; strings and bools go through Python's float(). */
    expect_canonical("pong", "{\"sensory_gain\": 2}", "{\"sensory_gain\":2.0}");
    expect_canonical("pong", "{\"sensory_gain\": \" 1_5.25e0 \"}", "{\"sensory_gain\":15.25}");
    expect_canonical("pong", "{\"sensory_gain\": true}", "{\"sensory_gain\":1.0}");
    expect_canonical("tracking",
                     "{\"theta0\": 1, \"phi0\": null, \"direction0\": -1, \"sensor_offsets_deg\":"
                     " [1, 2.5], \"movement_amp\": 3, \"randomize_start\": false,"
                     " \"stim_speed_rad\": 0, \"eye_offset_deg\": \"-2\"}",
                     "{\"direction0\":-1.0,\"eye_offset_deg\":-2.0,\"movement_amp\":3.0,"
                     "\"phi0\":null,\"randomize_start\":false,\"sensor_offsets_deg\":[1.0,2.5],"
                     "\"sensory_gain\":1.0,\"stim_speed_rad\":0.0,\"theta0\":1.0}");
    expect_canonical("cartpole_plank_easy",
                     "{\"initial_ranges\": [[0, 0], [1, 2], [-1, 1.5], [\"7\", 8]]}",
                     "{\"initial_ranges\":[[0.0,0.0],[1.0,2.0],[-1.0,1.5],[7.0,8.0]]}");
    /* Python iterates a string's characters. */
    expect_canonical("tracking", "{\"sensor_offsets_deg\": \"305\"}",
                     "{\"direction0\":null,\"eye_offset_deg\":30.0,\"movement_amp\":10.0,"
                     "\"phi0\":null,\"randomize_start\":true,\"sensor_offsets_deg\":[3.0,0.0,5.0],"
                     "\"sensory_gain\":1.0,\"stim_speed_rad\":0.017453292519943295,"
                     "\"theta0\":null}");
    expect_canonical("delayed_cue", "{\"delays\": [0], \"cue_mode\": \"hidden\"}",
                     "{\"cue_mode\":\"hidden\",\"cue_ticks\":8,\"delays\":[0],"
                     "\"response_ticks\":8}");
    expect_canonical("context_integration",
                     "{\"pulse_count\": 16, \"evidence_fraction\": 0.125, \"congruency\":"
                     " \"conflicting\", \"context_mode\": \"persistent\"}",
                     "{\"congruency\":\"conflicting\",\"context_mode\":\"persistent\","
                     "\"cue_ticks\":8,\"evidence_fraction\":0.125,\"pulse_count\":16,"
                     "\"pulse_ticks\":1,\"response_ticks\":8}");
}

/* The frozen calibration records carry the reference's resolved options of
 * the three physical families: ours must be the same JSON value (keys,
 * int vs float, nulls). */
static void test_calibration_records_task_options(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    const char *tasks[] = {"tracking", "pong", "cartpole_plank_easy"};
    for (size_t i = 0; i < 3; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "reference/calibrations/cpu-%s.json", tasks[i]);
        bl_json *doc = NULL;
        bl_error err = {0};
        if (bl_json_read_file(bl_test_shared_path(rel), &doc, &err) != BL_OK)
            fail_msg("%s: %s", rel, err.msg);
        bl_json *records = bl_json_get(doc, "calibrations");
        assert_non_null(records);
        bl_json *sig = bl_json_get(bl_json_at(records, 0), "signature");
        assert_non_null(sig);
        bl_json *reference = bl_json_get(sig, "task_options");
        assert_non_null(reference);
        assert_string_equal(bl_json_get_string(bl_json_get(sig, "task"), NULL), tasks[i]);
        bl_task_options o;
        bl_test_task_resolve(tasks[i], NULL, &o);
        bl_json *ours = NULL;
        assert_int_equal(bl_task_options_json(&o, &ours, &err), BL_OK);
        if (!bl_json_equal(ours, reference)) {
            char *a = options_text(&o);
            fail_msg("%s: ours %s differs from the frozen record", tasks[i], a);
        }
        /* And re-resolving the reference's options gives them back. */
        bl_task_options again;
        assert_int_equal(bl_task_options_resolve(o.kind, reference, &again, &err), BL_OK);
        bl_json *back = NULL;
        assert_int_equal(bl_task_options_json(&again, &back, &err), BL_OK);
        assert_true(bl_json_equal(back, reference));
        bl_json_destroy(back);
        bl_task_options_clear(&again);
        bl_json_destroy(ours);
        bl_task_options_clear(&o);
        bl_json_destroy(doc);
    }
}

/* ---- validation (§8.1, test #13) ---------------------------------------- */

static void test_task_option_validation(void **state)
{
    (void)state;
    static const bad_options cases[] = {
        /* §10.1 #13, in its order. */
        {"delayed_cue", "{\"cue_ticks\": 0}",
         BL_EVALUE, "cue_ticks must be an integer >= 1"},
        {"delayed_cue", "{\"delays\": [8, 8]}",
         BL_EVALUE, "delays must be nonempty and distinct"},
        {"recall_interference", "{\"delay\": 8}",
         BL_EVALUE, "distractors need delay >= 32 and blank frames between cues"},
        {"recall_interference", "{\"distractors\": 20}",
         BL_EVALUE, "distractors need delay >= 32 and blank frames between cues"},
        {"delayed_xor", "{\"gap\": -1}",
         BL_EVALUE, "gap must be an integer >= 0"},
        {"evidence_accumulation", "{\"pulse_count\": 17}",
         BL_EVALUE, "evidence counts must be integral and permit either final pulse"},
        {"evidence_accumulation", "{\"evidence_fraction\": 1}",
         BL_EVALUE, "evidence_fraction must lie in (0, 1)"},
        {"temporal_order", "{\"terminal_ticks\": 0}",
         BL_EVALUE, "terminal_ticks must be an integer >= 1"},
        {"reversal_adaptation", "{\"reversal_range\": [90, 95]}",
         BL_EVALUE, "reversal must leave sixteen scored rounds"},
        {"pong", "{\"speed\": 3}",
         BL_EVALUE, "unknown options for pong: ['speed']"},
        {"tracking", "{\"sensor_offsets_deg\": []}",
         BL_EVALUE, "sensor_offsets_deg needs finite offsets"},
        {"cartpole_plank_easy", "{\"initial_ranges\": [[1, -1], [0, 0], [0, 0], [0, 0]]}",
         BL_EVALUE, "initial_ranges needs four finite ordered pairs"},
    };
    expect_failures(cases, sizeof cases / sizeof *cases);
}

static void test_validation_messages_and_order(void **state)
{
    (void)state;
    /* The accepted sides of boundaries checked below. */
    static const task_given accepted[] = {
        {"recall_interference", "{\"distractors\": 3, \"distractor_ticks\": 9, \"delay\": 32}"},
        /* k = 0 needs nothing. */
        {"recall_interference", "{\"distractors\": 0, \"delay\": 0}"},
        /* n = 4, f = 0.5: left = 3, n - left = 1 is the smallest allowed. */
        {"evidence_accumulation", "{\"pulse_count\": 4, \"evidence_fraction\": 0.5}"},
        {"reversal_adaptation", "{\"reversal_range\": [81, 81]}"},
    };
    bl_task_options o;
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++) {
        bl_test_task_resolve(accepted[i].task, accepted[i].given, &o);
        bl_task_options_clear(&o);
    }
    static const bad_options cases[] = {
        /* Unknown keys: sorted, Python's list repr, checked before anything. */
        {"pong", "{\"zeta\": 1, \"it's\": 2, \"alpha\": 3, \"sensory_gain\": -1}",
         BL_EVALUE, "unknown options for pong: ['alpha', \"it's\", 'zeta']"},
        {"delayed_cue", "{\"gap\": 1}",
         BL_EVALUE, "unknown options for delayed_cue: ['gap']"},
        /* "integer" rejects bools, reals (2.0 too) and strings. */
        {"delayed_cue", "{\"cue_ticks\": true}",
         BL_EVALUE, "cue_ticks must be an integer >= 1"},
        {"delayed_cue", "{\"cue_ticks\": 8.0}",
         BL_EVALUE, "cue_ticks must be an integer >= 1"},
        {"delayed_cue", "{\"response_ticks\": \"8\"}",
         BL_EVALUE, "response_ticks must be an integer >= 1"},
        {"delayed_cue", "{\"delays\": [8, 2.0]}",
         BL_EVALUE, "delays must be an integer >= 0"},
        {"delayed_cue", "{\"delays\": []}",
         BL_EVALUE, "delays must be nonempty and distinct"},
        {"delayed_cue", "{\"delays\": 8}",
         BL_ETYPE, "'int' object is not iterable"},
        {"delayed_cue", "{\"delays\": \"8\"}",
         BL_EVALUE, "delays must be an integer >= 0"},
        /* The reference's order: the integer checks come before the modes, the
         * per-family checks after them. */
        {"temporal_order", "{\"input_mode\": \"loud\", \"gap\": -2, \"cue_ticks\": 0}",
         BL_EVALUE, "cue_ticks must be an integer >= 1"},
        {"temporal_order", "{\"input_mode\": \"loud\", \"gap\": -2}",
         BL_EVALUE, "gap must be an integer >= 0"},
        {"temporal_order", "{\"input_mode\": \"loud\"}",
         BL_EVALUE, "input_mode must be one of ('visible', 'hidden')"},
        {"delayed_cue", "{\"cue_mode\": \"Transient\"}",
         BL_EVALUE, "cue_mode must be one of ('transient', 'persistent', 'hidden')"},
        {"context_integration", "{\"context_mode\": 1}",
         BL_EVALUE, "context_mode must be one of ('transient', 'persistent', 'hidden')"},
        {"context_integration", "{\"congruency\": \"both\"}",
         BL_EVALUE, "congruency must be one of ('mixed', 'congruent', 'conflicting')"},
        {"reversal_adaptation", "{\"feedback_mode\": \"shown\"}",
         BL_EVALUE, "feedback_mode must be one of ('visible', 'hidden')"},
        {"recall_interference", "{\"distractor_mode\": \"none\"}",
         BL_EVALUE, "distractor_mode must be one of ('random', 'matched', 'opposite', 'absent')"},
        {"recall_interference", "{\"distractor_mode\": \"none\", \"delay\": 31}",
         BL_EVALUE, "distractors need delay >= 32 and blank frames between cues"},
        /* k*w + k + 1 <= delay is the boundary. */
        {"recall_interference", "{\"distractors\": 3, \"distractor_ticks\": 10}",
         BL_EVALUE, "distractors need delay >= 32 and blank frames between cues"},
        {"evidence_accumulation", "{\"pulse_count\": 3}",
         BL_EVALUE, "pulse_count must be an integer >= 4"},
        {"evidence_accumulation", "{\"evidence_fraction\": 0.3}",
         BL_EVALUE, "evidence counts must be integral and permit either final pulse"},
        {"context_integration", "{\"evidence_fraction\": 0}",
         BL_EVALUE, "evidence_fraction must lie in (0, 1)"},
        {"context_integration", "{\"evidence_fraction\": \"nan\"}",
         BL_EVALUE, "evidence_fraction must lie in (0, 1)"},
        {"context_integration", "{\"evidence_fraction\": [0.5]}",
         BL_ETYPE, "float() argument must be a string or a real number, not 'tuple'"},
        {"reversal_adaptation", "{\"rounds\": 47}",
         BL_EVALUE, "rounds must be an integer >= 48"},
        {"reversal_adaptation", "{\"reversal_range\": [32, 64, 70]}",
         BL_EVALUE, "reversal_range needs two endpoints"},
        {"reversal_adaptation", "{\"reversal_range\": 5}",
         BL_ETYPE, "object of type 'int' has no len()"},
        {"reversal_adaptation", "{\"reversal_range\": [1, 40]}",
         BL_EVALUE, "reversal_range must be an integer >= 2"},
        {"reversal_adaptation", "{\"reversal_range\": [40, 39]}",
         BL_EVALUE, "reversal must leave sixteen scored rounds"},
        {"reversal_adaptation", "{\"reversal_range\": [82, 82]}",
         BL_EVALUE, "reversal must leave sixteen scored rounds"},
        {"pong", "{\"sensory_gain\": -1}",
         BL_EVALUE, "sensory_gain must be finite and nonnegative"},
        {"pong", "{\"sensory_gain\": \"inf\"}",
         BL_EVALUE, "sensory_gain must be finite and nonnegative"},
        {"pong", "{\"sensory_gain\": \"1,5\"}",
         BL_EVALUE, "could not convert string to float: '1,5'"},
        {"pong", "{\"sensory_gain\": \"1__5\"}",
         BL_EVALUE, "could not convert string to float: '1__5'"},
        {"pong", "{\"sensory_gain\": null}",
         BL_ETYPE, "float() argument must be a string or a real number, not 'NoneType'"},
        {"tracking", "{\"movement_amp\": 0}",
         BL_EVALUE, "movement_amp must be positive"},
        {"tracking", "{\"movement_amp\": -1e-300}",
         BL_EVALUE, "movement_amp must be positive"},
        {"tracking", "{\"theta0\": \"abc\"}",
         BL_EVALUE, "could not convert string to float: 'abc'"},
        {"tracking", "{\"phi0\": \"-Infinity\"}",
         BL_EVALUE, "phi0 must be finite"},
        {"tracking", "{\"randomize_start\": 1}",
         BL_EVALUE, "randomize_start must be boolean"},
        {"tracking", "{\"sensor_offsets_deg\": [1, \"x\"]}",
         BL_EVALUE, "could not convert string to float: 'x'"},
        {"tracking", "{\"sensor_offsets_deg\": 4}",
         BL_ETYPE, "'int' object is not iterable"},
        {"tracking", "{\"sensor_offsets_deg\": [0, \"nan\"]}",
         BL_EVALUE, "sensor_offsets_deg needs finite offsets"},
        /* sensory_gain is checked before the other Tracking reals. */
        {"tracking", "{\"movement_amp\": 0, \"sensory_gain\": -2}",
         BL_EVALUE, "sensory_gain must be finite and nonnegative"},
        {"cartpole_plank_easy", "{\"initial_ranges\": [[0, 1], [0, 1], [0, 1]]}",
         BL_EVALUE, "initial_ranges needs four finite ordered pairs"},
        {"cartpole_plank_easy", "{\"initial_ranges\": [[0, 1], [0, 1], [0, 1], [0, 1, 2]]}",
         BL_EVALUE, "initial_ranges needs four finite ordered pairs"},
        {"cartpole_plank_easy", "{\"initial_ranges\": [[0, 1], [0, 1], [0, 1], [\"-inf\", 1]]}",
         BL_EVALUE, "initial_ranges needs four finite ordered pairs"},
        {"cartpole_plank_easy", "{\"initial_ranges\": [[0, 1], 3]}",
         BL_ETYPE, "'int' object is not iterable"},
        {"cartpole_plank_easy", "{\"initial_ranges\": \"1234\"}",
         BL_EVALUE, "initial_ranges needs four finite ordered pairs"},
        /* Beyond the int32 tick range no world could exist. */
        {"delayed_cue", "{\"cue_ticks\": 3000000000}",
         BL_EVALUE, "cue_ticks must be an integer <= 2147483647"},
        {"reversal_adaptation",
         "{\"rounds\": 2000000000, \"cue_ticks\": 2000000000, \"reversal_range\": [2, 2]}",
         BL_EVALUE, "reversal_adaptation episode must fit in 2147483647 ticks"},
    };
    expect_failures(cases, sizeof cases / sizeof *cases);
    /* A non-object is not an option map. */
    bl_json *arr = bl_json_array();
    bl_error err = {0};
    assert_int_equal(bl_task_options_resolve(BL_TASK_PONG, arr, &o, &err), BL_ETYPE);
    bl_json_destroy(arr);
    /* Non-finite reals made in C (JSON cannot carry them). */
    bl_json *given = bl_json_object();
    assert_int_equal(bl_json_object_set(given, "eye_offset_deg", bl_json_real(INFINITY), &err),
                     BL_OK);
    assert_int_equal(bl_task_options_resolve(BL_TASK_TRACKING, given, &o, &err), BL_EVALUE);
    assert_string_equal(err.msg, "eye_offset_deg must be finite");
    bl_json_destroy(given);
}

/* Values that pass in float64 (the float32 cast is the cohort's check). */
static void test_tracking_edge_values_pass(void **state)
{
    (void)state;
    bl_task_options o;
    bl_test_task_resolve("tracking",
                         "{\"movement_amp\": 1e-50, \"stim_speed_rad\": 0, "
                         "\"sensory_gain\": 0}",
                         &o);
    assert_true(o.movement_amp == 1e-50);
    assert_true(o.stim_speed_rad == 0.0 && o.sensory_gain == 0.0);
    assert_false(o.has_theta0 || o.has_phi0 || o.has_direction0);
    bl_task_options_clear(&o);
    bl_test_task_resolve("tracking", "{\"theta0\": 0, \"direction0\": 0.5}", &o);
    assert_true(o.has_theta0 && o.theta0 == 0.0);
    assert_false(o.has_phi0);
    assert_true(o.has_direction0 && o.direction0 == 0.5);
    bl_task_options_clear(&o);
}

static void test_copy_and_clear_own_their_arrays(void **state)
{
    (void)state;
    bl_task_options a, b, c, d;
    bl_test_task_resolve("tracking", "{\"sensor_offsets_deg\": [1, 2, 3]}", &a);
    bl_error err = {0};
    assert_int_equal(bl_task_options_copy(&a, &b, &err), BL_OK);
    assert_ptr_not_equal(a.sensor_offsets_deg, b.sensor_offsets_deg);
    b.sensor_offsets_deg[0] = 99.0;
    assert_true(a.sensor_offsets_deg[0] == 1.0);
    assert_int_equal(b.n_sensor_offsets, 3);
    bl_test_task_resolve("delayed_cue", "{\"delays\": [5, 6]}", &c);
    assert_int_equal(bl_task_options_copy(&c, &d, &err), BL_OK);
    assert_ptr_not_equal(c.delays, d.delays);
    assert_int_equal(d.n_delays, 2);
    assert_int_equal(d.delays[1], 6);
    bl_task_options_clear(&a);
    assert_null(a.sensor_offsets_deg);
    assert_int_equal(a.n_sensor_offsets, 0);
    bl_task_options_clear(&b);
    bl_task_options_clear(&c);
    bl_task_options_clear(&d);
    bl_task_options_clear(NULL);
}

/* ---- presets (§5.11, test #1) ------------------------------------------- */

static void test_all_64_named_presets(void **state)
{
    (void)state;
    bl_task_preset *p = NULL;
    size_t n = 0;
    bl_error err = {0};
    assert_int_equal(bl_capacity_presets(&p, &n, &err), BL_OK);
    assert_int_equal(n, 64);
    assert_string_equal(p[0].id, "delayed_cue__delay_0");
    assert_string_equal(p[63].id, "reversal_adaptation__single_reversal");
    size_t per_kind[BL_TASK_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        per_kind[p[i].options.kind]++;
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(p[i].id, p[j].id);
        /* The id names the family. */
        const char *name = bl_task_name(p[i].options.kind);
        assert_int_equal(strncmp(p[i].id, name, strlen(name)), 0);
        assert_string_equal(p[i].id + strlen(name), strstr(p[i].id, "__"));
        bl_task_definition d;
        bl_task_define(&p[i].options, &d);
        assert_int_equal(p[i].horizon, d.default_horizon);
        /* Presets are valid option sets: their JSON resolves to itself. */
        bl_json *j = NULL;
        assert_int_equal(bl_task_options_json(&p[i].options, &j, &err), BL_OK);
        bl_task_options again;
        assert_int_equal(bl_task_options_resolve(p[i].options.kind, j, &again, &err), BL_OK);
        bl_json *k = NULL;
        assert_int_equal(bl_task_options_json(&again, &k, &err), BL_OK);
        assert_true(bl_json_equal(j, k));
        bl_json_destroy(j);
        bl_json_destroy(k);
        bl_task_options_clear(&again);
    }
    static const size_t expected[BL_TASK_COUNT] = {0, 0, 0, 5, 6, 4, 9, 36, 3, 1};
    for (int k = 0; k < BL_TASK_COUNT; k++)
        assert_int_equal(per_kind[k], expected[k]);
    /* Order and a few definitions. */
    static const char *const first[] = {
        "delayed_cue__delay_0",
        "delayed_cue__delay_8",
        "delayed_cue__delay_32",
        "recall_interference__delay_32_distractors_1",
        "recall_interference__delay_32_distractors_3",
        "delayed_cue__delay_128",
        "recall_interference__delay_128_distractors_1",
        "recall_interference__delay_128_distractors_3",
        "delayed_cue__delay_256",
        "recall_interference__delay_256_distractors_1",
        "recall_interference__delay_256_distractors_3",
        "delayed_xor__gap_0",
        "delayed_xor__gap_8",
        "delayed_xor__gap_32",
        "delayed_xor__gap_128",
        "evidence_accumulation__pulses_16_evidence_125",
        "context_integration__pulses_16_evidence_125_congruent_transient",
        "context_integration__pulses_16_evidence_125_congruent_persistent",
        "context_integration__pulses_16_evidence_125_conflicting_transient",
        "context_integration__pulses_16_evidence_125_conflicting_persistent",
        "evidence_accumulation__pulses_16_evidence_250",
    };
    for (size_t i = 0; i < sizeof first / sizeof *first; i++)
        assert_string_equal(p[i].id, first[i]);
    assert_string_equal(p[55].id, "evidence_accumulation__pulses_64_evidence_500");
    assert_string_equal(p[59].id,
                        "context_integration__pulses_64_evidence_500_conflicting_persistent");
    assert_string_equal(p[60].id, "temporal_order__gap_0");
    assert_string_equal(p[62].id, "temporal_order__gap_32");
    assert_int_equal(p[0].horizon, 16);
    assert_int_equal(p[0].options.n_delays, 1);
    assert_int_equal(p[0].options.delays[0], 0);
    assert_int_equal(p[8].horizon, 272);
    assert_int_equal(p[7].horizon, 144);
    assert_int_equal(p[7].options.distractors, 3);
    assert_int_equal(p[14].horizon, 152);
    assert_int_equal(p[16].horizon, 32);
    assert_int_equal(p[16].options.congruency, BL_CONGRUENCY_CONGRUENT);
    assert_int_equal(p[17].options.context_mode, BL_CUE_PERSISTENT);
    assert_true(p[20].options.evidence_fraction == 0.25);
    assert_int_equal(p[62].horizon, 64);
    assert_int_equal(p[63].horizon, 2304);
    bl_capacity_presets_destroy(p, n);
}

/* ---- allocation failures -------------------------------------------------- */

/* Runs one workload with the k-th allocation failing (k = 0: none);
 * returns its status and the allocations it attempted. */
static bl_status workload(int phase, const bl_json *given, long k, long *used, bl_error *err)
{
    bl_alloc_fail_at(k);
    bl_status st = BL_OK;
    bl_task_options o = {0};
    bl_json *j = NULL;
    bl_task_preset *p = NULL;
    size_t n = 0;
    switch (phase) {
    case 0: /* reals from strings, a tuple, None */
        st = bl_task_options_resolve(BL_TASK_TRACKING, given, &o, err);
        break;
    case 1: /* a copy with owned arrays */
        st = bl_task_options_resolve(BL_TASK_DELAYED_CUE, given, &o, err);
        if (st == BL_OK) {
            bl_task_options c;
            st = bl_task_options_copy(&o, &c, err);
            if (st == BL_OK)
                bl_task_options_clear(&c);
        }
        break;
    case 2: /* the JSON form */
        st = bl_task_options_resolve(BL_TASK_TRACKING, NULL, &o, err);
        if (st == BL_OK)
            st = bl_task_options_json(&o, &j, err);
        break;
    case 3:
        st = bl_capacity_presets(&p, &n, err);
        break;
    case 4: /* an error message built on the heap */
        st = bl_task_options_resolve(BL_TASK_TRACKING, given, &o, err);
        break;
    }
    *used = bl_alloc_count();
    bl_alloc_fail_at(0);
    bl_json_destroy(j);
    bl_task_options_clear(&o);
    bl_capacity_presets_destroy(p, n);
    return st;
}

static void test_allocation_failures_are_clean(void **state)
{
    (void)state;
    bl_json *given[5] = {
        parse("{\"sensor_offsets_deg\": [1, \"2\", 3], \"theta0\": \"0.5\", \"phi0\": null}"),
        parse("{\"delays\": [1, 2, 9]}"),
        NULL,
        NULL,
        parse("{\"sensor_offsets_deg\": [1, \"2\", 3], \"zz\": 1, \"it's\": 2}"),
    };
    for (int phase = 0; phase < 5; phase++) {
        bl_json *options = given[phase];
        bl_error err = {0};
        long total = 0;
        bl_status expected = phase == 4 ? BL_EVALUE : BL_OK;
        assert_int_equal(workload(phase, options, 0, &total, &err), expected);
        assert_true(total > 0);
        for (long k = 1; k <= total; k++) {
            long used = 0;
            bl_error e = {0};
            bl_status st = workload(phase, options, k, &used, &e);
            if (st != BL_ENOMEM || e.status != BL_ENOMEM)
                fail_msg("phase %d: allocation %ld of %ld failed but status %s (%s)", phase, k,
                         total, bl_status_kind(st), e.msg);
        }
        bl_json_destroy(options);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_unsupported_tasks),
        cmocka_unit_test(test_ten_families_resolve_with_defaults),
        cmocka_unit_test(test_resolved_options_json_match_the_reference),
        cmocka_unit_test(test_calibration_records_task_options),
        cmocka_unit_test(test_task_option_validation),
        cmocka_unit_test(test_validation_messages_and_order),
        cmocka_unit_test(test_tracking_edge_values_pass),
        cmocka_unit_test(test_copy_and_clear_own_their_arrays),
        cmocka_unit_test(test_all_64_named_presets),
        cmocka_unit_test(test_allocation_failures_are_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
