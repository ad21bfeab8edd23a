#include "brainlesslab/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/alloc.h"

/* Shared by every empty heap buffer; never written (capacity 0). */
static char empty_storage[1];

void bl_buf_init(bl_buf *b)
{
    b->data = empty_storage;
    b->len = 0;
    b->cap = 0;
    b->on_heap = false;
    b->failed = false;
}

void bl_buf_init_fixed(bl_buf *b, char *storage, size_t size)
{
    BL_ASSERT(size >= 1);
    storage[0] = '\0';
    b->data = storage;
    b->len = 0;
    b->cap = size - 1;
    b->on_heap = false;
    b->failed = false;
}

void bl_buf_clear(bl_buf *b)
{
    if (b->on_heap)
        bl_free(b->data);
    bl_buf_init(b);
}

void bl_buf_reset(bl_buf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->cap)
        b->data[0] = '\0';
}

static bool reserve(bl_buf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (extra > (size_t)-1 / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + extra;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap < 64 ? 64 : b->cap;
    while (cap < need)
        cap *= 2;
    char *p;
    if (b->on_heap) {
        p = bl_realloc(b->data, cap + 1);
    } else {
        p = bl_malloc(cap + 1);
        if (p)
            memcpy(p, b->data, b->len);
    }
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    b->on_heap = true;
    return true;
}

bool bl_buf_append(bl_buf *b, const void *bytes, size_t n)
{
    if (!reserve(b, n))
        return false;
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

bool bl_buf_puts(bl_buf *b, const char *s) { return bl_buf_append(b, s, strlen(s)); }

bool bl_buf_putc(bl_buf *b, char c) { return bl_buf_append(b, &c, 1); }

bool bl_buf_printf(bl_buf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return false;
    }
    if ((size_t)n < sizeof small)
        return bl_buf_append(b, small, (size_t)n);
    if (!reserve(b, (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

bl_status bl_buf_status(const bl_buf *b, bl_error *err)
{
    if (b->failed)
        return bl_fail(err, BL_ENOMEM, "out of memory while writing a buffer");
    return BL_OK;
}

char *bl_buf_take(bl_buf *b, size_t *len)
{
    if (b->failed) {
        bl_buf_clear(b);
        return NULL;
    }
    char *out;
    if (b->on_heap) {
        out = b->data;
    } else {
        out = bl_strndup(b->data, b->len);
        if (!out) {
            bl_buf_clear(b);
            return NULL;
        }
    }
    if (len)
        *len = b->len;
    bl_buf_init(b);
    return out;
}
