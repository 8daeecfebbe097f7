/* io/svg.c — SVG charts as text (see io/svg.h). */
#include "io/svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- text buffer ------------------------------------------------------------ */

void rlvr_text_escaped(rlvr_text *t, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': rlvr_text_printf(t, "&amp;"); break;
        case '<': rlvr_text_printf(t, "&lt;"); break;
        case '>': rlvr_text_printf(t, "&gt;"); break;
        case '"': rlvr_text_printf(t, "&quot;"); break;
        case '\'': rlvr_text_printf(t, "&#39;"); break;
        default: rlvr_text_printf(t, "%c", *s);
        }
    }
}


/* ---- ticks ------------------------------------------------------------------ */

/* The smallest nice step (1, 2, 2.5, 5 × 10^k) at least `raw`. */
static double nice_step_at_least(double raw) {
    double mag = pow(10.0, floor(log10(raw)));
    static const double mult[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
        if (mult[i] * mag >= raw * (1 - 1e-12)) return mult[i] * mag;
    return 10 * mag;
}

/* A range a chart can draw: finite, ordered and not empty. */
static void drawable_range(double *lo, double *hi) {
    if (!isfinite(*lo) || !isfinite(*hi)) *lo = 0, *hi = 1;
    if (*lo > *hi) {
        double t = *lo;
        *lo = *hi, *hi = t;
    }
    double scale = fmax(fabs(*lo), fabs(*hi));
    if (scale == 0) { /* all zero: show 0 at the bottom of a unit range */
        *lo = 0, *hi = 1;
        return;
    }
    if (*hi - *lo <= scale * 1e-12) {
        double pad = scale > 0 ? scale * 0.1 : 1.0;
        *lo -= pad, *hi += pad;
    }
}

void rlvr_svg_nice_ticks(rlvr_svg_ticks *out, double lo, double hi, int target) {
    drawable_range(&lo, &hi);
    if (target < 1) target = 1;
    if (target > RLVR_SVG_MAX_TICKS - 1) target = RLVR_SVG_MAX_TICKS - 1;
    double step = nice_step_at_least((hi - lo) / target);
    double a = floor(lo / step) * step, b = ceil(hi / step) * step;
    /* rounding can add a tick or two beyond the target: take bigger steps */
    while (isfinite(step) && (b - a) / step + 1.5 > RLVR_SVG_MAX_TICKS) {
        step = nice_step_at_least(step * 1.0001);
        a = floor(lo / step) * step, b = ceil(hi / step) * step;
    }
    if (!isfinite(step) || step <= 0 || !isfinite(a) || !isfinite(b)) {
        rlvr_svg_nice_ticks(out, 0, 1, target);
        return;
    }
    out->lo = a, out->hi = b, out->step = step;
    out->n = (int)llround((b - a) / step) + 1;
    for (int i = 0; i < out->n; i++) {
        double v = a + i * step;
        out->v[i] = fabs(v) < step * 1e-9 ? 0.0 : v; /* no "-0" or 1e-17 */
    }
}

void rlvr_svg_format_tick(char *buf, size_t cap, double v, double step) {
    step = fabs(step);
    if (v == 0 || (step > 0 && fabs(v) < step * 1e-9)) {
        snprintf(buf, cap, "0");
        return;
    }
    if (!(step >= 1e-4) || fabs(v) >= 1e6) {
        snprintf(buf, cap, "%.3g", v);
        return;
    }
    int decimals = 0; /* the fewest that show the step exactly */
    while (decimals < 10) {
        double scaled = step * pow(10.0, decimals);
        if (fabs(scaled - round(scaled)) < 1e-6 * scaled) break;
        decimals++;
    }
    snprintf(buf, cap, "%.*f", decimals, v);
}

/* ---- plot geometry ------------------------------------------------------------ */

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#d62728"};
#define PALETTE_SIZE (sizeof palette / sizeof palette[0])
#define FAIL_COLOR "#d62728"
#define BAND_COLOR "#2ca02c"
#define MARKER_LIMIT 60 /* series with at most this many points get a dot (with a tooltip) per point */

typedef struct {
    double x0, x1, y0, y1;     /* plot area in pixels (y0 top) */
    rlvr_svg_ticks xt, yt, y2t;
    bool has_right;
} plot;

static double px(const plot *p, double x) { return p->x0 + (x - p->xt.lo) / (p->xt.hi - p->xt.lo) * (p->x1 - p->x0); }

static double py(const plot *p, double y, bool right) {
    const rlvr_svg_ticks *t = right ? &p->y2t : &p->yt;
    return p->y1 - (y - t->lo) / (t->hi - t->lo) * (p->y1 - p->y0);
}

static bool finite2(double a, double b) { return isfinite(a) && isfinite(b); }

size_t rlvr_svg_series_points(const rlvr_svg_series *s) {
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) n += finite2(s->x[i], s->y[i]);
    return n;
}

/* ---- stacking ---------------------------------------------------------------- */

/* For each STACK series, the bottom and top of its area: the running sum of
 * the STACK series before it (a NaN adds 0). Arrays of 2·n per series; NULL
 * for the others. */
typedef struct {
    double **base, **top;
} stacks;

static void stacks_free(stacks *st, size_t n_series) {
    for (size_t k = 0; st->base && k < n_series; k++) free(st->base[k]);
    free(st->base);
    free(st->top);
}

static bool stacks_build(stacks *st, const rlvr_svg_chart *c) {
    st->base = calloc(c->n_series ? c->n_series : 1, sizeof *st->base);
    st->top = calloc(c->n_series ? c->n_series : 1, sizeof *st->top);
    if (!st->base || !st->top) return false;
    const double *below = NULL;
    size_t below_n = 0;
    for (size_t k = 0; k < c->n_series; k++) {
        const rlvr_svg_series *s = &c->series[k];
        if (s->kind != RLVR_SVG_STACK) continue;
        double *buf = malloc(2 * (s->n ? s->n : 1) * sizeof *buf);
        if (!buf) return false;
        st->base[k] = buf, st->top[k] = buf + s->n;
        for (size_t i = 0; i < s->n; i++) {
            double b = below && i < below_n ? below[i] : 0.0;
            st->base[k][i] = isfinite(b) ? b : 0.0;
            st->top[k][i] = st->base[k][i] + (isfinite(s->y[i]) ? s->y[i] : 0.0);
        }
        below = st->top[k], below_n = s->n;
    }
    return true;
}

/* ---- ranges -------------------------------------------------------------------- */

typedef struct {
    double lo, hi;
} range;

static void widen(range *r, double v) {
    if (!isfinite(v)) return;
    if (v < r->lo) r->lo = v;
    if (v > r->hi) r->hi = v;
}

static void series_y_range(range *r, const rlvr_svg_series *s, const double *top) {
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(s->x[i])) continue;
        if (s->kind == RLVR_SVG_STACK) {
            if (isfinite(s->y[i])) widen(r, top[i]), widen(r, 0);
            continue;
        }
        widen(r, s->y[i]);
        if (s->lo) widen(r, s->lo[i]);
        if (s->hi) widen(r, s->hi[i]);
    }
}

static bool all_integers(const rlvr_svg_chart *c) {
    for (size_t k = 0; k < c->n_series; k++)
        for (size_t i = 0; i < c->series[k].n; i++) {
            double x = c->series[k].x[i];
            if (isfinite(x) && x != floor(x)) return false;
        }
    return true;
}

static bool has_marks(const rlvr_svg_chart *c) {
    for (size_t k = 0; k < c->n_series; k++)
        if (c->series[k].kind == RLVR_SVG_MARKS) return true;
    return false;
}

static void set_axes(plot *p, const rlvr_svg_chart *c, const stacks *st) {
    range x = {INFINITY, -INFINITY}, y = {INFINITY, -INFINITY}, y2 = {INFINITY, -INFINITY};
    p->has_right = false;
    for (size_t k = 0; k < c->n_series; k++) {
        const rlvr_svg_series *s = &c->series[k];
        if (rlvr_svg_series_points(s) == 0) continue;
        for (size_t i = 0; i < s->n; i++)
            if (isfinite(s->y[i])) widen(&x, s->x[i]);
        series_y_range(s->right_axis ? &y2 : &y, s, st->top[k]);
        p->has_right |= s->right_axis;
    }
    for (size_t b = 0; b < c->n_bands; b++) widen(&y, c->bands[b].lo), widen(&y, c->bands[b].hi);
    if (c->y_from_zero) widen(&y, 0);
    if (c->y2_from_zero && p->has_right) widen(&y2, 0);
    bool xint = all_integers(c);
    if (xint && x.lo == x.hi) x.lo -= 1, x.hi += 1;
    if (has_marks(c) && isfinite(x.lo)) { /* room for the marks at both ends */
        double pad = 0.05 * (x.hi - x.lo);
        x.lo -= pad, x.hi += pad;
    }
    /* integer x (steps): integer ticks, so no "2.5" between steps */
    int xtarget = 8;
    do {
        rlvr_svg_nice_ticks(&p->xt, x.lo, x.hi, xtarget);
    } while (xint && p->xt.step != floor(p->xt.step) && --xtarget >= 1);
    rlvr_svg_nice_ticks(&p->yt, y.lo, y.hi, 5);
    rlvr_svg_nice_ticks(&p->y2t, y2.lo, y2.hi, 5);
}

/* ---- paths ------------------------------------------------------------------- */

typedef struct {
    double x, y;
} pt;

enum { KEEP_ALL, KEEP_MAX, KEEP_MIN };

/* Pixel points of y[a..b) (all finite): every point, or — when there are
 * more points than pixel columns — per column the first, lowest, highest
 * and last value (KEEP_ALL) or only the highest / lowest (band edges). */
static size_t run_points(pt *out, const plot *p, const double *x, const double *y, size_t a, size_t b, bool right,
                         bool thin, int keep) {
    size_t n = 0;
    for (size_t i = a; i < b;) {
        double col = floor(px(p, x[i]));
        if (!thin) {
            out[n++] = (pt){px(p, x[i]), py(p, y[i], right)};
            i++;
            continue;
        }
        double first = y[i], last = y[i], lo = y[i], hi = y[i];
        size_t j = i + 1;
        for (; j < b && floor(px(p, x[j])) == col; j++) last = y[j], lo = fmin(lo, y[j]), hi = fmax(hi, y[j]);
        double cx = col + 0.5;
        if (keep == KEEP_MAX) out[n++] = (pt){cx, py(p, hi, right)};
        else if (keep == KEEP_MIN) out[n++] = (pt){cx, py(p, lo, right)};
        else {
            out[n++] = (pt){cx, py(p, first, right)};
            out[n++] = (pt){cx, py(p, lo, right)};
            out[n++] = (pt){cx, py(p, hi, right)};
            out[n++] = (pt){cx, py(p, last, right)};
        }
        i = j;
    }
    return n;
}

static void emit_points(rlvr_text *t, const pt *v, size_t n, bool move_first) {
    for (size_t i = 0; i < n; i++) rlvr_text_printf(t, "%s%.1f %.1f", i == 0 && move_first ? "M" : " L", v[i].x, v[i].y);
}

/* The next run [*a, *b) of indices >= from where x and every given array are finite. */
static bool next_run(size_t from, size_t n, const double *x, const double *y1, const double *y2, size_t *a, size_t *b) {
#define OK(i) (isfinite(x[i]) && isfinite(y1[i]) && (!y2 || isfinite(y2[i])))
    size_t i = from;
    while (i < n && !OK(i)) i++;
    if (i >= n) return false;
    size_t j = i;
    while (j < n && OK(j)) j++;
#undef OK
    *a = i, *b = j;
    return true;
}

/* Filled area between lo and hi where both are finite. */
static void emit_band(rlvr_text *t, const plot *p, const double *x, const double *lo, const double *hi, size_t n,
                      bool right, bool thin, pt *buf, const char *fill, double opacity, const char *cls) {
    rlvr_text_printf(t, "<path class=\"%s\" fill=\"%s\" fill-opacity=\"%.2f\" stroke=\"none\" d=\"", cls, fill, opacity);
    size_t a, b, from = 0;
    while (next_run(from, n, x, lo, hi, &a, &b)) {
        size_t m = run_points(buf, p, x, hi, a, b, right, thin, KEEP_MAX);
        emit_points(t, buf, m, true);
        m = run_points(buf, p, x, lo, a, b, right, thin, KEEP_MIN);
        for (size_t i = 0; i < m / 2; i++) {
            pt tmp = buf[i];
            buf[i] = buf[m - 1 - i], buf[m - 1 - i] = tmp;
        }
        emit_points(t, buf, m, false);
        rlvr_text_printf(t, " Z");
        from = b;
    }
    rlvr_text_printf(t, "\"/>");
}

/* Polyline with gaps at NaN; lone points (a run of one) get a dot. */
static void emit_line(rlvr_text *t, const plot *p, const rlvr_svg_series *s, const double *y, const char *color,
                      double width, bool thin, pt *buf) {
    rlvr_text_printf(t, "<path class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s d=\"", color, width,
                     s->dashed ? " stroke-dasharray=\"5 3\"" : "");
    size_t a, b, from = 0;
    bool any = false;
    while (next_run(from, s->n, s->x, y, NULL, &a, &b)) {
        if (any) rlvr_text_printf(t, " ");
        emit_points(t, buf, run_points(buf, p, s->x, y, a, b, s->right_axis, thin, KEEP_ALL), true);
        any = true;
        from = b;
    }
    rlvr_text_printf(t, "\"/>");
    for (from = 0; next_run(from, s->n, s->x, y, NULL, &a, &b); from = b)
        if (b - a == 1)
            rlvr_text_printf(t, "<circle class=\"lone\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>", px(p, s->x[a]),
                             py(p, y[a], s->right_axis), color);
}

static void emit_tooltip(rlvr_text *t, const rlvr_svg_series *s, size_t i) {
    rlvr_text_printf(t, "<title>");
    rlvr_text_escaped(t, s->name);
    rlvr_text_printf(t, " at %g: %.6g", s->x[i], s->y[i]);
    if (s->lo && s->hi && finite2(s->lo[i], s->hi[i])) rlvr_text_printf(t, " [%.6g, %.6g]", s->lo[i], s->hi[i]);
    if (s->status && s->status[i] >= 0) rlvr_text_printf(t, " (%s)", s->status[i] ? "passed" : "failed");
    rlvr_text_printf(t, "</title>");
}

/* MARKS: error bar, then a circle (passed / plain) or a cross (failed). */
static void emit_marks(rlvr_text *t, const plot *p, const rlvr_svg_series *s, const char *color) {
    for (size_t i = 0; i < s->n; i++) {
        if (!finite2(s->x[i], s->y[i])) continue;
        double cx = px(p, s->x[i]), cy = py(p, s->y[i], s->right_axis);
        if (s->lo && s->hi && finite2(s->lo[i], s->hi[i])) {
            double ylo = py(p, s->lo[i], s->right_axis), yhi = py(p, s->hi[i], s->right_axis);
            rlvr_text_printf(t,
                             "<path class=\"interval\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%.1f %.1f L%.1f %.1f "
                             "M%.1f %.1f L%.1f %.1f M%.1f %.1f L%.1f %.1f\"/>",
                             color, cx, ylo, cx, yhi, cx - 4, ylo, cx + 4, ylo, cx - 4, yhi, cx + 4, yhi);
        }
        int status = s->status ? s->status[i] : -1;
        if (status == 0) {
            rlvr_text_printf(t,
                             "<g class=\"mark failed\"><path stroke=\"" FAIL_COLOR "\" stroke-width=\"2.5\" "
                             "d=\"M%.1f %.1f L%.1f %.1f M%.1f %.1f L%.1f %.1f\"/>",
                             cx - 5, cy - 5, cx + 5, cy + 5, cx - 5, cy + 5, cx + 5, cy - 5);
        } else {
            rlvr_text_printf(t, "<g class=\"mark%s\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\" stroke=\"#fff\"/>",
                             status == 1 ? " passed" : "", cx, cy, status == 1 ? "5" : "3.5", color);
        }
        emit_tooltip(t, s, i);
        rlvr_text_printf(t, "</g>");
    }
}

static void emit_dots(rlvr_text *t, const plot *p, const rlvr_svg_series *s, const double *y, const char *color) {
    for (size_t i = 0; i < s->n; i++) {
        if (!finite2(s->x[i], y[i])) continue;
        rlvr_text_printf(t, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">", px(p, s->x[i]),
                         py(p, y[i], s->right_axis), color);
        emit_tooltip(t, s, i);
        rlvr_text_printf(t, "</circle>");
    }
}

static void emit_series(rlvr_text *t, const plot *p, const rlvr_svg_series *s, const stacks *st, size_t k,
                        const char *color, pt *buf) {
    size_t points = rlvr_svg_series_points(s);
    bool thin = (double)points > 2 * (p->x1 - p->x0);
    rlvr_text_printf(t, "<g class=\"series %s\" data-name=\"",
                     s->kind == RLVR_SVG_STACK ? "stack" : s->kind == RLVR_SVG_MARKS ? "marks" : "line");
    rlvr_text_escaped(t, s->name);
    rlvr_text_printf(t, "\" data-points=\"%zu\" data-axis=\"%s\">", points, s->right_axis ? "right" : "left");
    if (s->kind == RLVR_SVG_STACK) {
        /* the area only where this series was measured */
        double *top = st->top[k];
        double *masked = malloc((s->n ? s->n : 1) * sizeof *masked);
        if (!masked) {
            t->failed = true;
            return;
        }
        for (size_t i = 0; i < s->n; i++) masked[i] = isfinite(s->y[i]) ? top[i] : NAN;
        emit_band(t, p, s->x, st->base[k], masked, s->n, s->right_axis, thin, buf, color, 0.75, "area");
        emit_line(t, p, s, masked, color, 1.0, thin, buf);
        if (points <= MARKER_LIMIT) emit_dots(t, p, s, masked, color);
        free(masked);
    } else if (s->kind == RLVR_SVG_MARKS) {
        emit_line(t, p, s, s->y, color, 1.0, thin, buf);
        emit_marks(t, p, s, color);
    } else {
        if (s->lo && s->hi) emit_band(t, p, s->x, s->lo, s->hi, s->n, s->right_axis, thin, buf, color, 0.2, "band");
        emit_line(t, p, s, s->y, color, 1.8, thin, buf);
        if (points <= MARKER_LIMIT) emit_dots(t, p, s, s->y, color);
    }
    rlvr_text_printf(t, "</g>");
}

/* ---- frame: axes, ticks, labels, legend --------------------------------------------- */

static void emit_axes(rlvr_text *t, const plot *p, const rlvr_svg_chart *c) {
    char label[64];
    rlvr_text_printf(t, "<g class=\"axis-y\" font-size=\"11\" fill=\"#444\">");
    for (int i = 0; i < p->yt.n; i++) {
        double y = py(p, p->yt.v[i], false);
        rlvr_svg_format_tick(label, sizeof label, p->yt.v[i], p->yt.step);
        rlvr_text_printf(t,
                         "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                         p->x0, p->x1, y, y, p->x0 - 6, y + 4, label);
    }
    rlvr_text_printf(t, "</g><g class=\"axis-x\" font-size=\"11\" fill=\"#444\">");
    for (int i = 0; i < p->xt.n; i++) {
        double x = px(p, p->xt.v[i]);
        rlvr_svg_format_tick(label, sizeof label, p->xt.v[i], p->xt.step);
        rlvr_text_printf(t,
                         "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                         x, x, p->y1, p->y1 + 5, x, p->y1 + 18, label);
    }
    rlvr_text_printf(t, "</g>");
    if (p->has_right) {
        rlvr_text_printf(t, "<g class=\"axis-y2\" font-size=\"11\" fill=\"#444\">");
        for (int i = 0; i < p->y2t.n; i++) {
            double y = py(p, p->y2t.v[i], true);
            rlvr_svg_format_tick(label, sizeof label, p->y2t.v[i], p->y2t.step);
            rlvr_text_printf(t,
                             "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>"
                             "<text x=\"%.1f\" y=\"%.1f\">%s</text>",
                             p->x1, p->x1 + 5, y, y, p->x1 + 7, y + 4, label);
        }
        rlvr_text_printf(t, "</g>");
    }
    rlvr_text_printf(t, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                        "stroke=\"#888\"/>",
                     p->x0, p->y0, p->x1 - p->x0, p->y1 - p->y0);
    double mid_y = (p->y0 + p->y1) / 2;
    rlvr_text_printf(t, "<g class=\"axis-labels\" font-size=\"12\" fill=\"#222\">");
    rlvr_text_printf(t, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (p->x0 + p->x1) / 2, p->y1 + 36);
    rlvr_text_escaped(t, c->x_label ? c->x_label : "step");
    rlvr_text_printf(t, "</text><text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\">", p->x0 - 52,
                     mid_y);
    rlvr_text_escaped(t, c->y_label ? c->y_label : "");
    rlvr_text_printf(t, "</text>");
    if (p->has_right) {
        rlvr_text_printf(t, "<text transform=\"translate(%.1f %.1f) rotate(90)\" text-anchor=\"middle\">", p->x1 + 54,
                         mid_y);
        rlvr_text_escaped(t, c->y2_label ? c->y2_label : "");
        rlvr_text_printf(t, "</text>");
    }
    rlvr_text_printf(t, "</g>");
}

/* Legend entries: the drawn series, the bands, and pass/fail marks. */
typedef struct {
    const char *name, *color;
    char swatch; /* 'l' line, 'd' dashed line, 'a' area, 'p' passed circle, 'f' failed cross */
} legend_item;

#define LEGEND_ROW 18
#define LEGEND_CHAR_W 6.6 /* average glyph width at 12px: enough to lay out rows */

static double legend_item_width(const legend_item *it) { return 26 + LEGEND_CHAR_W * (double)strlen(it->name) + 14; }

static int legend_rows(const legend_item *items, size_t n, double x0, double x1) {
    int rows = n ? 1 : 0;
    double x = x0;
    for (size_t i = 0; i < n; i++) {
        double w = legend_item_width(&items[i]);
        if (x > x0 && x + w > x1) rows++, x = x0;
        x += w;
    }
    return rows;
}

static void emit_legend(rlvr_text *t, const legend_item *items, size_t n, double x0, double x1, double y_first) {
    rlvr_text_printf(t, "<g class=\"legend\" font-size=\"12\" fill=\"#222\">");
    double x = x0, y = y_first;
    for (size_t i = 0; i < n; i++) {
        const legend_item *it = &items[i];
        double w = legend_item_width(it);
        if (x > x0 && x + w > x1) y += LEGEND_ROW, x = x0;
        switch (it->swatch) {
        case 'a':
            rlvr_text_printf(t, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"%s\" fill-opacity=\"0.6\"/>", x,
                             y - 9, it->color);
            break;
        case 'p':
            rlvr_text_printf(t, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>", x + 9, y - 4, it->color);
            break;
        case 'f':
            rlvr_text_printf(t,
                             "<path stroke=\"%s\" stroke-width=\"2.5\" d=\"M%.1f %.1f L%.1f %.1f M%.1f %.1f L%.1f %.1f\"/>",
                             it->color, x + 4, y - 9, x + 14, y + 1, x + 4, y + 1, x + 14, y - 9);
            break;
        default:
            rlvr_text_printf(t, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\"%s/>",
                             x, x + 18, y - 4, y - 4, it->color, it->swatch == 'd' ? " stroke-dasharray=\"5 3\"" : "");
        }
        rlvr_text_printf(t, "<text x=\"%.1f\" y=\"%.1f\">", x + 24, y);
        rlvr_text_escaped(t, it->name);
        rlvr_text_printf(t, "</text>");
        x += w;
    }
    rlvr_text_printf(t, "</g>");
}

static size_t collect_legend(legend_item *items, const rlvr_svg_chart *c, const char *const *colors) {
    size_t n = 0;
    bool passed = false, failed = false;
    for (size_t k = 0; k < c->n_series; k++) {
        const rlvr_svg_series *s = &c->series[k];
        if (!colors[k]) continue;
        char sw = s->kind == RLVR_SVG_STACK ? 'a' : s->dashed ? 'd' : 'l';
        items[n++] = (legend_item){s->name ? s->name : "", colors[k], sw};
        for (size_t i = 0; s->kind == RLVR_SVG_MARKS && s->status && i < s->n; i++) {
            if (!finite2(s->x[i], s->y[i])) continue;
            passed |= s->status[i] == 1;
            failed |= s->status[i] == 0;
        }
    }
    for (size_t b = 0; b < c->n_bands; b++) items[n++] = (legend_item){c->bands[b].label ? c->bands[b].label : "", BAND_COLOR, 'a'};
    if (passed) items[n++] = (legend_item){"passed", "#555", 'p'};
    if (failed) items[n++] = (legend_item){"failed", FAIL_COLOR, 'f'};
    return n;
}

/* ---- the chart ---------------------------------------------------------------------- */

static void emit_hbands(rlvr_text *t, const plot *p, const rlvr_svg_chart *c) {
    for (size_t b = 0; b < c->n_bands; b++) {
        const rlvr_svg_hband *h = &c->bands[b];
        if (!finite2(h->lo, h->hi)) continue;
        double top = py(p, fmax(h->lo, h->hi), false), bottom = py(p, fmin(h->lo, h->hi), false);
        rlvr_text_printf(t,
                         "<rect class=\"hband\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"" BAND_COLOR
                         "\" fill-opacity=\"0.15\" stroke=\"" BAND_COLOR "\" stroke-opacity=\"0.5\" stroke-dasharray=\"4 3\"/>",
                         p->x0, top, p->x1 - p->x0, bottom - top);
    }
}

static int render(rlvr_text *t, const rlvr_svg_chart *c, const stacks *st, const char *const *colors, pt *buf) {
    int width = c->width > 0 ? c->width : 760, height = c->height > 0 ? c->height : 320;
    plot p;
    set_axes(&p, c, st);
    legend_item *items = malloc((c->n_series + c->n_bands + 2) * sizeof *items);
    if (!items) return -1;
    size_t n_items = collect_legend(items, c, colors);
    double left = 72, right = p.has_right ? 72 : 24;
    int rows = legend_rows(items, n_items, left, width - right);
    p.x0 = left, p.x1 = width - right;
    p.y0 = 30 + rows * LEGEND_ROW + 6, p.y1 = height - 46;
    if (p.y1 - p.y0 < 80) { /* a long legend: make room rather than squash the plot */
        height += (int)(80 - (p.y1 - p.y0));
        p.y1 = height - 46;
    }
    int drawn = 0;
    size_t points = 0;
    for (size_t k = 0; k < c->n_series; k++)
        if (colors[k]) drawn++, points += rlvr_svg_series_points(&c->series[k]);

    rlvr_text_printf(t, "<svg class=\"chart\" id=\"chart-%s\" data-series=\"%d\" data-points=\"%zu\" width=\"%d\" "
                        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"sans-serif\"><title>",
                     c->id, drawn, points, width, height, width, height);
    rlvr_text_escaped(t, c->title);
    rlvr_text_printf(t, "</title><text class=\"chart-title\" x=\"%.1f\" y=\"18\" font-size=\"14\" font-weight=\"bold\">",
                     left);
    rlvr_text_escaped(t, c->title);
    rlvr_text_printf(t, "</text>");
    emit_legend(t, items, n_items, left, width - right, 40);
    free(items);
    emit_axes(t, &p, c);
    rlvr_text_printf(t, "<clipPath id=\"clip-%s\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>",
                     c->id, p.x0 - 6, p.y0 - 6, p.x1 - p.x0 + 12, p.y1 - p.y0 + 12);
    rlvr_text_printf(t, "<g class=\"plot\" clip-path=\"url(#clip-%s)\">", c->id);
    emit_hbands(t, &p, c);
    for (size_t k = 0; k < c->n_series; k++)
        if (colors[k]) emit_series(t, &p, &c->series[k], st, k, colors[k], buf);
    rlvr_text_printf(t, "</g>");
    if (!drawn)
        rlvr_text_printf(t, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#888\">no data</text>",
                         (p.x0 + p.x1) / 2, (p.y0 + p.y1) / 2);
    rlvr_text_printf(t, "</svg>\n");
    return drawn;
}

int rlvr_svg_render(rlvr_text *out, const rlvr_svg_chart *c) {
    size_t longest = 1;
    for (size_t k = 0; k < c->n_series; k++)
        if (c->series[k].n > longest) longest = c->series[k].n;
    stacks st = {0};
    const char **colors = calloc(c->n_series ? c->n_series : 1, sizeof *colors);
    pt *buf = malloc(4 * longest * sizeof *buf);
    int drawn = -1;
    if (colors && buf && stacks_build(&st, c)) {
        size_t next = 0;
        for (size_t k = 0; k < c->n_series; k++)
            if (rlvr_svg_series_points(&c->series[k]) > 0) colors[k] = palette[next++ % PALETTE_SIZE];
        drawn = render(out, c, &st, colors, buf);
    }
    if (drawn < 0) out->failed = true;
    stacks_free(&st, c->n_series);
    free(colors);
    free(buf);
    return drawn < 0 ? 0 : drawn;
}
