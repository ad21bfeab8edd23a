/* Plans from documents (spec/platform.md §1.1–§1.2, §2.1–§2.2).
 *
 * bl_plan_from_document follows the reference's read_plan step by step:
 * the format check, then every target (node, task, composition,
 * interventions, target), then evaluation, numerics and the plan itself, so
 * the first error reported is the reference's. Each specification object is
 * checked like its Python constructor: unknown or missing fields first, then
 * the __post_init__ checks in their order. The plan is kept as plain(plan).
 *
 * Messages name where the problem is: "<where>: <text>", where <where> is
 * the TOML path of the offending table or value (targets[2].composition.node,
 * evaluation, targets[0].interventions[1], ...; zero-based indices; left
 * out for the top-level table), and <text> is the spec's text where it
 * gives one, followed by what was found in parentheses where that helps.
 * bl_plan_read puts the file in front ("<file>: <where>: <text>").
 * Wording where the spec gives none (documented in docs/plans.md, ours):
 *  - the format check keeps the spec's text and adds what was found: "(the
 *    file is empty)", "(found format_version = 5, expected format_version =
 *    4)", and for a record manifest "(found format = "brainlesslab-record":
 *    this is a record manifest, not a plan; run plans, inspect records)";
 *  - unknown key:   "invalid <Class> fields: unknown key '<name>' (allowed:
 *    <keys>)";
 *  - missing key:   "invalid <Class> fields: missing required key 'id'"
 *    (two: "keys 'tick' and 'verb'");
 *  - a non-table where a table belongs: "invalid <Class> fields: expected a
 *    table, found <kind>" (TOML kinds: a string, an integer, ...);
 *  - a value of the wrong kind for a free-text or key field (ids, keys,
 *    label, controller, question, version, seed_partition), input_gain, a
 *    non-table parameters/options, a non-array targets/interventions, a
 *    non-boolean diagnostic: "invalid <Class> fields: <name> must be <kind>,
 *    found <kind>". The reference would accept some of these (an int id);
 *    this implementation does not, because every identity it hashes or
 *    records is text;
 *  - a plan id holding a control character (C0, DEL, C1): the CLI's text for
 *    ids that are not record-name components, "plan id must be a portable
 *    record-name component (the id holds the control character U+000A)",
 *    here already, so that `check` refuses what `run` could not name.
 * All of these are ValueError (BL_EVALUE), as read_plan turns constructor
 * TypeErrors into ValueErrors. Integers beyond 64 bits are rejected where an
 * integer is counted (the TOML bridge never produces them). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/text.h"
#include "plan_internal.h"

/* ---- small helpers ---------------------------------------------------- */

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a plan");
}

/* Sticky, as bl_json_put: sets key to a copy of `given`, or to `dflt` when
 * the plan leaves it out. The default is built before we know it is
 * needed; its failure still counts, so that every allocation failure is
 * reported. */
static void put_copy(bl_status *st, bl_json *obj, const char *key, const bl_json *given,
                     bl_json *dflt, bl_error *err)
{
    if (given && dflt) {
        bl_json_destroy(dflt);
        dflt = bl_json_copy(given);
    }
    bl_json_put(st, obj, key, dflt, err);
}

/* Python truthiness, for the checks the reference writes as `not x`. */
static bool truthy(const bl_json *v)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_NULL:
        return false;
    case BL_JSON_BOOL:
        return bl_json_get_bool(v);
    case BL_JSON_INT:
        return bl_json_get_int(v) != 0;
    case BL_JSON_BIGINT:
        return true;
    case BL_JSON_REAL:
        return bl_json_get_real(v) != 0.0;
    case BL_JSON_STRING: {
        size_t n;
        bl_json_get_string(v, &n);
        return n > 0;
    }
    case BL_JSON_ARRAY:
    case BL_JSON_OBJECT:
        return bl_json_size(v) > 0;
    }
    return true;
}

static bool is_string(const bl_json *v, const char *s)
{
    if (!v || bl_json_kindof(v) != BL_JSON_STRING)
        return false;
    size_t n;
    const char *t = bl_json_get_string(v, &n);
    return n == strlen(s) && memcmp(t, s, n) == 0;
}

static bool one_of(const bl_json *v, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (is_string(v, names[i]))
            return true;
    return false;
}

/* The TOML kind of a value, with its article, for "found <kind>". */
static const char *toml_kind(const bl_json *v)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_NULL:
        return "null";
    case BL_JSON_BOOL:
        return "a boolean";
    case BL_JSON_INT:
    case BL_JSON_BIGINT:
        return "an integer";
    case BL_JSON_REAL:
        return "a float";
    case BL_JSON_STRING:
        return "a string";
    case BL_JSON_ARRAY:
        return "an array";
    case BL_JSON_OBJECT:
        return "a table";
    }
    return "a value";
}

/* The message built in `b` (freed here) as a ValueError; a failed append
 * is reported as the allocation failure it is. */
static bl_status fail_buf(bl_error *err, bl_buf *b)
{
    bl_status st = b->failed ? nomem(err) : bl_fail(err, BL_EVALUE, "%s", b->data);
    bl_buf_clear(b);
    return st;
}

/* Python's repr of a value inside a message ('x' for strings). */
static bl_status fail_repr(bl_error *err, const char *before, const bl_json *v, const char *after)
{
    char storage[BL_ERROR_MAX];
    bl_buf b;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    bl_buf_puts(&b, before);
    bl_plan_repr(&b, v);
    bl_buf_puts(&b, after);
    return fail_buf(err, &b);
}

/* A value as the plan would spell it: JSON's spelling of strings, numbers,
 * booleans and arrays is TOML's too; non-finite floats are TOML's. */
static void put_value(bl_buf *b, const bl_json *v)
{
    if (bl_json_kindof(v) == BL_JSON_REAL && !isfinite(bl_json_get_real(v))) {
        double d = bl_json_get_real(v);
        bl_buf_puts(b, isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
        return;
    }
    if (bl_json_write(v, BL_JSON_SPACED, b, NULL) != BL_OK)
        b->failed = true;
}

bl_status bl_plan_at(bl_status st, bl_error *err, const char *fmt, ...)
{
    if (st == BL_OK || st == BL_ENOMEM)
        return st;
    char where[BL_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(where, sizeof where, fmt, ap);
    va_end(ap);
    bl_error_prefix(err, "%s", where);
    return st;
}

/* "<text> (found <key> = <value>, expected <expected>)": the spec's text
 * with what the plan holds and what it could hold instead. */
static bl_status fail_found(bl_error *err, const char *text, const char *key, const bl_json *v,
                            const char *expected)
{
    char storage[BL_ERROR_MAX];
    bl_buf b;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    bl_buf_printf(&b, "%s (found %s = ", text, key);
    put_value(&b, v);
    bl_buf_printf(&b, ", expected %s)", expected);
    return fail_buf(err, &b);
}

/* The "integer >= m" check of §1.2: bools and reals are not integers. */
static bl_status need_int(const bl_json *v, const char *name, int64_t minimum, bl_error *err)
{
    if (bl_json_kindof(v) != BL_JSON_INT || bl_json_get_int(v) < minimum)
        return bl_fail(err, BL_EVALUE, "%s must be an integer >= %lld", name,
                       (long long)minimum);
    return BL_OK;
}

static bl_status need_string(const bl_json *v, const char *cls, const char *name, bl_error *err)
{
    if (bl_json_kindof(v) != BL_JSON_STRING)
        return bl_fail(err, BL_EVALUE, "invalid %s fields: %s must be a string, found %s", cls,
                       name, toml_kind(v));
    return BL_OK;
}

static bl_status need_table(const bl_json *v, const char *cls, bl_error *err)
{
    if (bl_json_kindof(v) != BL_JSON_OBJECT)
        return bl_fail(err, BL_EVALUE, "invalid %s fields: expected a table, found %s", cls,
                       toml_kind(v));
    return BL_OK;
}

static bool in_list(const char *key, size_t len, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(names[i]) == len && memcmp(names[i], key, len) == 0)
            return true;
    return false;
}

/* The constructor's argument check: the first unknown key (in document
 * order) wins over missing required fields, as in CPython. `skip` holds
 * keys the reader consumed before the constructor (the format keys). The
 * allowed keys are listed, so a misspelling can be seen at once. */
static bl_status check_args(const char *cls, const bl_json *obj, const char *const *fields,
                            size_t nfields, const char *const *required, size_t nrequired,
                            const char *const *skip, size_t nskip, bl_error *err)
{
    size_t n = bl_json_size(obj);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *key = bl_json_key_at(obj, i, &len);
        if (in_list(key, len, skip, nskip) || in_list(key, len, fields, nfields))
            continue;
        bl_json *name = bl_json_stringn(key, len);
        if (!name)
            return nomem(err);
        char storage[BL_ERROR_MAX];
        bl_buf b;
        bl_buf_init_fixed(&b, storage, sizeof storage);
        bl_buf_printf(&b, "invalid %s fields: unknown key ", cls);
        bl_plan_repr(&b, name);
        bl_json_destroy(name);
        bl_buf_puts(&b, " (allowed:");
        for (size_t k = 0; k < nfields; k++)
            bl_buf_printf(&b, "%s %s", k ? "," : "", fields[k]);
        bl_buf_putc(&b, ')');
        return fail_buf(err, &b);
    }
    const char *missing[2];
    size_t nmissing = 0;
    for (size_t i = 0; i < nrequired && nmissing < 2; i++)
        if (!bl_json_get(obj, required[i]))
            missing[nmissing++] = required[i];
    if (nmissing == 1)
        return bl_fail(err, BL_EVALUE, "invalid %s fields: missing required key '%s'", cls,
                       missing[0]);
    if (nmissing == 2)
        return bl_fail(err, BL_EVALUE,
                       "invalid %s fields: missing required keys '%s' and '%s'", cls,
                       missing[0], missing[1]);
    return BL_OK;
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* §1.1: finite numbers, scalars and arrays only. */
static bl_status check_value(const bl_json *v, const char *cls, bl_error *err)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_REAL:
        if (!isfinite(bl_json_get_real(v)))
            return bl_fail(err, BL_EVALUE, "configuration numbers must be finite");
        return BL_OK;
    case BL_JSON_BOOL:
    case BL_JSON_INT:
    case BL_JSON_BIGINT:
    case BL_JSON_STRING:
        return BL_OK;
    case BL_JSON_ARRAY: {
        bl_status st = BL_OK;
        for (size_t i = 0; i < bl_json_size(v) && st == BL_OK; i++)
            st = check_value(bl_json_at(v, i), cls, err);
        return st;
    }
    case BL_JSON_NULL:
    case BL_JSON_OBJECT:
        break;
    }
    return bl_fail(err, BL_EVALUE, "invalid %s fields: unsupported configuration value: %s", cls,
                   bl_json_python_type(v, "list"));
}

/* parameters/options of the NodeSpec or TaskSpec at `where`; a bad value is
 * located down to its key (which of twenty parameters is not finite). */
static bl_status check_options(const bl_json *opts, const char *cls, const char *name,
                               const char *where, bl_error *err)
{
    if (bl_json_kindof(opts) != BL_JSON_OBJECT)
        return bl_plan_at(bl_fail(err, BL_EVALUE,
                                  "invalid %s fields: %s must be a table, found %s", cls, name,
                                  toml_kind(opts)),
                          err, "%s", where);
    for (size_t i = 0; i < bl_json_size(opts); i++) {
        bl_status st = check_value(bl_json_value_at(opts, i), cls, err);
        if (st == BL_OK)
            continue;
        size_t len;
        const char *key = bl_json_key_at(opts, i, &len);
        char storage[BL_ERROR_MAX];
        bl_buf b;
        bl_buf_init_fixed(&b, storage, sizeof storage);
        bl_buf_printf(&b, "%s.%s.", where, name);
        /* Keys of a parsed document are valid UTF-8, the one refusal. */
        (void)bl_toml_put_key(&b, key, len, NULL);
        if (b.failed) {
            bl_buf_clear(&b);
            return nomem(err);
        }
        bl_plan_at(st, err, "%s", b.data);
        bl_buf_clear(&b);
        return st;
    }
    return BL_OK;
}

/* ---- the specification objects ---------------------------------------- */

static const char *const node_kinds[] = {"falandays", "sorn"};
static const char *const task_kinds[] = {
    "tracking",        "pong",
    "cartpole_plank_easy", "delayed_cue",
    "recall_interference", "delayed_xor",
    "evidence_accumulation", "context_integration",
    "temporal_order",  "reversal_adaptation",
};
static const char *const verbs[] = {"freeze_weights", "freeze_plasticity", "blind_input",
                                    "shuffle_input"};

/* NodeSpec or TaskSpec of target `index`: {kind, parameters|options}. */
static bl_status build_kind_spec(const bl_json *given, bool node, size_t index, bl_json **out,
                                 bl_error *err)
{
    const char *cls = node ? "NodeSpec" : "TaskSpec";
    const char *optname = node ? "parameters" : "options";
    const char *const fields[] = {"kind", optname};
    char where[64];
    snprintf(where, sizeof where, "targets[%zu].composition.%s", index, node ? "node" : "task");
    const bl_json *kind = NULL, *opts = NULL;
    bl_status st;
    if (given) {
        if ((st = need_table(given, cls, err)) != BL_OK ||
            (st = check_args(cls, given, fields, 2, NULL, 0, NULL, 0, err)) != BL_OK)
            return bl_plan_at(st, err, "%s", where);
        kind = bl_json_get(given, "kind");
        opts = bl_json_get(given, optname);
    }
    if (kind) {
        bool ok = node ? one_of(kind, node_kinds, COUNT(node_kinds))
                       : one_of(kind, task_kinds, COUNT(task_kinds));
        if (!ok)
            return bl_plan_at(node ? fail_repr(err, "unsupported node ", kind,
                                               "; archived nodes require Julia")
                                   : fail_repr(err, "unsupported task ", kind,
                                               "; historical tasks require Julia"),
                              err, "%s", where);
    }
    if (opts && (st = check_options(opts, cls, optname, where, err)) != BL_OK)
        return st;
    bl_json *o = bl_json_object();
    st = o ? BL_OK : nomem(err);
    put_copy(&st, o, "kind", kind, bl_json_string(node ? "falandays" : "delayed_cue"), err);
    put_copy(&st, o, optname, opts, bl_json_object(), err);
    return bl_json_hand_over(st, o, out);
}

static bl_status check_composition(const bl_json *comp, bl_error *err)
{
    static const char *const fields[] = {"node", "task", "count", "input_gain"};
    const bl_json *count = bl_json_get(comp, "count");
    bl_status st;
    if ((st = check_args("CompositionSpec", comp, fields, COUNT(fields), NULL, 0, NULL, 0,
                         err)) != BL_OK ||
        (count && (st = need_int(count, "count", 1, err)) != BL_OK))
        return st;
    const bl_json *gain = bl_json_get(comp, "input_gain");
    if (gain) {
        double g;
        switch (bl_json_kindof(gain)) {
        case BL_JSON_REAL:
            g = bl_json_get_real(gain);
            break;
        case BL_JSON_INT:
            g = (double)bl_json_get_int(gain);
            break;
        case BL_JSON_BOOL:
            g = bl_json_get_bool(gain) ? 1.0 : 0.0;
            break;
        case BL_JSON_BIGINT:
            g = NAN; /* beyond a double: not representable as a gain */
            break;
        default:
            return bl_fail(err, BL_EVALUE,
                           "invalid CompositionSpec fields: input_gain must be a number, "
                           "found %s",
                           toml_kind(gain));
        }
        if (!isfinite(g) || g < 0.0)
            return bl_fail(err, BL_EVALUE, "input_gain must be finite and non-negative");
    }
    return BL_OK;
}

static bl_status build_intervention(const bl_json *given, bl_json **out, bl_error *err)
{
    static const char *const fields[] = {"tick", "verb"};
    bl_status st;
    if ((st = need_table(given, "Intervention", err)) != BL_OK ||
        (st = check_args("Intervention", given, fields, 2, fields, 2, NULL, 0, err)) != BL_OK)
        return st;
    const bl_json *tick = bl_json_get(given, "tick");
    const bl_json *verb = bl_json_get(given, "verb");
    if ((st = need_int(tick, "intervention tick", 1, err)) != BL_OK)
        return st;
    if (!one_of(verb, verbs, COUNT(verbs)))
        return fail_repr(err, "unsupported intervention ", verb, "");
    bl_json *o = bl_json_object();
    st = o ? BL_OK : nomem(err);
    bl_json_put(&st, o, "tick", bl_json_copy(tick), err);
    bl_json_put(&st, o, "verb", bl_json_copy(verb), err);
    return bl_json_hand_over(st, o, out);
}

static bool same_intervention(const bl_json *a, const bl_json *b)
{
    return bl_json_equal(bl_json_get(a, "tick"), bl_json_get(b, "tick")) &&
           bl_json_equal(bl_json_get(a, "verb"), bl_json_get(b, "verb"));
}

/* The EvaluationTarget constructor's own checks of a target table. */
static bl_status check_target(const bl_json *item, bl_error *err)
{
    static const char *const fields[] = {"id",           "composition",      "label",
                                         "pairing_key",  "construction_key", "mechanism_key",
                                         "controller",   "interventions"};
    static const char *const required[] = {"id"};
    bl_status st =
        check_args("EvaluationTarget", item, fields, COUNT(fields), required, 1, NULL, 0, err);
    static const char *const keys[] = {"id", "pairing_key", "construction_key", "mechanism_key"};
    for (size_t i = 0; i < COUNT(keys) && st == BL_OK; i++) {
        const bl_json *v = bl_json_get(item, keys[i]);
        if (!v)
            continue; /* a defaulted key is non-empty */
        if (!truthy(v))
            return bl_fail(err, BL_EVALUE, "%s must be a non-empty stable identity", keys[i]);
        st = need_string(v, "EvaluationTarget", keys[i], err);
    }
    static const char *const texts[] = {"label", "controller"};
    for (size_t i = 0; i < COUNT(texts) && st == BL_OK; i++) {
        const bl_json *v = bl_json_get(item, texts[i]);
        if (v)
            st = need_string(v, "EvaluationTarget", texts[i], err);
    }
    return st;
}

/* Target `index`, one [[targets]] table → plain(EvaluationTarget), in
 * read_plan's order. */
static bl_status build_target(const bl_json *item, size_t index, bl_json **out, bl_error *err)
{
    bl_status st = need_table(item, "EvaluationTarget", err);
    if (st != BL_OK)
        return bl_plan_at(st, err, "targets[%zu]", index);
    const bl_json *comp = bl_json_get(item, "composition");
    if (comp && (st = need_table(comp, "CompositionSpec", err)) != BL_OK)
        return bl_plan_at(st, err, "targets[%zu].composition", index);
    bl_json *t = bl_json_object(), *c = bl_json_object(), *node = NULL, *task = NULL,
            *ivs = bl_json_array();
    if (!t || !c || !ivs) {
        st = nomem(err);
        goto fail;
    }
    if ((st = build_kind_spec(comp ? bl_json_get(comp, "node") : NULL, true, index, &node,
                              err)) != BL_OK)
        goto fail;
    if ((st = build_kind_spec(comp ? bl_json_get(comp, "task") : NULL, false, index, &task,
                              err)) != BL_OK)
        goto fail;
    if (comp && (st = bl_plan_at(check_composition(comp, err), err, "targets[%zu].composition",
                                 index)) != BL_OK)
        goto fail;
    bl_json_put(&st, c, "node", node, err);
    bl_json_put(&st, c, "task", task, err);
    node = task = NULL; /* taken by the puts */
    put_copy(&st, c, "count", comp ? bl_json_get(comp, "count") : NULL, bl_json_int(200), err);
    put_copy(&st, c, "input_gain", comp ? bl_json_get(comp, "input_gain") : NULL,
             bl_json_real(1.0), err);
    if (st != BL_OK)
        goto fail;

    const bl_json *given_ivs = bl_json_get(item, "interventions");
    if (given_ivs) {
        if (bl_json_kindof(given_ivs) != BL_JSON_ARRAY) {
            st = bl_plan_at(bl_fail(err, BL_EVALUE,
                                    "invalid EvaluationTarget fields: interventions must be an "
                                    "array of tables, found %s",
                                    toml_kind(given_ivs)),
                            err, "targets[%zu]", index);
            goto fail;
        }
        for (size_t i = 0; i < bl_json_size(given_ivs); i++) {
            bl_json *iv = NULL;
            if ((st = bl_plan_at(build_intervention(bl_json_at(given_ivs, i), &iv, err), err,
                                 "targets[%zu].interventions[%zu]", index, i)) != BL_OK)
                goto fail;
            if ((st = bl_json_array_append(ivs, iv, err)) != BL_OK)
                goto fail;
        }
    }

    if ((st = bl_plan_at(check_target(item, err), err, "targets[%zu]", index)) != BL_OK)
        goto fail;
    for (size_t i = 0; i < bl_json_size(ivs); i++)
        for (size_t j = 0; j < i; j++)
            if (same_intervention(bl_json_at(ivs, i), bl_json_at(ivs, j))) {
                st = bl_fail(err, BL_EVALUE,
                             "targets[%zu].interventions[%zu]: duplicate intervention (the same "
                             "tick and verb as interventions[%zu])",
                             index, i, j);
                goto fail;
            }

    bl_json_put(&st, t, "id", bl_json_copy(bl_json_get(item, "id")), err);
    bl_json_put(&st, t, "composition", c, err);
    c = NULL;
    static const struct {
        const char *key, *dflt;
    } strs[] = {{"label", ""},
                {"pairing_key", "paired-worlds"},
                {"construction_key", "paired-construction"},
                {"mechanism_key", "paired-mechanism"},
                {"controller", "reservoir"}};
    for (size_t i = 0; i < COUNT(strs); i++)
        put_copy(&st, t, strs[i].key, bl_json_get(item, strs[i].key),
                 bl_json_string(strs[i].dflt), err);
    bl_json_put(&st, t, "interventions", ivs, err);
    ivs = NULL;
    if (st != BL_OK)
        goto fail;
    *out = t;
    return BL_OK;

fail:
    bl_json_destroy(node);
    bl_json_destroy(task);
    bl_json_destroy(t);
    bl_json_destroy(c);
    bl_json_destroy(ivs);
    return st;
}

static bl_status build_evaluation(const bl_json *e, bl_json **out, bl_error *err)
{
    static const char *const fields[] = {"blocks",     "trials_per_block",   "horizon",
                                         "warmup",     "construction_scope", "root_seed",
                                         "seed_partition"};
    static const char *const scopes[] = {"evaluation", "block", "trial"};
    const bl_json *blocks = NULL, *trials = NULL, *horizon = NULL, *warmup = NULL, *scope = NULL,
                  *root = NULL, *partition = NULL;
    bl_status st;
    if (e) {
        if ((st = need_table(e, "EvaluationSpec", err)) != BL_OK ||
            (st = check_args("EvaluationSpec", e, fields, COUNT(fields), NULL, 0, NULL, 0,
                             err)) != BL_OK)
            return st;
        blocks = bl_json_get(e, "blocks");
        trials = bl_json_get(e, "trials_per_block");
        horizon = bl_json_get(e, "horizon");
        warmup = bl_json_get(e, "warmup");
        scope = bl_json_get(e, "construction_scope");
        root = bl_json_get(e, "root_seed");
        partition = bl_json_get(e, "seed_partition");
    }
    if (horizon && bl_json_kindof(horizon) == BL_JSON_NULL)
        horizon = NULL; /* None: each task's default */
    if ((blocks && (st = need_int(blocks, "blocks", 1, err)) != BL_OK) ||
        (trials && (st = need_int(trials, "trials_per_block", 1, err)) != BL_OK) ||
        (warmup && (st = need_int(warmup, "warmup", 0, err)) != BL_OK) ||
        (root && (st = need_int(root, "root_seed", 0, err)) != BL_OK) ||
        (horizon && (st = need_int(horizon, "horizon", 1, err)) != BL_OK))
        return st;
    if (horizon) {
        if (bl_json_get_int(horizon) <= (warmup ? bl_json_get_int(warmup) : 0))
            return bl_fail(err, BL_EVALUE, "horizon must exceed warmup");
    }
    if (scope && !one_of(scope, scopes, COUNT(scopes)))
        return fail_found(err, "invalid construction_scope", "construction_scope", scope,
                          "evaluation, block or trial");
    if (partition) {
        if (!truthy(partition))
            return bl_fail(err, BL_EVALUE,
                           "seed_partition must name a disjoint scientific seed bank");
        if ((st = need_string(partition, "EvaluationSpec", "seed_partition", err)) != BL_OK)
            return st;
    }
    bl_json *o = bl_json_object();
    st = o ? BL_OK : nomem(err);
    put_copy(&st, o, "blocks", blocks, bl_json_int(1), err);
    put_copy(&st, o, "trials_per_block", trials, bl_json_int(1), err);
    put_copy(&st, o, "horizon", horizon, bl_json_null(), err);
    put_copy(&st, o, "warmup", warmup, bl_json_int(0), err);
    put_copy(&st, o, "construction_scope", scope, bl_json_string("block"), err);
    put_copy(&st, o, "root_seed", root, bl_json_int(0), err);
    put_copy(&st, o, "seed_partition", partition, bl_json_string("development"), err);
    return bl_json_hand_over(st, o, out);
}

static bl_status build_numerics(const bl_json *n, bl_json **out, bl_error *err)
{
    static const char *const fields[] = {"dtype", "fast_math", "reduction", "rng"};
    static const char *const dtypes[] = {"float64", "float32"};
    const bl_json *dtype = NULL, *fast = NULL, *reduction = NULL, *rng = NULL;
    bl_status st;
    if (n) {
        if ((st = need_table(n, "NumericalPolicy", err)) != BL_OK ||
            (st = check_args("NumericalPolicy", n, fields, COUNT(fields), NULL, 0, NULL, 0,
                             err)) != BL_OK)
            return st;
        dtype = bl_json_get(n, "dtype");
        fast = bl_json_get(n, "fast_math");
        reduction = bl_json_get(n, "reduction");
        rng = bl_json_get(n, "rng");
    }
    if (dtype && !one_of(dtype, dtypes, COUNT(dtypes)))
        return bl_fail(err, BL_EVALUE, "dtype must be float64 or float32");
    if ((fast && truthy(fast)) || (reduction && !is_string(reduction, "ordered")) ||
        (rng && !is_string(rng, "philox-host-v1")))
        return bl_fail(err, BL_EVALUE,
                       "this release supports strict ordered arithmetic and philox-host-v1");
    bl_json *o = bl_json_object();
    st = o ? BL_OK : nomem(err);
    put_copy(&st, o, "dtype", dtype, bl_json_string("float64"), err);
    put_copy(&st, o, "fast_math", fast, bl_json_bool(false), err);
    put_copy(&st, o, "reduction", reduction, bl_json_string("ordered"), err);
    put_copy(&st, o, "rng", rng, bl_json_string("philox-host-v1"), err);
    return bl_json_hand_over(st, o, out);
}

/* The first control character (C0, DEL or C1) of UTF-8 text as a code
 * point, or -1. A record directory is named after the plan id, and such a
 * character would put a line break or an invisible mark into a file name. */
static long control_char(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return c;
        /* U+0080..U+009F are 0xC2 0x80..0xC2 0x9F; 0xC2 only ever leads. */
        if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] <= 0x9f &&
            (unsigned char)s[i + 1] >= 0x80)
            return (unsigned char)s[i + 1];
    }
    return -1;
}

static bl_status check_plan(const bl_json *doc, const bl_json *targets, bl_error *err)
{
    static const char *const fields[] = {"id",       "targets",  "evaluation",
                                         "numerics", "operation", "question",
                                         "version",  "evidence", "diagnostic"};
    static const char *const required[] = {"id"};
    static const char *const skip[] = {"format", "format_version"};
    static const char *const operations[] = {"profile", "sweep", "ablate", "benchmark",
                                             "calibrate"};
    static const char *const evidence[] = {"planned",   "exploratory", "tuned",  "frozen",
                                           "confirmed", "promoted",    "retired"};
    bl_status st = check_args("Plan", doc, fields, COUNT(fields), required, 1, skip, 2, err);
    if (st != BL_OK)
        return st;
    const bl_json *id = bl_json_get(doc, "id");
    if (!truthy(id) || bl_json_size(targets) == 0)
        return bl_fail(err, BL_EVALUE, "a plan needs an id and at least one target (%s)",
                       truthy(id) ? "found no targets" : "the plan id is empty");
    if ((st = need_string(id, "Plan", "id", err)) != BL_OK)
        return st;
    size_t len;
    const char *text = bl_json_get_string(id, &len);
    long control = control_char(text, len);
    if (control >= 0)
        return bl_fail(err, BL_EVALUE,
                       "plan id must be a portable record-name component (the id holds the "
                       "control character U+%04lX)",
                       control);
    for (size_t i = 0; i < bl_json_size(targets); i++)
        for (size_t j = 0; j < i; j++) {
            const bl_json *tid = bl_json_get(bl_json_at(targets, i), "id");
            if (!bl_json_equal(tid, bl_json_get(bl_json_at(targets, j), "id")))
                continue;
            char storage[BL_ERROR_MAX];
            bl_buf b;
            bl_buf_init_fixed(&b, storage, sizeof storage);
            bl_buf_printf(&b,
                          "condition IDs must be unique (targets[%zu] and targets[%zu] both "
                          "have id = ",
                          j, i);
            put_value(&b, tid);
            bl_buf_putc(&b, ')');
            return fail_buf(err, &b);
        }
    const bl_json *op = bl_json_get(doc, "operation");
    if (op && !one_of(op, operations, COUNT(operations)))
        return fail_found(err, "unsupported operation", "operation", op,
                          "profile, sweep, ablate, benchmark or calibrate");
    const bl_json *ev = bl_json_get(doc, "evidence");
    if (ev && !one_of(ev, evidence, COUNT(evidence)))
        return fail_found(err, "unknown evidence state", "evidence", ev,
                          "planned, exploratory, tuned, frozen or retired");
    if (ev && (is_string(ev, "confirmed") || is_string(ev, "promoted")))
        return bl_fail(err, BL_EVALUE,
                       "the development runner cannot confer confirmed or promoted evidence");
    static const char *const texts[] = {"question", "version"};
    for (size_t i = 0; i < COUNT(texts); i++) {
        const bl_json *v = bl_json_get(doc, texts[i]);
        if (v && (st = need_string(v, "Plan", texts[i], err)) != BL_OK)
            return st;
    }
    const bl_json *diag = bl_json_get(doc, "diagnostic");
    if (diag && bl_json_kindof(diag) != BL_JSON_BOOL)
        return bl_fail(err, BL_EVALUE,
                       "invalid Plan fields: diagnostic must be a boolean, found %s",
                       toml_kind(diag));
    return BL_OK;
}

/* ---- public ----------------------------------------------------------- */

/* §2.1 step 2, with what was found instead, so that an empty file, a
 * record manifest or a newer plan each say what they are. */
static bl_status check_format(const bl_json *doc, bl_error *err)
{
    const char *spec =
        "requires fresh Python plan v4; historical plans require archived Julia";
    if (!doc || bl_json_kindof(doc) != BL_JSON_OBJECT)
        return bl_fail(err, BL_EVALUE, "%s (the document is not a table)", spec);
    if (bl_json_size(doc) == 0)
        return bl_fail(err, BL_EVALUE, "%s (the file is empty)", spec);
    const bl_json *format = bl_json_get(doc, "format");
    const bl_json *version = bl_json_get(doc, "format_version");
    if (!format)
        return bl_fail(err, BL_EVALUE,
                       "%s (found no format key, expected format = \"brainlesslab-plan\")",
                       spec);
    if (is_string(format, "brainlesslab-record"))
        return bl_fail(err, BL_EVALUE,
                       "%s (found format = \"brainlesslab-record\": this is a record "
                       "manifest, not a plan; run plans, inspect records)",
                       spec);
    if (!is_string(format, "brainlesslab-plan"))
        return fail_found(err, spec, "format", format, "format = \"brainlesslab-plan\"");
    if (!version)
        return bl_fail(err, BL_EVALUE,
                       "%s (found no format_version key, expected format_version = 4)", spec);
    /* Python compares numerically: 4 and 4.0 pass (a bool never equals 4). */
    if ((bl_json_kindof(version) == BL_JSON_INT && bl_json_get_int(version) == 4) ||
        (bl_json_kindof(version) == BL_JSON_REAL && bl_json_get_real(version) == 4.0))
        return BL_OK;
    return fail_found(err, spec, "format_version", version, "format_version = 4");
}

bl_status bl_plan_from_document(const bl_json *doc, bl_plan **out, bl_error *err)
{
    *out = NULL;
    bl_status st = check_format(doc, err);
    if (st != BL_OK)
        return st;
    const bl_json *given_targets = bl_json_get(doc, "targets");
    if (given_targets && bl_json_kindof(given_targets) != BL_JSON_ARRAY)
        return bl_fail(err, BL_EVALUE,
                       "invalid Plan fields: targets must be an array of tables ([[targets]]), "
                       "found %s",
                       toml_kind(given_targets));

    bl_json *plain = bl_json_object(), *targets = bl_json_array(), *eval = NULL, *num = NULL;
    if (!plain || !targets) {
        st = nomem(err);
        goto fail;
    }
    for (size_t i = 0; given_targets && i < bl_json_size(given_targets); i++) {
        bl_json *t = NULL;
        if ((st = build_target(bl_json_at(given_targets, i), i, &t, err)) != BL_OK)
            goto fail;
        if ((st = bl_json_array_append(targets, t, err)) != BL_OK)
            goto fail;
    }
    if ((st = bl_plan_at(build_evaluation(bl_json_get(doc, "evaluation"), &eval, err), err,
                         "evaluation")) != BL_OK)
        goto fail;
    if ((st = bl_plan_at(build_numerics(bl_json_get(doc, "numerics"), &num, err), err,
                         "numerics")) != BL_OK)
        goto fail;
    if ((st = check_plan(doc, targets, err)) != BL_OK)
        goto fail;

    /* plain(Plan) in field order (the writer keeps it, §2.2). */
    bl_json_put(&st, plain, "id", bl_json_copy(bl_json_get(doc, "id")), err);
    bl_json_put(&st, plain, "targets", targets, err);
    bl_json_put(&st, plain, "evaluation", eval, err);
    bl_json_put(&st, plain, "numerics", num, err);
    targets = eval = num = NULL; /* taken by the puts */
    put_copy(&st, plain, "operation", bl_json_get(doc, "operation"), bl_json_string("profile"),
             err);
    put_copy(&st, plain, "question", bl_json_get(doc, "question"), bl_json_string(""), err);
    put_copy(&st, plain, "version", bl_json_get(doc, "version"), bl_json_string("1"), err);
    put_copy(&st, plain, "evidence", bl_json_get(doc, "evidence"), bl_json_string("exploratory"),
             err);
    put_copy(&st, plain, "diagnostic", bl_json_get(doc, "diagnostic"), bl_json_bool(false), err);
    if (st != BL_OK)
        goto fail;

    bl_plan *p = bl_malloc(sizeof *p);
    if (!p) {
        st = nomem(err);
        goto fail;
    }
    p->plain = plain;
    p->source = NULL;
    *out = p;
    return BL_OK;

fail:
    bl_json_destroy(plain);
    bl_json_destroy(targets);
    bl_json_destroy(eval);
    bl_json_destroy(num);
    return st;
}

bl_status bl_plan_read(const char *path, bl_plan **out, bl_error *err)
{
    *out = NULL;
    bl_json *doc = NULL;
    bl_status st = bl_toml_read_file(path, &doc, err);
    if (st != BL_OK)
        return st;
    st = bl_plan_from_document(doc, out, err);
    bl_json_destroy(doc);
    if (st != BL_OK)
        return bl_plan_at(st, err, "%s", path);
    /* Kept so that resolution names the file too. */
    size_t len = strlen(path);
    (*out)->source = bl_malloc(len + 1);
    if (!(*out)->source) {
        bl_plan_destroy(*out);
        *out = NULL;
        return nomem(err);
    }
    memcpy((*out)->source, path, len + 1);
    return BL_OK;
}

/* A copy without null-valued keys (recursively), for the TOML writer. */
static bl_json *without_nulls(const bl_json *v)
{
    if (bl_json_kindof(v) == BL_JSON_OBJECT) {
        bl_json *o = bl_json_object();
        if (!o)
            return NULL;
        for (size_t i = 0; i < bl_json_size(v); i++) {
            const bl_json *item = bl_json_value_at(v, i);
            if (bl_json_kindof(item) == BL_JSON_NULL)
                continue;
            size_t len;
            const char *key = bl_json_key_at(v, i, &len);
            bl_json *c = without_nulls(item);
            if (!c || bl_json_object_setn(o, key, len, c, NULL) != BL_OK) {
                bl_json_destroy(o);
                return NULL;
            }
        }
        return o;
    }
    if (bl_json_kindof(v) == BL_JSON_ARRAY) {
        bl_json *a = bl_json_array();
        if (!a)
            return NULL;
        for (size_t i = 0; i < bl_json_size(v); i++) {
            bl_json *c = without_nulls(bl_json_at(v, i));
            if (!c || bl_json_array_append(a, c, NULL) != BL_OK) {
                bl_json_destroy(a);
                return NULL;
            }
        }
        return a;
    }
    return bl_json_copy(v);
}

bl_status bl_plan_write(const bl_plan *plan, bl_buf *out, bl_error *err)
{
    bl_json *payload = bl_json_object();
    if (!payload)
        return nomem(err);
    bl_status st = BL_OK;
    bl_json_put(&st, payload, "format", bl_json_string("brainlesslab-plan"), err);
    bl_json_put(&st, payload, "format_version", bl_json_int(4), err);
    for (size_t i = 0; st == BL_OK && i < bl_json_size(plan->plain); i++) {
        const bl_json *v = bl_json_value_at(plan->plain, i);
        if (bl_json_kindof(v) == BL_JSON_NULL)
            continue;
        size_t len;
        const char *key = bl_json_key_at(plan->plain, i, &len);
        bl_json *c = without_nulls(v);
        st = c ? bl_json_object_setn(payload, key, len, c, err) : nomem(err);
    }
    if (st == BL_OK)
        st = bl_toml_write(payload, out, err);
    bl_json_destroy(payload);
    return st;
}

void bl_plan_destroy(bl_plan *plan)
{
    if (!plan)
        return;
    bl_json_destroy(plan->plain);
    bl_free(plan->source);
    bl_free(plan);
}

const bl_json *bl_plan_plain(const bl_plan *plan)
{
    return plan->plain;
}

const char *bl_plan_id(const bl_plan *plan)
{
    return bl_plan_string(plan->plain, "id");
}

/* ---- Python repr of configuration values ----------------------------- */

bool bl_plan_repr(bl_buf *b, const bl_json *v)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_NULL:
        bl_buf_puts(b, "None");
        break;
    case BL_JSON_BOOL:
        bl_buf_puts(b, bl_json_get_bool(v) ? "True" : "False");
        break;
    case BL_JSON_INT:
    case BL_JSON_BIGINT:
        bl_json_write(v, 0, b, NULL); /* plain decimal, as Python prints ints */
        break;
    case BL_JSON_REAL:
        if (!bl_json_write_double(b, bl_json_get_real(v)))
            bl_buf_puts(b, "nan"); /* unreachable for a validated plan */
        break;
    case BL_JSON_STRING: {
        size_t n;
        const char *s = bl_json_get_string(v, &n);
        bl_repr_string(b, s, n);
        break;
    }
    case BL_JSON_ARRAY: {
        /* Frozen configuration sequences are tuples. */
        size_t n = bl_json_size(v);
        bl_buf_putc(b, '(');
        for (size_t i = 0; i < n; i++) {
            if (i)
                bl_buf_puts(b, ", ");
            bl_plan_repr(b, bl_json_at(v, i));
        }
        bl_buf_puts(b, n == 1 ? ",)" : ")");
        break;
    }
    case BL_JSON_OBJECT: {
        size_t n = bl_json_size(v);
        bl_buf_putc(b, '{');
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const char *key = bl_json_key_at(v, i, &len);
            if (i)
                bl_buf_puts(b, ", ");
            bl_repr_string(b, key, len);
            bl_buf_puts(b, ": ");
            bl_plan_repr(b, bl_json_value_at(v, i));
        }
        bl_buf_putc(b, '}');
        break;
    }
    }
    return !b->failed;
}

/* ---- internal accessors ----------------------------------------------- */

const bl_json *bl_plan_member(const bl_json *obj, const char *key)
{
    const bl_json *v = bl_json_get(obj, key);
    BL_ASSERT(v != NULL);
    return v;
}

const char *bl_plan_string(const bl_json *obj, const char *key)
{
    return bl_json_get_string(bl_plan_member(obj, key), NULL);
}

int64_t bl_plan_int(const bl_json *obj, const char *key)
{
    return bl_json_get_int(bl_plan_member(obj, key));
}
