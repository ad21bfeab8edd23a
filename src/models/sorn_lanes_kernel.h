/* The SORN lane frame (sorn_lanes.h), written once and included by
 * sorn_lanes.c for each instruction set and dtype: LN_ISA (its name),
 * LN_VBYTES (bytes per vector), LN_ATTR (the target attribute of every
 * function, empty for the x86-64 baseline); it instantiates itself for
 * double and float (LN_F32), and undefines the three when done.
 *
 * Exactness, on top of sorn_fast.h's argument (its "zero terms", "phase 3
 * per entry" and "NaN bits" paragraphs hold lane by lane): every lane does
 * the scalar IEEE arithmetic of the dtype on its own slot's operands, in
 * the order of the per-slot fast kernel, and nothing is summed across
 * lanes. What lanes add:
 *
 *   Shared visits. A source is visited when it fired (prev != 0) in some
 *   active lane, or always while some active lane is wild. In a lane where
 *   it did not fire the term is w·(±0) with w finite (the lane is not
 *   wild), a ±0 that leaves the accumulator bit for bit as it was (never
 *   −0, see sorn_fast.h). Likewise an input receptor is visited when its
 *   input is non-zero in some active lane, and every receptor and unit are
 *   summed in every lane when some active lane has a non-finite input: the
 *   extra terms are the reference's own terms (it sums densely), or ±0
 *   where the per-slot kernel skips them. The inhibitory sums and the I
 *   drives read fixed finite weights and run per lane over that lane's own
 *   fired sources, as the per-slot kernel does.
 *
 *   Lane masks. Every store of lane state is a blend: drives, states,
 *   flags and thresholds change only in active lanes, weights and their
 *   mask bits only in lanes whose STDP is on, thresholds only where IP is
 *   on. Inactive lanes and pads compute garbage (perhaps NaN) in scratch
 *   that nothing keeps, so a failing slot never disturbs another, and an
 *   inactive slot does not change at all. Outputs (activity, effectors,
 *   finite) are written to the slot-major live views for active lanes
 *   only. */
#if !defined(LN_ISA) || !defined(LN_VBYTES) || !defined(LN_ATTR)
#error "define LN_ISA, LN_VBYTES and LN_ATTR before including sorn_lanes_kernel.h"
#endif

#ifndef LN_F32
#define LN_F32 0
#include "models/sorn_lanes_kernel.h"
#undef LN_F32
#define LN_F32 1
#include "models/sorn_lanes_kernel.h"
#undef LN_F32
#undef LN_ISA
#undef LN_VBYTES
#undef LN_ATTR
#else

#if LN_F32
#define LN_REAL float
#define LN_IREAL int32_t
#define LN_DT f32
#else
#define LN_REAL double
#define LN_IREAL int64_t
#define LN_DT f64
#endif
/* Lanes per vector (LN_WPP: the same for the preprocessor). */
#define LN_W (LN_VBYTES / (int)sizeof(LN_REAL))
#define LN_WPP (LN_VBYTES / (LN_F32 ? 4 : 8))

/* x86's movemask for these vectors gives a lane mask's bits at once (it
 * reads the sign bits; a lane mask is all ones or 0). */
#if defined(__x86_64__) || defined(__i386__)
#if LN_VBYTES == 32 && LN_F32
#define LN_MOVEMASK(m) _mm256_movemask_ps((__m256)(m))
#elif LN_VBYTES == 32
#define LN_MOVEMASK(m) _mm256_movemask_pd((__m256d)(m))
#elif LN_F32
#define LN_MOVEMASK(m) _mm_movemask_ps((__m128)(m))
#else
#define LN_MOVEMASK(m) _mm_movemask_pd((__m128d)(m))
#endif
#endif

#define LN_CAT_(a, b) a##_##b
#define LN_CAT(a, b) LN_CAT_(a, b)
#define LN_SFX LN_CAT(LN_ISA, LN_DT)
#define LN_FN(name) LN_CAT(name, LN_SFX)
#define real_t LN_REAL
#define ireal_t LN_IREAL

typedef real_t LN_FN(ln_vec) __attribute__((vector_size(LN_VBYTES)));
typedef ireal_t LN_FN(ln_ivec) __attribute__((vector_size(LN_VBYTES)));
#define VEC LN_FN(ln_vec)
#define IVEC LN_FN(ln_ivec)
#define LN_INLINE static inline __attribute__((always_inline)) LN_ATTR

LN_INLINE VEC LN_FN(ln_ld)(const real_t *p)
{
    VEC v;
    memcpy(&v, p, sizeof v);
    return v;
}

LN_INLINE void LN_FN(ln_st)(real_t *p, VEC v) { memcpy(p, &v, sizeof v); }

LN_INLINE IVEC LN_FN(ln_ldm)(const ireal_t *p)
{
    IVEC v;
    memcpy(&v, p, sizeof v);
    return v;
}

LN_INLINE void LN_FN(ln_stm)(ireal_t *p, IVEC v) { memcpy(p, &v, sizeof v); }

LN_INLINE VEC LN_FN(ln_splat)(real_t x)
{
    VEC v;
    for (int l = 0; l < LN_W; l++)
        v[l] = x;
    return v;
}

/* x where m is set, +0 elsewhere. */
LN_INLINE VEC LN_FN(ln_keep)(VEC x, IVEC m) { return (VEC)((IVEC)x & m); }

/* a where m is set, b elsewhere, bit for bit. */
LN_INLINE VEC LN_FN(ln_blend)(IVEC m, VEC a, VEC b) { return (VEC)(((IVEC)a & m) | ((IVEC)b & ~m)); }

LN_INLINE IVEC LN_FN(ln_blendm)(IVEC m, IVEC a, IVEC b) { return (a & m) | (b & ~m); }

/* Bit l set where lane l of the lane mask m is set. */
LN_INLINE unsigned LN_FN(ln_bits)(IVEC m)
{
#ifdef LN_MOVEMASK
    return (unsigned)LN_MOVEMASK(m);
#else
    unsigned bits = 0;
    for (int l = 0; l < LN_W; l++)
        bits |= (unsigned)(m[l] & 1) << l;
    return bits;
#endif
}

LN_INLINE bool LN_FN(ln_any)(IVEC m)
{
    ireal_t s = 0;
    for (int l = 0; l < LN_W; l++)
        s |= m[l];
    return s != 0;
}

/* Transposes the LN_W x LN_W block r in place (r[a][c] becomes r[c][a]):
 * lane-interleaved [unit][lane] values to per-lane runs of units and back,
 * moving bits only. */
LN_INLINE void LN_FN(ln_transpose)(VEC r[LN_W])
{
#if LN_WPP == 2
    const VEC t0 = __builtin_shufflevector(r[0], r[1], 0, 2);
    const VEC t1 = __builtin_shufflevector(r[0], r[1], 1, 3);
    r[0] = t0;
    r[1] = t1;
#elif LN_WPP == 4
    const VEC a0 = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5);
    const VEC a1 = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
    const VEC a2 = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5);
    const VEC a3 = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
    r[0] = __builtin_shufflevector(a0, a2, 0, 1, 4, 5);
    r[1] = __builtin_shufflevector(a0, a2, 2, 3, 6, 7);
    r[2] = __builtin_shufflevector(a1, a3, 0, 1, 4, 5);
    r[3] = __builtin_shufflevector(a1, a3, 2, 3, 6, 7);
#elif LN_WPP == 8
    VEC u[8], v[8];
    for (int a = 0; a < 8; a += 2) {
        u[a] = __builtin_shufflevector(r[a], r[a + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        u[a + 1] = __builtin_shufflevector(r[a], r[a + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int a = 0; a < 8; a += 4)
        for (int h = 0; h < 2; h++) {
            v[a + 2 * h] =
                __builtin_shufflevector(u[a + h], u[a + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
            v[a + 2 * h + 1] =
                __builtin_shufflevector(u[a + h], u[a + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
    for (int c = 0; c < 4; c++) {
        r[c] = __builtin_shufflevector(v[c], v[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        r[c + 4] = __builtin_shufflevector(v[c], v[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
#else
#error "ln_transpose: unsupported lane count"
#endif
}

/* Per-lane runs [L][stride] of cnt <= LN_W values from unit i0 on, as the
 * lane-interleaved vectors out[u] (unit i0 + u in every lane); u >= cnt
 * left as whatever the run holds past cnt (within stride). */
LN_INLINE void LN_FN(ln_gather_runs)(const real_t *runs, size_t stride, size_t i0, VEC out[LN_W])
{
    for (int l = 0; l < LN_W; l++)
        out[l] = LN_FN(ln_ld)(runs + (size_t)l * stride + i0);
    LN_FN(ln_transpose)(out);
}

/* The count lane-interleaved values v ([count][L]) of each active lane l
 * into its slot's block of the slot-major views: view[slot[l] * stride +
 * at + u] = v[u][l]. */
LN_INLINE void LN_FN(ln_emit_runs)(const real_t *v, size_t count, size_t at, IVEC act,
                                   const size_t *slot, real_t *view, size_t stride)
{
    for (size_t i0 = 0; i0 < count; i0 += LN_W) {
        const size_t cnt = count - i0 < LN_W ? count - i0 : LN_W;
        VEC r[LN_W];
        for (int u = 0; u < LN_W; u++)
            r[u] = (size_t)u < cnt ? LN_FN(ln_ld)(v + (i0 + (size_t)u) * LN_W)
                                   : LN_FN(ln_splat)(0);
        LN_FN(ln_transpose)(r);
        for (int l = 0; l < LN_W; l++) {
            if (!act[l])
                continue;
            real_t *out = view + slot[l] * stride + at + i0;
            if (cnt == LN_W)
                LN_FN(ln_st)(out, r[l]);
            else
                for (size_t u = 0; u < cnt; u++)
                    out[u] = r[l][u];
        }
    }
}

/* acc[i] = acc[i] + col[i] for i < n, n a whole number of vectors: one
 * lane's inhibitory sums over a source that fired, whose state is exactly
 * 1 (states are 0 or 1, and ±0 does not fire), so the reference's product
 * col[i]·1 is col[i] bit for bit. */
LN_INLINE void LN_FN(ln_add)(real_t *restrict acc, const real_t *restrict col, size_t n)
{
    /* Two vectors a turn: n is a whole number of SORN_LMAX-value rows
     * (ne_pad, ni_pad), an even number of vectors for every lane width. */
    for (size_t i = 0; i < n; i += 2 * LN_W) {
        LN_FN(ln_st)(acc + i, LN_FN(ln_ld)(acc + i) + LN_FN(ln_ld)(col + i));
        LN_FN(ln_st)(acc + i + LN_W, LN_FN(ln_ld)(acc + i + LN_W) + LN_FN(ln_ld)(col + i + LN_W));
    }
}

/* Phase 3 step 1 for the entries [k0, k1) of source row j (prev_x pxj,
 * x xj) in lanes stdpm: the update, its finite flag, pruning and the row
 * totals. `full` when every lane that is not a pad has STDP on: pads hold
 * weight +0 and mask bit 0, which the update gives back (eta is +0 there),
 * so no blend is needed. */
LN_INLINE void LN_FN(ln_stdp_row)(real_t *restrict cw, ireal_t *restrict cm,
                                  const uint32_t *restrict dst, const real_t *x,
                                  const real_t *px, real_t *tot, real_t *flag, size_t k0,
                                  size_t k1, VEC pxj, VEC xj, VEC eta, IVEC stdpm, bool full)
{
    const VEC zero = LN_FN(ln_splat)(0);
    for (size_t k = k0; k < k1; k++) {
        const size_t i = (size_t)dst[k] * LN_W;
        const VEC w = LN_FN(ln_ld)(cw + k * LN_W);
        const IVEC m = LN_FN(ln_ldm)(cm + k * LN_W);
        /* The reference's grouping (sorn_fast.h). */
        const VEC corr = LN_FN(ln_ld)(x + i) * pxj - LN_FN(ln_ld)(px + i) * xj;
        const VEC wv = w + eta * corr;
        const VEC z = LN_FN(ln_keep)(wv - wv, m);
        const IVEC keep = m & ~(IVEC)(wv <= zero);
        const VEC wf = LN_FN(ln_keep)(wv, keep);
        LN_FN(ln_st)(tot + i, LN_FN(ln_ld)(tot + i) + wf);
        LN_FN(ln_st)(flag + i, LN_FN(ln_ld)(flag + i) + z);
        LN_FN(ln_st)(cw + k * LN_W, full ? wf : LN_FN(ln_blend)(stdpm, wf, w));
        LN_FN(ln_stm)(cm + k * LN_W, full ? keep : LN_FN(ln_blendm)(stdpm, keep, m));
    }
}

static LN_ATTR void LN_FN(sorn_lanes_step)(const sorn_lframe *f)
{
    const size_t ne = f->ne, ni = f->ni, nr = f->nr, nout = f->nout, n = ne + ni;
    const size_t nep = f->ne_pad, nip = f->ni_pad;
    sorn_lgroup *g = f->g;
    sorn_lscratch *s = f->s;
    const real_t *in = f->inputs;
    const real_t *par = f->params;
    const VEC zero = LN_FN(ln_splat)(0), one = LN_FN(ln_splat)(1);
    const IVEC ones = (IVEC)(zero == zero);

    /* The lanes stepped this frame and their rates; inactive lanes and pads
     * get zero inputs and rates (their results are never kept). */
    IVEC act = {0}, stdpm = {0}, ipm = {0}, pads = {0};
    VEC eta = zero, eta_ip = zero, h_ip = zero;
    real_t *uv = s->u;
    bool wild = false, dense_in = false;
    size_t nact = 0;
    for (size_t q = 0; q < nr; q++)
        LN_FN(ln_st)(uv + q * LN_W, zero);
    for (int l = 0; l < LN_W; l++) {
        const size_t b = g->slot[l];
        if (b == SORN_LNONE)
            pads[l] = -1;
        if (b == SORN_LNONE || !f->active[b] || f->layout[b] != SORN_LAYOUT_LANES)
            continue;
        nact++;
        act[l] = -1;
        stdpm[l] = f->plasticity[2 * b] ? -1 : 0;
        ipm[l] = f->plasticity[2 * b + 1] ? -1 : 0;
        eta[l] = par[3 * b];
        eta_ip[l] = par[3 * b + 1];
        h_ip[l] = par[3 * b + 2];
        wild = wild || f->wild[b];
        for (size_t q = 0; q < nr; q++) {
            const real_t v = in[b * nr + q];
            uv[q * LN_W + (size_t)l] = v;
            dense_in = dense_in || !isfinite(v);
        }
    }
    if (nact == 0)
        return;
    *f->lanes += nact;
    if (wild)
        *f->lanes_all += nact;
    if (dense_in)
        *f->lanes_dense_inputs += nact;

    real_t *x = g->x, *px = g->px, *te = g->te, *y = g->y, *py = g->py, *drive = g->drive;
    real_t *cw = g->cw;
    ireal_t *cm = g->cm, *af = g->af;
    real_t *exc = s->exc, *inp = s->inp, *tot = s->tot, *flag = s->flag, *scale = s->scale;
    real_t *inh = s->inh, *idr = s->idr;
    uint32_t *actx = s->actx, *acty = s->acty, *vis = s->vis;
    const size_t *ptr = f->ptr;
    const uint32_t *dst = f->dst;
    size_t nax[LN_W], nay[LN_W], nvis = 0;
    for (int l = 0; l < LN_W; l++)
        nax[l] = nay[l] = 0;

    /* Phase 1 in active lanes, the sources that fired per lane and in some
     * active lane (either zero is silent), and cleared sums and totals. */
    for (size_t i = 0; i < ne; i++) {
        const VEC p = LN_FN(ln_blend)(act, LN_FN(ln_ld)(x + i * LN_W),
                                      LN_FN(ln_ld)(px + i * LN_W));
        LN_FN(ln_st)(px + i * LN_W, p);
        unsigned bits = LN_FN(ln_bits)((IVEC)(p != zero) & act);
        vis[nvis] = (uint32_t)i;
        nvis += bits != 0;
        for (; bits; bits &= bits - 1) {
            const size_t l = (size_t)__builtin_ctz(bits);
            actx[l * ne + nax[l]++] = (uint32_t)i;
        }
        LN_FN(ln_st)(exc + i * LN_W, zero);
        LN_FN(ln_st)(inp + i * LN_W, zero);
        LN_FN(ln_st)(tot + i * LN_W, zero);
        LN_FN(ln_st)(flag + i * LN_W, zero);
    }
    LN_FN(ln_st)(inp + ne * LN_W, zero);
    for (size_t k = 0; k < ni; k++) {
        const VEC p = LN_FN(ln_blend)(act, LN_FN(ln_ld)(y + k * LN_W),
                                      LN_FN(ln_ld)(py + k * LN_W));
        LN_FN(ln_st)(py + k * LN_W, p);
        for (unsigned bits = LN_FN(ln_bits)((IVEC)(p != zero) & act); bits; bits &= bits - 1) {
            const size_t l = (size_t)__builtin_ctz(bits);
            acty[l * ni + nay[l]++] = (uint32_t)k;
        }
    }

    /* Phase 2: the E->E sums over the shared rows, in ascending source
     * order per destination. */
    const size_t nsrc = wild ? ne : nvis;
    for (size_t a = 0; a < nsrc; a++) {
        const size_t j = wild ? a : vis[a];
        const VEC pj = LN_FN(ln_ld)(px + j * LN_W);
        for (size_t k = ptr[j]; k < ptr[j + 1]; k++) {
            real_t *e = exc + (size_t)dst[k] * LN_W;
            LN_FN(ln_st)(e, LN_FN(ln_ld)(e) + LN_FN(ln_ld)(cw + k * LN_W) * pj);
        }
    }
    /* The inhibitory sums and the I units' sums per lane, over the fixed
     * weights (transposed, contiguous per source, padded with +0 to whole
     * vectors). */
    const real_t *wei = f->wei_p, *wie = f->wie_p;
    for (int l = 0; l < LN_W; l++) {
        if (!act[l])
            continue;
        real_t *hl = inh + (size_t)l * nep, *dl = idr + (size_t)l * nip;
        for (size_t i = 0; i < nep; i += LN_W)
            LN_FN(ln_st)(hl + i, zero);
        for (size_t k = 0; k < nip; k += LN_W)
            LN_FN(ln_st)(dl + k, zero);
        for (size_t a = 0; a < nay[l]; a++)
            LN_FN(ln_add)(hl, wei + acty[(size_t)l * ni + a] * nep, nep);
        for (size_t a = 0; a < nax[l]; a++)
            LN_FN(ln_add)(dl, wie + actx[(size_t)l * ne + a] * nip, nip);
    }
    /* The input terms. */
    if (dense_in) {
        const real_t *weu_t = f->weu_t;
        for (size_t i = 0; i < ne; i++) {
            VEC t = zero;
            for (size_t q = 0; q < nr; q++)
                t = t + LN_FN(ln_splat)(weu_t[q * ne + i]) * LN_FN(ln_ld)(uv + q * LN_W);
            LN_FN(ln_st)(inp + i * LN_W, t);
        }
    } else {
        const real_t *iw = f->in_w;
        for (size_t q = 0; q < nr; q++) {
            const VEC u = LN_FN(ln_ld)(uv + q * LN_W);
            if (!LN_FN(ln_any)((IVEC)(u != zero)))
                continue;
            for (size_t c = f->in_ptr[q]; c < f->in_ptr[q + 1]; c++) {
                real_t *p = inp + (size_t)f->in_unit[c] * LN_W;
                LN_FN(ln_st)(p, LN_FN(ln_ld)(p) + LN_FN(ln_splat)(iw[c]) * u);
            }
        }
    }
    /* The drives and the new states. Threshold equality fires. The
     * per-lane inhibitory sums come interleaved a block of units at a
     * time (their rows are padded to whole blocks). */
    VEC hb[LN_W];
    for (size_t i = 0; i < ne; i++) {
        if (i % LN_W == 0)
            LN_FN(ln_gather_runs)(inh, nep, i, hb);
        const VEC h = hb[i % LN_W];
        const VEC d = ((LN_FN(ln_ld)(exc + i * LN_W) - h) + LN_FN(ln_ld)(inp + i * LN_W)) -
                      LN_FN(ln_ld)(te + i * LN_W);
        LN_FN(ln_st)(drive + i * LN_W, LN_FN(ln_blend)(act, d, LN_FN(ln_ld)(drive + i * LN_W)));
        const VEC xn = LN_FN(ln_keep)(one, (IVEC)(d >= zero));
        LN_FN(ln_st)(x + i * LN_W, LN_FN(ln_blend)(act, xn, LN_FN(ln_ld)(x + i * LN_W)));
    }
    const real_t *ti = f->t_i;
    for (size_t k = 0; k < ni; k++) {
        if (k % LN_W == 0)
            LN_FN(ln_gather_runs)(idr, nip, k, hb);
        const VEC h = hb[k % LN_W];
        const VEC d = h - LN_FN(ln_splat)(ti[k]);
        real_t *dp = drive + (ne + k) * LN_W;
        LN_FN(ln_st)(dp, LN_FN(ln_blend)(act, d, LN_FN(ln_ld)(dp)));
        const VEC yn = LN_FN(ln_keep)(one, (IVEC)(d >= zero));
        LN_FN(ln_st)(y + k * LN_W, LN_FN(ln_blend)(act, yn, LN_FN(ln_ld)(y + k * LN_W)));
    }

    /* Phase 3, step 1 in lanes with STDP on: per entry the update, its
     * finite flag, pruning, and the row totals in ascending source order. */
    const bool any_stdp = LN_FN(ln_any)(stdpm);
    if (any_stdp) {
        const bool full = !LN_FN(ln_any)(~(stdpm | pads));
        for (size_t j = 0; j < ne; j++) {
            const VEC pxj = LN_FN(ln_ld)(px + j * LN_W), xj = LN_FN(ln_ld)(x + j * LN_W);
            if (full)
                LN_FN(ln_stdp_row)(cw, cm, dst, x, px, tot, flag, ptr[j], ptr[j + 1], pxj, xj,
                                   eta, stdpm, true);
            else
                LN_FN(ln_stdp_row)(cw, cm, dst, x, px, tot, flag, ptr[j], ptr[j + 1], pxj, xj,
                                   eta, stdpm, false);
        }
    }
    /* Steps 2–3 per row: flags and factors (1 for rows left as is); then
     * IP, then each lane's finite check of phase 4. */
    IVEC norm = {0}, afall = ones;
    VEC bad = zero, fz_all = zero;
    for (size_t i = 0; i < ne; i++) {
        IVEC a = ones;
        if (any_stdp) {
            const VEC t = LN_FN(ln_ld)(tot + i * LN_W), z = LN_FN(ln_ld)(flag + i * LN_W);
            bad = bad + LN_FN(ln_keep)(z, stdpm);
            const VEC ce = LN_FN(ln_splat)(((const real_t *)f->c_e)[i]);
            const IVEC nm = (IVEC)(t > zero) & (IVEC)(ce > zero) & stdpm;
            norm |= nm;
            const VEC sc = ce / t;
            LN_FN(ln_st)(scale + i * LN_W, LN_FN(ln_blend)(nm, sc, one));
            /* An overflowing total must not be normalised away; a
             * non-finite scale fails its row. */
            const VEC fz = (z + (t - t)) + LN_FN(ln_keep)(sc - sc, nm);
            a = LN_FN(ln_blendm)(stdpm, (IVEC)(fz == zero), ones);
        }
        a = LN_FN(ln_blendm)(act, a, LN_FN(ln_ldm)(af + i * LN_W));
        LN_FN(ln_stm)(af + i * LN_W, a);
        VEC t_e = LN_FN(ln_ld)(te + i * LN_W);
        const VEC xi = LN_FN(ln_ld)(x + i * LN_W);
        t_e = LN_FN(ln_blend)(ipm, t_e + eta_ip * (xi - h_ip), t_e);
        LN_FN(ln_st)(te + i * LN_W, t_e);
        const VEC d = LN_FN(ln_ld)(drive + i * LN_W);
        fz_all = fz_all + ((d - d) + (t_e - t_e));
        afall &= a;
    }
    /* Step 3's products for every still-masked entry of lanes with STDP on
     * (a factor of 1 gives a weight back bit for bit); a non-finite
     * product marks its lane wild. */
    if (LN_FN(ln_any)(norm)) {
        const size_t nz = ptr[ne];
        for (size_t k = 0; k < nz; k++) {
            const VEC w = LN_FN(ln_ld)(cw + k * LN_W);
            const IVEC m = LN_FN(ln_ldm)(cm + k * LN_W) & stdpm;
            const VEC wn = w * LN_FN(ln_ld)(scale + (size_t)dst[k] * LN_W);
            bad = bad + LN_FN(ln_keep)(wn - wn, m);
            LN_FN(ln_st)(cw + k * LN_W, LN_FN(ln_blend)(m, wn, w));
        }
    }
    for (size_t k = 0; k < ni; k++) {
        const VEC d = LN_FN(ln_ld)(drive + (ne + k) * LN_W);
        fz_all = fz_all + (d - d);
    }

    /* Phase 4 per active lane: the finite flag, the live views. */
    for (int l = 0; l < LN_W; l++) {
        if (!act[l])
            continue;
        const size_t b = g->slot[l];
        if (stdpm[l]) {
            f->cleared[b] = 1;
            if (bad[l] != 0)
                f->wild[b] = 1;
        }
        f->finite[b] = fz_all[l] == 0 && afall[l] != 0;
    }
    /* The activity views, x then y, a block of units at a time. */
    LN_FN(ln_emit_runs)(x, ne, 0, act, g->slot, (real_t *)f->activity, n);
    LN_FN(ln_emit_runs)(y, ni, ne, act, g->slot, (real_t *)f->activity, n);
    real_t *eff = f->effectors;
    for (size_t k = 0; k < nout; k++) {
        VEC sum = zero;
        for (size_t c = f->ro_ptr[k]; c < f->ro_ptr[k + 1]; c++)
            sum = sum + LN_FN(ln_ld)(x + (size_t)f->ro_unit[c] * LN_W);
        const size_t cnt = f->ro_ptr[k + 1] - f->ro_ptr[k];
        const VEC e = cnt > 0 ? sum / LN_FN(ln_splat)((real_t)cnt) : zero;
        for (int l = 0; l < LN_W; l++)
            if (act[l])
                eff[g->slot[l] * nout + k] = e[l];
    }
}

#undef LN_INLINE
#undef VEC
#undef IVEC
#undef real_t
#undef ireal_t
#undef LN_FN
#undef LN_SFX
#undef LN_CAT
#undef LN_CAT_
#undef LN_MOVEMASK
#undef LN_W
#undef LN_WPP
#undef LN_REAL
#undef LN_IREAL
#undef LN_DT
#endif
