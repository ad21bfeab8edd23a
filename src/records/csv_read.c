/* Reading the record CSV files the writer makes (bl_csv_text: Python's csv
 * "excel" dialect, CRLF, minimal quoting), for the decoder's
 * data/probe_events.csv and data/probe_trials.csv.
 *
 * Python's csv module is lenient where this reader is not, on purpose: a
 * record file with a stray quote, a row of the wrong width or a repeated
 * column was not written by a record writer and is reported, never guessed
 * at. What Python accepts and this reader does too: LF or CR LF line ends
 * (and a lone CR), blank lines between rows (csv.DictReader skips them), a
 * missing final line end. Cells stay text; their meaning is the caller's. */
#include <stdbool.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/records.h"

typedef struct csv_parser {
    const char *p, *end, *what;
    size_t line;          /* 1-based line of p, for messages */
    char **cells;
    size_t n, cap;
} csv_parser;

static bl_status push_cell(csv_parser *ps, bl_buf *cell, bl_error *err)
{
    char **grown = bl_grow(ps->cells, ps->n, &ps->cap, sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ENOMEM, "out of memory reading %s", ps->what);
    ps->cells = grown;
    char *s = bl_malloc(cell->len + 1);
    if (!s)
        return bl_fail(err, BL_ENOMEM, "out of memory reading %s", ps->what);
    if (cell->len)
        memcpy(s, cell->data, cell->len);
    s[cell->len] = '\0';
    ps->cells[ps->n++] = s;
    return BL_OK;
}

static bool line_end(const csv_parser *ps)
{
    return ps->p == ps->end || *ps->p == '\n' || *ps->p == '\r';
}

static void skip_line_end(csv_parser *ps)
{
    if (ps->p < ps->end && *ps->p == '\r')
        ps->p++;
    if (ps->p < ps->end && *ps->p == '\n')
        ps->p++;
    ps->line++;
}

/* One record (row) from ps->p: appends its cells, sets *fields. */
static bl_status parse_record(csv_parser *ps, bl_buf *cell, size_t *fields, bl_error *err)
{
    *fields = 0;
    for (;;) {
        bl_buf_reset(cell);
        if (ps->p < ps->end && *ps->p == '"') {
            const size_t start_line = ps->line;
            ps->p++;
            for (;;) {
                if (ps->p == ps->end)
                    return bl_fail(err, BL_EVALUE, "%s:%zu: unterminated quoted field", ps->what,
                                   start_line);
                char c = *ps->p++;
                if (c == '"') {
                    if (ps->p < ps->end && *ps->p == '"') {
                        ps->p++;
                        bl_buf_append(cell, "\"", 1);
                        continue;
                    }
                    break;
                }
                if (c == '\n')
                    ps->line++;
                bl_buf_append(cell, &c, 1);
            }
            if (!line_end(ps) && *ps->p != ',')
                return bl_fail(err, BL_EVALUE, "%s:%zu: text after a closing quote", ps->what,
                               ps->line);
        } else {
            const char *s = ps->p;
            while (!line_end(ps) && *ps->p != ',') {
                if (*ps->p == '"')
                    return bl_fail(err, BL_EVALUE, "%s:%zu: quote inside an unquoted field",
                                   ps->what, ps->line);
                ps->p++;
            }
            bl_buf_append(cell, s, (size_t)(ps->p - s));
        }
        if (cell->failed)
            return bl_fail(err, BL_ENOMEM, "out of memory reading %s", ps->what);
        bl_status st = push_cell(ps, cell, err);
        if (st != BL_OK)
            return st;
        (*fields)++;
        if (line_end(ps)) {
            skip_line_end(ps);
            return BL_OK;
        }
        ps->p++; /* the comma */
    }
}

bl_status bl_csv_parse(const char *text, size_t len, const char *what, bl_csv_table *out,
                       bl_error *err)
{
    memset(out, 0, sizeof *out);
    if (memchr(text, '\0', len))
        return bl_fail(err, BL_EVALUE, "%s: line contains NUL", what);
    csv_parser ps = {.p = text, .end = text + len, .what = what, .line = 1};
    bl_buf cell;
    bl_buf_init(&cell);
    bl_status st = BL_OK;
    size_t ncols = 0, rows = 0;
    while (ps.p < ps.end) {
        if (*ps.p == '\n' || *ps.p == '\r') { /* a blank line */
            skip_line_end(&ps);
            continue;
        }
        const size_t line = ps.line;
        size_t fields;
        st = parse_record(&ps, &cell, &fields, err);
        if (st != BL_OK)
            goto fail;
        if (ncols == 0) {
            ncols = fields;
            for (size_t i = 0; i < ncols; i++)
                for (size_t j = 0; j < i; j++)
                    if (strcmp(ps.cells[i], ps.cells[j]) == 0) {
                        st = bl_fail(err, BL_EVALUE, "%s:%zu: column \"%s\" appears twice", what,
                                     line, ps.cells[i]);
                        goto fail;
                    }
        } else if (fields != ncols) {
            st = bl_fail(err, BL_EVALUE, "%s:%zu: %zu fields where the header has %zu", what,
                         line, fields, ncols);
            goto fail;
        } else {
            rows++;
        }
    }
    if (ncols == 0) {
        st = bl_fail(err, BL_EVALUE, "%s: no header row", what);
        goto fail;
    }
    bl_buf_clear(&cell);
    out->cells = ps.cells;
    out->ncols = ncols;
    out->nrows = rows;
    return BL_OK;
fail:
    bl_buf_clear(&cell);
    for (size_t i = 0; i < ps.n; i++)
        bl_free(ps.cells[i]);
    bl_free(ps.cells);
    return st;
}

long bl_csv_column(const bl_csv_table *t, const char *name)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cells[c], name) == 0)
            return (long)c;
    return -1;
}

const char *bl_csv_cell(const bl_csv_table *t, size_t row, size_t col)
{
    BL_ASSERT(row < t->nrows && col < t->ncols);
    return t->cells[(row + 1) * t->ncols + col];
}

void bl_csv_table_clear(bl_csv_table *t)
{
    if (t->cells)
        for (size_t i = 0; i < (t->nrows + 1) * t->ncols; i++)
            bl_free(t->cells[i]);
    bl_free(t->cells);
    memset(t, 0, sizeof *t);
}
