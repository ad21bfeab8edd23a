/* Host conditions (spec/measurement.md §1.9 and the Linux row of §8): what
 * the reference's performance guide asks an operator to note by hand before
 * a comparison (hardware model, memory, OS, compiler, power source, thermal
 * state, memory pressure, CPU governor and clocks), read from /proc, /sys
 * and /etc so a receipt carries it. Only uname(2), sysconf(3) and the
 * compiler compiled in do not come from the given roots. */
#include "brainlesslab/measure.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/sysinfo.h"
#include "measure/measure_internal.h"
#include "provenance_info.h"

static bl_status nomem(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory describing the host");
}

static bl_json *text_or_null(bool known, const char *s)
{
    return known ? bl_json_string(s) : bl_json_null();
}

/* `items` (n in use, *cap allocated) with room for one more item of
 * `size` bytes: the same or a moved array, or NULL when out of memory (the
 * old one is then still the caller's). */
static void *reserve(void *items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return items;
    size_t want = *cap ? 2 * *cap : 8;
    void *grown = want <= SIZE_MAX / size ? bl_realloc(items, want * size) : NULL;
    if (grown)
        *cap = want;
    return grown;
}

/* The integer that is the whole first line of a file (sysfs style). */
static bool read_int(const char *path, int64_t *out)
{
    char line[64];
    if (!bl_sysinfo_first_line(path, line, sizeof line))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(line, &end, 10);
    if (end == line || *end != '\0' || errno != 0)
        return false;
    *out = v;
    return true;
}

/* "<dir>/<entry>/<leaf>" into dst; false when it does not fit. */
static bool entry_path(char *dst, size_t size, const char *dir, const char *entry,
                       const char *leaf)
{
    int n = snprintf(dst, size, "%s/%s/%s", dir, entry, leaf);
    return n >= 0 && (size_t)n < size;
}

/* Whether name is `prefix` followed by decimal digits only; the number
 * goes to *number. */
static bool numbered(const char *name, const char *prefix, long *number)
{
    size_t k = strlen(prefix);
    if (strncmp(name, prefix, k) != 0 || name[k] < '0' || name[k] > '9')
        return false;
    char *end;
    errno = 0;
    long v = strtol(name + k, &end, 10);
    if (*end != '\0' || errno != 0)
        return false;
    *number = v;
    return true;
}

/* ---- cpu ------------------------------------------------------------------ */

typedef struct governor_name {
    char name[64];
} governor_name;

/* What the cpufreq directories of every CPU say, gathered before the JSON
 * is built: governors as distinct values, clocks summarised. */
typedef struct cpufreq_scan {
    governor_name *governors;
    size_t ngovernors, capgovernors;
    double *current_mhz;
    size_t ncurrent, capcurrent;
    double scaling_min_mhz, scaling_max_mhz; /* NaN: unknown */
} cpufreq_scan;

static int compare_governors(const void *a, const void *b)
{
    return strcmp(((const governor_name *)a)->name, ((const governor_name *)b)->name);
}

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* A cpufreq file of one CPU in MHz (the files hold kHz); NaN when absent. */
static double cpufreq_mhz(const char *dir, const char *cpu, const char *leaf)
{
    char path[BL_SYSINFO_PATH_MAX];
    int64_t khz;
    return entry_path(path, sizeof path, dir, cpu, leaf) && read_int(path, &khz)
               ? (double)khz / 1000.0
               : NAN;
}

/* One CPU's cpufreq directory; false when out of memory. */
static bool scan_one_cpu(const char *dir, const char *cpu, cpufreq_scan *s)
{
    char path[BL_SYSINFO_PATH_MAX];
    governor_name g;
    if (entry_path(path, sizeof path, dir, cpu, "cpufreq/scaling_governor") &&
        bl_sysinfo_first_line(path, g.name, sizeof g.name)) {
        bool seen = false;
        for (size_t i = 0; i < s->ngovernors && !seen; i++)
            seen = strcmp(s->governors[i].name, g.name) == 0;
        if (!seen) {
            governor_name *grown =
                reserve(s->governors, &s->capgovernors, s->ngovernors, sizeof g);
            if (!grown)
                return false;
            s->governors = grown;
            s->governors[s->ngovernors++] = g;
        }
    }
    double mhz = cpufreq_mhz(dir, cpu, "cpufreq/scaling_cur_freq");
    if (!isnan(mhz)) {
        double *grown = reserve(s->current_mhz, &s->capcurrent, s->ncurrent, sizeof mhz);
        if (!grown)
            return false;
        s->current_mhz = grown;
        s->current_mhz[s->ncurrent++] = mhz;
    }
    /* fmin and fmax ignore a NaN operand: unknown stays unknown only while
     * no CPU has said anything. */
    double lo = cpufreq_mhz(dir, cpu, "cpufreq/scaling_min_freq");
    double hi = cpufreq_mhz(dir, cpu, "cpufreq/scaling_max_freq");
    s->scaling_min_mhz = fmin(s->scaling_min_mhz, lo);
    s->scaling_max_mhz = fmax(s->scaling_max_mhz, hi);
    return true;
}

static bl_status scan_cpufreq(const char *sys, cpufreq_scan *s, bl_error *err)
{
    char dir[BL_SYSINFO_PATH_MAX];
    DIR *d = bl_sysinfo_path(dir, sizeof dir, sys, "devices/system/cpu") ? opendir(dir) : NULL;
    if (!d)
        return BL_OK;
    bl_status st = BL_OK;
    struct dirent *e;
    long number;
    while (st == BL_OK && (e = readdir(d)) != NULL)
        if (numbered(e->d_name, "cpu", &number) && !scan_one_cpu(dir, e->d_name, s))
            st = nomem(err);
    closedir(d);
    return st;
}

/* {"current_min", "current_median", "current_max" (over the CPUs' current
 * clocks), "scaling_min", "scaling_max" (the lowest and highest limits)}. */
static bl_json *frequency_json(cpufreq_scan *s, bl_status *st, bl_error *err)
{
    size_t n = s->ncurrent;
    double lo = NAN, median = NAN, hi = NAN;
    if (n > 0) {
        qsort(s->current_mhz, n, sizeof *s->current_mhz, compare_doubles);
        lo = s->current_mhz[0];
        median = bl_sorted_quantile(s->current_mhz, n, 0.5);
        hi = s->current_mhz[n - 1];
    }
    bl_json *f = bl_json_object();
    bl_json_put(st, f, "current_min", bl_measure_real_or_null(lo), err);
    bl_json_put(st, f, "current_median", bl_measure_real_or_null(median), err);
    bl_json_put(st, f, "current_max", bl_measure_real_or_null(hi), err);
    bl_json_put(st, f, "scaling_min", bl_measure_real_or_null(s->scaling_min_mhz), err);
    bl_json_put(st, f, "scaling_max", bl_measure_real_or_null(s->scaling_max_mhz), err);
    return f;
}

/* The CPU's name: x86 and most others have "model name"; ARM kernels name
 * the board ("Hardware") or the core ("Processor" on older kernels), else
 * only the implementer and part numbers are there. */
static bool cpu_model(const char *proc, char *dst, size_t size)
{
    static const char *const keys[] = {"model name", "Hardware", "Processor", "cpu model"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (bl_sysinfo_cpuinfo_field(proc, keys[i], dst, size))
            return true;
    char implementer[32], part[32];
    if (bl_sysinfo_cpuinfo_field(proc, "CPU implementer", implementer, sizeof implementer) &&
        bl_sysinfo_cpuinfo_field(proc, "CPU part", part, sizeof part)) {
        snprintf(dst, size, "CPU implementer %s part %s", implementer, part);
        return true;
    }
    return false;
}

static bl_json *count_or_null(long v)
{
    return v > 0 ? bl_json_int(v) : bl_json_null();
}

static bl_json *cpu_json(const char *proc, const char *sys, bl_status *st, bl_error *err)
{
    char model[256], path[BL_SYSINFO_PATH_MAX];
    bool has_model = cpu_model(proc, model, sizeof model);
    int64_t smt;
    if (!bl_sysinfo_path(path, sizeof path, sys, "devices/system/cpu/smt/active") ||
        !read_int(path, &smt))
        smt = -1;
    cpufreq_scan s = {.scaling_min_mhz = NAN, .scaling_max_mhz = NAN};
    if (*st == BL_OK)
        *st = scan_cpufreq(sys, &s, err);
    bl_json *cpu = bl_json_object(), *governors = bl_json_array();
    if (s.ngovernors > 0)
        qsort(s.governors, s.ngovernors, sizeof *s.governors, compare_governors);
    for (size_t i = 0; i < s.ngovernors; i++)
        bl_json_push(st, governors, bl_json_string(s.governors[i].name), err);
    bl_json_put(st, cpu, "model", text_or_null(has_model, model), err);
    bl_json_put(st, cpu, "logical_cpus", count_or_null(sysconf(_SC_NPROCESSORS_CONF)), err);
    bl_json_put(st, cpu, "online", count_or_null(sysconf(_SC_NPROCESSORS_ONLN)), err);
    bl_json_put(st, cpu, "smt", smt == 0 || smt == 1 ? bl_json_bool(smt == 1) : bl_json_null(),
                err);
    bl_json_put(st, cpu, "governors", governors, err);
    bl_json_put(st, cpu, "frequency_mhz", frequency_json(&s, st, err), err);
    bl_free(s.governors);
    bl_free(s.current_mhz);
    return cpu;
}

/* ---- memory --------------------------------------------------------------- */

/* <proc>/meminfo: "MemTotal:  16318412 kB" lines, in bytes. */
static bl_json *memory_json(const char *proc, bl_status *st, bl_error *err)
{
    static const char *const fields[4] = {"MemTotal", "MemAvailable", "SwapTotal", "SwapFree"};
    static const char *const keys[4] = {"total_bytes", "available_bytes", "swap_total_bytes",
                                        "swap_free_bytes"};
    int64_t bytes[4] = {-1, -1, -1, -1}; /* -1: unknown */
    char path[BL_SYSINFO_PATH_MAX], line[256];
    FILE *f = bl_sysinfo_path(path, sizeof path, proc, "meminfo") ? fopen(path, "r") : NULL;
    while (f && fgets(line, sizeof line, f)) {
        for (int i = 0; i < 4; i++) {
            size_t k = strlen(fields[i]);
            if (strncmp(line, fields[i], k) != 0 || line[k] != ':')
                continue;
            char *end;
            errno = 0;
            long long v = strtoll(line + k + 1, &end, 10);
            bool parsed = end != line + k + 1 && errno == 0 && v >= 0;
            while (*end == ' ' || *end == '\t')
                end++;
            /* The kernel writes kB (KiB); a value without a unit is bytes. */
            long long scale = strncmp(end, "kB", 2) == 0 ? 1024 : 1;
            if (parsed && v <= INT64_MAX / scale)
                bytes[i] = v * scale;
        }
    }
    if (f)
        fclose(f);
    bl_json *m = bl_json_object();
    for (int i = 0; i < 4; i++)
        bl_json_put(st, m, keys[i], bytes[i] >= 0 ? bl_json_int(bytes[i]) : bl_json_null(),
                    err);
    return m;
}

/* ---- thermal zones and power supplies -------------------------------------- */

typedef struct thermal_zone {
    long zone;
    bool has_type;
    char type[64];
    double celsius; /* NaN: unknown (some sensors fail their reads) */
} thermal_zone;

static int compare_zones(const void *pa, const void *pb)
{
    long a = ((const thermal_zone *)pa)->zone, b = ((const thermal_zone *)pb)->zone;
    return (a > b) - (a < b);
}

/* [{"zone", "type", "celsius"}] by zone number. */
static bl_json *thermal_json(const char *sys, bl_status *st, bl_error *err)
{
    thermal_zone *zones = NULL;
    size_t n = 0, cap = 0;
    char dir[BL_SYSINFO_PATH_MAX], path[BL_SYSINFO_PATH_MAX];
    DIR *d = bl_sysinfo_path(dir, sizeof dir, sys, "class/thermal") ? opendir(dir) : NULL;
    struct dirent *e;
    long zone;
    while (d && *st == BL_OK && (e = readdir(d)) != NULL) {
        if (!numbered(e->d_name, "thermal_zone", &zone))
            continue;
        thermal_zone *grown = reserve(zones, &cap, n, sizeof *zones);
        if (!grown) {
            *st = nomem(err);
            break;
        }
        zones = grown;
        thermal_zone *z = &zones[n++];
        z->zone = zone;
        z->has_type = entry_path(path, sizeof path, dir, e->d_name, "type") &&
                      bl_sysinfo_first_line(path, z->type, sizeof z->type);
        int64_t millidegrees;
        z->celsius = entry_path(path, sizeof path, dir, e->d_name, "temp") &&
                             read_int(path, &millidegrees)
                         ? (double)millidegrees / 1000.0
                         : NAN;
    }
    if (d)
        closedir(d);
    if (n > 0)
        qsort(zones, n, sizeof *zones, compare_zones);
    bl_json *arr = bl_json_array();
    for (size_t i = 0; i < n && *st == BL_OK; i++) {
        bl_json *z = bl_json_object();
        bl_json_put(st, z, "zone", bl_json_int(zones[i].zone), err);
        bl_json_put(st, z, "type", text_or_null(zones[i].has_type, zones[i].type), err);
        bl_json_put(st, z, "celsius", bl_measure_real_or_null(zones[i].celsius), err);
        bl_json_push(st, arr, z, err);
    }
    bl_free(zones);
    return arr;
}

typedef struct power_supply {
    char name[256], type[64];
    bool has_type;
    int online; /* 0 or 1; -1 unknown (batteries have no "online") */
} power_supply;

static int compare_supplies(const void *a, const void *b)
{
    return strcmp(((const power_supply *)a)->name, ((const power_supply *)b)->name);
}

/* [{"name", "type", "online"}] by name. */
static bl_json *power_json(const char *sys, bl_status *st, bl_error *err)
{
    power_supply *supplies = NULL;
    size_t n = 0, cap = 0;
    char dir[BL_SYSINFO_PATH_MAX], path[BL_SYSINFO_PATH_MAX];
    DIR *d = bl_sysinfo_path(dir, sizeof dir, sys, "class/power_supply") ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && *st == BL_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        power_supply *grown = reserve(supplies, &cap, n, sizeof *supplies);
        if (!grown) {
            *st = nomem(err);
            break;
        }
        supplies = grown;
        power_supply *p = &supplies[n++];
        bl_sysinfo_text(p->name, sizeof p->name, e->d_name, strlen(e->d_name));
        p->has_type = entry_path(path, sizeof path, dir, e->d_name, "type") &&
                      bl_sysinfo_first_line(path, p->type, sizeof p->type);
        /* 0 offline; 1 online, 2 online and programmable (USB PD). */
        int64_t online;
        p->online = -1;
        if (entry_path(path, sizeof path, dir, e->d_name, "online") &&
            read_int(path, &online) && online >= 0)
            p->online = online > 0;
    }
    if (d)
        closedir(d);
    if (n > 0)
        qsort(supplies, n, sizeof *supplies, compare_supplies);
    bl_json *arr = bl_json_array();
    for (size_t i = 0; i < n && *st == BL_OK; i++) {
        const power_supply *p = &supplies[i];
        bl_json *o = bl_json_object();
        bl_json_put(st, o, "name", bl_json_string(p->name), err);
        bl_json_put(st, o, "type", text_or_null(p->has_type, p->type), err);
        bl_json_put(st, o, "online", p->online < 0 ? bl_json_null() : bl_json_bool(p->online),
                    err);
        bl_json_push(st, arr, o, err);
    }
    bl_free(supplies);
    return arr;
}

/* ---- the whole description ------------------------------------------------- */

bl_status bl_host_describe(const bl_host_paths *paths, bl_json **out, bl_error *err)
{
    *out = NULL;
    const char *proc = paths && paths->proc ? paths->proc : "/proc";
    const char *sys = paths && paths->sys ? paths->sys : "/sys";
    /* NULL keeps os-release's /usr/lib fallback of the real system. */
    const char *etc = paths ? paths->etc : NULL;

    struct utsname uts;
    bool has_uts = uname(&uts) == 0;
    char machine[sizeof uts.machine], release[sizeof uts.release], version[sizeof uts.version];
    if (has_uts) {
        bl_sysinfo_trimmed(machine, sizeof machine, uts.machine);
        bl_sysinfo_trimmed(release, sizeof release, uts.release);
        bl_sysinfo_trimmed(version, sizeof version, uts.version);
    }
    char os[256], product[256], path[BL_SYSINFO_PATH_MAX];
    bool has_os = bl_sysinfo_os_name(etc, os, sizeof os);
    bool has_product =
        bl_sysinfo_path(path, sizeof path, sys, "devices/virtual/dmi/id/product_name") &&
        bl_sysinfo_first_line(path, product, sizeof product);

    /* Every step is a no-op once one has failed, and every value is owned
     * by its container whatever the outcome: one check at the end. */
    bl_status st = BL_OK;
    bl_json *host = bl_json_object(), *kernel = bl_json_object(), *compiler = bl_json_object();
    bl_json *load = NULL, *pressure = NULL;
    bl_json_put(&st, kernel, "release", text_or_null(has_uts, release), err);
    bl_json_put(&st, kernel, "version", text_or_null(has_uts, version), err);
    bl_json_put(&st, compiler, "id", bl_json_string(BL_PROV_C_COMPILER_ID), err);
    bl_json_put(&st, compiler, "version", bl_json_string(BL_PROV_C_COMPILER_VERSION), err);
    bl_json_put(&st, compiler, "flags", bl_json_string(BL_PROV_C_FLAGS), err);
    bl_json_put(&st, host, "machine", text_or_null(has_uts, machine), err);
    bl_json_put(&st, host, "kernel", kernel, err);
    bl_json_put(&st, host, "os", text_or_null(has_os, os), err);
    bl_json_put(&st, host, "product", text_or_null(has_product, product), err);
    bl_json_put(&st, host, "cpu", cpu_json(proc, sys, &st, err), err);
    bl_json_put(&st, host, "memory", memory_json(proc, &st, err), err);
    if (st == BL_OK)
        st = bl_measure_load_average(proc, &load, err);
    bl_json_put(&st, host, "load_average", load, err);
    if (st == BL_OK)
        st = bl_measure_pressure(proc, &pressure, err);
    bl_json_put(&st, host, "pressure", pressure, err);
    bl_json_put(&st, host, "thermal", thermal_json(sys, &st, err), err);
    bl_json_put(&st, host, "power_supply", power_json(sys, &st, err), err);
    bl_json_put(&st, host, "compiler", compiler, err);
    return bl_json_hand_over(st, host, out);
}
