/* The lockstep-lane Falandays kernels (falandays_lanes.h) on SSE2
 * vectors of 16 bytes, the x86-64 baseline. */
#define FAL_LVB 16
#define FAL_ISA sse2
#include "models/falandays_lanes_isa.h"
