/* The Falandays frame and its helpers, written once for `real_t` and
 * included by falandays_batch.c for double and for float (FAL_REAL, FAL_SFX).
 * Keeping float32 in its own instantiation makes every intermediate a
 * `float`: no double temporaries can creep in and round differently from
 * the reference's float32 kernels.
 *
 * The frame follows spec/models.md §2.5 phase by phase, each phase over
 * all nodes before the next, with the reference's associations; changing
 * any grouping breaks the bit-exact fixture replay.
 *
 * This is the reference kernel: the spec's loops written out directly over
 * canonical [destination][source] weights. Batches run the fast kernel of
 * falandays_fast.h by default, which must give these bits; the reference
 * runs on BL_FAL_KERNEL_REFERENCE (falandays_internal.h), for tests. */
#if !defined(FAL_REAL) || !defined(FAL_SFX)
#error "define FAL_REAL and FAL_SFX before including falandays_kernel.h"
#endif

#define FAL_CAT_(a, b) a##_##b
#define FAL_CAT(a, b) FAL_CAT_(a, b)
#define FAL_FN(name) FAL_CAT(name, FAL_SFX)
#define real_t FAL_REAL

/* Phase 4: effector e is the readout-weighted mean of the current spikes;
 * the denominator is a real sum because readout weights need not be 0/1. */
static void FAL_FN(fal_readout)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, ne = fb->base.effectors;
    const real_t *spikes = (const real_t *)fb->spikes + b * n;
    const real_t *omask = (const real_t *)fb->out_mask + FAL_W(fb, b) * n * ne;
    real_t *eff = (real_t *)fb->effectors + b * ne;
    for (size_t e = 0; e < ne; e++) {
        real_t tot = 0, cnt = 0;
        for (size_t i = 0; i < n; i++) {
            tot = tot + spikes[i] * omask[i * ne + e];
            cnt = cnt + omask[i * ne + e];
        }
        eff[e] = cnt > 0 ? tot / cnt : (real_t)0;
    }
}

/* §2.6: everything that changes while stepping goes back to its creation
 * value but the weights (fal_load_initial, falandays_batch.c); the fixed
 * arrays (masks, input weights, readout, parameters) never changed. */
static void FAL_FN(fal_reset_slot)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, ne = fb->base.effectors, w = FAL_W(fb, b);
    const size_t row = n * sizeof(real_t);
    memcpy((real_t *)fb->acts + b * n, (const real_t *)fb->acts0 + w * n, row);
    memcpy((real_t *)fb->targets + b * n, (const real_t *)fb->targets0 + w * n, row);
    memcpy((real_t *)fb->spikes + b * n, (const real_t *)fb->spikes0 + w * n, row);
    real_t *prev = (real_t *)fb->previous + b * n;
    real_t *errors = (real_t *)fb->errors + b * n;
    real_t *counts = (real_t *)fb->counts + b * n;
    for (size_t i = 0; i < n; i++) {
        prev[i] = errors[i] = counts[i] = 0;
        fb->raw_finite[b * n + i] = 1;
    }
    const int32_t learn_on = fb->flags[w * FAL_NFLAG + FAL_F_LEARN_ON];
    fb->learning[b] = learn_on;
    fb->weight_learning[b] = learn_on;
    fb->finite[b] = 1;
    real_t *eff = (real_t *)fb->effectors + b * ne;
    for (size_t e = 0; e < ne; e++)
        eff[e] = 0;
    FAL_FN(fal_readout)(fb, b);
}

/* Casts one initial state into slot b's wiring (round to nearest, checked
 * beforehand by the cast validation) and initialises slot b as a reset
 * would, but for the weights: the wiring's compressed initial weights need
 * its rows, which fal_finish builds from the mask bits written here. */
static void FAL_FN(fal_fill_slot)(fal_batch *fb, size_t b, const bl_falandays_init *in)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, ne = fb->base.effectors;
    const size_t nn = n * n, w = FAL_W(fb, b);
    real_t *win = (real_t *)fb->input_w + w * n * nr;
    real_t *omask = (real_t *)fb->out_mask + w * n * ne;
    real_t *acts0 = (real_t *)fb->acts0 + w * n;
    real_t *targets0 = (real_t *)fb->targets0 + w * n;
    real_t *spikes0 = (real_t *)fb->spikes0 + w * n;
    real_t *par = (real_t *)fb->params + w * FAL_NPARAM;
    uint8_t *mask = fb->mask + w * fb->mask_bytes, *neg0 = fb->neg0 + w * fb->mask_bytes;
    int32_t *signs = fb->signs + w * n;
    int32_t *flags = fb->flags + w * FAL_NFLAG;
    /* A byte of bits at a time, without branches or a read-modify-write
     * per entry: this runs over N^2 entries once per wiring. */
    unsigned nonzero = 0, negative = 0; /* some unmasked weight is != 0 / has its sign bit */
    for (size_t q = 0; q * 8 < nn; q++) {
        unsigned on_bits = 0, neg_bits = 0;
        const size_t end = nn - q * 8 < 8 ? nn - q * 8 : 8;
        for (size_t t = 0; t < end; t++) {
            const size_t k = q * 8 + t;
            const real_t v = (real_t)in->weights[k];
            const unsigned on = in->recurrent_mask[k] != 0.0, neg = signbit(v) != 0;
            on_bits |= on << t;
            neg_bits |= neg << t;
            nonzero |= (!on) & (v != 0);
            negative |= (!on) & neg;
        }
        mask[q] = (uint8_t)on_bits;
        neg0[q] = (uint8_t)neg_bits;
    }
    const bool zero0 = !nonzero, plus0 = zero0 && !negative;
    fb->plus0[w] = plus0;
    fb->zero0[w] = zero0;
    for (size_t k = 0; k < n * nr; k++)
        win[k] = (real_t)in->input_weights[k];
    for (size_t k = 0; k < n * ne; k++)
        omask[k] = (real_t)in->output_mask[k];
    for (size_t i = 0; i < n; i++) {
        signs[i] = in->signs[i];
        acts0[i] = (real_t)in->acts[i];
        targets0[i] = (real_t)in->targets[i];
        spikes0[i] = (real_t)in->spikes[i];
    }
    const bl_falandays_config *c = &in->config;
    par[FAL_P_LEAK] = (real_t)c->leak;
    par[FAL_P_LRATE_WMAT] = (real_t)c->lrate_wmat;
    par[FAL_P_LRATE_TARG] = (real_t)c->lrate_targ;
    par[FAL_P_THRESHOLD_MULT] = (real_t)c->threshold_mult;
    par[FAL_P_TARG_MIN] = (real_t)c->targ_min;
    par[FAL_P_MEMBRANE_NOISE] = (real_t)c->membrane_noise;
    par[FAL_P_NOISE_GAIN] = (real_t)c->noise_gain;
    flags[FAL_F_RECTIFY] = c->rectify;
    flags[FAL_F_DALE] = c->axis == BL_AXIS_DALE;
    flags[FAL_F_OOSAWA] = c->drive == BL_DRIVE_OOSAWA;
    flags[FAL_F_LEARN_ON] = c->learn_on;
    FAL_FN(fal_reset_slot)(fb, b);
}

/* One frame of slot b; u = its inputs [R], xi = its noise row [N]. */
static void FAL_FN(fal_step_slot)(fal_batch *fb, size_t b, const real_t *u, const real_t *xi)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, w = FAL_W(fb, b);
    real_t *acts = (real_t *)fb->acts + b * n;
    real_t *targets = (real_t *)fb->targets + b * n;
    real_t *spikes = (real_t *)fb->spikes + b * n;
    real_t *prev = (real_t *)fb->previous + b * n;
    real_t *errors = (real_t *)fb->errors + b * n;
    real_t *counts = (real_t *)fb->counts + b * n;
    real_t *wts = (real_t *)fb->dense[b];
    const real_t *win = (const real_t *)fb->input_w + w * n * nr;
    const real_t *par = (const real_t *)fb->params + w * FAL_NPARAM;
    const int32_t *signs = fb->signs + w * n;
    const int32_t *flags = fb->flags + w * FAL_NFLAG;
    int32_t *raw_finite = fb->raw_finite + b * n;

    /* The reference holds leak as a dtype parameter and forms 1 - leak in
     * the dtype inside the kernel; in float32 that can differ from rounding
     * the double 1 - leak. */
    const real_t keep = (real_t)1 - par[FAL_P_LEAK];
    const real_t lrate_wmat = par[FAL_P_LRATE_WMAT];
    const real_t lrate_targ = par[FAL_P_LRATE_TARG];
    const real_t thr_mult = par[FAL_P_THRESHOLD_MULT];
    const real_t targ_min = par[FAL_P_TARG_MIN];
    const real_t nu0 = par[FAL_P_MEMBRANE_NOISE];
    const real_t gain = par[FAL_P_NOISE_GAIN];
    const bool rectify = flags[FAL_F_RECTIFY] != 0;
    const bool dale = flags[FAL_F_DALE] != 0;
    const bool oosawa = flags[FAL_F_OOSAWA] != 0;

    /* Phase 1: integration and learning both read last frame's spikes. */
    for (size_t j = 0; j < n; j++)
        prev[j] = spikes[j];

    /* Phase 2. */
    for (size_t i = 0; i < n; i++) {
        const real_t *wi = win + i * nr;
        real_t s = 0;
        for (size_t r = 0; r < nr; r++)
            s = s + u[r] * wi[r];
        /* Every source contributes, masked or not: a weight outside the
         * mask still drives, and inf * 0 must still poison the node. */
        const real_t *wrow = wts + i * n;
        real_t c = 0, rec = 0;
        for (size_t j = 0; j < n; j++) {
            rec = rec + wrow[j] * (prev[j] * (real_t)signs[j]);
            if (prev[j] != 0 && fal_bit(fb, fb->mask, w, i * n + j))
                c = c + 1;
        }
        real_t a = (acts[i] * keep + s) + rec;
        const real_t theta = targets[i] * thr_mult;
        if (oosawa) {
            /* max(0, ·) as the reference's max: a NaN deficit gives 0. */
            const real_t deficit = theta - a;
            const real_t sigma = nu0 + gain * (deficit > 0 ? deficit : (real_t)0);
            a = a + xi[i] * sigma;
        }
        /* Before rectification, which would turn -inf into 0. */
        raw_finite[i] = isfinite(a) && isfinite(theta);
        if (rectify && a < 0)
            a = 0;
        real_t spike = 0;
        if (a >= theta) {
            spike = 1;
            a = a - theta;
        }
        acts[i] = a;
        spikes[i] = spike;
        errors[i] = a - targets[i];
        counts[i] = c;
    }

    /* Phase 3. */
    if (fb->learning[b]) {
        const bool wlearn = fb->weight_learning[b] != 0;
        /* Dale clearing is decided for the whole slot, not per row. */
        bool clear = false;
        if (wlearn && dale)
            for (size_t k = 0; k < n && !clear; k++)
                clear = counts[k] > 0;
        for (size_t i = 0; i < n; i++) {
            real_t *wrow = wts + i * n;
            if (wlearn && counts[i] > 0) {
                const real_t delta = (errors[i] / counts[i]) * lrate_wmat;
                for (size_t j = 0; j < n; j++) {
                    if (prev[j] == 0 || !fal_bit(fb, fb->mask, w, i * n + j))
                        continue;
                    /* Dale weights are magnitudes: an inhibitory source's
                     * update runs the other way, w − (−δ), written w + δ:
                     * the same value, but with no negation for a compiler
                     * to fold, which would make the sign of a NaN result
                     * (δ NaN) depend on its choice. As written, a NaN δ
                     * comes through unchanged either way. */
                    const bool inhibitory = dale && signs[j] == -1;
                    real_t wv = inhibitory ? wrow[j] + delta : wrow[j] - delta;
                    /* Checked before the clamp, which would hide -inf. */
                    if (!isfinite(wv))
                        raw_finite[i] = 0;
                    if (dale && wv < 0)
                        wv = 0;
                    wrow[j] = wv;
                }
            }
            if (clear)
                for (size_t j = 0; j < n; j++)
                    if (!fal_bit(fb, fb->mask, w, i * n + j))
                        wrow[j] = 0;
            const real_t t = targets[i] + errors[i] * lrate_targ;
            /* Checked before the floor, which would hide -inf and NaN. */
            if (!isfinite(t))
                raw_finite[i] = 0;
            /* max(targ_min, t) as the reference's max: NaN gives targ_min. */
            targets[i] = t >= targ_min ? t : targ_min;
        }
    }

    /* Phase 4. */
    FAL_FN(fal_readout)(fb, b);

    /* Phase 5: recomputed every frame; latching is the runtime's job. */
    const real_t *eff = (const real_t *)fb->effectors + b * fb->base.effectors;
    int32_t ok = 1;
    for (size_t i = 0; i < n; i++)
        if (!raw_finite[i] || !isfinite(acts[i]) || !isfinite(targets[i]) ||
            !isfinite(errors[i]))
            ok = 0;
    for (size_t e = 0; e < fb->base.effectors; e++)
        if (!isfinite(eff[e]))
            ok = 0;
    fb->finite[b] = ok;
}

#undef real_t
#undef FAL_FN
#undef FAL_CAT
#undef FAL_CAT_
