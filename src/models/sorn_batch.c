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
#include "models/model_internal.h"
#include "models/sorn_internal.h"

/* Parameter vector of §3.5, cast to the dtype. */
enum { SORN_P_ETA_STDP, SORN_P_ETA_IP, SORN_P_H_IP, SORN_NPARAM };

/* Where a slot's E->E weights live (sorn_fast.h). */
enum { SORN_LAYOUT_CANON, SORN_LAYOUT_SPARSE };

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
    bl_sorn_paths paths;
} sorn_batch;

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
    void *fast[] = {sb->layout,  sb->cleared, sb->wild,     sb->nz_off,  sb->col_ptr,
                    sb->nz_dst,  sb->cw,      sb->cm,       sb->wei_t,   sb->wie_t,
                    sb->weu_t,   sb->in_ptr,  sb->in_unit,  sb->in_w,    sb->ro_ptr,
                    sb->ro_unit, sb->sc_exc,  sb->sc_inp,   sb->sc_inh,
                    sb->sc_tot,  sb->sc_xp,   sb->sc_scale, sb->sc_idr,  sb->sc_actx,
                    sb->sc_acty};
    bl_batch_release(m, sorn_arrays, fast, sizeof fast / sizeof *fast);
}

/* ---- operations ----------------------------------------------------------- */

static void sorn_step(bl_model *m, const void *inputs, const void *noise, const int32_t *active)
{
    /* §3.6: the noise argument is shape-checked by model.c and ignored. */
    (void)noise;
    sorn_batch *sb = (sorn_batch *)m;
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
    /* Storage is already canonical but for w_ee, so a snapshot is a typed
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
    if (!sb->in_ptr || !sb->sc_inp)
        return false;
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
        for (size_t j = 0; j < ne; j++) {
            ptr[j] = c;
            size_t len = 0;
            for (size_t i = 0; i < ne; i++)
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
        for (size_t j = 0; j < ne; j++) {
            size_t c = ptr[j];
            for (size_t i = 0; i < ne; i++)
                if (mask0[i * ne + j])
                    dst[c++] = (uint32_t)i;
            while (c < ptr[j + 1])
                dst[c++] = (uint32_t)ne;
        }
        sorn_kernels_of(&sb->base)->fill_transposed(sb, b);
        sb->layout[b] = SORN_LAYOUT_CANON;
        sorn_kernels_of(&sb->base)->from_canonical(sb, b);
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
    return bl_batch_create(&sorn_family, initials, nslots, dtype, out, err);
}
