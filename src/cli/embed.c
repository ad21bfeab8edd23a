/* In-process commands for a host program (embed.h). The commands write
 * their JSON and their error line to the C streams stdout and stderr;
 * while one runs here those two are memory streams (open_memstream), so
 * the host gets the exact bytes the program would print, and the terminal
 * gets nothing. Swapping the streams is a glibc facility (stdout is an
 * assignable variable there), and it is process-wide: another thread
 * writing to C's stdout meanwhile would write into the capture. Python's
 * own print does not use C stdio. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "embed.h"

#ifndef __GLIBC__
#error "embed.c assigns stdout and stderr, which glibc allows"
#endif

static const char usage[] = "usage: brainlesslab [-h] {check,run,inspect,decode,merge} ...\n";

static const bl_cli_command *const commands[] = {
    &bl_cli_check, &bl_cli_run, &bl_cli_inspect, &bl_cli_decode, &bl_cli_merge,
};

/* The dispositions a command may change, restored afterwards: the stop
 * signals (untouched while embedded, kept for safety), SIGPIPE (profile
 * ignores it) and SIGXFSZ (run ignores it, so that a write over
 * RLIMIT_FSIZE fails instead of killing). */
static const int kept_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
#define N_KEPT (sizeof kept_signals / sizeof *kept_signals)

/* bl_cli_interrupted, the streams and the commands' statics are the
 * process's: one command at a time. */
static pthread_mutex_t one_at_a_time = PTHREAD_MUTEX_INITIALIZER;

/* --version is a root option, before any command: never in an embedded
 * command line, which starts with the command. */
static int no_version(void) { return 2; }

static const bl_cli_program program = {
    .usage = usage,
    .help = usage,
    .commands = commands,
    .n_commands = sizeof commands / sizeof *commands,
};

int bl_cli_embed_run(int argc, char **argv, bl_cli_embed_result *res)
{
    *res = (bl_cli_embed_result){0};
    pthread_mutex_lock(&one_at_a_time);
    FILE *out = open_memstream(&res->out, &res->out_len);
    FILE *err = out ? open_memstream(&res->err, &res->err_len) : NULL;
    if (!err) {
        const int e = errno;
        if (out)
            fclose(out);
        bl_cli_embed_free(res->out);
        res->out = NULL;
        pthread_mutex_unlock(&one_at_a_time);
        errno = e;
        return -1;
    }
    struct sigaction kept[N_KEPT];
    for (size_t i = 0; i < N_KEPT; i++)
        sigaction(kept_signals[i], NULL, &kept[i]);
    FILE *host_out = stdout, *host_err = stderr;
    fflush(host_out);
    fflush(host_err);
    stdout = out;
    stderr = err;
    bl_cli_interrupted = 0;
    bl_cli_embedded = true;

    res->exit_code = bl_cli_dispatch(&program, argc, argv, no_version);

    bl_cli_embedded = false;
    stdout = host_out;
    stderr = host_err;
    for (size_t i = 0; i < N_KEPT; i++)
        sigaction(kept_signals[i], &kept[i], NULL);
    /* fclose sets the final pointers and lengths; a stream that failed
     * (out of memory) leaves what it had, which is all there is to give. */
    fclose(out);
    fclose(err);
    pthread_mutex_unlock(&one_at_a_time);
    return 0;
}

void bl_cli_embed_interrupt(int sig)
{
    if (!bl_cli_interrupted)
        bl_cli_interrupted = sig;
}

void bl_cli_embed_free(void *p) { free(p); }
