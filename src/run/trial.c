/* One trial from its first frame to its last (spec/tasks.md §1.4): the
 * reservoir's loop of encode, model step, accumulate and advance with its
 * interventions and noise tiles, run for a lockstep group of trials that
 * share one wiring, and the direct controllers' loops (frame by frame, or
 * fused in the worlds) for one trial. A group runs on one thread with one
 * model batch and one world cohort; a direct trial with its own. */
#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

/* What world b of the cohort reports at the end of its trial. */
static void finish_at(const bl_worlds *w, size_t b, bool model_finite, int64_t frames,
                      slot_end *e)
{
    e->status = bl_worlds_status(w, b, model_finite);
    e->failed = e->status == BL_TRIAL_FAILED;
    e->ticks = bl_worlds_ticks(w)[b];
    e->frames = frames;
    e->raw = e->status == BL_TRIAL_COMPLETED ? bl_worlds_outcome(w, b) : NAN;
}

static void finish(const run_ctx *c, const bl_worlds *w, bool model_finite, int64_t frames,
                   slot_end *e)
{
    finish_at(w, 0, model_finite, frames, e);
    (void)c;
}

/* How many of the n activity values (0 or 1, in the dtype) are 1: the
 * spike count profile reports as a mean rate, because the sparse kernels'
 * cost follows it. It runs every frame, so eight independent integer lanes
 * let the compiler count a whole vector at a time. */
#define COUNT_ACTIVE(real_t)                                                   \
    do {                                                                       \
        const real_t *a_ = activity;                                           \
        uint32_t lane_[8] = {0};                                               \
        size_t i_ = 0;                                                         \
        for (; i_ + 8 <= n; i_ += 8)                                           \
            for (size_t l_ = 0; l_ < 8; l_++)                                  \
                lane_[l_] += a_[i_ + l_] != 0;                                 \
        for (; i_ < n; i_++)                                                   \
            lane_[0] += a_[i_] != 0;                                           \
        for (size_t l_ = 0; l_ < 8; l_++)                                      \
            k += lane_[l_];                                                    \
    } while (0)

static int64_t count_active(const void *activity, bl_dtype dtype, size_t n)
{
    int64_t k = 0;
    if (dtype == BL_FLOAT32)
        COUNT_ACTIVE(float);
    else
        COUNT_ACTIVE(double);
    return k;
}

/* What a group keeps per member trial besides the cohort's and the
 * batch's own arrays. */
typedef struct member {
    slot *s;
    bl_tape *tape;         /* the drive noise, when the model reads it */
    const double *rows;    /* the tape's rows of the current tile */
    int64_t cursor;        /* neural frames executed while active */
    int64_t tile_start;    /* cursor at the start of the tile */
    int64_t spikes;
    size_t next_iv;        /* the first intervention not yet reached */
    bool blind, shuffled;
} member;

/* Writes the member's x = (shuffle ? in[perm[r]] : in[r]) · (blind ? 0 : 1)
 * · gain in the dtype (spec/models.md §4 item 3): in and x are its rows of
 * the cohort's inputs and the group's input scratch. */
#define TRANSFORM(real_t)                                                      \
    do {                                                                       \
        const real_t *in_ = (const real_t *)inputs + k * nr;                   \
        real_t *x_ = (real_t *)xbuf + k * nr;                                  \
        const real_t gain_ = (real_t)mb->s->t->input_gain;                     \
        for (size_t r_ = 0; r_ < nr; r_++) {                                   \
            real_t v_ = mb->shuffled ? in_[mb->s->perm[r_]] : in_[r_];         \
            if (mb->blind)                                                     \
                v_ = v_ * (real_t)0;                                           \
            x_[r_] = v_ * gain_;                                               \
        }                                                                      \
    } while (0)

/* Interventions of member k take effect before the frames of tick number
 * tick + 1 (one-based): input ones switch its blind or shuffled flag on,
 * the others freeze its slot of the model (one[] is all zero and comes
 * back so; member k alone is set for the call). */
static bl_status apply_interventions(member *mb, size_t k, int32_t tick, bl_model *m,
                                     int32_t *one, size_t g, bl_error *err)
{
    const bl_target_spec *t = mb->s->t;
    bl_status st = BL_OK;
    while (mb->next_iv < t->ninterventions && t->interventions[mb->next_iv].tick <= tick + 1) {
        const bl_intervention *iv = &t->interventions[mb->next_iv++];
        if (iv->tick != tick + 1)
            continue;
        if (iv->verb == BL_BLIND_INPUT) {
            mb->blind = true;
            continue;
        }
        if (iv->verb == BL_SHUFFLE_INPUT) {
            mb->shuffled = true;
            continue;
        }
        one[k] = 1;
        st = iv->verb == BL_FREEZE_WEIGHTS ? bl_model_freeze_weights(m, one, g, err)
                                           : bl_model_freeze_plasticity(m, one, g, err);
        one[k] = 0;
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

/* One frame's row of a float64 tape as member k's row of the model's
 * noise, rounded to float32 when the model is. */
static void take_noise_row(const double *row, size_t n, size_t k, bl_dtype dtype, void *noise)
{
    if (dtype == BL_FLOAT32) {
        float *nf = (float *)noise + k * n;
        for (size_t i = 0; i < n; i++)
            nf[i] = (float)row[i];
    } else {
        memcpy((double *)noise + k * n, row, n * sizeof *row);
    }
}

static bool any_active(const int32_t *act, size_t g)
{
    for (size_t k = 0; k < g; k++)
        if (act[k])
            return true;
    return false;
}

/* Clears act[k] where flag[k] is 0: a failure latches (DESIGN rule 3). */
static void drop_failed(int32_t *act, const int32_t *flag, size_t g)
{
    for (size_t k = 0; k < g; k++)
        if (act[k] && !flag[k])
            act[k] = 0;
}

/* The group's world cohort and model batch: every slot of the batch is
 * created from the one wiring (the same initial-state pointer, which tells
 * the model that its slots share their fixed arrays), and each member's
 * noise tape when the model draws noise. */
static bl_status open_group(const run_ctx *c, const batch *b, member *mbs, size_t g,
                            size_t tile_frames, bl_worlds **w, bl_model **m, bl_error *err)
{
    const bl_target_spec *t = mbs[0].s->t;
    const wiring *wr = &b->wirings[mbs[0].s->wiring];
    const size_t n = (size_t)t->nodes;
    const bool noisy = t->model == BL_MODEL_FALANDAYS && t->falandays.drive == BL_DRIVE_OOSAWA;
    const bl_world_init **inits = bl_mallocarray(g, sizeof *inits);
    const bl_falandays_init **fal = wr->fal ? bl_mallocarray(g, sizeof *fal) : NULL;
    const bl_sorn_init **sorn = wr->sorn ? bl_mallocarray(g, sizeof *sorn) : NULL;
    int64_t *horizons = bl_mallocarray(g, sizeof *horizons);
    bl_status st = !inits || (wr->fal && !fal) || (wr->sorn && !sorn) || !horizons
                       ? nomem(err)
                       : BL_OK;
    for (size_t k = 0; st == BL_OK && k < g; k++) {
        inits[k] = mbs[k].s->world;
        horizons[k] = mbs[k].s->t->horizon;
        if (fal)
            fal[k] = wr->fal;
        if (sorn)
            sorn[k] = wr->sorn;
    }
    if (st == BL_OK)
        st = bl_worlds_create(inits, g, horizons, c->ev->warmup, c->ev->dtype, w, err);
    if (st == BL_OK)
        st = fal ? bl_model_create_falandays(fal, g, c->ev->dtype, m, err)
                 : bl_model_create_sorn(sorn, g, c->ev->dtype, m, err);
    /* Without the Oosawa drive the model never reads its noise (models.md
     * §2.5 step 5), so no tape is drawn: the rows are the same whether or
     * not anyone computes them. */
    for (size_t k = 0; st == BL_OK && noisy && k < g; k++)
        st = bl_tape_create(&mbs[k].tape, &mbs[k].s->drive_seed, n, tile_frames,
                            BL_TAPE_NORMAL, err);
    bl_free(inits);
    bl_free(fal);
    bl_free(sorn);
    bl_free(horizons);
    return st;
}

/* After a tick's advance: the recordings of every member that advanced. */
static bl_status capture_tick(const run_ctx *c, const bl_worlds *w, const bl_model *m,
                              const int32_t *act, const capture *recs, size_t g, size_t n,
                              bl_error *err)
{
    const size_t vsize = bl_dtype_size(c->ev->dtype), ne = bl_model_effectors(m);
    const int32_t *ticks = bl_worlds_ticks(w);
    const char *activity = bl_model_activity_data(m), *eff = bl_model_effector_data(m);
    for (size_t k = 0; k < g; k++) {
        if (!act[k])
            continue;
        if (recs[k].probe)
            bl_run_probe_tick(recs[k].probe, ticks[k], c->ev->dtype, activity + k * n * vsize);
        if (recs[k].frames) {
            bl_status st = bl_run_replay_tick_at(recs[k].frames, w, k, ticks[k],
                                                 activity + k * n * vsize, n,
                                                 eff + k * ne * vsize, ne, err);
            if (st != BL_OK)
                return st;
        }
    }
    return BL_OK;
}

bl_status bl_run_group(const run_ctx *c, const batch *b, slot *const *slots, size_t g,
                       const capture *recs, slot_end *ends, bl_error *err)
{
    const bl_target_spec *t0 = slots[0]->t;
    const size_t nr = (size_t)t0->n_inputs, n = (size_t)t0->nodes;
    const int32_t frames = (int32_t)t0->neural_frames;
    const bl_dtype dtype = c->ev->dtype;
    const size_t vsize = bl_dtype_size(dtype);
    /* T / F ticks per tile, so a tile holds whole ticks of noise frames
     * (every member's target has the cohort's frames per tick). */
    const int64_t tile_ticks = c->x->noise_tile_frames / t0->neural_frames;
    const size_t tile_frames = (size_t)(tile_ticks * t0->neural_frames);

    bl_worlds *w = NULL;
    bl_model *m = NULL;
    member *mbs = bl_calloc(g, sizeof *mbs);
    int32_t *act = bl_calloc(g, sizeof *act), *one = bl_calloc(g, sizeof *one);
    void *xbuf = bl_calloc(g * nr, vsize), *noise = bl_calloc(g * n, vsize);
    bl_status st = !mbs || !act || !one || !xbuf || !noise ? nomem(err) : BL_OK;
    if (st != BL_OK)
        goto done;
    for (size_t k = 0; k < g; k++)
        mbs[k].s = slots[k];
    if ((st = open_group(c, b, mbs, g, tile_frames, &w, &m, err)) != BL_OK)
        goto done;
    for (size_t k = 0; k < g && st == BL_OK; k++)
        if (recs[k].probe)
            st = bl_run_probe_begin(slots[k], n, recs[k].probe, err);
    if (st != BL_OK)
        goto done;

    const int32_t *ticks = bl_worlds_ticks(w), *done = bl_worlds_done(w),
                  *tfin = bl_worlds_finite(w), *mfin = bl_model_finite(m);
    const bl_matrix xin = {dtype, g, nr, xbuf}, nz = {dtype, g, n, noise};
    const bl_matrix eff = {dtype, g, bl_model_effectors(m), bl_model_effector_data(m)};
    for (size_t k = 0; k < g; k++)
        act[k] = 1;
    while (any_active(act, g)) {
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        for (size_t k = 0; k < g; k++) {
            member *mb = &mbs[k];
            mb->tile_start = mb->cursor;
            mb->rows = NULL;
            if (act[k] && mb->tape &&
                (st = bl_tape_preview(mb->tape, tile_frames, &mb->rows, err)) != BL_OK)
                goto done;
        }
        for (int64_t o = 0; o < tile_ticks; o++) {
            for (size_t k = 0; k < g; k++)
                act[k] = act[k] && !done[k] && mfin[k] && tfin[k] &&
                         ticks[k] < mbs[k].s->t->horizon;
            if (!any_active(act, g))
                break;
            for (size_t k = 0; k < g; k++)
                if (act[k] &&
                    (st = apply_interventions(&mbs[k], k, ticks[k], m, one, g, err)) != BL_OK)
                    goto done;
            for (int32_t f = 1; f <= frames && any_active(act, g); f++) {
                if ((st = bl_worlds_encode(w, f, act, g, err)) != BL_OK)
                    goto done;
                drop_failed(act, tfin, g);
                if (!any_active(act, g))
                    break;
                const void *inputs = bl_worlds_inputs(w);
                for (size_t k = 0; k < g; k++) {
                    member *mb = &mbs[k];
                    if (!act[k])
                        continue;
                    if (dtype == BL_FLOAT32)
                        TRANSFORM(float);
                    else
                        TRANSFORM(double);
                    if (mb->rows)
                        take_noise_row(mb->rows + (size_t)(mb->cursor - mb->tile_start) * n, n,
                                       k, dtype, noise);
                    mb->cursor++;
                }
                if ((st = bl_model_step(m, &xin, &nz, act, g, err)) != BL_OK)
                    goto done;
                const char *activity = bl_model_activity_data(m);
                for (size_t k = 0; k < g; k++)
                    if (act[k])
                        mbs[k].spikes += count_active(activity + k * n * vsize, dtype, n);
                /* A neural failure is latched before accumulation. */
                drop_failed(act, mfin, g);
                if ((st = bl_worlds_accumulate(w, &eff, f, act, g, err)) != BL_OK)
                    goto done;
                drop_failed(act, tfin, g);
            }
            if (!any_active(act, g))
                break;
            if ((st = bl_worlds_advance(w, &eff, act, g, err)) != BL_OK)
                goto done;
            drop_failed(act, tfin, g); /* a failed tick was not counted */
            if ((st = capture_tick(c, w, m, act, recs, g, n, err)) != BL_OK)
                goto done;
        }
        for (size_t k = 0; k < g; k++) {
            member *mb = &mbs[k];
            if (mb->rows &&
                (st = bl_tape_consume(mb->tape, (size_t)(mb->cursor - mb->tile_start), err)) !=
                    BL_OK)
                goto done;
        }
    }
    for (size_t k = 0; k < g; k++) {
        finish_at(w, k, mfin[k] != 0, mbs[k].cursor, &ends[k]);
        ends[k].spikes = mbs[k].spikes;
    }
done:
    for (size_t k = 0; mbs && k < g; k++)
        bl_tape_destroy(mbs[k].tape);
    bl_model_destroy(m);
    bl_worlds_destroy(w);
    bl_free(mbs);
    bl_free(act);
    bl_free(one);
    bl_free(xbuf);
    bl_free(noise);
    return st;
}

/* The slot's world cohort and its direct controller. */
static bl_status open_direct(const run_ctx *c, const slot *s, bl_worlds **w, bl_controllers **ctl,
                             bl_error *err)
{
    bl_status st = bl_worlds_create((const bl_world_init *const *)&s->world, 1, &s->t->horizon,
                                    c->ev->warmup, c->ev->dtype, w, err);
    if (st == BL_OK)
        st = bl_controllers_create(s->t->policy, *w, ctl, err);
    return st;
}

/* A direct controller frame by frame (the unfused loop of spec/tasks.md
 * §1.4), for recordings that need every tick; bit-identical to the fused
 * path, which the tests check. */
bl_status bl_run_direct_frames(const run_ctx *c, const batch *b, slot *s,
                               const capture *rec, slot_end *e, bl_error *err)
{
    const bl_target_spec *t = s->t;
    const bool null = t->policy == BL_POLICY_REFERENCE_NULL;
    const bool probe = bl_task_is_probe(t->task_options.kind);
    const size_t k_rounds = b->max_rounds ? b->max_rounds : 1;
    const size_t vsize = c->ev->dtype == BL_FLOAT32 ? sizeof(float) : sizeof(double);
    bl_worlds *w = NULL;
    bl_controllers *ctl = NULL;
    double *table = probe && null ? bl_mallocarray(k_rounds, sizeof *table) : NULL;
    void *eff = bl_calloc((size_t)t->n_effectors, vsize), *u = bl_calloc(1, vsize);
    bl_status st = !eff || !u || (probe && null && !table) ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = open_direct(c, s, &w, &ctl, err);
    if (st != BL_OK)
        goto done;
    bl_gen g;
    if (null) {
        bl_gen_init(&g, &s->control_seed);
        if (probe)
            bl_gen_random_fill(&g, table, k_rounds);
    }
    const int32_t *ticks = bl_worlds_ticks(w), *done = bl_worlds_done(w),
                  *tfin = bl_worlds_finite(w), *round = bl_worlds_rounds_done(w);
    const bl_matrix em = {c->ev->dtype, 1, (size_t)t->n_effectors, eff};
    int32_t act = 1, cursor = 0;
    for (;;) {
        act = !done[0] && tfin[0] && ticks[0] < t->horizon;
        if (!act)
            break;
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        if (null) {
            /* Tick t: the t-th uniform; a probe's round k: u[min(k, K-1)]. */
            const size_t r = (size_t)round[0] < k_rounds ? (size_t)round[0] : k_rounds - 1;
            const double x = probe ? table[r] : bl_gen_random(&g);
            if (c->ev->dtype == BL_FLOAT32)
                *(float *)u = (float)x;
            else
                *(double *)u = x;
        }
        for (int32_t f = 1; f <= (int32_t)t->neural_frames && act; f++) {
            if ((st = bl_worlds_encode(w, f, &act, 1, err)) != BL_OK)
                goto done;
            if (!tfin[0]) {
                act = 0;
                break;
            }
            if ((st = bl_controllers_act(ctl, w, u, f, eff, err)) != BL_OK)
                goto done;
            cursor++;
            if ((st = bl_worlds_accumulate(w, &em, f, &act, 1, err)) != BL_OK)
                goto done;
            act = tfin[0];
        }
        if (!act)
            break;
        if ((st = bl_worlds_advance(w, &em, &act, 1, err)) != BL_OK)
            goto done;
        if (!tfin[0])
            break;
        if (rec->frames &&
            (st = bl_run_replay_tick(rec->frames, w, ticks[0], NULL, 0, eff, em.cols, err)) !=
                BL_OK)
            goto done;
    }
    finish(c, w, true, cursor, e);
done:
    bl_controllers_destroy(ctl);
    bl_worlds_destroy(w);
    bl_free(table);
    bl_free(eff);
    bl_free(u);
    return st;
}

/* Ticks of the direct path's first uniform tile, and the most any tile
 * holds. Tiling never changes a result (spec/tasks.md §1.4: the null's tick
 * t reads the t-th uniform of its stream whatever the tiles), so the
 * direct path sizes its own tiles rather than the reservoir's noise tile:
 * short episodes (a null CartPole lasts about 22 ticks) draw little beyond
 * their end, long ones double the tile up to the cap and pay the general
 * last tick of a tile rarely. */
enum { DIRECT_FIRST_TILE = 32, DIRECT_MAX_TILE = 1024 };

bl_status bl_run_direct(const run_ctx *c, const batch *b, slot *s, slot_end *e,
                        bl_error *err)
{
    const bl_target_spec *t = s->t;
    const bool null = t->policy == BL_POLICY_REFERENCE_NULL;
    const bool probe = bl_task_is_probe(t->task_options.kind);
    const bool f32 = c->ev->dtype == BL_FLOAT32;
    /* Physical families read row o for tick o of a tile; probes read row
     * min(round, K - 1) of one table drawn up front (spec/tasks.md §7.3). */
    const size_t k_rounds = b->max_rounds ? b->max_rounds : 1;
    /* The uniforms live on the stack unless a probe has more rounds than a
     * tile holds; float32 runs round a copy (the null casts each uniform to
     * the run's type). */
    double stack64[DIRECT_MAX_TILE];
    float stack32[DIRECT_MAX_TILE];
    double *draws = stack64;
    float *draws32 = stack32;
    double *heap64 = NULL;
    float *heap32 = NULL;
    if (probe && k_rounds > DIRECT_MAX_TILE) {
        draws = heap64 = bl_mallocarray(k_rounds, sizeof *heap64);
        draws32 = heap32 = f32 ? bl_mallocarray(k_rounds, sizeof *heap32) : NULL;
    }
    bl_worlds *w = NULL;
    bl_controllers *ctl = NULL;
    bl_status st = !draws || (f32 && !draws32) ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = open_direct(c, s, &w, &ctl, err);
    if (st != BL_OK)
        goto done;
    bl_gen g;
    if (null)
        bl_gen_init(&g, &s->control_seed);
    int32_t guard = 1, cursor = 0;
    int64_t tile_ticks = DIRECT_FIRST_TILE;
    for (int64_t start = 0; start < t->horizon && guard; start += tile_ticks) {
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        if (start > 0 && tile_ticks < DIRECT_MAX_TILE)
            tile_ticks *= 2;
        /* Never past the horizon: the stream's later uniforms are not drawn. */
        if (tile_ticks > t->horizon - start)
            tile_ticks = t->horizon - start;
        const size_t rows = probe ? k_rounds : (size_t)tile_ticks;
        /* A physical null's tick t uses the t-th double of its control
         * stream: each tile simply takes the next rows. */
        if (null && (!probe || start == 0)) {
            bl_gen_random_fill(&g, draws, rows);
            if (f32)
                for (size_t r = 0; r < rows; r++)
                    draws32[r] = (float)draws[r];
        }
        const bl_matrix um = {c->ev->dtype, rows, 1, f32 ? (void *)draws32 : (void *)draws};
        if ((st = bl_worlds_run_control(w, ctl, null ? &um : NULL, (int32_t)tile_ticks, &guard,
                                        &cursor, err)) != BL_OK)
            goto done;
    }
    finish(c, w, true, cursor, e);
done:
    bl_controllers_destroy(ctl);
    bl_worlds_destroy(w);
    bl_free(heap64);
    bl_free(heap32);
    return st;
}
