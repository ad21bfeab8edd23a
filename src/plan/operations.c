/* The operation constructors of spec/platform.md §1.6: profile, sweep,
 * ablate, benchmark and calibrate plans built from a composition, as the
 * reference's library functions build them. Each assembles a plan document
 * (the tree a TOML file would give) and validates it with
 * bl_plan_from_document, so a constructed plan obeys every rule a written
 * one does. */
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "plan_internal.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a plan");
}

/* A copy of `v`, or an empty object when v is NULL. */
static bl_json *copy_or_empty(const bl_json *v)
{
    return v ? bl_json_copy(v) : bl_json_object();
}

static bl_status check_object(const bl_json *v, const char *what, bl_error *err)
{
    if (v && bl_json_kindof(v) != BL_JSON_OBJECT)
        return bl_fail(err, BL_ETYPE, "%s must be a mapping", what);
    return BL_OK;
}

/* The plan document around `targets` (taken over), once the targets were
 * built with status `st` (a failure is passed on). */
static bl_status finish(bl_status st, const char *id, const char *operation,
                        const bl_json *evaluation, const bl_json *numerics, bool diagnostic,
                        bl_json *targets, bl_plan **out, bl_error *err)
{
    *out = NULL;
    bl_json *doc = st == BL_OK ? bl_json_object() : NULL;
    bl_json_put(&st, doc, "targets", targets, err);
    if (st == BL_OK)
        st = check_object(evaluation, "evaluation", err);
    if (st == BL_OK)
        st = check_object(numerics, "numerics", err);
    bl_json_put(&st, doc, "format", bl_json_string("brainlesslab-plan"), err);
    bl_json_put(&st, doc, "format_version", bl_json_int(4), err);
    bl_json_put(&st, doc, "id", bl_json_string(id), err);
    bl_json_put(&st, doc, "operation", bl_json_string(operation), err);
    bl_json_put(&st, doc, "diagnostic", bl_json_bool(diagnostic), err);
    if (evaluation)
        bl_json_put(&st, doc, "evaluation", bl_json_copy(evaluation), err);
    if (numerics)
        bl_json_put(&st, doc, "numerics", bl_json_copy(numerics), err);
    if (st == BL_OK)
        st = bl_plan_from_document(doc, out, err);
    bl_json_destroy(doc);
    return st;
}

/* A target {id, composition, controller, ...extra} appended to targets. */
static bl_status add_target(bl_json *targets, const char *id, bl_json *composition,
                            const char *controller, bl_json **target, bl_error *err)
{
    bl_json *t = bl_json_object();
    bl_status st = t ? BL_OK : nomem(err);
    bl_json_put(&st, t, "id", bl_json_string(id), err);
    bl_json_put(&st, t, "composition", composition, err);
    if (controller)
        bl_json_put(&st, t, "controller", bl_json_string(controller), err);
    if (st == BL_OK && target)
        *target = t;
    bl_json_push(&st, targets, t, err);
    return st;
}

/* The composition checked, then the targets array with "baseline" (the
 * composition as given): how profile and ablate plans begin. *targets is
 * NULL when the check or its allocation failed. */
static bl_status baseline(const bl_json *composition, bl_json **targets, bl_error *err)
{
    *targets = NULL;
    bl_status st = check_object(composition, "composition", err);
    if (st != BL_OK)
        return st;
    if (!(*targets = bl_json_array()))
        return nomem(err);
    return add_target(*targets, "baseline", copy_or_empty(composition), NULL, NULL, err);
}

bl_status bl_plan_profile(const bl_json *composition, const bl_json *evaluation,
                          const bl_json *numerics, const char *id, bool diagnostic,
                          bl_plan **out, bl_error *err)
{
    bl_json *targets = NULL;
    bl_status st = baseline(composition, &targets, err);
    return finish(st, id ? id : "profile", "profile", evaluation, numerics, diagnostic, targets,
                  out, err);
}

/* The node parameters of a composition (an empty object when absent). */
static const bl_json *base_parameters(const bl_json *composition)
{
    const bl_json *node = composition ? bl_json_get(composition, "node") : NULL;
    const bl_json *p = node && bl_json_kindof(node) == BL_JSON_OBJECT
                           ? bl_json_get(node, "parameters")
                           : NULL;
    return p && bl_json_kindof(p) == BL_JSON_OBJECT ? p : NULL;
}

/* One sweep cell: `index` in mixed radix over the axes, last axis fastest. */
static bl_status sweep_cell(const bl_json *composition, const bl_json *axes, size_t index,
                            bl_json *targets, bl_error *err)
{
    const size_t naxes = bl_json_size(axes);
    bl_json *cell = bl_json_object(), *merged = copy_or_empty(base_parameters(composition)),
            *comp = copy_or_empty(composition);
    char *label = NULL;
    bl_status st = !cell || !merged || !comp ? nomem(err) : BL_OK;
    /* Decode the index from the last axis backwards, then fill the cell in
     * axis order (the label lists the axes as they were given). */
    size_t pick[64];
    if (st == BL_OK && naxes > sizeof pick / sizeof *pick)
        st = bl_fail(err, BL_EVALUE, "a sweep supports at most 64 axes");
    for (size_t a = naxes; st == BL_OK && a-- > 0;) {
        const size_t n = bl_json_size(bl_json_value_at(axes, a));
        pick[a] = index % n;
        index /= n;
    }
    for (size_t a = 0; st == BL_OK && a < naxes; a++) {
        size_t len;
        const char *name = bl_json_key_at(axes, a, &len);
        const bl_json *v = bl_json_at(bl_json_value_at(axes, a), pick[a]);
        st = bl_json_object_setn(cell, name, len, bl_json_copy(v), err);
        if (st == BL_OK)
            st = bl_json_object_setn(merged, name, len, bl_json_copy(v), err);
    }
    char id[17];
    if (st == BL_OK)
        st = bl_sweep_target_id(merged, id, err);
    if (st == BL_OK)
        st = bl_sweep_label(cell, &label, err);
    /* The composition's node gets the merged parameters. */
    if (st == BL_OK && !bl_json_get(comp, "node"))
        bl_json_put(&st, comp, "node", bl_json_object(), err);
    bl_json_put(&st, st == BL_OK ? bl_json_get(comp, "node") : NULL, "parameters", merged, err);
    merged = NULL;
    bl_json *t = NULL;
    if (st == BL_OK) {
        st = add_target(targets, id, comp, NULL, &t, err);
        comp = NULL;
    }
    bl_json_put(&st, t, "label", bl_json_string(label), err);
    bl_free(label);
    bl_json_destroy(cell);
    bl_json_destroy(merged);
    bl_json_destroy(comp);
    return st;
}

bl_status bl_plan_sweep(const bl_json *composition, const bl_json *axes,
                        const bl_json *evaluation, const bl_json *numerics, const char *id,
                        bool diagnostic, bl_plan **out, bl_error *err)
{
    *out = NULL;
    bl_status st = check_object(composition, "composition", err);
    if (st != BL_OK)
        return st;
    size_t cells = 1;
    bool ok = axes && bl_json_kindof(axes) == BL_JSON_OBJECT && bl_json_size(axes) > 0;
    for (size_t a = 0; ok && a < bl_json_size(axes); a++) {
        const bl_json *values = bl_json_value_at(axes, a);
        ok = bl_json_kindof(values) == BL_JSON_ARRAY && bl_json_size(values) > 0;
        /* A product past a few million cells is no plan anyone can run. */
        ok = ok && cells <= (SIZE_MAX / 2) / bl_json_size(values);
        if (ok)
            cells *= bl_json_size(values);
    }
    if (!ok)
        return bl_fail(err, BL_EVALUE, "sweep needs non-empty explicit parameter axes");
    bl_json *targets = bl_json_array();
    if (!targets)
        return nomem(err);
    for (size_t k = 0; k < cells && st == BL_OK; k++)
        st = sweep_cell(composition, axes, k, targets, err);
    return finish(st, id ? id : "sweep", "sweep", evaluation, numerics, diagnostic, targets, out,
                  err);
}

bl_status bl_plan_ablate(const bl_json *composition, const char *const *verbs, size_t nverbs,
                         int64_t tick, const bl_json *evaluation, const bl_json *numerics,
                         const char *id, bool diagnostic, bl_plan **out, bl_error *err)
{
    *out = NULL;
    static const char *const defaults[] = {"freeze_weights", "freeze_plasticity"};
    if (!verbs) {
        verbs = defaults;
        nverbs = 2;
    }
    bl_json *targets = NULL;
    bl_status st = baseline(composition, &targets, err);
    for (size_t v = 0; v < nverbs && st == BL_OK; v++) {
        bl_json *t = NULL, *ivs = bl_json_array(), *iv = bl_json_object();
        bl_json_put(&st, iv, "tick", bl_json_int(tick), err);
        bl_json_put(&st, iv, "verb", bl_json_string(verbs[v]), err);
        bl_json_push(&st, ivs, iv, err);
        if (st == BL_OK)
            st = add_target(targets, verbs[v], copy_or_empty(composition), NULL, &t, err);
        bl_json_put(&st, t, "interventions", ivs, err);
    }
    return finish(st, id ? id : "ablation", "ablate", evaluation, numerics, diagnostic, targets,
                  out, err);
}

bl_status bl_plan_benchmark(const bl_json *node, int64_t nodes, const bl_json *evaluation,
                            const bl_json *numerics, const char *id, bl_plan **out,
                            bl_error *err)
{
    *out = NULL;
    static const char *const tasks[] = {"tracking", "pong", "cartpole_plank_easy",
                                        "delayed_cue"};
    bl_status st = check_object(node, "node", err);
    if (st != BL_OK)
        return st;
    bl_json *targets = bl_json_array();
    if (!targets)
        return nomem(err);
    for (size_t k = 0; k < 4 && st == BL_OK; k++) {
        char pairing[64], null_id[64];
        snprintf(pairing, sizeof pairing, "benchmark/%s", tasks[k]);
        snprintf(null_id, sizeof null_id, "%s_null", tasks[k]);
        /* Interleaved: each task's reservoir, then its null. */
        for (int null = 0; null <= 1 && st == BL_OK; null++) {
            bl_json *comp = bl_json_object(), *task = bl_json_object(), *t = NULL;
            bl_json_put(&st, task, "kind", bl_json_string(tasks[k]), err);
            bl_json_put(&st, comp, "task", task, err);
            bl_json_put(&st, comp, "count", bl_json_int(nodes), err);
            if (node)
                bl_json_put(&st, comp, "node", bl_json_copy(node), err);
            if (st != BL_OK) {
                bl_json_destroy(comp);
                break;
            }
            st = add_target(targets, null ? null_id : tasks[k], comp,
                            null ? "reference_null" : "reservoir", &t, err);
            bl_json_put(&st, t, "pairing_key", bl_json_string(pairing), err);
        }
    }
    return finish(st, id ? id : "benchmark", "benchmark", evaluation, numerics, false, targets,
                  out, err);
}

bl_status bl_plan_calibrate(const bl_json *task, int64_t root_seed, const bl_json *numerics,
                            int64_t warmup, bl_plan **out, bl_error *err)
{
    *out = NULL;
    bl_status st = check_object(task, "task", err);
    if (st != BL_OK)
        return st;
    /* The reference's default composition with the given task. */
    bl_json *comp = bl_json_object();
    st = comp ? BL_OK : nomem(err);
    if (task)
        bl_json_put(&st, comp, "task", bl_json_copy(task), err);
    if (st == BL_OK)
        st = bl_plan_calibrate_from(comp, NULL, root_seed, numerics, warmup, out, err);
    bl_json_destroy(comp);
    return st;
}

bl_status bl_plan_calibrate_from(const bl_json *composition, const bl_json *evaluation,
                                 int64_t root_seed, const bl_json *numerics, int64_t warmup,
                                 bl_plan **out, bl_error *err)
{
    *out = NULL;
    bl_status st = check_object(composition, "composition", err);
    if (st == BL_OK)
        st = check_object(evaluation, "evaluation", err);
    if (st != BL_OK)
        return st;
    bl_json *targets = bl_json_array(), *eval = copy_or_empty(evaluation);
    st = !targets || !eval ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = add_target(targets, "reference_null", copy_or_empty(composition), "reference_null",
                        NULL, err);
    /* What calibration fixes; the rest of `evaluation` (horizon,
     * construction scope) stays as given. */
    bl_json_put(&st, eval, "blocks", bl_json_int(1024), err);
    bl_json_put(&st, eval, "trials_per_block", bl_json_int(1), err);
    bl_json_put(&st, eval, "root_seed", bl_json_int(root_seed), err);
    bl_json_put(&st, eval, "seed_partition", bl_json_string("calibration"), err);
    bl_json_put(&st, eval, "warmup", bl_json_int(warmup), err);
    st = finish(st, "calibration", "calibrate", eval, numerics, false, targets, out, err);
    bl_json_destroy(eval);
    return st;
}

bl_status bl_plan_retitle(const bl_plan *plan, const char *id, const char *question,
                          const char *version, const char *evidence, bl_plan **out,
                          bl_error *err)
{
    *out = NULL;
    /* plain(plan) is a complete plan document but for its format keys, so
     * the copy is validated like any plan (an empty id, an unknown
     * evidence state, ... fail with the spec's texts). */
    bl_json *doc = bl_json_copy(bl_plan_plain(plan));
    bl_status st = doc ? BL_OK : nomem(err);
    bl_json_put(&st, doc, "format", bl_json_string("brainlesslab-plan"), err);
    bl_json_put(&st, doc, "format_version", bl_json_int(4), err);
    const char *const keys[] = {"id", "question", "version", "evidence"};
    const char *const values[] = {id, question, version, evidence};
    for (size_t k = 0; k < 4; k++)
        if (values[k])
            bl_json_put(&st, doc, keys[k], bl_json_string(values[k]), err);
    if (st == BL_OK)
        st = bl_plan_from_document(doc, out, err);
    bl_json_destroy(doc);
    return st;
}
