/* Reading files the program did not write itself (plans, record manifests,
 * calibrations, worker receipts, .npy arrays, artifacts to hash) without
 * being stalled or flooded by them.
 *
 * Everything but a plan must be a regular file: it is opened with
 * O_NONBLOCK, so a FIFO with no writer cannot make open() wait forever, and
 * anything fstat does not call a regular file (FIFO, socket, device) is
 * refused with a message naming what it is. Whole-file reads stop at a cap:
 * a regular file over it is refused from its size before a byte is read,
 * and one that grows while it is read (or a stream such as /dev/zero) is
 * refused as soon as it passes the cap, so memory stays bounded.
 *
 * Errors: a missing file → BL_ENOENT, a directory → BL_EISDIR "<path>: Is a
 * directory", over the cap → BL_EVALUE "<path>: <what> is larger than
 * <cap>", anything else the system says → BL_EOS "<path>: <reason>". */
#ifndef BRAINLESSLAB_FILE_H
#define BRAINLESSLAB_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/status.h"

enum {
    /* Also read pipes, FIFOs and character devices, to end of file (plans:
     * `check <(cat plan.toml)`). Opening one waits for a writer as any Unix
     * reader does; an interrupt ends the wait. */
    BL_FILE_STREAM = 1u << 0,
    /* Refuse a symbolic link as the last path component. */
    BL_FILE_NOFOLLOW = 1u << 1,
};

/* The caps of the files the program reads whole (docs/plans.md and
 * docs/records.md say why each is this size). */
#define BL_FILE_PLAN_MAX ((size_t)16 << 20) /* plans and record manifests */
/* Calibration files, profile worker receipts and any other JSON file. */
#define BL_FILE_JSON_MAX ((size_t)64 << 20)

/* Opens `path` for reading (close-on-exec) as `flags` allow; *fd is the open
 * descriptor, *size the file's size (0 for a stream). On failure *fd is -1. */
bl_status bl_file_open(const char *path, unsigned flags, int *fd, uint64_t *size,
                       bl_error *err);

/* Reads up to n bytes, fewer only at end of file (interrupted reads are
 * resumed). `path` names the file in messages. */
bl_status bl_file_read_upto(int fd, void *buf, size_t n, size_t *got, const char *path,
                            bl_error *err);

/* The whole file, at most `cap` bytes, as a heap buffer with a NUL after
 * the last byte (*data, owned by the caller; *len bytes before the NUL).
 * `what` names the kind of file in the over-the-cap message ("plan file"). */
bl_status bl_file_read(const char *path, size_t cap, const char *what, unsigned flags,
                       char **data, size_t *len, bl_error *err);

#endif
