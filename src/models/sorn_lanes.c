/* The SORN lane frame for each instruction set and dtype (sorn_lanes.h):
 * one source, sorn_lanes_kernel.h, compiled four times. The AVX2 copies
 * carry a target attribute instead of a file-wide flag, so the rest of the
 * file stays baseline code; FMA is never enabled, and -ffp-contract=off
 * holds anyway, so every lane's arithmetic is the same on both paths. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "models/sorn_lanes.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SORN_HAVE_AVX2 1
#endif

/* Each inclusion gives both dtypes. */
#define LN_ISA sse2
#define LN_VBYTES 16
#define LN_ATTR
#include "models/sorn_lanes_kernel.h"

#ifdef SORN_HAVE_AVX2
#define LN_ISA avx2
#define LN_VBYTES 32
#define LN_ATTR __attribute__((target("avx2")))
#include "models/sorn_lanes_kernel.h"
#endif

sorn_lstep_fn sorn_lanes_kernel(bl_isa isa, size_t dsize)
{
#ifdef SORN_HAVE_AVX2
    if (isa == BL_ISA_AVX2)
        return dsize == 4 ? sorn_lanes_step_avx2_f32 : sorn_lanes_step_avx2_f64;
#endif
    (void)isa;
    return dsize == 4 ? sorn_lanes_step_sse2_f32 : sorn_lanes_step_sse2_f64;
}

size_t sorn_lanes_width(bl_isa isa, size_t dsize)
{
    const size_t bytes = isa == BL_ISA_AVX2 ? 32 : 16;
    return bytes / dsize;
}
