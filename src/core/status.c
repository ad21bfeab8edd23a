#include "brainlesslab/status.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kinds[BL_STATUS_COUNT] = {
    [BL_OK] = "OK",
    [BL_EVALUE] = "ValueError",
    [BL_ETYPE] = "TypeError",
    [BL_EKEY] = "KeyError",
    [BL_ENOMEM] = "MemoryError",
    [BL_EEXIST] = "FileExistsError",
    [BL_ENOENT] = "FileNotFoundError",
    [BL_EISDIR] = "IsADirectoryError",
    [BL_EOS] = "OSError",
    [BL_ERUNTIME] = "RuntimeError",
    [BL_EUSAGE] = "UsageError",
    [BL_EINTERRUPT] = "KeyboardInterrupt",
    /* Python's own name for a handled SIGTERM ends the same way. */
    [BL_ETERMINATED] = "SystemExit",
};

const char *bl_status_kind(bl_status status)
{
    if ((unsigned)status >= BL_STATUS_COUNT)
        return "RuntimeError";
    return kinds[status];
}

bl_status bl_vfail(bl_error *err, bl_status status, const char *fmt, va_list ap)
{
    if (err) {
        err->status = status;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        /* One line on stderr, always: fold any newline a message carries. */
        for (char *p = err->msg; *p; p++)
            if (*p == '\n' || *p == '\r')
                *p = ' ';
    }
    return status;
}

bl_status bl_fail(bl_error *err, bl_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bl_vfail(err, status, fmt, ap);
    va_end(ap);
    return status;
}

void bl_error_prefix(bl_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[BL_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* "<prefix>: <old>", truncated at the end like any message. */
    size_t plen = strlen(prefix), olen = strlen(err->msg), cap = sizeof err->msg - 1;
    size_t head = plen + 2 < cap ? plen + 2 : cap;
    size_t keep = olen < cap - head ? olen : cap - head;
    memmove(err->msg + head, err->msg, keep);
    memcpy(err->msg, prefix, head < plen ? head : plen);
    if (head > plen)
        memcpy(err->msg + plen, ": ", head - plen);
    err->msg[head + keep] = '\0';
}

void bl_error_clear(bl_error *err)
{
    if (err) {
        err->status = BL_OK;
        err->msg[0] = '\0';
    }
}

void bl_assert_fail(const char *cond, const char *file, int line)
{
    fprintf(stderr, "brainlesslab: internal error: assertion '%s' failed at %s:%d\n",
            cond, file, line);
    abort();
}

bl_status bl_fail_signal(bl_error *err, int sig)
{
    if (sig == SIGINT || sig == 0)
        return bl_fail(err, BL_EINTERRUPT, "interrupted");
    return bl_fail(err, BL_ETERMINATED, "terminated by %s",
                   sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal");
}
