/* What the command files share: the commands themselves, the one-line error
 * report of DESIGN.md rule 5, and the stdout discipline (JSON only, written
 * in one piece at the end, write errors checked). */
#ifndef BL_CLI_CLI_H
#define BL_CLI_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "args.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/records.h"
#include "brainlesslab/status.h"

extern const bl_cli_command bl_cli_check;
extern const bl_cli_command bl_cli_run;
extern const bl_cli_command bl_cli_inspect;
extern const bl_cli_command bl_cli_profile;
extern const bl_cli_command bl_cli_qualify;
extern const bl_cli_command bl_cli_decode;
extern const bl_cli_command bl_cli_sweep;
extern const bl_cli_command bl_cli_ablate;
extern const bl_cli_command bl_cli_benchmark;
extern const bl_cli_command bl_cli_calibrate;
extern const bl_cli_command bl_cli_presets;
extern const bl_cli_command bl_cli_export_replay;
extern const bl_cli_command bl_cli_replays;
extern const bl_cli_command bl_cli_plot;
extern const bl_cli_command bl_cli_merge;

/* Prints "brainlesslab: <Kind>: <message>" on stderr, the message's control
 * characters escaped (bl_escape_controls); returns exit code 1. A usage
 * status (BL_EUSAGE) returns 2; an interrupt (BL_EINTERRUPT, BL_ETERMINATED)
 * bl_cli_interrupt_exit() (130 for Ctrl-C, 143 for SIGTERM, 129 for
 * SIGHUP). */
int bl_cli_report(const bl_error *err);

/* Writes text that came from a user (a target id, a path) to `f` with its
 * control characters escaped, so that it cannot ring, recolour or rewrite
 * the terminal. */
void bl_cli_print_text(FILE *f, const char *text);

/* Writes the whole buffer to stdout and flushes it; a failed write is
 * reported as an OSError line (exit 1). */
int bl_cli_emit(const bl_buf *out);

/* Writes v (bl_json_write's flags) and a newline to stdout in one piece:
 * bl_cli_emit's exit code, or bl_cli_report's when v cannot be written. */
int bl_cli_print_json(const bl_json *v, unsigned flags);

/* Appends {"<key>": path, "status": status} and a newline to out, with the
 * keys in that order, Python's default separators and non-ASCII kept raw
 * (spec/platform.md §3.2 step 9): the one line that run (key "record") and
 * profile ("receipt") print. Fails when the path cannot be JSON (not
 * UTF-8). */
bl_status bl_cli_path_line(const char *key, const char *path, const char *status, bl_buf *out,
                           bl_error *err);

/* Makes a stop signal end the program at once with exit 128 + the signal
 * (spec/platform.md §3.3: 130 for Ctrl-C) and bl_cli_report's line for
 * bl_fail_signal. Only for commands that own nothing that must be
 * cleaned up (check writes no files). */
void bl_cli_exit_on_interrupt(void);

/* For commands that own files while they work: a stop signal only sets
 * bl_cli_interrupted to its number (the first one that arrived), which the
 * runner polls at tick boundaries and the record writer before its
 * completion marker, so the command can leave its files in a clean, honest
 * state before it exits 128 + the signal. SA_RESTART keeps stdio writes
 * from failing with EINTR. */
extern volatile sig_atomic_t bl_cli_interrupted;
void bl_cli_flag_interrupts(void);
/* 128 + the signal recorded in bl_cli_interrupted, as a shell reports a
 * death by that signal (130 when none was recorded). */
int bl_cli_interrupt_exit(void);

/* Holds the stop signals back (the previous mask into *old, restored with
 * pthread_sigmask(SIG_SETMASK, old, NULL)), for a write that must finish
 * whole before the program may stop. */
void bl_cli_block_interrupts(sigset_t *old);

/* ---- writing a record (record_out.c: run, run under MPI, --shard, merge) -- */

/* Reserves the new record `dest` (bl_record_reserve) once its path is known
 * to be printable in the record line, after which a stop signal only raises
 * bl_cli_interrupted and a write over RLIMIT_FSIZE fails instead of
 * killing: until then a command owns nothing on disk. */
bl_status bl_cli_reserve_record(const char *dest, bl_reservation *res, bl_error *err);
/* The record writer's question before each file (before_file): once a stop
 * signal has arrived, nothing more is written, above all not DONE. */
bl_status bl_cli_stop_requested(void *ctx, const char *rel, bl_error *err);
/* After the reservation: an error or a stop signal becomes a FAILED record
 * first, then one line on stderr (exit 1, or 128 + the signal). */
int bl_cli_fail_reserved(const bl_reservation *r, const bl_error *err);
/* A record just written: inspected, its {"record": PATH, "status": STATUS}
 * line printed on stdout (*printed then true, so the caller may print its
 * summary on stderr). The exit code: 0 iff the record is complete, 1 when
 * it is not, or the report's. */
int bl_cli_record_written(const char *path, bool *printed);
/* An evaluation's record written into the reservation: its recording
 * channels (an error fails the reservation), bl_record_write (which fails
 * it itself), then bl_cli_record_written. in->before_file defaults to
 * bl_cli_stop_requested. Returns the exit code. */
int bl_cli_write_evaluation(bl_record_input *in, const bl_reservation *r, bool *printed);

/* True while a command runs in-process for a host program (embed.h, the
 * Python package): then bl_cli_exit_on_interrupt and bl_cli_flag_interrupts
 * leave the host's signal handlers alone, and the host raises
 * bl_cli_interrupted itself when it is asked to stop. */
extern bool bl_cli_embedded;

/* Parses argv against the program and runs the command it names: the exit
 * code (0 after --help; `version`'s after --version; 2 for a bad command
 * line). main and the in-process entry (embed.c) both end here. */
int bl_cli_dispatch(const bl_cli_program *prog, int argc, char **argv, int (*version)(void));

#endif
