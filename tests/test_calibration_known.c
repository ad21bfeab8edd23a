/* The published null calibrations, recomputed (spec/tasks.md §0.2, §7.3,
 * §7.4, §9.4, §9.5): 1024 reference_null trajectories per physical task on
 * the calibration seed bank (root 91337), default horizon, warm-up 0,
 * float64: the published calibrate plans of ../shared/plans evaluated
 * (bl_evaluate: the runner, then the calibrate operation's frozen record) in
 * tiles of 512 frames and batches of 128 worlds like the reference
 * generator.
 *
 * Pong and Plank CartPole must reproduce every trial score, the mean and
 * the standard error bit for bit. Tracking may differ in the last bits of
 * some trials (the platform cos inside its running sum), so its scores are
 * compared within 1e-15, its mean within 1e-17, and its standard error
 * exactly, as the spec reports for a faithful implementation. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "brainlesslab/evaluation.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/run.h"
#include "brainlesslab/task.h"
#include "support.h"
#include "task_support.h"
#include "tasks/worlds_internal.h"

enum { BLOCKS = 1024, BATCH = 128, TILE_FRAMES = 512, ROOT = BL_TEST_CALIBRATION_ROOT };

typedef struct published {
    bl_json *doc;
    const bl_json *scores, *ids;
    double null_mean, null_se;
} published;

static void load_published(const char *task, published *p)
{
    char rel[128];
    snprintf(rel, sizeof rel, "reference/calibrations/cpu-%s.json", task);
    OK_E(bl_json_read_file(bl_test_shared_path(rel), &p->doc, &e_));
    const bl_json *recs = bl_json_get(p->doc, "calibrations");
    assert_non_null(recs);
    assert_int_equal(bl_json_size(recs), 1);
    const bl_json *rec = bl_json_at(recs, 0);
    p->scores = bl_json_get(rec, "trial_scores");
    p->ids = bl_json_get(rec, "trajectory_ids");
    assert_non_null(p->scores);
    assert_non_null(p->ids);
    assert_int_equal(bl_json_size(p->scores), BLOCKS);
    assert_int_equal(bl_json_size(p->ids), BLOCKS);
    p->null_mean = bl_json_get_real(bl_json_get(rec, "null_mean"));
    p->null_se = bl_json_get_real(bl_json_get(rec, "null_standard_error"));
    assert_int_equal(bl_json_get_int(bl_json_get(rec, "root_seed")), ROOT);
    const bl_json *sig = bl_json_get(rec, "signature");
    assert_string_equal(bl_json_get_string(bl_json_get(sig, "task"), NULL), task);
    assert_int_equal(bl_json_get_int(bl_json_get(sig, "warmup")), 0);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs ../shared/plans/calibration-published-<task>.toml through the
 * runner, in batches of 128 with tiles of 512 frames and two threads like
 * the reference generator, and compares every row with the published
 * trajectory: world seed, status, score. */
static void calibrate(const char *task, bool exact)
{
    BL_REQUIRE_SHARED();
    published pub = {0};
    load_published(task, &pub);
    char rel[128];
    snprintf(rel, sizeof rel, "plans/calibration-published-%s.toml", task);
    bl_plan *plan = NULL;
    bl_resolved_plan *r = NULL;
    OK_E(bl_plan_read(bl_test_shared_path(rel), &plan, &e_));
    OK_E(bl_plan_resolve(plan, &r, &e_));
    bl_execution x;
    bl_execution_default(&x);
    x.batch_size = BATCH;
    x.noise_tile_frames = TILE_FRAMES;
    x.cpu_threads = 2;

    const double t0 = seconds_now();
    bl_evaluation *ev = NULL;
    OK_E(bl_evaluate(r, &x, NULL, 0, NULL, &ev, &e_));
    const double elapsed = seconds_now() - t0;
    const bl_run_result *res = ev->run;
    assert_int_equal(res->ntrials, BLOCKS);
    /* The calibrate operation froze one empirical record of the trials. */
    assert_int_equal(ev->ncalibrations, 1);
    const bl_calibration *cal = ev->calibrations[0];
    assert_false(cal->analytic);
    assert_int_equal(cal->nscores, BLOCKS);
    assert_int_equal(cal->root_seed, ROOT);
    assert_int_equal(cal->bootstrap_repetitions, 2000);

    double *scores = calloc(BLOCKS, sizeof *scores);
    assert_non_null(scores);
    size_t differ = 0;
    double worst = 0;
    for (size_t b = 0; b < BLOCKS; b++) {
        const bl_trial_result *t = &res->trials[b];
        assert_int_equal(t->block, (int64_t)b);
        if (t->status != BL_TRIAL_COMPLETED)
            fail_msg("%s block %zu did not complete", task, b);
        const char *want_id = bl_json_get_string(bl_json_at(pub.ids, b), NULL);
        if (strcmp(t->world_seed, want_id) != 0)
            fail_msg("%s block %zu: world seed %s, published %s", task, b, t->world_seed,
                     want_id);
        assert_string_equal(bl_json_get_string(bl_json_at(cal->trajectory_ids, b), NULL),
                            want_id);
        scores[b] = t->raw;
        assert_true(bl_test_bits(cal->trial_scores[b]) == bl_test_bits(t->raw));
        const double want = bl_json_get_real(bl_json_at(pub.scores, b));
        const double diff = fabs(scores[b] - want);
        if (bl_test_bits(scores[b]) != bl_test_bits(want)) {
            differ++;
            if (diff > worst)
                worst = diff;
            if (exact || !(diff <= 1e-15))
                fail_msg("%s block %zu: score %.17g, published %.17g", task, b, scores[b], want);
        }
    }
    const double mean = cal->null_mean, se = cal->null_standard_error;
    printf("%s: %d trajectories in %.2f s; %zu scores differ from the published ones (worst "
           "%.3g); mean %.17g (published %.17g), SE %.17g (published %.17g)\n",
           task, BLOCKS, elapsed, differ, worst, mean, pub.null_mean, se, pub.null_se);
    if (exact) {
        assert_true(bl_test_bits(mean) == bl_test_bits(pub.null_mean));
    } else {
        assert_true(fabs(mean - pub.null_mean) <= 1e-17);
    }
    assert_true(bl_test_bits(se) == bl_test_bits(pub.null_se));
    /* Our own signature (this program's sources), hence our own id and
     * interval; the published ones are recomputed from the published
     * signature in test_results. */
    assert_string_not_equal(cal->signature_id, "");
    free(scores);
    bl_evaluation_destroy(ev);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(plan);
    bl_json_destroy(pub.doc);
}

/* §6.3's indicative oracle results on calibration blocks 0-2: Tracking
 * about 0.996, 0.995, 0.9988; Pong 20 hits and no miss (blocks 0 and 1);
 * CartPole survives all 15000 steps. */
static void test_oracle_on_calibration_worlds(void **state)
{
    (void)state;
    const char *tasks[3] = {"tracking", "pong", "cartpole_plank_easy"};
    const double tracking[3] = {0.996, 0.995, 0.9988};
    for (int t = 0; t < 3; t++) {
        const bl_task_kind kind = bl_test_task_kind(tasks[t]);
        bl_task_options o;
        bl_task_definition def;
        bl_test_task_defaults(kind, &o, &def);
        bl_world_init *inits[3];
        int64_t horizons[3];
        for (int b = 0; b < 3; b++) {
            bl_gen g;
            bl_test_calibration_gen(&g, "world", tasks[t], b, NULL);
            horizons[b] = def.default_horizon;
            inits[b] = bl_test_prepare(&o, &g, horizons[b]);
        }
        bl_worlds *w = NULL;
        OK_E(bl_worlds_create((const bl_world_init *const *)inits, 3, horizons, 0, BL_FLOAT64,
                              &w, &e_));
        for (int b = 0; b < 3; b++)
            bl_world_init_destroy(inits[b]);
        bl_controllers *c = NULL;
        OK_E(bl_controllers_create(BL_POLICY_ORACLE, w, &c, &e_));
        int32_t guard[3] = {1, 1, 1}, cursors[3] = {0, 0, 0};
        const int32_t tile_ticks = TILE_FRAMES / def.neural_frames;
        for (int64_t start = 0; start < def.default_horizon; start += tile_ticks) {
            const int64_t left = def.default_horizon - start;
            OK_E(bl_worlds_run_control(w, c, NULL,
                                       left < tile_ticks ? (int32_t)left : tile_ticks, guard,
                                       cursors, &e_));
        }
        for (size_t b = 0; b < 3; b++) {
            assert_int_equal(bl_worlds_status(w, b, true), BL_TRIAL_COMPLETED);
            const double out = bl_worlds_outcome(w, b);
            printf("oracle %s block %zu: %.17g (hits %d, misses %d, ticks %d)\n", tasks[t], b,
                   out, w->hits[b], w->misses[b], w->ticks[b]);
            if (kind == BL_TASK_TRACKING) {
                assert_true(fabs(out - tracking[b]) < 5e-4);
            } else if (kind == BL_TASK_PONG) {
                if (b < 2) {
                    assert_int_equal(w->hits[b], 20);
                    assert_int_equal(w->misses[b], 0);
                }
                assert_true(out == 1.0);
            } else {
                assert_true(out == 15000.0);
            }
        }
        bl_controllers_destroy(c);
        bl_worlds_destroy(w);
        bl_task_options_clear(&o);
    }
}

static void test_pong(void **state)
{
    (void)state;
    calibrate("pong", true);
}

static void test_cartpole_plank_easy(void **state)
{
    (void)state;
    calibrate("cartpole_plank_easy", true);
}

static void test_tracking(void **state)
{
    (void)state;
    calibrate("tracking", false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_on_calibration_worlds),
        cmocka_unit_test(test_pong),
        cmocka_unit_test(test_cartpole_plank_easy),
        cmocka_unit_test(test_tracking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
