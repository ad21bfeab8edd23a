/* World cohorts (spec/tasks.md §1.2–§1.6, §8.2 casting, §8.3): creation
 * with validation and the cast to the cohort dtype, the three world
 * operations over the whole cohort, outcomes, trial status and snapshots.
 * The per-family arithmetic lives in worlds_kernel.h, instantiated once for
 * double and once for float. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "tasks/worlds_instances.h"

/* ---- per-world operations (worlds_internal.h) --------------------------- */

void bl_worlds_encode_world(bl_worlds *w, size_t b, int32_t frame, bool enabled)
{
    if (w->dtype == BL_FLOAT32)
        wk_encode_f32(w, b, frame, enabled);
    else
        wk_encode_f64(w, b, frame, enabled);
}

void bl_worlds_accumulate_world(bl_worlds *w, size_t b, const void *effectors, int32_t frame,
                                bool enabled)
{
    if (w->dtype == BL_FLOAT32)
        wk_accumulate_f32(w, b, effectors, frame, enabled);
    else
        wk_accumulate_f64(w, b, effectors, frame, enabled);
}

void bl_worlds_advance_world(bl_worlds *w, size_t b, const void *effectors, bool enabled)
{
    if (w->dtype == BL_FLOAT32)
        wk_advance_f32(w, b, effectors, enabled);
    else
        wk_advance_f64(w, b, effectors, enabled);
}

/* ---- creation ----------------------------------------------------------- */

/* Receptor widths that do not depend on options (§1.1); 0 for Tracking,
 * whose width is twice the number of sensor offsets. */
static size_t fixed_width(bl_task_kind kind)
{
    static const size_t widths[BL_TASK_COUNT] = {0, 46, 8, 3, 3, 5, 3, 7, 4, 8};
    return widths[kind];
}

/* Values as they will be after the cast must be finite (§8.2); the message
 * says which cast failed so a float32 underflow/overflow is not mistaken
 * for bad input. */
static bl_status check_finite(const double *v, size_t count, bl_dtype dtype, size_t b,
                              const char *what, bl_error *err)
{
    /* A float64 cohort keeps the values as they are: one pass that only
     * asks whether any exponent field is all ones (inf or NaN), which the
     * compiler can vectorise over large tables (Pong's draws, probe
     * stimuli); the element loop below then finds nothing and returns. */
    if (dtype == BL_FLOAT64) {
        uint64_t bad = 0;
        for (size_t i = 0; i < count; i++) {
            uint64_t bits;
            memcpy(&bits, &v[i], sizeof bits);
            bad |= (uint64_t)((bits & 0x7ff0000000000000u) == 0x7ff0000000000000u);
        }
        if (!bad)
            return BL_OK;
    }
    for (size_t i = 0; i < count; i++) {
        const double x = dtype == BL_FLOAT32 ? (double)(float)v[i] : v[i];
        if (!isfinite(x)) {
            if (dtype == BL_FLOAT32 && isfinite(v[i]))
                return bl_fail(err, BL_EVALUE,
                               "world %zu: %s must be finite after casting to float32", b, what);
            return bl_fail(err, BL_EVALUE, "world %zu: %s must be finite", b, what);
        }
    }
    return BL_OK;
}

/* Rows of a prepared world's draw table drawn up front (all of them unless
 * it came from bl_world_prepare_lazy). */
static size_t draws_present(const bl_world_init *wi)
{
    return wi->draws_ready && wi->draws_ready < wi->n_draws ? wi->draws_ready : wi->n_draws;
}

static bl_status check_world(const bl_world_init *wi, size_t b, bl_dtype dtype, bl_error *err)
{
    const size_t nr = wi->n_inputs;
    if (wi->kind == BL_TASK_TRACKING) {
        /* movement_amp divides the oracle's turn and must not vanish or
         * overflow in the run dtype (§8.2); checked before the generic
         * finiteness so the message names the real problem. */
        if (dtype == BL_FLOAT32) {
            const float amp = (float)wi->params[2];
            if (!isfinite(amp) || !(amp > 0))
                return bl_fail(err, BL_EVALUE,
                               "movement_amp must remain finite and positive after casting to "
                               "float32");
        } else if (!(wi->params[2] > 0) && isfinite(wi->params[2])) {
            return bl_fail(err, BL_EVALUE, "movement_amp must be positive");
        }
    }
    bl_status st = check_finite(wi->physical, 8, dtype, b, "physical", err);
    if (st == BL_OK)
        st = check_finite(wi->params, 4, dtype, b, "params", err);
    if (st != BL_OK)
        return st;
    if (wi->kind == BL_TASK_TRACKING || wi->kind == BL_TASK_PONG) {
        if (!wi->angles)
            return bl_fail(err, BL_EVALUE, "world %zu: %s needs receptor angles", b,
                           bl_task_name(wi->kind));
        if ((st = check_finite(wi->angles, nr, dtype, b, "angles", err)) != BL_OK)
            return st;
    }
    if (wi->kind == BL_TASK_PONG) {
        if (!wi->draws || wi->n_draws < 1)
            return bl_fail(err, BL_EVALUE, "world %zu: draws must have shape (K >= 1, 2)", b);
        if (wi->n_draws > INT32_MAX)
            return bl_fail(err, BL_EVALUE, "world %zu: draws has more rows than int32 holds", b);
        /* Rows not drawn yet will be random() values in [0, 1): finite in
         * either dtype. */
        if ((st = check_finite(wi->draws, draws_present(wi) * 2, dtype, b, "draws", err)) !=
            BL_OK)
            return st;
    }
    if (!bl_task_is_probe(wi->kind)) {
        if (wi->rounds != 0)
            return bl_fail(err, BL_EVALUE, "world %zu: %s worlds have no probe rounds", b,
                           bl_task_name(wi->kind));
        return BL_OK;
    }
    if (!wi->stimuli || wi->length < 1 || wi->length > INT32_MAX)
        return bl_fail(err, BL_EVALUE, "world %zu: stimuli must have shape (T >= 1, %zu)", b, nr);
    if (wi->rounds < 1 || wi->rounds > INT32_MAX)
        return bl_fail(err, BL_EVALUE, "world %zu: probes need at least one round", b);
    if (!wi->response_start || !wi->response_end || !wi->cue_ends || !wi->labels ||
        !wi->round_bounds)
        return bl_fail(err, BL_EVALUE, "world %zu: probe schedules must have %zu rounds", b,
                       wi->rounds);
    for (size_t k = 0; k < wi->rounds; k++)
        if (wi->labels[k] != 1 && wi->labels[k] != 2)
            return bl_fail(err, BL_EVALUE, "world %zu: labels must be 1 or 2", b);
    if (wi->kind == BL_TASK_REVERSAL_ADAPTATION) {
        /* The outcome reads rounds reversal-1 .. reversal+14. */
        if (wi->reversal < 2 || (size_t)wi->reversal - 1 + 15 >= wi->rounds)
            return bl_fail(err, BL_EVALUE, "world %zu: reversal must leave sixteen scored rounds",
                           b);
    }
    size_t cells;
    if (!bl_size_mul(wi->length, nr, &cells))
        return bl_fail(err, BL_EVALUE, "world %zu: stimuli are too large", b);
    return check_finite(wi->stimuli, cells, dtype, b, "stimuli", err);
}

static bl_status check_cohort(const bl_world_init *const *inits, size_t n, const int64_t *horizons,
                              int64_t warmup, bl_dtype dtype, bl_error *err)
{
    if (!inits || n == 0)
        return bl_fail(err, BL_EVALUE, "a world cohort needs at least one world");
    if (dtype != BL_FLOAT64 && dtype != BL_FLOAT32)
        return bl_fail(err, BL_EVALUE, "dtype must be float64 or float32");
    for (size_t b = 0; b < n; b++)
        if (!inits[b])
            return bl_fail(err, BL_EVALUE, "world %zu is missing", b);
    const bl_task_kind kind = inits[0]->kind;
    if ((int)kind < 0 || kind >= BL_TASK_COUNT)
        return bl_fail(err, BL_EVALUE, "unknown task family %d", (int)kind);
    const size_t nr = inits[0]->n_inputs;
    for (size_t b = 1; b < n; b++) {
        if (inits[b]->kind != kind)
            return bl_fail(err, BL_EVALUE, "a world cohort must hold one task family");
        if (inits[b]->n_inputs != nr)
            return bl_fail(err, BL_EVALUE, "a world cohort must hold one n_inputs");
    }
    const size_t want = fixed_width(kind);
    if (want ? nr != want : (nr < 2 || nr % 2 != 0))
        return bl_fail(err, BL_EVALUE, "%s worlds cannot have %zu receptors", bl_task_name(kind),
                       nr);
    if (warmup < 0 || warmup > INT32_MAX)
        return bl_fail(err, BL_EVALUE, "warmup must be an integer >= 0");
    if (warmup != 0 && (bl_task_is_probe(kind) || kind == BL_TASK_CARTPOLE_PLANK_EASY))
        return bl_fail(err, BL_EVALUE, "probes and Plank CartPole require warmup=0");
    if (!horizons)
        return bl_fail(err, BL_EVALUE, "horizons must hold one value per world");
    for (size_t b = 0; b < n; b++)
        if (horizons[b] < 0 || horizons[b] > INT32_MAX)
            return bl_fail(err, BL_EVALUE, "horizons must be int32 values >= 0");
    for (size_t b = 0; b < n; b++) {
        bl_status st = check_world(inits[b], b, dtype, err);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

void bl_worlds_destroy(bl_worlds *w)
{
    if (!w)
        return;
    bl_free(w->arena);
    bl_free(w);
}

static void store_real(bl_worlds *w, void *arr, size_t i, double v)
{
    if (w->dtype == BL_FLOAT32)
        ((float *)arr)[i] = (float)v;
    else
        ((double *)arr)[i] = v;
}

/* count values into arr[at..], cast to the dtype (a plain copy in float64). */
static void store_reals(bl_worlds *w, void *arr, size_t at, const double *v, size_t count)
{
    if (w->dtype == BL_FLOAT64) {
        memcpy((double *)arr + at, v, count * sizeof *v);
        return;
    }
    for (size_t i = 0; i < count; i++)
        ((float *)arr)[at + i] = (float)v[i];
}

static void load_world(bl_worlds *w, size_t b, const bl_world_init *wi, int64_t horizon)
{
    const size_t nr = w->width, m = w->max_rounds;
    store_reals(w, w->physical, b * 8, wi->physical, 8);
    store_reals(w, w->params, b * 4, wi->params, 4);
    if (wi->angles && (w->kind == BL_TASK_TRACKING || w->kind == BL_TASK_PONG))
        store_reals(w, w->angles, b * nr, wi->angles, nr);
    /* Non-Pong worlds keep one zero draw row and non-probes one zero
     * stimulus row, as the reference's padded tables do. */
    w->draw_lengths[b] = w->draws_ready[b] = 1;
    if (w->kind == BL_TASK_PONG) {
        const size_t present = draws_present(wi);
        store_reals(w, w->draws, b * w->max_draws * 2, wi->draws, present * 2);
        w->draw_lengths[b] = (int32_t)wi->n_draws;
        w->draws_ready[b] = (int32_t)present;
        w->draw_gens[b] = w->draw_gens0[b] = wi->draws_rng;
    }
    w->lengths[b] = 1;
    if (bl_task_is_probe(w->kind)) {
        store_reals(w, w->stimuli, b * w->max_length * nr, wi->stimuli, wi->length * nr);
        w->lengths[b] = (int32_t)wi->length;
        w->rounds[b] = (int32_t)wi->rounds;
        for (size_t k = 0; k < wi->rounds; k++) {
            w->response_start[b * m + k] = wi->response_start[k];
            w->response_end[b * m + k] = wi->response_end[k];
            w->cue_ends[b * m + k] = wi->cue_ends[k];
            w->labels[b * m + k] = wi->labels[k];
            w->round_bounds[(b * m + k) * 2] = wi->round_bounds[2 * k];
            w->round_bounds[(b * m + k) * 2 + 1] = wi->round_bounds[2 * k + 1];
        }
        w->reversal[b] = wi->reversal;
        w->feedback[b] = wi->feedback ? 1 : 0;
        store_real(w, w->outcome, b, NAN);
    }
    w->finite[b] = 1;
    w->horizons[b] = horizon;
}

bl_status bl_worlds_create(const bl_world_init *const *inits, size_t n, const int64_t *horizons,
                           int64_t warmup, bl_dtype dtype, bl_worlds **out, bl_error *err)
{
    if (out)
        *out = NULL;
    if (!out)
        return bl_fail(err, BL_EVALUE, "bl_worlds_create needs an output pointer");
    bl_status st = check_cohort(inits, n, horizons, warmup, dtype, err);
    if (st != BL_OK)
        return st;
    bl_worlds *w = bl_calloc(1, sizeof *w);
    if (!w)
        return bl_fail(err, BL_ENOMEM, "out of memory for a world cohort");
    w->kind = inits[0]->kind;
    w->dtype = dtype;
    w->n = n;
    w->width = inits[0]->n_inputs;
    w->frames = w->kind == BL_TASK_CARTPOLE_PLANK_EASY ? 24 : 1;
    w->warmup = (int32_t)warmup;
    w->max_rounds = w->max_length = w->max_draws = w->snap_draws = 1;
    for (size_t b = 0; b < n; b++) {
        const bl_world_init *wi = inits[b];
        if (bl_task_is_probe(w->kind)) {
            if (wi->rounds > w->max_rounds)
                w->max_rounds = wi->rounds;
            if (wi->length > w->max_length)
                w->max_length = wi->length;
        }
        if (w->kind == BL_TASK_PONG && draws_present(wi) > w->max_draws)
            w->max_draws = draws_present(wi);
        if (w->kind == BL_TASK_PONG && wi->n_draws > w->snap_draws)
            w->snap_draws = wi->n_draws;
    }
    const size_t rs = bl_dtype_size(dtype), i4 = sizeof(int32_t);
    const size_t nr = w->width, m = w->max_rounds;
    size_t stim_row, draw_row;
    if (!bl_size_mul(w->max_length, nr, &stim_row) || !bl_size_mul(w->max_draws, 2, &draw_row))
        goto fail;
    /* Every array in one zeroed block (one allocation a cohort, however many
     * fields), each starting a multiple of 64 bytes into it. */
    const struct {
        void **field;
        size_t per, size;
    } layout[] = {
        {&w->physical, 8, rs},          {&w->inputs, nr, rs},
        {&w->votes, 2, rs},             {&w->last, 2, rs},
        {&w->evidence, 2, rs},          {&w->outcome, 1, rs},
        {&w->total, 1, rs},             {(void **)&w->ticks, 1, i4},
        {(void **)&w->round, 1, i4},    {(void **)&w->done, 1, i4},
        {(void **)&w->finite, 1, i4},   {(void **)&w->scored, 1, i4},
        {(void **)&w->hits, 1, i4},     {(void **)&w->misses, 1, i4},
        {(void **)&w->rally, 1, i4},    {(void **)&w->longest_rally, 1, i4},
        {(void **)&w->decisions, m, i4}, {(void **)&w->ties, m, i4},
        {&w->params, 4, rs},            {&w->angles, nr, rs},
        {&w->draws, draw_row, rs},      {&w->stimuli, stim_row, rs},
        {(void **)&w->lengths, 1, i4},  {(void **)&w->draw_lengths, 1, i4},
        {(void **)&w->rounds, 1, i4},   {(void **)&w->response_start, m, i4},
        {(void **)&w->response_end, m, i4}, {(void **)&w->cue_ends, m, i4},
        {(void **)&w->labels, m, i4},   {(void **)&w->round_bounds, 2 * m, i4},
        {(void **)&w->reversal, 1, i4}, {(void **)&w->feedback, 1, i4},
        {(void **)&w->horizons, 1, sizeof(int64_t)},
        {(void **)&w->draws_ready, 1, i4},
        {(void **)&w->draw_gens, w->kind == BL_TASK_PONG, sizeof(bl_gen)},
        {(void **)&w->draw_gens0, w->kind == BL_TASK_PONG, sizeof(bl_gen)},
    };
    enum { COUNT = sizeof layout / sizeof layout[0] };
    size_t offsets[COUNT], total = 0;
    for (size_t i = 0; i < COUNT; i++) {
        size_t bytes;
        if (!bl_size_mul(n, layout[i].per, &bytes) ||
            !bl_size_mul(bytes, layout[i].size, &bytes) || total > SIZE_MAX - 64 - bytes)
            goto fail;
        offsets[i] = total;
        total = (total + bytes + 63) / 64 * 64;
    }
    unsigned char *arena = w->arena = bl_calloc(total, 1);
    if (!arena)
        goto fail;
    for (size_t i = 0; i < COUNT; i++)
        *layout[i].field = arena + offsets[i];
    for (size_t b = 0; b < n; b++)
        load_world(w, b, inits[b], horizons[b]);
    *out = w;
    return BL_OK;
fail:
    bl_worlds_destroy(w);
    return bl_fail(err, BL_ENOMEM, "out of memory for a world cohort of %zu worlds", n);
}

/* ---- accessors ---------------------------------------------------------- */

size_t bl_worlds_count(const bl_worlds *w) { return w->n; }
size_t bl_worlds_inputs_width(const bl_worlds *w) { return w->width; }
int32_t bl_worlds_frames(const bl_worlds *w) { return w->frames; }
bl_dtype bl_worlds_dtype(const bl_worlds *w) { return w->dtype; }
const void *bl_worlds_inputs(const bl_worlds *w) { return w->inputs; }
const int32_t *bl_worlds_ticks(const bl_worlds *w) { return w->ticks; }
const int32_t *bl_worlds_done(const bl_worlds *w) { return w->done; }
const int32_t *bl_worlds_finite(const bl_worlds *w) { return w->finite; }
const int32_t *bl_worlds_rounds_done(const bl_worlds *w) { return w->round; }

double bl_worlds_outcome(const bl_worlds *w, size_t b)
{
    BL_ASSERT(b < w->n);
    return bl_worlds_real(w, w->outcome, b);
}

/* ---- the three operations over the cohort ------------------------------- */

static bl_status check_enabled(const bl_worlds *w, const int32_t *enabled, size_t nenabled,
                               bl_error *err)
{
    if (!enabled || nenabled != w->n)
        return bl_fail(err, BL_EVALUE, "enabled must be an int32 array of length %zu", w->n);
    return BL_OK;
}

static bl_status check_frame(const bl_worlds *w, int32_t frame, bl_error *err)
{
    if (frame < 1 || frame > w->frames)
        return bl_fail(err, BL_EVALUE, "frame must lie in 1..%d, got %d", (int)w->frames,
                       (int)frame);
    return BL_OK;
}

static bl_status check_effectors(const bl_worlds *w, const bl_matrix *e, bl_error *err)
{
    if (!e || !e->data || e->dtype != w->dtype || e->rows != w->n || e->cols != 2)
        return bl_fail(err, BL_EVALUE, "effectors must be a [%zu][2] %s array", w->n,
                       bl_dtype_name(w->dtype));
    return BL_OK;
}

bl_status bl_worlds_encode(bl_worlds *w, int32_t frame, const int32_t *enabled, size_t nenabled,
                           bl_error *err)
{
    bl_status st = check_frame(w, frame, err);
    if (st == BL_OK)
        st = check_enabled(w, enabled, nenabled, err);
    if (st != BL_OK)
        return st;
    for (size_t b = 0; b < w->n; b++)
        bl_worlds_encode_world(w, b, frame, enabled[b] != 0);
    return BL_OK;
}

/* accumulate (at `frame`) or advance: the two operations that take every
 * world's row of effectors. The run calls them once a frame, so this is
 * inlined into both with a constant `accumulate`: no call and no branch is
 * added to that path. */
static inline __attribute__((always_inline)) bl_status
apply_effectors(bl_worlds *w, const bl_matrix *effectors, bool accumulate, int32_t frame,
                const int32_t *enabled, size_t nenabled, bl_error *err)
{
    bl_status st = check_effectors(w, effectors, err);
    if (st == BL_OK && accumulate)
        st = check_frame(w, frame, err);
    if (st == BL_OK)
        st = check_enabled(w, enabled, nenabled, err);
    if (st != BL_OK)
        return st;
    const size_t rs = bl_dtype_size(w->dtype);
    const unsigned char *e = effectors->data;
    for (size_t b = 0; b < w->n; b++) {
        if (accumulate)
            bl_worlds_accumulate_world(w, b, e + b * 2 * rs, frame, enabled[b] != 0);
        else
            bl_worlds_advance_world(w, b, e + b * 2 * rs, enabled[b] != 0);
    }
    return BL_OK;
}

bl_status bl_worlds_accumulate(bl_worlds *w, const bl_matrix *effectors, int32_t frame,
                               const int32_t *enabled, size_t nenabled, bl_error *err)
{
    return apply_effectors(w, effectors, true, frame, enabled, nenabled, err);
}

bl_status bl_worlds_advance(bl_worlds *w, const bl_matrix *effectors, const int32_t *enabled,
                            size_t nenabled, bl_error *err)
{
    return apply_effectors(w, effectors, false, 0, enabled, nenabled, err);
}

/* ---- status (§1.5) ------------------------------------------------------- */

bl_trial_status bl_worlds_status(const bl_worlds *w, size_t b, bool model_finite)
{
    BL_ASSERT(b < w->n);
    if (!model_finite || !w->finite[b])
        return BL_TRIAL_FAILED;
    const bool finished = w->done[b] || w->ticks[b] >= w->horizons[b];
    /* A finished trial without a finite outcome (a truncated probe) is not
     * complete (platform.md §4.9). */
    if (finished && isfinite(bl_worlds_outcome(w, b)))
        return BL_TRIAL_COMPLETED;
    return BL_TRIAL_INCOMPLETE;
}

const char *bl_trial_status_name(bl_trial_status s)
{
    switch (s) {
    case BL_TRIAL_COMPLETED: return "completed";
    case BL_TRIAL_FAILED: return "failed";
    case BL_TRIAL_INCOMPLETE: return "incomplete";
    }
    return "unknown";
}

/* ---- snapshots (§1.6) ---------------------------------------------------- */

/* One snapshot entry from real (dtype) or int32 storage, values converted
 * to double. */
typedef struct snap_field {
    const char *name;
    int ndim;
    size_t d0, d1;
    bool integer;
    const void *real_src;     /* dtype values, or NULL */
    const int32_t *int_src;   /* int32 values, or NULL */
    double constant;          /* when both sources are NULL */
} snap_field;

/* World b's whole reset table, [snap_draws][2] as doubles, zero padded:
 * the rows drawn up front, then the rows still in its generator, drawn
 * from a copy taken at creation (so every snapshot shows the same table,
 * whatever the world has consumed since), cast to the dtype as the
 * cohort casts the rows it stores. */
static void snapshot_draws(const bl_worlds *w, size_t b, double *data)
{
    const size_t ready = (size_t)w->draws_ready[b];
    for (size_t i = 0; i < ready * 2; i++)
        data[i] = bl_worlds_real(w, w->draws, b * w->max_draws * 2 + i);
    if (w->kind != BL_TASK_PONG)
        return;
    bl_gen g = w->draw_gens0[b];
    for (size_t i = ready * 2; i < (size_t)w->draw_lengths[b] * 2; i++) {
        const double v = bl_gen_random(&g);
        data[i] = w->dtype == BL_FLOAT32 ? (double)(float)v : v;
    }
}

bl_status bl_worlds_snapshot(const bl_worlds *w, size_t b, bl_snapshot **out, bl_error *err)
{
    *out = NULL;
    if (b >= w->n)
        return bl_fail(err, BL_EVALUE, "snapshot world %zu is out of range for a cohort of %zu",
                       b, w->n);
    const size_t rs = bl_dtype_size(w->dtype), nr = w->width, m = w->max_rounds;
    const unsigned char *phys = (const unsigned char *)w->physical + b * 8 * rs;
#define RS(arr, per) ((const unsigned char *)(arr) + b * (per) * rs)
    const snap_field common[] = {
        {"physical", 1, 8, 1, false, phys, NULL, 0},
        {"inputs", 1, nr, 1, false, RS(w->inputs, nr), NULL, 0},
        {"votes", 1, 2, 1, false, RS(w->votes, 2), NULL, 0},
        {"last", 1, 2, 1, false, RS(w->last, 2), NULL, 0},
        {"evidence", 1, 2, 1, false, RS(w->evidence, 2), NULL, 0},
        {"ticks", 0, 1, 1, true, NULL, w->ticks + b, 0},
        {"round", 0, 1, 1, true, NULL, w->round + b, 0},
        {"done", 0, 1, 1, true, NULL, w->done + b, 0},
        {"finite", 0, 1, 1, true, NULL, w->finite + b, 0},
        {"outcome", 0, 1, 1, false, RS(w->outcome, 1), NULL, 0},
        {"total", 0, 1, 1, false, RS(w->total, 1), NULL, 0},
        {"scored", 0, 1, 1, true, NULL, w->scored + b, 0},
        {"hits", 0, 1, 1, true, NULL, w->hits + b, 0},
        {"misses", 0, 1, 1, true, NULL, w->misses + b, 0},
        {"rally", 0, 1, 1, true, NULL, w->rally + b, 0},
        {"longest_rally", 0, 1, 1, true, NULL, w->longest_rally + b, 0},
        {"decisions", 1, m, 1, true, NULL, w->decisions + b * m, 0},
        {"ties", 1, m, 1, true, NULL, w->ties + b * m, 0},
        {"stimuli", 2, w->max_length, nr, false, RS(w->stimuli, w->max_length * nr), NULL, 0},
        {"lengths", 0, 1, 1, true, NULL, w->lengths + b, 0},
        {"response_start", 1, m, 1, true, NULL, w->response_start + b * m, 0},
        {"response_end", 1, m, 1, true, NULL, w->response_end + b * m, 0},
        {"cue_ends", 1, m, 1, true, NULL, w->cue_ends + b * m, 0},
        {"labels", 1, m, 1, true, NULL, w->labels + b * m, 0},
        {"round_bounds", 2, m, 2, true, NULL, w->round_bounds + b * m * 2, 0},
        {"rounds", 0, 1, 1, true, NULL, w->rounds + b, 0},
        {"reversal", 0, 1, 1, true, NULL, w->reversal + b, 0},
        {"feedback", 0, 1, 1, true, NULL, w->feedback + b, 0},
        {"params", 1, 4, 1, false, RS(w->params, 4), NULL, 0},
        {"angles", 1, nr, 1, false, RS(w->angles, nr), NULL, 0},
        /* Filled below: rows drawn up front and those still to come. */
        {"draws", 2, w->snap_draws, 2, false, NULL, NULL, 0},
        {"draw_lengths", 0, 1, 1, true, NULL, w->draw_lengths + b, 0},
        {"tick", 0, 1, 1, true, NULL, w->ticks + b, 0},
        {"raw_outcome", 0, 1, 1, false, RS(w->outcome, 1), NULL, 0},
        {"warmup", 0, 1, 1, true, NULL, NULL, (double)w->warmup},
        {"horizon", 0, 1, 1, true, NULL, NULL, (double)w->horizons[b]},
    };
#undef RS
    const snap_field tracking[] = {
        {"theta", 0, 1, 1, false, phys, NULL, 0},
        {"phi", 0, 1, 1, false, phys + rs, NULL, 0},
        {"direction", 0, 1, 1, false, phys + 2 * rs, NULL, 0},
    };
    const snap_field pong[] = {
        {"ball_x", 0, 1, 1, false, phys, NULL, 0},
        {"ball_y", 0, 1, 1, false, phys + rs, NULL, 0},
        {"paddle_y", 0, 1, 1, false, phys + 2 * rs, NULL, 0},
        {"vx", 0, 1, 1, false, phys + 3 * rs, NULL, 0},
        {"vy", 0, 1, 1, false, phys + 4 * rs, NULL, 0},
        {"width", 0, 1, 1, false, NULL, NULL, BL_PONG_WIDTH},
        {"height", 0, 1, 1, false, NULL, NULL, BL_PONG_HEIGHT},
        {"paddle_x", 0, 1, 1, false, NULL, NULL, BL_PONG_PADDLE_X},
        {"paddle_h", 0, 1, 1, false, NULL, NULL, BL_PONG_PADDLE_H},
        {"paddle_min_y", 0, 1, 1, false, NULL, NULL, BL_PONG_PADDLE_MIN_Y},
        {"paddle_max_y", 0, 1, 1, false, NULL, NULL, BL_PONG_PADDLE_MAX_Y},
        {"ball_r", 0, 1, 1, false, NULL, NULL, BL_PONG_BALL_R},
    };
    const snap_field cartpole[] = {
        {"x", 0, 1, 1, false, phys, NULL, 0},
        {"x_dot", 0, 1, 1, false, phys + rs, NULL, 0},
        {"theta", 0, 1, 1, false, phys + 2 * rs, NULL, 0},
        {"theta_dot", 0, 1, 1, false, phys + 3 * rs, NULL, 0},
        {"max_x", 0, 1, 1, false, NULL, NULL, BL_CARTPOLE_MAX_X},
        {"pole_length", 0, 1, 1, false, NULL, NULL, BL_CARTPOLE_POLE_LENGTH},
    };
    const snap_field *extra = NULL;
    size_t nextra = 0;
    if (w->kind == BL_TASK_TRACKING) {
        extra = tracking;
        nextra = sizeof tracking / sizeof tracking[0];
    } else if (w->kind == BL_TASK_PONG) {
        extra = pong;
        nextra = sizeof pong / sizeof pong[0];
    } else if (w->kind == BL_TASK_CARTPOLE_PLANK_EASY) {
        extra = cartpole;
        nextra = sizeof cartpole / sizeof cartpole[0];
    }
    const size_t ncommon = sizeof common / sizeof common[0];
    bl_snapshot *s = NULL;
    bl_status st = bl_snapshot_create(ncommon + nextra, &s, err);
    if (st != BL_OK)
        return st;
    for (size_t k = 0; k < ncommon + nextra; k++) {
        const snap_field *f = k < ncommon ? &common[k] : &extra[k - ncommon];
        double *data;
        st = bl_snapshot_entry(s, k, f->name, f->ndim, f->d0, f->d1, f->integer, &data, err);
        if (st != BL_OK) {
            bl_snapshot_destroy(s);
            return st;
        }
        const size_t count = f->d0 * f->d1;
        if (strcmp(f->name, "draws") == 0) {
            snapshot_draws(w, b, data);
            continue;
        }
        for (size_t i = 0; i < count; i++) {
            if (f->real_src)
                data[i] = w->dtype == BL_FLOAT32 ? (double)((const float *)f->real_src)[i]
                                                 : ((const double *)f->real_src)[i];
            else if (f->int_src)
                data[i] = (double)f->int_src[i];
            else
                data[i] = f->constant;
        }
    }
    *out = s;
    return BL_OK;
}
