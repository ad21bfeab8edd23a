/* The command-line program: argparse-compatible parsing, output discipline
 * and exit codes (spec/platform.md §3, DESIGN.md rule 5). `check` itself is
 * tested in test_cli_check.c. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zip.h>
#include <zlib.h>
/* toml++ keeps its version in a plain #define header (impl/version.h up to
 * 3.3, impl/version.hpp from 3.4), which C can read. */
#if defined(__has_include)
#if __has_include(<toml++/impl/version.hpp>)
#include <toml++/impl/version.hpp>
#elif __has_include(<toml++/impl/version.h>)
#include <toml++/impl/version.h>
#endif
#endif

#include "brainlesslab/version.h"
#include "support.h"

static void test_version(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(bl_test_run_cli("--version", &out, &err), 0);
    char first[64];
    snprintf(first, sizeof first, "brainlesslab %s ", bl_version());
    assert_true(strncmp(out, first, strlen(first)) == 0);
    assert_non_null(strstr(out, "\njansson 2."));
    assert_non_null(strstr(out, "\nlibcrypto 3."));
    assert_non_null(strstr(out, "\nRandom123 "));
    assert_string_equal(err, "");
    free(out);
    free(err);
}

/* The last line of `text` (which must end in a newline). */
static const char *last_line(const char *text)
{
    size_t n = strlen(text);
    assert_true(n > 0 && text[n - 1] == '\n');
    const char *p = text + n - 1;
    while (p > text && p[-1] != '\n')
        p--;
    return p;
}

#define PROFILE_USAGE "usage: brainlesslab profile [-h] [--backends {cpu} [{cpu} ...]]\n"

static void test_help(void **state)
{
    (void)state;
    static const struct {
        const char *args, *usage;
    } cases[] = {
        {"--help", "usage: brainlesslab [-h] [--version] {check,run,inspect,profile,qualify} ...\n"},
        {"-h", "usage: brainlesslab [-h] [--version] {check,run,inspect,profile,qualify} ...\n"},
        {"--he", "usage: brainlesslab [-h] [--version] {check,run,inspect,profile,qualify} ...\n"},
        {"check -h", "usage: brainlesslab check [-h] plan\n"},
        {"check some.toml --help", "usage: brainlesslab check [-h] plan\n"},
        {"run --help", "usage: brainlesslab run [-h] [--root ROOT] [--backend {cpu}]\n"},
        {"inspect -h", "usage: brainlesslab inspect [-h] record\n"},
        {"profile -h", PROFILE_USAGE},
        {"qualify -h", "usage: brainlesslab qualify [-h]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        assert_int_equal(bl_test_run_cli(cases[i].args, &out, &err), 0);
        assert_true(strncmp(out, cases[i].usage, strlen(cases[i].usage)) == 0);
        assert_non_null(strstr(out, "\noptions:\n  -h, --help "));
        assert_string_equal(err, "");
        free(out);
        free(err);
    }
    /* The root help lists every command with its help text. */
    char *out, *err;
    assert_int_equal(bl_test_run_cli("--help", &out, &err), 0);
    assert_non_null(strstr(out, "\n    check               validate and resolve a plan"));
    assert_non_null(strstr(out, "\n  --version "));
    free(out);
    free(err);
    /* run's help names its options as §3.1 does. */
    assert_int_equal(bl_test_run_cli("run -h", &out, &err), 0);
    assert_non_null(strstr(out, "\n  --recording {summary,probe_events,replay}\n"));
    assert_non_null(strstr(out, "\n  --calibration CALIBRATION\n"));
    free(out);
    free(err);
}

#define ROOT_USAGE "usage: brainlesslab [-h] [--version]"
#define RUN_USAGE "usage: brainlesslab run [-h]"
#define CHECK_USAGE "usage: brainlesslab check [-h] plan\n"

static void test_usage_errors_exit_2(void **state)
{
    (void)state;
    /* argparse's texts; a subcommand's own errors carry its prog name. */
    static const struct {
        const char *args, *usage, *line;
    } cases[] = {
        {"", ROOT_USAGE, "brainlesslab: error: the following arguments are required: command\n"},
        {"--no-such-flag", ROOT_USAGE,
         "brainlesslab: error: the following arguments are required: command\n"},
        {"frobnicate", ROOT_USAGE,
         "brainlesslab: error: argument command: invalid choice: 'frobnicate' (choose from "
         "'check', 'run', 'inspect', 'profile', 'qualify')\n"},
        {"--version=1", ROOT_USAGE,
         "brainlesslab: error: argument --version: ignored explicit argument '1'\n"},
        {"check", CHECK_USAGE,
         "brainlesslab check: error: the following arguments are required: plan\n"},
        {"check p.toml --bogus", ROOT_USAGE,
         "brainlesslab: error: unrecognized arguments: --bogus\n"},
        {"--bogus check p.toml extra", ROOT_USAGE,
         "brainlesslab: error: unrecognized arguments: --bogus extra\n"},
        {"check p.toml --help=3", CHECK_USAGE,
         "brainlesslab check: error: argument -h/--help: ignored explicit argument '3'\n"},
        {"run p.toml --backend metal", RUN_USAGE,
         "brainlesslab run: error: argument --backend: invalid choice: 'metal' (choose from "
         "'cpu')\n"},
        {"run --backend=cuda p.toml", RUN_USAGE,
         "brainlesslab run: error: argument --backend: invalid choice: 'cuda' (choose from "
         "'cpu')\n"},
        {"run p.toml --recording everything", RUN_USAGE,
         "brainlesslab run: error: argument --recording: invalid choice: 'everything' "
         "(choose from 'summary', 'probe_events', 'replay')\n"},
        {"run p.toml --batch-size x", RUN_USAGE,
         "brainlesslab run: error: argument --batch-size: invalid int value: 'x'\n"},
        {"run p.toml --cpu-threads=1.5", RUN_USAGE,
         "brainlesslab run: error: argument --cpu-threads: invalid int value: '1.5'\n"},
        {"run p.toml --memory-budget-mib 1__0", RUN_USAGE,
         "brainlesslab run: error: argument --memory-budget-mib: invalid int value: '1__0'\n"},
        {"run p.toml --batch-size 9223372036854775808", RUN_USAGE,
         "brainlesslab run: error: argument --batch-size: invalid int value: "
         "'9223372036854775808'\n"},
        {"run p.toml --ba 3", RUN_USAGE,
         "brainlesslab run: error: ambiguous option: --ba could match --backend, --batch-size\n"},
        {"run p.toml --root", RUN_USAGE,
         "brainlesslab run: error: argument --root: expected one argument\n"},
        {"run p.toml --root --cpu-threads 2", RUN_USAGE,
         "brainlesslab run: error: argument --root: expected one argument\n"},
        {"run --cpu-threads 2", RUN_USAGE,
         "brainlesslab run: error: the following arguments are required: plan\n"},
        /* The option kinds profile adds: floats, switches and nargs="+". */
        {"profile d --dtype float32 --activity-cpu-threshold 1x", PROFILE_USAGE,
         "brainlesslab profile: error: argument --activity-cpu-threshold: invalid float value: "
         "'1x'\n"},
        {"profile d --dtype float32 --activity-cpu-threshold 0x10", PROFILE_USAGE,
         "brainlesslab profile: error: argument --activity-cpu-threshold: invalid float value: "
         "'0x10'\n"},
        {"profile d --dtype float32 --diagnostic=yes", PROFILE_USAGE,
         "brainlesslab profile: error: argument --diagnostic: ignored explicit argument 'yes'\n"},
        {"profile d --dtype float32 --backends", PROFILE_USAGE,
         "brainlesslab profile: error: argument --backends: expected at least one argument\n"},
        {"profile --backends cpu d --dtype float32", PROFILE_USAGE,
         "brainlesslab profile: error: argument --backends: invalid choice: 'd' (choose from "
         "'cpu')\n"},
        {"profile d --dtype float32 --activity-cpu-threshold nan", PROFILE_USAGE,
         "brainlesslab profile: error: --activity-cpu-threshold must be finite and > 0\n"},
        {"profile d --dtype float32 --backends cpu cpu", PROFILE_USAGE,
         "brainlesslab profile: error: --backends must be distinct\n"},
        {"inspect", "usage: brainlesslab inspect [-h] record\n",
         "brainlesslab inspect: error: the following arguments are required: record\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = bl_test_run_cli(cases[i].args, &out, &err);
        if (rc != 2 || strcmp(last_line(err), cases[i].line) != 0)
            fail_msg("`brainlesslab %s`: exit %d, stderr:\n%s", cases[i].args, rc, err);
        /* stdout carries JSON only: nothing on a usage error. */
        assert_string_equal(out, "");
        assert_true(strncmp(err, cases[i].usage, strlen(cases[i].usage)) == 0);
        free(out);
        free(err);
    }
}

static void test_parsed_commands_exit_1(void **state)
{
    (void)state;
    /* Every accepted spelling parses: prefixes, --opt=value, repeats,
     * negative numbers (argparse reads them as values), underscores. */
    static const struct {
        const char *args, *line;
    } cases[] = {
        /* run parses every spelling, then reads the plan first (the files
         * named here do not exist; tests/test_cli_run.c runs real plans). */
        {"run p.toml", "brainlesslab: FileNotFoundError: p.toml: No such file or directory\n"},
        {"run --bat 4 --root=/tmp/x p.toml --calibration a --calibration b --recording=replay "
         "--recording-b 0 --cpu 2 --mem 1_024 --backend cpu",
         "brainlesslab: FileNotFoundError: p.toml: No such file or directory\n"},
        {"run p.toml --batch-size -3 --root -",
         "brainlesslab: FileNotFoundError: p.toml: No such file or directory\n"},
        {"run -- -p.toml",
         "brainlesslab: FileNotFoundError: -p.toml: No such file or directory\n"},
        {"inspect some/record", "brainlesslab: ValueError: a record must be a real directory\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = bl_test_run_cli(cases[i].args, &out, &err);
        if (rc != 1 || strcmp(err, cases[i].line) != 0)
            fail_msg("`brainlesslab %s`: exit %d, stderr:\n%s", cases[i].args, rc, err);
        assert_string_equal(out, "");
        free(out);
        free(err);
    }
}

/* `--version` names every library the program links, each with the version
 * this test sees: toml++'s header, the libzip and zlib shared objects, the
 * OpenMP the compiler implements. */
static void test_version_names_every_library(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(bl_test_run_cli("--version", &out, &err), 0);
    assert_string_equal(err, "");
    char line[128];
#ifndef TOML_LIB_MAJOR
    fail_msg("toml++'s version header was not found (apt-get install libtomlplusplus-dev)");
#else
    snprintf(line, sizeof line, "\ntoml++ %d.%d.%d\n", TOML_LIB_MAJOR, TOML_LIB_MINOR,
             TOML_LIB_PATCH);
    if (!strstr(out, line))
        fail_msg("no line %s in:\n%s", line + 1, out);
#endif
    snprintf(line, sizeof line, "\nlibzip %s\n", zip_libzip_version());
    if (!strstr(out, line))
        fail_msg("no line %s in:\n%s", line + 1, out);
    /* The header this test compiled against is the library it runs with. */
    assert_string_equal(zip_libzip_version(), LIBZIP_VERSION);
    snprintf(line, sizeof line, "\nzlib %s\n", zlibVersion());
    if (!strstr(out, line))
        fail_msg("no line %s in:\n%s", line + 1, out);
    assert_string_equal(zlibVersion(), ZLIB_VERSION);
#ifdef _OPENMP
#ifdef __clang__
    snprintf(line, sizeof line, "\nOpenMP %ld (libomp)\n", (long)_OPENMP);
#else
    snprintf(line, sizeof line, "\nOpenMP %ld (libgomp)\n", (long)_OPENMP);
#endif
    if (!strstr(out, line))
        fail_msg("no line %s in:\n%s", line + 1, out);
#endif
    /* Every line is "<name> <version>" with a real version. */
    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        const char *space = memchr(p, ' ', (size_t)(nl - p));
        assert_non_null(space);
        assert_true(space > p && nl - space > 1);
        assert_false(strncmp(space + 1, "unknown", 7) == 0);
        p = nl + 1;
    }
    free(out);
    free(err);
}

/* The install rule the README gives for putting the program on the PATH
 * (`cmake --install build --prefix ~/.local`) installs a working
 * bin/brainlesslab; here into a temporary prefix. */
static void test_install_puts_the_program_in_bin(void **state)
{
    (void)state;
    char build[4096];
    snprintf(build, sizeof build, "%s", bl_test_cli_path());
    char *slash = strrchr(build, '/');
    assert_non_null(slash);
    *slash = 0;
    char *prefix = bl_test_mkdtemp();
    char cmd[12288];
    snprintf(cmd, sizeof cmd, "cmake --install '%s' --prefix '%s' >/dev/null", build, prefix);
    if (system(cmd) != 0)
        fail_msg("failed: %s", cmd);
    snprintf(cmd, sizeof cmd, "%s/bin/brainlesslab", prefix);
    assert_int_equal(access(cmd, X_OK), 0);
    snprintf(cmd, sizeof cmd, "'%s/bin/brainlesslab' --version", prefix);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[256] = "", first[64];
    const bool got = fgets(line, sizeof line, p) != NULL;
    while (fgets(cmd, sizeof cmd, p))
        ;
    assert_int_equal(pclose(p), 0);
    assert_true(got);
    snprintf(first, sizeof first, "brainlesslab %s ", bl_version());
    assert_true(strncmp(line, first, strlen(first)) == 0);
    bl_test_rmtree(prefix);
    free(prefix);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_version_names_every_library),
        cmocka_unit_test(test_install_puts_the_program_in_bin),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors_exit_2),
        cmocka_unit_test(test_parsed_commands_exit_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
