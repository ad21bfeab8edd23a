/* `brainlesslab qualify DEST` (spec/measurement.md §2, as this program
 * applies it: float32 on the CPU against the float64 reference; see
 * src/measure/qualify.c). The receipt goes to DEST/receipt.json and, the
 * same JSON, to stdout. Exit 0 iff every gated comparison passed, 1 when one
 * failed (the receipt is still written and printed, and one stderr line
 * names the first failure) or on an error, 2 for a bad command line, 130
 * after Ctrl-C.
 *
 * Order: flags → DEST must not exist → the whole qualification in memory →
 * DEST created (with parents) → receipt.json created exclusively and synced
 * → stdout. Every refusal comes before anything exists on disk, and an
 * existing DEST is FileExistsError (exit 1), as the reference's
 * mkdir(exist_ok=False) raises it; it is never touched. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/records.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab qualify [-h] [--backends {cpu} [{cpu} ...]] [--count COUNT]\n"
    "                            [--frames FRAMES] [--trials TRIALS] [--seed SEED]\n"
    "                            destination\n";

static const char help[] =
    "\n"
    "Qualify float32 numerics against the float64 CPU reference: every model\n"
    "configuration and task family run frame by frame on identical inputs and\n"
    "noise, every state array compared after every frame; whole-trial outcome\n"
    "differences are reported, not gated. Writes DESTINATION/receipt.json and\n"
    "prints it. Exit 0 iff every comparison passed.\n"
    "\n"
    "positional arguments:\n"
    "  destination           new directory for the receipt (must not exist)\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --backends {cpu} [{cpu} ...]\n"
    "                        backends to qualify, distinct (default: cpu)\n"
    "  --count COUNT         reservoir nodes (default: 64)\n"
    "  --frames FRAMES       compared frames per case, rounded up to whole ticks\n"
    "                        (default: 12)\n"
    "  --trials TRIALS       whole trials per case and dtype for the reported\n"
    "                        outcome differences, 0 to skip (default: 4)\n"
    "  --seed SEED           root seed of the qualification worlds and wirings\n"
    "                        (default: 714)\n";

static const char *const backends[] = {"cpu", NULL}; /* DESIGN.md: this build's backends */

enum { OPT_BACKENDS, OPT_COUNT, OPT_FRAMES, OPT_TRIALS, OPT_SEED };

static const bl_cli_option options[] = {
    [OPT_BACKENDS] = {.name = "--backends", .kind = BL_CLI_CHOICE, .choices = backends,
                      .fallback = "cpu", .plus = true},
    [OPT_COUNT] = {.name = "--count", .kind = BL_CLI_INT, .fallback = "64"},
    [OPT_FRAMES] = {.name = "--frames", .kind = BL_CLI_INT, .fallback = "12"},
    [OPT_TRIALS] = {.name = "--trials", .kind = BL_CLI_INT, .fallback = "4"},
    [OPT_SEED] = {.name = "--seed", .kind = BL_CLI_INT, .fallback = "714"},
};

/* argparse's parser.error: the usage, then one line, exit 2. */
static int usage_error(const char *msg)
{
    fputs(usage, stderr);
    fprintf(stderr, "brainlesslab qualify: error: %s\n", msg);
    return 2;
}

static int validate(const bl_cli_args *args, bl_qualify_options *o)
{
    for (size_t i = 0; i < args->nall[OPT_BACKENDS]; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(args->all[OPT_BACKENDS][i], args->all[OPT_BACKENDS][j]) == 0)
                return usage_error("--backends must be distinct");
    bl_qualify_options_default(o);
    o->count = args->integer[OPT_COUNT];
    o->frames = args->integer[OPT_FRAMES];
    o->trials = args->integer[OPT_TRIALS];
    o->seed = args->integer[OPT_SEED];
    if (o->count < 1)
        return usage_error("--count must be >= 1");
    if (o->frames < 1)
        return usage_error("--frames must be >= 1");
    if (o->trials < 0)
        return usage_error("--trials must be >= 0");
    if (o->seed < 0)
        return usage_error("--seed must be >= 0");
    return 0;
}

/* DEST and DEST/receipt.json, whole or not at all: if the receipt cannot
 * be written, the directories made for it are removed again. */
static bl_status write_receipt(const char *dest, const bl_buf *text, bl_error *err)
{
    size_t created = 0;
    bl_status st = bl_dir_create_exclusive(dest, &created, err);
    if (st != BL_OK)
        return st;
    const size_t n = strlen(dest) + sizeof "/receipt.json";
    char *file = bl_malloc(n);
    if (file) {
        snprintf(file, n, "%s/receipt.json", dest);
        st = bl_file_write_new(file, text->data, text->len, err);
    } else {
        st = bl_fail(err, BL_ENOMEM, "out of memory for the receipt");
    }
    if (st != BL_OK)
        bl_dir_remove_created(dest, created);
    bl_free(file);
    return st;
}

static int qualify_main(const bl_cli_args *args)
{
    /* Nothing exists on disk until the very end, so Ctrl-C may end the
     * command on the spot (exit 130, one line). */
    bl_cli_exit_on_interrupt();
    bl_qualify_options o;
    int rc = validate(args, &o);
    if (rc != 0)
        return rc;
    const char *dest = args->positional;
    bl_error err = {0};
    struct stat sb;
    if (lstat(dest, &sb) == 0) {
        bl_fail(&err, BL_EEXIST, "%s: %s", dest, strerror(EEXIST));
        return bl_cli_report(&err);
    }
    bl_json *receipt = NULL;
    bool passed = false;
    bl_buf out;
    bl_buf_init(&out);
    if (bl_qualify_run(&o, &receipt, &passed, &err) != BL_OK ||
        bl_json_write(receipt, BL_JSON_INDENT, &out, &err) != BL_OK ||
        (bl_buf_putc(&out, '\n'), bl_buf_status(&out, &err)) != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }
    /* A stop signal while the receipt is written waits until it is whole
     * (the pending signal then ends the command with 128 + the signal), so
     * an interrupt never leaves half a receipt. */
    sigset_t old;
    bl_cli_block_interrupts(&old);
    const bl_status st = write_receipt(dest, &out, &err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (st != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }
    rc = bl_cli_emit(&out);
    if (rc == 0 && !passed) {
        /* The receipt on stdout is the spec's output; the one error line
         * says what failed, so a person need not read it to know. */
        char *path = bl_malloc(strlen(dest) + sizeof "/receipt.json");
        if (path)
            snprintf(path, strlen(dest) + sizeof "/receipt.json", "%s/receipt.json", dest);
        bl_qualify_failure(receipt, path ? path : dest, &err);
        rc = bl_cli_report(&err);
        bl_free(path);
    }
done:
    bl_buf_clear(&out);
    bl_json_destroy(receipt);
    return rc;
}

const bl_cli_command bl_cli_qualify = {
    .name = "qualify", .positional = "destination", BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = qualify_main,
};
