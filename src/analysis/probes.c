/* ProbeEvent and ProbeTrial (spec/platform.md §6, §4.11): owned, checked
 * copies of recorded observations, the decoder's input. Each event is
 * copied whole (strings, feature ids and features) the moment it is added,
 * so later changes to the caller's buffers cannot reach a decoder, and the
 * set hands out only const views of its storage. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "analysis/analysis_internal.h"
#include "brainlesslab/alloc.h"

bl_status bl_probe_set_create(bl_probe_set **out, bl_error *err)
{
    *out = bl_calloc(1, sizeof **out);
    return *out ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory");
}

static void event_free(bl_probe_event *e)
{
    bl_free((char *)e->target_id);
    bl_free((char *)e->task);
    bl_free((char *)e->entity_id);
    bl_free((char *)e->point);
    bl_free((char *)e->channel);
    for (size_t k = 0; e->feature_ids && k < e->n_feature_ids; k++)
        bl_free((char *)e->feature_ids[k]);
    bl_free((void *)e->feature_ids);
    bl_free((void *)e->features);
}

static void trial_free(bl_probe_trial *t)
{
    bl_free((char *)t->target_id);
    bl_free((char *)t->task);
    bl_free((char *)t->wiring_id);
    bl_free((char *)t->world_seed);
    bl_free((char *)t->node_signature);
    bl_free((char *)t->interface_signature);
    bl_free((char *)t->construction_scope);
    bl_free((char *)t->reset);
}

void bl_probe_set_destroy(bl_probe_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_events; i++)
        event_free(&s->events[i]);
    for (size_t i = 0; i < s->n_trials; i++)
        trial_free(&s->trials[i]);
    bl_free(s->events);
    bl_free(s->trials);
    bl_free(s);
}

static bool nonempty(const char *s)
{
    return s && *s;
}

static bl_status check_event(const bl_probe_event *e, bl_error *err)
{
    if (!e->features || e->n_features == 0)
        return bl_fail(err, BL_EVALUE, "probe features must be a finite, non-empty vector");
    for (size_t k = 0; k < e->n_features; k++)
        if (!isfinite(e->features[k]))
            return bl_fail(err, BL_EVALUE, "probe features must be a finite, non-empty vector");
    if (!e->feature_ids || e->n_feature_ids != e->n_features)
        return bl_fail(err, BL_EVALUE,
                       "probe feature IDs must be unique, non-empty and one per feature");
    for (size_t k = 0; k < e->n_feature_ids; k++) {
        if (!nonempty(e->feature_ids[k]))
            return bl_fail(err, BL_EVALUE,
                           "probe feature IDs must be unique, non-empty and one per feature");
        /* Quadratic, but feature counts are reservoir sizes and this runs once per event. */
        for (size_t j = 0; j < k; j++)
            if (strcmp(e->feature_ids[j], e->feature_ids[k]) == 0)
                return bl_fail(err, BL_EVALUE,
                               "probe feature IDs must be unique, non-empty and one per feature");
    }
    if (!nonempty(e->target_id) || !nonempty(e->entity_id))
        return bl_fail(err, BL_EVALUE, "probe target and entity IDs must be non-empty");
    if (!e->task || !e->point || !e->channel)
        return bl_fail(err, BL_EVALUE, "probe task, point and channel are required");
    if (e->label != 1 && e->label != 2)
        return bl_fail(err, BL_EVALUE, "probe labels must be 1 or 2");
    if (e->tick < 0)
        return bl_fail(err, BL_EVALUE, "probe ticks must be non-negative");
    if (e->round != 1)
        return bl_fail(err, BL_EVALUE, "probe events must come from round 1");
    return BL_OK;
}

/* bl_strdup that keeps NULL (a defaulted field) apart from a failure. */
static bool dup(const char **dst, const char *src, const char *fallback)
{
    const char *s = src ? src : fallback;
    if (!s) {
        *dst = NULL;
        return true;
    }
    return (*dst = bl_strdup(s)) != NULL;
}

bl_status bl_probe_set_add_event(bl_probe_set *s, const bl_probe_event *e, bl_error *err)
{
    bl_status st = check_event(e, err);
    if (st != BL_OK)
        return st;
    bl_probe_event *grown = bl_grow(s->events, s->n_events, &s->cap_events, sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ENOMEM, "out of memory storing probe observations");
    s->events = grown;
    bl_probe_event c = *e;
    c.target_id = c.task = c.entity_id = c.point = c.channel = NULL;
    char **ids = bl_calloc(e->n_feature_ids, sizeof *ids);
    double *values = bl_mallocarray(e->n_features, sizeof *values);
    c.feature_ids = (const char *const *)ids;
    c.features = values;
    bool ok = ids && values && dup(&c.target_id, e->target_id, NULL) &&
              dup(&c.task, e->task, NULL) && dup(&c.entity_id, e->entity_id, NULL) &&
              dup(&c.point, e->point, NULL) && dup(&c.channel, e->channel, NULL);
    for (size_t k = 0; ok && k < e->n_feature_ids; k++)
        ok = (ids[k] = bl_strdup(e->feature_ids[k])) != NULL;
    if (!ok) {
        if (!ids)
            c.n_feature_ids = 0;
        event_free(&c);
        return bl_fail(err, BL_ENOMEM, "out of memory storing probe observations");
    }
    memcpy(values, e->features, e->n_features * sizeof *values);
    s->events[s->n_events++] = c;
    return BL_OK;
}

bl_status bl_probe_set_add_trial(bl_probe_set *s, const bl_probe_trial *t, bl_error *err)
{
    if (!t->target_id || !t->task || !t->wiring_id || !t->world_seed || !t->node_signature ||
        !t->interface_signature)
        return bl_fail(err, BL_EVALUE, "probe trial fields are required");
    bl_probe_trial *grown = bl_grow(s->trials, s->n_trials, &s->cap_trials, sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ENOMEM, "out of memory storing probe observations");
    s->trials = grown;
    bl_probe_trial c = {.block_id = t->block_id, .trial_id = t->trial_id,
                        .native_score = t->native_score};
    bool ok = dup(&c.target_id, t->target_id, NULL) && dup(&c.task, t->task, NULL) &&
              dup(&c.wiring_id, t->wiring_id, NULL) && dup(&c.world_seed, t->world_seed, NULL) &&
              dup(&c.node_signature, t->node_signature, NULL) &&
              dup(&c.interface_signature, t->interface_signature, NULL) &&
              dup(&c.construction_scope, t->construction_scope, "block") &&
              dup(&c.reset, t->reset, "full");
    if (!ok) {
        trial_free(&c);
        return bl_fail(err, BL_ENOMEM, "out of memory storing probe observations");
    }
    s->trials[s->n_trials++] = c;
    return BL_OK;
}

size_t bl_probe_set_n_events(const bl_probe_set *s)
{
    return s->n_events;
}

const bl_probe_event *bl_probe_set_event(const bl_probe_set *s, size_t i)
{
    BL_ASSERT(i < s->n_events);
    return &s->events[i];
}

/* ---- from a record's rows ------------------------------------------------ */

static const char *text_field(const bl_json *row, const char *key)
{
    const bl_json *v = bl_json_get(row, key);
    return v && bl_json_kindof(v) == BL_JSON_STRING ? bl_json_get_string(v, NULL) : NULL;
}

static bool int_field(const bl_json *row, const char *key, int64_t *out)
{
    const bl_json *v = bl_json_get(row, key);
    if (!v || bl_json_kindof(v) != BL_JSON_INT)
        return false;
    *out = bl_json_get_int(v);
    return true;
}

static bl_status event_from_row(bl_probe_set *s, const bl_json *row, size_t i,
                                const double *features, size_t n_features, bl_error *err)
{
    bl_probe_event e = {
        .target_id = text_field(row, "target_id"), .task = text_field(row, "task"),
        .entity_id = text_field(row, "entity_id"), .point = text_field(row, "point"),
        .channel = text_field(row, "channel"), .features = features, .n_features = n_features,
    };
    const bl_json *ids = bl_json_get(row, "feature_ids");
    bool ok = e.target_id && e.task && e.entity_id && e.point && e.channel && ids &&
              bl_json_kindof(ids) == BL_JSON_ARRAY && int_field(row, "block_id", &e.block_id) &&
              int_field(row, "trial_id", &e.trial_id) && int_field(row, "tick", &e.tick) &&
              int_field(row, "round", &e.round) && int_field(row, "label", &e.label);
    size_t n = ok ? bl_json_size(ids) : 0;
    for (size_t k = 0; ok && k < n; k++)
        ok = bl_json_kindof(bl_json_at(ids, k)) == BL_JSON_STRING;
    if (!ok)
        return bl_fail(err, BL_EVALUE, "probe event %zu: a field is missing or of the wrong kind",
                       i);
    const char **names = bl_mallocarray(n ? n : 1, sizeof *names);
    if (!names)
        return bl_fail(err, BL_ENOMEM, "out of memory");
    for (size_t k = 0; k < n; k++)
        names[k] = bl_json_get_string(bl_json_at(ids, k), NULL);
    e.feature_ids = names;
    e.n_feature_ids = n;
    bl_status st = bl_probe_set_add_event(s, &e, err);
    bl_free(names);
    if (st != BL_OK)
        bl_error_prefix(err, "probe event %zu", i);
    return st;
}

static bl_status trial_from_row(bl_probe_set *s, const bl_json *row, size_t i, bl_error *err)
{
    bl_probe_trial t = {
        .target_id = text_field(row, "target_id"), .task = text_field(row, "task"),
        .wiring_id = text_field(row, "wiring_id"), .world_seed = text_field(row, "world_seed"),
        .node_signature = text_field(row, "node_signature"),
        .interface_signature = text_field(row, "interface_signature"),
        .construction_scope = text_field(row, "construction_scope"),
        .reset = text_field(row, "reset"),
    };
    const bl_json *score = bl_json_get(row, "native_score");
    bool ok = int_field(row, "block_id", &t.block_id) && int_field(row, "trial_id", &t.trial_id) &&
              score;
    if (ok) {
        bl_json_kind k = bl_json_kindof(score);
        /* A missing score (null) is no score: the decoder's own check names it. */
        t.native_score = k == BL_JSON_REAL  ? bl_json_get_real(score)
                         : k == BL_JSON_INT ? (double)bl_json_get_int(score)
                                            : NAN;
        ok = k == BL_JSON_REAL || k == BL_JSON_INT || k == BL_JSON_NULL;
    }
    bl_status st = ok ? bl_probe_set_add_trial(s, &t, err)
                      : bl_fail(err, BL_EVALUE, "a field is missing or of the wrong kind");
    if (st != BL_OK)
        bl_error_prefix(err, "probe trial %zu", i);
    return st;
}

bl_status bl_probe_set_from_rows(const bl_json *events, const double *const *features,
                                 const size_t *feature_len, const bl_json *trials,
                                 bl_probe_set **out, bl_error *err)
{
    bl_probe_set *s = NULL;
    bl_status st = bl_probe_set_create(&s, err);
    for (size_t i = 0; st == BL_OK && i < bl_json_size(events); i++)
        st = event_from_row(s, bl_json_at(events, i), i, features[i], feature_len[i], err);
    for (size_t i = 0; st == BL_OK && i < bl_json_size(trials); i++)
        st = trial_from_row(s, bl_json_at(trials, i), i, err);
    if (st != BL_OK) {
        bl_probe_set_destroy(s);
        return st;
    }
    *out = s;
    return BL_OK;
}
