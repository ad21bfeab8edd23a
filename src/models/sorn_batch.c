/* SORN model batches (spec/models.md §1, §3.3, §3.5–§3.8, §5.3, §5.5):
 * creation with the initial-state and precision-cast validation, the
 * float64 and float32 frames, reset, freezes and snapshots.
 *
 * Storage is plain and slot-major: every state array is [B][...] with one
 * contiguous block per slot, matrices in canonical [destination][source]
 * order (output_mask [effector][E unit]), reals in the batch dtype (void
 * pointers typed by the kernel instantiation), masks as bytes, flags as
 * int32. Arrays of the inhibitory population have zero width when N_I = 0;
 * the allocator pads an empty request to one value, loops run over N_I and
 * snapshots report the true zero width. */
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

typedef struct sorn_batch {
    bl_model base;
    size_t n_e, n_i;
    /* Reals of the dtype. */
    void *w_ee;                 /* [B][N_E][N_E] */
    void *c_e;                  /* [B][N_E] */
    void *w_ei;                 /* [B][N_E][N_I] */
    void *w_ie;                 /* [B][N_I][N_E] */
    void *w_eu;                 /* [B][N_E][R] */
    void *t_e, *x, *prev_x;     /* [B][N_E] */
    void *t_i, *y, *prev_y;     /* [B][N_I] */
    void *activity, *drive;     /* [B][N] */
    void *effectors;            /* [B][E] */
    void *params;               /* [B][SORN_NPARAM] */
    void *w_ee0, *t_e0, *x0, *y0; /* reset copies */
    /* Bytes (0/1). */
    uint8_t *ee_mask, *ee_mask0; /* [B][N_E][N_E] */
    uint8_t *out_mask;           /* [B][E][N_E] */
    /* int32. */
    int32_t *finite;       /* [B] */
    int32_t *adapt_finite; /* [B][N_E] */
    int32_t *plasticity;   /* [B][2]: STDP/pruning/normalisation, intrinsic */
    int32_t *learn_on;     /* [B]: the value reset restores to both flags */

    /* The fast kernel (sorn_fast.h). Owned separately from the arrays
     * above, which are the model state proper. */
    bool reference;          /* step with the reference kernel */
    uint8_t *layout;         /* [B] SORN_LAYOUT_* */
    uint8_t *cleared;        /* [B] weights outside the initial mask are all +0 */
    uint8_t *wild;           /* [B] some compressed weight may be non-finite */
    /* Rows padded to whole vectors (SORN_VBYTES): pads have destination
     * N_E (a scratch unit), weight +0 and mask bit 0. */
    size_t *nz_off;          /* [B+1] start of each slot's compressed entries */
    size_t *col_ptr;         /* [B][N_E+1] per source, offsets within the slot */
    uint32_t *nz_dst;        /* [nnz] destination of each entry (ascending per source) */
    void *cw;                /* [nnz] weights of the entries (sparse layout) */
    void *cm;                /* [nnz] their mask bits as lane masks: integers of the
                              * dtype's width, all ones (masked) or 0 */
    void *wei_t;             /* [B][N_I][N_E] w_ei transposed */
    void *wie_t;             /* [B][N_E][N_I] w_ie transposed */
    void *weu_t;             /* [B][R][N_E] w_eu transposed */
    /* The non-zero input weights of each receptor, padded like the rows:
     * receptor q of slot b reaches in_unit[c] (ascending) with weight
     * in_w[c] for c in [in_ptr[b][q], in_ptr[b][q+1]). */
    size_t *in_ptr;          /* [B][R+1] */
    uint32_t *in_unit;       /* [padded input links of the batch] */
    void *in_w;              /* [padded input links of the batch] reals */
    size_t *ro_ptr;          /* [B][E+1] effector k's readout list, absolute */
    uint32_t *ro_unit;       /* [readout links] the E units read, ascending */
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
    size_t nwirings, ngroups;
    sorn_lwiring *wirings;
    sorn_lgroup *groups;
    sorn_lscratch lsc;
    sorn_lstep_fn lane_step;
    bl_sorn_paths paths;
} sorn_batch;

static void sorn_lanes_load(sorn_batch *sb, size_t b);
static void sorn_lanes_sync(sorn_batch *sb, size_t b);

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
    void (*fill_transposed)(sorn_batch *sb, size_t b);
    void (*reset_any)(sorn_batch *sb, size_t b);
    void (*to_canonical)(sorn_batch *sb, size_t b);
    bool (*from_canonical)(sorn_batch *sb, size_t b);
    void (*export_w_ee)(const sorn_batch *sb, size_t b, double *dst);
} sorn_kernels;

static const sorn_kernels sorn_kernels_f64 = {
    sorn_fill_slot_f64, sorn_fill_transposed_f64,
    sorn_reset_any_f64, sorn_to_canonical_f64,
    sorn_from_canonical_f64, sorn_export_w_ee_f64,
};
static const sorn_kernels sorn_kernels_f32 = {
    sorn_fill_slot_f32, sorn_fill_transposed_f32,
    sorn_reset_any_f32, sorn_to_canonical_f32,
    sorn_from_canonical_f32, sorn_export_w_ee_f32,
};

static const sorn_kernels *sorn_kernels_of(const bl_model *m)
{
    return m->dtype == BL_FLOAT32 ? &sorn_kernels_f32 : &sorn_kernels_f64;
}

/* ---- storage ---------------------------------------------------------------- */

enum { SORN_NARRAYS = 26 };
_Static_assert(SORN_NARRAYS <= BL_BATCH_MAX_ARRAYS, "a SORN batch lists too many arrays");

/* Every owned array, so that allocation and release walk one list. The
 * products are overflow-checked by the caller. */
static size_t sorn_arrays(bl_model *m, bl_batch_array *out)
{
    sorn_batch *sb = (sorn_batch *)m;
    const size_t ne = sb->n_e, ni = sb->n_i, n = m->nodes;
    const size_t nr = m->receptors, nout = m->effectors;
    size_t k = 0;
#define REAL_ARRAY(field, count) out[k++] = (bl_batch_array){&sb->field, NULL, NULL, (count)}
#define BYTE_ARRAY(field, count) out[k++] = (bl_batch_array){NULL, &sb->field, NULL, (count)}
#define INT_ARRAY(field, count) out[k++] = (bl_batch_array){NULL, NULL, &sb->field, (count)}
    REAL_ARRAY(w_ee, ne * ne);
    REAL_ARRAY(c_e, ne);
    REAL_ARRAY(w_ei, ne * ni);
    REAL_ARRAY(w_ie, ni * ne);
    REAL_ARRAY(w_eu, ne * nr);
    REAL_ARRAY(t_e, ne);
    REAL_ARRAY(x, ne);
    REAL_ARRAY(prev_x, ne);
    REAL_ARRAY(t_i, ni);
    REAL_ARRAY(y, ni);
    REAL_ARRAY(prev_y, ni);
    REAL_ARRAY(activity, n);
    REAL_ARRAY(drive, n);
    REAL_ARRAY(effectors, nout);
    REAL_ARRAY(params, SORN_NPARAM);
    REAL_ARRAY(w_ee0, ne * ne);
    REAL_ARRAY(t_e0, ne);
    REAL_ARRAY(x0, ne);
    REAL_ARRAY(y0, ni);
    BYTE_ARRAY(ee_mask, ne * ne);
    BYTE_ARRAY(ee_mask0, ne * ne);
    BYTE_ARRAY(out_mask, nout * ne);
    INT_ARRAY(finite, 1);
    INT_ARRAY(adapt_finite, ne);
    INT_ARRAY(plasticity, 2);
    INT_ARRAY(learn_on, 1);
#undef REAL_ARRAY
#undef BYTE_ARRAY
#undef INT_ARRAY
    BL_ASSERT(k == SORN_NARRAYS);
    return k;
}

static void sorn_destroy(bl_model *m)
{
    sorn_batch *sb = (sorn_batch *)m;
    for (size_t w = 0; sb->wirings && w < sb->nwirings; w++) {
        bl_free(sb->wirings[w].ptr);
        bl_free(sb->wirings[w].dst);
        bl_free(sb->wirings[w].wei_p);
        bl_free(sb->wirings[w].wie_p);
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
    bl_free(sb->wirings);
    bl_free(sb->groups);
    bl_free(sb->lane_group);
    bl_free(sb->lane_of);
    void *fast[] = {sb->layout,  sb->cleared, sb->wild,     sb->nz_off,  sb->col_ptr,
                    sb->nz_dst,  sb->cw,      sb->cm,       sb->wei_t,   sb->wie_t,
                    sb->weu_t,   sb->in_ptr,  sb->in_unit,  sb->in_w,    sb->ro_ptr,
                    sb->ro_unit, sb->sc_exc,  sb->sc_inp,   sb->sc_inh,
                    sb->sc_tot,  sb->sc_xp,   sb->sc_scale, sb->sc_idr,  sb->sc_actx,
                    sb->sc_acty};
    bl_batch_release(m, sorn_arrays, fast, sizeof fast / sizeof *fast);
}

/* ---- operations ----------------------------------------------------------- */

static size_t sorn_round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* One lane frame of every group (lanes not in SORN_LAYOUT_LANES sit out). */
static void sorn_step_lanes(sorn_batch *sb, const void *inputs, const int32_t *active)
{
    const size_t rs = bl_dtype_size(sb->base.dtype);
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t nout = sb->base.effectors;
    for (size_t k = 0; k < sb->ngroups; k++) {
        sorn_lgroup *g = &sb->groups[k];
        const sorn_lwiring *w = &sb->wirings[g->wiring];
        const size_t b0 = w->base;
        const sorn_lframe f = {
            .ne = ne,
            .ni = ni,
            .nr = nr,
            .nout = nout,
            .ne_pad = sorn_round_up(ne, sb->lanes),
            .ni_pad = sorn_round_up(ni, sb->lanes),
            .ptr = w->ptr,
            .dst = w->dst,
            .wei_p = w->wei_p,
            .wie_p = w->wie_p,
            .weu_t = (const char *)sb->weu_t + b0 * nr * ne * rs,
            .c_e = (const char *)sb->c_e + b0 * ne * rs,
            .t_i = (const char *)sb->t_i + b0 * ni * rs,
            .in_ptr = sb->in_ptr + b0 * (nr + 1),
            .in_unit = sb->in_unit,
            .in_w = sb->in_w,
            .ro_ptr = sb->ro_ptr + b0 * (nout + 1),
            .ro_unit = sb->ro_unit,
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

/* w_ee in canonical order: the fast kernel may hold it in compressed rows. */
static void sorn_export_layout(const bl_model *m, size_t b, double *dst)
{
    sorn_kernels_of(m)->export_w_ee((const sorn_batch *)m, b, dst);
}

static bl_status sorn_snapshot(const bl_model *m, size_t b, bl_snapshot **out, bl_error *err)
{
    const sorn_batch *sb = (const sorn_batch *)m;
    const size_t ne = sb->n_e, ni = sb->n_i, n = m->nodes;
    const size_t nr = m->receptors, nout = m->effectors;
    /* A lane slot's slot-major arrays are a copy of its lane, refreshed
     * here: that changes no state, only where it can be read. */
    if (sb->layout[b] == SORN_LAYOUT_LANES)
        sorn_lanes_sync((sorn_batch *)(uintptr_t)m, b);
    /* Storage is then canonical but for w_ee, so a snapshot is a typed
     * copy. */
    const bl_batch_field spec[] = {
        {"w_ee", 2, ne, ne, BL_BATCH_LAYOUT, NULL, false},
        {"ee_mask", 2, ne, ne, BL_BATCH_BYTE, sb->ee_mask, true},
        {"c_e", 1, ne, 1, BL_BATCH_REAL, sb->c_e, false},
        {"w_ei", 2, ne, ni, BL_BATCH_REAL, sb->w_ei, false},
        {"w_ie", 2, ni, ne, BL_BATCH_REAL, sb->w_ie, false},
        {"w_eu", 2, ne, nr, BL_BATCH_REAL, sb->w_eu, false},
        {"output_mask", 2, nout, ne, BL_BATCH_BYTE, sb->out_mask, true},
        {"t_e", 1, ne, 1, BL_BATCH_REAL, sb->t_e, false},
        {"t_i", 1, ni, 1, BL_BATCH_REAL, sb->t_i, false},
        {"x", 1, ne, 1, BL_BATCH_REAL, sb->x, false},
        {"y", 1, ni, 1, BL_BATCH_REAL, sb->y, false},
        {"prev_x", 1, ne, 1, BL_BATCH_REAL, sb->prev_x, false},
        {"prev_y", 1, ni, 1, BL_BATCH_REAL, sb->prev_y, false},
        {"activity", 1, n, 1, BL_BATCH_REAL, sb->activity, false},
        {"drive", 1, n, 1, BL_BATCH_REAL, sb->drive, false},
        {"effectors", 1, nout, 1, BL_BATCH_REAL, sb->effectors, false},
        {"finite", 0, 1, 1, BL_BATCH_INT, sb->finite, true},
        {"adaptation_finite", 1, ne, 1, BL_BATCH_INT, sb->adapt_finite, true},
        {"plasticity", 1, 2, 1, BL_BATCH_INT, sb->plasticity, true},
        {"parameters", 1, SORN_NPARAM, 1, BL_BATCH_REAL, sb->params, false},
    };
    return bl_batch_snapshot(m, b, spec, sizeof spec / sizeof *spec, sorn_export_layout, out,
                             err);
}

static const bl_model_ops sorn_ops = {
    .destroy = sorn_destroy,
    .step = sorn_step,
    .reset = sorn_reset,
    .freeze = sorn_freeze,
    .snapshot = sorn_snapshot,
};

/* ---- kernels and layouts ------------------------------------------------- */

void bl_sorn_set_reference_kernel(bl_model *m, bool on)
{
    BL_ASSERT(m->kind == BL_MODEL_SORN);
    sorn_batch *sb = (sorn_batch *)m;
    const sorn_kernels *k = sorn_kernels_of(m);
    for (size_t b = 0; b < m->slots; b++)
        k->to_canonical(sb, b);
    sb->reference = on;
    for (size_t b = 0; b < m->slots; b++)
        k->from_canonical(sb, b);
}

void bl_sorn_path_counts(const bl_model *m, bl_sorn_paths *out)
{
    BL_ASSERT(m->kind == BL_MODEL_SORN);
    *out = ((const sorn_batch *)m)->paths;
}

/* Whether slots a and b share a wiring: the same initial mask and the same
 * fixed arrays, bit for bit (their weights, thresholds, states and rates
 * may differ, each lane has its own). */
static bool sorn_same_wiring(const sorn_batch *sb, size_t a, size_t b)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nr = sb->base.receptors;
    const size_t nout = sb->base.effectors, rs = bl_dtype_size(sb->base.dtype);
    const struct {
        const void *p;
        size_t bytes;
    } f[] = {
        {sb->ee_mask0, ne * ne}, {sb->c_e, ne * rs},       {sb->w_ei, ne * ni * rs},
        {sb->w_ie, ni * ne * rs}, {sb->w_eu, ne * nr * rs}, {sb->out_mask, nout * ne},
        {sb->t_i, ni * rs},
    };
    for (size_t k = 0; k < sizeof f / sizeof *f; k++)
        if (memcmp((const char *)f[k].p + a * f[k].bytes, (const char *)f[k].p + b * f[k].bytes,
                   f[k].bytes) != 0)
            return false;
    return true;
}

/* Marks the slots whose wiring another slot shares: lane_group[b] is the
 * first slot of its wiring until sorn_lanes_build numbers the groups, and
 * SORN_LNONE for a slot on its own. */
static void sorn_find_wirings(sorn_batch *sb)
{
    const size_t nb = sb->base.slots;
    for (size_t b = 0; b < nb; b++)
        sb->lane_group[b] = SORN_LNONE;
    for (size_t b = 0; b < nb; b++) {
        if (sb->lane_group[b] != SORN_LNONE)
            continue;
        for (size_t c = b + 1; c < nb; c++)
            if (sb->lane_group[c] == SORN_LNONE && sorn_same_wiring(sb, b, c))
                sb->lane_group[b] = sb->lane_group[c] = b;
    }
}

/* The compressed source-major rows of every slot's initial mask (fixed:
 * pruning only clears bits of it and a reset restores it), padded to whole
 * vectors, the transposed fixed weights, the readout lists and the frame
 * scratch, then each slot's layout. */
static bool sorn_build_fast(sorn_batch *sb)
{
    const size_t ne = sb->n_e, ni = sb->n_i, nb = sb->base.slots, nee = ne * ne;
    const size_t nr = sb->base.receptors, nout = sb->base.effectors;
    const size_t rs = bl_dtype_size(sb->base.dtype);
    const size_t lanes = SORN_VBYTES / rs;
    size_t nptr, nei, ner, nro, nrp, total = 0, links = 0, nin = 0;
    if (ne > UINT32_MAX - 1 || !bl_size_mul(nb, ne + 1, &nptr) ||
        !bl_size_mul(nb, ne * ni, &nei) || !bl_size_mul(nb, ne * nr, &ner) ||
        !bl_size_mul(nb, nout + 1, &nro) || !bl_size_mul(nb, nr + 1, &nrp))
        return false;
    sb->in_ptr = bl_calloc(nrp, sizeof *sb->in_ptr);
    sb->sc_inp = bl_calloc(ne + 1, rs);
    sb->lane_group = bl_calloc(nb, sizeof *sb->lane_group);
    sb->lane_of = bl_calloc(nb, sizeof *sb->lane_of);
    if (!sb->in_ptr || !sb->sc_inp || !sb->lane_group || !sb->lane_of)
        return false;
    sorn_find_wirings(sb);
    sb->layout = bl_calloc(nb, 1);
    sb->cleared = bl_calloc(nb, 1);
    sb->wild = bl_calloc(nb, 1);
    sb->nz_off = bl_calloc(nb + 1, sizeof *sb->nz_off);
    sb->col_ptr = bl_calloc(nptr, sizeof *sb->col_ptr);
    sb->wei_t = bl_calloc(nei, rs);
    sb->wie_t = bl_calloc(nei, rs);
    sb->weu_t = bl_calloc(ner, rs);
    sb->ro_ptr = bl_calloc(nro, sizeof *sb->ro_ptr);
    sb->sc_exc = bl_calloc(ne + 1, rs);
    sb->sc_inh = bl_calloc(ne, rs);
    sb->sc_tot = bl_calloc(2 * (ne + 1), rs);
    sb->sc_xp = bl_calloc(2 * (ne + 1), rs);
    sb->sc_scale = bl_calloc(ne + 1, rs);
    sb->sc_idr = bl_calloc(ni, rs);
    sb->sc_actx = bl_calloc(ne, sizeof *sb->sc_actx);
    sb->sc_acty = bl_calloc(ni, sizeof *sb->sc_acty);
    if (!sb->layout || !sb->cleared || !sb->wild || !sb->nz_off || !sb->col_ptr ||
        !sb->wei_t || !sb->wie_t || !sb->weu_t || !sb->ro_ptr || !sb->sc_exc ||
        !sb->sc_inh || !sb->sc_tot || !sb->sc_xp || !sb->sc_scale || !sb->sc_idr ||
        !sb->sc_actx || !sb->sc_acty)
        return false;
    for (size_t b = 0; b < nb; b++) {
        const uint8_t *mask0 = sb->ee_mask0 + b * nee;
        size_t *ptr = sb->col_ptr + b * (ne + 1), c = 0;
        /* Lane slots keep their synapses in their lanes: empty rows. */
        const bool own = sb->lane_group[b] == SORN_LNONE;
        for (size_t j = 0; j < ne; j++) {
            ptr[j] = c;
            size_t len = 0;
            for (size_t i = 0; own && i < ne; i++)
                len += mask0[i * ne + j] != 0;
            c += (len + lanes - 1) / lanes * lanes;
        }
        ptr[ne] = c;
        sb->nz_off[b] = total;
        total += c; /* at most B * N_E * (N_E + lanes), so no wrap */
        const uint8_t *omask = sb->out_mask + b * nout * ne;
        size_t *ro = sb->ro_ptr + b * (nout + 1);
        ro[0] = links;
        for (size_t k = 0; k < nout; k++) {
            ro[k + 1] = ro[k];
            for (size_t i = 0; i < ne; i++)
                ro[k + 1] += omask[k * ne + i] != 0;
        }
        links = ro[nout];
        /* Padded lengths of the input lists (sorn_fill_transposed fills
         * them): at most N_E + lanes per receptor, so no wrap. */
        nin = bl_batch_column_lists(sb->w_eu, sb->base.dtype, b, ne, nr, lanes, nin,
                                    sb->in_ptr + b * (nr + 1));
    }
    sb->nz_off[nb] = total;
    /* One spare entry keeps the allocations non-empty. */
    sb->nz_dst = bl_calloc(total + 1, sizeof *sb->nz_dst);
    sb->cw = bl_calloc(total + 1, rs);
    sb->cm = bl_calloc(total + 1, rs);
    sb->ro_unit = bl_calloc(links + 1, sizeof *sb->ro_unit);
    sb->in_unit = bl_calloc(nin + 1, sizeof *sb->in_unit);
    sb->in_w = bl_calloc(nin + 1, rs);
    if (!sb->nz_dst || !sb->cw || !sb->cm || !sb->ro_unit || !sb->in_unit || !sb->in_w)
        return false;
    for (size_t b = 0; b < nb; b++) {
        const uint8_t *mask0 = sb->ee_mask0 + b * nee;
        const size_t *ptr = sb->col_ptr + b * (ne + 1);
        uint32_t *dst = sb->nz_dst + sb->nz_off[b];
        const bool own = sb->lane_group[b] == SORN_LNONE;
        for (size_t j = 0; j < ne; j++) {
            size_t c = ptr[j];
            for (size_t i = 0; own && i < ne; i++)
                if (mask0[i * ne + j])
                    dst[c++] = (uint32_t)i;
            while (c < ptr[j + 1])
                dst[c++] = (uint32_t)ne;
        }
        sorn_kernels_of(&sb->base)->fill_transposed(sb, b);
        sb->layout[b] = SORN_LAYOUT_CANON;
        /* Lane slots move in once their groups exist (sorn_lanes_build). */
        if (sb->lane_group[b] == SORN_LNONE)
            sorn_kernels_of(&sb->base)->from_canonical(sb, b);
    }
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
    if (dtype == BL_FLOAT32) {
        float v;
        memcpy(&v, p, sizeof v);
        return isfinite(v);
    }
    double v;
    memcpy(&v, p, sizeof v);
    return isfinite(v);
}

/* Slot b's canonical state into its lane (the layout switch is the
 * caller's); a non-finite weight marks it wild (sorn_fast.h). */
static void sorn_lanes_load(sorn_batch *sb, size_t b)
{
    const size_t rs = bl_dtype_size(sb->base.dtype), nl = sb->lanes;
    const size_t ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes, nee = ne * ne;
    sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
    const sorn_lwiring *w = &sb->wirings[g->wiring];
    const size_t l = sb->lane_of[b];
    const char *wee = (const char *)sb->w_ee + b * nee * rs;
    const uint8_t *mask = sb->ee_mask + b * nee;
    bool wild = false;
    for (size_t j = 0; j < ne; j++)
        for (size_t k = w->ptr[j]; k < w->ptr[j + 1]; k++) {
            const size_t e = (size_t)w->dst[k] * ne + j;
            memcpy((char *)g->cw + (k * nl + l) * rs, wee + e * rs, rs);
            memset((char *)g->cm + (k * nl + l) * rs, mask[e] ? 0xff : 0, rs);
            wild = wild || !sorn_real_finite(wee + e * rs, sb->base.dtype);
        }
    sorn_to_lane(g->x, l, nl, (const char *)sb->x + b * ne * rs, ne, rs);
    sorn_to_lane(g->px, l, nl, (const char *)sb->prev_x + b * ne * rs, ne, rs);
    sorn_to_lane(g->te, l, nl, (const char *)sb->t_e + b * ne * rs, ne, rs);
    sorn_to_lane(g->y, l, nl, (const char *)sb->y + b * ni * rs, ni, rs);
    sorn_to_lane(g->py, l, nl, (const char *)sb->prev_y + b * ni * rs, ni, rs);
    sorn_to_lane(g->drive, l, nl, (const char *)sb->drive + b * n * rs, n, rs);
    for (size_t i = 0; i < ne; i++)
        memset((char *)g->af + (i * nl + l) * rs, sb->adapt_finite[b * ne + i] ? 0xff : 0, rs);
    sb->wild[b] = wild;
}

/* Slot b's lane into its slot-major arrays, w_ee and ee_mask included
 * (entries outside the initial mask from w_ee0 or +0, as `cleared` says). */
static void sorn_lanes_sync(sorn_batch *sb, size_t b)
{
    const size_t rs = bl_dtype_size(sb->base.dtype), nl = sb->lanes;
    const size_t ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes, nee = ne * ne;
    const sorn_lgroup *g = &sb->groups[sb->lane_group[b]];
    const sorn_lwiring *w = &sb->wirings[g->wiring];
    const size_t l = sb->lane_of[b];
    char *wee = (char *)sb->w_ee + b * nee * rs;
    uint8_t *mask = sb->ee_mask + b * nee;
    if (sb->cleared[b])
        memset(wee, 0, nee * rs); /* +0 in IEEE 754 */
    else
        memcpy(wee, (const char *)sb->w_ee0 + b * nee * rs, nee * rs);
    for (size_t j = 0; j < ne; j++)
        for (size_t k = w->ptr[j]; k < w->ptr[j + 1]; k++) {
            const size_t e = (size_t)w->dst[k] * ne + j;
            memcpy(wee + e * rs, (const char *)g->cw + (k * nl + l) * rs, rs);
            mask[e] = ((const uint8_t *)g->cm)[(k * nl + l) * rs] != 0;
        }
    sorn_from_lane((char *)sb->x + b * ne * rs, g->x, l, nl, ne, rs);
    sorn_from_lane((char *)sb->prev_x + b * ne * rs, g->px, l, nl, ne, rs);
    sorn_from_lane((char *)sb->t_e + b * ne * rs, g->te, l, nl, ne, rs);
    sorn_from_lane((char *)sb->y + b * ni * rs, g->y, l, nl, ni, rs);
    sorn_from_lane((char *)sb->prev_y + b * ni * rs, g->py, l, nl, ni, rs);
    sorn_from_lane((char *)sb->drive + b * n * rs, g->drive, l, nl, n, rs);
    for (size_t i = 0; i < ne; i++)
        sb->adapt_finite[b * ne + i] = ((const uint8_t *)g->af)[(i * nl + l) * rs] != 0;
}

/* The wirings' shared rows, the groups (each wiring's slots in ascending
 * order, nl to a group, the last one padded) with their lane state, the
 * scratch, and every lane slot moved into its lane; false when out of
 * memory. */
static bool sorn_lanes_build(sorn_batch *sb, bl_isa isa)
{
    const size_t nb = sb->base.slots, ne = sb->n_e, ni = sb->n_i, n = sb->base.nodes;
    const size_t nr = sb->base.receptors, rs = bl_dtype_size(sb->base.dtype);
    const size_t nl = sorn_lanes_width(isa, rs);
    BL_ASSERT(nl <= SORN_LMAX);
    const size_t nep = sorn_round_up(ne, nl), nip = sorn_round_up(ni, nl);
    sb->lanes = nl;
    sb->lane_step = sorn_lanes_kernel(isa, rs);
    size_t nw = 0, ng = 0;
    for (size_t b = 0; b < nb; b++) {
        if (sb->lane_group[b] != b)
            continue;
        size_t members = 0;
        for (size_t c = b; c < nb; c++)
            members += sb->lane_group[c] == b;
        nw++;
        ng += (members + nl - 1) / nl;
    }
    if (nw == 0)
        return true;
    /* The first slot of each slot's wiring, kept while lane_group turns
     * into group numbers. */
    size_t *first_of = bl_calloc(nb, sizeof *first_of);
    sb->wirings = bl_calloc(nw, sizeof *sb->wirings);
    sb->groups = bl_calloc(ng, sizeof *sb->groups);
    if (!first_of || !sb->wirings || !sb->groups)
        goto fail;
    memcpy(first_of, sb->lane_group, nb * sizeof *first_of);
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
        goto fail;
    for (size_t b = 0; b < nb; b++) {
        if (first_of[b] != b)
            continue;
        sorn_lwiring *w = &sb->wirings[sb->nwirings++];
        w->base = b;
        w->ptr = bl_calloc(ne + 1, sizeof *w->ptr);
        if (!w->ptr)
            goto fail;
        const uint8_t *mask0 = sb->ee_mask0 + b * ne * ne;
        size_t nz = 0;
        for (size_t j = 0; j < ne; j++) {
            w->ptr[j] = nz;
            for (size_t i = 0; i < ne; i++)
                nz += mask0[i * ne + j] != 0;
        }
        w->ptr[ne] = nz;
        w->dst = bl_calloc(nz, sizeof *w->dst);
        if (!w->dst)
            goto fail;
        for (size_t j = 0, k = 0; j < ne; j++)
            for (size_t i = 0; i < ne; i++)
                if (mask0[i * ne + j])
                    w->dst[k++] = (uint32_t)i;
        /* The base slot's transposed E<->I weights, rows padded with +0
         * (calloc's zero bytes). */
        w->wei_p = bl_calloc(ni * nep, rs);
        w->wie_p = bl_calloc(ne * nip, rs);
        if (!w->wei_p || !w->wie_p)
            goto fail;
        const char *wei_t = (const char *)sb->wei_t + b * ne * ni * rs;
        const char *wie_t = (const char *)sb->wie_t + b * ne * ni * rs;
        for (size_t k = 0; k < ni; k++)
            memcpy((char *)w->wei_p + k * nep * rs, wei_t + k * ne * rs, ne * rs);
        for (size_t j = 0; j < ne; j++)
            memcpy((char *)w->wie_p + j * nip * rs, wie_t + j * ni * rs, ni * rs);
        size_t lane = nl;
        for (size_t s = b; s < nb; s++) {
            if (first_of[s] != b)
                continue;
            if (lane == nl) {
                sorn_lgroup *g = &sb->groups[sb->ngroups++];
                g->wiring = sb->nwirings - 1;
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
                    goto fail;
                lane = 0;
            }
            sb->groups[sb->ngroups - 1].slot[lane] = s;
            sb->lane_group[s] = sb->ngroups - 1;
            sb->lane_of[s] = lane++;
        }
    }
    bl_free(first_of);
    for (size_t b = 0; b < nb; b++)
        if (sb->lane_group[b] != SORN_LNONE)
            sorn_kernels_of(&sb->base)->from_canonical(sb, b);
    return true;
fail:
    bl_free(first_of);
    return false;
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
    for (size_t k = 0; k < SORN_NFIELDS; k++)
        for (size_t v = 0; v < f[k].count; v++)
            if (!isfinite(f[k].p[v]))
                return bl_fail(err, BL_EVALUE,
                               "initials[%zu]: %s must be finite (entry %zu is %.17g)", slot,
                               f[k].name, v, f[k].p[v]);
    /* Conversion to a mask or a binary state would silently turn 0.1 into
     * 1 or 0. */
    for (size_t k = 0; k < SORN_NFIELDS; k++)
        if (f[k].binary)
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
    return bl_check_cast(arrays, SORN_NFIELDS, "", slot, dtype, err);
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
    if (!sorn_lanes_build((sorn_batch *)*out, isa)) {
        sorn_destroy(*out);
        *out = NULL;
        return bl_fail(err, BL_ENOMEM, "out of memory for the lanes of a SORN batch of %zu slots",
                       nslots);
    }
    return BL_OK;
}
