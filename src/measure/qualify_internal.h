/* The comparison rules of `qualify` and the ledger that collects their
 * verdicts (spec/measurement.md §2.3 as this program applies it to float32
 * against the float64 reference), apart from the lockstep driver so tests
 * can hand them snapshots they built or perturbed themselves.
 *
 * Rules, per array of a snapshot (observed = float32 run, expected =
 * float64 reference):
 *   - integer arrays: equal values;
 *   - binary neural arrays (Falandays spikes and previous; SORN x, y,
 *     prev_x, prev_y, activity): equal values, except where the float64
 *     margin of the unit (its distance from the firing threshold) lies
 *     within the comparison tolerance of the threshold: a different value
 *     there is a declared near-threshold divergence, not a failure, and the
 *     state of the case legitimately diverges from that frame on;
 *   - everything else: |a − b| <= atol + rtol·|b|, NaN equal to NaN.
 * Reset and inactive-slot checks compare two snapshots of one dtype bit for
 * bit. */
#ifndef BL_MEASURE_QUALIFY_INTERNAL_H
#define BL_MEASURE_QUALIFY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/model.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/status.h"
#include "brainlesslab/task.h"

/* |a − b| <= atol + rtol·|b|; NaN equals NaN, an infinity only itself. */
bool bl_qualify_close(double a, double b, double rtol, double atol);
/* Equal values; NaN equals NaN (integer arrays, binary arrays). */
bool bl_qualify_equal(double a, double b);
/* The same bits (reset and inactive-slot checks: -0.0 is not 0.0). */
bool bl_qualify_identical(double a, double b);
/* Whether a binary unit with float64 margin `margin` (signed distance of
 * its drive from the firing threshold) may flip under float32 rounding:
 * |margin| <= atol + rtol·|threshold|, the band in which the tolerance rule
 * already admits the two drives to straddle the threshold. */
bool bl_qualify_near_threshold(double margin, double threshold, double rtol, double atol);

/* The binary arrays of one model frame with the float64 margin and
 * threshold of every element; margin NULL means "exact everywhere" (the
 * initial state, or a frame without a margin). */
typedef struct bl_qualify_binary {
    const char *name;
    const double *margin;     /* [n] or NULL */
    const double *threshold;  /* [n] when margin is given */
    size_t n;
} bl_qualify_binary;

typedef struct bl_qualify_margins {
    size_t count;
    bl_qualify_binary arrays[5];
} bl_qualify_margins;

/* The float64 margin and threshold of every unit of one frame, from the
 * reference's snapshots before and after it:
 *   Falandays: θ_i = targets_before[i]·threshold_mult, pre-reset activation
 *     a_i = acts[i] + spikes[i]·θ_i, margin a_i − θ_i;
 *   SORN: margin = drive[n] (already measured from the threshold), threshold
 *     t_e_before[i] for E units, t_i[k] for I units.
 * margin and threshold have N elements. */
void bl_qualify_frame_margins(bl_model_kind kind, double threshold_mult,
                              const bl_snapshot *before, const bl_snapshot *after,
                              double *margin, double *threshold);
/* The binary arrays of a model kind with their margins: `cur` for this
 * frame's states, `prev` (the previous frame's margins) for the remembered
 * ones; NULL pointers make the arrays exact. n_e is SORN's excitatory
 * count (unused for Falandays). */
void bl_qualify_binary_arrays(bl_model_kind kind, size_t n, size_t n_e, const double *cur,
                              const double *cur_threshold, const double *prev,
                              const double *prev_threshold, bl_qualify_margins *out);

/* Where a comparison happens, for the ledger's records. */
typedef struct bl_qualify_site {
    const char *label;   /* the case, "<config>/<task>" */
    const char *stage;   /* "initial", "frame", "tick", "inactive", "reset" */
    int64_t step;        /* 1-based frame or tick; 0 where there is none */
    const char *prefix;  /* array key prefix: "falandays", "sorn", "<task>/world" */
    const char *what;    /* "float32 vs float64", or the dtype of a bitwise check */
} bl_qualify_site;

typedef enum bl_qualify_verdict {
    BL_QUALIFY_PASSED,
    BL_QUALIFY_DIVERGED,  /* a declared near-threshold divergence: nothing counted */
    BL_QUALIFY_FAILED,
} bl_qualify_verdict;

typedef struct bl_qualify_result {
    bl_qualify_verdict verdict;
    size_t snapshots;  /* arrays compared and counted */
    double max_abs;    /* largest |a − b| over elements finite in both, 0 if none */
} bl_qualify_result;

/* Every verdict of a qualification: counts, largest differences per array
 * key, near-threshold divergences and the first failures. */
typedef struct bl_qualify_ledger bl_qualify_ledger;

bl_status bl_qualify_ledger_create(double rtol, double atol, bl_qualify_ledger **out,
                                   bl_error *err);
void bl_qualify_ledger_destroy(bl_qualify_ledger *l);

/* Compares `observed` with `expected` array by array (the same names and
 * shapes in the same order; a difference there is a failure). `identical`
 * asks for bit equality of everything (no tolerance, no margins, and the
 * differences do not enter the float32-vs-float64 maxima). Otherwise a
 * frame whose binary arrays differ only within the near-threshold band is
 * recorded as divergences and counts nothing; any other difference is a
 * recorded failure. Fails only when out of memory. */
bl_status bl_qualify_compare(bl_qualify_ledger *l, const bl_qualify_site *site,
                             const bl_snapshot *observed, const bl_snapshot *expected,
                             bool identical, const bl_qualify_margins *margins,
                             bl_qualify_result *out, bl_error *err);
/* A failure that is not an array difference (a rejected precision cast). */
bl_status bl_qualify_fail_message(bl_qualify_ledger *l, const char *label, const char *stage,
                                  const char *message, bl_error *err);

size_t bl_qualify_ledger_snapshots(const bl_qualify_ledger *l);
size_t bl_qualify_ledger_failures(const bl_qualify_ledger *l);
size_t bl_qualify_ledger_divergences(const bl_qualify_ledger *l);
double bl_qualify_ledger_max_abs(const bl_qualify_ledger *l);

/* Adds "snapshots", "maximum_absolute_difference", "arrays" ({key:
 * {"snapshots", "maximum_absolute_difference"}}), "near_threshold_divergences",
 * "failure_count" and "failures" (the first BL_QUALIFY_MAX_FAILURES) to
 * `receipt`. */
#define BL_QUALIFY_MAX_FAILURES 20
bl_status bl_qualify_ledger_json(const bl_qualify_ledger *l, bl_json *receipt, bl_error *err);

/* ---- cases (qualify_case.c) ---------------------------------------------- */

#define BL_QUALIFY_PARTITION "development"
/* The reference's qualification applies freeze_weights at (zero-based)
 * frame 6, before stepping (measurement.md §2.2): before the 7th frame. */
#define BL_QUALIFY_FREEZE_FRAME 7

/* A model configuration: its name (a seed key and the receipt's name) and
 * its plan node table. */
typedef struct bl_qualify_config {
    const char *name;
    const char *node;        /* node kind */
    const char *parameters;  /* node.parameters as JSON text */
} bl_qualify_config;

/* A resolved profile plan of one configuration on one task with the
 * options' count and seed: `trials` blocks of one trial (each trial its own
 * wiring), numerics `dtype`. */
bl_status bl_qualify_case_plan(const bl_qualify_config *cfg, bl_task_kind task,
                               const bl_qualify_options *o, int64_t trials, const char *dtype,
                               bl_resolved_plan **out, bl_error *err);
/* One lockstep case into the ledger; its row is appended to `cases`. */
bl_status bl_qualify_case_run(const bl_qualify_config *cfg, bl_task_kind task,
                              const bl_qualify_options *o, bl_qualify_ledger *l, bl_json *cases,
                              bl_error *err);

#endif
