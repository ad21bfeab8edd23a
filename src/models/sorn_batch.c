/* SORN model batches (spec/models.md §1, §3.3, §3.5–§3.8, §5.3, §5.5):
 * creation with the initial-state and precision-cast validation, the
 * float64 and float32 frames, reset, freezes and snapshots.
 *
 * Storage: a slot owns only what changes during a trial. Its O(N) state
 * is slot-major ([B][...], one contiguous block per slot, reals in the
 * batch dtype, flags as int32); its E->E weights and mask bits live in the
 * compressed form the fast kernel steps (its own padded rows, or its lane
 * of a group of slots sharing a wiring), and dense [N_E][N_E] copies are
 * made per slot only when it needs them: the reference kernel, or a
 * hand-made state whose weights outside the mask keep it on the reference
 * frame (sorn_fast.h). What never changes (the initial mask as rows, c_e,
 * w_ei, w_ie, w_eu, output_mask, t_i, and the kernels' lists and
 * transposes of them) is a wiring, built once and shared read-only by
 * every slot whose values are the same bit for bit; the initial weights
 * (w_ee0) likewise. Snapshots read any layout without changing it, and
 * report canonical [destination][source] order. Arrays of the inhibitory
 * population have zero width when N_I = 0; the allocator pads an empty
 * request to one value, loops run over N_I and snapshots report the true
 * zero width. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "models/batch_common.h"
#include "models/isa.h"
#include "models/model_internal.h"
#include "models/sorn_internal.h"
#include "models/sorn_lanes.h"

/* Parameter vector of §3.5, cast to the dtype. */
enum { SORN_P_ETA_STDP, SORN_P_ETA_IP, SORN_P_H_IP, SORN_NPARAM };

/* One wiring: the fixed arrays of §3.3 (the initial E->E mask, c_e, w_ei,
 * w_ie, w_eu, output_mask, t_i) that slots created with the same values,
 * bit for bit after the cast, share. Built once at creation, in the forms
 * the kernels read, and read-only after it. */
typedef struct sorn_wiring {
    size_t first, count;     /* its first slot and how many slots use it */
    void *c_e;               /* [N_E] reals */
    void *t_i;               /* [N_I] */
    /* The E<->I weights transposed, rows padded with +0 to SORN_LMAX
     * (every lane width divides it), and the input weights transposed. */
    void *wei_p;             /* [N_I][ne_pad]: wei_p[k][i] = w_ei[i][k] */
    void *wie_p;             /* [N_E][ni_pad]: wie_p[j][k] = w_ie[k][j] */
    void *weu_t;             /* [R][N_E] */
    uint8_t *out_mask;       /* [E][N_E] */
    /* The initial mask's synapses in source-major rows, destinations
     * ascending: unpadded (lanes, initial weights) and padded to whole
     * vectors of SORN_VBYTES with destination N_E (the rows of a slot on
     * its own; a shared wiring's slots step lanes, so it drops them). */
    size_t *ptr;             /* [N_E+1] */
    uint32_t *dst;           /* [nnz] */
    size_t *col_ptr;         /* [N_E+1] */
    uint32_t *nz_dst;        /* [padded nnz] */
    /* The non-zero input weights of each receptor, padded like the rows:
     * receptor q reaches in_unit[c] (ascending) with weight in_w[c] for c
     * in [in_ptr[q], in_ptr[q+1]). */
    size_t *in_ptr;          /* [R+1] */
    uint32_t *in_unit;
    void *in_w;
    size_t *ro_ptr;          /* [E+1] effector k's readout list */
    uint32_t *ro_unit;       /* the E units read, ascending */
    /* The initial mask dense, made only when some slot of the wiring
     * needs dense weights (the reference kernel, a fallback slot). */
    uint8_t *mask0;          /* [N_E][N_E] or NULL */
} sorn_wiring;

/* A slot's initial E->E weights (w_ee0, §3.7's reset copy), shared by the
 * slots of a wiring whose copies are the same bit for bit. */
typedef struct sorn_w0 {
    size_t wiring;
    void *cw;      /* [nnz] the values on the wiring's unpadded rows */
    /* The whole w_ee0, kept only when an entry outside the initial mask
     * is not +0 (hand-made states; constructed ones have W·M there). */
    void *dense;   /* [N_E][N_E] or NULL */
    bool zeros;    /* every entry outside the initial mask is ±0 */
} sorn_w0;

typedef struct sorn_batch {
    bl_model base;
    size_t n_e, n_i;
    size_t ne_pad, ni_pad;      /* N_E, N_I rounded up to SORN_LMAX */
    /* Slot-major O(N) state: reals of the dtype. */
    void *t_e, *x, *prev_x;     /* [B][N_E] */
    void *y, *prev_y;           /* [B][N_I] */
    void *activity, *drive;     /* [B][N] */
    void *effectors;            /* [B][E] */
    void *params;               /* [B][SORN_NPARAM] */
    void *t_e0, *x0, *y0;       /* reset copies */
    /* int32. */
    int32_t *finite;       /* [B] */
    int32_t *adapt_finite; /* [B][N_E] */
    int32_t *plasticity;   /* [B][2]: STDP/pruning/normalisation, intrinsic */
    int32_t *learn_on;     /* [B]: the value reset restores to both flags */
    int32_t *wiring_of;    /* [B] index into wr */
    int32_t *w0_of;        /* [B] index into w0s */

    /* Shared by slots (sorn_fill_slot finds them): nwr wirings and nw0
     * initial weight sets, each at most one per slot. */
    sorn_wiring *wr;
    sorn_w0 *w0s;
    size_t nwr, nw0;
    bool fill_failed;      /* out of memory while filling a slot */

    /* Each slot's E->E weights in one of three layouts (sorn_fast.h):
     * dense (SORN_LAYOUT_CANON: dense_w, dense_m, made on demand and kept),
     * its own padded rows (cw, cm at nz_off) or its lanes (groups). */
    bool reference;          /* step with the reference kernel */
    uint8_t *layout;         /* [B] SORN_LAYOUT_* */
    uint8_t *cleared;        /* [B] weights outside the initial mask are all +0 */
    uint8_t *wild;           /* [B] some compressed weight may be non-finite */
    void **dense_w;          /* [B] [N_E][N_E] reals, NULL until needed */
    uint8_t **dense_m;       /* [B] [N_E][N_E] the current mask, likewise */
    /* Rows padded to whole vectors (SORN_VBYTES): pads have destination
     * N_E (a scratch unit), weight +0 and mask bit 0. */
    size_t *nz_off;          /* [B+1] start of each slot's compressed entries */
    void *cw;                /* [nnz] weights of the entries (sparse layout) */
    void *cm;                /* [nnz] their mask bits as lane masks: integers of the
                              * dtype's width, all ones (masked) or 0 */
    /* Frame scratch; entry N_E belongs to the pads. */
    void *sc_exc, *sc_scale, *sc_inp; /* [N_E+1]; sc_inp: input terms */
    void *sc_inh;            /* [N_E] */
    void *sc_tot, *sc_xp;    /* [N_E+1] pairs: {row total, NaN flag}, {x, prev_x} */
    void *sc_idr;            /* [N_I] */
    size_t *sc_actx, *sc_acty; /* [N_E], [N_I]: sources that fired */
    /* Lockstep lanes (sorn_lanes.h): slots whose wiring another slot
     * shares have no rows of their own; each is a lane of a group. */
    size_t *lane_group;      /* [B] its group, SORN_LNONE for a slot on its own */
    size_t *lane_of;         /* [B] its lane in the group */
    size_t lanes;            /* L, lanes per group */
    size_t ngroups;
    sorn_lgroup *groups;
    sorn_lscratch lsc;
    sorn_lstep_fn lane_step;
    bl_sorn_paths paths;
} sorn_batch;

static const sorn_wiring *sorn_wiring_of(const sorn_batch *sb, size_t b)
{
    return &sb->wr[sb->wiring_of[b]];
}

static const sorn_w0 *sorn_w0_of(const sorn_batch *sb, size_t b)
{
    return &sb->w0s[sb->w0_of[b]];
}

static void sorn_lanes_load(sorn_batch *sb, size_t b);
static void sorn_lanes_sync(sorn_batch *sb, size_t b);
static void sorn_lanes_put_state(sorn_batch *sb, size_t b);
static void sorn_lanes_state(const sorn_batch *sb, size_t b, void *x, void *px, void *te,
                             void *y, void *py, void *drive, int32_t *af);
static bool sorn_load_initial(sorn_batch *sb, size_t b);
static bool sorn_attach(sorn_batch *sb, size_t b, sorn_wiring *wr, sorn_w0 *iw);
static bool sorn_wiring_rows(const sorn_batch *sb, const double *ee_mask, sorn_wiring *wr);
static bool sorn_wiring_readout(const sorn_batch *sb, sorn_wiring *wr);
static void sorn_wiring_free(sorn_wiring *wr);
static void sorn_w0_free(sorn_w0 *iw);

/* Bytes of the fast kernel's vectors, and so the padding of its rows. */
#define SORN_VBYTES 16

#define SORN_REAL double
#define SORN_IREAL int64_t
#define SORN_LANES (SORN_VBYTES / 8)
#define SORN_SFX f64
#include "models/sorn_kernel.h"
#include "models/sorn_fast.h"
#undef SORN_REAL
#undef SORN_IREAL
#undef SORN_LANES
#undef SORN_SFX

#define SORN_REAL float
#define SORN_IREAL int32_t
#define SORN_LANES (SORN_VBYTES / 4)
#define SORN_SFX f32
#include "models/sorn_kernel.h"
#include "models/sorn_fast.h"
#undef SORN_REAL
#undef SORN_IREAL
#undef SORN_LANES
#undef SORN_SFX

/* The kernels' functions of one dtype, so that each operation picks the
 * dtype once. */
typedef struct sorn_kernels {
    void (*fill_slot)(sorn_batch *sb, size_t b, const bl_sorn_init *in);
    void (*reset_any)(sorn_batch *sb, size_t b);
    bool (*from_canonical)(sorn_batch *sb, size_t b);
} sorn_kernels;

static const sorn_kernels sorn_kernels_f64 = {
    sorn_fill_slot_f64, sorn_reset_any_f64, sorn_from_canonical_f64,
};
static const sorn_kernels sorn_kernels_f32 = {
    sorn_fill_slot_f32, sorn_reset_any_f32, sorn_from_canonical_f32,
};

static const sorn_kernels *sorn_kernels_of(const bl_model *m)
{
    return m->dtype == BL_FLOAT32 ? &sorn_kernels_f32 : &sorn_kernels_f64;
}

/* ---- storage ---------------------------------------------------------------- */

enum { SORN_NARRAYS = 18 };
_Static_assert(SORN_NARRAYS <= BL_BATCH_MAX_ARRAYS, "a SORN batch lists too many arrays");

/* Every owned slot-major array (each O(N) per slot), so that allocation
 * and release walk one list. The products are overflow-checked by the
 * caller. */
static size_t sorn_arrays(bl_model *m, bl_batch_array *out)
{
    sorn_batch *sb = (sorn_batch *)m;
    const size_t ne = sb->n_e, ni = sb->n_i, n = m->nodes;
    const size_t nout = m->effectors;
    size_t k = 0;
#define REAL_ARRAY(field, count) out[k++] = (bl_batch_array){&sb->field, NULL, NULL, (count)}
#define INT_ARRAY(field, count) out[k++] = (bl_batch_array){NULL, NULL, &sb->field, (count)}
    REAL_ARRAY(t_e, ne);
    REAL_ARRAY(x, ne);
    REAL_ARRAY(prev_x, ne);
    REAL_ARRAY(y, ni);
    REAL_ARRAY(prev_y, ni);
    REAL_ARRAY(activity, n);
    REAL_ARRAY(drive, n);
    REAL_ARRAY(effectors, nout);
    REAL_ARRAY(params, SORN_NPARAM);
    REAL_ARRAY(t_e0, ne);
    REAL_ARRAY(x0, ne);
    REAL_ARRAY(y0, ni);
    INT_ARRAY(finite, 1);
    INT_ARRAY(adapt_finite, ne);
    INT_ARRAY(plasticity, 2);
    INT_ARRAY(learn_on, 1);
    INT_ARRAY(wiring_of, 1);
    INT_ARRAY(w0_of, 1);
#undef REAL_ARRAY
#undef INT_ARRAY
    BL_ASSERT(k == SORN_NARRAYS);
    return k;
}

static void sorn_wiring_free(sorn_wiring *wr)
{
    void *own[] = {wr->c_e,     wr->t_i,    wr->wei_p,   wr->wie_p,  wr->weu_t,
                   wr->out_mask, wr->ptr,   wr->dst,     wr->col_ptr, wr->nz_dst,
                   wr->in_ptr,  wr->in_unit, wr->in_w,   wr->ro_ptr, wr->ro_unit,
                   wr->mask0};
    for (size_t a = 0; a < sizeof own / sizeof *own; a++)
        bl_free(own[a]);
    *wr = (sorn_wiring){0};
}

static void sorn_w0_free(sorn_w0 *iw)
{
    bl_free(iw->cw);
    bl_free(iw->dense);
    *iw = (sorn_w0){0};
}

static void sorn_destroy(bl_model *m)
{
    sorn_batch *sb = (sorn_batch *)m;
    for (size_t w = 0; w < sb->nwr; w++)
        sorn_wiring_free(&sb->wr[w]);
    for (size_t w = 0; w < sb->nw0; w++)
        sorn_w0_free(&sb->w0s[w]);
    for (size_t b = 0; b < m->slots; b++) {
        if (sb->dense_w)
            bl_free(sb->dense_w[b]);
        if (sb->dense_m)
            bl_free(sb->dense_m[b]);
    }
    for (size_t k = 0; sb->groups && k < sb->ngroups; k++) {
        sorn_lgroup *g = &sb->groups[k];
        void *own[] = {g->cw, g->cm, g->x, g->px, g->te, g->af, g->y, g->py, g->drive};
        for (size_t a = 0; a < sizeof own / sizeof *own; a++)
            bl_free(own[a]);
    }
    sorn_lscratch *c = &sb->lsc;
    void *scratch[] = {c->exc, c->inp, c->tot, c->flag, c->scale, c->inh,
                       c->idr, c->u,   c->actx, c->acty, c->vis};
    for (size_t a = 0; a < sizeof scratch / sizeof *scratch; a++)
        bl_free(scratch[a]);
    void *fast[] = {sb->wr,      sb->w0s,      sb->dense_w,  sb->dense_m,  sb->groups,
                    sb->lane_group, sb->lane_of, sb->layout,  sb->cleared,  sb->wild,
                    sb->nz_off,  sb->cw,       sb->cm,       sb->sc_exc,   sb->sc_inp,
                    sb->sc_inh,  sb->sc_tot,   sb->sc_xp,    sb->sc_scale, sb->sc_idr,
                    sb->sc_actx, sb->sc_acty};
    bl_batch_release(m, sorn_arrays, fast, sizeof fast / sizeof *fast);
}

/* ---- operations ----------------------------------------------------------- */

/* One lane frame of every group (lanes not in SORN_LAYOUT_LANES sit out). */
static void sorn_step_lanes(sorn_batch *sb, const void *inputs, const int32_t *active)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t nout = sb->base.effectors;
    for (size_t k = 0; k < sb->ngroups; k++) {
        sorn_lgroup *g = &sb->groups[k];
        const sorn_wiring *w = &sb->wr[g->wiring];
        const sorn_lframe f = {
            .ne = ne,
            .ni = ni,
            .nr = nr,
            .nout = nout,
            .ne_pad = sb->ne_pad,
            .ni_pad = sb->ni_pad,
            .ptr = w->ptr,
            .dst = w->dst,
            .wei_p = w->wei_p,
            .wie_p = w->wie_p,
            .weu_t = w->weu_t,
            .c_e = w->c_e,
            .t_i = w->t_i,
            .in_ptr = w->in_ptr,
            .in_unit = w->in_unit,
            .in_w = w->in_w,
            .ro_ptr = w->ro_ptr,
            .ro_unit = w->ro_unit,
            .g = g,
            .s = &sb->lsc,
            .inputs = inputs,
            .active = active,
            .layout = sb->layout,
            .plasticity = sb->plasticity,
            .params = sb->params,
            .cleared = sb->cleared,
            .wild = sb->wild,
            .activity = sb->activity,
            .effectors = sb->effectors,
            .finite = sb->finite,
            .lanes = &sb->paths.lanes,
            .lanes_all = &sb->paths.lanes_all,
            .lanes_dense_inputs = &sb->paths.lanes_dense_inputs,
        };
        sb->lane_step(&f);
    }
}

static void sorn_step(bl_model *m, const void *inputs, const void *noise, const int32_t *active)
{
    /* §3.6: the noise argument is shape-checked by model.c and ignored. */
    (void)noise;
    sorn_batch *sb = (sorn_batch *)m;
    if (!sb->reference)
        sorn_step_lanes(sb, inputs, active);
    if (sb->reference) {
        for (size_t b = 0; b < m->slots; b++)
            sb->paths.reference += active[b] != 0;
        if (m->dtype == BL_FLOAT32)
            sorn_step_f32(sb, inputs, active);
        else
            sorn_step_f64(sb, inputs, active);
    } else if (m->dtype == BL_FLOAT32) {
        sorn_step_fast_f32(sb, inputs, active);
    } else {
        sorn_step_fast_f64(sb, inputs, active);
    }
}

static void sorn_reset(bl_model *m, const int32_t *active)
{
    sorn_batch *sb = (sorn_batch *)m;
    for (size_t b = 0; b < m->slots; b++)
        if (active[b])
            sorn_kernels_of(m)->reset_any(sb, b);
}

/* §3.7: freeze_weights stops STDP, pruning and normalisation; intrinsic
 * plasticity continues unless every plasticity is frozen. */
static void sorn_freeze(bl_model *m, const int32_t *active, bool all)
{
    sorn_batch *sb = (sorn_batch *)m;
    bl_batch_freeze(m->slots, active, all, sb->plasticity, sb->plasticity + 1, 2);
}

/* ---- weights in any layout ------------------------------------------------ */

/* One real of the dtype at p as a double (exact for float). */
static double sorn_real_at(const void *p, bl_dtype dtype)
{
    if (dtype == BL_FLOAT32) {
        float v;
        memcpy(&v, p, sizeof v);
        return (double)v;
    }
    double v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Visits the synapses of slot b's initial mask where its layout (rows or
 * lanes, not SORN_LAYOUT_CANON) holds them: e = destination * N_E + source,
 * the weight's bytes, and whether the synapse is still masked. */
typedef void (*sorn_visit_fn)(void *ctx, size_t e, const void *w, bool m);

static void sorn_each_synapse(const sorn_batch *sb, size_t b, sorn_visit_fn visit, void *ctx)
{
    const size_t ne = sb->n_e, rs = bl_dtype_size(sb->base.dtype);
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    BL_ASSERT(sb->layout[b] != SORN_LAYOUT_CANON);
    if (sb->layout[b] == SORN_LAYOUT_LANES) {
        const sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
        const size_t nl = sb->lanes, l = sb->lane_of[b];
        for (size_t j = 0; j < ne; j++)
            for (size_t k = wr->ptr[j]; k < wr->ptr[j + 1]; k++) {
                const size_t at = (k * nl + l) * rs;
                visit(ctx, (size_t)wr->dst[k] * ne + j, (const char *)g->cw + at,
                      ((const uint8_t *)g->cm)[at] != 0);
            }
        return;
    }
    const size_t off = sb->nz_off[b];
    for (size_t j = 0; j < ne; j++)
        for (size_t k = wr->col_ptr[j]; k < wr->col_ptr[j + 1]; k++)
            if (wr->nz_dst[k] < ne)
                visit(ctx, (size_t)wr->nz_dst[k] * ne + j, (const char *)sb->cw + (off + k) * rs,
                      ((const uint8_t *)sb->cm)[(off + k) * rs] != 0);
}

/* The value of an entry outside the initial mask while slot b is in rows or
 * lanes: +0 once a plastic frame cleared them, else w_ee0's (+0 unless the
 * dense copy exists). NULL: +0 everywhere. */
static const void *sorn_outside(const sorn_batch *sb, size_t b)
{
    return sb->cleared[b] ? NULL : sorn_w0_of(sb, b)->dense;
}

typedef struct sorn_dense_ctx {
    char *w;
    uint8_t *m;
    size_t rs;
} sorn_dense_ctx;

static void sorn_visit_dense(void *ctx, size_t e, const void *w, bool m)
{
    sorn_dense_ctx *c = ctx;
    memcpy(c->w + e * c->rs, w, c->rs);
    c->m[e] = m;
}

typedef struct sorn_export_ctx {
    double *w, *m;
    bl_dtype dtype;
} sorn_export_ctx;

static void sorn_visit_export(void *ctx, size_t e, const void *w, bool m)
{
    sorn_export_ctx *c = ctx;
    c->w[e] = sorn_real_at(w, c->dtype);
    c->m[e] = m;
}

/* Slot b's dense weights and mask (kept once made: a slot that needed them
 * may again), and its wiring's dense initial mask; false when out of
 * memory. */
static bool sorn_dense_make(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, nee = ne * ne, rs = bl_dtype_size(sb->base.dtype);
    sorn_wiring *wr = &sb->wr[sb->wiring_of[b]];
    if (!wr->mask0) {
        wr->mask0 = bl_calloc(nee, 1);
        if (!wr->mask0)
            return false;
        for (size_t j = 0; j < ne; j++)
            for (size_t k = wr->ptr[j]; k < wr->ptr[j + 1]; k++)
                wr->mask0[(size_t)wr->dst[k] * ne + j] = 1;
    }
    if (!sb->dense_w[b])
        sb->dense_w[b] = bl_calloc(nee, rs);
    if (!sb->dense_m[b])
        sb->dense_m[b] = bl_calloc(nee, 1);
    return sb->dense_w[b] && sb->dense_m[b];
}

/* Makes slot b's dense weights authoritative, whatever its layout: the
 * entries outside the initial mask as they stand (sorn_outside), the
 * others from its rows or lanes; a lane slot's O(N) state goes back to its
 * slot-major blocks. False when out of memory (nothing changed then). */
static bool sorn_to_canonical(sorn_batch *sb, size_t b)
{
    if (sb->layout[b] == SORN_LAYOUT_CANON)
        return true;
    if (!sorn_dense_make(sb, b))
        return false;
    const size_t nee = sb->n_e * sb->n_e, rs = bl_dtype_size(sb->base.dtype);
    sorn_dense_ctx c = {sb->dense_w[b], sb->dense_m[b], rs};
    const void *outside = sorn_outside(sb, b);
    if (outside)
        memcpy(c.w, outside, nee * rs);
    else
        memset(c.w, 0, nee * rs); /* +0 in IEEE 754 */
    memset(c.m, 0, nee);
    sorn_each_synapse(sb, b, sorn_visit_dense, &c);
    if (sb->layout[b] == SORN_LAYOUT_LANES)
        sorn_lanes_sync(sb, b);
    sb->layout[b] = SORN_LAYOUT_CANON;
    return true;
}

/* w_ee and ee_mask of slot b in canonical order, as doubles, whatever its
 * layout (snapshots; nothing of the batch changes). */
static void sorn_export_synapses(const sorn_batch *sb, size_t b, double *w, double *m)
{
    const size_t nee = sb->n_e * sb->n_e, rs = bl_dtype_size(sb->base.dtype);
    const bl_dtype dtype = sb->base.dtype;
    if (sb->layout[b] == SORN_LAYOUT_CANON) {
        for (size_t e = 0; e < nee; e++) {
            w[e] = sorn_real_at((const char *)sb->dense_w[b] + e * rs, dtype);
            m[e] = sb->dense_m[b][e];
        }
        return;
    }
    const void *outside = sorn_outside(sb, b);
    for (size_t e = 0; e < nee; e++) {
        w[e] = outside ? sorn_real_at((const char *)outside + e * rs, dtype) : 0.0;
        m[e] = 0;
    }
    sorn_export_ctx c = {w, m, dtype};
    sorn_each_synapse(sb, b, sorn_visit_export, &c);
}

/* Slot b's initial weights in the layout they qualify for: its rows or
 * lanes straight from the shared initial values when every entry outside
 * the initial mask is ±0 (what sorn_from_canonical would choose for them:
 * not cleared, finite), else dense from w_ee0 and the initial mask. False
 * when out of memory for the dense weights. */
static bool sorn_load_initial(sorn_batch *sb, size_t b)
{
    const size_t ne = sb->n_e, nee = ne * ne, rs = bl_dtype_size(sb->base.dtype);
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    const sorn_w0 *iw = sorn_w0_of(sb, b);
    const char *cw0 = iw->cw;
    if (!sb->reference && iw->zeros) {
        sb->cleared[b] = 0;
        sb->wild[b] = 0; /* validated finite */
        if (sb->lane_group[b] != SORN_LNONE) {
            sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
            const size_t nl = sb->lanes, l = sb->lane_of[b];
            for (size_t k = 0; k < wr->ptr[ne]; k++) {
                memcpy((char *)g->cw + (k * nl + l) * rs, cw0 + k * rs, rs);
                memset((char *)g->cm + (k * nl + l) * rs, 0xff, rs);
            }
            sorn_lanes_put_state(sb, b);
            sb->layout[b] = SORN_LAYOUT_LANES;
            return true;
        }
        char *cw = (char *)sb->cw + sb->nz_off[b] * rs;
        char *cm = (char *)sb->cm + sb->nz_off[b] * rs;
        for (size_t j = 0; j < ne; j++) {
            size_t u = wr->ptr[j];
            for (size_t k = wr->col_ptr[j]; k < wr->col_ptr[j + 1]; k++) {
                /* Pads: weight +0, mask bit 0. */
                const bool syn = u < wr->ptr[j + 1];
                if (syn)
                    memcpy(cw + k * rs, cw0 + u++ * rs, rs);
                else
                    memset(cw + k * rs, 0, rs);
                memset(cm + k * rs, syn ? 0xff : 0, rs);
            }
        }
        sb->layout[b] = SORN_LAYOUT_SPARSE;
        return true;
    }
    if (!sorn_dense_make(sb, b))
        return false;
    char *w = sb->dense_w[b];
    if (iw->dense) {
        memcpy(w, iw->dense, nee * rs);
    } else {
        memset(w, 0, nee * rs);
        for (size_t j = 0; j < ne; j++)
            for (size_t k = wr->ptr[j]; k < wr->ptr[j + 1]; k++)
                memcpy(w + ((size_t)wr->dst[k] * ne + j) * rs, cw0 + k * rs, rs);
    }
    memcpy(sb->dense_m[b], wr->mask0, nee); /* pruned edges return */
    sb->layout[b] = SORN_LAYOUT_CANON;
    return true;
}

/* ---- snapshots ---------------------------------------------------------------- */

/* The w_ee, ee_mask and transposed fixed entries are written after the
 * typed copies (sorn_snapshot). */
static void sorn_export_later(const bl_model *m, size_t b, double *dst)
{
    (void)m;
    (void)b;
    (void)dst;
}

static bl_status sorn_snapshot(const bl_model *m, size_t b, bl_snapshot **out, bl_error *err)
{
    const sorn_batch *sb = (const sorn_batch *)m;
    const size_t ne = sb->n_e, ni = sb->n_i, n = m->nodes;
    const size_t nr = m->receptors, nout = m->effectors, rs = bl_dtype_size(m->dtype);
    const size_t nep = sb->ne_pad, nip = sb->ni_pad;
    const sorn_wiring *wr = sorn_wiring_of(sb, b);
    /* Every source below is the slot's own block (or its wiring's), so the
     * copies read "slot 0" of it. A lane slot's states live in its lane:
     * they are copied into a scratch block first, changing nothing. */
    const char *x = (const char *)sb->x + b * ne * rs;
    const char *px = (const char *)sb->prev_x + b * ne * rs;
    const char *te = (const char *)sb->t_e + b * ne * rs;
    const char *y = (const char *)sb->y + b * ni * rs;
    const char *py = (const char *)sb->prev_y + b * ni * rs;
    const char *drive = (const char *)sb->drive + b * n * rs;
    const int32_t *af = sb->adapt_finite + b * ne;
    char *tmp = NULL;
    int32_t *tmp_af = NULL;
    if (sb->layout[b] == SORN_LAYOUT_LANES) {
        tmp = bl_calloc(3 * ne + 2 * ni + n + 1, rs);
        tmp_af = bl_calloc(ne + 1, sizeof *tmp_af);
        if (!tmp || !tmp_af) {
            bl_free(tmp);
            bl_free(tmp_af);
            return bl_fail(err, BL_ENOMEM, "out of memory for a snapshot of SORN slot %zu", b);
        }
        x = tmp;
        px = x + ne * rs;
        te = px + ne * rs;
        y = te + ne * rs;
        py = y + ni * rs;
        drive = py + ni * rs;
        af = tmp_af;
        sorn_lanes_state(sb, b, (void *)x, (void *)px, (void *)te, (void *)y, (void *)py,
                         (void *)drive, tmp_af);
    }
    const bl_batch_field spec[] = {
        {"w_ee", 2, ne, ne, BL_BATCH_LAYOUT, NULL, false},
        {"ee_mask", 2, ne, ne, BL_BATCH_LAYOUT, NULL, true},
        {"c_e", 1, ne, 1, BL_BATCH_REAL, wr->c_e, false},
        {"w_ei", 2, ne, ni, BL_BATCH_LAYOUT, NULL, false},
        {"w_ie", 2, ni, ne, BL_BATCH_LAYOUT, NULL, false},
        {"w_eu", 2, ne, nr, BL_BATCH_LAYOUT, NULL, false},
        {"output_mask", 2, nout, ne, BL_BATCH_BYTE, wr->out_mask, true},
        {"t_e", 1, ne, 1, BL_BATCH_REAL, te, false},
        {"t_i", 1, ni, 1, BL_BATCH_REAL, wr->t_i, false},
        {"x", 1, ne, 1, BL_BATCH_REAL, x, false},
        {"y", 1, ni, 1, BL_BATCH_REAL, y, false},
        {"prev_x", 1, ne, 1, BL_BATCH_REAL, px, false},
        {"prev_y", 1, ni, 1, BL_BATCH_REAL, py, false},
        {"activity", 1, n, 1, BL_BATCH_REAL, (const char *)sb->activity + b * n * rs, false},
        {"drive", 1, n, 1, BL_BATCH_REAL, drive, false},
        {"effectors", 1, nout, 1, BL_BATCH_REAL, (const char *)sb->effectors + b * nout * rs,
         false},
        {"finite", 0, 1, 1, BL_BATCH_INT, sb->finite + b, true},
        {"adaptation_finite", 1, ne, 1, BL_BATCH_INT, af, true},
        {"plasticity", 1, 2, 1, BL_BATCH_INT, sb->plasticity + 2 * b, true},
        {"parameters", 1, SORN_NPARAM, 1, BL_BATCH_REAL,
         (const char *)sb->params + b * SORN_NPARAM * rs, false},
    };
    bl_snapshot *s = NULL;
    bl_status st =
        bl_batch_snapshot(m, 0, spec, sizeof spec / sizeof *spec, sorn_export_later, &s, err);
    bl_free(tmp);
    bl_free(tmp_af);
    if (st != BL_OK)
        return st;
    sorn_export_synapses(sb, b, s->arrays[0].data, s->arrays[1].data);
    double *wei = s->arrays[3].data, *wie = s->arrays[4].data, *weu = s->arrays[5].data;
    for (size_t i = 0; i < ne; i++) {
        for (size_t k = 0; k < ni; k++) {
            wei[i * ni + k] = sorn_real_at((const char *)wr->wei_p + (k * nep + i) * rs, m->dtype);
            wie[k * ne + i] = sorn_real_at((const char *)wr->wie_p + (i * nip + k) * rs, m->dtype);
        }
        for (size_t q = 0; q < nr; q++)
            weu[i * nr + q] = sorn_real_at((const char *)wr->weu_t + (q * ne + i) * rs, m->dtype);
    }
    *out = s;
    return BL_OK;
}

static const bl_model_ops sorn_ops = {
    .destroy = sorn_destroy,
    .step = sorn_step,
    .reset = sorn_reset,
    .freeze = sorn_freeze,
    .snapshot = sorn_snapshot,
};

/* ---- kernels and layouts ------------------------------------------------- */

bool bl_sorn_set_reference_kernel(bl_model *m, bool on)
{
    BL_ASSERT(m->kind == BL_MODEL_SORN);
    sorn_batch *sb = (sorn_batch *)m;
    const sorn_kernels *k = sorn_kernels_of(m);
    /* Out of memory, the slots go back to where they qualify and the kernel
     * stays as it was. */
    bool ok = true;
    for (size_t b = 0; b < m->slots && ok; b++)
        ok = sorn_to_canonical(sb, b);
    if (ok)
        sb->reference = on;
    for (size_t b = 0; b < m->slots; b++)
        k->from_canonical(sb, b);
    return ok;
}

void bl_sorn_path_counts(const bl_model *m, bl_sorn_paths *out)
{
    BL_ASSERT(m->kind == BL_MODEL_SORN);
    *out = ((const sorn_batch *)m)->paths;
}

/* ---- wirings ---------------------------------------------------------------- */

static size_t sorn_round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* The rows of an initial mask (as given, 0/1 doubles): unpadded and padded
 * to whole vectors of SORN_VBYTES; false when out of memory or N_E does
 * not fit the 32-bit destinations. */
static bool sorn_wiring_rows(const sorn_batch *sb, const double *ee_mask, sorn_wiring *wr)
{
    const size_t ne = sb->n_e, vl = SORN_VBYTES / bl_dtype_size(sb->base.dtype);
    if (ne > UINT32_MAX - 1)
        return false;
    wr->ptr = bl_calloc(ne + 1, sizeof *wr->ptr);
    wr->col_ptr = bl_calloc(ne + 1, sizeof *wr->col_ptr);
    if (!wr->ptr || !wr->col_ptr)
        return false;
    size_t nz = 0, nzp = 0; /* at most N_E * (N_E + vl), so no wrap */
    for (size_t j = 0; j < ne; j++) {
        wr->ptr[j] = nz;
        wr->col_ptr[j] = nzp;
        size_t len = 0;
        for (size_t i = 0; i < ne; i++)
            len += ee_mask[i * ne + j] != 0.0;
        nz += len;
        nzp += sorn_round_up(len, vl);
    }
    wr->ptr[ne] = nz;
    wr->col_ptr[ne] = nzp;
    /* One spare entry keeps the allocations non-empty. */
    wr->dst = bl_calloc(nz + 1, sizeof *wr->dst);
    wr->nz_dst = bl_calloc(nzp + 1, sizeof *wr->nz_dst);
    if (!wr->dst || !wr->nz_dst)
        return false;
    for (size_t j = 0; j < ne; j++) {
        size_t k = wr->ptr[j], c = wr->col_ptr[j];
        for (size_t i = 0; i < ne; i++)
            if (ee_mask[i * ne + j] != 0.0) {
                wr->dst[k++] = (uint32_t)i;
                wr->nz_dst[c++] = (uint32_t)i;
            }
        while (c < wr->col_ptr[j + 1])
            wr->nz_dst[c++] = (uint32_t)ne;
    }
    return true;
}

/* The readout lists of a wiring's output mask: the E units each effector
 * reads, ascending. */
static bool sorn_wiring_readout(const sorn_batch *sb, sorn_wiring *wr)
{
    const size_t ne = sb->n_e, nout = sb->base.effectors;
    wr->ro_ptr = bl_calloc(nout + 1, sizeof *wr->ro_ptr);
    if (!wr->ro_ptr)
        return false;
    for (size_t k = 0; k < nout; k++) {
        wr->ro_ptr[k + 1] = wr->ro_ptr[k];
        for (size_t i = 0; i < ne; i++)
            wr->ro_ptr[k + 1] += wr->out_mask[k * ne + i] != 0;
    }
    wr->ro_unit = bl_calloc(wr->ro_ptr[nout] + 1, sizeof *wr->ro_unit);
    if (!wr->ro_unit)
        return false;
    for (size_t k = 0, c = 0; k < nout; k++)
        for (size_t i = 0; i < ne; i++)
            if (wr->out_mask[k * ne + i])
                wr->ro_unit[c++] = (uint32_t)i;
    return true;
}

/* Whether two wirings are the same: the same initial mask (so the same
 * rows) and the same fixed arrays, bit for bit after the cast (pads are +0
 * in both). Slots of one wiring may differ in everything else. */
static bool sorn_same_wiring(const sorn_batch *sb, const sorn_wiring *a, const sorn_wiring *c)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t nout = sb->base.effectors, rs = bl_dtype_size(sb->base.dtype);
    if (a->ptr[ne] != c->ptr[ne])
        return false;
    const struct {
        const void *p, *q;
        size_t bytes;
    } f[] = {
        {a->ptr, c->ptr, (ne + 1) * sizeof *a->ptr},
        {a->dst, c->dst, a->ptr[ne] * sizeof *a->dst},
        {a->c_e, c->c_e, ne * rs},
        {a->t_i, c->t_i, ni * rs},
        {a->wei_p, c->wei_p, ni * sb->ne_pad * rs},
        {a->wie_p, c->wie_p, ne * sb->ni_pad * rs},
        {a->weu_t, c->weu_t, nr * ne * rs},
        {a->out_mask, c->out_mask, nout * ne},
    };
    for (size_t k = 0; k < sizeof f / sizeof *f; k++)
        if (memcmp(f[k].p, f[k].q, f[k].bytes) != 0)
            return false;
    return true;
}

static bool sorn_same_w0(const sorn_batch *sb, const sorn_w0 *a, const sorn_w0 *c, size_t nnz)
{
    const size_t nee = sb->n_e * sb->n_e, rs = bl_dtype_size(sb->base.dtype);
    if (a->wiring != c->wiring || memcmp(a->cw, c->cw, nnz * rs) != 0)
        return false;
    if (!a->dense || !c->dense)
        return !a->dense && !c->dense;
    return memcmp(a->dense, c->dense, nee * rs) == 0;
}

/* Slot b's wiring and initial weights: earlier equal ones, or these (the
 * batch takes them over; either way *wr and *iw end up empty). False when
 * out of memory. */
static bool sorn_attach(sorn_batch *sb, size_t b, sorn_wiring *wr, sorn_w0 *iw)
{
    const size_t nb = sb->base.slots;
    BL_ASSERT(nb <= INT32_MAX);
    if (!sb->wr) {
        sb->wr = bl_calloc(nb, sizeof *sb->wr);
        sb->w0s = bl_calloc(nb, sizeof *sb->w0s);
        if (!sb->wr || !sb->w0s)
            return false;
    }
    size_t w = 0;
    while (w < sb->nwr && !sorn_same_wiring(sb, &sb->wr[w], wr))
        w++;
    if (w == sb->nwr) {
        sb->wr[sb->nwr++] = *wr;
        *wr = (sorn_wiring){0};
    } else {
        sorn_wiring_free(wr);
    }
    iw->wiring = w;
    size_t v = 0;
    while (v < sb->nw0 && !sorn_same_w0(sb, &sb->w0s[v], iw, sb->wr[w].ptr[sb->n_e]))
        v++;
    if (v == sb->nw0) {
        sb->w0s[sb->nw0++] = *iw;
        *iw = (sorn_w0){0};
    } else {
        sorn_w0_free(iw);
    }
    sb->wiring_of[b] = (int32_t)w;
    sb->w0_of[b] = (int32_t)v;
    return true;
}

/* ---- lanes ------------------------------------------------------------------ */

/* Copies count values of rs bytes between a slot-major block (stride 1) and
 * lane l of a [count][L] block. */
static void sorn_to_lane(void *lane, size_t l, size_t nl, const void *slot, size_t count,
                         size_t rs)
{
    for (size_t v = 0; v < count; v++)
        memcpy((char *)lane + (v * nl + l) * rs, (const char *)slot + v * rs, rs);
}

static void sorn_from_lane(void *slot, const void *lane, size_t l, size_t nl, size_t count,
                           size_t rs)
{
    for (size_t v = 0; v < count; v++)
        memcpy((char *)slot + v * rs, (const char *)lane + (v * nl + l) * rs, rs);
}

static bool sorn_real_finite(const void *p, bl_dtype dtype)
{
    return isfinite(sorn_real_at(p, dtype));
}

/* Slot b's O(N) state from its slot-major blocks into its lane. */
static void sorn_lanes_put_state(sorn_batch *sb, size_t b)
{
    const size_t rs = bl_dtype_size(sb->base.dtype), nl = sb->lanes;
    const size_t ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes;
    sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
    const size_t l = sb->lane_of[b];
    sorn_to_lane(g->x, l, nl, (const char *)sb->x + b * ne * rs, ne, rs);
    sorn_to_lane(g->px, l, nl, (const char *)sb->prev_x + b * ne * rs, ne, rs);
    sorn_to_lane(g->te, l, nl, (const char *)sb->t_e + b * ne * rs, ne, rs);
    sorn_to_lane(g->y, l, nl, (const char *)sb->y + b * ni * rs, ni, rs);
    sorn_to_lane(g->py, l, nl, (const char *)sb->prev_y + b * ni * rs, ni, rs);
    sorn_to_lane(g->drive, l, nl, (const char *)sb->drive + b * n * rs, n, rs);
    for (size_t i = 0; i < ne; i++)
        memset((char *)g->af + (i * nl + l) * rs, sb->adapt_finite[b * ne + i] ? 0xff : 0, rs);
}

/* Slot b's O(N) state from its lane into the given blocks. */
static void sorn_lanes_state(const sorn_batch *sb, size_t b, void *x, void *px, void *te,
                             void *y, void *py, void *drive, int32_t *af)
{
    const size_t rs = bl_dtype_size(sb->base.dtype), nl = sb->lanes;
    const size_t ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes;
    const sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
    const size_t l = sb->lane_of[b];
    sorn_from_lane(x, g->x, l, nl, ne, rs);
    sorn_from_lane(px, g->px, l, nl, ne, rs);
    sorn_from_lane(te, g->te, l, nl, ne, rs);
    sorn_from_lane(y, g->y, l, nl, ni, rs);
    sorn_from_lane(py, g->py, l, nl, ni, rs);
    sorn_from_lane(drive, g->drive, l, nl, n, rs);
    for (size_t i = 0; i < ne; i++)
        af[i] = ((const uint8_t *)g->af)[(i * nl + l) * rs] != 0;
}

/* A lane slot's O(N) state back into its slot-major blocks. */
static void sorn_lanes_sync(sorn_batch *sb, size_t b)
{
    const size_t rs = bl_dtype_size(sb->base.dtype);
    const size_t ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes;
    sorn_lanes_state(sb, b, (char *)sb->x + b * ne * rs, (char *)sb->prev_x + b * ne * rs,
                     (char *)sb->t_e + b * ne * rs, (char *)sb->y + b * ni * rs,
                     (char *)sb->prev_y + b * ni * rs, (char *)sb->drive + b * n * rs,
                     sb->adapt_finite + b * ne);
}

/* A canonical slot's dense weights and its state into its lane (the layout
 * switch is the caller's); a non-finite weight marks it wild
 * (sorn_fast.h). */
static void sorn_lanes_load(sorn_batch *sb, size_t b)
{
    const size_t rs = bl_dtype_size(sb->base.dtype), nl = sb->lanes, ne = sb->n_e;
    sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
    const sorn_wiring *w = sorn_wiring_of(sb, b);
    const size_t l = sb->lane_of[b];
    const char *wee = sb->dense_w[b];
    const uint8_t *mask = sb->dense_m[b];
    bool wild = false;
    for (size_t j = 0; j < ne; j++)
        for (size_t k = w->ptr[j]; k < w->ptr[j + 1]; k++) {
            const size_t e = (size_t)w->dst[k] * ne + j;
            memcpy((char *)g->cw + (k * nl + l) * rs, wee + e * rs, rs);
            memset((char *)g->cm + (k * nl + l) * rs, mask[e] ? 0xff : 0, rs);
            wild = wild || !sorn_real_finite(wee + e * rs, sb->base.dtype);
        }
    sorn_lanes_put_state(sb, b);
    sb->wild[b] = wild;
}

/* The per-slot parts of the fast kernel once every slot is filled: each
 * wiring's first slot and slot count, which slots are lanes, each slot's
 * own rows (none for lane slots), the frame scratch of slots on their
 * own. The layouts are
 * chosen once the lanes exist (sorn_load_initial). */
static bool sorn_build_fast(sorn_batch *sb)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nb = sb->base.slots;
    const size_t rs = bl_dtype_size(sb->base.dtype);
    if (sb->fill_failed)
        return false;
    for (size_t b = 0; b < nb; b++) {
        sorn_wiring *wr = &sb->wr[sb->wiring_of[b]];
        if (wr->count++ == 0)
            wr->first = b;
    }
    /* Only a slot on its own steps its own padded rows, with the frame
     * scratch below; a shared wiring's slots step lanes. */
    bool own = false;
    for (size_t w = 0; w < sb->nwr; w++) {
        sorn_wiring *wr = &sb->wr[w];
        own = own || wr->count == 1;
        if (wr->count > 1) {
            bl_free(wr->col_ptr);
            bl_free(wr->nz_dst);
            wr->col_ptr = NULL;
            wr->nz_dst = NULL;
        }
    }
    sb->lane_group = bl_calloc(nb, sizeof *sb->lane_group);
    sb->lane_of = bl_calloc(nb, sizeof *sb->lane_of);
    sb->layout = bl_calloc(nb, 1);
    sb->cleared = bl_calloc(nb, 1);
    sb->wild = bl_calloc(nb, 1);
    sb->dense_w = bl_calloc(nb, sizeof *sb->dense_w);
    sb->dense_m = bl_calloc(nb, sizeof *sb->dense_m);
    sb->nz_off = bl_calloc(nb + 1, sizeof *sb->nz_off);
    if (!sb->lane_group || !sb->lane_of || !sb->layout || !sb->cleared || !sb->wild ||
        !sb->dense_w || !sb->dense_m || !sb->nz_off)
        return false;
    if (own) {
        sb->sc_inp = bl_calloc(ne + 1, rs);
        sb->sc_exc = bl_calloc(ne + 1, rs);
        sb->sc_inh = bl_calloc(ne, rs);
        sb->sc_tot = bl_calloc(2 * (ne + 1), rs);
        sb->sc_xp = bl_calloc(2 * (ne + 1), rs);
        sb->sc_scale = bl_calloc(ne + 1, rs);
        sb->sc_idr = bl_calloc(ni, rs);
        sb->sc_actx = bl_calloc(ne, sizeof *sb->sc_actx);
        sb->sc_acty = bl_calloc(ni, sizeof *sb->sc_acty);
        if (!sb->sc_inp || !sb->sc_exc || !sb->sc_inh || !sb->sc_tot || !sb->sc_xp ||
            !sb->sc_scale || !sb->sc_idr || !sb->sc_actx || !sb->sc_acty)
            return false;
    }
    size_t total = 0;
    for (size_t b = 0; b < nb; b++) {
        const sorn_wiring *wr = sorn_wiring_of(sb, b);
        /* Slots whose wiring another slot shares keep their synapses in
         * their lanes: no rows of their own. lane_group is the wiring's
         * first slot until sorn_lanes_build numbers the groups. */
        sb->lane_group[b] = wr->count > 1 ? wr->first : SORN_LNONE;
        sb->nz_off[b] = total;
        if (wr->count == 1)
            total += wr->col_ptr[ne]; /* at most B * N_E * (N_E + lanes), so no wrap */
    }
    sb->nz_off[nb] = total;
    sb->cw = bl_calloc(total + 1, rs);
    sb->cm = bl_calloc(total + 1, rs);
    return sb->cw && sb->cm;
}

/* The groups (each shared wiring's slots in ascending order, nl to a
 * group, the last one padded) with their lane state, and the scratch;
 * false when out of memory. */
static bool sorn_lanes_build(sorn_batch *sb, bl_isa isa)
{
    const size_t nb = sb->base.slots, ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes;
    const size_t nr = sb->base.receptors, rs = bl_dtype_size(sb->base.dtype);
    const size_t nl = sorn_lanes_width(isa, rs);
    BL_ASSERT(nl <= SORN_LMAX);
    const size_t nep = sb->ne_pad, nip = sb->ni_pad;
    sb->lanes = nl;
    sb->lane_step = sorn_lanes_kernel(isa, rs);
    size_t ng = 0;
    for (size_t w = 0; w < sb->nwr; w++)
        if (sb->wr[w].count > 1)
            ng += (sb->wr[w].count + nl - 1) / nl;
    if (ng == 0)
        return true;
    sb->groups = bl_calloc(ng, sizeof *sb->groups);
    if (!sb->groups)
        return false;
    /* Counted as they are filled, so that destroy frees what exists. */
    sorn_lscratch *c = &sb->lsc;
    c->exc = bl_calloc((ne + 1) * nl, rs);
    c->inp = bl_calloc((ne + 1) * nl, rs);
    c->tot = bl_calloc((ne + 1) * nl, rs);
    c->flag = bl_calloc((ne + 1) * nl, rs);
    c->scale = bl_calloc((ne + 1) * nl, rs);
    c->inh = bl_calloc(nl * nep, rs);
    c->idr = bl_calloc(nl * nip, rs);
    c->u = bl_calloc(nr * nl, rs);
    c->actx = bl_calloc(nl * ne, sizeof *c->actx);
    c->acty = bl_calloc(nl * ni, sizeof *c->acty);
    c->vis = bl_calloc(ne, sizeof *c->vis);
    if (!c->exc || !c->inp || !c->tot || !c->flag || !c->scale || !c->inh || !c->idr || !c->u ||
        !c->actx || !c->acty || !c->vis)
        return false;
    for (size_t b = 0; b < nb; b++) {
        const size_t wi = (size_t)sb->wiring_of[b], nz = sb->wr[wi].ptr[ne];
        if (sb->wr[wi].first != b || sb->wr[wi].count < 2)
            continue;
        size_t lane = nl;
        for (size_t s = b; s < nb; s++) {
            if ((size_t)sb->wiring_of[s] != wi)
                continue;
            if (lane == nl) {
                sorn_lgroup *g = &sb->groups[sb->ngroups++];
                g->wiring = wi;
                for (size_t l = 0; l < SORN_LMAX; l++)
                    g->slot[l] = SORN_LNONE;
                g->cw = bl_calloc(nz * nl, rs);
                g->cm = bl_calloc(nz * nl, rs);
                g->x = bl_calloc(ne * nl, rs);
                g->px = bl_calloc(ne * nl, rs);
                g->te = bl_calloc(ne * nl, rs);
                g->af = bl_calloc(ne * nl, rs);
                g->y = bl_calloc(ni * nl, rs);
                g->py = bl_calloc(ni * nl, rs);
                g->drive = bl_calloc(n * nl, rs);
                if (!g->cw || !g->cm || !g->x || !g->px || !g->te || !g->af || !g->y ||
                    !g->py || !g->drive)
                    return false;
                lane = 0;
            }
            sb->groups[sb->ngroups - 1].slot[lane] = s;
            sb->lane_group[s] = sb->ngroups - 1;
            sb->lane_of[s] = lane++;
        }
    }
    return true;
}

/* ---- creation --------------------------------------------------------------- */

/* The real arrays of an initial state with their element counts, in the
 * order of §3.3's table. */
typedef struct sorn_field {
    const char *name;
    const double *p;
    size_t count;
    bool binary; /* 0/1 before conversion */
} sorn_field;

enum { SORN_NFIELDS = 11 };

static void sorn_fields(const bl_sorn_init *in, sorn_field out[SORN_NFIELDS])
{
    const size_t ne = in->n_e, ni = in->n - in->n_e;
    size_t k = 0;
    out[k++] = (sorn_field){"w_ee", in->w_ee, ne * ne, false};
    out[k++] = (sorn_field){"ee_mask", in->ee_mask, ne * ne, true};
    out[k++] = (sorn_field){"c_e", in->c_e, ne, false};
    out[k++] = (sorn_field){"w_ei", in->w_ei, ne * ni, false};
    out[k++] = (sorn_field){"w_ie", in->w_ie, ni * ne, false};
    out[k++] = (sorn_field){"w_eu", in->w_eu, ne * in->r, false};
    out[k++] = (sorn_field){"output_mask", in->output_mask, in->e * ne, true};
    out[k++] = (sorn_field){"t_e", in->t_e, ne, false};
    out[k++] = (sorn_field){"t_i", in->t_i, ni, false};
    out[k++] = (sorn_field){"x", in->x, ne, true};
    out[k++] = (sorn_field){"y", in->y, ni, true};
    BL_ASSERT(k == SORN_NFIELDS);
}

/* The shape each field must have, for messages. */
static void field_shape(const bl_sorn_init *in, const char *name, char *buf, size_t cap)
{
    const size_t ne = in->n_e, ni = in->n - in->n_e;
    if (!strcmp(name, "w_ee") || !strcmp(name, "ee_mask"))
        snprintf(buf, cap, "[%zu][%zu] (N_E x N_E)", ne, ne);
    else if (!strcmp(name, "w_ei"))
        snprintf(buf, cap, "[%zu][%zu] (N_E x N_I)", ne, ni);
    else if (!strcmp(name, "w_ie"))
        snprintf(buf, cap, "[%zu][%zu] (N_I x N_E)", ni, ne);
    else if (!strcmp(name, "w_eu"))
        snprintf(buf, cap, "[%zu][%zu] (N_E x R)", ne, in->r);
    else if (!strcmp(name, "output_mask"))
        snprintf(buf, cap, "[%zu][%zu] (E x N_E)", in->e, ne);
    else if (!strcmp(name, "t_i") || !strcmp(name, "y"))
        snprintf(buf, cap, "[%zu] (N_I)", ni);
    else
        snprintf(buf, cap, "[%zu] (N_E)", ne);
}

/* §3.3, for one initial state. In C the shapes follow from count, n_e, R
 * and E, so what can be wrong with a shape is a size out of range (n_e of 0
 * or above count, a product that does not fit) or a missing array; those
 * messages name the array and the shape it needs. Then every array finite,
 * then the 0/1 arrays binary before conversion. */
static bl_status validate_init(const void *initials, size_t slot, bl_error *err)
{
    const bl_sorn_init *in = ((const bl_sorn_init *const *)initials)[slot];
    if (!in)
        return bl_fail(err, BL_EVALUE, "initials[%zu] is missing", slot);
    bl_status st = bl_sorn_config_validate(&in->config, err);
    if (st != BL_OK) {
        bl_error_prefix(err, "initials[%zu]", slot);
        return st;
    }
    if (in->n == 0)
        return bl_fail(err, BL_EVALUE, "initials[%zu]: count must be a positive integer", slot);
    if (in->r == 0)
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: n_inputs must be a positive integer (w_eu is N_E x R)",
                       slot);
    if (in->e == 0)
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: n_effectors must be a positive integer (output_mask is E "
                       "x N_E)",
                       slot);
    if (in->n_e == 0 || in->n_e > in->n)
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: n_e must be in [1, count=%zu], got %zu (w_ee is N_E x "
                       "N_E, w_ei N_E x N_I, w_ie N_I x N_E with N_I = count - n_e)",
                       slot, in->n, in->n_e);
    size_t tmp;
    if (!bl_size_mul(in->n_e, in->n_e, &tmp) || !bl_size_mul(in->n_e, in->n - in->n_e, &tmp) ||
        !bl_size_mul(in->n_e, in->r, &tmp) || !bl_size_mul(in->n_e, in->e, &tmp))
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: dimensions count=%zu n_e=%zu R=%zu E=%zu are too large",
                       slot, in->n, in->n_e, in->r, in->e);
    sorn_field f[SORN_NFIELDS];
    sorn_fields(in, f);
    char shape[96];
    /* An empty inhibitory population may leave its arrays NULL. */
    for (size_t k = 0; k < SORN_NFIELDS; k++) {
        if (!f[k].p && f[k].count > 0) {
            field_shape(in, f[k].name, shape, sizeof shape);
            return bl_fail(err, BL_EVALUE, "initials[%zu]: %s must be a %s array, got none",
                           slot, f[k].name, shape);
        }
    }
    /* (Each loop that names the first bad entry runs only when its screen
     * finds one.) */
    for (size_t k = 0; k < SORN_NFIELDS; k++)
        if (!bl_batch_all_finite(f[k].p, f[k].count, BL_FLOAT64))
            for (size_t v = 0; v < f[k].count; v++)
                if (!isfinite(f[k].p[v]))
                    return bl_fail(err, BL_EVALUE,
                                   "initials[%zu]: %s must be finite (entry %zu is %.17g)",
                                   slot, f[k].name, v, f[k].p[v]);
    /* Conversion to a mask or a binary state would silently turn 0.1 into
     * 1 or 0. */
    for (size_t k = 0; k < SORN_NFIELDS; k++)
        if (f[k].binary && !bl_batch_all_binary(f[k].p, f[k].count))
            for (size_t v = 0; v < f[k].count; v++)
                if (!(f[k].p[v] == 0.0 || f[k].p[v] == 1.0))
                    return bl_fail(err, BL_EVALUE,
                                   "initials[%zu]: %s must be binary before conversion (entry "
                                   "%zu is %.17g)",
                                   slot, f[k].name, v, f[k].p[v]);
    return BL_OK;
}

/* §5.3: every number of the initial state, those the batch keeps and the
 * config numbers it does not (the reference casts the whole state), must
 * survive the cast to the dtype. */
static bl_status validate_cast(const void *initials, size_t slot, bl_dtype dtype, bl_error *err)
{
    const bl_sorn_init *in = ((const bl_sorn_init *const *)initials)[slot];
    bl_named_values scalars[BL_SORN_NUMERIC_FIELDS];
    bl_sorn_config_fields(&in->config, scalars);
    bl_status st = bl_check_cast(scalars, BL_SORN_NUMERIC_FIELDS, "config.", slot, dtype, err);
    if (st != BL_OK)
        return st;
    sorn_field f[SORN_NFIELDS];
    sorn_fields(in, f);
    bl_named_values arrays[SORN_NFIELDS];
    for (size_t k = 0; k < SORN_NFIELDS; k++)
        arrays[k] = (bl_named_values){f[k].name, f[k].p, f[k].count};
    /* validate_init, which bl_batch_create runs on every slot before this,
     * found these arrays finite, and the cast to float64 is the identity,
     * so only float32 can fail here. */
    if (dtype == BL_FLOAT64)
        return BL_OK;
    return bl_batch_check_cast(arrays, SORN_NFIELDS, "", slot, dtype, err);
}

/* Slot's dimensions against slot 0's. */
static bl_status same_dims(const void *initials, size_t slot, bl_error *err)
{
    const bl_sorn_init *const *all = initials;
    const bl_sorn_init *in = all[slot], *first = all[0];
    if (in->n != first->n || in->r != first->r || in->e != first->e || in->n_e != first->n_e)
        return bl_fail(err, BL_EVALUE,
                       "every slot of a batch needs the same dimensions: initials[%zu] has "
                       "count=%zu R=%zu E=%zu N_E=%zu, initials[0] has count=%zu R=%zu "
                       "E=%zu N_E=%zu",
                       slot, in->n, in->r, in->e, in->n_e, first->n, first->r, first->e,
                       first->n_e);
    return BL_OK;
}

static void sorn_ports(bl_model *m, const void *initials)
{
    const bl_sorn_init *first = *(const bl_sorn_init *const *)initials;
    sorn_batch *sb = (sorn_batch *)m;
    m->nodes = first->n;
    m->receptors = first->r;
    m->effectors = first->e;
    sb->n_e = first->n_e;
    sb->n_i = first->n - first->n_e;
    sb->ne_pad = sorn_round_up(sb->n_e, SORN_LMAX);
    sb->ni_pad = sorn_round_up(sb->n_i, SORN_LMAX);
}

static void sorn_fill(bl_model *m, size_t slot, const void *initials)
{
    const bl_sorn_init *in = ((const bl_sorn_init *const *)initials)[slot];
    sorn_kernels_of(m)->fill_slot((sorn_batch *)m, slot, in);
}

static bool sorn_finish(bl_model *m)
{
    sorn_batch *sb = (sorn_batch *)m;
    if (!sorn_build_fast(sb))
        return false;
    m->effector_view = sb->effectors;
    m->activity_view = sb->activity;
    m->finite_view = sb->finite;
    return true;
}

/* Positional, in bl_batch_family's order: name, kind, ops and size; the
 * checks; ports, arrays, fill and finish. */
static const bl_batch_family sorn_family = {
    "SORN", BL_MODEL_SORN, &sorn_ops, sizeof(sorn_batch),
    validate_init, same_dims, validate_cast,
    sorn_ports, sorn_arrays, sorn_fill, sorn_finish,
};

bl_status bl_model_create_sorn(const bl_sorn_init *const *initials, size_t nslots,
                               bl_dtype dtype, bl_model **out, bl_error *err)
{
    *out = NULL;
    bl_isa isa;
    bl_status st = bl_isa_select(&isa, err);
    if (st != BL_OK)
        return st;
    st = bl_batch_create(&sorn_family, initials, nslots, dtype, out, err);
    if (st != BL_OK)
        return st;
    sorn_batch *sb = (sorn_batch *)*out;
    bool ok = sorn_lanes_build(sb, isa);
    for (size_t b = 0; b < nslots && ok; b++)
        ok = sorn_load_initial(sb, b);
    if (!ok) {
        sorn_destroy(*out);
        *out = NULL;
        return bl_fail(err, BL_ENOMEM, "out of memory for the lanes of a SORN batch of %zu slots",
                       nslots);
    }
    return BL_OK;
}
