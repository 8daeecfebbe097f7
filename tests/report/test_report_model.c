/* tests/report/test_report_model.c — the page model of `rlvr report`
 * (report/report.h) built from a run directory this test writes itself:
 * metrics.h5 and sft/metrics.h5 through io/metrics.h's writer (NaN where a
 * metric is absent), a manifest carrying the configuration text, a gate
 * report and a sweep table. Checks the charts' series against the values
 * written, a chart left out when its columns are all NaN, the header, the
 * rendered page's chart data, and the errors for a run without metrics and
 * for a corrupt metrics file.
 *
 *   test_report_model              the checks
 *   test_report_model --fixture D  only writes the run directory D (to
 *                                  compare the pages of two builds) */
#include "core/config.h"
#include "core/fs.h"
#include "enclave/fsutil.h"
#include "io/config.h"
#include "io/manifest.h"
#include "io/metrics.h"
#include "report/report.h"
#include "rl/config.h"
#include "test.h"

#include <time.h>

#define ROWS 36
#define SFT_ROWS 12
#define T0 1700000000.0

static const char config_text[] = "[run]\nname = fixture-run\nseed = 7\n\n"
                                  "[entropy]\ntarget_low = 0.25\ntarget_high = 0.75\n";

static const rlvr_config_key *const schemas[] = {rlvr_io_config_keys, rlvr_rl_config_keys, NULL};

/* The values written, for the checks: step i of the RL table. */
static int64_t rl_step(int i) { return 2 * (int64_t)i + 1; }
static double rl_reward(int i) { return i == 5 || i == 17 ? NAN : 0.1 + 0.02 * i; } /* two steps unmeasured */
static double rl_std(int i) { return 0.05 + 0.001 * i; }
static double rl_pass(int i) { return 0.2 + 0.015 * i; }
static double rl_step_time(int i) { return 10.0 + (i % 3); }
static double rl_time_unix(int i) { return T0 + 12.0 * (i + 1); }

static void set(rlvr_metrics_row *row, rlvr_metric m, double v) { row->value[m] = v; }

/* Writes `rows` rows to a new metrics file; fill(i, row) sets row i. */
static int write_metrics(const char *path, int rows, void (*fill)(int, rlvr_metrics_row *)) {
    rlvr_metrics *m = NULL;
    RLVR_TRY(rlvr_metrics_open(&m, path, -1));
    int rc = 0;
    for (int i = 0; i < rows && rc == 0; i++) {
        rlvr_metrics_row row;
        fill(i, &row);
        rc = rlvr_metrics_append(m, &row);
    }
    int rc2 = rlvr_metrics_close(m);
    return rc ? rc : rc2;
}

/* Every RL chart's columns but clip_fraction and kl (NaN in every row). */
static void rl_row(int i, rlvr_metrics_row *row) {
    rlvr_metrics_row_init(row, rl_step(i));
    set(row, RLVR_METRIC_TIME_UNIX, rl_time_unix(i));
    set(row, RLVR_METRIC_STEP_TIME_S, rl_step_time(i));
    set(row, RLVR_METRIC_REWARD_MEAN, rl_reward(i));
    set(row, RLVR_METRIC_REWARD_STD, rl_std(i));
    set(row, RLVR_METRIC_PASS_RATE, rl_pass(i));
    set(row, RLVR_METRIC_GROUPS, 6 + i % 3);
    set(row, RLVR_METRIC_GROUPS_ZERO_VAR, i % 4);
    set(row, RLVR_METRIC_DRAW_ROUNDS, 1 + i % 2);
    set(row, RLVR_METRIC_ENTROPY, 0.9 - 0.01 * i);
    set(row, RLVR_METRIC_ENTROPY_COEF, 0.001 * (1 + i % 5));
    set(row, RLVR_METRIC_POLICY_TOKENS, 120 + 3 * i);
    set(row, RLVR_METRIC_TRUNCATED, 0.01 * (i % 7));
    set(row, RLVR_METRIC_STALENESS_MEAN, 0.5 + 0.01 * i);
    set(row, RLVR_METRIC_STALENESS_DROPPED, i % 2);
    set(row, RLVR_METRIC_INFRA_ERRORS, 0);
    set(row, RLVR_METRIC_GRAD_NORM, 1.5 - 0.02 * i);
    set(row, RLVR_METRIC_LOGPROB_DIFF_MAX, 1e-3 * (1 + i % 4));
    set(row, RLVR_METRIC_ROLLOUTS_PER_S, 3.2 + 0.1 * (i % 5));
    set(row, RLVR_METRIC_TOKENS_PER_S, 400 + 10 * i);
    set(row, RLVR_METRIC_GENERATE_S, 14.0 + 0.1 * i);
    set(row, RLVR_METRIC_VERIFY_S, 2.5);
    set(row, RLVR_METRIC_TRAIN_S, 3.0);
    set(row, RLVR_METRIC_IDLE_S, 0.5);
    set(row, RLVR_METRIC_LOSS, 0.3 - 0.005 * i);
    set(row, RLVR_METRIC_LR, 1e-5);
}

static void sft_row(int i, rlvr_metrics_row *row) {
    rlvr_metrics_row_init(row, i + 1);
    set(row, RLVR_METRIC_TIME_UNIX, T0 - 100 + 2.0 * i);
    set(row, RLVR_METRIC_STEP_TIME_S, 2.0);
    set(row, RLVR_METRIC_LOSS, 2.0 / (i + 1));
    set(row, RLVR_METRIC_LR, 1e-4);
}

static const char gate_json[] =
    "{\"format\":\"rlvr-gate/1\",\"candidate\":\"c.h5\",\"baseline\":\"b.h5\",\"candidate_step\":21,"
    "\"candidate_version\":21,\"passed\":false,\"criteria\":{\"target\":{\"passed\":false,\"base_pass1\":0.25,"
    "\"cand_pass1\":0.1875,\"mean_diff\":-0.0625,\"low\":-0.15,\"high\":0.02,\"tolerance\":0.02},"
    "\"regression\":{\"passed\":true,\"families\":[{\"name\":\"arith <reg>\",\"base_pass1\":0.5,\"cand_pass1\":0.5,"
    "\"low\":-0.04,\"high\":0.04,\"passed\":true}]},\"compliance\":{\"passed\":true,\"value\":1.0,"
    "\"threshold\":1.0}}}\n";

static const char sweep_csv[] = "checkpoint,step,family,n_tasks,samples,k,pass_at_k,low,high\n"
                                "a/step_3.h5,3,arith,8,4,1,0.25,0.1,0.4\n"
                                "a/step_1.h5,1,arith,8,4,1,0.2,0.05,0.35\n"
                                "a/step_1.h5,1,\"bug,fix\",8,4,1,0.1,0.0,0.2\n";

static int write_run(const char *run) {
    char path[4096], sub[4096];
    snprintf(sub, sizeof sub, "%s/sft", run);
    RLVR_TRY(rlvr_mkdir_p(sub, 0755));
    snprintf(sub, sizeof sub, "%s/gate", run);
    RLVR_TRY(rlvr_mkdir_p(sub, 0755));
    snprintf(sub, sizeof sub, "%s/sweep_a", run);
    RLVR_TRY(rlvr_mkdir_p(sub, 0755));
    snprintf(path, sizeof path, "%s/metrics.h5", run);
    RLVR_TRY(write_metrics(path, ROWS, rl_row));
    snprintf(path, sizeof path, "%s/sft/metrics.h5", run);
    RLVR_TRY(write_metrics(path, SFT_ROWS, sft_row));
    snprintf(path, sizeof path, "%s/gate/step_21.json", run);
    RLVR_TRY(rlvr_write_text_atomic(path, gate_json));
    snprintf(path, sizeof path, "%s/sweep_a/sweep.csv", run);
    RLVR_TRY(rlvr_write_text_atomic(path, sweep_csv));

    rlvr_config *cfg = NULL;
    RLVR_TRY(rlvr_config_parse(&cfg, config_text, "fixture.ini", schemas));
    rlvr_manifest_options mo = RLVR_MANIFEST_OPTIONS_INIT;
    mo.run_name = "fixture-run";
    mo.config_text = config_text;
    mo.config_hash = rlvr_config_hash(cfg);
    mo.seed = 7;
    mo.source_dir = run; /* not a git tree: no repository walk */
    rlvr_config_free(cfg);
    rlvr_manifest *m = NULL;
    RLVR_TRY(rlvr_manifest_new(&m, &mo));
    int rc = rlvr_manifest_finish(m, "finished", rl_step(ROWS - 1), rl_step(ROWS - 1));
    snprintf(path, sizeof path, "%s/manifest.h5", run);
    if (rc == 0) rc = rlvr_manifest_write(m, path);
    rlvr_manifest_free(m);
    return rc;
}

/* x and y of a series against the written values: NaN where NaN was written. */
static void check_series(const rlvr_svg_series *s, double (*want)(int)) {
    CHECK(s && s->n == ROWS);
    for (int i = 0; s && i < ROWS && i < (int)s->n; i++) {
        CHECK_MSG(s->x[i] == (double)rl_step(i), "x[%d] = %g", i, s->x[i]);
        double w = want(i);
        CHECK_MSG(isnan(w) ? isnan(s->y[i]) : s->y[i] == w, "y[%d] = %g, written %g", i, s->y[i], w);
    }
}

static bool has_note(const rlvr_report *r, const char *part) {
    for (size_t i = 0; i < r->n_notes; i++)
        if (strstr(r->notes[i], part)) return true;
    return false;
}

static void check_model(const rlvr_report *r) {
    /* reward chart: reward_mean (with its ±std band) and pass_rate as written */
    const rlvr_report_chart *c = rlvr_report_find_chart(r, "reward");
    CHECK(c != NULL);
    const rlvr_svg_series *s = rlvr_report_find_series(c, "reward_mean ± std");
    check_series(s, rl_reward);
    for (int i = 0; s && s->lo && i < ROWS; i++) {
        if (isnan(rl_reward(i))) continue;
        CHECK_NEAR(s->lo[i], rl_reward(i) - rl_std(i), 1e-12);
        CHECK_NEAR(s->hi[i], rl_reward(i) + rl_std(i), 1e-12);
    }
    check_series(rlvr_report_find_series(c, "pass_rate"), rl_pass);
    CHECK(rlvr_svg_series_points(s) == ROWS - 2);

    /* clip_fraction and kl are NaN in every row: no chart, and notes saying why */
    CHECK(rlvr_report_find_chart(r, "clip-kl") == NULL);
    CHECK(has_note(r, "chart \"Clipping and KL\" skipped"));
    CHECK(has_note(r, "no clip_fraction values (every row is NaN)"));
    /* tool_s was never set either: the time chart draws the other four parts and step_time_s */
    c = rlvr_report_find_chart(r, "time");
    CHECK(c && c->n_series == 5 && !rlvr_report_find_series(c, "tool_s"));

    /* the entropy band from the stored configuration */
    c = rlvr_report_find_chart(r, "entropy");
    CHECK(c && c->has_band && c->band.lo == 0.25 && c->band.hi == 0.75);

    /* informative share = groups / (groups + groups_zero_var) */
    c = rlvr_report_find_chart(r, "groups");
    s = rlvr_report_find_series(c, "informative share");
    for (int i = 0; s && i < ROWS; i++) CHECK_NEAR(s->y[i], (6.0 + i % 3) / (6.0 + i % 3 + i % 4), 1e-12);

    /* header */
    const rlvr_report_header *h = &r->header;
    CHECK(strcmp(h->name, "fixture-run") == 0);
    CHECK(h->rl.present && h->rl.rows == ROWS && h->rl.first_step == rl_step(0) &&
          h->rl.last_step == rl_step(ROWS - 1));
    CHECK_NEAR(h->rl.wall_s, rl_time_unix(ROWS - 1) - (rl_time_unix(0) - rl_step_time(0)), 1e-9);
    CHECK(h->sft.present && h->sft.rows == SFT_ROWS);
    CHECK(h->has_config && h->has_seed && h->seed == 7);
    CHECK(strcmp(h->status, "finished") == 0);
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, config_text, "x", schemas));
    CHECK(cfg && h->config_hash == rlvr_config_hash(cfg));
    rlvr_config_free(cfg);

    /* sections in page order, the SFT chart, the gate and the sweep */
    CHECK(r->n_sections == 4);
    CHECK(r->n_sections == 4 && strcmp(r->sections[0].heading, "Reinforcement learning (metrics.h5)") == 0 &&
          r->sections[0].n_charts == 8 && r->sections[0].table == RLVR_REPORT_TABLE_LAST_ROW &&
          r->sections[2].table == RLVR_REPORT_TABLE_GATES);
    c = rlvr_report_find_chart(r, "sft-loss");
    s = rlvr_report_find_series(c, "loss");
    CHECK(s && s->n == SFT_ROWS);
    for (int i = 0; s && i < SFT_ROWS; i++) CHECK(s->y[i] == 2.0 / (i + 1) && s->x[i] == i + 1);
    CHECK(r->n_gates == 1 && r->gates[0].step == 21 && r->gates[0].passed == 0 && r->gates[0].n_families == 1);
    c = rlvr_report_find_chart(r, "gate-diff");
    s = rlvr_report_find_series(c, "candidate − baseline");
    CHECK(s && s->n == 1 && s->y[0] == -0.0625 && s->lo[0] == -0.15 && s->status[0] == 0);
    c = rlvr_report_find_chart(r, "sweep-0-k1");
    s = rlvr_report_find_series(c, "arith");
    CHECK(s && s->n == 2 && s->x[0] == 1 && s->y[0] == 0.2 && s->x[1] == 3 && s->y[1] == 0.25);
    CHECK(rlvr_report_find_series(c, "bug,fix") != NULL);
    CHECK(r->n_charts == 8 + 1 + 2 + 1);
}

/* The attribute `name` of the element with id="chart-<id>" in the page. */
static long chart_attr(const char *page, const char *id, const char *name) {
    char key[128];
    snprintf(key, sizeof key, "id=\"chart-%s\"", id);
    const char *at = strstr(page, key), *end = at ? strchr(at, '>') : NULL;
    snprintf(key, sizeof key, " %s=\"", name);
    const char *v = at ? strstr(at, key) : NULL;
    return v && v < end ? strtol(v + strlen(key), NULL, 10) : -1;
}

static void check_page(const rlvr_report *r, const char *run) {
    rlvr_text page = {0};
    CHECK_OK(rlvr_report_render(r, (int64_t)T0, &page));
    const char *p = page.data ? page.data : "";
    char want[256];
    snprintf(want, sizeof want, "<body data-charts=\"%zu\">", r->n_charts);
    CHECK(strstr(p, want) != NULL);
    CHECK(chart_attr(p, "reward", "data-series") == 2);
    CHECK(chart_attr(p, "reward", "data-points") == (ROWS - 2) + ROWS);
    CHECK(chart_attr(p, "sft-loss", "data-points") == 2 * SFT_ROWS);
    CHECK(chart_attr(p, "clip-kl", "data-points") == -1);
    CHECK(strstr(p, "<th>page generated</th><td>2023-11-14T22:13:20Z</td>") != NULL);
    CHECK(strstr(p, "<h1>rlvr report: fixture-run</h1>") != NULL);
    snprintf(want, sizeof want, "<th>RL (metrics.h5)</th><td>%d rows, steps 1 … %lld, wall time 7.2 min</td>", ROWS,
             (long long)rl_step(ROWS - 1));
    CHECK_MSG(strstr(p, want) != NULL, "no header row \"%s\"", want);
    CHECK(strstr(p, "arith &lt;reg&gt;") != NULL);
    CHECK(strstr(p, "<li>chart &quot;Clipping and KL&quot; skipped") != NULL);
    rlvr_text_free(&page);

    /* written atomically where asked */
    char path[4096], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/page.html", run);
    CHECK_OK(rlvr_report_write(r, path, (int64_t)T0));
    CHECK_OK(rlvr_fs_read_file(path, &text, &len));
    CHECK(text && strstr(text, "id=\"chart-reward\"") && strstr(text, "</html>\n"));
    free(text);
}

static void check_errors(const char *dir) {
    char run[1024], path[2048];
    rlvr_report *r = NULL;
    /* a directory without metrics: both paths named */
    snprintf(run, sizeof run, "%s/empty", dir);
    CHECK_OK(rlvr_mkdir_p(run, 0755));
    rlvr_report_options o = {.run = run, .schemas = schemas};
    CHECK(rlvr_report_open(&r, &o) == RLVR_ENOTFOUND && r == NULL);
    snprintf(path, sizeof path, "%s/metrics.h5", run);
    CHECK_MSG(strstr(rlvr_error_last(), path) != NULL, "message: %s", rlvr_error_last());
    snprintf(path, sizeof path, "%s/sft/metrics.h5", run);
    CHECK_MSG(strstr(rlvr_error_last(), path) != NULL, "message: %s", rlvr_error_last());
    /* a corrupt metrics file: an error naming it */
    snprintf(path, sizeof path, "%s/metrics.h5", run);
    CHECK_OK(rlvr_write_text_atomic(path, "this is not an HDF5 file\n"));
    int rc = rlvr_report_open(&r, &o);
    CHECK(rc < 0 && r == NULL);
    CHECK_MSG(strstr(rlvr_error_last(), path) != NULL, "message: %s", rlvr_error_last());
    /* not a directory */
    o.run = path;
    CHECK(rlvr_report_open(&r, &o) == RLVR_ENOTFOUND && strstr(rlvr_error_last(), "is not a directory"));
    rlvr_error_clear();
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--fixture") == 0) {
        int rc = write_run(argv[2]);
        if (rc < 0) fprintf(stderr, "test_report_model: %s\n", rlvr_error_last());
        return rc < 0;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char dir[] = "/tmp/test_report_model.XXXXXX", run[4096];
    if (!mkdtemp(dir)) return 1;
    snprintf(run, sizeof run, "%s/run", dir);
    CHECK_OK(write_run(run));
    const char *const extra[] = {"/nonexistent/sweeps"};
    rlvr_report_options o = {.run = run, .sweeps = extra, .n_sweeps = 1, .schemas = schemas};
    rlvr_report *r = NULL;
    CHECK_OK(rlvr_report_open(&r, &o));
    if (r) {
        check_model(r);
        CHECK(has_note(r, "--sweep /nonexistent/sweeps: no /nonexistent/sweeps/sweep.csv"));
        check_page(r, dir);
    }
    rlvr_report_free(r);
    check_errors(dir);
    rlvr_fs_remove_tree(dir);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("test_report_model: %.3f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return test_summary("test_report_model");
}
