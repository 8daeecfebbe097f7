/* report/charts.c — the page's sections and charts, built from what
 * report/load.c read: which metrics columns each chart draws, on which
 * axis, and the derived series (reward band, informative share, gate
 * intervals, sweep families). */
#include "core/error.h"
#include "report/internal.h"
#include "rl/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SERIES RLVR_REPORT_MAX_SERIES

typedef struct {
    const rlvr_metrics_table *t;
    const double *x; /* steps as doubles */
} metrics_view;

static rlvr_report_chart *chart_new(rlvr_report *r, const char *id, const char *title, const char *caption) {
    rlvr_report_chart *c = calloc(1, sizeof *c);
    if (!c) {
        r->failed = true;
        return NULL;
    }
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->title, sizeof c->title, "%s", title);
    c->caption = caption;
    return c;
}

static void chart_free(rlvr_report_chart *c) {
    for (size_t i = 0; c && i < c->n_owned; i++) free(c->owned[i]);
    free(c);
}

/* An array of n elements of `size` bytes, freed with the chart. */
static void *owned_array(rlvr_report_chart *c, size_t n, size_t size) {
    if (c->n_owned == sizeof c->owned / sizeof c->owned[0]) return NULL;
    void *v = malloc((n ? n : 1) * size);
    if (v) c->owned[c->n_owned++] = v;
    return v;
}

static double *owned_doubles(rlvr_report_chart *c, size_t n) { return owned_array(c, n, sizeof(double)); }

static bool any_finite(const double *v, size_t n) {
    for (size_t i = 0; v && i < n; i++)
        if (isfinite(v[i])) return true;
    return false;
}

static rlvr_svg_series *add_series(rlvr_report_chart *c, const char *name, const double *x, const double *y,
                                   size_t n) {
    if (c->n_series == MAX_SERIES) return NULL;
    rlvr_svg_series *s = &c->series[c->n_series++];
    *s = (rlvr_svg_series){.name = name, .kind = RLVR_SVG_LINE, .x = x, .y = y, .n = n};
    return s;
}

/* A metrics column as a series, or a note when the run did not measure it. */
static rlvr_svg_series *add_metric(rlvr_report *r, rlvr_report_chart *c, const metrics_view *m, rlvr_metric col,
                                   bool right) {
    const double *y = m->t->value[col];
    size_t n = (size_t)m->t->n_rows;
    if (!any_finite(y, n)) {
        rlvr_report_note(r, "%s: no %s values (%s) in this run", c->title, rlvr_metric_name(col),
                         y ? "every row is NaN" : "column missing from the file");
        return NULL;
    }
    rlvr_svg_series *s = add_series(c, rlvr_metric_name(col), m->x, y, n);
    if (s) s->right_axis = right;
    return s;
}

static rlvr_report_section *section_add(rlvr_report *r, const char *heading) {
    rlvr_report_section *all = realloc(r->sections, (r->n_sections + 1) * sizeof *all);
    if (!all) return NULL;
    r->sections = all;
    all[r->n_sections] = (rlvr_report_section){.heading = heading};
    return &all[r->n_sections++];
}

/* Puts the chart into the last section; a chart without any data is
 * replaced by a note. */
static void emit_chart(rlvr_report *r, rlvr_report_chart *c, const char *x_label, const char *y_label,
                       const char *y2_label, bool from_zero) {
    size_t points = 0;
    for (size_t i = 0; i < c->n_series; i++) points += rlvr_svg_series_points(&c->series[i]);
    if (points == 0) {
        rlvr_report_note(r, "chart \"%s\" skipped: none of its values were measured", c->title);
        chart_free(c);
        return;
    }
    c->x_label = x_label;
    snprintf(c->y_label, sizeof c->y_label, "%s", y_label);
    c->y2_label = y2_label;
    c->from_zero = from_zero;
    if (c->has_band) c->band.label = c->band_label;
    rlvr_report_section *s = r->n_sections ? &r->sections[r->n_sections - 1] : NULL;
    rlvr_report_chart **all = s ? realloc(s->charts, (s->n_charts + 1) * sizeof *all) : NULL;
    if (!all) {
        r->failed = true;
        chart_free(c);
        return;
    }
    s->charts = all;
    all[s->n_charts++] = c;
    r->n_charts++;
}

/* ---- reinforcement learning and SFT ------------------------------------------------------- */

static void chart_reward(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "reward", "Reward and pass rate",
                                     "Mean total reward of each step's rollouts with a ±1 std band, and the share of "
                                     "rollouts the verifier passed.");
    if (!c) return;
    rlvr_svg_series *s = add_metric(r, c, m, RLVR_METRIC_REWARD_MEAN, false);
    const double *std = m->t->value[RLVR_METRIC_REWARD_STD];
    size_t n = (size_t)m->t->n_rows;
    double *lo = s && any_finite(std, n) ? owned_doubles(c, n) : NULL, *hi = lo ? owned_doubles(c, n) : NULL;
    if (lo && hi) {
        for (size_t i = 0; i < n; i++) lo[i] = s->y[i] - std[i], hi[i] = s->y[i] + std[i];
        s->lo = lo, s->hi = hi;
        s->name = "reward_mean ± std";
    }
    add_metric(r, c, m, RLVR_METRIC_PASS_RATE, false);
    emit_chart(r, c, "step", "reward · pass share", NULL, false);
}

static void chart_groups(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "groups", "Informative groups",
                                     "Share of groups with a reward spread: groups / (groups + groups_zero_var). "
                                     "Groups whose rollouts all scored alike carry no GRPO signal and are dropped. "
                                     "Right axis: dynamic-sampling rounds the step needed.");
    if (!c) return;
    const double *g = m->t->value[RLVR_METRIC_GROUPS], *z = m->t->value[RLVR_METRIC_GROUPS_ZERO_VAR];
    size_t n = (size_t)m->t->n_rows;
    double *share = g && z ? owned_doubles(c, n) : NULL;
    if (share) {
        for (size_t i = 0; i < n; i++) share[i] = g[i] + z[i] > 0 ? g[i] / (g[i] + z[i]) : NAN;
        if (any_finite(share, n)) add_series(c, "informative share", m->x, share, n);
        else rlvr_report_note(r, "%s: no step had any group", c->title);
    } else {
        rlvr_report_note(r, "%s: groups or groups_zero_var missing from the file", c->title);
    }
    rlvr_svg_series *s = add_metric(r, c, m, RLVR_METRIC_DRAW_ROUNDS, true);
    if (s) s->dashed = true;
    emit_chart(r, c, "step", "share of groups", "draw rounds", true);
}

static void chart_entropy(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "entropy", "Entropy",
                                     "Mean entropy of the policy tokens (nats) with the [entropy] target band of the "
                                     "run's configuration; right axis: the entropy controller's coefficient α.");
    if (!c) return;
    rlvr_entropy_config e;
    if (r->config && rlvr_rl_entropy_config_load(&e, r->config) == 0) {
        snprintf(c->band_label, sizeof c->band_label, "target band %g–%g%s", e.target_low, e.target_high,
                 e.adaptive ? "" : " (controller off)");
        c->band = (rlvr_svg_hband){e.target_low, e.target_high, c->band_label};
        c->has_band = true;
    } else {
        rlvr_error_clear();
    }
    add_metric(r, c, m, RLVR_METRIC_ENTROPY, false);
    rlvr_svg_series *s = add_metric(r, c, m, RLVR_METRIC_ENTROPY_COEF, true);
    if (s) s->dashed = true;
    emit_chart(r, c, "step", "entropy (nats)", "coefficient α", false);
}

static void chart_length(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "length", "Length and stops",
                                     "Mean policy tokens per rollout; right axis: share of rollouts stopped by a "
                                     "budget (truncated), rollouts ended by the repetition detector and by too many "
                                     "malformed tool calls in a row (counts).");
    if (!c) return;
    add_metric(r, c, m, RLVR_METRIC_POLICY_TOKENS, false);
    add_metric(r, c, m, RLVR_METRIC_TRUNCATED, true);
    rlvr_svg_series *s = add_metric(r, c, m, RLVR_METRIC_REPETITION_STOPS, true);
    if (s) s->dashed = true;
    add_metric(r, c, m, RLVR_METRIC_MALFORMED_STOPS, true);
    emit_chart(r, c, "step", "policy tokens", "truncated share · repetition and malformed stops", true);
}

static void chart_staleness(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "staleness", "Staleness and drops",
                                     "Mean policy-version lag of the admitted rollouts; right axis: rollouts refused "
                                     "as too stale, rollouts excluded as infrastructure errors, groups dropped for "
                                     "zero variance.");
    if (!c) return;
    add_metric(r, c, m, RLVR_METRIC_STALENESS_MEAN, false);
    add_metric(r, c, m, RLVR_METRIC_STALENESS_DROPPED, true);
    add_metric(r, c, m, RLVR_METRIC_INFRA_ERRORS, true);
    add_metric(r, c, m, RLVR_METRIC_GROUPS_ZERO_VAR, true);
    emit_chart(r, c, "step", "staleness (versions)", "count per step", true);
}

static void chart_clip_kl(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "clip-kl", "Clipping and KL",
                                     "Share of policy tokens whose importance ratio was clipped; right axis: mean k3 "
                                     "KL estimate to the reference policy.");
    if (!c) return;
    add_metric(r, c, m, RLVR_METRIC_CLIP_FRACTION, false);
    add_metric(r, c, m, RLVR_METRIC_KL, true);
    emit_chart(r, c, "step", "clip fraction", "KL", true);
}

static void chart_grad(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "grad-logprob", "Gradient norm and log-prob mismatch",
                                     "Global gradient norm before clipping; right axis: max |sampler − trainer "
                                     "log-prob| over the batch's policy tokens (large values mean the sampler and the "
                                     "trainer disagree).");
    if (!c) return;
    add_metric(r, c, m, RLVR_METRIC_GRAD_NORM, false);
    add_metric(r, c, m, RLVR_METRIC_LOGPROB_DIFF_MAX, true);
    emit_chart(r, c, "step", "grad norm", "max |Δ log-prob|", true);
}

static void chart_throughput(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "throughput", "Throughput",
                                     "Rollouts finished per second of step wall time; right axis: generated tokens "
                                     "per second.");
    if (!c) return;
    add_metric(r, c, m, RLVR_METRIC_ROLLOUTS_PER_S, false);
    add_metric(r, c, m, RLVR_METRIC_TOKENS_PER_S, true);
    emit_chart(r, c, "step", "rollouts / s", "tokens / s", true);
}

static void chart_time(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "time", "Time per step",
                                     "Seconds per step, stacked: generation, tool and verification time are summed "
                                     "over the step's rollouts (they overlap in wall time), training and idle are "
                                     "wall time. The dashed line is the step's wall time.");
    if (!c) return;
    static const rlvr_metric parts[] = {RLVR_METRIC_GENERATE_S, RLVR_METRIC_TOOL_S, RLVR_METRIC_VERIFY_S,
                                        RLVR_METRIC_TRAIN_S, RLVR_METRIC_IDLE_S};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        rlvr_svg_series *s = add_metric(r, c, m, parts[i], false);
        if (s) s->kind = RLVR_SVG_STACK;
    }
    rlvr_svg_series *s = add_metric(r, c, m, RLVR_METRIC_STEP_TIME_S, false);
    if (s) s->dashed = true;
    emit_chart(r, c, "step", "seconds", NULL, true);
}

static void chart_sft(rlvr_report *r, const metrics_view *m) {
    rlvr_report_chart *c = chart_new(r, "sft-loss", "SFT loss",
                                     "Supervised bootstrap: mean negative log-likelihood per policy token of the "
                                     "demonstrations; right axis: the learning rate.");
    if (!c) return;
    add_metric(r, c, m, RLVR_METRIC_LOSS, false);
    rlvr_svg_series *s = add_metric(r, c, m, RLVR_METRIC_LR, true);
    if (s) s->dashed = true;
    emit_chart(r, c, "SFT step", "loss (nats / token)", "learning rate", false);
}

/* ---- release gate ------------------------------------------------------------------------- */

static void gate_charts(rlvr_report *r) {
    size_t n = r->n_gates;
    rlvr_report_chart *c = chart_new(r, "gate-pass1", "Gate: target pass@1 per candidate",
                                     "Each gate report (RUN/gate/*.json): the baseline's and the candidate's pass@1 on "
                                     "the target split; the candidate's bar is the bootstrap interval of the paired "
                                     "difference, placed around its pass@1. A circle: the gate passed; a cross: it "
                                     "rejected the candidate.");
    rlvr_report_chart *d = chart_new(r, "gate-diff", "Gate: paired difference candidate − baseline",
                                     "Mean per-task pass@1 difference with its bootstrap interval; the target "
                                     "criterion passes when the interval's low end is at or above −tolerance "
                                     "(dashed).");
    if (!c || !d) {
        chart_free(c), chart_free(d);
        return;
    }
    double *x = owned_doubles(c, n), *base = owned_doubles(c, n), *cand = owned_doubles(c, n);
    double *clo = owned_doubles(c, n), *chi = owned_doubles(c, n);
    int8_t *status = owned_array(c, n, sizeof *status);
    double *diff = owned_doubles(d, n), *lo = owned_doubles(d, n), *hi = owned_doubles(d, n);
    double *tol = owned_doubles(d, n), *xd = owned_doubles(d, n);
    int8_t *target_status = owned_array(d, n, sizeof *target_status);
    if (!x || !base || !cand || !clo || !chi || !status || !diff || !lo || !hi || !tol || !xd || !target_status) {
        r->failed = true;
        chart_free(c), chart_free(d);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const rlvr_report_gate *g = &r->gates[i];
        const rlvr_report_gate_target *t = &g->target;
        x[i] = xd[i] = (double)g->step;
        base[i] = t->base_pass1, cand[i] = t->cand_pass1;
        diff[i] = t->mean_diff, lo[i] = t->low, hi[i] = t->high;
        clo[i] = cand[i] + lo[i] - diff[i], chi[i] = cand[i] + hi[i] - diff[i];
        tol[i] = -t->tolerance;
        status[i] = g->passed;
        target_status[i] = t->passed;
    }
    rlvr_svg_series *s = add_series(c, "baseline pass@1", x, base, n);
    s->kind = RLVR_SVG_MARKS, s->dashed = true;
    *add_series(c, "", x, cand, n) = (rlvr_svg_series){.name = "candidate pass@1", .kind = RLVR_SVG_MARKS, .x = x,
                                                       .y = cand, .lo = clo, .hi = chi, .status = status, .n = n};
    emit_chart(r, c, "candidate step", "pass@1", NULL, true);

    *add_series(d, "", xd, diff, n) = (rlvr_svg_series){.name = "candidate − baseline", .kind = RLVR_SVG_MARKS,
                                                        .x = xd, .y = diff, .lo = lo, .hi = hi,
                                                        .status = target_status, .n = n};
    s = add_series(d, "−tolerance", xd, tol, n);
    s->dashed = true;
    emit_chart(r, d, "candidate step", "pass@1 difference", NULL, false);
}

/* ---- sweeps ----------------------------------------------------------------------------------- */

static int compare_sweep_rows(const void *a, const void *b) {
    const rlvr_report_sweep_row *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    if (c) return c;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return (x->step > y->step) - (x->step < y->step);
}

/* One chart per k: pass@k against the checkpoint's step, a series per
 * family. Sorts the table's rows by family, k and step. */
static void sweep_charts(rlvr_report *r, rlvr_report_sweep *t, size_t index) {
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
        char id[64], title[RLVR_REPORT_PATH_CAP + 64];
        snprintf(id, sizeof id, "sweep-%zu-k%lld", index, (long long)ks[kk]);
        snprintf(title, sizeof title, "Sweep: pass@%lld per family (%s)", (long long)ks[kk], t->path);
        rlvr_report_chart *c = chart_new(r, id, title,
                                         "pass@k of each checkpoint on held-out tasks (rlvr sweep), one line per task "
                                         "family, with its interval as a band.");
        if (!c) return;
        size_t n = t->n;
        double *x = owned_doubles(c, n), *y = owned_doubles(c, n), *lo = owned_doubles(c, n);
        double *hi = owned_doubles(c, n);
        if (!x || !y || !lo || !hi) {
            r->failed = true;
            chart_free(c);
            return;
        }
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const rlvr_report_sweep_row *row = &t->rows[i];
            if (row->k != ks[kk]) continue;
            size_t start = m;
            /* rows of one family are adjacent (sorted): one series per run of them */
            bool new_family = m == 0 || strcmp(row->family, t->rows[i - 1].family) != 0 || t->rows[i - 1].k != ks[kk];
            x[m] = row->step, y[m] = row->pass, lo[m] = row->low, hi[m] = row->high;
            m++;
            if (new_family) {
                rlvr_svg_series *s = add_series(c, row->family, x + start, y + start, 1);
                if (s) s->lo = lo + start, s->hi = hi + start;
                else rlvr_report_note(r, "%s: more than %d families; the rest are not drawn", title, MAX_SERIES);
            } else if (c->n_series) {
                rlvr_svg_series *s = &c->series[c->n_series - 1];
                if (s->x + s->n == x + start) s->n++;
            }
        }
        char y_label[64];
        snprintf(y_label, sizeof y_label, "pass@%lld", (long long)ks[kk]);
        emit_chart(r, c, "checkpoint step", y_label, NULL, true);
    }
}

/* ---- the sections ------------------------------------------------------------------------------ */

static int section_fail(void) { return RLVR_FAIL(RLVR_ENOMEM, "out of memory"); }

int rlvr_report_build(rlvr_report *r) {
    rlvr_report_section *s;
    if (r->header.rl.present && r->rl.n_rows > 0) {
        metrics_view m = {&r->rl, r->rl_x};
        if (!(s = section_add(r, "Reinforcement learning (metrics.h5)"))) return section_fail();
        chart_reward(r, &m);
        chart_groups(r, &m);
        chart_entropy(r, &m);
        chart_length(r, &m);
        chart_staleness(r, &m);
        chart_clip_kl(r, &m);
        chart_grad(r, &m);
        chart_throughput(r, &m);
        chart_time(r, &m);
        s = &r->sections[r->n_sections - 1];
        s->table = RLVR_REPORT_TABLE_LAST_ROW, s->metrics = &r->rl, s->table_id = "last-rl";
        s->table_title = "RL metrics";
    }
    if (r->header.sft.present && r->sft.n_rows > 0) {
        metrics_view m = {&r->sft, r->sft_x};
        if (!(s = section_add(r, "Supervised bootstrap (sft/metrics.h5)"))) return section_fail();
        chart_sft(r, &m);
        s = &r->sections[r->n_sections - 1];
        s->table = RLVR_REPORT_TABLE_LAST_ROW, s->metrics = &r->sft, s->table_id = "last-sft";
        s->table_title = "SFT metrics";
    } else if (r->header.sft.present) {
        char path[RLVR_REPORT_PATH_CAP];
        rlvr_report_join(path, r->run, "sft/metrics.h5");
        rlvr_report_note(r, "%s has no rows yet: SFT chart skipped", path);
    }
    if (r->n_gates) {
        if (!(s = section_add(r, "Release gate"))) return section_fail();
        s->table = RLVR_REPORT_TABLE_GATES;
        gate_charts(r);
    }
    if (r->n_sweeps && !section_add(r, "Checkpoint sweeps")) return section_fail();
    for (size_t i = 0; i < r->n_sweeps; i++) sweep_charts(r, &r->sweeps[i], i);
    return 0;
}

void rlvr_report_free_sections(rlvr_report *r) {
    for (size_t i = 0; i < r->n_sections; i++) {
        for (size_t j = 0; j < r->sections[i].n_charts; j++) chart_free(r->sections[i].charts[j]);
        free(r->sections[i].charts);
    }
    free(r->sections);
}
