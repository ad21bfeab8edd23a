/* `qualify`: float32 on the CPU against the float64 reference
 * (spec/measurement.md §2, adapted: the reference compares CPU32 with
 * Metal32; this program has one host backend, so what needs qualifying is
 * its float32 arithmetic against its own float64 reference, which is what
 * spec/models.md §5.1 asks of float32).
 *
 * For every model configuration (Falandays unsigned, Dale and Oosawa; SORN)
 * and task family, one case:
 *   1. generators from seed_for(seed, "development", <stream>, <config>,
 *      <task>) for the streams "world", "construction" and "drive" (the keys
 *      are the configuration's and the task's names, both strings);
 *   2. the world prepared (default horizon) and the wiring constructed in
 *      float64; a 2-slot batch of it in float64 and in float32 (the float32
 *      batch validates the precision cast of models.md §5.3: the precision
 *      check), active mask [1, 0];
 *   3. a float64 world cohort (the prepared world twice, enabled [1, 0])
 *      drives both models frame by frame: the float64 inputs go to the
 *      float64 model and the same inputs rounded to float32 to the float32
 *      model; the k-th executed frame gets the k-th row of N standard
 *      normals of the drive generator (rounded for float32; zeros for SORN,
 *      as the runner gives it); freeze_weights before the 7th frame, as the
 *      reference's qualification does; the float64 model's effectors go to
 *      the float64 cohort and, rounded, to a float32 cohort, whose world
 *      state is compared after every tick;
 *   4. every state array compared after every frame (qualify_internal.h);
 *      then the inactive slot and world must be bit-identical to their
 *      initial snapshots, and a reset must give back the initial snapshot
 *      bit for bit, in both dtypes;
 *   5. optionally whole trials through the real runner in both dtypes, whose
 *      outcome differences are reported and never gated. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/measure.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"
#include "brainlesslab/task.h"
#include "measure_internal.h"
#include "qualify_internal.h"

/* The model configurations: the plan's node table, so the qualified
 * wiring is exactly the one the runner builds from the same parameters. */
static const bl_qualify_config configs[] = {
    {"falandays_unsigned", "falandays", "{}"},
    {"falandays_dale", "falandays", "{\"axis\": \"dale\"}"},
    /* Noise that matters: the membrane noise and its deficit gain. */
    {"falandays_oosawa", "falandays",
     "{\"drive\": \"oosawa\", \"membrane_noise\": 0.05, \"noise_gain\": 0.05}"},
    {"sorn", "sorn", "{}"},
};
#define NCONFIGS (sizeof configs / sizeof *configs)

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a qualification");
}

void bl_qualify_options_default(bl_qualify_options *o)
{
    o->count = 64;
    o->frames = 12;
    o->trials = 4;
    o->seed = 714; /* the reference qualification's construction seed */
    o->rtol = 2e-5;
    o->atol = 2e-5;
}

static bl_status validate(const bl_qualify_options *o, bl_error *err)
{
    if (o->count < 1)
        return bl_fail(err, BL_EVALUE, "count must be an integer >= 1");
    if (o->frames < 1)
        return bl_fail(err, BL_EVALUE, "frames must be an integer >= 1");
    if (o->trials < 0)
        return bl_fail(err, BL_EVALUE, "trials must be an integer >= 0");
    if (o->seed < 0)
        return bl_fail(err, BL_EVALUE, "seed must be an integer >= 0");
    if (!(isfinite(o->rtol) && o->rtol >= 0 && isfinite(o->atol) && o->atol >= 0))
        return bl_fail(err, BL_EVALUE, "rtol and atol must be finite and non-negative");
    return BL_OK;
}

/* ---- whole-trial outcomes (reported, not gated) ------------------------------- */

static bl_json *mean_or_null(double sum, size_t n)
{
    return n ? bl_json_real(sum / (double)n) : bl_json_null();
}

static bl_status run_outcomes(const bl_qualify_config *cfg, bl_task_kind task,
                              const bl_qualify_options *o, bl_json *outcomes, bl_error *err)
{
    bl_resolved_plan *plan[2] = {0};
    bl_run_result *res[2] = {0};
    static const char *const dtypes[2] = {"float64", "float32"};
    bl_execution x;
    bl_execution_default(&x);
    bl_status st = BL_OK;
    for (int d = 0; d < 2 && st == BL_OK; d++) {
        st = bl_qualify_case_plan(cfg, task, o, o->trials, dtypes[d], &plan[d], err);
        if (st == BL_OK)
            st = bl_run_execute(plan[d], &x, NULL, &res[d], err);
    }
    if (st == BL_OK) {
        BL_ASSERT(res[0]->ntrials == res[1]->ntrials); /* one plan, two dtypes */
        size_t identical = 0, status_diff = 0, tick_diff = 0, completed[2] = {0};
        size_t nraw[2] = {0}, ndiff = 0;
        double sum[2] = {0}, maxdiff = 0;
        for (size_t i = 0; i < res[0]->ntrials; i++) {
            const bl_trial_result *a = &res[0]->trials[i], *b = &res[1]->trials[i];
            identical += bl_qualify_identical(a->raw, b->raw) || (isnan(a->raw) && isnan(b->raw));
            status_diff += a->status != b->status;
            tick_diff += a->completed_ticks != b->completed_ticks;
            const bl_trial_result *t[2] = {a, b};
            for (int d = 0; d < 2; d++) {
                completed[d] += t[d]->status == BL_TRIAL_COMPLETED;
                if (isfinite(t[d]->raw)) {
                    sum[d] += t[d]->raw;
                    nraw[d]++;
                }
            }
            if (isfinite(a->raw) && isfinite(b->raw)) {
                ndiff++;
                if (fabs(a->raw - b->raw) > maxdiff)
                    maxdiff = fabs(a->raw - b->raw);
            }
        }
        bl_json *e = bl_json_object(), *mean = bl_json_object(), *done = bl_json_object();
        bl_json_put(&st, e, "model", bl_json_string(cfg->name), err);
        bl_json_put(&st, e, "task", bl_json_string(bl_task_name(task)), err);
        bl_json_put(&st, e, "outcome_key", bl_json_string(res[0]->trials[0].outcome_key), err);
        bl_json_put(&st, e, "horizon",
                    bl_json_int(bl_resolved_target_spec(plan[0], 0)->horizon), err);
        bl_json_put(&st, e, "trials", bl_json_int((int64_t)res[0]->ntrials), err);
        bl_json_put(&st, e, "identical_outcomes", bl_json_int((int64_t)identical), err);
        bl_json_put(&st, e, "maximum_absolute_difference",
                    ndiff ? bl_json_real(maxdiff) : bl_json_null(), err);
        bl_json_put(&st, mean, "float64", mean_or_null(sum[0], nraw[0]), err);
        bl_json_put(&st, mean, "float32", mean_or_null(sum[1], nraw[1]), err);
        bl_json_put(&st, e, "mean_raw", mean, err);
        bl_json_put(&st, done, "float64", bl_json_int((int64_t)completed[0]), err);
        bl_json_put(&st, done, "float32", bl_json_int((int64_t)completed[1]), err);
        bl_json_put(&st, e, "completed", done, err);
        bl_json_put(&st, e, "status_differences", bl_json_int((int64_t)status_diff), err);
        bl_json_put(&st, e, "ticks_differences", bl_json_int((int64_t)tick_diff), err);
        bl_json_push(&st, outcomes, e, err);
    } else {
        bl_error_prefix(err, "%s/%s outcomes", cfg->name, bl_task_name(task));
    }
    for (int d = 0; d < 2; d++) {
        bl_run_result_destroy(res[d]);
        bl_resolved_plan_destroy(plan[d]);
    }
    return st;
}

/* ---- the receipt ----------------------------------------------------------------- */

static bl_json *text(const char *s)
{
    return bl_json_string(s);
}

/* Runs of prose members of the protocol, each in receipt order. */
typedef struct {
    const char *key, *text;
} prose;

static const prose stream_prose[] = {
    {"world", "prepare(task, generator(seed, development, \"world\", config, task), "
              "default horizon)"},
    {"construction", "construct(config, count, n_inputs, 2, generator(seed, development, "
                     "\"construction\", config, task)) in float64"},
    {"drive", "generator(seed, development, \"drive\", config, task): the k-th executed "
              "frame gets standard normals k*count .. k*count+count-1 (Falandays; SORN gets "
              "zeros)"},
};

static const prose setup_prose[] = {
    {"tasks", "the ten task families with default options"},
    {"slots", "2 slots from one initial state, active [1, 0]; slot 1 and world 1 must stay "
              "bit-identical to their initial snapshots"},
    {"inputs", "the float64 world cohort's receptor vectors; float32 gets them rounded to "
               "float32"},
    {"effectors", "the float64 model's effectors drive the float64 world cohort and, rounded, "
                  "a float32 world cohort compared after every tick"},
};

static const prose check_prose[] = {
    {"reset", "reset of the active slot after the last frame must give back the initial "
              "snapshot bit for bit, in each dtype"},
    {"precision_check", "the float32 batch and cohort reject any value that is not finite (or "
                        "required positive) after casting (spec/models.md 5.3)"},
    {"rules", "integer arrays exact; binary neural arrays exact except within atol + "
              "rtol*|threshold| of the float64 threshold (a near-threshold divergence, which "
              "ends the case's comparison); other arrays |a - b| <= atol + rtol*|b| with NaN "
              "equal to NaN"},
};

static void put_prose(bl_status *st, bl_json *o, const prose *members, size_t n, bl_error *err)
{
    for (size_t i = 0; i < n; i++)
        bl_json_put(st, o, members[i].key, text(members[i].text), err);
}

static bl_json *protocol_json(const bl_qualify_options *o, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *p = bl_json_object(), *streams = bl_json_object(), *params = bl_json_object();
    bl_json_put(&st, p, "count", bl_json_int(o->count), err);
    bl_json_put(&st, p, "frames", bl_json_int(o->frames), err);
    bl_json_put(&st, p, "compared_frames",
                text("ceil(frames / neural_frames) whole ticks of neural_frames frames "
                     "(CartPole: 24 frames per tick), fewer if the world ends first"),
                err);
    bl_json_put(&st, p, "seed", bl_json_int(o->seed), err);
    bl_json_put(&st, p, "partition", text(BL_QUALIFY_PARTITION), err);
    put_prose(&st, streams, stream_prose, sizeof stream_prose / sizeof *stream_prose, err);
    bl_json_put(&st, p, "streams", streams, err);
    bl_json_put(&st, p, "keys",
                text("[config name, task name], both strings, e.g. "
                     "[\"falandays_dale\", \"pong\"]"),
                err);
    for (size_t k = 0; k < NCONFIGS && st == BL_OK; k++) {
        bl_json *node = NULL;
        char body[256];
        snprintf(body, sizeof body, "{\"kind\": \"%s\", \"parameters\": %s}", configs[k].node,
                 configs[k].parameters);
        st = bl_json_parse(body, strlen(body), "node", &node, err);
        bl_json_put(&st, params, configs[k].name, node, err);
    }
    bl_json_put(&st, p, "configurations", params, err);
    put_prose(&st, p, setup_prose, sizeof setup_prose / sizeof *setup_prose, err);
    bl_json_put(&st, p, "freeze_weights_before_frame", bl_json_int(BL_QUALIFY_FREEZE_FRAME),
                err);
    put_prose(&st, p, check_prose, sizeof check_prose / sizeof *check_prose, err);
    bl_json_put(&st, p, "outcome_trials", bl_json_int(o->trials), err);
    bl_json_put(&st, p, "outcomes",
                text("profile plans of each case, trials blocks x 1 trial, default "
                     "horizon, default execution, float64 and float32; reported, not gated"),
                err);
    return bl_measure_built(st, p);
}

bl_status bl_qualify_run(const bl_qualify_options *o, bl_json **receipt, bool *passed,
                         bl_error *err)
{
    *receipt = NULL;
    *passed = false;
    bl_status st = validate(o, err);
    if (st != BL_OK)
        return st;
    bl_qualify_ledger *l = NULL;
    bl_json *cases = bl_json_array(), *outcomes = bl_json_array(), *r = NULL;
    if ((st = bl_qualify_ledger_create(o->rtol, o->atol, &l, err)) != BL_OK)
        goto done;
    if (!cases || !outcomes) {
        st = nomem(err);
        goto done;
    }
    for (size_t k = 0; k < NCONFIGS && st == BL_OK; k++)
        for (int t = 0; t < BL_TASK_COUNT && st == BL_OK; t++) {
            st = bl_qualify_case_run(&configs[k], (bl_task_kind)t, o, l, cases, err);
            if (st == BL_OK && o->trials > 0)
                st = run_outcomes(&configs[k], (bl_task_kind)t, o, outcomes, err);
        }
    if (st != BL_OK)
        goto done;
    const bool ok = bl_qualify_ledger_failures(l) == 0;
    bl_json *policy = bl_json_object();
    r = bl_json_object();
    bl_json_put(&st, r, "format", text("brainlesslab-backend-conformance"), err);
    bl_json_put(&st, r, "version", bl_json_int(1), err);
    bl_json_put(&st, r, "status", text(ok ? "passed" : "failed"), err);
    bl_json_put(&st, r, "backend", text("cpu"), err);
    bl_json_put(&st, r, "dtype", text("float32"), err);
    bl_json_put(&st, r, "reference_dtype", text("float64"), err);
    bl_json_put(&st, policy, "fast_math", bl_json_bool(false), err);
    bl_json_put(&st, policy, "reduction", text("ordered"), err);
    bl_json_put(&st, policy, "rng", text("philox-host-v1"), err);
    bl_json_put(&st, policy, "reference", text("cpu float64"), err);
    bl_json_put(&st, r, "policy", policy, err);
    bl_json_put(&st, r, "rtol", bl_json_real(o->rtol), err);
    bl_json_put(&st, r, "atol", bl_json_real(o->atol), err);
    if (st == BL_OK)
        st = bl_qualify_ledger_json(l, r, err);
    bl_json_put(&st, r, "cases", cases, err);
    cases = NULL;
    bl_json_put(&st, r, "outcomes", outcomes, err);
    outcomes = NULL;
    bl_json_put(&st, r, "protocol", protocol_json(o, err), err);
    bl_json_put(&st, r, "coverage",
                text("every state array after every frame of 4 model configurations "
                     "(Falandays unsigned, Dale, Oosawa; SORN) x 10 task families on "
                     "identical inputs and noise; world state after every tick; "
                     "freeze_weights, reset and inactive slots and worlds"),
                err);
    bl_json_put(&st, r, "limits",
                text("one host, short deterministic input tapes; no long-run bit-equality "
                     "claim (long closed loops diverge at threshold crossings); "
                     "whole-trial float32-vs-float64 differences are reported, not gated"),
                err);
    /* Where the numbers were measured (a source the host lacks is null). */
    bl_json *host = NULL;
    if (st == BL_OK)
        st = bl_host_describe(NULL, &host, err);
    bl_json_put(&st, r, "host", host, err);
    if (st == BL_OK) {
        *receipt = r;
        *passed = ok;
        r = NULL;
    }
done:
    bl_json_destroy(r);
    bl_json_destroy(cases);
    bl_json_destroy(outcomes);
    bl_qualify_ledger_destroy(l);
    return st;
}

/* ---- the failure line ------------------------------------------------------------ */

/* A receipt number as a person reads it: reals to float32's 9 significant
 * digits (enough to tell the two dtypes apart), integers and the
 * "nan"/"inf" strings of value_json as they are. */
static void value_text(const bl_json *v, char *out, size_t n)
{
    switch (v ? bl_json_kindof(v) : BL_JSON_NULL) {
    case BL_JSON_INT:
        snprintf(out, n, "%" PRId64, bl_json_get_int(v));
        break;
    case BL_JSON_REAL:
        snprintf(out, n, "%.9g", bl_json_get_real(v));
        break;
    case BL_JSON_STRING:
        snprintf(out, n, "%s", bl_json_get_string(v, NULL));
        break;
    default:
        snprintf(out, n, "?");
    }
}

static double value_number(const bl_json *v)
{
    if (v && bl_json_kindof(v) == BL_JSON_INT)
        return (double)bl_json_get_int(v);
    if (v && bl_json_kindof(v) == BL_JSON_REAL)
        return bl_json_get_real(v);
    return NAN;
}

/* "<case> <stage> <step>: <what failed>" for one entry of "failures". */
static void describe_failure(const bl_json *receipt, const bl_json *f, char *out, size_t n)
{
    const char *label = bl_measure_string(f, "case");
    const char *stage = bl_measure_string(f, "stage");
    const bl_json *step = bl_json_get(f, "step");
    char where[160];
    if (step && bl_json_kindof(step) == BL_JSON_INT && bl_json_get_int(step) > 0)
        snprintf(where, sizeof where, "%s %s %" PRId64, label ? label : "?",
                 stage ? stage : "?", bl_json_get_int(step));
    else
        snprintf(where, sizeof where, "%s %s", label ? label : "?", stage ? stage : "?");
    const char *message = bl_measure_string(f, "message");
    if (message) {
        snprintf(out, n, "%s: %s", where, message);
        return;
    }
    char index[64] = "";
    const bl_json *idx = bl_json_get(f, "index");
    for (size_t i = 0, used = 0; idx && i < bl_json_size(idx) && used < sizeof index; i++) {
        const bl_json *e = bl_json_at(idx, i);
        int k = snprintf(index + used, sizeof index - used, "%s%" PRId64 "%s", i ? ", " : "[",
                         bl_json_kindof(e) == BL_JSON_INT ? bl_json_get_int(e) : -1,
                         i + 1 == bl_json_size(idx) ? "]" : "");
        used = k < 0 ? sizeof index : used + (size_t)k;
    }
    const char *array = bl_measure_string(f, "array");
    const char *rule = bl_measure_string(f, "rule");
    const char *what = bl_measure_string(f, "comparison");
    const bl_json *obs = bl_json_get(f, "observed"), *exp = bl_json_get(f, "expected");
    char a[48], b[48];
    value_text(obs, a, sizeof a);
    value_text(exp, b, sizeof b);
    if (bl_measure_equal(rule, "identical")) {
        /* Reset and inactive checks: one dtype against its own snapshot. */
        snprintf(out, n, "%s: %s%s is %s in %s, not bit-identical to the initial %s", where,
                 array ? array : "?", index, a, what ? what : "?", b);
    } else if (bl_measure_equal(rule, "tolerance")) {
        const double x = value_number(obs), y = value_number(exp);
        const double rtol = value_number(bl_json_get(receipt, "rtol"));
        const double atol = value_number(bl_json_get(receipt, "atol"));
        snprintf(out, n,
                 "%s: %s%s is %s in float32 and %s in float64, off by %.3g, more than atol + "
                 "rtol*|float64| = %.3g",
                 where, array ? array : "?", index, a, b, fabs(x - y), atol + rtol * fabs(y));
    } else {
        snprintf(out, n, "%s: %s%s is %s in float32 and %s in float64, which must be equal",
                 where, array ? array : "?", index, a, b);
    }
}

bl_status bl_qualify_failure(const bl_json *receipt, const char *receipt_path, bl_error *err)
{
    const bl_json *cases = bl_json_get(receipt, "cases");
    size_t ncases = cases ? bl_json_size(cases) : 0, failed = 0;
    for (size_t i = 0; i < ncases; i++)
        failed += bl_measure_equal(bl_measure_string(bl_json_at(cases, i), "status"), "failed");
    const bl_json *count = bl_json_get(receipt, "failure_count");
    const int64_t comparisons =
        count && bl_json_kindof(count) == BL_JSON_INT ? bl_json_get_int(count) : 0;
    const bl_json *failures = bl_json_get(receipt, "failures");
    char first[BL_ERROR_MAX] = "no failure recorded";
    if (failures && bl_json_size(failures) > 0)
        describe_failure(receipt, bl_json_at(failures, 0), first, sizeof first);
    return bl_fail(err, BL_ERUNTIME,
                   "qualify failed: %zu of %zu cases, %" PRId64 " failed comparison%s (first: "
                   "%s); see %s",
                   failed, ncases, comparisons, comparisons == 1 ? "" : "s", first, receipt_path);
}
