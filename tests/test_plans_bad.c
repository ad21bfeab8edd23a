/* Bad input gets one clear line (DESIGN.md rule 5): `brainlesslab check`
 * on every plan of the corpus tests/plans/bad (expectations in its EXPECTED
 * file) and on files made at test time (a directory, a missing file, a
 * 50 MB file, an unreadable file). Each must exit 1 with an empty stdout and
 * exactly one stderr line "brainlesslab: <Kind>: ..." holding the expected
 * fragment, or, for an expectation written "= <message>", exactly the line
 * "brainlesslab: <Kind>: <message>" with {path} standing for the plan's
 * path; a crash shows up as an exit code above 128. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"

/* "brainlesslab: <kind>: <message>\n" with every {path} of message
 * replaced by path, into line (size bytes). */
static void exact_line(char *line, size_t size, const char *kind, const char *message,
                       const char *path)
{
    size_t n = (size_t)snprintf(line, size, "brainlesslab: %s: ", kind);
    for (const char *m = message; *m && n + 1 < size;) {
        if (strncmp(m, "{path}", 6) == 0) {
            n += (size_t)snprintf(line + n, size - n, "%s", path);
            m += 6;
        } else {
            line[n++] = *m++;
        }
    }
    if (n + 2 > size)
        fail_msg("expected line too long: %s", message);
    line[n++] = '\n';
    line[n] = 0;
}

/* Checks one run of `check path` (args); returns NULL when it meets the
 * expectation, else a description of the difference (static storage). */
static const char *judge(const char *args, const char *path, int code, const char *kind,
                         const char *fragment)
{
    static char why[8192];
    static char want[8192];
    char *out = NULL, *err = NULL;
    int rc = bl_test_run_cli(args, &out, &err);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "brainlesslab: %s: ", kind);
    size_t errlen = strlen(err);
    const char *nl = strchr(err, '\n');
    why[0] = 0;
    if (rc != code)
        snprintf(why, sizeof why, "exit code %d, expected %d; stderr: %.2000s", rc, code, err);
    else if (out[0])
        snprintf(why, sizeof why, "stdout not empty: %.2000s", out);
    else if (!nl || (size_t)(nl - err) + 1 != errlen)
        snprintf(why, sizeof why, "stderr is not exactly one line: %.2000s", err);
    else if (strncmp(err, prefix, strlen(prefix)) != 0)
        snprintf(why, sizeof why, "stderr lacks the prefix \"%s\": %.2000s", prefix, err);
    else if (strncmp(fragment, "= ", 2) == 0) {
        exact_line(want, sizeof want, kind, fragment + 2, path);
        if (strcmp(err, want) != 0)
            snprintf(why, sizeof why, "stderr is not\n  %.2000s  but\n  %.2000s", want, err);
    } else if (!strstr(err, fragment))
        snprintf(why, sizeof why, "stderr lacks \"%s\": %.2000s", fragment, err);
    free(out);
    free(err);
    return why[0] ? why : NULL;
}

static void test_corpus(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/plans/bad", bl_test_tests_dir());
    snprintf(path, sizeof path, "%s/EXPECTED", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    char line[4096];
    int cases = 0, failures = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        /* file TAB code TAB Kind TAB fragment (the fragment may be empty) */
        char *file = line, *code = strchr(file, '\t');
        char *kind = code ? strchr(code + 1, '\t') : NULL;
        char *fragment = kind ? strchr(kind + 1, '\t') : NULL;
        if (!fragment)
            fail_msg("malformed EXPECTED line: %s", line);
        *code++ = 0, *kind++ = 0, *fragment++ = 0;
        char plan[8400], args[8500];
        snprintf(plan, sizeof plan, "%s/%s", dir, file);
        snprintf(args, sizeof args, "check '%s'", plan);
        const char *why = judge(args, plan, atoi(code), kind, fragment);
        cases++;
        if (why) {
            failures++;
            print_error("%s: %s\n", file, why);
        }
    }
    fclose(f);
    assert_true(cases >= 40);
    if (failures)
        fail_msg("%d of %d corpus plans misbehaved (listed above)", failures, cases);
}

static void expect(const char *args, const char *kind, const char *fragment)
{
    const char *why = judge(args, "", 1, kind, fragment);
    if (why)
        fail_msg("brainlesslab %s: %s", args, why);
}

static void test_files_made_now(void **state)
{
    const char *dir = bl_test_dir(state);
    char args[4400], path[4200];

    snprintf(args, sizeof args, "check '%s'", dir);
    expect(args, "IsADirectoryError", dir);

    snprintf(path, sizeof path, "%s/missing.toml", dir);
    snprintf(args, sizeof args, "check '%s'", path);
    expect(args, "FileNotFoundError", path);

    /* 50 MB: refused by size before anything is read or parsed. */
    snprintf(path, sizeof path, "%s/huge.toml", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    static char chunk[1 << 16];
    memset(chunk, '#', sizeof chunk);
    for (size_t i = 0; i * sizeof chunk < 50u * 1000 * 1000; i++)
        assert_int_equal(fwrite(chunk, 1, sizeof chunk, f), sizeof chunk);
    fclose(f);
    snprintf(args, sizeof args, "check '%s'", path);
    expect(args, "ValueError", "plan file is larger than 16 MiB");
    unlink(path);

    snprintf(path, sizeof path, "%s/locked.toml", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs("format = \"brainlesslab-plan\"\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0), 0);
    if (geteuid() == 0) {
        /* root reads the file anyway; the case would test nothing. */
        print_message("skipping the unreadable-file case: running as root\n");
    } else {
        snprintf(args, sizeof args, "check '%s'", path);
        expect(args, "OSError", path);
    }
    chmod(path, 0600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        BL_TEST_IN_DIR(test_files_made_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
