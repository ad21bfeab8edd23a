/* `brainlesslab export-replay RECORD [--trial KEY] OUT` and `brainlesslab
 * replays DEST` (spec/platform.md §7.8, docs/records.md "Replays").
 *
 * export-replay copies one trial's replay document out of a complete record
 * made with `--recording replay` into a new file: the library selects and
 * checks it (bl_replay_record_text), this file writes it so that a stop
 * signal never leaves a half-written or unreported file.
 *
 * replays runs the eight development cases of §7.8 (Falandays and SORN on
 * Tracking, Pong, Plank CartPole and Delayed Cue, root seed 91407, one
 * trial each) and exports each one's replay with bl_replay_export, as the
 * reference's generate_replays.py does, plus DEST/index.json, and writes
 * the viewer page (web/, embedded by tools/web_embed.c) beside them with
 * each document also wrapped in a script "<id>.js" (and the index in
 * "index.js") that registers it with the page: a page opened from file://
 * may load neighbouring scripts but not fetch neighbouring files
 * (docs/viewer.md). DEST is
 * reserved first (an empty directory, created exclusively), the files are
 * built in a sibling "<DEST>.partial-XXXXXX", and that directory replaces
 * the empty DEST by one rename at the end: an error or a stop signal
 * removes both, so DEST is never left holding part of the replays. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/file.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "brainlesslab/run.h"
#include "brainlesslab/sha256.h"
#include "cli.h"
#include "web_assets.h"

/* ---- export-replay ------------------------------------------------------- */

static const char export_usage[] =
    "usage: brainlesslab export-replay [-h] [--trial TRIAL] record out\n";

static const char export_help[] =
    "\n"
    "Copy one trial's replay document out of a complete record made with\n"
    "--recording replay into the new file OUT (never overwritten); print\n"
    "{\"replay\": OUT, \"status\": \"complete\"} on stdout.\n"
    "\n"
    "positional arguments:\n"
    "  record         record directory\n"
    "  out            new JSON file for the replay document\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help message and exit\n"
    "  --trial TRIAL  trial key <target>/<block>/<trial>; required when the record\n"
    "                 holds more than one replay\n";

enum { OPT_TRIAL };

static const bl_cli_option export_options[] = {
    [OPT_TRIAL] = {.name = "--trial", .kind = BL_CLI_STRING},
};

/* Whether a stop signal is waiting behind the blocked mask. */
static bool stop_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) != 0)
        return false;
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
           sigismember(&pending, SIGHUP) == 1;
}

static int export_main(const bl_cli_args *args)
{
    /* Reading the record writes nothing, so a stop signal may end the
     * command on the spot until the file is created. */
    bl_cli_exit_on_interrupt();
    const char *record = args->positional, *dest = args->positional2;
    bl_error err = {0};
    bl_buf text, line;
    bl_buf_init(&text);
    bl_buf_init(&line);
    int rc;
    if (bl_replay_record_text(record, args->value[OPT_TRIAL], &text, &err) != BL_OK ||
        bl_cli_path_line("replay", dest, "complete", &line, &err) != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }
    /* The file is written whole with the stop signals held back; one that
     * arrived meanwhile removes it again before it ends the program (its
     * handler runs as soon as the mask is restored), so an interrupted
     * export leaves nothing. */
    sigset_t old;
    signal(SIGXFSZ, SIG_IGN); /* a write over RLIMIT_FSIZE fails (EFBIG), never kills */
    bl_cli_block_interrupts(&old);
    bl_status st = bl_file_write_new(dest, text.data, text.len, &err);
    if (st == BL_OK && stop_pending())
        (void)unlink(dest);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    rc = st == BL_OK ? bl_cli_emit(&line) : bl_cli_report(&err);
done:
    bl_buf_clear(&line);
    bl_buf_clear(&text);
    return rc;
}

const bl_cli_command bl_cli_export_replay = {
    .name = "export-replay", .positional = "record", .positional2 = "out",
    BL_CLI_OPTIONS(export_options), .usage = export_usage, .help = export_help,
    .main = export_main,
};

/* ---- replays ------------------------------------------------------------- */

static const char replays_usage[] = "usage: brainlesslab replays [-h] dest\n";

static const char replays_help[] =
    "\n"
    "Run the eight development replay cases (falandays and sorn on tracking,\n"
    "pong, cartpole_plank_easy and delayed_cue; 64 nodes, one trial, root seed\n"
    "91407) and write their replay documents and index.json into the new\n"
    "directory DEST; print {\"index\": DEST/index.json, \"status\": \"complete\"}\n"
    "on stdout. DEST/index.html is a viewer page for them that opens straight\n"
    "from disk in a browser (docs/viewer.md). Replays are diagnostics to look\n"
    "at, never evidence.\n"
    "\n"
    "positional arguments:\n"
    "  dest        new directory for the replays (must not exist)\n"
    "\n"
    "options:\n"
    "  -h, --help  show this help message and exit\n";

/* §7.8: the tasks in the reference's order with their horizons and the
 * titles of their labels (Python's str.title() of the name with spaces). */
static const struct {
    const char *task, *title;
    int64_t horizon;
} replay_tasks[] = {
    {"tracking", "Tracking", 240},
    {"pong", "Pong", 240},
    {"cartpole_plank_easy", "Cartpole Plank Easy", 96},
    {"delayed_cue", "Delayed Cue", 144},
};
static const struct {
    const char *node, *title;
} replay_nodes[] = {{"falandays", "Falandays"}, {"sorn", "SORN"}};

#define NTASKS (sizeof replay_tasks / sizeof *replay_tasks)
#define NCASES (NTASKS * (sizeof replay_nodes / sizeof *replay_nodes))
#define REPLAY_ROOT_SEED 91407
/* Each case's document and script, the index and its script, the page. */
#define MAXFILES (2 * NCASES + 2 + bl_web_nassets)

typedef struct replay_case {
    char id[64];      /* "<node>-<task with _ replaced by ->" */
    char label[96];
    const char *node, *task;
    bl_plan *plan;
    bl_resolved_plan *resolved;
    bl_evaluation_prepared *prepared;
} replay_case;

/* profile(CompositionSpec(NodeSpec(node), TaskSpec(task), count=64),
 * EvaluationSpec(horizon, root_seed=91407), id, diagnostic = not
 * delayed_cue), resolved and prepared for execution. */
static bl_status case_prepare(replay_case *c, int64_t horizon, const bl_execution *x,
                              bl_error *err)
{
    char text[256];
    bl_json *composition = NULL, *evaluation = NULL;
    snprintf(text, sizeof text, "{\"node\": {\"kind\": \"%s\"}, \"task\": {\"kind\": \"%s\"}, "
                                "\"count\": 64}",
             c->node, c->task);
    bl_status st = bl_json_parse(text, strlen(text), "composition", &composition, err);
    if (st == BL_OK) {
        snprintf(text, sizeof text, "{\"horizon\": %lld, \"root_seed\": %d}",
                 (long long)horizon, REPLAY_ROOT_SEED);
        st = bl_json_parse(text, strlen(text), "evaluation", &evaluation, err);
    }
    if (st == BL_OK)
        st = bl_plan_profile(composition, evaluation, NULL, c->id,
                             strcmp(c->task, "delayed_cue") != 0, &c->plan, err);
    if (st == BL_OK)
        st = bl_plan_resolve(c->plan, &c->resolved, err);
    if (st == BL_OK)
        st = bl_evaluation_prepare(c->resolved, x, NULL, 0, &c->prepared, err);
    bl_json_destroy(composition);
    bl_json_destroy(evaluation);
    return st;
}

static void case_clear(replay_case *c)
{
    bl_evaluation_prepared_destroy(c->prepared);
    bl_resolved_plan_destroy(c->resolved);
    bl_plan_destroy(c->plan);
}

/* The files being built: the partial directory and what is in it. */
typedef struct build {
    char *dest;              /* DEST without trailing slashes */
    size_t created_from;     /* bl_dir_create_exclusive's, for the undo */
    bool reserved;
    char *partial;           /* "<dest>.partial-XXXXXX", once made */
    char **files;            /* paths written into it (capacity: MAXFILES) */
    size_t nfiles;
} build;

/* Makes the file (or directory) at path durable before the rename that
 * publishes it. */
static bl_status sync_path(const char *path, bl_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0) {
        const int e = errno;
        if (fd >= 0)
            close(fd);
        return bl_fail(err, BL_EOS, "%s: cannot write: %s", path, strerror(e));
    }
    close(fd);
    return BL_OK;
}

/* Removes everything the command made: the partial files and directory,
 * then the reserved (empty) DEST and the parents it created. */
static void build_undo(build *b)
{
    for (size_t i = 0; i < b->nfiles; i++)
        (void)unlink(b->files[i]);
    if (b->partial)
        (void)rmdir(b->partial);
    if (b->reserved)
        bl_dir_remove_created(b->dest, b->created_from);
}

static void build_clear(build *b)
{
    for (size_t i = 0; i < b->nfiles; i++)
        bl_free(b->files[i]);
    bl_free(b->files);
    bl_free(b->partial);
    bl_free(b->dest);
}

/* A new file `name` in the partial directory holding head, body, tail,
 * synced like the documents; its path is kept for the undo even when the
 * write failed half-way. */
static bl_status write_part(build *b, const char *name, const char *head, const void *body,
                            size_t len, const char *tail, bl_error *err)
{
    bl_buf text;
    bl_buf_init(&text);
    bl_buf_puts(&text, head);
    bl_buf_append(&text, body, len);
    bl_buf_puts(&text, tail);
    bl_status st = bl_buf_status(&text, err);
    char *path = st == BL_OK ? bl_record_path_join(b->partial, name) : NULL;
    if (st == BL_OK && !path)
        st = bl_fail(err, BL_ENOMEM, "out of memory for the replays");
    if (st == BL_OK) {
        st = bl_file_write_new(path, text.data, text.len, err);
        if (st == BL_OK || st == BL_EOS)
            b->files[b->nfiles++] = path;
        else
            bl_free(path);
    }
    if (st == BL_OK)
        st = sync_path(b->files[b->nfiles - 1], err);
    bl_buf_clear(&text);
    return st;
}

/* "<stem>.js": the JSON file just written as the argument of the page's
 * register call, so that index.html can load it with a <script> tag. The
 * id and call are plain ASCII names, safe inside the JavaScript string. */
static bl_status write_script(build *b, const char *stem, const char *call, bl_error *err)
{
    char name[80], head[160];
    snprintf(name, sizeof name, "%.63s.js", stem);
    snprintf(head, sizeof head, "brainlesslabViewer.%s(\"%.63s\", ", call, stem);
    char *json = NULL;
    size_t len = 0;
    bl_status st =
        bl_file_read(b->files[b->nfiles - 1], BL_FILE_JSON_MAX, "replay", 0, &json, &len, err);
    if (st == BL_OK)
        st = write_part(b, name, head, json, len, ");\n", err);
    bl_free(json);
    return st;
}

/* The embedded viewer page (web/). */
static bl_status write_page(build *b, bl_error *err)
{
    bl_status st = BL_OK;
    for (size_t i = 0; i < bl_web_nassets && st == BL_OK; i++)
        st = write_part(b, bl_web_assets[i].name, "", bl_web_assets[i].data,
                        bl_web_assets[i].len, "", err);
    return st;
}

/* One case executed and exported into the partial directory; its index
 * entry appended to `cases`. */
static bl_status case_export(const replay_case *c, const bl_execution *x, build *b,
                             bl_json *cases, bl_error *err)
{
    bl_run_hooks hooks = {.interrupt = &bl_cli_interrupted};
    bl_evaluation *result = NULL;
    bl_recordings recs = {0};
    char file[80], hex[2 * BL_SHA256_BYTES + 1], site_path[96];
    uint8_t digest[BL_SHA256_BYTES];
    bl_status st = bl_evaluate_prepared(c->prepared, &hooks, &result, err);
    const int sig = bl_cli_interrupted;
    if (sig && (st == BL_OK || st == BL_EINTERRUPT))
        st = bl_fail_signal(err, sig);
    for (size_t i = 0; st == BL_OK && i < result->run->ntrials; i++)
        if (result->run->trials[i].status != BL_TRIAL_COMPLETED)
            st = bl_fail(err, BL_ERUNTIME, "display generation failed for %s", c->id);
    if (st == BL_OK)
        st = bl_evaluation_recordings(c->resolved, result, &recs, err);
    snprintf(file, sizeof file, "%.63s.json", c->id);
    char *path = bl_record_path_join(b->partial, file);
    if (st == BL_OK && !path)
        st = bl_fail(err, BL_ENOMEM, "out of memory for the replays");
    bl_record_input in = {
        .plan = c->plan, .resolved = c->resolved, .execution = x, .evaluation = result,
    };
    if (st == BL_OK) {
        st = bl_replay_export(&in, recs.replay_frames, path, NULL, err);
        /* A failed write may have left a partial file: it is undone too. */
        if (st == BL_OK || st == BL_EOS) {
            b->files[b->nfiles++] = path;
            path = NULL;
        }
    }
    if (st == BL_OK)
        st = bl_sha256_file(b->files[b->nfiles - 1], digest, err);
    if (st == BL_OK)
        st = sync_path(b->files[b->nfiles - 1], err);
    if (st == BL_OK)
        st = write_script(b, c->id, "registerReplay", err);
    bl_free(path);
    bl_recordings_clear(&recs);
    bl_evaluation_destroy(result);
    if (st != BL_OK)
        return st;
    bl_hex(digest, sizeof digest, hex);
    snprintf(site_path, sizeof site_path, "/replays/%.63s.json", c->id);
    bl_json *entry = bl_json_object();
    st = entry ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory for the replay index");
    bl_json_put(&st, entry, "id", bl_json_string(c->id), err);
    bl_json_put(&st, entry, "task", bl_json_string(c->task), err);
    bl_json_put(&st, entry, "node", bl_json_string(c->node), err);
    bl_json_put(&st, entry, "label", bl_json_string(c->label), err);
    bl_json_put(&st, entry, "path", bl_json_string(site_path), err);
    bl_json_put(&st, entry, "sha256", bl_json_string(hex), err);
    bl_json_push(&st, cases, entry, err);
    return st;
}

/* index.json: json.dumps(index, indent=2) and a newline, as the reference
 * writes it (so non-ASCII, the labels' "·", is escaped). */
static bl_status write_index(bl_json *cases, build *b, bl_error *err)
{
    bl_json *index = bl_json_object();
    bl_status st = index ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory for the replay index");
    bl_json_put(&st, index, "format", bl_json_string("brainlesslab-replay-index"), err);
    bl_json_put(&st, index, "version", bl_json_int(1), err);
    bl_json_put(&st, index, "cases", cases, err);
    bl_buf text;
    bl_buf_init(&text);
    if (st == BL_OK)
        st = bl_json_write(index, BL_JSON_INDENT | BL_JSON_ASCII, &text, err);
    bl_buf_putc(&text, '\n');
    if (st == BL_OK)
        st = bl_buf_status(&text, err);
    char *path = st == BL_OK ? bl_record_path_join(b->partial, "index.json") : NULL;
    if (st == BL_OK && !path)
        st = bl_fail(err, BL_ENOMEM, "out of memory for the replay index");
    if (st == BL_OK && (st = bl_file_write_new(path, text.data, text.len, err)) == BL_OK) {
        b->files[b->nfiles++] = path;
        path = NULL;
    }
    bl_free(path);
    bl_buf_clear(&text);
    bl_json_destroy(index);
    return st;
}

/* Reserves DEST (empty, exclusive, parents created) and makes the partial
 * sibling directory. */
static bl_status build_start(const char *dest, build *b, bl_error *err)
{
    size_t len = strlen(dest);
    while (len > 1 && dest[len - 1] == '/')
        len--;
    static const char suffix[] = ".partial-XXXXXX";
    if (!(b->dest = bl_strndup(dest, len)) || !(b->partial = bl_malloc(len + sizeof suffix)) ||
        !(b->files = bl_calloc(MAXFILES, sizeof *b->files)))
        return bl_fail(err, BL_ENOMEM, "out of memory for the replays");
    snprintf(b->partial, len + sizeof suffix, "%s%s", b->dest, suffix);
    bl_status st = bl_dir_create_exclusive(b->dest, &b->created_from, err);
    if (st != BL_OK) {
        bl_free(b->partial);
        b->partial = NULL;
        return st;
    }
    b->reserved = true;
    /* mkdtemp makes the directory private (0700); it becomes DEST, which
     * gets the mode a plain mkdir gives (bl_dir_create_exclusive's). */
    const mode_t mask = umask(0);
    umask(mask);
    if (!mkdtemp(b->partial) || chmod(b->partial, 0777 & ~mask) != 0) {
        const int e = errno;
        st = bl_fail(err, BL_EOS, "%s: cannot create directory: %s", b->partial, strerror(e));
        (void)rmdir(b->partial);
        bl_free(b->partial);
        b->partial = NULL;
    }
    return st;
}

/* The partial directory becomes DEST: rename() replaces the empty reserved
 * directory in one step (and fails if anything was put into it). */
static bl_status build_finish(build *b, bl_error *err)
{
    bl_status st = sync_path(b->partial, err);
    if (st == BL_OK && bl_cli_interrupted)
        st = bl_fail_signal(err, bl_cli_interrupted);
    if (st == BL_OK && rename(b->partial, b->dest) != 0) {
        const int e = errno;
        return bl_fail(err, BL_EOS, "%s: cannot rename to %s: %s", b->partial, b->dest,
                       strerror(e));
    }
    if (st != BL_OK)
        return st;
    b->reserved = false; /* nothing left to undo: DEST holds the replays */
    for (; b->nfiles > 0; b->nfiles--)
        bl_free(b->files[b->nfiles - 1]);
    bl_free(b->partial);
    b->partial = NULL;
    char *slash = strrchr(b->dest, '/');
    char *parent = slash ? bl_strndup(b->dest, slash == b->dest ? 1 : (size_t)(slash - b->dest))
                         : NULL;
    (void)sync_path(parent ? parent : ".", err); /* the rename is done either way */
    bl_free(parent);
    return BL_OK;
}

static int replays_main(const bl_cli_args *args)
{
    /* Until DEST is reserved the command owns nothing on disk. */
    bl_cli_exit_on_interrupt();
    bl_error err = {0};
    replay_case cases[NCASES];
    memset(cases, 0, sizeof cases);
    build b = {0};
    bl_json *index_cases = NULL;
    bl_buf line;
    bl_buf_init(&line);
    bl_execution x;
    bl_execution_default(&x);
    x.recording = BL_RECORDING_REPLAY;
    bl_status st = bl_execution_validate(&x, &err);
    int rc;

    /* Every case is built and checked before DEST is touched. */
    for (size_t i = 0; i < NCASES && st == BL_OK; i++) {
        replay_case *c = &cases[i];
        const size_t n = i / NTASKS, t = i % NTASKS;
        c->node = replay_nodes[n].node;
        c->task = replay_tasks[t].task;
        snprintf(c->id, sizeof c->id, "%s-%s", c->node, c->task);
        for (char *p = c->id; *p; p++)
            if (*p == '_')
                *p = '-';
        snprintf(c->label, sizeof c->label, "%s \xc2\xb7 %s \xc2\xb7 development",
                 replay_nodes[n].title, replay_tasks[t].title);
        st = case_prepare(c, replay_tasks[t].horizon, &x, &err);
    }
    struct stat sb;
    if (st == BL_OK && lstat(args->positional, &sb) == 0)
        st = bl_fail(&err, BL_EEXIST, "%s: %s", args->positional, strerror(EEXIST));
    /* "DEST/index.json" with DEST as the user wrote it, less trailing slashes. */
    char *dest = st == BL_OK ? bl_strdup(args->positional) : NULL;
    for (size_t n = dest ? strlen(dest) : 0; n > 1 && dest[n - 1] == '/';)
        dest[--n] = 0;
    char *index_path = dest ? bl_record_path_join(dest, "index.json") : NULL;
    bl_free(dest);
    if (st == BL_OK && !index_path)
        st = bl_fail(&err, BL_ENOMEM, "out of memory for the replays");
    /* The path is printed as JSON at the end: it must be valid UTF-8. */
    if (st == BL_OK)
        st = bl_cli_path_line("index", index_path, "complete", &line, &err);
    if (st != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }

    /* From here a stop signal only raises a flag, which the runner polls at
     * tick boundaries; everything made so far is then removed. */
    bl_cli_flag_interrupts();
    signal(SIGXFSZ, SIG_IGN); /* a write over RLIMIT_FSIZE fails (EFBIG), never kills */
    st = build_start(args->positional, &b, &err);
    if (st == BL_OK && !(index_cases = bl_json_array()))
        st = bl_fail(&err, BL_ENOMEM, "out of memory for the replay index");
    for (size_t i = 0; i < NCASES && st == BL_OK; i++) {
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "[replays] %s (%zu/%zu)\n", cases[i].id, i + 1, (size_t)NCASES);
        st = case_export(&cases[i], &x, &b, index_cases, &err);
    }
    if (st == BL_OK) {
        st = write_index(index_cases, &b, &err);
        index_cases = NULL; /* the index took it, or freed it */
    }
    if (st == BL_OK)
        st = write_script(&b, "index", "registerIndex", &err);
    if (st == BL_OK)
        st = write_page(&b, &err);
    if (st == BL_OK)
        st = build_finish(&b, &err);
    if (st != BL_OK) {
        build_undo(&b);
        rc = bl_cli_report(&err);
    } else {
        rc = bl_cli_emit(&line);
    }
done:
    bl_free(index_path);
    bl_json_destroy(index_cases);
    build_clear(&b);
    for (size_t i = 0; i < NCASES; i++)
        case_clear(&cases[i]);
    bl_buf_clear(&line);
    return rc;
}

const bl_cli_command bl_cli_replays = {
    .name = "replays", .positional = "dest",
    .usage = replays_usage, .help = replays_help, .main = replays_main,
};
