/* `brainlesslab profile DEST` (spec/measurement.md §1): timing receipts of a
 * fixed workload, each phase in a fresh worker process. The same command,
 * with the hidden --worker-backend and --process-phase flags, is the worker
 * the parent execs: it prints one PROFILE_RECEIPT= line on stdout.
 *
 * With --isolated it is the stepping benchmark instead (src/measure/
 * stepping.c): one fresh worker, a fixed tape, the stepping timed alone,
 * receipt "brainlesslab-stepping-benchmark" v1. It is a mode of profile
 * rather than a command of its own because it shares profile's whole
 * frame: the destination, the background-activity refusal, the host
 * block, the fresh worker process and its receipt line, the statistics.
 *
 * Exit codes (§1.11): 0 every measurement complete; 1 a failed measurement
 * (the receipt is still written), an existing DEST (FileExistsError) or an
 * error after DEST exists; 2, with nothing created, a bad command line
 * (argparse's usage and error), or one error line for an unresolvable or
 * unadmitted workload (the resolver's kind) or observed background activity
 * or unavailable telemetry without --allow-background-activity
 * (RuntimeError); 130 Ctrl-C. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/measure.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab profile [-h] [--backends {cpu} [{cpu} ...]]\n"
    "                            --dtype {float32,float64}\n"
    "                            [--node {falandays,sorn}]\n"
    "                            [--task {delayed_cue,tracking,pong,cartpole_plank_easy}]\n"
    "                            [--count COUNT] [--batch-size BATCH_SIZE]\n"
    "                            [--trials TRIALS] [--blocks BLOCKS]\n"
    "                            [--samples SAMPLES] [--warmups WARMUPS]\n"
    "                            [--cpu-threads CPU_THREADS]\n"
    "                            [--memory-budget-mib MEMORY_BUDGET_MIB]\n"
    "                            [--recording-budget-mib RECORDING_BUDGET_MIB]\n"
    "                            [--seed SEED] [--horizon HORIZON] [--diagnostic]\n"
    "                            [--recording {none,summary,probe_events,replay}]\n"
    "                            [--allow-background-activity]\n"
    "                            [--activity-cpu-threshold ACTIVITY_CPU_THRESHOLD]\n"
    "                            [--activity-interval ACTIVITY_INTERVAL]\n"
    "                            [--isolated] [--frames FRAMES]\n"
    "                            [--tape-record RECORD] [--tape-trials KEYS]\n"
    "                            [--tape-inputs DIST] [--tape-seed SEED]\n"
    "                            destination\n";

static const char help[] =
    "\n"
    "Time a fixed workload in fresh worker processes (a cold and a warm phase per\n"
    "backend) and write DEST/receipt.json (brainlesslab-backend-profile v1) with\n"
    "the worker logs beside it. Prints {\"receipt\": PATH, \"status\": STATUS}.\n"
    "\n"
    "With --isolated, time pure model stepping instead: one fresh worker builds a\n"
    "fixed tape (--tape-record or --tape-inputs) and the model batches once, then\n"
    "steps --frames frames per slot from the same reset state per sample and writes\n"
    "DEST/receipt.json (brainlesslab-stepping-benchmark v1) with a digest of the\n"
    "final state. --trials, --blocks, --horizon, --diagnostic, --recording and the\n"
    "budgets do not apply to it.\n"
    "\n"
    "positional arguments:\n"
    "  destination           new directory for the receipt (must not exist)\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --backends {cpu} [{cpu} ...]\n"
    "                        backends, distinct, run serially (default: cpu)\n"
    "  --dtype {float32,float64}\n"
    "                        numerics (required; with --tape-record, the record's)\n"
    "  --node {falandays,sorn}\n"
    "                        model (default: falandays)\n"
    "  --task {delayed_cue,tracking,pong,cartpole_plank_easy}\n"
    "                        benchmark task (default: delayed_cue)\n"
    "  --count COUNT         nodes (default: 64)\n"
    "  --batch-size BATCH_SIZE\n"
    "                        requested batch capacity (default: 8)\n"
    "  --trials TRIALS       total trials, divisible by --blocks (default: 8)\n"
    "  --blocks BLOCKS       independent blocks (default: 2)\n"
    "  --samples SAMPLES     warmed, measured evaluations (default: 7)\n"
    "  --warmups WARMUPS     timed evaluations excluded from statistics (default: 1)\n"
    "  --cpu-threads CPU_THREADS\n"
    "                        CPU threads (default: 1)\n"
    "  --memory-budget-mib MEMORY_BUDGET_MIB\n"
    "                        managed-memory budget in MiB (default: 256)\n"
    "  --recording-budget-mib RECORDING_BUDGET_MIB\n"
    "                        recording budget in MiB (default: 32)\n"
    "  --seed SEED           root seed of the development worlds (default: 49001)\n"
    "  --horizon HORIZON     ticks (default: the task's)\n"
    "  --diagnostic          allow physical tasks below their minimum scored ticks\n"
    "  --recording {none,summary,probe_events,replay}\n"
    "                        none evaluates with summary and writes no record\n"
    "                        (default: none)\n"
    "  --allow-background-activity\n"
    "                        measure even when other processes use the CPU or the\n"
    "                        telemetry is unavailable (recorded in the receipt)\n"
    "  --activity-cpu-threshold ACTIVITY_CPU_THRESHOLD\n"
    "                        CPU percent of another process that counts as\n"
    "                        background activity (default: 2.0)\n"
    "  --activity-interval ACTIVITY_INTERVAL\n"
    "                        seconds over which CPU use is measured (default: 1.0)\n"
    "  --isolated            the stepping benchmark: pure model stepping on a fixed\n"
    "                        tape (--batch-size is then the number of slots\n"
    "                        stepped)\n"
    "  --frames FRAMES       --isolated: frames each slot steps per sample\n"
    "                        (required)\n"
    "  --tape-record RECORD  --isolated: a complete record with replays whose\n"
    "                        trials' inputs and noise make the tape; its plan\n"
    "                        decides node, count and dtype\n"
    "  --tape-trials KEYS    --isolated: the trial keys (target/block/trial) of\n"
    "                        --tape-record, comma-separated (default: its only\n"
    "                        replay)\n"
    "  --tape-inputs DIST    --isolated: a synthetic tape of uniform, bernoulli:P\n"
    "                        or normal:SD inputs; the model is --seed's block-0\n"
    "                        wiring for --task's ports\n"
    "  --tape-seed SEED      --isolated: the seed of --tape-inputs (required with\n"
    "                        it)\n";

static const char *const backends[] = {"cpu", NULL};
static const char *const dtypes[] = {"float32", "float64", NULL};
static const char *const nodes[] = {"falandays", "sorn", NULL};
static const char *const tasks[] = {"delayed_cue", "tracking", "pong", "cartpole_plank_easy",
                                    NULL};
static const char *const recordings[] = {"none", "summary", "probe_events", "replay", NULL};
static const char *const process_phases[] = {"cold_cache_new_process", "warm_cache_new_process",
                                             "isolated_new_process", NULL};

enum {
    OPT_BACKENDS,
    OPT_DTYPE,
    OPT_NODE,
    OPT_TASK,
    OPT_COUNT,
    OPT_BATCH_SIZE,
    OPT_TRIALS,
    OPT_BLOCKS,
    OPT_SAMPLES,
    OPT_WARMUPS,
    OPT_CPU_THREADS,
    OPT_MEMORY_BUDGET,
    OPT_RECORDING_BUDGET,
    OPT_SEED,
    OPT_HORIZON,
    OPT_DIAGNOSTIC,
    OPT_RECORDING,
    OPT_ALLOW_ACTIVITY,
    OPT_THRESHOLD,
    OPT_INTERVAL,
    OPT_WORKER_BACKEND,
    OPT_PROCESS_PHASE,
    OPT_ISOLATED,
    OPT_FRAMES,
    OPT_TAPE_RECORD,
    OPT_TAPE_TRIALS,
    OPT_TAPE_INPUTS,
    OPT_TAPE_SEED,
};

static const bl_cli_option options[] = {
    [OPT_BACKENDS] = {.name = "--backends", .kind = BL_CLI_CHOICE, .choices = backends,
                      .fallback = "cpu", .plus = true},
    [OPT_DTYPE] = {.name = "--dtype", .kind = BL_CLI_CHOICE, .choices = dtypes},
    [OPT_NODE] = {.name = "--node", .kind = BL_CLI_CHOICE, .choices = nodes,
                  .fallback = "falandays"},
    [OPT_TASK] = {.name = "--task", .kind = BL_CLI_CHOICE, .choices = tasks,
                  .fallback = "delayed_cue"},
    [OPT_COUNT] = {.name = "--count", .kind = BL_CLI_INT, .fallback = "64"},
    [OPT_BATCH_SIZE] = {.name = "--batch-size", .kind = BL_CLI_INT, .fallback = "8"},
    [OPT_TRIALS] = {.name = "--trials", .kind = BL_CLI_INT, .fallback = "8"},
    [OPT_BLOCKS] = {.name = "--blocks", .kind = BL_CLI_INT, .fallback = "2"},
    [OPT_SAMPLES] = {.name = "--samples", .kind = BL_CLI_INT, .fallback = "7"},
    [OPT_WARMUPS] = {.name = "--warmups", .kind = BL_CLI_INT, .fallback = "1"},
    [OPT_CPU_THREADS] = {.name = "--cpu-threads", .kind = BL_CLI_INT, .fallback = "1"},
    [OPT_MEMORY_BUDGET] = {.name = "--memory-budget-mib", .kind = BL_CLI_INT, .fallback = "256"},
    [OPT_RECORDING_BUDGET] = {.name = "--recording-budget-mib", .kind = BL_CLI_INT,
                              .fallback = "32"},
    [OPT_SEED] = {.name = "--seed", .kind = BL_CLI_INT, .fallback = "49001"},
    [OPT_HORIZON] = {.name = "--horizon", .kind = BL_CLI_INT},
    [OPT_DIAGNOSTIC] = {.name = "--diagnostic", .kind = BL_CLI_SWITCH},
    [OPT_RECORDING] = {.name = "--recording", .kind = BL_CLI_CHOICE, .choices = recordings,
                       .fallback = "none"},
    [OPT_ALLOW_ACTIVITY] = {.name = "--allow-background-activity", .kind = BL_CLI_SWITCH},
    [OPT_THRESHOLD] = {.name = "--activity-cpu-threshold", .kind = BL_CLI_FLOAT,
                       .fallback = "2.0"},
    [OPT_INTERVAL] = {.name = "--activity-interval", .kind = BL_CLI_FLOAT, .fallback = "1.0"},
    /* Hidden (argparse.SUPPRESS): how the parent starts its workers. */
    [OPT_WORKER_BACKEND] = {.name = "--worker-backend", .kind = BL_CLI_CHOICE,
                            .choices = backends},
    [OPT_PROCESS_PHASE] = {.name = "--process-phase", .kind = BL_CLI_CHOICE,
                           .choices = process_phases},
    [OPT_ISOLATED] = {.name = "--isolated", .kind = BL_CLI_SWITCH},
    [OPT_FRAMES] = {.name = "--frames", .kind = BL_CLI_INT},
    [OPT_TAPE_RECORD] = {.name = "--tape-record", .kind = BL_CLI_STRING},
    [OPT_TAPE_TRIALS] = {.name = "--tape-trials", .kind = BL_CLI_STRING},
    [OPT_TAPE_INPUTS] = {.name = "--tape-inputs", .kind = BL_CLI_STRING},
    [OPT_TAPE_SEED] = {.name = "--tape-seed", .kind = BL_CLI_INT},
};

/* The flags of one mode only: end-to-end profile's workload and records,
 * and the stepping benchmark's frames and tape (the others apply to both;
 * --task and --seed only to a synthetic tape, which stepping.c checks). */
static const int profile_only[] = {OPT_TRIALS, OPT_BLOCKS, OPT_MEMORY_BUDGET,
                                   OPT_RECORDING_BUDGET, OPT_HORIZON, OPT_DIAGNOSTIC,
                                   OPT_RECORDING};
static const int isolated_only[] = {OPT_FRAMES, OPT_TAPE_RECORD, OPT_TAPE_TRIALS,
                                    OPT_TAPE_INPUTS, OPT_TAPE_SEED};

/* The first flag given that does not apply to the mode, or NULL. */
static const char *inapplicable(const bl_cli_args *c, bool isolated)
{
    const int *list = isolated ? profile_only : isolated_only;
    const size_t n = isolated ? sizeof profile_only / sizeof *profile_only
                              : sizeof isolated_only / sizeof *isolated_only;
    for (size_t i = 0; i < n; i++)
        if (c->count[list[i]] > 0)
            return options[list[i]].name;
    return NULL;
}

static void args_from_cli(const bl_cli_args *c, bl_profile_args *a)
{
    bl_profile_args_default(a);
    a->destination = c->positional;
    a->nbackends = c->nall[OPT_BACKENDS] < 8 ? c->nall[OPT_BACKENDS] : 8;
    for (size_t i = 0; i < a->nbackends; i++)
        a->backends[i] = c->all[OPT_BACKENDS][i];
    a->dtype = c->value[OPT_DTYPE];
    a->node = c->value[OPT_NODE];
    a->task = c->value[OPT_TASK];
    a->count = c->integer[OPT_COUNT];
    a->batch_size = c->integer[OPT_BATCH_SIZE];
    a->trials = c->integer[OPT_TRIALS];
    a->blocks = c->integer[OPT_BLOCKS];
    a->samples = c->integer[OPT_SAMPLES];
    a->warmups = c->integer[OPT_WARMUPS];
    a->cpu_threads = c->integer[OPT_CPU_THREADS];
    a->memory_budget_mib = c->integer[OPT_MEMORY_BUDGET];
    a->recording_budget_mib = c->integer[OPT_RECORDING_BUDGET];
    a->seed = c->integer[OPT_SEED];
    a->has_horizon = c->count[OPT_HORIZON] > 0;
    a->horizon = a->has_horizon ? c->integer[OPT_HORIZON] : 0;
    a->diagnostic = c->count[OPT_DIAGNOSTIC] > 0;
    a->recording = c->value[OPT_RECORDING];
    a->allow_background_activity = c->count[OPT_ALLOW_ACTIVITY] > 0;
    a->activity_cpu_threshold = c->real[OPT_THRESHOLD];
    a->activity_interval = c->real[OPT_INTERVAL];
    a->worker_backend = c->value[OPT_WORKER_BACKEND];
    a->process_phase = c->value[OPT_PROCESS_PHASE];
    a->isolated = c->count[OPT_ISOLATED] > 0;
    a->has_frames = c->count[OPT_FRAMES] > 0;
    a->frames = a->has_frames ? c->integer[OPT_FRAMES] : 0;
    a->tape_record = c->count[OPT_TAPE_RECORD] ? c->value[OPT_TAPE_RECORD] : NULL;
    a->tape_trials = c->count[OPT_TAPE_TRIALS] ? c->value[OPT_TAPE_TRIALS] : NULL;
    a->tape_inputs = c->count[OPT_TAPE_INPUTS] ? c->value[OPT_TAPE_INPUTS] : NULL;
    a->tape_seed_given = c->count[OPT_TAPE_SEED] > 0;
    a->tape_seed = a->tape_seed_given ? c->integer[OPT_TAPE_SEED] : 0;
    a->node_given = c->count[OPT_NODE] > 0;
    a->count_given = c->count[OPT_COUNT] > 0;
    a->task_given = c->count[OPT_TASK] > 0;
    a->seed_given = c->count[OPT_SEED] > 0;
    a->inapplicable = inapplicable(c, a->isolated);
}

/* argparse's parser.error: the usage, then "<prog>: error: <message>". */
static int usage_error(const bl_error *err)
{
    fputs(usage, stderr);
    fputs("brainlesslab profile: error: ", stderr);
    bl_cli_print_text(stderr, err->msg); /* it may quote what the user typed */
    fputc('\n', stderr);
    return 2;
}

static int worker_main(const bl_profile_args *a, const bl_profile_hooks *h)
{
    bl_error err = {0};
    bl_json *receipt = NULL;
    int code = bl_profile_worker(a, h, &receipt, &err);
    if (!receipt)
        return bl_cli_report(&err);
    bl_buf out;
    bl_buf_init(&out);
    bl_buf_puts(&out, "PROFILE_RECEIPT=");
    bl_status st = bl_json_write(receipt, BL_JSON_SORT_KEYS, &out, &err);
    bl_buf_putc(&out, '\n');
    bl_json_destroy(receipt);
    int rc = st == BL_OK ? bl_cli_emit(&out) : bl_cli_report(&err);
    bl_buf_clear(&out);
    return rc ? rc : code == 130 ? bl_cli_interrupt_exit() : code;
}

static int profile_main(const bl_cli_args *args)
{
    /* The parent waits for its worker (which gets the same Ctrl-C) and
     * writes the receipt of what ran; the worker stops its evaluation. */
    bl_cli_flag_interrupts();
    signal(SIGPIPE, SIG_IGN);

    bl_profile_args a;
    args_from_cli(args, &a);
    bl_profile_hooks hooks = {.interrupt = &bl_cli_interrupted};
    bl_error err = {0};
    if (a.worker_backend) {
        if (bl_profile_validate(&a, &err) != BL_OK)
            return usage_error(&err);
        return worker_main(&a, &hooks);
    }

    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        bl_fail(&err, BL_EOS, "cannot find this executable for the workers");
        return bl_cli_report(&err);
    }
    self[n] = 0;
    char *path = NULL;
    int code = bl_profile_parent(&a, self, &hooks, &path, &err);
    const bl_error failure = err; /* err is reused for the stdout line */
    if (!path) {
        /* argparse's form only for a flag value; a workload that does not
         * resolve or a busy machine is one line with its reason (exit 2). */
        if (code == 2 && err.status == BL_EUSAGE)
            return usage_error(&err);
        if (err.status == BL_EINTERRUPT) /* the signal's own kind and message */
            bl_fail_signal(&err, bl_cli_interrupted);
        int rc = bl_cli_report(&err);
        return code == 2 ? 2 : rc;
    }
    bl_buf out;
    bl_buf_init(&out);
    int rc;
    if (bl_cli_path_line("receipt", path, code == 0 ? "complete" : "failed", &out, &err) != BL_OK)
        rc = bl_cli_report(&err);
    else
        rc = bl_cli_emit(&out);
    bl_buf_clear(&out);
    bl_free(path);
    if (code == 130) { /* stopped by a signal: its own line and exit code */
        bl_fail_signal(&err, bl_cli_interrupted);
        code = bl_cli_report(&err);
    }
    if (rc == 0 && code == 1)
        bl_cli_report(&failure); /* which measurement failed */
    return rc ? rc : code;
}

const bl_cli_command bl_cli_profile = {
    .name = "profile", .positional = "destination", BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = profile_main,
};
