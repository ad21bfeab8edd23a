/* The targets of a resolved plan, read once into plain structs the runner
 * uses from preflight to the last trial (spec/platform.md §4.4 step 2), and
 * the §4.7 cohort key. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

static double number(const bl_json *v)
{
    return bl_json_kindof(v) == BL_JSON_INT ? (double)bl_json_get_int(v) : bl_json_get_real(v);
}

static int iv_cmp(const void *a, const void *b)
{
    const intervention *x = a, *y = b;
    if (x->tick != y->tick)
        return x->tick < y->tick ? -1 : 1;
    return (int)x->verb - (int)y->verb;
}

bl_status bl_run_load_target(const bl_resolved_plan *plan, size_t i, target *t,
                             bl_error *err)
{
    const bl_json *rt = bl_resolved_target(plan, i);
    const bl_json *tg = bl_plan_member(rt, "target");
    const bl_json *comp = bl_plan_member(tg, "composition");
    const bl_json *node = bl_plan_member(comp, "node");
    const bl_json *task = bl_plan_member(comp, "task");
    t->id = bl_plan_string(tg, "id");
    t->pairing_key = bl_plan_string(tg, "pairing_key");
    t->mechanism_key = bl_plan_string(tg, "mechanism_key");
    const char *controller = bl_plan_string(tg, "controller");
    t->reservoir = strcmp(controller, "reservoir") == 0;
    bl_status st = BL_OK;
    if (!t->reservoir && (st = bl_policy_from_name(controller, &t->policy, err)) != BL_OK)
        return st;
    t->node_name = bl_plan_string(node, "kind");
    t->count = bl_plan_int(comp, "count");
    t->input_gain = number(bl_plan_member(comp, "input_gain"));
    t->n_inputs = bl_plan_int(rt, "n_inputs");
    t->n_effectors = bl_plan_int(rt, "n_effectors");
    t->frames = bl_plan_int(rt, "neural_frames");
    t->horizon = bl_plan_int(rt, "horizon");
    bl_task_kind kind;
    if ((st = bl_task_from_name(bl_plan_string(task, "kind"), &kind, err)) != BL_OK ||
        (st = bl_task_options_resolve(kind, bl_plan_member(rt, "task_options"), &t->options, err)) !=
            BL_OK)
        return st;
    bl_task_definition def;
    bl_task_define(&t->options, &def);
    t->outcome_key = def.outcome_key;
    if ((st = bl_resolved_model_config(plan, i, &t->node, &t->fcfg, &t->scfg,
                                       &t->input_link_p, err)) != BL_OK)
        return st;
    t->excitatory = t->node == BL_MODEL_SORN
                        ? (int64_t)bl_sorn_excitatory_count(t->scfg.inhibitory_fraction,
                                                            (size_t)t->count)
                        : t->count;

    const bl_json *ivs = bl_plan_member(tg, "interventions");
    t->nivs = bl_json_size(ivs);
    if (t->nivs) {
        t->ivs = bl_mallocarray(t->nivs, sizeof *t->ivs);
        if (!t->ivs)
            return nomem(err);
    }
    for (size_t k = 0; k < t->nivs; k++) {
        const bl_json *iv = bl_json_at(ivs, k);
        const char *v = bl_plan_string(iv, "verb");
        t->ivs[k].tick = bl_plan_int(iv, "tick");
        t->ivs[k].verb = strcmp(v, "freeze_weights") == 0      ? V_FREEZE_WEIGHTS
                         : strcmp(v, "freeze_plasticity") == 0 ? V_FREEZE_PLASTICITY
                         : strcmp(v, "blind_input") == 0       ? V_BLIND
                                                               : V_SHUFFLE;
        if (t->ivs[k].verb == V_SHUFFLE)
            t->shuffle = true;
    }
    if (t->nivs)
        qsort(t->ivs, t->nivs, sizeof *t->ivs, iv_cmp);
    return BL_OK;
}

void bl_run_free_targets(run_ctx *c)
{
    for (size_t i = 0; c->targets && i < c->ntargets; i++) {
        bl_task_options_clear(&c->targets[i].options);
        bl_free(c->targets[i].input_link_p);
        bl_free(c->targets[i].ivs);
    }
    bl_free(c->targets);
    for (size_t k = 0; c->cohorts && k < c->ncohorts; k++)
        bl_free(c->cohorts[k].jobs);
    bl_free(c->cohorts);
}

/* §4.7 cohort key. */
bool bl_run_same_cohort(const target *a, const target *b)
{
    return a->options.kind == b->options.kind && a->reservoir == b->reservoir &&
           (a->reservoir || a->policy == b->policy) && strcmp(a->node_name, b->node_name) == 0 &&
           a->count == b->count && a->n_inputs == b->n_inputs &&
           a->n_effectors == b->n_effectors && a->frames == b->frames &&
           a->excitatory == b->excitatory;
}
