/* .npz reader: a ZIP archive (bl_zip_visit, the archive reader the source
 * receipt uses) whose members are .npy files (bl_npy_parse, the project's one
 * .npy parser). The decoder reads data/probe_features.npz with it, the
 * program's first .npz read from outside input, so it is as strict as its two
 * halves: every member must be named "<name>.npy" and be a valid .npy file;
 * unsafe, duplicate or damaged members refuse the whole archive (NumPy's
 * np.load reads members lazily and would only fail on the one asked for).
 * Members come out sorted by name, so a lookup is a binary search. */
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/provenance.h"
#include "records/zip_internal.h"

#define NPY_SUFFIX ".npy"
#define NPY_SUFFIX_LEN 4

typedef struct npz_ctx {
    bl_npz *z;
    size_t cap;
} npz_ctx;

static bl_status keep_array(void *vctx, const char *name, const void *data, size_t len,
                            bl_error *err)
{
    npz_ctx *ctx = vctx;
    bl_npz *z = ctx->z;
    size_t n = strlen(name);
    if (n <= NPY_SUFFIX_LEN || strcmp(name + n - NPY_SUFFIX_LEN, NPY_SUFFIX) != 0)
        return bl_fail(err, BL_EVALUE, "archive member \"%s\" is not a .npy file", name);
    bl_npz_member *grown = bl_grow(z->members, z->n, &ctx->cap, sizeof *grown);
    if (!grown)
        return bl_fail(err, BL_ENOMEM, "out of memory reading .npz members");
    z->members = grown;
    char *key = bl_malloc(n - NPY_SUFFIX_LEN + 1);
    if (!key)
        return bl_fail(err, BL_ENOMEM, "out of memory reading .npz member \"%s\"", name);
    memcpy(key, name, n - NPY_SUFFIX_LEN);
    key[n - NPY_SUFFIX_LEN] = '\0';
    bl_npy *a = NULL;
    bl_status st = bl_npy_parse(data, len, name, &a, err);
    if (st != BL_OK) {
        bl_free(key);
        return st;
    }
    z->members[z->n++] = (bl_npz_member){key, a};
    return BL_OK;
}

static int member_order(const void *a, const void *b)
{
    return strcmp(((const bl_npz_member *)a)->name, ((const bl_npz_member *)b)->name);
}

bl_status bl_npz_parse(const void *bytes, size_t len, bl_npz **out, bl_error *err)
{
    *out = NULL;
    bl_npz *z = bl_calloc(1, sizeof *z);
    if (!z)
        return bl_fail(err, BL_ENOMEM, "out of memory reading a .npz archive");
    npz_ctx ctx = {z, 0};
    bl_status st = bl_zip_visit(bytes, len, keep_array, &ctx, err);
    if (st != BL_OK) {
        bl_npz_destroy(z);
        return st;
    }
    /* Names are distinct (bl_zip_visit refuses duplicates), so the order is total. */
    if (z->n > 1)
        qsort(z->members, z->n, sizeof *z->members, member_order);
    *out = z;
    return BL_OK;
}

bl_status bl_npz_read(const char *path, size_t cap, bl_npz **out, bl_error *err)
{
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    bl_status st = bl_file_read(path, cap, ".npz archive", BL_FILE_NOFOLLOW, &data, &len, err);
    if (st == BL_OK) {
        st = bl_npz_parse(data, len, out, err);
        if (st != BL_OK)
            bl_error_prefix(err, "%s", path);
    }
    bl_free(data);
    return st;
}

const bl_npy *bl_npz_get(const bl_npz *z, const char *name)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(z->members[mid].name, name);
        if (c == 0)
            return z->members[mid].array;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void bl_npz_destroy(bl_npz *z)
{
    if (!z)
        return;
    for (size_t i = 0; i < z->n; i++) {
        bl_free(z->members[i].name);
        bl_npy_destroy(z->members[i].array);
    }
    bl_free(z->members);
    bl_free(z);
}
