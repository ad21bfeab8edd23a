/* Plans: documents, validation, resolution, the contract hash and ids
 * (spec/platform.md §1.1–§1.6, §2, §4.2). Messages are compared in full:
 * they are the reference's (or our documented wording) and the CLI prints
 * them verbatim. Validation documents are built as JSON, so these tests do
 * not depend on the TOML bridge; the shared plans go through it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "support.h"

/* ---- helpers ----------------------------------------------------------- */

/* JSON text with ` for " (keeps the tables below readable). */
static bl_json *doc(const char *text)
{
    char *t = strdup(text);
    assert_non_null(t);
    for (char *p = t; *p; p++)
        if (*p == '`')
            *p = '"';
    bl_json *v = NULL;
    bl_error err = {0};
    if (bl_json_parse(t, strlen(t), "test", &v, &err) != BL_OK)
        fail_msg("bad test JSON %s: %s", t, err.msg);
    free(t);
    return v;
}

#define FORMAT "requires fresh Python plan v4; historical plans require archived Julia"
#define HEAD "`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `p`"
#define TARGET "{`id`: `a`}"

static bl_plan *read_shared(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "plans/%s", name);
    bl_plan *p = NULL;
    bl_error err = {0};
    if (bl_plan_read(bl_test_shared_path(rel), &p, &err) != BL_OK)
        fail_msg("%s: %s: %s", name, bl_status_kind(err.status), err.msg);
    return p;
}

static bl_resolved_plan *resolve_ok(const bl_plan *p)
{
    bl_resolved_plan *r = NULL;
    bl_error err = {0};
    if (bl_plan_resolve(p, &r, &err) != BL_OK)
        fail_msg("resolve %s: %s: %s", bl_plan_id(p), bl_status_kind(err.status), err.msg);
    return r;
}

/* The file without its trailing line ends. */
static char *slurp(const char *path)
{
    char *s = bl_test_read(path, NULL);
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static const char *const shared_plans[] = {
    "delayed-cue.toml",
    "falandays-core.toml",
    "sweep-delayed-cue.toml",
    "calibration-published-tracking.toml",
    "calibration-published-pong.toml",
    "calibration-published-cartpole_plank_easy.toml",
};

/* ---- the contract vector and the shared plans -------------------------- */

static void test_delayed_cue_contract_vector(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    bl_plan *p = read_shared("delayed-cue.toml");
    bl_resolved_plan *r = resolve_ok(p);
    assert_string_equal(bl_resolved_contract_hash(r),
                        "790cbdeb4b4305b23e5f237de51aad3eed8741b0460539a9c08ded96328b15c3");

    /* The hashed text itself, byte for byte. */
    bl_json *c = bl_json_object();
    bl_error err = {0};
    assert_int_equal(bl_json_object_set(c, "request", bl_json_copy(bl_plan_plain(p)), &err),
                     BL_OK);
    bl_json *targets = bl_json_copy(bl_json_get(bl_resolved_plain(r), "targets"));
    assert_int_equal(bl_json_object_set(c, "targets", targets, &err), BL_OK);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(bl_json_canonical(c, &text, &len, &err), BL_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/data/delayed-cue.canonical.json", bl_test_tests_dir());
    char *want = slurp(path);
    assert_string_equal(text, want);
    free(want);
    bl_free(text);
    bl_json_destroy(c);

    /* The printed form carries the hash too. */
    const bl_json *h = bl_json_get(bl_resolved_plain(r), "contract_hash");
    assert_non_null(h);
    assert_string_equal(bl_json_get_string(h, NULL), bl_resolved_contract_hash(r));
    assert_int_equal(bl_resolved_target_count(r), 1);
    assert_string_equal(bl_plan_id(p), "delayed-cue-development");
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
}

static void test_every_shared_plan_resolves(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    for (size_t i = 0; i < sizeof shared_plans / sizeof *shared_plans; i++) {
        bl_plan *p = read_shared(shared_plans[i]);
        bl_resolved_plan *r = resolve_ok(p);
        assert_int_equal(strlen(bl_resolved_contract_hash(r)), 64);
        bl_resolved_plan_destroy(r);
        bl_plan_destroy(p);
    }

    /* §2.3 (b): horizons, ports and frames of the four benchmark tasks. */
    bl_plan *p = read_shared("falandays-core.toml");
    bl_resolved_plan *r = resolve_ok(p);
    assert_int_equal(bl_resolved_target_count(r), 8);
    const int64_t horizon[4] = {2000, 7200, 15000, 144}, inputs[4] = {62, 46, 8, 3},
                  frames[4] = {1, 1, 24, 1};
    for (size_t i = 0; i < 8; i++) {
        const bl_json *t = bl_resolved_target(r, i);
        assert_int_equal(bl_json_get_int(bl_json_get(t, "horizon")), horizon[i % 4]);
        assert_int_equal(bl_json_get_int(bl_json_get(t, "n_inputs")), inputs[i % 4]);
        assert_int_equal(bl_json_get_int(bl_json_get(t, "n_effectors")), 2);
        assert_int_equal(bl_json_get_int(bl_json_get(t, "neural_frames")), frames[i % 4]);
    }
    /* pong's node parameter reaches the full configuration. */
    const bl_json *cfg = bl_json_get(bl_resolved_target(r, 1), "model_config");
    assert_string_equal(bl_json_get_string(bl_json_get(cfg, "weight_init_mode"), NULL),
                        "pong_mixed");
    assert_int_equal(bl_json_size(cfg), 19);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
}

static void test_sweep_ids_and_labels(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    bl_plan *p = read_shared("sweep-delayed-cue.toml");
    const bl_json *targets = bl_json_get(bl_plan_plain(p), "targets");
    const char *ids[3] = {"84f6b98f6e57c127", "e902202a74b75788", "c5ffb217c5bae322"};
    const char *labels[3] = {"{'leak': 0.1}", "{'leak': 0.25}", "{'leak': 0.5}"};
    assert_int_equal(bl_json_size(targets), 3);
    for (size_t i = 0; i < 3; i++) {
        const bl_json *t = bl_json_at(targets, i);
        const bl_json *params =
            bl_json_get(bl_json_get(bl_json_get(t, "composition"), "node"), "parameters");
        char id[17];
        char *label = NULL;
        OK_E(bl_sweep_target_id(params, id, &e_));
        OK_E(bl_sweep_label(params, &label, &e_));
        assert_string_equal(id, ids[i]);
        assert_string_equal(bl_json_get_string(bl_json_get(t, "id"), NULL), ids[i]);
        assert_string_equal(label, labels[i]);
        assert_string_equal(bl_json_get_string(bl_json_get(t, "label"), NULL), labels[i]);
        bl_free(label);
    }
    bl_plan_destroy(p);

    /* Python repr details: quotes, bools, tuples, ints vs floats. */
    bl_json *cell = doc("{`it's`: `a\\\\b`, `x`: [1], `y`: [], `z`: true, `w`: 1e-05, "
                        "`v`: `say \\`hi\\``}");
    char *label = NULL;
    OK_E(bl_sweep_label(cell, &label, &e_));
    assert_string_equal(label, "{\"it's\": 'a\\\\b', 'x': (1,), 'y': (), 'z': True, "
                               "'w': 1e-05, 'v': 'say \"hi\"'}");
    bl_free(label);
    bl_json_destroy(cell);
}

static void test_wiring_id_example(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    bl_plan *p = read_shared("delayed-cue.toml");
    bl_resolved_plan *r = resolve_ok(p);
    char hex[65];
    OK_E(bl_plan_wiring_id(r, 0, 0, 0, hex, &e_));
    assert_string_equal(hex, "69bf351c36894abae460ecca9f5b0bb5f73be282387cbfc257a43ed6421bd52c");
    /* Block scope: the trial does not matter, the block does. */
    char other[65];
    OK_E(bl_plan_wiring_id(r, 0, 0, 1, other, &e_));
    assert_string_equal(other, hex);
    OK_E(bl_plan_wiring_id(r, 0, 1, 0, other, &e_));
    assert_string_not_equal(other, hex);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);

    p = read_shared("calibration-published-pong.toml");
    r = resolve_ok(p);
    OK_E(bl_plan_wiring_id(r, 0, 0, 0, hex, &e_));
    assert_string_equal(hex, "none");
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
}

static void test_write_round_trip(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    for (size_t i = 0; i < sizeof shared_plans / sizeof *shared_plans; i++) {
        bl_plan *p = read_shared(shared_plans[i]);
        bl_resolved_plan *r = resolve_ok(p);
        bl_buf text;
        bl_buf_init(&text);
        bl_error err = {0};
        if (bl_plan_write(p, &text, &err) != BL_OK)
            fail_msg("write %s: %s", shared_plans[i], err.msg);
        bl_json *back = NULL;
        if (bl_toml_parse(text.data, text.len, "written", &back, &err) != BL_OK)
            fail_msg("reparse %s: %s\n%s", shared_plans[i], err.msg, text.data);
        /* null keys are left out: no "horizon" when the plan has none. */
        const bl_json *eval = bl_json_get(back, "evaluation");
        assert_int_equal(bl_json_get(eval, "horizon") != NULL,
                         bl_json_kindof(bl_json_get(bl_json_get(bl_plan_plain(p), "evaluation"),
                                                    "horizon")) != BL_JSON_NULL);
        bl_plan *q = NULL;
        if (bl_plan_from_document(back, &q, &err) != BL_OK)
            fail_msg("read back %s: %s", shared_plans[i], err.msg);
        assert_true(bl_json_equal(bl_plan_plain(p), bl_plan_plain(q)));
        bl_resolved_plan *rq = resolve_ok(q);
        assert_string_equal(bl_resolved_contract_hash(r), bl_resolved_contract_hash(rq));
        bl_resolved_plan_destroy(rq);
        bl_plan_destroy(q);
        bl_json_destroy(back);
        bl_buf_clear(&text);
        bl_resolved_plan_destroy(r);
        bl_plan_destroy(p);
    }
}

/* ---- defaults and the kinds of values ---------------------------------- */

static void test_defaults_and_kinds_are_kept(void **state)
{
    (void)state;
    bl_json *d = doc("{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`input_gain`: 1, "
                     "`node`: {`parameters`: {`leak`: 0}}}}]}");
    bl_plan *p = NULL;
    OK_E(bl_plan_from_document(d, &p, &e_));
    bl_json_destroy(d);
    char *text = NULL;
    size_t len;
    OK_E(bl_json_canonical(bl_plan_plain(p), &text, &len, &e_));
    assert_string_equal(
        text,
        "{\"diagnostic\":false,\"evaluation\":{\"blocks\":1,\"construction_scope\":\"block\","
        "\"horizon\":null,\"root_seed\":0,\"seed_partition\":\"development\","
        "\"trials_per_block\":1,\"warmup\":0},\"evidence\":\"exploratory\",\"id\":\"p\","
        "\"numerics\":{\"dtype\":\"float64\",\"fast_math\":false,\"reduction\":\"ordered\","
        "\"rng\":\"philox-host-v1\"},\"operation\":\"profile\",\"question\":\"\",\"targets\":"
        "[{\"composition\":{\"count\":200,\"input_gain\":1,\"node\":{\"kind\":\"falandays\","
        "\"parameters\":{\"leak\":0}},\"task\":{\"kind\":\"delayed_cue\",\"options\":{}}},"
        "\"construction_key\":\"paired-construction\",\"controller\":\"reservoir\",\"id\":\"a\","
        "\"interventions\":[],\"label\":\"\",\"mechanism_key\":\"paired-mechanism\","
        "\"pairing_key\":\"paired-worlds\"}],\"version\":\"1\"}");
    bl_free(text);

    /* The model config keeps the int as given (the reference's dataclass
     * does), and it changes the hash against 0.0. */
    bl_resolved_plan *r = resolve_ok(p);
    const bl_json *cfg = bl_json_get(bl_resolved_target(r, 0), "model_config");
    assert_int_equal(bl_json_kindof(bl_json_get(cfg, "leak")), BL_JSON_INT);
    assert_int_equal(bl_json_get_int(bl_json_get(bl_resolved_target(r, 0), "horizon")), 144);
    bl_json *d2 = doc("{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`input_gain`: 1, "
                      "`node`: {`parameters`: {`leak`: 0.0}}}}]}");
    bl_plan *p2 = NULL;
    OK_E(bl_plan_from_document(d2, &p2, &e_));
    bl_resolved_plan *r2 = resolve_ok(p2);
    assert_string_not_equal(bl_resolved_contract_hash(r), bl_resolved_contract_hash(r2));
    bl_resolved_plan_destroy(r2);
    bl_plan_destroy(p2);
    bl_json_destroy(d2);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);

    /* format_version 4.0 passes, as Python compares numerically. */
    d = doc("{`format`: `brainlesslab-plan`, `format_version`: 4.0, `id`: `p`, `targets`: "
            "[" TARGET "]}");
    OK_E(bl_plan_from_document(d, &p, &e_));
    bl_plan_destroy(p);
    bl_json_destroy(d);

    /* input_link_p: the reference stores floats. */
    d = doc("{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: "
            "{`input_link_p`: [1, 0.5, 0]}}}}]}");
    OK_E(bl_plan_from_document(d, &p, &e_));
    r = resolve_ok(p);
    const bl_json *lp =
        bl_json_get(bl_json_get(bl_resolved_target(r, 0), "model_config"), "input_link_p");
    assert_int_equal(bl_json_size(lp), 3);
    assert_int_equal(bl_json_kindof(bl_json_at(lp, 0)), BL_JSON_REAL);
    assert_true(bl_json_get_real(bl_json_at(lp, 0)) == 1.0);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    bl_json_destroy(d);

    /* SORN: sixteen fields, p_ee = 10/166. */
    d = doc("{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`kind`: `sorn`}}}]}");
    OK_E(bl_plan_from_document(d, &p, &e_));
    r = resolve_ok(p);
    cfg = bl_json_get(bl_resolved_target(r, 0), "model_config");
    assert_int_equal(bl_json_size(cfg), 16);
    assert_true(bl_json_get_real(bl_json_get(cfg, "p_ee")) == 10.0 / 166.0);
    assert_true(bl_json_get_bool(bl_json_get(cfg, "learn_on")));
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    bl_json_destroy(d);
}

/* ---- validation -------------------------------------------------------- */

typedef struct bad_case {
    const char *doc;
    bl_status status;
    const char *msg;
} bad_case;

static const bad_case document_errors[] = {
    /* §2.1 step 2 */
    {"{`format`: `brainlesslab-plan`, `format_version`: 3, `id`: `p`}", BL_EVALUE,
     FORMAT " (found format_version = 3, expected format_version = 4)"},
    {"{`format_version`: 4, `id`: `p`}", BL_EVALUE,
     FORMAT " (found no format key, expected format = \"brainlesslab-plan\")"},
    {"{`format`: `brainlesslab-plan`, `format_version`: true}", BL_EVALUE,
     FORMAT " (found format_version = true, expected format_version = 4)"},
    {"{`format`: `brainlesslab-plan`, `id`: `p`}", BL_EVALUE,
     FORMAT " (found no format_version key, expected format_version = 4)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4.5}", BL_EVALUE,
     FORMAT " (found format_version = 4.5, expected format_version = 4)"},
    {"{`format`: [`brainlesslab-plan`], `format_version`: 4}", BL_EVALUE,
     FORMAT " (found format = [\"brainlesslab-plan\"], expected format = "
            "\"brainlesslab-plan\")"},
    {"{`format`: `brainlesslab-record`, `format_version`: 2, `id`: `r`}", BL_EVALUE,
     FORMAT " (found format = \"brainlesslab-record\": this is a record manifest, not a plan; "
            "run plans, inspect records)"},
    {"{}", BL_EVALUE, FORMAT " (the file is empty)"},
    {"[]", BL_EVALUE, FORMAT " (the document is not a table)"},
    /* unknown and missing fields: the spec's "invalid <Class> fields: ",
     * located, with what is allowed */
    {"{" HEAD ", `targets`: [" TARGET "], `colour`: 1}", BL_EVALUE,
     "invalid Plan fields: unknown key 'colour' (allowed: id, targets, evaluation, numerics, "
     "operation, question, version, evidence, diagnostic)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `targets`: [" TARGET "]}", BL_EVALUE,
     "invalid Plan fields: missing required key 'id'"},
    {"{" HEAD ", `targets`: [" TARGET ", {`label`: `x`}]}", BL_EVALUE,
     "targets[1]: invalid EvaluationTarget fields: missing required key 'id'"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 1, `verb`: `blind_input`}, "
     "{}]}]}",
     BL_EVALUE, "targets[0].interventions[1]: invalid Intervention fields: missing required "
                "keys 'tick' and 'verb'"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`kind`: `sorn`, `x`: 1}}}]}",
     BL_EVALUE, "targets[0].composition.node: invalid NodeSpec fields: unknown key 'x' "
                "(allowed: kind, parameters)"},
    {"{" HEAD ", `targets`: [" TARGET ", {`id`: `b`, `composition`: {`size`: 1}}]}", BL_EVALUE,
     "targets[1].composition: invalid CompositionSpec fields: unknown key 'size' (allowed: "
     "node, task, count, input_gain)"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`seeds`: 1}}", BL_EVALUE,
     "evaluation: invalid EvaluationSpec fields: unknown key 'seeds' (allowed: blocks, "
     "trials_per_block, horizon, warmup, construction_scope, root_seed, seed_partition)"},
    {"{" HEAD ", `targets`: [" TARGET "], `numerics`: {`fma`: false}}", BL_EVALUE,
     "numerics: invalid NumericalPolicy fields: unknown key 'fma' (allowed: dtype, fast_math, "
     "reduction, rng)"},
    {"{" HEAD ", `targets`: [" TARGET "], `numerics`: 5}", BL_EVALUE,
     "numerics: invalid NumericalPolicy fields: expected a table, found an integer"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: `pong`}}]}", BL_EVALUE,
     "targets[0].composition.task: invalid TaskSpec fields: expected a table, found a string"},
    {"{" HEAD ", `targets`: [" TARGET ", 7]}", BL_EVALUE,
     "targets[1]: invalid EvaluationTarget fields: expected a table, found an integer"},
    {"{" HEAD ", `targets`: {`id`: `a`}}", BL_EVALUE,
     "invalid Plan fields: targets must be an array of tables ([[targets]]), found a table"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: {`tick`: 1}}]}", BL_EVALUE,
     "targets[0]: invalid EvaluationTarget fields: interventions must be an array of tables, "
     "found a table"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `label`: 3}]}", BL_EVALUE,
     "targets[0]: invalid EvaluationTarget fields: label must be a string, found an integer"},
    {"{" HEAD ", `targets`: [" TARGET "], `diagnostic`: `yes`}", BL_EVALUE,
     "invalid Plan fields: diagnostic must be a boolean, found a string"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: [1]}}}]}",
     BL_EVALUE, "targets[0].composition.node: invalid NodeSpec fields: parameters must be a "
                "table, found an array"},
    /* §1.1 configuration values, located down to the key */
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: {`options`: {`x`: {}}}}}]}",
     BL_EVALUE, "targets[0].composition.task.options.x: invalid TaskSpec fields: unsupported "
                "configuration value: dict"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: "
     "{`a b`: [1, null]}}}}]}",
     BL_EVALUE, "targets[0].composition.node.parameters.\"a b\": invalid NodeSpec fields: "
                "unsupported configuration value: NoneType"},
    /* §1.2: the spec's text after the location */
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`count`: 64.0}}]}", BL_EVALUE,
     "targets[0].composition: count must be an integer >= 1"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`count`: true}}]}", BL_EVALUE,
     "targets[0].composition: count must be an integer >= 1"},
    {"{" HEAD ", `targets`: [" TARGET ", {`id`: `b`, `composition`: {`count`: 0}}]}", BL_EVALUE,
     "targets[1].composition: count must be an integer >= 1"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`input_gain`: -1}}]}", BL_EVALUE,
     "targets[0].composition: input_gain must be finite and non-negative"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`input_gain`: `x`}}]}", BL_EVALUE,
     "targets[0].composition: invalid CompositionSpec fields: input_gain must be a number, "
     "found a string"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`kind`: `lif`}}}]}",
     BL_EVALUE, "targets[0].composition.node: unsupported node 'lif'; archived nodes require "
                "Julia"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: {`kind`: `maze`}}}]}",
     BL_EVALUE, "targets[0].composition.task: unsupported task 'maze'; historical tasks require "
                "Julia"},
    {"{" HEAD ", `targets`: [{`id`: ``}]}", BL_EVALUE,
     "targets[0]: id must be a non-empty stable identity"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `mechanism_key`: ``}]}", BL_EVALUE,
     "targets[0]: mechanism_key must be a non-empty stable identity"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 1, `verb`: "
     "`blind_input`}, {`tick`: 1, `verb`: `blind_input`}]}]}",
     BL_EVALUE, "targets[0].interventions[1]: duplicate intervention (the same tick and verb as "
                "interventions[0])"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 0, `verb`: "
     "`blind_input`}]}]}",
     BL_EVALUE, "targets[0].interventions[0]: intervention tick must be an integer >= 1"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 1, `verb`: `sleep`}]}]}",
     BL_EVALUE, "targets[0].interventions[0]: unsupported intervention 'sleep'"},
    {"{" HEAD ", `targets`: [" TARGET "], `numerics`: {`dtype`: `float16`}}", BL_EVALUE,
     "numerics: dtype must be float64 or float32"},
    {"{" HEAD ", `targets`: [" TARGET "], `numerics`: {`fast_math`: true}}", BL_EVALUE,
     "numerics: this release supports strict ordered arithmetic and philox-host-v1"},
    {"{" HEAD ", `targets`: [" TARGET "], `numerics`: {`rng`: `mt19937`}}", BL_EVALUE,
     "numerics: this release supports strict ordered arithmetic and philox-host-v1"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`construction_scope`: `run`}}",
     BL_EVALUE, "evaluation: invalid construction_scope (found construction_scope = \"run\", "
                "expected evaluation, block or trial)"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`seed_partition`: ``}}", BL_EVALUE,
     "evaluation: seed_partition must name a disjoint scientific seed bank"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`horizon`: 5, `warmup`: 5}}",
     BL_EVALUE, "evaluation: horizon must exceed warmup"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`blocks`: 0}}", BL_EVALUE,
     "evaluation: blocks must be an integer >= 1"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`warmup`: -1}}", BL_EVALUE,
     "evaluation: warmup must be an integer >= 0"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`root_seed`: 1.5}}", BL_EVALUE,
     "evaluation: root_seed must be an integer >= 0"},
    {"{" HEAD ", `targets`: []}", BL_EVALUE,
     "a plan needs an id and at least one target (found no targets)"},
    {"{" HEAD "}", BL_EVALUE, "a plan needs an id and at least one target (found no targets)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: ``, `targets`: [" TARGET "]}",
     BL_EVALUE, "a plan needs an id and at least one target (the plan id is empty)"},
    {"{" HEAD ", `targets`: [{`id`: `b`}, " TARGET ", {`id`: `c`}, " TARGET "]}", BL_EVALUE,
     "condition IDs must be unique (targets[1] and targets[3] both have id = \"a\")"},
    {"{" HEAD ", `targets`: [" TARGET "], `operation`: `evolve`}", BL_EVALUE,
     "unsupported operation (found operation = \"evolve\", expected profile, sweep, ablate, "
     "benchmark or calibrate)"},
    {"{" HEAD ", `targets`: [" TARGET "], `evidence`: `sure`}", BL_EVALUE,
     "unknown evidence state (found evidence = \"sure\", expected planned, exploratory, tuned, "
     "frozen or retired)"},
    {"{" HEAD ", `targets`: [" TARGET "], `evidence`: `promoted`}", BL_EVALUE,
     "the development runner cannot confer confirmed or promoted evidence"},
    /* A plan id names a record directory: no control characters (C0, DEL,
     * C1), so that check refuses what run could not name. */
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `line\\nbreak`, `targets`: "
     "[" TARGET "]}",
     BL_EVALUE, "plan id must be a portable record-name component (the id holds the control "
                "character U+000A)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `\\u0001x`, `targets`: "
     "[" TARGET "]}",
     BL_EVALUE, "plan id must be a portable record-name component (the id holds the control "
                "character U+0001)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `x\\u001f`, `targets`: "
     "[" TARGET "]}",
     BL_EVALUE, "plan id must be a portable record-name component (the id holds the control "
                "character U+001F)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `a\\u007fb`, `targets`: "
     "[" TARGET "]}",
     BL_EVALUE, "plan id must be a portable record-name component (the id holds the control "
                "character U+007F)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `\\u00e9\\u0080`, `targets`: "
     "[" TARGET "]}",
     BL_EVALUE, "plan id must be a portable record-name component (the id holds the control "
                "character U+0080)"},
    {"{`format`: `brainlesslab-plan`, `format_version`: 4, `id`: `x\\u009fy`, `targets`: "
     "[" TARGET "]}",
     BL_EVALUE, "plan id must be a portable record-name component (the id holds the control "
                "character U+009F)"},
    /* Order: targets before evaluation before the plan's own checks. */
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`count`: 0}}], `evaluation`: "
     "{`blocks`: 0}, `operation`: `x`}",
     BL_EVALUE, "targets[0].composition: count must be an integer >= 1"},
};

static const bad_case resolve_errors[] = {
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: "
     "{`leek`: 0.1}}}}]}",
     BL_ETYPE, "targets[0].composition.node.parameters: unknown falandays parameter 'leek' "
               "(allowed: leak, lrate_wmat, lrate_targ, threshold_mult, targ_min, input_weight, "
               "weight_init_std, learn_on, link_p, input_link_p, weight_init_mode, "
               "recurrent_init_scale, rectify, repair_masks, axis, inhibitory_frac, drive, "
               "membrane_noise, noise_gain)"},
    {"{" HEAD ", `targets`: [" TARGET ", {`id`: `b`, `composition`: {`node`: {`kind`: `sorn`, "
     "`parameters`: {`eta_stpd`: 0.1}}}}]}",
     BL_ETYPE, "targets[1].composition.node.parameters: unknown sorn parameter 'eta_stpd' "
               "(allowed: inhibitory_fraction, p_ee, p_ei, p_ie, p_input, p_output, ee_row_sum, "
               "ei_row_sum, ie_row_sum, input_row_sum, T_E_max, T_I_max, eta_stdp, eta_ip, H_ip, "
               "learn_on)"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`kind`: `sorn`, "
     "`parameters`: {`learn_on`: 1}}}}]}",
     BL_ETYPE, "targets[0].composition.node.parameters: learn_on must be a bool"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: "
     "{`leak`: `x`}}}}]}",
     BL_ETYPE, "targets[0].composition.node.parameters: FalandaysConfig.leak must be a number"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: {`options`: {`x`: 1}}}}]}",
     BL_EVALUE, "targets[0].composition.task.options: unknown options for delayed_cue: ['x']"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`warmup`: 1}}", BL_EVALUE,
     "targets[0]: episode tasks require warmup=0"},
    {"{" HEAD ", `targets`: [" TARGET "], `evaluation`: {`horizon`: 100}}", BL_EVALUE,
     "targets[0]: probe horizon must contain the entire episode or session (found horizon 100, "
     "the delayed_cue episode needs 144)"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: {`kind`: `pong`}}}], "
     "`evaluation`: {`horizon`: 100}}",
     BL_EVALUE, "targets[0]: pong requires 6000 scored ticks (found horizon 100 - warmup 0 = 100)"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: {`kind`: `pong`}}}], "
     "`evaluation`: {`horizon`: 100, `warmup`: 100}}",
     BL_EVALUE, "evaluation: horizon must exceed warmup"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`task`: {`kind`: `pong`}}}], "
     "`evaluation`: {`warmup`: 8000}}",
     BL_EVALUE, "targets[0]: horizon must exceed warm-up"},
    {"{" HEAD ", `targets`: [" TARGET ", {`id`: `b`, `controller`: `bag`}]}", BL_EVALUE,
     "targets[1]: policy 'bag' is not defined for delayed_cue"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: "
     "{`learn_on`: false}}}, `interventions`: [{`tick`: 1, `verb`: `freeze_weights`}]}]}",
     BL_EVALUE, "targets[0]: cannot freeze learning which is already disabled"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 2, `verb`: "
     "`freeze_weights`}, {`tick`: 1, `verb`: `freeze_plasticity`}]}]}",
     BL_EVALUE, "targets[0]: freeze_weights would not change the declared mechanism"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 1, `verb`: "
     "`freeze_weights`}, {`tick`: 1, `verb`: `freeze_plasticity`}]}]}",
     BL_EVALUE, "targets[0]: same-tick freeze_weights and freeze_plasticity are redundant"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`node`: {`parameters`: "
     "{`lrate_wmat`: 0, `lrate_targ`: 0}}}, `interventions`: [{`tick`: 1, `verb`: "
     "`freeze_plasticity`}]}]}",
     BL_EVALUE, "targets[0]: freeze_plasticity would not change the declared mechanism"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`input_gain`: 0.0}, "
     "`interventions`: [{`tick`: 1, `verb`: `blind_input`}]}]}",
     BL_EVALUE, "targets[0]: blind_input would not change the declared interface"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 1, `verb`: "
     "`blind_input`}, {`tick`: 2, `verb`: `shuffle_input`}]}]}",
     BL_EVALUE, "targets[0]: shuffle_input would not change the declared interface"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `interventions`: [{`tick`: 145, `verb`: "
     "`blind_input`}]}]}",
     BL_EVALUE, "targets[0]: intervention is beyond the trial horizon (interventions[0] has tick "
                "145, the horizon is 144)"},
    {"{" HEAD ", `targets`: [{`id`: `a`, `controller`: `oracle`, `interventions`: "
     "[{`tick`: 1, `verb`: `blind_input`}]}]}",
     BL_EVALUE, "targets[0]: reservoir interventions require a reservoir controller"},
    {"{" HEAD ", `operation`: `calibrate`, `targets`: [" TARGET "]}", BL_EVALUE,
     "targets[0]: calibration requires the reference null and calibration seed bank"},
    {"{" HEAD ", `operation`: `calibrate`, `targets`: [{`id`: `a`, `controller`: "
     "`reference_null`}], `evaluation`: {`seed_partition`: `calibration`}}",
     BL_EVALUE, "targets[0]: empirical calibration requires 1024 full independent trajectories"},
};

/* ---- operation constructors (§1.6) --------------------------------------- */

/* The plain targets of a plan. */
static const bl_json *targets_of(const bl_plan *p)
{
    const bl_json *t = bl_json_get(bl_plan_plain(p), "targets");
    assert_non_null(t);
    return t;
}

static const char *target_str(const bl_plan *p, size_t i, const char *key)
{
    return bl_json_get_string(bl_json_get(bl_json_at(targets_of(p), i), key), NULL);
}

/* sweep() rebuilds the reference's generated sweep plan target for target:
 * ids (digests of the merged parameters), labels, compositions. */
static void test_sweep_constructor_matches_reference(void **state)
{
    (void)state;
    BL_REQUIRE_SHARED();
    bl_plan *want = read_shared("sweep-delayed-cue.toml");
    bl_json *comp = doc("{`count`: 16, `node`: {`kind`: `falandays`}, "
                        "`task`: {`kind`: `delayed_cue`}}");
    bl_json *axes = doc("{`leak`: [0.1, 0.25, 0.5]}");
    bl_json *eval = bl_json_copy(bl_json_get(bl_plan_plain(want), "evaluation"));
    bl_plan *got = NULL;
    bl_error err = {0};
    if (bl_plan_sweep(comp, axes, eval, NULL, NULL, false, &got, &err) != BL_OK)
        fail_msg("sweep: %s", err.msg);
    assert_true(bl_json_equal(targets_of(got), targets_of(want)));
    assert_string_equal(bl_plan_id(got), "sweep");
    assert_string_equal(bl_json_get_string(bl_json_get(bl_plan_plain(got), "operation"), NULL),
                        "sweep");
    bl_plan_destroy(got);
    /* Two axes: first outermost, last fastest; labels list only the cell. */
    bl_json *two = doc("{`leak`: [0.1, 0.2], `link_p`: [0.05, 0.1, 0.2]}");
    if (bl_plan_sweep(comp, two, NULL, NULL, "two", false, &got, &err) != BL_OK)
        fail_msg("sweep: %s", err.msg);
    assert_int_equal(bl_json_size(targets_of(got)), 6);
    assert_string_equal(target_str(got, 0, "label"), "{'leak': 0.1, 'link_p': 0.05}");
    assert_string_equal(target_str(got, 1, "label"), "{'leak': 0.1, 'link_p': 0.1}");
    assert_string_equal(target_str(got, 5, "label"), "{'leak': 0.2, 'link_p': 0.2}");
    bl_plan_destroy(got);
    /* Empty axes or an empty value list are refused. */
    bl_json *empty[2] = {doc("{}"), doc("{`leak`: []}")};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(bl_plan_sweep(comp, empty[k], NULL, NULL, NULL, false, &got, &err),
                         BL_EVALUE);
        assert_string_equal(err.msg, "sweep needs non-empty explicit parameter axes");
        assert_null(got);
        bl_json_destroy(empty[k]);
    }
    bl_json_destroy(two);
    bl_json_destroy(eval);
    bl_json_destroy(axes);
    bl_json_destroy(comp);
    bl_plan_destroy(want);
}

static void test_other_constructors(void **state)
{
    (void)state;
    bl_error err = {0};
    bl_json *comp = doc("{`count`: 8, `task`: {`kind`: `delayed_xor`}}");
    bl_plan *p = NULL;
    /* profile: one "baseline". */
    if (bl_plan_profile(comp, NULL, NULL, NULL, false, &p, &err) != BL_OK)
        fail_msg("profile: %s", err.msg);
    assert_string_equal(bl_plan_id(p), "profile");
    assert_int_equal(bl_json_size(targets_of(p)), 1);
    assert_string_equal(target_str(p, 0, "id"), "baseline");
    bl_plan_destroy(p);
    /* ablate: baseline, then one target per verb with its intervention. */
    if (bl_plan_ablate(comp, NULL, 0, 1, NULL, NULL, NULL, false, &p, &err) != BL_OK)
        fail_msg("ablate: %s", err.msg);
    assert_string_equal(bl_plan_id(p), "ablation");
    assert_int_equal(bl_json_size(targets_of(p)), 3);
    assert_string_equal(target_str(p, 1, "id"), "freeze_weights");
    assert_string_equal(target_str(p, 2, "id"), "freeze_plasticity");
    const bl_json *iv = bl_json_at(bl_json_get(bl_json_at(targets_of(p), 2), "interventions"), 0);
    assert_int_equal(bl_json_get_int(bl_json_get(iv, "tick")), 1);
    assert_string_equal(bl_json_get_string(bl_json_get(iv, "verb"), NULL), "freeze_plasticity");
    assert_int_equal(bl_json_size(bl_json_get(bl_json_at(targets_of(p), 0), "interventions")), 0);
    bl_plan_destroy(p);
    static const char *const verbs[] = {"blind_input"};
    if (bl_plan_ablate(comp, verbs, 1, 0, NULL, NULL, NULL, false, &p, &err) == BL_OK)
        fail_msg("an intervention at tick 0 was accepted");
    assert_string_equal(err.msg,
                        "targets[1].interventions[0]: intervention tick must be an integer >= 1");
    /* benchmark: four tasks, each reservoir then its null, paired by task. */
    bl_json *node = doc("{`kind`: `sorn`}");
    if (bl_plan_benchmark(node, 32, NULL, NULL, NULL, &p, &err) != BL_OK)
        fail_msg("benchmark: %s", err.msg);
    static const char *const ids[] = {"tracking", "tracking_null", "pong", "pong_null",
                                      "cartpole_plank_easy", "cartpole_plank_easy_null",
                                      "delayed_cue", "delayed_cue_null"};
    assert_int_equal(bl_json_size(targets_of(p)), 8);
    for (size_t k = 0; k < 8; k++) {
        assert_string_equal(target_str(p, k, "id"), ids[k]);
        assert_string_equal(target_str(p, k, "controller"),
                            k % 2 ? "reference_null" : "reservoir");
        char pairing[64];
        snprintf(pairing, sizeof pairing, "benchmark/%s", ids[k - k % 2]);
        assert_string_equal(target_str(p, k, "pairing_key"), pairing);
    }
    bl_resolved_plan *r = resolve_ok(p);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    /* calibrate: 1024 x 1 in the calibration partition, resolvable. */
    bl_json *task = doc("{`kind`: `pong`}");
    if (bl_plan_calibrate(task, 91337, NULL, 0, &p, &err) != BL_OK)
        fail_msg("calibrate: %s", err.msg);
    assert_string_equal(bl_plan_id(p), "calibration");
    const bl_json *ev = bl_json_get(bl_plan_plain(p), "evaluation");
    assert_int_equal(bl_json_get_int(bl_json_get(ev, "blocks")), 1024);
    assert_int_equal(bl_json_get_int(bl_json_get(ev, "trials_per_block")), 1);
    assert_int_equal(bl_json_get_int(bl_json_get(ev, "root_seed")), 91337);
    assert_string_equal(bl_json_get_string(bl_json_get(ev, "seed_partition"), NULL),
                        "calibration");
    assert_string_equal(target_str(p, 0, "controller"), "reference_null");
    r = resolve_ok(p);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    bl_json_destroy(task);
    bl_json_destroy(node);
    bl_json_destroy(comp);
}

/* Each case must fail with its status and message, from reading its
 * document (and with `resolve`, from resolving the plan read), and return
 * nothing. */
static void expect_bad_cases(const bad_case *cases, size_t n, bool resolve)
{
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &cases[i];
        bl_json *d = doc(c->doc);
        bl_plan *p = NULL;
        bl_resolved_plan *r = NULL;
        bl_error err = {0};
        bl_status st = bl_plan_from_document(d, &p, &err);
        if (st == BL_OK && resolve)
            st = bl_plan_resolve(p, &r, &err);
        if (st != c->status || strcmp(err.msg, c->msg) != 0)
            fail_msg("case %zu: got %s '%s', want %s '%s'", i, bl_status_kind(st), err.msg,
                     bl_status_kind(c->status), c->msg);
        if (!resolve)
            assert_null(p);
        assert_null(r);
        bl_plan_destroy(p);
        bl_json_destroy(d);
    }
}

static void test_document_errors(void **state)
{
    (void)state;
    expect_bad_cases(document_errors, sizeof document_errors / sizeof *document_errors, false);
}

static void test_resolve_errors(void **state)
{
    (void)state;
    expect_bad_cases(resolve_errors, sizeof resolve_errors / sizeof *resolve_errors, true);
    /* Allowed: a later freeze_plasticity after freeze_weights, an alias
     * controller (kept as given), diagnostic short horizons. */
    bl_json *d = doc("{" HEAD ", `diagnostic`: true, `targets`: [{`id`: `a`, `interventions`: "
                     "[{`tick`: 1, `verb`: `freeze_weights`}, {`tick`: 2, `verb`: "
                     "`freeze_plasticity`}]}, {`id`: `b`, `controller`: "
                     "`reference_nullblindpolicy`, `composition`: {`task`: {`kind`: `pong`}}}],"
                     " `evaluation`: {`horizon`: 200}}");
    bl_plan *p = NULL;
    OK_E(bl_plan_from_document(d, &p, &e_));
    bl_resolved_plan *r = resolve_ok(p);
    const bl_json *t = bl_json_get(bl_resolved_target(r, 1), "target");
    assert_string_equal(bl_json_get_string(bl_json_get(t, "controller"), NULL),
                        "reference_nullblindpolicy");
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    bl_json_destroy(d);
}

/* bl_test_fail_each's operation: read and resolve the plan file ctx. A
 * memory error that names the file is turned into a RuntimeError, which
 * fails the test: running out of memory is not the file's fault. */
static bl_status read_and_resolve(void *ctx, bl_error *err)
{
    const char *path = ctx;
    bl_plan *p = NULL;
    bl_resolved_plan *r = NULL;
    bl_status st = bl_plan_read(path, &p, err);
    if (st == BL_OK)
        st = bl_plan_resolve(p, &r, err);
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    if (st == BL_ENOMEM && strstr(err->msg, path)) {
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        st = bl_fail(err, BL_ERUNTIME, "a memory error blames the file: %s", msg);
    }
    return st;
}

/* A plan read from a file names it in front of every message of reading
 * and of resolution (the location stays after it); memory errors are not
 * the file's fault and say nothing of it. */
static void test_read_errors_name_the_file(void **state)
{
    const char *path = bl_test_path(state, "plan.toml");
    static const struct {
        const char *toml, *msg;
        bl_status status;
        bool resolves;
    } cases[] = {
        {"format = \"brainlesslab-plan\"\nformat_version = 5\n",
         FORMAT " (found format_version = 5, expected format_version = 4)", BL_EVALUE, false},
        {"format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"p\"\n[[targets]]\n"
         "id = \"a\"\n[[targets]]\nid = \"b\"\n[targets.composition.node]\nfoo = 1\n",
         "targets[1].composition.node: invalid NodeSpec fields: unknown key 'foo' (allowed: "
         "kind, parameters)",
         BL_EVALUE, false},
        {"format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"p\"\n[[targets]]\n"
         "id = \"a\"\n[[targets]]\nid = \"b\"\ncontroller = \"bag\"\n",
         "targets[1]: policy 'bag' is not defined for delayed_cue", BL_EVALUE, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(cases[i].toml, f);
        assert_int_equal(fclose(f), 0);
        bl_plan *p = NULL;
        bl_resolved_plan *r = NULL;
        bl_error err = {0};
        bl_status st = bl_plan_read(path, &p, &err);
        assert_int_equal(st == BL_OK, cases[i].resolves);
        if (st == BL_OK)
            st = bl_plan_resolve(p, &r, &err);
        char want[8400];
        snprintf(want, sizeof want, "%s: %s", path, cases[i].msg);
        assert_int_equal(st, cases[i].status);
        assert_string_equal(err.msg, want);
        assert_null(r);
        /* Resolution still names the file after the plan's first use. */
        if (p) {
            assert_int_equal(bl_plan_resolve(p, &r, &err), cases[i].status);
            assert_string_equal(err.msg, want);
        }
        bl_plan_destroy(p);
    }
    /* A plan that resolves, read and resolved under each allocation
     * failure in turn: every one a MemoryError that does not blame the
     * file. */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("format = \"brainlesslab-plan\"\nformat_version = 4\nid = \"p\"\n[[targets]]\n"
          "id = \"a\"\n[targets.composition.node.parameters]\ninput_link_p = [0.5, 1, 0.5]\n",
          f);
    assert_int_equal(fclose(f), 0);
    assert_true(bl_test_fail_each(read_and_resolve, (void *)path, 1) > 1); /* only read */
}

/* Only the plan id names a directory: control characters elsewhere (target
 * ids, keys, labels, question) are text like any other and stay allowed
 * (stderr escapes them when it prints them), and so do the printable
 * characters next to the C1 range (U+00A0, U+00E9) in a plan id. */
static void test_control_characters_outside_the_plan_id(void **state)
{
    (void)state;
    bl_json *d = doc("{`format`: `brainlesslab-plan`, `format_version`: 4, "
                     "`id`: `caf\\u00e9\\u00a0x`, `question`: `a\\nb`, "
                     "`targets`: [{`id`: `t\\u0085`, `label`: `tab\\there`, "
                     "`pairing_key`: `p\\u007f`}]}");
    bl_plan *p = NULL;
    bl_error err = {0};
    if (bl_plan_from_document(d, &p, &err) != BL_OK)
        fail_msg("refused: %s", err.msg);
    assert_string_equal(bl_plan_id(p), "caf\xc3\xa9\xc2\xa0x");
    bl_resolved_plan *r = resolve_ok(p);
    assert_string_equal(target_str(p, 0, "id"), "t\xc2\x85");
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(p);
    bl_json_destroy(d);
}

/* ---- allocation failures ---------------------------------------------- */

static void test_allocation_failures_are_clean(void **state)
{
    (void)state;
    bl_json *d = doc("{" HEAD ", `targets`: [{`id`: `a`, `composition`: {`count`: 8, "
                     "`node`: {`parameters`: {`input_link_p`: [0.5, 1, 0.25]}}, `task`: "
                     "{`options`: {`delays`: [4, 8]}}}, `interventions`: [{`tick`: 3, `verb`: "
                     "`shuffle_input`}]}, {`id`: `b`, `composition`: {`node`: {`kind`: "
                     "`sorn`}, `task`: {`kind`: `tracking`}}}], `evaluation`: {`blocks`: 2}}");
    for (long k = 1;; k++) {
        bl_alloc_fail_at(k);
        bl_error err = {0};
        bl_plan *p = NULL;
        bl_resolved_plan *r = NULL;
        char hex[65];
        bl_status st = bl_plan_from_document(d, &p, &err);
        if (st == BL_OK)
            st = bl_plan_resolve(p, &r, &err);
        if (st == BL_OK)
            st = bl_plan_wiring_id(r, 0, 1, 0, hex, &err);
        long used = bl_alloc_count();
        bl_alloc_fail_at(0);
        bl_resolved_plan_destroy(r);
        bl_plan_destroy(p);
        if (k > used) {
            assert_int_equal(st, BL_OK);
            break;
        }
        if (st != BL_ENOMEM || err.status != BL_ENOMEM)
            fail_msg("allocation %ld of %ld failed but status %s (%s)", k, used,
                     bl_status_kind(st), err.msg);
    }
    bl_json_destroy(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delayed_cue_contract_vector),
        cmocka_unit_test(test_every_shared_plan_resolves),
        cmocka_unit_test(test_sweep_ids_and_labels),
        cmocka_unit_test(test_wiring_id_example),
        cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_defaults_and_kinds_are_kept),
        cmocka_unit_test(test_sweep_constructor_matches_reference),
        cmocka_unit_test(test_other_constructors),
        cmocka_unit_test(test_document_errors),
        cmocka_unit_test(test_resolve_errors),
        BL_TEST_IN_DIR(test_read_errors_name_the_file),
        cmocka_unit_test(test_control_characters_outside_the_plan_id),
        cmocka_unit_test(test_allocation_failures_are_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
