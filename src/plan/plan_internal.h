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
};

struct bl_resolved_plan {
    bl_json *plain;     /* {"request", "targets", "contract_hash"} */
    char hash[65];
};

/* Python's repr() of a configuration value (str, int, float, bool, tuple)
 * appended to `b`; objects are written as dicts. */
bool bl_plan_repr(bl_buf *b, const bl_json *v);


#endif
