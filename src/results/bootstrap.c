/* Bootstrap intervals of means (spec/platform.md §5.3) and the null-adjusted
 * interval of a target (§5.5 adjusted_interval).
 *
 * Both resample with NumPy's Generator(Philox) in the reference's draw
 * order and summarise with NumPy's pairwise mean and linear quantiles, so
 * the intervals are the reference's to the bit. The adjusted interval
 * resamples model blocks and null trajectories from two independent
 * streams, so the uncertainty of a frozen null reaches the interval even
 * when every model block is equal. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/results.h"
#include "brainlesslab/rng.h"
#include "results/results_internal.h"

void bl_bootstrap_means(bl_gen *g, const double *v, size_t m, size_t reps, double *row,
                        double *means)
{
    BL_ASSERT(m >= 1 && m <= (size_t)INT64_MAX);
    for (size_t r = 0; r < reps; r++) {
        /* The resampled array is built in draw order: NumPy's pairwise mean
         * depends on the order of the values, not just on the multiset. */
        for (size_t i = 0; i < m; i++)
            row[i] = v[bl_gen_integers(g, 0, (int64_t)m)];
        means[r] = bl_np_mean(row, m);
    }
}

bl_status bl_bootstrap_quantiles(double *draws, size_t n, double out[2], bl_error *err)
{
    /* One sort for both ends (the draws are scratch, sorted in place). */
    static const double qs[2] = {0.025, 0.975};
    return bl_np_quantiles(draws, n, qs, 2, draws, out, err);
}

bl_json *bl_json_reals(const double *v, size_t n)
{
    bl_json *a = bl_json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (bl_json_array_append(a, bl_json_real(v[i]), NULL) != BL_OK) {
            bl_json_destroy(a);
            a = NULL;
        }
    }
    return a;
}

/* One heap block of `count` doubles, or a BL_ENOMEM line. */
static bl_status doubles(size_t count, double **out, bl_error *err)
{
    *out = bl_mallocarray(count, sizeof **out);
    if (!*out)
        return bl_fail(err, BL_ENOMEM, "out of memory for a bootstrap of %zu values", count);
    return BL_OK;
}

static bl_status check_repetitions(int64_t repetitions, bl_error *err)
{
    /* A quantile needs at least one draw; the reference always uses 2000.
     * The upper cap only keeps the buffer arithmetic below from wrapping. */
    if (repetitions < 1 || (uint64_t)repetitions > SIZE_MAX / 32)
        return bl_fail(err, BL_EVALUE, "bootstrap repetitions must be >= 1, got %lld",
                       (long long)repetitions);
    return BL_OK;
}

bl_status bl_bootstrap_interval(const double *v, size_t m, const bl_seed *seed,
                                size_t repetitions, double out[2], bool *available,
                                bl_error *err)
{
    *available = false;
    if (m < 2)
        return BL_OK;
    bl_status st =
        check_repetitions(repetitions <= (size_t)INT64_MAX ? (int64_t)repetitions : -1, err);
    double *buf = NULL;
    if (st == BL_OK && m > SIZE_MAX / 8 - repetitions)
        st = bl_fail(err, BL_ENOMEM, "out of memory for a bootstrap of %zu values", m);
    if (st == BL_OK)
        st = doubles(repetitions + m, &buf, err);
    if (st != BL_OK)
        return st;
    /* One repetitions x m integers(0, m) call, drawn row by row (the same
     * stream, see bl_bootstrap_means) so only one row is ever held. */
    bl_gen g;
    bl_gen_init(&g, seed);
    bl_bootstrap_means(&g, v, m, repetitions, buf + repetitions, buf);
    double q[2];
    st = bl_bootstrap_quantiles(buf, repetitions, q, err);
    bl_free(buf);
    if (st == BL_OK) {
        out[0] = q[0];
        out[1] = q[1];
        *available = true;
    }
    return st;
}

const char *bl_interval_status_name(bl_interval_status s)
{
    switch (s) {
    case BL_INTERVAL_AVAILABLE:
        return "available";
    case BL_INTERVAL_INSUFFICIENT_BLOCKS:
        return "insufficient_independent_blocks";
    case BL_INTERVAL_INVALID_DENOMINATOR:
        return "invalid_calibration_denominator";
    }
    return "unknown";
}

/* The generator of one named uncertainty stream of the summary seed. */
static bl_status uncertainty_gen(const bl_seed *seed, const char *stream, const char *cal_id,
                                 bl_gen *g, bl_error *err)
{
    const bl_key key = BL_KEY_S(cal_id);
    bl_seed s;
    bl_status st = bl_seed_for_seed(seed, "uncertainty", stream, &key, 1, &s, err);
    if (st == BL_OK)
        bl_gen_init(g, &s);
    return st;
}

bl_status bl_adjusted_interval_compute(const double *block_means, size_t m,
                                       const bl_calibration *cal, const bl_seed *seed,
                                       int64_t repetitions, bl_adjusted_interval *out,
                                       bl_error *err)
{
    if (!cal)
        return bl_fail(err, BL_EVALUE, "adjusted_interval needs a calibration record");
    for (size_t i = 0; i < m; i++)
        if (!isfinite(block_means[i]))
            return bl_fail(err, BL_EVALUE, "adjusted_interval block means must be finite");
    bl_status st = check_repetitions(repetitions, err);
    if (st != BL_OK)
        return st;

    bl_adjusted_interval a = {
        .interval = {NAN, NAN},
        .raw_mean = bl_np_mean(block_means, m),
        .raw_interval = {NAN, NAN},
        .null_mean = cal->null_mean,
        .null_interval = {cal->null_interval[0], cal->null_interval[1]},
        .status = BL_INTERVAL_INSUFFICIENT_BLOCKS,
    };
    memcpy(a.calibration_id, cal->id, sizeof a.calibration_id);
    bl_null_adjust(a.raw_mean, true, cal->analytic, cal->null_mean, cal->upper_bound,
                   &a.estimate);
    if (m < 2) {
        *out = a;
        return BL_OK;
    }

    const size_t reps = (size_t)repetitions, rowlen = m > cal->nscores ? m : cal->nscores;
    double *buf = NULL;
    if (rowlen > SIZE_MAX / 8 - 3 * reps)
        return bl_fail(err, BL_ENOMEM, "out of memory for a bootstrap of %zu values", rowlen);
    if ((st = doubles(3 * reps + rowlen, &buf, err)) != BL_OK)
        return st;
    double *raw = buf, *null = buf + reps, *ratio = buf + 2 * reps, *row = buf + 3 * reps;
    bl_gen gm, gn;
    if ((st = uncertainty_gen(seed, "model-block-bootstrap", cal->id, &gm, err)) != BL_OK)
        goto done;
    bl_bootstrap_means(&gm, block_means, m, reps, row, raw);
    if (cal->nscores) {
        if ((st = uncertainty_gen(seed, "calibration-trajectory-bootstrap", cal->id, &gn,
                                  err)) != BL_OK)
            goto done;
        bl_bootstrap_means(&gn, cal->trial_scores, cal->nscores, reps, row, null);
    } else {
        /* Analytic: no trajectories to resample, the null is its constant
         * (0.5, which bl_calibration_from_json enforces). */
        for (size_t r = 0; r < reps; r++)
            null[r] = cal->null_mean;
    }
    /* Ratios pair draw r of both streams, so they are formed before the
     * quantiles sort the draws. An invalid denominator is counted and
     * withholds the interval; dropping it would bias the interval. */
    size_t invalid = 0;
    for (size_t r = 0; r < reps; r++) {
        const double d = cal->upper_bound - null[r];
        if (!isfinite(d) || d <= 0)
            invalid++;
        else
            ratio[r] = (raw[r] - null[r]) / d;
    }
    if ((st = bl_bootstrap_quantiles(raw, reps, a.raw_interval, err)) != BL_OK ||
        (st = bl_bootstrap_quantiles(null, reps, a.null_interval, err)) != BL_OK)
        goto done;
    a.has_raw_interval = true;
    a.repetitions = repetitions;
    a.invalid_denominator_draws = (int64_t)invalid;
    if (invalid) {
        a.status = BL_INTERVAL_INVALID_DENOMINATOR;
    } else {
        if ((st = bl_bootstrap_quantiles(ratio, reps, a.interval, err)) != BL_OK)
            goto done;
        a.has_interval = true;
        a.status = BL_INTERVAL_AVAILABLE;
    }
    *out = a;

done:
    bl_free(buf);
    return st;
}

static bl_json *real_or_null(double v) { return isnan(v) ? bl_json_null() : bl_json_real(v); }

static bl_json *pair_or_null(bool has, const double v[2])
{
    return has ? bl_json_reals(v, 2) : bl_json_null();
}

bl_status bl_adjusted_interval_json(const bl_adjusted_interval *a, bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object();
    if (!o)
        return bl_fail(err, BL_ENOMEM, "out of memory for an adjusted interval");
    /* The reference's AdjustedInterval field order. */
    bl_status st;
    if ((st = bl_json_object_set(o, "estimate", real_or_null(a->estimate), err)) != BL_OK ||
        (st = bl_json_object_set(o, "interval", pair_or_null(a->has_interval, a->interval),
                                 err)) != BL_OK ||
        (st = bl_json_object_set(o, "raw_mean", real_or_null(a->raw_mean), err)) != BL_OK ||
        (st = bl_json_object_set(o, "raw_interval",
                                 pair_or_null(a->has_raw_interval, a->raw_interval), err)) !=
            BL_OK ||
        (st = bl_json_object_set(o, "null_mean", real_or_null(a->null_mean), err)) != BL_OK ||
        (st = bl_json_object_set(o, "null_interval", bl_json_reals(a->null_interval, 2),
                                 err)) != BL_OK ||
        (st = bl_json_object_set(o, "status", bl_json_string(bl_interval_status_name(a->status)),
                                 err)) != BL_OK ||
        (st = bl_json_object_set(o, "invalid_denominator_draws",
                                 bl_json_int(a->invalid_denominator_draws), err)) != BL_OK ||
        (st = bl_json_object_set(o, "repetitions", bl_json_int(a->repetitions), err)) != BL_OK ||
        (st = bl_json_object_set(o, "calibration_id", bl_json_string(a->calibration_id), err)) !=
            BL_OK) {
        bl_json_destroy(o);
        return st;
    }
    *out = o;
    return BL_OK;
}
