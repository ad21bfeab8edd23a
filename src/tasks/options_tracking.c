/* Tracking's options (spec/tasks.md §1.1, §8.1): stimulus and eye
 * movement, the sensor array, sensory gain and the optional initial state. */
#include <math.h>

#include "brainlesslab/alloc.h"
#include "options_internal.h"

static bl_json *opt_real(bool has, double v)
{
    return has ? bl_json_real(v) : bl_json_null();
}

static bl_json *sensor_offsets_json(const bl_task_options *o)
{
    return bl_opt_numbers(NULL, o->sensor_offsets_deg, o->n_sensor_offsets);
}

static bl_json *theta0_json(const bl_task_options *o)
{
    return opt_real(o->has_theta0, o->theta0);
}

static bl_json *phi0_json(const bl_task_options *o)
{
    return opt_real(o->has_phi0, o->phi0);
}

static bl_json *direction0_json(const bl_task_options *o)
{
    return opt_real(o->has_direction0, o->direction0);
}

static const bl_opt_field fields[] = {
    BL_OPT_REAL_FIELD(stim_speed_rad, 3.141592653589793 / 180.0), /* math.pi / 180 */
    BL_OPT_REAL_FIELD(movement_amp, 10.0), BL_OPT_REAL_FIELD(eye_offset_deg, 30.0),
    BL_OPT_CUSTOM_FIELD(sensor_offsets_deg, sensor_offsets_json),
    BL_OPT_REAL_FIELD(sensory_gain, 1.0), BL_OPT_BOOL_FIELD(randomize_start, true),
    BL_OPT_CUSTOM_FIELD(theta0, theta0_json), BL_OPT_CUSTOM_FIELD(phi0, phi0_json),
    BL_OPT_CUSTOM_FIELD(direction0, direction0_json)};

static bl_status defaults(bl_task_options *o, bl_error *err)
{
    o->n_sensor_offsets = 31;
    o->sensor_offsets_deg = bl_mallocarray(31, sizeof(double));
    if (!o->sensor_offsets_deg)
        return bl_fail(err, BL_ENOMEM, "out of memory for task options");
    for (int i = 0; i < 31; i++)
        o->sensor_offsets_deg[i] = -60.0 + 4.0 * i;
    return BL_OK;
}

static bl_status resolve_tracking(const bl_json *given, bl_task_options *o, bl_error *err)
{
    static const char *const reals[] = {"stim_speed_rad", "movement_amp", "eye_offset_deg",
                                        "theta0",         "phi0",         "direction0"};
    double *slots[] = {&o->stim_speed_rad, &o->movement_amp, &o->eye_offset_deg,
                       &o->theta0,         &o->phi0,         &o->direction0};
    bool *present[] = {NULL, NULL, NULL, &o->has_theta0, &o->has_phi0, &o->has_direction0};
    bl_status st;
    for (size_t i = 0; i < 6; i++) {
        const bl_json *v = bl_opt_given(given, reals[i]);
        if (!v)
            continue;
        if (bl_opt_kind(v) == BL_JSON_NULL) {
            /* None means "not given" for the three initial-state options;
             * the others have no None form in a world. */
            if (!present[i])
                return bl_fail(err, BL_ETYPE, "%s must be a real number", reals[i]);
            *present[i] = false;
            *slots[i] = 0.0;
            continue;
        }
        if ((st = bl_py_float(v, slots[i], err)) != BL_OK)
            return st;
        if (present[i])
            *present[i] = true;
        if (!isfinite(*slots[i]))
            return bl_fail(err, BL_EVALUE, "%s must be finite", reals[i]);
    }
    if (!(o->movement_amp > 0.0))
        return bl_fail(err, BL_EVALUE, "movement_amp must be positive");
    const bl_json *v = bl_opt_given(given, "sensor_offsets_deg");
    if (v) {
        double *offsets = NULL;
        size_t n = 0;
        if ((st = bl_py_float_seq(v, &offsets, &n, err)) != BL_OK)
            return st;
        bool ok = n > 0;
        for (size_t i = 0; i < n; i++)
            ok = ok && isfinite(offsets[i]);
        if (!ok) {
            bl_free(offsets);
            return bl_fail(err, BL_EVALUE, "sensor_offsets_deg needs finite offsets");
        }
        bl_free(o->sensor_offsets_deg);
        o->sensor_offsets_deg = offsets;
        o->n_sensor_offsets = n;
    }
    v = bl_opt_given(given, "randomize_start");
    if (v) {
        if (bl_opt_kind(v) != BL_JSON_BOOL)
            return bl_fail(err, BL_EVALUE, "randomize_start must be boolean");
        o->randomize_start = bl_json_get_bool(v);
    }
    return BL_OK;
}

/* sensory_gain first, as the reference checks it. */
static bl_status resolve(const bl_json *given, bl_task_options *o, bl_error *err)
{
    bl_status st = bl_opt_sensory_gain(given, o, err);
    return st != BL_OK ? st : resolve_tracking(given, o, err);
}

/* Two receptors per sensor. */
static void define(const bl_task_options *o, bl_task_definition *d)
{
    d->n_inputs = 2 * o->n_sensor_offsets;
}

BL_TASK_FAMILY(bl_family_tracking, "tracking", defaults, resolve, NULL, define,
               .default_horizon = 2000, .min_scored_ticks = 2000, .outcome_key = "track_score");
