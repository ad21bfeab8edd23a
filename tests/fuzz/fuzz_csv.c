/* libFuzzer harness: arbitrary bytes as a record CSV file (bl_csv_parse,
 * the decoder's reader of data/probe_events.csv and data/probe_trials.csv).
 *
 * The promises checked for an accepted table: distinct header names, each
 * found again by bl_csv_column, every cell a string inside the table; and
 * writing the table back as record CSV (bl_csv_text) and reading that gives
 * the same cells, since the reader is the writer's inverse. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "brainlesslab/records.h"
#include "fuzz.h"

static void round_trip(const bl_csv_table *t)
{
    /* bl_csv_text writes objects with sorted keys, so compare by column name. */
    bl_status st = BL_OK;
    bl_json *rows = bl_json_array();
    for (size_t r = 0; r < t->nrows; r++) {
        bl_json *o = bl_json_object();
        for (size_t c = 0; c < t->ncols; c++)
            bl_json_put(&st, o, t->cells[c], bl_json_string(bl_csv_cell(t, r, c)), NULL);
        bl_json_push(&st, rows, o, NULL);
    }
    bl_buf text;
    bl_buf_init(&text);
    /* Tables without rows have no header to write; cells that are not
     * UTF-8 cannot be JSON strings; and a one-column row whose cell is empty
     * comes out as an empty line, which reads back as no row at all (Python's
     * csv writer quotes such a lone empty field as "", bl_csv_text does not;
     * no record file has one column). All three are the writer's limits, so
     * the round trip is checked where none applies. */
    if (st == BL_OK && t->nrows > 0 && t->ncols > 1 && bl_csv_text(rows, &text, NULL) == BL_OK) {
        bl_csv_table back = {0};
        if (bl_csv_parse(text.data, text.len, "round trip", &back, NULL) == BL_OK) {
            if (back.nrows != t->nrows || back.ncols != t->ncols)
                abort();
            for (size_t c = 0; c < t->ncols; c++) {
                long k = bl_csv_column(&back, t->cells[c]);
                if (k < 0)
                    abort();
                for (size_t r = 0; r < t->nrows; r++)
                    if (strcmp(bl_csv_cell(&back, r, (size_t)k), bl_csv_cell(t, r, c)) != 0)
                        abort();
            }
        } else {
            abort();
        }
        bl_csv_table_clear(&back);
    }
    bl_buf_clear(&text);
    bl_json_destroy(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bl_csv_table t = {0};
    if (bl_csv_parse((const char *)data, size, "fuzz.csv", &t, NULL) == BL_OK) {
        for (size_t c = 0; c < t.ncols; c++)
            if (bl_csv_column(&t, t.cells[c]) != (long)c)
                abort();
        for (size_t r = 0; r < t.nrows; r++)
            for (size_t c = 0; c < t.ncols; c++)
                if (!bl_csv_cell(&t, r, c))
                    abort();
        round_trip(&t);
    }
    bl_csv_table_clear(&t);
    return 0;
}
