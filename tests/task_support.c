/* The helpers of task_support.h. */
#include "task_support.h"

#include "support.h"

uint64_t bl_test_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void bl_test_world_gen(bl_gen *g, int64_t root, const char *partition, const char *task,
                       int64_t block, int64_t trial)
{
    const bl_key keys[4] = {BL_KEY_S("paired-worlds"), BL_KEY_S(task), BL_KEY_I(block),
                            BL_KEY_I(trial)};
    OK_E(bl_gen_for(g, root, partition, "world", keys, 4, &e_));
}

void bl_test_calibration_gen(bl_gen *g, const char *stream, const char *task, int64_t block,
                             char *hex)
{
    const char *key = strcmp(stream, "world") == 0 ? "paired-worlds" : "paired-mechanism";
    const bl_key keys[4] = {BL_KEY_S(key), BL_KEY_S(task), BL_KEY_I(block), BL_KEY_I(0)};
    bl_seed s;
    OK_E(bl_seed_for(BL_TEST_CALIBRATION_ROOT, "calibration", stream, keys, 4, &s, &e_));
    if (hex)
        bl_seed_hex(&s, hex);
    bl_gen_init(g, &s);
}

void bl_test_task_defaults(bl_task_kind kind, bl_task_options *o, bl_task_definition *d)
{
    OK_E(bl_task_options_default(kind, o, &e_));
    bl_task_define(o, d);
}

bl_world_init *bl_test_prepare(const bl_task_options *o, bl_gen *g, int64_t horizon)
{
    bl_world_init *w = NULL;
    bl_error err = {0};
    if (bl_world_prepare(o, g, horizon, &w, &err) != BL_OK)
        fail_msg("prepare %s: %s", bl_task_name(o->kind), err.msg);
    assert_non_null(w);
    return w;
}

const bl_test_block0 bl_test_calibration_block0[3] = {
    {"tracking", "c92b4169b6a903f1dc0302ed1cdb3e2574c3f16ca9503cd8cb9b07627867f203",
     "a3a97a9cef01b9e91ad3dd2fea3e098ca0dd7333574488b31a9ef9cdb2a60d20",
     {2.9262238956239544, 0.7471185742366323, 1.0},
     {0.508355480901416, 0.5622604593657367, 0.8702656606711142}},
    {"pong", "ef446393e2f3d9eaffbdc93d289161c3e5f97938de78de05d3742e1ae8326552",
     "17bc96df7a0f10558edfcea588a3772e91ebd48102cf80e95c17af376f30f01a",
     {995.0, 33.53370249605749, 250.0, -5.0, -5.0},
     {0.2869578843979095, 0.6744675641793613, 0.42519220747105446}},
    {"cartpole_plank_easy", "36372519c73655dd60a2387b34965b35205b08b3ee05c69ac60780347efd92c7",
     "d3bd3718681446ca87bfef56fcc88b0df65333a2332c73e4f1e15bd8c796de79",
     {0.45734577733688586, 0.041424955160853205, -0.04033134925859064, 0.04261132994573402},
     {0.9034243245770053, 0.20705797852864072, 0.6966579443011979}},
};
