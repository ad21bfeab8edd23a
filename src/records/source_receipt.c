/* The receipt of a source archive (environment/source.json, spec/platform.md
 * §7.3): the archive's SHA-256 and the SHA-256 of every member.
 *
 * Computing it means inflating and hashing every member of the bundle
 * (about 3 MB from 1 MB, some 15 ms), which the program used to do in every
 * process that wrote a record or a profile receipt. The bundle is fixed at
 * build time, so its receipt is too: the build-time generator
 * (tools/source_bundle.c) compiles this file, computes the receipt once and
 * embeds its record bytes beside the bundle; the tests recompute it from the
 * embedded bundle at run time and compare the two byte for byte. */
#include <string.h>

#include "brainlesslab/sha256.h"
#include "records/provenance_bundle.h"
#include "records/zip_internal.h"

typedef struct receipt_ctx {
    bl_json *files;       /* array of names */
    bl_json *file_sha256; /* object name -> hex */
} receipt_ctx;

static bl_status receipt_member(void *vctx, const char *name, const void *data, size_t len,
                                bl_error *err)
{
    receipt_ctx *ctx = vctx;
    char hex[2 * BL_SHA256_BYTES + 1];
    bl_status st = bl_sha256_hex(data, len, hex, err);
    if (st != BL_OK)
        return st;
    bl_json_push(&st, ctx->files, bl_json_string(name), err);
    bl_json_put(&st, ctx->file_sha256, name, bl_json_string(hex), err);
    return st;
}

bl_status bl_source_receipt_of(const void *zip, size_t len, bl_json **out, bl_error *err)
{
    *out = NULL;
    char hex[2 * BL_SHA256_BYTES + 1];
    bl_status st = bl_sha256_hex(zip, len, hex, err);
    if (st != BL_OK)
        return st;
    bl_json *receipt = bl_json_object();
    receipt_ctx ctx = {bl_json_array(), bl_json_object()};
    if (!receipt || !ctx.files || !ctx.file_sha256) {
        st = bl_fail(err, BL_ENOMEM, "out of memory building the source receipt");
        goto fail;
    }
    /* Archive order is name order (bl_zip_build), so "files" comes out sorted. */
    st = bl_zip_visit(zip, len, receipt_member, &ctx, err);
    if (st != BL_OK)
        goto fail;
    bl_json_put(&st, receipt, "entrypoint", bl_json_string("brainlesslab"), err);
    bl_json_put(&st, receipt, "file_sha256", ctx.file_sha256, err);
    ctx.file_sha256 = NULL; /* owned by the receipt whatever the outcome */
    bl_json_put(&st, receipt, "files", ctx.files, err);
    ctx.files = NULL;
    bl_json_put(&st, receipt, "format", bl_json_string("brainlesslab-source-bundle"), err);
    bl_json_put(&st, receipt, "sha256", bl_json_string(hex), err);
    bl_json_put(&st, receipt, "version", bl_json_int(1), err);
    if (st != BL_OK)
        goto fail;
    *out = receipt;
    return BL_OK;

fail:
    bl_json_destroy(ctx.files);
    bl_json_destroy(ctx.file_sha256);
    bl_json_destroy(receipt);
    return st;
}

bl_status bl_source_receipt_text_of(const void *zip, size_t len, bl_buf *out, bl_error *err)
{
    bl_json *receipt = NULL;
    bl_status st = bl_source_receipt_of(zip, len, &receipt, err);
    /* Record JSON (bl_record_json_text): sorted keys, compact, non-ASCII
     * kept raw, one trailing newline. A receipt holds only strings and one
     * integer, so the finiteness check of record JSON has nothing to refuse
     * and the generator need not link the record formats. */
    if (st == BL_OK)
        st = bl_json_write(receipt, BL_JSON_SORT_KEYS, out, err);
    if (st == BL_OK) {
        bl_buf_putc(out, '\n');
        st = bl_buf_status(out, err);
    }
    bl_json_destroy(receipt);
    return st;
}
