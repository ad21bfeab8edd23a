/* Internal to src/records: streaming access to the members of an in-memory
 * ZIP archive, shared by bl_zip_read (which copies them) and the source
 * receipt (which only hashes them, so it never holds two copies of the
 * bundle). */
#ifndef BL_RECORDS_ZIP_INTERNAL_H
#define BL_RECORDS_ZIP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/status.h"

/* Called once per member, in archive order. `data` is valid only during the
 * call (the buffer is reused for the next member); a status other than
 * BL_OK stops the walk and is returned as is. */
typedef bl_status (*bl_zip_visitor)(void *ctx, const char *name, const void *data,
                                    size_t len, bl_error *err);

/* Opens the archive read-only with libzip's consistency checks, refuses
 * unsafe or duplicate member names (bl_zip_name_check), reads every member
 * through libzip's CRC check and hands it to `visit`. A damaged archive is
 * BL_EVALUE. */
bl_status bl_zip_visit(const void *zip, size_t len, bl_zip_visitor visit, void *ctx,
                       bl_error *err);

/* NULL when `name` is a portable relative path, else why not: empty,
 * absolute, a backslash, an empty, "." or ".." component, a control
 * character, or bytes that are not UTF-8. */
const char *bl_zip_name_problem(const char *name);

#endif
