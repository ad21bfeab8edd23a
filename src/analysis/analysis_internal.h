/* Internal to src/analysis: the probe set's storage, which the decoder
 * reads directly. */
#ifndef BL_ANALYSIS_INTERNAL_H
#define BL_ANALYSIS_INTERNAL_H

#include <stddef.h>

#include "brainlesslab/analysis.h"

struct bl_probe_set {
    bl_probe_event *events; /* every pointer inside is owned by the set */
    size_t n_events, cap_events;
    bl_probe_trial *trials;
    size_t n_trials, cap_trials;
};

#endif
