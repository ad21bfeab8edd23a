/* Readers of the kernel's and the distribution's text files (sysinfo.h). */
#include "brainlesslab/sysinfo.h"

#include <stdio.h>
#include <string.h>

#include "brainlesslab/text.h"

void bl_sysinfo_text(char *dst, size_t size, const char *s, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
    if (!bl_utf8_valid(dst, n))
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)dst[i] >= 0x80)
                dst[i] = '?';
}

void bl_sysinfo_trimmed(char *dst, size_t size, const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    bl_sysinfo_text(dst, size, s, n);
}

bool bl_sysinfo_path(char *dst, size_t size, const char *root, const char *rel)
{
    int n = snprintf(dst, size, "%s/%s", root, rel);
    return n >= 0 && (size_t)n < size;
}

bool bl_sysinfo_first_line(const char *path, char *dst, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    bool found = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!found)
        return false;
    bl_sysinfo_trimmed(dst, size, line);
    return dst[0] != '\0';
}

/* The first line of f that starts with key and whose value (what `value`
 * finds after the key, into scratch) trims to something: into dst. Closes f. */
static bool first_field(FILE *f, const char *key,
                        const char *(*value)(const char *rest, char *scratch, size_t n),
                        char *dst, size_t size)
{
    char line[1024], scratch[1024];
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        const char *v = strncmp(line, key, klen) == 0 ? value(line + klen, scratch, sizeof scratch)
                                                       : NULL;
        if (v) {
            bl_sysinfo_trimmed(dst, size, v);
            found = dst[0] != '\0';
        }
    }
    fclose(f);
    return found;
}

/* cpuinfo's "key<blanks>: value". */
static const char *cpuinfo_value(const char *p, char *scratch, size_t n)
{
    (void)scratch, (void)n;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

bool bl_sysinfo_cpuinfo_field(const char *proc_root, const char *key, char *dst, size_t size)
{
    char path[BL_SYSINFO_PATH_MAX];
    if (!bl_sysinfo_path(path, sizeof path, proc_root ? proc_root : "/proc", "cpuinfo"))
        return false;
    FILE *f = fopen(path, "r");
    return f && first_field(f, key, cpuinfo_value, dst, size);
}

static FILE *open_os_release(const char *etc_root)
{
    if (etc_root) {
        char path[BL_SYSINFO_PATH_MAX];
        return bl_sysinfo_path(path, sizeof path, etc_root, "os-release") ? fopen(path, "r")
                                                                           : NULL;
    }
    FILE *f = fopen("/etc/os-release", "r");
    return f ? f : fopen("/usr/lib/os-release", "r");
}

/* os-release's "KEY=value" in shell syntax: the value may be quoted, with
 * backslash escapes inside double quotes. */
static const char *os_release_value(const char *p, char *value, size_t size)
{
    if (*p++ != '=')
        return NULL;
    size_t n = 0;
    char quote = (*p == '"' || *p == '\'') ? *p++ : '\0';
    for (; *p && *p != '\n' && n + 1 < size; p++) {
        if (quote && *p == quote)
            break;
        if (quote == '"' && *p == '\\' && p[1] && p[1] != '\n')
            p++;
        value[n++] = *p;
    }
    value[n] = '\0';
    return value;
}

static bool os_release_field(const char *etc_root, const char *key, char *dst, size_t size)
{
    FILE *f = open_os_release(etc_root);
    return f && first_field(f, key, os_release_value, dst, size);
}

bool bl_sysinfo_os_name(const char *etc_root, char *dst, size_t size)
{
    if (os_release_field(etc_root, "PRETTY_NAME", dst, size))
        return true;
    char id[120], version[120];
    if (!os_release_field(etc_root, "ID", id, sizeof id))
        return false;
    if (os_release_field(etc_root, "VERSION_ID", version, sizeof version))
        snprintf(dst, size, "%s %s", id, version);
    else
        snprintf(dst, size, "%s", id);
    return true;
}
