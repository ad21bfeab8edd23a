/* The isolated stepping benchmark (`profile --isolated`, docs/performance.md
 * "Which measurement to use"): fixed tapes of model inputs and noise, the
 * model batches that step them, and the worker that times the stepping
 * alone. spec/measurement.md §1.1 names what `profile` cannot measure ("for
 * pure stepping time, a later isolated benchmark must reuse allocated
 * state, inject fixed action/noise tapes and measure an equal number of
 * neural frames"); this is that benchmark.
 *
 * stepping_tape.c  the tapes: from a record's replays (the runner's input
 *                  transform and the trials' drive noise, regenerated) or
 *                  synthetic, from a declared seed and distribution
 * stepping.c       the checks of the command line, the groups of slots, the
 *                  timed samples, the final-state digests and the receipt */
#ifndef BL_MEASURE_STEPPING_INTERNAL_H
#define BL_MEASURE_STEPPING_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/model.h"

/* One stream of the tape: what one slot steps, frame after frame, cycling
 * through its `frames` rows. Rows are in the model's dtype, ready for
 * bl_model_step: the inputs already scaled, permuted and blinded as the
 * runner would have (spec/platform.md §4.8), the noise the trial's drive
 * tape drew (rounded to float32 for a float32 model). */
typedef struct bl_step_stream {
    char key[256];          /* the record's trial key, or "synthetic" */
    size_t wiring;          /* its initial state: index into the tape's wirings */
    size_t frames;          /* rows, >= 1 */
    void *inputs;           /* [frames][r] of the dtype */
    void *noise;            /* [frames][n] of the dtype, or NULL: the model
                             * never reads its noise (no Oosawa drive) */
    double *activity;       /* [frames][n]: the activity the record holds for
                             * these frames, or NULL (a synthetic tape) */
} bl_step_stream;

typedef struct bl_step_tape {
    bl_model_kind kind;
    bl_dtype dtype;
    const char *node;       /* "falandays" | "sorn" (static) */
    size_t n, r, e;
    size_t nwirings;
    bl_falandays_init **fal; /* [nwirings] for Falandays, else NULL */
    bl_sorn_init **sorn;     /* [nwirings] for SORN, else NULL */
    size_t nstreams;
    bl_step_stream *streams;
    bl_json *describe;      /* the receipt's "tape" block */
} bl_step_tape;

/* The tape the arguments name (a->tape_record or a->tape_inputs; the
 * checks of bl_stepping_validate passed). Errors are one line: BL_EUSAGE
 * for a flag that conflicts with the record's plan, BL_EVALUE / BL_EKEY /
 * BL_ENOENT naming the record and what is wrong with it. */
bl_status bl_step_tape_build(const bl_profile_args *a, bl_step_tape *tape, bl_error *err);
void bl_step_tape_clear(bl_step_tape *tape);

/* Whether text is a --tape-inputs distribution: "uniform", "bernoulli:P"
 * (0 <= P <= 1) or "normal:SD" (finite SD >= 0). */
bool bl_step_dist_valid(const char *text);

/* The flag checks of --isolated, before anything is read or created:
 * BL_EUSAGE with argparse-style messages. */
bl_status bl_stepping_validate(const bl_profile_args *a, bl_error *err);

/* SHA-256 (hex) of a slot's canonical snapshot (bl_model_snapshot): per
 * array its name, NUL, ndim, both shape extents (uint64 little-endian), the
 * integer flag (one byte) and every value as the IEEE-754 bits of a double
 * (uint64 little-endian). Independent of the batch's layout, lanes, kernel
 * and instruction set, since the snapshot is. */
bl_status bl_step_state_digest(const bl_model *m, size_t slot, char hex[65], bl_error *err);

/* The timed span of a sample, as the receipts state it. */
extern const char bl_stepping_boundary[];

/* The worker of `profile --isolated`: builds the tape and the model
 * batches once, then runs the reference pass, the warm-ups and the
 * samples; *receipt is set unless out of memory. Returns 0 iff complete. */
int bl_stepping_worker(const bl_profile_args *a, const bl_profile_hooks *hooks,
                       bl_json **receipt, bl_error *err);

#endif
