/* Evaluations (spec/platform.md §4.4, §4.10, §5; §8 test_evaluation):
 * calibration selection and its refusals, world disjointness, adjusted
 * outcomes, target summaries, paired contrasts (profile and ablate), the
 * calibrate operation, failed trials nulling a summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "support.h"

static bl_evaluation *evaluate(const bl_resolved_plan *r, int64_t batch,
                               const bl_calibration *const *cals, size_t ncals)
{
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = batch;
    x.cpu_threads = 2;
    bl_evaluation *e = NULL;
    OK_E(bl_evaluate(r, &x, cals, ncals, NULL, &e, &e_));
    return e;
}

static bl_status evaluate_fails(const bl_resolved_plan *r, const bl_calibration *const *cals,
                                size_t ncals, const char *fragment)
{
    bl_execution x;
    bl_execution_default(&x);
    bl_evaluation *e = NULL;
    bl_error err = {0};
    bl_status st = bl_evaluate(r, &x, cals, ncals, NULL, &e, &err);
    assert_int_not_equal(st, BL_OK);
    assert_null(e);
    if (!strstr(err.msg, fragment))
        fail_msg("'%s' does not contain '%s'", err.msg, fragment);
    bl_error err2 = {0};
    assert_int_equal(bl_evaluation_preflight(r, &x, cals, ncals, &err2), st);
    assert_string_equal(err.msg, err2.msg);
    return st;
}

/* A profile of a small reservoir beside its matched null, 3 blocks x 4. */
static const char profile_plan[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"profile\"\n"
    "[evaluation]\nblocks = 3\ntrials_per_block = 4\nroot_seed = 5\n"
    "[[targets]]\nid = \"reservoir\"\n[targets.composition]\ncount = 12\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[[targets]]\nid = \"other_task\"\ncontroller = \"reference_null\"\n"
    "[targets.composition.task]\nkind = \"delayed_xor\"\n";

static void test_summaries_and_contrasts(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(profile_plan);
    bl_evaluation *e = evaluate(r, 5, NULL, 0);
    assert_int_equal(e->ntargets, 3);
    /* Binary probes get analytic chance: every row and summary adjusted. */
    for (size_t i = 0; i < e->run->ntrials; i++) {
        const bl_trial_result *t = &e->run->trials[i];
        assert_int_equal(t->status, BL_TRIAL_COMPLETED);
        assert_int_equal(t->normalisation, BL_ADJUST_ANALYTIC);
        assert_true(t->normalised == (t->raw - 0.5) / 0.5);
        assert_int_equal(strlen(t->calibration_id), 64);
    }
    for (size_t s = 0; s < 3; s++) {
        const bl_target_summary *sm = &e->summaries[s];
        const bl_trial_result *rows = e->run->trials + s * 12;
        assert_int_equal(sm->completed_trials, 12);
        assert_int_equal(sm->failed_trials, 0);
        assert_int_equal(sm->independent_blocks, 3);
        assert_string_equal(sm->independent_unit, "independent_wiring_blocks");
        /* Raw estimate = mean of the block means, recomputed here. */
        double blocks[3];
        for (int b = 0; b < 3; b++) {
            double v[4];
            for (int k = 0; k < 4; k++)
                v[k] = rows[b * 4 + k].raw;
            blocks[b] = bl_np_mean(v, 4);
        }
        assert_true(sm->raw == bl_np_mean(blocks, 3));
        assert_int_equal(sm->normalisation, BL_ADJUST_ANALYTIC);
        assert_true(sm->normalised == (sm->raw - 0.5) / 0.5);
        assert_true(sm->has_raw_interval);
        double lo = fmin(fmin(blocks[0], blocks[1]), blocks[2]);
        double hi = fmax(fmax(blocks[0], blocks[1]), blocks[2]);
        assert_true(sm->raw_interval[0] >= lo && sm->raw_interval[1] <= hi);
        assert_true(sm->raw_interval[0] <= sm->raw_interval[1]);
        assert_true(sm->has_adjusted);
        assert_int_equal(sm->adjusted.status, BL_INTERVAL_AVAILABLE);
        assert_int_equal(sm->adjusted.repetitions, 2000);
        assert_int_equal(sm->scoring_window, s < 2 ? 144 : 56);
    }
    /* One contrast: the reservoir against its matched null (same pairing,
     * task and horizon); delayed_xor is another task. */
    assert_int_equal(e->ncontrasts, 1);
    const bl_contrast *c = &e->contrasts[0];
    assert_string_equal(c->target_id, "reservoir");
    assert_string_equal(c->reference_id, "null");
    assert_int_equal(c->status, BL_CONTRAST_PAIRED_RAW);
    assert_int_equal(c->nblocks, 3);
    double diffs[3];
    for (int b = 0; b < 3; b++) {
        double v[4];
        for (int k = 0; k < 4; k++)
            v[k] = e->run->trials[b * 4 + k].raw - e->run->trials[12 + b * 4 + k].raw;
        diffs[b] = bl_np_mean(v, 4);
        assert_true(c->block_differences[b] == diffs[b]);
    }
    assert_true(c->estimate == bl_np_mean(diffs, 3));
    assert_true(c->has_interval);
    /* Analytic records of both tasks are listed once each. */
    assert_int_equal(e->ncalibrations, 2);
    bl_json *j = NULL;
    OK_E(bl_target_summary_json(&e->summaries[0], &j, &e_));
    assert_string_equal(
        bl_json_get_string(bl_json_get(bl_json_get(j, "outcome"), "normalisation_status"), NULL),
        "null_adjusted_analytic");
    assert_non_null(bl_json_get(bl_json_get(j, "adjusted"), "interval"));
    bl_json_destroy(j);
    OK_E(bl_contrast_json(c, &j, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(j, "status"), NULL), "paired_raw");
    assert_int_equal(bl_json_size(bl_json_get(j, "block_differences")), 3);
    bl_json_destroy(j);
    /* The same numbers for another partition of the work. */
    bl_evaluation *e2 = evaluate(r, 1, NULL, 0);
    for (size_t s = 0; s < 3; s++) {
        bl_json *a = NULL, *b = NULL;
        OK_E(bl_target_summary_json(&e->summaries[s], &a, &e_));
        OK_E(bl_target_summary_json(&e2->summaries[s], &b, &e_));
        assert_true(bl_json_equal(a, b));
        bl_json_destroy(a);
        bl_json_destroy(b);
    }
    bl_evaluation_destroy(e2);
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(r);
}

/* §8: a 3-verb ablation at batch 7 yields 3 contrasts against "baseline",
 * all completed, on the same worlds; shuffled trials carry input_shuffle. */
static void test_paired_ablation(void **state)
{
    (void)state;
    static const char *const verbs[] = {"freeze_weights", "blind_input", "shuffle_input"};
    bl_buf text;
    bl_buf_init(&text);
    bl_buf_puts(&text, "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"ablation\"\n"
                       "operation = \"ablate\"\n[evaluation]\nblocks = 2\ntrials_per_block = 3\n"
                       "[[targets]]\nid = \"baseline\"\n[targets.composition]\ncount = 10\n"
                       "[targets.composition.task]\nkind = \"delayed_cue\"\n");
    for (int v = 0; v < 3; v++)
        bl_buf_printf(&text,
                      "[[targets]]\nid = \"%s\"\ninterventions = [{tick = 1, verb = \"%s\"}]\n"
                      "[targets.composition]\ncount = 10\n"
                      "[targets.composition.task]\nkind = \"delayed_cue\"\n",
                      verbs[v], verbs[v]);
    OK_E(bl_buf_status(&text, &e_));
    bl_resolved_plan *r = bl_test_resolve_text(text.data);
    bl_evaluation *e = evaluate(r, 7, NULL, 0);
    assert_int_equal(e->ncontrasts, 3);
    for (int v = 0; v < 3; v++) {
        assert_string_equal(e->contrasts[v].target_id, verbs[v]);
        assert_string_equal(e->contrasts[v].reference_id, "baseline");
        assert_int_equal(e->contrasts[v].status, BL_CONTRAST_PAIRED_RAW);
    }
    for (size_t i = 0; i < 6; i++)
        for (int v = 1; v <= 3; v++)
            assert_string_equal(e->run->trials[i].world_seed,
                                e->run->trials[(size_t)v * 6 + i].world_seed);
    for (size_t i = 18; i < 24; i++) {
        assert_int_equal(e->run->trials[i].nseeds, 4);
        assert_string_equal(e->run->trials[i].seeds[3].stream, "input_shuffle");
    }
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(r);
    bl_buf_clear(&text);
}

/* Two null references for one reservoir are ambiguous (§5.4). */
static void test_ambiguous_reference_rejected(void **state)
{
    (void)state;
    static const char text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"ambiguous\"\n"
        "[[targets]]\nid = \"r\"\n[targets.composition]\ncount = 8\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[[targets]]\nid = \"n1\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[[targets]]\nid = \"n2\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n";
    bl_resolved_plan *r = bl_test_resolve_text(text);
    assert_int_equal(evaluate_fails(r, NULL, 0,
                                    "a paired contrast requires one unambiguous reference "
                                    "condition"),
                     BL_EVALUE);
    bl_resolved_plan_destroy(r);
}

/* A failed trial nulls the target's estimate and intervals (no estimate
 * over survivors), and its contrast is a failed pair. */
static void test_failed_trials_null_the_summary(void **state)
{
    (void)state;
    static const char text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"overflow\"\n"
        "[evaluation]\nblocks = 2\ntrials_per_block = 2\n"
        "[[targets]]\nid = \"overflow\"\n[targets.composition]\ncount = 12\ninput_gain = 8.0\n"
        "[targets.composition.node]\nkind = \"sorn\"\n"
        "[targets.composition.node.parameters]\ninput_row_sum = 1e308\np_input = 1.0\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n"
        "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n";
    bl_resolved_plan *r = bl_test_resolve_text(text);
    bl_evaluation *e = evaluate(r, 4, NULL, 0);
    const bl_target_summary *s = &e->summaries[0];
    assert_int_equal(s->failed_trials, 4);
    assert_int_equal(s->completed_trials, 0);
    assert_true(isnan(s->raw));
    assert_int_equal(s->normalisation, BL_ADJUST_NO_OUTCOME);
    assert_false(s->has_raw_interval);
    assert_false(s->has_adjusted);
    /* CartPole has no analytic chance and none was supplied. */
    assert_int_equal(e->summaries[1].normalisation, BL_ADJUST_UNAVAILABLE);
    assert_false(isnan(e->summaries[1].raw));
    assert_int_equal(e->ncontrasts, 1);
    assert_int_equal(e->contrasts[0].status, BL_CONTRAST_FAILED_PAIR);
    bl_json *j = NULL;
    OK_E(bl_target_summary_json(s, &j, &e_));
    assert_int_equal(bl_json_kindof(bl_json_get(bl_json_get(j, "outcome"), "raw")), BL_JSON_NULL);
    assert_int_equal(bl_json_kindof(bl_json_get(j, "raw_interval")), BL_JSON_NULL);
    assert_int_equal(bl_json_kindof(bl_json_get(j, "adjusted")), BL_JSON_NULL);
    bl_json_destroy(j);
    OK_E(bl_contrast_json(&e->contrasts[0], &j, &e_));
    assert_null(bl_json_get(j, "estimate"));
    bl_json_destroy(j);
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(r);
}

/* One trial's signature, from a one-target plan. */
static bl_json *signature_for(const char *task_table)
{
    char text[1024];
    snprintf(text, sizeof text,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"sig\"\n"
             "[[targets]]\nid = \"t\"\ncontroller = \"reference_null\"\n%s",
             task_table);
    bl_resolved_plan *r = bl_test_resolve_text(text);
    const bl_json *rt = bl_resolved_target(r, 0);
    bl_task_kind kind;
    OK_E(bl_task_from_name(bl_json_get_string(bl_json_get(bl_json_get(bl_json_get(
                                                  bl_json_get(rt, "target"), "composition"),
                                                                        "task"),
                                                            "kind"),
                                                NULL),
                           &kind, &e_));
    bl_task_options o;
    OK_E(bl_task_options_resolve(kind, bl_json_get(rt, "task_options"), &o, &e_));
    bl_json *sig = NULL;
    OK_E(bl_calibration_signature(&o, bl_json_get_int(bl_json_get(rt, "horizon")), 0,
                                  BL_FLOAT64, "cpu", &sig, &e_));
    bl_task_options_clear(&o);
    bl_resolved_plan_destroy(r);
    return sig;
}

/* §8 test_incompatible_calibration_is_rejected, plus the matching case. */
static void test_calibration_selection(void **state)
{
    (void)state;
    static const char cue3[] =
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[targets.composition.task.options]\ndelays = [0, 3]\n";
    bl_json *sig = signature_for(cue3);
    bl_calibration *cal = NULL;
    OK_E(bl_calibration_analytic(sig, &cal, &e_));
    const bl_calibration *cals[2] = {cal, cal};
    char text[1024];
    /* Different delays: a different contract. */
    snprintf(text, sizeof text,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"other\"\n"
             "[[targets]]\nid = \"t\"\n[targets.composition]\ncount = 8\n"
             "[targets.composition.task]\nkind = \"delayed_cue\"\n"
             "[targets.composition.task.options]\ndelays = [0, 5]\n");
    bl_resolved_plan *r = bl_test_resolve_text(text);
    assert_int_equal(evaluate_fails(r, cals, 1, "calibration signature mismatch for delayed_cue"),
                     BL_EVALUE);
    /* The message names what differs (ours after the spec's text). */
    bl_execution x;
    bl_execution_default(&x);
    bl_error err = {0};
    assert_int_equal(bl_evaluation_preflight(r, &x, cals, 1, &err), BL_EVALUE);
    assert_string_equal(err.msg, "calibration signature mismatch for delayed_cue: "
                                 "scoring_horizon (calibration 19, plan 21), "
                                 "task_options.delays (calibration [0,3], plan [0,5])");
    bl_resolved_plan_destroy(r);
    /* The same contract: the supplied record is applied (its id on rows). */
    snprintf(text, sizeof text,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"same\"\n"
             "[evaluation]\nblocks = 2\ntrials_per_block = 1\n"
             "[[targets]]\nid = \"t\"\n[targets.composition]\ncount = 8\n%s",
             cue3);
    r = bl_test_resolve_text(text);
    bl_evaluation *e = evaluate(r, 2, cals, 2); /* the same record twice is not ambiguous */
    assert_string_equal(e->run->trials[0].calibration_id, cal->id);
    assert_string_equal(e->summaries[0].calibration_id, cal->id);
    assert_int_equal(e->ncalibrations, 1);
    bl_evaluation_destroy(e);
    /* A float32 record for the float64 plan, from another machine: the
     * numerics and architecture differ; a long value is cut to keep the
     * line readable. */
    bl_json *sig32 = bl_json_copy(sig);
    assert_non_null(sig32);
    OK_E(bl_json_object_set(bl_json_get(sig32, "numerics"), "dtype", bl_json_string("float32"),
                            &e_));
    OK_E(bl_json_object_set(sig32, "architecture",
                            bl_json_string("x86_64 with a rather long architecture description"),
                            &e_));
    bl_calibration *cal32 = NULL;
    OK_E(bl_calibration_analytic(sig32, &cal32, &e_));
    const bl_calibration *cals32[1] = {cal32};
    assert_int_equal(bl_evaluation_preflight(r, &x, cals32, 1, &err), BL_EVALUE);
    char want[512];
    snprintf(want, sizeof want,
             "calibration signature mismatch for delayed_cue: numerics.dtype (calibration "
             "\"float32\", plan \"float64\"), architecture (calibration \"x86_64 with a rather "
             "long architectu..., plan \"%s\")",
             bl_json_get_string(bl_json_get(sig, "architecture"), NULL));
    assert_string_equal(err.msg, want);
    bl_calibration_destroy(cal32);
    bl_json_destroy(sig32);
    bl_resolved_plan_destroy(r);
    bl_calibration_destroy(cal);
    bl_json_destroy(sig);
}

/* §8 test_empirical_calibration_rejects_overlapping_worlds. */
static void test_overlapping_worlds_rejected(void **state)
{
    (void)state;
    static const char plan_text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"pong\"\n"
        "[evaluation]\nblocks = 2\ntrials_per_block = 1\n"
        "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"pong\"\n";
    bl_resolved_plan *r = bl_test_resolve_text(plan_text);
    bl_json *sig = signature_for("[targets.composition.task]\nkind = \"pong\"\n");
    double scores[1024];
    bl_json *ids = bl_json_array();
    assert_non_null(ids);
    for (int k = 0; k < 1024; k++) {
        char id[32];
        scores[k] = (double)(k % 7) / 7.0;
        snprintf(id, sizeof id, "synthetic-%d", k);
        OK_E(bl_json_array_append(ids, bl_json_string(id), &e_));
    }
    /* Disjoint ids: accepted (the record carries the evaluation's own
     * signature, so it is also the one applied). */
    bl_calibration *cal = NULL;
    OK_E(bl_calibration_empirical(sig, scores, 1024, NAN, ids, 3, 2000, &cal, &e_));
    const bl_calibration *cals[1] = {cal};
    bl_execution x;
    bl_execution_default(&x);
    OK_E(bl_evaluation_preflight(r, &x, cals, 1, &e_));
    bl_calibration_destroy(cal);
    /* One id equal to an evaluation world: refused before running. */
    bl_evaluation *e = evaluate(r, 2, NULL, 0);
    OK_E(bl_json_array_append(ids, bl_json_string(e->run->trials[1].world_seed), &e_));
    bl_json *trimmed = bl_json_array();
    for (size_t k = 1; k < 1025; k++)
        OK_E(bl_json_array_append(trimmed, bl_json_copy(bl_json_at(ids, k)), &e_));
    OK_E(bl_calibration_empirical(sig, scores, 1024, NAN, trimmed, 3, 2000, &cal, &e_));
    cals[0] = cal;
    assert_int_equal(evaluate_fails(r, cals, 1,
                                    "calibration and evaluation world identities must be "
                                    "disjoint"),
                     BL_EVALUE);
    bl_calibration_destroy(cal);
    bl_evaluation_destroy(e);
    bl_json_destroy(trimmed);
    bl_json_destroy(ids);
    bl_json_destroy(sig);
    bl_resolved_plan_destroy(r);
}

/* §4.10: a calibrate plan freezes one record per target; a probe's is
 * analytic; a failed trajectory refuses to freeze. */
static void test_calibrate_operation(void **state)
{
    (void)state;
    static const char text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"cal\"\n"
        "operation = \"calibrate\"\n"
        "[evaluation]\nblocks = 1024\ntrials_per_block = 1\nseed_partition = \"calibration\"\n"
        "root_seed = 4\n"
        "[[targets]]\nid = \"reference_null\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n";
    bl_resolved_plan *r = bl_test_resolve_text(text);
    bl_evaluation *e = evaluate(r, 128, NULL, 0);
    assert_int_equal(e->ncalibrations, 1);
    const bl_calibration *c = e->calibrations[0];
    assert_false(c->analytic);
    assert_int_equal(c->nscores, 1024);
    assert_int_equal(c->root_seed, 4);
    assert_true(c->upper_bound == 15000.0);
    for (size_t k = 0; k < 1024; k++) {
        assert_true(c->trial_scores[k] == e->run->trials[k].raw);
        assert_string_equal(bl_json_get_string(bl_json_at(c->trajectory_ids, k), NULL),
                            e->run->trials[k].world_seed);
    }
    double scores[1024];
    for (size_t k = 0; k < 1024; k++)
        scores[k] = e->run->trials[k].raw;
    assert_true(c->null_mean == bl_np_mean(scores, 1024));
    /* The produced record reads back and hashes to its id. */
    bl_json *doc = NULL;
    OK_E(bl_calibrations_document(&c, 1, &doc, &e_));
    bl_calibration *back = NULL;
    OK_E(bl_calibration_from_json(bl_json_at(bl_json_get(doc, "calibrations"), 0), &back, &e_));
    assert_string_equal(back->id, c->id);
    bl_calibration_destroy(back);
    bl_json_destroy(doc);
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(r);
}

/* ---- recording channels ------------------------------------------------------ */

static bl_evaluation *evaluate_recording(const bl_resolved_plan *r, bl_recording rec,
                                         int64_t batch, int64_t tile)
{
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = batch;
    x.noise_tile_frames = tile;
    x.cpu_threads = 2;
    x.recording = rec;
    /* Admission charges the estimate of a whole CartPole or reversal
     * horizon; the frames actually kept are far fewer. */
    x.recording_budget_bytes = (int64_t)1 << 34;
    x.memory_budget_bytes = (int64_t)1 << 36;
    bl_evaluation *e = NULL;
    OK_E(bl_evaluate(r, &x, NULL, 0, NULL, &e, &e_));
    return e;
}

/* §8 test_batches_and_noise_tiles_preserve_identity_and_events: batch 1 /
 * tile 1 and batch 4 / tile 32 give identical rows and probe features; 18
 * events and 6 probe trials from 2 blocks x 3 trials; analytic chance. */
static void probe_events_case(const char *node)
{
    char text[1024];
    snprintf(text, sizeof text,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"probe\"\n"
             "[evaluation]\nblocks = 2\ntrials_per_block = 3\n"
             "[[targets]]\nid = \"baseline\"\n[targets.composition]\ncount = 16\n"
             "[targets.composition.node]\nkind = \"%s\"\n"
             "[targets.composition.node.parameters]\n%s"
             "[targets.composition.task]\nkind = \"delayed_cue\"\n"
             "[targets.composition.task.options]\ndelays = [0, 3]\n",
             node, strcmp(node, "falandays") == 0 ? "drive = \"oosawa\"\nmembrane_noise = 0.2\n" : "");
    bl_resolved_plan *r = bl_test_resolve_text(text);
    bl_evaluation *a = evaluate_recording(r, BL_RECORDING_PROBE_EVENTS, 1, 1);
    bl_evaluation *b = evaluate_recording(r, BL_RECORDING_PROBE_EVENTS, 4, 32);
    bl_evaluation *plain = evaluate_recording(r, BL_RECORDING_SUMMARY, 32, 64);
    char *ta = bl_test_trials_text(a->run), *tb = bl_test_trials_text(b->run), *tp = bl_test_trials_text(plain->run);
    assert_string_equal(ta, tb);
    assert_string_equal(ta, tp); /* recording never changes a result */
    bl_recordings ra, rb;
    OK_E(bl_evaluation_recordings(r, a, &ra, &e_));
    OK_E(bl_evaluation_recordings(r, b, &rb, &e_));
    assert_int_equal(ra.nevents, 18);
    assert_int_equal(rb.nevents, 18);
    assert_int_equal(bl_json_size(ra.probe_trials), 6);
    assert_true(bl_json_equal(ra.probe_trials, rb.probe_trials));
    const double *fa[18], *fb;
    for (size_t k = 0; k < 18; k++) {
        bl_json *ea = NULL, *eb = NULL;
        size_t na, nb;
        OK_E(bl_recordings_event(&ra, k, &ea, &fa[k], &na, &e_));
        OK_E(bl_recordings_event(&rb, k, &eb, &fb, &nb, &e_));
        assert_true(bl_json_equal(ea, eb));
        assert_int_equal(na, 16);
        assert_int_equal(nb, 16);
        assert_memory_equal(fa[k], fb, 16 * sizeof(double));
        if (k == 2) {
            assert_string_equal(bl_json_get_string(bl_json_get(ea, "point"), NULL), "response");
            assert_string_equal(bl_json_get_string(bl_json_get(ea, "channel"), NULL),
                                "emitted_activity");
            assert_int_equal(bl_json_size(bl_json_get(ea, "feature_ids")), 16);
            assert_string_equal(
                bl_json_get_string(bl_json_at(bl_json_get(ea, "feature_ids"), 15), NULL),
                "neuron/15");
        }
        bl_json_destroy(ea);
        bl_json_destroy(eb);
    }
    /* The response point is a mean of spikes: within [0, 1]. */
    for (size_t i = 0; i < 16; i++)
        assert_true(fa[2][i] >= 0.0 && fa[2][i] <= 1.0);
    assert_int_equal(a->summaries[0].independent_blocks, 2);
    assert_int_equal(a->summaries[0].normalisation, BL_ADJUST_ANALYTIC);
    assert_int_equal(a->run->trials[0].nseeds, strcmp(node, "falandays") == 0 ? 3 : 2);
    bl_recordings_clear(&ra);
    bl_recordings_clear(&rb);
    bl_free(ta);
    bl_free(tb);
    bl_free(tp);
    bl_evaluation_destroy(a);
    bl_evaluation_destroy(b);
    bl_evaluation_destroy(plain);
    bl_resolved_plan_destroy(r);
}

static void test_probe_events_falandays(void **state)
{
    (void)state;
    probe_events_case("falandays");
}

static void test_probe_events_sorn(void **state)
{
    (void)state;
    probe_events_case("sorn");
}

/* Replays: one frame per completed tick, ending at the trial's last tick
 * (delays (0, 3): horizon 19); null controllers run frame by frame give the
 * same rows as the fused path. */
static void test_replay_frames(void **state)
{
    (void)state;
    static const char text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"replay\"\n"
        "diagnostic = true\n[evaluation]\nblocks = 1\ntrials_per_block = 2\n"
        "[[targets]]\nid = \"baseline\"\n[targets.composition]\ncount = 12\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[targets.composition.task.options]\ndelays = [0, 3]\n"
        "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[targets.composition.task.options]\ndelays = [0, 3]\n";
    bl_resolved_plan *r = bl_test_resolve_text(text);
    assert_int_equal(bl_json_get_int(bl_json_get(bl_resolved_target(r, 0), "horizon")), 19);
    bl_evaluation *e = evaluate_recording(r, BL_RECORDING_REPLAY, 3, 64);
    bl_evaluation *plain = evaluate_recording(r, BL_RECORDING_SUMMARY, 3, 64);
    char *te = bl_test_trials_text(e->run), *tp = bl_test_trials_text(plain->run);
    assert_string_equal(te, tp);
    bl_recordings rec;
    OK_E(bl_evaluation_recordings(r, e, &rec, &e_));
    assert_int_equal(rec.nevents, 0);
    assert_int_equal(bl_json_size(rec.replay_frames), 4);
    for (size_t j = 0; j < 4; j++) {
        const bl_trial_result *t = &e->run->trials[j];
        char key[128];
        snprintf(key, sizeof key, "%s/%lld/%lld", t->target_id, (long long)t->block,
                 (long long)t->trial);
        const bl_json *frames = bl_json_get(rec.replay_frames, key);
        assert_non_null(frames);
        assert_int_equal(bl_json_size(frames), (size_t)t->completed_ticks);
        int64_t active = 0; /* the trial's spike count, from its replay */
        for (size_t k = 0; k < bl_json_size(frames); k++) {
            const bl_json *f = bl_json_at(frames, k);
            const bl_json *act = bl_json_get(f, "activity");
            for (size_t i = 0; i < bl_json_size(act); i++)
                active += bl_json_get_real(bl_json_at(act, i)) != 0.0;
            assert_int_equal(bl_json_get_int(bl_json_get(f, "tick")), (int64_t)k + 1);
            assert_int_equal(bl_json_size(bl_json_get(f, "activity")), j < 2 ? 12 : 0);
            assert_int_equal(bl_json_size(bl_json_get(f, "effectors")), 2);
            assert_int_equal(bl_json_size(bl_json_get(f, "inputs")), 3);
            assert_non_null(bl_json_get(bl_json_get(f, "world"), "done"));
            assert_non_null(bl_json_get(bl_json_get(f, "world"), "round"));
        }
        const bl_json *last = bl_json_at(frames, bl_json_size(frames) - 1);
        assert_int_equal(bl_json_get_int(bl_json_get(bl_json_get(last, "world"), "done")), 1);
        /* One frame per tick: the units active after each frame, summed, are
         * the runner's spike count, with or without recording. */
        assert_int_equal(t->spikes, active);
        assert_int_equal(plain->run->trials[j].spikes, active);
        if (j < 2)
            assert_true(active > 0);
    }
    /* Whichever trial drew delay 3 ends at tick 19. */
    bool saw19 = false;
    for (size_t j = 0; j < 4; j++)
        saw19 = saw19 || e->run->trials[j].completed_ticks == 19;
    assert_true(saw19);
    bl_recordings_clear(&rec);
    bl_free(te);
    bl_free(tp);
    bl_evaluation_destroy(e);
    bl_evaluation_destroy(plain);
    bl_resolved_plan_destroy(r);
}

/* §8 test_replay_schema_identity_and_new_only_export. */
static void test_replay_export(void **state)
{
    (void)state;
    static const char text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"replay\"\n"
        "[evaluation]\nblocks = 1\ntrials_per_block = 2\n"
        "[[targets]]\nid = \"baseline\"\n[targets.composition]\ncount = 8\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[targets.composition.task.options]\ndelays = [0, 3]\n";
    bl_resolved_plan *r = bl_test_resolve_text(text);
    bl_evaluation *e = evaluate_recording(r, BL_RECORDING_REPLAY, 2, 64);
    bl_recordings rec;
    OK_E(bl_evaluation_recordings(r, e, &rec, &e_));
    bl_execution x;
    bl_execution_default(&x);
    x.recording = BL_RECORDING_REPLAY;
    bl_record_input in = {.resolved = r, .execution = &x, .evaluation = e};
    char dir[] = "/tmp/bl-replay-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/replay.json", dir);
    bl_error err = {0};
    assert_int_equal(bl_replay_export(&in, rec.replay_frames, path, NULL, &err), BL_EVALUE);
    assert_string_equal(err.msg, "select one trial_key when exporting multiple replays");
    assert_int_equal(bl_replay_export(&in, rec.replay_frames, path, "baseline/0/7", &err),
                     BL_EKEY);
    assert_string_equal(err.msg, "unknown replay trial_key");
    OK_E(bl_replay_export(&in, rec.replay_frames, path, "baseline/0/1", &e_));
    bl_json *doc = NULL;
    OK_E(bl_json_read_file(path, &doc, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "format"), NULL), "brainlesslab-replay");
    assert_int_equal(bl_json_get_int(bl_json_get(doc, "version")), 1);
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL), "baseline/0/1");
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "task"), NULL), "delayed_cue");
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "node"), NULL), "falandays");
    const bl_json *prov = bl_json_get(doc, "provenance");
    assert_string_equal(bl_json_get_string(bl_json_get(prov, "contract_hash"), NULL),
                        bl_resolved_contract_hash(r));
    assert_int_equal(bl_json_size(bl_json_get(doc, "frames")),
                     (size_t)e->run->trials[1].completed_ticks);
    bl_json_destroy(doc);
    /* New-only: a second export to the same path fails and changes nothing. */
    assert_int_equal(bl_replay_export(&in, rec.replay_frames, path, "baseline/0/0", &err),
                     BL_EEXIST);
    OK_E(bl_json_read_file(path, &doc, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(doc, "trial_key"), NULL), "baseline/0/1");
    bl_json_destroy(doc);
    remove(path);
    rmdir(dir);
    bl_recordings_clear(&rec);
    bl_evaluation_destroy(e);
    bl_resolved_plan_destroy(r);
}

/* Physical nulls frame by frame (replay) equal the fused path, tick for
 * tick: the same rows for every family. */
static void test_unfused_nulls_equal_fused(void **state)
{
    (void)state;
    static const char *const tasks[] = {"tracking", "pong", "cartpole_plank_easy",
                                        "reversal_adaptation"};
    for (size_t k = 0; k < 4; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"n\"\n"
                 "diagnostic = true\n[evaluation]\nblocks = 2\ntrials_per_block = 2\n%s"
                 "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
                 "[targets.composition.task]\nkind = \"%s\"\n"
                 "[[targets]]\nid = \"oracle\"\ncontroller = \"oracle\"\n"
                 "[targets.composition.task]\nkind = \"%s\"\n",
                 k < 2 ? "horizon = 150\n" : "", tasks[k], tasks[k]);
        bl_resolved_plan *r = bl_test_resolve_text(text);
        bl_evaluation *e = evaluate_recording(r, BL_RECORDING_REPLAY, 3, 24);
        bl_evaluation *plain = evaluate_recording(r, BL_RECORDING_SUMMARY, 4, 96);
        char *te = bl_test_trials_text(e->run), *tp = bl_test_trials_text(plain->run);
        if (strcmp(te, tp) != 0)
            fail_msg("%s: the frame-by-frame path differs from the fused one", tasks[k]);
        bl_free(te);
        bl_free(tp);
        bl_evaluation_destroy(e);
        bl_evaluation_destroy(plain);
        bl_resolved_plan_destroy(r);
    }
}

/* ---- a prepared evaluation ------------------------------------------------------ */

/* An evaluation's whole output as text: its trial table, then every
 * summary, contrast and calibration record as JSON. */
static char *evaluation_text(const bl_evaluation *e)
{
    bl_buf b;
    bl_buf_init(&b);
    char *trials = bl_test_trials_text(e->run);
    bl_buf_puts(&b, trials);
    bl_free(trials);
    for (size_t k = 0; k < e->ntargets + e->ncontrasts + e->ncalibrations; k++) {
        bl_json *j = NULL;
        if (k < e->ntargets)
            OK_E(bl_target_summary_json(&e->summaries[k], &j, &e_));
        else if (k < e->ntargets + e->ncontrasts)
            OK_E(bl_contrast_json(&e->contrasts[k - e->ntargets], &j, &e_));
        else
            OK_E(bl_calibration_json(e->calibrations[k - e->ntargets - e->ncontrasts], &j, &e_));
        bl_buf_putc(&b, '\n');
        OK_E(bl_json_write(j, 0, &b, &e_));
        bl_json_destroy(j);
    }
    char *text = bl_buf_take(&b, NULL);
    assert_non_null(text);
    return text;
}

/* What `run` does (prepare once, before the record exists, then evaluate
 * the preparation) gives the one-shot evaluation's whole output, loading
 * the plan's targets once; a preparation evaluates again to the same
 * output. Three plans: contrasts with analytic calibrations, a supplied
 * record applied, and the calibrate operation's frozen records. */
static void test_prepared_evaluation_matches_one_shot(void **state)
{
    (void)state;
    static const char calibrate_plan[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"cal\"\n"
        "operation = \"calibrate\"\n"
        "[evaluation]\nblocks = 1024\ntrials_per_block = 1\nseed_partition = \"calibration\"\n"
        "[[targets]]\nid = \"reference_null\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n";
    static const char cue[] = "[targets.composition.task]\nkind = \"delayed_cue\"\n";
    static const char applied_plan[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"applied\"\n"
        "[evaluation]\nblocks = 2\ntrials_per_block = 2\n"
        "[[targets]]\nid = \"t\"\n[targets.composition]\ncount = 8\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n";
    bl_json *sig = signature_for(cue);
    bl_calibration *cal = NULL;
    OK_E(bl_calibration_analytic(sig, &cal, &e_));
    const bl_calibration *cals[1] = {cal};
    const char *const plans[] = {profile_plan, applied_plan, calibrate_plan};
    for (size_t m = 0; m < 3; m++) {
        bl_resolved_plan *r = bl_test_resolve_text(plans[m]);
        const size_t ncals = m == 1;
        bl_execution x;
        bl_execution_default(&x);
        x.batch_size = m == 2 ? 128 : 5;
        bl_evaluation *once = NULL, *first = NULL, *again = NULL;
        OK_E(bl_evaluate(r, &x, cals, ncals, NULL, &once, &e_));
        const uint64_t loads = bl_run_target_loads();
        bl_evaluation_prepared *p = NULL;
        OK_E(bl_evaluation_prepare(r, &x, cals, ncals, &p, &e_));
        OK_E(bl_evaluate_prepared(p, NULL, &first, &e_));
        assert_int_equal(bl_run_target_loads() - loads, 1);
        OK_E(bl_evaluate_prepared(p, NULL, &again, &e_));
        assert_int_equal(bl_run_target_loads() - loads, 1);
        bl_evaluation_prepared_destroy(p);
        if (m == 1)
            assert_string_equal(first->summaries[0].calibration_id, cal->id);
        char *want = evaluation_text(once), *got1 = evaluation_text(first),
             *got2 = evaluation_text(again);
        assert_string_equal(got1, want);
        assert_string_equal(got2, want);
        bl_free(want);
        bl_free(got1);
        bl_free(got2);
        bl_evaluation_destroy(once);
        bl_evaluation_destroy(first);
        bl_evaluation_destroy(again);
        bl_resolved_plan_destroy(r);
    }
    bl_calibration_destroy(cal);
    bl_json_destroy(sig);
}

/* A preparation refuses what the preflight refuses (the runner's checks,
 * then the calibrations'), with the same message, and keeps nothing. */
static void test_prepare_refuses_as_the_preflight(void **state)
{
    (void)state;
    bl_json *sig = signature_for("[targets.composition.task]\nkind = \"delayed_cue\"\n"
                                 "[targets.composition.task.options]\ndelays = [0, 3]\n");
    bl_calibration *cal = NULL;
    OK_E(bl_calibration_analytic(sig, &cal, &e_));
    const bl_calibration *cals[1] = {cal};
    bl_resolved_plan *r = bl_test_resolve_text(profile_plan);
    for (int k = 0; k < 2; k++) {
        bl_execution x;
        bl_execution_default(&x);
        if (k == 0)
            x.noise_tile_frames = 1; /* the runner's preflight refuses */
        bl_error want = {0}, got = {0};
        const bl_status st = bl_evaluation_preflight(r, &x, cals, 1, &want);
        assert_int_not_equal(st, BL_OK);
        if (k == 1)
            assert_non_null(strstr(want.msg, "calibration signature mismatch"));
        bl_evaluation_prepared *p = NULL;
        assert_int_equal(bl_evaluation_prepare(r, &x, cals, 1, &p, &got), st);
        assert_null(p);
        assert_string_equal(got.msg, want.msg);
    }
    bl_resolved_plan_destroy(r);
    bl_calibration_destroy(cal);
    bl_json_destroy(sig);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summaries_and_contrasts),
        cmocka_unit_test(test_paired_ablation),
        cmocka_unit_test(test_ambiguous_reference_rejected),
        cmocka_unit_test(test_failed_trials_null_the_summary),
        cmocka_unit_test(test_calibration_selection),
        cmocka_unit_test(test_overlapping_worlds_rejected),
        cmocka_unit_test(test_calibrate_operation),
        cmocka_unit_test(test_probe_events_falandays),
        cmocka_unit_test(test_probe_events_sorn),
        cmocka_unit_test(test_replay_frames),
        cmocka_unit_test(test_replay_export),
        cmocka_unit_test(test_unfused_nulls_equal_fused),
        cmocka_unit_test(test_prepared_evaluation_matches_one_shot),
        cmocka_unit_test(test_prepare_refuses_as_the_preflight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
