/* Direct controllers, the fused control path and null adjustment
 * (spec/tasks.md §6, §1.4, §9.2–§9.3; tests of §10.1 #1–#4, #7, §10.3 and
 * §10.4 #2, #4).
 *
 * Where the reference seeds worlds with NumPy's default_rng(seed) (PCG64),
 * these tests use Generator(Philox(seed)) through bl_gen: this program has
 * no PCG64, and the properties tested (oracle solves every preset, negative
 * controls answer [label == 1], fused == unfused) hold for any world. */
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/rng.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/task.h"
#include "model_support.h"
#include "support.h"
#include "task_support.h"
#include "tasks/adjust_internal.h"
#include "tasks/controllers_internal.h"
#include "tasks/worlds_internal.h"

/* ---- helpers --------------------------------------------------------------- */

static size_t dsize(bl_dtype dt) { return dt == BL_FLOAT64 ? sizeof(double) : sizeof(float); }

static void set_real(bl_dtype dt, void *arr, size_t i, double v)
{
    if (dt == BL_FLOAT64)
        ((double *)arr)[i] = v;
    else
        ((float *)arr)[i] = (float)v;
}

static double get_real(bl_dtype dt, const void *arr, size_t i)
{
    return dt == BL_FLOAT64 ? ((const double *)arr)[i] : (double)((const float *)arr)[i];
}

static void resolve(bl_task_kind kind, const char *json, bl_task_options *o)
{
    bl_json *j = NULL;
    if (json)
        OK_E(bl_json_parse(json, strlen(json), "test options", &j, &e_));
    OK_E(bl_task_options_resolve(kind, j, o, &e_));
    bl_json_destroy(j);
}

static bl_world_init *prepare_seeded(const bl_task_options *o, uint64_t seed, int64_t horizon)
{
    bl_gen g;
    const bl_seed s = bl_seed_from_u64(seed);
    bl_gen_init(&g, &s);
    return bl_test_prepare(o, &g, horizon);
}

/* A cohort of n worlds prepared from Generator(Philox(seeds[b])). When
 * `edit` is given it may change each init before the cohort copies it. */
static bl_worlds *make_cohort(const bl_task_options *o, const uint64_t *seeds,
                              const int64_t *horizons, size_t n, int64_t warmup, bl_dtype dt,
                              void (*edit)(bl_world_init *, size_t))
{
    bl_world_init **inits = calloc(n, sizeof *inits);
    assert_non_null(inits);
    for (size_t b = 0; b < n; b++) {
        inits[b] = prepare_seeded(o, seeds[b], horizons[b]);
        if (edit)
            edit(inits[b], b);
    }
    bl_worlds *w = NULL;
    OK_E(bl_worlds_create((const bl_world_init *const *)inits, n, horizons, warmup, dt, &w, &e_));
    for (size_t b = 0; b < n; b++)
        bl_world_init_destroy(inits[b]);
    free(inits);
    return w;
}

/* make_cohort over the options of `kind` (JSON text, NULL: the defaults),
 * every world unedited. */
static bl_worlds *cohort_of(bl_task_kind kind, const char *json, const uint64_t *seeds,
                            const int64_t *horizons, size_t n, bl_dtype dt)
{
    bl_task_options o;
    resolve(kind, json, &o);
    bl_worlds *w = make_cohort(&o, seeds, horizons, n, 0, dt, NULL);
    bl_task_options_clear(&o);
    return w;
}

/* Every snapshot field of world k of `a` equals that of `b`, bit for bit. */
static void assert_same_world(const bl_worlds *a, const bl_worlds *b, size_t k, const char *ctx)
{
    bl_snapshot *sa = NULL, *sb = NULL;
    OK_E(bl_worlds_snapshot(a, k, &sa, &e_));
    OK_E(bl_worlds_snapshot(b, k, &sb, &e_));
    assert_true(sa->count > 0);
    char what[200];
    snprintf(what, sizeof what, "%s: world %zu (fused, unfused)", ctx, k);
    bl_test_assert_snap_identical(sa, sb, what);
    bl_snapshot_destroy(sa);
    bl_snapshot_destroy(sb);
}

/* ---- §6.1 names and validation ------------------------------------------------ */

static void test_policy_names(void **state)
{
    (void)state;
    static const char *names[BL_POLICY_COUNT] = {
        "oracle", "reference_null", "constant_left", "constant_right", "memoryless", "last",
        "first", "context_blind", "irrelevant", "bag", "fixed_mapping"};
    for (int p = 0; p < BL_POLICY_COUNT; p++) {
        assert_string_equal(bl_policy_name((bl_policy)p), names[p]);
        bl_policy q = BL_POLICY_COUNT;
        OK_E(bl_policy_from_name(names[p], &q, &e_));
        assert_int_equal(q, p);
    }
    bl_policy q = BL_POLICY_COUNT;
    OK_E(bl_policy_from_name("reference_nullblindpolicy", &q, &e_));
    assert_int_equal(q, BL_POLICY_REFERENCE_NULL);
    bl_error e = {0};
    assert_int_equal(bl_policy_from_name("reservoir", &q, &e), BL_EVALUE);
    assert_non_null(strstr(e.msg, "reservoir"));
    assert_int_equal(bl_policy_from_name("Oracle", &q, &e), BL_EVALUE);
    assert_int_equal(bl_policy_from_name(NULL, &q, &e), BL_EVALUE);
}

static void test_controller_validation_table(void **state)
{
    (void)state;
    /* Allowed direct policies per family (§6.1), as bit sets over bl_policy. */
    const unsigned common = 1u << BL_POLICY_ORACLE | 1u << BL_POLICY_REFERENCE_NULL |
                            1u << BL_POLICY_CONSTANT_LEFT | 1u << BL_POLICY_CONSTANT_RIGHT;
    const unsigned cue = common | 1u << BL_POLICY_MEMORYLESS | 1u << BL_POLICY_LAST;
    const unsigned allowed[BL_TASK_COUNT] = {
        [BL_TASK_TRACKING] = common,
        [BL_TASK_PONG] = common,
        [BL_TASK_CARTPOLE_PLANK_EASY] = common,
        [BL_TASK_DELAYED_CUE] = cue,
        [BL_TASK_RECALL_INTERFERENCE] = cue,
        [BL_TASK_DELAYED_XOR] = cue,
        [BL_TASK_EVIDENCE_ACCUMULATION] = common | 1u << BL_POLICY_FIRST | 1u << BL_POLICY_LAST,
        [BL_TASK_CONTEXT_INTEGRATION] = common | 1u << BL_POLICY_CONTEXT_BLIND |
                                        1u << BL_POLICY_IRRELEVANT | 1u << BL_POLICY_FIRST |
                                        1u << BL_POLICY_LAST,
        [BL_TASK_TEMPORAL_ORDER] = common | 1u << BL_POLICY_BAG | 1u << BL_POLICY_LAST,
        [BL_TASK_REVERSAL_ADAPTATION] = common | 1u << BL_POLICY_FIXED_MAPPING,
    };
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        OK_E(bl_controller_validate("reservoir", (bl_task_kind)k, &e_));
        OK_E(bl_controller_validate("reference_nullblindpolicy", (bl_task_kind)k, &e_));
        for (int p = 0; p < BL_POLICY_COUNT; p++) {
            bl_error e = {0};
            const bl_status st = bl_controller_validate(bl_policy_name((bl_policy)p),
                                                        (bl_task_kind)k, &e);
            if (allowed[k] & 1u << p) {
                assert_int_equal(st, BL_OK);
            } else {
                assert_int_equal(st, BL_EVALUE);
                char want[128];
                snprintf(want, sizeof want, "policy '%s' is not defined for %s",
                         bl_policy_name((bl_policy)p), bl_task_name((bl_task_kind)k));
                assert_string_equal(e.msg, want);
            }
        }
        bl_error e = {0};
        assert_int_equal(bl_controller_validate("wander", (bl_task_kind)k, &e), BL_EVALUE);
        assert_non_null(strstr(e.msg, "policy 'wander' is not defined for"));
    }
}

/* ---- §10.3 fused == unfused --------------------------------------------------- */

/* Small probe options so that every episode (reversal included) fits the
 * test horizon of 240 ticks. */
static const char *fusion_options(bl_task_kind kind)
{
    switch (kind) {
    case BL_TASK_DELAYED_CUE:
        return "{\"cue_ticks\": 2, \"delays\": [3, 5], \"response_ticks\": 2}";
    case BL_TASK_RECALL_INTERFERENCE:
        return "{\"cue_ticks\": 2, \"delay\": 32, \"response_ticks\": 2, \"distractors\": 2,"
               " \"distractor_ticks\": 3}";
    case BL_TASK_DELAYED_XOR:
        return "{\"cue_ticks\": 2, \"gap\": 3, \"response_ticks\": 2}";
    case BL_TASK_EVIDENCE_ACCUMULATION:
        return "{\"pulse_count\": 8, \"evidence_fraction\": 0.5, \"response_ticks\": 2}";
    case BL_TASK_CONTEXT_INTEGRATION:
        return "{\"cue_ticks\": 2, \"pulse_count\": 8, \"evidence_fraction\": 0.5,"
               " \"response_ticks\": 2}";
    case BL_TASK_TEMPORAL_ORDER:
        return "{\"cue_ticks\": 2, \"gap\": 1, \"terminal_ticks\": 2, \"response_ticks\": 2}";
    case BL_TASK_REVERSAL_ADAPTATION:
        return "{\"rounds\": 48, \"cue_ticks\": 1, \"response_ticks\": 1, \"feedback_ticks\": 1,"
               " \"reversal_range\": [2, 33]}";
    default:
        return NULL;
    }
}

enum { FUSE_N = 3, FUSE_H = 240 };

typedef struct fusion_case {
    bl_task_kind kind;
    bl_policy policy;
    bl_dtype dtype;
    /* Failure injection: a poke applied to world 0 of both cohorts. */
    void (*poke)(bl_worlds *w);
} fusion_case;

/* One uniform tile in the dtype: rows x FUSE_N values from `g`. */
static void *uniform_rows(bl_gen *g, size_t rows, bl_dtype dt)
{
    void *t = calloc(rows * FUSE_N, dsize(dt));
    assert_non_null(t);
    for (size_t i = 0; i < rows * FUSE_N; i++)
        set_real(dt, t, i, bl_gen_random(g));
    return t;
}

/* The unfused loop of §1.4 over the public cohort API, with the runner's
 * sticky guard, for `ticks` ticks of `tile` ([rows][n]). */
static void unfused_tile(bl_worlds *w, bl_controllers *c, const void *tile, size_t rows,
                         int32_t ticks, int32_t *guard, int32_t *cursors, void *eff)
{
    const size_t n = bl_worlds_count(w);
    const bl_dtype dt = bl_worlds_dtype(w);
    const bool probe = bl_task_is_probe(w->kind);
    const int32_t F = bl_worlds_frames(w);
    void *u = calloc(n, dsize(dt));
    assert_non_null(u);
    const bl_matrix em = {dt, n, 2, eff};
    for (int32_t o = 0; o < ticks; o++) {
        for (size_t b = 0; b < n; b++) {
            guard[b] = guard[b] && !w->done[b] && w->finite[b] &&
                       (int64_t)w->ticks[b] < w->horizons[b];
            size_t row = (size_t)o;
            if (probe)
                row = (size_t)w->round[b] < rows ? (size_t)w->round[b] : rows - 1;
            set_real(dt, u, b, tile ? get_real(dt, tile, row * n + b) : 0.0);
        }
        for (int32_t f = 1; f <= F; f++) {
            for (size_t b = 0; b < n; b++)
                guard[b] = guard[b] && w->finite[b];
            OK_E(bl_worlds_encode(w, f, guard, n, &e_));
            for (size_t b = 0; b < n; b++)
                guard[b] = guard[b] && w->finite[b];
            OK_E(bl_controllers_act(c, w, u, f, eff, &e_));
            for (size_t b = 0; b < n; b++)
                cursors[b] += guard[b] != 0;
            OK_E(bl_worlds_accumulate(w, &em, f, guard, n, &e_));
            for (size_t b = 0; b < n; b++)
                guard[b] = guard[b] && w->finite[b];
        }
        OK_E(bl_worlds_advance(w, &em, guard, n, &e_));
        for (size_t b = 0; b < n; b++)
            guard[b] = guard[b] && w->finite[b];
    }
    free(u);
}

/* Runs one case both ways and compares everything. Returns (through
 * `fused_out`) the fused cohort's guard and cursors for case-specific checks;
 * the caller destroys nothing. */
static void run_fusion_case(const fusion_case *fc, int32_t guard_out[FUSE_N],
                            int32_t cursor_out[FUSE_N], bl_worlds **keep, bl_controllers **keepc)
{
    bl_task_options o;
    resolve(fc->kind, fusion_options(fc->kind), &o);
    const bool physical = !bl_task_is_probe(fc->kind);
    const int64_t warmup =
        (fc->kind == BL_TASK_TRACKING || fc->kind == BL_TASK_PONG) ? 3 : 0;
    const uint64_t seeds[FUSE_N] = {1, 3, 8};
    const int64_t horizons[FUSE_N] = {FUSE_H, FUSE_H - 3, FUSE_H};
    bl_worlds *wf = make_cohort(&o, seeds, horizons, FUSE_N, warmup, fc->dtype, NULL);
    bl_worlds *wu = make_cohort(&o, seeds, horizons, FUSE_N, warmup, fc->dtype, NULL);
    bl_task_options_clear(&o);
    if (fc->poke) {
        fc->poke(wf);
        fc->poke(wu);
    }
    bl_controllers *cf = NULL, *cu = NULL;
    OK_E(bl_controllers_create(fc->policy, wf, &cf, &e_));
    OK_E(bl_controllers_create(fc->policy, wu, &cu, &e_));

    /* Two tiles of 3 and h-1 ticks (past every horizon). Physical families
     * read row o of each tile; probes a per-round table of M rows. */
    bl_gen g;
    const bl_seed s = bl_seed_from_u64(20260101);
    bl_gen_init(&g, &s);
    const int32_t ticks[2] = {3, FUSE_H - 1};
    size_t rows[2];
    void *tiles[2];
    for (int t = 0; t < 2; t++) {
        rows[t] = physical ? (size_t)ticks[t] : wf->max_rounds;
        tiles[t] = uniform_rows(&g, rows[t], fc->dtype);
    }
    int32_t gf[FUSE_N] = {1, 1, 0}, gu[FUSE_N] = {1, 1, 0};
    int32_t kf[FUSE_N] = {9, 0, 5}, ku[FUSE_N] = {9, 0, 5};
    void *eff = calloc(FUSE_N * 2, dsize(fc->dtype));
    assert_non_null(eff);
    for (int t = 0; t < 2; t++) {
        const bl_matrix tm = {fc->dtype, rows[t], FUSE_N, tiles[t]};
        OK_E(bl_worlds_run_control(wf, cf, &tm, ticks[t], gf, kf, &e_));
        unfused_tile(wu, cu, tiles[t], rows[t], ticks[t], gu, ku, eff);
    }

    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s/%s/%s%s", bl_task_name(fc->kind), bl_policy_name(fc->policy),
             fc->dtype == BL_FLOAT64 ? "float64" : "float32", fc->poke ? "/poked" : "");
    for (size_t b = 0; b < FUSE_N; b++)
        assert_same_world(wf, wu, b, ctx);
    if (memcmp(gf, gu, sizeof gf) != 0 || memcmp(kf, ku, sizeof kf) != 0)
        fail_msg("%s: guard %d %d %d / %d %d %d, cursors %d %d %d / %d %d %d", ctx, gf[0], gf[1],
                 gf[2], gu[0], gu[1], gu[2], kf[0], kf[1], kf[2], ku[0], ku[1], ku[2]);
    if (memcmp(cf->memory, cu->memory, FUSE_N * BL_CTL_MEMORY * sizeof(int32_t)) != 0)
        fail_msg("%s: controller memory differs", ctx);
    if (memcmp(cf->counts, cu->counts, FUSE_N * 2 * dsize(fc->dtype)) != 0)
        fail_msg("%s: controller counts differ", ctx);
    if (memcmp(cf->effectors, eff, FUSE_N * 2 * dsize(fc->dtype)) != 0)
        fail_msg("%s: effectors differ", ctx);
    /* The third world's guard was down from the start: nothing of it moved
     * and its ledger kept its 5. */
    assert_int_equal(wf->ticks[2], 0);
    assert_int_equal(kf[2], 5);
    assert_int_equal(gf[2], 0);

    memcpy(guard_out, gf, sizeof gf);
    memcpy(cursor_out, kf, sizeof kf);
    free(eff);
    for (int t = 0; t < 2; t++)
        free(tiles[t]);
    bl_worlds_destroy(wu);
    bl_controllers_destroy(cu);
    if (keep) {
        *keep = wf;
        *keepc = cf;
    } else {
        bl_worlds_destroy(wf);
        bl_controllers_destroy(cf);
    }
}

static void test_fused_equals_unfused_all_policies(void **state)
{
    (void)state;
    size_t cases = 0;
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d == 0 ? BL_FLOAT64 : BL_FLOAT32;
        for (int k = 0; k < BL_TASK_COUNT; k++) {
            for (int p = 0; p < BL_POLICY_COUNT; p++) {
                if (bl_controller_validate(bl_policy_name((bl_policy)p), (bl_task_kind)k, NULL) !=
                    BL_OK)
                    continue;
                const fusion_case fc = {(bl_task_kind)k, (bl_policy)p, dt, NULL};
                int32_t g[FUSE_N], cur[FUSE_N];
                bl_worlds *w = NULL;
                bl_controllers *c = NULL;
                run_fusion_case(&fc, g, cur, &w, &c);
                /* The runs did something: world 0 ran ticks and counted
                 * frames beyond its starting ledger of 9. */
                assert_true(w->ticks[0] > 0);
                assert_true(cur[0] > 9);
                if (bl_task_is_probe(w->kind)) {
                    /* Every probe episode ends within the horizon. */
                    assert_int_equal(w->done[0], 1);
                    assert_int_equal(w->done[1], 1);
                } else if (w->kind != BL_TASK_CARTPOLE_PLANK_EASY) {
                    /* Physical worlds run to their horizons: (h, h-3). */
                    assert_int_equal(w->ticks[0], FUSE_H);
                    assert_int_equal(w->ticks[1], FUSE_H - 3);
                    assert_int_equal(cur[0], 9 + FUSE_H);
                    assert_int_equal(cur[1], FUSE_H - 3);
                }
                bl_worlds_destroy(w);
                bl_controllers_destroy(c);
                cases++;
            }
        }
    }
    /* 4 + 4 + 4 + 6 + 6 + 6 + 6 + 8 + 6 + 5 policies, two dtypes. */
    assert_int_equal(cases, 2 * 55);
}

static void poke_infinite_gain(bl_worlds *w)
{
    set_real(w->dtype, w->params, 0 * 4 + 0, INFINITY);
}

static void poke_infinite_x(bl_worlds *w)
{
    set_real(w->dtype, w->physical, 0 * 8 + 0, INFINITY);
}

/* World 0's receptor 1 at the largest finite angle and its stimulus far
 * below: a - p overflows for that receptor alone, its delta is NaN, and a
 * NaN delta is not > 4, so the receptor shows the gain and the world lives
 * on (the fused null, which skips encode for a finite gain, must agree). */
static void poke_extreme_angle(bl_worlds *w)
{
    const bool f32 = w->dtype == BL_FLOAT32;
    set_real(w->dtype, w->angles, 0 * w->width + 1, f32 ? FLT_MAX : DBL_MAX);
    set_real(w->dtype, w->physical, 0 * 8 + 1, f32 ? -1e35 : -1e306);
}

static void test_fused_failures_latch_like_unfused(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d == 0 ? BL_FLOAT64 : BL_FLOAT32;
        for (int p = 0; p < 4; p++) {
            /* An infinite Tracking gain fails world 0 at its first encode:
             * no frame is counted and no tick advances. */
            int32_t g[FUSE_N], cur[FUSE_N];
            bl_worlds *w = NULL;
            bl_controllers *c = NULL;
            fusion_case fc = {BL_TASK_TRACKING, (bl_policy)p, dt, poke_infinite_gain};
            run_fusion_case(&fc, g, cur, &w, &c);
            assert_int_equal(w->finite[0], 0);
            assert_int_equal(w->ticks[0], 0);
            assert_int_equal(cur[0], 9);
            assert_int_equal(g[0], 0);
            assert_int_equal(w->finite[1], 1);
            assert_int_equal(w->ticks[1], FUSE_H - 3);
            bl_worlds_destroy(w);
            bl_controllers_destroy(c);

            fc = (fusion_case){BL_TASK_TRACKING, (bl_policy)p, dt, poke_extreme_angle};
            run_fusion_case(&fc, g, cur, &w, &c);
            assert_int_equal(w->finite[0], 1);
            assert_int_equal(w->ticks[0], FUSE_H);
            assert_int_equal(w->finite[1], 1);
            bl_worlds_destroy(w);
            bl_controllers_destroy(c);

            /* An infinite cart position passes encode (spike counts clamp)
             * and fails at the first advance: all 24 frames counted. */
            fc = (fusion_case){BL_TASK_CARTPOLE_PLANK_EASY, (bl_policy)p, dt, poke_infinite_x};
            run_fusion_case(&fc, g, cur, &w, &c);
            assert_int_equal(w->finite[0], 0);
            assert_int_equal(cur[0], 9 + 24);
            assert_int_equal(g[0], 0);
            assert_true(w->ticks[0] <= 1);
            bl_worlds_destroy(w);
            bl_controllers_destroy(c);
        }
    }
}

/* Arguments are checked before any world moves. */
static void test_run_control_argument_checks(void **state)
{
    (void)state;
    bl_task_options o;
    resolve(BL_TASK_TRACKING, NULL, &o);
    const uint64_t seeds[FUSE_N] = {1, 3, 8};
    const int64_t horizons[FUSE_N] = {10, 10, 10};
    bl_worlds *w = make_cohort(&o, seeds, horizons, FUSE_N, 0, BL_FLOAT64, NULL);
    bl_worlds *w32 = make_cohort(&o, seeds, horizons, FUSE_N, 0, BL_FLOAT32, NULL);
    bl_task_options_clear(&o);
    bl_controllers *c = NULL, *c32 = NULL;
    OK_E(bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &e_));
    OK_E(bl_controllers_create(BL_POLICY_REFERENCE_NULL, w32, &c32, &e_));
    double tile[4 * FUSE_N] = {0};
    float tile32[4 * FUSE_N] = {0};
    int32_t g[FUSE_N] = {1, 1, 1}, k[FUSE_N] = {0, 0, 0};
    bl_error e = {0};
    const bl_matrix good = {BL_FLOAT64, 4, FUSE_N, tile};
    const bl_matrix wrong_dtype = {BL_FLOAT32, 4, FUSE_N, tile32};
    const bl_matrix short_rows = {BL_FLOAT64, 2, FUSE_N, tile};
    const bl_matrix wrong_cols = {BL_FLOAT64, 4, 2, tile};
    assert_int_equal(bl_worlds_run_control(w, c, &wrong_dtype, 4, g, k, &e), BL_EVALUE);
    assert_int_equal(bl_worlds_run_control(w, c, &short_rows, 4, g, k, &e), BL_EVALUE);
    assert_int_equal(bl_worlds_run_control(w, c, &wrong_cols, 4, g, k, &e), BL_EVALUE);
    assert_int_equal(bl_worlds_run_control(w, c, NULL, 4, g, k, &e), BL_EVALUE);
    assert_int_equal(bl_worlds_run_control(w, c, &good, 0, g, k, &e), BL_EVALUE);
    assert_int_equal(bl_worlds_run_control(w, c, &good, 4, NULL, k, &e), BL_EVALUE);
    assert_int_equal(bl_worlds_run_control(w, c, &good, 4, g, NULL, &e), BL_EVALUE);
    /* A bundle made for another cohort (other dtype). */
    assert_int_equal(bl_worlds_run_control(w, c32, &good, 4, g, k, &e), BL_EVALUE);
    double eff[2 * FUSE_N];
    assert_int_equal(bl_controllers_act(c, w, NULL, 1, eff, &e), BL_EVALUE);
    assert_int_equal(bl_controllers_act(c, w, tile, 2, eff, &e), BL_EVALUE);
    assert_int_equal(bl_controllers_act(c, w, tile, 0, eff, &e), BL_EVALUE);
    /* Nothing moved. */
    for (size_t b = 0; b < FUSE_N; b++) {
        assert_int_equal(w->ticks[b], 0);
        assert_int_equal(g[b], 1);
        assert_int_equal(k[b], 0);
    }
    OK_E(bl_worlds_run_control(w, c, &good, 4, g, k, &e_));
    assert_int_equal(w->ticks[0], 4);
    assert_int_equal(k[0], 4);
    /* A policy the family does not declare cannot make a bundle. */
    bl_controllers *bad = NULL;
    assert_int_equal(bl_controllers_create(BL_POLICY_IRRELEVANT, w, &bad, &e), BL_EVALUE);
    assert_string_equal(e.msg, "policy 'irrelevant' is not defined for tracking");
    assert_null(bad);
    bl_controllers_destroy(c);
    bl_controllers_destroy(c32);
    bl_worlds_destroy(w);
    bl_worlds_destroy(w32);
}

/* bl_test_fail_each's operation: an oracle bundle for the cohort w or,
 * without one, the Tracking signature of the options o; a failure leaves
 * nothing behind. */
typedef struct allocating {
    const bl_worlds *w;
    const bl_task_options *o;
} allocating;

static bl_status allocate(void *ctx, bl_error *err)
{
    const allocating *a = ctx;
    bl_controllers *c = NULL;
    bl_json *sig = NULL;
    const bl_status st =
        a->w ? bl_controllers_create(BL_POLICY_ORACLE, a->w, &c, err)
             : bl_calibration_signature(a->o, 2000, 0, BL_FLOAT64, "cpu", &sig, err);
    assert_true(st == BL_OK || (c == NULL && sig == NULL));
    bl_controllers_destroy(c);
    bl_json_destroy(sig);
    return st;
}

/* Every allocation of an oracle bundle and of a calibration signature
 * fails cleanly. */
static void test_allocation_failures(void **state)
{
    (void)state;
    const uint64_t seeds[FUSE_N] = {1, 3, 8};
    const int64_t horizons[FUSE_N] = {FUSE_H, FUSE_H, FUSE_H};
    bl_task_options o;
    resolve(BL_TASK_CONTEXT_INTEGRATION, fusion_options(BL_TASK_CONTEXT_INTEGRATION), &o);
    bl_worlds *w = make_cohort(&o, seeds, horizons, FUSE_N, 0, BL_FLOAT64, NULL);
    bl_task_options_clear(&o);
    const long k = bl_test_fail_each(allocate, &(allocating){w, NULL}, 1);
    assert_true(k > 1 && k < 100);
    bl_worlds_destroy(w);
    resolve(BL_TASK_TRACKING, NULL, &o);
    assert_true(bl_test_fail_each(allocate, &(allocating){NULL, &o}, 1) < 2000);
    bl_task_options_clear(&o);
}

/* ---- §10.1 #1: the oracle solves every capacity preset ------------------------ */

static void test_oracle_solves_all_presets(void **state)
{
    (void)state;
    bl_task_preset *presets = NULL;
    size_t count = 0;
    OK_E(bl_capacity_presets(&presets, &count, &e_));
    assert_int_equal(count, 64);
    assert_string_equal(presets[0].id, "delayed_cue__delay_0");
    assert_string_equal(presets[63].id, "reversal_adaptation__single_reversal");
    for (size_t i = 0; i < count; i++) {
        const bl_task_preset *p = &presets[i];
        /* Generator(Philox(100 + i)) in place of the reference's
         * default_rng(100 + i). */
        bl_world_init *wi = prepare_seeded(&p->options, 100 + i, p->horizon);
        const int64_t length = (int64_t)wi->length;
        bl_worlds *w = NULL;
        OK_E(bl_worlds_create((const bl_world_init *const *)&wi, 1, &p->horizon, 0, BL_FLOAT64,
                              &w, &e_));
        bl_world_init_destroy(wi);
        bl_controllers *c = NULL;
        OK_E(bl_controllers_create(BL_POLICY_ORACLE, w, &c, &e_));
        int32_t g = 1, cur = 0;
        assert_true(p->horizon <= INT32_MAX);
        OK_E(bl_worlds_run_control(w, c, NULL, (int32_t)p->horizon, &g, &cur, &e_));
        const double want = p->options.kind == BL_TASK_REVERSAL_ADAPTATION ? 15.0 / 16.0 : 1.0;
        if (!w->done[0] || !w->finite[0] || bl_worlds_outcome(w, 0) != want ||
            w->ticks[0] != length)
            fail_msg("%s: done %d finite %d outcome %.17g ticks %d (L %lld)", p->id,
                     w->done[0], w->finite[0], bl_worlds_outcome(w, 0), w->ticks[0],
                     (long long)length);
        assert_int_equal(cur, length);
        assert_int_equal(bl_worlds_status(w, 0, true), BL_TRIAL_COMPLETED);
        bl_controllers_destroy(c);
        bl_worlds_destroy(w);
    }
    bl_capacity_presets_destroy(presets, count);
}

/* ---- §10.1 #2: negative controls ------------------------------------------------ */

enum { NEG_N = 48 };

/* Runs `policy` on 48 default worlds of `kind` (options `json`) to the end
 * and returns outcomes and labels. */
static void run_negative(bl_task_kind kind, const char *json, bl_policy policy,
                         double outcome[NEG_N], int32_t label[NEG_N])
{
    bl_task_options o;
    resolve(kind, json, &o);
    bl_task_definition def;
    bl_task_define(&o, &def);
    uint64_t seeds[NEG_N];
    int64_t horizons[NEG_N];
    for (size_t b = 0; b < NEG_N; b++) {
        seeds[b] = 1000 + b;
        horizons[b] = def.default_horizon;
    }
    bl_worlds *w = make_cohort(&o, seeds, horizons, NEG_N, 0, BL_FLOAT64, NULL);
    bl_task_options_clear(&o);
    bl_controllers *c = NULL;
    OK_E(bl_controllers_create(policy, w, &c, &e_));
    int32_t g[NEG_N], cur[NEG_N];
    for (size_t b = 0; b < NEG_N; b++) {
        g[b] = 1;
        cur[b] = 0;
    }
    OK_E(bl_worlds_run_control(w, c, NULL, (int32_t)def.default_horizon, g, cur, &e_));
    for (size_t b = 0; b < NEG_N; b++) {
        assert_int_equal(w->done[b], 1);
        outcome[b] = bl_worlds_outcome(w, b);
        label[b] = w->labels[b * w->max_rounds];
    }
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);
}

static void test_negative_controls(void **state)
{
    (void)state;
    double out[NEG_N];
    int32_t label[NEG_N];
    run_negative(BL_TASK_CONTEXT_INTEGRATION, "{\"congruency\": \"conflicting\"}",
                 BL_POLICY_IRRELEVANT, out, label);
    for (size_t b = 0; b < NEG_N; b++)
        assert_true(out[b] == 0.0);
    /* The same worlds are solved by the oracle, so the zeros are the
     * policy's, not the worlds'. */
    run_negative(BL_TASK_CONTEXT_INTEGRATION, "{\"congruency\": \"conflicting\"}",
                 BL_POLICY_ORACLE, out, label);
    for (size_t b = 0; b < NEG_N; b++)
        assert_true(out[b] == 1.0);

    const struct {
        bl_task_kind kind;
        bl_policy policy;
    } label_one[] = {{BL_TASK_TEMPORAL_ORDER, BL_POLICY_BAG},
                     {BL_TASK_DELAYED_CUE, BL_POLICY_MEMORYLESS}};
    for (size_t i = 0; i < 2; i++) {
        run_negative(label_one[i].kind, NULL, label_one[i].policy, out, label);
        size_t ones = 0;
        for (size_t b = 0; b < NEG_N; b++) {
            assert_true(out[b] == (label[b] == 1 ? 1.0 : 0.0));
            ones += label[b] == 1;
        }
        /* Both labels occur, so [label == 1] is not a constant. */
        assert_true(ones > 0 && ones < NEG_N);
    }
}

/* ---- §10.1 #3: controllers cannot read labels ---------------------------------- */

static void flip_labels(bl_world_init *wi, size_t b)
{
    (void)b;
    for (size_t k = 0; k < wi->rounds; k++)
        wi->labels[k] = 3 - wi->labels[k];
}

static void test_flipped_labels_leave_decisions(void **state)
{
    (void)state;
    bl_task_options o;
    resolve(BL_TASK_DELAYED_XOR, NULL, &o);
    bl_task_definition def;
    bl_task_define(&o, &def);
    const uint64_t seeds[2] = {5, 6};
    const int64_t horizons[2] = {def.default_horizon, def.default_horizon};
    bl_worlds *plain = make_cohort(&o, seeds, horizons, 2, 0, BL_FLOAT64, NULL);
    bl_worlds *flipped = make_cohort(&o, seeds, horizons, 2, 0, BL_FLOAT64, flip_labels);
    bl_task_options_clear(&o);
    bl_worlds *ws[2] = {plain, flipped};
    for (int i = 0; i < 2; i++) {
        bl_controllers *c = NULL;
        OK_E(bl_controllers_create(BL_POLICY_ORACLE, ws[i], &c, &e_));
        int32_t g[2] = {1, 1}, cur[2] = {0, 0};
        OK_E(bl_worlds_run_control(ws[i], c, NULL, (int32_t)def.default_horizon, g, cur, &e_));
        bl_controllers_destroy(c);
    }
    for (size_t b = 0; b < 2; b++) {
        assert_int_equal(plain->labels[b * plain->max_rounds],
                         3 - flipped->labels[b * flipped->max_rounds]);
        assert_int_equal(plain->decisions[b * plain->max_rounds],
                         flipped->decisions[b * flipped->max_rounds]);
        assert_true(bl_worlds_outcome(plain, b) == 1.0);
        assert_true(bl_worlds_outcome(flipped, b) == 0.0);
    }
    bl_worlds_destroy(plain);
    bl_worlds_destroy(flipped);
}

/* ---- §10.1 #4: the sensory oracle reads only receptors ------------------------- */

static void test_sensory_oracle_reads_only_receptors(void **state)
{
    (void)state;
    const bl_task_kind kinds[2] = {BL_TASK_TRACKING, BL_TASK_PONG};
    for (int d = 0; d < 2; d++) {
        const bl_dtype dt = d == 0 ? BL_FLOAT64 : BL_FLOAT32;
        for (int i = 0; i < 2; i++) {
            const uint64_t seeds[2] = {11, 12};
            const int64_t horizons[2] = {100, 100};
            bl_worlds *w = cohort_of(kinds[i], NULL, seeds, horizons, 2, dt);
            /* Different physical states... */
            assert_true(memcmp(w->physical, (char *)w->physical + 8 * dsize(dt),
                               8 * dsize(dt)) != 0);
            const int32_t on[2] = {1, 1};
            OK_E(bl_worlds_encode(w, 1, on, 2, &e_));
            /* ...shown the same receptor vector. */
            memcpy((char *)w->inputs + w->width * dsize(dt), w->inputs, w->width * dsize(dt));
            bl_controllers *c = NULL;
            OK_E(bl_controllers_create(BL_POLICY_ORACLE, w, &c, &e_));
            double eff[4];
            float eff32[4];
            void *e = dt == BL_FLOAT64 ? (void *)eff : (void *)eff32;
            OK_E(bl_controllers_act(c, w, NULL, 1, e, &e_));
            assert_memory_equal(e, (char *)e + 2 * dsize(dt), 2 * dsize(dt));
            /* The vector does steer: one side moves. */
            assert_true(get_real(dt, e, 0) + get_real(dt, e, 1) > 0);
            bl_controllers_destroy(c);
            bl_worlds_destroy(w);
            bl_error err = {0};
            assert_int_equal(bl_controller_validate("oracle", kinds[i], &err), BL_OK);
            assert_int_equal(bl_controller_validate("irrelevant", kinds[i], &err), BL_EVALUE);
        }
    }
}

/* The Tracking oracle turns by the strongest receptor's angle / amp, the
 * lowest index on ties; Pong by sin(angle); CartPole pushes by the sign of
 * the physical command (§6.3). */
static void test_oracle_rules_by_hand(void **state)
{
    (void)state;
    const uint64_t seeds[1] = {1};
    const int64_t horizons[1] = {10};
    bl_worlds *w = cohort_of(BL_TASK_TRACKING, NULL, seeds, horizons, 1, BL_FLOAT64);
    bl_controllers *c = NULL;
    OK_E(bl_controllers_create(BL_POLICY_ORACLE, w, &c, &e_));
    double *in = w->inputs, eff[2];
    const double *angles = w->angles;
    memset(in, 0, w->width * sizeof *in);
    OK_E(bl_controllers_act(c, w, NULL, 1, eff, &e_));
    assert_true(eff[0] == 0.0 && eff[1] == 0.0);
    /* Receptors 6 (-6 deg) and 40 (-54 deg) equally strong: the lower
     * index wins. */
    in[6] = 0.5;
    in[40] = 0.5;
    OK_E(bl_controllers_act(c, w, NULL, 1, eff, &e_));
    const double turn = angles[6] / 10.0;
    assert_true(turn == -0.6);
    assert_true(turn < 0);
    assert_true(eff[0] == 0.0 && eff[1] == -turn);
    in[40] = 0.75;
    OK_E(bl_controllers_act(c, w, NULL, 1, eff, &e_));
    const double turn40 = angles[40] / 10.0;
    assert_true(eff[0] == (turn40 > 0 ? (turn40 > 1 ? 1.0 : turn40) : 0.0));
    assert_true(eff[1] == (turn40 < 0 ? (turn40 < -1 ? 1.0 : -turn40) : 0.0));
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);

    w = cohort_of(BL_TASK_PONG, NULL, seeds, horizons, 1, BL_FLOAT64);
    OK_E(bl_controllers_create(BL_POLICY_ORACLE, w, &c, &e_));
    in = w->inputs;
    memset(in, 0, w->width * sizeof *in);
    in[40] = 1.0; /* 70 degrees */
    OK_E(bl_controllers_act(c, w, NULL, 1, eff, &e_));
    assert_true(eff[0] == sin(70.0 * 3.141592653589793 / 180.0));
    assert_true(eff[1] == 0.0);
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);

    w = cohort_of(BL_TASK_CARTPOLE_PLANK_EASY, NULL, seeds, horizons, 1, BL_FLOAT64);
    OK_E(bl_controllers_create(BL_POLICY_ORACLE, w, &c, &e_));
    double *p = w->physical;
    /* cmd = 80 wrap(theta) + 18 theta_dot + x + 2 x_dot. */
    const double states[4][4] = {
        {0.0, 0.0, 0.01, 0.0},       /* cmd 0.8 >= 0: push right (0, 1) */
        {0.0, 0.0, -0.01, 0.0},      /* cmd < 0: push left (1, 0) */
        {0.5, 0.0, 0.0, 0.0},        /* x alone: right */
        {0.0, 0.0, 0.0, 0.0},        /* cmd 0: right */
    };
    const double want[4][2] = {{0, 1}, {1, 0}, {0, 1}, {0, 1}};
    for (int s = 0; s < 4; s++) {
        memcpy(p, states[s], sizeof states[s]);
        OK_E(bl_controllers_act(c, w, NULL, 1 + s * 5, eff, &e_));
        assert_true(eff[0] == want[s][0] && eff[1] == want[s][1]);
    }
    /* theta is wrapped into [-pi, pi) before use: 2 pi - 0.01 acts as -0.01. */
    const double wrapped[4] = {0.0, 0.0, 2 * 3.141592653589793 - 0.01, 0.0};
    memcpy(p, wrapped, sizeof wrapped);
    OK_E(bl_controllers_act(c, w, NULL, 1, eff, &e_));
    assert_true(eff[0] == 1.0 && eff[1] == 0.0);
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);
}

/* ---- §10.1 #7: null scopes ------------------------------------------------------ */

static void test_null_scopes(void **state)
{
    (void)state;
    const uint64_t seeds[3] = {1, 2, 3};
    const int64_t horizons[3] = {100, 100, 100};
    /* Tracking and Pong: the signed continuous null. */
    const bl_task_kind kinds[2] = {BL_TASK_TRACKING, BL_TASK_PONG};
    for (int i = 0; i < 2; i++) {
        bl_worlds *w = cohort_of(kinds[i], NULL, seeds, horizons, 3, BL_FLOAT64);
        bl_controllers *c = NULL;
        OK_E(bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &e_));
        const double u[3] = {0.0, 0.5, 1.0};
        double eff[6];
        OK_E(bl_controllers_act(c, w, u, 1, eff, &e_));
        const double want[6] = {0, 1, 0, 0, 1, 0};
        for (int k = 0; k < 6; k++)
            assert_true(eff[k] == want[k]);
        const double u2[3] = {0.75, 0.25, 0.5};
        OK_E(bl_controllers_act(c, w, u2, 1, eff, &e_));
        const double want2[6] = {0.5, 0, 0, 0.5, 0, 0};
        for (int k = 0; k < 6; k++)
            assert_true(eff[k] == want2[k]);
        bl_controllers_destroy(c);
        bl_worlds_destroy(w);
    }

    /* CartPole: one fair choice per tick, held across its 24 frames. */
    bl_worlds *w = cohort_of(BL_TASK_CARTPOLE_PLANK_EASY, NULL, seeds, horizons, 3, BL_FLOAT64);
    bl_controllers *c = NULL;
    OK_E(bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &e_));
    double eff[6];
    const double hi[3] = {0.6, 0.6, 0.6}, lo[3] = {0.1, 0.1, 0.1};
    OK_E(bl_controllers_act(c, w, hi, 1, eff, &e_));
    assert_true(eff[0] == 0.0 && eff[1] == 1.0);
    OK_E(bl_controllers_act(c, w, lo, 2, eff, &e_));
    assert_true(eff[0] == 0.0 && eff[1] == 1.0);
    /* A full tick, then the next tick draws afresh. */
    const int32_t on[3] = {1, 1, 1};
    const bl_matrix em = {BL_FLOAT64, 3, 2, eff};
    for (int32_t f = 1; f <= 24; f++) {
        OK_E(bl_worlds_encode(w, f, on, 3, &e_));
        OK_E(bl_controllers_act(c, w, f == 1 ? hi : lo, f, eff, &e_));
        assert_true(eff[0] == 0.0 && eff[1] == 1.0);
        OK_E(bl_worlds_accumulate(w, &em, f, on, 3, &e_));
    }
    OK_E(bl_worlds_advance(w, &em, on, 3, &e_));
    assert_int_equal(w->ticks[0], 1);
    OK_E(bl_controllers_act(c, w, lo, 1, eff, &e_));
    assert_true(eff[0] == 1.0 && eff[1] == 0.0);
    const double half[3] = {0.5, 0.5, 0.5};
    OK_E(bl_controllers_act(c, w, half, 2, eff, &e_));
    assert_true(eff[0] == 1.0 && eff[1] == 0.0);
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);

    /* Probes: one choice per round, held across the round's ticks; for
     * reversal a new round draws again. */
    bl_task_options o;
    resolve(BL_TASK_REVERSAL_ADAPTATION, fusion_options(BL_TASK_REVERSAL_ADAPTATION), &o);
    bl_task_definition def;
    bl_task_define(&o, &def);
    const int64_t rh[3] = {def.default_horizon, def.default_horizon, def.default_horizon};
    w = make_cohort(&o, seeds, rh, 3, 0, BL_FLOAT64, NULL);
    bl_task_options_clear(&o);
    OK_E(bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &e_));
    /* The first call of round k offers u = 0.9 (even k) or 0.2 (odd k);
     * every later call of the round offers the opposite, which must be
     * ignored. */
    int32_t prev = -1;
    for (int32_t t = 0; t < 4 * 3; t++) {
        const int32_t k = w->round[0];
        const bool first = k != prev;
        prev = k;
        const double draw = (k % 2 == 0) == first ? 0.9 : 0.2;
        const double u[3] = {draw, draw, draw};
        OK_E(bl_worlds_encode(w, 1, on, 3, &e_));
        OK_E(bl_controllers_act(c, w, u, 1, eff, &e_));
        const double want1 = k % 2 ? 1.0 : 0.0;
        assert_true(eff[0] == want1 && eff[1] == 1.0 - want1);
        OK_E(bl_worlds_accumulate(w, &em, 1, on, 3, &e_));
        OK_E(bl_worlds_advance(w, &em, on, 3, &e_));
    }
    /* The decisions equal the held choices: 2, 1, 2, 1. */
    for (int k = 0; k < 4; k++)
        assert_int_equal(w->decisions[k], k % 2 ? 1 : 2);
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);

    /* A single-episode probe holds one choice for the whole episode. */
    resolve(BL_TASK_DELAYED_CUE, fusion_options(BL_TASK_DELAYED_CUE), &o);
    bl_task_define(&o, &def);
    const int64_t dh[3] = {def.default_horizon, def.default_horizon, def.default_horizon};
    w = make_cohort(&o, seeds, dh, 3, 0, BL_FLOAT64, NULL);
    bl_task_options_clear(&o);
    OK_E(bl_controllers_create(BL_POLICY_REFERENCE_NULL, w, &c, &e_));
    for (int32_t t = 0; t < (int32_t)def.default_horizon; t++) {
        OK_E(bl_controllers_act(c, w, t == 0 ? lo : hi, 1, eff, &e_));
        assert_true(eff[0] == 1.0 && eff[1] == 0.0);
        OK_E(bl_worlds_accumulate(w, &em, 1, on, 3, &e_));
        OK_E(bl_worlds_advance(w, &em, on, 3, &e_));
    }
    for (size_t b = 0; b < 3; b++) {
        assert_int_equal(w->done[b], 1);
        assert_int_equal(w->decisions[b * w->max_rounds], 1);
    }
    bl_controllers_destroy(c);
    bl_worlds_destroy(w);
}

/* constant_left / constant_right are (1,0) / (0,1) every frame (§6.4). */
static void test_constants(void **state)
{
    (void)state;
    for (int k = 0; k < BL_TASK_COUNT; k++) {
        bl_task_options o;
        resolve((bl_task_kind)k, fusion_options((bl_task_kind)k), &o);
        bl_task_definition def;
        bl_task_define(&o, &def);
        const uint64_t seeds[1] = {4};
        const int64_t horizons[1] = {def.default_horizon};
        bl_worlds *w = make_cohort(&o, seeds, horizons, 1, 0, BL_FLOAT32, NULL);
        bl_task_options_clear(&o);
        for (int side = 0; side < 2; side++) {
            bl_controllers *c = NULL;
            OK_E(bl_controllers_create(side ? BL_POLICY_CONSTANT_RIGHT : BL_POLICY_CONSTANT_LEFT,
                                       w, &c, &e_));
            const int32_t on[1] = {1};
            float eff[2];
            for (int32_t f = 1; f <= w->frames; f++) {
                OK_E(bl_worlds_encode(w, f, on, 1, &e_));
                OK_E(bl_controllers_act(c, w, NULL, f, eff, &e_));
                assert_true(eff[0] == (side ? 0.0f : 1.0f) && eff[1] == (side ? 1.0f : 0.0f));
            }
            bl_controllers_destroy(c);
        }
        bl_worlds_destroy(w);
    }
}

/* ---- §9.2 and §10.4 #4: adjustment ---------------------------------------------- */

static void test_null_adjustment(void **state)
{
    (void)state;
    double v = 0;
    assert_int_equal(bl_null_adjust(0.25, true, true, 0.5, 1.0, &v), BL_ADJUST_ANALYTIC);
    assert_true(v == -0.5);
    assert_int_equal(bl_null_adjust(1.1, true, true, 0.5, 1.0, &v), BL_ADJUST_ANALYTIC);
    assert_true(v == (1.1 - 0.5) / (1.0 - 0.5));
    assert_true(fabs(v - 1.2) < 1e-12);
    assert_int_equal(bl_null_adjust(0.3, true, false, 0.26, 1.0, &v), BL_ADJUST_EMPIRICAL);
    assert_true(v == (0.3 - 0.26) / (1.0 - 0.26));
    /* CartPole-like bound: chance maps to 0, the bound to 1. */
    assert_int_equal(bl_null_adjust(21.9609375, true, false, 21.9609375, 15000.0, &v),
                     BL_ADJUST_EMPIRICAL);
    assert_true(v == 0.0);
    assert_int_equal(bl_null_adjust(15000.0, true, false, 21.9609375, 15000.0, &v),
                     BL_ADJUST_EMPIRICAL);
    assert_true(v == 1.0);
    assert_int_equal(bl_null_adjust(0.7, false, false, 0.0, 1.0, &v), BL_ADJUST_UNAVAILABLE);
    assert_true(isnan(v));
    assert_int_equal(bl_null_adjust(NAN, true, true, 0.5, 1.0, &v), BL_ADJUST_NO_OUTCOME);
    assert_true(isnan(v));
    /* No outcome wins over no calibration. */
    assert_int_equal(bl_null_adjust(NAN, false, false, 0.5, 1.0, &v), BL_ADJUST_NO_OUTCOME);
    assert_int_equal(bl_null_adjust(0.7, true, false, 1.0, 1.0, &v),
                     BL_ADJUST_BAD_DENOMINATOR);
    assert_true(isnan(v));
    assert_int_equal(bl_null_adjust(0.7, true, false, 1.5, 1.0, &v),
                     BL_ADJUST_BAD_DENOMINATOR);
    assert_int_equal(bl_null_adjust(0.7, true, false, NAN, 1.0, &v), BL_ADJUST_BAD_DENOMINATOR);
    assert_int_equal(bl_null_adjust(0.7, true, false, -INFINITY, 1.0, &v),
                     BL_ADJUST_BAD_DENOMINATOR);
    assert_string_equal(bl_adjust_status_name(BL_ADJUST_EMPIRICAL), "null_adjusted_empirical");
    assert_string_equal(bl_adjust_status_name(BL_ADJUST_ANALYTIC), "null_adjusted_analytic");
    assert_string_equal(bl_adjust_status_name(BL_ADJUST_UNAVAILABLE), "calibration_unavailable");
    assert_string_equal(bl_adjust_status_name(BL_ADJUST_NO_OUTCOME), "no_scalar_outcome");
    assert_string_equal(bl_adjust_status_name(BL_ADJUST_BAD_DENOMINATOR),
                        "invalid_calibration_denominator");
}

/* ---- §9.3 and §10.4 #2: signatures ----------------------------------------------- */

static void signature_id(const bl_task_options *o, int64_t horizon, int64_t warmup, bl_dtype dt,
                         char hex[65])
{
    bl_json *sig = NULL;
    OK_E(bl_calibration_signature(o, horizon, warmup, dt, "cpu", &sig, &e_));
    OK_E(bl_json_digest(sig, hex, &e_));
    bl_json_destroy(sig);
}

static const char *json_str(const bl_json *o, const char *key)
{
    const bl_json *v = bl_json_get(o, key);
    assert_non_null(v);
    assert_int_equal(bl_json_kindof(v), BL_JSON_STRING);
    return bl_json_get_string(v, NULL);
}

static void test_signature_fields(void **state)
{
    (void)state;
    bl_task_options o;
    resolve(BL_TASK_PONG, NULL, &o);
    bl_json *sig = NULL;
    OK_E(bl_calibration_signature(&o, 7200, 0, BL_FLOAT64, "cpu", &sig, &e_));
    assert_int_equal(bl_json_size(sig), 13);
    assert_int_equal(bl_json_get_int(bl_json_get(sig, "action_cadence")), 1);
    char arch[65];
    bl_architecture(arch);
    assert_string_equal(json_str(sig, "architecture"), arch);
    assert_true(strlen(arch) > 0);
    assert_string_equal(json_str(sig, "backend"), "cpu");
    assert_string_equal(json_str(sig, "initialisation_policy"), "task-factory-v1");
    assert_string_equal(json_str(sig, "null_policy"), "iid-uniform-random-action-v1");
    assert_string_equal(json_str(sig, "rng_scheme"), "philox-host-v1");
    assert_string_equal(json_str(sig, "task"), "pong");
    assert_int_equal(bl_json_get_int(bl_json_get(sig, "scoring_horizon")), 7200);
    assert_int_equal(bl_json_get_int(bl_json_get(sig, "warmup")), 0);
    const bl_json *num = bl_json_get(sig, "numerics");
    assert_non_null(num);
    assert_string_equal(json_str(num, "dtype"), "float64");
    assert_string_equal(json_str(num, "reduction"), "ordered");
    assert_string_equal(json_str(num, "rng"), "philox-host-v1");
    assert_false(bl_json_get_bool(bl_json_get(num, "fast_math")));
    /* The task options are the part-1 resolved options, verbatim. */
    bl_json *opts = NULL;
    OK_E(bl_task_options_json(&o, &opts, &e_));
    assert_true(bl_json_equal(opts, bl_json_get(sig, "task_options")));
    bl_json_destroy(opts);
    /* The runtime fingerprint is documented: SHA-256 of
     * "brainlesslab <version> <compiler>". */
    char fp[65];
    OK_E(bl_runtime_fingerprint(fp, &e_));
    assert_string_equal(json_str(sig, "runtime_fingerprint"), fp);
    assert_int_equal(strlen(fp), 64);

    /* World source hashes: every world-deciding source of this build (tasks,
     * random streams, the runner), each hash equal to the file's current
     * bytes (a stale configure would fail here), and every .c file of those
     * folders listed. */
    const bl_json *src = bl_json_get(sig, "world_source_hashes");
    assert_non_null(src);
    assert_true(bl_json_size(src) >= 4);
    char root[4096];
    snprintf(root, sizeof root, "%s/..", bl_test_tests_dir());
    for (size_t i = 0; i < bl_json_size(src); i++) {
        const char *rel = bl_json_key_at(src, i, NULL);
        assert_true(strncmp(rel, "src/tasks/", 10) == 0 || strncmp(rel, "src/rng/", 8) == 0 ||
                    strncmp(rel, "src/run/", 8) == 0);
        char path[4200], hex[65];
        snprintf(path, sizeof path, "%s/%s", root, rel);
        uint8_t d[BL_SHA256_BYTES];
        OK_E(bl_sha256_file(path, d, &e_));
        bl_hex(d, sizeof d, hex);
        const char *built = bl_json_get_string(bl_json_value_at(src, i), NULL);
        if (strcmp(built, hex) != 0)
            fail_msg("%s changed since this build was configured (hash %s, file %s): rebuild",
                     rel, built, hex);
    }
    size_t listed = 0;
    static const char *const folders[] = {"src/tasks", "src/rng", "src/run"};
    for (size_t f = 0; f < 3; f++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", root, folders[f]);
        DIR *dp = opendir(dir);
        assert_non_null(dp);
        struct dirent *de;
        while ((de = readdir(dp)) != NULL) {
            const size_t len = strlen(de->d_name);
            if (len > 2 && strcmp(de->d_name + len - 2, ".c") == 0) {
                char key[300];
                snprintf(key, sizeof key, "%s/%s", folders[f], de->d_name);
                if (!bl_json_get(src, key))
                    fail_msg("%s is missing from world_source_hashes (re-run cmake)", key);
                listed++;
            }
        }
        closedir(dp);
    }
    assert_true(listed >= 3);
    assert_non_null(bl_json_get(src, "src/tasks/controllers.c"));
    assert_non_null(bl_json_get(src, "src/tasks/adjust.c"));
    assert_non_null(bl_json_get(src, "src/run/run.c"));
    assert_non_null(bl_json_get(src, "src/rng/gen.c"));
    bl_json_destroy(sig);

    /* CartPole's cadence is its 24 frames. */
    bl_task_options_clear(&o);
    resolve(BL_TASK_CARTPOLE_PLANK_EASY, NULL, &o);
    OK_E(bl_calibration_signature(&o, 15000, 0, BL_FLOAT32, NULL, &sig, &e_));
    assert_int_equal(bl_json_get_int(bl_json_get(sig, "action_cadence")), 24);
    assert_string_equal(json_str(sig, "backend"), "cpu");
    assert_string_equal(json_str(bl_json_get(sig, "numerics"), "dtype"), "float32");
    bl_json_destroy(sig);
    bl_task_options_clear(&o);
}

static void test_signature_identity(void **state)
{
    (void)state;
    bl_task_options o;
    resolve(BL_TASK_TRACKING, NULL, &o);
    char base[65], again[65], other[65];
    signature_id(&o, 2000, 0, BL_FLOAT64, base);
    signature_id(&o, 2000, 0, BL_FLOAT64, again);
    assert_string_equal(base, again);
    signature_id(&o, 2001, 0, BL_FLOAT64, other);
    assert_string_not_equal(base, other);
    signature_id(&o, 2000, 1, BL_FLOAT64, other);
    assert_string_not_equal(base, other);
    signature_id(&o, 2000, 0, BL_FLOAT32, other);
    assert_string_not_equal(base, other);
    /* Task options are part of the contract. */
    bl_task_options o2;
    resolve(BL_TASK_TRACKING, "{\"sensory_gain\": 2.0}", &o2);
    signature_id(&o2, 2000, 0, BL_FLOAT64, other);
    assert_string_not_equal(base, other);
    bl_task_options_clear(&o2);

    /* Cadence, through the parts (a family's cadence is fixed). */
    bl_json *opts = NULL, *sig = NULL;
    OK_E(bl_task_options_json(&o, &opts, &e_));
    OK_E(bl_calibration_signature_parts("tracking", opts, 1, 2000, 0, BL_FLOAT64, "cpu", &sig,
                                        &e_));
    OK_E(bl_json_digest(sig, again, &e_));
    assert_string_equal(base, again);
    bl_json_destroy(sig);
    OK_E(bl_calibration_signature_parts("tracking", opts, 24, 2000, 0, BL_FLOAT64, "cpu", &sig,
                                        &e_));
    OK_E(bl_json_digest(sig, other, &e_));
    assert_string_not_equal(base, other);
    bl_json_destroy(sig);
    /* The signature owns a copy: changing the caller's options later does
     * not change it. */
    OK_E(bl_calibration_signature_parts("tracking", opts, 1, 2000, 0, BL_FLOAT64, "cpu", &sig,
                                        &e_));
    OK_E(bl_json_object_set(opts, "sensory_gain", bl_json_real(3.0), &e_));
    OK_E(bl_json_digest(sig, again, &e_));
    assert_string_equal(base, again);
    bl_json_destroy(sig);

    /* Reservoir keys are rejected; so are bad protocol values. */
    bl_error e = {0};
    OK_E(bl_json_object_set(opts, "node_count", bl_json_int(64), &e_));
    assert_int_equal(bl_calibration_signature_parts("tracking", opts, 1, 2000, 0, BL_FLOAT64,
                                                    "cpu", &sig, &e),
                     BL_EVALUE);
    assert_null(sig);
    assert_non_null(strstr(e.msg, "node_count"));
    bl_json_destroy(opts);
    const char *reservoir[] = {"node", "node_kind", "count", "n_nodes", "input_gain",
                               "topology"};
    for (size_t i = 0; i < 6; i++) {
        bl_json *bad = bl_json_object();
        assert_non_null(bad);
        OK_E(bl_json_object_set(bad, reservoir[i], bl_json_int(1), &e_));
        assert_int_equal(bl_calibration_signature_parts("pong", bad, 1, 7200, 0, BL_FLOAT64,
                                                        "cpu", &sig, &e),
                         BL_EVALUE);
        assert_non_null(strstr(e.msg, reservoir[i]));
        bl_json_destroy(bad);
    }
    assert_int_equal(bl_calibration_signature(&o, 0, 0, BL_FLOAT64, "cpu", &sig, &e), BL_EVALUE);
    assert_int_equal(bl_calibration_signature(&o, 2000, -1, BL_FLOAT64, "cpu", &sig, &e),
                     BL_EVALUE);
    assert_int_equal(bl_calibration_signature(&o, 2000, 0, BL_FLOAT64, "metal", &sig, &e),
                     BL_EVALUE);
    assert_null(sig);
    bl_task_options_clear(&o);
}

/* Pong worlds from bl_world_prepare_lazy equal those from bl_world_prepare
 * in every snapshot field at every tile boundary, in both dtypes, through
 * misses that draw rows on demand and through the table running out (a
 * failure): horizon 10 leaves 11 rows, far fewer than the misses of 8000
 * ticks with the paddle held at one edge. */
static void test_lazy_pong_draws(void **state)
{
    (void)state;
    bl_task_options o;
    bl_task_definition d;
    bl_test_task_defaults(BL_TASK_PONG, &o, &d);
    const int64_t prepared[2] = {7200, 10};
    for (int dd = 0; dd < 2; dd++)
        for (int hh = 0; hh < 2; hh++)
            for (int64_t block = 0; block < 3; block++) {
                const bl_dtype dt = dd ? BL_FLOAT32 : BL_FLOAT64;
                bl_gen ge, gl;
                bl_test_calibration_gen(&ge, "world", "pong", block, NULL);
                gl = ge;
                bl_world_init *eager = bl_test_prepare(&o, &ge, prepared[hh]);
                bl_world_init *lazy = NULL;
                OK_E(bl_world_prepare_lazy(&o, &gl, prepared[hh], &lazy, &e_));
                assert_int_equal(lazy->n_draws, eager->n_draws);
                OK_E(bl_world_init_validate(lazy, &o, &e_));
                const int64_t horizon = 8000;
                bl_worlds *we = NULL, *wl = NULL;
                OK_E(bl_worlds_create((const bl_world_init *const *)&eager, 1, &horizon, 0, dt,
                                      &we, &e_));
                OK_E(bl_worlds_create((const bl_world_init *const *)&lazy, 1, &horizon, 0, dt,
                                      &wl, &e_));
                bl_world_init_destroy(eager);
                bl_world_init_destroy(lazy);
                bl_controllers *ce = NULL, *cl = NULL;
                OK_E(bl_controllers_create(BL_POLICY_CONSTANT_LEFT, we, &ce, &e_));
                OK_E(bl_controllers_create(BL_POLICY_CONSTANT_LEFT, wl, &cl, &e_));
                assert_same_world(we, wl, 0, "lazy pong draws, created");
                int32_t ge_ = 1, gl_ = 1, fe = 0, fl = 0;
                for (int64_t start = 0; start < horizon; start += 500) {
                    OK_E(bl_worlds_run_control(we, ce, NULL, 500, &ge_, &fe, &e_));
                    OK_E(bl_worlds_run_control(wl, cl, NULL, 500, &gl_, &fl, &e_));
                    assert_same_world(we, wl, 0, "lazy pong draws, running");
                    assert_int_equal(ge_, gl_);
                    assert_int_equal(fe, fl);
                }
                /* The short table ran out: a failure, identically. */
                assert_int_equal(bl_worlds_finite(wl)[0], hh == 0);
                bl_controllers_destroy(ce);
                bl_controllers_destroy(cl);
                bl_worlds_destroy(we);
                bl_worlds_destroy(wl);
            }
    bl_task_options_clear(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_names),
        cmocka_unit_test(test_controller_validation_table),
        cmocka_unit_test(test_fused_equals_unfused_all_policies),
        cmocka_unit_test(test_fused_failures_latch_like_unfused),
        cmocka_unit_test(test_run_control_argument_checks),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_oracle_solves_all_presets),
        cmocka_unit_test(test_negative_controls),
        cmocka_unit_test(test_flipped_labels_leave_decisions),
        cmocka_unit_test(test_sensory_oracle_reads_only_receptors),
        cmocka_unit_test(test_oracle_rules_by_hand),
        cmocka_unit_test(test_null_scopes),
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_null_adjustment),
        cmocka_unit_test(test_signature_fields),
        cmocka_unit_test(test_signature_identity),
        cmocka_unit_test(test_lazy_pong_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
