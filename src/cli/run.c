/* `brainlesslab run` (spec/platform.md §3.2). The command line is parsed in full, so
 * scripts get the reference's usage errors (exit 2) today, but the command
 * itself is not implemented in this build yet: it says so in one line and
 * exits 1 rather than pretend success. */
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab run [-h] [--root ROOT] [--backend {cpu}]\n"
    "                        [--batch-size BATCH_SIZE]\n"
    "                        [--memory-budget-mib MEMORY_BUDGET_MIB]\n"
    "                        [--recording {summary,probe_events,replay}]\n"
    "                        [--recording-budget-mib RECORDING_BUDGET_MIB]\n"
    "                        [--cpu-threads CPU_THREADS]\n"
    "                        [--calibration CALIBRATION]\n"
    "                        plan\n";

static const char help[] =
    "\n"
    "Execute a plan and write one new checksummed record (not implemented in this\n"
    "build yet).\n"
    "\n"
    "positional arguments:\n"
    "  plan                  path of a v4 TOML plan\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --root ROOT           parent directory for the new record (default: records)\n"
    "  --backend {cpu}       execution backend (default: cpu)\n"
    "  --batch-size BATCH_SIZE\n"
    "                        requested maximum batch slots (default: 32)\n"
    "  --memory-budget-mib MEMORY_BUDGET_MIB\n"
    "                        managed-memory budget in MiB (default: 256)\n"
    "  --recording {summary,probe_events,replay}\n"
    "                        recording channel (default: summary)\n"
    "  --recording-budget-mib RECORDING_BUDGET_MIB\n"
    "                        recording budget in MiB, 0 allowed (default: 32)\n"
    "  --cpu-threads CPU_THREADS\n"
    "                        CPU threads (default: 1)\n"
    "  --calibration CALIBRATION\n"
    "                        calibration JSON file or complete record directory;\n"
    "                        repeatable, all records are pooled\n";

static const char *const backends[] = {"cpu", NULL}; /* DESIGN.md: this build's backends */
static const char *const recordings[] = {"summary", "probe_events", "replay", NULL};

/* spec/platform.md §3.1, in the reference's order. */
static const bl_cli_option options[] = {
    {.name = "--root", .kind = BL_CLI_STRING, .fallback = "records"},
    {.name = "--backend", .kind = BL_CLI_CHOICE, .choices = backends, .fallback = "cpu"},
    {.name = "--batch-size", .kind = BL_CLI_INT, .fallback = "32"},
    {.name = "--memory-budget-mib", .kind = BL_CLI_INT, .fallback = "256"},
    {.name = "--recording", .kind = BL_CLI_CHOICE, .choices = recordings, .fallback = "summary"},
    {.name = "--recording-budget-mib", .kind = BL_CLI_INT, .fallback = "32"},
    {.name = "--cpu-threads", .kind = BL_CLI_INT, .fallback = "1"},
    {.name = "--calibration", .kind = BL_CLI_STRING, .repeatable = true},
};

static int run_main(const bl_cli_args *args)
{
    (void)args;
    return bl_cli_not_implemented("run");
}

const bl_cli_command bl_cli_run = {
    .name = "run",
    .positional = "plan",
    .options = options,
    .n_options = sizeof options / sizeof *options,
    .usage = usage,
    .help = help,
    .main = run_main,
};
