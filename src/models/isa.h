/* Which vector instruction set the model kernels run on (src/models/ only).
 *
 * The lockstep-lane kernels exist once per instruction set (SSE2, the x86-64
 * baseline, and AVX2), compiled from the same source with the same lane
 * arithmetic: every lane does the scalar IEEE operations of the dtype, with
 * no contraction and nothing summed across lanes, so the bits never depend
 * on the path. The best path the CPU supports is chosen once per process;
 * the environment variable BL_ISA ("sse2" or "avx2") forces one, so that
 * tests and the instruction-count gate can run every path the machine has. */
#ifndef BL_ISA_H
#define BL_ISA_H

#include <stdbool.h>

#include "brainlesslab/status.h"

typedef enum bl_isa {
    BL_ISA_SSE2,
    BL_ISA_AVX2,
    BL_ISA_COUNT
} bl_isa;

/* "sse2", "avx2". */
const char *bl_isa_name(bl_isa isa);

/* Whether this CPU can run isa's kernels. */
bool bl_isa_supported(bl_isa isa);

/* The path kernels use: BL_ISA when set (an unknown name, or a path this
 * CPU lacks, is a ValueError naming the choices), else the best supported.
 * Thread-safe; reads the environment on every call, so tests may change
 * BL_ISA between model creations. */
bl_status bl_isa_select(bl_isa *out, bl_error *err);

#endif
