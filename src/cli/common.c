/* Reporting helpers shared by the commands (see cli.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int bl_cli_report(const bl_error *err)
{
    /* A message is one line by construction; a stray newline (from a file
     * name, say) must still not split the report. */
    fprintf(stderr, "brainlesslab: %s: ", bl_status_kind(err->status));
    for (const char *p = err->msg; *p; p++)
        fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
    fputc('\n', stderr);
    return err->status == BL_EUSAGE ? 2 : err->status == BL_EINTERRUPT ? 130 : 1;
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

static void on_interrupt(int sig)
{
    (void)sig;
    /* Only async-signal-safe calls here: write and _exit. */
    static const char line[] = "brainlesslab: KeyboardInterrupt: interrupted\n";
    ssize_t n = write(STDERR_FILENO, line, sizeof line - 1);
    (void)n;
    _exit(130);
}

void bl_cli_exit_on_interrupt(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    /* A closed stdout must become a failed write and one OSError line, not
     * a silent death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
}

volatile sig_atomic_t bl_cli_interrupted;

static void raise_flag(int sig)
{
    (void)sig;
    bl_cli_interrupted = 1;
}

void bl_cli_flag_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = raise_flag;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
}
