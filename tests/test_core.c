/* Status codes, error buffers, the byte buffer, the allocation hook and
 * the capped file reader. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/file.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/status.h"
#include "support.h"

static void test_status_kinds(void **state)
{
    (void)state;
    assert_string_equal(bl_status_kind(BL_EVALUE), "ValueError");
    assert_string_equal(bl_status_kind(BL_ETYPE), "TypeError");
    assert_string_equal(bl_status_kind(BL_EKEY), "KeyError");
    assert_string_equal(bl_status_kind(BL_ENOMEM), "MemoryError");
    assert_string_equal(bl_status_kind(BL_EEXIST), "FileExistsError");
    assert_string_equal(bl_status_kind(BL_ENOENT), "FileNotFoundError");
    assert_string_equal(bl_status_kind(BL_EISDIR), "IsADirectoryError");
    assert_string_equal(bl_status_kind(BL_EOS), "OSError");
    assert_string_equal(bl_status_kind(BL_ERUNTIME), "RuntimeError");
    assert_string_equal(bl_status_kind((bl_status)999), "RuntimeError");
}

static void test_fail_formats_one_line(void **state)
{
    (void)state;
    bl_error err = {0};
    assert_int_equal(bl_fail(&err, BL_EVALUE, "bad %s at %d\nsecond", "x", 3), BL_EVALUE);
    assert_int_equal(err.status, BL_EVALUE);
    assert_string_equal(err.msg, "bad x at 3 second");
    bl_error_prefix(&err, "plan.toml");
    assert_int_equal(err.status, BL_EVALUE);
    assert_string_equal(err.msg, "plan.toml: bad x at 3 second");
    /* A NULL error buffer is allowed and the status still comes back. */
    assert_int_equal(bl_fail(NULL, BL_EKEY, "ignored"), BL_EKEY);
    bl_error_clear(&err);
    assert_int_equal(err.status, BL_OK);
    assert_string_equal(err.msg, "");
    /* Overlong messages are truncated, never overflow. */
    char big[3000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    bl_fail(&err, BL_EVALUE, "%s", big);
    assert_int_equal(strlen(err.msg), BL_ERROR_MAX - 1);
}

static void test_buf_grows_from_fixed_storage(void **state)
{
    (void)state;
    char storage[8];
    bl_buf b;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    assert_true(bl_buf_puts(&b, "abc"));
    assert_ptr_equal(b.data, storage);
    assert_true(bl_buf_printf(&b, "%s-%d", "defghijk", 42));
    assert_false(b.data == storage);
    assert_string_equal(b.data, "abcdefghijk-42");
    /* A formatted piece longer than the printf fast path. */
    char long_piece[300];
    memset(long_piece, 'z', sizeof long_piece - 1);
    long_piece[sizeof long_piece - 1] = '\0';
    assert_true(bl_buf_printf(&b, "[%s]", long_piece));
    assert_int_equal(b.len, 14 + 2 + 299);
    assert_int_equal(b.data[b.len], '\0');
    size_t len;
    char *taken = bl_buf_take(&b, &len);
    assert_non_null(taken);
    assert_int_equal(len, 315);
    assert_int_equal(b.len, 0);
    bl_free(taken);
    bl_buf_clear(&b);

    /* take() from fixed storage copies. */
    bl_buf_init_fixed(&b, storage, sizeof storage);
    bl_buf_puts(&b, "xy");
    taken = bl_buf_take(&b, NULL);
    assert_string_equal(taken, "xy");
    assert_false(taken == storage);
    bl_free(taken);
}

static void test_buf_reports_allocation_failure(void **state)
{
    (void)state;
    bl_buf b;
    bl_buf_init(&b);
    bl_alloc_fail_at(1);
    assert_false(bl_buf_puts(&b, "needs the heap"));
    bl_alloc_fail_at(0);
    /* Once failed, the buffer stays failed so a writer checks only once. */
    assert_false(bl_buf_puts(&b, "x"));
    bl_error err = {0};
    assert_int_equal(bl_buf_status(&b, &err), BL_ENOMEM);
    assert_int_equal(err.status, BL_ENOMEM);
    assert_null(bl_buf_take(&b, NULL));
    bl_buf_clear(&b);
}

static void test_alloc_injection(void **state)
{
    (void)state;
    bl_alloc_fail_at(2);
    void *a = bl_malloc(16);
    void *b = bl_malloc(16);
    void *c = bl_malloc(16);
    assert_non_null(a);
    assert_null(b);
    assert_non_null(c);
    assert_int_equal(bl_alloc_count(), 3);
    bl_alloc_fail_at(0);
    bl_free(a);
    bl_free(c);
    /* Overflowing sizes fail without allocating. */
    assert_null(bl_calloc(SIZE_MAX / 2, 4));
    assert_null(bl_mallocarray(SIZE_MAX / 2, 4));
    char *d = bl_strndup("hello world", 5);
    assert_string_equal(d, "hello");
    bl_free(d);
}

static void test_sha256(void **state)
{
    (void)state;
    uint8_t md[BL_SHA256_BYTES];
    char hex[65];
    OK_E(bl_sha256("abc", 3, md, &e_));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    OK_E(bl_sha256("", 0, md, &e_));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    /* Incremental equals one-shot, whatever the split. */
    const char *msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    bl_sha256_ctx *ctx;
    OK_E(bl_sha256_create(&ctx, &e_));
    OK_E(bl_sha256_update(ctx, msg, 10, &e_));
    OK_E(bl_sha256_update(ctx, msg + 10, strlen(msg) - 10, &e_));
    OK_E(bl_sha256_finish(ctx, md, &e_));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_sha256_file(void **state)
{
    const char *dir = bl_test_dir(state);
    char path[4200];
    snprintf(path, sizeof path, "%s/f.txt", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("abc", f);
    fclose(f);
    uint8_t md[BL_SHA256_BYTES];
    char hex[65];
    OK_E(bl_sha256_file(path, md, &e_));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    bl_error err = {0};
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(bl_sha256_file(path, md, &err), BL_ENOENT);
    assert_non_null(strstr(err.msg, "missing"));
}

/* ---- bl_file_read ---------------------------------------------------------- */

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* bl_file_read expecting failure: the status, a message holding `says`,
 * and nothing handed back. */
static void expect_read_error(const char *path, size_t cap, unsigned flags, bl_status want,
                              const char *says)
{
    char *data = (char *)&data;
    size_t len = 7;
    bl_error err = {0};
    bl_status st = bl_file_read(path, cap, "test file", flags, &data, &len, &err);
    if (st != want || !strstr(err.msg, says))
        fail_msg("%s: %s \"%s\", expected %s \"%s\"", path, bl_status_kind(st), err.msg,
                 bl_status_kind(want), says);
    assert_int_equal(err.status, want);
    assert_non_null(strstr(err.msg, path));
    assert_null(data);
    assert_int_equal(len, 0);
}

static void test_file_read_regular(void **state)
{
    const char *dir = bl_test_dir(state);
    char path[4200];
    char *data;
    size_t len;
    snprintf(path, sizeof path, "%s/ten", dir);
    write_bytes(path, "0123456789", 10);
    /* Under the cap, and exactly at it: the bytes and a NUL after them. */
    OK_E(bl_file_read(path, 100, "test file", 0, &data, &len, &e_));
    assert_int_equal(len, 10);
    assert_memory_equal(data, "0123456789", 11);
    bl_free(data);
    OK_E(bl_file_read(path, 10, "test file", BL_FILE_NOFOLLOW, &data, &len, &e_));
    assert_int_equal(len, 10);
    assert_memory_equal(data, "0123456789", 11);
    bl_free(data);
    /* One byte over: refused by its size, in the cap's own words. */
    expect_read_error(path, 9, 0, BL_EVALUE, ": test file is larger than 9 bytes");
    expect_read_error(path, 9, BL_FILE_STREAM, BL_EVALUE, "larger than 9 bytes");
    /* Empty: zero bytes, still a string. */
    snprintf(path, sizeof path, "%s/empty", dir);
    write_bytes(path, "", 0);
    OK_E(bl_file_read(path, 0, "test file", 0, &data, &len, &e_));
    assert_int_equal(len, 0);
    assert_int_equal(data[0], '\0');
    bl_free(data);
    /* Bigger than the first read of a stream (4 KiB), under the cap. */
    snprintf(path, sizeof path, "%s/big", dir);
    char *big = malloc(100000);
    assert_non_null(big);
    for (size_t i = 0; i < 100000; i++)
        big[i] = (char)('a' + i % 26);
    write_bytes(path, big, 100000);
    OK_E(bl_file_read(path, 100000, "test file", BL_FILE_STREAM, &data, &len, &e_));
    assert_int_equal(len, 100000);
    assert_memory_equal(data, big, 100000);
    bl_free(data);
    free(big);
    /* The cap in the unit a person would write. */
    expect_read_error(path, 64 * 1024, 0, BL_EVALUE, "test file is larger than 64 KiB");
}

/* A sparse file far over the cap is refused from its size: were it read,
 * a 1 TiB file would take minutes and all memory. */
static void test_file_read_refuses_by_size(void **state)
{
    const char *path = bl_test_path(state, "sparse");
    bl_test_make_sparse(path, (int64_t)1 << 40);
    alarm(10);
    expect_read_error(path, BL_FILE_PLAN_MAX, 0, BL_EVALUE, "test file is larger than 16 MiB");
    alarm(0);
}

static void test_file_read_refuses_non_files(void **state)
{
    const char *dir = bl_test_dir(state);
    char path[4200], link[4200];
    /* A regression blocks in open() on the FIFO: SIGALRM then ends the test
     * as a failure instead of hanging it. */
    alarm(10);
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    expect_read_error(path, 100, 0, BL_EOS, ": is a FIFO, not a regular file");
    expect_read_error(path, 100, BL_FILE_NOFOLLOW, BL_EOS, "is a FIFO, not a regular file");
    int fd;
    uint64_t size;
    bl_error err = {0};
    assert_int_equal(bl_file_open(path, 0, &fd, &size, &err), BL_EOS);
    assert_int_equal(fd, -1);
    uint8_t md[BL_SHA256_BYTES];
    assert_int_equal(bl_sha256_file(path, md, &err), BL_EOS);
    assert_non_null(strstr(err.msg, "is a FIFO, not a regular file"));
    expect_read_error("/dev/zero", 100, 0, BL_EOS,
                      "/dev/zero: is a character device, not a regular file");
    expect_read_error(dir, 100, 0, BL_EISDIR, ": Is a directory");
    expect_read_error(dir, 100, BL_FILE_STREAM, BL_EISDIR, ": Is a directory");
    snprintf(path, sizeof path, "%s/missing", dir);
    expect_read_error(path, 100, 0, BL_ENOENT, ": No such file or directory");
    snprintf(path, sizeof path, "%s/missing/below", dir);
    expect_read_error(path, 100, BL_FILE_STREAM, BL_ENOENT, ": No such file or directory");
    /* A socket cannot even be opened; the message still says what it is. */
    snprintf(path, sizeof path, "%s/sock", dir);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) < sizeof addr.sun_path) {
        memcpy(addr.sun_path, path, strlen(path) + 1);
        assert_int_equal(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
        expect_read_error(path, 100, 0, BL_EOS, ": is a socket, not a regular file");
    }
    close(s);
    /* A link is followed unless refused, and then named as a link. */
    snprintf(path, sizeof path, "%s/target", dir);
    write_bytes(path, "x", 1);
    snprintf(link, sizeof link, "%s/link", dir);
    assert_int_equal(symlink(path, link), 0);
    char *data;
    size_t len;
    OK_E(bl_file_read(link, 10, "test file", 0, &data, &len, &e_));
    assert_int_equal(len, 1);
    bl_free(data);
    expect_read_error(link, 10, BL_FILE_NOFOLLOW, BL_EOS, ": is a symbolic link, not a regular file");
    alarm(0);
}

/* Streams (plans only): read to end of file, and stopped at the cap. */
static void test_file_read_streams(void **state)
{
    alarm(20);
    char *data;
    size_t len;
    /* /dev/zero never ends: the cap ends it, with no more memory than it. */
    expect_read_error("/dev/zero", 1000, BL_FILE_STREAM, BL_EVALUE,
                      "/dev/zero: test file is larger than 1000 bytes");
    expect_read_error("/dev/zero", BL_FILE_PLAN_MAX, BL_FILE_STREAM, BL_EVALUE,
                      "/dev/zero: test file is larger than 16 MiB");
    OK_E(bl_file_read("/dev/null", 10, "test file", BL_FILE_STREAM, &data, &len, &e_));
    assert_int_equal(len, 0);
    bl_free(data);
    /* A FIFO with a writer: everything it writes, to its end. */
    const char *dir = bl_test_dir(state);
    char path[4200];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int w = open(path, O_WRONLY);
        for (int i = 0; w >= 0 && i < 3000; i++)
            if (write(w, "abcdefghij", 10) != 10)
                _exit(1);
        _exit(w >= 0 ? 0 : 1);
    }
    OK_E(bl_file_read(path, 30000, "test file", BL_FILE_STREAM, &data, &len, &e_));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(len, 30000);
    assert_memory_equal(data + 29990, "abcdefghij", 11);
    bl_free(data);
    alarm(0);
}

/* Every allocation the reader makes can fail cleanly, for a regular file
 * and for a stream that needs its buffer grown. */
static void test_file_read_allocation_failures(void **state)
{
    const char *path = bl_test_path(state, "f");
    write_bytes(path, "hello", 5);
    const struct {
        const char *path;
        size_t cap;
        unsigned flags;
    } cases[] = {{path, 100, 0}, {"/dev/zero", 20000, BL_FILE_STREAM}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int failures = 0;
        for (long n = 1;; n++) {
            char *data = NULL;
            size_t len = 0;
            bl_error err = {0};
            bl_alloc_fail_at(n);
            bl_status st = bl_file_read(cases[c].path, cases[c].cap, "test file", cases[c].flags,
                                        &data, &len, &err);
            long used = bl_alloc_count();
            bl_alloc_fail_at(0);
            if (n > used) {
                /* Past the last allocation: the plain outcome. */
                assert_int_equal(st, c == 0 ? BL_OK : BL_EVALUE);
                bl_free(data);
                break;
            }
            assert_int_equal(st, BL_ENOMEM);
            assert_non_null(strstr(err.msg, "out of memory reading the test file"));
            assert_null(data);
            failures++;
        }
        /* The stream grew its buffer, so it failed at more than one place. */
        assert_true(failures >= (c == 0 ? 1 : 2));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_kinds),
        cmocka_unit_test(test_fail_formats_one_line),
        cmocka_unit_test(test_buf_grows_from_fixed_storage),
        cmocka_unit_test(test_buf_reports_allocation_failure),
        cmocka_unit_test(test_alloc_injection),
        cmocka_unit_test(test_sha256),
        BL_TEST_IN_DIR(test_sha256_file),
        BL_TEST_IN_DIR(test_file_read_regular),
        BL_TEST_IN_DIR(test_file_read_refuses_by_size),
        BL_TEST_IN_DIR(test_file_read_refuses_non_files),
        BL_TEST_IN_DIR(test_file_read_streams),
        BL_TEST_IN_DIR(test_file_read_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
