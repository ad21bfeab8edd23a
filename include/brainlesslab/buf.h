/* A growable byte buffer, the sink of every writer (canonical JSON, seed
 * payloads, CSV, record files). It may start on caller-provided storage (a
 * stack array) and moves to the heap only when that is outgrown, so hot paths
 * such as seed_for allocate nothing. The contents are always NUL-terminated. */
#ifndef BRAINLESSLAB_BUF_H
#define BRAINLESSLAB_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/status.h"

typedef struct bl_buf {
    char *data;
    size_t len;
    size_t cap;     /* usable bytes, not counting the terminating NUL */
    bool on_heap;
    bool failed;    /* an append ran out of memory; later appends are no-ops */
} bl_buf;

/* An empty heap buffer (allocates on first append). */
void bl_buf_init(bl_buf *b);
/* A buffer that starts on `storage` (size bytes, size >= 1). */
void bl_buf_init_fixed(bl_buf *b, char *storage, size_t size);
/* Releases the storage; the buffer is empty and may be appended to again. */
void bl_buf_clear(bl_buf *b);
void bl_buf_reset(bl_buf *b); /* length 0, keeps the storage */

/* Appends: on allocation failure they set b->failed and return false, so a
 * writer may append freely and check once with bl_buf_status. */
bool bl_buf_append(bl_buf *b, const void *bytes, size_t n);
bool bl_buf_puts(bl_buf *b, const char *s);
bool bl_buf_putc(bl_buf *b, char c);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
bool bl_buf_printf(bl_buf *b, const char *fmt, ...);

/* BL_OK, or BL_ENOMEM with a message if any append failed. */
bl_status bl_buf_status(const bl_buf *b, bl_error *err);

/* Hands the heap contents to the caller (who frees them with bl_free) and
 * leaves `b` empty; copies first when the buffer is on fixed storage.
 * Returns NULL on allocation failure or if an append had failed. */
char *bl_buf_take(bl_buf *b, size_t *len);

#endif
