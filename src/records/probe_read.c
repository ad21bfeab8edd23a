/* Reading a record's probe events back (spec/platform.md §4.11, §7.3), for
 * the offline decoder: the inverse of what bl_record_write makes of
 * bl_record_input's probe members. The record must inspect as complete
 * first (§7.6: checksums verified, DONE present), so the decoder only ever
 * sees data a finished run wrote and the manifest vouches for. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "records/records_internal.h"

#define EVENTS_CSV "data/probe_events.csv"
#define TRIALS_CSV "data/probe_trials.csv"
#define FEATURES_NPZ "data/probe_features.npz"

/* How each column of the two CSV files turns back into the value the
 * writer was given (§7.3): integers, a JSON list, a real or null, text. */
typedef enum col_kind { COL_TEXT, COL_INT, COL_JSON, COL_REAL_OR_NULL } col_kind;

typedef struct column {
    const char *name;
    col_kind kind;
} column;

static const column event_columns[] = {
    {"block_id", COL_INT},   {"channel", COL_TEXT},  {"entity_id", COL_TEXT},
    {"feature_array", COL_TEXT}, {"feature_ids", COL_JSON}, {"label", COL_INT},
    {"point", COL_TEXT},     {"round", COL_INT},     {"target_id", COL_TEXT},
    {"task", COL_TEXT},      {"tick", COL_INT},      {"trial_id", COL_INT},
};

static const column trial_columns[] = {
    {"block_id", COL_INT},           {"construction_scope", COL_TEXT},
    {"interface_signature", COL_TEXT}, {"native_score", COL_REAL_OR_NULL},
    {"node_signature", COL_TEXT},    {"reset", COL_TEXT},
    {"target_id", COL_TEXT},         {"task", COL_TEXT},
    {"trial_id", COL_INT},           {"wiring_id", COL_TEXT},
    {"world_seed", COL_TEXT},
};

/* Python int() of what the writer prints for an int: an optional '-' and
 * decimal digits, within int64. */
static bool parse_int(const char *s, int64_t *out)
{
    if (!*s)
        return false;
    const char *d = *s == '-' ? s + 1 : s;
    if (!*d)
        return false;
    for (const char *c = d; *c; c++)
        if (*c < '0' || *c > '9')
            return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = (int64_t)v;
    return true;
}

static bl_status cell_value(const char *what, size_t row, const column *c, const char *text,
                            bl_json **out, bl_error *err)
{
    *out = NULL;
    switch (c->kind) {
    case COL_TEXT:
        *out = bl_json_string(text);
        break;
    case COL_INT: {
        int64_t v;
        if (!parse_int(text, &v))
            return bl_fail(err, BL_EVALUE, "%s: row %zu: %s is not an integer", what, row + 1,
                           c->name);
        *out = bl_json_int(v);
        break;
    }
    case COL_REAL_OR_NULL: {
        if (!*text) {
            *out = bl_json_null();
            break;
        }
        char *end;
        errno = 0;
        double v = strtod(text, &end);
        if (*end || end == text || (errno == ERANGE && isinf(v)))
            return bl_fail(err, BL_EVALUE, "%s: row %zu: %s is not a number", what, row + 1,
                           c->name);
        *out = bl_json_real(v);
        break;
    }
    case COL_JSON: {
        bl_status st = bl_json_parse(text, strlen(text), what, out, err);
        if (st != BL_OK) {
            bl_error_prefix(err, "%s: row %zu", c->name, row + 1);
            return st;
        }
        return BL_OK;
    }
    }
    return *out ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory reading %s", what);
}

/* Every row of `t` as an object of the typed columns. */
static bl_status rows_of(const bl_csv_table *t, const char *what, const column *cols,
                         size_t ncols, bl_json **out, bl_error *err)
{
    long idx[16];
    BL_ASSERT(ncols <= sizeof idx / sizeof *idx);
    for (size_t k = 0; k < ncols; k++)
        if ((idx[k] = bl_csv_column(t, cols[k].name)) < 0)
            return bl_fail(err, BL_EVALUE, "%s: missing column \"%s\"", what, cols[k].name);
    bl_status st = BL_OK;
    bl_json *rows = bl_json_array();
    for (size_t r = 0; rows && st == BL_OK && r < t->nrows; r++) {
        bl_json *o = bl_json_object();
        for (size_t k = 0; st == BL_OK && k < ncols; k++) {
            bl_json *v = NULL;
            st = cell_value(what, r, &cols[k], bl_csv_cell(t, r, (size_t)idx[k]), &v, err);
            if (st == BL_OK)
                bl_json_put(&st, o, cols[k].name, v, err);
        }
        bl_json_push(&st, rows, o, err);
    }
    if (!rows)
        st = bl_fail(err, BL_ENOMEM, "out of memory reading %s", what);
    return bl_json_hand_over(st, rows, out);
}

static bl_status read_rows(const char *record, const char *rel, const column *cols,
                           size_t ncols, bl_json **out, bl_error *err)
{
    char *path = bl_record_path_join(record, rel);
    if (!path)
        return bl_fail(err, BL_ENOMEM, "out of memory");
    char *text = NULL;
    size_t len = 0;
    bl_csv_table t = {0};
    bl_status st = bl_file_read(path, BL_RECORD_PROBE_FILE_MAX, "probe file", BL_FILE_NOFOLLOW,
                                &text, &len, err);
    if (st == BL_OK)
        st = bl_csv_parse(text, len, rel, &t, err);
    if (st == BL_OK)
        st = rows_of(&t, rel, cols, ncols, out, err);
    bl_csv_table_clear(&t);
    bl_free(text);
    bl_free(path);
    return st;
}

/* Each event row's feature vector: the npz member its feature_array names,
 * a float64 vector (§7.3). */
static bl_status join_features(bl_record_probes *p, bl_error *err)
{
    size_t n = bl_json_size(p->events);
    p->features = bl_mallocarray(n ? n : 1, sizeof *p->features);
    p->feature_len = bl_mallocarray(n ? n : 1, sizeof *p->feature_len);
    if (!p->features || !p->feature_len)
        return bl_fail(err, BL_ENOMEM, "out of memory reading probe features");
    for (size_t i = 0; i < n; i++) {
        const char *name = bl_json_get_string(bl_json_get(bl_json_at(p->events, i),
                                                          "feature_array"), NULL);
        const bl_npy *a = bl_npz_get(p->npz, name);
        if (!a)
            return bl_fail(err, BL_EVALUE, FEATURES_NPZ ": no member \"%s.npy\" for row %zu of "
                           EVENTS_CSV, name, i + 1);
        if (a->dtype != BL_NPY_F8 || a->ndim != 1)
            return bl_fail(err, BL_EVALUE,
                           FEATURES_NPZ ": member \"%s.npy\" is not a 1-D float64 array", name);
        p->features[i] = a->data;
        p->feature_len[i] = a->count;
    }
    return BL_OK;
}

bl_status bl_record_probes_read(const char *record, bl_record_probes *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_json *map = NULL;
    bl_status st = bl_record_inspect(record, &map, err);
    if (st != BL_OK)
        return st;
    const char *status = bl_json_get_string(bl_json_get(map, "status"), NULL);
    if (!bl_json_get_bool(bl_json_get(map, "complete"))) {
        st = bl_fail(err, BL_EVALUE, "decoding requires a complete record; this record is %s",
                     status);
        goto done;
    }
    const bl_json *artifacts = bl_json_get(bl_json_get(map, "manifest"), "artifacts");
    bool has_events = false;
    for (size_t i = 0; i < bl_json_size(artifacts); i++)
        has_events = has_events ||
                     strcmp(bl_json_get_string(bl_json_at(artifacts, i), NULL), EVENTS_CSV) == 0;
    if (!has_events) {
        st = bl_fail(err, BL_EVALUE,
                     "the record holds no probe events (run its plan with --recording probe_events)");
        goto done;
    }
    st = read_rows(record, EVENTS_CSV, event_columns, sizeof event_columns / sizeof *event_columns,
                   &out->events, err);
    if (st == BL_OK)
        st = read_rows(record, TRIALS_CSV, trial_columns,
                       sizeof trial_columns / sizeof *trial_columns, &out->trials, err);
    if (st == BL_OK) {
        char *path = bl_record_path_join(record, FEATURES_NPZ);
        st = path ? bl_npz_read(path, BL_RECORD_PROBE_FILE_MAX, &out->npz, err)
                  : bl_fail(err, BL_ENOMEM, "out of memory");
        bl_free(path);
    }
    if (st == BL_OK)
        st = join_features(out, err);
done:
    bl_json_destroy(map);
    if (st != BL_OK)
        bl_record_probes_clear(out);
    return st;
}

void bl_record_probes_clear(bl_record_probes *p)
{
    bl_json_destroy(p->events);
    bl_json_destroy(p->trials);
    bl_npz_destroy(p->npz);
    bl_free(p->features);
    bl_free(p->feature_len);
    memset(p, 0, sizeof *p);
}
