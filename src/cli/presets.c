/* `brainlesslab presets DEST [--node falandays|sorn]`: the capacity
 * library (spec/measurement.md §3.2, platform.md §3.4, tasks.md §5.11).
 * DEST must be new: it is created (with its parents) and gets the 64
 * development profile plans, one `<cell id>.toml` per capacity-probe
 * preset, in write_plan's form: plan id = the cell id, one target
 * "baseline" with `count = 64`, the node kind, the preset's task with its
 * full option set; `blocks = 4`, `trials_per_block = 8`, the preset's
 * horizon, warm-up 0, block scope, `root_seed = 31001`. Every plan is
 * built and resolved before DEST is created, and a failed write removes
 * what was made, so DEST holds all 64 or does not exist. Prints
 * {"directory": DEST, "plans": 64}. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "brainlesslab/task.h"
#include "cli.h"

static const char usage[] =
    "usage: brainlesslab presets [-h] [--node {falandays,sorn}] destination\n";

static const char help[] =
    "\n"
    "Write the 64 development capacity-probe plans (profile, count 64, 4 blocks x\n"
    "8 trials, root seed 31001, each preset's horizon) as DEST/<cell id>.toml;\n"
    "print {\"directory\": DEST, \"plans\": 64}.\n"
    "\n"
    "positional arguments:\n"
    "  destination           new directory for the plans (must not exist)\n"
    "\n"
    "options:\n"
    "  -h, --help            show this help message and exit\n"
    "  --node {falandays,sorn}\n"
    "                        model (default: falandays)\n";

static const char *const nodes[] = {"falandays", "sorn", NULL};

enum { OPT_NODE };

static const bl_cli_option options[] = {
    [OPT_NODE] = {.name = "--node", .kind = BL_CLI_CHOICE, .choices = nodes,
                  .fallback = "falandays"},
};

/* One preset's plan text, built by the profile constructor and resolved. */
static bl_status preset_plan(const bl_task_preset *p, const char *node, bl_buf *text,
                             bl_error *err)
{
    bl_json *opts = NULL;
    bl_status st = bl_task_options_json(&p->options, &opts, err);
    bl_json *comp = bl_json_object(), *task = bl_json_object(), *nd = bl_json_object(),
            *eval = bl_json_object();
    bl_json_put(&st, task, "kind", bl_json_string(bl_task_name(p->options.kind)), err);
    bl_json_put(&st, task, "options", opts, err);
    bl_json_put(&st, nd, "kind", bl_json_string(node), err);
    bl_json_put(&st, comp, "count", bl_json_int(64), err);
    bl_json_put(&st, comp, "node", nd, err);
    bl_json_put(&st, comp, "task", task, err);
    bl_json_put(&st, eval, "blocks", bl_json_int(4), err);
    bl_json_put(&st, eval, "trials_per_block", bl_json_int(8), err);
    bl_json_put(&st, eval, "horizon", bl_json_int(p->horizon), err);
    bl_json_put(&st, eval, "warmup", bl_json_int(0), err);
    bl_json_put(&st, eval, "construction_scope", bl_json_string("block"), err);
    bl_json_put(&st, eval, "root_seed", bl_json_int(31001), err);
    bl_plan *plan = NULL;
    bl_resolved_plan *resolved = NULL;
    if (st == BL_OK)
        st = bl_plan_profile(comp, eval, NULL, p->id, false, &plan, err);
    if (st == BL_OK)
        st = bl_plan_resolve(plan, &resolved, err);
    if (st == BL_OK)
        st = bl_plan_write(plan, text, err);
    if (st != BL_OK)
        bl_error_prefix(err, "preset %s", p->id);
    bl_resolved_plan_destroy(resolved);
    bl_plan_destroy(plan);
    bl_json_destroy(comp);
    bl_json_destroy(eval);
    return st;
}

/* DEST and its files, all or nothing (the signals wait until it is done). */
static bl_status write_all(const char *dest, const bl_task_preset *presets, const bl_buf *texts,
                           size_t n, bl_error *err)
{
    sigset_t old;
    bl_cli_block_interrupts(&old);
    size_t created = 0, written = 0;
    bl_status st = bl_dir_create_exclusive(dest, &created, err);
    const size_t cap = strlen(dest) + sizeof presets->id + sizeof ".toml" + 1;
    char *path = st == BL_OK ? bl_malloc(cap) : NULL;
    if (st == BL_OK && !path)
        st = bl_fail(err, BL_ENOMEM, "out of memory for a path");
    for (; st == BL_OK && written < n; written++) {
        snprintf(path, cap, "%s/%s.toml", dest, presets[written].id);
        st = bl_file_write_new(path, texts[written].data, texts[written].len, err);
    }
    if (st != BL_OK && path) {
        /* The file that failed removed itself; the earlier ones go now. */
        for (size_t i = 0; i + 1 < written; i++) {
            snprintf(path, cap, "%s/%s.toml", dest, presets[i].id);
            (void)unlink(path);
        }
    }
    if (st != BL_OK && created)
        bl_dir_remove_created(dest, created);
    bl_free(path);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return st;
}

static int presets_main(const bl_cli_args *args)
{
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    const char *dest = args->positional;
    bl_task_preset *presets = NULL;
    size_t n = 0;
    bl_status st = bl_capacity_presets(&presets, &n, &err);
    bl_buf *texts = st == BL_OK ? bl_calloc(n, sizeof *texts) : NULL;
    if (st == BL_OK && !texts)
        st = bl_fail(&err, BL_ENOMEM, "out of memory for the plans");
    for (size_t i = 0; texts && i < n; i++)
        bl_buf_init(&texts[i]);
    for (size_t i = 0; st == BL_OK && i < n; i++)
        st = preset_plan(&presets[i], args->value[OPT_NODE], &texts[i], &err);
    /* The line first: a DEST that cannot be printed (not UTF-8) is refused
     * before anything is made. */
    bl_buf line;
    bl_buf_init(&line);
    if (st == BL_OK) {
        bl_json *o = bl_json_object();
        bl_json_put(&st, o, "directory", bl_json_string(dest), &err);
        bl_json_put(&st, o, "plans", bl_json_int((int64_t)n), &err);
        if (st == BL_OK)
            st = bl_json_write(o, BL_JSON_SPACED, &line, &err);
        bl_json_destroy(o);
        bl_buf_putc(&line, '\n');
        if (st == BL_OK)
            st = bl_buf_status(&line, &err);
    }
    if (st == BL_OK)
        st = write_all(dest, presets, texts, n, &err);
    int rc = st != BL_OK ? bl_cli_report(&err) : bl_cli_emit(&line);
    bl_buf_clear(&line);
    for (size_t i = 0; texts && i < n; i++)
        bl_buf_clear(&texts[i]);
    bl_free(texts);
    bl_capacity_presets_destroy(presets, n);
    return rc;
}

const bl_cli_command bl_cli_presets = {
    .name = "presets", .positional = "destination", BL_CLI_OPTIONS(options),
    .usage = usage, .help = help, .main = presets_main,
};
