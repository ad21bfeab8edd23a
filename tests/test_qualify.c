/* `qualify` (src/measure/qualify*.c, src/cli/qualify.c): the comparison
 * rules on hand-made and perturbed snapshots, the receipt of a real
 * qualification (every key, the snapshot count recomputed from the models'
 * and worlds' own snapshots, a float32 path that really differs from
 * float64), a zero tolerance that must fail, and the command line: bad
 * flags exit 2 creating nothing, an existing destination is refused and
 * left alone, a success writes receipt.json and prints the same JSON. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/model.h"
#include "brainlesslab/task.h"
#include "measure/qualify_internal.h"
#include "support.h"

#define TOL 2e-5

/* ---- element rules ------------------------------------------------------ */

static void test_element_rules(void **state)
{
    (void)state;
    /* atol + rtol·|b|, with b the float64 reference. */
    assert_true(bl_qualify_close(1.0 + 3e-5, 1.0, TOL, TOL));   /* bound 4e-5 */
    assert_false(bl_qualify_close(1.0 + 5e-5, 1.0, TOL, TOL));
    assert_true(bl_qualify_close(0.0, 1.9e-5, TOL, TOL));       /* atol near 0 */
    assert_false(bl_qualify_close(0.0, 2.1e-5, TOL, TOL));
    assert_true(bl_qualify_close(1000.0, 1000.015, TOL, TOL)); /* rtol scales with b */
    assert_false(bl_qualify_close(1000.0, 1000.03, TOL, TOL));
    /* The reference's magnitude, not the observed one: asymmetric. */
    assert_false(bl_qualify_close(1e6 + 20.0002, 1e6, TOL, TOL));
    assert_true(bl_qualify_close(1e6, 1e6 + 20.0002, TOL, TOL));
    assert_true(bl_qualify_close(NAN, NAN, TOL, TOL));
    assert_false(bl_qualify_close(NAN, 0.0, TOL, TOL));
    assert_false(bl_qualify_close(0.0, NAN, TOL, TOL));
    assert_true(bl_qualify_close(INFINITY, INFINITY, TOL, TOL));
    assert_false(bl_qualify_close(INFINITY, -INFINITY, TOL, TOL));
    assert_false(bl_qualify_close(INFINITY, 1e300, TOL, TOL));
    assert_false(bl_qualify_close(1.0, 1.0 + 1e-9, 0.0, 0.0));
    /* Exact: no tolerance at all, NaN equal to NaN. */
    assert_true(bl_qualify_equal(3.0, 3.0));
    assert_false(bl_qualify_equal(3.0, 3.0 + 1e-12));
    assert_true(bl_qualify_equal(NAN, NAN));
    assert_true(bl_qualify_equal(0.0, -0.0));
    /* Identical: the bits. */
    assert_false(bl_qualify_identical(0.0, -0.0));
    assert_true(bl_qualify_identical(NAN, NAN));
    assert_true(bl_qualify_identical(1.5, 1.5));
    /* The near-threshold band: atol + rtol·|threshold|. */
    assert_true(bl_qualify_near_threshold(1e-5, 0.0, TOL, TOL));
    assert_true(bl_qualify_near_threshold(-2e-5, 0.0, TOL, TOL));
    assert_false(bl_qualify_near_threshold(3e-5, 0.0, TOL, TOL));
    assert_true(bl_qualify_near_threshold(3e-5, 1.0, TOL, TOL)); /* band 4e-5 */
    assert_false(bl_qualify_near_threshold(-5e-5, 1.0, TOL, TOL));
}

/* ---- hand-made snapshots -------------------------------------------------- */

/* A three-array "falandays" snapshot: acts (real), counts (integer),
 * spikes (binary), three nodes each. */
typedef struct mini {
    double acts[3], counts[3], spikes[3];
    bl_snapshot_array arrays[3];
    bl_snapshot snap;
} mini;

static void mini_init(mini *m, const double acts[3], const double counts[3],
                      const double spikes[3])
{
    memcpy(m->acts, acts, sizeof m->acts);
    memcpy(m->counts, counts, sizeof m->counts);
    memcpy(m->spikes, spikes, sizeof m->spikes);
    m->arrays[0] = (bl_snapshot_array){"acts", 1, {3, 1}, false, m->acts};
    m->arrays[1] = (bl_snapshot_array){"counts", 1, {3, 1}, true, m->counts};
    m->arrays[2] = (bl_snapshot_array){"spikes", 1, {3, 1}, false, m->spikes};
    m->snap = (bl_snapshot){3, m->arrays};
}

static const bl_qualify_site site = {"cfg/task", "frame", 4, "falandays", "float32 vs float64"};

static bl_json *ledger_json(const bl_qualify_ledger *l)
{
    bl_json *o = bl_json_object();
    OK_E(bl_qualify_ledger_json(l, o, &e_));
    return o;
}

static void test_compare_rules(void **state)
{
    (void)state;
    static const double acts[3] = {0.5, -1.25, 3.0}, counts[3] = {0, 2, 5},
                        spikes[3] = {1, 0, 1};
    const double margin[3] = {0.5, 1e-5, -1e-3}, threshold[3] = {2, 0, 2};
    bl_qualify_margins margins = {1, {{"spikes", margin, threshold, 3}}};
    mini ref, obs;
    mini_init(&ref, acts, counts, spikes);
    bl_qualify_ledger *l = NULL;
    OK_E(bl_qualify_ledger_create(TOL, TOL, &l, &e_));
    bl_qualify_result r;

    /* Equal: passed, every array counted, nothing differs. */
    mini_init(&obs, acts, counts, spikes);
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_PASSED);
    assert_int_equal(r.snapshots, 3);
    assert_true(r.max_abs == 0.0);

    /* Within tolerance: passed, and the difference is measured. */
    obs.acts[2] = 3.0 + 6e-5; /* bound 2e-5 + 2e-5·3 = 8e-5 */
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_PASSED);
    assert_true(fabs(r.max_abs - 6e-5) < 1e-12);

    /* NaN in both is equal and stays out of the maximum. */
    obs.acts[2] = NAN;
    ref.acts[2] = NAN;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_PASSED);
    assert_true(r.max_abs == 0.0);
    assert_int_equal(bl_qualify_ledger_failures(l), 0);
    assert_int_equal(bl_qualify_ledger_snapshots(l), 9);

    /* Beyond tolerance: a failure naming array, index and values. */
    mini_init(&obs, acts, counts, spikes);
    mini_init(&ref, acts, counts, spikes);
    obs.acts[1] = -1.25 + 1e-3;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    assert_int_equal(bl_qualify_ledger_failures(l), 1);
    bl_json *j = ledger_json(l);
    const bl_json *f = bl_json_at(bl_json_get(j, "failures"), 0);
    assert_string_equal(bl_json_get_string(bl_json_get(f, "case"), NULL), "cfg/task");
    assert_string_equal(bl_json_get_string(bl_json_get(f, "stage"), NULL), "frame");
    assert_int_equal(bl_json_get_int(bl_json_get(f, "step")), 4);
    assert_string_equal(bl_json_get_string(bl_json_get(f, "array"), NULL), "falandays/acts");
    assert_int_equal(bl_json_get_int(bl_json_at(bl_json_get(f, "index"), 0)), 1);
    assert_string_equal(bl_json_get_string(bl_json_get(f, "rule"), NULL), "tolerance");
    assert_true(bl_json_get_real(bl_json_get(f, "observed")) == -1.25 + 1e-3);
    assert_true(bl_json_get_real(bl_json_get(f, "expected")) == -1.25);
    bl_json_destroy(j);

    /* Integer arrays are exact even inside the tolerance. */
    mini_init(&obs, acts, counts, spikes);
    obs.counts[2] = 5.00001;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    assert_int_equal(bl_qualify_ledger_failures(l), 2);

    /* A flipped spike at a node inside the band (|margin| 1e-5 <= atol):
     * a declared divergence, nothing counted, nothing failed. */
    const size_t before = bl_qualify_ledger_snapshots(l);
    mini_init(&obs, acts, counts, spikes);
    obs.spikes[1] = 1;
    obs.acts[1] = 5.0; /* the diverged frame's other arrays are not judged */
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_DIVERGED);
    assert_int_equal(r.snapshots, 0);
    assert_int_equal(bl_qualify_ledger_snapshots(l), before);
    assert_int_equal(bl_qualify_ledger_failures(l), 2);
    assert_int_equal(bl_qualify_ledger_divergences(l), 1);
    j = ledger_json(l);
    const bl_json *d = bl_json_at(bl_json_get(j, "near_threshold_divergences"), 0);
    assert_string_equal(bl_json_get_string(bl_json_get(d, "array"), NULL), "falandays/spikes");
    assert_int_equal(bl_json_get_int(bl_json_get(d, "frame")), 4);
    assert_int_equal(bl_json_get_int(bl_json_at(bl_json_get(d, "index"), 0)), 1);
    assert_true(bl_json_get_real(bl_json_get(d, "margin")) == 1e-5);
    assert_true(bl_json_get_real(bl_json_get(d, "float32")) == 1.0);
    assert_true(bl_json_get_real(bl_json_get(d, "float64")) == 0.0);
    bl_json_destroy(j);

    /* A flipped spike with |margin| 1e-3 > atol + rtol·2: a failure. */
    mini_init(&obs, acts, counts, spikes);
    obs.spikes[2] = 0;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    assert_int_equal(bl_qualify_ledger_failures(l), 3);
    assert_int_equal(bl_qualify_ledger_divergences(l), 1);

    /* Without margins a binary array is exact: even the near node fails. */
    bl_qualify_margins exact = {1, {{"spikes", NULL, NULL, 3}}};
    mini_init(&obs, acts, counts, spikes);
    obs.spikes[1] = 1;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &exact, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    assert_int_equal(bl_qualify_ledger_failures(l), 4);

    /* Identical mode: -0.0 is not 0.0, margins do not apply, and its
     * differences stay out of the float32-vs-float64 maximum. */
    const double max_before = bl_qualify_ledger_max_abs(l);
    const bl_qualify_site reset = {"cfg/task", "reset", 0, "falandays", "float32"};
    mini_init(&obs, acts, counts, spikes);
    obs.counts[0] = -0.0;
    obs.acts[0] = 0.75;
    OK_E(bl_qualify_compare(l, &reset, &obs.snap, &ref.snap, true, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    assert_int_equal(r.snapshots, 3);
    assert_int_equal(bl_qualify_ledger_failures(l), 6);
    assert_true(bl_qualify_ledger_max_abs(l) == max_before);

    /* A different inventory is a failure, never a crash. */
    mini_init(&obs, acts, counts, spikes);
    obs.snap.count = 2;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    mini_init(&obs, acts, counts, spikes);
    obs.arrays[0].shape[0] = 2;
    OK_E(bl_qualify_compare(l, &site, &obs.snap, &ref.snap, false, &margins, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    assert_int_equal(bl_qualify_ledger_failures(l), 8);

    /* The array table: one entry per key, counting compared snapshots. */
    j = ledger_json(l);
    const bl_json *arrays = bl_json_get(j, "arrays");
    assert_int_equal(bl_json_size(arrays), 3);
    const bl_json *a = bl_json_get(arrays, "falandays/acts");
    assert_non_null(a);
    assert_int_equal(bl_json_get_int(bl_json_get(a, "snapshots")), 8);
    assert_int_equal(bl_json_get_int(bl_json_get(j, "snapshots")),
                     (int64_t)bl_qualify_ledger_snapshots(l));
    assert_int_equal(bl_json_get_int(bl_json_get(j, "failure_count")), 8);
    bl_json_destroy(j);
    bl_qualify_ledger_destroy(l);
}

static void test_failures_are_capped(void **state)
{
    (void)state;
    double ref[30] = {0}, obs[30];
    for (int i = 0; i < 30; i++)
        obs[i] = 1.0;
    bl_snapshot_array ra = {"weights", 2, {5, 6}, false, ref};
    bl_snapshot_array oa = {"weights", 2, {5, 6}, false, obs};
    bl_snapshot rs = {1, &ra}, os = {1, &oa};
    bl_qualify_ledger *l = NULL;
    OK_E(bl_qualify_ledger_create(TOL, TOL, &l, &e_));
    bl_qualify_result r;
    OK_E(bl_qualify_compare(l, &site, &os, &rs, false, NULL, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    bl_json *j = ledger_json(l);
    assert_int_equal(bl_json_get_int(bl_json_get(j, "failure_count")), 30);
    const bl_json *fails = bl_json_get(j, "failures");
    assert_int_equal(bl_json_size(fails), BL_QUALIFY_MAX_FAILURES);
    /* A matrix element is named by row and column. */
    const bl_json *last = bl_json_at(fails, BL_QUALIFY_MAX_FAILURES - 1);
    assert_int_equal(bl_json_get_int(bl_json_at(bl_json_get(last, "index"), 0)), 3);
    assert_int_equal(bl_json_get_int(bl_json_at(bl_json_get(last, "index"), 1)), 1);
    bl_json_destroy(j);
    bl_qualify_ledger_destroy(l);
}

/* ---- margins ------------------------------------------------------------------ */

static void test_margins(void **state)
{
    (void)state;
    /* Falandays: θ = targets_before·μ; a_pre = acts + spikes·θ. */
    double tb[2] = {1.0, 2.0}, acts[2] = {0.5, 3.99999}, spikes[2] = {1.0, 0.0};
    bl_snapshot_array b_arr[1] = {{"targets", 1, {2, 1}, false, tb}};
    bl_snapshot_array a_arr[2] = {{"acts", 1, {2, 1}, false, acts},
                                  {"spikes", 1, {2, 1}, false, spikes}};
    bl_snapshot before = {1, b_arr}, after = {2, a_arr};
    double m[3], t[3];
    bl_qualify_frame_margins(BL_MODEL_FALANDAYS, 2.0, &before, &after, m, t);
    assert_true(m[0] == 0.5 && t[0] == 2.0);
    assert_true(fabs(m[1] + 1e-5) < 1e-12 && t[1] == 4.0);

    /* SORN: the drive itself, thresholds t_e then t_i (before the frame). */
    double drive[3] = {0.1, -0.2, 0.3}, te[2] = {0.5, 0.6}, ti[1] = {0.7};
    bl_snapshot_array sb[2] = {{"t_e", 1, {2, 1}, false, te}, {"t_i", 1, {1, 1}, false, ti}};
    bl_snapshot_array sa[1] = {{"drive", 1, {3, 1}, false, drive}};
    bl_snapshot sbefore = {2, sb}, safter = {1, sa};
    bl_qualify_frame_margins(BL_MODEL_SORN, 0.0, &sbefore, &safter, m, t);
    for (int k = 0; k < 3; k++)
        assert_true(m[k] == drive[k]);
    assert_true(t[0] == 0.5 && t[1] == 0.6 && t[2] == 0.7);

    /* Which arrays are binary, and whose margins they take. */
    double prev[3] = {9, 8, 7}, prev_t[3] = {1, 1, 1};
    bl_qualify_margins q;
    bl_qualify_binary_arrays(BL_MODEL_SORN, 3, 2, m, t, prev, prev_t, &q);
    assert_int_equal(q.count, 5);
    assert_string_equal(q.arrays[1].name, "y");
    assert_true(q.arrays[1].margin == m + 2 && q.arrays[1].n == 1);
    assert_string_equal(q.arrays[3].name, "prev_y");
    assert_true(q.arrays[3].margin == prev + 2);
    assert_string_equal(q.arrays[4].name, "activity");
    assert_true(q.arrays[4].n == 3);
    bl_qualify_binary_arrays(BL_MODEL_FALANDAYS, 3, 0, m, t, NULL, NULL, &q);
    assert_int_equal(q.count, 2);
    assert_string_equal(q.arrays[0].name, "spikes");
    assert_string_equal(q.arrays[1].name, "previous");
    assert_null(q.arrays[1].margin); /* the first frame: exact */
}

/* ---- real snapshots, perturbed ---------------------------------------------- */

/* One Falandays frame in both dtypes on identical inputs: within the
 * rules, not bitwise equal; one injected weight difference fails it. */
static void test_injected_difference_fails(void **state)
{
    (void)state;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    c.link_p = 0.4;
    bl_gen g;
    OK_E(bl_gen_for(&g, 5, "development", "construction", NULL, 0, &e_));
    bl_falandays_init *init = NULL;
    OK_E(bl_falandays_construct(&c, 12, 3, 2, &g, &init, &e_));
    const bl_falandays_init *one[1] = {init};
    bl_model *m64 = NULL, *m32 = NULL;
    OK_E(bl_model_create_falandays(one, 1, BL_FLOAT64, &m64, &e_));
    OK_E(bl_model_create_falandays(one, 1, BL_FLOAT32, &m32, &e_));
    const int32_t active = 1;
    double x64[3], z64[12] = {0};
    float x32[3], z32[12] = {0};
    const bl_matrix i64 = {BL_FLOAT64, 1, 3, x64}, i32 = {BL_FLOAT32, 1, 3, x32};
    const bl_matrix n64 = {BL_FLOAT64, 1, 12, z64}, n32 = {BL_FLOAT32, 1, 12, z32};
    for (int frame = 0; frame < 4; frame++) {
        for (int k = 0; k < 3; k++) {
            x64[k] = 0.3 + 0.7 * bl_gen_random(&g);
            x32[k] = (float)x64[k];
        }
        OK_E(bl_model_step(m64, &i64, &n64, &active, 1, &e_));
        OK_E(bl_model_step(m32, &i32, &n32, &active, 1, &e_));
    }
    bl_snapshot *s64 = NULL, *s32 = NULL;
    OK_E(bl_model_snapshot(m64, 0, &s64, &e_));
    OK_E(bl_model_snapshot(m32, 0, &s32, &e_));
    bl_qualify_ledger *l = NULL;
    OK_E(bl_qualify_ledger_create(TOL, TOL, &l, &e_));
    bl_qualify_margins exact;
    bl_qualify_binary_arrays(BL_MODEL_FALANDAYS, 12, 0, NULL, NULL, NULL, NULL, &exact);
    bl_qualify_result r;
    OK_E(bl_qualify_compare(l, &site, s32, s64, false, &exact, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_PASSED);
    assert_int_equal(r.snapshots, s64->count);
    assert_true(r.max_abs > 0.0 && r.max_abs < 1e-5); /* float32 really differs */

    /* Perturb one recurrent weight of the float32 side. */
    bl_snapshot_array *w = NULL;
    for (size_t k = 0; k < s32->count; k++)
        if (strcmp(s32->arrays[k].name, "weights") == 0)
            w = &s32->arrays[k];
    assert_non_null(w);
    w->data[12 * 3 + 5] += 1e-3;
    OK_E(bl_qualify_compare(l, &site, s32, s64, false, &exact, &r, &e_));
    assert_int_equal(r.verdict, BL_QUALIFY_FAILED);
    bl_json *j = ledger_json(l);
    assert_int_equal(bl_json_get_int(bl_json_get(j, "failure_count")), 1);
    const bl_json *f = bl_json_at(bl_json_get(j, "failures"), 0);
    assert_string_equal(bl_json_get_string(bl_json_get(f, "array"), NULL), "falandays/weights");
    assert_int_equal(bl_json_get_int(bl_json_at(bl_json_get(f, "index"), 0)), 3);
    assert_int_equal(bl_json_get_int(bl_json_at(bl_json_get(f, "index"), 1)), 5);
    bl_json_destroy(j);
    bl_qualify_ledger_destroy(l);
    bl_snapshot_destroy(s64);
    bl_snapshot_destroy(s32);
    bl_model_destroy(m64);
    bl_model_destroy(m32);
    bl_falandays_init_destroy(init);
}

/* ---- the qualification itself ----------------------------------------------- */

static const char *const config_names[4] = {"falandays_unsigned", "falandays_dale",
                                            "falandays_oosawa", "sorn"};

/* Arrays in one model snapshot of each family, from a batch of its own. */
static size_t model_arrays(bl_model_kind kind)
{
    bl_gen g;
    OK_E(bl_gen_for(&g, 1, "development", "construction", NULL, 0, &e_));
    bl_model *m = NULL;
    if (kind == BL_MODEL_FALANDAYS) {
        bl_falandays_config c;
        bl_falandays_config_default(&c);
        bl_falandays_init *init = NULL;
        OK_E(bl_falandays_construct(&c, 6, 2, 2, &g, &init, &e_));
        const bl_falandays_init *one[1] = {init};
        OK_E(bl_model_create_falandays(one, 1, BL_FLOAT64, &m, &e_));
        bl_falandays_init_destroy(init);
    } else {
        bl_sorn_config c;
        bl_sorn_config_default(&c);
        bl_sorn_init *init = NULL;
        OK_E(bl_sorn_construct(&c, 6, 2, 2, &g, &init, &e_));
        const bl_sorn_init *one[1] = {init};
        OK_E(bl_model_create_sorn(one, 1, BL_FLOAT64, &m, &e_));
        bl_sorn_init_destroy(init);
    }
    bl_snapshot *s = NULL;
    OK_E(bl_model_snapshot(m, 0, &s, &e_));
    const size_t n = s->count;
    bl_snapshot_destroy(s);
    bl_model_destroy(m);
    return n;
}

/* Arrays in one world snapshot of a family, from a cohort of its own. */
static size_t world_arrays(bl_task_kind kind)
{
    bl_task_options o;
    OK_E(bl_task_options_default(kind, &o, &e_));
    bl_gen g;
    OK_E(bl_gen_for(&g, 1, "development", "world", NULL, 0, &e_));
    bl_world_init *w = NULL;
    OK_E(bl_world_prepare(&o, &g, 0, &w, &e_));
    bl_task_definition d;
    bl_task_define(&o, &d);
    const bl_world_init *one[1] = {w};
    bl_worlds *c = NULL;
    OK_E(bl_worlds_create(one, 1, &d.default_horizon, 0, BL_FLOAT64, &c, &e_));
    bl_snapshot *s = NULL;
    OK_E(bl_worlds_snapshot(c, 0, &s, &e_));
    const size_t n = s->count;
    bl_snapshot_destroy(s);
    bl_worlds_destroy(c);
    bl_world_init_destroy(w);
    bl_task_options_clear(&o);
    return n;
}

static int64_t integer(const bl_json *o, const char *key)
{
    const bl_json *v = bl_json_get(o, key);
    if (!v || bl_json_kindof(v) != BL_JSON_INT)
        fail_msg("%s is not an integer", key);
    return bl_json_get_int(v);
}

static double real(const bl_json *o, const char *key)
{
    const bl_json *v = bl_json_get(o, key);
    if (!v || bl_json_kindof(v) != BL_JSON_REAL)
        fail_msg("%s is not a real", key);
    return bl_json_get_real(v);
}

static void test_receipt(void **state)
{
    (void)state;
    bl_qualify_options o;
    bl_qualify_options_default(&o);
    assert_int_equal(o.count, 64);
    assert_int_equal(o.frames, 12);
    assert_int_equal(o.trials, 4);
    assert_true(o.rtol == 2e-5 && o.atol == 2e-5);
    o.count = 16;
    o.trials = 1;
    bl_json *r = NULL;
    bool passed = false;
    OK_E(bl_qualify_run(&o, &r, &passed, &e_));
    assert_true(passed);

    /* Every key, in the receipt's order. */
    static const char *const keys[] = {
        "format", "version", "status", "backend", "dtype", "reference_dtype", "policy",
        "rtol", "atol", "snapshots", "maximum_absolute_difference", "arrays",
        "near_threshold_divergences", "failure_count", "failures", "cases", "outcomes",
        "protocol", "coverage", "limits", "host"};
    const size_t nkeys = sizeof keys / sizeof *keys;
    assert_int_equal(bl_json_size(r), nkeys);
    for (size_t k = 0; k < nkeys; k++)
        assert_string_equal(bl_json_key_at(r, k, NULL), keys[k]);
    assert_string_equal(bl_test_str(r, "format"), "brainlesslab-backend-conformance");
    assert_int_equal(integer(r, "version"), 1);
    assert_string_equal(bl_test_str(r, "status"), "passed");
    assert_string_equal(bl_test_str(r, "backend"), "cpu");
    assert_string_equal(bl_test_str(r, "dtype"), "float32");
    assert_string_equal(bl_test_str(r, "reference_dtype"), "float64");
    const bl_json *policy = bl_json_get(r, "policy");
    assert_false(bl_json_get_bool(bl_json_get(policy, "fast_math")));
    assert_string_equal(bl_test_str(policy, "reduction"), "ordered");
    assert_string_equal(bl_test_str(policy, "rng"), "philox-host-v1");
    assert_string_equal(bl_test_str(policy, "reference"), "cpu float64");
    assert_true(real(r, "rtol") == 2e-5 && real(r, "atol") == 2e-5);
    assert_int_equal(integer(r, "failure_count"), 0);
    assert_int_equal(bl_json_size(bl_json_get(r, "failures")), 0);
    assert_non_null(strstr(bl_test_str(r, "limits"), "not gated"));
    assert_non_null(strstr(bl_test_str(r, "coverage"), "reset"));
    assert_int_equal(bl_json_kindof(bl_json_get(r, "host")), BL_JSON_OBJECT);
    assert_non_null(bl_json_get(bl_json_get(r, "host"), "cpu"));
    const bl_json *protocol = bl_json_get(r, "protocol");
    assert_int_equal(integer(protocol, "count"), 16);
    assert_int_equal(integer(protocol, "frames"), 12);
    assert_int_equal(integer(protocol, "seed"), 714);
    assert_int_equal(integer(protocol, "freeze_weights_before_frame"), 7);
    assert_non_null(bl_json_get(bl_json_get(protocol, "streams"), "drive"));
    assert_non_null(strstr(bl_test_str(protocol, "keys"), "config"));
    assert_int_equal(bl_json_size(bl_json_get(protocol, "configurations")), 4);

    /* 4 configurations × 10 families, in order; the snapshot count from
     * the models' and worlds' own inventories: per case the initial state,
     * every compared frame and tick, the inactive slot and world in both
     * dtypes, and the reset in both dtypes. */
    const bl_json *cases = bl_json_get(r, "cases");
    assert_int_equal(bl_json_size(cases), 40);
    const size_t am[2] = {model_arrays(BL_MODEL_FALANDAYS), model_arrays(BL_MODEL_SORN)};
    assert_int_equal(am[0], 16);
    assert_int_equal(am[1], 20);
    size_t expected = 0, divergences = 0;
    double max_case = 0;
    for (size_t c = 0; c < 40; c++) {
        const bl_json *k = bl_json_at(cases, c);
        const bl_task_kind task = (bl_task_kind)(c % 10);
        assert_string_equal(bl_test_str(k, "model"), config_names[c / 10]);
        assert_string_equal(bl_test_str(k, "task"), bl_task_name(task));
        assert_string_equal(bl_test_str(k, "status"), "passed");
        assert_string_equal(bl_test_str(k, "precision_check"), "passed");
        const int64_t per_tick = task == BL_TASK_CARTPOLE_PLANK_EASY ? 24 : 1;
        assert_int_equal(integer(k, "neural_frames"), per_tick);
        assert_int_equal(integer(k, "frames"), per_tick == 24 ? 24 : 12);
        assert_int_equal(integer(k, "ticks"), per_tick == 24 ? 1 : 12);
        const bl_json *div = bl_json_get(k, "diverged_at_frame");
        const int64_t compared = integer(k, "compared_frames");
        if (bl_json_kindof(div) == BL_JSON_NULL) {
            assert_int_equal(compared, integer(k, "frames"));
        } else {
            assert_int_equal(compared, bl_json_get_int(div) - 1);
            divergences++;
        }
        const size_t a_m = am[c / 10 == 3], a_w = world_arrays(task);
        const size_t n = a_m * (1 + (size_t)compared) + 4 * a_m +
                         a_w * (1 + (size_t)integer(k, "ticks")) + 2 * a_w;
        assert_int_equal(integer(k, "snapshots"), n);
        expected += n;
        max_case = fmax(max_case, real(k, "maximum_absolute_difference"));
    }
    assert_int_equal(integer(r, "snapshots"), expected);
    assert_true(divergences <= bl_json_size(bl_json_get(r, "near_threshold_divergences")));
    /* The float32 path is compared for real: differences exist, are small
     * and are what the cases and the array table say. */
    const double mx = real(r, "maximum_absolute_difference");
    assert_true(mx > 0.0 && mx <= 2e-4);
    assert_true(mx == max_case);
    const bl_json *arrays = bl_json_get(r, "arrays");
    size_t sum = 0;
    double max_arrays = 0;
    for (size_t k = 0; k < bl_json_size(arrays); k++) {
        const bl_json *a = bl_json_value_at(arrays, k);
        sum += (size_t)integer(a, "snapshots");
        max_arrays = fmax(max_arrays, real(a, "maximum_absolute_difference"));
    }
    assert_int_equal(sum, expected);
    assert_true(max_arrays == mx);
    assert_true(real(bl_json_get(arrays, "falandays/acts"), "maximum_absolute_difference") > 0);
    assert_true(real(bl_json_get(arrays, "sorn/t_e"), "maximum_absolute_difference") > 0);
    assert_true(real(bl_json_get(arrays, "falandays/spikes"), "maximum_absolute_difference") ==
                0.0);
    assert_non_null(bl_json_get(arrays, "cartpole_plank_easy/world/theta"));
    assert_non_null(bl_json_get(arrays, "sorn/prev_y"));

    /* Outcomes: one row per case, reported with both dtypes. */
    const bl_json *outcomes = bl_json_get(r, "outcomes");
    assert_int_equal(bl_json_size(outcomes), 40);
    for (size_t c = 0; c < 40; c++) {
        const bl_json *k = bl_json_at(outcomes, c);
        assert_string_equal(bl_test_str(k, "model"), config_names[c / 10]);
        assert_string_equal(bl_test_str(k, "task"), bl_task_name((bl_task_kind)(c % 10)));
        assert_int_equal(integer(k, "trials"), 1);
        const int64_t same = integer(k, "identical_outcomes");
        assert_true(same == 0 || same == 1);
        assert_non_null(bl_json_get(bl_json_get(k, "mean_raw"), "float32"));
        const bl_json *done = bl_json_get(k, "completed");
        assert_in_range(integer(done, "float64"), 0, 1);
        assert_in_range(integer(done, "float32"), 0, 1);
        assert_in_range(integer(k, "status_differences"), 0, 1);
        assert_in_range(integer(k, "ticks_differences"), 0, 1);
        assert_true(integer(k, "horizon") >= 1);
    }

    /* The receipt is writable JSON (no NaN or infinity anywhere). */
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_json_write(r, BL_JSON_INDENT, &b, &e_));
    bl_buf_clear(&b);
    bl_json_destroy(r);
}

/* The failed cases of a receipt, counted by the test itself. */
static size_t failed_cases(const bl_json *r)
{
    const bl_json *cases = bl_json_get(r, "cases");
    size_t failed = 0;
    for (size_t c = 0; c < bl_json_size(cases); c++)
        failed += strcmp(bl_test_str(bl_json_at(cases, c), "status"), "failed") == 0;
    return failed;
}

/* With no tolerance at all float32 cannot pass: the comparisons bite. */
static void test_zero_tolerance_fails(void **state)
{
    (void)state;
    bl_qualify_options o;
    bl_qualify_options_default(&o);
    o.count = 12;
    o.frames = 3;
    o.trials = 0;
    o.rtol = 0;
    o.atol = 0;
    bl_json *r = NULL;
    bool passed = true;
    OK_E(bl_qualify_run(&o, &r, &passed, &e_));
    assert_false(passed);
    assert_string_equal(bl_test_str(r, "status"), "failed");
    assert_true(integer(r, "failure_count") > 0);
    const bl_json *fails = bl_json_get(r, "failures");
    assert_true(bl_json_size(fails) > 0 && bl_json_size(fails) <= BL_QUALIFY_MAX_FAILURES);
    const bl_json *f = bl_json_at(fails, 0);
    assert_string_equal(bl_test_str(f, "comparison"), "float32 vs float64");
    assert_non_null(bl_json_get(f, "observed"));
    assert_int_equal(bl_json_size(bl_json_get(r, "outcomes")), 0);
    /* Some case failed, and frames below the freeze frame are honoured. */
    const bl_json *cases = bl_json_get(r, "cases");
    for (size_t c = 0; c < bl_json_size(cases); c++)
        assert_int_equal(integer(bl_json_at(cases, c), "frames"), c % 10 == 2 ? 24 : 3);
    assert_true(failed_cases(r) > 0);
    /* The command's error line: the counts, the first failure, the path. */
    bl_error err = {0};
    assert_int_equal(bl_qualify_failure(r, "somewhere/receipt.json", &err), BL_ERUNTIME);
    assert_int_equal(err.status, BL_ERUNTIME);
    char head[128];
    snprintf(head, sizeof head, "qualify failed: %zu of %zu cases, %lld failed comparison%s (first: ",
             failed_cases(r), bl_json_size(cases), (long long)integer(r, "failure_count"),
             integer(r, "failure_count") == 1 ? "" : "s");
    if (strncmp(err.msg, head, strlen(head)) != 0)
        fail_msg("%s\ndoes not start with\n%s", err.msg, head);
    char where[200];
    snprintf(where, sizeof where, "(first: %s %s", bl_test_str(f, "case"), bl_test_str(f, "stage"));
    assert_non_null(strstr(err.msg, where));
    assert_non_null(strstr(err.msg, bl_test_str(f, "array")));
    assert_non_null(strstr(err.msg, "); see somewhere/receipt.json"));
    assert_null(strchr(err.msg, '\n'));
    bl_json_destroy(r);
}

static void test_bad_options(void **state)
{
    (void)state;
    bl_qualify_options o;
    bl_json *r = NULL;
    bool passed = true;
    bl_error err = {0};
    struct {
        const char *field;
        const char *msg;
    } cases[] = {{"count", "count must be an integer >= 1"},
                 {"frames", "frames must be an integer >= 1"},
                 {"trials", "trials must be an integer >= 0"},
                 {"seed", "seed must be an integer >= 0"},
                 {"atol", "rtol and atol must be finite and non-negative"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        bl_qualify_options_default(&o);
        if (k == 0)
            o.count = 0;
        else if (k == 1)
            o.frames = 0;
        else if (k == 2)
            o.trials = -1;
        else if (k == 3)
            o.seed = -1;
        else
            o.atol = NAN;
        assert_int_equal(bl_qualify_run(&o, &r, &passed, &err), BL_EVALUE);
        assert_string_equal(err.msg, cases[k].msg);
        assert_null(r);
        assert_false(passed);
    }
}

/* Injects an allocation failure at the first `singles` allocations one by
 * one, then at `spread` points over the whole run: each must come back as
 * one MemoryError with nothing leaked (AddressSanitizer checks leaks). */
static void inject(int64_t trials, long singles, long spread)
{
    bl_qualify_options o;
    bl_qualify_options_default(&o);
    o.count = 4;
    o.frames = 1;
    o.trials = trials;
    bl_json *r = NULL;
    bool passed = false;
    bl_alloc_fail_at(0);
    OK_E(bl_qualify_run(&o, &r, &passed, &e_));
    const long total = bl_alloc_count();
    bl_json_destroy(r);
    assert_true(passed && total > 1000);
    const long stride = total / spread;
    for (long n = 1; n <= total; n += n < singles ? 1 : stride) {
        bl_error err = {0};
        r = NULL;
        bl_alloc_fail_at(n);
        const bl_status st = bl_qualify_run(&o, &r, &passed, &err);
        bl_alloc_fail_at(0);
        if (st != BL_ENOMEM)
            fail_msg("allocation %ld of %ld: status %d (%s)", n, total, st, err.msg);
        assert_null(r);
        assert_true(err.msg[0] != 0);
    }
}

static void test_allocation_failures(void **state)
{
    (void)state;
    inject(0, 48, 89); /* the lockstep cases and the receipt */
    inject(1, 1, 13);  /* with the whole-trial outcomes */
}

/* ---- the command line ------------------------------------------------------------ */

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Runs the program with the formatted arguments: it must exit `code` with
 * `says` somewhere on stderr. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void expect_cli(int code, const char *says, const char *fmt, ...)
{
    char args[8600], *out = NULL, *err = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof args);
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != code || !strstr(err, says))
        fail_msg("`brainlesslab %s`: exit %d (expected %d), stderr without '%s':\n%s", args, rc,
                 code, says, err);
    free(out);
    free(err);
}

static void test_cli_refusals_create_nothing(void **state)
{
    const char *parent = bl_test_path(state, "sub"), *dest = bl_test_path(state, "sub/dest");
    char args[8600];
    static const char *const flags[] = {
        "--count 0", "--frames 0", "--trials -1", "--seed -1", "--backends cpu cpu",
        "--backends metal", "--backends", "--count x", "--frames 1.5", "--unknown 3",
    };
    for (size_t k = 0; k < sizeof flags / sizeof *flags; k++) {
        char *out = NULL, *err = NULL;
        snprintf(args, sizeof args, "qualify '%s' %s", dest, flags[k]);
        const int rc = bl_test_run_cli(args, &out, &err);
        if (rc != 2)
            fail_msg("%s: exit %d, stderr %s", flags[k], rc, err);
        assert_string_equal(out, "");
        /* argparse reports unknown flags with the program's own usage. */
        assert_non_null(strstr(err, "usage: brainlesslab "));
        assert_non_null(strstr(err, k == 9 ? "brainlesslab: error: unrecognized arguments"
                                           : "brainlesslab qualify: error: "));
        assert_false(exists(parent));
        free(out);
        free(err);
    }
    /* The texts of our own checks. */
    expect_cli(2, "error: --backends must be distinct\n", "qualify '%s' --backends cpu cpu", dest);
    expect_cli(2, "error: --count must be >= 1\n", "qualify '%s' --count 0", dest);
    /* No destination at all. */
    expect_cli(2, "the following arguments are required: destination", "qualify");
}

static void test_cli_existing_destination(void **state)
{
    const char *dest = bl_test_path(state, "dest"),
               *marker = bl_test_path(state, "dest/keep.txt"),
               *receipt = bl_test_path(state, "dest/receipt.json");
    char args[8600];
    assert_int_equal(mkdir(dest, 0777), 0);
    FILE *f = fopen(marker, "w");
    assert_non_null(f);
    fputs("mine\n", f);
    assert_int_equal(fclose(f), 0);
    char *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "qualify '%s' --count 4 --trials 0 --frames 1", dest);
    assert_int_equal(bl_test_run_cli(args, &out, &err), 1);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "brainlesslab: FileExistsError: "));
    assert_true(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
    assert_false(exists(receipt));
    f = fopen(marker, "r");
    char line[16] = {0};
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "mine\n");
    free(out);
    free(err);
    /* A plain file in the way is refused the same way. */
    expect_cli(1, "FileExistsError", "qualify '%s' --count 4 --trials 0 --frames 1", marker);
}

static void test_cli_success(void **state)
{
    /* Parents are created. */
    const char *dest = bl_test_path(state, "a/b/dest"),
               *receipt = bl_test_path(state, "a/b/dest/receipt.json");
    char args[8600];
    char *out = NULL, *err = NULL;
    snprintf(args, sizeof args,
             "qualify '%s' --backends cpu --count 8 --frames 2 --trials 1 --seed 3", dest);
    const int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    bl_json *printed = NULL, *written = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &printed, &e_));
    OK_E(bl_json_read_file(receipt, &written, &e_));
    assert_true(bl_json_equal(printed, written));
    assert_string_equal(bl_test_str(written, "status"), "passed");
    assert_string_equal(bl_test_str(written, "format"), "brainlesslab-backend-conformance");
    const bl_json *protocol = bl_json_get(written, "protocol");
    assert_int_equal(integer(protocol, "count"), 8);
    assert_int_equal(integer(protocol, "frames"), 2);
    assert_int_equal(integer(protocol, "seed"), 3);
    assert_int_equal(integer(protocol, "outcome_trials"), 1);
    assert_int_equal(bl_json_size(bl_json_get(written, "outcomes")), 40);
    /* The file is the printed text, byte for byte, indented, one newline. */
    FILE *f = fopen(receipt, "rb");
    assert_non_null(f);
    char *text = bl_malloc(strlen(out) + 2);
    const size_t n = fread(text, 1, strlen(out) + 1, f);
    fclose(f);
    assert_int_equal(n, strlen(out));
    assert_memory_equal(text, out, n);
    assert_true(strncmp(out, "{\n  \"format\": ", 14) == 0);
    assert_true(out[n - 1] == '\n' && out[n - 2] == '}');
    bl_free(text);
    bl_json_destroy(printed);
    bl_json_destroy(written);
    free(out);
    free(err);
    /* Help. */
    bl_test_cli_prints("qualify -h",
                       "usage: brainlesslab qualify [-h] [--backends {cpu} [{cpu} ...]]",
                       "--trials TRIALS", (char *)NULL);
}

/* The one error line of a failed qualification for each kind of failure,
 * on hand-made receipts (test_zero_tolerance_fails checks a real one). */
static void test_failure_line(void **state)
{
    (void)state;
    bl_json *r = NULL;
    bl_error err = {0};
    /* Hand-made receipts: one failure of each rule. */
    static const struct {
        const char *failure, *says;
    } kinds[] = {
        {"{\"case\": \"sorn/pong\", \"stage\": \"frame\", \"step\": 4, \"array\": \"sorn/t_e\", "
         "\"index\": [3], \"rule\": \"tolerance\", \"comparison\": \"float32 vs float64\", "
         "\"observed\": 1.5, \"expected\": 1.0}",
         "(first: sorn/pong frame 4: sorn/t_e[3] is 1.5 in float32 and 1 in float64, off by "
         "0.5, more than atol + rtol*|float64| = 0.2); see d/receipt.json"},
        {"{\"case\": \"sorn/pong\", \"stage\": \"tick\", \"step\": 2, \"array\": \"pong/world/score\", "
         "\"index\": [0, 1], \"rule\": \"exact\", \"comparison\": \"float32 vs float64\", "
         "\"observed\": 3, \"expected\": 2}",
         "(first: sorn/pong tick 2: pong/world/score[0, 1] is 3 in float32 and 2 in float64, "
         "which must be equal)"},
        {"{\"case\": \"falandays_dale/tracking\", \"stage\": \"reset\", \"step\": 0, "
         "\"array\": \"falandays/acts\", \"index\": [7], \"rule\": \"identical\", "
         "\"comparison\": \"float32\", \"observed\": \"nan\", \"expected\": 0.25}",
         "(first: falandays_dale/tracking reset: falandays/acts[7] is nan in float32, not "
         "bit-identical to the initial 0.25)"},
        {"{\"case\": \"sorn/delayed_cue\", \"stage\": \"precision_check\", "
         "\"message\": \"weights: value not finite after casting to float32\"}",
         "(first: sorn/delayed_cue precision_check: weights: value not finite after casting "
         "to float32)"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"rtol\": 0.1, \"atol\": 0.1, \"failure_count\": 1, \"failures\": [%s], "
                 "\"cases\": [{\"status\": \"passed\"}, {\"status\": \"failed\"}]}",
                 kinds[k].failure);
        OK_E(bl_json_parse(text, strlen(text), "receipt", &r, &e_));
        assert_int_equal(bl_qualify_failure(r, "d/receipt.json", &err), BL_ERUNTIME);
        if (strncmp(err.msg, "qualify failed: 1 of 2 cases, 1 failed comparison (first: ", 58) != 0 ||
            !strstr(err.msg, kinds[k].says))
            fail_msg("case %zu: %s", k, err.msg);
        bl_json_destroy(r);
    }
}

/* A qualification that really fails from the command line (48 frames: the
 * float32 Tracking world drifts past the tolerance, docs/performance.md):
 * the receipt is written and printed, exit 1, and one stderr line says
 * what failed and where the receipt is. */
static void test_cli_failure_says_what_failed(void **state)
{
    const char *dest = bl_test_path(state, "dest"),
               *receipt = bl_test_path(state, "dest/receipt.json");
    char args[8600];
    char *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "qualify '%s' --count 4 --frames 48 --trials 0", dest);
    const int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 1)
        fail_msg("exit %d: %s", rc, err);
    bl_json *printed = NULL, *written = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &printed, &e_));
    OK_E(bl_json_read_file(receipt, &written, &e_));
    assert_true(bl_json_equal(printed, written));
    assert_string_equal(bl_test_str(written, "status"), "failed");
    /* Exactly one line, in the program's error form. */
    assert_true(strchr(err, '\n') == err + strlen(err) - 1);
    char head[160];
    snprintf(head, sizeof head, "brainlesslab: RuntimeError: qualify failed: %zu of 40 cases, ",
             failed_cases(written));
    if (strncmp(err, head, strlen(head)) != 0)
        fail_msg("stderr: %s", err);
    assert_true(failed_cases(written) > 0);
    const bl_json *f = bl_json_at(bl_json_get(written, "failures"), 0);
    assert_non_null(strstr(err, bl_test_str(f, "case")));
    assert_non_null(strstr(err, bl_test_str(f, "array")));
    char tail[4400];
    snprintf(tail, sizeof tail, "; see %s\n", receipt);
    assert_string_equal(err + strlen(err) - strlen(tail), tail);
    bl_json_destroy(printed);
    bl_json_destroy(written);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_element_rules),
        cmocka_unit_test(test_compare_rules),
        cmocka_unit_test(test_failures_are_capped),
        cmocka_unit_test(test_margins),
        cmocka_unit_test(test_injected_difference_fails),
        cmocka_unit_test(test_receipt),
        cmocka_unit_test(test_zero_tolerance_fails),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_allocation_failures),
        BL_TEST_IN_DIR(test_cli_refusals_create_nothing),
        BL_TEST_IN_DIR(test_cli_existing_destination),
        BL_TEST_IN_DIR(test_cli_success),
        cmocka_unit_test(test_failure_line),
        BL_TEST_IN_DIR(test_cli_failure_says_what_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
