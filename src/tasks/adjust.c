/* Null adjustment (spec/tasks.md §9.2, platform.md §5.5) and the
 * calibration signature of this build (§9.3).
 *
 * A frozen null is bound to everything that could change its numbers: the
 * task contract (task, resolved options, horizon, warm-up, cadence), the
 * numerics and RNG scheme, and the program that ran it. The reference hashes
 * its Python world sources and its installed Quadrants runtime; this program
 * hashes its own task sources (src/tasks/, at configure time, see
 * CMakeLists.txt) and names its runtime by version and compiler, so its
 * signature ids are its own and never collide with the reference's. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "brainlesslab/sha256.h"
#include "brainlesslab/task.h"
#include "build_info.h"
#include "task_sources.h"
#include "tasks/adjust_internal.h"

/* ---- §9.2 ---------------------------------------------------------------- */

const char *bl_adjust_status_name(bl_adjust_status s)
{
    switch (s) {
    case BL_ADJUST_EMPIRICAL:
        return "null_adjusted_empirical";
    case BL_ADJUST_ANALYTIC:
        return "null_adjusted_analytic";
    case BL_ADJUST_UNAVAILABLE:
        return "calibration_unavailable";
    case BL_ADJUST_NO_OUTCOME:
        return "no_scalar_outcome";
    case BL_ADJUST_BAD_DENOMINATOR:
        return "invalid_calibration_denominator";
    }
    return "unknown";
}

bl_adjust_status bl_null_adjust(double raw, bool has_null, bool analytic, double null_mean,
                                double upper, double *normalised)
{
    /* The reference's order: a missing outcome first, then a missing
     * calibration, then the denominator. */
    *normalised = NAN;
    if (isnan(raw))
        return BL_ADJUST_NO_OUTCOME;
    if (!has_null)
        return BL_ADJUST_UNAVAILABLE;
    const double d = upper - null_mean;
    if (!isfinite(d) || d <= 0)
        return BL_ADJUST_BAD_DENOMINATOR;
    /* Unclipped: a model below chance keeps its negative value. */
    *normalised = (raw - null_mean) / d;
    return analytic ? BL_ADJUST_ANALYTIC : BL_ADJUST_EMPIRICAL;
}

/* ---- §9.3 ---------------------------------------------------------------- */

void bl_architecture(char out[65])
{
    struct utsname u;
    if (uname(&u) == 0 && u.machine[0]) {
        snprintf(out, 65, "%s", u.machine);
    } else {
        snprintf(out, 65, "unspecified");
    }
}

bl_status bl_runtime_fingerprint(char hex[65], bl_error *err)
{
    char text[256];
    snprintf(text, sizeof text, "brainlesslab %s %s", BL_VERSION, BL_C_COMPILER);
    uint8_t digest[BL_SHA256_BYTES];
    bl_status st = bl_sha256(text, strlen(text), digest, err);
    if (st != BL_OK)
        return st;
    bl_hex(digest, sizeof digest, hex);
    return BL_OK;
}

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory for a calibration signature");
}

bl_status bl_world_source_hashes(bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_json *o = bl_json_object();
    if (!o)
        return nomem(err);
    for (size_t i = 0; i < BL_TASK_SOURCE_COUNT; i++) {
        bl_status st = bl_json_object_set(o, bl_task_sources[i].path,
                                          bl_json_string(bl_task_sources[i].sha256), err);
        if (st != BL_OK) {
            bl_json_destroy(o);
            return st;
        }
    }
    *out = o;
    return BL_OK;
}

/* Reservoir design is deliberately outside the signature (one null serves
 * every reservoir on a task contract), so its keys may not hide in the task
 * options either. */
static const char *const reservoir_keys[] = {
    "count", "input_gain", "n_nodes", "node", "node_count", "node_kind", "topology",
};

bl_status bl_calibration_check_task_options(const bl_json *opts, bl_error *err)
{
    if (!opts || bl_json_kindof(opts) != BL_JSON_OBJECT)
        return bl_fail(err, BL_EVALUE, "calibration task options must be a mapping");
    char found[256] = "";
    size_t used = 0, nfound = 0;
    for (size_t k = 0; k < sizeof reservoir_keys / sizeof *reservoir_keys; k++) {
        if (!bl_json_get(opts, reservoir_keys[k]))
            continue;
        int w = snprintf(found + used, sizeof found - used, "%s'%s'", nfound ? ", " : "",
                         reservoir_keys[k]);
        if (w > 0 && (size_t)w < sizeof found - used)
            used += (size_t)w;
        nfound++;
    }
    if (nfound)
        return bl_fail(err, BL_EVALUE,
                       "calibration task options may not contain reservoir keys: [%s]", found);
    return BL_OK;
}

/* Adds `v` under `key`; the object owns `v` whatever happens. */
static bl_status put(bl_json *o, const char *key, bl_json *v, bl_error *err)
{
    if (!v)
        return nomem(err);
    return bl_json_object_set(o, key, v, err);
}

bl_status bl_calibration_signature_parts(const char *task, const bl_json *task_options,
                                         int64_t action_cadence, int64_t horizon,
                                         int64_t warmup, bl_dtype dtype, const char *backend,
                                         bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_task_kind kind;
    bl_status st = bl_task_from_name(task ? task : "", &kind, err);
    if (st != BL_OK)
        return st;
    if (!backend)
        backend = "cpu";
    /* This program's backends (DESIGN.md): cpu now, cuda later. */
    if (strcmp(backend, "cpu") != 0 && strcmp(backend, "cuda") != 0)
        return bl_fail(err, BL_EVALUE, "unsupported backend '%s' (this build: cpu, cuda)",
                       backend);
    if (dtype != BL_FLOAT64 && dtype != BL_FLOAT32)
        return bl_fail(err, BL_EVALUE, "calibration dtype must be float64 or float32");
    if (horizon < 1)
        return bl_fail(err, BL_EVALUE, "calibration scoring_horizon must be >= 1");
    if (warmup < 0)
        return bl_fail(err, BL_EVALUE, "calibration warmup must be >= 0");
    if (action_cadence < 1)
        return bl_fail(err, BL_EVALUE, "calibration action_cadence must be >= 1");
    st = bl_calibration_check_task_options(task_options, err);
    if (st != BL_OK)
        return st;

    char arch[65], fingerprint[65];
    bl_architecture(arch);
    st = bl_runtime_fingerprint(fingerprint, err);
    if (st != BL_OK)
        return st;

    /* Containers go into `sig` as soon as they exist, so `sig` owns every
     * piece and one free cleans up any failure. */
    bl_json *sig = bl_json_object(), *numerics = bl_json_object(), *sources = NULL;
    if (!sig) {
        bl_json_destroy(numerics);
        return nomem(err);
    }
    if ((st = put(sig, "numerics", numerics, err)) != BL_OK)
        goto fail;
    if ((st = put(numerics, "dtype", bl_json_string(bl_dtype_name(dtype)), err)) != BL_OK ||
        (st = put(numerics, "fast_math", bl_json_bool(false), err)) != BL_OK ||
        (st = put(numerics, "reduction", bl_json_string("ordered"), err)) != BL_OK ||
        (st = put(numerics, "rng", bl_json_string("philox-host-v1"), err)) != BL_OK)
        goto fail;
    if ((st = bl_world_source_hashes(&sources, err)) != BL_OK ||
        (st = put(sig, "world_source_hashes", sources, err)) != BL_OK)
        goto fail;
    if ((st = put(sig, "action_cadence", bl_json_int(action_cadence), err)) != BL_OK ||
        (st = put(sig, "architecture", bl_json_string(arch), err)) != BL_OK ||
        (st = put(sig, "backend", bl_json_string(backend), err)) != BL_OK ||
        (st = put(sig, "initialisation_policy", bl_json_string("task-factory-v1"), err)) !=
            BL_OK ||
        (st = put(sig, "null_policy", bl_json_string("iid-uniform-random-action-v1"), err)) !=
            BL_OK ||
        (st = put(sig, "rng_scheme", bl_json_string("philox-host-v1"), err)) != BL_OK ||
        (st = put(sig, "runtime_fingerprint", bl_json_string(fingerprint), err)) != BL_OK ||
        (st = put(sig, "scoring_horizon", bl_json_int(horizon), err)) != BL_OK ||
        (st = put(sig, "task", bl_json_string(bl_task_name(kind)), err)) != BL_OK ||
        (st = put(sig, "task_options", bl_json_copy(task_options), err)) != BL_OK ||
        (st = put(sig, "warmup", bl_json_int(warmup), err)) != BL_OK)
        goto fail;
    *out = sig;
    return BL_OK;

fail:
    bl_json_destroy(sig);
    return st;
}

bl_status bl_calibration_signature(const bl_task_options *o, int64_t horizon, int64_t warmup,
                                   bl_dtype dtype, const char *backend, bl_json **out,
                                   bl_error *err)
{
    *out = NULL;
    if (!o)
        return bl_fail(err, BL_EVALUE, "calibration signatures need resolved task options");
    bl_task_definition def;
    bl_task_define(o, &def);
    bl_json *opts = NULL;
    bl_status st = bl_task_options_json(o, &opts, err);
    if (st != BL_OK)
        return st;
    st = bl_calibration_signature_parts(bl_task_name(o->kind), opts, def.neural_frames, horizon,
                                        warmup, dtype, backend, out, err);
    bl_json_destroy(opts);
    return st;
}
