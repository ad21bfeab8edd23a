/* Helpers shared by the record tests (test_records.c, test_cli_records.c,
 * test_cli_run.c) and the plan generators' test (test_cli_generate.c):
 * whole files in and out, paths inside a record, and existence without
 * following links. Header-only (static inline), because only these
 * executables use them. */
#ifndef BL_TEST_RECORD_SUPPORT_H
#define BL_TEST_RECORD_SUPPORT_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/records.h"
#include "support.h"

/* A small Delayed Cue profile (horizon 2 + 3 + 2 = 7 ticks; 5 for a trial
 * that draws delay 1) with a reservoir target and a reference_null target on
 * the same worlds: 2 blocks × 3 trials each, 12 rows, so batch sizes 1 and 3
 * cut it differently. Arguments: id, count, extra composition lines of the
 * reservoir, the null's count. */
#define BL_RT_TINY_PLAN \
    "format = \"brainlesslab-plan\"\n" \
    "format_version = 4\n" \
    "id = \"%s\"\n" \
    "operation = \"profile\"\n" \
    "\n" \
    "[evaluation]\n" \
    "blocks = 2\n" \
    "trials_per_block = 3\n" \
    "root_seed = 7\n" \
    "\n" \
    "[[targets]]\n" \
    "id = \"cue\"\n" \
    "[targets.composition]\n" \
    "count = %d\n" \
    "%s" /* more composition keys of the reservoir target */ \
    "[targets.composition.node]\n" \
    "kind = \"falandays\"\n" \
    "[targets.composition.task]\n" \
    "kind = \"delayed_cue\"\n" \
    "[targets.composition.task.options]\n" \
    "cue_ticks = 2\n" \
    "delays = [1, 3]\n" \
    "response_ticks = 2\n" \
    "\n" \
    "[[targets]]\n" \
    "id = \"null\"\n" \
    "controller = \"reference_null\"\n" \
    "[targets.composition]\n" \
    "count = %d\n" \
    "[targets.composition.task]\n" \
    "kind = \"delayed_cue\"\n" \
    "[targets.composition.task.options]\n" \
    "cue_ticks = 2\n" \
    "delays = [1, 3]\n" \
    "response_ticks = 2\n"

/* Room for "<temporary dir>/<record name>/<artifact>". */
#define BL_RT_PATH 4400

/* Replaces (or creates) the file with `len` bytes of `data`. */
static inline void bl_rt_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static inline void bl_rt_write_text(const char *path, const char *text)
{
    bl_rt_write(path, text, strlen(text));
}

/* "<dir>/<rel>" into buf (BL_RT_PATH bytes); returns buf. A path that does
 * not fit fails the test rather than name another file. */
static inline const char *bl_rt_at(char *buf, const char *dir, const char *rel)
{
    int n = snprintf(buf, BL_RT_PATH, "%s/%s", dir, rel);
    if (n < 0 || n >= BL_RT_PATH)
        fail_msg("path too long: %s/%s", dir, rel);
    return buf;
}

/* Whether anything (a link included) is at path. */
static inline bool bl_rt_exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* A test's own temporary directory, a plan path in it and a records root
 * (<dir>/records, which the test's runs create). */
typedef struct bl_rt_fixture {
    char *dir;
    char plan[BL_RT_PATH];
    char root[BL_RT_PATH];
} bl_rt_fixture;

/* A fresh fixture with `plan_name` inside its directory, or NULL (a setup
 * failure). Paths are single-quoted for the shell, so a quote is refused. */
static inline bl_rt_fixture *bl_rt_fixture_create(const char *plan_name)
{
    bl_rt_fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return NULL;
    fx->dir = bl_test_mkdtemp();
    if (strchr(fx->dir, '\'') || strlen(fx->dir) > 1024) {
        free(fx->dir);
        free(fx);
        return NULL;
    }
    snprintf(fx->plan, sizeof fx->plan, "%s/%s", fx->dir, plan_name);
    snprintf(fx->root, sizeof fx->root, "%s/records", fx->dir);
    return fx;
}

/* cmocka teardown: removes the directory and frees the fixture. */
static inline int bl_rt_teardown(void **state)
{
    bl_rt_fixture *fx = *state;
    bl_test_rmtree(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

/* Runs the program with formatted, already shell-quoted arguments;
 * returns its exit code (bl_test_run_cli). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int bl_rt_cli(char **out, char **err, const char *fmt, ...)
{
    char args[16384];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof args);
    return bl_test_run_cli(args, out, err);
}

/* A record that failed before its manifest was written: reserved, then
 * failed with `kind` and `message` (.RESERVED and FAILED, nothing else). */
static inline void bl_rt_fail_before_manifest(const char *dir, bl_status kind, const char *message)
{
    bl_reservation r = {0};
    OK_E(bl_record_reserve(dir, &r, &e_));
    bl_error cause = {0};
    bl_fail(&cause, kind, "%s", message);
    OK_E(bl_record_fail(&r, &cause, &e_));
    bl_reservation_clear(&r);
}

#endif
