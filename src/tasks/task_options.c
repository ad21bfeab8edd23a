/* Task families, their options, definitions and the 64 capacity presets
 * (spec/tasks.md §1.1, §5.11, §8.1).
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

static const char *const kind_names[BL_TASK_COUNT] = {
    "tracking",
    "pong",
    "cartpole_plank_easy",
    "delayed_cue",
    "recall_interference",
    "delayed_xor",
    "evidence_accumulation",
    "context_integration",
    "temporal_order",
    "reversal_adaptation",
};

const char *bl_task_name(bl_task_kind kind)
{
    return (unsigned)kind < BL_TASK_COUNT ? kind_names[kind] : "unknown";
}

/* ---- Python-style text ------------------------------------------------- */

/* Ends a message built in `b`: the message as an error of `status`, or
 * BL_ENOMEM if building it ran out of memory. Frees `b`. */
static bl_status fail_buf(bl_error *err, bl_status status, bl_buf *b)
{
    bl_status st = bl_buf_status(b, err);
    if (st == BL_OK)
        st = bl_fail(err, status, "%s", b->data ? b->data : "");
    bl_buf_free(b);
    return st;
}

bl_status bl_task_from_name(const char *name, bl_task_kind *out, bl_error *err)
{
    if (name)
        for (int k = 0; k < BL_TASK_COUNT; k++)
            if (strcmp(name, kind_names[k]) == 0) {
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

/* Python's type name of a configuration value, for TypeError texts. */
static const char *py_type(const bl_json *v)
{
    switch (v ? bl_json_kindof(v) : BL_JSON_NULL) {
    case BL_JSON_NULL:
        return "NoneType";
    case BL_JSON_BOOL:
        return "bool";
    case BL_JSON_INT:
    case BL_JSON_BIGINT:
        return "int";
    case BL_JSON_REAL:
        return "float";
    case BL_JSON_STRING:
        return "str";
    case BL_JSON_ARRAY:
        return "tuple";
    case BL_JSON_OBJECT:
        return "dict";
    }
    return "object";
}

static bl_json_kind kind_of(const bl_json *v)
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
static bl_status py_float_text(const char *s, size_t len, double *out, bl_error *err)
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
static bl_status py_float(const bl_json *v, double *out, bl_error *err)
{
    switch (kind_of(v)) {
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
        return py_float_text(s, len, out, err);
    }
    default:
        return bl_fail(err, BL_ETYPE,
                       "float() argument must be a string or a real number, not '%s'",
                       py_type(v));
    }
}

/* Byte length of the UTF-8 code point starting at s[0] (at least 1). */
static size_t cp_len(const char *s, size_t left)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return n <= left ? n : left;
}

static size_t cp_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i += cp_len(s + i, len - i))
        n++;
    return n;
}

/* tuple(float(x) for x in value): arrays element by element, strings code
 * point by code point (as Python iterates them); anything else is not
 * iterable. *out is owned by the caller (NULL when empty). */
static bl_status py_float_seq(const bl_json *v, double **out, size_t *count, bl_error *err)
{
    *out = NULL;
    *count = 0;
    bl_json_kind k = kind_of(v);
    size_t n;
    const char *s = NULL;
    size_t slen = 0;
    if (k == BL_JSON_ARRAY) {
        n = bl_json_size(v);
    } else if (k == BL_JSON_STRING) {
        s = bl_json_get_string(v, &slen);
        n = cp_count(s, slen);
    } else {
        return bl_fail(err, BL_ETYPE, "'%s' object is not iterable", py_type(v));
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
            size_t l = cp_len(s + at, slen - at);
            st = py_float_text(s + at, l, &vals[i], err);
            at += l;
        } else {
            st = py_float(bl_json_at(v, i), &vals[i], err);
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

/* _integer(value, name, minimum): a non-bool integer >= minimum. */
static bl_status py_integer(const bl_json *v, const char *name, int64_t minimum, int64_t *out,
                            bl_error *err)
{
    bl_json_kind k = kind_of(v);
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
    if (kind_of(v) != BL_JSON_STRING)
        return false;
    size_t len = 0;
    const char *s = bl_json_get_string(v, &len);
    return len == strlen(word) && memcmp(s, word, len) == 0;
}

/* _mode(value, name, allowed): the value must be one of the strings. */
static bl_status py_mode(const bl_json *v, const char *name, const char *const *allowed,
                         size_t n, int *out, bl_error *err)
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

static const char *const cue_modes[] = {"transient", "persistent", "hidden"};
static const char *const visibilities[] = {"visible", "hidden"};
static const char *const distractor_modes[] = {"random", "matched", "opposite", "absent"};
static const char *const congruencies[] = {"mixed", "congruent", "conflicting"};

/* ---- families' option names (the reference's declaration order) --------- */

static const char *const keys_tracking[] = {
    "stim_speed_rad", "movement_amp", "eye_offset_deg", "sensor_offsets_deg", "sensory_gain",
    "randomize_start", "theta0", "phi0", "direction0",
};
static const char *const keys_pong[] = {"sensory_gain"};
static const char *const keys_cartpole[] = {"initial_ranges"};
static const char *const keys_delayed_cue[] = {"cue_ticks", "delays", "response_ticks",
                                               "cue_mode"};
static const char *const keys_recall[] = {"cue_ticks",  "delay",           "response_ticks",
                                          "distractors", "distractor_ticks", "cue_mode",
                                          "distractor_mode"};
static const char *const keys_xor[] = {"cue_ticks", "gap", "response_ticks", "cue_mode"};
static const char *const keys_evidence[] = {"pulse_count", "evidence_fraction", "pulse_ticks",
                                            "response_ticks", "input_mode"};
static const char *const keys_context[] = {"cue_ticks",      "pulse_count",  "evidence_fraction",
                                           "pulse_ticks",    "response_ticks", "context_mode",
                                           "congruency"};
static const char *const keys_temporal[] = {"cue_ticks", "gap", "terminal_ticks",
                                            "response_ticks", "input_mode"};
static const char *const keys_reversal[] = {"rounds",         "cue_ticks",      "response_ticks",
                                            "feedback_ticks", "reversal_range", "feedback_mode"};

#define KEYS(a) {a, sizeof a / sizeof *a}
static const struct {
    const char *const *names;
    size_t n;
} family_keys[BL_TASK_COUNT] = {
    KEYS(keys_tracking), KEYS(keys_pong),     KEYS(keys_cartpole), KEYS(keys_delayed_cue),
    KEYS(keys_recall),   KEYS(keys_xor),      KEYS(keys_evidence), KEYS(keys_context),
    KEYS(keys_temporal), KEYS(keys_reversal),
};
#undef KEYS

static bool family_has(bl_task_kind kind, const char *key, size_t len)
{
    for (size_t i = 0; i < family_keys[kind].n; i++) {
        const char *name = family_keys[kind].names[i];
        if (strlen(name) == len && memcmp(name, key, len) == 0)
            return true;
    }
    return false;
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
    switch (kind) {
    case BL_TASK_TRACKING:
        o.stim_speed_rad = 3.141592653589793 / 180.0; /* math.pi / 180 */
        o.movement_amp = 10.0;
        o.eye_offset_deg = 30.0;
        o.sensory_gain = 1.0;
        o.randomize_start = true;
        o.n_sensor_offsets = 31;
        o.sensor_offsets_deg = bl_mallocarray(31, sizeof(double));
        if (!o.sensor_offsets_deg)
            return bl_fail(err, BL_ENOMEM, "out of memory for task options");
        for (int i = 0; i < 31; i++)
            o.sensor_offsets_deg[i] = -60.0 + 4.0 * i;
        break;
    case BL_TASK_PONG:
        o.sensory_gain = 1.0;
        break;
    case BL_TASK_CARTPOLE_PLANK_EASY: {
        static const double ranges[4][2] = {
            {-1.2, 1.2}, {-0.05, 0.05}, {-0.10475, 0.10475}, {-0.05, 0.05}};
        memcpy(o.initial_ranges, ranges, sizeof ranges);
        break;
    }
    case BL_TASK_DELAYED_CUE:
        o.cue_ticks = 8;
        o.response_ticks = 8;
        o.cue_mode = BL_CUE_TRANSIENT;
        o.n_delays = 3;
        o.delays = bl_mallocarray(3, sizeof(int64_t));
        if (!o.delays)
            return bl_fail(err, BL_ENOMEM, "out of memory for task options");
        o.delays[0] = 8;
        o.delays[1] = 32;
        o.delays[2] = 128;
        break;
    case BL_TASK_RECALL_INTERFERENCE:
        o.cue_ticks = 8;
        o.delay = 32;
        o.response_ticks = 8;
        o.distractors = 1;
        o.distractor_ticks = 4;
        o.cue_mode = BL_CUE_TRANSIENT;
        o.distractor_mode = BL_DISTRACTOR_RANDOM;
        break;
    case BL_TASK_DELAYED_XOR:
        o.cue_ticks = 8;
        o.gap = 32;
        o.response_ticks = 8;
        o.cue_mode = BL_CUE_TRANSIENT;
        break;
    case BL_TASK_EVIDENCE_ACCUMULATION:
        o.pulse_count = 32;
        o.evidence_fraction = 0.25;
        o.pulse_ticks = 1;
        o.response_ticks = 8;
        o.input_mode = BL_VISIBLE;
        break;
    case BL_TASK_CONTEXT_INTEGRATION:
        o.cue_ticks = 8;
        o.pulse_count = 32;
        o.evidence_fraction = 0.25;
        o.pulse_ticks = 1;
        o.response_ticks = 8;
        o.context_mode = BL_CUE_TRANSIENT;
        o.congruency = BL_CONGRUENCY_MIXED;
        break;
    case BL_TASK_TEMPORAL_ORDER:
        o.cue_ticks = 8;
        o.gap = 8;
        o.terminal_ticks = 8;
        o.response_ticks = 8;
        o.input_mode = BL_VISIBLE;
        break;
    case BL_TASK_REVERSAL_ADAPTATION:
        o.rounds = 96;
        o.cue_ticks = 8;
        o.response_ticks = 8;
        o.feedback_ticks = 8;
        o.reversal_range[0] = 32;
        o.reversal_range[1] = 64;
        o.feedback_mode = BL_VISIBLE;
        break;
    case BL_TASK_COUNT:
        break;
    }
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
 * every sum and product below fits in int64 except rounds * period, which
 * is checked by division first). */
static int64_t default_horizon(const bl_task_options *o)
{
    int64_t c = o->cue_ticks, r = o->response_ticks, h;
    switch (o->kind) {
    case BL_TASK_TRACKING:
        return 2000;
    case BL_TASK_PONG:
        return 7200;
    case BL_TASK_CARTPOLE_PLANK_EASY:
        return 15000;
    case BL_TASK_DELAYED_CUE: {
        int64_t most = 0;
        for (size_t i = 0; i < o->n_delays; i++)
            if (i == 0 || o->delays[i] > most)
                most = o->delays[i];
        h = c + most + r;
        break;
    }
    case BL_TASK_RECALL_INTERFERENCE:
        h = c + o->delay + r;
        break;
    case BL_TASK_DELAYED_XOR:
        h = 2 * c + o->gap + r;
        break;
    case BL_TASK_EVIDENCE_ACCUMULATION:
        h = o->pulse_count * o->pulse_ticks + r;
        break;
    case BL_TASK_CONTEXT_INTEGRATION:
        h = c + o->pulse_count * o->pulse_ticks + r;
        break;
    case BL_TASK_TEMPORAL_ORDER:
        h = 2 * c + o->gap + o->terminal_ticks + r;
        break;
    case BL_TASK_REVERSAL_ADAPTATION: {
        int64_t period = c + r + o->feedback_ticks;
        if (o->rounds > 0 && period > INT32_MAX / o->rounds)
            return -1;
        h = o->rounds * period;
        break;
    }
    default:
        return -1;
    }
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
    switch (o->kind) {
    case BL_TASK_TRACKING:
        d.n_inputs = 2 * o->n_sensor_offsets;
        d.min_scored_ticks = 2000;
        d.outcome_key = "track_score";
        break;
    case BL_TASK_PONG:
        d.n_inputs = 46;
        d.min_scored_ticks = 6000;
        d.outcome_key = "hit_rate";
        break;
    case BL_TASK_CARTPOLE_PLANK_EASY:
        d.n_inputs = 8;
        d.neural_frames = 24;
        d.min_scored_ticks = 15000;
        d.outcome_key = "fitness";
        d.upper_bound = 15000.0;
        break;
    case BL_TASK_DELAYED_CUE:
        d.n_inputs = 3;
        d.outcome_key = "recall_accuracy";
        break;
    case BL_TASK_RECALL_INTERFERENCE:
    case BL_TASK_EVIDENCE_ACCUMULATION:
        d.n_inputs = 3;
        break;
    case BL_TASK_DELAYED_XOR:
        d.n_inputs = 5;
        break;
    case BL_TASK_CONTEXT_INTEGRATION:
        d.n_inputs = 7;
        break;
    case BL_TASK_TEMPORAL_ORDER:
        d.n_inputs = 4;
        break;
    case BL_TASK_REVERSAL_ADAPTATION:
        d.n_inputs = 8;
        d.outcome_key = "adaptation_accuracy";
        break;
    default:
        break;
    }
    *out = d;
}

/* ---- resolution (§8.1) ---------------------------------------------------- */

static const bl_json *given_value(const bl_json *given, const char *key)
{
    return given ? bl_json_get(given, key) : NULL;
}

static int64_t *int_field(bl_task_options *o, const char *key)
{
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        {"cue_ticks", offsetof(bl_task_options, cue_ticks)},
        {"response_ticks", offsetof(bl_task_options, response_ticks)},
        {"distractor_ticks", offsetof(bl_task_options, distractor_ticks)},
        {"pulse_ticks", offsetof(bl_task_options, pulse_ticks)},
        {"terminal_ticks", offsetof(bl_task_options, terminal_ticks)},
        {"feedback_ticks", offsetof(bl_task_options, feedback_ticks)},
        {"gap", offsetof(bl_task_options, gap)},
        {"delay", offsetof(bl_task_options, delay)},
        {"distractors", offsetof(bl_task_options, distractors)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (strcmp(fields[i].name, key) == 0)
            return (int64_t *)(void *)((char *)o + fields[i].offset);
    return NULL;
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
        if (!family_has(kind, key, len))
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
        if (!family_has(kind, key, len))
            keys[m++] = (key_ref){key, len};
    }
    /* UTF-8 byte order is code point order, which is how Python sorts str. */
    qsort(keys, m, sizeof *keys, key_cmp);
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_printf(&b, "unknown options for %s: [", kind_names[kind]);
    for (size_t i = 0; i < m; i++) {
        if (i)
            bl_buf_puts(&b, ", ");
        bl_repr_string(&b, keys[i].s, keys[i].len);
    }
    bl_buf_puts(&b, "]");
    bl_free(keys);
    return fail_buf(err, BL_EVALUE, &b);
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bl_status resolve_delays(const bl_json *v, bl_task_options *o, bl_error *err)
{
    bl_json_kind k = kind_of(v);
    if (k == BL_JSON_STRING) {
        /* Python iterates the characters, none of which is an int. */
        size_t len = 0;
        bl_json_get_string(v, &len);
        if (len == 0)
            return bl_fail(err, BL_EVALUE, "delays must be nonempty and distinct");
        return bl_fail(err, BL_EVALUE, "delays must be an integer >= 0");
    }
    if (k != BL_JSON_ARRAY)
        return bl_fail(err, BL_ETYPE, "'%s' object is not iterable", py_type(v));
    size_t n = bl_json_size(v);
    int64_t *vals = n ? bl_mallocarray(n, sizeof *vals) : NULL;
    int64_t *sorted = n ? bl_mallocarray(n, sizeof *sorted) : NULL;
    bl_status st = BL_OK;
    if (n && (!vals || !sorted)) {
        st = bl_fail(err, BL_ENOMEM, "out of memory for task options");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        st = py_integer(bl_json_at(v, i), "delays", 0, &vals[i], err);
        if (st != BL_OK)
            goto fail;
    }
    if (n)
        memcpy(sorted, vals, n * sizeof *vals);
    bool distinct = n > 0;
    if (n) {
        qsort(sorted, n, sizeof *sorted, i64_cmp);
        for (size_t i = 1; i < n; i++)
            if (sorted[i] == sorted[i - 1])
                distinct = false;
    }
    if (!distinct) {
        st = bl_fail(err, BL_EVALUE, "delays must be nonempty and distinct");
        goto fail;
    }
    bl_free(sorted);
    bl_free(o->delays);
    o->delays = vals;
    o->n_delays = n;
    return BL_OK;
fail:
    bl_free(vals);
    bl_free(sorted);
    return st;
}

static bl_status resolve_reversal(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st;
    const bl_json *v = given_value(given, "rounds");
    if (v && (st = py_integer(v, "rounds", 48, &o->rounds, err)) != BL_OK)
        return st;
    v = given_value(given, "reversal_range");
    if (v) {
        bl_json_kind k = kind_of(v);
        size_t len;
        if (k == BL_JSON_ARRAY) {
            len = bl_json_size(v);
        } else if (k == BL_JSON_STRING) {
            size_t bytes = 0;
            const char *s = bl_json_get_string(v, &bytes);
            len = cp_count(s, bytes);
        } else {
            return bl_fail(err, BL_ETYPE, "object of type '%s' has no len()", py_type(v));
        }
        if (len != 2)
            return bl_fail(err, BL_EVALUE, "reversal_range needs two endpoints");
        if (k == BL_JSON_STRING)
            return bl_fail(err, BL_EVALUE, "reversal_range must be an integer >= 2");
        for (size_t i = 0; i < 2; i++)
            if ((st = py_integer(bl_json_at(v, i), "reversal_range", 2, &o->reversal_range[i],
                                 err)) != BL_OK)
                return st;
    }
    if (!(o->reversal_range[0] <= o->reversal_range[1] &&
          o->reversal_range[1] <= o->rounds - 15))
        return bl_fail(err, BL_EVALUE, "reversal must leave sixteen scored rounds");
    return BL_OK;
}

static bl_status resolve_tracking(const bl_json *given, bl_task_options *o, bl_error *err)
{
    static const char *const reals[] = {"stim_speed_rad", "movement_amp", "eye_offset_deg",
                                        "theta0",         "phi0",         "direction0"};
    double *slots[] = {&o->stim_speed_rad, &o->movement_amp, &o->eye_offset_deg,
                       &o->theta0,         &o->phi0,         &o->direction0};
    bool *present[] = {NULL, NULL, NULL, &o->has_theta0, &o->has_phi0, &o->has_direction0};
    bl_status st;
    for (size_t i = 0; i < 6; i++) {
        const bl_json *v = given_value(given, reals[i]);
        if (!v)
            continue;
        if (kind_of(v) == BL_JSON_NULL) {
            /* None means "not given" for the three initial-state options;
             * the others have no None form in a world. */
            if (!present[i])
                return bl_fail(err, BL_ETYPE, "%s must be a real number", reals[i]);
            *present[i] = false;
            *slots[i] = 0.0;
            continue;
        }
        if ((st = py_float(v, slots[i], err)) != BL_OK)
            return st;
        if (present[i])
            *present[i] = true;
        if (!isfinite(*slots[i]))
            return bl_fail(err, BL_EVALUE, "%s must be finite", reals[i]);
    }
    if (!(o->movement_amp > 0.0))
        return bl_fail(err, BL_EVALUE, "movement_amp must be positive");
    const bl_json *v = given_value(given, "sensor_offsets_deg");
    if (v) {
        double *offsets = NULL;
        size_t n = 0;
        if ((st = py_float_seq(v, &offsets, &n, err)) != BL_OK)
            return st;
        bool ok = n > 0;
        for (size_t i = 0; i < n; i++)
            ok = ok && isfinite(offsets[i]);
        if (!ok) {
            bl_free(offsets);
            return bl_fail(err, BL_EVALUE, "sensor_offsets_deg needs finite offsets");
        }
        bl_free(o->sensor_offsets_deg);
        o->sensor_offsets_deg = offsets;
        o->n_sensor_offsets = n;
    }
    v = given_value(given, "randomize_start");
    if (v) {
        if (kind_of(v) != BL_JSON_BOOL)
            return bl_fail(err, BL_EVALUE, "randomize_start must be boolean");
        o->randomize_start = bl_json_get_bool(v);
    }
    return BL_OK;
}

static bl_status resolve_cartpole(const bl_json *given, bl_task_options *o, bl_error *err)
{
    const bl_json *v = given_value(given, "initial_ranges");
    if (!v)
        return BL_OK;
    static const char *const bad = "initial_ranges needs four finite ordered pairs";
    bl_json_kind k = kind_of(v);
    bl_status st;
    if (k == BL_JSON_STRING) {
        /* Each character is a one-element "pair": convert them as Python
         * would (a conversion error comes first), then reject the shape. */
        size_t len = 0;
        const char *s = bl_json_get_string(v, &len);
        for (size_t at = 0; at < len;) {
            size_t l = cp_len(s + at, len - at);
            double x;
            if ((st = py_float_text(s + at, l, &x, err)) != BL_OK)
                return st;
            at += l;
        }
        return bl_fail(err, BL_EVALUE, "%s", bad);
    }
    if (k != BL_JSON_ARRAY)
        return bl_fail(err, BL_ETYPE, "'%s' object is not iterable", py_type(v));
    size_t n = bl_json_size(v);
    bool ok = n == 4;
    double ranges[4][2] = {{0}};
    for (size_t i = 0; i < n; i++) {
        double *pair = NULL;
        size_t m = 0;
        if ((st = py_float_seq(bl_json_at(v, i), &pair, &m, err)) != BL_OK)
            return st;
        if (m != 2 || !isfinite(pair[0]) || !isfinite(pair[1]) || pair[0] > pair[1])
            ok = false;
        else if (i < 4)
            ranges[i][0] = pair[0], ranges[i][1] = pair[1];
        bl_free(pair);
    }
    if (!ok)
        return bl_fail(err, BL_EVALUE, "%s", bad);
    memcpy(o->initial_ranges, ranges, sizeof ranges);
    return BL_OK;
}

bl_status bl_task_options_resolve(bl_task_kind kind, const bl_json *given, bl_task_options *out,
                                  bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_status st = kind_check(kind, err);
    if (st != BL_OK)
        return st;
    if (given && bl_json_kindof(given) != BL_JSON_OBJECT)
        return bl_fail(err, BL_ETYPE, "task options must be a mapping, not '%s'",
                       py_type(given));
    if ((st = check_unknown(kind, given, err)) != BL_OK)
        return st;
    bl_task_options o;
    if ((st = bl_task_options_default(kind, &o, err)) != BL_OK)
        return st;

    /* The reference's order of checks, so the first failure is its own. */
    static const char *const ones[] = {"cue_ticks",   "response_ticks", "distractor_ticks",
                                       "pulse_ticks", "terminal_ticks", "feedback_ticks"};
    static const char *const zeros[] = {"gap", "delay", "distractors"};
    for (size_t i = 0; i < 6; i++) {
        const bl_json *v = given_value(given, ones[i]);
        if (v && family_has(kind, ones[i], strlen(ones[i])) &&
            (st = py_integer(v, ones[i], 1, int_field(&o, ones[i]), err)) != BL_OK)
            goto fail;
    }
    for (size_t i = 0; i < 3; i++) {
        const bl_json *v = given_value(given, zeros[i]);
        if (v && family_has(kind, zeros[i], strlen(zeros[i])) &&
            (st = py_integer(v, zeros[i], 0, int_field(&o, zeros[i]), err)) != BL_OK)
            goto fail;
    }
    const bl_json *v;
    int mode;
    if ((v = given_value(given, "cue_mode")) && family_has(kind, "cue_mode", 8)) {
        if ((st = py_mode(v, "cue_mode", cue_modes, 3, &mode, err)) != BL_OK)
            goto fail;
        o.cue_mode = (bl_cue_mode)mode;
    }
    if ((v = given_value(given, "context_mode")) && family_has(kind, "context_mode", 12)) {
        if ((st = py_mode(v, "context_mode", cue_modes, 3, &mode, err)) != BL_OK)
            goto fail;
        o.context_mode = (bl_cue_mode)mode;
    }
    if ((v = given_value(given, "input_mode")) && family_has(kind, "input_mode", 10)) {
        if ((st = py_mode(v, "input_mode", visibilities, 2, &mode, err)) != BL_OK)
            goto fail;
        o.input_mode = (bl_visibility)mode;
    }
    if ((v = given_value(given, "feedback_mode")) && family_has(kind, "feedback_mode", 13)) {
        if ((st = py_mode(v, "feedback_mode", visibilities, 2, &mode, err)) != BL_OK)
            goto fail;
        o.feedback_mode = (bl_visibility)mode;
    }
    if (kind == BL_TASK_DELAYED_CUE && (v = given_value(given, "delays")) &&
        (st = resolve_delays(v, &o, err)) != BL_OK)
        goto fail;
    if (kind == BL_TASK_RECALL_INTERFERENCE) {
        int64_t k = o.distractors, d = o.delay, w = o.distractor_ticks;
        if (k && (d < 32 || k * w + k + 1 > d)) {
            st = bl_fail(err, BL_EVALUE,
                         "distractors need delay >= 32 and blank frames between cues");
            goto fail;
        }
        if ((v = given_value(given, "distractor_mode"))) {
            if ((st = py_mode(v, "distractor_mode", distractor_modes, 4, &mode, err)) != BL_OK)
                goto fail;
            o.distractor_mode = (bl_distractor_mode)mode;
        }
    }
    if (kind == BL_TASK_EVIDENCE_ACCUMULATION || kind == BL_TASK_CONTEXT_INTEGRATION) {
        if ((v = given_value(given, "pulse_count")) &&
            (st = py_integer(v, "pulse_count", 4, &o.pulse_count, err)) != BL_OK)
            goto fail;
        if ((v = given_value(given, "evidence_fraction")) &&
            (st = py_float(v, &o.evidence_fraction, err)) != BL_OK)
            goto fail;
        double f = o.evidence_fraction;
        if (!(isfinite(f) && f > 0.0 && f < 1.0)) {
            st = bl_fail(err, BL_EVALUE, "evidence_fraction must lie in (0, 1)");
            goto fail;
        }
        double n = (double)o.pulse_count;
        double left = n * (1.0 + f) / 2.0;
        if (!(floor(left) == left && 1.0 <= n - left && n - left <= n - 1.0)) {
            st = bl_fail(err, BL_EVALUE,
                         "evidence counts must be integral and permit either final pulse");
            goto fail;
        }
    }
    if (kind == BL_TASK_CONTEXT_INTEGRATION && (v = given_value(given, "congruency"))) {
        if ((st = py_mode(v, "congruency", congruencies, 3, &mode, err)) != BL_OK)
            goto fail;
        o.congruency = (bl_congruency)mode;
    }
    if (kind == BL_TASK_REVERSAL_ADAPTATION && (st = resolve_reversal(given, &o, err)) != BL_OK)
        goto fail;
    if ((kind == BL_TASK_TRACKING || kind == BL_TASK_PONG) &&
        (v = given_value(given, "sensory_gain"))) {
        if ((st = py_float(v, &o.sensory_gain, err)) != BL_OK)
            goto fail;
        if (!(isfinite(o.sensory_gain) && o.sensory_gain >= 0.0)) {
            st = bl_fail(err, BL_EVALUE, "sensory_gain must be finite and nonnegative");
            goto fail;
        }
    }
    if (kind == BL_TASK_TRACKING && (st = resolve_tracking(given, &o, err)) != BL_OK)
        goto fail;
    if (kind == BL_TASK_CARTPOLE_PLANK_EASY && (st = resolve_cartpole(given, &o, err)) != BL_OK)
        goto fail;
    if (default_horizon(&o) < 0) {
        st = bl_fail(err, BL_EVALUE, "%s episode must fit in 2147483647 ticks", kind_names[kind]);
        goto fail;
    }
    *out = o;
    return BL_OK;
fail:
    bl_task_options_clear(&o);
    return st;
}

/* ---- JSON form ------------------------------------------------------------ */

static const char *const cue_mode_names[] = {"transient", "persistent", "hidden"};

static bl_json *int_array(const int64_t *v, size_t n)
{
    bl_json *a = bl_json_array();
    for (size_t i = 0; a && i < n; i++)
        if (bl_json_array_append(a, bl_json_int(v[i]), NULL) != BL_OK) {
            bl_json_free(a);
            return NULL;
        }
    return a;
}

static bl_json *real_array(const double *v, size_t n)
{
    bl_json *a = bl_json_array();
    for (size_t i = 0; a && i < n; i++)
        if (bl_json_array_append(a, bl_json_real(v[i]), NULL) != BL_OK) {
            bl_json_free(a);
            return NULL;
        }
    return a;
}

static bl_json *opt_real(bool has, double v)
{
    return has ? bl_json_real(v) : bl_json_null();
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
#define SET(key, value)                                                        \
    do {                                                                       \
        if ((st = bl_json_object_set(obj, key, value, err)) != BL_OK)        \
            goto fail;                                                         \
    } while (0)
    switch (o->kind) {
    case BL_TASK_TRACKING:
        SET("stim_speed_rad", bl_json_real(o->stim_speed_rad));
        SET("movement_amp", bl_json_real(o->movement_amp));
        SET("eye_offset_deg", bl_json_real(o->eye_offset_deg));
        SET("sensor_offsets_deg", real_array(o->sensor_offsets_deg, o->n_sensor_offsets));
        SET("sensory_gain", bl_json_real(o->sensory_gain));
        SET("randomize_start", bl_json_bool(o->randomize_start));
        SET("theta0", opt_real(o->has_theta0, o->theta0));
        SET("phi0", opt_real(o->has_phi0, o->phi0));
        SET("direction0", opt_real(o->has_direction0, o->direction0));
        break;
    case BL_TASK_PONG:
        SET("sensory_gain", bl_json_real(o->sensory_gain));
        break;
    case BL_TASK_CARTPOLE_PLANK_EASY: {
        bl_json *ranges = bl_json_array();
        if (!ranges) {
            st = bl_fail(err, BL_ENOMEM, "out of memory for task options");
            goto fail;
        }
        for (int i = 0; i < 4; i++)
            if ((st = bl_json_array_append(ranges, real_array(o->initial_ranges[i], 2), err)) !=
                BL_OK) {
                bl_json_free(ranges);
                goto fail;
            }
        SET("initial_ranges", ranges);
        break;
    }
    case BL_TASK_DELAYED_CUE:
        SET("cue_ticks", bl_json_int(o->cue_ticks));
        SET("delays", int_array(o->delays, o->n_delays));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("cue_mode", bl_json_string(cue_mode_names[o->cue_mode]));
        break;
    case BL_TASK_RECALL_INTERFERENCE:
        SET("cue_ticks", bl_json_int(o->cue_ticks));
        SET("delay", bl_json_int(o->delay));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("distractors", bl_json_int(o->distractors));
        SET("distractor_ticks", bl_json_int(o->distractor_ticks));
        SET("cue_mode", bl_json_string(cue_mode_names[o->cue_mode]));
        SET("distractor_mode", bl_json_string(distractor_modes[o->distractor_mode]));
        break;
    case BL_TASK_DELAYED_XOR:
        SET("cue_ticks", bl_json_int(o->cue_ticks));
        SET("gap", bl_json_int(o->gap));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("cue_mode", bl_json_string(cue_mode_names[o->cue_mode]));
        break;
    case BL_TASK_EVIDENCE_ACCUMULATION:
        SET("pulse_count", bl_json_int(o->pulse_count));
        SET("evidence_fraction", bl_json_real(o->evidence_fraction));
        SET("pulse_ticks", bl_json_int(o->pulse_ticks));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("input_mode", bl_json_string(visibilities[o->input_mode]));
        break;
    case BL_TASK_CONTEXT_INTEGRATION:
        SET("cue_ticks", bl_json_int(o->cue_ticks));
        SET("pulse_count", bl_json_int(o->pulse_count));
        SET("evidence_fraction", bl_json_real(o->evidence_fraction));
        SET("pulse_ticks", bl_json_int(o->pulse_ticks));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("context_mode", bl_json_string(cue_mode_names[o->context_mode]));
        SET("congruency", bl_json_string(congruencies[o->congruency]));
        break;
    case BL_TASK_TEMPORAL_ORDER:
        SET("cue_ticks", bl_json_int(o->cue_ticks));
        SET("gap", bl_json_int(o->gap));
        SET("terminal_ticks", bl_json_int(o->terminal_ticks));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("input_mode", bl_json_string(visibilities[o->input_mode]));
        break;
    case BL_TASK_REVERSAL_ADAPTATION:
        SET("rounds", bl_json_int(o->rounds));
        SET("cue_ticks", bl_json_int(o->cue_ticks));
        SET("response_ticks", bl_json_int(o->response_ticks));
        SET("feedback_ticks", bl_json_int(o->feedback_ticks));
        SET("reversal_range", int_array(o->reversal_range, 2));
        SET("feedback_mode", bl_json_string(visibilities[o->feedback_mode]));
        break;
    case BL_TASK_COUNT:
        break;
    }
#undef SET
    *out = obj;
    return BL_OK;
fail:
    bl_json_free(obj);
    return st;
}

/* ---- the 64 capacity presets (§5.11) -------------------------------------- */

typedef struct preset_list {
    bl_task_preset *items;
    size_t n;
} preset_list;

/* Appends "<task>__<suffix>" with the family's defaults changed by `edit`. */
static bl_status add_preset(preset_list *list, bl_task_kind kind, const char *suffix,
                            const bl_task_options *options, bl_error *err)
{
    bl_task_preset *p = &list->items[list->n];
    memset(p, 0, sizeof *p);
    bl_status st = bl_task_options_copy(options, &p->options, err);
    if (st != BL_OK)
        return st;
    snprintf(p->id, sizeof p->id, "%s__%s", kind_names[kind], suffix);
    bl_task_definition d;
    bl_task_define(&p->options, &d);
    p->horizon = d.default_horizon;
    list->n++;
    return BL_OK;
}

#define BL_PRESET_COUNT 64

bl_status bl_capacity_presets(bl_task_preset **out, size_t *count, bl_error *err)
{
    *out = NULL;
    *count = 0;
    preset_list list = {bl_calloc(BL_PRESET_COUNT, sizeof(bl_task_preset)), 0};
    if (!list.items)
        return bl_fail(err, BL_ENOMEM, "out of memory for the capacity presets");
    bl_task_options o = {0};
    bl_status st = BL_OK;
    char suffix[64];

    static const int64_t delays[] = {0, 8, 32, 128, 256};
    for (size_t i = 0; i < 5; i++) {
        if ((st = bl_task_options_default(BL_TASK_DELAYED_CUE, &o, err)) != BL_OK)
            goto fail;
        o.n_delays = 1;
        o.delays[0] = delays[i];
        snprintf(suffix, sizeof suffix, "delay_%" PRId64, delays[i]);
        st = add_preset(&list, BL_TASK_DELAYED_CUE, suffix, &o, err);
        bl_task_options_clear(&o);
        if (st != BL_OK)
            goto fail;
        if (delays[i] < 32)
            continue;
        static const int64_t distractors[] = {1, 3};
        for (size_t k = 0; k < 2; k++) {
            if ((st = bl_task_options_default(BL_TASK_RECALL_INTERFERENCE, &o, err)) != BL_OK)
                goto fail;
            o.delay = delays[i];
            o.distractors = distractors[k];
            snprintf(suffix, sizeof suffix, "delay_%" PRId64 "_distractors_%" PRId64, delays[i],
                     distractors[k]);
            st = add_preset(&list, BL_TASK_RECALL_INTERFERENCE, suffix, &o, err);
            bl_task_options_clear(&o);
            if (st != BL_OK)
                goto fail;
        }
    }
    static const int64_t xor_gaps[] = {0, 8, 32, 128};
    for (size_t i = 0; i < 4; i++) {
        if ((st = bl_task_options_default(BL_TASK_DELAYED_XOR, &o, err)) != BL_OK)
            goto fail;
        o.gap = xor_gaps[i];
        snprintf(suffix, sizeof suffix, "gap_%" PRId64, xor_gaps[i]);
        st = add_preset(&list, BL_TASK_DELAYED_XOR, suffix, &o, err);
        bl_task_options_clear(&o);
        if (st != BL_OK)
            goto fail;
    }
    static const int64_t counts[] = {16, 32, 64};
    static const double fractions[] = {0.125, 0.25, 0.5};
    static const bl_congruency congruency[] = {BL_CONGRUENCY_CONGRUENT,
                                               BL_CONGRUENCY_CONFLICTING};
    static const bl_cue_mode modes[] = {BL_CUE_TRANSIENT, BL_CUE_PERSISTENT};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            char base[48];
            snprintf(base, sizeof base, "pulses_%" PRId64 "_evidence_%d", counts[i],
                     (int)(1000.0 * fractions[j]));
            if ((st = bl_task_options_default(BL_TASK_EVIDENCE_ACCUMULATION, &o, err)) != BL_OK)
                goto fail;
            o.pulse_count = counts[i];
            o.evidence_fraction = fractions[j];
            st = add_preset(&list, BL_TASK_EVIDENCE_ACCUMULATION, base, &o, err);
            bl_task_options_clear(&o);
            if (st != BL_OK)
                goto fail;
            for (size_t c = 0; c < 2; c++)
                for (size_t m = 0; m < 2; m++) {
                    if ((st = bl_task_options_default(BL_TASK_CONTEXT_INTEGRATION, &o, err)) !=
                        BL_OK)
                        goto fail;
                    o.pulse_count = counts[i];
                    o.evidence_fraction = fractions[j];
                    o.congruency = congruency[c];
                    o.context_mode = modes[m];
                    snprintf(suffix, sizeof suffix, "%s_%s_%s", base, congruencies[congruency[c]],
                             cue_mode_names[modes[m]]);
                    st = add_preset(&list, BL_TASK_CONTEXT_INTEGRATION, suffix, &o, err);
                    bl_task_options_clear(&o);
                    if (st != BL_OK)
                        goto fail;
                }
        }
    static const int64_t order_gaps[] = {0, 8, 32};
    for (size_t i = 0; i < 3; i++) {
        if ((st = bl_task_options_default(BL_TASK_TEMPORAL_ORDER, &o, err)) != BL_OK)
            goto fail;
        o.gap = order_gaps[i];
        snprintf(suffix, sizeof suffix, "gap_%" PRId64, order_gaps[i]);
        st = add_preset(&list, BL_TASK_TEMPORAL_ORDER, suffix, &o, err);
        bl_task_options_clear(&o);
        if (st != BL_OK)
            goto fail;
    }
    if ((st = bl_task_options_default(BL_TASK_REVERSAL_ADAPTATION, &o, err)) != BL_OK)
        goto fail;
    st = add_preset(&list, BL_TASK_REVERSAL_ADAPTATION, "single_reversal", &o, err);
    bl_task_options_clear(&o);
    if (st != BL_OK)
        goto fail;
    BL_ASSERT(list.n == BL_PRESET_COUNT);
    *out = list.items;
    *count = list.n;
    return BL_OK;
fail:
    bl_capacity_presets_free(list.items, list.n);
    return st;
}

void bl_capacity_presets_free(bl_task_preset *presets, size_t count)
{
    if (!presets)
        return;
    for (size_t i = 0; i < count; i++)
        bl_task_options_clear(&presets[i].options);
    bl_free(presets);
}
