/* The fast Falandays frame and the weight layouts it runs on, written once
 * for `real_t` and included by falandays_batch.c for double and for float
 * (FAL_REAL, FAL_IREAL, FAL_SFX), after falandays_kernel.h, whose readout
 * it shares.
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
 *   The pads of the compressed rows (below) add +0·p = ±0 to a scratch
 *   node N that no real node reads.
 *
 * The learning count c of node i counts masked sources with previous ≠ 0;
 * adding 1.0 to an integral real is exact in any order (c ≤ N < 2^24), so
 * counting per spiking source gives the same value. The weight update,
 * the Dale clamp and the finite checks are per entry and do not depend on
 * the order of entries; the masked entries of spiking sources are exactly
 * the entries the reference updates, since those are the ones with
 * M ≠ 0 and previous ≠ 0 (and their destinations then have c > 0, so the
 * δ of a node with c = 0, computed here with a divisor of 1 instead, is
 * never used; the pads read δ[N] = +0 and stay +0 − ±0 = +0). The
 * reference's per-row order "update, clear, target" touches disjoint state
 * per row, so doing all updates, then the clearing, then all targets is
 * the same. Clearing is idempotent: once every unmasked weight is +0 no
 * later write touches them, so a clearing after the first changes nothing
 * and is skipped. The node update and the finite flag are the reference's
 * statements on the same operands.
 *
 * Input sums: s = ((+0 + u_0·W_in[i][0]) + u_1·W_in[i][1]) + ... is, like
 * rec, never −0, and its terms are ±0 wherever u_r or W_in[i][r] is ±0 and
 * the other factor finite. Input weights are validated finite, so while
 * every input of the frame is finite the terms of zero inputs and zero
 * weights are skipped: each receptor with u_r ≠ 0, ascending, adds u_r·w
 * over a list of its non-zero weights (nodes ascending, padded like the
 * rows). A frame with a non-finite input sums every term densely, so that
 * inf·0 poisons every node as in the reference.
 *
 * Vector lanes (GNU C vectors; gcc and clang) run the per-node phases and
 * the rows: each lane does the scalar IEEE arithmetic of the dtype on one
 * node or one synapse (no contraction: -ffp-contract=off), nothing is
 * summed across lanes, and branches become bit masks: x & mask is x or +0,
 * so "cond ? x : +0" is one AND, and a − (fire ? θ : +0) is a − θ or
 * a − (+0), which is a bit for bit (−0 − +0 = −0, NaN stays the same NaN).
 * Lanes past the end of an array compute on zeros and are never stored.
 *
 * Readout: the frame's spikes are 0 or 1, so a term spikes[i]·O[i][e] with
 * O[i][e] = ±0 is ±0, and the two sums of the readout (both from +0, never
 * −0) skip those; each effector keeps the list of its non-zero readout
 * weights in ascending node order, and its denominator, which never
 * changes, is summed once by the reference's loop.
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
 * kernel switch; fal_load_initial takes a wiring's initial weights straight
 * into the sparse layout when fal_from_canonical would choose it, so such a
 * slot never has a dense buffer):
 *   - FAL_LAYOUT_SPARSE: the masked synapses of each source in compressed
 *     rows padded to whole vectors (pad_ptr/pad_dst/pad_w; pads have
 *     destination N and weight +0), when every unmasked weight is +0 or its
 *     initial ±0. Constructed wirings always qualify (W·M leaves ±0 outside
 *     the mask). Measured faster than dense rows even for full masks, since
 *     the learning step walks the synapses of spiking sources either way.
 *   - FAL_LAYOUT_DENSE: dense[b] stored [source][destination]; the rows
 *     of spiking sources are contiguous and added to every destination with
 *     vector lanes. Used for hand-made states with non-zero unmasked
 *     weights (and on BL_FAL_KERNEL_DENSE); a Dale slot turns sparse after
 *     its first clearing, which leaves nothing outside the mask but +0.
 *     Dense slots count and learn through the unpadded index rows
 *     (row_ptr/row_dst). Both index rows never change (the mask is fixed). */
#if !defined(FAL_REAL) || !defined(FAL_IREAL) || !defined(FAL_LANES) || !defined(FAL_SFX)
#error "define FAL_REAL, FAL_IREAL, FAL_LANES and FAL_SFX before including falandays_fast.h"
#endif

#define FAL_CAT_(a, b) a##_##b
#define FAL_CAT(a, b) FAL_CAT_(a, b)
#define FAL_FN(name) FAL_CAT(name, FAL_SFX)
#define real_t FAL_REAL

static bool FAL_FN(fal_same_bits)(real_t a, real_t b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Slot b's plastic weights, indexed by its wiring's padded synapse k (the
 * offsets of pad_ptr, which are absolute over the wirings). */
static real_t *FAL_FN(fal_slot_pw)(const fal_batch *fb, size_t b)
{
    return (real_t *)fb->pad_w + fb->pw_shift[b];
}

/* The initial weight of wiring w at canonical entry k outside its mask:
 * ±0 (the sign bit kept in neg0) unless the wiring keeps them dense. */
static real_t FAL_FN(fal_unmasked0)(const fal_batch *fb, size_t w, size_t k)
{
    if (fb->w0_dense[w])
        return ((const real_t *)fb->w0_dense[w])[k];
    return fal_bit(fb, fb->neg0, w, k) ? -(real_t)0 : (real_t)0;
}

/* Canonical weights of wiring w from padded-row values pw (a sparse slot's
 * or the initial pad_w0): outside the mask +0 when `cleared`, else the
 * initial ±0; into reals `wdst` or, when that is NULL, doubles `ddst`
 * (exact for float). */
static void FAL_FN(fal_rebuild)(const fal_batch *fb, size_t w, const real_t *pw, bool cleared,
                                real_t *wdst, double *ddst)
{
    const size_t n = fb->base.nodes, nn = n * n;
    for (size_t k = 0; k < nn; k++) {
        const real_t v = cleared ? (real_t)0 : FAL_FN(fal_unmasked0)(fb, w, k);
        if (wdst)
            wdst[k] = v;
        else
            ddst[k] = (double)v;
    }
    const size_t *ptr = fb->pad_ptr + w * (n + 1);
    for (size_t j = 0; j < n; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
            const size_t i = fb->pad_dst[k];
            if (i >= n)
                continue;
            if (wdst)
                wdst[i * n + j] = pw[k];
            else
                ddst[i * n + j] = (double)pw[k];
        }
}

/* Square in-place transpose of slot b's dense weights (canonical <->
 * source-major). */
static void FAL_FN(fal_transpose)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes;
    real_t *w = (real_t *)fb->dense[b];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const real_t t = w[i * n + j];
            w[i * n + j] = w[j * n + i];
            w[j * n + i] = t;
        }
}

/* Makes slot b's dense weights (which must be allocated) canonical
 * ([destination][source]) whatever its layout. */
static void FAL_FN(fal_to_canonical)(fal_batch *fb, size_t b)
{
    switch (fb->layout[b]) {
    case FAL_LAYOUT_DENSE:
        FAL_FN(fal_transpose)(fb, b);
        break;
    case FAL_LAYOUT_SPARSE:
        /* The dense buffer is stale (or new) in this layout: rebuild every
         * entry. */
        FAL_FN(fal_rebuild)(fb, FAL_W(fb, b), FAL_FN(fal_slot_pw)(fb, b), fb->cleared[b] != 0,
                            (real_t *)fb->dense[b], NULL);
        break;
    default:
        break;
    }
    fb->layout[b] = FAL_LAYOUT_CANON;
}

/* Copies slot b's masked weights from the source-major dense buffer into
 * its padded compressed rows (pads are +0). */
static void FAL_FN(fal_dense_to_rows)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes;
    const real_t *wt = (const real_t *)fb->dense[b];
    const size_t *ptr = fb->pad_ptr + FAL_W(fb, b) * (n + 1);
    real_t *pw = FAL_FN(fal_slot_pw)(fb, b);
    for (size_t j = 0; j < n; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
            pw[k] = fb->pad_dst[k] < n ? wt[j * n + fb->pad_dst[k]] : (real_t)0;
}

/* Takes slot b's canonical dense weights into the layout the batch's
 * kernel and the slot's state allow (see the exactness argument at the
 * top). */
static void FAL_FN(fal_from_canonical)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, nn = n * n, wi = FAL_W(fb, b);
    BL_ASSERT(fb->layout[b] == FAL_LAYOUT_CANON);
    if (fb->kernel == BL_FAL_KERNEL_REFERENCE)
        return;
    real_t *w = (real_t *)fb->dense[b];
    bool finite = true, plus0 = true, initial0 = true;
    for (size_t k = 0; k < nn; k++) {
        if (!isfinite(w[k]))
            finite = false;
        if (!fal_bit(fb, fb->mask, wi, k)) {
            const real_t w0 = FAL_FN(fal_unmasked0)(fb, wi, k);
            if (!FAL_FN(fal_same_bits)(w[k], (real_t)0))
                plus0 = false;
            if (!(w0 == 0 && FAL_FN(fal_same_bits)(w[k], w0)))
                initial0 = false;
        }
    }
    fb->wild[b] = !finite;
    fb->cleared[b] = plus0;
    if (fb->kernel == BL_FAL_KERNEL_FAST && (plus0 || initial0)) {
        /* Every unmasked weight is +0 (cleared) or its initial ±0. */
        const size_t *ptr = fb->pad_ptr + wi * (n + 1);
        real_t *pw = FAL_FN(fal_slot_pw)(fb, b);
        for (size_t j = 0; j < n; j++)
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                pw[k] = fb->pad_dst[k] < n ? w[(size_t)fb->pad_dst[k] * n + j] : (real_t)0;
        fb->layout[b] = FAL_LAYOUT_SPARSE;
        return;
    }
    FAL_FN(fal_transpose)(fb, b);
    fb->layout[b] = FAL_LAYOUT_DENSE;
}

/* Slot b's initial weights (creation, reset) in the layout that
 * fal_from_canonical would choose for them. A fast-kernel slot of a wiring
 * whose unmasked initial weights are ±0 goes sparse straight from pad_w0
 * (finite, so not wild; cleared when those are all +0), with no dense
 * buffer; any other needs slot b's dense buffer, allocated beforehand. */
static void FAL_FN(fal_load_initial)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, wi = FAL_W(fb, b);
    const size_t *ptr = fb->pad_ptr + wi * (n + 1);
    if (fb->kernel == BL_FAL_KERNEL_FAST && fb->zero0[wi]) {
        memcpy(FAL_FN(fal_slot_pw)(fb, b) + ptr[0], (const real_t *)fb->pad_w0 + ptr[0],
               (ptr[n] - ptr[0]) * sizeof(real_t));
        fb->wild[b] = 0;
        fb->cleared[b] = fb->plus0[wi];
        fb->layout[b] = FAL_LAYOUT_SPARSE;
        return;
    }
    BL_ASSERT(fb->dense[b] != NULL);
    if (fb->w0_dense[wi])
        memcpy(fb->dense[b], fb->w0_dense[wi], n * n * sizeof(real_t));
    else
        FAL_FN(fal_rebuild)(fb, wi, (const real_t *)fb->pad_w0, false, (real_t *)fb->dense[b],
                            NULL);
    fb->layout[b] = FAL_LAYOUT_CANON;
    FAL_FN(fal_from_canonical)(fb, b);
}

/* What a round trip of sparse slot b through canonical order
 * (fal_to_canonical, fal_from_canonical) would leave, without a dense
 * buffer: the same padded values, wild exactly when one of them is not
 * finite (the rest are ±0), and cleared when the unmasked weights it
 * rebuilt were all +0 (cleared already, or the wiring's initial ones). */
static void FAL_FN(fal_sparse_refresh)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes, wi = FAL_W(fb, b);
    const size_t *ptr = fb->pad_ptr + wi * (n + 1);
    const real_t *pw = FAL_FN(fal_slot_pw)(fb, b);
    bool finite = true;
    for (size_t k = ptr[0]; k < ptr[n]; k++)
        finite = finite && isfinite(pw[k]);
    fb->wild[b] = !finite;
    fb->cleared[b] = fb->cleared[b] || fb->plus0[wi];
}

/* Wiring w's initial weights from its first slot's initial state: the
 * values of its padded rows (pads +0) and, for a wiring that keeps them
 * dense, all of them. */
static void FAL_FN(fal_initial_weights)(fal_batch *fb, size_t w, const bl_falandays_init *in)
{
    const size_t n = fb->base.nodes;
    const size_t *ptr = fb->pad_ptr + w * (n + 1);
    real_t *pw0 = (real_t *)fb->pad_w0;
    for (size_t j = 0; j < n; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
            pw0[k] = fb->pad_dst[k] < n ? (real_t)in->weights[(size_t)fb->pad_dst[k] * n + j]
                                        : (real_t)0;
    real_t *d = (real_t *)fb->w0_dense[w];
    if (d)
        for (size_t k = 0; k < n * n; k++)
            d[k] = (real_t)in->weights[k];
}

/* Canonical weights of slot b as doubles (exact for float), for snapshots. */
static void FAL_FN(fal_export_weights)(const fal_batch *fb, size_t b, double *dst)
{
    const size_t n = fb->base.nodes, nn = n * n;
    const real_t *w = (const real_t *)fb->dense[b];
    switch (fb->layout[b]) {
    case FAL_LAYOUT_DENSE:
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                dst[i * n + j] = (double)w[j * n + i];
        break;
    case FAL_LAYOUT_SPARSE:
        FAL_FN(fal_rebuild)(fb, FAL_W(fb, b), FAL_FN(fal_slot_pw)(fb, b), fb->cleared[b] != 0,
                            NULL, dst);
        break;
    default:
        for (size_t k = 0; k < nn; k++)
            dst[k] = (double)w[k];
        break;
    }
}

/* The fixed arrays of wiring w that the fast frame reads in its own order:
 * input weights receptor-major (one vector load serves several nodes) and
 * as padded lists of each receptor's non-zero weights (see the top), the
 * signs as the reals the reference multiplies by, and the readout lists
 * with their denominators. Run once per wiring, after it is filled. */
static void FAL_FN(fal_fast_fixed)(fal_batch *fb, size_t w)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, ne = fb->base.effectors;
    const real_t *win = (const real_t *)fb->input_w + w * n * nr;
    real_t *wint = (real_t *)fb->win_t + w * nr * n;
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < nr; r++)
            wint[r * n + i] = win[i * nr + r];
    const size_t *iptr = fb->in_ptr + w * (nr + 1);
    real_t *iw = (real_t *)fb->in_w;
    for (size_t r = 0; r < nr; r++) {
        size_t k = iptr[r];
        for (size_t i = 0; i < n; i++)
            if (win[i * nr + r] != 0) {
                fb->in_node[k] = (uint32_t)i;
                iw[k++] = win[i * nr + r];
            }
        for (; k < iptr[r + 1]; k++) {
            fb->in_node[k] = (uint32_t)n;
            iw[k] = 0;
        }
    }
    real_t *sgn = (real_t *)fb->sgn + w * n;
    for (size_t i = 0; i < n; i++)
        sgn[i] = (real_t)fb->signs[w * n + i];
    const real_t *omask = (const real_t *)fb->out_mask + w * n * ne;
    const size_t *ptr = fb->ro_ptr + w * (ne + 1);
    real_t *row = (real_t *)fb->ro_w, *cnt = (real_t *)fb->ro_cnt + w * ne;
    for (size_t e = 0; e < ne; e++) {
        real_t c = 0;
        size_t k = ptr[e];
        for (size_t i = 0; i < n; i++) {
            c = c + omask[i * ne + e];
            if (omask[i * ne + e] != 0) {
                fb->ro_node[k] = (uint32_t)i;
                row[k++] = omask[i * ne + e];
            }
        }
        BL_ASSERT(k == ptr[e + 1]);
        cnt[e] = c;
    }
}

/* Vectors of FAL_VBYTES bytes: `vec` of reals, `ivec` of the same-width
 * signed integers (lane masks: all ones or zero), `pair` a node's running
 * recurrent sum and learning count side by side, so one load-add-store
 * updates both. */
typedef real_t FAL_FN(fal_vec) __attribute__((vector_size(FAL_VBYTES)));
typedef FAL_IREAL FAL_FN(fal_ivec) __attribute__((vector_size(FAL_VBYTES)));
typedef int32_t FAL_FN(fal_i32v)
    __attribute__((vector_size(FAL_VBYTES / sizeof(real_t) * sizeof(int32_t))));
/* Aligned as its elements only, so any allocation will do. */
typedef real_t FAL_FN(fal_pair)
    __attribute__((vector_size(2 * sizeof(real_t)), aligned(sizeof(real_t))));
#define FAL_VEC FAL_FN(fal_vec)
#define FAL_IVEC FAL_FN(fal_ivec)
#define FAL_I32V FAL_FN(fal_i32v)
#define FAL_PAIR FAL_FN(fal_pair)
#define FAL_VL (FAL_VBYTES / sizeof(real_t))
_Static_assert(FAL_VL == FAL_LANES, "FAL_LANES must be FAL_VBYTES / sizeof(FAL_REAL)");
#define FAL_INLINE static inline __attribute__((always_inline))

/* Written out lane by lane: compilers turn that into one broadcast (a loop
 * over the lanes became a chain of inserts). */
FAL_INLINE FAL_VEC FAL_FN(fal_splat)(real_t x)
{
#if FAL_LANES == 4
    return (FAL_VEC){x, x, x, x};
#else
    return (FAL_VEC){x, x};
#endif
}

/* The first `cnt` values at p (cnt <= FAL_VL), the rest +0. Called with
 * cnt == FAL_VL constant in the main loops, so that is one load. */
FAL_INLINE FAL_VEC FAL_FN(fal_ld)(const real_t *p, size_t cnt)
{
    FAL_VEC v = {0};
    if (cnt == FAL_VL)
        memcpy(&v, p, sizeof v);
    else
        for (size_t l = 0; l < cnt; l++)
            v[l] = p[l];
    return v;
}

FAL_INLINE void FAL_FN(fal_st)(real_t *p, FAL_VEC v, size_t cnt)
{
    if (cnt == FAL_VL)
        memcpy(p, &v, sizeof v);
    else
        for (size_t l = 0; l < cnt; l++)
            p[l] = v[l];
}

/* x where the mask is set, +0 elsewhere. */
FAL_INLINE FAL_VEC FAL_FN(fal_keep)(FAL_VEC x, FAL_IVEC m)
{
    return (FAL_VEC)((FAL_IVEC)x & m);
}

/* Per lane 1 where the mask is set, 0 elsewhere, as int32 flags. */
FAL_INLINE void FAL_FN(fal_st_flags)(int32_t *p, FAL_IVEC m, size_t cnt)
{
    const FAL_I32V f = __builtin_convertvector(m & 1, FAL_I32V);
    if (cnt == FAL_VL)
        memcpy(p, &f, sizeof f);
    else
        for (size_t l = 0; l < cnt; l++)
            p[l] = f[l];
}

/* Finite checks without branches: x − x is +0 for finite x and NaN
 * otherwise, and a sum of such terms is +0 or NaN. Whether some lane of
 * such a sum holds a NaN: */
FAL_INLINE bool FAL_FN(fal_any_nan)(FAL_VEC z)
{
    real_t s = 0;
    for (size_t l = 0; l < FAL_VL; l++)
        s = s + z[l];
    return s != 0;
}

/* rec[i] = rec[i] + row[i]·p for every destination i of a dense
 * source-major row: per lane the reference's multiply, then add. */
static void FAL_FN(fal_axpy)(real_t *restrict rec, const real_t *restrict row, real_t p,
                             size_t n)
{
    const FAL_VEC pv = FAL_FN(fal_splat)(p);
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

/* The synapses of one padded compressed row into the (sum, count) pairs of
 * their destinations: acc[d] += {w·p, one}. Destinations within a row are
 * distinct, so the lanes of one vector never meet (pads all go to the
 * scratch pair N, which nothing reads), and a whole vector of pairs can be
 * loaded before any is stored. */
FAL_INLINE void FAL_FN(fal_scatter_row)(FAL_PAIR *restrict acc, const real_t *restrict w,
                                        const uint32_t *restrict d, size_t len, real_t p,
                                        real_t one)
{
    const FAL_VEC pv = FAL_FN(fal_splat)(p);
    for (size_t k = 0; k < len; k += FAL_VL) {
        FAL_VEC t;
        memcpy(&t, w + k, sizeof t);
        t = t * pv;
#if FAL_LANES == 4
        /* Two pairs per vector. */
        const FAL_PAIR p0 = acc[d[k]], p1 = acc[d[k + 1]];
        const FAL_PAIR p2 = acc[d[k + 2]], p3 = acc[d[k + 3]];
        const FAL_VEC a0 = __builtin_shufflevector(p0, p1, 0, 1, 2, 3) +
                           (FAL_VEC){t[0], one, t[1], one};
        const FAL_VEC a1 = __builtin_shufflevector(p2, p3, 0, 1, 2, 3) +
                           (FAL_VEC){t[2], one, t[3], one};
        acc[d[k]] = __builtin_shufflevector(a0, a0, 0, 1);
        acc[d[k + 1]] = __builtin_shufflevector(a0, a0, 2, 3);
        acc[d[k + 2]] = __builtin_shufflevector(a1, a1, 0, 1);
        acc[d[k + 3]] = __builtin_shufflevector(a1, a1, 2, 3);
#elif FAL_LANES == 2
        /* One pair per vector. */
        const FAL_PAIR a0 = acc[d[k]], a1 = acc[d[k + 1]];
        acc[d[k]] = a0 + (FAL_PAIR){t[0], one};
        acc[d[k + 1]] = a1 + (FAL_PAIR){t[1], one};
#else
#error "FAL_LANES must be 2 or 4"
#endif
    }
}

/* The weight update of one padded compressed row of a spiking source: the
 * synapse to destination d[k] becomes w − δ[d], or w + δ[d] for an
 * inhibitory Dale source (`add`), as the reference writes it; on the Dale
 * axis negative finite results are clamped to +0 (−inf is left for the
 * caller, who must see it as non-finite first). Returns bad + Σ (w − w),
 * a NaN in some lane iff some result is not finite. Called with constant
 * flags, so each combination compiles to its own loop. */
FAL_INLINE FAL_VEC FAL_FN(fal_learn_padded)(real_t *restrict w, const uint32_t *restrict d,
                                            size_t len, const real_t *restrict delta,
                                            FAL_VEC bad, const bool add, const bool dale)
{
    const FAL_VEC zero = FAL_FN(fal_splat)(0);
    for (size_t k = 0; k < len; k += FAL_VL) {
        FAL_VEC v;
        memcpy(&v, w + k, sizeof v);
#if FAL_LANES == 4
        const FAL_VEC dv = {delta[d[k]], delta[d[k + 1]], delta[d[k + 2]], delta[d[k + 3]]};
#else
        const FAL_VEC dv = {delta[d[k]], delta[d[k + 1]]};
#endif
        v = add ? v + dv : v - dv;
        const FAL_VEC z = v - v;
        bad = bad + z;
        if (dale)
            v = FAL_FN(fal_keep)(v, ~((FAL_IVEC)(v < zero) & (FAL_IVEC)(z == zero)));
        memcpy(w + k, &v, sizeof v);
    }
    return bad;
}

/* The weight update of one unpadded row of source j of a dense slot,
 * gathered from its source-major row `vals` (vals[d[k]]), as in
 * fal_learn_padded but without the clamp. Returns whether some result is
 * non-finite, found without a branch per entry. */
static inline bool FAL_FN(fal_learn_dense)(real_t *restrict vals, const uint32_t *restrict d,
                                           size_t len, const real_t *restrict delta,
                                           const bool add)
{
    real_t m0 = 0, m1 = 0;
    size_t k = 0;
    for (; k + 2 <= len; k += 2) {
        const size_t i0 = d[k], i1 = d[k + 1];
        const real_t w0 = add ? vals[i0] + delta[i0] : vals[i0] - delta[i0];
        const real_t w1 = add ? vals[i1] + delta[i1] : vals[i1] - delta[i1];
        m0 = m0 + (w0 - w0);
        m1 = m1 + (w1 - w1);
        vals[i0] = w0;
        vals[i1] = w1;
    }
    if (k < len) {
        const size_t i0 = d[k];
        const real_t w0 = add ? vals[i0] + delta[i0] : vals[i0] - delta[i0];
        m0 = m0 + (w0 - w0);
        vals[i0] = w0;
    }
    return m0 + m1 != 0;
}

/* inp[d] += u·w over one padded input list of a receptor: per lane the
 * reference's product u·W_in, then the addition. Nodes within a list are
 * distinct (pads all go to the scratch entry N). */
FAL_INLINE void FAL_FN(fal_input_row)(real_t *restrict inp, const real_t *restrict w,
                                      const uint32_t *restrict d, size_t len, real_t u)
{
    const FAL_VEC uv = FAL_FN(fal_splat)(u);
    for (size_t k = 0; k < len; k += FAL_VL) {
        FAL_VEC t;
        memcpy(&t, w + k, sizeof t);
        t = uv * t;
        for (size_t l = 0; l < FAL_VL; l++)
            inp[d[k + l]] = inp[d[k + l]] + t[l];
    }
}

/* The input sums of nodes i .. i+cnt−1 over every receptor, ascending. */
FAL_INLINE void FAL_FN(fal_input_block)(real_t *restrict inp, const real_t *restrict wint,
                                        const real_t *restrict u, size_t n, size_t nr, size_t i,
                                        size_t cnt)
{
    FAL_VEC s = FAL_FN(fal_splat)(0);
    for (size_t r = 0; r < nr; r++)
        s = s + FAL_FN(fal_splat)(u[r]) * FAL_FN(fal_ld)(wint + r * n + i, cnt);
    FAL_FN(fal_st)(inp + i, s, cnt);
}

/* What the per-node phases of one slot-frame read and write. */
typedef struct FAL_FN(fal_nodes) {
    size_t n, nr;
    real_t *acts, *targets, *spikes, *errors, *counts, *delta;
    int32_t *raw_finite;
    const FAL_PAIR *acc;
    const real_t *inp, *xi;
    real_t keep, thr_mult, nu0, gain, lrate_wmat, lrate_targ, targ_min;
    bool rectify, oosawa, learn, wlearn;
} FAL_FN(fal_nodes);
#define FAL_NODES FAL_FN(fal_nodes)

/* Every per-node statement of the frame for nodes i .. i+cnt−1, lane by
 * lane (see the top for the masks): phase 2 but its recurrent sums (taken
 * from acc), phase 3's δ and target update, and phase 5's node part, which
 * returns bad plus a NaN where raw_finite, acts, targets or errors fail.
 * Phase 3's weight update reads only δ of all this (computed here first)
 * and writes nothing read here, and targets are read by nothing after
 * their update but phase 5, so running each node's steps back to back is
 * the reference's order per node; weight updates that go non-finite are
 * left to the caller (they clear raw_finite and fail the frame). */
FAL_INLINE FAL_VEC FAL_FN(fal_node_block)(const FAL_NODES *f, size_t i, size_t cnt,
                                          FAL_VEC bad)
{
    const FAL_VEC zero = FAL_FN(fal_splat)(0);
    FAL_VEC rec, c;
    if (cnt == FAL_VL) {
        FAL_VEC v0, v1;
        memcpy(&v0, f->acc + i, sizeof v0);
        memcpy(&v1, f->acc + i + FAL_VL / 2, sizeof v1);
#if FAL_LANES == 4
        rec = __builtin_shufflevector(v0, v1, 0, 2, 4, 6);
        c = __builtin_shufflevector(v0, v1, 1, 3, 5, 7);
#else
        rec = __builtin_shufflevector(v0, v1, 0, 2);
        c = __builtin_shufflevector(v0, v1, 1, 3);
#endif
    } else {
        rec = c = zero;
        for (size_t l = 0; l < cnt; l++) {
            rec[l] = f->acc[i + l][0];
            c[l] = f->acc[i + l][1];
        }
    }
    FAL_FN(fal_st)(f->counts + i, c, cnt);

    const FAL_VEC s = FAL_FN(fal_ld)(f->inp + i, cnt);
    const FAL_VEC tg = FAL_FN(fal_ld)(f->targets + i, cnt);
    FAL_VEC a = (FAL_FN(fal_ld)(f->acts + i, cnt) * FAL_FN(fal_splat)(f->keep) + s) + rec;
    const FAL_VEC theta = tg * FAL_FN(fal_splat)(f->thr_mult);
    if (f->oosawa) {
        /* max(0, ·) as the reference's max: a NaN deficit gives +0. */
        const FAL_VEC deficit = theta - a;
        const FAL_VEC sigma =
            FAL_FN(fal_splat)(f->nu0) +
            FAL_FN(fal_splat)(f->gain) * FAL_FN(fal_keep)(deficit, (FAL_IVEC)(deficit > zero));
        a = a + FAL_FN(fal_ld)(f->xi + i, cnt) * sigma;
    }
    /* Before rectification, which would turn -inf into 0. raw is +0 where
     * the node stays raw-finite and NaN elsewhere. */
    FAL_VEC raw = (a - a) + (theta - theta);
    if (f->rectify)
        a = FAL_FN(fal_keep)(a, ~(FAL_IVEC)(a < zero));
    const FAL_IVEC fire = (FAL_IVEC)(a >= theta);
    a = a - FAL_FN(fal_keep)(theta, fire);
    const FAL_VEC e = a - tg;
    FAL_FN(fal_st)(f->acts + i, a, cnt);
    FAL_FN(fal_st)(f->spikes + i, FAL_FN(fal_keep)(FAL_FN(fal_splat)(1), fire), cnt);
    FAL_FN(fal_st)(f->errors + i, e, cnt);

    FAL_VEC tnew = tg;
    if (f->learn) {
        if (f->wlearn) {
            /* A divisor of 1 where the count is 0: that δ is never used. */
            const FAL_IVEC pos = (FAL_IVEC)(c > zero);
            const FAL_VEC div =
                FAL_FN(fal_keep)(c, pos) + FAL_FN(fal_keep)(FAL_FN(fal_splat)(1), ~pos);
            FAL_FN(fal_st)(f->delta + i, (e / div) * FAL_FN(fal_splat)(f->lrate_wmat), cnt);
        }
        const FAL_VEC t = tg + e * FAL_FN(fal_splat)(f->lrate_targ);
        /* Checked before the floor, which would hide -inf and NaN. */
        raw = raw + (t - t);
        /* max(targ_min, t) as the reference's max: NaN gives targ_min. */
        const FAL_VEC tmin = FAL_FN(fal_splat)(f->targ_min);
        const FAL_IVEC ge = (FAL_IVEC)(t >= tmin);
        tnew = FAL_FN(fal_keep)(t, ge) + FAL_FN(fal_keep)(tmin, ~ge);
        FAL_FN(fal_st)(f->targets + i, tnew, cnt);
    }
    FAL_FN(fal_st_flags)(f->raw_finite + i, (FAL_IVEC)(raw == zero), cnt);
    /* Lanes past the end computed on zeros: they add +0. */
    return (((bad + raw) + (a - a)) + (tnew - tnew)) + (e - e);
}

/* Phase 2 step 2 of slot b's frame: recurrent sums and learning counts
 * into fb->acc, from the ns sources listed in fb->spk (or every source
 * when `all`), in the slot's layout. */
FAL_INLINE void FAL_FN(fal_recurrent)(fal_batch *fb, size_t b, size_t ns, bool sparse, bool all)
{
    const size_t n = fb->base.nodes;
    real_t *restrict prev = (real_t *)fb->previous + b * n;
    real_t *restrict counts = (real_t *)fb->counts + b * n;
    const size_t w = FAL_W(fb, b);
    real_t *restrict wt = (real_t *)fb->dense[b];       /* [source][destination] when dense */
    real_t *restrict pw = FAL_FN(fal_slot_pw)(fb, b);   /* padded rows when sparse */
    const size_t *restrict pptr = fb->pad_ptr + w * (n + 1);
    const uint32_t *restrict pdst = fb->pad_dst;
    const size_t *restrict ptr = fb->row_ptr + w * (n + 1);
    const uint32_t *restrict dst = fb->row_dst;
    const real_t *restrict sgn = (const real_t *)fb->sgn + w * n;
    real_t *restrict rec = (real_t *)fb->rec;
    FAL_PAIR *restrict acc = (FAL_PAIR *)fb->acc;
    uint32_t *restrict spk = fb->spk;
    if (sparse) {
        for (size_t i = 0; i <= n; i++)
            acc[i] = (FAL_PAIR){0};
        if (!all) {
            fb->paths.sparse++;
            for (size_t q = 0; q < ns; q++) {
                const size_t j = spk[q];
                FAL_FN(fal_scatter_row)(acc, pw + pptr[j], pdst + pptr[j], pptr[j + 1] - pptr[j],
                                        prev[j] * sgn[j], (real_t)1);
            }
        } else {
            /* A silent source counts 0 (c + 0 is c: c is +0 or positive). */
            fb->paths.sparse_all++;
            for (size_t j = 0; j < n; j++)
                FAL_FN(fal_scatter_row)(acc, pw + pptr[j], pdst + pptr[j], pptr[j + 1] - pptr[j],
                                        prev[j] * sgn[j],
                                        prev[j] != 0 ? (real_t)1 : (real_t)0);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            rec[i] = 0;
            counts[i] = 0;
        }
        if (all) {
            fb->paths.dense_all++;
            for (size_t j = 0; j < n; j++)
                FAL_FN(fal_axpy)(rec, wt + j * n, prev[j] * sgn[j], n);
        } else {
            fb->paths.dense++;
            for (size_t q = 0; q < ns; q++) {
                const size_t j = spk[q];
                FAL_FN(fal_axpy)(rec, wt + j * n, prev[j] * sgn[j], n);
            }
        }
        for (size_t q = 0; q < ns; q++) {
            const size_t j = spk[q];
            for (size_t k = ptr[j]; k < ptr[j + 1]; k++)
                counts[dst[k]] = counts[dst[k]] + 1;
        }
        for (size_t i = 0; i < n; i++)
            acc[i] = (FAL_PAIR){rec[i], counts[i]};
    }
}

/* Phase 2 step 1 of slot b's frame: the input sums of inputs u into
 * fb->inp. */
FAL_INLINE void FAL_FN(fal_input_sums)(fal_batch *fb, size_t b, const real_t *u)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors;
    real_t *restrict inp = (real_t *)fb->inp;
    bool finite_in = true;
    for (size_t r = 0; r < nr; r++)
        finite_in = finite_in && isfinite(u[r]);
    if (finite_in) {
        const size_t *iptr = fb->in_ptr + FAL_W(fb, b) * (nr + 1);
        for (size_t i = 0; i <= n; i++)
            inp[i] = 0;
        for (size_t r = 0; r < nr; r++)
            if (u[r] != 0)
                FAL_FN(fal_input_row)(inp, (const real_t *)fb->in_w + iptr[r],
                                      fb->in_node + iptr[r], iptr[r + 1] - iptr[r], u[r]);
    } else {
        fb->paths.dense_inputs++;
        const real_t *wint = (const real_t *)fb->win_t + FAL_W(fb, b) * nr * n;
        size_t i = 0;
        for (; i + FAL_VL <= n; i += FAL_VL)
            FAL_FN(fal_input_block)(inp, wint, u, n, nr, i, FAL_VL);
        if (i < n)
            FAL_FN(fal_input_block)(inp, wint, u, n, nr, i, n - i);
    }
}

/* Phase 3's weight update of a sparse slot b, over the rows of the ns
 * sources in fb->spk; true when some updated weight is not finite (its
 * destination's raw_finite is then cleared). */
FAL_INLINE bool FAL_FN(fal_learn_sparse)(fal_batch *fb, size_t b, size_t ns, bool dale)
{
    const size_t n = fb->base.nodes;
    real_t *restrict pw = FAL_FN(fal_slot_pw)(fb, b);
    const size_t *restrict pptr = fb->pad_ptr + FAL_W(fb, b) * (n + 1);
    const uint32_t *restrict pdst = fb->pad_dst;
    const int32_t *restrict signs = fb->signs + FAL_W(fb, b) * n;
    int32_t *restrict raw_finite = fb->raw_finite + b * n;
    real_t *restrict delta = (real_t *)fb->delta;
    uint32_t *restrict spk = fb->spk;
    bool bad = false;
    FAL_VEC z = {0};
    for (size_t q = 0; q < ns; q++) {
        const size_t j = spk[q], k0 = pptr[j], len = pptr[j + 1] - k0;
        /* Dale weights are magnitudes: an inhibitory source's
         * update runs the other way. */
        if (!dale)
            z = FAL_FN(fal_learn_padded)(pw + k0, pdst + k0, len, delta, z, false,
                                         false);
        else if (signs[j] == -1)
            z = FAL_FN(fal_learn_padded)(pw + k0, pdst + k0, len, delta, z, true,
                                         true);
        else
            z = FAL_FN(fal_learn_padded)(pw + k0, pdst + k0, len, delta, z, false,
                                         true);
    }
    /* Rare (the frame fails): find the destinations, on the
     * values before the clamp, as the reference checks them;
     * only -inf was left unclamped. Rows of spiking sources
     * held finite weights before this update. */
    if (FAL_FN(fal_any_nan)(z)) {
        bad = true;
        for (size_t q = 0; q < ns; q++) {
            const size_t j = spk[q];
            for (size_t k = pptr[j]; k < pptr[j + 1]; k++) {
                if (pdst[k] < n && !isfinite(pw[k])) {
                    raw_finite[pdst[k]] = 0;
                    if (dale && pw[k] < 0)
                        pw[k] = 0;
                }
            }
        }
    }
    return bad;
}

/* Phase 3's weight update of a dense slot b, as fal_learn_sparse. */
FAL_INLINE bool FAL_FN(fal_learn_rows)(fal_batch *fb, size_t b, size_t ns, bool dale)
{
    const size_t n = fb->base.nodes;
    real_t *restrict wt = (real_t *)fb->dense[b];
    const size_t *restrict ptr = fb->row_ptr + FAL_W(fb, b) * (n + 1);
    const uint32_t *restrict dst = fb->row_dst;
    const int32_t *restrict signs = fb->signs + FAL_W(fb, b) * n;
    int32_t *restrict raw_finite = fb->raw_finite + b * n;
    real_t *restrict delta = (real_t *)fb->delta;
    uint32_t *restrict spk = fb->spk;
    bool bad = false;
    for (size_t q = 0; q < ns; q++) {
        const size_t j = spk[q];
        const size_t k0 = ptr[j], len = ptr[j + 1] - k0;
        const uint32_t *d = dst + k0;
        real_t *vals = wt + j * n;
        const bool row_bad =
            dale && signs[j] == -1
                ? FAL_FN(fal_learn_dense)(vals, d, len, delta, true)
                : FAL_FN(fal_learn_dense)(vals, d, len, delta, false);
        /* Rare (the frame fails): find the destinations, on the
         * values before the clamp, as the reference checks them. */
        if (row_bad) {
            bad = true;
            for (size_t k = 0; k < len; k++)
                if (!isfinite(vals[d[k]]))
                    raw_finite[d[k]] = 0;
        }
        if (dale) {
            for (size_t k = 0; k < len; k++)
                if (vals[d[k]] < 0)
                    vals[d[k]] = 0;
        }
    }
    return bad;
}

/* The Dale rule's first clearing of a dense slot b: every weight outside
 * the mask to +0, and the slot onto compressed rows under the fast kernel. */
FAL_INLINE void FAL_FN(fal_clear_unmasked)(fal_batch *fb, size_t b)
{
    const size_t n = fb->base.nodes;
    real_t *restrict wt = (real_t *)fb->dense[b];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (!fal_bit(fb, fb->mask, FAL_W(fb, b), i * n + j))
                wt[j * n + i] = 0;
    /* Nothing outside the mask is left to carry: compressed
     * rows are exact from here on. */
    if (fb->kernel == BL_FAL_KERNEL_FAST) {
        FAL_FN(fal_dense_to_rows)(fb, b);
        fb->layout[b] = FAL_LAYOUT_SPARSE;
        fb->paths.to_sparse++;
    }
}

/* Phase 4 of slot b's frame over the readout lists (see the top), and
 * phase 5's effector part: fin, cleared when an effector is not finite. */
FAL_INLINE bool FAL_FN(fal_fast_readout)(fal_batch *fb, size_t b, bool fin)
{
    const size_t n = fb->base.nodes, ne = fb->base.effectors;
    real_t *restrict spikes = (real_t *)fb->spikes + b * n;
    real_t *eff = (real_t *)fb->effectors + b * ne;
    const size_t *ro_ptr = fb->ro_ptr + FAL_W(fb, b) * (ne + 1);
    const real_t *ro_w = (const real_t *)fb->ro_w;
    const real_t *ro_cnt = (const real_t *)fb->ro_cnt + FAL_W(fb, b) * ne;
    for (size_t e = 0; e < ne; e++) {
        real_t tot = 0;
        for (size_t k = ro_ptr[e]; k < ro_ptr[e + 1]; k++)
            tot = tot + spikes[fb->ro_node[k]] * ro_w[k];
        eff[e] = ro_cnt[e] > 0 ? tot / ro_cnt[e] : (real_t)0;
    }
    for (size_t e = 0; e < ne; e++)
        fin = fin && isfinite(eff[e]);
    return fin;
}

/* One frame of slot b with the fast layouts; u = its inputs [R], xi = its
 * noise row [N]. The phases and statements mirror fal_step_slot. */
static void FAL_FN(fal_fast_step_slot)(fal_batch *fb, size_t b, const real_t *u,
                                       const real_t *xi)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors;
    real_t *restrict spikes = (real_t *)fb->spikes + b * n;
    real_t *restrict prev = (real_t *)fb->previous + b * n;
    real_t *restrict counts = (real_t *)fb->counts + b * n;
    const size_t *restrict ptr = fb->row_ptr + FAL_W(fb, b) * (n + 1);
    const real_t *par = (const real_t *)fb->params + FAL_W(fb, b) * FAL_NPARAM;
    const int32_t *flags = fb->flags + FAL_W(fb, b) * FAL_NFLAG;
    int32_t *restrict raw_finite = fb->raw_finite + b * n;
    real_t *restrict inp = (real_t *)fb->inp;
    real_t *restrict delta = (real_t *)fb->delta;
    FAL_PAIR *restrict acc = (FAL_PAIR *)fb->acc;
    uint32_t *restrict spk = fb->spk;
    const bool dale = flags[FAL_F_DALE] != 0;
    const bool sparse = fb->layout[b] == FAL_LAYOUT_SPARSE;
    const bool all = fb->wild[b] != 0;
    BL_ASSERT(sparse || fb->layout[b] == FAL_LAYOUT_DENSE);

    const FAL_NODES f = {
        .n = n,
        .nr = nr,
        .acts = (real_t *)fb->acts + b * n,
        .targets = (real_t *)fb->targets + b * n,
        .spikes = spikes,
        .errors = (real_t *)fb->errors + b * n,
        .counts = counts,
        .delta = delta,
        .raw_finite = raw_finite,
        .acc = acc,
        .inp = inp,
        .xi = xi,
        .keep = (real_t)1 - par[FAL_P_LEAK],
        .thr_mult = par[FAL_P_THRESHOLD_MULT],
        .nu0 = par[FAL_P_MEMBRANE_NOISE],
        .gain = par[FAL_P_NOISE_GAIN],
        .lrate_wmat = par[FAL_P_LRATE_WMAT],
        .lrate_targ = par[FAL_P_LRATE_TARG],
        .targ_min = par[FAL_P_TARG_MIN],
        .rectify = flags[FAL_F_RECTIFY] != 0,
        .oosawa = flags[FAL_F_OOSAWA] != 0,
        .learn = fb->learning[b] != 0,
        .wlearn = fb->weight_learning[b] != 0,
    };

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

    /* Phase 2 step 2: recurrent sums and learning counts, source by source. */
    FAL_FN(fal_recurrent)(fb, b, ns, sparse, all);

    /* Phase 2 step 1: the input sums, over the non-zero terms while every
     * input is finite (see the top), else over all of them. */
    FAL_FN(fal_input_sums)(fb, b, u);

    /* Every per-node statement of phases 2, 3 and 5. */
    FAL_VEC nodes_bad = {0};
    size_t i0 = 0;
    for (; i0 + FAL_VL <= n; i0 += FAL_VL)
        nodes_bad = FAL_FN(fal_node_block)(&f, i0, FAL_VL, nodes_bad);
    if (i0 < n)
        nodes_bad = FAL_FN(fal_node_block)(&f, i0, n - i0, nodes_bad);
    bool fin = !FAL_FN(fal_any_nan)(nodes_bad);

    /* Phase 3's weight update. */
    if (f.learn && f.wlearn && any) {
        const bool bad = sparse ? FAL_FN(fal_learn_sparse)(fb, b, ns, dale)
                                : FAL_FN(fal_learn_rows)(fb, b, ns, dale);
        if (bad) {
            fb->wild[b] = 1;
            fin = false;
        }
        if (dale && !fb->cleared[b]) {
            /* The first clearing since the weights were loaded; later
             * ones would only write +0 over +0. */
            if (!sparse)
                FAL_FN(fal_clear_unmasked)(fb, b);
            fb->cleared[b] = 1;
        }
    }

    /* Phases 4 and 5's effector part. */
    fin = FAL_FN(fal_fast_readout)(fb, b, fin);
    fb->finite[b] = fin;
}

static void FAL_FN(fal_fast_step)(fal_batch *fb, const void *inputs, const void *noise,
                                  const int32_t *active)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors;
    const real_t *u = inputs, *xi = noise;
    for (size_t b = 0; b < fb->base.slots; b++) {
        /* Slots resident in lanes were stepped there (falandays_lanes.h). */
        if (!active[b] || (fb->resident && fb->resident[b]))
            continue;
        if (fb->layout[b] == FAL_LAYOUT_CANON) {
            fb->paths.reference++;
            FAL_FN(fal_step_slot)(fb, b, u + b * nr, xi + b * n);
        } else {
            FAL_FN(fal_fast_step_slot)(fb, b, u + b * nr, xi + b * n);
        }
    }
}

#undef FAL_NODES
#undef FAL_INLINE
#undef FAL_VEC
#undef FAL_IVEC
#undef FAL_I32V
#undef FAL_PAIR
#undef FAL_VL
#undef real_t
#undef FAL_FN
#undef FAL_CAT
#undef FAL_CAT_
