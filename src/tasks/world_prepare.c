/* World preparation and structural validation (spec/tasks.md §1.2, §2.2,
 * §3.2, §4.2, §5.4–§5.10, §7.1, §8.2).
 *
 * prepare makes every random draw of one world, on the host, in float64,
 * from the world stream's generator, in the reference's call order: the
 * draw order is part of world identity (paired targets must see the same
 * worlds), so nothing here may draw conditionally on anything but the
 * options. The prepared world mirrors the reference's InitialState: ordinary
 * (non-probe) worlds carry a one-row zero stimulus table, a one-row zero
 * draw table (unless Pong) and empty schedules, so that a cohort can treat
 * every world alike. */
#include <math.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/task.h"

#define BL_TWO_PI (2.0 * 3.141592653589793) /* 2 * math.pi, as Python forms it */
#define BL_HALF_PI (3.141592653589793 / 2.0)

void bl_world_init_destroy(bl_world_init *w)
{
    if (!w)
        return;
    bl_free(w->angles);
    bl_free(w->draws);
    bl_free(w->stimuli);
    bl_free(w->response_start);
    bl_free(w->response_end);
    bl_free(w->cue_ends);
    bl_free(w->labels);
    bl_free(w->round_bounds);
    bl_free(w->meta_distractor_labels);
    bl_free(w->meta_distractor_starts);
    bl_free(w);
}

/* params and angles of §1.2, derived from the options alone. `angles` has
 * n_inputs entries (tracking, pong) or is NULL. */
static void world_params(const bl_task_options *o, double params[4], double *angles)
{
    memset(params, 0, 4 * sizeof *params);
    switch (o->kind) {
    case BL_TASK_TRACKING: {
        params[0] = o->sensory_gain;
        params[1] = o->stim_speed_rad;
        params[2] = o->movement_amp;
        /* The +eye block first, then the -eye block (§1.2, pitfall 1). */
        double eyes[2] = {o->eye_offset_deg, -o->eye_offset_deg};
        size_t r = 0;
        for (int e = 0; e < 2; e++)
            for (size_t i = 0; i < o->n_sensor_offsets; i++)
                angles[r++] = eyes[e] + o->sensor_offsets_deg[i];
        break;
    }
    case BL_TASK_PONG:
        params[0] = o->sensory_gain;
        for (int i = 0; i < 46; i++)
            angles[i] = (double)(-90 + 4 * i);
        break;
    case BL_TASK_CARTPOLE_PLANK_EASY:
        params[0] = 2.4;
        params[1] = 2.0;
        params[2] = 0.2095;
        params[3] = 2.0;
        break;
    default:
        break;
    }
}

static bool has_angles(bl_task_kind kind)
{
    return kind == BL_TASK_TRACKING || kind == BL_TASK_PONG;
}

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a prepared world");
}

/* Allocates the probe schedule of m rounds and a zero stimulus table of
 * `length` rows. */
static bl_status alloc_probe(bl_world_init *w, size_t length, size_t m, bl_error *err)
{
    w->length = length;
    w->rounds = m;
    w->stimuli = bl_calloc(length, w->n_inputs * sizeof(double));
    w->response_start = bl_calloc(m, sizeof(int32_t));
    w->response_end = bl_calloc(m, sizeof(int32_t));
    w->cue_ends = bl_calloc(m, sizeof(int32_t));
    w->labels = bl_calloc(m, sizeof(int32_t));
    w->round_bounds = bl_calloc(m, 2 * sizeof(int32_t));
    if (!w->stimuli || !w->response_start || !w->response_end || !w->cue_ends || !w->labels ||
        !w->round_bounds)
        return nomem(err);
    return BL_OK;
}

/* S[from:to][col] = value, with Python's slice clipping at the table end. */
static void fill(bl_world_init *w, int64_t from, int64_t to, size_t col, double value)
{
    if (to > (int64_t)w->length)
        to = (int64_t)w->length;
    for (int64_t t = from < 0 ? 0 : from; t < to; t++)
        w->stimuli[(size_t)t * w->n_inputs + col] = value;
}

/* One round of a single-episode probe: bounds (0, L). */
static void single_round(bl_world_init *w, int64_t response_start, int64_t cue_end, int32_t label)
{
    w->response_start[0] = (int32_t)response_start;
    w->response_end[0] = (int32_t)w->length;
    w->cue_ends[0] = (int32_t)cue_end;
    w->labels[0] = label;
    w->round_bounds[0] = 0;
    w->round_bounds[1] = (int32_t)w->length;
}

/* _pulses(label): n pulses, the last one a fresh fair draw, the others a
 * shuffled block of `left` ones and n-1-left twos (§5.7). */
static bl_status pulses(bl_gen *rng, int64_t n, double fraction, int32_t label, int32_t *out,
                        bl_error *err)
{
    double signed_fraction = label == 1 ? fraction : -fraction;
    /* int() of the product, as the reference truncates it. */
    int64_t left_count = (int64_t)((double)n * (1.0 + signed_fraction) / 2.0);
    int32_t final = (int32_t)bl_gen_integers(rng, 1, 3);
    int64_t left = left_count - (final == 1);
    if (left < 0 || left > n - 1)
        return bl_fail(err, BL_EVALUE, "negative dimensions are not allowed");
    for (int64_t i = 0; i < n - 1; i++)
        out[i] = i < left ? 1 : 2;
    bl_gen_shuffle(rng, out, (size_t)(n - 1), sizeof *out);
    out[n - 1] = final;
    return BL_OK;
}

static void cue_pattern(bl_world_init *w, bl_cue_mode mode, int64_t c, size_t col)
{
    if (mode != BL_CUE_HIDDEN)
        fill(w, 0, c, col, 1.0);
    if (mode == BL_CUE_PERSISTENT)
        fill(w, 0, (int64_t)w->length, col, 1.0);
}

/* The delayed cue: one of two cues, a delay drawn from `delays`, then the response. */
static bl_status prepare_delayed_cue(const bl_task_options *o, int64_t c, int64_t r, bl_gen *rng,
                                     bl_world_init *w, bl_error *err)
{
    bl_status st;
    int32_t cue = (int32_t)bl_gen_integers(rng, 1, 3);
    int64_t delay = o->delays[bl_gen_choice_index(rng, o->n_delays)];
    const int64_t length = c + delay + r;
    if ((st = alloc_probe(w, (size_t)length, 1, err)) != BL_OK)
        return st;
    cue_pattern(w, o->cue_mode, c, (size_t)(cue - 1));
    single_round(w, c + delay, c, cue);
    w->meta_cue = cue;
    w->meta_delay = (int32_t)delay;
    return BL_OK;
}

/* Recall under interference: a cue, then k distractors spread over the delay. */
static bl_status prepare_recall_interference(const bl_task_options *o, int64_t c, int64_t length,
                                             bl_gen *rng, bl_world_init *w, bl_error *err)
{
    bl_status st;
    int32_t cue = (int32_t)bl_gen_integers(rng, 1, 3);
    int64_t k = o->distractors, wt = o->distractor_ticks, delay = o->delay;
    if ((st = alloc_probe(w, (size_t)length, 1, err)) != BL_OK)
        return st;
    if (k > 0) {
        w->meta_distractor_labels = bl_mallocarray((size_t)k, sizeof(int32_t));
        w->meta_distractor_starts = bl_mallocarray((size_t)k, sizeof(int32_t));
        if (!w->meta_distractor_labels || !w->meta_distractor_starts)
            return nomem(err);
    }
    w->meta_n_distractors = (size_t)k;
    for (int64_t i = 0; i < k; i++)
        w->meta_distractor_labels[i] = (int32_t)bl_gen_integers(rng, 1, 3);
    cue_pattern(w, o->cue_mode, c, (size_t)(cue - 1));
    for (int64_t i = 1; i <= k; i++) {
        /* delay - w > 0 whenever k > 0 (validation), so C's division is
         * Python's floor division here. */
        int64_t start = c + i * (delay - wt) / (k + 1);
        w->meta_distractor_starts[i - 1] = (int32_t)start;
        int32_t label = o->distractor_mode == BL_DISTRACTOR_MATCHED    ? cue
                        : o->distractor_mode == BL_DISTRACTOR_OPPOSITE ? 3 - cue
                                                                       : w->meta_distractor_labels[i - 1];
        if (o->distractor_mode != BL_DISTRACTOR_ABSENT) {
            fill(w, start, start + wt, 0, 0.0);
            fill(w, start, start + wt, 1, 0.0);
            fill(w, start, start + wt, (size_t)(label - 1), 1.0);
        }
    }
    single_round(w, c + delay, c, cue);
    w->meta_cue = cue;
    return BL_OK;
}

/* Delayed XOR: two cues a gap apart; the label says whether they match. */
static bl_status prepare_delayed_xor(const bl_task_options *o, int64_t c, int64_t length,
                                     bl_gen *rng, bl_world_init *w, bl_error *err)
{
    bl_status st;
    int32_t a = (int32_t)bl_gen_integers(rng, 1, 3);
    int32_t b = (int32_t)bl_gen_integers(rng, 1, 3);
    if ((st = alloc_probe(w, (size_t)length, 1, err)) != BL_OK)
        return st;
    int64_t second = c + o->gap;
    if (o->cue_mode != BL_CUE_HIDDEN) {
        fill(w, 0, c, (size_t)(a - 1), 1.0);
        fill(w, second, second + c, (size_t)(b + 1), 1.0);
    }
    if (o->cue_mode == BL_CUE_PERSISTENT) {
        fill(w, 0, length, (size_t)(a - 1), 1.0);
        fill(w, second, length, (size_t)(b + 1), 1.0);
    }
    single_round(w, 2 * c + o->gap, c, a == b ? 1 : 2);
    /* The first cue; the second is a when the label is 1, else 3 - a. */
    w->meta_cue = a;
    return BL_OK;
}

/* Evidence accumulation (one stream of pulses) and context integration (two
 * streams, the context cue saying which one holds the label). */
static bl_status prepare_pulse_streams(const bl_task_options *o, int64_t c, int64_t length,
                                       bl_gen *rng, bl_world_init *w, bl_error *err)
{
    bl_status st;
    int64_t n = o->pulse_count, p = o->pulse_ticks;
    int32_t label, streams[2];
    size_t nstreams;
    if (o->kind == BL_TASK_EVIDENCE_ACCUMULATION) {
        label = (int32_t)bl_gen_integers(rng, 1, 3);
        streams[0] = label;
        nstreams = 1;
    } else {
        int32_t context = (int32_t)bl_gen_integers(rng, 1, 3);
        label = (int32_t)bl_gen_integers(rng, 1, 3);
        int32_t other_draw = (int32_t)bl_gen_integers(rng, 1, 3);
        int32_t other = o->congruency == BL_CONGRUENCY_CONGRUENT      ? label
                        : o->congruency == BL_CONGRUENCY_CONFLICTING ? 3 - label
                                                                      : other_draw;
        streams[0] = context == 1 ? label : other;
        streams[1] = context == 1 ? other : label;
        nstreams = 2;
        w->meta_context = context;
        w->meta_congruent = label == other;
    }
    if ((st = alloc_probe(w, (size_t)length, 1, err)) != BL_OK)
        return st;
    int32_t *seq = bl_mallocarray((size_t)n, sizeof *seq);
    if (!seq)
        return nomem(err);
    for (size_t s = 0; s < nstreams; s++) {
        if ((st = pulses(rng, n, o->evidence_fraction, streams[s], seq, err)) != BL_OK) {
            bl_free(seq);
            return st;
        }
        for (int64_t i = 0; i < n; i++) {
            if (o->kind == BL_TASK_EVIDENCE_ACCUMULATION) {
                if (o->input_mode == BL_VISIBLE)
                    fill(w, i * p, (i + 1) * p, (size_t)(seq[i] - 1), 1.0);
            } else {
                fill(w, c + i * p, c + (i + 1) * p, (size_t)(2 + 2 * (int64_t)s + seq[i] - 1),
                     1.0);
            }
        }
    }
    bl_free(seq);
    if (o->kind == BL_TASK_CONTEXT_INTEGRATION)
        cue_pattern(w, o->context_mode, c, (size_t)(w->meta_context - 1));
    single_round(w, c + n * p, o->kind == BL_TASK_EVIDENCE_ACCUMULATION ? p : c, label);
    return BL_OK;
}

/* Temporal order: two cues in an order the label names. */
static bl_status prepare_temporal_order(const bl_task_options *o, int64_t c, int64_t r,
                                        int64_t length, bl_gen *rng, bl_world_init *w,
                                        bl_error *err)
{
    bl_status st;
    int32_t label = (int32_t)bl_gen_integers(rng, 1, 3);
    if ((st = alloc_probe(w, (size_t)length, 1, err)) != BL_OK)
        return st;
    int64_t gap = o->gap;
    if (o->input_mode == BL_VISIBLE) {
        fill(w, 0, c, (size_t)(label - 1), 1.0);
        fill(w, c + gap, 2 * c + gap, (size_t)(2 - label), 1.0);
    }
    fill(w, 2 * c + gap, length - r, 2, 1.0);
    single_round(w, length - r, c, label);
    return BL_OK;
}

/* Reversal adaptation: rounds of cue, response and feedback, the mapping
 * swapped from a drawn round on. */
static bl_status prepare_reversal_adaptation(const bl_task_options *o, int64_t c, int64_t r,
                                             int64_t length, bl_gen *rng, bl_world_init *w,
                                             bl_error *err)
{
    bl_status st;
    bool mapping = bl_gen_integers(rng, 0, 2) != 0;
    int64_t reversal = bl_gen_integers(rng, o->reversal_range[0], o->reversal_range[1] + 1);
    int64_t rounds = o->rounds, f = o->feedback_ticks, period = c + r + f;
    if ((st = alloc_probe(w, (size_t)length, (size_t)rounds, err)) != BL_OK)
        return st;
    for (int64_t k = 0; k < rounds; k++) {
        int32_t cue = (int32_t)bl_gen_integers(rng, 1, 3);
        int64_t start = k * period;
        fill(w, start, start + c + r, (size_t)(cue - 1), 1.0);
        fill(w, start + c + r, start + period, 3, 1.0);
        w->response_start[k] = (int32_t)(start + c);
        w->response_end[k] = (int32_t)(start + c + r);
        w->cue_ends[k] = (int32_t)(start + c);
        bool swapped = mapping != (k + 1 >= reversal);
        w->labels[k] = swapped ? 3 - cue : cue;
        w->round_bounds[2 * k] = (int32_t)start;
        w->round_bounds[2 * k + 1] = (int32_t)(start + period);
    }
    w->reversal = (int32_t)reversal;
    w->meta_initial_mapping = mapping;
    w->feedback = o->feedback_mode == BL_VISIBLE;
    return BL_OK;
}

static bl_status prepare_probe(const bl_task_options *o, const bl_task_definition *d,
                               bl_gen *rng, bl_world_init *w, bl_error *err)
{
    /* evidence_accumulation has no cue_ticks: c is 0 there (pitfall 19). */
    int64_t c = o->kind == BL_TASK_EVIDENCE_ACCUMULATION ? 0 : o->cue_ticks;
    int64_t r = o->response_ticks;
    int64_t length = d->default_horizon;
    bl_status st;
    switch (o->kind) {
    case BL_TASK_DELAYED_CUE:
        st = prepare_delayed_cue(o, c, r, rng, w, err);
        break;
    case BL_TASK_RECALL_INTERFERENCE:
        st = prepare_recall_interference(o, c, length, rng, w, err);
        break;
    case BL_TASK_DELAYED_XOR:
        st = prepare_delayed_xor(o, c, length, rng, w, err);
        break;
    case BL_TASK_EVIDENCE_ACCUMULATION:
    case BL_TASK_CONTEXT_INTEGRATION:
        st = prepare_pulse_streams(o, c, length, rng, w, err);
        break;
    case BL_TASK_TEMPORAL_ORDER:
        st = prepare_temporal_order(o, c, r, length, rng, w, err);
        break;
    case BL_TASK_REVERSAL_ADAPTATION:
        st = prepare_reversal_adaptation(o, c, r, length, rng, w, err);
        break;
    default:
        return bl_fail(err, BL_EVALUE, "not a probe family");
    }
    if (st != BL_OK)
        return st;
    /* The respond indicator: the last receptor, receptor 2 for reversal. */
    size_t col = o->kind == BL_TASK_REVERSAL_ADAPTATION ? 2 : w->n_inputs - 1;
    for (size_t k = 0; k < w->rounds; k++)
        fill(w, w->response_start[k], w->response_end[k], col, 1.0);
    return BL_OK;
}

static bl_status prepare(const bl_task_options *o, bl_gen *rng, int64_t horizon, bool lazy,
                         bl_world_init **out, bl_error *err)
{
    *out = NULL;
    if ((unsigned)o->kind >= BL_TASK_COUNT)
        return bl_fail(err, BL_EVALUE, "unknown task kind %d", (int)o->kind);
    bl_task_definition d;
    bl_task_define(o, &d);
    if (d.default_horizon < 0)
        return bl_fail(err, BL_EVALUE, "%s episode must fit in 2147483647 ticks",
                       bl_task_name(o->kind));
    /* 0 stands for the reference's None (the family's default horizon). */
    if (horizon < 0)
        return bl_fail(err, BL_EVALUE, "horizon must be an integer >= 1");
    if (horizon == 0)
        horizon = d.default_horizon;

    bl_status st = BL_OK;
    bl_world_init *w = bl_calloc(1, sizeof *w);
    if (!w)
        return nomem(err);
    w->kind = o->kind;
    w->n_inputs = d.n_inputs;
    if (has_angles(o->kind)) {
        w->angles = bl_mallocarray(d.n_inputs ? d.n_inputs : 1, sizeof(double));
        if (!w->angles)
            goto nomem;
    }
    world_params(o, w->params, w->angles);

    if (d.probe) {
        if ((st = prepare_probe(o, &d, rng, w, err)) != BL_OK)
            goto fail;
    } else {
        w->length = 1;
        w->stimuli = bl_calloc(d.n_inputs ? d.n_inputs : 1, sizeof(double));
        if (!w->stimuli)
            goto nomem;
    }

    if (o->kind == BL_TASK_PONG) {
        if ((uint64_t)horizon >= SIZE_MAX / (2 * sizeof(double)))
            goto nomem;
        w->n_draws = (size_t)horizon + 1;
        /* random((horizon + 1, 2)) fills row-major, so row k is doubles 2k
         * and 2k + 1 of the stream: drawing row 0 now and the rest later,
         * in order, from a copy of the generator gives the same rows. */
        const size_t ready = lazy ? 1 : w->n_draws;
        w->draws = bl_mallocarray(ready, 2 * sizeof(double));
        if (!w->draws)
            goto nomem;
        bl_gen_random_fill(rng, w->draws, 2 * ready);
        if (lazy) {
            w->draws_ready = ready;
            w->draws_rng = *rng;
        }
        w->physical[0] = 995.0;
        w->physical[1] = 1.0 + 498.0 * w->draws[0];
        w->physical[2] = 250.0;
        w->physical[3] = -5.0;
        w->physical[4] = w->draws[1] >= 0.5 ? 5.0 : -5.0;
    } else {
        w->n_draws = 1;
        w->draws = bl_calloc(2, sizeof(double));
        if (!w->draws)
            goto nomem;
    }

    if (o->kind == BL_TASK_TRACKING) {
        bool random = o->randomize_start;
        /* Each value draws only when it is neither given nor fixed. */
        w->physical[0] = o->has_theta0 ? o->theta0 : random ? BL_TWO_PI * bl_gen_random(rng)
                                                            : BL_HALF_PI;
        w->physical[1] = o->has_phi0 ? o->phi0 : random ? BL_TWO_PI * bl_gen_random(rng) : 0.0;
        w->physical[2] = o->has_direction0                ? o->direction0
                         : !random                        ? 1.0
                         : bl_gen_integers(rng, 0, 2) != 0 ? 1.0
                                                           : -1.0;
    } else if (o->kind == BL_TASK_CARTPOLE_PLANK_EASY) {
        for (int i = 0; i < 4; i++) {
            double lo = o->initial_ranges[i][0], hi = o->initial_ranges[i][1];
            if (lo == hi) {
                w->physical[i] = lo;
                continue;
            }
            if (!isfinite(hi - lo)) {
                /* NumPy's uniform refuses a width that overflows. */
                st = bl_fail(err, BL_EVALUE, "Range exceeds valid bounds");
                goto fail;
            }
            w->physical[i] = bl_gen_uniform(rng, lo, hi);
        }
    }
    *out = w;
    return BL_OK;
nomem:
    st = nomem(err);
fail:
    bl_world_init_destroy(w);
    return st;
}

bl_status bl_world_prepare(const bl_task_options *o, bl_gen *rng, int64_t horizon,
                           bl_world_init **out, bl_error *err)
{
    return prepare(o, rng, horizon, false, out, err);
}

bl_status bl_world_prepare_lazy(const bl_task_options *o, bl_gen *rng, int64_t horizon,
                                bl_world_init **out, bl_error *err)
{
    return prepare(o, rng, horizon, true, out, err);
}

/* ---- structural validation (§8.2) --------------------------------------- */

static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static bool same_bits(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

bl_status bl_world_init_validate(const bl_world_init *w, const bl_task_options *o,
                                 bl_error *err)
{
    if (!w || !o || (unsigned)o->kind >= BL_TASK_COUNT)
        return bl_fail(err, BL_EVALUE, "definition must match the task specification and ports");
    bl_task_definition d;
    bl_task_define(o, &d);
    if (w->kind != o->kind || w->n_inputs != d.n_inputs || d.default_horizon < 0)
        return bl_fail(err, BL_EVALUE, "definition must match the task specification and ports");

    /* What the reference derives from the options at cohort creation is
     * carried in the world here, so it must agree with the options. */
    double params[4];
    double *angles = NULL;
    if (has_angles(o->kind)) {
        angles = bl_mallocarray(d.n_inputs ? d.n_inputs : 1, sizeof *angles);
        if (!angles)
            return nomem(err);
    }
    world_params(o, params, angles);
    bool options_ok = same_bits(params, w->params, 4) &&
                      (!angles || (w->angles && same_bits(angles, w->angles, d.n_inputs))) &&
                      w->feedback == (o->kind == BL_TASK_REVERSAL_ADAPTATION &&
                                      o->feedback_mode == BL_VISIBLE);
    bl_free(angles);
    if (!options_ok)
        return bl_fail(err, BL_EVALUE, "options must match the resolved task specification");

    if (!all_finite(w->physical, 8))
        return bl_fail(err, BL_EVALUE, "physical must contain finite numeric values");
    if (w->stimuli && w->length && !all_finite(w->stimuli, w->length * w->n_inputs))
        return bl_fail(err, BL_EVALUE, "stimuli must contain finite numeric values");
    /* Rows not drawn yet are random() values in [0, 1): finite. */
    const size_t present = w->draws_ready && w->draws_ready < w->n_draws ? w->draws_ready
                                                                         : w->n_draws;
    if (w->draws && present && !all_finite(w->draws, 2 * present))
        return bl_fail(err, BL_EVALUE, "draws must contain finite numeric values");
    if (!w->stimuli || w->length < 1 || w->length > INT32_MAX)
        return bl_fail(err, BL_EVALUE, "stimuli must have shape (T, n_inputs), with T >= 1");
    if (!w->draws || w->n_draws < 1 || w->n_draws > INT32_MAX)
        return bl_fail(err, BL_EVALUE, "draws must have shape (K, 2), with K >= 1");
    size_t m = w->rounds;
    if (m && (!w->response_start || !w->response_end || !w->cue_ends || !w->labels))
        return bl_fail(err, BL_EVALUE,
                       "labels, response schedules and cue ends must be equal-length vectors");
    if (m && !w->round_bounds)
        return bl_fail(err, BL_EVALUE, "round_bounds must have shape (number of labels, 2)");
    if (d.probe) {
        bool labels_ok = m > 0;
        for (size_t k = 0; k < m; k++)
            labels_ok = labels_ok && (w->labels[k] == 1 || w->labels[k] == 2);
        if (!labels_ok)
            return bl_fail(err, BL_EVALUE, "probes require labels 1 or 2");
        int64_t length = (int64_t)w->length;
        for (size_t k = 0; k < m; k++) {
            int64_t start = w->round_bounds[2 * k], end = w->round_bounds[2 * k + 1];
            bool ok = start >= 0 && end <= length && start < end &&
                      (k == 0 || start >= w->round_bounds[2 * k - 1]) &&
                      w->cue_ends[k] > start && w->cue_ends[k] <= w->response_start[k] &&
                      w->response_start[k] < w->response_end[k] && w->response_end[k] <= end;
            if (!ok)
                return bl_fail(err, BL_EVALUE,
                               "probe schedules must be ordered within their rounds and "
                               "stimulus horizon");
        }
    } else if (m) {
        return bl_fail(err, BL_EVALUE, "ordinary tasks require empty probe labels and schedules");
    }
    if (o->kind == BL_TASK_REVERSAL_ADAPTATION) {
        if (w->reversal < 2)
            return bl_fail(err, BL_EVALUE, "reversal_round must be an integer >= 2");
        if ((int64_t)m != o->rounds || w->reversal < o->reversal_range[0] ||
            w->reversal > o->reversal_range[1] || (int64_t)w->reversal - 1 + 15 >= (int64_t)m)
            return bl_fail(err, BL_EVALUE,
                           "reversal must leave sixteen scored rounds within the declared range");
    }
    return BL_OK;
}
