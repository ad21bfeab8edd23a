/* Reader of NumPy .npy files (format versions 1 and 2), for the fixture tests
 * and for programs that load arrays written by the reference (the engine
 * itself reads none: records write .npz, see provenance.h). Only what the
 * fixtures hold is accepted: little-endian (or byte-sized) f8, f4, i8, i4,
 * i1 and b1 in C order; anything else is a clear BL_EVALUE. */
#ifndef BRAINLESSLAB_NPY_H
#define BRAINLESSLAB_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/status.h"

typedef enum bl_npy_dtype {
    BL_NPY_F8,   /* double */
    BL_NPY_F4,   /* float */
    BL_NPY_I8,   /* int64_t */
    BL_NPY_I4,   /* int32_t */
    BL_NPY_I1,   /* int8_t */
    BL_NPY_B1,   /* bool stored as one byte 0/1 (uint8_t) */
} bl_npy_dtype;

#define BL_NPY_MAX_DIMS 8

typedef struct bl_npy {
    bl_npy_dtype dtype;
    size_t itemsize;
    int ndim;                      /* 0 for a scalar array */
    size_t shape[BL_NPY_MAX_DIMS];
    size_t count;                  /* product of shape (1 for a scalar) */
    void *data;                    /* count * itemsize bytes, C order, host order */
} bl_npy;

/* Reads a whole file; *out is owned by the caller (bl_npy_destroy). Errors name
 * the path: "<path>: <what is wrong>". */
bl_status bl_npy_read(const char *path, bl_npy **out, bl_error *err);
/* The same from bytes in memory (`what` names them in messages). */
bl_status bl_npy_parse(const void *bytes, size_t len, const char *what,
                       bl_npy **out, bl_error *err);
void bl_npy_destroy(bl_npy *a);

/* Element i converted to double (any dtype); BL_ASSERTs i < count. */
double bl_npy_get_f64(const bl_npy *a, size_t i);
/* Element i converted to int64 (integer and bool dtypes only). */
int64_t bl_npy_get_i64(const bl_npy *a, size_t i);

#endif
