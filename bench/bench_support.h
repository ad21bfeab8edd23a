/* What every benchmark program in bench/ shares: a clock read in seconds and
 * the one-line exit on a failed call. Header-only, since each benchmark is a
 * program of its own; a program defines BENCH_NAME (its name in failure
 * lines) before including it. */
#ifndef BL_BENCH_SUPPORT_H
#define BL_BENCH_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "brainlesslab/status.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME before including bench_support.h"
#endif

/* Seconds on `clock`: CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID
 * or CLOCK_PROCESS_CPUTIME_ID for CPU time (on a shared machine wall time
 * measures the neighbours too). */
static inline double bench_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline _Noreturn void die(const char *what, const bl_error *err)
{
    fprintf(stderr, BENCH_NAME ": %s: %s\n", what, err->msg);
    exit(1);
}

#endif
