#include "brainlesslab/status.h"

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

bl_status bl_error_prefix(bl_error *err, const char *fmt, ...)
{
    if (!err)
        return BL_OK;
    char prefix[BL_ERROR_MAX], old[BL_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s: %s", prefix, old);
    return err->status;
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
