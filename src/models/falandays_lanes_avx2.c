/* The lockstep-lane Falandays kernels (falandays_lanes.h) on AVX2
 * vectors of 32 bytes; this file alone is compiled with -mavx2
 * (CMakeLists.txt), and only runs where bl_isa_select chose AVX2. */
#define FAL_LVB 32
#define FAL_ISA avx2
#include "models/falandays_lanes_isa.h"
