/* One instruction set's lane kernels, both dtypes, and their table: the
 * whole of falandays_lanes_sse2.c and falandays_lanes_avx2.c, which define
 * FAL_LVB (vector bytes) and FAL_ISA (sse2, avx2) first. */
#if !defined(FAL_LVB) || !defined(FAL_ISA)
#error "define FAL_LVB and FAL_ISA before including falandays_lanes_isa.h"
#endif
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "models/falandays_batch.h"

#define FLI_CAT_(a, b) a##_##b
#define FLI_CAT(a, b) FLI_CAT_(a, b)

#define FAL_REAL double
#define FAL_IREAL int64_t
#define FAL_LSFX FLI_CAT(f64, FAL_ISA)
#include "models/falandays_lanes.h"
#undef FAL_REAL
#undef FAL_IREAL
#undef FAL_LSFX

#define FAL_REAL float
#define FAL_IREAL int32_t
#define FAL_LSFX FLI_CAT(f32, FAL_ISA)
#include "models/falandays_lanes.h"
#undef FAL_REAL
#undef FAL_IREAL
#undef FAL_LSFX

#define FLI_FN(name, dtype) FLI_CAT(FLI_CAT(name, dtype), FAL_ISA)

const fal_lane_ops FLI_CAT(bl_fal_lanes, FAL_ISA) = {
    .bytes = FAL_LVB,
    .step_f64 = FLI_FN(fal_lanes_step, f64),
    .step_f32 = FLI_FN(fal_lanes_step, f32),
    .sync_f64 = FLI_FN(fal_lanes_sync, f64),
    .sync_f32 = FLI_FN(fal_lanes_sync, f32),
};
