/* NumPy's float64 ziggurat tables (private to src/rng). The data are
 * generated into ziggurat_tables.c by scripts/gen-ziggurat-tables because
 * they cannot be recomputed bit-exactly (spec/numpy-compat.md §2). */
#ifndef BL_RNG_ZIGGURAT_H
#define BL_RNG_ZIGGURAT_H

#include <stdint.h>

#define BL_ZIG_LAYERS 256
/* Start of the tail and its reciprocal, as NumPy writes them. */
#define BL_ZIG_R 3.6541528853610087963519472518
#define BL_ZIG_INV_R 0.27366123732975827203338247596

extern const uint64_t bl_zig_ki[BL_ZIG_LAYERS];
extern const double bl_zig_wi[BL_ZIG_LAYERS];
extern const double bl_zig_fi[BL_ZIG_LAYERS];

#endif
