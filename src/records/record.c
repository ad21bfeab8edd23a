/* Writing records (spec/platform.md §7.1–§7.5, §7.10).
 *
 * The order is what makes a record trustworthy: the directory is reserved
 * exclusively (with a token only this writer knows) before any expensive
 * work; every file is created exclusively, written whole and synced; the
 * manifest inventories what is actually on disk, the record is re-inspected
 * against it, and only then does DONE (or FAILED) appear and the token go.
 * A crash at any point leaves no DONE, or a DONE over a verified inventory;
 * an error leaves FAILED beside the partial files, which are evidence and
 * are never removed. All file operations go through a descriptor of the
 * record directory and refuse links, so nothing outside it is touched. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/task.h"
#include "brainlesslab/version.h"
#include "records/records_internal.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory while writing a record");
}

/* bl_json_put (json.h), in this writer's words when `v` is NULL. */
static void put(bl_status *st, bl_json *o, const char *key, bl_json *v, bl_error *err)
{
    if (*st == BL_OK && !v)
        *st = nomem(err);
    bl_json_put(st, o, key, v, err);
}

static bl_status random_bytes(void *buf, size_t n, bl_error *err)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return bl_fail(err, BL_EOS, "cannot read random bytes: %s", strerror(errno));
        }
        p += got;
        n -= (size_t)got;
    }
    return BL_OK;
}

/* An OSError-like status for errno, with the reference's exception kinds.
 * Running out of space or inodes reads the same wherever it happens
 * (creating a directory or a file, writing, syncing): "<path>: cannot
 * write: <reason>", the form docs/plans.md documents for a full disk. */
static bl_status os_fail(bl_error *err, int e, const char *path, const char *what)
{
    if (e == ENOSPC || e == EDQUOT)
        what = "cannot write";
    bl_status st = e == ENOENT ? BL_ENOENT : e == EEXIST ? BL_EEXIST : e == EISDIR ? BL_EISDIR
                                                                                 : BL_EOS;
    return bl_fail(err, st, "%s: %s%s%s", path, what ? what : "", what ? ": " : "", strerror(e));
}

/* ---- naming and reservation (§7.1) --------------------------------------------- */

bl_status bl_record_name(const char *root, const char *plan_id, char **out, bl_error *err)
{
    *out = NULL;
    unsigned char rnd[4];
    char hex[9], stamp[32];
    bl_status st = random_bytes(rnd, sizeof rnd, err);
    if (st != BL_OK)
        return st;
    bl_hex(rnd, sizeof rnd, hex);
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm) == 0)
        return bl_fail(err, BL_EOS, "cannot read the UTC time");
    bl_buf b;
    bl_buf_init(&b);
    /* Path(root) / name: no doubled separator, an empty root is the cwd. */
    size_t rl = strlen(root);
    if (rl > 0)
        bl_buf_printf(&b, "%s%s", root, root[rl - 1] == '/' ? "" : "/");
    bl_buf_printf(&b, "%s-%s-%s", plan_id, stamp, hex);
    if ((st = bl_buf_status(&b, err)) == BL_OK && !(*out = bl_buf_take(&b, NULL)))
        st = nomem(err);
    bl_buf_clear(&b);
    return st;
}

/* The length of dest without trailing slashes (a lone "/" stays). */
static size_t trimmed_length(const char *dest)
{
    size_t len = strlen(dest);
    while (len > 1 && dest[len - 1] == '/')
        len--;
    return len;
}

bl_status bl_dir_create_exclusive(const char *dest, size_t *created_from, bl_error *err)
{
    size_t len = trimmed_length(dest);
    if (len == 0)
        return bl_fail(err, BL_ENOENT, "'': cannot create directory: %s", strerror(ENOENT));
    char *path = bl_strndup(dest, len);
    size_t *created = bl_mallocarray(len + 1, sizeof *created);
    size_t ncreated = 0;
    bl_status st = BL_OK;
    if (!path || !created) {
        st = nomem(err);
        goto done;
    }
    for (size_t end = 1; end <= len && st == BL_OK; end++) {
        if (end < len && path[end] != '/')
            continue;
        if (path[end - 1] == '/')
            continue; /* "a//b" or the leading "/" */
        char saved = path[end];
        path[end] = 0;
        if (mkdir(path, 0777) == 0) {
            created[ncreated++] = end;
        } else {
            int e = errno;
            struct stat sb;
            if (end == len)
                st = e == EEXIST ? bl_fail(err, BL_EEXIST, "%s: %s", path, strerror(e))
                                 : os_fail(err, e, path, "cannot create directory");
            else if (e == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
                ; /* an existing parent (or a link to one): go deeper */
            else if (e == EEXIST || e == ENOTDIR)
                st = bl_fail(err, BL_EEXIST, "%s: exists and is not a directory", path);
            else
                st = os_fail(err, e, path, "cannot create directory");
        }
        path[end] = saved;
    }
    if (st != BL_OK)
        while (ncreated > 0) {
            path[created[--ncreated]] = 0;
            (void)rmdir(path);
        }
    else if (created_from)
        *created_from = created[0]; /* dest itself was created, so ncreated >= 1 */
done:
    bl_free(created);
    bl_free(path);
    return st;
}

void bl_dir_remove_created(const char *dest, size_t created_from)
{
    size_t len = trimmed_length(dest);
    char *path = bl_strndup(dest, len);
    if (!path)
        return;
    /* dest, then each parent while it is still at least the first
     * directory the creation made. */
    while (len >= created_from && len > 0) {
        path[len] = 0;
        if (rmdir(path) != 0)
            break;
        while (len > 0 && path[len - 1] != '/')
            len--;
        while (len > 1 && path[len - 1] == '/')
            len--;
    }
    bl_free(path);
}

/* Writes all of `data` to fd; a short write is an error with errno. */
static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

bl_status bl_file_write_new(const char *path, const void *data, size_t len, bl_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return errno == EEXIST ? bl_fail(err, BL_EEXIST, "%s: %s", path, strerror(EEXIST))
                               : os_fail(err, errno, path, NULL);
    bl_status st = BL_OK;
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0)
        st = os_fail(err, errno, path, "cannot write");
    if (close(fd) != 0 && st == BL_OK)
        st = os_fail(err, errno, path, "cannot write");
    if (st != BL_OK) {
        (void)unlink(path); /* nothing half-written may stay */
        return st;
    }
    /* The new directory entry must reach the disk too. */
    const char *slash = strrchr(path, '/');
    char *dir = slash ? bl_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : NULL;
    int dfd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    bl_free(dir);
    return BL_OK;
}

/* A file of the record being written: created exclusively under dir (one
 * directory level at most, never through a link), then appended to, then
 * synced and closed. The partial file of a failed write stays: a failed
 * record keeps whatever it got. `path` names the record in messages. */
typedef struct rec_out {
    int fd;
    char *full; /* <path>/<rel>, for messages */
} rec_out;

static bl_status out_open(int dirfd, const char *path, const char *rel, rec_out *o,
                          bl_error *err)
{
    o->fd = -1;
    o->full = bl_record_path_join(path, rel);
    if (!o->full)
        return nomem(err);
    const char *slash = strrchr(rel, '/');
    int parent = dirfd;
    if (slash) {
        char sub[256];
        size_t n = (size_t)(slash - rel);
        BL_ASSERT(n < sizeof sub);
        memcpy(sub, rel, n);
        sub[n] = 0;
        parent = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (parent < 0)
            return os_fail(err, errno, o->full, "cannot open the parent directory");
    }
    o->fd = openat(parent, slash ? slash + 1 : rel,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    const int e = errno;
    if (parent != dirfd)
        close(parent);
    return o->fd < 0 ? os_fail(err, e, o->full, NULL) : BL_OK;
}

static bl_status out_append(rec_out *o, const void *data, size_t len, bl_error *err)
{
    return write_all(o->fd, data, len) == 0 ? BL_OK : os_fail(err, errno, o->full, "cannot write");
}

/* Syncs (DONE must never reach the disk before the bytes it vouches for)
 * and closes the file when `st` is BL_OK, only closes it otherwise; frees
 * the name. Returns st, or the failure of either. */
static bl_status out_close(rec_out *o, bl_status st, bl_error *err)
{
    if (o->fd >= 0) {
        if (st == BL_OK && fsync(o->fd) != 0)
            st = os_fail(err, errno, o->full, "cannot write");
        if (close(o->fd) != 0 && st == BL_OK)
            st = os_fail(err, errno, o->full, "cannot write");
    }
    bl_free(o->full);
    *o = (rec_out){.fd = -1};
    return st;
}

/* A whole file at once. */
static bl_status write_file(int dirfd, const char *path, const char *rel, const void *data,
                            size_t len, bl_error *err)
{
    rec_out o;
    bl_status st = out_open(dirfd, path, rel, &o, err);
    if (st == BL_OK)
        st = out_append(&o, data, len, err);
    return out_close(&o, st, err);
}

static bl_status sync_dir(int fd, const char *path, bl_error *err)
{
    return fsync(fd) == 0 ? BL_OK : os_fail(err, errno, path, "cannot sync");
}

/* The record directory and its subdirectories, so that their entries are
 * on disk before the manifest (and so DONE) can vouch for them. */
static bl_status sync_tree(int dirfd, const char *path, bl_error *err)
{
    static const char *const subdirs[] = {"summary", "environment", "data", "replays"};
    bl_status st = BL_OK;
    for (size_t i = 0; i < sizeof subdirs / sizeof *subdirs && st == BL_OK; i++) {
        int fd = openat(dirfd, subdirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue; /* replays/ exists only with replays */
        st = sync_dir(fd, path, err);
        close(fd);
    }
    return st == BL_OK ? sync_dir(dirfd, path, err) : st;
}

bl_status bl_record_reserve(const char *dest, bl_reservation *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    unsigned char rnd[32];
    bl_status st = random_bytes(rnd, sizeof rnd, err);
    if (st != BL_OK)
        return st;
    bl_hex(rnd, sizeof rnd, out->token);
    if (!(out->path = bl_strdup(dest)))
        return nomem(err);
    if ((st = bl_dir_create_exclusive(dest, NULL, err)) != BL_OK)
        goto fail;
    int fd = bl_record_open_dir(dest);
    if (fd < 0) {
        st = os_fail(err, errno, dest, NULL);
    } else {
        st = write_file(fd, dest, BL_RECORD_RESERVED, out->token, 64, err);
        if (st != BL_OK)
            (void)unlinkat(fd, BL_RECORD_RESERVED, 0);
        close(fd);
    }
    if (st != BL_OK) {
        /* Ours a moment ago and empty again: an unusable reservation is
         * not worth keeping (the parents it created stay). */
        (void)rmdir(dest);
        goto fail;
    }
    return BL_OK;
fail:
    bl_reservation_clear(out);
    return st;
}

void bl_reservation_clear(bl_reservation *r)
{
    bl_free(r->path);
    memset(r, 0, sizeof *r);
}

/* Whether the record directory open as dirfd still holds our token. */
static bool owns(int dirfd, const bl_reservation *r)
{
    int fd = openat(dirfd, BL_RECORD_RESERVED, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat sb;
    char got[66];
    ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, got, sizeof got) : -1;
    close(fd);
    return n == 64 && memcmp(got, r->token, 64) == 0;
}

/* message with every occurrence of `path` replaced by "<record>": a FAILED
 * marker must not leak where the record lived on the machine. */
static char *redact(const char *message, const char *path)
{
    bl_buf b;
    bl_buf_init(&b);
    size_t pl = strlen(path);
    for (const char *p = message; *p;) {
        const char *hit = pl ? strstr(p, path) : NULL;
        if (!hit) {
            bl_buf_puts(&b, p);
            break;
        }
        bl_buf_append(&b, p, (size_t)(hit - p));
        bl_buf_puts(&b, "<record>");
        p = hit + pl;
    }
    char *s = bl_buf_take(&b, NULL);
    bl_buf_clear(&b);
    return s;
}

bl_status bl_record_fail(const bl_reservation *r, const bl_error *cause, bl_error *err)
{
    int fd = r->path ? bl_record_open_dir(r->path) : -1;
    if (fd < 0 || !owns(fd, r)) {
        if (fd >= 0)
            close(fd);
        return bl_fail(err, BL_ERUNTIME, "record reservation is no longer owned");
    }
    bl_status st = BL_OK;
    struct stat sb;
    /* FAILED is written once: the first cause is the one that counts. */
    if (fstatat(fd, BL_RECORD_FAILED, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        char *message = redact(cause ? cause->msg : "", r->path);
        bl_json *doc = bl_json_object();
        bl_buf text;
        bl_buf_init(&text);
        st = message && doc ? BL_OK : nomem(err);
        put(&st, doc, "error_type",
            bl_json_string(bl_status_kind(cause ? cause->status : BL_ERUNTIME)), err);
        put(&st, doc, "message", message ? bl_json_string(message) : NULL, err);
        put(&st, doc, "status", bl_json_string("failed"), err);
        if (st == BL_OK)
            st = bl_record_json_text(doc, &text, err);
        if (st == BL_OK)
            st = write_file(fd, r->path, BL_RECORD_FAILED, text.data, text.len, err);
        if (st == BL_OK)
            st = sync_dir(fd, r->path, err);
        bl_buf_clear(&text);
        bl_json_destroy(doc);
        bl_free(message);
    }
    close(fd);
    return st;
}

/* ---- metadata (§4.13) ------------------------------------------------------------ */

static const bl_json *request_of(const bl_record_input *in)
{
    return bl_json_get(bl_resolved_plain(in->resolved), "request");
}

bl_status bl_record_metadata(const bl_record_input *in, bl_json **out, bl_error *err)
{
    *out = NULL;
    const bl_run_result *run = in->evaluation->run;
    const bl_json *request = request_of(in);
    const bl_json *numerics = bl_json_get(request, "numerics");
    char arch[65], fingerprint[65] = "";
    bl_architecture(arch);
    bl_json *m = bl_json_object(), *exec = NULL, *sources = NULL;
    bl_status st = m ? bl_runtime_fingerprint(fingerprint, err) : nomem(err);
    /* The reference's runtime description, with this engine in place of
     * its Quadrants runtime (engine_version for quadrants_version). */
    put(&st, m, "engine_version", bl_json_string(bl_version()), err);
    put(&st, m, "requested_backend", bl_json_string(bl_backend_name(in->execution->backend)),
        err);
    put(&st, m, "actual_arch", bl_json_string(arch), err);
    put(&st, m, "dtype", bl_json_copy(bl_json_get(numerics, "dtype")), err);
    put(&st, m, "fast_math", bl_json_bool(false), err);
    put(&st, m, "cpu_threads", bl_json_int(run->cpu_threads), err);
    put(&st, m, "cache_enabled", bl_json_bool(in->execution->cache), err);
    put(&st, m, "runtime_fingerprint", bl_json_string(fingerprint), err);
    put(&st, m, "rng_scheme", bl_json_copy(bl_json_get(numerics, "rng")), err);
    if (st == BL_OK)
        st = bl_world_source_hashes(&sources, err);
    put(&st, m, "source_hashes", sources, err);
    if (st == BL_OK)
        st = bl_execution_json(in->execution, &exec, err);
    put(&st, m, "execution", exec, err);
    bl_json *caps = bl_json_array();
    put(&st, m, "batch_capacities", caps, err);
    for (size_t i = 0; i < run->ncohorts; i++)
        bl_json_push(&st, caps, bl_json_int(run->batch_capacities[i]), err);
    put(&st, m, "reset", bl_json_string("full"), err);
    put(&st, m, "evidence", bl_json_copy(bl_json_get(request, "evidence")), err);
    put(&st, m, "diagnostic", bl_json_copy(bl_json_get(request, "diagnostic")), err);
    /* This engine's own measurements beside the reference's keys. */
    const struct {
        const char *key;
        int64_t value;
    } ints[] = {
        {"recording_estimate_bytes", run->recording_estimate_bytes},
        {"requested_batch_size", run->requested_batch_size},
        {"allocation_budget", run->allocation_budget},
        {"peak_rss_bytes", run->peak_rss_bytes},
        {"world_ticks", run->world_ticks},
        {"neural_frames", run->neural_frames},
        {"reservoir_frames", run->reservoir_frames},
    };
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        put(&st, m, ints[i].key, bl_json_int(ints[i].value), err);
    if (in->distribution)
        put(&st, m, "distribution", bl_json_copy(in->distribution), err);
    return bl_json_hand_over(st, m, out);
}

/* ---- the files of a record (§7.2, §7.3) ------------------------------------------------ */

/* The record writer. Its status is sticky: once `st` holds an error, every
 * step below (a file, a directory, a member of a document) does nothing,
 * so the write is a flat list of steps checked once at the end. */
typedef struct rec {
    const bl_record_input *in;
    int dirfd;
    const char *path;
    bl_json *metadata;
    bl_status st;
    bl_error *err;
} rec;

/* A record file rendered from a JSON value (record JSON or CSV). */
typedef bl_status (*render_fn)(const bl_json *v, bl_buf *out, bl_error *err);

/* Every file of the record is asked for first: the caller's before_file
 * hook may stop the write before the file exists. */
static bl_status ask(rec *w, const char *rel)
{
    return w->in->before_file ? w->in->before_file(w->in->hook_ctx, rel, w->err) : BL_OK;
}

static void rec_file(rec *w, const char *rel, const void *data, size_t len)
{
    if (w->st == BL_OK && (w->st = ask(w, rel)) == BL_OK)
        w->st = write_file(w->dirfd, w->path, rel, data, len, w->err);
}

/* DONE appears with its text or not at all: the text is written and synced
 * under a temporary name, linked as DONE (link never replaces a file) and
 * the temporary name removed. A crash in between leaves no DONE, or a stray
 * temporary file that keeps the record from inspecting as complete; never
 * an empty DONE (a kill during the create of DONE itself left one). */
static void write_done(rec *w)
{
#define DONE_PARTIAL ".DONE.partial"
    static const char partial[] = DONE_PARTIAL;
    if (w->st != BL_OK)
        return;
    bl_status st = ask(w, BL_RECORD_DONE);
    if (st == BL_OK)
        st = write_file(w->dirfd, w->path, partial, "complete\n", 9, w->err);
    if (st == BL_OK && linkat(w->dirfd, partial, w->dirfd, BL_RECORD_DONE, 0) != 0) {
        char *full = bl_record_path_join(w->path, BL_RECORD_DONE);
        st = full ? os_fail(w->err, errno, full, NULL) : nomem(w->err);
        bl_free(full);
    }
    if (st == BL_OK && unlinkat(w->dirfd, partial, 0) != 0)
        st = os_fail(w->err, errno, w->path, "cannot remove " DONE_PARTIAL);
    w->st = st;
}

static void rec_buf(rec *w, const char *rel, const bl_buf *b)
{
    if (w->st == BL_OK)
        w->st = bl_buf_status(b, w->err);
    rec_file(w, rel, b->data, b->len);
}

static void rec_rendered(rec *w, const char *rel, const bl_json *v, render_fn render)
{
    if (w->st != BL_OK)
        return;
    bl_buf b;
    bl_buf_init(&b);
    w->st = render(v, &b, w->err);
    rec_buf(w, rel, &b);
    bl_buf_clear(&b);
}

static void file_json(rec *w, const char *rel, const bl_json *v)
{
    rec_rendered(w, rel, v, bl_record_json_text);
}

static void file_csv(rec *w, const char *rel, const bl_json *rows)
{
    rec_rendered(w, rel, rows, bl_csv_text);
}

static void make_dir(rec *w, const char *rel)
{
    if (w->st != BL_OK || mkdirat(w->dirfd, rel, 0777) == 0)
        return;
    int e = errno;
    char *full = bl_record_path_join(w->path, rel);
    w->st = os_fail(w->err, e, full ? full : rel, "cannot create directory");
    bl_free(full);
}

static void rec_sync(rec *w)
{
    if (w->st == BL_OK)
        w->st = sync_dir(w->dirfd, w->path, w->err);
}

/* request.toml (write_plan) and resolved.toml (the resolved plan without
 * nulls, which the TOML writer leaves out: contract_hash, [request],
 * [[targets]]). */
static void plan_files(rec *w)
{
    if (w->st != BL_OK)
        return;
    bl_buf b;
    bl_buf_init(&b);
    w->st = bl_plan_write(w->in->plan, &b, w->err);
    rec_buf(w, "request.toml", &b);
    bl_buf_reset(&b);
    const bl_json *resolved = bl_resolved_plain(w->in->resolved);
    if (w->st == BL_OK && (w->st = bl_record_check_finite(resolved, w->err)) == BL_OK)
        w->st = bl_toml_write(resolved, &b, w->err);
    rec_buf(w, "resolved.toml", &b);
    bl_buf_clear(&b);
}

/* One row of trials.csv: the trial result with the outcome flattened and
 * the seeds left out. */
static bl_json *trial_row(rec *w, const bl_trial_result *t)
{
    bl_json *full = NULL, *row = bl_json_object();
    if (w->st == BL_OK)
        w->st = row ? bl_trial_result_json(t, &full, w->err) : nomem(w->err);
    for (size_t k = 0; w->st == BL_OK && k < bl_json_size(full); k++) {
        const char *key = bl_json_key_at(full, k, NULL);
        const bl_json *v = bl_json_value_at(full, k);
        if (strcmp(key, "seeds") == 0)
            continue;
        if (strcmp(key, "outcome") != 0) {
            put(&w->st, row, key, bl_json_copy(v), w->err);
            continue;
        }
        for (size_t j = 0; j < bl_json_size(v); j++)
            put(&w->st, row, bl_json_key_at(v, j, NULL), bl_json_copy(bl_json_value_at(v, j)),
                w->err);
    }
    bl_json_destroy(full);
    return row;
}

/* One row of seeds.csv: trial k's seed of one stream. */
static bl_json *seed_row(rec *w, const bl_trial_result *t, size_t k)
{
    bl_json *s = bl_json_object();
    if (w->st == BL_OK && !s)
        w->st = nomem(w->err);
    put(&w->st, s, "target_id", bl_json_string(t->target_id), w->err);
    put(&w->st, s, "block_id", bl_json_int(t->block), w->err);
    put(&w->st, s, "trial_id", bl_json_int(t->trial), w->err);
    put(&w->st, s, "stream", bl_json_string(t->seeds[k].stream), w->err);
    put(&w->st, s, "seed", bl_json_string(t->seeds[k].hex), w->err);
    put(&w->st, s, "world_seed", bl_json_string(t->world_seed), w->err);
    put(&w->st, s, "wiring_id", bl_json_string(t->wiring_id), w->err);
    return s;
}

/* trials.csv, seeds.csv and data/probe_events.csv are written as they are
 * made, a chunk at a time, so that the writer never holds a whole file's
 * text (about 0.5 to 1 kB per trial; at 10^8 trials, tens of gigabytes):
 * each row goes into its file's buffer, and the buffer into the file
 * whenever it passes this size; at most two files are open at once, so
 * their buffers stay under 1 MiB together. */
enum { CSV_CHUNK = 256 * 1024 };

typedef struct csv_file {
    rec_out out;
    bl_buf text;
    bl_csv_stream csv;
} csv_file;

static void csv_open(rec *w, const char *rel, csv_file *f)
{
    f->out = (rec_out){.fd = -1};
    bl_buf_init(&f->text);
    bl_csv_stream_init(&f->csv, &f->text);
    if (w->st == BL_OK && (w->st = ask(w, rel)) == BL_OK)
        w->st = out_open(w->dirfd, w->path, rel, &f->out, w->err);
}

/* The buffer into the file once it holds `least` bytes. */
static void csv_flush(rec *w, csv_file *f, size_t least)
{
    if (w->st != BL_OK || f->text.len < least || f->text.len == 0)
        return;
    w->st = bl_buf_status(&f->text, w->err);
    if (w->st == BL_OK)
        w->st = out_append(&f->out, f->text.data, f->text.len, w->err);
    bl_buf_reset(&f->text);
}

static void csv_row(rec *w, csv_file *f, bl_json *row)
{
    if (w->st == BL_OK)
        w->st = bl_csv_stream_row(&f->csv, row, w->err);
    bl_json_destroy(row);
    csv_flush(w, f, CSV_CHUNK);
}

/* The rest of the file, synced; or, after a failure, only closed. */
static void csv_close(rec *w, csv_file *f)
{
    if (w->st == BL_OK)
        w->st = bl_csv_stream_finish(&f->csv, w->err);
    csv_flush(w, f, 0);
    w->st = out_close(&f->out, w->st, w->err);
    bl_csv_stream_clear(&f->csv);
    bl_buf_clear(&f->text);
}

/* trials.csv: TrialResult with the outcome flattened and the seeds left
 * out; seeds.csv: one row per (trial, stream). Every row has its file's
 * keys, so the files are written row by row (bl_csv_stream). */
static void trial_files(rec *w)
{
    if (w->st != BL_OK)
        return;
    const bl_run_result *run = w->in->evaluation->run;
    csv_file trials, seeds;
    csv_open(w, "trials.csv", &trials);
    csv_open(w, "seeds.csv", &seeds);
    for (size_t i = 0; i < run->ntrials && w->st == BL_OK; i++) {
        const bl_trial_result *t = &run->trials[i];
        csv_row(w, &trials, trial_row(w, t));
        for (size_t k = 0; k < t->nseeds && w->st == BL_OK; k++)
            csv_row(w, &seeds, seed_row(w, t, k));
    }
    csv_close(w, &trials);
    csv_close(w, &seeds);
}

/* Appends json_of(i) for i < n to a new array set under `key`. */
#define PUT_ARRAY(w, obj, key, n, json_of)                                      \
    do {                                                                        \
        bl_json *arr_ = bl_json_array();                                        \
        put(&(w)->st, obj, key, arr_, (w)->err);                                \
        for (size_t i_ = 0; (w)->st == BL_OK && i_ < (n); i_++) {               \
            bl_json *item_ = NULL;                                              \
            (w)->st = json_of;                                                  \
            bl_json_push(&(w)->st, arr_, item_, (w)->err);                      \
        }                                                                       \
    } while (0)

/* calibration.json (only with calibrations) and summary/summary.json. */
static void summary_files(rec *w)
{
    if (w->st != BL_OK)
        return;
    const bl_evaluation *e = w->in->evaluation;
    if (e->ncalibrations > 0) {
        bl_json *doc = NULL;
        w->st = bl_calibrations_document((const bl_calibration *const *)e->calibrations,
                                         e->ncalibrations, &doc, w->err);
        file_json(w, "calibration.json", doc);
        bl_json_destroy(doc);
        if (w->st != BL_OK)
            return;
    }
    bl_json *doc = bl_json_object(), *timings = bl_json_object();
    w->st = doc ? BL_OK : nomem(w->err);
    put(&w->st, doc, "timings", timings, w->err);
    PUT_ARRAY(w, doc, "summaries", e->ntargets,
              bl_target_summary_json(&e->summaries[i_], &item_, w->err));
    PUT_ARRAY(w, doc, "contrasts", e->ncontrasts,
              bl_contrast_json(&e->contrasts[i_], &item_, w->err));
    put(&w->st, doc, "metadata", bl_json_copy(w->metadata), w->err);
    /* The reference's three timings, from what this runner measures. */
    const bl_run_result *run = e->run;
    put(&w->st, timings, "resolve_and_runtime_seconds", bl_json_real(run->seconds_preflight),
        w->err);
    put(&w->st, timings, "construction_compile_run_seconds", bl_json_real(run->seconds_execute),
        w->err);
    put(&w->st, timings, "total_seconds",
        bl_json_real(run->seconds_preflight + run->seconds_execute), w->err);
    make_dir(w, "summary");
    file_json(w, "summary/summary.json", doc);
    bl_json_destroy(doc);
}

/* environment/: environment.json, source.json, package-source.zip and
 * build.lock (this program's lock-file equivalent; kept as its own file,
 * as the reference keeps uv.lock beside the archive). The receipt's bytes
 * were computed at build time with the bundle's (provenance.h); that they
 * vouch for the archive actually written is checked where the manifest
 * hashes it (write_manifest). */
static void environment_files(rec *w)
{
    if (w->st != BL_OK)
        return;
    bl_json *env = NULL;
    bl_buf lock;
    bl_buf_init(&lock);
    make_dir(w, "environment");
    if (w->st == BL_OK)
        w->st = bl_environment_json(&env, w->err);
    put(&w->st, env, "execution", bl_json_copy(w->metadata), w->err);
    file_json(w, "environment/environment.json", env);
    size_t len = 0;
    const void *receipt = bl_source_receipt_text(&len);
    rec_file(w, BL_RECORD_SOURCE_RECEIPT, receipt, len);
    const void *zip = bl_source_bundle(&len);
    rec_file(w, BL_RECORD_SOURCE_ARCHIVE, zip, len);
    if (w->st == BL_OK)
        w->st = bl_build_lock(&lock, w->err);
    rec_buf(w, "environment/build.lock", &lock);
    bl_buf_clear(&lock);
    bl_json_destroy(env);
}

/* The probe events of data/: the events CSV with a feature_array column
 * naming each event's member of the features archive, and that archive.
 * Each event is made, written a chunk at a time and dropped in turn; only
 * pointers to the features (the run's captures) are kept for the archive. */
static void probe_event_files(rec *w, size_t nevents)
{
    if (w->st != BL_OK)
        return;
    const bl_record_input *in = w->in;
    char (*names)[32] = bl_mallocarray(nevents, sizeof *names);
    const char **name_ptrs = bl_mallocarray(nevents, sizeof *name_ptrs);
    const double **features = bl_mallocarray(nevents, sizeof *features);
    size_t *lens = bl_mallocarray(nevents, sizeof *lens);
    bl_buf npz;
    bl_buf_init(&npz);
    w->st = names && name_ptrs && features && lens ? BL_OK : nomem(w->err);
    csv_file events;
    csv_open(w, "data/probe_events.csv", &events);
    for (size_t i = 0; i < nevents && w->st == BL_OK; i++) {
        snprintf(names[i], sizeof names[i], "event_%08zu", i);
        name_ptrs[i] = names[i];
        bl_json *row = NULL;
        w->st = in->probe_event(in->probe_ctx, i, &row, &features[i], &lens[i], w->err);
        if (w->st == BL_OK && bl_json_kindof(row) != BL_JSON_OBJECT)
            w->st = bl_fail(w->err, BL_ETYPE, "probe events must be objects");
        put(&w->st, row, "feature_array", bl_json_string(names[i]), w->err);
        csv_row(w, &events, row);
    }
    csv_close(w, &events);
    /* The same rule as every number of a record: finite or absent. */
    for (size_t i = 0; i < nevents && w->st == BL_OK; i++)
        for (size_t k = 0; k < lens[i] && w->st == BL_OK; k++)
            if (features[i][k] - features[i][k] != 0)
                w->st = bl_fail(w->err, BL_EVALUE,
                                "records require finite numbers or explicit missing values");
    if (w->st == BL_OK)
        w->st = bl_npz_build(name_ptrs, features, lens, nevents, &npz, w->err);
    rec_buf(w, "data/probe_features.npz", &npz);
    bl_buf_clear(&npz);
    bl_free(lens);
    bl_free(features);
    bl_free(name_ptrs);
    bl_free(names);
}

/* data/: always created (empty for summary recording); the probe events
 * and probe trials when the run recorded them. */
static void data_files(rec *w)
{
    const bl_record_input *in = w->in;
    make_dir(w, "data");
    if (in->probe_nevents > 0)
        probe_event_files(w, in->probe_nevents);
    if (in->probe_trials && bl_json_size(in->probe_trials) > 0)
        file_csv(w, "data/probe_trials.csv", in->probe_trials);
}

static int cmp_member(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* replays/trial_%08d.json, numbered by the byte order of the trial keys
 * (so "baseline/10/0" comes before "baseline/2/0"). */
static void replay_files(rec *w)
{
    const bl_json *replays = w->in->replays;
    size_t n = replays ? bl_json_size(replays) : 0;
    if (w->st != BL_OK || n == 0)
        return;
    const char **keys = bl_mallocarray(n, sizeof *keys);
    if (!keys) {
        w->st = nomem(w->err);
        return;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = bl_json_key_at(replays, i, NULL);
    qsort(keys, n, sizeof *keys, cmp_member);
    make_dir(w, "replays");
    for (size_t i = 0; i < n; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "replays/trial_%08zu.json", i);
        file_json(w, rel, bl_json_get(replays, keys[i]));
    }
    bl_free(keys);
}

/* ---- manifest and completion (§7.4, §7.5) ---------------------------------------------- */

/* Trial status → count, keys sorted. */
static bl_status status_counts(const bl_run_result *run, bl_json **out, size_t *completed,
                               bl_error *err)
{
    static const bl_trial_status order[] = {BL_TRIAL_COMPLETED, BL_TRIAL_FAILED,
                                            BL_TRIAL_INCOMPLETE};
    *completed = 0;
    const char *names[3];
    size_t counts[3] = {0};
    for (size_t k = 0; k < 3; k++)
        names[k] = bl_trial_status_name(order[k]);
    for (size_t i = 0; i < run->ntrials; i++)
        for (size_t k = 0; k < 3; k++)
            counts[k] += run->trials[i].status == order[k];
    *completed = counts[0];
    /* "completed" < "failed" < "incomplete": already in byte order. */
    bl_json *o = bl_json_object();
    bl_status st = o ? BL_OK : nomem(err);
    for (size_t k = 0; k < 3; k++)
        if (counts[k] > 0)
            put(&st, o, names[k], bl_json_int((int64_t)counts[k]), err);
    return bl_json_hand_over(st, o, out);
}

/* ISO 8601 UTC with "+00:00", microseconds unless zero (Python isoformat). */
static void created_utc(char out[40])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    long us = ts.tv_nsec / 1000;
    if (us)
        n += (size_t)snprintf(out + n, 40 - n, ".%06ld", us);
    snprintf(out + n, 40 - n, "+00:00");
}

static const char *basename_of(const char *path, char *buf, size_t size)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/')
        start--;
    snprintf(buf, size, "%.*s", (int)(len - start), path + start);
    return buf;
}

/* The manifest; a shard record's (`shard` its description) has kind
 * "shard" and the description as its table "shard". */
static void write_manifest(rec *w, const bl_json *counts, const bl_json *shard)
{
    if (w->st != BL_OK)
        return;
    const bl_json *request = request_of(w->in);
    bl_record_files files = {0};
    bl_json *m = bl_json_object(), *artifacts = bl_json_array(), *hashes = bl_json_object();
    bl_buf text;
    bl_buf_init(&text);
    char id[512], created[40];
    created_utc(created);
    w->st = m && artifacts && hashes ? BL_OK : nomem(w->err);
    put(&w->st, m, "format", bl_json_string(BL_RECORD_FORMAT), w->err);
    put(&w->st, m, "format_version", bl_json_int(BL_RECORD_FORMAT_VERSION), w->err);
    put(&w->st, m, "id", bl_json_string(basename_of(w->path, id, sizeof id)), w->err);
    put(&w->st, m, "kind",
        shard ? bl_json_string("shard") : bl_json_copy(bl_json_get(request, "operation")),
        w->err);
    put(&w->st, m, "created_utc", bl_json_string(created), w->err);
    put(&w->st, m, "package_version", bl_json_string(bl_version()), w->err);
    put(&w->st, m, "contract_hash", bl_json_string(bl_resolved_contract_hash(w->in->resolved)),
        w->err);
    put(&w->st, m, "evidence", bl_json_copy(bl_json_get(request, "evidence")), w->err);
    put(&w->st, m, "completion_marker", bl_json_string(BL_RECORD_DONE), w->err);
    /* What is on disk, not what this writer meant to write. */
    if (w->st == BL_OK)
        w->st = bl_record_list_files(w->dirfd, &files, w->err);
    for (size_t i = 0; i < files.n && w->st == BL_OK; i++) {
        if (strcmp(files.paths[i], BL_RECORD_RESERVED) == 0)
            continue;
        uint8_t digest[BL_SHA256_BYTES];
        char hex[65];
        char *full = bl_record_path_join(w->path, files.paths[i]);
        w->st = full ? bl_sha256_file(full, digest, w->err) : nomem(w->err);
        bl_free(full);
        if (w->st != BL_OK)
            break;
        bl_hex(digest, sizeof digest, hex);
        /* The archive on disk must be the one the build-time receipt
         * (source.json) names: a binary altered after its build, or a
         * write that went wrong, stops here. This hash is computed anyway,
         * so the check costs nothing. */
        if (strcmp(files.paths[i], BL_RECORD_SOURCE_ARCHIVE) == 0 &&
            strcmp(hex, bl_source_bundle_sha256()) != 0) {
            w->st = bl_fail(w->err, BL_ERUNTIME,
                            "the embedded source bundle does not match its SHA-256 (%s, "
                            "expected %s)",
                            hex, bl_source_bundle_sha256());
            break;
        }
        bl_json_push(&w->st, artifacts, bl_json_string(files.paths[i]), w->err);
        put(&w->st, hashes, files.paths[i], bl_json_string(hex), w->err);
    }
    put(&w->st, m, "artifacts", artifacts, w->err);
    put(&w->st, m, "trial_status_counts", bl_json_copy(counts), w->err);
    put(&w->st, m, "artifact_sha256", hashes, w->err);
    if (shard)
        put(&w->st, m, "shard", bl_json_copy(shard), w->err);
    if (w->st == BL_OK)
        w->st = bl_toml_write(m, &text, w->err);
    if (w->st == BL_OK)
        w->st = sync_tree(w->dirfd, w->path, w->err);
    rec_buf(w, BL_RECORD_MANIFEST, &text);
    bl_buf_clear(&text);
    bl_json_destroy(m);
    bl_record_files_clear(&files);
}

/* The reservation must be this writer's, and still empty. */
static bl_status check_reservation(const bl_reservation *r, int *dirfd, bl_error *err)
{
    *dirfd = r->path ? bl_record_open_dir(r->path) : -1;
    if (*dirfd < 0 || !owns(*dirfd, r))
        return bl_fail(err, BL_EVALUE, "invalid record reservation");
    int fd = openat(*dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return os_fail(err, errno, r->path, "cannot list");
    }
    bool empty = true;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, BL_RECORD_RESERVED) != 0)
            empty = false;
    closedir(d);
    if (!empty)
        return bl_fail(err, BL_EEXIST, "reserved record is not empty");
    return BL_OK;
}

/* FAILED, when the record is whole but not every trial completed. */
static void failed_file(rec *w, const bl_json *counts)
{
    if (w->st != BL_OK)
        return;
    bl_json *failed = bl_json_object();
    w->st = failed ? BL_OK : nomem(w->err);
    put(&w->st, failed, "reason",
        bl_json_string("one or more trials failed or remained incomplete"), w->err);
    put(&w->st, failed, "status", bl_json_string("failed"), w->err);
    put(&w->st, failed, "trial_status_counts", bl_json_copy(counts), w->err);
    file_json(w, BL_RECORD_FAILED, failed);
    bl_json_destroy(failed);
}

bl_status bl_record_write(const bl_record_input *in, const bl_reservation *r,
                          const char **status, bl_error *err)
{
    *status = NULL;
    bl_error local;
    bl_error *e = err ? err : &local;
    rec w = {.in = in, .dirfd = -1, .path = r->path, .err = e};
    bl_json *counts = NULL, *inspection = NULL;
    size_t completed = 0;
    w.st = check_reservation(r, &w.dirfd, e);
    if (w.st == BL_OK)
        w.st = bl_record_metadata(in, &w.metadata, e);
    if (w.st == BL_OK)
        w.st = status_counts(in->evaluation->run, &counts, &completed, e);
    plan_files(&w);
    trial_files(&w);
    summary_files(&w);
    environment_files(&w);
    data_files(&w);
    replay_files(&w);
    write_manifest(&w, counts, NULL);
    if (w.st == BL_OK)
        w.st = bl_record_inspect_at(w.dirfd, w.path, &inspection, e);
    if (w.st == BL_OK && !bl_json_get_bool(bl_json_get(inspection, "checksums_valid")))
        w.st = bl_fail(e, BL_EVALUE, "new record inventory failed checksum verification");
    const bool all_completed = completed == in->evaluation->run->ntrials;
    if (all_completed)
        write_done(&w);
    else
        failed_file(&w, counts);
    rec_sync(&w);
    /* The token goes last: until here a crash leaves a reservation. */
    if (w.st == BL_OK && unlinkat(w.dirfd, BL_RECORD_RESERVED, 0) != 0)
        w.st = os_fail(e, errno, w.path, "cannot remove .RESERVED");
    rec_sync(&w);
    if (w.st == BL_OK)
        *status = all_completed ? "complete" : "failed";
    else
        (void)bl_record_fail(r, e, NULL);
    if (w.dirfd >= 0)
        close(w.dirfd);
    bl_json_destroy(inspection);
    bl_json_destroy(counts);
    bl_json_destroy(w.metadata);
    return w.st;
}

/* ---- shard records (docs/records.md "Shard records") ------------------------------- */

/* The part's jobs as [first, end) ranges of consecutive indices. */
static bl_json *job_ranges(const bl_run_result *part)
{
    bl_json *a = bl_json_array();
    bl_status st = a ? BL_OK : BL_ENOMEM;
    for (size_t k = 0; k < part->ntrials && st == BL_OK;) {
        const size_t first = part->jobs ? part->jobs[k] : k;
        size_t end = first + 1;
        for (k++; k < part->ntrials && (part->jobs ? part->jobs[k] : k) == end; k++)
            end++;
        bl_json *r = bl_json_array();
        bl_json_push(&st, r, bl_json_int((int64_t)first), NULL);
        bl_json_push(&st, r, bl_json_int((int64_t)end), NULL);
        bl_json_push(&st, a, r, NULL);
    }
    if (st != BL_OK) {
        bl_json_destroy(a);
        return NULL;
    }
    return a;
}

bl_status bl_shard_description(const bl_shard_input *in, bl_json **out, bl_error *err)
{
    *out = NULL;
    char fingerprint[65] = "";
    bl_json *d = bl_json_object(), *ids = bl_json_array(), *exec = NULL;
    bl_status st = d && ids ? bl_runtime_fingerprint(fingerprint, err) : nomem(err);
    if (st == BL_OK)
        st = bl_execution_json(in->execution, &exec, err);
    for (size_t k = 0; k < in->ncalibrations; k++)
        bl_json_push(&st, ids, bl_json_string(in->calibrations[k]->id), err);
    put(&st, d, "part", bl_json_int(in->part->part), err);
    put(&st, d, "parts", bl_json_int(in->part->nparts), err);
    put(&st, d, "plan_id", bl_json_string(bl_plan_id(in->plan)), err);
    put(&st, d, "engine_version", bl_json_string(bl_version()), err);
    put(&st, d, "runtime_fingerprint", bl_json_string(fingerprint), err);
    put(&st, d, "source_sha256", bl_json_string(bl_source_bundle_sha256()), err);
    put(&st, d, "recording", bl_json_string(bl_recording_name(in->execution->recording)), err);
    put(&st, d, "jobs", bl_json_int((int64_t)in->part->ntrials), err);
    put(&st, d, "job_ranges", job_ranges(in->part), err);
    put(&st, d, "calibrations", ids, err);
    put(&st, d, "execution", exec, err);
    if (st != BL_OK && !bl_json_get(d, "calibrations"))
        bl_json_destroy(ids);
    return bl_json_hand_over(st, d, out);
}

bl_status bl_shard_write(const bl_shard_input *in, const bl_reservation *r, bl_error *err)
{
    bl_error local;
    bl_error *e = err ? err : &local;
    const bl_record_input rin = {.plan = in->plan, .resolved = in->resolved,
                                 .execution = in->execution, .before_file = in->before_file,
                                 .hook_ctx = in->hook_ctx};
    rec w = {.in = &rin, .dirfd = -1, .path = r->path, .err = e};
    bl_json *counts = NULL, *inspection = NULL, *desc = NULL, *cals = NULL;
    size_t completed = 0;
    bl_buf part;
    bl_buf_init(&part);
    w.st = check_reservation(r, &w.dirfd, e);
    if (w.st == BL_OK)
        w.st = status_counts(in->part, &counts, &completed, e);
    if (w.st == BL_OK)
        w.st = bl_shard_description(in, &desc, e);
    plan_files(&w);
    make_dir(&w, "shard");
    if (w.st == BL_OK)
        w.st = bl_run_part_encode(in->part, &part, e);
    rec_buf(&w, BL_SHARD_PART, &part);
    if (w.st == BL_OK && in->ncalibrations > 0) {
        w.st = bl_calibrations_document(in->calibrations, in->ncalibrations, &cals, e);
        file_json(&w, BL_SHARD_CALIBRATIONS, cals);
    }
    write_manifest(&w, counts, desc);
    if (w.st == BL_OK)
        w.st = bl_record_inspect_at(w.dirfd, w.path, &inspection, e);
    if (w.st == BL_OK && !bl_json_get_bool(bl_json_get(inspection, "checksums_valid")))
        w.st = bl_fail(e, BL_EVALUE, "new record inventory failed checksum verification");
    /* A whole shard is DONE whatever its trials did: their statuses are
     * data, and the merged record is FAILED where a single run's would be. */
    write_done(&w);
    rec_sync(&w);
    if (w.st == BL_OK && unlinkat(w.dirfd, BL_RECORD_RESERVED, 0) != 0)
        w.st = os_fail(e, errno, w.path, "cannot remove .RESERVED");
    rec_sync(&w);
    if (w.st != BL_OK)
        (void)bl_record_fail(r, e, NULL);
    if (w.dirfd >= 0)
        close(w.dirfd);
    bl_buf_clear(&part);
    bl_json_destroy(cals);
    bl_json_destroy(desc);
    bl_json_destroy(inspection);
    bl_json_destroy(counts);
    return w.st;
}
