/* The plan generators (spec/platform.md §1.6): `brainlesslab sweep`,
 * `ablate`, `benchmark` and `calibrate` write the plan the reference's
 * operation constructor builds, in write_plan's form (§2.2), to --out
 * (created exclusively, parents made) or to stdout.
 *
 * Their input is a base plan with exactly one target: its composition, and
 * the plan's evaluation and numerics, are the constructor's composition,
 * evaluation and numerics (benchmark takes the composition's node and
 * count, calibrate the whole composition and the evaluation with what
 * calibration fixes replaced). Everything else the constructor takes is an
 * option with the constructor's default (--axis, --verb, --tick,
 * --diagnostic, --root-seed, --warmup), and --id, --question, --version and
 * --evidence set the plan's own texts (the constructors leave the question
 * ""), all of which enter the contract hash. The base target's id, label,
 * keys, controller and interventions are not used: the constructors make
 * their own targets.
 *
 * The plan is built by the library's constructor (include/brainlesslab/
 * plan.h), which validates it like a plan read from a file, and resolved
 * before a byte is written, so what a generator writes always passes
 * `check`. Errors: a bad command line (unknown option, a malformed or
 * repeated --axis, an axis that is no parameter of the base node, a bad
 * choice) is argparse's usage and error line, exit 2; everything the plan
 * rules refuse is one line with the spec's kind and text, exit 1; an
 * existing --out is FileExistsError and is left as it was. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "cli.h"

/* Every generator's table starts with these, so the shared code reads them
 * by index. */
enum { OPT_OUT, OPT_ID, OPT_QUESTION, OPT_VERSION, OPT_EVIDENCE, N_COMMON };

#define COMMON_OPTIONS                                                         \
    [OPT_OUT] = {.name = "--out", .kind = BL_CLI_STRING},                      \
    [OPT_ID] = {.name = "--id", .kind = BL_CLI_STRING},                        \
    [OPT_QUESTION] = {.name = "--question", .kind = BL_CLI_STRING},            \
    [OPT_VERSION] = {.name = "--version", .kind = BL_CLI_STRING},              \
    [OPT_EVIDENCE] = {.name = "--evidence", .kind = BL_CLI_STRING}

#define COMMON_HELP                                                            \
    "  --out OUT             write the plan to this new file (parents are\n"   \
    "                        created; an existing file is an error) instead of\n" \
    "                        stdout, and print {\"plan\": OUT, \"contract_hash\": ...}\n" \
    "  --id ID               plan id (default: the constructor's)\n"           \
    "  --question QUESTION   the plan's question (default: \"\")\n"            \
    "  --version VERSION     the study protocol's version (default: 1)\n"      \
    "  --evidence EVIDENCE   evidence state (default: exploratory)\n"

#define BASE_HELP                                                              \
    "positional arguments:\n"                                                  \
    "  base                  a v4 plan with one target: its composition, and the\n" \
    "                        plan's evaluation and numerics, are used\n"       \
    "\n"                                                                       \
    "options:\n"                                                               \
    "  -h, --help            show this help message and exit\n"

/* A usage error after parsing: argparse's form, exit 2. */
static int usage_error(const bl_cli_args *args, const char *message)
{
    fputs(args->command->usage, stderr);
    fprintf(stderr, "brainlesslab %s: error: ", args->command->name);
    bl_cli_print_text(stderr, message); /* it quotes what the user typed */
    fputc('\n', stderr);
    return 2;
}

/* What a generator gets from its base plan. */
typedef struct base_plan {
    bl_plan *plan;
    const bl_json *composition, *evaluation, *numerics;
} base_plan;

static bl_status read_base(const char *path, base_plan *b, bl_error *err)
{
    memset(b, 0, sizeof *b);
    bl_status st = bl_plan_read(path, &b->plan, err);
    if (st != BL_OK)
        return st;
    const bl_json *plain = bl_plan_plain(b->plan);
    const bl_json *targets = bl_plan_member(plain, "targets");
    if (bl_json_size(targets) != 1)
        return bl_fail(err, BL_EVALUE, "%s: a base plan needs exactly one target (found %zu)",
                       path, bl_json_size(targets));
    b->composition = bl_plan_member(bl_json_at(targets, 0), "composition");
    b->evaluation = bl_plan_member(plain, "evaluation");
    b->numerics = bl_plan_member(plain, "numerics");
    return BL_OK;
}

/* Creates the missing parents of `path` (none when they exist); *made gets
 * the directory that was created and *from bl_dir_create_exclusive's
 * prefix, for undoing (NULL when nothing was made). */
static bl_status make_parents(const char *path, char **made, size_t *from, bl_error *err)
{
    *made = NULL;
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return BL_OK;
    char *dir = bl_strndup(path, (size_t)(slash - path));
    if (!dir)
        return bl_fail(err, BL_ENOMEM, "out of memory for a path");
    struct stat sb;
    if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        bl_free(dir);
        return BL_OK;
    }
    bl_status st = bl_dir_create_exclusive(dir, from, err);
    if (st != BL_OK)
        bl_free(dir);
    else
        *made = dir;
    return st;
}

/* The plan's text into a new file `path`, whole or not at all: a failed
 * write removes what it made, and a stop signal waits until it is done. */
static bl_status write_new(const char *path, const bl_buf *text, bl_error *err)
{
    sigset_t old;
    bl_cli_block_interrupts(&old);
    char *made = NULL;
    size_t from = 0;
    bl_status st = make_parents(path, &made, &from, err);
    if (st == BL_OK)
        st = bl_file_write_new(path, text->data, text->len, err);
    if (st != BL_OK && made)
        bl_dir_remove_created(made, from);
    bl_free(made);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return st;
}

/* Retitles the constructed plan, resolves it and writes it: the end every
 * generator shares. Takes `built` over. */
static int finish(const bl_cli_args *args, bl_plan *built, bl_error *err)
{
    bl_plan *plan = NULL;
    bl_resolved_plan *resolved = NULL;
    bl_buf text, line;
    bl_buf_init(&text);
    bl_buf_init(&line);
    int rc;
    bl_status st = bl_plan_retitle(built, args->value[OPT_ID], args->value[OPT_QUESTION],
                                   args->value[OPT_VERSION], args->value[OPT_EVIDENCE], &plan,
                                   err);
    if (st == BL_OK)
        st = bl_plan_resolve(plan, &resolved, err);
    if (st == BL_OK)
        st = bl_plan_write(plan, &text, err);
    const char *out = args->value[OPT_OUT];
    if (st == BL_OK && out) {
        bl_json *o = bl_json_object();
        bl_json_put(&st, o, "plan", bl_json_string(out), err);
        bl_json_put(&st, o, "contract_hash",
                    bl_json_string(bl_resolved_contract_hash(resolved)), err);
        if (st == BL_OK)
            st = bl_json_write(o, BL_JSON_SPACED, &line, err);
        bl_json_destroy(o);
        bl_buf_putc(&line, '\n');
        if (st == BL_OK)
            st = bl_buf_status(&line, err);
        if (st == BL_OK)
            st = write_new(out, &text, err);
    }
    if (st != BL_OK)
        rc = bl_cli_report(err);
    else
        rc = bl_cli_emit(out ? &line : &text);
    bl_buf_clear(&line);
    bl_buf_clear(&text);
    bl_resolved_plan_destroy(resolved);
    bl_plan_destroy(plan);
    bl_plan_destroy(built);
    return rc;
}

/* A generator's body: the plan from the base and the command's options
 * (a usage error as BL_EUSAGE with its message). */
typedef bl_status (*build_fn)(const bl_cli_args *args, const base_plan *base, void *ctx,
                              bl_plan **out, bl_error *err);

/* Reads the base, builds, then finish(); every error is reported here. */
static int generate(const bl_cli_args *args, build_fn build, void *ctx)
{
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    base_plan base;
    bl_plan *built = NULL;
    bl_status st = read_base(args->positional, &base, &err);
    if (st == BL_OK)
        st = build(args, &base, ctx, &built, &err);
    int rc = st == BL_EUSAGE ? usage_error(args, err.msg)
             : st != BL_OK   ? bl_cli_report(&err)
                             : finish(args, built, &err);
    bl_plan_destroy(base.plan);
    return rc;
}

/* ---- sweep ------------------------------------------------------------ */

enum { OPT_AXIS = N_COMMON, OPT_SWEEP_DIAGNOSTIC };

static const char sweep_usage[] =
    "usage: brainlesslab sweep [-h] [--out OUT] [--id ID] [--question QUESTION]\n"
    "                          [--version VERSION] [--evidence EVIDENCE]\n"
    "                          --axis NAME=VALUES [--diagnostic]\n"
    "                          base\n";

static const char sweep_help[] =
    "\n"
    "Write a sweep plan: one target per cell of the Cartesian product of the\n"
    "axes (first axis outermost), the base node's parameters overlaid with the\n"
    "cell; target id = first 16 hex digits of the digest of the merged\n"
    "parameters, label = the cell as a Python dict.\n"
    "\n" BASE_HELP COMMON_HELP
    "  --axis NAME=VALUES    a node parameter and its values as TOML values\n"
    "                        separated by commas (leak=0.1,0.25,0.5;\n"
    "                        weight_init_mode=\"excitatory\",\"pong_mixed\";\n"
    "                        input_link_p=[0.1,0.2],[0.2,0.1]); 1 and 1.0 differ;\n"
    "                        repeat for more axes (required)\n"
    "  --diagnostic          plan diagnostic = true\n";

/* The parameter names of a node kind: the keys of its resolved model
 * configuration, asked of the resolver so that they cannot drift. */
static bl_status parameter_names(const char *kind, bl_json **names, bl_error *err)
{
    *names = NULL;
    bl_json *comp = bl_json_object(), *node = bl_json_object();
    bl_status st = BL_OK;
    bl_json_put(&st, node, "kind", bl_json_string(kind), err);
    bl_json_put(&st, comp, "node", node, err);
    bl_plan *plan = NULL;
    bl_resolved_plan *r = NULL;
    if (st == BL_OK)
        st = bl_plan_profile(comp, NULL, NULL, NULL, false, &plan, err);
    if (st == BL_OK)
        st = bl_plan_resolve(plan, &r, err);
    if (st == BL_OK)
        *names = bl_json_copy(bl_plan_member(bl_resolved_target(r, 0), "model_config"));
    if (st == BL_OK && !*names)
        st = bl_fail(err, BL_ENOMEM, "out of memory for a plan");
    bl_resolved_plan_destroy(r);
    bl_plan_destroy(plan);
    bl_json_destroy(comp);
    return st;
}

/* One --axis NAME=VALUES into axes (a malformed one is BL_EUSAGE). The
 * values are read as the elements of a TOML array. */
static bl_status add_axis(bl_json *axes, const char *arg, bl_error *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return bl_fail(err, BL_EUSAGE, "argument --axis: expected NAME=VALUES, got '%s'", arg);
    size_t len = (size_t)(eq - arg);
    if (len > 5 && strncmp(arg, "node.", 5) == 0) { /* the optional table prefix */
        arg += 5;
        len -= 5;
    }
    char *name = bl_strndup(arg, len);
    bl_buf doc;
    bl_buf_init(&doc);
    bl_buf_printf(&doc, "v = [%s]\n", eq + 1);
    bl_json *parsed = NULL;
    bl_status st = !name ? bl_fail(err, BL_ENOMEM, "out of memory for an axis")
                         : bl_buf_status(&doc, err);
    if (st == BL_OK && bl_json_get(axes, name))
        st = bl_fail(err, BL_EUSAGE, "argument --axis: %s is given twice", name);
    if (st == BL_OK) {
        bl_error ignored;
        /* One key "v" and nothing else: a value list cannot close the array
         * and start a table of its own. */
        if (bl_toml_parse(doc.data, doc.len, "--axis", &parsed, &ignored) != BL_OK ||
            bl_json_size(parsed) != 1 || !bl_json_get(parsed, "v"))
            st = bl_fail(err, BL_EUSAGE,
                         "argument --axis: the values of %s are not TOML values separated by "
                         "commas (strings need double quotes): '%s'",
                         name, eq + 1);
    }
    if (st == BL_OK)
        st = bl_json_object_set(axes, name, bl_json_copy(bl_json_get(parsed, "v")), err);
    bl_json_destroy(parsed);
    bl_buf_clear(&doc);
    bl_free(name);
    return st;
}

/* A name in axes that is no parameter of `kind` is BL_EUSAGE. */
static bl_status check_axis_names(const bl_json *axes, const char *kind, bl_error *err)
{
    bl_json *names = NULL;
    bl_status st = parameter_names(kind, &names, err);
    for (size_t a = 0; st == BL_OK && a < bl_json_size(axes); a++) {
        const char *name = bl_json_key_at(axes, a, NULL);
        if (bl_json_get(names, name))
            continue;
        char storage[BL_ERROR_MAX];
        bl_buf b;
        bl_buf_init_fixed(&b, storage, sizeof storage);
        bl_buf_printf(&b, "argument --axis: unknown %s parameter '%s' (allowed:", kind, name);
        for (size_t k = 0; k < bl_json_size(names); k++)
            bl_buf_printf(&b, "%s %s", k ? "," : "", bl_json_key_at(names, k, NULL));
        bl_buf_putc(&b, ')');
        st = bl_fail(err, BL_EUSAGE, "%s", b.failed ? "argument --axis: unknown parameter"
                                                    : b.data);
        bl_buf_clear(&b);
    }
    bl_json_destroy(names);
    return st;
}

static bl_status build_sweep(const bl_cli_args *args, const base_plan *base, void *axes,
                             bl_plan **out, bl_error *err)
{
    const char *kind = bl_plan_string(bl_plan_member(base->composition, "node"), "kind");
    bl_status st = check_axis_names(axes, kind, err);
    if (st == BL_OK)
        st = bl_plan_sweep(base->composition, axes, base->evaluation, base->numerics, NULL,
                           args->count[OPT_SWEEP_DIAGNOSTIC] > 0, out, err);
    return st;
}

static int sweep_main(const bl_cli_args *args)
{
    bl_error err = {0};
    bl_json *axes = bl_json_object();
    bl_status st = axes ? BL_OK : bl_fail(&err, BL_ENOMEM, "out of memory for the axes");
    /* The axes' syntax is the command line's: checked before any file. */
    for (size_t k = 0; st == BL_OK && k < args->nall[OPT_AXIS]; k++)
        st = add_axis(axes, args->all[OPT_AXIS][k], &err);
    if (st == BL_OK && args->nall[OPT_AXIS] == 0)
        st = bl_fail(&err, BL_EUSAGE, "the following arguments are required: --axis");
    int rc = st == BL_EUSAGE ? usage_error(args, err.msg)
             : st != BL_OK   ? bl_cli_report(&err)
                             : generate(args, build_sweep, axes);
    bl_json_destroy(axes);
    return rc;
}

static const bl_cli_option sweep_options[] = {
    COMMON_OPTIONS,
    [OPT_AXIS] = {.name = "--axis", .kind = BL_CLI_STRING, .repeatable = true},
    [OPT_SWEEP_DIAGNOSTIC] = {.name = "--diagnostic", .kind = BL_CLI_SWITCH},
};

const bl_cli_command bl_cli_sweep = {
    .name = "sweep", .positional = "base", BL_CLI_OPTIONS(sweep_options),
    .usage = sweep_usage, .help = sweep_help, .main = sweep_main,
};

/* ---- ablate ----------------------------------------------------------- */

enum { OPT_VERB = N_COMMON, OPT_TICK, OPT_ABLATE_DIAGNOSTIC };

static const char ablate_usage[] =
    "usage: brainlesslab ablate [-h] [--out OUT] [--id ID] [--question QUESTION]\n"
    "                           [--version VERSION] [--evidence EVIDENCE]\n"
    "                           [--verb {freeze_weights,freeze_plasticity,blind_input,"
    "shuffle_input}]\n"
    "                           [--tick TICK] [--diagnostic]\n"
    "                           base\n";

static const char ablate_help[] =
    "\n"
    "Write an ablation plan: target \"baseline\" (the base composition), then one\n"
    "target per verb, id = the verb, with the single intervention (tick, verb).\n"
    "\n" BASE_HELP COMMON_HELP
    "  --verb {freeze_weights,freeze_plasticity,blind_input,shuffle_input}\n"
    "                        one intervention target; repeat for more, in order\n"
    "                        (default: freeze_weights, then freeze_plasticity)\n"
    "  --tick TICK           one-based world tick of every intervention (default: 1)\n"
    "  --diagnostic          plan diagnostic = true\n";

static const char *const verbs[] = {"freeze_weights", "freeze_plasticity", "blind_input",
                                    "shuffle_input", NULL};

static bl_status build_ablate(const bl_cli_args *args, const base_plan *base, void *ctx,
                              bl_plan **out, bl_error *err)
{
    (void)ctx;
    /* Not given: the constructor's default verbs. */
    const size_t n = args->nall[OPT_VERB];
    return bl_plan_ablate(base->composition, n ? args->all[OPT_VERB] : NULL, n,
                          args->integer[OPT_TICK], base->evaluation, base->numerics, NULL,
                          args->count[OPT_ABLATE_DIAGNOSTIC] > 0, out, err);
}

static int ablate_main(const bl_cli_args *args)
{
    return generate(args, build_ablate, NULL);
}

static const bl_cli_option ablate_options[] = {
    COMMON_OPTIONS,
    [OPT_VERB] = {.name = "--verb", .kind = BL_CLI_CHOICE, .choices = verbs,
                  .repeatable = true},
    [OPT_TICK] = {.name = "--tick", .kind = BL_CLI_INT, .fallback = "1"},
    [OPT_ABLATE_DIAGNOSTIC] = {.name = "--diagnostic", .kind = BL_CLI_SWITCH},
};

const bl_cli_command bl_cli_ablate = {
    .name = "ablate", .positional = "base", BL_CLI_OPTIONS(ablate_options),
    .usage = ablate_usage, .help = ablate_help, .main = ablate_main,
};

/* ---- benchmark -------------------------------------------------------- */

static const char benchmark_usage[] =
    "usage: brainlesslab benchmark [-h] [--out OUT] [--id ID]\n"
    "                              [--question QUESTION] [--version VERSION]\n"
    "                              [--evidence EVIDENCE]\n"
    "                              base\n";

static const char benchmark_help[] =
    "\n"
    "Write a benchmark plan: for tracking, pong, cartpole_plank_easy and\n"
    "delayed_cue, a reservoir target <task> and a reference_null target\n"
    "<task>_null, paired by \"benchmark/<task>\", with the base composition's node\n"
    "and count (its task and input gain are not used).\n"
    "\n" BASE_HELP COMMON_HELP;

static bl_status build_benchmark(const bl_cli_args *args, const base_plan *base, void *ctx,
                                 bl_plan **out, bl_error *err)
{
    (void)args;
    (void)ctx;
    return bl_plan_benchmark(bl_plan_member(base->composition, "node"),
                             bl_plan_int(base->composition, "count"), base->evaluation,
                             base->numerics, NULL, out, err);
}

static int benchmark_main(const bl_cli_args *args)
{
    return generate(args, build_benchmark, NULL);
}

static const bl_cli_option benchmark_options[] = {COMMON_OPTIONS};

const bl_cli_command bl_cli_benchmark = {
    .name = "benchmark", .positional = "base", BL_CLI_OPTIONS(benchmark_options),
    .usage = benchmark_usage, .help = benchmark_help, .main = benchmark_main,
};

/* ---- calibrate -------------------------------------------------------- */

enum { OPT_ROOT_SEED = N_COMMON, OPT_WARMUP };

static const char calibrate_usage[] =
    "usage: brainlesslab calibrate [-h] [--out OUT] [--id ID]\n"
    "                              [--question QUESTION] [--version VERSION]\n"
    "                              [--evidence EVIDENCE] [--root-seed ROOT_SEED]\n"
    "                              [--warmup WARMUP]\n"
    "                              base\n";

static const char calibrate_help[] =
    "\n"
    "Write a calibration plan: one target \"reference_null\" (controller\n"
    "reference_null, the base composition), the base evaluation with 1024 blocks\n"
    "of 1 trial in the seed partition \"calibration\" and the given root seed and\n"
    "warm-up (its horizon and construction scope are kept). Plan id default:\n"
    "calibration.\n"
    "\n" BASE_HELP COMMON_HELP
    "  --root-seed ROOT_SEED root seed of the calibration worlds (default: 0)\n"
    "  --warmup WARMUP       warm-up ticks (default: 0)\n";

static bl_status build_calibrate(const bl_cli_args *args, const base_plan *base, void *ctx,
                                 bl_plan **out, bl_error *err)
{
    (void)ctx;
    return bl_plan_calibrate_from(base->composition, base->evaluation,
                                  args->integer[OPT_ROOT_SEED], base->numerics,
                                  args->integer[OPT_WARMUP], out, err);
}

static int calibrate_main(const bl_cli_args *args)
{
    return generate(args, build_calibrate, NULL);
}

static const bl_cli_option calibrate_options[] = {
    COMMON_OPTIONS,
    [OPT_ROOT_SEED] = {.name = "--root-seed", .kind = BL_CLI_INT, .fallback = "0"},
    [OPT_WARMUP] = {.name = "--warmup", .kind = BL_CLI_INT, .fallback = "0"},
};

const bl_cli_command bl_cli_calibrate = {
    .name = "calibrate", .positional = "base", BL_CLI_OPTIONS(calibrate_options),
    .usage = calibrate_usage, .help = calibrate_help, .main = calibrate_main,
};
