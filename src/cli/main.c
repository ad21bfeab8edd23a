/* brainlesslab: the command-line program (spec/platform.md §3). main parses
 * the command line like the reference's argparse parser and hands over to
 * one file per command; every error is one line on stderr and stdout carries
 * JSON only (DESIGN.md rule 5). Exit codes: 0 success and --help, 1 any
 * validation or execution error, 2 a bad command line, 128 + the signal
 * after a stop signal (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP). */
#include <openssl/crypto.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "brainlesslab/buf.h"
#include "brainlesslab/version.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab [-h] [--version]\n"
    "                    {check,run,inspect,profile,qualify,decode,sweep,ablate,benchmark,calibrate,presets,export-replay,replays,plot,merge}\n"
    "                    ...\n";

static const char help[] =
    "\n"
    "Execute fresh v4 plans; inspect historical records without replaying them.\n"
    "\n"
    "positional arguments:\n"
    "  {check,run,inspect,profile,qualify,decode,sweep,ablate,benchmark,calibrate,presets,export-replay,replays,plot,merge}\n"
    "    check               validate and resolve a plan without initialising a\n"
    "                        backend\n"
    "    run                 execute a plan and write one new checksummed record\n"
    "    inspect             read v1/v2 record metadata and verify artifact\n"
    "                        checksums\n"
    "    profile             time the backend on a fixed workload and write a\n"
    "                        receipt\n"
    "    qualify             compare a backend against the float64 CPU reference\n"
    "    decode              offline probe decoding of a probe_events record\n"
    "    sweep               write a parameter-sweep plan from a one-target base\n"
    "                        plan\n"
    "    ablate              write an ablation plan from a one-target base plan\n"
    "    benchmark           write a four-task benchmark plan from a base plan\n"
    "    calibrate           write a reference-null calibration plan from a base\n"
    "                        plan\n"
    "    presets             write the 64 capacity-probe plans into a new directory\n"
    "    export-replay       copy one trial's replay document out of a record\n"
    "    replays             run the development replay cases and write their\n"
    "                        documents and index\n"
    "    plot                write SVG figures of a complete record into a new\n"
    "                        directory\n"
    "    merge               combine the shard records of one plan into the record\n"
    "                        a single run writes\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --version             print the program's and its libraries' versions and\n"
    "                        exit\n";

static const bl_cli_command *const commands[] = {
    &bl_cli_check, &bl_cli_run, &bl_cli_inspect, &bl_cli_profile, &bl_cli_qualify, &bl_cli_decode,
    &bl_cli_sweep, &bl_cli_ablate, &bl_cli_benchmark, &bl_cli_calibrate, &bl_cli_presets,
    &bl_cli_export_replay, &bl_cli_replays, &bl_cli_plot,
    &bl_cli_merge,
};

static int print_version(void)
{
    bl_buf out;
    bl_buf_init(&out);
    bl_version_report(&out);
    int rc = bl_cli_emit(&out);
    bl_buf_clear(&out);
    return rc;
}

/* Keeps freed wiring and state buffers in the heap for the next batch. By
 * default glibc maps each allocation over its (adaptive) mmap threshold
 * afresh, so every batch page-faults its N x N matrices in again until the
 * threshold has adapted to them: measured with `profile --count 256 --dtype
 * float32`, the warmed evaluation drops from 15 ms to 7 ms and the first one
 * from 29 ms to 16 ms once the threshold is fixed. Allocations above
 * 256 MiB are still mapped, and memory above 512 MiB free is returned. */
static void heap_policy(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

/* libcrypto serves this program SHA-256 only (core/sha256.c). Its default
 * initialisation, on first use, reads the system's openssl.cnf and enters
 * every cipher and digest in its legacy name tables: about 1 ms of every
 * process's start-up (0.25 ms without those two steps, measured with
 * EVP_Digest over a few bytes). The digests of the default provider, which
 * EVP_sha256 fetches either way, do not depend on either step. */
static void crypto_policy(void)
{
    (void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                                  OPENSSL_INIT_NO_ADD_ALL_DIGESTS,
                              NULL);
}

int main(int argc, char **argv)
{
    heap_policy();
    crypto_policy();
    const bl_cli_program program = {
        .usage = usage,
        .help = help,
        .commands = commands,
        .n_commands = sizeof commands / sizeof *commands,
    };
    bl_cli_args args;
    switch (bl_cli_parse(&program, argc, argv, &args)) {
    case BL_CLI_PROCEED:
        break;
    case BL_CLI_HELP_SHOWN:
        return fflush(stdout) == 0 ? 0 : 1;
    case BL_CLI_VERSION:
        return print_version();
    case BL_CLI_USAGE_ERROR:
        return 2;
    case BL_CLI_NO_MEMORY:
        return 1;
    }
    int rc = args.command->main(&args);
    bl_cli_args_clear(&args);
    return rc;
}
