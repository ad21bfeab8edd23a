/* random() < p decided on the raw word (private to src/rng; the tests hold
 * it to the double comparison at its edges). */
#ifndef BL_RNG_BERNOULLI_H
#define BL_RNG_BERNOULLI_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* The uniform of raw word r is k * 2^-53 with k = r >> 11, exactly (k fits
 * a double and the scale is a power of two), so u < p holds exactly when
 * k < p * 2^53 (also exact), that is when k < ceil(p * 2^53), that is when
 * r < ceil(p * 2^53) * 2^11. The comparison then needs neither the shift
 * nor the conversion. When every word passes (p >= 1, or a bound of 2^53,
 * whose scaled form would not fit 64 bits), *all is set instead; a NaN or
 * p <= 0 gives bound 0, which no word is below. */
static inline uint64_t bl_bernoulli_bound(double p, bool *all)
{
    *all = false;
    if (!(p > 0.0))
        return 0;
    const double x = p * 0x1p53;
    if (x > 0x1p53 - 1.0) {
        *all = true; /* ceil(x) >= 2^53: every k < 2^53 passes */
        return 0;
    }
    return (uint64_t)ceil(x) << 11;
}

#endif
