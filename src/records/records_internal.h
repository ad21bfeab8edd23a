/* What the record writer and the inspector share (spec/platform.md §7):
 * the format constants, the finite-number rule, and one walk over a record
 * directory that never follows a link. */
#ifndef BL_RECORDS_INTERNAL_H
#define BL_RECORDS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/json.h"
#include "brainlesslab/status.h"

#define BL_RECORD_FORMAT "brainlesslab-record"
#define BL_RECORD_FORMAT_VERSION 2
#define BL_RECORD_MANIFEST "record.toml"
#define BL_RECORD_RESERVED ".RESERVED"
#define BL_RECORD_DONE "DONE"
#define BL_RECORD_FAILED "FAILED"
/* The source capture of §7.2: the embedded bundle and its receipt. */
#define BL_RECORD_SOURCE_ARCHIVE "environment/package-source.zip"
#define BL_RECORD_SOURCE_RECEIPT "environment/source.json"

/* Any non-finite real anywhere in v → BL_EVALUE "records require finite
 * numbers or explicit missing values". */
bl_status bl_record_check_finite(const bl_json *v, bl_error *err);

/* Every entry of a record directory that is not a directory, as POSIX paths
 * relative to it, sorted by bytes (Python's sorted() of str paths). */
typedef struct bl_record_files {
    char **paths;
    size_t n;
} bl_record_files;

/* Walks the directory open as `dirfd` (not consumed) without following any
 * link: a symbolic link anywhere is BL_EVALUE "record artifacts cannot be
 * symlinks". */
bl_status bl_record_list_files(int dirfd, bl_record_files *out, bl_error *err);
void bl_record_files_clear(bl_record_files *f);
/* Whether `path` is one of the sorted list's entries. */
bool bl_record_files_has(const bl_record_files *f, const char *path);

/* bl_record_path_join is public (records.h): the CLI names files with it. */

/* Opens `path` as a directory that is not a link (O_NOFOLLOW); -1 with
 * errno set otherwise. */
int bl_record_open_dir(const char *path);

/* The inspection of a record directory already open as dirfd; `path`
 * names it in messages. */
bl_status bl_record_inspect_at(int dirfd, const char *path, bl_json **out, bl_error *err);

#endif
