/* What several measurement files share: the end of a receipt builder (the
 * receipts are built member by member with core's sticky bl_json_put and
 * bl_json_push, json.h, and checked once at the end), receipt members, the
 * host's load (host_load.c), the running executable's build id
 * (executable.c) and the monotonic clock. */
#ifndef BL_MEASURE_INTERNAL_H
#define BL_MEASURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/json.h"
#include "brainlesslab/status.h"

/* The end of a builder that returns its value (bl_json_hand_over for one
 * that hands it out): value when st is BL_OK, else NULL (value freed). */
bl_json *bl_measure_built(bl_status st, bl_json *value);
/* A real, or null when v is not finite (JSON has no NaN). */
bl_json *bl_measure_real_or_null(double v);

/* The string member `key` of object o, or NULL (o NULL, key absent or not
 * a string): for reading receipts that may come from a failed worker. */
const char *bl_measure_string(const bl_json *o, const char *key);
/* Both strings present and equal. */
bool bl_measure_equal(const char *a, const char *b);
/* The receipts' peak_rss block (§1.9): getrusage's high-water mark. */
bl_json *bl_measure_peak_rss(void);

/* ---- how busy the host is (host_load.c) ---------------------------------- */
/* Each reads under proc_root (NULL: "/proc"); a missing or unreadable source
 * is a JSON null, never an error; only running out of memory is. */

/* <proc_root>/loadavg as [1, 5, 15] minute averages (reals), or null. */
bl_status bl_measure_load_average(const char *proc_root, bl_json **out, bl_error *err);

/* <proc_root>/pressure/{cpu,memory,io} (pressure stall information) as
 * {"cpu", "memory", "io"}, each null when its file is missing, else
 * {"some_avg10", "some_avg60", "some_avg300" (percent, reals),
 * "some_total_us" (microseconds stalled, integer), "full_avg10",
 * "full_avg60", "full_avg300", "full_total_us"}, a member null when its
 * line or value is missing or malformed (older kernels have no "full" line
 * for the CPU). */
bl_status bl_measure_pressure(const char *proc_root, bl_json **out, bl_error *err);

/* The GNU build id of the running executable (the linker's SHA-1 of it,
 * in its note segment, read in memory: no file is read) as lowercase hex
 * into hex[size]; false when the program has none or it does not fit
 * (41 bytes hold a SHA-1 id). */
bool bl_measure_build_id(char *hex, size_t size);

/* CLOCK_MONOTONIC in seconds. */
double bl_measure_monotonic(void);

/* The evaluation-span and record-writing boundary texts of the receipts. */
extern const char bl_profile_execute_boundary[];
extern const char bl_profile_record_boundary[];

#endif
