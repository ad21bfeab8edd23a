/* `brainlesslab inspect RECORD` (spec/platform.md §3.2, §7.6): verify a
 * record's checksums read-only and print the inspection map as JSON (sorted
 * keys, non-ASCII raw, Python's default separators). Exit 0 iff the record
 * is complete; an incomplete or failed record still prints its map and
 * exits 1; a path that is not a real directory, or a record whose manifest
 * cannot be trusted, is one error line and exit 1. */
#include "brainlesslab/json.h"
#include "brainlesslab/records.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab inspect [-h] record\n";

static const char help[] =
    "\n"
    "Read v1/v2 record metadata and verify artifact checksums, without executing\n"
    "anything the record contains.\n"
    "\n"
    "positional arguments:\n"
    "  record      record directory\n"
    "\n"
    "options:\n"
    "  -h, --help  show this help message and exit\n";

static int inspect_main(const bl_cli_args *args)
{
    /* Inspection writes nothing, so a stop signal may end it on the spot. */
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    bl_json *map = NULL;
    int rc;
    if (bl_record_inspect(args->positional, &map, &err) != BL_OK) {
        rc = bl_cli_report(&err);
    } else {
        rc = bl_cli_print_json(map, BL_JSON_SORT_KEYS | BL_JSON_SPACED);
        if (rc == 0 && !bl_json_get_bool(bl_json_get(map, "complete")))
            rc = 1;
    }
    bl_json_destroy(map);
    return rc;
}

const bl_cli_command bl_cli_inspect = {
    .name = "inspect", .positional = "record",
    .usage = usage, .help = help, .main = inspect_main,
};
