/* Falandays model batches (spec/models.md §2.2, §2.4–§2.6, §5.3): creation
 * with the initial-state and precision-cast validation, the float64 and
 * float32 frames, reset, freezes and snapshots.
 *
 * Storage is per slot for what a trial changes and per wiring for what it
 * does not (falandays_batch.h): the slots created from one initial state
 * (a run of equal pointers, bl_model.wiring) share one copy of the fixed
 * arrays, the mask as bits, its compressed rows and the initial weights
 * (the rows' values plus the sign bits of the zeros outside the mask), so
 * a slot owns O(N) state and the padded values of its synapses. Reals are
 * in the batch dtype (void pointers typed by the kernel instantiation),
 * signs and flags int32, matrices canonical [destination][source]. Dense
 * N x N weights exist only for a slot whose layout needs them (the
 * reference and dense kernels, or a wiring with non-zero weights outside
 * its mask); snapshots and kernel switches rebuild canonical order
 * exactly from whatever a slot holds. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "models/batch_common.h"
#include "models/falandays_internal.h"
#include "models/model_internal.h"

#include "models/falandays_batch.h"

#define FAL_REAL double
#define FAL_IREAL int64_t
#define FAL_LANES (FAL_VBYTES / 8)
#define FAL_SFX f64
#include "models/falandays_kernel.h"
#include "models/falandays_fast.h"
#undef FAL_REAL
#undef FAL_IREAL
#undef FAL_LANES
#undef FAL_SFX

#define FAL_REAL float
#define FAL_IREAL int32_t
#define FAL_LANES (FAL_VBYTES / 4)
#define FAL_SFX f32
#include "models/falandays_kernel.h"
#include "models/falandays_fast.h"
#undef FAL_REAL
#undef FAL_IREAL
#undef FAL_LANES
#undef FAL_SFX

/* The kernels' functions of one dtype, so that each operation picks the
 * dtype once. */
typedef struct fal_kernels {
    void (*fill_slot)(fal_batch *fb, size_t b, const bl_falandays_init *in);
    void (*fixed)(fal_batch *fb, size_t w);
    void (*initial_weights)(fal_batch *fb, size_t w, const bl_falandays_init *in);
    void (*reset_slot)(fal_batch *fb, size_t b);
    void (*load_initial)(fal_batch *fb, size_t b);
    void (*to_canonical)(fal_batch *fb, size_t b);
    void (*from_canonical)(fal_batch *fb, size_t b);
    void (*sparse_refresh)(fal_batch *fb, size_t b);
    void (*export_weights)(const fal_batch *fb, size_t b, double *dst);
} fal_kernels;

static const fal_kernels fal_kernels_f64 = {
    fal_fill_slot_f64,      fal_fast_fixed_f64,     fal_initial_weights_f64,
    fal_reset_slot_f64,     fal_load_initial_f64,   fal_to_canonical_f64,
    fal_from_canonical_f64, fal_sparse_refresh_f64, fal_export_weights_f64,
};
static const fal_kernels fal_kernels_f32 = {
    fal_fill_slot_f32,      fal_fast_fixed_f32,     fal_initial_weights_f32,
    fal_reset_slot_f32,     fal_load_initial_f32,   fal_to_canonical_f32,
    fal_from_canonical_f32, fal_sparse_refresh_f32, fal_export_weights_f32,
};

static const fal_kernels *fal_kernels_of(const bl_model *m)
{
    return m->dtype == BL_FLOAT32 ? &fal_kernels_f32 : &fal_kernels_f64;
}

/* ---- storage ---------------------------------------------------------------- */

enum { FAL_NARRAYS = 29 };
_Static_assert(FAL_NARRAYS <= BL_BATCH_MAX_ARRAYS, "a Falandays batch lists too many arrays");

/* Every owned array, so that allocation and release walk one list: first
 * what each slot owns (O(N)), then what its wiring shares. */
static size_t fal_arrays(bl_model *m, bl_batch_array *out)
{
    fal_batch *fb = (fal_batch *)m;
    const size_t n = m->nodes, nr = m->receptors, ne = m->effectors;
    const size_t bits = fb->mask_bytes;
    size_t k = 0;
#define PER(count, w) ((count) | ((w) ? BL_BATCH_PER_WIRING : 0))
#define REAL_ARRAY(field, count, w) out[k++] = (bl_batch_array){&fb->field, NULL, NULL, PER(count, w)}
#define BYTE_ARRAY(field, count, w) out[k++] = (bl_batch_array){NULL, &fb->field, NULL, PER(count, w)}
#define INT_ARRAY(field, count, w) out[k++] = (bl_batch_array){NULL, NULL, &fb->field, PER(count, w)}
    REAL_ARRAY(acts, n, false);
    REAL_ARRAY(targets, n, false);
    REAL_ARRAY(spikes, n, false);
    REAL_ARRAY(previous, n, false);
    REAL_ARRAY(errors, n, false);
    REAL_ARRAY(counts, n, false);
    REAL_ARRAY(effectors, ne, false);
    INT_ARRAY(raw_finite, n, false);
    INT_ARRAY(finite, 1, false);
    INT_ARRAY(learning, 1, false);
    INT_ARRAY(weight_learning, 1, false);
    INT_ARRAY(layout, 1, false);
    INT_ARRAY(wild, 1, false);
    INT_ARRAY(cleared, 1, false);
    REAL_ARRAY(input_w, n * nr, true);
    REAL_ARRAY(out_mask, n * ne, true);
    REAL_ARRAY(params, FAL_NPARAM, true);
    REAL_ARRAY(acts0, n, true);
    REAL_ARRAY(targets0, n, true);
    REAL_ARRAY(spikes0, n, true);
    INT_ARRAY(signs, n, true);
    INT_ARRAY(flags, FAL_NFLAG, true);
    BYTE_ARRAY(mask, bits, true);
    BYTE_ARRAY(neg0, bits, true);
    INT_ARRAY(plus0, 1, true);
    INT_ARRAY(zero0, 1, true);
    REAL_ARRAY(win_t, nr * n, true);
    REAL_ARRAY(sgn, n, true);
    REAL_ARRAY(ro_cnt, ne, true);
#undef PER
#undef REAL_ARRAY
#undef BYTE_ARRAY
#undef INT_ARRAY
    BL_ASSERT(k == FAL_NARRAYS);
    return k;
}

/* The separately allocated arrays (fast kernel, lanes), for release and
 * the memory report. */
#define FAL_MORE(fb)                                                                            \
    {(fb)->row_ptr,  (fb)->row_dst,   (fb)->pad_ptr,  (fb)->pad_dst,    (fb)->pad_w0,          \
     (fb)->pad_w,    (fb)->pw_shift,  (fb)->in_ptr,   (fb)->in_node,    (fb)->in_w,            \
     (fb)->ro_ptr,   (fb)->ro_node,   (fb)->ro_w,     (fb)->rec,        (fb)->inp,             \
     (fb)->delta,    (fb)->acc,       (fb)->spk,      (fb)->group_slot, (fb)->group_rep,       \
     (fb)->group_w,  (fb)->home,      (fb)->resident, (fb)->lw,         (fb)->lacts,           \
     (fb)->ltargets, (fb)->lspikes,   (fb)->lprev,    (fb)->lerrors,    (fb)->lcounts,         \
     (fb)->lraw,     (fb)->lacc,      (fb)->linp,     (fb)->ldelta,     (fb)->lu,              \
     (fb)->dense,    (fb)->w0_dense}

static void fal_destroy(bl_model *m)
{
    fal_batch *fb = (fal_batch *)m;
    for (size_t b = 0; fb->dense && b < m->slots; b++)
        bl_free(fb->dense[b]);
    for (size_t w = 0; fb->w0_dense && w < m->nwirings; w++)
        bl_free(fb->w0_dense[w]);
    void *fast[] = FAL_MORE(fb);
    bl_batch_release(m, fal_arrays, fast, sizeof fast / sizeof *fast);
}

/* Allocates n zeroed values of `size` bytes for the batch, counted in
 * fb->more_bytes for the memory report. */
static void *fal_calloc(fal_batch *fb, size_t n, size_t size)
{
    void *p = bl_calloc(n, size);
    if (p)
        fb->more_bytes += (n ? n : 1) * size;
    return p;
}

/* ---- lockstep lanes -------------------------------------------------------- */

/* Brings slot b's per-slot arrays up to date from its lane (no change to
 * the model's state: the lane stays authoritative). */
static void fal_lanes_sync_out(fal_batch *fb, size_t b)
{
    if (!fb->resident || !fb->resident[b])
        return;
    if (fb->base.dtype == BL_FLOAT32)
        fb->lops->sync_f32(fb, b, false);
    else
        fb->lops->sync_f64(fb, b, false);
}

/* Moves slot b out of its lane onto the per-slot path. */
static void fal_lanes_evict(fal_batch *fb, size_t b)
{
    fal_lanes_sync_out(fb, b);
    if (fb->resident)
        fb->resident[b] = 0;
}

/* Moves slot b into its lane when it has one and lanes are exact for its
 * state (the fast kernel on compressed rows, finite weights). */
static void fal_lanes_admit(fal_batch *fb, size_t b)
{
    if (!fb->home || fb->home[b] < 0 || fb->resident[b] || fb->kernel != BL_FAL_KERNEL_FAST ||
        fb->layout[b] != FAL_LAYOUT_SPARSE || fb->wild[b])
        return;
    if (fb->base.dtype == BL_FLOAT32)
        fb->lops->sync_f32(fb, b, true);
    else
        fb->lops->sync_f64(fb, b, true);
    fb->resident[b] = 1;
}

/* Whether slots sa and sb can share lanes: one wiring, or two wirings in
 * which everything a lane group reads from its representative's is the
 * same bits. */
static bool fal_same_wiring(const fal_batch *fb, size_t sa, size_t sb)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, ne = fb->base.effectors;
    const size_t rs = bl_dtype_size(fb->base.dtype);
    const size_t a = FAL_W(fb, sa), b = FAL_W(fb, sb);
    if (a == b)
        return true;
    const struct {
        const void *p;
        size_t bytes; /* per wiring */
    } parts[] = {
        {fb->mask, fb->mask_bytes},           {fb->signs, n * sizeof(int32_t)},
        {fb->flags, FAL_NFLAG * sizeof(int32_t)}, {fb->params, FAL_NPARAM * rs},
        {fb->input_w, n * nr * rs},           {fb->out_mask, n * ne * rs},
    };
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        const unsigned char *p = parts[k].p;
        if (memcmp(p + a * parts[k].bytes, p + b * parts[k].bytes, parts[k].bytes) != 0)
            return false;
    }
    return true;
}

/* The lane policy (BL_LANES=auto): whether a lane group of `fill` slots
 * out of L lanes on instruction set isa steps fewer instructions than its
 * slots would on the per-slot fast path. A lane group pays for all L lanes
 * and for the union of its slots' spikes, the per-slot path only for each
 * slot's own spikes, so lanes win only when the group is nearly full; the
 * activity, which also decides it, is not known at creation, so the
 * criterion is static (the measurements are above). */
/* The measurements behind the policy (callgrind instructions of
 * bl_model_step per slot-frame, `bench_models one 256 B float32|float64
 * shared`, 782 frames at activity 0.35, BL_LANES=never / always; the
 * per-slot path costs ~51.5 k (f32) and ~71 k (f64) whatever B):
 *   AVX2 f32, L = 8: B=2 79.2 k, 4 49.4 k, 5 41.7 k, 6 36.0 k, 7 31.5 k,
 *                    8 26.9 k
 *   AVX2 f64, L = 4: B=2 78.4 k, 3 60.6 k, 4 47.3 k
 *   SSE2 f32, L = 4: B=2 92.9 k, 4 55.7 k (and B=8, two full groups,
 *                    55.7 k); SSE2 f64, L = 2: 84.7 k at B=2, 3 and 4
 * so SSE2 lanes lose even when full, and AVX2 lanes break even near half
 * full at that activity; at the anchor's (delayed_cue, activity 0.06,
 * 4 slots in 8 lanes) they lose by half again (13.5 M against 9.2 M
 * instructions for the evaluation's stepping), since a group pays for
 * the union of its slots' spikes. Hence lanes under AVX2 only, for groups
 * at least three quarters full (6 of 8 f32 lanes, 3 of 4 f64 lanes). */
#define FAL_LANES_MIN_FILL_NUM 3
#define FAL_LANES_MIN_FILL_DEN 4
static bool fal_lanes_wanted(bl_lanes_mode mode, bl_isa isa, size_t fill, size_t L)
{
    if (fill == 0 || mode == BL_LANES_NEVER)
        return false;
    if (mode == BL_LANES_ALWAYS) /* even a last group of one, to test it */
        return true;
    return isa == BL_ISA_AVX2 && fill >= 2 &&
           FAL_LANES_MIN_FILL_DEN * fill >= FAL_LANES_MIN_FILL_NUM * L;
}

/* Slots of a wiring of `size` slots that go into lanes: its groups of L
 * in ascending slot order, the last (partial) one only if it is wanted. */
static size_t fal_lanes_taken(bl_lanes_mode mode, bl_isa isa, size_t size, size_t L)
{
    size_t taken = fal_lanes_wanted(mode, isa, L, L) ? size / L * L : 0;
    if (fal_lanes_wanted(mode, isa, size % L, L))
        taken += size % L;
    return taken;
}

/* Groups the slots that share a wiring into lanes of the instruction set
 * isa where the policy mode wants them (the others, and classes of one
 * slot, stay on the per-slot path) and moves them in. */
static bl_status fal_lanes_setup(fal_batch *fb, bl_isa isa, bl_lanes_mode mode)
{
    const size_t n = fb->base.nodes, nr = fb->base.receptors, nb = fb->base.slots;
    const size_t rs = bl_dtype_size(fb->base.dtype);
    bl_status st = BL_ENOMEM;
    fb->isa = isa;
    fb->lops = isa == BL_ISA_AVX2 ? &bl_fal_lanes_avx2 : &bl_fal_lanes_sse2;
    const size_t L = fb->lanes = fb->lops->bytes / rs;
    size_t *cls = bl_mallocarray(nb, sizeof *cls), *size = bl_calloc(nb, sizeof *size);
    fb->home = fal_calloc(fb, nb, sizeof *fb->home);
    fb->resident = fal_calloc(fb, nb, sizeof *fb->resident);
    if (!cls || !size || !fb->home || !fb->resident)
        goto fail;
    /* cls[b]: the first slot of b's wiring. */
    for (size_t b = 0; b < nb; b++) {
        cls[b] = b;
        for (size_t a = 0; a < b; a++)
            if (cls[a] == a && fal_same_wiring(fb, a, b)) {
                cls[b] = a;
                break;
            }
        size[cls[b]]++;
        fb->home[b] = -1;
    }
    size_t ng = 0, nw = 0;
    /* size[c]: from here, the slots of class c that go into lanes. */
    for (size_t b = 0; b < nb; b++)
        if (cls[b] == b)
            size[b] = fal_lanes_taken(mode, isa, size[b], L);
    for (size_t b = 0; b < nb; b++)
        if (cls[b] == b && size[b] >= 2) {
            const size_t groups = (size[b] + L - 1) / L;
            ng += groups;
            const size_t *ptr = fb->row_ptr + FAL_W(fb, b) * (n + 1);
            nw += groups * (ptr[n] - ptr[0]) * L;
        }
    if (ng == 0) {
        st = BL_OK;
        goto fail;
    }
    size_t gnl;
    if (!bl_size_mul(ng * L, n, &gnl) || ng > INT32_MAX / L)
        goto fail;
    fb->group_slot = fal_calloc(fb, ng * L, sizeof *fb->group_slot);
    fb->group_rep = fal_calloc(fb, ng, sizeof *fb->group_rep);
    fb->group_w = fal_calloc(fb, ng, sizeof *fb->group_w);
    fb->lw = fal_calloc(fb, nw + 1, rs);
    void **lane_arrays[] = {&fb->lacts,   &fb->ltargets, &fb->lspikes, &fb->lprev,
                            &fb->lerrors, &fb->lcounts,  &fb->lraw};
    for (size_t k = 0; k < sizeof lane_arrays / sizeof *lane_arrays; k++)
        if (!(*lane_arrays[k] = fal_calloc(fb, gnl, rs)))
            goto fail;
    fb->lacc = fal_calloc(fb, 2 * n * L, rs);
    fb->linp = fal_calloc(fb, (n + 1) * L, rs);
    fb->ldelta = fal_calloc(fb, n * L, rs);
    fb->lu = fal_calloc(fb, nr * L, rs);
    if (!fb->group_slot || !fb->group_rep || !fb->group_w || !fb->lw || !fb->lacc ||
        !fb->linp || !fb->ldelta || !fb->lu)
        goto fail;
    /* Each class's slots in ascending order, L to a group. */
    size_t g = 0, w = 0;
    for (size_t c = 0; c < nb; c++) {
        if (cls[c] != c || size[c] < 2)
            continue;
        const size_t *cptr = fb->row_ptr + FAL_W(fb, c) * (n + 1);
        const size_t nnz = cptr[n] - cptr[0];
        size_t l = L, left = size[c];
        for (size_t b = c; b < nb && left > 0; b++) {
            if (cls[b] != c)
                continue;
            left--;
            if (l == L) {
                fb->group_rep[g] = c;
                fb->group_w[g] = w;
                for (l = 0; l < L; l++)
                    fb->group_slot[g * L + l] = FAL_NO_SLOT;
                w += nnz * L;
                g++;
                l = 0;
            }
            fb->group_slot[(g - 1) * L + l] = b;
            fb->home[b] = (int32_t)((g - 1) * L + l);
            l++;
        }
    }
    BL_ASSERT(g == ng && w == nw);
    fb->ngroups = ng;
    for (size_t b = 0; b < nb; b++)
        fal_lanes_admit(fb, b);
    st = BL_OK;
fail:
    bl_free(cls);
    bl_free(size);
    return st;
}

/* ---- operations ----------------------------------------------------------- */

static void fal_step(bl_model *m, const void *inputs, const void *noise, const int32_t *active)
{
    fal_batch *fb = (fal_batch *)m;
    /* Slots on the per-slot path first (fal_fast_step skips resident
     * ones): a lane may leave for that path during its frame, and must not
     * be stepped twice. */
    if (m->dtype == BL_FLOAT32)
        fal_fast_step_f32(fb, inputs, noise, active);
    else
        fal_fast_step_f64(fb, inputs, noise, active);
    for (size_t g = 0; g < fb->ngroups; g++) {
        if (m->dtype == BL_FLOAT32)
            fb->lops->step_f32(fb, g, inputs, noise, active);
        else
            fb->lops->step_f64(fb, g, inputs, noise, active);
    }
}

static void fal_reset(bl_model *m, const int32_t *active)
{
    fal_batch *fb = (fal_batch *)m;
    const fal_kernels *k = fal_kernels_of(m);
    for (size_t b = 0; b < m->slots; b++) {
        if (!active[b])
            continue;
        /* The reset writes the initial weights over whatever layout held,
         * and every other state array, so a lane's state is not needed. */
        if (fb->resident)
            fb->resident[b] = 0;
        k->reset_slot(fb, b);
        k->load_initial(fb, b);
        fal_lanes_admit(fb, b);
    }
}

static void fal_freeze(bl_model *m, const int32_t *active, bool all)
{
    fal_batch *fb = (fal_batch *)m;
    bl_batch_freeze(m->slots, active, all, fb->weight_learning, fb->learning, 1);
}

/* The weights in canonical order, from whatever layout holds them. */
static void fal_export_layout(const bl_model *m, size_t b, double *dst)
{
    fal_kernels_of(m)->export_weights((const fal_batch *)m, b, dst);
}

static bl_status fal_snapshot(const bl_model *m, size_t b, bl_snapshot **out, bl_error *err)
{
    const fal_batch *fb = (const fal_batch *)m;
    const size_t n = m->nodes, nr = m->receptors, ne = m->effectors;
    /* A lane's state into the slot's arrays; the batch is not const
     * storage, and what the model holds does not change. */
    fal_lanes_sync_out((fal_batch *)m, b);
    /* Storage is already canonical but for the weights, so a snapshot is a
     * typed copy. */
    const bl_batch_field spec[] = {
        {"acts", 1, n, 1, BL_BATCH_REAL, fb->acts, false},
        {"targets", 1, n, 1, BL_BATCH_REAL, fb->targets, false},
        {"spikes", 1, n, 1, BL_BATCH_REAL, fb->spikes, false},
        {"previous", 1, n, 1, BL_BATCH_REAL, fb->previous, false},
        {"errors", 1, n, 1, BL_BATCH_REAL, fb->errors, false},
        {"counts", 1, n, 1, BL_BATCH_REAL, fb->counts, true},
        {"weights", 2, n, n, BL_BATCH_LAYOUT, NULL, false},
        {"effectors", 1, ne, 1, BL_BATCH_REAL, fb->effectors, false},
        {"finite", 0, 1, 1, BL_BATCH_INT, fb->finite, true},
        {"learning", 0, 1, 1, BL_BATCH_INT, fb->learning, true},
        {"weight_learning", 0, 1, 1, BL_BATCH_INT, fb->weight_learning, true},
        {"raw_finite", 1, n, 1, BL_BATCH_INT, fb->raw_finite, true},
        {"recurrent_mask", 2, n, n, BL_BATCH_WBITS, fb->mask, true},
        {"input_weights", 2, n, nr, BL_BATCH_WREAL, fb->input_w, false},
        {"output_mask", 2, n, ne, BL_BATCH_WREAL, fb->out_mask, false},
        {"signs", 1, n, 1, BL_BATCH_WINT, fb->signs, true},
    };
    return bl_batch_snapshot(m, b, spec, sizeof spec / sizeof *spec, fal_export_layout, out,
                             err);
}

static const bl_model_ops fal_ops = {
    .destroy = fal_destroy,
    .step = fal_step,
    .reset = fal_reset,
    .freeze = fal_freeze,
    .snapshot = fal_snapshot,
};

/* ---- kernels and layouts ------------------------------------------------- */

bl_status bl_falandays_set_kernel(bl_model *m, bl_fal_kernel kernel)
{
    BL_ASSERT(m->kind == BL_MODEL_FALANDAYS);
    fal_batch *fb = (fal_batch *)m;
    const fal_kernels *k = fal_kernels_of(m);
    const size_t nn = m->nodes * m->nodes, rs = bl_dtype_size(m->dtype);
    /* The reference and dense kernels hold every slot's weights densely:
     * their buffers first, so that a failure changes nothing. */
    for (size_t b = 0; kernel != BL_FAL_KERNEL_FAST && b < m->slots; b++)
        if (!fb->dense[b] && !(fb->dense[b] = bl_calloc(nn, rs)))
            return BL_ENOMEM;
    /* A slot without a dense buffer is sparse and stays so (the kernel is
     * the fast one): fal_sparse_refresh is its round trip. */
    for (size_t b = 0; b < m->slots; b++) {
        fal_lanes_evict(fb, b);
        if (fb->dense[b])
            k->to_canonical(fb, b);
    }
    fb->kernel = kernel;
    for (size_t b = 0; b < m->slots; b++) {
        if (fb->layout[b] == FAL_LAYOUT_CANON)
            k->from_canonical(fb, b);
        else
            k->sparse_refresh(fb, b);
        /* Back on compressed rows for good (a reset reloads them from
         * pad_w0): the dense buffer goes. */
        if (kernel == BL_FAL_KERNEL_FAST && fb->layout[b] == FAL_LAYOUT_SPARSE &&
            fb->zero0[FAL_W(fb, b)]) {
            bl_free(fb->dense[b]);
            fb->dense[b] = NULL;
        }
        fal_lanes_admit(fb, b);
    }
    return BL_OK;
}

bl_status bl_falandays_set_reference_kernel(bl_model *m, bool on)
{
    return bl_falandays_set_kernel(m, on ? BL_FAL_KERNEL_REFERENCE : BL_FAL_KERNEL_FAST);
}

size_t bl_falandays_bytes(const bl_model *m)
{
    BL_ASSERT(m->kind == BL_MODEL_FALANDAYS);
    const fal_batch *fb = (const fal_batch *)m;
    const size_t nn = m->nodes * m->nodes, rs = bl_dtype_size(m->dtype);
    bl_batch_array arrays[BL_BATCH_MAX_ARRAYS];
    const size_t narrays = fal_arrays((bl_model *)m, arrays);
    size_t total = sizeof *fb + m->slots * sizeof *m->wiring + fb->more_bytes +
                   bl_batch_arrays_bytes(arrays, narrays, m->slots, m->nwirings, m->dtype);
    for (size_t b = 0; b < m->slots; b++)
        total += fb->dense[b] ? nn * rs : 0;
    for (size_t w = 0; w < m->nwirings; w++)
        total += fb->w0_dense[w] ? nn * rs : 0;
    return total;
}

void bl_falandays_path_counts(const bl_model *m, bl_fal_path_counts *out)
{
    BL_ASSERT(m->kind == BL_MODEL_FALANDAYS);
    *out = ((const fal_batch *)m)->paths;
}

/* The compressed rows of every wiring's mask, which never changes, their
 * padded copies with the wiring's initial weights (initials: the first
 * slot's state of each wiring), each slot's place for its plastic weights,
 * the fixed arrays of the fast frame and the frame scratch. Destinations
 * are node indices, and N fits 32 bits since N*N mask bits were
 * allocated. */
static bl_status fal_build_rows(fal_batch *fb, const bl_falandays_init *const *initials)
{
    const size_t n = fb->base.nodes, nb = fb->base.slots, nw = fb->base.nwirings;
    const size_t ne = fb->base.effectors, nr = fb->base.receptors;
    const size_t rsize = bl_dtype_size(fb->base.dtype), lanes = FAL_VBYTES / rsize;
    size_t nptr, neptr, nrptr, total = 0, padded = 0, slots = 0, nro = 0, nin = 0;
    if (n > UINT32_MAX - 1 || !bl_size_mul(nw, n + 1, &nptr) ||
        !bl_size_mul(nw, ne + 1, &neptr) || !bl_size_mul(nw, nr + 1, &nrptr))
        return BL_ENOMEM;
    fb->in_ptr = fal_calloc(fb, nrptr, sizeof *fb->in_ptr);
    fb->row_ptr = fal_calloc(fb, nptr, sizeof *fb->row_ptr);
    fb->pad_ptr = fal_calloc(fb, nptr, sizeof *fb->pad_ptr);
    fb->ro_ptr = fal_calloc(fb, neptr, sizeof *fb->ro_ptr);
    fb->pw_shift = fal_calloc(fb, nb, sizeof *fb->pw_shift);
    fb->inp = fal_calloc(fb, n + 1, rsize);
    fb->rec = fal_calloc(fb, n, rsize);
    fb->delta = fal_calloc(fb, n + 1, rsize);
    fb->acc = fal_calloc(fb, 2 * (n + 1), rsize);
    fb->spk = fal_calloc(fb, n, sizeof *fb->spk);
    if (!fb->in_ptr || !fb->row_ptr || !fb->pad_ptr || !fb->ro_ptr || !fb->pw_shift ||
        !fb->inp || !fb->rec || !fb->delta || !fb->acc || !fb->spk)
        return BL_ENOMEM;
    /* Row lengths first (row-major over the mask), as end offsets. */
    for (size_t w = 0; w < nw; w++) {
        size_t *ptr = fb->row_ptr + w * (n + 1), *pptr = fb->pad_ptr + w * (n + 1);
        /* The mask's set bits a byte at a time, skipping empty bytes,
         * rather than N^2 bit tests; entry k = i·N + j. */
        const uint8_t *bits = fb->mask + w * fb->mask_bytes;
        for (size_t q = 0; q < fb->mask_bytes; q++)
            for (unsigned v = bits[q]; v != 0; v &= v - 1)
                ptr[(q * 8 + (size_t)__builtin_ctz(v)) % n + 1]++;
        ptr[0] = total;
        pptr[0] = padded;
        for (size_t j = 0; j < n; j++) {
            pptr[j + 1] = pptr[j] + (ptr[j + 1] + lanes - 1) / lanes * lanes;
            ptr[j + 1] += ptr[j];
        }
        total = ptr[n];
        padded = pptr[n];
    }
    /* Each slot's padded weights, in slot order: a slot's block starts no
     * earlier than its wiring's rows (every earlier wiring has a slot
     * before it), so the shift is never negative. */
    for (size_t b = 0; b < nb; b++) {
        const size_t *pptr = fb->pad_ptr + FAL_W(fb, b) * (n + 1);
        fb->pw_shift[b] = slots - pptr[0];
        slots += pptr[n] - pptr[0];
    }
    /* One spare entry keeps the allocations non-empty. */
    fb->row_dst = fal_calloc(fb, total + 1, sizeof *fb->row_dst);
    fb->pad_dst = fal_calloc(fb, padded + 1, sizeof *fb->pad_dst);
    fb->pad_w0 = fal_calloc(fb, padded + 1, rsize);
    fb->pad_w = fal_calloc(fb, slots + 1, rsize);
    if (!fb->row_dst || !fb->pad_dst || !fb->pad_w0 || !fb->pad_w)
        return BL_ENOMEM;
    /* Then the destinations, ascending within each row because k (and so
     * i) ascends;
     * ptr[j] serves as row j's cursor and ends at row j+1's start, so a
     * shift by one restores the starts. */
    for (size_t w = 0; w < nw; w++) {
        size_t *ptr = fb->row_ptr + w * (n + 1);
        const size_t *pptr = fb->pad_ptr + w * (n + 1);
        const size_t start = ptr[0];
        const uint8_t *bits = fb->mask + w * fb->mask_bytes;
        for (size_t q = 0; q < fb->mask_bytes; q++)
            for (unsigned v = bits[q]; v != 0; v &= v - 1) {
                const size_t k = q * 8 + (size_t)__builtin_ctz(v);
                fb->row_dst[ptr[k % n]++] = (uint32_t)(k / n);
            }
        BL_ASSERT(n == 0 || ptr[n - 1] == ptr[n]);
        for (size_t j = n; j-- > 1;)
            ptr[j] = ptr[j - 1];
        ptr[0] = start;
        for (size_t j = 0; j < n; j++) {
            const size_t len = ptr[j + 1] - ptr[j];
            for (size_t k = 0; k < pptr[j + 1] - pptr[j]; k++)
                fb->pad_dst[pptr[j] + k] = k < len ? fb->row_dst[ptr[j] + k] : (uint32_t)n;
        }
        fal_kernels_of(&fb->base)->initial_weights(fb, w, initials[w]);
    }
    /* The readout lists and the padded input lists: lengths, then
     * fal_fast_fixed fills them. */
    for (size_t w = 0; w < nw; w++) {
        nro = bl_batch_column_lists(fb->out_mask, fb->base.dtype, w, n, ne, 1, nro,
                                    fb->ro_ptr + w * (ne + 1));
        nin = bl_batch_column_lists(fb->input_w, fb->base.dtype, w, n, nr, lanes, nin,
                                    fb->in_ptr + w * (nr + 1));
    }
    fb->ro_node = fal_calloc(fb, nro + 1, sizeof *fb->ro_node);
    fb->ro_w = fal_calloc(fb, nro + 1, rsize);
    fb->in_node = fal_calloc(fb, nin + 1, sizeof *fb->in_node);
    fb->in_w = fal_calloc(fb, nin + 1, rsize);
    if (!fb->ro_node || !fb->ro_w || !fb->in_node || !fb->in_w)
        return BL_ENOMEM;
    for (size_t w = 0; w < nw; w++)
        fal_kernels_of(&fb->base)->fixed(fb, w);
    return BL_OK;
}

/* ---- creation --------------------------------------------------------------- */

enum { FAL_NREALS = 6 };

/* The real arrays of an initial state that the batch keeps, for the
 * finite check and the cast check. */
static void fal_reals(const bl_falandays_init *in, bl_named_values out[FAL_NREALS])
{
    const size_t n = in->n;
    const bl_named_values reals[FAL_NREALS] = {
        {"weights", in->weights, n * n},         {"input_weights", in->input_weights, n * in->r},
        {"output_mask", in->output_mask, n * in->e}, {"acts", in->acts, n},
        {"targets", in->targets, n},             {"spikes", in->spikes, n},
    };
    memcpy(out, reals, sizeof reals);
}

/* §2.2, for one initial state. Sizes and pointers first (nothing else can be
 * read without them), then the reference's order. */
static bl_status validate_init(const void *initials, size_t slot, bl_error *err)
{
    const bl_falandays_init *in = ((const bl_falandays_init *const *)initials)[slot];
    if (!in)
        return bl_fail(err, BL_EVALUE, "initials[%zu] is missing", slot);
    bl_status st = bl_falandays_config_validate(&in->config, err);
    if (st != BL_OK) {
        bl_error_prefix(err, "initials[%zu]", slot);
        return st;
    }
    const size_t n = in->n, nr = in->r, ne = in->e;
    if (n == 0)
        return bl_fail(err, BL_EVALUE, "initials[%zu]: acts must be a non-empty vector (N >= 1)",
                       slot);
    if (nr == 0)
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: input_weights must be N x R with R >= 1", slot);
    if (ne == 0)
        return bl_fail(err, BL_EVALUE, "initials[%zu]: output_mask must be N x E with E >= 1",
                       slot);
    size_t nn, nnr, nne;
    if (!bl_size_mul(n, n, &nn) || !bl_size_mul(n, nr, &nnr) || !bl_size_mul(n, ne, &nne))
        return bl_fail(err, BL_EVALUE, "initials[%zu]: dimensions N=%zu R=%zu E=%zu are too large",
                       slot, n, nr, ne);
    const struct {
        const char *name;
        const void *p;
    } arrays[] = {
        {"weights", in->weights},   {"recurrent_mask", in->recurrent_mask},
        {"input_weights", in->input_weights}, {"output_mask", in->output_mask},
        {"signs", in->signs},       {"acts", in->acts},
        {"targets", in->targets},   {"spikes", in->spikes},
    };
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++)
        if (!arrays[k].p)
            return bl_fail(err, BL_EVALUE, "initials[%zu]: %s is missing", slot, arrays[k].name);

    /* Integer conversion would silently turn 0.1 into 0. (Each loop that
     * names the first bad entry runs only when its screen finds one.) */
    if (!bl_batch_all_binary(in->recurrent_mask, nn))
        for (size_t k = 0; k < nn; k++)
            if (!(in->recurrent_mask[k] == 0.0 || in->recurrent_mask[k] == 1.0))
                return bl_fail(err, BL_EVALUE,
                               "initials[%zu]: recurrent_mask must be binary before integer "
                               "conversion (entry [%zu][%zu] is %.17g)",
                               slot, k / n, k % n, in->recurrent_mask[k]);
    for (size_t i = 0; i < n; i++)
        if (in->signs[i] != 1 && in->signs[i] != -1)
            return bl_fail(err, BL_EVALUE,
                           "initials[%zu]: signs must be exactly +1 or -1 (signs[%zu] is %d)",
                           slot, i, (int)in->signs[i]);
    bl_named_values reals[FAL_NREALS];
    fal_reals(in, reals);
    for (size_t k = 0; k < FAL_NREALS; k++)
        if (!bl_batch_all_finite(reals[k].p, reals[k].count, BL_FLOAT64))
            for (size_t v = 0; v < reals[k].count; v++)
                if (!isfinite(reals[k].p[v]))
                    return bl_fail(err, BL_EVALUE, "initials[%zu]: %s must be finite", slot,
                                   reals[k].name);
    for (size_t k = 0; k < nne; k++)
        if (in->output_mask[k] < 0.0)
            return bl_fail(err, BL_EVALUE,
                           "initials[%zu]: output_mask must not have negative entries", slot);
    if (in->config.axis == BL_AXIS_UNSIGNED)
        for (size_t i = 0; i < n; i++)
            if (in->signs[i] != 1)
                return bl_fail(err, BL_EVALUE,
                               "initials[%zu]: the unsigned axis requires every sign to be +1",
                               slot);
    return BL_OK;
}

/* §5.3: every number the batch will hold, and every config number it will
 * not (the reference casts the whole initial state), must survive the cast;
 * the positive parameters must not underflow to 0. */
static bl_status validate_cast(const void *initials, size_t slot, bl_dtype dtype, bl_error *err)
{
    const bl_falandays_init *in = ((const bl_falandays_init *const *)initials)[slot];
    const bl_falandays_config *c = &in->config;
    const char *tname = bl_dtype_name(dtype);
    bl_named_values scalars[BL_FALANDAYS_NUMERIC_FIELDS];
    bl_falandays_config_fields(c, scalars);
    bl_status st = bl_check_cast(scalars, BL_FALANDAYS_NUMERIC_FIELDS, "config.", slot, dtype, err);
    if (st != BL_OK)
        return st;
    if (c->input_link_p)
        for (size_t r = 0; r < c->input_link_p_len; r++)
            if (!isfinite(bl_dtype_cast(dtype, c->input_link_p[r])))
                return bl_fail(err, BL_EVALUE,
                               "initials[%zu]: config.input_link_p[%zu] is not finite after "
                               "casting to %s",
                               slot, r, tname);
    /* The state's arrays: validate_init, which bl_batch_create runs on
     * every slot before this, found them all finite, and the cast to
     * float64 is the identity, so only float32 can fail here. */
    bl_named_values reals[FAL_NREALS];
    fal_reals(in, reals);
    if (dtype != BL_FLOAT64 &&
        (st = bl_batch_check_cast(reals, FAL_NREALS, "", slot, dtype, err)) != BL_OK)
        return st;
    if (!(bl_dtype_cast(dtype, c->threshold_mult) > 0.0))
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: config.threshold_mult must remain positive after casting "
                       "to %s",
                       slot, tname);
    if (!(bl_dtype_cast(dtype, c->targ_min) > 0.0))
        return bl_fail(err, BL_EVALUE,
                       "initials[%zu]: config.targ_min must remain positive after casting to %s",
                       slot, tname);
    return BL_OK;
}

/* Slot's dimensions against slot 0's. */
static bl_status same_dims(const void *initials, size_t slot, bl_error *err)
{
    const bl_falandays_init *const *all = initials;
    const bl_falandays_init *in = all[slot], *first = all[0];
    if (in->n != first->n || in->r != first->r || in->e != first->e)
        return bl_fail(err, BL_EVALUE,
                       "every slot of a batch needs the same dimensions: initials[%zu] has "
                       "N=%zu R=%zu E=%zu, initials[0] has N=%zu R=%zu E=%zu",
                       slot, in->n, in->r, in->e, first->n, first->r, first->e);
    return BL_OK;
}

static void fal_ports(bl_model *m, const void *initials)
{
    const bl_falandays_init *first = *(const bl_falandays_init *const *)initials;
    m->nodes = first->n;
    m->receptors = first->r;
    m->effectors = first->e;
    /* N*N fits (checked with the initial states). */
    ((fal_batch *)m)->mask_bytes = (first->n * first->n + 7) / 8;
    /* For fal_finish, which builds each wiring's initial weights. */
    ((fal_batch *)m)->initials = initials;
}

static void fal_fill(bl_model *m, size_t slot, const void *initials)
{
    const bl_falandays_init *in = ((const bl_falandays_init *const *)initials)[slot];
    fal_kernels_of(m)->fill_slot((fal_batch *)m, slot, in);
}

/* What the fast kernel sets up once every wiring and slot is filled: the
 * wirings' rows and initial weights (the dense ones only for a wiring with
 * non-zero weights outside its mask, as dense buffers only for its slots),
 * each slot's weights, and the live views. */
static bool fal_finish(bl_model *m)
{
    fal_batch *fb = (fal_batch *)m;
    const bl_falandays_init *const *states = fb->initials;
    fb->initials = NULL; /* not valid after creation */
    const size_t nn = m->nodes * m->nodes, rs = bl_dtype_size(m->dtype);
    const bl_falandays_init **first = bl_calloc(m->nwirings, sizeof *first);
    fb->dense = fal_calloc(fb, m->slots, sizeof *fb->dense);
    fb->w0_dense = fal_calloc(fb, m->nwirings, sizeof *fb->w0_dense);
    bool ok = first && fb->dense && fb->w0_dense;
    for (size_t b = 0; ok && b < m->slots; b++)
        if (b == 0 || FAL_W(fb, b) != FAL_W(fb, b - 1))
            first[FAL_W(fb, b)] = states[b];
    for (size_t w = 0; ok && w < m->nwirings; w++)
        if (!fb->zero0[w])
            ok = (fb->w0_dense[w] = bl_calloc(nn, rs)) != NULL;
    ok = ok && fal_build_rows(fb, first) == BL_OK;
    bl_free(first);
    for (size_t b = 0; ok && b < m->slots; b++)
        if (!fb->zero0[FAL_W(fb, b)])
            ok = (fb->dense[b] = bl_calloc(nn, rs)) != NULL;
    if (!ok)
        return false;
    for (size_t b = 0; b < m->slots; b++)
        fal_kernels_of(m)->load_initial(fb, b);
    m->effector_view = fb->effectors;
    m->activity_view = fb->spikes;
    m->finite_view = fb->finite;
    return true;
}

/* Positional, in bl_batch_family's order: name, kind, ops and size; the
 * checks; ports, arrays, fill and finish. */
static const bl_batch_family fal_family = {
    "Falandays", BL_MODEL_FALANDAYS, &fal_ops, sizeof(fal_batch),
    validate_init, same_dims, validate_cast,
    fal_ports, fal_arrays, fal_fill, fal_finish,
};

bl_status bl_model_create_falandays(const bl_falandays_init *const *initials, size_t nslots,
                                    bl_dtype dtype, bl_model **out, bl_error *err)
{
    bl_status st = bl_batch_create(&fal_family, initials, nslots, dtype, out, err);
    if (st != BL_OK)
        return st;
    /* The instruction set and policy of the lanes, after the state's own
     * checks. */
    bl_isa isa;
    bl_lanes_mode mode;
    st = bl_isa_select(&isa, err);
    if (st == BL_OK)
        st = bl_lanes_mode_select(&mode, err);
    if (st == BL_OK && (st = fal_lanes_setup((fal_batch *)*out, isa, mode)) != BL_OK)
        st = bl_fail(err, st, "out of memory for the lanes of a Falandays batch of %zu slots "
                              "(N=%zu)",
                     nslots, (*out)->nodes);
    if (st != BL_OK) {
        fal_destroy(*out);
        *out = NULL;
    }
    return st;
}
