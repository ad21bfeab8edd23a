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
    const bl_json *request = bl_plan_member(r->plain, "request");
    const bl_json *rt = bl_json_at(bl_plan_member(r->plain, "targets"), target);
    BL_ASSERT(rt != NULL);
    const bl_json *t = bl_plan_member(rt, "target");
    const bl_json *eval = bl_plan_member(request, "evaluation");
    const bl_json *comp = bl_plan_member(t, "composition");
    const char *scope = bl_plan_string(eval, "construction_scope");
    bl_key keys[7] = {BL_KEY_S(bl_plan_string(t, "construction_key")),
                      BL_KEY_S(bl_plan_string(bl_plan_member(comp, "node"), "kind")),
                      BL_KEY_I(bl_plan_int(comp, "count")),
                      BL_KEY_I(bl_plan_int(rt, "n_inputs")),
                      BL_KEY_I(bl_plan_int(rt, "n_effectors"))};
    size_t nkeys = 5;
    if (strcmp(scope, "block") == 0 || strcmp(scope, "trial") == 0)
        keys[nkeys++] = BL_KEY_I(block);
    if (strcmp(scope, "trial") == 0)
        keys[nkeys++] = BL_KEY_I(trial);
    return bl_seed_for(bl_plan_int(eval, "root_seed"), bl_plan_string(eval, "seed_partition"),
                       "construction", keys, nkeys, out, err);
}

bl_status bl_plan_wiring_id(const bl_resolved_plan *r, size_t target, int64_t block,
                            int64_t trial, char hex[65], bl_error *err)
{
    const bl_json *rt = bl_json_at(bl_plan_member(r->plain, "targets"), target);
    BL_ASSERT(rt != NULL);
    const bl_json *t = bl_plan_member(rt, "target");
    if (strcmp(bl_plan_string(t, "controller"), "reservoir") != 0) {
        strcpy(hex, "none"); /* null controllers have no wiring (§4.2) */
        return BL_OK;
    }
    const bl_json *comp = bl_plan_member(t, "composition");
    const char *kind = bl_plan_string(bl_plan_member(comp, "node"), "kind");
    int64_t count = bl_plan_int(comp, "count");
    int64_t n_inputs = bl_plan_int(rt, "n_inputs"), n_effectors = bl_plan_int(rt, "n_effectors");
    bl_seed seed;
    bl_status st = bl_plan_construction_seed(r, target, block, trial, &seed, err);
    if (st != BL_OK)
        return st;
    char dec[80];
    bl_seed_decimal(&seed, dec);

    bl_json *o = bl_json_object(), *ports = bl_json_array();
    if (!o || !ports) {
        bl_json_destroy(o);
        bl_json_destroy(ports);
        return bl_fail(err, BL_ENOMEM, "out of memory for a wiring id");
    }
    bl_json *cfg = bl_json_copy(bl_plan_member(rt, "model_config"));
    st = bl_json_object_set(o, "seed", bl_json_string(dec), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "node", bl_json_string(kind), err);
    if (st == BL_OK)
        st = bl_json_object_set(o, "count", bl_json_int(count), err);
    if (st == BL_OK)
        st = bl_json_array_append(ports, bl_json_int(n_inputs), err);
    if (st == BL_OK)
        st = bl_json_array_append(ports, bl_json_int(n_effectors), err);
    if (st == BL_OK) {
        st = bl_json_object_set(o, "ports", ports, err);
        ports = NULL;
    }
    if (st == BL_OK) {
        st = cfg ? bl_json_object_set(o, "config", cfg, err)
                 : bl_fail(err, BL_ENOMEM, "out of memory for a wiring id");
        cfg = NULL;
    }
    if (st == BL_OK)
        st = bl_json_digest(o, hex, err);
    bl_json_destroy(cfg);
    bl_json_destroy(ports);
    bl_json_destroy(o);
    return st;
}
