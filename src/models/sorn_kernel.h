/* The SORN frame and its helpers, written once for `real_t` and included by
 * sorn_batch.c for double and for float (SORN_REAL, SORN_SFX). The float
 * instantiation keeps every intermediate a `float`, so no double temporary
 * can round differently from the reference's float32 kernels.
 *
 * The frame follows spec/models.md §3.6 phase by phase, each phase over all
 * units before the next, with the reference's associations and ascending
 * sums that start at +0. The loops are dense on purpose: every product
 * w * prev_x is formed, so an infinite or NaN weight poisons its drive
 * exactly as in the reference (inf * 0 is NaN). */
#if !defined(SORN_REAL) || !defined(SORN_SFX)
#error "define SORN_REAL and SORN_SFX before including sorn_kernel.h"
#endif

#define SORN_CAT_(a, b) a##_##b
#define SORN_CAT(a, b) SORN_CAT_(a, b)
#define SORN_FN(name) SORN_CAT(name, SORN_SFX)
#define real_t SORN_REAL

/* §3.7: every field that can change while stepping goes back to its
 * creation value. The fields that never change after creation (c_e, w_ei,
 * w_ie, w_eu, output_mask, t_i, parameters) are their own reset copy. */
static void SORN_FN(sorn_reset_slot)(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nee = ne * ne;
    const size_t n = sb->base.nodes, nout = sb->base.effectors;
    real_t *w = (real_t *)sb->w_ee + b * nee;
    const real_t *w0 = (const real_t *)sb->w_ee0 + b * nee;
    uint8_t *mask = sb->ee_mask + b * nee;
    const uint8_t *mask0 = sb->ee_mask0 + b * nee;
    real_t *te = (real_t *)sb->t_e + b * ne;
    const real_t *te0 = (const real_t *)sb->t_e0 + b * ne;
    real_t *x = (real_t *)sb->x + b * ne, *px = (real_t *)sb->prev_x + b * ne;
    const real_t *x0 = (const real_t *)sb->x0 + b * ne;
    real_t *y = (real_t *)sb->y + b * ni, *py = (real_t *)sb->prev_y + b * ni;
    const real_t *y0 = (const real_t *)sb->y0 + b * ni;
    real_t *act = (real_t *)sb->activity + b * n;
    real_t *drive = (real_t *)sb->drive + b * n;
    real_t *eff = (real_t *)sb->effectors + b * nout;
    int32_t *af = sb->adapt_finite + b * ne;

    memcpy(w, w0, nee * sizeof *w);
    memcpy(mask, mask0, nee * sizeof *mask); /* pruned edges return */
    for (size_t i = 0; i < ne; i++) {
        te[i] = te0[i];
        x[i] = px[i] = act[i] = x0[i];
        af[i] = 1;
    }
    for (size_t k = 0; k < ni; k++)
        y[k] = py[k] = act[ne + k] = y0[k];
    for (size_t u = 0; u < n; u++)
        drive[u] = 0;
    /* Zeros, not the readout of x: the reference starts and resets that way. */
    for (size_t k = 0; k < nout; k++)
        eff[k] = 0;
    sb->plasticity[2 * b] = sb->plasticity[2 * b + 1] = sb->learn_on[b];
    sb->finite[b] = 1;
}

/* Casts one validated initial state into slot b (round to nearest; the cast
 * check ran before anything was allocated) and initialises it as a reset. */
static void SORN_FN(sorn_fill_slot)(sorn_batch *sb, size_t b, const bl_sorn_init *in)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t nout = sb->base.effectors, nee = ne * ne;
    real_t *w0 = (real_t *)sb->w_ee0 + b * nee;
    uint8_t *mask0 = sb->ee_mask0 + b * nee;
    real_t *ce = (real_t *)sb->c_e + b * ne;
    real_t *wei = (real_t *)sb->w_ei + b * ne * ni;
    real_t *wie = (real_t *)sb->w_ie + b * ni * ne;
    real_t *weu = (real_t *)sb->w_eu + b * ne * nr;
    uint8_t *omask = sb->out_mask + b * nout * ne;
    real_t *te0 = (real_t *)sb->t_e0 + b * ne;
    real_t *ti = (real_t *)sb->t_i + b * ni;
    real_t *x0 = (real_t *)sb->x0 + b * ne;
    real_t *y0 = (real_t *)sb->y0 + b * ni;
    real_t *par = (real_t *)sb->params + b * SORN_NPARAM;

    for (size_t k = 0; k < nee; k++) {
        w0[k] = (real_t)in->w_ee[k];
        mask0[k] = in->ee_mask[k] != 0.0;
    }
    for (size_t k = 0; k < ne * ni; k++) {
        wei[k] = (real_t)in->w_ei[k];
        wie[k] = (real_t)in->w_ie[k];
    }
    for (size_t k = 0; k < ne * nr; k++)
        weu[k] = (real_t)in->w_eu[k];
    for (size_t k = 0; k < nout * ne; k++)
        omask[k] = in->output_mask[k] != 0.0;
    for (size_t i = 0; i < ne; i++) {
        ce[i] = (real_t)in->c_e[i];
        te0[i] = (real_t)in->t_e[i];
        x0[i] = (real_t)in->x[i];
    }
    for (size_t k = 0; k < ni; k++) {
        ti[k] = (real_t)in->t_i[k];
        y0[k] = (real_t)in->y[k];
    }
    par[SORN_P_ETA_STDP] = (real_t)in->config.eta_stdp;
    par[SORN_P_ETA_IP] = (real_t)in->config.eta_ip;
    par[SORN_P_H_IP] = (real_t)in->config.H_ip;
    sb->learn_on[b] = in->config.learn_on ? 1 : 0;
    SORN_FN(sorn_reset_slot)(sb, b);
}

/* Phase 4 of slot b's frame (§3.6), shared by both kernels: the finite
 * flag, the activity and the effector readout from the new state. */
static void SORN_FN(sorn_emit)(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i;
    const size_t n = sb->base.nodes, nout = sb->base.effectors;
    const uint8_t *omask = sb->out_mask + b * nout * ne;
    const real_t *te = (const real_t *)sb->t_e + b * ne;
    const real_t *x = (const real_t *)sb->x + b * ne;
    const real_t *y = (const real_t *)sb->y + b * ni;
    real_t *act = (real_t *)sb->activity + b * n;
    const real_t *drive = (const real_t *)sb->drive + b * n;
    real_t *eff = (real_t *)sb->effectors + b * nout;
    const int32_t *af = sb->adapt_finite + b * ne;

    /* A binary state can hide an infinite drive (inf >= 0 fires),
     * so the drives themselves are checked. */
    int32_t valid = 1;
    for (size_t v = 0; v < n; v++)
        if (!isfinite(drive[v]))
            valid = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!af[i] || !isfinite(te[i]))
            valid = 0;
        act[i] = x[i];
    }
    for (size_t k = 0; k < ni; k++)
        act[ne + k] = y[k];
    for (size_t k = 0; k < nout; k++) {
        const uint8_t *orow = omask + k * ne;
        real_t s = 0;
        size_t cnt = 0; /* an integer count of the selected units */
        for (size_t i = 0; i < ne; i++) {
            if (orow[i]) {
                s = s + x[i];
                cnt++;
            }
        }
        eff[k] = cnt > 0 ? s / (real_t)cnt : (real_t)0;
    }
    /* Recomputed every frame; latching is the runtime's job. */
    sb->finite[b] = valid;
}

/* One frame of slot b; u = its inputs [R]. */
static void SORN_FN(sorn_step_slot)(sorn_batch *sb, size_t b, const real_t *u)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t n = sb->base.nodes, nee = ne * ne;
    real_t *w = (real_t *)sb->w_ee + b * nee;
    uint8_t *mask = sb->ee_mask + b * nee;
    const real_t *ce = (const real_t *)sb->c_e + b * ne;
    const real_t *wei = (const real_t *)sb->w_ei + b * ne * ni;
    const real_t *wie = (const real_t *)sb->w_ie + b * ni * ne;
    const real_t *weu = (const real_t *)sb->w_eu + b * ne * nr;
    real_t *te = (real_t *)sb->t_e + b * ne;
    const real_t *ti = (const real_t *)sb->t_i + b * ni;
    real_t *x = (real_t *)sb->x + b * ne, *px = (real_t *)sb->prev_x + b * ne;
    real_t *y = (real_t *)sb->y + b * ni, *py = (real_t *)sb->prev_y + b * ni;
    real_t *drive = (real_t *)sb->drive + b * n;
    int32_t *af = sb->adapt_finite + b * ne;
    const real_t *par = (const real_t *)sb->params + b * SORN_NPARAM;
    const real_t eta_stdp = par[SORN_P_ETA_STDP];
    const real_t eta_ip = par[SORN_P_ETA_IP];
    const real_t h_ip = par[SORN_P_H_IP];
    const bool stdp = sb->plasticity[2 * b] != 0;
    const bool ip = sb->plasticity[2 * b + 1] != 0;

    /* Phase 1: the update is synchronous, so both populations read only
     * last frame's state. */
    for (size_t i = 0; i < ne; i++)
        px[i] = x[i];
    for (size_t k = 0; k < ni; k++)
        py[k] = y[k];

    /* Phase 2. Threshold equality fires (drive == 0, -0.0 included). */
    for (size_t i = 0; i < ne; i++) {
        const real_t *wrow = w + i * ne;
        const real_t *irow = wei + i * ni;
        const real_t *urow = weu + i * nr;
        real_t exc = 0, inh = 0, inp = 0;
        for (size_t j = 0; j < ne; j++)
            exc = exc + wrow[j] * px[j];
        for (size_t k = 0; k < ni; k++)
            inh = inh + irow[k] * py[k];
        for (size_t q = 0; q < nr; q++)
            inp = inp + urow[q] * u[q];
        const real_t d = ((exc - inh) + inp) - te[i];
        drive[i] = d;
        x[i] = d >= 0 ? (real_t)1 : (real_t)0;
    }
    for (size_t k = 0; k < ni; k++) {
        const real_t *row = wie + k * ne;
        real_t s = 0;
        for (size_t j = 0; j < ne; j++)
            s = s + row[j] * px[j];
        const real_t d = s - ti[k];
        drive[ne + k] = d;
        y[k] = d >= 0 ? (real_t)1 : (real_t)0;
    }

    /* Phase 3: row i writes only row i, so rows are independent. */
    for (size_t i = 0; i < ne; i++) {
        af[i] = 1;
        if (stdp) {
            real_t *wrow = w + i * ne;
            uint8_t *mrow = mask + i * ne;
            const real_t xi = x[i], pxi = px[i];
            real_t tot = 0;
            for (size_t j = 0; j < ne; j++) {
                real_t wv = 0; /* unmasked entries are forced to +0 */
                if (mrow[j]) {
                    /* The reference's grouping; with binary states the
                     * bracket is -1, 0 or 1 and eta * bracket is exact, so
                     * only the final addition rounds. */
                    const real_t corr = xi * px[j] - pxi * x[j];
                    wv = wrow[j] + eta_stdp * corr;
                    /* Before the pruning clamp, which would turn -inf to 0. */
                    if (!isfinite(wv))
                        af[i] = 0;
                    if (wv <= 0) {
                        /* Permanent: a pruned edge never regrows (until a
                         * reset). */
                        wv = 0;
                        mrow[j] = 0;
                    }
                }
                wrow[j] = wv;
                tot = tot + wv;
            }
            /* An overflowing total must not be normalised away. */
            if (!isfinite(tot))
                af[i] = 0;
            if (tot > 0 && ce[i] > 0) {
                /* One division, then a multiplication per synapse. */
                const real_t scale = ce[i] / tot;
                if (!isfinite(scale))
                    af[i] = 0;
                for (size_t j = 0; j < ne; j++)
                    if (mrow[j])
                        wrow[j] = wrow[j] * scale;
            }
        }
        if (ip)
            te[i] = te[i] + eta_ip * (x[i] - h_ip);
    }

    SORN_FN(sorn_emit)(sb, b);
}

static void SORN_FN(sorn_step)(sorn_batch *sb, const void *inputs, const int32_t *active)
{
    const size_t nr = sb->base.receptors;
    const real_t *u = inputs;
    for (size_t b = 0; b < sb->base.slots; b++)
        if (active[b])
            SORN_FN(sorn_step_slot)(sb, b, u + b * nr);
}

/* count values of a dtype array, starting at element off, as doubles
 * (exact for float). */
static void SORN_FN(sorn_export)(const void *src, size_t off, size_t count, double *dst)
{
    const real_t *s = (const real_t *)src + off;
    for (size_t k = 0; k < count; k++)
        dst[k] = (double)s[k];
}

#undef real_t
#undef SORN_FN
#undef SORN_CAT
#undef SORN_CAT_
