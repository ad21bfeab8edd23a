/* The replay main() of the fuzz harnesses (fuzz.h): feeds every regular file
 * of the given corpus directories, in name order, to the harness linked with
 * it. ctest runs one replay per harness over its committed corpus, so an
 * input that once crashed, leaked or reached undefined behaviour fails the
 * suite again under the sanitizers. An empty or missing corpus fails too: a
 * replay of nothing would pass silently. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        unsigned char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Replays one directory; returns how many inputs ran, or -1 on an error. */
static long replay_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, by_name);
    if (n < 0) {
        perror(dir);
        return -1;
    }
    long ran = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        free(names[i]);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        size_t len;
        unsigned char *data = read_all(path, &len);
        if (!data) {
            perror(path);
            ran = -1;
            continue;
        }
        /* On the raw descriptor: a harness may silence stdio (fuzz_args). */
        dprintf(STDERR_FILENO, "replay %s (%zu bytes)\n", path, len);
        LLVMFuzzerTestOneInput(data, len);
        free(data);
        if (ran >= 0)
            ran++;
    }
    free(names);
    return ran;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 1; i < argc; i++) {
        long ran = replay_dir(argv[i]);
        if (ran <= 0) {
            dprintf(STDERR_FILENO, "%s: %s\n", argv[i],
                    ran == 0 ? "no corpus inputs to replay" : "could not be replayed");
            return 1;
        }
        total += ran;
    }
    dprintf(STDOUT_FILENO, "replayed %ld inputs without a finding\n", total);
    return 0;
}
