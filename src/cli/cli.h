/* What the command files share: the commands themselves, the one-line error
 * report of DESIGN.md rule 5, and the stdout discipline (JSON only, written
 * in one piece at the end, write errors checked). */
#ifndef BL_CLI_CLI_H
#define BL_CLI_CLI_H

#include <signal.h>

#include "args.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/status.h"

extern const bl_cli_command bl_cli_check;
extern const bl_cli_command bl_cli_run;
extern const bl_cli_command bl_cli_inspect;
extern const bl_cli_command bl_cli_profile;
extern const bl_cli_command bl_cli_qualify;

/* Prints "brainlesslab: <Kind>: <message>" on stderr; returns exit code 1.
 * A usage status (BL_EUSAGE) returns 2, an interrupt (BL_EINTERRUPT) 130. */
int bl_cli_report(const bl_error *err);

/* Writes the whole buffer to stdout and flushes it; a failed write is
 * reported as an OSError line (exit 1). */
int bl_cli_emit(const bl_buf *out);

/* Makes Ctrl-C end the program at once with exit 130 (spec/platform.md §3.3)
 * and one stderr line. Only for commands that own nothing that must be
 * cleaned up (check writes no files). */
void bl_cli_exit_on_interrupt(void);

/* For commands that own files while they work: Ctrl-C only sets
 * bl_cli_interrupted, which the runner polls at tick boundaries, so the
 * command can leave its files in a clean, honest state before it exits 130.
 * SA_RESTART keeps stdio writes from failing with EINTR. */
extern volatile sig_atomic_t bl_cli_interrupted;
void bl_cli_flag_interrupts(void);

#endif
