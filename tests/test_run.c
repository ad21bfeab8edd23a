/* The evaluation runner (spec/platform.md §4, §8 test_evaluation and
 * test_specs_random): identities that never depend on batch size, thread
 * count or noise-tile size; seeds per stream; construction scopes; failure
 * latching; interventions; recording and memory admission before any work;
 * the scheduler's interrupt; allocation failures. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"
#include "support.h"

static bl_resolved_plan *resolve_file(const char *path)
{
    bl_plan *plan = NULL;
    bl_resolved_plan *r = NULL;
    OK_E(bl_plan_read(path, &plan, &e_));
    OK_E(bl_plan_resolve(plan, &r, &e_));
    bl_plan_destroy(plan);
    return r;
}

static bl_run_result *execute(const bl_resolved_plan *r, int64_t batch, int64_t threads,
                              int64_t tile)
{
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = batch;
    x.cpu_threads = threads;
    x.noise_tile_frames = tile;
    bl_run_result *res = NULL;
    OK_E(bl_run_execute(r, &x, NULL, &res, &e_));
    return res;
}

/* Runs the plan under every (batch, threads, tile) setting and requires
 * byte-identical tables; returns the first result (caller frees). */
static bl_run_result *invariant(const bl_resolved_plan *r, const int64_t *batches, size_t nb,
                                const int64_t *tiles, size_t nt)
{
    bl_run_result *first = execute(r, batches[0], 1, tiles[0]);
    char *want = bl_test_trials_text(first);
    for (size_t i = 0; i < nb; i++)
        for (int64_t threads = 1; threads <= 2; threads++)
            for (size_t k = 0; k < nt; k++) {
                bl_run_result *res = execute(r, batches[i], threads, tiles[k]);
                char *got = bl_test_trials_text(res);
                if (strcmp(got, want) != 0)
                    fail_msg("batch %lld, threads %lld, tile %lld changed the trial table",
                             (long long)batches[i], (long long)threads, (long long)tiles[k]);
                for (size_t h = 0; h < res->ncohorts; h++)
                    assert_true(res->batch_capacities[h] <= batches[i]);
                bl_free(got);
                bl_run_result_destroy(res);
            }
    bl_free(want);
    return first;
}

/* Both models, five families, a direct controller, the Oosawa drive (so
 * the noise tape really is read), every intervention verb. */
static const char mixed_plan[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"mixed\"\n"
    "diagnostic = true\n"
    "[evaluation]\nblocks = 2\ntrials_per_block = 2\nhorizon = 150\nroot_seed = 7\n"
    "[[targets]]\nid = \"cue\"\n"
    "[targets.composition]\ncount = 24\n"
    "[targets.composition.node]\nkind = \"falandays\"\n"
    "[targets.composition.node.parameters]\ndrive = \"oosawa\"\nmembrane_noise = 0.3\n"
    "noise_gain = 0.1\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[[targets]]\nid = \"cue_ablated\"\n"
    "interventions = [{tick = 5, verb = \"freeze_weights\"}, {tick = 20, verb = "
    "\"blind_input\"}, {tick = 3, verb = \"shuffle_input\"}]\n"
    "[targets.composition]\ncount = 24\n"
    "[targets.composition.node]\nkind = \"falandays\"\n"
    "[targets.composition.node.parameters]\ndrive = \"oosawa\"\nmembrane_noise = 0.3\n"
    "noise_gain = 0.1\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n"
    "[[targets]]\nid = \"sorn_cartpole\"\n"
    "interventions = [{tick = 2, verb = \"shuffle_input\"}, {tick = 4, verb = "
    "\"freeze_plasticity\"}]\n"
    "[targets.composition]\ncount = 30\ninput_gain = 8.0\n"
    "[targets.composition.node]\nkind = \"sorn\"\n"
    "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n"
    "[[targets]]\nid = \"sorn_tracking\"\n"
    "[targets.composition]\ncount = 20\n"
    "[targets.composition.node]\nkind = \"sorn\"\n"
    "[targets.composition.task]\nkind = \"tracking\"\n"
    "[[targets]]\nid = \"pong\"\n"
    "[targets.composition]\ncount = 16\n"
    "[targets.composition.node]\nkind = \"falandays\"\n"
    "[targets.composition.node.parameters]\nweight_init_mode = \"pong_mixed\"\n"
    "drive = \"oosawa\"\nmembrane_noise = 0.2\n"
    "[targets.composition.task]\nkind = \"pong\"\n"
    "[[targets]]\nid = \"cartpole_null\"\ncontroller = \"reference_null\"\n"
    "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n"
    "[[targets]]\nid = \"cue_oracle\"\ncontroller = \"oracle\"\n"
    "[targets.composition.task]\nkind = \"delayed_cue\"\n";

static const bl_trial_result *find(const bl_run_result *res, const char *target, int64_t block,
                                   int64_t trial)
{
    for (size_t i = 0; i < res->ntrials; i++)
        if (strcmp(res->trials[i].target_id, target) == 0 && res->trials[i].block == block &&
            res->trials[i].trial == trial)
            return &res->trials[i];
    fail_msg("no row %s/%lld/%lld", target, (long long)block, (long long)trial);
    return NULL;
}

static bool has_seed(const bl_trial_result *t, const char *stream)
{
    for (size_t k = 0; k < t->nseeds; k++)
        if (strcmp(t->seeds[k].stream, stream) == 0)
            return true;
    return false;
}

static void test_mixed_plan_is_partition_invariant(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(mixed_plan);
    const int64_t batches[] = {1, 3, 8}, tiles[] = {24, 48, 96};
    bl_run_result *res = invariant(r, batches, 3, tiles, 3);
    assert_int_equal(res->ntrials, 7 * 4);
    /* Job order: target-major, then block, then trial. */
    assert_string_equal(res->trials[0].target_id, "cue");
    assert_int_equal(res->trials[1].trial, 1);
    assert_int_equal(res->trials[2].block, 1);
    assert_string_equal(res->trials[27].target_id, "cue_oracle");
    for (size_t i = 0; i < res->ntrials; i++) {
        const bl_trial_result *t = &res->trials[i];
        assert_int_not_equal(t->status, BL_TRIAL_FAILED);
        assert_true(t->neural_frames >= t->completed_ticks);
    }
    /* Seeds per stream (§4.9): drive only for Falandays reservoirs, control
     * only for the null, input_shuffle only where shuffled. */
    const bl_trial_result *cue = find(res, "cue", 1, 0), *abl = find(res, "cue_ablated", 1, 0),
                          *sc = find(res, "sorn_cartpole", 0, 1),
                          *cn = find(res, "cartpole_null", 0, 1),
                          *orc = find(res, "cue_oracle", 1, 0);
    assert_int_equal(cue->nseeds, 3);
    assert_string_equal(cue->seeds[2].stream, "drive");
    assert_int_equal(abl->nseeds, 4);
    assert_string_equal(abl->seeds[3].stream, "input_shuffle");
    assert_int_equal(sc->nseeds, 3);
    assert_string_equal(sc->seeds[1].stream, "construction");
    assert_string_equal(sc->seeds[2].stream, "input_shuffle");
    assert_false(has_seed(sc, "drive"));
    assert_int_equal(cn->nseeds, 2);
    assert_string_equal(cn->seeds[1].stream, "control");
    assert_int_equal(orc->nseeds, 1);
    assert_string_equal(orc->wiring_id, "none");
    /* Same pairing key and task: the same world, whatever the controller;
     * same construction key and config: the same wiring. */
    assert_string_equal(cue->world_seed, abl->world_seed);
    assert_string_equal(cue->world_seed, orc->world_seed);
    assert_string_equal(sc->world_seed, cn->world_seed);
    assert_string_equal(cue->wiring_id, abl->wiring_id);
    assert_string_equal(cue->seeds[1].hex, abl->seeds[1].hex);
    for (int64_t b = 0; b < 2; b++)
        for (int64_t k = 0; k < 2; k++) {
            const bl_trial_result *x = find(res, "cue", b, k), *y = find(res, "cue_ablated", b, k);
            assert_int_equal(x->status, BL_TRIAL_COMPLETED);
            assert_int_equal(x->completed_ticks, y->completed_ticks); /* same episode */
            assert_int_equal(x->scoring_window, x->completed_ticks);
        }
    /* Probe rows: the outcome is the accuracy of one episode. */
    assert_true(cue->raw == 0.0 || cue->raw == 1.0);
    assert_string_equal(cue->outcome_key, "recall_accuracy");
    /* Oracle on delayed_cue is perfect. */
    assert_true(orc->raw == 1.0);
    bl_run_result_destroy(res);
    bl_resolved_plan_destroy(r);
}

/* Every verb changes a continuous outcome, from its tick on, and only
 * there: the targets share worlds and wiring, so any difference is the
 * intervention's. */
static void test_interventions_take_effect(void **state)
{
    (void)state;
    static const char *const verbs[] = {"blind_input", "shuffle_input", "freeze_weights",
                                        "freeze_plasticity"};
    bl_buf text;
    bl_buf_init(&text);
    bl_buf_puts(&text, "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"iv\"\n"
                       "diagnostic = true\n[evaluation]\nblocks = 1\ntrials_per_block = 2\n"
                       "horizon = 120\n"
                       "[[targets]]\nid = \"base\"\n[targets.composition]\ncount = 16\n"
                       "[targets.composition.task]\nkind = \"tracking\"\n");
    for (size_t v = 0; v < 4; v++)
        bl_buf_printf(&text,
                      "[[targets]]\nid = \"%s\"\ninterventions = [{tick = 30, verb = \"%s\"}]\n"
                      "[targets.composition]\ncount = 16\n"
                      "[targets.composition.task]\nkind = \"tracking\"\n",
                      verbs[v], verbs[v]);
    OK_E(bl_buf_status(&text, &e_));
    bl_resolved_plan *r = bl_test_resolve_text(text.data);
    const int64_t batches[] = {1, 3, 8}, tiles[] = {1, 24, 64};
    bl_run_result *res = invariant(r, batches, 3, tiles, 3);
    for (int64_t k = 0; k < 2; k++) {
        const bl_trial_result *base = find(res, "base", 0, k);
        for (size_t v = 0; v < 4; v++) {
            const bl_trial_result *t = find(res, verbs[v], 0, k);
            assert_string_equal(t->wiring_id, base->wiring_id);
            assert_string_equal(t->world_seed, base->world_seed);
            if (t->raw == base->raw)
                fail_msg("%s did not change trial %lld", verbs[v], (long long)k);
        }
    }
    bl_run_result_destroy(res);
    bl_resolved_plan_destroy(r);
    bl_buf_clear(&text);
}

static void test_core_plan_is_partition_invariant(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    bl_resolved_plan *r = resolve_file(bl_test_shared_path("plans/falandays-core.toml"));
    const int64_t batches[] = {1, 3, 8}, tiles[] = {24, 48, 96};
    bl_run_result *res = invariant(r, batches, 3, tiles, 3);
    assert_int_equal(res->ntrials, 8 * 4);
    assert_int_equal(res->ncohorts, 8);
    /* §4.6 estimates of the spec's examples (tile 24 here, so the Falandays
     * noise term is 24 x 24 x 64 instead of 24 x 64 x 64). */
    assert_int_equal(res->trial_bytes[0], 737024 - 24 * 40 * 64);
    assert_int_equal(res->trial_bytes[4], 73472); /* null: no model, no noise */
    for (size_t i = 0; i < res->ntrials; i++) {
        const bl_trial_result *t = &res->trials[i];
        assert_int_not_equal(t->status, BL_TRIAL_FAILED);
        if (i < 16)
            assert_string_not_equal(t->wiring_id, "none");
        else
            assert_string_equal(t->wiring_id, "none");
    }
    /* Reservoir and matched null see the same worlds (same pairing key). */
    for (size_t i = 0; i < 16; i++)
        assert_string_equal(res->trials[i].world_seed, res->trials[i + 16].world_seed);
    /* Scope "block": trials of a block share wiring, blocks do not. */
    assert_string_equal(res->trials[0].wiring_id, res->trials[1].wiring_id);
    assert_string_not_equal(res->trials[0].wiring_id, res->trials[2].wiring_id);
    bl_run_result_destroy(res);
    bl_resolved_plan_destroy(r);
}

/* Reference-null plans: batch 1 / tile 24 and batch 4 / tile 96 give the
 * same rows, all completed, with exactly the world and control seeds. */
static void test_null_controls_partition_and_early_done(void **state)
{
    (void)state;
    static const char *const tasks[] = {"tracking", "pong", "cartpole_plank_easy",
                                        "reversal_adaptation"};
    for (size_t k = 0; k < 4; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"null\"\n"
                 "diagnostic = true\n"
                 "[evaluation]\nblocks = 2\ntrials_per_block = 3\n%s"
                 "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
                 "[targets.composition.task]\nkind = \"%s\"\n",
                 k == 1 ? "horizon = 400\n" : k == 0 ? "horizon = 300\n" : "", tasks[k]);
        bl_resolved_plan *r = bl_test_resolve_text(text);
        const int64_t batches[] = {1, 4}, tiles[] = {24, 96};
        bl_run_result *res = invariant(r, batches, 2, tiles, 2);
        for (size_t i = 0; i < res->ntrials; i++) {
            const bl_trial_result *t = &res->trials[i];
            assert_int_equal(t->status, BL_TRIAL_COMPLETED);
            assert_int_equal(t->nseeds, 2);
            assert_string_equal(t->seeds[0].stream, "world");
            assert_string_equal(t->seeds[1].stream, "control");
            assert_string_equal(t->wiring_id, "none");
            assert_false(isnan(t->raw));
            const int64_t frames = k == 2 ? 24 : 1;
            assert_int_equal(t->neural_frames, t->completed_ticks * frames);
            if (k == 2) /* a random CartPole falls long before 15000 steps */
                assert_true(t->completed_ticks < 15000);
        }
        bl_run_result_destroy(res);
        bl_resolved_plan_destroy(r);
    }
}

static char *scope_plan(const char *scope)
{
    char *text = malloc(1024);
    assert_non_null(text);
    snprintf(text, 1024,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"scopes\"\n"
             "[evaluation]\nblocks = 2\ntrials_per_block = 3\nconstruction_scope = \"%s\"\n"
             "[[targets]]\nid = \"a\"\n[targets.composition]\ncount = 12\n"
             "[targets.composition.task]\nkind = \"delayed_cue\"\n",
             scope);
    return text;
}

static size_t distinct_wirings(const bl_run_result *res)
{
    size_t n = 0;
    for (size_t i = 0; i < res->ntrials; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen = seen || strcmp(res->trials[i].wiring_id, res->trials[j].wiring_id) == 0;
        n += !seen;
    }
    return n;
}

static void test_construction_scopes(void **state)
{
    (void)state;
    static const struct {
        const char *scope;
        size_t wirings;
    } cases[] = {{"evaluation", 1}, {"block", 2}, {"trial", 6}};
    for (size_t k = 0; k < 3; k++) {
        char *text = scope_plan(cases[k].scope);
        bl_resolved_plan *r = bl_test_resolve_text(text);
        bl_run_result *res = execute(r, 4, 2, 64);
        assert_int_equal(distinct_wirings(res), cases[k].wirings);
        /* The wiring id is the one the plan module derives. */
        char hex[65];
        OK_E(bl_plan_wiring_id(r, 0, 1, 2, hex, &e_));
        assert_string_equal(res->trials[5].wiring_id, hex);
        bl_run_result_destroy(res);
        bl_resolved_plan_destroy(r);
        free(text);
    }
}

/* Renaming, relabelling and reordering targets and changing the batch size
 * leave every per-id row identical (§8 test_labels_and_target_order...). */
static void test_labels_and_order_are_not_identity(void **state)
{
    (void)state;
    static const char a[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"order\"\n"
        "[evaluation]\nblocks = 2\ntrials_per_block = 2\n"
        "[[targets]]\nid = \"x\"\nlabel = \"first\"\n[targets.composition]\ncount = 10\n"
        "[targets.composition.task]\nkind = \"delayed_xor\"\n"
        "[[targets]]\nid = \"y\"\n[targets.composition]\ncount = 10\n"
        "[targets.composition.task]\nkind = \"temporal_order\"\n";
    static const char b[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"order-renamed\"\n"
        "question = \"a different question\"\n"
        "[evaluation]\nblocks = 2\ntrials_per_block = 2\n"
        "[[targets]]\nid = \"y\"\nlabel = \"now first\"\n[targets.composition]\ncount = 10\n"
        "[targets.composition.task]\nkind = \"temporal_order\"\n"
        "[[targets]]\nid = \"x\"\nlabel = \"relabelled\"\n[targets.composition]\ncount = 10\n"
        "[targets.composition.task]\nkind = \"delayed_xor\"\n";
    bl_resolved_plan *ra = bl_test_resolve_text(a), *rb = bl_test_resolve_text(b);
    bl_run_result *xa = execute(ra, 32, 1, 64), *xb = execute(rb, 3, 2, 7);
    for (size_t i = 0; i < xa->ntrials; i++) {
        const bl_trial_result *p = &xa->trials[i];
        const bl_trial_result *q = find(xb, p->target_id, p->block, p->trial);
        bl_json *jp = NULL, *jq = NULL;
        OK_E(bl_trial_result_json(p, &jp, &e_));
        OK_E(bl_trial_result_json(q, &jq, &e_));
        assert_true(bl_json_equal(jp, jq));
        bl_json_destroy(jp);
        bl_json_destroy(jq);
    }
    bl_run_result_destroy(xa);
    bl_run_result_destroy(xb);
    bl_resolved_plan_destroy(ra);
    bl_resolved_plan_destroy(rb);
}

/* An overflowing SORN wiring fails in its first frame: failed, 0 completed
 * ticks, 1 neural frame, no raw outcome; its neighbours are untouched. */
static void test_failed_neural_frame_is_latched(void **state)
{
    (void)state;
    static const char text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"overflow\"\n"
        "[evaluation]\nblocks = 1\ntrials_per_block = 3\n"
        "[[targets]]\nid = \"overflow\"\n[targets.composition]\ncount = 12\ninput_gain = 8.0\n"
        "[targets.composition.node]\nkind = \"sorn\"\n"
        "[targets.composition.node.parameters]\ninput_row_sum = 1e308\np_input = 1.0\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n"
        "[[targets]]\nid = \"fine\"\n[targets.composition]\ncount = 12\ninput_gain = 8.0\n"
        "[targets.composition.node]\nkind = \"sorn\"\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n";
    bl_resolved_plan *r = bl_test_resolve_text(text);
    const int64_t batches[] = {1, 6}, tiles[] = {24, 48};
    bl_run_result *res = invariant(r, batches, 2, tiles, 2);
    for (size_t i = 0; i < 3; i++) {
        const bl_trial_result *t = &res->trials[i];
        assert_int_equal(t->status, BL_TRIAL_FAILED);
        assert_int_equal(t->completed_ticks, 0);
        assert_int_equal(t->neural_frames, 1);
        assert_true(isnan(t->raw));
        assert_true(t->failed);
        assert_int_equal(t->normalisation, BL_ADJUST_NO_OUTCOME);
        bl_json *j = NULL;
        OK_E(bl_trial_result_json(t, &j, &e_));
        assert_string_equal(bl_json_get_string(bl_json_get(j, "error"), NULL),
                            "non-finite trajectory");
        assert_int_equal(bl_json_kindof(bl_json_get(bl_json_get(j, "outcome"), "raw")),
                         BL_JSON_NULL);
        assert_string_equal(bl_json_get_string(bl_json_get(j, "status"), NULL), "failed");
        bl_json_destroy(j);
    }
    for (size_t i = 3; i < 6; i++) {
        assert_int_equal(res->trials[i].status, BL_TRIAL_COMPLETED);
        assert_true(res->trials[i].completed_ticks > 0);
        assert_int_equal(res->trials[i].neural_frames, res->trials[i].completed_ticks * 24);
    }
    bl_run_result_destroy(res);
    bl_resolved_plan_destroy(r);
}

/* ---- lockstep groups -------------------------------------------------------- */

/* Three targets on one wiring per block (the default construction key, scope
 * block): the same trials in groups of every width. Delays of 2, 9 and 30
 * ticks end the episodes at different ticks; one target adds every
 * intervention verb at different ticks; a gain of 1e308 overflows the
 * input sums of the third, so its trials fail inside groups whose other
 * members go on. The three share one composition but for the gain line. */
#define CUE_COMPOSITION(gain)                                                              \
    "[targets.composition]\ncount = 20\n" gain "[targets.composition.node]\n"               \
    "kind = \"falandays\"\n[targets.composition.node.parameters]\ndrive = \"oosawa\"\n"    \
    "membrane_noise = 0.3\nnoise_gain = 0.1\n[targets.composition.task]\n"                \
    "kind = \"delayed_cue\"\n[targets.composition.task.options]\ndelays = [2, 9, 30]\n"

static const char group_plan[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"groups\"\n"
    "diagnostic = true\n"
    "[evaluation]\nblocks = 2\ntrials_per_block = 5\nroot_seed = 23\n"
    "[[targets]]\nid = \"cue\"\n" CUE_COMPOSITION("")
    "[[targets]]\nid = \"cue_ablated\"\n"
    "interventions = [{tick = 4, verb = \"freeze_weights\"}, {tick = 7, verb = "
    "\"shuffle_input\"}, {tick = 12, verb = \"blind_input\"}, {tick = 15, verb = "
    "\"freeze_plasticity\"}]\n" CUE_COMPOSITION("")
    "[[targets]]\nid = \"cue_loud\"\n" CUE_COMPOSITION("input_gain = 1e308\n");

/* CartPole episodes (24 frames a tick) that fall at different ticks, with
 * the Oosawa drive (so the tapes cross tiles inside a tick's frames) and
 * SORN. */
static const char cartpole_group_plan[] =
    "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"cartpole_groups\"\n"
    "diagnostic = true\n"
    "[evaluation]\nblocks = 1\ntrials_per_block = 6\nhorizon = 120\nroot_seed = 5\n"
    "[[targets]]\nid = \"fal\"\ninterventions = [{tick = 3, verb = \"shuffle_input\"}]\n"
    "[targets.composition]\ncount = 16\ninput_gain = 8.0\n"
    "[targets.composition.node]\nkind = \"falandays\"\n"
    "[targets.composition.node.parameters]\ndrive = \"oosawa\"\nmembrane_noise = 0.2\n"
    "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n"
    "[[targets]]\nid = \"sorn\"\n"
    "[targets.composition]\ncount = 16\ninput_gain = 8.0\n"
    "[targets.composition.node]\nkind = \"sorn\"\n"
    "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n";

/* Everything a run reports per trial: its row, its spike count, its probe
 * capture and its replay frames (canonical JSON). */
static char *everything_text(const bl_run_result *res)
{
    bl_buf b;
    bl_buf_init(&b);
    char *rows = bl_test_trials_text(res);
    bl_buf_puts(&b, rows);
    bl_free(rows);
    for (size_t i = 0; i < res->ntrials; i++) {
        bl_buf_printf(&b, "spikes %lld\n", (long long)res->trials[i].spikes);
        if (res->probes) {
            const bl_probe_capture *pc = &res->probes[i];
            bl_buf_printf(&b, "probe %lld %lld %lld %d %d %d %d:", (long long)pc->ticks[0],
                          (long long)pc->ticks[1], (long long)pc->ticks[2], pc->counts[0],
                          pc->counts[1], pc->counts[2], pc->label);
            for (size_t k = 0; pc->features && k < 3 * pc->n; k++)
                bl_buf_printf(&b, " %a", pc->features[k]);
            bl_buf_putc(&b, '\n');
        }
        if (res->replays) {
            char *text = NULL;
            OK_E(bl_json_canonical(res->replays[i], &text, NULL, &e_));
            bl_buf_puts(&b, text);
            bl_buf_putc(&b, '\n');
            bl_free(text);
        }
    }
    OK_E(bl_buf_status(&b, &e_));
    char *s = bl_buf_take(&b, NULL);
    bl_buf_clear(&b);
    return s;
}

/* Runs the plan with the recording under every (batch, threads, tile)
 * setting and requires the same bytes as one trial a batch on one thread
 * (the per-trial path: groups of one); returns that first result. */
static bl_run_result *group_invariant(const bl_resolved_plan *r, bl_recording recording,
                                      const int64_t *batches, size_t nb, const int64_t *tiles,
                                      size_t nt)
{
    bl_execution x;
    bl_execution_default(&x);
    x.recording = recording;
    x.batch_size = 1;
    x.noise_tile_frames = tiles[0];
    bl_run_result *first = NULL;
    OK_E(bl_run_execute(r, &x, NULL, &first, &e_));
    char *want = everything_text(first);
    /* The default width, and groups of 3 (set through the environment). */
    static const char *const caps[] = {"", "3"};
    for (size_t c = 0; c < 2; c++) {
        assert_int_equal(setenv("BL_GROUP_CAP", caps[c], 1), 0);
        for (size_t i = 0; i < nb; i++)
            for (int64_t threads = 1; threads <= 2; threads++)
                for (size_t k = 0; k < nt; k++) {
                    x.batch_size = batches[i];
                    x.cpu_threads = threads;
                    x.noise_tile_frames = tiles[k];
                    bl_run_result *res = NULL;
                    OK_E(bl_run_execute(r, &x, NULL, &res, &e_));
                    char *got = everything_text(res);
                    if (strcmp(got, want) != 0)
                        fail_msg("%s: cap '%s', batch %lld, threads %lld, tile %lld changed a "
                                 "trial",
                                 bl_recording_name(recording), caps[c], (long long)batches[i],
                                 (long long)threads, (long long)tiles[k]);
                    bl_free(got);
                    bl_run_result_destroy(res);
                }
    }
    assert_int_equal(unsetenv("BL_GROUP_CAP"), 0);
    bl_free(want);
    return first;
}

static void test_groups_are_partition_invariant(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(group_plan);
    const int64_t batches[] = {1, 3, 8, 30}, tiles[] = {64, 5};
    const bl_recording recordings[] = {BL_RECORDING_SUMMARY, BL_RECORDING_PROBE_EVENTS,
                                       BL_RECORDING_REPLAY};
    for (size_t m = 0; m < 3; m++) {
        bl_run_result *res = group_invariant(r, recordings[m], batches, 4, tiles, 2);
        /* The plan provokes what it is for: one wiring per block shared by
         * all three targets, episodes of different lengths, interventions
         * that change trials, and failures beside completed trials. */
        int64_t shortest = INT64_MAX, longest = 0;
        for (int64_t trial = 0; trial < 5; trial++) {
            const bl_trial_result *cue = find(res, "cue", 0, trial),
                                  *ablated = find(res, "cue_ablated", 0, trial),
                                  *loud = find(res, "cue_loud", 0, trial);
            assert_string_equal(cue->wiring_id, ablated->wiring_id);
            assert_string_equal(cue->wiring_id, loud->wiring_id);
            assert_int_equal(cue->status, BL_TRIAL_COMPLETED);
            assert_int_equal(ablated->status, BL_TRIAL_COMPLETED);
            assert_int_equal(loud->status, BL_TRIAL_FAILED);
            assert_true(loud->neural_frames < cue->neural_frames);
            shortest = cue->completed_ticks < shortest ? cue->completed_ticks : shortest;
            longest = cue->completed_ticks > longest ? cue->completed_ticks : longest;
        }
        assert_true(shortest < longest);
        bool differs = false;
        for (int64_t trial = 0; trial < 5; trial++)
            differs |= find(res, "cue", 1, trial)->spikes !=
                       find(res, "cue_ablated", 1, trial)->spikes;
        assert_true(differs);
        if (res->probes)
            for (size_t i = 0; i < res->ntrials; i++)
                if (res->trials[i].status == BL_TRIAL_COMPLETED)
                    assert_int_equal(res->probes[i].counts[2], 1);
        bl_run_result_destroy(res);
    }
    bl_resolved_plan_destroy(r);
}

/* A bad group width is one ValueError line, before any trial runs. */
static void test_group_cap_must_be_a_width(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(cartpole_group_plan);
    static const char *const bad[] = {"0", "1025", "8x", "-2", "wide"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(setenv("BL_GROUP_CAP", bad[i], 1), 0);
        bl_execution x;
        bl_execution_default(&x);
        bl_run_result *res = NULL;
        bl_error err = {0};
        assert_int_equal(bl_run_execute(r, &x, NULL, &res, &err), BL_EVALUE);
        assert_null(res);
        char want[96];
        snprintf(want, sizeof want, "BL_GROUP_CAP=%s: a group takes 1 to 1024 trials", bad[i]);
        assert_string_equal(err.msg, want);
    }
    assert_int_equal(unsetenv("BL_GROUP_CAP"), 0);
    bl_resolved_plan_destroy(r);
}

static void test_cartpole_groups_end_apart(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(cartpole_group_plan);
    const int64_t batches[] = {1, 4, 12}, tiles[] = {24, 72, 50};
    const bl_recording recordings[] = {BL_RECORDING_SUMMARY, BL_RECORDING_REPLAY};
    for (size_t m = 0; m < 2; m++) {
        bl_run_result *res = group_invariant(r, recordings[m], batches, 3, tiles, 3);
        int64_t shortest = INT64_MAX, longest = 0;
        for (size_t i = 0; i < res->ntrials; i++) {
            const bl_trial_result *t = &res->trials[i];
            assert_int_equal(t->status, BL_TRIAL_COMPLETED);
            assert_int_equal(t->neural_frames, t->completed_ticks * 24);
            shortest = t->completed_ticks < shortest ? t->completed_ticks : shortest;
            longest = t->completed_ticks > longest ? t->completed_ticks : longest;
        }
        assert_true(shortest < longest); /* some episodes fell before others */
        assert_true(shortest < 120);
        bl_run_result_destroy(res);
    }
    bl_resolved_plan_destroy(r);
}

/* ---- admission ------------------------------------------------------------ */

static void test_admission_unit_cases(void **state)
{
    (void)state;
    bl_execution x;
    bl_execution_default(&x);
    assert_int_equal(bl_execution_allocation_budget(&x), 201326592);
    x.memory_budget_bytes = 1000;
    int64_t cap = -1;
    bl_error err = {0};
    OK_E(bl_admit_batch(&x, 100, 0, &cap, &e_));
    assert_int_equal(cap, 7);
    assert_int_equal(bl_admit_batch(&x, 751, 0, &cap, &err), BL_ENOMEM);
    assert_string_equal(err.msg, "one trajectory needs at least 751 managed bytes; allocation "
                                 "budget is 750; increase memory_budget_bytes explicitly");
    assert_int_equal(bl_admit_batch(&x, 0, 0, &cap, &err), BL_ENOMEM);
    /* The recording estimate is a fixed cost against the budget. */
    OK_E(bl_admit_batch(&x, 100, 300, &cap, &e_));
    assert_int_equal(cap, 4);
    assert_int_equal(bl_admit_batch(&x, 100, 700, &cap, &err), BL_ENOMEM);
    assert_non_null(strstr(err.msg, "at least 800 managed bytes"));
    x.batch_size = 3;
    OK_E(bl_admit_batch(&x, 100, 0, &cap, &e_));
    assert_int_equal(cap, 3);
    /* Policy validation. */
    bl_execution_default(&x);
    x.batch_size = 0;
    assert_int_equal(bl_execution_validate(&x, &err), BL_EVALUE);
    bl_execution_default(&x);
    x.reserve_fraction = 1.0;
    assert_int_equal(bl_execution_validate(&x, &err), BL_EVALUE);
    assert_string_equal(err.msg, "reserve_fraction must be within [0, 1)");
    bl_execution_default(&x);
    x.cpu_threads = 0;
    assert_int_equal(bl_execution_validate(&x, &err), BL_EVALUE);
    bl_execution_default(&x);
    x.recording_budget_bytes = -1;
    assert_int_equal(bl_execution_validate(&x, &err), BL_EVALUE);
}

/* The spec's per-trajectory examples at the default tile (§4.6). */
static void test_trial_bytes_examples(void **state)
{
    (void)state;
    static const struct {
        const char *task, *controller;
        int64_t count, bytes;
    } cases[] = {
        {"delayed_cue", "reservoir", 64, 498248},
        {"tracking", "reservoir", 64, 737024},
        {"pong", "reservoir", 64, 1130304},
        {"cartpole_plank_easy", "reservoir", 64, 508928},
        {"tracking", "reference_null", 1, 73472},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"bytes\"\n"
                 "[[targets]]\nid = \"t\"\ncontroller = \"%s\"\n"
                 "[targets.composition]\ncount = %lld\n"
                 "[targets.composition.task]\nkind = \"%s\"\n",
                 cases[k].controller, (long long)cases[k].count, cases[k].task);
        bl_resolved_plan *r = bl_test_resolve_text(text);
        const bl_json *rt = bl_resolved_target(r, 0);
        const int64_t h = bl_json_get_int(bl_json_get(rt, "horizon"));
        assert_int_equal(bl_trial_bytes(r, 0, h, 64), cases[k].bytes);
        bl_resolved_plan_destroy(r);
    }
}

static void expect_preflight(const char *plan_text, const bl_execution *x, bl_status want,
                             const char *fragment)
{
    bl_resolved_plan *r = bl_test_resolve_text(plan_text);
    bl_error err = {0};
    assert_int_equal(bl_run_preflight(r, x, &err), want);
    if (!strstr(err.msg, fragment))
        fail_msg("'%s' does not contain '%s'", err.msg, fragment);
    bl_run_result *res = NULL;
    bl_error err2 = {0};
    assert_int_equal(bl_run_execute(r, x, NULL, &res, &err2), want);
    assert_null(res);
    assert_string_equal(err.msg, err2.msg);
    bl_resolved_plan_destroy(r);
}

static void test_memory_and_recording_reject_before_runtime(void **state)
{
    (void)state;
    static const char cue[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"cue\"\n"
        "[[targets]]\nid = \"t\"\n[targets.composition]\ncount = 8\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n";
    static const char tracking[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"tr\"\n"
        "[[targets]]\nid = \"t\"\n[targets.composition]\ncount = 8\n"
        "[targets.composition.task]\nkind = \"tracking\"\n";
    static const char cartpole[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"cp\"\n"
        "[[targets]]\nid = \"t\"\n[targets.composition]\ncount = 8\n"
        "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n";
    bl_execution x;
    bl_execution_default(&x);
    x.recording = BL_RECORDING_REPLAY;
    x.recording_budget_bytes = 1;
    expect_preflight(cue, &x, BL_ENOMEM, "recording needs an estimated ");
    bl_execution_default(&x);
    x.memory_budget_bytes = 1;
    expect_preflight(cue, &x, BL_ENOMEM, "one trajectory needs at least ");
    bl_execution_default(&x);
    x.recording = BL_RECORDING_PROBE_EVENTS;
    expect_preflight(tracking, &x, BL_EVALUE,
                     "probe_events requires a reservoir and a single binary probe episode");
    bl_execution_default(&x);
    x.noise_tile_frames = 23;
    expect_preflight(cartpole, &x, BL_EVALUE,
                     "noise_tile_frames must hold at least one complete neural cycle");
    bl_execution_default(&x);
    x.batch_size = -1;
    expect_preflight(cue, &x, BL_EVALUE, "batch_size");
}

/* ---- counts that overflow, bytes kept per job -------------------------------- */

/* A one-target plan: evaluation lines, controller line, count, task. */
static void count_plan(char *text, size_t size, const char *evaluation, const char *controller,
                       const char *count, const char *task)
{
    snprintf(text, size,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"counts\"\n"
             "diagnostic = true\n[evaluation]\n%s\n[[targets]]\nid = \"t\"\n%s\n"
             "[targets.composition]\ncount = %s\n[targets.composition.task]\nkind = \"%s\"\n",
             evaluation, controller, count, task);
}

static void expect_resolve_fails(const char *text, const char *message)
{
    bl_json *doc = NULL;
    bl_plan *plan = NULL;
    bl_resolved_plan *r = NULL;
    bl_error err = {0};
    OK_E(bl_toml_parse(text, strlen(text), "plan", &doc, &e_));
    OK_E(bl_plan_from_document(doc, &plan, &e_));
    assert_int_equal(bl_plan_resolve(plan, &r, &err), BL_EVALUE);
    assert_null(r);
    assert_string_equal(err.msg, message);
    bl_plan_destroy(plan);
    bl_json_destroy(doc);
}

/* Products of plan counts that do not fit the engine's integers are
 * refused at resolution (so `check` refuses them too), never wrapped. */
static void test_overflowing_counts_are_refused(void **state)
{
    (void)state;
    static const char null[] = "controller = \"reference_null\"";
    char text[2048];
    count_plan(text, sizeof text,
               "blocks = 9223372036854775807\ntrials_per_block = 9223372036854775807", null, "1",
               "tracking");
    expect_resolve_fails(text, "the plan has too many trials: targets x blocks x trials_per_block "
                               "(1 x 9223372036854775807 x 9223372036854775807) must be at most "
                               "9223372036854775807");
    count_plan(text, sizeof text, "blocks = 3\ntrials_per_block = 6148914691236517206", null, "1",
               "tracking");
    expect_resolve_fails(text, "the plan has too many trials: targets x blocks x trials_per_block "
                               "(1 x 3 x 6148914691236517206) must be at most 9223372036854775807");
    /* blocks x trials fits, times two targets does not. */
    snprintf(text, sizeof text,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"two\"\n"
             "[evaluation]\nblocks = 2\ntrials_per_block = 4611686018427387904\n"
             "[[targets]]\nid = \"a\"\ncontroller = \"oracle\"\n"
             "[targets.composition.task]\nkind = \"tracking\"\n"
             "[[targets]]\nid = \"b\"\ncontroller = \"oracle\"\n"
             "[targets.composition.task]\nkind = \"tracking\"\n");
    expect_resolve_fails(text, "the plan has too many trials: targets x blocks x trials_per_block "
                               "(2 x 2 x 4611686018427387904) must be at most 9223372036854775807");
    count_plan(text, sizeof text, "horizon = 2147483648", null, "1", "tracking");
    expect_resolve_fails(text, "targets[0]: horizon 2147483648 is too large: horizon x neural frames per tick "
                               "(2147483648 x 1) must be at most 2147483647, the range of the "
                               "engine's tick and frame counters");
    count_plan(text, sizeof text, "horizon = 89478486", null, "1", "cartpole_plank_easy");
    expect_resolve_fails(text, "targets[0]: horizon 89478486 is too large: horizon x neural frames per tick "
                               "(89478486 x 24) must be at most 2147483647, the range of the "
                               "engine's tick and frame counters");
    count_plan(text, sizeof text, "horizon = 9223372036854775807", null, "1",
               "cartpole_plank_easy");
    expect_resolve_fails(text, "targets[0]: horizon 9223372036854775807 is too large: horizon x neural "
                               "frames per tick (9223372036854775807 x 24) must be at most "
                               "2147483647, the range of the engine's tick and frame counters");
    /* 64 x (n^2 + 62n + 12n) first exceeds INT64_MAX at n = 379625026. */
    count_plan(text, sizeof text, "horizon = 10", "", "379625026", "tracking");
    expect_resolve_fails(text, "targets[0]: count 379625026 is too large: the reservoir's memory estimate "
                               "64 x (count^2 + count x n_inputs + 12 x count) must fit in 64-bit "
                               "bytes");
    count_plan(text, sizeof text, "horizon = 10", "", "9223372036854775807", "tracking");
    expect_resolve_fails(text, "targets[0]: count 9223372036854775807 is too large: the reservoir's memory "
                               "estimate 64 x (count^2 + count x n_inputs + 12 x count) must fit "
                               "in 64-bit bytes");
    /* A calibrate plan whose blocks x trials overflows gets the spec's own
     * refusal (step 11), not a wrapped product. */
    snprintf(text, sizeof text,
             "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"cal\"\n"
             "operation = \"calibrate\"\n[evaluation]\nblocks = 4294967296\n"
             "trials_per_block = 4294967296\nseed_partition = \"calibration\"\n"
             "[[targets]]\nid = \"t\"\ncontroller = \"reference_null\"\n"
             "[targets.composition.task]\nkind = \"tracking\"\n");
    expect_resolve_fails(text, "targets[0]: empirical calibration requires 1024 full independent trajectories");

    /* The largest values that fit resolve; the runner then meets them with
     * admission, not arithmetic that wraps. */
    count_plan(text, sizeof text, "horizon = 89478485", null, "1", "cartpole_plank_easy");
    bl_resolved_plan_destroy(bl_test_resolve_text(text));
    /* Its model term fits; with the noise tile added the estimate does
     * not, and "at least INT64_MAX" is then the truth. */
    count_plan(text, sizeof text, "horizon = 10", "", "379625025", "tracking");
    bl_execution x;
    bl_execution_default(&x);
    expect_preflight(text, &x, BL_ENOMEM,
                     "one trajectory needs at least 9223372036854775807 managed bytes");
    /* A replay of a null whose count is absurd but harmless: the estimate
     * saturates and says so. */
    count_plan(text, sizeof text, "horizon = 10", null, "9223372036854775807", "tracking");
    x.recording = BL_RECORDING_REPLAY;
    expect_preflight(text, &x, BL_ENOMEM,
                     "recording needs an estimated more than 9223372036854775807 bytes; "
                     "recording budget is 33554432");
}

/* A budget of 2^63 - 1 bytes with no reserve is all of int64, not an
 * out-of-range conversion. */
static void test_allocation_budget_saturates(void **state)
{
    (void)state;
    bl_execution x;
    bl_execution_default(&x);
    x.memory_budget_bytes = INT64_MAX;
    x.reserve_fraction = 0.0;
    assert_int_equal(bl_execution_allocation_budget(&x), INT64_MAX);
    x.reserve_fraction = 0.5;
    assert_int_equal(bl_execution_allocation_budget(&x), 4611686018427387904);
}

/* The bytes every job keeps until the record is written: the runner's row
 * and job lists, whatever the model and seed streams (trials.csv and
 * seeds.csv are written a chunk at a time); with probe_events, the
 * measured cost of a probe trial and of each node; with replay, the
 * pointer to the frames. */
static void test_job_bytes(void **state)
{
    (void)state;
    const int64_t base = (int64_t)(sizeof(bl_trial_result) + 2 * sizeof(size_t));
    static const char plan_text[] =
        "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"jobs\"\n"
        "[[targets]]\nid = \"fal\"\n"
        "interventions = [{tick = 3, verb = \"shuffle_input\"}]\n"
        "[targets.composition]\ncount = 10\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[[targets]]\nid = \"sorn\"\n[targets.composition]\ncount = 10\n"
        "[targets.composition.node]\nkind = \"sorn\"\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n"
        "[[targets]]\nid = \"oracle\"\ncontroller = \"oracle\"\n"
        "[targets.composition.task]\nkind = \"delayed_cue\"\n";
    bl_resolved_plan *r = bl_test_resolve_text(plan_text);
    bl_execution x;
    bl_execution_default(&x);
    /* 4, 2, 2 and 1 seed streams: the same bytes */
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(bl_run_job_bytes(r, i, &x), base);
    x.recording = BL_RECORDING_PROBE_EVENTS;
    assert_int_equal(bl_run_job_bytes(r, 0, &x),
                     base + 6144 + 80 * 10);
    x.recording = BL_RECORDING_REPLAY;
    assert_int_equal(bl_run_job_bytes(r, 3, &x), base + (int64_t)sizeof(bl_json *));
    bl_resolved_plan_destroy(r);
}

/* 200000 blocks x 1000 trials resolve (the counts fit), but their rows
 * cannot fit 256 MiB: both preflights refuse them before anything exists,
 * and admit them at exactly the bytes they need. */
static void test_job_bytes_must_fit_the_budget(void **state)
{
    (void)state;
    char text[2048];
    count_plan(text, sizeof text, "blocks = 200000\ntrials_per_block = 1000",
               "controller = \"reference_null\"", "1", "tracking");
    bl_resolved_plan *r = bl_test_resolve_text(text);
    bl_execution x;
    bl_execution_default(&x);
    const int64_t per = bl_run_job_bytes(r, 0, &x);
    const int64_t need = per * 200000000;
    char want[512];
    snprintf(want, sizeof want,
             "the 200000000 trials of this plan need an estimated %lld bytes for results until "
             "the record is written (%lld bytes per trial); memory budget is 268435456 bytes; "
             "raise --memory-budget-mib or run fewer trials",
             (long long)need, (long long)per);
    bl_error err = {0};
    assert_int_equal(bl_evaluation_preflight(r, &x, NULL, 0, &err), BL_ENOMEM);
    assert_string_equal(err.msg, want);
    x.memory_budget_bytes = need - 1;
    assert_int_equal(bl_run_preflight(r, &x, &err), BL_ENOMEM);
    assert_non_null(strstr(err.msg, "--memory-budget-mib"));
    x.memory_budget_bytes = need;
    OK_E(bl_run_preflight(r, &x, &e_));
    OK_E(bl_evaluation_preflight(r, &x, NULL, 0, &e_));
    bl_resolved_plan_destroy(r);
}

/* The job bytes are checked apart from §4.6: the capacity admitted for the
 * shipped delayed-cue plan is the spec's, to the byte. 498248 bytes per
 * trial; a budget of 4/3 x 3 x 498248 bytes leaves exactly three slots. */
static void test_reference_capacities_unchanged(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    bl_resolved_plan *r = resolve_file(bl_test_shared_path("plans/delayed-cue.toml"));
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = 1000;
    x.memory_budget_bytes = 1992992;
    assert_int_equal(bl_execution_allocation_budget(&x), 3 * 498248);
    bl_run_result *res = NULL;
    OK_E(bl_run_execute(r, &x, NULL, &res, &e_));
    assert_int_equal(res->ncohorts, 1);
    assert_int_equal(res->trial_bytes[0], 498248);
    assert_int_equal(res->batch_capacities[0], 3);
    bl_run_result_destroy(res);
    /* One byte less and only two fit. */
    x.memory_budget_bytes = 1992991;
    OK_E(bl_run_execute(r, &x, NULL, &res, &e_));
    assert_int_equal(res->batch_capacities[0], 2);
    bl_run_result_destroy(res);
    /* And the defaults admit the full requested batch, as the spec says. */
    bl_execution_default(&x);
    OK_E(bl_run_execute(r, &x, NULL, &res, &e_));
    assert_int_equal(res->batch_capacities[0], 32);
    bl_run_result_destroy(res);
    bl_resolved_plan_destroy(r);
}

/* ---- interrupt and allocation failures -------------------------------------- */

static void test_interrupt_stops_the_run(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(mixed_plan);
    volatile sig_atomic_t flag = 1;
    bl_run_hooks hooks = {.interrupt = &flag};
    bl_execution x;
    bl_execution_default(&x);
    bl_run_result *res = NULL;
    bl_error err = {0};
    assert_int_equal(bl_run_execute(r, &x, &hooks, &res, &err), BL_EINTERRUPT);
    assert_null(res);
    assert_string_equal(bl_status_kind(err.status), "KeyboardInterrupt");
    bl_resolved_plan_destroy(r);
}

static void count_progress(void *ctx, size_t done, size_t total)
{
    size_t *calls = ctx;
    assert_true(done <= total);
    calls[0]++;
    calls[1] = done;
}

static void test_progress_reports_every_batch(void **state)
{
    (void)state;
    char *text = scope_plan("block");
    bl_resolved_plan *r = bl_test_resolve_text(text);
    size_t calls[2] = {0, 0};
    bl_run_hooks hooks = {.progress = count_progress, .ctx = calls};
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = 4;
    bl_run_result *res = NULL;
    OK_E(bl_run_execute(r, &x, &hooks, &res, &e_));
    assert_int_equal(calls[0], 2); /* 6 jobs in batches of 4 */
    assert_int_equal(calls[1], 6);
    bl_run_result_destroy(res);
    bl_resolved_plan_destroy(r);
    free(text);
}

/* Everything a run reports besides its rows and timings, as text. */
static char *run_metadata_text(const bl_run_result *res)
{
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_printf(&b, "%zu %zu %lld %lld %lld %lld %lld %lld %lld\n", res->ntrials, res->ncohorts,
            (long long)res->requested_batch_size, (long long)res->recording_estimate_bytes,
            (long long)res->allocation_budget, (long long)res->cpu_threads,
            (long long)res->world_ticks, (long long)res->neural_frames,
            (long long)res->reservoir_frames);
    for (size_t k = 0; k < res->ncohorts; k++)
        bl_buf_printf(&b, "cohort %lld %lld\n", (long long)res->batch_capacities[k],
                (long long)res->trial_bytes[k]);
    for (size_t j = 0; j < res->nprocessed; j++)
        bl_buf_printf(&b, "%zu ", res->processing_order[j]);
    for (size_t j = 0; j < res->ntrials; j++)
        bl_buf_printf(&b, "\n%lld", (long long)res->trials[j].spikes);
    assert_false(b.failed);
    char *text = bl_buf_take(&b, NULL);
    assert_non_null(text);
    return text;
}

/* The prepared run and the one-shot run give whole result tables, their
 * metadata and their recordings byte for byte the same; a preparation
 * executes again (other hooks, same rows) and loads its targets once. */
static void test_prepared_run_matches_one_shot(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(mixed_plan);
    const bl_recording recordings[] = {BL_RECORDING_SUMMARY, BL_RECORDING_REPLAY};
    for (size_t m = 0; m < sizeof recordings / sizeof *recordings; m++) {
        bl_execution x;
        bl_execution_default(&x);
        x.batch_size = 3;
        x.cpu_threads = 2;
        x.recording = recordings[m];
        bl_run_result *once = NULL, *first = NULL, *again = NULL;
        const uint64_t loads = bl_run_target_loads();
        OK_E(bl_run_execute(r, &x, NULL, &once, &e_));
        assert_int_equal(bl_run_target_loads() - loads, 1);

        bl_run_prepared *p = NULL;
        OK_E(bl_run_prepare(r, &x, &p, &e_));
        x.batch_size = 1; /* the preparation kept its own copy of the policy */
        assert_int_equal(bl_run_target_loads() - loads, 2);
        OK_E(bl_run_execute_prepared(p, NULL, &first, &e_));
        size_t calls[2] = {0, 0};
        const bl_run_hooks hooks = {.progress = count_progress, .ctx = calls};
        OK_E(bl_run_execute_prepared(p, &hooks, &again, &e_));
        assert_int_equal(calls[1], once->ntrials);
        assert_int_equal(bl_run_target_loads() - loads, 2); /* executing loads nothing */
        bl_run_prepared_destroy(p);

        char *want = bl_test_trials_text(once), *want_meta = run_metadata_text(once);
        const bl_run_result *got[] = {first, again};
        for (size_t k = 0; k < 2; k++) {
            char *text = bl_test_trials_text(got[k]), *meta = run_metadata_text(got[k]);
            assert_string_equal(text, want);
            assert_string_equal(meta, want_meta);
            assert_true(got[k]->seconds_preflight >= 0);
            assert_int_equal(got[k]->replays != NULL, once->replays != NULL);
            for (size_t j = 0; once->replays && j < once->ntrials; j++)
                assert_true(bl_json_equal(got[k]->replays[j], once->replays[j]));
            bl_free(text);
            bl_free(meta);
        }
        bl_free(want_meta);
        bl_free(want);
        bl_run_result_destroy(once);
        bl_run_result_destroy(first);
        bl_run_result_destroy(again);
    }
    bl_resolved_plan_destroy(r);
}

/* A preparation refuses what the preflight refuses, with the same message,
 * and leaves nothing behind. */
static void test_prepare_refuses_as_the_preflight(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(mixed_plan);
    for (int k = 0; k < 4; k++) {
        bl_execution x;
        bl_execution_default(&x);
        if (k == 0)
            x.batch_size = 0;                       /* validation */
        else if (k == 1)
            x.recording = BL_RECORDING_PROBE_EVENTS; /* not every target is a probe */
        else if (k == 2)
            x.noise_tile_frames = 1;                /* shorter than a neural cycle */
        else
            x.memory_budget_bytes = 4096;           /* admission */
        bl_error want = {0}, got = {0};
        const bl_status st = bl_run_preflight(r, &x, &want);
        assert_int_not_equal(st, BL_OK);
        bl_run_prepared *p = NULL;
        assert_int_equal(bl_run_prepare(r, &x, &p, &got), st);
        assert_null(p);
        assert_string_equal(got.msg, want.msg);
    }
    bl_resolved_plan_destroy(r);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(mixed_plan);
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = 3;
    /* Count the allocations of one run, then fail each in turn. */
    const long before = bl_alloc_count();
    bl_run_result *res = NULL;
    OK_E(bl_run_execute(r, &x, NULL, &res, &e_));
    bl_run_result_destroy(res);
    const long total = bl_alloc_count() - before;
    assert_true(total > 10);
    /* Every allocation is tried when the run is small; a stride keeps the
     * sanitizer build quick when it is not. */
    const long stride = total > 400 ? total / 400 : 1;
    for (long n = 1; n <= total; n += stride) {
        bl_alloc_fail_at(n);
        bl_error err = {0};
        res = NULL;
        bl_status st = bl_run_execute(r, &x, NULL, &res, &err);
        bl_alloc_fail_at(0);
        if (st != BL_ENOMEM)
            fail_msg("allocation %ld of %ld: status %d (%s)", n, total, (int)st, err.msg);
        assert_null(res);
    }
    bl_resolved_plan_destroy(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_plan_is_partition_invariant),
        cmocka_unit_test(test_interventions_take_effect),
        cmocka_unit_test(test_core_plan_is_partition_invariant),
        cmocka_unit_test(test_null_controls_partition_and_early_done),
        cmocka_unit_test(test_construction_scopes),
        cmocka_unit_test(test_labels_and_order_are_not_identity),
        cmocka_unit_test(test_failed_neural_frame_is_latched),
        cmocka_unit_test(test_groups_are_partition_invariant),
        cmocka_unit_test(test_cartpole_groups_end_apart),
        cmocka_unit_test(test_group_cap_must_be_a_width),
        cmocka_unit_test(test_admission_unit_cases),
        cmocka_unit_test(test_trial_bytes_examples),
        cmocka_unit_test(test_memory_and_recording_reject_before_runtime),
        cmocka_unit_test(test_overflowing_counts_are_refused),
        cmocka_unit_test(test_allocation_budget_saturates),
        cmocka_unit_test(test_job_bytes),
        cmocka_unit_test(test_job_bytes_must_fit_the_budget),
        cmocka_unit_test(test_reference_capacities_unchanged),
        cmocka_unit_test(test_interrupt_stops_the_run),
        cmocka_unit_test(test_progress_reports_every_batch),
        cmocka_unit_test(test_prepared_run_matches_one_shot),
        cmocka_unit_test(test_prepare_refuses_as_the_preflight),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
