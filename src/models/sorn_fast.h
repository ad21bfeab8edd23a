/* The fast SORN frame and its weight layout, written once for `real_t` and
 * included by sorn_batch.c for double and for float (SORN_REAL, SORN_SFX),
 * after sorn_kernel.h, whose reset, reference frame and readout it shares.
 *
 * It gives the bits of the reference frame (sorn_kernel.h) for the same
 * dtype, up to and including the frame in which a slot first reports
 * non-finite, by doing the same floating-point operations on the same
 * operands in the same order and leaving out only operations that provably
 * change no bit. The argument, once:
 *
 *   Zero terms. Every sum of §3.6 starts at +0 and adds its terms in
 *   ascending order. Under round to nearest such an accumulator is never
 *   −0: +0 + (±0) = +0, and two non-zero values that cancel give +0. So it
 *   is always +0, non-zero, ±inf or NaN, and adding a zero of either sign
 *   leaves each of those bit for bit unchanged (NaN + ±0 gives back the
 *   NaN). A term w·s is such a zero whenever w is finite and s is ±0, or w
 *   is ±0 and s finite. The states s multiplied in the sums (prev_x,
 *   prev_y) are always finite: the initial x, y are validated binary before
 *   conversion, so ±0 or 1 (−0 passes as 0), and later ones are 0 or 1.
 *   So these terms may be skipped:
 *     (a) terms of sources with prev == 0 (either zero) whenever the weight
 *         is finite. w_ei and w_ie never change and are validated finite,
 *         so the inhibitory term and the I drive visit only the sources
 *         that fired. w_ee is validated finite at creation and changes only
 *         in phase 3; any non-finite value it gets there sets the slot's
 *         `wild` flag here, and wild slots visit every source (the "_all"
 *         path) until a reset. (Such a frame normally reports non-finite
 *         and the slot is never stepped again; the flag also covers a
 *         normalisation product that overflows without any flag of §3.6.)
 *     (b) E->E terms of entries outside the initial mask, which are never
 *         in the compressed rows. Their weight is ±0 whenever the slot is in
 *         the sparse layout: a slot enters it only when every such weight is
 *         its initial value and that is ±0 for all of them, or every such
 *         weight is +0 (`cleared`), and only a plastic frame writes them,
 *         writing +0. Their signed zeros are rebuilt from w_ee0 / `cleared`
 *         for snapshots and kernel switches.
 *   Terms that are not skipped are the reference's expression w·s, added
 *   to the accumulator. Each destination receives its terms in ascending
 *   source order because sources are visited in ascending order and a
 *   destination appears at most once per source row.
 *
 * Phase 3 per entry: the STDP update, its finite flag, the pruning clamp
 * and the normalisation product are per-entry statements of the reference
 * on the same operands, done here for every entry of the compressed rows
 * (the initial mask), which covers every entry the mask may still hold
 * (pruning only removes). Entries outside the initial mask are forced to +0
 * by the reference and add +0 to the row total, which (a sum of +0,
 * positive, +inf or NaN terms from +0) is never −0, so leaving them out
 * changes no bit of the total; after such a frame they are all +0 and the
 * slot is marked `cleared`. A pruned entry of the rows is written +0 and
 * added exactly as in the reference. The row totals accumulate per
 * destination in ascending source order, as the reference's row loop
 * does. The reference's row order "update, total, scale, threshold"
 * touches disjoint state per row, so doing each step for all rows before
 * the next is the same.
 *
 * Sums the fast frame does not restructure (the input term over the R
 * receptors, whose inputs are arbitrary reals, and the readout) are the
 * reference's code on the same operands.
 *
 * NaN bits: within the frames owed, every skipped or reordered term is a
 * finite product, so an addition meets at most one NaN operand (the
 * accumulator) and x86 returns that one whatever the operand order; the
 * expressions that may meet two NaNs (the drive, the input term, the
 * readout) are written exactly as in the reference. The tests compare NaNs
 * bit for bit.
 *
 * Layouts (per slot, chosen whenever weights are loaded: creation, reset,
 * kernel switch, and after a plastic frame of a canonical slot):
 *   - SORN_LAYOUT_SPARSE: the synapses of the initial mask in compressed
 *     source-major rows (cw, cm), with the dense w_ee stale. Constructed
 *     wirings always qualify (W·M leaves ±0 outside the mask).
 *   - SORN_LAYOUT_CANON: w_ee authoritative; the slot steps with the
 *     reference frame. Used by hand-made states with non-zero weights
 *     outside the mask until their first plastic frame clears them. */
#if !defined(SORN_REAL) || !defined(SORN_SFX)
#error "define SORN_REAL and SORN_SFX before including sorn_fast.h"
#endif

#define SORN_CAT_(a, b) a##_##b
#define SORN_CAT(a, b) SORN_CAT_(a, b)
#define SORN_FN(name) SORN_CAT(name, SORN_SFX)
#define real_t SORN_REAL

static bool SORN_FN(sorn_same_bits)(real_t a, real_t b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Makes w_ee of slot b authoritative again, whatever its layout. */
static void SORN_FN(sorn_to_canonical)(sorn_batch *sb, size_t b)
{
    if (sb->layout[b] != SORN_LAYOUT_SPARSE)
        return;
    const size_t ne = sb->n_e, nee = ne * ne;
    real_t *w = (real_t *)sb->w_ee + b * nee;
    const real_t *w0 = (const real_t *)sb->w_ee0 + b * nee;
    const size_t *ptr = sb->col_ptr + b * (ne + 1);
    const size_t off = sb->nz_off[b];
    const uint32_t *dst = sb->nz_dst + off;
    const real_t *cw = (const real_t *)sb->cw + off;
    const bool cleared = sb->cleared[b] != 0;
    for (size_t k = 0; k < nee; k++)
        w[k] = cleared ? (real_t)0 : w0[k];
    for (size_t j = 0; j < ne; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
            w[(size_t)dst[k] * ne + j] = cw[k];
    sb->layout[b] = SORN_LAYOUT_CANON;
}

/* Moves a canonical slot into the sparse layout if the weights outside the
 * initial mask allow it (see the argument at the top); it stays canonical
 * otherwise. Returns whether it moved. */
static bool SORN_FN(sorn_from_canonical)(sorn_batch *sb, size_t b)
{
    if (sb->reference || sb->layout[b] == SORN_LAYOUT_SPARSE)
        return false;
    const size_t ne = sb->n_e, nee = ne * ne;
    const real_t *w = (const real_t *)sb->w_ee + b * nee;
    const real_t *w0 = (const real_t *)sb->w_ee0 + b * nee;
    const uint8_t *mask = sb->ee_mask + b * nee;
    const uint8_t *mask0 = sb->ee_mask0 + b * nee;
    bool initial = true, cleared = true;
    for (size_t k = 0; k < nee && (initial || cleared); k++) {
        if (mask0[k])
            continue;
        if (!(SORN_FN(sorn_same_bits)(w[k], w0[k]) && w0[k] == 0))
            initial = false;
        if (!SORN_FN(sorn_same_bits)(w[k], (real_t)0))
            cleared = false;
    }
    if (!initial && !cleared)
        return false;
    const size_t *ptr = sb->col_ptr + b * (ne + 1);
    const size_t off = sb->nz_off[b];
    const uint32_t *dst = sb->nz_dst + off;
    real_t *cw = (real_t *)sb->cw + off;
    uint8_t *cm = sb->cm + off;
    bool wild = false;
    for (size_t j = 0; j < ne; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
            const size_t e = (size_t)dst[k] * ne + j;
            cw[k] = w[e];
            cm[k] = mask[e];
            if (!isfinite(cw[k]))
                wild = true;
        }
    sb->cleared[b] = !initial;
    sb->wild[b] = wild;
    sb->layout[b] = SORN_LAYOUT_SPARSE;
    return true;
}

/* The transposed copies of the fixed E<->I weights of slot b. */
static void SORN_FN(sorn_fill_transposed)(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i;
    const real_t *wei = (const real_t *)sb->w_ei + b * ne * ni;
    const real_t *wie = (const real_t *)sb->w_ie + b * ni * ne;
    real_t *wei_t = (real_t *)sb->wei_t + b * ne * ni;
    real_t *wie_t = (real_t *)sb->wie_t + b * ne * ni;
    for (size_t i = 0; i < ne; i++)
        for (size_t k = 0; k < ni; k++) {
            wei_t[k * ne + i] = wei[i * ni + k];
            wie_t[i * ni + k] = wie[k * ne + i];
        }
}

/* §3.7 reset under either kernel. */
static void SORN_FN(sorn_reset_any)(sorn_batch *sb, size_t b)
{
    SORN_FN(sorn_reset_slot)(sb, b);
    sb->layout[b] = SORN_LAYOUT_CANON;
    SORN_FN(sorn_from_canonical)(sb, b);
}

/* One fast frame of a sparse slot b; u = its inputs [R]. */
static void SORN_FN(sorn_fast_slot)(sorn_batch *sb, size_t b, const real_t *u)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t n = sb->base.nodes, nee = ne * ne;
    uint8_t *mask = sb->ee_mask + b * nee;
    const real_t *ce = (const real_t *)sb->c_e + b * ne;
    const real_t *restrict wei_t = (const real_t *)sb->wei_t + b * ne * ni;
    const real_t *restrict wie_t = (const real_t *)sb->wie_t + b * ne * ni;
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
    const size_t *ptr = sb->col_ptr + b * (ne + 1);
    const size_t off = sb->nz_off[b];
    const uint32_t *dst = sb->nz_dst + off;
    real_t *cw = (real_t *)sb->cw + off;
    uint8_t *cm = sb->cm + off;
    real_t *restrict exc = sb->sc_exc;
    real_t *restrict inh = sb->sc_inh;
    real_t *restrict idr = sb->sc_idr;
    real_t *restrict tot = sb->sc_tot;
    real_t *restrict scale = sb->sc_scale;
    uint8_t *norm = sb->sc_norm;
    size_t *actx = sb->sc_actx, *acty = sb->sc_acty;

    /* Phase 1, and the sources that fired (either zero is silent). */
    size_t nax = 0, nay = 0;
    for (size_t i = 0; i < ne; i++) {
        px[i] = x[i];
        if (px[i] != 0)
            actx[nax++] = i;
    }
    for (size_t k = 0; k < ni; k++) {
        py[k] = y[k];
        if (py[k] != 0)
            acty[nay++] = k;
    }

    /* Phase 2: the three E sums as per-destination accumulators fed in
     * ascending source order. */
    for (size_t i = 0; i < ne; i++)
        exc[i] = inh[i] = 0;
    for (size_t k = 0; k < ni; k++)
        idr[k] = 0;
    if (sb->wild[b]) {
        sb->paths.sparse_all++;
        for (size_t j = 0; j < ne; j++) {
            const real_t s = px[j];
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                exc[dst[k]] = exc[dst[k]] + cw[k] * s;
        }
    } else {
        sb->paths.sparse++;
        for (size_t a = 0; a < nax; a++) {
            const size_t j = actx[a];
            const real_t s = px[j];
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                exc[dst[k]] = exc[dst[k]] + cw[k] * s;
        }
    }
    for (size_t a = 0; a < nay; a++) {
        const size_t k = acty[a];
        const real_t s = py[k];
        const real_t *restrict col = wei_t + k * ne;
        for (size_t i = 0; i < ne; i++)
            inh[i] = inh[i] + col[i] * s;
    }
    for (size_t i = 0; i < ne; i++) {
        const real_t *urow = weu + i * nr;
        real_t inp = 0;
        for (size_t q = 0; q < nr; q++)
            inp = inp + urow[q] * u[q];
        const real_t d = ((exc[i] - inh[i]) + inp) - te[i];
        drive[i] = d;
        x[i] = d >= 0 ? (real_t)1 : (real_t)0;
    }
    for (size_t a = 0; a < nax; a++) {
        const size_t j = actx[a];
        const real_t s = px[j];
        const real_t *restrict col = wie_t + j * ni;
        for (size_t k = 0; k < ni; k++)
            idr[k] = idr[k] + col[k] * s;
    }
    for (size_t k = 0; k < ni; k++) {
        const real_t d = idr[k] - ti[k];
        drive[ne + k] = d;
        y[k] = d >= 0 ? (real_t)1 : (real_t)0;
    }

    /* Phase 3. */
    for (size_t i = 0; i < ne; i++)
        af[i] = 1;
    if (stdp) {
        bool bad = false, any_norm = false;
        for (size_t i = 0; i < ne; i++)
            tot[i] = 0;
        for (size_t j = 0; j < ne; j++) {
            const real_t pxj = px[j], xj = x[j];
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
                const size_t i = dst[k];
                real_t wv = 0;
                if (cm[k]) {
                    const real_t corr = x[i] * pxj - px[i] * xj;
                    wv = cw[k] + eta_stdp * corr;
                    if (!isfinite(wv)) {
                        af[i] = 0;
                        bad = true;
                    }
                    if (wv <= 0) {
                        wv = 0;
                        cm[k] = 0;
                        mask[i * ne + j] = 0;
                    }
                }
                cw[k] = wv;
                tot[i] = tot[i] + wv;
            }
        }
        for (size_t i = 0; i < ne; i++) {
            if (!isfinite(tot[i]))
                af[i] = 0;
            norm[i] = tot[i] > 0 && ce[i] > 0;
            if (norm[i]) {
                any_norm = true;
                scale[i] = ce[i] / tot[i];
                if (!isfinite(scale[i]))
                    af[i] = 0;
            }
        }
        if (any_norm) {
            const size_t nz = ptr[ne];
            for (size_t k = 0; k < nz; k++) {
                const size_t i = dst[k];
                if (cm[k] && norm[i]) {
                    cw[k] = cw[k] * scale[i];
                    if (!isfinite(cw[k]))
                        bad = true;
                }
            }
        }
        /* Every weight outside the initial mask is +0 now. */
        sb->cleared[b] = 1;
        if (bad)
            sb->wild[b] = 1;
    }
    if (ip)
        for (size_t i = 0; i < ne; i++)
            te[i] = te[i] + eta_ip * (x[i] - h_ip);

    SORN_FN(sorn_emit)(sb, b);
}

static void SORN_FN(sorn_step_fast)(sorn_batch *sb, const void *inputs, const int32_t *active)
{
    const size_t nr = sb->base.receptors;
    const real_t *u = inputs;
    for (size_t b = 0; b < sb->base.slots; b++) {
        if (!active[b])
            continue;
        if (sb->layout[b] == SORN_LAYOUT_SPARSE) {
            SORN_FN(sorn_fast_slot)(sb, b, u + b * nr);
            continue;
        }
        const bool stdp = sb->plasticity[2 * b] != 0;
        sb->paths.canonical++;
        SORN_FN(sorn_step_slot)(sb, b, u + b * nr);
        /* Only a plastic frame can make the slot eligible (it clears the
         * weights outside the mask). */
        if (stdp && SORN_FN(sorn_from_canonical)(sb, b))
            sb->paths.to_sparse++;
    }
}

/* The canonical w_ee of slot b into a snapshot's values (as doubles). */
static void SORN_FN(sorn_export_w_ee)(const sorn_batch *sb, size_t b, double *out)
{
    const size_t ne = sb->n_e, nee = ne * ne;
    if (sb->layout[b] != SORN_LAYOUT_SPARSE) {
        SORN_FN(sorn_export)(sb->w_ee, b * nee, nee, out);
        return;
    }
    const real_t *w0 = (const real_t *)sb->w_ee0 + b * nee;
    const size_t *ptr = sb->col_ptr + b * (ne + 1);
    const size_t off = sb->nz_off[b];
    const uint32_t *dst = sb->nz_dst + off;
    const real_t *cw = (const real_t *)sb->cw + off;
    const bool cleared = sb->cleared[b] != 0;
    for (size_t k = 0; k < nee; k++)
        out[k] = cleared ? 0.0 : (double)w0[k];
    for (size_t j = 0; j < ne; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
            out[(size_t)dst[k] * ne + j] = (double)cw[k];
}

#undef real_t
#undef SORN_FN
#undef SORN_CAT
#undef SORN_CAT_
