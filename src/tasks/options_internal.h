/* Shared between the task-option files (options.c, options_<family>.c,
 * presets.c); not public.
 *
 * Each family file describes one family in a bl_task_family: a table of
 * its options (names, defaults, JSON form), the checks of its own options,
 * its default horizon and what it declares. options.c holds what the families share:
 * the table of families, Python's float(), _integer and _mode with the
 * reference's messages, the checks every family's common options take (in
 * the reference's order), and the drivers behind the public functions. */
#ifndef BL_TASKS_OPTIONS_INTERNAL_H
#define BL_TASKS_OPTIONS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/task.h"

/* How one option is stored in bl_task_options and written in its JSON form. */
typedef enum bl_opt_type {
    BL_OPT_INT,    /* int64_t */
    BL_OPT_REAL,   /* double */
    BL_OPT_BOOL,   /* bool */
    BL_OPT_MODE,   /* an enum, written as its name in `modes` */
    BL_OPT_CUSTOM, /* what the field's own `json` function writes */
} bl_opt_type;

/* One option of a family: its name, where it lives, its default and how its
 * JSON form is written. The checks of a value stay in code (options.c for
 * the checks families share, the family's resolve for its own), since their
 * order is the reference's, not the table's. */
typedef struct bl_opt_field {
    const char *key;
    bl_opt_type type;
    size_t offset;                     /* in bl_task_options */
    double fallback;                   /* the default of INT, REAL, BOOL and MODE fields */
    const char *const *modes;          /* MODE: the names, in the enum's order */
    size_t nmodes;
    bl_json *(*json)(const bl_task_options *o); /* CUSTOM: the value, NULL when out of memory */
} bl_opt_field;

/* Field descriptors named after their bl_task_options member, which is also
 * the option's name. */
#define BL_OPT_FIELD_(member, type_, fallback_)                                                 \
    .key = #member, .type = type_, .offset = offsetof(bl_task_options, member),              \
    .fallback = fallback_
#define BL_OPT_INT_FIELD(member, fallback_) {BL_OPT_FIELD_(member, BL_OPT_INT, fallback_)}
#define BL_OPT_REAL_FIELD(member, fallback_) {BL_OPT_FIELD_(member, BL_OPT_REAL, fallback_)}
#define BL_OPT_BOOL_FIELD(member, fallback_) {BL_OPT_FIELD_(member, BL_OPT_BOOL, fallback_)}
/* A mode's default is its first name: every family's is. */
#define BL_OPT_MODE_FIELD(member, names)                                                        \
    {BL_OPT_FIELD_(member, BL_OPT_MODE, 0), .modes = names, .nmodes = sizeof names / sizeof *names}
#define BL_OPT_CUSTOM_FIELD(member, json_fn)                                                    \
    {BL_OPT_FIELD_(member, BL_OPT_CUSTOM, 0), .json = json_fn}

typedef struct bl_task_family {
    const char *name;             /* the reference's name ("tracking", ...) */
    const bl_opt_field *fields;   /* its options, in the reference's declaration order */
    size_t nfields;
    /* Sets the defaults the fields cannot hold (arrays); NULL when none. */
    bl_status (*defaults)(bl_task_options *o, bl_error *err);
    /* The family's own checks of `given` (a mapping or NULL), after the
     * checks of the options families share; NULL when there are none. */
    bl_status (*resolve)(const bl_json *given, bl_task_options *o, bl_error *err);
    /* The default horizon; NULL when it is the fixed `declares` one.
     * options.c turns one past int32 into -1. */
    int64_t (*horizon)(const bl_task_options *o);
    /* What the family declares beyond options.c's common definition: the
     * fields left zero (NULL) keep the common value. */
    bl_task_definition declares;
    /* What of the definition depends on the options; NULL when nothing. */
    void (*define)(const bl_task_options *o, bl_task_definition *d);
} bl_task_family;

/* A family file's descriptor, from its static `fields`; the functions may
 * be NULL as above, and the rest is what it declares (designated
 * initializers of bl_task_definition). */
#define BL_TASK_FAMILY(var, family_name, defaults_fn, resolve_fn, horizon_fn, define_fn, ...)  \
    const bl_task_family var = {                                                            \
        .name = family_name,                                                                \
        .fields = fields,                                                                   \
        .nfields = sizeof fields / sizeof *fields,                                          \
        .defaults = defaults_fn,                                                            \
        .resolve = resolve_fn,                                                              \
        .horizon = horizon_fn,                                                              \
        .declares = {__VA_ARGS__},                                                          \
        .define = define_fn,                                                                \
    }

extern const bl_task_family bl_family_tracking, bl_family_pong, bl_family_cartpole,
    bl_family_delayed_cue, bl_family_recall_interference, bl_family_delayed_xor,
    bl_family_evidence_accumulation, bl_family_context_integration, bl_family_temporal_order,
    bl_family_reversal_adaptation;

/* The names of the modes, in their enums' order. */
extern const char *const bl_opt_cue_modes[3];
extern const char *const bl_opt_visibilities[2];
extern const char *const bl_opt_distractor_modes[4];
extern const char *const bl_opt_congruencies[3];

/* Python's type name of a configuration value, for TypeError texts (task
 * options hold arrays as tuples). */
static inline const char *bl_py_type(const bl_json *v)
{
    return bl_json_python_type(v, "tuple");
}

/* The kind of v, BL_JSON_NULL for an absent value. */
bl_json_kind bl_opt_kind(const bl_json *v);
/* given[key], NULL when absent (or no options were given). */
const bl_json *bl_opt_given(const bl_json *given, const char *key);

/* Python's float(str), float(value) and tuple(float(x) for x in value),
 * with Python's messages (*out of the last owned by the caller). */
bl_status bl_py_float_text(const char *s, size_t len, double *out, bl_error *err);
bl_status bl_py_float(const bl_json *v, double *out, bl_error *err);
bl_status bl_py_float_seq(const bl_json *v, double **out, size_t *count, bl_error *err);
/* Byte length of the UTF-8 code point starting at s[0] (at least 1), and
 * the number of code points of s (as Python counts a str). */
size_t bl_opt_cp_len(const char *s, size_t left);
size_t bl_opt_cp_count(const char *s, size_t len);
/* _integer(value, name, minimum): a non-bool integer >= minimum. */
bl_status bl_py_integer(const bl_json *v, const char *name, int64_t minimum, int64_t *out,
                        bl_error *err);
/* _mode(value, name, allowed): the value must be one of the strings. */
bl_status bl_py_mode(const bl_json *v, const char *name, const char *const *allowed, size_t n,
                     int *out, bl_error *err);

/* Checks two families share: sensory_gain (Tracking, Pong) and the pulses
 * of evidence (Evidence Accumulation, Context Integration). */
bl_status bl_opt_sensory_gain(const bl_json *given, bl_task_options *o, bl_error *err);
bl_status bl_opt_pulses(const bl_json *given, bl_task_options *o, bl_error *err);

/* A JSON array of the n ints, or of the n reals when `ints` is NULL; NULL
 * when out of memory. */
bl_json *bl_opt_numbers(const int64_t *ints, const double *reals, size_t n);

/* Checks given[key], when given and one of the options of o->kind, into
 * *o: a mode by its names (_mode), a count by _integer with `minimum`. */
bl_status bl_opt_check(const bl_json *given, const char *key, int64_t minimum, bl_task_options *o,
                       bl_error *err);

#endif
