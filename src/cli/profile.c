/* `brainlesslab profile` (measurement.md §1; its flags come with the implementation). The command line is parsed in full, so
 * scripts get the reference's usage errors (exit 2) today, but the command
 * itself is not implemented in this build yet: it says so in one line and
 * exits 1 rather than pretend success. */
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab profile [-h] destination\n";

static const char help[] =
    "\n"
    "Time the backend on a fixed workload and write a timing receipt (not\n"
    "implemented in this build yet).\n"
    "\n"
    "positional arguments:\n"
    "  destination  new directory for the receipt\n"
    "\n"
    "options:\n"
    "  -h, --help   show this help message and exit\n";

static int profile_main(const bl_cli_args *args)
{
    (void)args;
    return bl_cli_not_implemented("profile");
}

const bl_cli_command bl_cli_profile = {
    .name = "profile",
    .positional = "destination",
    .options = NULL,
    .n_options = 0,
    .usage = usage,
    .help = help,
    .main = profile_main,
};
