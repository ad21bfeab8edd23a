/* libFuzzer harness: arbitrary bytes as a .npy file, through both readers
 * (bl_npy_parse from memory, bl_npy_read from a file), which must agree.
 *
 * The promises checked for an accepted array: the shape's product is the
 * count, the data fit in the input, the item size is the dtype's, bool bytes
 * are 0 or 1, and every element can be read (AddressSanitizer watches the
 * reads); the file reader gives the same array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/npy.h"
#include "fuzz.h"

static const size_t itemsizes[] = {
    [BL_NPY_F8] = 8, [BL_NPY_F4] = 4, [BL_NPY_I8] = 8, [BL_NPY_I4] = 4, [BL_NPY_I1] = 1,
    [BL_NPY_B1] = 1,
};

/* Where the elements go, so that reading them is not optimised away. */
static volatile double sink;

static void check_array(const bl_npy *a, size_t size)
{
    if ((unsigned)a->dtype >= sizeof itemsizes / sizeof *itemsizes ||
        a->itemsize != itemsizes[a->dtype] || a->ndim < 0 || a->ndim > BL_NPY_MAX_DIMS)
        abort();
    size_t count = 1;
    for (int d = 0; d < a->ndim; d++)
        count *= a->shape[d];
    if (count != a->count || (a->count > 0 && a->count > size / a->itemsize))
        abort();
    for (size_t i = 0; i < a->count; i++) {
        if (a->dtype == BL_NPY_F8 || a->dtype == BL_NPY_F4) {
            sink += bl_npy_get_f64(a, i);
        } else {
            const int64_t v = bl_npy_get_i64(a, i);
            if (a->dtype == BL_NPY_B1 && v != 0 && v != 1)
                abort();
            sink += (double)v;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4200];
    if (!path[0])
        snprintf(path, sizeof path, "%s/array.npy", bl_fuzz_tmpdir());
    bl_npy *mem = NULL, *file = NULL;
    bl_error err = {0};
    const bl_status st_mem = bl_npy_parse(data, size, "fuzz.npy", &mem, &err);
    if (st_mem == BL_OK)
        check_array(mem, size);
    bl_fuzz_write(path, data, size);
    const bl_status st_file = bl_npy_read(path, &file, &err);
    if (st_file == BL_OK)
        check_array(file, size);
    /* Allocation failures aside, both readers decide alike. */
    if (st_mem != BL_ENOMEM && st_file != BL_ENOMEM) {
        if ((st_mem == BL_OK) != (st_file == BL_OK))
            abort();
        if (mem && (mem->dtype != file->dtype || mem->ndim != file->ndim ||
                    mem->count != file->count ||
                    memcmp(mem->shape, file->shape, sizeof mem->shape) != 0 ||
                    memcmp(mem->data, file->data, mem->count * mem->itemsize) != 0))
            abort();
    }
    bl_npy_destroy(mem);
    bl_npy_destroy(file);
    return 0;
}
