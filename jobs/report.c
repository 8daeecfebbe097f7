/* jobs/report.c — `rlvr report RUN [--out FILE.html] [--sweep DIR]...`: one
 * self-contained HTML page of a run's metrics (docs/REPORT.md). Charts are
 * inline SVG drawn by io/svg.c; the page loads nothing from anywhere.
 *
 * Reads: RUN/metrics.h5 (rlvr train), RUN/sft/metrics.h5 (rlvr sft), the
 * run configuration (RUN/manifest.h5, else the latest checkpoint), the gate
 * reports RUN/gate/<name>.json ("rlvr-gate/1") and sweep tables
 * RUN/sweep<name>/sweep.csv. Whatever is missing is skipped with a note on the
 * page; a run without any metrics file is an error. */
#include "core/config.h"
#include "core/error.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "io/file.h"
#include "io/manifest.h"
#include "io/metrics.h"
#include "jobs/commands.h"
#include "jobs/schemas.h"
#include "rl/config.h"
#include "io/svg.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PATH_CAP 4096
#define MAX_SWEEP_DIRS 16
#define MAX_CHART_SERIES 12

/* ---- what the page is made of ---------------------------------------------------- */

typedef struct {
    char family[128];
    int64_t k;
    double step, pass, low, high;
} sweep_row;

typedef struct {
    char path[PATH_CAP];
    sweep_row *rows;
    size_t n;
} sweep_table;

typedef struct {
    char file[PATH_CAP];
    json_t *root;
    int64_t step;
} gate_report;

typedef struct {
    const char *run;
    char out[PATH_CAP];
    const char *extra_sweeps[MAX_SWEEP_DIRS];
    int n_extra_sweeps;
} report_args;

typedef struct {
    char rl_path[PATH_CAP], sft_path[PATH_CAP];
    rlvr_metrics_table rl, sft;
    bool has_rl, has_sft;
    char manifest_path[PATH_CAP]; /* "" when none */
    rlvr_config *cfg;             /* the run configuration, or NULL */
    char config_from[PATH_CAP];
    uint64_t config_hash;
    gate_report *gates;
    size_t n_gates;
    sweep_table *sweeps;
    size_t n_sweeps;
    rlvr_text notes; /* <li> items */
    rlvr_text body;  /* the charts and tables */
    int charts;
} report;

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "<dir>/<leaf>"; too long a path becomes "" (nothing exists there). */
static void join(char *out, const char *dir, const char *leaf) {
    size_t a = strlen(dir), b = strlen(leaf);
    if (a + 1 + b >= PATH_CAP) {
        out[0] = '\0';
        return;
    }
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, leaf, b + 1);
}

/* A note on the page: something skipped and why. `text` is escaped. */
static void note(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(report *r, const char *fmt, ...) {
    char buf[2 * PATH_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    rlvr_text_printf(&r->notes, "<li>");
    rlvr_text_escaped(&r->notes, buf);
    rlvr_text_printf(&r->notes, "</li>\n");
}

/* ---- inputs: metrics and configuration -------------------------------------------------- */

static int load_metrics(report *r, const char *run) {
    join(r->rl_path, run, "metrics.h5");
    join(r->sft_path, run, "sft/metrics.h5");
    r->has_rl = is_file(r->rl_path);
    r->has_sft = is_file(r->sft_path);
    if (!r->has_rl && !r->has_sft)
        return RLVR_FAIL(RLVR_ENOTFOUND,
                         "%s has no metrics: neither %s (written by rlvr train) nor %s (written by rlvr sft) exists; "
                         "give the run directory (the --out of rlvr sft/train)",
                         run, r->rl_path, r->sft_path);
    if (r->has_rl) RLVR_TRY(rlvr_metrics_read(&r->rl, r->rl_path));
    if (r->has_sft) RLVR_TRY(rlvr_metrics_read(&r->sft, r->sft_path));
    if (!r->has_rl) note(r, "no %s (rlvr train has not run here): RL charts skipped", r->rl_path);
    else if (r->rl.n_rows == 0) note(r, "%s has no rows yet: RL charts skipped", r->rl_path);
    if (!r->has_sft) note(r, "no %s (no SFT stage in this run): SFT chart skipped", r->sft_path);
    return 0;
}

/* The configuration text: the manifest's, else the latest checkpoint's
 * (RL, then SFT). Returns a malloc'd copy or NULL, the source in `from`. */
static char *config_text(report *r, const char *run) {
    static const char *const manifests[] = {"manifest.h5", "sft/manifest.h5"};
    for (size_t i = 0; i < 2; i++) {
        char path[PATH_CAP];
        join(path, run, manifests[i]);
        char *text = NULL;
        if (!is_file(path)) continue;
        if (!r->manifest_path[0]) snprintf(r->manifest_path, PATH_CAP, "%s", path);
        if (rlvr_io_read_text(path, "/run/config", &text) == 0 && text && text[0]) {
            snprintf(r->config_from, PATH_CAP, "%s", path);
            return text;
        }
        free(text);
    }
    static const char *const dirs[] = {"checkpoints", "sft/checkpoints"};
    for (size_t i = 0; i < 2; i++) {
        char dir[PATH_CAP], path[PATH_CAP];
        join(dir, run, dirs[i]);
        rlvr_checkpoint *ck = NULL;
        if (rlvr_checkpoint_latest(dir, path, sizeof path) < 0 || rlvr_checkpoint_open(&ck, path) < 0) continue;
        const rlvr_checkpoint_info *info = rlvr_checkpoint_info_of(ck);
        char *text = info->config_text && info->config_text[0] ? strdup(info->config_text) : NULL;
        rlvr_checkpoint_close(ck);
        if (text) {
            snprintf(r->config_from, PATH_CAP, "%s", path);
            return text;
        }
    }
    rlvr_error_clear();
    return NULL;
}

static void load_config(report *r, const char *run) {
    char *text = config_text(r, run);
    if (!text) {
        note(r, "no stored configuration (no manifest.h5 and no checkpoint with one): entropy target band, seed and "
                "config hash not shown");
        return;
    }
    if (rlvr_config_parse(&r->cfg, text, r->config_from, rlvr_all_config_schemas) < 0) {
        note(r, "the configuration stored in %s does not parse with this rlvr (%s): entropy target band not shown",
             r->config_from, rlvr_error_last());
        rlvr_error_clear();
    } else {
        r->config_hash = rlvr_config_hash(r->cfg);
    }
    free(text);
}

/* ---- inputs: gate reports ----------------------------------------------------------------- */

static int compare_gates(const void *a, const void *b) {
    const gate_report *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    return strcmp(x->file, y->file);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void add_gate(report *r, const char *path) {
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    const char *format = json_string_value(json_object_get(root, "format"));
    if (!root || !format || strcmp(format, "rlvr-gate/1") != 0 || !json_is_object(json_object_get(root, "criteria"))) {
        note(r, "%s skipped: %s", path,
             !root ? err.text : "not a gate report (format \"rlvr-gate/1\" with \"criteria\")");
        json_decref(root);
        return;
    }
    gate_report *g = realloc(r->gates, (r->n_gates + 1) * sizeof *g);
    if (!g) {
        json_decref(root);
        return;
    }
    r->gates = g;
    g = &r->gates[r->n_gates++];
    snprintf(g->file, PATH_CAP, "%s", path);
    g->root = root;
    json_t *step = json_object_get(root, "candidate_step");
    g->step = json_is_integer(step) ? (int64_t)json_integer_value(step) : -1;
}

static void load_gates(report *r, const char *run) {
    char dir[PATH_CAP];
    join(dir, run, "gate");
    DIR *d = opendir(dir);
    if (!d) {
        note(r, "no %s/*.json (no rlvr gate --promote has run): gate charts skipped", dir);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        char path[PATH_CAP];
        if (!ends_with(e->d_name, ".json")) continue;
        join(path, dir, e->d_name);
        if (is_file(path)) add_gate(r, path);
    }
    closedir(d);
    if (r->n_gates) qsort(r->gates, r->n_gates, sizeof *r->gates, compare_gates);
    else note(r, "%s holds no gate report: gate charts skipped", dir);
}

/* ---- inputs: sweep tables ----------------------------------------------------------------- */

/* Splits one CSV line in place (RFC 4180 quotes, "" inside quotes). */
static int csv_split(char *line, char **fields, int cap) {
    int n = 0;
    char *p = line;
    while (n < cap) {
        char *out = p;
        fields[n++] = p;
        if (*p == '"') {
            char *q = p + 1;
            for (;;) {
                if (!*q) break;
                if (*q == '"' && q[1] == '"') *out++ = '"', q += 2;
                else if (*q == '"') {
                    q++;
                    break;
                } else *out++ = *q++;
            }
            p = q;
        }
        while (*p && *p != ',') *out++ = *p++;
        bool more = *p == ',';
        *out = '\0';
        if (!more) break;
        p++;
    }
    return n;
}

static double csv_number(const char *s) {
    char *end;
    double v = strtod(s, &end);
    return end == s ? NAN : v;
}

enum { SW_STEP, SW_FAMILY, SW_K, SW_PASS, SW_LOW, SW_HIGH, SW_NCOLS };
static const char *const sweep_columns[SW_NCOLS] = {"step", "family", "k", "pass_at_k", "low", "high"};

static int sweep_header(int *col, char **fields, int n, report *r, const char *path) {
    for (int c = 0; c < SW_NCOLS; c++) {
        col[c] = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(fields[i], sweep_columns[c]) == 0) col[c] = i;
        if (col[c] < 0) {
            note(r, "%s skipped: no column \"%s\" in its header", path, sweep_columns[c]);
            return -1;
        }
    }
    return 0;
}

static void strip_eol(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

static void add_sweep(report *r, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        note(r, "%s skipped: cannot be opened", path);
        return;
    }
    sweep_table t = {0};
    snprintf(t.path, PATH_CAP, "%s", path);
    char line[8192];
    char *fields[32];
    int col[SW_NCOLS];
    bool ok = fgets(line, sizeof line, f) != NULL;
    if (ok) strip_eol(line);
    ok = ok && sweep_header(col, fields, csv_split(line, fields, 32), r, path) == 0;
    size_t cap = 0;
    while (ok && fgets(line, sizeof line, f)) {
        strip_eol(line);
        if (!line[0]) continue;
        int n = csv_split(line, fields, 32);
        if (n <= col[SW_STEP] || n <= col[SW_FAMILY] || n <= col[SW_K] || n <= col[SW_PASS] || n <= col[SW_LOW] ||
            n <= col[SW_HIGH])
            continue;
        if (t.n == cap) {
            cap = cap ? 2 * cap : 64;
            sweep_row *rows = realloc(t.rows, cap * sizeof *rows);
            if (!rows) break;
            t.rows = rows;
        }
        sweep_row *row = &t.rows[t.n++];
        snprintf(row->family, sizeof row->family, "%s", fields[col[SW_FAMILY]]);
        row->k = (int64_t)csv_number(fields[col[SW_K]]);
        row->step = csv_number(fields[col[SW_STEP]]);
        row->pass = csv_number(fields[col[SW_PASS]]);
        row->low = csv_number(fields[col[SW_LOW]]);
        row->high = csv_number(fields[col[SW_HIGH]]);
    }
    fclose(f);
    if (ok && t.n == 0) note(r, "%s has no rows: sweep chart skipped", path);
    sweep_table *all = ok && t.n ? realloc(r->sweeps, (r->n_sweeps + 1) * sizeof *all) : NULL;
    if (!all) {
        free(t.rows);
        return;
    }
    r->sweeps = all;
    r->sweeps[r->n_sweeps++] = t;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* RUN/sweep* /sweep.csv in name order, then the --sweep directories. */
static void load_sweeps(report *r, const char *run, const report_args *a) {
    DIR *d = opendir(run);
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 256;)
        if (strncmp(e->d_name, "sweep", 5) == 0) names[n++] = strdup(e->d_name);
    if (d) closedir(d);
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        char dir[PATH_CAP], csv[PATH_CAP];
        join(dir, run, names[i] ? names[i] : "");
        join(csv, dir, "sweep.csv");
        if (names[i] && is_dir(dir) && is_file(csv)) add_sweep(r, csv);
        free(names[i]);
    }
    for (int i = 0; i < a->n_extra_sweeps; i++) {
        char csv[PATH_CAP];
        if (is_file(a->extra_sweeps[i])) snprintf(csv, PATH_CAP, "%s", a->extra_sweeps[i]);
        else join(csv, a->extra_sweeps[i], "sweep.csv");
        if (is_file(csv)) add_sweep(r, csv);
        else note(r, "--sweep %s: no %s", a->extra_sweeps[i], csv);
    }
    if (r->n_sweeps == 0 && a->n_extra_sweeps == 0)
        note(r, "no %s/sweep*/sweep.csv (no rlvr sweep has run): sweep charts skipped", run);
}

/* ---- charts ---------------------------------------------------------------------------------- */

/* The series of one chart under construction; derived arrays it owns. */
typedef struct {
    const char *id, *title, *caption;
    rlvr_svg_series s[MAX_CHART_SERIES];
    size_t n;
    double *owned[2 * MAX_CHART_SERIES];
    size_t n_owned;
    rlvr_svg_hband band;
    bool has_band;
} chart_build;

typedef struct {
    const rlvr_metrics_table *t;
    const double *x; /* steps as doubles */
} metrics_view;

static double *owned_array(chart_build *c, size_t n) {
    if (c->n_owned == sizeof c->owned / sizeof c->owned[0]) return NULL;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (v) c->owned[c->n_owned++] = v;
    return v;
}

static bool any_finite(const double *v, size_t n) {
    for (size_t i = 0; v && i < n; i++)
        if (isfinite(v[i])) return true;
    return false;
}

static rlvr_svg_series *add_series(chart_build *c, const char *name, const double *x, const double *y, size_t n) {
    if (c->n == MAX_CHART_SERIES) return NULL;
    rlvr_svg_series *s = &c->s[c->n++];
    *s = (rlvr_svg_series){.name = name, .kind = RLVR_SVG_LINE, .x = x, .y = y, .n = n};
    return s;
}

/* A metrics column as a series, or a note when the run did not measure it. */
static rlvr_svg_series *add_metric(report *r, chart_build *c, const metrics_view *m, rlvr_metric col, bool right) {
    const double *y = m->t->value[col];
    size_t n = (size_t)m->t->n_rows;
    if (!any_finite(y, n)) {
        note(r, "%s: no %s values (%s) in this run", c->title, rlvr_metric_name(col),
             y ? "every row is NaN" : "column missing from the file");
        return NULL;
    }
    rlvr_svg_series *s = add_series(c, rlvr_metric_name(col), m->x, y, n);
    if (s) s->right_axis = right;
    return s;
}

static void chart_free(chart_build *c) {
    for (size_t i = 0; i < c->n_owned; i++) free(c->owned[i]);
}

/* Renders the chart in a card with its caption; a chart without any data is
 * replaced by a note. */
static void emit_chart(report *r, chart_build *c, const char *x_label, const char *y_label, const char *y2_label,
                       bool from_zero) {
    size_t points = 0;
    for (size_t i = 0; i < c->n; i++) points += rlvr_svg_series_points(&c->s[i]);
    if (points == 0) {
        note(r, "chart \"%s\" skipped: none of its values were measured", c->title);
        chart_free(c);
        return;
    }
    rlvr_svg_chart chart = {.id = c->id, .title = c->title, .x_label = x_label, .y_label = y_label,
                            .y2_label = y2_label, .series = c->s, .n_series = c->n,
                            .bands = c->has_band ? &c->band : NULL, .n_bands = c->has_band,
                            .y_from_zero = from_zero, .y2_from_zero = from_zero};
    rlvr_text_printf(&r->body, "<section class=\"card\">");
    rlvr_svg_render(&r->body, &chart);
    rlvr_text_printf(&r->body, "<p class=\"caption\">");
    rlvr_text_escaped(&r->body, c->caption);
    rlvr_text_printf(&r->body, "</p></section>\n");
    r->charts++;
    chart_free(c);
}

static void chart_reward(report *r, const metrics_view *m) {
    chart_build c = {.id = "reward", .title = "Reward and pass rate",
                     .caption = "Mean total reward of each step's rollouts with a ±1 std band, and the share of "
                                "rollouts the verifier passed."};
    rlvr_svg_series *s = add_metric(r, &c, m, RLVR_METRIC_REWARD_MEAN, false);
    const double *std = m->t->value[RLVR_METRIC_REWARD_STD];
    size_t n = (size_t)m->t->n_rows;
    double *lo = s && any_finite(std, n) ? owned_array(&c, n) : NULL, *hi = lo ? owned_array(&c, n) : NULL;
    if (lo && hi) {
        for (size_t i = 0; i < n; i++) lo[i] = s->y[i] - std[i], hi[i] = s->y[i] + std[i];
        s->lo = lo, s->hi = hi;
        s->name = "reward_mean ± std";
    }
    add_metric(r, &c, m, RLVR_METRIC_PASS_RATE, false);
    emit_chart(r, &c, "step", "reward · pass share", NULL, false);
}

static void chart_groups(report *r, const metrics_view *m) {
    chart_build c = {.id = "groups", .title = "Informative groups",
                     .caption = "Share of groups with a reward spread: groups / (groups + groups_zero_var). Groups "
                                "whose rollouts all scored alike carry no GRPO signal and are dropped. Right axis: "
                                "dynamic-sampling rounds the step needed."};
    const double *g = m->t->value[RLVR_METRIC_GROUPS], *z = m->t->value[RLVR_METRIC_GROUPS_ZERO_VAR];
    size_t n = (size_t)m->t->n_rows;
    double *share = g && z ? owned_array(&c, n) : NULL;
    if (share) {
        for (size_t i = 0; i < n; i++) share[i] = g[i] + z[i] > 0 ? g[i] / (g[i] + z[i]) : NAN;
        if (any_finite(share, n)) add_series(&c, "informative share", m->x, share, n);
        else note(r, "%s: no step had any group", c.title);
    } else {
        note(r, "%s: groups or groups_zero_var missing from the file", c.title);
    }
    rlvr_svg_series *s = add_metric(r, &c, m, RLVR_METRIC_DRAW_ROUNDS, true);
    if (s) s->dashed = true;
    emit_chart(r, &c, "step", "share of groups", "draw rounds", true);
}

static void chart_entropy(report *r, const metrics_view *m) {
    chart_build c = {.id = "entropy", .title = "Entropy",
                     .caption = "Mean entropy of the policy tokens (nats) with the [entropy] target band of the run's "
                                "configuration; right axis: the entropy controller's coefficient α."};
    rlvr_entropy_config e;
    char label[96];
    if (r->cfg && rlvr_rl_entropy_config_load(&e, r->cfg) == 0) {
        snprintf(label, sizeof label, "target band %g–%g%s", e.target_low, e.target_high,
                 e.adaptive ? "" : " (controller off)");
        c.band = (rlvr_svg_hband){e.target_low, e.target_high, label};
        c.has_band = true;
    } else {
        rlvr_error_clear();
    }
    add_metric(r, &c, m, RLVR_METRIC_ENTROPY, false);
    rlvr_svg_series *s = add_metric(r, &c, m, RLVR_METRIC_ENTROPY_COEF, true);
    if (s) s->dashed = true;
    emit_chart(r, &c, "step", "entropy (nats)", "coefficient α", false);
}

static void chart_length(report *r, const metrics_view *m) {
    chart_build c = {.id = "length", .title = "Length and stops",
                     .caption = "Mean policy tokens per rollout; right axis: share of rollouts stopped by a budget "
                                "(truncated), rollouts ended by the repetition detector and by too many malformed "
                                "tool calls in a row (counts)."};
    add_metric(r, &c, m, RLVR_METRIC_POLICY_TOKENS, false);
    add_metric(r, &c, m, RLVR_METRIC_TRUNCATED, true);
    rlvr_svg_series *s = add_metric(r, &c, m, RLVR_METRIC_REPETITION_STOPS, true);
    if (s) s->dashed = true;
    add_metric(r, &c, m, RLVR_METRIC_MALFORMED_STOPS, true);
    emit_chart(r, &c, "step", "policy tokens", "truncated share · repetition and malformed stops", true);
}

static void chart_staleness(report *r, const metrics_view *m) {
    chart_build c = {.id = "staleness", .title = "Staleness and drops",
                     .caption = "Mean policy-version lag of the admitted rollouts; right axis: rollouts refused as too "
                                "stale, rollouts excluded as infrastructure errors, groups dropped for zero variance."};
    add_metric(r, &c, m, RLVR_METRIC_STALENESS_MEAN, false);
    add_metric(r, &c, m, RLVR_METRIC_STALENESS_DROPPED, true);
    add_metric(r, &c, m, RLVR_METRIC_INFRA_ERRORS, true);
    add_metric(r, &c, m, RLVR_METRIC_GROUPS_ZERO_VAR, true);
    emit_chart(r, &c, "step", "staleness (versions)", "count per step", true);
}

static void chart_clip_kl(report *r, const metrics_view *m) {
    chart_build c = {.id = "clip-kl", .title = "Clipping and KL",
                     .caption = "Share of policy tokens whose importance ratio was clipped; right axis: mean k3 KL "
                                "estimate to the reference policy."};
    add_metric(r, &c, m, RLVR_METRIC_CLIP_FRACTION, false);
    add_metric(r, &c, m, RLVR_METRIC_KL, true);
    emit_chart(r, &c, "step", "clip fraction", "KL", true);
}

static void chart_grad(report *r, const metrics_view *m) {
    chart_build c = {.id = "grad-logprob", .title = "Gradient norm and log-prob mismatch",
                     .caption = "Global gradient norm before clipping; right axis: max |sampler − trainer log-prob| "
                                "over the batch's policy tokens (large values mean the sampler and the trainer "
                                "disagree)."};
    add_metric(r, &c, m, RLVR_METRIC_GRAD_NORM, false);
    add_metric(r, &c, m, RLVR_METRIC_LOGPROB_DIFF_MAX, true);
    emit_chart(r, &c, "step", "grad norm", "max |Δ log-prob|", true);
}

static void chart_throughput(report *r, const metrics_view *m) {
    chart_build c = {.id = "throughput", .title = "Throughput",
                     .caption = "Rollouts finished per second of step wall time; right axis: generated tokens per "
                                "second."};
    add_metric(r, &c, m, RLVR_METRIC_ROLLOUTS_PER_S, false);
    add_metric(r, &c, m, RLVR_METRIC_TOKENS_PER_S, true);
    emit_chart(r, &c, "step", "rollouts / s", "tokens / s", true);
}

static void chart_time(report *r, const metrics_view *m) {
    chart_build c = {.id = "time", .title = "Time per step",
                     .caption = "Seconds per step, stacked: generation, tool and verification time are summed over "
                                "the step's rollouts (they overlap in wall time), training and idle are wall time. "
                                "The dashed line is the step's wall time."};
    static const rlvr_metric parts[] = {RLVR_METRIC_GENERATE_S, RLVR_METRIC_TOOL_S, RLVR_METRIC_VERIFY_S,
                                        RLVR_METRIC_TRAIN_S, RLVR_METRIC_IDLE_S};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        rlvr_svg_series *s = add_metric(r, &c, m, parts[i], false);
        if (s) s->kind = RLVR_SVG_STACK;
    }
    rlvr_svg_series *s = add_metric(r, &c, m, RLVR_METRIC_STEP_TIME_S, false);
    if (s) s->dashed = true;
    emit_chart(r, &c, "step", "seconds", NULL, true);
}

static void chart_sft(report *r, const metrics_view *m) {
    chart_build c = {.id = "sft-loss", .title = "SFT loss",
                     .caption = "Supervised bootstrap: mean negative log-likelihood per policy token of the "
                                "demonstrations; right axis: the learning rate."};
    add_metric(r, &c, m, RLVR_METRIC_LOSS, false);
    rlvr_svg_series *s = add_metric(r, &c, m, RLVR_METRIC_LR, true);
    if (s) s->dashed = true;
    emit_chart(r, &c, "SFT step", "loss (nats / token)", "learning rate", false);
}

/* ---- gate charts and table ------------------------------------------------------------------- */

static double jnum(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static int8_t jpassed(const json_t *obj) {
    const json_t *v = json_object_get(obj, "passed");
    return json_is_boolean(v) ? (int8_t)json_is_true(v) : -1;
}

static const json_t *criterion(const gate_report *g, const char *name) {
    return json_object_get(json_object_get(g->root, "criteria"), name);
}

static void gate_charts(report *r) {
    size_t n = r->n_gates;
    chart_build c = {.id = "gate-pass1", .title = "Gate: target pass@1 per candidate",
                     .caption = "Each gate report (RUN/gate/*.json): the baseline's and the candidate's pass@1 on the "
                                "target split; the candidate's bar is the bootstrap interval of the paired "
                                "difference, placed around its pass@1. A circle: the gate passed; a cross: it "
                                "rejected the candidate."};
    chart_build d = {.id = "gate-diff", .title = "Gate: paired difference candidate − baseline",
                     .caption = "Mean per-task pass@1 difference with its bootstrap interval; the target criterion "
                                "passes when the interval's low end is at or above −tolerance (dashed)."};
    double *x = owned_array(&c, n), *base = owned_array(&c, n), *cand = owned_array(&c, n);
    double *clo = owned_array(&c, n), *chi = owned_array(&c, n);
    double *diff = owned_array(&d, n), *lo = owned_array(&d, n), *hi = owned_array(&d, n);
    double *tol = owned_array(&d, n), *xd = owned_array(&d, n); /* c's arrays are freed with c */
    int8_t *status = malloc((n ? n : 1) * sizeof *status), *target_status = malloc((n ? n : 1) * sizeof *status);
    if (!x || !base || !cand || !clo || !chi || !diff || !lo || !hi || !tol || !xd || !status || !target_status) {
        chart_free(&c), chart_free(&d);
        free(status), free(target_status);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *t = criterion(&r->gates[i], "target");
        x[i] = xd[i] = (double)r->gates[i].step;
        base[i] = jnum(t, "base_pass1"), cand[i] = jnum(t, "cand_pass1");
        diff[i] = jnum(t, "mean_diff"), lo[i] = jnum(t, "low"), hi[i] = jnum(t, "high");
        clo[i] = cand[i] + lo[i] - diff[i], chi[i] = cand[i] + hi[i] - diff[i];
        tol[i] = -jnum(t, "tolerance");
        status[i] = jpassed(r->gates[i].root);
        target_status[i] = jpassed(t);
    }
    rlvr_svg_series *s = add_series(&c, "baseline pass@1", x, base, n);
    s->kind = RLVR_SVG_MARKS, s->dashed = true;
    s = add_series(&c, "candidate pass@1", x, cand, n);
    *s = (rlvr_svg_series){.name = "candidate pass@1", .kind = RLVR_SVG_MARKS, .x = x, .y = cand, .lo = clo,
                           .hi = chi, .status = status, .n = n};
    emit_chart(r, &c, "candidate step", "pass@1", NULL, true);

    *add_series(&d, "", xd, diff, n) = (rlvr_svg_series){.name = "candidate − baseline", .kind = RLVR_SVG_MARKS,
                                                         .x = xd, .y = diff, .lo = lo, .hi = hi,
                                                         .status = target_status, .n = n};
    s = add_series(&d, "−tolerance", xd, tol, n);
    s->dashed = true;
    emit_chart(r, &d, "candidate step", "pass@1 difference", NULL, false);
    free(status), free(target_status);
}

static void cell_num(rlvr_text *t, double v, const char *fmt) {
    if (isfinite(v)) rlvr_text_printf(t, fmt, v);
    else rlvr_text_printf(t, "–");
}

static void cell_verdict(rlvr_text *t, int8_t passed) {
    rlvr_text_printf(t, "%s", passed == 1 ? "<span class=\"pass\">pass</span>"
                              : passed == 0 ? "<span class=\"fail\">FAIL</span>" : "–");
}

static void gate_regression_cell(rlvr_text *t, const json_t *reg) {
    const json_t *fams = json_object_get(reg, "families");
    cell_verdict(t, jpassed(reg));
    if (!json_array_size(fams)) {
        rlvr_text_printf(t, " (no tasks)");
        return;
    }
    size_t i;
    const json_t *f;
    json_array_foreach(fams, i, f) {
        rlvr_text_printf(t, "<br>");
        rlvr_text_escaped(t, json_string_value(json_object_get(f, "name")));
        rlvr_text_printf(t, ": ");
        cell_num(t, jnum(f, "cand_pass1"), "%.3f");
        rlvr_text_printf(t, " vs ");
        cell_num(t, jnum(f, "base_pass1"), "%.3f");
        rlvr_text_printf(t, " [");
        cell_num(t, jnum(f, "low"), "%+.3f");
        rlvr_text_printf(t, ", ");
        cell_num(t, jnum(f, "high"), "%+.3f");
        rlvr_text_printf(t, "] ");
        cell_verdict(t, jpassed(f));
    }
}

static void gate_table(report *r) {
    rlvr_text *t = &r->body;
    rlvr_text_printf(t, "<section class=\"card wide\"><h3>Gate reports</h3><table class=\"gate\" id=\"gate-table\">"
                        "<tr><th>report</th><th>step</th><th>version</th><th>decision</th><th>target: cand vs base</th>"
                        "<th>diff [interval]</th><th>tolerance</th><th>regression</th><th>compliance</th></tr>\n");
    for (size_t i = 0; i < r->n_gates; i++) {
        const gate_report *g = &r->gates[i];
        const json_t *tg = criterion(g, "target"), *cp = criterion(g, "compliance");
        const char *slash = strrchr(g->file, '/');
        rlvr_text_printf(t, "<tr><td>");
        rlvr_text_escaped(t, slash ? slash + 1 : g->file);
        rlvr_text_printf(t, "</td><td>%lld</td><td>", (long long)g->step);
        cell_num(t, jnum(g->root, "candidate_version"), "%.0f");
        rlvr_text_printf(t, "</td><td>");
        cell_verdict(t, jpassed(g->root));
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, jnum(tg, "cand_pass1"), "%.3f");
        rlvr_text_printf(t, " vs ");
        cell_num(t, jnum(tg, "base_pass1"), "%.3f");
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, jnum(tg, "mean_diff"), "%+.3f");
        rlvr_text_printf(t, " [");
        cell_num(t, jnum(tg, "low"), "%+.3f");
        rlvr_text_printf(t, ", ");
        cell_num(t, jnum(tg, "high"), "%+.3f");
        rlvr_text_printf(t, "] ");
        cell_verdict(t, jpassed(tg));
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, jnum(tg, "tolerance"), "%.3f");
        rlvr_text_printf(t, "</td><td>");
        gate_regression_cell(t, criterion(g, "regression"));
        rlvr_text_printf(t, "</td><td>");
        cell_num(t, jnum(cp, "value"), "%.3f");
        rlvr_text_printf(t, " ≥ ");
        cell_num(t, jnum(cp, "threshold"), "%.3f");
        rlvr_text_printf(t, " ");
        cell_verdict(t, jpassed(cp));
        rlvr_text_printf(t, "</td></tr>\n");
    }
    rlvr_text_printf(t, "</table></section>\n");
}

/* ---- sweep charts ----------------------------------------------------------------------------- */

static int compare_sweep_rows(const void *a, const void *b) {
    const sweep_row *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    if (c) return c;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* One chart per k: pass@k against the checkpoint's step, a series per family. */
static void sweep_charts(report *r, sweep_table *t, size_t index) {
    qsort(t->rows, t->n, sizeof *t->rows, compare_sweep_rows);
    int64_t ks[64];
    size_t n_k = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = 0;
        while (j < n_k && ks[j] != t->rows[i].k) j++;
        if (j == n_k && n_k < 64) ks[n_k++] = t->rows[i].k;
    }
    for (size_t a = 1; a < n_k; a++)
        for (size_t b = a; b > 0 && ks[b - 1] > ks[b]; b--) {
            int64_t tmp = ks[b];
            ks[b] = ks[b - 1], ks[b - 1] = tmp;
        }
    for (size_t kk = 0; kk < n_k; kk++) {
        char id[64], title[PATH_CAP + 64];
        snprintf(id, sizeof id, "sweep-%zu-k%lld", index, (long long)ks[kk]);
        snprintf(title, sizeof title, "Sweep: pass@%lld per family (%s)", (long long)ks[kk], t->path);
        chart_build c = {.id = id, .title = title,
                         .caption = "pass@k of each checkpoint on held-out tasks (rlvr sweep), one line per task "
                                    "family, with its interval as a band."};
        size_t n = t->n;
        double *x = owned_array(&c, n), *y = owned_array(&c, n), *lo = owned_array(&c, n), *hi = owned_array(&c, n);
        if (!x || !y || !lo || !hi) {
            chart_free(&c);
            return;
        }
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const sweep_row *row = &t->rows[i];
            if (row->k != ks[kk]) continue;
            size_t start = m;
            /* rows of one family are adjacent (sorted): one series per run of them */
            bool new_family = m == 0 || strcmp(row->family, t->rows[i - 1].family) != 0 || t->rows[i - 1].k != ks[kk];
            x[m] = row->step, y[m] = row->pass, lo[m] = row->low, hi[m] = row->high;
            m++;
            if (new_family) {
                rlvr_svg_series *s = add_series(&c, row->family, x + start, y + start, 1);
                if (s) s->lo = lo + start, s->hi = hi + start;
                else note(r, "%s: more than %d families; the rest are not drawn", title, MAX_CHART_SERIES);
            } else if (c.n) {
                rlvr_svg_series *s = &c.s[c.n - 1];
                if (s->x + s->n == x + start) s->n++;
            }
        }
        char y_label[64];
        snprintf(y_label, sizeof y_label, "pass@%lld", (long long)ks[kk]);
        emit_chart(r, &c, "checkpoint step", y_label, NULL, true);
    }
}

/* ---- page: header, last rows, notes ------------------------------------------------------- */

static void format_duration(char *buf, size_t cap, double s) {
    if (!isfinite(s) || s < 0) snprintf(buf, cap, "–");
    else if (s < 120) snprintf(buf, cap, "%.1f s", s);
    else if (s < 7200) snprintf(buf, cap, "%.1f min", s / 60);
    else snprintf(buf, cap, "%.1f h", s / 3600);
}

/* Wall time from the first step's start to the last step's end. */
static double wall_time(const rlvr_metrics_table *t) {
    const double *tu = t->value[RLVR_METRIC_TIME_UNIX], *st = t->value[RLVR_METRIC_STEP_TIME_S];
    if (!tu || t->n_rows == 0) return NAN;
    double first = tu[0] - (st && isfinite(st[0]) ? st[0] : 0);
    return tu[t->n_rows - 1] - first;
}

static void header_row(rlvr_text *t, const char *key, const char *value) {
    rlvr_text_printf(t, "<tr><th>");
    rlvr_text_escaped(t, key);
    rlvr_text_printf(t, "</th><td>");
    rlvr_text_escaped(t, value);
    rlvr_text_printf(t, "</td></tr>\n");
}

static void manifest_attr(const report *r, const char *name, char *buf, size_t cap) {
    buf[0] = '\0';
    if (r->manifest_path[0] && rlvr_manifest_read_attr(r->manifest_path, name, buf, cap) < 0) buf[0] = '\0';
    rlvr_error_clear();
}

static void run_name(const report *r, const char *run, char *buf, size_t cap) {
    manifest_attr(r, "run_name", buf, cap);
    rlvr_io_settings io;
    if (!buf[0] && r->cfg && rlvr_io_settings_read(&io, r->cfg) == 0) snprintf(buf, cap, "%s", io.name);
    rlvr_error_clear();
    if (buf[0]) return;
    char dir[PATH_CAP]; /* the directory's own name, "a" of "runs/a/" */
    snprintf(dir, sizeof dir, "%s", run);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
    const char *slash = strrchr(dir, '/');
    snprintf(buf, cap, "%s", slash && slash[1] ? slash + 1 : dir);
}

static void steps_text(char *buf, size_t cap, const rlvr_metrics_table *t, double wall) {
    char dur[32];
    format_duration(dur, sizeof dur, wall);
    if (t->n_rows == 0) snprintf(buf, cap, "no rows");
    else
        snprintf(buf, cap, "%lld rows, steps %lld … %lld, wall time %s", (long long)t->n_rows, (long long)t->step[0],
                 (long long)t->step[t->n_rows - 1], dur);
}

static void emit_header(rlvr_text *t, const report *r, const char *run) {
    char name[256], buf[512], now[32];
    run_name(r, run, name, sizeof name);
    rlvr_text_printf(t, "<header><h1>rlvr report: ");
    rlvr_text_escaped(t, name);
    rlvr_text_printf(t, "</h1><table class=\"meta\" id=\"run-header\">\n");
    header_row(t, "run directory", run);
    if (r->cfg) {
        rlvr_io_settings io;
        snprintf(buf, sizeof buf, "%016llx", (unsigned long long)r->config_hash);
        header_row(t, "config hash", buf);
        if (rlvr_io_settings_read(&io, r->cfg) == 0) {
            snprintf(buf, sizeof buf, "%lld", (long long)io.seed);
            header_row(t, "seed", buf);
        }
        header_row(t, "configuration from", r->config_from);
    }
    rlvr_error_clear();
    static const char *const attrs[][2] = {{"status", "status"}, {"started_utc", "started"}, {"finished_utc", "finished"},
                                           {"git_commit", "rlvr commit"}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        manifest_attr(r, attrs[i][0], buf, sizeof buf);
        if (buf[0]) header_row(t, attrs[i][1], buf);
    }
    if (r->has_rl) {
        steps_text(buf, sizeof buf, &r->rl, wall_time(&r->rl));
        header_row(t, "RL (metrics.h5)", buf);
    }
    if (r->has_sft) {
        steps_text(buf, sizeof buf, &r->sft, wall_time(&r->sft));
        header_row(t, "SFT (sft/metrics.h5)", buf);
    }
    snprintf(buf, sizeof buf, "%zu", r->n_gates);
    header_row(t, "gate reports", buf);
    time_t tnow = time(NULL);
    struct tm utc;
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tnow, &utc));
    header_row(t, "page generated", now);
    rlvr_text_printf(t, "</table></header>\n");
}

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

static void emit_page(rlvr_text *page, report *r, const char *run) {
    char name[256];
    run_name(r, run, name, sizeof name);
    rlvr_text_printf(page, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rlvr report: ");
    rlvr_text_escaped(page, name);
    rlvr_text_printf(page, "</title><style>%s</style></head>\n<body data-charts=\"%d\">\n", page_css, r->charts);
    emit_header(page, r, run);
    rlvr_text_printf(page, "<div class=\"grid\">\n%s</div>\n", r->body.data ? r->body.data : "");
    if (r->notes.len)
        rlvr_text_printf(page, "<h2>Notes</h2><ul class=\"notes\" id=\"notes\">\n%s</ul>\n", r->notes.data);
    rlvr_text_printf(page, "<script>%s</script>\n</body></html>\n", page_script);
}

/* Writes the page under a temporary name and renames it: a browser or a
 * copy never sees half a page. */
static int write_atomically(const char *path, const char *text) {
    char part[PATH_CAP + 8];
    snprintf(part, sizeof part, "%s.part", path);
    FILE *f = fopen(part, "w");
    if (!f) return rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", part);
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(part, path) != 0) {
        int rc = rlvr_error_errno_at(__FILE__, __LINE__, "writing %s", path);
        unlink(part);
        return rc;
    }
    return 0;
}

/* ---- building the page ------------------------------------------------------------------------ */

static double *steps_as_x(const rlvr_metrics_table *t) {
    double *x = malloc((t->n_rows ? (size_t)t->n_rows : 1) * sizeof *x);
    for (int64_t i = 0; x && i < t->n_rows; i++) x[i] = (double)t->step[i];
    return x;
}

static int build_charts(report *r) {
    if (r->has_rl && r->rl.n_rows > 0) {
        double *x = steps_as_x(&r->rl);
        if (!x) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        metrics_view m = {&r->rl, x};
        rlvr_text_printf(&r->body, "<h2 class=\"wide\">Reinforcement learning (%s)</h2>\n", "metrics.h5");
        chart_reward(r, &m);
        chart_groups(r, &m);
        chart_entropy(r, &m);
        chart_length(r, &m);
        chart_staleness(r, &m);
        chart_clip_kl(r, &m);
        chart_grad(r, &m);
        chart_throughput(r, &m);
        chart_time(r, &m);
        last_row_table(&r->body, &r->rl, "last-rl", "RL metrics");
        free(x);
    }
    if (r->has_sft && r->sft.n_rows > 0) {
        double *x = steps_as_x(&r->sft);
        if (!x) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
        metrics_view m = {&r->sft, x};
        rlvr_text_printf(&r->body, "<h2 class=\"wide\">Supervised bootstrap (sft/metrics.h5)</h2>\n");
        chart_sft(r, &m);
        last_row_table(&r->body, &r->sft, "last-sft", "SFT metrics");
        free(x);
    } else if (r->has_sft) {
        note(r, "%s has no rows yet: SFT chart skipped", r->sft_path);
    }
    if (r->n_gates) {
        rlvr_text_printf(&r->body, "<h2 class=\"wide\">Release gate</h2>\n");
        gate_charts(r);
        gate_table(r);
    }
    if (r->n_sweeps) rlvr_text_printf(&r->body, "<h2 class=\"wide\">Checkpoint sweeps</h2>\n");
    for (size_t i = 0; i < r->n_sweeps; i++) sweep_charts(r, &r->sweeps[i], i);
    return 0;
}

static void report_free(report *r) {
    rlvr_metrics_table_free(&r->rl);
    rlvr_metrics_table_free(&r->sft);
    rlvr_config_free(r->cfg);
    for (size_t i = 0; i < r->n_gates; i++) json_decref(r->gates[i].root);
    free(r->gates);
    for (size_t i = 0; i < r->n_sweeps; i++) free(r->sweeps[i].rows);
    free(r->sweeps);
    rlvr_text_free(&r->notes);
    rlvr_text_free(&r->body);
}

static int write_report(const report_args *a, int *charts, int *notes) {
    report r = {0};
    rlvr_text page = {0};
    int rc = is_dir(a->run) ? 0 : RLVR_FAIL(RLVR_ENOTFOUND, "%s is not a directory (give a run directory)", a->run);
    if (rc == 0) rc = load_metrics(&r, a->run);
    if (rc == 0) {
        load_config(&r, a->run);
        load_gates(&r, a->run);
        load_sweeps(&r, a->run, a);
        rc = build_charts(&r);
    }
    if (rc == 0) {
        emit_page(&page, &r, a->run);
        if (page.failed || r.body.failed || r.notes.failed) rc = RLVR_FAIL(RLVR_ENOMEM, "out of memory building the page");
    }
    if (rc == 0) rc = write_atomically(a->out, page.data);
    *charts = r.charts;
    *notes = 0;
    for (const char *p = r.notes.data; p && (p = strstr(p, "<li>")); p += 4) (*notes)++;
    rlvr_text_free(&page);
    report_free(&r);
    return rc;
}

/* ---- command line ------------------------------------------------------------------------------ */

static void usage(FILE *out) {
    fprintf(out,
            "usage: rlvr report RUN [--out FILE.html] [--sweep DIR]...\n\n"
            "Writes one self-contained HTML page (inline SVG charts, no network, no external files) of a run:\n"
            "reward and pass rate, informative groups, entropy with its target band, length, staleness and\n"
            "drops, clipping/KL, gradient norm and log-prob mismatch, throughput and time per step (from\n"
            "RUN/metrics.h5), the SFT loss (RUN/sft/metrics.h5), gate results (RUN/gate/*.json) and sweep\n"
            "curves (RUN/sweep*/sweep.csv). Missing parts are skipped with a note on the page.\n\n"
            "  RUN             run directory (the --out of rlvr sft / rlvr train)\n"
            "  --out FILE      where to write the page (default RUN/report.html)\n"
            "  --sweep DIR     also draw DIR/sweep.csv (or DIR when it is a CSV file); repeatable\n\n"
            "Exit status: 0 written, 1 RUN has no metrics file or cannot be read, 2 usage error.\n"
            "See docs/REPORT.md.\n");
}

static int parse_args(report_args *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return 1;
        if ((strcmp(arg, "--out") == 0 || strcmp(arg, "--sweep") == 0) && i + 1 >= argc) {
            fprintf(stderr, "rlvr report: %s needs a value\n", arg);
            return -1;
        }
        if (strcmp(arg, "--out") == 0) snprintf(a->out, PATH_CAP, "%s", argv[++i]);
        else if (strcmp(arg, "--sweep") == 0) {
            if (a->n_extra_sweeps == MAX_SWEEP_DIRS) {
                fprintf(stderr, "rlvr report: at most %d --sweep directories\n", MAX_SWEEP_DIRS);
                return -1;
            }
            a->extra_sweeps[a->n_extra_sweeps++] = argv[++i];
        } else if (arg[0] == '-' && arg[1]) {
            fprintf(stderr, "rlvr report: unknown option %s (rlvr report --help)\n", arg);
            return -1;
        } else if (a->run) {
            fprintf(stderr, "rlvr report: one run directory, got %s and %s\n", a->run, arg);
            return -1;
        } else {
            a->run = arg;
        }
    }
    if (!a->run) {
        fprintf(stderr, "rlvr report: give a run directory (rlvr report --help)\n");
        return -1;
    }
    if (!a->out[0]) snprintf(a->out, PATH_CAP, "%s/report.html", a->run);
    return 0;
}

int rlvr_cmd_report(int argc, char **argv) {
    report_args a;
    int p = parse_args(&a, argc, argv);
    if (p != 0) {
        usage(p > 0 ? stdout : stderr);
        return p > 0 ? RLVR_EXIT_OK : RLVR_EXIT_USAGE;
    }
    int charts = 0, notes = 0;
    int rc = write_report(&a, &charts, &notes);
    if (rc < 0) {
        const char *msg = rlvr_error_last();
        fprintf(stderr, "rlvr report: error: %s\n", msg[0] ? msg : rlvr_error_name(rc));
        return RLVR_EXIT_FAILURE;
    }
    printf("report: wrote %s (%d charts, %d notes)\n", a.out, charts, notes);
    return RLVR_EXIT_OK;
}
