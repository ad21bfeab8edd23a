/* The world kernels of worlds_kernel.h for double (wk_*_f64) and float
 * (wk_*_f32), for the files that drive worlds: worlds.c (the public
 * per-cohort operations) and controllers.c (the fused control loops, which
 * call the kernels directly so that a tick costs no call through the
 * dtype dispatch). Each includer gets its own static inline copies. */
#ifndef BL_WORLDS_INSTANCES_H
#define BL_WORLDS_INSTANCES_H

#include <math.h>

#include "tasks/worlds_internal.h"

#define BL_WORLDS_PI 3.14159265358979323846

#define WK_REAL double
#define WK_SFX f64
#define WK_COS cos
#define WK_SIN sin
#define WK_EXP exp
#define WK_ATAN2 atan2
#define WK_FMOD fmod
#define WK_FABS fabs
#define WK_CEIL ceil
#include "tasks/worlds_kernel.h"

#define WK_REAL float
#define WK_SFX f32
#define WK_COS cosf
#define WK_SIN sinf
#define WK_EXP expf
#define WK_ATAN2 atan2f
#define WK_FMOD fmodf
#define WK_FABS fabsf
#define WK_CEIL ceilf
#include "tasks/worlds_kernel.h"

#endif
