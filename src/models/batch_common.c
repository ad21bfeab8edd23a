/* The storage and snapshot plumbing that the Falandays and SORN batches
 * share (batch_common.h): walking a batch's list of owned arrays, the
 * offsets of the fast kernels' lists, and copying one slot's block of each
 * field into a snapshot. */
#include "models/batch_common.h"

#include "brainlesslab/alloc.h"

bool bl_batch_arrays_create(const bl_batch_array *arrays, size_t count, size_t nslots,
                            bl_dtype dtype)
{
    for (size_t k = 0; k < count; k++) {
        size_t n;
        if (!bl_size_mul(arrays[k].per_slot, nslots, &n))
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
        /* Values per slot; the slot's block starts at b times that. */
        const size_t per = s->arrays[k].shape[0] * s->arrays[k].shape[1];
        if (f->kind == BL_BATCH_LAYOUT) {
            export_layout(m, b, dst);
        } else if (f->kind == BL_BATCH_REAL) {
            if (m->dtype == BL_FLOAT32) {
                const float *src = (const float *)f->src + b * per;
                for (size_t v = 0; v < per; v++)
                    dst[v] = (double)src[v];
            } else {
                const double *src = (const double *)f->src + b * per;
                for (size_t v = 0; v < per; v++)
                    dst[v] = src[v];
            }
        } else if (f->kind == BL_BATCH_BYTE) {
            const uint8_t *src = (const uint8_t *)f->src + b * per;
            for (size_t v = 0; v < per; v++)
                dst[v] = src[v];
        } else {
            const int32_t *src = (const int32_t *)f->src + b * per;
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
