/* The one way the program reads a file it did not write itself
 * (brainlesslab/file.h): never waiting on open, never reading more than a
 * cap, never mistaking a FIFO or a device for a file. */
#include "brainlesslab/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"

/* What a non-regular file is, for "<path>: is <it>, not a regular file". */
static const char *file_kind(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return NULL;
}

static bl_status not_regular(bl_error *err, const char *path, mode_t mode)
{
    const char *kind = file_kind(mode);
    if (!kind)
        return bl_fail(err, BL_EOS, "%s: not a regular file", path);
    return bl_fail(err, BL_EOS, "%s: is %s, not a regular file", path, kind);
}

static bl_status io_error(bl_error *err, const char *path, int errnum)
{
    bl_status st = errnum == ENOENT ? BL_ENOENT : errnum == EISDIR ? BL_EISDIR : BL_EOS;
    return bl_fail(err, st, "%s: %s", path, strerror(errnum));
}

/* open() fails with ENXIO on a socket and ELOOP on a refused link; naming
 * what the path is says more than the system's wording does. */
static bl_status open_error(bl_error *err, const char *path, unsigned flags, int errnum)
{
    struct stat sb;
    if (errnum == ENXIO || errnum == ELOOP) {
        int got = flags & BL_FILE_NOFOLLOW ? lstat(path, &sb) : stat(path, &sb);
        if (got == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
            return not_regular(err, path, sb.st_mode);
    }
    return io_error(err, path, errnum);
}

bl_status bl_file_open(const char *path, unsigned flags, int *fd, uint64_t *size,
                       bl_error *err)
{
    BL_ASSERT(path && fd && size);
    *fd = -1;
    *size = 0;
    /* A stream (a plan from a pipe) waits for its writer like any reader;
     * everything else must never make open() wait. */
    int oflags = O_RDONLY | O_CLOEXEC | (flags & BL_FILE_STREAM ? 0 : O_NONBLOCK) |
                 (flags & BL_FILE_NOFOLLOW ? O_NOFOLLOW : 0);
    int f = open(path, oflags);
    if (f < 0)
        return open_error(err, path, flags, errno);
    struct stat sb;
    bl_status st = BL_OK;
    if (fstat(f, &sb) != 0)
        st = io_error(err, path, errno);
    /* open() succeeds on a directory; say so rather than fail at read. */
    else if (S_ISDIR(sb.st_mode))
        st = io_error(err, path, EISDIR);
    else if (!S_ISREG(sb.st_mode) && !(flags & BL_FILE_STREAM))
        st = not_regular(err, path, sb.st_mode);
    if (st != BL_OK) {
        close(f);
        return st;
    }
    *fd = f;
    *size = S_ISREG(sb.st_mode) && sb.st_size > 0 ? (uint64_t)sb.st_size : 0;
    return BL_OK;
}

bl_status bl_file_read_upto(int fd, void *buf, size_t n, size_t *got, const char *path,
                            bl_error *err)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, (char *)buf + done, n - done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *got = done;
            return io_error(err, path, errno);
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    *got = done;
    return BL_OK;
}

/* "16 MiB", "64 KiB" or "100 bytes": the cap as the user would write it. */
static void cap_text(size_t cap, char *out, size_t outlen)
{
    if (cap >= ((size_t)1 << 20) && cap % ((size_t)1 << 20) == 0)
        snprintf(out, outlen, "%zu MiB", cap >> 20);
    else if (cap >= 1024 && cap % 1024 == 0)
        snprintf(out, outlen, "%zu KiB", cap >> 10);
    else
        snprintf(out, outlen, "%zu bytes", cap);
}

static bl_status too_large(bl_error *err, const char *path, const char *what, size_t cap)
{
    char limit[64];
    cap_text(cap, limit, sizeof limit);
    return bl_fail(err, BL_EVALUE, "%s: %s is larger than %s", path, what, limit);
}

bl_status bl_file_read(const char *path, size_t cap, const char *what, unsigned flags,
                       char **data, size_t *len, bl_error *err)
{
    BL_ASSERT(path && what && data && len && cap < SIZE_MAX / 2);
    *data = NULL;
    *len = 0;
    int fd;
    uint64_t size;
    bl_status st = bl_file_open(path, flags, &fd, &size, err);
    if (st != BL_OK)
        return st;
    if (size > cap) {
        close(fd);
        return too_large(err, path, what, cap);
    }
    /* Room for the whole file and one byte more, so a file that grew since
     * fstat is seen to pass the cap; a stream starts small and doubles. */
    size_t want = size ? (size_t)size + 1 : (cap < 4096 ? cap + 1 : 4096);
    size_t have = 0;
    char *buf = bl_malloc(want + 1);
    if (!buf) {
        st = bl_fail(err, BL_ENOMEM, "out of memory reading the %s", what);
        goto done;
    }
    for (;;) {
        size_t got;
        if ((st = bl_file_read_upto(fd, buf + have, want - have, &got, path, err)) != BL_OK)
            goto done;
        have += got;
        if (have > cap) {
            st = too_large(err, path, what, cap);
            goto done;
        }
        if (have < want)
            break; /* end of file */
        size_t next = want > (cap + 1) / 2 ? cap + 1 : 2 * want;
        char *grown = bl_realloc(buf, next + 1);
        if (!grown) {
            st = bl_fail(err, BL_ENOMEM, "out of memory reading the %s", what);
            goto done;
        }
        buf = grown;
        want = next;
    }
    buf[have] = '\0';
    *data = buf;
    *len = have;
    buf = NULL;
done:
    close(fd);
    bl_free(buf);
    return st;
}
