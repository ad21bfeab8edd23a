/* The byte formats of a record (spec/platform.md §7.3): record JSON and CSV
 * in Python's "excel" dialect. Both refuse any non-finite number anywhere
 * in the value, before writing a byte, so a record never holds a NaN that a
 * reader would have to guess the meaning of. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/records.h"
#include "records/records_internal.h"

bl_status bl_record_check_finite(const bl_json *v, bl_error *err)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_REAL: {
        /* x - x is 0 for every finite x and NaN for NaN and the infinities. */
        double d = bl_json_get_real(v);
        if (d - d != 0)
            return bl_fail(err, BL_EVALUE,
                           "records require finite numbers or explicit missing values");
        return BL_OK;
    }
    case BL_JSON_ARRAY:
    case BL_JSON_OBJECT:
        for (size_t i = 0; i < bl_json_size(v); i++) {
            const bl_json *item =
                bl_json_kindof(v) == BL_JSON_ARRAY ? bl_json_at(v, i) : bl_json_value_at(v, i);
            bl_status st = bl_record_check_finite(item, err);
            if (st != BL_OK)
                return st;
        }
        return BL_OK;
    default:
        return BL_OK;
    }
}

bl_status bl_record_json_text(const bl_json *v, bl_buf *out, bl_error *err)
{
    bl_status st = bl_record_check_finite(v, err);
    /* Sorted keys, compact separators, no ASCII escaping (ensure_ascii=False). */
    if (st == BL_OK)
        st = bl_json_write(v, BL_JSON_SORT_KEYS, out, err);
    if (st == BL_OK) {
        bl_buf_putc(out, '\n');
        st = bl_buf_status(out, err);
    }
    return st;
}

/* ---- CSV ------------------------------------------------------------------- */

typedef struct bl_csv_key {
    const char *s;
    size_t len;
} csv_key;

static int cmp_key(const void *pa, const void *pb)
{
    const csv_key *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    return c != 0 ? c : (a->len > b->len) - (a->len < b->len);
}

/* The sorted union of the rows' keys (pointers into the rows). */
static bl_status header_of(const bl_json *rows, csv_key **out, size_t *n, bl_error *err)
{
    size_t total = 0;
    for (size_t r = 0; r < bl_json_size(rows); r++) {
        const bl_json *row = bl_json_at(rows, r);
        if (bl_json_kindof(row) != BL_JSON_OBJECT)
            return bl_fail(err, BL_ETYPE, "CSV rows must be objects (row %zu is not)", r);
        total += bl_json_size(row);
    }
    *out = NULL;
    *n = 0;
    if (total == 0)
        return BL_OK;
    csv_key *keys = bl_mallocarray(total, sizeof *keys);
    if (!keys)
        return bl_fail(err, BL_ENOMEM, "out of memory for a CSV header");
    size_t k = 0;
    for (size_t r = 0; r < bl_json_size(rows); r++) {
        const bl_json *row = bl_json_at(rows, r);
        for (size_t i = 0; i < bl_json_size(row); i++, k++)
            keys[k].s = bl_json_key_at(row, i, &keys[k].len);
    }
    qsort(keys, total, sizeof *keys, cmp_key);
    size_t unique = 0;
    for (size_t i = 0; i < total; i++)
        if (unique == 0 || cmp_key(&keys[unique - 1], &keys[i]) != 0)
            keys[unique++] = keys[i];
    *out = keys;
    *n = unique;
    return BL_OK;
}

/* One field in QUOTE_MINIMAL form: quoted when it holds the delimiter, the
 * quote character or a line-terminator character, quotes doubled. */
static void put_field(bl_buf *out, const char *s, size_t len)
{
    bool quote = false;
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        bl_buf_append(out, s, len);
        return;
    }
    bl_buf_putc(out, '"');
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"')
            bl_buf_putc(out, '"');
        bl_buf_putc(out, s[i]);
    }
    bl_buf_putc(out, '"');
}

/* The text of one value: str() of Python scalars, compact JSON of lists and
 * maps, nothing for a missing value. */
static bl_status cell_text(const bl_json *v, bl_buf *cell, bl_error *err)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_NULL:
        return BL_OK;
    case BL_JSON_BOOL:
        bl_buf_puts(cell, bl_json_get_bool(v) ? "True" : "False");
        return bl_buf_status(cell, err);
    case BL_JSON_STRING: {
        size_t len;
        const char *s = bl_json_get_string(v, &len);
        bl_buf_append(cell, s, len);
        return bl_buf_status(cell, err);
    }
    default:
        /* Integers of any size, reals in repr form, arrays and objects. */
        return bl_json_write(v, BL_JSON_SORT_KEYS, cell, err);
    }
}

static void put_header(bl_buf *out, const csv_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            bl_buf_putc(out, ',');
        put_field(out, keys[i].s, keys[i].len);
    }
    bl_buf_puts(out, "\r\n");
}

/* One row under the header keys: the row's value for each key (empty when
 * it has none), fields separated by commas, CR LF. where[i] remembers the
 * position key i had in the previous row, which rows of one shape share, so
 * a cell is usually found at the first comparison. *found counts the keys
 * the row holds. */
static bl_status put_row(bl_buf *out, const csv_key *keys, size_t nkeys, size_t *where,
                         const bl_json *row, bl_buf *cell, size_t *found, bl_error *err)
{
    bl_status st = BL_OK;
    const size_t size = bl_json_size(row);
    *found = 0;
    for (size_t i = 0; i < nkeys && st == BL_OK; i++) {
        /* bl_json_get needs a NUL-free key; header keys come from rows, so
         * look the exact bytes up. */
        const bl_json *v = NULL;
        for (size_t t = 0; t < size && !v; t++) {
            const size_t j = (where[i] + t) % size;
            size_t len;
            const char *k = bl_json_key_at(row, j, &len);
            if (len == keys[i].len && memcmp(k, keys[i].s, len) == 0) {
                v = bl_json_value_at(row, j);
                where[i] = j;
            }
        }
        bl_buf_reset(cell);
        if (v) {
            ++*found;
            st = cell_text(v, cell, err);
        }
        if (st != BL_OK)
            break;
        if (i)
            bl_buf_putc(out, ',');
        /* Python writes a lone empty field as "" so the row is not mistaken
         * for a blank line. */
        if (nkeys == 1 && cell->len == 0)
            bl_buf_puts(out, "\"\"");
        else
            put_field(out, cell->data ? cell->data : "", cell->len);
    }
    bl_buf_puts(out, "\r\n");
    return st;
}

bl_status bl_csv_text(const bl_json *rows, bl_buf *out, bl_error *err)
{
    if (bl_json_kindof(rows) != BL_JSON_ARRAY)
        return bl_fail(err, BL_ETYPE, "CSV rows must be an array of objects");
    bl_status st = bl_record_check_finite(rows, err);
    if (st != BL_OK)
        return st;
    csv_key *keys = NULL;
    size_t nkeys = 0;
    if ((st = header_of(rows, &keys, &nkeys, err)) != BL_OK)
        return st;
    size_t *where = bl_calloc(nkeys ? nkeys : 1, sizeof *where);
    if (!where) {
        bl_free(keys);
        return bl_fail(err, BL_ENOMEM, "out of memory for a CSV file");
    }
    bl_buf cell;
    bl_buf_init(&cell);
    put_header(out, keys, nkeys);
    size_t found;
    for (size_t r = 0; r < bl_json_size(rows) && st == BL_OK; r++)
        st = put_row(out, keys, nkeys, where, bl_json_at(rows, r), &cell, &found, err);
    bl_buf_clear(&cell);
    bl_free(where);
    bl_free(keys);
    if (st != BL_OK)
        return st;
    return bl_buf_status(out, err);
}

/* ---- CSV row by row ----------------------------------------------------------- */

void bl_csv_stream_init(bl_csv_stream *s, bl_buf *out)
{
    memset(s, 0, sizeof *s);
    s->out = out;
    bl_buf_init(&s->cell);
}

/* The header of a stream: the first row's keys, sorted, copied (the rows
 * are the caller's and go away). */
static bl_status stream_header(bl_csv_stream *s, const bl_json *row, bl_error *err)
{
    const size_t n = bl_json_size(row);
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        (void)bl_json_key_at(row, i, &len);
        bytes += len;
    }
    csv_key *keys = bl_mallocarray(n ? n : 1, sizeof *keys);
    char *text = bl_malloc(bytes ? bytes : 1);
    s->where = bl_calloc(n ? n : 1, sizeof *s->where);
    if (!keys || !text || !s->where) {
        bl_free(keys);
        bl_free(text);
        return bl_fail(err, BL_ENOMEM, "out of memory for a CSV header");
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *k = bl_json_key_at(row, i, &len);
        memcpy(text + at, k, len);
        keys[i] = (csv_key){text + at, len};
        at += len;
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    s->keys = keys;
    s->text = text;
    s->nkeys = n;
    put_header(s->out, keys, n);
    return bl_buf_status(s->out, err);
}

bl_status bl_csv_stream_row(bl_csv_stream *s, const bl_json *row, bl_error *err)
{
    if (bl_json_kindof(row) != BL_JSON_OBJECT)
        return bl_fail(err, BL_ETYPE, "CSV rows must be objects (row %zu is not)", s->rows);
    bl_status st = bl_record_check_finite(row, err);
    if (st == BL_OK && s->rows == 0)
        st = stream_header(s, row, err);
    size_t found = 0;
    if (st == BL_OK)
        st = put_row(s->out, s->keys, s->nkeys, s->where, row, &s->cell, &found, err);
    if (st == BL_OK && (found != s->nkeys || bl_json_size(row) != s->nkeys))
        st = bl_fail(err, BL_EVALUE, "CSV row %zu does not have the first row's columns",
                     s->rows);
    s->rows++;
    return st == BL_OK ? bl_buf_status(s->out, err) : st;
}

bl_status bl_csv_stream_finish(bl_csv_stream *s, bl_error *err)
{
    if (s->rows == 0)
        put_header(s->out, NULL, 0); /* bl_csv_text of no rows: an empty header */
    return bl_buf_status(s->out, err);
}

void bl_csv_stream_clear(bl_csv_stream *s)
{
    bl_buf_clear(&s->cell);
    bl_free(s->keys);
    bl_free((char *)s->text);
    bl_free(s->where);
    memset(s, 0, sizeof *s);
}
