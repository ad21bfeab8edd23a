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

/* §3.7 for the O(N) state of slot b: every field that can change while
 * stepping but the E->E weights and mask (sorn_load_initial) goes back to
 * its creation value. The fields that never change after creation (the
 * wiring's, parameters) are their own reset copy. */
static void SORN_FN(sorn_reset_state)(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i;
    const size_t n = sb->base.nodes, nout = sb->base.effectors;
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

static bool SORN_FN(sorn_bits_zero)(real_t v)
{
    const real_t zero = 0;
    return memcmp(&v, &zero, sizeof v) == 0;
}

/* The fixed arrays of an initial state cast into a new wiring wr (zeroed by
 * the caller, its allocations listed in sorn_wiring_free), and its w_ee0
 * into a new weight set iw; false when out of memory. */
static bool SORN_FN(sorn_cast_wiring)(const sorn_batch *sb, const bl_sorn_init *in,
                                      sorn_wiring *wr, sorn_w0 *iw)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t nout = sb->base.effectors, nep = sb->ne_pad, nip = sb->ni_pad;
    if (!sorn_wiring_rows(sb, in->ee_mask, wr))
        return false;
    const size_t nnz = wr->ptr[ne];
    /* One spare value keeps every allocation non-empty (N_I may be 0). */
    wr->c_e = bl_calloc(ne + 1, sizeof(real_t));
    wr->t_i = bl_calloc(ni + 1, sizeof(real_t));
    wr->wei_p = bl_calloc(ni * nep + 1, sizeof(real_t));
    wr->wie_p = bl_calloc(ne * nip + 1, sizeof(real_t));
    wr->weu_t = bl_calloc(nr * ne + 1, sizeof(real_t));
    wr->out_mask = bl_calloc(nout * ne + 1, 1);
    iw->cw = bl_calloc(nnz + 1, sizeof(real_t));
    if (!wr->c_e || !wr->t_i || !wr->wei_p || !wr->wie_p || !wr->weu_t || !wr->out_mask ||
        !iw->cw)
        return false;
    real_t *ce = wr->c_e, *ti = wr->t_i, *wei = wr->wei_p, *wie = wr->wie_p;
    real_t *weu = wr->weu_t, *cw0 = iw->cw;
    for (size_t i = 0; i < ne; i++) {
        ce[i] = (real_t)in->c_e[i];
        for (size_t k = 0; k < ni; k++) {
            wei[k * nep + i] = (real_t)in->w_ei[i * ni + k];
            wie[i * nip + k] = (real_t)in->w_ie[k * ne + i];
        }
        for (size_t q = 0; q < nr; q++)
            weu[q * ne + i] = (real_t)in->w_eu[i * nr + q];
    }
    for (size_t k = 0; k < ni; k++)
        ti[k] = (real_t)in->t_i[k];
    for (size_t k = 0; k < nout * ne; k++)
        wr->out_mask[k] = in->output_mask[k] != 0.0;
    for (size_t j = 0; j < ne; j++)
        for (size_t k = wr->ptr[j]; k < wr->ptr[j + 1]; k++)
            cw0[k] = (real_t)in->w_ee[(size_t)wr->dst[k] * ne + j];
    /* Outside the initial mask: +0 everywhere needs no copy. */
    bool plus = true, zeros = true;
    for (size_t k = 0; k < ne * ne; k++) {
        if (in->ee_mask[k] != 0.0)
            continue;
        const real_t v = (real_t)in->w_ee[k];
        zeros = zeros && v == 0;
        plus = plus && SORN_FN(sorn_bits_zero)(v);
    }
    iw->zeros = zeros;
    if (!plus) {
        real_t *d = bl_calloc(ne * ne, sizeof(real_t));
        if (!d)
            return false;
        for (size_t k = 0; k < ne * ne; k++)
            d[k] = (real_t)in->w_ee[k];
        iw->dense = d;
    }
    /* The input lists: each receptor's non-zero weights, units ascending,
     * padded to whole vectors with unit N_E and weight +0. */
    const size_t vl = SORN_VBYTES / sizeof(real_t);
    wr->in_ptr = bl_calloc(nr + 1, sizeof *wr->in_ptr);
    if (!wr->in_ptr)
        return false;
    size_t c = 0; /* at most R * (N_E + vl), so no wrap */
    for (size_t q = 0; q < nr; q++) {
        wr->in_ptr[q] = c;
        size_t cnt = 0;
        for (size_t i = 0; i < ne; i++)
            cnt += weu[q * ne + i] != 0;
        c += (cnt + vl - 1) / vl * vl;
    }
    wr->in_ptr[nr] = c;
    wr->in_unit = bl_calloc(c + 1, sizeof *wr->in_unit);
    wr->in_w = bl_calloc(c + 1, sizeof(real_t));
    if (!wr->in_unit || !wr->in_w)
        return false;
    real_t *iwt = wr->in_w;
    for (size_t q = 0; q < nr; q++) {
        c = wr->in_ptr[q];
        for (size_t i = 0; i < ne; i++)
            if (weu[q * ne + i] != 0) {
                wr->in_unit[c] = (uint32_t)i;
                iwt[c++] = weu[q * ne + i];
            }
        for (; c < wr->in_ptr[q + 1]; c++)
            wr->in_unit[c] = (uint32_t)ne;
    }
    return sorn_wiring_readout(sb, wr);
}

/* Casts one validated initial state into slot b (round to nearest; the cast
 * check ran before anything was allocated): its own values into its
 * blocks, its wiring and initial weights into ones shared with earlier
 * slots where they are the same bit for bit (sorn_attach); then resets its
 * state. Out of memory marks the batch (sorn_finish reports it). */
static void SORN_FN(sorn_fill_slot)(sorn_batch *sb, size_t b, const bl_sorn_init *in)
{
    const size_t ne = sb->n_e, ni = sb->n_i;
    real_t *te0 = (real_t *)sb->t_e0 + b * ne;
    real_t *x0 = (real_t *)sb->x0 + b * ne;
    real_t *y0 = (real_t *)sb->y0 + b * ni;
    real_t *par = (real_t *)sb->params + b * SORN_NPARAM;

    for (size_t i = 0; i < ne; i++) {
        te0[i] = (real_t)in->t_e[i];
        x0[i] = (real_t)in->x[i];
    }
    for (size_t k = 0; k < ni; k++)
        y0[k] = (real_t)in->y[k];
    par[SORN_P_ETA_STDP] = (real_t)in->config.eta_stdp;
    par[SORN_P_ETA_IP] = (real_t)in->config.eta_ip;
    par[SORN_P_H_IP] = (real_t)in->config.H_ip;
    sb->learn_on[b] = in->config.learn_on ? 1 : 0;
    sorn_wiring wr = {0};
    sorn_w0 iw = {0};
    if (sb->fill_failed || !SORN_FN(sorn_cast_wiring)(sb, in, &wr, &iw) ||
        !sorn_attach(sb, b, &wr, &iw)) {
        sorn_wiring_free(&wr);
        sorn_w0_free(&iw);
        sb->fill_failed = true;
    }
    SORN_FN(sorn_reset_state)(sb, b);
}

/* Phase 4 of slot b's frame (§3.6), shared by both kernels: the finite
 * flag, the activity and the effector readout from the new state. */
static void SORN_FN(sorn_emit)(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i;
    const size_t n = sb->base.nodes, nout = sb->base.effectors;
    const uint8_t *omask = sorn_wiring_of(sb, b)->out_mask;
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
    const size_t n = sb->base.nodes, nep = sb->ne_pad, nip = sb->ni_pad;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    /* A canonical slot's dense weights; the fixed ones are the wiring's,
     * the E<->I and input weights transposed. */
    real_t *w = sb->dense_w[b];
    uint8_t *mask = sb->dense_m[b];
    const real_t *ce = wr->c_e;
    const real_t *wei = wr->wei_p, *wie = wr->wie_p, *weu = wr->weu_t;
    real_t *te = (real_t *)sb->t_e + b * ne;
    const real_t *ti = wr->t_i;
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
        real_t exc = 0, inh = 0, inp = 0;
        for (size_t j = 0; j < ne; j++)
            exc = exc + wrow[j] * px[j];
        for (size_t k = 0; k < ni; k++)
            inh = inh + wei[k * nep + i] * py[k]; /* w_ei[i][k] */
        for (size_t q = 0; q < nr; q++)
            inp = inp + weu[q * ne + i] * u[q]; /* w_eu[i][q] */
        const real_t d = ((exc - inh) + inp) - te[i];
        drive[i] = d;
        x[i] = d >= 0 ? (real_t)1 : (real_t)0;
    }
    for (size_t k = 0; k < ni; k++) {
        real_t s = 0;
        for (size_t j = 0; j < ne; j++)
            s = s + wie[j * nip + k] * px[j]; /* w_ie[k][j] */
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

#undef real_t
#undef SORN_FN
#undef SORN_CAT
#undef SORN_CAT_
