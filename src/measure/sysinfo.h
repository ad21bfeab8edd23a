/* Reading the kernel's and the distribution's text files (/proc, /sys,
 * /etc) into host descriptions. Shared by the environment of a record
 * (records/provenance.c) and the host conditions of a measurement
 * (measure/host.c, measure/activity.c), so the two never disagree on what
 * a field of /proc/cpuinfo or /etc/os-release means.
 *
 * Every reader takes the root it reads under (NULL: the real one), so tests
 * point it at a fake tree. A missing or unreadable source is "unknown"
 * (false, or a JSON null), never an error: containers and small machines
 * lack many of them. Only running out of memory is an error. */
#ifndef BL_MEASURE_SYSINFO_H
#define BL_MEASURE_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/json.h"
#include "brainlesslab/status.h"

/* Copies the n bytes at s into dst (size >= 1), truncated and
 * NUL-terminated. Text that is not UTF-8 would make a JSON document
 * unwritable, so such text becomes ASCII with '?' for every non-ASCII
 * byte. */
void bl_sysinfo_text(char *dst, size_t size, const char *s, size_t n);
/* The same for a NUL-terminated string, trimmed of trailing blanks and
 * line ends. */
void bl_sysinfo_trimmed(char *dst, size_t size, const char *s);

/* Room for a path under a root (Linux's PATH_MAX). */
#define BL_SYSINFO_PATH_MAX 4096

/* "<root>/<rel>" into dst; false when it does not fit. */
bool bl_sysinfo_path(char *dst, size_t size, const char *root, const char *rel);

/* The first line of the file at `path`, trimmed; false when the file is
 * missing, unreadable (sysfs reports some sensors' faults as read errors)
 * or empty. */
bool bl_sysinfo_first_line(const char *path, char *dst, size_t size);

/* The value of the first "key : value" line of <proc_root>/cpuinfo with
 * `key` (proc_root NULL: "/proc"). */
bool bl_sysinfo_cpuinfo_field(const char *proc_root, const char *key, char *dst, size_t size);

/* The operating system's name from <etc_root>/os-release: PRETTY_NAME,
 * else "ID VERSION_ID", else ID. etc_root NULL means the real system,
 * where /usr/lib/os-release stands in for a missing /etc/os-release (the
 * os-release(5) rule); a given root is read alone, so a fake tree never
 * mixes with the host's files. */
bool bl_sysinfo_os_name(const char *etc_root, char *dst, size_t size);

/* <proc_root>/loadavg as [1, 5, 15] minute averages (reals), or null. */
bl_status bl_sysinfo_load_average(const char *proc_root, bl_json **out, bl_error *err);

/* <proc_root>/pressure/{cpu,memory,io} (pressure stall information) as
 * {"cpu", "memory", "io"}, each null when its file is missing, else
 * {"some_avg10", "some_avg60", "some_avg300" (percent, reals),
 * "some_total_us" (microseconds stalled, integer), "full_avg10",
 * "full_avg60", "full_avg300", "full_total_us"}, a member null when its
 * line or value is missing or malformed (older kernels have no "full" line
 * for the CPU). */
bl_status bl_sysinfo_pressure(const char *proc_root, bl_json **out, bl_error *err);

#endif
