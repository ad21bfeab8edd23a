/* One batch of a cohort (a slice of at most the admitted capacity): every
 * slot's seeds and world first, then every distinct wiring of the batch,
 * constructed once (or carried over from the last batch), then each slot's
 * whole trial on one thread, and its result row. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

static bl_status seed_of(const run_ctx *c, const char *stream, const char *key, const char *kind,
                         int64_t block, int64_t trial, bl_seed *out, bl_error *err)
{
    const bl_key keys[4] = {BL_KEY_S(key), BL_KEY_S(kind), BL_KEY_I(block), BL_KEY_I(trial)};
    return bl_seed_for(c->ev->root_seed, c->ev->seed_partition, stream, keys, 4, out, err);
}

/* Seeds, world and shuffle permutation of one slot (thread-safe). */
static bl_status setup_slot(const run_ctx *c, slot *s, bl_error *err)
{
    const bl_target_spec *t = s->t;
    const char *task = bl_task_name(t->task_options.kind);
    bl_status st = seed_of(c, "world", t->pairing_key, task, s->block, s->trial, &s->world_seed,
                           err);
    /* The wiring id follows once per distinct wiring (name_wirings). */
    if (st == BL_OK && t->reservoir)
        st = bl_plan_construction_seed(c->plan, s->target, s->block, s->trial,
                                       &s->construction_seed, err);
    else
        strcpy(s->wiring_id, "none");
    if (st == BL_OK && t->reservoir && t->model == BL_MODEL_FALANDAYS)
        st = seed_of(c, "drive", t->mechanism_key, t->node, s->block, s->trial,
                     &s->drive_seed, err);
    if (st == BL_OK && !t->reservoir && t->policy == BL_POLICY_REFERENCE_NULL)
        st = seed_of(c, "control", t->mechanism_key, task, s->block, s->trial, &s->control_seed,
                     err);
    if (st == BL_OK && t->shuffle) {
        st = seed_of(c, "input-shuffle", t->mechanism_key, t->node, s->block, s->trial,
                     &s->shuffle_seed, err);
        if (st == BL_OK) {
            s->perm = bl_mallocarray((size_t)t->n_inputs, sizeof *s->perm);
            if (!s->perm)
                return nomem(err);
            bl_gen g;
            bl_gen_init(&g, &s->shuffle_seed);
            bl_gen_permutation(&g, s->perm, (size_t)t->n_inputs);
        }
    }
    if (st == BL_OK) {
        bl_gen g;
        bl_gen_init(&g, &s->world_seed);
        /* Nothing draws from the world stream after this, so Pong's reset
         * rows may wait in it until a miss needs them. */
        st = bl_world_prepare_lazy(&t->task_options, &g, t->horizon, &s->world, err);
    }
    return st;
}

/* Each reservoir slot's wiring id, hashed once per distinct wiring: the id
 * is a function of the target and the construction seed alone (plan/ids.c),
 * so slots that share both share the id, and a block's trials (construction
 * scope block) hash one JSON document, not one each. */
static bl_status name_wirings(const run_ctx *c, batch *b, bl_error *err)
{
    for (size_t i = 0; i < b->n; i++) {
        slot *s = &b->slots[i];
        if (!s->t->reservoir)
            continue;
        const slot *same = NULL;
        for (size_t j = 0; j < i && !same; j++) {
            const slot *o = &b->slots[j];
            if (o->t->reservoir && o->target == s->target &&
                memcmp(&o->construction_seed, &s->construction_seed, sizeof o->construction_seed) == 0)
                same = o;
        }
        if (same) {
            strcpy(s->wiring_id, same->wiring_id);
            continue;
        }
        const bl_status st =
            bl_plan_wiring_id(c->plan, s->target, s->block, s->trial, s->wiring_id, err);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

static bl_status construct(const run_ctx *c, wiring *w, bl_error *err)
{
    const bl_target_spec *t = c->targets[w->target].spec;
    bl_gen g;
    bl_gen_init(&g, &w->seed);
    if (t->model == BL_MODEL_FALANDAYS)
        return bl_falandays_construct(&t->falandays, (size_t)t->nodes, (size_t)t->n_inputs,
                                      (size_t)t->n_effectors, &g, &w->fal, err);
    return bl_sorn_construct(&t->sorn, (size_t)t->nodes, (size_t)t->n_inputs,
                             (size_t)t->n_effectors, &g, &w->sorn, err);
}

static void free_batch(batch *b)
{
    for (size_t i = 0; b->slots && i < b->n; i++) {
        bl_world_init_destroy(b->slots[i].world);
        bl_free(b->slots[i].perm);
    }
    for (size_t k = 0; b->wirings && k < b->nwirings; k++) {
        bl_falandays_init_destroy(b->wirings[k].fal);
        bl_sorn_init_destroy(b->wirings[k].sorn);
    }
    bl_free(b->slots);
    bl_free(b->wirings);
    bl_free(b->order);
    bl_free(b->unit);
    bl_free(b->recs);
    bl_free(b->ends);
    memset(b, 0, sizeof *b);
}

void bl_run_release_carry(run_ctx *c)
{
    batch old = {.wirings = c->carry, .nwirings = c->ncarry};
    free_batch(&old);
    c->carry = NULL;
    c->ncarry = 0;
}

/* Wirings of the last batch that this one needs again are taken over
 * (construction is deterministic, so this changes no bit of any result);
 * the others are released before anything new is built, so no more
 * wirings exist at once than one batch needs. */
static void take_carried(run_ctx *c, batch *b)
{
    for (size_t k = 0; k < b->nwirings; k++)
        for (size_t j = 0; j < c->ncarry; j++) {
            wiring *old = &c->carry[j];
            if ((old->fal || old->sorn) && strcmp(old->id, b->wirings[k].id) == 0) {
                b->wirings[k].fal = old->fal;
                b->wirings[k].sorn = old->sorn;
                old->fal = NULL;
                old->sorn = NULL;
                break;
            }
        }
    bl_run_release_carry(c);
}

static void fill_row(const run_ctx *c, const slot *s, const slot_end *e, bl_trial_result *row)
{
    const bl_target_spec *t = s->t;
    memset(row, 0, sizeof *row);
    row->target = s->target;
    row->target_id = t->id;
    row->task = t->task_options.kind;
    row->block = s->block;
    row->trial = s->trial;
    row->outcome_key = t->outcome_key;
    row->raw = e->raw;
    row->normalised = NAN;
    row->normalisation = isnan(e->raw) ? BL_ADJUST_NO_OUTCOME : BL_ADJUST_UNAVAILABLE;
    row->scoring_window = e->ticks > c->ev->warmup ? e->ticks - c->ev->warmup : 0;
    row->status = e->status;
    row->completed_ticks = e->ticks;
    row->neural_frames = e->frames;
    row->spikes = e->spikes;
    row->failed = e->failed;
    bl_seed_hex(&s->world_seed, row->world_seed);
    strcpy(row->wiring_id, s->wiring_id);
    /* §4.9 insertion order. */
    row->seeds[row->nseeds].stream = "world";
    bl_seed_hex(&s->world_seed, row->seeds[row->nseeds++].hex);
    if (t->reservoir) {
        row->seeds[row->nseeds].stream = "construction";
        bl_seed_hex(&s->construction_seed, row->seeds[row->nseeds++].hex);
        if (t->model == BL_MODEL_FALANDAYS) {
            row->seeds[row->nseeds].stream = "drive";
            bl_seed_hex(&s->drive_seed, row->seeds[row->nseeds++].hex);
        }
    } else if (t->policy == BL_POLICY_REFERENCE_NULL) {
        row->seeds[row->nseeds].stream = "control";
        bl_seed_hex(&s->control_seed, row->seeds[row->nseeds++].hex);
    }
    if (t->shuffle) {
        row->seeds[row->nseeds].stream = "input_shuffle";
        bl_seed_hex(&s->shuffle_seed, row->seeds[row->nseeds++].hex);
    }
}

/* Cuts the batch into the units its threads take (b->order, b->unit),
 * with their recording targets and ends (b->recs, b->ends).
 * The reservoir slots of each wiring, in slot order, form lockstep groups
 * of at most `cap` trials (default 8): one model batch whose slots share
 * the wiring's fixed arrays and, with the lane kernels, one SIMD lane a
 * trial (8 lanes are an AVX2 vector of float32, two of float64), while a
 * group's weights stay few enough to remain in the core's caches. When there are
 * fewer groups than threads, the widest groups are split further (down to
 * single trials), so no thread idles while another steps a whole block;
 * with construction scope `trial` every group is one trial. Each direct
 * controller's slot is a unit of its own. Which unit a trial lands in never
 * changes a bit of its result: the slots of a model batch and the worlds
 * of a cohort are independent. */
static bl_status plan_units(batch *b, int threads, size_t cap, bl_error *err)
{
    const size_t nw = b->nwirings;
    size_t *members = bl_calloc(nw + 1, sizeof *members), *chunks = bl_calloc(nw + 1,
                                                                              sizeof *chunks);
    size_t *at = bl_calloc(nw + 1, sizeof *at);
    b->order = bl_calloc(b->n, sizeof *b->order);
    b->unit = bl_calloc(b->n + 1, sizeof *b->unit);
    b->recs = bl_calloc(b->n, sizeof *b->recs);
    b->ends = bl_calloc(b->n, sizeof *b->ends);
    bl_status st = !members || !chunks || !at || !b->order || !b->unit || !b->recs || !b->ends
                       ? nomem(err)
                       : BL_OK;
    if (st != BL_OK)
        goto done;
    size_t groups = 0, direct = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->slots[i].t->reservoir)
            members[b->slots[i].wiring]++;
        else
            direct++;
    }
    for (size_t k = 0; k < nw; k++) {
        chunks[k] = (members[k] + cap - 1) / cap;
        groups += chunks[k];
    }
    while (groups < (size_t)threads) {
        size_t best = nw, width = 1;
        for (size_t k = 0; k < nw; k++) {
            const size_t wk = (members[k] + chunks[k] - 1) / chunks[k];
            if (wk > width) {
                best = k;
                width = wk;
            }
        }
        if (best == nw)
            break; /* every group is a single trial */
        chunks[best]++;
        groups++;
    }
    /* Wiring k's slots go to order[at[k]...], in slot order; direct slots
     * follow every group. */
    for (size_t k = 1; k <= nw; k++)
        at[k] = at[k - 1] + members[k - 1];
    size_t next_direct = at[nw];
    for (size_t i = 0; i < b->n; i++) {
        slot *s = &b->slots[i];
        b->order[s->t->reservoir ? at[s->wiring]++ : next_direct++] = s;
    }
    size_t pos = 0;
    for (size_t k = 0; k < nw; k++)
        for (size_t q = 0; q < chunks[k]; q++) {
            b->unit[b->nunits++] = pos;
            pos += members[k] / chunks[k] + (q < members[k] % chunks[k]);
        }
    for (size_t i = 0; i < direct; i++)
        b->unit[b->nunits++] = pos++;
    b->unit[b->nunits] = pos;
    BL_ASSERT(pos == b->n);
done:
    bl_free(members);
    bl_free(chunks);
    bl_free(at);
    return st;
}

bl_status bl_run_group_width(size_t *width, bl_error *err)
{
    const char *v = getenv("BL_GROUP_CAP");
    *width = BL_GROUP_CAP;
    if (!v || !*v)
        return BL_OK;
    char *end = NULL;
    errno = 0;
    const long x = strtol(v, &end, 10);
    if (errno || *end || x < 1 || x > 1024)
        return bl_fail(err, BL_EVALUE, "BL_GROUP_CAP=%s: a group takes 1 to 1024 trials", v);
    *width = (size_t)x;
    return BL_OK;
}

/* One unit's trials (a group, or one direct slot) and their rows. */
static void run_unit(run_ctx *c, batch *b, size_t u, bl_trial_result *rows, bl_run_result *res)
{
    slot *const *us = b->order + b->unit[u];
    capture *recs = b->recs + b->unit[u];
    slot_end *ends = b->ends + b->unit[u];
    const size_t g = b->unit[u + 1] - b->unit[u];
    bl_error err;
    bl_status st = BL_OK;
    for (size_t k = 0; k < g; k++) {
        recs[k].probe = res->probes ? &res->probes[us[k]->row] : NULL;
        recs[k].frames = NULL;
        if (res->replays && st == BL_OK &&
            !(recs[k].frames = res->replays[us[k]->row] = bl_json_array()))
            st = nomem(&err);
    }
    if (st == BL_OK && us[0]->t->reservoir)
        st = bl_run_group(c, b, us, g, recs, ends, &err);
    else if (st == BL_OK && recs[0].frames)
        st = bl_run_direct_frames(c, b, us[0], &recs[0], &ends[0], &err);
    else if (st == BL_OK)
        st = bl_run_direct(c, b, us[0], &ends[0], &err);
    for (size_t k = 0; k < g; k++) {
        slot *s = us[k];
        const slot_end *e = &ends[k];
        s->st = st;
        if (st != BL_OK) {
            s->err = err;
            continue;
        }
        /* §4.11: a completed trial's schedule is hit exactly once per point. */
        const bl_probe_capture *pc = recs[k].probe;
        if (pc && e->status == BL_TRIAL_COMPLETED && !isnan(e->raw) &&
            (pc->counts[0] != 1 || pc->counts[1] != 1 || pc->counts[2] != 1))
            s->st = bl_fail(&s->err, BL_ERUNTIME,
                            "probe event schedule did not emit exactly one event per point");
        else
            fill_row(c, s, e, &rows[s->row]);
    }
}

/* The first failure in slot order, so the error reported never depends on
 * thread scheduling. */
static bl_status first_failure(const batch *b, bl_error *err)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->slots[i].st != BL_OK) {
            if (err)
                *err = b->slots[i].err;
            return b->slots[i].st;
        }
    return BL_OK;
}

bl_status bl_run_batch(run_ctx *c, const cohort *h, size_t first, size_t n,
                       bl_trial_result *rows, bl_run_result *res, bl_error *err)
{
    batch b = {0};
    /* Threads beyond the batch's slots would only idle (and an absurd
     * request must not reach the OpenMP runtime). */
    const int threads = (int)(c->x->cpu_threads < (int64_t)n ? c->x->cpu_threads : (int64_t)n);
    const size_t per_target = (size_t)(c->ev->blocks * c->ev->trials_per_block);
    b.slots = bl_calloc(n, sizeof *b.slots);
    b.wirings = bl_calloc(n, sizeof *b.wirings);
    bl_status st = !b.slots || !b.wirings ? nomem(err) : BL_OK;
    if (st != BL_OK)
        goto done;
    b.n = n;
    for (size_t i = 0; i < n; i++) {
        slot *s = &b.slots[i];
        s->job = h->jobs[first + i];
        s->target = s->job / per_target;
        s->row = c->part_first
                     ? s->job - c->part_first[s->target] + c->part_row[s->target]
                     : s->job;
        s->t = c->targets[s->target].spec;
        const size_t within = s->job % per_target;
        s->block = (int64_t)(within / (size_t)c->ev->trials_per_block);
        s->trial = (int64_t)(within % (size_t)c->ev->trials_per_block);
    }

#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++)
        b.slots[i].st = setup_slot(c, &b.slots[i], &b.slots[i].err);
    if ((st = first_failure(&b, err)) != BL_OK || (st = name_wirings(c, &b, err)) != BL_OK)
        goto done;

    /* Jobs with the same wiring identity share one construction. */
    for (size_t i = 0; i < n; i++) {
        slot *s = &b.slots[i];
        if (!s->t->reservoir)
            continue;
        size_t k = 0;
        while (k < b.nwirings && strcmp(b.wirings[k].id, s->wiring_id) != 0)
            k++;
        if (k == b.nwirings) {
            wiring *wr = &b.wirings[b.nwirings++];
            strcpy(wr->id, s->wiring_id);
            wr->target = s->target;
            wr->seed = s->construction_seed;
        }
        s->wiring = k;
    }
    for (size_t i = 0; i < n; i++)
        if (b.slots[i].world->rounds > b.max_rounds)
            b.max_rounds = b.slots[i].world->rounds;
    take_carried(c, &b);
    {
        bl_status *wst = bl_calloc(b.nwirings ? b.nwirings : 1, sizeof *wst);
        bl_error *werr = bl_calloc(b.nwirings ? b.nwirings : 1, sizeof *werr);
        if (!wst || !werr) {
            bl_free(wst);
            bl_free(werr);
            st = nomem(err);
            goto done;
        }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
        for (ptrdiff_t k = 0; k < (ptrdiff_t)b.nwirings; k++)
            wst[k] = b.wirings[k].fal || b.wirings[k].sorn
                         ? BL_OK
                         : construct(c, &b.wirings[k], &werr[k]);
        for (size_t k = 0; k < b.nwirings && st == BL_OK; k++)
            if (wst[k] != BL_OK) {
                st = wst[k];
                if (err)
                    *err = werr[k];
            }
        bl_free(wst);
        bl_free(werr);
        if (st != BL_OK)
            goto done;
    }

    size_t cap;
    if ((st = bl_run_group_width(&cap, err)) != BL_OK ||
        (st = plan_units(&b, threads, cap, err)) != BL_OK)
        goto done;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (ptrdiff_t u = 0; u < (ptrdiff_t)b.nunits; u++)
        run_unit(c, &b, (size_t)u, rows, res);
    int64_t ticks = 0, frames = 0, rframes = 0;
    for (size_t i = 0; i < n; i++) {
        const slot *s = b.order[i];
        if (s->st != BL_OK)
            continue;
        ticks += b.ends[i].ticks;
        frames += b.ends[i].frames;
        if (s->t->reservoir)
            rframes += b.ends[i].frames;
    }
    res->world_ticks += ticks;
    res->neural_frames += frames;
    res->reservoir_frames += rframes;
    for (size_t i = 0; i < n; i++)
        res->processing_order[res->nprocessed++] = b.slots[i].job;
    st = first_failure(&b, err);
    if (st == BL_OK) {
        c->carry = b.wirings; /* the next batch may need them */
        c->ncarry = b.nwirings;
        b.wirings = NULL;
        b.nwirings = 0;
    }
done:
    free_batch(&b);
    return st;
}
