/* brainlesslab: the command-line program. Until plans can be read it answers
 * --version and --help; every error is one line on stderr (DESIGN.md rule 5). */
#include <stdio.h>
#include <string.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/version.h"

static const char usage[] =
    "usage: brainlesslab [-h] [--version] {check,run,inspect,profile,qualify} ...\n";

static const char help[] =
    "\n"
    "Execute fresh v4 plans; inspect historical records without replaying them.\n"
    "\n"
    "options:\n"
    "  -h, --help  show this help message and exit\n"
    "  --version   print the program's and its libraries' versions and exit\n";

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(usage, stdout);
        fputs(help, stdout);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        bl_buf out;
        bl_buf_init(&out);
        bl_version_report(&out);
        int ok = !out.failed && fwrite(out.data, 1, out.len, stdout) == out.len;
        bl_buf_free(&out);
        if (!ok) {
            fputs("brainlesslab: MemoryError: cannot write the version report\n", stderr);
            return 1;
        }
        return 0;
    }
    fputs(usage, stderr);
    if (argc < 2)
        fputs("brainlesslab: error: the following arguments are required: command\n", stderr);
    else
        fprintf(stderr, "brainlesslab: error: invalid choice: '%s' (commands of this build: none yet)\n",
                argv[1]);
    return 2;
}
