/* The command-line program: argparse-compatible parsing, output discipline
 * and exit codes (spec/platform.md §3, DESIGN.md rule 5). `check` itself is
 * tested in test_cli_check.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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

#include "brainlesslab/json.h"
#include "brainlesslab/text.h"
#include "brainlesslab/version.h"
#include "plan/plan_internal.h"
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

/* Runs `args`, which must exit `code` with nothing on stdout (it carries
 * JSON only); returns its stderr (caller frees). */
static char *run_refused(const char *args, int code)
{
    char *out, *err;
    int rc = bl_test_run_cli(args, &out, &err);
    if (rc != code)
        fail_msg("`brainlesslab %s`: exit %d, not %d, stderr:\n%s", args, rc, code, err);
    assert_string_equal(out, "");
    free(out);
    return err;
}

/* argparse wraps the root usage once the command list is this long. */
#define ROOT_HELP_USAGE                                                        \
    "usage: brainlesslab [-h] [--version]\n"                                   \
    "                    {check,run,inspect,profile,qualify,decode,sweep,ablate,benchmark,calibrate,presets,export-replay,replays,plot,merge}\n" \
    "                    ...\n"

#define PROFILE_USAGE "usage: brainlesslab profile [-h] [--backends {cpu} [{cpu} ...]]\n"

static void test_help(void **state)
{
    (void)state;
    static const struct {
        const char *args, *usage;
    } cases[] = {
        {"--help", ROOT_HELP_USAGE},
        {"-h", ROOT_HELP_USAGE},
        {"--he", ROOT_HELP_USAGE},
        {"check -h", "usage: brainlesslab check [-h] plan\n"},
        {"check some.toml --help", "usage: brainlesslab check [-h] plan\n"},
        {"run --help", "usage: brainlesslab run [-h] [--root ROOT] [--backend {cpu}]\n"},
        {"inspect -h", "usage: brainlesslab inspect [-h] record\n"},
        {"profile -h", PROFILE_USAGE},
        {"qualify -h", "usage: brainlesslab qualify [-h]"},
        {"decode -h", "usage: brainlesslab decode [-h]\n                           [--points"},
        {"plot -h", "usage: brainlesslab plot [-h] --out OUT [--decoded DECODED] record\n"},
        {"merge -h", "usage: brainlesslab merge [-h] [--root ROOT] shard [shard ...]\n"},
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
    bl_test_cli_prints("--help", "\n    check               validate and resolve a plan",
                       "\n  --version ", (char *)NULL);
    /* run's help names its options as §3.1 does. */
    bl_test_cli_prints("run -h", "\n  --recording {summary,probe_events,replay}\n",
                       "\n  --calibration CALIBRATION\n", (char *)NULL);
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
         "'check', 'run', 'inspect', 'profile', 'qualify', 'decode', 'sweep', 'ablate', 'benchmark', "
         "'calibrate', 'presets', 'export-replay', 'replays', 'plot', 'merge')\n"},
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
        char *err = run_refused(cases[i].args, 2);
        if (strcmp(last_line(err), cases[i].line) != 0)
            fail_msg("`brainlesslab %s`: stderr:\n%s", cases[i].args, err);
        assert_true(strncmp(err, cases[i].usage, strlen(cases[i].usage)) == 0);
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
        char *err = run_refused(cases[i].args, 1);
        if (strcmp(err, cases[i].line) != 0)
            fail_msg("`brainlesslab %s`: stderr:\n%s", cases[i].args, err);
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
    char build[4096];
    snprintf(build, sizeof build, "%s", bl_test_cli_path());
    char *slash = strrchr(build, '/');
    assert_non_null(slash);
    *slash = 0;
    const char *prefix = bl_test_dir(state);
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
}

/* ---- what users wrote, printed safely ---------------------------------------------- */

/* bl_escape_controls of `len` bytes, as a heap string. */
static char *escaped(const char *s, size_t len)
{
    bl_buf b;
    bl_buf_init(&b);
    assert_true(bl_escape_controls(&b, s, len));
    char *text = strdup(b.data ? b.data : "");
    bl_buf_clear(&b);
    return text;
}

/* The UTF-8 bytes of code point cp (below U+0800) into out; their count. */
static size_t utf8_of(unsigned cp, char out[3])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
}

static void test_escape_controls(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        const char *out;
    } cases[] = {
        {"plain text 1.0", 14, "plain text 1.0"},
        {"a\nb\rc\td", 7, "a\\nb\\rc\\td"},
        {"bell\x07", 5, "bell\\x07"},
        {"\x1b[2J", 4, "\\x1b[2J"},
        {"a\0b", 3, "a\\x00b"},
        {"\x7f", 1, "\\x7f"},
        {"\xc2\x80\xc2\x85\xc2\x9f", 6, "\\x80\\x85\\x9f"}, /* C1, as code points */
        {"\xc2\xa0", 2, "\\xa0"},                     /* the no-break space, as Python */
        {"\xc2\xa1 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82", 14,
         "\xc2\xa1 \xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"}, /* printable non-ASCII stays */
        {"\xff", 1, "\\xff"},                         /* not UTF-8: the byte */
        {"\xc2", 1, "\\xc2"},                         /* a sequence cut short */
        {"\xc0\xaf", 2, "\\xc0\\xaf"},                /* overlong */
        {"\xed\xa0\x80", 3, "\\xed\\xa0\\x80"},       /* a surrogate */
        {"\xe2\x82x", 3, "\\xe2\\x82x"},
        /* Already-quoted text is left alone: a repr in a message stays. */
        {"'a\\\\x07b' \"q\"", 13, "'a\\\\x07b' \"q\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *got = escaped(cases[i].in, cases[i].len);
        if (strcmp(got, cases[i].out) != 0)
            fail_msg("case %zu: '%s', expected '%s'", i, got, cases[i].out);
        free(got);
    }
    /* The same escapes as the plan's repr (bl_repr_string) for every code
     * point up to U+07FF, inside its quotes (quotes and backslashes, which
     * repr escapes and this does not, left out). */
    for (unsigned cp = 0; cp < 0x800; cp++) {
        if (cp == '\'' || cp == '"' || cp == '\\')
            continue;
        char text[3];
        size_t n = utf8_of(cp, text);
        bl_json *v = bl_json_stringn(text, n);
        assert_non_null(v);
        bl_buf b;
        bl_buf_init(&b);
        assert_true(bl_plan_repr(&b, v));
        char *got = escaped(text, n);
        if (b.len != strlen(got) + 2 || memcmp(b.data + 1, got, b.len - 2) != 0)
            fail_msg("U+%04X: repr %s, escaped '%s'", cp, b.data, got);
        free(got);
        bl_buf_clear(&b);
        bl_json_destroy(v);
    }
}

/* Python's own repr agrees up to U+00AC (U+00AD, a soft hyphen, is where
 * Python's wider notion of non-printable begins, an accepted difference
 * shared with the plan's repr). */
static void test_escape_controls_match_python(void **state)
{
    (void)state;
    const char *python = bl_test_python_plain();
    BL_REQUIRE(python, "python3 (for repr)");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "PYTHONIOENCODING=utf-8 '%s' -c \"for c in range(0xad): "
             "print(repr(chr(c))[1:-1] if chr(c) not in '\\\\\\\\\\\\'' else '')\"",
             python);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[64];
    unsigned cp = 0;
    for (; fgets(line, sizeof line, p); cp++) {
        line[strcspn(line, "\n")] = 0;
        if (cp == '\'' || cp == '\\')
            continue;
        char text[3];
        char *got = escaped(text, utf8_of(cp, text));
        if (strcmp(got, line) != 0)
            fail_msg("U+%04X: Python '%s', escaped '%s'", cp, line, got);
        free(got);
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(cp, 0xad);
}

/* The error line escapes what came from the user: a file name with a bell,
 * a terminal command, a C1 control, a byte that is not UTF-8 and a tab
 * stays on one line and drives nothing; printable non-ASCII stays. */
static void test_error_line_escapes_controls(void **state)
{
    (void)state;
    char *err = run_refused("check 'x\a\x1b[2J\xc2\x85\xff\t\xc3\xa9.toml'", 1);
    assert_string_equal(err, "brainlesslab: FileNotFoundError: x\\x07\\x1b[2J\\x85\\xff\\t\xc3\xa9"
                             ".toml: No such file or directory\n");
    free(err);
}

/* Usage errors quote what the user typed: an unknown command, an invalid
 * choice or int, unrecognised arguments. argparse prints them raw; ours are
 * escaped like every other line (exit 2 and argparse's text otherwise). */
static void test_usage_errors_escape_controls(void **state)
{
    (void)state;
    static const struct {
        const char *args, *last;
    } cases[] = {
        {"'ch\x1b[2J'", "brainlesslab: error: argument command: invalid choice: 'ch\\x1b[2J' "
                        "(choose from 'check', 'run', 'inspect', 'profile', 'qualify', 'decode', 'sweep', "
                        "'ablate', 'benchmark', 'calibrate', 'presets', 'export-replay', "
                        "'replays', 'plot', 'merge')\n"},
        {"run p.toml --recording 'x\a'", "brainlesslab run: error: argument --recording: "
                                          "invalid choice: 'x\\x07' (choose from 'summary', "
                                          "'probe_events', 'replay')\n"},
        {"run p.toml --batch-size '1\a'",
         "brainlesslab run: error: argument --batch-size: invalid int value: '1\\x07'\n"},
        {"run '--fo\ao' p.toml", "brainlesslab: error: unrecognized arguments: --fo\\x07o\n"},
        {"profile d --dtype float32 --count 'x\a'",
         "brainlesslab profile: error: argument --count: invalid int value: 'x\\x07'\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *err = run_refused(cases[i].args, 2);
        const size_t n = strlen(err), m = strlen(cases[i].last);
        if (n < m || strcmp(err + n - m, cases[i].last) != 0)
            fail_msg("`%s`: stderr:\n%s", cases[i].args, err);
        for (const char *p = err; *p; p++)
            if ((unsigned char)*p < 0x20 && *p != '\n')
                fail_msg("`%s`: raw control byte 0x%02x on stderr", cases[i].args, *p);
        free(err);
    }
}

/* Whether process `pid` has a handler for `sig` yet (SigCgt in
 * /proc/<pid>/status): the moment a signal test may send it. */
static bool catches(pid_t pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    bool yes = false;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "SigCgt:", 7) == 0)
            yes = (strtoull(line + 7, NULL, 16) >> (sig - 1)) & 1;
    if (f)
        fclose(f);
    return yes;
}

/* Waits (at most 60 s) until `pid` catches `sig`; fails if it ends first. */
static void await_handler(pid_t pid, int sig)
{
    struct timespec tick = {0, 5 * 1000 * 1000};
    for (int k = 0; k < 12000; k++) {
        int status;
        if (catches(pid, sig))
            return;
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("the command ended (status %d) before it handled signal %d", status, sig);
        nanosleep(&tick, NULL);
    }
    kill(pid, SIGKILL);
    fail_msg("no handler for signal %d within 60 s", sig);
}

/* Before a command owns anything, a stop signal ends it at once: one line,
 * exit 128 + the signal, nothing on stdout, nothing created. The plan is a
 * FIFO: once the test has opened its writing end, the command is reading
 * it, with its handlers installed. */
static void test_stop_signals_before_any_work(void **state)
{
    static const struct {
        int sig;
        const char *line;
    } sigs[] = {
        {SIGINT, "brainlesslab: KeyboardInterrupt: interrupted\n"},
        {SIGTERM, "brainlesslab: SystemExit: terminated by SIGTERM\n"},
        {SIGHUP, "brainlesslab: SystemExit: terminated by SIGHUP\n"},
    };
    static const char *const commands[] = {"check", "run"};
    const char *dir = bl_test_dir(state);
    char fifo[4200], outp[4200], errp[4200], root[4200];
    snprintf(fifo, sizeof fifo, "%s/plan.toml", dir);
    snprintf(outp, sizeof outp, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    snprintf(root, sizeof root, "%s/records", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++)
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
            pid_t pid = fork();
            assert_true(pid >= 0);
            if (pid == 0) {
                if (!freopen(outp, "w", stdout) || !freopen(errp, "w", stderr))
                    _exit(99);
                if (c == 0)
                    execl(bl_test_cli_path(), "brainlesslab", "check", fifo, (char *)NULL);
                else
                    execl(bl_test_cli_path(), "brainlesslab", "run", fifo, "--root", root,
                          (char *)NULL);
                _exit(98);
            }
            int fd = -1, status = 0;
            struct timespec tick = {0, 5 * 1000 * 1000};
            for (int k = 0; k < 12000 && fd < 0; k++) {
                fd = open(fifo, O_WRONLY | O_NONBLOCK);
                if (fd < 0 && waitpid(pid, &status, WNOHANG) == pid)
                    fail_msg("%s ended (status %d) before it read the plan", commands[c], status);
                if (fd < 0)
                    nanosleep(&tick, NULL);
            }
            if (fd < 0) {
                kill(pid, SIGKILL);
                fail_msg("%s never opened its plan", commands[c]);
            }
            assert_int_equal(kill(pid, sigs[i].sig), 0);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            close(fd);
            char *o = bl_test_read(outp, NULL), *e = bl_test_read(errp, NULL);
            assert_string_equal(o, "");
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 128 + sigs[i].sig ||
                strcmp(e, sigs[i].line) != 0)
                fail_msg("%s, signal %d: status %d, stderr: %s", commands[c], sigs[i].sig, status,
                         e);
            struct stat sb;
            assert_int_not_equal(lstat(root, &sb), 0);
            free(o);
            free(e);
        }
}

/* The profile worker the parent `parent` runs (its child whose command line
 * holds --worker-backend, so after its exec) once it handles `sig`, or 0. */
static pid_t ready_worker(pid_t parent, int sig)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    pid_t found = 0;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        char path[300], buf[4096];
        long pid = strtol(e->d_name, NULL, 10);
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *close_paren = strrchr(buf, ')');
        long ppid = 0;
        if (!close_paren || sscanf(close_paren + 1, " %*c %ld", &ppid) != 1 || ppid != parent)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        f = fopen(path, "r");
        n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        bool worker = false;
        for (size_t i = 0; i < n; i += strlen(buf + i) + 1) /* NUL-separated arguments */
            worker = worker || strcmp(buf + i, "--worker-backend") == 0;
        if (worker && catches((pid_t)pid, sig))
            found = (pid_t)pid;
    }
    closedir(d);
    return found;
}

/* qualify holds nothing until its receipt, so a stop signal ends it at
 * once (one line, exit 128 + the signal, no destination); profile's parent
 * and worker stop at their next safe point, the parent writes the receipt
 * of what ran and exits 128 + the signal with that signal's line (SIGTERM
 * sent to the process group, as a service manager sends it). */
static void test_qualify_and_profile_stop_signals(void **state)
{
    const char *dir = bl_test_dir(state);
    char dest[4200], outp[4200], errp[4200], path[4300];
    snprintf(dest, sizeof dest, "%s/dest", dir);
    snprintf(outp, sizeof outp, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    static const struct {
        int sig;
        const char *line;
    } sigs[] = {
        {SIGTERM, "brainlesslab: SystemExit: terminated by SIGTERM\n"},
        {SIGHUP, "brainlesslab: SystemExit: terminated by SIGHUP\n"},
    };
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char *argv[] = {"brainlesslab", "qualify", dest, "--frames", "100000000", NULL};
        pid_t pid = bl_test_start_cli(argv, outp, errp);
        await_handler(pid, sigs[i].sig);
        assert_int_equal(kill(pid, sigs[i].sig), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        char *o = bl_test_read(outp, NULL), *e = bl_test_read(errp, NULL);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 128 + sigs[i].sig ||
            strcmp(e, sigs[i].line) != 0 || *o)
            fail_msg("qualify, signal %d: status %d, stdout '%s', stderr: %s", sigs[i].sig,
                     status, o, e);
        struct stat sb;
        assert_int_not_equal(lstat(dest, &sb), 0);
        free(o);
        free(e);
    }

    char *argv[] = {"brainlesslab", "profile", dest, "--dtype", "float64", "--task", "tracking",
                    "--count", "128", "--trials", "8", "--blocks", "2", "--samples", "50",
                    "--allow-background-activity", "--activity-interval", "0.05", NULL};
    pid_t pid = bl_test_start_cli(argv, outp, errp);
    await_handler(pid, SIGTERM);
    /* Both must handle it: the worker runs its workload with its handler. */
    struct timespec tick = {0, 10 * 1000 * 1000};
    pid_t worker = 0;
    for (int k = 0; k < 6000 && !(worker = ready_worker(pid, SIGTERM)); k++)
        nanosleep(&tick, NULL);
    if (!worker) {
        kill(-pid, SIGKILL);
        fail_msg("no profile worker handling SIGTERM within 60 s");
    }
    assert_int_equal(kill(-pid, SIGTERM), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char *o = bl_test_read(outp, NULL), *e = bl_test_read(errp, NULL);
    bool has_line = strncmp(e, sigs[0].line, strlen(sigs[0].line)) == 0 ||
                    strstr(e, "\nbrainlesslab: SystemExit: terminated by SIGTERM\n");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 143 || !has_line ||
        strstr(e, "KeyboardInterrupt"))
        fail_msg("profile: status %d, stderr: %s", status, e);
    /* stdout names the receipt, which holds the interrupted phase only. */
    assert_non_null(strstr(o, "\"status\": \"failed\"}\n"));
    snprintf(path, sizeof path, "%s/receipt.json", dest);
    bl_json *receipt = NULL;
    OK_E(bl_json_read_file(path, &receipt, &e_));
    const bl_json *rows = bl_json_get(receipt, "measurements");
    assert_int_equal(bl_json_size(rows), 1);
    assert_int_equal(bl_json_get_int(bl_json_get(bl_json_at(rows, 0), "returncode")), 143);
    /* The worker's own account of why it stopped names the signal too. */
    bl_buf text;
    bl_buf_init(&text);
    OK_E(bl_json_write(bl_json_at(rows, 0), 0, &text, &e_));
    if (!strstr(text.data, "SystemExit: terminated by SIGTERM") ||
        strstr(text.data, "KeyboardInterrupt"))
        fail_msg("the interrupted row does not name SIGTERM: %s", text.data);
    bl_buf_clear(&text);
    bl_json_destroy(receipt);
    free(o);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_version_names_every_library),
        BL_TEST_IN_DIR(test_install_puts_the_program_in_bin),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors_exit_2),
        cmocka_unit_test(test_parsed_commands_exit_1),
        cmocka_unit_test(test_escape_controls),
        cmocka_unit_test(test_escape_controls_match_python),
        cmocka_unit_test(test_error_line_escapes_controls),
        cmocka_unit_test(test_usage_errors_escape_controls),
        BL_TEST_IN_DIR(test_stop_signals_before_any_work),
        BL_TEST_IN_DIR(test_qualify_and_profile_stop_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
