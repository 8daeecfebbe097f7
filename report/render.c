/* report/render.c — the model as one self-contained HTML page: header,
 * sections of inline SVG charts (io/svg.h) and tables, notes, inline CSS
 * and a few lines of script that check the charts once loaded. */
#include "core/error.h"
#include "core/fs.h"
#include "report/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- header ------------------------------------------------------------------------------ */

static void format_duration(char *buf, size_t cap, double s) {
    if (!isfinite(s) || s < 0) snprintf(buf, cap, "–");
    else if (s < 120) snprintf(buf, cap, "%.1f s", s);
    else if (s < 7200) snprintf(buf, cap, "%.1f min", s / 60);
    else snprintf(buf, cap, "%.1f h", s / 3600);
}

static void header_row(rlvr_text *t, const char *key, const char *value) {
    rlvr_text_printf(t, "<tr><th>");
    rlvr_text_escaped(t, key);
    rlvr_text_printf(t, "</th><td>");
    rlvr_text_escaped(t, value);
    rlvr_text_printf(t, "</td></tr>\n");
}

static void steps_row(rlvr_text *t, const char *key, const rlvr_report_steps *s) {
    char buf[512], dur[32];
    format_duration(dur, sizeof dur, s->wall_s);
    if (s->rows == 0) snprintf(buf, sizeof buf, "no rows");
    else
        snprintf(buf, sizeof buf, "%lld rows, steps %lld … %lld, wall time %s", (long long)s->rows,
                 (long long)s->first_step, (long long)s->last_step, dur);
    header_row(t, key, buf);
}

static void emit_header(rlvr_text *t, const rlvr_report *r, int64_t generated_unix) {
    const rlvr_report_header *h = &r->header;
    char buf[512], now[32];
    rlvr_text_printf(t, "<header><h1>rlvr report: ");
    rlvr_text_escaped(t, h->name);
    rlvr_text_printf(t, "</h1><table class=\"meta\" id=\"run-header\">\n");
    header_row(t, "run directory", r->run);
    if (h->has_config) {
        snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h->config_hash);
        header_row(t, "config hash", buf);
        if (h->has_seed) {
            snprintf(buf, sizeof buf, "%lld", (long long)h->seed);
            header_row(t, "seed", buf);
        }
        header_row(t, "configuration from", h->config_from);
    }
    const char *const attrs[][2] = {{h->status, "status"}, {h->started, "started"}, {h->finished, "finished"},
                                    {h->git_commit, "rlvr commit"}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (attrs[i][0][0]) header_row(t, attrs[i][1], attrs[i][0]);
    if (h->rl.present) steps_row(t, "RL (metrics.h5)", &h->rl);
    if (h->sft.present) steps_row(t, "SFT (sft/metrics.h5)", &h->sft);
    snprintf(buf, sizeof buf, "%zu", r->n_gates);
    header_row(t, "gate reports", buf);
    time_t tnow = (time_t)generated_unix;
    struct tm utc;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tnow, &utc));
    header_row(t, "page generated", now);
    rlvr_text_printf(t, "</table></header>\n");
}

/* ---- tables --------------------------------------------------------------------------------- */

/* The last row's measured columns. */
static void last_row_table(rlvr_text *t, const rlvr_metrics_table *m, const char *id, const char *title) {
    if (m->n_rows == 0) return;
    int64_t last = m->n_rows - 1;
    rlvr_text_printf(t, "<section class=\"card wide\"><h3>");
    rlvr_text_escaped(t, title);
    rlvr_text_printf(t, " — last row, step %lld</h3><table class=\"last\" id=\"%s\"><tr>", (long long)m->step[last], id);
    int col = 0;
    for (int i = 0; i < RLVR_METRIC_COUNT; i++) {
        if (!m->value[i] || !isfinite(m->value[i][last])) continue;
        if (col > 0 && col % 4 == 0) rlvr_text_printf(t, "</tr><tr>");
        rlvr_text_printf(t, "<th title=\"");
        rlvr_text_escaped(t, rlvr_metric_doc((rlvr_metric)i));
        rlvr_text_printf(t, "\">%s</th><td>", rlvr_metric_name((rlvr_metric)i));
        if (i == RLVR_METRIC_TIME_UNIX) { /* seconds since 1970 read better as a date */
            char when[32];
            time_t secs = (time_t)m->value[i][last];
            struct tm utc;
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%SZ", gmtime_r(&secs, &utc));
            rlvr_text_printf(t, "%s</td>", when);
        } else {
            rlvr_text_printf(t, "%.6g</td>", m->value[i][last]);
        }
        col++;
    }
    rlvr_text_printf(t, "</tr></table></section>\n");
}

static void cell_num(rlvr_text *t, double v, const char *fmt) {
    if (isfinite(v)) rlvr_text_printf(t, fmt, v);
    else rlvr_text_printf(t, "–");
}

static void cell_verdict(rlvr_text *t, int8_t passed) {
    rlvr_text_printf(t, "%s", passed == 1 ? "<span class=\"pass\">pass</span>"
                              : passed == 0 ? "<span class=\"fail\">FAIL</span>" : "–");
}

/* "0.312 vs 0.250": the candidate's pass@1 against the baseline's. */
static void cell_versus(rlvr_text *t, double cand, double base) {
    cell_num(t, cand, "%.3f");
    rlvr_text_printf(t, " vs ");
    cell_num(t, base, "%.3f");
}

/* " [-0.010, +0.140] pass": an interval and its verdict. */
static void cell_interval(rlvr_text *t, double low, double high, int8_t passed) {
    rlvr_text_printf(t, " [");
    cell_num(t, low, "%+.3f");
    rlvr_text_printf(t, ", ");
    cell_num(t, high, "%+.3f");
    rlvr_text_printf(t, "] ");
    cell_verdict(t, passed);
}

static void gate_regression_cell(rlvr_text *t, const rlvr_report_gate *g) {
    cell_verdict(t, g->regression_passed);
    if (!g->n_families) {
        rlvr_text_printf(t, " (no tasks)");
        return;
    }
    for (size_t i = 0; i < g->n_families; i++) {
        const rlvr_report_gate_family *f = &g->families[i];
        rlvr_text_printf(t, "<br>");
        rlvr_text_escaped(t, f->name);
        rlvr_text_printf(t, ": ");
        cell_versus(t, f->cand_pass1, f->base_pass1);
        cell_interval(t, f->low, f->high, f->passed);
    }
}

static void gate_table(rlvr_text *t, const rlvr_report *r) {
    rlvr_text_printf(t, "<section class=\"card wide\"><h3>Gate reports</h3><table class=\"gate\" id=\"gate-table\">"
                        "<tr><th>report</th><th>step</th><th>version</th><th>decision</th><th>target: cand vs base</th>"
                        "<th>diff [interval]</th><th>tolerance</th><th>regression</th><th>compliance</th></tr>\n");
    for (size_t i = 0; i < r->n_gates; i++) {
        const rlvr_report_gate *g = &r->gates[i];
        const rlvr_report_gate_target *tg = &g->target;
        const char *slash = strrchr(g->file, '/');
        rlvr_text_printf(t, "<tr><td>");
        rlvr_text_escaped(t, slash ? slash + 1 : g->file);
        rlvr_text_printf(t, "</td><td>%lld</td><td>", (long long)g->step);
        cell_num(t, g->version, "%.0f");
        rlvr_text_printf(t, "</td><td>");
        cell_verdict(t, g->passed);
        rlvr_text_printf(t, "</td><td>");
        cell_versus(t, tg->cand_pass1, tg->base_pass1);
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, tg->mean_diff, "%+.3f");
        cell_interval(t, tg->low, tg->high, tg->passed);
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, tg->tolerance, "%.3f");
        rlvr_text_printf(t, "</td><td>");
        gate_regression_cell(t, g);
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, g->compliance_value, "%.3f");
        rlvr_text_printf(t, " ≥ ");
        cell_num(t, g->compliance_threshold, "%.3f");
        rlvr_text_printf(t, " ");
        cell_verdict(t, g->compliance_passed);
        rlvr_text_printf(t, "</td></tr>\n");
    }
    rlvr_text_printf(t, "</table></section>\n");
}

/* ---- charts and sections ------------------------------------------------------------------ */

/* The chart in a card with its caption. */
static void emit_chart(rlvr_text *t, const rlvr_report_chart *c) {
    rlvr_svg_chart chart = {.id = c->id, .title = c->title, .x_label = c->x_label, .y_label = c->y_label,
                            .y2_label = c->y2_label, .series = c->series, .n_series = c->n_series,
                            .bands = c->has_band ? &c->band : NULL, .n_bands = c->has_band,
                            .y_from_zero = c->from_zero, .y2_from_zero = c->from_zero};
    rlvr_text_printf(t, "<section class=\"card\">");
    rlvr_svg_render(t, &chart);
    rlvr_text_printf(t, "<p class=\"caption\">");
    rlvr_text_escaped(t, c->caption);
    rlvr_text_printf(t, "</p></section>\n");
}

static void emit_section(rlvr_text *t, const rlvr_report *r, const rlvr_report_section *s) {
    rlvr_text_printf(t, "<h2 class=\"wide\">%s</h2>\n", s->heading);
    for (size_t i = 0; i < s->n_charts; i++) emit_chart(t, s->charts[i]);
    if (s->table == RLVR_REPORT_TABLE_LAST_ROW) last_row_table(t, s->metrics, s->table_id, s->table_title);
    else if (s->table == RLVR_REPORT_TABLE_GATES) gate_table(t, r);
}

/* ---- the page ------------------------------------------------------------------------------ */

static const char page_css[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fafafa}"
    "h1{font-size:1.5em;margin:0 0 .5em}h2{font-size:1.2em;margin:1.2em 0 .4em}h3{font-size:1em;margin:0 0 .5em}"
    "table{border-collapse:collapse;font-size:13px}th,td{padding:2px 8px;text-align:left;vertical-align:top}"
    "table.meta th{color:#555;font-weight:normal}table.last th{color:#555;font-weight:normal}"
    "table.gate th,table.gate td{border-bottom:1px solid #ddd}"
    ".grid{display:flex;flex-wrap:wrap;gap:1em}"
    ".card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em;max-width:780px}"
    ".card.wide,.grid h2{max-width:none;flex-basis:100%}"
    ".card svg{max-width:100%;height:auto}.caption{font-size:12px;color:#555;margin:.3em 0 0;max-width:760px}"
    ".pass{color:#2ca02c;font-weight:bold}.fail{color:#d62728;font-weight:bold}"
    ".notes{font-size:13px;color:#555}";

/* Checks each chart as the browser sees it and records the result on
 * <body> (data-charts-ok, data-charts-bad): tests read it from the DOM. */
static const char page_script[] =
    "(function(){var ok=0,bad=[];"
    "document.querySelectorAll('svg.chart').forEach(function(s){"
    "var n=0,e=0;s.querySelectorAll('g.series').forEach(function(g){if(+g.getAttribute('data-points')>0)n++;else e++;});"
    "var nan=false;s.querySelectorAll('path,circle').forEach(function(p){"
    "if(/NaN|Infinity/.test((p.getAttribute('d')||'')+(p.getAttribute('cx')||'')+(p.getAttribute('cy')||'')))nan=true;});"
    "var box=s.getBBox();"
    "if(n>0&&e==0&&!nan&&n==+s.getAttribute('data-series')&&box.width>0&&s.querySelector('.axis-x text')&&"
    "s.querySelector('.axis-y text')&&s.querySelector('.legend text'))ok++;else bad.push(s.id);});"
    "document.body.setAttribute('data-charts-ok',ok);document.body.setAttribute('data-charts-bad',bad.join(' '));"
    "})();";

int rlvr_report_render(const rlvr_report *r, int64_t generated_unix, rlvr_text *page) {
    rlvr_text_printf(page, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rlvr report: ");
    rlvr_text_escaped(page, r->header.name);
    rlvr_text_printf(page, "</title><style>%s</style></head>\n<body data-charts=\"%zu\">\n", page_css, r->n_charts);
    emit_header(page, r, generated_unix);
    rlvr_text_printf(page, "<div class=\"grid\">\n");
    for (size_t i = 0; i < r->n_sections; i++) emit_section(page, r, &r->sections[i]);
    rlvr_text_printf(page, "</div>\n");
    if (r->n_notes) {
        rlvr_text_printf(page, "<h2>Notes</h2><ul class=\"notes\" id=\"notes\">\n");
        for (size_t i = 0; i < r->n_notes; i++) {
            rlvr_text_printf(page, "<li>");
            rlvr_text_escaped(page, r->notes[i]);
            rlvr_text_printf(page, "</li>\n");
        }
        rlvr_text_printf(page, "</ul>\n");
    }
    rlvr_text_printf(page, "<script>%s</script>\n</body></html>\n", page_script);
    return page->failed ? RLVR_FAIL(RLVR_ENOMEM, "out of memory building the page") : 0;
}

int rlvr_report_write(const rlvr_report *r, const char *path, int64_t generated_unix) {
    rlvr_text page = {0};
    int rc = rlvr_report_render(r, generated_unix, &page);
    if (rc == 0) rc = rlvr_write_text_atomic(path, page.data);
    rlvr_text_free(&page);
    return rc;
}
