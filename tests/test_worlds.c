/* World cohorts (spec/tasks.md §1–§5, §8.2–§8.3, §10.1, §11): creation
 * checks and casts, every family's observation and dynamics against the
 * spec's vectors and the archival fixtures, probe decisions, warm-up
 * scoring, the finite rules, float32 storage, snapshots and allocation
 * failures. Worlds are built by hand here so that these tests depend on
 * nothing but the cohort itself. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/task.h"
#include "support.h"
#include "task_support.h"
#include "tasks/worlds_internal.h"

#define PI 3.14159265358979323846

/* ---- hand-built worlds --------------------------------------------------- */

/* Hand-built worlds are allocated as prepared ones are, so that
 * bl_world_init_destroy releases them. */
static bl_world_init *new_init(bl_task_kind kind, size_t nr)
{
    bl_world_init *w = bl_calloc(1, sizeof *w);
    assert_non_null(w);
    w->kind = kind;
    w->n_inputs = nr;
    return w;
}

/* Default Tracking geometry (§1.2): +eye block first. */
static bl_world_init *make_tracking(double theta, double phi, double dir, double gain,
                                    double speed, double amp)
{
    bl_world_init *w = new_init(BL_TASK_TRACKING, 62);
    w->physical[0] = theta;
    w->physical[1] = phi;
    w->physical[2] = dir;
    w->params[0] = gain;
    w->params[1] = speed;
    w->params[2] = amp;
    w->angles = bl_calloc(62, sizeof(double));
    assert_non_null(w->angles);
    for (int e = 0; e < 2; e++)
        for (int k = 0; k < 31; k++)
            w->angles[e * 31 + k] = (e == 0 ? 30.0 : -30.0) + (-60.0 + 4.0 * k);
    return w;
}

static bl_world_init *make_pong(const double state[5], const double *draws, size_t k, double gain)
{
    bl_world_init *w = new_init(BL_TASK_PONG, 46);
    memcpy(w->physical, state, 5 * sizeof(double));
    w->params[0] = gain;
    w->angles = bl_calloc(46, sizeof(double));
    w->draws = bl_calloc(2 * k, sizeof(double));
    assert_non_null(w->angles);
    assert_non_null(w->draws);
    for (int i = 0; i < 46; i++)
        w->angles[i] = -90.0 + 4.0 * i;
    memcpy(w->draws, draws, 2 * k * sizeof(double));
    w->n_draws = k;
    return w;
}

static bl_world_init *make_cartpole(double x, double xd, double th, double thd)
{
    bl_world_init *w = new_init(BL_TASK_CARTPOLE_PLANK_EASY, 8);
    w->physical[0] = x;
    w->physical[1] = xd;
    w->physical[2] = th;
    w->physical[3] = thd;
    w->params[0] = 2.4;
    w->params[1] = 2.0;
    w->params[2] = 0.2095;
    w->params[3] = 2.0;
    return w;
}

static void alloc_schedule(bl_world_init *w, size_t rounds, size_t length)
{
    w->rounds = rounds;
    w->length = length;
    w->stimuli = bl_calloc(length * w->n_inputs, sizeof(double));
    w->response_start = bl_calloc(rounds, sizeof(int32_t));
    w->response_end = bl_calloc(rounds, sizeof(int32_t));
    w->cue_ends = bl_calloc(rounds, sizeof(int32_t));
    w->labels = bl_calloc(rounds, sizeof(int32_t));
    w->round_bounds = bl_calloc(2 * rounds, sizeof(int32_t));
    assert_true(w->stimuli && w->response_start && w->response_end && w->cue_ends && w->labels &&
                w->round_bounds);
}

/* delayed_cue (§5.4), transient cue. */
static bl_world_init *make_delayed_cue(int c, int delay, int r, int cue)
{
    bl_world_init *w = new_init(BL_TASK_DELAYED_CUE, 3);
    const int len = c + delay + r;
    alloc_schedule(w, 1, (size_t)len);
    for (int t = 0; t < c; t++)
        w->stimuli[t * 3 + cue - 1] = 1;
    for (int t = c + delay; t < len; t++)
        w->stimuli[t * 3 + 2] = 1;
    w->response_start[0] = c + delay;
    w->response_end[0] = len;
    w->cue_ends[0] = c;
    w->labels[0] = cue;
    w->round_bounds[1] = len;
    return w;
}

/* reversal_adaptation (§5.10) with explicit cues and mapping. */
static bl_world_init *make_reversal(int rounds, int c, int r, int f, int reversal, bool mapping,
                                    const int *cues, bool feedback)
{
    bl_world_init *w = new_init(BL_TASK_REVERSAL_ADAPTATION, 8);
    const int per = c + r + f;
    alloc_schedule(w, (size_t)rounds, (size_t)(rounds * per));
    for (int k = 0; k < rounds; k++) {
        const int s = k * per;
        for (int t = s; t < s + c + r; t++)
            w->stimuli[t * 8 + cues[k] - 1] = 1;
        for (int t = s + c; t < s + c + r; t++)
            w->stimuli[t * 8 + 2] = 1;
        for (int t = s + c + r; t < s + per; t++)
            w->stimuli[t * 8 + 3] = 1;
        w->response_start[k] = s + c;
        w->response_end[k] = s + c + r;
        w->cue_ends[k] = s + c;
        w->round_bounds[2 * k] = s;
        w->round_bounds[2 * k + 1] = s + per;
        w->labels[k] = (mapping != (k + 1 >= reversal)) ? 3 - cues[k] : cues[k];
    }
    w->reversal = reversal;
    w->feedback = feedback;
    return w;
}

static bl_worlds *create(bl_world_init **inits, size_t n, const int64_t *horizons, int64_t warmup,
                         bl_dtype dt)
{
    bl_worlds *w = NULL;
    bl_error err = {0};
    bl_status st = bl_worlds_create((const bl_world_init *const *)inits, n, horizons, warmup, dt,
                                    &w, &err);
    if (st != BL_OK)
        fail_msg("bl_worlds_create: %s", err.msg);
    return w;
}

static bl_status try_create(bl_world_init **inits, size_t n, const int64_t *horizons,
                            int64_t warmup, bl_dtype dt, bl_error *err)
{
    bl_worlds *w = (bl_worlds *)&w;
    bl_status st = bl_worlds_create((const bl_world_init *const *)inits, n, horizons, warmup, dt,
                                    &w, err);
    if (st == BL_OK)
        bl_worlds_destroy(w);
    else
        assert_null(w);
    return st;
}

static const double *in64(const bl_worlds *w, size_t b)
{
    return (const double *)bl_worlds_inputs(w) + b * bl_worlds_inputs_width(w);
}

static const double *phys64(const bl_worlds *w, size_t b)
{
    return (const double *)w->physical + b * 8;
}

static void encode(bl_worlds *w, int32_t frame, const int32_t *en)
{
    bl_error err = {0};
    if (bl_worlds_encode(w, frame, en, bl_worlds_count(w), &err) != BL_OK)
        fail_msg("encode: %s", err.msg);
}

static void accumulate(bl_worlds *w, const void *eff, int32_t frame, const int32_t *en)
{
    bl_error err = {0};
    bl_matrix m = {bl_worlds_dtype(w), bl_worlds_count(w), 2, eff};
    if (bl_worlds_accumulate(w, &m, frame, en, bl_worlds_count(w), &err) != BL_OK)
        fail_msg("accumulate: %s", err.msg);
}

static void advance(bl_worlds *w, const void *eff, const int32_t *en)
{
    bl_error err = {0};
    bl_matrix m = {bl_worlds_dtype(w), bl_worlds_count(w), 2, eff};
    if (bl_worlds_advance(w, &m, en, bl_worlds_count(w), &err) != BL_OK)
        fail_msg("advance: %s", err.msg);
}

/* The rest of a one-frame tick whose frame is encoded: the effectors are
 * accumulated, then the world advances. */
static void finish_tick(bl_worlds *w, const void *eff, const int32_t *en)
{
    accumulate(w, eff, 1, en);
    advance(w, eff, en);
}

/* One world tick as the runner does it: every frame encodes and
 * accumulates the same effectors, then the world advances. */
static void tick(bl_worlds *w, const void *eff, const int32_t *en)
{
    for (int32_t f = 1; f <= bl_worlds_frames(w); f++) {
        encode(w, f, en);
        accumulate(w, eff, f, en);
    }
    advance(w, eff, en);
}

static double snap_value(const bl_snapshot *s, const char *name, size_t i)
{
    const bl_snapshot_array *a = bl_snapshot_get(s, name);
    if (!a)
        fail_msg("snapshot has no %s", name);
    assert_true(i < a->shape[0] * a->shape[1]);
    return a->data[i];
}

/* Tracking receptor value recomputed from the spec's formula (§2.3). */
static double tracking_expected(double theta, double phi, double angle, double gain, double *delta)
{
    const double c = 180.0 / PI;
    double v = theta * c + angle - phi * c + 180.0;
    double r = fmod(v, 360.0);
    if (r < 0)
        r += 360.0;
    *delta = r - 180.0;
    return fabs(*delta) <= 4 ? gain : gain * exp(((-*delta) * *delta) / 10);
}

/* The arrays of ../shared/fixtures/env_<family>/: the effectors effs.npy
 * and one or two more (`second` NULL: one); skips the test without the
 * fixtures. */
typedef struct fixture {
    bl_npy *effs, *first, *second;
} fixture;

static bl_npy *fixture_array(const char *family, const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "fixtures/env_%s/%s.npy", family, name);
    bl_npy *a = NULL;
    OK_E(bl_npy_read(bl_test_shared_path(rel), &a, &e_));
    return a;
}

static fixture fixture_load(const char *family, const char *first, const char *second)
{
    BL_REQUIRE_SHARED();
    fixture f = {fixture_array(family, "effs"), fixture_array(family, first),
                 second ? fixture_array(family, second) : NULL};
    return f;
}

static void fixture_clear(fixture *f)
{
    bl_npy_destroy(f->effs);
    bl_npy_destroy(f->first);
    bl_npy_destroy(f->second);
}

/* The fixture's effectors of tick t. */
static void fixture_effectors(const fixture *f, size_t t, double eff[2])
{
    eff[0] = bl_npy_get_f64(f->effs, 2 * t);
    eff[1] = bl_npy_get_f64(f->effs, 2 * t + 1);
}

/* ---- creation ------------------------------------------------------------ */

static void expect_reject(bl_world_init **inits, size_t n, const int64_t *h, int64_t warmup,
                          bl_dtype dt, const char *needle)
{
    bl_error err = {0};
    assert_int_equal(try_create(inits, n, h, warmup, dt, &err), BL_EVALUE);
    if (!strstr(err.msg, needle))
        fail_msg("expected '%s' in '%s'", needle, err.msg);
}

static void test_create_validation(void **state)
{
    (void)state;
    const int64_t h[3] = {100, 100, 100};
    bl_world_init *tr = make_tracking(1, 2, 1, 1, PI / 180, 10);
    bl_world_init *pg = make_pong((double[5]){995, 250, 250, -5, 5}, (double[2]){0.5, 0.5}, 1, 1);
    bl_world_init *dc = make_delayed_cue(2, 3, 2, 1);
    bl_world_init *cp = make_cartpole(0, 0, 0, 0);
    bl_error err = {0};

    expect_reject(NULL, 0, h, 0, BL_FLOAT64, "at least one world");
    expect_reject((bl_world_init *[]){tr}, 0, h, 0, BL_FLOAT64, "at least one world");
    expect_reject((bl_world_init *[]){tr, pg}, 2, h, 0, BL_FLOAT64, "one task family");
    expect_reject((bl_world_init *[]){tr}, 1, h, 0, (bl_dtype)7, "float64 or float32");
    expect_reject((bl_world_init *[]){tr}, 1, h, -1, BL_FLOAT64, "warmup");
    expect_reject((bl_world_init *[]){dc}, 1, h, 1, BL_FLOAT64,
                  "probes and Plank CartPole require warmup=0");
    expect_reject((bl_world_init *[]){cp}, 1, h, 1, BL_FLOAT64,
                  "probes and Plank CartPole require warmup=0");
    expect_reject((bl_world_init *[]){tr}, 1, NULL, 0, BL_FLOAT64, "horizons");
    expect_reject((bl_world_init *[]){tr}, 1, (int64_t[]){-1}, 0, BL_FLOAT64, "horizons");
    expect_reject((bl_world_init *[]){tr}, 1, (int64_t[]){(int64_t)INT32_MAX + 1}, 0, BL_FLOAT64,
                  "horizons");
    /* Warm-up is a Tracking/Pong feature. */
    assert_int_equal(try_create((bl_world_init *[]){tr}, 1, h, 5, BL_FLOAT64, &err), BL_OK);
    assert_int_equal(try_create((bl_world_init *[]){pg}, 1, h, 5, BL_FLOAT64, &err), BL_OK);

    /* One n_inputs per cohort. */
    bl_world_init *tr2 = make_tracking(1, 2, 1, 1, PI / 180, 10);
    tr2->n_inputs = 60;
    expect_reject((bl_world_init *[]){tr, tr2}, 2, h, 0, BL_FLOAT64, "one n_inputs");
    tr2->n_inputs = 62;

    /* Non-finite numbers, in float64 and after the float32 cast. */
    tr2->physical[1] = NAN;
    expect_reject((bl_world_init *[]){tr, tr2}, 2, h, 0, BL_FLOAT64,
                  "world 1: physical must be finite");
    tr2->physical[1] = 1e300;
    assert_int_equal(try_create((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT64, &err), BL_OK);
    expect_reject((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT32,
                  "physical must be finite after casting to float32");
    tr2->physical[1] = 2;
    tr2->angles[40] = INFINITY;
    expect_reject((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT64, "angles must be finite");
    tr2->angles[40] = 0;
    pg->draws[1] = NAN;
    expect_reject((bl_world_init *[]){pg}, 1, h, 0, BL_FLOAT64, "draws must be finite");
    pg->draws[1] = 0.5;
    dc->stimuli[4] = 1e39;
    expect_reject((bl_world_init *[]){dc}, 1, h, 0, BL_FLOAT32, "stimuli must be finite after");
    dc->stimuli[4] = 0;

    /* §8.2 / §10.2 #7: a positive movement_amp that underflows in float32
     * is rejected there only; zero gain and zero speed are valid controls. */
    tr2->params[2] = 1e-50;
    assert_int_equal(try_create((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT64, &err), BL_OK);
    expect_reject((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT32,
                  "movement_amp must remain finite and positive after casting to float32");
    tr2->params[2] = 1e300;
    expect_reject((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT32,
                  "movement_amp must remain finite and positive after casting to float32");
    tr2->params[2] = 0;
    expect_reject((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT64, "movement_amp must be positive");
    tr2->params[2] = 10;
    tr2->params[0] = 0;
    tr2->params[1] = 0;
    assert_int_equal(try_create((bl_world_init *[]){tr2}, 1, h, 0, BL_FLOAT32, &err), BL_OK);

    /* Structure the operations rely on. */
    bl_world_init *bad = make_pong((double[5]){995, 250, 250, -5, 5}, (double[2]){0.5, 0.5}, 1, 1);
    bad->n_draws = 0;
    expect_reject((bl_world_init *[]){bad}, 1, h, 0, BL_FLOAT64, "draws must have shape");
    bad->n_draws = 1;
    bad->n_inputs = 45;
    expect_reject((bl_world_init *[]){bad}, 1, h, 0, BL_FLOAT64, "cannot have 45 receptors");
    bl_world_init_destroy(bad);
    dc->labels[0] = 3;
    expect_reject((bl_world_init *[]){dc}, 1, h, 0, BL_FLOAT64, "labels must be 1 or 2");
    dc->labels[0] = 1;
    dc->rounds = 0;
    expect_reject((bl_world_init *[]){dc}, 1, h, 0, BL_FLOAT64, "at least one round");
    dc->rounds = 1;
    cp->rounds = 1;
    expect_reject((bl_world_init *[]){cp}, 1, h, 0, BL_FLOAT64, "no probe rounds");
    cp->rounds = 0;
    int cues[17];
    for (int k = 0; k < 17; k++)
        cues[k] = 1 + k % 2;
    bl_world_init *rv = make_reversal(17, 1, 1, 1, 3, false, cues, true);
    expect_reject((bl_world_init *[]){rv}, 1, h, 0, BL_FLOAT64, "sixteen scored rounds");
    rv->reversal = 2;
    assert_int_equal(try_create((bl_world_init *[]){rv}, 1, h, 0, BL_FLOAT64, &err), BL_OK);
    bl_world_init_destroy(rv);

    /* The cohort is a copy: editing the caller's arrays changes nothing. */
    bl_worlds *w = create((bl_world_init *[]){tr}, 1, h, 0, BL_FLOAT64);
    tr->physical[0] = 99;
    tr->angles[0] = 99;
    assert_true(phys64(w, 0)[0] == 1.0);
    assert_true(((const double *)w->angles)[0] == -30.0);
    assert_int_equal(bl_worlds_count(w), 1);
    assert_int_equal(bl_worlds_inputs_width(w), 62);
    assert_int_equal(bl_worlds_frames(w), 1);
    assert_int_equal(bl_worlds_dtype(w), BL_FLOAT64);
    assert_true(bl_worlds_outcome(w, 0) == 0.0);
    assert_int_equal(bl_worlds_finite(w)[0], 1);

    /* Argument checks of the operations. */
    const int32_t en[1] = {1};
    double eff[2] = {0, 0};
    bl_matrix m = {BL_FLOAT64, 1, 2, eff};
    assert_int_equal(bl_worlds_encode(w, 0, en, 1, &err), BL_EVALUE);
    assert_int_equal(bl_worlds_encode(w, 2, en, 1, &err), BL_EVALUE);
    assert_int_equal(bl_worlds_encode(w, 1, en, 2, &err), BL_EVALUE);
    assert_int_equal(bl_worlds_encode(w, 1, NULL, 1, &err), BL_EVALUE);
    m.dtype = BL_FLOAT32;
    assert_int_equal(bl_worlds_advance(w, &m, en, 1, &err), BL_EVALUE);
    m.dtype = BL_FLOAT64;
    m.cols = 3;
    assert_int_equal(bl_worlds_accumulate(w, &m, 1, en, 1, &err), BL_EVALUE);
    m.cols = 2;
    assert_int_equal(bl_worlds_accumulate(w, &m, 2, en, 1, &err), BL_EVALUE);
    /* Nothing ran. */
    assert_int_equal(bl_worlds_ticks(w)[0], 0);
    bl_worlds_destroy(w);

    bl_world_init_destroy(tr);
    bl_world_init_destroy(tr2);
    bl_world_init_destroy(pg);
    bl_world_init_destroy(dc);
    bl_world_init_destroy(cp);
}

/* ---- probes: §10.1 #6 ------------------------------------------------------ */

static void test_delayed_cue_discard_ties_incomplete_early_stop(void **state)
{
    (void)state;
    bl_world_init *a = make_delayed_cue(2, 3, 2, 2);
    bl_world_init *b = make_delayed_cue(2, 3, 2, 1);
    bl_worlds *w = create((bl_world_init *[]){a, b}, 2, (int64_t[]){7, 7}, 0, BL_FLOAT64);
    assert_true(isnan(bl_worlds_outcome(w, 0)));
    const int32_t en[2] = {1, 0};
    /* Effectors before the response window are ignored. */
    for (int t = 0; t < 5; t++) {
        encode(w, 1, en);
        const double *x = in64(w, 0), *y = in64(w, 1);
        assert_true(x[0] == 0 && x[1] == (t < 2 ? 1.0 : 0.0) && x[2] == 0);
        assert_true(y[0] == 0 && y[1] == 0 && y[2] == 0);
        const double eff[4] = {1, 0, 1, 0};
        finish_tick(w, eff, en);
    }
    const double *ev = (const double *)w->evidence;
    assert_true(ev[0] == 0 && ev[1] == 0);
    assert_true(isnan(bl_worlds_outcome(w, 0)));
    assert_int_equal(bl_worlds_done(w)[0], 0);
    assert_int_equal(bl_worlds_status(w, 0, true), BL_TRIAL_INCOMPLETE);
    /* Zero effectors in the window: a tie, decided left. */
    for (int t = 5; t < 7; t++) {
        encode(w, 1, en);
        assert_true(in64(w, 0)[2] == 1.0);
        const double eff[4] = {0, 0, 0, 0};
        finish_tick(w, eff, en);
    }
    assert_int_equal(w->decisions[0], 1);
    assert_int_equal(w->ties[0], 1);
    assert_int_equal(w->round[0], 1);
    assert_int_equal(bl_worlds_done(w)[0], 1);
    assert_int_equal(w->scored[0], 7);
    assert_true(bl_worlds_outcome(w, 0) == 0.0); /* label 2, decided 1 */
    /* The inactive world never advanced. */
    assert_int_equal(bl_worlds_ticks(w)[0], 7);
    assert_int_equal(bl_worlds_ticks(w)[1], 0);
    assert_int_equal(bl_worlds_status(w, 0, true), BL_TRIAL_COMPLETED);
    assert_int_equal(bl_worlds_status(w, 0, false), BL_TRIAL_FAILED);
    assert_int_equal(bl_worlds_status(w, 1, true), BL_TRIAL_INCOMPLETE);
    /* A done world encodes zeros and is never advanced again. */
    const int32_t all[2] = {1, 1};
    encode(w, 1, all);
    assert_true(in64(w, 0)[0] == 0 && in64(w, 0)[1] == 0 && in64(w, 0)[2] == 0);
    assert_true(in64(w, 1)[0] == 1.0);
    const double eff[4] = {0.25, 0.5, 0, 1};
    accumulate(w, eff, 1, all);
    assert_true(((const double *)w->last)[0] == 0 && ((const double *)w->last)[2] == 0);
    advance(w, eff, all);
    assert_int_equal(bl_worlds_ticks(w)[0], 7);
    assert_int_equal(bl_worlds_ticks(w)[1], 1);
    bl_worlds_destroy(w);

    /* A clear winner decides 2; the window sums are kept until the
     * decision. Early stop at a horizon before the end is incomplete. */
    w = create((bl_world_init *[]){a, b}, 2, (int64_t[]){7, 4}, 0, BL_FLOAT64);
    for (int t = 0; t < 7; t++) {
        const double mixed[4] = {0.25, 0.75, 0.5, 0.5};
        tick(w, mixed, (int32_t[]){1, t < 4});
        if (t == 5) {
            assert_true(((const double *)w->evidence)[0] == 0.25);
            assert_true(((const double *)w->evidence)[1] == 0.75);
        }
    }
    assert_int_equal(w->decisions[0], 2);
    assert_int_equal(w->ties[0], 0);
    assert_true(bl_worlds_outcome(w, 0) == 1.0);
    assert_int_equal(bl_worlds_ticks(w)[1], 4);
    assert_true(isnan(bl_worlds_outcome(w, 1)));
    assert_int_equal(bl_worlds_status(w, 1, true), BL_TRIAL_INCOMPLETE);
    assert_string_equal(bl_trial_status_name(BL_TRIAL_COMPLETED), "completed");
    assert_string_equal(bl_trial_status_name(BL_TRIAL_FAILED), "failed");
    assert_string_equal(bl_trial_status_name(BL_TRIAL_INCOMPLETE), "incomplete");
    bl_worlds_destroy(w);
    bl_world_init_destroy(a);
    bl_world_init_destroy(b);
}

/* §5.10: feedback shows round k's own decision during its feedback ticks
 * (visible mode only), and the outcome counts rounds rev-1 .. rev+14. */
static void test_reversal_feedback_and_outcome(void **state)
{
    (void)state;
    enum { ROUNDS = 20, REV = 3 };
    int cues[ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        cues[k] = 1 + (k * 7 % 3 == 0);
    bl_world_init *vis = make_reversal(ROUNDS, 2, 2, 2, REV, true, cues, true);
    bl_world_init *hid = make_reversal(ROUNDS, 2, 2, 2, REV, true, cues, false);
    bl_worlds *w = create((bl_world_init *[]){vis, hid}, 2, (int64_t[]){120, 120}, 0, BL_FLOAT64);
    const int32_t en[2] = {1, 1};
    int correct = 0;
    for (int t = 0; t < ROUNDS * 6; t++) {
        const int k = t / 6, phase = t % 6;
        /* Choose 2 in even rounds, else 1. */
        const int choice = k % 2 == 0 ? 2 : 1;
        encode(w, 1, en);
        for (size_t b = 0; b < 2; b++) {
            const double *x = in64(w, b);
            assert_true(x[cues[k] - 1] == (phase < 4 ? 1.0 : 0.0));
            assert_true(x[2] == (phase >= 2 && phase < 4 ? 1.0 : 0.0));
            assert_true(x[3] == (phase >= 4 ? 1.0 : 0.0));
            if (phase >= 4 && b == 0) {
                const bool ok = choice == vis->labels[k];
                assert_true(x[4] == (choice == 1) && x[5] == (choice == 2));
                assert_true(x[6] == ok && x[7] == !ok);
            } else {
                assert_true(x[4] == 0 && x[5] == 0 && x[6] == 0 && x[7] == 0);
            }
        }
        const double eff[4] = {choice == 1, choice == 2, choice == 1, choice == 2};
        finish_tick(w, eff, en);
        if (phase == 3) {
            assert_int_equal(w->round[0], k + 1);
            assert_int_equal(w->decisions[k], choice);
        }
    }
    for (int k = REV - 1; k < REV + 15; k++)
        correct += (k % 2 == 0 ? 2 : 1) == vis->labels[k];
    assert_int_equal(bl_worlds_done(w)[0], 1);
    assert_int_equal(w->scored[0], ROUNDS * 6);
    assert_true(bl_worlds_outcome(w, 0) == correct / 16.0);
    assert_true(bl_worlds_outcome(w, 1) == correct / 16.0);
    assert_true(correct > 0 && correct < 16);
    bl_worlds_destroy(w);
    bl_world_init_destroy(vis);
    bl_world_init_destroy(hid);
}

/* ---- Tracking ------------------------------------------------------------- */

/* §11.2–11.3: the fixture's effectors drive the current world from
 * (pi/2, 0, +1); the state trajectory equals the fixture's exactly. */
static void test_tracking_fixture_replay(void **state)
{
    (void)state;
    fixture fx = fixture_load("tracking", "state_T", "sensors_T");
    const bl_npy *st = fx.first, *sens = fx.second;
    assert_int_equal(fx.effs->shape[0], 60);
    assert_int_equal(st->shape[1], 4);
    bl_world_init *in = make_tracking(PI / 2, 0, 1, 1, PI / 180, 10);
    bl_worlds *w = create(&in, 1, (int64_t[]){60}, 0, BL_FLOAT64);
    const int32_t en[1] = {1};
    size_t plateau = 0, differ = 0;
    double total = 0;
    for (size_t t = 0; t < 60; t++) {
        encode(w, 1, en);
        const double *x = in64(w, 0);
        const double *p = phys64(w, 0);
        double sum = 0, best = -1;
        size_t arg = 0;
        for (size_t r = 0; r < 62; r++) {
            double delta;
            const double want = tracking_expected(p[0], p[1], in->angles[r], 1.0, &delta);
            assert_true(x[r] == want);
            const double old = bl_npy_get_f64(sens, t * 62 + r);
            if (fabs(delta) <= 4) {
                plateau++;
                assert_true(x[r] == 1.0);
                differ += fabs(old - 1.0) > 1e-9;
            } else {
                assert_true(fabs(x[r] - old) <= 1e-9);
            }
            sum += x[r];
            if (x[r] > best) {
                best = x[r];
                arg = r;
            }
        }
        if (t == 0) {
            assert_true(fabs(sum - 2.001662114671165) <= 1e-12);
            assert_int_equal(arg, 31);
            assert_true(x[32] == 1.0);
            assert_true(bl_npy_get_f64(sens, 32) == 0.20189651799465538);
        }
        total += sum;
        double eff[2];
        fixture_effectors(&fx, t, eff);
        finish_tick(w, eff, en);
        for (size_t k = 0; k < 3; k++)
            assert_true(bl_test_bits(p[k]) == bl_test_bits(bl_npy_get_f64(st, t * 4 + k)));
    }
    assert_int_equal(plateau, 194);
    assert_int_equal(differ, 193);
    assert_true(fabs(total - 203.9707637354179) <= 1e-9);
    const double *p = phys64(w, 0);
    assert_true(p[0] == 1.2145779290069347 && p[1] == 1.0471975511965859 && p[2] == 1);
    assert_true(fabs(bl_worlds_outcome(w, 0) - 0.7935670678448887) <= 1e-15);
    assert_int_equal(w->scored[0], 60);
    assert_int_equal(bl_worlds_status(w, 0, true), BL_TRIAL_COMPLETED);
    bl_worlds_destroy(w);
    bl_world_init_destroy(in);
    fixture_clear(&fx);
}

/* §10.1 #9: 720 no-move ticks with warm-up 2. */
static void test_tracking_reversal_and_warmup(void **state)
{
    (void)state;
    bl_world_init *in = make_tracking(PI / 2, 0, 1, 1, PI / 180, 10);
    bl_worlds *w = create(&in, 1, (int64_t[]){2000}, 2, BL_FLOAT64);
    const int32_t en[1] = {1};
    double theta = PI / 2, phi = 0, total = 0;
    for (int t = 0; t < 720; t++) {
        const double eff[2] = {0.5, 0.5};
        tick(w, eff, en);
        /* No move: theta stays put (only wrapped); phi moves one degree. */
        phi = fmod(phi + PI / 180 + PI, 2 * PI);
        if (phi < 0)
            phi += 2 * PI;
        phi -= PI;
        double e = fmod(theta - phi + PI, 2 * PI);
        if (e < 0)
            e += 2 * PI;
        if (t >= 2)
            total += cos(e - PI);
        if (t == 1) {
            assert_int_equal(w->scored[0], 0);
            assert_true(bl_worlds_outcome(w, 0) == 0.0);
        }
        assert_true(phys64(w, 0)[2] == (t < 719 ? 1.0 : -1.0));
    }
    assert_int_equal(w->scored[0], 718);
    assert_int_equal(bl_worlds_ticks(w)[0], 720);
    assert_true(fabs(bl_worlds_outcome(w, 0) - total / 718) <= 1e-15);
    assert_true(fabs(bl_worlds_outcome(w, 0) - -7.291351412039403e-05) <= 1e-15);
    /* Ticks 720..1439 then run backwards. */
    const double before = phys64(w, 0)[1];
    tick(w, (double[2]){0, 0}, en);
    assert_true(fabs(phys64(w, 0)[1] - (before - PI / 180)) <= 1e-15);
    bl_worlds_destroy(w);
    bl_world_init_destroy(in);
}

/* ---- Pong ---------------------------------------------------------------- */

static void test_pong_fixture_replay(void **state)
{
    (void)state;
    fixture fx = fixture_load("pong", "state_T", NULL);
    assert_int_equal(fx.first->shape[1], 5);
    static const int active[60] = {
        23, 22, 22, 21, 21, 20, 20, 20, 20, 20, 21, 22, 22, 22, 22, 22, 23, 24, 25, 26,
        26, 27, 27, 27, 26, 26, 26, 25, 24, 25, 26, 26, 26, 26, 25, 24, 24, 23, 24, 23,
        24, 25, 25, 25, 26, 25, 25, 26, 24, 25, 23, 25, 26, 25, 25, 26, 27, 25, 24, 24};
    const double draws[4] = {0.5118216247002567, 0.9504636963259353, 0.14415961271963373,
                             0.9486494471372439};
    const double y0 = 1 + 498 * draws[0];
    assert_true(y0 == 255.88716910072785);
    bl_world_init *in = make_pong((double[5]){995, y0, 250, -5, 5}, draws, 2, 1.0);
    bl_worlds *w = create(&in, 1, (int64_t[]){60}, 0, BL_FLOAT64);
    const int32_t en[1] = {1};
    const double *p = phys64(w, 0);
    for (size_t t = 0; t < 60; t++) {
        encode(w, 1, en);
        const double *x = in64(w, 0);
        int count = 0, at = -1;
        for (int r = 0; r < 46; r++)
            if (x[r] != 0) {
                assert_true(x[r] == 1.0);
                count++;
                at = r;
            }
        assert_int_equal(count, 1);
        assert_int_equal(at, active[t]);
        double eff[2];
        fixture_effectors(&fx, t, eff);
        finish_tick(w, eff, en);
        assert_true(bl_test_bits(p[2]) == bl_test_bits(bl_npy_get_f64(fx.first, t * 5 + 2)));
        if (t == 0) {
            assert_true(p[0] == 990 && p[1] == 260.8871691007279 && p[2] == 288.5912056652477 &&
                        p[3] == -5 && p[4] == 5);
        }
        if (t == 46)
            assert_true(p[1] < 495 && p[4] == 5);
        if (t == 47)
            assert_true(p[1] == 495 && p[4] == -5);
    }
    assert_true(p[0] == 695 && p[1] == 435 && p[2] == 332.9260800635433 && p[3] == -5 &&
                p[4] == -5);
    assert_int_equal(w->hits[0], 0);
    assert_int_equal(w->misses[0], 0);
    assert_true(bl_worlds_outcome(w, 0) == 0.0);
    assert_int_equal(w->scored[0], 60);
    bl_worlds_destroy(w);
    bl_world_init_destroy(in);
    fixture_clear(&fx);
}

/* §10.1 #11: a boundary bounce, a miss during warm-up, a reset from the
 * next draw row; then a counted hit and the draws-exhausted failure. */
static void test_pong_boundary_miss_reset_warmup(void **state)
{
    (void)state;
    const double draws[6] = {0.5, 0.5, 0.3, 0.25, 0.9, 0.75};
    bl_world_init *in = make_pong((double[5]){2, 4, 250, -5, -5}, draws, 3, 1.0);
    in->physical[5] = 1; /* past */
    bl_world_init *one = make_pong((double[5]){2, 4, 250, -5, -5}, draws, 1, 1.0);
    one->physical[5] = 1;
    bl_worlds *w = create((bl_world_init *[]){in, one}, 2, (int64_t[]){100, 100}, 1, BL_FLOAT64);
    const int32_t en[2] = {1, 1};
    tick(w, (double[4]){0.5, 0.5, 0.5, 0.5}, en);
    const double *p = phys64(w, 0);
    assert_true(p[0] == 995 && p[3] == -5 && p[5] == 0 && p[6] == 1);
    assert_true(p[1] == 1 + 498 * 0.3 && p[4] == -5);
    assert_int_equal(w->misses[0], 0); /* warm-up */
    assert_int_equal(w->scored[0], 0);
    assert_int_equal(bl_worlds_finite(w)[0], 1);
    /* Draws exhausted: a failure, not an end. */
    assert_int_equal(bl_worlds_finite(w)[1], 0);
    assert_int_equal(bl_worlds_ticks(w)[1], 1);
    assert_int_equal(bl_worlds_status(w, 1, true), BL_TRIAL_FAILED);
    bl_worlds_destroy(w);

    /* Scored window: a hit at the paddle plane (using the new paddle) and a
     * miss that resets the rally. */
    bl_world_init *h = make_pong((double[5]){121, 300, 250, -5, 5}, draws, 3, 1.0);
    w = create(&h, 1, (int64_t[]){100}, 0, BL_FLOAT64);
    /* Paddle moves +50 to 300; the ball lands at (116, 305), not yet at the
     * plane; next tick x = 111 <= 115 and |305+5-300| <= 65: a hit. */
    tick(w, (double[2]){0.5, 0}, en);
    p = phys64(w, 0);
    assert_true(p[0] == 116 && p[2] == 300);
    tick(w, (double[2]){0, 0}, en);
    assert_true(p[0] == 115 && p[3] == 5 && p[1] == 310);
    assert_int_equal(w->hits[0], 1);
    assert_int_equal(w->rally[0], 1);
    assert_int_equal(w->longest_rally[0], 1);
    assert_true(bl_worlds_outcome(w, 0) == 1.0);
    /* Send it back: run to the right wall and back to a miss with the
     * paddle kept away from the ball. */
    int guard = 0;
    while (w->misses[0] == 0 && guard++ < 1000) {
        const bool low = p[1] > 250;
        tick(w, (double[2]){low ? 0 : 1, low ? 1 : 0}, en);
    }
    assert_int_equal(w->misses[0], 1);
    assert_int_equal(w->rally[0], 0);
    assert_int_equal(w->longest_rally[0], 1);
    assert_true(bl_worlds_outcome(w, 0) == 0.5);
    assert_true(p[0] == 995 && p[6] == 1 && p[1] == 1 + 498 * 0.3);
    assert_int_equal(w->scored[0], bl_worlds_ticks(w)[0]);
    bl_worlds_destroy(w);
    bl_world_init_destroy(h);
    bl_world_init_destroy(in);
    bl_world_init_destroy(one);
}

/* §3.3: closed bins: a bearing on a bin edge lights two receptors; a ball
 * behind the paddle plane shows nothing. */
static void test_pong_bins(void **state)
{
    (void)state;
    const double draws[2] = {0.5, 0.5};
    bl_world_init *a = make_pong((double[5]){600, 250, 250, -5, 5}, draws, 1, 0.5); /* 0 deg */
    bl_world_init *b = make_pong((double[5]){200, 350, 250, -5, 5}, draws, 1, 1.0); /* 45 deg */
    bl_world_init *c = make_pong((double[5]){50, 250, 250, -5, 5}, draws, 1, 1.0);  /* behind */
    bl_world_init *d = make_pong((double[5]){100, 20, 250, -5, 5}, draws, 1, 1.0);  /* -90 */
    bl_worlds *w = create((bl_world_init *[]){a, b, c, d}, 4, (int64_t[]){9, 9, 9, 9}, 0,
                          BL_FLOAT64);
    encode(w, 1, (int32_t[]){1, 1, 1, 1});
    for (int r = 0; r < 46; r++) {
        assert_true(in64(w, 0)[r] == (r == 22 || r == 23 ? 0.5 : 0.0));
        /* 45 deg lies inside the bin of 46 (index 34) only. */
        assert_true(in64(w, 1)[r] == (r == 34 ? 1.0 : 0.0));
        assert_true(in64(w, 2)[r] == 0.0);
        assert_true(in64(w, 3)[r] == (r == 0 ? 1.0 : 0.0));
    }
    bl_worlds_destroy(w);
    bl_world_init_destroy(a);
    bl_world_init_destroy(b);
    bl_world_init_destroy(c);
    bl_world_init_destroy(d);
}

/* ---- CartPole -------------------------------------------------------------- */

/* §10.1 #10: Spike-FF-2 schedule and totals, tie and right-winning votes,
 * the single-step vector of §4.4 exactly, outcome 1 after one tick. */
static void test_cartpole_spike_ff2_votes_euler(void **state)
{
    (void)state;
    bl_world_init *in = make_cartpole(0.852, -0.007, 0.018, -0.659);
    bl_worlds *w = create((bl_world_init *[]){in, in}, 2, (int64_t[]){15000, 15000}, 0,
                          BL_FLOAT64);
    assert_int_equal(bl_worlds_frames(w), 24);
    const int32_t en[2] = {1, 1};
    double totals[2][8] = {{0}};
    for (int32_t f = 1; f <= 24; f++) {
        encode(w, f, en);
        for (size_t b = 0; b < 2; b++)
            for (int r = 0; r < 8; r++) {
                const double v = in64(w, b)[r];
                assert_true(v == 0.0 || v == 1.0);
                if (v != 0)
                    assert_int_equal((f - 1) % 3, 0);
                totals[b][r] += v;
            }
        /* World 0: identical votes (a tie); world 1: the right effector
         * wins by one frame. */
        const double eff[4] = {0.5, 0.5, f == 7 ? 0.0 : 0.5, 0.5};
        accumulate(w, eff, f, en);
    }
    const double want[8] = {0, 3, 1, 0, 0, 1, 3, 0};
    for (int r = 0; r < 8; r++)
        assert_true(totals[0][r] == want[r] && totals[1][r] == want[r]);
    const double *votes = (const double *)w->votes;
    assert_true(votes[0] == 12 && votes[1] == 12 && votes[2] == 11.5 && votes[3] == 12);
    advance(w, (double[4]){1, 0, 1, 0}, en); /* the argument is validated, not used */
    const double *p = phys64(w, 0), *q = phys64(w, 1);
    assert_true(p[0] == 0.85186 && p[1] == -0.20236778467292807 &&
                p[2] == 0.004819999999999998 && p[3] == -0.3607040818438599);
    assert_true(q[0] == 0.85186 && q[1] == 0.1878668673485777 &&
                q[2] == 0.004819999999999998 && q[3] == -0.9459612354159792);
    assert_true(bl_worlds_outcome(w, 0) == 1.0);
    assert_int_equal(w->scored[0], 1);
    assert_int_equal(bl_worlds_done(w)[0], 0);
    /* Votes restart at frame 1 of the next tick. */
    encode(w, 1, en);
    accumulate(w, (double[4]){0, 1, 0, 1}, 1, en);
    assert_true(votes[0] == 0 && votes[1] == 1);
    bl_worlds_destroy(w);
    bl_world_init_destroy(in);
}

/* §11.2: current rules from the fixture's initial state, effectors held
 * over the 24 frames: the pole falls after 14 steps. */
static void test_cartpole_fixture_replay(void **state)
{
    (void)state;
    fixture fx = fixture_load("cartpole", "draws", NULL);
    bl_world_init *in = make_cartpole(bl_npy_get_f64(fx.first, 0), bl_npy_get_f64(fx.first, 1),
                                      bl_npy_get_f64(fx.first, 2), bl_npy_get_f64(fx.first, 3));
    assert_true(in->physical[0] == 0.856498863483477);
    bl_worlds *w = create(&in, 1, (int64_t[]){15000}, 0, BL_FLOAT64);
    const int32_t en[1] = {1};
    const double *p = phys64(w, 0);
    double spikes[8] = {0};
    size_t t = 0;
    for (; t < 200 && !bl_worlds_done(w)[0]; t++) {
        double eff[2];
        fixture_effectors(&fx, t, eff);
        for (int32_t f = 1; f <= 24; f++) {
            encode(w, f, en);
            if (t == 0)
                for (int r = 0; r < 8; r++)
                    spikes[r] += in64(w, 0)[r];
            accumulate(w, eff, f, en);
        }
        advance(w, eff, en);
        if (t == 0)
            assert_true(fabs(p[0] - 0.8568908198189048) <= 1e-12 &&
                        fabs(p[1] - 0.21495967111990955) <= 1e-12 &&
                        fabs(p[2] - -0.016319091994394352) <= 1e-12 &&
                        fabs(p[3] - -0.2628883911193767) <= 1e-12);
        if (t == 1)
            assert_true(fabs(p[0] - 0.861190013241303) <= 1e-12 &&
                        fabs(p[1] - 0.4103107138586656) <= 1e-12 &&
                        fabs(p[2] - -0.021576859816781885) <= 1e-12 &&
                        fabs(p[3] - -0.5606735378324361) <= 1e-12);
    }
    const double want[8] = {0, 3, 0, 1, 1, 0, 0, 1};
    for (int r = 0; r < 8; r++)
        assert_true(spikes[r] == want[r]);
    assert_int_equal(t, 14);
    assert_int_equal(bl_worlds_ticks(w)[0], 14);
    assert_true(bl_worlds_outcome(w, 0) == 14.0);
    assert_true(fabs(p[0] - 0.9841264330797936) <= 1e-12 &&
                fabs(p[1] - 0.8144774929239116) <= 1e-12 &&
                fabs(p[2] - -0.2155589130638156) <= 1e-12 &&
                fabs(p[3] - -1.4830914982211174) <= 1e-12);
    assert_int_equal(bl_worlds_status(w, 0, true), BL_TRIAL_COMPLETED);
    /* Done: zeros, no more ticks. */
    encode(w, 1, en);
    for (int r = 0; r < 8; r++)
        assert_true(in64(w, 0)[r] == 0);
    advance(w, (double[2]){0, 1}, en);
    assert_int_equal(bl_worlds_ticks(w)[0], 14);
    bl_worlds_destroy(w);
    bl_world_init_destroy(in);
    fixture_clear(&fx);
}

/* The 15000-step mission ends the episode even upright. */
static void test_cartpole_mission_end(void **state)
{
    (void)state;
    bl_world_init *in = make_cartpole(0, 0, 0, 0);
    bl_worlds *w = create(&in, 1, (int64_t[]){15000}, 0, BL_FLOAT64);
    w->ticks[0] = 14999;
    encode(w, 1, (int32_t[]){1});
    for (int r = 0; r < 8; r++)
        assert_true(in64(w, 0)[r] == 0); /* v == 0 emits nothing */
    tick(w, (double[2]){0.5, 0.5}, (int32_t[]){1});
    assert_int_equal(bl_worlds_done(w)[0], 1);
    assert_true(bl_worlds_outcome(w, 0) == 15000.0);
    bl_worlds_destroy(w);
    bl_world_init_destroy(in);
}

/* ---- finite rules (§1.3) ---------------------------------------------------- */

static void test_finite_rules(void **state)
{
    (void)state;
    bl_world_init *tr = make_tracking(1, 2, 1, 1, PI / 180, 10);
    bl_worlds *w = create((bl_world_init *[]){tr, tr, tr, tr, tr, tr}, 6,
                          (int64_t[]){9, 9, 9, 9, 9, 9}, 0, BL_FLOAT64);
    const int32_t en[6] = {1, 1, 1, 1, 1, 0};
    /* World 0: an infinite gain (creation rejects it; poked here) fails at
     * encode; the inactive world 5 with the same gain does not. */
    ((double *)w->params)[0] = INFINITY;
    ((double *)w->params)[5 * 4] = INFINITY;
    encode(w, 1, en);
    assert_int_equal(bl_worlds_finite(w)[0], 0);
    assert_int_equal(bl_worlds_finite(w)[5], 1);
    assert_true(in64(w, 5)[0] == 0);
    /* Accumulate: out-of-range values fail the world but are still stored. */
    const double eff[12] = {0.5, 0.5, 1.5, 0, 0, -0.25, NAN, 0, 0, 1, 2, 2};
    accumulate(w, eff, 1, en);
    const int32_t *fin = bl_worlds_finite(w);
    assert_true(fin[0] == 0 && fin[1] == 0 && fin[2] == 0 && fin[3] == 0 && fin[4] == 1 &&
                fin[5] == 1);
    const double *last = (const double *)w->last;
    assert_true(last[0] == 0 && last[2] == 1.5 && last[5] == -0.25 && isnan(last[6]));
    assert_true(last[8] == 0 && last[9] == 1 && last[10] == 0);
    /* Failed worlds never advance and encode zeros from now on. */
    advance(w, eff, en);
    assert_true(bl_worlds_ticks(w)[0] == 0 && bl_worlds_ticks(w)[1] == 0);
    assert_int_equal(bl_worlds_ticks(w)[4], 1);
    encode(w, 1, en);
    for (int r = 0; r < 62; r++)
        assert_true(in64(w, 0)[r] == 0 && in64(w, 1)[r] == 0);
    /* Advance alone checks its effectors: the tick is not counted. */
    advance(w, (double[12]){0, 0, 0, 0, 0, 0, 0, 0, INFINITY, 0, 0, 0}, en);
    assert_int_equal(fin[4], 0);
    assert_int_equal(bl_worlds_ticks(w)[4], 1);
    const double theta = phys64(w, 4)[0];
    advance(w, (double[12]){0}, en);
    assert_true(phys64(w, 4)[0] == theta);
    assert_int_equal(bl_worlds_status(w, 4, true), BL_TRIAL_FAILED);
    bl_worlds_destroy(w);

    /* A non-finite physical state after a step fails the world, counted. */
    bl_world_init *cp = make_cartpole(0, 0, 0, 0);
    w = create(&cp, 1, (int64_t[]){15000}, 0, BL_FLOAT64);
    ((double *)w->physical)[0] = INFINITY;
    int frames = 0;
    for (int32_t f = 1; f <= 24; f++) {
        encode(w, f, (int32_t[]){1});
        frames += bl_worlds_finite(w)[0];
        accumulate(w, (double[2]){1, 0}, f, (int32_t[]){1});
    }
    assert_int_equal(frames, 24);
    /* x = inf: 8 spikes on the positive x channel (clamped, no UB). */
    advance(w, (double[2]){1, 0}, (int32_t[]){1});
    assert_int_equal(bl_worlds_finite(w)[0], 0);
    assert_int_equal(bl_worlds_ticks(w)[0], 1);
    bl_worlds_destroy(w);
    bl_world_init_destroy(cp);
    bl_world_init_destroy(tr);
}

/* ---- float32 (§10.1 #12) ---------------------------------------------------- */

static void test_float32_storage_and_nan_advance(void **state)
{
    (void)state;
    bl_world_init *tr = make_tracking(0.3, 2.9, -1, 0.75, PI / 180, 10);
    bl_worlds *w = create((bl_world_init *[]){tr, tr}, 2, (int64_t[]){50, 50}, 0, BL_FLOAT32);
    assert_int_equal(bl_worlds_dtype(w), BL_FLOAT32);
    const int32_t en[2] = {1, 1};
    for (int t = 0; t < 5; t++) {
        encode(w, 1, en);
        const float *x = (const float *)bl_worlds_inputs(w);
        const float *p = (const float *)w->physical;
        const float *ang = (const float *)w->angles;
        /* Every intermediate in float. */
        for (int r = 0; r < 62; r++) {
            const float c = (float)(180.0 / PI);
            const float a = p[0] * c + ang[r];
            const float q = p[1] * c;
            float m = fmodf(a - q + 180.0f, 360.0f);
            if (m < 0)
                m = m + 360.0f;
            const float d = m - 180.0f;
            float v = 0.75f;
            if (fabsf(d) > 4.0f)
                v = v * expf(((-d) * d) / 10.0f);
            assert_true(x[r] == v);
        }
        const float eff[4] = {0.75f, 0.125f, 0.25f, 0.5f};
        const float th = p[0], ph = p[1];
        finish_tick(w, eff, en);
        const float turn = 10.0f * (eff[0] - eff[1]) * (float)(PI / 180.0);
        const float pi = (float)PI;
        float nt = fmodf(th + turn + pi, pi + pi);
        if (nt < 0)
            nt = nt + (pi + pi);
        assert_true(p[0] == nt - pi);
        float np = fmodf(ph + (-1.0f) * (float)(PI / 180) + pi, pi + pi);
        if (np < 0)
            np = np + (pi + pi);
        assert_true(p[1] == np - pi);
    }
    /* A NaN effector at advance clears finite and does not count the tick. */
    const float bad[4] = {NAN, 0, 0.5f, 0.5f};
    advance(w, bad, en);
    assert_int_equal(bl_worlds_finite(w)[0], 0);
    assert_int_equal(bl_worlds_ticks(w)[0], 5);
    assert_int_equal(bl_worlds_ticks(w)[1], 6);
    bl_snapshot *s = NULL;
    bl_error err = {0};
    assert_int_equal(bl_worlds_snapshot(w, 1, &s, &err), BL_OK);
    assert_true(snap_value(s, "theta", 0) == (double)((const float *)w->physical)[8]);
    assert_true(snap_value(s, "outcome", 0) == (double)((const float *)w->outcome)[1]);
    bl_snapshot_destroy(s);
    bl_worlds_destroy(w);
    bl_world_init_destroy(tr);

    /* float32 CartPole: the same tie rule and single step in float. */
    bl_world_init *cp = make_cartpole(0.852, -0.007, 0.018, -0.659);
    w = create(&cp, 1, (int64_t[]){15000}, 0, BL_FLOAT32);
    tick(w, (float[2]){0.5f, 0.5f}, (int32_t[]){1});
    const float x0 = 0.852f, xd = -0.007f, th = 0.018f, thd = -0.659f;
    const float c = cosf(th), sn = sinf(th);
    const float temp = (-10.0f + ((0.05f * thd) * thd) * sn) / 1.1f;
    const float ta =
        (9.8f * sn - c * temp) / (0.5f * ((float)(4.0 / 3.0) - ((0.1f * c) * c) / 1.1f));
    const float xa = temp - ((0.05f * ta) * c) / 1.1f;
    const float *p = (const float *)w->physical;
    assert_true(p[0] == x0 + 0.02f * xd && p[1] == xd + 0.02f * xa && p[2] == th + 0.02f * thd &&
                p[3] == thd + 0.02f * ta);
    bl_worlds_destroy(w);
    bl_world_init_destroy(cp);
}

/* ---- snapshots ------------------------------------------------------------- */

static void test_snapshots(void **state)
{
    (void)state;
    static const char *const common[] = {
        "physical", "inputs", "votes", "last", "evidence", "ticks", "round", "done", "finite",
        "outcome", "total", "scored", "hits", "misses", "rally", "longest_rally", "decisions",
        "ties", "stimuli", "lengths", "response_start", "response_end", "labels", "rounds",
        "reversal", "feedback", "params", "angles", "draws", "draw_lengths", "tick",
        "raw_outcome"};
    bl_world_init *tr = make_tracking(1, 2, 1, 1, PI / 180, 10);
    bl_world_init *pg =
        make_pong((double[5]){995, 250, 250, -5, 5}, (double[4]){0.5, 0.5, 0.1, 0.9}, 2, 1);
    bl_world_init *cp = make_cartpole(0.1, 0.2, 0.03, 0.4);
    bl_world_init *dc = make_delayed_cue(2, 3, 2, 2);
    bl_world_init *dc2 = make_delayed_cue(2, 5, 2, 1);
    bl_world_init *inits[4][2] = {{tr, tr}, {pg, pg}, {cp, cp}, {dc, dc2}};
    for (int fam = 0; fam < 4; fam++) {
        bl_worlds *w = create(inits[fam], 2, (int64_t[]){30, 30}, 0, BL_FLOAT64);
        const double eff[4] = {0.75, 0.25, 0.25, 0.5};
        tick(w, eff, (int32_t[]){0, 1});
        bl_snapshot *s = NULL;
        bl_error err = {0};
        assert_int_equal(bl_worlds_snapshot(w, 2, &s, &err), BL_EVALUE);
        assert_null(s);
        assert_int_equal(bl_worlds_snapshot(w, 1, &s, &err), BL_OK);
        for (size_t k = 0; k < sizeof common / sizeof common[0]; k++)
            assert_non_null(bl_snapshot_get(s, common[k]));
        assert_true(snap_value(s, "tick", 0) == 1 && snap_value(s, "ticks", 0) == 1);
        assert_true(bl_snapshot_get(s, "ticks")->integer);
        assert_false(bl_snapshot_get(s, "physical")->integer);
        assert_int_equal(bl_snapshot_get(s, "inputs")->shape[0], bl_worlds_inputs_width(w));
        const double *p = phys64(w, 1);
        for (int i = 0; i < 8; i++)
            assert_true(snap_value(s, "physical", (size_t)i) == p[i]);
        const double raw = snap_value(s, "raw_outcome", 0), out = snap_value(s, "outcome", 0);
        assert_true((isnan(raw) && isnan(out)) || raw == out);
        if (fam == 0) {
            assert_true(snap_value(s, "theta", 0) == p[0] && snap_value(s, "phi", 0) == p[1] &&
                        snap_value(s, "direction", 0) == p[2]);
            assert_true(snap_value(s, "angles", 31) == -90.0);
            assert_true(snap_value(s, "last", 0) == 0.25 && snap_value(s, "last", 1) == 0.5);
        } else if (fam == 1) {
            assert_true(snap_value(s, "ball_x", 0) == 990 && snap_value(s, "ball_y", 0) == 255 &&
                        snap_value(s, "paddle_y", 0) == p[2] && snap_value(s, "vx", 0) == -5 &&
                        snap_value(s, "vy", 0) == 5);
            assert_true(snap_value(s, "width", 0) == 1000 && snap_value(s, "height", 0) == 500 &&
                        snap_value(s, "paddle_x", 0) == 100 &&
                        snap_value(s, "paddle_h", 0) == 100 &&
                        snap_value(s, "paddle_min_y", 0) == 50 &&
                        snap_value(s, "paddle_max_y", 0) == 450 &&
                        snap_value(s, "ball_r", 0) == 15);
            assert_true(snap_value(s, "draws", 3) == 0.9 && snap_value(s, "draw_lengths", 0) == 2);
        } else if (fam == 2) {
            assert_true(snap_value(s, "x", 0) == p[0] && snap_value(s, "x_dot", 0) == p[1] &&
                        snap_value(s, "theta", 0) == p[2] && snap_value(s, "theta_dot", 0) == p[3]);
            assert_true(snap_value(s, "max_x", 0) == 2.4 && snap_value(s, "pole_length", 0) == 0.5);
            assert_true(snap_value(s, "votes", 0) == 6 && snap_value(s, "votes", 1) == 12);
            assert_true(snap_value(s, "params", 2) == 0.2095);
        } else {
            /* Padded to the cohort's longest episode; the world's own length. */
            const bl_snapshot_array *st = bl_snapshot_get(s, "stimuli");
            assert_int_equal(st->shape[0], 9);
            assert_int_equal(st->shape[1], 3);
            assert_true(snap_value(s, "lengths", 0) == 9 && snap_value(s, "labels", 0) == 1);
            assert_true(snap_value(s, "response_start", 0) == 7 &&
                        snap_value(s, "response_end", 0) == 9 &&
                        snap_value(s, "round_bounds", 1) == 9);
            assert_true(isnan(snap_value(s, "outcome", 0)));
            assert_true(snap_value(s, "inputs", 0) == 1.0); /* cue 1 encoded at tick 0 */
            assert_null(bl_snapshot_get(s, "theta"));
        }
        bl_snapshot_destroy(s);
        bl_worlds_destroy(w);
    }
    bl_world_init_destroy(tr);
    bl_world_init_destroy(pg);
    bl_world_init_destroy(cp);
    bl_world_init_destroy(dc);
    bl_world_init_destroy(dc2);
}

/* ---- an independent reference (Python, standard library) ----------------- */

/* The spec's per-tick rules written once more in plain Python (whose math
 * module is the platform libm, as in the reference), fed the exact
 * effectors the cohort used; every receptor, state value and counter must
 * match bit for bit over long runs that cross the Tracking reversals, Pong
 * hits, misses and resets in and after warm-up, and CartPole falls. */
static const char reference_py[] =
    "import sys, math\n"
    "def wrap(v, h): return ((v + h) % (2 * h)) - h\n"
    "H = float.hex\n"
    "lines = iter(open(sys.argv[1]).read().split('\\n'))\n"
    "out = []\n"
    "deg = 180.0 / math.pi\n"
    "for head in lines:\n"
    "    if not head: continue\n"
    "    f = head.split(); kind = f[0]\n"
    "    nums = [float.fromhex(v) for v in f[1:-2]]; warm = int(f[-2]); T = int(f[-1])\n"
    "    if kind == 'tracking':\n"
    "        th, ph, d, gain, speed, amp = nums\n"
    "        ang = [e + (-60.0 + 4.0 * k) for e in (30.0, -30.0) for k in range(31)]\n"
    "        total = 0.0; scored = 0; oc = 0.0\n"
    "        for t in range(T):\n"
    "            e0, e1 = [float.fromhex(v) for v in next(lines).split()]\n"
    "            ins = []\n"
    "            for a in ang:\n"
    "                dl = wrap((th * deg + a) - ph * deg, 180.0)\n"
    "                v = gain\n"
    "                if abs(dl) > 4: v = v * math.exp(((-dl) * dl) / 10)\n"
    "                ins.append(v)\n"
    "            th = wrap(th + amp * (e0 - e1) * (math.pi / 180), math.pi)\n"
    "            ph = wrap(ph + d * speed, math.pi)\n"
    "            if (t + 1) % 720 == 0: d = -d\n"
    "            if t >= warm:\n"
    "                total += math.cos(wrap(th - ph, math.pi)); scored += 1; oc = total / scored\n"
    "            out.append(' '.join(H(v) for v in ins + [th, ph, d, oc, float(scored)]))\n"
    "    elif kind == 'pong':\n"
    "        x, y, pd, vx, vy, gain = nums[:6]; dr = nums[6:]; K = len(dr) // 2\n"
    "        past = 0.0; idx = 0; hits = misses = rally = longest = scored = 0; oc = 0.0; ok = 1\n"
    "        for t in range(T):\n"
    "            e0, e1 = [float.fromhex(v) for v in next(lines).split()]\n"
    "            ins = [0.0] * 46\n"
    "            beta = math.atan2(y - pd, x - 100.0) * deg\n"
    "            if -90 <= beta <= 90:\n"
    "                for r in range(46):\n"
    "                    if abs(wrap(beta - (-90.0 + 4.0 * r), 180.0)) <= 2: ins[r] = gain\n"
    "            pd = min(450.0, max(50.0, pd + 100 * (e0 - e1)))\n"
    "            x = x + vx; y = y + vy; hit = miss = 0\n"
    "            if y <= 5: y = 5.0; vy = abs(vy)\n"
    "            elif y >= 495: y = 495.0; vy = -abs(vy)\n"
    "            if x >= 995: x = 995.0; vx = -abs(vx); past = 0.0\n"
    "            if vx < 0 and past == 0 and x <= 115:\n"
    "                if abs(y - pd) <= 65: x = 115.0; vx = abs(vx); hit = 1\n"
    "                else: past = 1.0\n"
    "            if x < 0:\n"
    "                miss = 1; k = idx + 1\n"
    "                if k < K:\n"
    "                    x = 995.0; y = 1 + 498 * dr[2 * k]; vx = -5.0; past = 0.0\n"
    "                    vy = 5.0 if dr[2 * k + 1] >= 0.5 else -5.0; idx = k\n"
    "                else: ok = 0\n"
    "            if t >= warm:\n"
    "                hits += hit; misses += miss\n"
    "                if miss: rally = 0\n"
    "                if hit: rally += 1; longest = max(longest, rally)\n"
    "                oc = hits / (hits + misses) if hits + misses > 0 else 0.0\n"
    "                scored += 1\n"
    "            out.append(' '.join(H(float(v)) for v in ins + [x, y, pd, vx, vy, past, idx,\n"
    "                       hits, misses, rally, longest, scored, oc, ok]))\n"
    "    else:\n"
    "        st = nums[:4]; sc = (2.4, 2.0, 0.2095, 2.0)\n"
    "        for t in range(T):\n"
    "            votes = [0.0, 0.0]; spikes = [0.0] * 8\n"
    "            for fr in range(1, 25):\n"
    "                e0, e1 = [float.fromhex(v) for v in next(lines).split()]\n"
    "                slot = (fr - 1) // 3 + 1 if (fr - 1) % 3 == 0 else 0\n"
    "                for o in range(4):\n"
    "                    v = st[o]; n = min(8, max(0, int(math.ceil((8 * abs(v)) / sc[o]))))\n"
    "                    if slot > 0 and slot <= n: spikes[2 * o + (1 if v > 0 else 0)] += 1\n"
    "                votes[0] += e0; votes[1] += e1\n"
    "            F = 10.0 if votes[1] > votes[0] else -10.0\n"
    "            x, xd, th, thd = st\n"
    "            c = math.cos(th); s = math.sin(th)\n"
    "            temp = (F + ((0.05 * thd) * thd) * s) / 1.1\n"
    "            ta = (9.8 * s - c * temp) / (0.5 * (4.0 / 3.0 - ((0.1 * c) * c) / 1.1))\n"
    "            xa = temp - ((0.05 * ta) * c) / 1.1\n"
    "            st = [x + 0.02 * xd, xd + 0.02 * xa, th + 0.02 * thd, thd + 0.02 * ta]\n"
    "            done = abs(st[0]) > 2.4 or abs(st[2]) > 0.2095 or t + 1 >= 15000\n"
    "            out.append(' '.join(H(float(v)) for v in spikes + st + votes + [t + 1, done]))\n"
    "sys.stdout.write('\\n'.join(out) + '\\n')\n";

/* xorshift64*: effectors for the reference runs. */
static double rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

typedef struct ref_expect {
    size_t rows, cols;
    double *v; /* rows * cols, what the cohort computed */
} ref_expect;

static void ref_put(ref_expect *e, size_t row, size_t col, double v)
{
    assert_true(row < e->rows && col < e->cols);
    e->v[row * e->cols + col] = v;
}

/* One tick of the one-frame world 0 under `eff`, whose effectors go to the
 * reference's input `in` and whose receptors to row t of e. */
static void reference_tick(bl_worlds *w, FILE *in, const double eff[2], ref_expect *e, size_t t)
{
    fprintf(in, "%a %a\n", eff[0], eff[1]);
    encode(w, 1, (int32_t[]){1});
    for (size_t r = 0; r < bl_worlds_inputs_width(w); r++)
        ref_put(e, t, r, in64(w, 0)[r]);
    finish_tick(w, eff, (int32_t[]){1});
}

/* Any python3, else the test is skipped (and fails under CI). */
static const char *python_or_skip(void)
{
    const char *py = bl_test_python_plain();
    if (!py) {
        bl_test_missing("python3");
        skip();
    }
    return py;
}

static void test_python_reference_dynamics(void **state)
{
    (void)state;
    const char *py = python_or_skip();
    char *dir = bl_test_mkdtemp();
    char path[4096], script[4096], cmd[16384];
    snprintf(path, sizeof path, "%s/runs.txt", dir);
    snprintf(script, sizeof script, "%s/ref.py", dir);
    FILE *fs = fopen(script, "w");
    assert_non_null(fs);
    fputs(reference_py, fs);
    fclose(fs);
    FILE *in = fopen(path, "w");
    assert_non_null(in);
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    enum { TT = 1500, TP = 4000, TC = 300, NC = 6 };
    ref_expect et = {TT, 67, calloc((size_t)TT * 67, sizeof(double))};
    ref_expect ep = {TP, 60, calloc((size_t)TP * 60, sizeof(double))};
    ref_expect ec = {NC * TC, 16, calloc((size_t)NC * TC * 16, sizeof(double))};
    size_t crow[NC] = {0};
    assert_true(et.v && ep.v && ec.v);

    /* Tracking: warm-up 5, the stimulus reverses at ticks 719 and 1439. */
    {
        bl_world_init *ti = make_tracking(5.1, 0.3, 1, 0.8, 0.021, 7.5);
        bl_worlds *w = create(&ti, 1, (int64_t[]){TT}, 5, BL_FLOAT64);
        fprintf(in, "tracking %a %a %a %a %a %a 5 %d\n", 5.1, 0.3, 1.0, 0.8, 0.021, 7.5, TT);
        for (size_t t = 0; t < TT; t++) {
            const double eff[2] = {rnd(&seed), rnd(&seed)};
            reference_tick(w, in, eff, &et, t);
            for (size_t k = 0; k < 3; k++)
                ref_put(&et, t, 62 + k, phys64(w, 0)[k]);
            ref_put(&et, t, 65, bl_worlds_outcome(w, 0));
            ref_put(&et, t, 66, w->scored[0]);
        }
        assert_true(phys64(w, 0)[2] == 1.0); /* flipped twice */
        bl_worlds_destroy(w);
        bl_world_init_destroy(ti);
    }
    /* Pong: a noisy ball follower that hits and misses; warm-up 300. */
    {
        double *draws = calloc(2 * (TP + 1), sizeof(double));
        assert_non_null(draws);
        for (size_t i = 0; i < 2 * (TP + 1); i++)
            draws[i] = rnd(&seed);
        const double s0[5] = {995, 1 + 498 * draws[0], 250, -5, draws[1] >= 0.5 ? 5 : -5};
        bl_world_init *pi = make_pong(s0, draws, TP + 1, 0.6);
        bl_worlds *w = create(&pi, 1, (int64_t[]){TP}, 300, BL_FLOAT64);
        fprintf(in, "pong %a %a %a %a %a %a", s0[0], s0[1], s0[2], s0[3], s0[4], 0.6);
        for (size_t i = 0; i < 2 * (TP + 1); i++)
            fprintf(in, " %a", draws[i]);
        fprintf(in, " 300 %d\n", TP);
        const double *p = phys64(w, 0);
        for (size_t t = 0; t < TP; t++) {
            /* Every third stretch of 400 ticks the paddle flees the ball. */
            double d = (p[1] - p[2]) / 100 + (rnd(&seed) - 0.5) * 1.5;
            if ((t / 400) % 3 == 2)
                d = -d;
            d = d > 1 ? 1 : d < -1 ? -1 : d;
            const double eff[2] = {d > 0 ? d : 0, d < 0 ? -d : 0};
            reference_tick(w, in, eff, &ep, t);
            for (size_t k = 0; k < 7; k++)
                ref_put(&ep, t, 46 + k, p[k]);
            const int32_t c[5] = {w->hits[0], w->misses[0], w->rally[0], w->longest_rally[0],
                                  w->scored[0]};
            for (size_t k = 0; k < 5; k++)
                ref_put(&ep, t, 53 + k, c[k]);
            ref_put(&ep, t, 58, bl_worlds_outcome(w, 0));
            ref_put(&ep, t, 59, bl_worlds_finite(w)[0]);
        }
        assert_true(w->hits[0] > 5 && w->misses[0] > 5 && w->longest_rally[0] >= 2);
        bl_worlds_destroy(w);
        bl_world_init_destroy(pi);
        free(draws);
    }
    /* CartPole: a cohort of six with per-frame effectors from a noisy
     * balancing rule (random for half of them), each run to its fall or
     * the horizon; finished worlds are disabled as the runner does. */
    {
        bl_world_init *ci[NC];
        for (size_t b = 0; b < NC; b++)
            ci[b] = make_cartpole((rnd(&seed) - 0.5) * 2.4, (rnd(&seed) - 0.5) * 0.1,
                                  (rnd(&seed) - 0.5) * 0.2, (rnd(&seed) - 0.5) * 0.1);
        bl_worlds *w = create(ci, NC, (int64_t[]){TC, TC, TC, TC, TC, TC}, 0, BL_FLOAT64);
        double *frames = calloc((size_t)NC * TC * 24 * 2, sizeof(double));
        assert_non_null(frames);
        int32_t en[NC];
        for (size_t t = 0; t < TC; t++) {
            double spikes[NC][8] = {{0}};
            for (size_t b = 0; b < NC; b++)
                en[b] = !bl_worlds_done(w)[b];
            for (int32_t f = 1; f <= 24; f++) {
                double eff[2 * NC];
                encode(w, f, en);
                for (size_t b = 0; b < NC; b++) {
                    const double *p = phys64(w, b);
                    const bool right = (80 * p[2] + 18 * p[3] + p[0] + 2 * p[1] >= 0) !=
                                       (rnd(&seed) < (b < 3 ? 0.2 : 0.5));
                    eff[2 * b] = right ? rnd(&seed) * 0.5 : 0.5 + rnd(&seed) * 0.5;
                    eff[2 * b + 1] = right ? 0.5 + rnd(&seed) * 0.5 : rnd(&seed) * 0.5;
                    double *slot = frames + ((b * TC + t) * 24 + (size_t)(f - 1)) * 2;
                    slot[0] = eff[2 * b];
                    slot[1] = eff[2 * b + 1];
                    for (int r = 0; r < 8; r++)
                        spikes[b][r] += in64(w, b)[r];
                }
                accumulate(w, eff, f, en);
                if (f == 24)
                    advance(w, eff, en);
            }
            for (size_t b = 0; b < NC; b++) {
                if (!en[b])
                    continue;
                ref_expect row = {1, 16, ec.v + (b * TC + crow[b]) * 16};
                for (size_t r = 0; r < 8; r++)
                    ref_put(&row, 0, r, spikes[b][r]);
                for (size_t k = 0; k < 4; k++)
                    ref_put(&row, 0, 8 + k, phys64(w, b)[k]);
                ref_put(&row, 0, 12, ((const double *)w->votes)[2 * b]);
                ref_put(&row, 0, 13, ((const double *)w->votes)[2 * b + 1]);
                ref_put(&row, 0, 14, bl_worlds_outcome(w, b));
                ref_put(&row, 0, 15, bl_worlds_done(w)[b]);
                crow[b]++;
            }
        }
        int fell = 0;
        for (size_t b = 0; b < NC; b++) {
            fell += bl_worlds_done(w)[b];
            assert_int_equal((size_t)bl_worlds_ticks(w)[b], crow[b]);
            fprintf(in, "cartpole %a %a %a %a 0 %zu\n", ci[b]->physical[0], ci[b]->physical[1],
                    ci[b]->physical[2], ci[b]->physical[3], crow[b]);
            for (size_t t = 0; t < crow[b]; t++)
                for (size_t f = 0; f < 24; f++) {
                    const double *slot = frames + ((b * TC + t) * 24 + f) * 2;
                    fprintf(in, "%a %a\n", slot[0], slot[1]);
                }
            bl_world_init_destroy(ci[b]);
        }
        /* Half the cohort balances (noisy rule), half pushes at random. */
        assert_true(fell >= 3 && fell < NC);
        free(frames);
        bl_worlds_destroy(w);
    }
    fclose(in);

    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", py, script, path);
    FILE *pipe = popen(cmd, "r");
    assert_non_null(pipe);
    static char line[1 << 16];
    size_t row = 0, mismatches = 0;
    const size_t nrows = TT + TP;
    size_t crow_total = 0;
    for (size_t b = 0; b < NC; b++)
        crow_total += crow[b];
    while (fgets(line, sizeof line, pipe)) {
        ref_expect *e;
        size_t r;
        if (row < TT) {
            e = &et;
            r = row;
        } else if (row < nrows) {
            e = &ep;
            r = row - TT;
        } else {
            /* CartPole rows come world by world. */
            size_t k = row - nrows, b = 0;
            while (b < NC && k >= crow[b])
                k -= crow[b++];
            assert_true(b < NC);
            e = &ec;
            r = b * TC + k;
        }
        char *s = line;
        for (size_t c = 0; c < e->cols; c++) {
            char *end;
            const double v = strtod(s, &end);
            assert_true(end != s);
            s = end;
            if (bl_test_bits(v) != bl_test_bits(e->v[r * e->cols + c]) && mismatches++ < 5)
                print_message("row %zu col %zu: reference %.17g, cohort %.17g\n", row, c, v,
                              e->v[r * e->cols + c]);
        }
        row++;
    }
    assert_int_equal(pclose(pipe), 0);
    assert_int_equal(row, nrows + crow_total);
    assert_int_equal(mismatches, 0);
    free(et.v);
    free(ep.v);
    free(ec.v);
    bl_test_rmtree(dir);
    free(dir);
}

/* ---- prepared probes of every family ------------------------------------ */

/* Worlds from prepare (§7.4's development seeds), answered by an effector
 * rule that peeks at the labels (only a test may): the right answer scores
 * 1, the wrong one 0, silence decides 1 everywhere; every world ends by
 * itself at its own length, in both dtypes. */
static void test_prepared_probes_answered(void **state)
{
    (void)state;
    for (int k = BL_TASK_DELAYED_CUE; k < BL_TASK_COUNT; k++)
        for (int d = 0; d < 2; d++) {
            const bl_task_kind kind = (bl_task_kind)k;
            const bl_dtype dt = d ? BL_FLOAT32 : BL_FLOAT64;
            bl_task_options o;
            bl_task_definition def;
            bl_test_task_defaults(kind, &o, &def);
            bl_gen g;
            bl_test_world_gen(&g, 0, "development", bl_task_name(kind), 0, 0);
            bl_world_init *wi = bl_test_prepare(&o, &g, def.default_horizon);
            bl_world_init *ins[3] = {wi, wi, wi};
            const int64_t h = def.default_horizon;
            bl_worlds *w = create(ins, 3, (int64_t[]){h, h, h}, 0, dt);
            const int32_t en[3] = {1, 1, 1};
            int64_t t = 0;
            for (; t < h && !bl_worlds_done(w)[0]; t++) {
                /* The label of the round in progress (the last one after
                 * the final decision). */
                size_t r = (size_t)w->round[0];
                if (r >= wi->rounds)
                    r = wi->rounds - 1;
                const int label = wi->labels[r];
                const double right[2] = {label == 1, label == 2};
                const double e[6] = {right[0], right[1], right[1], right[0], 0, 0};
                if (dt == BL_FLOAT32) {
                    float f[6];
                    for (int i = 0; i < 6; i++)
                        f[i] = (float)e[i];
                    tick(w, f, en);
                } else {
                    tick(w, e, en);
                }
            }
            assert_int_equal(t, (int64_t)wi->length);
            int ones = 0, window = kind == BL_TASK_REVERSAL_ADAPTATION ? 16 : 1;
            const int first = kind == BL_TASK_REVERSAL_ADAPTATION ? wi->reversal - 1 : 0;
            for (int j = first; j < first + window; j++)
                ones += wi->labels[j] == 1;
            for (size_t b = 0; b < 3; b++) {
                assert_int_equal(bl_worlds_done(w)[b], 1);
                assert_int_equal(bl_worlds_finite(w)[b], 1);
                assert_int_equal(bl_worlds_ticks(w)[b], (int32_t)wi->length);
                assert_int_equal(w->round[b], (int32_t)wi->rounds);
                assert_int_equal(w->scored[b], (int32_t)wi->length);
                assert_int_equal(bl_worlds_status(w, b, true), BL_TRIAL_COMPLETED);
            }
            assert_true(bl_worlds_outcome(w, 0) == 1.0);
            assert_true(bl_worlds_outcome(w, 1) == 0.0);
            assert_true(bl_worlds_outcome(w, 2) == (double)ones / window);
            for (size_t j = 0; j < wi->rounds; j++)
                assert_int_equal(w->ties[2 * w->max_rounds + j], 1);
            bl_worlds_destroy(w);
            bl_world_init_destroy(wi);
            bl_task_options_clear(&o);
        }
}

/* ---- end to end: the calibration run's trial 0 (§7.4) ------------------ */

/* prepare (part of this library) builds the world from its world seed;
 * the reference_null rule of §6.2 (a few lines, written out here) acts from
 * the control stream; the cohort must reproduce the frozen trial-0 null
 * scores: Pong 8/29 and CartPole 39 exactly, Tracking to a few ulp (the
 * platform cos inside the running sum, §0.2). */
static double null_trial0(const bl_test_block0 *v, bl_dtype dt)
{
    const bl_task_kind kind = bl_test_task_kind(v->task);
    bl_gen wg, cg;
    char hex[65];
    bl_test_calibration_gen(&wg, "world", v->task, 0, hex);
    assert_string_equal(hex, v->world);
    bl_test_calibration_gen(&cg, "control", v->task, 0, NULL);
    bl_task_options o;
    bl_task_definition d;
    bl_test_task_defaults(kind, &o, &d);
    bl_world_init *wi = bl_test_prepare(&o, &wg, d.default_horizon);
    for (int i = 0; i < 4; i++)
        assert_true(wi->physical[i] == v->physical[i]);
    bl_worlds *w = create(&wi, 1, (int64_t[]){d.default_horizon}, 0, dt);
    const int32_t en[1] = {1};
    for (int64_t t = 0; t < d.default_horizon && !bl_worlds_done(w)[0]; t++) {
        const double u = bl_gen_random(&cg);
        if (t < 3)
            assert_true(u == v->u[t]);
        double e0, e1;
        if (kind == BL_TASK_CARTPOLE_PLANK_EASY) {
            const bool right = (dt == BL_FLOAT32 ? (double)(float)u : u) >= 0.5;
            e0 = right ? 0 : 1;
            e1 = right ? 1 : 0;
        } else if (dt == BL_FLOAT32) {
            const float s = 2.0f * (float)u - 1.0f;
            e0 = s > 0 ? s : 0;
            e1 = -s > 0 ? -s : 0;
        } else {
            const double s = 2 * u - 1;
            e0 = s > 0 ? s : 0;
            e1 = -s > 0 ? -s : 0;
        }
        if (dt == BL_FLOAT32)
            tick(w, (float[2]){(float)e0, (float)e1}, en);
        else
            tick(w, (double[2]){e0, e1}, en);
    }
    assert_int_equal(bl_worlds_status(w, 0, true), BL_TRIAL_COMPLETED);
    const double score = bl_worlds_outcome(w, 0);
    bl_worlds_destroy(w);
    bl_world_init_destroy(wi);
    bl_task_options_clear(&o);
    return score;
}

static void test_calibration_trial0_null_scores(void **state)
{
    (void)state;
    const bl_test_block0 *v = bl_test_calibration_block0;
    assert_true(fabs(null_trial0(&v[0], BL_FLOAT64) - 0.169408907573753) <= 1e-15);
    assert_true(null_trial0(&v[1], BL_FLOAT64) == 8.0 / 29.0);
    assert_true(null_trial0(&v[2], BL_FLOAT64) == 39.0);
    /* float32 CartPole scores equal float64 ones in the frozen records. */
    assert_true(null_trial0(&v[2], BL_FLOAT32) == 39.0);
}

/* ---- allocation failures ---------------------------------------------------- */

/* bl_test_fail_each's operations on a cohort of two copies of one world:
 * its creation, and the snapshot of its world 1 (w). */
typedef struct alloc_case {
    bl_world_init *ins[2];
    bl_dtype dt;
    const bl_worlds *w;
} alloc_case;

static bl_status create_op(void *ctx, bl_error *err)
{
    const alloc_case *c = ctx;
    bl_worlds *x = (bl_worlds *)&x;
    const bl_status st = bl_worlds_create((const bl_world_init *const *)c->ins, 2,
                                          (int64_t[]){20, 20}, 0, c->dt, &x, err);
    if (st == BL_OK) {
        bl_worlds_destroy(x);
    } else {
        assert_null(x);
        assert_int_equal(err->status, st);
    }
    return st;
}

static bl_status snapshot_op(void *ctx, bl_error *err)
{
    const alloc_case *c = ctx;
    bl_snapshot *s = (bl_snapshot *)&s;
    const bl_status st = bl_worlds_snapshot(c->w, 1, &s, err);
    if (st == BL_OK)
        bl_snapshot_destroy(s);
    else
        assert_null(s);
    return st;
}

/* Every allocation of a creation and of a snapshot fails cleanly, and the
 * first allocation past the count of a successful run never comes. */
static void test_allocation_failures(void **state)
{
    (void)state;
    bl_world_init *dc = make_delayed_cue(2, 3, 2, 2);
    bl_world_init *pg = make_pong((double[5]){995, 250, 250, -5, 5}, (double[2]){0.5, 0.5}, 1, 1);
    bl_world_init *sets[2] = {dc, pg};
    for (int k = 0; k < 2; k++)
        for (int d = 0; d < 2; d++) {
            alloc_case c = {{sets[k], sets[k]}, d ? BL_FLOAT32 : BL_FLOAT64, NULL};
            bl_alloc_fail_at(0);
            bl_worlds *w = create(c.ins, 2, (int64_t[]){20, 20}, 0, c.dt);
            long total = bl_alloc_count();
            /* The cohort and the one block holding all its arrays. */
            assert_int_equal(total, 2);
            assert_int_equal(bl_test_fail_each(create_op, &c, 1), total + 1);
            c.w = w;
            bl_snapshot *ref = NULL;
            bl_alloc_fail_at(0);
            OK_E(bl_worlds_snapshot(w, 1, &ref, &e_));
            total = bl_alloc_count();
            assert_true(total > 10);
            assert_int_equal(bl_test_fail_each(snapshot_op, &c, 1), total + 1);
            bl_snapshot_destroy(ref);
            bl_worlds_destroy(w);
        }
    bl_world_init_destroy(dc);
    bl_world_init_destroy(pg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_validation),
        cmocka_unit_test(test_delayed_cue_discard_ties_incomplete_early_stop),
        cmocka_unit_test(test_reversal_feedback_and_outcome),
        cmocka_unit_test(test_tracking_fixture_replay),
        cmocka_unit_test(test_tracking_reversal_and_warmup),
        cmocka_unit_test(test_pong_fixture_replay),
        cmocka_unit_test(test_pong_boundary_miss_reset_warmup),
        cmocka_unit_test(test_pong_bins),
        cmocka_unit_test(test_cartpole_spike_ff2_votes_euler),
        cmocka_unit_test(test_cartpole_fixture_replay),
        cmocka_unit_test(test_cartpole_mission_end),
        cmocka_unit_test(test_finite_rules),
        cmocka_unit_test(test_float32_storage_and_nan_advance),
        cmocka_unit_test(test_snapshots),
        cmocka_unit_test(test_python_reference_dynamics),
        cmocka_unit_test(test_prepared_probes_answered),
        cmocka_unit_test(test_calibration_trial0_null_scores),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
