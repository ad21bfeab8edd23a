/* How busy the host is: the load average and pressure stall information
 * (/proc/loadavg, /proc/pressure) as JSON, for the host conditions
 * (host.c) and the activity samples (activity.c) of a measurement. The
 * plain text readers they build on are core's (brainlesslab/sysinfo.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/sysinfo.h"
#include "measure/measure_internal.h"

/* A finite real at the start of s; the end goes to *end. A NaN or an
 * infinity cannot be written as JSON, so they count as malformed. */
static bool parse_real(const char *s, char **end, double *out)
{
    errno = 0;
    double v = strtod(s, end);
    if (*end == s || errno != 0 || !isfinite(v))
        return false;
    *out = v;
    return true;
}

bl_status bl_measure_load_average(const char *proc_root, bl_json **out, bl_error *err)
{
    *out = NULL;
    char path[BL_SYSINFO_PATH_MAX], line[256];
    double avg[3];
    bool known = bl_sysinfo_path(path, sizeof path, proc_root ? proc_root : "/proc", "loadavg") &&
                 bl_sysinfo_first_line(path, line, sizeof line);
    char *p = line;
    for (int i = 0; known && i < 3; i++)
        known = parse_real(p, &p, &avg[i]);
    if (!known) {
        *out = bl_json_null();
        return *out ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory reading the load average");
    }
    bl_json *arr = bl_json_array();
    bl_status st = BL_OK;
    for (int i = 0; i < 3; i++)
        bl_json_push(&st, arr, bl_json_real(avg[i]), err);
    return bl_json_hand_over(st, arr, out);
}

/* One line of a pressure file: "some avg10=0.12 avg60=0.05 avg300=0.01
 * total=12345". Fields are found by name, so their order does not matter;
 * each is left unknown when absent or malformed. */
typedef struct pressure_line {
    double avg[3]; /* NaN: unknown */
    int64_t total; /* -1: unknown */
} pressure_line;

static void parse_pressure_line(const char *s, pressure_line *pl)
{
    static const char *const avg_keys[3] = {"avg10=", "avg60=", "avg300="};
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        const char *token = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n')
            s++;
        for (int i = 0; i < 3; i++) {
            size_t k = strlen(avg_keys[i]);
            char *end;
            double v;
            if (strncmp(token, avg_keys[i], k) == 0 && parse_real(token + k, &end, &v) &&
                end == s)
                pl->avg[i] = v;
        }
        if (strncmp(token, "total=", 6) == 0 && token[6] >= '0' && token[6] <= '9') {
            char *end;
            errno = 0;
            long long v = strtoll(token + 6, &end, 10);
            if (errno == 0 && end == s)
                pl->total = v;
        }
    }
}

/* One resource's pressure file as an object, or null when it is missing. */
static bl_status pressure_resource(const char *proc_root, const char *resource, bl_json **out,
                                   bl_error *err)
{
    *out = NULL;
    char rel[64], path[BL_SYSINFO_PATH_MAX];
    snprintf(rel, sizeof rel, "pressure/%s", resource);
    FILE *f = bl_sysinfo_path(path, sizeof path, proc_root, rel) ? fopen(path, "r") : NULL;
    if (!f) {
        *out = bl_json_null();
        return *out ? BL_OK
                    : bl_fail(err, BL_ENOMEM, "out of memory reading %s pressure", resource);
    }
    pressure_line kinds[2] = {{{NAN, NAN, NAN}, -1}, {{NAN, NAN, NAN}, -1}}; /* some, full */
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "some ", 5) == 0)
            parse_pressure_line(line + 5, &kinds[0]);
        else if (strncmp(line, "full ", 5) == 0)
            parse_pressure_line(line + 5, &kinds[1]);
    }
    fclose(f);

    static const char *const prefixes[2] = {"some", "full"};
    static const char *const avg_names[3] = {"avg10", "avg60", "avg300"};
    bl_json *obj = bl_json_object();
    bl_status st = BL_OK;
    for (int k = 0; k < 2; k++) {
        char key[32];
        for (int i = 0; i < 3; i++) {
            snprintf(key, sizeof key, "%s_%s", prefixes[k], avg_names[i]);
            bl_json_put(&st, obj, key, bl_measure_real_or_null(kinds[k].avg[i]), err);
        }
        snprintf(key, sizeof key, "%s_total_us", prefixes[k]);
        bl_json_put(&st, obj, key,
                    kinds[k].total >= 0 ? bl_json_int(kinds[k].total) : bl_json_null(), err);
    }
    return bl_json_hand_over(st, obj, out);
}

bl_status bl_measure_pressure(const char *proc_root, bl_json **out, bl_error *err)
{
    *out = NULL;
    static const char *const resources[3] = {"cpu", "memory", "io"};
    bl_json *obj = bl_json_object();
    bl_status st = obj ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory reading pressure");
    for (int i = 0; i < 3 && st == BL_OK; i++) {
        bl_json *r = NULL;
        st = pressure_resource(proc_root ? proc_root : "/proc", resources[i], &r, err);
        bl_json_put(&st, obj, resources[i], r, err);
    }
    return bl_json_hand_over(st, obj, out);
}
