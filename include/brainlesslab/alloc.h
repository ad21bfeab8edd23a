/* The one allocation function family of the project.
 *
 * Every heap allocation of the project's C code and of jansson goes through
 * these (toml++ in the C++ TOML bridge, libcrypto, libzip and zlib allocate
 * on their own), so that a test can make the n-th allocation of a workload
 * fail and check that every failure path returns a clean BL_ENOMEM without
 * leaking (SQLite's approach).
 * Release builds keep the hook: it costs one relaxed atomic load and one
 * atomic increment of a shared attempt counter per allocation (bl_free
 * costs nothing extra). */
#ifndef BRAINLESSLAB_ALLOC_H
#define BRAINLESSLAB_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *bl_malloc(size_t size);
void *bl_calloc(size_t count, size_t size);  /* overflow-checked */
void *bl_realloc(void *ptr, size_t size);
void *bl_mallocarray(size_t count, size_t size); /* overflow-checked, uninitialised */
char *bl_strdup(const char *s);
char *bl_strndup(const char *s, size_t n);
void bl_free(void *ptr);

/* Room for item n of a heap array of *cap items of `size` bytes, for the
 * readers that append items one at a time: when n == *cap the capacity
 * doubles (16 at first). Returns the array, moved or not, or NULL on
 * failure, which leaves `items` and *cap as they were. */
void *bl_grow(void *items, size_t n, size_t *cap, size_t size);

/* a * b, or false when the product does not fit a size_t (the size of an
 * array before it is allocated). */
bool bl_size_mul(size_t a, size_t b, size_t *out);

/* Failure injection for tests: the project's, and those of a program built
 * on the library that wants to see its own paths through an engine call
 * that runs out of memory. bl_alloc_fail_at(n) makes the n-th allocation
 * counted from this call (1-based) fail, and every later one succeed again;
 * n = 0 disables injection. bl_alloc_count() reports allocations attempted
 * since the last bl_alloc_fail_at call. */
void bl_alloc_fail_at(long n);
long bl_alloc_count(void);

#endif
