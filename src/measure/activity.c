/* The background-activity check (spec/measurement.md §1.9, the Linux row
 * of §8). The reference takes one `ps` snapshot, whose CPU percentage is a
 * lifetime average on Linux, and also flags processes by name. Here CPU use
 * is measured over an interval from two /proc/<pid>/stat samples, so a
 * process that is busy now is seen and one that was busy long ago is not,
 * and processes are judged only by what they use, never by their names. */
#include "brainlesslab/measure.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/sysinfo.h"
#include "measure/measure_internal.h"

/* ---- reading /proc/<pid>/stat ------------------------------------------------ */

/* A decimal number making up the whole of s (a /proc entry name). */
static bool parse_pid(const char *s, int64_t *pid)
{
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return false;
    *pid = v;
    return true;
}

/* An unsigned field of the stat line at *s (after a space), advancing *s. */
static bool next_field(const char **s, uint64_t *v)
{
    const char *p = *s;
    if (*p != ' ')
        return false;
    p++;
    const char *start = p;
    while (*p && *p != ' ' && *p != '\n')
        p++;
    *s = p;
    if (start == p)
        return false;
    if (!v)
        return true;
    if (*start < '0' || *start > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(start, &end, 10);
    if (end != p || errno != 0)
        return false;
    *v = x;
    return true;
}

/* "pid (comm) state ppid ... utime stime ...": the command name may hold
 * spaces and ')' (a program can name itself anything), and nothing after
 * it can hold ')', so the name ends at the last ')'. utime and stime are
 * fields 14 and 15, the 12th and 13th after the name. */
static bool parse_stat(const char *text, int64_t pid, bl_proc_times *t)
{
    char *end;
    errno = 0;
    long long first = strtoll(text, &end, 10);
    const char *open = strchr(text, '(');
    const char *close = strrchr(text, ')');
    if (end == text || errno != 0 || first != pid || !open || !close || close < open ||
        strncmp(end, " (", 2) != 0 || end + 1 != open)
        return false;
    const char *p = close + 1;
    uint64_t utime = 0, stime = 0;
    for (int field = 3; field <= 15; field++)
        if (!next_field(&p, field == 14 ? &utime : field == 15 ? &stime : NULL))
            return false;
    if (utime > UINT64_MAX - stime)
        return false;
    t->pid = pid;
    bl_sysinfo_text(t->executable, sizeof t->executable, open + 1, (size_t)(close - open - 1));
    t->cpu_ticks = utime + stime;
    return true;
}

/* One process's times; false when it has vanished (its files go with it)
 * or its stat line cannot be parsed. */
static bool read_process(const char *root, const char *name, int64_t pid, bl_proc_times *t)
{
    char path[BL_SYSINFO_PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s/stat", root, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    /* A stat line is well under 1 KiB (52 numbers and a name of at most
     * 64 bytes); the fields needed come early in it. */
    char text[4096];
    size_t len = 0;
    ssize_t got;
    while (len < sizeof text - 1 &&
           ((got = read(fd, text + len, sizeof text - 1 - len)) > 0 || (got < 0 && errno == EINTR)))
        if (got > 0)
            len += (size_t)got;
    close(fd);
    text[len] = '\0';
    return parse_stat(text, pid, t);
}

bl_status bl_proc_times_read(const char *proc_root, bl_proc_times **out, size_t *n,
                             bl_error *err)
{
    *out = NULL;
    *n = 0;
    const char *root = proc_root ? proc_root : "/proc";
    DIR *d = opendir(root);
    if (!d)
        return bl_fail(err, BL_EOS, "cannot read %s: %s", root, strerror(errno));
    bl_proc_times *items = NULL;
    size_t count = 0, cap = 0;
    bl_status st = BL_OK;
    struct dirent *e;
    int dir_errno;
    /* errno is cleared before each readdir, whose NULL means the end or a
     * read error. */
    while ((errno = 0, e = readdir(d)) != NULL) {
        int64_t pid;
        bl_proc_times t;
        if (!parse_pid(e->d_name, &pid) || !read_process(root, e->d_name, pid, &t))
            continue;
        if (count == cap) {
            size_t want = cap ? 2 * cap : 256;
            bl_proc_times *grown = bl_realloc(items, want * sizeof *items);
            if (!grown) {
                st = bl_fail(err, BL_ENOMEM, "out of memory reading %s", root);
                break;
            }
            items = grown;
            cap = want;
        }
        items[count++] = t;
    }
    dir_errno = errno;
    closedir(d);
    if (st == BL_OK && dir_errno != 0)
        st = bl_fail(err, BL_EOS, "cannot read %s: %s", root, strerror(dir_errno));
    if (st == BL_OK && count == 0)
        st = bl_fail(err, BL_EOS, "no process could be read under %s", root);
    if (st != BL_OK) {
        bl_free(items);
        return st;
    }
    *out = items;
    *n = count;
    return BL_OK;
}

/* ---- the judgement ----------------------------------------------------------- */

typedef struct listed_process {
    int64_t pid;
    const char *executable;
    double cpu_percent;
} listed_process;

static int compare_by_pid(const void *pa, const void *pb)
{
    int64_t a = (*(const bl_proc_times *const *)pa)->pid;
    int64_t b = (*(const bl_proc_times *const *)pb)->pid;
    return (a > b) - (a < b);
}

/* Highest use first; equal uses by pid, so the order never depends on the
 * order /proc listed them in. */
static int compare_listed(const void *pa, const void *pb)
{
    const listed_process *a = pa, *b = pb;
    if (a->cpu_percent != b->cpu_percent)
        return a->cpu_percent > b->cpu_percent ? -1 : 1;
    return (a->pid > b->pid) - (a->pid < b->pid);
}

static bool skipped(int64_t pid, const int64_t *skip, size_t nskip)
{
    for (size_t i = 0; i < nskip; i++)
        if (skip[i] == pid)
            return true;
    return false;
}

bl_status bl_activity_judge(const bl_proc_times *before, size_t nbefore,
                            const bl_proc_times *after, size_t nafter, double interval_seconds,
                            double ticks_per_second, double threshold_percent,
                            const int64_t *skip, size_t nskip, bl_json **processes,
                            bl_error *err)
{
    *processes = NULL;
    if (!isfinite(interval_seconds) || interval_seconds <= 0)
        return bl_fail(err, BL_EVALUE, "the activity interval must be finite and > 0 seconds");
    if (!isfinite(ticks_per_second) || ticks_per_second <= 0)
        return bl_fail(err, BL_EVALUE, "the clock tick rate must be finite and > 0");
    if (!isfinite(threshold_percent))
        return bl_fail(err, BL_EVALUE, "the activity CPU threshold must be finite");

    bl_status st = BL_OK;
    const bl_proc_times **by_pid = bl_mallocarray(nbefore, sizeof *by_pid);
    listed_process *listed = bl_mallocarray(nafter, sizeof *listed);
    bl_json *arr = NULL;
    size_t nlisted = 0;
    if (!by_pid || !listed) {
        st = bl_fail(err, BL_ENOMEM, "out of memory judging background activity");
        goto done;
    }
    for (size_t i = 0; i < nbefore; i++)
        by_pid[i] = &before[i];
    if (nbefore > 0)
        qsort(by_pid, nbefore, sizeof *by_pid, compare_by_pid);
    double ticks_in_interval = interval_seconds * ticks_per_second;
    for (size_t i = 0; i < nafter; i++) {
        const bl_proc_times *a = &after[i];
        if (skipped(a->pid, skip, nskip))
            continue;
        const bl_proc_times *key = a;
        const bl_proc_times **found =
            nbefore > 0 ? bsearch(&key, by_pid, nbefore, sizeof *by_pid, compare_by_pid) : NULL;
        /* Absent before: started within the interval. Fewer ticks than
         * before: the pid was reused by a newer process. Neither is judged. */
        if (!found || a->cpu_ticks < (*found)->cpu_ticks)
            continue;
        double percent = 100.0 * (double)(a->cpu_ticks - (*found)->cpu_ticks) / ticks_in_interval;
        if (percent >= threshold_percent)
            listed[nlisted++] = (listed_process){a->pid, a->executable, percent};
    }
    if (nlisted > 0)
        qsort(listed, nlisted, sizeof *listed, compare_listed);
    arr = bl_json_array();
    for (size_t i = 0; i < nlisted && st == BL_OK; i++) {
        bl_json *p = bl_json_object();
        bl_json_put(&st, p, "pid", bl_json_int(listed[i].pid), err);
        bl_json_put(&st, p, "executable", bl_json_string(listed[i].executable), err);
        bl_json_put(&st, p, "cpu_percent", bl_json_real(listed[i].cpu_percent), err);
        bl_json_push(&st, arr, p, err);
    }
    if (st == BL_OK && !arr)
        st = bl_fail(err, BL_ENOMEM, "out of memory judging background activity");
done:
    bl_free(by_pid);
    bl_free(listed);
    return bl_json_hand_over(st, arr, processes);
}

/* ---- the snapshot ------------------------------------------------------------ */

/* The longest interval accepted: a day, far beyond any use, and small
 * enough to convert to a timespec exactly. */
#define MAX_INTERVAL_SECONDS 86400.0

static double monotonic_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sleeps the whole time even when signals interrupt the sleep. */
static void sleep_seconds(double seconds)
{
    double whole = floor(seconds);
    struct timespec req = {(time_t)whole, (long)((seconds - whole) * 1e9)}, rem;
    if (req.tv_nsec > 999999999L)
        req.tv_nsec = 999999999L;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR)
        req = rem;
}

static const char method_text[] =
    "two /proc/<pid>/stat samples over the interval; cpu_percent = 100 x (utime + stime ticks "
    "gained) / (interval x ticks per second) for every other process; judged by CPU use, not "
    "by process names";
static const char limits_text[] =
    "does not establish GPU idleness or activity outside the interval; processes started or "
    "ended within the interval are not judged";

bl_status bl_activity_snapshot(const bl_activity_options *o, bl_json **out, bl_error *err)
{
    *out = NULL;
    if (!isfinite(o->cpu_threshold_percent) || o->cpu_threshold_percent <= 0)
        return bl_fail(err, BL_EVALUE, "the activity CPU threshold must be finite and > 0");
    if (!isfinite(o->interval_seconds) || o->interval_seconds <= 0 ||
        o->interval_seconds > MAX_INTERVAL_SECONDS)
        return bl_fail(err, BL_EVALUE, "the activity interval must be within (0, %g] seconds",
                       MAX_INTERVAL_SECONDS);
    const char *proc = o->proc_root ? o->proc_root : "/proc";

    /* Anything but running out of memory makes the telemetry unavailable,
     * with the reason as its diagnostic. */
    bl_error why = {0};
    bl_proc_times *before = NULL, *after = NULL;
    size_t nbefore = 0, nafter = 0;
    bl_json *processes = NULL, *load = NULL, *pressure = NULL;
    double interval = NAN;
    double t0 = monotonic_seconds();
    bl_status got = bl_proc_times_read(proc, &before, &nbefore, &why);
    double t1 = monotonic_seconds();
    if (got == BL_OK) {
        sleep_seconds(o->interval_seconds);
        double t2 = monotonic_seconds();
        got = bl_proc_times_read(proc, &after, &nafter, &why);
        double t3 = monotonic_seconds();
        /* Each process is read once per sample, somewhere within the
         * sample's reading time; midpoint to midpoint is the best estimate
         * of the time between its two reads. */
        interval = ((t2 + t3) - (t0 + t1)) / 2.0;
    }
    long ticks = sysconf(_SC_CLK_TCK);
    if (got == BL_OK && ticks <= 0)
        got = bl_fail(&why, BL_EOS, "the clock tick rate (_SC_CLK_TCK) is unknown");
    if (got == BL_OK)
        got = bl_activity_judge(before, nbefore, after, nafter, interval, (double)ticks,
                                o->cpu_threshold_percent, o->skip, o->nskip, &processes, &why);
    bl_free(before);
    bl_free(after);
    if (got == BL_ENOMEM) {
        if (err)
            *err = why;
        return BL_ENOMEM;
    }
    bool available = got == BL_OK;

    bl_status st = bl_measure_load_average(proc, &load, err);
    if (st == BL_OK)
        st = bl_measure_pressure(proc, &pressure, err);
    bl_json *doc = bl_json_object();
    bl_json_put(&st, doc, "status", bl_json_string(available ? "available" : "unavailable"),
                err);
    bl_json_put(&st, doc, "cpu_threshold_percent", bl_json_real(o->cpu_threshold_percent),
                err);
    bl_json_put(&st, doc, "interval_seconds",
                available ? bl_json_real(interval) : bl_json_null(), err);
    bl_json_put(&st, doc, "processes", available ? processes : bl_json_array(), err);
    bl_json_put(&st, doc, "method", bl_json_string(method_text), err);
    bl_json_put(&st, doc, "limits", bl_json_string(limits_text), err);
    bl_json_put(&st, doc, "load_average", load, err);
    bl_json_put(&st, doc, "pressure", pressure, err);
    if (!available) {
        /* The reason may quote a path given by the caller, in any bytes. */
        char diagnostic[sizeof why.msg];
        bl_sysinfo_text(diagnostic, sizeof diagnostic, why.msg, strlen(why.msg));
        bl_json_put(&st, doc, "diagnostic", bl_json_string(diagnostic), err);
    }
    return bl_json_hand_over(st, doc, out);
}
