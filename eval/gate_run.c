/* eval/gate_run.c — one run of the release gate (eval/gate_run.h). */
#include "eval/gate_run.h"

#include "core/error.h"
#include "core/fs.h"
#include "envs/config.h"
#include "io/checkpoint.h"
#include "io/gate_report.h"
#include "train/run.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ------------------------------------------------------------------------------- */

/* The absolute path when it resolves (what `promoted` names), else as given. */
static void absolute(char *out, size_t cap, const char *path) {
    char buf[PATH_MAX];
    snprintf(out, cap, "%s", realpath(path, buf) ? buf : path);
}

/* [gate] from the configuration, then the flags over it. */
static int gate_options(rlvr_gate_run *g) {
    rlvr_gate_options *o = &g->opt;
    rlvr_gate_options_default(o);
    if (g->cfg) RLVR_TRY(rlvr_gate_options_from_config(o, g->cfg));
    if (g->spec.regression && rlvr_gate_parse_checks(o, g->spec.regression) < 0)
        return rlvr_error_wrap(RLVR_ECONFIG, "--regression");
    if (!isnan(g->spec.tolerance)) o->tolerance = g->spec.tolerance;
    if (!isnan(g->spec.regression_tolerance)) o->regression_tolerance = g->spec.regression_tolerance;
    if (!isnan(g->spec.compliance)) o->compliance_min = g->spec.compliance;
    if (g->spec.samples > 0) o->samples = (int32_t)g->spec.samples;
    if (g->spec.seed >= 0) o->seed = (uint64_t)g->spec.seed;
    if (g->spec.limit > 0) o->limit = g->spec.limit;
    if (g->spec.target_split_set) o->target_split = g->spec.target_split;
    if (g->spec.family) snprintf(o->target_family, sizeof o->target_family, "%s", g->spec.family);
    return 0;
}

/* --pool, else the configuration's [tasks] pool, else the run's built-in
 * pool RUNDIR/pool (train/run.h). */
static int pool_path(rlvr_gate_run *g) {
    rlvr_tasks_config tasks = {.pool = ""};
    if (g->cfg) RLVR_TRY(rlvr_tasks_config_read(g->cfg, &tasks));
    const char *configured = tasks.pool;
    if (g->spec.pool) snprintf(g->pool_path, sizeof g->pool_path, "%s", g->spec.pool);
    else if (configured[0]) snprintf(g->pool_path, sizeof g->pool_path, "%s", configured);
    else if (g->spec.promote) RLVR_TRY(rlvr_run_path(g->pool_path, sizeof g->pool_path, g->spec.promote, "pool"));
    else
        return RLVR_FAIL(RLVR_ECONFIG, "no task pool: give --pool, a configuration with [tasks] pool, or "
                                       "--promote RUNDIR (its built-in pool RUNDIR/pool)");
    return 0;
}

static int load(rlvr_gate_run *g) {
    if (g->spec.config) RLVR_TRY(rlvr_config_load(&g->cfg, g->spec.config, g->spec.schemas));
    RLVR_TRY(rlvr_evaljob_load_checkpoint(g->spec.candidate, g->spec.schemas, &g->cand_tok, &g->cand_model, &g->cand_info,
                                          g->spec.config ? NULL : &g->cfg));
    RLVR_TRY(rlvr_evaljob_load_checkpoint(g->spec.baseline, g->spec.schemas, &g->base_tok, &g->base_model,
                                          &g->base_info, NULL));
    absolute(g->candidate, sizeof g->candidate, g->spec.candidate);
    absolute(g->baseline, sizeof g->baseline, g->spec.baseline);
    RLVR_TRY(gate_options(g));
    RLVR_TRY(pool_path(g));
    return rlvr_evaljob_load_pool(&g->pool, &g->manifest, g->pool_path, g->spec.manifest, false);
}

int rlvr_gate_run_load(rlvr_gate_run **out, const rlvr_gate_run_spec *spec) {
    rlvr_gate_run *g = calloc(1, sizeof *g);
    if (!g) return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    g->spec = *spec;
    int rc = load(g);
    if (rc < 0) {
        rlvr_gate_run_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

/* ---- evaluating ------------------------------------------------------------------------------ */

static void add_split(rlvr_gate_run *g, rlvr_split s) {
    for (size_t i = 0; i < g->n_splits; i++)
        if (g->splits[i].split == s) return;
    g->splits[g->n_splits++] = (rlvr_gate_split){.split = s};
}

/* Both checkpoints on the usable tasks of one split; a split the pool has no
 * task of is left without results ("no tasks"). */
static int evaluate_split(rlvr_gate_run *g, rlvr_gate_split *s, const rlvr_eval_options *o) {
    if (rlvr_task_pool_count(g->pool, s->split) == 0) {
        rlvr_evaljob_say(&g->spec.hooks, "gate: the pool has no %s task", rlvr_split_name(s->split));
        return 0;
    }
    rlvr_eval_task *tasks = NULL;
    size_t n = 0;
    RLVR_TRY(rlvr_eval_tasks_from_pool(&tasks, &n, g->pool, g->manifest, &s->split, (size_t)g->opt.limit));
    rlvr_eval_result **r = g->results[s - g->splits];
    const rlvr_model *models[2] = {g->base_model, g->cand_model};
    const rlvr_tokenizer *toks[2] = {g->base_tok, g->cand_tok};
    const char *names[2] = {g->spec.baseline, g->spec.candidate};
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        rlvr_evaljob_say(&g->spec.hooks, "gate: %s on %zu %s tasks x %d samples", names[i], n,
                         rlvr_split_name(s->split), o->samples);
        rc = rlvr_eval_run(&r[i], models[i], toks[i], tasks, n, o);
    }
    free(tasks);
    s->base = r[0];
    s->cand = r[1];
    return rc;
}

static bool pool_has(const rlvr_task_pool *pool, rlvr_split split, const char *family) {
    for (size_t i = 0; i < rlvr_task_pool_size(pool); i++) {
        const rlvr_task *t = rlvr_task_pool_get(pool, i);
        if (t->split == split && (!family[0] || strcmp(t->family, family) == 0)) return true;
    }
    return false;
}

/* Refuses, before anything is evaluated, a target or a named regression
 * family the pool has no task of (rlvr_gate_decide would refuse it after). */
static int check_pool_covers(const rlvr_gate_run *g) {
    const rlvr_gate_options *o = &g->opt;
    if (!pool_has(g->pool, o->target_split, o->target_family))
        return RLVR_FAIL(RLVR_ECONFIG, "%s has no %s task%s%s to evaluate the target on", g->pool_path,
                         rlvr_split_name(o->target_split), o->target_family[0] ? " of family " : "",
                         o->target_family);
    for (size_t i = 0; i < o->n_checks; i++)
        if (o->checks[i].family[0] && !pool_has(g->pool, o->checks[i].split, o->checks[i].family))
            return RLVR_FAIL(RLVR_ECONFIG, "%s has no %s task of family %s (regression check %s:%s)", g->pool_path,
                             rlvr_split_name(o->checks[i].split), o->checks[i].family,
                             rlvr_split_name(o->checks[i].split), o->checks[i].family);
    return 0;
}

int rlvr_gate_run_evaluate(rlvr_gate_run *g) {
    RLVR_TRY(check_pool_covers(g));
    add_split(g, g->opt.target_split);
    for (size_t i = 0; i < g->opt.n_checks; i++) add_split(g, g->opt.checks[i].split);
    rlvr_eval_options o;
    RLVR_TRY(rlvr_evaljob_options(&o, g->cfg, g->opt.samples, g->opt.seed, &g->spec.hooks));
    if (g->spec.kv_slots > 0) o.sampler.kv_slots = (int32_t)g->spec.kv_slots;
    for (size_t i = 0; i < g->n_splits; i++) RLVR_TRY(evaluate_split(g, &g->splits[i], &o));
    return 0;
}

int rlvr_gate_run_decide(rlvr_gate_run *g) {
    RLVR_TRY(rlvr_gate_decide(&g->report, &g->opt, g->splits, g->n_splits));
    rlvr_gate_report *r = g->report;
    r->candidate = g->candidate;
    r->baseline = g->baseline;
    r->candidate_step = g->cand_info.step;
    r->candidate_version = g->cand_info.policy_version;
    r->time_unix = rlvr_run_unix_time();
    return rlvr_gate_report_to_json(r, &g->opt, g->splits, g->n_splits, 2, &g->json);
}

/* ---- the HDF5 report ------------------------------------------------------------------------- */

static double smallest_low(const rlvr_gate_report *r) {
    double m = NAN;
    for (size_t i = 0; i < r->n_regression; i++)
        if (isnan(m) || !(r->regression[i].low >= m)) m = r->regression[i].low;
    return m;
}

static rlvr_gate_file_test file_test(const rlvr_gate_test *t, const char *criterion) {
    return (rlvr_gate_file_test){.criterion = criterion, .split = rlvr_split_name(t->split), .family = t->family,
                                 .n_tasks = t->n_tasks, .unpaired = t->unpaired, .base_pass1 = t->base_pass1,
                                 .cand_pass1 = t->cand_pass1, .mean_diff = t->mean_diff, .low = t->low,
                                 .high = t->high, .tolerance = t->tolerance, .passed = t->passed};
}

static size_t count_estimates(const rlvr_gate_run *g) {
    size_t n = 0;
    for (size_t s = 0; s < g->n_splits; s++)
        for (int c = 0; c < 2; c++) {
            const rlvr_eval_result *r = g->results[s][c];
            for (size_t f = 0; r && f < r->n_groups; f++) n += 2 * (size_t)r->groups[f].n_k;
        }
    return n;
}

/* pass@k and pass^k of every family of every split, both checkpoints. */
static void fill_estimates(const rlvr_gate_run *g, rlvr_gate_file_estimate *e) {
    static const char *const who[2] = {"baseline", "candidate"};
    size_t n = 0;
    for (size_t s = 0; s < g->n_splits; s++)
        for (int c = 0; c < 2; c++) {
            const rlvr_eval_result *r = g->results[s][c];
            for (size_t f = 0; r && f < r->n_groups; f++) {
                const rlvr_eval_group *grp = &r->groups[f];
                for (int m = 0; m < 2; m++)
                    for (int32_t k = 0; k < grp->n_k; k++) {
                        const rlvr_eval_estimate *v = m == 0 ? &grp->pass_at[k] : &grp->pass_hat[k];
                        e[n++] = (rlvr_gate_file_estimate){.checkpoint = who[c],
                                                           .split = rlvr_split_name(g->splits[s].split),
                                                           .family = grp->name, .metric = m == 0 ? "pass@k" : "pass^k",
                                                           .k = grp->k[k], .tasks = grp->k_tasks[k],
                                                           .value = v->value, .low = v->low, .high = v->high};
                    }
            }
        }
}

static int write_h5(const rlvr_gate_run *g, const char *path) {
    const rlvr_gate_report *r = g->report;
    rlvr_gate_file_criterion criteria[3] = {
        {"target", r->target.passed, r->target.low, -r->target.tolerance},
        {"regression", r->regression_passed, smallest_low(r), -r->regression_tolerance},
        {"compliance", r->compliance_passed, r->compliance, r->compliance_min},
    };
    size_t n_tests = 1 + r->n_regression, n_est = count_estimates(g);
    rlvr_gate_file_test *tests = calloc(n_tests, sizeof *tests);
    rlvr_gate_file_estimate *est = calloc(n_est ? n_est : 1, sizeof *est);
    if (!tests || !est) {
        free(tests);
        free(est);
        return RLVR_FAIL(RLVR_ENOMEM, "out of memory");
    }
    tests[0] = file_test(&r->target, "target");
    for (size_t i = 0; i < r->n_regression; i++) tests[1 + i] = file_test(&r->regression[i], "regression");
    fill_estimates(g, est);
    rlvr_gate_file f = {.candidate = r->candidate, .baseline = r->baseline, .candidate_step = r->candidate_step,
                        .candidate_version = r->candidate_version, .passed = r->passed, .samples = g->opt.samples,
                        .seed = g->opt.seed, .time_unix = r->time_unix, .criteria = criteria, .n_criteria = 3,
                        .tests = tests, .n_tests = n_tests, .estimates = est, .n_estimates = n_est,
                        .json = g->json};
    int rc = rlvr_gate_report_write(path, &f);
    free(tests);
    free(est);
    return rc;
}

int rlvr_gate_run_write_reports(const rlvr_gate_run *g, const char *prefix) {
    char path[PATH_MAX + 8];
    if ((size_t)snprintf(path, sizeof path, "%s.json", prefix) >= sizeof path)
        return RLVR_FAIL(RLVR_ELIMIT, "report path too long: %s", prefix);
    RLVR_TRY(rlvr_evaljob_write_text(path, g->json));
    snprintf(path, sizeof path, "%s.h5", prefix);
    RLVR_TRY(write_h5(g, path));
    rlvr_evaljob_say(&g->spec.hooks, "gate: report %s.json, %s.h5", prefix, prefix);
    return 0;
}

/* RUNDIR/gate/<candidate file name without .h5>. */
static int run_report_prefix(char *out, size_t cap, const char *run_dir, const char *candidate) {
    char dir[PATH_MAX];
    RLVR_TRY(rlvr_run_path(dir, sizeof dir, run_dir, "gate"));
    RLVR_TRY(rlvr_mkdir_p(dir, 0755));
    const char *base = strrchr(candidate, '/');
    base = base ? base + 1 : candidate;
    size_t len = strlen(base);
    if (len > 3 && strcmp(base + len - 3, ".h5") == 0) len -= 3;
    if ((size_t)snprintf(out, cap, "%s/%.*s", dir, (int)len, base) >= cap)
        return RLVR_FAIL(RLVR_ELIMIT, "path too long: %s/%s", dir, base);
    return 0;
}

/* Marks the candidate for retention (step_N.h5.keep, io/checkpoint.h) when
 * it is a checkpoint of a run directory under its own name, so that the
 * checkpoint `promoted` names is never deleted by a later save. */
static int keep_candidate(const rlvr_gate_run *g) {
    char dir[PATH_MAX], expected[PATH_MAX + 64], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", g->candidate);
    char *slash = strrchr(dir, '/');
    if (!slash || g->cand_info.step < 0) return 0;
    *slash = '\0';
    if (rlvr_checkpoint_path(expected, sizeof expected, dir[0] ? dir : "/", g->cand_info.step) < 0) return 0;
    if (!realpath(expected, real) || strcmp(real, g->candidate) != 0) return 0; /* not named step_N.h5 */
    return rlvr_checkpoint_mark(dir[0] ? dir : "/", g->cand_info.step);
}

int rlvr_gate_run_publish(rlvr_gate_run *g) {
    if (g->spec.report) RLVR_TRY(rlvr_gate_run_write_reports(g, g->spec.report));
    if (!g->spec.promote) return 0;
    char prefix[PATH_MAX];
    RLVR_TRY(run_report_prefix(prefix, sizeof prefix, g->spec.promote, g->spec.candidate));
    RLVR_TRY(rlvr_gate_run_write_reports(g, prefix));
    if (!g->report->passed) return 0; /* `promoted` keeps naming the last promoted checkpoint */
    RLVR_TRY(keep_candidate(g));
    RLVR_TRY(rlvr_gate_write_promoted(g->spec.promote, g->candidate));
    rlvr_evaljob_say(&g->spec.hooks, "gate: %s/promoted now names %s", g->spec.promote, g->candidate);
    return 0;
}


void rlvr_gate_run_free(rlvr_gate_run *g) {
    if (!g) return;
    for (size_t s = 0; s < RLVR_SPLIT_COUNT; s++)
        for (int i = 0; i < 2; i++) rlvr_eval_result_free(g->results[s][i]);
    rlvr_gate_report_free(g->report);
    free(g->json);
    rlvr_model_free(g->cand_model);
    rlvr_model_free(g->base_model);
    rlvr_config_free(g->cfg);
    rlvr_tokenizer_free(g->cand_tok);
    rlvr_tokenizer_free(g->base_tok);
    rlvr_pool_manifest_free(g->manifest);
    rlvr_task_pool_free(g->pool);
    free(g);
}

