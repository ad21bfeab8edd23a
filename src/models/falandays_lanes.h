/* The lockstep-lane Falandays frame: the slots of a group share one wiring
 * and are stepped together, one slot per vector lane. Written once for
 * `real_t` and a vector width, and included by falandays_lanes_sse2.c and
 * falandays_lanes_avx2.c for double and for float (FAL_REAL, FAL_IREAL,
 * FAL_LVB: vector bytes, FAL_LSFX: name suffix); the AVX2 file is compiled
 * with -mavx2 (never FMA: -ffp-contract=off holds everywhere), so both
 * instruction sets run the same source with the same lane arithmetic.
 *
 * Exactness: each lane does, on its own slot, the operations of the fast
 * kernel (falandays_fast.h, whose top comment is the argument) on the same
 * operands in the same order, and nothing is ever summed across lanes.
 * What differs is only which terms are visited:
 *   - A group visits every source that spiked in some active lane, in
 *     ascending order, and adds w·(previous·σ) to every destination of its
 *     row in every lane. In a lane whose source was silent that term is
 *     w·(±0) = ±0 (the weights of resident lanes are finite), which leaves
 *     the lane's running sum bit for bit unchanged since it is never −0;
 *     its count gets +0, which leaves c (+0 or positive) unchanged. So each
 *     lane's sum is its terms of spiking sources in ascending source order:
 *     the fast kernel's sum, hence the reference's.
 *   - Rows hold only the mask's synapses, unpadded (a synapse is one vector
 *     of its L lanes). A slot is resident only while compressed rows are
 *     exact for it (falandays_fast.h (b)) and its weights finite: a lane
 *     whose learning step produces a non-finite weight reports non-finite
 *     in that frame (as the reference), and is then moved out to the
 *     per-slot path ("_all"), which keeps the reference's w·0 = NaN.
 *   - Input sums: a receptor is visited when its input is non-zero in some
 *     lane; other lanes add u·w = ±0 with u = ±0 and w finite (validated).
 *     When some active lane has a non-finite input, every term of every
 *     lane is summed (the reference's loop).
 *   - The weight update runs on the rows of sources that spiked in some
 *     lane whose weight learning is on, and keeps the old weight (a bit
 *     select) in the other lanes; per lane it is the fast kernel's update,
 *     clamp and finite check.
 * Lanes that are inactive this frame, pads and slots not resident compute
 * on whatever their lanes hold, and every store of theirs is a select of
 * the old value, so their state does not change; their values never reach
 * another lane. */
#if !defined(FAL_REAL) || !defined(FAL_IREAL) || !defined(FAL_LVB) || !defined(FAL_LSFX)
#error "define FAL_REAL, FAL_IREAL, FAL_LVB and FAL_LSFX before including falandays_lanes.h"
#endif

#define FL_CAT_(a, b) a##_##b
#define FL_CAT(a, b) FL_CAT_(a, b)
#define FL_FN(name) FL_CAT(name, FAL_LSFX)
#define real_t FAL_REAL
#define FL_L (FAL_LVB / sizeof(real_t))
#define FL_INLINE static inline __attribute__((always_inline))

typedef real_t FL_FN(fl_vec) __attribute__((vector_size(FAL_LVB)));
typedef FAL_IREAL FL_FN(fl_ivec) __attribute__((vector_size(FAL_LVB)));
#define VEC FL_FN(fl_vec)
#define IVEC FL_FN(fl_ivec)

/* x in every lane: x − (+0) is x bit for bit, −0 included (+0 + x would
 * turn −0 into +0). */
FL_INLINE VEC FL_FN(fl_splat)(real_t x)
{
    return x - (VEC){0};
}

FL_INLINE VEC FL_FN(fl_ld)(const real_t *p)
{
    VEC v;
    memcpy(&v, p, sizeof v);
    return v;
}

FL_INLINE void FL_FN(fl_st)(real_t *p, VEC v)
{
    memcpy(p, &v, sizeof v);
}

/* x where the mask is set, +0 elsewhere. */
FL_INLINE VEC FL_FN(fl_keep)(VEC x, IVEC m)
{
    return (VEC)((IVEC)x & m);
}

/* x where the mask is set, y elsewhere, bit for bit. */
FL_INLINE VEC FL_FN(fl_sel)(IVEC m, VEC x, VEC y)
{
    return (VEC)(((IVEC)x & m) | ((IVEC)y & ~m));
}

FL_INLINE bool FL_FN(fl_any)(IVEC m)
{
    FAL_IREAL r = 0;
    for (size_t l = 0; l < FL_L; l++)
        r |= m[l];
    return r != 0;
}

/* Per lane: whether x − x (summed into z) is a NaN, i.e. some x failed. */
FL_INLINE IVEC FL_FN(fl_nan)(VEC z)
{
    return (IVEC)(z != z);
}

#define FL_LANE_OF(fb, b) ((size_t)(fb)->home[b] % (fb)->lanes)
#define FL_GROUP_OF(fb, b) ((size_t)(fb)->home[b] / (fb)->lanes)

/* Copies slot b's state into its lane (`in`), or its lane's state back into
 * its per-slot arrays: the per-node arrays, raw_finite (1/0 as reals in
 * the lane), and the masked weights, which the slot keeps in its padded
 * rows (pad_w) and the lane in rep's unpadded rows. */
static void FL_FN(fal_lanes_sync)(fal_batch *fb, size_t b, bool in)
{
    const size_t n = fb->base.nodes, g = FL_GROUP_OF(fb, b), l = FL_LANE_OF(fb, b);
    const size_t rep = fb->group_rep[g], L = FL_L;
    real_t *slot[] = {(real_t *)fb->acts,     (real_t *)fb->targets, (real_t *)fb->spikes,
                      (real_t *)fb->previous, (real_t *)fb->errors,  (real_t *)fb->counts};
    real_t *lane[] = {(real_t *)fb->lacts, (real_t *)fb->ltargets, (real_t *)fb->lspikes,
                      (real_t *)fb->lprev, (real_t *)fb->lerrors,  (real_t *)fb->lcounts};
    for (size_t a = 0; a < sizeof slot / sizeof *slot; a++)
        for (size_t i = 0; i < n; i++) {
            real_t *x = &slot[a][b * n + i], *y = &lane[a][(g * n + i) * L + l];
            if (in)
                *y = *x;
            else
                *x = *y;
        }
    real_t *raw = (real_t *)fb->lraw + g * n * L + l;
    int32_t *raw_finite = fb->raw_finite + b * n;
    for (size_t i = 0; i < n; i++) {
        if (in)
            raw[i * L] = raw_finite[i] ? (real_t)1 : (real_t)0;
        else
            raw_finite[i] = raw[i * L] != 0;
    }
    const size_t *rptr = fb->row_ptr + FAL_W(fb, rep) * (n + 1);
    const size_t *pptr = fb->pad_ptr + FAL_W(fb, b) * (n + 1);
    real_t *pw = (real_t *)fb->pad_w + fb->pw_shift[b], *w = (real_t *)fb->lw + fb->group_w[g] + l;
    for (size_t j = 0; j < n; j++)
        for (size_t k = rptr[j]; k < rptr[j + 1]; k++) {
            real_t *x = &pw[pptr[j] + (k - rptr[j])], *y = &w[(k - rptr[0]) * L];
            if (in)
                *y = *x;
            else
                *x = *y;
        }
}

/* What the per-node pass of a group's frame reads and writes. */
typedef struct FL_FN(fl_nodes_in) {
    real_t *acc, *inp, *targets, *acts, *spikes, *errors, *counts, *raw_l, *delta;
    real_t *view; /* the per-slot spikes [B][N] */
    size_t n, na;
    const size_t *alane, *aslot;
    const real_t *const *xrow;
    IVEC act, lrn;
    VEC keep, thr_mult, nu0, gain, lr_w, lr_t, tmin;
    bool oosawa, rectify, any_lrn, any_wl;
} FL_FN(fl_nodes_in);
#define FL_NODES FL_FN(fl_nodes_in)

/* Every per-node statement of a group's frame (fal_node_block's, lane by
 * lane), and the clearing of acc and inp for the next frame; returns the
 * lanes' finite checks (NaN where a lane failed). With `full` every lane
 * is active and stores need no select. */
FL_INLINE VEC FL_FN(fl_nodes)(const FL_NODES *f, const bool full)
{
    const size_t n = f->n, L = FL_L;
    real_t *restrict acc = f->acc, *restrict inp = f->inp, *restrict targets = f->targets;
    real_t *restrict acts = f->acts, *restrict spikes = f->spikes, *restrict errors = f->errors;
    real_t *restrict counts = f->counts, *restrict raw_l = f->raw_l, *restrict delta = f->delta;
    const IVEC act = f->act, lrn = f->lrn;
    const bool oosawa = f->oosawa, rectify = f->rectify, any_lrn = f->any_lrn, any_wl = f->any_wl;
    const VEC zero = {0}, one = FL_FN(fl_splat)(1);
    VEC bad = zero;
    for (size_t i = 0; i < n; i++) {
        real_t *ai = acc + i * 2 * L;
        const VEC rec = FL_FN(fl_ld)(ai), c = FL_FN(fl_ld)(ai + L);
        FL_FN(fl_st)(ai, zero);
        FL_FN(fl_st)(ai + L, zero);
        const VEC s = FL_FN(fl_ld)(inp + i * L);
        FL_FN(fl_st)(inp + i * L, zero);
        const VEC tg = FL_FN(fl_ld)(targets + i * L);
        const VEC a0 = FL_FN(fl_ld)(acts + i * L);
        VEC a = (a0 * f->keep + s) + rec;
        const VEC theta = tg * f->thr_mult;
        if (oosawa) {
            const VEC deficit = theta - a;
            const VEC sigma = f->nu0 + f->gain * FL_FN(fl_keep)(deficit, (IVEC)(deficit > zero));
            VEC x;
            for (size_t l = 0; l < L; l++)
                x[l] = f->xrow[l][i];
            a = a + x * sigma;
        }
        VEC raw = (a - a) + (theta - theta);
        if (rectify)
            a = FL_FN(fl_keep)(a, ~(IVEC)(a < zero));
        const IVEC fire = (IVEC)(a >= theta);
        a = a - FL_FN(fl_keep)(theta, fire);
        const VEC e = a - tg;
        const VEC sp = FL_FN(fl_keep)(one, fire);
        VEC tnew = tg;
        if (any_wl) {
            /* A divisor of 1 where the count is 0: that δ is never used. */
            const IVEC pos = (IVEC)(c > zero);
            const VEC div = FL_FN(fl_keep)(c, pos) + FL_FN(fl_keep)(one, ~pos);
            FL_FN(fl_st)(delta + i * L, (e / div) * f->lr_w);
        }
        if (any_lrn) {
            const VEC t = tg + e * f->lr_t;
            /* Checked before the floor, which would hide -inf and NaN. */
            raw = raw + FL_FN(fl_keep)(t - t, lrn);
            const IVEC ge = (IVEC)(t >= f->tmin);
            tnew = FL_FN(fl_sel)(lrn, FL_FN(fl_keep)(t, ge) + FL_FN(fl_keep)(f->tmin, ~ge), tg);
        }
        bad = (((bad + raw) + (a - a)) + (tnew - tnew)) + (e - e);
        const VEC ok = FL_FN(fl_keep)(one, (IVEC)(raw == zero));
        if (full) {
            FL_FN(fl_st)(acts + i * L, a);
            FL_FN(fl_st)(targets + i * L, tnew);
            FL_FN(fl_st)(spikes + i * L, sp);
            FL_FN(fl_st)(errors + i * L, e);
            FL_FN(fl_st)(counts + i * L, c);
            FL_FN(fl_st)(raw_l + i * L, ok);
            /* The per-slot spikes are the activity view. */
            for (size_t l = 0; l < L; l++)
                f->view[f->aslot[l] * n + i] = sp[l];
        } else {
            FL_FN(fl_st)(acts + i * L, FL_FN(fl_sel)(act, a, a0));
            FL_FN(fl_st)(targets + i * L, FL_FN(fl_sel)(act, tnew, tg));
            FL_FN(fl_st)(spikes + i * L, FL_FN(fl_sel)(act, sp, FL_FN(fl_ld)(spikes + i * L)));
            FL_FN(fl_st)(errors + i * L, FL_FN(fl_sel)(act, e, FL_FN(fl_ld)(errors + i * L)));
            FL_FN(fl_st)(counts + i * L, FL_FN(fl_sel)(act, c, FL_FN(fl_ld)(counts + i * L)));
            FL_FN(fl_st)(raw_l + i * L, FL_FN(fl_sel)(act, ok, FL_FN(fl_ld)(raw_l + i * L)));
            for (size_t t = 0; t < f->na; t++)
                f->view[f->aslot[t] * n + i] = sp[f->alane[t]];
        }
    }

    return bad;
}

/* One frame of group g: inputs u [B][R], noise xi [B][N]. */
static void FL_FN(fal_lanes_step)(fal_batch *fb, size_t g, const real_t *u, const real_t *xi,
                                  const int32_t *active)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, ne = fb->base.effectors;
    const size_t L = FL_L, rep = fb->group_rep[g];
    const size_t *slots = fb->group_slot + g * L;
    BL_ASSERT(fb->lanes == L);

    /* Lane masks: act (active and resident), lrn (and learning), wl (and
     * weight learning), and the per-slot rows each active lane writes. */
    IVEC act = {0}, lrn = {0}, wl = {0};
    size_t na = 0, alane[FL_L], aslot[FL_L];
    const real_t *xrow[FL_L];
    for (size_t l = 0; l < L; l++) {
        const size_t b = slots[l];
        xrow[l] = xi + (b == FAL_NO_SLOT ? slots[0] : b) * n;
        if (b == FAL_NO_SLOT || !fb->resident[b] || !active[b])
            continue;
        act[l] = -1;
        lrn[l] = fb->learning[b] ? -1 : 0;
        wl[l] = fb->learning[b] && fb->weight_learning[b] ? -1 : 0;
        alane[na] = l;
        aslot[na++] = b;
    }
    if (na == 0)
        return;
    fb->paths.lanes += na;

    const size_t wr = FAL_W(fb, rep); /* the fixed arrays' wiring */
    const real_t *par = (const real_t *)fb->params + wr * FAL_NPARAM;
    const int32_t *flags = fb->flags + wr * FAL_NFLAG;
    const bool dale = flags[FAL_F_DALE] != 0;
    const bool rectify = flags[FAL_F_RECTIFY] != 0, oosawa = flags[FAL_F_OOSAWA] != 0;
    const size_t *restrict rptr = fb->row_ptr + wr * (n + 1);
    const uint32_t *restrict rdst = fb->row_dst;
    const real_t *restrict sgn = (const real_t *)fb->sgn + wr * n;
    const int32_t *restrict signs = fb->signs + wr * n;
    const size_t gn = g * n * L;
    real_t *restrict w = (real_t *)fb->lw + fb->group_w[g] - rptr[0] * L;
    real_t *restrict acts = (real_t *)fb->lacts + gn;
    real_t *restrict targets = (real_t *)fb->ltargets + gn;
    real_t *restrict spikes = (real_t *)fb->lspikes + gn;
    real_t *restrict prev = (real_t *)fb->lprev + gn;
    real_t *restrict errors = (real_t *)fb->lerrors + gn;
    real_t *restrict counts = (real_t *)fb->lcounts + gn;
    real_t *restrict raw_l = (real_t *)fb->lraw + gn;
    real_t *restrict acc = (real_t *)fb->lacc;
    real_t *restrict inp = (real_t *)fb->linp;
    real_t *restrict delta = (real_t *)fb->ldelta;
    real_t *restrict uv = (real_t *)fb->lu;
    uint32_t *restrict spk = fb->spk;
    const VEC zero = {0}, one = FL_FN(fl_splat)(1);

    /* Phase 1 in the active lanes, the ascending list of sources that
     * spiked in some active lane, and per lane whether some spiking source
     * has a synapse (then some count is > 0). */
    size_t ns = 0;
    IVEC anyv = {0};
    for (size_t j = 0; j < n; j++) {
        const VEC p = FL_FN(fl_sel)(act, FL_FN(fl_ld)(spikes + j * L), FL_FN(fl_ld)(prev + j * L));
        FL_FN(fl_st)(prev + j * L, p);
        const IVEC sp = (IVEC)(p != zero) & act;
        spk[ns] = (uint32_t)j;
        ns += FL_FN(fl_any)(sp);
        if (rptr[j] < rptr[j + 1])
            anyv |= sp;
    }

    /* Phase 2 step 2: recurrent sums and counts into acc (zero on entry). */
    for (size_t q = 0; q < ns; q++) {
        const size_t j = spk[q];
        const VEC p = FL_FN(fl_ld)(prev + j * L);
        const VEC pv = p * FL_FN(fl_splat)(sgn[j]);
        const VEC c1 = FL_FN(fl_keep)(one, (IVEC)(p != zero));
        for (size_t k = rptr[j]; k < rptr[j + 1]; k++) {
            real_t *a = acc + (size_t)rdst[k] * 2 * L;
            FL_FN(fl_st)(a, FL_FN(fl_ld)(a) + FL_FN(fl_ld)(w + k * L) * pv);
            FL_FN(fl_st)(a + L, FL_FN(fl_ld)(a + L) + c1);
        }
    }

    /* Phase 2 step 1: input sums into inp (zero on entry). */
    bool finite_in = true;
    for (size_t r = 0; r < nr; r++) {
        VEC v = zero;
        for (size_t t = 0; t < na; t++)
            v[alane[t]] = u[aslot[t] * nr + r];
        finite_in = finite_in && !FL_FN(fl_any)(FL_FN(fl_nan)(v - v));
        FL_FN(fl_st)(uv + r * L, v);
    }
    if (finite_in) {
        const size_t *iptr = fb->in_ptr + wr * (nr + 1);
        const real_t *iw = (const real_t *)fb->in_w;
        for (size_t r = 0; r < nr; r++) {
            const VEC ur = FL_FN(fl_ld)(uv + r * L);
            if (!FL_FN(fl_any)((IVEC)(ur != zero)))
                continue;
            for (size_t k = iptr[r]; k < iptr[r + 1]; k++) {
                real_t *d = inp + (size_t)fb->in_node[k] * L;
                FL_FN(fl_st)(d, FL_FN(fl_ld)(d) + ur * FL_FN(fl_splat)(iw[k]));
            }
        }
    } else {
        fb->paths.dense_inputs += na;
        const real_t *win = (const real_t *)fb->input_w + wr * n * nr;
        for (size_t i = 0; i < n; i++) {
            VEC s = zero;
            for (size_t r = 0; r < nr; r++)
                s = s + FL_FN(fl_ld)(uv + r * L) * FL_FN(fl_splat)(win[i * nr + r]);
            FL_FN(fl_st)(inp + i * L, s);
        }
    }

    /* Every per-node statement (fal_node_block's, lane by lane), and the
     * clearing of acc and inp for the next frame. */
    const FL_NODES f = {
        .acc = acc, .inp = inp, .targets = targets, .acts = acts, .spikes = spikes,
        .errors = errors, .counts = counts, .raw_l = raw_l, .delta = delta,
        .view = (real_t *)fb->spikes, .n = n, .na = na, .alane = alane, .aslot = aslot,
        .xrow = xrow, .act = act, .lrn = lrn,
        .keep = FL_FN(fl_splat)((real_t)1 - par[FAL_P_LEAK]),
        .thr_mult = FL_FN(fl_splat)(par[FAL_P_THRESHOLD_MULT]),
        .nu0 = FL_FN(fl_splat)(par[FAL_P_MEMBRANE_NOISE]),
        .gain = FL_FN(fl_splat)(par[FAL_P_NOISE_GAIN]),
        .lr_w = FL_FN(fl_splat)(par[FAL_P_LRATE_WMAT]),
        .lr_t = FL_FN(fl_splat)(par[FAL_P_LRATE_TARG]),
        .tmin = FL_FN(fl_splat)(par[FAL_P_TARG_MIN]),
        .oosawa = oosawa, .rectify = rectify,
        .any_lrn = FL_FN(fl_any)(lrn), .any_wl = FL_FN(fl_any)(wl),
    };
    /* Every lane active (the common case) needs no selects. */
    const VEC bad = na == L ? FL_FN(fl_nodes)(&f, true) : FL_FN(fl_nodes)(&f, false);

    /* Phase 3's weight update, in the lanes whose weight learning is on and
     * whose source spiked (then the destination's count is > 0). */
    VEC badw = zero;
    if (FL_FN(fl_any)(anyv & wl)) {
        for (size_t q = 0; q < ns; q++) {
            const size_t j = spk[q];
            const IVEC m = (IVEC)(FL_FN(fl_ld)(prev + j * L) != zero) & wl;
            if (!FL_FN(fl_any)(m))
                continue;
            /* Dale weights are magnitudes: an inhibitory source's update
             * runs the other way (written w + δ, as the reference). Lanes
             * outside m get w − (+0) or w + (−0), which is w bit for bit
             * (−0 included), so no select is needed; their w is finite
             * (resident) or their badw is ignored. */
            if (dale && signs[j] == -1) {
                const IVEC negz = (IVEC)FL_FN(fl_splat)(-(real_t)0) & ~m;
                for (size_t k = rptr[j]; k < rptr[j + 1]; k++) {
                    const VEC dv = FL_FN(fl_ld)(delta + (size_t)rdst[k] * L);
                    VEC v = FL_FN(fl_ld)(w + k * L) + (VEC)(((IVEC)dv & m) | negz);
                    const VEC z = v - v;
                    badw = badw + z;
                    v = FL_FN(fl_keep)(v, ~((IVEC)(v < zero) & (IVEC)(z == zero) & m));
                    FL_FN(fl_st)(w + k * L, v);
                }
            } else if (dale) {
                for (size_t k = rptr[j]; k < rptr[j + 1]; k++) {
                    const VEC dv = FL_FN(fl_ld)(delta + (size_t)rdst[k] * L);
                    VEC v = FL_FN(fl_ld)(w + k * L) - FL_FN(fl_keep)(dv, m);
                    const VEC z = v - v;
                    badw = badw + z;
                    v = FL_FN(fl_keep)(v, ~((IVEC)(v < zero) & (IVEC)(z == zero) & m));
                    FL_FN(fl_st)(w + k * L, v);
                }
            } else {
                for (size_t k = rptr[j]; k < rptr[j + 1]; k++) {
                    const VEC dv = FL_FN(fl_ld)(delta + (size_t)rdst[k] * L);
                    const VEC v = FL_FN(fl_ld)(w + k * L) - FL_FN(fl_keep)(dv, m);
                    badw = badw + (v - v);
                    FL_FN(fl_st)(w + k * L, v);
                }
            }
        }
        /* Only lanes that learned can have failed here. */
        badw = FL_FN(fl_keep)(badw, wl);
        const IVEC wbad = FL_FN(fl_nan)(badw);
        if (FL_FN(fl_any)(wbad)) {
            /* Rare (those lanes fail): find the destinations, on the values
             * before the clamp, as the reference checks them; only -inf was
             * left unclamped. Weights of spiking sources were finite before
             * this update. */
            for (size_t q = 0; q < ns; q++) {
                const size_t j = spk[q];
                const IVEC m = (IVEC)(FL_FN(fl_ld)(prev + j * L) != zero) & wl & wbad;
                for (size_t l = 0; l < L; l++) {
                    if (!m[l])
                        continue;
                    for (size_t k = rptr[j]; k < rptr[j + 1]; k++) {
                        real_t *wk = w + k * L + l;
                        if (!isfinite(*wk)) {
                            raw_l[(size_t)rdst[k] * L + l] = 0;
                            if (dale && *wk < 0)
                                *wk = 0;
                        }
                    }
                }
            }
        }
        if (dale) {
            /* The first clearing of a slot only marks it (its unmasked
             * weights are ±0 in compressed rows; see falandays_fast.h). */
            const IVEC cl = anyv & wl;
            for (size_t t = 0; t < na; t++)
                if (cl[alane[t]])
                    fb->cleared[aslot[t]] = 1;
        }
    }

    /* Phase 4 over rep's readout lists, and phase 5's effector part. */
    const size_t *ro_ptr = fb->ro_ptr + wr * (ne + 1);
    const real_t *ro_w = (const real_t *)fb->ro_w;
    const real_t *ro_cnt = (const real_t *)fb->ro_cnt + wr * ne;
    VEC effbad = zero;
    for (size_t e = 0; e < ne; e++) {
        VEC tot = zero;
        for (size_t k = ro_ptr[e]; k < ro_ptr[e + 1]; k++)
            tot = tot + FL_FN(fl_ld)(spikes + (size_t)fb->ro_node[k] * L) * FL_FN(fl_splat)(ro_w[k]);
        const VEC eff = ro_cnt[e] > 0 ? tot / FL_FN(fl_splat)(ro_cnt[e]) : zero;
        effbad = effbad + (eff - eff);
        for (size_t t = 0; t < na; t++)
            ((real_t *)fb->effectors)[aslot[t] * ne + e] = eff[alane[t]];
    }

    const IVEC failed = FL_FN(fl_nan)(bad) | FL_FN(fl_nan)(badw) | FL_FN(fl_nan)(effbad);
    const IVEC wfailed = FL_FN(fl_nan)(badw);
    for (size_t t = 0; t < na; t++) {
        const size_t b = aslot[t], l = alane[t];
        fb->finite[b] = failed[l] == 0;
        if (wfailed[l]) {
            /* A weight may be non-finite now: silent sources no longer add
             * ±0, so the slot leaves its lane for the per-slot "_all" path. */
            fb->wild[b] = 1;
            FL_FN(fal_lanes_sync)(fb, b, false);
            fb->resident[b] = 0;
            fb->paths.lane_exits++;
        }
    }
}

#undef FL_NODES
#undef VEC
#undef IVEC
#undef FL_INLINE
#undef FL_L
#undef FL_LANE_OF
#undef FL_GROUP_OF
#undef real_t
#undef FL_FN
#undef FL_CAT
#undef FL_CAT_
