/* Probe decoding (spec/platform.md §6): the seven tests of §8
 * test_analysis.py on synthetic observations (all ten corruptions), the
 * readers of a record's probe files (.npz, CSV), and the `decode` command on
 * a record the built program makes. tests/test_decode_numpy.py compares the
 * numbers with Debian's NumPy. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/analysis.h"
#include "brainlesslab/json.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "brainlesslab/rng.h"
#include "record_support.h"
#include "support.h"

/* ---- synthetic observations ------------------------------------------------ */

enum { NF = 32, MAX_TRIALS = 1280 };

static const char *const all_points[] = {"cue_end", "delay_end", "response"};
/* "neuron/0" ... "neuron/31", and the same with the last one renamed. */
#define NAMES_30 \
    "neuron/0", "neuron/1", "neuron/2", "neuron/3", "neuron/4", "neuron/5", "neuron/6", \
    "neuron/7", "neuron/8", "neuron/9", "neuron/10", "neuron/11", "neuron/12", "neuron/13", \
    "neuron/14", "neuron/15", "neuron/16", "neuron/17", "neuron/18", "neuron/19", "neuron/20", \
    "neuron/21", "neuron/22", "neuron/23", "neuron/24", "neuron/25", "neuron/26", \
    "neuron/27", "neuron/28", "neuron/29"
static const char *const feature_names[NF] = {NAMES_30, "neuron/30", "neuron/31"};
static const char *const other_names[NF] = {NAMES_30, "neuron/30", "other"};

/* Trials and their three events, every field writable so a test can
 * corrupt one before the set is made. */
typedef struct synth {
    size_t n_trials, n_events;
    bl_probe_trial trials[MAX_TRIALS + 1];
    bl_probe_event events[3 * MAX_TRIALS + 1];
    double features[3 * MAX_TRIALS + 1][NF];
    char seeds[MAX_TRIALS + 1][32];
} synth;

static uint64_t lcg_state;

static double uniform(void)
{
    lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(lcg_state >> 11) * 0x1p-53;
}

/* `blocks` blocks of `per_block` trials; labels pseudo-random (seeded) and
 * feature 0 separates them at every point (±0.5 plus noise below 0.2),
 * feature 2 constant (its scale must become 1), the rest noise: enough of it
 * that a fit to permuted labels is near chance. */
static synth *synth_make(int blocks, int per_block, uint64_t seed)
{
    synth *s = calloc(1, sizeof *s);
    assert_non_null(s);
    lcg_state = seed;
    for (int b = 0; b < blocks; b++)
        for (int i = 0; i < per_block; i++) {
            bl_probe_trial *t = &s->trials[s->n_trials];
            snprintf(s->seeds[s->n_trials], sizeof s->seeds[0], "seed-%d-%d", b, i);
            const int64_t label = uniform() < 0.5 ? 1 : 2;
            *t = (bl_probe_trial){
                .target_id = "reservoir", .task = "delayed_cue", .block_id = b, .trial_id = i,
                .native_score = (double)(i % 4) / 4.0, .wiring_id = b ? "wiring-1" : "wiring-0",
                .world_seed = s->seeds[s->n_trials], .node_signature = "node",
                .interface_signature = "interface",
            };
            for (int p = 0; p < 3; p++) {
                double *x = s->features[s->n_events];
                x[0] = (label == 1 ? 0.5 : -0.5) + 0.4 * (uniform() - 0.5);
                for (int j = 1; j < NF; j++)
                    x[j] = j == 2 ? 0.5 : uniform() * (p + 1);
                s->events[s->n_events++] = (bl_probe_event){
                    .target_id = "reservoir", .task = "delayed_cue", .block_id = b,
                    .trial_id = i, .entity_id = "reservoir", .feature_ids = feature_names,
                    .n_feature_ids = NF, .point = all_points[p], .tick = 3 + p, .round = 1,
                    .label = label, .features = x, .n_features = NF,
                    .channel = "emitted_activity",
                };
            }
            s->n_trials++;
        }
    return s;
}

static bl_probe_set *set_of(const synth *s)
{
    bl_probe_set *set = NULL;
    OK_E(bl_probe_set_create(&set, &e_));
    for (size_t i = 0; i < s->n_trials; i++)
        OK_E(bl_probe_set_add_trial(set, &s->trials[i], &e_));
    for (size_t i = 0; i < s->n_events; i++)
        OK_E(bl_probe_set_add_event(set, &s->events[i], &e_));
    return set;
}

static bl_json *decode_ok(const synth *s, const bl_decode_options *o)
{
    bl_probe_set *set = set_of(s);
    bl_json *out = NULL;
    OK_E(bl_decode(set, o, &out, &e_));
    bl_probe_set_destroy(set);
    return out;
}

static bl_status decode_status(const synth *s, const bl_decode_options *o, bl_error *err)
{
    bl_probe_set *set = set_of(s);
    bl_json *out = NULL;
    bl_status st = bl_decode(set, o, &out, err);
    assert_true((st == BL_OK) == (out != NULL));
    bl_json_destroy(out);
    bl_probe_set_destroy(set);
    return st;
}

static void expect_error(const synth *s, const bl_decode_options *o, bl_status want,
                         const char *fragment)
{
    bl_error err = {0};
    bl_status st = decode_status(s, o, &err);
    if (st != want || !strstr(err.msg, fragment))
        fail_msg("expected %s \"%s\", got %s \"%s\"", bl_status_kind(want), fragment,
                 bl_status_kind(st), err.msg);
}

/* 16/8/8 splits of 32-trial blocks, for the small cases. */
static bl_decode_options small_options(void)
{
    bl_decode_options o = bl_decode_defaults();
    o.fit_trials = 16;
    o.validation_trials = 8;
    o.evaluation_trials = 8;
    return o;
}

static int64_t int_at(const bl_json *a, size_t i)
{
    return bl_json_get_int(bl_json_at(a, i));
}

static double real_at(const bl_json *a, size_t i)
{
    return bl_json_get_real(bl_json_at(a, i));
}

static const bl_json *field(const bl_json *o, const char *key)
{
    const bl_json *v = bl_json_get(o, key);
    if (!v)
        fail_msg("missing field %s", key);
    return v;
}

/* Position of trial id `id` in trial_ids (fails when absent). */
static size_t pos_of(const bl_json *r, int64_t id)
{
    const bl_json *ids = field(r, "trial_ids");
    for (size_t i = 0; i < bl_json_size(ids); i++)
        if (int_at(ids, i) == id)
            return i;
    fail_msg("trial %lld not in trial_ids", (long long)id);
    return 0;
}

/* The synthetic event of (block, trial id, point). */
static const bl_probe_event *event_of(const synth *s, int64_t block, int64_t trial, const char *p)
{
    for (size_t i = 0; i < s->n_events; i++)
        if (s->events[i].block_id == block && s->events[i].trial_id == trial &&
            strcmp(s->events[i].point, p) == 0)
            return &s->events[i];
    fail_msg("no event");
    return NULL;
}

/* ---- §8 test_analysis.py ----------------------------------------------------- */

static void test_equations_shared_whole_trial_splits_and_portable_metadata(void **state)
{
    (void)state;
    synth *s = synth_make(2, 640, 1);
    bl_decode_options o = bl_decode_defaults();
    bl_json *res = decode_ok(s, &o);
    assert_int_equal(bl_json_size(res), 6); /* 2 blocks x 3 points, groups sorted */
    const bl_json *first_fit = field(bl_json_at(res, 0), "fit_trial_ids");
    for (size_t k = 0; k < 6; k++) {
        const bl_json *r = bl_json_at(res, k);
        assert_int_equal(bl_json_get_int(field(r, "block_id")), (int64_t)(k / 3));
        assert_string_equal(bl_json_get_string(field(r, "point"), NULL), all_points[k % 3]);
        /* Disjoint, covering splits of the sorted members, the same at every
         * point and (the generator is made afresh per group) in every block. */
        const bl_json *ids = field(r, "trial_ids");
        assert_int_equal(bl_json_size(ids), 640);
        int seen[640] = {0};
        const char *parts[] = {"fit_trial_ids", "validation_trial_ids", "evaluation_trial_ids"};
        const size_t sizes[] = {256, 128, 256};
        for (int q = 0; q < 3; q++) {
            const bl_json *p = field(r, parts[q]);
            assert_int_equal(bl_json_size(p), sizes[q]);
            for (size_t i = 0; i < sizes[q]; i++)
                seen[pos_of(r, int_at(p, i))]++;
        }
        for (size_t i = 0; i < 640; i++) {
            assert_int_equal(seen[i], 1);
            assert_int_equal(int_at(ids, i), (int64_t)i); /* ascending trial ids */
        }
        assert_true(bl_json_equal(field(r, "fit_trial_ids"), first_fit));
        /* Separable: perfect accuracy at the smallest λ; the null near chance. */
        const bl_json *fitted = field(r, "fitted"), *null = field(r, "permutation");
        assert_true(bl_json_get_real(field(fitted, "regularisation")) == 1e-4);
        assert_true(bl_json_get_real(field(r, "accuracy")) == 1.0);
        const double pa = bl_json_get_real(field(r, "permutation_accuracy"));
        if (!(pa >= 0.35 && pa <= 0.65))
            fail_msg("permutation accuracy %g", pa);
        /* Native accuracy, centre, population scale and intercept by their definitions. */
        const bl_json *ev = field(r, "evaluation_trial_ids"), *fit = field(r, "fit_trial_ids");
        double native = 0.0;
        for (size_t i = 0; i < 256; i++)
            native += s->trials[(k / 3) * 640 + (size_t)int_at(ev, i)].native_score;
        assert_true(fabs(bl_json_get_real(field(r, "native_accuracy")) - native / 256) < 1e-12);
        double t_sum = 0.0;
        for (int j = 0; j < NF; j++) {
            double mean = 0.0, sq = 0.0;
            for (size_t i = 0; i < 256; i++)
                mean += event_of(s, (int64_t)(k / 3), int_at(fit, i), all_points[k % 3])
                            ->features[j];
            mean /= 256;
            for (size_t i = 0; i < 256; i++) {
                double d = event_of(s, (int64_t)(k / 3), int_at(fit, i), all_points[k % 3])
                               ->features[j] - mean;
                sq += d * d;
            }
            const double sd = sqrt(sq / 256); /* ddof 0 */
            const double centre = real_at(field(fitted, "centre"), (size_t)j);
            const double scale = real_at(field(fitted, "scale"), (size_t)j);
            assert_true(fabs(centre - mean) <= 1e-12 * (1 + fabs(mean)));
            if (j == 2)
                assert_true(scale == 1.0); /* constant feature */
            else
                assert_true(fabs(scale - sd) <= 1e-12 * sd);
            assert_true(bl_json_equal(field(fitted, "centre"), field(null, "centre")));
        }
        for (size_t i = 0; i < 256; i++)
            t_sum += event_of(s, (int64_t)(k / 3), int_at(fit, i), "cue_end")->label == 1 ? 1 : -1;
        assert_true(fabs(bl_json_get_real(field(fitted, "intercept")) - t_sum / 256) < 1e-15);
        assert_true(bl_json_get_real(field(r, "chance_accuracy")) == 0.5);
        assert_int_equal(bl_json_get_int(field(r, "independent_blocks")), 1);
        assert_string_equal(bl_json_get_string(field(r, "channel"), NULL), "emitted_activity");
        assert_int_equal(bl_json_size(field(fitted, "predictions")), 640);
        assert_int_equal(bl_json_size(field(fitted, "weights")), NF);
    }
    /* Plain lists: the whole result is JSON (finite numbers, lists, objects). */
    bl_buf text;
    bl_buf_init(&text);
    OK_E(bl_record_json_text(res, &text, &e_));
    bl_json *back = NULL;
    OK_E(bl_json_parse(text.data, text.len, "results", &back, &e_));
    assert_true(bl_json_equal(back, res));
    bl_json_destroy(back);
    bl_buf_clear(&text);
    bl_json_destroy(res);
    free(s);
}

static void test_evaluation_features_and_labels_do_not_change_fit_scaling_or_tuning(void **state)
{
    (void)state;
    synth *s = synth_make(1, 640, 2);
    bl_decode_options o = bl_decode_defaults();
    bl_json *a = decode_ok(s, &o);
    const bl_json *ev = field(bl_json_at(a, 0), "evaluation_trial_ids");
    /* Every evaluation trial: new features and the other label at every point. */
    for (size_t i = 0; i < bl_json_size(ev); i++)
        for (size_t e = 0; e < s->n_events; e++)
            if (s->events[e].trial_id == int_at(ev, i)) {
                s->events[e].label = 3 - s->events[e].label;
                for (int j = 0; j < NF; j++)
                    s->features[e][j] = 100.0 * uniform() - 7.0;
            }
    bl_json *b = decode_ok(s, &o);
    static const char *const same[] = {"regularisation", "weights", "intercept", "centre",
                                       "scale", "validation_accuracy"};
    for (size_t k = 0; k < 3; k++)
        for (int q = 0; q < 2; q++) {
            const char *fit = q ? "permutation" : "fitted";
            const bl_json *fa = field(bl_json_at(a, k), fit), *fb = field(bl_json_at(b, k), fit);
            for (size_t f = 0; f < sizeof same / sizeof *same; f++)
                if (!bl_json_equal(field(fa, same[f]), field(fb, same[f])))
                    fail_msg("%s.%s changed with the evaluation trials", fit, same[f]);
            /* ... while the evaluation itself did change. */
            assert_false(bl_json_equal(field(bl_json_at(a, k), "labels"),
                                       field(bl_json_at(b, k), "labels")));
        }
    bl_json_destroy(a);
    bl_json_destroy(b);
    free(s);
}

static void test_null_permutes_fit_and_validation_separately_never_evaluation(void **state)
{
    (void)state;
    synth *s = synth_make(1, 640, 3);
    bl_decode_options o = bl_decode_defaults();
    bl_json *res = decode_ok(s, &o);
    /* The documented generators: order = generator(701, "analysis",
     * "probe-split").permutation(640); a fresh generator(702, "analysis",
     * "probe-label-permutation") per point shuffles fit, then validation. */
    int64_t order[640];
    bl_gen g;
    OK_E(bl_gen_for(&g, 701, "analysis", "probe-split", NULL, 0, &e_));
    bl_gen_permutation(&g, order, 640);
    for (size_t k = 0; k < 3; k++) {
        const bl_json *r = bl_json_at(res, k);
        const bl_json *labels = field(r, "labels"), *perm = field(r, "permutation_labels");
        int64_t want[640];
        for (size_t i = 0; i < 640; i++)
            want[i] = int_at(labels, i);
        OK_E(bl_gen_for(&g, 702, "analysis", "probe-label-permutation", NULL, 0, &e_));
        const size_t starts[] = {0, 256}, sizes[] = {256, 128};
        for (int q = 0; q < 2; q++) {
            int64_t tmp[256];
            size_t ones_before = 0, ones_after = 0;
            for (size_t i = 0; i < sizes[q]; i++)
                tmp[i] = int_at(labels, (size_t)order[starts[q] + i]);
            bl_gen_shuffle(&g, tmp, sizes[q], sizeof *tmp);
            for (size_t i = 0; i < sizes[q]; i++) {
                const size_t at = (size_t)order[starts[q] + i];
                want[at] = tmp[i];
                ones_before += int_at(labels, at) == 1;
                ones_after += int_at(perm, at) == 1;
            }
            assert_int_equal(ones_before, ones_after); /* class counts kept per split */
        }
        size_t moved = 0;
        for (size_t i = 0; i < 640; i++) {
            assert_int_equal(int_at(perm, i), want[i]);
            moved += int_at(perm, i) != int_at(labels, i);
        }
        assert_true(moved > 0);
        for (size_t i = 384; i < 640; i++) /* evaluation untouched */
            assert_int_equal(int_at(perm, (size_t)order[i]), int_at(labels, (size_t)order[i]));
        for (size_t i = 0; i < 640; i++)
            assert_int_equal(int_at(field(r, "fit_trial_ids"), i < 256 ? i : 0),
                             order[i < 256 ? i : 0]);
    }
    bl_json_destroy(res);
    free(s);
}

static void test_observation_features_own_storage(void **state)
{
    (void)state;
    double x[4] = {1.0, 2.0, 3.0, 4.0};
    char name0[] = "neuron/0";
    const char *ids[4] = {name0, "neuron/1", "neuron/2", "neuron/3"};
    bl_probe_event e = {
        .target_id = "t", .task = "delayed_cue", .entity_id = "reservoir", .feature_ids = ids,
        .n_feature_ids = 4, .point = "cue_end", .tick = 0, .round = 1, .label = 1,
        .features = x, .n_features = 4, .channel = "emitted_activity",
    };
    bl_probe_set *set = NULL;
    OK_E(bl_probe_set_create(&set, &e_));
    OK_E(bl_probe_set_add_event(set, &e, &e_));
    x[0] = 99.0;
    name0[0] = 'X';
    const bl_probe_event *c = bl_probe_set_event(set, 0);
    assert_ptr_not_equal(c->features, x);
    assert_true(c->features[0] == 1.0 && c->features[3] == 4.0);
    assert_string_equal(c->feature_ids[0], "neuron/0");
    /* Read-only to everyone but the set: the view is const all the way down
     * (a write through it does not compile). */
    const double *view = c->features;
    (void)view;
    /* ProbeEvent's own checks. */
    bl_probe_event b = e;
    b.features = (const double[]){1.0, NAN, 3.0, 4.0};
    bl_error err = {0};
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.n_features = 0;
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.feature_ids = (const char *const[]){"a", "a", "b", "c"};
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.n_feature_ids = 3;
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.entity_id = "";
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.target_id = "";
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.label = 0;
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.tick = -1;
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    b = e;
    b.round = 2;
    assert_int_equal(bl_probe_set_add_event(set, &b, &err), BL_EVALUE);
    assert_int_equal(bl_probe_set_n_events(set), 1);
    bl_probe_set_destroy(set);
}

/* One corruption of a valid 32-trial block and the message it must give. */
typedef struct corruption {
    const char *name;
    void (*apply)(synth *s);
    const char *message;
} corruption;

static void dup_event(synth *s)
{
    s->events[s->n_events] = s->events[4];
    s->n_events++;
}
static void drop_event(synth *s)
{
    s->n_events--;
}
static void dup_trial(synth *s)
{
    s->trials[s->n_trials] = s->trials[5];
    s->trials[s->n_trials].world_seed = "another";
    s->n_trials++;
}
static void other_wiring(synth *s)
{
    s->trials[7].wiring_id = "elsewhere";
}
static void same_world(synth *s)
{
    s->trials[7].world_seed = s->trials[3].world_seed;
}
static void other_feature(synth *s)
{
    s->events[3 * 9 + 1].feature_ids = other_names;
}
static void other_entity(synth *s)
{
    s->events[3 * 9 + 2].entity_id = "elsewhere";
}
static void other_channel(synth *s)
{
    s->events[3 * 2].channel = "hidden_state";
}
static void no_reset(synth *s)
{
    s->trials[4].reset = "none";
}
static void physical_task(synth *s)
{
    s->trials[0].task = "tracking";
}

static const corruption corruptions[] = {
    {"duplicate_event", dup_event, "exactly one observation per trial and point is required"},
    {"missing_event", drop_event, "missing observation"},
    {"duplicate_trial", dup_trial, "duplicate decoder trial IDs"},
    {"wiring", other_wiring, "trials must share fixed wiring, node parameters and interface"},
    {"world", same_world, "trial worlds must have distinct seeds"},
    {"feature", other_feature, "incompatible entity or feature IDs across trials"},
    {"entity", other_entity, "incompatible entity or feature IDs across trials"},
    {"channel", other_channel, "decoder requires emitted activity from round 1"},
    {"reset", no_reset, "decoder requires block construction and full reset"},
    {"task", physical_task, "decoder supports only the six stimulus-driven binary probe tasks"},
};

static void test_invalid_data_rejected(void **state)
{
    (void)state;
    bl_decode_options o = small_options();
    synth *s = synth_make(1, 32, 4);
    bl_json_destroy(decode_ok(s, &o)); /* the uncorrupted block decodes */
    free(s);
    for (size_t k = 0; k < sizeof corruptions / sizeof *corruptions; k++) {
        s = synth_make(1, 32, 4);
        corruptions[k].apply(s);
        print_message("corruption %s\n", corruptions[k].name);
        expect_error(s, &o, BL_EVALUE, corruptions[k].message);
        free(s);
    }
}

static void test_trial_counts_classes_options_and_memory_budget(void **state)
{
    (void)state;
    synth *s = synth_make(1, 32, 5);
    bl_decode_options o = bl_decode_defaults();
    expect_error(s, &o, BL_EVALUE, "decoder requires exactly 640 whole trials per block");
    o = small_options();
    o.lambdas = (const double[]){1e-4, 0.0};
    o.n_lambdas = 2;
    expect_error(s, &o, BL_EVALUE, "ridge lambdas must be finite and positive");
    o.lambdas = (const double[]){INFINITY};
    o.n_lambdas = 1;
    expect_error(s, &o, BL_EVALUE, "ridge lambdas must be finite and positive");
    o.n_lambdas = 0;
    expect_error(s, &o, BL_EVALUE, "ridge lambdas must be finite and positive");
    o = small_options();
    o.points = (const char *const[]){"cue_end", "cue_end"};
    o.n_points = 2;
    expect_error(s, &o, BL_EVALUE, "points must be distinct cue_end, delay_end or response");
    o.points = (const char *const[]){"reward"};
    o.n_points = 1;
    expect_error(s, &o, BL_EVALUE, "points must be distinct cue_end, delay_end or response");
    o.n_points = 0;
    expect_error(s, &o, BL_EVALUE, "points must be distinct cue_end, delay_end or response");
    o = small_options();
    o.validation_trials = 1;
    expect_error(s, &o, BL_EVALUE, "each split requires at least two whole trials");
    /* Counts whose sum passes int64 are still named exactly, as Python would. */
    o = small_options();
    o.fit_trials = o.validation_trials = o.evaluation_trials = INT64_MAX;
    expect_error(s, &o, BL_EVALUE,
                 "decoder requires exactly 27670116110564327421 whole trials per block");
    o = small_options();
    o.memory_budget_bytes = 10;
    expect_error(s, &o, BL_ENOMEM, "decoder exceeds the declared offline memory budget");
    /* Exactly the budget passes: 8 × (6·m·f + 4·f²) bytes. */
    o.memory_budget_bytes = 8 * (6 * 32 * NF + 4 * NF * NF);
    assert_int_equal(decode_status(s, &o, NULL), BL_OK);
    o.memory_budget_bytes -= 1;
    expect_error(s, &o, BL_ENOMEM, "decoder exceeds the declared offline memory budget");
    /* Single-class labels. */
    o = small_options();
    for (size_t i = 0; i < s->n_events; i++)
        s->events[i].label = 1;
    expect_error(s, &o, BL_EVALUE, "every split needs both classes; revise the declared split seed");
    free(s);
    /* Labels that change between points. */
    s = synth_make(1, 32, 5);
    s->events[3 * 6 + 2].label = 3 - s->events[3 * 6 + 2].label;
    expect_error(s, &o, BL_EVALUE, "labels must agree across observation points within each trial");
    free(s);
    /* Scores, trials, events without trials. */
    s = synth_make(1, 32, 5);
    s->trials[3].native_score = NAN;
    expect_error(s, &o, BL_EVALUE, "every trial needs a completed native score in [0, 1]");
    s->trials[3].native_score = 1.5;
    expect_error(s, &o, BL_EVALUE, "every trial needs a completed native score in [0, 1]");
    s->trials[3].native_score = 1.0;
    s->trials[3].construction_scope = "trial";
    expect_error(s, &o, BL_EVALUE, "decoder requires block construction and full reset");
    s->trials[3].construction_scope = NULL; /* the default, "block" */
    s->events[10].trial_id = 999;
    expect_error(s, &o, BL_EVALUE, "probe event has no corresponding trial");
    s->n_trials = 0;
    expect_error(s, &o, BL_EVALUE, "decoder requires trials");
    free(s);
    /* Events at a point not requested are ignored; the identities across points. */
    s = synth_make(1, 32, 5);
    for (size_t i = 0; i < s->n_events; i++)
        if (strcmp(s->events[i].point, "response") == 0)
            s->events[i].feature_ids = other_names;
    o.points = (const char *const[]){"cue_end", "delay_end"};
    o.n_points = 2;
    assert_int_equal(decode_status(s, &o, NULL), BL_OK);
    o.points = (const char *const[]){"cue_end", "response"};
    expect_error(s, &o, BL_EVALUE, "feature identities must be stable across observation points");
    free(s);
}

static void test_exact_lambda_tie_keeps_smallest_even_for_unsorted_duplicate_grid(void **state)
{
    (void)state;
    synth *s = synth_make(1, 640, 6);
    bl_decode_options o = bl_decode_defaults();
    o.lambdas = (const double[]){100.0, 1.0, 0.01, 1e-4, 0.01};
    o.n_lambdas = 5;
    bl_json *res = decode_ok(s, &o);
    for (size_t k = 0; k < 3; k++) {
        const bl_json *fitted = field(bl_json_at(res, k), "fitted");
        assert_true(bl_json_get_real(field(fitted, "validation_accuracy")) == 1.0);
        assert_true(bl_json_get_real(field(fitted, "regularisation")) == 1e-4);
    }
    bl_json_destroy(res);
    /* A real tie: every λ alone reaches the same validation accuracy. */
    static const double each[] = {100.0, 1.0, 0.01, 1e-4};
    for (size_t i = 0; i < 4; i++) {
        o.lambdas = &each[i];
        o.n_lambdas = 1;
        res = decode_ok(s, &o);
        for (size_t k = 0; k < 3; k++) {
            const bl_json *fitted = field(bl_json_at(res, k), "fitted");
            assert_true(bl_json_get_real(field(fitted, "validation_accuracy")) == 1.0);
            assert_true(bl_json_get_real(field(fitted, "regularisation")) == each[i]);
        }
        bl_json_destroy(res);
    }
    free(s);
}

/* ---- allocation failures ------------------------------------------------------- */

static bl_status decode_once(void *ctx, bl_error *err)
{
    const synth *s = ctx;
    bl_decode_options o = small_options();
    bl_probe_set *set = NULL;
    bl_status st = bl_probe_set_create(&set, err);
    for (size_t i = 0; st == BL_OK && i < s->n_trials; i++)
        st = bl_probe_set_add_trial(set, &s->trials[i], err);
    for (size_t i = 0; st == BL_OK && i < s->n_events; i++)
        st = bl_probe_set_add_event(set, &s->events[i], err);
    bl_json *out = NULL;
    if (st == BL_OK)
        st = bl_decode(set, &o, &out, err);
    bl_probe_set_destroy(set);
    return bl_test_json_made(st, out);
}

static void test_allocation_failures(void **state)
{
    (void)state;
    synth *s = synth_make(1, 32, 7);
    assert_true(bl_test_fail_each(decode_once, s, 7) > 1);
    free(s);
}

/* ---- readers ----------------------------------------------------------------------- */

static void test_csv_reader(void **state)
{
    (void)state;
    static const char text[] = "a,b,c\r\n1,\"x,\"\"y\"\"\",\r\n\r\n2,\"multi\nline\",z\n3,,";
    bl_csv_table t = {0};
    OK_E(bl_csv_parse(text, sizeof text - 1, "t.csv", &t, &e_));
    assert_int_equal(t.ncols, 3);
    assert_int_equal(t.nrows, 3);
    assert_int_equal(bl_csv_column(&t, "c"), 2);
    assert_int_equal(bl_csv_column(&t, "d"), -1);
    assert_string_equal(bl_csv_cell(&t, 0, 1), "x,\"y\"");
    assert_string_equal(bl_csv_cell(&t, 0, 2), "");
    assert_string_equal(bl_csv_cell(&t, 1, 1), "multi\nline");
    assert_string_equal(bl_csv_cell(&t, 2, 0), "3");
    bl_csv_table_clear(&t);
    static const struct {
        const char *text, *fragment;
    } bad[] = {
        {"a,b\r\n1\r\n", "t.csv:2: 1 fields where the header has 2"},
        {"a,a\r\n1,2\r\n", "column \"a\" appears twice"},
        {"a,b\r\n\"1,2\r\n", "t.csv:2: unterminated quoted field"},
        {"a,b\r\n\"1\"x,2\r\n", "text after a closing quote"},
        {"a,b\r\n1\"x,2\r\n", "quote inside an unquoted field"},
        {"", "no header row"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        bl_error err = {0};
        assert_int_equal(bl_csv_parse(bad[k].text, strlen(bad[k].text), "t.csv", &t, &err),
                         BL_EVALUE);
        if (!strstr(err.msg, bad[k].fragment))
            fail_msg("%s: %s", bad[k].text, err.msg);
    }
    bl_error err = {0};
    assert_int_equal(bl_csv_parse("a\0b\n", 4, "t.csv", &t, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "NUL"));
    /* The reader is the writer's inverse. */
    bl_status st = BL_OK;
    bl_json *rows = bl_json_array(), *row = bl_json_object();
    bl_json_put(&st, row, "q", bl_json_string("say \"hi\",\r\nbye"), NULL);
    bl_json_put(&st, row, "n", bl_json_int(-3), NULL);
    bl_json_push(&st, rows, row, NULL);
    assert_int_equal(st, BL_OK);
    bl_buf out;
    bl_buf_init(&out);
    OK_E(bl_csv_text(rows, &out, &e_));
    OK_E(bl_csv_parse(out.data, out.len, "w.csv", &t, &e_));
    assert_string_equal(bl_csv_cell(&t, 0, (size_t)bl_csv_column(&t, "q")), "say \"hi\",\r\nbye");
    assert_string_equal(bl_csv_cell(&t, 0, (size_t)bl_csv_column(&t, "n")), "-3");
    bl_csv_table_clear(&t);
    bl_buf_clear(&out);
    bl_json_destroy(rows);
}

static void test_npz_reader(void **state)
{
    (void)state;
    const double a[] = {1.5, -2.0, 3.25}, b[] = {0.0};
    const char *const names[] = {"event_00000001", "event_00000000"};
    const double *const arrays[] = {a, b};
    const size_t lens[] = {3, 1};
    bl_buf zip;
    bl_buf_init(&zip);
    OK_E(bl_npz_build(names, arrays, lens, 2, &zip, &e_));
    bl_npz *z = NULL;
    OK_E(bl_npz_parse(zip.data, zip.len, &z, &e_));
    assert_int_equal(z->n, 2);
    assert_string_equal(z->members[0].name, "event_00000000");
    const bl_npy *got = bl_npz_get(z, "event_00000001");
    assert_non_null(got);
    assert_int_equal(got->count, 3);
    assert_true(bl_npy_get_f64(got, 2) == 3.25);
    assert_null(bl_npz_get(z, "event_00000002"));
    bl_npz_destroy(z);
    /* Damaged: truncated, a flipped data byte (CRC), not a ZIP, not .npy members. */
    bl_error err = {0};
    assert_int_equal(bl_npz_parse(zip.data, zip.len / 2, &z, &err), BL_EVALUE);
    assert_null(z);
    char *copy = malloc(zip.len);
    memcpy(copy, zip.data, zip.len);
    copy[40] ^= 0x55;
    assert_int_equal(bl_npz_parse(copy, zip.len, &z, &err), BL_EVALUE);
    free(copy);
    assert_int_equal(bl_npz_parse("not a zip archive at all", 24, &z, &err), BL_EVALUE);
    bl_zip_entry e = {"notes.txt", "hello", 5};
    bl_buf other;
    bl_buf_init(&other);
    OK_E(bl_zip_build(&e, 1, &other, &e_));
    assert_int_equal(bl_npz_parse(other.data, other.len, &z, &err), BL_EVALUE);
    assert_non_null(strstr(err.msg, "is not a .npy file"));
    bl_zip_entry bad_npy = {"x.npy", "\x93NUMPY\x01\x00", 8};
    bl_buf_reset(&other);
    OK_E(bl_zip_build(&bad_npy, 1, &other, &e_));
    assert_int_equal(bl_npz_parse(other.data, other.len, &z, &err), BL_EVALUE);
    bl_buf_clear(&other);
    bl_buf_clear(&zip);
}

/* ---- the decode command ---------------------------------------------------------------- */

static const char decode_plan[] =
    "format = \"brainlesslab-plan\"\n"
    "format_version = 4\n"
    "id = \"dec\"\n"
    "[evaluation]\n"
    "blocks = 2\n"
    "trials_per_block = 32\n"
    "root_seed = 5\n"
    "[[targets]]\n"
    "id = \"cue\"\n"
    "[targets.composition]\n"
    "count = 8\n"
    "[targets.composition.node]\n"
    "kind = \"falandays\"\n"
    "[targets.composition.task]\n"
    "kind = \"delayed_cue\"\n"
    "[targets.composition.task.options]\n"
    "cue_ticks = 2\n"
    "delays = [3]\n"
    "response_ticks = 2\n";

static int cli_setup(void **state)
{
    bl_rt_fixture *fx = bl_rt_fixture_create("dec.toml");
    if (!fx)
        return -1;
    bl_rt_write_text(fx->plan, decode_plan);
    *state = fx;
    return 0;
}

static char *run_record(const bl_rt_fixture *fx, const char *root, const char *recording)
{
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "run '%s' --root '%s' --recording %s", fx->plan, root,
                       recording);
    if (rc != 0)
        fail_msg("run: exit %d: %s", rc, err);
    bl_json *doc = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &doc, &e_));
    char *rec = strdup(bl_json_get_string(bl_json_get(doc, "record"), NULL));
    bl_json_destroy(doc);
    free(out);
    free(err);
    return rec;
}

/* Runs decode; expects exit `want_rc`, and for a failure exactly one stderr
 * line holding `fragment` and nothing on stdout. Returns stdout (heap). */
static char *decode_cli(int want_rc, const char *fragment, const char *fmt, ...)
{
    char args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out, *err;
    int rc = bl_rt_cli(&out, &err, "decode %s", args);
    if (rc != want_rc)
        fail_msg("decode %s: exit %d, expected %d: %s", args, rc, want_rc, err);
    if (fragment && !strstr(err, fragment))
        fail_msg("decode %s: stderr lacks \"%s\": %s", args, fragment, err);
    if (want_rc == 1) {
        assert_string_equal(out, "");
        const char *nl = strchr(err, '\n');
        assert_non_null(nl);
        assert_string_equal(nl + 1, ""); /* one line */
        assert_true(strncmp(err, "brainlesslab: ", 14) == 0);
    }
    free(err);
    return out;
}

static void test_cli_decodes_a_record(void **state)
{
    bl_rt_fixture *fx = *state;
    char *rec = run_record(fx, fx->root, "probe_events");
    char *out = decode_cli(0, NULL, "'%s' --fit 16 --validation 8 --evaluation 8 --lambdas 1 "
                           "0.01 --points response cue_end", rec);
    bl_json *doc = NULL;
    OK_E(bl_json_parse(out, strlen(out), "stdout", &doc, &e_));
    assert_int_equal(bl_json_size(doc), 4); /* 2 blocks x 2 points, in the given order */
    assert_string_equal(bl_json_get_string(bl_json_get(bl_json_at(doc, 0), "point"), NULL),
                        "response");
    assert_string_equal(bl_json_get_string(bl_json_get(bl_json_at(doc, 1), "point"), NULL),
                        "cue_end");
    const double lam = bl_json_get_real(
        bl_json_get(bl_json_get(bl_json_at(doc, 0), "fitted"), "regularisation"));
    assert_true(lam == 1.0 || lam == 0.01);
    /* Sorted keys, Python's default separators. */
    assert_true(strncmp(out, "[{\"accuracy\": ", 14) == 0);
    /* The same through the library. */
    bl_record_probes p = {0};
    OK_E(bl_record_probes_read(rec, &p, &e_));
    bl_probe_set *set = NULL;
    OK_E(bl_probe_set_from_rows(p.events, p.features, p.feature_len, p.trials, &set, &e_));
    assert_int_equal(bl_probe_set_n_events(set), 2 * 32 * 3);
    bl_decode_options o = small_options();
    o.lambdas = (const double[]){1.0, 0.01};
    o.n_lambdas = 2;
    o.points = (const char *const[]){"response", "cue_end"};
    o.n_points = 2;
    bl_json *lib = NULL;
    OK_E(bl_decode(set, &o, &lib, &e_));
    assert_true(bl_json_equal(lib, doc));
    bl_json_destroy(lib);
    bl_probe_set_destroy(set);
    bl_record_probes_clear(&p);
    /* --out: the same text, exclusively. */
    char path[BL_RT_PATH];
    snprintf(path, sizeof path, "%s/result.json", fx->dir);
    char *again = decode_cli(0, NULL, "'%s' --fit 16 --validation 8 --evaluation 8 --lambdas 1 "
                             "0.01 --points response cue_end --out '%s'", rec, path);
    assert_string_equal(again, out);
    char *file = bl_test_read(path, NULL);
    assert_string_equal(file, out);
    free(again);
    free(decode_cli(1, "FileExistsError", "'%s' --fit 16 --validation 8 --evaluation 8 --out '%s'",
                    rec, path));
    char *untouched = bl_test_read(path, NULL);
    assert_string_equal(untouched, file);
    free(untouched);
    free(file);
    /* A failed decode leaves no --out file. */
    char none[BL_RT_PATH];
    snprintf(none, sizeof none, "%s/none.json", fx->dir);
    free(decode_cli(1, "ValueError: decoder requires exactly 640 whole trials per block",
                    "'%s' --out '%s'", rec, none));
    assert_false(bl_rt_exists(none));
    free(decode_cli(1, "MemoryError: decoder exceeds the declared offline memory budget",
                    "'%s' --fit 16 --validation 8 --evaluation 8 --memory-budget-mib 0 --out '%s'",
                    rec, none));
    assert_false(bl_rt_exists(none));
    free(decode_cli(1, "ValueError: ridge lambdas must be finite and positive",
                    "'%s' --lambdas 1 0", rec));
    free(decode_cli(1, "ValueError: each split requires at least two whole trials",
                    "'%s' --fit 1", rec));
    bl_json_destroy(doc);
    free(out);
    free(rec);
}

static void test_cli_refuses_bad_records_and_command_lines(void **state)
{
    bl_rt_fixture *fx = *state;
    /* A summary record has no probe events. */
    char root[BL_RT_PATH];
    snprintf(root, sizeof root, "%s/summary", fx->dir);
    char *rec = run_record(fx, root, "summary");
    free(decode_cli(1, "ValueError: the record holds no probe events", "'%s'", rec));
    free(rec);
    /* Not a record; not a directory. */
    free(decode_cli(1, "ValueError: a record must be a real directory", "'%s/nothing'", fx->dir));
    free(decode_cli(1, "ValueError: a record must be a real directory", "'%s'", fx->plan));
    /* An incomplete record (a data file changed after the manifest). */
    rec = run_record(fx, fx->root, "probe_events");
    char path[BL_RT_PATH];
    bl_rt_write_text(bl_rt_at(path, rec, "data/probe_trials.csv"), "block_id\r\n0\r\n");
    free(decode_cli(1, "ValueError: decoding requires a complete record; this record is "
                       "incomplete", "'%s'", rec));
    free(rec);
    /* A record that failed before its manifest: inspection's own error. */
    char failed[BL_RT_PATH];
    snprintf(failed, sizeof failed, "%s/failed-record", fx->dir);
    bl_rt_fail_before_manifest(failed, BL_EVALUE, "boom");
    free(decode_cli(1, "the record failed before its manifest was written: ValueError: boom",
                    "'%s'", failed));
    /* Usage errors: exit 2, argparse's lines. */
    free(decode_cli(2, "invalid choice: 'reward'", "x --points reward"));
    free(decode_cli(2, "invalid int value: 'many'", "x --fit many"));
    free(decode_cli(2, "invalid float value: 'small'", "x --lambdas small"));
    free(decode_cli(2, "expected at least one argument", "x --lambdas"));
    free(decode_cli(2, "the following arguments are required: record", "--fit 2"));
    char *help = decode_cli(0, NULL, "--help");
    assert_non_null(strstr(help, "--permutation-seed"));
    free(help);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equations_shared_whole_trial_splits_and_portable_metadata),
        cmocka_unit_test(test_evaluation_features_and_labels_do_not_change_fit_scaling_or_tuning),
        cmocka_unit_test(test_null_permutes_fit_and_validation_separately_never_evaluation),
        cmocka_unit_test(test_observation_features_own_storage),
        cmocka_unit_test(test_invalid_data_rejected),
        cmocka_unit_test(test_trial_counts_classes_options_and_memory_budget),
        cmocka_unit_test(test_exact_lambda_tie_keeps_smallest_even_for_unsorted_duplicate_grid),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_csv_reader),
        cmocka_unit_test(test_npz_reader),
        cmocka_unit_test_setup_teardown(test_cli_decodes_a_record, cli_setup, bl_rt_teardown),
        cmocka_unit_test_setup_teardown(test_cli_refuses_bad_records_and_command_lines, cli_setup,
                                        bl_rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
