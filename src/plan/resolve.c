/* Resolution Plan → ResolvedPlan and the contract hash (spec/platform.md
 * §1.4–§1.5).
 *
 * The model configuration enters the contract as plain(config): the
 * family's defaults with the plan's node.parameters laid over them *as
 * given* (an int stays an int, as the reference's dataclass keeps it), except
 * input_link_p, whose probabilities the reference converts to floats. The
 * values are then read into the C config and checked by the model's own
 * validation. Resolution keeps that config, the resolved task options and
 * the sorted interventions as the typed target (bl_target_spec) beside the
 * JSON, so that nothing downstream parses the JSON again. Error texts where the spec gives none (ours, documented):
 * an unknown parameter name → TypeError "unknown <kind> parameter '<name>'
 * (allowed: <names>)"; a non-number for a numeric field → TypeError
 * "<Config>.<name> must be a number"; a non-bool for a SORN learn_on →
 * TypeError "learn_on must be a bool" (the reference's text); for a
 * Falandays flag → TypeError "FalandaysConfig.<name> must be a bool"; a
 * non-array input_link_p → TypeError "FalandaysConfig.input_link_p must be
 * an array of numbers". Every error of a target is located in front:
 * "targets[<i>]: ", or "targets[<i>].composition.node.parameters: " and
 * "targets[<i>].composition.task.options: " for the configuration and the
 * task options; a plan read from a file puts the file before that. Where
 * the spec's text leaves out a number a person needs (the scored ticks, the
 * episode length, the tick past the horizon), it follows in parentheses. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/model.h"
#include "brainlesslab/task.h"
#include "plan_internal.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a resolved plan");
}

/* ---- model configuration ---------------------------------------------- */

/* Enum fields are read and written through int. */
_Static_assert(sizeof(bl_weight_init) == sizeof(int) && sizeof(bl_axis) == sizeof(int) &&
                   sizeof(bl_drive) == sizeof(int),
               "config enums are int-sized");

typedef enum field_kind { F_NUM, F_FLAG, F_ENUM, F_LINKP } field_kind;

typedef struct field {
    const char *name;
    field_kind kind;
    size_t offset;                 /* into the C config */
    const char *const *choices;    /* F_ENUM: names in enum order */
} field;

static const char *const winit_names[] = {"excitatory", "pong_mixed", "legacy_normal", NULL};
static const char *const axis_names[] = {"unsigned", "dale", NULL};
static const char *const drive_names[] = {"none", "oosawa", NULL};

#define FF(name, kind) {#name, kind, offsetof(bl_falandays_config, name), NULL}
#define FE(name, choices) {#name, F_ENUM, offsetof(bl_falandays_config, name), choices}
static const field falandays_fields[] = {
    FF(leak, F_NUM),
    FF(lrate_wmat, F_NUM),
    FF(lrate_targ, F_NUM),
    FF(threshold_mult, F_NUM),
    FF(targ_min, F_NUM),
    FF(input_weight, F_NUM),
    FF(weight_init_std, F_NUM),
    FF(learn_on, F_FLAG),
    FF(link_p, F_NUM),
    FF(input_link_p, F_LINKP),
    FE(weight_init_mode, winit_names),
    FF(recurrent_init_scale, F_NUM),
    FF(rectify, F_FLAG),
    FF(repair_masks, F_FLAG),
    FE(axis, axis_names),
    FF(inhibitory_frac, F_NUM),
    FE(drive, drive_names),
    FF(membrane_noise, F_NUM),
    FF(noise_gain, F_NUM),
};
#define SF(name, kind) {#name, kind, offsetof(bl_sorn_config, name), NULL}
static const field sorn_fields[] = {
    SF(inhibitory_fraction, F_NUM),
    SF(p_ee, F_NUM),
    SF(p_ei, F_NUM),
    SF(p_ie, F_NUM),
    SF(p_input, F_NUM),
    SF(p_output, F_NUM),
    SF(ee_row_sum, F_NUM),
    SF(ei_row_sum, F_NUM),
    SF(ie_row_sum, F_NUM),
    SF(input_row_sum, F_NUM),
    SF(T_E_max, F_NUM),
    SF(T_I_max, F_NUM),
    SF(eta_stdp, F_NUM),
    SF(eta_ip, F_NUM),
    SF(H_ip, F_NUM),
    SF(learn_on, F_FLAG),
};

/* The C default of one field as JSON. */
static bl_json *default_json(const field *f, const void *cfg)
{
    const char *p = (const char *)cfg + f->offset;
    switch (f->kind) {
    case F_NUM: {
        double d;
        memcpy(&d, p, sizeof d);
        return bl_json_real(d);
    }
    case F_FLAG: {
        bool b;
        memcpy(&b, p, sizeof b);
        return bl_json_bool(b);
    }
    case F_ENUM: {
        int e;
        memcpy(&e, p, sizeof e);
        return bl_json_string(f->choices[e]);
    }
    case F_LINKP:
        return bl_json_null();
    }
    return NULL;
}

/* Python float(x) for the numbers a plan can hold. */
static bool as_double(const bl_json *v, double *out)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_REAL:
        *out = bl_json_get_real(v);
        return true;
    case BL_JSON_INT:
        *out = (double)bl_json_get_int(v);
        return true;
    case BL_JSON_BOOL:
        *out = bl_json_get_bool(v) ? 1.0 : 0.0;
        return true;
    default:
        return false;
    }
}

static bl_status link_p_json(const bl_json *given, bl_json **out, bl_error *err)
{
    *out = NULL;
    if (bl_json_kindof(given) == BL_JSON_NULL) {
        *out = bl_json_null();
        return *out ? BL_OK : nomem(err);
    }
    if (bl_json_kindof(given) != BL_JSON_ARRAY)
        return bl_fail(err, BL_ETYPE, "FalandaysConfig.input_link_p must be an array of numbers");
    bl_json *a = bl_json_array();
    if (!a)
        return nomem(err);
    for (size_t i = 0; i < bl_json_size(given); i++) {
        double d;
        if (!as_double(bl_json_at(given, i), &d)) {
            bl_json_destroy(a);
            return bl_fail(err, BL_ETYPE,
                           "FalandaysConfig.input_link_p must be an array of numbers");
        }
        bl_status st = bl_json_array_append(a, bl_json_real(d), err);
        if (st != BL_OK) {
            bl_json_destroy(a);
            return st;
        }
    }
    *out = a;
    return BL_OK;
}

static const field *find_field(const field *fields, size_t n, const char *key, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(fields[i].name) == len && memcmp(fields[i].name, key, len) == 0)
            return &fields[i];
    return NULL;
}

/* §1.4 step 1: plain(config) into *out; the C config into cfg (which must
 * hold the defaults). An input_link_p array is allocated for the caller,
 * who owns it as *link_p (NULL when none; also set, for freeing, on
 * failure); cfg's input_link_p points to it. `kind` is the node kind as the
 * plan names it. */
static bl_status build_config(const char *cls, const char *kind, const field *fields,
                              size_t nfields, void *cfg, const bl_json *params, bl_json **out,
                              double **link_p, bl_error *err)
{
    *out = NULL;
    *link_p = NULL;
    /* The constructor rejects unknown names before it looks at any value;
     * the known ones are listed, so that a misspelling shows at once. */
    for (size_t i = 0; i < bl_json_size(params); i++) {
        size_t len;
        const char *key = bl_json_key_at(params, i, &len);
        if (!find_field(fields, nfields, key, len)) {
            char storage[BL_ERROR_MAX];
            bl_buf b;
            bl_buf_init_fixed(&b, storage, sizeof storage);
            bl_buf_printf(&b, "unknown %s parameter ", kind);
            bl_json *name = bl_json_stringn(key, len);
            if (name)
                bl_plan_repr(&b, name);
            bl_json_destroy(name);
            bl_buf_puts(&b, " (allowed:");
            for (size_t k = 0; k < nfields; k++)
                bl_buf_printf(&b, "%s %s", k ? "," : "", fields[k].name);
            bl_buf_putc(&b, ')');
            bl_status st = !name || b.failed ? nomem(err) : bl_fail(err, BL_ETYPE, "%s", b.data);
            bl_buf_clear(&b);
            return st;
        }
    }
    bl_json *o = bl_json_object();
    if (!o)
        return nomem(err);
    bl_status st = BL_OK;
    for (size_t i = 0; i < nfields && st == BL_OK; i++) {
        const field *f = &fields[i];
        const bl_json *given = bl_json_get(params, f->name);
        bl_json *v = NULL;
        if (!given)
            v = default_json(f, cfg);
        else if (f->kind == F_LINKP)
            st = link_p_json(given, &v, err);
        else
            v = bl_json_copy(given);
        if (st == BL_OK)
            st = bl_json_object_set(o, f->name, v, err);
    }
    /* Read the values into the C config. */
    for (size_t i = 0; i < nfields && st == BL_OK; i++) {
        const field *f = &fields[i];
        const bl_json *v = bl_json_get(o, f->name);
        char *p = (char *)cfg + f->offset;
        switch (f->kind) {
        case F_NUM: {
            double d;
            if (!as_double(v, &d))
                st = bl_fail(err, BL_ETYPE, "%s.%s must be a number", cls, f->name);
            else
                memcpy(p, &d, sizeof d);
            break;
        }
        case F_FLAG: {
            bool b;
            if (bl_json_kindof(v) == BL_JSON_BOOL) {
                b = bl_json_get_bool(v);
            } else if (strcmp(cls, "SORNConfig") == 0) {
                st = bl_fail(err, BL_ETYPE, "learn_on must be a bool");
                break;
            } else {
                double d;
                /* The reference keeps any value and uses its truth. */
                if (!as_double(v, &d)) {
                    st = bl_fail(err, BL_ETYPE, "%s.%s must be a bool", cls, f->name);
                    break;
                }
                b = d != 0.0;
            }
            memcpy(p, &b, sizeof b);
            break;
        }
        case F_ENUM: {
            /* An unknown name becomes an out-of-range code, so the model's
             * validation reports it with its own message. */
            int e = 99;
            for (int k = 0; f->choices[k]; k++)
                if (bl_json_kindof(v) == BL_JSON_STRING &&
                    strcmp(bl_json_get_string(v, NULL), f->choices[k]) == 0)
                    e = k;
            memcpy(p, &e, sizeof e);
            break;
        }
        case F_LINKP: {
            bl_falandays_config *fc = cfg;
            if (bl_json_kindof(v) == BL_JSON_ARRAY) {
                size_t n = bl_json_size(v);
                double *probs = bl_mallocarray(n ? n : 1, sizeof *probs);
                if (!probs) {
                    st = nomem(err);
                    break;
                }
                for (size_t k = 0; k < n; k++)
                    probs[k] = bl_json_get_real(bl_json_at(v, k));
                *link_p = probs;
                fc->input_link_p = probs;
                fc->input_link_p_len = n;
            }
            break;
        }
        }
    }
    return bl_json_hand_over(st, o, out);
}

/* Builds and validates the node's configuration: its plain form into
 * *out, the C config of its family into t. A Falandays input_link_p array
 * is put in *link_p for the caller to own, also on failure. */
static bl_status model_config(const bl_json *node, bl_target_spec *t, double **link_p,
                              bl_json **out, bl_error *err)
{
    const char *kind = bl_plan_string(node, "kind");
    const bl_json *params = bl_plan_member(node, "parameters");
    bl_status st;
    if (strcmp(kind, "falandays") == 0) {
        t->model = BL_MODEL_FALANDAYS;
        bl_falandays_config_default(&t->falandays);
        st = build_config("FalandaysConfig", kind, falandays_fields,
                          sizeof falandays_fields / sizeof *falandays_fields, &t->falandays,
                          params, out, link_p, err);
        if (st == BL_OK)
            st = bl_falandays_config_validate(&t->falandays, err);
    } else {
        t->model = BL_MODEL_SORN;
        bl_sorn_config_default(&t->sorn);
        double *no_link_p = NULL; /* SORN has no input_link_p */
        st = build_config("SORNConfig", kind, sorn_fields,
                          sizeof sorn_fields / sizeof *sorn_fields, &t->sorn, params, out,
                          &no_link_p, err);
        if (st == BL_OK)
            st = bl_sorn_config_validate(&t->sorn, err);
    }
    if (st != BL_OK) {
        bl_json_destroy(*out);
        *out = NULL;
    }
    return st;
}

/* ---- interventions (§1.4 steps 9–10) ----------------------------------- */

typedef struct iv {
    int64_t tick;
    const char *verb;
} iv;

static int iv_cmp(const void *a, const void *b)
{
    const iv *x = a, *y = b;
    if (x->tick != y->tick)
        return x->tick < y->tick ? -1 : 1;
    return strcmp(x->verb, y->verb);
}

static bl_status check_interventions(const bl_json *target, bool falandays, bool learn_on,
                                     double lrate_wmat, double lrate_targ, bool gain_zero,
                                     size_t n_inputs, int64_t horizon, bl_error *err)
{
    const bl_json *list = bl_plan_member(target, "interventions");
    size_t n = bl_json_size(list);
    if (n == 0)
        return BL_OK;
    iv *sorted = bl_mallocarray(n, sizeof *sorted);
    if (!sorted)
        return nomem(err);
    for (size_t i = 0; i < n; i++) {
        const bl_json *x = bl_json_at(list, i);
        sorted[i] = (iv){bl_plan_int(x, "tick"), bl_plan_string(x, "verb")};
    }
    qsort(sorted, n, sizeof *sorted, iv_cmp);
    bool weights = false, plasticity = false, blind = false, shuffled = false;
    bl_status st = BL_OK;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        const char *verb = sorted[i].verb;
        bool freeze_w = strcmp(verb, "freeze_weights") == 0;
        bool freeze_p = strcmp(verb, "freeze_plasticity") == 0;
        if ((freeze_w || freeze_p) && !learn_on) {
            st = bl_fail(err, BL_EVALUE, "cannot freeze learning which is already disabled");
        } else if (freeze_w) {
            if (weights || plasticity || (falandays && lrate_wmat == 0.0))
                st = bl_fail(err, BL_EVALUE,
                             "freeze_weights would not change the declared mechanism");
            weights = true;
        } else if (freeze_p) {
            bool same_tick_weights = false;
            for (size_t j = 0; j < n; j++)
                if (sorted[j].tick == sorted[i].tick &&
                    strcmp(sorted[j].verb, "freeze_weights") == 0)
                    same_tick_weights = true;
            if (plasticity || (falandays && lrate_wmat == 0.0 && lrate_targ == 0.0))
                st = bl_fail(err, BL_EVALUE,
                             "freeze_plasticity would not change the declared mechanism");
            else if (same_tick_weights)
                st = bl_fail(err, BL_EVALUE,
                             "same-tick freeze_weights and freeze_plasticity are redundant");
            plasticity = true;
        } else if (strcmp(verb, "blind_input") == 0) {
            if (blind || gain_zero)
                st = bl_fail(err, BL_EVALUE, "blind_input would not change the declared interface");
            blind = true;
        } else {
            if (shuffled || blind || gain_zero || n_inputs < 2)
                st = bl_fail(err, BL_EVALUE,
                             "shuffle_input would not change the declared interface");
            shuffled = true;
        }
    }
    bl_free(sorted);
    if (st != BL_OK)
        return st;
    bool reservoir = strcmp(bl_plan_string(target, "controller"), "reservoir") == 0;
    for (size_t i = 0; i < n; i++) {
        int64_t tick = bl_plan_int(bl_json_at(list, i), "tick");
        if (tick > horizon)
            return bl_fail(err, BL_EVALUE,
                           "intervention is beyond the trial horizon (interventions[%zu] has "
                           "tick %lld, the horizon is %lld)",
                           i, (long long)tick, (long long)horizon);
        if (!reservoir)
            return bl_fail(err, BL_EVALUE,
                           "reservoir interventions require a reservoir controller");
    }
    return BL_OK;
}

/* ---- count limits (ours) ------------------------------------------------ */

/* The worlds count ticks and neural frames in int32 (spec/tasks.md §8), so
 * a trial's horizon × neural_frames must fit there; and a reservoir's §4.6
 * model estimate 64·(n² + n·p + 12·n) must fit in int64, so that admission
 * compares real numbers rather than wrapped ones. The reference's Python
 * integers never overflow; these plans would fail in its runtime instead. */
static bl_status check_target_counts(const bl_json *comp, bool reservoir, int64_t horizon,
                                     const bl_task_definition *def, bl_error *err)
{
    int64_t frames;
    if (__builtin_mul_overflow(horizon, (int64_t)def->neural_frames, &frames) ||
        frames > INT32_MAX)
        return bl_fail(err, BL_EVALUE,
                       "horizon %lld is too large: horizon x neural frames per tick (%lld x %d) "
                       "must be at most 2147483647, the range of the engine's tick and frame "
                       "counters",
                       (long long)horizon, (long long)horizon, (int)def->neural_frames);
    const int64_t n = bl_plan_int(comp, "count"), p = (int64_t)def->n_inputs;
    int64_t nn, np, sum, model;
    if (reservoir &&
        (__builtin_mul_overflow(n, n, &nn) || __builtin_mul_overflow(n, p, &np) ||
         __builtin_add_overflow(nn, np, &sum) || __builtin_add_overflow(sum, 12 * n, &sum) ||
         __builtin_mul_overflow(sum, (int64_t)64, &model)))
        return bl_fail(err, BL_EVALUE,
                       "count %lld is too large: the reservoir's memory estimate 64 x (count^2 + "
                       "count x n_inputs + 12 x count) must fit in 64-bit bytes",
                       (long long)n);
    return BL_OK;
}

/* The number of trials, targets × blocks × trials_per_block, is the job
 * count the runner enumerates and indexes (§4.1). */
static bl_status check_trial_count(const bl_json *request, size_t ntargets, bl_error *err)
{
    const bl_json *eval = bl_plan_member(request, "evaluation");
    const int64_t blocks = bl_plan_int(eval, "blocks"),
                  trials = bl_plan_int(eval, "trials_per_block");
    int64_t per_target, total;
    if (__builtin_mul_overflow(blocks, trials, &per_target) ||
        __builtin_mul_overflow(per_target, (int64_t)ntargets, &total))
        return bl_fail(err, BL_EVALUE,
                       "the plan has too many trials: targets x blocks x trials_per_block (%zu x "
                       "%lld x %lld) must be at most 9223372036854775807",
                       ntargets, (long long)blocks, (long long)trials);
    return BL_OK;
}

/* ---- one target -------------------------------------------------------- */

static bool gain_is_zero(const bl_json *gain)
{
    double d;
    return as_double(gain, &d) && d == 0.0;
}

static int intervention_cmp(const void *a, const void *b)
{
    const bl_intervention *x = a, *y = b;
    if (x->tick != y->tick)
        return x->tick < y->tick ? -1 : 1;
    return (int)x->verb - (int)y->verb;
}

/* The checked interventions, typed and sorted as the runner applies them. */
static bl_status typed_interventions(const bl_json *target, resolved_target *r, bl_error *err)
{
    const bl_json *list = bl_plan_member(target, "interventions");
    const size_t n = bl_json_size(list);
    if (n == 0)
        return BL_OK;
    r->interventions = bl_mallocarray(n, sizeof *r->interventions);
    if (!r->interventions)
        return nomem(err);
    for (size_t k = 0; k < n; k++) {
        const bl_json *x = bl_json_at(list, k);
        const char *v = bl_plan_string(x, "verb");
        bl_intervention *to = &r->interventions[k];
        to->tick = bl_plan_int(x, "tick");
        to->verb = strcmp(v, "freeze_weights") == 0      ? BL_FREEZE_WEIGHTS
                   : strcmp(v, "freeze_plasticity") == 0 ? BL_FREEZE_PLASTICITY
                   : strcmp(v, "blind_input") == 0       ? BL_BLIND_INPUT
                                                         : BL_SHUFFLE_INPUT;
        r->spec.shuffle = r->spec.shuffle || to->verb == BL_SHUFFLE_INPUT;
    }
    qsort(r->interventions, n, sizeof *r->interventions, intervention_cmp);
    r->spec.interventions = r->interventions;
    r->spec.ninterventions = n;
    return BL_OK;
}

/* Target `index`, typed into r and as plain JSON into *out. Its errors name
 * it (targets[index]: ...), and the parameters or options table where the
 * fault lies there. What r holds on failure is the resolved plan's to
 * release. */
static bl_status resolve_target(const bl_json *plan, const bl_json *target, size_t index,
                                resolved_target *r, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_target_spec *t = &r->spec;
    const bl_json *eval = bl_plan_member(plan, "evaluation");
    const bl_json *comp = bl_plan_member(target, "composition");
    const bl_json *node = bl_plan_member(comp, "node");
    const bl_json *task = bl_plan_member(comp, "task");
    bool diagnostic = bl_json_get_bool(bl_plan_member(plan, "diagnostic"));

    /* 1. Model configuration. */
    bl_json *config = NULL;
    bl_status st = bl_plan_at(model_config(node, t, &r->input_link_p, &config, err), err,
                              "targets[%zu].composition.node.parameters", index);
    if (st != BL_OK)
        return st;
    const bool falandays = t->model == BL_MODEL_FALANDAYS;
    const bool learn_on = falandays ? t->falandays.learn_on : t->sorn.learn_on;
    const double lrate_wmat = falandays ? t->falandays.lrate_wmat : 1.0;
    const double lrate_targ = falandays ? t->falandays.lrate_targ : 1.0;

    /* 2. Task options and definition. */
    bl_task_kind kind;
    bl_json *opts_json = NULL, *rt = NULL;
    const char *task_name = bl_plan_string(task, "kind");
    const char *where = ".composition.task.options"; /* below targets[index] */
    st = bl_task_from_name(task_name, &kind, err);
    if (st == BL_OK)
        st = bl_task_options_resolve(kind, bl_plan_member(task, "options"), &t->task_options, err);
    if (st != BL_OK)
        goto done;
    where = "";
    bl_task_definition def;
    bl_task_define(&t->task_options, &def);

    /* 3–7. Horizon, scored ticks, warm-up, probe horizon. */
    const bl_json *h = bl_plan_member(eval, "horizon");
    int64_t horizon =
        bl_json_kindof(h) == BL_JSON_INT ? bl_json_get_int(h) : def.default_horizon;
    int64_t warmup = bl_plan_int(eval, "warmup");
    int64_t scored = horizon - warmup;
    if (scored <= 0) {
        st = bl_fail(err, BL_EVALUE, "horizon must exceed warm-up");
        goto done;
    }
    if (!diagnostic && scored < def.min_scored_ticks) {
        st = bl_fail(err, BL_EVALUE,
                     "%s requires %lld scored ticks (found horizon %lld - warmup %lld = %lld)",
                     task_name, (long long)def.min_scored_ticks, (long long)horizon,
                     (long long)warmup, (long long)scored);
        goto done;
    }
    if (kind != BL_TASK_TRACKING && kind != BL_TASK_PONG && warmup > 0) {
        st = bl_fail(err, BL_EVALUE, "episode tasks require warmup=0");
        goto done;
    }
    if (def.probe && horizon < def.default_horizon) {
        st = bl_fail(err, BL_EVALUE,
                     "probe horizon must contain the entire episode or session (found horizon "
                     "%lld, the %s episode needs %lld)",
                     (long long)horizon, task_name, (long long)def.default_horizon);
        goto done;
    }

    /* 8. Controller (the target keeps the name it was given). */
    const char *controller = bl_plan_string(target, "controller");
    if ((st = bl_controller_validate(controller, kind, err)) != BL_OK)
        goto done;
    t->reservoir = strcmp(controller, "reservoir") == 0;
    if (!t->reservoir && (st = bl_policy_from_name(controller, &t->policy, err)) != BL_OK)
        goto done;

    /* 9–10. Interventions. */
    if ((st = check_interventions(target, falandays, learn_on, lrate_wmat, lrate_targ,
                                  gain_is_zero(bl_plan_member(comp, "input_gain")),
                                  def.n_inputs, horizon, err)) != BL_OK)
        goto done;

    /* 11. Calibration. */
    if (strcmp(bl_plan_string(plan, "operation"), "calibrate") == 0) {
        if (strcmp(controller, "reference_null") != 0 ||
            strcmp(bl_plan_string(eval, "seed_partition"), "calibration") != 0) {
            st = bl_fail(err, BL_EVALUE,
                         "calibration requires the reference null and calibration seed bank");
            goto done;
        }
        int64_t trials;
        if (diagnostic || __builtin_mul_overflow(bl_plan_int(eval, "blocks"),
                                                 bl_plan_int(eval, "trials_per_block"), &trials) ||
            trials != 1024) {
            st = bl_fail(err, BL_EVALUE,
                         "empirical calibration requires 1024 full independent trajectories");
            goto done;
        }
    }

    /* Limits of this engine (ours, after every check of the spec): counts
     * whose products the runner takes must fit its integers. */
    if ((st = check_target_counts(comp, t->reservoir, horizon, &def, err)) != BL_OK)
        goto done;

    /* The typed target (its strings are bound to the plan's own JSON once
     * that is complete: bind_target). */
    t->nodes = bl_plan_int(comp, "count");
    as_double(bl_plan_member(comp, "input_gain"), &t->input_gain);
    t->n_inputs = (int64_t)def.n_inputs;
    t->n_effectors = (int64_t)def.n_effectors;
    t->neural_frames = def.neural_frames;
    t->horizon = horizon;
    t->excitatory = t->model == BL_MODEL_SORN
                        ? (int64_t)bl_sorn_excitatory_count(t->sorn.inhibitory_fraction,
                                                            (size_t)t->nodes)
                        : t->nodes;
    t->outcome_key = def.outcome_key;
    t->upper_bound = def.upper_bound;
    if ((st = typed_interventions(target, r, err)) != BL_OK)
        goto done;

    /* 12. ResolvedTarget, in field order. */
    if ((st = bl_task_options_json(&t->task_options, &opts_json, err)) != BL_OK)
        goto done;
    if (!(rt = bl_json_object())) {
        st = nomem(err);
        goto done;
    }
    bl_json_put(&st, rt, "target", bl_json_copy(target), err);
    bl_json_put(&st, rt, "horizon", bl_json_int(horizon), err);
    bl_json_put(&st, rt, "model_config", config, err);
    bl_json_put(&st, rt, "n_inputs", bl_json_int(t->n_inputs), err);
    bl_json_put(&st, rt, "n_effectors", bl_json_int(t->n_effectors), err);
    bl_json_put(&st, rt, "neural_frames", bl_json_int(t->neural_frames), err);
    bl_json_put(&st, rt, "outcome_key", bl_json_string(def.outcome_key), err);
    bl_json_put(&st, rt, "upper_bound", bl_json_real(def.upper_bound), err);
    bl_json_put(&st, rt, "task_options", opts_json, err);
    config = opts_json = NULL; /* taken by the puts */
    if (st == BL_OK) {
        *out = rt;
        rt = NULL;
    }
done:
    bl_json_destroy(config);
    bl_json_destroy(opts_json);
    bl_json_destroy(rt);
    return bl_plan_at(st, err, "targets[%zu]%s", index, where);
}

/* Points the typed target's strings into its resolved JSON `rt`, which the
 * resolved plan owns. */
static void bind_target(bl_target_spec *t, const bl_json *rt)
{
    const bl_json *tg = bl_plan_member(rt, "target");
    t->plain = rt;
    t->target = tg;
    t->id = bl_plan_string(tg, "id");
    t->pairing_key = bl_plan_string(tg, "pairing_key");
    t->mechanism_key = bl_plan_string(tg, "mechanism_key");
    t->construction_key = bl_plan_string(tg, "construction_key");
    t->controller = bl_plan_string(tg, "controller");
    t->node = bl_plan_string(bl_plan_member(bl_plan_member(tg, "composition"), "node"), "kind");
}

/* The request's evaluation fields, typed; strings point into `request`. */
static void bind_evaluation(bl_evaluation_spec *e, const bl_json *request)
{
    const bl_json *eval = bl_plan_member(request, "evaluation");
    const char *scope = bl_plan_string(eval, "construction_scope");
    e->root_seed = bl_plan_int(eval, "root_seed");
    e->blocks = bl_plan_int(eval, "blocks");
    e->trials_per_block = bl_plan_int(eval, "trials_per_block");
    e->warmup = bl_plan_int(eval, "warmup");
    e->seed_partition = bl_plan_string(eval, "seed_partition");
    e->construction_scope = strcmp(scope, "trial") == 0   ? BL_SCOPE_TRIAL
                            : strcmp(scope, "block") == 0 ? BL_SCOPE_BLOCK
                                                          : BL_SCOPE_EVALUATION;
    e->operation = bl_plan_string(request, "operation");
    e->dtype = strcmp(bl_plan_string(bl_plan_member(request, "numerics"), "dtype"), "float32") == 0
                   ? BL_FLOAT32
                   : BL_FLOAT64;
    e->diagnostic = bl_json_get_bool(bl_plan_member(request, "diagnostic"));
}

/* ---- public ----------------------------------------------------------- */

bl_status bl_plan_resolve(const bl_plan *plan, bl_resolved_plan **out, bl_error *err)
{
    *out = NULL;
    const bl_json *request = plan->plain;
    const bl_json *targets = bl_plan_member(request, "targets");
    const size_t n = bl_json_size(targets);
    bl_json *list = bl_json_array();
    bl_resolved_plan *r = bl_calloc(1, sizeof *r);
    resolved_target *typed = bl_calloc(n ? n : 1, sizeof *typed);
    if (r) {
        r->targets = typed;
        r->ntargets = typed ? n : 0;
        r->plain = bl_json_object();
    }
    bl_status st = BL_OK;
    if (!list || !r || !typed || !r->plain) {
        if (!r)
            bl_free(typed);
        st = nomem(err);
        goto fail;
    }
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        bl_json *rt = NULL;
        /* A plan read from a file names it, as its reading errors do. */
        st = resolve_target(request, bl_json_at(targets, i), i, &typed[i], &rt, err);
        if (st != BL_OK && plan->source)
            st = bl_plan_at(st, err, "%s", plan->source);
        bl_json_push(&st, list, rt, err);
    }
    if (st == BL_OK) {
        st = check_trial_count(request, n, err);
        if (st != BL_OK && plan->source)
            st = bl_plan_at(st, err, "%s", plan->source);
    }
    bl_json_put(&st, r->plain, "request", bl_json_copy(request), err);
    bl_json_put(&st, r->plain, "targets", list, err);
    list = NULL;
    /* The hash covers {"request", "targets"}: computed before the hash
     * itself joins the object. */
    if (st == BL_OK)
        st = bl_json_digest(r->plain, r->hash, err);
    bl_json_put(&st, r->plain, "contract_hash", bl_json_string(r->hash), err);
    if (st != BL_OK)
        goto fail;
    bind_evaluation(&r->evaluation, bl_plan_member(r->plain, "request"));
    for (size_t i = 0; i < n; i++)
        bind_target(&typed[i].spec, bl_json_at(bl_plan_member(r->plain, "targets"), i));
    *out = r;
    return BL_OK;
fail:
    bl_json_destroy(list);
    bl_resolved_plan_destroy(r);
    return st;
}

void bl_resolved_plan_destroy(bl_resolved_plan *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ntargets; i++) {
        bl_task_options_clear(&r->targets[i].spec.task_options);
        bl_free(r->targets[i].input_link_p);
        bl_free(r->targets[i].interventions);
    }
    bl_free(r->targets);
    bl_json_destroy(r->plain);
    bl_free(r);
}

const bl_json *bl_resolved_plain(const bl_resolved_plan *r)
{
    return r->plain;
}

const char *bl_resolved_contract_hash(const bl_resolved_plan *r)
{
    return r->hash;
}

size_t bl_resolved_target_count(const bl_resolved_plan *r)
{
    return r->ntargets;
}

const bl_json *bl_resolved_target(const bl_resolved_plan *r, size_t i)
{
    BL_ASSERT(i < r->ntargets);
    return r->targets[i].spec.plain;
}

const bl_evaluation_spec *bl_resolved_evaluation(const bl_resolved_plan *r)
{
    return &r->evaluation;
}

const bl_target_spec *bl_resolved_target_spec(const bl_resolved_plan *r, size_t i)
{
    BL_ASSERT(i < r->ntargets);
    return &r->targets[i].spec;
}
