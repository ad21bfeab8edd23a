/* Offline analyses of records: probe decoding (spec/platform.md §6).
 *
 * An offline ridge diagnostic of how much binary label information is
 * linearly recoverable from recorded emitted activity. It reads what a run
 * recorded (ProbeEvents and ProbeTrials, §4.11) and never feeds anything
 * back to a run. Observations are copied into a bl_probe_set, which checks
 * each as the reference's ProbeEvent and ProbeTrial constructors do; bl_decode
 * then applies §6's checks in the spec's order with its messages and fits,
 * per (target, task, block) and requested point, the standardised ridge
 * decoder, its label-permutation null and the constant reference. */
#ifndef BRAINLESSLAB_ANALYSIS_H
#define BRAINLESSLAB_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/json.h"
#include "brainlesslab/status.h"

/* One recorded observation (ProbeEvent). Borrowed by bl_probe_set_add_event,
 * which copies every field. */
typedef struct bl_probe_event {
    const char *target_id;
    const char *task;
    int64_t block_id;
    int64_t trial_id;
    const char *entity_id;
    const char *const *feature_ids;
    size_t n_feature_ids;
    const char *point;
    int64_t tick;
    int64_t round;
    int64_t label;              /* 1 or 2 */
    const double *features;
    size_t n_features;
    const char *channel;
} bl_probe_event;

/* One trial's metadata (ProbeTrial); NULL construction_scope and reset take
 * the defaults "block" and "full". */
typedef struct bl_probe_trial {
    const char *target_id;
    const char *task;
    int64_t block_id;
    int64_t trial_id;
    double native_score;        /* NaN for a missing score */
    const char *wiring_id;
    const char *world_seed;
    const char *node_signature;
    const char *interface_signature;
    const char *construction_scope;
    const char *reset;
} bl_probe_trial;

typedef struct bl_probe_set bl_probe_set;

bl_status bl_probe_set_create(bl_probe_set **out, bl_error *err);
void bl_probe_set_destroy(bl_probe_set *s);
/* Checks the event as ProbeEvent does (features a finite non-empty vector;
 * feature ids unique, non-empty, one per feature; target and entity ids
 * non-empty; label 1 or 2; tick >= 0; round 1: BL_EVALUE otherwise) and
 * appends an owned copy. */
bl_status bl_probe_set_add_event(bl_probe_set *s, const bl_probe_event *e, bl_error *err);
bl_status bl_probe_set_add_trial(bl_probe_set *s, const bl_probe_trial *t, bl_error *err);
size_t bl_probe_set_n_events(const bl_probe_set *s);
/* The stored copy of event i: its storage belongs to the set and is
 * read-only for everyone else. */
const bl_probe_event *bl_probe_set_event(const bl_probe_set *s, size_t i);

/* A set from a record's probe rows in bl_record_probes form (records.h):
 * event objects with the ProbeEvent fields (features in features[i],
 * feature_len[i]) and trial objects with the ProbeTrial fields. A field
 * of the wrong kind is BL_EVALUE naming the row. */
bl_status bl_probe_set_from_rows(const bl_json *events, const double *const *features,
                                 const size_t *feature_len, const bl_json *trials,
                                 bl_probe_set **out, bl_error *err);

/* The arguments of decode(...) (§6). */
typedef struct bl_decode_options {
    const char *const *points;
    size_t n_points;
    int64_t fit_trials;
    int64_t validation_trials;
    int64_t evaluation_trials;
    const double *lambdas;
    size_t n_lambdas;
    int64_t split_seed;
    int64_t permutation_seed;
    int64_t memory_budget_bytes;
} bl_decode_options;

/* The defaults: ("cue_end", "delay_end", "response"), 256/128/256,
 * (1e-4, 1e-2, 1, 100), split seed 701, permutation seed 702, 32 MiB. */
bl_decode_options bl_decode_defaults(void);

/* decode(events, trials, ...): the list of DecoderResult objects (groups in
 * sorted (target_id, task, block_id) order, the requested points in the
 * given order within each), with §6's field names; `fitted` and
 * `permutation` are nested DecoderFit objects. Every failed check is
 * BL_EVALUE with §6's message, the memory check BL_ENOMEM "decoder exceeds
 * the declared offline memory budget", a singular system BL_EVALUE
 * "Singular matrix" (NumPy's LinAlgError). The dense solves are LAPACK's
 * dgesv (LAPACKE), as numpy.linalg.solve does them. */
bl_status bl_decode(const bl_probe_set *s, const bl_decode_options *o, bl_json **out,
                    bl_error *err);

#endif
