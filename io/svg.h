/* io/svg.h — self-contained SVG charts (lines with bands, stacked areas,
 * pass/fail marks) drawn as text, for pages that must work offline
 * (rlvr report). No JavaScript, no external files: each chart is one
 * <svg class="chart"> element with axes, ticks, labels and a legend.
 *
 * Data conventions: x and y are parallel arrays; a NaN (or infinite) value
 * is a gap — the line breaks there and the point is not counted. Long
 * series are thinned to the min and max of each pixel column, so a chart of
 * a million steps stays a few hundred kilobytes.
 *
 * For tests and scripts the markup is stable: the <svg> carries
 * id="chart-<id>", data-series (series with at least one finite point) and
 * data-points (their finite points in all); every drawn series is a
 * <g class="series" data-name=… data-points=… data-axis="left|right">. */
#ifndef RLVR_IO_SVG_H
#define RLVR_IO_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/text.h"

/* ---- text ------------------------------------------------------------------ */

/* `s` with & < > " ' replaced by entities (safe in HTML/SVG text and attributes). */
void rlvr_text_escaped(rlvr_text *t, const char *s);

/* ---- axis ticks ------------------------------------------------------------ */

#define RLVR_SVG_MAX_TICKS 16

/* Ticks at "nice" multiples (1, 2, 2.5, 5 × 10^k) covering [lo, hi] with
 * about `target` intervals: lo/hi are the range widened outwards to whole
 * steps, v[0..n) the tick values. A degenerate or non-finite range is
 * widened to something drawable first. */
typedef struct {
    double lo, hi, step;
    int n;
    double v[RLVR_SVG_MAX_TICKS];
} rlvr_svg_ticks;

void rlvr_svg_nice_ticks(rlvr_svg_ticks *out, double lo, double hi, int target);

/* A tick label: as many decimals as `step` needs ("0.25", "1200"), or
 * exponent form ("1.5e+06", "2e-05") for very large or very small steps. */
void rlvr_svg_format_tick(char *buf, size_t cap, double v, double step);

/* ---- charts ---------------------------------------------------------------- */

typedef enum {
    RLVR_SVG_LINE,  /* polyline, with a shaded band where lo/hi are given */
    RLVR_SVG_STACK, /* area stacked on the STACK series before it (NaN adds 0) */
    RLVR_SVG_MARKS, /* points joined by a thin line; `status` gives pass/fail marks */
} rlvr_svg_kind;

typedef struct {
    const char *name;      /* legend text */
    rlvr_svg_kind kind;
    const double *x, *y;   /* (n) */
    const double *lo, *hi; /* (n) band, or NULL */
    const int8_t *status;  /* (n) MARKS: 1 passed (circle), 0 failed (cross), -1 plain; or NULL */
    size_t n;
    bool right_axis;       /* plot against the right-hand y axis */
    bool dashed;
} rlvr_svg_series;

/* A horizontal band across the plot, e.g. a target range. */
typedef struct {
    double lo, hi;
    const char *label;
} rlvr_svg_hband;

typedef struct {
    const char *id;        /* [A-Za-z0-9_-]+; the element id is "chart-<id>" */
    const char *title;
    const char *x_label, *y_label, *y2_label; /* y2_label: right axis, when a series uses it */
    const rlvr_svg_series *series;
    size_t n_series;
    const rlvr_svg_hband *bands;
    size_t n_bands;
    bool y_from_zero;      /* include 0 in the left axis range */
    bool y2_from_zero;
    int width, height;     /* pixels; 0: 760 × 320 */
} rlvr_svg_chart;

/* Finite points of one series (both x and y finite). */
size_t rlvr_svg_series_points(const rlvr_svg_series *s);

/* Appends the chart as one <svg> element. Returns the number of series
 * drawn (those with a finite point); series without one are left out of
 * the plot and the legend. */
int rlvr_svg_render(rlvr_text *out, const rlvr_svg_chart *chart);

#endif
