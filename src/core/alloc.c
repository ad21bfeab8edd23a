#include "brainlesslab/alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static atomic_long fail_at;   /* 0: never fail */
static atomic_long attempts;

void bl_alloc_fail_at(long n)
{
    atomic_store(&attempts, 0);
    atomic_store(&fail_at, n);
}

long bl_alloc_count(void) { return atomic_load(&attempts); }

/* True when this allocation attempt is the injected failure. */
static int injected_failure(void)
{
    long target = atomic_load_explicit(&fail_at, memory_order_relaxed);
    long n = atomic_fetch_add(&attempts, 1) + 1;
    return target > 0 && n == target;
}

void *bl_malloc(size_t size)
{
    if (injected_failure())
        return NULL;
    return malloc(size ? size : 1);
}

void *bl_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    if (injected_failure())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *bl_mallocarray(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return bl_malloc(count * size);
}

void *bl_grow(void *items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return items;
    const size_t grown = *cap ? 2 * *cap : 16;
    if (grown < *cap || (size && grown > SIZE_MAX / size))
        return NULL;
    void *moved = bl_realloc(items, grown * size);
    if (moved)
        *cap = grown;
    return moved;
}

void *bl_realloc(void *ptr, size_t size)
{
    if (injected_failure())
        return NULL;
    return realloc(ptr, size ? size : 1);
}

char *bl_strndup(const char *s, size_t n)
{
    char *d = bl_malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *bl_strdup(const char *s) { return bl_strndup(s, strlen(s)); }

void bl_free(void *ptr) { free(ptr); }

bool bl_size_mul(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b)
        return false;
    *out = a * b;
    return true;
}
