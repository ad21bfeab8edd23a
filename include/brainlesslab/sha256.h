/* SHA-256 through libcrypto's EVP interface: seeds, contract hashes,
 * record checksums. */
#ifndef BRAINLESSLAB_SHA256_H
#define BRAINLESSLAB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/status.h"

#define BL_SHA256_BYTES 32

/* One-shot digest. */
bl_status bl_sha256(const void *data, size_t len, uint8_t out[BL_SHA256_BYTES],
                    bl_error *err);

/* One-shot digest as lowercase hex; hex is left alone on failure. */
bl_status bl_sha256_hex(const void *data, size_t len, char hex[2 * BL_SHA256_BYTES + 1],
                        bl_error *err);

/* Incremental digest (files, streams). */
typedef struct bl_sha256_ctx bl_sha256_ctx;
bl_status bl_sha256_create(bl_sha256_ctx **ctx, bl_error *err);
bl_status bl_sha256_update(bl_sha256_ctx *ctx, const void *data, size_t len, bl_error *err);
/* Finishes and frees the context. */
bl_status bl_sha256_finish(bl_sha256_ctx *ctx, uint8_t out[BL_SHA256_BYTES], bl_error *err);
void bl_sha256_destroy(bl_sha256_ctx *ctx);  /* frees without finishing; NULL ok */

/* Digest of a regular file's bytes (opened as bl_file_open does: a FIFO or
 * a device is refused, never waited on or read without end). */
bl_status bl_sha256_file(const char *path, uint8_t out[BL_SHA256_BYTES], bl_error *err);
/* Digest of the rest of an open file, read to its end; `path` names it in
 * messages. */
bl_status bl_sha256_fd(int fd, const char *path, uint8_t out[BL_SHA256_BYTES], bl_error *err);

/* Lowercase hex of `n` bytes into `hex` (2n + 1 bytes with the NUL). */
void bl_hex(const uint8_t *bytes, size_t n, char *hex);

#endif
