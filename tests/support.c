#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/run.h"
#include "brainlesslab/task.h"
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

const char *const bl_test_task_names[BL_TASK_COUNT] = {
    "tracking",           "pong",        "cartpole_plank_easy",   "delayed_cue",
    "recall_interference", "delayed_xor", "evidence_accumulation", "context_integration",
    "temporal_order",     "reversal_adaptation",
};

bl_task_kind bl_test_task_kind(const char *name)
{
    bl_task_kind k = BL_TASK_TRACKING;
    bl_error err = {0};
    if (bl_task_from_name(name, &k, &err) != BL_OK)
        fail_msg("%s: %s", name, err.msg);
    return k;
}

void bl_test_task_resolve(const char *task, const char *text, bl_task_options *o)
{
    bl_json *given = NULL;
    bl_error err = {0};
    if (text && bl_json_parse(text, strlen(text), "test", &given, &err) != BL_OK)
        fail_msg("bad test JSON %s: %s", text, err.msg);
    bl_status st = bl_task_options_resolve(bl_test_task_kind(task), given, o, &err);
    bl_json_destroy(given);
    if (st != BL_OK)
        fail_msg("%s %s: %s", task, text ? text : "(defaults)", err.msg);
}

static int is_dir(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *bl_test_shared_dir(void)
{
    const char *env = getenv("BL_SHARED_DIR");
    if (env && *env)
        return is_dir(env) ? env : NULL;
    return is_dir(BL_DEFAULT_SHARED_DIR) ? BL_DEFAULT_SHARED_DIR : NULL;
}

const char *bl_test_shared_path(const char *rel)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", bl_test_shared_dir(), rel);
    return path;
}

const char *bl_test_tests_dir(void) { return BL_TESTS_DIR; }

const char *bl_test_cli_path(void) { return BL_CLI_PATH; }

static unsigned char *read_all(const char *path, size_t *len);

/* `prefix` runs before the program on the command line (a `timeout`). */
static int run_cli(const char *prefix, const char *args, char **out, char **err)
{
    char *dir = bl_test_mkdtemp();
    char cmd[16384], outp[4200], errp[4200];
    snprintf(outp, sizeof outp, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    snprintf(cmd, sizeof cmd, "%s'%s' %s >'%s' 2>'%s' </dev/null", prefix, BL_CLI_PATH, args,
             outp, errp);
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc))
        fail_msg("could not run: %s", cmd);
    size_t n;
    unsigned char *o = read_all(outp, &n);
    if (o)
        o[n] = 0;
    unsigned char *e = read_all(errp, &n);
    if (e)
        e[n] = 0;
    if (!o || !e)
        fail_msg("could not read the program's output");
    *out = (char *)o;
    *err = (char *)e;
    bl_test_rmtree(dir);
    free(dir);
    return WEXITSTATUS(rc);
}

void bl_test_make_sparse(const char *path, int64_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
        fail_msg("cannot make the sparse file %s: %s", path, strerror(errno));
    close(fd);
}

int bl_test_run_cli(const char *args, char **out, char **err)
{
    return run_cli("", args, out, err);
}

int bl_test_run_cli_within(int seconds, const char *args, char **out, char **err)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "timeout -s KILL %d ", seconds);
    int rc = run_cli(prefix, args, out, err);
    /* timeout's status for a command it had to kill. */
    if (rc == 137)
        fail_msg("`brainlesslab %s` still ran after %d s (killed)", args, seconds);
    return rc;
}

void bl_test_cli_prints(const char *args, ...)
{
    char *out, *err;
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != 0)
        fail_msg("`brainlesslab %s`: exit %d, stderr:\n%s", args, rc, err);
    va_list ap;
    va_start(ap, args);
    for (const char *want; (want = va_arg(ap, const char *));)
        if (!strstr(out, want))
            fail_msg("`brainlesslab %s` does not print \"%s\":\n%s", args, want, out);
    va_end(ap);
    free(out);
    free(err);
}

pid_t bl_test_start_cli(char *const argv[], const char *outp, const char *errp)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        if (!freopen(outp, "w", stdout) || !freopen(errp, "w", stderr))
            _exit(99);
        execv(bl_test_cli_path(), argv);
        _exit(98);
    }
    setpgid(pid, pid); /* whichever of the two runs first */
    return pid;
}

void bl_test_missing(const char *what)
{
    const char *ci = getenv("CI");
    if (ci && *ci && strcmp(ci, "false") != 0 && strcmp(ci, "0") != 0)
        fail_msg("required for this test under CI but missing: %s", what);
    print_message("[  SKIP    ] missing %s\n", what);
}

static int python_imports(const char *py, const char *modules)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import %s' >/dev/null 2>&1", py, modules);
    return system(cmd) == 0;
}

/* The first of BL_PYTHON, /usr/bin/python3, python3 that imports `modules`. */
static const char *find_python(const char *modules)
{
    const char *env = getenv("BL_PYTHON");
    const char *candidates[] = {env && *env ? env : NULL, "/usr/bin/python3", "python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
        if (candidates[i] && python_imports(candidates[i], modules))
            return candidates[i];
    return NULL;
}

/* find_python for the numpy oracle (0) or the standard library (1), searched
 * once. */
static const char *python_with(size_t which)
{
    static const char *const modules[] = {"numpy", "json, struct"};
    static const char *found[2];
    static bool searched[2];
    if (!searched[which]) {
        found[which] = find_python(modules[which]);
        searched[which] = true;
    }
    return found[which];
}

const char *bl_test_python(void) { return python_with(0); }

const char *bl_test_python_plain(void) { return python_with(1); }

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n + 1 >= cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

void bl_test_numpy(const char *requests, unsigned char **out, size_t *len)
{
    const char *py = bl_test_python();
    if (!py)
        fail_msg("no python3 with numpy");
    char *dir = bl_test_mkdtemp();
    char req[4096], res[4096], cmd[12288];
    snprintf(req, sizeof req, "%s/requests.txt", dir);
    snprintf(res, sizeof res, "%s/results.bin", dir);
    FILE *f = fopen(req, "w");
    if (!f)
        fail_msg("cannot write %s: %s", req, strerror(errno));
    fputs(requests, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' '%s/oracle/numpy_ref.py' '%s' '%s'", py,
             bl_test_tests_dir(), req, res);
    if (system(cmd) != 0)
        fail_msg("the numpy oracle failed: %s", cmd);
    *out = read_all(res, len);
    if (!*out)
        fail_msg("cannot read %s", res);
    bl_test_rmtree(dir);
    free(dir);
}

const unsigned char *bl_test_numpy_next(const unsigned char *out, size_t len,
                                        size_t *pos, size_t *nbytes)
{
    if (len - *pos < 8)
        fail_msg("numpy oracle output truncated at %zu", *pos);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | out[*pos + (size_t)i];
    *pos += 8;
    if (len - *pos < n)
        fail_msg("numpy oracle record truncated at %zu", *pos);
    const unsigned char *rec = out + *pos;
    *pos += (size_t)n;
    *nbytes = (size_t)n;
    return rec;
}

char *bl_test_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0, got;
    char *text = malloc(cap + 1);
    assert_non_null(text);
    while ((got = fread(text + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap) {
            text = realloc(text, (cap *= 2) + 1);
            assert_non_null(text);
        }
    fclose(f);
    text[n] = 0;
    if (len)
        *len = n;
    return text;
}

const bl_json *bl_test_get(const bl_json *o, const char *key)
{
    const bl_json *v = bl_json_get(o, key);
    if (!v)
        fail_msg("missing key %s", key);
    return v;
}

const char *bl_test_str(const bl_json *o, const char *key)
{
    const bl_json *v = bl_test_get(o, key);
    if (bl_json_kindof(v) != BL_JSON_STRING)
        fail_msg("%s is not a string", key);
    return bl_json_get_string(v, NULL);
}

bl_status bl_test_json_made(bl_status st, bl_json *doc)
{
    if (st != BL_OK && doc)
        st = BL_ERUNTIME; /* a failure must leave nothing behind */
    bl_json_destroy(doc);
    return st;
}

char *bl_test_mkdtemp(void)
{
    const char *tmp = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/bl-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(tmpl))
        fail_msg("mkdtemp failed: %s", strerror(errno));
    return strdup(tmpl);
}

void bl_test_rmtree(const char *path)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        print_message("warning: could not remove %s\n", path);
}

/* The state of BL_TEST_IN_DIR: the directory and the paths named in it. */
typedef struct test_dir {
    char *dir;
    char *paths[16];
    size_t npaths;
} test_dir;

int bl_test_dir_setup(void **state)
{
    test_dir *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    d->dir = bl_test_mkdtemp();
    *state = d;
    return 0;
}

int bl_test_dir_teardown(void **state)
{
    test_dir *d = *state;
    bl_test_rmtree(d->dir);
    free(d->dir);
    for (size_t i = 0; i < d->npaths; i++)
        free(d->paths[i]);
    free(d);
    return 0;
}

const char *bl_test_dir(void **state)
{
    return ((test_dir *)*state)->dir;
}

const char *bl_test_path(void **state, const char *name)
{
    test_dir *d = *state;
    if (d->npaths == sizeof d->paths / sizeof *d->paths)
        fail_msg("more than %zu paths in one test directory", d->npaths);
    size_t size = strlen(d->dir) + strlen(name) + 2;
    char *path = malloc(size);
    assert_non_null(path);
    snprintf(path, size, "%s/%s", d->dir, name);
    return d->paths[d->npaths++] = path;
}

struct bl_resolved_plan *bl_test_resolve_text(const char *toml)
{
    bl_json *doc = NULL;
    bl_plan *plan = NULL;
    bl_resolved_plan *r = NULL;
    OK_E(bl_toml_parse(toml, strlen(toml), "plan", &doc, &e_));
    OK_E(bl_plan_from_document(doc, &plan, &e_));
    OK_E(bl_plan_resolve(plan, &r, &e_));
    bl_plan_destroy(plan);
    bl_json_destroy(doc);
    return r;
}

char *bl_test_trials_text(const struct bl_run_result *res)
{
    bl_buf b;
    bl_buf_init(&b);
    for (size_t i = 0; i < res->ntrials; i++) {
        bl_json *row = NULL;
        OK_E(bl_trial_result_json(&res->trials[i], &row, &e_));
        OK_E(bl_json_write(row, BL_JSON_CANONICAL, &b, &e_));
        bl_buf_putc(&b, '\n');
        bl_json_destroy(row);
    }
    OK_E(bl_buf_status(&b, &e_));
    char *s = bl_buf_take(&b, NULL);
    bl_buf_clear(&b);
    return s;
}

long bl_test_fail_each(bl_status (*op)(void *ctx, bl_error *err), void *ctx, long step)
{
    for (long k = 1;; k += k < 32 ? 1 : step) {
        bl_error err = {0};
        bl_alloc_fail_at(k);
        bl_status st = op(ctx, &err);
        bl_alloc_fail_at(0);
        if (st == BL_OK)
            return k;
        if (st != BL_ENOMEM)
            fail_msg("allocation %ld: %s (%s)", k, bl_status_kind(st), err.msg);
        assert_true(err.msg[0] != '\0');
        assert_true(k < 100000);
    }
}
