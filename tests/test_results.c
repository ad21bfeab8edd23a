/* Results and statistics (include/brainlesslab/results.h): bootstrap
 * intervals, calibration records, null adjustment.
 *
 * - NumPy differential tests (tests/oracle/numpy_ref.py, written from the
 *   spec): seed_for with a 256-bit root, the §5.3 bootstrap, the §9.4
 *   null-mean bootstrap and the §5.5 adjusted interval, bit for bit;
 * - the three published CPU calibrations recomputed from their own
 *   signature and scores: signature ids, null statistics and record ids
 *   exactly, and read back from their files (tampering detected);
 * - one test per item of spec/tasks.md §10.4 (test_calibration.py 1–9);
 * - record validation, JSON forms, and allocation failure at every
 *   allocation of creating, serialising, parsing and reading records. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/results.h"
#include "results/results_internal.h"
#include "support.h"

/* The call must fail with `code` and a message containing `text`. */
#define FAILS(call, code, text)                                                \
    do {                                                                       \
        bl_error e_ = {0};                                                     \
        bl_status st_ = call;                                                  \
        if (st_ != (code) || !strstr(e_.msg, text))                            \
            fail_msg("%s: got %s '%s', expected %s '%s'", #call,               \
                     bl_status_kind(st_), e_.msg, bl_status_kind(code), text); \
    } while (0)

/* Equal bits, or both absent (NaN of any sign: NumPy's NaN comes from 0/0). */
static bool same_or_nan(double a, double b)
{
    return (isnan(a) && isnan(b)) || bl_test_bits(a) == bl_test_bits(b);
}

/* This build's signature of a task with default options and horizon. */
static bl_json *signature_for(bl_task_kind kind)
{
    bl_task_options o;
    bl_task_definition d;
    bl_json *sig;
    OK_E(bl_task_options_default(kind, &o, &e_));
    bl_task_define(&o, &d);
    OK_E(bl_calibration_signature(&o, d.default_horizon, 0, BL_FLOAT64, "cpu", &sig, &e_));
    bl_task_options_clear(&o);
    return sig;
}

static bl_calibration *empirical(bl_task_kind kind, const double *scores, int64_t root)
{
    bl_json *sig = signature_for(kind);
    bl_calibration *c;
    OK_E(bl_calibration_empirical(sig, scores, BL_NULL_TRAJECTORIES, NAN, NULL, root, 2000, &c,
                                  &e_));
    bl_json_destroy(sig);
    return c;
}

static bl_calibration *analytic(bl_task_kind kind)
{
    bl_json *sig = signature_for(kind);
    bl_calibration *c;
    OK_E(bl_calibration_analytic(sig, &c, &e_));
    bl_json_destroy(sig);
    return c;
}

/* The test's 256-bit seeds, distinct per (purpose, i). */
static bl_seed test_seed(const char *purpose, int64_t i, char hex[65])
{
    bl_seed s;
    const bl_key key = BL_KEY_I(i);
    OK_E(bl_seed_for(20240, "test", purpose, &key, 1, &s, &e_));
    if (hex)
        bl_seed_hex(&s, hex);
    return s;
}

/* The next oracle record as `n` doubles (heap copy). */
static double *next_doubles(const unsigned char *out, size_t len, size_t *pos, size_t n)
{
    size_t nb;
    const unsigned char *rec = bl_test_numpy_next(out, len, pos, &nb);
    assert_int_equal(nb, n * sizeof(double));
    double *v = malloc(n ? nb : 1);
    assert_non_null(v);
    memcpy(v, rec, nb);
    return v;
}

static double scores_0248[BL_NULL_TRAJECTORIES];

/* [0.2, 0.4, 0.6, 0.8] * 256: mean 0.5, as in test_calibration.py. */
static const double *quarter_scores(void)
{
    for (size_t i = 0; i < BL_NULL_TRAJECTORIES; i++)
        scores_0248[i] = 0.2 * (double)(i % 4 + 1);
    return scores_0248;
}

/* ---- seed_for with a 256-bit root ---------------------------------------- */

static void test_seed_for_seed(void **state)
{
    (void)state;
    /* A u64 root writes the same decimal as the int64 path. */
    static const int64_t small[] = {0, 1, 91337, INT64_MAX};
    const bl_key keys[2] = {BL_KEY_S("cal"), BL_KEY_I(7)};
    for (size_t i = 0; i < sizeof small / sizeof *small; i++) {
        bl_seed a, b, root = bl_seed_from_u64((uint64_t)small[i]);
        OK_E(bl_seed_for(small[i], "uncertainty", "model-block-bootstrap", keys, 2, &a, &e_));
        OK_E(bl_seed_for_seed(&root, "uncertainty", "model-block-bootstrap", keys, 2, &b, &e_));
        assert_memory_equal(&a, &b, sizeof a);
    }
    BL_REQUIRE_NUMPY();
    enum { N = 7 };
    bl_seed roots[N] = {{{0, 0, 0, 0}}, {{UINT64_MAX, 0, 0, 0}}, {{0, 1, 0, 0}},
                        {{UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX}}};
    for (int i = 4; i < N; i++)
        roots[i] = test_seed("roots", i, NULL);
    bl_buf req;
    bl_buf_init(&req);
    for (int i = 0; i < N; i++) {
        char dec[80], json[256];
        bl_seed_decimal(&roots[i], dec);
        snprintf(json, sizeof json, "[%s,\"uncertainty\",\"model-block-bootstrap\",[\"cal\",7]]",
                 dec);
        bl_buf_puts(&req, "seedfor ");
        for (const char *p = json; *p; p++)
            bl_buf_printf(&req, "%02x", (unsigned char)*p);
        bl_buf_putc(&req, '\n');
    }
    unsigned char *out;
    size_t len, pos = 0, nb;
    bl_test_numpy(req.data, &out, &len);
    bl_buf_clear(&req);
    for (int i = 0; i < N; i++) {
        const unsigned char *rec = bl_test_numpy_next(out, len, &pos, &nb);
        assert_true(nb > 32);
        bl_seed got;
        OK_E(bl_seed_for_seed(&roots[i], "uncertainty", "model-block-bootstrap", keys, 2, &got,
                              &e_));
        /* The seed is the digest read as a little-endian integer. */
        for (int b = 0; b < 32; b++)
            assert_int_equal((got.limb[b / 8] >> (8 * (b % 8))) & 0xff, rec[b]);
    }
    assert_int_equal(pos, len);
    free(out);
}

/* ---- §5.3 bootstrap against NumPy ----------------------------------------- */

static void test_bootstrap_interval_numpy(void **state)
{
    (void)state;
    bl_seed s = test_seed("boot", 0, NULL);
    double v[1] = {3.0}, out[2] = {7.0, 7.0};
    bool available = true;
    OK_E(bl_bootstrap_interval(v, 1, &s, 2000, out, &available, &e_));
    assert_false(available); /* one value: no interval, out untouched */
    BL_ASSERT_SAME_BITS(out[0], 7.0);
    BL_REQUIRE_NUMPY();

    static const size_t sizes[] = {2, 3, 7, 64, 1000, 9000};
    static const char *kinds[] = {"normal", "unit", "ties"};
    enum { NS = sizeof sizes / sizeof *sizes, NK = 3, NSEEDS = 2 };
    char dhex[NS][NK][NSEEDS][65], bhex[NS][NK][NSEEDS][65];
    bl_seed bseed[NS][NK][NSEEDS];
    bl_buf req;
    bl_buf_init(&req);
    for (size_t i = 0; i < NS; i++)
        for (size_t k = 0; k < NK; k++)
            for (size_t j = 0; j < NSEEDS; j++) {
                const int64_t c = (int64_t)((i * NK + k) * NSEEDS + j);
                /* m = 9000 (a mean past NumPy's 8192 block) with few rows. */
                const size_t reps = sizes[i] > 8192 ? 40 : 2000;
                test_seed("data", c, dhex[i][k][j]);
                bseed[i][k][j] = test_seed("bootstrap", c, bhex[i][k][j]);
                bl_buf_printf(&req, "data %s %zu %s\nbootstrap %s %zu %s %s %zu\n",
                              dhex[i][k][j], sizes[i], kinds[k], dhex[i][k][j], sizes[i],
                              kinds[k], bhex[i][k][j], reps);
            }
    unsigned char *out_np;
    size_t len, pos = 0, draws = 0;
    bl_test_numpy(req.data, &out_np, &len);
    bl_buf_clear(&req);
    for (size_t i = 0; i < NS; i++)
        for (size_t k = 0; k < NK; k++)
            for (size_t j = 0; j < NSEEDS; j++) {
                const size_t m = sizes[i], reps = m > 8192 ? 40 : 2000;
                double *data = next_doubles(out_np, len, &pos, m);
                double *want = next_doubles(out_np, len, &pos, 2 + reps);
                double got[2];
                OK_E(bl_bootstrap_interval(data, m, &bseed[i][k][j], reps, got, &available,
                                           &e_));
                assert_true(available);
                if (bl_test_bits(got[0]) != bl_test_bits(want[0]) ||
                    bl_test_bits(got[1]) != bl_test_bits(want[1]))
                    fail_msg("m=%zu %s seed %s: (%.17g, %.17g), numpy (%.17g, %.17g)", m,
                             kinds[k], bhex[i][k][j], got[0], got[1], want[0], want[1]);
                /* Every row mean too: NumPy's one reps x m call is the same
                 * stream as the row-by-row draws. */
                double *row = malloc(m * sizeof *row), *means = malloc(reps * sizeof *means);
                assert_true(row && means);
                bl_gen g;
                bl_gen_init(&g, &bseed[i][k][j]);
                bl_bootstrap_means(&g, data, m, reps, row, means);
                for (size_t r = 0; r < reps; r++)
                    if (bl_test_bits(means[r]) != bl_test_bits(want[2 + r]))
                        fail_msg("m=%zu row %zu: mean %.17g, numpy %.17g", m, r, means[r],
                                 want[2 + r]);
                draws += reps * m;
                free(row);
                free(means);
                free(data);
                free(want);
            }
    assert_int_equal(pos, len);
    free(out_np);
    print_message("  %d bootstraps, %zu resampled values\n", NS * NK * NSEEDS, draws);
}

/* ---- §9.4 null-mean bootstrap against NumPy ------------------------------- */

static void test_null_mean_bootstrap_numpy(void **state)
{
    (void)state;
    BL_REQUIRE_NUMPY();
    static const int64_t roots[] = {91337, 0, -7};
    static const char *kinds[] = {"unit", "nearu"};
    enum { NR = 3, NK = 2 };
    bl_json *sig = signature_for(BL_TASK_PONG);
    char sid[65], dhex[NR][NK][65];
    OK_E(bl_calibration_signature_id(sig, sid, &e_));
    bl_buf req;
    bl_buf_init(&req);
    for (size_t r = 0; r < NR; r++)
        for (size_t k = 0; k < NK; k++) {
            test_seed("null", (int64_t)(r * NK + k), dhex[r][k]);
            bl_buf_printf(&req, "data %s 1024 %s\nnullboot %lld %s %s %s 2000\n", dhex[r][k],
                          kinds[k], (long long)roots[r], sid, dhex[r][k], kinds[k]);
        }
    unsigned char *out;
    size_t len, pos = 0;
    bl_test_numpy(req.data, &out, &len);
    bl_buf_clear(&req);
    for (size_t r = 0; r < NR; r++)
        for (size_t k = 0; k < NK; k++) {
            double *scores = next_doubles(out, len, &pos, BL_NULL_TRAJECTORIES);
            double *want = next_doubles(out, len, &pos, 4);
            bl_calibration *c;
            OK_E(bl_calibration_empirical(sig, scores, BL_NULL_TRAJECTORIES, NAN, NULL, roots[r],
                                          2000, &c, &e_));
            BL_ASSERT_SAME_BITS(c->null_mean, want[0]);
            BL_ASSERT_SAME_BITS(c->null_standard_error, want[1]);
            BL_ASSERT_SAME_BITS(c->null_interval[0], want[2]);
            BL_ASSERT_SAME_BITS(c->null_interval[1], want[3]);
            bl_calibration_destroy(c);
            free(scores);
            free(want);
        }
    assert_int_equal(pos, len);
    free(out);
    bl_json_destroy(sig);
}

/* ---- §5.5 adjusted interval against NumPy --------------------------------- */

static void test_adjusted_interval_numpy(void **state)
{
    (void)state;
    BL_REQUIRE_NUMPY();
    /* null: "analytic" (delayed_cue), or data of 1024 pong scores. */
    static const struct {
        const char *null;
        size_t m;
        const char *kind;
    } cases[] = {
        {"analytic", 2, "unit"},   {"analytic", 3, "normal"}, {"analytic", 64, "unit"},
        {"unit", 2, "unit"},       {"unit", 5, "normal"},     {"unit", 64, "unit"},
        {"unit", 1000, "normal"},  {"nearu", 3, "unit"},      {"nearu", 7, "unit"},
    };
    enum { NC = sizeof cases / sizeof *cases };
    bl_calibration *cal[NC];
    char shex[NC][65], bhex[NC][65], nhex[NC][65];
    bl_seed seeds[NC];
    bl_buf req;
    bl_buf_init(&req);
    for (size_t i = 0; i < NC; i++) {
        seeds[i] = test_seed("summary", (int64_t)i, shex[i]);
        test_seed("blocks", (int64_t)i, bhex[i]);
        test_seed("nulls", (int64_t)i, nhex[i]);
        bl_buf_printf(&req, "data %s %zu %s\n", bhex[i], cases[i].m, cases[i].kind);
        if (strcmp(cases[i].null, "analytic") != 0)
            bl_buf_printf(&req, "data %s 1024 %s\n", nhex[i], cases[i].null);
    }
    unsigned char *out;
    size_t len, pos = 0;
    bl_test_numpy(req.data, &out, &len);
    double *blocks[NC];
    for (size_t i = 0; i < NC; i++) {
        blocks[i] = next_doubles(out, len, &pos, cases[i].m);
        if (strcmp(cases[i].null, "analytic") == 0) {
            cal[i] = analytic(BL_TASK_DELAYED_CUE);
        } else {
            double *scores = next_doubles(out, len, &pos, BL_NULL_TRAJECTORIES);
            cal[i] = empirical(BL_TASK_PONG, scores, 91337);
            free(scores);
        }
    }
    assert_int_equal(pos, len);
    free(out);

    /* Second batch: the adjusted intervals, keyed by each record's id. */
    bl_buf_reset(&req);
    for (size_t i = 0; i < NC; i++) {
        char null[80];
        if (strcmp(cases[i].null, "analytic") == 0)
            snprintf(null, sizeof null, "analytic");
        else
            snprintf(null, sizeof null, "%s:%s", nhex[i], cases[i].null);
        bl_buf_printf(&req, "adjusted %s %s %s %zu %s %s %.17g 2000\n", shex[i], cal[i]->id,
                      bhex[i], cases[i].m, cases[i].kind, null, cal[i]->upper_bound);
    }
    pos = 0;
    bl_test_numpy(req.data, &out, &len);
    bl_buf_clear(&req);
    size_t with_invalid = 0;
    for (size_t i = 0; i < NC; i++) {
        double *want = next_doubles(out, len, &pos, 9);
        bl_adjusted_interval a;
        OK_E(bl_adjusted_interval_compute(blocks[i], cases[i].m, cal[i], &seeds[i], 2000, &a,
                                          &e_));
        const double got[9] = {a.estimate,         a.raw_mean,         a.raw_interval[0],
                               a.raw_interval[1],  a.null_interval[0], a.null_interval[1],
                               a.interval[0],      a.interval[1],
                               (double)a.invalid_denominator_draws};
        static const char *names[9] = {"estimate", "raw_mean", "raw low", "raw high",
                                       "null low", "null high", "low",     "high",
                                       "invalid draws"};
        for (int k = 0; k < 9; k++)
            if (!same_or_nan(got[k], want[k]))
                fail_msg("case %zu (%s, m=%zu) %s: %.17g, numpy %.17g", i, cases[i].null,
                         cases[i].m, names[k], got[k], want[k]);
        assert_true(a.has_raw_interval);
        assert_int_equal(a.repetitions, 2000);
        assert_string_equal(a.calibration_id, cal[i]->id);
        assert_int_equal(a.status, a.invalid_denominator_draws ? BL_INTERVAL_INVALID_DENOMINATOR
                                                               : BL_INTERVAL_AVAILABLE);
        assert_int_equal(a.has_interval, a.invalid_denominator_draws == 0);
        with_invalid += a.invalid_denominator_draws > 0;
        free(want);
        free(blocks[i]);
        bl_calibration_destroy(cal[i]);
    }
    assert_int_equal(pos, len);
    free(out);
    /* The near-U nulls must really exercise the invalid-draw path. */
    assert_int_equal(with_invalid, 2);
}

/* ---- the published CPU calibrations (tasks.md §9.5) ------------------------ */

static const struct {
    const char *task, *record_id, *signature_id;
} published[] = {
    {"tracking", "de6328339702d33c8d24e28a73af83715b0266a9dba594ce078f7908d0012f82",
     "e9246f8699756712ea6b697fd4ef90488c6f5e9d21fd60185fa5e15cd089ce43"},
    {"pong", "d4cde488436da5ab6640d1f58772589bd2bfefc7769a47c436f7fe1dc2914882",
     "93daa67f7ed3167551c205ebfe1962a59558aa93fc4cc25df6a20f5e6270f012"},
    {"cartpole_plank_easy", "da8e4304893a41ed49aa02c6a612cf30370eeb57756d03a9d220ac80b2ec3317",
     "27e6fadd828f907d2a098a4b6d24d81d9a64ee274ce5b805bafefc6d214a7066"},
};

static void write_json(const char *path, const bl_json *doc)
{
    bl_buf b;
    bl_buf_init(&b);
    OK_E(bl_json_write(doc, BL_JSON_CANONICAL, &b, &e_));
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    assert_int_equal(fclose(f), 0);
    bl_buf_clear(&b);
}

static double real_at(const bl_json *o, const char *key, size_t i)
{
    const bl_json *v = bl_json_get(o, key);
    assert_non_null(v);
    return bl_json_get_real(bl_json_kindof(v) == BL_JSON_ARRAY ? bl_json_at(v, i) : v);
}

static void test_published_calibrations(void **state)
{
    BL_REQUIRE_SHARED();
    const char *dir = bl_test_dir(state);
    for (size_t t = 0; t < sizeof published / sizeof *published; t++) {
        char rel[128], path[4200];
        snprintf(rel, sizeof rel, "reference/calibrations/cpu-%s.json", published[t].task);
        snprintf(path, sizeof path, "%s", bl_test_shared_path(rel));
        bl_json *doc;
        OK_E(bl_json_read_file(path, &doc, &e_));
        bl_json *rec = bl_json_at(bl_json_get(doc, "calibrations"), 0);
        const bl_json *sig = bl_json_get(rec, "signature"), *jscores;
        assert_string_equal(bl_json_get_string(bl_json_get(rec, "id"), NULL),
                            published[t].record_id);

        /* Recomputed from the file's own signature and scores. */
        char sid[65];
        OK_E(bl_calibration_signature_id(sig, sid, &e_));
        assert_string_equal(sid, published[t].signature_id);
        jscores = bl_json_get(rec, "trial_scores");
        double scores[BL_NULL_TRAJECTORIES];
        assert_int_equal(bl_json_size(jscores), BL_NULL_TRAJECTORIES);
        for (size_t i = 0; i < BL_NULL_TRAJECTORIES; i++)
            scores[i] = bl_json_get_real(bl_json_at(jscores, i));
        bl_calibration *c;
        OK_E(bl_calibration_empirical(sig, scores, BL_NULL_TRAJECTORIES, NAN,
                                      bl_json_get(rec, "trajectory_ids"), 91337,
                                      BL_BOOTSTRAP_REPETITIONS, &c, &e_));
        BL_ASSERT_SAME_BITS(c->null_mean, real_at(rec, "null_mean", 0));
        BL_ASSERT_SAME_BITS(c->null_standard_error, real_at(rec, "null_standard_error", 0));
        BL_ASSERT_SAME_BITS(c->null_interval[0], real_at(rec, "null_interval", 0));
        BL_ASSERT_SAME_BITS(c->null_interval[1], real_at(rec, "null_interval", 1));
        BL_ASSERT_SAME_BITS(c->upper_bound, real_at(rec, "upper_bound", 0));
        assert_string_equal(c->signature_id, published[t].signature_id);
        assert_string_equal(c->id, published[t].record_id);
        bl_json *mine;
        OK_E(bl_calibration_json(c, &mine, &e_));
        assert_true(bl_json_equal(mine, rec));
        bl_json_destroy(mine);
        bl_calibration_destroy(c);

        /* Read back through the file reader; the document round-trips. */
        bl_calibration **cals;
        size_t n;
        OK_E(bl_calibrations_read_file(path, &cals, &n, &e_));
        assert_int_equal(n, 1);
        assert_string_equal(cals[0]->id, published[t].record_id);
        assert_string_equal(cals[0]->task, published[t].task);
        assert_false(cals[0]->analytic);
        bl_json *again;
        OK_E(bl_calibrations_document((const bl_calibration *const *)cals, n, &again, &e_));
        assert_true(bl_json_equal(again, doc));
        bl_json_destroy(again);
        bl_calibrations_destroy(cals, n);

        /* One ulp of null_mean edited on disk: the content hash says so. */
        char tampered[4300], link[4300];
        snprintf(tampered, sizeof tampered, "%s/%s.json", dir, published[t].task);
        OK_E(bl_json_object_set(rec, "null_mean",
                                bl_json_real(nextafter(real_at(rec, "null_mean", 0), INFINITY)),
                                &e_));
        write_json(tampered, doc);
        FAILS(bl_calibrations_read_file(tampered, &cals, &n, &e_), BL_EVALUE,
              "calibration content hash does not match the record");
        FAILS(bl_calibrations_read_file(tampered, &cals, &n, &e_), BL_EVALUE, tampered);
        assert_null(cals);
        assert_int_equal(n, 0);
        /* A link is refused even to an untouched file. */
        snprintf(link, sizeof link, "%s/%s-link.json", dir, published[t].task);
        assert_int_equal(symlink(path, link), 0);
        FAILS(bl_calibrations_read_file(link, &cals, &n, &e_), BL_EVALUE,
              "calibration cannot be a symlink");
        bl_json_destroy(doc);
    }
}

/* ---- tasks.md §10.4 (test_calibration.py) ---------------------------------- */

/* 1. Content identity, ownership, signature and empirical uncertainty. */
static void test_identity_ownership_and_uncertainty(void **state)
{
    (void)state;
    bl_json *sig = signature_for(BL_TASK_PONG);
    char sid[65];
    OK_E(bl_calibration_signature_id(sig, sid, &e_));
    double scores[BL_NULL_TRAJECTORIES];
    memcpy(scores, quarter_scores(), sizeof scores);
    bl_calibration *a, *b, *other;
    OK_E(bl_calibration_empirical(sig, scores, BL_NULL_TRAJECTORIES, NAN, NULL, 0, 2000, &a,
                                  &e_));
    OK_E(bl_calibration_empirical(sig, scores, BL_NULL_TRAJECTORIES, NAN, NULL, 0, 2000, &b,
                                  &e_));
    OK_E(bl_calibration_empirical(sig, scores, BL_NULL_TRAJECTORIES, NAN, NULL, 1, 2000, &other,
                                  &e_));
    /* The caller's data changes afterwards; the records do not. */
    OK_E(bl_json_object_set(sig, "warmup", bl_json_int(99), &e_));
    scores[0] = 1.0;
    assert_string_equal(a->signature_id, sid);
    char now[65];
    OK_E(bl_json_digest(a->signature, now, &e_));
    assert_string_equal(now, sid);
    BL_ASSERT_SAME_BITS(a->trial_scores[0], 0.2);

    BL_ASSERT_SAME_BITS(a->null_mean, 0.5);
    double sd;
    OK_E(bl_np_std(quarter_scores(), BL_NULL_TRAJECTORIES, 1, NULL, &sd, &e_));
    BL_ASSERT_SAME_BITS(a->null_standard_error, sd / 32.0);
    assert_true(a->null_interval[0] < 0.5 && 0.5 < a->null_interval[1]);
    assert_true(a->null_interval[1] - a->null_interval[0] < 4 * 2 * a->null_standard_error);
    assert_string_equal(a->id, b->id);
    assert_string_not_equal(a->id, other->id);
    BL_ASSERT_SAME_BITS(other->null_mean, a->null_mean);
    assert_int_equal(bl_json_size(a->trajectory_ids), BL_NULL_TRAJECTORIES);
    assert_int_equal(bl_json_get_int(bl_json_at(a->trajectory_ids, 1023)), 1023);

    /* JSON-serialisable, and back to the same record. */
    bl_json *j, *parsed;
    char *text;
    size_t len;
    bl_calibration *back;
    OK_E(bl_calibration_json(a, &j, &e_));
    OK_E(bl_json_canonical(j, &text, &len, &e_));
    OK_E(bl_json_parse(text, len, "record", &parsed, &e_));
    OK_E(bl_calibration_from_json(parsed, &back, &e_));
    assert_string_equal(back->id, a->id);
    assert_memory_equal(back->trial_scores, a->trial_scores, sizeof scores);
    BL_ASSERT_SAME_BITS(back->null_interval[1], a->null_interval[1]);
    bl_calibration_destroy(back);
    bl_json_destroy(parsed);
    bl_free(text);
    bl_json_destroy(j);
    bl_calibration_destroy(a);
    bl_calibration_destroy(b);
    bl_calibration_destroy(other);
    bl_json_destroy(sig);
}

static void set_path(bl_json *sig, const char *outer, const char *key, bl_json *v)
{
    bl_json *o = outer ? bl_json_get(sig, outer) : sig;
    assert_non_null(o);
    OK_E(bl_json_object_set(o, key, v, &e_));
}

/* 2. The task contract and protocol change the signature; reservoir design
 * cannot enter it. */
static void test_protocol_changes_signature_not_reservoir(void **state)
{
    (void)state;
    bl_json *base = signature_for(BL_TASK_TRACKING);
    enum { NV = 7 };
    char ids[NV][65];
    OK_E(bl_calibration_signature_id(base, ids[0], &e_));
    for (int v = 1; v < NV; v++) {
        bl_json *s = bl_json_copy(base);
        assert_non_null(s);
        const bl_json *hashes = bl_json_get(s, "world_source_hashes");
        switch (v) {
        case 1: set_path(s, NULL, "scoring_horizon", bl_json_int(2001)); break;
        case 2: set_path(s, NULL, "warmup", bl_json_int(5)); break;
        case 3: set_path(s, NULL, "action_cadence", bl_json_int(2)); break;
        case 4:
            set_path(s, "world_source_hashes", bl_json_key_at(hashes, 0, NULL),
                     bl_json_string("0000"));
            break;
        case 5: set_path(s, "numerics", "dtype", bl_json_string("float32")); break;
        default: set_path(s, NULL, "null_policy", bl_json_string("another-null-v1")); break;
        }
        OK_E(bl_calibration_signature_id(s, ids[v], &e_));
        for (int w = 0; w < v; w++)
            assert_string_not_equal(ids[v], ids[w]);
        bl_json_destroy(s);
    }
    static const char *reservoir[] = {"node", "node_kind", "node_count", "count", "n_nodes",
                                      "input_gain", "topology"};
    for (size_t k = 0; k < sizeof reservoir / sizeof *reservoir; k++) {
        bl_json *s = bl_json_copy(base);
        set_path(s, "task_options", reservoir[k], bl_json_int(64));
        char id[65];
        FAILS(bl_calibration_signature_id(s, id, &e_), BL_EVALUE, reservoir[k]);
        FAILS(bl_calibration_signature_id(s, id, &e_), BL_EVALUE, "reservoir keys");
        bl_json_destroy(s);
    }
    bl_json_destroy(base);
}

/* 3. Analytic chance and declared upper bounds. */
static void test_analytic_chance_and_declared_bounds(void **state)
{
    (void)state;
    bl_calibration *c = analytic(BL_TASK_DELAYED_CUE);
    assert_true(c->analytic);
    BL_ASSERT_SAME_BITS(c->null_mean, 0.5);
    BL_ASSERT_SAME_BITS(c->upper_bound, 1.0);
    BL_ASSERT_SAME_BITS(c->null_standard_error, 0.0);
    BL_ASSERT_SAME_BITS(c->null_interval[0], 0.5);
    BL_ASSERT_SAME_BITS(c->null_interval[1], 0.5);
    assert_int_equal(c->nscores, 0);
    assert_null(c->trial_scores);
    assert_int_equal(bl_json_size(c->trajectory_ids), 0);
    assert_int_equal(c->root_seed, 0);
    assert_int_equal(c->bootstrap_repetitions, 0);
    assert_string_equal(c->task, "delayed_cue");
    bl_json *j;
    OK_E(bl_calibration_json(c, &j, &e_));
    assert_string_equal(bl_json_get_string(bl_json_get(j, "method"), NULL), "analytic");
    assert_int_equal(bl_json_kindof(bl_json_get(j, "upper_bound")), BL_JSON_REAL);
    bl_json_destroy(j);
    bl_calibration_destroy(c);
    bl_calibration_destroy(analytic(BL_TASK_REVERSAL_ADAPTATION));

    bl_json *pong = signature_for(BL_TASK_PONG);
    FAILS(bl_calibration_analytic(pong, &c, &e_), BL_EVALUE, "binary tasks, not pong");
    bl_json_destroy(pong);

    bl_json *cart = signature_for(BL_TASK_CARTPOLE_PLANK_EASY);
    double steps[BL_NULL_TRAJECTORIES];
    for (size_t i = 0; i < BL_NULL_TRAJECTORIES; i++)
        steps[i] = (double)(7 + i % 88);
    bl_calibration *d, *e;
    OK_E(bl_calibration_empirical(cart, steps, BL_NULL_TRAJECTORIES, NAN, NULL, 3, 2000, &d,
                                  &e_));
    BL_ASSERT_SAME_BITS(d->upper_bound, 15000.0);
    OK_E(bl_calibration_empirical(cart, steps, BL_NULL_TRAJECTORIES, 15000.0, NULL, 3, 2000, &e,
                                  &e_));
    assert_string_equal(d->id, e->id);
    FAILS(bl_calibration_empirical(cart, steps, BL_NULL_TRAJECTORIES, 1.0, NULL, 3, 2000, &c,
                                   &e_),
          BL_EVALUE, "upper_bound must equal the declared bound");
    bl_calibration_destroy(d);
    bl_calibration_destroy(e);
    bl_json_destroy(cart);
}

/* 4. Adjustment keeps negative values and the calibration identity. */
static void test_adjustment_keeps_negatives_and_identity(void **state)
{
    (void)state;
    bl_calibration *c = analytic(BL_TASK_DELAYED_CUE);
    double norm;
    bl_adjust_status st;
    char id[65];
    bl_outcome_adjust(0.25, c, &norm, &st, id);
    BL_ASSERT_SAME_BITS(norm, -0.5);
    assert_int_equal(st, BL_ADJUST_ANALYTIC);
    assert_string_equal(bl_adjust_status_name(st), "null_adjusted_analytic");
    assert_string_equal(id, c->id);
    bl_outcome_adjust(1.1, c, &norm, &st, id);
    BL_ASSERT_SAME_BITS(norm, (1.1 - 0.5) / 0.5); /* 1.2, never clipped */
    bl_outcome_adjust(0.7, NULL, &norm, &st, id);
    assert_int_equal(st, BL_ADJUST_UNAVAILABLE);
    assert_true(isnan(norm));
    assert_string_equal(id, "");
    bl_outcome_adjust(NAN, c, &norm, &st, id);
    assert_int_equal(st, BL_ADJUST_NO_OUTCOME);
    assert_string_equal(bl_adjust_status_name(st), "no_scalar_outcome");
    assert_true(isnan(norm));
    assert_string_equal(id, "");
    bl_calibration_destroy(c);

    c = empirical(BL_TASK_PONG, quarter_scores(), 0);
    bl_outcome_adjust(0.75, c, &norm, &st, id);
    BL_ASSERT_SAME_BITS(norm, 0.5);
    assert_int_equal(st, BL_ADJUST_EMPIRICAL);
    assert_string_equal(id, c->id);
    bl_calibration_destroy(c);
}

/* 5. Independent model-block and null-trajectory streams, recomputed here
 * from the spec's words with the generators and NumPy statistics. */
static void test_bootstrap_uses_two_named_streams(void **state)
{
    (void)state;
    bl_calibration *c = empirical(BL_TASK_PONG, quarter_scores(), 0);
    const double blocks[2] = {0.5, 1.0};
    const bl_seed seed = test_seed("summary", 99, NULL);
    bl_adjusted_interval a;
    OK_E(bl_adjusted_interval_compute(blocks, 2, c, &seed, 2000, &a, &e_));
    BL_ASSERT_SAME_BITS(a.estimate, 0.5);
    BL_ASSERT_SAME_BITS(a.raw_mean, 0.75);
    assert_int_equal(a.status, BL_INTERVAL_AVAILABLE);
    assert_string_equal(bl_interval_status_name(a.status), "available");
    assert_int_equal(a.invalid_denominator_draws, 0);

    bl_seed sm, sn;
    const bl_key key = BL_KEY_S(c->id);
    OK_E(bl_seed_for_seed(&seed, "uncertainty", "model-block-bootstrap", &key, 1, &sm, &e_));
    OK_E(bl_seed_for_seed(&seed, "uncertainty", "calibration-trajectory-bootstrap", &key, 1, &sn,
                          &e_));
    bl_gen gm, gn;
    bl_gen_init(&gm, &sm);
    bl_gen_init(&gn, &sn);
    static double raw[2000], null[2000], ratio[2000], row[BL_NULL_TRAJECTORIES];
    for (size_t r = 0; r < 2000; r++) {
        double two[2];
        for (int i = 0; i < 2; i++)
            two[i] = blocks[bl_gen_integers(&gm, 0, 2)];
        raw[r] = bl_np_mean(two, 2);
        for (size_t i = 0; i < BL_NULL_TRAJECTORIES; i++)
            row[i] = c->trial_scores[bl_gen_integers(&gn, 0, BL_NULL_TRAJECTORIES)];
        null[r] = bl_np_mean(row, BL_NULL_TRAJECTORIES);
        ratio[r] = (raw[r] - null[r]) / (1.0 - null[r]);
    }
    const double *draws[3] = {raw, null, ratio};
    const double *got[3] = {a.raw_interval, a.null_interval, a.interval};
    for (int k = 0; k < 3; k++) {
        double lo, hi;
        OK_E(bl_np_quantile(draws[k], 2000, 0.025, NULL, &lo, &e_));
        OK_E(bl_np_quantile(draws[k], 2000, 0.975, NULL, &hi, &e_));
        BL_ASSERT_SAME_BITS(got[k][0], lo);
        BL_ASSERT_SAME_BITS(got[k][1], hi);
    }
    bl_calibration_destroy(c);
}

/* 6. Equal model blocks: the null's uncertainty still widens the interval. */
static void test_null_uncertainty_propagates_with_equal_blocks(void **state)
{
    (void)state;
    bl_calibration *c = empirical(BL_TASK_PONG, quarter_scores(), 0);
    const double blocks[4] = {0.75, 0.75, 0.75, 0.75};
    const bl_seed seed = test_seed("summary", 6, NULL);
    bl_adjusted_interval a;
    OK_E(bl_adjusted_interval_compute(blocks, 4, c, &seed, 2000, &a, &e_));
    BL_ASSERT_SAME_BITS(a.raw_interval[0], 0.75);
    BL_ASSERT_SAME_BITS(a.raw_interval[1], 0.75);
    assert_int_equal(a.status, BL_INTERVAL_AVAILABLE);
    assert_true(a.interval[0] < a.estimate && a.estimate < a.interval[1]);
    bl_calibration_destroy(c);
}

/* 7. One block: a point estimate, no interval. */
static void test_one_block_has_no_interval(void **state)
{
    (void)state;
    bl_calibration *c = empirical(BL_TASK_PONG, quarter_scores(), 0);
    const double block = 0.75;
    const bl_seed seed = test_seed("summary", 7, NULL);
    bl_adjusted_interval a;
    OK_E(bl_adjusted_interval_compute(&block, 1, c, &seed, 2000, &a, &e_));
    assert_int_equal(a.status, BL_INTERVAL_INSUFFICIENT_BLOCKS);
    assert_string_equal(bl_interval_status_name(a.status), "insufficient_independent_blocks");
    assert_int_equal(a.repetitions, 0);
    assert_int_equal(a.invalid_denominator_draws, 0);
    assert_false(a.has_interval);
    assert_false(a.has_raw_interval);
    BL_ASSERT_SAME_BITS(a.estimate, 0.5);
    BL_ASSERT_SAME_BITS(a.null_interval[0], c->null_interval[0]);
    BL_ASSERT_SAME_BITS(a.null_interval[1], c->null_interval[1]);
    bl_json *j;
    OK_E(bl_adjusted_interval_json(&a, &j, &e_));
    assert_int_equal(bl_json_kindof(bl_json_get(j, "interval")), BL_JSON_NULL);
    assert_int_equal(bl_json_kindof(bl_json_get(j, "raw_interval")), BL_JSON_NULL);
    assert_int_equal(bl_json_get_int(bl_json_get(j, "repetitions")), 0);
    bl_json_destroy(j);
    bl_calibration_destroy(c);
}

/* 8. Invalid denominators: no value, and every bad draw counted. */
static void test_invalid_denominators_counted_never_dropped(void **state)
{
    (void)state;
    double scores[BL_NULL_TRAJECTORIES];
    for (size_t i = 0; i < BL_NULL_TRAJECTORIES; i++)
        scores[i] = 1.0;
    bl_calibration *at_u = empirical(BL_TASK_PONG, scores, 0);
    scores[17] = 0.0;
    bl_calibration *near_u = empirical(BL_TASK_PONG, scores, 0);
    const double blocks[3] = {0.5, 0.6, 0.7};
    const bl_seed seed = test_seed("summary", 8, NULL);
    double norm;
    bl_adjust_status st;
    char id[65];

    bl_outcome_adjust(0.6, at_u, &norm, &st, id);
    assert_int_equal(st, BL_ADJUST_BAD_DENOMINATOR);
    assert_true(isnan(norm));
    assert_string_equal(id, at_u->id);
    bl_adjusted_interval a;
    OK_E(bl_adjusted_interval_compute(blocks, 3, at_u, &seed, 2000, &a, &e_));
    assert_true(isnan(a.estimate));
    assert_int_equal(a.invalid_denominator_draws, 2000);
    assert_int_equal(a.repetitions, 2000);
    assert_false(a.has_interval);
    assert_true(a.has_raw_interval);
    assert_int_equal(a.status, BL_INTERVAL_INVALID_DENOMINATOR);
    assert_string_equal(bl_interval_status_name(a.status), "invalid_calibration_denominator");

    OK_E(bl_adjusted_interval_compute(blocks, 3, near_u, &seed, 2000, &a, &e_));
    assert_true(isfinite(a.estimate));
    assert_true(a.invalid_denominator_draws > 0 && a.invalid_denominator_draws < 2000);
    assert_false(a.has_interval);
    assert_int_equal(a.status, BL_INTERVAL_INVALID_DENOMINATOR);
    bl_json *j;
    OK_E(bl_adjusted_interval_json(&a, &j, &e_));
    assert_int_equal(bl_json_kindof(bl_json_get(j, "interval")), BL_JSON_NULL);
    assert_int_equal(bl_json_get_int(bl_json_get(j, "invalid_denominator_draws")),
                     a.invalid_denominator_draws);
    bl_json_destroy(j);
    bl_calibration_destroy(at_u);
    bl_calibration_destroy(near_u);
}

/* 9. Invalid calibration inputs are rejected. */
static void test_invalid_calibration_inputs_rejected(void **state)
{
    (void)state;
    bl_json *track = signature_for(BL_TASK_TRACKING);
    double s[BL_NULL_TRAJECTORIES + 1];
    for (size_t i = 0; i <= BL_NULL_TRAJECTORIES; i++)
        s[i] = -0.5 + (double)i / 1024.0;
    bl_calibration *c;
    FAILS(bl_calibration_empirical(track, s, 1023, NAN, NULL, 0, 2000, &c, &e_), BL_EVALUE,
          "exactly 1024 trial scores, got 1023");
    FAILS(bl_calibration_empirical(track, s, 1025, NAN, NULL, 0, 2000, &c, &e_), BL_EVALUE,
          "exactly 1024 trial scores");
    const double bad[3] = {NAN, -1.1, 2.0};
    const char *why[3] = {"finite", "within [-1, 1]", "within [-1, 1]"};
    for (int k = 0; k < 3; k++) {
        const double keep = s[5];
        s[5] = bad[k];
        FAILS(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, NULL, 0, 2000, &c,
                                       &e_),
              BL_EVALUE, why[k]);
        s[5] = keep;
    }
    /* -1 and 1 themselves are allowed for tracking. */
    s[0] = -1.0;
    s[1] = 1.0;
    OK_E(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, NULL, 0, 2, &c, &e_));
    bl_calibration_destroy(c);
    FAILS(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, NULL, 0, 1, &c, &e_),
          BL_EVALUE, "bootstrap_repetitions must be >= 2");

    /* Ids: 1024 distinct strings or ints; 7 and "7" are distinct. */
    bl_json *ids = bl_json_array();
    for (int i = 0; i < BL_NULL_TRAJECTORIES; i++) {
        char text[16];
        snprintf(text, sizeof text, "%d", i);
        OK_E(bl_json_array_append(ids, i % 2 ? bl_json_string(text) : bl_json_int(i), &e_));
    }
    OK_E(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, ids, 0, 2, &c, &e_));
    bl_calibration_destroy(c);
    bl_json *dup = bl_json_copy(ids);
    OK_E(bl_json_array_append(dup, bl_json_string("1"), &e_)); /* 1025 ids */
    FAILS(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, dup, 0, 2, &c, &e_),
          BL_EVALUE, "exactly 1024 trajectory ids");
    bl_json_destroy(dup);
    /* One repeated id among distinct ones; then one bool among ints. */
    bl_json *twice = bl_json_array(), *flagged = bl_json_array();
    for (int i = 0; i < BL_NULL_TRAJECTORIES; i++) {
        char text[16];
        snprintf(text, sizeof text, "id%d", i == 700 ? 3 : i);
        OK_E(bl_json_array_append(twice, bl_json_string(text), &e_));
        OK_E(bl_json_array_append(flagged, i == 9 ? bl_json_bool(true) : bl_json_int(i), &e_));
    }
    FAILS(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, twice, 0, 2, &c, &e_),
          BL_EVALUE, "must be distinct");
    FAILS(bl_calibration_empirical(track, s, BL_NULL_TRAJECTORIES, NAN, flagged, 0, 2, &c, &e_),
          BL_EVALUE, "strings or 64-bit integers");
    bl_json_destroy(twice);
    bl_json_destroy(flagged);
    bl_json_destroy(ids);

    /* NaN model blocks. */
    c = empirical(BL_TASK_PONG, quarter_scores(), 0);
    const double blocks[3] = {0.5, NAN, 0.7};
    const bl_seed seed = test_seed("summary", 9, NULL);
    bl_adjusted_interval a;
    FAILS(bl_adjusted_interval_compute(blocks, 3, c, &seed, 2000, &a, &e_), BL_EVALUE,
          "block means must be finite");
    FAILS(bl_adjusted_interval_compute(blocks, 1, c, &seed, 0, &a, &e_), BL_EVALUE,
          "repetitions must be >= 1");
    FAILS(bl_adjusted_interval_compute(blocks, 1, NULL, &seed, 2000, &a, &e_), BL_EVALUE,
          "needs a calibration record");

    /* A tampered record. */
    bl_json *j;
    bl_calibration *back;
    OK_E(bl_calibration_json(c, &j, &e_));
    OK_E(bl_json_object_set(j, "null_mean", bl_json_real(0.25), &e_));
    FAILS(bl_calibration_from_json(j, &back, &e_), BL_EVALUE,
          "calibration content hash does not match the record");
    bl_json_destroy(j);
    bl_calibration_destroy(c);
    bl_json_destroy(track);
}

/* ---- record validation and JSON forms -------------------------------------- */

static void test_record_and_document_validation(void **state)
{
    (void)state;
    bl_calibration *c = empirical(BL_TASK_PONG, quarter_scores(), 4), *back;
    bl_json *good;
    OK_E(bl_calibration_json(c, &good, &e_));
    static const struct {
        const char *outer, *key, *json, *message;
    } edits[] = {
        {NULL, "frozen", "false", "calibration records must be frozen"},
        {NULL, "method", "\"bayes\"", "method must be 'analytic' or 'empirical'"},
        {NULL, "id", "5", "calibration id must be a string"},
        {NULL, "extra", "1", "calibration record has an unknown field 'extra'"},
        {NULL, "root_seed", "1.5", "root_seed and bootstrap_repetitions must be integers"},
        {NULL, "null_mean", "true", "null_mean must be a finite number"},
        {NULL, "null_interval", "[0.1]", "null_interval must be a pair of numbers"},
        {NULL, "trial_scores", "{}", "must be lists"},
        {NULL, "upper_bound", "2.0", "declared bound of pong"},
        {NULL, "method", "\"analytic\"", "binary tasks, not pong"},
        {"signature", "backend", "\"tpu\"", "unsupported calibration backend"},
        {"signature", "backend", "\"metal\"", "Metal requires Float32"},
        {"signature", "task", "\"juggling\"", "unsupported task 'juggling'"},
        {"signature", "architecture", "\"\"", "architecture must be a non-empty string"},
        {"signature", "rng_scheme", "\"other\"", "rng_scheme must equal numerics.rng"},
        {"signature", "scoring_horizon", "0", "scoring_horizon must be >= 1"},
        {"signature", "warmup", "-1", "warmup must be >= 0"},
        {"signature", "action_cadence", "true", "action_cadence must be >= 1"},
        {"signature", "world_source_hashes", "{}", "world_source_hashes must map"},
        {"signature", "extra", "1", "calibration signature has an unknown field 'extra'"},
        {"numerics", "fast_math", "true", "strict ordered arithmetic and philox-host-v1"},
        {"numerics", "dtype", "\"float16\"", "dtype must be float64 or float32"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        bl_json *r = bl_json_copy(good), *v;
        bl_json *o = !edits[i].outer ? r
                     : strcmp(edits[i].outer, "numerics") == 0
                         ? bl_json_get(bl_json_get(r, "signature"), "numerics")
                         : bl_json_get(r, edits[i].outer);
        OK_E(bl_json_parse(edits[i].json, strlen(edits[i].json), "edit", &v, &e_));
        OK_E(bl_json_object_set(o, edits[i].key, v, &e_));
        FAILS(bl_calibration_from_json(r, &back, &e_), BL_EVALUE, edits[i].message);
        bl_json_destroy(r);
    }
    static const char *const required[] = {"trial_scores", "id", "signature"};
    for (size_t i = 0; i < 3; i++) {
        bl_json *r = bl_json_object();
        for (size_t k = 0; k < bl_json_size(good); k++) {
            const char *key = bl_json_key_at(good, k, NULL);
            if (strcmp(key, required[i]) != 0)
                OK_E(bl_json_object_set(r, key, bl_json_copy(bl_json_value_at(good, k)), &e_));
        }
        char want[64];
        snprintf(want, sizeof want, "calibration record is missing '%s'", required[i]);
        FAILS(bl_calibration_from_json(r, &back, &e_), BL_EVALUE, want);
        bl_json_destroy(r);
    }
    /* Integers stand for reals as Python's float() would read them; the
     * record is rebuilt with reals, so its hash still matches. */
    bl_json *r = bl_json_copy(good);
    OK_E(bl_json_object_set(r, "upper_bound", bl_json_int(1), &e_));
    OK_E(bl_calibration_from_json(r, &back, &e_));
    assert_string_equal(back->id, c->id);
    bl_calibration_destroy(back);
    bl_json_destroy(r);

    /* Documents: format and version. */
    char *dir = bl_test_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/cal.json", dir);
    const bl_calibration *both[2] = {c, NULL};
    both[1] = analytic(BL_TASK_TEMPORAL_ORDER);
    bl_json *doc;
    OK_E(bl_calibrations_document(both, 2, &doc, &e_));
    write_json(path, doc);
    bl_calibration **cals;
    size_t n;
    OK_E(bl_calibrations_read_file(path, &cals, &n, &e_));
    assert_int_equal(n, 2);
    assert_string_equal(cals[0]->id, c->id);
    assert_true(cals[1]->analytic);
    assert_string_equal(cals[1]->id, both[1]->id);
    bl_calibrations_destroy(cals, n);
    static const struct {
        const char *key, *json, *message;
    } docs[] = {
        {"version", "2", "unsupported calibration format"},
        {"format", "\"brainlesslab-records\"", "unsupported calibration format"},
        {"calibrations", "{}", "needs a 'calibrations' list"},
        {"calibrations", "[1]", "calibrations[0]: calibration record must be a mapping"},
    };
    for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
        bl_json *d = bl_json_copy(doc), *v;
        OK_E(bl_json_parse(docs[i].json, strlen(docs[i].json), "edit", &v, &e_));
        OK_E(bl_json_object_set(d, docs[i].key, v, &e_));
        write_json(path, d);
        FAILS(bl_calibrations_read_file(path, &cals, &n, &e_), BL_EVALUE, docs[i].message);
        bl_json_destroy(d);
    }
    FAILS(bl_calibrations_read_file(dir, &cals, &n, &e_), BL_EISDIR, "");
    bl_json_destroy(doc);
    bl_test_rmtree(dir);
    free(dir);
    bl_calibration_destroy((bl_calibration *)both[1]);
    bl_json_destroy(good);
    bl_calibration_destroy(c);
}

static void test_adjusted_interval_json(void **state)
{
    (void)state;
    bl_calibration *c = analytic(BL_TASK_DELAYED_CUE);
    const double blocks[3] = {0.5, 0.75, 1.0};
    const bl_seed seed = test_seed("summary", 10, NULL);
    bl_adjusted_interval a;
    OK_E(bl_adjusted_interval_compute(blocks, 3, c, &seed, 500, &a, &e_));
    BL_ASSERT_SAME_BITS(a.null_interval[0], 0.5); /* analytic: the constant null */
    BL_ASSERT_SAME_BITS(a.null_interval[1], 0.5);
    bl_json *j;
    char *text;
    size_t len;
    OK_E(bl_adjusted_interval_json(&a, &j, &e_));
    static const char *order[] = {"estimate",      "interval",
                                  "raw_mean",      "raw_interval",
                                  "null_mean",     "null_interval",
                                  "status",        "invalid_denominator_draws",
                                  "repetitions",   "calibration_id"};
    assert_int_equal(bl_json_size(j), 10);
    for (size_t k = 0; k < 10; k++)
        assert_string_equal(bl_json_key_at(j, k, NULL), order[k]);
    assert_string_equal(bl_json_get_string(bl_json_get(j, "status"), NULL), "available");
    assert_string_equal(bl_json_get_string(bl_json_get(j, "calibration_id"), NULL), c->id);
    assert_int_equal(bl_json_get_int(bl_json_get(j, "repetitions")), 500);
    OK_E(bl_json_canonical(j, &text, &len, &e_));
    assert_non_null(strstr(text, "\"null_interval\":[0.5,0.5]"));
    bl_free(text);
    bl_json_destroy(j);
    /* No blocks at all: no raw mean, written as null. */
    OK_E(bl_adjusted_interval_compute(blocks, 0, c, &seed, 500, &a, &e_));
    OK_E(bl_adjusted_interval_json(&a, &j, &e_));
    assert_int_equal(bl_json_kindof(bl_json_get(j, "raw_mean")), BL_JSON_NULL);
    assert_int_equal(bl_json_kindof(bl_json_get(j, "estimate")), BL_JSON_NULL);
    bl_json_destroy(j);
    bl_calibration_destroy(c);
}

/* ---- allocation failures --------------------------------------------------- */

/* Each stage runs on prepared inputs and frees what it made, so every one
 * of its allocations can be failed in turn at a cost of (its allocations)^2
 * rather than the whole workload's. */
typedef struct alloc_ctx {
    const bl_json *pong, *cue, *record;
    const bl_calibration *emp, *ana;
    const char *path;
} alloc_ctx;

static bl_status stage_signature(const alloc_ctx *x, bl_error *err)
{
    char sid[65];
    return bl_calibration_signature_id(x->pong, sid, err);
}

static bl_status stage_create(const alloc_ctx *x, bl_error *err)
{
    bl_calibration *emp = NULL, *ana = NULL;
    bl_status st = bl_calibration_empirical(x->pong, scores_0248, BL_NULL_TRAJECTORIES, NAN,
                                            NULL, 5, 20, &emp, err);
    if (st == BL_OK)
        st = bl_calibration_analytic(x->cue, &ana, err);
    bl_calibration_destroy(emp);
    bl_calibration_destroy(ana);
    return st;
}

static bl_status stage_serialise(const alloc_ctx *x, bl_error *err)
{
    bl_json *doc = NULL;
    bl_status st = bl_calibrations_document((const bl_calibration *const[]){x->emp, x->ana}, 2,
                                            &doc, err);
    bl_json_destroy(doc);
    return st;
}

static bl_status stage_parse(const alloc_ctx *x, bl_error *err)
{
    bl_calibration *c = NULL, **read = NULL;
    size_t n = 0;
    bl_status st = bl_calibration_from_json(x->record, &c, err);
    /* The file holds the analytic record only: the empirical one's parse is
     * the line above, the file adds the document and reading paths. */
    if (st == BL_OK)
        st = bl_calibrations_read_file(x->path, &read, &n, err);
    bl_calibration_destroy(c);
    bl_calibrations_destroy(read, n);
    return st;
}

static bl_status stage_intervals(const alloc_ctx *x, bl_error *err)
{
    const double blocks[3] = {0.25, 0.5, 0.75};
    const bl_seed seed = bl_seed_from_u64(5);
    bl_adjusted_interval a;
    double interval[2];
    bool available;
    bl_json *adj = NULL;
    bl_status st = bl_adjusted_interval_compute(blocks, 3, x->emp, &seed, 20, &a, err);
    if (st == BL_OK)
        st = bl_adjusted_interval_json(&a, &adj, err);
    if (st == BL_OK)
        st = bl_bootstrap_interval(blocks, 3, &seed, 20, interval, &available, err);
    bl_json_destroy(adj);
    return st;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    quarter_scores();
    bl_json *pong = signature_for(BL_TASK_PONG), *cue = signature_for(BL_TASK_DELAYED_CUE);
    char *dir = bl_test_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/cal.json", dir);
    bl_calibration *emp = empirical(BL_TASK_PONG, scores_0248, 5), *ana = analytic(BL_TASK_DELAYED_CUE);
    bl_json *doc, *record;
    OK_E(bl_calibrations_document((const bl_calibration *const[]){ana}, 1, &doc, &e_));
    write_json(path, doc);
    OK_E(bl_calibration_json(emp, &record, &e_));

    const alloc_ctx x = {pong, cue, record, emp, ana, path};
    static const struct {
        const char *name;
        bl_status (*run)(const alloc_ctx *, bl_error *);
    } stages[] = {
        {"signature id", stage_signature},      {"create", stage_create},
        {"serialise", stage_serialise},         {"parse and read", stage_parse},
        {"intervals", stage_intervals},
    };
    for (size_t s = 0; s < sizeof stages / sizeof *stages; s++) {
        bl_alloc_fail_at(0);
        OK_E(stages[s].run(&x, &e_));
        const long total = bl_alloc_count();
        assert_true(total >= 1);
        for (long k = 1; k <= total; k++) {
            bl_error err = {0};
            bl_alloc_fail_at(k);
            bl_status st = stages[s].run(&x, &err);
            bl_alloc_fail_at(0);
            if (st != BL_ENOMEM || !err.msg[0])
                fail_msg("%s, allocation %ld of %ld failing: %s '%s'", stages[s].name, k, total,
                         bl_status_kind(st), err.msg);
        }
        print_message("  %s: %ld allocations, each failed in turn\n", stages[s].name, total);
    }
    bl_test_rmtree(dir);
    free(dir);
    bl_json_destroy(record);
    bl_json_destroy(doc);
    bl_calibration_destroy(emp);
    bl_calibration_destroy(ana);
    bl_json_destroy(pong);
    bl_json_destroy(cue);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_for_seed),
        cmocka_unit_test(test_bootstrap_interval_numpy),
        cmocka_unit_test(test_null_mean_bootstrap_numpy),
        cmocka_unit_test(test_adjusted_interval_numpy),
        BL_TEST_IN_DIR(test_published_calibrations),
        cmocka_unit_test(test_identity_ownership_and_uncertainty),
        cmocka_unit_test(test_protocol_changes_signature_not_reservoir),
        cmocka_unit_test(test_analytic_chance_and_declared_bounds),
        cmocka_unit_test(test_adjustment_keeps_negatives_and_identity),
        cmocka_unit_test(test_bootstrap_uses_two_named_streams),
        cmocka_unit_test(test_null_uncertainty_propagates_with_equal_blocks),
        cmocka_unit_test(test_one_block_has_no_interval),
        cmocka_unit_test(test_invalid_denominators_counted_never_dropped),
        cmocka_unit_test(test_invalid_calibration_inputs_rejected),
        cmocka_unit_test(test_record_and_document_validation),
        cmocka_unit_test(test_adjusted_interval_json),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
