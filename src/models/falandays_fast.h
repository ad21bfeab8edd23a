/* The fast Falandays frame and the weight layouts it runs on, written once
 * for `real_t` and included by falandays_batch.c for double and for float
 * (FAL_REAL, FAL_SFX), after falandays_kernel.h, whose readout it shares.
 *
 * It gives the bits of the reference frame (falandays_kernel.h) for the
 * same dtype, up to and including the frame in which a slot first reports
 * non-finite, by doing the same floating-point operations on the same
 * operands in the same order and leaving out only operations that provably
 * change no bit. The argument, once:
 *
 *   The recurrent sum of node i is rec = (((+0 + t_0) + t_1) + ...) with
 *   t_j = W[i][j]·(previous[j]·σ_j), in ascending j. Under round to nearest
 *   rec is never −0: +0 + (±0) = +0, and a sum of two non-zero values that
 *   cancels gives +0. So rec is always +0, non-zero, ±inf or NaN, and adding
 *   a zero term (of either sign) leaves each of those bit for bit unchanged
 *   (x + ±0 = x for non-zero x; +0 + ±0 = +0; NaN + ±0 gives back the NaN).
 *   A term is a zero whenever W[i][j] is finite and previous[j]·σ_j is ±0,
 *   or W[i][j] is ±0 and previous[j]·σ_j is finite. previous[j] is always
 *   finite (initial spikes are validated finite, later spikes are 0 or 1),
 *   hence so is previous[j]·σ_j, and it is ±0 exactly when previous[j] is.
 *   Two kinds of terms can therefore be skipped:
 *     (a) those of silent sources (previous[j] == 0), as long as every
 *         weight is finite. Weights start finite (validated) and change only
 *         by the learning step of masked entries, which flags any non-finite
 *         result (the frame then reports non-finite) and sets the slot's
 *         `wild` flag here; wild slots visit every source (the "_all" paths)
 *         until a reset, so even frames after a failure keep the reference's
 *         w·0 = NaN.
 *     (b) those of synapses outside the mask whose weight is ±0. Only the
 *         Dale clearing writes unmasked weights, and it writes +0; so a slot
 *         whose unmasked weights are all ±0 keeps them so, and compressed
 *         rows that hold only the masked synapses are exact. The unmasked
 *         values themselves (their signed zeros matter in snapshots) are
 *         then either the initial ones or, once a clearing has run (`cleared`),
 *         all +0; snapshots rebuild them from that.
 *   Terms that are not skipped are computed exactly as the reference does,
 *   W·(previous·σ) rounded once, then added to rec; every destination gets
 *   its terms in ascending source order because sources are visited in
 *   ascending order and each destination appears at most once per source.
 *
 * The learning count c of node i counts masked sources with previous ≠ 0;
 * adding 1.0 to an integral real is exact in any order (c ≤ N < 2^24), so
 * counting per spiking source gives the same value. The weight update,
 * the Dale clamp and the finite checks are per entry and do not depend on
 * the order of entries; the masked entries of spiking sources are exactly
 * the entries the reference updates, since those are the ones with
 * M ≠ 0 and previous ≠ 0 (and their destinations then have c > 0). The
 * reference's per-row order "update, clear, target" touches disjoint state
 * per row, so doing all updates, then the clearing, then all targets is
 * the same. Clearing is idempotent: once every unmasked weight is +0 no
 * later write touches them, so a clearing after the first changes nothing
 * and is skipped. Receptor input sums, the node update, the readout and
 * the finite flag are the reference's statements on the same operands.
 *
 * NaN bits: within the frames owed, an operation here meets two NaN
 * operands only where the reference's does too, written as the same
 * expression ((a·keep + s) + rec, the readout); everywhere else at most one
 * operand can be NaN (weights and previous·σ are finite there), and x86
 * returns that one whatever the operand order. The weight update is
 * w − δ, or w + δ for an inhibitory Dale source, in both kernels, leaving
 * compilers no negation to fold. The tests compare NaNs bit for bit.
 *
 * Layouts (per slot, chosen whenever weights are loaded: creation, reset,
 * kernel switch):
 *   - FAL_LAYOUT_SPARSE: the masked synapses of each source in compressed
 *     rows (row_dst/row_w), when every unmasked weight is +0 or its initial
 *     ±0. Constructed wirings always qualify (W·M leaves ±0 outside the
 *     mask). Measured faster than dense rows even for full masks, since the
 *     learning step walks the synapses of spiking sources either way.
 *   - FAL_LAYOUT_DENSE: weights[b] stored [source][destination]; the rows
 *     of spiking sources are contiguous and added to every destination with
 *     vector lanes. Used for hand-made states with non-zero unmasked
 *     weights (and on BL_FAL_KERNEL_DENSE); a Dale slot turns sparse after
 *     its first clearing, which leaves nothing outside the mask but +0.
 * Both count and learn through the compressed index rows, which never
 * change (the mask is fixed). */
#if !defined(FAL_REAL) || !defined(FAL_SFX)
#error "define FAL_REAL and FAL_SFX before including falandays_fast.h"
#endif

#define FAL_CAT_(a, b) a##_##b
#define FAL_CAT(a, b) FAL_CAT_(a, b)
#define FAL_FN(name) FAL_CAT(name, FAL_SFX)
#define real_t FAL_REAL

static bool FAL_FN(fal_same_bits)(real_t a, real_t b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Makes weights[b] canonical ([destination][source]) whatever its layout. */
static void FAL_FN(fal_to_canonical)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, nn = n * n;
    real_t *w = (real_t *)fb->weights + b * nn;
    switch (fb->layout[b]) {
    case FAL_LAYOUT_DENSE:
        /* Square in-place transpose. */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++) {
                const real_t t = w[i * n + j];
                w[i * n + j] = w[j * n + i];
                w[j * n + i] = t;
            }
        break;
    case FAL_LAYOUT_SPARSE: {
        /* The dense buffer is stale in this layout: rebuild every entry. */
        const real_t *w0 = (const real_t *)fb->weights0 + b * nn;
        const bool cleared = fb->cleared[b] != 0;
        for (size_t k = 0; k < nn; k++)
            w[k] = cleared ? (real_t)0 : w0[k];
        const size_t *ptr = fb->row_ptr + b * (n + 1);
        const real_t *rw = (const real_t *)fb->row_w;
        for (size_t j = 0; j < n; j++)
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                w[(size_t)fb->row_dst[k] * n + j] = rw[k];
        break;
    }
    default:
        break;
    }
    fb->layout[b] = FAL_LAYOUT_CANON;
}

/* Copies slot b's masked weights from the source-major dense buffer into
 * its compressed rows. */
static void FAL_FN(fal_dense_to_rows)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes;
    const real_t *wt = (const real_t *)fb->weights + b * n * n;
    const size_t *ptr = fb->row_ptr + b * (n + 1);
    real_t *rw = (real_t *)fb->row_w;
    for (size_t j = 0; j < n; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
            rw[k] = wt[j * n + fb->row_dst[k]];
}

/* Takes canonical weights[b] into the layout the batch's kernel and the
 * slot's state allow (see the exactness argument at the top). */
static void FAL_FN(fal_from_canonical)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, nn = n * n;
    BL_ASSERT(fb->layout[b] == FAL_LAYOUT_CANON);
    if (fb->kernel == BL_FAL_KERNEL_REFERENCE)
        return;
    real_t *w = (real_t *)fb->weights + b * nn;
    const real_t *w0 = (const real_t *)fb->weights0 + b * nn;
    const int32_t *mask = fb->mask + b * nn;
    bool finite = true, plus0 = true, initial0 = true;
    for (size_t k = 0; k < nn; k++) {
        if (!isfinite(w[k]))
            finite = false;
        if (mask[k] == 0) {
            if (!FAL_FN(fal_same_bits)(w[k], (real_t)0))
                plus0 = false;
            if (!(w0[k] == 0 && FAL_FN(fal_same_bits)(w[k], w0[k])))
                initial0 = false;
        }
    }
    fb->wild[b] = !finite;
    fb->cleared[b] = plus0;
    if (fb->kernel == BL_FAL_KERNEL_FAST && (plus0 || initial0)) {
        /* Every unmasked weight is +0 (cleared) or its initial ±0. */
        const size_t *ptr = fb->row_ptr + b * (n + 1);
        real_t *rw = (real_t *)fb->row_w;
        for (size_t j = 0; j < n; j++)
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                rw[k] = w[(size_t)fb->row_dst[k] * n + j];
        fb->layout[b] = FAL_LAYOUT_SPARSE;
        return;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const real_t t = w[i * n + j];
            w[i * n + j] = w[j * n + i];
            w[j * n + i] = t;
        }
    fb->layout[b] = FAL_LAYOUT_DENSE;
}

/* Canonical weights of slot b as doubles (exact for float), for snapshots. */
static void FAL_FN(fal_export_weights)(const fal_batch *fb, size_t b, double *dst)
{
    const size_t n = fb->base.nodes, nn = n * n;
    const real_t *w = (const real_t *)fb->weights + b * nn;
    switch (fb->layout[b]) {
    case FAL_LAYOUT_DENSE:
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                dst[i * n + j] = (double)w[j * n + i];
        break;
    case FAL_LAYOUT_SPARSE: {
        const real_t *w0 = (const real_t *)fb->weights0 + b * nn;
        const bool cleared = fb->cleared[b] != 0;
        for (size_t k = 0; k < nn; k++)
            dst[k] = cleared ? 0.0 : (double)w0[k];
        const size_t *ptr = fb->row_ptr + b * (n + 1);
        const real_t *rw = (const real_t *)fb->row_w;
        for (size_t j = 0; j < n; j++)
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                dst[(size_t)fb->row_dst[k] * n + j] = (double)rw[k];
        break;
    }
    default:
        for (size_t k = 0; k < nn; k++)
            dst[k] = (double)w[k];
        break;
    }
}

/* GNU C vectors (gcc and clang): `vec` fills one SSE register, `pair` holds
 * a node's running recurrent sum and learning count side by side, so one
 * load-add-store updates both. Lane arithmetic is the scalar IEEE
 * arithmetic of the dtype (no contraction: -ffp-contract=off). */
typedef real_t FAL_FN(fal_vec) __attribute__((vector_size(16)));
/* Aligned as its elements only, so any allocation will do. */
typedef real_t FAL_FN(fal_pair)
    __attribute__((vector_size(2 * sizeof(real_t)), aligned(sizeof(real_t))));
#define FAL_VEC FAL_FN(fal_vec)
#define FAL_PAIR FAL_FN(fal_pair)
#define FAL_VL (16 / sizeof(real_t))

/* rec[i] = rec[i] + row[i]·p for every destination i of a dense
 * source-major row: per lane the reference's multiply, then add. */
static void FAL_FN(fal_axpy)(real_t *restrict rec, const real_t *restrict row, real_t p,
                             size_t n)
{
    FAL_VEC pv;
    for (size_t l = 0; l < FAL_VL; l++)
        pv[l] = p;
    size_t i = 0;
    for (; i + 2 * FAL_VL <= n; i += 2 * FAL_VL) {
        FAL_VEC r0, r1, w0, w1;
        memcpy(&r0, rec + i, sizeof r0);
        memcpy(&r1, rec + i + FAL_VL, sizeof r1);
        memcpy(&w0, row + i, sizeof w0);
        memcpy(&w1, row + i + FAL_VL, sizeof w1);
        r0 = r0 + w0 * pv;
        r1 = r1 + w1 * pv;
        memcpy(rec + i, &r0, sizeof r0);
        memcpy(rec + i + FAL_VL, &r1, sizeof r1);
    }
    for (; i < n; i++)
        rec[i] = rec[i] + row[i] * p;
}

/* The weight update of one row of source j: the synapse to destination
 * d[k] is vals[k] (compressed, `gather` false) or vals[d[k]] (dense
 * source-major, `gather` true), and becomes vals − δ[d], or vals + δ[d]
 * for an inhibitory Dale source (`add`), as the reference writes it.
 * Returns whether some result is non-finite, found without a branch per
 * entry: w − w is +0 for finite w and NaN otherwise, and a NaN survives
 * every later addition. Called with constant flags, so each combination
 * compiles to its own loop. */
static inline bool FAL_FN(fal_learn_row)(real_t *restrict vals, const uint32_t *restrict d,
                                         size_t len, const real_t *restrict delta,
                                         const bool gather, const bool add)
{
    real_t m0 = 0, m1 = 0;
    size_t k = 0;
    for (; k + 2 <= len; k += 2) {
        const size_t i0 = d[k], i1 = d[k + 1];
        const size_t s0 = gather ? i0 : k, s1 = gather ? i1 : k + 1;
        const real_t w0 = add ? vals[s0] + delta[i0] : vals[s0] - delta[i0];
        const real_t w1 = add ? vals[s1] + delta[i1] : vals[s1] - delta[i1];
        m0 = m0 + (w0 - w0);
        m1 = m1 + (w1 - w1);
        vals[s0] = w0;
        vals[s1] = w1;
    }
    if (k < len) {
        const size_t i0 = d[k], s0 = gather ? i0 : k;
        const real_t w0 = add ? vals[s0] + delta[i0] : vals[s0] - delta[i0];
        m0 = m0 + (w0 - w0);
        vals[s0] = w0;
    }
    return m0 + m1 != 0;
}

/* One frame of slot b with the fast layouts; u = its inputs [R], xi = its
 * noise row [N]. The phases and statements mirror fal_step_slot. */
static void FAL_FN(fal_fast_step_slot)(fal_batch *fb, size_t b, const real_t *u,
                                       const real_t *xi)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, nn = n * n;
    real_t *acts = (real_t *)fb->acts + b * n;
    real_t *targets = (real_t *)fb->targets + b * n;
    real_t *spikes = (real_t *)fb->spikes + b * n;
    real_t *prev = (real_t *)fb->previous + b * n;
    real_t *errors = (real_t *)fb->errors + b * n;
    real_t *counts = (real_t *)fb->counts + b * n;
    real_t *wt = (real_t *)fb->weights + b * nn; /* [source][destination] when dense */
    real_t *rw = (real_t *)fb->row_w;            /* compressed rows when sparse */
    const size_t *ptr = fb->row_ptr + b * (n + 1);
    const uint32_t *dst = fb->row_dst;
    const real_t *win = (const real_t *)fb->input_w + b * n * nr;
    const real_t *par = (const real_t *)fb->params + b * FAL_NPARAM;
    const int32_t *signs = fb->signs + b * n;
    const int32_t *flags = fb->flags + b * FAL_NFLAG;
    int32_t *raw_finite = fb->raw_finite + b * n;
    real_t *rec = (real_t *)fb->rec;
    real_t *delta = (real_t *)fb->delta;
    FAL_PAIR *acc = (FAL_PAIR *)fb->acc;
    uint32_t *spk = fb->spk;

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
    const bool sparse = fb->layout[b] == FAL_LAYOUT_SPARSE;
    const bool all = fb->wild[b] != 0;
    BL_ASSERT(sparse || fb->layout[b] == FAL_LAYOUT_DENSE);

    /* Phase 1, and the ascending list of sources that spiked. */
    size_t ns = 0;
    for (size_t j = 0; j < n; j++) {
        prev[j] = spikes[j];
        spk[ns] = (uint32_t)j;
        ns += prev[j] != 0;
    }
    /* Some node has a count > 0 iff some spiking source has a synapse. */
    bool any = false;
    for (size_t q = 0; q < ns && !any; q++)
        any = ptr[spk[q]] < ptr[spk[q] + 1];

    /* Phase 2a: recurrent sums and learning counts, source by source. */
    if (sparse) {
        for (size_t i = 0; i < n; i++)
            acc[i] = (FAL_PAIR){0};
        if (!all) {
            fb->paths.sparse++;
            for (size_t q = 0; q < ns; q++) {
                const size_t j = spk[q];
                const real_t p = prev[j] * (real_t)signs[j];
                for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
                    const FAL_PAIR t = {rw[k] * p, (real_t)1};
                    acc[dst[k]] = acc[dst[k]] + t;
                }
            }
        } else {
            /* A silent source counts 0 (c + 0 is c: c is +0 or positive). */
            fb->paths.sparse_all++;
            for (size_t j = 0; j < n; j++) {
                const real_t p = prev[j] * (real_t)signs[j];
                const real_t one = prev[j] != 0 ? (real_t)1 : (real_t)0;
                for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
                    const FAL_PAIR t = {rw[k] * p, one};
                    acc[dst[k]] = acc[dst[k]] + t;
                }
            }
        }
        for (size_t i = 0; i < n; i++) {
            rec[i] = acc[i][0];
            counts[i] = acc[i][1];
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            rec[i] = 0;
            counts[i] = 0;
        }
        if (all) {
            fb->paths.dense_all++;
            for (size_t j = 0; j < n; j++)
                FAL_FN(fal_axpy)(rec, wt + j * n, prev[j] * (real_t)signs[j], n);
        } else {
            fb->paths.dense++;
            for (size_t q = 0; q < ns; q++) {
                const size_t j = spk[q];
                FAL_FN(fal_axpy)(rec, wt + j * n, prev[j] * (real_t)signs[j], n);
            }
        }
        for (size_t q = 0; q < ns; q++) {
            const size_t j = spk[q];
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                counts[dst[k]] = counts[dst[k]] + 1;
        }
    }

    /* Phase 2b: the node update, statement for statement the reference's,
     * except that the threshold is written without a branch (half the nodes
     * fire, at random): a − (fire ? θ : +0) is a − θ when firing and
     * otherwise a − (+0), which is a bit for bit (−0 − +0 = −0, NaN stays
     * the same NaN). */
    for (size_t i = 0; i < n; i++) {
        const real_t *wi = win + i * nr;
        real_t s = 0;
        for (size_t r = 0; r < nr; r++)
            s = s + u[r] * wi[r];
        real_t a = (acts[i] * keep + s) + rec[i];
        const real_t theta = targets[i] * thr_mult;
        if (oosawa) {
            const real_t deficit = theta - a;
            const real_t sigma = nu0 + gain * (deficit > 0 ? deficit : (real_t)0);
            a = a + xi[i] * sigma;
        }
        raw_finite[i] = isfinite(a) && isfinite(theta);
        if (rectify)
            a = a < 0 ? (real_t)0 : a;
        const bool fire = a >= theta;
        a = a - (fire ? theta : (real_t)0);
        acts[i] = a;
        spikes[i] = fire ? (real_t)1 : (real_t)0;
        errors[i] = a - targets[i];
    }

    /* Phase 3. */
    if (fb->learning[b]) {
        if (fb->weight_learning[b] != 0 && any) {
            for (size_t i = 0; i < n; i++)
                if (counts[i] > 0)
                    delta[i] = (errors[i] / counts[i]) * lrate_wmat;
            bool bad = false;
            for (size_t q = 0; q < ns; q++) {
                const size_t j = spk[q];
                const size_t k0 = ptr[j], len = ptr[j + 1] - k0;
                /* Dale weights are magnitudes: an inhibitory source's update
                 * runs the other way. */
                const bool add = dale && signs[j] == -1;
                const uint32_t *d = dst + k0;
                real_t *vals = sparse ? rw + k0 : wt + j * n;
                bool row_bad;
                if (sparse)
                    row_bad = add ? FAL_FN(fal_learn_row)(vals, d, len, delta, false, true)
                                  : FAL_FN(fal_learn_row)(vals, d, len, delta, false, false);
                else
                    row_bad = add ? FAL_FN(fal_learn_row)(vals, d, len, delta, true, true)
                                  : FAL_FN(fal_learn_row)(vals, d, len, delta, true, false);
                /* Rare (the frame fails): find the destinations, on the
                 * values before the clamp, as the reference checks them. */
                if (row_bad) {
                    bad = true;
                    for (size_t k = 0; k < len; k++)
                        if (!isfinite(vals[sparse ? k : dst[k0 + k]]))
                            raw_finite[dst[k0 + k]] = 0;
                }
                if (dale) {
                    for (size_t k = 0; k < len; k++) {
                        real_t *v = vals + (sparse ? k : dst[k0 + k]);
                        if (*v < 0)
                            *v = 0;
                    }
                }
            }
            if (bad)
                fb->wild[b] = 1;
            if (dale && !fb->cleared[b]) {
                /* The first clearing since the weights were loaded; later
                 * ones would only write +0 over +0. */
                if (!sparse) {
                    const int32_t *mask = fb->mask + b * nn;
                    for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < n; j++)
                            if (mask[i * n + j] == 0)
                                wt[j * n + i] = 0;
                    /* Nothing outside the mask is left to carry: compressed
                     * rows are exact from here on. */
                    if (fb->kernel == BL_FAL_KERNEL_FAST) {
                        FAL_FN(fal_dense_to_rows)(fb, b);
                        fb->layout[b] = FAL_LAYOUT_SPARSE;
                        fb->paths.to_sparse++;
                    }
                }
                fb->cleared[b] = 1;
            }
        }
        for (size_t i = 0; i < n; i++) {
            const real_t t = targets[i] + errors[i] * lrate_targ;
            if (!isfinite(t))
                raw_finite[i] = 0;
            targets[i] = t >= targ_min ? t : targ_min;
        }
    }

    /* Phase 4. */
    FAL_FN(fal_readout)(fb, b);

    /* Phase 5. */
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

static void FAL_FN(fal_fast_step)(fal_batch *fb, const void *inputs, const void *noise,
                                  const int32_t *active)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors;
    const real_t *u = inputs, *xi = noise;
    for (size_t b = 0; b < fb->base.slots; b++) {
        if (!active[b])
            continue;
        if (fb->layout[b] == FAL_LAYOUT_CANON) {
            fb->paths.reference++;
            FAL_FN(fal_step_slot)(fb, b, u + b * nr, xi + b * n);
        } else {
            FAL_FN(fal_fast_step_slot)(fb, b, u + b * nr, xi + b * n);
        }
    }
}

#undef FAL_VEC
#undef FAL_PAIR
#undef FAL_VL
#undef real_t
#undef FAL_FN
#undef FAL_CAT
#undef FAL_CAT_
