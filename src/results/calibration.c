/* Calibration records (spec/platform.md §5.5, §7.7; spec/tasks.md §9.3–9.5):
 * signatures, analytic and empirical records, their JSON form, documents
 * and files, and the null adjustment of one outcome.
 *
 * A record is content-addressed: its id is the digest of every other field
 * as the reference serialises them (reals stay reals, ids stay strings or
 * ints), so a record is only ever rebuilt from validated fields and hashed
 * again; any edit on disk shows up as a hash mismatch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/results.h"
#include "results/results_internal.h"

static const char calibration_format[] = "brainlesslab-calibrations";

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a calibration record");
}

/* ---- small readers ------------------------------------------------------ */

static const char *string_of(const bl_json *v)
{
    return v && bl_json_kindof(v) == BL_JSON_STRING ? bl_json_get_string(v, NULL) : NULL;
}

static bool nonempty_string(const bl_json *v)
{
    const char *s = string_of(v);
    return s && s[0];
}

static bool int_of(const bl_json *v, int64_t *out)
{
    if (!v || bl_json_kindof(v) != BL_JSON_INT)
        return false;
    *out = bl_json_get_int(v);
    return true;
}

/* A JSON number (never a bool) as a double, as Python's float() rebuilds
 * it; the record is then hashed with the real. */
static bool number_of(const bl_json *v, double *out)
{
    if (v && bl_json_kindof(v) == BL_JSON_REAL)
        *out = bl_json_get_real(v);
    else if (v && bl_json_kindof(v) == BL_JSON_INT)
        *out = (double)bl_json_get_int(v);
    else
        return false;
    return true;
}

/* The reference rebuilds records and signatures with keyword arguments:
 * an unknown field or a missing one is an error, not ignored. */
static bl_status check_fields(const bl_json *obj, const char *what, const char *const *fields,
                              size_t n, bl_error *err)
{
    if (!obj || bl_json_kindof(obj) != BL_JSON_OBJECT)
        return bl_fail(err, BL_EVALUE, "%s must be a mapping", what);
    for (size_t i = 0; i < bl_json_size(obj); i++) {
        size_t len;
        const char *key = bl_json_key_at(obj, i, &len);
        size_t f = 0;
        while (f < n && !(strlen(fields[f]) == len && memcmp(fields[f], key, len) == 0))
            f++;
        if (f == n)
            return bl_fail(err, BL_EVALUE, "%s has an unknown field '%.*s'", what, (int)len, key);
    }
    for (size_t f = 0; f < n; f++)
        if (!bl_json_get(obj, fields[f]))
            return bl_fail(err, BL_EVALUE, "%s is missing '%s'", what, fields[f]);
    return BL_OK;
}

/* ---- signatures (§5.5 "Validation") -------------------------------------- */

static bl_status check_numerics(const bl_json *n, bl_error *err)
{
    static const char *const fields[] = {"dtype", "fast_math", "reduction", "rng"};
    bl_status st = check_fields(n, "calibration numerics", fields, 4, err);
    if (st != BL_OK)
        return st;
    const char *dtype = string_of(bl_json_get(n, "dtype"));
    const char *reduction = string_of(bl_json_get(n, "reduction"));
    const char *rng = string_of(bl_json_get(n, "rng"));
    const bl_json *fast = bl_json_get(n, "fast_math");
    /* NumericalPolicy's own rules and messages (platform.md §1.2). */
    if (!dtype || (strcmp(dtype, "float64") != 0 && strcmp(dtype, "float32") != 0))
        return bl_fail(err, BL_EVALUE, "dtype must be float64 or float32");
    if (bl_json_kindof(fast) != BL_JSON_BOOL || bl_json_get_bool(fast) || !reduction ||
        strcmp(reduction, "ordered") != 0 || !rng || strcmp(rng, "philox-host-v1") != 0)
        return bl_fail(err, BL_EVALUE,
                       "this release supports strict ordered arithmetic and philox-host-v1");
    return BL_OK;
}

static bl_status check_source_hashes(const bl_json *h, bl_error *err)
{
    bool ok = h && bl_json_kindof(h) == BL_JSON_OBJECT && bl_json_size(h) > 0;
    for (size_t i = 0; ok && i < bl_json_size(h); i++)
        ok = nonempty_string(bl_json_value_at(h, i));
    if (!ok)
        return bl_fail(err, BL_EVALUE,
                       "calibration world_source_hashes must map source files to hashes");
    return BL_OK;
}

bl_status bl_calibration_signature_id(const bl_json *signature, char id[65], bl_error *err)
{
    static const char *const fields[] = {
        "action_cadence", "architecture",    "backend",          "initialisation_policy",
        "null_policy",    "numerics",        "rng_scheme",       "runtime_fingerprint",
        "scoring_horizon", "task",           "task_options",     "warmup",
        "world_source_hashes",
    };
    /* Fields the spec wants non-empty; the fingerprint too, since the
     * reference's default for it is "unspecified", never "". */
    static const char *const texts[] = {"architecture", "initialisation_policy", "null_policy",
                                        "rng_scheme", "runtime_fingerprint"};
    bl_status st = check_fields(signature, "calibration signature", fields,
                                sizeof fields / sizeof *fields, err);
    if (st != BL_OK)
        return st;
    const char *task = string_of(bl_json_get(signature, "task"));
    bl_task_kind kind;
    if (!task)
        return bl_fail(err, BL_EVALUE, "calibration signature task must be a string");
    if ((st = bl_task_from_name(task, &kind, err)) != BL_OK)
        return st;
    /* Backends: the reference's (cpu, metal) so its records can be read,
     * and this program's (cpu, cuda). */
    const char *backend = string_of(bl_json_get(signature, "backend"));
    if (!backend || (strcmp(backend, "cpu") != 0 && strcmp(backend, "metal") != 0 &&
                     strcmp(backend, "cuda") != 0))
        return bl_fail(err, BL_EVALUE, "unsupported calibration backend (cpu, metal or cuda)");
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (!nonempty_string(bl_json_get(signature, texts[i])))
            return bl_fail(err, BL_EVALUE, "calibration %s must be a non-empty string",
                           texts[i]);
    const bl_json *numerics = bl_json_get(signature, "numerics");
    if ((st = check_numerics(numerics, err)) != BL_OK)
        return st;
    if (strcmp(backend, "metal") == 0 &&
        strcmp(string_of(bl_json_get(numerics, "dtype")), "float32") != 0)
        return bl_fail(err, BL_EVALUE, "Metal requires Float32; select an explicit NumericalPolicy");
    int64_t horizon, warmup, cadence;
    if (!int_of(bl_json_get(signature, "scoring_horizon"), &horizon) || horizon < 1)
        return bl_fail(err, BL_EVALUE, "calibration scoring_horizon must be >= 1");
    if (!int_of(bl_json_get(signature, "warmup"), &warmup) || warmup < 0)
        return bl_fail(err, BL_EVALUE, "calibration warmup must be >= 0");
    if (!int_of(bl_json_get(signature, "action_cadence"), &cadence) || cadence < 1)
        return bl_fail(err, BL_EVALUE, "calibration action_cadence must be >= 1");
    if (strcmp(string_of(bl_json_get(signature, "rng_scheme")),
               string_of(bl_json_get(numerics, "rng"))) != 0)
        return bl_fail(err, BL_EVALUE, "calibration rng_scheme must equal numerics.rng");
    if ((st = check_source_hashes(bl_json_get(signature, "world_source_hashes"), err)) != BL_OK)
        return st;
    if ((st = bl_calibration_check_task_options(bl_json_get(signature, "task_options"), err)) !=
        BL_OK)
        return st;
    return bl_json_digest(signature, id, err);
}

/* ---- records ------------------------------------------------------------ */

void bl_calibration_destroy(bl_calibration *c)
{
    if (!c)
        return;
    bl_json_destroy(c->signature);
    bl_json_destroy(c->trajectory_ids);
    bl_free(c->trial_scores);
    bl_free(c);
}

/* A record holding a validated copy of `signature` and nothing else yet. */
static bl_status record_new(const bl_json *signature, bl_calibration **out, bl_error *err)
{
    *out = NULL;
    char sid[65];
    bl_status st = bl_calibration_signature_id(signature, sid, err);
    if (st != BL_OK)
        return st;
    bl_calibration *c = bl_calloc(1, sizeof *c);
    if (!c)
        return nomem(err);
    c->signature = bl_json_copy(signature);
    if (!c->signature) {
        bl_calibration_destroy(c);
        return nomem(err);
    }
    memcpy(c->signature_id, sid, sizeof sid);
    c->task = string_of(bl_json_get(c->signature, "task"));
    *out = c;
    return BL_OK;
}

static bl_task_kind record_kind(const bl_calibration *c)
{
    bl_task_kind kind;
    bl_status st = bl_task_from_name(c->task, &kind, NULL);
    BL_ASSERT(st == BL_OK); /* the signature was validated */
    return kind;
}

/* UPPER_BOUNDS: the bound the task declares; it depends on the kind only. */
static double declared_bound(bl_task_kind kind)
{
    bl_task_options o = {.kind = kind};
    bl_task_definition d;
    bl_task_define(&o, &d);
    return d.upper_bound;
}

/* Orders trajectory ids for the duplicate check: ints before strings, then
 * by value. Python's 1 and "1" are distinct ids, and so they are here. */
static int cmp_ids(const void *pa, const void *pb)
{
    const bl_json *a = *(const bl_json *const *)pa, *b = *(const bl_json *const *)pb;
    const bool sa = bl_json_kindof(a) == BL_JSON_STRING, sb = bl_json_kindof(b) == BL_JSON_STRING;
    if (sa != sb)
        return sa ? 1 : -1;
    if (!sa) {
        const int64_t x = bl_json_get_int(a), y = bl_json_get_int(b);
        return (x > y) - (x < y);
    }
    size_t la, lb;
    const char *x = bl_json_get_string(a, &la), *y = bl_json_get_string(b, &lb);
    int c = memcmp(x, y, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static bl_status check_ids(const bl_json *ids, bl_error *err)
{
    const size_t n = bl_json_size(ids);
    if (n != BL_NULL_TRAJECTORIES)
        return bl_fail(err, BL_EVALUE, "an empirical calibration needs exactly %d trajectory ids, "
                                       "got %zu", BL_NULL_TRAJECTORIES, n);
    const bl_json **sorted = bl_mallocarray(n, sizeof *sorted);
    if (!sorted)
        return nomem(err);
    bl_status st = BL_OK;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        sorted[i] = bl_json_at(ids, i);
        const bl_json_kind k = bl_json_kindof(sorted[i]);
        if (k != BL_JSON_STRING && k != BL_JSON_INT)
            st = bl_fail(err, BL_EVALUE,
                         "calibration trajectory ids must be strings or 64-bit integers");
    }
    if (st == BL_OK) {
        qsort(sorted, n, sizeof *sorted, cmp_ids);
        for (size_t i = 1; i < n && st == BL_OK; i++)
            if (cmp_ids(&sorted[i - 1], &sorted[i]) == 0)
                st = bl_fail(err, BL_EVALUE, "calibration trajectory ids must be distinct");
    }
    bl_free(sorted);
    return st;
}

/* The record rules of §5.5 and §9.4 on a filled record. Creation and
 * reading share them, so a file can hold nothing creation would refuse. */
static bl_status check_record(const bl_calibration *c, bl_error *err)
{
    const bl_task_kind kind = record_kind(c);
    if (c->analytic) {
        if (!bl_task_is_probe(kind))
            return bl_fail(err, BL_EVALUE,
                           "analytic calibration is defined only for binary tasks, not %s",
                           c->task);
        if (c->upper_bound != 1.0 || c->null_mean != 0.5 || c->null_standard_error != 0.0 ||
            c->null_interval[0] != 0.5 || c->null_interval[1] != 0.5 || c->nscores ||
            bl_json_size(c->trajectory_ids) || c->root_seed || c->bootstrap_repetitions)
            return bl_fail(err, BL_EVALUE,
                           "an analytic calibration declares chance 0.5, upper bound 1 and no "
                           "trajectories");
        return BL_OK;
    }
    if (c->nscores != BL_NULL_TRAJECTORIES)
        return bl_fail(err, BL_EVALUE,
                       "an empirical calibration needs exactly %d trial scores, got %zu",
                       BL_NULL_TRAJECTORIES, c->nscores);
    for (size_t i = 0; i < c->nscores; i++)
        if (!isfinite(c->trial_scores[i]))
            return bl_fail(err, BL_EVALUE, "calibration trial scores must be finite");
    const double upper = declared_bound(kind);
    if (c->upper_bound != upper)
        return bl_fail(err, BL_EVALUE, "calibration upper_bound must equal the declared bound "
                                       "of %s (%.17g)", c->task, upper);
    /* Tracking scores are mean cosines, so its null may sit below zero. */
    const double lower = kind == BL_TASK_TRACKING ? -1.0 : 0.0;
    for (size_t i = 0; i < c->nscores; i++)
        if (!(c->trial_scores[i] >= lower && c->trial_scores[i] <= upper))
            return bl_fail(err, BL_EVALUE, "calibration trial scores must lie within [%.17g, "
                                           "%.17g]", lower, upper);
    if (c->bootstrap_repetitions < 2)
        return bl_fail(err, BL_EVALUE, "calibration bootstrap_repetitions must be >= 2");
    return check_ids(c->trajectory_ids, err);
}

/* The record as the reference serialises it; with_id false gives the
 * content the id is the digest of. */
static bl_status record_build(const bl_calibration *c, bool with_id, bl_json **out,
                              bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object();
    if (!o)
        return nomem(err);
    bl_status st;
    if ((st = bl_json_object_set(o, "bootstrap_repetitions", bl_json_int(c->bootstrap_repetitions),
                                 err)) != BL_OK ||
        (st = bl_json_object_set(o, "frozen", bl_json_bool(true), err)) != BL_OK ||
        (with_id && (st = bl_json_object_set(o, "id", bl_json_string(c->id), err)) != BL_OK) ||
        (st = bl_json_object_set(o, "method",
                                 bl_json_string(c->analytic ? "analytic" : "empirical"), err)) !=
            BL_OK ||
        (st = bl_json_object_set(o, "null_interval", bl_json_reals(c->null_interval, 2), err)) !=
            BL_OK ||
        (st = bl_json_object_set(o, "null_mean", bl_json_real(c->null_mean), err)) != BL_OK ||
        (st = bl_json_object_set(o, "null_standard_error", bl_json_real(c->null_standard_error),
                                 err)) != BL_OK ||
        (st = bl_json_object_set(o, "root_seed", bl_json_int(c->root_seed), err)) != BL_OK ||
        (st = bl_json_object_set(o, "signature", bl_json_copy(c->signature), err)) != BL_OK ||
        (st = bl_json_object_set(o, "trajectory_ids", bl_json_copy(c->trajectory_ids), err)) !=
            BL_OK ||
        (st = bl_json_object_set(o, "trial_scores", bl_json_reals(c->trial_scores, c->nscores),
                                 err)) != BL_OK ||
        (st = bl_json_object_set(o, "upper_bound", bl_json_real(c->upper_bound), err)) != BL_OK) {
        bl_json_destroy(o);
        return st;
    }
    *out = o;
    return BL_OK;
}

static bl_status record_digest(const bl_calibration *c, char id[65], bl_error *err)
{
    bl_json *o;
    bl_status st = record_build(c, false, &o, err);
    if (st == BL_OK)
        st = bl_json_digest(o, id, err);
    bl_json_destroy(o);
    return st;
}

bl_status bl_calibration_json(const bl_calibration *c, bl_json **out, bl_error *err)
{
    return record_build(c, true, out, err);
}

/* §9.4: mean, standard error and the null-mean bootstrap interval. */
static bl_status summarise_null(bl_calibration *c, bl_error *err)
{
    const size_t n = c->nscores, reps = (size_t)c->bootstrap_repetitions;
    if ((uint64_t)c->bootstrap_repetitions > SIZE_MAX / 16 - n)
        return nomem(err);
    double *buf = bl_mallocarray(reps + n, sizeof *buf);
    if (!buf)
        return nomem(err);
    double sd;
    const bl_key key = BL_KEY_S(c->signature_id);
    bl_seed seed;
    bl_gen g;
    c->null_mean = bl_np_mean(c->trial_scores, n);
    bl_status st = bl_np_std(c->trial_scores, n, 1, buf, &sd, err);
    if (st == BL_OK)
        st = bl_seed_for(c->root_seed, "calibration", "null-mean-bootstrap", &key, 1, &seed, err);
    if (st == BL_OK) {
        c->null_standard_error = sd / sqrt((double)n);
        bl_gen_init(&g, &seed);
        bl_bootstrap_means(&g, c->trial_scores, n, reps, buf + reps, buf);
        st = bl_bootstrap_quantiles(buf, reps, c->null_interval, err);
    }
    bl_free(buf);
    return st;
}

static bl_json *default_ids(void)
{
    bl_json *a = bl_json_array();
    for (int i = 0; a && i < BL_NULL_TRAJECTORIES; i++) {
        if (bl_json_array_append(a, bl_json_int(i), NULL) != BL_OK) {
            bl_json_destroy(a);
            a = NULL;
        }
    }
    return a;
}

/* The end of every constructor, st being how its filling went: a record
 * that passes check_record gets its null summary (when `summarise`) and its
 * id, which must be `expected_id` when that is given, and is handed out;
 * otherwise it is destroyed. */
static bl_status record_seal(bl_status st, bl_calibration *c, bool summarise,
                             const char *expected_id, bl_calibration **out, bl_error *err)
{
    if (st == BL_OK)
        st = check_record(c, err);
    if (st == BL_OK && summarise)
        st = summarise_null(c, err);
    if (st == BL_OK)
        st = record_digest(c, c->id, err);
    if (st == BL_OK && expected_id && strcmp(c->id, expected_id) != 0)
        st = bl_fail(err, BL_EVALUE, "calibration content hash does not match the record");
    if (st != BL_OK) {
        bl_calibration_destroy(c);
        return st;
    }
    *out = c;
    return BL_OK;
}

bl_status bl_calibration_analytic(const bl_json *signature, bl_calibration **out, bl_error *err)
{
    bl_calibration *c;
    bl_status st = record_new(signature, &c, err);
    if (st != BL_OK)
        return st;
    c->analytic = true;
    c->upper_bound = 1.0;
    c->null_mean = c->null_interval[0] = c->null_interval[1] = 0.5;
    if (!(c->trajectory_ids = bl_json_array()))
        st = nomem(err);
    return record_seal(st, c, false, NULL, out, err);
}

bl_status bl_calibration_empirical(const bl_json *signature, const double *scores, size_t n,
                                   double upper_bound, const bl_json *trajectory_ids,
                                   int64_t root_seed, int64_t repetitions, bl_calibration **out,
                                   bl_error *err)
{
    *out = NULL;
    if (n && !scores)
        return bl_fail(err, BL_EVALUE, "calibration trial scores missing");
    if (trajectory_ids && bl_json_kindof(trajectory_ids) != BL_JSON_ARRAY)
        return bl_fail(err, BL_EVALUE, "calibration trajectory ids must be a list");
    bl_calibration *c;
    bl_status st = record_new(signature, &c, err);
    if (st != BL_OK)
        return st;
    c->upper_bound = isnan(upper_bound) ? declared_bound(record_kind(c)) : upper_bound;
    c->root_seed = root_seed;
    c->bootstrap_repetitions = repetitions;
    /* Copies: the record is frozen, later edits of the caller's arrays
     * cannot reach it. */
    c->trajectory_ids = trajectory_ids ? bl_json_copy(trajectory_ids) : default_ids();
    c->nscores = n;
    if (n && !(c->trial_scores = bl_mallocarray(n, sizeof *c->trial_scores)))
        st = nomem(err);
    if (st == BL_OK && !c->trajectory_ids)
        st = nomem(err);
    if (st == BL_OK && n)
        memcpy(c->trial_scores, scores, n * sizeof *scores);
    return record_seal(st, c, true, NULL, out, err);
}

/* ---- reading ------------------------------------------------------------ */

static bl_status read_number(const bl_json *record, const char *key, double *out, bl_error *err)
{
    if (!number_of(bl_json_get(record, key), out) || !isfinite(*out))
        return bl_fail(err, BL_EVALUE, "calibration %s must be a finite number", key);
    return BL_OK;
}

static bl_status read_numbers(const bl_json *record, bl_calibration *to, bl_error *err)
{
    const bl_json *interval = bl_json_get(record, "null_interval");
    const bl_json *scores = bl_json_get(record, "trial_scores");
    bl_status st;
    if ((st = read_number(record, "upper_bound", &to->upper_bound, err)) != BL_OK ||
        (st = read_number(record, "null_mean", &to->null_mean, err)) != BL_OK ||
        (st = read_number(record, "null_standard_error", &to->null_standard_error, err)) != BL_OK)
        return st;
    if (bl_json_kindof(interval) != BL_JSON_ARRAY || bl_json_size(interval) != 2 ||
        !number_of(bl_json_at(interval, 0), &to->null_interval[0]) ||
        !number_of(bl_json_at(interval, 1), &to->null_interval[1]) ||
        !isfinite(to->null_interval[0]) || !isfinite(to->null_interval[1]))
        return bl_fail(err, BL_EVALUE, "calibration null_interval must be a pair of numbers");
    if (!int_of(bl_json_get(record, "root_seed"), &to->root_seed) ||
        !int_of(bl_json_get(record, "bootstrap_repetitions"), &to->bootstrap_repetitions))
        return bl_fail(err, BL_EVALUE,
                       "calibration root_seed and bootstrap_repetitions must be integers");
    if (bl_json_kindof(scores) != BL_JSON_ARRAY ||
        bl_json_kindof(bl_json_get(record, "trajectory_ids")) != BL_JSON_ARRAY)
        return bl_fail(err, BL_EVALUE, "calibration trial_scores and trajectory_ids must be lists");
    to->nscores = bl_json_size(scores);
    if (to->nscores && !(to->trial_scores = bl_mallocarray(to->nscores, sizeof(double))))
        return nomem(err);
    /* Finiteness and bounds are check_record's. */
    for (size_t i = 0; i < to->nscores; i++)
        if (!number_of(bl_json_at(scores, i), &to->trial_scores[i]))
            return bl_fail(err, BL_EVALUE, "calibration trial scores must be numbers");
    return BL_OK;
}

bl_status bl_calibration_from_json(const bl_json *record, bl_calibration **out, bl_error *err)
{
    static const char *const fields[] = {
        "bootstrap_repetitions", "frozen",    "id",         "method",
        "null_interval",         "null_mean", "null_standard_error",
        "root_seed",             "signature", "trajectory_ids", "trial_scores", "upper_bound",
    };
    *out = NULL;
    bl_status st = check_fields(record, "calibration record", fields,
                                sizeof fields / sizeof *fields, err);
    if (st != BL_OK)
        return st;
    const bl_json *frozen = bl_json_get(record, "frozen");
    if (bl_json_kindof(frozen) != BL_JSON_BOOL || !bl_json_get_bool(frozen))
        return bl_fail(err, BL_EVALUE, "calibration records must be frozen");
    const char *method = string_of(bl_json_get(record, "method"));
    if (!method || (strcmp(method, "analytic") != 0 && strcmp(method, "empirical") != 0))
        return bl_fail(err, BL_EVALUE, "calibration method must be 'analytic' or 'empirical'");
    const char *id = string_of(bl_json_get(record, "id"));
    if (!id)
        return bl_fail(err, BL_EVALUE, "calibration id must be a string");
    bl_calibration *c;
    if ((st = record_new(bl_json_get(record, "signature"), &c, err)) != BL_OK)
        return st;
    c->analytic = strcmp(method, "analytic") == 0;
    st = read_numbers(record, c, err);
    if (st == BL_OK && !(c->trajectory_ids = bl_json_copy(bl_json_get(record, "trajectory_ids"))))
        st = nomem(err);
    return record_seal(st, c, false, id, out, err);
}

/* ---- documents and files ------------------------------------------------ */

bl_status bl_calibrations_document(const bl_calibration *const *cals, size_t n, bl_json **out,
                                   bl_error *err)
{
    *out = NULL;
    bl_json *doc = bl_json_object(), *list = bl_json_array();
    bl_status st = doc ? bl_json_object_set(doc, "calibrations", list, err) : nomem(err);
    if (!doc)
        bl_json_destroy(list);
    for (size_t i = 0; st == BL_OK && i < n; i++) {
        bl_json *rec;
        if ((st = bl_calibration_json(cals[i], &rec, err)) == BL_OK)
            st = bl_json_array_append(list, rec, err);
    }
    if (st == BL_OK &&
        (st = bl_json_object_set(doc, "format", bl_json_string(calibration_format), err)) ==
            BL_OK)
        st = bl_json_object_set(doc, "version", bl_json_int(1), err);
    return bl_json_hand_over(st, doc, out);
}

void bl_calibrations_destroy(bl_calibration **cals, size_t n)
{
    if (!cals)
        return;
    for (size_t i = 0; i < n; i++)
        bl_calibration_destroy(cals[i]);
    bl_free(cals);
}

static bl_status records_from_document(const bl_json *doc, bl_calibration ***out, size_t *n,
                                       bl_error *err)
{
    int64_t version;
    const char *format = doc && bl_json_kindof(doc) == BL_JSON_OBJECT
                             ? string_of(bl_json_get(doc, "format"))
                             : NULL;
    if (!format || strcmp(format, calibration_format) != 0 ||
        !int_of(bl_json_get(doc, "version"), &version) || version != 1)
        return bl_fail(err, BL_EVALUE, "unsupported calibration format");
    const bl_json *list = bl_json_get(doc, "calibrations");
    if (!list || bl_json_kindof(list) != BL_JSON_ARRAY)
        return bl_fail(err, BL_EVALUE, "a calibration document needs a 'calibrations' list");
    const size_t count = bl_json_size(list);
    bl_calibration **cals = count ? bl_calloc(count, sizeof *cals) : NULL;
    if (count && !cals)
        return nomem(err);
    for (size_t i = 0; i < count; i++) {
        bl_status st = bl_calibration_from_json(bl_json_at(list, i), &cals[i], err);
        if (st != BL_OK) {
            bl_error_prefix(err, "calibrations[%zu]", i);
            bl_calibrations_destroy(cals, count);
            return st;
        }
    }
    *out = cals;
    *n = count;
    return BL_OK;
}

bl_status bl_calibrations_read_file(const char *path, bl_calibration ***out, size_t *n,
                                    bl_error *err)
{
    *out = NULL;
    *n = 0;
    /* A link could swap the frozen numbers behind a path a record names. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
        return bl_fail(err, BL_EVALUE, "%s: calibration cannot be a symlink", path);
    /* Not waited on (a FIFO) nor read without end (/dev/zero): a regular
     * file of at most BL_FILE_JSON_MAX bytes, and no link in a race either. */
    bl_json *doc;
    bl_status st = bl_json_read_file_as(path, "calibration file", BL_FILE_NOFOLLOW, &doc, err);
    if (st != BL_OK)
        return st;
    st = records_from_document(doc, out, n, err);
    bl_json_destroy(doc);
    if (st != BL_OK)
        bl_error_prefix(err, "%s", path);
    return st;
}

/* ---- null adjustment of one outcome -------------------------------------- */

void bl_outcome_adjust(double raw, const bl_calibration *cal, double *normalised,
                       bl_adjust_status *status, char calibration_id[65])
{
    *status = bl_null_adjust(raw, cal != NULL, cal && cal->analytic, cal ? cal->null_mean : 0,
                             cal ? cal->upper_bound : 0, normalised);
    /* A missing outcome is decided before the calibration is looked at
     * (the reference's order), so it names no calibration. */
    if (cal && *status != BL_ADJUST_NO_OUTCOME)
        memcpy(calibration_id, cal->id, 65);
    else
        calibration_id[0] = '\0';
}
