/* Host conditions and the background-activity check
 * (include/brainlesslab/measure.h; spec/measurement.md §1.9 and §8).
 *
 * The host description is read from fake /proc, /sys and /etc trees, so
 * every field is checked against a known value (only uname, sysconf and the
 * compiler come from elsewhere). The activity check is tested three ways:
 * its /proc/<pid>/stat parser on hostile command names, its judgement on
 * synthetic samples, and for real against a child that spins and one that
 * sleeps. Nothing asserts how fast this program runs. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/measure.h"
#include "brainlesslab/provenance.h"
#include "support.h"

/* ---- helpers ------------------------------------------------------------------ */

/* Writes root/rel, creating the folders on the way. */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", path, strerror(errno));
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("cannot write %s: %s", path, strerror(errno));
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *root, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", path, strerror(errno));
}

/* object[key], failing the test when it is absent. */
static const bl_json *at(const bl_json *object, const char *key)
{
    assert_non_null(object);
    assert_int_equal(bl_json_kindof(object), BL_JSON_OBJECT);
    const bl_json *v = bl_json_get(object, key);
    if (!v)
        fail_msg("no \"%s\"", key);
    return v;
}

static void check_null(const bl_json *v)
{
    assert_int_equal(bl_json_kindof(v), BL_JSON_NULL);
}

static void check_text(const bl_json *v, const char *expected)
{
    assert_int_equal(bl_json_kindof(v), BL_JSON_STRING);
    assert_string_equal(bl_json_get_string(v, NULL), expected);
}

static void check_real(const bl_json *v, double expected)
{
    assert_int_equal(bl_json_kindof(v), BL_JSON_REAL);
    if (bl_json_get_real(v) != expected)
        fail_msg("%.17g != %.17g", bl_json_get_real(v), expected);
}

static void check_int(const bl_json *v, int64_t expected)
{
    assert_int_equal(bl_json_kindof(v), BL_JSON_INT);
    assert_int_equal(bl_json_get_int(v), expected);
}

/* The document's keys, in order, joined by commas. */
static void check_keys(const bl_json *object, const char *expected)
{
    char keys[1024] = "";
    for (size_t i = 0; i < bl_json_size(object); i++) {
        if (i > 0)
            strcat(keys, ",");
        strcat(keys, bl_json_key_at(object, i, NULL));
    }
    assert_string_equal(keys, expected);
}

/* The document must be writable as JSON (UTF-8, finite numbers). */
static void check_writable(const bl_json *v)
{
    char *text = NULL;
    OK_E(bl_json_canonical(v, &text, NULL, &e_));
    bl_free(text);
}

static const char *const host_keys =
    "machine,kernel,os,product,cpu,memory,load_average,pressure,thermal,power_supply,compiler";

/* Files written under a fake root, path and text. */
typedef struct fake_file {
    const char *rel, *text;
} fake_file;

static void put_files(const char *root, const fake_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put_file(root, files[i].rel, files[i].text);
}

/* A full fake host: proc/, sys/ and etc/ under root. */
static void build_fake_host(const char *root)
{
    static const fake_file files[] = {
        {"proc/cpuinfo",
         "processor\t: 0\nvendor_id\t: GenuineFake\nmodel\t\t: 85\n"
         "model name\t: Fake CPU 9000 @ 3.00GHz\ncpu MHz\t\t: 2999.998\n\n"
         "processor\t: 1\nmodel name\t: Fake CPU 9000 @ 3.00GHz\n"},
        {"proc/meminfo",
         "MemTotal:       16318412 kB\nMemFree:         1000000 kB\n"
         "MemAvailable:   12000000 kB\nSwapCached:            0 kB\n"
         "SwapTotal:       2097148 kB\nSwapFree:        2000000 kB\n"},
        {"proc/loadavg", "0.50 1.25 2.75 3/105 31310\n"},
        {"proc/pressure/cpu",
         "some avg10=1.50 avg60=0.75 avg300=0.25 total=123456\n"
         "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"},
        {"proc/pressure/memory",
         "some avg10=0.10 avg60=0.20 avg300=0.30 total=42\n"
         "full avg10=0.05 avg60=0.06 avg300=0.07 total=7\n"},
        /* No "full" line, as older kernels write for the CPU. */
        {"proc/pressure/io", "some avg10=3.00 avg60=2.00 avg300=1.00 total=99\n"},
        {"sys/devices/system/cpu/smt/active", "1\n"},
        {"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n"},
        {"sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "3000000\n"},
        {"sys/devices/system/cpu/cpu0/cpufreq/scaling_min_freq", "800000\n"},
        {"sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", "4500000\n"},
        {"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n"},
        {"sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "1200000\n"},
        {"sys/devices/system/cpu/cpu1/cpufreq/scaling_min_freq", "1000000\n"},
        {"sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq", "4000000\n"},
        {"sys/devices/system/cpu/cpu2/cpufreq/scaling_governor", "performance\n"},
        {"sys/devices/system/cpu/cpu2/cpufreq/scaling_cur_freq", "2000000\n"},
        /* Not CPUs, though their names start with "cpu". */
        {"sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "9999999\n"},
        {"sys/devices/system/cpu/cpuidle/cpufreq/scaling_cur_freq", "9999999\n"},
        {"sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n"},
        {"sys/class/thermal/thermal_zone0/temp", "45500\n"},
        {"sys/class/thermal/thermal_zone10/type", "acpitz\n"},
        {"sys/class/thermal/thermal_zone10/temp", "-2000\n"},
        {"sys/class/thermal/thermal_zone2/type", "broken\n"}, /* no temp */
        {"sys/class/thermal/cooling_device0/type", "Processor\n"},
        {"sys/class/power_supply/BAT0/type", "Battery\n"},
        {"sys/class/power_supply/AC/type", "Mains\n"},
        {"sys/class/power_supply/AC/online", "1\n"},
        {"sys/class/power_supply/USB/type", "USB\n"},
        {"sys/class/power_supply/USB/online", "0\n"},
        {"sys/devices/virtual/dmi/id/product_name", "Fake Machine 1\n"},
        {"etc/os-release",
         "NAME=\"Fake\"\nPRETTY_NAME=\"Fake OS 1.0 (\\\"test\\\")\"\nID=fake\n"},
    };
    put_files(root, files, sizeof files / sizeof *files);
    make_dir(root, "sys/devices/system/cpu/cpu3"); /* offline: no cpufreq */
}

static bl_host_paths paths_under(const char *root, char proc[], char sys[], char etc[])
{
    snprintf(proc, 4096, "%s/proc", root);
    snprintf(sys, 4096, "%s/sys", root);
    snprintf(etc, 4096, "%s/etc", root);
    return (bl_host_paths){proc, sys, etc};
}

/* What every description has from outside the roots. */
static void check_outside_roots(const bl_json *h)
{
    struct utsname uts;
    assert_int_equal(uname(&uts), 0);
    check_text(at(h, "machine"), uts.machine);
    check_text(at(at(h, "kernel"), "release"), uts.release);
    check_text(at(at(h, "kernel"), "version"), uts.version);
    const bl_json *cpu = at(h, "cpu");
    check_int(at(cpu, "logical_cpus"), sysconf(_SC_NPROCESSORS_CONF));
    check_int(at(cpu, "online"), sysconf(_SC_NPROCESSORS_ONLN));
    const bl_json *compiler = at(h, "compiler");
    check_keys(compiler, "id,version,flags");
#if defined(__clang__)
    check_text(at(compiler, "id"), "Clang");
#elif defined(__GNUC__)
    check_text(at(compiler, "id"), "GNU");
#endif
    assert_non_null(strstr(bl_json_get_string(at(compiler, "flags"), NULL), "-ffp-contract=off"));
}

/* ---- the host description ------------------------------------------------------ */

static void test_host_from_fake_tree(void **state)
{
    const char *root = bl_test_dir(state);
    build_fake_host(root);
    char proc[4096], sys[4096], etc[4096];
    bl_host_paths paths = paths_under(root, proc, sys, etc);
    bl_json *h = NULL;
    OK_E(bl_host_describe(&paths, &h, &e_));
    check_keys(h, host_keys);
    check_outside_roots(h);
    check_text(at(h, "os"), "Fake OS 1.0 (\"test\")");
    check_text(at(h, "product"), "Fake Machine 1");

    const bl_json *cpu = at(h, "cpu");
    check_keys(cpu, "model,logical_cpus,online,smt,governors,frequency_mhz");
    check_text(at(cpu, "model"), "Fake CPU 9000 @ 3.00GHz");
    assert_int_equal(bl_json_kindof(at(cpu, "smt")), BL_JSON_BOOL);
    assert_true(bl_json_get_bool(at(cpu, "smt")));
    const bl_json *gov = at(cpu, "governors");
    assert_int_equal(bl_json_size(gov), 2);
    check_text(bl_json_at(gov, 0), "performance");
    check_text(bl_json_at(gov, 1), "powersave");
    const bl_json *f = at(cpu, "frequency_mhz");
    check_keys(f, "current_min,current_median,current_max,scaling_min,scaling_max");
    check_real(at(f, "current_min"), 1200.0);
    check_real(at(f, "current_median"), 2000.0);
    check_real(at(f, "current_max"), 3000.0);
    check_real(at(f, "scaling_min"), 800.0);
    check_real(at(f, "scaling_max"), 4500.0);

    const bl_json *m = at(h, "memory");
    check_keys(m, "total_bytes,available_bytes,swap_total_bytes,swap_free_bytes");
    check_int(at(m, "total_bytes"), 16318412LL * 1024);
    check_int(at(m, "available_bytes"), 12000000LL * 1024);
    check_int(at(m, "swap_total_bytes"), 2097148LL * 1024);
    check_int(at(m, "swap_free_bytes"), 2000000LL * 1024);

    const bl_json *load = at(h, "load_average");
    assert_int_equal(bl_json_kindof(load), BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(load), 3);
    check_real(bl_json_at(load, 0), 0.50);
    check_real(bl_json_at(load, 1), 1.25);
    check_real(bl_json_at(load, 2), 2.75);

    const bl_json *p = at(h, "pressure");
    check_keys(p, "cpu,memory,io");
    check_keys(at(p, "cpu"), "some_avg10,some_avg60,some_avg300,some_total_us,"
                              "full_avg10,full_avg60,full_avg300,full_total_us");
    check_real(at(at(p, "cpu"), "some_avg10"), 1.50);
    check_real(at(at(p, "cpu"), "some_avg60"), 0.75);
    check_real(at(at(p, "cpu"), "some_avg300"), 0.25);
    check_int(at(at(p, "cpu"), "some_total_us"), 123456);
    check_real(at(at(p, "cpu"), "full_avg10"), 0.0);
    check_int(at(at(p, "cpu"), "full_total_us"), 0);
    check_real(at(at(p, "memory"), "some_avg10"), 0.10);
    check_real(at(at(p, "memory"), "some_avg300"), 0.30);
    check_int(at(at(p, "memory"), "some_total_us"), 42);
    check_real(at(at(p, "memory"), "full_avg60"), 0.06);
    check_int(at(at(p, "memory"), "full_total_us"), 7);
    check_real(at(at(p, "io"), "some_avg10"), 3.0);
    check_int(at(at(p, "io"), "some_total_us"), 99);
    check_null(at(at(p, "io"), "full_avg10"));
    check_null(at(at(p, "io"), "full_total_us"));

    /* By zone number (10 after 2), a failed sensor null. */
    const bl_json *t = at(h, "thermal");
    assert_int_equal(bl_json_size(t), 3);
    check_keys(bl_json_at(t, 0), "zone,type,celsius");
    check_int(at(bl_json_at(t, 0), "zone"), 0);
    check_text(at(bl_json_at(t, 0), "type"), "x86_pkg_temp");
    check_real(at(bl_json_at(t, 0), "celsius"), 45.5);
    check_int(at(bl_json_at(t, 1), "zone"), 2);
    check_text(at(bl_json_at(t, 1), "type"), "broken");
    check_null(at(bl_json_at(t, 1), "celsius"));
    check_int(at(bl_json_at(t, 2), "zone"), 10);
    check_text(at(bl_json_at(t, 2), "type"), "acpitz");
    check_real(at(bl_json_at(t, 2), "celsius"), -2.0);

    const bl_json *ps = at(h, "power_supply");
    assert_int_equal(bl_json_size(ps), 3);
    check_keys(bl_json_at(ps, 0), "name,type,online");
    check_text(at(bl_json_at(ps, 0), "name"), "AC");
    check_text(at(bl_json_at(ps, 0), "type"), "Mains");
    assert_true(bl_json_get_bool(at(bl_json_at(ps, 0), "online")));
    check_text(at(bl_json_at(ps, 1), "name"), "BAT0");
    check_text(at(bl_json_at(ps, 1), "type"), "Battery");
    check_null(at(bl_json_at(ps, 1), "online"));
    check_text(at(bl_json_at(ps, 2), "name"), "USB");
    assert_int_equal(bl_json_kindof(at(bl_json_at(ps, 2), "online")), BL_JSON_BOOL);
    assert_false(bl_json_get_bool(at(bl_json_at(ps, 2), "online")));

    check_writable(h);
    bl_json_destroy(h);
}

/* The fallbacks: an ARM cpuinfo without "model name", an os-release
 * without PRETTY_NAME, SMT off, and text that is not UTF-8. */
static void test_host_fallbacks(void **state)
{
    const char *root = bl_test_dir(state);
    static const fake_file files[] = {
        {"proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n"
                         "CPU architecture: 8\nCPU part\t: 0xd0c\n"},
        {"etc/os-release", "ID=fake\nVERSION_ID=\"2\"\n"},
        {"sys/devices/system/cpu/smt/active", "0\n"},
        {"sys/devices/virtual/dmi/id/product_name", "Box \xff\xfe\n"},
    };
    put_files(root, files, sizeof files / sizeof *files);
    char proc[4096], sys[4096], etc[4096];
    bl_host_paths paths = paths_under(root, proc, sys, etc);
    bl_json *h = NULL;
    OK_E(bl_host_describe(&paths, &h, &e_));
    check_text(at(at(h, "cpu"), "model"), "CPU implementer 0x41 part 0xd0c");
    check_text(at(h, "os"), "fake 2");
    assert_false(bl_json_get_bool(at(at(h, "cpu"), "smt")));
    check_text(at(h, "product"), "Box ??");
    check_writable(h);
    bl_json_destroy(h);

    /* A "Hardware" line names ARM boards. */
    put_file(root, "proc/cpuinfo", "processor\t: 0\nCPU part\t: 0xd0c\nHardware\t: Fake Board\n");
    OK_E(bl_host_describe(&paths, &h, &e_));
    check_text(at(at(h, "cpu"), "model"), "Fake Board");
    bl_json_destroy(h);
}

static void check_empty_host(const bl_json *h)
{
    check_keys(h, host_keys);
    check_outside_roots(h);
    check_null(at(h, "os"));
    check_null(at(h, "product"));
    const bl_json *cpu = at(h, "cpu");
    check_null(at(cpu, "model"));
    check_null(at(cpu, "smt"));
    assert_int_equal(bl_json_kindof(at(cpu, "governors")), BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(at(cpu, "governors")), 0);
    const bl_json *f = at(cpu, "frequency_mhz");
    for (size_t i = 0; i < bl_json_size(f); i++)
        check_null(bl_json_value_at(f, i));
    assert_int_equal(bl_json_size(f), 5);
    const bl_json *m = at(h, "memory");
    assert_int_equal(bl_json_size(m), 4);
    for (size_t i = 0; i < bl_json_size(m); i++)
        check_null(bl_json_value_at(m, i));
    check_null(at(h, "load_average"));
    const bl_json *p = at(h, "pressure");
    check_keys(p, "cpu,memory,io");
    for (size_t i = 0; i < 3; i++)
        check_null(bl_json_value_at(p, i));
    assert_int_equal(bl_json_kindof(at(h, "thermal")), BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(at(h, "thermal")), 0);
    assert_int_equal(bl_json_kindof(at(h, "power_supply")), BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(at(h, "power_supply")), 0);
    check_writable(h);
}

/* Containers lack most sources: nothing there is nulls and empty lists,
 * never an error; the same for roots that do not exist at all. */
static void test_host_with_nothing(void **state)
{
    (void)state;
    char *root = bl_test_mkdtemp();
    make_dir(root, "proc");
    make_dir(root, "sys");
    make_dir(root, "etc");
    char proc[4096], sys[4096], etc[4096];
    bl_host_paths paths = paths_under(root, proc, sys, etc);
    bl_json *h = NULL;
    OK_E(bl_host_describe(&paths, &h, &e_));
    check_empty_host(h);
    bl_json_destroy(h);

    bl_test_rmtree(root);
    OK_E(bl_host_describe(&paths, &h, &e_));
    check_empty_host(h);
    bl_json_destroy(h);
    free(root);
}

/* The real host: whatever it has, the document is complete and writable,
 * and it agrees with a record's environment.json, which reads the same
 * sources. */
static void test_host_real(void **state)
{
    (void)state;
    bl_json *h = NULL, *env = NULL;
    OK_E(bl_host_describe(NULL, &h, &e_));
    check_keys(h, host_keys);
    check_outside_roots(h);
    check_writable(h);
    OK_E(bl_environment_json(&env, &e_));
    assert_true(bl_json_equal(at(h, "os"), at(env, "os")));
    assert_true(bl_json_equal(at(at(h, "cpu"), "model"), at(env, "cpu")) ||
                bl_json_kindof(at(env, "cpu")) == BL_JSON_NULL);
    assert_true(bl_json_equal(at(h, "compiler"), at(env, "compiler")));
    bl_json_destroy(env);
    bl_json_destroy(h);
}

/* ---- /proc/<pid>/stat ------------------------------------------------------------ */

/* A stat line of pid with `comm` and utime, stime. */
static void put_stat(const char *proc, long pid, const char *comm, long utime, long stime)
{
    char rel[64], text[512];
    snprintf(rel, sizeof rel, "%ld/stat", pid);
    snprintf(text, sizeof text,
             "%ld (%s) S 1 %ld %ld 0 -1 4194560 1200 0 3 0 %ld %ld 0 0 20 0 1 0 51234 "
             "12345678 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
             pid, comm, pid, pid, utime, stime);
    put_file(proc, rel, text);
}

static int by_pid(const void *pa, const void *pb)
{
    const bl_proc_times *a = pa, *b = pb;
    return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The fake /proc of the parser tests. */
static void build_fake_proc(const char *proc)
{
    /* A name may hold spaces and ')': it ends at the last ')'. */
    put_stat(proc, 123, "my (odd) prog) x", 250, 75);
    put_stat(proc, 45, "plain", 7, 3);
    put_stat(proc, 200, "caf\xc3\xa9", 1, 1);
    put_stat(proc, 201, "bad\xff", 0, 0);
    put_file(proc, "77/stat", "77 (cut short) S 1 2 3\n");        /* too few fields */
    put_file(proc, "78/stat", "78 (letters) S 1 2 3 4 5 6 7 8 9 10 x y 0\n");
    put_file(proc, "99/stat", "98 (other) S 1 2 3 4 5 6 7 8 9 10 11 12 0\n"); /* not 99's */
    put_file(proc, "79/stat", "79 no-parentheses S 1 2 3 4 5 6 7 8 9 10 11 12 0\n");
    make_dir(proc, "88"); /* vanished: its stat is gone */
    put_stat(proc, 1, "self-like", 5, 5);
    put_file(proc, "self/stat", "1 (self) S 1 2 3 4 5 6 7 8 9 10 11 12 0\n");
    put_file(proc, "12a/stat", "12 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 0\n");
    put_file(proc, "loadavg", "0.50 1.25 2.75 3/105 31310\n");
}

static void test_proc_stat_parser(void **state)
{
    const char *root = bl_test_dir(state);
    char proc[4096];
    snprintf(proc, sizeof proc, "%s/proc", root);
    build_fake_proc(proc);
    bl_proc_times *t = NULL;
    size_t n = 0;
    OK_E(bl_proc_times_read(proc, &t, &n, &e_));
    assert_int_equal(n, 5);
    qsort(t, n, sizeof *t, by_pid);
    assert_int_equal(t[0].pid, 1);
    assert_string_equal(t[0].executable, "self-like");
    assert_int_equal(t[0].cpu_ticks, 10);
    assert_int_equal(t[1].pid, 45);
    assert_string_equal(t[1].executable, "plain");
    assert_int_equal(t[1].cpu_ticks, 10);
    assert_int_equal(t[2].pid, 123);
    assert_string_equal(t[2].executable, "my (odd) prog) x");
    assert_int_equal(t[2].cpu_ticks, 325);
    assert_int_equal(t[3].pid, 200);
    assert_string_equal(t[3].executable, "caf\xc3\xa9");
    assert_int_equal(t[4].pid, 201);
    assert_string_equal(t[4].executable, "bad?");
    bl_free(t);

    /* Nothing parsable, or no directory at all: an OSError with the reason. */
    bl_error err = {0};
    char empty[4096];
    snprintf(empty, sizeof empty, "%s/empty", root);
    make_dir(root, "empty");
    bl_proc_times stale;
    t = &stale; /* must be reset */
    assert_int_equal(bl_proc_times_read(empty, &t, &n, &err), BL_EOS);
    assert_null(t);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.msg, "no process could be read"));
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/missing", root);
    assert_int_equal(bl_proc_times_read(missing, &t, &n, &err), BL_EOS);
    assert_non_null(strstr(err.msg, "cannot read"));
    assert_null(t);
}

/* The real /proc has this process, with the name /proc/self/comm gives. */
static void test_proc_real_has_self(void **state)
{
    (void)state;
    char comm[64] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    assert_non_null(f);
    assert_non_null(fgets(comm, sizeof comm, f));
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    bl_proc_times *t = NULL;
    size_t n = 0;
    OK_E(bl_proc_times_read(NULL, &t, &n, &e_));
    bool found = false;
    for (size_t i = 0; i < n; i++)
        if (t[i].pid == getpid()) {
            found = true;
            assert_string_equal(t[i].executable, comm);
        }
    assert_true(found);
    bl_free(t);
}

/* ---- the judgement ---------------------------------------------------------------- */

static const bl_proc_times judge_before[] = {
    {10, "busy", 1000}, {11, "idle", 500},  {12, "skipped", 0}, {13, "gone", 100},
    {15, "edge", 50},   {16, "busy2", 0},   {17, "reused", 900}, {19, "busiest", 10},
    {20, "below", 100},
};
/* Scrambled: the output order must not depend on it. */
static const bl_proc_times judge_after[] = {
    {16, "busy2", 170}, {11, "idle", 501}, {14, "new", 5000}, {12, "skipped", 1000},
    {17, "reused", 10}, {15, "edge", 54},  {10, "busy", 1170}, {19, "busiest", 200},
    {20, "below", 103},
};

static void test_activity_judge(void **state)
{
    (void)state;
    const int64_t skip[] = {12};
    bl_json *arr = NULL;
    /* 2 s at 100 ticks per second: 200 ticks are 100 %. */
    OK_E(bl_activity_judge(judge_before, 9, judge_after, 9, 2.0, 100.0, 2.0, skip, 1, &arr, &e_));
    /* 19: 190 ticks, 95 %; 10 and 16: 170 ticks, 85 % (ties by pid); 15:
     * 4 ticks, exactly the threshold. Not listed: 11 (0.5 %), 20 (1.5 %),
     * 12 (skipped), 13 (ended), 14 (started), 17 (fewer ticks: reused). */
    assert_int_equal(bl_json_size(arr), 4);
    const int64_t pids[] = {19, 10, 16, 15};
    const char *names[] = {"busiest", "busy", "busy2", "edge"};
    const double percents[] = {95.0, 85.0, 85.0, 2.0};
    for (size_t i = 0; i < 4; i++) {
        const bl_json *p = bl_json_at(arr, i);
        check_keys(p, "pid,executable,cpu_percent");
        check_int(at(p, "pid"), pids[i]);
        check_text(at(p, "executable"), names[i]);
        check_real(at(p, "cpu_percent"), percents[i]);
    }
    bl_json_destroy(arr);

    /* Without the skip list, 12 (500 %: it had several CPUs) comes first. */
    OK_E(bl_activity_judge(judge_before, 9, judge_after, 9, 2.0, 100.0, 2.0, NULL, 0, &arr, &e_));
    assert_int_equal(bl_json_size(arr), 5);
    check_int(at(bl_json_at(arr, 0), "pid"), 12);
    check_real(at(bl_json_at(arr, 0), "cpu_percent"), 500.0);
    bl_json_destroy(arr);

    /* No samples: nothing listed. */
    OK_E(bl_activity_judge(NULL, 0, NULL, 0, 1.0, 100.0, 2.0, NULL, 0, &arr, &e_));
    assert_int_equal(bl_json_kindof(arr), BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(arr), 0);
    bl_json_destroy(arr);

    bl_error err = {0};
    assert_int_equal(bl_activity_judge(judge_before, 9, judge_after, 9, 0.0, 100.0, 2.0, NULL,
                                       0, &arr, &err),
                     BL_EVALUE);
    assert_null(arr);
    assert_int_equal(bl_activity_judge(judge_before, 9, judge_after, 9, 1.0, 0.0, 2.0, NULL, 0,
                                       &arr, &err),
                     BL_EVALUE);
    assert_int_equal(bl_activity_judge(judge_before, 9, judge_after, 9, 1.0, 100.0, NAN, NULL,
                                       0, &arr, &err),
                     BL_EVALUE);
}

/* ---- the snapshot ------------------------------------------------------------------ */

static pid_t children[2];

/* Children never outlive a test, failed or not. */
static int kill_children(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++)
        if (children[i] > 0) {
            kill(children[i], SIGKILL);
            waitpid(children[i], NULL, 0);
            children[i] = 0;
        }
    return 0;
}

static bool listed(const bl_json *processes, int64_t pid)
{
    for (size_t i = 0; i < bl_json_size(processes); i++)
        if (bl_json_get_int(at(bl_json_at(processes, i), "pid")) == pid)
            return true;
    return false;
}

static const char *const activity_keys =
    "status,cpu_threshold_percent,interval_seconds,processes,method,limits,load_average,"
    "pressure";

static void test_activity_snapshot_real(void **state)
{
    (void)state;
    children[0] = fork();
    assert_true(children[0] >= 0);
    if (children[0] == 0) {
        volatile unsigned long spin = 0;
        for (;;)
            spin++;
    }
    children[1] = fork();
    assert_true(children[1] >= 0);
    if (children[1] == 0)
        for (;;)
            pause();

    const int64_t skip[] = {getpid(), getppid()};
    bl_activity_options o = {.cpu_threshold_percent = 2.0,
                             .interval_seconds = 0.5,
                             .skip = skip,
                             .nskip = 2};
    bl_json *doc = NULL;
    OK_E(bl_activity_snapshot(&o, &doc, &e_));
    check_keys(doc, activity_keys);
    check_text(at(doc, "status"), "available");
    check_real(at(doc, "cpu_threshold_percent"), 2.0);
    /* The sleep lasts at least the interval, so the measured one does. */
    assert_true(bl_json_get_real(at(doc, "interval_seconds")) >= 0.5);
    const bl_json *processes = at(doc, "processes");
    assert_true(listed(processes, children[0]));
    assert_false(listed(processes, children[1]));
    assert_false(listed(processes, getpid()));
    for (size_t i = 1; i < bl_json_size(processes); i++)
        assert_true(bl_json_get_real(at(bl_json_at(processes, i - 1), "cpu_percent")) >=
                    bl_json_get_real(at(bl_json_at(processes, i), "cpu_percent")));
    assert_non_null(strstr(bl_json_get_string(at(doc, "method"), NULL), "/proc/<pid>/stat"));
    assert_non_null(strstr(bl_json_get_string(at(doc, "limits"), NULL), "GPU idleness"));
    check_keys(at(doc, "pressure"), "cpu,memory,io");
    check_writable(doc);
    bl_json_destroy(doc);

    /* The sleeper was there to be judged: it is in a sample. */
    bl_proc_times *t = NULL;
    size_t n = 0;
    OK_E(bl_proc_times_read(NULL, &t, &n, &e_));
    bool seen = false;
    for (size_t i = 0; i < n; i++)
        seen = seen || t[i].pid == children[1];
    assert_true(seen);
    bl_free(t);
    kill_children(NULL);
}

static void test_activity_snapshot_unavailable(void **state)
{
    const char *root = bl_test_dir(state);
    const char *missing = bl_test_path(state, "missing");
    bl_activity_options o = {.cpu_threshold_percent = 2.0,
                             .interval_seconds = 0.01,
                             .proc_root = missing};
    bl_json *doc = NULL;
    OK_E(bl_activity_snapshot(&o, &doc, &e_));
    check_keys(doc, "status,cpu_threshold_percent,interval_seconds,processes,method,limits,"
                     "load_average,pressure,diagnostic");
    check_text(at(doc, "status"), "unavailable");
    check_null(at(doc, "interval_seconds"));
    assert_int_equal(bl_json_kindof(at(doc, "processes")), BL_JSON_ARRAY);
    assert_int_equal(bl_json_size(at(doc, "processes")), 0);
    check_null(at(doc, "load_average"));
    check_null(at(at(doc, "pressure"), "cpu"));
    assert_non_null(strstr(bl_json_get_string(at(doc, "diagnostic"), NULL), "cannot read"));
    check_writable(doc);
    bl_json_destroy(doc);

    /* A /proc with no process in it. */
    make_dir(root, "missing");
    OK_E(bl_activity_snapshot(&o, &doc, &e_));
    check_text(at(doc, "status"), "unavailable");
    assert_non_null(strstr(bl_json_get_string(at(doc, "diagnostic"), NULL), "no process"));
    bl_json_destroy(doc);

    /* A fake /proc where nothing runs: available, nothing listed, the
     * load from that tree. */
    char proc[4096];
    snprintf(proc, sizeof proc, "%s/proc", root);
    build_fake_proc(proc);
    o.proc_root = proc;
    OK_E(bl_activity_snapshot(&o, &doc, &e_));
    check_keys(doc, activity_keys);
    check_text(at(doc, "status"), "available");
    assert_int_equal(bl_json_size(at(doc, "processes")), 0);
    check_real(bl_json_at(at(doc, "load_average"), 2), 2.75);
    check_null(at(at(doc, "pressure"), "io"));
    bl_json_destroy(doc);

    /* Options that make no sense are an error, not telemetry. */
    bl_error err = {0};
    o.interval_seconds = 0.0;
    assert_int_equal(bl_activity_snapshot(&o, &doc, &err), BL_EVALUE);
    assert_null(doc);
    o.interval_seconds = 1.0;
    o.cpu_threshold_percent = NAN;
    assert_int_equal(bl_activity_snapshot(&o, &doc, &err), BL_EVALUE);
}

/* ---- allocation failures ------------------------------------------------------------ */

static bl_status op_host(void *ctx, bl_error *err)
{
    bl_json *h = NULL;
    bl_status st = bl_host_describe(ctx, &h, err);
    return bl_test_json_made(st, h);
}

static bl_status op_proc(void *ctx, bl_error *err)
{
    bl_proc_times *t = NULL;
    size_t n = 0;
    bl_status st = bl_proc_times_read(ctx, &t, &n, err);
    if (st != BL_OK && (t || n))
        st = BL_ERUNTIME;
    bl_free(t);
    return st;
}

static bl_status op_judge(void *ctx, bl_error *err)
{
    (void)ctx;
    bl_json *arr = NULL;
    bl_status st =
        bl_activity_judge(judge_before, 9, judge_after, 9, 2.0, 100.0, 2.0, NULL, 0, &arr, err);
    return bl_test_json_made(st, arr);
}

static bl_status op_snapshot(void *ctx, bl_error *err)
{
    bl_activity_options o = {.cpu_threshold_percent = 2.0,
                             .interval_seconds = 0.001,
                             .proc_root = ctx};
    bl_json *doc = NULL;
    bl_status st = bl_activity_snapshot(&o, &doc, err);
    return bl_test_json_made(st, doc);
}

static void test_allocation_failures(void **state)
{
    const char *root = bl_test_dir(state);
    build_fake_host(root);
    char proc[4096], sys[4096], etc[4096];
    bl_host_paths paths = paths_under(root, proc, sys, etc);
    build_fake_proc(proc);
    /* Many allocations each: every one of them fails once. */
    assert_true(bl_test_fail_each(op_host, &paths, 1) > 80);
    assert_true(bl_test_fail_each(op_host, NULL, 1) > 40);
    assert_true(bl_test_fail_each(op_proc, proc, 1) > 1);
    assert_true(bl_test_fail_each(op_judge, NULL, 1) > 10);
    assert_true(bl_test_fail_each(op_snapshot, proc, 1) > 30);
    /* Unavailable telemetry allocates too. */
    char missing[4096];
    snprintf(missing, sizeof missing, "%s/missing", root);
    assert_true(bl_test_fail_each(op_snapshot, missing, 1) > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        BL_TEST_IN_DIR(test_host_from_fake_tree),
        BL_TEST_IN_DIR(test_host_fallbacks),
        cmocka_unit_test(test_host_with_nothing),
        cmocka_unit_test(test_host_real),
        BL_TEST_IN_DIR(test_proc_stat_parser),
        cmocka_unit_test(test_proc_real_has_self),
        cmocka_unit_test(test_activity_judge),
        cmocka_unit_test_teardown(test_activity_snapshot_real, kill_children),
        BL_TEST_IN_DIR(test_activity_snapshot_unavailable),
        BL_TEST_IN_DIR(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
