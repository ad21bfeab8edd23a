/* libFuzzer harness: arbitrary bytes as the record.toml of a record
 * directory, through bl_record_inspect (what `brainlesslab inspect` and
 * `--calibration DIR` read) and the CLI's JSON writing of its map.
 *
 * The directory holds two real artifacts, a.txt ("a\n") and sub/b.json
 * ("{}\n"), so manifests can list valid and invalid checksums; the input's
 * length picks the markers (DONE, FAILED, both or neither), so each input
 * replays the same way. The promises checked: a map always says one of the
 * three statuses, "complete" only with valid checksums, DONE and no FAILED,
 * and its printed JSON reads back as the same tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/records.h"
#include "fuzz.h"

static char record[4096];

/* Makes the marker `name` exist or not; *state remembers which, so that
 * an unchanged marker costs no file system call. */
static void marker(const char *name, int present, int *state)
{
    if (*state == present)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", record, name);
    if (present)
        bl_fuzz_write(path, "complete\n", 9);
    else if (unlink(path) != 0)
        abort();
    *state = present;
}

static void setup(void)
{
    char path[4200];
    snprintf(record, sizeof record, "%s/record", bl_fuzz_tmpdir());
    snprintf(path, sizeof path, "%s/sub", record);
    if (mkdir(record, 0700) != 0 || mkdir(path, 0700) != 0)
        abort();
    snprintf(path, sizeof path, "%s/a.txt", record);
    bl_fuzz_write(path, "a\n", 2);
    snprintf(path, sizeof path, "%s/sub/b.json", record);
    bl_fuzz_write(path, "{}\n", 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!record[0])
        setup();
    char path[4200];
    snprintf(path, sizeof path, "%s/record.toml", record);
    bl_fuzz_write(path, data, size);
    const int done = (size & 1) != 0, failed = (size & 2) != 0;
    static int have_done, have_failed; /* neither at first */
    marker("DONE", done, &have_done);
    marker("FAILED", failed, &have_failed);

    bl_json *map = NULL;
    bl_error err = {0};
    if (bl_record_inspect(record, &map, &err) != BL_OK)
        return 0;
    const char *status = bl_json_get_string(bl_json_get(map, "status"), NULL);
    const bl_json *valid = bl_json_get(map, "checksums_valid");
    if (!status || !valid || bl_json_kindof(valid) != BL_JSON_BOOL)
        abort();
    if (strcmp(status, "complete") == 0) {
        if (!done || failed || !bl_json_get_bool(valid))
            abort();
    } else if (strcmp(status, failed ? "failed" : "incomplete") != 0) {
        abort();
    }
    /* What `inspect` prints must read back as the same tree (a manifest's
     * nan or inf is refused by the writer, which is no finding). */
    bl_buf out;
    bl_buf_init(&out);
    if (bl_json_write(map, BL_JSON_SORT_KEYS | BL_JSON_SPACED, &out, &err) == BL_OK) {
        bl_json *back = NULL;
        if (bl_json_parse(out.data, out.len, "printed map", &back, &err) != BL_OK ||
            !bl_json_equal(map, back))
            abort();
        bl_json_destroy(back);
    }
    bl_buf_clear(&out);
    bl_json_destroy(map);
    return 0;
}
