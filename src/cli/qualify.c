/* `brainlesslab qualify` (measurement.md §2). The command line is parsed in full, so
 * scripts get the reference's usage errors (exit 2) today, but the command
 * itself is not implemented in this build yet: it says so in one line and
 * exits 1 rather than pretend success. */
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab qualify [-h] destination\n";

static const char help[] =
    "\n"
    "Compare a backend against the float64 CPU reference and write a conformance\n"
    "receipt (not implemented in this build yet).\n"
    "\n"
    "positional arguments:\n"
    "  destination  new directory for the receipt\n"
    "\n"
    "options:\n"
    "  -h, --help   show this help message and exit\n";

static int qualify_main(const bl_cli_args *args)
{
    (void)args;
    return bl_cli_not_implemented("qualify");
}

const bl_cli_command bl_cli_qualify = {
    .name = "qualify",
    .positional = "destination",
    .options = NULL,
    .n_options = 0,
    .usage = usage,
    .help = help,
    .main = qualify_main,
};
