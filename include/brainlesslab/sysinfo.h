/* Reading the kernel's and the distribution's text files (/proc, /sys,
 * /etc) into host descriptions. Shared by the environment of a record
 * (src/records/provenance.c) and the host conditions of a measurement
 * (src/measure/host.c, activity.c, host_load.c), so the two never disagree
 * on what a field of /proc/cpuinfo or /etc/os-release means.
 *
 * Every reader takes the root it reads under (NULL: the real one), so tests
 * point it at a fake tree. A missing or unreadable source is "unknown"
 * (false), never an error: containers and small machines lack many of
 * them. */
#ifndef BRAINLESSLAB_SYSINFO_H
#define BRAINLESSLAB_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>

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

#endif
