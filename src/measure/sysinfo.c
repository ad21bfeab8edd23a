/* Readers of the kernel's and the distribution's text files (sysinfo.h). */
#include "measure/sysinfo.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure_internal.h"
#include "brainlesslab/text.h"

void bl_sysinfo_text(char *dst, size_t size, const char *s, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
    if (!bl_utf8_valid(dst, n))
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)dst[i] >= 0x80)
                dst[i] = '?';
}

void bl_sysinfo_trimmed(char *dst, size_t size, const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    bl_sysinfo_text(dst, size, s, n);
}

bool bl_sysinfo_path(char *dst, size_t size, const char *root, const char *rel)
{
    int n = snprintf(dst, size, "%s/%s", root, rel);
    return n >= 0 && (size_t)n < size;
}

bool bl_sysinfo_first_line(const char *path, char *dst, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    bool found = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!found)
        return false;
    bl_sysinfo_trimmed(dst, size, line);
    return dst[0] != '\0';
}

bool bl_sysinfo_cpuinfo_field(const char *proc_root, const char *key, char *dst, size_t size)
{
    char path[BL_SYSINFO_PATH_MAX];
    if (!bl_sysinfo_path(path, sizeof path, proc_root ? proc_root : "/proc", "cpuinfo"))
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        const char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        bl_sysinfo_trimmed(dst, size, p);
        found = dst[0] != '\0';
    }
    fclose(f);
    return found;
}

static FILE *open_os_release(const char *etc_root)
{
    if (etc_root) {
        char path[BL_SYSINFO_PATH_MAX];
        return bl_sysinfo_path(path, sizeof path, etc_root, "os-release") ? fopen(path, "r")
                                                                           : NULL;
    }
    FILE *f = fopen("/etc/os-release", "r");
    return f ? f : fopen("/usr/lib/os-release", "r");
}

/* One field of os-release (shell syntax: the value may be quoted, with
 * backslash escapes inside double quotes). */
static bool os_release_field(const char *etc_root, const char *key, char *dst, size_t size)
{
    FILE *f = open_os_release(etc_root);
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || line[klen] != '=')
            continue;
        const char *p = line + klen + 1;
        char value[1024];
        size_t n = 0;
        char quote = (*p == '"' || *p == '\'') ? *p++ : '\0';
        for (; *p && *p != '\n' && n + 1 < sizeof value; p++) {
            if (quote && *p == quote)
                break;
            if (quote == '"' && *p == '\\' && p[1] && p[1] != '\n')
                p++;
            value[n++] = *p;
        }
        value[n] = '\0';
        bl_sysinfo_trimmed(dst, size, value);
        found = dst[0] != '\0';
    }
    fclose(f);
    return found;
}

bool bl_sysinfo_os_name(const char *etc_root, char *dst, size_t size)
{
    if (os_release_field(etc_root, "PRETTY_NAME", dst, size))
        return true;
    char id[120], version[120];
    if (!os_release_field(etc_root, "ID", id, sizeof id))
        return false;
    if (os_release_field(etc_root, "VERSION_ID", version, sizeof version))
        snprintf(dst, size, "%s %s", id, version);
    else
        snprintf(dst, size, "%s", id);
    return true;
}

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

bl_status bl_sysinfo_load_average(const char *proc_root, bl_json **out, bl_error *err)
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
        bl_measure_append(&st, arr, bl_json_real(avg[i]), err);
    return bl_measure_hand_over(st, arr, out);
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
            bl_measure_put(&st, obj, key, bl_measure_real_or_null(kinds[k].avg[i]), err);
        }
        snprintf(key, sizeof key, "%s_total_us", prefixes[k]);
        bl_measure_put(&st, obj, key,
                       kinds[k].total >= 0 ? bl_json_int(kinds[k].total) : bl_json_null(), err);
    }
    return bl_measure_hand_over(st, obj, out);
}

bl_status bl_sysinfo_pressure(const char *proc_root, bl_json **out, bl_error *err)
{
    *out = NULL;
    static const char *const resources[3] = {"cpu", "memory", "io"};
    bl_json *obj = bl_json_object();
    bl_status st = obj ? BL_OK : bl_fail(err, BL_ENOMEM, "out of memory reading pressure");
    for (int i = 0; i < 3 && st == BL_OK; i++) {
        bl_json *r = NULL;
        st = pressure_resource(proc_root ? proc_root : "/proc", resources[i], &r, err);
        bl_measure_put(&st, obj, resources[i], r, err);
    }
    return bl_measure_hand_over(st, obj, out);
}
