/* What the Falandays and SORN batches share by shape (src/models/ only):
 * creation (checks, header, arrays, slots) driven by a table of the
 * family's parts, the list of a batch's owned per-slot arrays, allocated
 * and released by walking it, freezes, the offsets of the fast kernels'
 * lists, and snapshots as typed copies of one slot's block of each field. The families keep everything that differs: their fields, their
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
    size_t per_slot; /* values per slot, or per wiring with BL_BATCH_PER_WIRING */
} bl_batch_array;

/* Or'ed into per_slot: the array holds one block per wiring
 * (bl_model.wiring), shared read-only by its slots, filled once and never
 * copied from slot to slot. (A flag bit rather than a member, so that the
 * families' positional initializers stay complete.) */
#define BL_BATCH_PER_WIRING (SIZE_MAX ^ (SIZE_MAX >> 1))

/* The most owned arrays a family lists. */
#define BL_BATCH_MAX_ARRAYS 32

/* Allocates every array of the list for nslots slots (nwirings wirings for
 * per_wiring arrays), zeroed and in list order; false when one does not fit
 * or is out of memory (those allocated stay for bl_batch_arrays_destroy). */
bool bl_batch_arrays_create(const bl_batch_array *arrays, size_t count, size_t nslots,
                            size_t nwirings, bl_dtype dtype);
/* Bytes those arrays take (for memory reports). */
size_t bl_batch_arrays_bytes(const bl_batch_array *arrays, size_t count, size_t nslots,
                             size_t nwirings, bl_dtype dtype);
void bl_batch_arrays_destroy(const bl_batch_array *arrays, size_t count);
/* Copies slot `from`'s block of every per-slot array of the list over slot
 * `to`'s (per-wiring arrays are shared, not copied). */
void bl_batch_arrays_copy_slot(const bl_batch_array *arrays, size_t count, size_t from,
                               size_t to, bl_dtype dtype);

/* What creating a batch of a family takes. `initials` is the family's array
 * of pointers to initial states, handed to the callbacks as given; slots
 * given the same pointer as the slot before them are checked once and
 * filled by copy (bl_batch_create). `fill` must write only the slot's
 * blocks of the listed arrays, so that a copy is exactly a fill. */
typedef struct bl_batch_family {
    const char *name; /* in messages: "Falandays", "SORN" */
    bl_model_kind kind;
    const bl_model_ops *ops;
    size_t size; /* of the family's batch, whose first member is its bl_model */
    /* The checks, in three rounds over the slots so that the first failure
     * reported is the reference's: every slot's initial state, then every
     * later slot's dimensions against slot 0's, then every slot's values
     * after the cast to the dtype (§5.3). */
    bl_status (*check_init)(const void *initials, size_t slot, bl_error *err);
    bl_status (*check_same)(const void *initials, size_t slot, bl_error *err);
    bl_status (*check_cast)(const void *initials, size_t slot, bl_dtype dtype, bl_error *err);
    /* The header's N, R and E (and the family's own sizes) from slot 0. */
    void (*ports)(bl_model *m, const void *initials);
    /* The batch's owned arrays (at most BL_BATCH_MAX_ARRAYS), for their
     * allocation and release; returns how many. */
    size_t (*arrays)(bl_model *m, bl_batch_array *out);
    /* Slot's state from its initial state, into the allocated arrays. */
    void (*fill)(bl_model *m, size_t slot, const void *initials);
    /* What the fast kernel sets up once every slot is filled, and the live
     * views; false when out of memory. */
    bool (*finish)(bl_model *m);
} bl_batch_family;

/* Creates a batch of nslots slots of family f from its initial states:
 * checks, the header, the owned arrays, every slot's state, f->finish. On
 * any failure nothing is left allocated (f->ops->destroy releases a batch
 * whatever it got to). */
bl_status bl_batch_create(const bl_batch_family *f, const void *initials, size_t nslots,
                          bl_dtype dtype, bl_model **out, bl_error *err);

/* Releases batch m: the owned arrays of `arrays`, each of the count
 * allocations of `more` (the fast kernel's), the wiring map, then m
 * itself. */
void bl_batch_release(bl_model *m, size_t (*arrays)(bl_model *m, bl_batch_array *out),
                      void *const *more, size_t count);

/* Freezes the active slots: the flag weights[b * stride] of weight
 * plasticity, and with `all` also others[b * stride], go to 0. */
void bl_batch_freeze(size_t slots, const int32_t *active, bool all, int32_t *weights,
                     int32_t *others, size_t stride);

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
    /* Blocks per wiring (bl_model.wiring), not per slot: */
    BL_BATCH_WREAL,  /* [W][d0·d1] values of the dtype */
    BL_BATCH_WINT,   /* [W][d0·d1] int32 */
    BL_BATCH_WBITS,  /* [W][ceil(d0·d1 / 8)] bytes, value v is bit v % 8 of byte v / 8 */
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

/* Exact screens for the creation checks: true when no value would fail
 * the check, so that the family's loop, which finds and names the first
 * failing entry in the reference's order, runs only on a state that fails.
 * They read every value without branching on it, several times faster
 * than those loops (the checks of an N = 256 wiring were ~2 M
 * instructions of a 40 M anchor evaluation). */
/* Every value finite after the cast to dtype (for float32, (float)x). */
bool bl_batch_all_finite(const double *p, size_t n, bl_dtype dtype);
/* Every value exactly 0.0 or 1.0. */
bool bl_batch_all_binary(const double *p, size_t n);
/* bl_check_cast (model_internal.h) behind the screen. */
bl_status bl_batch_check_cast(const bl_named_values *v, size_t n, const char *prefix,
                              size_t slot, bl_dtype dtype, bl_error *err);

/* Whether slots sharing a wiring step in lockstep lanes: BL_LANES_AUTO
 * (the family's policy: lanes only where they were measured to win),
 * BL_LANES_ALWAYS (every wiring of two or more slots, so that tests reach
 * the lane kernels on every instruction set) or BL_LANES_NEVER. Lanes are
 * exact, so the choice changes speed, never results. */
typedef enum bl_lanes_mode {
    BL_LANES_AUTO,
    BL_LANES_ALWAYS,
    BL_LANES_NEVER
} bl_lanes_mode;

/* The environment's BL_LANES ("auto", "always", "never"; unset or empty is
 * auto); any other value is a ValueError naming the choices. Read on every
 * call, so tests may change it between model creations. */
bl_status bl_lanes_mode_select(bl_lanes_mode *out, bl_error *err);

#endif
