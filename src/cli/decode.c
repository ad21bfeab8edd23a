/* `brainlesslab decode RECORD` (spec/platform.md §6): offline probe decoding
 * of a complete probe_events record. The record is inspected first (its
 * checksums verified, read-only), its data/probe_events.csv,
 * data/probe_features.npz and data/probe_trials.csv read back, and the
 * DecoderResult list printed as JSON (sorted keys, non-ASCII raw, Python's
 * default separators). `--out FILE` also writes the same text to FILE,
 * created exclusively (an existing FILE is FileExistsError and stays
 * untouched) and removed again if it cannot be written whole.
 *
 * Exit codes: 0 decoded; 1 any record, validation or decoding error (one
 * line on stderr, nothing on stdout, no --out file); 2 a bad command line;
 * 128 + the signal after Ctrl-C, SIGTERM or SIGHUP before the output file
 * was written (nothing is left behind: that file is the last thing made, by
 * one exclusive write, with the stop signals held, that removes its partial
 * file on failure). */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/analysis.h"
#include "brainlesslab/json.h"
#include "brainlesslab/records.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab decode [-h]\n"
    "                           [--points {cue_end,delay_end,response} "
    "[{cue_end,delay_end,response} ...]]\n"
    "                           [--fit FIT] [--validation VALIDATION]\n"
    "                           [--evaluation EVALUATION]\n"
    "                           [--lambdas LAMBDAS [LAMBDAS ...]]\n"
    "                           [--split-seed SPLIT_SEED]\n"
    "                           [--permutation-seed PERMUTATION_SEED]\n"
    "                           [--memory-budget-mib MEMORY_BUDGET_MIB] [--out OUT]\n"
    "                           record\n";

static const char help[] =
    "\n"
    "Offline ridge decoding of recorded emitted activity (probe_events records):\n"
    "per target, task and block and each observation point, a standardised ridge\n"
    "decoder, its label-permutation null and the constant reference. Prints the\n"
    "DecoderResult list as JSON.\n"
    "\n"
    "positional arguments:\n"
    "  record                complete record directory with probe events\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --points {cue_end,delay_end,response} [{cue_end,delay_end,response} ...]\n"
    "                        observation points, distinct (default: cue_end\n"
    "                        delay_end response)\n"
    "  --fit FIT             fit trials per block (default: 256)\n"
    "  --validation VALIDATION\n"
    "                        validation trials per block (default: 128)\n"
    "  --evaluation EVALUATION\n"
    "                        evaluation trials per block (default: 256)\n"
    "  --lambdas LAMBDAS [LAMBDAS ...]\n"
    "                        ridge penalties, finite and positive (default: 0.0001\n"
    "                        0.01 1.0 100.0)\n"
    "  --split-seed SPLIT_SEED\n"
    "                        root seed of the fit/validation/evaluation split\n"
    "                        (default: 701)\n"
    "  --permutation-seed PERMUTATION_SEED\n"
    "                        root seed of the label-permutation null (default: 702)\n"
    "  --memory-budget-mib MEMORY_BUDGET_MIB\n"
    "                        offline memory budget, x 1048576 bytes (default: 32)\n"
    "  --out OUT             also write the JSON to this new file (must not exist)\n";

static const char *const point_choices[] = {"cue_end", "delay_end", "response", NULL};

enum {
    OPT_POINTS, OPT_FIT, OPT_VALIDATION, OPT_EVALUATION, OPT_LAMBDAS, OPT_SPLIT_SEED,
    OPT_PERMUTATION_SEED, OPT_MEMORY, OPT_OUT,
};

/* --points and --lambdas have several defaults, which a nargs="+" option's
 * single fallback cannot hold: an option not given takes
 * bl_decode_defaults(). */
static const bl_cli_option options[] = {
    [OPT_POINTS] = {.name = "--points", .kind = BL_CLI_CHOICE, .choices = point_choices,
                    .plus = true},
    [OPT_FIT] = {.name = "--fit", .kind = BL_CLI_INT, .fallback = "256"},
    [OPT_VALIDATION] = {.name = "--validation", .kind = BL_CLI_INT, .fallback = "128"},
    [OPT_EVALUATION] = {.name = "--evaluation", .kind = BL_CLI_INT, .fallback = "256"},
    [OPT_LAMBDAS] = {.name = "--lambdas", .kind = BL_CLI_FLOAT, .plus = true},
    [OPT_SPLIT_SEED] = {.name = "--split-seed", .kind = BL_CLI_INT, .fallback = "701"},
    [OPT_PERMUTATION_SEED] = {.name = "--permutation-seed", .kind = BL_CLI_INT,
                              .fallback = "702"},
    [OPT_MEMORY] = {.name = "--memory-budget-mib", .kind = BL_CLI_INT, .fallback = "32"},
    [OPT_OUT] = {.name = "--out", .kind = BL_CLI_STRING},
};

static int decode_main(const bl_cli_args *args)
{
    /* A stop signal is noted and acted on between the steps, so it can
     * never cut the --out file short. */
    bl_cli_flag_interrupts();
    bl_error err = {0};
    bl_decode_options o = bl_decode_defaults();
    double *lambdas = NULL;
    bl_record_probes probes = {0};
    bl_probe_set *set = NULL;
    bl_json *results = NULL;
    bl_buf text;
    bl_buf_init(&text);
    bl_status st = BL_OK;

    if (args->count[OPT_POINTS]) {
        o.points = args->all[OPT_POINTS];
        o.n_points = args->nall[OPT_POINTS];
    }
    if (args->count[OPT_LAMBDAS]) {
        const size_t n = args->nall[OPT_LAMBDAS];
        lambdas = bl_mallocarray(n, sizeof *lambdas);
        if (!lambdas) {
            st = bl_fail(&err, BL_ENOMEM, "out of memory");
            goto done;
        }
        /* The parser accepted each as Python's float(); read them the same way. */
        for (size_t i = 0; i < n; i++) {
            const bool parsed = bl_cli_float(args->all[OPT_LAMBDAS][i], &lambdas[i]);
            BL_ASSERT(parsed);
        }
        o.lambdas = lambdas;
        o.n_lambdas = n;
    }
    o.fit_trials = args->integer[OPT_FIT];
    o.validation_trials = args->integer[OPT_VALIDATION];
    o.evaluation_trials = args->integer[OPT_EVALUATION];
    o.split_seed = args->integer[OPT_SPLIT_SEED];
    o.permutation_seed = args->integer[OPT_PERMUTATION_SEED];
    /* × 1 048 576 as the reference's int arithmetic, saturated where int64 ends. */
    const int64_t mib = args->integer[OPT_MEMORY];
    o.memory_budget_bytes = mib > (INT64_MAX >> 20)    ? INT64_MAX
                            : mib < (INT64_MIN >> 20) ? INT64_MIN
                                                      : mib * 1048576;

    st = bl_record_probes_read(args->positional, &probes, &err);
    if (st == BL_OK)
        st = bl_probe_set_from_rows(probes.events, probes.features, probes.feature_len,
                                    probes.trials, &set, &err);
    if (st == BL_OK && bl_cli_interrupted)
        st = bl_fail_signal(&err, bl_cli_interrupted);
    if (st == BL_OK)
        st = bl_decode(set, &o, &results, &err);
    if (st == BL_OK) {
        st = bl_json_write(results, BL_JSON_SORT_KEYS | BL_JSON_SPACED, &text, &err);
        if (st == BL_OK && !bl_buf_putc(&text, '\n'))
            st = bl_buf_status(&text, &err);
    }
    if (st == BL_OK && bl_cli_interrupted)
        st = bl_fail_signal(&err, bl_cli_interrupted);
    if (st == BL_OK && args->count[OPT_OUT]) {
        sigset_t old;
        bl_cli_block_interrupts(&old);
        st = bl_file_write_new(bl_cli_value(args, "--out"), text.data, text.len, &err);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
done:;
    int rc = st == BL_OK ? bl_cli_emit(&text) : bl_cli_report(&err);
    bl_buf_clear(&text);
    bl_json_destroy(results);
    bl_probe_set_destroy(set);
    bl_record_probes_clear(&probes);
    bl_free(lambdas);
    return rc;
}

const bl_cli_command bl_cli_decode = {
    .name = "decode", .positional = "record", BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = decode_main,
};
