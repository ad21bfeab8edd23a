/* Status codes, error buffers, the byte buffer and the allocation hook. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
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
    bl_buf_free(&b);

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
    bl_buf_free(&b);
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
    BL_CHECK(bl_sha256("abc", 3, md, NULL));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    BL_CHECK(bl_sha256("", 0, md, NULL));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

    /* Incremental equals one-shot, whatever the split. */
    const char *msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    bl_sha256_ctx *ctx;
    BL_CHECK(bl_sha256_begin(&ctx, NULL));
    BL_CHECK(bl_sha256_update(ctx, msg, 10, NULL));
    BL_CHECK(bl_sha256_update(ctx, msg + 10, strlen(msg) - 10, NULL));
    BL_CHECK(bl_sha256_end(ctx, md, NULL));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_sha256_file(void **state)
{
    (void)state;
    char *dir = bl_test_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/f.txt", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("abc", f);
    fclose(f);
    uint8_t md[BL_SHA256_BYTES];
    char hex[65];
    BL_CHECK(bl_sha256_file(path, md, NULL));
    bl_hex(md, sizeof md, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    bl_error err = {0};
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(bl_sha256_file(path, md, &err), BL_ENOENT);
    assert_non_null(strstr(err.msg, "missing"));
    bl_test_rmtree(dir);
    free(dir);
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
        cmocka_unit_test(test_sha256_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
