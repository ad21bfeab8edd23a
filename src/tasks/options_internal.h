/* Shared between the task-option files (options.c, options_<family>.c,
 * presets.c); not public.
 *
 * Each family file describes one family in a bl_task_family: its option
 * names, defaults, the checks of its own options, its default horizon, what
 * it declares and its JSON form. options.c holds what the families share:
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

typedef struct bl_task_family {
    const char *name;          /* the reference's name ("tracking", ...) */
    const char *const *keys;   /* option names, the reference's declaration order */
    size_t nkeys;
    /* Sets the family's defaults in *o (kind set, everything else zero). */
    bl_status (*defaults)(bl_task_options *o, bl_error *err);
    /* The family's own checks of `given` (a mapping or NULL), after the
     * checks of the options families share; NULL when there are none. */
    bl_status (*resolve)(const bl_json *given, bl_task_options *o, bl_error *err);
    /* The default horizon; options.c turns one past int32 into -1. */
    int64_t (*horizon)(const bl_task_options *o);
    /* Fills in what differs from options.c's common definition. */
    void (*define)(const bl_task_options *o, bl_task_definition *d);
    /* Sets every option of the family in `obj`, in the reference's order. */
    bl_status (*json)(const bl_task_options *o, bl_json *obj, bl_error *err);
} bl_task_family;

/* A family file's descriptor, from its static `keys`, `defaults`, `horizon`,
 * `define` and `to_json` and the given `resolve` (NULL when the family has
 * no checks of its own). */
#define BL_TASK_FAMILY(var, family_name, resolve_fn)                                        \
    const bl_task_family var = {                                                            \
        .name = family_name,                                                                \
        .keys = keys,                                                                       \
        .nkeys = sizeof keys / sizeof *keys,                                                \
        .defaults = defaults,                                                               \
        .resolve = resolve_fn,                                                              \
        .horizon = horizon,                                                                 \
        .define = define,                                                                   \
        .json = to_json,                                                                    \
    }

extern const bl_task_family bl_family_tracking, bl_family_pong, bl_family_cartpole,
    bl_family_delayed_cue, bl_family_recall_interference, bl_family_delayed_xor,
    bl_family_evidence_accumulation, bl_family_context_integration, bl_family_temporal_order,
    bl_family_reversal_adaptation;

/* Sets `key` of `obj` in a family's json function (which has `err`), or
 * returns the failure. */
#define BL_OPT_SET(key, value)                                                 \
    do {                                                                       \
        bl_status set_st_ = bl_json_object_set(obj, key, value, err);          \
        if (set_st_ != BL_OK)                                                  \
            return set_st_;                                                    \
    } while (0)

/* The names of the modes, in their enums' order. */
extern const char *const bl_opt_cue_modes[3];
extern const char *const bl_opt_visibilities[2];
extern const char *const bl_opt_distractor_modes[4];
extern const char *const bl_opt_congruencies[3];

/* Python's type name of a configuration value, for TypeError texts. */
const char *bl_py_type(const bl_json *v);
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

/* JSON arrays of ints and of reals; NULL when out of memory. */
bl_json *bl_opt_ints(const int64_t *v, size_t n);
bl_json *bl_opt_reals(const double *v, size_t n);

#endif
