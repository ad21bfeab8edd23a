/* Direct controllers (spec/tasks.md §6) and the fused control path (§1.4).
 *
 * Policies are named and validated here; a bundle (bl_controllers) holds
 * the per-world memory of §6.4 for one cohort. bl_controllers_act is one
 * frame for every world, to be called between the cohort's encode and
 * accumulate; bl_worlds_run_control runs whole tiles world by world with the
 * runner's guard logic. Both call the same per-world controller of
 * controllers_kernel.h, so the fused path is the unfused loop reordered,
 * never a second implementation. */
#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/task.h"
#include "tasks/controllers_internal.h"
#include "tasks/worlds_instances.h"

/* pi to more digits than a double holds; each instantiation rounds it once
 * to its own type, as a float32 kernel does with a Python constant. */
#define BL_CTL_PI 3.14159265358979323846264338327950288

/* The context stream a policy attends to (§6.4): context_blind always the
 * first, irrelevant the one the context did not select. */
static int32_t ctl_stream(bl_policy policy, int32_t context)
{
    if (policy == BL_POLICY_CONTEXT_BLIND)
        return 1;
    if (policy == BL_POLICY_IRRELEVANT)
        return 3 - context;
    return context;
}

#define CTL_REAL double
#define CTL_SFX f64
#define CTL_SIN sin
#include "tasks/controllers_kernel.h"

#define CTL_REAL float
#define CTL_SFX f32
#define CTL_SIN sinf
#include "tasks/controllers_kernel.h"

/* ---- names and validation (§6.1) --------------------------------------- */

static const char *const bl_policy_names[BL_POLICY_COUNT] = {
    "oracle", "reference_null", "constant_left", "constant_right",
    "memoryless", "last", "first", "context_blind",
    "irrelevant", "bag", "fixed_mapping",
};

const char *bl_policy_name(bl_policy p)
{
    return (unsigned)p < BL_POLICY_COUNT ? bl_policy_names[p] : "unknown";
}

/* The name lookup without messages; the alias maps to the null. */
static bool policy_lookup(const char *name, bl_policy *out)
{
    if (!name)
        return false;
    if (strcmp(name, "reference_nullblindpolicy") == 0) {
        *out = BL_POLICY_REFERENCE_NULL;
        return true;
    }
    for (int p = 0; p < BL_POLICY_COUNT; p++) {
        if (strcmp(name, bl_policy_names[p]) == 0) {
            *out = (bl_policy)p;
            return true;
        }
    }
    return false;
}

bl_status bl_policy_from_name(const char *name, bl_policy *out, bl_error *err)
{
    if (policy_lookup(name, out))
        return BL_OK;
    /* The spec gives no text for these (the reference validates the pair
     * policy/task at once, see bl_controller_validate); the wording is ours. */
    if (name && strcmp(name, "reservoir") == 0)
        return bl_fail(err, BL_EVALUE, "'reservoir' is a controller, not a direct policy");
    return bl_fail(err, BL_EVALUE, "unknown policy '%s'", name ? name : "(null)");
}

/* Whether family `kind` declares direct policy `p` (§6.1). */
static bool policy_allowed(bl_policy p, bl_task_kind kind)
{
    switch (p) {
    case BL_POLICY_ORACLE:
    case BL_POLICY_REFERENCE_NULL:
    case BL_POLICY_CONSTANT_LEFT:
    case BL_POLICY_CONSTANT_RIGHT:
        return (unsigned)kind < BL_TASK_COUNT;
    case BL_POLICY_MEMORYLESS:
        return kind == BL_TASK_DELAYED_CUE || kind == BL_TASK_RECALL_INTERFERENCE ||
               kind == BL_TASK_DELAYED_XOR;
    case BL_POLICY_LAST:
        return kind == BL_TASK_DELAYED_CUE || kind == BL_TASK_RECALL_INTERFERENCE ||
               kind == BL_TASK_DELAYED_XOR || kind == BL_TASK_EVIDENCE_ACCUMULATION ||
               kind == BL_TASK_CONTEXT_INTEGRATION || kind == BL_TASK_TEMPORAL_ORDER;
    case BL_POLICY_FIRST:
        return kind == BL_TASK_EVIDENCE_ACCUMULATION || kind == BL_TASK_CONTEXT_INTEGRATION;
    case BL_POLICY_CONTEXT_BLIND:
    case BL_POLICY_IRRELEVANT:
        return kind == BL_TASK_CONTEXT_INTEGRATION;
    case BL_POLICY_BAG:
        return kind == BL_TASK_TEMPORAL_ORDER;
    case BL_POLICY_FIXED_MAPPING:
        return kind == BL_TASK_REVERSAL_ADAPTATION;
    default:
        return false;
    }
}

static bl_status not_defined(const char *controller, bl_task_kind kind, bl_error *err)
{
    return bl_fail(err, BL_EVALUE, "policy '%s' is not defined for %s",
                   controller ? controller : "(null)", bl_task_name(kind));
}

bl_status bl_controller_validate(const char *controller, bl_task_kind kind, bl_error *err)
{
    if ((unsigned)kind >= BL_TASK_COUNT)
        return bl_fail(err, BL_EVALUE, "unknown task kind %d", (int)kind);
    if (controller && strcmp(controller, "reservoir") == 0)
        return BL_OK;
    bl_policy p;
    if (!policy_lookup(controller, &p) || !policy_allowed(p, kind))
        return not_defined(controller, kind, err);
    return BL_OK;
}

/* ---- bundles ------------------------------------------------------------ */

bl_status bl_controllers_create(bl_policy policy, const bl_worlds *w, bl_controllers **out,
                                bl_error *err)
{
    *out = NULL;
    if (!w)
        return bl_fail(err, BL_EVALUE, "controllers need a world cohort");
    if ((unsigned)policy >= BL_POLICY_COUNT)
        return bl_fail(err, BL_EVALUE, "unknown policy code %d", (int)policy);
    if (!policy_allowed(policy, w->kind))
        return not_defined(bl_policy_name(policy), w->kind, err);

    const size_t n = w->n, rs = bl_dtype_size(w->dtype);
    bl_controllers *c = bl_calloc(1, sizeof *c);
    if (!c)
        goto nomem;
    c->policy = policy;
    c->kind = w->kind;
    c->dtype = w->dtype;
    c->n = n;
    c->width = w->width;
    /* One block: the int32 memory first, then counts and effectors (both
     * real, [n][2]), which stay aligned for the dtype since 10 int32 values
     * a world are 40 bytes, a multiple of 8. */
    size_t mem_bytes, real_bytes;
    if (!bl_size_mul(n, BL_CTL_MEMORY * sizeof *c->memory, &mem_bytes) ||
        !bl_size_mul(n, 2 * rs, &real_bytes) || real_bytes > (SIZE_MAX - mem_bytes) / 2)
        goto nomem;
    unsigned char *block = bl_calloc(1, mem_bytes + 2 * real_bytes);
    if (!block)
        goto nomem;
    c->memory = (int32_t *)block;
    c->counts = block + mem_bytes;
    c->effectors = block + mem_bytes + real_bytes;
    static const int32_t initial[BL_CTL_MEMORY] = {0, 1, 1, 1, 0, 0, 1, 1, -1, -1};
    for (size_t b = 0; b < n; b++)
        memcpy(c->memory + b * BL_CTL_MEMORY, initial, sizeof initial);
    *out = c;
    return BL_OK;

nomem:
    bl_controllers_destroy(c);
    return bl_fail(err, BL_ENOMEM, "out of memory for the controllers of %zu worlds", n);
}

void bl_controllers_destroy(bl_controllers *c)
{
    if (!c)
        return;
    bl_free(c->memory); /* the block holding counts and effectors too */
    bl_free(c);
}

/* A bundle serves exactly the cohort it was made for. */
static bl_status check_pair(const bl_controllers *c, const bl_worlds *w, bl_error *err)
{
    if (!c || !w)
        return bl_fail(err, BL_EVALUE, "controllers and worlds are required");
    if (c->n != w->n || c->kind != w->kind || c->dtype != w->dtype || c->width != w->width)
        return bl_fail(err, BL_EVALUE,
                       "controllers were created for another cohort (%zu %s %s worlds, "
                       "not %zu %s %s)",
                       c->n, bl_task_name(c->kind), bl_dtype_name(c->dtype), w->n,
                       bl_task_name(w->kind), bl_dtype_name(w->dtype));
    return BL_OK;
}

bl_status bl_controllers_act(bl_controllers *c, const bl_worlds *w, const void *randoms,
                             int32_t frame, void *effectors, bl_error *err)
{
    bl_status st = check_pair(c, w, err);
    if (st != BL_OK)
        return st;
    if (frame < 1 || frame > w->frames)
        return bl_fail(err, BL_EVALUE, "frame must lie in 1..%d, got %d", (int)w->frames,
                       (int)frame);
    if (!effectors)
        return bl_fail(err, BL_EVALUE, "effectors must be a [%zu][2] %s array", w->n,
                       bl_dtype_name(w->dtype));
    if (c->policy == BL_POLICY_REFERENCE_NULL && !randoms)
        return bl_fail(err, BL_EVALUE, "reference_null needs one uniform per world");
    /* The frame number itself is never read: held choices are keyed to the
     * world's tick and round, so no call order can re-draw them. */
    if (w->dtype == BL_FLOAT64) {
        const double *u = randoms;
        for (size_t b = 0; b < w->n; b++)
            ctl_act_f64(c, w, b, u ? u[b] : 0.0, (double *)effectors + b * 2);
    } else {
        const float *u = randoms;
        for (size_t b = 0; b < w->n; b++)
            ctl_act_f32(c, w, b, u ? u[b] : 0.0f, (float *)effectors + b * 2);
    }
    return BL_OK;
}

/* ---- the fused path (§1.4) --------------------------------------------- */

bl_status bl_worlds_run_control(bl_worlds *w, bl_controllers *c, const bl_matrix *uniform_tile,
                                int32_t tile_ticks, int32_t *guard, int32_t *frame_cursors,
                                bl_error *err)
{
    /* Every argument is checked before any world moves (§10.3: invalid
     * arguments raise before dispatch). */
    bl_status st = check_pair(c, w, err);
    if (st != BL_OK)
        return st;
    if (tile_ticks < 1)
        return bl_fail(err, BL_EVALUE, "tile_ticks must be a positive integer, got %d",
                       (int)tile_ticks);
    if (!guard || !frame_cursors)
        return bl_fail(err, BL_EVALUE, "guard and frame_cursors must be int32 arrays of length %zu",
                       w->n);
    const bool probe = bl_task_is_probe(w->kind);
    const size_t need = probe ? w->max_rounds : (size_t)tile_ticks;
    if (uniform_tile) {
        if (uniform_tile->dtype != w->dtype || !uniform_tile->data)
            return bl_fail(err, BL_EVALUE, "uniform_tile must be a %s array",
                           bl_dtype_name(w->dtype));
        if (uniform_tile->cols != w->n || uniform_tile->rows < 1)
            return bl_fail(err, BL_EVALUE,
                           "uniform_tile must have shape [rows >= 1][%zu], got [%zu][%zu]", w->n,
                           uniform_tile->rows, uniform_tile->cols);
        if (uniform_tile->rows < need)
            return bl_fail(err, BL_EVALUE, "uniform_tile needs at least %zu rows (%s), got %zu",
                           need, probe ? "one per round" : "one per tick", uniform_tile->rows);
    } else if (c->policy == BL_POLICY_REFERENCE_NULL) {
        return bl_fail(err, BL_EVALUE, "reference_null needs a uniform tile of at least %zu rows",
                       need);
    }

    const size_t rows = uniform_tile ? uniform_tile->rows : 0;
    const void *tile = uniform_tile ? uniform_tile->data : NULL;
    /* World by world: each runs its whole tile while its state is in cache;
     * worlds never read each other, so the order across worlds is free. */
    for (size_t b = 0; b < w->n; b++) {
        if (w->dtype == BL_FLOAT64)
            ctl_run_f64(w, c, b, tile, rows, tile_ticks, &guard[b], &frame_cursors[b]);
        else
            ctl_run_f32(w, c, b, tile, rows, tile_ticks, &guard[b], &frame_cursors[b]);
    }
    return BL_OK;
}
