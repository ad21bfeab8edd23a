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
 *         writing +0. Their signed zeros are rebuilt from w_ee0 (+0 unless
 *         a dense copy was kept) / `cleared` for snapshots and kernel
 *         switches.
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
 * the next is the same. A row that is not normalised multiplies its
 * entries by 1 here, which gives every weight back bit for bit (NaN
 * included), and a non-finite product there could only come from an entry
 * whose update was already non-finite, which marked the slot wild anyway.
 *
 * Vector lanes (GNU C vectors) run the per-unit steps and the rows: each
 * lane does the scalar IEEE arithmetic of the dtype on one unit or one
 * entry (no contraction: -ffp-contract=off), nothing is summed across
 * lanes, and branches become bit masks (x & mask is x or +0). They do so
 * without a data-dependent branch per entry: the branchy loops this
 * replaced ran up to 1.7 times slower or faster depending only on where
 * the linker placed them. Rows are padded to whole vectors with entries of
 * destination N_E (a scratch unit nobody reads), weight +0 and mask bit 0,
 * which stay so. A mask bit is kept as a lane mask (all ones or 0).
 *
 * Input terms: inp = ((+0 + w_0·u_0) + w_1·u_1) + ... is, like the sums
 * above, never −0, and its terms are ±0 wherever w_eu[i][q] or u_q is ±0
 * and the other factor finite. w_eu is validated finite, so while every
 * input of the frame is finite the terms of zero inputs and zero weights
 * are skipped: each receptor with u_q ≠ 0, ascending, adds w·u_q over a
 * list of its non-zero weights (units ascending, padded like the rows). A
 * frame with a non-finite input sums every term, so that inf·0 poisons
 * every unit as in the reference. The readout is the reference's
 * statements on the same operands and skips the units an effector does
 * not read, as the reference does.
 *
 * NaN bits: within the frames owed, every skipped or reordered term is a
 * finite product, so an addition meets at most one NaN operand (the
 * accumulator) and x86 returns that one whatever the operand order; the
 * expressions that may meet two NaNs (the drive, the input term, the
 * readout) are written exactly as in the reference. The tests compare NaNs
 * bit for bit.
 *
 * Layouts (per slot, chosen whenever weights are loaded: creation, reset,
 * kernel switch, and after a plastic frame of a canonical slot; a slot
 * whose wiring is shared by others takes SORN_LAYOUT_LANES instead of
 * SORN_LAYOUT_SPARSE, sorn_lanes.h, under the same condition):
 *   - SORN_LAYOUT_SPARSE: the synapses of the initial mask in compressed
 *     source-major rows (cw, cm; the current mask is cm, pruning only
 *     clears bits of the initial one), and no dense copy. Constructed
 *     wirings always qualify (W·M leaves ±0 outside the mask); a reset
 *     loads such a slot straight from its shared initial weights
 *     (sorn_load_initial).
 *   - SORN_LAYOUT_CANON: the slot's dense weights and mask (dense_w,
 *     dense_m, made when first needed) authoritative; the slot steps with
 *     the reference frame. Used by the reference kernel, and by hand-made
 *     states with non-zero weights outside the mask until their first
 *     plastic frame clears them. */
#if !defined(SORN_REAL) || !defined(SORN_IREAL) || !defined(SORN_LANES) || !defined(SORN_SFX)
#error "define SORN_REAL, SORN_IREAL, SORN_LANES and SORN_SFX before including sorn_fast.h"
#endif

#define SORN_CAT_(a, b) a##_##b
#define SORN_CAT(a, b) SORN_CAT_(a, b)
#define SORN_FN(name) SORN_CAT(name, SORN_SFX)
#define real_t SORN_REAL

static bool SORN_FN(sorn_same_bits)(real_t a, real_t b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Moves a canonical slot into the sparse layout if the weights outside the
 * initial mask allow it (see the argument at the top); it stays canonical
 * otherwise. Returns whether it moved. */
static bool SORN_FN(sorn_from_canonical)(sorn_batch *sb, size_t b)
{
    if (sb->reference || sb->layout[b] != SORN_LAYOUT_CANON)
        return false;
    const size_t ne = sb->n_e, nee = ne * ne;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const real_t *w = sb->dense_w[b];
    const real_t *w0 = sorn_w0_of(sb, b)->dense; /* NULL: +0 outside the mask */
    const uint8_t *mask = sb->dense_m[b];
    const uint8_t *mask0 = wr->mask0;
    bool initial = true, cleared = true;
    for (size_t k = 0; k < nee && (initial || cleared); k++) {
        if (mask0[k])
            continue;
        const real_t v0 = w0 ? w0[k] : (real_t)0;
        if (!(SORN_FN(sorn_same_bits)(w[k], v0) && v0 == 0))
            initial = false;
        if (!SORN_FN(sorn_same_bits)(w[k], (real_t)0))
            cleared = false;
    }
    if (!initial && !cleared)
        return false;
    if (sb->lane_group[b] != SORN_LNONE) {
        /* A slot of a shared wiring has no rows of its own: its lane. */
        sb->cleared[b] = !initial;
        sorn_lanes_load(sb, b);
        sb->layout[b] = SORN_LAYOUT_LANES;
        return true;
    }
    const size_t *ptr = wr->col_ptr;
    const size_t off = sb->nz_off[b];
    const uint32_t *dst = wr->nz_dst;
    real_t *cw = (real_t *)sb->cw + off;
    SORN_IREAL *cm = (SORN_IREAL *)sb->cm + off;
    bool wild = false;
    for (size_t j = 0; j < ne; j++)
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
            if (dst[k] == ne) {
                /* A pad: no synapse, no weight. */
                cw[k] = 0;
                cm[k] = 0;
                continue;
            }
            const size_t e = (size_t)dst[k] * ne + j;
            cw[k] = w[e];
            cm[k] = mask[e] ? -1 : 0;
            if (!isfinite(cw[k]))
                wild = true;
        }
    sb->cleared[b] = !initial;
    sb->wild[b] = wild;
    sb->layout[b] = SORN_LAYOUT_SPARSE;
    return true;
}

/* §3.7 reset under either kernel. */
static void SORN_FN(sorn_reset_any)(sorn_batch *sb, size_t b)
{
    SORN_FN(sorn_reset_state)(sb, b);
    /* Dense weights, where a reset needs them, exist since creation or the
     * switch to the reference kernel. */
    const bool placed = sorn_load_initial(sb, b);
    BL_ASSERT(placed);
}

/* GNU C vectors of SORN_VBYTES bytes (gcc and clang): `vec` of reals,
 * `ivec` of same-width signed integers (lane masks: all ones or zero),
 * `pair` two reals side by side, so one load-add-store updates both. Lane
 * arithmetic is the scalar IEEE arithmetic of the dtype (no contraction:
 * -ffp-contract=off); nothing is summed across lanes. */
typedef real_t SORN_FN(sorn_vec) __attribute__((vector_size(SORN_VBYTES)));
typedef SORN_IREAL SORN_FN(sorn_ivec) __attribute__((vector_size(SORN_VBYTES)));
/* Aligned as its elements only, so any allocation will do. */
typedef real_t SORN_FN(sorn_pair)
    __attribute__((vector_size(2 * sizeof(real_t)), aligned(sizeof(real_t))));
#define SORN_VEC SORN_FN(sorn_vec)
#define SORN_IVEC SORN_FN(sorn_ivec)
#define SORN_PAIR SORN_FN(sorn_pair)
#define SORN_VL (SORN_VBYTES / sizeof(real_t))
_Static_assert(SORN_VL == SORN_LANES, "SORN_LANES must be SORN_VBYTES / sizeof(SORN_REAL)");
#define SORN_INLINE static inline __attribute__((always_inline))

/* Written out lane by lane: compilers turn that into one broadcast. */
SORN_INLINE SORN_VEC SORN_FN(sorn_splat)(real_t x)
{
#if SORN_LANES == 4
    return (SORN_VEC){x, x, x, x};
#else
    return (SORN_VEC){x, x};
#endif
}

/* x where the mask is set, +0 elsewhere. */
SORN_INLINE SORN_VEC SORN_FN(sorn_keep)(SORN_VEC x, SORN_IVEC m)
{
    return (SORN_VEC)((SORN_IVEC)x & m);
}

/* Finite checks without branches: x − x is +0 for finite x and NaN
 * otherwise, and a sum of such terms is +0 or NaN. Whether some lane of
 * such a sum holds a NaN: */
SORN_INLINE bool SORN_FN(sorn_any_nan)(SORN_VEC z)
{
    real_t s = 0;
    for (size_t l = 0; l < SORN_VL; l++)
        s = s + z[l];
    return s != 0;
}

/* The first `cnt` values at p (cnt <= SORN_VL), the rest +0; one load when
 * cnt == SORN_VL is a constant. */
SORN_INLINE SORN_VEC SORN_FN(sorn_ld)(const real_t *p, size_t cnt)
{
    SORN_VEC v = {0};
    if (cnt == SORN_VL)
        memcpy(&v, p, sizeof v);
    else
        for (size_t l = 0; l < cnt; l++)
            v[l] = p[l];
    return v;
}

SORN_INLINE void SORN_FN(sorn_st)(real_t *p, SORN_VEC v, size_t cnt)
{
    if (cnt == SORN_VL)
        memcpy(p, &v, sizeof v);
    else
        for (size_t l = 0; l < cnt; l++)
            p[l] = v[l];
}

/* Pairs p[0 .. cnt−1] split into their first and second members. */
SORN_INLINE void SORN_FN(sorn_ld_pairs)(const SORN_PAIR *p, size_t cnt, SORN_VEC *first,
                                        SORN_VEC *second)
{
    if (cnt == SORN_VL) {
        SORN_VEC v0, v1;
        memcpy(&v0, p, sizeof v0);
        memcpy(&v1, p + SORN_VL / 2, sizeof v1);
#if SORN_LANES == 4
        *first = __builtin_shufflevector(v0, v1, 0, 2, 4, 6);
        *second = __builtin_shufflevector(v0, v1, 1, 3, 5, 7);
#else
        *first = __builtin_shufflevector(v0, v1, 0, 2);
        *second = __builtin_shufflevector(v0, v1, 1, 3);
#endif
    } else {
        *first = *second = SORN_FN(sorn_splat)(0);
        for (size_t l = 0; l < cnt; l++) {
            (*first)[l] = p[l][0];
            (*second)[l] = p[l][1];
        }
    }
}

/* The pairs of gathered destinations d[0 .. SORN_VL−1], split. */
SORN_INLINE void SORN_FN(sorn_gather_pairs)(const SORN_PAIR *p, const uint32_t *d,
                                            SORN_VEC *first, SORN_VEC *second)
{
#if SORN_LANES == 4
    const SORN_VEC v0 = __builtin_shufflevector(p[d[0]], p[d[1]], 0, 1, 2, 3);
    const SORN_VEC v1 = __builtin_shufflevector(p[d[2]], p[d[3]], 0, 1, 2, 3);
    *first = __builtin_shufflevector(v0, v1, 0, 2, 4, 6);
    *second = __builtin_shufflevector(v0, v1, 1, 3, 5, 7);
#else
    const SORN_VEC v0 = p[d[0]], v1 = p[d[1]];
    *first = __builtin_shufflevector(v0, v1, 0, 2);
    *second = __builtin_shufflevector(v0, v1, 1, 3);
#endif
}

/* acc[d[l]] += {a[l], b[l]} for the destinations d[0 .. SORN_VL−1], which
 * are distinct within a row (pads all go to the scratch entry N_E, which
 * nothing reads), so all of them can be loaded before any is stored. */
SORN_INLINE void SORN_FN(sorn_scatter_pairs)(SORN_PAIR *acc, const uint32_t *d, SORN_VEC a,
                                             SORN_VEC b)
{
#if SORN_LANES == 4
    const SORN_VEC a0 = __builtin_shufflevector(acc[d[0]], acc[d[1]], 0, 1, 2, 3) +
                        __builtin_shufflevector(a, b, 0, 4, 1, 5);
    const SORN_VEC a1 = __builtin_shufflevector(acc[d[2]], acc[d[3]], 0, 1, 2, 3) +
                        __builtin_shufflevector(a, b, 2, 6, 3, 7);
    acc[d[0]] = __builtin_shufflevector(a0, a0, 0, 1);
    acc[d[1]] = __builtin_shufflevector(a0, a0, 2, 3);
    acc[d[2]] = __builtin_shufflevector(a1, a1, 0, 1);
    acc[d[3]] = __builtin_shufflevector(a1, a1, 2, 3);
#else
    const SORN_PAIR p0 = acc[d[0]], p1 = acc[d[1]];
    acc[d[0]] = p0 + __builtin_shufflevector(a, b, 0, 2);
    acc[d[1]] = p1 + __builtin_shufflevector(a, b, 1, 3);
#endif
}

/* acc[i] = acc[i] + col[i]·s for i < n: per lane the reference's product
 * col·s, then the addition. */
static void SORN_FN(sorn_axpy)(real_t *restrict acc, const real_t *restrict col, real_t s,
                               size_t n)
{
    const SORN_VEC sv = SORN_FN(sorn_splat)(s);
    size_t i = 0;
    for (; i + SORN_VL <= n; i += SORN_VL) {
        SORN_VEC a, c;
        memcpy(&a, acc + i, sizeof a);
        memcpy(&c, col + i, sizeof c);
        a = a + c * sv;
        memcpy(acc + i, &a, sizeof a);
    }
    for (; i < n; i++)
        acc[i] = acc[i] + col[i] * s;
}

/* acc[d] += w·s over one padded list: a compressed row (exc, s = prev_x of
 * its source) or a receptor's input list (inp, s = its input). Per lane the
 * reference's product, then the addition; destinations within a list are
 * distinct but for the pads, which all go to the scratch entry N_E. */
SORN_INLINE void SORN_FN(sorn_scatter_row)(real_t *restrict acc, const real_t *restrict w,
                                           const uint32_t *restrict d, size_t len, real_t s)
{
    const SORN_VEC sv = SORN_FN(sorn_splat)(s);
    for (size_t k = 0; k < len; k += SORN_VL) {
        SORN_VEC t;
        memcpy(&t, w + k, sizeof t);
        t = t * sv;
        for (size_t l = 0; l < SORN_VL; l++)
            acc[d[k + l]] = acc[d[k + l]] + t[l];
    }
}

/* The input terms of E units i .. i+cnt−1 over every receptor, ascending. */
SORN_INLINE void SORN_FN(sorn_input_block)(real_t *restrict inp, const real_t *restrict weu_t,
                                           const real_t *restrict u, size_t ne, size_t nr,
                                           size_t i, size_t cnt)
{
    SORN_VEC s = SORN_FN(sorn_splat)(0);
    for (size_t q = 0; q < nr; q++)
        s = s + SORN_FN(sorn_ld)(weu_t + q * ne + i, cnt) * SORN_FN(sorn_splat)(u[q]);
    SORN_FN(sorn_st)(inp + i, s, cnt);
}

/* What the per-unit steps of one slot-frame read and write. */
typedef struct SORN_FN(sorn_units) {
    size_t ne, nr;
    const real_t *exc, *inh, *inp, *ce;
    real_t *te, *x, *px, *drive, *scale;
    SORN_PAIR *xp;
    const SORN_PAIR *tot;
    int32_t *af;
} SORN_FN(sorn_units);
#define SORN_UNITS SORN_FN(sorn_units)

/* Phase 2 for E units i .. i+cnt−1: the drive and the new state, and the
 * pairs {x, prev_x} that phase 3 gathers. */
SORN_INLINE void SORN_FN(sorn_drive_block)(const SORN_UNITS *f, size_t i, size_t cnt)
{
    const SORN_VEC inp = SORN_FN(sorn_ld)(f->inp + i, cnt);
    const SORN_VEC d = ((SORN_FN(sorn_ld)(f->exc + i, cnt) - SORN_FN(sorn_ld)(f->inh + i, cnt)) +
                        inp) -
                       SORN_FN(sorn_ld)(f->te + i, cnt);
    SORN_FN(sorn_st)(f->drive + i, d, cnt);
    /* Threshold equality fires (drive == 0, -0.0 included). */
    const SORN_VEC x =
        SORN_FN(sorn_keep)(SORN_FN(sorn_splat)(1), (SORN_IVEC)(d >= SORN_FN(sorn_splat)(0)));
    SORN_FN(sorn_st)(f->x + i, x, cnt);
    const SORN_VEC px = SORN_FN(sorn_ld)(f->px + i, cnt);
    for (size_t l = 0; l < cnt; l++)
        f->xp[i + l] = (SORN_PAIR){x[l], px[l]};
}

/* Phase 3 steps 2–3's per-row part for E units i .. i+cnt−1, from the
 * pairs {tot, NaN flag of the row's masked updates}: the finite flags and
 * the factor each row is multiplied by (1 for a row left as is). Returns
 * `norm` with the lanes of rows that are normalised set, and adds a NaN to
 * *bad for a row with a non-finite update. */
SORN_INLINE SORN_IVEC SORN_FN(sorn_row_block)(const SORN_UNITS *f, size_t i, size_t cnt,
                                             SORN_IVEC norm, SORN_VEC *bad)
{
    const SORN_VEC zero = SORN_FN(sorn_splat)(0), one = SORN_FN(sorn_splat)(1);
    SORN_VEC tot, z;
    SORN_FN(sorn_ld_pairs)(f->tot + i, cnt, &tot, &z);
    *bad = *bad + z;
    const SORN_VEC ce = SORN_FN(sorn_ld)(f->ce + i, cnt);
    SORN_IVEC nm = (SORN_IVEC)(tot > zero) & (SORN_IVEC)(ce > zero);
    for (size_t l = cnt; l < SORN_VL; l++)
        nm[l] = 0;
    /* Rows that are not normalised divide too, but keep a factor of 1. */
    const SORN_VEC scale = ce / tot;
    SORN_FN(sorn_st)
    (f->scale + i, SORN_FN(sorn_keep)(scale, nm) + SORN_FN(sorn_keep)(one, ~nm), cnt);
    /* An overflowing total must not be normalised away; a non-finite
     * scale fails its row. */
    const SORN_VEC fz = (z + (tot - tot)) + SORN_FN(sorn_keep)(scale - scale, nm);
    const SORN_IVEC ok = (SORN_IVEC)(fz == zero);
    for (size_t l = 0; l < cnt; l++)
        f->af[i + l] = (int32_t)(ok[l] & 1);
    return norm | nm;
}

/* Phase 3 step 1 for the SORN_VL entries at w, m, d of a source row with
 * prev_x = pxj and x = xj: the update of masked entries, its finite flag
 * (a NaN added to the row's flag member), pruning, and the row totals in
 * ascending source order. */
SORN_INLINE void SORN_FN(sorn_stdp_chunk)(real_t *w, SORN_IREAL *m, const uint32_t *d,
                                         const SORN_PAIR *xp, SORN_PAIR *tot, SORN_VEC pxj,
                                         SORN_VEC xj, SORN_VEC eta)
{
    const SORN_VEC zero = SORN_FN(sorn_splat)(0);
    SORN_VEC xi, pxi, wv;
    SORN_IVEC mv;
    SORN_FN(sorn_gather_pairs)(xp, d, &xi, &pxi);
    memcpy(&wv, w, sizeof wv);
    memcpy(&mv, m, sizeof mv);
    /* The reference's grouping; with binary states the bracket is -1, 0 or
     * 1 and eta * bracket is exact, so only the final addition rounds. */
    const SORN_VEC corr = xi * pxj - pxi * xj;
    wv = wv + eta * corr;
    /* Checked before the pruning clamp, which would turn -inf to 0.
     * Unmasked entries are forced to +0. */
    const SORN_VEC z = SORN_FN(sorn_keep)(wv - wv, mv);
    const SORN_IVEC keep = mv & ~(SORN_IVEC)(wv <= zero);
    const SORN_VEC wf = SORN_FN(sorn_keep)(wv, keep);
    memcpy(w, &wf, sizeof wf);
    memcpy(m, &keep, sizeof keep);
    SORN_FN(sorn_scatter_pairs)(tot, d, wf, z);
}

/* Phase 2's sums of a sparse slot b: the E units' excitatory and
 * inhibitory inputs, as per-destination accumulators fed in ascending source
 * order from the nax and nay sources that fired (sb->sc_actx, sc_acty), and
 * the input terms of inputs u, over the non-zero ones while every input is
 * finite (see the top), else over all of them; the I units' accumulator
 * starts at zero. */
SORN_INLINE void SORN_FN(sorn_fast_sums)(sorn_batch *sb, size_t b, const real_t *u, size_t nax,
                                         size_t nay)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const size_t nep = sb->ne_pad;
    const real_t *restrict wei_p = wr->wei_p;
    const real_t *px = (real_t *)sb->prev_x + b * ne;
    const real_t *py = (real_t *)sb->prev_y + b * ni;
    const size_t *ptr = wr->col_ptr;
    const uint32_t *restrict dst = wr->nz_dst;
    const real_t *restrict cw = (real_t *)sb->cw + sb->nz_off[b];
    real_t *restrict exc = sb->sc_exc;
    real_t *restrict inh = sb->sc_inh;
    real_t *restrict idr = sb->sc_idr;
    real_t *restrict inp = sb->sc_inp;
    const size_t *actx = sb->sc_actx, *acty = sb->sc_acty;
    for (size_t i = 0; i <= ne; i++)
        exc[i] = 0;
    for (size_t i = 0; i < ne; i++)
        inh[i] = 0;
    for (size_t k = 0; k < ni; k++)
        idr[k] = 0;
    if (sb->wild[b]) {
        sb->paths.sparse_all++;
        for (size_t j = 0; j < ne; j++)
            SORN_FN(sorn_scatter_row)(exc, cw + ptr[j], dst + ptr[j], ptr[j + 1] - ptr[j], px[j]);
    } else {
        sb->paths.sparse++;
        for (size_t a = 0; a < nax; a++) {
            const size_t j = actx[a];
            SORN_FN(sorn_scatter_row)(exc, cw + ptr[j], dst + ptr[j], ptr[j + 1] - ptr[j], px[j]);
        }
    }
    for (size_t a = 0; a < nay; a++)
        SORN_FN(sorn_axpy)(inh, wei_p + acty[a] * nep, py[acty[a]], ne);
    bool finite_in = true;
    for (size_t q = 0; q < nr; q++)
        finite_in = finite_in && isfinite(u[q]);
    if (finite_in) {
        const size_t *iptr = wr->in_ptr;
        for (size_t i = 0; i <= ne; i++)
            inp[i] = 0;
        for (size_t q = 0; q < nr; q++)
            if (u[q] != 0)
                SORN_FN(sorn_scatter_row)(inp, (const real_t *)wr->in_w + iptr[q],
                                          wr->in_unit + iptr[q], iptr[q + 1] - iptr[q], u[q]);
    } else {
        sb->paths.dense_inputs++;
        const real_t *weu_t = wr->weu_t;
        size_t i = 0;
        for (; i + SORN_VL <= ne; i += SORN_VL)
            SORN_FN(sorn_input_block)(inp, weu_t, u, ne, nr, i, SORN_VL);
        if (i < ne)
            SORN_FN(sorn_input_block)(inp, weu_t, u, ne, nr, i, ne - i);
    }
}

/* Phase 3 step 1 of a sparse slot b for every entry of the rows: the
 * update of masked entries, its finite flag (a NaN added to the row's flag
 * member), pruning (kept in cm alone: the mask a snapshot or the dense
 * layout sees is read from it), and the row totals in ascending source
 * order. */
SORN_INLINE void SORN_FN(sorn_fast_stdp_rows)(sorn_batch *sb, size_t b, SORN_VEC eta)
{
    const size_t ne = sb->n_e;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const real_t *x = (real_t *)sb->x + b * ne, *px = (real_t *)sb->prev_x + b * ne;
    const size_t *ptr = wr->col_ptr;
    const size_t off = sb->nz_off[b];
    const uint32_t *restrict dst = wr->nz_dst;
    real_t *restrict cw = (real_t *)sb->cw + off;
    SORN_IREAL *restrict cm = (SORN_IREAL *)sb->cm + off;
    SORN_PAIR *restrict tot = sb->sc_tot;
    const SORN_PAIR *restrict xp = sb->sc_xp;
    for (size_t i = 0; i <= ne; i++)
        tot[i] = (SORN_PAIR){0};
    for (size_t j = 0; j < ne; j++) {
        const SORN_VEC pxj = SORN_FN(sorn_splat)(px[j]), xj = SORN_FN(sorn_splat)(x[j]);
        const size_t end = ptr[j + 1];
        for (size_t k = ptr[j]; k < end; k += SORN_VL)
            SORN_FN(sorn_stdp_chunk)(cw + k, cm + k, dst + k, xp, tot, pxj, xj, eta);
    }
}

/* Phase 3 of a sparse slot b whose STDP is on, at rate eta_stdp: step 1,
 * then steps 2–3 per row through the units' view f. */
SORN_INLINE void SORN_FN(sorn_fast_stdp)(sorn_batch *sb, size_t b, const SORN_UNITS *f,
                                         real_t eta_stdp)
{
    const size_t ne = sb->n_e;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const size_t *ptr = wr->col_ptr;
    const size_t off = sb->nz_off[b];
    const uint32_t *restrict dst = wr->nz_dst;
    real_t *restrict cw = (real_t *)sb->cw + off;
    SORN_IREAL *restrict cm = (SORN_IREAL *)sb->cm + off;
    real_t *restrict scale = sb->sc_scale;
    const SORN_VEC zero = SORN_FN(sorn_splat)(0), eta = SORN_FN(sorn_splat)(eta_stdp);
    SORN_FN(sorn_fast_stdp_rows)(sb, b, eta);
    /* Steps 2–3 per row: flags and factors. */
    SORN_VEC bad = zero;
    SORN_IVEC norm = {0};
    size_t i0 = 0;
    for (; i0 + SORN_VL <= ne; i0 += SORN_VL)
        norm = SORN_FN(sorn_row_block)(f, i0, SORN_VL, norm, &bad);
    if (i0 < ne)
        norm = SORN_FN(sorn_row_block)(f, i0, ne - i0, norm, &bad);
    bool any_norm = false;
    for (size_t l = 0; l < SORN_VL; l++)
        any_norm = any_norm || norm[l] != 0;
    /* Step 3's products for every still-masked entry (a factor of 1
     * leaves a weight as it is, bit for bit); a non-finite product
     * only marks the slot wild. */
    if (any_norm) {
        const size_t nz = ptr[ne];
        for (size_t k = 0; k < nz; k += SORN_VL) {
            SORN_VEC w;
            memcpy(&w, cw + k, sizeof w);
#if SORN_LANES == 4
            const SORN_VEC sv = {scale[dst[k]], scale[dst[k + 1]], scale[dst[k + 2]],
                                 scale[dst[k + 3]]};
#else
            const SORN_VEC sv = {scale[dst[k]], scale[dst[k + 1]]};
#endif
            SORN_IVEC m;
            memcpy(&m, cm + k, sizeof m);
            const SORN_VEC wn = w * sv;
            bad = bad + SORN_FN(sorn_keep)(wn - wn, m);
            w = SORN_FN(sorn_keep)(wn, m) + SORN_FN(sorn_keep)(w, ~m);
            memcpy(cw + k, &w, sizeof w);
        }
    }
    /* Every weight outside the initial mask is +0 now. */
    sb->cleared[b] = 1;
    if (SORN_FN(sorn_any_nan)(bad))
        sb->wild[b] = 1;
}

/* Phase 4 of a sparse slot b (sorn_emit's statements): the drives checked
 * with vectors, the effectors over their readout lists; whether the slot
 * stayed finite. */
SORN_INLINE bool SORN_FN(sorn_fast_emit)(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i;
    const size_t n = sb->base.nodes, nout = sb->base.effectors;
    const real_t *te = (real_t *)sb->t_e + b * ne;
    const real_t *x = (real_t *)sb->x + b * ne;
    const real_t *y = (real_t *)sb->y + b * ni;
    const real_t *drive = (real_t *)sb->drive + b * n;
    const int32_t *af = sb->adapt_finite + b * ne;
    SORN_VEC z = {0};
    size_t v = 0;
    for (; v + SORN_VL <= n; v += SORN_VL) {
        const SORN_VEC d = SORN_FN(sorn_ld)(drive + v, SORN_VL);
        z = z + (d - d);
    }
    for (; v < n; v++)
        z[0] = z[0] + (drive[v] - drive[v]);
    bool valid = !SORN_FN(sorn_any_nan)(z);
    for (size_t i = 0; i < ne; i++)
        valid = valid && af[i] && isfinite(te[i]);
    real_t *act = (real_t *)sb->activity + b * n;
    memcpy(act, x, ne * sizeof *x);
    memcpy(act + ne, y, ni * sizeof *y);
    real_t *eff = (real_t *)sb->effectors + b * nout;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const size_t *ro = wr->ro_ptr;
    for (size_t k = 0; k < nout; k++) {
        real_t s = 0;
        for (size_t c = ro[k]; c < ro[k + 1]; c++)
            s = s + x[wr->ro_unit[c]];
        const size_t cnt = ro[k + 1] - ro[k];
        eff[k] = cnt > 0 ? s / (real_t)cnt : (real_t)0;
    }
    return valid;
}

/* One fast frame of a sparse slot b; u = its inputs [R]. */
static void SORN_FN(sorn_fast_slot)(sorn_batch *sb, size_t b, const real_t *u)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t n = sb->base.nodes;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const size_t nip = sb->ni_pad;
    const real_t *restrict wie_p = wr->wie_p;
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
    real_t *restrict exc = sb->sc_exc;
    real_t *restrict inh = sb->sc_inh;
    real_t *restrict idr = sb->sc_idr;
    real_t *restrict inp = sb->sc_inp;
    SORN_PAIR *restrict tot = sb->sc_tot;
    SORN_PAIR *restrict xp = sb->sc_xp;
    real_t *restrict scale = sb->sc_scale;
    size_t *actx = sb->sc_actx, *acty = sb->sc_acty;
    const SORN_UNITS f = {
        .ne = ne,
        .nr = nr,
        .exc = exc,
        .inh = inh,
        .inp = inp,
        .ce = wr->c_e,
        .te = te,
        .x = x,
        .px = px,
        .drive = drive,
        .scale = scale,
        .xp = xp,
        .tot = tot,
        .af = af,
    };

    /* Phase 1, and the sources that fired (either zero is silent). */
    size_t nax = 0, nay = 0;
    for (size_t i = 0; i < ne; i++) {
        px[i] = x[i];
        actx[nax] = i;
        nax += px[i] != 0;
    }
    for (size_t k = 0; k < ni; k++) {
        py[k] = y[k];
        acty[nay] = k;
        nay += py[k] != 0;
    }

    /* Phase 2: the three E sums as per-destination accumulators fed in
     * ascending source order. */
    SORN_FN(sorn_fast_sums)(sb, b, u, nax, nay);
    size_t i0 = 0;
    for (; i0 + SORN_VL <= ne; i0 += SORN_VL)
        SORN_FN(sorn_drive_block)(&f, i0, SORN_VL);
    if (i0 < ne)
        SORN_FN(sorn_drive_block)(&f, i0, ne - i0);
    for (size_t a = 0; a < nax; a++)
        SORN_FN(sorn_axpy)(idr, wie_p + actx[a] * nip, px[actx[a]], ni);
    for (size_t k = 0; k < ni; k++) {
        const real_t d = idr[k] - ti[k];
        drive[ne + k] = d;
        y[k] = d >= 0 ? (real_t)1 : (real_t)0;
    }

    /* Phase 3. */
    if (stdp) {
        SORN_FN(sorn_fast_stdp)(sb, b, &f, eta_stdp);
    } else {
        for (size_t i = 0; i < ne; i++)
            af[i] = 1;
    }
    if (ip)
        for (size_t i = 0; i < ne; i++)
            te[i] = te[i] + eta_ip * (x[i] - h_ip);

    /* Phase 4 (sorn_emit's statements): the drives checked with vectors,
     * the effectors over their readout lists. */
    sb->finite[b] = SORN_FN(sorn_fast_emit)(sb, b);
}

static void SORN_FN(sorn_step_fast)(sorn_batch *sb, const void *inputs, const int32_t *active)
{
    const size_t nr = sb->base.receptors;
    const real_t *u = inputs;
    for (size_t b = 0; b < sb->base.slots; b++) {
        /* Lane slots stepped before this loop (sorn_step). */
        if (!active[b] || sb->layout[b] == SORN_LAYOUT_LANES)
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

#undef SORN_UNITS
#undef SORN_INLINE
#undef SORN_VEC
#undef SORN_IVEC
#undef SORN_PAIR
#undef SORN_VL
#undef real_t
#undef SORN_FN
#undef SORN_CAT
#undef SORN_CAT_
