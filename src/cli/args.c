/* An argparse-compatible command-line parser (see args.h). Only the parts of
 * argparse the program uses are reproduced, but those with its exact texts:
 * the reference's users and its test scripts read them. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/status.h"
#include "cli.h"

/* Everything one parse needs, so helpers take one pointer. */
typedef struct parse_state {
    bl_cli_args *args;
    const char **extras; /* unrecognised arguments, reported by the root */
    size_t n_extras;
    size_t capacity;     /* argc: no list can hold more */
} parse_state;

/* argparse's usage and error line. Errors quote what the user typed (an
 * argument, an option's value), which goes out through bl_cli_print_text:
 * argparse prints it raw, but a mistyped argument must not ring, recolour
 * or rewrite the terminal. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bl_cli_parsed usage_error(const char *usage, const char *prog, const char *fmt, ...)
{
    fputs(usage, stderr);
    fprintf(stderr, "%s: error: ", prog);
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n >= 0 && (text = bl_malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
        bl_cli_print_text(stderr, text);
        bl_free(text);
    } else {
        fputs("(the message could not be formatted)", stderr);
    }
    fputc('\n', stderr);
    return BL_CLI_USAGE_ERROR;
}

/* argparse treats "-5" and "-.5" as values, not options, in a parser that
 * has no option looking like a negative number (ours have none). */
static bool negative_number(const char *s)
{
    if (s[0] != '-')
        return false;
    s++;
    while (isdigit((unsigned char)*s))
        s++;
    if (*s == 0)
        return s[-1] != '-';
    if (*s != '.' || !isdigit((unsigned char)s[1]))
        return false;
    for (s++; isdigit((unsigned char)*s);)
        s++;
    return *s == 0;
}

/* Python int(text): surrounding whitespace, a sign, decimal digits with
 * single underscores between them. Values beyond int64 are refused (a
 * documented limit; the reference would accept and later reject them). */
static bool parse_int(const char *s, int64_t *out)
{
    while (isspace((unsigned char)*s))
        s++;
    bool negative = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (!isdigit((unsigned char)*s))
        return false;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; isdigit((unsigned char)*s) || *s == '_'; s++) {
        if (*s == '_') {
            if (!isdigit((unsigned char)s[1]))
                return false;
            continue;
        }
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s)
        return false;
    *out = negative ? (v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return true;
}

/* Python float(text): surrounding whitespace, a sign, decimal digits with
 * single underscores between digits, a fraction and an exponent, or one of
 * "inf", "infinity", "nan" in any case. */
static bool parse_float(const char *s, double *out)
{
    while (isspace((unsigned char)*s))
        s++;
    char text[128];
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '_') {
            /* Only between two digits, as Python allows. */
            if (p == s || !isdigit((unsigned char)p[-1]) || !isdigit((unsigned char)p[1]))
                return false;
            continue;
        }
        if (n + 1 >= sizeof text)
            return false;
        text[n++] = *p;
    }
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        n--;
    text[n] = 0;
    const char *body = text + (text[0] == '+' || text[0] == '-');
    /* strtod also reads hexadecimal and "nan(...)", which Python refuses. */
    if (n == 0 || strpbrk(body, "xX(") || isspace((unsigned char)*body))
        return false;
    bool word = isalpha((unsigned char)*body);
    if (word && strcasecmp(body, "inf") != 0 && strcasecmp(body, "infinity") != 0 &&
        strcasecmp(body, "nan") != 0)
        return false;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (*end || end == text)
        return false;
    *out = v; /* overflow gives ±inf and underflow 0, as in Python */
    return true;
}

bool bl_cli_float(const char *s, double *out)
{
    return parse_float(s, out);
}

/* Looks an option-like argument up among `names` (n of them, long options
 * "--x" plus "-h"); argparse accepts an exact name or an unambiguous prefix
 * of a long one. Returns the index, -1 when unknown, -2 when ambiguous (the
 * error is already printed). `*explicit_value` gets the text after '='. */
static int lookup(const char *arg, const char *const *names, size_t n, const char *usage,
                  const char *prog, const char **explicit_value, bl_cli_parsed *err)
{
    *explicit_value = NULL;
    if (arg[1] != '-') {
        /* Single dash: only -h exists; "-hX" is -h with an explicit "X". */
        if (arg[1] == 'h') {
            for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], "--help") == 0) {
                    if (arg[2])
                        *explicit_value = arg + 2;
                    return (int)i;
                }
        }
        return -1;
    }
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (eq)
        *explicit_value = eq + 1;
    int found = -1, matches = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(names[i]) == len && strncmp(names[i], arg, len) == 0)
            return (int)i;
    for (size_t i = 0; i < n; i++)
        if (strncmp(names[i], arg, len) == 0) {
            found = (int)i;
            matches++;
        }
    if (matches > 1) {
        fputs(usage, stderr);
        fprintf(stderr, "%s: error: ambiguous option: ", prog);
        /* The option part of "--opt=value" only, as argparse prints it. */
        char *name = bl_strndup(arg, len);
        bl_cli_print_text(stderr, name ? name : "?");
        bl_free(name);
        fputs(" could match ", stderr);
        const char *sep = "";
        for (size_t i = 0; i < n; i++)
            if (strncmp(names[i], arg, len) == 0) {
                fprintf(stderr, "%s%s", sep, names[i]);
                sep = ", ";
            }
        fputc('\n', stderr);
        *err = BL_CLI_USAGE_ERROR;
        return -2;
    }
    if (matches == 0) {
        *explicit_value = NULL;
        return -1;
    }
    return found;
}

/* Whether argparse would read `arg` as an option string rather than a
 * value: it starts with '-', is not "-" or a negative number, and a text
 * with a space that names no option is a value too. */
static bool option_like(const char *arg, const char *const *names, size_t n)
{
    if (arg[0] != '-' || arg[1] == 0 || negative_number(arg))
        return false;
    if (strchr(arg, ' ')) {
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        for (size_t i = 0; i < n; i++)
            if (strncmp(names[i], arg, len) == 0)
                return true;
        return false;
    }
    return true;
}

static const char *help_name(const char *name)
{
    return strcmp(name, "--help") == 0 ? "-h/--help" : name;
}

static bl_cli_parsed store(parse_state *st, const bl_cli_command *cmd, size_t k,
                           const char *value, const char *prog)
{
    const bl_cli_option *o = &cmd->options[k];
    bl_cli_args *a = st->args;
    if (o->kind == BL_CLI_INT && !parse_int(value, &a->integer[k]))
        return usage_error(cmd->usage, prog, "argument %s: invalid int value: '%s'", o->name,
                           value);
    if (o->kind == BL_CLI_FLOAT && !parse_float(value, &a->real[k]))
        return usage_error(cmd->usage, prog, "argument %s: invalid float value: '%s'", o->name,
                           value);
    if (o->kind == BL_CLI_CHOICE) {
        bool ok = false;
        for (const char *const *c = o->choices; *c && !ok; c++)
            ok = strcmp(*c, value) == 0;
        if (!ok) {
            fputs(cmd->usage, stderr);
            fprintf(stderr, "%s: error: argument %s: invalid choice: '", prog, o->name);
            bl_cli_print_text(stderr, value);
            fputs("' (choose from ", stderr);
            for (const char *const *c = o->choices; *c; c++)
                fprintf(stderr, "%s'%s'", c == o->choices ? "" : ", ", *c);
            fputs(")\n", stderr);
            return BL_CLI_USAGE_ERROR;
        }
    }
    if (o->repeatable || o->plus) {
        if (!a->all[k] && !(a->all[k] = bl_mallocarray(st->capacity, sizeof(char *)))) {
            fputs("brainlesslab: MemoryError: cannot parse the command line\n", stderr);
            return BL_CLI_NO_MEMORY;
        }
        a->all[k][a->nall[k]++] = value;
    }
    a->count[k]++;
    a->value[k] = value;
    return BL_CLI_PROCEED;
}

/* One subcommand's arguments, argv[0..argc-1] after its name. */
static bl_cli_parsed parse_command(parse_state *st, const bl_cli_command *cmd, int argc,
                                   char **argv)
{
    char prog[64];
    snprintf(prog, sizeof prog, "brainlesslab %s", cmd->name);
    const char *names[BL_CLI_MAX_OPTIONS + 1];
    size_t n = 0;
    names[n++] = "--help";
    BL_ASSERT(cmd->n_options <= BL_CLI_MAX_OPTIONS);
    for (size_t k = 0; k < cmd->n_options; k++)
        names[n++] = cmd->options[k].name;

    bool only_values = false;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_values && strcmp(arg, "--") == 0) {
            only_values = true;
            continue;
        }
        if (only_values || !option_like(arg, names, n)) {
            bl_cli_args *a = st->args;
            if (cmd->positional_plus) {
                if (!a->positionals &&
                    !(a->positionals = bl_calloc(st->capacity, sizeof *a->positionals))) {
                    fputs("brainlesslab: MemoryError: cannot parse the command line\n", stderr);
                    return BL_CLI_NO_MEMORY;
                }
                a->positionals[a->npositionals++] = arg;
            }
            if (!st->args->positional)
                st->args->positional = arg;
            else if (cmd->positional2 && !st->args->positional2)
                st->args->positional2 = arg;
            else if (!cmd->positional_plus)
                st->extras[st->n_extras++] = arg;
            continue;
        }
        const char *value;
        bl_cli_parsed err = BL_CLI_PROCEED;
        int j = lookup(arg, names, n, cmd->usage, prog, &value, &err);
        if (j == -2)
            return err;
        if (j == -1) {
            st->extras[st->n_extras++] = arg;
            continue;
        }
        if (j == 0) {
            if (value)
                return usage_error(cmd->usage, prog, "argument %s: ignored explicit argument '%s'",
                                   help_name(names[j]), value);
            fputs(cmd->usage, stdout);
            fputs(cmd->help, stdout);
            return BL_CLI_HELP_SHOWN;
        }
        const bl_cli_option *o = &cmd->options[j - 1];
        if (o->kind == BL_CLI_SWITCH) {
            if (value)
                return usage_error(cmd->usage, prog, "argument %s: ignored explicit argument '%s'",
                                   names[j], value);
            st->args->count[j - 1]++;
            st->args->value[j - 1] = "true";
            continue;
        }
        if (o->plus)
            st->args->nall[j - 1] = 0; /* a later occurrence replaces the values */
        if (!value) {
            if (i + 1 >= argc || option_like(argv[i + 1], names, n) ||
                strcmp(argv[i + 1], "--") == 0)
                return usage_error(cmd->usage, prog,
                                   o->plus ? "argument %s: expected at least one argument"
                                           : "argument %s: expected one argument",
                                   names[j]);
            value = argv[++i];
        }
        bl_cli_parsed r = store(st, cmd, (size_t)j - 1, value, prog);
        /* nargs="+" takes every following value up to the next option. */
        while (r == BL_CLI_PROCEED && o->plus && i + 1 < argc &&
               !option_like(argv[i + 1], names, n) && strcmp(argv[i + 1], "--") != 0)
            r = store(st, cmd, (size_t)j - 1, argv[++i], prog);
        if (r != BL_CLI_PROCEED)
            return r;
    }
    if (!st->args->positional)
        return usage_error(cmd->usage, prog, "the following arguments are required: %s%s%s",
                           cmd->positional, cmd->positional2 ? ", " : "",
                           cmd->positional2 ? cmd->positional2 : "");
    if (cmd->positional2 && !st->args->positional2)
        return usage_error(cmd->usage, prog, "the following arguments are required: %s",
                           cmd->positional2);
    for (size_t k = 0; k < cmd->n_options; k++) {
        const bl_cli_option *o = &cmd->options[k];
        if (st->args->count[k] || !o->fallback)
            continue;
        st->args->value[k] = o->fallback;
        bool ok = true; /* the defaults are ours */
        if (o->kind == BL_CLI_INT)
            ok = parse_int(o->fallback, &st->args->integer[k]);
        if (o->kind == BL_CLI_FLOAT)
            ok = parse_float(o->fallback, &st->args->real[k]);
        if (o->plus) {
            bl_cli_parsed r = store(st, cmd, k, o->fallback, prog);
            if (r != BL_CLI_PROCEED)
                return r;
            st->args->count[k] = 0; /* a default is not "given" */
        }
        BL_ASSERT(ok);
    }
    return BL_CLI_PROCEED;
}

bl_cli_parsed bl_cli_parse(const bl_cli_program *prog, int argc, char **argv,
                           bl_cli_args *args)
{
    memset(args, 0, sizeof *args);
    parse_state st = {.args = args, .capacity = argc > 0 ? (size_t)argc : 1};
    st.extras = bl_mallocarray(st.capacity, sizeof(char *));
    if (!st.extras) {
        fputs("brainlesslab: MemoryError: cannot parse the command line\n", stderr);
        return BL_CLI_NO_MEMORY;
    }
    static const char *const root_names[] = {"--help", "--version"};
    bl_cli_parsed r = BL_CLI_PROCEED;
    bool only_values = false;
    int i = 1;
    for (; i < argc && !args->command; i++) {
        const char *arg = argv[i];
        if (!only_values && strcmp(arg, "--") == 0) {
            only_values = true;
            continue;
        }
        if (only_values || !option_like(arg, root_names, 2)) {
            for (size_t c = 0; c < prog->n_commands; c++)
                if (strcmp(prog->commands[c]->name, arg) == 0)
                    args->command = prog->commands[c];
            if (args->command)
                break;
            fputs(prog->usage, stderr);
            fputs("brainlesslab: error: argument command: invalid choice: '", stderr);
            bl_cli_print_text(stderr, arg);
            fputs("' (choose from ", stderr);
            for (size_t c = 0; c < prog->n_commands; c++)
                fprintf(stderr, "%s'%s'", c ? ", " : "", prog->commands[c]->name);
            fputs(")\n", stderr);
            r = BL_CLI_USAGE_ERROR;
            goto done;
        }
        const char *value;
        int j = lookup(arg, root_names, 2, prog->usage, "brainlesslab", &value, &r);
        if (j == -2)
            goto done;
        if (j == -1) {
            st.extras[st.n_extras++] = arg;
            continue;
        }
        if (value) {
            r = usage_error(prog->usage, "brainlesslab", "argument %s: ignored explicit argument '%s'",
                            help_name(root_names[j]), value);
            goto done;
        }
        if (j == 0) {
            fputs(prog->usage, stdout);
            fputs(prog->help, stdout);
            r = BL_CLI_HELP_SHOWN;
        } else {
            r = BL_CLI_VERSION;
        }
        goto done;
    }
    if (!args->command) {
        r = usage_error(prog->usage, "brainlesslab",
                        "the following arguments are required: command");
        goto done;
    }
    r = parse_command(&st, args->command, argc - i - 1, argv + i + 1);
    if (r == BL_CLI_PROCEED && st.n_extras) {
        fputs(prog->usage, stderr);
        fputs("brainlesslab: error: unrecognized arguments:", stderr);
        for (size_t k = 0; k < st.n_extras; k++) {
            fputc(' ', stderr);
            bl_cli_print_text(stderr, st.extras[k]);
        }
        fputc('\n', stderr);
        r = BL_CLI_USAGE_ERROR;
    }
done:
    bl_free(st.extras);
    if (r != BL_CLI_PROCEED)
        bl_cli_args_clear(args);
    return r;
}

void bl_cli_args_clear(bl_cli_args *args)
{
    for (size_t k = 0; k < BL_CLI_MAX_OPTIONS; k++) {
        bl_free(args->all[k]);
        args->all[k] = NULL;
    }
    bl_free(args->positionals);
    args->positionals = NULL;
    args->npositionals = 0;
}

const char *bl_cli_value(const bl_cli_args *args, const char *name)
{
    for (size_t k = 0; args->command && k < args->command->n_options; k++)
        if (strcmp(args->command->options[k].name, name) == 0)
            return args->value[k];
    return NULL;
}
