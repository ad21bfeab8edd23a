/* One trial from its first frame to its last (spec/tasks.md §1.4): the
 * reservoir's loop of encode, model step, accumulate and advance with its
 * interventions and noise tiles, and the direct controllers' loops (frame by
 * frame, or fused in the worlds). Each runs on one thread with a model batch
 * and a world cohort of its own. */
#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"

#include "run_internal.h"

static void finish(const run_ctx *c, const bl_worlds *w, bool model_finite, int64_t frames,
                   slot_end *e)
{
    e->status = bl_worlds_status(w, 0, model_finite);
    e->failed = e->status == BL_TRIAL_FAILED;
    e->ticks = bl_worlds_ticks(w)[0];
    e->frames = frames;
    e->raw = e->status == BL_TRIAL_COMPLETED ? bl_worlds_outcome(w, 0) : NAN;
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

/* Writes x = (shuffle ? in[perm[r]] : in[r]) · (blind ? 0 : 1) · gain in
 * the dtype (spec/models.md §4 item 3). */
#define TRANSFORM(real_t)                                                      \
    do {                                                                       \
        const real_t *in_ = inputs;                                            \
        real_t *x_ = xbuf;                                                     \
        const real_t gain_ = (real_t)t->input_gain;                            \
        for (size_t r_ = 0; r_ < nr; r_++) {                                   \
            real_t v_ = shuffled ? in_[s->perm[r_]] : in_[r_];                 \
            if (blind)                                                         \
                v_ = v_ * (real_t)0;                                           \
            x_[r_] = v_ * gain_;                                               \
        }                                                                      \
    } while (0)

/* The slot's world cohort and model batch, and its noise tape when the
 * model draws noise. */
static bl_status open_reservoir(const run_ctx *c, const batch *b, const slot *s,
                                size_t tile_frames, bl_worlds **w, bl_model **m, bl_tape **tape,
                                bl_error *err)
{
    const bl_target_spec *t = s->t;
    const wiring *wr = &b->wirings[s->wiring];
    const size_t n = (size_t)t->nodes;
    const bool noisy = t->model == BL_MODEL_FALANDAYS && t->falandays.drive == BL_DRIVE_OOSAWA;
    bl_status st = bl_worlds_create((const bl_world_init *const *)&s->world, 1, &t->horizon,
                                    c->ev->warmup, c->ev->dtype, w, err);
    if (st == BL_OK)
        st = t->model == BL_MODEL_FALANDAYS
                 ? bl_model_create_falandays((const bl_falandays_init *const *)&wr->fal, 1,
                                             c->ev->dtype, m, err)
                 : bl_model_create_sorn((const bl_sorn_init *const *)&wr->sorn, 1, c->ev->dtype, m,
                                        err);
    /* Without the Oosawa drive the model never reads its noise (models.md
     * §2.5 step 5), so the tape need not be drawn: the rows are the same
     * whether or not anyone computes them. */
    if (st == BL_OK && noisy)
        st = bl_tape_create(tape, &s->drive_seed, n, tile_frames, BL_TAPE_NORMAL, err);
    return st;
}

/* Interventions take effect before the frames of tick number tick + 1
 * (one-based): input ones switch *blind or *shuffled on, the others freeze
 * the model. */
static bl_status apply_interventions(const bl_target_spec *t, int32_t tick, bl_model *m, int32_t *act,
                                     size_t *next_iv, bool *blind, bool *shuffled, bl_error *err)
{
    bl_status st = BL_OK;
    while (*next_iv < t->ninterventions && t->interventions[*next_iv].tick <= tick + 1) {
        const bl_intervention *iv = &t->interventions[(*next_iv)++];
        if (iv->tick != tick + 1)
            continue;
        if (iv->verb == BL_BLIND_INPUT)
            *blind = true;
        else if (iv->verb == BL_SHUFFLE_INPUT)
            *shuffled = true;
        else if (iv->verb == BL_FREEZE_WEIGHTS)
            st = bl_model_freeze_weights(m, act, 1, err);
        else
            st = bl_model_freeze_plasticity(m, act, 1, err);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

/* One frame's row of the float64 tape as the model's noise: float32
 * models get a rounded copy, float64 ones read the row in place. */
static void take_noise_row(const double *row, size_t n, void *noise, bl_matrix *nz)
{
    if (nz->dtype == BL_FLOAT32) {
        float *nf = noise;
        for (size_t i = 0; i < n; i++)
            nf[i] = (float)row[i];
    } else {
        nz->data = row;
    }
}

bl_status bl_run_reservoir(const run_ctx *c, const batch *b, slot *s, const capture *rec,
                           slot_end *e, bl_error *err)
{
    const bl_target_spec *t = s->t;
    const size_t nr = (size_t)t->n_inputs, n = (size_t)t->nodes;
    const int32_t frames = (int32_t)t->neural_frames;
    const size_t vsize = c->ev->dtype == BL_FLOAT32 ? sizeof(float) : sizeof(double);
    /* T / F ticks per tile, so a tile holds whole ticks of noise frames. */
    const int64_t tile_ticks = c->x->noise_tile_frames / t->neural_frames;
    const size_t tile_frames = (size_t)(tile_ticks * t->neural_frames);

    bl_worlds *w = NULL;
    bl_model *m = NULL;
    bl_tape *tape = NULL;
    void *xbuf = bl_calloc(nr, vsize), *noise = bl_calloc(n, vsize);
    bl_status st = !xbuf || !noise ? nomem(err) : BL_OK;
    if (st == BL_OK)
        st = open_reservoir(c, b, s, tile_frames, &w, &m, &tape, err);
    if (st == BL_OK && rec->probe)
        st = bl_run_probe_begin(s, n, rec->probe, err);
    if (st != BL_OK)
        goto done;

    const int32_t *ticks = bl_worlds_ticks(w), *done = bl_worlds_done(w),
                  *tfin = bl_worlds_finite(w), *mfin = bl_model_finite(m);
    const bl_matrix xin = {c->ev->dtype, 1, nr, xbuf};
    bl_matrix nz = {c->ev->dtype, 1, n, noise};
    const bl_matrix eff = {c->ev->dtype, 1, (size_t)t->n_effectors, bl_model_effector_data(m)};
    int32_t act = 1;
    int64_t cursor = 0, spikes = 0;
    bool blind = false, shuffled = false;
    size_t next_iv = 0;
    while (act) {
        if (interrupted(c)) {
            st = interrupt_status(err);
            goto done;
        }
        const int64_t tile_start = cursor;
        const double *rows = NULL;
        if (tape && (st = bl_tape_preview(tape, tile_frames, &rows, err)) != BL_OK)
            goto done;
        for (int64_t o = 0; o < tile_ticks && act; o++) {
            act = !done[0] && mfin[0] && tfin[0] && ticks[0] < t->horizon;
            if (!act)
                break;
            if ((st = apply_interventions(t, ticks[0], m, &act, &next_iv, &blind, &shuffled,
                                          err)) != BL_OK)
                goto done;
            for (int32_t f = 1; f <= frames && act; f++) {
                if ((st = bl_worlds_encode(w, f, &act, 1, err)) != BL_OK)
                    goto done;
                if (!tfin[0]) {
                    act = 0;
                    break;
                }
                const void *inputs = bl_worlds_inputs(w);
                if (c->ev->dtype == BL_FLOAT32)
                    TRANSFORM(float);
                else
                    TRANSFORM(double);
                if (rows)
                    take_noise_row(rows + (size_t)(cursor - tile_start) * n, n, noise, &nz);
                cursor++;
                if ((st = bl_model_step(m, &xin, &nz, &act, 1, err)) != BL_OK)
                    goto done;
                spikes += count_active(bl_model_activity_data(m), c->ev->dtype, n);
                if (!mfin[0]) {
                    act = 0;
                    break;
                }
                if ((st = bl_worlds_accumulate(w, &eff, f, &act, 1, err)) != BL_OK)
                    goto done;
                if (!tfin[0])
                    act = 0;
            }
            if (!act)
                break;
            if ((st = bl_worlds_advance(w, &eff, &act, 1, err)) != BL_OK)
                goto done;
            act = tfin[0];
            if (!act)
                break; /* the tick was not counted: nothing advanced */
            if (rec->probe)
                bl_run_probe_tick(rec->probe, ticks[0], c->ev->dtype, bl_model_activity_data(m));
            if (rec->frames &&
                (st = bl_run_replay_tick(rec->frames, w, ticks[0], bl_model_activity_data(m), n,
                                         eff.data, eff.cols, err)) != BL_OK)
                goto done;
        }
        if (tape && (st = bl_tape_consume(tape, (size_t)(cursor - tile_start), err)) != BL_OK)
            goto done;
    }
    finish(c, w, mfin[0] != 0, cursor, e);
    e->spikes = spikes;
done:
    bl_tape_destroy(tape);
    bl_model_destroy(m);
    bl_worlds_destroy(w);
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
