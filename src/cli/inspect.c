/* `brainlesslab inspect` (spec/platform.md §3.2). The command line is parsed in full, so
 * scripts get the reference's usage errors (exit 2) today, but the command
 * itself is not implemented in this build yet: it says so in one line and
 * exits 1 rather than pretend success. */
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab inspect [-h] record\n";

static const char help[] =
    "\n"
    "Read v1/v2 record metadata and verify artifact checksums (not implemented in\n"
    "this build yet).\n"
    "\n"
    "positional arguments:\n"
    "  record      record directory\n"
    "\n"
    "options:\n"
    "  -h, --help  show this help message and exit\n";

static int inspect_main(const bl_cli_args *args)
{
    (void)args;
    return bl_cli_not_implemented("inspect");
}

const bl_cli_command bl_cli_inspect = {
    .name = "inspect",
    .positional = "record",
    .options = NULL,
    .n_options = 0,
    .usage = usage,
    .help = help,
    .main = inspect_main,
};
