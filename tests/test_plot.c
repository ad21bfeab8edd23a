/* The figure module's own parts (src/figures): the SVG writer escapes
 * every text, carries data values in repr form, counts its data marks and
 * keeps legend labels valid UTF-8 when it shortens them; bl_figures_write
 * refuses a directory inside the record and leaves nothing behind.
 * tests/test_plot.py drives `brainlesslab plot` on real records. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brainlesslab/figures.h"
#include "brainlesslab/json.h"
#include "brainlesslab/records.h"
#include "brainlesslab/text.h"
#include "figures/figures_internal.h"
#include "support.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_text_is_escaped(void **state)
{
    (void)state;
    bl_buf b;
    bl_buf_init(&b);
    bl_svg_text(&b, "a<b & \"c\" 'd'>\x01");
    assert_true(bl_buf_putc(&b, '\0'));
    assert_string_equal(b.data, "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;?");
    bl_buf_clear(&b);
}

static void test_chart_marks_and_values(void **state)
{
    (void)state;
    bl_buf b;
    bl_buf_init(&b);
    const char *cats[] = {"x<1>", "y"};
    bl_chart c = {.categories = cats, .ncategories = 2, .x0 = -0.5, .x1 = 1.5, .y0 = 0.0,
                  .y1 = 1.0};
    bl_chart_begin(&c, &b, "t & u", "target", "score (fraction)");
    bl_chart_point(&c, "estimate", NULL, cats[0], 0.0, 0.1, BL_SHAPE_SQUARE, true, 4.0);
    bl_chart_interval(&c, "interval", "s\"1", cats[1], 1.0, 0.25, 0.75, 5.0);
    bl_chart_band(&c, "null-band", cats[1], 0.6, 1.4, 0.4, 0.5, 0.6);
    /* A long label is cut before a whole character, never inside one. */
    bl_chart_legend(&c, BL_LEGEND_MARKER,
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
                    BL_SHAPE_CIRCLE, false, 0);
    bl_chart_end(&c);
    assert_true(bl_buf_putc(&b, '\0'));
    const char *s = b.data;
    assert_int_equal(c.marks, 3);
    assert_int_equal(count(s, "class=\"mark "), 3);
    assert_non_null(strstr(s, "data-value=\"0.1\""));
    assert_non_null(strstr(s, "data-low=\"0.25\" data-high=\"0.75\""));
    assert_non_null(strstr(s, "data-mean=\"0.5\""));
    assert_non_null(strstr(s, "data-category=\"x&lt;1&gt;\""));
    assert_non_null(strstr(s, "data-series=\"s&quot;1\""));
    assert_non_null(strstr(s, "<title>t &amp; u</title>"));
    assert_non_null(strstr(s, "..."));
    assert_true(bl_utf8_valid(s, strlen(s)));
    /* Every group and the document are closed. */
    assert_int_equal(count(s, "<g "), count(s, "</g>"));
    assert_int_equal(count(s, "<svg "), 1);
    assert_non_null(strstr(s, "</svg>\n"));
    /* 0.1 on a 0..1 axis is a tenth of the plot's height above its bottom. */
    assert_true(fabs(bl_chart_py(&c, 0.1) - (c.top + c.height * 0.9)) < 1e-9);
    bl_buf_clear(&b);
}

static void test_make_refuses_a_missing_record(void **state)
{
    (void)state;
    char *dir = bl_test_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s/none", dir);
    bl_figure_set set;
    bl_error err = {0};
    assert_int_not_equal(bl_figures_make(path, NULL, &set, &err), BL_OK);
    assert_int_equal(set.n, 0);
    assert_null(set.index);
    assert_int_equal(rmdir(dir), 0);
    free(dir);
}

/* A directory inside the record, directly or through "..", is refused
 * before anything is made; one outside gets figures.json. */
static void test_write_stays_outside_the_record(void **state)
{
    (void)state;
    char *dir = bl_test_mkdtemp();
    char rec[4096], inside[4200], detour[4400], outside[4200], made[4300];
    snprintf(rec, sizeof rec, "%s/rec", dir);
    assert_int_equal(mkdir(rec, 0700), 0);
    snprintf(inside, sizeof inside, "%s/figs", rec);
    snprintf(detour, sizeof detour, "%s/new/../rec/figs", dir);
    snprintf(outside, sizeof outside, "%s/out/figs", dir);
    bl_figure_set set = {0};
    bl_error err = {0};
    OK_E(bl_json_parse("{\"figures\": []}", 15, "index", &set.index, &e_));
    const char *refused[] = {inside, detour, rec};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(bl_figures_write(&set, rec, refused[i], &err), BL_EVALUE);
        assert_non_null(strstr(err.msg, "--out must be outside the record"));
    }
    struct stat sb;
    assert_int_not_equal(lstat(inside, &sb), 0);
    snprintf(made, sizeof made, "%s/new", dir);
    assert_int_not_equal(lstat(made, &sb), 0);
    OK_E(bl_figures_write(&set, rec, outside, &e_));
    snprintf(made, sizeof made, "%s/figures.json", outside);
    assert_int_equal(lstat(made, &sb), 0);
    /* It exists now: refused, and left as it was. */
    assert_int_equal(bl_figures_write(&set, rec, outside, &err), BL_EEXIST);
    assert_int_equal(lstat(made, &sb), 0);
    assert_int_equal(unlink(made), 0);
    assert_int_equal(rmdir(outside), 0);
    snprintf(made, sizeof made, "%s/out", dir);
    assert_int_equal(rmdir(made), 0);
    assert_int_equal(rmdir(rec), 0);
    assert_int_equal(rmdir(dir), 0);
    bl_figure_set_clear(&set);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_is_escaped),
        cmocka_unit_test(test_chart_marks_and_values),
        cmocka_unit_test(test_make_refuses_a_missing_record),
        cmocka_unit_test(test_write_stays_outside_the_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
