/* The 64 development capacity-probe presets (spec/tasks.md §5.11): the
 * probe families' defaults with one or two options varied, in order. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "options_internal.h"

typedef struct preset_list {
    bl_task_preset *items;
    size_t n;
} preset_list;

/* Appends "<task>__<suffix>" with the family's defaults changed by `edit`. */
static bl_status add_preset(preset_list *list, bl_task_kind kind, const char *suffix,
                            const bl_task_options *options, bl_error *err)
{
    bl_task_preset *p = &list->items[list->n];
    memset(p, 0, sizeof *p);
    bl_status st = bl_task_options_copy(options, &p->options, err);
    if (st != BL_OK)
        return st;
    snprintf(p->id, sizeof p->id, "%s__%s", bl_task_name(kind), suffix);
    bl_task_definition d;
    bl_task_define(&p->options, &d);
    p->horizon = d.default_horizon;
    list->n++;
    return BL_OK;
}

/* Appends "<task>__gap_<gap>" for each of the gaps, the family's defaults
 * with that gap (Delayed XOR, Temporal Order). */
static bl_status add_gap_presets(preset_list *list, bl_task_kind kind, const int64_t *gaps,
                                 size_t n, bl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        bl_task_options o;
        bl_status st = bl_task_options_default(kind, &o, err);
        if (st != BL_OK)
            return st;
        o.gap = gaps[i];
        char suffix[32];
        snprintf(suffix, sizeof suffix, "gap_%" PRId64, gaps[i]);
        st = add_preset(list, kind, suffix, &o, err);
        bl_task_options_clear(&o);
        if (st != BL_OK)
            return st;
    }
    return BL_OK;
}

#define BL_PRESET_COUNT 64

bl_status bl_capacity_presets(bl_task_preset **out, size_t *count, bl_error *err)
{
    *out = NULL;
    *count = 0;
    preset_list list = {bl_calloc(BL_PRESET_COUNT, sizeof(bl_task_preset)), 0};
    if (!list.items)
        return bl_fail(err, BL_ENOMEM, "out of memory for the capacity presets");
    bl_task_options o = {0};
    bl_status st = BL_OK;
    char suffix[64];

    static const int64_t delays[] = {0, 8, 32, 128, 256};
    for (size_t i = 0; i < 5; i++) {
        if ((st = bl_task_options_default(BL_TASK_DELAYED_CUE, &o, err)) != BL_OK)
            goto fail;
        o.n_delays = 1;
        o.delays[0] = delays[i];
        snprintf(suffix, sizeof suffix, "delay_%" PRId64, delays[i]);
        st = add_preset(&list, BL_TASK_DELAYED_CUE, suffix, &o, err);
        bl_task_options_clear(&o);
        if (st != BL_OK)
            goto fail;
        if (delays[i] < 32)
            continue;
        static const int64_t distractors[] = {1, 3};
        for (size_t k = 0; k < 2; k++) {
            if ((st = bl_task_options_default(BL_TASK_RECALL_INTERFERENCE, &o, err)) != BL_OK)
                goto fail;
            o.delay = delays[i];
            o.distractors = distractors[k];
            snprintf(suffix, sizeof suffix, "delay_%" PRId64 "_distractors_%" PRId64, delays[i],
                     distractors[k]);
            st = add_preset(&list, BL_TASK_RECALL_INTERFERENCE, suffix, &o, err);
            bl_task_options_clear(&o);
            if (st != BL_OK)
                goto fail;
        }
    }
    static const int64_t xor_gaps[] = {0, 8, 32, 128};
    if ((st = add_gap_presets(&list, BL_TASK_DELAYED_XOR, xor_gaps, 4, err)) != BL_OK)
        goto fail;
    static const int64_t counts[] = {16, 32, 64};
    static const double fractions[] = {0.125, 0.25, 0.5};
    static const bl_congruency congruency[] = {BL_CONGRUENCY_CONGRUENT,
                                               BL_CONGRUENCY_CONFLICTING};
    static const bl_cue_mode modes[] = {BL_CUE_TRANSIENT, BL_CUE_PERSISTENT};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            char base[48];
            snprintf(base, sizeof base, "pulses_%" PRId64 "_evidence_%d", counts[i],
                     (int)(1000.0 * fractions[j]));
            if ((st = bl_task_options_default(BL_TASK_EVIDENCE_ACCUMULATION, &o, err)) != BL_OK)
                goto fail;
            o.pulse_count = counts[i];
            o.evidence_fraction = fractions[j];
            st = add_preset(&list, BL_TASK_EVIDENCE_ACCUMULATION, base, &o, err);
            bl_task_options_clear(&o);
            if (st != BL_OK)
                goto fail;
            for (size_t c = 0; c < 2; c++)
                for (size_t m = 0; m < 2; m++) {
                    if ((st = bl_task_options_default(BL_TASK_CONTEXT_INTEGRATION, &o, err)) !=
                        BL_OK)
                        goto fail;
                    o.pulse_count = counts[i];
                    o.evidence_fraction = fractions[j];
                    o.congruency = congruency[c];
                    o.context_mode = modes[m];
                    snprintf(suffix, sizeof suffix, "%s_%s_%s", base,
                             bl_opt_congruencies[congruency[c]], bl_opt_cue_modes[modes[m]]);
                    st = add_preset(&list, BL_TASK_CONTEXT_INTEGRATION, suffix, &o, err);
                    bl_task_options_clear(&o);
                    if (st != BL_OK)
                        goto fail;
                }
        }
    static const int64_t order_gaps[] = {0, 8, 32};
    if ((st = add_gap_presets(&list, BL_TASK_TEMPORAL_ORDER, order_gaps, 3, err)) != BL_OK)
        goto fail;
    if ((st = bl_task_options_default(BL_TASK_REVERSAL_ADAPTATION, &o, err)) != BL_OK)
        goto fail;
    st = add_preset(&list, BL_TASK_REVERSAL_ADAPTATION, "single_reversal", &o, err);
    bl_task_options_clear(&o);
    if (st != BL_OK)
        goto fail;
    BL_ASSERT(list.n == BL_PRESET_COUNT);
    *out = list.items;
    *count = list.n;
    return BL_OK;
fail:
    bl_capacity_presets_destroy(list.items, list.n);
    return st;
}

void bl_capacity_presets_destroy(bl_task_preset *presets, size_t count)
{
    if (!presets)
        return;
    for (size_t i = 0; i < count; i++)
        bl_task_options_clear(&presets[i].options);
    bl_free(presets);
}
