/* The typed resolved plan (plan.h, bl_target_spec and bl_evaluation_spec):
 * resolution fills it once, beside the JSON, and every typed field must
 * equal the resolved JSON's value, for the shipped plans and the shared
 * ones. Also: the sorted interventions, the Falandays input_link_p the
 * resolved plan owns (the sanitizer build checks it is freed, also after a
 * failed resolution), and resolution errors, which must read as before. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/model.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/task.h"
#include "support.h"

/* ---- helpers ----------------------------------------------------------- */

static const bl_json *member(const bl_json *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    const bl_json *v = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
        v = bl_json_get(v, k);
        if (!v)
            fail_msg("no member %s", path);
    }
    return v;
}

static const char *str(const bl_json *o, const char *path)
{
    return bl_json_get_string(member(o, path), NULL);
}

static double num(const bl_json *v)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_INT:
        return (double)bl_json_get_int(v);
    case BL_JSON_BOOL:
        return bl_json_get_bool(v) ? 1.0 : 0.0;
    default:
        return bl_json_get_real(v);
    }
}

static void same_double(double typed, const bl_json *v, const char *what)
{
    const double want = num(v);
    if (!(typed == want || (isnan(typed) && isnan(want))))
        fail_msg("%s: typed %.17g, JSON %.17g", what, typed, want);
}

static bl_status resolve_text(const char *toml, bl_resolved_plan **out, bl_error *err)
{
    bl_json *doc = NULL;
    bl_plan *plan = NULL;
    bl_status st = bl_toml_parse(toml, strlen(toml), "plan", &doc, err);
    if (st == BL_OK)
        st = bl_plan_from_document(doc, &plan, err);
    if (st == BL_OK)
        st = bl_plan_resolve(plan, out, err);
    bl_plan_destroy(plan);
    bl_json_destroy(doc);
    return st;
}

/* The typed values v[k] equal the config's members named by the k-th word
 * of `names`. */
static void same_numbers(const bl_json *cfg, const char *names, const double *v)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", names);
    size_t k = 0;
    for (char *save = NULL, *n = strtok_r(buf, " ", &save); n; n = strtok_r(NULL, " ", &save))
        same_double(v[k++], member(cfg, n), n);
}

/* ---- the typed fields equal the JSON ----------------------------------- */

static void check_evaluation(const bl_resolved_plan *r)
{
    const bl_json *request = member(bl_resolved_plain(r), "request");
    const bl_evaluation_spec *e = bl_resolved_evaluation(r);
    assert_int_equal(e->root_seed, bl_json_get_int(member(request, "evaluation.root_seed")));
    assert_int_equal(e->blocks, bl_json_get_int(member(request, "evaluation.blocks")));
    assert_int_equal(e->trials_per_block,
                     bl_json_get_int(member(request, "evaluation.trials_per_block")));
    assert_int_equal(e->warmup, bl_json_get_int(member(request, "evaluation.warmup")));
    assert_string_equal(e->seed_partition, str(request, "evaluation.seed_partition"));
    static const char *const scopes[] = {"evaluation", "block", "trial"};
    assert_string_equal(scopes[e->construction_scope],
                        str(request, "evaluation.construction_scope"));
    assert_string_equal(e->operation, str(request, "operation"));
    assert_string_equal(e->dtype == BL_FLOAT32 ? "float32" : "float64",
                        str(request, "numerics.dtype"));
    assert_int_equal(e->diagnostic, bl_json_get_bool(member(request, "diagnostic")));
}

static const char *const verb_names[] = {"freeze_weights", "freeze_plasticity", "blind_input",
                                         "shuffle_input"};

static void check_interventions(const bl_target_spec *t)
{
    const bl_json *list = member(t->target, "interventions");
    assert_int_equal(t->ninterventions, bl_json_size(list));
    bool shuffle = false;
    for (size_t k = 0; k < t->ninterventions; k++) {
        const bl_intervention *iv = &t->interventions[k];
        if (k > 0) {
            const bl_intervention *prev = &t->interventions[k - 1];
            assert_true(prev->tick < iv->tick || (prev->tick == iv->tick && prev->verb <= iv->verb));
        }
        /* Each typed one is one of the plan's. */
        bool found = false;
        for (size_t j = 0; j < bl_json_size(list); j++) {
            const bl_json *x = bl_json_at(list, j);
            found = found || (bl_json_get_int(bl_json_get(x, "tick")) == iv->tick &&
                              strcmp(str(x, "verb"), verb_names[iv->verb]) == 0);
        }
        assert_true(found);
        shuffle = shuffle || iv->verb == BL_SHUFFLE_INPUT;
    }
    assert_int_equal(t->shuffle, shuffle);
}

static void check_config(const bl_target_spec *t)
{
    const bl_json *cfg = member(t->plain, "model_config");
    if (t->model == BL_MODEL_FALANDAYS) {
        assert_string_equal(t->node, "falandays");
        const bl_falandays_config *c = &t->falandays;
        const double v[] = {c->leak, c->lrate_wmat, c->lrate_targ, c->threshold_mult,
                            c->input_weight, c->link_p, c->inhibitory_frac, c->membrane_noise,
                            c->learn_on, c->rectify};
        same_numbers(cfg, "leak lrate_wmat lrate_targ threshold_mult input_weight link_p "
                          "inhibitory_frac membrane_noise learn_on rectify", v);
        static const char *const drives[] = {"none", "oosawa"};
        assert_string_equal(drives[c->drive], str(cfg, "drive"));
        const bl_json *lp = member(cfg, "input_link_p");
        if (bl_json_kindof(lp) == BL_JSON_NULL) {
            assert_null(c->input_link_p);
        } else {
            assert_int_equal(c->input_link_p_len, bl_json_size(lp));
            for (size_t k = 0; k < c->input_link_p_len; k++)
                same_double(c->input_link_p[k], bl_json_at(lp, k), "input_link_p");
        }
        assert_int_equal(t->excitatory, t->nodes);
    } else {
        assert_string_equal(t->node, "sorn");
        const bl_sorn_config *c = &t->sorn;
        const double v[] = {c->inhibitory_fraction, c->p_ee, c->p_input, c->ee_row_sum,
                            c->T_E_max, c->eta_stdp, c->H_ip, c->learn_on};
        same_numbers(cfg, "inhibitory_fraction p_ee p_input ee_row_sum T_E_max eta_stdp H_ip "
                          "learn_on", v);
        assert_int_equal(t->excitatory, (int64_t)bl_sorn_excitatory_count(c->inhibitory_fraction,
                                                                         (size_t)t->nodes));
    }
}

static void check_target(const bl_resolved_plan *r, size_t i)
{
    const bl_target_spec *t = bl_resolved_target_spec(r, i);
    const bl_json *rt = bl_resolved_target(r, i);
    assert_ptr_equal(t->plain, rt);
    assert_ptr_equal(t->target, member(rt, "target"));
    const bl_json *tg = t->target;
    assert_string_equal(t->id, str(tg, "id"));
    assert_string_equal(t->pairing_key, str(tg, "pairing_key"));
    assert_string_equal(t->mechanism_key, str(tg, "mechanism_key"));
    assert_string_equal(t->construction_key, str(tg, "construction_key"));
    assert_string_equal(t->controller, str(tg, "controller"));
    assert_int_equal(t->reservoir, strcmp(t->controller, "reservoir") == 0);
    if (!t->reservoir) {
        bl_policy p;
        OK_E(bl_policy_from_name(t->controller, &p, &e_));
        assert_int_equal(t->policy, p);
    }
    assert_string_equal(t->node, str(tg, "composition.node.kind"));
    assert_int_equal(t->nodes, bl_json_get_int(member(tg, "composition.count")));
    same_double(t->input_gain, member(tg, "composition.input_gain"), "input_gain");
    assert_int_equal(t->n_inputs, bl_json_get_int(member(rt, "n_inputs")));
    assert_int_equal(t->n_effectors, bl_json_get_int(member(rt, "n_effectors")));
    assert_int_equal(t->neural_frames, bl_json_get_int(member(rt, "neural_frames")));
    assert_int_equal(t->horizon, bl_json_get_int(member(rt, "horizon")));
    assert_string_equal(t->outcome_key, str(rt, "outcome_key"));
    same_double(t->upper_bound, member(rt, "upper_bound"), "upper_bound");

    bl_task_kind kind;
    OK_E(bl_task_from_name(str(tg, "composition.task.kind"), &kind, &e_));
    assert_int_equal(t->task_options.kind, kind);
    bl_json *opts = NULL;
    OK_E(bl_task_options_json(&t->task_options, &opts, &e_));
    assert_true(bl_json_equal(opts, member(rt, "task_options")));
    bl_json_destroy(opts);

    check_config(t);
    check_interventions(t);
}

static void check_plan_file(const char *path)
{
    char *text = bl_test_read(path, NULL);
    bl_resolved_plan *r = bl_test_resolve_text(text);
    free(text);
    check_evaluation(r);
    assert_int_equal(bl_resolved_target_count(r), bl_json_size(member(bl_resolved_plain(r), "targets")));
    for (size_t i = 0; i < bl_resolved_target_count(r); i++)
        check_target(r, i);
    bl_resolved_plan_destroy(r);
}

static void check_plans_in(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls '%s'/*.toml", dir);
    FILE *ls = popen(cmd, "r");
    assert_non_null(ls);
    char path[1024];
    int n = 0;
    while (fgets(path, sizeof path, ls)) {
        path[strcspn(path, "\n")] = '\0';
        check_plan_file(path);
        n++;
    }
    assert_int_equal(pclose(ls), 0);
    assert_true(n > 0);
}

static void test_shipped_plans(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/../plans", bl_test_tests_dir());
    check_plans_in(dir);
}

static void test_shared_plans(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    check_plans_in(bl_test_shared_path("plans"));
}

/* ---- plans written here ------------------------------------------------ */

#define HEAD "format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"p\"\ndiagnostic = true\n"

static void test_mixed_targets(void **state)
{
    (void)state;
    bl_resolved_plan *r = bl_test_resolve_text(
        HEAD "[numerics]\ndtype = \"float32\"\n"
             "[evaluation]\nblocks = 2\ntrials_per_block = 3\nhorizon = 150\n"
             "construction_scope = \"trial\"\nroot_seed = 11\n"
             "[[targets]]\nid = \"ablated\"\n"
             "interventions = [{tick = 20, verb = \"blind_input\"}, {tick = 5, verb = "
             "\"freeze_weights\"}, {tick = 3, verb = \"shuffle_input\"}]\n"
             "[targets.composition]\ncount = 24\n"
             "[targets.composition.node]\nkind = \"falandays\"\n"
             "[targets.composition.node.parameters]\nleak = 1\ninput_link_p = [1, 0.5]\n"
             "[targets.composition.task]\nkind = \"delayed_cue\"\n"
             "[[targets]]\nid = \"sorn\"\n"
             "interventions = [{tick = 4, verb = \"freeze_plasticity\"}]\n"
             "[targets.composition]\ncount = 30\ninput_gain = 8\n"
             "[targets.composition.node]\nkind = \"sorn\"\n"
             "[targets.composition.task]\nkind = \"cartpole_plank_easy\"\n"
             "[[targets]]\nid = \"null\"\ncontroller = \"reference_null\"\n"
             "[targets.composition.task]\nkind = \"tracking\"\n");
    check_evaluation(r);
    const bl_evaluation_spec *e = bl_resolved_evaluation(r);
    assert_int_equal(e->construction_scope, BL_SCOPE_TRIAL);
    assert_int_equal(e->dtype, BL_FLOAT32);
    assert_int_equal(e->root_seed, 11);
    for (size_t i = 0; i < 3; i++)
        check_target(r, i);

    /* Sorted by tick, whatever the plan's order. */
    const bl_target_spec *t = bl_resolved_target_spec(r, 0);
    assert_int_equal(t->ninterventions, 3);
    assert_int_equal(t->interventions[0].tick, 3);
    assert_int_equal(t->interventions[0].verb, BL_SHUFFLE_INPUT);
    assert_int_equal(t->interventions[1].tick, 5);
    assert_int_equal(t->interventions[1].verb, BL_FREEZE_WEIGHTS);
    assert_int_equal(t->interventions[2].tick, 20);
    assert_int_equal(t->interventions[2].verb, BL_BLIND_INPUT);
    assert_true(t->shuffle);
    /* An int given for a float field reads as that number; input_link_p is
     * the plan's own array. */
    assert_true(t->falandays.leak == 1.0);
    assert_int_equal(t->falandays.input_link_p_len, 2);
    assert_true(t->falandays.input_link_p[0] == 1.0 && t->falandays.input_link_p[1] == 0.5);

    t = bl_resolved_target_spec(r, 1);
    assert_int_equal(t->model, BL_MODEL_SORN);
    assert_true(t->input_gain == 8.0);
    assert_false(t->shuffle);
    assert_true(t->excitatory < t->nodes);
    /* The other family's config is left zero. */
    assert_null(t->falandays.input_link_p);
    assert_true(t->falandays.leak == 0.0);

    t = bl_resolved_target_spec(r, 2);
    assert_false(t->reservoir);
    assert_int_equal(t->policy, BL_POLICY_REFERENCE_NULL);
    assert_int_equal(t->ninterventions, 0);
    assert_null(t->interventions);
    bl_resolved_plan_destroy(r);
}

static void expect_error(const char *toml, bl_status status, const char *msg)
{
    bl_resolved_plan *r = NULL;
    bl_error err = {0};
    assert_int_equal(resolve_text(toml, &r, &err), status);
    assert_null(r);
    assert_string_equal(err.msg, msg);
}

/* Errors read as they always have, in plan order; a target that failed
 * after an earlier one resolved (with its input_link_p) leaks nothing. */
static void test_resolution_errors(void **state)
{
    (void)state;
    expect_error(HEAD "[evaluation]\nhorizon = 150\n"
                      "[[targets]]\nid = \"a\"\n"
                      "[targets.composition.node.parameters]\ninput_link_p = [1, 0.5]\n"
                      "[targets.composition.task]\nkind = \"delayed_cue\"\n"
                      "[[targets]]\nid = \"b\"\n"
                      "interventions = [{tick = 500, verb = \"blind_input\"}]\n"
                      "[targets.composition.task]\nkind = \"delayed_cue\"\n",
                 BL_EVALUE,
                 "targets[1]: intervention is beyond the trial horizon (interventions[0] has "
                 "tick 500, the horizon is 150)");
    expect_error(HEAD "[[targets]]\nid = \"a\"\n"
                      "[targets.composition.node.parameters]\ninput_link_p = [1, 0.5]\n"
                      "[[targets]]\nid = \"b\"\n"
                      "[targets.composition.node.parameters]\nleak = \"x\"\n",
                 BL_ETYPE,
                 "targets[1].composition.node.parameters: FalandaysConfig.leak must be a number");
    expect_error(HEAD "[[targets]]\nid = \"a\"\ncontroller = \"oracle\"\n"
                      "interventions = [{tick = 1, verb = \"blind_input\"}]\n",
                 BL_EVALUE, "targets[0]: reservoir interventions require a reservoir controller");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_plans),
        cmocka_unit_test(test_shared_plans),
        cmocka_unit_test(test_mixed_targets),
        cmocka_unit_test(test_resolution_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
