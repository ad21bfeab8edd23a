/* The helpers of fuzz.h: one temporary directory per process and whole-file
 * writes, shared by the harnesses that need files (inspect, calibration). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char tmpdir[4096];

/* As tests/support.c removes its temporary trees; the name comes from
 * mkdtemp, so the single quotes suffice. */
static void remove_tmpdir(void)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", tmpdir);
}

const char *bl_fuzz_tmpdir(void)
{
    if (tmpdir[0])
        return tmpdir;
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/bl-fuzz-XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    atexit(remove_tmpdir);
    return tmpdir;
}

void bl_fuzz_write(const char *path, const void *data, size_t len)
{
    /* A new file rather than a truncated one: ext4 flushes a file that was
     * truncated and rewritten when it is closed, which made every input wait
     * for the disk (250 inputs/s instead of thousands). */
    if (unlink(path) != 0 && errno != ENOENT) {
        perror(path);
        abort();
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0) {
            perror(path);
            abort();
        }
        p += n;
        len -= (size_t)n;
    }
    if (close(fd) != 0) {
        perror(path);
        abort();
    }
}
