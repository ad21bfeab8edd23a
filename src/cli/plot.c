/* `brainlesslab plot RECORD --out DIR [--decoded FILE]`: SVG figures of a
 * complete record in a new directory outside it (docs/figures.md). The
 * record is only read (inspected first, every file checked against its
 * checksum); DIR gets one SVG per figure and figures.json listing them,
 * and stdout the JSON {"figures": [files], "out": DIR}.
 *
 * Exit codes: 0 written; 1 any record, input or file error (one line on
 * stderr, nothing on stdout, nothing left behind in DIR); 2 a bad command
 * line (a missing --out included); 128 + the signal after Ctrl-C, SIGTERM
 * or SIGHUP before the directory was made (it is written with the stop
 * signals held, and removed again if it cannot be written whole). */
#include <pthread.h>
#include <signal.h>

#include "brainlesslab/figures.h"
#include "cli.h"

static const char usage[] = "usage: brainlesslab plot [-h] --out OUT [--decoded DECODED] record\n";

static const char help[] =
    "\n"
    "Write SVG figures of a complete record into a new directory: per outcome the\n"
    "block means, estimates, bootstrap intervals and null bands; paired contrasts;\n"
    "a sweep's outcome against the swept value; probe accuracy per observation\n"
    "point (with decode's output: decoder, permutation and constant accuracies).\n"
    "The record is never changed.\n"
    "\n"
    "positional arguments:\n"
    "  record             complete record directory\n"
    "\n"
    "options:\n"
    "  -h, --help         show this help message and exit\n"
    "  --out OUT          new directory for the figures (must not exist; outside\n"
    "                     the record)\n"
    "  --decoded DECODED  the JSON file that `brainlesslab decode --out FILE` wrote\n"
    "                     for this record\n";

enum { OPT_OUT, OPT_DECODED };

static const bl_cli_option options[] = {
    [OPT_OUT] = {.name = "--out", .kind = BL_CLI_STRING},
    [OPT_DECODED] = {.name = "--decoded", .kind = BL_CLI_STRING},
};

static int plot_main(const bl_cli_args *args)
{
    if (!args->count[OPT_OUT]) {
        fputs(usage, stderr);
        fputs("brainlesslab plot: error: the following arguments are required: --out\n", stderr);
        return 2;
    }
    bl_cli_flag_interrupts();
    bl_error err = {0};
    bl_figure_set set = {0};
    const char *out = args->value[OPT_OUT];
    bl_status st = bl_figures_make(args->positional,
                                   args->count[OPT_DECODED] ? args->value[OPT_DECODED] : NULL,
                                   &set, &err);
    if (st == BL_OK && bl_cli_interrupted)
        st = bl_fail_signal(&err, bl_cli_interrupted);
    if (st == BL_OK) {
        sigset_t old;
        bl_cli_block_interrupts(&old);
        st = bl_figures_write(&set, args->positional, out, &err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    bl_json *files = st == BL_OK ? bl_json_array() : NULL;
    bl_json *result = st == BL_OK ? bl_json_object() : NULL;
    for (size_t i = 0; st == BL_OK && i < set.n; i++)
        bl_json_push(&st, files, bl_json_string(set.items[i].file), &err);
    if (st == BL_OK) {
        bl_json_put(&st, result, "figures", files, &err);
        files = NULL;
        bl_json_put(&st, result, "out", bl_json_string(out), &err);
    }
    int rc = st == BL_OK ? bl_cli_print_json(result, BL_JSON_SPACED) : bl_cli_report(&err);
    bl_json_destroy(files);
    bl_json_destroy(result);
    bl_figure_set_clear(&set);
    return rc;
}

const bl_cli_command bl_cli_plot = {
    .name = "plot", .positional = "record", BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = plot_main,
};
