/* libFuzzer harness: arbitrary bytes as a .npz archive (bl_npz_parse, the
 * decoder's reader of data/probe_features.npz), from memory and from a file
 * (bl_npz_read), which must agree.
 *
 * The promises checked for an accepted archive: members sorted by distinct
 * names, each found again by bl_npz_get, each array's shape product its
 * count and every element readable (AddressSanitizer watches the reads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/provenance.h"
#include "fuzz.h"

static volatile double sink;

static void check_archive(const bl_npz *z)
{
    for (size_t i = 0; i < z->n; i++) {
        const bl_npz_member *m = &z->members[i];
        if (i > 0 && strcmp(z->members[i - 1].name, m->name) >= 0)
            abort();
        if (bl_npz_get(z, m->name) != m->array)
            abort();
        size_t count = 1;
        for (int d = 0; d < m->array->ndim; d++)
            count *= m->array->shape[d];
        if (count != m->array->count)
            abort();
        for (size_t k = 0; k < m->array->count; k++)
            sink += bl_npy_get_f64(m->array, k);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4200];
    if (!path[0])
        snprintf(path, sizeof path, "%s/features.npz", bl_fuzz_tmpdir());
    bl_npz *mem = NULL, *file = NULL;
    bl_error err = {0};
    const bl_status st_mem = bl_npz_parse(data, size, &mem, &err);
    if (st_mem == BL_OK)
        check_archive(mem);
    bl_fuzz_write(path, data, size);
    const bl_status st_file = bl_npz_read(path, (size_t)1 << 24, &file, &err);
    if (st_file == BL_OK)
        check_archive(file);
    if (st_mem != BL_ENOMEM && st_file != BL_ENOMEM) {
        if ((st_mem == BL_OK) != (st_file == BL_OK))
            abort();
        if (mem) {
            if (mem->n != file->n)
                abort();
            for (size_t i = 0; i < mem->n; i++) {
                const bl_npy *a = mem->members[i].array, *b = file->members[i].array;
                if (strcmp(mem->members[i].name, file->members[i].name) != 0 ||
                    a->dtype != b->dtype || a->count != b->count ||
                    memcmp(a->data, b->data, a->count * a->itemsize) != 0)
                    abort();
            }
        }
    }
    bl_npz_destroy(mem);
    bl_npz_destroy(file);
    return 0;
}
