/* Direct controllers and the fused control loop, written once for `real_t`
 * and included by controllers.c for double and float (CTL_REAL, CTL_SFX,
 * CTL_SIN, which it undefines at its end), after the world kernels of the
 * same suffix (worlds_instances.h). In the float instantiation every
 * intermediate is a float, as in the reference's float32 kernels, so no
 * double temporary can round differently.
 *
 * ctl_act computes one world's effectors for one frame; ctl_run drives one
 * world through a whole tile. The unfused public path (bl_controllers_act
 * between bl_worlds_encode/accumulate/advance) and the fused path call the
 * same ctl_act and world kernels, which is what makes them bit-identical
 * (§1.4, §10.3); the reference null's fused ticks (ctl_null_tick) are the
 * same steps with what provably cannot change any state left out. */
#if !defined(CTL_REAL) || !defined(CTL_SFX) || !defined(CTL_SIN)
#error "define CTL_REAL, CTL_SFX and CTL_SIN before including controllers_kernel.h"
#endif

#define CTL_CAT_(a, b) a##_##b
#define CTL_CAT(a, b) CTL_CAT_(a, b)
#define CTL_FN(name) CTL_CAT(name, CTL_SFX)
#define real_t CTL_REAL

/* The world kernels of this dtype (worlds_instances.h). */
#define CTL_WK(name) CTL_CAT(name, CTL_SFX)

/* Effectors (max(0, s), max(0, -s)) with +0 rather than -0 for the zero
 * side, so a zero effector is always the same bits whichever path made it. */
static void CTL_FN(ctl_signed)(real_t s, real_t *eff)
{
    eff[0] = s > 0 ? s : (real_t)0;
    eff[1] = -s > 0 ? -s : (real_t)0;
}

static void CTL_FN(ctl_one_hot)(int32_t choice, real_t *eff)
{
    eff[0] = choice == 1 ? (real_t)1 : (real_t)0;
    eff[1] = choice == 2 ? (real_t)1 : (real_t)0;
}

/* §6.3 sensory reference (Tracking, Pong): the strongest receptor, lowest
 * index on ties, steers; nothing but the receptor vector and the fixed
 * receptor geometry is read. */
static void CTL_FN(ctl_sensory_oracle)(const bl_worlds *w, size_t b, real_t *eff)
{
    const size_t R = w->width;
    const real_t *in = (const real_t *)w->inputs + b * R;
    const real_t *angles = (const real_t *)w->angles + b * R;
    real_t best = 0;
    size_t arg = R;
    for (size_t r = 0; r < R; r++) {
        if (in[r] > best) {
            best = in[r];
            arg = r;
        }
    }
    real_t turn = 0;
    if (arg < R) {
        if (w->kind == BL_TASK_TRACKING) {
            const real_t amp = ((const real_t *)w->params)[b * 4 + 2];
            turn = angles[arg] / amp;
        } else {
            /* angle * pi / 180 evaluated left to right, as written in §6.3. */
            turn = CTL_SIN(angles[arg] * (real_t)BL_CTL_PI / (real_t)180);
        }
    }
    if (turn > 1)
        turn = 1;
    else if (turn < -1)
        turn = -1;
    CTL_FN(ctl_signed)(turn, eff);
}

/* §6.3 physical reference (CartPole): reads the four raw observations. */
static void CTL_FN(ctl_physical_oracle)(const bl_worlds *w, size_t b, real_t *eff)
{
    const real_t *p = (const real_t *)w->physical + b * 8;
    const real_t cmd = (real_t)80 * CTL_WK(wk_wrap)(p[2], (real_t)BL_CTL_PI) +
                       (real_t)18 * p[3] + p[0] + (real_t)2 * p[1];
    CTL_FN(ctl_signed)(cmd < 0 ? (real_t)1 : (real_t)-1, eff);
}

/* §6.2 reference null. */
static inline __attribute__((always_inline)) void
CTL_FN(ctl_null)(bl_controllers *c, const bl_worlds *w, size_t b, real_t u, real_t *eff)
{
    if (w->kind == BL_TASK_TRACKING || w->kind == BL_TASK_PONG) {
        CTL_FN(ctl_signed)((real_t)2 * u - (real_t)1, eff);
        return;
    }
    /* CartPole holds one fair choice per tick, probes one per round (the
     * round index only for reversal; the single-episode probes have one). */
    int32_t *m = c->memory + b * BL_CTL_MEMORY;
    int32_t key;
    if (w->kind == BL_TASK_CARTPOLE_PLANK_EASY)
        key = w->ticks[b];
    else if (w->kind == BL_TASK_REVERSAL_ADAPTATION)
        key = w->round[b];
    else
        key = 0;
    if (m[BL_CTL_RANDOM_ROUND] != key) {
        m[BL_CTL_RANDOM_ROUND] = key;
        m[BL_CTL_RANDOM_CHOICE] = u >= (real_t)0.5 ? 2 : 1;
    }
    CTL_FN(ctl_one_hot)(m[BL_CTL_RANDOM_CHOICE], eff);
}

/* (b > a) ? 2 : 1: the "which of the pair is on" reading used throughout §6.4. */
static int32_t CTL_FN(ctl_pick)(real_t a, real_t b)
{
    return b > a ? 2 : 1;
}

/* §6.4 observation latch: memory changes at most once per world tick. */
static void CTL_FN(ctl_latch)(bl_controllers *c, const bl_worlds *w, size_t b,
                              const real_t *in)
{
    int32_t *m = c->memory + b * BL_CTL_MEMORY;
    real_t *cnt = (real_t *)c->counts + b * 2;
    switch (w->kind) {
    case BL_TASK_DELAYED_XOR:
        if (in[0] + in[1] > 0)
            m[BL_CTL_FIRST_CUE] = CTL_FN(ctl_pick)(in[0], in[1]);
        if (in[2] + in[3] > 0)
            m[BL_CTL_SECOND_CUE] = CTL_FN(ctl_pick)(in[2], in[3]);
        m[BL_CTL_LAST_CUE] = m[BL_CTL_SECOND_CUE];
        break;
    case BL_TASK_CONTEXT_INTEGRATION: {
        if (in[0] + in[1] > 0)
            m[BL_CTL_CONTEXT] = CTL_FN(ctl_pick)(in[0], in[1]);
        cnt[0] = cnt[0] + (in[2] - in[3]);
        cnt[1] = cnt[1] + (in[4] - in[5]);
        const size_t o = 2 * (size_t)ctl_stream(c->policy, m[BL_CTL_CONTEXT]);
        if (in[o] + in[o + 1] > 0) {
            m[BL_CTL_LAST_CUE] = CTL_FN(ctl_pick)(in[o], in[o + 1]);
            if (m[BL_CTL_FIRST_CUE] == 0)
                m[BL_CTL_FIRST_CUE] = m[BL_CTL_LAST_CUE];
        }
        break;
    }
    case BL_TASK_REVERSAL_ADAPTATION:
        if (in[3] > 0) {
            /* Only the oracle learns the mapping from feedback; fixed_mapping
             * and the constants keep the identity. */
            if (m[BL_CTL_FEEDBACK_SEEN] == 0 && in[4] + in[5] > 0 &&
                c->policy == BL_POLICY_ORACLE) {
                const int32_t chosen = CTL_FN(ctl_pick)(in[4], in[5]);
                const int32_t correct = in[6] > in[7] ? chosen : 3 - chosen;
                m[BL_CTL_SWAPPED] = correct != m[BL_CTL_CURRENT_CUE];
            }
            m[BL_CTL_FEEDBACK_SEEN] = 1;
        } else {
            m[BL_CTL_FEEDBACK_SEEN] = 0;
            if (in[0] + in[1] > 0)
                m[BL_CTL_CURRENT_CUE] = CTL_FN(ctl_pick)(in[0], in[1]);
        }
        break;
    default:
        if (in[0] + in[1] > 0) {
            m[BL_CTL_LAST_CUE] = CTL_FN(ctl_pick)(in[0], in[1]);
            if (m[BL_CTL_FIRST_CUE] == 0)
                m[BL_CTL_FIRST_CUE] = m[BL_CTL_LAST_CUE];
        }
        if (w->kind == BL_TASK_EVIDENCE_ACCUMULATION) {
            cnt[0] = cnt[0] + (in[0] - in[1]);
        } else if (w->kind == BL_TASK_TEMPORAL_ORDER) {
            cnt[0] = cnt[0] + in[0];
            cnt[1] = cnt[1] + in[1];
            /* The terminal marker alone resets "last" to 1. */
            if (in[0] + in[1] == 0 && in[2] > 0)
                m[BL_CTL_LAST_CUE] = 1;
        }
        break;
    }
}

/* §6.4 probe controller machine (also constant_* on the physical families). */
static void CTL_FN(ctl_machine)(bl_controllers *c, const bl_worlds *w, size_t b, real_t *eff)
{
    const real_t *in = (const real_t *)w->inputs + b * w->width;
    int32_t *m = c->memory + b * BL_CTL_MEMORY;
    const real_t *cnt = (const real_t *)c->counts + b * 2;
    const int32_t t = w->ticks[b];
    if (m[BL_CTL_OBSERVED_TICK] != t) {
        m[BL_CTL_OBSERVED_TICK] = t;
        CTL_FN(ctl_latch)(c, w, b, in);
    }
    int32_t choice = m[BL_CTL_FIRST_CUE] > 1 ? m[BL_CTL_FIRST_CUE] : 1;
    switch (w->kind) {
    case BL_TASK_DELAYED_XOR:
        choice = m[BL_CTL_FIRST_CUE] == m[BL_CTL_SECOND_CUE] ? 1 : 2;
        break;
    case BL_TASK_EVIDENCE_ACCUMULATION:
        choice = cnt[0] < 0 ? 2 : 1;
        break;
    case BL_TASK_CONTEXT_INTEGRATION: {
        const int32_t stream = ctl_stream(c->policy, m[BL_CTL_CONTEXT]);
        choice = cnt[stream - 1] < 0 ? 2 : 1;
        break;
    }
    case BL_TASK_TEMPORAL_ORDER:
        if (c->policy == BL_POLICY_BAG)
            choice = cnt[1] > cnt[0] ? 2 : 1;
        break;
    case BL_TASK_REVERSAL_ADAPTATION:
        choice = m[BL_CTL_SWAPPED] != 0 ? 3 - m[BL_CTL_CURRENT_CUE] : m[BL_CTL_CURRENT_CUE];
        break;
    default:
        break;
    }
    switch (c->policy) {
    case BL_POLICY_CONSTANT_LEFT:
        choice = 1;
        break;
    case BL_POLICY_CONSTANT_RIGHT:
        choice = 2;
        break;
    case BL_POLICY_MEMORYLESS:
        if (w->kind == BL_TASK_DELAYED_XOR) {
            const int32_t a = CTL_FN(ctl_pick)(in[0], in[1]);
            const int32_t d = CTL_FN(ctl_pick)(in[2], in[3]);
            choice = a != d ? 2 : 1;
        } else {
            choice = CTL_FN(ctl_pick)(in[0], in[1]);
        }
        break;
    case BL_POLICY_LAST:
        choice = m[BL_CTL_LAST_CUE];
        break;
    case BL_POLICY_FIRST:
        choice = m[BL_CTL_FIRST_CUE] > 1 ? m[BL_CTL_FIRST_CUE] : 1;
        break;
    default:
        break;
    }
    CTL_FN(ctl_one_hot)(choice, eff);
}

/* One frame of world b; `u` is this tick's (or round's) uniform, read only
 * by the reference null. */
static void CTL_FN(ctl_act)(bl_controllers *c, const bl_worlds *w, size_t b, real_t u,
                            real_t *eff)
{
    if (c->policy == BL_POLICY_REFERENCE_NULL) {
        CTL_FN(ctl_null)(c, w, b, u, eff);
    } else if (c->policy == BL_POLICY_ORACLE && !bl_task_is_probe(w->kind)) {
        if (w->kind == BL_TASK_CARTPOLE_PLANK_EASY)
            CTL_FN(ctl_physical_oracle)(w, b, eff);
        else
            CTL_FN(ctl_sensory_oracle)(w, b, eff);
    } else {
        CTL_FN(ctl_machine)(c, w, b, eff);
    }
}

/* One tick of world b in the fused loop with guard *g (§1.4). */
static void CTL_FN(ctl_tick)(bl_worlds *w, bl_controllers *c, size_t b, real_t u, int32_t *g,
                             int32_t *cursor)
{
    real_t *eff = (real_t *)c->effectors + b * 2;
    for (int32_t f = 1; f <= w->frames; f++) {
        *g = *g && w->finite[b];
        CTL_WK(wk_encode)(w, b, f, *g != 0);
        *g = *g && w->finite[b];
        CTL_FN(ctl_act)(c, w, b, u, eff);
        if (*g)
            *cursor += 1;
        CTL_WK(wk_accumulate)(w, b, eff, f, *g != 0);
        *g = *g && w->finite[b];
    }
    CTL_WK(wk_advance)(w, b, eff, *g != 0);
    *g = *g && w->finite[b];
}

/* Whether the reference null may skip world b's encode calls in this tile:
 * the null never reads the receptor vector, so encode matters only through
 * the failure it latches when a receptor value is not finite. That cannot
 * happen where the values are provably finite:
 *  - Tracking: value = gain, times exp(((-delta) * delta) / 10) when
 *    |delta| > 4. delta = wrap(v, 180) is finite (in [-180, 180)) for a
 *    finite v and NaN otherwise (v + 180 is then infinite or NaN, and fmod
 *    of either is NaN); a NaN delta fails |delta| > 4 and gives the gain,
 *    a finite one multiplies the gain by an exp in [0, 1]. So a finite gain
 *    suffices.
 *  - Pong: every value is 0 or the gain, so a finite gain suffices.
 *  - CartPole: every value is 0 or 1.
 *  - probes: values are stimulus entries (checked finite, after the cast, at
 *    creation and never written since) or reversal feedback 0/1.
 * A tile whose world fails this (a gain made non-finite behind creation's
 * back) takes the general path throughout. */
static bool CTL_FN(ctl_null_skips_encode)(const bl_worlds *w, size_t b)
{
    if (w->kind == BL_TASK_TRACKING || w->kind == BL_TASK_PONG)
        return isfinite(((const real_t *)w->params)[b * 4]);
    return true;
}

/* One reference-null tick of world b, whose guard is up at its start,
 * without its encode calls (ctl_null_skips_encode says why they can change
 * nothing). Returns false, having changed no state, when the tick must take
 * the general path because the effectors (from a uniform outside [0, 1))
 * are invalid. Otherwise it is the general tick exactly:
 *  - ctl_null keys its held choice to the tick or round, which no frame of
 *    a tick changes, so the F calls of the general tick give the first
 *    call's effectors and memory;
 *  - with valid effectors and no encode failure the guard stays up through
 *    every frame: F frames are counted and every accumulate runs;
 *  - CartPole: the votes start at 0 and add the same one-hot effector 24
 *    times; every partial sum is an integer <= 24, so exact, and the result
 *    is 24 * e bit for bit (+0 for e = +0);
 *  - the other families have F = 1 and keep the effectors in `last`.
 * The receptor vector is left as it was, except for CartPole, whose general
 * tick leaves it all zero: frame 24 is silent in the Spike-FF-2 schedule
 * (slot 0) and an inactive encode writes zeros. The caller runs the tile's
 * last tick through the general path for every other family, so the vector
 * a tile leaves behind is the general path's. */
static inline __attribute__((always_inline)) bool
CTL_FN(ctl_null_tick)(bl_worlds *w, bl_controllers *c, size_t b, real_t u, int32_t *g,
                      int32_t *cursor)
{
    real_t *eff = (real_t *)c->effectors + b * 2;
    if (c->policy == BL_POLICY_ORACLE)
        CTL_FN(ctl_physical_oracle)(w, b, eff);
    else
        CTL_FN(ctl_null)(c, w, b, u, eff);
    if (CTL_WK(wk_bad_effector)(eff[0]) || CTL_WK(wk_bad_effector)(eff[1]))
        return false; /* only Tracking/Pong get here: their null keeps no memory */
    *cursor += w->frames;
    if (w->kind == BL_TASK_CARTPOLE_PLANK_EASY) {
        real_t *votes = (real_t *)w->votes + b * 2;
        votes[0] = (real_t)w->frames * eff[0];
        votes[1] = (real_t)w->frames * eff[1];
        real_t *in = (real_t *)w->inputs + b * w->width;
        for (size_t r = 0; r < w->width; r++)
            in[r] = 0;
    } else {
        real_t *last = (real_t *)w->last + b * 2;
        last[0] = eff[0];
        last[1] = eff[1];
    }
    CTL_WK(wk_advance)(w, b, eff, true);
    *g = w->finite[b] != 0;
    return true;
}

/* The whole tile for world b. `tile` is [rows][n] (NULL for policies that
 * draw nothing). */
static void CTL_FN(ctl_run)(bl_worlds *w, bl_controllers *c, size_t b, const real_t *tile,
                            size_t rows, int32_t tile_ticks, int32_t *guard, int32_t *cursor)
{
    const bool probe = bl_task_is_probe(w->kind);
    /* The CartPole oracle reads only the physical state, fixed within a
     * tick, and gives (1, 0) or (0, 1): ctl_null_tick's argument holds for
     * it word for word. */
    const bool cartpole_oracle =
        c->policy == BL_POLICY_ORACLE && w->kind == BL_TASK_CARTPOLE_PLANK_EASY;
    const bool null_fast =
        ((c->policy == BL_POLICY_REFERENCE_NULL && tile) || cartpole_oracle) &&
        CTL_FN(ctl_null_skips_encode)(w, b);
    /* The last tick the fast null may take: all of them for CartPole (its
     * receptor vector after a tick is known), else all but the last. */
    const int32_t fast_end =
        w->kind == BL_TASK_CARTPOLE_PLANK_EASY ? tile_ticks : tile_ticks - 1;
    int32_t g = *guard != 0;
    for (int32_t o = 0; o < tile_ticks; o++) {
        g = g && !w->done[b] && w->finite[b] && (int64_t)w->ticks[b] < w->horizons[b];
        size_t row = (size_t)o;
        if (probe && rows > 0) {
            const size_t k = (size_t)w->round[b];
            row = k < rows ? k : rows - 1;
        }
        const real_t u = tile ? tile[row * w->n + b] : (real_t)0;
        if (g && null_fast && o < fast_end &&
            CTL_FN(ctl_null_tick)(w, c, b, u, &g, cursor))
            continue;
        const bool idle = !g;
        CTL_FN(ctl_tick)(w, c, b, u, &g, cursor);
        if (idle && o + 1 < tile_ticks) {
            /* A guard that was down for a whole tick never rises again, and
             * that tick froze everything the controller keys its memory to
             * (the world's tick and round): the remaining ticks would only
             * re-encode zeros and repeat the same controller call, except
             * that the Tracking/Pong null reads each tick's uniform into the
             * effectors. Running the last tick alone is the whole remainder. */
            const size_t last = probe ? row : (size_t)(tile_ticks - 1);
            CTL_FN(ctl_tick)(w, c, b, tile ? tile[last * w->n + b] : (real_t)0, &g, cursor);
            break;
        }
    }
    *guard = g;
}

#undef real_t
#undef CTL_FN
#undef CTL_WK
#undef CTL_CAT
#undef CTL_CAT_
/* The parameters too, so that the next instantiation defines its own. */
#undef CTL_REAL
#undef CTL_SFX
#undef CTL_SIN
