/* The command line, parsed the way the reference's argparse parser parses it
 * (spec/platform.md §3): a required subcommand, `--opt value` and
 * `--opt=value`, unambiguous prefixes of long options, `-h/--help` per
 * command, and argparse's error texts and exit code 2, so that a script that
 * drives both implementations sees the same answers. Values stay pointers
 * into argv, which lives as long as the program. */
#ifndef BL_CLI_ARGS_H
#define BL_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum bl_cli_kind {
    BL_CLI_STRING, /* a path or free text */
    BL_CLI_INT,    /* Python int() syntax, within int64 (a documented limit) */
    BL_CLI_CHOICE, /* one of a fixed list */
    BL_CLI_FLOAT,  /* Python float() syntax ("nan" and "inf" included) */
    BL_CLI_SWITCH, /* store_true: takes no value; given iff count > 0 */
} bl_cli_kind;

typedef struct bl_cli_option {
    const char *name;            /* "--batch-size" */
    bl_cli_kind kind;
    const char *const *choices;  /* NULL-terminated, for BL_CLI_CHOICE */
    const char *fallback;        /* the default, as text ("32"), or NULL */
    bool repeatable;             /* argparse's action="append" */
    /* argparse's nargs="+": one or more values after the option; the last
     * occurrence's values are in all[] (nall of them), the default (one
     * value) when the option is not given. */
    bool plus;
} bl_cli_option;

#define BL_CLI_MAX_OPTIONS 24

typedef struct bl_cli_args bl_cli_args;

typedef struct bl_cli_command {
    const char *name;
    const char *positional;      /* its one positional's name ("plan") */
    const char *positional2;     /* a second positional's name ("out"), or NULL */
    /* argparse's nargs="+" for the positional: one or more, every one in
     * bl_cli_args' positionals (positional is the first). */
    bool positional_plus;
    const bl_cli_option *options;
    size_t n_options;
    const char *usage;           /* "usage: ..." lines, newline-terminated */
    const char *help;            /* the rest of --help after the usage */
    int (*main)(const bl_cli_args *args); /* returns the exit code */
} bl_cli_command;

/* A command's option table and its length, in a bl_cli_command initialiser
 * (a command without options leaves both zero). */
#define BL_CLI_OPTIONS(table) .options = (table), .n_options = sizeof(table) / sizeof *(table)

struct bl_cli_args {
    const bl_cli_command *command;
    const char *positional;
    const char *positional2;     /* when the command has a second positional */
    const char **positionals;    /* positional_plus: all of them (heap) */
    size_t npositionals;
    /* Per option, in the command's order: how often it was given, its last
     * value (or the default), the parsed integer for BL_CLI_INT, and every
     * value for a repeatable option (heap array, see bl_cli_args_clear). */
    size_t count[BL_CLI_MAX_OPTIONS];
    const char *value[BL_CLI_MAX_OPTIONS];
    int64_t integer[BL_CLI_MAX_OPTIONS];
    double real[BL_CLI_MAX_OPTIONS];     /* BL_CLI_FLOAT */
    const char **all[BL_CLI_MAX_OPTIONS];
    size_t nall[BL_CLI_MAX_OPTIONS];
};

/* The whole program: its root usage and help, and its subcommands. */
typedef struct bl_cli_program {
    const char *usage;
    const char *help;
    const bl_cli_command *const *commands;
    size_t n_commands;
} bl_cli_program;

typedef enum bl_cli_parsed {
    BL_CLI_PROCEED,      /* run args->command */
    BL_CLI_HELP_SHOWN,   /* exit 0 */
    BL_CLI_VERSION,      /* print the version report, exit 0 */
    BL_CLI_USAGE_ERROR,  /* usage and error already on stderr, exit 2 */
    BL_CLI_NO_MEMORY,    /* one line already on stderr, exit 1 */
} bl_cli_parsed;

/* Parses argv[1..argc-1]; on BL_CLI_PROCEED the caller runs
 * args->command->main(args) and then calls bl_cli_args_clear. Help goes to
 * stdout, usage errors to stderr. */
bl_cli_parsed bl_cli_parse(const bl_cli_program *prog, int argc, char **argv,
                           bl_cli_args *args);
void bl_cli_args_clear(bl_cli_args *args);

/* Python float(text), as the parser reads BL_CLI_FLOAT values (for the
 * values of a nargs="+" float option, of which args keeps only the text). */
bool bl_cli_float(const char *s, double *out);

/* The value of option `name` of the parsed command, or NULL. */
const char *bl_cli_value(const bl_cli_args *args, const char *name);

#endif
