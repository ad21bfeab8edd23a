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

bool bl_sysinfo_cpuinfo_field(const char *proc_root, const char *key, char *dst, size_t size)
{
    char path[BL_SYSINFO_PATH_MAX];
    if (!bl_sysinfo_path(path, sizeof path, proc_root ? proc_root : "/proc", "cpuinfo"))
        return false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        const char *p = line + klen;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != ':')
            continue;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        bl_sysinfo_trimmed(dst, size, p);
        found = dst[0] != '\0';
    }
    fclose(f);
    return found;
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

/* One field of os-release (shell syntax: the value may be quoted, with
 * backslash escapes inside double quotes). */
static bool os_release_field(const char *etc_root, const char *key, char *dst, size_t size)
{
    FILE *f = open_os_release(etc_root);
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || line[klen] != '=')
            continue;
        const char *p = line + klen + 1;
        char value[1024];
        size_t n = 0;
        char quote = (*p == '"' || *p == '\'') ? *p++ : '\0';
        for (; *p && *p != '\n' && n + 1 < sizeof value; p++) {
            if (quote && *p == quote)
                break;
            if (quote == '"' && *p == '\\' && p[1] && p[1] != '\n')
                p++;
            value[n++] = *p;
        }
        value[n] = '\0';
        bl_sysinfo_trimmed(dst, size, value);
        found = dst[0] != '\0';
    }
    fclose(f);
    return found;
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
