/* Internal switches of the SORN batch, for tests and benchmarks only (not
 * part of the public model API).
 *
 * A batch has two implementations of the frame of spec/models.md §3.6:
 *
 *   - the reference kernel (sorn_kernel.h): the spec's loops written out
 *     directly over canonical [destination][source] storage;
 *   - the fast kernel (sorn_fast.h), the default: the E->E synapses of the
 *     initial mask in compressed source-major rows, only the sources that
 *     fired last frame, and transposed copies of the fixed E<->I weights;
 *     slots that share a wiring step in lockstep lanes (sorn_lanes.h).
 *
 * Both give the same bits for the same dtype up to and including the frame
 * in which a slot first reports non-finite. Tests run them side by side on
 * identical inputs; these switches exist for that. */
#ifndef BL_SORN_INTERNAL_H
#define BL_SORN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "brainlesslab/model.h"

/* Switches a SORN batch to the reference kernel (on) or back to the fast
 * one at any point between operations; the state carries over exactly.
 * The reference kernel needs every slot's dense weights, made here: false
 * when out of memory (the batch then keeps its kernel, unchanged). */
bool bl_sorn_set_reference_kernel(bl_model *m, bool on);

/* Slot-frames stepped by each path since creation, so tests can prove that
 * they exercised the paths they mean to. */
typedef struct bl_sorn_paths {
    uint64_t reference;  /* reference kernel batches */
    uint64_t canonical;  /* fast kernel, slot not eligible for compressed rows yet
                            (weights outside the mask neither their initial ±0 nor
                            +0): stepped by the reference frame */
    uint64_t sparse;     /* compressed rows, sources that fired only */
    uint64_t sparse_all; /* compressed rows, every source (weights may be
                            non-finite, where w·0 is NaN, not 0) */
    uint64_t to_sparse;  /* canonical slots moved to compressed rows (their own
                            or their lanes) after a frame cleared their weights
                            outside the mask */
    uint64_t dense_inputs; /* compressed-row frames whose input terms visited
                              every receptor and weight (some input was not
                              finite); the others skip zero terms */
    uint64_t lanes;        /* lockstep lanes (slots sharing a wiring, one per SIMD
                              lane): active slot-frames */
    uint64_t lanes_all;    /* of those, frames whose group visited every source
                              (some active lane's weights may be non-finite) */
    uint64_t lanes_dense_inputs; /* of those, frames whose group summed every input
                                    term (some active lane had a non-finite input) */
} bl_sorn_paths;

void bl_sorn_path_counts(const bl_model *m, bl_sorn_paths *out);

#endif
