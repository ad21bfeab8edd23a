/* Model batches, the family-independent part: accessors, the argument
 * contract of step/reset/freeze (spec/models.md §1), dispatch to the
 * family's operations, and snapshot containers. Every check runs before the
 * family is called, so a rejected call executes nothing. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "models/model_internal.h"

size_t bl_dtype_size(bl_dtype dtype) { return dtype == BL_FLOAT32 ? sizeof(float) : sizeof(double); }

const char *bl_dtype_name(bl_dtype dtype) { return dtype == BL_FLOAT32 ? "float32" : "float64"; }

double bl_dtype_cast(bl_dtype dtype, double x)
{
    return dtype == BL_FLOAT32 ? (double)(float)x : x;
}

void bl_model_destroy(bl_model *m)
{
    if (m)
        m->ops->destroy(m);
}

bl_model_kind bl_model_kindof(const bl_model *m) { return m->kind; }
bl_dtype bl_model_dtype(const bl_model *m) { return m->dtype; }
size_t bl_model_slots(const bl_model *m) { return m->slots; }
size_t bl_model_nodes(const bl_model *m) { return m->nodes; }
size_t bl_model_receptors(const bl_model *m) { return m->receptors; }
size_t bl_model_effectors(const bl_model *m) { return m->effectors; }
const void *bl_model_effector_data(const bl_model *m) { return m->effector_view; }
const void *bl_model_activity_data(const bl_model *m) { return m->activity_view; }
const int32_t *bl_model_finite(const bl_model *m) { return m->finite_view; }

static bl_status check_active(const bl_model *m, const int32_t *active, size_t nactive,
                              bl_error *err)
{
    if (!active)
        return bl_fail(err, BL_EVALUE, "active must be an int32 array of length %zu", m->slots);
    if (nactive != m->slots)
        return bl_fail(err, BL_EVALUE, "active must have length %zu (the batch size), got %zu",
                       m->slots, nactive);
    return BL_OK;
}

/* The dtype is checked before the shape, so a float32 buffer handed to a
 * float64 batch is reported as what it is. */
static bl_status check_matrix(const bl_model *m, const bl_matrix *x, const char *what,
                              size_t cols, const char *colname, bl_error *err)
{
    if (!x || !x->data)
        return bl_fail(err, BL_EVALUE, "%s must be a [%zu][%zu] %s array", what, m->slots, cols,
                       bl_dtype_name(m->dtype));
    if (x->dtype != m->dtype)
        return bl_fail(err, BL_EVALUE, "%s must match the model dtype %s, got %s", what,
                       bl_dtype_name(m->dtype),
                       x->dtype == BL_FLOAT32 ? "float32"
                       : x->dtype == BL_FLOAT64 ? "float64"
                                                : "an unknown dtype");
    if (x->rows != m->slots || x->cols != cols)
        return bl_fail(err, BL_EVALUE, "%s must have shape [%zu][%zu] ([B][%s]), got [%zu][%zu]",
                       what, m->slots, cols, colname, x->rows, x->cols);
    return BL_OK;
}

bl_status bl_model_step(bl_model *m, const bl_matrix *inputs, const bl_matrix *noise,
                        const int32_t *active, size_t nactive, bl_error *err)
{
    bl_status st = check_matrix(m, inputs, "inputs", m->receptors, "R", err);
    if (st == BL_OK)
        st = check_matrix(m, noise, "noise", m->nodes, "N", err);
    if (st == BL_OK)
        st = check_active(m, active, nactive, err);
    if (st != BL_OK)
        return st;
    m->ops->step(m, inputs->data, noise->data, active);
    return BL_OK;
}

bl_status bl_model_reset(bl_model *m, const int32_t *active, size_t nactive, bl_error *err)
{
    bl_status st = check_active(m, active, nactive, err);
    if (st == BL_OK)
        m->ops->reset(m, active);
    return st;
}

/* all == false: weight plasticity only; all == true: every plasticity. */
static bl_status freeze(bl_model *m, const int32_t *active, size_t nactive, bool all,
                        bl_error *err)
{
    bl_status st = check_active(m, active, nactive, err);
    if (st == BL_OK)
        m->ops->freeze(m, active, all);
    return st;
}

bl_status bl_model_freeze_weights(bl_model *m, const int32_t *active, size_t nactive,
                                  bl_error *err)
{
    return freeze(m, active, nactive, false, err);
}

bl_status bl_model_freeze_plasticity(bl_model *m, const int32_t *active, size_t nactive,
                                     bl_error *err)
{
    return freeze(m, active, nactive, true, err);
}

/* ---- snapshots ------------------------------------------------------------ */

bl_status bl_model_snapshot(const bl_model *m, size_t slot, bl_snapshot **out, bl_error *err)
{
    *out = NULL;
    if (slot >= m->slots)
        return bl_fail(err, BL_EVALUE, "snapshot slot %zu is out of range for a batch of %zu",
                       slot, m->slots);
    return m->ops->snapshot(m, slot, out, err);
}

bl_status bl_snapshot_create(size_t count, bl_snapshot **out, bl_error *err)
{
    *out = NULL;
    bl_snapshot *s = bl_calloc(1, sizeof *s);
    if (!s)
        goto fail;
    s->arrays = bl_calloc(count, sizeof *s->arrays);
    if (!s->arrays)
        goto fail;
    s->count = count;
    *out = s;
    return BL_OK;
fail:
    bl_free(s);
    return bl_fail(err, BL_ENOMEM, "out of memory for a model snapshot");
}

bl_status bl_snapshot_entry(bl_snapshot *s, size_t k, const char *name, int ndim, size_t d0,
                            size_t d1, bool integer, double **data, bl_error *err)
{
    BL_ASSERT(k < s->count && ndim >= 0 && ndim <= 2);
    bl_snapshot_array *a = &s->arrays[k];
    size_t count = 1;
    if (ndim >= 1)
        count = d0;
    if (ndim == 2 && !bl_size_mul(d0, d1, &count))
        return bl_fail(err, BL_ENOMEM, "snapshot array %s is too large", name);
    a->name = name;
    a->ndim = ndim;
    /* Unused dimensions are 1 so that shape[0] * shape[1] is always the
     * number of values. */
    a->shape[0] = ndim >= 1 ? d0 : 1;
    a->shape[1] = ndim == 2 ? d1 : 1;
    a->integer = integer;
    a->data = bl_calloc(count, sizeof *a->data);
    if (!a->data)
        return bl_fail(err, BL_ENOMEM, "out of memory for snapshot array %s", name);
    *data = a->data;
    return BL_OK;
}

const bl_snapshot_array *bl_snapshot_get(const bl_snapshot *s, const char *name)
{
    for (size_t k = 0; k < s->count; k++)
        if (s->arrays[k].name && strcmp(s->arrays[k].name, name) == 0)
            return &s->arrays[k];
    return NULL;
}

void bl_snapshot_destroy(bl_snapshot *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->count; k++)
        bl_free(s->arrays[k].data);
    bl_free(s->arrays);
    bl_free(s);
}

bl_status bl_model_check_ports(size_t n, size_t r, size_t e, bl_error *err)
{
    const struct {
        const char *name;
        size_t value;
    } ports[] = {{"N", n}, {"R", r}, {"E", e}};
    for (size_t k = 0; k < sizeof ports / sizeof *ports; k++)
        if (ports[k].value < 1)
            return bl_fail(err, BL_EVALUE, "%s must be an integer >= 1", ports[k].name);
    return BL_OK;
}

bool bl_init_arrays_create(const bl_init_array *arrays, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        const bl_init_array *a = &arrays[k];
        if (a->count > 0 && a->reals && !(*a->reals = bl_calloc(a->count, sizeof(double))))
            return false;
        if (a->count > 0 && a->ints && !(*a->ints = bl_calloc(a->count, sizeof(int32_t))))
            return false;
    }
    return true;
}

void bl_init_arrays_destroy(const bl_init_array *arrays, size_t count)
{
    for (size_t k = 0; k < count; k++)
        bl_free(arrays[k].reals ? (void *)*arrays[k].reals : (void *)*arrays[k].ints);
}

bool bl_doubles_fit(size_t n, size_t m)
{
    return m == 0 || n <= SIZE_MAX / m / sizeof(double);
}

bl_status bl_check_cast(const bl_named_values *v, size_t n, const char *prefix, size_t slot,
                        bl_dtype dtype, bl_error *err)
{
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < v[k].count; i++)
            if (!isfinite(bl_dtype_cast(dtype, v[k].p[i])))
                return bl_fail(err, BL_EVALUE,
                               "initials[%zu]: %s%s is not finite after casting to %s", slot,
                               prefix, v[k].name, bl_dtype_name(dtype));
    return BL_OK;
}
