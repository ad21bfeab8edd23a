/* The world operations of spec/tasks.md §1.3 with every family's
 * observation and dynamics, written once for `real_t` and included by
 * worlds.c for double and for float (WK_REAL, WK_SFX, and the matching math
 * functions WK_COS, WK_SIN, WK_EXP, WK_ATAN2, WK_FMOD, WK_FABS, WK_CEIL,
 * which it undefines at its end).
 * A float32 cohort thus computes every intermediate in float, as the
 * reference's float32 kernels do; every constant is a double literal
 * rounded once to real_t, like a Python constant inside a typed kernel.
 *
 * The groupings of each expression follow the spec literally; regrouping
 * changes last bits and breaks the fixture replays and frozen nulls. */
#if !defined(WK_REAL) || !defined(WK_SFX)
#error "define WK_REAL and WK_SFX before including worlds_kernel.h"
#endif

#define WK_CAT_(a, b) a##_##b
#define WK_CAT(a, b) WK_CAT_(a, b)
#define WK_FN(name) WK_CAT(name, WK_SFX)
#define real_t WK_REAL

/* wrap(v, h) = ((v + h) mod 2h) - h with a floored modulo (§0.3): C fmod
 * truncates, so a negative remainder is moved up by one period.
 *
 * fmod is exact, so any exact way of taking the truncated remainder gives
 * its bits; the worlds' arguments almost always lie within two periods P
 * of zero, where it is one subtraction or none (h > 0, P = 2h, x = v + h):
 *   0 <= x < P (also x = -0.0):  fmod(x, P) = x;
 *   P <= x < 2P:                 fmod(x, P) = x - P, exact by Sterbenz
 *                                (P <= x <= 2P);
 *   -P < x < 0:                  fmod(x, P) = x;
 *   -2P < x <= -P:               fmod(x, P) = x + P, exact by Sterbenz
 *                                (-x in [P, 2P]); at x = -P fmod gives -0.0
 *                                and x + P gives +0.0: neither is < 0 and
 *                                both minus h are -h.
 * Anything else (farther out, infinite, NaN) still goes to fmod. The
 * negative remainder then takes the same "+ P" as before, so every result
 * is the bit pattern the fmod form gives. */
static inline real_t WK_FN(wk_wrap)(real_t v, real_t h)
{
    const real_t period = h + h, x = v + h;
    real_t r;
    if (x >= 0 && x < period)
        r = x;
    else if (x >= period && x < period + period)
        r = x - period;
    else if (x < 0 && x > -period)
        r = x;
    else if (x <= -period && x > -(period + period))
        r = x + period;
    else
        r = WK_FMOD(x, period);
    if (r < 0)
        r = r + period;
    return r - h;
}

/* Not finite, or outside [0, 1] (§1.3): one test, since NaN fails both
 * comparisons and an infinity fails one. */
static inline bool WK_FN(wk_bad_effector)(real_t e) { return !(e >= 0 && e <= 1); }

/* ---- observations ----------------------------------------------------- */

/* §2.3: a flat plateau at the gain for |delta| <= 4 degrees, a Gaussian-like
 * tail outside; the 4-degree edge is inside. */
static inline void WK_FN(wk_observe_tracking)(const bl_worlds *w, size_t b, real_t *in)
{
    const size_t nr = w->width;
    const real_t *phys = (const real_t *)w->physical + b * 8;
    const real_t *par = (const real_t *)w->params + b * 4;
    const real_t *ang = (const real_t *)w->angles + b * nr;
    const real_t deg = (real_t)(180.0 / BL_WORLDS_PI);
    const real_t gain = par[0];
    const real_t p = phys[1] * deg;
    for (size_t r = 0; r < nr; r++) {
        const real_t a = phys[0] * deg + ang[r];
        const real_t delta = WK_FN(wk_wrap)(a - p, (real_t)180);
        real_t value = gain;
        if (WK_FABS(delta) > (real_t)4)
            value = value * WK_EXP(((-delta) * delta) / (real_t)10);
        in[r] = value;
    }
}

/* §3.3: closed 4-degree bins around the bearing from paddle to ball; only
 * bearings within [-90, 90] (the ball in front of the paddle plane) show. */
static inline void WK_FN(wk_observe_pong)(const bl_worlds *w, size_t b, real_t *in)
{
    const size_t nr = w->width;
    const real_t *phys = (const real_t *)w->physical + b * 8;
    const real_t *ang = (const real_t *)w->angles + b * nr;
    const real_t gain = ((const real_t *)w->params)[b * 4];
    const real_t deg = (real_t)(180.0 / BL_WORLDS_PI);
    const real_t dx = phys[0] - (real_t)BL_PONG_PADDLE_X;
    const real_t dy = phys[1] - phys[2];
    const real_t bearing = WK_ATAN2(dy, dx) * deg;
    if (!(bearing >= (real_t)-90 && bearing <= (real_t)90))
        return;
    for (size_t r = 0; r < nr; r++)
        if (WK_FABS(WK_FN(wk_wrap)(bearing - ang[r], (real_t)180)) <= (real_t)2)
            in[r] = gain;
}

/* §4.3 Spike-FF-2: ceil(8|v|/scale) spikes (at most 8) on frames 1, 4, ...,
 * 22 on the sign channel of each observation. */
static inline void WK_FN(wk_observe_cartpole)(const bl_worlds *w, size_t b, int32_t frame,
                                              real_t *in)
{
    const real_t *phys = (const real_t *)w->physical + b * 8;
    const real_t *scale = (const real_t *)w->params + b * 4;
    const int32_t slot = (frame - 1) % 3 == 0 ? (frame - 1) / 3 + 1 : 0;
    if (slot == 0)
        return;
    for (int o = 0; o < 4; o++) {
        const real_t v = phys[o];
        const real_t q = WK_CEIL(((real_t)8 * WK_FABS(v)) / scale[o]);
        /* Clamp in the real domain: a cast of an out-of-range or NaN value
         * to int is undefined in C. */
        const int32_t count = !(q > 0) ? 0 : q >= 8 ? 8 : (int32_t)q;
        if (slot <= count)
            in[2 * o + (v > 0 ? 1 : 0)] = 1;
    }
}

/* §5.2 and the reversal feedback of §5.10. */
static inline void WK_FN(wk_observe_probe)(const bl_worlds *w, size_t b, real_t *in)
{
    const size_t nr = w->width;
    const int32_t t = w->ticks[b];
    if (t >= w->lengths[b])
        return;
    const real_t *row = (const real_t *)w->stimuli + (b * w->max_length + (size_t)t) * nr;
    for (size_t r = 0; r < nr; r++)
        in[r] = row[r];
    const int32_t k = w->round[b];
    if (w->kind == BL_TASK_REVERSAL_ADAPTATION && w->feedback[b] && k >= 1 && row[3] != 0) {
        const size_t m = b * w->max_rounds + (size_t)(k - 1);
        const int32_t chosen = w->decisions[m];
        const bool ok = chosen == w->labels[m];
        in[4] = chosen == 1 ? (real_t)1 : (real_t)0;
        in[5] = chosen == 2 ? (real_t)1 : (real_t)0;
        in[6] = ok ? (real_t)1 : (real_t)0;
        in[7] = ok ? (real_t)0 : (real_t)1;
    }
}

static inline void WK_FN(wk_encode)(bl_worlds *w, size_t b, int32_t frame, bool enabled)
{
    const size_t nr = w->width;
    real_t *in = (real_t *)w->inputs + b * nr;
    for (size_t r = 0; r < nr; r++)
        in[r] = 0;
    if (!enabled || w->done[b])
        return;
    if (w->finite[b]) {
        switch (w->kind) {
        case BL_TASK_TRACKING: WK_FN(wk_observe_tracking)(w, b, in); break;
        case BL_TASK_PONG: WK_FN(wk_observe_pong)(w, b, in); break;
        case BL_TASK_CARTPOLE_PLANK_EASY: WK_FN(wk_observe_cartpole)(w, b, frame, in); break;
        default: WK_FN(wk_observe_probe)(w, b, in); break;
        }
    }
    for (size_t r = 0; r < nr; r++)
        if (!isfinite(in[r])) {
            w->finite[b] = 0;
            break;
        }
}

/* ---- accumulate ------------------------------------------------------- */

static inline void WK_FN(wk_accumulate)(bl_worlds *w, size_t b, const real_t *eff,
                                        int32_t frame, bool enabled)
{
    if (!enabled || w->done[b] || !w->finite[b])
        return;
    /* The offending value is still stored or added: the world is dead from
     * now on and its sums are diagnostics only. */
    for (int e = 0; e < 2; e++)
        if (WK_FN(wk_bad_effector)(eff[e]))
            w->finite[b] = 0;
    if (w->kind == BL_TASK_CARTPOLE_PLANK_EASY) {
        real_t *votes = (real_t *)w->votes + b * 2;
        for (int e = 0; e < 2; e++) {
            if (frame == 1)
                votes[e] = 0;
            votes[e] = votes[e] + eff[e];
        }
    } else {
        real_t *last = (real_t *)w->last + b * 2;
        last[0] = eff[0];
        last[1] = eff[1];
    }
}

/* ---- steps ------------------------------------------------------------ */

/* §2.4; the score uses the state after the move. */
static inline void WK_FN(wk_step_tracking)(bl_worlds *w, size_t b, const real_t *eff,
                                           int32_t tick)
{
    real_t *phys = (real_t *)w->physical + b * 8;
    const real_t *par = (const real_t *)w->params + b * 4;
    const real_t pi = (real_t)BL_WORLDS_PI;
    const real_t rad = (real_t)(BL_WORLDS_PI / 180.0);
    const real_t turn = par[2] * (eff[0] - eff[1]) * rad;
    phys[0] = WK_FN(wk_wrap)(phys[0] + turn, pi);
    phys[1] = WK_FN(wk_wrap)(phys[1] + phys[2] * par[1], pi);
    if (((int64_t)tick + 1) % 720 == 0)
        phys[2] = -phys[2];
    if (tick >= w->warmup) {
        real_t *total = (real_t *)w->total + b;
        *total = *total + WK_COS(WK_FN(wk_wrap)(phys[0] - phys[1], pi));
        w->scored[b] += 1;
        ((real_t *)w->outcome)[b] = *total / (real_t)w->scored[b];
    }
}

/* §3.4 in the spec's order: paddle first, then the ball; the hit test uses
 * the new paddle, and the `past` latch forbids a late hit. */
static inline void WK_FN(wk_step_pong)(bl_worlds *w, size_t b, const real_t *eff, int32_t tick)
{
    real_t *phys = (real_t *)w->physical + b * 8;
    real_t x = phys[0], y = phys[1], vx = phys[3], vy = phys[4], past = phys[5];
    real_t paddle = phys[2] + (real_t)100 * (eff[0] - eff[1]);
    paddle = paddle > (real_t)BL_PONG_PADDLE_MIN_Y ? paddle : (real_t)BL_PONG_PADDLE_MIN_Y;
    paddle = paddle < (real_t)BL_PONG_PADDLE_MAX_Y ? paddle : (real_t)BL_PONG_PADDLE_MAX_Y;
    x = x + vx;
    y = y + vy;
    int32_t hit = 0, miss = 0;
    if (y <= (real_t)5) {
        y = 5;
        vy = WK_FABS(vy);
    } else if (y >= (real_t)495) {
        y = 495;
        vy = -WK_FABS(vy);
    }
    if (x >= (real_t)995) {
        x = 995;
        vx = -WK_FABS(vx);
        past = 0;
    }
    if (vx < 0 && past == 0 && x <= (real_t)115) {
        if (WK_FABS(y - paddle) <= (real_t)65) {
            x = 115;
            vx = WK_FABS(vx);
            hit = 1;
        } else {
            past = 1;
        }
    }
    if (x < 0) {
        miss = 1;
        const int32_t k = (int32_t)phys[6] + 1;
        if (k < w->draw_lengths[b]) {
            real_t row[2];
            if (k < w->draws_ready[b]) {
                const real_t *r = (const real_t *)w->draws + (b * w->max_draws + (size_t)k) * 2;
                row[0] = r[0];
                row[1] = r[1];
            } else {
                /* Row k is the next one in the world's generator: rows are
                 * used in order (k is one past the last used), and the
                 * generator started at the first row not drawn up front. */
                const double d0 = bl_gen_random(&w->draw_gens[b]);
                const double d1 = bl_gen_random(&w->draw_gens[b]);
                row[0] = (real_t)d0;
                row[1] = (real_t)d1;
            }
            x = 995;
            y = (real_t)1 + (real_t)498 * row[0];
            vx = -5;
            past = 0;
            vy = row[1] >= (real_t)0.5 ? (real_t)5 : (real_t)-5;
            phys[6] = (real_t)k;
        } else {
            /* Running out of reset rows is a failure, not an end (§12.7). */
            w->finite[b] = 0;
        }
    }
    phys[0] = x;
    phys[1] = y;
    phys[2] = paddle;
    phys[3] = vx;
    phys[4] = vy;
    phys[5] = past;
    if (tick >= w->warmup) {
        w->hits[b] += hit;
        w->misses[b] += miss;
        if (miss)
            w->rally[b] = 0;
        if (hit) {
            w->rally[b] += 1;
            if (w->rally[b] > w->longest_rally[b])
                w->longest_rally[b] = w->rally[b];
        }
        /* outcome = hits / (hits + misses), or 0 without events: a value
         * of the two counters alone, which change only on a scored hit or
         * miss, so every other scored tick would store the bits already
         * there (the first such tick stores (real_t)0 = +0.0, the value a
         * cohort starts with). */
        if (hit || miss) {
            const int32_t events = w->hits[b] + w->misses[b];
            ((real_t *)w->outcome)[b] = (real_t)w->hits[b] / (real_t)events;
        }
        w->scored[b] += 1;
    }
}

/* §4.4: votes decide the force (a tie pushes left), then explicit Euler
 * with positions moved by the old velocities. */
static inline void WK_FN(wk_step_cartpole)(bl_worlds *w, size_t b, int32_t tick)
{
    real_t *phys = (real_t *)w->physical + b * 8;
    const real_t *votes = (const real_t *)w->votes + b * 2;
    const real_t force = votes[1] > votes[0] ? (real_t)10 : (real_t)-10;
    const real_t x = phys[0], x_dot = phys[1], theta = phys[2], theta_dot = phys[3];
    const real_t c = WK_COS(theta), s = WK_SIN(theta);
    const real_t total_mass = (real_t)1.1, pml = (real_t)0.05, tau = (real_t)0.02;
    const real_t temp = (force + ((pml * theta_dot) * theta_dot) * s) / total_mass;
    const real_t theta_acc =
        ((real_t)9.8 * s - c * temp) /
        ((real_t)0.5 * ((real_t)(4.0 / 3.0) - (((real_t)0.1 * c) * c) / total_mass));
    const real_t x_acc = temp - ((pml * theta_acc) * c) / total_mass;
    phys[0] = x + tau * x_dot;
    phys[1] = x_dot + tau * x_acc;
    phys[2] = theta + tau * theta_dot;
    phys[3] = theta_dot + tau * theta_acc;
    const int32_t steps = tick + 1;
    ((real_t *)w->outcome)[b] = (real_t)steps;
    w->scored[b] = steps;
    if (WK_FABS(phys[0]) > (real_t)BL_CARTPOLE_MAX_X || WK_FABS(phys[2]) > (real_t)0.2095 ||
        steps >= BL_CARTPOLE_MISSION)
        w->done[b] = 1;
}

/* §5.3: evidence only inside the response window; the decision (tie -> 1)
 * is taken on its last tick; the episode ends at the world's own length. */
static inline void WK_FN(wk_step_probe)(bl_worlds *w, size_t b, const real_t *eff, int32_t tick)
{
    real_t *ev = (real_t *)w->evidence + b * 2;
    const size_t base = b * w->max_rounds;
    const int32_t k = w->round[b];
    if (k < w->rounds[b]) {
        const size_t m = base + (size_t)k;
        if (w->response_start[m] <= tick && tick < w->response_end[m]) {
            ev[0] = ev[0] + eff[0];
            ev[1] = ev[1] + eff[1];
        }
        if ((int64_t)tick + 1 == w->response_end[m]) {
            w->decisions[m] = ev[1] > ev[0] ? 2 : 1;
            w->ties[m] = ev[0] == ev[1];
            ev[0] = 0;
            ev[1] = 0;
            w->round[b] = k + 1;
        }
    }
    const int32_t length = w->lengths[b];
    if ((int64_t)tick + 1 >= length) {
        w->done[b] = 1;
        w->scored[b] = length;
        real_t *out = (real_t *)w->outcome + b;
        if (w->kind == BL_TASK_REVERSAL_ADAPTATION) {
            /* Creation guarantees rounds rev-1 .. rev+14 exist. */
            const int32_t first = w->reversal[b] - 1;
            int32_t correct = 0;
            for (int32_t j = first; j < first + 16; j++)
                correct += w->decisions[base + (size_t)j] == w->labels[base + (size_t)j];
            *out = (real_t)correct / (real_t)16;
        } else {
            *out = w->decisions[base] == w->labels[base] ? (real_t)1 : (real_t)0;
        }
    }
}

/* Always inlined: the fused loops call it once a tick, and inlined there
 * its checks fold against what the caller already knows. */
static inline __attribute__((always_inline)) void
WK_FN(wk_advance)(bl_worlds *w, size_t b, const real_t *eff, bool enabled)
{
    if (!enabled || w->done[b] || !w->finite[b])
        return;
    if (WK_FN(wk_bad_effector)(eff[0]) || WK_FN(wk_bad_effector)(eff[1])) {
        w->finite[b] = 0;
        return;
    }
    const int32_t tick = w->ticks[b];
    /* int32 counters, as in the reference; a world never runs that long. */
    BL_ASSERT(tick < INT32_MAX);
    switch (w->kind) {
    case BL_TASK_TRACKING: WK_FN(wk_step_tracking)(w, b, eff, tick); break;
    case BL_TASK_PONG: WK_FN(wk_step_pong)(w, b, eff, tick); break;
    case BL_TASK_CARTPOLE_PLANK_EASY: WK_FN(wk_step_cartpole)(w, b, tick); break;
    default: WK_FN(wk_step_probe)(w, b, eff, tick); break;
    }
    w->ticks[b] = tick + 1;
    /* x - x is +0 exactly for a finite x and NaN for an infinite or NaN
     * one, so the eight tests need no branch. A probe's physical state is
     * never written after creation, which checked it finite, so the test
     * would always pass there. */
    if (!bl_task_is_probe(w->kind)) {
        const real_t *phys = (const real_t *)w->physical + b * 8;
        const int all = (phys[0] - phys[0] == 0) & (phys[1] - phys[1] == 0) &
                        (phys[2] - phys[2] == 0) & (phys[3] - phys[3] == 0) &
                        (phys[4] - phys[4] == 0) & (phys[5] - phys[5] == 0) &
                        (phys[6] - phys[6] == 0) & (phys[7] - phys[7] == 0);
        if (!all)
            w->finite[b] = 0;
    }
    if (w->done[b] && !isfinite(((const real_t *)w->outcome)[b]))
        w->finite[b] = 0;
}

#undef real_t
#undef WK_FN
#undef WK_CAT
#undef WK_CAT_
/* The parameters too, so that the next instantiation defines its own. */
#undef WK_REAL
#undef WK_SFX
#undef WK_COS
#undef WK_SIN
#undef WK_EXP
#undef WK_ATAN2
#undef WK_FMOD
#undef WK_FABS
#undef WK_CEIL
