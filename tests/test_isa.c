/* Instruction-set selection of the lane kernels (src/models/isa.h): the
 * default is the best path the CPU has, BL_ISA forces a supported one, and
 * an unknown or unsupported name is one ValueError line naming it. */
#include <stdlib.h>
#include <string.h>

#include "models/isa.h"
#include "support.h"

static void default_is_best_supported(void **state)
{
    (void)state;
    unsetenv("BL_ISA");
    bl_isa isa;
    assert_int_equal(bl_isa_select(&isa, NULL), BL_OK);
    assert_true(bl_isa_supported(isa));
    /* x86-64 always has SSE2. */
    assert_true(bl_isa_supported(BL_ISA_SSE2));
    if (bl_isa_supported(BL_ISA_AVX2))
        assert_int_equal(isa, BL_ISA_AVX2);
    else
        assert_int_equal(isa, BL_ISA_SSE2);
}

static void override_forces_each_supported_path(void **state)
{
    (void)state;
    for (int i = 0; i < BL_ISA_COUNT; i++) {
        setenv("BL_ISA", bl_isa_name((bl_isa)i), 1);
        bl_isa isa = BL_ISA_COUNT;
        bl_error err = {0};
        const bl_status st = bl_isa_select(&isa, &err);
        if (bl_isa_supported((bl_isa)i)) {
            assert_int_equal(st, BL_OK);
            assert_int_equal(isa, i);
        } else {
            assert_int_equal(st, BL_EVALUE);
            assert_non_null(strstr(err.msg, "does not support"));
        }
    }
    unsetenv("BL_ISA");
}

static void unknown_name_is_value_error(void **state)
{
    (void)state;
    setenv("BL_ISA", "avx512", 1);
    bl_isa isa;
    bl_error err = {0};
    assert_int_equal(bl_isa_select(&isa, &err), BL_EVALUE);
    assert_string_equal(err.msg, "BL_ISA=avx512: unknown instruction set (choose sse2 or avx2)");
    unsetenv("BL_ISA");
    assert_string_equal(bl_isa_name(BL_ISA_SSE2), "sse2");
    assert_string_equal(bl_isa_name(BL_ISA_AVX2), "avx2");
    assert_string_equal(bl_isa_name(BL_ISA_COUNT), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_is_best_supported),
        cmocka_unit_test(override_forces_each_supported_path),
        cmocka_unit_test(unknown_name_is_value_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
