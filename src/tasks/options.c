/* Task options, the shared core (spec/tasks.md §1.1, §8.1): the table of
 * families, the drivers of the public option functions, and what the
 * families share. Each family's own options, defaults, checks, horizon and
 * definition are in options_<family>.c; the 64 capacity presets in
 * presets.c (options_internal.h says how they fit).
 *
 * Options arrive as a JSON object with the plan's own value kinds (INT vs
 * REAL vs STRING vs BOOL vs ARRAY). Resolution follows the reference's
 * order of checks step by step, so that the first failure reported for a
 * bad option set is the reference's, with its message. Where the reference
 * converts with Python's float() (strings and bools included) we do the
 * same; where it requires a non-bool integer we do too. Resolved options are
 * normalised (reals as float, counts as int, tuples as arrays), which is
 * what the JSON form (contracts, calibration signatures) carries. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/task.h"
#include "brainlesslab/text.h"
#include "options_internal.h"

/* In bl_task_kind's order. */
static const bl_task_family *const families[BL_TASK_COUNT] = {
    &bl_family_tracking,
    &bl_family_pong,
    &bl_family_cartpole,
    &bl_family_delayed_cue,
    &bl_family_recall_interference,
    &bl_family_delayed_xor,
    &bl_family_evidence_accumulation,
    &bl_family_context_integration,
    &bl_family_temporal_order,
    &bl_family_reversal_adaptation,
};

const char *bl_task_name(bl_task_kind kind)
{
    return (unsigned)kind < BL_TASK_COUNT ? families[kind]->name : "unknown";
}

/* ---- Python-style text ------------------------------------------------- */

/* Ends a message built in `b`: the message as an error of `status`, or
 * BL_ENOMEM if building it ran out of memory. Frees `b`. */
static bl_status fail_buf(bl_error *err, bl_status status, bl_buf *b)
{
    bl_status st = bl_buf_status(b, err);
    if (st == BL_OK)
        st = bl_fail(err, status, "%s", b->data ? b->data : "");
    bl_buf_clear(b);
    return st;
}

bl_status bl_task_from_name(const char *name, bl_task_kind *out, bl_error *err)
{
    if (name)
        for (int k = 0; k < BL_TASK_COUNT; k++)
            if (strcmp(name, families[k]->name) == 0) {
                *out = (bl_task_kind)k;
                return BL_OK;
            }
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_puts(&b, "unsupported task ");
    if (name)
        bl_repr_string(&b, name, strlen(name));
    else
        bl_buf_puts(&b, "None");
    bl_buf_puts(&b, "; historical tasks require Julia");
    return fail_buf(err, BL_EVALUE, &b);
}

bl_json_kind bl_opt_kind(const bl_json *v)
{
    return v ? bl_json_kindof(v) : BL_JSON_NULL;
}

/* ---- Python float() and _integer ---------------------------------------- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool ci_equal(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return false;
    }
    return true;
}

/* float(str): surrounding whitespace, an optional sign, decimal digits with
 * PEP 515 underscores between digits, an optional exponent, or inf /
 * infinity / nan in any case. Anything else is Python's ValueError. */
bl_status bl_py_float_text(const char *s, size_t len, double *out, bl_error *err)
{
    const char *orig = s;
    size_t orig_len = len;
    while (len && is_space(s[0]))
        s++, len--;
    while (len && is_space(s[len - 1]))
        len--;
    char *clean = bl_malloc(len + 1);
    if (!clean)
        return bl_fail(err, BL_ENOMEM, "out of memory for a task option");
    size_t n = 0;
    bool ok = len > 0;
    for (size_t i = 0; i < len && ok; i++) {
        if (s[i] == '_') {
            ok = i > 0 && i + 1 < len && is_digit(s[i - 1]) && is_digit(s[i + 1]);
            continue;
        }
        if (s[i] == '\0')
            ok = false;
        clean[n++] = s[i];
    }
    clean[n] = '\0';
    if (ok) {
        size_t i = 0;
        double sign = 1.0;
        if (clean[i] == '+' || clean[i] == '-')
            sign = clean[i++] == '-' ? -1.0 : 1.0;
        if (ci_equal(clean + i, n - i, "inf") || ci_equal(clean + i, n - i, "infinity")) {
            *out = sign * HUGE_VAL;
        } else if (ci_equal(clean + i, n - i, "nan")) {
            *out = NAN;
        } else {
            size_t digits = 0;
            while (i < n && is_digit(clean[i]))
                i++, digits++;
            if (i < n && clean[i] == '.') {
                i++;
                while (i < n && is_digit(clean[i]))
                    i++, digits++;
            }
            ok = digits > 0;
            if (ok && i < n && (clean[i] == 'e' || clean[i] == 'E')) {
                i++;
                if (i < n && (clean[i] == '+' || clean[i] == '-'))
                    i++;
                size_t exp_digits = 0;
                while (i < n && is_digit(clean[i]))
                    i++, exp_digits++;
                ok = exp_digits > 0;
            }
            ok = ok && i == n;
            if (ok)
                *out = strtod(clean, NULL);
        }
    }
    bl_free(clean);
    if (ok)
        return BL_OK;
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_puts(&b, "could not convert string to float: ");
    bl_repr_string(&b, orig, orig_len);
    return fail_buf(err, BL_EVALUE, &b);
}

/* float(value) for a configuration value. */
bl_status bl_py_float(const bl_json *v, double *out, bl_error *err)
{
    switch (bl_opt_kind(v)) {
    case BL_JSON_REAL:
        *out = bl_json_get_real(v);
        return BL_OK;
    case BL_JSON_INT:
        *out = (double)bl_json_get_int(v);
        return BL_OK;
    case BL_JSON_BOOL:
        *out = bl_json_get_bool(v) ? 1.0 : 0.0;
        return BL_OK;
    case BL_JSON_BIGINT: {
        bool negative = false;
        size_t n = bl_json_get_bigint(v, &negative, NULL, 0);
        uint64_t *limbs = bl_calloc(n ? n : 1, sizeof *limbs);
        if (!limbs)
            return bl_fail(err, BL_ENOMEM, "out of memory for a task option");
        bl_json_get_bigint(v, &negative, limbs, n);
        double d = 0.0;
        for (size_t i = n; i-- > 0;)
            d = d * 18446744073709551616.0 + (double)limbs[i];
        bl_free(limbs);
        if (!isfinite(d))
            return bl_fail(err, BL_EVALUE, "int too large to convert to float");
        *out = negative ? -d : d;
        return BL_OK;
    }
    case BL_JSON_STRING: {
        size_t len = 0;
        const char *s = bl_json_get_string(v, &len);
        return bl_py_float_text(s, len, out, err);
    }
    default:
        return bl_fail(err, BL_ETYPE,
                       "float() argument must be a string or a real number, not '%s'",
                       bl_py_type(v));
    }
}

size_t bl_opt_cp_len(const char *s, size_t left)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return n <= left ? n : left;
}

size_t bl_opt_cp_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i += bl_opt_cp_len(s + i, len - i))
        n++;
    return n;
}

/* tuple(float(x) for x in value): arrays element by element, strings code
 * point by code point (as Python iterates them); anything else is not
 * iterable. *out is owned by the caller (NULL when empty). */
bl_status bl_py_float_seq(const bl_json *v, double **out, size_t *count, bl_error *err)
{
    *out = NULL;
    *count = 0;
    bl_json_kind k = bl_opt_kind(v);
    size_t n;
    const char *s = NULL;
    size_t slen = 0;
    if (k == BL_JSON_ARRAY) {
        n = bl_json_size(v);
    } else if (k == BL_JSON_STRING) {
        s = bl_json_get_string(v, &slen);
        n = bl_opt_cp_count(s, slen);
    } else {
        return bl_fail(err, BL_ETYPE, "'%s' object is not iterable", bl_py_type(v));
    }
    if (n == 0)
        return BL_OK;
    double *vals = bl_mallocarray(n, sizeof *vals);
    if (!vals)
        return bl_fail(err, BL_ENOMEM, "out of memory for a task option");
    bl_status st = BL_OK;
    size_t at = 0;
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        if (s) {
            size_t l = bl_opt_cp_len(s + at, slen - at);
            st = bl_py_float_text(s + at, l, &vals[i], err);
            at += l;
        } else {
            st = bl_py_float(bl_json_at(v, i), &vals[i], err);
        }
    }
    if (st != BL_OK) {
        bl_free(vals);
        return st;
    }
    *out = vals;
    *count = n;
    return BL_OK;
}

/* The largest count any option may take: schedules and ticks are int32 in
 * the worlds (a larger value could never make a valid world). */
#define BL_OPTION_INT_MAX INT64_C(2147483647)

bl_status bl_py_integer(const bl_json *v, const char *name, int64_t minimum, int64_t *out,
                        bl_error *err)
{
    bl_json_kind k = bl_opt_kind(v);
    if (k == BL_JSON_INT) {
        int64_t x = bl_json_get_int(v);
        if (x >= minimum) {
            if (x > BL_OPTION_INT_MAX)
                return bl_fail(err, BL_EVALUE, "%s must be an integer <= %" PRId64, name,
                               BL_OPTION_INT_MAX);
            *out = x;
            return BL_OK;
        }
    } else if (k == BL_JSON_BIGINT) {
        bool negative = false;
        bl_json_get_bigint(v, &negative, NULL, 0);
        if (!negative)
            return bl_fail(err, BL_EVALUE, "%s must be an integer <= %" PRId64, name,
                           BL_OPTION_INT_MAX);
    }
    return bl_fail(err, BL_EVALUE, "%s must be an integer >= %" PRId64, name, minimum);
}

static bool json_str_is(const bl_json *v, const char *word)
{
    if (bl_opt_kind(v) != BL_JSON_STRING)
        return false;
    size_t len = 0;
    const char *s = bl_json_get_string(v, &len);
    return len == strlen(word) && memcmp(s, word, len) == 0;
}

bl_status bl_py_mode(const bl_json *v, const char *name, const char *const *allowed, size_t n,
                     int *out, bl_error *err)
{
    for (size_t i = 0; i < n; i++)
        if (json_str_is(v, allowed[i])) {
            *out = (int)i;
            return BL_OK;
        }
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_printf(&b, "%s must be one of (", name);
    for (size_t i = 0; i < n; i++) {
        if (i)
            bl_buf_puts(&b, ", ");
        bl_repr_string(&b, allowed[i], strlen(allowed[i]));
    }
    bl_buf_puts(&b, ")");
    return fail_buf(err, BL_EVALUE, &b);
}

const char *const bl_opt_cue_modes[3] = {"transient", "persistent", "hidden"};
const char *const bl_opt_visibilities[2] = {"visible", "hidden"};
const char *const bl_opt_distractor_modes[4] = {"random", "matched", "opposite", "absent"};
const char *const bl_opt_congruencies[3] = {"mixed", "congruent", "conflicting"};

/* The family's option named `key`, NULL when it has none. */
static const bl_opt_field *family_field(bl_task_kind kind, const char *key, size_t len)
{
    for (size_t i = 0; i < families[kind]->nfields; i++) {
        const bl_opt_field *f = &families[kind]->fields[i];
        if (strlen(f->key) == len && memcmp(f->key, key, len) == 0)
            return f;
    }
    return NULL;
}

/* Where field `f` of `o` is stored; mode fields are enums, which hold the
 * index of a name. */
_Static_assert(sizeof(bl_cue_mode) == sizeof(int) && sizeof(bl_visibility) == sizeof(int) &&
                   sizeof(bl_distractor_mode) == sizeof(int) &&
                   sizeof(bl_congruency) == sizeof(int),
               "mode fields are stored as int");
static void *field_at(bl_task_options *o, const bl_opt_field *f)
{
    return (char *)o + f->offset;
}
static const void *field_in(const bl_task_options *o, const bl_opt_field *f)
{
    return (const char *)o + f->offset;
}

/* ---- defaults ------------------------------------------------------------ */

static bl_status kind_check(bl_task_kind kind, bl_error *err)
{
    if ((unsigned)kind >= BL_TASK_COUNT)
        return bl_fail(err, BL_EVALUE, "unknown task kind %d", (int)kind);
    return BL_OK;
}

bl_status bl_task_options_default(bl_task_kind kind, bl_task_options *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_status st = kind_check(kind, err);
    if (st != BL_OK)
        return st;
    bl_task_options o = {.kind = kind};
    const bl_task_family *family = families[kind];
    for (size_t i = 0; i < family->nfields; i++) {
        const bl_opt_field *f = &family->fields[i];
        switch (f->type) {
        case BL_OPT_INT:
            *(int64_t *)field_at(&o, f) = (int64_t)f->fallback;
            break;
        case BL_OPT_REAL:
            *(double *)field_at(&o, f) = f->fallback;
            break;
        case BL_OPT_BOOL:
            *(bool *)field_at(&o, f) = f->fallback != 0.0;
            break;
        case BL_OPT_MODE:
            *(int *)field_at(&o, f) = (int)f->fallback;
            break;
        case BL_OPT_CUSTOM:
            break;
        }
    }
    if (family->defaults && (st = family->defaults(&o, err)) != BL_OK)
        return st;
    *out = o;
    return BL_OK;
}

void bl_task_options_clear(bl_task_options *o)
{
    if (!o)
        return;
    bl_free(o->sensor_offsets_deg);
    bl_free(o->delays);
    memset(o, 0, sizeof *o);
}

bl_status bl_task_options_copy(const bl_task_options *src, bl_task_options *dst, bl_error *err)
{
    bl_task_options o = *src;
    o.sensor_offsets_deg = NULL;
    o.delays = NULL;
    if (src->n_sensor_offsets) {
        o.sensor_offsets_deg = bl_mallocarray(src->n_sensor_offsets, sizeof(double));
        if (!o.sensor_offsets_deg)
            goto nomem;
        memcpy(o.sensor_offsets_deg, src->sensor_offsets_deg,
               src->n_sensor_offsets * sizeof(double));
    }
    if (src->n_delays) {
        o.delays = bl_mallocarray(src->n_delays, sizeof(int64_t));
        if (!o.delays)
            goto nomem;
        memcpy(o.delays, src->delays, src->n_delays * sizeof(int64_t));
    }
    *dst = o;
    return BL_OK;
nomem:
    bl_free(o.sensor_offsets_deg);
    return bl_fail(err, BL_ENOMEM, "out of memory for task options");
}

/* ---- horizons (§1.1) ----------------------------------------------------- */

/* The family's default horizon, or -1 when it would exceed the int32 tick
 * range (only reachable with absurd counts; each count is <= INT32_MAX, so
 * every sum and product of the families' horizons fits in int64 except
 * Reversal Adaptation's rounds * period, which it checks by division first). */
static int64_t default_horizon(const bl_task_options *o)
{
    if ((unsigned)o->kind >= BL_TASK_COUNT)
        return -1;
    const bl_task_family *family = families[o->kind];
    int64_t h = family->horizon ? family->horizon(o) : family->declares.default_horizon;
    return h <= INT32_MAX ? h : -1;
}

void bl_task_define(const bl_task_options *o, bl_task_definition *out)
{
    bl_task_definition d = {
        .kind = o->kind,
        .n_effectors = 2,
        .neural_frames = 1,
        .default_horizon = default_horizon(o),
        .min_scored_ticks = 1,
        .outcome_key = "probe_accuracy",
        .upper_bound = 1.0,
        .probe = bl_task_is_probe(o->kind),
    };
    if ((unsigned)o->kind < BL_TASK_COUNT) {
        const bl_task_family *family = families[o->kind];
        const bl_task_definition *own = &family->declares;
        d.n_inputs = own->n_inputs;
        if (own->neural_frames)
            d.neural_frames = own->neural_frames;
        if (own->min_scored_ticks)
            d.min_scored_ticks = own->min_scored_ticks;
        if (own->outcome_key)
            d.outcome_key = own->outcome_key;
        if (own->upper_bound != 0.0)
            d.upper_bound = own->upper_bound;
        if (family->define)
            family->define(o, &d);
    }
    *out = d;
}

/* ---- resolution (§8.1) ---------------------------------------------------- */

const bl_json *bl_opt_given(const bl_json *given, const char *key)
{
    return given ? bl_json_get(given, key) : NULL;
}

typedef struct key_ref {
    const char *s;
    size_t len;
} key_ref;

static int key_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->s, y->s, n);
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* "unknown options for <kind>: [<sorted keys>]" with Python's list repr. */
static bl_status check_unknown(bl_task_kind kind, const bl_json *given, bl_error *err)
{
    size_t n = given ? bl_json_size(given) : 0, unknown = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *key = bl_json_key_at(given, i, &len);
        if (!family_field(kind, key, len))
            unknown++;
    }
    if (!unknown)
        return BL_OK;
    key_ref *keys = bl_mallocarray(unknown, sizeof *keys);
    if (!keys)
        return bl_fail(err, BL_ENOMEM, "out of memory for task options");
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *key = bl_json_key_at(given, i, &len);
        if (!family_field(kind, key, len))
            keys[m++] = (key_ref){key, len};
    }
    /* UTF-8 byte order is code point order, which is how Python sorts str. */
    qsort(keys, m, sizeof *keys, key_cmp);
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_printf(&b, "unknown options for %s: [", families[kind]->name);
    for (size_t i = 0; i < m; i++) {
        if (i)
            bl_buf_puts(&b, ", ");
        bl_repr_string(&b, keys[i].s, keys[i].len);
    }
    bl_buf_puts(&b, "]");
    bl_free(keys);
    return fail_buf(err, BL_EVALUE, &b);
}

/* ---- checks two families share ------------------------------------------- */

bl_status bl_opt_sensory_gain(const bl_json *given, bl_task_options *o, bl_error *err)
{
    const bl_json *v = bl_opt_given(given, "sensory_gain");
    if (!v)
        return BL_OK;
    bl_status st;
    if ((st = bl_py_float(v, &o->sensory_gain, err)) != BL_OK)
        return st;
    if (!(isfinite(o->sensory_gain) && o->sensory_gain >= 0.0))
        return bl_fail(err, BL_EVALUE, "sensory_gain must be finite and nonnegative");
    return BL_OK;
}

bl_status bl_opt_pulses(const bl_json *given, bl_task_options *o, bl_error *err)
{
    const bl_json *v;
    bl_status st;
    if ((v = bl_opt_given(given, "pulse_count")) &&
        (st = bl_py_integer(v, "pulse_count", 4, &o->pulse_count, err)) != BL_OK)
        return st;
    if ((v = bl_opt_given(given, "evidence_fraction")) &&
        (st = bl_py_float(v, &o->evidence_fraction, err)) != BL_OK)
        return st;
    double f = o->evidence_fraction;
    if (!(isfinite(f) && f > 0.0 && f < 1.0))
        return bl_fail(err, BL_EVALUE, "evidence_fraction must lie in (0, 1)");
    double n = (double)o->pulse_count;
    double left = n * (1.0 + f) / 2.0;
    if (!(floor(left) == left && 1.0 <= n - left && n - left <= n - 1.0))
        return bl_fail(err, BL_EVALUE,
                       "evidence counts must be integral and permit either final pulse");
    return BL_OK;
}

bl_status bl_opt_check(const bl_json *given, const char *key, int64_t minimum, bl_task_options *o,
                       bl_error *err)
{
    const bl_json *v = bl_opt_given(given, key);
    const bl_opt_field *f = v ? family_field(o->kind, key, strlen(key)) : NULL;
    if (!f)
        return BL_OK;
    if (f->type == BL_OPT_MODE)
        return bl_py_mode(v, key, f->modes, f->nmodes, (int *)field_at(o, f), err);
    return bl_py_integer(v, key, minimum, (int64_t *)field_at(o, f), err);
}

/* ---- the driver ------------------------------------------------------------ */

bl_status bl_task_options_resolve(bl_task_kind kind, const bl_json *given, bl_task_options *out,
                                  bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_status st = kind_check(kind, err);
    if (st != BL_OK)
        return st;
    if (given && bl_json_kindof(given) != BL_JSON_OBJECT)
        return bl_fail(err, BL_ETYPE, "task options must be a mapping, not '%s'",
                       bl_py_type(given));
    if ((st = check_unknown(kind, given, err)) != BL_OK)
        return st;
    bl_task_options o;
    if ((st = bl_task_options_default(kind, &o, err)) != BL_OK)
        return st;

    /* The reference's order of checks, so the first failure is its own: the
     * options families share (counts with their minimum, then modes), then
     * the family's own (options_<family>.c). */
    static const struct {
        const char *key;
        int64_t minimum;
    } shared[] = {
        {"cue_ticks", 1},   {"response_ticks", 1}, {"distractor_ticks", 1},
        {"pulse_ticks", 1}, {"terminal_ticks", 1}, {"feedback_ticks", 1},
        {"gap", 0},         {"delay", 0},          {"distractors", 0},
        {"cue_mode", 0},    {"context_mode", 0},   {"input_mode", 0},
        {"feedback_mode", 0},
    };
    for (size_t i = 0; i < sizeof shared / sizeof *shared; i++)
        if ((st = bl_opt_check(given, shared[i].key, shared[i].minimum, &o, err)) != BL_OK)
            goto fail;
    if (families[kind]->resolve && (st = families[kind]->resolve(given, &o, err)) != BL_OK)
        goto fail;
    if (default_horizon(&o) < 0) {
        st = bl_fail(err, BL_EVALUE, "%s episode must fit in 2147483647 ticks",
                     families[kind]->name);
        goto fail;
    }
    *out = o;
    return BL_OK;
fail:
    bl_task_options_clear(&o);
    return st;
}

/* ---- JSON form ------------------------------------------------------------ */

bl_json *bl_opt_numbers(const int64_t *ints, const double *reals, size_t n)
{
    bl_status st = BL_OK;
    bl_json *a = bl_json_array();
    for (size_t i = 0; i < n; i++)
        bl_json_push(&st, a, ints ? bl_json_int(ints[i]) : bl_json_real(reals[i]), NULL);
    if (st != BL_OK) {
        bl_json_destroy(a);
        return NULL;
    }
    return a;
}

bl_status bl_task_options_json(const bl_task_options *o, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_status st = kind_check(o->kind, err);
    if (st != BL_OK)
        return st;
    bl_json *obj = bl_json_object();
    if (!obj)
        return bl_fail(err, BL_ENOMEM, "out of memory for task options");
    const bl_task_family *family = families[o->kind];
    for (size_t i = 0; i < family->nfields; i++) {
        const bl_opt_field *f = &family->fields[i];
        const void *at = field_in(o, f);
        bl_json *value = NULL;
        switch (f->type) {
        case BL_OPT_INT:
            value = bl_json_int(*(const int64_t *)at);
            break;
        case BL_OPT_REAL:
            value = bl_json_real(*(const double *)at);
            break;
        case BL_OPT_BOOL:
            value = bl_json_bool(*(const bool *)at);
            break;
        case BL_OPT_MODE:
            value = bl_json_string(f->modes[*(const int *)at]);
            break;
        case BL_OPT_CUSTOM:
            value = f->json(o);
            break;
        }
        bl_json_put(&st, obj, f->key, value, err);
    }
    if (st != BL_OK)
        goto fail;
    *out = obj;
    return BL_OK;
fail:
    bl_json_destroy(obj);
    return st;
}
