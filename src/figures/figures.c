/* The figures of a record (include/brainlesslab/figures.h): what is read,
 * how each figure is laid out, and how the output directory is made.
 *
 * Every number drawn comes from the record's own files: the summaries and
 * contrasts of summary/summary.json, the block means recomputed from
 * trials.csv by the rule of spec/platform.md §5.2 (the mean of a block's
 * raw outcomes, kept only when all its trials completed), the sweep cells
 * from request.toml, the probe trials and events from data/, and decode's
 * DecoderResult list. */
/* realpath() is XSI, beyond the project's _POSIX_C_SOURCE. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/figures.h"
#include "brainlesslab/file.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "figures/figures_internal.h"

static const char *const point_order[] = {"cue_end", "delay_end", "response"};
#define N_POINTS 3

typedef struct ctx {
    const char *record;
    bl_json *map;
    const bl_json *hashes;
    const char *record_id;
    bl_json *summary, *request, *decoded;
    bl_csv_table trials, ptrials, pevents;
    bool probes;
    bl_figure_set *set;
} ctx;

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory drawing figures");
}

static const char *str_of(const bl_json *v, const char *key)
{
    const bl_json *s = bl_json_if(bl_json_get(v, key), BL_JSON_STRING);
    return s ? bl_json_get_string(s, NULL) : NULL;
}

static bool is_number(const bl_json *v)
{
    return v && (bl_json_kindof(v) == BL_JSON_INT || bl_json_kindof(v) == BL_JSON_REAL);
}

static double num(const bl_json *v)
{
    return bl_json_kindof(v) == BL_JSON_INT ? (double)bl_json_get_int(v) : bl_json_get_real(v);
}

/* A pair [low, high] of numbers, or false. */
static bool pair_of(const bl_json *v, double *lo, double *hi)
{
    if (!bl_json_if(v, BL_JSON_ARRAY) || bl_json_size(v) != 2 || !is_number(bl_json_at(v, 0)) ||
        !is_number(bl_json_at(v, 1)))
        return false;
    *lo = num(bl_json_at(v, 0));
    *hi = num(bl_json_at(v, 1));
    return true;
}

/* Widens r to a target summary's raw estimate and its interval, where the
 * summary has them. */
static void range_add_estimate(bl_range *r, const bl_json *summary)
{
    const bl_json *raw = bl_json_get(bl_json_get(summary, "outcome"), "raw");
    if (is_number(raw))
        bl_range_add(r, num(raw));
    double lo, hi;
    if (pair_of(bl_json_get(summary, "raw_interval"), &lo, &hi)) {
        bl_range_add(r, lo);
        bl_range_add(r, hi);
    }
}

/* An artifact's bytes, checked against the manifest's checksum once more
 * (the record may have changed since it was inspected). */
static bl_status read_artifact(const ctx *c, const char *rel, char **text, size_t *len,
                               bl_error *err)
{
    *text = NULL;
    const char *want = str_of(c->hashes, rel);
    if (!want)
        return bl_fail(err, BL_EVALUE, "the record holds no %s", rel);
    return bl_record_artifact_read(c->record, rel, want, BL_RECORD_PROBE_FILE_MAX, "record",
                                   text, len, err);
}

static bl_status read_csv(const ctx *c, const char *rel, bl_csv_table *t, bl_error *err)
{
    char *text;
    size_t len;
    bl_status st = read_artifact(c, rel, &text, &len, err);
    if (st == BL_OK)
        st = bl_csv_parse(text, len, rel, t, err);
    bl_free(text);
    return st;
}

/* The column `name` of t, which must exist. */
static bl_status column(const bl_csv_table *t, const char *what, const char *name, size_t *col,
                        bl_error *err)
{
    long k = bl_csv_column(t, name);
    if (k < 0)
        return bl_fail(err, BL_EVALUE, "%s: missing column \"%s\"", what, name);
    *col = (size_t)k;
    return BL_OK;
}

static bool parse_real(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return *s && !*end && isfinite(*out);
}

/* ---- the figure list ------------------------------------------------------ */

/* A file name part made of the key's safe characters. */
static void safe_name(bl_buf *b, const char *s)
{
    for (; *s; s++) {
        char ch = *s;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                  ch == '_' || ch == '-';
        bl_buf_putc(b, ok ? ch : '_');
    }
}

/* Hands the chart's buffer over to a new figure of the set. */
static bl_status add_figure(ctx *c, const char *kind, const char *stem, const char *key,
                            const char *title, bl_chart *chart, bl_buf *svg, bl_error *err)
{
    bl_figure_set *s = c->set;
    bl_figure *items = bl_realloc(s->items, (s->n + 1) * sizeof *items);
    if (!items)
        return nomem(err);
    s->items = items;
    bl_figure *f = &items[s->n];
    memset(f, 0, sizeof *f);
    bl_buf name;
    bl_buf_init(&name);
    bl_buf_puts(&name, stem);
    safe_name(&name, key);
    bl_buf_puts(&name, ".svg");
    bl_status st = bl_buf_status(&name, err);
    if (st == BL_OK)
        st = bl_buf_status(svg, err);
    f->file = st == BL_OK ? bl_buf_take(&name, NULL) : NULL;
    f->kind = bl_strdup(kind);
    f->title = bl_strdup(title);
    bl_buf_clear(&name);
    if (st == BL_OK && (!f->file || !f->kind || !f->title))
        st = nomem(err);
    if (st != BL_OK) {
        bl_free(f->file);
        bl_free(f->kind);
        bl_free(f->title);
        return st;
    }
    f->marks = chart->marks;
    f->svg = *svg;
    bl_buf_init(svg);
    s->n++;
    return BL_OK;
}

/* What an outcome key measures (spec/tasks.md §9.1), for axis labels. */
static const char *unit_of(const char *key)
{
    static const struct {
        const char *key, *unit;
    } units[] = {
        {"track_score", "mean cos of heading error"},
        {"hit_rate", "fraction of balls hit"},
        {"fitness", "steps survived"},
        {"recall_accuracy", "fraction correct"},
        {"probe_accuracy", "fraction correct"},
        {"adaptation_accuracy", "fraction correct"},
    };
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strcmp(units[i].key, key) == 0)
            return units[i].unit;
    return "native units";
}

static void axis_label(char *out, size_t n, const char *what, const char *key)
{
    snprintf(out, n, "%s%s (%s)", what, key, unit_of(key));
}

/* ---- block means (§5.2 step 2) ------------------------------------------- */

typedef struct blocks {
    double *values;
    size_t n;
} blocks;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static bl_status block_means(const ctx *c, const char *target, blocks *out, bl_error *err)
{
    out->values = NULL;
    out->n = 0;
    size_t ct = 0, cb = 0, cs = 0, cr = 0;
    const bl_csv_table *t = &c->trials;
    bl_status st = column(t, "trials.csv", "target_id", &ct, err);
    if (st == BL_OK)
        st = column(t, "trials.csv", "block_id", &cb, err);
    if (st == BL_OK)
        st = column(t, "trials.csv", "status", &cs, err);
    if (st == BL_OK)
        st = column(t, "trials.csv", "raw", &cr, err);
    if (st != BL_OK)
        return st;
    int64_t *ids = bl_mallocarray(t->nrows ? t->nrows : 1, sizeof *ids);
    out->values = bl_mallocarray(t->nrows ? t->nrows : 1, sizeof *out->values);
    if (!ids || !out->values) {
        bl_free(ids);
        return nomem(err);
    }
    size_t nids = 0;
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(bl_csv_cell(t, r, ct), target) == 0)
            ids[nids++] = strtoll(bl_csv_cell(t, r, cb), NULL, 10);
    qsort(ids, nids, sizeof *ids, cmp_i64);
    for (size_t i = 0; i < nids; i++) {
        if (i && ids[i] == ids[i - 1])
            continue;
        double sum = 0.0;
        size_t n = 0, done = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            if (strcmp(bl_csv_cell(t, r, ct), target) != 0 ||
                strtoll(bl_csv_cell(t, r, cb), NULL, 10) != ids[i])
                continue;
            n++;
            double v;
            if (strcmp(bl_csv_cell(t, r, cs), "completed") == 0 &&
                parse_real(bl_csv_cell(t, r, cr), &v)) {
                sum += v;
                done++;
            }
        }
        if (done == n && n > 0)
            out->values[out->n++] = sum / (double)n;
    }
    bl_free(ids);
    return BL_OK;
}

/* ---- outcomes ------------------------------------------------------------- */

/* The distinct outcome keys of the summaries, in plan order. */
static size_t outcome_keys(const bl_json *items, const char *field, const char **keys, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < bl_json_size(items); i++) {
        const bl_json *it = bl_json_at(items, i);
        const char *k = field ? str_of(bl_json_get(it, field), "key") : str_of(it, "key");
        if (!k)
            continue;
        bool seen = false;
        for (size_t j = 0; j < n; j++)
            seen = seen || strcmp(keys[j], k) == 0;
        if (!seen && n < max)
            keys[n++] = k;
    }
    return n;
}

#define MAX_KEYS 64

static bl_status outcomes_figure(ctx *c, const char *key, bl_error *err)
{
    const bl_json *sums = bl_json_get(c->summary, "summaries");
    size_t n = 0;
    const char **cats = bl_mallocarray(bl_json_size(sums) + 1, sizeof *cats);
    blocks *bv = bl_calloc(bl_json_size(sums) + 1, sizeof *bv);
    const bl_json **rows = bl_mallocarray(bl_json_size(sums) + 1, sizeof *rows);
    bl_status st = cats && bv && rows ? BL_OK : nomem(err);
    bl_range yr = {0};
    bool banded = false;
    for (size_t i = 0; st == BL_OK && i < bl_json_size(sums); i++) {
        const bl_json *s = bl_json_at(sums, i);
        const char *k = str_of(bl_json_get(s, "outcome"), "key");
        const char *id = str_of(s, "target_id");
        if (!k || !id || strcmp(k, key) != 0)
            continue;
        rows[n] = s;
        cats[n] = id;
        st = block_means(c, id, &bv[n], err);
        for (size_t b = 0; st == BL_OK && b < bv[n].n; b++)
            bl_range_add(&yr, bv[n].values[b]);
        range_add_estimate(&yr, s);
        const bl_json *adj = bl_json_if(bl_json_get(s, "adjusted"), BL_JSON_OBJECT);
        double lo, hi;
        if (adj && pair_of(bl_json_get(adj, "null_interval"), &lo, &hi)) {
            bl_range_add(&yr, lo);
            bl_range_add(&yr, hi);
            banded = true;
        }
        n++;
    }
    if (st != BL_OK || n == 0)
        goto done;
    bl_buf svg;
    bl_buf_init(&svg);
    bl_chart ch = {.categories = cats, .ncategories = n, .x0 = -0.5, .x1 = (double)n - 0.5};
    bl_range_finish(&yr, &ch.y0, &ch.y1);
    char title[512], ylabel[256];
    snprintf(title, sizeof title, "%s: %s per target", c->record_id, key);
    axis_label(ylabel, sizeof ylabel, "", key);
    bl_chart_begin(&ch, &svg, title, "target", ylabel);
    for (size_t i = 0; i < n; i++) {
        const bl_json *s = rows[i];
        const bl_json *adj = bl_json_if(bl_json_get(s, "adjusted"), BL_JSON_OBJECT);
        double lo, hi;
        if (adj && pair_of(bl_json_get(adj, "null_interval"), &lo, &hi) &&
            is_number(bl_json_get(adj, "null_mean")))
            bl_chart_band(&ch, "null-band", cats[i], (double)i - 0.4, (double)i + 0.4, lo,
                          num(bl_json_get(adj, "null_mean")), hi);
        /* Block means spread left of the estimate, so none hides another. */
        for (size_t b = 0; b < bv[i].n; b++) {
            double dx = bv[i].n > 1 ? -0.3 + 0.2 * (double)b / (double)(bv[i].n - 1) : -0.2;
            bl_chart_point(&ch, "block-mean", NULL, cats[i], (double)i + dx, bv[i].values[b],
                           BL_SHAPE_CIRCLE, false, 3.0);
        }
        const bl_json *raw = bl_json_get(bl_json_get(s, "outcome"), "raw");
        if (pair_of(bl_json_get(s, "raw_interval"), &lo, &hi))
            bl_chart_interval(&ch, "interval", NULL, cats[i], (double)i + 0.1, lo, hi, 6.0);
        if (is_number(raw))
            bl_chart_point(&ch, "estimate", NULL, cats[i], (double)i + 0.1, num(raw),
                           BL_SHAPE_SQUARE, true, 4.5);
        else
            bl_chart_note(&ch, (double)i, (ch.y0 + ch.y1) / 2, "no estimate (failed trials)");
    }
    bl_chart_legend(&ch, BL_LEGEND_MARKER, "block mean", BL_SHAPE_CIRCLE, false, 0);
    bl_chart_legend(&ch, BL_LEGEND_MARKER, "estimate (mean of blocks)", BL_SHAPE_SQUARE, true, 0);
    bl_chart_legend(&ch, BL_LEGEND_INTERVAL, "95 % bootstrap interval", BL_SHAPE_CIRCLE, false, 0);
    if (banded) {
        bl_chart_legend(&ch, BL_LEGEND_BAND, "null 95 % interval", BL_SHAPE_CIRCLE, false, 0);
        bl_chart_legend(&ch, BL_LEGEND_RULE, "null mean", BL_SHAPE_CIRCLE, false, 1);
    }
    bl_chart_end(&ch);
    st = add_figure(c, "outcomes", "outcomes-", key, title, &ch, &svg, err);
    bl_buf_clear(&svg);
done:
    for (size_t i = 0; bv && i < n; i++)
        bl_free(bv[i].values);
    bl_free(bv);
    bl_free(cats);
    bl_free(rows);
    return st;
}

/* ---- contrasts (§5.4) ------------------------------------------------------ */

static bl_status contrasts_figure(ctx *c, const char *key, bl_error *err)
{
    const bl_json *all = bl_json_get(c->summary, "contrasts");
    const size_t total = bl_json_size(all);
    const bl_json **rows = bl_mallocarray(total + 1, sizeof *rows);
    char **cats = bl_calloc(total + 1, sizeof *cats);
    bl_status st = rows && cats ? BL_OK : nomem(err);
    size_t n = 0;
    bl_range yr = {0};
    bl_range_add(&yr, 0.0);
    for (size_t i = 0; st == BL_OK && i < total; i++) {
        const bl_json *k = bl_json_at(all, i);
        const char *ck = str_of(k, "key"), *status = str_of(k, "status");
        if (!ck || strcmp(ck, key) != 0 || !status || strcmp(status, "paired_raw") != 0)
            continue;
        const char *t = str_of(k, "target_id"), *r = str_of(k, "reference_id");
        size_t len = strlen(t ? t : "") + strlen(r ? r : "") + 8;
        if (!(cats[n] = bl_malloc(len))) {
            st = nomem(err);
            break;
        }
        snprintf(cats[n], len, "%s - %s", t ? t : "", r ? r : "");
        rows[n++] = k;
        const bl_json *d = bl_json_get(k, "block_differences");
        for (size_t j = 0; j < bl_json_size(d); j++)
            if (is_number(bl_json_at(d, j)))
                bl_range_add(&yr, num(bl_json_at(d, j)));
        double lo, hi;
        if (pair_of(bl_json_get(k, "interval"), &lo, &hi)) {
            bl_range_add(&yr, lo);
            bl_range_add(&yr, hi);
        }
    }
    if (st == BL_OK && n > 0) {
        bl_buf svg;
        bl_buf_init(&svg);
        bl_chart ch = {.categories = (const char *const *)cats, .ncategories = n, .x0 = -0.5,
                       .x1 = (double)n - 0.5};
        bl_range_finish(&yr, &ch.y0, &ch.y1);
        char title[512], ylabel[256];
        snprintf(title, sizeof title, "%s: paired contrasts of %s", c->record_id, key);
        axis_label(ylabel, sizeof ylabel, "difference in ", key);
        bl_chart_begin(&ch, &svg, title, "target - reference (paired worlds)", ylabel);
        bl_chart_hline(&ch, "zero-line", 0.0, 0);
        for (size_t i = 0; i < n; i++) {
            const bl_json *d = bl_json_get(rows[i], "block_differences");
            size_t m = bl_json_size(d);
            for (size_t j = 0; j < m; j++) {
                double dx = m > 1 ? -0.3 + 0.2 * (double)j / (double)(m - 1) : -0.2;
                if (is_number(bl_json_at(d, j)))
                    bl_chart_point(&ch, "block-difference", NULL, cats[i], (double)i + dx,
                                   num(bl_json_at(d, j)), BL_SHAPE_CIRCLE, false, 3.0);
            }
            double lo, hi;
            if (pair_of(bl_json_get(rows[i], "interval"), &lo, &hi))
                bl_chart_interval(&ch, "interval", NULL, cats[i], (double)i + 0.1, lo, hi, 6.0);
            if (is_number(bl_json_get(rows[i], "estimate")))
                bl_chart_point(&ch, "estimate", NULL, cats[i], (double)i + 0.1,
                               num(bl_json_get(rows[i], "estimate")), BL_SHAPE_DIAMOND, true,
                               4.0);
        }
        bl_chart_legend(&ch, BL_LEGEND_MARKER, "block difference", BL_SHAPE_CIRCLE, false, 0);
        bl_chart_legend(&ch, BL_LEGEND_MARKER, "mean paired difference", BL_SHAPE_DIAMOND, true,
                        0);
        bl_chart_legend(&ch, BL_LEGEND_INTERVAL, "95 % bootstrap interval", BL_SHAPE_CIRCLE,
                        false, 0);
        bl_chart_legend(&ch, BL_LEGEND_RULE, "no difference", BL_SHAPE_CIRCLE, false, 0);
        bl_chart_end(&ch);
        st = add_figure(c, "contrasts", "contrasts-", key, title, &ch, &svg, err);
        bl_buf_clear(&svg);
    }
    for (size_t i = 0; cats && i < n; i++)
        bl_free(cats[i]);
    bl_free(cats);
    bl_free(rows);
    return st;
}

/* ---- sweeps ---------------------------------------------------------------- */

/* One swept cell: its target's summary and its place on the chart. */
typedef struct cell {
    const bl_json *summary;
    double x;
    size_t series;
} cell;

/* Canonical JSON text of a value, for category and series names. */
static char *value_text(const bl_json *v)
{
    char *s = NULL;
    size_t len;
    bl_error e = {0};
    return bl_json_canonical(v, &s, &len, &e) == BL_OK ? s : NULL;
}

/* The index of `s` in list (appended when new), or SIZE_MAX without memory. */
static size_t intern(char ***list, size_t *n, char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*list)[i], s) == 0) {
            bl_free(s);
            return i;
        }
    char **grown = bl_realloc(*list, (*n + 1) * sizeof *grown);
    if (!grown) {
        bl_free(s);
        return SIZE_MAX;
    }
    *list = grown;
    grown[*n] = s;
    return (*n)++;
}

static const bl_json *request_target(const ctx *c, const char *id)
{
    const bl_json *ts = bl_json_get(c->request, "targets");
    for (size_t i = 0; id && i < bl_json_size(ts); i++)
        if (str_of(bl_json_at(ts, i), "id") && strcmp(str_of(bl_json_at(ts, i), "id"), id) == 0)
            return bl_json_at(ts, i);
    return NULL;
}

static const bl_json *params_of(const bl_json *target)
{
    return bl_json_get(bl_json_get(bl_json_get(target, "composition"), "node"), "parameters");
}

/* The swept parameter names in the order the labels give them: a sweep's
 * label is Python's repr of the cell ({'leak': 0.1}), and a name is an axis
 * when "'<name>': " is in it. */
static size_t sweep_axes(const ctx *c, const char **axes, size_t max)
{
    const bl_json *first = bl_json_at(bl_json_get(c->request, "targets"), 0);
    const char *label = str_of(first, "label");
    const bl_json *params = params_of(first);
    if (!label || !bl_json_if(params, BL_JSON_OBJECT))
        return 0;
    size_t n = 0;
    const char *at[MAX_KEYS];
    for (size_t i = 0; i < bl_json_size(params) && n < max; i++) {
        const char *name = bl_json_key_at(params, i, NULL);
        char pat[300];
        snprintf(pat, sizeof pat, "'%s': ", name);
        const char *p = strstr(label, pat);
        if (!p)
            continue;
        size_t j = n++;
        for (; j > 0 && at[j - 1] > p; j--) {
            at[j] = at[j - 1];
            axes[j] = axes[j - 1];
        }
        at[j] = p;
        axes[j] = name;
    }
    return n;
}

static int cmp_cell(const void *a, const void *b)
{
    const cell *x = a, *y = b;
    if (x->series != y->series)
        return x->series < y->series ? -1 : 1;
    return (x->x > y->x) - (x->x < y->x);
}

static bl_status sweep_figure(ctx *c, const char *key, bl_error *err)
{
    const char *axes[MAX_KEYS];
    const size_t naxes = sweep_axes(c, axes, MAX_KEYS);
    if (naxes == 0)
        return BL_OK;
    const bl_json *sums = bl_json_get(c->summary, "summaries");
    cell *cells = bl_calloc(bl_json_size(sums) + 1, sizeof *cells);
    char **xcats = NULL, **series = NULL;
    size_t nx = 0, nseries = 0, n = 0;
    bl_status st = cells ? BL_OK : nomem(err);
    /* Numeric x when every cell's first-axis value is a number. */
    bool numeric = true;
    for (size_t i = 0; i < bl_json_size(sums); i++) {
        const bl_json *t = request_target(c, str_of(bl_json_at(sums, i), "target_id"));
        numeric = numeric && is_number(bl_json_get(params_of(t), axes[0]));
    }
    bl_range yr = {0}, xr = {0};
    for (size_t i = 0; st == BL_OK && i < bl_json_size(sums); i++) {
        const bl_json *s = bl_json_at(sums, i);
        const char *k = str_of(bl_json_get(s, "outcome"), "key");
        const bl_json *t = request_target(c, str_of(s, "target_id"));
        const bl_json *params = params_of(t);
        if (!k || strcmp(k, key) != 0 || !t || !bl_json_get(params, axes[0]))
            continue;
        cell *ce = &cells[n];
        ce->summary = s;
        const bl_json *xv = bl_json_get(params, axes[0]);
        if (numeric) {
            ce->x = num(xv);
        } else {
            char *txt = value_text(xv);
            size_t idx = txt ? intern(&xcats, &nx, txt) : SIZE_MAX;
            if (idx == SIZE_MAX) {
                st = nomem(err);
                break;
            }
            ce->x = (double)idx;
        }
        bl_buf sk;
        bl_buf_init(&sk);
        for (size_t a = 1; a < naxes; a++) {
            char *txt = value_text(bl_json_get(params, axes[a]));
            bl_buf_printf(&sk, "%s%s=%s", a > 1 ? ", " : "", axes[a], txt ? txt : "?");
            bl_free(txt);
        }
        if (naxes == 1)
            bl_buf_puts(&sk, "estimate");
        char *name = bl_buf_status(&sk, err) == BL_OK ? bl_buf_take(&sk, NULL) : NULL;
        bl_buf_clear(&sk);
        ce->series = name ? intern(&series, &nseries, name) : SIZE_MAX;
        if (ce->series == SIZE_MAX) {
            st = nomem(err);
            break;
        }
        bl_range_add(&xr, ce->x);
        range_add_estimate(&yr, s);
        n++;
    }
    if (st == BL_OK && n > 0) {
        qsort(cells, n, sizeof *cells, cmp_cell);
        bl_buf svg;
        bl_buf_init(&svg);
        bl_chart ch = {0};
        if (numeric) {
            bl_range_finish(&xr, &ch.x0, &ch.x1);
        } else {
            ch.categories = (const char *const *)xcats;
            ch.ncategories = nx;
            ch.x0 = -0.5;
            ch.x1 = (double)nx - 0.5;
        }
        bl_range_finish(&yr, &ch.y0, &ch.y1);
        char title[512], ylabel[256], xlabel[300];
        snprintf(title, sizeof title, "%s: %s against %s", c->record_id, key, axes[0]);
        axis_label(ylabel, sizeof ylabel, "", key);
        snprintf(xlabel, sizeof xlabel, "%s (node parameter, as in the plan)", axes[0]);
        bl_chart_begin(&ch, &svg, title, xlabel, ylabel);
        double *xs = bl_mallocarray(n, sizeof *xs), *ys = bl_mallocarray(n, sizeof *ys);
        if (!xs || !ys)
            st = nomem(err);
        for (size_t s0 = 0; st == BL_OK && s0 < n;) {
            size_t s1 = s0, m = 0;
            for (; s1 < n && cells[s1].series == cells[s0].series; s1++) {
                const bl_json *raw = bl_json_get(bl_json_get(cells[s1].summary, "outcome"), "raw");
                if (is_number(raw)) {
                    xs[m] = cells[s1].x;
                    ys[m++] = num(raw);
                }
            }
            const size_t si = cells[s0].series;
            const bl_shape shape = (bl_shape)(si % BL_SHAPE_COUNT);
            bl_chart_line(&ch, series[si], xs, ys, m, (int)si);
            for (size_t i = s0; i < s1; i++) {
                const bl_json *s = cells[i].summary;
                const char *id = str_of(s, "target_id");
                double lo, hi;
                if (pair_of(bl_json_get(s, "raw_interval"), &lo, &hi))
                    bl_chart_interval(&ch, "interval", series[si], id, cells[i].x, lo, hi, 5.0);
                const bl_json *raw = bl_json_get(bl_json_get(s, "outcome"), "raw");
                if (is_number(raw))
                    bl_chart_point(&ch, "estimate", series[si], id, cells[i].x, num(raw), shape,
                                   si % 2 == 0, 4.5);
            }
            bl_chart_legend(&ch, BL_LEGEND_LINE, series[si], shape, si % 2 == 0, (int)si);
            s0 = s1;
        }
        bl_chart_legend(&ch, BL_LEGEND_INTERVAL, "95 % bootstrap interval", BL_SHAPE_CIRCLE,
                        false, 0);
        bl_free(xs);
        bl_free(ys);
        bl_chart_end(&ch);
        if (st == BL_OK)
            st = add_figure(c, "sweep", "sweep-", key, title, &ch, &svg, err);
        bl_buf_clear(&svg);
    }
    for (size_t i = 0; i < nx; i++)
        bl_free(xcats[i]);
    for (size_t i = 0; i < nseries; i++)
        bl_free(series[i]);
    bl_free(xcats);
    bl_free(series);
    bl_free(cells);
    return st;
}

/* ---- probes and decoded results ---------------------------------------------- */

typedef struct probe_cols {
    size_t target, task, block, trial, score;
} probe_cols;

static bl_status probe_columns(const bl_csv_table *t, const char *what, bool trials,
                               probe_cols *pc, bl_error *err)
{
    bl_status st = column(t, what, "target_id", &pc->target, err);
    if (st == BL_OK)
        st = column(t, what, "task", &pc->task, err);
    if (st == BL_OK)
        st = column(t, what, "block_id", &pc->block, err);
    if (st == BL_OK)
        st = column(t, what, "trial_id", &pc->trial, err);
    if (st == BL_OK)
        st = column(t, what, trials ? "native_score" : "point", &pc->score, err);
    return st;
}

/* The row of data/probe_trials.csv of (target, block, trial), or -1. */
static long probe_trial_row(const ctx *c, const probe_cols *pc, const char *target,
                            int64_t block, int64_t trial)
{
    const bl_csv_table *t = &c->ptrials;
    for (size_t r = 0; r < t->nrows; r++)
        if (strtoll(bl_csv_cell(t, r, pc->trial), NULL, 10) == trial &&
            strtoll(bl_csv_cell(t, r, pc->block), NULL, 10) == block &&
            strcmp(bl_csv_cell(t, r, pc->target), target) == 0)
            return (long)r;
    return -1;
}

static const char *const decoded_fields[] = {"accuracy", "permutation_accuracy",
                                             "constant_accuracy", "native_accuracy"};

static bl_status not_decoded(const char *path, const char *why, size_t i, bl_error *err)
{
    return bl_fail(err, BL_EVALUE, "%s: not the output of brainlesslab decode (%s%s%zu)", path,
                   why, " in result ", i);
}

/* The shape of decode's DecoderResult list (spec/platform.md §6). */
static bl_status check_decoded_shape(const bl_json *d, const char *path, bl_error *err)
{
    if (!bl_json_if(d, BL_JSON_ARRAY) || bl_json_size(d) == 0)
        return bl_fail(err, BL_EVALUE,
                       "%s: not the output of brainlesslab decode (not a non-empty list of "
                       "decoder results)", path);
    for (size_t i = 0; i < bl_json_size(d); i++) {
        const bl_json *r = bl_json_if(bl_json_at(d, i), BL_JSON_OBJECT);
        if (!r || !str_of(r, "target_id") || !str_of(r, "task") ||
            !bl_json_if(bl_json_get(r, "block_id"), BL_JSON_INT) || !str_of(r, "point"))
            return not_decoded(path, "no target_id, task, block_id or point", i, err);
        const char *ch = str_of(r, "channel");
        if (!ch || strcmp(ch, "emitted_activity") != 0)
            return not_decoded(path, "channel is not emitted_activity", i, err);
        bool known = false;
        for (size_t p = 0; p < N_POINTS; p++)
            known = known || strcmp(point_order[p], str_of(r, "point")) == 0;
        if (!known)
            return not_decoded(path, "unknown observation point", i, err);
        for (size_t f = 0; f < sizeof decoded_fields / sizeof *decoded_fields; f++) {
            const bl_json *v = bl_json_get(r, decoded_fields[f]);
            if (!is_number(v) || !(num(v) >= 0.0 && num(v) <= 1.0))
                return not_decoded(path, "an accuracy is not a number in [0, 1]", i, err);
        }
        const bl_json *ids = bl_json_if(bl_json_get(r, "trial_ids"), BL_JSON_ARRAY);
        const bl_json *scores = bl_json_if(bl_json_get(r, "native_scores"), BL_JSON_ARRAY);
        if (!ids || !scores || bl_json_size(ids) != bl_json_size(scores) || !bl_json_size(ids))
            return not_decoded(path, "trial_ids and native_scores do not pair up", i, err);
        for (size_t k = 0; k < bl_json_size(ids); k++)
            if (!bl_json_if(bl_json_at(ids, k), BL_JSON_INT) || !is_number(bl_json_at(scores, k)))
                return not_decoded(path, "a trial id or native score is not a number", i, err);
    }
    return BL_OK;
}

/* Every decoded block, trial and native score must be this record's. */
static bl_status check_decoded_owner(const ctx *c, const char *path, bl_error *err)
{
    probe_cols pc;
    bl_status st = probe_columns(&c->ptrials, "data/probe_trials.csv", true, &pc, err);
    for (size_t i = 0; st == BL_OK && i < bl_json_size(c->decoded); i++) {
        const bl_json *r = bl_json_at(c->decoded, i);
        const char *target = str_of(r, "target_id");
        const int64_t block = bl_json_get_int(bl_json_get(r, "block_id"));
        const bl_json *ids = bl_json_get(r, "trial_ids"), *scores = bl_json_get(r, "native_scores");
        for (size_t k = 0; k < bl_json_size(ids); k++) {
            long row = probe_trial_row(c, &pc, target, block, bl_json_get_int(bl_json_at(ids, k)));
            double own;
            if (row < 0 || strcmp(bl_csv_cell(&c->ptrials, (size_t)row, pc.task),
                                  str_of(r, "task")) != 0)
                return bl_fail(err, BL_EVALUE, "%s: decoded results do not belong to this record "
                               "(result %zu names a trial the record does not hold)", path, i);
            if (!parse_real(bl_csv_cell(&c->ptrials, (size_t)row, pc.score), &own) ||
                own != num(bl_json_at(scores, k)))
                return bl_fail(err, BL_EVALUE, "%s: decoded results do not belong to this record "
                               "(result %zu: native scores differ)", path, i);
        }
    }
    return st;
}

/* Mean over the rows of `vals` that are set, or NAN. */
typedef struct acc {
    double sum;
    size_t n;
} acc;

static double acc_mean(const acc *a)
{
    return a->n ? a->sum / (double)a->n : NAN;
}

static bl_status probe_figure(ctx *c, const char *target, size_t index, bl_error *err)
{
    probe_cols tc, ec;
    bl_status st = probe_columns(&c->ptrials, "data/probe_trials.csv", true, &tc, err);
    if (st == BL_OK)
        st = probe_columns(&c->pevents, "data/probe_events.csv", false, &ec, err);
    if (st != BL_OK)
        return st;
    /* Series: native (record), then decoder, permutation, constant (decoded). */
    enum { S_NATIVE, S_DECODER, S_PERM, S_CONST, NS };
    static const char *const names[NS] = {"native accuracy (record)", "decoder accuracy",
                                          "permutation-null accuracy", "constant accuracy"};
    static const char *const cls[NS] = {"native", "decoder", "permutation", "constant"};
    static const bl_shape shapes[NS] = {BL_SHAPE_TRIANGLE, BL_SHAPE_CIRCLE, BL_SHAPE_SQUARE,
                                        BL_SHAPE_CROSS};
    static const bool filled[NS] = {false, true, false, false};
    static const int dashes[NS] = {2, 0, 1, 3};
    acc a[NS][N_POINTS] = {{{0}}};
    for (size_t r = 0; r < c->pevents.nrows; r++) {
        if (strcmp(bl_csv_cell(&c->pevents, r, ec.target), target) != 0)
            continue;
        const char *point = bl_csv_cell(&c->pevents, r, ec.score);
        size_t p = 0;
        while (p < N_POINTS && strcmp(point_order[p], point) != 0)
            p++;
        long row = probe_trial_row(c, &tc, target,
                                   strtoll(bl_csv_cell(&c->pevents, r, ec.block), NULL, 10),
                                   strtoll(bl_csv_cell(&c->pevents, r, ec.trial), NULL, 10));
        double v;
        if (p < N_POINTS && row >= 0 &&
            parse_real(bl_csv_cell(&c->ptrials, (size_t)row, tc.score), &v)) {
            a[S_NATIVE][p].sum += v;
            a[S_NATIVE][p].n++;
        }
    }
    /* Decoded: one value per block and point; blocks in file order (decode
     * sorts its groups). */
    for (size_t i = 0; c->decoded && i < bl_json_size(c->decoded); i++) {
        const bl_json *r = bl_json_at(c->decoded, i);
        if (strcmp(str_of(r, "target_id"), target) != 0)
            continue;
        size_t p = 0;
        while (p < N_POINTS && strcmp(point_order[p], str_of(r, "point")) != 0)
            p++;
        for (int s = S_DECODER; s < NS; s++) {
            a[s][p].sum += num(bl_json_get(r, decoded_fields[s - S_DECODER]));
            a[s][p].n++;
        }
    }
    const char *cats[N_POINTS];
    size_t pidx[N_POINTS], np = 0;
    for (size_t p = 0; p < N_POINTS; p++)
        if (a[S_NATIVE][p].n || a[S_DECODER][p].n) {
            cats[np] = point_order[p];
            pidx[np++] = p;
        }
    if (np == 0)
        return BL_OK;
    bl_buf svg;
    bl_buf_init(&svg);
    bl_chart ch = {.categories = cats, .ncategories = np, .x0 = -0.5, .x1 = (double)np - 0.5,
                   .y0 = -0.05, .y1 = 1.05};
    char title[512];
    snprintf(title, sizeof title, "%s: probe accuracy of %s per observation point",
             c->record_id, target);
    bl_chart_begin(&ch, &svg, title, "observation point",
                   "accuracy (fraction of trials correct)");
    bl_chart_hline(&ch, "chance-line", 0.5, 1);
    for (int s = 0; s < NS; s++) {
        double xs[N_POINTS], ys[N_POINTS];
        size_t m = 0;
        for (size_t k = 0; k < np; k++)
            if (a[s][pidx[k]].n) {
                xs[m] = (double)k + 0.08 * (double)(s - 1);
                ys[m++] = acc_mean(&a[s][pidx[k]]);
            }
        if (m == 0)
            continue;
        bl_chart_line(&ch, cls[s], xs, ys, m, dashes[s]);
        for (size_t k = 0, j = 0; k < np; k++)
            if (a[s][pidx[k]].n) {
                bl_chart_point(&ch, cls[s], cls[s], cats[k], xs[j], ys[j], shapes[s], filled[s],
                               4.5);
                j++;
            }
        bl_chart_legend(&ch, BL_LEGEND_LINE, names[s], shapes[s], filled[s], dashes[s]);
    }
    bl_chart_legend(&ch, BL_LEGEND_RULE, "chance (0.5)", BL_SHAPE_CIRCLE, false, 1);
    bl_chart_end(&ch);
    char key[32];
    snprintf(key, sizeof key, "%zu", index + 1);
    st = add_figure(c, "probe", "probe-", key, title, &ch, &svg, err);
    bl_buf_clear(&svg);
    return st;
}

static bl_status probe_figures(ctx *c, bl_error *err)
{
    probe_cols tc;
    bl_status st = probe_columns(&c->ptrials, "data/probe_trials.csv", true, &tc, err);
    size_t index = 0;
    for (size_t r = 0; st == BL_OK && r < c->ptrials.nrows; r++) {
        const char *t = bl_csv_cell(&c->ptrials, r, tc.target);
        bool seen = false;
        for (size_t q = 0; q < r && !seen; q++)
            seen = strcmp(bl_csv_cell(&c->ptrials, q, tc.target), t) == 0;
        if (!seen)
            st = probe_figure(c, t, index++, err);
    }
    return st;
}

/* ---- the whole set ------------------------------------------------------------ */

static bl_status make_index(ctx *c, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *index = bl_json_object(), *list = bl_json_array();
    for (size_t i = 0; list && i < c->set->n; i++) {
        const bl_figure *f = &c->set->items[i];
        bl_json *o = bl_json_object();
        bl_json_put(&st, o, "file", bl_json_string(f->file), err);
        bl_json_put(&st, o, "kind", bl_json_string(f->kind), err);
        bl_json_put(&st, o, "marks", bl_json_int((int64_t)f->marks), err);
        bl_json_put(&st, o, "title", bl_json_string(f->title), err);
        bl_json_push(&st, list, o, err);
    }
    bl_json_put(&st, index, "figures", list, err);
    bl_json_put(&st, index, "format", bl_json_string("brainlesslab-figures"), err);
    bl_json_put(&st, index, "record", bl_json_string(c->record_id), err);
    bl_json_put(&st, index, "version", bl_json_int(1), err);
    return bl_json_hand_over(st, index, &c->set->index);
}

bl_status bl_figures_make(const char *record, const char *decoded, bl_figure_set *out,
                          bl_error *err)
{
    memset(out, 0, sizeof *out);
    ctx c = {.record = record, .set = out};
    char *text = NULL;
    size_t len = 0;
    bl_status st = bl_record_inspect(record, &c.map, err);
    if (st == BL_OK && !bl_json_get_bool(bl_json_get(c.map, "complete")))
        st = bl_fail(err, BL_EVALUE, "plot requires a complete record; this record is %s",
                     str_of(c.map, "status"));
    if (st == BL_OK) {
        const bl_json *manifest = bl_json_get(c.map, "manifest");
        c.hashes = bl_json_if(bl_json_get(manifest, "artifact_sha256"), BL_JSON_OBJECT);
        c.record_id = str_of(manifest, "id");
        if (!c.hashes || !c.record_id)
            st = bl_fail(err, BL_EVALUE, "%s: the record manifest lacks its id or checksums",
                         record);
    }
    if (st == BL_OK)
        st = read_artifact(&c, "summary/summary.json", &text, &len, err);
    if (st == BL_OK)
        st = bl_json_parse(text, len, "summary/summary.json", &c.summary, err);
    bl_free(text);
    text = NULL;
    if (st == BL_OK && (!bl_json_if(bl_json_get(c.summary, "summaries"), BL_JSON_ARRAY) ||
                        !bl_json_if(bl_json_get(c.summary, "contrasts"), BL_JSON_ARRAY)))
        st = bl_fail(err, BL_EVALUE, "summary/summary.json: no summaries or contrasts list");
    if (st == BL_OK)
        st = read_csv(&c, "trials.csv", &c.trials, err);
    if (st == BL_OK)
        st = read_artifact(&c, "request.toml", &text, &len, err);
    if (st == BL_OK)
        st = bl_toml_parse(text, len, "request.toml", &c.request, err);
    bl_free(text);
    text = NULL;
    c.probes = c.hashes && str_of(c.hashes, "data/probe_events.csv") &&
               str_of(c.hashes, "data/probe_trials.csv");
    if (st == BL_OK && c.probes) {
        st = read_csv(&c, "data/probe_trials.csv", &c.ptrials, err);
        if (st == BL_OK)
            st = read_csv(&c, "data/probe_events.csv", &c.pevents, err);
    }
    if (st == BL_OK && decoded) {
        st = bl_json_read_file_as(decoded, "decoded results file", 0, &c.decoded, err);
        if (st == BL_OK)
            st = check_decoded_shape(c.decoded, decoded, err);
        if (st == BL_OK && !c.probes)
            st = bl_fail(err, BL_EVALUE, "%s: decoded results do not belong to this record (it "
                         "holds no probe events)", decoded);
        if (st == BL_OK)
            st = check_decoded_owner(&c, decoded, err);
    }
    const char *keys[MAX_KEYS];
    size_t nkeys = 0;
    if (st == BL_OK)
        nkeys = outcome_keys(bl_json_get(c.summary, "summaries"), "outcome", keys, MAX_KEYS);
    for (size_t k = 0; st == BL_OK && k < nkeys; k++)
        st = outcomes_figure(&c, keys[k], err);
    if (st == BL_OK)
        nkeys = outcome_keys(bl_json_get(c.summary, "contrasts"), NULL, keys, MAX_KEYS);
    for (size_t k = 0; st == BL_OK && k < nkeys; k++)
        st = contrasts_figure(&c, keys[k], err);
    const char *op = st == BL_OK ? str_of(c.request, "operation") : NULL;
    if (st == BL_OK && op && strcmp(op, "sweep") == 0) {
        nkeys = outcome_keys(bl_json_get(c.summary, "summaries"), "outcome", keys, MAX_KEYS);
        for (size_t k = 0; st == BL_OK && k < nkeys; k++)
            st = sweep_figure(&c, keys[k], err);
    }
    if (st == BL_OK && c.probes)
        st = probe_figures(&c, err);
    if (st == BL_OK)
        st = make_index(&c, err);
    bl_json_destroy(c.map);
    bl_json_destroy(c.summary);
    bl_json_destroy(c.request);
    bl_json_destroy(c.decoded);
    bl_csv_table_clear(&c.trials);
    bl_csv_table_clear(&c.ptrials);
    bl_csv_table_clear(&c.pevents);
    if (st != BL_OK)
        bl_figure_set_clear(out);
    return st;
}

void bl_figure_set_clear(bl_figure_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        bl_free(set->items[i].file);
        bl_free(set->items[i].kind);
        bl_free(set->items[i].title);
        bl_buf_clear(&set->items[i].svg);
    }
    bl_free(set->items);
    bl_json_destroy(set->index);
    memset(set, 0, sizeof *set);
}

/* ---- the output directory ------------------------------------------------------- */

/* Where `dir` will be once made: the real path of its deepest existing
 * ancestor, then the rest of its components, "." and ".." applied as the
 * directories made for them will apply them. */
static bl_status future_path(const char *dir, bl_buf *out, bl_error *err)
{
    char *head = bl_strdup(dir);
    if (!head)
        return nomem(err);
    size_t cut = strlen(head);
    struct stat sb;
    while (cut > 0 && lstat(head, &sb) != 0 && errno == ENOENT) {
        while (cut > 0 && head[cut - 1] == '/')
            cut--;
        while (cut > 0 && head[cut - 1] != '/')
            cut--;
        head[cut] = '\0';
    }
    char *real = realpath(cut ? head : ".", NULL);
    bl_status st = BL_OK;
    if (!real) {
        st = bl_fail(err, BL_EOS, "%s: %s", cut ? head : ".", strerror(errno));
    } else {
        bl_buf_puts(out, real);
        const char *rest = dir + cut;
        while (*rest) {
            while (*rest == '/')
                rest++;
            size_t n = strcspn(rest, "/");
            if (n == 2 && strncmp(rest, "..", 2) == 0) {
                char *slash = strrchr(out->data, '/');
                out->len = slash && slash != out->data ? (size_t)(slash - out->data) : 1;
                out->data[out->len] = '\0';
            } else if (n > 0 && !(n == 1 && rest[0] == '.')) {
                if (out->len > 1)
                    bl_buf_putc(out, '/');
                bl_buf_append(out, rest, n);
            }
            rest += n;
        }
        st = bl_buf_status(out, err);
    }
    free(real);
    bl_free(head);
    return st;
}

static bl_status check_outside(const char *record, const char *dir, bl_error *err)
{
    char *rec = realpath(record, NULL);
    if (!rec)
        return bl_fail(err, BL_EOS, "%s: %s", record, strerror(errno));
    bl_buf where;
    bl_buf_init(&where);
    bl_status st = future_path(dir, &where, err);
    size_t n = strlen(rec);
    if (st == BL_OK && strncmp(where.data, rec, n) == 0 &&
        (where.data[n] == '\0' || where.data[n] == '/' || strcmp(rec, "/") == 0))
        st = bl_fail(err, BL_EVALUE, "--out must be outside the record: a file added to a record "
                     "makes it incomplete");
    bl_buf_clear(&where);
    free(rec);
    return st;
}

bl_status bl_figures_write(const bl_figure_set *set, const char *record, const char *dir,
                           bl_error *err)
{
    bl_status st = check_outside(record, dir, err);
    if (st != BL_OK)
        return st;
    size_t from = 0;
    st = bl_dir_create_exclusive(dir, &from, err);
    if (st != BL_OK)
        return st;
    size_t written = 0;
    bl_buf index;
    bl_buf_init(&index);
    st = bl_record_json_text(set->index, &index, err);
    for (size_t i = 0; st == BL_OK && i <= set->n; i++) {
        const char *name = i < set->n ? set->items[i].file : "figures.json";
        const bl_buf *data = i < set->n ? &set->items[i].svg : &index;
        char *path = bl_record_path_join(dir, name);
        st = path ? bl_file_write_new(path, data->data, data->len, err) : nomem(err);
        written += st == BL_OK;
        bl_free(path);
    }
    bl_buf_clear(&index);
    if (st != BL_OK) {
        /* Nothing is left behind: the files made, then the directories. */
        for (size_t i = 0; i < written; i++) {
            char *path = bl_record_path_join(dir, i < set->n ? set->items[i].file
                                                            : "figures.json");
            if (path)
                (void)unlink(path);
            bl_free(path);
        }
        bl_dir_remove_created(dir, from);
    }
    return st;
}
