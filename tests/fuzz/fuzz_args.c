/* libFuzzer harness: arbitrary bytes as a command line. The input is split
 * at NUL bytes into argv[1..] (argv[0] is "brainlesslab") and parsed by
 * bl_cli_parse over the program's real commands and option tables, as
 * main() does; nothing is run. The parser's usage and help texts are sent
 * to /dev/null so that fuzzing is not all printing (sanitizer reports go to
 * the descriptor, not to stdio, and still show).
 *
 * The promises checked when the parse proceeds: a known command with its
 * positional; every given choice among its choices; bl_cli_value agrees with
 * the table; a repeatable or nargs="+" option holds at most as many values
 * as there were arguments, and every one is an argument of the line (or the
 * default); a second positional exactly for a command that takes one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fuzz.h"

#define MAX_ARGS 256

static const bl_cli_command *const commands[] = {
    &bl_cli_check, &bl_cli_run, &bl_cli_inspect, &bl_cli_profile, &bl_cli_qualify, &bl_cli_decode,
    &bl_cli_sweep, &bl_cli_ablate, &bl_cli_benchmark, &bl_cli_calibrate, &bl_cli_presets,
    &bl_cli_export_replay, &bl_cli_replays, &bl_cli_plot,
    &bl_cli_merge,
};

static void silence_stdio(void)
{
#ifdef __GLIBC__
    /* glibc's stdout and stderr are plain variables; the descriptors stay. */
    FILE *sink = fopen("/dev/null", "w");
    if (sink)
        stdout = stderr = sink;
#endif
}

/* Whether s points into the line's text (an argument, or the value after
 * '=' in "--opt=value") or is the option's default. */
static int from_line(const char *s, const char *text, size_t size, const char *fallback)
{
    const uintptr_t p = (uintptr_t)s, t = (uintptr_t)text;
    return s == fallback || (p >= t && p <= t + size);
}

static void check_parsed(const bl_cli_args *a, const char *text, size_t size, int argc)
{
    const bl_cli_command *cmd = a->command;
    int known = 0;
    for (size_t c = 0; c < sizeof commands / sizeof *commands; c++)
        known |= cmd == commands[c];
    if (!known || !a->positional || !from_line(a->positional, text, size, NULL))
        abort();
    /* A second positional is there exactly when the command has one. */
    if (!cmd->positional2 != !a->positional2 ||
        (a->positional2 && !from_line(a->positional2, text, size, NULL)))
        abort();
    /* nargs="+": every positional listed, the first being `positional`. */
    if (!cmd->positional_plus != !a->positionals || a->npositionals > (size_t)argc ||
        (a->positionals && a->positionals[0] != a->positional))
        abort();
    for (size_t j = 0; j < a->npositionals; j++)
        if (!from_line(a->positionals[j], text, size, NULL))
            abort();
    for (size_t k = 0; k < cmd->n_options; k++) {
        const bl_cli_option *o = &cmd->options[k];
        const char *v = a->value[k];
        if (bl_cli_value(a, o->name) != v)
            abort();
        if (!v)
            continue;
        if (!from_line(v, text, size, o->fallback) && o->kind != BL_CLI_SWITCH)
            abort();
        if (o->kind == BL_CLI_CHOICE) {
            int ok = 0;
            for (const char *const *c = o->choices; *c; c++)
                ok |= strcmp(*c, v) == 0;
            if (!ok)
                abort();
        }
        if (a->nall[k] > (size_t)argc)
            abort();
        for (size_t j = 0; j < a->nall[k]; j++)
            if (!from_line(a->all[k][j], text, size, o->fallback))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        quiet = 1;
        silence_stdio();
    }
    /* One NUL-terminated copy; every NUL in the input ends an argument. */
    char *text = malloc(size + 1);
    char *argv[MAX_ARGS + 2];
    static char name[] = "brainlesslab";
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = 0;
    argv[argc++] = name;
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    argv[argc] = NULL;

    const bl_cli_program program = {
        .usage = "usage: brainlesslab [-h] [--version] {check,run,inspect,profile,qualify} ...\n",
        .help = "\n(fuzzing)\n",
        .commands = commands,
        .n_commands = sizeof commands / sizeof *commands,
    };
    bl_cli_args args;
    if (bl_cli_parse(&program, argc, argv, &args) == BL_CLI_PROCEED) {
        check_parsed(&args, text, size, argc);
        bl_cli_args_clear(&args);
    }
    free(text);
    return 0;
}
