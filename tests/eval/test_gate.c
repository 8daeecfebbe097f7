/* tests/eval/test_gate.c — the release gate's decisions (eval/gate.h) from
 * synthetic evaluations made with rlvr_eval_result_new / set_task /
 * summarize: each criterion passing and failing, the tolerance edges (per-
 * task differences that are all equal make the bootstrap interval a point,
 * so its low end is known exactly), no regression tasks, unmeasurable
 * families, [gate] parsing, the JSON fields other tools read, and the HDF5
 * report and `promoted` marker (io/gate_report.h). */
#include "eval/gate.h"
#include "io/gate_report.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <unistd.h>

#define SAMPLES 4

typedef struct {
    const char *id, *family;
    int32_t n, c, infra;
    int64_t calls, parsed;
} row;

static rlvr_eval_result *make(const row *rows, size_t n, rlvr_split split) {
    rlvr_eval_result *r = NULL;
    CHECK_OK(rlvr_eval_result_new(&r, n, SAMPLES, 7, 1.0f));
    for (size_t i = 0; r && i < n; i++) {
        CHECK_OK(rlvr_eval_result_set_task(r, i, rows[i].id, rows[i].family, split, (uint32_t)i));
        r->tasks[i].n = rows[i].n;
        r->tasks[i].c = rows[i].c;
        r->tasks[i].infra = rows[i].infra;
        r->tasks[i].calls = rows[i].calls;
        r->tasks[i].calls_parsed = rows[i].parsed;
    }
    if (r) CHECK_OK(rlvr_eval_result_summarize(r, 0.95, 500));
    return r;
}

/* Five eval tasks of two families; `shift` is added to every task's
 * successes (cand − base per-task pass@1 difference = shift / 4). */
static rlvr_eval_result *eval_split(int shift, int64_t calls, int64_t parsed) {
    row rows[] = {{"e0", "arith", 4, 1 + shift, 0, calls, parsed}, {"e1", "arith", 4, 2 + shift, 0, 0, 0},
                  {"e2", "arith", 4, 1 + shift, 0, 0, 0},          {"e3", "bugfix", 4, 2 + shift, 0, 0, 0},
                  {"e4", "bugfix", 4, 1 + shift, 0, 0, 0}};
    return make(rows, 5, RLVR_SPLIT_EVAL);
}

/* Regression split: family x with shift_x, family y with shift_y. */
static rlvr_eval_result *regression_split(int shift_x, int shift_y, int64_t calls, int64_t parsed) {
    row rows[] = {{"r0", "x", 4, 2 + shift_x, 0, calls, parsed},
                  {"r1", "x", 4, 2 + shift_x, 0, 0, 0},
                  {"r2", "y", 4, 2 + shift_y, 0, 0, 0},
                  {"r3", "y", 4, 2 + shift_y, 0, 0, 0}};
    return make(rows, 4, RLVR_SPLIT_REGRESSION);
}

static rlvr_gate_options defaults(void) {
    rlvr_gate_options o;
    rlvr_gate_options_default(&o);
    o.resamples = 500;
    return o;
}

static rlvr_gate_report *decide(const rlvr_gate_options *o, const rlvr_gate_split *s, size_t n) {
    rlvr_gate_report *r = NULL;
    CHECK_OK(rlvr_gate_decide(&r, o, s, n));
    return r;
}

static void test_defaults(void) {
    rlvr_gate_options o;
    rlvr_gate_options_default(&o);
    CHECK(o.tolerance == 0.02 && o.regression_tolerance == 0.05 && o.compliance_min == 1.0);
    CHECK(o.samples == 4 && o.seed == 1 && o.limit == 0 && o.target_split == RLVR_SPLIT_EVAL);
    CHECK(o.n_checks == 1 && o.checks[0].split == RLVR_SPLIT_REGRESSION && o.checks[0].family[0] == '\0');
}

/* The same evaluation twice: every criterion passes at the defaults; a
 * negative tolerance (an improvement required) rejects on the target. */
static void test_identical(void) {
    rlvr_eval_result *b = eval_split(0, 0, 0), *c = eval_split(0, 0, 0);
    rlvr_eval_result *rb = regression_split(0, 0, 0, 0), *rc = regression_split(0, 0, 0, 0);
    rlvr_gate_split s[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_REGRESSION, rb, rc}};
    rlvr_gate_options o = defaults();
    rlvr_gate_report *r = decide(&o, s, 2);
    if (r) {
        CHECK(r->passed && r->target.passed && r->regression_passed && r->compliance_passed);
        CHECK(r->target.n_tasks == 5 && r->target.unpaired == 0 && strcmp(r->target.family, "all") == 0);
        CHECK(r->target.mean_diff == 0 && r->target.low == 0 && r->target.high == 0);
        CHECK_NEAR(r->target.base_pass1, (0.25 + 0.5 + 0.25 + 0.5 + 0.25) / 5, 1e-12);
        CHECK(r->n_regression == 2 && !r->regression_no_tasks);
        CHECK(strcmp(r->regression[0].family, "x") == 0 && strcmp(r->regression[1].family, "y") == 0);
        CHECK(r->compliance == 1.0 && r->calls == 0);
        char failed[64];
        rlvr_gate_failed_criteria(r, failed, sizeof failed);
        CHECK(strcmp(failed, "") == 0);
    }
    rlvr_gate_report_free(r);
    o.tolerance = -0.01;
    r = decide(&o, s, 2);
    if (r) {
        CHECK(!r->passed && !r->target.passed && r->regression_passed && r->compliance_passed);
        char failed[64];
        rlvr_gate_failed_criteria(r, failed, sizeof failed);
        CHECK(strcmp(failed, "target") == 0);
    }
    rlvr_gate_report_free(r);
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
    rlvr_eval_result_free(rb);
    rlvr_eval_result_free(rc);
}

/* Every task loses one success of four: the difference is −0.25 on every
 * task, the interval [−0.25, −0.25]; tolerance 0.25 passes, 0.249 fails.
 * Every task gains one: tolerance −0.25 passes, −0.251 fails. */
static void test_tolerance_edges(void) {
    rlvr_eval_result *b = eval_split(1, 0, 0), *worse = eval_split(0, 0, 0), *better = eval_split(2, 0, 0);
    rlvr_gate_options o = defaults();
    o.n_checks = 0;
    rlvr_gate_split s = {RLVR_SPLIT_EVAL, b, worse};
    double tol[4] = {0.25, 0.249, 0.02, 1.0};
    bool expect[4] = {true, false, false, true};
    for (int i = 0; i < 4; i++) {
        o.tolerance = tol[i];
        rlvr_gate_report *r = decide(&o, &s, 1);
        if (!r) continue;
        CHECK(r->target.low == -0.25 && r->target.high == -0.25 && r->target.mean_diff == -0.25);
        CHECK_MSG(r->target.passed == expect[i] && r->passed == expect[i], "tolerance %g", tol[i]);
        CHECK(r->regression_no_tasks && r->regression_passed);
        rlvr_gate_report_free(r);
    }
    s.cand = better;
    double need[3] = {-0.25, -0.251, 0.0};
    bool expect2[3] = {true, false, true};
    for (int i = 0; i < 3; i++) {
        o.tolerance = need[i];
        rlvr_gate_report *r = decide(&o, &s, 1);
        if (!r) continue;
        CHECK(r->target.low == 0.25);
        CHECK_MSG(r->target.passed == expect2[i], "tolerance %g", need[i]);
        rlvr_gate_report_free(r);
    }
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(worse);
    rlvr_eval_result_free(better);
}

/* The rule is on the interval's LOW end, not the mean: two tasks with
 * differences 0 and −0.5 have mean −0.25, but a quarter of the bootstrap
 * resamples draw the −0.5 task twice, so the 2.5 % quantile is −0.5. */
static void test_low_end_not_mean(void) {
    row base[] = {{"a", "f", 4, 2, 0, 0, 0}, {"b", "f", 4, 2, 0, 0, 0}};
    row cand[] = {{"a", "f", 4, 2, 0, 0, 0}, {"b", "f", 4, 0, 0, 0, 0}};
    rlvr_eval_result *b = make(base, 2, RLVR_SPLIT_EVAL), *c = make(cand, 2, RLVR_SPLIT_EVAL);
    rlvr_gate_split s = {RLVR_SPLIT_EVAL, b, c};
    rlvr_gate_options o = defaults();
    o.n_checks = 0;
    o.tolerance = 0.3; /* the mean (−0.25) is inside it, the low end is not */
    rlvr_gate_report *r = decide(&o, &s, 1);
    if (r) CHECK(r->target.mean_diff == -0.25 && r->target.low == -0.5 && r->target.high == 0 && !r->passed);
    rlvr_gate_report_free(r);
    o.tolerance = 0.5;
    r = decide(&o, &s, 1);
    if (r) CHECK(r->passed);
    rlvr_gate_report_free(r);
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
}

/* Family y of the regression split loses 0.5 on every task: its test fails
 * at the default 0.05, passes at 0.5; x passes throughout. */
static void test_regression(void) {
    rlvr_eval_result *b = eval_split(0, 0, 0), *c = eval_split(0, 0, 0);
    rlvr_eval_result *rb = regression_split(0, 0, 0, 0), *rc = regression_split(0, -2, 0, 0);
    rlvr_gate_split s[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_REGRESSION, rb, rc}};
    rlvr_gate_options o = defaults();
    rlvr_gate_report *r = decide(&o, s, 2);
    if (r) {
        CHECK(!r->passed && r->target.passed && !r->regression_passed && r->compliance_passed);
        CHECK(r->n_regression == 2 && r->regression[0].passed && !r->regression[1].passed);
        CHECK(r->regression[1].low == -0.5 && r->regression[1].n_tasks == 2);
        CHECK(r->regression[1].tolerance == 0.05 && r->regression[1].split == RLVR_SPLIT_REGRESSION);
        char failed[64];
        rlvr_gate_failed_criteria(r, failed, sizeof failed);
        CHECK(strcmp(failed, "regression") == 0);
    }
    rlvr_gate_report_free(r);
    o.regression_tolerance = 0.5;
    r = decide(&o, s, 2);
    if (r) CHECK(r->passed && r->regression_passed);
    rlvr_gate_report_free(r);
    /* only family x checked: passes at the default */
    o.regression_tolerance = 0.05;
    CHECK_OK(rlvr_gate_parse_checks(&o, "regression:x"));
    r = decide(&o, s, 2);
    if (r) CHECK(r->passed && r->n_regression == 1 && strcmp(r->regression[0].family, "x") == 0);
    rlvr_gate_report_free(r);
    /* a family the split does not have, and a split that was not evaluated */
    CHECK_OK(rlvr_gate_parse_checks(&o, "regression:z"));
    r = NULL;
    CHECK(rlvr_gate_decide(&r, &o, s, 2) == RLVR_EINVAL && !r);
    CHECK_OK(rlvr_gate_parse_checks(&o, "train"));
    CHECK(rlvr_gate_decide(&r, &o, s, 2) == RLVR_EINVAL && !r);
    /* the target split on its own family; then the eval split as a regression check */
    CHECK_OK(rlvr_gate_parse_checks(&o, "eval"));
    snprintf(o.target_family, sizeof o.target_family, "bugfix");
    r = decide(&o, s, 2);
    if (r) {
        CHECK(r->target.n_tasks == 2 && strcmp(r->target.family, "bugfix") == 0);
        CHECK(r->n_regression == 2 && r->regression[0].split == RLVR_SPLIT_EVAL);
    }
    rlvr_gate_report_free(r);
    snprintf(o.target_family, sizeof o.target_family, "nope");
    CHECK(rlvr_gate_decide(&r, &o, s, 2) == RLVR_EINVAL && !r);
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
    rlvr_eval_result_free(rb);
    rlvr_eval_result_free(rc);
}

/* The pool has no regression task: "no tasks", passes; no target task is an error. */
static void test_no_regression_tasks(void) {
    rlvr_eval_result *b = eval_split(0, 0, 0), *c = eval_split(0, 0, 0);
    rlvr_gate_split s[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_REGRESSION, NULL, NULL}};
    rlvr_gate_options o = defaults();
    rlvr_gate_report *r = decide(&o, s, 2);
    if (r) CHECK(r->passed && r->regression_passed && r->regression_no_tasks && r->n_regression == 0);
    rlvr_gate_report_free(r);
    r = NULL;
    rlvr_gate_split none[1] = {{RLVR_SPLIT_EVAL, NULL, NULL}};
    o.n_checks = 0;
    CHECK(rlvr_gate_decide(&r, &o, none, 1) == RLVR_EINVAL && !r);
    /* one checkpoint only, and a split given twice: refused */
    rlvr_gate_split half[1] = {{RLVR_SPLIT_EVAL, b, NULL}}, twice[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_EVAL, b, c}};
    CHECK(rlvr_gate_decide(&r, &o, half, 1) == RLVR_EINVAL);
    CHECK(rlvr_gate_decide(&r, &o, twice, 2) == RLVR_EINVAL);
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
}

/* A family whose candidate samples were all infrastructure errors is not
 * measured: its test fails (n_tasks 0), the gate rejects. */
static void test_unmeasured(void) {
    rlvr_eval_result *b = eval_split(0, 0, 0), *c = eval_split(0, 0, 0);
    row rrows[] = {{"r0", "x", 4, 2, 0, 0, 0}, {"r1", "x", 4, 2, 0, 0, 0}};
    row crows[] = {{"r0", "x", 0, 0, 4, 0, 0}, {"r1", "x", 0, 0, 4, 0, 0}};
    rlvr_eval_result *rb = make(rrows, 2, RLVR_SPLIT_REGRESSION), *rc = make(crows, 2, RLVR_SPLIT_REGRESSION);
    rlvr_gate_split s[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_REGRESSION, rb, rc}};
    rlvr_gate_options o = defaults();
    rlvr_gate_report *r = decide(&o, s, 2);
    if (r) {
        CHECK(!r->passed && !r->regression_passed && r->n_regression == 1);
        CHECK(r->regression[0].n_tasks == 0 && isnan(r->regression[0].low) && !r->regression[0].passed);
    }
    rlvr_gate_report_free(r);
    /* different tasks in the two results: refused */
    row other[] = {{"r0", "x", 4, 2, 0, 0, 0}, {"r9", "x", 4, 2, 0, 0, 0}};
    rlvr_eval_result *ro = make(other, 2, RLVR_SPLIT_REGRESSION);
    s[1].cand = ro;
    r = NULL;
    CHECK(rlvr_gate_decide(&r, &o, s, 2) == RLVR_EINVAL && !r);
    rlvr_eval_result_free(ro);
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
    rlvr_eval_result_free(rb);
    rlvr_eval_result_free(rc);
}

/* Compliance pools the candidate's calls over every split: 7 + 2 of 8 + 2
 * parsed = 0.9; the baseline's calls do not count. */
static void test_compliance(void) {
    rlvr_eval_result *b = eval_split(0, 0, 0), *c = eval_split(0, 8, 7);
    rlvr_eval_result *rb = regression_split(0, 0, 5, 0), *rc = regression_split(0, 0, 2, 2);
    rlvr_gate_split s[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_REGRESSION, rb, rc}};
    rlvr_gate_options o = defaults();
    double min[3] = {1.0, 0.9, 0.91};
    bool expect[3] = {false, true, false};
    for (int i = 0; i < 3; i++) {
        o.compliance_min = min[i];
        rlvr_gate_report *r = decide(&o, s, 2);
        if (!r) continue;
        CHECK(r->calls == 10 && r->calls_parsed == 9);
        CHECK_NEAR(r->compliance, 0.9, 1e-15);
        CHECK_MSG(r->compliance_passed == expect[i] && r->passed == expect[i], "compliance_min %g", min[i]);
        CHECK(r->target.passed && r->regression_passed);
        if (!expect[i]) {
            char failed[64];
            rlvr_gate_failed_criteria(r, failed, sizeof failed);
            CHECK(strcmp(failed, "compliance") == 0);
        }
        rlvr_gate_report_free(r);
    }
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
    rlvr_eval_result_free(rb);
    rlvr_eval_result_free(rc);
}

static void test_parse_and_config(void) {
    rlvr_gate_options o = defaults();
    CHECK_OK(rlvr_gate_parse_checks(&o, " regression , eval:arith,,train "));
    CHECK(o.n_checks == 3 && o.checks[0].split == RLVR_SPLIT_REGRESSION && o.checks[0].family[0] == '\0');
    CHECK(o.checks[1].split == RLVR_SPLIT_EVAL && strcmp(o.checks[1].family, "arith") == 0);
    CHECK(o.checks[2].split == RLVR_SPLIT_TRAIN);
    CHECK_OK(rlvr_gate_parse_checks(&o, ""));
    CHECK(o.n_checks == 0);
    CHECK(rlvr_gate_parse_checks(&o, "regresion") == RLVR_EINVAL);
    CHECK(strstr(rlvr_error_last(), "regresion") != NULL);
    CHECK(rlvr_gate_parse_checks(&o, "eval:") == RLVR_EINVAL);

    const rlvr_config_key *const schemas[] = {rlvr_gate_config_keys, NULL};
    rlvr_config *cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg,
                               "[gate]\ntolerance = -0.01\nregression_tolerance = 0.1\ncompliance_min = 0.5\n"
                               "samples = 8\nseed = 42\nlimit = 3\nsplits = eval:arith, regression\n",
                               "gate.ini", schemas));
    o = defaults();
    if (cfg) CHECK_OK(rlvr_gate_options_from_config(&o, cfg));
    CHECK(o.tolerance == -0.01 && o.regression_tolerance == 0.1 && o.compliance_min == 0.5);
    CHECK(o.samples == 8 && o.seed == 42 && o.limit == 3 && o.n_checks == 2);
    CHECK(strcmp(o.checks[0].family, "arith") == 0 && o.checks[1].split == RLVR_SPLIT_REGRESSION);
    rlvr_config_free(cfg);
    cfg = NULL;
    CHECK_OK(rlvr_config_parse(&cfg, "[gate]\nsplits = holdout\n", "bad.ini", schemas));
    if (cfg) {
        CHECK(rlvr_gate_options_from_config(&o, cfg) == RLVR_ECONFIG);
        CHECK(strstr(rlvr_error_last(), "bad.ini:2") != NULL && strstr(rlvr_error_last(), "holdout") != NULL);
    }
    rlvr_config_free(cfg);
    cfg = NULL;
    CHECK(rlvr_config_parse(&cfg, "[gate]\ncompliance_min = 1.5\n", "range.ini", schemas) == RLVR_ECONFIG);
    rlvr_config_free(cfg);
}

/* The fields other tools read, with the names docs/EVAL.md gives. */
static void test_json(void) {
    rlvr_eval_result *b = eval_split(0, 0, 0), *c = eval_split(-1, 4, 3);
    rlvr_gate_split s[2] = {{RLVR_SPLIT_EVAL, b, c}, {RLVR_SPLIT_REGRESSION, NULL, NULL}};
    rlvr_gate_options o = defaults();
    o.compliance_min = 0.5;
    rlvr_gate_report *r = decide(&o, s, 2);
    char *text = NULL;
    if (r) {
        r->candidate = "/runs/a/checkpoints/step_00000020.h5";
        r->baseline = "/runs/a/sft/checkpoints/step_00000010.h5";
        r->candidate_step = 20;
        r->candidate_version = 19;
        r->time_unix = 1700000000.5;
        CHECK_OK(rlvr_gate_report_to_json(r, &o, s, 2, 2, &text));
    }
    json_error_t err;
    json_t *doc = text ? json_loads(text, 0, &err) : NULL;
    CHECK(doc != NULL);
    if (doc) {
        CHECK(strcmp(json_string_value(json_object_get(doc, "format")), "rlvr-gate/1") == 0);
        CHECK(strcmp(json_string_value(json_object_get(doc, "candidate")), r->candidate) == 0);
        CHECK(json_integer_value(json_object_get(doc, "candidate_step")) == 20);
        CHECK(json_integer_value(json_object_get(doc, "candidate_version")) == 19);
        CHECK(json_is_false(json_object_get(doc, "passed")));
        json_t *t = json_object_get(json_object_get(doc, "criteria"), "target");
        CHECK(json_is_false(json_object_get(t, "passed")));
        CHECK(strcmp(json_string_value(json_object_get(t, "split")), "eval") == 0);
        CHECK(json_integer_value(json_object_get(t, "n_tasks")) == 5);
        CHECK(json_real_value(json_object_get(t, "low")) == -0.25 && json_real_value(json_object_get(t, "high")) == -0.25);
        CHECK(json_real_value(json_object_get(t, "mean_diff")) == -0.25);
        CHECK(json_real_value(json_object_get(t, "tolerance")) == 0.02);
        CHECK_NEAR(json_real_value(json_object_get(t, "base_pass1")), 0.35, 1e-9);
        CHECK_NEAR(json_real_value(json_object_get(t, "cand_pass1")), 0.10, 1e-9);
        json_t *reg = json_object_get(json_object_get(doc, "criteria"), "regression");
        CHECK(json_is_true(json_object_get(reg, "passed")) && json_is_true(json_object_get(reg, "no_tasks")));
        CHECK(json_array_size(json_object_get(reg, "families")) == 0);
        CHECK(json_real_value(json_object_get(reg, "tolerance")) == 0.05);
        json_t *comp = json_object_get(json_object_get(doc, "criteria"), "compliance");
        CHECK(json_is_true(json_object_get(comp, "passed")));
        CHECK(json_real_value(json_object_get(comp, "value")) == 0.75);
        CHECK(json_real_value(json_object_get(comp, "threshold")) == 0.5);
        json_t *be = json_object_get(doc, "baseline_eval"), *ce = json_object_get(doc, "candidate_eval");
        CHECK(strcmp(json_string_value(json_object_get(json_object_get(be, "eval"), "format")), "rlvr-eval/1") == 0);
        CHECK(json_is_null(json_object_get(be, "regression")) && json_is_null(json_object_get(ce, "regression")));
        CHECK(json_array_size(json_object_get(json_object_get(ce, "eval"), "groups")) == 3);
        CHECK(json_integer_value(json_object_get(doc, "samples")) == 4);
        CHECK(json_integer_value(json_object_get(doc, "seed")) == 1);
        CHECK(json_real_value(json_object_get(doc, "time_unix")) == 1700000000.5);
        /* the embedded results read back as evaluations */
        char *inner = json_dumps(json_object_get(ce, "eval"), 0);
        rlvr_eval_result *back = NULL;
        CHECK_OK(rlvr_eval_result_from_json(&back, inner, strlen(inner)));
        if (back) CHECK(back->n_tasks == 5 && back->tasks[0].c == 0 && back->tasks[1].c == 1);
        rlvr_eval_result_free(back);
        free(inner);
    }
    json_decref(doc);
    free(text);
    rlvr_gate_report_free(r);
    rlvr_eval_result_free(b);
    rlvr_eval_result_free(c);
}

/* The HDF5 report reads back (format checked, flags checksummed and
 * consistent), and `promoted` holds one line. */
static void test_files(void) {
    char dir[] = "/tmp/test_gate_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], bogus[256];
    snprintf(path, sizeof path, "%s/report.h5", dir);
    rlvr_gate_file_criterion criteria[3] = {
        {"target", true, 0.0, -0.02}, {"regression", true, NAN, -0.05}, {"compliance", false, 0.5, 1.0}};
    rlvr_gate_file_test tests[1] = {{"target", "eval", "all", 5, 0, 0.3, 0.3, 0, 0, 0, 0.02, true}};
    rlvr_gate_file_estimate est[2] = {{"baseline", "eval", "all", "pass@k", 1, 5, 0.3, 0.1, 0.5},
                                      {"candidate", "eval", "all", "pass^k", 4, 5, 0.1, 0.0, 0.2}};
    rlvr_gate_file g = {.candidate = "c.h5", .baseline = "b.h5", .candidate_step = 3, .candidate_version = 3,
                        .passed = false, .samples = 4, .seed = 1, .time_unix = 1.5, .criteria = criteria,
                        .n_criteria = 3, .tests = tests, .n_tests = 1, .estimates = est, .n_estimates = 2,
                        .json = "{}"};
    CHECK_OK(rlvr_gate_report_write(path, &g));
    bool passed = true;
    size_t n = 0;
    CHECK_OK(rlvr_gate_report_read_passed(path, &passed, &n));
    CHECK(!passed && n == 3);
    /* a root flag that contradicts the criteria is refused */
    g.passed = true;
    CHECK_OK(rlvr_gate_report_write(path, &g));
    CHECK(rlvr_gate_report_read_passed(path, &passed, &n) == RLVR_EFORMAT);
    /* not a gate report */
    snprintf(bogus, sizeof bogus, "%s/not.h5", dir);
    FILE *f = fopen(bogus, "w");
    if (f) {
        fputs("plain text\n", f);
        fclose(f);
    }
    CHECK(rlvr_gate_report_read_passed(bogus, &passed, &n) < 0);
    CHECK_OK(rlvr_gate_write_promoted(dir, "/runs/a/checkpoints/step_00000020.h5"));
    char promoted[256], line[256] = "";
    snprintf(promoted, sizeof promoted, "%s/promoted", dir);
    f = fopen(promoted, "r");
    CHECK(f != NULL);
    if (f) {
        CHECK(fgets(line, sizeof line, f) != NULL);
        CHECK(fgetc(f) == EOF);
        fclose(f);
    }
    CHECK(strcmp(line, "/runs/a/checkpoints/step_00000020.h5\n") == 0);
    CHECK(rlvr_gate_write_promoted("/nonexistent/dir", "x") < 0);
    unlink(path);
    unlink(bogus);
    unlink(promoted);
    rmdir(dir);
}

int main(void) {
    test_defaults();
    test_identical();
    test_tolerance_edges();
    test_low_end_not_mean();
    test_regression();
    test_no_regression_tasks();
    test_unmeasured();
    test_compliance();
    test_parse_and_config();
    test_json();
    test_files();
    return test_summary("test_gate");
}
