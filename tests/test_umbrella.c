/* The umbrella header include/brainlesslab/brainlesslab.h keeps up with the
 * public headers: this file includes it and nothing else, and calls one
 * function of every public header, as a program outside the project would.
 * A header the umbrella forgot fails the build here (an undeclared
 * function); the umbrella_complete test (tests/umbrella_complete.cmake)
 * names it. No cmocka and no standard header on purpose: the exit status
 * is the number of the first check that failed. */
#include "brainlesslab/brainlesslab.h"

static int same(const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Core: status, alloc, buf, file, json, sha256, npy, npstat, version. */
static int core(void)
{
    if (!same(bl_status_kind(BL_EVALUE), "ValueError"))
        return 1;
    char *p = bl_strdup("x");
    if (!p || !same(p, "x"))
        return 2;
    bl_free(p);
    bl_buf b;
    bl_buf_init(&b);
    bl_buf_puts(&b, "ab");
    int ok = bl_buf_status(&b, NULL) == BL_OK && same(b.data, "ab");
    bl_buf_clear(&b);
    if (!ok)
        return 3;
    int fd = -1;
    uint64_t size = 0;
    bl_error err = {0};
    if (bl_file_open("/nonexistent/brainlesslab-umbrella", 0, &fd, &size, &err) != BL_ENOENT)
        return 4;
    bl_json *v = bl_json_int(7);
    char *text = NULL;
    size_t len = 0;
    ok = v && bl_json_canonical(v, &text, &len, &err) == BL_OK && same(text, "7");
    bl_free(text);
    bl_json_destroy(v);
    if (!ok)
        return 5;
    uint8_t digest[BL_SHA256_BYTES];
    if (bl_sha256("abc", 3, digest, &err) != BL_OK || digest[0] != 0xba || digest[1] != 0x78)
        return 6;
    if (!bl_utf8_valid("\xc3\xa9", 2) || bl_utf8_valid("\xff", 1))
        return 13;
    char trimmed[8];
    bl_sysinfo_trimmed(trimmed, sizeof trimmed, "x \n");
    if (trimmed[0] != 'x' || trimmed[1] != '\0')
        return 14;
    bl_npy *a = NULL;
    if (bl_npy_parse("x", 1, "bytes", &a, &err) != BL_EVALUE || a)
        return 7;
    const double xs[] = {1.0, 2.0, 3.0};
    if (bl_np_sum(xs, 3) != 6.0)
        return 8;
    if (!bl_version() || !*bl_version())
        return 9;
    return 0;
}

/* rng, models, tasks. */
static int lower(void)
{
    bl_error err = {0};
    bl_seed s;
    const bl_key keys[] = {BL_KEY_I(1), BL_KEY_S("a")};
    if (bl_seed_for(0, "development", "world", keys, 2, &s, &err) != BL_OK)
        return 10;
    bl_falandays_config c;
    bl_falandays_config_default(&c);
    if (bl_falandays_config_validate(&c, &err) != BL_OK)
        return 11;
    if (!same(bl_task_name(BL_TASK_PONG), "pong"))
        return 12;
    return 0;
}

/* plan, run, results (evaluation), records, measure, figures. */
static int upper(void)
{
    static const char text[] = "count = 8\n[task]\nkind = \"delayed_xor\"\n";
    bl_error err = {0};
    bl_json *comp = NULL, *out = NULL;
    bl_plan *plan = NULL;
    bl_resolved_plan *resolved = NULL;
    bl_buf b;
    bl_buf_init(&b);
    int rc = 13;
    if (bl_toml_parse(text, sizeof text - 1, "umbrella", &comp, &err) != BL_OK)
        goto done;
    rc = 14;
    if (bl_plan_profile(comp, NULL, NULL, NULL, false, &plan, &err) != BL_OK ||
        bl_plan_resolve(plan, &resolved, &err) != BL_OK)
        goto done;
    rc = 15;
    bl_execution x;
    bl_execution_default(&x);
    if (bl_run_preflight(resolved, &x, &err) != BL_OK)
        goto done;
    rc = 16;
    if (!same(bl_interval_status_name(BL_INTERVAL_AVAILABLE), "available"))
        goto done;
    rc = 17;
    if (bl_evaluation_preflight(resolved, &x, NULL, 0, &err) != BL_OK)
        goto done;
    rc = 18;
    if (bl_record_json_text(bl_resolved_plain(resolved), &b, &err) != BL_OK)
        goto done;
    rc = 19;
    if (!bl_source_bundle_sha256() || !*bl_source_bundle_sha256())
        goto done;
    rc = 20;
    bl_qualify_options q;
    bl_qualify_options_default(&q);
    const double xs[] = {1.0, 2.0, 3.0};
    if (bl_sample_stats_json(xs, 3, &out, &err) != BL_OK || q.count < 1)
        goto done;
    rc = 21;
    /* figures: a path that is no record is one error, and the set stays empty. */
    bl_figure_set figs;
    if (bl_figures_make("/nonexistent/record", NULL, &figs, &err) == BL_OK || figs.n != 0)
        goto done;
    rc = 0;
done:
    bl_json_destroy(out);
    bl_buf_clear(&b);
    bl_resolved_plan_destroy(resolved);
    bl_plan_destroy(plan);
    bl_json_destroy(comp);
    return rc;
}

int main(void)
{
    int rc = core();
    if (!rc)
        rc = lower();
    if (!rc)
        rc = upper();
    return rc;
}
