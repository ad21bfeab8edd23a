/* Shared between the plan files (plan.c, resolve.c, ids.c); not public.
 *
 * A plan is kept only as its plain() JSON: every field, defaults included,
 * in the reference's field order. The validation in bl_plan_from_document
 * guarantees the kinds that resolution and the id helpers then read without
 * further checks (strings are strings, counts are positive INTs, ...). */
#ifndef BL_PLAN_INTERNAL_H
#define BL_PLAN_INTERNAL_H

#include "brainlesslab/plan.h"

struct bl_plan {
    bl_json *plain;
    char *source; /* the file it was read from, for messages; NULL if built */
};

/* A target's typed spec with the arrays it points to. */
typedef struct resolved_target {
    bl_target_spec spec;
    double *input_link_p;            /* spec.falandays.input_link_p, or NULL */
    bl_intervention *interventions;  /* spec.interventions, or NULL */
} resolved_target;

/* Resolution fills both forms once; nothing reads the JSON back into the
 * typed one. */
struct bl_resolved_plan {
    bl_json *plain;     /* {"request", "targets", "contract_hash"} */
    char hash[65];
    bl_evaluation_spec evaluation;
    size_t ntargets;
    resolved_target *targets;
};

/* Python's repr() of a configuration value (str, int, float, bool, tuple)
 * appended to `b`; objects are written as dicts (plan.c, for messages and,
 * through ids.c, sweep labels). */
bool bl_plan_repr(bl_buf *b, const bl_json *v);

/* A key as TOML spells it (bare where it can be, else a quoted basic
 * string), appended to `out` (toml_write.c). */
bl_status bl_toml_put_key(bl_buf *out, const char *k, size_t len, bl_error *err);

/* Puts `where` (printf-formatted: the TOML path of the offending table or
 * value, or the plan's file) in front of a failed status's message and
 * returns the status. BL_OK and memory errors pass untouched: running out of
 * memory is not a fault of the plan. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
bl_status bl_plan_at(bl_status st, bl_error *err, const char *fmt, ...);


#endif
