/* Status codes and error messages.
 *
 * Every fallible function returns a bl_status and, on failure, writes one
 * human-readable line into a caller-supplied bl_error (which may be NULL when
 * the caller does not want the text). The codes mirror the exception kinds of
 * the reference implementation so that the CLI can print
 * "brainlesslab: <Kind>: <message>" exactly as the spec's catalogue says. */
#ifndef BRAINLESSLAB_STATUS_H
#define BRAINLESSLAB_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum bl_status {
    BL_OK = 0,
    BL_EVALUE,            /* ValueError: bad input value, plan or file content */
    BL_ETYPE,             /* TypeError: a value of the wrong kind */
    BL_EKEY,              /* KeyError: a missing or unknown key */
    BL_ENOMEM,            /* MemoryError: allocation failed or budget exceeded */
    BL_EEXIST,            /* FileExistsError */
    BL_ENOENT,            /* FileNotFoundError */
    BL_EISDIR,            /* IsADirectoryError */
    BL_EOS,               /* OSError: any other I/O failure */
    BL_ERUNTIME,          /* RuntimeError: an internal or runtime failure */
    BL_EUSAGE,            /* a bad command line (exit code 2) */
    BL_EINTERRUPT,        /* KeyboardInterrupt: stopped by the user (exit code 130) */
    BL_ETERMINATED,       /* SystemExit: asked to stop by SIGTERM or SIGHUP (exit 128 + signal) */
    BL_STATUS_COUNT
} bl_status;

/* One error line. Messages longer than the buffer are truncated, never split. */
#define BL_ERROR_MAX 1024
typedef struct bl_error {
    bl_status status;
    char msg[BL_ERROR_MAX];
} bl_error;

/* The reference's exception name for a status ("ValueError", ...). */
const char *bl_status_kind(bl_status status);

/* Records `status` and the formatted message into `err` (if not NULL) and
 * returns `status`, so callers can write `return bl_fail(err, BL_EVALUE, ...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
bl_status bl_fail(bl_error *err, bl_status status, const char *fmt, ...);

/* A stop signal as an error, the one wording of the command line, FAILED
 * markers and profile receipts: SIGINT is the reference's KeyboardInterrupt
 * "interrupted" (BL_EINTERRUPT); SIGTERM and SIGHUP are SystemExit
 * "terminated by SIGTERM" / "terminated by SIGHUP" (BL_ETERMINATED,
 * Python's name for a handled SIGTERM); 0 (no signal recorded) counts as
 * SIGINT. Returns the status. */
bl_status bl_fail_signal(bl_error *err, int sig);
bl_status bl_vfail(bl_error *err, bl_status status, const char *fmt, va_list ap);

/* Prefixes an existing message with context ("<prefix>: <old message>"),
 * keeping the status. It returns nothing on purpose: with a NULL buffer there
 * is no status to return, so callers keep the status they already hold. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void bl_error_prefix(bl_error *err, const char *fmt, ...);

/* Resets an error to BL_OK with an empty message. */
void bl_error_clear(bl_error *err);

/* Internal invariants: stays on in every build type, because a violated
 * invariant in a scientific tool must stop the program, not corrupt results. */
#define BL_ASSERT(cond)                                                        \
    ((cond) ? (void)0 : bl_assert_fail(#cond, __FILE__, __LINE__))
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void bl_assert_fail(const char *cond, const char *file, int line);

#endif
