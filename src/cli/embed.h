/* One command of the program run in-process, for a host program: the
 * Python package (python/brainlesslab/_plans.py) calls these through cffi
 * in libbrainlesslab.so, so that check, run, inspect and decode from Python
 * are the CLI's own code, with its validation, defaults and messages. Not
 * in the public headers: only the shared library holds the commands. */
#ifndef BL_CLI_EMBED_H
#define BL_CLI_EMBED_H

#include <stddef.h>

/* What a command printed and how it ended. out and err are owned by the
 * caller after the call (bl_cli_embed_free each; NULL when empty). */
typedef struct bl_cli_embed_result {
    int exit_code;  /* the program's exit code: 0, 1, 2, 128 + a signal */
    char *out;      /* what it wrote on stdout */
    size_t out_len;
    char *err;      /* what it wrote on stderr: its error line last */
    size_t err_len;
} bl_cli_embed_result;

/* Runs `brainlesslab argv[1..]` (argv[1] one of check, run, inspect, decode)
 * as main would, except that nothing reaches the terminal: stdout and
 * stderr are captured into *res, the process's stop-signal handlers are the
 * host's throughout (bl_cli_embedded), and any signal disposition a command
 * changes (SIGPIPE, SIGXFSZ) is restored. One command at a time per
 * process: a second caller waits. Returns 0, or -1 when the capture could
 * not be set up (out of memory; errno says), with nothing run. */
int bl_cli_embed_run(int argc, char **argv, bl_cli_embed_result *res);

/* Asks the running command to stop as a stop signal `sig` would (SIGINT:
 * KeyboardInterrupt): a run fails its reservation and ends at the next
 * tick. Safe from any thread; the first request wins. */
void bl_cli_embed_interrupt(int sig);

void bl_cli_embed_free(void *p);

#endif
