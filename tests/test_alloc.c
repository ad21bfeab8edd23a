/* Allocation failure across modules: a small end-to-end workload of the
 * foundation (read a plan-like JSON document, digest it canonically, derive
 * seeds from its values, draw from a noise tape, read an array, summarise it)
 * is run once to count its allocations, then once per allocation with that
 * one made to fail. Every run must stop with BL_ENOMEM and a message, never
 * succeed silently or crash; the sanitizer build proves nothing leaks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/json.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/rng.h"
#include "support.h"

static const char document[] =
    "{\"id\": \"alloc-workload\", \"evaluation\": {\"root_seed\": 11001, \"blocks\": 2,"
    " \"trials_per_block\": 3}, \"targets\": [{\"id\": \"baseline\", \"count\": 64,"
    " \"input_gain\": 1.0, \"label\": \"caf\\u00e9 \\ud83d\\ude00\"}]}";

/* A 2x3 float64 .npy image built in memory. */
static size_t make_npy(unsigned char *out)
{
    const char *header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
    size_t hl = strlen(header), total = 10 + hl + 1;
    size_t pad = (64 - total % 64) % 64;
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    size_t hlen = hl + pad + 1;
    out[8] = (unsigned char)(hlen & 0xff);
    out[9] = (unsigned char)(hlen >> 8);
    memcpy(out + 10, header, hl);
    memset(out + 10 + hl, ' ', pad);
    out[10 + hl + pad] = '\n';
    size_t off = 10 + hlen;
    for (int i = 0; i < 6; i++) {
        double v = 0.5 * i - 1.0;
        memcpy(out + off + 8 * (size_t)i, &v, 8);
    }
    return off + 48;
}

static bl_status workload(bl_error *err, char digest_out[65], double *summary)
{
    bl_json *doc = NULL;
    bl_tape *tape = NULL;
    bl_npy *arr = NULL;
    char *payload = NULL;
    bl_status st = bl_json_parse(document, sizeof document - 1, "workload", &doc, err);
    if (st != BL_OK)
        goto done;
    if ((st = bl_json_digest(doc, digest_out, err)) != BL_OK)
        goto done;

    const bl_json *eval = bl_json_get(doc, "evaluation");
    int64_t root = bl_json_get_int(bl_json_get(eval, "root_seed"));
    bl_key keys[4] = {BL_KEY_S("paired-mechanism"), BL_KEY_S("falandays"), BL_KEY_I(1),
                      BL_KEY_I(2)};
    bl_seed seed;
    if ((st = bl_seed_for(root, "development", "drive", keys, 4, &seed, err)) != BL_OK)
        goto done;
    if ((st = bl_seed_payload(root, "development", "drive", keys, 4, &payload, err)) != BL_OK)
        goto done;
    if ((st = bl_tape_create(&tape, &seed, 16, 8, BL_TAPE_NORMAL, err)) != BL_OK)
        goto done;
    const double *frames;
    if ((st = bl_tape_preview(tape, 8, &frames, err)) != BL_OK)
        goto done;
    if ((st = bl_tape_consume(tape, 8, err)) != BL_OK)
        goto done;

    unsigned char image[256];
    size_t len = make_npy(image);
    if ((st = bl_npy_parse(image, len, "workload.npy", &arr, err)) != BL_OK)
        goto done;
    double sd, q;
    if ((st = bl_np_std(arr->data, arr->count, 1, NULL, &sd, err)) != BL_OK)
        goto done;
    if ((st = bl_np_quantile(frames, 16 * 8, 0.975, NULL, &q, err)) != BL_OK)
        goto done;
    *summary = sd + q;
done:
    bl_free(payload);
    bl_npy_destroy(arr);
    bl_tape_destroy(tape);
    bl_json_destroy(doc);
    return st;
}

static void test_every_allocation_failure_is_clean(void **state)
{
    (void)state;
    char digest[65], expected_digest[65];
    double summary = 0, expected_summary = 0;
    bl_error err = {0};

    bl_alloc_fail_at(0); /* no failure; counts from here */
    assert_int_equal(workload(&err, expected_digest, &expected_summary), BL_OK);
    long total = bl_alloc_count();
    /* The workload touches every module: a count this small would mean the
     * hook is not wired in somewhere. */
    assert_true(total >= 10);
    print_message("workload makes %ld allocations; failing each in turn\n", total);

    for (long n = 1; n <= total; n++) {
        bl_error_clear(&err);
        bl_alloc_fail_at(n);
        bl_status st = workload(&err, digest, &summary);
        bl_alloc_fail_at(0);
        if (st != BL_ENOMEM)
            fail_msg("allocation %ld of %ld failed but the workload returned %s (%s)", n,
                     total, bl_status_kind(st), err.msg);
        assert_int_equal(err.status, BL_ENOMEM);
        assert_true(strlen(err.msg) > 0);
    }

    /* After all that, the same workload still gives the same answers. */
    assert_int_equal(workload(&err, digest, &summary), BL_OK);
    assert_string_equal(digest, expected_digest);
    assert_memory_equal(&summary, &expected_summary, sizeof summary);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_allocation_failure_is_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
