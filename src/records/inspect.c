/* Record inspection (spec/platform.md §7.6) and reading calibrations from
 * files or complete records (§7.7).
 *
 * Inspection only reads: it opens nothing for writing, follows no link and
 * runs nothing a record contains. A record is judged by its manifest alone:
 * every listed artifact must hash to its recorded SHA-256, nothing else may
 * lie beside them, and only a DONE marker without FAILED makes it complete. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/plan.h"
#include "brainlesslab/records.h"
#include "brainlesslab/sha256.h"
#include "records/records_internal.h"

/* Deeper than any record this program writes by far; a bound keeps a
 * hostile tree from exhausting file descriptors. */
#define MAX_DEPTH 32

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory while inspecting a record");
}

int bl_record_open_dir(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* ---- the directory walk ----------------------------------------------------- */

void bl_record_files_clear(bl_record_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        bl_free(f->paths[i]);
    bl_free(f->paths);
    f->paths = NULL;
    f->n = 0;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

bool bl_record_files_has(const bl_record_files *f, const char *path)
{
    return f->n > 0 && bsearch(&path, f->paths, f->n, sizeof *f->paths, cmp_path) != NULL;
}

typedef struct walker {
    bl_record_files *files;
    size_t cap;
    bl_error *err;
} walker;

static bl_status add_path(walker *w, char *path)
{
    if (w->files->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        char **grown = bl_realloc(w->files->paths, cap * sizeof *grown);
        if (!grown) {
            bl_free(path);
            return nomem(w->err);
        }
        w->files->paths = grown;
        w->cap = cap;
    }
    w->files->paths[w->files->n++] = path;
    return BL_OK;
}

char *bl_record_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    bool slash = a > 0 && dir[a - 1] != '/';
    char *s = bl_malloc(a + slash + b + 1);
    if (s) {
        memcpy(s, dir, a);
        s[a] = '/';
        memcpy(s + a + slash, name, b + 1);
    }
    return s;
}

/* Lists the directory open as fd (consumed) under the relative `prefix`. */
static bl_status walk(walker *w, int fd, const char *prefix, int depth)
{
    if (depth > MAX_DEPTH) {
        close(fd);
        return bl_fail(w->err, BL_EVALUE, "record directories nest deeper than %d levels",
                       MAX_DEPTH);
    }
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return bl_fail(w->err, BL_EOS, "cannot list a record directory: %s", strerror(e));
    }
    bl_status st = BL_OK;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno)
                st = bl_fail(w->err, BL_EOS, "cannot list a record directory: %s",
                             strerror(errno));
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *rel = prefix ? bl_record_path_join(prefix, e->d_name) : bl_strdup(e->d_name);
        if (!rel) {
            st = nomem(w->err);
            break;
        }
        struct stat sb;
        if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            st = bl_fail(w->err, BL_EOS, "%s: %s", rel, strerror(errno));
            bl_free(rel);
            break;
        }
        if (S_ISLNK(sb.st_mode)) {
            bl_free(rel);
            st = bl_fail(w->err, BL_EVALUE, "record artifacts cannot be symlinks");
            break;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if ((st = add_path(w, rel)) != BL_OK)
                break;
            continue;
        }
        int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0) {
            st = bl_fail(w->err, errno == ELOOP ? BL_EVALUE : BL_EOS, "%s: %s", rel,
                         errno == ELOOP ? "record artifacts cannot be symlinks"
                                        : strerror(errno));
            bl_free(rel);
            break;
        }
        st = walk(w, sub, rel, depth + 1);
        bl_free(rel);
        if (st != BL_OK)
            break;
    }
    closedir(d);
    return st;
}

bl_status bl_record_list_files(int dirfd, bl_record_files *out, bl_error *err)
{
    out->paths = NULL;
    out->n = 0;
    /* A fresh open file description, so the caller's fd keeps its offset. */
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return bl_fail(err, BL_EOS, "cannot open a record directory: %s", strerror(errno));
    walker w = {out, 0, err};
    bl_status st = walk(&w, fd, NULL, 0);
    if (st != BL_OK) {
        bl_record_files_clear(out);
        return st;
    }
    if (out->n > 1)
        qsort(out->paths, out->n, sizeof *out->paths, cmp_path);
    return BL_OK;
}

/* ---- manifest checks ----------------------------------------------------------- */

static const char *string_or_null(const bl_json *v)
{
    return v && bl_json_kindof(v) == BL_JSON_STRING ? bl_json_get_string(v, NULL) : NULL;
}

static bl_status check_format(const bl_json *manifest, bl_error *err)
{
    const char *format = string_or_null(bl_json_get(manifest, "format"));
    const bl_json *version = bl_json_get(manifest, "format_version");
    if (!format || strcmp(format, BL_RECORD_FORMAT) != 0 || !version ||
        bl_json_kindof(version) != BL_JSON_INT ||
        (bl_json_get_int(version) != 1 && bl_json_get_int(version) != 2))
        return bl_fail(err, BL_EVALUE, "unsupported record format");
    return BL_OK;
}

/* A portable relative path: a non-empty string of non-empty segments, none
 * "." or "..", no backslash, no colon (drive letters, streams), no NUL. */
static bool portable(const bl_json *name)
{
    if (!name || bl_json_kindof(name) != BL_JSON_STRING)
        return false;
    size_t len;
    const char *s = bl_json_get_string(name, &len);
    if (len == 0 || strlen(s) != len || strchr(s, '\\') || strchr(s, ':'))
        return false;
    const char *seg = s;
    for (;;) {
        const char *end = strchr(seg, '/');
        size_t n = end ? (size_t)(end - seg) : strlen(seg);
        if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return false;
        if (!end)
            return true;
        seg = end + 1;
    }
}

static bool sha256_hex(const bl_json *v)
{
    size_t len;
    const char *s = string_or_null(v) ? bl_json_get_string(v, &len) : NULL;
    if (!s || len != 64)
        return false;
    for (size_t i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* §7.6 step 3: the artifact list (default: the hash table's keys), unique
 * and naming exactly the hashed files. *artifacts is a new array of strings
 * in manifest order, *sorted the same names sorted (for lookups). */
static bl_status inventory(const bl_json *manifest, const bl_json **hashes, bl_json **artifacts,
                           const char ***sorted, bl_error *err)
{
    static const char mismatch[] = "record artifact inventory does not match its checksums";
    const bl_json *h = bl_json_get(manifest, "artifact_sha256");
    const bl_json *a = bl_json_get(manifest, "artifacts");
    if (h && bl_json_kindof(h) != BL_JSON_OBJECT)
        return bl_fail(err, BL_EVALUE, mismatch);
    bl_json *list = a ? bl_json_copy(a) : bl_json_array();
    if (!list)
        return nomem(err);
    const char **names = NULL;
    bl_status st = BL_OK;
    for (size_t i = 0; !a && h && i < bl_json_size(h) && st == BL_OK; i++) {
        size_t len;
        const char *k = bl_json_key_at(h, i, &len);
        st = bl_json_array_append(list, bl_json_stringn(k, len), err);
    }
    if (st == BL_OK && bl_json_kindof(list) != BL_JSON_ARRAY)
        st = bl_fail(err, BL_EVALUE, mismatch);
    const size_t n = st == BL_OK ? bl_json_size(list) : 0;
    if (st == BL_OK && n != (h ? bl_json_size(h) : 0))
        st = bl_fail(err, BL_EVALUE, mismatch);
    if (st == BL_OK && !(names = bl_mallocarray(n ? n : 1, sizeof *names)))
        st = nomem(err);
    for (size_t i = 0; i < n && st == BL_OK; i++) {
        const bl_json *name = bl_json_at(list, i);
        size_t len;
        names[i] = string_or_null(name) ? bl_json_get_string(name, &len) : NULL;
        if (!names[i] || strlen(names[i]) != len || !bl_json_get(h, names[i]))
            st = bl_fail(err, BL_EVALUE, mismatch);
    }
    if (st == BL_OK && n > 1)
        qsort(names, n, sizeof *names, cmp_path);
    /* n names, each hashed, for n hashes: equal sets once they are unique. */
    for (size_t i = 1; i < n && st == BL_OK; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            st = bl_fail(err, BL_EVALUE, mismatch);
    if (st != BL_OK) {
        bl_free(names);
        bl_json_destroy(list);
        return st;
    }
    *hashes = h;
    *artifacts = list;
    *sorted = names;
    return BL_OK;
}

/* ---- inspection ---------------------------------------------------------------- */

static bool reserved_name(const char *p)
{
    return strcmp(p, BL_RECORD_MANIFEST) == 0 || strcmp(p, BL_RECORD_DONE) == 0 ||
           strcmp(p, BL_RECORD_FAILED) == 0 || strcmp(p, BL_RECORD_RESERVED) == 0;
}

/* Whether the artifact is a regular file whose bytes hash to `expected`. */
static bl_status artifact_valid(const char *path, const bl_record_files *files, const char *rel,
                                const char *expected, bool *valid, bl_error *err)
{
    *valid = false;
    if (!bl_record_files_has(files, rel))
        return BL_OK;
    char *full = bl_record_path_join(path, rel);
    if (!full)
        return nomem(err);
    /* Only a regular file is read, checked on the open descriptor (a FIFO
     * put in its place after the walk cannot block inspection). An
     * unreadable artifact is an invalid one, not an inspection error. */
    int fd;
    uint64_t size;
    uint8_t digest[BL_SHA256_BYTES];
    if (bl_file_open(full, BL_FILE_NOFOLLOW, &fd, &size, NULL) == BL_OK) {
        if (bl_sha256_fd(fd, full, digest, NULL) == BL_OK) {
            char hex[65];
            bl_hex(digest, sizeof digest, hex);
            *valid = strcmp(hex, expected) == 0;
        }
        close(fd);
    }
    bl_free(full);
    return BL_OK;
}

/* bl_json_put (json.h), in this file's words when `v` is NULL. */
static void put(bl_status *st, bl_json *o, const char *key, bl_json *v, bl_error *err)
{
    if (*st == BL_OK && !v)
        *st = nomem(err);
    bl_json_put(st, o, key, v, err);
}

/* A record that failed before its manifest was written (§7.1: .RESERVED
 * and FAILED only) is still no record, but its FAILED marker says why: the
 * missing-manifest error keeps its kind and text and quotes the marker. */
static void explain_missing_manifest(int dirfd, const char *path, bl_error *err)
{
    struct stat sb;
    if (!err || fstatat(dirfd, BL_RECORD_FAILED, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    char *failed_path = bl_record_path_join(path, BL_RECORD_FAILED);
    bl_json *marker = NULL;
    bl_error why = {0};
    if (!failed_path)
        bl_fail(&why, BL_ENOMEM, "out of memory");
    else if (bl_json_read_file_as(failed_path, "FAILED marker", BL_FILE_NOFOLLOW, &marker,
                                  &why) == BL_OK &&
             bl_json_kindof(marker) != BL_JSON_OBJECT)
        bl_fail(&why, BL_EVALUE, "not a JSON object");
    const bool object = why.status == BL_OK;
    const char *type = object ? string_or_null(bl_json_get(marker, "error_type")) : NULL;
    const char *message = object ? string_or_null(bl_json_get(marker, "message")) : NULL;
    bl_error said = *err;
    if (!object)
        bl_fail(err, said.status,
                "%s; the record failed before its manifest was written (its FAILED marker "
                "cannot be read: %s)",
                said.msg, why.msg);
    else
        bl_fail(err, said.status,
                "%s; the record failed before its manifest was written: %s: %s", said.msg,
                type ? type : "unknown error", message ? message : "no message recorded");
    bl_json_destroy(marker);
    bl_free(failed_path);
}

/* §7.6 step 2: the manifest, a regular file no larger than a plan. */
static bl_status read_manifest(int dirfd, const char *path, const char *manifest_path,
                               bl_json **out, bl_error *err)
{
    char *text;
    size_t len;
    bl_status st = bl_file_read(manifest_path, BL_FILE_PLAN_MAX, "record manifest",
                                BL_FILE_NOFOLLOW, &text, &len, err);
    if (st == BL_ENOENT)
        explain_missing_manifest(dirfd, path, err);
    if (st != BL_OK)
        return st;
    st = bl_toml_parse(text, len, manifest_path, out, err);
    bl_free(text);
    return st;
}

bl_status bl_record_inspect_at(int dirfd, const char *path, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *manifest = NULL, *artifacts = NULL, *invalid = NULL, *unlisted = NULL, *map = NULL;
    const bl_json *hashes = NULL;
    const char **sorted = NULL;
    bl_record_files files = {0};
    char *manifest_path = NULL;
    struct stat sb;
    bl_status st;

    /* The manifest first: a directory without one is no record, and it is
     * refused before a possibly huge tree is walked. */
    if (fstatat(dirfd, BL_RECORD_MANIFEST, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode)) {
        st = bl_fail(err, BL_EVALUE, "record artifacts cannot be symlinks");
        goto done;
    }
    if (!(manifest_path = bl_record_path_join(path, BL_RECORD_MANIFEST))) {
        st = nomem(err);
        goto done;
    }
    if ((st = read_manifest(dirfd, path, manifest_path, &manifest, err)) != BL_OK ||
        (st = check_format(manifest, err)) != BL_OK ||
        (st = inventory(manifest, &hashes, &artifacts, &sorted, err)) != BL_OK)
        goto done;
    for (size_t i = 0; i < bl_json_size(artifacts); i++) {
        const bl_json *name = bl_json_at(artifacts, i);
        if (!portable(name)) {
            st = bl_fail(err, BL_EVALUE, "artifact paths must be portable relative paths");
            goto done;
        }
        if (!sha256_hex(bl_json_get(hashes, bl_json_get_string(name, NULL)))) {
            st = bl_fail(err, BL_EVALUE, "artifact checksum must be a SHA-256 hexadecimal value");
            goto done;
        }
    }
    /* No link anywhere inside: so every portable name resolves inside the
     * record, and the DONE and FAILED markers are contained too. */
    if ((st = bl_record_list_files(dirfd, &files, err)) != BL_OK)
        goto done;

    invalid = bl_json_array();
    unlisted = bl_json_array();
    if (!invalid || !unlisted) {
        st = nomem(err);
        goto done;
    }
    for (size_t i = 0; i < bl_json_size(artifacts) && st == BL_OK; i++) {
        const char *rel = bl_json_get_string(bl_json_at(artifacts, i), NULL);
        bool valid = true;
        st = artifact_valid(path, &files, rel,
                            bl_json_get_string(bl_json_get(hashes, rel), NULL), &valid, err);
        if (!valid)
            bl_json_push(&st, invalid, bl_json_string(rel), err);
    }
    for (size_t i = 0; i < files.n && st == BL_OK; i++) {
        const char *rel = files.paths[i];
        if (reserved_name(rel))
            continue;
        const bl_record_files listed = {(char **)sorted, bl_json_size(artifacts)};
        if (!bl_record_files_has(&listed, rel))
            bl_json_push(&st, unlisted, bl_json_string(rel), err);
    }
    if (st != BL_OK)
        goto done;

    const bool checksums_valid = bl_json_size(invalid) == 0 && bl_json_size(unlisted) == 0;
    const bool done_file = fstatat(dirfd, BL_RECORD_DONE, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
                           S_ISREG(sb.st_mode);
    const bool failed = fstatat(dirfd, BL_RECORD_FAILED, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    /* §7.5: FAILED wins; DONE with bad checksums is merely incomplete. */
    const char *status = failed                               ? "failed"
                         : done_file && checksums_valid ? "complete"
                                                              : "incomplete";
    map = bl_json_object();
    st = map ? BL_OK : nomem(err);
    put(&st, map, "checksums_valid", bl_json_bool(checksums_valid), err);
    put(&st, map, "complete", bl_json_bool(strcmp(status, "complete") == 0), err);
    put(&st, map, "invalid_artifacts", invalid, err);
    invalid = NULL;
    put(&st, map, "manifest", manifest, err);
    manifest = NULL;
    put(&st, map, "status", bl_json_string(status), err);
    put(&st, map, "unlisted_artifacts", unlisted, err);
    unlisted = NULL;
    if (st == BL_OK) {
        *out = map;
        map = NULL;
    }
done:
    bl_json_destroy(map);
    bl_json_destroy(unlisted);
    bl_json_destroy(invalid);
    bl_free(sorted);
    bl_json_destroy(artifacts);
    bl_json_destroy(manifest);
    bl_record_files_clear(&files);
    bl_free(manifest_path);
    return st;
}

bl_status bl_record_inspect(const char *path, bl_json **out, bl_error *err)
{
    *out = NULL;
    int fd = bl_record_open_dir(path);
    if (fd < 0)
        return bl_fail(err, BL_EVALUE, "a record must be a real directory");
    bl_status st = bl_record_inspect_at(fd, path, out, err);
    close(fd);
    return st;
}

/* ---- calibrations ---------------------------------------------------------------- */

bl_status bl_calibrations_read(const char *path, bl_calibration ***out, size_t *n,
                               bl_error *err)
{
    *out = NULL;
    *n = 0;
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
        return bl_fail(err, BL_EVALUE, "%s: calibration cannot be a symlink", path);
    if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return bl_calibrations_read_file(path, out, n, err);
    bl_json *map = NULL;
    bl_status st = bl_record_inspect(path, &map, err);
    if (st != BL_OK)
        return st;
    const bool complete = bl_json_get_bool(bl_json_get(map, "complete"));
    const bl_json *kind = bl_json_get(bl_json_get(map, "manifest"), "kind");
    /* A shard holds a part of a run, never its calibrations. */
    const bool shard = kind && bl_json_kindof(kind) == BL_JSON_STRING &&
                       strcmp(bl_json_get_string(kind, NULL), "shard") == 0;
    bl_json_destroy(map);
    if (shard)
        return bl_fail(err, BL_EVALUE, "%s: a shard record holds no calibrations; merge its "
                                       "shards (brainlesslab merge) and use the merged record",
                       path);
    if (!complete)
        return bl_fail(err, BL_EVALUE, "%s: calibration record is incomplete or has invalid "
                                       "checksums", path);
    char *file = bl_record_path_join(path, "calibration.json");
    if (!file)
        return nomem(err);
    st = bl_calibrations_read_file(file, out, n, err);
    bl_free(file);
    return st;
}

bl_status bl_record_artifact_read(const char *record, const char *rel, const char *sha256,
                                  size_t max, const char *kind, char **text, size_t *len,
                                  bl_error *err)
{
    *text = NULL;
    char *path = bl_record_path_join(record, rel);
    if (!path)
        return bl_fail(err, BL_ENOMEM, "out of memory for a path");
    char what[64], hex[2 * BL_SHA256_BYTES + 1];
    snprintf(what, sizeof what, "%s file", kind);
    bl_status st = bl_file_read(path, max, what, BL_FILE_NOFOLLOW, text, len, err);
    if (st == BL_OK)
        st = bl_sha256_hex(*text, *len, hex, err);
    if (st == BL_OK && (!sha256 || strcmp(hex, sha256) != 0))
        st = bl_fail(err, BL_EVALUE, "%s: %s artifact does not match its checksum", rel, kind);
    bl_free(path);
    if (st != BL_OK) {
        bl_free(*text);
        *text = NULL;
    }
    return st;
}
