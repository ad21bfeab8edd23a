/* What the figure files share: a small SVG writer for charts with
 * categorical or numeric x axes. It is ours rather than cairo's: a figure
 * is a few hundred elements of text, so escaping text and formatting
 * numbers is all the writer does, the bytes are the same on every machine
 * (no font metrics or library version in them), and the data values travel
 * in the marks' data-* attributes in Python repr form, so a reader (or a
 * test) can compare them with the record exactly. */
#ifndef BL_FIGURES_INTERNAL_H
#define BL_FIGURES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/buf.h"

/* Marker shapes and line dashes: black-and-white prints tell series apart
 * by these, never by colour alone. */
typedef enum bl_shape {
    BL_SHAPE_CIRCLE, BL_SHAPE_SQUARE, BL_SHAPE_TRIANGLE, BL_SHAPE_DIAMOND, BL_SHAPE_CROSS,
    BL_SHAPE_COUNT
} bl_shape;

/* One chart: the data ranges and the plot area in pixels. Categorical x
 * axes put category i at x = i (range -0.5 .. n - 0.5). */
typedef struct bl_chart {
    bl_buf *out;
    double x0, x1, y0, y1;
    double left, top, width, height;
    const char *const *categories; /* NULL for a numeric x axis */
    size_t ncategories;
    size_t legend_rows;
    size_t marks;                  /* data marks written (class "mark") */
} bl_chart;

/* Range bookkeeping before the chart is drawn: the union of the values
 * given, padded by 6 % (a single value gets a unit-wide range). */
typedef struct bl_range {
    double lo, hi;
    bool any;
} bl_range;
void bl_range_add(bl_range *r, double v);
void bl_range_finish(const bl_range *r, double *lo, double *hi);

/* Starts the document and draws the title, the frame, the axes with their
 * ticks and labels (units in the label text). */
void bl_chart_begin(bl_chart *c, bl_buf *out, const char *title, const char *xlabel,
                    const char *ylabel);
void bl_chart_end(bl_chart *c);

double bl_chart_px(const bl_chart *c, double x);
double bl_chart_py(const bl_chart *c, double y);

/* A number in Python repr form, for data-* attributes. */
void bl_svg_number(bl_buf *b, double v);
/* Text with &, <, >, " and ' escaped. */
void bl_svg_text(bl_buf *b, const char *s);

/* Data marks. `cls` names the mark's role (estimate, interval, ...);
 * `series` and `category` its series and category in the data-*
 * attributes (either may be NULL). */
void bl_chart_point(bl_chart *c, const char *cls, const char *series, const char *category,
                    double x, double y, bl_shape shape, bool filled, double size);
void bl_chart_interval(bl_chart *c, const char *cls, const char *series, const char *category,
                       double x, double lo, double hi, double half_width);
/* A shaded band from lo to hi over x in [xa, xb], dashed edges, with its
 * centre line at `mid` (dashed). */
void bl_chart_band(bl_chart *c, const char *cls, const char *category, double xa, double xb,
                   double lo, double mid, double hi);
/* A polyline through (x[i], y[i]) with dash pattern `dash` (0 solid). */
void bl_chart_line(bl_chart *c, const char *series, const double *x, const double *y, size_t n,
                   int dash);
/* A horizontal reference line (not a data mark) at y. */
void bl_chart_hline(bl_chart *c, const char *cls, double y, int dash);
/* A note inside the plot at category/x position (no estimate, ...). */
void bl_chart_note(bl_chart *c, double x, double y, const char *text);

/* Legend entries (drawn in a column right of the plot); labels longer than
 * the column are shortened with "...". */
typedef enum bl_legend_kind {
    BL_LEGEND_MARKER,   /* the marker alone */
    BL_LEGEND_INTERVAL, /* an interval bar */
    BL_LEGEND_BAND,     /* a null band */
    BL_LEGEND_LINE,     /* a series: its dashed line through its marker */
    BL_LEGEND_RULE,     /* a reference line (chance, null mean, zero) */
} bl_legend_kind;
void bl_chart_legend(bl_chart *c, bl_legend_kind kind, const char *label, bl_shape shape,
                     bool filled, int dash);

/* SVG dash arrays by index (0 solid). */
const char *bl_svg_dash(int dash);

#endif
