/* Shared helpers of the test executables: where the shared fixtures are,
 * where a NumPy oracle is, and temporary files.
 *
 * Skips are never silent: a test that cannot find ../shared or NumPy prints
 * why and is skipped on a developer's machine, and fails when CI is set. */
#ifndef BL_TEST_SUPPORT_H
#define BL_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <sys/types.h>

#include "brainlesslab/status.h"
#include "brainlesslab/task.h"

/* The shared folder (BL_SHARED_DIR, else the one beside the project), or
 * NULL when it is absent. */
const char *bl_test_shared_dir(void);
/* "<shared>/<rel>" in a static buffer; call only after BL_REQUIRE_SHARED. */
const char *bl_test_shared_path(const char *rel);
/* A python3 that can import numpy (BL_PYTHON, /usr/bin/python3, python3 on
 * PATH), or NULL. */
const char *bl_test_python(void);
/* Any python3 (BL_PYTHON, /usr/bin/python3, python3 on PATH) for checks that
 * need only the standard library (repr, json), or NULL. */
const char *bl_test_python_plain(void);

/* Bit patterns of doubles, for exact comparisons. */
static inline uint64_t bl_test_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}
static inline double bl_test_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}
/* Fails the test unless `got` has exactly the bits of `want`. */
#define BL_ASSERT_SAME_BITS(got, want)                                         \
    do {                                                                       \
        double g_ = (got), w_ = (want);                                        \
        if (bl_test_bits(g_) != bl_test_bits(w_))                              \
            fail_msg("%s = %.17g (%a), expected %.17g (%a)", #got, g_, g_, w_, w_); \
    } while (0)

/* The task names in bl_task_kind order (BL_TASK_COUNT of them), written
 * out independently of the library's own table. */
extern const char *const bl_test_task_names[];
/* The task kind of `name`; fails the test on an unknown name. */
bl_task_kind bl_test_task_kind(const char *name);
/* Resolves `text` (a JSON object, or NULL for the defaults) into *o for
 * `task`; fails the test on any error. Clear with bl_task_options_clear. */
void bl_test_task_resolve(const char *task, const char *text, bl_task_options *o);

/* The project's tests/ folder. */
const char *bl_test_tests_dir(void);
/* The built brainlesslab program. */
const char *bl_test_cli_path(void);

/* Runs the program with `args` (a shell-quoted argument string), capturing
 * stdout and stderr into heap strings (caller frees); returns the exit code. */
int bl_test_run_cli(const char *args, char **out, char **err);
/* bl_test_run_cli, killed after `seconds`, which then fails the test: for
 * commands that once waited forever. */
int bl_test_run_cli_within(int seconds, const char *args, char **out, char **err);

/* Runs the program with `args`, which must exit 0 and print each of the
 * NULL-terminated texts after it somewhere on stdout. */
void bl_test_cli_prints(const char *args, ...);

/* Starts the program with `argv` (argv[0] ignored), stdout and stderr into
 * the files, in its own process group. */
pid_t bl_test_start_cli(char *const argv[], const char *outp, const char *errp);

/* The one check of a bl_status call: runs `call`, which reports into the
 * local `bl_error e_` this macro declares (pass &e_ as its error), and fails
 * the test with the call and its message when it is not BL_OK. */
#define OK_E(call)                                                             \
    do {                                                                       \
        bl_error e_ = {0};                                                     \
        bl_status st_ = (call);                                                \
        if (st_ != BL_OK)                                                      \
            fail_msg("%s: %s", #call, e_.msg);                                 \
    } while (0)

/* A plan given as TOML text, validated and resolved; fails the test on any
 * error. Free with bl_resolved_plan_destroy. */
struct bl_resolved_plan;
struct bl_resolved_plan *bl_test_resolve_text(const char *toml);

/* A run's whole trial table as text, one canonical JSON row per line, for
 * byte-for-byte comparisons (caller frees with bl_free). */
struct bl_run_result;
char *bl_test_trials_text(const struct bl_run_result *res);

/* Reason printed when a requirement is missing; fails under CI. */
void bl_test_missing(const char *what);

/* Skips the test, saying `what` is missing, when `have` is false (fails it
 * under CI: bl_test_missing). */
#define BL_REQUIRE(have, what)                                                 \
    do {                                                                       \
        if (!(have)) {                                                         \
            bl_test_missing(what);                                             \
            skip();                                                            \
        }                                                                      \
    } while (0)

#define BL_REQUIRE_SHARED()                                                    \
    BL_REQUIRE(bl_test_shared_dir(), "the shared fixtures folder (set BL_SHARED_DIR)")
#define BL_REQUIRE_NUMPY()                                                     \
    BL_REQUIRE(bl_test_python(), "python3 with numpy (apt-get install python3-numpy)")

/* Runs the NumPy oracle tests/oracle/numpy_ref.py on `requests` (one request
 * per line, see that script) and returns its output: one record per request,
 * each a little-endian uint64 byte count followed by that many bytes.
 * The caller frees *out with free(). Fails the test on any error. */
void bl_test_numpy(const char *requests, unsigned char **out, size_t *len);

/* Reads the next record of a numpy oracle output; returns its bytes and
 * length, advancing *pos. Fails the test on a truncated output. */
const unsigned char *bl_test_numpy_next(const unsigned char *out, size_t len,
                                        size_t *pos, size_t *nbytes);

/* Fails allocation k = 1, 2, ... of op (every one up to 32, then every
 * `step`-th) until op succeeds, and returns that k: every failing run must
 * be a clean BL_ENOMEM with a message (the sanitizer build proves nothing
 * leaks). */
long bl_test_fail_each(bl_status (*op)(void *ctx, bl_error *err), void *ctx, long step);

/* The end of a bl_test_fail_each op that makes a JSON document: `st`, or
 * BL_ERUNTIME when a failed call left a document behind; releases `doc`. */
struct bl_json;
bl_status bl_test_json_made(bl_status st, struct bl_json *doc);
/* Member `key` of a receipt or document: a test failure when it is
 * missing; bl_test_str also when it is not a string. */
const struct bl_json *bl_test_get(const struct bl_json *o, const char *key);
const char *bl_test_str(const struct bl_json *o, const char *key);

/* A fresh temporary directory (removed by bl_test_rmtree). */
char *bl_test_mkdtemp(void);
/* A test's own temporary directory as a cmocka fixture: the setup makes it,
 * the teardown removes it with all it holds, whether the test passed or not.
 * BL_TEST_IN_DIR registers a test with them; the test finds the directory
 * with bl_test_dir(state) and names files in it with bl_test_path. */
int bl_test_dir_setup(void **state);
int bl_test_dir_teardown(void **state);
const char *bl_test_dir(void **state);
/* "<the test's directory>/<name>", kept until the teardown. */
const char *bl_test_path(void **state, const char *name);
#define BL_TEST_IN_DIR(test)                                                   \
    cmocka_unit_test_setup_teardown(test, bl_test_dir_setup, bl_test_dir_teardown)
/* The whole file as a NUL-terminated heap string (caller frees), its length
 * into *len unless len is NULL; fails the test when it cannot be read. */
char *bl_test_read(const char *path, size_t *len);
void bl_test_rmtree(const char *path);
/* A new sparse file of `size` bytes: large to fstat, nothing on disk. */
void bl_test_make_sparse(const char *path, int64_t size);

#endif
