/* The command-line program: output discipline and exit codes. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

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

static void test_help(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(bl_test_run_cli("--help", &out, &err), 0);
    assert_true(strncmp(out, "usage: brainlesslab", 19) == 0);
    assert_string_equal(err, "");
    free(out);
    free(err);
}

static void test_usage_errors_exit_2(void **state)
{
    (void)state;
    const char *bad[] = {"", "frobnicate", "--no-such-flag"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *out, *err;
        assert_int_equal(bl_test_run_cli(bad[i], &out, &err), 2);
        /* stdout carries JSON only: nothing on a usage error. */
        assert_string_equal(out, "");
        assert_true(strncmp(err, "usage: brainlesslab", 19) == 0);
        assert_non_null(strstr(err, "brainlesslab: error: "));
        free(out);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors_exit_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
