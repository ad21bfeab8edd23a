/* Build-time generator of the embedded source bundle (provenance.h,
 * bl_source_bundle), run by the custom command of tools/provenance.cmake.
 *
 * Usage: source_bundle SRCDIR LIST OUT.zip OUT.c
 *
 * Packs the files that LIST names (one path relative to SRCDIR per line)
 * with bl_zip_build, the library's own deterministic writer, so the bundle
 * is exactly what the library itself would write for those files; writes
 * the archive to OUT.zip and a C source holding its bytes, its SHA-256 and
 * its receipt (the exact bytes of a record's environment/source.json,
 * computed here once by the library's own bl_source_receipt_text_of, so
 * that no process has to inflate and hash the bundle to describe it) to
 * OUT.c. Both go to temporary names first and are renamed into place, so
 * an interrupted build never leaves a half-written source behind that make
 * would then take as up to date. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/provenance.h"
#include "brainlesslab/sha256.h"
#include "records/provenance_bundle.h"

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "source_bundle: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

/* The whole of a regular file (symlinks refused: CMake leaves them out of
 * LIST, so one here means the tree changed since configure). */
static int read_file(const char *path, char **data, size_t *len)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return die("cannot stat %s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return die("%s is not a regular file (re-run cmake)", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        return die("cannot open %s: %s", path, strerror(errno));
    size_t cap = (size_t)sb.st_size + 1, n = 0;
    char *buf = bl_malloc(cap);
    if (!buf) {
        fclose(f);
        return die("out of memory reading %s", path);
    }
    for (;;) {
        if (n == cap) {
            char *grown = bl_realloc(buf, cap *= 2);
            if (!grown) {
                bl_free(buf);
                fclose(f);
                return die("out of memory reading %s", path);
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        bl_free(buf);
        return die("cannot read %s", path);
    }
    *data = buf;
    *len = n;
    return 0;
}

/* `len` bytes as the initialiser lines of an unsigned char array, 16 a
 * line (a string literal this long would exceed what ISO C promises). */
static void write_bytes(FILE *f, const unsigned char *bytes, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    char line[16 * 5 + 2];
    for (size_t i = 0; i < len; i += 16) {
        size_t k = 0;
        for (size_t j = i; j < len && j < i + 16; j++) {
            line[k++] = '0';
            line[k++] = 'x';
            line[k++] = digits[bytes[j] >> 4];
            line[k++] = digits[bytes[j] & 15];
            line[k++] = ',';
        }
        line[k++] = '\n';
        fwrite(line, 1, k, f);
    }
}

/* Writes `len` bytes (or, given the receipt, the C source of both) to
 * path.tmp, then renames it to path. */
static int write_output(const char *path, const unsigned char *bytes, size_t len,
                        const char *hex, size_t nfiles, const bl_buf *receipt)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return die("output path too long: %s", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return die("cannot create %s: %s", tmp, strerror(errno));
    if (!receipt) {
        fwrite(bytes, 1, len, f);
    } else {
        fprintf(f,
                "/* Generated at build time by tools/source_bundle.c (see\n"
                " * tools/provenance.cmake): the source bundle of this build, %zu files,\n"
                " * %zu bytes, and its receipt. Do not edit. */\n"
                "#include \"records/provenance_bundle.h\"\n\n"
                "const size_t bl_bundle_size = %zu;\n"
                "const char bl_bundle_sha256[65] = \"%s\";\n"
                "const unsigned char bl_bundle_bytes[%zu] = {\n",
                nfiles, len, len, hex, len);
        write_bytes(f, bytes, len);
        fprintf(f,
                "};\n\n"
                "const size_t bl_bundle_receipt_size = %zu;\n"
                "const unsigned char bl_bundle_receipt[%zu] = {\n",
                receipt->len, receipt->len);
        write_bytes(f, (const unsigned char *)receipt->data, receipt->len);
        fputs("};\n", f);
    }
    if (fflush(f) != 0 || ferror(f)) {
        fclose(f);
        remove(tmp);
        return die("cannot write %s: %s", tmp, strerror(errno));
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return die("cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: source_bundle SRCDIR LIST OUT.zip OUT.c\n");
        return 2;
    }
    const char *srcdir = argv[1], *list = argv[2];
    int rc = 1;
    bl_zip_entry *entries = NULL;
    size_t n = 0, cap = 0;
    bl_buf zip, receipt;
    bl_buf_init(&zip);
    bl_buf_init(&receipt);
    char line[4096], path[8192];

    FILE *f = fopen(list, "r");
    if (!f) {
        die("cannot open %s: %s", list, strerror(errno));
        goto done;
    }
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f)) {
            fclose(f);
            die("line too long in %s", list);
            goto done;
        }
        if (len == 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            bl_zip_entry *grown = bl_realloc(entries, cap * sizeof *grown);
            if (!grown) {
                fclose(f);
                die("out of memory");
                goto done;
            }
            entries = grown;
        }
        char *name = bl_strdup(line);
        char *data = NULL;
        size_t size = 0;
        snprintf(path, sizeof path, "%s/%s", srcdir, line);
        if (!name || read_file(path, &data, &size) != 0) {
            bl_free(name);
            fclose(f);
            goto done;
        }
        entries[n++] = (bl_zip_entry){name, data, size};
    }
    fclose(f);

    bl_error err = {0};
    if (bl_zip_build(entries, n, &zip, &err) != BL_OK) {
        die("%s", err.msg);
        goto done;
    }
    uint8_t digest[BL_SHA256_BYTES];
    char hex[2 * BL_SHA256_BYTES + 1];
    if (bl_sha256(zip.data, zip.len, digest, &err) != BL_OK ||
        bl_source_receipt_text_of(zip.data, zip.len, &receipt, &err) != BL_OK) {
        die("%s", err.msg);
        goto done;
    }
    bl_hex(digest, sizeof digest, hex);
    if (write_output(argv[3], (const unsigned char *)zip.data, zip.len, hex, n, NULL) != 0 ||
        write_output(argv[4], (const unsigned char *)zip.data, zip.len, hex, n, &receipt) != 0)
        goto done;
    rc = 0;

done:
    bl_zip_entries_destroy(entries, n);
    bl_buf_clear(&zip);
    bl_buf_clear(&receipt);
    return rc;
}
