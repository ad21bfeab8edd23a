/* Instruction-set selection for the lane kernels (isa.h). */
#include <stdlib.h>
#include <string.h>

#include "models/isa.h"

static const char *const names[BL_ISA_COUNT] = {"sse2", "avx2"};

const char *bl_isa_name(bl_isa isa)
{
    return (unsigned)isa < BL_ISA_COUNT ? names[isa] : "unknown";
}

bool bl_isa_supported(bl_isa isa)
{
#if defined(__x86_64__) || defined(__i386__)
    switch (isa) {
    case BL_ISA_SSE2: return __builtin_cpu_supports("sse2");
    case BL_ISA_AVX2: return __builtin_cpu_supports("avx2");
    default: return false;
    }
#else
    (void)isa;
    return false;
#endif
}

bl_status bl_isa_select(bl_isa *out, bl_error *err)
{
    const char *want = getenv("BL_ISA");
    if (want && *want) {
        for (int i = 0; i < BL_ISA_COUNT; i++)
            if (strcmp(want, names[i]) == 0) {
                if (!bl_isa_supported((bl_isa)i))
                    return bl_fail(err, BL_EVALUE,
                                   "BL_ISA=%s: this CPU does not support that instruction set",
                                   want);
                *out = (bl_isa)i;
                return BL_OK;
            }
        return bl_fail(err, BL_EVALUE, "BL_ISA=%s: unknown instruction set (choose sse2 or avx2)",
                       want);
    }
    *out = bl_isa_supported(BL_ISA_AVX2) ? BL_ISA_AVX2 : BL_ISA_SSE2;
    return BL_OK;
}
