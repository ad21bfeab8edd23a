/* Reporting and output helpers shared by the commands (see cli.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/text.h"
#include "cli.h"

/* The signals that ask the program to stop: Ctrl-C, kill's default and a
 * closed terminal (spec/platform.md §3.3 names Ctrl-C; the other two end
 * the same way, with their own kind, message and exit code). */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

volatile sig_atomic_t bl_cli_interrupted;
bool bl_cli_embedded;

int bl_cli_interrupt_exit(void)
{
    const int sig = bl_cli_interrupted;
    return 128 + (sig ? sig : SIGINT);
}

int bl_cli_dispatch(const bl_cli_program *prog, int argc, char **argv, int (*version)(void))
{
    bl_cli_args args;
    switch (bl_cli_parse(prog, argc, argv, &args)) {
    case BL_CLI_PROCEED:
        break;
    case BL_CLI_HELP_SHOWN:
        return fflush(stdout) == 0 ? 0 : 1;
    case BL_CLI_VERSION:
        return version();
    case BL_CLI_USAGE_ERROR:
        return 2;
    case BL_CLI_NO_MEMORY:
        return 1;
    }
    int rc = args.command->main(&args);
    bl_cli_args_clear(&args);
    return rc;
}

int bl_cli_report(const bl_error *err)
{
    /* Room for every byte of the message escaped (4 bytes each), so the
     * line is built without the heap and written in one piece. */
    char storage[4 * BL_ERROR_MAX + 64];
    bl_buf line;
    bl_buf_init_fixed(&line, storage, sizeof storage);
    bl_buf_printf(&line, "brainlesslab: %s: ", bl_status_kind(err->status));
    /* Messages quote paths and ids: their control characters must neither
     * split the line nor drive the terminal. */
    bl_escape_controls(&line, err->msg, strnlen(err->msg, sizeof err->msg));
    bl_buf_putc(&line, '\n');
    fwrite(line.data, 1, line.len, stderr);
    fflush(stderr);
    bl_buf_clear(&line);
    if (err->status == BL_EUSAGE)
        return 2;
    if (err->status == BL_EINTERRUPT || err->status == BL_ETERMINATED)
        return bl_cli_interrupt_exit();
    return 1;
}

void bl_cli_print_text(FILE *f, const char *text)
{
    char storage[256];
    bl_buf b;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    /* Out of memory for a very long id: print what was escaped, never the raw bytes. */
    (void)bl_escape_controls(&b, text, strlen(text));
    fwrite(b.data, 1, b.len, f);
    bl_buf_clear(&b);
}

int bl_cli_emit(const bl_buf *out)
{
    bl_error err;
    if (bl_buf_status(out, &err) != BL_OK)
        return bl_cli_report(&err);
    errno = 0;
    if (fwrite(out->data, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
        bl_fail(&err, BL_EOS, "cannot write to standard output: %s",
                errno ? strerror(errno) : "write failed");
        return bl_cli_report(&err);
    }
    return 0;
}

int bl_cli_print_json(const bl_json *v, unsigned flags)
{
    bl_error err = {0};
    bl_buf out;
    bl_buf_init(&out);
    int rc;
    if (bl_json_write(v, flags, &out, &err) != BL_OK) {
        rc = bl_cli_report(&err);
    } else {
        bl_buf_putc(&out, '\n');
        rc = bl_cli_emit(&out);
    }
    bl_buf_clear(&out);
    return rc;
}

bl_status bl_cli_path_line(const char *key, const char *path, const char *status, bl_buf *out,
                           bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *o = bl_json_object();
    bl_json_put(&st, o, key, bl_json_string(path), err);
    bl_json_put(&st, o, "status", bl_json_string(status), err);
    if (st == BL_OK)
        st = bl_json_write(o, BL_JSON_SPACED, out, err);
    bl_json_destroy(o);
    if (st != BL_OK)
        return st;
    bl_buf_putc(out, '\n');
    return bl_buf_status(out, err);
}

static void on_interrupt(int sig)
{
    /* Only async-signal-safe calls here: write and _exit. The lines are
     * bl_cli_report's for bl_fail_signal(sig). */
    static const char int_line[] = "brainlesslab: KeyboardInterrupt: interrupted\n";
    static const char term_line[] = "brainlesslab: SystemExit: terminated by SIGTERM\n";
    static const char hup_line[] = "brainlesslab: SystemExit: terminated by SIGHUP\n";
    const char *line = sig == SIGINT ? int_line : sig == SIGTERM ? term_line : hup_line;
    size_t len = sig == SIGINT ? sizeof int_line : sig == SIGTERM ? sizeof term_line
                                                                   : sizeof hup_line;
    ssize_t n = write(STDERR_FILENO, line, len - 1);
    (void)n;
    _exit(128 + sig);
}

/* One handler for every stop signal; while it runs the others wait, so a
 * second signal can neither interleave a second line nor replace the
 * recorded first one halfway. */
static void handle_stop_signals(void (*handler)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaddset(&sa.sa_mask, stop_signals[i]);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaction(stop_signals[i], &sa, NULL);
}

void bl_cli_exit_on_interrupt(void)
{
    if (bl_cli_embedded)
        return;
    handle_stop_signals(on_interrupt, 0);
    /* A closed stdout must become a failed write and one OSError line, not
     * a silent death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
}

static void raise_flag(int sig)
{
    /* The first signal says why the program stops; a later one (a second
     * Ctrl-C, say) changes nothing. */
    if (!bl_cli_interrupted)
        bl_cli_interrupted = sig;
}

void bl_cli_flag_interrupts(void)
{
    if (bl_cli_embedded)
        return;
    handle_stop_signals(raise_flag, SA_RESTART);
}

void bl_cli_block_interrupts(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaddset(&block, stop_signals[i]);
    pthread_sigmask(SIG_BLOCK, &block, old);
}
