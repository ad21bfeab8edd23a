/* Parts of a run (include/brainlesslab/run.h, "parts of a run"): the
 * deterministic partition of a plan's jobs by whole wirings, computed per
 * target and never per job, so that 10^8 jobs split at once.
 *
 * Wiring classes come from one wiring id per target (its block-0,
 * trial-0 cell): the id digests the construction seed (construction key,
 * node kind, count, ports and the scope keys) with the node kind, count,
 * ports and the full config, so two targets have equal ids in one cell iff
 * they have equal ids in every cell, which is §4.2's "share wiring". A
 * class's units are its scope cells, each holding the same jobs of every
 * member target; a direct controller's units are its blocks. Every unit
 * of a run (a class, or a direct target) costs the same, so the split is a
 * binary search per run over its cells, and a target's jobs in one part
 * are one contiguous range. */
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

/* Costs and their sums need up to about 2^104; the product with nparts
 * (at most 2^20) fits 128 bits. */
__extension__ typedef unsigned __int128 u128;

/* One job's cost cap (2^40): larger estimates only say "very large". */
#define JOB_COST_MAX ((uint64_t)1 << 40)

static uint64_t at_least_one(int64_t v)
{
    return v > 0 ? (uint64_t)v : 1;
}

/* horizon × neural_frames × (reservoir: count × (count + n_inputs); else 1),
 * saturated at JOB_COST_MAX. */
static uint64_t job_cost(const bl_target_spec *t)
{
    const uint64_t f[4] = {at_least_one(t->horizon), at_least_one(t->neural_frames),
                           t->reservoir ? at_least_one(t->nodes) : 1,
                           t->reservoir ? at_least_one(t->nodes) + at_least_one(t->n_inputs) : 1};
    u128 c = 1;
    for (int k = 0; k < 4; k++) {
        c *= f[k] < JOB_COST_MAX ? f[k] : JOB_COST_MAX;
        if (c > JOB_COST_MAX)
            return JOB_COST_MAX;
    }
    return (uint64_t)c;
}

bl_status bl_run_part_check(int64_t part, int64_t nparts, bl_error *err)
{
    if (nparts < 1 || nparts > BL_RUN_MAX_PARTS || part < 1 || part > nparts)
        return bl_fail(err, BL_EVALUE,
                       "a part must be K of N with 1 <= K <= N <= %lld (got %lld of %lld)",
                       (long long)BL_RUN_MAX_PARTS, (long long)part, (long long)nparts);
    return BL_OK;
}

/* The 0-based part of unit u of a run whose units cost c each, after
 * units of cost `base` in all, out of `total`. */
static uint64_t part_of(u128 base, u128 c, uint64_t u, u128 total, uint64_t nparts)
{
    return (uint64_t)(((u128)nparts * (2 * (base + (u128)u * c) + c)) / (2 * total));
}

/* The first unit in [0, m] whose part is at least k (m when none). */
static uint64_t first_unit(u128 base, u128 c, uint64_t m, u128 total, uint64_t nparts,
                           uint64_t k)
{
    uint64_t lo = 0, hi = m;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (part_of(base, c, mid, total, nparts) >= k)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

bl_status bl_run_part_jobs(const bl_resolved_plan *plan, int64_t part, int64_t nparts,
                           size_t *first, size_t *count, bl_error *err)
{
    bl_status st = bl_run_part_check(part, nparts, err);
    if (st != BL_OK)
        return st;
    const bl_evaluation_spec *ev = bl_resolved_evaluation(plan);
    const size_t nt = bl_resolved_target_count(plan);
    const size_t per = (size_t)(ev->blocks * ev->trials_per_block);
    /* Cells per class and jobs per cell, by construction scope. */
    const uint64_t cells = ev->construction_scope == BL_SCOPE_EVALUATION ? 1
                           : ev->construction_scope == BL_SCOPE_BLOCK   ? (uint64_t)ev->blocks
                                                                        : (uint64_t)per;
    char (*ids)[65] = bl_calloc(nt, sizeof *ids);
    size_t *cls = bl_calloc(nt, sizeof *cls);
    u128 *unit = bl_calloc(nt, sizeof *unit); /* a run's unit cost, at its first target */
    if (!ids || !cls || !unit) {
        st = nomem(err);
        goto done;
    }
    /* Classes: the first target with the same wiring id (quadratic in the
     * targets, which are few; never per job). */
    for (size_t i = 0; i < nt && st == BL_OK; i++) {
        const bl_target_spec *t = bl_resolved_target_spec(plan, i);
        cls[i] = i;
        if (!t->reservoir)
            continue;
        if ((st = bl_plan_wiring_id(plan, i, 0, 0, ids[i], err)) != BL_OK)
            break;
        for (size_t k = 0; k < i; k++)
            if (bl_resolved_target_spec(plan, k)->reservoir && strcmp(ids[k], ids[i]) == 0) {
                cls[i] = k;
                break;
            }
    }
    if (st != BL_OK)
        goto done;
    u128 total = 0;
    for (size_t i = 0; i < nt; i++) {
        const bl_target_spec *t = bl_resolved_target_spec(plan, i);
        const u128 jobs_per_unit = t->reservoir ? per / cells : (u128)ev->trials_per_block;
        unit[cls[i]] += jobs_per_unit * job_cost(t);
        total += (u128)per * job_cost(t);
    }
    /* Runs in order of first appearance: a class's cells all appear with
     * its first target, a direct target's blocks with itself. */
    u128 base = 0;
    const uint64_t k = (uint64_t)(part - 1), n = (uint64_t)nparts;
    for (size_t i = 0; i < nt; i++) {
        if (cls[i] != i)
            continue;
        const bool reservoir = bl_resolved_target_spec(plan, i)->reservoir;
        const uint64_t m = reservoir ? cells : (uint64_t)ev->blocks;
        const uint64_t lo = first_unit(base, unit[i], m, total, n, k),
                       hi = first_unit(base, unit[i], m, total, n, k + 1);
        const size_t size = per / (size_t)m;
        for (size_t j = i; j < nt; j++)
            if (cls[j] == i) {
                first[j] = j * per + (size_t)lo * size;
                count[j] = (size_t)(hi - lo) * size;
            }
        base += (u128)m * unit[i];
    }
done:
    bl_free(ids);
    bl_free(cls);
    bl_free(unit);
    return st;
}

bl_status bl_run_ctx_restrict(run_ctx *c, int64_t part, int64_t nparts, bl_error *err)
{
    c->part = part;
    c->nparts = nparts;
    c->part_first = bl_calloc(c->ntargets, sizeof *c->part_first);
    c->part_count = bl_calloc(c->ntargets, sizeof *c->part_count);
    c->part_row = bl_calloc(c->ntargets, sizeof *c->part_row);
    if (!c->part_first || !c->part_count || !c->part_row)
        return nomem(err);
    bl_status st = bl_run_part_jobs(c->plan, part, nparts, c->part_first, c->part_count, err);
    if (st != BL_OK)
        return st;
    c->nrows = 0;
    for (size_t i = 0; i < c->ntargets; i++) {
        c->part_row[i] = c->nrows;
        c->nrows += c->part_count[i];
    }
    return bl_run_ctx_job_lists(c, err);
}
