#include "brainlesslab/sha256.h"

#include <stdbool.h>

#include <openssl/evp.h>
#include <threads.h>
#include <unistd.h>

#include "brainlesslab/file.h"

/* Fetching the algorithm is the costly part of an EVP digest; do it once per
 * process. seed_for hashes millions of short payloads, so the one-shot digest
 * also keeps one context per thread (released by the thread-exit destructor)
 * instead of allocating and freeing one per call, as EVP_Digest does: that
 * was about half the cost of a seed. */
static EVP_MD *sha256_md;
static tss_t sha256_ctx_key;
static bool sha256_ctx_key_ok;
static once_flag sha256_once = ONCE_FLAG_INIT;

static void free_ctx(void *ctx) { EVP_MD_CTX_free(ctx); }

static void fetch_sha256(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    sha256_ctx_key_ok = tss_create(&sha256_ctx_key, free_ctx) == thrd_success;
}

static const EVP_MD *md(void)
{
    call_once(&sha256_once, fetch_sha256);
    return sha256_md;
}

/* This thread's reusable context, or NULL (then a call allocates its own). */
static EVP_MD_CTX *thread_ctx(void)
{
    if (!sha256_ctx_key_ok)
        return NULL;
    EVP_MD_CTX *ctx = tss_get(sha256_ctx_key);
    if (!ctx && (ctx = EVP_MD_CTX_new()) != NULL && tss_set(sha256_ctx_key, ctx) != thrd_success) {
        EVP_MD_CTX_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

/* struct bl_sha256_ctx is never defined: a handle is libcrypto's EVP_MD_CTX
 * itself, cast (see bl_sha256_create). */

bl_status bl_sha256(const void *data, size_t len, uint8_t out[BL_SHA256_BYTES],
                    bl_error *err)
{
    unsigned int n = 0;
    const EVP_MD *m = md();
    EVP_MD_CTX *ctx = m ? thread_ctx() : NULL;
    const bool ok = ctx ? EVP_DigestInit_ex2(ctx, m, NULL) && EVP_DigestUpdate(ctx, data, len) &&
                              EVP_DigestFinal_ex(ctx, out, &n)
                        : m && EVP_Digest(data, len, out, &n, m, NULL);
    if (!ok || n != BL_SHA256_BYTES)
        return bl_fail(err, BL_ERUNTIME, "libcrypto could not compute a SHA-256 digest");
    return BL_OK;
}

bl_status bl_sha256_create(bl_sha256_ctx **ctx, bl_error *err)
{
    *ctx = NULL;
    const EVP_MD *m = md();
    EVP_MD_CTX *evp = m ? EVP_MD_CTX_new() : NULL;
    if (!evp || !EVP_DigestInit_ex2(evp, m, NULL)) {
        EVP_MD_CTX_free(evp);
        return bl_fail(err, BL_ENOMEM, "libcrypto could not start a SHA-256 digest");
    }
    /* The handle is the EVP context itself, so no allocation of ours can fail. */
    *ctx = (bl_sha256_ctx *)evp;
    return BL_OK;
}

bl_status bl_sha256_update(bl_sha256_ctx *ctx, const void *data, size_t len, bl_error *err)
{
    if (!EVP_DigestUpdate((EVP_MD_CTX *)ctx, data, len))
        return bl_fail(err, BL_ERUNTIME, "libcrypto could not update a SHA-256 digest");
    return BL_OK;
}

bl_status bl_sha256_finish(bl_sha256_ctx *ctx, uint8_t out[BL_SHA256_BYTES], bl_error *err)
{
    unsigned int n = 0;
    int ok = EVP_DigestFinal_ex((EVP_MD_CTX *)ctx, out, &n);
    EVP_MD_CTX_free((EVP_MD_CTX *)ctx);
    if (!ok || n != BL_SHA256_BYTES)
        return bl_fail(err, BL_ERUNTIME, "libcrypto could not finish a SHA-256 digest");
    return BL_OK;
}

void bl_sha256_destroy(bl_sha256_ctx *ctx) { EVP_MD_CTX_free((EVP_MD_CTX *)ctx); }

bl_status bl_sha256_fd(int fd, const char *path, uint8_t out[BL_SHA256_BYTES], bl_error *err)
{
    bl_sha256_ctx *ctx;
    bl_status st = bl_sha256_create(&ctx, err);
    if (st != BL_OK)
        return st;
    unsigned char chunk[65536];
    size_t n;
    do {
        if ((st = bl_file_read_upto(fd, chunk, sizeof chunk, &n, path, err)) != BL_OK ||
            (st = bl_sha256_update(ctx, chunk, n, err)) != BL_OK) {
            bl_sha256_destroy(ctx);
            return st;
        }
    } while (n == sizeof chunk);
    return bl_sha256_finish(ctx, out, err);
}

bl_status bl_sha256_file(const char *path, uint8_t out[BL_SHA256_BYTES], bl_error *err)
{
    int fd;
    uint64_t size;
    bl_status st = bl_file_open(path, 0, &fd, &size, err);
    if (st != BL_OK)
        return st;
    st = bl_sha256_fd(fd, path, out, err);
    close(fd);
    return st;
}

bl_status bl_sha256_hex(const void *data, size_t len, char hex[2 * BL_SHA256_BYTES + 1],
                        bl_error *err)
{
    uint8_t digest[BL_SHA256_BYTES];
    bl_status st = bl_sha256(data, len, digest, err);
    if (st == BL_OK)
        bl_hex(digest, sizeof digest, hex);
    return st;
}

void bl_hex(const uint8_t *bytes, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[bytes[i] >> 4];
        hex[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    hex[2 * n] = '\0';
}
