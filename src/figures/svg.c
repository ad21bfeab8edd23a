/* The SVG chart writer of figures_internal.h. Layout: a 720 x 440 canvas,
 * the plot on the left, the legend in a column on the right, so legend and
 * data never overlap. Coordinates are written with two decimals; data
 * values in repr form. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "figures/figures_internal.h"

#define CANVAS_W 760.0
#define CANVAS_H 480.0
#define PLOT_LEFT 78.0
#define PLOT_TOP 48.0
#define PLOT_W 450.0
#define PLOT_H 330.0
#define LEGEND_X (PLOT_LEFT + PLOT_W + 24.0)

void bl_range_add(bl_range *r, double v)
{
    if (!isfinite(v))
        return;
    if (!r->any) {
        r->lo = r->hi = v;
        r->any = true;
        return;
    }
    r->lo = v < r->lo ? v : r->lo;
    r->hi = v > r->hi ? v : r->hi;
}

void bl_range_finish(const bl_range *r, double *lo, double *hi)
{
    double a = r->any ? r->lo : 0.0, b = r->any ? r->hi : 1.0;
    if (b - a <= 0.0) {
        double pad = fabs(a) > 0.0 ? fabs(a) * 0.1 : 0.5;
        a -= pad;
        b += pad;
    } else {
        double pad = (b - a) * 0.06;
        a -= pad;
        b += pad;
    }
    *lo = a;
    *hi = b;
}

void bl_svg_number(bl_buf *b, double v)
{
    if (!bl_json_write_double(b, v))
        bl_buf_puts(b, "nan");
}

void bl_svg_text(bl_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': bl_buf_puts(b, "&amp;"); break;
        case '<': bl_buf_puts(b, "&lt;"); break;
        case '>': bl_buf_puts(b, "&gt;"); break;
        case '"': bl_buf_puts(b, "&quot;"); break;
        case '\'': bl_buf_puts(b, "&apos;"); break;
        default:
            /* XML 1.0 forbids most C0 controls even as references. */
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n')
                bl_buf_putc(b, '?');
            else
                bl_buf_putc(b, *s);
        }
    }
}

const char *bl_svg_dash(int dash)
{
    static const char *const dashes[] = {"none", "6 3", "2 3", "8 3 2 3", "12 4"};
    return dashes[(size_t)dash % (sizeof dashes / sizeof *dashes)];
}

double bl_chart_px(const bl_chart *c, double x)
{
    return c->left + (x - c->x0) / (c->x1 - c->x0) * c->width;
}

double bl_chart_py(const bl_chart *c, double y)
{
    return c->top + c->height - (y - c->y0) / (c->y1 - c->y0) * c->height;
}

static void text_at(bl_buf *b, double x, double y, const char *anchor, double size,
                    const char *extra, const char *s)
{
    bl_buf_printf(b, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" font-size=\"%.0f\"%s>", x, y,
                  anchor, size, extra ? extra : "");
    bl_svg_text(b, s);
    bl_buf_puts(b, "</text>\n");
}

/* 1, 2 or 5 times a power of ten, about a fifth of the span. */
static double nice_step(double span)
{
    double raw = span / 5.0, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

static void y_axis(bl_chart *c)
{
    bl_buf *b = c->out;
    double step = nice_step(c->y1 - c->y0);
    bl_buf_puts(b, "<g class=\"axis y-axis\">\n");
    for (double t = ceil(c->y0 / step) * step; t <= c->y1 + step * 1e-9; t += step) {
        double v = fabs(t) < step * 1e-9 ? 0.0 : t, y = bl_chart_py(c, v);
        char label[32];
        snprintf(label, sizeof label, "%.6g", v);
        bl_buf_printf(b, "<line class=\"grid\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                         "stroke=\"#d0d0d0\" stroke-width=\"0.6\"/>\n",
                      c->left, y, c->left + c->width, y);
        bl_buf_printf(b, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                         "stroke=\"black\"/>\n", c->left - 5, y, c->left, y);
        text_at(b, c->left - 8, y + 4, "end", 11, NULL, label);
    }
    bl_buf_puts(b, "</g>\n");
}

static void x_axis(bl_chart *c)
{
    bl_buf *b = c->out;
    double base = c->top + c->height;
    bl_buf_puts(b, "<g class=\"axis x-axis\">\n");
    if (c->categories) {
        /* Long or many labels are turned, so they never run into each other. */
        bool turn = c->ncategories > 4;
        for (size_t i = 0; i < c->ncategories; i++) {
            double x = bl_chart_px(c, (double)i);
            bl_buf_printf(b, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
                             "y2=\"%.2f\" stroke=\"black\"/>\n", x, base, x, base + 5);
            char rot[96] = "";
            if (turn)
                snprintf(rot, sizeof rot, " transform=\"rotate(-30 %.2f %.2f)\"", x, base + 18);
            text_at(b, x, base + 18, turn ? "end" : "middle", 11, rot, c->categories[i]);
        }
    } else {
        double step = nice_step(c->x1 - c->x0);
        for (double t = ceil(c->x0 / step) * step; t <= c->x1 + step * 1e-9; t += step) {
            double v = fabs(t) < step * 1e-9 ? 0.0 : t, x = bl_chart_px(c, v);
            char label[32];
            snprintf(label, sizeof label, "%.6g", v);
            bl_buf_printf(b, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
                             "y2=\"%.2f\" stroke=\"black\"/>\n", x, base, x, base + 5);
            text_at(b, x, base + 18, "middle", 11, NULL, label);
        }
    }
    bl_buf_puts(b, "</g>\n");
}

void bl_chart_begin(bl_chart *c, bl_buf *out, const char *title, const char *xlabel,
                    const char *ylabel)
{
    c->out = out;
    c->left = PLOT_LEFT;
    c->top = PLOT_TOP;
    c->width = PLOT_W;
    c->height = PLOT_H;
    c->legend_rows = 0;
    c->marks = 0;
    bl_buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                       "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                       "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
                  CANVAS_W, CANVAS_H, CANVAS_W, CANVAS_H);
    bl_buf_puts(out, "<title>");
    bl_svg_text(out, title);
    bl_buf_puts(out, "</title>\n");
    bl_buf_printf(out, "<rect class=\"background\" x=\"0\" y=\"0\" width=\"%.0f\" "
                       "height=\"%.0f\" fill=\"white\"/>\n", CANVAS_W, CANVAS_H);
    text_at(out, CANVAS_W / 2, 26, "middle", 15, " class=\"figure-title\"", title);
    y_axis(c);
    x_axis(c);
    bl_buf_printf(out, "<rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
                       "height=\"%.2f\" fill=\"none\" stroke=\"black\"/>\n",
                  c->left, c->top, c->width, c->height);
    char rot[96];
    snprintf(rot, sizeof rot, " class=\"axis-label y-label\" transform=\"rotate(-90 %.2f %.2f)\"",
             22.0, c->top + c->height / 2);
    text_at(out, 22.0, c->top + c->height / 2, "middle", 12, rot, ylabel);
    text_at(out, c->left + c->width / 2, CANVAS_H - 14, "middle", 13,
            " class=\"axis-label x-label\"", xlabel);
    bl_buf_printf(out, "<g class=\"legend\" transform=\"translate(%.2f %.2f)\">\n", LEGEND_X,
                  c->top);
    text_at(out, 0, 0, "start", 12, " font-weight=\"bold\"", "Legend");
    bl_buf_puts(out, "</g>\n");
}

void bl_chart_end(bl_chart *c)
{
    bl_buf_puts(c->out, "</svg>\n");
}

/* A marker's outline centred at (x, y) in pixels. */
static void marker(bl_buf *b, double x, double y, bl_shape shape, bool filled, double r)
{
    const char *fill = filled ? "black" : "white";
    switch (shape) {
    case BL_SHAPE_CIRCLE:
        bl_buf_printf(b, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"%s\" "
                         "stroke=\"black\"/>", x, y, r, fill);
        break;
    case BL_SHAPE_SQUARE:
        bl_buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                         "fill=\"%s\" stroke=\"black\"/>", x - r, y - r, 2 * r, 2 * r, fill);
        break;
    case BL_SHAPE_TRIANGLE:
        bl_buf_printf(b, "<path d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fZ\" fill=\"%s\" "
                         "stroke=\"black\"/>", x, y - r * 1.2, x + r * 1.1, y + r * 0.8,
                      x - r * 1.1, y + r * 0.8, fill);
        break;
    case BL_SHAPE_DIAMOND:
        bl_buf_printf(b, "<path d=\"M%.2f %.2fL%.2f %.2fL%.2f %.2fL%.2f %.2fZ\" fill=\"%s\" "
                         "stroke=\"black\"/>", x, y - r * 1.3, x + r * 1.3, y, x, y + r * 1.3,
                      x - r * 1.3, y, fill);
        break;
    default:
        bl_buf_printf(b, "<path d=\"M%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2f\" fill=\"none\" "
                         "stroke=\"black\" stroke-width=\"1.6\"/>", x - r, y - r, x + r, y + r,
                      x - r, y + r, x + r, y - r);
    }
}

/* The opening of a data mark's group with its identity attributes. */
static void mark_open(bl_chart *c, const char *cls, const char *series, const char *category)
{
    bl_buf *b = c->out;
    bl_buf_printf(b, "<g class=\"mark %s\"", cls);
    if (series) {
        bl_buf_puts(b, " data-series=\"");
        bl_svg_text(b, series);
        bl_buf_putc(b, '"');
    }
    if (category) {
        bl_buf_puts(b, " data-category=\"");
        bl_svg_text(b, category);
        bl_buf_putc(b, '"');
    }
    c->marks++;
}

void bl_chart_point(bl_chart *c, const char *cls, const char *series, const char *category,
                    double x, double y, bl_shape shape, bool filled, double size)
{
    bl_buf *b = c->out;
    mark_open(c, cls, series, category);
    bl_buf_puts(b, " data-x=\"");
    bl_svg_number(b, x);
    bl_buf_puts(b, "\" data-value=\"");
    bl_svg_number(b, y);
    bl_buf_puts(b, "\"><title>");
    bl_svg_number(b, y);
    bl_buf_puts(b, "</title>");
    marker(b, bl_chart_px(c, x), bl_chart_py(c, y), shape, filled, size);
    bl_buf_puts(b, "</g>\n");
}

void bl_chart_interval(bl_chart *c, const char *cls, const char *series, const char *category,
                       double x, double lo, double hi, double half_width)
{
    bl_buf *b = c->out;
    mark_open(c, cls, series, category);
    bl_buf_puts(b, " data-low=\"");
    bl_svg_number(b, lo);
    bl_buf_puts(b, "\" data-high=\"");
    bl_svg_number(b, hi);
    bl_buf_puts(b, "\"><title>95 % interval ");
    bl_svg_number(b, lo);
    bl_buf_puts(b, " to ");
    bl_svg_number(b, hi);
    double px = bl_chart_px(c, x), ylo = bl_chart_py(c, lo), yhi = bl_chart_py(c, hi);
    bl_buf_printf(b, "</title><path d=\"M%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f "
                     "%.2f\" fill=\"none\" stroke=\"black\" stroke-width=\"1.4\"/></g>\n",
                  px, ylo, px, yhi, px - half_width, ylo, px + half_width, ylo, px - half_width,
                  yhi, px + half_width, yhi);
}

void bl_chart_band(bl_chart *c, const char *cls, const char *category, double xa, double xb,
                   double lo, double mid, double hi)
{
    bl_buf *b = c->out;
    mark_open(c, cls, NULL, category);
    bl_buf_puts(b, " data-low=\"");
    bl_svg_number(b, lo);
    bl_buf_puts(b, "\" data-mean=\"");
    bl_svg_number(b, mid);
    bl_buf_puts(b, "\" data-high=\"");
    bl_svg_number(b, hi);
    bl_buf_puts(b, "\"><title>null band</title>");
    double pa = bl_chart_px(c, xa), pb = bl_chart_px(c, xb);
    double ylo = bl_chart_py(c, lo), yhi = bl_chart_py(c, hi), ym = bl_chart_py(c, mid);
    bl_buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#dddddd\" "
                     "stroke=\"black\" stroke-dasharray=\"%s\" stroke-width=\"0.8\"/>",
                  pa, yhi, pb - pa, ylo - yhi, bl_svg_dash(2));
    bl_buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\" "
                     "stroke-dasharray=\"%s\"/></g>\n", pa, ym, pb, ym, bl_svg_dash(1));
}

void bl_chart_line(bl_chart *c, const char *series, const double *x, const double *y, size_t n,
                   int dash)
{
    bl_buf *b = c->out;
    bl_buf_puts(b, "<polyline class=\"series-line\"");
    if (series) {
        bl_buf_puts(b, " data-series=\"");
        bl_svg_text(b, series);
        bl_buf_putc(b, '"');
    }
    bl_buf_puts(b, " points=\"");
    for (size_t i = 0; i < n; i++)
        bl_buf_printf(b, "%s%.2f,%.2f", i ? " " : "", bl_chart_px(c, x[i]), bl_chart_py(c, y[i]));
    bl_buf_printf(b, "\" fill=\"none\" stroke=\"black\" stroke-width=\"1.2\" "
                     "stroke-dasharray=\"%s\"/>\n", bl_svg_dash(dash));
}

void bl_chart_hline(bl_chart *c, const char *cls, double y, int dash)
{
    double py = bl_chart_py(c, y);
    bl_buf_printf(c->out, "<line class=\"%s\" data-value=\"", cls);
    bl_svg_number(c->out, y);
    bl_buf_printf(c->out, "\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\" "
                          "stroke-width=\"0.8\" stroke-dasharray=\"%s\"/>\n",
                  c->left, py, c->left + c->width, py, bl_svg_dash(dash));
}

void bl_chart_note(bl_chart *c, double x, double y, const char *text)
{
    text_at(c->out, bl_chart_px(c, x), bl_chart_py(c, y), "middle", 11, " class=\"note\"", text);
}

void bl_chart_legend(bl_chart *c, bl_legend_kind kind, const char *label, bl_shape shape,
                     bool filled, int dash)
{
    bl_buf *b = c->out;
    double x = LEGEND_X, y = c->top + 22.0 + 20.0 * (double)c->legend_rows++;
    bl_buf_puts(b, "<g class=\"legend-entry\">");
    switch (kind) {
    case BL_LEGEND_MARKER:
        marker(b, x + 10, y - 4, shape, filled, 4.5);
        break;
    case BL_LEGEND_INTERVAL:
        bl_buf_printf(b, "<path d=\"M%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2fM%.2f %.2fL%.2f %.2f\" "
                         "fill=\"none\" stroke=\"black\" stroke-width=\"1.4\"/>",
                      x + 10, y - 11, x + 10, y + 3, x + 6, y - 11, x + 14, y - 11, x + 6, y + 3,
                      x + 14, y + 3);
        break;
    case BL_LEGEND_BAND:
        bl_buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"20\" height=\"12\" fill=\"#dddddd\" "
                         "stroke=\"black\" stroke-dasharray=\"%s\" stroke-width=\"0.8\"/>",
                      x, y - 10, bl_svg_dash(2));
        break;
    case BL_LEGEND_LINE:
    case BL_LEGEND_RULE:
        bl_buf_printf(b, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\" "
                         "stroke-width=\"1.2\" stroke-dasharray=\"%s\"/>",
                      x, y - 4, x + 20, y - 4, bl_svg_dash(dash));
        if (kind == BL_LEGEND_LINE)
            marker(b, x + 10, y - 4, shape, filled, 4.0);
        break;
    }
    bl_buf_putc(b, '\n');
    /* The column holds about 34 characters; a cut never splits a UTF-8
     * sequence. */
    char shown[64];
    size_t n = strlen(label);
    if (n > 34) {
        n = 31;
        while (n > 0 && ((unsigned char)label[n] & 0xC0) == 0x80)
            n--;
        snprintf(shown, sizeof shown, "%.*s...", (int)n, label);
        label = shown;
    }
    text_at(b, x + 28, y, "start", 11, NULL, label);
    bl_buf_puts(b, "</g>\n");
}
