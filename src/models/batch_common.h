/* What the Falandays and SORN batches share by shape (src/models/ only):
 * the list of a batch's owned per-slot arrays, allocated and released by
 * walking it, and snapshots as typed copies of one slot's block of each
 * field. The families keep everything that differs: their fields, their
 * kernels, and the plastic weights, which the fast kernels may hold in a
 * layout of their own and export themselves. */
#ifndef BL_BATCH_COMMON_H
#define BL_BATCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/model_internal.h"

/* One owned array of a batch, per_slot values for each slot. Exactly one of
 * the three is set: the field's own pointer type, so that allocation never
 * writes through a differently typed lvalue. */
typedef struct bl_batch_array {
    void **real;     /* values of the batch dtype */
    uint8_t **bytes;
    int32_t **ints;
    size_t per_slot; /* values per slot */
} bl_batch_array;

/* Allocates every array of the list for nslots slots, zeroed and in list
 * order; false when one does not fit or is out of memory (those allocated
 * stay for bl_batch_arrays_destroy). */
bool bl_batch_arrays_create(const bl_batch_array *arrays, size_t count, size_t nslots,
                            bl_dtype dtype);
void bl_batch_arrays_destroy(const bl_batch_array *arrays, size_t count);

/* The offsets of per-column lists of the non-zero entries of slot b's block
 * of a [B][rows][cols] array of reals of the dtype (the fast kernels' input
 * and readout lists): ptr[0] = start, and ptr[c + 1] = ptr[c] plus column
 * c's count rounded up to a multiple of pad. Returns ptr[cols]. */
size_t bl_batch_column_lists(const void *values, bl_dtype dtype, size_t b, size_t rows,
                             size_t cols, size_t pad, size_t start, size_t *ptr);

/* How a snapshot field is stored in the batch. */
typedef enum bl_batch_kind {
    BL_BATCH_REAL,   /* [B][d0·d1] values of the dtype */
    BL_BATCH_BYTE,   /* [B][d0·d1] uint8 */
    BL_BATCH_INT,    /* [B][d0·d1] int32 */
    BL_BATCH_LAYOUT, /* exported by the family (weights in a kernel's layout) */
} bl_batch_kind;

/* One entry of a snapshot: its name and shape (bl_snapshot_entry's), where
 * the slots' blocks are, and whether its values are integers. */
typedef struct bl_batch_field {
    const char *name;
    int ndim;
    size_t d0, d1;
    bl_batch_kind kind;
    const void *src;
    bool integer;
} bl_batch_field;

/* The snapshot of slot b: one entry per field, in order, each a typed copy
 * of the slot's block; BL_BATCH_LAYOUT fields go through export_layout. */
bl_status bl_batch_snapshot(const bl_model *m, size_t b, const bl_batch_field *fields,
                            size_t count,
                            void (*export_layout)(const bl_model *m, size_t b, double *dst),
                            bl_snapshot **out, bl_error *err);

#endif
