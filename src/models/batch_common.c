/* The storage and snapshot plumbing that the Falandays and SORN batches
 * share (batch_common.h): walking a batch's list of owned arrays, the
 * offsets of the fast kernels' lists, and copying one slot's block of each
 * field into a snapshot. */
#include "models/batch_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"

/* Elements of array a: one block per slot or per wiring. */
static bool batch_array_count(const bl_batch_array *a, size_t nslots, size_t nwirings, size_t *n)
{
    const bool wired = (a->per_slot & BL_BATCH_PER_WIRING) != 0;
    return bl_size_mul(a->per_slot & ~BL_BATCH_PER_WIRING, wired ? nwirings : nslots, n);
}

static size_t batch_array_elem(const bl_batch_array *a, bl_dtype dtype)
{
    return a->real ? bl_dtype_size(dtype) : a->bytes ? 1 : sizeof(int32_t);
}

bool bl_batch_arrays_create(const bl_batch_array *arrays, size_t count, size_t nslots,
                            size_t nwirings, bl_dtype dtype)
{
    for (size_t k = 0; k < count; k++) {
        size_t n;
        if (!batch_array_count(&arrays[k], nslots, nwirings, &n))
            return false;
        /* bl_calloc pads a zero-width request (N_I = 0) to one value. */
        bool ok;
        if (arrays[k].real)
            ok = (*arrays[k].real = bl_calloc(n, bl_dtype_size(dtype))) != NULL;
        else if (arrays[k].bytes)
            ok = (*arrays[k].bytes = bl_calloc(n, 1)) != NULL;
        else
            ok = (*arrays[k].ints = bl_calloc(n, sizeof(int32_t))) != NULL;
        if (!ok)
            return false;
    }
    return true;
}

size_t bl_batch_arrays_bytes(const bl_batch_array *arrays, size_t count, size_t nslots,
                             size_t nwirings, bl_dtype dtype)
{
    size_t total = 0;
    for (size_t k = 0; k < count; k++) {
        size_t n = 0;
        (void)batch_array_count(&arrays[k], nslots, nwirings, &n); /* fitted when allocated */
        total += (n ? n : 1) * batch_array_elem(&arrays[k], dtype);
    }
    return total;
}

void bl_batch_arrays_copy_slot(const bl_batch_array *arrays, size_t count, size_t from,
                               size_t to, bl_dtype dtype)
{
    for (size_t k = 0; k < count; k++) {
        const size_t n = arrays[k].per_slot;
        if (n & BL_BATCH_PER_WIRING)
            continue;
        if (arrays[k].real) {
            const size_t bytes = n * bl_dtype_size(dtype);
            char *base = *arrays[k].real;
            memcpy(base + to * bytes, base + from * bytes, bytes);
        } else if (arrays[k].bytes) {
            memcpy(*arrays[k].bytes + to * n, *arrays[k].bytes + from * n, n);
        } else {
            memcpy(*arrays[k].ints + to * n, *arrays[k].ints + from * n, n * sizeof(int32_t));
        }
    }
}

void bl_batch_arrays_destroy(const bl_batch_array *arrays, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        if (arrays[k].real)
            bl_free(*arrays[k].real);
        else if (arrays[k].bytes)
            bl_free(*arrays[k].bytes);
        else
            bl_free(*arrays[k].ints);
    }
}

bl_status bl_batch_create(const bl_batch_family *f, const void *initials, size_t nslots,
                          bl_dtype dtype, bl_model **out, bl_error *err)
{
    *out = NULL;
    if (!initials || nslots == 0)
        return bl_fail(err, BL_EVALUE, "a model batch needs at least one initial state");
    if (dtype != BL_FLOAT64 && dtype != BL_FLOAT32)
        return bl_fail(err, BL_EVALUE, "model dtype must be float64 or float32");
    /* A slot given the same initial state as the slot before it (the runner
     * passes one wiring to every trial of a lockstep group) passes or fails
     * every check exactly as that slot did, so only the first of a run of
     * equal pointers is checked (each check is O(N^2)); reports still name
     * the first failing slot. */
    const void *const *states = initials;
    bl_status st = BL_OK;
    for (size_t b = 0; st == BL_OK && b < nslots; b++)
        if (b == 0 || states[b] != states[b - 1])
            st = f->check_init(initials, b, err);
    for (size_t b = 1; st == BL_OK && b < nslots; b++)
        if (states[b] != states[b - 1])
            st = f->check_same(initials, b, err);
    for (size_t b = 0; st == BL_OK && b < nslots; b++)
        if (b == 0 || states[b] != states[b - 1])
            st = f->check_cast(initials, b, dtype, err);
    if (st != BL_OK)
        return st;

    bl_model *m = bl_calloc(1, f->size);
    if (!m)
        return bl_fail(err, BL_ENOMEM, "out of memory for a %s batch", f->name);
    m->ops = f->ops;
    m->kind = f->kind;
    m->dtype = dtype;
    m->slots = nslots;
    f->ports(m, initials);
    /* The wirings: runs of equal initial-state pointers. */
    if (!(m->wiring = bl_mallocarray(nslots, sizeof *m->wiring)))
        goto fail;
    for (size_t b = 0; b < nslots; b++) {
        if (b == 0 || states[b] != states[b - 1])
            m->nwirings++;
        m->wiring[b] = m->nwirings - 1;
    }
    bl_batch_array arrays[BL_BATCH_MAX_ARRAYS];
    const size_t narrays = f->arrays(m, arrays);
    if (!bl_batch_arrays_create(arrays, narrays, nslots, m->nwirings, dtype))
        goto fail;
    /* Filling is a function of the initial state alone and writes only the
     * slot's blocks of the listed arrays, so a slot with the previous slot's
     * initial state gets a copy of its blocks: the same bytes, without the
     * per-entry casts. */
    for (size_t b = 0; b < nslots; b++)
        if (b > 0 && states[b] == states[b - 1])
            bl_batch_arrays_copy_slot(arrays, narrays, b - 1, b, dtype);
        else
            f->fill(m, b, initials);
    if (!f->finish(m))
        goto fail;
    *out = m;
    return BL_OK;
fail:
    st = bl_fail(err, BL_ENOMEM, "out of memory for a %s batch of %zu slots (N=%zu)", f->name,
                 nslots, m->nodes);
    f->ops->destroy(m);
    return st;
}

void bl_batch_release(bl_model *m, size_t (*arrays)(bl_model *m, bl_batch_array *out),
                      void *const *more, size_t count)
{
    bl_batch_array owned[BL_BATCH_MAX_ARRAYS];
    bl_batch_arrays_destroy(owned, arrays(m, owned));
    for (size_t k = 0; k < count; k++)
        bl_free(more[k]);
    bl_free(m->wiring);
    bl_free(m);
}

void bl_batch_freeze(size_t slots, const int32_t *active, bool all, int32_t *weights,
                     int32_t *others, size_t stride)
{
    for (size_t b = 0; b < slots; b++) {
        if (!active[b])
            continue;
        weights[b * stride] = 0;
        if (all)
            others[b * stride] = 0;
    }
}

size_t bl_batch_column_lists(const void *values, bl_dtype dtype, size_t b, size_t rows,
                             size_t cols, size_t pad, size_t start, size_t *ptr)
{
    ptr[0] = start;
    for (size_t c = 0; c < cols; c++) {
        size_t len = 0;
        for (size_t i = 0; i < rows; i++) {
            const size_t k = (b * rows + i) * cols + c;
            len += dtype == BL_FLOAT32 ? ((const float *)values)[k] != 0
                                       : ((const double *)values)[k] != 0;
        }
        ptr[c + 1] = ptr[c] + (len + pad - 1) / pad * pad;
    }
    return ptr[cols];
}

bl_status bl_batch_snapshot(const bl_model *m, size_t b, const bl_batch_field *fields,
                            size_t count,
                            void (*export_layout)(const bl_model *m, size_t b, double *dst),
                            bl_snapshot **out, bl_error *err)
{
    bl_snapshot *s = NULL;
    bl_status st = bl_snapshot_create(count, &s, err);
    if (st != BL_OK)
        return st;
    for (size_t k = 0; k < count; k++) {
        const bl_batch_field *f = &fields[k];
        double *dst;
        st = bl_snapshot_entry(s, k, f->name, f->ndim, f->d0, f->d1, f->integer, &dst, err);
        if (st != BL_OK)
            goto fail;
        /* Values per slot; the slot's block (its wiring's, for a shared
         * field) starts at that block's index times that. */
        const size_t per = s->arrays[k].shape[0] * s->arrays[k].shape[1];
        const bool wired = f->kind == BL_BATCH_WREAL || f->kind == BL_BATCH_WINT ||
                           f->kind == BL_BATCH_WBITS;
        const size_t blk = wired ? m->wiring[b] : b;
        if (f->kind == BL_BATCH_LAYOUT) {
            export_layout(m, b, dst);
        } else if (f->kind == BL_BATCH_REAL || f->kind == BL_BATCH_WREAL) {
            if (m->dtype == BL_FLOAT32) {
                const float *src = (const float *)f->src + blk * per;
                for (size_t v = 0; v < per; v++)
                    dst[v] = (double)src[v];
            } else {
                const double *src = (const double *)f->src + blk * per;
                for (size_t v = 0; v < per; v++)
                    dst[v] = src[v];
            }
        } else if (f->kind == BL_BATCH_BYTE) {
            const uint8_t *src = (const uint8_t *)f->src + blk * per;
            for (size_t v = 0; v < per; v++)
                dst[v] = src[v];
        } else if (f->kind == BL_BATCH_WBITS) {
            const uint8_t *src = (const uint8_t *)f->src + blk * ((per + 7) / 8);
            for (size_t v = 0; v < per; v++)
                dst[v] = (src[v / 8] >> (v % 8)) & 1u;
        } else {
            const int32_t *src = (const int32_t *)f->src + blk * per;
            for (size_t v = 0; v < per; v++)
                dst[v] = src[v];
        }
    }
    *out = s;
    return BL_OK;
fail:
    bl_snapshot_destroy(s);
    return st;
}

bl_status bl_lanes_mode_select(bl_lanes_mode *out, bl_error *err)
{
    static const char *const names[] = {"auto", "always", "never"};
    const char *want = getenv("BL_LANES");
    *out = BL_LANES_AUTO;
    if (!want || !*want)
        return BL_OK;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(want, names[i]) == 0) {
            *out = (bl_lanes_mode)i;
            return BL_OK;
        }
    return bl_fail(err, BL_EVALUE, "BL_LANES=%s: unknown lane policy (choose auto, always or never)",
                   want);
}

/* Two values at a time with SSE2 (the x86-64 baseline; gcc lowers generic
 * vectors of 64-bit comparison results to scalar code there), by IEEE
 * comparisons, which are false for NaN as the scalar checks are; an ok
 * bit per value is kept by AND-ing the comparisons' masks. Elsewhere the
 * loops are scalar. */
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Every |x| below `limit` (and not NaN). */
static bool all_below(const double *p, size_t n, double limit)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128d hi = _mm_set1_pd(limit), lo = _mm_set1_pd(-limit);
    __m128d ok = _mm_cmpeq_pd(hi, hi); /* all ones */
    for (; i + 2 <= n; i += 2) {
        const __m128d d = _mm_loadu_pd(p + i);
        ok = _mm_and_pd(ok, _mm_and_pd(_mm_cmplt_pd(d, hi), _mm_cmpgt_pd(d, lo)));
    }
    if (_mm_movemask_pd(ok) != 3)
        return false;
#endif
    for (; i < n; i++)
        if (!(p[i] < limit && p[i] > -limit))
            return false;
    return true;
}

bool bl_batch_all_finite(const double *p, size_t n, bl_dtype dtype)
{
    /* A double is finite exactly when |x| is below infinity; (float)x,
     * rounded to nearest even, is finite exactly when |x| is below the
     * midpoint between FLT_MAX and 2^128, which rounds up (to even) and
     * everything above it with it. */
    return all_below(p, n, dtype == BL_FLOAT32 ? 0x1.ffffffp127 : INFINITY);
}

bool bl_batch_all_binary(const double *p, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
    __m128d ok = _mm_cmpeq_pd(one, one);
    for (; i + 2 <= n; i += 2) {
        const __m128d d = _mm_loadu_pd(p + i);
        /* -0.0 == 0.0, as the check has it */
        ok = _mm_and_pd(ok, _mm_or_pd(_mm_cmpeq_pd(d, zero), _mm_cmpeq_pd(d, one)));
    }
    if (_mm_movemask_pd(ok) != 3)
        return false;
#endif
    for (; i < n; i++)
        if (!(p[i] == 0.0 || p[i] == 1.0))
            return false;
    return true;
}

bl_status bl_batch_check_cast(const bl_named_values *v, size_t n, const char *prefix,
                              size_t slot, bl_dtype dtype, bl_error *err)
{
    for (size_t k = 0; k < n; k++)
        if (!bl_batch_all_finite(v[k].p, v[k].count, dtype))
            return bl_check_cast(v, n, prefix, slot, dtype, err);
    return BL_OK;
}
