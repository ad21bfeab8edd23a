/* Internal switches of the Falandays batch, for tests and benchmarks only
 * (not part of the public model API).
 *
 * A batch has two implementations of the frame of spec/models.md §2.5:
 *
 *   - the reference kernel (falandays_kernel.h): the spec's loops written
 *     out directly over canonical [destination][source] weights;
 *   - the fast kernel (falandays_fast.h), the default: source-major storage,
 *     only the rows of sources that spiked, and (where the initial state
 *     allows it) compressed rows holding only the synapses of the mask.
 *
 * Both give the same bits for the same dtype up to and including the frame
 * in which a slot first reports non-finite. Tests run them side by side on
 * identical inputs; these switches exist for that. */
#ifndef BL_FALANDAYS_INTERNAL_H
#define BL_FALANDAYS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "brainlesslab/model.h"

typedef enum bl_fal_kernel {
    /* Fast kernel; compressed rows for every slot whose weights outside the
     * mask are all zero and whose mask is sparse enough, source-major dense
     * rows otherwise. The default. */
    BL_FAL_KERNEL_FAST,
    /* Fast kernel restricted to source-major dense rows (no compressed
     * rows), so tests can exercise that path on any state. */
    BL_FAL_KERNEL_DENSE,
    /* The straightforward reference kernel on canonical storage. */
    BL_FAL_KERNEL_REFERENCE,
} bl_fal_kernel;

/* Switches a Falandays batch to another kernel at any point between
 * operations; the state (weights included) carries over exactly. The
 * reference and dense kernels need a dense weight buffer per slot: BL_ENOMEM
 * (nothing changed) when one cannot be allocated. */
bl_status bl_falandays_set_kernel(bl_model *m, bl_fal_kernel kernel);
/* bl_falandays_set_kernel(m, on ? REFERENCE : FAST). */
bl_status bl_falandays_set_reference_kernel(bl_model *m, bool on);

/* Bytes the batch holds now (its struct, per-slot and per-wiring arrays,
 * fast-kernel and lane arrays, dense buffers), for memory reports. */
size_t bl_falandays_bytes(const bl_model *m);

/* Slot-frames stepped by each path since creation, so tests can prove that
 * they exercised the paths they mean to. "_all" paths visit every source,
 * silent ones included: they run only for slots whose weights may hold a
 * non-finite value (after a failed frame), where w·0 is NaN, not 0. */
typedef struct bl_fal_path_counts {
    uint64_t reference;
    uint64_t dense;      /* source-major rows of spiking sources */
    uint64_t dense_all;
    uint64_t sparse;     /* compressed rows of spiking sources */
    uint64_t sparse_all;
    uint64_t to_sparse;  /* dense slots turned sparse by a Dale clearing */
    /* Fast-kernel slot-frames whose input sums visited every receptor and
     * weight (some input was not finite); the others skip zero terms. */
    uint64_t dense_inputs;
    /* Slot-frames stepped in lockstep lanes (slots sharing one wiring,
     * falandays_lanes.h); those are counted nowhere else. */
    uint64_t lanes;
    /* Slots that left their lane for the per-slot path because a weight
     * update was not finite (their frame failed). */
    uint64_t lane_exits;
} bl_fal_path_counts;

void bl_falandays_path_counts(const bl_model *m, bl_fal_path_counts *out);

#endif
