/* Deterministic ZIP archives and NumPy .npz files through libzip.
 *
 * Determinism is what makes an archive a receipt: the same members must
 * always give the same bytes, so that the archive's SHA-256 names its
 * content. Left alone, libzip would take each member's time from the clock
 * and its attributes from the host, so every field that could vary is fixed
 * here (spec/platform.md §7.3, package-source.zip): members in byte order of
 * their names, DOS time 1980-01-01 00:00:00 (the earliest a DOS date holds),
 * "made by" Unix with the attributes of a 0644 regular file, deflate at level
 * 9, no extra fields (libzip 1.7 writes none unless asked: no extended
 * timestamps, no uid/gid; the tests check this with Python's zipfile), no
 * comments. The bytes then depend only on the members and on zlib's deflate.
 *
 * Allocation: our own allocations go through bl_malloc, so failure injection
 * reaches them; libzip and zlib allocate with the C library's malloc, which
 * injection cannot reach. A libzip allocation failure is still reported as
 * BL_ENOMEM. */
#include "brainlesslab/provenance.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/text.h"
#include "records/zip_internal.h"

/* DOS date: (year - 1980) << 9 | month << 5 | day; DOS time 00:00:00 is 0.
 * Set as DOS fields directly, because zip_file_set_mtime would go through
 * localtime() and so depend on the time zone. */
#define ZIP_DOS_DATE_1980_01_01 ((uint16_t)((0u << 9) | (1u << 5) | 1u))
#define ZIP_DOS_TIME_MIDNIGHT ((uint16_t)0u)
/* Unix mode in the high 16 bits of the external attributes: S_IFREG | 0644. */
#define ZIP_ATTR_REGULAR_0644 ((uint32_t)(0100000u | 0644u) << 16)
/* Stated rather than left to libzip's default, which could change. */
#define ZIP_DEFLATE_LEVEL 9u

/* The end-of-central-directory record of an archive without members. libzip
 * writes nothing at all for one (it removes an empty archive on close), but
 * an empty .npz is a valid answer, so we write the record ourselves, as
 * Python's zipfile does. */
static const unsigned char empty_archive[22] = {'P', 'K', 5, 6};

/* ---- names ------------------------------------------------------------------ */

const char *bl_zip_name_problem(const char *name)
{
    if (!name || !*name)
        return "empty name";
    if (name[0] == '/')
        return "absolute path";
    /* A Windows drive ("C:...") is absolute where the archive may be unpacked. */
    if (((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z')) &&
        name[1] == ':')
        return "drive letter";
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '\\')
            return "backslash";
        if (c < 0x20 || c == 0x7f)
            return "control character";
    }
    /* Empty components ("a//b", a trailing "/", which would be a directory
     * entry) and "." or ".." components: only plain relative file paths. */
    for (const char *c = name;;) {
        const char *slash = strchr(c, '/');
        size_t len = slash ? (size_t)(slash - c) : strlen(c);
        if (len == 0)
            return "empty path component";
        if (len == 1 && c[0] == '.')
            return "\".\" component";
        if (len == 2 && c[0] == '.' && c[1] == '.')
            return "\"..\" component";
        if (!slash)
            break;
        c = slash + 1;
    }
    if (!bl_utf8_valid(name, n))
        return "not UTF-8";
    return NULL;
}

/* ---- libzip errors ------------------------------------------------------------ */

static bl_status libzip_failure(bl_error *err, zip_error_t *ze, bl_status otherwise,
                                const char *doing)
{
    bl_status st = zip_error_code_zip(ze) == ZIP_ER_MEMORY ? BL_ENOMEM : otherwise;
    return bl_fail(err, st, "libzip could not %s: %s", doing, zip_error_strerror(ze));
}

/* ---- writing -------------------------------------------------------------------- */

static int entry_order(const void *a, const void *b)
{
    const bl_zip_entry *x = *(const bl_zip_entry *const *)a;
    const bl_zip_entry *y = *(const bl_zip_entry *const *)b;
    return strcmp(x->name, y->name); /* compares as unsigned char: byte order */
}

/* Adds one member with every varying field fixed. */
static bl_status add_member(zip_t *za, const bl_zip_entry *e, bl_error *err)
{
    /* libzip references the bytes (freep 0) until zip_close; an empty member
     * still needs a non-NULL pointer. */
    static const char nothing[1];
    zip_source_t *src = zip_source_buffer(za, e->len ? e->data : nothing, e->len, 0);
    if (!src)
        return libzip_failure(err, zip_get_error(za), BL_ERUNTIME, "add an archive member");
    zip_int64_t idx = zip_file_add(za, e->name, src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
        zip_source_free(src); /* not taken over by a failed zip_file_add */
        return libzip_failure(err, zip_get_error(za), BL_ERUNTIME, "add an archive member");
    }
    zip_uint64_t i = (zip_uint64_t)idx;
    if (zip_set_file_compression(za, i, ZIP_CM_DEFLATE, ZIP_DEFLATE_LEVEL) < 0 ||
        zip_file_set_dostime(za, i, ZIP_DOS_TIME_MIDNIGHT, ZIP_DOS_DATE_1980_01_01, 0) < 0 ||
        zip_file_set_external_attributes(za, i, 0, ZIP_OPSYS_UNIX, ZIP_ATTR_REGULAR_0644) < 0)
        return libzip_failure(err, zip_get_error(za), BL_ERUNTIME,
                              "set an archive member's attributes");
    return BL_OK;
}

/* Appends the whole content of a libzip buffer source to `out`. */
static bl_status append_source(zip_source_t *src, bl_buf *out, bl_error *err)
{
    if (zip_source_open(src) < 0)
        return libzip_failure(err, zip_source_error(src), BL_ERUNTIME, "read the new archive");
    bl_status st = BL_OK;
    unsigned char chunk[16384];
    for (;;) {
        zip_int64_t got = zip_source_read(src, chunk, sizeof chunk);
        if (got < 0) {
            st = libzip_failure(err, zip_source_error(src), BL_ERUNTIME, "read the new archive");
            break;
        }
        if (got == 0)
            break;
        if (!bl_buf_append(out, chunk, (size_t)got)) {
            st = bl_buf_status(out, err);
            break;
        }
    }
    zip_source_close(src);
    return st;
}

bl_status bl_zip_build(const bl_zip_entry *entries, size_t n, bl_buf *out, bl_error *err)
{
    if (out->failed)
        return bl_buf_status(out, err);
    const size_t start = out->len;
    const bl_zip_entry **order = NULL;
    zip_source_t *archive = NULL; /* our reference to the bytes being written */
    zip_t *za = NULL;
    zip_error_t ze;
    zip_error_init(&ze);
    bl_status st = BL_OK;

    for (size_t i = 0; i < n; i++) {
        const char *why = bl_zip_name_problem(entries[i].name);
        if (why) {
            st = bl_fail(err, BL_EVALUE, "unsafe archive member name \"%s\": %s",
                         entries[i].name ? entries[i].name : "", why);
            goto done;
        }
        if (!entries[i].data && entries[i].len) {
            st = bl_fail(err, BL_EVALUE, "archive member \"%s\" has no data", entries[i].name);
            goto done;
        }
    }
    if (n == 0) {
        bl_buf_append(out, empty_archive, sizeof empty_archive);
        st = bl_buf_status(out, err);
        goto done;
    }

    order = bl_mallocarray(n, sizeof *order);
    if (!order) {
        st = bl_fail(err, BL_ENOMEM, "out of memory ordering %zu archive members", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = &entries[i];
    qsort(order, n, sizeof *order, entry_order);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(order[i - 1]->name, order[i]->name) == 0) {
            st = bl_fail(err, BL_EVALUE, "duplicate archive member name \"%s\"", order[i]->name);
            goto done;
        }
    }

    archive = zip_source_buffer_create(NULL, 0, 0, &ze);
    if (!archive) {
        st = libzip_failure(err, &ze, BL_ERUNTIME, "start an archive");
        goto done;
    }
    za = zip_open_from_source(archive, ZIP_CREATE | ZIP_TRUNCATE, &ze);
    if (!za) {
        st = libzip_failure(err, &ze, BL_ERUNTIME, "start an archive");
        goto done; /* the source is still only ours */
    }
    /* The archive now owns the source and frees it on close; keep our own
     * reference to read the written bytes back afterwards. */
    zip_source_keep(archive);
    for (size_t i = 0; i < n; i++) {
        st = add_member(za, order[i], err);
        if (st != BL_OK)
            goto done;
    }
    if (zip_close(za) < 0) {
        st = libzip_failure(err, zip_get_error(za), BL_ERUNTIME, "write an archive");
        goto done; /* za is still open; discarded below */
    }
    za = NULL;
    st = append_source(archive, out, err);

done:
    if (za)
        zip_discard(za);
    if (archive)
        zip_source_free(archive);
    zip_error_fini(&ze);
    bl_free(order);
    if (st != BL_OK && !out->failed && out->len != start) {
        /* Nothing partial: the caller's buffer is as it was. */
        out->len = start;
        out->data[start] = '\0';
    }
    return st;
}

/* ---- reading -------------------------------------------------------------------- */

static int name_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Reads one member into *buf (grown as needed) through libzip's CRC check. */
static bl_status read_member(zip_t *za, zip_uint64_t i, const char *name, size_t size,
                             unsigned char **buf, size_t *cap, bl_error *err)
{
    if (size > *cap) {
        unsigned char *grown = bl_realloc(*buf, size);
        if (!grown)
            return bl_fail(err, BL_ENOMEM, "out of memory reading archive member \"%s\" (%zu bytes)",
                           name, size);
        *buf = grown;
        *cap = size;
    }
    zip_file_t *zf = zip_fopen_index(za, i, 0);
    if (!zf)
        return libzip_failure(err, zip_get_error(za), BL_EVALUE, "open an archive member");
    bl_status st = BL_OK;
    size_t have = 0;
    while (have < size) {
        zip_int64_t got = zip_fread(zf, *buf + have, size - have);
        if (got <= 0) {
            st = got < 0 ? libzip_failure(err, zip_file_get_error(zf), BL_EVALUE,
                                          "read an archive member")
                         : bl_fail(err, BL_EVALUE, "archive member \"%s\" is shorter than declared",
                                   name);
            goto done;
        }
        have += (size_t)got;
    }
    /* One more read reaches the end of the stream, where libzip compares the
     * CRC; stopping at the declared size would skip that check. */
    unsigned char extra;
    zip_int64_t more = zip_fread(zf, &extra, 1);
    if (more < 0)
        st = libzip_failure(err, zip_file_get_error(zf), BL_EVALUE, "read an archive member");
    else if (more > 0)
        st = bl_fail(err, BL_EVALUE, "archive member \"%s\" is longer than declared", name);
done:
    zip_fclose(zf);
    return st;
}

bl_status bl_zip_visit(const void *zip, size_t len, bl_zip_visitor visit, void *ctx,
                       bl_error *err)
{
    if (!zip || len < sizeof empty_archive)
        return bl_fail(err, BL_EVALUE, "not a ZIP archive (%zu bytes)", len);
    zip_error_t ze;
    zip_error_init(&ze);
    zip_t *za = NULL;
    const char **names = NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    bl_status st = BL_OK;

    zip_source_t *src = zip_source_buffer_create(zip, len, 0, &ze);
    if (!src) {
        st = libzip_failure(err, &ze, BL_ERUNTIME, "open an archive");
        goto done;
    }
    za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
    if (!za) {
        zip_source_free(src); /* a failed open leaves the source with us */
        st = libzip_failure(err, &ze, BL_EVALUE, "open an archive");
        goto done;
    }
    zip_int64_t count = zip_get_num_entries(za, 0);
    if (count < 0 || (uint64_t)count > SIZE_MAX / sizeof *names) {
        st = bl_fail(err, BL_EVALUE, "the archive's member count is unreadable");
        goto done;
    }
    size_t n = (size_t)count;
    names = bl_mallocarray(n ? n : 1, sizeof *names);
    if (!names) {
        st = bl_fail(err, BL_ENOMEM, "out of memory listing %zu archive members", n);
        goto done;
    }
    /* Every name is checked before any member is handed out, so a caller
     * never sees part of an archive that is refused. */
    for (size_t i = 0; i < n; i++) {
        const char *name = zip_get_name(za, i, 0);
        if (!name) {
            st = libzip_failure(err, zip_get_error(za), BL_EVALUE, "read an archive member name");
            goto done;
        }
        const char *why = bl_zip_name_problem(name);
        if (why) {
            st = bl_fail(err, BL_EVALUE, "unsafe archive member name \"%s\": %s", name, why);
            goto done;
        }
        names[i] = name;
    }
    qsort(names, n, sizeof *names, name_order);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(names[i - 1], names[i]) == 0) {
            st = bl_fail(err, BL_EVALUE, "duplicate archive member name \"%s\"", names[i]);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) {
        zip_stat_t zs;
        zip_stat_init(&zs);
        if (zip_stat_index(za, i, 0, &zs) < 0 || !(zs.valid & ZIP_STAT_NAME) ||
            !(zs.valid & ZIP_STAT_SIZE)) {
            st = libzip_failure(err, zip_get_error(za), BL_EVALUE, "read an archive member");
            goto done;
        }
        if (zs.size > SIZE_MAX) {
            st = bl_fail(err, BL_ENOMEM, "archive member \"%s\" is too large", zs.name);
            goto done;
        }
        st = read_member(za, i, zs.name, (size_t)zs.size, &buf, &cap, err);
        if (st != BL_OK)
            goto done;
        st = visit(ctx, zs.name, buf ? (const void *)buf : (const void *)"", (size_t)zs.size, err);
        if (st != BL_OK)
            goto done;
    }

done:
    if (za)
        zip_discard(za); /* also frees src */
    zip_error_fini(&ze);
    bl_free(names);
    bl_free(buf);
    return st;
}

typedef struct read_ctx {
    bl_zip_entry *entries;
    size_t n, cap;
} read_ctx;

static bl_status keep_member(void *vctx, const char *name, const void *data, size_t len,
                             bl_error *err)
{
    read_ctx *ctx = vctx;
    bl_zip_entry *grown = bl_grow(ctx->entries, ctx->n, &ctx->cap, sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ENOMEM, "out of memory reading archive members");
    ctx->entries = grown;
    char *name_copy = bl_strdup(name);
    void *data_copy = bl_malloc(len);
    if (!name_copy || !data_copy) {
        bl_free(name_copy);
        bl_free(data_copy);
        return bl_fail(err, BL_ENOMEM, "out of memory reading archive member \"%s\"", name);
    }
    if (len)
        memcpy(data_copy, data, len);
    ctx->entries[ctx->n++] = (bl_zip_entry){name_copy, data_copy, len};
    return BL_OK;
}

bl_status bl_zip_read(const void *zip, size_t len, bl_zip_entry **entries, size_t *n,
                      bl_error *err)
{
    *entries = NULL;
    *n = 0;
    read_ctx ctx = {0};
    bl_status st = bl_zip_visit(zip, len, keep_member, &ctx, err);
    if (st != BL_OK) {
        bl_zip_entries_destroy(ctx.entries, ctx.n);
        return st;
    }
    *entries = ctx.entries;
    *n = ctx.n;
    return BL_OK;
}

void bl_zip_entries_destroy(bl_zip_entry *entries, size_t n)
{
    if (!entries)
        return;
    /* The names and data were allocated by bl_zip_read; the entry type is
     * const only for callers building archives from borrowed bytes. */
    for (size_t i = 0; i < n; i++) {
        bl_free((void *)entries[i].name);
        bl_free((void *)entries[i].data);
    }
    bl_free(entries);
}

/* ---- .npz --------------------------------------------------------------------- */

/* One float64 1-D array in .npy format 1.0, laid out exactly as NumPy 1.24's
 * np.save writes it: the dict text, spare spaces for the shape to grow in
 * place (NumPy's GROWTH_AXIS_MAX_DIGITS = 21), then spaces and a newline up
 * to a 64-byte boundary, always at least one space (NumPy adds a full 64
 * when the header is already aligned). */
static void npy_append(bl_buf *b, const double *a, size_t n)
{
    char dict[128];
    int len = snprintf(dict, sizeof dict,
                       "{'descr': '<f8', 'fortran_order': False, 'shape': (%zu,), }", n);
    BL_ASSERT(len > 0 && (size_t)len < sizeof dict);
    char digits[32];
    int ndigits = snprintf(digits, sizeof digits, "%zu", n);
    size_t growth = ndigits < 21 ? (size_t)(21 - ndigits) : 0;
    size_t hlen = (size_t)len + growth + 1; /* + the newline */
    size_t pad = 64 - ((6 + 2 + 2 + hlen) % 64);
    size_t total = hlen + pad;
    BL_ASSERT(total <= 0xffff);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(total & 0xff), (unsigned char)(total >> 8)};
    bl_buf_append(b, pre, sizeof pre);
    bl_buf_append(b, dict, (size_t)len);
    for (size_t i = 0; i < growth + pad; i++)
        bl_buf_putc(b, ' ');
    bl_buf_putc(b, '\n');
    /* Little-endian whatever the host: byte by byte from the IEEE bits. */
    unsigned char chunk[8 * 512];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;
        memcpy(&bits, &a[i], sizeof bits);
        for (int k = 0; k < 8; k++)
            chunk[used++] = (unsigned char)(bits >> (8 * k));
        if (used == sizeof chunk) {
            bl_buf_append(b, chunk, used);
            used = 0;
        }
    }
    bl_buf_append(b, chunk, used);
}

bl_status bl_npz_build(const char *const *names, const double *const *arrays,
                       const size_t *lengths, size_t n, bl_buf *out, bl_error *err)
{
    bl_status st = BL_OK;
    bl_zip_entry *entries = bl_calloc(n, sizeof *entries);
    char **members = bl_calloc(n, sizeof *members);
    bl_buf *files = bl_calloc(n, sizeof *files); /* zeroed: a valid empty bl_buf */
    if (!entries || !members || !files) {
        st = bl_fail(err, BL_ENOMEM, "out of memory building a .npz of %zu arrays", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        bl_buf_init(&files[i]);
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || (!arrays[i] && lengths[i])) {
            st = bl_fail(err, BL_EVALUE, ".npz array %zu has no name or no data", i);
            goto done;
        }
        size_t len = strlen(names[i]);
        members[i] = bl_malloc(len + sizeof ".npy");
        if (!members[i]) {
            st = bl_fail(err, BL_ENOMEM, "out of memory naming .npz member \"%s\"", names[i]);
            goto done;
        }
        memcpy(members[i], names[i], len);
        memcpy(members[i] + len, ".npy", sizeof ".npy");
        npy_append(&files[i], arrays[i], lengths[i]);
        st = bl_buf_status(&files[i], err);
        if (st != BL_OK)
            goto done;
        entries[i] = (bl_zip_entry){members[i], files[i].data, files[i].len};
    }
    st = bl_zip_build(entries, n, out, err);

done:
    for (size_t i = 0; i < n && members && files; i++) {
        bl_free(members[i]);
        bl_buf_clear(&files[i]);
    }
    bl_free(entries);
    bl_free(members);
    bl_free(files);
    return st;
}
