/* tests/io/test_svg.c — the SVG chart module of rlvr report (io/svg.h):
 * nice ticks (exact cases and properties over many ranges), tick labels,
 * escaping, NaN gaps, stacked ranges, pass/fail marks, and thinning of long
 * series (size bounded, extremes kept). */
#include "io/svg.h"
#include "test.h"

#include <stdint.h>

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The d="…" of the first element after `marker`, copied into buf. */
static bool path_after(const char *svg, const char *marker, char *buf, size_t cap) {
    const char *p = strstr(svg, marker);
    if (!p || !(p = strstr(p, " d=\""))) return false;
    p += 4;
    const char *end = strchr(p, '"');
    if (!end || (size_t)(end - p) >= cap) return false;
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    return true;
}

static bool is_nice(double step) {
    double mag = pow(10.0, floor(log10(step)));
    double m = step / mag;
    return fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 2.5) < 1e-9 || fabs(m - 5) < 1e-9 || fabs(m - 10) < 1e-9;
}

static void test_ticks_exact(void) {
    rlvr_svg_ticks t;
    rlvr_svg_nice_ticks(&t, 0, 1, 5);
    CHECK_NEAR(t.step, 0.2, 1e-12);
    CHECK(t.n == 6 && t.lo == 0 && fabs(t.hi - 1) < 1e-12);
    rlvr_svg_nice_ticks(&t, -3.7, 12.2, 5); /* raw step 3.18 → 5 */
    CHECK_NEAR(t.step, 5, 1e-12);
    CHECK_NEAR(t.lo, -5, 1e-12);
    CHECK_NEAR(t.hi, 15, 1e-12);
    CHECK(t.n == 5);
    rlvr_svg_nice_ticks(&t, 0, 0, 5); /* all zero: a unit range from 0 */
    CHECK(t.lo == 0 && fabs(t.hi - 1) < 1e-12);
    rlvr_svg_nice_ticks(&t, NAN, 3, 5); /* nothing finite: still drawable */
    CHECK(t.lo == 0 && fabs(t.hi - 1) < 1e-12 && t.n >= 2);
    rlvr_svg_nice_ticks(&t, 5, 5, 4); /* one value: widened around it */
    CHECK(t.lo < 5 && t.hi > 5 && t.n >= 2);
    rlvr_svg_nice_ticks(&t, 10, 0, 5); /* reversed */
    CHECK(t.lo == 0 && fabs(t.hi - 10) < 1e-12);
    rlvr_svg_nice_ticks(&t, -1e-3, 1e-3, 4);
    for (int i = 0; i < t.n; i++) CHECK(t.v[i] != 0 || !signbit(t.v[i])); /* no "-0" */
}

/* Over many ranges: ticks cover the range, are whole nice steps apart, and
 * never exceed the array. */
static void test_ticks_properties(void) {
    uint64_t s = 12345;
    for (int trial = 0; trial < 20000; trial++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double a = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * pow(10.0, (double)((s >> 3) % 13) - 6);
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        double b = a + (double)(s >> 11) / 9007199254740992.0 * pow(10.0, (double)((s >> 5) % 13) - 6);
        int target = 1 + (int)((s >> 7) % 20);
        rlvr_svg_ticks t;
        rlvr_svg_nice_ticks(&t, a, b, target);
        bool ok = t.n >= 2 && t.n <= RLVR_SVG_MAX_TICKS && t.lo <= a && t.hi >= b && is_nice(t.step);
        for (int i = 1; ok && i < t.n; i++) ok = fabs(t.v[i] - t.v[i - 1] - t.step) <= 1e-9 * fmax(1, fabs(t.v[i]));
        ok = ok && fabs(t.v[0] - t.lo) <= 1e-9 * fmax(t.step, fabs(t.lo));
        CHECK_MSG(ok, "range [%g, %g] target %d: lo %g hi %g step %g n %d", a, b, target, t.lo, t.hi, t.step, t.n);
        if (!ok) break;
    }
}

static void test_tick_labels(void) {
    char buf[32];
    rlvr_svg_format_tick(buf, sizeof buf, 0.25, 0.25);
    CHECK(strcmp(buf, "0.25") == 0);
    rlvr_svg_format_tick(buf, sizeof buf, 0.3, 0.1);
    CHECK(strcmp(buf, "0.3") == 0);
    rlvr_svg_format_tick(buf, sizeof buf, 1200, 200);
    CHECK(strcmp(buf, "1200") == 0);
    rlvr_svg_format_tick(buf, sizeof buf, -1e-17, 0.5);
    CHECK(strcmp(buf, "0") == 0);
    rlvr_svg_format_tick(buf, sizeof buf, 2.5e6, 5e5);
    CHECK(strcmp(buf, "2.5e+06") == 0);
    rlvr_svg_format_tick(buf, sizeof buf, 3e-5, 1e-5);
    CHECK(strcmp(buf, "3e-05") == 0);
}

static void test_escaping(void) {
    rlvr_text t = {0};
    rlvr_text_escaped(&t, "<a & 'b' \"c\">");
    CHECK(t.data && strcmp(t.data, "&lt;a &amp; &#39;b&#39; &quot;c&quot;&gt;") == 0);
    rlvr_text_free(&t);

    double x[] = {1, 2}, y[] = {1, 2};
    rlvr_svg_series s = {.name = "a<b & \"c\"", .x = x, .y = y, .n = 2};
    rlvr_svg_chart c = {.id = "esc", .title = "T <script>", .y_label = "y&z", .series = &s, .n_series = 1};
    CHECK(rlvr_svg_render(&t, &c) == 1);
    CHECK(!t.failed && t.data);
    CHECK(strstr(t.data, "a&lt;b &amp; &quot;c&quot;") != NULL);
    CHECK(strstr(t.data, "a<b") == NULL && strstr(t.data, "<script>") == NULL);
    CHECK(strstr(t.data, "y&amp;z") != NULL);
    CHECK(strstr(t.data, "http") == NULL); /* inline SVG needs no namespace URL */
    rlvr_text_free(&t);
}

/* NaN breaks the line: runs {0}, {2,3}, {5} → three subpaths, two lone dots,
 * four points counted; an all-NaN series is neither drawn nor in the legend. */
static void test_nan_gaps(void) {
    double x[] = {1, 2, 3, 4, 5, 6}, y[] = {1, NAN, 3, 4, INFINITY, 6}, none[] = {NAN, NAN, NAN, NAN, NAN, NAN};
    rlvr_svg_series s[] = {{.name = "gappy", .x = x, .y = y, .n = 6}, {.name = "empty", .x = x, .y = none, .n = 6}};
    rlvr_svg_chart c = {.id = "gaps", .title = "gaps", .series = s, .n_series = 2};
    CHECK(rlvr_svg_series_points(&s[0]) == 4 && rlvr_svg_series_points(&s[1]) == 0);
    rlvr_text t = {0};
    CHECK(rlvr_svg_render(&t, &c) == 1);
    CHECK(strstr(t.data, "id=\"chart-gaps\" data-series=\"1\" data-points=\"4\"") != NULL);
    CHECK(count(t.data, "<g class=\"series") == 1);
    CHECK(strstr(t.data, "data-name=\"empty\"") == NULL && strstr(t.data, ">empty<") == NULL);
    char d[4096];
    CHECK(path_after(t.data, "data-name=\"gappy\"", d, sizeof d));
    CHECK_MSG(count(d, "M") == 3 && count(d, "L") == 1, "d=\"%s\"", d);
    CHECK(count(t.data, "class=\"lone\"") == 2);
    CHECK(strstr(t.data, "nan") == NULL && strstr(t.data, "NaN") == NULL && strstr(t.data, "inf") == NULL);
    rlvr_text_free(&t);
}

/* Stacked areas reach the sum of their parts (NaN adds nothing). */
static void test_stack(void) {
    double x[] = {1, 2}, a[] = {1, 1}, b[] = {2, NAN};
    rlvr_svg_series s[] = {{.name = "a", .kind = RLVR_SVG_STACK, .x = x, .y = a, .n = 2},
                           {.name = "b", .kind = RLVR_SVG_STACK, .x = x, .y = b, .n = 2}};
    rlvr_svg_chart c = {.id = "stack", .title = "stack", .series = s, .n_series = 2, .y_from_zero = true};
    rlvr_text t = {0};
    CHECK(rlvr_svg_render(&t, &c) == 2);
    const char *axis = strstr(t.data, "class=\"axis-y\"");
    const char *axis_end = axis ? strstr(axis, "</g>") : NULL;
    CHECK(axis && axis_end);
    char top_label[] = ">3</text>";
    const char *hit = axis ? strstr(axis, top_label) : NULL;
    CHECK_MSG(hit && hit < axis_end, "the left axis reaches 1 + 2 = 3");
    CHECK(count(t.data, "class=\"area\"") == 2);
    rlvr_text_free(&t);
}

static void test_marks(void) {
    double x[] = {10, 20, 30}, y[] = {0.5, 0.4, 0.6}, lo[] = {0.4, 0.3, 0.5}, hi[] = {0.6, 0.5, 0.7};
    int8_t status[] = {1, 0, -1};
    rlvr_svg_series s = {.name = "cand", .kind = RLVR_SVG_MARKS, .x = x, .y = y, .lo = lo, .hi = hi,
                         .status = status, .n = 3};
    rlvr_svg_chart c = {.id = "marks", .title = "marks", .series = &s, .n_series = 1};
    rlvr_text t = {0};
    CHECK(rlvr_svg_render(&t, &c) == 1);
    CHECK(count(t.data, "class=\"mark passed\"") == 1);
    CHECK(count(t.data, "class=\"mark failed\"") == 1);
    CHECK(count(t.data, "class=\"interval\"") == 3);
    CHECK(strstr(t.data, ">passed</text>") && strstr(t.data, ">failed</text>"));
    CHECK(strstr(t.data, "(failed)</title>") != NULL);
    rlvr_text_free(&t);
}

/* 200 000 points with one spike: the page stays small, the spike stays. */
static void test_thinning(void) {
    size_t n = 200000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) x[i] = (double)i, y[i] = (double)(i % 7) / 7.0;
    y[123457] = 1000;
    rlvr_svg_series s = {.name = "long", .x = x, .y = y, .n = n};
    rlvr_svg_chart c = {.id = "long", .title = "long", .series = &s, .n_series = 1};
    rlvr_text t = {0};
    CHECK(rlvr_svg_render(&t, &c) == 1);
    CHECK_MSG(t.len < 200000, "%zu bytes for a thinned chart", t.len);
    CHECK(strstr(t.data, "data-points=\"200000\"") != NULL);
    /* the spike is the highest tick (1000) and the line reaches the frame's top */
    const char *frame = strstr(t.data, "class=\"frame\"");
    double top = -1;
    CHECK(frame && sscanf(strstr(frame, " y=\"") + 4, "%lf", &top) == 1);
    char *d = malloc(t.len);
    CHECK(path_after(t.data, "data-name=\"long\"", d, t.len));
    double min_y = INFINITY;
    for (char *p = d; *p;) {
        double px, py;
        int used = 0;
        if (sscanf(p, "%*[ML]%lf %lf%n", &px, &py, &used) == 2 && used > 0) {
            if (py < min_y) min_y = py;
            p += used;
        } else {
            p++;
        }
    }
    CHECK_NEAR(min_y, top, 0.11);
    free(d);
    free(x), free(y);
    rlvr_text_free(&t);
}

int main(void) {
    test_ticks_exact();
    test_ticks_properties();
    test_tick_labels();
    test_escaping();
    test_nan_gaps();
    test_stack();
    test_marks();
    test_thinning();
    return test_summary("test_svg");
}
