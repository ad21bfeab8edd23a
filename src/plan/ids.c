/* Identities derived from plans: sweep target ids and labels
 * (spec/platform.md §1.6) and wiring ids (§4.2). Labels are the Python repr
 * of configuration values that plan.c writes (bl_plan_repr); nothing in
 * plan.c calls back here. */
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/rng.h"
#include "plan_internal.h"

bl_status bl_sweep_target_id(const bl_json *parameters, char id[17], bl_error *err)
{
    char hex[65];
    bl_status st = bl_json_digest(parameters, hex, err);
    if (st != BL_OK)
        return st;
    memcpy(id, hex, 16);
    id[16] = '\0';
    return BL_OK;
}

bl_status bl_sweep_label(const bl_json *cell, char **out, bl_error *err)
{
    *out = NULL;
    bl_buf b;
    bl_buf_init(&b);
    bl_plan_repr(&b, cell);
    bl_status st = bl_buf_status(&b, err);
    if (st == BL_OK) {
        *out = bl_buf_take(&b, NULL);
        if (!*out)
            st = bl_fail(err, BL_ENOMEM, "out of memory for a sweep label");
    }
    bl_buf_clear(&b);
    return st;
}

bl_status bl_plan_construction_seed(const bl_resolved_plan *r, size_t target, int64_t block,
                                   int64_t trial, bl_seed *out, bl_error *err)
{
    const bl_evaluation_spec *e = bl_resolved_evaluation(r);
    const bl_target_spec *t = bl_resolved_target_spec(r, target);
    bl_key keys[7] = {BL_KEY_S(t->construction_key), BL_KEY_S(t->node), BL_KEY_I(t->nodes),
                      BL_KEY_I(t->n_inputs), BL_KEY_I(t->n_effectors)};
    size_t nkeys = 5;
    if (e->construction_scope != BL_SCOPE_EVALUATION)
        keys[nkeys++] = BL_KEY_I(block);
    if (e->construction_scope == BL_SCOPE_TRIAL)
        keys[nkeys++] = BL_KEY_I(trial);
    return bl_seed_for(e->root_seed, e->seed_partition, "construction", keys, nkeys, out, err);
}

bl_status bl_plan_wiring_id(const bl_resolved_plan *r, size_t target, int64_t block,
                            int64_t trial, char hex[65], bl_error *err)
{
    const bl_target_spec *t = bl_resolved_target_spec(r, target);
    if (!t->reservoir) {
        strcpy(hex, "none"); /* null controllers have no wiring (§4.2) */
        return BL_OK;
    }
    bl_seed seed;
    bl_status st = bl_plan_construction_seed(r, target, block, trial, &seed, err);
    if (st != BL_OK)
        return st;
    char dec[80];
    bl_seed_decimal(&seed, dec);

    /* The wiring's identity hashes the spec's JSON keys ("count" is the
     * plan's word for nodes) and the config as the contract holds it. */
    bl_json *o = bl_json_object(), *ports = bl_json_array();
    bl_json_push(&st, ports, bl_json_int(t->n_inputs), err);
    bl_json_push(&st, ports, bl_json_int(t->n_effectors), err);
    bl_json_put(&st, o, "seed", bl_json_string(dec), err);
    bl_json_put(&st, o, "node", bl_json_string(t->node), err);
    bl_json_put(&st, o, "count", bl_json_int(t->nodes), err);
    bl_json_put(&st, o, "ports", ports, err);
    ports = NULL;
    bl_json_put(&st, o, "config", bl_json_copy(bl_plan_member(t->plain, "model_config")), err);
    if (st == BL_OK)
        st = bl_json_digest(o, hex, err);
    bl_json_destroy(o);
    return st;
}
