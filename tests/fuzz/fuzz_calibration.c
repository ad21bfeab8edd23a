/* libFuzzer harness: arbitrary bytes as a calibration file. Two ways in: the
 * file path (bl_calibrations_read_file: JSON reading, the document checks and
 * every record), and the in-memory path of one JSON text, whose top value is
 * tried as a record itself and whose "calibrations" entries, if any, are
 * tried one by one (bl_calibration_from_json), so a record is fuzzed even
 * where the document around it is wrong.
 *
 * The promise checked: a record that reads back is written
 * (bl_calibration_json) as a record that reads back with the same id. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "brainlesslab/results.h"
#include "fuzz.h"

static void check_record(const bl_json *v)
{
    bl_calibration *c = NULL, *again = NULL;
    bl_json *written = NULL;
    bl_error err = {0};
    if (bl_calibration_from_json(v, &c, &err) != BL_OK)
        return;
    if (bl_calibration_json(c, &written, &err) != BL_OK) {
        if (err.status != BL_ENOMEM)
            abort();
    } else if (bl_calibration_from_json(written, &again, &err) != BL_OK ||
               strcmp(again->id, c->id) != 0) {
        abort();
    }
    bl_calibration_destroy(again);
    bl_json_destroy(written);
    bl_calibration_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4200];
    if (!path[0])
        snprintf(path, sizeof path, "%s/calibration.json", bl_fuzz_tmpdir());
    bl_fuzz_write(path, data, size);
    bl_calibration **cals = NULL;
    size_t n = 0;
    bl_error err = {0};
    if (bl_calibrations_read_file(path, &cals, &n, &err) == BL_OK)
        bl_calibrations_destroy(cals, n);

    bl_json *doc = NULL;
    if (bl_json_parse((const char *)data, size, "fuzz.json", &doc, &err) != BL_OK)
        return 0;
    check_record(doc);
    const bl_json *list =
        bl_json_kindof(doc) == BL_JSON_OBJECT ? bl_json_get(doc, "calibrations") : NULL;
    if (list && bl_json_kindof(list) == BL_JSON_ARRAY)
        for (size_t i = 0; i < bl_json_size(list); i++)
            check_record(bl_json_at(list, i));
    bl_json_destroy(doc);
    return 0;
}
